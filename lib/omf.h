/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The famfs on-media format (OMF 2.2, superblock version 48), byte for byte
 * the layout the upstream famfs tools write on x86_64.  Every field has a
 * fixed width and every hole is an explicit padding field, so the layout does
 * not depend on the compiler or the ABI.  All integers are little-endian.
 */
#ifndef FAMFS_OMF_H
#define FAMFS_OMF_H

#include <stddef.h>
#include <stdint.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
/* The format is little-endian and every reader here uses it in place. */
#error "famfs media are little-endian; big-endian hosts are not supported"
#endif

#define FAMFS_SUPER_MAGIC        UINT64_C(0x87b282ff)
#define FAMFS_STATFS_MAGIC_V1    0x87b282feU
#define FAMFS_CURRENT_VERSION    48
#define FAMFS_OLDEST_VERSION     47   /* same layout, without ADD_DAXDEV */
#define FAMFS_OMF_VER_MAJOR      2
#define FAMFS_OMF_VER_MINOR      2
#define FAMFS_LOG_MAGIC          UINT64_C(0xbadcafef00d)

#define FAMFS_SUPERBLOCK_SIZE    UINT64_C(0x200000)  /* region, not the struct */
#define FAMFS_LOG_OFFSET         UINT64_C(0x200000)
#define FAMFS_LOG_LEN_DEFAULT    UINT64_C(0x800000)
#define FAMFS_LOG_LEN_MIN        UINT64_C(0x800000)
#define FAMFS_ALLOC_UNIT         UINT64_C(0x200000)
#define FAMFS_ALLOC_UNIT_SMALL   UINT64_C(4096)      /* accepted by readers */

#define FAMFS_MAX_SIMPLE_EXTENTS       16
#define FAMFS_MAX_INTERLEAVED_EXTENTS  1
#define FAMFS_MAX_STRIPS               16
#define FAMFS_MAX_NBUCKETS             64
#define FAMFS_MAX_PATHLEN              80     /* including the NUL */
#define FAMFS_DEVNAME_LEN              64

/* Superblock flags (upstream mkfs leaves them 0). */
#define FAMFS_SB_PRIMARY    1u
#define FAMFS_SB_SECONDARY  2u

/* File flags in a FILE entry. */
#define FAMFS_FM_ALL_HOSTS_RO  1u
#define FAMFS_FM_ALL_HOSTS_RW  2u

enum famfs_log_entry_type {
	FAMFS_LOG_FILE = 0,
	FAMFS_LOG_MKDIR = 1,
	FAMFS_LOG_DELETE = 2,      /* defined upstream, never written */
	FAMFS_LOG_ADD_DAXDEV = 3,  /* version 48 */
};

enum famfs_extent_type {
	FAMFS_EXT_SIMPLE = 0,
	FAMFS_EXT_INTERLEAVED = 1,
};

struct famfs_superblock {
	uint64_t magic;
	uint64_t version;
	uint64_t log_offset;
	uint64_t log_len;
	uint64_t alloc_unit;
	uint32_t omf_major;
	uint32_t omf_minor;
	uint8_t  uuid[16];         /* file system */
	uint8_t  dev_uuid[16];
	uint8_t  system_uuid[16];  /* the master host */
	uint64_t crc;              /* crc32 of bytes [0, 96), zero-extended */
	uint32_t flags;
	uint32_t pad0;
	/* The primary device record; not covered by the CRC. */
	uint64_t dev_size;
	uint8_t  dev_record_uuid[16];
	char     dev_name[FAMFS_DEVNAME_LEN];  /* may lack a NUL */
};

struct famfs_log_header {
	uint64_t magic;
	uint64_t len;
	uint64_t last_index;       /* last usable slot, inclusive */
	uint64_t crc;              /* crc32 of bytes [0, 24), zero-extended */
	uint64_t next_seqnum;
	uint64_t next_index;
};

struct famfs_simple_extent {
	uint64_t devindex;
	uint64_t offset;
	uint64_t len;
};

struct famfs_interleaved_extent {
	uint64_t nstrips;
	uint64_t chunk_size;
	struct famfs_simple_extent strips[FAMFS_MAX_STRIPS];
};

struct famfs_log_file_meta {
	uint64_t size;
	uint32_t flags;
	uint32_t uid;
	uint32_t gid;
	uint32_t mode;             /* permission bits only */
	char     relpath[FAMFS_MAX_PATHLEN];
	uint32_t ext_type;         /* enum famfs_extent_type */
	uint32_t pad0;
	uint32_t nextents;         /* simple extents, or interleaved extents (1) */
	uint32_t pad1;
	union {
		struct famfs_simple_extent se[FAMFS_MAX_SIMPLE_EXTENTS];
		struct famfs_interleaved_extent ie[FAMFS_MAX_INTERLEAVED_EXTENTS];
	};
};

struct famfs_log_mkdir {
	uint32_t uid;
	uint32_t gid;
	uint32_t mode;
	char     relpath[FAMFS_MAX_PATHLEN];
};

struct famfs_log_add_daxdev {
	uint64_t size;
	uint8_t  uuid[16];
	uint32_t index;
	uint32_t pad0;
};

#define FAMFS_LOG_ENTRY_BODY_SIZE 520

