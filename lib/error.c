// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

int famfs_err_set(struct famfs_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

void famfs_err_prefix(struct famfs_err *err, const char *fmt, ...)
{
	char prefix[FAMFS_ERR_MSG_MAX];
	char old[FAMFS_ERR_MSG_MAX];
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	snprintf(err->msg, sizeof(err->msg), "%s: %s", prefix, old);
}
