// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The org.famfs.Manager bus API: org.famfs.Manager1 on /org/famfs/Manager,
 * org.famfs.FileSystem1 on /org/famfs/Manager/fs/<uuid>, an ObjectManager
 * at the root.  dbus/org.famfs.Manager1.xml documents every member; keep
 * the two in step.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "check.h"
#include "manager.h"
#include "path.h"

#define ERR(name) "org.famfs.Error." name
#define MAX_FINDINGS_REPLY 1000
#define MAX_PATH_ARG 4096

int bus_error_from_errno(sd_bus_error *e, int r, const char *msg)
{
	const char *name;

	switch (-r) {
	case EPERM:
		name = ERR("NotMaster");
		break;
	case EACCES:
		name = ERR("AccessDenied");
		break;
	case EINVAL:
	case ENAMETOOLONG:
		name = ERR("InvalidPath");
		break;
	case EEXIST:
		name = ERR("Exists");
		break;
	case ENOENT:
		name = ERR("NotFound");
		break;
	case ENOTDIR:
		name = ERR("NotDirectory");
		break;
	case EISDIR:
		name = ERR("IsDirectory");
		break;
	case ENOSPC:
		name = ERR("NoSpace");
		break;
	case FAMFS_ELOGFULL:
		name = ERR("LogFull");
		break;
	case FAMFS_EMEDIUMCHANGED:
		name = ERR("MediumChanged");
		break;
	case E2BIG:
	case EFBIG:
	case ERANGE:
		name = ERR("InvalidArgument");
		break;
	case EROFS:
		name = ERR("ReadOnly");
		break;
	case EIO:
	case EUCLEAN:
		name = ERR("Corrupt");
		break;
	case ENODEV:
		name = ERR("NotMounted");
		break;
	case ENOMEM:
		name = SD_BUS_ERROR_NO_MEMORY;
		break;
	default:
		name = ERR("Failed");
		break;
	}
	if (msg && msg[0]) {
		/* Messages quote names from the medium; the bus takes only UTF-8. */
		char *escaped = famfs_escape_dup(msg);
		int ret = sd_bus_error_set(e, name, escaped ? escaped : "out of memory");

		free(escaped);
		return ret;
	}
	return sd_bus_error_set(e, name, strerror(-r));
}

/* Appends a name from the medium (or a path built from one) as an escaped "s". */
static int append_name(sd_bus_message *m, const char *raw)
{
	char *escaped = famfs_escape_dup(raw);
	int r;

	if (!escaped)
		return -ENOMEM;
	r = sd_bus_message_append(m, "s", escaped);
	free(escaped);
	return r;
}

/* ---- options ---- */

struct call_opts {
	bool have_uid, have_gid;
	uint32_t uid, gid;
	uint32_t nstrips, nbuckets;
	uint64_t chunk_size;
	bool parents;
	bool writable;
	const char *descriptor;     /* OpenFile: "auto", "device" or "file" */
};

static const struct {
	const char *key;
	const char *type;
} option_types[] = {
	{ "uid", "u" }, { "gid", "u" }, { "nstrips", "u" }, { "nbuckets", "u" },
	{ "chunk_size", "t" }, { "parents", "b" }, { "writable", "b" }, { "descriptor", "s" },
};

