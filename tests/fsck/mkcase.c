// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mkcase: builds the images of the fsck corpus (tests/fsck/<case>/).
 *
 *   mkcase --list               one line per case: NAME|OPTS|DESCRIPTION
 *   mkcase CASE OUTPUT.img      writes the (sparse) image of CASE
 *   mkcase --fuzz N SEED        checks N randomly damaged media (TAP)
 *
 * Every image starts as a small famfs file system made with libfamfs (64 MiB
 * device, 8 MiB log, fixed UUIDs so the output is reproducible); the case
 * then breaks exactly one rule.  Where a case needs an entry that is intact
 * (right seqnum and CRC) but semantically wrong, the entry is written through
 * famfs_log_append, which stamps the seqnum and CRC.  Only used to
 * (re)generate the corpus, see tests/fsck/regen.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "log.h"
#include "omf.h"
#include "superblock.h"

#define MiB (UINT64_C(1) << 20)
#define DEV_SIZE (64 * MiB)
#define LOG_LEN (8 * MiB)

static const uint8_t fs_uuid[16] = {
	0x3f, 0x0c, 0x7a, 0x51, 0x9e, 0x24, 0x4b, 0x8d, 0xa1, 0x16, 0x52, 0xc0, 0xde, 0x70, 0x00, 0x01 };
static const uint8_t dev_uuid[16] = {
	0x3f, 0x0c, 0x7a, 0x51, 0x9e, 0x24, 0x4b, 0x8d, 0xa1, 0x16, 0x52, 0xc0, 0xde, 0x70, 0x00, 0x02 };
static const uint8_t sys_uuid[16] = {
	0x3f, 0x0c, 0x7a, 0x51, 0x9e, 0x24, 0x4b, 0x8d, 0xa1, 0x16, 0x52, 0xc0, 0xde, 0x70, 0x00, 0x03 };

struct img {
	uint8_t *base;
	uint64_t size;            /* bytes mapped */
	uint64_t final_size;      /* the file is cut to this at the end */
	struct famfs_superblock *sb;
	struct famfs_log_header *h;
};

static void die(const char *what)
{
	fprintf(stderr, "mkcase: %s\n", what);
	exit(1);
}

static struct famfs_log_entry *ent(struct img *m, uint64_t i)
{
	return &famfs_log_entries(m->h)[i];
}

static void sb_recrc(struct img *m)
{
	m->sb->crc = famfs_superblock_crc(m->sb);
}

static void log_recrc(struct img *m)
{
	m->h->crc = famfs_log_header_crc(m->h);
}

static void ent_recrc(struct img *m, uint64_t i)
{
	ent(m, i)->crc = famfs_log_entry_crc(ent(m, i));
}

/* A fresh file system with the fixed UUIDs. */
static void format(struct img *m, uint64_t log_len)
{
	struct famfs_superblock_params p = {
		.dev_size = DEV_SIZE,
		.log_len = log_len,
		.system_uuid = sys_uuid,
		.dev_name = "/dev/dax0.0",
	};

	m->sb = (struct famfs_superblock *)m->base;
	famfs_superblock_init(m->sb, &p);
	memcpy(m->sb->uuid, fs_uuid, 16);
	memcpy(m->sb->dev_uuid, dev_uuid, 16);
	sb_recrc(m);
	m->h = (struct famfs_log_header *)(m->base + FAMFS_LOG_OFFSET);
	famfs_log_format(m->h, log_len);
}

/* Appends @e as it is: the append stamps seqnum and CRC. */
static uint64_t append(struct img *m, struct famfs_log_entry *e)
{
	uint64_t i = m->h->next_index;
	struct famfs_err err = { 0 };

	if (famfs_log_append(m->h, e, 1, &err) < 0)
		die(err.msg);
	return i;
}

static void make_dir(struct famfs_log_entry *e, const char *path, uint32_t mode, uint32_t uid, uint32_t gid)
{
	struct famfs_err err = { 0 };

	if (famfs_entry_make_mkdir(e, path, mode, uid, gid, &err) < 0)
		die(err.msg);
}

/* A FILE entry with one simple extent [off, off+len). */
static void make_file(struct famfs_log_entry *e, const char *path, uint64_t size,
		      uint64_t off, uint64_t len)
{
	struct famfs_fmap map;
	struct famfs_err err = { 0 };

	memset(&map, 0, sizeof(map));
	map.ext_type = FAMFS_EXT_SIMPLE;
	map.nextents = 1;
	map.se[0].offset = off;
	map.se[0].len = len;
	if (famfs_entry_make_file(e, path, size, 0644, 0, 0, &map, &err) < 0)
		die(err.msg);
}

