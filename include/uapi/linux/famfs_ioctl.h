/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * famfs_ioctl.h - kernel/user interface of the famfs kernel module
 *
 * famfs exposes shared (fabric-attached) memory as files.  User space
 * allocates space and keeps the metadata log; the kernel module only caches
 * the extent list of each file, which user space hands over with one of the
 * MAP_CREATE ioctls below.
 *
 * The ioctl numbers and structure layouts are binary compatible with the
 * upstream famfs module, KABI version 42 (v1 ioctls, simple extents only) and
 * KABI version 43 (v2 ioctls, simple and interleaved extents).  Sizes are
 * pinned by the static assertions at the end of this file.
 *
 * The structures carry user pointers, so they are only defined for 64-bit
 * user space on a 64-bit kernel; 32-bit compat ioctls are not supported.
 */
#ifndef _UAPI_LINUX_FAMFS_IOCTL_H
#define _UAPI_LINUX_FAMFS_IOCTL_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define FAMFS_KABI_VERSION			43

/* Limits */
#define FAMFS_MAX_EXTENTS			2  /* v1 map, v2 get_fmap */
#define FAMFS_MAX_STRIPS			16 /* per interleaved ext */
#define FAMFS_IOC_MAX_INTERLEAVED_EXTENTS	4
#define FAMFS_IOC_MAX_SIMPLE_EXTENTS		16 /* by MAP_CREATE_V2 */

/* Every extent offset and every chunk size is a multiple of this */
#define FAMFS_IOC_ALIGN				0x200000ULL

/* File types (both ABIs) */
enum famfs_file_type {
	FAMFS_REG = 0,		/* a regular data file */
	FAMFS_SUPERBLOCK = 1,	/* .meta/.superblock: may start at 0 */
	FAMFS_LOG = 2,		/* .meta/.log */
};

/*
 * KABI 43 (v2)
 *
 * A file is described by a struct famfs_ioc_fmap followed (through a user
 * pointer) by either fioc_nextents simple extents or fioc_niext interleaved
 * extents.  An interleaved extent spreads ie_nbytes of the file over
 * ie_nstrips strips in ie_chunk_size pieces: chunk k of the extent lives in
 * strip (k % ie_nstrips) at offset (k / ie_nstrips) * ie_chunk_size.
 */
enum famfs_ioc_ext_type {
	FAMFS_IOC_EXT_SIMPLE = 0,
	FAMFS_IOC_EXT_INTERLEAVE = 1,
};

struct famfs_ioc_simple_extent {
	__u64 devindex;		/* must be 0: one device per mount */
	__u64 offset;		/* byte offset on the device */
	__u64 len;		/* bytes */
};

struct famfs_ioc_interleaved_ext {
	__u64 ie_nstrips;
	__u64 ie_chunk_size;
	__u64 ie_nbytes;	/* file bytes held by this extent */
	struct famfs_ioc_simple_extent *ie_strips;
};

struct famfs_ioc_fmap {
	__u64 fioc_file_size;
	__u32 fioc_file_type;	/* enum famfs_file_type */
	__u32 fioc_ext_type;	/* enum famfs_ioc_ext_type */
	union {
		struct {
			__u32 fioc_nextents;
			struct famfs_ioc_simple_extent *kse;
		};
		struct {
			__u32 fioc_niext;
			struct famfs_ioc_interleaved_ext *kie;
		};
	};
};

/*
 * MAP_GET_V2 result: fixed size.  The pointers in iocmap are returned as
 * NULL; the extents follow inline.  Files with more than FAMFS_MAX_EXTENTS
 * simple extents, or with more than one interleaved extent, make MAP_GET_V2
 * fail with E2BIG.
 */
struct famfs_ioc_get_fmap {
	struct famfs_ioc_fmap iocmap;
	union {
		struct famfs_ioc_simple_extent ikse[FAMFS_MAX_EXTENTS];
		struct {
			struct famfs_ioc_interleaved_ext ikie;
			struct famfs_ioc_simple_extent
				kie_strips[FAMFS_MAX_STRIPS];
		} ks;
	};
};

