// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The job runner: a thread per job, an eventfd that wakes the loop when it
 * is done, and the outcome kept on the job.  The work itself is in
 * job-check.c and job-format.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "famfs/bus-api.h"
#include "job.h"
#include "logging.h"
#include "manager.h"

const char *job_kind_name(enum job_kind k)
{
	switch (k) {
	case JOB_CHECK:
		return "check";
	case JOB_FORMAT:
		return "format";
	default:
		return "repair";
	}
}

bool job_kind_mutates(enum job_kind k)
{
	return k != JOB_CHECK;
}

void check_outcome_done(struct check_outcome *o)
{
	famfs_check_report_free(o->report);
	for (size_t i = 0; i < o->nproblems; i++) {
		free(o->problems[i].path);
		free(o->problems[i].message);
	}
	free(o->problems);
	memset(o, 0, sizeof(*o));
}

void check_outcome_add_problem(struct check_outcome *o, const char *code, int64_t index, const char *path,
			       const char *message)
{
	struct check_problem *p;

	if (o->nproblems == o->cproblems) {
		size_t c = o->cproblems ? o->cproblems * 2 : 16;

		p = c <= 1024 ? realloc(o->problems, c * sizeof(*p)) : NULL;
		if (!p) {
			o->problems_dropped++;
			return;
		}
		o->problems = p;
		o->cproblems = c;
	}
	p = &o->problems[o->nproblems];
	snprintf(p->code, sizeof(p->code), "%s", code);
	p->index = index;
	p->path = strdup(path ? path : "");
	p->message = strdup(message ? message : "");
	if (!p->path || !p->message) {
		free(p->path);
		free(p->message);
		o->problems_dropped++;
		return;
	}
	o->nproblems++;
}

size_t check_outcome_errors(const struct check_outcome *o)
{
	return (o->report ? famfs_check_report_errors(o->report) : 0) + o->nproblems + o->problems_dropped;
}

const char *check_outcome_verdict(const struct check_outcome *o)
{
	if (check_outcome_errors(o) == 0)
		return "clean";
	if (o->report && famfs_check_repair_fixes_all(o->report) && o->nproblems + o->problems_dropped == 0)
		return "torn-tail";
	return "damaged";
}

static uint64_t realtime_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

struct job *job_new(enum job_kind kind, const char *device, const char *fs_object)
{
	struct job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->kind = kind;
	j->done_fd = -1;
	j->device = strdup(device);
	j->fs_object = fs_object ? strdup(fs_object) : NULL;
	if (!j->device || (fs_object && !j->fs_object))
		return job_free(j);
	return j;
}

struct job *job_free(struct job *j)
{
	if (!j)
		return NULL;
	sd_event_source_disable_unref(j->done_source);
	if (j->done_fd >= 0)
		close(j->done_fd);
	if (j->free_data)
		j->free_data(j);
	check_outcome_done(&j->outcome);
	for (size_t i = 0; i < j->nchanges; i++)
		free(j->changes[i]);
	free(j->changes);
	free(j->message);
	free(j->device);
	free(j->fs_object);
	free(j->object_path);
	free(j);
	return NULL;
}

void job_cancel(struct job *j)
{
	atomic_store(&j->cancel, true);
}

bool job_cancelled(struct job *j)
{
	return atomic_load(&j->cancel);
}

void job_set_progress(struct job *j, double fraction)
{
	if (fraction < 0)
		fraction = 0;
	if (fraction > 1)
		fraction = 1;
	atomic_store(&j->progress, (uint32_t)(fraction * 1000000));
}

double job_progress(const struct job *j)
{
	return atomic_load(&((struct job *)j)->progress) / 1000000.0;
}

void job_add_change(struct job *j, const char *fmt, ...)
{
	char **l = realloc(j->changes, (j->nchanges + 1) * sizeof(*l));
	va_list ap;

	if (!l)
		return;
	j->changes = l;
	va_start(ap, fmt);
	if (vasprintf(&l[j->nchanges], fmt, ap) >= 0)
		j->nchanges++;
	va_end(ap);
}

unsigned job_step_delay_ms(void)
{
	const char *v = getenv("FAMFS_MANAGER_JOB_STEP_DELAY_MS");
	char *end;
	unsigned long x;

	if (!v || !*v)
		return 0;
	x = strtoul(v, &end, 10);
	return *end || x > 10000 ? 0 : (unsigned)x;
}

void job_step_pause(void)
{
	unsigned ms = job_step_delay_ms();

	if (ms)
		(void)nanosleep(&(struct timespec){ ms / 1000, (long)(ms % 1000) * 1000000 }, NULL);
}

static void *job_thread(void *arg)
{
	struct job *j = arg;
	uint64_t one = 1;

	j->work(j);
	/* Wakes the loop (on_job_done); an eventfd write fails only on overflow, which one cannot cause. */
	while (write(j->done_fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
	return NULL;
}

/* On the loop once the thread is joined: the finish step, the outcome, and the events. */
static void job_end(struct job *j)
{
	j->running = false;
	sd_event_source_set_enabled(j->done_source, SD_EVENT_OFF);
	if (j->finish)
		j->finish(j->m, j);
	j->finished = true;
	j->finished_usec = realtime_usec();
	if (!j->message) {
		if (j->result < 0)
			j->message = strdup(j->err.msg[0] ? j->err.msg : strerror(-j->result));
		else
			j->message = strdup("done");
	}
	log_about(j->result < 0 ? LOG_WARNING : LOG_INFO, j->device, "%s job %u %s: %s", job_kind_name(j->kind),
		  j->id, j->result < 0 ? "failed" : "succeeded", j->message ? j->message : "");
	manager_job_finished(j->m, j);
}

static int on_job_done(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct job *j = userdata;
	uint64_t v;

	(void)read(fd, &v, sizeof(v));
	pthread_join(j->thread, NULL);
	job_end(j);
	return 0;
}

int job_start(struct manager *m, struct job *j)
{
	int r;

	j->m = m;
	j->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (j->done_fd < 0)
		return -errno;
	r = sd_event_add_io(m->event, &j->done_source, j->done_fd, EPOLLIN, on_job_done, j);
	if (r < 0)
		return r;
	j->started_usec = realtime_usec();
	j->running = true;
	r = -pthread_create(&j->thread, NULL, job_thread, j);
	if (r < 0) {
		j->running = false;
		return r;
	}
	return 0;
}

void job_wait(struct job *j)
{
	uint64_t v;

	if (!j->running)
		return;
	job_cancel(j);
	/* Blocks the loop until the work next looks at the flag: one step of it. */
	pthread_join(j->thread, NULL);
	(void)read(j->done_fd, &v, sizeof(v));
	job_end(j);
}
