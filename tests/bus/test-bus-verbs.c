// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * famfsctl's verbs of issue 16 on a private bus: create --fill and verify,
 * flush, cp -r and several sources, mkdir and create -u/-g, create
 * --from-list; every refusal named, and a refused command changes nothing.
 */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "bus-fixture.h"

#define ctl(out, errs, ...) run(out, errs, f->bus.addr, AS_ROOT, famfsctl_exe, __VA_ARGS__, NULL)

/* Runs famfsctl as root, expects @rc and @needle (if any) on stderr. */
static void expect_fail(struct fixture *f, int rc, const char *needle, ...)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_autofree char *out = NULL, *errs = NULL;
	g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "DBUS_SYSTEM_BUS_ADDRESS", f->bus.addr, TRUE);
	const char *a;
	va_list ap;
	int st;

	g_ptr_array_add(argv, (char *)famfsctl_exe);
	va_start(ap, needle);
	while ((a = va_arg(ap, const char *)))
		g_ptr_array_add(argv, (char *)a);
	va_end(ap);
	g_ptr_array_add(argv, NULL);
	g_assert_true(g_spawn_sync("/", (char **)argv->pdata, env, 0, NULL, NULL, &out, &errs, &st, NULL));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != rc || (needle && !strstr(errs, needle)))
		g_printerr("famfsctl %s: exit %d, expected %d and \"%s\"\nstdout: %s\nstderr: %s",
			   (char *)argv->pdata[1], WEXITSTATUS(st), rc, needle ? needle : "", out, errs);
	g_assert_true(WIFEXITED(st));
	g_assert_cmpint(WEXITSTATUS(st), ==, rc);
	if (needle)
		g_assert_nonnull(strstr(errs, needle));
}

static void assert_unchanged(struct fixture *f, GBytes *before)
{
	g_autoptr(GBytes) after = meta_snapshot(f->img);

	g_assert_true(g_bytes_equal(before, after));
}

/* The file's extents through GetFileMap: the byte offset on the image of file offset @off. */
static uint64_t image_offset(struct fixture *f, const char *path, uint64_t off)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	uint64_t size, devindex, eoff, elen, found = UINT64_MAX;
	uint32_t mode, uid, gid;

	g_assert_cmpint(manager_call(f->conn, "GetFileMap", &e, &reply, "s", path), >=, 0);
	g_assert_cmpint(sd_bus_message_read(reply, "tuuu", &size, &mode, &uid, &gid), >, 0);
	g_assert_cmpint(sd_bus_message_enter_container(reply, 'a', "(ttt)"), >, 0);
	while (found == UINT64_MAX && sd_bus_message_read(reply, "(ttt)", &devindex, &eoff, &elen) > 0) {
		if (off < elen)
			found = eoff + off;
		else
			off -= elen;
	}
	sd_bus_message_unref(reply);
	g_assert_cmpuint(found, !=, UINT64_MAX);
	return found;
}

static json_object *parse_json(const char *s)
{
	json_object *j = json_tokener_parse(s);

	g_assert_nonnull(j);
	return j;
}

/* ls --json of @dir: the entry called @name, or NULL; the caller puts @ret_root. */
static json_object *ls_entry(struct fixture *f, const char *dir, const char *name, json_object **ret_root)
{
	g_autofree char *out = NULL, *errs = NULL;
	json_object *arr;

	g_assert_cmpint(ctl(&out, &errs, "--json", "ls", dir), ==, 0);
	arr = parse_json(out);
	*ret_root = arr;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *o = json_object_array_get_idx(arr, i), *v;

		if (json_object_object_get_ex(o, "name", &v) && !strcmp(json_object_get_string(v), name))
			return o;
	}
	return NULL;
}

static int64_t json_int(json_object *o, const char *key)
{
	json_object *v;

	g_assert_true(json_object_object_get_ex(o, key, &v));
	return json_object_get_int64(v);
}

/* ---- create --fill, verify ---- */

