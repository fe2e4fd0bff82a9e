/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Large working arrays (a checker's or a namespace's, tens of MiB for a
 * full log) are first touched in 4 KiB page faults, and under a hypervisor
 * each fault is an exit: for a full 256 MiB log they were a fifth of a
 * check.  Transparent huge pages cut that 512-fold where the system leaves
 * them to madvise (the Debian default).  What is left, the kernel clearing
 * each fresh page, can be done on another CPU ahead of the code that fills
 * the arrays (famfs_prefault_start).
 */
#ifndef FAMFS_HUGEPAGES_H
#define FAMFS_HUGEPAGES_H

#include <stddef.h>

/* Asks for huge pages on the 2 MiB-aligned part of [p, p+len) not yet touched; only a hint. */
void famfs_advise_hugepages(void *p, size_t len);

/* realloc(), then the hint for the part past the first @old_len bytes (already touched). */
void *famfs_realloc_huge(void *p, size_t old_len, size_t new_len);

struct famfs_range {
	void *p;
	size_t len;
};

struct famfs_prefault;

/*
 * Faults in the @n ranges for writing on a thread of its own, all of them
 * front to back at the same pace (arrays filled side by side in order are
 * ready where their filler goes next).  Contents are not changed, so the
 * caller may fill them meanwhile, but it must not free or move them before
 * famfs_prefault_finish.  A failure only leaves the faults to the caller.
 * NULL when no thread started (nothing to undo).
 */
struct famfs_prefault *famfs_prefault_start(const struct famfs_range *ranges, size_t n);

/* Stops and joins the thread; NULL does nothing. */
void famfs_prefault_finish(struct famfs_prefault *p);

#endif
