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
/* One object per job (Check, Format, Repair) below this: .../job/<id>. */
#define FAMFS_JOB_PATH_PREFIX   "/org/famfs/Manager/job"
#define FAMFS_JOB_IFACE         "org.famfs.Job1"

/* Named errors: FAMFS_ERROR("NotFound") is "org.famfs.Error.NotFound". */
#define FAMFS_ERROR_PREFIX      "org.famfs.Error."
#define FAMFS_ERROR(name)       FAMFS_ERROR_PREFIX name

#define FAMFS_ERROR_ACCESS_DENIED     FAMFS_ERROR("AccessDenied")
#define FAMFS_ERROR_ATTACHED          FAMFS_ERROR("Attached")
#define FAMFS_ERROR_BUSY              FAMFS_ERROR("Busy")
#define FAMFS_ERROR_CANCELLED         FAMFS_ERROR("Cancelled")
#define FAMFS_ERROR_DEVICE_GONE       FAMFS_ERROR("DeviceGone")
#define FAMFS_ERROR_HAS_FILE_SYSTEM   FAMFS_ERROR("HasFileSystem")
#define FAMFS_ERROR_IN_USE            FAMFS_ERROR("InUse")
#define FAMFS_ERROR_INVALID_CONFIG    FAMFS_ERROR("InvalidConfig")
#define FAMFS_ERROR_INVALID_DEVICE    FAMFS_ERROR("InvalidDevice")
#define FAMFS_ERROR_JOB_RUNNING       FAMFS_ERROR("JobRunning")
#define FAMFS_ERROR_NOT_FINISHED      FAMFS_ERROR("NotFinished")
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
