// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The adopt record, kept in KERNEL_STATE_DIR (tmpfs: it lives as long as
 * the mount can): the mount's identity, how many namespace nodes are in it
 * exactly as the log says, and the inode and ctime of every directory among
 * them.  Any create, unlink or rename in a directory, and any chmod or
 * chown of it, changes its ctime; famfs maps never change once set.  So
 * when the mount id, the device and every directory are as recorded, the
 * first nodes_done nodes are trusted and only the rest is instantiated;
 * anything else falls back to verifying every file.  The daemon updates the
 * record after each change it makes, and drops the trust (nodes_done 0)
 * when it finds a directory changed by someone else or a node it could not
 * instantiate.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "kernel-adopt.h"
#include "kernel-mount.h"

#define KERNEL_STATE_DIR         "/run/famfs-manager"
#define KERNEL_STATE_MAGIC       "FAMFSKS1"
#define KERNEL_STATE_MAX_DIRS    (1u << 20)

/* The file: this header, then ndirs struct kstate_dir in node order, root first. */
struct kstate_hdr {
	char magic[8];
	uint64_t mnt_id;
	uint64_t dev;
	uint8_t uuid[16];
	uint32_t nodes_done;
	uint32_t ndirs;
};

struct kstate_dir {
	uint32_t node;
	uint32_t pad;
	uint64_t ino;
	int64_t ctime_sec;
	int64_t ctime_nsec;
};

struct kernel_adopt {
	int root;
	const struct famfs_fs *fs;
	int fd;                   /* -1 once writing it failed */
	char path[256];
	struct kstate_hdr sh;     /* as last written */
	struct kstate_dir *dirs;
	uint32_t dirs_cap;
};

struct kernel_adopt *kernel_adopt_open(int root, const struct famfs_fs *fs, const char *uuid)
{
	_cleanup_free_ struct kernel_adopt *a = NULL;

