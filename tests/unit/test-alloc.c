// SPDX-License-Identifier: LGPL-2.1-or-later
/* The allocator: exact exhaustion, wrap-around, interleaving and rebuilds. */
#include <glib.h>
#include <string.h>

#include "alloc.h"
#include "fs.h"
#include "superblock.h"
#include "testutil.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)
#define AU  (2 * MiB)

static void test_exhaustion_exact(void)
{
	struct famfs_allocator a;
	struct famfs_fmap map;
	struct famfs_err err = { 0 };
	unsigned int n = 0;

	g_assert_cmpint(famfs_alloc_init(&a, GiB, 8 * MiB), ==, 0);
	g_assert_cmpuint(a.meta_units, ==, 5);
	while (famfs_alloc_file(&a, 1 * MiB, NULL, &map, &err) == 0) {
		g_assert_cmpuint(map.nextents, ==, 1);
		g_assert_cmpuint(map.se[0].len, ==, AU);
		g_assert_cmpuint(map.se[0].offset % AU, ==, 0);
		g_assert_cmpuint(map.se[0].offset, >=, 10 * MiB);
		n++;
	}
	/* 512 units, 5 for the superblock and log: exactly 507 files. */
	g_assert_cmpuint(n, ==, 507);
	g_assert_cmpint(err.code, ==, -ENOSPC);
	g_assert_nonnull(strstr(err.msg, "no space"));
	g_assert_cmpuint(famfs_alloc_free_bytes(&a), ==, 0);
	famfs_alloc_destroy(&a);
}

static void test_rounding_and_sizes(void)
{
	struct famfs_allocator a;
	struct famfs_fmap map;

	g_assert_cmpint(famfs_alloc_init(&a, GiB, 8 * MiB), ==, 0);
	g_assert_cmpint(famfs_alloc_file(&a, 2 * MiB + 1, NULL, &map, NULL), ==, 0);
	g_assert_cmpuint(map.se[0].len, ==, 4 * MiB);
	g_assert_cmpuint(map.se[0].offset, ==, 10 * MiB);
	g_assert_cmpint(famfs_alloc_file(&a, 1, NULL, &map, NULL), ==, 0);
	g_assert_cmpuint(map.se[0].len, ==, AU);
	g_assert_cmpuint(map.se[0].offset, ==, 14 * MiB);
	/* Larger than the device: refused, nothing allocated. */
	g_assert_cmpint(famfs_alloc_file(&a, 2 * GiB, NULL, &map, NULL), ==, -ENOSPC);
	g_assert_cmpuint(a.used, ==, 5 + 3);
	famfs_alloc_destroy(&a);
}

static void test_wrap_around(void)
{
	struct famfs_allocator a;
	struct famfs_fmap map;

	/* 64 MiB: units 0..31, 0..4 metadata; 20..29 taken; the cursor inside them. */
	g_assert_cmpint(famfs_alloc_init(&a, 64 * MiB, 8 * MiB), ==, 0);
	famfs_alloc_mark(&a, 20 * AU, 10 * AU);
	a.cursor = 22;
	/* Only 2 units are free past the cursor: 3 wrap to the first run after the metadata. */
	g_assert_cmpint(famfs_alloc_file(&a, 6 * MiB, NULL, &map, NULL), ==, 0);
	g_assert_cmpuint(map.se[0].offset, ==, 5 * AU);
	/* Next fit continues after it. */
	g_assert_cmpint(famfs_alloc_file(&a, 4 * MiB, NULL, &map, NULL), ==, 0);
	g_assert_cmpuint(map.se[0].offset, ==, 8 * AU);
	/* 12 units exist free in all (10..19, 30..31) but not in one run. */
	g_assert_cmpint(famfs_alloc_file(&a, 24 * MiB, NULL, &map, NULL), ==, -ENOSPC);
	g_assert_cmpint(famfs_alloc_file(&a, 20 * MiB, NULL, &map, NULL), ==, 0);
	g_assert_cmpuint(map.se[0].offset, ==, 10 * AU);
	g_assert_cmpint(famfs_alloc_file(&a, 4 * MiB, NULL, &map, NULL), ==, 0);
	g_assert_cmpuint(map.se[0].offset, ==, 30 * AU);
	g_assert_cmpuint(a.used, ==, 32);
	g_assert_cmpint(famfs_alloc_file(&a, 1, NULL, &map, NULL), ==, -ENOSPC);
	famfs_alloc_destroy(&a);
}

