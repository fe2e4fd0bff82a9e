// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Creating and reading files over the bus: round trips through the bus and
 * famfsctl, and the named errors that leave the log untouched (bad paths and
 * arguments, sizes that overflow, a batch with a bad element, a full log),
 * and the signals a burst of calls shares.
 */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "bus-fixture.h"
#include "log.h"
#include "omf.h"

/*
 * sd_bus_call() of this libsystemd waits only for input after a partial
 * write of a large message, and can hang there; the async call plus
 * sd_bus_wait() polls for output too.
 */
struct big_call {
	bool done;
	sd_bus_message *reply;
};

static int big_call_done(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
	struct big_call *c = userdata;

	c->done = true;
	c->reply = sd_bus_message_ref(m);
	return 0;
}

static int call_big(sd_bus *bus, sd_bus_message *msg, sd_bus_error *e, sd_bus_message **ret)
{
	struct big_call c = {0};
	const sd_bus_error *err;
	int r;

	r = sd_bus_call_async(bus, NULL, msg, big_call_done, &c, 120ULL * 1000000);
	if (r < 0)
		return r;
	while (!c.done) {
		r = sd_bus_process(bus, NULL);
		if (r < 0)
			return r;
		if (r == 0)
			(void)sd_bus_wait(bus, 100000);
	}
	err = sd_bus_message_get_error(c.reply);
	if (err) {
		r = -sd_bus_error_get_errno(err);
		sd_bus_error_copy(e, err);
		g_test_message("call failed: %s: %s", err->name, err->message);
		sd_bus_message_unref(c.reply);
		return r < 0 ? r : -EIO;
	}
	if (ret)
		*ret = c.reply;
	else
		sd_bus_message_unref(c.reply);
	return 1;
}

