// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The attach plan: the [manager] defaults, a [filesystem UUID] rule on
 * top, and famfs.ko's presence (loaded on first need when kernel-module
 * says so) decide the backend, AutoMount and the mount point.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attach-policy.h"
#include "kernel.h"
#include "logging.h"

static bool kernel_usable(struct attach_policy *p)
{
	struct famfs_err err = {0};

	if (kernel_famfs_available(""))
		return true;
	if (!p->cfg->kernel_module || p->module_tried)
		return false;
	p->module_tried = true;
	if (kernel_famfs_load(p->cfg->kernel_module, &err) < 0) {
		log_warning("%s; using the view backend", err.msg);
		return false;
	}
	log_info("loaded %s", p->cfg->kernel_module);
	return kernel_famfs_available("");
}

void attach_policy_plan(struct attach_policy *p, const char *uuid, bool is_image,
			const struct attach_override *ov, struct attach_plan *ret)
{
	const struct fs_rule *rule = uuid && uuid[0] ? config_rule(p->cfg, uuid) : NULL;
	enum backend_choice b = p->cfg->backend;

	memset(ret, 0, sizeof(*ret));
	ret->mount = p->cfg->automount;
	if (rule && rule->automount >= 0)
		ret->mount = rule->automount;
	if (rule && rule->backend >= 0)
		b = (enum backend_choice)rule->backend;
	if (rule && rule->mountpoint)
		ret->mountpoint = strdup(rule->mountpoint);
	if (ov) {
		ret->mount = true;
		if (ov->backend >= 0)
			b = (enum backend_choice)ov->backend;
		if (ov->mountpoint) {
			free(ret->mountpoint);
			ret->mountpoint = strdup(ov->mountpoint);
		}
	}
	ret->backend = &backend_view;
	if (!ret->mount)
		return;
	/* An image file cannot be mounted by famfs.ko: it wants a device. */
	if (b == BACKEND_KERNEL || (b == BACKEND_AUTO && !is_image && kernel_usable(p))) {
		if (b == BACKEND_KERNEL)
			(void)kernel_usable(p);
		ret->backend = &backend_kernel;
		ret->fallback_view = b == BACKEND_AUTO;
	}
}

void attach_plan_done(struct attach_plan *plan)
{
	free(plan->mountpoint);
	plan->mountpoint = NULL;
}

int attach_plan_apply(struct backend_target *t, struct attach_plan *plan)
{
	char *mp = NULL;

	t->ops = plan->backend;
	if (!plan->mount)
		mp = strdup("");
	else if (plan->mountpoint)
		mp = plan->mountpoint;
	plan->mountpoint = NULL;
	if (!plan->mount || mp) {
		if (!mp)
			return -ENOMEM;
		free(t->mountpoint);
		t->mountpoint = mp;
	}
	return 0;
}

/* After a failed backend step: the view backend instead, when the plan allows. */
static bool fall_back_to_view(struct backend_target *t, const struct attach_plan *plan, int r,
			      struct famfs_err *err)
{
	if (r >= 0 || !plan->fallback_view || t->ops == &backend_view)
		return false;
	log_about(LOG_WARNING, t->mountpoint, "kernel backend: %s; using the view backend", err->msg);
	t->ops = &backend_view;
	memset(err, 0, sizeof(*err));
	return true;
}

int attach_backend_prepare(struct backend_target *t, const struct attach_plan *plan, struct famfs_err *err)
{
	int r;

	if (!t->ops->prepare)
		return 0;
	r = t->ops->prepare(t, err);
	return fall_back_to_view(t, plan, r, err) ? 0 : r;
}

int attach_backend_attach(struct backend_target *t, const struct attach_plan *plan, struct famfs_err *err)
{
	int r;

	if (!t->ops->attach)
		return 0;
	r = t->ops->attach(t, err);
	if (!fall_back_to_view(t, plan, r, err))
		return r;
	return t->ops->attach ? t->ops->attach(t, err) : 0;
}
