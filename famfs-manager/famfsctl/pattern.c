// SPDX-License-Identifier: LGPL-2.1-or-later
/* The fill pattern (see pattern.h for its definition). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"

int pattern_parse_seed(const char *s, uint64_t *ret)
{
	unsigned long long v;
	char *end;

	/* strtoull would take "-1" as 2^64-1 and skip leading blanks */
	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (*end || (errno && errno != ERANGE))
		return -EINVAL;
	if (errno == ERANGE)
		return -ERANGE;
	*ret = v;
	return 0;
}

static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

uint64_t pattern_word(uint64_t seed, uint64_t k)
{
	return mix(seed + (k + 1) * UINT64_C(0x9e3779b97f4a7c15));
}

uint8_t pattern_byte(uint64_t seed, uint64_t off)
{
	return (uint8_t)(pattern_word(seed, off / 8) >> (8 * (off % 8)));
}

static void store_le64(uint8_t *p, uint64_t w)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(w >> (8 * i));
}

void pattern_fill(uint64_t seed, uint64_t off, uint8_t *buf, size_t len)
{
	size_t i = 0;

	for (; i < len && (off + i) % 8; i++)
		buf[i] = pattern_byte(seed, off + i);
	for (; len - i >= 8; i += 8)
		store_le64(buf + i, pattern_word(seed, (off + i) / 8));
	for (; i < len; i++)
		buf[i] = pattern_byte(seed, off + i);
}

bool pattern_check(uint64_t seed, uint64_t off, const uint8_t *p, size_t len, uint64_t *ret_bad)
{
	uint8_t w[8];

	for (size_t i = 0; i < len;) {
		/* a word at a time, each compared whole, then byte by byte where it differs */
		size_t n = 8 - (off + i) % 8;

		if (n > len - i)
			n = len - i;
		store_le64(w, pattern_word(seed, (off + i) / 8));
		if (memcmp(w + (off + i) % 8, p + i, n) != 0) {
			for (size_t j = 0; j < n; j++) {
				if (w[(off + i) % 8 + j] != p[i + j]) {
					*ret_bad = off + i + j;
					return false;
				}
			}
		}
		i += n;
	}
	return true;
}