/* An interleaved FILE entry: @nstrips strips of @strip_len from @off[k]. */
static void make_ifile(struct famfs_log_entry *e, const char *path, uint64_t size, uint64_t chunk,
		       unsigned nstrips, const uint64_t *off, uint64_t strip_len)
{
	struct famfs_fmap map;
	struct famfs_err err = { 0 };

	memset(&map, 0, sizeof(map));
	map.ext_type = FAMFS_EXT_INTERLEAVED;
	map.nextents = 1;
	map.ie[0].nstrips = nstrips;
	map.ie[0].chunk_size = chunk;
	for (unsigned k = 0; k < nstrips && k < FAMFS_MAX_STRIPS; k++) {
		map.ie[0].strips[k].offset = off[k];
		map.ie[0].strips[k].len = strip_len;
	}
	if (famfs_entry_make_file(e, path, size, 0644, 0, 0, &map, &err) < 0)
		die(err.msg);
}

static uint64_t add_dir(struct img *m, const char *path)
{
	struct famfs_log_entry e;

	make_dir(&e, path, 0755, 0, 0);
	return append(m, &e);
}

static uint64_t add_file(struct img *m, const char *path, uint64_t size, uint64_t off, uint64_t len)
{
	struct famfs_log_entry e;

	make_file(&e, path, size, off, len);
	return append(m, &e);
}

/*
 * The base tree every damaged case starts from (data starts at 10 MiB):
 *   0 mkdir a    1 mkdir a/b (0700 1000:1000)
 *   2 f1      1 MiB at 10 MiB (1 unit)
 *   3 a/f2    3 MiB at 12 MiB (2 units)
 *   4 a/b/f3  100 B at 16 MiB (1 unit)
 * Space from 18 MiB on is free.
 */
static void base_tree(struct img *m)
{
	struct famfs_log_entry e;

	format(m, LOG_LEN);
	add_dir(m, "a");
	make_dir(&e, "a/b", 0700, 1000, 1000);
	append(m, &e);
	add_file(m, "f1", 1 * MiB, 10 * MiB, 2 * MiB);
	add_file(m, "a/f2", 3 * MiB, 12 * MiB, 4 * MiB);
	add_file(m, "a/b/f3", 100, 16 * MiB, 2 * MiB);
}

/* The good FILE entry "bad" (1 MiB at 20 MiB) that cases then break. */
static void tmpl(struct famfs_log_entry *e)
{
	make_file(e, "bad", 1 * MiB, 20 * MiB, 2 * MiB);
}

static void tmpl_ifile(struct famfs_log_entry *e)
{
	static const uint64_t off[2] = { 20 * MiB, 24 * MiB };

	make_ifile(e, "bad", 6 * MiB, 2 * MiB, 2, off, 4 * MiB);
}

static void set_path(struct famfs_log_entry *e, const char *path)
{
	memset(e->file.relpath, 0, sizeof(e->file.relpath));
	memcpy(e->file.relpath, path, strnlen(path, sizeof(e->file.relpath)));
}

/* ---- clean file systems ---- */

static void c_clean_empty(struct img *m)
{
	format(m, LOG_LEN);
}

static void c_clean_populated(struct img *m)
{
	static const uint64_t strips[3] = { 20 * MiB, 24 * MiB, 28 * MiB };
	char longname[FAMFS_MAX_PATHLEN];
	struct famfs_log_entry e;

	base_tree(m);
	/* 3 strips of 2 chunks: 12 MiB of space for a 10 MiB + 5 file */
	make_ifile(&e, "a/striped", 10 * MiB + 5, 2 * MiB, 3, strips, 4 * MiB);
	append(m, &e);
	/* three simple extents */
	make_file(&e, "a/b/three", 9 * MiB, 34 * MiB, 4 * MiB);
	e.file.nextents = 3;
	e.file.se[1].offset = 40 * MiB;
	e.file.se[1].len = 2 * MiB;
	e.file.se[2].offset = 44 * MiB;
	e.file.se[2].len = 4 * MiB;
	append(m, &e);
	add_dir(m, "private");
	add_file(m, "private/empty", 0, 50 * MiB, 2 * MiB);
	/* a 79-byte path, the longest allowed */
	memset(longname, 'x', sizeof(longname) - 1);
	memcpy(longname, "private/long-name-", 18);
	longname[FAMFS_MAX_PATHLEN - 1] = '\0';
	add_file(m, longname, 4096, 52 * MiB, 2 * MiB);
	/* the last unit of the device */
	add_file(m, "last", 2 * MiB, 62 * MiB, 2 * MiB);
}

static void c_clean_full_log(struct img *m)
{
	uint64_t slots;

	format(m, LOG_LEN);
	slots = famfs_log_slots(LOG_LEN);
	for (uint64_t i = 0; i < slots; i++) {
		struct famfs_log_entry e;
		char name[16];

		snprintf(name, sizeof(name), "d%05llu", (unsigned long long)i);
		make_dir(&e, name, 0755, 0, 0);
		append(m, &e);
	}
}