static void test_fill_verify(struct fixture *f, gconstpointer data)
{
	g_autofree char *out = NULL, *errs = NULL;
	g_autoptr(GBytes) before = NULL;
	json_object *j, *o, *v;
	uint64_t at;
	uint8_t byte;
	int fd;

	g_assert_cmpint(ctl(&out, &errs, "create", "-s", "5242897", "--fill", "1234", MP "/filled"), ==, 0);
	g_assert_cmpint(ctl(&out, &errs, "verify", "--seed", "1234", MP "/filled"), ==, 0);
	g_assert_cmpstr(out, ==, MP "/filled: ok (5242897 bytes, seed 1234)\n");
	/* the bytes on the medium are the documented pattern: byte 0 of seed 0 is 0xaf */
	g_assert_cmpint(ctl(&out, &errs, "create", "-s", "100", "--fill", "0", MP "/seed0"), ==, 0);
	fd = open(f->img, O_RDWR);
	g_assert_cmpint(pread(fd, &byte, 1, (off_t)image_offset(f, MP "/seed0", 0)), ==, 1);
	g_assert_cmphex(byte, ==, 0xaf);
	g_assert_cmpint(pread(fd, &byte, 1, (off_t)image_offset(f, MP "/seed0", 8)), ==, 1);
	g_assert_cmphex(byte, ==, 0xf4);
	/* another seed: the first byte already differs */
	g_assert_cmpint(ctl(&out, &errs, "verify", "--seed", "1235", MP "/filled"), ==, 4);
	g_assert_true(g_str_has_prefix(out, MP "/filled: mismatch at offset 0 (0x0): expected 0x"));
	/* one byte changed on the medium, 3000000 bytes in: named exactly */
	at = image_offset(f, MP "/filled", 3000000);
	g_assert_cmpint(pread(fd, &byte, 1, (off_t)at), ==, 1);
	byte ^= 0x10;
	g_assert_cmpint(pwrite(fd, &byte, 1, (off_t)at), ==, 1);
	g_assert_cmpint(ctl(&out, &errs, "verify", "--seed", "1234", "--json", MP "/seed0", MP "/filled"), ==, 4);
	j = parse_json(out);
	g_assert_cmpuint(json_object_array_length(j), ==, 2);
	o = json_object_array_get_idx(j, 0);
	g_assert_true(json_object_object_get_ex(o, "ok", &v) && !json_object_get_boolean(v));   /* seed 0 file */
	o = json_object_array_get_idx(j, 1);
	g_assert_true(json_object_object_get_ex(o, "ok", &v) && !json_object_get_boolean(v));
	g_assert_cmpint(json_int(o, "first_mismatch"), ==, 3000000);
	g_assert_cmpint(json_int(o, "found"), ==, byte);
	g_assert_cmpint(json_int(o, "expected"), ==, byte ^ 0x10);
	g_assert_cmpint(json_int(o, "size"), ==, 5242897);
	g_assert_cmpint(json_int(o, "seed"), ==, 1234);
	json_object_put(j);
	byte ^= 0x10;
	g_assert_cmpint(pwrite(fd, &byte, 1, (off_t)at), ==, 1);
	close(fd);
	g_assert_cmpint(ctl(&out, &errs, "verify", "--seed", "0x4d2", MP "/filled"), ==, 0);

	/* interleaved, and the largest seed */
	g_assert_cmpint(ctl(&out, &errs, "create", "-s", "9M", "-N", "2", "-C", "2M", "--fill",
			    "18446744073709551615", MP "/striped"), ==, 0);
	g_assert_cmpint(ctl(&out, &errs, "verify", "--seed", "18446744073709551615", MP "/striped"), ==, 0);
	/* a reader that is not root verifies its copy of the file */
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_NOBODY, famfsctl_exe, "verify", "--seed", "1234",
			    MP "/filled", NULL), ==, 0);

	/* bad input: usage errors, and nothing created or written */
	before = meta_snapshot(f->img);
	expect_fail(f, 16, "invalid seed \"abc\"", "create", "-s", "1M", "--fill", "abc", MP "/bad1", NULL);
	expect_fail(f, 16, "invalid seed \"-1\"", "create", "-s", "1M", "--fill", "-1", MP "/bad1", NULL);
	expect_fail(f, 16, "does not fit in 64 bits", "create", "-s", "1M", "--fill", "18446744073709551616",
		    MP "/bad1", NULL);
	expect_fail(f, 16, "invalid seed \"\"", "verify", "--seed", "", MP "/filled", NULL);
	expect_fail(f, 16, "usage: famfsctl verify", "verify", MP "/filled", NULL);
	expect_fail(f, 16, "usage: famfsctl verify", "verify", "--seed", "1", NULL);
	expect_fail(f, 8, "org.famfs.Error.NotFound", "verify", "--seed", "1", MP "/nope", NULL);
	expect_fail(f, 8, "org.famfs.Error.InvalidPath", "verify", "--seed", "1", MP "/../etc/passwd", NULL);
	/* an operational error outranks a mismatch, and the good file is still reported */
	g_assert_cmpint(ctl(&out, &errs, "verify", "--seed", "1234", MP "/nope", MP "/filled"), ==, 8);
	g_assert_cmpstr(out, ==, MP "/filled: ok (5242897 bytes, seed 1234)\n");
	assert_unchanged(f, before);
	g_assert_false(list_has(f->conn, MP, "bad1", NULL, NULL));
}

