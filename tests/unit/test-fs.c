// SPDX-License-Identifier: LGPL-2.1-or-later
/* The attached file system: creation on the master, incremental replay, hostile logs. */
#include <glib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fs.h"
#include "superblock.h"
#include "testutil.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

struct fixture {
	char *dir;
	char *img;
	struct famfs_fs *master;
	struct famfs_fs *client;
};

static void setup_size(struct fixture *f, uint64_t size)
{
	struct famfs_err err = { 0 };

	f->dir = test_scratch_dir();
	f->img = test_make_image(f->dir, "fs.img", size, 8 * MiB, test_host_uuid);
	g_assert_cmpint(famfs_fs_open(f->img, FAMFS_DEVICE_WRITE, test_host_uuid, &f->master, &err), ==, 0);
	g_assert_true(famfs_fs_is_master(f->master));
	g_assert_cmpint(famfs_fs_replay(f->master, NULL, NULL, NULL, &err), ==, 0);
	g_assert_cmpint(famfs_fs_open(f->img, 0, test_other_uuid, &f->client, &err), ==, 0);
	g_assert_false(famfs_fs_is_master(f->client));
}

static void setup(struct fixture *f, gconstpointer data)
{
	setup_size(f, GPOINTER_TO_SIZE(data) ? GPOINTER_TO_SIZE(data) * GiB : 4 * GiB);
}

static void teardown(struct fixture *f, gconstpointer data)
{
	const struct famfs_device *dev = famfs_fs_device(f->master);
	struct famfs_check_report *r = NULL;

	/* Whatever a test did, what is on the medium must check clean... */
	g_assert_cmpint(famfs_check_medium(dev->base, dev->size, 0, &r), ==, 0);
	if (!strstr(g_test_get_path(), "hostile"))
		g_assert_cmpuint(famfs_check_report_errors(r), ==, 0);
	famfs_check_report_free(r);
	famfs_fs_close(f->client);
	famfs_fs_close(f->master);
	test_remove_dir(f->dir);
	g_free(f->img);
	g_free(f->dir);
}

static uint64_t next_index(struct fixture *f)
{
	return famfs_fs_log_header(f->master)->next_index;
}

/*
 * The superblock and log on the medium, written as another host would: the
 * library hands its callers read-only pointers.
 */
static struct famfs_superblock *medium_superblock(const struct famfs_fs *fs)
{
	return (struct famfs_superblock *)famfs_fs_device(fs)->base;
}

static struct famfs_log_header *medium_log(const struct famfs_fs *fs)
{
	return (struct famfs_log_header *)(famfs_fs_device(fs)->base + FAMFS_LOG_OFFSET);
}

static void test_create_and_follow(struct fixture *f, gconstpointer data)
{
	struct famfs_file_spec files[3] = {
		{ .relpath = "dir/one", .size = 1, .mode = 0644, .uid = 10, .gid = 20 },
		{ .relpath = "dir/two", .size = 5 * MiB, .mode = 0600 },
		{ .relpath = "three", .size = 2 * MiB, .mode = 0444 },
	};
	struct famfs_replay_result res;
	struct famfs_err err = { 0 };
	struct famfs_fmap maps[3];
	uint32_t nodes[3], id;
	const struct famfs_ns_node *n;
	struct famfs_ns *ns = famfs_fs_namespace(f->client);

	g_assert_cmpint(famfs_fs_mkdir(f->master, "dir", 0755, 0, 0, false, &id, &err), ==, 0);
	g_assert_cmpint(famfs_fs_create_files(f->master, files, 3, maps, nodes, &err), ==, 0);
	g_assert_cmpuint(next_index(f), ==, 4);
	g_assert_cmpuint(maps[1].se[0].len, ==, 6 * MiB);

	g_assert_cmpint(famfs_fs_replay(f->client, NULL, NULL, &res, &err), ==, 0);
	g_assert_cmpuint(res.applied, ==, 4);
	g_assert_false(res.stalled);
	n = famfs_ns_node(ns, famfs_ns_lookup(ns, "dir/one", 7));
	g_assert_nonnull(n);
	g_assert_cmpuint(n->size, ==, 1);
	g_assert_cmpuint(n->uid, ==, 10);
	g_assert_cmpuint(n->gid, ==, 20);
	g_assert_cmpuint(famfs_fs_entry(f->client, famfs_ns_lookup(ns, "three", 5))->file.se[0].offset, ==,
			 maps[2].se[0].offset);

	/* Incremental: a second replay reads nothing old. */
	g_assert_cmpint(famfs_fs_replay(f->client, NULL, NULL, &res, &err), ==, 0);
	g_assert_cmpuint(res.applied, ==, 0);
	g_assert_cmpint(famfs_fs_mkdir(f->master, "x/y/z", 0700, 1, 1, true, NULL, &err), ==, 0);
	g_assert_cmpint(famfs_fs_replay(f->client, NULL, NULL, &res, &err), ==, 0);
	g_assert_cmpuint(res.applied, ==, 3);
	g_assert_cmpuint(famfs_ns_count(ns, FAMFS_NS_DIR), ==, 4);
	g_assert_cmpuint(famfs_fs_allocator(f->client)->used, ==, famfs_fs_allocator(f->master)->used);
}

