/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * famfsctl's bus client for administering file systems: Attach, Detach,
 * Format, Repair, Check and the org.famfs.Job1 objects the last three
 * return.  Like client.h, nothing here prints.
 */
#ifndef FAMFSCTL_CLIENT_ADMIN_H
#define FAMFSCTL_CLIENT_ADMIN_H

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "client.h"

struct attach_request {
	const char *mount_point;    /* NULL: as configured */
	const char *backend;        /* NULL: as configured */
	bool read_only;
};

/* Attach: the new file system's object (the caller's to free). */
int client_attach(const char *device, const struct attach_request *req, char **ret_object, sd_bus_error *e);
int client_detach(const char *object, bool force, sd_bus_error *e);

/* Each starts a job and gives its object (the caller's to free). */
int client_format(const char *device, bool force, uint64_t log_len, char **ret_job, sd_bus_error *e);
int client_repair(const char *object, char **ret_job, sd_bus_error *e);
int client_start_check(const char *mountpoint, char **ret_job, sd_bus_error *e);

/* What a job says of itself. */
struct job_state {
	char *operation;
	bool running;
	bool success;
	double progress;
	char *error_name;
	char *message;
	char **changes;
};

void job_state_clear(struct job_state *s);
int client_job_state(const char *job, struct job_state *ret, sd_bus_error *e);
/*
 * Waits until @job ends; @progress (may be NULL) is called with the
 * fraction done every time it is polled.
 */
int client_job_wait(const char *job, void (*progress)(double fraction, void *userdata), void *userdata,
		    struct job_state *ret, sd_bus_error *e);
/* Job1.Result of a finished check or repair job. */
int client_job_result(const char *job, struct check_result *ret, sd_bus_error *e);

#endif
