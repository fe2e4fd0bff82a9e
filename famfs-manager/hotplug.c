// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Hotplug: udev events → attach, automount, detach, re-attach.  The
 * device's first bytes are read here (like famfs_id) to tell famfs from
 * everything else; udev's ID_FS_TYPE is only a hint, since a coldplugged
 * device may never have been probed by our rules.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "hotplug.h"
#include "manager.h"
#include "superblock.h"

void hotplug_config_init(struct hotplug_config *c)
{
	memset(c, 0, sizeof(*c));
	c->udev = true;
	c->automount = true;
	c->backend = BACKEND_AUTO;
}

void hotplug_config_free(struct hotplug_config *c)
{
	free(c->udev_source);
	free(c->kernel_module);
	for (size_t i = 0; i < c->nrules; i++)
		free(c->rules[i].mountpoint);
	memset(c, 0, sizeof(*c));
}

static struct fs_rule *rule_for(struct hotplug_config *c, const char *uuid, bool create)
{
	for (size_t i = 0; i < c->nrules; i++)
		if (!strcmp(c->rules[i].uuid, uuid))
			return &c->rules[i];
	if (!create || c->nrules >= HOTPLUG_MAX_RULES)
		return NULL;
	memset(&c->rules[c->nrules], 0, sizeof(c->rules[0]));
	snprintf(c->rules[c->nrules].uuid, sizeof(c->rules[0].uuid), "%s", uuid);
	c->rules[c->nrules].automount = -1;
	c->rules[c->nrules].backend = -1;
	return &c->rules[c->nrules++];
}

