/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * When the follower peeks at the log headers next.  A peek costs a wake-up,
 * and on these machines a process that only wakes every 2 ms already spends
 * about 1.5 % of a core on it.  So the peeks run at the fast interval while
 * logs are moving and for PEEK_ACTIVE_USEC after they last moved, then the
 * interval doubles on each quiet peek up to the idle interval: a file
 * another host creates during activity shows up within the fast interval,
 * the first one after a quiet spell within the idle interval.
 */
#ifndef FAMFS_MANAGER_PEEK_SCHEDULE_H
#define FAMFS_MANAGER_PEEK_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>

#define PEEK_ACTIVE_USEC (3ULL * 1000000)

struct peek_schedule {
	uint64_t fast_usec;
	uint64_t idle_usec;          /* >= fast_usec */
	uint64_t interval_usec;      /* the current one */
	uint64_t last_moved_usec;    /* CLOCK_MONOTONIC */
};

/* Starts fast, as if a log had just moved at @now. */
void peek_schedule_init(struct peek_schedule *s, uint64_t fast_usec, uint64_t idle_usec, uint64_t now);

/* After a peek (or poll) at @now that saw a log move or not: the wait until the next peek. */
uint64_t peek_schedule_next(struct peek_schedule *s, uint64_t now, bool moved);

#endif
