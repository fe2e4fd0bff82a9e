// SPDX-License-Identifier: LGPL-2.1-or-later
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "superblock.h"

#define AU FAMFS_ALLOC_UNIT
#define GiB (1ULL << 30)

static inline bool bit_test(const uint64_t *w, uint64_t i)
{
	return w[i >> 6] & (1ULL << (i & 63));
}

int famfs_alloc_init(struct famfs_allocator *a, uint64_t dev_size, uint64_t log_len)
{
	memset(a, 0, sizeof(*a));
	a->dev_size = dev_size;
	a->nbits = dev_size / AU;
	a->bits = calloc((a->nbits + 63) / 64 + 1, sizeof(uint64_t));
	if (!a->bits)
		return -ENOMEM;
	a->rng = (uint64_t)time(NULL) ^ 0x9e3779b97f4a7c15ULL;
	famfs_alloc_mark(a, 0, famfs_data_start(log_len));
	a->meta_units = a->used;
	a->cursor = a->meta_units;
	return 0;
}

void famfs_alloc_destroy(struct famfs_allocator *a)
{
	free(a->bits);
	a->bits = NULL;
}

void famfs_alloc_seed(struct famfs_allocator *a, uint64_t seed)
{
	a->rng = seed ? seed : 1;
}

static uint64_t next_random(struct famfs_allocator *a)
{
	/* xorshift64* */
	a->rng ^= a->rng >> 12;
	a->rng ^= a->rng << 25;
	a->rng ^= a->rng >> 27;
	return a->rng * 0x2545f4914f6cdd1dULL;
}

/* ceil(x / d) for d > 0, without the overflow of (x + d - 1) / d. */
static uint64_t div_round_up(uint64_t x, uint64_t d)
{
	return x / d + (x % d != 0);
}

static void unit_range(const struct famfs_allocator *a, uint64_t offset, uint64_t len,
		       uint64_t *first, uint64_t *end)
{
	uint64_t f = offset / AU, stop, e;

	/* A range past 2^64 is clipped to the device like any other. */
	e = __builtin_add_overflow(offset, len, &stop) ? UINT64_MAX / AU + 1 : div_round_up(stop, AU);

	*first = f < a->nbits ? f : a->nbits;
	*end = e < a->nbits ? e : a->nbits;
}

uint64_t famfs_alloc_mark(struct famfs_allocator *a, uint64_t offset, uint64_t len)
{
	uint64_t first, end, collisions = 0;

	unit_range(a, offset, len, &first, &end);
	for (uint64_t i = first; i < end; i++) {
		uint64_t *w = &a->bits[i >> 6], m = 1ULL << (i & 63);

		if (*w & m) {
			collisions++;
		} else {
			*w |= m;
			a->used++;
		}
	}
	return collisions;
}

void famfs_alloc_unmark(struct famfs_allocator *a, uint64_t offset, uint64_t len)
{
	uint64_t first, end;

	unit_range(a, offset, len, &first, &end);
	for (uint64_t i = first; i < end; i++) {
		uint64_t *w = &a->bits[i >> 6], m = 1ULL << (i & 63);

		if (*w & m) {
			*w &= ~m;
			a->used--;
		}
	}
}

/* Marks the extents of a map given as its parts, as in a fmap or a FILE entry. */
static uint64_t mark_map(struct famfs_allocator *a, uint32_t ext_type, uint32_t nextents,
			 const struct famfs_simple_extent *se, const struct famfs_interleaved_extent *ie)
{
	uint64_t collisions = 0;

	if (ext_type == FAMFS_EXT_SIMPLE) {
		for (unsigned int i = 0; i < nextents && i < FAMFS_MAX_SIMPLE_EXTENTS; i++)
			collisions += famfs_alloc_mark(a, se[i].offset, se[i].len);
	} else if (ext_type == FAMFS_EXT_INTERLEAVED) {
		for (unsigned int i = 0; i < ie->nstrips && i < FAMFS_MAX_STRIPS; i++)
			collisions += famfs_alloc_mark(a, ie->strips[i].offset, ie->strips[i].len);
	}
	return collisions;
}

uint64_t famfs_alloc_mark_fmap(struct famfs_allocator *a, const struct famfs_fmap *map)
{
	return mark_map(a, map->ext_type, map->nextents, map->se, &map->ie[0]);
}

uint64_t famfs_alloc_mark_file(struct famfs_allocator *a, const struct famfs_log_file_meta *fm)
{
	return mark_map(a, fm->ext_type, fm->nextents, fm->se, &fm->ie[0]);
}

/* Units of [offset, offset+len) already in use (rounded and clipped as famfs_alloc_mark does). */
static uint64_t count_used(const struct famfs_allocator *a, uint64_t offset, uint64_t len)
{
	uint64_t first, end, used = 0;

	unit_range(a, offset, len, &first, &end);
	for (uint64_t i = first; i < end; i++)
		used += bit_test(a->bits, i);
	return used;
}

