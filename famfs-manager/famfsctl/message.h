/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * famfsctl's messages on stderr, one prefix for all of them:
 * "famfsctl: what failed: why".
 */
#ifndef FAMFSCTL_MESSAGE_H
#define FAMFSCTL_MESSAGE_H

/* Prints "famfsctl: " and the message, then a newline. */
void ctl_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The same with errno set to -@r, so "%m" says why; returns @r. */
int ctl_error_errno(int r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A usage error: prints the message and returns FAMFSCTL_USAGE. */
int ctl_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
