// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "createprop.h"
#include "fs.h"
#include "superblock.h"

#define AU FAMFS_ALLOC_UNIT
#define LOG_LEN FAMFS_LOG_LEN_DEFAULT
#define MAX_BATCH 8
#define NAME_BUF 128
#define RING 64

static const uint8_t master_uuid[16] = {
	0x5e, 0x1f, 0x7e, 0x57, 0x00, 0x11, 0x42, 0x22, 0x83, 0x33, 0x44, 0x44, 0x55, 0x55, 0x66, 0x66 };

struct createprop {
	char *path;
	int fd;
	struct famfs_fs *fs;
	uint8_t *pristine;          /* the superblock region and the log of an empty file system */
	uint8_t *shadow;            /* the same as they must be now */
	const uint8_t *view;        /* the medium's, mapped once: no page faults at every attach */
	bool shadow_is_medium;      /* false after a violation: the medium may differ anywhere */
	size_t meta_len;
	uint64_t serial;            /* makes fresh names */
	char files[RING][NAME_BUF]; /* some files that exist */
	char dirs[RING][NAME_BUF];  /* some directories that exist */
	size_t nfiles, ndirs;
	struct createprop_stats stats;
};

/* ---- bytes in, past the end zeros ---- */

struct reader {
	const uint8_t *p;
	size_t len, pos;
};

static uint8_t take8(struct reader *rd)
{
	return rd->pos < rd->len ? rd->p[rd->pos++] : 0;
}

static uint64_t take64(struct reader *rd)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t)take8(rd) << (8 * i);
	return v;
}

