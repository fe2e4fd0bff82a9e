// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Administering file systems over the bus: Check, Format and Repair as
 * org.famfs.Job1 jobs (Completed, Result, Cancel, a job cancelled midway,
 * a device that goes mid-job, two clients formatting one device at once,
 * a format while a check runs), Attach and Detach,
 * Reload and SIGHUP, SetAutomount, the famfsctl verbs on top, and every
 * method refused to uid 65534 without polkit and by python3-dbusmock's.
 * Jobs that must still be running when the test acts on them are slowed
 * by FAMFS_MANAGER_JOB_STEP_DELAY_MS in the daemon's environment.
 */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "bus-client.h"
#include "bus-fixture.h"
#include "log.h"
#include "omf.h"
#include "testutil.h"

#define JOB_DELAY_ENV "FAMFS_MANAGER_JOB_STEP_DELAY_MS"

static char self_exe[4096];

#define assert_prefix(s, prefix) do { \
		if (!g_str_has_prefix((s), (prefix))) \
			g_error("\"%s\" does not start with \"%s\"", (s), (prefix)); \
	} while (0)

#define assert_contains(s, what) do { \
		if (!strstr((s), (what))) \
			g_error("\"%s\" does not contain \"%s\"", (s), (what)); \
	} while (0)

/* The daemon of the fixture with its job steps slowed down. */
static void slow_setup(struct fixture *f, gconstpointer data)
{
	g_setenv(JOB_DELAY_ENV, "150", TRUE);
	fixture_setup(f, data);
	g_unsetenv(JOB_DELAY_ENV);
}

/* The daemon of the fixture with its stderr in topdir/daemon.log, "<N>"-prefixed. */
static char *log_path;

static void logged_setup(struct fixture *f, gconstpointer data)
{
	g_free(log_path);
	log_path = g_build_filename(topdir, "daemon.log", NULL);
	g_unlink(log_path);
	daemon_log = log_path;
	fixture_setup(f, data);
	daemon_log = NULL;
}

/* A line of the daemon's log at @prio containing every string given. */
#define assert_logged(prio, ...) do { \
		if (!log_has_line(log_path, (prio), __VA_ARGS__, NULL)) { \
			g_autofree char *text_ = NULL; \
			(void)g_file_get_contents(log_path, &text_, NULL, NULL); \
			g_error("no line at priority %d with %s in the daemon's log:\n%s", (prio), #__VA_ARGS__, \
				text_ ? text_ : "(none)"); \
		} \
	} while (0)

/* This program as a bus client (bus-client.c), as @who. */
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
	return out;
}

/* An image of @size bytes with no file system: a byte pattern from @seed everywhere. */
static char *blank_image(const char *name, uint64_t size, unsigned seed)
{
	char *p = g_build_filename(topdir, name, NULL);
	g_autofree uint8_t *buf = g_malloc(1 << 20);
	GRand *rnd = g_rand_new_with_seed(seed);
	int fd = open(p, O_CREAT | O_TRUNC | O_WRONLY, 0644);

	g_assert_cmpint(fd, >=, 0);
	for (uint64_t off = 0; off < size; off += 1 << 20) {
		for (size_t i = 0; i < 1 << 20; i++)
			buf[i] = g_rand_int(rnd) & 0xff;
		g_assert_cmpint(pwrite(fd, buf, 1 << 20, (off_t)off), ==, 1 << 20);
	}
	g_rand_free(rnd);
	close(fd);
	return p;
}

static GBytes *file_bytes(const char *path)
{
	gchar *data = NULL;
	gsize len = 0;

	g_assert_true(g_file_get_contents(path, &data, &len, NULL));
	return g_bytes_new_take(data, len);
}

/* Calls @method (returning an object) on @obj's @iface; NULL with @e set on failure. */
static char *call_o(sd_bus *bus, const char *obj, const char *iface, const char *method, sd_bus_error *e,
		    const char *types, ...)
{
	sd_bus_message *reply = NULL;
	const char *o;
	char *ret = NULL;
	va_list ap;
	int r;

	va_start(ap, types);
	r = sd_bus_call_methodv(bus, FAMFS_BUS_NAME, obj, iface, method, e, &reply, types, ap);
	va_end(ap);
	if (r < 0)
		return NULL;
	g_assert_cmpint(sd_bus_message_read(reply, "o", &o), >, 0);
	ret = g_strdup(o);
	sd_bus_message_unref(reply);
	return ret;
}

static char *job_s(sd_bus *bus, const char *job, const char *prop)
{
	char *v = NULL;

	g_assert_cmpint(sd_bus_get_property_string(bus, FAMFS_BUS_NAME, job, FAMFS_JOB_IFACE, prop, NULL, &v), >=, 0);
	return v;
}

static int job_b(sd_bus *bus, const char *job, const char *prop)
{
	int v = -1;

	g_assert_cmpint(sd_bus_get_property_trivial(bus, FAMFS_BUS_NAME, job, FAMFS_JOB_IFACE, prop, NULL, 'b', &v),
			>=, 0);
	return v;
}

static double job_progress(sd_bus *bus, const char *job)
{
	double v = -1;

	g_assert_cmpint(sd_bus_get_property_trivial(bus, FAMFS_BUS_NAME, job, FAMFS_JOB_IFACE, "Progress", NULL, 'd',
						    &v), >=, 0);
	return v;
}

/* Waits (at most 60 s) for @job to end; returns Success. */
static bool job_wait(sd_bus *bus, const char *job)
{
	for (int i = 0; i < 6000 && job_b(bus, job, "Running"); i++)
		g_usleep(10000);
	g_assert_false(job_b(bus, job, "Running"));
	return job_b(bus, job, "Success");
}

/* Waits until @job has made some progress (it is then midway). */
static void job_wait_progress(sd_bus *bus, const char *job)
{
	for (int i = 0; i < 3000 && job_progress(bus, job) <= 0; i++)
		g_usleep(10000);
	g_assert_cmpfloat(job_progress(bus, job), >, 0);
	g_assert_true(job_b(bus, job, "Running"));
}

static void assert_job_error(sd_bus *bus, const char *job, const char *name, const char *text)
{
	g_autofree char *en = job_s(bus, job, "ErrorName"), *msg = job_s(bus, job, "Message");

	g_assert_false(job_b(bus, job, "Success"));
	g_assert_cmpstr(en, ==, name);
	if (text)
		assert_contains(msg, text);
}

static void assert_error(sd_bus_error *e, const char *name, const char *text)
{
	if (!sd_bus_error_has_name(e, name))
		g_error("expected %s, got %s: %s", name, e->name ? e->name : "(none)", e->message ? e->message : "");
	if (text)
		assert_contains(e->message, text);
	sd_bus_error_free(e);
}

/* The Completed signals seen on a connection. */
struct completed {
	char path[256];
	int success;
	char message[512];
	int count;
};

static int on_completed(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
	struct completed *c = userdata;
	const char *msg;
	int ok;

	if (sd_bus_message_read(m, "bs", &ok, &msg) < 0)
		return 0;
	snprintf(c->path, sizeof(c->path), "%s", sd_bus_message_get_path(m));
	c->success = ok;
	snprintf(c->message, sizeof(c->message), "%s", msg);
	c->count++;
	return 0;
}

static void wait_completed(sd_bus *bus, struct completed *c, int count)
{
	for (int i = 0; i < 600 && c->count < count; i++) {
		while (sd_bus_process(bus, NULL) > 0)
			;
		if (c->count < count)
			(void)sd_bus_wait(bus, 100000);
	}
	g_assert_cmpint(c->count, ==, count);
}

