// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The set of attached file systems and the one attach path.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <uuid/uuid.h>

#include "cleanup.h"
#include "famfs/bus-api.h"
#include "escape.h"
#include "logging.h"
#include "manager.h"
#include "path.h"

void manager_init(struct manager *m)
{
	memset(m, 0, sizeof(*m));
	config_init(&m->cfg);
	m->policy.cfg = &m->cfg;
}

void manager_done(struct manager *m)
{
	manager_jobs_stop(m);
	while (m->fsys) {
		struct fsys *n = m->fsys->next;

		fsys_free(m->fsys);
		m->fsys = n;
	}
	m->nfsys = 0;
	config_free(&m->cfg);
	config_free(&m->source.overlay);
	free(m->source.path);
}

void manager_set_events(struct manager *m, const struct manager_events *ev, void *userdata)
{
	m->events = ev;
	m->events_data = userdata;
}

void manager_changed(struct manager *m, bool now)
{
	if (m->events && m->events->changed)
		m->events->changed(m->events_data, now);
}

static void tell_added(struct manager *m, struct fsys *f)
{
	if (m->events && m->events->fs_added)
		m->events->fs_added(m->events_data, f);
}

static void tell_removed(struct manager *m, struct fsys *f)
{
	if (m->events && m->events->fs_removed)
		m->events->fs_removed(m->events_data, f);
}

struct fsys *manager_find_by_device(struct manager *m, const char *device)
{
	for (struct fsys *f = m->fsys; f; f = f->next)
		if (!strcmp(f->bt.device, device))
			return f;
	return NULL;
}

struct fsys *manager_find_by_path(struct manager *m, const char *object_path)
{
	for (struct fsys *f = m->fsys; f; f = f->next)
		if (strcmp(f->object_path, object_path) == 0)
			return f;
	return NULL;
}

size_t manager_count_healthy(const struct manager *m)
{
	size_t n = 0;

	for (const struct fsys *f = m->fsys; f; f = f->next)
		n += f->health == HEALTH_OK;
	return n;
}

static void unlink_fsys(struct manager *m, struct fsys *f)
{
	for (struct fsys **p = &m->fsys; *p; p = &(*p)->next) {
		if (*p == f) {
			*p = f->next;
			f->next = NULL;
			m->nfsys--;
			return;
		}
	}
}

static void append_fsys(struct manager *m, struct fsys *f)
{
	struct fsys **p = &m->fsys;

	while (*p)
		p = &(*p)->next;
	*p = f;
	f->next = NULL;
	m->nfsys++;
}

