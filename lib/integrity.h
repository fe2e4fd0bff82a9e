/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The integrity checks (seqnum and CRC) of a whole log, computed on
 * background threads while the caller walks the entries in order: the
 * CRCs, and the page faults of a first read of the log, overlap the rest
 * of a check instead of coming before it.
 */
#ifndef FAMFS_INTEGRITY_H
#define FAMFS_INTEGRITY_H

#include <stdint.h>

#include "omf.h"

struct famfs_integrity_pass;

/*
 * Starts computing codes[k] = famfs_log_entry_check_integrity(&entries[k], k)
 * for k < @n.  Small logs are done at once, here.  -ENOMEM only when the
 * pass cannot be allocated; threads that cannot start leave their work to
 * famfs_integrity_wait().
 */
int famfs_integrity_start(const struct famfs_log_entry *entries, uint64_t n, uint8_t *codes,
			  struct famfs_integrity_pass **ret);

/* Returns once codes[0 .. @upto) are known (all of them for @upto >= @n). */
void famfs_integrity_wait(struct famfs_integrity_pass *p, uint64_t upto);

/* Waits for every code, stops the threads and frees the pass; NULL does nothing. */
void famfs_integrity_finish(struct famfs_integrity_pass *p);

#endif