static void c_clean_version_47(struct img *m)
{
	base_tree(m);
	m->sb->version = 47;
	sb_recrc(m);
}

static void c_clean_alloc_unit_4k(struct img *m)
{
	base_tree(m);
	m->sb->alloc_unit = 4096;
	sb_recrc(m);
}

static void c_clean_log_16m(struct img *m)
{
	format(m, 16 * MiB);
	add_dir(m, "a");
	add_file(m, "a/f", 5 * MiB, 18 * MiB, 6 * MiB);
}

/* ---- superblock ---- */

static void c_sb_magic(struct img *m)
{
	base_tree(m);
	m->sb->magic ^= 0xff;
}

static void c_sb_crc(struct img *m)
{
	base_tree(m);
	m->sb->uuid[3] ^= 0x01;
}

static void c_sb_version(struct img *m)
{
	base_tree(m);
	m->sb->version = 49;
	sb_recrc(m);
}

static void c_sb_omf_major(struct img *m)
{
	base_tree(m);
	m->sb->omf_major = 3;
	sb_recrc(m);
}

static void c_sb_alloc_unit(struct img *m)
{
	base_tree(m);
	m->sb->alloc_unit = 0x10000;
	sb_recrc(m);
}

static void c_sb_log_offset(struct img *m)
{
	base_tree(m);
	m->sb->log_offset = 4 * MiB;
	sb_recrc(m);
}

static void c_sb_log_len_not_pow2(struct img *m)
{
	base_tree(m);
	m->sb->log_len = 12 * MiB;
	sb_recrc(m);
}

static void c_sb_log_len_too_small(struct img *m)
{
	base_tree(m);
	m->sb->log_len = 4 * MiB;
	sb_recrc(m);
}

static void c_sb_log_len_no_fit(struct img *m)
{
	base_tree(m);
	m->sb->log_len = 64 * MiB;
	sb_recrc(m);
}

/* The image was cut to 32 MiB; the superblock still says 64 MiB. */
static void c_sb_dev_size_truncated(struct img *m)
{
	base_tree(m);
	add_file(m, "past-the-cut", 1 * MiB, 40 * MiB, 2 * MiB);
	m->final_size = 32 * MiB;
}

/* Cut to 6 MiB: even the log is partly missing. */
static void c_sb_dev_size_log_cut(struct img *m)
{
	base_tree(m);
	m->final_size = 6 * MiB;
}

/* ---- log header ---- */

static void c_log_magic(struct img *m)
{
	base_tree(m);
	m->h->magic = 0xbadcafef00eULL;
}

static void c_log_crc(struct img *m)
{
	base_tree(m);
	m->h->crc ^= 0x01;
}

static void c_log_length(struct img *m)
{
	base_tree(m);
	m->h->len = 16 * MiB;
	log_recrc(m);
}

static void c_log_last_index(struct img *m)
{
	base_tree(m);
	m->h->last_index = 15000;
	log_recrc(m);
}

static void c_log_next_index_garbage(struct img *m)
{
	base_tree(m);
	m->h->next_index = 0xdeadbeefcafeULL;
}

static void c_log_next_seqnum(struct img *m)
{
	base_tree(m);
	m->h->next_seqnum = m->h->next_index + 3;
}

/* ---- entry integrity ---- */

static void c_entry_seqnum(struct img *m)
{
	base_tree(m);
	ent(m, 2)->seqnum = 7;
	ent_recrc(m, 2);
}

static void c_entry_crc_middle(struct img *m)
{
	base_tree(m);
	ent(m, 2)->crc ^= 0x01;
}

/* Two entries written after the base tree, the first torn half-way, the second garbage. */
static void c_torn_tail(struct img *m)
{
	base_tree(m);
	add_file(m, "torn1", 1 * MiB, 20 * MiB, 2 * MiB);
	add_file(m, "torn2", 1 * MiB, 22 * MiB, 2 * MiB);
	memset((uint8_t *)ent(m, 5) + 272, 0, 272);
	memset(ent(m, 6), 0x5a, sizeof(struct famfs_log_entry));
}

/* next_index was advanced past a slot that never reached the media. */
static void c_torn_tail_empty_slot(struct img *m)
{
	base_tree(m);
	m->h->next_index++;
	m->h->next_seqnum++;
}

/* A torn tail plus an intact but invalid entry before it: only the tail is cut. */
static void c_torn_tail_plus_error(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	set_path(&e, "/absolute");
	append(m, &e);
	add_file(m, "torn", 1 * MiB, 24 * MiB, 2 * MiB);
	ent(m, 6)->crc ^= 0x100;
}

/* ---- entry semantics ---- */

static void c_entry_type(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	e.type = 7;
	append(m, &e);
}

static void c_delete_entry(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	e.type = FAMFS_LOG_DELETE;
	append(m, &e);
}

static void c_extent_type(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	e.file.ext_type = 5;
	append(m, &e);
}