bool famfs_alloc_claim_file(struct famfs_allocator *a, const struct famfs_log_file_meta *fm)
{
	const struct famfs_simple_extent *x;
	unsigned int n, i;

	if (fm->ext_type == FAMFS_EXT_SIMPLE) {
		x = fm->se;
		n = fm->nextents < FAMFS_MAX_SIMPLE_EXTENTS ? fm->nextents : FAMFS_MAX_SIMPLE_EXTENTS;
	} else if (fm->ext_type == FAMFS_EXT_INTERLEAVED) {
		x = fm->ie[0].strips;
		n = fm->ie[0].nstrips < FAMFS_MAX_STRIPS ? fm->ie[0].nstrips : FAMFS_MAX_STRIPS;
	} else {
		return false;
	}
	/* Extent by extent, so one overlapping an earlier extent of the same map is caught. */
	for (i = 0; i < n; i++) {
		if (count_used(a, x[i].offset, x[i].len) != 0)
			break;
		famfs_alloc_mark(a, x[i].offset, x[i].len);
	}
	if (i == n)
		return true;
	while (i > 0) {
		i--;
		famfs_alloc_unmark(a, x[i].offset, x[i].len);
	}
	return false;
}

static void unmark_map(struct famfs_allocator *a, uint32_t ext_type, uint32_t nextents,
		       const struct famfs_simple_extent *se, const struct famfs_interleaved_extent *ie)
{
	if (ext_type == FAMFS_EXT_SIMPLE) {
		for (unsigned int i = 0; i < nextents && i < FAMFS_MAX_SIMPLE_EXTENTS; i++)
			famfs_alloc_unmark(a, se[i].offset, se[i].len);
	} else if (ext_type == FAMFS_EXT_INTERLEAVED) {
		for (unsigned int i = 0; i < ie->nstrips && i < FAMFS_MAX_STRIPS; i++)
			famfs_alloc_unmark(a, ie->strips[i].offset, ie->strips[i].len);
	}
}

void famfs_alloc_unmark_fmap(struct famfs_allocator *a, const struct famfs_fmap *map)
{
	unmark_map(a, map->ext_type, map->nextents, map->se, &map->ie[0]);
}

void famfs_alloc_unmark_file(struct famfs_allocator *a, const struct famfs_log_file_meta *fm)
{
	unmark_map(a, fm->ext_type, fm->nextents, fm->se, &fm->ie[0]);
}

bool famfs_alloc_test(const struct famfs_allocator *a, uint64_t unit)
{
	return unit < a->nbits && bit_test(a->bits, unit);
}

uint64_t famfs_alloc_free_bytes(const struct famfs_allocator *a)
{
	return (a->nbits - a->used) * AU;
}

/* First clear bit in [from, end), or end. */
static uint64_t find_clear(const uint64_t *w, uint64_t from, uint64_t end)
{
	while (from < end) {
		uint64_t word = ~w[from >> 6] >> (from & 63);

		if (word)
			return from + __builtin_ctzll(word) < end ? from + __builtin_ctzll(word) : end;
		from = (from | 63) + 1;
	}
	return end;
}

/* First set bit in [from, end), or end. */
static uint64_t find_set(const uint64_t *w, uint64_t from, uint64_t end)
{
	while (from < end) {
		uint64_t word = w[from >> 6] >> (from & 63);

		if (word)
			return from + __builtin_ctzll(word) < end ? from + __builtin_ctzll(word) : end;
		from = (from | 63) + 1;
	}
	return end;
}

/* Start of the first run of @n clear units inside [lo, hi), or UINT64_MAX. */
static uint64_t find_run(const struct famfs_allocator *a, uint64_t n, uint64_t lo, uint64_t hi)
{
	uint64_t i = lo;

	while (i < hi) {
		uint64_t start = find_clear(a->bits, i, hi), stop;

		if (start >= hi || hi - start < n)
			return UINT64_MAX;
		stop = find_set(a->bits, start, start + n);
		if (stop == start + n)
			return start;
		i = stop + 1;
	}
	return UINT64_MAX;
}

static int alloc_contiguous(struct famfs_allocator *a, uint64_t size,
			    struct famfs_simple_extent *ret, struct famfs_err *err)
{
	uint64_t n = div_round_up(size, AU), bytes, wrap_end, start;

	if (n == 0)
		n = 1;
	if (__builtin_mul_overflow(n, AU, &bytes))
		return famfs_err_set(err, -EFBIG,
				     "size %" PRIu64 " overflows: rounded up to whole 2 MiB units it is past 2^64 bytes",
				     size);
	start = find_run(a, n, a->cursor, a->nbits);
	if (start == UINT64_MAX) {
		if (__builtin_add_overflow(a->cursor, n, &wrap_end) || wrap_end > a->nbits)
			wrap_end = a->nbits;
		start = find_run(a, n, a->meta_units, wrap_end);
	}
	if (start == UINT64_MAX)
		return famfs_err_set(err, -ENOSPC,
				     "no space: no free run of %" PRIu64 " MiB (%" PRIu64 " MiB free in all)",
				     bytes >> 20, famfs_alloc_free_bytes(a) >> 20);
	/* start + n <= nbits from here: the run was found inside the device. */
	famfs_alloc_mark(a, start * AU, bytes);
	a->cursor = start + n < a->nbits ? start + n : a->meta_units;
	ret->devindex = 0;
	ret->offset = start * AU;
	ret->len = bytes;
	return 0;
}

