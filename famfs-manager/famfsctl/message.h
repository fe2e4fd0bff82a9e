/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * famfsctl's messages: the tools' helper (tools/message.h) with the
 * famfsctl prefix, and the usage error every command reports the same way.
 */
#ifndef FAMFSCTL_MESSAGE_H
#define FAMFSCTL_MESSAGE_H

#define TOOL_NAME "famfsctl"
#include "tools/message.h"

#include "famfsctl.h"

/* Prints the message and returns FAMFSCTL_USAGE. */
static inline __attribute__((format(printf, 1, 2))) int ctl_usage_error(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	tool_vmessage(saved, fmt, ap);
	va_end(ap);
	return FAMFSCTL_USAGE;
}

#endif