	if (!uuid[0] || (mkdir(KERNEL_STATE_DIR, 0700) < 0 && errno != EEXIST))
		return NULL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->root = root;
	a->fs = fs;
	snprintf(a->path, sizeof(a->path), "%s/kernel-%s.state", KERNEL_STATE_DIR, uuid);
	a->fd = open(a->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (a->fd < 0)
		return NULL;
	return TAKE_PTR(a);
}

void kernel_adopt_close(struct kernel_adopt *a, bool drop)
{
	if (!a)
		return;
	if (a->fd >= 0) {
		if (drop)
			(void)unlink(a->path);
		close(a->fd);
	}
	free(a->dirs);
	free(a);
}

static int mount_identity(int root, uint64_t *mnt_id, uint64_t *dev)
{
	struct statx stx;

	if (statx(root, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_INO | STATX_MNT_ID, &stx) < 0)
		return -errno;
	if (!(stx.stx_mask & STATX_MNT_ID))
		return -EOPNOTSUPP;
	*mnt_id = stx.stx_mnt_id;
	*dev = ((uint64_t)stx.stx_dev_major << 32) | stx.stx_dev_minor;
	return 0;
}

/* The record's header names this file system and this mount. */
static bool header_names_mount(const struct kernel_adopt *a, const struct kstate_hdr *h)
{
	uint64_t mnt_id, dev;

	return memcmp(h->magic, KERNEL_STATE_MAGIC, sizeof(h->magic)) == 0 &&
	       memcmp(h->uuid, famfs_fs_superblock(a->fs)->uuid, sizeof(h->uuid)) == 0 &&
	       mount_identity(a->root, &mnt_id, &dev) == 0 && mnt_id == h->mnt_id && dev == h->dev;
}

/* The inode and ctime of directory @node in the mount, now. */
static int dir_now(const struct kernel_adopt *a, uint32_t node, struct kstate_dir *ret)
{
	const struct famfs_ns_node *n = famfs_ns_node(famfs_fs_namespace(a->fs), node);
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (!n || (node != FAMFS_NS_ROOT && n->kind != FAMFS_NS_DIR))
		return -ENOTDIR;
	if (node != FAMFS_NS_ROOT) {
		fd = kernel_open_beneath(a->root, n->path, O_PATH | O_DIRECTORY, 0);
		if (fd < 0)
			return fd;
	}
	if (fstat(fd >= 0 ? fd : a->root, &st) < 0)
		return -errno;
	memset(ret, 0, sizeof(*ret));
	ret->node = node;
	ret->ino = st.st_ino;
	ret->ctime_sec = st.st_ctim.tv_sec;
	ret->ctime_nsec = st.st_ctim.tv_nsec;
	return 0;
}

static bool dir_unchanged(const struct kstate_dir *was, const struct kstate_dir *now)
{
	return now->ino == was->ino && now->ctime_sec == was->ctime_sec && now->ctime_nsec == was->ctime_nsec;
}

static void state_write(struct kernel_adopt *a)
{
	size_t n = (size_t)a->sh.ndirs * sizeof(a->dirs[0]);

	if (a->fd < 0)
		return;
	if (pwrite(a->fd, &a->sh, sizeof(a->sh), 0) != (ssize_t)sizeof(a->sh) ||
	    (n && pwrite(a->fd, a->dirs, n, sizeof(a->sh)) != (ssize_t)n) ||
	    ftruncate(a->fd, (off_t)(sizeof(a->sh) + n)) < 0) {
		/* Without a record the next adopt verifies every file. */
		(void)unlink(a->path);
		close(TAKE_FD(a->fd));
	}
}

static void state_distrust(struct kernel_adopt *a)
{
	if (a->fd >= 0 && a->sh.nodes_done) {
		a->sh.nodes_done = 0;
		state_write(a);
	}
}

static int state_add_dir(struct kernel_adopt *a, uint32_t node)
{
	if (a->sh.ndirs == a->dirs_cap) {
		uint32_t cap = a->dirs_cap ? a->dirs_cap * 2 : 16;
		struct kstate_dir *d;

		if (cap > KERNEL_STATE_MAX_DIRS)
			return -E2BIG;
		d = realloc(a->dirs, cap * sizeof(*d));
		if (!d)
			return -ENOMEM;
		a->dirs = d;
		a->dirs_cap = cap;
	}
	if (dir_now(a, node, &a->dirs[a->sh.ndirs]) < 0)
		return -EIO;
	a->sh.ndirs++;
	return 0;
}

static struct kstate_dir *state_find_dir(struct kernel_adopt *a, uint32_t node)
{
	for (uint32_t i = 0; i < a->sh.ndirs; i++)
		if (a->dirs[i].node == node)
			return &a->dirs[i];
	return NULL;
}

void kernel_adopt_record(struct kernel_adopt *a, uint32_t nodes_done)
{
	const struct famfs_ns *ns;
	const struct famfs_ns_node *n;

	if (!a || a->fd < 0)
		return;
	ns = famfs_fs_namespace(a->fs);
	memset(&a->sh, 0, sizeof(a->sh));
	memcpy(a->sh.magic, KERNEL_STATE_MAGIC, sizeof(a->sh.magic));
	memcpy(a->sh.uuid, famfs_fs_superblock(a->fs)->uuid, sizeof(a->sh.uuid));
	if (mount_identity(a->root, &a->sh.mnt_id, &a->sh.dev) < 0 || state_add_dir(a, FAMFS_NS_ROOT) < 0)
		nodes_done = 0;
	for (uint32_t id = 1; nodes_done && id < nodes_done && (n = famfs_ns_node(ns, id)); id++)
		if (n->kind == FAMFS_NS_DIR && state_add_dir(a, id) < 0)
			nodes_done = 0;
	if (!nodes_done)
		a->sh.ndirs = 0;
	a->sh.nodes_done = nodes_done;
	state_write(a);
}

bool kernel_adopt_names_mount(struct kernel_adopt *a)
{
	struct kstate_hdr h;

	if (!a || a->fd < 0 || pread(a->fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return false;
	return header_names_mount(a, &h);
}

uint32_t kernel_adopt_trusted(struct kernel_adopt *a, uint32_t nnodes)
{
	const struct famfs_ns *ns;
	_cleanup_free_ struct kstate_dir *d = NULL;
	struct kstate_dir now;
	struct kstate_hdr h;
	uint32_t ndirs = 1;
	size_t len;

	if (!a || a->fd < 0 || pread(a->fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return 0;
	if (h.nodes_done < 2 || h.nodes_done > nnodes || h.ndirs < 1 || h.ndirs > KERNEL_STATE_MAX_DIRS ||
	    !header_names_mount(a, &h))
		return 0;
	ns = famfs_fs_namespace(a->fs);
	for (uint32_t id = 1; id < h.nodes_done; id++) {
		const struct famfs_ns_node *n = famfs_ns_node(ns, id);

		if (!n)
			return 0;
		ndirs += n->kind == FAMFS_NS_DIR;
	}
	if (ndirs != h.ndirs)
		return 0;
	len = (size_t)h.ndirs * sizeof(*d);
	d = malloc(len);
	if (!d || pread(a->fd, d, len, sizeof(h)) != (ssize_t)len)
		return 0;
	/* Records in node order, root first: each directory once. */
	for (uint32_t i = 0; i < h.ndirs; i++)
		if (d[i].node >= h.nodes_done || (i == 0) != (d[i].node == FAMFS_NS_ROOT) ||
		    (i > 0 && d[i].node <= d[i - 1].node) || dir_now(a, d[i].node, &now) < 0 ||
		    !dir_unchanged(&d[i], &now))
			return 0;
	return h.nodes_done;
}

bool kernel_adopt_is_next(struct kernel_adopt *a, uint32_t node)
{
	const struct famfs_ns_node *n;
	struct kstate_dir *pd, now;

	if (!a || a->fd < 0 || a->sh.nodes_done != node)
		return false;
	n = famfs_ns_node(famfs_fs_namespace(a->fs), node);
	if (!n)
		return false;
	pd = state_find_dir(a, n->parent);
	return pd && dir_now(a, n->parent, &now) == 0 && dir_unchanged(pd, &now);
}

void kernel_adopt_advance(struct kernel_adopt *a, uint32_t node, bool made)
{
	const struct famfs_ns_node *n;
	struct kstate_dir *pd;

	if (!a)
		return;
	n = famfs_ns_node(famfs_fs_namespace(a->fs), node);
	pd = n ? state_find_dir(a, n->parent) : NULL;
	if (!made || !pd || dir_now(a, n->parent, pd) < 0 ||
	    (n->kind == FAMFS_NS_DIR && state_add_dir(a, node) < 0)) {
		state_distrust(a);
		return;
	}
	a->sh.nodes_done = node + 1;
	state_write(a);
}
