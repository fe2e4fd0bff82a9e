/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bus edge of the daemon's error convention: inside, a negative errno
 * and a struct famfs_err message; here, the named org.famfs.Error.* a
 * caller gets (include/famfs/bus-api.h).
 */
#ifndef FAMFS_MANAGER_BUS_ERRORS_H
#define FAMFS_MANAGER_BUS_ERRORS_H

#include <systemd/sd-bus.h>

#include "famfs/bus-api.h"

/* Sets @e to the named error for -@r with @msg (escaped; strerror when empty); returns -@r's errno as sd-bus does. */
int bus_error_from_errno(sd_bus_error *e, int r, const char *msg);

/* The org.famfs.Error.* name for -@r. */
const char *bus_error_name(int r);

/* "file system at MOUNTPOINT: WHAT WHY", both parts escaped for the bus. */
int bus_error_fsys(sd_bus_error *e, const char *name, const char *mountpoint, const char *what,
		   const char *why);

#endif
