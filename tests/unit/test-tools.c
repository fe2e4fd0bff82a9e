// SPDX-License-Identifier: LGPL-2.1-or-later
/* mkfs.famfs and fsck.famfs as a user runs them. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

static char *scratch;
static char *uuid_file;

/* Runs a tool; returns its exit status and its output (stdout + stderr). */
static int run(char **output, const char *tool_env, ...)
{
	GPtrArray *argv = g_ptr_array_new();
	const char *tool = g_getenv(tool_env);
	char *out = NULL, *err = NULL;
	GError *error = NULL;
	va_list ap;
	int status;

	g_assert_nonnull(tool);
	va_start(ap, tool_env);
	test_argv_add_valist(argv, tool, ap);
	va_end(ap);
	g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
				   &out, &err, &status, &error));
	g_assert_no_error(error);
	g_ptr_array_free(argv, TRUE);
	if (output)
		*output = g_strconcat(out, err, NULL);
	g_free(out);
	g_free(err);
	g_assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static char *sparse_file(const char *name, uint64_t size)
{
	char *path = g_build_filename(scratch, name, NULL);
	FILE *f = fopen(path, "w");

	g_assert_nonnull(f);
	g_assert_cmpint(ftruncate(fileno(f), size), ==, 0);
	fclose(f);
	return path;
}

