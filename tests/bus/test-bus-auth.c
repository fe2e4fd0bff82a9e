// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Authorization with a real second uid (setpriv): what uid 65534 may read and
 * change with no polkit on the bus, the files' owners and modes as the kernel
 * would judge them, and what a polkit mock (python3-dbusmock) allows on top.
 * The uid 65534 side is this program run as a bus client (bus-client.c).
 */
#include <glib.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "bus-client.h"
#include "bus-fixture.h"
#include "testutil.h"

static char self_exe[4096];

static void test_unprivileged(struct fixture *f, gconstpointer data)
{
	g_autofree char *out = NULL, *errs = NULL;
	g_autoptr(GBytes) before = meta_snapshot(f->img), after = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int rc;

	g_assert_cmpint(create_file(f->conn, MP "/readme", 12, 0644, &e), >=, 0);
	g_bytes_unref(before);
	before = meta_snapshot(f->img);

	/* reads are open to uid 65534 */
	g_assert_cmpint(run(&out, &errs, f->bus.addr, true, famfsctl_exe, "status", NULL), ==, 0);
	g_assert_nonnull(strstr(out, MP));
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&errs, g_free);
	g_assert_cmpint(run(&out, &errs, f->bus.addr, true, famfsctl_exe, "ls", MP, NULL), ==, 0);
	g_assert_nonnull(strstr(out, "readme"));
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&errs, g_free);
	g_assert_cmpint(run(&out, &errs, f->bus.addr, true, famfsctl_exe, "cat", MP "/readme", NULL), ==, 0);
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&errs, g_free);

	/* mutations are not, with no polkit on the bus */
	rc = run(&out, &errs, f->bus.addr, true, famfsctl_exe, "create", "-s", "1M", MP "/evil", NULL);
	g_assert_cmpint(rc, ==, 8);
	g_assert_nonnull(strstr(errs, "org.famfs.Error.AccessDenied"));
	g_assert_nonnull(strstr(errs, "uid 65534"));
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&errs, g_free);
	rc = run(&out, &errs, f->bus.addr, true, famfsctl_exe, "mkdir", MP "/evil", NULL);
	g_assert_cmpint(rc, ==, 8);
	g_assert_nonnull(strstr(errs, "org.famfs.Error.AccessDenied"));
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&errs, g_free);
	/* nor writing data through a writable descriptor */
	{
		g_autofree char *src = make_data("evil.bin", 12, 5);

		/* cp checks the target first: it replaces nothing, whoever asks */
		rc = run(&out, &errs, f->bus.addr, true, famfsctl_exe, "cp", src, MP "/readme", NULL);
		g_assert_cmpint(rc, ==, 8);
		g_assert_nonnull(strstr(errs, "already exists, and famfs replaces nothing"));
		g_clear_pointer(&out, g_free);
		g_clear_pointer(&errs, g_free);
		rc = run(&out, &errs, f->bus.addr, true, famfsctl_exe, "cp", src, MP "/evil", NULL);
		g_assert_cmpint(rc, ==, 8);
		g_assert_nonnull(strstr(errs, "AccessDenied"));
		g_clear_pointer(&out, g_free);
		g_clear_pointer(&errs, g_free);
	}
	after = meta_snapshot(f->img);
	g_assert_true(g_bytes_equal(before, after));
	g_assert_false(list_has(f->conn, MP, "evil", NULL, NULL));

	/* the bus policy: uid 65534 may not own org.famfs.Manager (the daemon itself tries) */
	rc = run(&out, &errs, f->bus.addr, true, manager_exe, "--config=/dev/null", NULL);
	g_assert_cmpint(rc, ==, 1);
	g_assert_nonnull(strstr(errs, "cannot own org.famfs.Manager"));
	g_assert_nonnull(strstr(errs, "Permission denied"));
}

