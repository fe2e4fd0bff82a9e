/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Large working arrays (a checker's or a namespace's, tens of MiB for a
 * full log) are first touched in 4 KiB page faults, and under a hypervisor
 * each fault is an exit: for a full 256 MiB log they were a fifth of a
 * check.  Transparent huge pages cut that 512-fold where the system leaves
 * them to madvise (the Debian default).
 */
#ifndef FAMFS_HUGEPAGES_H
#define FAMFS_HUGEPAGES_H

#include <stddef.h>

/* Asks for huge pages on the 2 MiB-aligned part of [p, p+len) not yet touched; only a hint. */
void famfs_advise_hugepages(void *p, size_t len);

/* realloc(), then the hint for the part past the first @old_len bytes (already touched). */
void *famfs_realloc_huge(void *p, size_t old_len, size_t new_len);

#endif
