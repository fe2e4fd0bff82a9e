// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * org.famfs.FileSystem1, one object per attached file system below
 * /org/famfs/Manager/fs: its properties, Replay and Check (Detach and
 * Repair are in bus-admin.c), and the
 * announcements (PropertiesChanged, FilesAdded) of what changed.  The
 * objects are served by a fallback vtable whose userdata is the server;
 * each call finds its file system by the object path.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "bus-errors.h"
#include "bus-internal.h"
#include "bus-options.h"
#include "famfs/bus-api.h"
#include "job.h"
#include "logging.h"
#include "manager.h"

static int prop_fs(sd_bus *bus, const char *path, const char *iface, const char *prop,
		   sd_bus_message *reply, void *userdata, sd_bus_error *e)
{
	struct bus_server *s = userdata;
	struct fsys *f = manager_find_by_path(s->m, path);
	uint64_t v;
	int r;

	if (!f)
		return sd_bus_error_setf(e, FAMFS_ERROR_NOT_MOUNTED, "%s is no longer attached", path);

	if (!strcmp(prop, "Device"))
		return bus_append_name(reply, f->bt.device);
	if (!strcmp(prop, "MountPoint"))
		return bus_append_name(reply, f->bt.mountpoint);
	if (!strcmp(prop, "UUID"))
		return sd_bus_message_append(reply, "s", f->bt.uuid);
	if (!strcmp(prop, "Role"))
		return sd_bus_message_append(reply, "s", fsys_role(f));
	if (!strcmp(prop, "Backend"))
		return sd_bus_message_append(reply, "s", f->bt.ops->name);
	if (!strcmp(prop, "Health"))
		return sd_bus_message_append(reply, "s", health_name(f->health));
	if (!strcmp(prop, "HealthReasons")) {
		r = sd_bus_message_open_container(reply, 'a', "s");
		for (size_t i = 0; r >= 0 && i < f->nreasons; i++)
			r = sd_bus_message_append(reply, "s", f->reasons[i]);
		return r < 0 ? r : sd_bus_message_close_container(reply);
	}
	if (!strcmp(prop, "LogEntriesUsed"))
		v = fsys_log_used(f);
	else if (!strcmp(prop, "LogEntriesTotal"))
		v = fsys_log_total(f);
	else if (!strcmp(prop, "Capacity"))
		v = fsys_capacity(f);
	else if (!strcmp(prop, "Allocated"))
		v = fsys_allocated(f);
	else if (!strcmp(prop, "Free"))
		v = fsys_free_bytes(f);
	else if (!strcmp(prop, "Files"))
		v = fsys_count(f, false);
	else if (!strcmp(prop, "Directories"))
		v = fsys_count(f, true);
	else if (!strcmp(prop, "EntriesReplayed"))
		v = fsys_replayed_total(f);
	else if (!strcmp(prop, "InvalidEntries"))
		v = f->invalid_seen;
	else if (!strcmp(prop, "TornTailRetries"))
		v = f->torn_retries;
	else if (!strcmp(prop, "LastReplay"))
		v = f->last_replay;
	else
		return sd_bus_error_setf(e, SD_BUS_ERROR_UNKNOWN_PROPERTY, "no property %s", prop);
	return sd_bus_message_append(reply, "t", v);
}

/*
 * The file system a FileSystem1 call is addressed to, found again after
 * polkit answered: it may have been detached meanwhile.
 */
struct fsys *bus_call_fsys(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e)
{
	const char *obj = sd_bus_message_get_path(msg);
	struct fsys *f = obj ? manager_find_by_path(s->m, obj) : NULL;

	if (!f)
		sd_bus_error_setf(e, FAMFS_ERROR_NOT_MOUNTED, "%s is no longer attached", obj ? obj : "the file system");
	return f;
}

static int do_fs_replay(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e)
{
	struct fsys *f = bus_call_fsys(msg, s, e);
	uint64_t before;

	if (!f)
		return -ENODEV;
	before = fsys_replayed_total(f);
	fsys_follow(f);
	bus_schedule_flush(s);
	return sd_bus_reply_method_return(msg, "t", fsys_replayed_total(f) - before);
}

static int method_fs_replay(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return auth_check(userdata, msg, "org.famfs.manager.replay", do_fs_replay, e);
}

static int do_fs_check(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e)
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
	return bus_start_check_job(msg, s, f, JOB_CHECK, e);
}

static int method_fs_check(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return auth_check(userdata, msg, "org.famfs.manager.check", do_fs_check, e);
}

