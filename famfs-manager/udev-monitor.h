/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Following DAX and pmem devices with libudev: the monitor is enabled
 * first, then the devices already there are enumerated (coldplug), so no
 * device slips between the two.  Every add, change and remove of a "dax"
 * device or a pmem block disk reaches the callback; deciding what is famfs
 * is the caller's business (hotplug.c probes the superblock itself).
 */
#ifndef FAMFS_MANAGER_UDEV_MONITOR_H
#define FAMFS_MANAGER_UDEV_MONITOR_H

#include <stdbool.h>
#include <systemd/sd-event.h>

#include "cleanup.h"

enum udev_action {
	UDEV_ACTION_ADD,        /* add, bind, or found at coldplug */
	UDEV_ACTION_CHANGE,
	UDEV_ACTION_REMOVE,     /* remove, unbind */
};

struct udev_event_info {
	enum udev_action action;
	bool coldplug;
	const char *subsystem;  /* "dax" or "block" */
	const char *sysname;    /* "dax0.0", "pmem0" */
	const char *syspath;
	const char *devnode;    /* "/dev/dax0.0"; NULL when the device has none */
	const char *fs_type;    /* ID_FS_TYPE from the rules, or NULL */
	const char *fs_uuid;    /* ID_FS_UUID, or NULL */
};

typedef void (*udev_event_fn)(void *userdata, const struct udev_event_info *ev);

struct udev_watch;

/*
 * @source: "udev" (after the rules ran; needs udevd) or "kernel" (raw
 * uevents); NULL picks "udev" when udevd runs or under umockdev, "kernel"
 * otherwise.  The coldplug callbacks run before this returns.
 */
int udev_watch_new(sd_event *event, const char *source, udev_event_fn fn, void *userdata,
		   struct udev_watch **ret);
struct udev_watch *udev_watch_free(struct udev_watch *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct udev_watch *, udev_watch_free);

/* Enumerates again and reports every present device as ADD (coldplug). */
int udev_watch_rescan(struct udev_watch *w);

const char *udev_watch_source(const struct udev_watch *w);
const char *udev_action_name(enum udev_action a);

#endif
