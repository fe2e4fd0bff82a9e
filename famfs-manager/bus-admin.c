// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Administering file systems over the bus: Manager1.Attach, Format,
 * Reload and SetAutomount, FileSystem1.Detach and Repair.  Each has a
 * polkit action of its own (dbus/org.famfs.manager.policy); each refuses
 * with a named error before anything changes.  Format and Repair are jobs
 * (bus-job.c, job-format.c, job-check.c); the rest answer at once.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "auth.h"
#include "bus-errors.h"
#include "bus-internal.h"
#include "bus-options.h"
#include "escape.h"
#include "famfs/bus-api.h"
#include "job-work.h"
#include "manager.h"
#include "omf.h"

/*
 * Reads a device argument (escaped as names are on the bus) into @buf and
 * checks that it is something famfs media can be on: a DAX or pmem device
 * or a regular file.  Nothing is opened for writing.
 */
static int read_device(sd_bus_message *msg, char *buf, size_t size, sd_bus_error *e)
{
	struct famfs_device *dev = NULL;
	struct famfs_err err = {0};
	const char *arg;
	struct stat st;
	int r;

	r = sd_bus_message_read(msg, "s", &arg);
	if (r < 0)
		return r;
	if (strlen(arg) > BUS_MAX_PATH_ARG)
		return sd_bus_error_setf(e, FAMFS_ERROR_INVALID_PATH, "device path of %zu bytes is too long", strlen(arg));
	r = famfs_unescape(arg, buf, size, &err);
	if (r < 0)
		return bus_error_from_errno(e, r, err.msg);
	if (buf[0] != '/')
		return sd_bus_error_setf(e, FAMFS_ERROR_INVALID_PATH, "device path \"%s\" is not absolute", arg);
	if (stat(buf, &st) < 0)
		return sd_bus_error_setf(e, errno == ENOENT ? FAMFS_ERROR_NOT_FOUND : FAMFS_ERROR_INVALID_DEVICE,
					 "%s: %s", arg, strerror(errno));
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode) && !S_ISCHR(st.st_mode))
		return sd_bus_error_setf(e, FAMFS_ERROR_INVALID_DEVICE, "%s is not a DAX device, a pmem device or an image file",
					 arg);
	/* Sizes it the way attach and format will: a character device must be DAX. */
	r = famfs_device_open(buf, FAMFS_DEVICE_NOMAP, &dev, &err);
	if (r < 0 && r != -EBUSY)
		return sd_bus_error_setf(e, FAMFS_ERROR_INVALID_DEVICE, "%s", err.msg);
	famfs_device_close(dev);
	return 0;
}

/* ---- Attach ---- */

static int do_attach(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e)
{
	struct attach_override ov = { .backend = -1 };
	struct bus_options o;
	char device[PATH_MAX];
	struct fsys *f;
	struct job *busy;
	int r;

	r = read_device(msg, device, sizeof(device), e);
	if (r < 0)
		return r;
	r = bus_read_options(msg, BUS_OPT_MOUNT_POINT | BUS_OPT_BACKEND | BUS_OPT_READ_ONLY, &o, e);
	if (r < 0)
		return r;
	if (o.given & BUS_OPT_BACKEND) {
		enum backend_choice b;

		if (backend_choice_parse(o.backend, &b) < 0)
			return sd_bus_error_setf(e, FAMFS_ERROR_INVALID_ARGUMENT,
						 "option \"backend\": \"%s\" is not auto, kernel or view", o.backend);
		ov.backend = (int)b;
	}
	if (o.given & BUS_OPT_MOUNT_POINT) {
		if (o.mount_point[0] != '/' || strlen(o.mount_point) >= PATH_MAX || strstr(o.mount_point, "/../") ||
		    !famfs_is_utf8(o.mount_point))
			return sd_bus_error_setf(e, FAMFS_ERROR_INVALID_PATH,
						 "option \"mount_point\": \"%s\" is not an absolute path", o.mount_point);
		for (struct fsys *x = s->m->fsys; x; x = x->next)
			if (!strcmp(x->bt.mountpoint, o.mount_point))
				return sd_bus_error_setf(e, FAMFS_ERROR_EXISTS, "mount point %s is taken by %s",
							 o.mount_point, x->bt.device);
		ov.mountpoint = o.mount_point;
	}
	ov.read_only = o.read_only;
	f = manager_find_device(s->m, device);
	if (f && f->bt.fs)
		return bus_error_fsys(e, FAMFS_ERROR_ATTACHED, f->bt.mountpoint[0] ? f->bt.mountpoint : f->object_path,
				      "", "is attached from this device already");
	busy = manager_running_job(s->m, device, true);
	if (busy)
		return sd_bus_error_setf(e, FAMFS_ERROR_JOB_RUNNING, "%s job %s is running on %s",
					 job_kind_name(busy->kind), busy->object_path, device);
	r = manager_attach_with(s->m, f ? f->bt.device : device, "attached on request:", &ov, &f);
	if (r == -EEXIST)
		return sd_bus_error_setf(e, FAMFS_ERROR_EXISTS, "the file system on %s is attached from another device",
					 device);
	if (r < 0)
		return bus_error_from_errno(e, r, "cannot attach");
	if (!f->bt.fs) {
		char why[FAMFS_ERR_MSG_MAX];

		/* Not served: nothing of it stays. */
		snprintf(why, sizeof(why), "%s", f->attach_error);
		manager_remove(s->m, f, "the attach failed");
		return sd_bus_error_setf(e, FAMFS_ERROR_CORRUPT, "cannot attach %s: %s", device, why);
	}
	return sd_bus_reply_method_return(msg, "o", f->object_path);
}

