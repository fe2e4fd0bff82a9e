// SPDX-License-Identifier: LGPL-2.1-or-later
/* The OMF.md test vectors and round trips of the on-media structures. */
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "omf.h"
#include "superblock.h"
#include "testutil.h"

#define MiB (1ULL << 20)

static void test_sizes_and_offsets(void)
{
	g_assert_cmpuint(sizeof(struct famfs_superblock), ==, 200);
	g_assert_cmpuint(sizeof(struct famfs_log_header), ==, 48);
	g_assert_cmpuint(sizeof(struct famfs_log_entry), ==, 544);
	g_assert_cmpuint(sizeof(struct famfs_log_file_meta), ==, 520);
	g_assert_cmpuint(sizeof(struct famfs_log_mkdir), ==, 92);
	g_assert_cmpuint(sizeof(struct famfs_log_add_daxdev), ==, 32);
	g_assert_cmpuint(offsetof(struct famfs_superblock, crc), ==, 96);
	g_assert_cmpuint(offsetof(struct famfs_superblock, flags), ==, 104);
	g_assert_cmpuint(offsetof(struct famfs_superblock, dev_size), ==, 112);
	g_assert_cmpuint(offsetof(struct famfs_superblock, dev_name), ==, 136);
	g_assert_cmpuint(offsetof(struct famfs_log_header, next_index), ==, 40);
	g_assert_cmpuint(offsetof(struct famfs_log_entry, file.relpath), ==, 40);
	g_assert_cmpuint(offsetof(struct famfs_log_entry, file.nextents), ==, 128);
	g_assert_cmpuint(offsetof(struct famfs_log_entry, file.se), ==, 136);
	g_assert_cmpuint(offsetof(struct famfs_log_entry, file.ie[0].strips), ==, 152);
	g_assert_cmpuint(offsetof(struct famfs_log_entry, mkdir.relpath), ==, 28);
	g_assert_cmpuint(offsetof(struct famfs_log_entry, daxdev.index), ==, 40);
	g_assert_cmpuint(offsetof(struct famfs_log_entry, crc), ==, 536);
}

static void test_log_capacity(void)
{
	g_assert_cmpuint(famfs_log_slots(8 * MiB), ==, 15420);
	g_assert_cmpuint(famfs_log_slots(16 * MiB), ==, 30840);
	g_assert_cmpuint(famfs_log_slots(64 * MiB), ==, 123361);
	g_assert_cmpuint(famfs_log_slots(256 * MiB), ==, 493447);
	g_assert_cmpuint(famfs_log_slots(10), ==, 0);
}

static void test_empty_log_header_crc(void)
{
	void *log = g_malloc(16 * MiB);
	struct famfs_log_header *h = log;

	famfs_log_format(log, 8 * MiB);
	g_assert_cmpuint(h->last_index, ==, 15419);
	g_assert_cmpuint(h->crc, ==, 0xa5875078);
	g_assert_cmpuint(famfs_log_header_validate(h, 8 * MiB, NULL), ==, FAMFS_OK);
	famfs_log_format(log, 16 * MiB);
	g_assert_cmpuint(h->last_index, ==, 30839);
	g_assert_cmpuint(h->crc, ==, 0x3514e0d7);
	/* The CRC covers magic, length and last index only. */
	h->next_index = 3;
	h->next_seqnum = 3;
	g_assert_cmpuint(famfs_log_header_crc(h), ==, 0x3514e0d7);
	g_free(log);
}

static void test_superblock_round_trip(void)
{
	struct famfs_superblock sb, copy;
	struct famfs_err err = { 0 };

	famfs_superblock_init(&sb, &(struct famfs_superblock_params){
		.dev_size = 4ULL << 30, .log_len = 8 * MiB,
		.system_uuid = test_host_uuid, .dev_name = "/dev/dax0.0" });
	g_assert_cmpuint(sb.magic, ==, 0x87b282ff);
	g_assert_cmpuint(sb.version, ==, 48);
	g_assert_cmpuint(sb.crc, ==, famfs_crc32(&sb, 96));
	g_assert_cmpstr(sb.dev_name, ==, "/dev/dax0.0");
	g_assert_cmpmem(sb.system_uuid, 16, test_host_uuid, 16);
	g_assert_cmpint(famfs_superblock_validate(&sb, 4ULL << 30, &err), ==, FAMFS_OK);

	/* Flags and the device record are outside the CRC. */
	copy = sb;
	copy.flags = FAMFS_SB_PRIMARY;
	g_assert_cmpint(famfs_superblock_validate(&copy, 4ULL << 30, NULL), ==, FAMFS_OK);
	copy = sb;
	copy.log_len = 16 * MiB;
	g_assert_cmpint(famfs_superblock_validate(&copy, 4ULL << 30, &err), ==, FAMFS_F_SB_CRC);
	g_assert_nonnull(strstr(err.msg, "CRC"));
	g_assert_cmpint(famfs_superblock_validate(&sb, (4ULL << 30) - 1, &err), ==, FAMFS_F_SB_DEV_SIZE);
	g_assert_cmpint(famfs_superblock_validate(&sb, 100, &err), ==, FAMFS_F_DEVICE_TOO_SMALL);
	copy = sb;
	copy.version = 47;
	copy.crc = famfs_superblock_crc(&copy);
	g_assert_cmpint(famfs_superblock_validate(&copy, 4ULL << 30, NULL), ==, FAMFS_OK);
	copy.version = 49;
	copy.crc = famfs_superblock_crc(&copy);
	g_assert_cmpint(famfs_superblock_validate(&copy, 4ULL << 30, NULL), ==, FAMFS_F_SB_VERSION);
}

