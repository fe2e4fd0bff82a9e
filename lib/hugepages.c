// SPDX-License-Identifier: LGPL-2.1-or-later
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "hugepages.h"

#define HUGE_PAGE (2u << 20)
#define PREFAULT_RANGES_MAX 4
/* Steps in which each range is done: a whole range ahead of the filler helps nobody. */
#define PREFAULT_STEPS 64

void famfs_advise_hugepages(void *p, size_t len)
{
	uintptr_t start = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	uintptr_t end = ((uintptr_t)p + len) & ~(uintptr_t)(HUGE_PAGE - 1);

	if (p && end > start)
		(void)madvise((void *)start, end - start, MADV_HUGEPAGE);
}

void *famfs_realloc_huge(void *p, size_t old_len, size_t new_len)
{
	uint8_t *q = realloc(p, new_len);

	if (q && new_len > old_len)
		famfs_advise_hugepages(q + old_len, new_len - old_len);
	return q;
}

struct famfs_prefault {
	struct famfs_range ranges[PREFAULT_RANGES_MAX];
	size_t n;
	atomic_bool stop;
	pthread_t thread;
};

/* madvise wants page-aligned starts: [p, p + len) widened to whole pages. */
static void populate(uint8_t *p, size_t len)
{
	uintptr_t start = (uintptr_t)p & ~(uintptr_t)4095;

	if (len)
		(void)madvise((void *)start, (uintptr_t)p + len - start, MADV_POPULATE_WRITE);
}

static void *prefault_thread(void *arg)
{
	struct famfs_prefault *pf = arg;

	for (size_t step = 0; step < PREFAULT_STEPS && !atomic_load(&pf->stop); step++) {
		for (size_t k = 0; k < pf->n; k++) {
			size_t from = pf->ranges[k].len * step / PREFAULT_STEPS;
			size_t to = pf->ranges[k].len * (step + 1) / PREFAULT_STEPS;

			populate((uint8_t *)pf->ranges[k].p + from, to - from);
		}
	}
	return NULL;
}

struct famfs_prefault *famfs_prefault_start(const struct famfs_range *ranges, size_t n)
{
	struct famfs_prefault *pf;

	if (n > PREFAULT_RANGES_MAX)
		n = PREFAULT_RANGES_MAX;
	pf = calloc(1, sizeof(*pf));
	if (!pf)
		return NULL;
	for (size_t k = 0; k < n; k++)
		if (ranges[k].p && ranges[k].len)
			pf->ranges[pf->n++] = ranges[k];
	atomic_init(&pf->stop, false);
	if (pf->n == 0 || pthread_create(&pf->thread, NULL, prefault_thread, pf) != 0) {
		free(pf);
		return NULL;
	}
	return pf;
}

void famfs_prefault_finish(struct famfs_prefault *pf)
{
	if (!pf)
		return;
	atomic_store(&pf->stop, true);
	pthread_join(pf->thread, NULL);
	free(pf);
}
