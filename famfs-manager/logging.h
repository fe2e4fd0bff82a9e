/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's log lines, as systemd's daemons write them: one line on
 * stderr per message with a priority, "%m" for the error given, and a
 * prefix naming what it is about (a file system's mount point, a device).
 * When stderr is the journal (JOURNAL_STREAM names it) each line starts
 * with its "<N>" priority and leaves the program name to the journal;
 * otherwise it starts with "famfs-manager: ".  Each line is escaped as a
 * whole (escape.h), so a name from the medium cannot forge a line or send
 * a terminal escape.
 */
#ifndef FAMFS_MANAGER_LOGGING_H
#define FAMFS_MANAGER_LOGGING_H

#include <syslog.h>

/* Lines above @prio (LOG_DEBUG is the most verbose) are dropped; LOG_INFO by default. */
void log_set_max_level(int prio);

/*
 * Writes one line at @prio: "@prefix: message" (no prefix when NULL).
 * errno is @error (either sign) while @fmt is formatted, for "%m".
 * Returns -abs(@error), so `return log_error_errno(r, ...)` hands r on.
 */
int log_internal(int prio, int error, const char *prefix, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#define log_full_errno(prio, error, ...) log_internal(prio, error, NULL, __VA_ARGS__)
#define log_error(...)   log_internal(LOG_ERR, 0, NULL, __VA_ARGS__)
#define log_warning(...) log_internal(LOG_WARNING, 0, NULL, __VA_ARGS__)
#define log_notice(...)  log_internal(LOG_NOTICE, 0, NULL, __VA_ARGS__)
#define log_info(...)    log_internal(LOG_INFO, 0, NULL, __VA_ARGS__)
#define log_debug(...)   log_internal(LOG_DEBUG, 0, NULL, __VA_ARGS__)
#define log_error_errno(error, ...)   log_internal(LOG_ERR, error, NULL, __VA_ARGS__)
#define log_warning_errno(error, ...) log_internal(LOG_WARNING, error, NULL, __VA_ARGS__)
#define log_info_errno(error, ...)    log_internal(LOG_INFO, error, NULL, __VA_ARGS__)
#define log_debug_errno(error, ...)   log_internal(LOG_DEBUG, error, NULL, __VA_ARGS__)

/* The same about one thing: "@what: message" (a mount point, a device node). */
#define log_about(prio, what, ...)               log_internal(prio, 0, what, __VA_ARGS__)
#define log_about_errno(prio, error, what, ...)  log_internal(prio, error, what, __VA_ARGS__)

/* The older entry point (the kernel backend's): log_info() of one line. */
void manager_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
