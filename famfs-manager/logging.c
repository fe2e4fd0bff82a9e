// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "escape.h"
#include "logging.h"

void manager_log(const char *fmt, ...)
{
	char *line = NULL, *escaped;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (r < 0)
		return;
	escaped = famfs_escape_dup(line);
	fprintf(stderr, "%s\n", escaped ? escaped : "famfs-manager: out of memory formatting a log line");
	free(escaped);
	free(line);
}
