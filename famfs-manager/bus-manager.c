// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * org.famfs.Manager1 on /org/famfs/Manager: its vtable and properties,
 * ListFileSystems, Check (a job) and Replay.  The namespace methods are in
 * bus-create.c, the reading and data methods in bus-files.c, the
 * administration (Attach, Format, Reload, SetAutomount) in bus-admin.c.  Each method
 * decodes its arguments, asks auth.c who may do it, and hands the work to
 * the manager core and libfamfs; their negative errno and message become
 * a named error at this edge (bus-errors.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "auth.h"
#include "bus-errors.h"
#include "bus-internal.h"
#include "bus-options.h"
#include "cleanup.h"
#include "famfs/bus-api.h"
#include "manager.h"
#include "job.h"
#include "path.h"

/* Resolves @path to a usable file system and relative path. */
int bus_resolve(struct bus_server *s, const char *path, struct fsys **ret_f, char *rel,
		   sd_bus_error *e)
{
	struct famfs_err err = {0};
	struct fsys *f;
	int r;

	if (strlen(path) > BUS_MAX_PATH_ARG)
		return sd_bus_error_setf(e, FAMFS_ERROR_INVALID_PATH, "path of %zu bytes is too long",
					 strlen(path));
	r = manager_resolve(s->m, path, &f, rel, FAMFS_MAX_PATHLEN, &err);
	if (r < 0)
		return bus_error_from_errno(e, r, err.msg);
	if (!f->bt.fs)
		return bus_error_fsys(e, FAMFS_ERROR_CORRUPT, f->bt.mountpoint, "is not usable: ", f->attach_error);
	if (f->media_error[0])
		return bus_error_fsys(e, FAMFS_ERROR_MEDIA_FAILURE, f->bt.mountpoint, "", f->media_error);
	/* Its namespace and extents describe a file system the device no longer holds. */
	if (famfs_fs_medium_change(f->bt.fs))
		return bus_error_fsys(e, FAMFS_ERROR_MEDIUM_CHANGED, f->bt.mountpoint, "",
				      famfs_fs_medium_change(f->bt.fs));
	*ret_f = f;
	return 0;
}

static int method_list_file_systems(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	struct bus_server *s = userdata;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	int r;

	r = sd_bus_message_new_method_return(msg, &reply);
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'a', "(osssss)");
	for (struct fsys *f = s->m->fsys; f && r >= 0; f = f->next) {
		r = sd_bus_message_open_container(reply, 'r', "osssss");
		if (r >= 0)
			r = sd_bus_message_append(reply, "os", f->object_path, f->bt.uuid);
		if (r >= 0)
			r = bus_append_name(reply, f->bt.device);
		if (r >= 0)
			r = bus_append_name(reply, f->bt.mountpoint);
		if (r >= 0)
			r = sd_bus_message_append(reply, "ss", fsys_role(f), health_name(f->health));
		if (r >= 0)
			r = sd_bus_message_close_container(reply);
	}
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	return r;
}

static int do_check(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e)
{
	struct bus_options o;
	struct famfs_err err = {0};
	char rel[FAMFS_MAX_PATHLEN];
	const char *path;
	struct fsys *f;
	int r;

	r = sd_bus_message_read(msg, "s", &path);
	if (r < 0)
		return r;
	r = bus_read_options(msg, 0, &o, e);
	if (r < 0)
		return r;
	r = manager_resolve(s->m, path, &f, rel, sizeof(rel), &err);
	if (r < 0)
		return bus_error_from_errno(e, r, err.msg);
	return bus_start_check_job(msg, s, f, JOB_CHECK, e);
}

static int method_check(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return auth_check(userdata, msg, "org.famfs.manager.check", do_check, e);
}

static int do_replay_all(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e)
{
	uint64_t before = 0, after = 0;

	for (struct fsys *f = s->m->fsys; f; f = f->next) {
		before += fsys_replayed_total(f);
		fsys_follow(f);
		after += fsys_replayed_total(f);
	}
	bus_schedule_flush(s);
	return sd_bus_reply_method_return(msg, "t", after - before);
}

static int method_replay_all(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return auth_check(userdata, msg, "org.famfs.manager.replay", do_replay_all, e);
}

