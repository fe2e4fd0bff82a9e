// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The create property, deterministically: fixed seeds, a few thousand
 * requests.  After each, either it succeeded and the medium checks clean,
 * or it failed and the superblock region and the log are unchanged.
 */
#include <glib.h>

#include "createprop.h"
#include "testutil.h"

enum { SEEDS = 64, BYTES_PER_SEED = 4096 };

static void test_property(void)
{
	g_autofree char *dir = test_scratch_dir();
	g_autofree char *img = g_build_filename(dir, "prop.img", NULL);
	g_autofree uint8_t *bytes = g_malloc(BYTES_PER_SEED);
	const struct createprop_stats *st;
	struct createprop *cp = NULL;
	char why[512] = "";

	g_assert_cmpint(createprop_new(img, &cp, why, sizeof(why)), ==, 0);
	for (guint32 seed = 1; seed <= SEEDS; seed++) {
		GRand *rnd = g_rand_new_with_seed(seed);

		for (size_t i = 0; i < BYTES_PER_SEED; i++)
			bytes[i] = g_rand_int(rnd) & 0xff;
		g_rand_free(rnd);
		if (createprop_run(cp, bytes, BYTES_PER_SEED, why, sizeof(why)) < 0)
			g_error("seed %u: %s", seed, why);
	}
	st = createprop_stats(cp);
	g_test_message("%" G_GUINT64_FORMAT " requests: %" G_GUINT64_FORMAT " succeeded (%" G_GUINT64_FORMAT
		       " files), %" G_GUINT64_FORMAT " failed (%" G_GUINT64_FORMAT " batches); EFBIG %"
		       G_GUINT64_FORMAT ", ENOSPC %" G_GUINT64_FORMAT ", EINVAL %" G_GUINT64_FORMAT
		       ", EEXIST %" G_GUINT64_FORMAT ", ENOENT %" G_GUINT64_FORMAT ", ENOTDIR %" G_GUINT64_FORMAT
		       ", ENAMETOOLONG %" G_GUINT64_FORMAT ", ERANGE %" G_GUINT64_FORMAT,
		       st->requests, st->succeeded, st->files_created, st->failed, st->batch_failures,
		       st->by_errno[EFBIG], st->by_errno[ENOSPC], st->by_errno[EINVAL], st->by_errno[EEXIST],
		       st->by_errno[ENOENT], st->by_errno[ENOTDIR], st->by_errno[ENAMETOOLONG],
		       st->by_errno[ERANGE]);
	/* The requests reach every outcome the property is about. */
	g_assert_cmpuint(st->requests, >=, 5000);
	g_assert_cmpuint(st->succeeded, >=, 200);
	g_assert_cmpuint(st->failed, >=, 200);
	g_assert_cmpuint(st->batch_failures, >=, 100);
	g_assert_cmpuint(st->by_errno[EFBIG], >=, 20);
	g_assert_cmpuint(st->by_errno[ENOSPC], >=, 20);
	g_assert_cmpuint(st->by_errno[EINVAL], >=, 20);
	g_assert_cmpuint(st->by_errno[EEXIST], >=, 20);
	g_assert_cmpuint(st->by_errno[ENOENT], >=, 5);
	g_assert_cmpuint(st->by_errno[ENOTDIR], >=, 5);
	createprop_free(cp);
	test_remove_dir(dir);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/createprop/fixed-seeds", test_property);
	return g_test_run();
}