static void c_extent_count_0(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	e.file.nextents = 0;
	append(m, &e);
}

static void c_extent_count_17(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	e.file.nextents = 17;
	append(m, &e);
}

static void c_interleaved_count_2(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl_ifile(&e);
	e.file.nextents = 2;
	append(m, &e);
}

static void c_strips_0(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl_ifile(&e);
	e.file.ie[0].nstrips = 0;
	append(m, &e);
}

static void c_strips_17(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl_ifile(&e);
	e.file.ie[0].nstrips = 17;
	append(m, &e);
}

static void c_chunk_size_0(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl_ifile(&e);
	e.file.ie[0].chunk_size = 0;
	append(m, &e);
}

static void c_chunk_size_1m(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl_ifile(&e);
	e.file.ie[0].chunk_size = 1 * MiB;
	append(m, &e);
}

static void c_strip_partial_chunk(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl_ifile(&e);
	e.file.ie[0].chunk_size = 4 * MiB;
	e.file.ie[0].strips[1].len = 2 * MiB;
	e.file.size = 5 * MiB;
	append(m, &e);
}

static void c_extent_unaligned(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	e.file.se[0].offset = 20 * MiB + 4096;
	append(m, &e);
}

static void c_strip_unaligned(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl_ifile(&e);
	e.file.ie[0].strips[1].offset = 24 * MiB + 1 * MiB;
	append(m, &e);
}

static void c_extent_offset_0(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	e.file.se[0].offset = 0;
	append(m, &e);
}

static void c_extent_beyond_device(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	e.file.se[0].offset = 62 * MiB;
	e.file.se[0].len = 4 * MiB;
	append(m, &e);
}

static void c_extent_far_beyond_device(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	/* offset + len wraps around 2^64 */
	e.file.se[0].offset = UINT64_C(0xffffffffffe00000);
	e.file.se[0].len = 4 * MiB;
	append(m, &e);
}

static void c_extent_in_log(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	e.file.se[0].offset = 2 * MiB;
	append(m, &e);
}

static void c_extent_in_log_end(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	e.file.se[0].offset = 8 * MiB;
	e.file.se[0].len = 4 * MiB;
	append(m, &e);
}

static void c_extent_devindex(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	e.file.se[0].devindex = 1;
	append(m, &e);
}

static void c_extent_zero_length(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	e.file.se[0].len = 0;
	e.file.size = 0;
	append(m, &e);
}

static void c_file_size(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	e.file.size = 2 * MiB + 1;
	append(m, &e);
}

static void c_file_size_interleaved(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl_ifile(&e);
	e.file.size = 8 * MiB + 1;
	append(m, &e);
}

/* ---- paths ---- */

static void c_path_unterminated(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	memset(e.file.relpath, 'x', sizeof(e.file.relpath));
	append(m, &e);
}

static void c_path_empty(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	set_path(&e, "");
	append(m, &e);
}

static void c_path_absolute(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	set_path(&e, "/etc/passwd");
	append(m, &e);
}

static void c_path_empty_component(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	set_path(&e, "a//b");
	append(m, &e);
}

static void c_path_trailing_slash(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	make_dir(&e, "c", 0755, 0, 0);
	memcpy(e.mkdir.relpath, "c/", 3);
	append(m, &e);
}

static void c_path_dot(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	set_path(&e, "a/./x");
	append(m, &e);
}

static void c_path_dotdot(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	set_path(&e, "a/../../x");
	append(m, &e);
}

static void c_path_dotdot_mkdir(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	make_dir(&e, "c", 0755, 0, 0);
	memcpy(e.mkdir.relpath, "..", 3);
	append(m, &e);
}

static void c_path_no_parent(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	set_path(&e, "nodir/x");
	append(m, &e);
}

/* The parent is created, but only after its child. */
static void c_path_parent_later(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	set_path(&e, "later/x");
	append(m, &e);
	add_dir(m, "later");
}

static void c_path_parent_file(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	set_path(&e, "f1/x");
	append(m, &e);
}

static void c_path_duplicate(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	set_path(&e, "a/f2");
	append(m, &e);
	add_dir(m, "a/b");
}

/* ---- names: bytes that are not UTF-8, control characters, reserved ---- */

/*
 * Legal names that a careless printer would turn into forged lines, terminal
 * escapes or invalid UTF-8; a MKDIR of each again makes fsck quote them.
 */
static const char *const hostile_names[] = {
	"caf\xe9",                              /* Latin-1: not UTF-8 */
	"evil\nERROR [forged] a finding that is not", /* a newline */
	"esc\x1b[31mred\x1b[0m",                /* ANSI escapes */
	"c1\xc2\x9b" "2Jcsi",                   /* the C1 control CSI, as UTF-8 */
	"nonchar\xef\xb7\x90",                  /* U+FDD0: sd-bus refuses it */
	"back\\x41slash",                       /* a backslash that looks like an escape */
	"caf\xc3\xa9-utf8",                     /* valid UTF-8: shown as it is */
};

