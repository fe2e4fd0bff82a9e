// SPDX-License-Identifier: LGPL-2.1-or-later
/* famfs_id, the udev probe, on images: properties, silence and read-only. */
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "../unit/testutil.h"

#define MiB (UINT64_C(1) << 20)

static char *scratch;

static char *probe(const char *image, const char *uuid_file, int *ret_status)
{
	const char *argv[] = { g_getenv("FAMFS_ID"), "--system-uuid-file", uuid_file, image, NULL };
	char *out = NULL;
	GError *error = NULL;
	int status;

	g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
				   &out, NULL, &status, &error));
	g_assert_no_error(error);
	*ret_status = WEXITSTATUS(status);
	return out;
}

static char *write_uuid_file(const char *name, const uint8_t *uuid)
{
	char *path = g_build_filename(scratch, name, NULL);
	char text[37];

	g_snprintf(text, sizeof(text), "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		   uuid[0], uuid[1], uuid[2], uuid[3], uuid[4], uuid[5], uuid[6], uuid[7], uuid[8],
		   uuid[9], uuid[10], uuid[11], uuid[12], uuid[13], uuid[14], uuid[15]);
	g_assert_true(g_file_set_contents(path, text, -1, NULL));
	return path;
}

static char *digest(const char *path)
{
	char *data = NULL, *sum;
	gsize len;

	g_assert_true(g_file_get_contents(path, &data, &len, NULL));
	sum = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)data, len);
	g_free(data);
	return sum;
}

static void test_properties_and_role(void)
{
	char *img = test_make_image(scratch, "fs.img", 64 * MiB, 8 * MiB, test_host_uuid);
	char *master = write_uuid_file("master", test_host_uuid);
	char *other = write_uuid_file("other", test_other_uuid);
	char *before = digest(img), *after, *out;
	int status;

	out = probe(img, master, &status);
	g_assert_cmpint(status, ==, 0);
	g_assert_nonnull(strstr(out, "ID_FS_TYPE=famfs\n"));
	g_assert_nonnull(strstr(out, "ID_FS_UUID="));
	g_assert_nonnull(strstr(out, "ID_FS_VERSION=48\n"));
	g_assert_nonnull(strstr(out, "FAMFS_LOG_LEN=8388608\n"));
	g_assert_nonnull(strstr(out, "FAMFS_ROLE=master\n"));
	g_assert_nonnull(strstr(out, "FAMFS_STATE=valid\n"));
	g_free(out);
	out = probe(img, other, &status);
	g_assert_nonnull(strstr(out, "FAMFS_ROLE=client\n"));
	g_free(out);
	/* A probe never writes. */
	after = digest(img);
	g_assert_cmpstr(before, ==, after);
	g_free(before);
	g_free(after);
	g_free(img);
	g_free(master);
	g_free(other);
}

static void test_not_famfs_is_silent(void)
{
	char *img = g_build_filename(scratch, "zero.img", NULL);
	char *out;
	int status;

	g_assert_true(g_file_set_contents(img, "not a file system at all", -1, NULL));
	out = probe(img, "/nonexistent", &status);
	g_assert_cmpint(status, ==, 0);
	g_assert_cmpstr(out, ==, "");
	g_free(out);
	g_free(img);
}

static void test_corrupt_is_marked(void)
{
	char *img = test_make_image(scratch, "bad.img", 64 * MiB, 8 * MiB, test_host_uuid);
	FILE *f = fopen(img, "r+");
	char *out;
	int status;

	/* Flip a bit of the superblock's log length: its CRC no longer matches. */
	g_assert_nonnull(f);
	fseek(f, 24, SEEK_SET);
	fputc(0x01, f);
	fclose(f);
	out = probe(img, "/nonexistent", &status);
	g_assert_cmpint(status, ==, 0);
	g_assert_nonnull(strstr(out, "ID_FS_TYPE=famfs\n"));
	g_assert_nonnull(strstr(out, "FAMFS_STATE=invalid\n"));
	g_assert_nonnull(strstr(out, "FAMFS_ERROR=superblock-crc\n"));
	g_assert_null(strstr(out, "ID_FS_UUID="));
	g_free(out);
	g_free(img);
}

int main(int argc, char **argv)
{
	int r;

	g_test_init(&argc, &argv, NULL);
	scratch = test_scratch_dir();
	g_test_add_func("/famfs_id/properties-and-role", test_properties_and_role);
	g_test_add_func("/famfs_id/not-famfs-is-silent", test_not_famfs_is_silent);
	g_test_add_func("/famfs_id/corrupt-is-marked", test_corrupt_is_marked);
	r = g_test_run();
	test_remove_dir(scratch);
	g_free(scratch);
	return r;
}
