/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Mappings of shared memory that can vanish under the daemon: the device
 * mapping, and the kernel mount's .meta view.  When a device goes away (or
 * its memory fails), touching such a mapping raises SIGBUS; the guard's
 * handler then replaces the whole mapping with zero-filled memory and lets
 * the access go on.  The daemon reads an invalid log header from then on,
 * says so, and detaches when the removal event comes.  A SIGBUS anywhere
 * else is not ours: it is raised again with the default action.
 */
#ifndef FAMFS_MANAGER_MEDIUM_GUARD_H
#define FAMFS_MANAGER_MEDIUM_GUARD_H

#include <stdbool.h>
#include <stddef.h>

/* Installs the SIGBUS handler; once, before any mapping is guarded. */
int medium_guard_install(void);
/* Guards [@base, @base + @len); false when the table is full. */
bool medium_guard_add(void *base, size_t len);
/* Stops guarding the range that starts at @base (before unmapping it). */
void medium_guard_remove(void *base);
/* Whether a fault replaced the range that starts at @base. */
bool medium_guard_lost(const void *base);

#endif
