// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The view backend: no kernel module.  The namespace lives in the daemon
 * (libfamfs keeps it current), and file data is reached through the device
 * itself: callers get an fd of the device or image and the file's extents,
 * and map those.  There are no page-fault counters without the module.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "manager.h"

static int view_attach(struct fsys *f, struct famfs_err *err)
{
	return 0;
}

static int view_instantiate(struct fsys *f, uint32_t node, const struct famfs_log_entry *e,
			    struct famfs_err *err)
{
	return 0;   /* the namespace node is the file */
}

static int view_open_data(struct fsys *f, uint32_t node, bool writable, int *ret_fd,
			  struct famfs_err *err)
{
	char self[64];
	int fd;

	if (writable && !f->fs->master)
		return famfs_err_set(err, -EROFS, "clients do not write: %s is mastered by another host",
				     f->device);
	if (writable && !f->fs->dev->writable)
		return famfs_err_set(err, -EROFS, "%s is attached read-only", f->device);
	/*
	 * A fresh open file description, so the caller's mode is its own, of
	 * the very device attached: reopening by name could reach whatever
	 * the name points to now.
	 */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", f->fs->dev->fd);
	fd = open(self, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return famfs_err_set(err, -errno, "cannot reopen %s: %s", f->device, strerror(errno));
	*ret_fd = fd;
	return 0;
}

static void view_detach(struct fsys *f)
{
}

const struct backend_ops backend_view = {
	.name = "view",
	.attach = view_attach,
	.instantiate = view_instantiate,
	.open_data = view_open_data,
	.detach = view_detach,
};