static void test_errors_leave_log_unchanged(struct fixture *f, gconstpointer data)
{
	struct famfs_err err = { 0 };
	uint64_t before, used;
	struct famfs_file_spec ok = { .relpath = "ok", .size = MiB, .mode = 0644 };
	struct famfs_file_spec dup[2] = { ok, ok };
	struct famfs_file_spec cases[] = {
		{ .relpath = "", .size = MiB },
		{ .relpath = "/abs", .size = MiB },
		{ .relpath = "a//b", .size = MiB },
		{ .relpath = "../escape", .size = MiB },
		{ .relpath = "d/./x", .size = MiB },
		{ .relpath = "nodir/f", .size = MiB },
		{ .relpath = "zero", .size = 0 },
		{ .relpath = "huge", .size = 64 * GiB },
		{ .relpath = "0123456789012345678901234567890123456789012345678901234567890123456789012345678901",
		  .size = MiB },
	};
	static const int expect[] = { -EINVAL, -EINVAL, -EINVAL, -EINVAL, -EINVAL, -ENOENT, -EINVAL, -ENOSPC,
				      -ENAMETOOLONG };

	g_assert_cmpint(famfs_fs_create_files(f->master, &ok, 1, NULL, NULL, &err), ==, 0);
	before = next_index(f);
	used = famfs_fs_allocator(f->master)->used;
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		memset(&err, 0, sizeof(err));
		g_assert_cmpint(famfs_fs_create_files(f->master, &cases[i], 1, NULL, NULL, &err), ==, expect[i]);
		g_assert_cmpstr(err.msg, !=, "");
		g_assert_cmpuint(next_index(f), ==, before);
		g_assert_cmpuint(famfs_fs_allocator(f->master)->used, ==, used);
	}
	g_assert_cmpint(famfs_fs_create_files(f->master, &ok, 1, NULL, NULL, &err), ==, -EEXIST);
	g_assert_cmpint(famfs_fs_create_files(f->master, dup, 2, NULL, NULL, &err), ==, -EEXIST);
	g_assert_cmpint(famfs_fs_mkdir(f->master, "ok", 0755, 0, 0, true, NULL, &err), ==, -EEXIST);
	g_assert_cmpint(famfs_fs_mkdir(f->master, "ok/sub", 0755, 0, 0, true, NULL, &err), ==, -ENOTDIR);
	g_assert_cmpint(famfs_fs_create_files(f->master, &(struct famfs_file_spec){
		.relpath = "ok/under_file", .size = 1 }, 1, NULL, NULL, &err), ==, -ENOTDIR);
	g_assert_cmpint(famfs_fs_mkdir(f->master, "p/q", 0755, 0, 0, false, NULL, &err), ==, -ENOENT);
	g_assert_cmpuint(next_index(f), ==, before);

	/* The client may not write. */
	g_assert_cmpint(famfs_fs_create_files(f->client, &ok, 1, NULL, NULL, &err), ==, -EPERM);
	g_assert_nonnull(strstr(err.msg, "not the master"));
	g_assert_cmpint(famfs_fs_mkdir(f->client, "d", 0755, 0, 0, false, NULL, &err), ==, -EPERM);
}

/* A batch that runs out of space part way writes nothing and frees what it took. */
static void test_batch_all_or_nothing(struct fixture *f, gconstpointer data)
{
	struct famfs_file_spec *specs = g_new0(struct famfs_file_spec, 600);
	char (*names)[16] = g_malloc0(600 * sizeof(*names));
	struct famfs_err err = { 0 };
	uint64_t used = famfs_fs_allocator(f->master)->used;

	for (unsigned int i = 0; i < 600; i++) {
		g_snprintf(names[i], sizeof(names[i]), "b%u", i);
		specs[i] = (struct famfs_file_spec){ .relpath = names[i], .size = MiB, .mode = 0644 };
	}
	/* 1 GiB holds 507 of them. */
	g_assert_cmpint(famfs_fs_create_files(f->master, specs, 600, NULL, NULL, &err), ==, -ENOSPC);
	g_assert_cmpuint(next_index(f), ==, 0);
	g_assert_cmpuint(famfs_fs_allocator(f->master)->used, ==, used);
	g_assert_cmpint(famfs_fs_create_files(f->master, specs, 507, NULL, NULL, &err), ==, 0);
	g_assert_cmpuint(next_index(f), ==, 507);
	g_assert_cmpint(famfs_fs_create_files(f->master, &specs[507], 1, NULL, NULL, &err), ==, -ENOSPC);
	/* Directories need no space. */
	g_assert_cmpint(famfs_fs_mkdir(f->master, "still/possible", 0755, 0, 0, true, NULL, &err), ==, 0);
	g_free(specs);
	g_free(names);
}

