/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How a device is attached, from the configuration: which backend serves
 * it (and whether the view backend may stand in when the kernel's fails),
 * whether it is mounted (AutoMount) and where.  The plan is made once the
 * superblock names the file system; the backend steps then run through
 * attach_backend_prepare() and attach_backend_attach().
 */
#ifndef FAMFS_MANAGER_ATTACH_POLICY_H
#define FAMFS_MANAGER_ATTACH_POLICY_H

#include <stdbool.h>

#include "backend.h"
#include "error.h"
#include "manager-config.h"

struct attach_policy {
	const struct manager_config *cfg;
	bool module_tried;        /* kernel-module was loaded once (or failed to) */
};

struct attach_plan {
	const struct backend_ops *backend;
	bool fallback_view;       /* auto: the view backend when the kernel's fails */
	bool mount;               /* AutoMount */
	char *mountpoint;         /* NULL: the default under the mount root */
};

/* What an operator's Attach asks for on top of the configuration. */
struct attach_override {
	const char *mountpoint;   /* NULL: as configured */
	int backend;              /* -1: as configured, else enum backend_choice */
	bool read_only;           /* attach as a client even on the master */
};

/*
 * @uuid may be "" (unknown); @is_image: a regular file, not a device.
 * With @ov (an explicit attach) the file system is mounted whatever
 * AutoMount says.
 */
void attach_policy_plan(struct attach_policy *p, const char *uuid, bool is_image,
			const struct attach_override *ov, struct attach_plan *ret);
void attach_plan_done(struct attach_plan *plan);

/* Sets the backend and the mount point ("" when not mounted) of @t; takes the plan's mount point. */
int attach_plan_apply(struct backend_target *t, struct attach_plan *plan);

/*
 * backend->prepare (before the replay) and backend->attach (after it),
 * each falling back to the view backend when the plan allows.
 */
int attach_backend_prepare(struct backend_target *t, const struct attach_plan *plan, struct famfs_err *err);
int attach_backend_attach(struct backend_target *t, const struct attach_plan *plan, struct famfs_err *err);

#endif
