// SPDX-License-Identifier: LGPL-2.1-or-later
#include <inttypes.h>
#include <string.h>
#include <uuid/uuid.h>

#include "crc32.h"
#include "superblock.h"

uint32_t famfs_superblock_crc(const struct famfs_superblock *sb)
{
	return famfs_crc32(sb, FAMFS_SB_CRC_LEN);
}

bool famfs_log_len_valid(uint64_t log_len)
{
	return log_len >= FAMFS_LOG_LEN_MIN && (log_len & (log_len - 1)) == 0;
}

enum famfs_finding_code famfs_superblock_validate(const struct famfs_superblock *sb,
						  uint64_t real_size, struct famfs_err *err)
{
	uint32_t crc;

	if (real_size < sizeof(*sb)) {
		famfs_err_set(err, -EINVAL, "device is %" PRIu64 " bytes, too small to hold a superblock",
			      real_size);
		return FAMFS_F_DEVICE_TOO_SMALL;
	}
	if (sb->magic != FAMFS_SUPER_MAGIC) {
		famfs_err_set(err, -EINVAL, "superblock: bad magic 0x%" PRIx64 " (expected 0x%" PRIx64 ")",
			      sb->magic, FAMFS_SUPER_MAGIC);
		return FAMFS_F_SB_MAGIC;
	}
	crc = famfs_superblock_crc(sb);
	if (sb->crc != crc) {
		famfs_err_set(err, -EINVAL, "superblock: CRC mismatch (stored 0x%" PRIx64 ", computed 0x%08x)",
			      sb->crc, crc);
		return FAMFS_F_SB_CRC;
	}
	if (sb->version < FAMFS_OLDEST_VERSION || sb->version > FAMFS_CURRENT_VERSION) {
		famfs_err_set(err, -EINVAL, "superblock: unsupported version %" PRIu64 " (supported %d to %d)",
			      sb->version, FAMFS_OLDEST_VERSION, FAMFS_CURRENT_VERSION);
		return FAMFS_F_SB_VERSION;
	}
	if (sb->omf_major != FAMFS_OMF_VER_MAJOR) {
		famfs_err_set(err, -EINVAL, "superblock: unsupported OMF major version %u (expected %d)",
			      sb->omf_major, FAMFS_OMF_VER_MAJOR);
		return FAMFS_F_SB_OMF_MAJOR;
	}
	if (sb->alloc_unit != FAMFS_ALLOC_UNIT && sb->alloc_unit != FAMFS_ALLOC_UNIT_SMALL) {
		famfs_err_set(err, -EINVAL, "superblock: bad allocation unit 0x%" PRIx64
			      " (expected 0x200000 or 0x1000)", sb->alloc_unit);
		return FAMFS_F_SB_ALLOC_UNIT;
	}
	if (sb->log_offset != FAMFS_LOG_OFFSET) {
		famfs_err_set(err, -EINVAL, "superblock: log offset 0x%" PRIx64 " (expected 0x200000)",
			      sb->log_offset);
		return FAMFS_F_SB_LOG_OFFSET;
	}
	if (!famfs_log_len_valid(sb->log_len)) {
		famfs_err_set(err, -EINVAL, "superblock: log length 0x%" PRIx64
			      " is not a power of two of at least 8 MiB", sb->log_len);
		return FAMFS_F_SB_LOG_LEN;
	}
	if (sb->dev_size > real_size) {
		famfs_err_set(err, -EINVAL, "superblock: device size %" PRIu64
			      " is larger than the medium (%" PRIu64 " bytes)", sb->dev_size, real_size);
		return FAMFS_F_SB_DEV_SIZE;
	}
	if (famfs_data_start(sb->log_len) > sb->dev_size) {
		famfs_err_set(err, -EINVAL, "superblock: log (0x%" PRIx64 " bytes at 2 MiB) does not fit in a device of %"
			      PRIu64 " bytes", sb->log_len, sb->dev_size);
		return FAMFS_F_SB_LOG_LEN;
	}
	return FAMFS_OK;
}

void famfs_superblock_init(struct famfs_superblock *sb, const struct famfs_superblock_params *p)
{
	memset(sb, 0, sizeof(*sb));
	sb->magic = FAMFS_SUPER_MAGIC;
	sb->version = FAMFS_CURRENT_VERSION;
	sb->log_offset = FAMFS_LOG_OFFSET;
	sb->log_len = p->log_len;
	sb->alloc_unit = FAMFS_ALLOC_UNIT;
	sb->omf_major = FAMFS_OMF_VER_MAJOR;
	sb->omf_minor = FAMFS_OMF_VER_MINOR;
	uuid_generate(sb->uuid);
	uuid_generate(sb->dev_uuid);
	memcpy(sb->system_uuid, p->system_uuid, 16);
	sb->dev_size = p->dev_size;
	if (p->dev_name)   /* like upstream: no NUL when the name fills the field */
		memcpy(sb->dev_name, p->dev_name, strnlen(p->dev_name, sizeof(sb->dev_name)));
	sb->crc = famfs_superblock_crc(sb);
}
