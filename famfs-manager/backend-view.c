// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The view backend: no kernel module.  The namespace lives in the daemon
 * (libfamfs keeps it current), and file data is reached through the device
 * itself: callers trusted with the whole device get an fd of the device or
 * image and the file's extents, and map those; anyone else gets a sealed
 * copy of the file's bytes.  There are no page-fault counters without the
 * module.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend.h"
#include "cache.h"
#include "cleanup.h"

static int view_attach(struct backend_target *t, struct famfs_err *err)
{
	return 0;
}

static int view_instantiate(struct backend_target *t, uint32_t node, const struct famfs_log_entry *e,
			    struct famfs_err *err)
{
	return 0;   /* the namespace node is the file */
}

static int view_open_data(struct backend_target *t, uint32_t node, bool writable, int *ret_fd,
			  struct famfs_err *err)
{
	const struct famfs_device *dev = famfs_fs_device(t->fs);
	char self[64];
	int fd;

	if (writable && !famfs_fs_is_master(t->fs))
		return famfs_err_set(err, -EROFS, "clients do not write: %s is mastered by another host",
				     t->device);
	if (writable && !dev->writable)
		return famfs_err_set(err, -EROFS, "%s is attached read-only", t->device);
	/*
	 * A fresh open file description, so the caller's mode is its own, of
	 * the very device attached: reopening by name could reach whatever
	 * the name points to now.
	 */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", dev->fd);
	fd = open(self, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return famfs_err_set(err, -errno, "cannot reopen %s: %s", t->device, strerror(errno));
	*ret_fd = fd;
	return 0;
}

/* Where byte @off of the file of @en lies on the device, and how many follow there. */
static int locate_in_entry(const struct famfs_log_entry *en, uint64_t off, uint64_t *ret_dev_off,
			   uint64_t *ret_run)
{
	const struct famfs_log_file_meta *fm = &en->file;

	if (fm->ext_type == FAMFS_EXT_INTERLEAVED) {
		const struct famfs_interleaved_extent *ie = &fm->ie[0];
		uint64_t chunk, strip, in;

		if (ie->nstrips == 0 || ie->nstrips > FAMFS_MAX_STRIPS || ie->chunk_size == 0)
			return -EIO;
		chunk = off / ie->chunk_size;
		strip = chunk % ie->nstrips;
		in = (chunk / ie->nstrips) * ie->chunk_size + off % ie->chunk_size;
		if (in >= ie->strips[strip].len)
			return -EIO;
		*ret_dev_off = ie->strips[strip].offset + in;
		*ret_run = ie->chunk_size - off % ie->chunk_size;
		return 0;
	}
	for (uint32_t k = 0; k < fm->nextents && k < FAMFS_MAX_SIMPLE_EXTENTS; k++) {
		if (off < fm->se[k].len) {
			*ret_dev_off = fm->se[k].offset + off;
			*ret_run = fm->se[k].len - off;
			return 0;
		}
		off -= fm->se[k].len;
	}
	return -EIO;
}

/*
 * The device run that holds byte @done of file @nd (@total bytes), inside
 * the device and clipped to the file's end.
 */
static int locate_run(const struct backend_target *t, const struct famfs_ns_node *nd,
		      const struct famfs_log_entry *en, uint64_t done, uint64_t total,
		      uint64_t *ret_dev_off, uint64_t *ret_run, struct famfs_err *err)
{
	uint64_t dev_size = famfs_fs_device(t->fs)->size;
	uint64_t dev_off, run;

	if (locate_in_entry(en, done, &dev_off, &run) < 0 || dev_off > dev_size || run > dev_size - dev_off)
		return famfs_err_set(err, -EIO, "%s/%s: the map ends before byte %llu of %llu", t->mountpoint,
				     nd->path, (unsigned long long)done, (unsigned long long)total);
	*ret_dev_off = dev_off;
	*ret_run = run < total - done ? run : total - done;
	return 0;
}

/*
 * A read-only descriptor of a sealed memfd holding exactly the file's
 * bytes: it reaches nothing else on the device, and neither the caller nor
 * anyone can change or resize it.
 */
static int view_open_copy(struct backend_target *t, uint32_t node, const struct famfs_log_entry *en,
			  int *ret_fd, struct famfs_err *err)
{
	const struct famfs_ns_node *nd = famfs_ns_node(famfs_fs_namespace(t->fs), node);
	const struct famfs_device *dev = famfs_fs_device(t->fs);
	_cleanup_close_ int fd = -1;
	uint64_t size = nd->size;
	char self[64];
	int ro, r;

	if (size > VIEW_COPY_MAX)
		return famfs_err_set(err, -E2BIG,
				     "%s/%s is %llu bytes: a copy for a caller without access to the whole device holds at most %llu",
				     t->mountpoint, nd->path, (unsigned long long)size,
				     (unsigned long long)VIEW_COPY_MAX);
	if (!dev->base)
		return famfs_err_set(err, -EIO, "%s is not mapped", t->device);
	fd = memfd_create("famfs-file", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return famfs_err_set(err, -errno, "cannot make a copy of %s/%s: memfd_create: %s",
				     t->mountpoint, nd->path, strerror(errno));
	if (ftruncate(fd, (off_t)size) < 0)
		return famfs_err_set(err, -errno, "cannot make a copy of %s/%s of %llu bytes: %s", t->mountpoint,
				     nd->path, (unsigned long long)size, strerror(errno));
	for (uint64_t done = 0; done < size;) {
		uint64_t dev_off, run;
		ssize_t n;

		r = locate_run(t, nd, en, done, size, &dev_off, &run, err);
		if (r < 0)
			return r;
		famfs_cache_invalidate(dev->base + dev_off, run);
		n = pwrite(fd, dev->base + dev_off, run, (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return famfs_err_set(err, n < 0 ? -errno : -EIO, "cannot copy %s/%s: %s", t->mountpoint,
					     nd->path, n < 0 ? strerror(errno) : "short write");
		done += (uint64_t)n;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		return famfs_err_set(err, -errno, "cannot seal the copy of %s/%s: %s", t->mountpoint, nd->path,
				     strerror(errno));
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	ro = open(self, O_RDONLY | O_CLOEXEC);
	if (ro < 0)
		return famfs_err_set(err, -errno, "cannot reopen the copy of %s/%s read-only: %s",
				     t->mountpoint, nd->path, strerror(errno));
	*ret_fd = ro;
	return 0;
}

/*
 * Writes @len bytes of @src (a sealed memfd: it neither blocks nor shrinks)
 * at the start of file @node, through the device mapping, and flushes them
 * to the medium.
 */
static int view_write_from(struct backend_target *t, uint32_t node, const struct famfs_log_entry *en, int src,
			   uint64_t len, struct famfs_err *err)
{
	const struct famfs_ns_node *nd = famfs_ns_node(famfs_fs_namespace(t->fs), node);
	const struct famfs_device *dev = famfs_fs_device(t->fs);
	int r;

	if (!famfs_fs_is_master(t->fs))
		return famfs_err_set(err, -EROFS, "clients do not write: %s is mastered by another host",
				     t->device);
	if (!dev->writable || !dev->base)
		return famfs_err_set(err, -EROFS, "%s is attached read-only", t->device);
	for (uint64_t done = 0; done < len;) {
		uint64_t dev_off, run;
		ssize_t n;

		r = locate_run(t, nd, en, done, len, &dev_off, &run, err);
		if (r < 0)
			return r;
		n = pread(src, dev->base + dev_off, run, (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return famfs_err_set(err, n < 0 ? -errno : -EIO, "cannot read the data for %s/%s: %s",
					     t->mountpoint, nd->path, n < 0 ? strerror(errno) : "it ended early");
		famfs_cache_flush(dev->base + dev_off, (size_t)n);
		done += (uint64_t)n;
	}
	return 0;
}

static void view_detach(struct backend_target *t)
{
}

const struct backend_ops backend_view = {
	.name = "view",
	.attach = view_attach,
	.instantiate = view_instantiate,
	.open_data = view_open_data,
	.open_copy = view_open_copy,
	.write_from = view_write_from,
	.detach = view_detach,
};