/* ---- flush ---- */

static bool is_flush_insn(const char *s)
{
	return !strcmp(s, "clwb") || !strcmp(s, "clflushopt") || !strcmp(s, "clflush");
}

static void test_flush(struct fixture *f, gconstpointer data)
{
	g_autofree char *out = NULL, *errs = NULL, *line = NULL;
	g_autoptr(GBytes) before = NULL;
	json_object *j, *o, *v;

	g_assert_cmpint(ctl(&out, &errs, "create", "-s", "3M", "--fill", "5", MP "/fl"), ==, 0);
	g_assert_cmpint(ctl(&out, &errs, "flush", MP "/fl"), ==, 0);
	g_assert_true(g_str_has_prefix(out, MP "/fl: 3145728 bytes written back ("));
	g_assert_true(g_str_has_suffix(out, ", sfence, msync)\n"));
	g_assert_cmpint(ctl(&out, &errs, "--json", "flush", MP "/fl", MPC "/"), ==, 8);   /* the root is a directory */
	g_assert_nonnull(strstr(errs, "org.famfs.Error.IsDirectory"));
	j = parse_json(out);
	g_assert_cmpuint(json_object_array_length(j), ==, 1);
	o = json_object_array_get_idx(j, 0);
	g_assert_true(json_object_object_get_ex(o, "instruction", &v));
	g_assert_true(is_flush_insn(json_object_get_string(v)));
	/* the one cpuinfo names first of the three, as the CPU's CPUID says */
	{
		g_autofree char *cpuinfo = NULL;
		const char *insn = json_object_get_string(v);

		g_assert_true(g_file_get_contents("/proc/cpuinfo", &cpuinfo, NULL, NULL));
		line = g_strdup_printf(" %s", insn);
		if (!strcmp(insn, "clflush")) {
			g_assert_null(strstr(cpuinfo, " clwb"));
			g_assert_null(strstr(cpuinfo, " clflushopt"));
		} else if (!strcmp(insn, "clflushopt")) {
			g_assert_null(strstr(cpuinfo, " clwb"));
		}
		g_assert_nonnull(strstr(cpuinfo, line));
	}
	g_assert_true(json_object_object_get_ex(o, "fence", &v));
	g_assert_cmpstr(json_object_get_string(v), ==, "sfence");
	g_assert_true(json_object_object_get_ex(o, "page_cache", &v) && json_object_get_boolean(v));
	g_assert_cmpint(json_int(o, "size"), ==, 3 << 20);
	json_object_put(j);
	/* the data is what was written */
	g_assert_cmpint(ctl(&out, &errs, "verify", "--seed", "5", MP "/fl"), ==, 0);

	before = meta_snapshot(f->img);
	expect_fail(f, 16, "usage: famfsctl flush", "flush", NULL);
	expect_fail(f, 16, "usage: famfsctl flush", "flush", "-x", MP "/fl", NULL);
	expect_fail(f, 8, "org.famfs.Error.NotFound", "flush", MP "/none", NULL);
	expect_fail(f, 8, "org.famfs.Error.NotMounted", "flush", "/etc/passwd", NULL);
	/* no polkit on this bus: the medium's descriptor is root's alone */
	{
		int rc = run(&out, &errs, f->bus.addr, AS_NOBODY, famfsctl_exe, "flush", MP "/fl", NULL);

		g_assert_cmpint(rc, ==, 8);
		g_assert_nonnull(strstr(errs, "org.famfs.Error.AccessDenied"));
	}
	assert_unchanged(f, before);
}

/* ---- cp ---- */

static char *mkdir_local(const char *rel)
{
	char *p = g_build_filename(topdir, rel, NULL);

	g_assert_cmpint(g_mkdir_with_parents(p, 0755), ==, 0);
	return p;
}

