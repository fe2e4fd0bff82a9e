/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The names of famfs-manager's bus API, in one place for the daemon,
 * famfsctl, the tests and the benchmarks.  The contract itself, with doc
 * comments, is dbus/org.famfs.Manager1.xml.
 */
#ifndef FAMFS_BUS_API_H
#define FAMFS_BUS_API_H

#define FAMFS_BUS_NAME          "org.famfs.Manager"
#define FAMFS_MANAGER_PATH      "/org/famfs/Manager"
/* One object per file system below this, named with sd_bus_path_encode(). */
#define FAMFS_FS_PATH_PREFIX    "/org/famfs/Manager/fs"
#define FAMFS_MANAGER_IFACE     "org.famfs.Manager1"
#define FAMFS_FS_IFACE          "org.famfs.FileSystem1"

/* Named errors: FAMFS_ERROR("NotFound") is "org.famfs.Error.NotFound". */
#define FAMFS_ERROR_PREFIX      "org.famfs.Error."
#define FAMFS_ERROR(name)       FAMFS_ERROR_PREFIX name

#define FAMFS_ERROR_ACCESS_DENIED     FAMFS_ERROR("AccessDenied")
#define FAMFS_ERROR_CORRUPT           FAMFS_ERROR("Corrupt")
#define FAMFS_ERROR_EXISTS            FAMFS_ERROR("Exists")
#define FAMFS_ERROR_FAILED            FAMFS_ERROR("Failed")
#define FAMFS_ERROR_INVALID_ARGUMENT  FAMFS_ERROR("InvalidArgument")
#define FAMFS_ERROR_INVALID_PATH      FAMFS_ERROR("InvalidPath")
#define FAMFS_ERROR_IS_DIRECTORY      FAMFS_ERROR("IsDirectory")
#define FAMFS_ERROR_LOG_FULL          FAMFS_ERROR("LogFull")
#define FAMFS_ERROR_MEDIA_FAILURE     FAMFS_ERROR("MediaFailure")
#define FAMFS_ERROR_MEDIUM_CHANGED    FAMFS_ERROR("MediumChanged")
#define FAMFS_ERROR_NO_SPACE          FAMFS_ERROR("NoSpace")
#define FAMFS_ERROR_NOT_DIRECTORY     FAMFS_ERROR("NotDirectory")
#define FAMFS_ERROR_NOT_FOUND         FAMFS_ERROR("NotFound")
#define FAMFS_ERROR_NOT_MASTER        FAMFS_ERROR("NotMaster")
#define FAMFS_ERROR_NOT_MOUNTED       FAMFS_ERROR("NotMounted")
#define FAMFS_ERROR_READ_ONLY         FAMFS_ERROR("ReadOnly")

#endif
