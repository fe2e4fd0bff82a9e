// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Times 100,000 allocations of mixed sizes (1 B to 8 MiB, contiguous) and
 * 10,000 interleaved ones, against a baseline measured in the same run:
 * marking the same extents in a fresh bitmap, as a rebuild from the log does.
 *
 *   bench-alloc [--runs N] [--count N]
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "alloc.h"
#include "bench-common.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

static uint64_t size_of(unsigned int i)
{
	/* A repeatable mix: mostly small files, some of several units. */
	static const uint64_t sizes[] = { 1, 4096, 2 * MiB, 2 * MiB + 1, 3 * MiB, 8 * MiB, 100000, 1 * MiB };

	return sizes[(i * 2654435761u) % 8];
}

int main(int argc, char **argv)
{
	unsigned int count = 100000, runs = 5;
	struct famfs_fmap *maps;
	double *alloc_t, *mark_t, *il_t;
	uint64_t dev_size;
	int c;

	while ((c = getopt(argc, argv, "r:n:")) != -1) {
		if (c == 'r')
			runs = atoi(optarg) > 0 ? atoi(optarg) : 5;
		else if (c == 'n')
			count = atoi(optarg) > 0 ? atoi(optarg) : 100000;
		else
			return fprintf(stderr, "usage: bench-alloc [-r RUNS] [-n COUNT]\n"), 2;
	}
	maps = calloc(count, sizeof(*maps));
	alloc_t = calloc(runs, sizeof(double));
	mark_t = calloc(runs, sizeof(double));
	il_t = calloc(runs, sizeof(double));
	dev_size = (uint64_t)count * 8 * MiB + GiB;

	for (unsigned int r = 0; r < runs; r++) {
		struct famfs_interleave_params ip = { .nbuckets = 16, .nstrips = 8, .chunk_size = 2 * MiB };
		struct famfs_allocator a, b;
		double t0;

		famfs_alloc_init(&a, dev_size, 8 * MiB);
		t0 = bench_now();
		for (unsigned int i = 0; i < count; i++) {
			if (famfs_alloc_file(&a, size_of(i), NULL, &maps[i], NULL) < 0) {
				fprintf(stderr, "allocation %u failed\n", i);
				return 1;
			}
		}
		alloc_t[r] = bench_now() - t0;

		famfs_alloc_init(&b, dev_size, 8 * MiB);
		t0 = bench_now();
		for (unsigned int i = 0; i < count; i++)
			famfs_alloc_mark_fmap(&b, &maps[i]);
		mark_t[r] = bench_now() - t0;
		if (a.used != b.used) {
			fprintf(stderr, "rebuilt bitmap differs\n");
			return 1;
		}
		famfs_alloc_destroy(&a);
		famfs_alloc_destroy(&b);

		famfs_alloc_init(&a, dev_size, 8 * MiB);
		famfs_alloc_seed(&a, r + 1);
		t0 = bench_now();
		for (unsigned int i = 0; i < count / 10; i++) {
			if (famfs_alloc_file(&a, 16 * MiB + size_of(i), &ip, &maps[i], NULL) < 0) {
				fprintf(stderr, "interleaved allocation %u failed\n", i);
				return 1;
			}
		}
		il_t[r] = bench_now() - t0;
		famfs_alloc_destroy(&a);
	}
	printf("%u allocations on a %" PRIu64 " GiB device, median of %u:\n", count, dev_size / GiB, runs);
	printf("  contiguous allocations        %8.1f ms  (%.0f ns each)\n",
	       bench_median(alloc_t, runs) * 1e3, bench_median(alloc_t, runs) * 1e9 / count);
	printf("  baseline: marking the extents %8.1f ms  (alloc / baseline = %.2f)\n",
	       bench_median(mark_t, runs) * 1e3, bench_median(alloc_t, runs) / bench_median(mark_t, runs));
	printf("  %u interleaved (8 strips)    %8.1f ms  (%.0f ns each)\n", count / 10,
	       bench_median(il_t, runs) * 1e3, bench_median(il_t, runs) * 1e9 / (count / 10));
	free(maps);
	free(alloc_t);
	free(mark_t);
	free(il_t);
	return 0;
}
