// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Manager1.CreateFile, CreateFiles and Mkdir: what a caller adds to a
 * file system's namespace.  Decoded and authorized here; the rules of a
 * new file or directory are libfamfs's (famfs_fs_create_files,
 * famfs_fs_mkdir).
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
#include "path.h"

static int check_mode(uint32_t mode, sd_bus_error *e, uint32_t kind, uint32_t *ret)
{
	if ((mode & S_IFMT) != 0 && (mode & S_IFMT) != kind)
		return sd_bus_error_setf(e, FAMFS_ERROR_INVALID_ARGUMENT,
					 "mode 0%o has a file type that does not fit", mode);
	if (mode & ~(uint32_t)(S_IFMT | 07777))
		return sd_bus_error_setf(e, FAMFS_ERROR_INVALID_ARGUMENT, "mode 0%o has unknown bits", mode);
	*ret = mode & 07777;
	return 0;
}

static int append_fmap(sd_bus_message *reply, const struct famfs_fmap *map)
{
	int r;

	r = sd_bus_message_open_container(reply, 'a', "(ttt)");
	if (r < 0)
		return r;
	if (map->ext_type == FAMFS_EXT_INTERLEAVED) {
		for (uint64_t k = 0; k < map->ie[0].nstrips && k < FAMFS_MAX_STRIPS; k++)
			if ((r = sd_bus_message_append(reply, "(ttt)", map->ie[0].strips[k].devindex,
						       map->ie[0].strips[k].offset, map->ie[0].strips[k].len)) < 0)
				return r;
	} else {
		for (uint32_t k = 0; k < map->nextents && k < FAMFS_MAX_SIMPLE_EXTENTS; k++)
			if ((r = sd_bus_message_append(reply, "(ttt)", map->se[k].devindex,
						       map->se[k].offset, map->se[k].len)) < 0)
				return r;
	}
	return sd_bus_message_close_container(reply);
}

static int fill_ids(struct bus_server *s, sd_bus_message *msg, struct bus_options *o)
{
	uid_t uid;
	gid_t gid;
	int r;

	if ((o->given & BUS_OPT_UID) && (o->given & BUS_OPT_GID))
		return 0;
	r = auth_sender_ids(s, msg, &uid, &gid);
	if (r < 0)
		uid = 0, gid = 0;
	if (!(o->given & BUS_OPT_UID))
		o->uid = uid;
	if (!(o->given & BUS_OPT_GID))
		o->gid = gid == (gid_t)-1 ? 0 : gid;
	return 0;
}

/*
 * Files and directories given to another owner or group than the caller's,
 * or with the setuid or setgid bit, are for root and for callers polkit
 * authorizes for org.famfs.manager.set-owner (as chown and chmod would
 * refuse them to anyone else).
 */
static bool needs_owner_auth(struct bus_server *s, sd_bus_message *msg, const struct bus_options *o,
			     bool special_bits)
{
	struct caller c;

	if (auth_caller(s, msg, &c) < 0)
		return true;
	if (c.uid == 0)
		return false;
	return special_bits || ((o->given & BUS_OPT_UID) && o->uid != c.uid) ||
	       ((o->given & BUS_OPT_GID) && !caller_in_group(&c, o->gid));
}

static int ask_owner_auth(struct bus_server *s, sd_bus_message *msg, auth_continue_fn cont,
			  sd_bus_error *e)
{
	int r = sd_bus_message_rewind(msg, true);

	if (r < 0)
		return r;
	return auth_check(s, msg, "org.famfs.manager.set-owner", cont, e);
}

/*
 * Size 0 is refused by the library too (famfs_fs_create_files), but as
 * -EINVAL, which names a bad path on the bus: refused here first so that
 * the caller gets InvalidArgument.
 */
static int check_size(uint64_t size, sd_bus_error *e)
{
	if (size == 0)
		return sd_bus_error_set(e, FAMFS_ERROR_INVALID_ARGUMENT,
					"size 0: famfs files are preallocated, give a size above 0");
	return 0;
}

