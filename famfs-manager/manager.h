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
#include "job.h"
#include "manager-config.h"
#include "peek-schedule.h"

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
	/* @j started, ended (its outcome is in it), or is about to be freed */
	void (*job_added)(void *userdata, struct job *j);
	void (*job_finished)(void *userdata, struct job *j);
	void (*job_removed)(void *userdata, struct job *j);
};

/* Where the configuration comes from, for the start and every Reload. */
struct config_source {
	char *path;
	bool must_exist;
	struct manager_config overlay;  /* the command line's settings */
	bool poll_given, grace_given, no_polkit;
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
	struct peek_schedule peeks;
	/*
	 * famfs.ko's page fault counters (PTE, PMD, PUD): module-wide, the
	 * module does not attribute faults to a mount.  Read at most once a
	 * second; 0 without the module.
	 */
	uint64_t faults[3];
	uint64_t faults_read_usec;      /* CLOCK_MONOTONIC */
	struct config_source source;
	struct job *jobs;               /* running and recently finished, oldest first */
	unsigned next_job_id;
	bool jobs_stopping;             /* at exit: finished jobs are not pruned */
	/*
	 * The daemon's start, before its event loop answers anything: attaches
	 * of adopted mounts leave their replay to manager_finish_start.
	 */
	bool starting;
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
int manager_attach_with(struct manager *m, const char *device, const char *how,
			const struct attach_override *ov, struct fsys **ret);
/* Finishes the attaches the start left waiting, then ends the start. */
void manager_finish_start(struct manager *m);
/* Detaches @f safely, its object kept (failed, @reason) until the device comes back. */
void manager_detach(struct manager *m, struct fsys *f, const char *reason);
/* Detaches @f and removes it from the set: its object goes. */
void manager_remove(struct manager *m, struct fsys *f, const char *why);

/*
 * Reads the configuration (m->source) into @ret: the file, the command
 * line on top, the defaults filled in.  Messages name the file and line.
 */
int manager_load_config(struct manager *m, struct manager_config *ret, struct famfs_err *err);
/*
 * Reads the configuration again and applies it: devices it no longer names
 * are detached and removed, devices it newly names attached; the rest of
 * the settings apply to what attaches from now on (mount root, poll
 * interval, udev and system UUID file need a restart and are kept, with a
 * warning).  A configuration that does not load changes nothing.
 */
int manager_reload(struct manager *m, struct famfs_err *err);
/* The AutoMount setting for file systems attached from now on: of @uuid, or the default ("" or NULL). */
int manager_set_automount(struct manager *m, const char *uuid, bool automount, struct famfs_err *err);

/* Whether @a and @b name the same device or image (the same inode, or the same device number). */
bool manager_same_device(const char *a, const char *b);
/* The file system attached from @device, found by inode too; NULL when none. */
struct fsys *manager_find_device(struct manager *m, const char *device);

/* Gives @j an id and object, starts it, and tells the events; the job is the set's. */
int manager_job_start(struct manager *m, struct job *j);
/* Called by the runner when @j ended (job.c). */
void manager_job_finished(struct manager *m, struct job *j);
struct job *manager_find_job(struct manager *m, const char *object_path);
/* A running job on @device (a mutating one only when @mutating), or NULL. */
struct job *manager_running_job(struct manager *m, const char *device, bool mutating);
/* Waits for every running job (cancelled) and frees them all: at exit. */
void manager_jobs_stop(struct manager *m);

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
