// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The SIGBUS guard for mappings of shared memory (see medium-guard.h).  The
 * table is changed by the main thread only, and read by the signal handler
 * on whatever thread faulted, so each slot is published with atomics: a
 * range counts once its base is set, and is cleared before it is unmapped.
 * The replacement is MAP_NORESERVE: a device mapping can be far larger
 * than memory.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "medium-guard.h"

#define GUARD_SLOTS 64

struct guarded {
	_Atomic uintptr_t base;
	_Atomic size_t len;
	atomic_bool lost;
};

static struct guarded table[GUARD_SLOTS];

static void on_sigbus(int sig, siginfo_t *si, void *ctx)
{
	uintptr_t a = (uintptr_t)si->si_addr;

	(void)ctx;
	for (int i = 0; i < GUARD_SLOTS; i++) {
		uintptr_t b = atomic_load_explicit(&table[i].base, memory_order_acquire);
		size_t n = atomic_load_explicit(&table[i].len, memory_order_relaxed);

		if (!b || a < b || a - b >= n)
			continue;
		/* mmap(2) is a plain system call here: safe in a handler. */
		if (mmap((void *)b, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) ==
		    MAP_FAILED)
			break;
		atomic_store(&table[i].lost, true);
		return;
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

int medium_guard_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGBUS, &sa, NULL) < 0 ? -errno : 0;
}

bool medium_guard_add(void *base, size_t len)
{
	for (int i = 0; i < GUARD_SLOTS; i++) {
		if (atomic_load(&table[i].base))
			continue;
		atomic_store(&table[i].len, len);
		atomic_store(&table[i].lost, false);
		atomic_store_explicit(&table[i].base, (uintptr_t)base, memory_order_release);
		return true;
	}
	return false;
}

void medium_guard_remove(void *base)
{
	for (int i = 0; i < GUARD_SLOTS; i++)
		if (atomic_load(&table[i].base) == (uintptr_t)base)
			atomic_store(&table[i].base, 0);
}

bool medium_guard_lost(const void *base)
{
	for (int i = 0; i < GUARD_SLOTS; i++)
		if (atomic_load(&table[i].base) == (uintptr_t)base)
			return atomic_load(&table[i].lost);
	return false;
}
