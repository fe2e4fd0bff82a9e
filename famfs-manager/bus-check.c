// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A check's outcome on the bus (Job1.Result of a check or repair job): the
 * checker's verdict on the medium and, for a kernel mount, the mount
 * compared with the log file by file (job-check.c computes both).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-internal.h"
#include "check.h"
#include "job.h"

#define MAX_FINDINGS_REPLY 1000

static int append_finding(sd_bus_message *reply, const char *severity, const char *code,
			  int64_t index, const char *path, const char *message)
{
	int r;

	r = sd_bus_message_open_container(reply, 'r', "ssxss");
	if (r >= 0)
		r = sd_bus_message_append(reply, "ssx", severity, code, index);
	if (r >= 0)
		r = bus_append_name(reply, path);
	if (r >= 0)
		r = bus_append_name(reply, message);
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	return r;
}

int bus_append_check(sd_bus_message *reply, const struct check_outcome *o)
{
	const struct famfs_check_report *rep = o->report;
	size_t listed = 0;
	int r;

	r = sd_bus_message_append(reply, "stt", check_outcome_verdict(o), (uint64_t)check_outcome_errors(o),
				  (uint64_t)rep->by_severity[FAMFS_SEV_WARNING]);
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'a', "(ssxss)");
	for (size_t k = 0; r >= 0 && k < rep->nfindings && listed < MAX_FINDINGS_REPLY; k++, listed++) {
		const struct famfs_finding *x = &rep->findings[k];

		r = append_finding(reply, famfs_severity_name(x->severity), famfs_finding_name(x->code),
				   x->index, x->path, x->message);
	}
	for (size_t k = 0; r >= 0 && k < o->nproblems && listed < MAX_FINDINGS_REPLY; k++, listed++)
		r = append_finding(reply, "error", o->problems[k].code, o->problems[k].index, o->problems[k].path,
				   o->problems[k].message);
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	return r;
}