/* Reads an a{sv} of the keys listed (space separated) in @allowed. */
static int read_options(sd_bus_message *msg, const char *allowed, struct call_opts *o,
			sd_bus_error *e)
{
	int r;

	r = sd_bus_message_enter_container(msg, 'a', "{sv}");
	if (r < 0)
		return r;
	while ((r = sd_bus_message_enter_container(msg, 'e', "sv")) > 0) {
		const char *key, *contents;
		const char *want = NULL;
		size_t klen;
		const char *p;
		char type;
		int b;

		r = sd_bus_message_read(msg, "s", &key);
		if (r < 0)
			return r;
		klen = strlen(key);
		/* An empty key matches everywhere: it would walk strstr off the end. */
		for (p = klen ? strstr(allowed, key) : NULL; p; p = strstr(p + 1, key))
			if ((p == allowed || p[-1] == ' ') && (p[klen] == ' ' || p[klen] == '\0'))
				break;
		for (size_t i = 0; p && i < sizeof(option_types) / sizeof(option_types[0]); i++)
			if (strcmp(option_types[i].key, key) == 0)
				want = option_types[i].type;
		if (!want)
			return sd_bus_error_setf(e, ERR("InvalidArgument"),
						 "unknown option \"%s\" (this method takes: %s)", key,
						 allowed[0] ? allowed : "none");
		r = sd_bus_message_peek_type(msg, &type, &contents);
		if (r < 0)
			return r;
		if (strcmp(contents, want) != 0)
			return sd_bus_error_setf(e, ERR("InvalidArgument"),
						 "option \"%s\" must have type '%s', not '%s'", key, want,
						 contents);
		r = sd_bus_message_enter_container(msg, 'v', want);
		if (r < 0)
			return r;
		if (!strcmp(key, "uid")) {
			r = sd_bus_message_read(msg, "u", &o->uid);
			o->have_uid = true;
		} else if (!strcmp(key, "gid")) {
			r = sd_bus_message_read(msg, "u", &o->gid);
			o->have_gid = true;
		} else if (!strcmp(key, "nstrips")) {
			r = sd_bus_message_read(msg, "u", &o->nstrips);
		} else if (!strcmp(key, "nbuckets")) {
			r = sd_bus_message_read(msg, "u", &o->nbuckets);
		} else if (!strcmp(key, "chunk_size")) {
			r = sd_bus_message_read(msg, "t", &o->chunk_size);
		} else if (!strcmp(key, "parents")) {
			r = sd_bus_message_read(msg, "b", &b);
			o->parents = b;
		} else if (!strcmp(key, "descriptor")) {
			r = sd_bus_message_read(msg, "s", &o->descriptor);
		} else {
			r = sd_bus_message_read(msg, "b", &b);
			o->writable = b;
		}
		if (r < 0)
			return r;
		r = sd_bus_message_exit_container(msg);
		if (r >= 0)
			r = sd_bus_message_exit_container(msg);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	return sd_bus_message_exit_container(msg);
}

int bus_parse_options(sd_bus_message *msg, const char *allowed, sd_bus_error *e)
{
	struct call_opts o = {0};

	return read_options(msg, allowed, &o, e);
}

static int check_mode(uint32_t mode, sd_bus_error *e, uint32_t kind, uint32_t *ret)
{
	if ((mode & S_IFMT) != 0 && (mode & S_IFMT) != kind)
		return sd_bus_error_setf(e, ERR("InvalidArgument"),
					 "mode 0%o has a file type that does not fit", mode);
	if (mode & ~(uint32_t)(S_IFMT | 07777))
		return sd_bus_error_setf(e, ERR("InvalidArgument"), "mode 0%o has unknown bits", mode);
	*ret = mode & 07777;
	return 0;
}

/* "file system at MOUNTPOINT: WHAT WHY", both parts escaped for the bus. */
static int fsys_error(sd_bus_error *e, const char *name, const char *mountpoint, const char *what,
		      const char *why)
{
	char *where_esc = famfs_escape_dup(mountpoint), *why_esc = famfs_escape_dup(why);
	int r;

	r = sd_bus_error_setf(e, name, "file system at %s: %s%s", where_esc ? where_esc : "", what,
			      why_esc ? why_esc : "");
	free(where_esc);
	free(why_esc);
	return r;
}

/* Resolves @path to a usable file system and relative path. */
static int resolve(struct manager *m, const char *path, struct fsys **ret_f, char *rel,
		   sd_bus_error *e)
{
	struct famfs_err err = {0};
	struct fsys *f;
	int r;

	if (strlen(path) > MAX_PATH_ARG)
		return sd_bus_error_setf(e, ERR("InvalidPath"), "path of %zu bytes is too long",
					 strlen(path));
	r = manager_resolve(m, path, &f, rel, FAMFS_MAX_PATHLEN, &err);
	if (r < 0)
		return bus_error_from_errno(e, r, err.msg);
	if (!f->bt.fs)
		return fsys_error(e, ERR("Corrupt"), f->bt.mountpoint, "is not usable: ", f->attach_error);
	if (f->media_error[0])
		return fsys_error(e, ERR("MediaFailure"), f->bt.mountpoint, "", f->media_error);
	/* Its namespace and extents describe a file system the device no longer holds. */
	if (famfs_fs_medium_change(f->bt.fs))
		return fsys_error(e, ERR("MediumChanged"), f->bt.mountpoint, "", f->bt.fs->medium_change);
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

static int fill_ids(struct manager *m, sd_bus_message *msg, struct call_opts *o)
{
	uid_t uid;
	gid_t gid;
	int r;

	if (o->have_uid && o->have_gid)
		return 0;
	r = auth_sender_ids(m, msg, &uid, &gid);
	if (r < 0)
		uid = 0, gid = 0;
	if (!o->have_uid)
		o->uid = uid;
	if (!o->have_gid)
		o->gid = gid == (gid_t)-1 ? 0 : gid;
	return 0;
}

/*
 * Files and directories given to another owner or group than the caller's,
 * or with the setuid or setgid bit, are for root and for callers polkit
 * authorizes for org.famfs.manager.set-owner (as chown and chmod would
 * refuse them to anyone else).
 */
static bool needs_owner_auth(struct manager *m, sd_bus_message *msg, const struct call_opts *o,
			     bool special_bits)
{
	struct caller c;

	if (auth_caller(m, msg, &c) < 0)
		return true;
	if (c.uid == 0)
		return false;
	return special_bits || (o->have_uid && o->uid != c.uid) ||
	       (o->have_gid && !caller_in_group(&c, o->gid));
}

static int ask_owner_auth(struct manager *m, sd_bus_message *msg, auth_continue_fn cont,
			  sd_bus_error *e)
{
	int r = sd_bus_message_rewind(msg, true);

	if (r < 0)
		return r;
	return auth_check(m, msg, "org.famfs.manager.set-owner", cont, e);
}

/* ---- Manager1 methods ---- */

static int do_create_file_owner_ok(sd_bus_message *msg, struct manager *m, sd_bus_error *e);

static int create_file(sd_bus_message *msg, struct manager *m, bool owner_ok, sd_bus_error *e)
{
	struct famfs_interleave_params ip;
	struct call_opts o = {0};
	struct famfs_file_spec spec = {0};
	struct famfs_err err = {0};
	struct famfs_fmap map;
	sd_bus_message *reply = NULL;
	char rel[FAMFS_MAX_PATHLEN];
	const char *path;
	struct fsys *f;
	uint64_t size;
	uint32_t mode, node;
	int r;

	r = sd_bus_message_read(msg, "stu", &path, &size, &mode);
	if (r < 0)
		return r;
	r = read_options(msg, "uid gid nstrips nbuckets chunk_size", &o, e);
	if (r < 0)
		return r;
	r = check_mode(mode, e, S_IFREG, &mode);
	if (r < 0)
		return r;
	if (!owner_ok && needs_owner_auth(m, msg, &o, mode & (S_ISUID | S_ISGID)))
		return ask_owner_auth(m, msg, do_create_file_owner_ok, e);
	r = resolve(m, path, &f, rel, e);
	if (r < 0)
		return r;
	if (rel[0] == '\0')
		return sd_bus_error_setf(e, ERR("InvalidPath"), "\"%s\" is the mount point itself", path);
	if (size == 0)
		return sd_bus_error_setf(e, ERR("InvalidArgument"),
					 "\"%s\": size 0: famfs files are preallocated, give a size above 0",
					 path);
	fill_ids(m, msg, &o);
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
			return sd_bus_error_setf(e, ERR("InvalidArgument"), "%s", err.msg);
		spec.interleave = &ip;
	}
	fsys_follow(f);
	r = famfs_fs_create_files(f->bt.fs, &spec, 1, &map, &node, &err);
	if (r < 0)
		return bus_error_from_errno(e, r, err.msg);
	fsys_note_new_node(f, node, NULL);
	fsys_update_health(f);
	bus_schedule_flush(m);
	r = sd_bus_message_new_method_return(msg, &reply);
	if (r >= 0)
		r = append_fmap(reply, &map);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	sd_bus_message_unref(reply);
	return r < 0 ? r : 1;
}

static int do_create_file(sd_bus_message *msg, struct manager *m, sd_bus_error *e)
{
	return create_file(msg, m, false, e);
}

static int do_create_file_owner_ok(sd_bus_message *msg, struct manager *m, sd_bus_error *e)
{
	return create_file(msg, m, true, e);
}

static int method_create_file(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return auth_check(userdata, msg, "org.famfs.manager.create-file", do_create_file, e);
}

static int do_create_files_owner_ok(sd_bus_message *msg, struct manager *m, sd_bus_error *e);

static int create_files(sd_bus_message *msg, struct manager *m, bool owner_ok, sd_bus_error *e)
{
	struct famfs_file_spec *specs = NULL;
	char (*rels)[FAMFS_MAX_PATHLEN] = NULL;
	uint32_t *nodes = NULL;
	struct call_opts o = {0};
	struct famfs_err err = {0};
	struct fsys *f = NULL;
	size_t n = 0, cap = 0;
	bool special = false;
	int r;

	r = sd_bus_message_enter_container(msg, 'a', "(stu)");
	if (r < 0)
		return r;
	for (;;) {
		const char *path;
		uint64_t size;
		uint32_t mode;
		struct fsys *g;

		r = sd_bus_message_read(msg, "(stu)", &path, &size, &mode);
		if (r < 0)
			goto out;
		if (r == 0)
			break;
		if (n == FAMFS_BATCH_MAX) {
			r = sd_bus_error_setf(e, ERR("InvalidArgument"),
					      "more than %d files in one batch", FAMFS_BATCH_MAX);
			goto out;
		}
		if (n == cap) {
			size_t c = cap ? cap * 2 : 256;
			void *a = realloc(specs, c * sizeof(*specs));

			if (a)
				specs = a;
			a = a ? realloc(rels, c * sizeof(*rels)) : NULL;
			if (!a) {
				r = -ENOMEM;
				goto out;
			}
			rels = a;
			cap = c;
		}
		{
			sd_bus_error inner = SD_BUS_ERROR_NULL;

			r = resolve(m, path, &g, rels[n], &inner);
			if (r < 0) {
				r = sd_bus_error_setf(e, inner.name, "element %zu (%s): %s", n, path, inner.message);
				sd_bus_error_free(&inner);
				goto out;
			}
		}
		if (f && g != f) {
			r = sd_bus_error_setf(e, ERR("InvalidArgument"),
					      "element %zu (%s): on another file system than element 0 (%s); a batch goes to one file system",
					      n, path, f->bt.mountpoint);
			goto out;
		}
		f = g;
		if (rels[n][0] == '\0') {
			r = sd_bus_error_setf(e, ERR("InvalidPath"), "element %zu (%s): the mount point itself",
					      n, path);
			goto out;
		}
		if (size == 0) {
			r = sd_bus_error_setf(e, ERR("InvalidArgument"),
					      "element %zu (%s): size 0: famfs files are preallocated, give a size above 0",
					      n, path);
			goto out;
		}
		{
			sd_bus_error inner = SD_BUS_ERROR_NULL;

			r = check_mode(mode, &inner, S_IFREG, &mode);
			if (r < 0) {
				r = sd_bus_error_setf(e, inner.name, "element %zu (%s): %s", n, path, inner.message);
				sd_bus_error_free(&inner);
				goto out;
			}
		}
		special |= (mode & (S_ISUID | S_ISGID)) != 0;
		/* path points into @msg, which outlives the call: messages name the caller's path. */
		specs[n] = (struct famfs_file_spec){ .size = size, .mode = mode, .display_path = path };
		n++;
	}
	r = sd_bus_message_exit_container(msg);
	if (r < 0)
		goto out;
	r = read_options(msg, "uid gid", &o, e);
	if (r < 0)
		goto out;
	if (!owner_ok && needs_owner_auth(m, msg, &o, special)) {
		r = ask_owner_auth(m, msg, do_create_files_owner_ok, e);
		goto out;
	}
	if (n == 0) {
		r = sd_bus_reply_method_return(msg, "u", 0u);
		goto out;
	}
	fill_ids(m, msg, &o);
	for (size_t k = 0; k < n; k++) {
		/* Only now: rels moved whenever it grew. */
		specs[k].relpath = rels[k];
		specs[k].uid = o.uid;
		specs[k].gid = o.gid;
	}
	nodes = calloc(n, sizeof(*nodes));
	if (!nodes) {
		r = -ENOMEM;
		goto out;
	}
	fsys_follow(f);
	r = famfs_fs_create_files(f->bt.fs, specs, n, NULL, nodes, &err);
	if (r < 0) {
		r = bus_error_from_errno(e, r, err.msg);
		goto out;
	}
	for (size_t k = 0; k < n; k++)
		fsys_note_new_node(f, nodes[k], NULL);
	fsys_update_health(f);
	bus_schedule_flush(m);
	r = sd_bus_reply_method_return(msg, "u", (uint32_t)n);
out:
	free(specs);
	free(rels);
	free(nodes);
	return r;
}

static int do_create_files(sd_bus_message *msg, struct manager *m, sd_bus_error *e)
{
	return create_files(msg, m, false, e);
}

static int do_create_files_owner_ok(sd_bus_message *msg, struct manager *m, sd_bus_error *e)
{
	return create_files(msg, m, true, e);
}

static int method_create_files(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return auth_check(userdata, msg, "org.famfs.manager.create-file", do_create_files, e);
}

static int do_mkdir_owner_ok(sd_bus_message *msg, struct manager *m, sd_bus_error *e);

static int make_dir(sd_bus_message *msg, struct manager *m, bool owner_ok, sd_bus_error *e)
{
	struct call_opts o = {0};
	struct famfs_err err = {0};
	char rel[FAMFS_MAX_PATHLEN];
	const struct famfs_ns_node *nd;
	const char *path;
	struct fsys *f;
	uint32_t mode, node;
	uint64_t before;
	int r;

	r = sd_bus_message_read(msg, "su", &path, &mode);
	if (r < 0)
		return r;
	r = read_options(msg, "uid gid parents", &o, e);
	if (r < 0)
		return r;
	r = check_mode(mode, e, S_IFDIR, &mode);
	if (r < 0)
		return r;
	if (!owner_ok && needs_owner_auth(m, msg, &o, mode & (S_ISUID | S_ISGID)))
		return ask_owner_auth(m, msg, do_mkdir_owner_ok, e);
	r = resolve(m, path, &f, rel, e);
	if (r < 0)
		return r;
	if (rel[0] == '\0') {
		if (o.parents && f->bt.fs->master)
			return sd_bus_reply_method_return(msg, "");
		if (!f->bt.fs->master)
			return bus_error_from_errno(e, -EPERM, "this host is not the master of the file system");
		return sd_bus_error_setf(e, ERR("Exists"), "\"%s\" is the mount point itself", path);
	}
	fill_ids(m, msg, &o);
	fsys_follow(f);
	before = f->bt.fs->applied;
	r = famfs_fs_mkdir(f->bt.fs, rel, mode, o.uid, o.gid, o.parents, &node, &err);
	if (r < 0)
		return bus_error_from_errno(e, r, err.msg);
	/* Every level logged is a new node, the deepest last. */
	for (uint64_t i = before; i < f->bt.fs->applied; i++) {
		const struct famfs_log_entry *en = &famfs_log_entries(f->bt.fs->log)[i];
		uint32_t id = famfs_ns_lookup(f->bt.fs->ns, en->mkdir.relpath,
					      strnlen(en->mkdir.relpath, FAMFS_MAX_PATHLEN));

		nd = famfs_ns_node(f->bt.fs->ns, id);
		if (nd && nd->index == (int64_t)i)
			fsys_note_new_node(f, id, NULL);
	}
	fsys_update_health(f);
	bus_schedule_flush(m);
	return sd_bus_reply_method_return(msg, "");
}

static int do_mkdir(sd_bus_message *msg, struct manager *m, sd_bus_error *e)
{
	return make_dir(msg, m, false, e);
}

static int do_mkdir_owner_ok(sd_bus_message *msg, struct manager *m, sd_bus_error *e)
{
	return make_dir(msg, m, true, e);
}

static int method_mkdir(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return auth_check(userdata, msg, "org.famfs.manager.mkdir", do_mkdir, e);
}

/* Looks up an existing node; files only with @want_file. */
static int lookup_node(struct manager *m, const char *path, bool want_file, struct fsys **ret_f,
		       uint32_t *ret_node, sd_bus_error *e)
{
	char rel[FAMFS_MAX_PATHLEN];
	const struct famfs_ns_node *nd;
	struct fsys *f;
	uint32_t id;
	int r;

	r = resolve(m, path, &f, rel, e);
	if (r < 0)
		return r;
	fsys_follow(f);
	id = famfs_ns_lookup(f->bt.fs->ns, rel, strlen(rel));
	if (id == FAMFS_NS_NONE)
		return sd_bus_error_setf(e, ERR("NotFound"), "\"%s\" does not exist in %s", path,
					 f->bt.mountpoint);
	nd = famfs_ns_node(f->bt.fs->ns, id);
	if (want_file && nd->kind != FAMFS_NS_FILE)
		return sd_bus_error_setf(e, ERR("IsDirectory"), "\"%s\" is a directory", path);
	*ret_f = f;
	*ret_node = id;
	return 0;
}

/*
 * The kernel's check for a caller reaching node @id of @f: search (x) on
 * every directory above it, then @want (R_OK, W_OK, X_OK) on the node.
 * Denied: AccessDenied naming the path and what stood in the way.
 */
static int check_access(struct manager *m, sd_bus_message *msg, struct fsys *f, uint32_t id,
			int want, sd_bus_error *e)
{
	const struct famfs_ns_node *nd = famfs_ns_node(f->bt.fs->ns, id);
	const struct famfs_ns_node *blocker = NULL;
	struct caller c;
	char *target, *where;
	int r;

	r = auth_caller(m, msg, &c);
	if (r < 0)
		return sd_bus_error_setf(e, ERR("AccessDenied"), "cannot tell who sent the call: %s",
					 strerror(-r));
	for (uint32_t p = nd->parent; p != FAMFS_NS_NONE && !blocker;) {
		const struct famfs_ns_node *pn = famfs_ns_node(f->bt.fs->ns, p);

		if (!caller_may(&c, pn->mode, pn->uid, pn->gid, true, X_OK))
			blocker = pn;
		p = pn->parent;
	}
	if (!blocker && caller_may(&c, nd->mode, nd->uid, nd->gid, nd->kind == FAMFS_NS_DIR, want))
		return 0;
	f->m->calls_denied++;
	target = fsys_abspath(f, nd->path);
	where = blocker ? fsys_abspath(f, blocker->path) : NULL;
	if (blocker)
		r = sd_bus_error_setf(e, ERR("AccessDenied"),
				      "uid %u may not reach %s: no search permission on %s (mode %04o, owner %u:%u)",
				      (unsigned)c.uid, target ? target : nd->path, where ? where : blocker->path,
				      blocker->mode, blocker->uid, blocker->gid);
	else
		r = sd_bus_error_setf(e, ERR("AccessDenied"), "uid %u may not %s %s (mode %04o, owner %u:%u)",
				      (unsigned)c.uid,
				      want & W_OK ? "write" : nd->kind == FAMFS_NS_DIR ? "list" : "read",
				      target ? target : nd->path, nd->mode, nd->uid, nd->gid);
	free(target);
	free(where);
	return r;
}

/* lookup_node(), then check_access() for @want. */
static int lookup_access(struct manager *m, sd_bus_message *msg, const char *path, bool want_file,
			 int want, struct fsys **ret_f, uint32_t *ret_node, sd_bus_error *e)
{
	int r;

	r = lookup_node(m, path, want_file, ret_f, ret_node, e);
	if (r < 0)
		return r;
	return check_access(m, msg, *ret_f, *ret_node, want, e);
}

/*
 * GetFileMap → (t size, u mode, u uid, u gid, a(ttt) extents); GetFileLayout
 * adds (u extent type, t chunk size) before the extents.  The entry is copied
 * and checked again before its extents go out.
 */
static int reply_file_map(sd_bus_message *msg, struct manager *m, bool layout, sd_bus_error *e)
{
	const struct famfs_ns_node *nd;
	sd_bus_message *reply = NULL;
	struct famfs_log_entry en;
	struct famfs_err err = {0};
	const char *path;
	struct fsys *f;
	uint32_t id;
	int r;

	r = sd_bus_message_read(msg, "s", &path);
	if (r < 0)
		return r;
	r = lookup_access(m, msg, path, true, R_OK, &f, &id, e);
	if (r < 0)
		return r;
	r = famfs_fs_read_entry(f->bt.fs, id, &en, &err);
	if (r < 0)
		return bus_error_from_errno(e, r, err.msg);
	nd = famfs_ns_node(f->bt.fs->ns, id);
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
	sd_bus_message_unref(reply);
	return r;
}

static int do_get_file_map(sd_bus_message *msg, struct manager *m, sd_bus_error *e)
{
	return reply_file_map(msg, m, false, e);
}

static int do_get_file_layout(sd_bus_message *msg, struct manager *m, sd_bus_error *e)
{
	return reply_file_map(msg, m, true, e);
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
		r = append_name(reply, name);
	if (r >= 0)
		r = sd_bus_message_append(reply, "tuuu", nd->size, kind | nd->mode, nd->uid, nd->gid);
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	return r;
}

static int reply_list_files(sd_bus_message *msg, void *userdata, bool raw, sd_bus_error *e)
{
	const struct famfs_ns_node *nd;
	sd_bus_message *reply = NULL;
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
	nd = famfs_ns_node(f->bt.fs->ns, id);
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
			const struct famfs_ns_node *cn = famfs_ns_node(f->bt.fs->ns, c);

			r = append_list_item(reply, cn, raw);
			c = cn->next_sibling;
		}
	}
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	sd_bus_message_unref(reply);
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

