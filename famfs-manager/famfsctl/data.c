// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * famfsctl's data path: cat, and cp's bytes (mapping.h maps the file).
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
#include "mapping.h"
#include "message.h"

/*
 * One file to stdout.  A failure to write stdout is returned as
 * *@ret_output_failed: nothing more can be written there.
 */
static int cat_one(const char *path, bool *ret_output_failed)
{
	_cleanup_(mapped_file_unmap) struct mapped_file m = { 0 };
	int r;

	r = mapped_file_open(path, false, NULL, &m);
	if (r < 0)
		return r;
	for (uint64_t off = 0; off < m.l.size;) {
		uint64_t run;
		uint8_t *p;
		ssize_t w;

		r = mapped_file_locate(&m, off, "read", path, &p, &run);
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
	_cleanup_(mapped_file_unmap) struct mapped_file m = { 0 };
	int r;

	r = mapped_file_open(dst, true, NULL, &m);
	if (r < 0)
		return r;
	for (uint64_t off = 0; off < m.l.size;) {
		uint64_t run;
		uint8_t *p;
		ssize_t n;

		r = mapped_file_locate(&m, off, "copy to", dst, &p, &run);
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
	/* Other hosts read the memory, not this CPU's caches. */
	return mapped_file_flush(&m, dst);
}

int data_copy_in(int src_fd, const char *src, const char *dst, uint64_t size)
{
	if (geteuid() != 0)
		return write_via_daemon(src_fd, dst, size);
	return write_mapped(src_fd, src, dst);
}