static void set_dir_path(struct famfs_log_entry *e, const char *path)
{
	memset(e->mkdir.relpath, 0, sizeof(e->mkdir.relpath));
	memcpy(e->mkdir.relpath, path, strnlen(path, sizeof(e->mkdir.relpath)));
}

static void c_names_hostile(struct img *m)
{
	struct famfs_log_entry e;
	size_t n = sizeof(hostile_names) / sizeof(hostile_names[0]);

	base_tree(m);
	for (size_t k = 0; k < n; k++)
		add_file(m, hostile_names[k], 1 * MiB, (20 + 2 * k) * MiB, 2 * MiB);
	for (size_t k = 0; k < n; k++)
		add_dir(m, hostile_names[k]);
	/* a cross-link between two of them: both paths in one finding */
	make_file(&e, "x", 1 * MiB, 20 * MiB, 2 * MiB);
	set_path(&e, "\xff\xfe-crosslinked");
	append(m, &e);
}

static void c_path_reserved(struct img *m)
{
	struct famfs_log_entry e;

	base_tree(m);
	tmpl(&e);
	set_path(&e, ".meta");
	append(m, &e);
	make_dir(&e, "x", 0755, 0, 0);
	set_dir_path(&e, ".meta");
	append(m, &e);
	/* below .meta and merely named like it elsewhere */
	make_file(&e, "x", 1 * MiB, 22 * MiB, 2 * MiB);
	set_path(&e, ".meta/.superblock");
	append(m, &e);
	add_file(m, "a/.meta", 1 * MiB, 24 * MiB, 2 * MiB);
	add_file(m, ".metadata", 1 * MiB, 26 * MiB, 2 * MiB);
}

/* ---- cross-links ---- */

static void c_crosslink(struct img *m)
{
	static const uint64_t strips[2] = { 30 * MiB, 10 * MiB };
	struct famfs_log_entry e;

	base_tree(m);
	add_file(m, "x1", 4 * MiB, 20 * MiB, 4 * MiB);
	add_file(m, "a/x2", 1 * MiB, 22 * MiB, 2 * MiB);
	/* an interleaved file whose second strip is f1's unit */
	make_ifile(&e, "a/b/striped", 4 * MiB, 2 * MiB, 2, strips, 2 * MiB);
	append(m, &e);
}

/* x3 overlaps both x1 and x2, which overlap each other. */
static void c_crosslink_triple(struct img *m)
{
	base_tree(m);
	add_file(m, "x1", 4 * MiB, 20 * MiB, 4 * MiB);
	add_file(m, "x2", 1 * MiB, 22 * MiB, 2 * MiB);
	add_file(m, "x3", 4 * MiB, 22 * MiB, 4 * MiB);
}

/* ---- the table ---- */

struct mkcase {
	const char *name;
	const char *opts;      /* fsck options of pass 1; "" means the default -n */
	const char *desc;
	void (*fn)(struct img *m);
};

