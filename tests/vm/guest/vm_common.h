/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vm_common.h - what the guest tests and the host peer agree on
 */
#ifndef FAMFS_VM_COMMON_H
#define FAMFS_VM_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MiB (1ULL << 20)
#define ALIGN_2M (2 * MiB)

#define VM_SB_MAGIC	0x87b282ffULL
#define VM_SB_VERSION	48ULL
#define VM_LOG_MAGIC	0xbadcafef00dULL
#define VM_SB_LOGLEN_OFF 24	/* u64 log length in the superblock */

static inline uint64_t vm_round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* First data offset the tests use: after the log, plus one spare unit */
static inline uint64_t vm_data_base(uint64_t log_len)
{
	return vm_round_up(ALIGN_2M + log_len, ALIGN_2M) + ALIGN_2M;
}

/* The byte pattern: word i of a file is a function of i and a seed */
static inline uint64_t vm_pat_word(uint64_t word, uint64_t seed)
{
	uint64_t x = (word + 1) * 0x9E3779B97F4A7C15ULL;

	x ^= seed * 0xD6E8FEB86659FD93ULL;
	x ^= x >> 29;
	return x;
}

/* Fill buf with the pattern of bytes [off, off + len) of a file; off % 8 == 0 */
static inline void vm_pat_fill(void *buf, size_t len, uint64_t off,
			       uint64_t seed)
{
	unsigned char *p = buf;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w = vm_pat_word((off + i) / 8, seed);

		memcpy(p + i, &w, 8);
	}
	if (i < len) {
		uint64_t w = vm_pat_word((off + i) / 8, seed);

		memcpy(p + i, &w, len - i);
	}
}

/* Index of the first byte that differs from the pattern, or -1 */
static inline long long vm_pat_check(const void *buf, size_t len, uint64_t off,
				     uint64_t seed)
{
	const unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i += 8) {
		uint64_t w = vm_pat_word((off + i) / 8, seed);
		size_t n = len - i < 8 ? len - i : 8;

		if (memcmp(p + i, &w, n)) {
			size_t j;

			for (j = 0; j < n; j++)
				if (p[i + j] != ((unsigned char *)&w)[j])
					return (long long)(i + j);
		}
	}
	return -1;
}

/* The shared-memory handshake between the guest and the host peer */
#define VM_SHARED_GUEST_MAGIC	"famfs-vm-shared guest->host v1"
#define VM_SHARED_HOST_MAGIC	"famfs-vm-shared host->guest v1"
#define VM_SHARED_SEED_GUEST	0x6775657374ULL
#define VM_SHARED_SEED_HOST	0x686f7374ULL
#define VM_SHARED_HDR		64	/* magic lives in the first 64 bytes */
#define VM_SHARED_LEN		(2 * MiB)	/* each side's half of the file */

#endif /* FAMFS_VM_COMMON_H */
