/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef FAMFS_CRC32_H
#define FAMFS_CRC32_H

#include <stdint.h>

#include "config.h"

/* The format's CRC-32 (gzip/zlib), from the fastest implementation built in */
uint32_t famfs_crc32(const void *buf, uint64_t len);
/* "isa-l" or "zlib" */
const char *famfs_crc32_implementation(void);

/* Each implementation on its own, for the test that they agree */
uint32_t famfs_crc32_zlib(const void *buf, uint64_t len);
#if HAVE_ISAL
uint32_t famfs_crc32_isal(const void *buf, uint64_t len);
#endif

#endif
