// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Hostile names on the medium (not UTF-8, controls, forged lines, .meta): how
 * the bus, famfsctl, the daemon's log and fsck.famfs show them, and that the
 * escaped form is accepted back.
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "bus-fixture.h"
#include "log.h"
#include "omf.h"

/* ---- hostile names ---- */

/*
 * Names legal on the medium (upstream writes any byte but NUL) that are not
 * UTF-8 or hold controls, and how the bus shows them (escape.h).
 */
static const struct {
	const char *raw, *escaped;
} hostile[] = {
	{ "caf\xe9", "caf\\xe9" },
	{ "evil\xe9\n\x1b[31mERROR [forged]", "evil\\xe9\\x0a\\x1b[31mERROR [forged]" },
	{ "nonchar\xef\xb7\x90", "nonchar\\xef\\xb7\\x90" },
	{ "back\\x41slash", "back\\x5cx41slash" },
	{ "caf\xc3\xa9", "caf\xc3\xa9" },
};

/*
 * Renames the FILE entries "n<k>" to hostile[k].raw, "meta" to ".meta" and
 * "dup" to hostile[1].raw (both refused on replay).
 */
static void rename_entries_raw(const char *image)
{
	size_t len = FAMFS_LOG_OFFSET + FAMFS_LOG_LEN_DEFAULT;
	int fd = open(image, O_RDWR);
	uint8_t *base;
	struct famfs_log_header *h;

	g_assert_cmpint(fd, >=, 0);
	base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	g_assert_true(base != MAP_FAILED);
	h = (struct famfs_log_header *)(base + FAMFS_LOG_OFFSET);
	for (uint64_t i = 0; i < h->next_index; i++) {
		struct famfs_log_entry *en = &famfs_log_entries(h)[i];
		const char *to = NULL;

		if (en->type != FAMFS_LOG_FILE)
			continue;
		if (!strcmp(en->file.relpath, "dup"))
			to = hostile[1].raw;
		if (!strcmp(en->file.relpath, "meta"))
			to = ".meta";
		for (size_t k = 0; k < G_N_ELEMENTS(hostile); k++) {
			g_autofree char *n = g_strdup_printf("n%zu", k);

			if (!strcmp(en->file.relpath, n))
				to = hostile[k].raw;
		}
		if (!to)
			continue;
		memset(en->file.relpath, 0, sizeof(en->file.relpath));
		memcpy(en->file.relpath, to, strlen(to));
		en->crc = famfs_log_entry_crc(en);
	}
	g_assert_cmpint(msync(base, len, MS_SYNC), ==, 0);
	munmap(base, len);
	close(fd);
}

/* Text a person reads: UTF-8, no terminal escape, no line forged by a name. */
static void assert_safe_text(const char *what, const char *text)
{
	if (!g_utf8_validate(text, -1, NULL) || strchr(text, '\x1b') || strstr(text, "\nERROR [forged]") ||
	    g_str_has_prefix(text, "ERROR [forged]"))
		g_error("%s is not safe to print:\n%s", what, text);
}