static void test_roundtrip(struct fixture *f, gconstpointer data)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	g_autofree char *obj = fs_object(f->conn, MP), *out = NULL, *errs = NULL;
	g_autofree char *src = make_data("src.bin", 5 * 1024 * 1024 + 17, 7), *copy = NULL;
	g_autofree char *orig = NULL;
	uint64_t size, a, b, c, ext_off = 0, ext_len = 0;
	uint32_t mode, uid, gid, nfiles = 0;
	size_t olen, clen;
	json_object *j, *arr, *item, *v;
	char *role = get_prop_s(f->conn, obj, "Role");

	g_assert_cmpstr(role, ==, "master");
	free(role);

	/* mkdir -p, then create: extents come back and match GetFileMap */
	g_assert_cmpint(manager_call(f->conn, "Mkdir", &e, NULL, "sua{sv}",
				     MP "/d1/d2", 0750, 1, "parents", "b", 1), >=, 0);
	g_assert_cmpint(manager_call(f->conn, "CreateFile", &e, &reply, "stua{sv}",
				     MP "/d1/d2/f", (uint64_t)3000000, 0640, 2, "uid", "u", 1234, "gid",
				     "u", 99), >=, 0);
	g_assert_cmpint(sd_bus_message_read(reply, "a(ttt)", 1, &a, &ext_off, &ext_len), >, 0);
	g_assert_cmpuint(a, ==, 0);
	g_assert_cmpuint(ext_off % FAMFS_ALLOC_UNIT, ==, 0);
	g_assert_cmpuint(ext_len, ==, 4ULL << 20);
	reply = sd_bus_message_unref(reply);
	g_assert_cmpint(manager_call(f->conn, "GetFileMap", &e, &reply, "s",
				     MP "/d1//d2/f/"), >=, 0);
	g_assert_cmpint(sd_bus_message_read(reply, "tuuu", &size, &mode, &uid, &gid), >, 0);
	g_assert_cmpuint(size, ==, 3000000);
	g_assert_cmpuint(mode, ==, 0640);
	g_assert_cmpuint(uid, ==, 1234);
	g_assert_cmpuint(gid, ==, 99);
	g_assert_cmpint(sd_bus_message_read(reply, "a(ttt)", 1, &a, &b, &c), >, 0);
	g_assert_cmpuint(b, ==, ext_off);
	g_assert_cmpuint(c, ==, ext_len);
	reply = sd_bus_message_unref(reply);

	/* ls: directories are flagged by mode */
	g_assert_true(list_has(f->conn, MP, "d1", NULL, &mode));
	g_assert_true(S_ISDIR(mode));
	g_assert_cmpuint(mode & 07777, ==, 0750);
	g_assert_true(list_has(f->conn, MP "/d1/d2", "f", &size, &mode));
	g_assert_true(S_ISREG(mode));
	g_assert_cmpuint(size, ==, 3000000);

	/* a batch */
	g_assert_cmpint(manager_call(f->conn, "CreateFiles", &e, &reply,
				     "a(stu)a{sv}", 3, MP "/b1", (uint64_t)1, 0644, MP "/b2",
				     (uint64_t)(2 << 20), 0600, MP "/d1/b3", (uint64_t)4096, 0444, 0), >=, 0);
	g_assert_cmpint(sd_bus_message_read(reply, "u", &nfiles), >, 0);
	g_assert_cmpuint(nfiles, ==, 3);
	reply = sd_bus_message_unref(reply);
	g_assert_true(list_has(f->conn, MP "/d1", "b3", &size, NULL));
	g_assert_cmpuint(size, ==, 4096);

	/* famfsctl: cp then cat, byte-identical; ls -l; map; mkdir; create */
	g_assert_cmpint(run(&out, &errs, f->bus.addr, false, famfsctl_exe, "cp", src, MP "/d1/copy", NULL), ==, 0);
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&errs, g_free);
	g_assert_cmpint(run(&copy, &errs, f->bus.addr, false, famfsctl_exe, "cat", MP "/d1/copy", NULL), ==, 0);
	g_assert_true(g_file_get_contents(src, &orig, &olen, NULL));
	clen = strlen(copy) <= olen ? olen : 0;
	g_assert_cmpuint(clen, ==, olen);
	g_assert_cmpmem(copy, olen, orig, olen);
	g_clear_pointer(&errs, g_free);
	g_assert_cmpint(run(&out, &errs, f->bus.addr, false, famfsctl_exe, "ls", "-l", MP "/d1", NULL), ==, 0);
	g_assert_nonnull(strstr(out, "copy"));
	g_assert_nonnull(strstr(out, "drwxr-x---"));
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&errs, g_free);
	g_assert_cmpint(run(&out, &errs, f->bus.addr, false, famfsctl_exe, "mkdir", "-p", MP "/x/y/z", NULL), ==, 0);
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&errs, g_free);
	g_assert_cmpint(run(&out, &errs, f->bus.addr, false, famfsctl_exe, "create", "-s", "4M", "-m", "0600",
			    MP "/x/y/z/four", NULL), ==, 0);
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&errs, g_free);
	g_assert_cmpint(run(&out, &errs, f->bus.addr, false, famfsctl_exe, "map", MP "/x/y/z/four", NULL), ==, 0);
	g_assert_nonnull(strstr(out, "4.0 MiB"));
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&errs, g_free);

	/* status --json has the documented fields with live values */
	g_assert_cmpint(run(&out, &errs, f->bus.addr, false, famfsctl_exe, "status", "--json", NULL), ==, 0);
	j = json_tokener_parse(out);
	g_assert_nonnull(j);
	g_assert_true(json_object_object_get_ex(j, "filesystems", &arr));
	g_assert_cmpint(json_object_array_length(arr), ==, 2);
	item = json_object_array_get_idx(arr, 0);
	for (const char *const *k = (const char *const[]){ "uuid", "device", "mountpoint", "role", "backend",
			"health", "log_used", "log_total", "capacity", "allocated", "free", "files",
			"directories", NULL }; *k; k++)
		g_assert_true(json_object_object_get_ex(item, *k, &v));
	json_object_object_get_ex(item, "files", &v);
	g_assert_cmpint(json_object_get_int64(v), ==, 6);
	json_object_object_get_ex(item, "directories", &v);
	g_assert_cmpint(json_object_get_int64(v), ==, 5);
	json_object_object_get_ex(item, "log_used", &v);
	g_assert_cmpint(json_object_get_int64(v), ==, 11);
	json_object_object_get_ex(item, "backend", &v);
	g_assert_cmpstr(json_object_get_string(v), ==, "view");
	json_object_object_get_ex(item, "capacity", &v);
	g_assert_cmpint(json_object_get_int64(v), ==, 4LL << 30);
	json_object_put(j);
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&errs, g_free);

	/* the human status shows sizes like "4.0 GiB" */
	g_assert_cmpint(run(&out, &errs, f->bus.addr, false, famfsctl_exe, "status", NULL), ==, 0);
	g_assert_nonnull(strstr(out, "of 4.0 GiB"));
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&errs, g_free);

	/* check: clean, exit 0 */
	g_assert_cmpint(run(&out, &errs, f->bus.addr, false, famfsctl_exe, "check", MP, NULL), ==, 0);
	g_assert_nonnull(strstr(out, "clean"));
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&errs, g_free);

	/* metrics: Prometheus text, and an atomic textfile */
	g_assert_cmpint(run(&out, &errs, f->bus.addr, false, famfsctl_exe, "metrics", NULL), ==, 0);
	g_assert_nonnull(strstr(out, "# TYPE famfs_log_replayed_entries_total counter\n"));
	g_assert_nonnull(strstr(out, "famfs_files{uuid="));
	g_assert_nonnull(strstr(out, "famfs_capacity_bytes{uuid="));
	/* module-wide, from the Manager object: no uuid label */
	g_assert_nonnull(strstr(out, "\nfamfs_faults_total{size=\"pmd\"} 0\n"));
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&errs, g_free);
	g_assert_cmpint(run(&out, &errs, f->bus.addr, false, famfsctl_exe, "metrics", "--textfile", topdir, NULL), ==, 0);
	{
		g_autofree char *prom = g_build_filename(topdir, "famfs.prom", NULL), *text = NULL;

		g_assert_true(g_file_get_contents(prom, &text, NULL, NULL));
		g_assert_nonnull(strstr(text, "famfs_log_entries_used{uuid="));
		g_assert_true(g_str_has_suffix(text, "\n"));
		g_unlink(prom);
	}

	/* interleaved: famfsctl cp -N 2 -C 2M, and the bytes land where the layout says */
	{
		g_autofree char *isrc = make_data("inter.bin", 9 * 1024 * 1024 + 333, 21), *ibuf = NULL, *icat = NULL;
		g_autofree uint8_t *dev = NULL;
		uint64_t st[16], ilen = 0, chunk = 0, isize;
		uint32_t type = 0;
		gsize ilen_src;
		size_t ns = 0;
		int fd;

		g_assert_cmpint(run(&out, &errs, f->bus.addr, false, famfsctl_exe, "cp", "-N", "2", "-B", "2",
				    "-C", "2M", isrc, MP "/inter", NULL), ==, 0);
		g_clear_pointer(&out, g_free);
		g_clear_pointer(&errs, g_free);
		g_assert_cmpint(manager_call(f->conn, "GetFileLayout", &e, &reply, "s",
					     MP "/inter"), >=, 0);
		g_assert_cmpint(sd_bus_message_read(reply, "tuuuut", &isize, &mode, &uid, &gid, &type, &chunk), >, 0);
		g_assert_cmpuint(type, ==, 1);
		g_assert_cmpuint(chunk, ==, 2 << 20);
		g_assert_cmpint(sd_bus_message_enter_container(reply, 'a', "(ttt)"), >, 0);
		while (sd_bus_message_read(reply, "(ttt)", &a, &b, &c) > 0 && ns < 16) {
			st[ns++] = b;
			ilen = c;
		}
		reply = sd_bus_message_unref(reply);
		g_assert_cmpuint(ns, ==, 2);
		g_assert_true(g_file_get_contents(isrc, &ibuf, &ilen_src, NULL));
		g_assert_cmpuint(isize, ==, ilen_src);
		dev = g_malloc(ilen);
		fd = open(f->img, O_RDONLY);
		for (uint64_t off = 0; off < isize; off += chunk) {
			uint64_t k = off / chunk, n = MIN(chunk, isize - off);

			g_assert_cmpint(pread(fd, dev, n, st[k % 2] + (k / 2) * chunk), ==, (ssize_t)n);
			g_assert_cmpmem(dev, n, ibuf + off, n);
		}
		close(fd);
		g_assert_cmpint(run(&icat, &errs, f->bus.addr, false, famfsctl_exe, "cat", MP "/inter", NULL), ==, 0);
		g_assert_cmpmem(icat, ilen_src, ibuf, ilen_src);
		g_clear_pointer(&errs, g_free);
	}

	/* the ObjectManager lists both file systems with their interface */
	{
		sd_bus_message *mo = NULL;
		const char *path;
		int nobj = 0;

		g_assert_cmpint(sd_bus_call_method(f->conn, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH,
						   "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", &e, &mo,
						   ""), >=, 0);
		g_assert_cmpint(sd_bus_message_enter_container(mo, 'a', "{oa{sa{sv}}}"), >, 0);
		while (sd_bus_message_enter_container(mo, 'e', "oa{sa{sv}}") > 0) {
			g_assert_cmpint(sd_bus_message_read(mo, "o", &path), >, 0);
			if (g_str_has_prefix(path, FAMFS_FS_PATH_PREFIX "/"))
				nobj++;
			g_assert_cmpint(sd_bus_message_skip(mo, "a{sa{sv}}"), >=, 0);
			g_assert_cmpint(sd_bus_message_exit_container(mo), >=, 0);
		}
		sd_bus_message_unref(mo);
		g_assert_cmpint(nobj, ==, 2);
	}
	assert_fsck_clean(f->img);
}

