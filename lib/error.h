/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Error reporting for libfamfs.  Library functions return 0 or a negative
 * errno and never print; when a caller passes a struct famfs_err, the
 * function also leaves a one-line message there that names what failed and
 * where ("log entry 12: extent 0 offset 0x1000 is not 2 MiB aligned").
 */
#ifndef FAMFS_ERROR_H
#define FAMFS_ERROR_H

#include <errno.h>
#include <stddef.h>

/* A full log is not out of space: callers map it to its own error. */
#define FAMFS_ELOGFULL EXFULL
/*
 * The medium no longer holds the file system that was attached (re-formatted,
 * superblock destroyed, log reset, master changed): nothing may be written.
 */
#define FAMFS_EMEDIUMCHANGED EMEDIUMTYPE

#define FAMFS_ERR_MSG_MAX 256

struct famfs_err {
	int code;                      /* negative errno, 0 when unset */
	char msg[FAMFS_ERR_MSG_MAX];
};

/* Records @code and the formatted message in @err (if non-NULL); returns @code. */
int famfs_err_set(struct famfs_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prefixes the message already in @err with more context. */
void famfs_err_prefix(struct famfs_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
