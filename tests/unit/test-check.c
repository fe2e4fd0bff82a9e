// SPDX-License-Identifier: LGPL-2.1-or-later
/* The checker engine on media built in memory. */
#include <errno.h>
#include <glib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "integrity.h"
#include "log.h"
#include "superblock.h"
#include "testutil.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)
#define AU  (2 * MiB)

struct medium {
	uint8_t *base;
	uint64_t size;
	struct famfs_log_header *log;
};

/* A formatted medium of @size bytes in a mapping of @fd (-1: anonymous memory). */
static void medium_format(struct medium *m, uint64_t size, uint64_t log_len, int fd)
{
	struct famfs_superblock sb;

	m->size = size;
	m->base = fd < 0 ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
			 : mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	g_assert_true(m->base != MAP_FAILED);
	famfs_superblock_init(&sb, &(struct famfs_superblock_params){
		.dev_size = size, .log_len = log_len, .system_uuid = test_host_uuid, .dev_name = "mem" });
	memcpy(m->base, &sb, sizeof(sb));
	m->log = (void *)(m->base + FAMFS_LOG_OFFSET);
	famfs_log_format(m->log, log_len);
}

static void medium_new(struct medium *m, uint64_t size, uint64_t log_len)
{
	medium_format(m, size, log_len, -1);
}

static void add_file(struct medium *m, const char *path, uint64_t offset, uint64_t len)
{
	struct famfs_fmap map = { .ext_type = FAMFS_EXT_SIMPLE, .nextents = 1 };
	struct famfs_log_entry e;

	map.se[0] = (struct famfs_simple_extent){ 0, offset, len };
	g_assert_cmpint(famfs_entry_make_file(&e, path, len, 0644, 0, 0, &map, NULL), ==, 0);
	g_assert_cmpint(famfs_log_append(m->log, &e, 1, NULL), ==, 0);
}

/* Files "f0" to "f<n-1>", one unit each, side by side from @data on */
static void add_numbered_files(struct medium *m, unsigned int n, uint64_t data)
{
	for (unsigned int i = 0; i < n; i++) {
		char name[16];

		g_snprintf(name, sizeof(name), "f%u", i);
		add_file(m, name, data + (uint64_t)i * AU, AU);
	}
}

static struct famfs_check_report *check(struct medium *m)
{
	struct famfs_check_report *r = NULL;

	g_assert_cmpint(famfs_check_medium(m->base, m->size, 0, &r), ==, 0);
	return r;
}

static size_t count(const struct famfs_check_report *r, enum famfs_finding_code code)
{
	return r->per_code[code];
}

/* A large log takes the threaded CRC path; damage in the middle and at the tail is told apart. */
static void test_large_log_middle_and_tail(void)
{
	struct medium m;
	struct famfs_log_entry *slots;
	struct famfs_check_report *r;
	uint64_t data = famfs_data_start(16 * MiB);

	medium_new(&m, data + 30000 * AU, 16 * MiB);
	add_numbered_files(&m, 30000, data);
	slots = famfs_log_entries(m.log);
	slots[12345].crc ^= 0x10;          /* damage in the middle: not repairable */
	slots[29998].seqnum = 7;           /* the last two: a torn tail */
	slots[29999].crc ^= 1;
	r = check(&m);
	g_assert_cmpuint(r->summary.bad_entries, ==, 3);
	g_assert_cmpuint(r->summary.files, ==, 29997);
	g_assert_cmpuint(count(r, FAMFS_F_ENTRY_CRC), ==, 2);
	g_assert_cmpuint(count(r, FAMFS_F_ENTRY_SEQNUM), ==, 1);
	g_assert_true(r->repair.needed);
	g_assert_cmpuint(r->repair.new_next_index, ==, 29998);
	/* the tail's finding comes first, with the header's, though known only after the walk */
	g_assert_cmpint(r->findings[0].code, ==, FAMFS_F_LOG_NEXT_INDEX);
	g_assert_cmpint(r->findings[1].code, ==, FAMFS_F_ENTRY_CRC);
	g_assert_false(famfs_check_repair_fixes_all(r));
	famfs_check_report_free(r);

	slots[12345].crc ^= 0x10;
	r = check(&m);
	g_assert_true(famfs_check_repair_fixes_all(r));
	famfs_check_report_free(r);
	munmap(m.base, m.size);
}

/*
 * The background integrity pass gives each entry the code a serial check
 * gives it, with damage on both sides of chunk boundaries, whatever the
 * points the caller waits at.
 */
