// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * famfsctl's calls that administer file systems, and the jobs they start:
 * a job is polled (its Running and Progress properties) until it ends,
 * which needs no signal subscription that could miss an early end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client-admin.h"
#include "famfs/bus-api.h"

#define JOB_POLL_NSEC (100 * 1000000L)
/* Attach replays the whole log before it answers. */
#define ATTACH_TIMEOUT_USEC (600ULL * 1000000)

static int read_object(sd_bus_message *reply, char **ret)
{
	const char *o;
	int r;

	r = sd_bus_message_read(reply, "o", &o);
	if (r < 0)
		return r;
	*ret = strdup(o);
	return *ret ? 0 : -ENOMEM;
}

int client_attach(const char *device, const struct attach_request *req, char **ret_object, sd_bus_error *e)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
	sd_bus *bus = client_bus();
	int r;

	r = sd_bus_message_new_method_call(bus, &call, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE,
					   "Attach");
	if (r >= 0)
		r = sd_bus_message_append(call, "s", device);
	if (r >= 0)
		r = sd_bus_message_open_container(call, 'a', "{sv}");
	if (r >= 0 && req->mount_point)
		r = sd_bus_message_append(call, "{sv}", "mount_point", "s", req->mount_point);
	if (r >= 0 && req->backend)
		r = sd_bus_message_append(call, "{sv}", "backend", "s", req->backend);
	if (r >= 0 && req->read_only)
		r = sd_bus_message_append(call, "{sv}", "read_only", "b", 1);
	if (r >= 0)
		r = sd_bus_message_close_container(call);
	if (r >= 0)
		r = sd_bus_call(bus, call, ATTACH_TIMEOUT_USEC, e, &reply);
	if (r < 0)
		return r;
	return read_object(reply, ret_object);
}

int client_detach(const char *object, bool force, sd_bus_error *e)
{
	if (force)
		return sd_bus_call_method(client_bus(), FAMFS_BUS_NAME, object, FAMFS_FS_IFACE, "Detach", e, NULL,
					  "a{sv}", 1, "force", "b", 1);
	return sd_bus_call_method(client_bus(), FAMFS_BUS_NAME, object, FAMFS_FS_IFACE, "Detach", e, NULL, "a{sv}",
				  0);
}

int client_format(const char *device, bool force, uint64_t log_len, char **ret_job, sd_bus_error *e)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
	sd_bus *bus = client_bus();
	int r;

	r = sd_bus_message_new_method_call(bus, &call, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE,
					   "Format");
	if (r >= 0)
		r = sd_bus_message_append(call, "s", device);
	if (r >= 0)
		r = sd_bus_message_open_container(call, 'a', "{sv}");
	if (r >= 0 && force)
		r = sd_bus_message_append(call, "{sv}", "force", "b", 1);
	if (r >= 0 && log_len)
		r = sd_bus_message_append(call, "{sv}", "log_len", "t", log_len);
	if (r >= 0)
		r = sd_bus_message_close_container(call);
	if (r >= 0)
		r = sd_bus_call(bus, call, 0, e, &reply);
	if (r < 0)
		return r;
	return read_object(reply, ret_job);
}

int client_repair(const char *object, char **ret_job, sd_bus_error *e)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	int r;

	r = sd_bus_call_method(client_bus(), FAMFS_BUS_NAME, object, FAMFS_FS_IFACE, "Repair", e, &reply, "a{sv}",
			       0);
	if (r < 0)
		return r;
	return read_object(reply, ret_job);
}

int client_start_check(const char *mountpoint, char **ret_job, sd_bus_error *e)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	int r;

	r = sd_bus_call_method(client_bus(), FAMFS_BUS_NAME, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Check", e,
			       &reply, "sa{sv}", mountpoint, 0);
	if (r < 0)
		return r;
	return read_object(reply, ret_job);
}

void job_state_clear(struct job_state *s)
{
	free(s->operation);
	free(s->error_name);
	free(s->message);
	if (s->changes)
		for (char **c = s->changes; *c; c++)
			free(*c);
	free(s->changes);
	*s = (struct job_state){ 0 };
}

static int get_s(const char *job, const char *prop, char **ret, sd_bus_error *e)
{
	return sd_bus_get_property_string(client_bus(), FAMFS_BUS_NAME, job, FAMFS_JOB_IFACE, prop, e, ret);
}

int client_job_state(const char *job, struct job_state *ret, sd_bus_error *e)
{
	_cleanup_(job_state_clear) struct job_state s = { 0 };
	sd_bus *bus = client_bus();
	int running = 0, success = 0, r;

	r = sd_bus_get_property_trivial(bus, FAMFS_BUS_NAME, job, FAMFS_JOB_IFACE, "Running", e, 'b', &running);
	if (r >= 0)
		r = sd_bus_get_property_trivial(bus, FAMFS_BUS_NAME, job, FAMFS_JOB_IFACE, "Success", e, 'b', &success);
	if (r >= 0)
		r = sd_bus_get_property_trivial(bus, FAMFS_BUS_NAME, job, FAMFS_JOB_IFACE, "Progress", e, 'd',
						&s.progress);
	if (r >= 0)
		r = get_s(job, "Operation", &s.operation, e);
	if (r >= 0)
		r = get_s(job, "ErrorName", &s.error_name, e);
	if (r >= 0)
		r = get_s(job, "Message", &s.message, e);
	if (r >= 0)
		r = sd_bus_get_property_strv(bus, FAMFS_BUS_NAME, job, FAMFS_JOB_IFACE, "Changes", e, &s.changes);
	if (r < 0)
		return r;
	s.running = running;
	s.success = success;
	*ret = s;
	s = (struct job_state){ 0 };
	return 0;
}

int client_job_wait(const char *job, void (*progress)(double fraction, void *userdata), void *userdata,
		    struct job_state *ret, sd_bus_error *e)
{
	for (;;) {
		struct job_state s = { 0 };
		int r = client_job_state(job, &s, e);

		if (r < 0)
			return r;
		if (!s.running) {
			*ret = s;
			return 0;
		}
		if (progress)
			progress(s.progress, userdata);
		job_state_clear(&s);
		(void)nanosleep(&(struct timespec){ 0, JOB_POLL_NSEC }, NULL);
	}
}

int client_job_result(const char *job, struct check_result *ret, sd_bus_error *e)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	int r;

	r = sd_bus_call_method(client_bus(), FAMFS_BUS_NAME, job, FAMFS_JOB_IFACE, "Result", e, &reply, "");
	if (r < 0)
		return r;
	return client_read_check(reply, ret);
}