struct bad_case {
	const char *what;
	const char *path;
	uint64_t size;
	uint32_t mode;
	const char *error;
};

static void test_errors(struct fixture *f, gconstpointer data)
{
	static const struct bad_case cases[] = {
		{ "relative path", "master/x", 1, 0644, "org.famfs.Error.InvalidPath" },
		{ "empty path", "", 1, 0644, "org.famfs.Error.InvalidPath" },
		{ "dot component", MP "/./x", 1, 0644, "org.famfs.Error.InvalidPath" },
		{ "dotdot component", MP "/d/../x", 1, 0644, "org.famfs.Error.InvalidPath" },
		{ "dotdot escaping the mount", MP "/../other/x", 1, 0644, "org.famfs.Error.InvalidPath" },
		{ "trailing dot", MP "/d/.", 1, 0644, "org.famfs.Error.InvalidPath" },
		{ "the mount point itself", MP, 1, 0644, "org.famfs.Error.InvalidPath" },
		{ "80-byte relpath", MP "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		  1, 0644, "org.famfs.Error.InvalidPath" },
		{ "size 0", MP "/zero", 0, 0644, "org.famfs.Error.InvalidArgument" },
		{ "bad mode", MP "/m", 1, 0170000 | 0644, "org.famfs.Error.InvalidArgument" },
		{ "no space", MP "/huge", 5ULL << 30, 0644, "org.famfs.Error.NoSpace" },
		{ "existing file", MP "/exists", 1, 0644, "org.famfs.Error.Exists" },
		{ "existing directory", MP "/d", 1, 0644, "org.famfs.Error.Exists" },
		{ "missing parent", MP "/nodir/x", 1, 0644, "org.famfs.Error.NotFound" },
		{ "parent is a file", MP "/exists/x", 1, 0644, "org.famfs.Error.NotDirectory" },
		{ "unknown mount point", "/run/famfs-test/nosuch/x", 1, 0644, "org.famfs.Error.NotMounted" },
		{ "outside the mount root", "/etc/passwd", 1, 0644, "org.famfs.Error.NotMounted" },
		{ "not master", MPC "/x", 1, 0644, "org.famfs.Error.NotMaster" },
	};
	sd_bus_error e = SD_BUS_ERROR_NULL;
	g_autoptr(GBytes) before = NULL, before_other = NULL, after = NULL;
	char *longpath;
	int r;

	g_assert_cmpint(manager_call(f->conn, "Mkdir", &e, NULL, "sua{sv}", MP "/d",
				     0755, 0), >=, 0);
	g_assert_cmpint(create_file(f->conn, MP "/exists", 1, 0644, &e), >=, 0);
	/* a 79-byte relpath is the longest allowed */
	longpath = g_strdup_printf(MP "/%s", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
	g_assert_cmpint(create_file(f->conn, longpath, 1, 0644, &e), >=, 0);
	g_free(longpath);
	before = meta_snapshot(f->img);
	before_other = meta_snapshot(f->other);

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		r = create_file(f->conn, cases[i].path, cases[i].size, cases[i].mode, &e);
		if (r >= 0 || !sd_bus_error_has_name(&e, cases[i].error))
			g_printerr("case \"%s\": got %s (%s), expected %s\n", cases[i].what,
				   r >= 0 ? "success" : e.name, e.message, cases[i].error);
		g_assert_cmpint(r, <, 0);
		g_assert_cmpstr(e.name, ==, cases[i].error);
		g_assert_nonnull(e.message);
		g_assert_cmpuint(strlen(e.message), >, 10);
		sd_bus_error_free(&e);
	}
	/* the same rules for Mkdir */
	g_assert_cmpint(manager_call(f->conn, "Mkdir", &e, NULL, "sua{sv}", MP "/d",
				     0755, 0), <, 0);
	g_assert_cmpstr(e.name, ==, "org.famfs.Error.Exists");
	sd_bus_error_free(&e);
	g_assert_cmpint(manager_call(f->conn, "Mkdir", &e, NULL, "sua{sv}",
				     MP "/p/q", 0755, 0), <, 0);
	g_assert_cmpstr(e.name, ==, "org.famfs.Error.NotFound");
	sd_bus_error_free(&e);
	g_assert_cmpint(manager_call(f->conn, "Mkdir", &e, NULL, "sua{sv}",
				     MPC "/p", 0755, 0), <, 0);
	g_assert_cmpstr(e.name, ==, "org.famfs.Error.NotMaster");
	sd_bus_error_free(&e);
	/* unknown and mistyped options */
	g_assert_cmpint(manager_call(f->conn, "CreateFile", &e, NULL, "stua{sv}",
				     MP "/o", (uint64_t)1, 0644, 1, "colour", "s", "red"), <, 0);
	g_assert_cmpstr(e.name, ==, "org.famfs.Error.InvalidArgument");
	sd_bus_error_free(&e);
	g_assert_cmpint(manager_call(f->conn, "CreateFile", &e, NULL, "stua{sv}",
				     MP "/o", (uint64_t)1, 0644, 1, "uid", "s", "root"), <, 0);
	g_assert_cmpstr(e.name, ==, "org.famfs.Error.InvalidArgument");
	sd_bus_error_free(&e);
	/* a batch is all or nothing: one bad file, no file */
	g_assert_cmpint(manager_call(f->conn, "CreateFiles", &e, NULL, "a(stu)a{sv}",
				     3, MP "/ok1", (uint64_t)1, 0644, MP "/ok2", (uint64_t)1, 0644,
				     MP "/exists", (uint64_t)1, 0644, 0), <, 0);
	g_assert_cmpstr(e.name, ==, "org.famfs.Error.Exists");
	sd_bus_error_free(&e);
	g_assert_cmpint(manager_call(f->conn, "CreateFiles", &e, NULL, "a(stu)a{sv}",
				     2, MP "/dup", (uint64_t)1, 0644, MP "/dup", (uint64_t)1, 0644, 0), <, 0);
	g_assert_cmpstr(e.name, ==, "org.famfs.Error.Exists");
	sd_bus_error_free(&e);
	g_assert_cmpint(manager_call(f->conn, "CreateFiles", &e, NULL, "a(stu)a{sv}",
				     2, MP "/s1", (uint64_t)(3ULL << 30), 0644, MP "/s2",
				     (uint64_t)(3ULL << 30), 0644, 0), <, 0);
	g_assert_cmpstr(e.name, ==, "org.famfs.Error.NoSpace");
	sd_bus_error_free(&e);
	g_assert_cmpint(manager_call(f->conn, "CreateFiles", &e, NULL, "a(stu)a{sv}",
				     2, MP "/t1", (uint64_t)1, 0644, MPC "/t2", (uint64_t)1, 0644, 0), <, 0);
	g_assert_cmpstr(e.name, ==, "org.famfs.Error.InvalidArgument");
	sd_bus_error_free(&e);
	/* reads of what is not there */
	g_assert_cmpint(manager_call(f->conn, "GetFileMap", &e, NULL, "s", MP "/nope"), <, 0);
	g_assert_cmpstr(e.name, ==, "org.famfs.Error.NotFound");
	sd_bus_error_free(&e);
	g_assert_cmpint(manager_call(f->conn, "GetFileMap", &e, NULL, "s", MP "/d"), <, 0);
	g_assert_cmpstr(e.name, ==, "org.famfs.Error.IsDirectory");
	sd_bus_error_free(&e);
	g_assert_cmpint(manager_call(f->conn, "ListFiles", &e, NULL, "s", "/nowhere"), <, 0);
	g_assert_cmpstr(e.name, ==, "org.famfs.Error.NotMounted");
	sd_bus_error_free(&e);

	/* none of it touched either log */
	after = meta_snapshot(f->img);
	g_assert_true(g_bytes_equal(before, after));
	g_bytes_unref(after);
	after = meta_snapshot(f->other);
	g_assert_true(g_bytes_equal(before_other, after));
}

/*
 * Issue 11 §2: a size near 2^64 once rounded to one 2 MiB unit and was
 * logged before the error (fsck exit 4 for good, every host degraded), and
 * nstrips * chunk_size past 2^64 divided by zero.  Now: a named error, the
 * log bytes unchanged, fsck still clean, health still ok.
 */
static void test_huge_size_refused(struct fixture *f, gconstpointer data)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	g_autofree char *obj = fs_object(f->conn, MP), *health = NULL;
	g_autoptr(GBytes) before = meta_snapshot(f->img), after = NULL;

	g_assert_cmpint(create_file(f->conn, MP "/big", UINT64_MAX, 0644, &e), <, 0);
	g_assert_cmpstr(e.name, ==, "org.famfs.Error.InvalidArgument");
	g_assert_true(g_str_has_prefix(e.message, "\"big\": size 18446744073709551615 overflows"));
	sd_bus_error_free(&e);
	g_assert_cmpint(manager_call(f->conn, "CreateFile", &e, NULL, "stua{sv}",
				     MP "/striped", (uint64_t)1 << 63, 0644, 3, "nstrips", "u", 2,
				     "nbuckets", "u", 2, "chunk_size", "t", (uint64_t)1 << 63), <, 0);
	g_assert_cmpstr(e.name, ==, "org.famfs.Error.InvalidArgument");
	g_assert_nonnull(strstr(e.message, "overflow"));
	sd_bus_error_free(&e);

	after = meta_snapshot(f->img);
	g_assert_true(g_bytes_equal(before, after));
	assert_fsck_clean(f->img);
	g_usleep(200000);   /* a few polls */
	health = get_prop_s(f->conn, obj, "Health");
	g_assert_cmpstr(health, ==, "ok");
	g_assert_false(list_has(f->conn, MP, "big", NULL, NULL));
	/* and the file system still takes files */
	g_assert_cmpint(create_file(f->conn, MP "/after", 1, 0644, &e), >=, 0);
}

