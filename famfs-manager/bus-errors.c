// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <string.h>

#include "bus-errors.h"
#include "cleanup.h"
#include "error.h"
#include "escape.h"

const char *bus_error_name(int r)
{
	switch (-r) {
	case ECANCELED:
		return FAMFS_ERROR_CANCELLED;
	case ENXIO:
		return FAMFS_ERROR_DEVICE_GONE;
	case EBUSY:
		return FAMFS_ERROR_BUSY;
	case EPERM:
		return FAMFS_ERROR_NOT_MASTER;
	case EACCES:
		return FAMFS_ERROR_ACCESS_DENIED;
	case EINVAL:
	case ENAMETOOLONG:
		return FAMFS_ERROR_INVALID_PATH;
	case EEXIST:
		return FAMFS_ERROR_EXISTS;
	case ENOENT:
		return FAMFS_ERROR_NOT_FOUND;
	case ENOTDIR:
		return FAMFS_ERROR_NOT_DIRECTORY;
	case EISDIR:
		return FAMFS_ERROR_IS_DIRECTORY;
	case ENOSPC:
		return FAMFS_ERROR_NO_SPACE;
	case FAMFS_ELOGFULL:
		return FAMFS_ERROR_LOG_FULL;
	case FAMFS_EMEDIUMCHANGED:
		return FAMFS_ERROR_MEDIUM_CHANGED;
	case E2BIG:
	case EFBIG:
	case ERANGE:
		return FAMFS_ERROR_INVALID_ARGUMENT;
	case EROFS:
		return FAMFS_ERROR_READ_ONLY;
	case EIO:
	case EUCLEAN:
		return FAMFS_ERROR_CORRUPT;
	case ENODEV:
		return FAMFS_ERROR_NOT_MOUNTED;
	case ENOMEM:
		return SD_BUS_ERROR_NO_MEMORY;
	default:
		return FAMFS_ERROR_FAILED;
	}
}

int bus_error_from_errno(sd_bus_error *e, int r, const char *msg)
{
	_cleanup_free_ char *escaped = NULL;

	if (!msg || !msg[0])
		return sd_bus_error_set(e, bus_error_name(r), strerror(-r));
	/* Messages quote names from the medium; the bus takes only UTF-8. */
	escaped = famfs_escape_dup(msg);
	return sd_bus_error_set(e, bus_error_name(r), escaped ? escaped : "out of memory");
}

int bus_error_fsys(sd_bus_error *e, const char *name, const char *mountpoint, const char *what,
		   const char *why)
{
	_cleanup_free_ char *where_esc = famfs_escape_dup(mountpoint), *why_esc = famfs_escape_dup(why);

	return sd_bus_error_setf(e, name, "file system at %s: %s%s", where_esc ? where_esc : "", what,
				 why_esc ? why_esc : "");
}