int method_attach(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return auth_check(userdata, msg, "org.famfs.manager.attach", do_attach, e);
}

/* ---- Detach ---- */

static int do_fs_detach(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e)
{
	char users[512];
	struct bus_options o;
	struct fsys *f;
	struct job *busy;
	int r;

	r = bus_read_options(msg, BUS_OPT_FORCE, &o, e);
	if (r < 0)
		return r;
	f = bus_call_fsys(msg, s, e);
	if (!f)
		return -ENODEV;
	busy = manager_running_job(s->m, f->bt.device, false);
	if (busy)
		return sd_bus_error_setf(e, FAMFS_ERROR_JOB_RUNNING, "%s job %s is running on %s; cancel it first",
					 job_kind_name(busy->kind), busy->object_path, f->bt.device);
	r = fsys_in_use(f, users, sizeof(users));
	if (r > 0 && !o.force)
		return bus_error_fsys(e, FAMFS_ERROR_IN_USE, f->bt.mountpoint, "files are open or mapped by ", users);
	manager_remove(s->m, f, o.force && r > 0 ? "detached on request, forced while in use" : "detached on request");
	return sd_bus_reply_method_return(msg, "");
}

int method_fs_detach(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return auth_check(userdata, msg, "org.famfs.manager.detach", do_fs_detach, e);
}

/* ---- Format ---- */

static const char *format_error_name(int r)
{
	switch (-r) {
	case EEXIST:
		return FAMFS_ERROR_HAS_FILE_SYSTEM;
	case EBUSY:
		return FAMFS_ERROR_BUSY;
	case ENOSPC:
		return FAMFS_ERROR_NO_SPACE;
	case EINVAL:
		return FAMFS_ERROR_INVALID_ARGUMENT;
	case ENOMEM:
		return SD_BUS_ERROR_NO_MEMORY;
	case EACCES:
	case EROFS:
	case EPERM:
		return FAMFS_ERROR_READ_ONLY;
	default:
		return FAMFS_ERROR_INVALID_DEVICE;
	}
}