static void test_mark_collisions(void)
{
	struct famfs_allocator a;

	g_assert_cmpint(famfs_alloc_init(&a, GiB, 8 * MiB), ==, 0);
	g_assert_cmpuint(famfs_alloc_mark(&a, 20 * MiB, 4 * MiB), ==, 0);
	g_assert_cmpuint(famfs_alloc_mark(&a, 22 * MiB, 4 * MiB), ==, 1);
	/* The metadata is always in use. */
	g_assert_cmpuint(famfs_alloc_mark(&a, 0, 1), ==, 1);
	/* Clipped at the end of the device, no overflow. */
	g_assert_cmpuint(famfs_alloc_mark(&a, GiB - AU, UINT64_MAX), ==, 0);
	g_assert_true(famfs_alloc_test(&a, 511));
	g_assert_false(famfs_alloc_test(&a, 512));
	famfs_alloc_destroy(&a);
}

static void test_interleave_params(void)
{
	static const struct { struct famfs_interleave_params p; uint64_t dev; int ok; } cases[] = {
		{ { 8, 4, 2 * MiB }, 8 * GiB, 1 },
		{ { 64, 16, 2 * MiB }, 64 * GiB, 1 },
		{ { 1, 1, 4 * MiB }, GiB, 1 },
		{ { 0, 1, 2 * MiB }, 8 * GiB, 0 },          /* no buckets */
		{ { 65, 4, 2 * MiB }, 128 * GiB, 0 },       /* too many buckets */
		{ { 8, 0, 2 * MiB }, 8 * GiB, 0 },          /* no strips */
		{ { 32, 17, 2 * MiB }, 64 * GiB, 0 },       /* too many strips */
		{ { 4, 5, 2 * MiB }, 8 * GiB, 0 },          /* strips > buckets */
		{ { 8, 4, 0 }, 8 * GiB, 0 },                /* zero chunk */
		{ { 8, 4, 6 * MiB }, 8 * GiB, 0 },          /* not a power of two */
		{ { 8, 4, 1 * MiB }, 8 * GiB, 0 },          /* not a multiple of 2 MiB */
		{ { 8, 4, 2 * MiB }, 4 * GiB, 0 },          /* buckets of 512 MiB */
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct famfs_err err = { 0 };
		int r = famfs_interleave_params_validate(&cases[i].p, cases[i].dev, &err);

		g_assert_cmpint(r == 0, ==, cases[i].ok);
		if (!cases[i].ok) {
			g_assert_cmpint(r, ==, -EINVAL);
			g_assert_nonnull(strstr(err.msg, "interleave"));
		}
	}
}

