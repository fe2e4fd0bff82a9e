// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * famfsctl's bus client.  Every call goes to the manager object; the file
 * systems' properties are read from their own objects.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "famfs/bus-api.h"
#include "message.h"

/* CreateFile preallocates, which can take a while on a large device. */
#define CREATE_TIMEOUT_USEC (120ULL * 1000000)

static sd_bus *bus;

int client_connect(bool ask_password)
{
	int r;

	r = sd_bus_open_system(&bus);
	if (r < 0) {
		const char *a = getenv("DBUS_SYSTEM_BUS_ADDRESS");

		return tool_error_errno(r, "cannot connect to the system bus%s%s: %m", a ? " at " : "",
					a ? a : "");
	}
	(void)sd_bus_set_allow_interactive_authorization(bus, ask_password);
	return 0;
}

void client_disconnect(void)
{
	bus = sd_bus_flush_close_unref(bus);
}

int client_error(const char *what, const char *arg, const sd_bus_error *e, int r)
{
	if (e && sd_bus_error_is_set(e))
		tool_error("cannot %s%s%s: %s [%s]", what, arg ? " " : "", arg ? arg : "",
			   e->message ? e->message : "", e->name);
	else
		tool_error_errno(r, "cannot %s%s%s: %m", what, arg ? " " : "", arg ? arg : "");
	return r;
}

static int call_manager(const char *method, sd_bus_error *e, sd_bus_message **ret_reply,
			const char *types, ...)
{
	va_list ap;
	int r;

	va_start(ap, types);
	r = sd_bus_call_methodv(bus, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, method,
				  e, ret_reply, types, ap);
	va_end(ap);
	return r;
}

/* Makes room for one more element of @size bytes in *@v, which holds @n. */
static int grow(void **v, size_t n, size_t size)
{
	void *nv = realloc(*v, (n + 1) * size);

	if (!nv)
		return -ENOMEM;
	*v = nv;
	memset((char *)nv + n * size, 0, size);
	return 0;
}

/* ---- file systems ---- */

static void fsinfo_clear(struct fsinfo *f)
{
	free(f->object);
	free(f->uuid);
	free(f->device);
	free(f->mountpoint);
	free(f->role);
	free(f->backend);
	free(f->health);
	for (char **p = f->reasons; p && *p; p++)
		free(*p);
	free(f->reasons);
	memset(f, 0, sizeof(*f));
}