static void test_log_full(struct fixture *f, gconstpointer data)
{
	enum { N = 15420, BATCH = 5000 };
	struct famfs_file_spec *specs = g_new0(struct famfs_file_spec, N + 1);
	char (*names)[16] = g_malloc0((N + 1) * sizeof(*names));
	struct famfs_err err = { 0 };

	for (unsigned int i = 0; i <= N; i++) {
		g_snprintf(names[i], sizeof(names[i]), "f%05u", i);
		specs[i] = (struct famfs_file_spec){ .relpath = names[i], .size = 16, .mode = 0644 };
	}
	for (unsigned int i = 0; i < N; i += BATCH)
		g_assert_cmpint(famfs_fs_create_files(f->master, &specs[i], MIN(BATCH, N - i), NULL, NULL, &err), ==, 0);
	g_assert_cmpuint(next_index(f), ==, N);
	g_assert_cmpint(famfs_fs_create_files(f->master, &specs[N], 1, NULL, NULL, &err), ==, -FAMFS_ELOGFULL);
	g_assert_nonnull(strstr(err.msg, "log is full"));
	g_assert_cmpint(famfs_fs_mkdir(f->master, "d", 0755, 0, 0, false, NULL, &err), ==, -FAMFS_ELOGFULL);
	g_assert_cmpint(famfs_fs_replay(f->client, NULL, NULL, NULL, &err), ==, 0);
	g_assert_cmpuint(famfs_ns_count(famfs_fs_namespace(f->client), FAMFS_NS_FILE), ==, N);
	g_free(specs);
	g_free(names);
}

static void test_torn_tail_retried(struct fixture *f, gconstpointer data)
{
	struct famfs_file_spec s[2] = { { .relpath = "a", .size = 1 }, { .relpath = "b", .size = 1 } };
	struct famfs_log_entry *slots = famfs_log_entries(medium_log(f->master));
	struct famfs_replay_result res;
	struct famfs_err err = { 0 };

	g_assert_cmpint(famfs_fs_create_files(f->master, s, 2, NULL, NULL, &err), ==, 0);
	/* Entry 1 as a client may see it mid-write. */
	slots[1].crc ^= 1;
	g_assert_cmpint(famfs_fs_replay(f->client, NULL, NULL, &res, &err), ==, 0);
	g_assert_cmpuint(res.applied, ==, 1);
	g_assert_true(res.stalled);
	g_assert_cmpuint(res.stalled_index, ==, 1);
	g_assert_cmpint(res.stall_code, ==, FAMFS_F_ENTRY_CRC);
	g_assert_cmpint(famfs_fs_replay(f->client, NULL, NULL, &res, &err), ==, 0);
	g_assert_true(res.stalled);
	g_assert_cmpuint(res.applied, ==, 0);
	/* The write lands: the next poll applies it. */
	slots[1].crc ^= 1;
	g_assert_cmpint(famfs_fs_replay(f->client, NULL, NULL, &res, &err), ==, 0);
	g_assert_false(res.stalled);
	g_assert_cmpuint(res.applied, ==, 1);
}

static void append_raw(struct famfs_fs *fs, struct famfs_log_entry *e)
{
	g_assert_cmpint(famfs_log_append(medium_log(fs), e, 1, NULL), ==, 0);
}

/* CRC-valid entries that break rules are skipped for good, never created. */
static void test_hostile_entries(struct fixture *f, gconstpointer data)
{
	struct famfs_fmap map = { .ext_type = FAMFS_EXT_SIMPLE, .nextents = 1 };
	struct famfs_replay_result res;
	struct famfs_fs_stats stats;
	struct famfs_err err = { 0 };
	struct famfs_log_entry e;
	uint64_t good_offset;

	map.se[0] = (struct famfs_simple_extent){ 0, 100 * MiB, 2 * MiB };
	good_offset = map.se[0].offset;
	famfs_entry_make_file(&e, "good", 10, 0644, 0, 0, &map, NULL);
	append_raw(f->master, &e);
	/* ".." cannot be built by the library; write it by hand. */
	famfs_entry_make_file(&e, "xx", 10, 0644, 0, 0, &map, NULL);
	memcpy(e.file.relpath, "../x", 5);
	map.se[0].offset = 200 * MiB;
	e.file.se[0].offset = 200 * MiB;
	append_raw(f->master, &e);
	map.se[0].offset = 64 * GiB;                         /* past the end */
	famfs_entry_make_file(&e, "far", 10, 0644, 0, 0, &map, NULL);
	append_raw(f->master, &e);
	map.se[0].offset = 4 * MiB;                          /* inside the log */
	famfs_entry_make_file(&e, "meta", 10, 0644, 0, 0, &map, NULL);
	append_raw(f->master, &e);
	map.se[0].offset = good_offset;                      /* duplicate name, shared space */
	famfs_entry_make_file(&e, "good", 10, 0644, 0, 0, &map, NULL);
	append_raw(f->master, &e);
	famfs_entry_make_mkdir(&e, "d", 0755, 0, 0, NULL);
	e.type = 77;
	append_raw(f->master, &e);
	map.se[0].offset = 300 * MiB;
	famfs_entry_make_file(&e, "last", 10, 0644, 0, 0, &map, NULL);
	append_raw(f->master, &e);

	g_assert_cmpint(famfs_fs_replay(f->client, NULL, NULL, &res, &err), ==, 0);
	g_assert_false(res.stalled);
	g_assert_cmpuint(res.applied, ==, 2);
	g_assert_cmpuint(res.rejected, ==, 5);
	g_assert_cmpuint(famfs_ns_count(famfs_fs_namespace(f->client), FAMFS_NS_FILE), ==, 2);
	g_assert_cmpuint(famfs_ns_lookup(famfs_fs_namespace(f->client), "../x", 4), ==, FAMFS_NS_NONE);
	famfs_fs_get_stats(f->client, &stats);
	g_assert_cmpint(stats.last_rejected_index, ==, 5);
	/* The refused ".." entry still holds its space; the duplicate is a cross-link. */
	g_assert_true(famfs_alloc_test(famfs_fs_allocator(f->client), 200 * MiB / (2 * MiB)));
	g_assert_cmpuint(stats.crosslinked_units, ==, 1);
}