static void test_interleaved_alloc(void)
{
	struct famfs_interleave_params p = { .nbuckets = 8, .nstrips = 4, .chunk_size = 2 * MiB };
	struct famfs_allocator a;
	struct famfs_fmap map;
	uint64_t bucket = GiB;
	unsigned int files = 0;

	g_assert_cmpint(famfs_alloc_init(&a, 8 * GiB, 8 * MiB), ==, 0);
	famfs_alloc_seed(&a, 42);
	/* 16 MiB over 4 strips of 2 MiB chunks: 2 chunks a strip. */
	g_assert_cmpint(famfs_alloc_file(&a, 16 * MiB, &p, &map, NULL), ==, 0);
	g_assert_cmpuint(map.ext_type, ==, FAMFS_EXT_INTERLEAVED);
	g_assert_cmpuint(map.nextents, ==, 1);
	g_assert_cmpuint(map.ie[0].nstrips, ==, 4);
	g_assert_cmpuint(map.ie[0].chunk_size, ==, 2 * MiB);
	for (unsigned int i = 0; i < 4; i++) {
		g_assert_cmpuint(map.ie[0].strips[i].len, ==, 4 * MiB);
		for (unsigned int j = 0; j < i; j++)   /* distinct buckets */
			g_assert_cmpuint(map.ie[0].strips[i].offset / bucket, !=,
					 map.ie[0].strips[j].offset / bucket);
	}
	/* 5 MiB rounds up to one 2 MiB chunk a strip. */
	g_assert_cmpint(famfs_alloc_file(&a, 5 * MiB, &p, &map, NULL), ==, 0);
	g_assert_cmpuint(famfs_fmap_capacity(&map), ==, 8 * MiB);
	/* Smaller than a chunk: one contiguous extent. */
	g_assert_cmpint(famfs_alloc_file(&a, 256 * 1024, &p, &map, NULL), ==, 0);
	g_assert_cmpuint(map.ext_type, ==, FAMFS_EXT_SIMPLE);
	famfs_alloc_destroy(&a);

	/* Exhaustion: 1 GiB strips fill buckets exactly; bucket 0 loses 10 MiB to metadata. */
	g_assert_cmpint(famfs_alloc_init(&a, 8 * GiB, 8 * MiB), ==, 0);
	p = (struct famfs_interleave_params){ .nbuckets = 8, .nstrips = 2, .chunk_size = 512 * MiB };
	while (famfs_alloc_file(&a, 2 * GiB, &p, &map, NULL) == 0)
		files++;
	/* 7 whole buckets, 2 a file: 3 files, and one bucket left over. */
	g_assert_cmpuint(files, ==, 3);
	/* A failure frees the strips it had taken. */
	g_assert_cmpuint(a.used, ==, 5 + 6 * 512);
	famfs_alloc_destroy(&a);
}

/*
 * Sizes whose extents do not fit in 64 bits are refused with nothing
 * allocated: rounding near 2^64 once wrapped to one 2 MiB unit, and
 * nstrips * chunk_size to strips of length 0 or a division by zero.
 */
static void test_overflowing_sizes(void)
{
	static const struct {
		uint64_t size;
		uint32_t nbuckets, nstrips;
		uint64_t chunk;
		int expect;
	} cases[] = {
		{ UINT64_MAX, 0, 0, 0, -EFBIG },
		{ UINT64_MAX - AU + 2, 0, 0, 0, -EFBIG },        /* the first size that rounds past 2^64 */
		{ UINT64_MAX - AU + 1, 0, 0, 0, -ENOSPC },       /* a whole number of units: no space */
		{ 1ULL << 63, 0, 0, 0, -ENOSPC },
		{ UINT64_MAX, 1, 1, 1ULL << 40, -EFBIG },        /* once strips of length 0 */
		{ 1ULL << 63, 2, 2, 1ULL << 63, -EFBIG },        /* once a division by zero */
		{ UINT64_MAX, 4, 4, 1ULL << 62, -EFBIG },
		{ UINT64_MAX, 8, 8, AU, -ENOSPC },               /* 2^61-byte strips: representable */
	};
	struct famfs_allocator a;
	struct famfs_fmap map;

	g_assert_cmpint(famfs_alloc_init(&a, 8 * GiB, 8 * MiB), ==, 0);
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct famfs_interleave_params p = { cases[i].nbuckets, cases[i].nstrips, cases[i].chunk };
		struct famfs_err err = { 0 };
		uint64_t used = a.used;

		g_assert_cmpint(famfs_alloc_file(&a, cases[i].size, cases[i].nbuckets ? &p : NULL, &map, &err),
				==, cases[i].expect);
		g_assert_cmpuint(a.used, ==, used);
		if (cases[i].expect == -EFBIG)
			g_assert_nonnull(strstr(err.msg, "overflow"));
	}
	famfs_alloc_destroy(&a);
}

