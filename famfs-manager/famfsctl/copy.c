// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cp: local files and (with -r) directory trees into a famfs file system,
 * as cp(1) takes its arguments: "cp FILE PATH", "cp FILE... DIR",
 * "cp -r DIR PATH".  famfs has no delete and no overwrite, so everything
 * that can be known beforehand is checked before anything is created: every
 * source (type, size, the tree under it), the target (directory or not,
 * nothing already there), every new path against the famfs path rules, and
 * enough free log entries and space.  Then the directories are made, the
 * files created (one CreateFiles batch: all or none), and their bytes copied.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "client.h"
#include "data.h"
#include "escape.h"
#include "famfsctl.h"
#include "message.h"
#include "omf.h"
#include "path.h"
#include "units.h"

#define CP_USAGE                                                                                   \
	"usage: famfsctl cp [-r] [-m MODE] [-N STRIPS [-B BUCKETS] [-C CHUNK]] LOCAL PATH\n"       \
	"       famfsctl cp [-r] [-m MODE] [-N STRIPS [-B BUCKETS] [-C CHUNK]] LOCAL... DIRECTORY"

struct cp_item {
	char *src;                  /* local path */
	char *dst;                  /* famfs path, escaped */
	bool dir;
	uint64_t size;
	uint32_t mode;
};

struct cp_plan {
	struct cp_item *v;
	size_t n, cap, nfiles;
	uint64_t units;             /* allocation units the files need at least */
};

static void cp_plan_clear(struct cp_plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].src);
		free(p->v[i].dst);
	}
	free(p->v);
	*p = (struct cp_plan){ 0 };
}

static int plan_add(struct cp_plan *p, char *src, char *dst, bool dir, uint64_t size, uint32_t mode)
{
	if (!src || !dst)
		goto nomem;
	if (p->n == p->cap) {
		size_t c = p->cap ? p->cap * 2 : 16;
		struct cp_item *v = realloc(p->v, c * sizeof(*v));

		if (!v)
			goto nomem;
		p->v = v;
		p->cap = c;
	}
	p->v[p->n++] = (struct cp_item){ src, dst, dir, size, mode };
	if (!dir) {
		p->nfiles++;
		p->units += size / FAMFS_ALLOC_UNIT + (size % FAMFS_ALLOC_UNIT != 0);
	}
	return 0;
nomem:
	free(src);
	free(dst);
	return tool_error_errno(-ENOMEM, "cannot plan the copy: %m");
}

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir);
	char *s;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (asprintf(&s, "%.*s/%s", (int)n, dir, name) < 0)
		return NULL;
	return s;
}

/* The last component of a local path, trailing slashes ignored; a new string. */
static char *local_basename(const char *path)
{
	size_t n = strlen(path);
	const char *b;

	while (n > 1 && path[n - 1] == '/')
		n--;
	b = memrchr(path, '/', n);
	b = b ? b + 1 : path;
	return strndup(b, n - (size_t)(b - path));
}

/* A regular file to copy: not empty (famfs files are preallocated). */
static int check_file(const char *src, const struct stat *st)
{
	if (st->st_size == 0)
		return tool_error_errno(-EINVAL, "cannot copy %s: it is empty, and famfs files are preallocated and cannot be empty",
					src);
	return 0;
}

static int walk(struct cp_plan *p, const char *src, const char *dst, uint32_t file_mode, bool have_mode);

/* One source or tree member, already stat()ed. */
static int plan_entry(struct cp_plan *p, const char *src, const char *dst, const struct stat *st, bool recursive,
		      uint32_t file_mode, bool have_mode)
{
	int r;

	if (S_ISDIR(st->st_mode)) {
		if (!recursive)
			return tool_error_errno(-EISDIR, "cannot copy %s: it is a directory (use -r)", src);
		r = plan_add(p, strdup(src), strdup(dst), true, 0, st->st_mode & 0777);
		if (r < 0)
			return r;
		return walk(p, src, dst, file_mode, have_mode);
	}
	if (S_ISLNK(st->st_mode))
		return tool_error_errno(-EINVAL, "cannot copy %s: a symbolic link, and famfs has none", src);
	if (!S_ISREG(st->st_mode))
		return tool_error_errno(-EINVAL, "cannot copy %s: not a regular file or directory", src);
	r = check_file(src, st);
	if (r < 0)
		return r;
	return plan_add(p, strdup(src), strdup(dst), false, (uint64_t)st->st_size,
			have_mode ? file_mode : (uint32_t)(st->st_mode & 0777));
}

