// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdint.h>

#include "cache.h"

#define CACHE_LINE 64

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

static int have_clflushopt = -1;

static int cpu_has_clflushopt(void)
{
	unsigned int eax, ebx, ecx, edx;

	if (have_clflushopt < 0) {
		have_clflushopt = 0;
		if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
			have_clflushopt = !!(ebx & (1u << 23));
	}
	return have_clflushopt;
}

__attribute__((target("clflushopt")))
static void flush_lines_opt(uintptr_t start, uintptr_t end)
{
	for (uintptr_t a = start; a < end; a += CACHE_LINE)
		_mm_clflushopt((void *)a);
}

static void flush_lines(const void *p, size_t len)
{
	uintptr_t start = (uintptr_t)p & ~(uintptr_t)(CACHE_LINE - 1);
	uintptr_t end = (uintptr_t)p + len;

	if (len == 0)
		return;
	if (cpu_has_clflushopt()) {
		flush_lines_opt(start, end);
	} else {
		for (uintptr_t a = start; a < end; a += CACHE_LINE)
			_mm_clflush((void *)a);
	}
}

void famfs_cache_flush(const void *p, size_t len)
{
	flush_lines(p, len);
	_mm_sfence();
}

void famfs_cache_invalidate(const void *p, size_t len)
{
	/* On x86 a flush also invalidates; the fence orders later loads. */
	flush_lines(p, len);
	_mm_mfence();
}

#else

void famfs_cache_flush(const void *p, size_t len)
{
	(void)p;
	(void)len;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void famfs_cache_invalidate(const void *p, size_t len)
{
	(void)p;
	(void)len;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

#endif
