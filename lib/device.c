// SPDX-License-Identifier: LGPL-2.1-or-later
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <linux/fs.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "device.h"
#include "omf.h"

#define MAP_ALIGN FAMFS_ALLOC_UNIT

const char *famfs_device_kind_name(enum famfs_device_kind kind)
{
	switch (kind) {
	case FAMFS_DEVICE_IMAGE: return "image";
	case FAMFS_DEVICE_DAX:   return "dax";
	case FAMFS_DEVICE_PMEM:  return "pmem";
	}
	return "unknown";
}

/* One number from /sys/dev/char/MAJ:MIN/@attr of a DAX character device */
static int dax_sysfs_u64(dev_t rdev, const char *attr, uint64_t *ret, struct famfs_err *err)
{
	char path[128];
	unsigned long long v;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/%s", major(rdev), minor(rdev), attr);
	f = fopen(path, "re");
	if (!f)
		return famfs_err_set(err, -errno, "cannot read %s: %s", path, strerror(errno));
	n = fscanf(f, "%llu", &v);
	fclose(f);
	if (n != 1)
		return famfs_err_set(err, -EIO, "cannot parse %s", path);
	*ret = v;
	return 0;
}

int famfs_dax_size(dev_t rdev, uint64_t *ret_size, struct famfs_err *err)
{
	return dax_sysfs_u64(rdev, "size", ret_size, err);
}

/*
 * famfs hands out its memory in 2 MiB extents and maps each on its own:
 * a device-dax instance must fault at exactly that size.  With a smaller
 * align it faults in 4 KiB pages (and its start may not be 2 MiB aligned
 * in memory); with a larger one (1 GiB) device-dax refuses every mapping
 * that is not a multiple of it, so no file could be mapped.  Kernels
 * before 5.10 have no align attribute: their device-dax maps at the
 * region's alignment, which ndctl makes 2 MiB by default.
 */
static int dax_check_align(const char *path, dev_t rdev, struct famfs_err *err)
{
	char link[64], target[PATH_MAX];
	const char *name;
	uint64_t align;

	if (dax_sysfs_u64(rdev, "align", &align, NULL) < 0 || align == FAMFS_ALLOC_UNIT)
		return 0;
	snprintf(link, sizeof(link), "/sys/dev/char/%u:%u", major(rdev), minor(rdev));
	if (!realpath(link, target))
		snprintf(target, sizeof(target), "%s", path);
	name = basename(target);
	return famfs_err_set(err, -EINVAL,
			     "cannot use %s: dax instance %s maps in units of %" PRIu64 " KiB (its align), "
			     "and famfs needs exactly 2048 KiB, the size of its extents "
			     "(ndctl create-namespace -m devdax -a 2M, or daxctl reconfigure-device --align=2M %s)",
			     path, name, align >> 10, name);
}

/*
 * Maps [0, len) of @fd at an address aligned to MAP_ALIGN, so that file
 * offsets aligned to 2 MiB land on 2 MiB virtual addresses (PMD mappings
 * on DAX).  Reserves a larger anonymous range, then maps over it.
 */
