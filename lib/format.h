/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Making a famfs file system, in the steps mkfs.famfs and the daemon's
 * Format job share: the rules that refuse a device, the empty log, and the
 * superblock written last (a crash before it leaves no valid superblock).
 */
#ifndef FAMFS_FORMAT_H
#define FAMFS_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "error.h"

/*
 * Whether @dev (opened FAMFS_DEVICE_WRITE | FAMFS_DEVICE_EXCL) may be
 * formatted with a @log_len log: -EINVAL for a bad log length, -EBUSY when
 * it is mounted, -EEXIST when it holds a famfs file system and not @force,
 * -ENOSPC when it is too small.  The message says which.
 */
int famfs_format_refuse(const struct famfs_device *dev, uint64_t log_len, bool force, struct famfs_err *err);

/* Makes [@p, @p + @len) of @dev's mapping reach the medium: caches for DAX, msync otherwise. */
void famfs_persist(const struct famfs_device *dev, void *p, size_t len);

/* Writes the empty log header over a log region already zeroed; persisted. */
void famfs_format_log(const struct famfs_device *dev, uint64_t log_len);

/* Writes the superblock naming @host_uuid the master; persisted.  The last step. */
void famfs_format_superblock(const struct famfs_device *dev, uint64_t log_len, const uint8_t host_uuid[16],
			     const char *dev_name);

#endif