static int skip_dots(const struct dirent *d)
{
	return strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0;
}

/* The tree under the local directory @src, in name order, a directory before what it holds. */
static int walk(struct cp_plan *p, const char *src, const char *dst, uint32_t file_mode, bool have_mode)
{
	struct dirent **names = NULL;
	int n, r = 0;

	n = scandir(src, &names, skip_dots, alphasort);
	if (n < 0)
		return tool_error_errno(-errno, "cannot read the directory %s: %m", src);
	for (int i = 0; i < n; i++) {
		_cleanup_free_ char *csrc = NULL, *cname = NULL, *cdst = NULL;
		struct stat st;

		if (r >= 0) {
			csrc = join(src, names[i]->d_name);
			cname = famfs_escape_dup(names[i]->d_name);
			cdst = cname ? join(dst, cname) : NULL;
			if (!csrc || !cdst)
				r = tool_error_errno(-ENOMEM, "cannot plan the copy: %m");
			else if (lstat(csrc, &st) < 0)
				r = tool_error_errno(-errno, "cannot copy %s: %m", csrc);
			else
				r = plan_entry(p, csrc, cdst, &st, true, file_mode, have_mode);
		}
		free(names[i]);
	}
	free(names);
	return r;
}

/* ---- the target ---- */

enum target_kind { TARGET_MISSING, TARGET_FILE, TARGET_DIR };

static bool same_name(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	if (famfs_unescape(a, ra, sizeof(ra), NULL) < 0 || famfs_unescape(b, rb, sizeof(rb), NULL) < 0)
		return strcmp(a, b) == 0;
	return strcmp(ra, rb) == 0;
}

/* The file system @path (escaped) is under, by the longest mount point. */
static const struct fsinfo *fs_of(const struct fsinfo_list *l, const char *path)
{
	const struct fsinfo *best = NULL;
	char raw[PATH_MAX], mp[PATH_MAX];
	size_t best_len = 0;

	if (famfs_unescape(path, raw, sizeof(raw), NULL) < 0)
		return NULL;
	for (size_t i = 0; i < l->n; i++) {
		size_t n;

		if (!l->v[i].mountpoint || famfs_unescape(l->v[i].mountpoint, mp, sizeof(mp), NULL) < 0)
			continue;
		n = strlen(mp);
		if (n > best_len && strncmp(raw, mp, n) == 0 && (raw[n] == '\0' || raw[n] == '/')) {
			best = &l->v[i];
			best_len = n;
		}
	}
	return best;
}

static bool is_mountpoint(const struct fsinfo *fs, const char *path)
{
	char raw[PATH_MAX], mp[PATH_MAX];
	size_t n;

	if (famfs_unescape(path, raw, sizeof(raw), NULL) < 0 ||
	    famfs_unescape(fs->mountpoint, mp, sizeof(mp), NULL) < 0)
		return false;
	n = strlen(raw);
	while (n > 1 && raw[n - 1] == '/')
		n--;
	return n == strlen(mp) && strncmp(raw, mp, n) == 0;
}

/*
 * Whether the famfs @path is a directory, a file or not there, from its
 * parent's listing (ListFiles of a file lists the file itself, which a
 * directory holding one entry of its own name would also give).  A parent
 * that is missing or a file counts as missing: the creation is refused
 * later, before anything is made.
 */
