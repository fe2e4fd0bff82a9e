// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdint.h>

#include "cache.h"

#define CACHE_LINE 64

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

/* CPUID leaf 7, subleaf 0, EBX: bit 23 CLFLUSHOPT, bit 24 CLWB. */
#define CPUID7_EBX_CLFLUSHOPT (1u << 23)
#define CPUID7_EBX_CLWB (1u << 24)

static int cpuid7_ebx = -1;

static unsigned int cpu_features(void)
{
	unsigned int eax, ebx, ecx, edx;

	if (cpuid7_ebx < 0) {
		cpuid7_ebx = 0;
		if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
			cpuid7_ebx = (int)(ebx & (CPUID7_EBX_CLFLUSHOPT | CPUID7_EBX_CLWB));
	}
	return (unsigned int)cpuid7_ebx;
}

__attribute__((target("clwb")))
static void writeback_lines_clwb(uintptr_t start, uintptr_t end)
{
	for (uintptr_t a = start; a < end; a += CACHE_LINE)
		_mm_clwb((void *)a);
}

__attribute__((target("clflushopt")))
static void flush_lines_opt(uintptr_t start, uintptr_t end)
{
	for (uintptr_t a = start; a < end; a += CACHE_LINE)
		_mm_clflushopt((void *)a);
}

static void flush_lines_legacy(uintptr_t start, uintptr_t end)
{
	for (uintptr_t a = start; a < end; a += CACHE_LINE)
		_mm_clflush((void *)a);
}

/*
 * Writes the lines back; with @invalidate they also leave the cache.  CLWB
 * may keep a line, so it serves the write-back alone; CLFLUSH (every
 * x86-64 has it) is ordered with every store and needs no fence of its
 * own, CLFLUSHOPT and CLWB are ordered only by the fence that follows.
 */
static void flush_lines(const void *p, size_t len, bool invalidate)
{
	uintptr_t start = (uintptr_t)p & ~(uintptr_t)(CACHE_LINE - 1);
	uintptr_t end = (uintptr_t)p + len;
	unsigned int f = cpu_features();

	if (len == 0)
		return;
	if (!invalidate && (f & CPUID7_EBX_CLWB))
		writeback_lines_clwb(start, end);
	else if (f & CPUID7_EBX_CLFLUSHOPT)
		flush_lines_opt(start, end);
	else
		flush_lines_legacy(start, end);
}

void famfs_cache_flush(const void *p, size_t len)
{
	flush_lines(p, len, false);
	_mm_sfence();
}

void famfs_cache_invalidate(const void *p, size_t len)
{
	/* The fence orders the flushes before the loads that follow. */
	flush_lines(p, len, true);
	_mm_mfence();
}

const char *famfs_cache_flush_instruction(void)
{
	unsigned int f = cpu_features();

	if (f & CPUID7_EBX_CLWB)
		return "clwb";
	if (f & CPUID7_EBX_CLFLUSHOPT)
		return "clflushopt";
	return "clflush";
}

const char *famfs_cache_flush_fence(void)
{
	return "sfence";
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

const char *famfs_cache_flush_instruction(void)
{
	return "none";
}

const char *famfs_cache_flush_fence(void)
{
	return "full fence";
}

#endif
