// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A superblock and log through the attach path of the daemon as far as it
 * is library code: famfs_fs_open on a memory file, then incremental
 * famfs_fs_replay in several steps, with the medium changed between steps
 * the way another host would change it (the log grows, entries or the
 * superblock are rewritten, the log goes backwards, the image shrinks), and
 * on the master this host's own creates mixed in.
 *
 * Input: [u8 steps][steps x 16-byte step][compact image] (README.md).
 * Head mode bit 0: attach as the master (host UUID = the superblock's).
 *
 * Properties: no crash or leak; a replay that fails says why; every node
 * handed to the callback re-reads cleanly (famfs_fs_read_entry) while
 * nothing has changed; the cursor never passes the log; and a log the
 * checker finds free of errors replays whole at the first step, nothing
 * rejected and nothing stalled.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "fs.h"
#include "fuzz-common.h"
#include "log.h"
#include "superblock.h"

#define MEDIUM_MAX (UINT64_C(64) << 30)
#define MAX_STEPS 8

struct step {
	uint8_t op;
	uint8_t flags;
	uint16_t a;
	uint32_t b;
	uint64_t value;
};
_Static_assert(sizeof(struct step) == 16, "step size");

enum {
	OP_SET_NEXT_INDEX,    /* next_index = value, and next_seqnum unless flags bit 1 */
	OP_GROW,              /* next_index += value % 64, next_seqnum too unless flags bit 1 */
	OP_SET_NEXT_SEQNUM,
	OP_POKE_LOG,          /* 8 bytes at log offset b; flags bit 0: fix that entry */
	OP_POKE_SB,           /* 8 bytes at superblock offset b % 200; flags bit 0: fix the CRC */
	OP_COPY_ENTRY,        /* slot a % 64 to slot b % 64, restamped when flags bit 0 */
	OP_REWIND,            /* an empty log header: next_index = next_seqnum = 0 */
	OP_SHRINK,            /* the image file is cut to value % its size */
	OP_OWN_MKDIR,         /* the master creates a directory */
	OP_OWN_CREATE,        /* the master creates a file of value % 64 MiB + 1 bytes */
	_OP_MAX
};

static int fd = -1;
static char path[64];

struct replay_ctx {
	struct famfs_fs *fs;
};

static void on_apply(struct famfs_fs *fs, uint64_t index, const struct famfs_log_entry *entry,
		     uint32_t node, void *userdata)
{
	struct famfs_log_entry copy;
	struct famfs_err err = { 0 };

	(void)userdata;
	if (famfs_fs_read_entry(fs, node, &copy, &err) < 0)
		fuzz_fail("entry %" PRIu64 " applied but does not re-read: %s", index, err.msg);
	if (memcmp(&copy, entry, sizeof(copy)) != 0)
		fuzz_fail("entry %" PRIu64 " re-reads differently", index);
}

static bool log_header_valid(const struct famfs_fs *fs)
{
	struct famfs_log_header h;

	memcpy(&h, famfs_fs_log_header(fs), sizeof(h));
	return famfs_log_header_validate(&h, famfs_fs_layout(fs)->log_len, NULL) == FAMFS_OK;
}

static void replay_once(struct famfs_fs *fs, struct famfs_replay_result *res, int *rc)
{
	struct famfs_err err = { 0 };

	*rc = famfs_fs_replay(fs, on_apply, NULL, res, &err);
	if (*rc < 0 && err.msg[0] == '\0')
		fuzz_fail("replay failed (%d) without a message", *rc);
	if (*rc < 0 && *rc != -EIO && *rc != -FAMFS_EMEDIUMCHANGED)
		fuzz_fail("replay failed with %d, not -EIO or -FAMFS_EMEDIUMCHANGED", *rc);
	if (famfs_fs_applied(fs) > famfs_log_slots(famfs_fs_layout(fs)->log_len))
		fuzz_fail("cursor %" PRIu64 " past the log", famfs_fs_applied(fs));
	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "replay: %d %s; %" PRIu64 " applied, %" PRIu64 " rejected%s%s, cursor %" PRIu64 "\n",
			*rc, err.msg, res->applied, res->rejected, res->stalled ? ", stalled: " : "",
			res->stalled ? res->stall_msg : "", famfs_fs_applied(fs));
	if (res->stalled && res->stall_msg[0] == '\0')
		fuzz_fail("replay stalled at %" PRIu64 " without a message", res->stalled_index);
}