/* A mount point: absolute, no "." or ".." component, no doubled slashes. */
static bool mountpoint_ok(const char *p)
{
	size_t n = strlen(p);

	if (p[0] != '/' || n < 2 || n >= 1024 || p[n - 1] == '/')
		return false;
	if (strstr(p, "//") || strstr(p, "/./") || strstr(p, "/../"))
		return false;
	if ((n >= 2 && !strcmp(p + n - 2, "/.")) || (n >= 3 && !strcmp(p + n - 3, "/..")))
		return false;
	for (const char *s = p; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

int hotplug_config_key(struct hotplug_config *c, const char *uuid, const char *key, const char *val,
		       char *errbuf, size_t errlen)
{
	enum backend_choice b;
	struct fs_rule *rule;
	uuid_t u;
	bool yes;

	if (!uuid) {
		if (!strcmp(key, "udev"))
			return config_parse_bool(val, &c->udev);
		if (!strcmp(key, "automount"))
			return config_parse_bool(val, &c->automount);
		if (!strcmp(key, "udev-source")) {
			if (strcmp(val, "auto") && strcmp(val, "udev") && strcmp(val, "kernel"))
				return -EINVAL;
			return config_set_string(&c->udev_source, val);
		}
		if (!strcmp(key, "backend")) {
			if (backend_choice_parse(val, &b) < 0)
				return -EINVAL;
			c->backend = b;
			return 0;
		}
		if (!strcmp(key, "kernel-module")) {
			if (!val[0] || (val[0] != '/' && strchr(val, '/')) || val[0] == '-')
				return -EINVAL;
			return config_set_string(&c->kernel_module, val);
		}
		return -ENOENT;
	}
	if (uuid_parse(uuid, u) < 0) {
		snprintf(errbuf, errlen, "[filesystem %s]: not a UUID", uuid);
		return -EINVAL;
	}
	if (strcmp(key, "automount") && strcmp(key, "mount-point") && strcmp(key, "backend"))
		return -ENOENT;
	{
		char canon[37];

		uuid_unparse_lower(u, canon);
		rule = rule_for(c, canon, true);
	}
	if (!rule) {
		snprintf(errbuf, errlen, "more than %d [filesystem] sections", HOTPLUG_MAX_RULES);
		return -E2BIG;
	}
	if (!strcmp(key, "automount")) {
		if (config_parse_bool(val, &yes) < 0)
			return -EINVAL;
		rule->automount = yes;
		return 0;
	}
	if (!strcmp(key, "backend")) {
		if (backend_choice_parse(val, &b) < 0)
			return -EINVAL;
		rule->backend = (int)b;
		return 0;
	}
	if (!mountpoint_ok(val))
		return -EINVAL;
	return config_set_string(&rule->mountpoint, val);
}

/* ---- plans --------------------------------------------------------------- */

static bool kernel_usable(struct manager *m)
{
	struct famfs_err err = {0};

	if (kernel_famfs_available(""))
		return true;
	if (!m->cfg.hp.kernel_module || m->module_tried)
		return false;
	m->module_tried = true;
	if (kernel_famfs_load(m->cfg.hp.kernel_module, &err) < 0) {
		fprintf(stderr, "famfs-manager: %s; using the view backend\n", err.msg);
		return false;
	}
	fprintf(stderr, "famfs-manager: loaded %s\n", m->cfg.hp.kernel_module);
	return kernel_famfs_available("");
}

void hotplug_plan(struct manager *m, const char *device, const char *uuid, bool is_image,
		  struct attach_plan *ret)
{
	const struct fs_rule *rule = uuid && uuid[0] ? rule_for(&m->cfg.hp, uuid, false) : NULL;
	enum backend_choice b = m->cfg.hp.backend;

	memset(ret, 0, sizeof(*ret));
	ret->mount = m->cfg.hp.automount;
	if (rule && rule->automount >= 0)
		ret->mount = rule->automount;
	if (rule && rule->backend >= 0)
		b = (enum backend_choice)rule->backend;
	if (rule && rule->mountpoint)
		ret->mountpoint = strdup(rule->mountpoint);
	ret->backend = &backend_view;
	if (!ret->mount)
		return;
	/* An image file cannot be mounted by famfs.ko: it wants a device. */
	if (b == BACKEND_KERNEL || (b == BACKEND_AUTO && !is_image && kernel_usable(m))) {
		if (b == BACKEND_KERNEL)
			(void)kernel_usable(m);
		ret->backend = &backend_kernel;
		ret->fallback_view = b == BACKEND_AUTO;
	}
}

void attach_plan_done(struct attach_plan *p)
{
	free(p->mountpoint);
	p->mountpoint = NULL;
}

/* ---- detach ------------------------------------------------------------- */

void hotplug_detach(struct fsys *f, const char *reason)
{
	if (f->bt.fs) {
		if (f->bt.ops->detach)
			f->bt.ops->detach(&f->bt);
		f->bt.fs = fsys_close_fs(f);
	}
	snprintf(f->attach_error, sizeof(f->attach_error), "%s", reason);
	f->corrupt[0] = '\0';
	f->header_error[0] = '\0';
	f->stalled = false;
	f->device_gone = true;
	f->dirty = true;
	fsys_update_health(f);
	f->dirty = true;
}

/* ---- events -------------------------------------------------------------- */

enum probe_result {
	PROBE_NOT_FAMFS,
	PROBE_FAMFS,            /* the superblock's CRC vouches for the uuid */
	PROBE_FAMFS_DAMAGED,    /* the magic is there, the rest is not sound */
	PROBE_UNREADABLE,
};

static enum probe_result probe(const char *devnode, char uuid[37], bool *ret_image)
{
	union {
		struct famfs_superblock sb;
		uint8_t raw[4096];
	} buf;
	struct stat st;
	ssize_t n;
	int fd;

	uuid[0] = '\0';
	*ret_image = false;
	fd = open(devnode, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return PROBE_UNREADABLE;
	if (fstat(fd, &st) == 0)
		*ret_image = S_ISREG(st.st_mode);
	memset(&buf, 0, sizeof(buf));
	n = pread(fd, buf.raw, sizeof(buf.raw), 0);
	if (n < 0 && S_ISCHR(st.st_mode)) {
		/* device DAX has no read(2): map the first 2 MiB instead */
		close(fd);
		{
			struct famfs_device *dev = NULL;
			struct famfs_err err = {0};

			if (famfs_device_open(devnode, 0, &dev, &err) < 0)
				return PROBE_UNREADABLE;
			n = dev->size < sizeof(buf.raw) ? (ssize_t)dev->size : (ssize_t)sizeof(buf.raw);
			memcpy(buf.raw, dev->base, (size_t)n);
			famfs_device_close(dev);
			fd = -1;
		}
	}
	if (fd >= 0)
		close(fd);
	if (n < (ssize_t)sizeof(buf.sb))
		return n < 0 ? PROBE_UNREADABLE : PROBE_NOT_FAMFS;
	if (buf.sb.magic != FAMFS_SUPER_MAGIC)
		return PROBE_NOT_FAMFS;
	if (famfs_superblock_validate(&buf.sb, UINT64_MAX, NULL) != FAMFS_OK)
		return PROBE_FAMFS_DAMAGED;
	uuid_unparse_lower(buf.sb.uuid, uuid);
	return PROBE_FAMFS;
}

static struct fsys *find_by_device(struct manager *m, const char *devnode)
{
	for (struct fsys *f = m->fsys; f; f = f->next)
		if (!strcmp(f->bt.device, devnode))
			return f;
	return NULL;
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

static void log_attached(const struct fsys *f, const char *how)
{
	fprintf(stderr, "famfs-manager: %s: %s %s at %s, backend %s, %s, health %s%s%s\n", f->bt.device, how,
		f->bt.uuid[0] ? f->bt.uuid : "(no uuid)", f->bt.mountpoint[0] ? f->bt.mountpoint : "(not mounted)",
		f->bt.ops->name, f->bt.fs ? (f->bt.fs->master ? "master" : "client") : "not usable",
		health_name(f->health), f->nreasons ? ": " : "", f->nreasons ? f->reasons[0] : "");
}

static void device_added(struct manager *m, const char *devnode, bool coldplug)
{
	struct fsys *old = find_by_device(m, devnode), *f = NULL;
	enum probe_result pr;
	char uuid[37];
	bool image;
	int r;

	pr = probe(devnode, uuid, &image);
	if (pr == PROBE_UNREADABLE) {
		fprintf(stderr, "famfs-manager: %s: cannot read it (%s); ignoring it\n", devnode, strerror(errno));
		return;
	}
	if (pr == PROBE_NOT_FAMFS) {
		if (old && old->bt.fs) {
			hotplug_detach(old, "device no longer holds famfs");
			bus_schedule_flush(m);
		}
		return;
	}
	if (old && old->bt.fs) {
		/* Still the same file system: the follower keeps it current. */
		if (pr == PROBE_FAMFS && !strcmp(old->bt.uuid, uuid))
			return;
		hotplug_detach(old, pr == PROBE_FAMFS ? "device now holds another file system" :
			       "superblock damaged while attached");
	}
	if (old)
		unlink_fsys(m, old);
	r = fsys_attach(m, devnode, &f);
	if (r < 0) {
		fprintf(stderr, "famfs-manager: %s: cannot attach: %s\n", devnode, strerror(-r));
		if (old)
			append_fsys(m, old);
		return;
	}
	if (old && !strcmp(old->object_path, f->object_path)) {
		/* The same object comes back: one struct replaces the other. */
		fsys_free(old);
		append_fsys(m, f);
		f->dirty = true;
		log_attached(f, "re-attached");
	} else {
		if (old) {
			/* Another file system on this device now: the old object goes. */
			append_fsys(m, old);
			if (m->bus)
				(void)sd_bus_emit_object_removed(m->bus, old->object_path);
			unlink_fsys(m, old);
			fsys_free(old);
		}
		append_fsys(m, f);
		(void)bus_add_fsys(m, f);
		log_attached(f, coldplug ? "found" : "appeared:");
	}
	bus_schedule_flush(m);
}

static void device_removed(struct manager *m, const char *devnode)
{
	struct fsys *f = find_by_device(m, devnode);

	if (!f || (!f->bt.fs && f->device_gone))
		return;
	fprintf(stderr, "famfs-manager: %s: device removed; detaching %s\n", devnode,
		f->bt.mountpoint[0] ? f->bt.mountpoint : f->bt.uuid);
	hotplug_detach(f, "device removed");
	bus_schedule_flush(m);
}

/*
 * A pmem block device is read through the page cache until the kernel
 * backend switches to its DAX view: pages cached at the last attach still
 * hold the old superblock and log, which the new attach must not read.
 */
static void drop_page_cache(const char *devnode)
{
	struct stat st;
	int fd;

	if (stat(devnode, &st) < 0 || !S_ISBLK(st.st_mode))
		return;
	fd = open(devnode, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return;
	if (ioctl(fd, BLKFLSBUF, 0) < 0)
		fprintf(stderr, "famfs-manager: %s: cannot drop its cached pages: %s\n", devnode, strerror(errno));
	close(fd);
}

/*
 * The follower found that the medium under @f changed (re-formatted by
 * another host, superblock destroyed, log reset, master changed).  The
 * old file system goes (a kernel mount of it is unmounted: its files map
 * extents of the old layout, which now belong to the new file system), and
 * whatever the device holds now is attached as a new file system, by the
 * same attach policy as a device that appears.
 */
static void medium_replaced(struct manager *m, struct fsys *f)
{
	char devnode[4096], reason[FAMFS_ERR_MSG_MAX];

	snprintf(devnode, sizeof(devnode), "%s", f->bt.device);
	snprintf(reason, sizeof(reason), "%s", f->bt.fs->medium_change);
	fprintf(stderr, "famfs-manager: %s: %s; detaching %s and attaching what the device holds now\n",
		devnode, reason, f->bt.mountpoint[0] ? f->bt.mountpoint : f->bt.uuid);
	hotplug_detach(f, reason);
	drop_page_cache(devnode);
	device_added(m, devnode, false);
}

void hotplug_replace_changed_media(struct manager *m)
{
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
	for (struct fsys *f = m->fsys; f;) {
		if (f->bt.fs && f->medium_changed_at && now - f->medium_changed_at >= m->cfg.grace_ms * 1000) {
			medium_replaced(m, f);
			f = m->fsys;    /* the list changed */
			continue;
		}
		f = f->next;
	}
}

void hotplug_event(void *userdata, const struct udev_event_info *ev)
{
	struct manager *m = userdata;

	if (!ev->devnode)
		return;
	if (ev->action == UDEV_ACTION_REMOVE)
		device_removed(m, ev->devnode);
	else
		device_added(m, ev->devnode, ev->coldplug);
}

int hotplug_start(struct manager *m)
{
	int r;

	if (!m->cfg.hp.udev)
		return 0;
	r = udev_watch_new(m->event, m->cfg.hp.udev_source, hotplug_event, m, &m->udev_watch);
	if (r < 0) {
		fprintf(stderr, "famfs-manager: cannot follow udev: %s; only configured devices are attached\n",
			strerror(-r));
		return r;
	}
	fprintf(stderr, "famfs-manager: following dax and pmem devices (%s events)\n",
		udev_watch_source(m->udev_watch));
	return 0;
}

void hotplug_stop(struct manager *m)
{
	m->udev_watch = udev_watch_free(m->udev_watch);
}

/* ---- attach ----------------------------------------------------------- */

int hotplug_apply_plan(struct fsys *f, struct attach_plan *plan)
{
	char *mp = NULL;

	f->bt.ops = plan->backend;
	if (!plan->mount)
		mp = strdup("");
	else if (plan->mountpoint)
		mp = plan->mountpoint;
	plan->mountpoint = NULL;
	if (!plan->mount || mp) {
		if (!mp)
			return -ENOMEM;
		free(f->bt.mountpoint);
		f->bt.mountpoint = mp;
	}
	return 0;
}

/* After a failed backend step: the view backend instead, when the plan allows. */
static bool fall_back_to_view(struct fsys *f, const struct attach_plan *plan, int r, struct famfs_err *err)
{
	if (r >= 0 || !plan->fallback_view || f->bt.ops == &backend_view)
		return false;
	manager_log("%s: kernel backend: %s; using the view backend", f->bt.mountpoint, err->msg);
	f->bt.ops = &backend_view;
	memset(err, 0, sizeof(*err));
	return true;
}

int hotplug_backend_prepare(struct fsys *f, const struct attach_plan *plan, struct famfs_err *err)
{
	int r;

	if (!f->bt.ops->prepare)
		return 0;
	r = f->bt.ops->prepare(&f->bt, err);
	return fall_back_to_view(f, plan, r, err) ? 0 : r;
}

int hotplug_backend_attach(struct fsys *f, const struct attach_plan *plan, struct famfs_err *err)
{
	int r;

	if (!f->bt.ops->attach)
		return 0;
	r = f->bt.ops->attach(&f->bt, err);
	if (!fall_back_to_view(f, plan, r, err))
		return r;
	return f->bt.ops->attach ? f->bt.ops->attach(&f->bt, err) : 0;
}