/* The default mount point: the device's name under the mount root, made unique. */
static char *pick_mountpoint(struct manager *m, const char *device)
{
	const char *b = strrchr(device, '/');
	char name[128], *mp;
	size_t n = 0;

	b = b ? b + 1 : device;
	for (; *b && n < sizeof(name) - 8; b++)
		name[n++] = (isalnum((unsigned char)*b) || *b == '.' || *b == '-' || *b == '_') ? *b : '_';
	name[n] = '\0';
	if (n > 4 && strcmp(name + n - 4, ".img") == 0)
		name[n -= 4] = '\0';
	if (n == 0 || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		snprintf(name, sizeof(name), "fs");
	for (unsigned k = 0; k <= MANAGER_MAX_DEVICES; k++) {
		bool taken = false;
		int r;

		if (k == 0)
			r = asprintf(&mp, "%s/%s", m->cfg.mount_root, name);
		else
			r = asprintf(&mp, "%s/%s-%u", m->cfg.mount_root, name, k);
		if (r < 0)
			return NULL;
		for (struct fsys *o = m->fsys; o; o = o->next)
			taken |= strcmp(o->bt.mountpoint, mp) == 0;
		if (!taken)
			return mp;
		free(mp);
	}
	return NULL;
}

static void log_attached(const struct fsys *f, const char *how)
{
	_cleanup_free_ char *reason = NULL;

	/* Reasons are kept escaped, as the bus shows them; the log escapes the whole line itself. */
	if (f->nreasons > 0) {
		size_t n = strlen(f->reasons[0]) + 1;

		reason = malloc(n);
		if (reason && famfs_unescape(f->reasons[0], reason, n, NULL) < 0)
			snprintf(reason, n, "%s", f->reasons[0]);
	}
	log_about(f->health == HEALTH_OK ? LOG_INFO : LOG_WARNING, f->bt.device,
		  "%s %s at %s, backend %s, %s, health %s%s%s", how,
		  f->bt.uuid[0] ? f->bt.uuid : "(no uuid)", f->bt.mountpoint[0] ? f->bt.mountpoint : "(not mounted)",
		  f->bt.ops->name, f->bt.fs ? fsys_role(f) : "not usable", health_name(f->health),
		  reason ? ": " : "", reason ? reason : "");
}

/* Builds the file system on @device without adding it; -EEXIST when another device already serves it. */
static int attach_one(struct manager *m, const char *device, const struct attach_override *ov,
		      struct fsys **ret)
{
	struct fsys_attach_args a = {
		.device = device,
		.host_uuid = m->have_host_uuid ? m->host_uuid : NULL,
		.grace_ms = m->cfg.grace_ms,
		.policy = &m->policy,
		.override = ov,
		.defer_replay = m->starting,
	};
	struct fsys *f, *dup;
	char *mp;
	int r;

	mp = pick_mountpoint(m, device);
	if (!mp)
		return log_about_errno(LOG_ERR, ENOMEM, device, "cannot attach: %m");
	a.mountpoint = mp;
	r = fsys_attach(&a, &f);
	free(mp);
	if (r < 0)
		return log_about_errno(LOG_ERR, r, device, "cannot attach: %m");
	dup = manager_find_by_path(m, f->object_path);
	if (dup) {
		log_about(LOG_WARNING, device, "file system %s is already attached from %s; ignoring this device",
			  f->bt.uuid, dup->bt.device);
		fsys_free(f);
		return -EEXIST;
	}
	*ret = f;
	return 0;
}

int manager_attach(struct manager *m, const char *device, const char *how, struct fsys **ret)
{
	return manager_attach_with(m, device, how, NULL, ret);
}

int manager_attach_with(struct manager *m, const char *device, const char *how,
			const struct attach_override *ov, struct fsys **ret)
{
	struct fsys *old = manager_find_by_device(m, device), *f = NULL;
	int r;

	/* Out of the set while the new one is built: its mount point is free again. */
	if (old)
		unlink_fsys(m, old);
	r = attach_one(m, device, ov, &f);
	if (r < 0) {
		if (old)
			append_fsys(m, old);
		return r;
	}
	if (old && !strcmp(old->object_path, f->object_path)) {
		/* The same object comes back: one struct replaces the other. */
		fsys_free(old);
		append_fsys(m, f);
		f->dirty = true;
		log_attached(f, "re-attached");
	} else {
		if (old) {
			/* Another file system on this device now: the old object goes (it is told while still found). */
			append_fsys(m, old);
			tell_removed(m, old);
			unlink_fsys(m, old);
			fsys_free(old);
		}
		append_fsys(m, f);
		tell_added(m, f);
		/* One waiting for manager_finish_start says how it went once it knows. */
		if (!fsys_attach_waiting(f))
			log_attached(f, how);
	}
	manager_changed(m, false);
	if (ret)
		*ret = f;
	return 0;
}

void manager_finish_start(struct manager *m)
{
	for (struct fsys *f = m->fsys; f; f = f->next) {
		if (!fsys_attach_waiting(f))
			continue;
		fsys_finish_attach(f);
		log_attached(f, "attached");
	}
	m->starting = false;
	manager_changed(m, false);
}

void manager_detach(struct manager *m, struct fsys *f, const char *reason)
{
	fsys_detach(f, reason);
	manager_changed(m, false);
}

int manager_resolve(struct manager *m, const char *escaped, struct fsys **ret_f,
		    char *ret_rel, size_t rel_size, struct famfs_err *err)
{
	struct fsys *best = NULL;
	size_t best_len = 0;
	char abspath[PATH_MAX];
	int r;

	r = famfs_unescape(escaped, abspath, sizeof(abspath), err);
	if (r < 0)
		return r;
	if (abspath[0] != '/')
		return famfs_err_set(err, -EINVAL, "path \"%s\" is not absolute", abspath);
	for (struct fsys *f = m->fsys; f; f = f->next) {
		size_t n = strlen(f->bt.mountpoint);

		if (strncmp(abspath, f->bt.mountpoint, n) == 0 && (abspath[n] == '\0' || abspath[n] == '/') &&
		    n > best_len) {
			best = f;
			best_len = n;
		}
	}
	if (!best)
		return famfs_err_set(err, -ENODEV, "\"%s\" is not under the mount point of any attached famfs file system (mount root %s)",
				     abspath, m->cfg.mount_root);
	*ret_f = best;
	/* The mount point itself, with any trailing slashes, is the root. */
	for (const char *p = abspath + best_len;; p++) {
		if (*p == '\0') {
			if (rel_size > 0)
				ret_rel[0] = '\0';
			return 0;
		}
		if (*p != '/')
			break;
	}
	return famfs_path_relative(best->bt.mountpoint, abspath, ret_rel, rel_size, err);
}

void manager_remove(struct manager *m, struct fsys *f, const char *why)
{
	log_about(LOG_INFO, f->bt.device, "detached %s%s%s: %s", f->bt.uuid[0] ? f->bt.uuid : "(no uuid)",
		  f->bt.mountpoint[0] ? " from " : "", f->bt.mountpoint, why);
	tell_removed(m, f);
	unlink_fsys(m, f);
	fsys_free(f);
	manager_changed(m, false);
}

bool manager_same_device(const char *a, const char *b)
{
	struct stat sa, sb;

	if (!strcmp(a, b))
		return true;
	if (stat(a, &sa) < 0 || stat(b, &sb) < 0)
		return false;
	if ((S_ISBLK(sa.st_mode) && S_ISBLK(sb.st_mode)) || (S_ISCHR(sa.st_mode) && S_ISCHR(sb.st_mode)))
		return sa.st_rdev == sb.st_rdev;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

struct fsys *manager_find_device(struct manager *m, const char *device)
{
	for (struct fsys *f = m->fsys; f; f = f->next)
		if (manager_same_device(f->bt.device, device))
			return f;
	return NULL;
}

/* ---- configuration ---- */

int manager_load_config(struct manager *m, struct manager_config *ret, struct famfs_err *err)
{
	struct config_source *src = &m->source;
	int r;

	config_init(ret);
	r = config_load(ret, src->path, src->must_exist, err);
	if (r >= 0) {
		r = config_apply_overlay(ret, &src->overlay, src->poll_given, src->grace_given, src->no_polkit);
		if (r < 0)
			famfs_err_set(err, r, "out of memory");
	}
	if (r < 0)
		config_free(ret);
	return r;
}

static bool has_device(const struct manager_config *c, const char *device)
{
	for (size_t i = 0; i < c->ndevices; i++)
		if (!strcmp(c->devices[i], device))
			return true;
	return false;
}

static bool same_string(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* What a reload cannot change: kept from the running configuration. */
static int keep_restart_settings(struct manager_config *n, const struct manager_config *old)
{
	if (!same_string(n->mount_root, old->mount_root))
		log_warning("reload: mount-root %s needs a restart; keeping %s", n->mount_root, old->mount_root);
	if (n->poll_ms != old->poll_ms)
		log_warning("reload: poll-interval %llu needs a restart; keeping %llu", (unsigned long long)n->poll_ms,
			    (unsigned long long)old->poll_ms);
	if (n->udev != old->udev || !same_string(n->udev_source, old->udev_source))
		log_warning("reload: the udev settings need a restart; keeping them");
	if (!same_string(n->system_uuid_file, old->system_uuid_file))
		log_warning("reload: system-uuid-file needs a restart; keeping it");
	free(n->mount_root);
	free(n->udev_source);
	free(n->system_uuid_file);
	n->mount_root = old->mount_root ? strdup(old->mount_root) : NULL;
	n->udev_source = old->udev_source ? strdup(old->udev_source) : NULL;
	n->system_uuid_file = old->system_uuid_file ? strdup(old->system_uuid_file) : NULL;
	n->poll_ms = old->poll_ms;
	n->udev = old->udev;
	if ((old->mount_root && !n->mount_root) || (old->udev_source && !n->udev_source) ||
	    (old->system_uuid_file && !n->system_uuid_file))
		return -ENOMEM;
	return 0;
}

int manager_reload(struct manager *m, struct famfs_err *err)
{
	struct manager_config n, old;
	size_t attached = 0, detached = 0;
	int r;

	r = manager_load_config(m, &n, err);
	if (r < 0) {
		famfs_err_prefix(err, "reload refused, the running configuration is kept");
		log_warning("%s", err->msg);
		return r;
	}
	r = keep_restart_settings(&n, &m->cfg);
	if (r < 0) {
		config_free(&n);
		return famfs_err_set(err, r, "reload: out of memory");
	}
	old = m->cfg;
	m->cfg = n;
	/* Devices the configuration no longer names go; a job on one keeps it until the job ends. */
	for (size_t i = 0; i < old.ndevices; i++) {
		struct fsys *f;

		if (has_device(&m->cfg, old.devices[i]))
			continue;
		f = manager_find_by_device(m, old.devices[i]);
		if (!f)
			continue;
		if (manager_running_job(m, f->bt.device, false)) {
			log_about(LOG_WARNING, f->bt.device, "reload: a job is running on it; not detached");
			continue;
		}
		manager_remove(m, f, "no longer in the configuration");
		detached++;
	}
	for (size_t i = 0; i < m->cfg.ndevices; i++) {
		if (has_device(&old, m->cfg.devices[i]) || manager_find_device(m, m->cfg.devices[i]))
			continue;
		if (manager_attach(m, m->cfg.devices[i], "attached", NULL) >= 0)
			attached++;
	}
	config_free(&old);
	log_info("configuration reloaded: %zu device(s) attached, %zu detached", attached, detached);
	manager_changed(m, false);
	return 0;
}

int manager_set_automount(struct manager *m, const char *uuid, bool automount, struct famfs_err *err)
{
	struct fs_rule *rule;
	uuid_t u;
	char canon[37];

	if (!uuid || !uuid[0]) {
		m->cfg.automount = automount;
		log_info("AutoMount %s for file systems without a rule of their own", automount ? "on" : "off");
		return 0;
	}
	if (uuid_parse(uuid, u) < 0)
		return famfs_err_set(err, -EINVAL, "\"%s\" is not a file system UUID", uuid);
	uuid_unparse_lower(u, canon);
	rule = config_rule_add(&m->cfg, canon);
	if (!rule)
		return famfs_err_set(err, -E2BIG, "too many file system rules (at most %d)", MANAGER_MAX_RULES);
	rule->automount = automount;
	log_info("AutoMount %s for file system %s", automount ? "on" : "off", canon);
	return 0;
}

/* ---- jobs ---- */

static void tell_job(struct manager *m, struct job *j, int what)
{
	if (!m->events)
		return;
	if (what == 0 && m->events->job_added)
		m->events->job_added(m->events_data, j);
	else if (what == 1 && m->events->job_finished)
		m->events->job_finished(m->events_data, j);
	else if (what == 2 && m->events->job_removed)
		m->events->job_removed(m->events_data, j);
}

/* Frees the oldest finished jobs beyond JOB_KEEP_FINISHED. */
static void prune_jobs(struct manager *m)
{
	size_t finished = 0;

	for (struct job *j = m->jobs; j; j = j->next)
		finished += j->finished;
	if (m->jobs_stopping)
		return;
	for (struct job **p = &m->jobs; *p && finished > JOB_KEEP_FINISHED;) {
		struct job *j = *p;

		if (!j->finished) {
			p = &j->next;
			continue;
		}
		tell_job(m, j, 2);
		*p = j->next;
		job_free(j);
		finished--;
	}
}

int manager_job_start(struct manager *m, struct job *j)
{
	struct job **p = &m->jobs;
	int r;

	j->id = ++m->next_job_id;
	r = asprintf(&j->object_path, "%s/%u", FAMFS_JOB_PATH_PREFIX, j->id);
	if (r < 0) {
		j->object_path = NULL;
		return -ENOMEM;
	}
	r = job_start(m, j);
	if (r < 0)
		return r;
	while (*p)
		p = &(*p)->next;
	*p = j;
	log_about(LOG_INFO, j->device, "%s job %u started", job_kind_name(j->kind), j->id);
	tell_job(m, j, 0);
	return 0;
}

void manager_job_finished(struct manager *m, struct job *j)
{
	tell_job(m, j, 1);
	prune_jobs(m);
}

struct job *manager_find_job(struct manager *m, const char *object_path)
{
	for (struct job *j = m->jobs; j; j = j->next)
		if (!strcmp(j->object_path, object_path))
			return j;
	return NULL;
}

struct job *manager_running_job(struct manager *m, const char *device, bool mutating)
{
	for (struct job *j = m->jobs; j; j = j->next)
		if (j->running && (!mutating || job_kind_mutates(j->kind)) && manager_same_device(j->device, device))
			return j;
	return NULL;
}

void manager_jobs_stop(struct manager *m)
{
	m->jobs_stopping = true;
	for (struct job *j = m->jobs; j; j = j->next)
		job_wait(j);
	while (m->jobs) {
		struct job *n = m->jobs->next;

		job_free(m->jobs);
		m->jobs = n;
	}
}
