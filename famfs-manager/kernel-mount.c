// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel backend's mount: mount -t famfs (noatime, nosuid, noexec,
 * nodev) or adopt the famfs mount a previous run left, .meta/.superblock
 * and .meta/.log made with MAP_CREATE_V2 (file types SUPERBLOCK and LOG,
 * so upstream's tools work on the mount), the library switched to reading
 * the superblock and log through their DAX mappings, the media failures
 * famfs.ko shows in /proc/self/mounts, and unmounting.
 *
 * Why the .meta view: a pmem block device mapped directly goes through the
 * page cache, which neither sees other hosts' appends nor reaches the
 * memory the kernel's DAX mappings read.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "kernel-mount.h"
#include "kernel.h"
#include "logging.h"
#include "medium-guard.h"

#define KERNEL_STATFS_MAGIC      0x87b282feU   /* standalone famfs.ko */
#define KERNEL_STATFS_MAGIC_OLD  0x87b282ffU

DEFINE_TRIVIAL_CLEANUP_FUNC(FILE *, endmntent);

int kernel_open_beneath(int root, const char *rel, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
		.mode = (flags & O_CREAT) ? mode : 0,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	long fd = syscall(SYS_openat2, root, rel, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

static int mkdir_p(const char *path, mode_t mode)
{
	char buf[4096];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		buf[i] = i < n ? '/' : '\0';
	}
	return 0;
}

static bool is_famfs_dir(int fd)
{
	struct statfs sf;

	if (fstatfs(fd, &sf) < 0)
		return false;
	return (uint32_t)sf.f_type == KERNEL_STATFS_MAGIC || (uint32_t)sf.f_type == KERNEL_STATFS_MAGIC_OLD;
}

int kernel_mount_open(struct kernel_mount *m, struct backend_target *t, struct famfs_err *err)
{
	int r;

	if (!t->mountpoint || t->mountpoint[0] != '/')
		return famfs_err_set(err, -EINVAL, "no mount point");
	r = mkdir_p(t->mountpoint, 0755);
	if (r < 0)
		return famfs_err_set(err, r, "cannot create %s: %s", t->mountpoint, strerror(-r));
	m->root = open(t->mountpoint, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (m->root < 0)
		return famfs_err_set(err, -errno, "cannot open %s: %s", t->mountpoint, strerror(errno));
	if (is_famfs_dir(m->root)) {
		/* The daemon restarted: the mount is ours from before. */
		m->adopted = true;
		return 0;
	}
	close(m->root);
	m->root = -1;
	if (mount(t->device, t->mountpoint, "famfs", KERNEL_MOUNT_FLAGS, "") < 0)
		return famfs_err_set(err, -errno, "mount -t famfs %s %s: %s", t->device, t->mountpoint,
				     strerror(errno));
	m->mounted = true;
	m->root = open(t->mountpoint, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (m->root < 0 || !is_famfs_dir(m->root))
		return famfs_err_set(err, m->root < 0 ? -errno : -EXDEV,
				     "%s is not a famfs mount after mounting it", t->mountpoint);
	return 0;
}

const char *kernel_meta_file_path(enum kernel_meta_file which)
{
	return which == KERNEL_META_SUPERBLOCK ? ".meta/.superblock" : ".meta/.log";
}

/* No .meta file without its map stays behind. */
static void unlink_meta_file(int root, const char *rel)
{
	_cleanup_close_ int dfd = kernel_open_beneath(root, ".meta", O_PATH | O_DIRECTORY, 0);

	if (dfd >= 0)
		(void)unlinkat(dfd, strchr(rel, '/') + 1, 0);
}

int kernel_meta_file(struct backend_target *t, int root, enum kernel_meta_file which, struct famfs_err *err)
{
	const char *rel = kernel_meta_file_path(which);
	struct famfs_ioc_get_fmap got = {0};
	struct famfs_err e2 = {0};
	_cleanup_close_ int fd = -1;
	struct kernel_fmap km;
	mode_t mode;

	if (which == KERNEL_META_SUPERBLOCK) {
		kernel_fmap_meta(FAMFS_SUPERBLOCK, 0, FAMFS_SUPERBLOCK_SIZE, &km);
		mode = 0444;
	} else {
		kernel_fmap_meta(FAMFS_LOG, FAMFS_LOG_OFFSET, famfs_fs_layout(t->fs)->log_len, &km);
		mode = famfs_fs_is_master(t->fs) ? 0644 : 0444;
	}
	fd = kernel_open_beneath(root, rel, O_RDONLY | O_CREAT | O_EXCL | O_NOCTTY, mode);
	if (fd >= 0) {
		if (fchmod(fd, mode) < 0 || ioctl(fd, FAMFSIOC_MAP_CREATE_V2, &km.fmap) < 0) {
			int r = famfs_err_set(err, -errno, "cannot create %s: MAP_CREATE_V2: %s", rel,
					      strerror(errno));

			close(TAKE_FD(fd));
			unlink_meta_file(root, rel);
			return r;
		}
		return 0;
	}
	if (fd != -EEXIST)
		return famfs_err_set(err, fd, "cannot create %s in %s: %s", rel, t->mountpoint, strerror(-fd));
	fd = kernel_open_beneath(root, rel, O_RDONLY | O_NOCTTY, 0);
	if (fd < 0)
		return famfs_err_set(err, fd, "cannot open %s: %s", rel, strerror(-fd));
	if (ioctl(fd, FAMFSIOC_MAP_GET_V2, &got) < 0)
		return famfs_err_set(err, -errno, "%s exists without a famfs map: %s", rel, strerror(errno));
	if (kernel_fmap_compare(&got, &km, &e2) < 0)
		return famfs_err_set(err, -EEXIST, "%s is not this file system's: %s", rel, e2.msg);
	return 0;
}

int kernel_mount_make_meta(struct kernel_mount *m, struct backend_target *t, struct famfs_err *err)
{
	_cleanup_close_ int dfd = -1;
	int r;

	dfd = kernel_open_beneath(m->root, ".", O_PATH | O_DIRECTORY, 0);
	if (dfd < 0)
		return famfs_err_set(err, dfd, "cannot open %s: %s", t->mountpoint, strerror(-dfd));
	if (mkdirat(dfd, ".meta", 0700) < 0 && errno != EEXIST)
		return famfs_err_set(err, -errno, "cannot create %s/.meta: %s", t->mountpoint, strerror(errno));
	r = kernel_meta_file(t, m->root, KERNEL_META_SUPERBLOCK, err);
	if (r < 0)
		return r;
	return kernel_meta_file(t, m->root, KERNEL_META_LOG, err);
}

/* Maps .meta file @rel over [@at, @at + @len) of the reserved view. */
static int map_meta_file(int root, const char *rel, uint8_t *at, size_t len, int prot, struct famfs_err *err)
{
	_cleanup_close_ int fd = -1;

	fd = kernel_open_beneath(root, rel, ((prot & PROT_WRITE) ? O_RDWR : O_RDONLY) | O_NOCTTY, 0);
	if (fd < 0)
		return famfs_err_set(err, fd, "cannot open %s: %s", rel, strerror(-fd));
	if (mmap(at, len, prot, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
		return famfs_err_set(err, -errno, "cannot map %s: %s", rel, strerror(errno));
	return 0;
}

/*
 * The two files are mapped side by side as on the medium (the log right
 * after the 2 MiB superblock region), from a 2 MiB boundary so that faults
 * map whole PMDs.  The checks read this view (the backend's medium_view)
 * rather than the device mapping, whose page cache the DAX writes never
 * reach.
 */
int kernel_mount_use_meta(struct kernel_mount *m, struct backend_target *t, struct famfs_err *err)
{
	const struct famfs_device *dev = famfs_fs_device(t->fs);
	int prot = famfs_fs_is_master(t->fs) && dev->writable ? PROT_READ | PROT_WRITE : PROT_READ;
	const size_t align = 2u << 20;
	size_t log_len = famfs_fs_layout(t->fs)->log_len, span = FAMFS_LOG_OFFSET + log_len;
	uint8_t *res, *view;
	int r;

	res = mmap(NULL, span + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (res == MAP_FAILED)
		return famfs_err_set(err, -errno, "cannot reserve %zu bytes for the .meta files: %s", span,
				     strerror(errno));
	view = (uint8_t *)(((uintptr_t)res + align - 1) & ~(uintptr_t)(align - 1));
	if (view > res)
		munmap(res, (size_t)(view - res));
	munmap(view + span, (size_t)(res + span + align - (view + span)));
	m->view = view;
	m->view_len = span;
	/* The device can go while mounted: the .meta mappings then fault. */
	(void)medium_guard_add(view, span);
	r = map_meta_file(m->root, kernel_meta_file_path(KERNEL_META_SUPERBLOCK), view, FAMFS_SUPERBLOCK_SIZE,
			  PROT_READ, err);
	if (r < 0)
		return r;
	r = map_meta_file(m->root, kernel_meta_file_path(KERNEL_META_LOG), view + FAMFS_LOG_OFFSET, log_len,
			  prot, err);
	if (r < 0)
		return r;
	r = famfs_fs_use_metadata_view(t->fs, view, err);
	if (r < 0)
		return r;
	m->view_in_use = true;
	return 0;
}

/* Set once, on a restart's way out (kernel_mounts_leave_for_restart). */
static bool leave_mounted;

void kernel_mounts_leave_for_restart(void)
{
	leave_mounted = true;
}

bool kernel_mount_release(struct kernel_mount *m, struct backend_target *t)
{
	bool unmounted = false;

	if (m->view_in_use)
		(void)famfs_fs_use_metadata_view(t->fs, NULL, NULL);
	m->view_in_use = false;
	if (m->view) {
		medium_guard_remove(m->view);
		munmap(m->view, m->view_len);
		m->view = NULL;
	}
	if (m->root >= 0)
		close(TAKE_FD(m->root));
	if (m->mounted && leave_mounted) {
		manager_log("%s: left mounted for the restarted famfs-manager to adopt", t->mountpoint);
	} else if (m->mounted) {
		unmounted = true;
		if (umount2(t->mountpoint, 0) < 0) {
			manager_log("%s: cannot unmount (%s); detaching it lazily", t->mountpoint, strerror(errno));
			(void)umount2(t->mountpoint, MNT_DETACH);
		}
	}
	m->mounted = false;
	return unmounted;
}

/* The value of "@name=0x..." among @m's options; false when it is not there. */
static bool mount_option_u64(const struct mntent *m, const char *name, uint64_t *ret)
{
	const char *p = hasmntopt(m, name);
	char *end;

	if (!p || p[strlen(name)] != '=')
		return false;
	errno = 0;
	*ret = strtoull(p + strlen(name) + 1, &end, 0);
	return errno == 0 && (*end == ',' || *end == '\0');
}

int kernel_media_error(const char *mounts, const char *mountpoint, char *buf, size_t len)
{
	_cleanup_(endmntentp) FILE *mnt = NULL;
	struct mntent *m;

	mnt = setmntent(mounts, "re");
	if (!mnt)
		return -errno;
	while ((m = getmntent(mnt))) {
		uint64_t off, size;

		if (strcmp(m->mnt_dir, mountpoint) != 0 || strcmp(m->mnt_type, "famfs") != 0 ||
		    !hasmntopt(m, "dax_error"))
			continue;
		if (!mount_option_u64(m, "dax_error_offset", &off) || !mount_option_u64(m, "dax_error_len", &size))
			snprintf(buf, len, "media failure reported by famfs.ko (dax_error; the module does not say "
				 "where): every read, write and fault on %s fails with EIO", mountpoint);
		else if (off == 0 && size == UINT64_MAX)
			snprintf(buf, len, "media failure reported by famfs.ko: the whole device failed or went away; "
				 "every read, write and fault on %s fails with EIO", mountpoint);
		else
			snprintf(buf, len, "media failure reported by famfs.ko at device offset 0x%" PRIx64
				 ", length 0x%" PRIx64 ": every read, write and fault on %s fails with EIO",
				 off, size, mountpoint);
		return 1;
	}
	return 0;
}
