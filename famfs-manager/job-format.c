// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The format job: mkfs.famfs's rules (format.h) on a device opened
 * exclusively, then the log zeroed in steps, then the empty log header and
 * the superblock.  Until the superblock is written the job can be
 * cancelled: what it overwrote is put back from a copy taken before the
 * first write, so a cancelled format leaves the medium byte for byte as it
 * was.  A device that goes away mid-job (the medium guard turns its
 * mapping into zeros) ends it with an error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "job-work.h"
#include "medium-guard.h"
#include "omf.h"

/* The log is zeroed this much per step. */
#define FORMAT_STEP (1u << 20)

struct format_data {
	struct famfs_device *dev;
	uint64_t log_len;
	uint8_t host_uuid[16];
	uint8_t *saved;                 /* [0, FAMFS_LOG_OFFSET + log_len) as it was */
	uint64_t saved_len;
};

static void free_format_data(struct job *j)
{
	struct format_data *d = j->data;

	if (d && d->dev) {
		medium_guard_remove(d->dev->base);
		famfs_device_close(d->dev);
	}
	if (d)
		free(d->saved);
	free(d);
	j->data = NULL;
}

static bool format_lost(struct job *j, struct format_data *d)
{
	if (!medium_guard_lost(d->dev->base))
		return false;
	j->result = famfs_err_set(&j->err, -ENXIO, "%s went away during the format", j->device);
	return true;
}

static void format_restore(struct job *j, struct format_data *d, uint64_t written)
{
	memcpy(d->dev->base + FAMFS_LOG_OFFSET, d->saved + FAMFS_LOG_OFFSET, written);
	famfs_persist(d->dev, d->dev->base + FAMFS_LOG_OFFSET, written);
}

static void format_work(struct job *j)
{
	struct format_data *d = j->data;
	uint8_t *log = d->dev->base + FAMFS_LOG_OFFSET;
	uint64_t done = 0;

	memcpy(d->saved, d->dev->base, d->saved_len);
	if (format_lost(j, d))
		return;
	while (done < d->log_len) {
		uint64_t n = d->log_len - done < FORMAT_STEP ? d->log_len - done : FORMAT_STEP;

		job_step_pause();
		if (job_cancelled(j)) {
			format_restore(j, d, done);
			j->result = famfs_err_set(&j->err, -ECANCELED,
						  "cancelled after %" PRIu64 " of %" PRIu64 " log bytes; the medium is as it was",
						  done, d->log_len);
			return;
		}
		memset(log + done, 0, n);
		famfs_persist(d->dev, log + done, n);
		if (format_lost(j, d))
			return;
		done += n;
		job_set_progress(j, 0.95 * (double)done / (double)d->log_len);
	}
	/* Past here nothing is put back: the superblock makes it a file system. */
	famfs_format_log(d->dev, d->log_len);
	famfs_format_superblock(d->dev, d->log_len, d->host_uuid, j->device);
	if (format_lost(j, d))
		return;
	job_set_progress(j, 1);
	j->result = 0;
}

static void format_finish(struct manager *m, struct job *j)
{
	struct format_data *d = j->data;

	if (j->result >= 0 && asprintf(&j->message, "formatted %s: %" PRIu64 "-byte log, %" PRIu64 " bytes",
				       j->device, d->log_len, d->dev->size) < 0)
		j->message = NULL;
	/* The exclusive open ends with the job, not when it is pruned. */
	free_format_data(j);
}

int job_format_prepare(struct job *j, const struct format_request *req, struct famfs_err *err)
{
	struct format_data *d = calloc(1, sizeof(*d));
	int r;

	if (!d)
		return -ENOMEM;
	j->data = d;
	j->free_data = free_format_data;
	j->work = format_work;
	j->finish = format_finish;
	d->log_len = req->log_len;
	memcpy(d->host_uuid, req->host_uuid, sizeof(d->host_uuid));
	r = famfs_device_open(j->device, FAMFS_DEVICE_WRITE | FAMFS_DEVICE_EXCL, &d->dev, err);
	if (r < 0)
		return r;
	(void)medium_guard_add(d->dev->base, d->dev->size);
	r = famfs_format_refuse(d->dev, req->log_len, req->force, err);
	if (r < 0)
		return r;
	d->saved_len = FAMFS_LOG_OFFSET + req->log_len;
	d->saved = malloc(d->saved_len);
	if (!d->saved)
		return famfs_err_set(err, -ENOMEM, "no memory to keep the %" PRIu64 " bytes a format overwrites",
				     d->saved_len);
	return 0;
}