static void test_polkit(struct fixture *f, gconstpointer data)
{
	g_autofree char *out = NULL, *errs = NULL;
	g_autoptr(GError) err = NULL;
	g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "DBUS_SYSTEM_BUS_ADDRESS", f->bus.addr, TRUE);
	const char *argv[] = { "/usr/bin/python3", "-m", "dbusmock", "--system", "--template", "polkitd", NULL };
	sd_bus_error e = SD_BUS_ERROR_NULL;
	uint64_t size;
	uint32_t mode, uid, gid;
	sd_bus_message *reply = NULL;
	GPid mock;
	int rc;

	if (!g_file_test("/usr/lib/python3/dist-packages/dbusmock", G_FILE_TEST_IS_DIR)) {
		g_test_skip("python3-dbusmock is not installed");
		return;
	}
	g_assert_true(g_spawn_async(NULL, (char **)argv, env, G_SPAWN_DO_NOT_REAP_CHILD |
				    G_SPAWN_STDOUT_TO_DEV_NULL, die_with_parent, NULL, &mock, &err));
	wait_name(f->bus.addr, "org.freedesktop.PolicyKit1", mock);

	/* polkit says no by default */
	rc = run(&out, &errs, f->bus.addr, true, famfsctl_exe, "create", "-s", "1M", MP "/pk", NULL);
	g_assert_cmpint(rc, ==, 8);
	g_assert_nonnull(strstr(errs, "org.famfs.Error.AccessDenied"));
	g_assert_nonnull(strstr(errs, "polkit said no"));
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&errs, g_free);

	/* allow file creation only */
	g_assert_cmpint(sd_bus_call_method(f->conn, "org.freedesktop.PolicyKit1",
					   "/org/freedesktop/PolicyKit1/Authority", "org.freedesktop.DBus.Mock",
					   "SetAllowed", &e, NULL, "as", 2, "org.famfs.manager.create-file",
					   "org.famfs.manager.write-file"), >=, 0);
	rc = run(&out, &errs, f->bus.addr, true, famfsctl_exe, "create", "-s", "1M", MP "/pk", NULL);
	if (rc)
		g_printerr("%s", errs);
	g_assert_cmpint(rc, ==, 0);
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&errs, g_free);
	/* created as the caller */
	g_assert_cmpint(manager_call(f->conn, "GetFileMap", &e, &reply, "s", MP "/pk"), >=, 0);
	g_assert_cmpint(sd_bus_message_read(reply, "tuuu", &size, &mode, &uid, &gid), >, 0);
	g_assert_cmpuint(uid, ==, 65534);
	g_assert_cmpuint(gid, ==, 65534);
	sd_bus_message_unref(reply);
	/* cp without the device: famfsctl hands the data over in a sealed memfd (WriteFile) */
	{
		g_autofree char *src = make_data("pk.bin", 70000, 9), *orig = NULL;
		gsize olen;

		g_assert_true(g_file_get_contents(src, &orig, &olen, NULL));
		g_assert_cmpint(chmod(src, 0644), ==, 0);
		g_assert_cmpint(run(&out, &errs, f->bus.addr, true, famfsctl_exe, "cp", src, MP "/pkdata", NULL), ==, 0);
		g_clear_pointer(&out, g_free);
		g_clear_pointer(&errs, g_free);
		g_assert_cmpint(run(&out, &errs, f->bus.addr, true, famfsctl_exe, "cat", MP "/pkdata", NULL), ==, 0);
		g_assert_cmpmem(out, olen, orig, olen);
		g_clear_pointer(&out, g_free);
		g_clear_pointer(&errs, g_free);
	}
	/* mkdir is still not allowed */
	rc = run(&out, &errs, f->bus.addr, true, famfsctl_exe, "mkdir", MP "/pkdir", NULL);
	g_assert_cmpint(rc, ==, 8);
	g_assert_nonnull(strstr(errs, "org.famfs.Error.AccessDenied"));
	g_assert_nonnull(strstr(errs, "org.famfs.manager.mkdir"));
	g_assert_false(list_has(f->conn, MP, "pkdir", NULL, NULL));
	stop_pid(mock, SIGTERM);
}

/* ---- permissions: a second uid against the files' owners and modes ---- */

