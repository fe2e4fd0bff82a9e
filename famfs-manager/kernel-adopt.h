/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The adopt record (kernel-adopt.c): what an attach left in the mount, so
 * that a restarted daemon adopting the mount need not open every file
 * again.  Every function accepts a NULL record (there is none) and then
 * does nothing, trusts nothing.
 */
#ifndef FAMFS_MANAGER_KERNEL_ADOPT_H
#define FAMFS_MANAGER_KERNEL_ADOPT_H

#include <stdbool.h>
#include <stdint.h>

#include "fs.h"

struct kernel_adopt;

/*
 * The record of file system @uuid, whose mount's root is @root (neither is
 * the record's to close); NULL when there can be none.
 */
struct kernel_adopt *kernel_adopt_open(int root, const struct famfs_fs *fs, const char *uuid);
/* Closes it; @drop removes the file too (the mount it describes goes away). */
void kernel_adopt_close(struct kernel_adopt *a, bool drop);

/*
 * Whether the record was written for this very mount (same file system,
 * mount id and device): then an earlier run of the daemon mounted it, and
 * this one unmounts it at detach and shutdown as if it had.  A famfs mount
 * someone else made has no such record and is left alone.
 */
bool kernel_adopt_names_mount(struct kernel_adopt *a);

/*
 * On an adopted mount: how many nodes (from 0) of the @nnodes in the
 * namespace the record lets us trust, 0 when it is missing, from another
 * mount, or any of its directories changed.
 */
uint32_t kernel_adopt_trusted(struct kernel_adopt *a, uint32_t nnodes);

/* Records the mount as it is now: nodes [0, @nodes_done) match the log. */
void kernel_adopt_record(struct kernel_adopt *a, uint32_t nodes_done);

/*
 * Around making @node in the mount after attach: whether the record is
 * still to be trusted once it is made (the record ends just before it and
 * its directory is as we left it), then the record extended by it, or,
 * when it was not (@made false), no longer trusted.
 */
bool kernel_adopt_is_next(struct kernel_adopt *a, uint32_t node);
void kernel_adopt_advance(struct kernel_adopt *a, uint32_t node, bool made);

#endif
