/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Sizes as people write them: "8M", "4GiB", "0x200000", and back: "4.0 GiB". */
#ifndef FAMFS_UNITS_H
#define FAMFS_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Parses a byte count with an optional K/M/G/T suffix (powers of 1024). */
int famfs_parse_size(const char *s, uint64_t *ret);

/* Formats @bytes as "512 B", "2.0 MiB", "4.0 GiB"; returns @buf. */
const char *famfs_format_size(uint64_t bytes, char *buf, size_t len);

#endif