static void assert_cat(struct fixture *f, const char *famfs_path, const char *local)
{
	g_autofree char *out = NULL, *errs = NULL, *want = NULL;
	gsize len;

	g_assert_true(g_file_get_contents(local, &want, &len, NULL));
	g_assert_cmpint(ctl(&out, &errs, "cat", famfs_path), ==, 0);
	g_assert_cmpmem(out, len, want, len);
}

static void test_cp(struct fixture *f, gconstpointer data)
{
	g_autofree char *out = NULL, *errs = NULL;
	g_autofree char *tree = mkdir_local("tree"), *sub = mkdir_local("tree/sub"), *e = mkdir_local("tree/e");
	g_autofree char *a = make_data("tree/a", 1 << 20, 1), *b = make_data("tree/sub/b", 3 * 1024 * 1024 + 5, 2);
	g_autofree char *c = make_data("tree/sub/c", 17, 3), *odd = make_data("tree/back\\sl\nash", 99, 4);
	g_autofree char *x = make_data("x.bin", 4000, 5), *y = make_data("y.bin", 5000, 6);
	g_autofree char *bad = NULL, *link = NULL, *empty = NULL, *longname = NULL, *huge = NULL;
	g_autofree char *dup = mkdir_local("dup"), *dupx = make_data("dup/x.bin", 10, 7);
	g_autoptr(GBytes) before = NULL;
	json_object *root, *ent;
	int fd;

	/* cp -r SRCDIR NEWDEST: the tree becomes NEWDEST */
	g_assert_cmpint(chmod(sub, 0750), ==, 0);
	g_assert_cmpint(ctl(&out, &errs, "cp", "-r", tree, MP "/copy"), ==, 0);
	assert_cat(f, MP "/copy/a", a);
	assert_cat(f, MP "/copy/sub/b", b);
	assert_cat(f, MP "/copy/sub/c", c);
	assert_cat(f, MP "/copy/back\\x5csl\\x0aash", odd);   /* a local name is escaped */
	ent = ls_entry(f, MP "/copy", "sub", &root);
	g_assert_nonnull(ent);
	g_assert_cmpint(json_int(ent, "mode"), ==, 0750);
	json_object_put(root);
	ent = ls_entry(f, MP "/copy", "e", &root);
	g_assert_nonnull(ent);                                  /* an empty directory too */
	json_object_put(root);
	/* cp -r SRCDIR EXISTINGDIR/: it goes inside, under its own name */
	g_assert_cmpint(ctl(&out, &errs, "mkdir", MP "/into"), ==, 0);
	g_assert_cmpint(ctl(&out, &errs, "cp", "-r", sub, MP "/into"), ==, 0);
	assert_cat(f, MP "/into/sub/b", b);
	/* several sources into a directory, with and without the slash, and -m */
	g_assert_cmpint(ctl(&out, &errs, "mkdir", MP "/multi"), ==, 0);
	g_assert_cmpint(ctl(&out, &errs, "cp", "-m", "0600", x, y, MP "/multi/"), ==, 0);
	assert_cat(f, MP "/multi/x.bin", x);
	assert_cat(f, MP "/multi/y.bin", y);
	ent = ls_entry(f, MP "/multi", "y.bin", &root);
	g_assert_cmpint(json_int(ent, "mode"), ==, 0600);
	json_object_put(root);
	g_assert_cmpint(ctl(&out, &errs, "cp", a, c, MP), ==, 0);   /* the mount point is a directory */
	assert_cat(f, MP "/a", a);
	assert_cat(f, MP "/c", c);
	/* interleaved files of a tree are created one by one */
	g_assert_cmpint(ctl(&out, &errs, "cp", "-r", "-N", "2", "-C", "2M", sub, MP "/striped"), ==, 0);
	assert_cat(f, MP "/striped/b", b);

	/* refusals: each named, and none creates anything */
	bad = mkdir_local("bad");
	link = g_build_filename(bad, "link", NULL);
	g_assert_cmpint(symlink(a, link), ==, 0);
	before = meta_snapshot(f->img);
	expect_fail(f, 8, "nosuch: No such file or directory", "cp", x, "/nonexistent/nosuch", MP "/into", NULL);
	expect_fail(f, 8, "cannot copy several sources to " MP "/multi/x.bin: not a directory", "cp", x, y,
		    MP "/multi/x.bin", NULL);
	expect_fail(f, 8, "cannot copy several sources to " MP "/newdir: no such directory", "cp", x, y,
		    MP "/newdir", NULL);
	expect_fail(f, 8, "no such directory", "cp", x, MP "/newdir/", NULL);
	expect_fail(f, 8, "is a directory (use -r)", "cp", x, tree, MP "/into", NULL);
	expect_fail(f, 8, "already exists, and famfs replaces nothing", "cp", x, MP "/multi", NULL);
	expect_fail(f, 8, "already exists, and famfs replaces nothing", "cp", x, MP "/multi/x.bin", NULL);
	expect_fail(f, 8, "already exists, and famfs replaces nothing", "cp", "-r", sub, MP "/into", NULL);
	expect_fail(f, 8, "a symbolic link, and famfs has none", "cp", "-r", bad, MP "/badcopy", NULL);
	g_assert_cmpint(unlink(link), ==, 0);
	empty = g_build_filename(bad, "empty", NULL);
	g_assert_true(g_file_set_contents(empty, "", 0, NULL));
	expect_fail(f, 8, "it is empty", "cp", "-r", bad, MP "/badcopy", NULL);
	g_assert_cmpint(unlink(empty), ==, 0);
	longname = g_strdup_printf("%s/%s", bad, "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn");
	g_assert_true(g_file_set_contents(longname, "z", 1, NULL));
	expect_fail(f, 8, "cannot copy", "cp", "-r", bad, MP "/badcopy", NULL);
	g_assert_cmpint(unlink(longname), ==, 0);
	huge = g_build_filename(bad, "huge", NULL);
	fd = open(huge, O_CREAT | O_WRONLY, 0644);
	g_assert_cmpint(ftruncate(fd, 5LL << 30), ==, 0);   /* sparse, larger than the file system */
	close(fd);
	expect_fail(f, 8, "the files need at least 5.0 GiB", "cp", "-r", bad, MP "/badcopy", NULL);
	g_assert_cmpint(unlink(huge), ==, 0);
	g_assert_cmpint(ctl(&out, &errs, "mkdir", MP "/twice"), ==, 0);
	g_bytes_unref(before);
	before = meta_snapshot(f->img);
	expect_fail(f, 8, "cannot copy both", "cp", x, dupx, MP "/twice", NULL);
	expect_fail(f, 8, "not under the mount point of any attached famfs file system", "cp", x, "/tmp/x", NULL);
	expect_fail(f, 8, "org.famfs.Error.InvalidPath", "cp", x, MP "/../master/y", NULL);
	expect_fail(f, 8, "org.famfs.Error.InvalidPath", "cp", "-r", tree, MP "/twice/../t", NULL);
	expect_fail(f, 8, "org.famfs.Error.NotMaster", "cp", x, MPC "/x", NULL);
	expect_fail(f, 8, "org.famfs.Error.NotMaster", "cp", "-r", tree, MPC "/t", NULL);
	expect_fail(f, 8, "has no name of its own there", "cp", "-r", "/", MP "/twice", NULL);
	expect_fail(f, 16, "usage: famfsctl cp", "cp", x, NULL);
	expect_fail(f, 16, "invalid mode", "cp", "-m", "9", x, MP "/m", NULL);
	assert_unchanged(f, before);
	g_assert_false(list_has(f->conn, MP, "badcopy", NULL, NULL));
	g_assert_false(list_has(f->conn, MP, "newdir", NULL, NULL));
	g_assert_false(list_has(f->conn, MP "/twice", "x.bin", NULL, NULL));
}