void fsinfo_list_clear(struct fsinfo_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		fsinfo_clear(&l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* One property of GetAll's a{sv}, the reply positioned at its variant. */
static int read_prop(sd_bus_message *reply, const char *key, const char *contents, struct fsinfo *f)
{
	static const struct {
		const char *name;
		size_t off;
	} strs[] = {
		{ "UUID", offsetof(struct fsinfo, uuid) },
		{ "Device", offsetof(struct fsinfo, device) },
		{ "MountPoint", offsetof(struct fsinfo, mountpoint) },
		{ "Role", offsetof(struct fsinfo, role) },
		{ "Backend", offsetof(struct fsinfo, backend) },
		{ "Health", offsetof(struct fsinfo, health) },
	}, nums[] = {
		{ "LogEntriesUsed", offsetof(struct fsinfo, log_used) },
		{ "LogEntriesTotal", offsetof(struct fsinfo, log_total) },
		{ "Capacity", offsetof(struct fsinfo, capacity) },
		{ "Allocated", offsetof(struct fsinfo, allocated) },
		{ "Free", offsetof(struct fsinfo, free_bytes) },
		{ "Files", offsetof(struct fsinfo, files) },
		{ "Directories", offsetof(struct fsinfo, directories) },
		{ "EntriesReplayed", offsetof(struct fsinfo, replayed) },
		{ "InvalidEntries", offsetof(struct fsinfo, invalid) },
		{ "TornTailRetries", offsetof(struct fsinfo, torn) },
		{ "LastReplay", offsetof(struct fsinfo, last_replay) },
	};
	int r;

	if (!strcmp(contents, "s")) {
		for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
			if (strcmp(strs[i].name, key) == 0) {
				char **field = (char **)((char *)f + strs[i].off);
				const char *v;

				r = sd_bus_message_read(reply, "v", "s", &v);
				if (r < 0)
					return r;
				free(*field);
				*field = strdup(v);
				return *field ? 0 : -ENOMEM;
			}
		}
	} else if (!strcmp(contents, "t")) {
		for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
			if (strcmp(nums[i].name, key) == 0)
				return sd_bus_message_read(reply, "v", "t",
							   (uint64_t *)((char *)f + nums[i].off));
	} else if (!strcmp(contents, "as") && !strcmp(key, "HealthReasons")) {
		r = sd_bus_message_enter_container(reply, 'v', "as");
		if (r >= 0)
			r = sd_bus_message_read_strv(reply, &f->reasons);
		if (r >= 0)
			r = sd_bus_message_exit_container(reply);
		return r;
	}
	return sd_bus_message_skip(reply, "v");
}

static int read_props(const char *object, struct fsinfo *f, sd_bus_error *e)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	int r;

	r = sd_bus_call_method(bus, FAMFS_BUS_NAME, object, "org.freedesktop.DBus.Properties", "GetAll",
			       e, &reply, "s", FAMFS_FS_IFACE);
	if (r < 0)
		return r;
	f->object = strdup(object);
	if (!f->object)
		return -ENOMEM;
	r = sd_bus_message_enter_container(reply, 'a', "{sv}");
	while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
		const char *key, *contents;
		char type;

		r = sd_bus_message_read(reply, "s", &key);
		if (r >= 0)
			r = sd_bus_message_peek_type(reply, &type, &contents);
		if (r >= 0)
			r = read_prop(reply, key, contents, f);
		if (r >= 0)
			r = sd_bus_message_exit_container(reply);
	}
	return r < 0 ? r : 0;
}

int client_list_fs(struct fsinfo_list *ret, sd_bus_error *e)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_(fsinfo_list_clear) struct fsinfo_list l = { 0 };
	const char *obj, *uuid, *dev, *mp, *role, *health;
	int r;

	r = call_manager("ListFileSystems", e, &reply, "");
	if (r < 0)
		return r;
	r = sd_bus_message_enter_container(reply, 'a', "(osssss)");
	while (r >= 0 && (r = sd_bus_message_read(reply, "(osssss)", &obj, &uuid, &dev, &mp, &role,
						   &health)) > 0) {
		r = grow((void **)&l.v, l.n, sizeof(*l.v));
		if (r < 0)
			return r;
		r = read_props(obj, &l.v[l.n++], e);
	}
	if (r < 0)
		return r;
	*ret = l;
	l = (struct fsinfo_list){ 0 };
	return 0;
}

int client_get_faults(uint64_t ret_faults[3], sd_bus_error *e)
{
	static const char *const names[] = { "FaultsPTE", "FaultsPMD", "FaultsPUD" };
	uint64_t faults[3];
	int r;

	for (int k = 0; k < 3; k++) {
		r = sd_bus_get_property_trivial(bus, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE,
						names[k], e, 't', &faults[k]);
		if (r < 0)
			return r;
	}
	memcpy(ret_faults, faults, sizeof(faults));
	return 0;
}

/* ---- the namespace ---- */

void listing_clear(struct listing *l)
{
	sd_bus_message_unref(l->reply);
	free(l->entries);
	*l = (struct listing){ 0 };
}

int client_list_files(const char *path, struct listing *ret, sd_bus_error *e)
{
	_cleanup_(listing_clear) struct listing l = { 0 };
	struct dir_entry d;
	int r;

	r = call_manager("ListFiles", e, &l.reply, "s", path);
	if (r < 0)
		return r;
	r = sd_bus_message_enter_container(l.reply, 'a', "(stuuu)");
	while (r >= 0 && (r = sd_bus_message_read(l.reply, "(stuuu)", &d.name, &d.size, &d.mode, &d.uid,
						   &d.gid)) > 0) {
		r = grow((void **)&l.entries, l.n, sizeof(*l.entries));
		if (r < 0)
			return r;
		l.entries[l.n++] = d;
	}
	if (r < 0)
		return r;
	*ret = l;
	l = (struct listing){ 0 };
	return 0;
}