static int fail(char *why, size_t why_len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, why_len, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- the image ---- */

#define PAGE 4096

/*
 * Puts the empty file system back and attaches it afresh.  Only pages that
 * differ from the pristine ones are rewritten (through the descriptor, not
 * a mapping): a fuzz target resets for every input.
 */
static int format_and_attach(struct createprop *cp, char *why, size_t why_len)
{
	struct famfs_err err = { 0 };
	int r;

	cp->fs = famfs_fs_close(cp->fs);
	for (size_t off = 0; off < cp->meta_len; off += PAGE) {
		if (cp->shadow_is_medium && memcmp(cp->shadow + off, cp->pristine + off, PAGE) == 0)
			continue;
		if (pwrite(cp->fd, cp->pristine + off, PAGE, off) != PAGE)
			return fail(why, why_len, "%s: cannot write: %s", cp->path, strerror(errno));
		memcpy(cp->shadow + off, cp->pristine + off, PAGE);
	}
	cp->shadow_is_medium = true;

	r = famfs_fs_open(cp->path, FAMFS_DEVICE_WRITE, master_uuid, &cp->fs, &err);
	if (r == 0)
		r = famfs_fs_replay(cp->fs, NULL, NULL, NULL, &err);
	if (r < 0)
		return fail(why, why_len, "attach: %s", err.msg);
	cp->nfiles = cp->ndirs = 0;
	return 0;
}

int createprop_new(const char *image_path, struct createprop **ret, char *why, size_t why_len)
{
	struct createprop *cp = calloc(1, sizeof(*cp));
	struct famfs_superblock sb;
	int r;

	if (!cp)
		return -ENOMEM;
	cp->fd = -1;
	cp->meta_len = famfs_data_start(LOG_LEN);
	cp->path = strdup(image_path);
	cp->pristine = calloc(1, cp->meta_len);
	cp->shadow = malloc(cp->meta_len);
	if (!cp->path || !cp->pristine || !cp->shadow) {
		createprop_free(cp);
		return -ENOMEM;
	}
	famfs_log_format(cp->pristine + FAMFS_LOG_OFFSET, LOG_LEN);
	famfs_superblock_init(&sb, &(struct famfs_superblock_params){
		.dev_size = CREATEPROP_DEV_SIZE, .log_len = LOG_LEN, .system_uuid = master_uuid,
		.dev_name = "createprop" });
	memcpy(cp->pristine, &sb, sizeof(sb));

	cp->fd = open(image_path, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0600);
	if (cp->fd < 0 || ftruncate(cp->fd, CREATEPROP_DEV_SIZE) < 0) {
		r = -errno;
		fail(why, why_len, "%s: %s", image_path, strerror(errno));
		createprop_free(cp);
		return r;
	}
	cp->view = mmap(NULL, cp->meta_len, PROT_READ, MAP_SHARED, cp->fd, 0);
	if (cp->view == MAP_FAILED) {
		cp->view = NULL;
		r = -errno;
		fail(why, why_len, "%s: cannot map: %s", image_path, strerror(errno));
		createprop_free(cp);
		return r;
	}
	if (format_and_attach(cp, why, why_len) < 0) {
		createprop_free(cp);
		return -EIO;
	}
	*ret = cp;
	return 0;
}

void createprop_free(struct createprop *cp)
{
	if (!cp)
		return;
	famfs_fs_close(cp->fs);
	if (cp->view)
		munmap((void *)cp->view, cp->meta_len);
	if (cp->fd >= 0)
		close(cp->fd);
	free(cp->pristine);
	free(cp->shadow);
	free(cp->path);
	free(cp);
}

const struct createprop_stats *createprop_stats(const struct createprop *cp)
{
	return &cp->stats;
}

/* ---- requests ---- */

static void remember(char ring[RING][NAME_BUF], size_t *count, const char *name)
{
	snprintf(ring[*count % RING], NAME_BUF, "%s", name);
	(*count)++;
}

static const char *recall(char ring[RING][NAME_BUF], size_t count, struct reader *rd)
{
	size_t have = count < RING ? count : RING;

	return have ? ring[take8(rd) % have] : NULL;
}

/* Fresh, existing, repeated, malformed, random and parentless names. */
static void pick_name(struct createprop *cp, struct reader *rd, char names[][NAME_BUF], size_t k,
		      const char *stem, char *out)
{
	static const char *const malformed[] = {
		"", "/abs", "a//b", "..", ".", "x/./y", "x/../y", "trailing/", "../escape",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", /* 80 */
	};
	const char *dir = recall(cp->dirs, cp->ndirs, rd), *old;
	uint8_t kind = take8(rd) % 24;   /* 0-3 and 10-23: a fresh name */
	size_t len;

	switch (kind) {
	case 4:
		old = (take8(rd) & 1) ? recall(cp->files, cp->nfiles, rd) : dir;
		if (old) {
			snprintf(out, NAME_BUF, "%s", old);
			return;
		}
		break;
	case 5:
		snprintf(out, NAME_BUF, "%s", malformed[take8(rd) % (sizeof(malformed) / sizeof(malformed[0]))]);
		return;
	case 6:
		if (k > 0) {
			snprintf(out, NAME_BUF, "%s", names[take8(rd) % k]);
			return;
		}
		break;
	case 7:
		len = 1 + take8(rd) % 90;
		for (size_t i = 0; i < len; i++) {
			uint8_t b = take8(rd);

			out[i] = b ? (char)b : 'z';
		}
		out[len] = '\0';
		return;
	case 8:
		old = recall(cp->files, cp->nfiles, rd);
		if (old) {
			snprintf(out, NAME_BUF, "%s/under-a-file", old);
			return;
		}
		break;
	case 9:
		snprintf(out, NAME_BUF, "missing%" PRIu64 "/%s", cp->serial++, stem);
		return;
	}
	if (dir && (take8(rd) & 1))
		snprintf(out, NAME_BUF, "%s/%s%" PRIu64, dir, stem, cp->serial++);
	else
		snprintf(out, NAME_BUF, "%s%" PRIu64, stem, cp->serial++);
}

/* Sizes at the edges: 0, 2^64, the 2 MiB rounding, the free space, the device, the stripe. */
static uint64_t pick_size(struct createprop *cp, struct reader *rd, const struct famfs_interleave_params *ip)
{
	uint64_t small = take8(rd), free_bytes = famfs_alloc_free_bytes(famfs_fs_allocator(cp->fs));

	switch (take8(rd) % 32) {
	case 0:  return 0;
	case 1:  return UINT64_MAX - small;
	case 2:  return UINT64_MAX - AU + 1 + small - 128;   /* where rounding up to 2 MiB overflows */
	case 3:  return (UINT64_C(1) << 63) + small - 128;
	case 4:  return AU * small + take8(rd) % 3 - 1;       /* wraps to 2^64 - 1 at 0 */
	case 5:  return 1 + small * 4099;
	case 6:  return free_bytes + small % 3 - 1;
	case 7:  return free_bytes - AU * (small % 4);
	case 8:  return CREATEPROP_DEV_SIZE + small - 128;
	case 9:  /* whole stripes and one byte either side (the product may wrap: on purpose) */
		if (ip)
			return ip->chunk_size * ip->nstrips * (1 + small % 4) + take8(rd) % 3 - 1;
		return AU;
	case 10: return UINT64_C(1) << (small % 64);
	case 11: return take64(rd);
	default: return 1 + (take64(rd) % (64 * AU));         /* an ordinary file, up to 128 MiB */
	}
}

static uint64_t pick_chunk(struct reader *rd)
{
	switch (take8(rd) % 12) {
	case 0:  return 0;
	case 1:  return AU;
	case 2:  return 2 * AU;
	case 3:  return 8 * AU;
	case 4:  return 3 * AU;
	case 5:  return UINT64_C(1) << 63;
	case 6:  return UINT64_MAX;
	case 7:  return AU << (take8(rd) % 44);
	case 8:  return take64(rd);
	default: return AU << (take8(rd) % 4);
	}
}

/* ---- the property ---- */

struct before {
	uint64_t next_index;
	uint64_t used_units;
	size_t files, dirs;
};

static struct before observe(const struct createprop *cp)
{
	return (struct before){
		.next_index = famfs_fs_log_header(cp->fs)->next_index,
		.used_units = famfs_fs_allocator(cp->fs)->used,
		.files = famfs_ns_count(famfs_fs_namespace(cp->fs), FAMFS_NS_FILE),
		.dirs = famfs_ns_count(famfs_fs_namespace(cp->fs), FAMFS_NS_DIR),
	};
}

/* First offset in [from, to) where the medium differs from the shadow, or SIZE_MAX. */
static size_t first_difference(const struct createprop *cp, size_t from, size_t to)
{
	const uint8_t *now = cp->view;

	if (from >= to || memcmp(now + from, cp->shadow + from, to - from) == 0)
		return SIZE_MAX;
	while (now[from] == cp->shadow[from])
		from++;
	return from;
}

static size_t slot_offset(uint64_t index)
{
	return FAMFS_LOG_OFFSET + sizeof(struct famfs_log_header) + index * sizeof(struct famfs_log_entry);
}

/*
 * After each request the superblock's page and the log up to well past
 * what a request could append are compared; the rest of the region (zeros
 * nobody should write) once at the end of each run.  Every byte is still
 * compared for every run, and a request costs a few pages, not 10 MiB.
 */
#define SLOTS_PAST 64

static size_t near_end(const struct createprop *cp, uint64_t next_index)
{
	size_t end = slot_offset(next_index + SLOTS_PAST);

	return end < cp->meta_len ? end : cp->meta_len;
}

static size_t first_difference_near(const struct createprop *cp, uint64_t next_index)
{
	size_t at = first_difference(cp, 0, PAGE);

	return at != SIZE_MAX ? at : first_difference(cp, FAMFS_LOG_OFFSET, near_end(cp, next_index));
}

static int check_success(struct createprop *cp, const struct before *b, uint64_t new_entries,
			 uint64_t new_files, char *why, size_t why_len)
{
	struct famfs_check_report *rep = NULL;
	struct before a = observe(cp);
	size_t header = FAMFS_LOG_OFFSET, header_end = header + sizeof(struct famfs_log_header);
	size_t slots = slot_offset(b->next_index), slots_end = slot_offset(a.next_index);
	size_t at;
	int r;

	if (a.next_index != b->next_index + new_entries)
		return fail(why, why_len, "success, but the log grew by %" PRIu64 " entries instead of %" PRIu64,
			    a.next_index - b->next_index, new_entries);
	if (a.files != b->files + new_files)
		return fail(why, why_len, "success, but %zu files exist instead of %zu", a.files,
			    (size_t)(b->files + new_files));
	/* Only the header and the new slots may change. */
	at = first_difference(cp, 0, PAGE);
	if (at == SIZE_MAX)
		at = first_difference(cp, header_end, slots);
	if (at == SIZE_MAX)
		at = first_difference(cp, slots_end, near_end(cp, a.next_index));
	if (at != SIZE_MAX)
		return fail(why, why_len, "success, but byte 0x%zx outside the header and the new entries changed", at);
	memcpy(cp->shadow + header, cp->view + header, header_end - header);
	memcpy(cp->shadow + slots, cp->view + slots, slots_end - slots);

	r = famfs_check_medium(famfs_fs_device(cp->fs)->base, famfs_fs_device(cp->fs)->size, 0, &rep);
	if (r < 0)
		return fail(why, why_len, "famfs_check_medium: %s", strerror(-r));
	if (famfs_check_report_errors(rep) != 0) {
		const char *msg = "(suppressed)";

		for (size_t k = 0; k < rep->nfindings; k++)
			if (rep->findings[k].severity >= FAMFS_SEV_ERROR) {
				msg = rep->findings[k].message;
				break;
			}
		fail(why, why_len, "success, but the medium does not check clean: %s", msg);
		famfs_check_report_free(rep);
		return -1;
	}
	if (rep->summary.files != a.files || rep->summary.directories != a.dirs) {
		fail(why, why_len, "success, but fsck reads %" PRIu64 " files and %" PRIu64
		     " directories where the writer has %zu and %zu", rep->summary.files,
		     rep->summary.directories, a.files, a.dirs);
		famfs_check_report_free(rep);
		return -1;
	}
	famfs_check_report_free(rep);
	return 0;
}

/* Errors that are about one element of a batch, and so must name it. */
static bool names_an_element(int r)
{
	switch (-r) {
	case EINVAL: case ENAMETOOLONG: case EEXIST: case ENOENT: case ENOTDIR:
	case ENOSPC: case EFBIG: case ERANGE:
		return true;
	default:
		return false;
	}
}

static int check_failure(struct createprop *cp, const struct before *b, int r, const struct famfs_err *err,
			 size_t batch, char *why, size_t why_len)
{
	struct before a = observe(cp);
	size_t at;

	if (err->msg[0] == '\0')
		return fail(why, why_len, "error %d without a message", r);
	at = first_difference_near(cp, b->next_index);
	if (at != SIZE_MAX)
		return fail(why, why_len, "failed (%s), but byte 0x%zx of the superblock region or log changed",
			    err->msg, at);
	if (a.next_index != b->next_index || a.used_units != b->used_units || a.files != b->files ||
	    a.dirs != b->dirs)
		return fail(why, why_len, "failed (%s), but the writer's state changed (log %" PRIu64 "->%" PRIu64
			    ", units %" PRIu64 "->%" PRIu64 ", files %zu->%zu)", err->msg, b->next_index,
			    a.next_index, b->used_units, a.used_units, b->files, a.files);
	if (batch > 1 && names_an_element(r) && strncmp(err->msg, "element ", 8) != 0)
		return fail(why, why_len, "a batch of %zu failed without naming the element: %s", batch, err->msg);
	return 0;
}

static void count(struct createprop *cp, int r, size_t batch)
{
	cp->stats.requests++;
	if (r == 0) {
		cp->stats.succeeded++;
		return;
	}
	cp->stats.failed++;
	if (batch > 1)
		cp->stats.batch_failures++;
	if (-r > 0 && -r < (int)(sizeof(cp->stats.by_errno) / sizeof(cp->stats.by_errno[0])))
		cp->stats.by_errno[-r]++;
}

static int create_request(struct createprop *cp, struct reader *rd, char *why, size_t why_len)
{
	struct famfs_interleave_params ip[MAX_BATCH];
	struct famfs_file_spec specs[MAX_BATCH];
	char names[MAX_BATCH][NAME_BUF];
	struct famfs_err err = { 0 };
	struct before b = observe(cp);
	size_t n = 1 + (take8(rd) % 4 ? take8(rd) % 3 : take8(rd) % MAX_BATCH);
	int r;

	for (size_t k = 0; k < n; k++) {
		specs[k] = (struct famfs_file_spec){ .relpath = names[k] };
		pick_name(cp, rd, names, k, "f", names[k]);
		if (take8(rd) % 3 == 0) {
			ip[k] = (struct famfs_interleave_params){
				.nstrips = 1 + take8(rd) % 17, .nbuckets = 1 + take8(rd) % 18,
				.chunk_size = pick_chunk(rd) };
			specs[k].interleave = &ip[k];
		}
		specs[k].size = pick_size(cp, rd, specs[k].interleave);
		specs[k].mode = (take8(rd) | (uint32_t)take8(rd) << 8) & 07777;
		specs[k].uid = take8(rd);
		specs[k].gid = take8(rd);
	}
	r = famfs_fs_create_files(cp->fs, specs, n, NULL, NULL, &err);
	count(cp, r, n);
	if (r < 0)
		return check_failure(cp, &b, r, &err, n, why, why_len);
	cp->stats.files_created += n;
	for (size_t k = 0; k < n; k++)
		remember(cp->files, &cp->nfiles, names[k]);
	return check_success(cp, &b, n, n, why, why_len);
}

static int mkdir_request(struct createprop *cp, struct reader *rd, char *why, size_t why_len)
{
	struct famfs_err err = { 0 };
	struct before b = observe(cp);
	char name[NAME_BUF];
	bool parents = take8(rd) & 1;
	int r;

	pick_name(cp, rd, NULL, 0, "d", name);
	r = famfs_fs_mkdir(cp->fs, name, take8(rd) & 07777, take8(rd), take8(rd), parents, NULL, &err);
	count(cp, r, 1);
	if (r < 0)
		return check_failure(cp, &b, r, &err, 1, why, why_len);
	if (observe(cp).dirs > b.dirs)
		remember(cp->dirs, &cp->ndirs, name);
	return check_success(cp, &b, observe(cp).dirs - b.dirs, 0, why, why_len);
}

int createprop_run(struct createprop *cp, const uint8_t *data, size_t len, char *why, size_t why_len)
{
	struct reader rd = { data, len, 0 };
	size_t at;
	int r;

	if (format_and_attach(cp, why, why_len) < 0)
		return -1;
	while (rd.pos < rd.len) {
		if (take8(&rd) % 5 == 0)
			r = mkdir_request(cp, &rd, why, why_len);
		else
			r = create_request(cp, &rd, why, why_len);
		if (r < 0) {
			cp->shadow_is_medium = false;
			return -1;
		}
	}
	at = first_difference(cp, 0, cp->meta_len);
	if (at != SIZE_MAX) {
		cp->shadow_is_medium = false;
		return fail(why, why_len, "after this run's requests byte 0x%zx of the superblock region or log "
			    "differs from what they left", at);
	}
	return 0;
}
