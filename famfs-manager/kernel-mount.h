/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel backend's mount (kernel-mount.c): mount -t famfs or adopt the
 * mount already there, the .meta files, the library reading the
 * superblock and log through their DAX mappings, and unmounting.
 */
#ifndef FAMFS_MANAGER_KERNEL_MOUNT_H
#define FAMFS_MANAGER_KERNEL_MOUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend.h"

struct kernel_mount {
	int root;             /* O_PATH of the mount's root; -1 before it is open */
	bool adopted;         /* the mount was there before this attach */
	bool mounted;         /* ours (or an earlier run's): unmounted at release */
	uint8_t *view;        /* .meta/.superblock, then .meta/.log, as on the medium */
	size_t view_len;
	bool view_in_use;     /* the library reads and appends through the view */
};

/* Opens a path below the mount's root, never through a symlink or "..". */
int kernel_open_beneath(int root, const char *rel, int flags, mode_t mode);

/*
 * Mounts @t's device at its mount point (made if missing), or adopts the
 * famfs mount already there; @m->root is then the mount's root.
 */
int kernel_mount_open(struct kernel_mount *m, struct backend_target *t, struct famfs_err *err);

enum kernel_meta_file {
	KERNEL_META_SUPERBLOCK,
	KERNEL_META_LOG,
};

const char *kernel_meta_file_path(enum kernel_meta_file which);

/*
 * Creates the .meta file @which with its map, or checks that the one there
 * has that map (-EEXIST when it is another file system's).
 */
int kernel_meta_file(struct backend_target *t, int root, enum kernel_meta_file which, struct famfs_err *err);

/* .meta and both its files. */
int kernel_mount_make_meta(struct kernel_mount *m, struct backend_target *t, struct famfs_err *err);

/*
 * Maps the .meta files side by side as on the medium and has the library
 * read and append the superblock and log through them from now on.
 */
int kernel_mount_use_meta(struct kernel_mount *m, struct backend_target *t, struct famfs_err *err);

/*
 * Back to the device mapping, the view unmapped, the root closed, and
 * unmounted if ours (unless left for a restart).  Returns whether the mount
 * went away.
 */
bool kernel_mount_release(struct kernel_mount *m, struct backend_target *t);

/*
 * From now on kernel_mount_release leaves the mount in place: the daemon is
 * being restarted and the next instance adopts it (as after a crash).
 */
void kernel_mounts_leave_for_restart(void);

/*
 * The root of the mount the kernel backend serves @t from once attach is
 * done, else -1 (backend-kernel.c).
 */
int kernel_ready_root(const struct backend_target *t);

#endif
