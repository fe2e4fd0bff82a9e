// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "escape.h"
#include "logging.h"

static int max_level = LOG_INFO;

void log_set_max_level(int prio)
{
	max_level = prio;
}

/* JOURNAL_STREAM is "DEVICE:INODE" of the journal's socket; it counts only while it is still stderr. */
static bool stderr_is_journal(void)
{
	static int cached = -1;
	const char *e;
	unsigned long long dev, ino;
	struct stat st;

	if (cached >= 0)
		return cached;
	e = getenv("JOURNAL_STREAM");
	cached = e && sscanf(e, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
		 (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
	return cached;
}

static __attribute__((format(printf, 4, 0))) int log_va(int prio, int error, const char *prefix, const char *fmt, va_list ap)
{
	_cleanup_free_ char *msg = NULL, *line = NULL, *escaped = NULL;
	int saved_errno = errno;

	error = error < 0 ? -error : error;
	if (prio > max_level)
		goto out;
	errno = error;
	if (vasprintf(&msg, fmt, ap) < 0) {
		msg = NULL;
		goto out;
	}
	if (asprintf(&line, "%s%s%s", prefix ? prefix : "", prefix ? ": " : "", msg) < 0) {
		line = NULL;
		goto out;
	}
	escaped = famfs_escape_dup(line);
	if (stderr_is_journal())
		fprintf(stderr, "<%d>%s\n", prio, escaped ? escaped : "out of memory formatting a log line");
	else
		fprintf(stderr, "famfs-manager: %s\n", escaped ? escaped : "out of memory formatting a log line");
out:
	errno = saved_errno;
	return -error;
}

int log_internal(int prio, int error, const char *prefix, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = log_va(prio, error, prefix, fmt, ap);
	va_end(ap);
	return r;
}

void manager_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)log_va(LOG_INFO, 0, NULL, fmt, ap);
	va_end(ap);
}
