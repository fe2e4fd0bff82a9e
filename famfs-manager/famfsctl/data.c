// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * famfsctl's data path.  The descriptor OpenFile returns is the whole
 * device or the file alone, as the daemon decides for the caller; the
 * extents that come with it say where to map either way.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "client.h"
#include "data.h"
#include "message.h"

struct mapped_file {
	struct file_layout l;
	uint8_t *map[LAYOUT_MAX_EXTENTS];
	bool device_dax;        /* the descriptor is a /dev/dax: no page cache, no msync */
};

static void unmap_file(struct mapped_file *m)
{
	for (size_t i = 0; i < m->l.n; i++) {
		if (m->map[i])
			munmap(m->map[i], m->l.ext[i].len);
		m->map[i] = NULL;
	}
}

/* OpenFile, then map every extent of the descriptor it returns. */
static int map_file(const char *path, bool writable, struct mapped_file *ret)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_(unmap_file) struct mapped_file m = { 0 };
	_cleanup_close_ int fd = -1;
	struct stat st;
	int r;

	r = client_open_file(path, writable, &fd, &m.l, &e);
	if (r < 0 && sd_bus_error_is_set(&e))
		return client_error(writable ? "open for writing" : "open", path, &e, r);
	if (r < 0)
		return tool_error_errno(r, "cannot map %s: %m", path);
	if (fstat(fd, &st) < 0)
		return tool_error_errno(-errno, "cannot map %s: %m", path);
	m.device_dax = S_ISCHR(st.st_mode);
	for (size_t i = 0; i < m.l.n; i++) {
		void *p = mmap(NULL, m.l.ext[i].len, writable ? PROT_READ | PROT_WRITE : PROT_READ,
			       MAP_SHARED, fd, (off_t)m.l.ext[i].offset);

		if (p == MAP_FAILED)
			return tool_error_errno(-errno, "cannot map %s: %m", path);
		m.map[i] = p;
	}
	/* The mappings outlive the descriptor. */
	*ret = m;
	m = (struct mapped_file){ 0 };
	return 0;
}

/* Device pointer for file offset @off and how many bytes run on from there. */
static uint8_t *locate_in_extents(const struct mapped_file *m, uint64_t off, uint64_t *ret_run)
{
	const struct file_layout *l = &m->l;

	if (l->type == 1) {
		uint64_t c = off / l->chunk, s = c % l->n, in = (c / l->n) * l->chunk + off % l->chunk;

		if (in >= l->ext[s].len)
			return NULL;
		*ret_run = l->chunk - off % l->chunk;
		return m->map[s] + in;
	}
	for (size_t i = 0; i < l->n; i++) {
		if (off < l->ext[i].len) {
			*ret_run = l->ext[i].len - off;
			return m->map[i] + off;
		}
		off -= l->ext[i].len;
	}
	return NULL;
}

/*
 * The same, with the run cut at the end of the file (@off is inside it); a
 * map that ends too early is reported as "cannot @verb @path".
 */
static int locate(const struct mapped_file *m, uint64_t off, const char *verb, const char *path, uint8_t **ret_p,
		  uint64_t *ret_run)
{
	*ret_p = locate_in_extents(m, off, ret_run);
	if (!*ret_p)
		return tool_error_errno(-EBADMSG, "cannot %s %s: its map ends before the file size", verb, path);
	if (*ret_run > m->l.size - off)
		*ret_run = m->l.size - off;
	return 0;
}

/*
 * One file to stdout.  A failure to write stdout is returned as
 * *@ret_output_failed: nothing more can be written there.
 */
static int cat_one(const char *path, bool *ret_output_failed)
{
	_cleanup_(unmap_file) struct mapped_file m = { 0 };
	int r;

	r = map_file(path, false, &m);
	if (r < 0)
		return r;
	for (uint64_t off = 0; off < m.l.size;) {
		uint64_t run;
		uint8_t *p;
		ssize_t w;

		r = locate(&m, off, "read", path, &p, &run);
		if (r < 0)
			return r;
		/* another host may have written it: read the memory, not old cache lines */
		famfs_cache_invalidate(p, run);
		w = write(STDOUT_FILENO, p, run);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			*ret_output_failed = true;
			return tool_error_errno(-errno, "cannot write to stdout: %m");
		}
		off += w;
	}
	return 0;
}

int data_cat(char **paths, int n)
{
	bool output_failed = false;
	int r = 0;

	for (int i = 0; i < n && !output_failed; i++) {
		int k = cat_one(paths[i], &output_failed);

		if (k < 0)
			r = k;
	}
	return r;
}

/*
 * A caller that is not root has no descriptor of the device to write
 * through: the data goes in a sealed memfd, which the daemon copies into
 * the file (WriteFile).
 */
static int write_via_daemon(int src_fd, const char *dst, uint64_t size)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_close_ int mfd = -1;
	static char buf[1 << 20];
	int r;

	mfd = memfd_create("famfsctl-cp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0)
		return tool_error_errno(-errno, "cannot copy to %s: memfd_create: %m", dst);
	for (uint64_t done = 0; done < size;) {
		ssize_t n = read(src_fd, buf, size - done < sizeof(buf) ? (size_t)(size - done) : sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return tool_error_errno(-errno, "cannot read the source of %s: %m", dst);
		if (n == 0)
			return tool_error_errno(-EIO, "cannot read the source of %s: file shrank", dst);
		for (ssize_t off = 0, w; off < n; off += w) {
			w = write(mfd, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR) {
				w = 0;
				continue;
			}
			if (w <= 0)
				return tool_error_errno(w < 0 ? -errno : -EIO, "cannot copy to %s: %m", dst);
		}
		done += (uint64_t)n;
	}
	if (fcntl(mfd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		return tool_error_errno(-errno, "cannot seal the data for %s: %m", dst);
	r = client_write_file(dst, mfd, &e);
	if (r < 0)
		return client_error("write", dst, &e, r);
	return 0;
}

/* Root: map the file writable and read the source straight into it. */
static int write_mapped(int src_fd, const char *src, const char *dst)
{
	_cleanup_(unmap_file) struct mapped_file m = { 0 };
	int r;

	r = map_file(dst, true, &m);
	if (r < 0)
		return r;
	for (uint64_t off = 0; off < m.l.size;) {
		uint64_t run;
		uint8_t *p;
		ssize_t n;

		r = locate(&m, off, "copy to", dst, &p, &run);
		if (r < 0)
			return r;
		n = read(src_fd, p, run);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return tool_error_errno(-errno, "cannot read %s: %m", src);
		if (n == 0)
			return tool_error_errno(-EIO, "cannot read %s: file shrank", src);
		off += n;
	}
	/*
	 * Other hosts read the memory, not this CPU's caches: write the lines
	 * back.  A pmem or image mapping is page cache besides, which msync
	 * writes out; device-dax has none and refuses msync (EINVAL).
	 */
	for (size_t i = 0; i < m.l.n; i++) {
		famfs_cache_flush(m.map[i], m.l.ext[i].len);
		if (!m.device_dax && msync(m.map[i], m.l.ext[i].len, MS_SYNC) < 0)
			return tool_error_errno(-errno, "cannot flush %s: %m", dst);
	}
	return 0;
}

int data_copy_in(int src_fd, const char *src, const char *dst, uint64_t size)
{
	if (geteuid() != 0)
		return write_via_daemon(src_fd, dst, size);
	return write_mapped(src_fd, src, dst);
}
