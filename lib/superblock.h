/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef FAMFS_SUPERBLOCK_H
#define FAMFS_SUPERBLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "crc32.h"
#include "error.h"
#include "findings.h"
#include "omf.h"

uint32_t famfs_superblock_crc(const struct famfs_superblock *sb);

/*
 * Checks every superblock rule of a strict reader against a medium of
 * @real_size bytes.  Returns FAMFS_OK, or the first rule broken with a
 * message in @err.
 */
enum famfs_finding_code famfs_superblock_validate(const struct famfs_superblock *sb,
						  uint64_t real_size, struct famfs_err *err);

/* Whether @log_len is a length mkfs may write: a power of two >= 8 MiB. */
bool famfs_log_len_valid(uint64_t log_len);

struct famfs_superblock_params {
	uint64_t dev_size;
	uint64_t log_len;
	const uint8_t *system_uuid;   /* 16 bytes */
	const char *dev_name;         /* recorded in the device record */
};

/* Fills a fresh superblock (new file system and device UUIDs) with its CRC. */
void famfs_superblock_init(struct famfs_superblock *sb, const struct famfs_superblock_params *p);

/* Offset where file data may start. */
static inline uint64_t famfs_data_start(uint64_t log_len)
{
	return FAMFS_LOG_OFFSET + log_len;
}

#endif
