// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Hotplug: udev events → probe → attach or detach through the manager
 * core.  The device's first bytes are read here (like famfs_id) to tell
 * famfs from everything else; udev's ID_FS_TYPE is only a hint, since a
 * coldplugged device may never have been probed by our rules.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "cleanup.h"
#include "device.h"
#include "hotplug.h"
#include "logging.h"
#include "manager.h"
#include "superblock.h"
#include "udev-monitor.h"

enum probe_result {
	PROBE_NOT_FAMFS,
	PROBE_FAMFS,            /* the superblock's CRC vouches for the uuid */
	PROBE_FAMFS_DAMAGED,    /* the magic is there, the rest is not sound */
	PROBE_UNREADABLE,
};

/* The first bytes of @devnode: a regular file or a block device reads them, device DAX maps them. */
static ssize_t read_head(const char *devnode, uint8_t *buf, size_t len, bool *ret_image)
{
	_cleanup_close_ int fd = -1;
	struct famfs_device *dev = NULL;
	struct famfs_err err = {0};
	struct stat st;
	ssize_t n;

	*ret_image = false;
	fd = open(devnode, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	*ret_image = S_ISREG(st.st_mode);
	n = pread(fd, buf, len, 0);
	if (n >= 0 || !S_ISCHR(st.st_mode))
		return n < 0 ? -errno : n;
	/* device DAX has no read(2): map the first 2 MiB instead */
	close(TAKE_FD(fd));
	if (famfs_device_open(devnode, 0, &dev, &err) < 0)
		return -EIO;
	n = dev->size < len ? (ssize_t)dev->size : (ssize_t)len;
	memcpy(buf, dev->base, (size_t)n);
	famfs_device_close(dev);
	return n;
}

static enum probe_result probe(const char *devnode, char uuid[37], bool *ret_image)
{
	union {
		struct famfs_superblock sb;
		uint8_t raw[4096];
	} buf;
	ssize_t n;

	uuid[0] = '\0';
	memset(&buf, 0, sizeof(buf));
	n = read_head(devnode, buf.raw, sizeof(buf.raw), ret_image);
	if (n < 0) {
		errno = (int)-n;
		return PROBE_UNREADABLE;
	}
	if (n < (ssize_t)sizeof(buf.sb))
		return PROBE_NOT_FAMFS;
	if (buf.sb.magic != FAMFS_SUPER_MAGIC)
		return PROBE_NOT_FAMFS;
	if (famfs_superblock_validate(&buf.sb, UINT64_MAX, NULL) != FAMFS_OK)
		return PROBE_FAMFS_DAMAGED;
	uuid_unparse_lower(buf.sb.uuid, uuid);
	return PROBE_FAMFS;
}

void hotplug_device_added(struct manager *m, const char *devnode, bool coldplug)
{
	struct fsys *old = manager_find_by_device(m, devnode);
	enum probe_result pr;
	char uuid[37];
	bool image;

	pr = probe(devnode, uuid, &image);
	if (pr == PROBE_UNREADABLE) {
		log_about_errno(LOG_WARNING, errno, devnode, "cannot read it (%m); ignoring it");
		return;
	}
	if (pr == PROBE_NOT_FAMFS) {
		if (old && old->bt.fs)
			manager_detach(m, old, "device no longer holds famfs");
		return;
	}
	if (old && old->bt.fs) {
		/* Still the same file system: the follower keeps it current. */
		if (pr == PROBE_FAMFS && !strcmp(old->bt.uuid, uuid))
			return;
		fsys_detach(old, pr == PROBE_FAMFS ? "device now holds another file system" :
			    "superblock damaged while attached");
	}
	(void)manager_attach(m, devnode, coldplug ? "found" : "appeared:", NULL);
}

void hotplug_device_removed(struct manager *m, const char *devnode)
{
	struct fsys *f = manager_find_by_device(m, devnode);

	if (!f || (!f->bt.fs && f->device_gone))
		return;
	log_about(LOG_INFO, devnode, "device removed; detaching %s", fsys_name(f));
	manager_detach(m, f, "device removed");
}

void hotplug_drop_page_cache(const char *devnode)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (stat(devnode, &st) < 0 || !S_ISBLK(st.st_mode))
		return;
	fd = open(devnode, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return;
	if (ioctl(fd, BLKFLSBUF, 0) < 0)
		log_about_errno(LOG_WARNING, errno, devnode, "cannot drop its cached pages: %m");
}

static void on_udev_event(void *userdata, const struct udev_event_info *ev)
{
	struct manager *m = userdata;

	if (!ev->devnode)
		return;
	if (ev->action == UDEV_ACTION_REMOVE)
		hotplug_device_removed(m, ev->devnode);
	else
		hotplug_device_added(m, ev->devnode, ev->coldplug);
}

int hotplug_start(struct manager *m)
{
	int r;

	if (!m->cfg.udev)
		return 0;
	r = udev_watch_new(m->event, m->cfg.udev_source, on_udev_event, m, &m->udev_watch);
	if (r < 0)
		return log_warning_errno(r, "cannot follow udev: %m; only configured devices are attached");
	log_info("following dax and pmem devices (%s events)", udev_watch_source(m->udev_watch));
	return 0;
}

void hotplug_stop(struct manager *m)
{
	m->udev_watch = udev_watch_free(m->udev_watch);
}