static void test_mkfs_then_fsck_clean(void)
{
	static const struct { uint64_t size; const char *loglen; } cases[] = {
		{ 16 * MiB, "8M" },
		{ 64 * MiB, "8m" },
		{ GiB, "16M" },
		{ 4 * GiB, "8M" },
		{ 8 * GiB, "64M" },
		{ 300 * GiB, "256M" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		char *img = sparse_file("img", cases[i].size), *out;

		g_assert_cmpint(run(&out, "MKFS_FAMFS", "-u", uuid_file, "-l", cases[i].loglen, img, NULL), ==, 0);
		g_assert_nonnull(strstr(out, "famfs file system created"));
		g_free(out);
		g_assert_cmpint(run(&out, "FSCK_FAMFS", "-u", uuid_file, img, NULL), ==, 0);
		g_assert_nonnull(strstr(out, ": clean"));
		g_assert_nonnull(strstr(out, "this host is master"));
		g_assert_nonnull(strstr(out, "0 files, 0 directories"));
		g_free(out);
		g_assert_cmpint(run(&out, "FSCK_FAMFS", "--json", img, NULL), ==, 0);
		g_assert_nonnull(strstr(out, "\"exit_code\":0"));
		g_free(out);
		g_remove(img);
		g_free(img);
	}
}

static void test_mkfs_refusals(void)
{
	char *img = sparse_file("img", GiB), *small = sparse_file("small", 11 * MiB), *out;

	g_assert_cmpint(run(NULL, "MKFS_FAMFS", "-u", uuid_file, img, NULL), ==, 0);
	/* An existing file system needs -f. */
	g_assert_cmpint(run(&out, "MKFS_FAMFS", "-u", uuid_file, img, NULL), ==, 1);
	g_assert_nonnull(strstr(out, "already holds a famfs file system"));
	g_free(out);
	g_assert_cmpint(run(NULL, "MKFS_FAMFS", "-f", "-u", uuid_file, img, NULL), ==, 0);
	/* -k needs -f, then kills the superblock. */
	g_assert_cmpint(run(&out, "MKFS_FAMFS", "-k", img, NULL), ==, 2);
	g_free(out);
	g_assert_cmpint(run(NULL, "MKFS_FAMFS", "-f", "-k", img, NULL), ==, 0);
	g_assert_cmpint(run(&out, "FSCK_FAMFS", img, NULL), ==, 4);
	g_assert_nonnull(strstr(out, "[superblock-magic]"));
	g_free(out);
	/* Killed: mkfs again without -f. */
	g_assert_cmpint(run(NULL, "MKFS_FAMFS", "-u", uuid_file, img, NULL), ==, 0);

	g_assert_cmpint(run(&out, "MKFS_FAMFS", "-l", "12M", img, NULL), ==, 2);
	g_assert_nonnull(strstr(out, "power of two"));
	g_free(out);
	g_assert_cmpint(run(&out, "MKFS_FAMFS", "-l", "4M", img, NULL), ==, 2);
	g_free(out);
	g_assert_cmpint(run(&out, "MKFS_FAMFS", "-u", uuid_file, small, NULL), ==, 1);
	g_assert_nonnull(strstr(out, "too small"));
	g_free(out);
	g_assert_cmpint(run(&out, "MKFS_FAMFS", "/nonexistent/dev", NULL), ==, 1);
	g_assert_nonnull(strstr(out, "No such file"));
	g_free(out);
	g_assert_cmpint(run(&out, "MKFS_FAMFS", scratch, NULL), ==, 1);
	g_assert_nonnull(strstr(out, "is a directory"));
	g_free(out);
	g_assert_cmpint(run(&out, "MKFS_FAMFS", NULL), ==, 2);
	g_free(out);
	g_remove(img);
	g_remove(small);
	g_free(img);
	g_free(small);
}

static void test_system_uuid_file_created(void)
{
	char *file = g_build_filename(scratch, "opt", "famfs", "system_uuid", NULL);
	char *img = sparse_file("img", GiB), *text = NULL, *out;
	gsize len;
	struct stat st;

	g_assert_cmpint(run(NULL, "MKFS_FAMFS", "-u", file, img, NULL), ==, 0);
	g_assert_true(g_file_get_contents(file, &text, &len, NULL));
	/* 36 characters and a NUL, like upstream. */
	g_assert_cmpuint(len, ==, 37);
	g_assert_cmpuint(text[36], ==, '\0');
	g_assert_cmpint(stat(file, &st), ==, 0);
	g_assert_cmpuint(st.st_mode & 0777, ==, 0444);
	g_assert_cmpint(run(&out, "FSCK_FAMFS", "-u", file, img, NULL), ==, 0);
	g_assert_nonnull(strstr(out, "this host is master"));
	g_assert_nonnull(strstr(out, text));
	g_free(out);
	g_assert_cmpint(run(&out, "FSCK_FAMFS", "-u", uuid_file, img, NULL), ==, 0);
	g_assert_nonnull(strstr(out, "this host is client"));
	g_free(out);
	g_free(text);
	g_free(file);
	g_remove(img);
	g_free(img);
}

static void test_fsck_usage_and_operational(void)
{
	char *img = sparse_file("img", GiB), *fifo = g_build_filename(scratch, "fifo", NULL);
	char *empty = sparse_file("empty", 0), *out;

	g_assert_cmpint(run(NULL, "MKFS_FAMFS", "-u", uuid_file, img, NULL), ==, 0);
	g_assert_cmpint(run(&out, "FSCK_FAMFS", "-n", "-y", img, NULL), ==, 16);
	g_free(out);
	g_assert_cmpint(run(&out, "FSCK_FAMFS", NULL), ==, 16);
	g_free(out);
	g_assert_cmpint(run(&out, "FSCK_FAMFS", "--bogus", img, NULL), ==, 16);
	g_free(out);
	/* What systemd-fsck and fsck(8) pass is accepted. */
	g_assert_cmpint(run(&out, "FSCK_FAMFS", "-a", "-T", "-l", "-M", "-C0", "-f", img, NULL), ==, 0);
	g_free(out);
	g_assert_cmpint(run(&out, "FSCK_FAMFS", "/nonexistent", NULL), ==, 8);
	g_assert_nonnull(strstr(out, "/nonexistent"));
	g_free(out);
	g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
	g_assert_cmpint(run(&out, "FSCK_FAMFS", fifo, NULL), ==, 8);
	g_assert_nonnull(strstr(out, "FIFO"));
	g_free(out);
	g_assert_cmpint(run(&out, "FSCK_FAMFS", scratch, NULL), ==, 8);
	g_assert_nonnull(strstr(out, "directory"));
	g_free(out);
	g_assert_cmpint(run(&out, "FSCK_FAMFS", empty, NULL), ==, 8);
	g_assert_nonnull(strstr(out, "empty"));
	g_free(out);
	g_remove(img);
	g_remove(fifo);
	g_remove(empty);
	g_free(img);
	g_free(fifo);
	g_free(empty);
}

int main(int argc, char **argv)
{
	int r;

	g_test_init(&argc, &argv, NULL);
	scratch = test_scratch_dir();
	uuid_file = g_build_filename(scratch, "system_uuid", NULL);
	g_assert_true(g_file_set_contents(uuid_file, "0b9e9a56-4a7e-4f7c-9d0f-1b3a5c7e9f11\n", -1, NULL));
	g_test_add_func("/tools/mkfs-then-fsck-clean", test_mkfs_then_fsck_clean);
	g_test_add_func("/tools/mkfs-refusals", test_mkfs_refusals);
	g_test_add_func("/tools/system-uuid-file", test_system_uuid_file_created);
	g_test_add_func("/tools/fsck-usage-and-operational", test_fsck_usage_and_operational);
	r = g_test_run();
	test_remove_dir(scratch);
	test_remove_dir(scratch);
	return r;
}