#define FS_PROP(name, sig) SD_BUS_PROPERTY(name, sig, prop_fs, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE)
#define FS_CONST(name, sig) SD_BUS_PROPERTY(name, sig, prop_fs, 0, SD_BUS_VTABLE_PROPERTY_CONST)

const sd_bus_vtable bus_fsys_vtable[] = {
	SD_BUS_VTABLE_START(0),
	FS_CONST("Device", "s"),
	/* These four change when the object is detached or re-attached on the same path. */
	FS_PROP("MountPoint", "s"),
	FS_PROP("UUID", "s"),
	FS_PROP("Backend", "s"),
	FS_PROP("Role", "s"),
	FS_PROP("Health", "s"),
	FS_PROP("HealthReasons", "as"),
	FS_PROP("LogEntriesUsed", "t"),
	FS_PROP("LogEntriesTotal", "t"),
	FS_PROP("Capacity", "t"),
	FS_PROP("Allocated", "t"),
	FS_PROP("Free", "t"),
	FS_PROP("Files", "t"),
	FS_PROP("Directories", "t"),
	FS_PROP("EntriesReplayed", "t"),
	FS_PROP("InvalidEntries", "t"),
	FS_PROP("TornTailRetries", "t"),
	FS_PROP("LastReplay", "t"),
	SD_BUS_METHOD_WITH_ARGS("Replay", SD_BUS_NO_ARGS, SD_BUS_RESULT("t", applied),
				method_fs_replay, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Check", SD_BUS_ARGS("a{sv}", options), SD_BUS_RESULT("o", job),
		method_fs_check, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Repair", SD_BUS_ARGS("a{sv}", options), SD_BUS_RESULT("o", job),
		method_fs_repair, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Detach", SD_BUS_ARGS("a{sv}", options), SD_BUS_NO_RESULT,
		method_fs_detach, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_SIGNAL_WITH_ARGS("FilesAdded", SD_BUS_ARGS("as", paths), 0),
	SD_BUS_VTABLE_END,
};

int bus_fsys_find(sd_bus *bus, const char *path, const char *iface, void *userdata, void **found,
		  sd_bus_error *e)
{
	struct bus_server *s = userdata;

	if (!manager_find_by_path(s->m, path))
		return 0;
	*found = s;
	return 1;
}

int bus_fsys_enumerate(sd_bus *bus, const char *path, void *userdata, char ***nodes, sd_bus_error *e)
{
	struct bus_server *s = userdata;
	char **l = calloc(s->m->nfsys + 1, sizeof(*l));
	size_t n = 0;

	if (!l)
		return -ENOMEM;
	for (struct fsys *f = s->m->fsys; f; f = f->next) {
		l[n] = strdup(f->object_path);
		if (!l[n]) {
			while (n > 0)
				free(l[--n]);
			free(l);
			return -ENOMEM;
		}
		n++;
	}
	*nodes = l;
	return 1;
}

static void emit_files_added(struct bus_server *s, struct fsys *f)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *sig = NULL;
	int r;

	r = sd_bus_message_new_signal(s->bus, &sig, f->object_path, FAMFS_FS_IFACE, "FilesAdded");
	if (r >= 0)
		r = sd_bus_message_open_container(sig, 'a', "s");
	for (size_t i = 0; r >= 0 && i < f->npending; i++)
		r = bus_append_name(sig, f->pending[i]);
	if (r >= 0)
		r = sd_bus_message_close_container(sig);
	if (r >= 0)
		r = sd_bus_send(s->bus, sig, NULL);
	if (r < 0)
		log_fs_errno(LOG_WARNING, r, f, "cannot send FilesAdded: %m");
	fsys_clear_pending(f);
}

void bus_flush_changes(struct bus_server *s)
{
	for (struct fsys *f = s->m->fsys; f; f = f->next) {
		if (f->dirty) {
			int r = sd_bus_emit_properties_changed(s->bus, f->object_path, FAMFS_FS_IFACE,
							       "Health", "HealthReasons", "Role", "UUID",
							       "Backend", "MountPoint", "LogEntriesUsed", "LogEntriesTotal", "Capacity",
							       "Allocated", "Free", "Files", "Directories",
							       "EntriesReplayed", "InvalidEntries",
							       "TornTailRetries", "LastReplay", NULL);
			if (r < 0)
				log_fs_errno(LOG_WARNING, r, f, "cannot send PropertiesChanged: %m");
		}
		f->dirty = false;
		if (f->npending > 0)
			emit_files_added(s, f);
	}
}
