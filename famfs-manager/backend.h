/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The backend seam: what makes an attached file system's files visible on
 * this host.  The view backend keeps the namespace in the daemon only; the
 * kernel backend (famfs.ko: mount, .meta files, MKFILES/MAP_CREATE) makes
 * them real files.  A backend sees only its struct backend_target, never
 * the manager core around it.
 */
#ifndef FAMFS_MANAGER_BACKEND_H
#define FAMFS_MANAGER_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "fs.h"

/* Largest file the view backend copies for a caller not trusted with the device. */
#define VIEW_COPY_MAX (1ULL << 30)

struct backend_ops;

/* One attached file system as a backend serves it. */
struct backend_target {
	const struct backend_ops *ops;
	void *data;                     /* the backend's own state */
	struct famfs_fs *fs;            /* NULL when attach failed */
	char *device;
	char *mountpoint;               /* where it is served; "" when not mounted */
	char uuid[37];                  /* "" when the superblock is unreadable */
	bool adopted;                   /* prepare took over a mount that already serves the files */
};

struct backend_ops {
	const char *name;
	/* at attach, before the log is replayed (optional) */
	int (*prepare)(struct backend_target *t, struct famfs_err *err);
	/* after the log has been replayed at attach */
	int (*attach)(struct backend_target *t, struct famfs_err *err);
	/*
	 * A namespace node (file or directory) was added, by replay or by us;
	 * @e is its log entry as the replay validated it, or NULL.
	 */
	int (*instantiate)(struct backend_target *t, uint32_t node, const struct famfs_log_entry *e,
			   struct famfs_err *err);
	/* an fd through which a caller reaches a file's data at its extents */
	int (*open_data)(struct backend_target *t, uint32_t node, bool writable, int *ret_fd,
			 struct famfs_err *err);
	/*
	 * A read-only fd of the bytes of file @node (log entry @e, validated)
	 * and nothing else, for callers not trusted with what open_data gives;
	 * NULL when open_data's fd is already the file alone.
	 */
	int (*open_copy)(struct backend_target *t, uint32_t node, const struct famfs_log_entry *e,
			 int *ret_fd, struct famfs_err *err);
	/*
	 * Writes @len bytes from @src (a sealed memfd) at the start of file
	 * @node (log entry @e, validated); NULL when open_data's writable fd
	 * is the file alone, which the caller then writes through.
	 */
	int (*write_from)(struct backend_target *t, uint32_t node, const struct famfs_log_entry *e,
			  int src, uint64_t len, struct famfs_err *err);
	/*
	 * Where the superblock region and the log can be read coherently with
	 * this backend's writes (@readable bytes from the start of the medium),
	 * or NULL: then the device mapping is (optional).
	 */
	const uint8_t *(*medium_view)(struct backend_target *t, uint64_t *readable);
	/*
	 * 1 with a reason in @buf when the medium reported a failure that
	 * disables the file system (famfs.ko's dax_error), else 0 (optional)
	 */
	int (*media_error)(struct backend_target *t, char *buf, size_t len);
	/*
	 * 1 with who in @buf when processes other than this one hold files,
	 * mappings or working directories where the backend serves @t; 0 when
	 * none (optional: nothing outside the daemon can hold anything)
	 */
	int (*in_use)(struct backend_target *t, char *buf, size_t len);
	void (*detach)(struct backend_target *t);
	/* open_data's fd is the file itself: map it at file offsets, not extents */
	bool data_fd_is_file;
};

extern const struct backend_ops backend_view;
extern const struct backend_ops backend_kernel;

/* The backend a configuration asks for. */
enum backend_choice {
	BACKEND_AUTO,
	BACKEND_KERNEL,
	BACKEND_VIEW,
};

const char *backend_choice_name(enum backend_choice c);
int backend_choice_parse(const char *s, enum backend_choice *ret);

#endif