/* ---- mkdir and create -u/-g ---- */

static void test_owner(struct fixture *f, gconstpointer data)
{
	g_autofree char *out = NULL, *errs = NULL;
	g_autoptr(GBytes) before = NULL;
	json_object *root, *ent;

	g_assert_cmpint(ctl(&out, &errs, "mkdir", "-m", "0700", "-u", "1234", "-g", "99", MP "/od"), ==, 0);
	ent = ls_entry(f, MP, "od", &root);
	g_assert_nonnull(ent);
	g_assert_cmpint(json_int(ent, "uid"), ==, 1234);
	g_assert_cmpint(json_int(ent, "gid"), ==, 99);
	g_assert_cmpint(json_int(ent, "mode"), ==, 0700);
	json_object_put(root);
	g_assert_cmpint(ctl(&out, &errs, "mkdir", "-p", "-u", "nobody", "-g", "root", MP "/p1/p2"), ==, 0);
	ent = ls_entry(f, MP "/p1", "p2", &root);
	g_assert_cmpint(json_int(ent, "uid"), ==, 65534);
	g_assert_cmpint(json_int(ent, "gid"), ==, 0);
	json_object_put(root);
	g_assert_cmpint(ctl(&out, &errs, "mkdir", "-p", MP "/p1/p2"), ==, 0);   /* -p: no error if it exists */
	g_assert_cmpint(ctl(&out, &errs, "create", "-s", "1", "-u", "7", "-g", "8", MP "/owned"), ==, 0);
	ent = ls_entry(f, MP, "owned", &root);
	g_assert_cmpint(json_int(ent, "uid"), ==, 7);
	g_assert_cmpint(json_int(ent, "gid"), ==, 8);
	json_object_put(root);

	before = meta_snapshot(f->img);
	expect_fail(f, 16, "invalid user \"no-such-user-here\"", "mkdir", "-u", "no-such-user-here", MP "/o1", NULL);
	expect_fail(f, 16, "invalid group \"no-such-group\"", "mkdir", "-g", "no-such-group", MP "/o1", NULL);
	expect_fail(f, 16, "a uid is below 4294967295", "mkdir", "-u", "4294967295", MP "/o1", NULL);
	expect_fail(f, 16, "a gid is below 4294967295", "create", "-s", "1", "-g", "99999999999", MP "/o1", NULL);
	expect_fail(f, 16, "invalid user \"-5\"", "create", "-s", "1", "-u", "-5", MP "/o1", NULL);
	expect_fail(f, 8, "org.famfs.Error.Exists", "mkdir", "-u", "1", MP "/od", NULL);
	expect_fail(f, 8, "org.famfs.Error.InvalidPath", "mkdir", "-u", "1", MP "/od/../x", NULL);
	/* another owner is root's (or set-owner's): no polkit here */
	{
		int rc = run(&out, &errs, f->bus.addr, AS_NOBODY, famfsctl_exe, "mkdir", "-u", "0", MP "/o2", NULL);

		g_assert_cmpint(rc, ==, 8);
		g_assert_nonnull(strstr(errs, "org.famfs.Error.AccessDenied"));
	}
	assert_unchanged(f, before);
}