static void test_devname_without_nul(void)
{
	struct famfs_superblock sb;
	char name[100];

	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	famfs_superblock_init(&sb, &(struct famfs_superblock_params){
		.dev_size = 1ULL << 30, .log_len = 8 * MiB,
		.system_uuid = test_host_uuid, .dev_name = name });
	g_assert_cmpmem(sb.dev_name, 64, name, 64);
}

static void test_entry_round_trip(void)
{
	void *log = g_malloc(8 * MiB);
	struct famfs_log_header *h = log;
	struct famfs_log_entry e[2];
	struct famfs_fmap map = { .ext_type = FAMFS_EXT_SIMPLE, .nextents = 1 };
	struct famfs_layout layout = { .dev_size = 1ULL << 30, .log_len = 8 * MiB };
	const struct famfs_log_entry *slots;
	struct famfs_fmap back;

	famfs_log_format(log, 8 * MiB);
	map.se[0] = (struct famfs_simple_extent){ 0, 10 * MiB, 2 * MiB };
	g_assert_cmpint(famfs_entry_make_file(&e[0], "a_file", 4096, 0100644, 33, 44, &map, NULL), ==, 0);
	g_assert_cmpint(famfs_entry_make_mkdir(&e[1], "dir", 0755, 0, 0, NULL), ==, 0);
	g_assert_cmpuint(e[0].file.mode, ==, 0644);   /* permission bits only, like upstream */
	g_assert_cmpint(famfs_log_append(h, e, 2, NULL), ==, 0);
	g_assert_cmpuint(h->next_index, ==, 2);
	g_assert_cmpuint(h->next_seqnum, ==, 2);

	slots = famfs_log_entries(h);
	for (unsigned int i = 0; i < 2; i++) {
		g_assert_cmpuint(slots[i].seqnum, ==, i);
		g_assert_cmpint(famfs_log_entry_check_integrity(&slots[i], i, NULL), ==, FAMFS_OK);
		g_assert_cmpint(famfs_log_entry_check_semantics(&slots[i], &layout, NULL), ==, FAMFS_OK);
	}
	/* Seqnum must equal the slot index. */
	g_assert_cmpint(famfs_log_entry_check_integrity(&slots[1], 0, NULL), ==, FAMFS_F_ENTRY_SEQNUM);
	famfs_entry_get_fmap(&slots[0], &back);
	g_assert_cmpmem(&back, sizeof(back), &map, sizeof(map));
	g_assert_cmpstr(famfs_entry_relpath(&slots[1]), ==, "dir");
	g_assert_cmpuint(famfs_fmap_capacity(&back), ==, 2 * MiB);

	/* Padding and the unused union tail are zero, so the CRC matches other writers'. */
	for (size_t k = 16 + 120 + 24; k < 536; k++)
		g_assert_cmpuint(((const uint8_t *)&slots[0])[k], ==, 0);
	g_assert_cmpuint(slots[0].pad0, ==, 0);
	g_free(log);
}

static void test_append_full_log(void)
{
	void *log = g_malloc(8 * MiB);
	struct famfs_log_header *h = log;
	struct famfs_log_entry *batch = g_new0(struct famfs_log_entry, 15420);
	struct famfs_log_entry one;
	struct famfs_err err = { 0 };

	famfs_log_format(log, 8 * MiB);
	for (unsigned int i = 0; i < 15420; i++) {
		char name[16];

		g_snprintf(name, sizeof(name), "d%05u", i);
		g_assert_cmpint(famfs_entry_make_mkdir(&batch[i], name, 0755, 0, 0, NULL), ==, 0);
	}
	/* All or nothing: one too many fails and writes nothing. */
	g_assert_cmpint(famfs_log_append(h, batch, 15420, NULL), ==, 0);
	g_assert_cmpuint(famfs_log_free_slots(h), ==, 0);
	famfs_entry_make_mkdir(&one, "more", 0755, 0, 0, NULL);
	g_assert_cmpint(famfs_log_append(h, &one, 1, &err), ==, -FAMFS_ELOGFULL);
	g_assert_nonnull(strstr(err.msg, "log is full"));
	g_assert_cmpuint(h->next_index, ==, 15420);
	g_free(batch);
	g_free(log);
}

static void test_crc32_vector(void)
{
	/* The standard CRC-32 check value. */
	g_assert_cmpuint(famfs_crc32("123456789", 9), ==, 0xcbf43926);
	g_assert_cmpuint(famfs_crc32("", 0), ==, 0);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/omf/sizes-and-offsets", test_sizes_and_offsets);
	g_test_add_func("/omf/log-capacity", test_log_capacity);
	g_test_add_func("/omf/empty-log-header-crc", test_empty_log_header_crc);
	g_test_add_func("/omf/crc32", test_crc32_vector);
	g_test_add_func("/omf/superblock-round-trip", test_superblock_round_trip);
	g_test_add_func("/omf/devname-without-nul", test_devname_without_nul);
	g_test_add_func("/omf/entry-round-trip", test_entry_round_trip);
	g_test_add_func("/omf/append-full-log", test_append_full_log);
	return g_test_run();
}