static const char *role_name(const struct fsys *f)
{
	if (!f->bt.fs)
		return "unknown";
	return f->bt.fs->master ? "master" : "client";
}

static int method_list_file_systems(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	struct manager *m = userdata;
	sd_bus_message *reply = NULL;
	int r;

	r = sd_bus_message_new_method_return(msg, &reply);
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'a', "(osssss)");
	for (struct fsys *f = m->fsys; f && r >= 0; f = f->next) {
		r = sd_bus_message_open_container(reply, 'r', "osssss");
		if (r >= 0)
			r = sd_bus_message_append(reply, "os", f->object_path, f->bt.uuid);
		if (r >= 0)
			r = append_name(reply, f->bt.device);
		if (r >= 0)
			r = append_name(reply, f->bt.mountpoint);
		if (r >= 0)
			r = sd_bus_message_append(reply, "ss", role_name(f), health_name(f->health));
		if (r >= 0)
			r = sd_bus_message_close_container(reply);
	}
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	sd_bus_message_unref(reply);
	return r;
}

/* Problems kernel_check_mount() found, kept for the reply. */
struct mount_problems {
	struct {
		char code[32];
		int64_t index;
		char path[FAMFS_MAX_PATHLEN + 256];
		char msg[FAMFS_ERR_MSG_MAX];
	} *items;
	size_t n, cap;
};