static void test_integrity_pass_matches_serial(void)
{
	static const unsigned damaged[] = { 0, 2047, 2048, 8191, 8192, 20000, 29999 };
	static const uint64_t waits[] = { 1, 2049, 2049, 10000, 29999, 30000 };
	struct famfs_integrity_pass *pass;
	struct famfs_log_entry *slots;
	uint64_t data = famfs_data_start(16 * MiB), n = 30000;
	uint8_t *codes = g_malloc(n);
	struct medium m;

	medium_new(&m, data + n * AU, 16 * MiB);
	add_numbered_files(&m, n, data);
	slots = famfs_log_entries(m.log);
	for (size_t k = 0; k < G_N_ELEMENTS(damaged); k++)
		slots[damaged[k]].crc ^= 0x4;
	slots[5000].seqnum = 1;
	memset(codes, 0xee, n);
	g_assert_cmpint(famfs_integrity_start(slots, n, -1, 0, codes, NULL, &pass), ==, 0);
	for (size_t k = 0; k < G_N_ELEMENTS(waits); k++) {
		famfs_integrity_wait(pass, waits[k]);
		for (uint64_t i = 0; i < waits[k]; i++)
			g_assert_cmpint(codes[i], ==, famfs_log_entry_check_integrity(&slots[i], i, NULL));
	}
	famfs_integrity_finish(pass);
	g_assert_cmpint(codes[2047], ==, FAMFS_F_ENTRY_CRC);
	g_assert_cmpint(codes[5000], ==, FAMFS_F_ENTRY_SEQNUM);
	g_assert_cmpint(codes[5001], ==, FAMFS_OK);
	g_free(codes);
	munmap(m.base, m.size);
}

/* Out-of-order and nested extents: every overlapping file is named with a partner. */
/* A medium in a memfd: mapped like a device and readable with read(2). */
static int medium_new_shared(struct medium *m, uint64_t size, uint64_t log_len)
{
	int fd = memfd_create("famfs-medium", 0);

	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(ftruncate(fd, (off_t)size), ==, 0);
	medium_format(m, size, log_len, fd);
	return fd;
}

/*
 * Read into the ring, every entry the caller is handed is the entry at that
 * index, whatever the pace of the caller, for a walk that releases and
 * waits as the checker does and for one that waits as far as it may.
 */
static void test_integrity_ring_hands_out_each_entry(void)
{
	uint64_t data = famfs_data_start(16 * MiB), n = 30001, reach = famfs_integrity_reach();
	struct famfs_integrity_pass *pass;
	struct famfs_log_entry *slots;
	uint8_t *codes = g_malloc(n);
	struct medium m;
	int fd = medium_new_shared(&m, data + n * AU, 16 * MiB);

	add_numbered_files(&m, n, data);
	slots = famfs_log_entries(m.log);
	slots[4097].crc ^= 1;
	for (unsigned int round = 0; round < 8; round++) {
		uint64_t step = round % 2 ? 1024 : reach;

		g_assert_cmpint(famfs_integrity_start(slots, n, fd, (const uint8_t *)slots - m.base, codes, NULL, &pass), ==, 0);
		for (uint64_t i = 0; i < n; i++) {
			if (i % step == 0) {
				famfs_integrity_release(pass, i);
				famfs_integrity_wait(pass, i + step);
				if (round >= 4)
					g_usleep(50);   /* a slow walker: the workers wait for their slots */
			}
			g_assert_true(memcmp(famfs_integrity_entry(pass, i), &slots[i], sizeof(slots[i])) == 0);
			g_assert_cmpint(codes[i], ==, i == 4097 ? FAMFS_F_ENTRY_CRC : FAMFS_OK);
		}
		famfs_integrity_finish(pass);
	}
	g_free(codes);
	munmap(m.base, m.size);
	close(fd);
}

struct hook_record {
	const struct famfs_log_entry *slots;
	const uint8_t *codes;
	int calls[16];
	uint64_t slot_chunk[FAMFS_INTEGRITY_RING_CHUNKS];
	int bad;   /* the hook's own failures, counted: it runs on the workers */
};

static void record_chunk(void *arg, const struct famfs_log_entry *e, uint64_t first, uint64_t end)
{
	struct hook_record *h = arg;
	uint64_t chunk = first / FAMFS_INTEGRITY_CHUNK_ENTRIES;

	__atomic_add_fetch(&h->calls[chunk], 1, __ATOMIC_RELAXED);
	for (uint64_t k = first; k < end; k++)
		if (memcmp(&e[k], &h->slots[k], sizeof(e[k])) != 0 ||
		    h->codes[k] != famfs_log_entry_check_integrity(&h->slots[k], k, NULL))
			__atomic_add_fetch(&h->bad, 1, __ATOMIC_RELAXED);
	h->slot_chunk[chunk % FAMFS_INTEGRITY_RING_CHUNKS] = chunk;
}

