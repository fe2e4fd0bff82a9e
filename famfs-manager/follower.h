/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The follower: every poll interval, each attached file system's log is
 * followed (fsys_follow), file systems whose medium changed under them are
 * replaced once the grace period is over, and famfs.ko's fault counters
 * are read; what changed is announced through the manager's events.
 */
#ifndef FAMFS_MANAGER_FOLLOWER_H
#define FAMFS_MANAGER_FOLLOWER_H

#include <stdbool.h>

struct manager;

/* Starts the timer on m->event. */
int follower_start(struct manager *m);
void follower_stop(struct manager *m);

/* One round of the follower, as the timer runs it; returns whether anything changed. */
bool follower_tick(struct manager *m);

/* Re-reads the fault counters (at most once a second) and tells the events of a change. */
void follower_update_faults(struct manager *m);

#endif