static bool has_mountpoint(sd_bus *bus, const char *mountpoint)
{
	sd_bus_message *reply = NULL;
	const char *obj, *uuid, *dev, *mp, *role, *health;
	bool found = false;

	g_assert_cmpint(manager_call(bus, "ListFileSystems", NULL, &reply, ""), >=, 0);
	g_assert_cmpint(sd_bus_message_enter_container(reply, 'a', "(osssss)"), >=, 0);
	while (sd_bus_message_read(reply, "(osssss)", &obj, &uuid, &dev, &mp, &role, &health) > 0)
		found |= !strcmp(mp, mountpoint);
	sd_bus_message_unref(reply);
	return found;
}

static bool has_device(sd_bus *bus, const char *device, char **ret_mountpoint)
{
	sd_bus_message *reply = NULL;
	const char *obj, *uuid, *dev, *mp, *role, *health;
	bool found = false;

	g_assert_cmpint(manager_call(bus, "ListFileSystems", NULL, &reply, ""), >=, 0);
	g_assert_cmpint(sd_bus_message_enter_container(reply, 'a', "(osssss)"), >=, 0);
	while (sd_bus_message_read(reply, "(osssss)", &obj, &uuid, &dev, &mp, &role, &health) > 0) {
		if (!strcmp(dev, device)) {
			found = true;
			if (ret_mountpoint)
				*ret_mountpoint = g_strdup(mp);
		}
	}
	sd_bus_message_unref(reply);
	return found;
}

/* ---- Check ---- */

static void test_check(struct fixture *f, gconstpointer data)
{
	g_autofree char *obj = fs_object(f->conn, MP), *job = NULL, *job2 = NULL, *s = NULL;
	g_autofree char *out = NULL, *errs = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	struct completed c = { 0 };
	const char *verdict;
	uint64_t errors, warnings;

	g_assert_cmpint(create_file(f->conn, MP "/a", 4096, 0644, &e), >=, 0);
	g_assert_cmpint(sd_bus_match_signal(f->conn, NULL, FAMFS_BUS_NAME, NULL, FAMFS_JOB_IFACE, "Completed",
					    on_completed, &c), >=, 0);
	job = call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Check", &e, "sa{sv}", MP, 0);
	g_assert_nonnull(job);
	assert_prefix(job, FAMFS_JOB_PATH_PREFIX "/");
	wait_completed(f->conn, &c, 1);
	g_assert_cmpstr(c.path, ==, job);
	g_assert_true(c.success);
	assert_contains(c.message, "clean: 0 errors");
	g_assert_true(job_wait(f->conn, job));
	s = job_s(f->conn, job, "Operation");
	g_assert_cmpstr(s, ==, "check");
	g_clear_pointer(&s, free);
	s = job_s(f->conn, job, "Device");
	g_assert_cmpstr(s, ==, f->img);
	g_clear_pointer(&s, free);
	s = job_s(f->conn, job, "ErrorName");
	g_assert_cmpstr(s, ==, "");
	g_clear_pointer(&s, free);
	g_assert_cmpfloat(job_progress(f->conn, job), ==, 1.0);
	g_assert_cmpint(sd_bus_call_method(f->conn, FAMFS_BUS_NAME, job, FAMFS_JOB_IFACE, "Result", &e, &reply, ""), >=, 0);
	g_assert_cmpint(sd_bus_message_read(reply, "stt", &verdict, &errors, &warnings), >, 0);
	g_assert_cmpstr(verdict, ==, "clean");
	g_assert_cmpuint(errors, ==, 0);
	reply = sd_bus_message_unref(reply);

	/* FileSystem1.Check is the same job */
	job2 = call_o(f->conn, obj, FAMFS_FS_IFACE, "Check", &e, "a{sv}", 0);
	g_assert_nonnull(job2);
	g_assert_cmpstr(job2, !=, job);
	g_assert_true(job_wait(f->conn, job2));
	{
		sd_bus_message *v = NULL;
		const char *o;

		g_assert_cmpint(sd_bus_get_property(f->conn, FAMFS_BUS_NAME, job2, FAMFS_JOB_IFACE, "FileSystem", NULL,
						    &v, "o"), >=, 0);
		g_assert_cmpint(sd_bus_message_read(v, "o", &o), >, 0);
		g_assert_cmpstr(o, ==, obj);
		sd_bus_message_unref(v);
	}

	/* refusals: nothing starts */
	g_assert_null(call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Check", &e, "sa{sv}", "/nowhere", 0));
	assert_error(&e, FAMFS_ERROR_NOT_MOUNTED, "not under the mount point");
	g_assert_null(call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Check", &e, "sa{sv}", MP, 1, "force",
			     "b", 1));
	assert_error(&e, FAMFS_ERROR_INVALID_ARGUMENT, "unknown option \"force\"");
	g_assert_null(call_o(f->conn, obj, FAMFS_FS_IFACE, "Check", &e, "a{sv}", 1, "bogus", "s", "x"));
	assert_error(&e, FAMFS_ERROR_INVALID_ARGUMENT, "unknown option \"bogus\"");
	g_assert_cmpint(c.count, ==, 1);

	/* famfsctl check waits on the job */
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_ROOT, famfsctl_exe, "check", MP, NULL), ==, 0);
	assert_contains(out, MP ": clean (0 errors, 0 warnings)");
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_ROOT, famfsctl_exe, "--json", "check", MP, NULL), ==, 0);
	assert_contains(out, "\"verdict\":\"clean\"");
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_ROOT, famfsctl_exe, "check", "--no-wait", MP, NULL), ==, 0);
	assert_contains(out, "started " FAMFS_JOB_PATH_PREFIX "/");
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_ROOT, famfsctl_exe, "check", "/nowhere", NULL), ==, 8);
	assert_contains(errs, "org.famfs.Error.NotMounted");
}

/* A check still running: Result refused, Detach refused, then cancelled. */
static void test_check_cancel(struct fixture *f, gconstpointer data)
{
	g_autofree char *obj = fs_object(f->conn, MP), *job = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	struct completed c = { 0 };

	g_assert_cmpint(sd_bus_match_signal(f->conn, NULL, FAMFS_BUS_NAME, NULL, FAMFS_JOB_IFACE, "Completed",
					    on_completed, &c), >=, 0);
	job = call_o(f->conn, obj, FAMFS_FS_IFACE, "Check", &e, "a{sv}", 0);
	g_assert_nonnull(job);
	g_assert_true(job_b(f->conn, job, "Running"));
	g_assert_cmpint(sd_bus_call_method(f->conn, FAMFS_BUS_NAME, job, FAMFS_JOB_IFACE, "Result", &e, NULL, ""), <, 0);
	assert_error(&e, FAMFS_ERROR_NOT_FINISHED, "still running");
	g_assert_cmpint(sd_bus_call_method(f->conn, FAMFS_BUS_NAME, obj, FAMFS_FS_IFACE, "Detach", &e, NULL, "a{sv}",
					   0), <, 0);
	assert_error(&e, FAMFS_ERROR_JOB_RUNNING, "check job");
	g_assert_true(has_mountpoint(f->conn, MP));
	g_assert_cmpint(sd_bus_call_method(f->conn, FAMFS_BUS_NAME, job, FAMFS_JOB_IFACE, "Cancel", &e, NULL, ""), >=, 0);
	wait_completed(f->conn, &c, 1);
	g_assert_false(c.success);
	assert_contains(c.message, "cancelled");
	g_assert_false(job_wait(f->conn, job));
	assert_job_error(f->conn, job, FAMFS_ERROR_CANCELLED, "cancelled");
	/* an ended job cannot be cancelled, nor read: it has no verdict */
	g_assert_cmpint(sd_bus_call_method(f->conn, FAMFS_BUS_NAME, job, FAMFS_JOB_IFACE, "Cancel", &e, NULL, ""), <, 0);
	assert_error(&e, FAMFS_ERROR_NOT_FOUND, "already ended");
	g_assert_cmpint(sd_bus_call_method(f->conn, FAMFS_BUS_NAME, job, FAMFS_JOB_IFACE, "Result", &e, NULL, ""), <, 0);
	assert_error(&e, FAMFS_ERROR_CANCELLED, NULL);
	g_assert_cmpint(sd_bus_call_method(f->conn, FAMFS_BUS_NAME, FAMFS_JOB_PATH_PREFIX "/999", FAMFS_JOB_IFACE,
					   "Cancel", &e, NULL, ""), <, 0);
	sd_bus_error_free(&e);
}