/* ---- create --from-list ---- */

static char *write_list(const char *name, const char *text)
{
	char *p = g_build_filename(topdir, name, NULL);

	g_assert_true(g_file_set_contents(p, text, -1, NULL));
	return p;
}

static void test_from_list(struct fixture *f, gconstpointer data)
{
	g_autofree char *out = NULL, *errs = NULL;
	g_autofree char *good = write_list("good.list", "# three files\n"
					   MP "/l/one 4096\n"
					   "\n"
					   MP "/l/two\t3M\t0600\n"
					   "  " MP "/l/sp\\x20ace 1 0444\n");
	g_autofree char *l_bad_size = write_list("bad-size.list", MP "/l/b1 1\n" MP "/l/b2 1\n" MP "/l/b3 abc\n");
	g_autofree char *l_hostile = write_list("hostile.list", MP "/l/h1 1\n" MP "/l/../etc/h2 1\n");
	g_autofree char *l_overflow = write_list("overflow.list", "# c\n" MP "/l/o1 1\n\n" MP "/l/o2 18446744073709551615\n");
	g_autofree char *l_dup = write_list("dup.list", MP "/l/d1 1\n" MP "/l/d1 1\n");
	g_autofree char *l_exists = write_list("exists.list", MP "/l/e1 1\n" MP "/l/one 1\n");
	g_autofree char *l_nospace = write_list("nospace.list", MP "/l/n1 3G\n" MP "/l/n2 3G\n");
	g_autofree char *l_empty = write_list("empty.list", "# nothing\n\n");
	g_autofree char *l_relative = write_list("relative.list", "../x 1\n");
	g_autofree char *l_other = write_list("other.list", MP "/l/t1 1\n" MPC "/t2 1\n");
	g_autofree char *l_big = NULL, *l_fill = NULL;
	g_autoptr(GBytes) before = NULL;
	GString *s;
	json_object *root, *ent;
	uint64_t size;
	uint32_t mode;

	g_assert_cmpint(ctl(&out, &errs, "mkdir", MP "/l"), ==, 0);
	g_assert_cmpint(ctl(&out, &errs, "create", "--from-list", good, "-m", "0640", "-u", "55", "-g", "66"), ==, 0);
	g_assert_true(list_has(f->conn, MP "/l", "one", &size, &mode));
	g_assert_cmpuint(size, ==, 4096);
	g_assert_cmpuint(mode & 07777, ==, 0640);   /* -m is the default mode */
	g_assert_true(list_has(f->conn, MP "/l", "two", &size, &mode));
	g_assert_cmpuint(size, ==, 3 << 20);
	g_assert_cmpuint(mode & 07777, ==, 0600);
	ent = ls_entry(f, MP "/l", "sp ace", &root);
	g_assert_nonnull(ent);
	g_assert_cmpint(json_int(ent, "mode"), ==, 0444);
	g_assert_cmpint(json_int(ent, "uid"), ==, 55);
	g_assert_cmpint(json_int(ent, "gid"), ==, 66);
	json_object_put(root);

	/* with --fill: every file gets the pattern */
	l_fill = write_list("fill.list", MP "/l/f1 5M\n" MP "/l/f2 12345\n");
	g_assert_cmpint(ctl(&out, &errs, "create", "--from-list", l_fill, "--fill", "31"), ==, 0);
	g_assert_cmpint(ctl(&out, &errs, "verify", "--seed", "31", MP "/l/f1", MP "/l/f2"), ==, 0);

	/* a long list: one batch (an asynchronous call for the large message) */
	s = g_string_new(NULL);
	for (int i = 0; i < 1500; i++)
		g_string_append_printf(s, MP "/l/many%04d 1\n", i);
	l_big = write_list("big.list", s->str);
	g_string_free(s, TRUE);
	g_assert_cmpint(ctl(&out, &errs, "create", "--from-list", l_big), ==, 0);
	g_assert_true(list_has(f->conn, MP "/l", "many1499", NULL, NULL));

	/* refusals: named by line, and nothing created */
	before = meta_snapshot(f->img);
	expect_fail(f, 16, "bad-size.list:3: invalid size \"abc\"", "create", "--from-list", l_bad_size, NULL);
	expect_fail(f, 8, "hostile.list: line 2: element 1 (" MP "/l/../etc/h2)", "create", "--from-list", l_hostile,
		    NULL);
	expect_fail(f, 8, "org.famfs.Error.InvalidPath", "create", "--from-list", l_hostile, NULL);
	expect_fail(f, 8, "overflow.list: line 4: element 1 (" MP "/l/o2): size 18446744073709551615 overflows",
		    "create", "--from-list", l_overflow, NULL);
	expect_fail(f, 8, "no file was created", "create", "--from-list", l_overflow, NULL);
	expect_fail(f, 8, "org.famfs.Error.Exists", "create", "--from-list", l_dup, NULL);
	expect_fail(f, 8, "exists.list: line 2:", "create", "--from-list", l_exists, NULL);
	expect_fail(f, 8, "org.famfs.Error.NoSpace", "create", "--from-list", l_nospace, NULL);
	expect_fail(f, 8, "it names no file", "create", "--from-list", l_empty, NULL);
	expect_fail(f, 16, "relative.list:1: path \"../x\" is not absolute", "create", "--from-list", l_relative,
		    NULL);
	expect_fail(f, 8, "on another file system", "create", "--from-list", l_other, NULL);
	expect_fail(f, 8, "cannot read the list /nonexistent.list: No such file or directory", "create",
		    "--from-list", "/nonexistent.list", NULL);
	expect_fail(f, 8, "Is a directory", "create", "--from-list", topdir, NULL);
	expect_fail(f, 16, "no -s, -N, -B, -C or PATH", "create", "--from-list", good, "-s", "1M", NULL);
	expect_fail(f, 16, "no -s, -N, -B, -C or PATH", "create", "--from-list", good, MP "/l/x", NULL);
	expect_fail(f, 16, "no -s, -N, -B, -C or PATH", "create", "--from-list", good, "-N", "2", NULL);
	expect_fail(f, 16, "invalid seed", "create", "--from-list", good, "--fill", "x", NULL);
	{
		int rc = run(&out, &errs, f->bus.addr, AS_NOBODY, famfsctl_exe, "create", "--from-list", l_fill, NULL);

		g_assert_cmpint(rc, ==, 8);
		g_assert_nonnull(strstr(errs, "org.famfs.Error.AccessDenied"));
	}
	assert_unchanged(f, before);
	g_assert_false(list_has(f->conn, MP "/l", "b1", NULL, NULL));
	g_assert_false(list_has(f->conn, MP "/l", "h1", NULL, NULL));
	g_assert_false(list_has(f->conn, MP "/l", "o1", NULL, NULL));
	g_assert_false(list_has(f->conn, MP "/l", "e1", NULL, NULL));
	g_assert_false(list_has(f->conn, MP "/l", "t1", NULL, NULL));
}

