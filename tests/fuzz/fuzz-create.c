// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The create property of issue 11 §2: after any create request, either the
 * call succeeded and the medium checks clean, or it failed and the
 * superblock region and the log are byte for byte what they were.
 *
 * The harness makes a fresh file system on a sparse memory file (size and
 * log length from the input), lets the master make a few files and
 * directories, then sends one request decoded from the input: a batch of
 * files (paths, sizes, modes, owners, interleave parameters) or a mkdir.
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

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)
#define MAX_BATCH 16
#define PRE_OPS_MAX 6

static const uint64_t dev_sizes[] = {
	64 * MiB, 256 * MiB, 1 * GiB, 2 * GiB, 4 * GiB, 8 * GiB, 64 * GiB,
	3 * GiB + 2 * MiB + 4096,   /* not a whole number of units */
};
static const uint8_t host_uuid[16] = { 0xf7, 0xc8, 0x3d, 0x91, 0x9f, 0x90, 0x4a, 0x8e,
				       0xae, 0x2d, 0xac, 0x7a, 0x35, 0xd8, 0xcb, 0xcd };

static int fd = -1;
static char dev_path[64];
static uint8_t zeros[1 << 16];

/* Paths from a small alphabet, so that names collide, nest and break rules often. */
static void take_path(struct fuzz_input *in, char *buf, size_t size)
{
	static const char alphabet[] = "ab/c.d/\xff";
	uint8_t len = fuzz_u8(in);
	size_t n = len & 0x7f;

	if (n > size - 1)
		n = size - 1;
	for (size_t k = 0; k < n; k++) {
		uint8_t b = fuzz_u8(in);

		buf[k] = (len & 0x80) ? (char)(b ? b : 'x') : alphabet[b % (sizeof(alphabet) - 1)];
	}
	buf[n] = '\0';
}

/* Sizes that reach the interesting arithmetic: tiny, unit multiples, near 2^64. */
static uint64_t take_size(struct fuzz_input *in)
{
	uint8_t kind = fuzz_u8(in);
	uint64_t v = fuzz_u64(in);

	switch (kind % 5) {
	case 0:
		return v;
	case 1:
		return v % (4 * MiB);
	case 2:
		return UINT64_MAX - v % (64 * MiB);
	case 3:
		return (v % 4096) * 2 * MiB + (int8_t)kind;
	default:
		return (UINT64_C(1) << (v % 64)) + (int8_t)kind;
	}
}

static void take_interleave(struct fuzz_input *in, struct famfs_interleave_params *ip)
{
	uint8_t kind = fuzz_u8(in);

	ip->nbuckets = fuzz_u32(in);
	ip->nstrips = fuzz_u32(in);
	ip->chunk_size = fuzz_u64(in);
	if (kind & 1) {   /* mostly valid parameters */
		ip->nbuckets = ip->nbuckets % 65;
		ip->nstrips = ip->nstrips % 17;
		ip->chunk_size = (2 * MiB) << (ip->chunk_size % 8);
	}
}

/*
 * One memory file for the whole run, so that the superblock region and the
 * log stay resident: each input starts from a fresh file system made by
 * zeroing what the last one wrote (the rest is checked to be zero anyway).
 */
#define META_MAX (FAMFS_LOG_OFFSET + 16 * MiB)
static uint8_t *meta;          /* [0, META_MAX) of the memory file */
static uint64_t dirty_log;     /* log bytes the last input may have written */