/* ---- Format ---- */

static void test_format(struct fixture *f, gconstpointer data)
{
	g_autofree char *fresh = blank_image("fresh.img", 64ULL << 20, 1);
	g_autofree char *tiny = blank_image("tiny.img", 8ULL << 20, 2);
	g_autofree char *job = NULL, *msg = NULL, *out = NULL, *errs = NULL;
	g_autoptr(GBytes) before = NULL, after = NULL, meta = meta_snapshot(f->img), meta2 = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;

	job = call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Format", &e, "sa{sv}", fresh, 0);
	g_assert_nonnull(job);
	g_assert_true(job_wait(f->conn, job));
	msg = job_s(f->conn, job, "Message");
	assert_contains(msg, "formatted");
	assert_fsck_clean(fresh);
	g_clear_pointer(&job, g_free);

	/* holding a file system: refused unless forced; nothing changed */
	before = file_bytes(fresh);
	g_assert_null(call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Format", &e, "sa{sv}", fresh, 0));
	assert_error(&e, FAMFS_ERROR_HAS_FILE_SYSTEM, "already holds a famfs file system");
	after = file_bytes(fresh);
	g_assert_true(g_bytes_equal(before, after));
	job = call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Format", &e, "sa{sv}", fresh, 2, "force", "b",
		     1, "log_len", "t", (uint64_t)16 << 20);
	g_assert_nonnull(job);
	g_assert_true(job_wait(f->conn, job));
	assert_fsck_clean(fresh);

	/* never a device the daemon has attached, force or not */
	g_assert_null(call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Format", &e, "sa{sv}", f->img, 1,
			     "force", "b", 1));
	assert_error(&e, FAMFS_ERROR_ATTACHED, "detach it first");
	meta2 = meta_snapshot(f->img);
	g_assert_true(g_bytes_equal(meta, meta2));

	/* not a device or an image, or no such thing */
	g_assert_null(call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Format", &e, "sa{sv}", "/dev/null", 0));
	assert_error(&e, FAMFS_ERROR_INVALID_DEVICE, "/dev/null");
	g_assert_null(call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Format", &e, "sa{sv}", topdir, 0));
	assert_error(&e, FAMFS_ERROR_INVALID_DEVICE, "not a DAX device");
	g_assert_null(call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Format", &e, "sa{sv}",
			     "/nonexistent/dax9.9", 0));
	assert_error(&e, FAMFS_ERROR_NOT_FOUND, NULL);
	g_assert_null(call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Format", &e, "sa{sv}", "fresh.img", 0));
	assert_error(&e, FAMFS_ERROR_INVALID_PATH, "not absolute");
	/* options: unknown, of the wrong type, out of range */
	g_assert_null(call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Format", &e, "sa{sv}", tiny, 1,
			     "mount_point", "s", "/x"));
	assert_error(&e, FAMFS_ERROR_INVALID_ARGUMENT, "unknown option \"mount_point\"");
	g_assert_null(call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Format", &e, "sa{sv}", tiny, 1,
			     "log_len", "s", "8M"));
	assert_error(&e, FAMFS_ERROR_INVALID_ARGUMENT, "must have type 't'");
	g_assert_null(call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Format", &e, "sa{sv}", tiny, 1,
			     "log_len", "t", (uint64_t)3 << 20));
	assert_error(&e, FAMFS_ERROR_INVALID_ARGUMENT, "power of two");
	g_clear_pointer(&before, g_bytes_unref);
	g_clear_pointer(&after, g_bytes_unref);
	before = file_bytes(tiny);
	g_assert_null(call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Format", &e, "sa{sv}", tiny, 0));
	assert_error(&e, FAMFS_ERROR_NO_SPACE, "too small");
	after = file_bytes(tiny);
	g_assert_true(g_bytes_equal(before, after));

	/* famfsctl format */
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_ROOT, famfsctl_exe, "format", "--force", fresh, NULL), ==, 0);
	assert_contains(out, "format ");
	assert_contains(out, "formatted");
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_ROOT, famfsctl_exe, "format", fresh, NULL), ==, 8);
	assert_contains(errs, "org.famfs.Error.HasFileSystem");
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_ROOT, famfsctl_exe, "format", "-f", f->img, NULL), ==, 8);
	assert_contains(errs, "org.famfs.Error.Attached");
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_ROOT, famfsctl_exe, "--json", "format", "-f", "-l", "8M",
			    fresh, NULL), ==, 0);
	assert_contains(out, "\"success\":true");
	assert_contains(out, "\"operation\":\"format\"");
	assert_fsck_clean(fresh);
	g_unlink(fresh);
	g_unlink(tiny);
}

/* Cancelled midway: the medium as it was.  Two at once: the second is refused. */
static void test_format_cancel(struct fixture *f, gconstpointer data)
{
	g_autofree char *img = blank_image("cancel.img", 64ULL << 20, 3);
	g_autofree char *job = NULL, *out = NULL, *errs = NULL;
	g_autoptr(GBytes) before = file_bytes(img), after = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;

	job = call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Format", &e, "sa{sv}", img, 0);
	g_assert_nonnull(job);
	job_wait_progress(f->conn, job);
	g_assert_null(call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Format", &e, "sa{sv}", img, 1, "force",
			     "b", 1));
	assert_error(&e, FAMFS_ERROR_JOB_RUNNING, "format job");
	g_assert_null(call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Attach", &e, "sa{sv}", img, 0));
	assert_error(&e, FAMFS_ERROR_JOB_RUNNING, NULL);
	g_assert_cmpint(sd_bus_call_method(f->conn, FAMFS_BUS_NAME, job, FAMFS_JOB_IFACE, "Cancel", &e, NULL, ""), >=, 0);
	g_assert_false(job_wait(f->conn, job));
	assert_job_error(f->conn, job, FAMFS_ERROR_CANCELLED, "the medium is as it was");
	after = file_bytes(img);
	g_assert_true(g_bytes_equal(before, after));

	/* --no-wait names the job and leaves it running */
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_ROOT, famfsctl_exe, "format", "--no-wait", img, NULL), ==, 0);
	assert_contains(out, "started " FAMFS_JOB_PATH_PREFIX "/");
	g_clear_pointer(&job, g_free);
	job = g_strdup(strstr(out, FAMFS_JOB_PATH_PREFIX));
	g_strchomp(job);
	g_assert_true(job_wait(f->conn, job));
	assert_fsck_clean(img);

	/* on a terminal (script(1) makes one), a progress line while it waits */
	{
		g_autofree char *cmd = g_strdup_printf("%s format --force %s", famfsctl_exe, img);

		g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_ROOT, "script", "-qec", cmd, "/dev/null", NULL), ==, 0);
		assert_contains(out, "\rformat ");
		assert_contains(out, "%");
		assert_contains(out, "formatted");
	}
	assert_fsck_clean(img);
	g_unlink(img);
}

