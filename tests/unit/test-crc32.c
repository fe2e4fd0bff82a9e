// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The format's CRC-32 from ISA-L and from zlib agree: known vectors, every
 * length up to a few KiB at every start alignment, lengths around the
 * vector units (16, 64, 256 bytes) and a buffer of several MiB.  Without
 * ISA-L in the build the comparisons skip and the vectors run on zlib.
 */
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "crc32.h"

#define BUF_LEN (3u << 20)

static uint8_t *random_bytes(size_t len, guint32 seed)
{
	GRand *r = g_rand_new_with_seed(seed);
	uint8_t *b = g_malloc(len);

	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)g_rand_int(r);
	g_rand_free(r);
	return b;
}

static void test_vectors(void)
{
	g_test_message("famfs_crc32 uses %s", famfs_crc32_implementation());
	g_assert_cmphex(famfs_crc32("123456789", 9), ==, 0xcbf43926);
	g_assert_cmphex(famfs_crc32("", 0), ==, 0);
	g_assert_cmphex(famfs_crc32("a", 1), ==, 0xe8b7be43);
	g_assert_cmphex(famfs_crc32_zlib("123456789", 9), ==, 0xcbf43926);
}

#if HAVE_ISAL
static void assert_agree(const uint8_t *p, uint64_t len)
{
	uint32_t z = famfs_crc32_zlib(p, len), i = famfs_crc32_isal(p, len);

	if (z != i)
		g_error("length %" G_GUINT64_FORMAT " at alignment %u: zlib 0x%08x, isa-l 0x%08x", len,
			(unsigned)((uintptr_t)p % 64), z, i);
}

static void test_agree_small(void)
{
	g_autofree uint8_t *b = random_bytes(8192, 1);

	for (unsigned start = 0; start < 64; start++)
		for (uint64_t len = 0; len <= 4096; len++)
			assert_agree(b + start, len);
}

static void test_agree_large(void)
{
	g_autofree uint8_t *b = random_bytes(BUF_LEN, 2);
	g_autofree uint8_t *zero = g_malloc0(BUF_LEN);
	g_autofree uint8_t *ones = g_malloc(BUF_LEN);

	memset(ones, 0xff, BUF_LEN);
	for (unsigned k = 0; k < 8; k++) {
		assert_agree(b, BUF_LEN - k);
		assert_agree(b + k, BUF_LEN - 8);
	}
	assert_agree(zero, BUF_LEN);
	assert_agree(ones, BUF_LEN);
	/* a log entry's length and a header's, the sizes the format sums */
	for (uint64_t len = 1; len < BUF_LEN; len = len * 3 + 1)
		assert_agree(b + 1, len);
}
#endif

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/crc32/vectors", test_vectors);
#if HAVE_ISAL
	g_test_add_func("/crc32/isal-agrees-with-zlib/small", test_agree_small);
	g_test_add_func("/crc32/isal-agrees-with-zlib/large", test_agree_large);
#endif
	return g_test_run();
}