/* CreateFiles [bad, good1, good2] once failed yet created good1 and good2. */
static void test_batch_bad_first(struct fixture *f, gconstpointer data)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	g_autoptr(GBytes) before = meta_snapshot(f->img), after = NULL;
	uint32_t n = 0;

	g_assert_cmpint(manager_call(f->conn, "CreateFiles", &e, NULL, "a(stu)a{sv}", 3,
				     MP "/bad", UINT64_MAX, 0644, MP "/good1", (uint64_t)1, 0644,
				     MP "/good2", (uint64_t)1, 0644, 0), <, 0);
	g_assert_cmpstr(e.name, ==, "org.famfs.Error.InvalidArgument");
	g_assert_true(g_str_has_prefix(e.message, "element 0 (" MP "/bad): size 18446744073709551615 overflows"));
	sd_bus_error_free(&e);
	/* an element the daemon refuses before the library sees it is named the same way */
	g_assert_cmpint(manager_call(f->conn, "CreateFiles", &e, NULL, "a(stu)a{sv}", 3,
				     MP "/good1", (uint64_t)1, 0644, MP "/good2", (uint64_t)1, 0644,
				     MP "/zero", (uint64_t)0, 0644, 0), <, 0);
	g_assert_cmpstr(e.name, ==, "org.famfs.Error.InvalidArgument");
	g_assert_true(g_str_has_prefix(e.message, "element 2 (" MP "/zero): size 0"));
	sd_bus_error_free(&e);

	after = meta_snapshot(f->img);
	g_assert_true(g_bytes_equal(before, after));
	assert_fsck_clean(f->img);
	g_usleep(200000);
	g_assert_false(list_has(f->conn, MP, "bad", NULL, NULL));
	g_assert_false(list_has(f->conn, MP, "good1", NULL, NULL));
	g_assert_false(list_has(f->conn, MP, "good2", NULL, NULL));
	g_assert_cmpint(manager_call(f->conn, "GetFileMap", &e, NULL, "s", MP "/good1"), <, 0);
	g_assert_cmpstr(e.name, ==, "org.famfs.Error.NotFound");
	sd_bus_error_free(&e);
	/* the good two alone go through */
	{
		sd_bus_message *reply = NULL;

		g_assert_cmpint(manager_call(f->conn, "CreateFiles", &e, &reply, "a(stu)a{sv}",
					     2, MP "/good1", (uint64_t)1, 0644, MP "/good2", (uint64_t)1, 0644,
					     0), >=, 0);
		g_assert_cmpint(sd_bus_message_read(reply, "u", &n), >, 0);
		sd_bus_message_unref(reply);
	}
	g_assert_cmpuint(n, ==, 2);
	g_assert_true(list_has(f->conn, MP, "good1", NULL, NULL));
}