/* One Format call in flight: its reply, a job or an error. */
struct pending_format {
	char *job;
	char *error_name, *error_message;
	bool done;
};

static int on_format_reply(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
	struct pending_format *p = userdata;
	const sd_bus_error *err = sd_bus_message_get_error(m);
	const char *o;

	p->done = true;
	if (err) {
		p->error_name = g_strdup(err->name);
		p->error_message = g_strdup(err->message ? err->message : "");
	} else if (sd_bus_message_read(m, "o", &o) > 0)
		p->job = g_strdup(o);
	return 0;
}

static void send_format(sd_bus *bus, struct pending_format *p, const char *device, uint64_t log_len)
{
	g_assert_cmpint(sd_bus_call_method_async(bus, NULL, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE,
						 "Format", on_format_reply, p, "sa{sv}", device, 2, "force", "b", 1,
						 "log_len", "t", log_len), >=, 0);
	g_assert_cmpint(sd_bus_flush(bus), >=, 0);
}

static uint64_t image_log_len(const char *image)
{
	struct famfs_superblock sb;
	int fd = open(image, O_RDONLY);

	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(pread(fd, &sb, sizeof(sb), 0), ==, sizeof(sb));
	close(fd);
	g_assert_cmpuint(sb.magic, ==, FAMFS_SUPER_MAGIC);
	return sb.log_len;
}

/*
 * Two clients, each on a connection of its own, ask to format one device
 * at the same moment (the second through another name for it): one gets a
 * job, the other JobRunning, and the medium is what the winner wrote.
 */
static void test_format_two_clients(struct fixture *f, gconstpointer data)
{
	g_autofree char *img = blank_image("two.img", 64ULL << 20, 8);
	g_autofree char *alias = g_build_filename(topdir, "two-alias.img", NULL);
	struct pending_format a = { 0 }, b = { 0 };
	struct pending_format *won, *lost;
	sd_bus *conn2 = bus_connect(f->bus.addr);
	uint64_t want;

	g_assert_cmpint(symlink(img, alias), ==, 0);
	send_format(f->conn, &a, img, 8ULL << 20);
	send_format(conn2, &b, alias, 16ULL << 20);
	for (int i = 0; i < 600 && !(a.done && b.done); i++) {
		while (sd_bus_process(f->conn, NULL) > 0 || sd_bus_process(conn2, NULL) > 0)
			;
		if (!a.done)
			(void)sd_bus_wait(f->conn, 10000);
		if (!b.done)
			(void)sd_bus_wait(conn2, 10000);
	}
	g_assert_true(a.done && b.done);
	if (a.job && b.job)
		g_error("both formats started: %s and %s", a.job, b.job);
	won = a.job ? &a : &b;
	lost = a.job ? &b : &a;
	g_assert_nonnull(won->job);
	g_assert_null(lost->job);
	g_assert_cmpstr(lost->error_name, ==, FAMFS_ERROR_JOB_RUNNING);
	assert_contains(lost->error_message, "format job");
	assert_contains(lost->error_message, won->job);
	want = won == &a ? 8ULL << 20 : 16ULL << 20;
	/* the first is still running: refused again, from either connection */
	g_assert_true(job_b(f->conn, won->job, "Running"));
	{
		sd_bus_error e = SD_BUS_ERROR_NULL;

		g_assert_null(call_o(conn2, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Format", &e, "sa{sv}", img, 1,
				     "force", "b", 1));
		assert_error(&e, FAMFS_ERROR_JOB_RUNNING, "format job");
	}
	g_assert_true(job_wait(f->conn, won->job));
	assert_fsck_clean(img);
	g_assert_cmpuint(image_log_len(img), ==, want);
	/* only one format job ever ran */
	{
		g_autofree char *msg = job_s(f->conn, won->job, "Message");
		char want_msg[64];

		snprintf(want_msg, sizeof(want_msg), "%" G_GUINT64_FORMAT "-byte log", want);
		assert_contains(msg, want_msg);
	}
	sd_bus_flush_close_unref(conn2);
	for (struct pending_format *p = &a; p; p = p == &a ? &b : NULL) {
		g_free(p->job);
		g_free(p->error_name);
		g_free(p->error_message);
	}
	g_unlink(alias);
	g_unlink(img);
}

/*
 * Format while a check runs on the same device: refused.  On the attached
 * device it is refused as attached (by either of its names); a device whose
 * object failed (no file system on it) is checked through a mapping of its
 * own, and Format waits for that check: JobRunning, nothing written.
 */
