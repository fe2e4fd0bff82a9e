/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The output of the administration verbs (admin-output.c). */
#ifndef FAMFSCTL_ADMIN_OUTPUT_H
#define FAMFSCTL_ADMIN_OUTPUT_H

#include <stdbool.h>

#include "client-admin.h"

/* A job that ended: its message and changes (text: failures are the caller's to report). */
void admin_print_job(const char *job, const char *target, const struct job_state *s, bool json);
/* --no-wait: the job that runs on. */
void admin_print_started(const char *job, const char *operation, const char *target, bool json);
void admin_print_attached(const char *device, const struct fsinfo *f, bool json);
void admin_print_detached(const char *target, const char *object, bool json);

#endif