static int target_kind(const struct fsinfo *fs, const char *path, enum target_kind *ret)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_(listing_clear) struct listing l = { 0 };
	_cleanup_free_ char *parent = NULL, *name = NULL;
	size_t n = strlen(path);
	const char *slash;
	int r;

	if (is_mountpoint(fs, path)) {
		*ret = TARGET_DIR;
		return 0;
	}
	while (n > 1 && path[n - 1] == '/')
		n--;
	slash = memrchr(path, '/', n);
	if (!slash)
		return tool_error_errno(-EINVAL, "cannot copy to %s: not an absolute path", path);
	parent = strndup(path, slash == path ? 1 : (size_t)(slash - path));
	name = strndup(slash + 1, n - (size_t)(slash + 1 - path));
	if (!parent || !name)
		return tool_error_errno(-ENOMEM, "cannot copy to %s: %m", path);
	*ret = TARGET_MISSING;
	r = client_list_files(parent, &l, &e);
	if (r < 0 && (sd_bus_error_has_name(&e, "org.famfs.Error.NotFound") ||
		      sd_bus_error_has_name(&e, "org.famfs.Error.NotDirectory")))
		return 0;
	if (r < 0)
		return client_error("copy to", path, &e, r);
	for (size_t i = 0; i < l.n; i++)
		if (same_name(l.entries[i].name, name))
			*ret = S_ISDIR(l.entries[i].mode) ? TARGET_DIR : TARGET_FILE;
	return 0;
}

/* ---- checks of the whole plan ---- */

static int cmp_dst(const void *a, const void *b)
{
	const struct cp_item *const *x = a, *const *y = b;

	return strcmp((*x)->dst, (*y)->dst);
}

/* Every new path: the famfs path rules (path.h), and no path twice. */
static int check_paths(const struct cp_plan *p, const struct fsinfo *fs)
{
	_cleanup_free_ const struct cp_item **sorted = NULL;
	char mp[PATH_MAX], raw[PATH_MAX], rel[FAMFS_MAX_PATHLEN];

	if (famfs_unescape(fs->mountpoint, mp, sizeof(mp), NULL) < 0)
		return tool_error_errno(-EINVAL, "cannot copy: the mount point %s cannot be read", fs->mountpoint);
	for (size_t i = 0; i < p->n; i++) {
		struct famfs_err err = { 0 };

		if (famfs_unescape(p->v[i].dst, raw, sizeof(raw), &err) < 0 ||
		    famfs_path_relative(mp, raw, rel, sizeof(rel), &err) < 0)
			return tool_error_errno(-EINVAL, "cannot copy %s to %s: %s", p->v[i].src, p->v[i].dst,
						err.msg);
	}
	sorted = calloc(p->n, sizeof(*sorted));
	if (!sorted)
		return tool_error_errno(-ENOMEM, "cannot plan the copy: %m");
	for (size_t i = 0; i < p->n; i++)
		sorted[i] = &p->v[i];
	qsort(sorted, p->n, sizeof(*sorted), cmp_dst);
	for (size_t i = 1; i < p->n; i++)
		if (strcmp(sorted[i - 1]->dst, sorted[i]->dst) == 0)
			return tool_error_errno(-EEXIST, "cannot copy both %s and %s to %s", sorted[i - 1]->src,
						sorted[i]->src, sorted[i]->dst);
	return 0;
}

/* Enough free log entries, and at least the 2 MiB units the files need unstriped. */
static int check_room(const struct cp_plan *p, const struct fsinfo *fs)
{
	uint64_t free_entries = fs->log_total > fs->log_used ? fs->log_total - fs->log_used : 0;
	char b1[32], b2[32];

	if (p->n > free_entries)
		return tool_error_errno(-ENOSPC, "cannot copy: %zu files and directories need as many log entries, and the log of %s has %llu free",
					p->n, fs->mountpoint, (unsigned long long)free_entries);
	if (p->units > fs->free_bytes / FAMFS_ALLOC_UNIT)
		return tool_error_errno(-ENOSPC, "cannot copy: the files need at least %s, and %s has %s free",
					famfs_format_size(p->units * FAMFS_ALLOC_UNIT, b1, sizeof(b1)), fs->mountpoint,
					famfs_format_size(fs->free_bytes, b2, sizeof(b2)));
	return 0;
}