static void test_format_during_check(void)
{
	struct private_bus b = {0};
	g_autofree char *ua = write_uuid_file("uuid-fc", UUID_A);
	g_autofree char *img = make_image("fc.img", 1ULL << 30, ua), *blank = blank_image("fc-blank.img", 64ULL << 20, 9);
	g_autofree char *alias = g_build_filename(topdir, "fc-alias.img", NULL);
	g_autofree char *obj = NULL, *bobj = NULL, *job = NULL, *job2 = NULL;
	g_autoptr(GBytes) meta = NULL, meta2 = NULL, before = NULL, after = NULL;
	const char *devs[] = { img, blank, NULL };
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus *conn;
	GPid pid;

	bus_start(&b, "bus-fc");
	g_setenv(JOB_DELAY_ENV, "150", TRUE);
	pid = daemon_start(&b, ua, devs, (const char *[]){ "--poll-interval=20", NULL });
	g_unsetenv(JOB_DELAY_ENV);
	conn = bus_connect(b.addr);
	obj = fs_object(conn, "/run/famfs-test/fc");
	bobj = fs_object(conn, "/run/famfs-test/fc-blank");
	g_assert_cmpint(symlink(img, alias), ==, 0);

	/* the attached device */
	meta = meta_snapshot(img);
	job = call_o(conn, obj, FAMFS_FS_IFACE, "Check", &e, "a{sv}", 0);
	g_assert_nonnull(job);
	g_assert_true(job_b(conn, job, "Running"));
	g_assert_null(call_o(conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Format", &e, "sa{sv}", img, 1, "force",
			     "b", 1));
	assert_error(&e, FAMFS_ERROR_ATTACHED, "detach it first");
	g_assert_null(call_o(conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Format", &e, "sa{sv}", alias, 1, "force",
			     "b", 1));
	assert_error(&e, FAMFS_ERROR_ATTACHED, "detach it first");
	g_assert_true(job_b(conn, job, "Running"));
	g_assert_true(job_wait(conn, job));
	meta2 = meta_snapshot(img);
	g_assert_true(g_bytes_equal(meta, meta2));
	g_clear_pointer(&job, g_free);

	/* the failed object's device: its check reads the device itself */
	before = file_bytes(blank);
	job = call_o(conn, bobj, FAMFS_FS_IFACE, "Check", &e, "a{sv}", 0);
	g_assert_nonnull(job);
	g_assert_true(job_b(conn, job, "Running"));
	g_assert_null(call_o(conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Format", &e, "sa{sv}", blank, 0));
	assert_error(&e, FAMFS_ERROR_JOB_RUNNING, "check job");
	g_assert_true(job_wait(conn, job));
	{
		g_autofree char *msg = job_s(conn, job, "Message");

		assert_prefix(msg, "damaged:");
	}
	after = file_bytes(blank);
	g_assert_true(g_bytes_equal(before, after));
	/* once the check has ended, the format may run */
	job2 = call_o(conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Format", &e, "sa{sv}", blank, 0);
	g_assert_nonnull(job2);
	g_assert_true(job_wait(conn, job2));
	assert_fsck_clean(blank);

	sd_bus_flush_close_unref(conn);
	stop_pid(pid, SIGTERM);
	private_bus_stop(&b);
	assert_fsck_clean(img);
	g_unlink(alias);
	g_unlink(img);
	g_unlink(blank);
}

/* The image shrinks to nothing mid-format: the job fails, the daemon lives on. */
static void test_format_gone(struct fixture *f, gconstpointer data)
{
	g_autofree char *img = blank_image("gone.img", 64ULL << 20, 4);
	g_autofree char *job = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;

	job = call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Format", &e, "sa{sv}", img, 0);
	g_assert_nonnull(job);
	job_wait_progress(f->conn, job);
	g_assert_cmpint(truncate(img, 0), ==, 0);
	g_assert_false(job_wait(f->conn, job));
	assert_job_error(f->conn, job, FAMFS_ERROR_DEVICE_GONE, "went away");
	g_assert_true(has_mountpoint(f->conn, MP));
	g_unlink(img);
}

/* ---- Attach, Detach ---- */

static void test_attach_detach(struct fixture *f, gconstpointer data)
{
	g_autofree char *img = make_image("extra.img", 1ULL << 30, f->uuid_a);
	g_autofree char *blank = blank_image("blank.img", 64ULL << 20, 5);
	g_autofree char *obj = NULL, *role = NULL, *mp = NULL, *out = NULL, *errs = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;

	obj = call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Attach", &e, "sa{sv}", img, 1, "mount_point",
		     "s", "/run/famfs-test/extra-at");
	g_assert_nonnull(obj);
	g_assert_true(has_mountpoint(f->conn, "/run/famfs-test/extra-at"));
	role = get_prop_s(f->conn, obj, "Role");
	g_assert_cmpstr(role, ==, "master");
	g_clear_pointer(&role, free);
	g_assert_cmpint(create_file(f->conn, "/run/famfs-test/extra-at/f", 4096, 0644, &e), >=, 0);

	/* attached already; mount point taken; bad options: refused, nothing changes */
	g_assert_null(call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Attach", &e, "sa{sv}", img, 0));
	assert_error(&e, FAMFS_ERROR_ATTACHED, "attached from this device already");
	g_assert_null(call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Attach", &e, "sa{sv}", blank, 1,
			     "mount_point", "s", MP));
	assert_error(&e, FAMFS_ERROR_EXISTS, "is taken by");
	g_assert_null(call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Attach", &e, "sa{sv}", blank, 1,
			     "mount_point", "s", "relative"));
	assert_error(&e, FAMFS_ERROR_INVALID_PATH, "not an absolute path");
	g_assert_null(call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Attach", &e, "sa{sv}", blank, 1,
			     "backend", "s", "bogus"));
	assert_error(&e, FAMFS_ERROR_INVALID_ARGUMENT, "not auto, kernel or view");
	g_assert_null(call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Attach", &e, "sa{sv}", blank, 1,
			     "read_only", "s", "yes"));
	assert_error(&e, FAMFS_ERROR_INVALID_ARGUMENT, "must have type 'b'");
	g_assert_null(call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Attach", &e, "sa{sv}", blank, 1,
			     "log_len", "t", (uint64_t)1));
	assert_error(&e, FAMFS_ERROR_INVALID_ARGUMENT, "unknown option \"log_len\"");
	g_assert_null(call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Attach", &e, "sa{sv}", "/dev/null", 0));
	assert_error(&e, FAMFS_ERROR_INVALID_DEVICE, NULL);
	g_assert_null(call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Attach", &e, "sa{sv}", "/nonexistent", 0));
	assert_error(&e, FAMFS_ERROR_NOT_FOUND, NULL);
	/* no file system on it: refused, and no object stays */
	g_assert_null(call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Attach", &e, "sa{sv}", blank, 0));
	assert_error(&e, FAMFS_ERROR_CORRUPT, "cannot attach");
	g_assert_false(has_device(f->conn, blank, NULL));

	/* Detach: the object goes */
	g_assert_cmpint(sd_bus_call_method(f->conn, FAMFS_BUS_NAME, obj, FAMFS_FS_IFACE, "Detach", &e, NULL, "a{sv}", 1,
					   "bogus", "b", 1), <, 0);
	assert_error(&e, FAMFS_ERROR_INVALID_ARGUMENT, "unknown option \"bogus\"");
	g_assert_cmpint(sd_bus_call_method(f->conn, FAMFS_BUS_NAME, obj, FAMFS_FS_IFACE, "Detach", &e, NULL, "a{sv}",
					   0), >=, 0);
	g_assert_false(has_device(f->conn, img, NULL));
	g_assert_cmpint(sd_bus_call_method(f->conn, FAMFS_BUS_NAME, obj, FAMFS_FS_IFACE, "Detach", &e, NULL, "a{sv}",
					   0), <, 0);
	sd_bus_error_free(&e);

	/* read-only: a client even on the master */
	g_clear_pointer(&obj, g_free);
	obj = call_o(f->conn, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "Attach", &e, "sa{sv}", img, 1, "read_only",
		     "b", 1);
	g_assert_nonnull(obj);
	role = get_prop_s(f->conn, obj, "Role");
	g_assert_cmpstr(role, ==, "client");
	g_assert_true(list_has(f->conn, "/run/famfs-test/extra", "f", NULL, NULL));
	g_assert_cmpint(create_file(f->conn, "/run/famfs-test/extra/g", 4096, 0644, &e), <, 0);
	assert_error(&e, FAMFS_ERROR_NOT_MASTER, NULL);
	g_assert_cmpint(sd_bus_call_method(f->conn, FAMFS_BUS_NAME, obj, FAMFS_FS_IFACE, "Detach", &e, NULL, "a{sv}",
					   0), >=, 0);

	/* famfsctl attach / mount, detach / umount */
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_ROOT, famfsctl_exe, "attach", "--mount-point",
			    "/run/famfs-test/ctl", img, NULL), ==, 0);
	assert_contains(out, "attached ");
	assert_contains(out, "/run/famfs-test/ctl");
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_ROOT, famfsctl_exe, "mount", img, NULL), ==, 8);
	assert_contains(errs, "org.famfs.Error.Attached");
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_ROOT, famfsctl_exe, "--json", "umount", "/run/famfs-test/ctl",
			    NULL), ==, 0);
	assert_contains(out, "\"detached\":true");
	g_assert_false(has_device(f->conn, img, NULL));
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_ROOT, famfsctl_exe, "--json", "mount", img, NULL), ==, 0);
	assert_contains(out, "\"role\":\"master\"");
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_ROOT, famfsctl_exe, "detach", img, NULL), ==, 0);
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_ROOT, famfsctl_exe, "detach", img, NULL), ==, 8);
	assert_contains(errs, "not an attached famfs file system");
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_ROOT, famfsctl_exe, "attach", blank, NULL), ==, 8);
	assert_contains(errs, "org.famfs.Error.Corrupt");
	assert_fsck_clean(img);
	g_unlink(img);
	g_unlink(blank);
}

/* ---- Repair ---- */