static int do_format(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e)
{
	struct format_request req = { .log_len = FAMFS_LOG_LEN_DEFAULT };
	struct famfs_err err = {0};
	struct bus_options o;
	char device[PATH_MAX];
	struct fsys *f;
	struct job *j, *busy;
	int r;

	r = read_device(msg, device, sizeof(device), e);
	if (r < 0)
		return r;
	r = bus_read_options(msg, BUS_OPT_FORCE | BUS_OPT_LOG_LEN, &o, e);
	if (r < 0)
		return r;
	if (o.given & BUS_OPT_LOG_LEN)
		req.log_len = o.log_len;
	req.force = o.force;
	/* Never a device this daemon serves, force or not: its files are in use here. */
	f = manager_find_device(s->m, device);
	if (f && f->bt.fs)
		return bus_error_fsys(e, FAMFS_ERROR_ATTACHED, f->bt.mountpoint[0] ? f->bt.mountpoint : f->object_path,
				      "is attached from ", "this device; detach it first");
	busy = manager_running_job(s->m, device, false);
	if (busy)
		return sd_bus_error_setf(e, FAMFS_ERROR_JOB_RUNNING, "%s job %s is running on %s",
					 job_kind_name(busy->kind), busy->object_path, device);
	if (!s->m->have_host_uuid)
		return sd_bus_error_setf(e, FAMFS_ERROR_FAILED,
					 "this host has no system UUID (%s): it cannot be the master of a new file system",
					 s->m->cfg.system_uuid_file ? s->m->cfg.system_uuid_file : "the default file");
	req.host_uuid = s->m->host_uuid;
	j = job_new(JOB_FORMAT, device, NULL);
	if (!j)
		return -ENOMEM;
	r = job_format_prepare(j, &req, &err);
	if (r < 0) {
		_cleanup_free_ char *m = famfs_escape_dup(err.msg);

		job_free(j);
		return sd_bus_error_set(e, format_error_name(r), m ? m : "cannot format");
	}
	return bus_reply_job(msg, s, j, e);
}

int method_format(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return auth_check(userdata, msg, "org.famfs.manager.format", do_format, e);
}

/* ---- Repair ---- */

static int do_fs_repair(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e)
{
	struct bus_options o;
	struct fsys *f;
	int r;

	r = bus_read_options(msg, 0, &o, e);
	if (r < 0)
		return r;
	f = bus_call_fsys(msg, s, e);
	if (!f)
		return -ENODEV;
	if (!f->bt.fs)
		return bus_error_fsys(e, FAMFS_ERROR_CORRUPT, f->bt.mountpoint, "is not usable: ", f->attach_error);
	if (f->media_error[0])
		return bus_error_fsys(e, FAMFS_ERROR_MEDIA_FAILURE, f->bt.mountpoint, "", f->media_error);
	if (famfs_fs_medium_change(f->bt.fs))
		return bus_error_fsys(e, FAMFS_ERROR_MEDIUM_CHANGED, f->bt.mountpoint, "",
				      famfs_fs_medium_change(f->bt.fs));
	if (!famfs_fs_is_master(f->bt.fs))
		return bus_error_fsys(e, FAMFS_ERROR_NOT_MASTER, f->bt.mountpoint,
				      "this host is not its master: ", "only the master may repair its log");
	if (!famfs_fs_device(f->bt.fs)->writable)
		return bus_error_fsys(e, FAMFS_ERROR_READ_ONLY, f->bt.mountpoint, "", "is attached read-only");
	return bus_start_check_job(msg, s, f, JOB_REPAIR, e);
}

int method_fs_repair(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return auth_check(userdata, msg, "org.famfs.manager.repair", do_fs_repair, e);
}

/* ---- Reload, SetAutomount ---- */

static int do_reload(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e)
{
	struct famfs_err err = {0};
	int r;

	r = manager_reload(s->m, &err);
	if (r < 0) {
		_cleanup_free_ char *m = famfs_escape_dup(err.msg);

		return sd_bus_error_set(e, r == -ENOMEM ? SD_BUS_ERROR_NO_MEMORY : FAMFS_ERROR_INVALID_CONFIG,
					m ? m : "reload failed");
	}
	(void)sd_bus_emit_properties_changed(s->bus, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "AutoMount", NULL);
	return sd_bus_reply_method_return(msg, "");
}

int method_reload(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return auth_check(userdata, msg, "org.famfs.manager.reload", do_reload, e);
}

static int do_set_automount(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e)
{
	struct famfs_err err = {0};
	const char *uuid;
	int automount, r;

	r = sd_bus_message_read(msg, "sb", &uuid, &automount);
	if (r < 0)
		return r;
	r = manager_set_automount(s->m, uuid, automount, &err);
	if (r < 0)
		return sd_bus_error_set(e, FAMFS_ERROR_INVALID_ARGUMENT, err.msg);
	if (!uuid[0])
		(void)sd_bus_emit_properties_changed(s->bus, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "AutoMount", NULL);
	return sd_bus_reply_method_return(msg, "");
}

int method_set_automount(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return auth_check(userdata, msg, "org.famfs.manager.set-automount", do_set_automount, e);
}