/* ---- carrying it out ---- */

static int made_note(size_t made)
{
	if (made)
		tool_error("%zu director%s made before the failure remain%s", made, made == 1 ? "y" : "ies",
			   made == 1 ? "s" : "");
	return 0;
}

static int create_all(const struct cp_plan *p, const struct interleave *il)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_free_ struct batch_file *files = NULL;
	size_t made = 0, k = 0;
	uint32_t created = 0;
	int r;

	for (size_t i = 0; i < p->n; i++) {
		if (!p->v[i].dir)
			continue;
		r = client_mkdir(p->v[i].dst, p->v[i].mode, false, NULL, &e);
		if (r < 0) {
			client_error("create directory", p->v[i].dst, &e, r);
			made_note(made);
			return r;
		}
		made++;
	}
	if (il->nstrips || il->nbuckets || il->chunk || p->nfiles == 1) {
		/* CreateFiles has no interleave options: one call a file */
		for (size_t i = 0; i < p->n; i++) {
			if (p->v[i].dir)
				continue;
			r = client_create_file(p->v[i].dst, p->v[i].size, p->v[i].mode, il, NULL, &e);
			if (r < 0) {
				client_error("create", p->v[i].dst, &e, r);
				made_note(made);
				if (k)
					tool_error("%zu file%s created before the failure remain%s", k, k == 1 ? "" : "s",
						   k == 1 ? "s" : "");
				return r;
			}
			k++;
		}
		return 0;
	}
	files = calloc(p->nfiles, sizeof(*files));
	if (!files)
		return tool_error_errno(-ENOMEM, "cannot copy: %m");
	for (size_t i = 0; i < p->n; i++)
		if (!p->v[i].dir)
			files[k++] = (struct batch_file){ p->v[i].dst, p->v[i].size, p->v[i].mode };
	r = client_create_files(files, k, NULL, &created, &e);
	if (r < 0) {
		client_error("create the files of the copy", NULL, &e, r);
		made_note(made);
		return r;
	}
	if (created != k)
		return tool_error_errno(-EPROTO, "cannot copy: the daemon created %u of %zu files", created, k);
	return 0;
}

static int copy_bytes(const struct cp_item *it)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	fd = open(it->src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st) < 0)
		return tool_error_errno(-errno, "cannot open %s: %m (%s was created and holds no data)", it->src,
					it->dst);
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size != it->size)
		return tool_error_errno(-EIO, "cannot copy %s: it changed since the copy began (%s was created and holds no data)",
					it->src, it->dst);
	return data_copy_in(fd, it->src, it->dst, it->size);
}

/* ---- the command ---- */

/* What a source becomes: @dest itself, or @dest/NAME when copying into a directory. */
static int plan_source(struct cp_plan *p, const char *src, const char *dest, bool into, bool recursive,
		       uint32_t mode, bool have_mode)
{
	_cleanup_free_ char *base = NULL, *name = NULL, *dst = NULL;
	struct stat st;

	if (stat(src, &st) < 0)
		return tool_error_errno(-errno, "cannot copy %s: %m", src);
	if (into) {
		base = local_basename(src);
		if (!base)
			return tool_error_errno(-ENOMEM, "cannot plan the copy: %m");
		if (!base[0] || !strcmp(base, ".") || !strcmp(base, "..") || !strcmp(base, "/"))
			return tool_error_errno(-EINVAL, "cannot copy %s into %s: it has no name of its own there; give the new name as the target",
						src, dest);
		name = famfs_escape_dup(base);
		dst = name ? join(dest, name) : NULL;
		if (!dst)
			return tool_error_errno(-ENOMEM, "cannot plan the copy: %m");
	}
	return plan_entry(p, src, dst ? dst : dest, &st, recursive, mode, have_mode);
}