/* Writes @len bytes at the start of a file through root's device descriptor. */
static void fill_file(sd_bus *conn, const char *path, const void *data, size_t len)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	uint64_t size, chunk, devindex, off, elen;
	uint32_t type;
	uint8_t *map;
	int fd;

	g_assert_cmpint(manager_call(conn, "OpenFile", &e, &reply, "sa{sv}", path, 1,
				     "writable", "b", 1), >=, 0);
	g_assert_cmpint(sd_bus_message_read(reply, "htut", &fd, &size, &type, &chunk), >, 0);
	g_assert_cmpint(sd_bus_message_read(reply, "a(ttt)", 1, &devindex, &off, &elen), >, 0);
	g_assert_cmpuint(elen, >=, len);
	map = mmap(NULL, elen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	g_assert_true(map != MAP_FAILED);
	memcpy(map, data, len);
	g_assert_cmpint(msync(map, elen, MS_SYNC), ==, 0);
	munmap(map, elen);
	sd_bus_message_unref(reply);
}

static void create_owned(sd_bus *conn, const char *path, uint64_t size, uint32_t mode, uint32_t uid,
			 uint32_t gid)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;

	g_assert_cmpint(manager_call(conn, "CreateFile", &e, NULL, "stua{sv}", path, size,
				     mode, 2, "uid", "u", uid, "gid", "u", gid), >=, 0);
}

/* Runs the test binary as a bus client (see bus-client.c) as @who; returns its first line. */
static char *client(struct fixture *f, int who, const char *first, ...)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_autoptr(GError) err = NULL;
	g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "DBUS_SYSTEM_BUS_ADDRESS", f->bus.addr, TRUE);
	char *out = NULL, *nl;
	va_list ap;
	int status;

	argv_add_setpriv(argv, who);
	g_ptr_array_add(argv, self_exe);
	g_ptr_array_add(argv, "--client");
	va_start(ap, first);
	test_argv_add_valist(argv, first, ap);
	va_end(ap);
	g_assert_true(g_spawn_sync("/", (char **)argv->pdata, env, G_SPAWN_SEARCH_PATH, die_with_parent, NULL, &out,
				   NULL, &status, &err));
	nl = strchr(out, '\n');
	if (nl)
		*nl = '\0';
	g_test_message("%s %s -> %s", first, (char *)argv->pdata[who != AS_ROOT ? 7 : 3], out);
	return out;
}

#define assert_prefix(s, prefix) do { \
		if (!g_str_has_prefix((s), (prefix))) \
			g_error("\"%s\" does not start with \"%s\"", (s), (prefix)); \
	} while (0)

#define assert_contains(s, what) do { \
		if (!strstr((s), (what))) \
			g_error("\"%s\" does not contain \"%s\"", (s), (what)); \
	} while (0)

static const char secret_data[] = "0600 root secret";
static const char public_data[] = "0644 root public";

/* The files the permission tests read, made by root. */
static void make_permission_files(struct fixture *f)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;

	create_owned(f->conn, MP "/secret", 4096, 0600, 0, 0);
	fill_file(f->conn, MP "/secret", secret_data, sizeof(secret_data));
	create_owned(f->conn, MP "/public", 4096, 0644, 0, 0);
	fill_file(f->conn, MP "/public", public_data, sizeof(public_data));
	create_owned(f->conn, MP "/group-nobody", 4096, 0640, 1234, 65534);      /* group class */
	create_owned(f->conn, MP "/owner-blocks", 4096, 0064, 65534, 1234);      /* owner class wins */
	create_owned(f->conn, MP "/other-read", 4096, 0604, 1234, 1234);         /* other class */
	create_owned(f->conn, MP "/supplementary", 4096, 0640, 1234, 4242);      /* a supplementary group */
	create_owned(f->conn, MP "/nobody-rw", 4096, 0600, 65534, 65534);
	g_assert_cmpint(manager_call(f->conn, "Mkdir", &e, NULL, "sua{sv}", MP "/priv",
				     0700, 0), >=, 0);
	create_owned(f->conn, MP "/priv/inner", 4096, 0644, 0, 0);
}