struct famfs_log_entry {
	uint64_t seqnum;
	uint32_t type;             /* enum famfs_log_entry_type */
	uint32_t pad0;
	union {
		struct famfs_log_file_meta file;
		struct famfs_log_mkdir mkdir;
		struct famfs_log_add_daxdev daxdev;
		uint8_t raw[FAMFS_LOG_ENTRY_BODY_SIZE];
	};
	uint64_t crc;              /* crc32 of bytes [0, 536), zero-extended */
};

#define FAMFS_SB_CRC_LEN          96
#define FAMFS_LOG_HEADER_CRC_LEN  24
#define FAMFS_LOG_ENTRY_CRC_LEN   536

_Static_assert(sizeof(struct famfs_superblock) == 200, "superblock size");
_Static_assert(offsetof(struct famfs_superblock, version) == 8, "sb version");
_Static_assert(offsetof(struct famfs_superblock, log_offset) == 16, "sb log_offset");
_Static_assert(offsetof(struct famfs_superblock, log_len) == 24, "sb log_len");
_Static_assert(offsetof(struct famfs_superblock, alloc_unit) == 32, "sb alloc_unit");
_Static_assert(offsetof(struct famfs_superblock, omf_major) == 40, "sb omf_major");
_Static_assert(offsetof(struct famfs_superblock, omf_minor) == 44, "sb omf_minor");
_Static_assert(offsetof(struct famfs_superblock, uuid) == 48, "sb uuid");
_Static_assert(offsetof(struct famfs_superblock, dev_uuid) == 64, "sb dev_uuid");
_Static_assert(offsetof(struct famfs_superblock, system_uuid) == 80, "sb system_uuid");
_Static_assert(offsetof(struct famfs_superblock, crc) == FAMFS_SB_CRC_LEN, "sb crc");
_Static_assert(offsetof(struct famfs_superblock, flags) == 104, "sb flags");
_Static_assert(offsetof(struct famfs_superblock, dev_size) == 112, "sb dev_size");
_Static_assert(offsetof(struct famfs_superblock, dev_record_uuid) == 120, "sb dev uuid");
_Static_assert(offsetof(struct famfs_superblock, dev_name) == 136, "sb dev_name");

_Static_assert(sizeof(struct famfs_log_header) == 48, "log header size");
_Static_assert(offsetof(struct famfs_log_header, len) == 8, "log len");
_Static_assert(offsetof(struct famfs_log_header, last_index) == 16, "log last_index");
_Static_assert(offsetof(struct famfs_log_header, crc) == FAMFS_LOG_HEADER_CRC_LEN, "log crc");
_Static_assert(offsetof(struct famfs_log_header, next_seqnum) == 32, "log next_seqnum");
_Static_assert(offsetof(struct famfs_log_header, next_index) == 40, "log next_index");

_Static_assert(sizeof(struct famfs_simple_extent) == 24, "simple extent size");
_Static_assert(sizeof(struct famfs_interleaved_extent) == 400, "interleaved extent size");
_Static_assert(offsetof(struct famfs_interleaved_extent, strips) == 16, "ie strips");

_Static_assert(sizeof(struct famfs_log_file_meta) == 520, "file meta size");
_Static_assert(offsetof(struct famfs_log_file_meta, flags) == 8, "fm flags");
_Static_assert(offsetof(struct famfs_log_file_meta, uid) == 12, "fm uid");
_Static_assert(offsetof(struct famfs_log_file_meta, gid) == 16, "fm gid");
_Static_assert(offsetof(struct famfs_log_file_meta, mode) == 20, "fm mode");
_Static_assert(offsetof(struct famfs_log_file_meta, relpath) == 24, "fm relpath");
_Static_assert(offsetof(struct famfs_log_file_meta, ext_type) == 104, "fm ext_type");
_Static_assert(offsetof(struct famfs_log_file_meta, nextents) == 112, "fm nextents");
_Static_assert(offsetof(struct famfs_log_file_meta, se) == 120, "fm extents");

_Static_assert(sizeof(struct famfs_log_mkdir) == 92, "mkdir size");
_Static_assert(offsetof(struct famfs_log_mkdir, relpath) == 12, "md relpath");
_Static_assert(sizeof(struct famfs_log_add_daxdev) == 32, "add_daxdev size");
_Static_assert(offsetof(struct famfs_log_add_daxdev, uuid) == 8, "dd uuid");
_Static_assert(offsetof(struct famfs_log_add_daxdev, index) == 24, "dd index");

_Static_assert(sizeof(struct famfs_log_entry) == 544, "log entry size");
_Static_assert(offsetof(struct famfs_log_entry, type) == 8, "entry type");
_Static_assert(offsetof(struct famfs_log_entry, file) == 16, "entry body");
_Static_assert(offsetof(struct famfs_log_entry, file.relpath) == 40, "entry relpath");
_Static_assert(offsetof(struct famfs_log_entry, file.nextents) == 128, "entry nextents");
_Static_assert(offsetof(struct famfs_log_entry, file.se) == 136, "entry se[0]");
_Static_assert(offsetof(struct famfs_log_entry, file.ie[0].strips) == 152, "entry strips");
_Static_assert(offsetof(struct famfs_log_entry, crc) == FAMFS_LOG_ENTRY_CRC_LEN, "entry crc");

/* Number of entry slots a log of @log_len bytes holds. */
static inline uint64_t famfs_log_slots(uint64_t log_len)
{
	if (log_len < sizeof(struct famfs_log_header))
		return 0;
	return (log_len - sizeof(struct famfs_log_header)) / sizeof(struct famfs_log_entry);
}

#endif /* FAMFS_OMF_H */