/*
 * The per-chunk hook runs once for each chunk, after its codes, on entries
 * equal to the log's, read into the ring or mapped; and what it leaves in a
 * slot stays there until the walk releases that chunk, for small logs (no
 * threads) and large ones, walked fast or slowly.
 */
static void test_integrity_hook_sees_each_chunk_once(void)
{
	static const uint64_t sizes[] = { 3000, 30001 };
	uint64_t data = famfs_data_start(16 * MiB);
	struct famfs_log_entry *slots;
	struct medium m;
	int fd = medium_new_shared(&m, data + 30001 * AU, 16 * MiB);
	uint8_t *codes = g_malloc(30001);

	add_numbered_files(&m, 30001, data);
	slots = famfs_log_entries(m.log);
	slots[2049].crc ^= 1;
	for (unsigned int round = 0; round < 8; round++) {
		uint64_t n = sizes[round % 2], nchunks = (n + FAMFS_INTEGRITY_CHUNK_ENTRIES - 1) / FAMFS_INTEGRITY_CHUNK_ENTRIES;
		int use_fd = round & 2 ? fd : -1;
		struct hook_record h = { .slots = slots, .codes = codes };
		const struct famfs_integrity_hook hook = { .prepare = record_chunk, .arg = &h };
		struct famfs_integrity_pass *pass;

		g_assert_cmpuint(nchunks, <=, G_N_ELEMENTS(h.calls));
		g_assert_cmpint(famfs_integrity_start(slots, n, use_fd, (const uint8_t *)slots - m.base, codes,
						      &hook, &pass), ==, 0);
		for (uint64_t i = 0; i < n; i++) {
			uint64_t chunk = i / FAMFS_INTEGRITY_CHUNK_ENTRIES;

			if (i % 1024 == 0) {
				famfs_integrity_release(pass, i);
				famfs_integrity_wait(pass, i + 1024);
				if (round >= 4)
					g_usleep(50);
			}
			g_assert_cmpuint(h.slot_chunk[chunk % FAMFS_INTEGRITY_RING_CHUNKS], ==, chunk);
		}
		famfs_integrity_finish(pass);
		g_assert_cmpint(h.bad, ==, 0);
		for (uint64_t k = 0; k < nchunks; k++)
			g_assert_cmpint(h.calls[k], ==, 1);
	}
	g_free(codes);
	munmap(m.base, m.size);
	close(fd);
}

/*
 * A check that reads the log (an image file, a pmem device) reports what a
 * check of the mapping reports, finding for finding, on a log with damage,
 * a duplicate, a cross-link and directories spread over many chunks.
 */
static void test_device_check_matches_mapping(void)
{
	uint64_t data = famfs_data_start(16 * MiB), n = 24000;
	struct famfs_check_report *a, *b;
	struct famfs_device dev = { .kind = FAMFS_DEVICE_IMAGE };
	struct famfs_log_entry e, *slots;
	struct medium m;
	int fd = medium_new_shared(&m, data + n * AU, 16 * MiB);

	for (unsigned int i = 0; i < n; i++) {
		char name[40];

		if (i % 1000 == 0) {
			g_snprintf(name, sizeof(name), "d%u", i / 1000);
			g_assert_cmpint(famfs_entry_make_mkdir(&e, name, 0755, 0, 0, NULL), ==, 0);
			g_assert_cmpint(famfs_log_append(m.log, &e, 1, NULL), ==, 0);
			continue;
		}
		/* files go into the directory of 7 thousand entries back, in another chunk */
		g_snprintf(name, sizeof(name), "d%u/f%u", i >= 7000 ? i / 1000 - 7 : i / 1000, i);
		if (i == 15000 + 17)
			g_snprintf(name, sizeof(name), "d0/f1");                /* a duplicate */
		add_file(&m, name, data + (uint64_t)(i == 22222 ? 333 : i) * AU, AU);   /* 22222 cross-links 333 */
	}
	slots = famfs_log_entries(m.log);
	slots[9999].crc ^= 8;
	dev.fd = fd;
	dev.base = m.base;
	dev.size = m.size;
	g_assert_cmpint(famfs_check_medium(m.base, m.size, 0, &a), ==, 0);
	g_assert_cmpint(famfs_check_device(&dev, 0, &b), ==, 0);
	g_assert_cmpuint(a->summary.files, ==, n - n / 1000 - 2);
	g_assert_cmpuint(a->per_code[FAMFS_F_PATH_DUPLICATE], ==, 1);
	g_assert_cmpuint(a->per_code[FAMFS_F_CROSSLINK], ==, 1);
	g_assert_cmpuint(a->per_code[FAMFS_F_ENTRY_CRC], ==, 1);
	g_assert_true(memcmp(&a->summary, &b->summary, sizeof(a->summary)) == 0);
	g_assert_cmpuint(a->nfindings, ==, b->nfindings);
	for (size_t k = 0; k < a->nfindings; k++) {
		g_assert_cmpint(a->findings[k].code, ==, b->findings[k].code);
		g_assert_cmpint(a->findings[k].index, ==, b->findings[k].index);
		g_assert_cmpstr(a->findings[k].message, ==, b->findings[k].message);
	}
	famfs_check_report_free(a);
	famfs_check_report_free(b);
	munmap(m.base, m.size);
	close(fd);
}