/* The sources' top-level targets in a directory must not exist: famfs replaces nothing. */
static int check_new(const struct cp_plan *p, const struct fsinfo *fs, size_t first)
{
	for (size_t i = first; i < p->n; i++) {
		enum target_kind k;
		int r = target_kind(fs, p->v[i].dst, &k);

		if (r < 0)
			return r;
		if (k != TARGET_MISSING)
			return tool_error_errno(-EEXIST, "cannot copy %s: %s already exists, and famfs replaces nothing",
						p->v[i].src, p->v[i].dst);
		/* skip the tree under a new directory: nothing can be there */
		if (p->v[i].dir) {
			size_t n = strlen(p->v[i].dst);

			while (i + 1 < p->n && !strncmp(p->v[i + 1].dst, p->v[i].dst, n) && p->v[i + 1].dst[n] == '/')
				i++;
		}
	}
	return 0;
}

int cmd_cp(int argc, char **argv)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_(fsinfo_list_clear) struct fsinfo_list fl = { 0 };
	_cleanup_(cp_plan_clear) struct cp_plan p = { 0 };
	_cleanup_free_ char *escaped = NULL;
	struct interleave il = { 0 };
	const struct fsinfo *fs;
	enum target_kind kind;
	bool have_mode = false, recursive = false, into, slash;
	uint32_t mode = 0;
	const char *dest;
	int c, nsrc, r, failed = 0;

	optind = 1;
	while ((c = getopt(argc, argv, "rRm:N:B:C:")) != -1) {
		if (c == 'r' || c == 'R')
			recursive = true;
		else if (c == 'm') {
			if (parse_mode(optarg, &mode) < 0)
				return FAMFSCTL_USAGE;
			have_mode = true;
		} else if (c == 'N' || c == 'B' || c == 'C') {
			if (parse_interleave(c, optarg, &il) < 0)
				return FAMFSCTL_USAGE;
		} else
			return FAMFSCTL_USAGE;
	}
	nsrc = argc - optind - 1;
	if (nsrc < 1)
		return ctl_usage_error(CP_USAGE);
	dest = argv[argc - 1];
	/* the local names are opened as they are; the famfs target is escaped (see main.c) */
	if (!famfs_is_utf8(dest)) {
		escaped = famfs_escape_dup(dest);
		if (!escaped)
			return tool_error_errno(-ENOMEM, "cannot copy: %m");
		dest = escaped;
	}
	r = client_list_fs(&fl, &e);
	if (r < 0)
		return client_error("list file systems", NULL, &e, r);
	fs = fs_of(&fl, dest);
	if (!fs)
		return tool_error_errno(-ENOENT, "cannot copy to %s: not under the mount point of any attached famfs file system",
					dest);
	r = target_kind(fs, dest, &kind);
	if (r < 0)
		return r;
	slash = dest[strlen(dest) - 1] == '/';
	into = kind == TARGET_DIR;
	if (!into && (nsrc > 1 || slash))
		return tool_error_errno(-ENOTDIR, "cannot copy %s to %s: %s", nsrc > 1 ? "several sources" : argv[optind],
					dest, kind == TARGET_FILE ? "not a directory" : "no such directory");
	if (kind == TARGET_FILE)
		return tool_error_errno(-EEXIST, "cannot copy %s: %s already exists, and famfs replaces nothing",
					argv[optind], dest);
	for (int a = optind; a < argc - 1; a++) {
		size_t first = p.n;

		r = plan_source(&p, argv[a], dest, into, recursive, mode, have_mode);
		if (r < 0)
			return r;
		if (into) {
			r = check_new(&p, fs, first);
			if (r < 0)
				return r;
		}
	}
	r = check_paths(&p, fs);
	if (r >= 0)
		r = check_room(&p, fs);
	if (r >= 0)
		r = create_all(&p, &il);
	if (r < 0)
		return r;
	/* as cp(1): go on with the next file after one fails */
	for (size_t i = 0; i < p.n; i++) {
		if (p.v[i].dir)
			continue;
		r = copy_bytes(&p.v[i]);
		if (r < 0)
			failed = r;
	}
	return failed < 0 ? failed : FAMFSCTL_OK;
}