static const struct mkcase cases[] = {
	{ "f_clean_empty", "", "clean: empty file system", c_clean_empty },
	{ "f_clean_populated", "", "clean: dirs, files, interleaved, multi-extent, 79-byte path, last unit",
	  c_clean_populated },
	{ "f_clean_full_log", "-n -v", "clean: log full (15420 MKDIR entries), log-full note", c_clean_full_log },
	{ "f_clean_version_47", "", "clean: superblock version 47 is accepted", c_clean_version_47 },
	{ "f_clean_alloc_unit_4k", "", "clean: allocation unit 4096 is accepted", c_clean_alloc_unit_4k },
	{ "f_clean_log_16m", "", "clean: 16 MiB log", c_clean_log_16m },

	{ "f_sb_magic", "", "superblock: bad magic (superblock-magic)", c_sb_magic },
	{ "f_sb_crc", "", "superblock: CRC mismatch (superblock-crc)", c_sb_crc },
	{ "f_sb_version", "", "superblock: version 49 (superblock-version)", c_sb_version },
	{ "f_sb_omf_major", "", "superblock: OMF major 3 (superblock-omf-major)", c_sb_omf_major },
	{ "f_sb_alloc_unit", "", "superblock: allocation unit 64 KiB (superblock-alloc-unit)", c_sb_alloc_unit },
	{ "f_sb_log_offset", "", "superblock: log offset 4 MiB (superblock-log-offset)", c_sb_log_offset },
	{ "f_sb_log_len_not_pow2", "", "superblock: log length 12 MiB (superblock-log-length)",
	  c_sb_log_len_not_pow2 },
	{ "f_sb_log_len_too_small", "", "superblock: log length 4 MiB (superblock-log-length)",
	  c_sb_log_len_too_small },
	{ "f_sb_log_len_no_fit", "", "superblock: 64 MiB log on a 64 MiB device (superblock-log-length)",
	  c_sb_log_len_no_fit },
	{ "f_sb_dev_size_truncated", "", "superblock: device size 64 MiB, image cut to 32 MiB "
	  "(superblock-device-size, extent-beyond-device)", c_sb_dev_size_truncated },
	{ "f_sb_dev_size_log_cut", "", "superblock: image cut to 6 MiB, inside the log (device-too-small)",
	  c_sb_dev_size_log_cut },

	{ "f_log_magic", "", "log header: bad magic (log-magic)", c_log_magic },
	{ "f_log_crc", "", "log header: CRC mismatch (log-crc)", c_log_crc },
	{ "f_log_length", "", "log header: length 16 MiB, superblock 8 MiB (log-length)", c_log_length },
	{ "f_log_last_index", "", "log header: last index 15000 (log-last-index)", c_log_last_index },
	{ "f_log_next_index_garbage", "-y", "log header: garbage next_index, repaired (log-next-index)",
	  c_log_next_index_garbage },
	{ "f_log_next_seqnum", "-y", "log header: next_seqnum != next_index, repaired (log-next-seqnum)",
	  c_log_next_seqnum },

	{ "f_entry_seqnum", "", "entry 2: seqnum 7 (entry-seqnum)", c_entry_seqnum },
	{ "f_entry_crc_middle", "-y", "entry 2: CRC mismatch, not repairable even with -y (entry-crc)",
	  c_entry_crc_middle },
	{ "f_torn_tail", "-y", "torn tail: entries 5 and 6 damaged, cut (entry-crc, log-next-index)",
	  c_torn_tail },
	{ "f_torn_tail_preen", "-p", "torn tail repaired with -p (entry-crc, log-next-index)", c_torn_tail },
	{ "f_torn_tail_empty_slot", "-y", "next_index past a never-written slot, cut (entry-seqnum, log-next-index)",
	  c_torn_tail_empty_slot },
	{ "f_torn_tail_plus_error", "-y", "torn tail cut, an invalid entry before it stays (exit 5)",
	  c_torn_tail_plus_error },

	{ "f_entry_type", "", "entry: unknown type 7 (entry-type)", c_entry_type },
	{ "f_delete_entry", "", "entry: DELETE type, warning only (delete-entry-ignored)", c_delete_entry },
	{ "f_extent_type", "", "entry: extent type 5 (extent-type)", c_extent_type },
	{ "f_extent_count_0", "", "entry: 0 simple extents (extent-count)", c_extent_count_0 },
	{ "f_extent_count_17", "", "entry: 17 simple extents (extent-count)", c_extent_count_17 },
	{ "f_interleaved_count_2", "", "entry: 2 interleaved extents (extent-count)", c_interleaved_count_2 },
	{ "f_strips_0", "", "entry: interleaved with 0 strips (strip-count)", c_strips_0 },
	{ "f_strips_17", "", "entry: interleaved with 17 strips (strip-count)", c_strips_17 },
	{ "f_chunk_size_0", "", "entry: chunk size 0 (chunk-size)", c_chunk_size_0 },
	{ "f_chunk_size_1m", "", "entry: chunk size 1 MiB (chunk-size)", c_chunk_size_1m },
	{ "f_strip_partial_chunk", "", "entry: strip not a whole number of chunks (extent-length)",
	  c_strip_partial_chunk },
	{ "f_extent_unaligned", "", "entry: extent at 20 MiB + 4 KiB (extent-alignment)", c_extent_unaligned },
	{ "f_strip_unaligned", "", "entry: strip at 25 MiB (extent-alignment)", c_strip_unaligned },
	{ "f_extent_offset_0", "", "entry: extent at offset 0 (extent-zero-offset)", c_extent_offset_0 },
	{ "f_extent_beyond_device", "", "entry: extent [62 MiB, 66 MiB) (extent-beyond-device)",
	  c_extent_beyond_device },
	{ "f_extent_far_beyond_device", "", "entry: extent whose end wraps past 2^64 (extent-beyond-device)",
	  c_extent_far_beyond_device },
	{ "f_extent_in_log", "", "entry: extent at 2 MiB, the log (extent-in-metadata)", c_extent_in_log },
	{ "f_extent_in_log_end", "", "entry: extent [8 MiB, 12 MiB) starts in the log (extent-in-metadata)",
	  c_extent_in_log_end },
	{ "f_extent_devindex", "", "entry: device index 1 (extent-devindex)", c_extent_devindex },
	{ "f_extent_zero_length", "", "entry: zero-length extent (extent-length)", c_extent_zero_length },
	{ "f_file_size", "", "entry: size 2 MiB + 1 on one 2 MiB extent (file-size)", c_file_size },
	{ "f_file_size_interleaved", "", "entry: size 8 MiB + 1 on 2 x 4 MiB strips (file-size)",
	  c_file_size_interleaved },

	{ "f_path_unterminated", "", "path: 80 bytes without a NUL (path-unterminated)", c_path_unterminated },
	{ "f_path_empty", "", "path: empty (path-empty)", c_path_empty },
	{ "f_path_absolute", "", "path: /etc/passwd (path-absolute)", c_path_absolute },
	{ "f_path_empty_component", "", "path: a//b (path-empty-component)", c_path_empty_component },
	{ "f_path_trailing_slash", "", "path: mkdir c/ (path-empty-component)", c_path_trailing_slash },
	{ "f_path_dot", "", "path: a/./x (path-dot-component)", c_path_dot },
	{ "f_path_dotdot", "", "path: a/../../x (path-dot-component)", c_path_dotdot },
	{ "f_path_dotdot_mkdir", "", "path: mkdir .. (path-dot-component)", c_path_dotdot_mkdir },
	{ "f_path_no_parent", "", "path: nodir/x, no such directory (path-no-parent)", c_path_no_parent },
	{ "f_path_parent_later", "", "path: later/x before mkdir later (path-no-parent)", c_path_parent_later },
	{ "f_path_parent_file", "", "path: f1/x, f1 is a file (path-parent-not-directory)", c_path_parent_file },
	{ "f_path_duplicate", "", "path: a/f2 and a/b created twice (path-duplicate)", c_path_duplicate },
	{ "f_path_reserved", "", "path: .meta at the root, file and mkdir (path-reserved)", c_path_reserved },
	{ "f_names_hostile", "", "names: not UTF-8, newline, ESC, C1, noncharacter, backslash; shown escaped",
	  c_names_hostile },

	{ "f_crosslink", "", "cross-links: x1/a/x2 share a unit, a/b/striped shares f1's (crosslink)",
	  c_crosslink },
	{ "f_crosslink_triple", "", "cross-links: three files on one unit (crosslink)", c_crosslink_triple },

	{ "f_json_crosslink", "-n --json", "JSON report: cross-link pairs with paths and range", c_crosslink },
	{ "f_json_sb_magic", "-n --json", "JSON report: fatal superblock-magic", c_sb_magic },
	{ "f_json_torn_tail", "-y --json", "JSON report: torn tail repaired, actions listed", c_torn_tail },
	{ "f_json_clean", "-n --json", "JSON report: clean populated file system", c_clean_populated },
	{ "f_json_names_hostile", "-n --json", "JSON report: hostile names escaped, valid UTF-8",
	  c_names_hostile },
};

