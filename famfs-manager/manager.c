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

#include "cleanup.h"
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
	while (m->fsys) {
		struct fsys *n = m->fsys->next;

		fsys_free(m->fsys);
		m->fsys = n;
	}
	m->nfsys = 0;
	config_free(&m->cfg);
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
static int attach_one(struct manager *m, const char *device, struct fsys **ret)
{
	struct fsys_attach_args a = {
		.device = device,
		.host_uuid = m->have_host_uuid ? m->host_uuid : NULL,
		.grace_ms = m->cfg.grace_ms,
		.policy = &m->policy,
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
	struct fsys *old = manager_find_by_device(m, device), *f = NULL;
	int r;

	/* Out of the set while the new one is built: its mount point is free again. */
	if (old)
		unlink_fsys(m, old);
	r = attach_one(m, device, &f);
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
		log_attached(f, how);
	}
	manager_changed(m, false);
	if (ret)
		*ret = f;
	return 0;
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
