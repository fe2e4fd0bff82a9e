/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one safe repair: cutting the written log back to its last intact
 * entry by setting next_index and next_seqnum (both outside the header
 * CRC; no intact entry is removed).  fsck.famfs and the daemon's Repair
 * job share it; the caller holds the log lock.
 */
#ifndef FAMFS_REPAIR_H
#define FAMFS_REPAIR_H

#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "error.h"
#include "omf.h"

/* One change a repair made. */
struct famfs_repair_action {
	const char *field;
	uint64_t old_value;
	uint64_t new_value;
};

#define FAMFS_REPAIR_MAX_ACTIONS 2

/*
 * Applies @plan to the log header @h (in the shared mapping), unless the
 * log changed since it was checked (-EAGAIN); the caller flushes it.
 * @ret_actions gets each change, *@ret_n how many.
 */
int famfs_repair_log_header(struct famfs_log_header *h, const struct famfs_check_repair *plan,
			    struct famfs_repair_action ret_actions[FAMFS_REPAIR_MAX_ACTIONS], size_t *ret_n,
			    struct famfs_err *err);

#endif