/* A long backlog is checked in bulk; a bad entry in it still stops replay exactly there. */
static void test_bulk_replay_stalls(struct fixture *f, gconstpointer data)
{
	enum { N = 9000 };
	struct famfs_file_spec *specs = g_new0(struct famfs_file_spec, N);
	char (*names)[16] = g_malloc0(N * sizeof(*names));
	struct famfs_log_entry *slots = famfs_log_entries(medium_log(f->master));
	struct famfs_replay_result res;
	struct famfs_err err = { 0 };

	for (unsigned int i = 0; i < N; i++) {
		g_snprintf(names[i], sizeof(names[i]), "g%u", i);
		specs[i] = (struct famfs_file_spec){ .relpath = names[i], .size = 1, .mode = 0644 };
	}
	g_assert_cmpint(famfs_fs_create_files(f->master, specs, N, NULL, NULL, &err), ==, 0);
	slots[8500].crc ^= 4;
	g_assert_cmpint(famfs_fs_replay(f->client, NULL, NULL, &res, &err), ==, 0);
	g_assert_true(res.stalled);
	g_assert_cmpuint(res.stalled_index, ==, 8500);
	g_assert_cmpuint(res.applied, ==, 8500);
	slots[8500].crc ^= 4;
	g_assert_cmpint(famfs_fs_replay(f->client, NULL, NULL, &res, &err), ==, 0);
	g_assert_false(res.stalled);
	g_assert_cmpuint(res.applied, ==, N - 8500);
	g_free(specs);
	g_free(names);
}

/*
 * A bad entry anywhere in a long backlog (first, second, around 2048 and
 * 8192 entry boundaries where bulk copies once split the work, last) stops
 * the replay exactly there, with every file before it in the namespace.
 */
static void test_bulk_replay_stall_positions(struct fixture *f, gconstpointer data)
{
	enum { N = 9000 };
	static const unsigned int bad_at[] = { 0, 1, 2047, 2048, 4095, 6144, 8191, 8192, N - 1 };
	struct famfs_file_spec *specs = g_new0(struct famfs_file_spec, N);
	char (*names)[16] = g_malloc0(N * sizeof(*names));
	struct famfs_log_entry *slots = famfs_log_entries(medium_log(f->master));
	struct famfs_err err = { 0 };

	for (unsigned int i = 0; i < N; i++) {
		g_snprintf(names[i], sizeof(names[i]), "h%u", i);
		specs[i] = (struct famfs_file_spec){ .relpath = names[i], .size = 1, .mode = 0644 };
	}
	g_assert_cmpint(famfs_fs_create_files(f->master, specs, N, NULL, NULL, &err), ==, 0);
	for (size_t b = 0; b < G_N_ELEMENTS(bad_at); b++) {
		struct famfs_replay_result res;
		struct famfs_fs *fresh = NULL;
		uint32_t node;

		slots[bad_at[b]].crc ^= 1;
		g_assert_cmpint(famfs_fs_open(f->img, 0, test_other_uuid, &fresh, &err), ==, 0);
		g_assert_cmpint(famfs_fs_replay(fresh, NULL, NULL, &res, &err), ==, 0);
		g_assert_true(res.stalled);
		g_assert_cmpuint(res.stalled_index, ==, bad_at[b]);
		g_assert_cmpuint(res.applied, ==, bad_at[b]);
		if (bad_at[b] > 0) {
			node = famfs_ns_lookup(famfs_fs_namespace(fresh), names[bad_at[b] - 1], strlen(names[bad_at[b] - 1]));
			g_assert_cmpuint(node, !=, FAMFS_NS_NONE);
		}
		node = famfs_ns_lookup(famfs_fs_namespace(fresh), names[bad_at[b]], strlen(names[bad_at[b]]));
		g_assert_cmpuint(node, ==, FAMFS_NS_NONE);
		slots[bad_at[b]].crc ^= 1;
		g_assert_cmpint(famfs_fs_replay(fresh, NULL, NULL, &res, &err), ==, 0);
		g_assert_false(res.stalled);
		g_assert_cmpuint(res.applied, ==, N - bad_at[b]);
		famfs_fs_close(fresh);
	}
	g_free(specs);
	g_free(names);
}