static int read_extents(sd_bus_message *reply, struct file_layout *l)
{
	uint64_t a, b, c;
	int r;

	l->n = 0;
	r = sd_bus_message_enter_container(reply, 'a', "(ttt)");
	while (r >= 0 && (r = sd_bus_message_read(reply, "(ttt)", &a, &b, &c)) > 0) {
		if (l->n == LAYOUT_MAX_EXTENTS)
			return -E2BIG;
		l->ext[l->n++] = (struct extent){ a, b, c };
	}
	if (r >= 0)
		r = sd_bus_message_exit_container(reply);
	return r;
}

int client_get_layout(const char *path, struct file_layout *ret, sd_bus_error *e)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	struct file_layout l = { 0 };
	int r;

	r = call_manager("GetFileLayout", e, &reply, "s", path);
	if (r < 0)
		return r;
	r = sd_bus_message_read(reply, "tuuuut", &l.size, &l.mode, &l.uid, &l.gid, &l.type, &l.chunk);
	if (r >= 0)
		r = read_extents(reply, &l);
	if (r < 0)
		return r;
	*ret = l;
	return 0;
}

int client_open_file(const char *path, bool writable, const char *descriptor, int *ret_fd,
		     struct file_layout *ret, sd_bus_error *e)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	struct file_layout l = { 0 };
	int fd, r;

	if (descriptor)
		r = call_manager("OpenFile", e, &reply, "sa{sv}", path, 2, "writable", "b", writable, "descriptor",
				 "s", descriptor);
	else
		r = call_manager("OpenFile", e, &reply, "sa{sv}", path, 1, "writable", "b", writable);
	if (r < 0)
		return r;
	r = sd_bus_message_read(reply, "htut", &fd, &l.size, &l.type, &l.chunk);
	if (r >= 0)
		r = read_extents(reply, &l);
	if (r < 0)
		return r;
	if (l.type == 1 && (l.chunk == 0 || l.n == 0))
		return -EBADMSG;
	/* The reply owns its descriptor: keep a copy past it. */
	fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	*ret_fd = fd;
	*ret = l;
	return 0;
}

static int append_owner(sd_bus_message *m, const struct owner *o)
{
	int r = 0;

	if (o && o->has_uid)
		r = sd_bus_message_append(m, "{sv}", "uid", "u", o->uid);
	if (r >= 0 && o && o->has_gid)
		r = sd_bus_message_append(m, "{sv}", "gid", "u", o->gid);
	return r;
}

int client_create_file(const char *path, uint64_t size, uint32_t mode, const struct interleave *il,
		       const struct owner *o, sd_bus_error *e)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
	int r;

	r = sd_bus_message_new_method_call(bus, &call, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH,
					   FAMFS_MANAGER_IFACE, "CreateFile");
	if (r >= 0)
		r = sd_bus_message_append(call, "stu", path, size, mode);
	if (r >= 0)
		r = sd_bus_message_open_container(call, 'a', "{sv}");
	if (r >= 0 && il->nstrips)
		r = sd_bus_message_append(call, "{sv}", "nstrips", "u", il->nstrips);
	if (r >= 0 && il->nbuckets)
		r = sd_bus_message_append(call, "{sv}", "nbuckets", "u", il->nbuckets);
	if (r >= 0 && il->chunk)
		r = sd_bus_message_append(call, "{sv}", "chunk_size", "t", il->chunk);
	if (r >= 0)
		r = append_owner(call, o);
	if (r >= 0)
		r = sd_bus_message_close_container(call);
	if (r < 0)
		return r;
	return sd_bus_call(bus, call, CREATE_TIMEOUT_USEC, e, &reply);
}

int client_mkdir(const char *path, uint32_t mode, bool parents, const struct owner *o, sd_bus_error *e)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
	int r;

	r = sd_bus_message_new_method_call(bus, &call, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH,
					   FAMFS_MANAGER_IFACE, "Mkdir");
	if (r >= 0)
		r = sd_bus_message_append(call, "su", path, mode);
	if (r >= 0)
		r = sd_bus_message_open_container(call, 'a', "{sv}");
	if (r >= 0)
		r = sd_bus_message_append(call, "{sv}", "parents", "b", parents);
	if (r >= 0)
		r = append_owner(call, o);
	if (r >= 0)
		r = sd_bus_message_close_container(call);
	if (r < 0)
		return r;
	return sd_bus_call(bus, call, 0, e, &reply);
}

