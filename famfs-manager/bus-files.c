// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Manager1 calls that read what is there: GetFileMap, GetFileLayout,
 * ListFiles, ListFilesRaw, and the data path, OpenFile and WriteFile.
 * Every one checks the caller's permissions as the kernel would (search
 * on the way, then read or write on the node).
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

static int append_extents(sd_bus_message *reply, const struct famfs_log_entry *en)
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
	} else {
		for (uint32_t k = 0; k < fm->nextents && k < FAMFS_MAX_SIMPLE_EXTENTS; k++) {
			r = sd_bus_message_append(reply, "(ttt)", fm->se[k].devindex, fm->se[k].offset,
						  fm->se[k].len);
			if (r < 0)
				return r;
		}
	}
	return sd_bus_message_close_container(reply);
}

/* A fresh copy of file @id's entry from the medium, checked again by the library. */
static int read_entry(struct fsys *f, uint32_t id, struct famfs_log_entry *en, sd_bus_error *e)
{
	struct famfs_err err = {0};
	int r;

	r = famfs_fs_read_entry(f->bt.fs, id, en, &err);
	return r < 0 ? bus_error_from_errno(e, r, err.msg) : 0;
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

	r = bus_resolve(s, path, &f, rel, e);
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
static int reply_file_map(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e)
{
	bool layout = sd_bus_message_is_method_call(msg, NULL, "GetFileLayout");
	const struct famfs_ns_node *nd;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	struct famfs_log_entry en;
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
	r = read_entry(f, id, &en, e);
	if (r < 0)
		return r;
	nd = famfs_ns_node(fsys_namespace(f), id);
	r = sd_bus_message_new_method_return(msg, &reply);
	if (r >= 0)
		r = sd_bus_message_append(reply, "tuuu", nd->size, nd->mode, nd->uid, nd->gid);
	if (r >= 0 && layout)
		r = sd_bus_message_append(reply, "ut", en.file.ext_type,
					  en.file.ext_type == FAMFS_EXT_INTERLEAVED ? en.file.ie[0].chunk_size : 0);
	if (r >= 0)
		r = append_extents(reply, &en);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	return r;
}

int method_get_file_map(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return auth_check(userdata, msg, "org.famfs.manager.read-map", reply_file_map, e);
}

int method_get_file_layout(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return auth_check(userdata, msg, "org.famfs.manager.read-map", reply_file_map, e);
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

int method_list_files(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return reply_list_files(msg, userdata, false, e);
}

int method_list_files_raw(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	return reply_list_files(msg, userdata, true, e);
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
	r = read_entry(q.f, q.id, &en, e);
	if (r < 0)
		return r;
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
		r = append_extents(reply, &en);
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

int method_open_file(sd_bus_message *msg, void *userdata, sd_bus_error *e)
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
	r = read_entry(f, id, &en, e);
	if (r < 0)
		return r;
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

int method_write_file(sd_bus_message *msg, void *userdata, sd_bus_error *e)
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