static void test_names(void)
{
	struct private_bus b = {0};
	g_autofree char *ua = write_uuid_file("uuid-names", "5b1d1a3e-7f0c-4a55-9d2e-0a6f3c1b2d4e");
	g_autofree char *img = make_image("names.img", 1ULL << 30, ua);
	g_autofree char *logfile = g_build_filename(topdir, "names-daemon.log", NULL);
	g_autofree char *obj = NULL, *h = NULL, *reasons = NULL, *out = NULL, *errs = NULL, *log = NULL;
	const char *devs[] = { img, NULL };
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	sd_bus *conn;
	GPid pid;
	int st, saved_stderr, logfd;

	/* Files made the normal way, then renamed on the medium as another tool could have. */
	bus_start(&b, "bus-names");
	pid = daemon_start(&b, ua, devs, NULL);
	conn = bus_connect(b.addr);
	for (size_t k = 0; k < G_N_ELEMENTS(hostile); k++) {
		g_autofree char *p = g_strdup_printf("/run/famfs-test/names/n%zu", k);

		g_assert_cmpint(create_file(conn, p, 4096, 0644, &e), >=, 0);
	}
	g_assert_cmpint(create_file(conn, "/run/famfs-test/names/dup", 4096, 0644, &e), >=, 0);
	g_assert_cmpint(create_file(conn, "/run/famfs-test/names/meta", 4096, 0644, &e), >=, 0);
	sd_bus_flush_close_unref(conn);
	stop_pid(pid, SIGTERM);
	rename_entries_raw(img);

	/* The daemon's log goes to a file: it inherits our stderr. */
	fflush(stderr);
	saved_stderr = dup(STDERR_FILENO);
	logfd = open(logfile, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	g_assert_cmpint(logfd, >=, 0);
	g_assert_cmpint(dup2(logfd, STDERR_FILENO), ==, STDERR_FILENO);
	pid = daemon_start(&b, ua, devs, NULL);
	g_assert_cmpint(dup2(saved_stderr, STDERR_FILENO), ==, STDERR_FILENO);
	close(saved_stderr);
	close(logfd);
	conn = bus_connect(b.addr);

	/* Health says why, in valid UTF-8, with the name escaped. */
	obj = fs_object(conn, "/run/famfs-test/names");
	h = get_prop_s(conn, obj, "Health");
	reasons = get_reasons(conn, obj);
	g_assert_cmpstr(h, ==, "degraded");
	g_assert_nonnull(strstr(reasons, "2 log entries refused"));
	g_assert_nonnull(strstr(reasons, hostile[1].escaped));
	g_assert_false(list_has(conn, "/run/famfs-test/names", ".meta", NULL, NULL));

	/* The whole object tree still reads. */
	g_assert_cmpint(sd_bus_call_method(conn, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH,
					   "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", &e, &reply, ""),
			>=, 0);
	g_clear_pointer(&reply, sd_bus_message_unref);

	/* ListFiles: escaped names; ListFilesRaw: the bytes on the medium. */
	for (size_t k = 0; k < G_N_ELEMENTS(hostile); k++)
		g_assert_true(list_has(conn, "/run/famfs-test/names", hostile[k].escaped, NULL, NULL));
	{
		const void *bytes;
		size_t n, found = 0;
		uint64_t size;
		uint32_t mode, uid, gid;

		g_assert_cmpint(manager_call(conn, "ListFilesRaw", &e, &reply, "s",
					     "/run/famfs-test/names"), >=, 0);
		g_assert_cmpint(sd_bus_message_enter_container(reply, 'a', "(aytuuu)"), >, 0);
		while (sd_bus_message_enter_container(reply, 'r', "aytuuu") > 0) {
			g_assert_cmpint(sd_bus_message_read_array(reply, 'y', &bytes, &n), >=, 0);
			g_assert_cmpint(sd_bus_message_read(reply, "tuuu", &size, &mode, &uid, &gid), >, 0);
			g_assert_cmpint(sd_bus_message_exit_container(reply), >=, 0);
			for (size_t k = 0; k < G_N_ELEMENTS(hostile); k++)
				if (n == strlen(hostile[k].raw) && !memcmp(bytes, hostile[k].raw, n))
					found++;
		}
		g_assert_cmpuint(found, ==, G_N_ELEMENTS(hostile));
		g_clear_pointer(&reply, sd_bus_message_unref);
	}

	/* The escaped name is accepted back: GetFileMap, OpenFile, famfsctl cat. */
	for (size_t k = 0; k < G_N_ELEMENTS(hostile); k++) {
		g_autofree char *p = g_strdup_printf("/run/famfs-test/names/%s", hostile[k].escaped);

		g_assert_cmpint(manager_call(conn, "GetFileMap", &e, &reply, "s", p), >=, 0);
		g_clear_pointer(&reply, sd_bus_message_unref);
		g_assert_cmpint(manager_call(conn, "OpenFile", &e, &reply, "sa{sv}", p, 0),
				>=, 0);
		g_clear_pointer(&reply, sd_bus_message_unref);
		g_assert_cmpint(run(&out, &errs, b.addr, false, famfsctl_exe, "cat", p, NULL), ==, 0);
	}
	g_assert_cmpint(manager_call(conn, "GetFileMap", &e, &reply, "s",
				     "/run/famfs-test/names/bad\\x00nul"), <, 0);
	g_assert_cmpstr(e.name, ==, "org.famfs.Error.InvalidPath");
	sd_bus_error_free(&e);

	/* famfsctl takes a raw (not UTF-8) argument too. */
	g_assert_cmpint(run(&out, &errs, b.addr, false, famfsctl_exe, "map", "/run/famfs-test/names/caf\xe9", NULL),
			==, 0);
	assert_safe_text("famfsctl map", out);
	g_assert_nonnull(strstr(out, "caf\\xe9"));

	/* A new name given escaped is created with its raw bytes. */
	g_assert_cmpint(create_file(conn, "/run/famfs-test/names/new\\xff", 4096, 0644, &e), >=, 0);
	g_assert_true(list_has(conn, "/run/famfs-test/names", "new\\xff", NULL, NULL));

	/* .meta at the root is the kernel backend's: refused with its reason. */
	g_assert_cmpint(create_file(conn, "/run/famfs-test/names/.meta", 4096, 0644, &e), <, 0);
	g_assert_cmpstr(e.name, ==, "org.famfs.Error.InvalidPath");
	g_assert_nonnull(strstr(e.message, "reserved"));
	sd_bus_error_free(&e);
	g_assert_cmpint(manager_call(conn, "Mkdir", &e, NULL, "sua{sv}",
				     "/run/famfs-test/names/.meta", 0755, 0), <, 0);
	g_assert_cmpstr(e.name, ==, "org.famfs.Error.InvalidPath");
	sd_bus_error_free(&e);
	g_assert_cmpint(manager_call(conn, "Mkdir", &e, NULL, "sua{sv}",
				     "/run/famfs-test/names/.meta/x", 0755, 1, "parents", "b", 1), <, 0);
	g_assert_cmpstr(e.name, ==, "org.famfs.Error.InvalidPath");
	sd_bus_error_free(&e);
	g_assert_cmpint(manager_call(conn, "Mkdir", &e, NULL, "sua{sv}",
				     "/run/famfs-test/names/d/.meta", 0755, 1, "parents", "b", 1), >=, 0);

	/* famfsctl: status and ls work and print nothing a terminal would act on. */
	g_assert_cmpint(run(&out, &errs, b.addr, false, famfsctl_exe, "status", NULL), ==, 0);
	assert_safe_text("famfsctl status", out);
	g_assert_nonnull(strstr(out, hostile[1].escaped));
	g_assert_cmpint(run(&out, &errs, b.addr, false, famfsctl_exe, "ls", "/run/famfs-test/names", NULL), ==, 0);
	assert_safe_text("famfsctl ls", out);
	for (size_t k = 0; k < G_N_ELEMENTS(hostile); k++)
		g_assert_nonnull(strstr(out, hostile[k].escaped));
	for (const char *const *cmd = (const char *const[]){ "status", "ls", NULL }; *cmd; cmd++) {
		json_object *j;

		g_assert_cmpint(run(&out, &errs, b.addr, false, famfsctl_exe, "--json", *cmd,
				    !strcmp(*cmd, "ls") ? "/run/famfs-test/names" : NULL, NULL), ==, 0);
		g_assert_true(g_utf8_validate(out, -1, NULL));
		j = json_tokener_parse(out);
		g_assert_nonnull(j);
		json_object_put(j);
	}

	sd_bus_flush_close_unref(conn);
	g_assert_cmpint(waitpid(pid, &st, WNOHANG), ==, 0);
	stop_pid(pid, SIGTERM);
	private_bus_stop(&b);

	/* The daemon's log: the first refused entry is quoted, escaped. */
	g_assert_true(g_file_get_contents(logfile, &log, NULL, NULL));
	g_test_message("the daemon's log:\n%s", log);
	assert_safe_text("the daemon's log", log);
	g_assert_nonnull(strstr(log, hostile[1].escaped));

	/* fsck.famfs shows the same names the same way. */
	g_assert_cmpint(run(&out, &errs, NULL, false, fsck_exe, "-n", img, NULL), ==, 4);
	assert_safe_text("fsck.famfs", out);
	g_assert_nonnull(strstr(out, hostile[1].escaped));
	g_unlink(img);
	g_unlink(logfile);
}

static void add_tests(void)
{
	g_test_add_func("/bus/names", test_names);
}

int main(int argc, char **argv)
{
	return bus_test_main(argc, argv, add_tests);
}