static void test_permissions(struct fixture *f, gconstpointer data)
{
	g_autofree char *obj = fs_object(f->conn, MP), *out = NULL, *errs = NULL;
	g_autoptr(GBytes) before = NULL, after = NULL;
	char *line;
	char hex[64] = "";

	make_permission_files(f);
	before = meta_snapshot(f->img);

	/* read permission as the kernel decides it */
	line = client(f, AS_NOBODY, "open", MP "/secret", "auto", "0", NULL);
	assert_prefix(line, "error org.famfs.Error.AccessDenied");
	assert_contains(line, "uid 65534 may not read " MP "/secret (mode 0600, owner 0:0)");
	g_free(line);
	line = client(f, AS_NOBODY, "open", MP "/owner-blocks", "auto", "0", NULL);
	assert_prefix(line, "error org.famfs.Error.AccessDenied");
	g_free(line);
	line = client(f, AS_NOBODY, "open", MP "/priv/inner", "auto", "0", NULL);
	assert_prefix(line, "error org.famfs.Error.AccessDenied");
	assert_contains(line, "no search permission on " MP "/priv");
	g_free(line);
	line = client(f, AS_NOBODY, "open", MP "/supplementary", "auto", "0", NULL);
	assert_prefix(line, "error org.famfs.Error.AccessDenied");
	g_free(line);
	for (const char *const *p = (const char *const[]){ MP "/group-nobody", MP "/other-read", NULL }; *p; p++) {
		line = client(f, AS_NOBODY, "open", *p, "auto", "0", NULL);
		assert_prefix(line, "ok size=4096 ");
		g_free(line);
	}
	line = client(f, AS_NOBODY_GROUP, "open", MP "/supplementary", "auto", "0", NULL);
	assert_prefix(line, "ok size=4096 ");
	g_free(line);
	/* root passes every check */
	line = client(f, AS_ROOT, "open", MP "/priv/inner", "auto", "0", NULL);
	assert_prefix(line, "ok ");
	g_free(line);

	/*
	 * What a reader without the device gets: a sealed read-only copy of
	 * exactly the file (4096 bytes), its bytes at offset 0, not the
	 * superblock; it cannot be written.
	 */
	line = client(f, AS_NOBODY, "open", MP "/public", "auto", "0", NULL);
	for (size_t i = 0; i < 8; i++)
		snprintf(hex + 2 * i, 3, "%02x", (uint8_t)public_data[i]);
	assert_prefix(line, "ok size=4096 st_size=4096 accmode=ro seals=0xf write=no head=");
	{
		g_autofree char *want = g_strdup_printf("head=%s data=%s", hex, hex);

		assert_contains(line, want);
	}
	g_free(line);
	line = client(f, AS_NOBODY, "open", MP "/public", "file", "0", NULL);
	assert_prefix(line, "ok size=4096 st_size=4096 accmode=ro seals=0xf write=no");
	g_free(line);
	/* the whole device is refused, asked for or implied by writing */
	line = client(f, AS_NOBODY, "open", MP "/public", "device", "0", NULL);
	assert_prefix(line, "error org.famfs.Error.AccessDenied");
	assert_contains(line, "org.famfs.manager.open-device");
	g_free(line);
	line = client(f, AS_NOBODY, "open", MP "/other-read", "auto", "1", NULL);
	assert_prefix(line, "error org.famfs.Error.AccessDenied");
	assert_contains(line, "uid 65534 may not write " MP "/other-read");
	g_free(line);
	line = client(f, AS_NOBODY, "write", MP "/other-read", "10", "1", NULL);
	assert_prefix(line, "error org.famfs.Error.AccessDenied");
	assert_contains(line, "uid 65534 may not write " MP "/other-read");
	g_free(line);
	line = client(f, AS_NOBODY, "write", MP "/nobody-rw", "10", "1", NULL);
	assert_prefix(line, "error org.famfs.Error.AccessDenied");
	assert_contains(line, "org.famfs.manager.write-file");
	g_free(line);
	line = client(f, AS_NOBODY, "open", MP "/public", "bogus", "0", NULL);
	assert_prefix(line, "error org.famfs.Error.InvalidArgument");
	g_free(line);
	/* root keeps the device descriptor: the superblock is at its offset 0 */
	line = client(f, AS_ROOT, "open", MP "/public", "auto", "0", NULL);
	assert_contains(line, "head=ff82b287");
	g_free(line);

	/* famfsctl cat takes whatever descriptor it is given */
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_NOBODY, famfsctl_exe, "cat", MP "/public", NULL), ==, 0);
	g_assert_cmpmem(out, sizeof(public_data), public_data, sizeof(public_data));
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_NOBODY, famfsctl_exe, "cat", MP "/secret", NULL), ==, 8);
	g_assert_cmpstr(out, ==, "");
	assert_contains(errs, "org.famfs.Error.AccessDenied");
	assert_contains(errs, MP "/secret");

	/* ls: a directory needs r and x, like ls -l */
	line = client(f, AS_NOBODY, "call", "ListFiles", MP "/priv", NULL);
	assert_prefix(line, "error org.famfs.Error.AccessDenied");
	assert_contains(line, "may not list " MP "/priv");
	g_free(line);
	line = client(f, AS_NOBODY, "call", "ListFiles", MP "/priv/inner", NULL);
	assert_prefix(line, "error org.famfs.Error.AccessDenied");
	g_free(line);
	line = client(f, AS_NOBODY, "call", "ListFiles", MP, NULL);
	g_assert_cmpstr(line, ==, "ok");
	g_free(line);
	line = client(f, AS_NOBODY, "call", "ListFileSystems", NULL);
	g_assert_cmpstr(line, ==, "ok");
	g_free(line);

	/* with no polkit on the bus, every action is root's alone */
	for (const char *const *m = (const char *const[]){ "GetFileMap", "GetFileLayout", "Check", NULL }; *m; m++) {
		line = client(f, AS_NOBODY, "call", *m, MP "/public", NULL);
		assert_prefix(line, "error org.famfs.Error.AccessDenied");
		assert_contains(line, !strcmp(*m, "Check") ? "org.famfs.manager.check" : "org.famfs.manager.read-map");
		g_free(line);
		line = client(f, AS_ROOT, "call", *m, MP "/public", NULL);
		g_assert_cmpstr(line, ==, "ok");
		g_free(line);
	}
	line = client(f, AS_NOBODY, "call", "Replay", NULL);
	assert_contains(line, "org.famfs.manager.replay");
	g_free(line);
	line = client(f, AS_NOBODY, "call", "FsReplay", obj, NULL);
	assert_contains(line, "org.famfs.manager.replay");
	g_free(line);
	line = client(f, AS_NOBODY, "call", "FsCheck", obj, NULL);
	assert_prefix(line, "error org.famfs.Error.AccessDenied");
	assert_contains(line, "org.famfs.manager.check");
	g_free(line);
	for (const char *const *m = (const char *const[]){ "Replay", "FsReplay", "FsCheck", NULL }; *m; m++) {
		line = client(f, AS_ROOT, "call", *m, obj, NULL);
		g_assert_cmpstr(line, ==, "ok");
		g_free(line);
	}
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_NOBODY, famfsctl_exe, "check", MP, NULL), !=, 0);
	assert_contains(errs, "org.famfs.Error.AccessDenied");
	line = client(f, AS_NOBODY, "call", "CreateFile", MP "/mine", "0644", NOBODY, NOBODY, NULL);
	assert_prefix(line, "error org.famfs.Error.AccessDenied");
	assert_contains(line, "org.famfs.manager.create-file");
	g_free(line);
	line = client(f, AS_NOBODY, "call", "CreateFiles", MP "/mine", "0644", NULL);
	assert_prefix(line, "error org.famfs.Error.AccessDenied");
	g_free(line);
	line = client(f, AS_NOBODY, "call", "Mkdir", MP "/mine", "0755", NOBODY, NOBODY, NULL);
	assert_prefix(line, "error org.famfs.Error.AccessDenied");
	assert_contains(line, "org.famfs.manager.mkdir");
	g_free(line);

	after = meta_snapshot(f->img);
	g_assert_true(g_bytes_equal(before, after));
}

