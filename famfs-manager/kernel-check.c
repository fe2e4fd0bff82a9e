// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The mount-level part of `famfsctl check` (kernel_check_mount): the .meta
 * files, then a walk of the mount comparing every file's map with its log
 * entry, and every node of the namespace found there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "kernel-mount.h"
#include "kernel.h"

#define KERNEL_MAX_DEPTH         40
#define KERNEL_CHECK_MAX_NODES   (1u << 24)

DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir);

struct walk {
	struct famfs_fs *fs;
	const struct famfs_ns *ns;
	kernel_check_fn fn;
	void *userdata;
	uint8_t *seen;       /* one byte per namespace node */
	uint32_t nnodes;
	int problems;
};

__attribute__((format(printf, 5, 6)))
static void problem(struct walk *w, const char *code, int64_t index, const char *rel, const char *fmt, ...)
{
	char msg[FAMFS_ERR_MSG_MAX];
	va_list ap;
	int n = snprintf(msg, sizeof(msg), "\"%s\": ", rel);

	if (n < 0 || (size_t)n >= sizeof(msg))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	w->problems++;
	if (w->fn)
		w->fn(w->userdata, code, index, rel, msg);
}

static void check_file(struct walk *w, int fd, const char *rel, uint32_t id)
{
	const struct famfs_ns_node *n = famfs_ns_node(w->ns, id);
	struct famfs_ioc_get_fmap got = {0};
	struct famfs_err e2 = {0};
	struct famfs_log_entry e;
	struct kernel_fmap km;

	if (famfs_fs_read_entry(w->fs, id, &e, &e2) < 0 || kernel_fmap_from_entry(&e, &km, &e2) < 0) {
		problem(w, "mount-bad-entry", n->index, rel, "its log entry cannot be mapped: %s", e2.msg);
		return;
	}
	if (ioctl(fd, FAMFSIOC_MAP_GET_V2, &got) < 0) {
		problem(w, "mount-unmapped", n->index, rel, "the file in the mount has no famfs map: %s",
			strerror(errno));
		return;
	}
	if (kernel_fmap_compare(&got, &km, &e2) < 0)
		problem(w, "mount-map-differs", n->index, rel, "the file's map differs from its log entry: %s",
			e2.msg);
}

static void walk_dir(struct walk *w, int dir_fd, const char *prefix, int depth);

/* One entry @name of directory @d, @rel below the root; directories recurse. */
static void check_entry(struct walk *w, DIR *d, const char *name, const char *rel, size_t rel_len, int depth)
{
	const struct famfs_ns_node *n;
	_cleanup_close_ int fd = -1;
	struct stat st;
	uint32_t id;

	id = famfs_ns_lookup(w->ns, rel, rel_len);
	if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		problem(w, "mount-unreadable", -1, rel, "cannot stat: %s", strerror(errno));
		return;
	}
	if (id == FAMFS_NS_NONE) {
		problem(w, "mount-unknown", -1, rel, "%s in the mount that the log does not know",
			S_ISDIR(st.st_mode) ? "a directory" : S_ISREG(st.st_mode) ? "a file" : "an object");
		return;
	}
	if (id < w->nnodes)
		w->seen[id] = 1;
	n = famfs_ns_node(w->ns, id);
	if (S_ISDIR(st.st_mode) != (n->kind == FAMFS_NS_DIR)) {
		problem(w, "mount-type-differs", n->index, rel, "is a %s in the mount and a %s in the log",
			S_ISDIR(st.st_mode) ? "directory" : "file", S_ISDIR(st.st_mode) ? "file" : "directory");
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		fd = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			problem(w, "mount-unreadable", -1, rel, "cannot open: %s", strerror(errno));
		else
			walk_dir(w, TAKE_FD(fd), rel, depth + 1);
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		problem(w, "mount-type-differs", n->index, rel, "is neither a file nor a directory in the mount");
		return;
	}
	fd = openat(dirfd(d), name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		problem(w, "mount-unreadable", -1, rel, "cannot open: %s", strerror(errno));
		return;
	}
	check_file(w, fd, rel, id);
}

/* Walks directory @dir_fd (closed here), @prefix below the root ("" for the root). */
static void walk_dir(struct walk *w, int dir_fd, const char *prefix, int depth)
{
	_cleanup_close_ int dfd = dir_fd;
	_cleanup_(closedirp) DIR *d = NULL;
	struct dirent *de;

	if (depth > KERNEL_MAX_DEPTH) {
		problem(w, "mount-too-deep", -1, prefix, "directories nest deeper than %d", KERNEL_MAX_DEPTH);
		return;
	}
	d = fdopendir(dfd);
	if (!d) {
		problem(w, "mount-unreadable", -1, prefix, "cannot read the directory: %s", strerror(errno));
		return;
	}
	TAKE_FD(dfd);
	while ((de = readdir(d)) != NULL) {
		char rel[FAMFS_MAX_PATHLEN + 256];
		int n;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!prefix[0] && !strcmp(de->d_name, ".meta"))
			continue;
		n = snprintf(rel, sizeof(rel), "%s%s%s", prefix, prefix[0] ? "/" : "", de->d_name);
		if (n < 0 || (size_t)n >= sizeof(rel))
			continue;
		check_entry(w, d, de->d_name, rel, (size_t)n, depth);
	}
}

static void check_meta_file(struct walk *w, struct backend_target *t, int root, enum kernel_meta_file which)
{
	struct famfs_err e = {0};

	if (kernel_meta_file(t, root, which, &e) < 0)
		problem(w, "mount-meta", -1, kernel_meta_file_path(which), "%s", e.msg);
}

int kernel_check_mount(struct backend_target *t, kernel_check_fn fn, void *userdata, struct famfs_err *err)
{
	int root = kernel_ready_root(t);
	struct walk w = { .fs = t->fs, .fn = fn, .userdata = userdata };
	_cleanup_free_ uint8_t *seen = NULL;
	int fd;

	if (root < 0 || !t->fs)
		return famfs_err_set(err, -ENODEV, "%s is not mounted by the kernel backend",
				     t->mountpoint ? t->mountpoint : t->device);
	w.ns = famfs_fs_namespace(t->fs);
	while (famfs_ns_node(w.ns, w.nnodes) && w.nnodes < KERNEL_CHECK_MAX_NODES)
		w.nnodes++;
	w.seen = seen = calloc(w.nnodes ? w.nnodes : 1, 1);
	if (!seen)
		return famfs_err_set(err, -ENOMEM, "out of memory");
	check_meta_file(&w, t, root, KERNEL_META_SUPERBLOCK);
	check_meta_file(&w, t, root, KERNEL_META_LOG);
	fd = kernel_open_beneath(root, ".", O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		return famfs_err_set(err, fd, "cannot open %s: %s", t->mountpoint, strerror(-fd));
	walk_dir(&w, fd, "", 0);
	for (uint32_t id = 1; id < w.nnodes; id++) {
		const struct famfs_ns_node *n = famfs_ns_node(w.ns, id);

		if (!w.seen[id])
			problem(&w, "mount-missing", n->index, n->path, "the log has this %s; the mount does not",
				n->kind == FAMFS_NS_DIR ? "directory" : "file");
	}
	return w.problems;
}