/* An entry rewritten in place after replay is caught when it is read again. */
static void test_read_entry_rechecks(struct fixture *f, gconstpointer data)
{
	struct famfs_file_spec s = { .relpath = "victim", .size = 1, .mode = 0644 };
	struct famfs_log_entry *slots = famfs_log_entries(medium_log(f->master));
	struct famfs_log_entry copy;
	struct famfs_err err = { 0 };
	uint32_t node;

	g_assert_cmpint(famfs_fs_create_files(f->master, &s, 1, NULL, &node, &err), ==, 0);
	g_assert_cmpint(famfs_fs_read_entry(f->master, node, &copy, &err), ==, 0);
	g_assert_cmpstr(copy.file.relpath, ==, "victim");
	/* Point the extent at the log and make the CRC agree: still refused. */
	slots[0].file.se[0].offset = 4 * MiB;
	slots[0].crc = famfs_log_entry_crc(&slots[0]);
	g_assert_cmpint(famfs_fs_read_entry(f->master, node, &copy, &err), ==, -EIO);
	g_assert_nonnull(strstr(err.msg, "changed after it was replayed"));
	g_assert_cmpint(famfs_fs_read_entry(f->master, FAMFS_NS_ROOT, &copy, &err), ==, -ENOENT);
}

/* A rewrite that renames or resizes an entry is caught, by both re-reads; copy skips only the CRC. */
static void test_copy_entry_rechecks(struct fixture *f, gconstpointer data)
{
	struct famfs_file_spec s = { .relpath = "victim", .size = 1, .mode = 0644 };
	struct famfs_log_entry *slots = famfs_log_entries(medium_log(f->master));
	struct famfs_log_entry copy, saved;
	struct famfs_err err = { 0 };
	uint32_t node;

	g_assert_cmpint(famfs_fs_create_files(f->master, &s, 1, NULL, &node, &err), ==, 0);
	saved = slots[0];
	g_assert_cmpint(famfs_fs_copy_entry(f->master, node, &copy, &err), ==, 0);
	g_assert_cmpstr(copy.file.relpath, ==, "victim");

	/* Renamed, CRC fixed up */
	g_strlcpy(slots[0].file.relpath, "other", sizeof(slots[0].file.relpath));
	slots[0].crc = famfs_log_entry_crc(&slots[0]);
	g_assert_cmpint(famfs_fs_copy_entry(f->master, node, &copy, &err), ==, -EIO);
	g_assert_nonnull(strstr(err.msg, "no longer describes \"victim\""));
	g_assert_cmpint(famfs_fs_read_entry(f->master, node, &copy, &err), ==, -EIO);
	slots[0] = saved;

	/* Resized, CRC fixed up */
	slots[0].file.size = 2 * MiB;
	slots[0].crc = famfs_log_entry_crc(&slots[0]);
	g_assert_cmpint(famfs_fs_copy_entry(f->master, node, &copy, &err), ==, -EIO);
	slots[0] = saved;

	/* Into the log, CRC fixed up */
	slots[0].file.se[0].offset = 4 * MiB;
	slots[0].crc = famfs_log_entry_crc(&slots[0]);
	g_assert_cmpint(famfs_fs_copy_entry(f->master, node, &copy, &err), ==, -EIO);
	g_assert_nonnull(strstr(err.msg, "changed after it was replayed"));
	slots[0] = saved;

	/* Only the CRC damaged: read_entry notices, copy_entry by design does not */
	slots[0].crc ^= 1;
	g_assert_cmpint(famfs_fs_read_entry(f->master, node, &copy, &err), ==, -EIO);
	g_assert_cmpint(famfs_fs_copy_entry(f->master, node, &copy, &err), ==, 0);
	slots[0] = saved;
	g_assert_cmpint(famfs_fs_read_entry(f->master, node, &copy, &err), ==, 0);
}

struct observed {
	unsigned int calls;
	char last[FAMFS_MAX_PATHLEN];
};

static void observe(struct famfs_fs *fs, uint64_t index, const struct famfs_log_entry *e,
		    uint32_t node, void *userdata)
{
	struct observed *o = userdata;

	o->calls++;
	g_strlcpy(o->last, famfs_entry_relpath(e), sizeof(o->last));
}

/* Entries another writer appended are reported when a create catches up with them. */
static void test_observer_hears_catch_up(struct fixture *f, gconstpointer data)
{
	struct famfs_file_spec mine = { .relpath = "mine", .size = 1 };
	struct famfs_file_spec theirs = { .relpath = "theirs", .size = 1 };
	struct famfs_fs *other = NULL;
	struct famfs_err err = { 0 };
	struct observed o = { 0 };

	g_assert_cmpint(famfs_fs_open(f->img, FAMFS_DEVICE_WRITE, test_host_uuid, &other, &err), ==, 0);
	g_assert_cmpint(famfs_fs_replay(other, NULL, NULL, NULL, &err), ==, 0);
	famfs_fs_set_observer(f->master, observe, &o);
	g_assert_cmpint(famfs_fs_create_files(other, &theirs, 1, NULL, NULL, &err), ==, 0);
	g_assert_cmpint(famfs_fs_create_files(f->master, &mine, 1, NULL, NULL, &err), ==, 0);
	g_assert_cmpuint(o.calls, ==, 1);
	g_assert_cmpstr(o.last, ==, "theirs");
	g_assert_cmpint(famfs_fs_mkdir(other, "dir", 0755, 0, 0, false, NULL, &err), ==, 0);
	g_assert_cmpint(famfs_fs_mkdir(f->master, "dir2", 0755, 0, 0, false, NULL, &err), ==, 0);
	g_assert_cmpuint(o.calls, ==, 2);
	g_assert_cmpstr(o.last, ==, "dir");
	famfs_fs_close(other);
}