/* ---- as a user polkit lets in (python3-dbusmock) ---- */

static void test_polkit_user(struct fixture *f, gconstpointer data)
{
	g_autofree char *out = NULL, *errs = NULL;
	g_autoptr(GError) err = NULL;
	g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "DBUS_SYSTEM_BUS_ADDRESS", f->bus.addr, TRUE);
	const char *argv[] = { "/usr/bin/python3", "-m", "dbusmock", "--system", "--template", "polkitd", NULL };
	g_autofree char *list = write_list("user.list", MP "/u/l1 1M\n");
	sd_bus_error e = SD_BUS_ERROR_NULL;
	GPid mock;
	int rc;

	if (!g_file_test("/usr/lib/python3/dist-packages/dbusmock", G_FILE_TEST_IS_DIR)) {
		g_test_skip("python3-dbusmock is not installed");
		return;
	}
	g_assert_cmpint(chmod(list, 0644), ==, 0);
	g_assert_cmpint(ctl(&out, &errs, "mkdir", "-m", "0777", MP "/u"), ==, 0);
	g_assert_true(g_spawn_async(NULL, (char **)argv, env, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
				    die_with_parent, NULL, &mock, &err));
	wait_name(f->bus.addr, "org.freedesktop.PolicyKit1", mock);
	g_assert_cmpint(sd_bus_call_method(f->conn, "org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
					   "org.freedesktop.DBus.Mock", "SetAllowed", &e, NULL, "as", 2,
					   "org.famfs.manager.create-file", "org.famfs.manager.write-file"), >=, 0);
	/* the pattern goes to the daemon in a sealed memfd; the user verifies its copy */
	rc = run(&out, &errs, f->bus.addr, AS_NOBODY, famfsctl_exe, "create", "-s", "3M", "--fill", "8", MP "/u/f", NULL);
	if (rc)
		g_printerr("%s", errs);
	g_assert_cmpint(rc, ==, 0);
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_NOBODY, famfsctl_exe, "verify", "--seed", "8", MP "/u/f",
			    NULL), ==, 0);
	g_assert_cmpint(ctl(&out, &errs, "verify", "--seed", "8", MP "/u/f"), ==, 0);
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_NOBODY, famfsctl_exe, "create", "--from-list", list, "--fill",
			    "9", NULL), ==, 0);
	g_assert_cmpint(ctl(&out, &errs, "verify", "--seed", "9", MP "/u/l1"), ==, 0);
	/* flush needs the medium: open-device */
	rc = run(&out, &errs, f->bus.addr, AS_NOBODY, famfsctl_exe, "flush", MP "/u/f", NULL);
	g_assert_cmpint(rc, ==, 8);
	g_assert_nonnull(strstr(errs, "org.famfs.manager.open-device"));
	g_assert_cmpint(sd_bus_call_method(f->conn, "org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
					   "org.freedesktop.DBus.Mock", "SetAllowed", &e, NULL, "as", 3,
					   "org.famfs.manager.create-file", "org.famfs.manager.write-file",
					   "org.famfs.manager.open-device"), >=, 0);
	rc = run(&out, &errs, f->bus.addr, AS_NOBODY, famfsctl_exe, "flush", MP "/u/f", NULL);
	if (rc)
		g_printerr("%s", errs);
	g_assert_cmpint(rc, ==, 0);
	g_assert_true(g_str_has_prefix(out, MP "/u/f: 3145728 bytes written back"));
	stop_pid(mock, SIGTERM);
}

static void add_tests(void)
{
	g_test_add("/verbs/fill-verify", struct fixture, NULL, fixture_setup, test_fill_verify, fixture_teardown);
	g_test_add("/verbs/flush", struct fixture, NULL, fixture_setup, test_flush, fixture_teardown);
	g_test_add("/verbs/cp", struct fixture, NULL, fixture_setup, test_cp, fixture_teardown);
	g_test_add("/verbs/owner", struct fixture, NULL, fixture_setup, test_owner, fixture_teardown);
	g_test_add("/verbs/from-list", struct fixture, NULL, fixture_setup, test_from_list, fixture_teardown);
	g_test_add("/verbs/polkit-user", struct fixture, NULL, fixture_setup, test_polkit_user, fixture_teardown);
}

int main(int argc, char **argv)
{
	return bus_test_main(argc, argv, add_tests);
}
