/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The messages of the command-line tools (famfsctl, fsck.famfs,
 * mkfs.famfs): one line on stderr, "PROG: what failed: why".  The daemon
 * logs through its own helper; libfamfs never prints.
 *
 * Header only and independent of libfamfs.  A tool defines TOOL_NAME, its
 * program name, before including this (in the header all its files share),
 * so that every message of the tool carries the same prefix.
 */
#ifndef FAMFS_TOOLS_MESSAGE_H
#define FAMFS_TOOLS_MESSAGE_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#ifndef TOOL_NAME
#error "define TOOL_NAME (the program's name) before including tools/message.h"
#endif

static inline __attribute__((format(printf, 2, 0))) void tool_vmessage(int errnum, const char *fmt, va_list ap)
{
	fputs(TOOL_NAME ": ", stderr);
	errno = errnum;     /* for %m */
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/* Prints "PROG: " and the message, then a newline; %m says errno. */
static inline __attribute__((format(printf, 1, 2))) void tool_error(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	tool_vmessage(saved, fmt, ap);
	va_end(ap);
}

/* The same with %m saying the negative errno @r; returns @r. */
static inline __attribute__((format(printf, 2, 3))) int tool_error_errno(int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tool_vmessage(r < 0 ? -r : r, fmt, ap);
	va_end(ap);
	return r;
}

#endif
