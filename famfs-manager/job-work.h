/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What each kind of job does (job-check.c, job-format.c): a prepare step on
 * the loop that refuses what it must and sets the job's work and finish.
 */
#ifndef FAMFS_MANAGER_JOB_WORK_H
#define FAMFS_MANAGER_JOB_WORK_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "fsys.h"
#include "job.h"

/* Check or repair (@j->kind) of @f: takes the snapshot of its log. */
int job_check_prepare(struct job *j, struct fsys *f, struct famfs_err *err);

struct format_request {
	uint64_t log_len;
	bool force;
	const uint8_t *host_uuid;       /* the master the superblock names */
};

/*
 * Format of @j->device: opens it exclusively and applies mkfs.famfs's
 * rules (format.h) before anything is written.
 */
int job_format_prepare(struct job *j, const struct format_request *req, struct famfs_err *err);

#endif
