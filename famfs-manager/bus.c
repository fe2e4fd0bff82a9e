// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The bus server: registers the objects (bus-manager.c, bus-filesystem.c,
 * bus-job.c)
 * and turns the manager core's events into ObjectManager signals and
 * PropertiesChanged.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "bus-internal.h"
#include "cleanup.h"
#include "escape.h"
#include "famfs/bus-api.h"
#include "logging.h"
#include "manager.h"

int bus_append_name(sd_bus_message *m, const char *raw)
{
	_cleanup_free_ char *escaped = famfs_escape_dup(raw);

	if (!escaped)
		return -ENOMEM;
	return sd_bus_message_append(m, "s", escaped);
}

/*
 * Changes are announced (PropertiesChanged, FilesAdded) FLUSH_DELAY_USEC
 * after the first of them: a caller creating files one call after another
 * would otherwise get two signals per call, each a message through
 * dbus-daemon, which cost more than the call itself.  While changes keep
 * coming, one flush per FLUSH_INTERVAL_USEC: at 10,000 calls a second a
 * 1 ms delay alone still sent a pair of signals every 12 calls.
 */
#define FLUSH_DELAY_USEC 1000
#define FLUSH_INTERVAL_USEC 10000

static int on_flush(sd_event_source *source, uint64_t usec, void *userdata)
{
	struct bus_server *s = userdata;

	if (sd_event_now(s->m->event, CLOCK_MONOTONIC, &s->last_flush_usec) < 0)
		s->last_flush_usec = usec;
	bus_flush_changes(s);
	/*
	 * A batch of thousands of files came as one message and was decoded
	 * into arrays, all freed by now; glibc keeps freed heap, so without
	 * this the daemon would hold tens of MiB it no longer uses.
	 */
	if (s->trim_after_flush) {
		s->trim_after_flush = false;
		(void)malloc_trim(0);
	}
	return 0;
}

void bus_schedule_flush(struct bus_server *s)
{
	int enabled = SD_EVENT_OFF;
	uint64_t now, when;

	(void)sd_event_source_get_enabled(s->flush, &enabled);
	if (enabled != SD_EVENT_OFF)
		return;
	if (sd_event_now(s->m->event, CLOCK_MONOTONIC, &now) < 0)
		now = 0;
	when = now + FLUSH_DELAY_USEC;
	if (s->last_flush_usec && s->last_flush_usec + FLUSH_INTERVAL_USEC > when)
		when = s->last_flush_usec + FLUSH_INTERVAL_USEC;
	(void)sd_event_source_set_time(s->flush, when);
	(void)sd_event_source_set_enabled(s->flush, SD_EVENT_ONESHOT);
}

void bus_fsys_added(struct bus_server *s, struct fsys *f)
{
	/* Objects exist through the fallback; announce late arrivals. */
	if (sd_bus_is_ready(s->bus) > 0)
		(void)sd_bus_emit_object_added(s->bus, f->object_path);
}

void bus_fsys_removed(struct bus_server *s, struct fsys *f)
{
	(void)sd_bus_emit_object_removed(s->bus, f->object_path);
}

void bus_faults_changed(struct bus_server *s)
{
	int r;

	r = sd_bus_emit_properties_changed(s->bus, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "FaultsPTE",
					   "FaultsPMD", "FaultsPUD", NULL);
	if (r < 0)
		log_warning_errno(r, "cannot send PropertiesChanged for the fault counters: %m");
}

struct bus_server *bus_server_free(struct bus_server *s)
{
	if (!s)
		return NULL;
	sd_event_source_unref(s->flush);
	if (s->bus) {
		sd_bus_flush(s->bus);
		sd_bus_flush_close_unref(s->bus);
	}
	free(s);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct bus_server *, bus_server_free);

int bus_server_new(struct manager *m, sd_bus *bus, struct bus_server **ret)
{
	_cleanup_(bus_server_freep) struct bus_server *s = NULL;
	int r;

	s = calloc(1, sizeof(*s));
	if (!s) {
		sd_bus_flush_close_unref(bus);
		return -ENOMEM;
	}
	s->m = m;
	s->bus = bus;
	r = sd_bus_add_object_manager(bus, NULL, FAMFS_MANAGER_PATH);
	if (r < 0)
		return r;
	r = sd_bus_add_object_vtable(bus, NULL, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, bus_manager_vtable, s);
	if (r < 0)
		return r;
	r = sd_bus_add_fallback_vtable(bus, NULL, FAMFS_FS_PATH_PREFIX, FAMFS_FS_IFACE, bus_fsys_vtable,
				       bus_fsys_find, s);
	if (r < 0)
		return r;
	r = sd_bus_add_node_enumerator(bus, NULL, FAMFS_FS_PATH_PREFIX, bus_fsys_enumerate, s);
	if (r < 0)
		return r;
	r = sd_bus_add_fallback_vtable(bus, NULL, FAMFS_JOB_PATH_PREFIX, FAMFS_JOB_IFACE, bus_job_vtable,
				       bus_job_find, s);
	if (r < 0)
		return r;
	r = sd_bus_add_node_enumerator(bus, NULL, FAMFS_JOB_PATH_PREFIX, bus_job_enumerate, s);
	if (r < 0)
		return r;
	r = sd_event_add_time(m->event, &s->flush, CLOCK_MONOTONIC, 0, 100, on_flush, s);
	if (r < 0)
		return r;
	(void)sd_event_source_set_enabled(s->flush, SD_EVENT_OFF);
	(void)sd_event_source_set_priority(s->flush, SD_EVENT_PRIORITY_IDLE);
	r = sd_bus_attach_event(bus, m->event, SD_EVENT_PRIORITY_NORMAL);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(s);
	return 0;
}