static void test_log_full(struct fixture *f, gconstpointer data)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	g_autofree char *obj = fs_object(f->conn, MP);
	g_autoptr(GBytes) before = NULL, after = NULL;
	sd_bus_message *call = NULL, *reply = NULL;
	g_autofree char *reasons = NULL, *health = NULL;
	uint64_t total = get_prop_t(f->conn, obj, "LogEntriesTotal");
	uint32_t n = 0;

	g_assert_cmpuint(total, ==, 15420);
	/* 4 GiB hold about 2000 files of 2 MiB: 1000 files, then directories until the log is full */
	g_assert_cmpint(sd_bus_message_new_method_call(f->conn, &call, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH,
						       FAMFS_MANAGER_IFACE, "CreateFiles"), >=, 0);
	g_assert_cmpint(sd_bus_message_open_container(call, 'a', "(stu)"), >=, 0);
	for (uint64_t i = 0; i < 1000; i++) {
		char p[64];

		snprintf(p, sizeof(p), MP "/f%05" PRIu64, i);
		g_assert_cmpint(sd_bus_message_append(call, "(stu)", p, (uint64_t)1, 0644), >=, 0);
	}
	g_assert_cmpint(sd_bus_message_close_container(call), >=, 0);
	g_assert_cmpint(sd_bus_message_append(call, "a{sv}", 0), >=, 0);
	g_assert_cmpint(call_big(f->conn, call, &e, &reply), >=, 0);
	g_assert_cmpint(sd_bus_message_read(reply, "u", &n), >, 0);
	g_assert_cmpuint(n, ==, 1000);
	call = sd_bus_message_unref(call);
	reply = sd_bus_message_unref(reply);
	for (uint64_t i = 1000; i < total; i++) {
		char p[64];

		snprintf(p, sizeof(p), MP "/d%05" PRIu64, i);
		g_assert_cmpint(manager_call(f->conn, "Mkdir", &e, NULL, "sua{sv}", p,
					     0755, 0), >=, 0);
	}
	g_assert_cmpuint(get_prop_t(f->conn, obj, "LogEntriesUsed"), ==, total);
	g_assert_cmpuint(image_next_index(f->img), ==, total);
	before = meta_snapshot(f->img);
	g_assert_cmpint(create_file(f->conn, MP "/one-more", 1, 0644, &e), <, 0);
	g_assert_cmpstr(e.name, ==, "org.famfs.Error.LogFull");
	sd_bus_error_free(&e);
	g_assert_cmpint(manager_call(f->conn, "Mkdir", &e, NULL, "sua{sv}",
				     MP "/one-more", 0755, 0), <, 0);
	g_assert_cmpstr(e.name, ==, "org.famfs.Error.LogFull");
	sd_bus_error_free(&e);
	after = meta_snapshot(f->img);
	g_assert_true(g_bytes_equal(before, after));
	/* a full log degrades health, and says why */
	g_usleep(200000);
	health = get_prop_s(f->conn, obj, "Health");
	reasons = get_reasons(f->conn, obj);
	g_assert_cmpstr(health, ==, "degraded");
	g_assert_nonnull(strstr(reasons, "log 100% full"));
}

