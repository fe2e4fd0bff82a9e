/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Path rules of famfs: a path in the log is relative to the mount, at most
 * 79 bytes, NUL-terminated inside its 80-byte field, with no empty, "." or
 * ".." component, and not inside ".meta" at the root, where the kernel
 * backend keeps the superblock and log files (as upstream does).  A path
 * that breaks them is never created anywhere.
 */
#ifndef FAMFS_PATH_H
#define FAMFS_PATH_H

#include <stddef.h>

#include "error.h"
#include "findings.h"

#define FAMFS_META_DIR ".meta"

/* Checks a relpath field of FAMFS_MAX_PATHLEN bytes read from media. */
enum famfs_finding_code famfs_path_check_field(const char *field, struct famfs_err *err);

/* Checks a caller-supplied relative path (a C string). */
enum famfs_finding_code famfs_path_check(const char *relpath, struct famfs_err *err);

/*
 * Turns an absolute path under @mountpoint into the relative path stored in
 * the log ("/run/famfs/x/a/b" with mount "/run/famfs/x" gives "a/b").  Runs
 * of slashes and a trailing slash are tolerated; "." and ".." are refused,
 * never resolved.  Returns -EINVAL with a message when @abspath is not under
 * @mountpoint, names the mount point itself, or breaks a path rule.
 */
int famfs_path_relative(const char *mountpoint, const char *abspath,
			char *ret_rel, size_t ret_size, struct famfs_err *err);

/* Length of the parent part of @rel ("a/b/c" -> 3), 0 for a top-level name. */
size_t famfs_path_parent_len(const char *rel, size_t len);

#endif
