/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bus layer: org.famfs.Manager1 on /org/famfs/Manager (bus-manager.c),
 * org.famfs.FileSystem1 on /org/famfs/Manager/fs/<uuid>
 * (bus-filesystem.c), an ObjectManager at the root.  It decodes calls,
 * asks the manager core, and maps errors to named bus errors at this edge
 * (bus-errors.c).  dbus/org.famfs.Manager1.xml documents every member.
 */
#ifndef FAMFS_MANAGER_BUS_H
#define FAMFS_MANAGER_BUS_H

#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "auth.h"

struct manager;
struct fsys;
struct job;

struct bus_server {
	struct manager *m;
	sd_bus *bus;
	sd_event_source *flush;         /* announces changes 1 ms after the first, at most every 10 ms */
	uint64_t last_flush_usec;       /* CLOCK_MONOTONIC of the last flush, 0 before the first */
	bool trim_after_flush;          /* a large batch freed its buffers: give the heap back */
	struct sender_cache_entry senders[SENDER_CACHE_SIZE];
	unsigned sender_next;
	uint64_t calls_denied;
};

/* Serves @m on @bus (taken), attached to m->event; the name is requested by the caller. */
int bus_server_new(struct manager *m, sd_bus *bus, struct bus_server **ret);
struct bus_server *bus_server_free(struct bus_server *s);

/* What the core's events (struct manager_events) become on the bus. */
void bus_fsys_added(struct bus_server *s, struct fsys *f);
void bus_fsys_removed(struct bus_server *s, struct fsys *f);
void bus_flush_changes(struct bus_server *s);
void bus_schedule_flush(struct bus_server *s);

/* A CreateFiles batch at least this long has the heap trimmed after it */
#define BUS_TRIM_BATCH 1024
void bus_faults_changed(struct bus_server *s);
void bus_job_added(struct bus_server *s, struct job *j);
void bus_job_finished(struct bus_server *s, struct job *j);
void bus_job_removed(struct bus_server *s, struct job *j);

#endif