/* What a watcher of one file system's signals saw. */
struct watch {
	GHashTable *added;          /* path -> how many FilesAdded named it */
	unsigned files_added_signals;
	uint64_t files, allocated;  /* the last values PropertiesChanged carried */
	bool files_seen, allocated_seen;
};

static int watch_files_added(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	struct watch *w = userdata;
	const char *p;

	w->files_added_signals++;
	g_assert_cmpint(sd_bus_message_enter_container(msg, 'a', "s"), >, 0);
	while (sd_bus_message_read(msg, "s", &p) > 0)
		g_hash_table_insert(w->added, g_strdup(p),
				    GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(w->added, p)) + 1));
	return 0;
}

static int watch_props_changed(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	struct watch *w = userdata;
	const char *iface, *name;

	g_assert_cmpint(sd_bus_message_read(msg, "s", &iface), >, 0);
	if (strcmp(iface, FAMFS_FS_IFACE) != 0)
		return 0;
	g_assert_cmpint(sd_bus_message_enter_container(msg, 'a', "{sv}"), >, 0);
	while (sd_bus_message_enter_container(msg, 'e', "sv") > 0) {
		g_assert_cmpint(sd_bus_message_read(msg, "s", &name), >, 0);
		if (strcmp(name, "Files") == 0 || strcmp(name, "Allocated") == 0) {
			bool files = strcmp(name, "Files") == 0;

			g_assert_cmpint(sd_bus_message_read(msg, "v", "t", files ? &w->files : &w->allocated), >, 0);
			*(files ? &w->files_seen : &w->allocated_seen) = true;
		} else {
			g_assert_cmpint(sd_bus_message_skip(msg, "v"), >=, 0);
		}
		g_assert_cmpint(sd_bus_message_exit_container(msg), >, 0);
	}
	return 0;
}