static void on_mount_problem(void *userdata, const char *code, int64_t index, const char *relpath,
			     const char *message)
{
	struct mount_problems *mp = userdata;

	if (mp->n == mp->cap) {
		size_t c = mp->cap ? mp->cap * 2 : 16;
		void *p = mp->cap < MAX_FINDINGS_REPLY ? realloc(mp->items, c * sizeof(*mp->items)) : NULL;

		if (!p) {
			mp->n++;    /* counted, not listed */
			return;
		}
		mp->items = p;
		mp->cap = c;
	}
	if (mp->n >= mp->cap) {
		mp->n++;
		return;
	}
	snprintf(mp->items[mp->n].code, sizeof(mp->items[0].code), "%s", code);
	mp->items[mp->n].index = index;
	snprintf(mp->items[mp->n].path, sizeof(mp->items[0].path), "%s", relpath);
	snprintf(mp->items[mp->n].msg, sizeof(mp->items[0].msg), "%s", message);
	mp->n++;
}

static int append_finding(sd_bus_message *reply, const char *severity, const char *code,
			  int64_t index, const char *path, const char *message)
{
	int r;

	r = sd_bus_message_open_container(reply, 'r', "ssxss");
	if (r >= 0)
		r = sd_bus_message_append(reply, "ssx", severity, code, index);
	if (r >= 0)
		r = append_name(reply, path);
	if (r >= 0)
		r = append_name(reply, message);
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	return r;
}

