// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "follower.h"
#include "fs.h"
#include "hotplug.h"
#include "kernel.h"
#include "logging.h"
#include "manager.h"

static uint64_t now_monotonic_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/*
 * The follower found that the medium under @f changed (re-formatted by
 * another host, superblock destroyed, log reset, master changed).  The
 * old file system goes (a kernel mount of it is unmounted: its files map
 * extents of the old layout, which now belong to the new file system), and
 * whatever the device holds now is attached as a new file system, by the
 * same path as a device that appears.
 */
static void medium_replaced(struct manager *m, struct fsys *f)
{
	char devnode[4096], reason[FAMFS_ERR_MSG_MAX];
	const char *change = famfs_fs_medium_change(fsys_fs(f));

	snprintf(devnode, sizeof(devnode), "%s", f->bt.device);
	snprintf(reason, sizeof(reason), "%s", change ? change : "medium changed");
	log_about(LOG_WARNING, devnode, "%s; detaching %s and attaching what the device holds now", reason,
		  fsys_name(f));
	fsys_detach(f, reason);
	hotplug_drop_page_cache(devnode);
	hotplug_device_added(m, devnode, false);
}

static void replace_changed_media(struct manager *m)
{
	for (struct fsys *f = m->fsys; f;) {
		if (fsys_medium_changed_for(f, m->cfg.grace_ms * 1000)) {
			medium_replaced(m, f);
			f = m->fsys;    /* the list changed */
			continue;
		}
		f = f->next;
	}
}

void follower_update_faults(struct manager *m)
{
	uint64_t now = now_monotonic_usec(), v[3];

	/* A busy mapping faults all the time: one change a second at most. */
	if (m->faults_read_usec && now - m->faults_read_usec < 1000000)
		return;
	m->faults_read_usec = now;
	(void)kernel_module_fault_counters(v);
	if (memcmp(v, m->faults, sizeof(v)) == 0)
		return;
	memcpy(m->faults, v, sizeof(v));
	if (m->events && m->events->faults_changed)
		m->events->faults_changed(m->events_data);
}

bool follower_tick(struct manager *m)
{
	bool changed = false;

	for (struct fsys *f = m->fsys; f; f = f->next)
		changed |= fsys_follow(f);
	replace_changed_media(m);
	follower_update_faults(m);
	return changed;
}

/*
 * Between two polls, every follow-interval (follow-idle-interval when the
 * logs have been quiet: peek-schedule.h): one cache line of each log
 * header, and a full tick only when one moved.  This is what makes a file
 * another host creates appear within milliseconds at almost no idle cost;
 * the poll remains for what a peek does not see (a device gone, a media
 * failure, a superblock changed in place, the fault counters).
 */
static bool some_log_moved(const struct manager *m)
{
	for (const struct fsys *f = m->fsys; f; f = f->next)
		if (fsys_fs(f) && !f->device_gone && !f->media_error[0] && famfs_fs_log_moved(fsys_fs(f)))
			return true;
	return false;
}

static int on_peek(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct manager *m = userdata;
	bool moved = some_log_moved(m);

	if (moved && follower_tick(m))
		manager_changed(m, true);
	(void)sd_event_source_set_time(s, usec + peek_schedule_next(&m->peeks, usec, moved));
	return 0;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct manager *m = userdata;

	if (follower_tick(m)) {
		manager_changed(m, true);
		/* Whatever the poll found moving may go on moving: peek fast again. */
		if (m->peek_timer)
			(void)sd_event_source_set_time(m->peek_timer, usec + peek_schedule_next(&m->peeks, usec, true));
	}
	(void)sd_event_source_set_time(s, usec + m->cfg.poll_ms * 1000);
	return 0;
}

int follower_start(struct manager *m)
{
	bool peeks = m->cfg.follow_ms > 0 && m->cfg.follow_ms < m->cfg.poll_ms;
	uint64_t poll_accuracy = 1000;
	int r;

	/* With peeks the poll may be an idle peek interval late: it then runs on a peek's wake-up. */
	if (peeks && m->cfg.follow_idle_ms < m->cfg.poll_ms)
		poll_accuracy = m->cfg.follow_idle_ms * 1000;
	r = sd_event_add_time_relative(m->event, &m->timer, CLOCK_MONOTONIC, m->cfg.poll_ms * 1000, poll_accuracy,
				       on_timer, m);
	if (r < 0)
		return r;
	r = sd_event_source_set_enabled(m->timer, SD_EVENT_ON);
	if (r < 0 || !peeks)
		return r;
	peek_schedule_init(&m->peeks, m->cfg.follow_ms * 1000, m->cfg.follow_idle_ms * 1000, now_monotonic_usec());
	/* An accuracy of 100 us: sd-event's default (250 ms) would batch the peeks away. */
	r = sd_event_add_time_relative(m->event, &m->peek_timer, CLOCK_MONOTONIC, m->cfg.follow_ms * 1000, 100,
				       on_peek, m);
	if (r < 0)
		return r;
	return sd_event_source_set_enabled(m->peek_timer, SD_EVENT_ON);
}

void follower_stop(struct manager *m)
{
	m->timer = sd_event_source_unref(m->timer);
	m->peek_timer = sd_event_source_unref(m->peek_timer);
}
