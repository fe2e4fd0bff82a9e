// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The only repair fsck.famfs makes: cutting the written log back to its
 * last intact entry, by setting next_index and next_seqnum.  Both lie
 * outside the header CRC, no intact entry is removed, and every change is
 * reported.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>

#include "fsck.h"
#include "log.h"
#include "omf.h"
#include "repair.h"

int fsck_repair(const struct fsck_options *o, const struct famfs_check_report *r,
		struct repair_result *res)
{
	_cleanup_(famfs_device_closep) struct famfs_device *dev = NULL;
	struct famfs_err err = { 0 };
	struct famfs_repair_action actions[FAMFS_REPAIR_MAX_ACTIONS];
	struct famfs_log_header *h;
	size_t n = 0;
	int ret;

	res->attempted = true;
	ret = famfs_device_open(o->device, FAMFS_DEVICE_WRITE | FAMFS_DEVICE_EXCL, &dev, &err);
	if (ret < 0)
		return famfs_err_set(&res->error, ret, "cannot repair: %s", err.msg);
	if (famfs_device_is_mounted(dev))
		return famfs_err_set(&res->error, -EBUSY, "cannot repair %s: it is mounted", o->device);
	/* The same lock the master's appends take. */
	if (flock(dev->fd, LOCK_EX | LOCK_NB) < 0)
		return famfs_err_set(&res->error, -EBUSY,
				     "cannot repair %s: its log is locked by a writer (famfs-manager?)",
				     o->device);
	h = (struct famfs_log_header *)(dev->base + FAMFS_LOG_OFFSET);
	ret = famfs_repair_log_header(h, &r->repair, actions, &n, &err);
	if (ret < 0)
		return famfs_err_set(&res->error, ret, "cannot repair %s: %s", o->device, err.msg);
	for (size_t k = 0; k < n; k++)
		res->actions[res->nactions++] = (struct repair_action){ actions[k].field, actions[k].old_value,
									 actions[k].new_value };
	if (dev->kind != FAMFS_DEVICE_DAX)
		(void)msync(dev->base + FAMFS_LOG_OFFSET, 4096, MS_SYNC);
	res->performed = true;
	return 0;
}
