/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The manager core: the set of attached file systems, with the one path
 * by which a device joins it (manager_attach) and the ways it leaves.
 * Whoever shows the set (the bus layer) registers struct manager_events
 * and hears of every change there; the core never calls it by name.
 */
#ifndef FAMFS_MANAGER_MANAGER_H
#define FAMFS_MANAGER_MANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "attach-policy.h"
#include "error.h"
#include "fsys.h"
#include "manager-config.h"

struct udev_watch;

/* What the core tells the layer above; every member may be NULL. */
struct manager_events {
	/* @f joined the set as an object of its own (found, appeared) */
	void (*fs_added)(void *userdata, struct fsys *f);
	/* @f, still in the set, is about to be freed */
	void (*fs_removed)(void *userdata, struct fsys *f);
	/* something visible changed: announce it, @now or once the loop is idle */
	void (*changed)(void *userdata, bool now);
	/* famfs.ko's fault counters changed */
	void (*faults_changed)(void *userdata);
};

struct manager {
	sd_event *event;
	struct manager_config cfg;
	uint8_t host_uuid[16];
	bool have_host_uuid;
	struct attach_policy policy;
	struct fsys *fsys;
	size_t nfsys;
	const struct manager_events *events;
	void *events_data;
	/* device sources and the follower (hotplug.c, follower.c) */
	struct udev_watch *udev_watch;
	sd_event_source *timer;
	sd_event_source *peek_timer;    /* follow-interval: log header peeks */
	/*
	 * famfs.ko's page fault counters (PTE, PMD, PUD): module-wide, the
	 * module does not attribute faults to a mount.  Read at most once a
	 * second; 0 without the module.
	 */
	uint64_t faults[3];
	uint64_t faults_read_usec;      /* CLOCK_MONOTONIC */
};

/* An empty set with the default configuration; manager_done() frees it. */
void manager_init(struct manager *m);
void manager_done(struct manager *m);
void manager_set_events(struct manager *m, const struct manager_events *ev, void *userdata);

/*
 * The one attach path: attaches @device (replacing a file system already
 * attached from it), adds it to the set, logs it (@how: "attached",
 * "found", "appeared:") and tells the events.  -EEXIST when the file
 * system it holds is already attached from another device.
 */
int manager_attach(struct manager *m, const char *device, const char *how, struct fsys **ret);
/* Detaches @f safely, its object kept (failed, @reason) until the device comes back. */
void manager_detach(struct manager *m, struct fsys *f, const char *reason);
/* Tells the events something changed (see struct manager_events). */
void manager_changed(struct manager *m, bool now);

struct fsys *manager_find_by_device(struct manager *m, const char *device);
struct fsys *manager_find_by_path(struct manager *m, const char *object_path);
/*
 * Finds the file system @escaped is under and the relative path ("" for its
 * root); @escaped is an absolute path as it comes over the bus, escaped as
 * escape.h says.
 */
int manager_resolve(struct manager *m, const char *escaped, struct fsys **ret_f,
		    char *ret_rel, size_t rel_size, struct famfs_err *err);
/* How many of the set are healthy. */
size_t manager_count_healthy(const struct manager *m);

#endif