/* Sets @e to @inner's error with "@what: " before its message; frees @inner. */
static int error_about(sd_bus_error *e, sd_bus_error *inner, const char *what)
{
	int r = sd_bus_error_setf(e, inner->name, "%s: %s", what, inner->message);

	sd_bus_error_free(inner);
	return r;
}

static int do_create_file_owner_ok(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e);

static int create_file(sd_bus_message *msg, struct bus_server *s, bool owner_ok, sd_bus_error *e)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	sd_bus_error inner = SD_BUS_ERROR_NULL;
	struct famfs_interleave_params ip;
	struct bus_options o;
	struct famfs_file_spec spec = {0};
	struct famfs_err err = {0};
	struct famfs_fmap map;
	char rel[FAMFS_MAX_PATHLEN];
	const char *path;
	struct fsys *f;
	uint64_t size;
	uint32_t mode, node;
	int r;

	r = sd_bus_message_read(msg, "stu", &path, &size, &mode);
	if (r < 0)
		return r;
	r = bus_read_options(msg, BUS_OPT_UID | BUS_OPT_GID | BUS_OPT_NSTRIPS | BUS_OPT_NBUCKETS | BUS_OPT_CHUNK_SIZE,
			     &o, e);
	if (r < 0)
		return r;
	r = check_mode(mode, e, S_IFREG, &mode);
	if (r < 0)
		return r;
	if (!owner_ok && needs_owner_auth(s, msg, &o, mode & (S_ISUID | S_ISGID)))
		return ask_owner_auth(s, msg, do_create_file_owner_ok, e);
	r = bus_resolve(s, path, &f, rel, e);
	if (r < 0)
		return r;
	if (rel[0] == '\0')
		return sd_bus_error_setf(e, FAMFS_ERROR_INVALID_PATH, "\"%s\" is the mount point itself", path);
	if (check_size(size, &inner) < 0) {
		char what[BUS_MAX_PATH_ARG + 3];

		snprintf(what, sizeof(what), "\"%s\"", path);
		return error_about(e, &inner, what);
	}
	fill_ids(s, msg, &o);
	spec.relpath = rel;
	spec.size = size;
	spec.mode = mode;
	spec.uid = o.uid;
	spec.gid = o.gid;
	if (o.nstrips || o.nbuckets || o.chunk_size) {
		ip.nstrips = o.nstrips ? o.nstrips : 1;
		ip.nbuckets = o.nbuckets ? o.nbuckets : ip.nstrips;
		ip.chunk_size = o.chunk_size ? o.chunk_size : FAMFS_ALLOC_UNIT;
		r = famfs_interleave_params_validate(&ip, fsys_capacity(f), &err);
		if (r < 0)
			return sd_bus_error_setf(e, FAMFS_ERROR_INVALID_ARGUMENT, "%s", err.msg);
		spec.interleave = &ip;
	}
	/*
	 * No fsys_follow() first: famfs_fs_create_files catches up with other
	 * writers under the log lock and announces what it replays through the
	 * observer, and the poll keeps the device and health checks; a second
	 * replay per call cost three system calls.
	 */
	r = famfs_fs_create_files(f->bt.fs, &spec, 1, &map, &node, &err);
	if (r < 0)
		return bus_error_from_errno(e, r, err.msg);
	fsys_note_new_node(f, node, NULL);
	fsys_update_health(f);
	bus_schedule_flush(s);
	r = sd_bus_message_new_method_return(msg, &reply);
	if (r >= 0)
		r = append_fmap(reply, &map);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	return r < 0 ? r : 1;
}

static int do_create_file(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e)
{
	return create_file(msg, s, false, e);
}

static int do_create_file_owner_ok(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e)
{
	return create_file(msg, s, true, e);
}

int method_create_file(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return auth_check(userdata, msg, "org.famfs.manager.create-file", do_create_file, e);
}

static int do_create_files_owner_ok(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e);

/* One element of a CreateFiles batch as decoded. */
struct batch_item {
	const char *path;           /* into the message, which outlives the call */
	uint64_t size;
	uint32_t mode;
	char rel[FAMFS_MAX_PATHLEN];
};

