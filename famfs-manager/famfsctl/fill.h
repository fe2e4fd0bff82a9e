/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fill pattern (pattern.h) written into and read back from famfs
 * files: create --fill and verify.  Each reports its own failures and
 * returns a negative errno.
 */
#ifndef FAMFSCTL_FILL_H
#define FAMFSCTL_FILL_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Writes the pattern of @seed over the whole file (@size bytes, as it was
 * created), then writes it back to
 * the medium: root through a writable mapping, anyone else through
 * WriteFile (a sealed memfd the daemon copies in).
 */
int fill_file(const char *path, uint64_t size, uint64_t seed);

struct verify_result {
	uint64_t size;
	bool ok;
	uint64_t bad_offset;        /* when !ok: the first byte that differs */
	uint8_t expected, found;
};

/* Reads the file back from memory (cache lines dropped first) and compares it with the pattern. */
int verify_file(const char *path, uint64_t seed, struct verify_result *ret);

#endif