/* KABI 42 (v1): simple extents only, at most FAMFS_MAX_EXTENTS */
enum famfs_extent_type {
	SIMPLE_DAX_EXTENT = 0,
	INTERLEAVED_EXTENT = 1,	/* not accepted by the v1 ioctls */
	INVALID_EXTENT_TYPE = 2,
};

struct famfs_extent {
	__u64 offset;
	__u64 len;
};

struct famfs_ioc_map {
	__u32 extent_type;	/* enum famfs_extent_type */
	__u32 file_type;	/* enum famfs_file_type */
	__u64 file_size;
	__u64 ext_list_count;
	struct famfs_extent ext_list[FAMFS_MAX_EXTENTS];
};

/*
 * Errors.  MAP_CREATE and MAP_CREATE_V2: EPERM without CAP_SYS_ADMIN, EEXIST
 * if the file already has a map, ENOSPC for zero extents, E2BIG for too many
 * extents or strips, EFAULT for unreadable pointers, EINVAL for anything else
 * that is wrong (types, alignment, lengths, offset 0 on a file other than the
 * superblock, extents past the device, file size larger than the extents).
 * MAP_GET*: ENODATA if the file has no map.  Any of these on a file that is
 * not a famfs regular file: ENOTTY.
 */
#define FAMFSIOC_MAGIC 'u'

/* KABI 42 */
#define FAMFSIOC_MAP_CREATE	_IOW(FAMFSIOC_MAGIC, 0x50, \
				     struct famfs_ioc_map)
#define FAMFSIOC_MAP_GET	_IOR(FAMFSIOC_MAGIC, 0x51, struct famfs_ioc_map)
/*
 * MAP_GETEXT writes ext_list_count struct famfs_extent to the argument,
 * which may be more than the size encoded in the number.
 */
#define FAMFSIOC_MAP_GETEXT	_IOR(FAMFSIOC_MAGIC, 0x52, \
				     struct famfs_extent)
#define FAMFSIOC_NOP		_IO(FAMFSIOC_MAGIC, 0x53)

/* KABI 43 */
#define FAMFSIOC_MAP_CREATE_V2	_IOW(FAMFSIOC_MAGIC, 0x54, \
				     struct famfs_ioc_fmap)
#define FAMFSIOC_MAP_GET_V2	_IOR(FAMFSIOC_MAGIC, 0x55, \
				     struct famfs_ioc_get_fmap)

/*
 * MKFILES: an extension of this tree's famfs.ko, not part of upstream's
 * KABI (upstream's tools never issue it; a module without it answers
 * ENOTTY).  Issued on a directory of a famfs mount, it creates up to
 * FAMFS_IOC_MAX_MKFILES regular files in that directory, each with its
 * name, permission bits, owner and MAP_CREATE_V2 map, in one call: what
 * open(O_CREAT | O_EXCL), fchown, fchmod, MAP_CREATE_V2 and close do per
 * file.  A file's map is checked before the file is created, so a refused
 * map leaves no file behind.
 *
 * Each file gets its own result (0 or a negative errno: EINVAL for a bad
 * name, mode, owner, reserved field or map, EEXIST when the name is taken,
 * ENOSPC/E2BIG/EFAULT as for MAP_CREATE_V2); the files after a failed one
 * are still tried.  The call returns the number of files created, or fails
 * as a whole with EPERM (no CAP_SYS_ADMIN), EINVAL (count 0 or above the
 * maximum, flags or reserved set), EFAULT (the array is unreadable or the
 * results cannot be written), EROFS (read-only mount), ENOTDIR (not a
 * famfs directory).
 */
#define FAMFS_IOC_MAX_MKFILES			1024

struct famfs_ioc_mkfile {
	__u64 name;		/* user pointer to the name, not 0-terminated */
	__u32 name_len;		/* 1 .. NAME_MAX */
	__u32 mode;		/* permission bits only (07777) */
	__u32 uid;		/* in the caller's user namespace */
	__u32 gid;
	__u64 fmap;		/* user pointer to a struct famfs_ioc_fmap */
	__s32 result;		/* out: 0 or -errno for this file */
	__u32 reserved;		/* 0 */
};

