/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Long work on a device (check, format, repair) as a job: its work runs on
 * a thread of its own while the event loop keeps serving, reporting
 * progress and watching a cancel flag; when it ends, its finish step runs
 * on the loop (where the file systems may be touched) and the job keeps
 * its outcome until it is pruned.  The manager core keeps the list
 * (manager.h) and tells the layer above of every job that starts or ends.
 */
#ifndef FAMFS_MANAGER_JOB_H
#define FAMFS_MANAGER_JOB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "check.h"
#include "error.h"
#include "repair.h"

struct manager;

enum job_kind {
	JOB_CHECK,
	JOB_FORMAT,
	JOB_REPAIR,
};

/* At most this many finished jobs are kept; the oldest goes first. */
#define JOB_KEEP_FINISHED 32

/* A problem the kernel mount comparison found (kernel-check.c). */
struct check_problem {
	char code[32];
	int64_t index;
	char *path;
	char *message;
};

/* What a check found: the checker's report and the mount's problems. */
struct check_outcome {
	struct famfs_check_report *report;
	struct check_problem *problems;
	size_t nproblems, cproblems;
	size_t problems_dropped;        /* counted, not listed */
};

void check_outcome_done(struct check_outcome *o);
void check_outcome_add_problem(struct check_outcome *o, const char *code, int64_t index, const char *path,
			       const char *message);
/* Errors: the checker's and the mount's. */
size_t check_outcome_errors(const struct check_outcome *o);
/* "clean", "torn-tail" (the safe repair fixes every error) or "damaged". */
const char *check_outcome_verdict(const struct check_outcome *o);

struct job {
	unsigned id;
	char *object_path;              /* FAMFS_JOB_PATH_PREFIX/<id> */
	enum job_kind kind;
	char *device;
	char *fs_object;                /* the file system's object, or NULL (format) */
	uint64_t started_usec;          /* CLOCK_REALTIME */
	uint64_t finished_usec;

	/* shared with the thread */
	_Atomic uint32_t progress;      /* parts per million */
	atomic_bool cancel;

	/* written by the thread, read once it is joined */
	int result;                     /* 0 or a negative errno */
	struct famfs_err err;

	bool running;
	bool finished;
	char *message;                  /* what Completed says */
	char **changes;                 /* what the job changed on the medium, one line each */
	size_t nchanges;

	/* the work (on the thread) and its end (on the loop), with their state */
	void (*work)(struct job *j);
	void (*finish)(struct manager *m, struct job *j);
	void (*free_data)(struct job *j);
	void *data;
	struct check_outcome outcome;   /* check and repair */

	struct manager *m;
	pthread_t thread;
	int done_fd;                    /* eventfd the thread signals at its end */
	sd_event_source *done_source;
	struct job *next;
};

const char *job_kind_name(enum job_kind k);
/* Whether @k writes to the medium (at most one such job per device). */
bool job_kind_mutates(enum job_kind k);

/* A new job, not yet started; @device is copied. */
struct job *job_new(enum job_kind kind, const char *device, const char *fs_object);
struct job *job_free(struct job *j);
/* Starts the thread; the loop hears of its end through done_fd. */
int job_start(struct manager *m, struct job *j);
/* Asks the work to stop; it ends as soon as it looks. */
void job_cancel(struct job *j);
bool job_cancelled(struct job *j);
void job_set_progress(struct job *j, double fraction);
double job_progress(const struct job *j);
/* Appends one line to the job's changes (on the loop, in finish). */
void job_add_change(struct job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Waits for the thread of a running job (the device is going away). */
void job_wait(struct job *j);

/*
 * Slows each step of a job's work by this many milliseconds: the
 * FAMFS_MANAGER_JOB_STEP_DELAY_MS environment variable, for the tests that
 * cancel a job midway.  0 without it.
 */
unsigned job_step_delay_ms(void);
void job_step_pause(void);

#endif