/* A claim takes free units only, all of them or none. */
static void test_claim_all_or_nothing(void)
{
	struct famfs_log_file_meta fm = { .ext_type = FAMFS_EXT_SIMPLE, .nextents = 2 };
	struct famfs_allocator a;
	uint64_t used;

	g_assert_cmpint(famfs_alloc_init(&a, GiB, 8 * MiB), ==, 0);
	fm.se[0] = (struct famfs_simple_extent){ 0, 100 * MiB, 4 * MiB };
	fm.se[1] = (struct famfs_simple_extent){ 0, 200 * MiB, 2 * MiB };
	used = a.used;
	g_assert_true(famfs_alloc_claim_file(&a, &fm));
	g_assert_cmpuint(a.used, ==, used + 3);
	/* again: every unit is taken */
	g_assert_false(famfs_alloc_claim_file(&a, &fm));
	g_assert_cmpuint(a.used, ==, used + 3);
	famfs_alloc_unmark_file(&a, &fm);
	g_assert_cmpuint(a.used, ==, used);
	/* the second extent overlaps the first: refused, the first given back */
	fm.se[1] = (struct famfs_simple_extent){ 0, 102 * MiB, 2 * MiB };
	g_assert_false(famfs_alloc_claim_file(&a, &fm));
	g_assert_cmpuint(a.used, ==, used);
	g_assert_false(famfs_alloc_test(&a, 100 * MiB / AU));
	/* an extent on the log */
	fm.nextents = 1;
	fm.se[0] = (struct famfs_simple_extent){ 0, 4 * MiB, 2 * MiB };
	g_assert_false(famfs_alloc_claim_file(&a, &fm));
	g_assert_cmpuint(a.used, ==, used);
	famfs_alloc_destroy(&a);
}

/* The bitmap rebuilt from the log equals the one the allocator kept. */
static void test_rebuild_from_log(void)
{
	struct famfs_interleave_params p = { .nbuckets = 4, .nstrips = 3, .chunk_size = 4 * MiB };
	char *dir = test_scratch_dir();
	char *img = test_make_image(dir, "fs.img", 8 * GiB, 8 * MiB, test_host_uuid);
	struct famfs_fs *fs = NULL, *again = NULL;
	const struct famfs_allocator *kept, *rebuilt;
	struct famfs_fs_stats stats;
	struct famfs_err err = { 0 };

	g_assert_cmpint(famfs_fs_open(img, FAMFS_DEVICE_WRITE, test_host_uuid, &fs, &err), ==, 0);
	g_assert_cmpint(famfs_fs_replay(fs, NULL, NULL, NULL, &err), ==, 0);
	for (unsigned int i = 0; i < 200; i++) {
		char name[32];
		struct famfs_file_spec s = {
			.relpath = name, .size = (i % 7 + 1) * 3 * MiB + i, .mode = 0644,
			.interleave = i % 3 == 0 ? &p : NULL,
		};

		g_snprintf(name, sizeof(name), "f%u", i);
		g_assert_cmpint(famfs_fs_create_files(fs, &s, 1, NULL, NULL, &err), ==, 0);
	}
	g_assert_cmpint(famfs_fs_open(img, 0, NULL, &again, &err), ==, 0);
	g_assert_cmpint(famfs_fs_replay(again, NULL, NULL, NULL, &err), ==, 0);
	kept = famfs_fs_allocator(fs);
	rebuilt = famfs_fs_allocator(again);
	famfs_fs_get_stats(again, &stats);
	g_assert_cmpuint(rebuilt->used, ==, kept->used);
	g_assert_cmpmem(rebuilt->bits, (kept->nbits + 63) / 64 * 8, kept->bits, (kept->nbits + 63) / 64 * 8);
	g_assert_cmpuint(stats.crosslinked_units, ==, 0);
	famfs_fs_close(again);
	famfs_fs_close(fs);
	g_free(img);
	test_remove_dir(dir);
	g_free(dir);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/alloc/exhaustion-exact", test_exhaustion_exact);
	g_test_add_func("/alloc/rounding", test_rounding_and_sizes);
	g_test_add_func("/alloc/wrap-around", test_wrap_around);
	g_test_add_func("/alloc/mark-collisions", test_mark_collisions);
	g_test_add_func("/alloc/interleave-params", test_interleave_params);
	g_test_add_func("/alloc/interleaved", test_interleaved_alloc);
	g_test_add_func("/alloc/rebuild-from-log", test_rebuild_from_log);
	g_test_add_func("/alloc/overflowing-sizes", test_overflowing_sizes);
	g_test_add_func("/alloc/claim-all-or-nothing", test_claim_all_or_nothing);
	return g_test_run();
}
