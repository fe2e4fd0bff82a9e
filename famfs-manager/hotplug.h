/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Devices that come and go: the udev watch feeds add/change/remove here;
 * this decides per device whether it is famfs, which backend serves it,
 * whether and where it is mounted (AutoMount), and detaches it safely when
 * it disappears.
 *
 * Configuration ([manager] keys, and one [filesystem UUID] section per file
 * system):
 *   udev = yes|no                 follow dax/pmem devices (default yes)
 *   udev-source = auto|udev|kernel
 *   automount = yes|no            default for every file system (yes)
 *   backend = auto|kernel|view    auto: kernel when famfs.ko is there
 *   kernel-module = famfs | /path/famfs.ko   load it when missing (unset: never)
 *   [filesystem 0b1c...]          automount, mount-point, backend for one UUID
 */
#ifndef FAMFS_MANAGER_HOTPLUG_H
#define FAMFS_MANAGER_HOTPLUG_H

#include <stdbool.h>

#include "error.h"

#include "kernel.h"
#include "udev-monitor.h"

struct manager;
struct manager_config;
struct fsys;
struct backend_ops;

#define HOTPLUG_MAX_RULES 64

struct fs_rule {
	char uuid[37];
	int automount;            /* -1: the default */
	int backend;              /* -1: the default, else enum backend_choice */
	char *mountpoint;         /* NULL: under the mount root */
};

struct hotplug_config {
	bool udev;
	char *udev_source;
	bool automount;
	enum backend_choice backend;
	char *kernel_module;
	struct fs_rule rules[HOTPLUG_MAX_RULES];
	size_t nrules;
};

void hotplug_config_init(struct hotplug_config *c);
void hotplug_config_free(struct hotplug_config *c);
/*
 * One key of [manager] (@uuid NULL) or of [filesystem @uuid].  -ENOENT for
 * a key that is not ours, -EINVAL for a bad value or UUID, with a message.
 */
int hotplug_config_key(struct hotplug_config *c, const char *uuid, const char *key, const char *val,
		       char *errbuf, size_t errlen);

/* How one device is attached. */
struct attach_plan {
	const struct backend_ops *backend;
	bool fallback_view;       /* auto: the view backend when the kernel's fails */
	bool mount;               /* AutoMount */
	char *mountpoint;         /* NULL: the default under the mount root */
};

/* @uuid may be "" (unknown); @is_image: a regular file, not a device. */
void hotplug_plan(struct manager *m, const char *device, const char *uuid, bool is_image,
		  struct attach_plan *ret);
void attach_plan_done(struct attach_plan *p);
/* Sets the backend and the mount point ("" when not mounted) of @f. */
int hotplug_apply_plan(struct fsys *f, struct attach_plan *plan);
/*
 * backend->prepare (before the replay) and backend->attach (after it),
 * each falling back to the view backend when the plan allows.
 */
int hotplug_backend_prepare(struct fsys *f, const struct attach_plan *plan, struct famfs_err *err);
int hotplug_backend_attach(struct fsys *f, const struct attach_plan *plan, struct famfs_err *err);

/* Starts the udev watch (when configured) and coldplugs. */
int hotplug_start(struct manager *m);
void hotplug_stop(struct manager *m);
void hotplug_event(void *userdata, const struct udev_event_info *ev);

/*
 * File systems whose medium changed under them (see famfs_fs_revalidate)
 * stay failed for the grace period, so every client sees why; then each is
 * detached and the device attached again as whatever it now holds.
 */
void hotplug_replace_changed_media(struct manager *m);

/* Detaches safely: health failed, @reason the only reason. */
void hotplug_detach(struct fsys *f, const char *reason);

#endif
