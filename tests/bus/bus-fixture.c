// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the bus tests share: a private dbus-daemon of type system, the real
 * famfs-manager started on it, images made by mkfs.famfs and checked by
 * fsck.famfs, bus helpers, and the fixture of one daemon serving a master
 * and a client image.
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#include "bus-fixture.h"
#include "omf.h"
#include "testutil.h"

const char *manager_exe, *famfsctl_exe, *mkfs_exe, *fsck_exe, *policy_file, *interop_dir;
char *topdir;
const char *daemon_log;

/* ---- processes ---- */

uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void stop_pid(GPid pid, int sig)
{
	int st;

	if (pid <= 0)
		return;
	kill(pid, sig);
	waitpid(pid, &st, 0);
}

/* A private bus in topdir/@name. */
void bus_start(struct private_bus *b, const char *name)
{
	g_autofree char *dir = g_build_filename(topdir, name, NULL);

	private_bus_start(b, dir, policy_file, NULL);
}

void wait_name(const char *addr, const char *name, GPid pid)
{
	sd_bus *bus = bus_connect(addr);
	int st;

	for (int i = 0; i < 1000; i++) {
		if (bus_name_has_owner(bus, name))
			break;
		g_assert_cmpint(waitpid(pid, &st, WNOHANG), ==, 0);   /* still running */
		g_usleep(10000);
	}
	g_assert_true(bus_name_has_owner(bus, name));
	sd_bus_flush_close_unref(bus);
}

/* In the daemon's child: die with the test, stderr to daemon_log. */
static void daemon_child_setup(gpointer data)
{
	const char *path = data;
	int fd;

	die_with_parent(NULL);
	if (!path)
		return;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
}

bool log_has_line(const char *path, int prio, const char *first, ...)
{
	g_autofree char *text = NULL, *start = g_strdup_printf("<%d>", prio);
	g_auto(GStrv) lines = NULL;
	bool found = false;

	if (!g_file_get_contents(path, &text, NULL, NULL))
		return false;
	lines = g_strsplit(text, "\n", -1);
	for (size_t i = 0; lines[i] && !found; i++) {
		va_list ap;
		const char *w;

		if (!g_str_has_prefix(lines[i], start))
			continue;
		found = true;
		va_start(ap, first);
		for (w = first; w && found; w = va_arg(ap, const char *))
			found = strstr(lines[i], w) != NULL;
		va_end(ap);
	}
	return found;
}

