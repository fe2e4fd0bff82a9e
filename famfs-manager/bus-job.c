// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * org.famfs.Job1, one object per job below /org/famfs/Manager/job: its
 * properties, Cancel, Result, and the Completed signal.  Like the file
 * systems, the objects are served by a fallback vtable whose userdata is
 * the server; each call finds its job by the object path.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "escape.h"
#include "bus-errors.h"
#include "bus-internal.h"
#include "famfs/bus-api.h"
#include "job-work.h"
#include "logging.h"
#include "manager.h"

static struct job *call_job(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e)
{
	const char *obj = sd_bus_message_get_path(msg);
	struct job *j = obj ? manager_find_job(s->m, obj) : NULL;

	if (!j)
		sd_bus_error_setf(e, FAMFS_ERROR_NOT_FOUND, "%s is no longer a job", obj ? obj : "the job");
	return j;
}

static int prop_job(sd_bus *bus, const char *path, const char *iface, const char *prop,
		    sd_bus_message *reply, void *userdata, sd_bus_error *e)
{
	struct bus_server *s = userdata;
	struct job *j = manager_find_job(s->m, path);
	int r;

	if (!j)
		return sd_bus_error_setf(e, FAMFS_ERROR_NOT_FOUND, "%s is no longer a job", path);
	if (!strcmp(prop, "Operation"))
		return sd_bus_message_append(reply, "s", job_kind_name(j->kind));
	if (!strcmp(prop, "Device"))
		return bus_append_name(reply, j->device);
	if (!strcmp(prop, "FileSystem"))
		return sd_bus_message_append(reply, "o", j->fs_object ? j->fs_object : "/");
	if (!strcmp(prop, "Progress"))
		return sd_bus_message_append(reply, "d", j->finished && j->result >= 0 ? 1.0 : job_progress(j));
	if (!strcmp(prop, "Started"))
		return sd_bus_message_append(reply, "t", j->started_usec);
	if (!strcmp(prop, "Finished"))
		return sd_bus_message_append(reply, "t", j->finished ? j->finished_usec : (uint64_t)0);
	if (!strcmp(prop, "Running"))
		return sd_bus_message_append(reply, "b", j->running);
	if (!strcmp(prop, "Success"))
		return sd_bus_message_append(reply, "b", j->finished && j->result >= 0);
	if (!strcmp(prop, "ErrorName"))
		return sd_bus_message_append(reply, "s", j->finished && j->result < 0 ? bus_error_name(j->result) : "");
	if (!strcmp(prop, "Message"))
		return bus_append_name(reply, j->message ? j->message : "");
	if (!strcmp(prop, "Changes")) {
		r = sd_bus_message_open_container(reply, 'a', "s");
		for (size_t i = 0; r >= 0 && i < j->nchanges; i++)
			r = bus_append_name(reply, j->changes[i]);
		return r < 0 ? r : sd_bus_message_close_container(reply);
	}
	return sd_bus_error_setf(e, SD_BUS_ERROR_UNKNOWN_PROPERTY, "no property %s", prop);
}

static const char *job_action(enum job_kind k)
{
	switch (k) {
	case JOB_CHECK:
		return "org.famfs.manager.check";
	case JOB_FORMAT:
		return "org.famfs.manager.format";
	default:
		return "org.famfs.manager.repair";
	}
}

static int do_cancel(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e)
{
	struct job *j = call_job(msg, s, e);

	if (!j)
		return -ENOENT;
	if (j->finished)
		return sd_bus_error_setf(e, FAMFS_ERROR_NOT_FOUND, "job %u has already ended: %s", j->id,
					 j->message ? j->message : "");
	job_cancel(j);
	return sd_bus_reply_method_return(msg, "");
}

static int method_cancel(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	struct bus_server *s = userdata;
	struct job *j = call_job(msg, s, e);

	if (!j)
		return -ENOENT;
	/* Whoever may start a job of this kind may stop one. */
	return auth_check(s, msg, job_action(j->kind), do_cancel, e);
}

static int method_result(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	struct bus_server *s = userdata;
	struct job *j = call_job(msg, s, e);
	int r;

	if (!j)
		return -ENOENT;
	if (j->kind == JOB_FORMAT)
		return sd_bus_error_setf(e, FAMFS_ERROR_INVALID_ARGUMENT,
					 "job %u is a format: it has no findings (see Success and Message)", j->id);
	if (!j->finished)
		return sd_bus_error_setf(e, FAMFS_ERROR_NOT_FINISHED, "job %u is still running (%.0f%%)", j->id,
					 job_progress(j) * 100);
	if (!j->outcome.report)
		return bus_error_from_errno(e, j->result < 0 ? j->result : -EIO, j->message);
	r = sd_bus_message_new_method_return(msg, &reply);
	if (r >= 0)
		r = bus_append_check(reply, &j->outcome);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	return r;
}

