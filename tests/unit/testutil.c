// SPDX-License-Identifier: LGPL-2.1-or-later
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "device.h"
#include "log.h"
#include "superblock.h"
#include "testutil.h"

const uint8_t test_host_uuid[16] = {
	0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x47, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x01 };
const uint8_t test_other_uuid[16] = {
	0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0x47, 0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf, 0xb0 };

char *test_scratch_dir(void)
{
	GError *error = NULL;
	char *dir = g_dir_make_tmp("famfs-test-XXXXXX", &error);

	g_assert_no_error(error);
	return dir;
}

char *test_make_image(const char *dir, const char *name, uint64_t size, uint64_t log_len,
		      const uint8_t *system_uuid)
{
	char *path = g_build_filename(dir, name, NULL);
	struct famfs_device *dev = NULL;
	struct famfs_err err = { 0 };
	struct famfs_superblock sb;
	FILE *f;

	f = fopen(path, "w");
	g_assert_nonnull(f);
	g_assert_cmpint(ftruncate(fileno(f), size), ==, 0);
	fclose(f);
	g_assert_cmpint(famfs_device_open(path, FAMFS_DEVICE_WRITE, &dev, &err), ==, 0);
	famfs_log_format(dev->base + FAMFS_LOG_OFFSET, log_len);
	famfs_superblock_init(&sb, &(struct famfs_superblock_params){
		.dev_size = size, .log_len = log_len, .system_uuid = system_uuid, .dev_name = path });
	memcpy(dev->base, &sb, sizeof(sb));
	famfs_device_close(dev);
	return path;
}

void test_remove_dir(const char *dir)
{
	GDir *d = g_dir_open(dir, 0, NULL);
	const char *name;

	if (!d)
		return;
	while ((name = g_dir_read_name(d))) {
		char *p = g_build_filename(dir, name, NULL);

		g_remove(p);
		g_free(p);
	}
	g_dir_close(d);
	g_rmdir(dir);
}

void test_argv_add_valist(GPtrArray *argv, const char *first, va_list ap)
{
	for (const char *a = first; a; a = va_arg(ap, const char *))
		g_ptr_array_add(argv, (char *)a);
	g_ptr_array_add(argv, NULL);
}