/* A log entry whose CRC is not yet right at the next slot, next_index past it: a torn tail. */
static void make_torn_tail(const char *img)
{
	struct famfs_fmap map = { .ext_type = FAMFS_EXT_SIMPLE, .nextents = 1 };
	struct famfs_err err = {0};
	struct famfs_log_header hdr;
	struct famfs_log_entry en;
	int fd = open(img, O_RDWR);

	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(pread(fd, &hdr, sizeof(hdr), FAMFS_LOG_OFFSET), ==, sizeof(hdr));
	map.se[0].offset = 1ULL << 30;
	map.se[0].len = 2ULL << 20;
	g_assert_cmpint(famfs_entry_make_file(&en, "torn", 100, 0644, 0, 0, &map, &err), ==, 0);
	en.seqnum = hdr.next_index;
	en.crc = famfs_log_entry_crc(&en) ^ 1;
	g_assert_cmpint(pwrite(fd, &en, sizeof(en), FAMFS_LOG_OFFSET + sizeof(hdr) + hdr.next_index * sizeof(en)), ==,
			sizeof(en));
	hdr.next_index++;
	hdr.next_seqnum++;
	g_assert_cmpint(pwrite(fd, &hdr, sizeof(hdr), FAMFS_LOG_OFFSET), ==, sizeof(hdr));
	close(fd);
}

static void test_repair(struct fixture *f, gconstpointer data)
{
	g_autofree char *obj = fs_object(f->conn, MP), *client_obj = fs_object(f->conn, MPC);
	g_autofree char *job = NULL, *msg = NULL, *out = NULL, *errs = NULL, *verdict_job = NULL;
	g_autoptr(GBytes) meta = NULL, meta2 = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	char **changes = NULL, *joined;

	g_assert_cmpint(create_file(f->conn, MP "/before", 4096, 0644, &e), >=, 0);
	/* clean: nothing to do */
	job = call_o(f->conn, obj, FAMFS_FS_IFACE, "Repair", &e, "a{sv}", 0);
	g_assert_nonnull(job);
	g_assert_true(job_wait(f->conn, job));
	msg = job_s(f->conn, job, "Message");
	assert_contains(msg, "nothing to repair");
	g_clear_pointer(&job, g_free);
	g_clear_pointer(&msg, free);

	make_torn_tail(f->img);
	g_assert_cmpuint(image_next_index(f->img), ==, 2);
	verdict_job = call_o(f->conn, obj, FAMFS_FS_IFACE, "Check", &e, "a{sv}", 0);
	g_assert_true(job_wait(f->conn, verdict_job));
	msg = job_s(f->conn, verdict_job, "Message");
	assert_contains(msg, "torn-tail");
	g_clear_pointer(&msg, free);

	/* the client's is not ours to repair; options are refused; nothing changes */
	meta = meta_snapshot(f->img);
	g_assert_null(call_o(f->conn, client_obj, FAMFS_FS_IFACE, "Repair", &e, "a{sv}", 0));
	assert_error(&e, FAMFS_ERROR_NOT_MASTER, "only the master may repair");
	g_assert_null(call_o(f->conn, obj, FAMFS_FS_IFACE, "Repair", &e, "a{sv}", 1, "force", "b", 1));
	assert_error(&e, FAMFS_ERROR_INVALID_ARGUMENT, "unknown option \"force\"");
	meta2 = meta_snapshot(f->img);
	g_assert_true(g_bytes_equal(meta, meta2));

	job = call_o(f->conn, obj, FAMFS_FS_IFACE, "Repair", &e, "a{sv}", 0);
	g_assert_nonnull(job);
	g_assert_true(job_wait(f->conn, job));
	msg = job_s(f->conn, job, "Message");
	assert_contains(msg, "repaired");
	g_assert_cmpint(sd_bus_get_property_strv(f->conn, FAMFS_BUS_NAME, job, FAMFS_JOB_IFACE, "Changes", NULL,
						 &changes), >=, 0);
	joined = g_strjoinv("|", changes);
	g_assert_cmpstr(joined, ==, "next_index 2 -> 1|next_seqnum 2 -> 1");
	g_free(joined);
	g_strfreev(changes);
	g_assert_cmpuint(image_next_index(f->img), ==, 1);
	assert_fsck_clean(f->img);
	/* the file system goes on: files are created after it */
	g_assert_cmpint(create_file(f->conn, MP "/after", 4096, 0644, &e), >=, 0);
	g_assert_true(list_has(f->conn, MP, "before", NULL, NULL));

	/* famfsctl repair */
	make_torn_tail(f->img);
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_ROOT, famfsctl_exe, "check", MP, NULL), ==, 4);
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_ROOT, famfsctl_exe, "repair", MP, NULL), ==, 0);
	assert_contains(out, "changed: next_index 3 -> 2");
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_ROOT, famfsctl_exe, "--json", "repair", MP, NULL), ==, 0);
	assert_contains(out, "nothing to repair");
	g_assert_cmpint(run(&out, &errs, f->bus.addr, AS_ROOT, famfsctl_exe, "repair", MPC, NULL), ==, 8);
	assert_contains(errs, "org.famfs.Error.NotMaster");
}

/*
 * What Repair will not do, on a daemon of its own (the media end damaged):
 * write while another writer holds the log lock, fix damage other than a
 * torn tail, or touch a file system that is not usable; a check of the
 * latter still runs, on the device.
 */
