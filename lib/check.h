/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The checker engine: every rule of a strict reader, applied to a whole
 * medium in memory, producing structured findings and a summary.  fsck.famfs
 * prints them; the daemon runs the same engine at attach and on request.
 */
#ifndef FAMFS_CHECK_H
#define FAMFS_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cleanup.h"
#include "device.h"
#include "error.h"
#include "findings.h"
#include "omf.h"

/* Findings kept per code; the rest are only counted. */
#define FAMFS_CHECK_MAX_PER_CODE 1000

struct famfs_finding {
	enum famfs_severity severity;
	enum famfs_finding_code code;
	int64_t index;                       /* log entry, or -1 */
	char path[FAMFS_MAX_PATHLEN + 1];    /* "" when none */
	/* cross-links: the other file and the shared range */
	int64_t other_index;
	char other_path[FAMFS_MAX_PATHLEN + 1];
	uint64_t offset;
	uint64_t length;
	char message[FAMFS_ERR_MSG_MAX];
};

struct famfs_check_summary {
	bool superblock_valid;
	bool log_valid;                /* the header can be read */
	uint64_t version;
	uint32_t omf_major, omf_minor;
	uint8_t uuid[16];
	uint8_t system_uuid[16];
	uint64_t medium_size;          /* what the device really has */
	uint64_t capacity;             /* the superblock's device size, or the medium's when smaller */
	uint64_t log_len;
	uint64_t log_used;             /* next_index as trusted */
	uint64_t log_total;            /* slots */
	uint64_t allocated;            /* bytes in allocation units in use, metadata included */
	uint64_t free;
	uint64_t file_bytes;           /* sum of file sizes */
	uint64_t files;
	uint64_t directories;
	uint64_t bad_entries;          /* entries failing integrity */
	uint64_t rejected_entries;     /* intact entries breaking a rule */
	uint64_t crosslinked_units;    /* claims on allocation units beyond the first claim of each */
};

/*
 * What a safe repair would do: the entries from tail_start to the end of
 * the written log all fail integrity (a torn or invalid tail), and/or the
 * header's next_index/next_seqnum disagree with the intact entries.  Setting
 * both to new_next_index removes no intact entry.
 */
struct famfs_check_repair {
	bool needed;
	uint64_t new_next_index;
	uint64_t old_next_index;
	uint64_t old_next_seqnum;
};

struct famfs_check_report {
	struct famfs_check_summary summary;
	struct famfs_check_repair repair;
	struct famfs_finding *findings;
	size_t nfindings;
	size_t capacity;
	size_t suppressed;                  /* findings over the per-code limit */
	size_t per_code[_FAMFS_F_MAX];
	size_t by_severity[FAMFS_SEV_FATAL + 1];
};

enum famfs_check_flags {
	FAMFS_CHECK_NO_CROSSLINKS = 1u << 0,
};

/*
 * Checks the medium mapped at @base, @medium_size bytes long.  Returns 0
 * with a report (which may say the medium is badly damaged), or -ENOMEM.
 */
int famfs_check_medium(const uint8_t *base, uint64_t medium_size, unsigned flags,
		       struct famfs_check_report **ret);

/*
 * The same for a medium of which only the first @readable bytes are mapped
 * at @base: the superblock region and the log, as a kernel mount's .meta
 * files map them.  Nothing past @readable is read; a superblock that now
 * claims a longer log is a fatal finding.  -EINVAL when @readable is more
 * than @medium_size, or less but short of the superblock region and a log
 * header.
 */
int famfs_check_view(const uint8_t *base, uint64_t readable, uint64_t medium_size, unsigned flags,
		     struct famfs_check_report **ret);

/*
 * The same for the whole of an open, mapped device.  A log that read(2)
 * reaches (image files, pmem block devices) is read in chunks rather than
 * through the mapping, which is faster on a first read; device DAX is read
 * in place.  -EINVAL for a device opened without its mapping.
 */
int famfs_check_device(const struct famfs_device *dev, unsigned flags, struct famfs_check_report **ret);

struct famfs_check_report *famfs_check_report_free(struct famfs_check_report *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct famfs_check_report *, famfs_check_report_free);

/* Errors the report holds (ERROR and FATAL findings, suppressed ones included). */
size_t famfs_check_report_errors(const struct famfs_check_report *r);

/* Whether every error in the report is one the repair plan fixes. */
bool famfs_check_repair_fixes_all(const struct famfs_check_report *r);

#endif