/* Starts famfs-manager on @b with @devices (NULL-terminated) and extra args. */
GPid daemon_start(struct private_bus *b, const char *uuid_file, const char *const *devices,
			 const char *const *extra)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_autoptr(GError) err = NULL;
	g_auto(GStrv) env = g_get_environ();
	GPid pid;

	g_ptr_array_add(argv, (char *)manager_exe);
	g_ptr_array_add(argv, "--config=/dev/null");
	g_ptr_array_add(argv, "--mount-root=/run/famfs-test");
	g_ptr_array_add(argv, "--system-uuid-file");
	g_ptr_array_add(argv, (char *)uuid_file);
	for (size_t i = 0; devices[i]; i++) {
		g_ptr_array_add(argv, "--device");
		g_ptr_array_add(argv, (char *)devices[i]);
	}
	for (size_t i = 0; extra && extra[i]; i++)
		g_ptr_array_add(argv, (char *)extra[i]);
	g_ptr_array_add(argv, NULL);
	env = g_environ_setenv(env, "DBUS_SYSTEM_BUS_ADDRESS", b->addr, TRUE);
	if (daemon_log) {
		g_autofree char *stream = NULL;
		struct stat st;
		int fd = open(daemon_log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

		g_assert_cmpint(fd, >=, 0);
		g_assert_cmpint(fstat(fd, &st), ==, 0);
		close(fd);
		stream = g_strdup_printf("%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
		env = g_environ_setenv(env, "JOURNAL_STREAM", stream, TRUE);
	}
	g_assert_true(g_spawn_async(NULL, (char **)argv->pdata, env, G_SPAWN_DO_NOT_REAP_CHILD, daemon_child_setup,
				    (gpointer)daemon_log, &pid, &err));
	wait_name(b->addr, FAMFS_BUS_NAME, pid);
	return pid;
}

int manager_call(sd_bus *bus, const char *member, sd_bus_error *e, sd_bus_message **reply,
		 const char *types, ...)
{
	va_list ap;
	int r;

	va_start(ap, types);
	r = sd_bus_call_methodv(bus, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, member, e, reply,
				types, ap);
	va_end(ap);
	return r;
}

void argv_add_setpriv(GPtrArray *argv, int as_nobody)
{
	if (!as_nobody)
		return;
	g_ptr_array_add(argv, "setpriv");
	g_ptr_array_add(argv, "--reuid=" NOBODY);
	g_ptr_array_add(argv, "--regid=" NOBODY);
	g_ptr_array_add(argv, as_nobody == AS_NOBODY_GROUP ? "--groups=" OTHER_GID : "--clear-groups");
}

/* Runs a command; returns its exit status and (optionally) its output. */
int run(char **out, char **errout, const char *bus_addr, int as_nobody, const char *first, ...)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_autoptr(GError) err = NULL;
	g_auto(GStrv) env = g_get_environ();
	va_list ap;
	int status;

	argv_add_setpriv(argv, as_nobody);
	va_start(ap, first);
	test_argv_add_valist(argv, first, ap);
	va_end(ap);
	if (bus_addr)
		env = g_environ_setenv(env, "DBUS_SYSTEM_BUS_ADDRESS", bus_addr, TRUE);
	/* Callers reuse their buffers from one run to the next. */
	if (out)
		g_clear_pointer(out, g_free);
	if (errout)
		g_clear_pointer(errout, g_free);
	g_assert_true(g_spawn_sync("/", (char **)argv->pdata, env, G_SPAWN_SEARCH_PATH, die_with_parent, NULL, out,
				   errout, &status, &err));
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/* ---- images ---- */

char *write_test_file(const char *name, const char *text)
{
	char *p = g_build_filename(topdir, name, NULL);

	g_assert_true(g_file_set_contents(p, text, -1, NULL));
	return p;
}

char *write_uuid_file(const char *name, const char *uuid)
{
	g_autofree char *text = g_strdup_printf("%s\n", uuid);

	return write_test_file(name, text);
}

char *make_image_log(const char *name, uint64_t size, const char *uuid_file, const char *loglen)
{
	char *p = g_build_filename(topdir, name, NULL);
	g_autofree char *out = NULL, *errs = NULL;
	int fd = open(p, O_CREAT | O_TRUNC | O_WRONLY, 0644);

	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(ftruncate(fd, size), ==, 0);
	close(fd);
	g_assert_cmpint(run(&out, &errs, NULL, false, mkfs_exe, "-q", "-l", loglen, "--system-uuid-file",
			    uuid_file, p, NULL), ==, 0);
	return p;
}

char *make_image(const char *name, uint64_t size, const char *uuid_file)
{
	return make_image_log(name, size, uuid_file, "8M");
}

/* fsck.famfs -n must call it clean. */
void assert_fsck_clean(const char *image)
{
	g_autofree char *out = NULL, *errs = NULL;
	int rc = run(&out, &errs, NULL, false, fsck_exe, "-n", image, NULL);

	if (rc != 0)
		g_printerr("fsck.famfs %s: exit %d\n%s%s", image, rc, out, errs);
	g_assert_cmpint(rc, ==, 0);
}

/* The superblock and log bytes, to prove a failed call wrote nothing. */
GBytes *meta_snapshot(const char *image)
{
	size_t len = FAMFS_LOG_OFFSET + FAMFS_LOG_LEN_DEFAULT;
	uint8_t *buf = g_malloc(len);
	int fd = open(image, O_RDONLY);

	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(pread(fd, buf, len, 0), ==, (ssize_t)len);
	close(fd);
	return g_bytes_new_take(buf, len);
}

uint64_t image_next_index(const char *image)
{
	struct famfs_log_header h;
	int fd = open(image, O_RDONLY);

	g_assert_cmpint(pread(fd, &h, sizeof(h), FAMFS_LOG_OFFSET), ==, sizeof(h));
	close(fd);
	return h.next_index;
}

/* ---- bus helpers ---- */

char *fs_object(sd_bus *bus, const char *mountpoint)
{
	sd_bus_message *reply = NULL;
	const char *obj, *uuid, *dev, *mp, *role, *health;
	char *found = NULL;

	g_assert_cmpint(manager_call(bus, "ListFileSystems", NULL, &reply, ""), >=, 0);
	g_assert_cmpint(sd_bus_message_enter_container(reply, 'a', "(osssss)"), >=, 0);
	while (sd_bus_message_read(reply, "(osssss)", &obj, &uuid, &dev, &mp, &role, &health) > 0)
		if (!strcmp(mp, mountpoint))
			found = g_strdup(obj);
	sd_bus_message_unref(reply);
	g_assert_nonnull(found);
	return found;
}

char *get_prop_s(sd_bus *bus, const char *obj, const char *prop)
{
	char *v = NULL;

	g_assert_cmpint(sd_bus_get_property_string(bus, FAMFS_BUS_NAME, obj, FAMFS_FS_IFACE, prop, NULL, &v),
			>=, 0);
	return v;
}

uint64_t get_prop_t(sd_bus *bus, const char *obj, const char *prop)
{
	uint64_t v = 0;

	g_assert_cmpint(sd_bus_get_property_trivial(bus, FAMFS_BUS_NAME, obj, FAMFS_FS_IFACE, prop, NULL, 't',
						    &v), >=, 0);
	return v;
}

char *get_reasons(sd_bus *bus, const char *obj)
{
	char **l = NULL, *s;

	g_assert_cmpint(sd_bus_get_property_strv(bus, FAMFS_BUS_NAME, obj, FAMFS_FS_IFACE, "HealthReasons", NULL,
						 &l), >=, 0);
	s = g_strjoinv("\n", l);
	g_strfreev(l);
	return s;
}

int create_file(sd_bus *bus, const char *path, uint64_t size, uint32_t mode, sd_bus_error *e)
{
	sd_bus_message *reply = NULL;
	int r = manager_call(bus, "CreateFile", e, &reply, "stua{sv}", path, size,
			     mode, 0);

	sd_bus_message_unref(reply);
	return r;
}

bool list_has(sd_bus *bus, const char *dir, const char *name, uint64_t *ret_size, uint32_t *ret_mode)
{
	sd_bus_message *reply = NULL;
	const char *n;
	uint64_t size;
	uint32_t mode, uid, gid;
	bool found = false;

	if (manager_call(bus, "ListFiles", NULL, &reply, "s", dir) < 0)
		return false;
	g_assert_cmpint(sd_bus_message_enter_container(reply, 'a', "(stuuu)"), >=, 0);
	while (sd_bus_message_read(reply, "(stuuu)", &n, &size, &mode, &uid, &gid) > 0) {
		if (!strcmp(n, name)) {
			found = true;
			if (ret_size)
				*ret_size = size;
			if (ret_mode)
				*ret_mode = mode;
		}
	}
	sd_bus_message_unref(reply);
	return found;
}

char *make_data(const char *name, size_t size, unsigned seed)
{
	char *p = g_build_filename(topdir, name, NULL);
	g_autofree uint8_t *buf = g_malloc(size);
	GRand *rnd = g_rand_new_with_seed(seed);

	for (size_t i = 0; i < size; i++)
		buf[i] = g_rand_int(rnd) & 0xff;
	g_rand_free(rnd);
	g_assert_true(g_file_set_contents(p, (char *)buf, size, NULL));
	return p;
}

/* ---- fixture: one bus, one daemon with a master and a client image ---- */

void fixture_setup(struct fixture *f, gconstpointer data)
{
	const char *extra[] = { "--poll-interval=50", NULL, NULL };
	const char *devs[3];

	if (data)
		extra[1] = data;
	f->uuid_a = write_uuid_file("uuid-a", UUID_A);
	f->uuid_b = write_uuid_file("uuid-b", UUID_B);
	f->img = make_image("master.img", 4ULL << 30, f->uuid_a);
	f->other = make_image("other.img", 1ULL << 30, f->uuid_b);
	bus_start(&f->bus, "bus1");
	devs[0] = f->img;
	devs[1] = f->other;
	devs[2] = NULL;
	f->daemon = daemon_start(&f->bus, f->uuid_a, devs, extra);
	f->conn = bus_connect(f->bus.addr);
}

void fixture_teardown(struct fixture *f, gconstpointer data)
{
	int st;

	sd_bus_flush_close_unref(f->conn);
	/* Still alive after everything the test threw at it, and exits cleanly. */
	g_assert_cmpint(waitpid(f->daemon, &st, WNOHANG), ==, 0);
	kill(f->daemon, SIGTERM);
	g_assert_cmpint(waitpid(f->daemon, &st, 0), ==, f->daemon);
	g_assert_true(WIFEXITED(st));
	g_assert_cmpint(WEXITSTATUS(st), ==, 0);
	private_bus_stop(&f->bus);
	assert_fsck_clean(f->img);
	assert_fsck_clean(f->other);
	g_unlink(f->img);
	g_unlink(f->other);
	g_free(f->img);
	g_free(f->other);
	g_free(f->uuid_a);
	g_free(f->uuid_b);
}

/* ---- main ---- */

int bus_test_main(int argc, char **argv, void (*add_tests)(void))
{
	char tmpl[] = "/tmp/famfs-bus-test-XXXXXX";
	int r;

	g_test_init(&argc, &argv, NULL);
	manager_exe = g_getenv("FAMFS_MANAGER");
	famfsctl_exe = g_getenv("FAMFSCTL");
	mkfs_exe = g_getenv("MKFS_FAMFS");
	fsck_exe = g_getenv("FSCK_FAMFS");
	policy_file = g_getenv("FAMFS_BUS_POLICY");
	interop_dir = g_getenv("FAMFS_INTEROP_DIR");
	if (!manager_exe || !famfsctl_exe || !mkfs_exe || !fsck_exe || !policy_file || !interop_dir) {
		g_printerr("set FAMFS_MANAGER, FAMFSCTL, MKFS_FAMFS, FSCK_FAMFS, FAMFS_BUS_POLICY, FAMFS_INTEROP_DIR\n");
		return 1;
	}
	if (geteuid() != 0) {
		g_test_skip("the bus tests need root (a second uid via setpriv)");
		return g_test_run();
	}
	topdir = g_mkdtemp(tmpl);
	g_assert_nonnull(topdir);
	g_assert_cmpint(chmod(topdir, 0755), ==, 0);

	add_tests();
	r = g_test_run();
	{
		g_autofree char *out = NULL, *errs = NULL;

		run(&out, &errs, NULL, false, "rm", "-rf", topdir, NULL);
	}
	return r;
}
