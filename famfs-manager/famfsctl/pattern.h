/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fill pattern of create --fill and verify --seed: bytes that depend
 * only on a 64-bit seed and their offset, so any part of a file can be
 * written or checked on its own, on any host.  Byte o of a file is byte
 * (o mod 8) of word(o div 8), least significant first, where
 *
 *   word(k) = mix(seed + (k + 1) * 0x9e3779b97f4a7c15)   (mod 2^64)
 *   mix(z):  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
 *            z = (z ^ (z >> 27)) * 0x94d049bb133111eb
 *            return z ^ (z >> 31)
 *
 * (the output function of the SplitMix64 generator).  famfsctl(8)
 * documents the same formula.  No I/O here.
 */
#ifndef FAMFSCTL_PATTERN_H
#define FAMFSCTL_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A seed: decimal or 0x hexadecimal, 0 to 2^64-1, nothing else.  -EINVAL, -ERANGE. */
int pattern_parse_seed(const char *s, uint64_t *ret);

uint64_t pattern_word(uint64_t seed, uint64_t k);

/* The byte at file offset @off. */
uint8_t pattern_byte(uint64_t seed, uint64_t off);

/* Writes the @len pattern bytes starting at file offset @off into @buf. */
void pattern_fill(uint64_t seed, uint64_t off, uint8_t *buf, size_t len);

/*
 * Compares @len bytes at @p with the pattern from file offset @off.  True
 * when they match; otherwise false with the offset of the first byte that
 * differs (from the start of the file) in *@ret_bad.
 */
bool pattern_check(uint64_t seed, uint64_t off, const uint8_t *p, size_t len, uint64_t *ret_bad);

#endif