/* An image cut short under the mapping is refused, not read (that would be SIGBUS). */
static void test_shrunk_image_refused(struct fixture *f, gconstpointer data)
{
	struct famfs_err err = { 0 };

	g_assert_cmpint(truncate(f->img, 6 * MiB), ==, 0);
	g_assert_cmpint(famfs_fs_replay(f->client, NULL, NULL, NULL, &err), ==, -EIO);
	g_assert_nonnull(strstr(err.msg, "shrank"));
	g_assert_cmpint(famfs_fs_create_files(f->master, &(struct famfs_file_spec){ .relpath = "x", .size = 1 },
					      1, NULL, NULL, &err), ==, -EIO);
	/* Grown back, the log is readable again. */
	g_assert_cmpint(truncate(f->img, 4 * GiB), ==, 0);
	g_assert_cmpint(famfs_fs_replay(f->client, NULL, NULL, NULL, &err), ==, 0);
}

/*
 * What the medium holds changed under an open file system: every replay and
 * every write says what changed and appends nothing, for good.
 */
static void test_medium_change_refused(struct fixture *f, gconstpointer data)
{
	struct famfs_file_spec spec = { .relpath = "a", .size = MiB, .mode = 0644 };
	struct famfs_file_spec other = { .relpath = "b", .size = MiB, .mode = 0644 };
	struct famfs_superblock *sb = medium_superblock(f->master);
	struct famfs_log_header *lh = medium_log(f->master);
	struct famfs_superblock saved;
	struct famfs_err err = { 0 };
	struct famfs_fs *fresh = NULL;
	uint64_t n;

	g_assert_cmpint(famfs_fs_create_files(f->master, &spec, 1, NULL, NULL, &err), ==, 0);
	g_assert_cmpint(famfs_fs_replay(f->client, NULL, NULL, NULL, &err), ==, 0);
	g_assert_cmpint(famfs_fs_revalidate(f->client, &err), ==, 0);

	/* a log that went backwards is never "no news" */
	n = next_index(f);
	lh->next_index = lh->next_seqnum = 0;
	g_assert_cmpint(famfs_fs_replay(f->client, NULL, NULL, NULL, &err), ==, -FAMFS_EMEDIUMCHANGED);
	g_assert_nonnull(strstr(err.msg, "log went backwards: next_index 0 is below the 1 entries already applied"));
	g_assert_cmpint(famfs_fs_create_files(f->master, &other, 1, NULL, NULL, &err), ==, -FAMFS_EMEDIUMCHANGED);
	g_assert_cmpint(famfs_fs_mkdir(f->master, "d", 0755, 0, 0, false, NULL, &err), ==, -FAMFS_EMEDIUMCHANGED);
	g_assert_cmpuint(next_index(f), ==, 0);
	lh->next_index = lh->next_seqnum = n;
	/* sticky: the log coming back does not make the medium trusted again */
	g_assert_cmpint(famfs_fs_create_files(f->master, &other, 1, NULL, NULL, &err), ==, -FAMFS_EMEDIUMCHANGED);
	g_assert_cmpuint(next_index(f), ==, n);

	/* another master host: the role decided at open no longer holds */
	memcpy(&saved, sb, sizeof(saved));
	g_assert_cmpint(famfs_fs_open(f->img, FAMFS_DEVICE_WRITE, test_host_uuid, &fresh, &err), ==, 0);
	memcpy(sb->system_uuid, test_other_uuid, 16);
	sb->crc = famfs_superblock_crc(sb);
	g_assert_cmpint(famfs_fs_create_files(fresh, &other, 1, NULL, NULL, &err), ==, -FAMFS_EMEDIUMCHANGED);
	g_assert_nonnull(strstr(err.msg, "superblock master host changed from "));
	fresh = famfs_fs_close(fresh);
	memcpy(sb, &saved, sizeof(saved));

	/* another device size (the device record is not under the CRC) */
	g_assert_cmpint(famfs_fs_open(f->img, 0, NULL, &fresh, &err), ==, 0);
	sb->dev_size -= 2 * MiB;
	g_assert_cmpint(famfs_fs_replay(fresh, NULL, NULL, NULL, &err), ==, -FAMFS_EMEDIUMCHANGED);
	g_assert_nonnull(strstr(err.msg, "superblock device size changed from "));
	fresh = famfs_fs_close(fresh);
	memcpy(sb, &saved, sizeof(saved));

	/* a destroyed superblock (mkfs.famfs -f -k) */
	g_assert_cmpint(famfs_fs_open(f->img, 0, NULL, &fresh, &err), ==, 0);
	sb->magic = 0;
	g_assert_cmpint(famfs_fs_replay(fresh, NULL, NULL, NULL, &err), ==, -FAMFS_EMEDIUMCHANGED);
	g_assert_nonnull(strstr(err.msg, "superblock no longer valid (superblock: bad magic 0x0"));
	fresh = famfs_fs_close(fresh);
	memcpy(sb, &saved, sizeof(saved));
	g_assert_cmpint(famfs_fs_replay(f->client, NULL, NULL, NULL, &err), ==, -FAMFS_EMEDIUMCHANGED);
}


