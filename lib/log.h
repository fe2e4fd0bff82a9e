/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The famfs metadata log: a header followed by a dense array of 544-byte
 * entries, appended by the master and replayed by everyone.
 */
#ifndef FAMFS_LOG_H
#define FAMFS_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "findings.h"
#include "omf.h"

/* Where the data area of a device is, for extent checks. */
struct famfs_layout {
	uint64_t dev_size;
	uint64_t log_len;
	uint64_t alloc_unit;
};

/* A file's map, as stored in a FILE entry. */
struct famfs_fmap {
	uint32_t ext_type;     /* enum famfs_extent_type */
	uint32_t nextents;     /* simple extents, or 1 for interleaved */
	union {
		struct famfs_simple_extent se[FAMFS_MAX_SIMPLE_EXTENTS];
		struct famfs_interleaved_extent ie[FAMFS_MAX_INTERLEAVED_EXTENTS];
	};
};

uint32_t famfs_log_header_crc(const struct famfs_log_header *h);
uint32_t famfs_log_entry_crc(const struct famfs_log_entry *e);

/* Zeroes the whole log of @log_len bytes and writes an empty header. */
void famfs_log_format(void *log, uint64_t log_len);

/*
 * Checks magic, CRC, length (against the superblock's @sb_log_len), last
 * index, and that next_index/next_seqnum are in range.  On FAMFS_F_LOG_NEXT_*
 * the header itself is sound but its counters cannot be trusted.
 */
enum famfs_finding_code famfs_log_header_validate(const struct famfs_log_header *h,
						  uint64_t sb_log_len, struct famfs_err *err);

/* The checks that catch a torn or stale write: seqnum == index and the CRC. */
enum famfs_finding_code famfs_log_entry_check_integrity(const struct famfs_log_entry *e,
							uint64_t index, struct famfs_err *err);

/*
 * The semantic rules of one entry on its own (type, extent counts, strips,
 * chunk size, alignment, bounds, devindex, size, path syntax).  Rules that
 * need the other entries (parents, duplicates, cross-links) are checked by
 * the namespace and the checker.
 */
enum famfs_finding_code famfs_log_entry_check_semantics(const struct famfs_log_entry *e,
							const struct famfs_layout *layout,
							struct famfs_err *err);

/*
 * The map rules of a FILE entry alone.  FAMFS_F_FILE_SIZE is the only code
 * after which the extents themselves are sound.
 */
enum famfs_finding_code famfs_fmap_check(const struct famfs_log_file_meta *fm,
					 const struct famfs_layout *layout, struct famfs_err *err);

/*
 * The rules of a FILE entry alone, path first, then map.  With
 * @ret_extents_sound, also says whether its extents are well formed and
 * inside the data area whatever else is wrong: the space of such an intact
 * entry stays claimed even when the file is refused.
 */
enum famfs_finding_code famfs_file_entry_check(const struct famfs_log_entry *e,
					       const struct famfs_layout *layout,
					       bool *ret_extents_sound, struct famfs_err *err);
/*
 * The same, with the path field given apart (FAMFS_MAX_PATHLEN bytes): a
 * checker passes its own copy of it, taken once from a log that another
 * host may be writing.
 */
enum famfs_finding_code famfs_file_meta_check(const struct famfs_log_file_meta *fm, const char *relpath,
					      const struct famfs_layout *layout,
					      bool *ret_extents_sound, struct famfs_err *err);

/* Bytes of device space a map gives its file. */
uint64_t famfs_fmap_capacity(const struct famfs_fmap *map);

/* Copies the map out of a FILE entry. */
void famfs_entry_get_fmap(const struct famfs_log_entry *e, struct famfs_fmap *ret);

/* Build zeroed entries (seqnum and CRC are set by the append). */
int famfs_entry_make_file(struct famfs_log_entry *e, const char *relpath, uint64_t size,
			  uint32_t mode, uint32_t uid, uint32_t gid,
			  const struct famfs_fmap *map, struct famfs_err *err);
int famfs_entry_make_mkdir(struct famfs_log_entry *e, const char *relpath,
			   uint32_t mode, uint32_t uid, uint32_t gid, struct famfs_err *err);

/* The relpath field of a FILE or MKDIR entry, or NULL. */
const char *famfs_entry_relpath(const struct famfs_log_entry *e);

/* Entries that still fit. */
uint64_t famfs_log_free_slots(const struct famfs_log_header *h);

/*
 * Appends @n entries: each is stamped with its seqnum and CRC, written into
 * its slot and flushed; only then are next_index/next_seqnum advanced and
 * the header line flushed.  All or nothing: FAMFS_ELOGFULL (negative) when
 * the batch does not fit, and nothing is written.  The caller holds the log
 * lock and has validated the header.
 */
int famfs_log_append(struct famfs_log_header *h, struct famfs_log_entry *entries,
		     size_t n, struct famfs_err *err);

static inline struct famfs_log_entry *famfs_log_entries(struct famfs_log_header *h)
{
	return (struct famfs_log_entry *)(h + 1);
}

#endif
