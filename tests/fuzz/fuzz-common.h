/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the fuzz targets share: reading typed values off the fuzz input, and
 * the compact image format that stands for a superblock and log (the data
 * area of a medium is never read by the code under test, so it is left as a
 * hole).  tests/fuzz/README.md describes the format; make-seeds.py writes it.
 */
#ifndef FAMFS_FUZZ_COMMON_H
#define FAMFS_FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "omf.h"

/* The fuzz input, consumed from the front; reads past its end give zeros. */
struct fuzz_input {
	const uint8_t *p;
	size_t n;
};

void fuzz_take(struct fuzz_input *in, void *dst, size_t len);
uint8_t fuzz_u8(struct fuzz_input *in);
uint16_t fuzz_u16(struct fuzz_input *in);
uint32_t fuzz_u32(struct fuzz_input *in);
uint64_t fuzz_u64(struct fuzz_input *in);

/* Image head flags: which checksums the harness recomputes so the fuzzer gets past them. */
enum {
	FUZZ_FIX_SB_CRC      = 1u << 0,
	FUZZ_FIX_LOG_CRC     = 1u << 1,
	FUZZ_FIX_ENTRY_CRC   = 1u << 2,
	FUZZ_FIX_ENTRY_SEQ   = 1u << 3,   /* seqnum = slot, before the CRC */
};

/* The 16 bytes in front of the superblock in the compact image format. */
struct fuzz_image_head {
	uint8_t fix;          /* FUZZ_FIX_* */
	uint8_t mode;         /* per target */
	uint16_t reserved;
	uint32_t reserved2;
	uint64_t medium_size; /* what the device has; may exceed what is mapped */
};
_Static_assert(sizeof(struct fuzz_image_head) == 16, "fuzz image head");

/* The largest log the harnesses map: bigger ones cost time, not coverage. */
#define FUZZ_LOG_MAX (UINT64_C(64) << 20)

struct fuzz_image {
	struct fuzz_image_head head;
	uint64_t entries;       /* slots written from the input */
	uint64_t dirty_end;     /* bytes [0, dirty_end) may have been written */
};

/*
 * Reads the head, the superblock, the log header and then whole entries
 * from @in, and writes them into @base, of which @mapped bytes may be
 * written (and are zero): the superblock at 0, the log at 2 MiB.  Entries go
 * to slots 0, 1, ... as long as they fit the mapping and the superblock's
 * log length.
 */
void fuzz_image_write(struct fuzz_input *in, uint8_t *base, uint64_t mapped,
		      struct fuzz_image *ret);

/* Stamps slot @index of the log with seqnum @index and its CRC. */
void fuzz_fix_entry(struct famfs_log_entry *e, uint64_t index, uint8_t fix);

/* An anonymous memory file (fd) and its /proc/self/fd path. */
int fuzz_memfd(const char *name, char *path, size_t pathlen);

/* Stops the run with a message: a property the target asserts was broken. */
void fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