/* The same uid once polkit (python3-dbusmock) allows some actions. */
static void test_permissions_polkit(struct fixture *f, gconstpointer data)
{
	g_autoptr(GError) err = NULL;
	g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "DBUS_SYSTEM_BUS_ADDRESS", f->bus.addr, TRUE);
	const char *argv[] = { "/usr/bin/python3", "-m", "dbusmock", "--system", "--template", "polkitd", NULL };
	g_autofree char *obj = fs_object(f->conn, MP);
	sd_bus_error e = SD_BUS_ERROR_NULL;
	uint32_t mode;
	char *line;
	GPid mock;

	if (!g_file_test("/usr/lib/python3/dist-packages/dbusmock", G_FILE_TEST_IS_DIR)) {
		g_test_skip("python3-dbusmock is not installed");
		return;
	}
	make_permission_files(f);
	g_assert_true(g_spawn_async(NULL, (char **)argv, env, G_SPAWN_DO_NOT_REAP_CHILD |
				    G_SPAWN_STDOUT_TO_DEV_NULL, die_with_parent, NULL, &mock, &err));
	wait_name(f->bus.addr, "org.freedesktop.PolicyKit1", mock);

	/* polkit says no by default, to each action by name */
	line = client(f, AS_NOBODY, "call", "Check", MP, NULL);
	assert_prefix(line, "error org.famfs.Error.AccessDenied");
	assert_contains(line, "org.famfs.manager.check: polkit said no");
	g_free(line);

	g_assert_cmpint(sd_bus_call_method(f->conn, "org.freedesktop.PolicyKit1",
					   "/org/freedesktop/PolicyKit1/Authority", "org.freedesktop.DBus.Mock",
					   "SetAllowed", &e, NULL, "as", 5, "org.famfs.manager.read-map",
					   "org.famfs.manager.check", "org.famfs.manager.replay",
					   "org.famfs.manager.create-file", "org.famfs.manager.write-file"), >=, 0);
	for (const char *const *m = (const char *const[]){ "GetFileMap", "GetFileLayout", "Check", NULL }; *m; m++) {
		line = client(f, AS_NOBODY, "call", *m, MP "/public", NULL);
		g_assert_cmpstr(line, ==, "ok");
		g_free(line);
	}
	/* polkit's yes does not open files the caller may not read */
	line = client(f, AS_NOBODY, "call", "GetFileMap", MP "/secret", NULL);
	assert_prefix(line, "error org.famfs.Error.AccessDenied");
	assert_contains(line, "may not read " MP "/secret");
	g_free(line);
	for (const char *const *m = (const char *const[]){ "Replay", "FsReplay", "FsCheck", NULL }; *m; m++) {
		line = client(f, AS_NOBODY, "call", *m, obj, NULL);
		g_assert_cmpstr(line, ==, "ok");
		g_free(line);
	}

	/* WriteFile: the caller's sealed memfd into a file it may write, never past its size */
	line = client(f, AS_NOBODY, "write", MP "/nobody-rw", "4000", "1", NULL);
	g_assert_cmpstr(line, ==, "ok written=4000");
	g_free(line);
	{
		g_autofree char *out = NULL, *errs = NULL;
		char want[4096];

		memset(want, 'w', 4000);
		memset(want + 4000, 0, 96);
		g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_ROOT, famfsctl_exe, "cat", MP "/nobody-rw", NULL), ==, 0);
		g_assert_cmpmem(out, 4096, want, 4096);
	}
	line = client(f, AS_NOBODY, "write", MP "/nobody-rw", "10", "0", NULL);
	assert_prefix(line, "error org.famfs.Error.InvalidArgument");
	assert_contains(line, "sealed");
	g_free(line);
	line = client(f, AS_NOBODY, "write", MP "/nobody-rw", "4097", "1", NULL);
	assert_prefix(line, "error org.famfs.Error.InvalidArgument");
	assert_contains(line, "4097 bytes of data do not fit in the file's 4096");
	g_free(line);
	line = client(f, AS_NOBODY, "write", MP "/secret", "10", "1", NULL);
	assert_prefix(line, "error org.famfs.Error.AccessDenied");
	assert_contains(line, "may not write " MP "/secret");
	g_free(line);

	/* the device descriptor has an action of its own */
	line = client(f, AS_NOBODY, "open", MP "/public", "device", "0", NULL);
	assert_prefix(line, "error org.famfs.Error.AccessDenied");
	assert_contains(line, "org.famfs.manager.open-device: polkit said no");
	g_free(line);

	/* own files: yes; another owner, a group not the caller's, setuid, setgid: no */
	line = client(f, AS_NOBODY, "call", "CreateFile", MP "/own", "0644", NOBODY, NOBODY, NULL);
	g_assert_cmpstr(line, ==, "ok");
	g_free(line);
	line = client(f, AS_NOBODY_GROUP, "call", "CreateFile", MP "/own-group", "0640", NOBODY, OTHER_GID, NULL);
	g_assert_cmpstr(line, ==, "ok");
	g_free(line);
	for (const char *const *c = (const char *const[]){ "0644", "0", NOBODY, "0644", NOBODY, "0",
			"04755", NOBODY, NOBODY, "02755", NOBODY, NOBODY, NULL }; *c; c += 3) {
		line = client(f, AS_NOBODY, "call", "CreateFile", MP "/foreign", c[0], c[1], c[2], NULL);
		assert_prefix(line, "error org.famfs.Error.AccessDenied");
		assert_contains(line, "org.famfs.manager.set-owner: polkit said no");
		g_free(line);
	}
	line = client(f, AS_NOBODY, "call", "CreateFiles", MP "/foreign", "06755", NULL);
	assert_prefix(line, "error org.famfs.Error.AccessDenied");
	assert_contains(line, "org.famfs.manager.set-owner");
	g_free(line);
	g_assert_false(list_has(f->conn, MP, "foreign", NULL, NULL));

	g_assert_cmpint(sd_bus_call_method(f->conn, "org.freedesktop.PolicyKit1",
					   "/org/freedesktop/PolicyKit1/Authority", "org.freedesktop.DBus.Mock",
					   "SetAllowed", &e, NULL, "as", 4, "org.famfs.manager.open-device",
					   "org.famfs.manager.set-owner", "org.famfs.manager.create-file",
					   "org.famfs.manager.mkdir"), >=, 0);
	line = client(f, AS_NOBODY, "open", MP "/public", "device", "0", NULL);
	assert_contains(line, "head=ff82b287");
	g_free(line);
	/* permissions still hold for a caller with the device */
	line = client(f, AS_NOBODY, "open", MP "/secret", "device", "0", NULL);
	assert_prefix(line, "error org.famfs.Error.AccessDenied");
	g_free(line);
	line = client(f, AS_NOBODY, "call", "CreateFile", MP "/foreign", "04755", "0", "0", NULL);
	g_assert_cmpstr(line, ==, "ok");
	g_free(line);
	g_assert_true(list_has(f->conn, MP, "foreign", NULL, &mode));
	g_assert_cmpuint(mode & 07777, ==, 04755);
	line = client(f, AS_NOBODY, "call", "Mkdir", MP "/foreign-dir", "02755", "0", "0", NULL);
	g_assert_cmpstr(line, ==, "ok");
	g_free(line);
	stop_pid(mock, SIGTERM);
}

static void add_tests(void)
{
	g_test_add("/bus/auth/unprivileged", struct fixture, NULL, fixture_setup, test_unprivileged,
		   fixture_teardown);
	g_test_add("/bus/auth/polkit", struct fixture, NULL, fixture_setup, test_polkit, fixture_teardown);
	g_test_add("/bus/auth/permissions", struct fixture, NULL, fixture_setup, test_permissions,
		   fixture_teardown);
	g_test_add("/bus/auth/permissions-polkit", struct fixture, NULL, fixture_setup, test_permissions_polkit,
		   fixture_teardown);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "--client"))
		return bus_client_main(argc - 2, argv + 2);
	if (readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1) < 0)
		return 1;
	return bus_test_main(argc, argv, add_tests);
}