struct famfs_ioc_mkfiles {
	__u64 files;		/* user pointer to count struct famfs_ioc_mkfile */
	__u32 count;
	__u32 flags;		/* 0 */
};

#define FAMFSIOC_MKFILES	_IOW(FAMFSIOC_MAGIC, 0x70, \
				     struct famfs_ioc_mkfiles)

/*
 * Layout pins.  They hold wherever pointers are 64 bits wide; the ioctl
 * number pins hold for the generic _IOC encoding (x86, arm64, riscv).
 */
#if defined(__cplusplus)
#define __FAMFS_IOC_ASSERT(expr, msg) static_assert(expr, msg)
#else
#define __FAMFS_IOC_ASSERT(expr, msg) _Static_assert(expr, msg)
#endif

#if defined(__SIZEOF_POINTER__) && __SIZEOF_POINTER__ == 8
__FAMFS_IOC_ASSERT(sizeof(struct famfs_extent) == 16, "famfs_extent");
__FAMFS_IOC_ASSERT(sizeof(struct famfs_ioc_map) == 56, "famfs_ioc_map");
__FAMFS_IOC_ASSERT(sizeof(struct famfs_ioc_simple_extent) == 24,
		   "famfs_ioc_simple_extent");
__FAMFS_IOC_ASSERT(sizeof(struct famfs_ioc_interleaved_ext) == 32,
		   "famfs_ioc_interleaved_ext");
__FAMFS_IOC_ASSERT(sizeof(struct famfs_ioc_fmap) == 32, "famfs_ioc_fmap");
__FAMFS_IOC_ASSERT(sizeof(struct famfs_ioc_get_fmap) == 448,
		   "famfs_ioc_get_fmap");
__FAMFS_IOC_ASSERT(__builtin_offsetof(struct famfs_ioc_fmap, kse) == 24,
		   "famfs_ioc_fmap.kse");
__FAMFS_IOC_ASSERT(__builtin_offsetof(struct famfs_ioc_get_fmap,
				      ks.kie_strips) == 64,
		   "famfs_ioc_get_fmap.ks.kie_strips");
__FAMFS_IOC_ASSERT(__builtin_offsetof(struct famfs_ioc_map, ext_list) == 24,
		   "famfs_ioc_map.ext_list");
#endif /* 64-bit pointers */

/* the MKFILES extension carries its pointers as __u64: any word size */
__FAMFS_IOC_ASSERT(sizeof(struct famfs_ioc_mkfile) == 40, "famfs_ioc_mkfile");
__FAMFS_IOC_ASSERT(__builtin_offsetof(struct famfs_ioc_mkfile, result) == 32,
		   "famfs_ioc_mkfile.result");
__FAMFS_IOC_ASSERT(sizeof(struct famfs_ioc_mkfiles) == 16,
		   "famfs_ioc_mkfiles");

#if defined(__SIZEOF_POINTER__) && __SIZEOF_POINTER__ == 8

#if defined(__x86_64__) || defined(__aarch64__) || \
	(defined(__riscv) && __riscv_xlen == 64)
__FAMFS_IOC_ASSERT(FAMFSIOC_MAP_CREATE == 0x40387550UL, "MAP_CREATE");
__FAMFS_IOC_ASSERT(FAMFSIOC_MAP_GET == 0x80387551UL, "MAP_GET");
__FAMFS_IOC_ASSERT(FAMFSIOC_MAP_GETEXT == 0x80107552UL, "MAP_GETEXT");
__FAMFS_IOC_ASSERT(FAMFSIOC_NOP == 0x00007553UL, "NOP");
__FAMFS_IOC_ASSERT(FAMFSIOC_MAP_CREATE_V2 == 0x40207554UL, "MAP_CREATE_V2");
__FAMFS_IOC_ASSERT(FAMFSIOC_MAP_GET_V2 == 0x81c07555UL, "MAP_GET_V2");
__FAMFS_IOC_ASSERT(FAMFSIOC_MKFILES == 0x40107570UL, "MKFILES");
#endif
#endif /* 64-bit pointers */

#undef __FAMFS_IOC_ASSERT

#endif /* _UAPI_LINUX_FAMFS_IOCTL_H */