static void test_repair_refused(void)
{
	struct private_bus b = {0};
	g_autofree char *ua = write_uuid_file("uuid-rr", UUID_A);
	g_autofree char *img = make_image("rr.img", 1ULL << 30, ua), *blank = blank_image("rr-blank.img", 64ULL << 20, 7);
	g_autofree char *obj = NULL, *bobj = NULL, *job = NULL, *msg = NULL, *out = NULL, *errs = NULL;
	g_autoptr(GBytes) meta = NULL, meta2 = NULL;
	const char *devs[] = { img, blank, NULL };
	struct famfs_fmap map = { .ext_type = FAMFS_EXT_SIMPLE, .nextents = 1 };
	struct famfs_err err = {0};
	struct famfs_log_header hdr;
	struct famfs_log_entry en;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus *conn;
	GPid pid;
	int fd;

	bus_start(&b, "bus-repair");
	pid = daemon_start(&b, ua, devs, (const char *[]){ "--poll-interval=20", NULL });
	conn = bus_connect(b.addr);
	obj = fs_object(conn, "/run/famfs-test/rr");
	bobj = fs_object(conn, "/run/famfs-test/rr-blank");

	/* another writer holds the log lock: Busy, nothing written */
	make_torn_tail(img);
	fd = open(img, O_RDWR);
	g_assert_cmpint(flock(fd, LOCK_EX), ==, 0);
	meta = meta_snapshot(img);
	job = call_o(conn, obj, FAMFS_FS_IFACE, "Repair", &e, "a{sv}", 0);
	g_assert_nonnull(job);
	g_assert_false(job_wait(conn, job));
	assert_job_error(conn, job, FAMFS_ERROR_BUSY, "locked by another writer");
	meta2 = meta_snapshot(img);
	g_assert_true(g_bytes_equal(meta, meta2));
	g_assert_cmpint(flock(fd, LOCK_UN), ==, 0);
	g_clear_pointer(&job, g_free);
	job = call_o(conn, obj, FAMFS_FS_IFACE, "Repair", &e, "a{sv}", 0);
	g_assert_true(job_wait(conn, job));
	g_assert_cmpuint(image_next_index(img), ==, 0);
	g_clear_pointer(&job, g_free);

	/* an intact entry with an extent past the device: damage the repair does not fix */
	g_assert_cmpint(pread(fd, &hdr, sizeof(hdr), FAMFS_LOG_OFFSET), ==, sizeof(hdr));
	map.se[0].offset = 64ULL << 30;
	map.se[0].len = 2ULL << 20;
	g_assert_cmpint(famfs_entry_make_file(&en, "far", 100, 0644, 0, 0, &map, &err), ==, 0);
	en.seqnum = hdr.next_index;
	en.crc = famfs_log_entry_crc(&en);
	g_assert_cmpint(pwrite(fd, &en, sizeof(en), FAMFS_LOG_OFFSET + sizeof(hdr) + hdr.next_index * sizeof(en)), ==,
			sizeof(en));
	hdr.next_index++;
	hdr.next_seqnum++;
	g_assert_cmpint(pwrite(fd, &hdr, sizeof(hdr), FAMFS_LOG_OFFSET), ==, sizeof(hdr));
	close(fd);
	g_clear_pointer(&meta, g_bytes_unref);
	g_clear_pointer(&meta2, g_bytes_unref);
	meta = meta_snapshot(img);
	job = call_o(conn, obj, FAMFS_FS_IFACE, "Repair", &e, "a{sv}", 0);
	g_assert_false(job_wait(conn, job));
	assert_job_error(conn, job, FAMFS_ERROR_CORRUPT, "does not fix; nothing changed");
	meta2 = meta_snapshot(img);
	g_assert_true(g_bytes_equal(meta, meta2));
	g_clear_pointer(&job, g_free);

	/* a device with no file system: its object is failed; Check reads the device, Repair refuses */
	job = call_o(conn, bobj, FAMFS_FS_IFACE, "Check", &e, "a{sv}", 0);
	g_assert_nonnull(job);
	g_assert_true(job_wait(conn, job));
	msg = job_s(conn, job, "Message");
	assert_prefix(msg, "damaged:");
	g_assert_null(call_o(conn, bobj, FAMFS_FS_IFACE, "Repair", &e, "a{sv}", 0));
	assert_error(&e, FAMFS_ERROR_CORRUPT, "is not usable");
	g_assert_cmpint(run(&out, &errs, b.addr, AS_ROOT, famfsctl_exe, "check", "/run/famfs-test/rr-blank", NULL), ==, 4);
	assert_contains(out, "damaged");

	sd_bus_flush_close_unref(conn);
	stop_pid(pid, SIGTERM);
	private_bus_stop(&b);
	g_unlink(img);
	g_unlink(blank);
}

/* ---- Reload, SIGHUP, SetAutomount ---- */

static void write_config(const char *path, const char *text)
{
	g_assert_true(g_file_set_contents(path, text, -1, NULL));
}

static void test_reload(void)
{
	struct private_bus b = {0};
	g_autofree char *ua = write_uuid_file("uuid-r", UUID_A);
	g_autofree char *one = make_image("one.img", 1ULL << 30, ua), *two = make_image("two.img", 1ULL << 30, ua);
	g_autofree char *conf = g_build_filename(topdir, "manager.conf", NULL), *text = NULL, *arg = NULL;
	g_autofree char *mp = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus *conn;
	int automount = -1;
	GPid pid;

	text = g_strdup_printf("[manager]\ndevice = %s\nudev = no\n", one);
	write_config(conf, text);
	arg = g_strdup_printf("--config=%s", conf);
	bus_start(&b, "bus-reload");
	pid = daemon_start(&b, ua, (const char *[]){ NULL }, (const char *[]){ arg, NULL });
	conn = bus_connect(b.addr);
	g_assert_true(has_device(conn, one, NULL));
	g_assert_false(has_device(conn, two, NULL));

	/* a new device, not mounted (automount = no) */
	g_free(text);
	text = g_strdup_printf("[manager]\ndevice = %s\ndevice = %s\nudev = no\nautomount = no\n", one, two);
	write_config(conf, text);
	g_assert_cmpint(manager_call(conn, "Reload", &e, NULL, ""), >=, 0);
	g_assert_true(has_device(conn, two, &mp));
	g_assert_cmpstr(mp, ==, "");
	g_clear_pointer(&mp, g_free);
	g_assert_cmpint(sd_bus_get_property_trivial(conn, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE,
						    "AutoMount", NULL, 'b', &automount), >=, 0);
	g_assert_cmpint(automount, ==, 0);

	/* a broken file: refused, named, the running one kept */
	write_config(conf, "[manager]\nbogus-key = 1\n");
	g_assert_cmpint(manager_call(conn, "Reload", &e, NULL, ""), <, 0);
	assert_error(&e, FAMFS_ERROR_INVALID_CONFIG, "manager.conf:2");
	g_assert_true(has_device(conn, one, NULL));
	g_assert_true(has_device(conn, two, NULL));

	/* SIGHUP: the first device is gone from the file */
	g_free(text);
	text = g_strdup_printf("[manager]\ndevice = %s\nudev = no\n", two);
	write_config(conf, text);
	kill(pid, SIGHUP);
	for (int i = 0; i < 500 && has_device(conn, one, NULL); i++)
		g_usleep(10000);
	g_assert_false(has_device(conn, one, NULL));
	g_assert_true(has_device(conn, two, NULL));

	/* SetAutomount: globally, per file system, and a bad uuid */
	g_assert_cmpint(manager_call(conn, "SetAutomount", &e, NULL, "sb", "", 0), >=, 0);
	g_assert_cmpint(sd_bus_get_property_trivial(conn, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE,
						    "AutoMount", NULL, 'b', &automount), >=, 0);
	g_assert_cmpint(automount, ==, 0);
	g_assert_cmpint(manager_call(conn, "SetAutomount", &e, NULL, "sb", "", 1), >=, 0);
	g_assert_cmpint(sd_bus_get_property_trivial(conn, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE,
						    "AutoMount", NULL, 'b', &automount), >=, 0);
	g_assert_cmpint(automount, ==, 1);
	g_assert_cmpint(manager_call(conn, "SetAutomount", &e, NULL, "sb", UUID_B, 0), >=, 0);
	g_assert_cmpint(manager_call(conn, "SetAutomount", &e, NULL, "sb", "not-a-uuid", 0), <, 0);
	assert_error(&e, FAMFS_ERROR_INVALID_ARGUMENT, "not a file system UUID");

	sd_bus_flush_close_unref(conn);
	stop_pid(pid, SIGTERM);
	private_bus_stop(&b);
	assert_fsck_clean(one);
	assert_fsck_clean(two);
	g_unlink(one);
	g_unlink(two);
}

/* ---- polkit ---- */

static void assert_denied(struct fixture *f, const char *action, const char *first, ...)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_autoptr(GError) err = NULL;
	g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "DBUS_SYSTEM_BUS_ADDRESS", f->bus.addr, TRUE);
	g_autofree char *out = NULL;
	va_list ap;
	int status;

	argv_add_setpriv(argv, AS_NOBODY);
	g_ptr_array_add(argv, self_exe);
	g_ptr_array_add(argv, "--client");
	g_ptr_array_add(argv, "call");
	va_start(ap, first);
	test_argv_add_valist(argv, first, ap);
	va_end(ap);
	g_assert_true(g_spawn_sync("/", (char **)argv->pdata, env, G_SPAWN_SEARCH_PATH, die_with_parent, NULL, &out,
				   NULL, &status, &err));
	assert_prefix(out, "error org.famfs.Error.AccessDenied");
	assert_contains(out, action);
}