static void *map_aligned(int fd, uint64_t len, bool writable)
{
	int prot = PROT_READ | (writable ? PROT_WRITE : 0);
	size_t reserve = len + MAP_ALIGN;
	uint8_t *area, *aligned, *mapped;

	area = mmap(NULL, reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (area == MAP_FAILED)
		return MAP_FAILED;
	aligned = (uint8_t *)(((uintptr_t)area + MAP_ALIGN - 1) & ~(uintptr_t)(MAP_ALIGN - 1));
	mapped = mmap(aligned, len, prot, MAP_SHARED | MAP_FIXED, fd, 0);
	if (mapped == MAP_FAILED) {
		int saved = errno;

		munmap(area, reserve);
		errno = saved;
		return MAP_FAILED;
	}
	if (aligned > area)
		munmap(area, aligned - area);
	if (aligned + len < area + reserve)
		munmap(aligned + len, (area + reserve) - (aligned + len));
	return mapped;
}

/*
 * A device-dax instance that is not bound to device_dax cannot be opened
 * (ENXIO; on some kernels its node goes away, ENOENT): in system-ram mode
 * (kmem) its memory is the kernel's.  When @path names such an instance,
 * say which driver has it instead of a bare errno.
 */
static int dax_instance_unusable(const char *path, const struct stat *st, struct famfs_err *err)
{
	char copy[PATH_MAX], dir[PATH_MAX + 64], link[PATH_MAX + 80], target[PATH_MAX];
	const char *name, *driver;
	ssize_t n;

	if (st) {
		/* the node's own device, whatever name (or symlink) @path is */
		snprintf(link, sizeof(link), "/sys/dev/char/%u:%u", major(st->st_rdev), minor(st->st_rdev));
		if (!realpath(link, copy))
			return 0;
	} else if (snprintf(copy, sizeof(copy), "%s", path) >= (int)sizeof(copy)) {
		return 0;
	}
	name = basename(copy);
	if (strncmp(name, "dax", 3) != 0)
		return 0;
	snprintf(dir, sizeof(dir), "/sys/bus/dax/devices/%s", name);
	if (access(dir, F_OK) < 0)
		return 0;
	snprintf(link, sizeof(link), "%s/driver", dir);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return famfs_err_set(err, -ENXIO, "cannot open %s: dax instance %s has no driver bound "
				     "(daxctl reconfigure-device --mode=devdax %s)", path, name, name);
	target[n] = 0;
	driver = basename(target);
	return famfs_err_set(err, -ENXIO, "cannot open %s: dax instance %s is bound to %s%s, not device_dax "
			     "(daxctl reconfigure-device --mode=devdax %s)", path, name, driver,
			     strcmp(driver, "kmem") ? "" : " (system-ram mode)", name);
}

int famfs_device_open(const char *path, unsigned flags,
		      struct famfs_device **ret, struct famfs_err *err)
{
	bool writable = flags & FAMFS_DEVICE_WRITE;
	_cleanup_(famfs_device_closep) struct famfs_device *dev = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;
	int oflags = (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC;
	int r;

	if (!path || !*path)
		return famfs_err_set(err, -EINVAL, "no device given");
	if (stat(path, &st) < 0) {
		r = -errno;
		if (r == -ENOENT && dax_instance_unusable(path, NULL, err) < 0)
			return -ENXIO;
		return famfs_err_set(err, r, "cannot open %s: %s", path, strerror(-r));
	}
	if (S_ISBLK(st.st_mode) && (flags & FAMFS_DEVICE_EXCL))
		oflags |= O_EXCL;
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode) && !S_ISCHR(st.st_mode))
		return famfs_err_set(err, -ENODEV, "cannot use %s: %s", path,
				     S_ISDIR(st.st_mode) ? "is a directory" :
				     S_ISFIFO(st.st_mode) ? "is a FIFO, not a device or image file" :
				     "not a device or image file");

	fd = open(path, oflags);
	if (fd < 0) {
		if (errno == ENXIO && S_ISCHR(st.st_mode) && dax_instance_unusable(path, &st, err) < 0)
			return -ENXIO;
		if (errno == EBUSY)
			return famfs_err_set(err, -EBUSY, "cannot open %s: device is in use (mounted?)", path);
		return famfs_err_set(err, -errno, "cannot open %s: %s", path, strerror(errno));
	}

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return famfs_err_set(err, -ENOMEM, "out of memory");
	dev->fd = TAKE_FD(fd);
	dev->writable = writable;
	dev->path = strdup(path);
	if (!dev->path)
		return famfs_err_set(err, -ENOMEM, "out of memory");

	if (S_ISREG(st.st_mode)) {
		dev->kind = FAMFS_DEVICE_IMAGE;
		dev->size = st.st_size;
	} else if (S_ISBLK(st.st_mode)) {
		dev->kind = FAMFS_DEVICE_PMEM;
		dev->rdev = st.st_rdev;
		if (ioctl(dev->fd, BLKGETSIZE64, &dev->size) < 0)
			return famfs_err_set(err, -errno, "cannot get the size of %s: %s", path, strerror(errno));
		if (writable) {
			/* Opening a read-only block device for writing succeeds; say it here. */
			int ro = 0;

			if (ioctl(dev->fd, BLKROGET, &ro) == 0 && ro)
				return famfs_err_set(err, -EROFS,
						     "cannot open %s for writing: the device is read-only", path);
		}
	} else {
		dev->kind = FAMFS_DEVICE_DAX;
		dev->rdev = st.st_rdev;
		r = famfs_dax_size(st.st_rdev, &dev->size, err);
		if (r < 0) {
			famfs_err_prefix(err, "%s is not a DAX device", path);
			return r;
		}
		r = dax_check_align(path, st.st_rdev, err);
		if (r < 0)
			return r;
	}

	if (dev->size == 0)
		return famfs_err_set(err, -EINVAL, "%s is empty (0 bytes)", path);

	if (!(flags & FAMFS_DEVICE_NOMAP)) {
		void *base;

		/*
		 * A pmem block device's mapping is page cache, and a famfs mount
		 * of it (DAX) reads and writes the memory past that cache: pages
		 * cached before the mount's last appends would show an old log
		 * (and a writer would append over entries it cannot see).  Drop
		 * the clean cached pages so the mapping reads the memory now.
		 */
		if (dev->kind == FAMFS_DEVICE_PMEM)
			(void)posix_fadvise(dev->fd, 0, 0, POSIX_FADV_DONTNEED);
		base = map_aligned(dev->fd, dev->size, writable);

		if (base == MAP_FAILED)
			return famfs_err_set(err, -errno, "cannot map %s (%" PRIu64 " bytes): %s",
					     path, dev->size, strerror(errno));
		dev->base = base;
	}
	*ret = TAKE_PTR(dev);
	return 0;
}

struct famfs_device *famfs_device_close(struct famfs_device *dev)
{
	if (!dev)
		return NULL;
	if (dev->base)
		munmap(dev->base, dev->size);
	if (dev->fd >= 0)
		close(dev->fd);
	free(dev->path);
	free(dev);
	return NULL;
}

bool famfs_device_is_mounted(const struct famfs_device *dev)
{
	struct mntent *m;
	bool mounted = false;
	FILE *f;

	if (dev->kind == FAMFS_DEVICE_IMAGE)
		return false;
	f = setmntent("/proc/self/mounts", "re");
	if (!f)
		return false;
	while (!mounted && (m = getmntent(f))) {
		struct stat st;

		if (m->mnt_fsname[0] != '/' || stat(m->mnt_fsname, &st) < 0)
			continue;
		if ((S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode)) && st.st_rdev == dev->rdev)
			mounted = true;
	}
	endmntent(f);
	return mounted;
}

void famfs_device_prefault(const void *p, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t start, end;

	if (len == 0 || page <= 0)
		return;
	start = (uintptr_t)p & ~((uintptr_t)page - 1);
	end = (uintptr_t)p + len;
	(void)madvise((void *)start, end - start, MADV_POPULATE_READ);
}