struct pending_call {
	bool done;
	sd_bus_message *reply;
};

static int pending_call_done(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
	struct pending_call *c = userdata;

	c->done = true;
	c->reply = sd_bus_message_ref(m);
	return 0;
}

/*
 * sd_bus_call() of this libsystemd waits only for input once a large
 * message is partly written, and can hang there: a batch of many files is
 * sent with the asynchronous call, and the loop polls for output too.
 */
static int call_large(sd_bus_message *call, sd_bus_error *e, sd_bus_message **ret_reply)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	struct pending_call c = { 0 };
	const sd_bus_error *err;
	int r;

	r = sd_bus_call_async(bus, NULL, call, pending_call_done, &c, CREATE_TIMEOUT_USEC);
	if (r < 0)
		return r;
	while (!c.done) {
		r = sd_bus_process(bus, NULL);
		if (r < 0)
			return r;
		if (r == 0) {
			r = sd_bus_wait(bus, UINT64_MAX);
			if (r < 0)
				return r;
		}
	}
	reply = c.reply;
	err = sd_bus_message_get_error(reply);
	if (err) {
		r = sd_bus_error_get_errno(err);
		sd_bus_error_copy(e, err);
		return r > 0 ? -r : -EIO;
	}
	*ret_reply = TAKE_PTR(reply);
	return 0;
}

int client_create_files(const struct batch_file *files, size_t n, const struct owner *o, uint32_t *ret_created,
			sd_bus_error *e)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
	uint32_t created;
	int r;

	r = sd_bus_message_new_method_call(bus, &call, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH,
					   FAMFS_MANAGER_IFACE, "CreateFiles");
	if (r >= 0)
		r = sd_bus_message_open_container(call, 'a', "(stu)");
	for (size_t i = 0; i < n && r >= 0; i++)
		r = sd_bus_message_append(call, "(stu)", files[i].path, files[i].size, files[i].mode);
	if (r >= 0)
		r = sd_bus_message_close_container(call);
	if (r >= 0)
		r = sd_bus_message_open_container(call, 'a', "{sv}");
	if (r >= 0)
		r = append_owner(call, o);
	if (r >= 0)
		r = sd_bus_message_close_container(call);
	if (r >= 0)
		r = call_large(call, e, &reply);
	if (r >= 0)
		r = sd_bus_message_read(reply, "u", &created);
	if (r < 0)
		return r;
	*ret_created = created;
	return 0;
}

int client_write_file(const char *path, int data_fd, sd_bus_error *e)
{
	return call_manager("WriteFile", e, NULL, "sha{sv}", path, data_fd, 0);
}

/* ---- checks ---- */

void check_result_clear(struct check_result *c)
{
	sd_bus_message_unref(c->reply);
	free(c->findings);
	*c = (struct check_result){ 0 };
}

int client_read_check(sd_bus_message *reply, struct check_result *ret)
{
	_cleanup_(check_result_clear) struct check_result c = { 0 };
	struct check_finding f;
	int r;

	c.reply = sd_bus_message_ref(reply);
	r = sd_bus_message_read(c.reply, "stt", &c.verdict, &c.errors, &c.warnings);
	if (r >= 0)
		r = sd_bus_message_enter_container(c.reply, 'a', "(ssxss)");
	while (r >= 0 && (r = sd_bus_message_read(c.reply, "(ssxss)", &f.severity, &f.code, &f.index,
						   &f.path, &f.message)) > 0) {
		r = grow((void **)&c.findings, c.n, sizeof(*c.findings));
		if (r < 0)
			return r;
		c.findings[c.n++] = f;
	}
	if (r < 0)
		return r;
	*ret = c;
	c = (struct check_result){ 0 };
	return 0;
}

sd_bus *client_bus(void)
{
	return bus;
}