static void test_crosslink_pairs(void)
{
	struct medium m;
	struct famfs_check_report *r;
	uint64_t data = famfs_data_start(8 * MiB);
	bool seen_inner = false, seen_tail = false;

	medium_new(&m, GiB, 8 * MiB);
	add_file(&m, "late", data + 40 * AU, 2 * AU);
	add_file(&m, "big", data + 10 * AU, 20 * AU);
	add_file(&m, "inner", data + 12 * AU, AU);
	add_file(&m, "tail", data + 29 * AU, 2 * AU);
	add_file(&m, "alone", data + 50 * AU, AU);
	r = check(&m);
	g_assert_cmpuint(count(r, FAMFS_F_CROSSLINK), ==, 2);
	for (size_t k = 0; k < r->nfindings; k++) {
		const struct famfs_finding *f = &r->findings[k];

		if (f->code != FAMFS_F_CROSSLINK)
			continue;
		g_assert_cmpstr(f->other_path, ==, "big");
		if (strcmp(f->path, "inner") == 0) {
			seen_inner = true;
			g_assert_cmpuint(f->offset, ==, data + 12 * AU);
			g_assert_cmpuint(f->length, ==, AU);
		} else if (strcmp(f->path, "tail") == 0) {
			seen_tail = true;
			g_assert_cmpuint(f->offset, ==, data + 29 * AU);
			g_assert_cmpuint(f->length, ==, AU);
		}
	}
	g_assert_true(seen_inner && seen_tail);
	g_assert_cmpuint(r->summary.crosslinked_units, ==, 2);
	g_assert_cmpuint(r->summary.allocated, ==, data + (20 + 1 + 2 + 1) * AU);
	famfs_check_report_free(r);
	munmap(m.base, m.size);
}

/* A garbage next_index: the written log is the run of intact slots. */
static void test_garbage_next_index(void)
{
	struct medium m;
	struct famfs_check_report *r;
	uint64_t data = famfs_data_start(8 * MiB);

	medium_new(&m, GiB, 8 * MiB);
	add_numbered_files(&m, 5, data);
	m.log->next_index = UINT64_MAX / 3;
	r = check(&m);
	g_assert_cmpuint(count(r, FAMFS_F_LOG_NEXT_INDEX), ==, 1);
	g_assert_true(r->repair.needed);
	g_assert_cmpuint(r->repair.new_next_index, ==, 5);
	g_assert_cmpuint(r->summary.files, ==, 5);
	g_assert_true(famfs_check_repair_fixes_all(r));
	famfs_check_report_free(r);
	munmap(m.base, m.size);
}

/* Too small to hold what the superblock claims: fatal, and nothing past it is read. */
static void test_truncated_medium(void)
{
	struct medium m;
	struct famfs_check_report *r = NULL;

	medium_new(&m, GiB, 8 * MiB);
	g_assert_cmpint(famfs_check_medium(m.base, 4 * MiB, 0, &r), ==, 0);
	g_assert_cmpuint(count(r, FAMFS_F_SB_DEV_SIZE), ==, 1);
	g_assert_cmpuint(count(r, FAMFS_F_DEVICE_TOO_SMALL), ==, 1);
	g_assert_cmpuint(r->by_severity[FAMFS_SEV_FATAL], ==, 1);
	famfs_check_report_free(r);
	g_assert_cmpint(famfs_check_medium(m.base, 7, 0, &r), ==, 0);
	g_assert_cmpuint(count(r, FAMFS_F_DEVICE_TOO_SMALL), ==, 1);
	famfs_check_report_free(r);
	munmap(m.base, m.size);
}

