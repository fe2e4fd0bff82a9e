/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The famfs space allocator.  Nothing about free space is stored on media:
 * the bitmap of 2 MiB allocation units is derived from the log (the
 * superblock and log regions plus every extent of every FILE entry) and
 * then kept current by the allocations made through it.
 */
#ifndef FAMFS_ALLOC_H
#define FAMFS_ALLOC_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "log.h"

struct famfs_allocator {
	uint64_t dev_size;
	uint64_t nbits;          /* whole allocation units on the device */
	uint64_t *bits;
	uint64_t used;           /* units set, metadata included */
	uint64_t meta_units;     /* superblock + log */
	uint64_t cursor;         /* next-fit position, in units */
	uint64_t rng;            /* bucket shuffling for interleaved files */
};

struct famfs_interleave_params {
	uint32_t nbuckets;
	uint32_t nstrips;
	uint64_t chunk_size;
};

int famfs_alloc_init(struct famfs_allocator *a, uint64_t dev_size, uint64_t log_len);
void famfs_alloc_destroy(struct famfs_allocator *a);

/* Seeds the bucket order of interleaved allocation (tests want it repeatable). */
void famfs_alloc_seed(struct famfs_allocator *a, uint64_t seed);

/*
 * Marks [offset, offset+len) in use, rounded out to whole units and clipped
 * to the device.  Returns how many of those units were already in use.
 */
uint64_t famfs_alloc_mark(struct famfs_allocator *a, uint64_t offset, uint64_t len);

/* Marks every extent of a FILE entry; returns units already in use. */
uint64_t famfs_alloc_mark_fmap(struct famfs_allocator *a, const struct famfs_fmap *map);

/* The same straight from a FILE entry's map, without copying it out. */
uint64_t famfs_alloc_mark_file(struct famfs_allocator *a, const struct famfs_log_file_meta *fm);

/*
 * Marks a FILE entry's extents only if every unit they cover is free and
 * they do not overlap each other: true and marked, or false and nothing
 * changed.  What the checker would call a cross-link is refused here.
 */
bool famfs_alloc_claim_file(struct famfs_allocator *a, const struct famfs_log_file_meta *fm);

/* Clears what famfs_alloc_mark set (undoing a failed batch). */
void famfs_alloc_unmark(struct famfs_allocator *a, uint64_t offset, uint64_t len);
void famfs_alloc_unmark_fmap(struct famfs_allocator *a, const struct famfs_fmap *map);
void famfs_alloc_unmark_file(struct famfs_allocator *a, const struct famfs_log_file_meta *fm);

bool famfs_alloc_test(const struct famfs_allocator *a, uint64_t unit);

uint64_t famfs_alloc_free_bytes(const struct famfs_allocator *a);

/*
 * Validates interleave parameters for a device of @dev_size bytes, as
 * upstream does: 0 < nbuckets <= 64, 0 < nstrips <= min(nbuckets, 16),
 * chunk size a power of two and a multiple of 2 MiB, buckets >= 1 GiB.
 */
int famfs_interleave_params_validate(const struct famfs_interleave_params *p,
				     uint64_t dev_size, struct famfs_err *err);

/*
 * Allocates a file of @size bytes: one contiguous extent rounded up to 2 MiB
 * (next-fit from the cursor, wrapping once), or, with @ip, an interleaved
 * map whose strips come from distinct buckets (files smaller than a chunk
 * fall back to one extent).  -ENOSPC with nothing allocated when it does
 * not fit; -EFBIG when the extents a @size needs cannot be described in 64
 * bits (a size near 2^64, or strips of huge chunks).
 */
int famfs_alloc_file(struct famfs_allocator *a, uint64_t size,
		     const struct famfs_interleave_params *ip,
		     struct famfs_fmap *ret, struct famfs_err *err);

#endif
