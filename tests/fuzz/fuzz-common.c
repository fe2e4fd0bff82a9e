// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz-common.h"
#include "log.h"
#include "superblock.h"

void fuzz_take(struct fuzz_input *in, void *dst, size_t len)
{
	size_t k = len < in->n ? len : in->n;

	memcpy(dst, in->p, k);
	memset((uint8_t *)dst + k, 0, len - k);
	in->p += k;
	in->n -= k;
}

uint8_t fuzz_u8(struct fuzz_input *in)
{
	uint8_t v;

	fuzz_take(in, &v, sizeof(v));
	return v;
}

uint16_t fuzz_u16(struct fuzz_input *in)
{
	uint16_t v;

	fuzz_take(in, &v, sizeof(v));
	return v;
}

uint32_t fuzz_u32(struct fuzz_input *in)
{
	uint32_t v;

	fuzz_take(in, &v, sizeof(v));
	return v;
}

uint64_t fuzz_u64(struct fuzz_input *in)
{
	uint64_t v;

	fuzz_take(in, &v, sizeof(v));
	return v;
}

void fuzz_fix_entry(struct famfs_log_entry *e, uint64_t index, uint8_t fix)
{
	if (fix & FUZZ_FIX_ENTRY_SEQ)
		e->seqnum = index;
	if (fix & FUZZ_FIX_ENTRY_CRC)
		e->crc = famfs_log_entry_crc(e);
}

void fuzz_image_write(struct fuzz_input *in, uint8_t *base, uint64_t mapped,
		      struct fuzz_image *ret)
{
	struct famfs_superblock sb;
	struct famfs_log_header h;
	uint64_t log_end, slot_off;

	memset(ret, 0, sizeof(*ret));
	fuzz_take(in, &ret->head, sizeof(ret->head));
	fuzz_take(in, &sb, sizeof(sb));
	fuzz_take(in, &h, sizeof(h));
	if (ret->head.fix & FUZZ_FIX_SB_CRC)
		sb.crc = famfs_superblock_crc(&sb);
	if (ret->head.fix & FUZZ_FIX_LOG_CRC)
		h.crc = famfs_log_header_crc(&h);

	memcpy(base, &sb, mapped < sizeof(sb) ? mapped : sizeof(sb));
	ret->dirty_end = mapped < sizeof(sb) ? mapped : sizeof(sb);
	if (mapped < FAMFS_LOG_OFFSET + sizeof(h))
		return;
	memcpy(base + FAMFS_LOG_OFFSET, &h, sizeof(h));
	ret->dirty_end = FAMFS_LOG_OFFSET + sizeof(h);

	/* Entries only where a reader could look for them. */
	log_end = FAMFS_LOG_OFFSET + (sb.log_len < FUZZ_LOG_MAX ? sb.log_len : FUZZ_LOG_MAX);
	if (log_end > mapped)
		log_end = mapped;
	slot_off = FAMFS_LOG_OFFSET + sizeof(h);
	while (in->n > 0 && slot_off + sizeof(struct famfs_log_entry) <= log_end) {
		struct famfs_log_entry e;

		fuzz_take(in, &e, sizeof(e));
		fuzz_fix_entry(&e, ret->entries, ret->head.fix);
		memcpy(base + slot_off, &e, sizeof(e));
		slot_off += sizeof(e);
		ret->entries++;
	}
	ret->dirty_end = slot_off;
}

int fuzz_memfd(const char *name, char *path, size_t pathlen)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0) {
		perror("memfd_create");
		abort();
	}
	snprintf(path, pathlen, "/proc/self/fd/%d", fd);
	return fd;
}

void fuzz_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "PROPERTY BROKEN: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}