static int reply_check(sd_bus_message *msg, struct fsys *f, sd_bus_error *e)
{
	struct mount_problems mp = {0};
	struct famfs_check_report *rep = NULL;
	struct famfs_device *dev = NULL;
	struct famfs_err err = {0};
	sd_bus_message *reply = NULL;
	const char *verdict;
	size_t errors;
	int r;

	/* A mount disabled by a media failure cannot be read: the device still can. */
	if (f->bt.fs && !f->media_error[0]) {
		const uint8_t *base;
		uint64_t readable;

		fsys_medium(f, &base, &readable);
		r = famfs_check_view(base, readable, f->bt.fs->dev->size, 0, &rep);
	} else {
		r = famfs_device_open(f->bt.device, 0, &dev, &err);
		if (r < 0)
			return bus_error_from_errno(e, -EIO, err.msg);
		r = famfs_check_medium(dev->base, dev->size, 0, &rep);
	}
	if (r < 0)
		goto out;
	errors = famfs_check_report_errors(rep);
	/* A kernel mount must also match the log, file by file. */
	if (f->bt.fs && f->bt.ops == &backend_kernel && !f->media_error[0]) {
		r = kernel_check_mount(&f->bt, on_mount_problem, &mp, &err);
		if (r < 0)
			on_mount_problem(&mp, "mount-unchecked", -1, "", err.msg);
	}
	if (f->media_error[0])
		on_mount_problem(&mp, "media-failure", -1, "", f->media_error);
	errors += mp.n;
	verdict = errors == 0 ? "clean" : (famfs_check_repair_fixes_all(rep) && mp.n == 0) ? "torn-tail" :
		  "damaged";
	r = sd_bus_message_new_method_return(msg, &reply);
	if (r >= 0)
		r = sd_bus_message_append(reply, "stt", verdict, (uint64_t)errors,
					  (uint64_t)rep->by_severity[FAMFS_SEV_WARNING]);
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'a', "(ssxss)");
	for (size_t k = 0; r >= 0 && k < rep->nfindings && k < MAX_FINDINGS_REPLY; k++) {
		const struct famfs_finding *x = &rep->findings[k];

		r = append_finding(reply, famfs_severity_name(x->severity), famfs_finding_name(x->code),
				   x->index, x->path, x->message);
	}
	for (size_t k = 0; r >= 0 && k < mp.n && k < mp.cap && k < MAX_FINDINGS_REPLY; k++)
		r = append_finding(reply, "error", mp.items[k].code, mp.items[k].index, mp.items[k].path,
				   mp.items[k].msg);
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
out:
	sd_bus_message_unref(reply);
	famfs_check_report_free(rep);
	famfs_device_close(dev);
	free(mp.items);
	return r;
}