/* ---- random damage: the checker on thousands of mutated media ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * UINT64_C(2685821657736338717);
}

static void fix_crcs(struct img *m, uint64_t nentries)
{
	sb_recrc(m);
	log_recrc(m);
	for (uint64_t i = 0; i < nentries; i++)
		ent_recrc(m, i);
}

/* What every report must satisfy, whatever the medium holds. */
static int report_sane(const struct famfs_check_report *r, uint64_t slots, const char **why)
{
	size_t sev = 0;

	for (size_t k = 0; k < r->nfindings; k++) {
		const struct famfs_finding *f = &r->findings[k];

		if ((unsigned)f->code >= _FAMFS_F_MAX || f->code == FAMFS_OK)
			return *why = "finding with an invalid code", 0;
		if ((unsigned)f->severity > FAMFS_SEV_FATAL)
			return *why = "finding with an invalid severity", 0;
		if (!memchr(f->message, 0, sizeof(f->message)) || !memchr(f->path, 0, sizeof(f->path)) ||
		    !memchr(f->other_path, 0, sizeof(f->other_path)) || f->message[0] == 0)
			return *why = "finding with an unterminated or empty text", 0;
	}
	for (int s = 0; s <= FAMFS_SEV_FATAL; s++)
		sev += r->by_severity[s];
	if (sev != r->nfindings + r->suppressed)
		return *why = "severity counts disagree with the findings", 0;
	if (r->repair.needed && r->summary.log_valid && r->repair.new_next_index > slots)
		return *why = "repair would move next_index past the log", 0;
	return 1;
}

/*
 * Mutates the populated file system @iterations times and checks each
 * result: no crash (run it under ASan), a sane report, and where the repair
 * plan claims to fix everything, applying it leaves a clean file system.
 */