static void new_medium(uint64_t dev_size, uint64_t log_len)
{
	struct famfs_superblock_params p = { .dev_size = dev_size, .log_len = log_len,
					     .system_uuid = host_uuid, .dev_name = "/dev/dax0.0" };
	struct famfs_superblock *sb;
	struct famfs_log_header *h;

	if (fd < 0) {
		fd = fuzz_memfd("fuzz-create", dev_path, sizeof(dev_path));
		if (ftruncate(fd, META_MAX) < 0)
			fuzz_fail("ftruncate: %m");
		meta = mmap(NULL, META_MAX, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (meta == MAP_FAILED)
			fuzz_fail("mmap: %m");
	}
	if (ftruncate(fd, dev_size) < 0)   /* every size is past META_MAX */
		fuzz_fail("ftruncate: %m");
	memset(meta, 0, sizeof(*sb));
	memset(meta + FAMFS_LOG_OFFSET, 0, dirty_log);
	dirty_log = 16 * MiB;   /* until this input's end is known */

	sb = (struct famfs_superblock *)meta;
	famfs_superblock_init(sb, &p);
	memset(sb->uuid, 0x11, 16);     /* repeatable runs */
	memset(sb->dev_uuid, 0x22, 16);
	sb->crc = famfs_superblock_crc(sb);
	/* famfs_log_format without zeroing what is zero already */
	h = (struct famfs_log_header *)(meta + FAMFS_LOG_OFFSET);
	h->magic = FAMFS_LOG_MAGIC;
	h->len = log_len;
	h->last_index = famfs_log_slots(log_len) - 1;
	h->crc = famfs_log_header_crc(h);
}

static bool all_zero(const uint8_t *p, uint64_t len)
{
	while (len > 0) {
		uint64_t k = len < sizeof(zeros) ? len : sizeof(zeros);

		if (memcmp(p, zeros, k) != 0)
			return false;
		p += k;
		len -= k;
	}
	return true;
}

static void require_clean(struct famfs_fs *fs, const char *what)
{
	struct famfs_check_report *r;

	if (famfs_check_medium(famfs_fs_device(fs)->base, famfs_fs_device(fs)->size, 0, &r) < 0)
		fuzz_fail("out of memory checking");
	if (famfs_check_report_errors(r) != 0) {
		for (size_t k = 0; k < r->nfindings; k++)
			fprintf(stderr, "  finding: %s\n", r->findings[k].message);
		fuzz_fail("%s succeeded, but the medium does not check clean", what);
	}
	famfs_check_report_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	struct famfs_interleave_params ips[MAX_BATCH];
	struct famfs_file_spec specs[MAX_BATCH];
	char paths[MAX_BATCH][FAMFS_MAX_PATHLEN + 8];
	struct famfs_fmap maps[MAX_BATCH];
	uint32_t nodes[MAX_BATCH];
	struct famfs_fs *fs = NULL;
	struct famfs_err err = { 0 };
	uint8_t *base, *before_log;
	struct famfs_log_header *h;
	uint8_t before_sb[4096];
	uint64_t dev_size, log_len, used, old_next;
	uint8_t sel, kind, n;
	int r;

	sel = fuzz_u8(&in);
	dev_size = dev_sizes[sel % (sizeof(dev_sizes) / sizeof(dev_sizes[0]))];
	log_len = (sel & 0x80) ? 16 * MiB : 8 * MiB;
	if (famfs_data_start(log_len) > dev_size)
		log_len = 8 * MiB;
	new_medium(dev_size, log_len);
	base = meta;
	h = (struct famfs_log_header *)(base + FAMFS_LOG_OFFSET);
	r = famfs_fs_open(dev_path, FAMFS_DEVICE_WRITE, host_uuid, &fs, &err);
	if (r < 0)
		fuzz_fail("cannot attach a fresh file system: %s", err.msg);
	famfs_fs_seed_allocator(fs, fuzz_u8(&in));
	if (famfs_fs_replay(fs, NULL, NULL, NULL, &err) < 0)
		fuzz_fail("cannot replay a fresh file system: %s", err.msg);

	/* A few files and directories made the ordinary way first. */
	for (unsigned k = fuzz_u8(&in) % (PRE_OPS_MAX + 1); k > 0; k--) {
		char p[FAMFS_MAX_PATHLEN + 8];
		struct famfs_file_spec s = { .relpath = p, .mode = 0644 };

		take_path(&in, p, sizeof(p));
		s.size = fuzz_u16(&in) * UINT64_C(4096) + 1;
		if (fuzz_u8(&in) & 1)
			r = famfs_fs_mkdir(fs, p, 0755, 0, 0, true, NULL, &err);
		else
			r = famfs_fs_create_files(fs, &s, 1, NULL, NULL, &err);
		if (r == 0)
			require_clean(fs, "a setup create");
	}

	/* The request. */
	kind = fuzz_u8(&in);
	n = kind & 0x80 ? 1 + fuzz_u8(&in) % MAX_BATCH : 1;
	for (unsigned k = 0; k < n; k++) {
		take_path(&in, paths[k], sizeof(paths[k]));
		specs[k] = (struct famfs_file_spec){
			.relpath = paths[k],
			.size = take_size(&in),
			.mode = fuzz_u32(&in),
			.uid = fuzz_u32(&in),
			.gid = fuzz_u32(&in),
		};
		if (fuzz_u8(&in) & 1) {
			take_interleave(&in, &ips[k]);
			specs[k].interleave = &ips[k];
		}
	}

	/* What must not change if the request fails. */
	memcpy(before_sb, base, sizeof(before_sb));
	old_next = famfs_fs_log_header(fs)->next_index;
	used = sizeof(*h) + old_next * sizeof(struct famfs_log_entry);
	before_log = malloc(used);
	if (!before_log)
		fuzz_fail("out of memory");
	memcpy(before_log, base + FAMFS_LOG_OFFSET, used);

	switch ((kind & 0x7f) % 3) {
	case 0:
		r = famfs_fs_create_files(fs, specs, n, maps, nodes, &err);
		break;
	default:
		n = 0;
		r = famfs_fs_mkdir(fs, paths[0], specs[0].mode, specs[0].uid, specs[0].gid, (kind & 0x7f) % 3 == 2,
				   NULL, &err);
		break;
	}

	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "%s of %u on a %" PRIu64 " MiB device (%" PRIu64 " entries before): %d %s\n",
			n ? "create_files" : "mkdir", n, dev_size >> 20, old_next, r, err.msg);
	if (r == 0) {
		require_clean(fs, n ? "create_files" : "mkdir");
		if (n && h->next_index != old_next + n)
			fuzz_fail("create_files of %u succeeded, the log grew by %" PRIu64, n,
				  h->next_index - old_next);
		used = sizeof(*h) + h->next_index * sizeof(struct famfs_log_entry);
		if (used > log_len || !all_zero(base + FAMFS_LOG_OFFSET + used, log_len - used))
			fuzz_fail("request succeeded and wrote past the end of the log it advanced");
	} else {
		if (err.msg[0] == '\0')
			fuzz_fail("request failed (%d) without a message", r);
		if (memcmp(before_sb, base, sizeof(before_sb)) != 0 ||
		    !all_zero(base + sizeof(before_sb), FAMFS_LOG_OFFSET - sizeof(before_sb)))
			fuzz_fail("request failed (%s) and the superblock region changed", err.msg);
		if (memcmp(before_log, base + FAMFS_LOG_OFFSET, used) != 0 ||
		    !all_zero(base + FAMFS_LOG_OFFSET + used, log_len - used))
			fuzz_fail("request failed (%s) and the log changed", err.msg);
	}
	dirty_log = h->next_index < famfs_log_slots(log_len) ?
		sizeof(*h) + h->next_index * sizeof(struct famfs_log_entry) : log_len;
	free(before_log);
	famfs_fs_close(fs);
	return 0;
}