/* Runs @bus's queue until @path has been announced, for at most 5 s. */
static void watch_until_added(sd_bus *bus, struct watch *w, const char *path)
{
	uint64_t t0 = now_us();

	while (!g_hash_table_contains(w->added, path) && now_us() - t0 < 5000000) {
		if (sd_bus_process(bus, NULL) == 0)
			(void)sd_bus_wait(bus, 10000);
	}
	/* and what came with it, so that the last PropertiesChanged is in too */
	while (sd_bus_process(bus, NULL) > 0)
		;
}

/*
 * CreateFile calls back to back share their signals: every path is still
 * announced, exactly once, and the last PropertiesChanged carries the
 * values a Get returns after the burst; a call after a quiet moment is
 * announced on its own.
 */
static void test_burst_announced(struct fixture *f, gconstpointer data)
{
	g_autofree char *obj = fs_object(f->conn, MP);
	g_autoptr(GHashTable) added = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	struct watch w = { .added = added };
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus *watcher = bus_connect(f->bus.addr);
	uint64_t files_before = get_prop_t(f->conn, obj, "Files");
	const int burst = 300;
	char last[64];

	g_assert_cmpint(sd_bus_match_signal(watcher, NULL, FAMFS_BUS_NAME, obj, FAMFS_FS_IFACE, "FilesAdded",
					    watch_files_added, &w), >=, 0);
	g_assert_cmpint(sd_bus_match_signal(watcher, NULL, FAMFS_BUS_NAME, obj, "org.freedesktop.DBus.Properties",
					    "PropertiesChanged", watch_props_changed, &w), >=, 0);
	for (int i = 0; i < burst; i++) {
		snprintf(last, sizeof(last), MP "/burst-%03d", i);
		g_assert_cmpint(create_file(f->conn, last, 4096, 0644, &e), >=, 0);
	}
	watch_until_added(watcher, &w, last);
	g_test_message("%d CreateFile calls announced in %u FilesAdded signals", burst, w.files_added_signals);
	g_assert_cmpuint(g_hash_table_size(added), ==, burst);
	for (int i = 0; i < burst; i++) {
		char p[64];

		snprintf(p, sizeof(p), MP "/burst-%03d", i);
		g_assert_cmpuint(GPOINTER_TO_UINT(g_hash_table_lookup(added, p)), ==, 1);
	}
	g_assert_true(w.files_seen && w.allocated_seen);
	g_assert_cmpuint(w.files, ==, files_before + burst);
	g_assert_cmpuint(w.files, ==, get_prop_t(f->conn, obj, "Files"));
	g_assert_cmpuint(w.allocated, ==, get_prop_t(f->conn, obj, "Allocated"));

	/* quiet for longer than the flush interval, then one more call */
	g_usleep(50000);
	g_assert_cmpint(create_file(f->conn, MP "/after-burst", 4096, 0644, &e), >=, 0);
	watch_until_added(watcher, &w, MP "/after-burst");
	g_assert_cmpuint(GPOINTER_TO_UINT(g_hash_table_lookup(added, MP "/after-burst")), ==, 1);
	g_assert_cmpuint(g_hash_table_size(added), ==, burst + 1);
	g_assert_cmpuint(w.files, ==, files_before + burst + 1);
	sd_bus_flush_close_unref(watcher);
}

static void add_tests(void)
{
	g_test_add("/bus/roundtrip", struct fixture, NULL, fixture_setup, test_roundtrip, fixture_teardown);
	g_test_add("/bus/errors", struct fixture, NULL, fixture_setup, test_errors, fixture_teardown);
	g_test_add("/bus/log-full", struct fixture, NULL, fixture_setup, test_log_full, fixture_teardown);
	g_test_add("/bus/huge-size-refused", struct fixture, NULL, fixture_setup, test_huge_size_refused,
		   fixture_teardown);
	g_test_add("/bus/batch-bad-first", struct fixture, NULL, fixture_setup, test_batch_bad_first,
		   fixture_teardown);
	g_test_add("/bus/burst-announced", struct fixture, NULL, fixture_setup, test_burst_announced,
		   fixture_teardown);
}

int main(int argc, char **argv)
{
	return bus_test_main(argc, argv, add_tests);
}
