// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The CRC-32 of the on-media format: the gzip/zlib one (reflected IEEE
 * polynomial, initial and final inversion).  Checking a log is mostly this
 * sum, so it comes from Intel's ISA-L where the build has it (carry-less
 * multiplication, several GB/s); zlib's table-driven crc32 is the
 * fallback.  Both give the same value for every input (tests/unit/test-crc32.c).
 */
#include <zlib.h>

#include "config.h"
#include "crc32.h"

#if HAVE_ISAL
#include <isa-l/crc.h>
#endif

uint32_t famfs_crc32_zlib(const void *buf, uint64_t len)
{
	const uint8_t *p = buf;
	uLong crc = crc32(0L, Z_NULL, 0);

	/* zlib takes a uInt length; feed it in pieces for huge ranges. */
	while (len > 0) {
		uInt chunk = len > (1u << 30) ? (1u << 30) : (uInt)len;

		crc = crc32(crc, p, chunk);
		p += chunk;
		len -= chunk;
	}
	return (uint32_t)crc;
}

#if HAVE_ISAL
uint32_t famfs_crc32_isal(const void *buf, uint64_t len)
{
	return crc32_gzip_refl(0, buf, len);
}
#endif

uint32_t famfs_crc32(const void *buf, uint64_t len)
{
#if HAVE_ISAL
	return famfs_crc32_isal(buf, len);
#else
	return famfs_crc32_zlib(buf, len);
#endif
}

const char *famfs_crc32_implementation(void)
{
	return HAVE_ISAL ? "isa-l" : "zlib";
}