static void test_polkit(struct fixture *f, gconstpointer data)
{
	g_autoptr(GError) err = NULL;
	g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "DBUS_SYSTEM_BUS_ADDRESS", f->bus.addr, TRUE);
	const char *argv[] = { "/usr/bin/python3", "-m", "dbusmock", "--system", "--template", "polkitd", NULL };
	g_autofree char *obj = fs_object(f->conn, MP), *blank = blank_image("pk.img", 64ULL << 20, 6);
	g_autofree char *extra = make_image("pk-extra.img", 1ULL << 30, f->uuid_a), *job = NULL, *line = NULL;
	g_autoptr(GBytes) meta = meta_snapshot(f->img), meta2 = NULL, before = file_bytes(blank), after = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	GPid mock;

	/* no polkit on the bus: root's alone, each refusal naming its action */
	assert_denied(f, "org.famfs.manager.attach", "Attach", extra, NULL);
	assert_denied(f, "org.famfs.manager.format", "Format", blank, NULL);
	assert_denied(f, "org.famfs.manager.reload", "Reload", NULL);
	assert_denied(f, "org.famfs.manager.set-automount", "SetAutomount", "", NULL);
	assert_denied(f, "org.famfs.manager.detach", "FsDetach", obj, NULL);
	assert_denied(f, "org.famfs.manager.repair", "FsRepair", obj, NULL);
	assert_denied(f, "org.famfs.manager.check", "Check", MP, NULL);
	/* each logged at warning: polkit could not be asked */
	assert_logged(LOG_WARNING, "denied org.famfs.manager.format to uid 65534 (:",
		      "calling org.famfs.Manager1.Format on /org/famfs/Manager: polkit is not available");
	assert_logged(LOG_WARNING, "denied org.famfs.manager.detach to uid 65534 (:",
		      "calling org.famfs.FileSystem1.Detach on /org/famfs/Manager/", "polkit is not available");
	g_assert_false(log_has_line(log_path, LOG_NOTICE, "denied", NULL));

	if (!g_file_test("/usr/lib/python3/dist-packages/dbusmock", G_FILE_TEST_IS_DIR)) {
		g_test_skip("python3-dbusmock is not installed");
		return;
	}
	g_assert_true(g_spawn_async(NULL, (char **)argv, env, G_SPAWN_DO_NOT_REAP_CHILD |
				    G_SPAWN_STDOUT_TO_DEV_NULL, die_with_parent, NULL, &mock, &err));
	wait_name(f->bus.addr, "org.freedesktop.PolicyKit1", mock);
	/* polkit says no to each */
	assert_denied(f, "org.famfs.manager.attach: polkit said no", "Attach", extra, NULL);
	assert_denied(f, "org.famfs.manager.format: polkit said no", "Format", blank, NULL);
	assert_denied(f, "org.famfs.manager.reload: polkit said no", "Reload", NULL);
	assert_denied(f, "org.famfs.manager.set-automount: polkit said no", "SetAutomount", "", NULL);
	assert_denied(f, "org.famfs.manager.detach: polkit said no", "FsDetach", obj, NULL);
	assert_denied(f, "org.famfs.manager.repair: polkit said no", "FsRepair", obj, NULL);
	/* a job root started cannot be cancelled by a caller polkit refuses */
	job = call_o(f->conn, obj, FAMFS_FS_IFACE, "Check", &e, "a{sv}", 0);
	g_assert_nonnull(job);
	assert_denied(f, "org.famfs.manager.check: polkit said no", "JobCancel", job, NULL);
	/* each logged at notice, naming the action, the caller and the method */
	assert_logged(LOG_NOTICE, "denied org.famfs.manager.attach to uid 65534 (:",
		      "calling org.famfs.Manager1.Attach on /org/famfs/Manager: polkit said no");
	assert_logged(LOG_NOTICE, "denied org.famfs.manager.format to uid 65534 (:",
		      "calling org.famfs.Manager1.Format on /org/famfs/Manager: polkit said no");
	assert_logged(LOG_NOTICE, "denied org.famfs.manager.repair to uid 65534 (:",
		      "calling org.famfs.FileSystem1.Repair on /org/famfs/Manager/", "polkit said no");
	assert_logged(LOG_NOTICE, "denied org.famfs.manager.check to uid 65534 (:",
		      "calling org.famfs.Job1.Cancel on", job, "polkit said no");
	g_assert_true(job_wait(f->conn, job));
	meta2 = meta_snapshot(f->img);
	g_assert_true(g_bytes_equal(meta, meta2));
	after = file_bytes(blank);
	g_assert_true(g_bytes_equal(before, after));
	g_assert_false(has_device(f->conn, extra, NULL));

	/* and yes once allowed */
	g_assert_cmpint(sd_bus_call_method(f->conn, "org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
					   "org.freedesktop.DBus.Mock", "SetAllowed", &e, NULL, "as", 4,
					   "org.famfs.manager.attach", "org.famfs.manager.detach",
					   "org.famfs.manager.format", "org.famfs.manager.reload"), >=, 0);
	line = client(f, AS_NOBODY, "call", "Attach", extra, NULL);
	g_assert_cmpstr(line, ==, "ok");
	g_clear_pointer(&line, g_free);
	g_assert_true(has_device(f->conn, extra, NULL));
	line = client(f, AS_NOBODY, "call", "Format", blank, NULL);
	g_assert_cmpstr(line, ==, "ok");
	g_clear_pointer(&line, g_free);
	line = client(f, AS_NOBODY, "call", "Reload", NULL);
	g_assert_cmpstr(line, ==, "ok");
	g_clear_pointer(&line, g_free);
	{
		g_autofree char *xobj = fs_object(f->conn, "/run/famfs-test/pk-extra");

		line = client(f, AS_NOBODY, "call", "FsDetach", xobj, NULL);
		g_assert_cmpstr(line, ==, "ok");
		g_clear_pointer(&line, g_free);
	}
	g_assert_false(has_device(f->conn, extra, NULL));
	stop_pid(mock, SIGTERM);
	assert_fsck_clean(extra);
	g_unlink(extra);
	g_unlink(blank);
}

static void add_tests(void)
{
	g_test_add("/bus/jobs/check", struct fixture, NULL, fixture_setup, test_check, fixture_teardown);
	g_test_add("/bus/jobs/check-cancel", struct fixture, NULL, slow_setup, test_check_cancel, fixture_teardown);
	g_test_add("/bus/jobs/format", struct fixture, NULL, fixture_setup, test_format, fixture_teardown);
	g_test_add("/bus/jobs/format-cancel", struct fixture, NULL, slow_setup, test_format_cancel, fixture_teardown);
	g_test_add("/bus/jobs/format-two-clients", struct fixture, NULL, slow_setup, test_format_two_clients,
		   fixture_teardown);
	g_test_add_func("/bus/jobs/format-during-check", test_format_during_check);
	g_test_add("/bus/jobs/format-device-gone", struct fixture, NULL, slow_setup, test_format_gone, fixture_teardown);
	g_test_add("/bus/jobs/attach-detach", struct fixture, NULL, fixture_setup, test_attach_detach, fixture_teardown);
	g_test_add("/bus/jobs/repair", struct fixture, NULL, fixture_setup, test_repair, fixture_teardown);
	g_test_add_func("/bus/jobs/repair-refused", test_repair_refused);
	g_test_add_func("/bus/jobs/reload", test_reload);
	g_test_add("/bus/jobs/polkit", struct fixture, NULL, logged_setup, test_polkit, fixture_teardown);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "--client"))
		return bus_client_main(argc - 2, argv + 2);
	if (readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1) < 0)
		return 1;
	return bus_test_main(argc, argv, add_tests);
}