static int prop_manager(sd_bus *bus, const char *path, const char *iface, const char *prop,
			sd_bus_message *reply, void *userdata, sd_bus_error *e)
{
	struct bus_server *s = userdata;

	if (!strcmp(prop, "Version"))
		return sd_bus_message_append(reply, "s", PACKAGE_VERSION);
	if (!strcmp(prop, "MountRoot"))
		return bus_append_name(reply, s->m->cfg.mount_root);
	if (!strcmp(prop, "PollIntervalUSec"))
		return sd_bus_message_append(reply, "t", s->m->cfg.poll_ms * 1000);
	if (!strcmp(prop, "Polkit"))
		return sd_bus_message_append(reply, "b", s->m->cfg.polkit);
	if (!strcmp(prop, "AutoMount"))
		return sd_bus_message_append(reply, "b", s->m->cfg.automount);
	if (!strcmp(prop, "FaultsPTE"))
		return sd_bus_message_append(reply, "t", s->m->faults[0]);
	if (!strcmp(prop, "FaultsPMD"))
		return sd_bus_message_append(reply, "t", s->m->faults[1]);
	if (!strcmp(prop, "FaultsPUD"))
		return sd_bus_message_append(reply, "t", s->m->faults[2]);
	return sd_bus_message_append(reply, "t", s->calls_denied);
}

const sd_bus_vtable bus_manager_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_PROPERTY("Version", "s", prop_manager, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("MountRoot", "s", prop_manager, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("PollIntervalUSec", "t", prop_manager, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("Polkit", "b", prop_manager, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("CallsDenied", "t", prop_manager, 0, 0),
	SD_BUS_PROPERTY("AutoMount", "b", prop_manager, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	/* famfs.ko counts faults for the whole module, not per mount. */
	SD_BUS_PROPERTY("FaultsPTE", "t", prop_manager, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("FaultsPMD", "t", prop_manager, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("FaultsPUD", "t", prop_manager, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_METHOD_WITH_ARGS("CreateFile",
		SD_BUS_ARGS("s", path, "t", size, "u", mode, "a{sv}", options),
		SD_BUS_RESULT("a(ttt)", extents),
		method_create_file, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("CreateFiles",
		SD_BUS_ARGS("a(stu)", files, "a{sv}", options),
		SD_BUS_RESULT("u", created),
		method_create_files, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Mkdir",
		SD_BUS_ARGS("s", path, "u", mode, "a{sv}", options),
		SD_BUS_NO_RESULT,
		method_mkdir, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("GetFileMap",
		SD_BUS_ARGS("s", path),
		SD_BUS_RESULT("t", size, "u", mode, "u", uid, "u", gid, "a(ttt)", extents),
		method_get_file_map, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("GetFileLayout",
		SD_BUS_ARGS("s", path),
		SD_BUS_RESULT("t", size, "u", mode, "u", uid, "u", gid, "u", extent_type,
			      "t", chunk_size, "a(ttt)", extents),
		method_get_file_layout, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("ListFiles",
		SD_BUS_ARGS("s", path),
		SD_BUS_RESULT("a(stuuu)", entries),
		method_list_files, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("ListFilesRaw",
		SD_BUS_ARGS("s", path),
		SD_BUS_RESULT("a(aytuuu)", entries),
		method_list_files_raw, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("ListFileSystems",
		SD_BUS_NO_ARGS,
		SD_BUS_RESULT("a(osssss)", filesystems),
		method_list_file_systems, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Check",
		SD_BUS_ARGS("s", path, "a{sv}", options),
		SD_BUS_RESULT("o", job),
		method_check, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Attach",
		SD_BUS_ARGS("s", device, "a{sv}", options),
		SD_BUS_RESULT("o", filesystem),
		method_attach, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Format",
		SD_BUS_ARGS("s", device, "a{sv}", options),
		SD_BUS_RESULT("o", job),
		method_format, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Reload",
		SD_BUS_NO_ARGS,
		SD_BUS_NO_RESULT,
		method_reload, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("SetAutomount",
		SD_BUS_ARGS("s", uuid, "b", automount),
		SD_BUS_NO_RESULT,
		method_set_automount, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("OpenFile",
		SD_BUS_ARGS("s", path, "a{sv}", options),
		SD_BUS_RESULT("h", fd, "t", size, "u", extent_type, "t", chunk_size, "a(ttt)", extents),
		method_open_file, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("WriteFile",
		SD_BUS_ARGS("s", path, "h", data, "a{sv}", options),
		SD_BUS_RESULT("t", written),
		method_write_file, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Replay",
		SD_BUS_NO_ARGS,
		SD_BUS_RESULT("t", applied),
		method_replay_all, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_VTABLE_END,
};

