// SPDX-License-Identifier: LGPL-2.1-or-later
#include "findings.h"

static const char *const finding_names[_FAMFS_F_MAX] = {
	[FAMFS_OK] = "ok",
	[FAMFS_F_DEVICE_TOO_SMALL] = "device-too-small",
	[FAMFS_F_SB_MAGIC] = "superblock-magic",
	[FAMFS_F_SB_VERSION] = "superblock-version",
	[FAMFS_F_SB_OMF_MAJOR] = "superblock-omf-major",
	[FAMFS_F_SB_CRC] = "superblock-crc",
	[FAMFS_F_SB_ALLOC_UNIT] = "superblock-alloc-unit",
	[FAMFS_F_SB_LOG_OFFSET] = "superblock-log-offset",
	[FAMFS_F_SB_LOG_LEN] = "superblock-log-length",
	[FAMFS_F_SB_DEV_SIZE] = "superblock-device-size",
	[FAMFS_F_LOG_MAGIC] = "log-magic",
	[FAMFS_F_LOG_CRC] = "log-crc",
	[FAMFS_F_LOG_LEN] = "log-length",
	[FAMFS_F_LOG_LAST_INDEX] = "log-last-index",
	[FAMFS_F_LOG_NEXT_INDEX] = "log-next-index",
	[FAMFS_F_LOG_NEXT_SEQNUM] = "log-next-seqnum",
	[FAMFS_F_ENTRY_SEQNUM] = "entry-seqnum",
	[FAMFS_F_ENTRY_CRC] = "entry-crc",
	[FAMFS_F_ENTRY_TYPE] = "entry-type",
	[FAMFS_F_EXTENT_TYPE] = "extent-type",
	[FAMFS_F_EXTENT_COUNT] = "extent-count",
	[FAMFS_F_STRIP_COUNT] = "strip-count",
	[FAMFS_F_CHUNK_SIZE] = "chunk-size",
	[FAMFS_F_EXTENT_ALIGN] = "extent-alignment",
	[FAMFS_F_EXTENT_ZERO_OFFSET] = "extent-zero-offset",
	[FAMFS_F_EXTENT_BEYOND_DEVICE] = "extent-beyond-device",
	[FAMFS_F_EXTENT_IN_METADATA] = "extent-in-metadata",
	[FAMFS_F_EXTENT_DEVINDEX] = "extent-devindex",
	[FAMFS_F_EXTENT_LENGTH] = "extent-length",
	[FAMFS_F_FILE_SIZE] = "file-size",
	[FAMFS_F_PATH_UNTERMINATED] = "path-unterminated",
	[FAMFS_F_PATH_EMPTY] = "path-empty",
	[FAMFS_F_PATH_ABSOLUTE] = "path-absolute",
	[FAMFS_F_PATH_EMPTY_COMPONENT] = "path-empty-component",
	[FAMFS_F_PATH_DOT_COMPONENT] = "path-dot-component",
	[FAMFS_F_PATH_NO_PARENT] = "path-no-parent",
	[FAMFS_F_PATH_PARENT_NOT_DIR] = "path-parent-not-directory",
	[FAMFS_F_PATH_DUPLICATE] = "path-duplicate",
	[FAMFS_F_CROSSLINK] = "crosslink",
	[FAMFS_F_DELETE_ENTRY] = "delete-entry-ignored",
	[FAMFS_F_LOG_FULL] = "log-full",
	[FAMFS_F_PATH_RESERVED] = "path-reserved",
};

const char *famfs_finding_name(enum famfs_finding_code code)
{
	if ((unsigned)code >= _FAMFS_F_MAX || !finding_names[code])
		return "unknown";
	return finding_names[code];
}

const char *famfs_severity_name(enum famfs_severity sev)
{
	switch (sev) {
	case FAMFS_SEV_INFO:    return "info";
	case FAMFS_SEV_WARNING: return "warning";
	case FAMFS_SEV_ERROR:   return "error";
	case FAMFS_SEV_FATAL:   return "fatal";
	}
	return "unknown";
}
