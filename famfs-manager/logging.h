/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon's log lines. */
#ifndef FAMFS_MANAGER_LOGGING_H
#define FAMFS_MANAGER_LOGGING_H

/*
 * One line on stderr (the journal), escaped as a whole (escape.h) so
 * that a name from the medium cannot forge a line or send a terminal escape.
 */
void manager_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
