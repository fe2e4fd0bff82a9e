// SPDX-License-Identifier: LGPL-2.1-or-later
/* The fill pattern in famfs files (fill.h). */
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cache.h"
#include "fill.h"
#include "mapping.h"
#include "message.h"
#include "pattern.h"

static int fill_mapped(const char *path, uint64_t seed)
{
	_cleanup_(mapped_file_unmap) struct mapped_file m = { 0 };
	int r;

	r = mapped_file_open(path, true, NULL, &m);
	if (r < 0)
		return r;
	for (uint64_t off = 0, run; off < m.l.size; off += run) {
		uint8_t *p;

		r = mapped_file_locate(&m, off, "fill", path, &p, &run);
		if (r < 0)
			return r;
		pattern_fill(seed, off, p, run);
	}
	return mapped_file_flush(&m, path);
}

/* Not root: the pattern goes in a sealed memfd of the file's size, which the daemon copies in. */
static int fill_via_daemon(const char *path, uint64_t size, uint64_t seed)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_close_ int mfd = -1;
	void *p;
	int r;

	mfd = memfd_create("famfsctl-fill", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0)
		return tool_error_errno(-errno, "cannot fill %s: memfd_create: %m", path);
	if (size > INT64_MAX || ftruncate(mfd, (off_t)size) < 0)
		return tool_error_errno(-errno, "cannot fill %s: a buffer of %llu bytes: %m", path,
					(unsigned long long)size);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	if (p == MAP_FAILED)
		return tool_error_errno(-errno, "cannot fill %s: %m", path);
	pattern_fill(seed, 0, p, size);
	munmap(p, size);
	if (fcntl(mfd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		return tool_error_errno(-errno, "cannot seal the data for %s: %m", path);
	r = client_write_file(path, mfd, &e);
	if (r < 0)
		return client_error("write", path, &e, r);
	return 0;
}

int fill_file(const char *path, uint64_t size, uint64_t seed)
{
	if (geteuid() != 0)
		return fill_via_daemon(path, size, seed);
	return fill_mapped(path, seed);
}

int verify_file(const char *path, uint64_t seed, struct verify_result *ret)
{
	_cleanup_(mapped_file_unmap) struct mapped_file m = { 0 };
	struct verify_result v = { .ok = true };
	int r;

	r = mapped_file_open(path, false, NULL, &m);
	if (r < 0)
		return r;
	v.size = m.l.size;
	for (uint64_t off = 0, run; off < m.l.size && v.ok; off += run) {
		uint8_t *p;

		r = mapped_file_locate(&m, off, "verify", path, &p, &run);
		if (r < 0)
			return r;
		/* another host wrote it: read the memory, not old cache lines */
		famfs_cache_invalidate(p, run);
		if (!pattern_check(seed, off, p, run, &v.bad_offset)) {
			v.ok = false;
			v.expected = pattern_byte(seed, v.bad_offset);
			v.found = p[v.bad_offset - off];
		}
	}
	*ret = v;
	return 0;
}