static int do_check(sd_bus_message *msg, struct manager *m, sd_bus_error *e)
{
	struct call_opts o = {0};
	struct famfs_err err = {0};
	char rel[FAMFS_MAX_PATHLEN];
	const char *path;
	struct fsys *f;
	int r;

	r = sd_bus_message_read(msg, "s", &path);
	if (r < 0)
		return r;
	r = read_options(msg, "", &o, e);
	if (r < 0)
		return r;
	r = manager_resolve(m, path, &f, rel, sizeof(rel), &err);
	if (r < 0)
		return bus_error_from_errno(e, r, err.msg);
	return reply_check(msg, f, e);
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
	struct call_opts o;
	struct fsys *f;
	uint32_t id;
	bool device;
};

static int open_file_plan(sd_bus_message *msg, struct manager *m, struct open_request *q,
			  sd_bus_error *e)
{
	uid_t uid;
	int r;

	*q = (struct open_request){0};
	r = sd_bus_message_read(msg, "s", &q->path);
	if (r < 0)
		return r;
	r = read_options(msg, "writable descriptor", &q->o, e);
	if (r < 0)
		return r;
	if (q->o.descriptor && strcmp(q->o.descriptor, "auto") && strcmp(q->o.descriptor, "device") &&
	    strcmp(q->o.descriptor, "file"))
		return sd_bus_error_setf(e, ERR("InvalidArgument"),
					 "option \"descriptor\" is \"%s\": it must be auto, device or file",
					 q->o.descriptor);
	r = lookup_access(m, msg, q->path, true, q->o.writable ? R_OK | W_OK : R_OK, &q->f, &q->id, e);
	if (r < 0)
		return r;
	r = auth_sender_ids(m, msg, &uid, NULL);
	if (r < 0)
		return sd_bus_error_setf(e, ERR("AccessDenied"), "cannot tell who sent the call: %s",
					 strerror(-r));
	if (q->f->bt.ops->data_fd_is_file)
		q->device = false;      /* the backend's descriptor is the file alone */
	else if (q->o.descriptor && !strcmp(q->o.descriptor, "device"))
		q->device = true;
	else if (q->o.descriptor && !strcmp(q->o.descriptor, "file")) {
		if (q->o.writable || !q->f->bt.ops->open_copy)
			return sd_bus_error_setf(e, ERR("InvalidArgument"),
						 "%s: the %s backend has no %sdescriptor of a file alone; use WriteFile, or descriptor \"device\"",
						 q->path, q->f->bt.ops->name, q->o.writable ? "writable " : "");
		q->device = false;
	} else
		q->device = uid == 0 || q->o.writable || !q->f->bt.ops->open_copy;
	return sd_bus_message_rewind(msg, true);
}

static int open_file_device_ok(sd_bus_message *msg, struct manager *m, sd_bus_error *e);

/*
 * Decided again after every polkit answer, as the path may name another
 * file by then: a device descriptor only with @device_ok.
 */
static int open_file_finish(sd_bus_message *msg, struct manager *m, bool device_ok, sd_bus_error *e)
{
	struct open_request q;
	struct famfs_err err = {0};
	struct famfs_log_entry en;
	sd_bus_message *reply = NULL;
	const struct famfs_ns_node *nd;
	uint32_t type = 0;
	uint64_t chunk = 0;
	bool whole_file;
	int fd = -1, r;

	r = open_file_plan(msg, m, &q, e);
	if (r < 0)
		return r;
	if (q.device && !device_ok)
		return auth_check(m, msg, "org.famfs.manager.open-device", open_file_device_ok, e);
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
	nd = famfs_ns_node(q.f->bt.fs->ns, q.id);
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
	sd_bus_message_unref(reply);
	close(fd);
	return r;
}

static int open_file_device_ok(sd_bus_message *msg, struct manager *m, sd_bus_error *e)
{
	return open_file_finish(msg, m, true, e);
}

