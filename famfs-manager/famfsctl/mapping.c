// SPDX-License-Identifier: LGPL-2.1-or-later
/* A famfs file mapped through OpenFile's descriptor (see mapping.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "mapping.h"
#include "message.h"

void mapped_file_unmap(struct mapped_file *m)
{
	for (size_t i = 0; i < m->l.n; i++) {
		if (m->map[i])
			munmap(m->map[i], m->l.ext[i].len);
		m->map[i] = NULL;
	}
}

int mapped_file_open(const char *path, bool writable, const char *descriptor, struct mapped_file *ret)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_(mapped_file_unmap) struct mapped_file m = { 0 };
	_cleanup_close_ int fd = -1;
	struct stat st;
	int seals, r;

	r = client_open_file(path, writable, descriptor, &fd, &m.l, &e);
	if (r < 0 && sd_bus_error_is_set(&e))
		return client_error(writable ? "open for writing" : "open", path, &e, r);
	if (r < 0)
		return tool_error_errno(r, "cannot map %s: %m", path);
	if (fstat(fd, &st) < 0)
		return tool_error_errno(-errno, "cannot map %s: %m", path);
	m.device_dax = S_ISCHR(st.st_mode);
	/* The view backend's copy for a caller without the device is sealed against writes. */
	seals = fcntl(fd, F_GET_SEALS);
	m.copy = seals >= 0 && (seals & F_SEAL_WRITE);
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

int mapped_file_locate(const struct mapped_file *m, uint64_t off, const char *verb, const char *path,
		       uint8_t **ret_p, uint64_t *ret_run)
{
	*ret_p = locate_in_extents(m, off, ret_run);
	if (!*ret_p)
		return tool_error_errno(-EBADMSG, "cannot %s %s: its map ends before the file size", verb, path);
	if (*ret_run > m->l.size - off)
		*ret_run = m->l.size - off;
	return 0;
}

int mapped_file_flush(const struct mapped_file *m, const char *path)
{
	for (size_t i = 0; i < m->l.n; i++) {
		famfs_cache_flush(m->map[i], m->l.ext[i].len);
		if (!m->device_dax && msync(m->map[i], m->l.ext[i].len, MS_SYNC) < 0)
			return tool_error_errno(-errno, "cannot flush %s: %m", path);
	}
	return 0;
}