/*
 * Reads the a(stu) of CreateFiles: each element resolved, all on one file
 * system (@ret_f), none the mount point itself.
 */
static int read_batch(sd_bus_message *msg, struct bus_server *s, struct batch_item **ret_items,
		      size_t *ret_n, struct fsys **ret_f, bool *ret_special, sd_bus_error *e)
{
	_cleanup_free_ struct batch_item *items = NULL;
	struct fsys *f = NULL;
	size_t n = 0, cap = 0;
	bool special = false;
	int r;

	r = sd_bus_message_enter_container(msg, 'a', "(stu)");
	if (r < 0)
		return r;
	for (;;) {
		sd_bus_error inner = SD_BUS_ERROR_NULL;
		char what[BUS_MAX_PATH_ARG + 32];
		struct batch_item *it;
		struct fsys *g;

		if (n == cap) {
			size_t c = cap ? cap * 2 : 256;
			struct batch_item *a = realloc(items, c * sizeof(*items));

			if (!a)
				return -ENOMEM;
			items = a;
			cap = c;
		}
		it = &items[n];
		r = sd_bus_message_read(msg, "(stu)", &it->path, &it->size, &it->mode);
		if (r < 0)
			return r;
		if (r == 0)
			break;
		/* A limit on what the caller makes us hold, before the library sees the batch. */
		if (n == FAMFS_BATCH_MAX)
			return sd_bus_error_setf(e, FAMFS_ERROR_INVALID_ARGUMENT, "more than %d files in one batch",
						 FAMFS_BATCH_MAX);
		snprintf(what, sizeof(what), "element %zu (%s)", n, it->path);
		r = bus_resolve(s, it->path, &g, it->rel, &inner);
		if (r < 0)
			return error_about(e, &inner, what);
		if (f && g != f)
			return sd_bus_error_setf(e, FAMFS_ERROR_INVALID_ARGUMENT,
						 "%s: on another file system than element 0 (%s); a batch goes to one file system",
						 what, f->bt.mountpoint);
		f = g;
		if (it->rel[0] == '\0')
			return sd_bus_error_setf(e, FAMFS_ERROR_INVALID_PATH, "%s: the mount point itself", what);
		if (check_size(it->size, &inner) < 0)
			return error_about(e, &inner, what);
		if (check_mode(it->mode, &inner, S_IFREG, &it->mode) < 0)
			return error_about(e, &inner, what);
		special |= (it->mode & (S_ISUID | S_ISGID)) != 0;
		n++;
	}
	r = sd_bus_message_exit_container(msg);
	if (r < 0)
		return r;
	*ret_items = TAKE_PTR(items);
	*ret_n = n;
	*ret_f = f;
	*ret_special = special;
	return 0;
}

static int create_files(sd_bus_message *msg, struct bus_server *s, bool owner_ok, sd_bus_error *e)
{
	_cleanup_free_ struct batch_item *items = NULL;
	_cleanup_free_ struct famfs_file_spec *specs = NULL;
	_cleanup_free_ uint32_t *nodes = NULL;
	struct bus_options o;
	struct famfs_err err = {0};
	struct fsys *f;
	bool special;
	size_t n;
	int r;

	r = read_batch(msg, s, &items, &n, &f, &special, e);
	if (r < 0)
		return r;
	r = bus_read_options(msg, BUS_OPT_UID | BUS_OPT_GID, &o, e);
	if (r < 0)
		return r;
	if (!owner_ok && needs_owner_auth(s, msg, &o, special))
		return ask_owner_auth(s, msg, do_create_files_owner_ok, e);
	if (n == 0)
		return sd_bus_reply_method_return(msg, "u", 0u);
	fill_ids(s, msg, &o);
	specs = calloc(n, sizeof(*specs));
	nodes = calloc(n, sizeof(*nodes));
	if (!specs || !nodes)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++)
		/* messages name the caller's path */
		specs[k] = (struct famfs_file_spec){ .relpath = items[k].rel, .size = items[k].size,
						     .mode = items[k].mode, .uid = o.uid, .gid = o.gid,
						     .display_path = items[k].path };
	/* Caught up under the log lock by famfs_fs_create_files, as in create_file. */
	r = famfs_fs_create_files(f->bt.fs, specs, n, NULL, nodes, &err);
	if (r < 0)
		return bus_error_from_errno(e, r, err.msg);
	for (size_t k = 0; k < n; k++)
		fsys_note_new_node(f, nodes[k], NULL);
	fsys_update_health(f);
	if (n >= BUS_TRIM_BATCH)
		s->trim_after_flush = true;
	bus_schedule_flush(s);
	return sd_bus_reply_method_return(msg, "u", (uint32_t)n);
}

