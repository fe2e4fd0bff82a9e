// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "hugepages.h"

#define HUGE_PAGE (2u << 20)

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
