// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libudev monitor and coldplug for "dax" devices and pmem block disks.
 * Nothing a udev event carries is trusted beyond being a string: names are
 * matched again here, and the device node is only handed on.
 */
#include <errno.h>
#include <fnmatch.h>
#include <libudev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "udev-monitor.h"

struct udev_watch {
	struct udev *udev;
	struct udev_monitor *mon;
	sd_event_source *io;
	udev_event_fn fn;
	void *userdata;
	char source[8];
};

const char *udev_action_name(enum udev_action a)
{
	switch (a) {
	case UDEV_ACTION_ADD:
		return "add";
	case UDEV_ACTION_CHANGE:
		return "change";
	default:
		return "remove";
	}
}

const char *udev_watch_source(const struct udev_watch *w)
{
	return w->source;
}

/* The devices famfs can live on. */
static bool wanted(const char *subsystem, const char *sysname, const char *devtype)
{
	if (!subsystem || !sysname)
		return false;
	if (!strcmp(subsystem, "dax"))
		return fnmatch("dax*", sysname, 0) == 0;
	if (!strcmp(subsystem, "block"))
		return fnmatch("pmem*", sysname, 0) == 0 && (!devtype || !strcmp(devtype, "disk"));
	return false;
}

static bool parse_action(const char *s, enum udev_action *ret)
{
	if (!s || !strcmp(s, "add") || !strcmp(s, "bind") || !strcmp(s, "online"))
		*ret = UDEV_ACTION_ADD;
	else if (!strcmp(s, "change") || !strcmp(s, "move"))
		*ret = UDEV_ACTION_CHANGE;
	else if (!strcmp(s, "remove") || !strcmp(s, "unbind") || !strcmp(s, "offline"))
		*ret = UDEV_ACTION_REMOVE;
	else
		return false;
	return true;
}

static void report(struct udev_watch *w, struct udev_device *d, enum udev_action action, bool coldplug)
{
	struct udev_event_info ev = {
		.action = action,
		.coldplug = coldplug,
		.subsystem = udev_device_get_subsystem(d),
		.sysname = udev_device_get_sysname(d),
		.syspath = udev_device_get_syspath(d),
		.devnode = udev_device_get_devnode(d),
		.fs_type = udev_device_get_property_value(d, "ID_FS_TYPE"),
		.fs_uuid = udev_device_get_property_value(d, "ID_FS_UUID"),
	};

	if (!wanted(ev.subsystem, ev.sysname, udev_device_get_devtype(d)) || !ev.syspath)
		return;
	/* A device node outside /dev is not one udev made. */
	if (ev.devnode && strncmp(ev.devnode, "/dev/", 5) != 0)
		ev.devnode = NULL;
	w->fn(w->userdata, &ev);
}

static int on_monitor(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct udev_watch *w = userdata;

	/* Drain what is queued; each receive returns one device or NULL. */
	for (int i = 0; i < 64; i++) {
		struct udev_device *d = udev_monitor_receive_device(w->mon);
		enum udev_action a;

		if (!d)
			break;
		if (parse_action(udev_device_get_action(d), &a))
			report(w, d, a, false);
		udev_device_unref(d);
	}
	return 0;
}

int udev_watch_rescan(struct udev_watch *w)
{
	static const char *const subsystems[] = { "dax", "block" };
	int r = 0;

	for (size_t k = 0; k < sizeof(subsystems) / sizeof(subsystems[0]); k++) {
		struct udev_enumerate *e = udev_enumerate_new(w->udev);
		struct udev_list_entry *it;

		if (!e)
			return -ENOMEM;
		r = udev_enumerate_add_match_subsystem(e, subsystems[k]);
		if (r >= 0)
			r = udev_enumerate_scan_devices(e);
		if (r < 0) {
			udev_enumerate_unref(e);
			/* A subsystem that does not exist here has no devices. */
			if (r == -ENOENT)
				continue;
			return r;
		}
		udev_list_entry_foreach(it, udev_enumerate_get_list_entry(e)) {
			struct udev_device *d = udev_device_new_from_syspath(w->udev, udev_list_entry_get_name(it));

			if (!d)
				continue;
			report(w, d, UDEV_ACTION_ADD, true);
			udev_device_unref(d);
		}
		udev_enumerate_unref(e);
	}
	return 0;
}

static const char *pick_source(const char *source)
{
	if (source && (!strcmp(source, "udev") || !strcmp(source, "kernel")))
		return source;
	if (getenv("UMOCKDEV_DIR") || access("/run/udev/control", F_OK) == 0)
		return "udev";
	return "kernel";
}

int udev_watch_new(sd_event *event, const char *source, udev_event_fn fn, void *userdata,
		   struct udev_watch **ret)
{
	_cleanup_(udev_watch_freep) struct udev_watch *w = NULL;
	int r;

	if (source && strcmp(source, "udev") && strcmp(source, "kernel") && strcmp(source, "auto"))
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fn = fn;
	w->userdata = userdata;
	snprintf(w->source, sizeof(w->source), "%s", pick_source(source));
	w->udev = udev_new();
	if (!w->udev)
		return errno ? -errno : -ENOMEM;
	w->mon = udev_monitor_new_from_netlink(w->udev, w->source);
	if (!w->mon)
		return errno ? -errno : -EIO;
	r = udev_monitor_filter_add_match_subsystem_devtype(w->mon, "dax", NULL);
	if (r >= 0)
		r = udev_monitor_filter_add_match_subsystem_devtype(w->mon, "block", "disk");
	if (r >= 0)
		r = udev_monitor_enable_receiving(w->mon);
	if (r < 0)
		return r;
	/* Big enough for a burst of namespaces appearing at once. */
	(void)udev_monitor_set_receive_buffer_size(w->mon, 4 * 1024 * 1024);
	r = sd_event_add_io(event, &w->io, udev_monitor_get_fd(w->mon), EPOLLIN, on_monitor, w);
	if (r < 0)
		return r;
	/* Enabled first, enumerated second: nothing is missed in between. */
	r = udev_watch_rescan(w);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(w);
	return 0;
}

struct udev_watch *udev_watch_free(struct udev_watch *w)
{
	if (!w)
		return NULL;
	sd_event_source_disable_unref(w->io);
	udev_monitor_unref(w->mon);
	udev_unref(w->udev);
	free(w);
	return NULL;
}