static void fix_slot(uint8_t *base, uint64_t mapped, uint64_t slot, uint8_t fix)
{
	uint64_t off = FAMFS_LOG_OFFSET + sizeof(struct famfs_log_header) + slot * sizeof(struct famfs_log_entry);

	if (off + sizeof(struct famfs_log_entry) <= mapped)
		fuzz_fix_entry((struct famfs_log_entry *)(base + off), slot, fix);
}

/* Applies one change of another host; false when the medium can no longer be touched. */
static bool apply_step(const struct step *s, struct famfs_fs *fs, uint8_t *base, uint64_t mapped,
		       uint64_t medium)
{
	struct famfs_log_header *h = (void *)(base + FAMFS_LOG_OFFSET);
	struct famfs_superblock *sb = (void *)base;
	struct famfs_err err = { 0 };
	const uint8_t fix = FUZZ_FIX_ENTRY_CRC | FUZZ_FIX_ENTRY_SEQ;
	char name[32];

	if (mapped < FAMFS_LOG_OFFSET + sizeof(*h))
		return false;
	switch (s->op % _OP_MAX) {
	case OP_SET_NEXT_INDEX:
		h->next_index = s->value;
		if (!(s->flags & 2))
			h->next_seqnum = s->value;
		break;
	case OP_GROW:
		h->next_index += s->value % 64;
		if (!(s->flags & 2))
			h->next_seqnum += s->value % 64;
		break;
	case OP_SET_NEXT_SEQNUM:
		h->next_seqnum = s->value;
		break;
	case OP_POKE_LOG: {
		uint64_t off = FAMFS_LOG_OFFSET + s->b;

		if (off + 8 <= mapped) {
			memcpy(base + off, &s->value, 8);
			if ((s->flags & 1) && s->b >= sizeof(*h))
				fix_slot(base, mapped, (s->b - sizeof(*h)) / sizeof(struct famfs_log_entry), fix);
		}
		break;
	}
	case OP_POKE_SB:
		memcpy(base + s->b % (sizeof(*sb) - 7), &s->value, 8);
		if (s->flags & 1)
			sb->crc = famfs_superblock_crc(sb);
		break;
	case OP_COPY_ENTRY: {
		struct famfs_log_entry *slots = famfs_log_entries(h);
		uint64_t from = s->a % 64, to = s->b % 64;
		uint64_t end = (mapped - FAMFS_LOG_OFFSET - sizeof(*h)) / sizeof(*slots);

		if (from < end && to < end) {
			slots[to] = slots[from];
			if (s->flags & 1)
				fix_slot(base, mapped, to, fix);
		}
		break;
	}
	case OP_REWIND:
		h->next_index = 0;
		h->next_seqnum = 0;
		break;
	case OP_SHRINK:
		if (ftruncate(fd, medium ? s->value % medium : 0) < 0)
			fuzz_fail("ftruncate: %m");
		return false;
	case OP_OWN_MKDIR:
		snprintf(name, sizeof(name), "d%u", (unsigned)(s->value % 8));
		(void)famfs_fs_mkdir(fs, name, 0755, 0, 0, s->flags & 1, NULL, &err);
		break;
	case OP_OWN_CREATE: {
		struct famfs_file_spec spec = { .relpath = name, .size = s->value % (64u << 20) + 1, .mode = 0644 };

		snprintf(name, sizeof(name), "%sf%u", (s->flags & 1) ? "d1/" : "", (unsigned)(s->a % 8));
		(void)famfs_fs_create_files(fs, &spec, 1, NULL, NULL, &err);
		break;
	}
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	struct step steps[MAX_STEPS];
	struct famfs_fs *fs = NULL;
	struct famfs_err err = { 0 };
	struct famfs_check_report *report = NULL;
	struct famfs_replay_result res;
	struct famfs_fs_stats stats;
	struct fuzz_image img;
	struct famfs_superblock sb;
	uint64_t medium, mapped;
	uint8_t *base = MAP_FAILED;
	unsigned nsteps;
	bool touchable = true;
	int rc;

	nsteps = fuzz_u8(&in) % (MAX_STEPS + 1);
	for (unsigned k = 0; k < nsteps; k++)
		fuzz_take(&in, &steps[k], sizeof(steps[k]));
	/* The medium's size comes first in the image: peek at it and the log length. */
	{
		struct fuzz_input peek = in;
		struct fuzz_image_head head;

		fuzz_take(&peek, &head, sizeof(head));
		fuzz_take(&peek, &sb, sizeof(sb));
		medium = head.medium_size;
	}
	if (medium > MEDIUM_MAX || sb.log_len > FUZZ_LOG_MAX)
		return 0;   /* costs time and memory, finds nothing new */
	if (fd < 0)
		fd = fuzz_memfd("fuzz-replay", path, sizeof(path));
	if (ftruncate(fd, 0) < 0 || ftruncate(fd, medium) < 0)
		fuzz_fail("ftruncate: %m");
	mapped = FAMFS_LOG_OFFSET + FUZZ_LOG_MAX;
	if (mapped > medium)
		mapped = medium;
	if (mapped > 0) {
		base = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (base == MAP_FAILED)
			fuzz_fail("mmap: %m");
		fuzz_image_write(&in, base, mapped, &img);
	}

	/* What the checker thinks of the medium before anything happens. */
	if (mapped == medium || mapped >= FAMFS_LOG_OFFSET + sizeof(struct famfs_log_header)) {
		if (famfs_check_view(base == MAP_FAILED ? (const uint8_t *)"" : base, mapped, medium, 0, &report) < 0)
			report = NULL;
	}

	rc = famfs_fs_open(path, FAMFS_DEVICE_WRITE, (img.head.mode & 1) && mapped >= sizeof(sb) ?
			   ((struct famfs_superblock *)base)->system_uuid : NULL, &fs, &err);
	if (rc < 0) {
		if (getenv("FUZZ_VERBOSE"))
			fprintf(stderr, "attach: %d %s\n", rc, err.msg);
		if (err.msg[0] == '\0')
			fuzz_fail("famfs_fs_open failed (%d) without a message", rc);
		if (report && report->summary.superblock_valid && report->summary.log_valid &&
		    !report->per_code[FAMFS_F_SB_DEV_SIZE] && !report->per_code[FAMFS_F_LOG_NEXT_INDEX] &&
		    !report->per_code[FAMFS_F_LOG_NEXT_SEQNUM])
			fuzz_fail("the checker reads the superblock and log header, attach refuses them: %s",
				  err.msg);
		goto out;
	}

	famfs_fs_set_observer(fs, on_apply, NULL);   /* the master's catch-up before it appends */
	replay_once(fs, &res, &rc);
	famfs_fs_get_stats(fs, &stats);
	if (report && famfs_check_report_errors(report) == 0 &&
	    (rc < 0 || res.stalled || res.rejected || res.applied != report->summary.files + report->summary.directories))
		fuzz_fail("the checker finds no error, but replay: rc %d, %s%" PRIu64 " applied of %" PRIu64
			  ", %" PRIu64 " rejected (%s)", rc, res.stalled ? "stalled, " : "", res.applied,
			  report->summary.files + report->summary.directories, res.rejected,
			  res.stalled ? res.stall_msg : stats.last_rejected);

	for (unsigned k = 0; k < nsteps && touchable; k++) {
		bool was_changed = rc == -FAMFS_EMEDIUMCHANGED;
		uint64_t applied_before = famfs_fs_applied(fs);

		touchable = apply_step(&steps[k], fs, base, mapped, medium);
		replay_once(fs, &res, &rc);
		/*
		 * issue 11 §1: a medium change is for good (a shrunk image is refused
		 * earlier, as unreadable), and a log that went backwards is one.
		 */
		if (touchable && was_changed && rc != -FAMFS_EMEDIUMCHANGED)
			fuzz_fail("replay forgot that the medium changed: rc %d", rc);
		/* (a header that did not validate before the rewind still does not: -EIO) */
		if (touchable && steps[k].op % _OP_MAX == OP_REWIND && applied_before > 0 &&
		    log_header_valid(fs) && rc != -FAMFS_EMEDIUMCHANGED)
			fuzz_fail("the log went back from %" PRIu64 " entries to 0, replay said %d", applied_before, rc);
	}
out:
	famfs_check_report_free(report);
	famfs_fs_close(fs);
	if (base != MAP_FAILED)
		munmap(base, mapped);
	return 0;
}
