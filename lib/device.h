/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One way to reach famfs media, whatever holds them: a device-DAX character
 * device (/dev/daxX.Y), a pmem block device (/dev/pmemN) or a regular image
 * file.  The whole device is mapped MAP_SHARED at a 2 MiB aligned address.
 */
#ifndef FAMFS_DEVICE_H
#define FAMFS_DEVICE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cleanup.h"
#include "error.h"

enum famfs_device_kind {
	FAMFS_DEVICE_IMAGE,
	FAMFS_DEVICE_DAX,
	FAMFS_DEVICE_PMEM,
};

enum famfs_device_flags {
	FAMFS_DEVICE_WRITE = 1u << 0,   /* open and map read-write */
	FAMFS_DEVICE_EXCL  = 1u << 1,   /* block devices: O_EXCL, fails when mounted */
	FAMFS_DEVICE_NOMAP = 1u << 2,   /* only open and size it */
};

struct famfs_device {
	char *path;
	int fd;
	enum famfs_device_kind kind;
	bool writable;
	uint64_t size;      /* bytes the medium really has */
	uint8_t *base;      /* mapping of [0, size), or NULL with NOMAP */
	dev_t rdev;         /* for DAX and pmem devices */
};

int famfs_device_open(const char *path, unsigned flags,
		      struct famfs_device **ret, struct famfs_err *err);

/* Unmaps and closes; accepts NULL; returns NULL. */
struct famfs_device *famfs_device_close(struct famfs_device *dev);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct famfs_device *, famfs_device_close);

/*
 * Faults in [p, p + len) of the device's mapping with one system call
 * (MADV_POPULATE_READ) instead of a page fault per page; a kernel without
 * it just leaves the faults for later.
 */
void famfs_device_prefault(const void *p, size_t len);

const char *famfs_device_kind_name(enum famfs_device_kind kind);

/* Size of a device-DAX character device, from sysfs. */
int famfs_dax_size(dev_t rdev, uint64_t *ret_size, struct famfs_err *err);

/* Whether the block device @rdev, or the device behind a DAX device, is mounted. */
bool famfs_device_is_mounted(const struct famfs_device *dev);

#endif
