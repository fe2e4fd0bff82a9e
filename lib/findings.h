/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Everything a strict reader can find wrong with famfs media, as stable
 * codes.  The validators in superblock.c, log.c and path.c return these, and
 * the checker (check.c) collects them as findings.  The names returned by
 * famfs_finding_name() appear in fsck.famfs --json output and are part of its
 * documented interface: never renumber or rename, only append.
 */
#ifndef FAMFS_FINDINGS_H
#define FAMFS_FINDINGS_H

#include <stdint.h>

enum famfs_finding_code {
	FAMFS_OK = 0,

	/* device */
	FAMFS_F_DEVICE_TOO_SMALL,     /* smaller than the superblock region or than it claims */

	/* superblock */
	FAMFS_F_SB_MAGIC,
	FAMFS_F_SB_VERSION,
	FAMFS_F_SB_OMF_MAJOR,
	FAMFS_F_SB_CRC,
	FAMFS_F_SB_ALLOC_UNIT,
	FAMFS_F_SB_LOG_OFFSET,
	FAMFS_F_SB_LOG_LEN,
	FAMFS_F_SB_DEV_SIZE,

	/* log header */
	FAMFS_F_LOG_MAGIC,
	FAMFS_F_LOG_CRC,
	FAMFS_F_LOG_LEN,
	FAMFS_F_LOG_LAST_INDEX,
	FAMFS_F_LOG_NEXT_INDEX,
	FAMFS_F_LOG_NEXT_SEQNUM,

	/* log entries */
	FAMFS_F_ENTRY_SEQNUM,
	FAMFS_F_ENTRY_CRC,
	FAMFS_F_ENTRY_TYPE,
	FAMFS_F_EXTENT_TYPE,
	FAMFS_F_EXTENT_COUNT,
	FAMFS_F_STRIP_COUNT,
	FAMFS_F_CHUNK_SIZE,
	FAMFS_F_EXTENT_ALIGN,
	FAMFS_F_EXTENT_ZERO_OFFSET,
	FAMFS_F_EXTENT_BEYOND_DEVICE,
	FAMFS_F_EXTENT_IN_METADATA,
	FAMFS_F_EXTENT_DEVINDEX,
	FAMFS_F_EXTENT_LENGTH,
	FAMFS_F_FILE_SIZE,

	/* paths */
	FAMFS_F_PATH_UNTERMINATED,
	FAMFS_F_PATH_EMPTY,
	FAMFS_F_PATH_ABSOLUTE,
	FAMFS_F_PATH_EMPTY_COMPONENT,
	FAMFS_F_PATH_DOT_COMPONENT,
	FAMFS_F_PATH_NO_PARENT,
	FAMFS_F_PATH_PARENT_NOT_DIR,
	FAMFS_F_PATH_DUPLICATE,

	/* space */
	FAMFS_F_CROSSLINK,

	/* notices that are not damage */
	FAMFS_F_DELETE_ENTRY,         /* type DELETE: defined upstream, never written, ignored */
	FAMFS_F_LOG_FULL,

	/* paths, added later */
	FAMFS_F_PATH_RESERVED,        /* ".meta" at the root: the kernel backend's files live there */

	_FAMFS_F_MAX,
};

enum famfs_severity {
	FAMFS_SEV_INFO,
	FAMFS_SEV_WARNING,
	FAMFS_SEV_ERROR,   /* damage: the file system is not clean */
	FAMFS_SEV_FATAL,   /* nothing past this point can be read */
};

/* Stable short name, e.g. "entry-crc". */
const char *famfs_finding_name(enum famfs_finding_code code);
const char *famfs_severity_name(enum famfs_severity sev);

#endif
