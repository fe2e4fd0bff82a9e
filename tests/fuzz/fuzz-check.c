// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A superblock and log through the checker (famfs_check_medium, or
 * famfs_check_view when the head's mode asks for it or the medium is larger
 * than the mapping).  The medium is mapped only as far as the code may read:
 * every page past it is PROT_NONE, so a read beyond the medium faults.
 * Properties: no crash or leak, a report whose strings are terminated and
 * whose counts agree with each other.
 *
 * Head mode bit 0: famfs_check_view with only the superblock region and the
 * log readable; bit 1: FAMFS_CHECK_NO_CROSSLINKS; bit 2: also check the
 * superblock region and log alone and require the same findings.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "fuzz-common.h"
#include "superblock.h"

#define AREA (FAMFS_LOG_OFFSET + FUZZ_LOG_MAX)
#define PAGE UINT64_C(4096)

static uint8_t *area;

static void check_report(const struct famfs_check_report *r)
{
	size_t by_code = 0, by_sev = 0;

	if (r->nfindings > r->capacity)
		fuzz_fail("%zu findings in room for %zu", r->nfindings, r->capacity);
	for (size_t k = 0; k < r->nfindings; k++) {
		const struct famfs_finding *f = &r->findings[k];

		if (memchr(f->path, '\0', sizeof(f->path)) == NULL ||
		    memchr(f->other_path, '\0', sizeof(f->other_path)) == NULL ||
		    memchr(f->message, '\0', sizeof(f->message)) == NULL)
			fuzz_fail("finding %zu has an unterminated string", k);
		if ((unsigned)f->code >= _FAMFS_F_MAX || (unsigned)f->severity > FAMFS_SEV_FATAL)
			fuzz_fail("finding %zu has code %d severity %d", k, f->code, f->severity);
		if (f->message[0] == '\0')
			fuzz_fail("finding %zu (code %d) has no message", k, f->code);
	}
	for (int c = 0; c < _FAMFS_F_MAX; c++)
		by_code += r->per_code[c];
	for (int s = 0; s <= FAMFS_SEV_FATAL; s++)
		by_sev += r->by_severity[s];
	if (by_code != by_sev || by_code != r->nfindings + r->suppressed)
		fuzz_fail("finding counts disagree: %zu by code, %zu by severity, %zu kept + %zu suppressed",
			  by_code, by_sev, r->nfindings, r->suppressed);
	if (r->summary.log_valid && r->summary.log_used > r->summary.log_total)
		fuzz_fail("log used %llu of %llu slots", (unsigned long long)r->summary.log_used,
			  (unsigned long long)r->summary.log_total);
	if (r->repair.needed && r->repair.new_next_index > r->summary.log_total)
		fuzz_fail("repair sets next_index %llu past the %llu slots",
			  (unsigned long long)r->repair.new_next_index,
			  (unsigned long long)r->summary.log_total);
	(void)famfs_check_repair_fixes_all(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	struct famfs_check_report *r = NULL;
	struct fuzz_image img;
	uint64_t medium, readable, guard;
	unsigned flags;
	int rc;

	if (!area) {
		area = mmap(NULL, AREA, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (area == MAP_FAILED)
			fuzz_fail("cannot map %llu bytes", (unsigned long long)AREA);
	}
	fuzz_image_write(&in, area, AREA, &img);
	medium = img.head.medium_size;
	flags = (img.head.mode & 2) ? FAMFS_CHECK_NO_CROSSLINKS : 0;
	readable = medium;
	if ((img.head.mode & 1) || medium > AREA) {
		const struct famfs_superblock *sb = (const void *)area;

		readable = FAMFS_LOG_OFFSET + (sb->log_len < FUZZ_LOG_MAX ? sb->log_len : FUZZ_LOG_MAX);
		if (readable > medium)
			readable = medium;
	}
	/* Nothing past what the checker was given is readable. */
	guard = (readable + PAGE - 1) / PAGE * PAGE;
	if (guard < AREA)
		mprotect(area + guard, AREA - guard, PROT_NONE);

	rc = famfs_check_view(area, readable, medium, flags, &r);
	if (rc == 0)
		check_report(r);
	else if (rc != -EINVAL || (readable == medium || readable >= FAMFS_LOG_OFFSET + 48))
		fuzz_fail("famfs_check_view returned %d", rc);

	/* The metadata alone says as much as the whole medium when the log fits in it. */
	if (rc == 0 && (img.head.mode & 4) && readable == medium && r->summary.superblock_valid &&
	    famfs_data_start(r->summary.log_len) < medium) {
		struct famfs_check_report *v = NULL;

		if (famfs_check_view(area, famfs_data_start(r->summary.log_len), medium, flags, &v) < 0)
			fuzz_fail("famfs_check_view of the metadata alone failed");
		if (v->nfindings != r->nfindings || memcmp(v->per_code, r->per_code, sizeof(r->per_code)) != 0)
			fuzz_fail("the metadata view finds %zu things, the whole medium %zu", v->nfindings,
				  r->nfindings);
		famfs_check_report_free(v);
	}
	famfs_check_report_free(r);

	if (guard < AREA)
		mprotect(area + guard, AREA - guard, PROT_READ | PROT_WRITE);
	memset(area, 0, img.dirty_end < sizeof(struct famfs_superblock) ? img.dirty_end :
	       sizeof(struct famfs_superblock));
	if (img.dirty_end > FAMFS_LOG_OFFSET)
		memset(area + FAMFS_LOG_OFFSET, 0, img.dirty_end - FAMFS_LOG_OFFSET);
	return 0;
}
