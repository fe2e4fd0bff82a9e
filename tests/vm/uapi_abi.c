// SPDX-License-Identifier: GPL-2.0
/*
 * uapi_abi - every offset, size and number of include/uapi/linux/famfs_ioctl.h
 * against the upstream famfs ABI (KABI 42 and 43, x86_64), and of this tree's
 * MKFILES extension, so that a change to the header that breaks binary
 * compatibility fails here by name.
 * Prints TAP.
 */
#include <stddef.h>
#include <stdio.h>

#include <linux/famfs_ioctl.h>

static int n, failed;

static void is(unsigned long got, unsigned long want, const char *what)
{
	n++;
	if (got == want) {
		printf("ok %d - %s = %lu\n", n, what, want);
	} else {
		printf("not ok %d - %s = %lu, want %lu\n", n, what, got, want);
		failed = 1;
	}
}

#define SIZE(t, v) is(sizeof(struct t), v, "sizeof(struct " #t ")")
#define OFF(t, f, v) is(offsetof(struct t, f), v, "offsetof(" #t ", " #f ")")
#define NUM(x, v) is((unsigned long)(x), v, #x)

int main(void)
{
	NUM(FAMFS_KABI_VERSION, 43);
	NUM(FAMFS_MAX_EXTENTS, 2);
	NUM(FAMFS_MAX_STRIPS, 16);
	NUM(FAMFSIOC_MAGIC, 'u');
	NUM(FAMFS_REG, 0);
	NUM(FAMFS_SUPERBLOCK, 1);
	NUM(FAMFS_LOG, 2);
	NUM(FAMFS_IOC_EXT_SIMPLE, 0);
	NUM(FAMFS_IOC_EXT_INTERLEAVE, 1);
	NUM(SIMPLE_DAX_EXTENT, 0);
	NUM(INTERLEAVED_EXTENT, 1);
	NUM(INVALID_EXTENT_TYPE, 2);

	/* KABI 42 */
	SIZE(famfs_extent, 16);
	OFF(famfs_extent, offset, 0);
	OFF(famfs_extent, len, 8);
	SIZE(famfs_ioc_map, 56);
	OFF(famfs_ioc_map, extent_type, 0);
	OFF(famfs_ioc_map, file_type, 4);
	OFF(famfs_ioc_map, file_size, 8);
	OFF(famfs_ioc_map, ext_list_count, 16);
	OFF(famfs_ioc_map, ext_list, 24);

	/* KABI 43 */
	SIZE(famfs_ioc_simple_extent, 24);
	OFF(famfs_ioc_simple_extent, devindex, 0);
	OFF(famfs_ioc_simple_extent, offset, 8);
	OFF(famfs_ioc_simple_extent, len, 16);
	SIZE(famfs_ioc_interleaved_ext, 32);
	OFF(famfs_ioc_interleaved_ext, ie_nstrips, 0);
	OFF(famfs_ioc_interleaved_ext, ie_chunk_size, 8);
	OFF(famfs_ioc_interleaved_ext, ie_nbytes, 16);
	OFF(famfs_ioc_interleaved_ext, ie_strips, 24);
	SIZE(famfs_ioc_fmap, 32);
	OFF(famfs_ioc_fmap, fioc_file_size, 0);
	OFF(famfs_ioc_fmap, fioc_file_type, 8);
	OFF(famfs_ioc_fmap, fioc_ext_type, 12);
	OFF(famfs_ioc_fmap, fioc_nextents, 16);
	OFF(famfs_ioc_fmap, kse, 24);
	OFF(famfs_ioc_fmap, fioc_niext, 16);
	OFF(famfs_ioc_fmap, kie, 24);
	SIZE(famfs_ioc_get_fmap, 448);
	OFF(famfs_ioc_get_fmap, iocmap, 0);
	OFF(famfs_ioc_get_fmap, ikse, 32);
	OFF(famfs_ioc_get_fmap, ks.ikie, 32);
	OFF(famfs_ioc_get_fmap, ks.kie_strips, 64);

	/* Encoded numbers (x86_64) */
	NUM(FAMFSIOC_MAP_CREATE, 0x40387550);
	NUM(FAMFSIOC_MAP_GET, 0x80387551);
	NUM(FAMFSIOC_MAP_GETEXT, 0x80107552);
	NUM(FAMFSIOC_NOP, 0x00007553);
	NUM(FAMFSIOC_MAP_CREATE_V2, 0x40207554);
	NUM(FAMFSIOC_MAP_GET_V2, 0x81c07555);

	/* This tree's MKFILES extension: a number upstream does not use */
	NUM(FAMFS_IOC_MAX_MKFILES, 1024);
	SIZE(famfs_ioc_mkfile, 40);
	OFF(famfs_ioc_mkfile, name, 0);
	OFF(famfs_ioc_mkfile, name_len, 8);
	OFF(famfs_ioc_mkfile, mode, 12);
	OFF(famfs_ioc_mkfile, uid, 16);
	OFF(famfs_ioc_mkfile, gid, 20);
	OFF(famfs_ioc_mkfile, fmap, 24);
	OFF(famfs_ioc_mkfile, result, 32);
	OFF(famfs_ioc_mkfile, reserved, 36);
	SIZE(famfs_ioc_mkfiles, 16);
	OFF(famfs_ioc_mkfiles, files, 0);
	OFF(famfs_ioc_mkfiles, count, 8);
	OFF(famfs_ioc_mkfiles, flags, 12);
	NUM(FAMFSIOC_MKFILES, 0x40107570);

	printf("1..%d\n", n);
	return failed;
}
