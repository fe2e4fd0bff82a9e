// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "famfsctl.h"
#include "message.h"

static void vmessage(int errnum, const char *fmt, va_list ap)
{
	fputs("famfsctl: ", stderr);
	errno = errnum;     /* for %m */
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void ctl_error(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vmessage(saved, fmt, ap);
	va_end(ap);
}

int ctl_error_errno(int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(r < 0 ? -r : r, fmt, ap);
	va_end(ap);
	return r;
}

int ctl_usage_error(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vmessage(saved, fmt, ap);
	va_end(ap);
	return FAMFSCTL_USAGE;
}
