/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A famfs file mapped through the descriptor OpenFile hands over, at the
 * extents that come with it: the whole device or the file alone, as the
 * daemon decides for the caller.  The data path (data.c), the fill pattern
 * (fill.c) and flush share it.  Each function reports its own failures
 * and returns a negative errno.
 */
#ifndef FAMFSCTL_MAPPING_H
#define FAMFSCTL_MAPPING_H

#include <stdbool.h>
#include <stdint.h>

#include "client.h"

struct mapped_file {
	struct file_layout l;
	uint8_t *map[LAYOUT_MAX_EXTENTS];
	bool device_dax;        /* the descriptor is a /dev/dax: no page cache, no msync */
	bool copy;              /* a sealed copy of the file, not the medium (view backend) */
};

void mapped_file_unmap(struct mapped_file *m);

/* OpenFile (@descriptor: NULL for the daemon's choice, or "device"), then map every extent. */
int mapped_file_open(const char *path, bool writable, const char *descriptor, struct mapped_file *ret);

/*
 * The mapping at file offset @off (inside the file) and how many bytes run
 * on from there, cut at the end of the file; a map that ends too early is
 * reported as "cannot @verb @path".
 */
int mapped_file_locate(const struct mapped_file *m, uint64_t off, const char *verb, const char *path,
		       uint8_t **ret_p, uint64_t *ret_run);

/*
 * Writes back every extent: the CPU's cache lines (famfs_cache_flush), and
 * for a pmem or image mapping the page cache too (msync); device-dax has
 * none and refuses msync.
 */
int mapped_file_flush(const struct mapped_file *m, const char *path);

#endif