/*
 * A view of only the superblock region and the log (what a kernel mount's
 * .meta files map) is checked like the whole medium, and nothing past it
 * is read: the bytes after it are PROT_NONE here, so a read would crash.
 * A superblock that claims a longer log than the view holds is fatal.
 */
static void test_view_reads_only_the_view(void)
{
	struct medium m;
	struct famfs_check_report *whole = NULL, *r = NULL;
	uint64_t data = famfs_data_start(8 * MiB), view = FAMFS_LOG_OFFSET + 8 * MiB;

	medium_new(&m, GiB, 8 * MiB);
	add_file(&m, "a", data, AU);
	add_file(&m, "b", data + AU, AU);
	add_file(&m, "c", data + AU, AU);   /* cross-linked with b */
	whole = check(&m);
	g_assert_cmpint(mprotect(m.base + view, m.size - view, PROT_NONE), ==, 0);
	g_assert_cmpint(famfs_check_view(m.base, view, m.size, 0, &r), ==, 0);
	g_assert_cmpuint(r->nfindings, ==, whole->nfindings);
	g_assert_cmpuint(count(r, FAMFS_F_CROSSLINK), ==, 1);
	g_assert_cmpuint(r->summary.log_used, ==, 3);
	g_assert_cmpuint(r->summary.capacity, ==, GiB);
	famfs_check_report_free(r);
	/*
	 * Half the log mapped, and written entries past that half: the
	 * superblock's log does not fit the view, and it is not read.
	 */
	g_assert_cmpint(mprotect(m.base + view, m.size - view, PROT_READ | PROT_WRITE), ==, 0);
	for (unsigned int i = 0; i < 8000; i++) {
		char name[16];

		g_snprintf(name, sizeof(name), "more%u", i);
		add_file(&m, name, data + 2 * AU, AU);
	}
	view = FAMFS_LOG_OFFSET + 4 * MiB;
	g_assert_cmpuint(sizeof(struct famfs_log_header) + m.log->next_index * sizeof(struct famfs_log_entry), >,
			 4 * MiB);
	g_assert_cmpint(mprotect(m.base + view, m.size - view, PROT_NONE), ==, 0);
	g_assert_cmpint(famfs_check_view(m.base, view, m.size, 0, &r), ==, 0);
	g_assert_cmpuint(count(r, FAMFS_F_SB_LOG_LEN), ==, 1);
	g_assert_cmpuint(r->by_severity[FAMFS_SEV_FATAL], ==, 1);
	famfs_check_report_free(r);
	/* Not even a log header, or more than the medium: refused. */
	g_assert_cmpint(famfs_check_view(m.base, FAMFS_LOG_OFFSET, m.size, 0, &r), ==, -EINVAL);
	g_assert_cmpint(famfs_check_view(m.base, m.size + 1, m.size, 0, &r), ==, -EINVAL);
	famfs_check_report_free(whole);
	munmap(m.base, m.size);
}

/* A flood of one finding is capped, and counted. */
static void test_findings_capped(void)
{
	struct medium m;
	struct famfs_check_report *r;
	uint64_t data = famfs_data_start(8 * MiB);

	medium_new(&m, GiB, 8 * MiB);
	for (unsigned int i = 0; i < 3000; i++) {
		char name[16];

		g_snprintf(name, sizeof(name), "same%u", i);
		add_file(&m, name, data, AU);
	}
	r = check(&m);
	g_assert_cmpuint(count(r, FAMFS_F_CROSSLINK), ==, 2999);
	g_assert_cmpuint(r->suppressed, ==, 2999 - FAMFS_CHECK_MAX_PER_CODE);
	g_assert_cmpuint(famfs_check_report_errors(r), ==, 2999);
	famfs_check_report_free(r);
	munmap(m.base, m.size);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/check/large-log-middle-and-tail", test_large_log_middle_and_tail);
	g_test_add_func("/check/integrity-pass-matches-serial", test_integrity_pass_matches_serial);
	g_test_add_func("/check/integrity-ring-hands-out-each-entry", test_integrity_ring_hands_out_each_entry);
	g_test_add_func("/check/integrity-hook-sees-each-chunk-once", test_integrity_hook_sees_each_chunk_once);
	g_test_add_func("/check/device-check-matches-mapping", test_device_check_matches_mapping);
	g_test_add_func("/check/crosslink-pairs", test_crosslink_pairs);
	g_test_add_func("/check/garbage-next-index", test_garbage_next_index);
	g_test_add_func("/check/truncated-medium", test_truncated_medium);
	g_test_add_func("/check/view-reads-only-the-view", test_view_reads_only_the_view);
	g_test_add_func("/check/findings-capped", test_findings_capped);
	return g_test_run();
}