int famfs_interleave_params_validate(const struct famfs_interleave_params *p,
				     uint64_t dev_size, struct famfs_err *err)
{
	if (p->nbuckets == 0 || p->nbuckets > FAMFS_MAX_NBUCKETS)
		return famfs_err_set(err, -EINVAL, "interleave: %u buckets (allowed 1 to %d)",
				     p->nbuckets, FAMFS_MAX_NBUCKETS);
	if (p->nstrips == 0 || p->nstrips > FAMFS_MAX_STRIPS)
		return famfs_err_set(err, -EINVAL, "interleave: %u strips (allowed 1 to %d)",
				     p->nstrips, FAMFS_MAX_STRIPS);
	if (p->nstrips > p->nbuckets)
		return famfs_err_set(err, -EINVAL, "interleave: %u strips but only %u buckets",
				     p->nstrips, p->nbuckets);
	if (p->chunk_size == 0 || (p->chunk_size & (p->chunk_size - 1)) || p->chunk_size % AU)
		return famfs_err_set(err, -EINVAL,
				     "interleave: chunk size %" PRIu64 " is not a power of two multiple of 2 MiB",
				     p->chunk_size);
	if (dev_size / p->nbuckets < GiB)
		return famfs_err_set(err, -EINVAL,
				     "interleave: %u buckets of a %" PRIu64 " MiB device are smaller than 1 GiB",
				     p->nbuckets, dev_size >> 20);
	return 0;
}

static int alloc_interleaved(struct famfs_allocator *a, uint64_t size,
			     const struct famfs_interleave_params *p,
			     struct famfs_fmap *ret, struct famfs_err *err)
{
	uint64_t chunk_units = p->chunk_size / AU;
	uint64_t bucket_units = a->nbits / p->nbuckets;
	uint64_t stripe, nstripes, strip_units, strip_bytes;
	struct famfs_interleaved_extent *ie = &ret->ie[0];
	uint32_t order[FAMFS_MAX_NBUCKETS];
	uint32_t found = 0;

	/* Each strip holds nstripes chunks; a strip that cannot be described in 64 bits is refused. */
	if (__builtin_mul_overflow((uint64_t)p->nstrips, p->chunk_size, &stripe))
		return famfs_err_set(err, -EFBIG,
				     "interleave: %u strips of 0x%" PRIx64 "-byte chunks overflow 2^64 bytes",
				     p->nstrips, p->chunk_size);
	nstripes = div_round_up(size, stripe);
	if (__builtin_mul_overflow(nstripes, chunk_units, &strip_units) ||
	    __builtin_mul_overflow(strip_units, AU, &strip_bytes))
		return famfs_err_set(err, -EFBIG,
				     "size %" PRIu64 " overflows: its strips of %" PRIu64
				     " chunks of 0x%" PRIx64 " bytes are past 2^64 bytes",
				     size, nstripes, p->chunk_size);

	for (uint32_t i = 0; i < p->nbuckets; i++)
		order[i] = i;
	for (uint32_t i = p->nbuckets - 1; i > 0; i--) {
		uint32_t j = next_random(a) % (i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}

	ret->ext_type = FAMFS_EXT_INTERLEAVED;
	ret->nextents = 1;
	ie->nstrips = p->nstrips;
	ie->chunk_size = p->chunk_size;
	for (uint32_t b = 0; b < p->nbuckets && found < p->nstrips; b++) {
		uint64_t lo = (uint64_t)order[b] * bucket_units, hi = lo + bucket_units;
		uint64_t start;

		if (lo < a->meta_units)
			lo = a->meta_units;
		start = find_run(a, strip_units, lo, hi);
		if (start == UINT64_MAX)
			continue;
		famfs_alloc_mark(a, start * AU, strip_bytes);
		ie->strips[found].devindex = 0;
		ie->strips[found].offset = start * AU;
		ie->strips[found].len = strip_bytes;
		found++;
	}
	if (found < p->nstrips) {
		for (uint32_t i = 0; i < found; i++)
			famfs_alloc_unmark(a, ie->strips[i].offset, ie->strips[i].len);
		return famfs_err_set(err, -ENOSPC,
				     "no space: only %u of %u buckets have a free %" PRIu64 " MiB strip",
				     found, p->nstrips, strip_bytes >> 20);
	}
	return 0;
}

int famfs_alloc_file(struct famfs_allocator *a, uint64_t size,
		     const struct famfs_interleave_params *ip,
		     struct famfs_fmap *ret, struct famfs_err *err)
{
	int r;

	memset(ret, 0, sizeof(*ret));
	if (ip) {
		r = famfs_interleave_params_validate(ip, a->dev_size, err);
		if (r < 0)
			return r;
		if (size >= ip->chunk_size)
			return alloc_interleaved(a, size, ip, ret, err);
	}
	ret->ext_type = FAMFS_EXT_SIMPLE;
	ret->nextents = 1;
	return alloc_contiguous(a, size, &ret->se[0], err);
}