/* Past the writer's authorization, if any: the device needs its own. */
static int open_file_authorized(sd_bus_message *msg, struct manager *m, sd_bus_error *e)
{
	return open_file_finish(msg, m, false, e);
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
static int do_write_file(sd_bus_message *msg, struct manager *m, sd_bus_error *e)
{
	const unsigned need = F_SEAL_WRITE | F_SEAL_SHRINK;
	struct call_opts o = {0};
	struct famfs_err err = {0};
	struct famfs_log_entry en;
	const struct famfs_ns_node *nd;
	const char *path;
	struct fsys *f;
	struct stat st;
	uint32_t id;
	int seals, src, fd = -1, r;

	r = sd_bus_message_read(msg, "sh", &path, &src);
	if (r < 0)
		return r;
	r = read_options(msg, "", &o, e);
	if (r < 0)
		return r;
	r = lookup_access(m, msg, path, true, W_OK, &f, &id, e);
	if (r < 0)
		return r;
	nd = famfs_ns_node(f->bt.fs->ns, id);
	seals = fcntl(src, F_GET_SEALS);
	if (seals < 0 || ((unsigned)seals & need) != need || fstat(src, &st) < 0 || !S_ISREG(st.st_mode))
		return sd_bus_error_setf(e, ERR("InvalidArgument"),
					 "%s: the data must be a memfd sealed with F_SEAL_WRITE and F_SEAL_SHRINK",
					 path);
	if ((uint64_t)st.st_size > nd->size)
		return sd_bus_error_setf(e, ERR("InvalidArgument"),
					 "%s: %llu bytes of data do not fit in the file's %llu", path,
					 (unsigned long long)st.st_size, (unsigned long long)nd->size);
	if ((uint64_t)st.st_size > VIEW_COPY_MAX)
		return sd_bus_error_setf(e, ERR("InvalidArgument"),
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
		if (fd >= 0)
			close(fd);
	}
	if (r < 0)
		return bus_error_from_errno(e, r, err.msg);
	return sd_bus_reply_method_return(msg, "t", (uint64_t)st.st_size);
}

static int method_write_file(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	struct manager *m = userdata;
	struct call_opts o = {0};
	const char *path;
	struct fsys *f;
	uint32_t id;
	int src, r;

	/* Permissions first, as for OpenFile */
	r = sd_bus_message_read(msg, "sh", &path, &src);
	if (r >= 0)
		r = read_options(msg, "", &o, e);
	if (r < 0)
		return r;
	r = lookup_access(m, msg, path, true, W_OK, &f, &id, e);
	if (r < 0)
		return r;
	r = sd_bus_message_rewind(msg, true);
	if (r < 0)
		return r;
	return auth_check(m, msg, "org.famfs.manager.write-file", do_write_file, e);
}

static int do_replay_all(sd_bus_message *msg, struct manager *m, sd_bus_error *e)
{
	uint64_t before = 0, after = 0;

	for (struct fsys *f = m->fsys; f; f = f->next) {
		before += f->bt.fs ? f->bt.fs->replayed_total : 0;
		fsys_follow(f);
		after += f->bt.fs ? f->bt.fs->replayed_total : 0;
	}
	bus_schedule_flush(m);
	return sd_bus_reply_method_return(msg, "t", after - before);
}

static int method_replay_all(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return auth_check(userdata, msg, "org.famfs.manager.replay", do_replay_all, e);
}

static int prop_manager(sd_bus *bus, const char *path, const char *iface, const char *prop,
			sd_bus_message *reply, void *userdata, sd_bus_error *e)
{
	struct manager *m = userdata;

	if (!strcmp(prop, "Version"))
		return sd_bus_message_append(reply, "s", PACKAGE_VERSION);
	if (!strcmp(prop, "MountRoot"))
		return append_name(reply, m->cfg.mount_root);
	if (!strcmp(prop, "PollIntervalUSec"))
		return sd_bus_message_append(reply, "t", m->cfg.poll_ms * 1000);
	if (!strcmp(prop, "Polkit"))
		return sd_bus_message_append(reply, "b", m->cfg.polkit);
	if (!strcmp(prop, "FaultsPTE"))
		return sd_bus_message_append(reply, "t", m->faults[0]);
	if (!strcmp(prop, "FaultsPMD"))
		return sd_bus_message_append(reply, "t", m->faults[1]);
	if (!strcmp(prop, "FaultsPUD"))
		return sd_bus_message_append(reply, "t", m->faults[2]);
	return sd_bus_message_append(reply, "t", m->calls_denied);
}

static const sd_bus_vtable manager_vtable[] = {
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

static int prop_fs(sd_bus *bus, const char *path, const char *iface, const char *prop,
		   sd_bus_message *reply, void *userdata, sd_bus_error *e)
{
	struct fsys *f = userdata;
	uint64_t v;
	int r;

	if (!strcmp(prop, "Device"))
		return append_name(reply, f->bt.device);
	if (!strcmp(prop, "MountPoint"))
		return append_name(reply, f->bt.mountpoint);
	if (!strcmp(prop, "UUID"))
		return sd_bus_message_append(reply, "s", f->bt.uuid);
	if (!strcmp(prop, "Role"))
		return sd_bus_message_append(reply, "s", role_name(f));
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
		v = f->bt.fs ? f->bt.fs->replayed_total : 0;
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
static struct fsys *call_fsys(sd_bus_message *msg, struct manager *m, sd_bus_error *e)
{
	const char *obj = sd_bus_message_get_path(msg);
	struct fsys *f = obj ? manager_find_fsys_by_path(m, obj) : NULL;

	if (!f)
		sd_bus_error_setf(e, ERR("NotMounted"), "%s is no longer attached", obj ? obj : "the file system");
	return f;
}

static int do_fs_replay(sd_bus_message *msg, struct manager *m, sd_bus_error *e)
{
	struct fsys *f = call_fsys(msg, m, e);
	uint64_t before;

	if (!f)
		return -ENODEV;
	before = f->bt.fs ? f->bt.fs->replayed_total : 0;

	fsys_follow(f);
	bus_schedule_flush(f->m);
	return sd_bus_reply_method_return(msg, "t", (f->bt.fs ? f->bt.fs->replayed_total : 0) - before);
}

static int method_fs_replay(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	struct fsys *f = userdata;

	return auth_check(f->m, msg, "org.famfs.manager.replay", do_fs_replay, e);
}

static int do_fs_check(sd_bus_message *msg, struct manager *m, sd_bus_error *e)
{
	struct call_opts o = {0};
	struct fsys *f;
	int r;

	r = read_options(msg, "", &o, e);
	if (r < 0)
		return r;
	f = call_fsys(msg, m, e);
	if (!f)
		return -ENODEV;
	return reply_check(msg, f, e);
}

static int method_fs_check(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	struct fsys *f = userdata;

	return auth_check(f->m, msg, "org.famfs.manager.check", do_fs_check, e);
}

#define FS_PROP(name, sig) SD_BUS_PROPERTY(name, sig, prop_fs, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE)
#define FS_CONST(name, sig) SD_BUS_PROPERTY(name, sig, prop_fs, 0, SD_BUS_VTABLE_PROPERTY_CONST)

static const sd_bus_vtable fs_vtable[] = {
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
	SD_BUS_METHOD_WITH_ARGS("Check", SD_BUS_ARGS("a{sv}", options),
		SD_BUS_RESULT("s", verdict, "t", errors, "t", warnings, "a(ssxss)", findings),
		method_fs_check, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_SIGNAL_WITH_ARGS("FilesAdded", SD_BUS_ARGS("as", paths), 0),
	SD_BUS_VTABLE_END,
};

static int fs_find(sd_bus *bus, const char *path, const char *iface, void *userdata,
		   void **found, sd_bus_error *e)
{
	struct fsys *f = manager_find_fsys_by_path(userdata, path);

	if (!f)
		return 0;
	*found = f;
	return 1;
}

static int fs_enumerate(sd_bus *bus, const char *path, void *userdata, char ***nodes,
			sd_bus_error *e)
{
	struct manager *m = userdata;
	char **l = calloc(m->nfsys + 1, sizeof(*l));
	size_t n = 0;

	if (!l)
		return -ENOMEM;
	for (struct fsys *f = m->fsys; f; f = f->next) {
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

/* ---- change notification ---- */

static void emit_files_added(struct manager *m, struct fsys *f)
{
	sd_bus_message *s = NULL;
	int r;

	r = sd_bus_message_new_signal(m->bus, &s, f->object_path, FS_IFACE, "FilesAdded");
	if (r >= 0)
		r = sd_bus_message_open_container(s, 'a', "s");
	for (size_t i = 0; r >= 0 && i < f->npending; i++)
		r = append_name(s, f->pending[i]);
	if (r >= 0)
		r = sd_bus_message_close_container(s);
	if (r >= 0)
		r = sd_bus_send(m->bus, s, NULL);
	if (r < 0)
		fprintf(stderr, "%s: cannot send FilesAdded: %s\n", f->bt.mountpoint, strerror(-r));
	sd_bus_message_unref(s);
	for (size_t i = 0; i < f->npending; i++)
		free(f->pending[i]);
	f->npending = 0;
}

void bus_flush_changes(struct manager *m)
{
	for (struct fsys *f = m->fsys; f; f = f->next) {
		if (f->dirty && m->bus) {
			int r = sd_bus_emit_properties_changed(m->bus, f->object_path, FS_IFACE,
							       "Health", "HealthReasons", "Role", "UUID",
							       "Backend", "MountPoint", "LogEntriesUsed", "LogEntriesTotal", "Capacity",
							       "Allocated", "Free", "Files", "Directories",
							       "EntriesReplayed", "InvalidEntries",
							       "TornTailRetries", "LastReplay", NULL);
			if (r < 0)
				fprintf(stderr, "%s: cannot send PropertiesChanged: %s\n", f->bt.mountpoint,
					strerror(-r));
		}
		f->dirty = false;
		if (f->npending > 0 && m->bus)
			emit_files_added(m, f);
	}
}

void bus_update_faults(struct manager *m)
{
	struct timespec ts;
	uint64_t now, v[3];

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
	/* A busy mapping faults all the time: one PropertiesChanged a second at most. */
	if (m->faults_read_usec && now - m->faults_read_usec < 1000000)
		return;
	m->faults_read_usec = now;
	(void)kernel_module_fault_counters(v);
	if (memcmp(v, m->faults, sizeof(v)) == 0)
		return;
	memcpy(m->faults, v, sizeof(v));
	if (m->bus && sd_bus_emit_properties_changed(m->bus, MANAGER_PATH, MANAGER_IFACE, "FaultsPTE",
						     "FaultsPMD", "FaultsPUD", NULL) < 0)
		fprintf(stderr, "famfs-manager: cannot send PropertiesChanged for the fault counters\n");
}

static int on_flush(sd_event_source *s, void *userdata)
{
	bus_flush_changes(userdata);
	return 0;
}

void bus_schedule_flush(struct manager *m)
{
	if (m->flush)
		(void)sd_event_source_set_enabled(m->flush, SD_EVENT_ONESHOT);
}

int bus_add_fsys(struct manager *m, struct fsys *f)
{
	/* Objects exist through the fallback; announce late arrivals. */
	if (m->bus && sd_bus_is_ready(m->bus) > 0)
		return sd_bus_emit_object_added(m->bus, f->object_path);
	return 0;
}

int bus_setup(struct manager *m)
{
	int r;

	r = sd_bus_add_object_manager(m->bus, NULL, MANAGER_PATH);
	if (r < 0)
		return r;
	r = sd_bus_add_object_vtable(m->bus, NULL, MANAGER_PATH, MANAGER_IFACE, manager_vtable, m);
	if (r < 0)
		return r;
	r = sd_bus_add_fallback_vtable(m->bus, NULL, MANAGER_FS_PREFIX, FS_IFACE, fs_vtable, fs_find, m);
	if (r < 0)
		return r;
	r = sd_bus_add_node_enumerator(m->bus, NULL, MANAGER_FS_PREFIX, fs_enumerate, m);
	if (r < 0)
		return r;
	r = sd_event_add_defer(m->event, &m->flush, on_flush, m);
	if (r < 0)
		return r;
	(void)sd_event_source_set_enabled(m->flush, SD_EVENT_OFF);
	(void)sd_event_source_set_priority(m->flush, SD_EVENT_PRIORITY_IDLE);
	return sd_bus_attach_event(m->bus, m->event, SD_EVENT_PRIORITY_NORMAL);
}