static int do_create_files(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e)
{
	return create_files(msg, s, false, e);
}

static int do_create_files_owner_ok(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e)
{
	return create_files(msg, s, true, e);
}

int method_create_files(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return auth_check(userdata, msg, "org.famfs.manager.create-file", do_create_files, e);
}

static int do_mkdir_owner_ok(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e);

static int make_dir(sd_bus_message *msg, struct bus_server *s, bool owner_ok, sd_bus_error *e)
{
	struct bus_options o;
	struct famfs_err err = {0};
	char rel[FAMFS_MAX_PATHLEN];
	const struct famfs_ns_node *nd;
	const char *path;
	struct fsys *f;
	uint32_t made[FAMFS_MAX_PATHLEN / 2 + 1];
	uint32_t mode, node = FAMFS_NS_NONE;
	size_t depth = 0;
	uint64_t before;
	int r;

	r = sd_bus_message_read(msg, "su", &path, &mode);
	if (r < 0)
		return r;
	r = bus_read_options(msg, BUS_OPT_UID | BUS_OPT_GID | BUS_OPT_PARENTS, &o, e);
	if (r < 0)
		return r;
	r = check_mode(mode, e, S_IFDIR, &mode);
	if (r < 0)
		return r;
	if (!owner_ok && needs_owner_auth(s, msg, &o, mode & (S_ISUID | S_ISGID)))
		return ask_owner_auth(s, msg, do_mkdir_owner_ok, e);
	r = bus_resolve(s, path, &f, rel, e);
	if (r < 0)
		return r;
	if (rel[0] == '\0') {
		if (o.parents && famfs_fs_is_master(f->bt.fs))
			return sd_bus_reply_method_return(msg, "");
		if (!famfs_fs_is_master(f->bt.fs))
			return bus_error_from_errno(e, -EPERM, "this host is not the master of the file system");
		return sd_bus_error_setf(e, FAMFS_ERROR_EXISTS, "\"%s\" is the mount point itself", path);
	}
	fill_ids(s, msg, &o);
	fsys_follow(f);
	before = famfs_fs_applied(f->bt.fs);
	r = famfs_fs_mkdir(f->bt.fs, rel, mode, o.uid, o.gid, o.parents, &node, &err);
	if (r < 0)
		return bus_error_from_errno(e, r, err.msg);
	/* Every level this call logged is a new node: the deepest and the new parents above it, shallowest first. */
	for (uint32_t id = node; id != FAMFS_NS_NONE && depth < sizeof(made) / sizeof(made[0]);) {
		nd = famfs_ns_node(fsys_namespace(f), id);
		if (!nd || nd->index < (int64_t)before)
			break;
		made[depth++] = id;
		id = nd->parent;
	}
	while (depth > 0)
		fsys_note_new_node(f, made[--depth], NULL);
	fsys_update_health(f);
	bus_schedule_flush(s);
	return sd_bus_reply_method_return(msg, "");
}

static int do_mkdir(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e)
{
	return make_dir(msg, s, false, e);
}

static int do_mkdir_owner_ok(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e)
{
	return make_dir(msg, s, true, e);
}

int method_mkdir(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return auth_check(userdata, msg, "org.famfs.manager.mkdir", do_mkdir, e);
}