static int fuzz(uint64_t iterations, uint64_t seed)
{
	const uint64_t meta = FAMFS_LOG_OFFSET + 48 + 16 * sizeof(struct famfs_log_entry);
	uint64_t slots = famfs_log_slots(LOG_LEN), nentries, repaired = 0, fatal = 0, clean = 0;
	struct img pristine = { .size = DEV_SIZE }, m = { .size = DEV_SIZE };

	rng_state = seed ? seed : 1;
	pristine.base = calloc(1, DEV_SIZE);
	m.base = calloc(1, DEV_SIZE);
	if (!pristine.base || !m.base)
		die("out of memory");
	c_clean_populated(&pristine);
	nentries = pristine.h->next_index;
	memcpy(m.base, pristine.base, DEV_SIZE);
	m.sb = (struct famfs_superblock *)m.base;
	m.h = (struct famfs_log_header *)(m.base + FAMFS_LOG_OFFSET);

	printf("1..1\n");
	for (uint64_t it = 0; it < iterations; it++) {
		struct famfs_check_report *r = NULL;
		uint64_t medium = DEV_SIZE, nbytes = 1 + rnd() % 8;
		const uint8_t *base = m.base;
		uint8_t *cut = NULL;
		const char *why = NULL;

		memcpy(m.base, pristine.base, meta);
		for (uint64_t k = 0; k < nbytes; k++) {
			uint64_t where = rnd() % 4, off;

			if (where == 0)
				off = rnd() % sizeof(struct famfs_superblock);
			else if (where == 1)
				off = FAMFS_LOG_OFFSET + rnd() % sizeof(struct famfs_log_header);
			else
				off = FAMFS_LOG_OFFSET + 48 + rnd() % ((nentries + 1) * sizeof(struct famfs_log_entry));
			m.base[off] = (rnd() % 3 == 0) ? 0xff : (uint8_t)rnd();
		}
		if (rnd() % 2)
			fix_crcs(&m, nentries + 1);
		/* now and then a medium cut short, in a buffer of exactly that size */
		if (rnd() % 8 == 0) {
			medium = 1 + rnd() % meta;
			cut = malloc(medium);
			if (!cut)
				die("out of memory");
			memcpy(cut, m.base, medium);
			base = cut;
		}
		if (famfs_check_medium(base, medium, 0, &r) < 0 || !r)
			die("famfs_check_medium failed");
		if (!report_sane(r, slots, &why)) {
			printf("not ok 1 - iteration %llu (seed %llu): %s\n", (unsigned long long)it,
			       (unsigned long long)seed, why);
			return 1;
		}
		if (famfs_check_report_errors(r) == 0)
			clean++;
		if (r->by_severity[FAMFS_SEV_FATAL])
			fatal++;
		if (!cut && famfs_check_repair_fixes_all(r)) {
			struct famfs_check_report *r2 = NULL;

			m.h->next_index = r->repair.new_next_index;
			m.h->next_seqnum = r->repair.new_next_index;
			if (famfs_check_medium(m.base, medium, 0, &r2) < 0)
				die("famfs_check_medium failed");
			if (famfs_check_report_errors(r2) != 0) {
				printf("not ok 1 - iteration %llu (seed %llu): after the repair: %s\n",
				       (unsigned long long)it, (unsigned long long)seed,
				       r2->nfindings ? r2->findings[0].message : "errors remain");
				return 1;
			}
			famfs_check_report_free(r2);
			repaired++;
		}
		famfs_check_report_free(r);
		free(cut);
	}
	printf("ok 1 - %llu mutated media checked (seed %llu): %llu clean, %llu fatal, %llu repaired and then clean\n",
	       (unsigned long long)iterations, (unsigned long long)seed, (unsigned long long)clean,
	       (unsigned long long)fatal, (unsigned long long)repaired);
	free(pristine.base);
	free(m.base);
	return 0;
}

static void write_image(const struct mkcase *c, const char *out)
{
	struct img m = { .size = DEV_SIZE, .final_size = DEV_SIZE };
	int fd;

	fd = open(out, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)m.size) < 0)
		die("cannot create the image");
	m.base = mmap(NULL, m.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m.base == MAP_FAILED)
		die("cannot map the image");
	c->fn(&m);
	if (msync(m.base, m.size, MS_SYNC) < 0 || munmap(m.base, m.size) < 0)
		die("cannot write the image");
	if (m.final_size != m.size && ftruncate(fd, (off_t)m.final_size) < 0)
		die("cannot cut the image");
	if (close(fd) < 0)
		die("cannot close the image");
}

int main(int argc, char **argv)
{
	size_t n = sizeof(cases) / sizeof(cases[0]);

	if (argc == 2 && strcmp(argv[1], "--list") == 0) {
		for (size_t k = 0; k < n; k++)
			printf("%s|%s|%s\n", cases[k].name, cases[k].opts, cases[k].desc);
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "--fuzz") == 0)
		return fuzz(strtoull(argv[2], NULL, 0), strtoull(argv[3], NULL, 0));
	if (argc != 3) {
		fprintf(stderr, "usage: mkcase --list | mkcase CASE OUTPUT.img | mkcase --fuzz ITERATIONS SEED\n");
		return 2;
	}
	for (size_t k = 0; k < n; k++) {
		if (strcmp(cases[k].name, argv[1]) == 0) {
			write_image(&cases[k], argv[2]);
			return 0;
		}
	}
	fprintf(stderr, "mkcase: no case %s\n", argv[1]);
	return 2;
}
