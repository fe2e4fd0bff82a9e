// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The check and repair jobs.  Both check a snapshot of the superblock
 * region and the log, copied on the loop when the job starts, so that the
 * thread never reads a mapping the loop may unmap (a detach, a medium
 * change, the device going away); a file system that could not be opened
 * is checked through a mapping of the device of the thread's own.  The
 * kernel mount is compared with the log on the loop, at the end.
 *
 * Repair makes the fsck engine's only repair, cutting a torn tail back to
 * the last intact entry, and only where no other writer can be appending:
 * this host must be the master the superblock names (no other host ever
 * appends to a master's log), the daemon must hold the device writable,
 * the host-local log lock every local writer appends under must be free
 * (taken without waiting), and the log header must still be the one the
 * check saw.  The write happens on the loop, so none of the daemon's own
 * creations runs meanwhile.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "job-work.h"
#include "kernel.h"
#include "logging.h"
#include "manager.h"
#include "medium-guard.h"
#include "cache.h"
#include "omf.h"

struct check_data {
	uint8_t *copy;                  /* the snapshot, or NULL: the device mapping */
	uint64_t copy_len;
	struct famfs_device *dev;       /* opened (and guarded) on the loop */
	uint64_t medium_size;
};

static void free_check_data(struct job *j)
{
	struct check_data *d = j->data;

	if (d) {
		free(d->copy);
		if (d->dev)
			medium_guard_remove(d->dev->base);
		famfs_device_close(d->dev);
	}
	free(d);
	j->data = NULL;
}

static void check_work(struct job *j)
{
	struct check_data *d = j->data;
	int r;

	job_step_pause();
	if (job_cancelled(j)) {
		j->result = famfs_err_set(&j->err, -ECANCELED, "cancelled before the check ran");
		return;
	}
	if (d->copy) {
		r = famfs_check_view(d->copy, d->copy_len, d->medium_size, 0, &j->outcome.report);
	} else {
		r = famfs_check_device(d->dev, 0, &j->outcome.report);
		if (medium_guard_lost(d->dev->base))
			r = famfs_err_set(&j->err, -ENXIO, "%s went away while it was checked", j->device);
	}
	if (r < 0 && !j->err.msg[0])
		famfs_err_set(&j->err, r, "cannot check %s: %s", j->device, strerror(-r));
	job_set_progress(j, 1);
	job_step_pause();
	if (r >= 0 && job_cancelled(j))
		r = famfs_err_set(&j->err, -ECANCELED, "cancelled");
	j->result = r;
}

static void on_mount_problem(void *userdata, const char *code, int64_t index, const char *relpath,
			     const char *message)
{
	check_outcome_add_problem(userdata, code, index, relpath, message);
}

/* The file system the job was started on, if it is still the one on its device. */
static struct fsys *job_fsys(struct manager *m, struct job *j)
{
	struct fsys *f = j->fs_object ? manager_find_by_path(m, j->fs_object) : NULL;

	return f && !strcmp(f->bt.device, j->device) ? f : NULL;
}

/* The parts of a check that need the file system, on the loop. */
static void check_mount_part(struct manager *m, struct job *j)
{
	struct fsys *f = job_fsys(m, j);
	struct famfs_err err = {0};

	if (!f)
		return;
	if (f->bt.fs && f->bt.ops == &backend_kernel && !f->media_error[0] &&
	    kernel_check_mount(&f->bt, on_mount_problem, &j->outcome, &err) < 0)
		check_outcome_add_problem(&j->outcome, "mount-unchecked", -1, "", err.msg);
	if (f->media_error[0])
		check_outcome_add_problem(&j->outcome, "media-failure", -1, "", f->media_error);
}

static char *summary(const struct check_outcome *o)
{
	char *s = NULL;

	if (asprintf(&s, "%s: %zu errors, %zu warnings", check_outcome_verdict(o), check_outcome_errors(o),
		     o->report->by_severity[FAMFS_SEV_WARNING]) < 0)
		return NULL;
	return s;
}

static void check_finish(struct manager *m, struct job *j)
{
	if (j->result < 0)
		return;
	check_mount_part(m, j);
	j->message = summary(&j->outcome);
}

static void repair_finish(struct manager *m, struct job *j)
{
	struct famfs_repair_action acts[FAMFS_REPAIR_MAX_ACTIONS];
	const struct famfs_check_report *rep = j->outcome.report;
	struct fsys *f;
	size_t n = 0;
	int r;

	if (j->result < 0)
		return;
	if (check_outcome_errors(&j->outcome) == 0) {
		j->message = strdup("clean: nothing to repair");
		return;
	}
	if (!rep->repair.needed || !famfs_check_repair_fixes_all(rep)) {
		j->result = famfs_err_set(&j->err, -EUCLEAN,
					  "%zu errors the safe repair (a torn log tail) does not fix; nothing changed",
					  check_outcome_errors(&j->outcome));
		return;
	}
	f = job_fsys(m, j);
	if (!f || !f->bt.fs) {
		j->result = famfs_err_set(&j->err, -ENXIO, "%s was detached or went away during the repair; nothing changed",
					  j->device);
		return;
	}
	r = famfs_fs_repair_tail(f->bt.fs, &rep->repair, acts, &n, &j->err);
	if (r < 0) {
		j->result = r;
		return;
	}
	for (size_t k = 0; k < n; k++)
		job_add_change(j, "%s %" PRIu64 " -> %" PRIu64, acts[k].field, acts[k].old_value, acts[k].new_value);
	log_fs(LOG_NOTICE, f, "repaired the log: cut back to %" PRIu64 " entries", rep->repair.new_next_index);
	(void)fsys_follow(f);
	manager_changed(m, false);
	if (asprintf(&j->message, "repaired: log cut back to its last intact entry (%" PRIu64 " entries)%s%s",
		     rep->repair.new_next_index, n ? "; " : "", n ? j->changes[0] : "") < 0)
		j->message = NULL;
}

int job_check_prepare(struct job *j, struct fsys *f, struct famfs_err *err)
{
	struct check_data *d = calloc(1, sizeof(*d));
	int r;

	if (!d)
		return -ENOMEM;
	j->data = d;
	j->free_data = free_check_data;
	j->work = check_work;
	j->finish = j->kind == JOB_REPAIR ? repair_finish : check_finish;
	/* A mount disabled by a media failure cannot be read: the device still can. */
	if (f->bt.fs && !f->media_error[0]) {
		const uint8_t *base;
		uint64_t readable, want = FAMFS_LOG_OFFSET + famfs_fs_layout(f->bt.fs)->log_len;

		fsys_medium(f, &base, &readable);
		d->copy_len = readable < want ? readable : want;
		d->medium_size = famfs_fs_device(f->bt.fs)->size;
		d->copy = malloc(d->copy_len);
		if (!d->copy)
			return famfs_err_set(err, -ENOMEM, "no memory for a %" PRIu64 "-byte snapshot of the log",
					     d->copy_len);
		famfs_cache_invalidate(base, d->copy_len);
		memcpy(d->copy, base, d->copy_len);
		return 0;
	}
	r = famfs_device_open(j->device, 0, &d->dev, err);
	if (r < 0)
		return r;
	(void)medium_guard_add(d->dev->base, d->dev->size);
	return 0;
}