/*
 * mkfs.famfs -f under an attached file system writes a new log, clears the
 * superblock, then writes the new one; a poll can land between any two of
 * those.  Each later stage replaces the message with what it says better,
 * so the reason ends as "UUID changed", never stuck at a halfway state.
 */
static void test_medium_change_stages(struct fixture *f, gconstpointer data)
{
	struct famfs_file_spec spec = { .relpath = "a", .size = MiB, .mode = 0644 };
	struct famfs_superblock *sb = medium_superblock(f->master);
	struct famfs_log_header *lh = medium_log(f->master);
	struct famfs_superblock saved;
	struct famfs_err err = { 0 };
	uint64_t n;

	g_assert_cmpint(famfs_fs_create_files(f->master, &spec, 1, NULL, NULL, &err), ==, 0);
	g_assert_cmpint(famfs_fs_replay(f->client, NULL, NULL, NULL, &err), ==, 0);
	g_assert_null(famfs_fs_medium_change(f->client));
	memcpy(&saved, sb, sizeof(saved));
	n = lh->next_index;

	lh->next_index = lh->next_seqnum = 0;
	g_assert_cmpint(famfs_fs_replay(f->client, NULL, NULL, NULL, &err), ==, -FAMFS_EMEDIUMCHANGED);
	g_assert_nonnull(strstr(famfs_fs_medium_change(f->client), "log went backwards"));
	g_assert_true(famfs_fs_medium_change_is_log_reset(f->client));

	memset(sb, 0, sizeof(*sb));
	g_assert_cmpint(famfs_fs_replay(f->client, NULL, NULL, NULL, &err), ==, -FAMFS_EMEDIUMCHANGED);
	g_assert_nonnull(strstr(famfs_fs_medium_change(f->client), "superblock no longer valid"));
	g_assert_false(famfs_fs_medium_change_is_log_reset(f->client));

	memcpy(sb, &saved, sizeof(saved));
	sb->uuid[0] ^= 0xff;
	sb->crc = famfs_superblock_crc(sb);
	g_assert_cmpint(famfs_fs_replay(f->client, NULL, NULL, NULL, &err), ==, -FAMFS_EMEDIUMCHANGED);
	g_assert_nonnull(strstr(famfs_fs_medium_change(f->client), "superblock UUID changed from "));
	g_assert_nonnull(strstr(err.msg, "superblock UUID changed from "));

	/* later damage does not hide what happened first */
	sb->magic = 0;
	g_assert_cmpint(famfs_fs_replay(f->client, NULL, NULL, NULL, &err), ==, -FAMFS_EMEDIUMCHANGED);
	g_assert_nonnull(strstr(famfs_fs_medium_change(f->client), "superblock UUID changed from "));

	memcpy(sb, &saved, sizeof(saved));
	lh->next_index = lh->next_seqnum = n;
	g_assert_cmpint(famfs_fs_replay(f->client, NULL, NULL, NULL, &err), ==, -FAMFS_EMEDIUMCHANGED);
}

/* The superblock region and the log, to prove a refused call wrote nothing. */
static GBytes *meta_bytes(struct fixture *f)
{
	return g_bytes_new(famfs_fs_device(f->master)->base, famfs_data_start(famfs_fs_layout(f->master)->log_len));
}

static void assert_meta_unchanged(struct fixture *f, GBytes *before)
{
	g_autoptr(GBytes) now = meta_bytes(f);

	g_assert_true(g_bytes_equal(before, now));
}

/*
 * A size near 2^64 once rounded to one 2 MiB unit and was logged before
 * the error: every reader refused the entry from then on.  Now nothing is
 * written, and the error says why.
 */
static void test_huge_size_leaves_log_untouched(struct fixture *f, gconstpointer data)
{
	static const uint64_t sizes[] = { UINT64_MAX, UINT64_MAX - 2 * MiB + 2 };
	struct famfs_interleave_params zero_strips = { .nbuckets = 1, .nstrips = 1, .chunk_size = 1ULL << 40 };
	struct famfs_interleave_params wrapping = { .nbuckets = 2, .nstrips = 2, .chunk_size = 1ULL << 63 };
	g_autoptr(GBytes) before = meta_bytes(f);
	struct famfs_replay_result res;
	struct famfs_err err = { 0 };
	uint64_t used = famfs_fs_allocator(f->master)->used;

	for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
		struct famfs_file_spec s = { .relpath = "big", .size = sizes[i], .mode = 0644 };
		g_autofree char *want = g_strdup_printf("\"big\": size %" G_GUINT64_FORMAT " overflows", sizes[i]);

		g_assert_cmpint(famfs_fs_create_files(f->master, &s, 1, NULL, NULL, &err), ==, -EFBIG);
		g_assert_true(g_str_has_prefix(err.msg, want));
	}
	/* Interleaved: nstrips * chunk_size past 2^64 (strips of length 0, a division by zero) */
	g_assert_cmpint(famfs_fs_create_files(f->master, &(struct famfs_file_spec){
		.relpath = "striped", .size = UINT64_MAX, .interleave = &zero_strips }, 1, NULL, NULL, &err), ==, -EFBIG);
	g_assert_nonnull(strstr(err.msg, "\"striped\": size 18446744073709551615 overflows"));
	g_assert_cmpint(famfs_fs_create_files(f->master, &(struct famfs_file_spec){
		.relpath = "striped", .size = 1ULL << 63, .interleave = &wrapping }, 1, NULL, NULL, &err), ==, -EFBIG);
	g_assert_nonnull(strstr(err.msg, "overflow"));

	assert_meta_unchanged(f, before);
	g_assert_cmpuint(famfs_fs_allocator(f->master)->used, ==, used);
	g_assert_cmpint(famfs_fs_replay(f->client, NULL, NULL, &res, &err), ==, 0);
	g_assert_cmpuint(res.applied + res.rejected, ==, 0);
	/* teardown: the medium checks clean */
}

