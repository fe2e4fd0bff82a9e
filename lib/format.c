// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "cache.h"
#include "format.h"
#include "log.h"
#include "omf.h"
#include "superblock.h"
#include "units.h"

int famfs_format_refuse(const struct famfs_device *dev, uint64_t log_len, bool force, struct famfs_err *err)
{
	enum famfs_finding_code existing;
	uint64_t min_size;

	if (!famfs_log_len_valid(log_len))
		return famfs_err_set(err, -EINVAL, "invalid log length %" PRIu64 ": it must be a power of two of at least 8M",
				     log_len);
	if (famfs_device_is_mounted(dev))
		return famfs_err_set(err, -EBUSY, "cannot format %s: it is mounted; unmount it first", dev->path);
	existing = famfs_superblock_validate((const void *)dev->base, dev->size, NULL);
	if ((existing == FAMFS_OK || existing == FAMFS_F_SB_VERSION || existing == FAMFS_F_SB_DEV_SIZE) && !force)
		return famfs_err_set(err, -EEXIST,
				     "cannot format %s: it already holds a famfs file system; use -f to overwrite it",
				     dev->path);
	min_size = famfs_data_start(log_len) + FAMFS_ALLOC_UNIT;
	if (dev->size < min_size) {
		char have[32], log[32], need[32];

		return famfs_err_set(err, -ENOSPC, "cannot format %s: it is too small: %s, and a %s log needs at least %s",
				     dev->path, famfs_format_size(dev->size, have, sizeof(have)),
				     famfs_format_size(log_len, log, sizeof(log)),
				     famfs_format_size(min_size, need, sizeof(need)));
	}
	return 0;
}

void famfs_persist(const struct famfs_device *dev, void *p, size_t len)
{
	famfs_cache_flush(p, len);
	if (dev->kind != FAMFS_DEVICE_DAX)
		(void)msync((void *)((uintptr_t)p & ~(uintptr_t)4095), len + ((uintptr_t)p & 4095), MS_SYNC);
}

void famfs_format_log(const struct famfs_device *dev, uint64_t log_len)
{
	famfs_log_format(dev->base + FAMFS_LOG_OFFSET, log_len);
	famfs_persist(dev, dev->base + FAMFS_LOG_OFFSET, log_len);
}

void famfs_format_superblock(const struct famfs_device *dev, uint64_t log_len, const uint8_t host_uuid[16],
			     const char *dev_name)
{
	struct famfs_superblock sb;

	famfs_superblock_init(&sb, &(struct famfs_superblock_params){
		.dev_size = dev->size,
		.log_len = log_len,
		.system_uuid = host_uuid,
		.dev_name = dev_name,
	});
	memset(dev->base, 0, FAMFS_SUPERBLOCK_SIZE);
	memcpy(dev->base, &sb, sizeof(sb));
	famfs_persist(dev, dev->base, FAMFS_SUPERBLOCK_SIZE);
}
