// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * org.famfs.Manager1 on /org/famfs/Manager: each method decodes its
 * arguments, asks auth.c who may do it, and hands the work to the manager
 * core and libfamfs; their negative errno and message become a named
 * error here (bus-errors.c).
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

#define MAX_PATH_ARG 4096

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

/* Resolves @path to a usable file system and relative path. */
static int resolve(struct bus_server *s, const char *path, struct fsys **ret_f, char *rel,
		   sd_bus_error *e)
{
	struct famfs_err err = {0};
	struct fsys *f;
	int r;

	if (strlen(path) > MAX_PATH_ARG)
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

static int append_extents(sd_bus_message *reply, const struct famfs_log_entry *en,
			  uint32_t *ret_type, uint64_t *ret_chunk)
{
	const struct famfs_log_file_meta *fm = &en->file;
	int r;

	r = sd_bus_message_open_container(reply, 'a', "(ttt)");
	if (r < 0)
		return r;
	if (fm->ext_type == FAMFS_EXT_INTERLEAVED) {
		const struct famfs_interleaved_extent *ie = &fm->ie[0];

		for (uint64_t k = 0; k < ie->nstrips && k < FAMFS_MAX_STRIPS; k++) {
			r = sd_bus_message_append(reply, "(ttt)", ie->strips[k].devindex,
						  ie->strips[k].offset, ie->strips[k].len);
			if (r < 0)
				return r;
		}
		if (ret_chunk)
			*ret_chunk = ie->chunk_size;
	} else {
		for (uint32_t k = 0; k < fm->nextents && k < FAMFS_MAX_SIMPLE_EXTENTS; k++) {
			r = sd_bus_message_append(reply, "(ttt)", fm->se[k].devindex, fm->se[k].offset,
						  fm->se[k].len);
			if (r < 0)
				return r;
		}
		if (ret_chunk)
			*ret_chunk = 0;
	}
	if (ret_type)
		*ret_type = fm->ext_type;
	return sd_bus_message_close_container(reply);
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

/* ---- Manager1 methods ---- */

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
	r = resolve(s, path, &f, rel, e);
	if (r < 0)
		return r;
	if (rel[0] == '\0')
		return sd_bus_error_setf(e, FAMFS_ERROR_INVALID_PATH, "\"%s\" is the mount point itself", path);
	if (check_size(size, &inner) < 0) {
		char what[MAX_PATH_ARG + 3];

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
	fsys_follow(f);
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

static int method_create_file(sd_bus_message *msg, void *userdata, sd_bus_error *e)
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
		char what[MAX_PATH_ARG + 32];
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
		r = resolve(s, it->path, &g, it->rel, &inner);
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
	fsys_follow(f);
	r = famfs_fs_create_files(f->bt.fs, specs, n, NULL, nodes, &err);
	if (r < 0)
		return bus_error_from_errno(e, r, err.msg);
	for (size_t k = 0; k < n; k++)
		fsys_note_new_node(f, nodes[k], NULL);
	fsys_update_health(f);
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

static int method_create_files(sd_bus_message *msg, void *userdata, sd_bus_error *e)
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
	r = resolve(s, path, &f, rel, e);
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

static int method_mkdir(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return auth_check(userdata, msg, "org.famfs.manager.mkdir", do_mkdir, e);
}

/* Looks up an existing node; files only with @want_file. */
static int lookup_node(struct bus_server *s, const char *path, bool want_file, struct fsys **ret_f,
		       uint32_t *ret_node, sd_bus_error *e)
{
	char rel[FAMFS_MAX_PATHLEN];
	const struct famfs_ns_node *nd;
	struct fsys *f;
	uint32_t id;
	int r;

	r = resolve(s, path, &f, rel, e);
	if (r < 0)
		return r;
	fsys_follow(f);
	id = famfs_ns_lookup(fsys_namespace(f), rel, strlen(rel));
	if (id == FAMFS_NS_NONE)
		return sd_bus_error_setf(e, FAMFS_ERROR_NOT_FOUND, "\"%s\" does not exist in %s", path,
					 f->bt.mountpoint);
	nd = famfs_ns_node(fsys_namespace(f), id);
	if (want_file && nd->kind != FAMFS_NS_FILE)
		return sd_bus_error_setf(e, FAMFS_ERROR_IS_DIRECTORY, "\"%s\" is a directory", path);
	*ret_f = f;
	*ret_node = id;
	return 0;
}

/*
 * The kernel's check for a caller reaching node @id of @f: search (x) on
 * every directory above it, then @want (R_OK, W_OK, X_OK) on the node.
 * Denied: AccessDenied naming the path and what stood in the way.
 */
static int check_access(struct bus_server *s, sd_bus_message *msg, struct fsys *f, uint32_t id,
			int want, sd_bus_error *e)
{
	const struct famfs_ns_node *nd = famfs_ns_node(fsys_namespace(f), id);
	const struct famfs_ns_node *blocker = NULL;
	struct caller c;
	char *target, *where;
	int r;

	r = auth_caller(s, msg, &c);
	if (r < 0)
		return sd_bus_error_setf(e, FAMFS_ERROR_ACCESS_DENIED, "cannot tell who sent the call: %s",
					 strerror(-r));
	for (uint32_t p = nd->parent; p != FAMFS_NS_NONE && !blocker;) {
		const struct famfs_ns_node *pn = famfs_ns_node(fsys_namespace(f), p);

		if (!caller_may(&c, pn->mode, pn->uid, pn->gid, true, X_OK))
			blocker = pn;
		p = pn->parent;
	}
	if (!blocker && caller_may(&c, nd->mode, nd->uid, nd->gid, nd->kind == FAMFS_NS_DIR, want))
		return 0;
	s->calls_denied++;
	target = fsys_abspath(f, nd->path);
	where = blocker ? fsys_abspath(f, blocker->path) : NULL;
	if (blocker)
		r = sd_bus_error_setf(e, FAMFS_ERROR_ACCESS_DENIED,
				      "uid %u may not reach %s: no search permission on %s (mode %04o, owner %u:%u)",
				      (unsigned)c.uid, target ? target : nd->path, where ? where : blocker->path,
				      blocker->mode, blocker->uid, blocker->gid);
	else
		r = sd_bus_error_setf(e, FAMFS_ERROR_ACCESS_DENIED, "uid %u may not %s %s (mode %04o, owner %u:%u)",
				      (unsigned)c.uid,
				      want & W_OK ? "write" : nd->kind == FAMFS_NS_DIR ? "list" : "read",
				      target ? target : nd->path, nd->mode, nd->uid, nd->gid);
	free(target);
	free(where);
	return r;
}

/* lookup_node(), then check_access() for @want. */
static int lookup_access(struct bus_server *s, sd_bus_message *msg, const char *path, bool want_file,
			 int want, struct fsys **ret_f, uint32_t *ret_node, sd_bus_error *e)
{
	int r;

	r = lookup_node(s, path, want_file, ret_f, ret_node, e);
	if (r < 0)
		return r;
	return check_access(s, msg, *ret_f, *ret_node, want, e);
}

/*
 * GetFileMap → (t size, u mode, u uid, u gid, a(ttt) extents); GetFileLayout
 * adds (u extent type, t chunk size) before the extents.  The entry is copied
 * and checked again before its extents go out.
 */
static int reply_file_map(sd_bus_message *msg, struct bus_server *s, bool layout, sd_bus_error *e)
{
	const struct famfs_ns_node *nd;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	struct famfs_log_entry en;
	struct famfs_err err = {0};
	const char *path;
	struct fsys *f;
	uint32_t id;
	int r;

	r = sd_bus_message_read(msg, "s", &path);
	if (r < 0)
		return r;
	r = lookup_access(s, msg, path, true, R_OK, &f, &id, e);
	if (r < 0)
		return r;
	r = famfs_fs_read_entry(f->bt.fs, id, &en, &err);
	if (r < 0)
		return bus_error_from_errno(e, r, err.msg);
	nd = famfs_ns_node(fsys_namespace(f), id);
	r = sd_bus_message_new_method_return(msg, &reply);
	if (r >= 0)
		r = sd_bus_message_append(reply, "tuuu", nd->size, nd->mode, nd->uid, nd->gid);
	if (r >= 0 && layout)
		r = sd_bus_message_append(reply, "ut", en.file.ext_type,
					  en.file.ext_type == FAMFS_EXT_INTERLEAVED ? en.file.ie[0].chunk_size : 0);
	if (r >= 0)
		r = append_extents(reply, &en, NULL, NULL);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	return r;
}

static int do_get_file_map(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e)
{
	return reply_file_map(msg, s, false, e);
}

static int do_get_file_layout(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e)
{
	return reply_file_map(msg, s, true, e);
}

static int method_get_file_map(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return auth_check(userdata, msg, "org.famfs.manager.read-map", do_get_file_map, e);
}

static int method_get_file_layout(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return auth_check(userdata, msg, "org.famfs.manager.read-map", do_get_file_layout, e);
}

/* One (stuuu) of ListFiles, or with @raw the (aytuuu) of ListFilesRaw. */
static int append_list_item(sd_bus_message *reply, const struct famfs_ns_node *nd, bool raw)
{
	uint32_t kind = nd->kind == FAMFS_NS_DIR ? S_IFDIR : S_IFREG;
	const char *name = nd->path + nd->name_off;
	int r;

	r = sd_bus_message_open_container(reply, 'r', raw ? "aytuuu" : "stuuu");
	if (r >= 0 && raw)
		r = sd_bus_message_append_array(reply, 'y', name, strlen(name));
	else if (r >= 0)
		r = bus_append_name(reply, name);
	if (r >= 0)
		r = sd_bus_message_append(reply, "tuuu", nd->size, kind | nd->mode, nd->uid, nd->gid);
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	return r;
}

static int reply_list_files(sd_bus_message *msg, void *userdata, bool raw, sd_bus_error *e)
{
	const struct famfs_ns_node *nd;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	const char *path;
	struct fsys *f;
	uint32_t id;
	int r;

	r = sd_bus_message_read(msg, "s", &path);
	if (r < 0)
		return r;
	r = lookup_node(userdata, path, false, &f, &id, e);
	if (r < 0)
		return r;
	nd = famfs_ns_node(fsys_namespace(f), id);
	/* ls -l: names need r, their attributes x; a file itself only the way there */
	r = check_access(userdata, msg, f, id, nd->kind == FAMFS_NS_DIR ? R_OK | X_OK : 0, e);
	if (r < 0)
		return r;
	r = sd_bus_message_new_method_return(msg, &reply);
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'a', raw ? "(aytuuu)" : "(stuuu)");
	if (r >= 0 && nd->kind == FAMFS_NS_FILE)
		r = append_list_item(reply, nd, raw);
	else if (r >= 0) {
		for (uint32_t c = nd->first_child; c != FAMFS_NS_NONE && r >= 0;) {
			const struct famfs_ns_node *cn = famfs_ns_node(fsys_namespace(f), c);

			r = append_list_item(reply, cn, raw);
			c = cn->next_sibling;
		}
	}
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	return r;
}

static int method_list_files(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return reply_list_files(msg, userdata, false, e);
}

static int method_list_files_raw(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return reply_list_files(msg, userdata, true, e);
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

/* Problems kernel_check_mount() found, kept for the reply. */
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
	return bus_reply_check(msg, s, f, e);
}

static int method_check(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return auth_check(userdata, msg, "org.famfs.manager.check", do_check, e);
}

/*
 * OpenFile: what the caller asked for and may have.  A descriptor of the
 * whole device (view backend) goes only to root and to callers polkit
 * authorizes for org.famfs.manager.open-device; everyone else who may read
 * the file gets one that reaches the file alone.
 */
struct open_request {
	const char *path;
	struct bus_options o;
	struct fsys *f;
	uint32_t id;
	bool device;
};

static int open_file_plan(sd_bus_message *msg, struct bus_server *s, struct open_request *q,
			  sd_bus_error *e)
{
	uid_t uid;
	int r;

	*q = (struct open_request){0};
	r = sd_bus_message_read(msg, "s", &q->path);
	if (r < 0)
		return r;
	r = bus_read_options(msg, BUS_OPT_WRITABLE | BUS_OPT_DESCRIPTOR, &q->o, e);
	if (r < 0)
		return r;
	if (q->o.descriptor && strcmp(q->o.descriptor, "auto") && strcmp(q->o.descriptor, "device") &&
	    strcmp(q->o.descriptor, "file"))
		return sd_bus_error_setf(e, FAMFS_ERROR_INVALID_ARGUMENT,
					 "option \"descriptor\" is \"%s\": it must be auto, device or file",
					 q->o.descriptor);
	r = lookup_access(s, msg, q->path, true, q->o.writable ? R_OK | W_OK : R_OK, &q->f, &q->id, e);
	if (r < 0)
		return r;
	r = auth_sender_ids(s, msg, &uid, NULL);
	if (r < 0)
		return sd_bus_error_setf(e, FAMFS_ERROR_ACCESS_DENIED, "cannot tell who sent the call: %s",
					 strerror(-r));
	if (q->f->bt.ops->data_fd_is_file)
		q->device = false;      /* the backend's descriptor is the file alone */
	else if (q->o.descriptor && !strcmp(q->o.descriptor, "device"))
		q->device = true;
	else if (q->o.descriptor && !strcmp(q->o.descriptor, "file")) {
		if (q->o.writable || !q->f->bt.ops->open_copy)
			return sd_bus_error_setf(e, FAMFS_ERROR_INVALID_ARGUMENT,
						 "%s: the %s backend has no %sdescriptor of a file alone; use WriteFile, or descriptor \"device\"",
						 q->path, q->f->bt.ops->name, q->o.writable ? "writable " : "");
		q->device = false;
	} else
		q->device = uid == 0 || q->o.writable || !q->f->bt.ops->open_copy;
	return sd_bus_message_rewind(msg, true);
}

static int open_file_device_ok(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e);

/*
 * Decided again after every polkit answer, as the path may name another
 * file by then: a device descriptor only with @device_ok.
 */
static int open_file_finish(sd_bus_message *msg, struct bus_server *s, bool device_ok, sd_bus_error *e)
{
	struct open_request q;
	struct famfs_err err = {0};
	struct famfs_log_entry en;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	const struct famfs_ns_node *nd;
	uint32_t type = 0;
	uint64_t chunk = 0;
	bool whole_file;
	_cleanup_close_ int fd = -1;
	int r;

	r = open_file_plan(msg, s, &q, e);
	if (r < 0)
		return r;
	if (q.device && !device_ok)
		return auth_check(s, msg, "org.famfs.manager.open-device", open_file_device_ok, e);
	r = famfs_fs_read_entry(q.f->bt.fs, q.id, &en, &err);
	if (r < 0)
		return bus_error_from_errno(e, r, err.msg);
	whole_file = q.f->bt.ops->data_fd_is_file || !q.device;
	if (q.device || q.f->bt.ops->data_fd_is_file)
		r = q.f->bt.ops->open_data(&q.f->bt, q.id, q.o.writable, &fd, &err);
	else
		r = q.f->bt.ops->open_copy(&q.f->bt, q.id, &en, &fd, &err);
	if (r < 0)
		return bus_error_from_errno(e, r, err.msg);
	type = en.file.ext_type;
	if (type == FAMFS_EXT_INTERLEAVED)
		chunk = en.file.ie[0].chunk_size;
	if (whole_file)
		type = FAMFS_EXT_SIMPLE, chunk = 0;
	nd = famfs_ns_node(fsys_namespace(q.f), q.id);
	r = sd_bus_message_new_method_return(msg, &reply);
	if (r >= 0)
		r = sd_bus_message_append(reply, "htut", fd, nd->size, type, chunk);
	/* The file itself: one extent covering it, at file offsets. */
	if (r >= 0 && whole_file)
		r = sd_bus_message_append(reply, "a(ttt)", 1, (uint64_t)0, (uint64_t)0, nd->size);
	else if (r >= 0)
		r = append_extents(reply, &en, NULL, NULL);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	return r;
}

static int open_file_device_ok(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e)
{
	return open_file_finish(msg, s, true, e);
}

/* Past the writer's authorization, if any: the device needs its own. */
static int open_file_authorized(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e)
{
	return open_file_finish(msg, s, false, e);
}

static int method_open_file(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	struct open_request q;
	int r;

	/* Permissions first: nobody is asked to authenticate for a file they may not open. */
	r = open_file_plan(msg, userdata, &q, e);
	if (r < 0)
		return r;
	if (!q.o.writable)
		return open_file_authorized(msg, userdata, e);
	return auth_check(userdata, msg, "org.famfs.manager.write-file", open_file_authorized, e);
}

/* Copies @len bytes of @src to the start of @dst. */
static int copy_fd(int src, int dst, uint64_t len, const char *what, struct famfs_err *err)
{
	char buf[1 << 16];

	for (uint64_t done = 0; done < len;) {
		size_t want = len - done < sizeof(buf) ? (size_t)(len - done) : sizeof(buf);
		ssize_t n = pread(src, buf, want, (off_t)done);
		ssize_t w;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return famfs_err_set(err, n < 0 ? -errno : -EIO, "cannot read the data for %s: %s", what,
					     n < 0 ? strerror(errno) : "it ended early");
		for (ssize_t off = 0; off < n; off += w) {
			w = pwrite(dst, buf + off, (size_t)(n - off), (off_t)(done + (uint64_t)off));
			if (w < 0 && errno == EINTR) {
				w = 0;
				continue;
			}
			if (w <= 0)
				return famfs_err_set(err, w < 0 ? -errno : -EIO, "cannot write %s: %s", what,
						     w < 0 ? strerror(errno) : "short write");
		}
		done += (uint64_t)n;
	}
	return 0;
}

/*
 * WriteFile: the bytes of a sealed memfd the caller passes go to the start
 * of the file; the caller never holds a descriptor of the device.
 */
static int do_write_file(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e)
{
	const unsigned need = F_SEAL_WRITE | F_SEAL_SHRINK;
	struct bus_options o;
	struct famfs_err err = {0};
	struct famfs_log_entry en;
	const struct famfs_ns_node *nd;
	const char *path;
	struct fsys *f;
	struct stat st;
	uint32_t id;
	_cleanup_close_ int fd = -1;
	int seals, src, r;

	r = sd_bus_message_read(msg, "sh", &path, &src);
	if (r < 0)
		return r;
	r = bus_read_options(msg, 0, &o, e);
	if (r < 0)
		return r;
	r = lookup_access(s, msg, path, true, W_OK, &f, &id, e);
	if (r < 0)
		return r;
	nd = famfs_ns_node(fsys_namespace(f), id);
	seals = fcntl(src, F_GET_SEALS);
	if (seals < 0 || ((unsigned)seals & need) != need || fstat(src, &st) < 0 || !S_ISREG(st.st_mode))
		return sd_bus_error_setf(e, FAMFS_ERROR_INVALID_ARGUMENT,
					 "%s: the data must be a memfd sealed with F_SEAL_WRITE and F_SEAL_SHRINK",
					 path);
	if ((uint64_t)st.st_size > nd->size)
		return sd_bus_error_setf(e, FAMFS_ERROR_INVALID_ARGUMENT,
					 "%s: %llu bytes of data do not fit in the file's %llu", path,
					 (unsigned long long)st.st_size, (unsigned long long)nd->size);
	if ((uint64_t)st.st_size > VIEW_COPY_MAX)
		return sd_bus_error_setf(e, FAMFS_ERROR_INVALID_ARGUMENT,
					 "%s: %llu bytes of data: WriteFile takes at most %llu at a time; larger files are written through OpenFile",
					 path, (unsigned long long)st.st_size, (unsigned long long)VIEW_COPY_MAX);
	r = famfs_fs_read_entry(f->bt.fs, id, &en, &err);
	if (r < 0)
		return bus_error_from_errno(e, r, err.msg);
	if (f->bt.ops->write_from)
		r = f->bt.ops->write_from(&f->bt, id, &en, src, (uint64_t)st.st_size, &err);
	else {
		r = f->bt.ops->open_data(&f->bt, id, true, &fd, &err);
		if (r >= 0)
			r = copy_fd(src, fd, (uint64_t)st.st_size, path, &err);
		if (r >= 0 && fsync(fd) < 0)
			r = famfs_err_set(&err, -errno, "cannot flush %s: %s", path, strerror(errno));
	}
	if (r < 0)
		return bus_error_from_errno(e, r, err.msg);
	return sd_bus_reply_method_return(msg, "t", (uint64_t)st.st_size);
}

static int method_write_file(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	struct bus_server *s = userdata;
	struct bus_options o;
	const char *path;
	struct fsys *f;
	uint32_t id;
	int src, r;

	/* Permissions first, as for OpenFile */
	r = sd_bus_message_read(msg, "sh", &path, &src);
	if (r >= 0)
		r = bus_read_options(msg, 0, &o, e);
	if (r < 0)
		return r;
	r = lookup_access(s, msg, path, true, W_OK, &f, &id, e);
	if (r < 0)
		return r;
	r = sd_bus_message_rewind(msg, true);
	if (r < 0)
		return r;
	return auth_check(s, msg, "org.famfs.manager.write-file", do_write_file, e);
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
		SD_BUS_RESULT("s", verdict, "t", errors, "t", warnings, "a(ssxss)", findings),
		method_check, SD_BUS_VTABLE_UNPRIVILEGED),
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

/* ---- FileSystem1 ---- */