#define JOB_PROP(name, sig) SD_BUS_PROPERTY(name, sig, prop_job, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE)
#define JOB_CONST(name, sig) SD_BUS_PROPERTY(name, sig, prop_job, 0, SD_BUS_VTABLE_PROPERTY_CONST)

const sd_bus_vtable bus_job_vtable[] = {
	SD_BUS_VTABLE_START(0),
	JOB_CONST("Operation", "s"),
	JOB_CONST("Device", "s"),
	JOB_CONST("FileSystem", "o"),
	JOB_CONST("Started", "t"),
	/* read when wanted: announcing every step would flood the bus */
	SD_BUS_PROPERTY("Progress", "d", prop_job, 0, 0),
	JOB_PROP("Running", "b"),
	JOB_PROP("Finished", "t"),
	JOB_PROP("Success", "b"),
	JOB_PROP("ErrorName", "s"),
	JOB_PROP("Message", "s"),
	JOB_PROP("Changes", "as"),
	SD_BUS_METHOD_WITH_ARGS("Cancel", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_cancel,
				SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Result", SD_BUS_NO_ARGS,
		SD_BUS_RESULT("s", verdict, "t", errors, "t", warnings, "a(ssxss)", findings),
		method_result, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_SIGNAL_WITH_ARGS("Completed", SD_BUS_ARGS("b", success, "s", message), 0),
	SD_BUS_VTABLE_END,
};

int bus_job_find(sd_bus *bus, const char *path, const char *iface, void *userdata, void **found,
		 sd_bus_error *e)
{
	struct bus_server *s = userdata;

	if (!manager_find_job(s->m, path))
		return 0;
	*found = s;
	return 1;
}

int bus_job_enumerate(sd_bus *bus, const char *path, void *userdata, char ***nodes, sd_bus_error *e)
{
	struct bus_server *s = userdata;
	size_t n = 0, k = 0;
	char **l;

	for (struct job *j = s->m->jobs; j; j = j->next)
		n++;
	l = calloc(n + 1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	for (struct job *j = s->m->jobs; j; j = j->next) {
		l[k] = strdup(j->object_path);
		if (!l[k]) {
			while (k > 0)
				free(l[--k]);
			free(l);
			return -ENOMEM;
		}
		k++;
	}
	*nodes = l;
	return 1;
}

void bus_job_added(struct bus_server *s, struct job *j)
{
	(void)sd_bus_emit_object_added(s->bus, j->object_path);
}

void bus_job_finished(struct bus_server *s, struct job *j)
{
	_cleanup_free_ char *msg = famfs_escape_dup(j->message ? j->message : "");
	int r;

	r = sd_bus_emit_properties_changed(s->bus, j->object_path, FAMFS_JOB_IFACE, "Running", "Finished",
					   "Success", "ErrorName", "Message", "Changes", NULL);
	if (r >= 0)
		r = sd_bus_emit_signal(s->bus, j->object_path, FAMFS_JOB_IFACE, "Completed", "bs", j->result >= 0,
				       msg ? msg : "");
	if (r < 0)
		log_warning_errno(r, "cannot announce the end of job %u: %m", j->id);
	bus_schedule_flush(s);
}

void bus_job_removed(struct bus_server *s, struct job *j)
{
	(void)sd_bus_emit_object_removed(s->bus, j->object_path);
}

int bus_reply_job(sd_bus_message *msg, struct bus_server *s, struct job *j, sd_bus_error *e)
{
	int r = manager_job_start(s->m, j);

	if (r < 0) {
		job_free(j);
		return bus_error_from_errno(e, r, "cannot start the job");
	}
	return sd_bus_reply_method_return(msg, "o", j->object_path);
}

int bus_start_check_job(sd_bus_message *msg, struct bus_server *s, struct fsys *f, int kind, sd_bus_error *e)
{
	struct famfs_err err = {0};
	struct job *j, *busy;
	int r;

	/* Checks run side by side; a format or repair runs alone on its device. */
	busy = manager_running_job(s->m, f->bt.device, true);
	if (busy)
		return sd_bus_error_setf(e, FAMFS_ERROR_JOB_RUNNING, "%s job %s is running on %s", job_kind_name(busy->kind),
					 busy->object_path, f->bt.device);
	j = job_new(kind, f->bt.device, f->object_path);
	if (!j)
		return -ENOMEM;
	r = job_check_prepare(j, f, &err);
	if (r < 0) {
		job_free(j);
		return bus_error_from_errno(e, r, err.msg);
	}
	return bus_reply_job(msg, s, j, e);
}
