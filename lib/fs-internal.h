/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fields of struct famfs_fs, for the library's own files and its unit
 * tests only.  Everything outside lib/ uses the accessors in fs.h, so what
 * is kept here can change without touching the daemon or the tools.
 */
#ifndef FAMFS_FS_INTERNAL_H
#define FAMFS_FS_INTERNAL_H

#include "fs.h"

struct famfs_fs {
	struct famfs_device *dev;
	struct famfs_superblock *sb;     /* in the mapping */
	struct famfs_log_header *log;    /* in the mapping */
	struct famfs_layout layout;
	struct famfs_allocator alloc;
	struct famfs_ns *ns;
	bool master;
	uint64_t applied;                /* entries [0, applied) have been read */
	uint64_t replayed_next_index;    /* the log header's next_index the last replay read */
	uint64_t replayed_total;         /* entries applied over the fs's life */
	uint64_t rejected_total;         /* intact entries refused for breaking a rule */
	uint64_t crosslinked_units;      /* units claimed twice, seen while replaying */
	int64_t last_rejected_index;
	char last_rejected[FAMFS_ERR_MSG_MAX];
	/* the superblock as validated at open: what every later read is compared with */
	struct famfs_superblock sb_at_open;
	enum famfs_medium_change medium_change_kind;   /* sticky: set by famfs_fs_revalidate */
	char medium_change[FAMFS_ERR_MSG_MAX];
	/* told of entries another writer appended, found while catching up to write */
	void (*observer)(struct famfs_fs *fs, uint64_t index, const struct famfs_log_entry *entry,
			 uint32_t node, void *userdata);
	void *observer_data;
};

#endif