/* [bad, good1, good2] once created good1 and good2 behind an error. */
static void test_batch_bad_first_creates_none(struct fixture *f, gconstpointer data)
{
	struct famfs_file_spec batch[3] = {
		{ .relpath = "bad", .size = UINT64_MAX, .mode = 0644, .display_path = "/run/famfs/x/bad" },
		{ .relpath = "good1", .size = MiB, .mode = 0644, .display_path = "/run/famfs/x/good1" },
		{ .relpath = "good2", .size = MiB, .mode = 0644, .display_path = "/run/famfs/x/good2" },
	};
	struct famfs_file_spec late[3] = { batch[1], batch[2],
		{ .relpath = "a//b", .size = MiB, .display_path = "/run/famfs/x/a//b" } };
	struct famfs_file_spec twice[3] = { batch[1], batch[2], batch[1] };
	g_autoptr(GBytes) before = meta_bytes(f);
	struct famfs_replay_result res;
	struct famfs_err err = { 0 };

	g_assert_cmpint(famfs_fs_create_files(f->master, batch, 3, NULL, NULL, &err), ==, -EFBIG);
	g_assert_true(g_str_has_prefix(err.msg, "element 0 (/run/famfs/x/bad): size 18446744073709551615 overflows"));
	g_assert_cmpint(famfs_fs_create_files(f->master, late, 3, NULL, NULL, &err), ==, -EINVAL);
	g_assert_true(g_str_has_prefix(err.msg, "element 2 (/run/famfs/x/a//b): "));
	g_assert_cmpint(famfs_fs_create_files(f->master, twice, 3, NULL, NULL, &err), ==, -EEXIST);
	g_assert_cmpstr(err.msg, ==, "element 2 (/run/famfs/x/good1): the same path as element 0 "
			"(a path appears twice in the batch)");
	/* without display names, the relpath */
	batch[0].display_path = NULL;
	g_assert_cmpint(famfs_fs_create_files(f->master, batch, 3, NULL, NULL, &err), ==, -EFBIG);
	g_assert_true(g_str_has_prefix(err.msg, "element 0 (\"bad\"): size"));

	assert_meta_unchanged(f, before);
	for (size_t i = 0; i < 3; i++)
		g_assert_cmpuint(famfs_ns_lookup(famfs_fs_namespace(f->master), batch[i].relpath, strlen(batch[i].relpath)),
				 ==, FAMFS_NS_NONE);
	g_assert_cmpint(famfs_fs_replay(f->client, NULL, NULL, &res, &err), ==, 0);
	g_assert_cmpuint(famfs_ns_count(famfs_fs_namespace(f->client), FAMFS_NS_FILE), ==, 0);
	/* the good ones alone go through */
	g_assert_cmpint(famfs_fs_create_files(f->master, &batch[1], 2, NULL, NULL, &err), ==, 0);
	g_assert_cmpuint(next_index(f), ==, 2);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
#define ADD(path, fn, gib) g_test_add(path, struct fixture, GSIZE_TO_POINTER(gib), setup, fn, teardown)
	ADD("/fs/create-and-follow", test_create_and_follow, 4);
	ADD("/fs/errors-leave-log-unchanged", test_errors_leave_log_unchanged, 4);
	ADD("/fs/batch-all-or-nothing", test_batch_all_or_nothing, 1);
	ADD("/fs/log-full", test_log_full, 32);
	ADD("/fs/torn-tail-retried", test_torn_tail_retried, 4);
	ADD("/fs/hostile-entries", test_hostile_entries, 4);
	ADD("/fs/bulk-replay-stalls", test_bulk_replay_stalls, 32);
	ADD("/fs/bulk-replay-stall-positions", test_bulk_replay_stall_positions, 32);
	ADD("/fs/copy-entry-rechecks", test_copy_entry_rechecks, 0);
	ADD("/fs/hostile-read-entry-rechecks", test_read_entry_rechecks, 4);
	ADD("/fs/observer-hears-catch-up", test_observer_hears_catch_up, 4);
	ADD("/fs/shrunk-image-refused", test_shrunk_image_refused, 4);
	ADD("/fs/medium-change-refused", test_medium_change_refused, 4);
	ADD("/fs/medium-change-stages", test_medium_change_stages, 4);
	ADD("/fs/huge-size-leaves-log-untouched", test_huge_size_leaves_log_untouched, 4);
	ADD("/fs/batch-bad-first-creates-none", test_batch_bad_first_creates_none, 4);
	return g_test_run();
}
