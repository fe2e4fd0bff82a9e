// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * famfs-manager and udev, under the libumockdev testbed: fake dax devices
 * whose device nodes are famfs images are added, changed and removed while
 * the real daemon runs on a private system-type bus.  Checked: coldplug and
 * hotplug attach, a device without famfs is ignored, a corrupt one is
 * reported (Health=failed) and not mounted, remove gives Health=failed with
 * "device removed" and no crash, the device coming back re-attaches with its
 * files, AutoMount off/on globally and per UUID with its mount point, and a
 * change to another file system.
 *
 * Run it under umockdev-wrapper (meson does): the daemon inherits the
 * preload and UMOCKDEV_DIR.
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <inttypes.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <umockdev.h>
#include <unistd.h>

#include "famfs/bus-api.h"
#include "private-bus.h"

#define MROOT   "/run/famfs-udev-test"
#define UUID_A  "9a1d4c52-3f7e-4b8a-9c61-2d5e8f0a7b14"

static const char *manager_exe, *mkfs_exe, *policy_file;
static char *topdir;

struct env {
	UMockdevTestbed *tb;
	struct private_bus dbus;
	GPid daemon_pid;
	sd_bus *bus;
	char *uuid_file;
	char *log;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int run_quiet(const char *const *argv)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *out = NULL, *errs = NULL;
	int status = 0;

	g_assert_true(g_spawn_sync("/", (char **)argv, NULL, G_SPAWN_SEARCH_PATH, die_with_parent, NULL, &out,
				   &errs, &status, &err));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		g_printerr("# %s failed: %s%s\n", argv[0], out ? out : "", errs ? errs : "");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* A sparse image: famfs (mkfs), zeros, or famfs with a broken superblock CRC. */
enum image_kind { IMG_FAMFS, IMG_ZERO, IMG_CORRUPT };

static char *make_image(struct env *e, const char *name, enum image_kind kind)
{
	char *p = g_build_filename(topdir, name, NULL);
	int fd = open(p, O_CREAT | O_TRUNC | O_RDWR, 0644);

	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(ftruncate(fd, 1ULL << 30), ==, 0);
	close(fd);
	if (kind != IMG_ZERO) {
		const char *argv[] = { mkfs_exe, "-q", "-f", "--system-uuid-file", e->uuid_file, p, NULL };

		g_assert_cmpint(run_quiet(argv), ==, 0);
	}
	if (kind == IMG_CORRUPT) {
		uint8_t b;

		/* Flip a byte of the fs UUID: the magic stays, the CRC fails. */
		fd = open(p, O_RDWR);
		g_assert_cmpint(pread(fd, &b, 1, 50), ==, 1);
		b ^= 0x5a;
		g_assert_cmpint(pwrite(fd, &b, 1, 50), ==, 1);
		close(fd);
	}
	return p;
}

static void remkfs(struct env *e, const char *img)
{
	const char *argv[] = { mkfs_exe, "-q", "-f", "--system-uuid-file", e->uuid_file, img, NULL };

	g_assert_cmpint(run_quiet(argv), ==, 0);
}

/* ---- the testbed ---- */

static char *devnode_path(struct env *e, const char *name)
{
	g_autofree char *root = umockdev_testbed_get_root_dir(e->tb);

	return g_build_filename(root, "dev", name, NULL);
}

/* A dax device whose /dev node is @image; emits "add" when @announce. */
static char *add_dax(struct env *e, const char *name, const char *image, bool announce)
{
	g_autofree char *dev = devnode_path(e, name);
	g_autofree char *devdir = g_path_get_dirname(dev);
	g_autofree char *devname = g_strdup_printf("/dev/%s", name);
	g_autofree char *devnum = NULL;
	char *sys;

	g_assert_cmpint(g_mkdir_with_parents(devdir, 0755), ==, 0);
	(void)unlink(dev);
	g_assert_cmpint(symlink(image, dev), ==, 0);
	/* Without a listener yet (coldplug), the "add" reaches nobody. */
	(void)announce;
	/* "dev" gives the node a number and /sys/dev/char/M:m, where the size is read. */
	devnum = g_strdup_printf("252:%u", (unsigned)g_str_hash(name) % 200);
	sys = umockdev_testbed_add_device(e->tb, "dax", name, NULL, "size", "1073741824", "align", "2097152",
					  "dev", devnum, NULL, "DEVNAME", devname, NULL);
	g_assert_nonnull(sys);
	return sys;
}

static void remove_dax(struct env *e, const char *name, const char *syspath)
{
	g_autofree char *dev = devnode_path(e, name);

	umockdev_testbed_uevent(e->tb, syspath, "remove");
	umockdev_testbed_remove_device(e->tb, syspath);
	(void)unlink(dev);
}

/* ---- bus and daemon ---- */

static void bus_start(struct env *e)
{
	g_autofree char *dir = g_build_filename(topdir, "bus", NULL);
	g_auto(GStrv) env = g_get_environ();

	/* The bus itself has no business with the fake /sys. */
	env = g_environ_unsetenv(env, "LD_PRELOAD");
	private_bus_start(&e->dbus, dir, policy_file, env);
	e->bus = bus_connect(e->dbus.addr);
}

static bool daemon_alive(struct env *e)
{
	int st;

	return e->daemon_pid > 0 && waitpid(e->daemon_pid, &st, WNOHANG) == 0;
}

static void daemon_start(struct env *e, const char *config_text)
{
	g_autofree char *conf = g_build_filename(topdir, "manager.conf", NULL);
	g_autoptr(GError) err = NULL;
	g_auto(GStrv) env = g_get_environ();
	g_autofree char *confarg = g_strdup_printf("--config=%s", conf);
	int logfd;
	const char *argv[] = { manager_exe, confarg, "--mount-root=" MROOT, "--system-uuid-file", e->uuid_file,
			       "--poll-interval=50", NULL };

	g_assert_true(g_file_set_contents(conf, config_text, -1, NULL));
	env = g_environ_setenv(env, "DBUS_SYSTEM_BUS_ADDRESS", e->dbus.addr, TRUE);
	e->log = g_build_filename(topdir, "daemon.log", NULL);
	g_assert_true(g_spawn_async_with_pipes(NULL, (char **)argv, env, G_SPAWN_DO_NOT_REAP_CHILD,
					       die_with_parent, NULL, &e->daemon_pid, NULL, NULL, &logfd, &err));
	/* Keep the daemon's stderr: copy it to the log in a child of ours. */
	if (fork() == 0) {
		int out = open(e->log, O_CREAT | O_TRUNC | O_WRONLY, 0644);
		char buf[4096];
		ssize_t n;

		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		while ((n = read(logfd, buf, sizeof(buf))) > 0)
			if (out >= 0 && write(out, buf, (size_t)n) < 0)
				break;
		_exit(0);
	}
	close(logfd);
	for (int i = 0; i < 1000 && !bus_name_has_owner(e->bus, FAMFS_BUS_NAME); i++) {
		g_assert_true(daemon_alive(e));
		g_usleep(10000);
	}
	g_assert_true(bus_name_has_owner(e->bus, FAMFS_BUS_NAME));
}

static void env_setup(struct env *e)
{
	memset(e, 0, sizeof(*e));
	e->tb = umockdev_testbed_new();
	g_assert_nonnull(e->tb);
	e->uuid_file = g_build_filename(topdir, "system_uuid", NULL);
	g_assert_true(g_file_set_contents(e->uuid_file, UUID_A "\n", -1, NULL));
	bus_start(e);
}

static void env_teardown(struct env *e)
{
	int st;

	if (e->daemon_pid > 0) {
		g_assert_true(daemon_alive(e));   /* nothing above crashed it */
		kill(e->daemon_pid, SIGTERM);
		g_assert_cmpint(waitpid(e->daemon_pid, &st, 0), ==, e->daemon_pid);
		g_assert_true(WIFEXITED(st));
		g_assert_cmpint(WEXITSTATUS(st), ==, 0);
	}
	sd_bus_flush_close_unref(e->bus);
	private_bus_stop(&e->dbus);
	g_clear_object(&e->tb);
	g_free(e->uuid_file);
	g_free(e->log);
}

/* ---- queries ---- */

struct fsinfo {
	char obj[256], uuid[64], device[256], mountpoint[256], role[32], health[32];
};

/* The object of @device, or false when there is none. */
static bool find_fs(struct env *e, const char *device, struct fsinfo *ret)
{
	sd_bus_message *reply = NULL;
	const char *o, *u, *d, *mp, *role, *health;
	bool found = false;
	int r;

	r = sd_bus_call_method(e->bus, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "ListFileSystems",
			       NULL, &reply, "");
	g_assert_cmpint(r, >=, 0);
	g_assert_cmpint(sd_bus_message_enter_container(reply, 'a', "(osssss)"), >=, 0);
	while (sd_bus_message_read(reply, "(osssss)", &o, &u, &d, &mp, &role, &health) > 0) {
		if (strcmp(d, device))
			continue;
		g_assert_false(found);   /* one object per device */
		found = true;
		g_strlcpy(ret->obj, o, sizeof(ret->obj));
		g_strlcpy(ret->uuid, u, sizeof(ret->uuid));
		g_strlcpy(ret->device, d, sizeof(ret->device));
		g_strlcpy(ret->mountpoint, mp, sizeof(ret->mountpoint));
		g_strlcpy(ret->role, role, sizeof(ret->role));
		g_strlcpy(ret->health, health, sizeof(ret->health));
	}
	sd_bus_message_unref(reply);
	return found;
}

static size_t count_fs(struct env *e)
{
	sd_bus_message *reply = NULL;
	const char *o, *u, *d, *mp, *role, *health;
	size_t n = 0;

	g_assert_cmpint(sd_bus_call_method(e->bus, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE,
					   "ListFileSystems", NULL, &reply, ""), >=, 0);
	g_assert_cmpint(sd_bus_message_enter_container(reply, 'a', "(osssss)"), >=, 0);
	while (sd_bus_message_read(reply, "(osssss)", &o, &u, &d, &mp, &role, &health) > 0)
		n++;
	sd_bus_message_unref(reply);
	return n;
}

/* Waits up to 5 s for @device to have an object in @health; returns ms waited. */
static uint64_t wait_health(struct env *e, const char *device, const char *health, struct fsinfo *ret)
{
	uint64_t t0 = now_ms();

	while (now_ms() - t0 < 5000) {
		if (find_fs(e, device, ret) && !strcmp(ret->health, health))
			return now_ms() - t0;
		g_assert_true(daemon_alive(e));
		g_usleep(5000);
	}
	g_printerr("# %s never reached health %s\n", device, health);
	g_assert_not_reached();
	return 0;
}

static char *reasons(struct env *e, const char *obj)
{
	char **l = NULL, *s;

	g_assert_cmpint(sd_bus_get_property_strv(e->bus, FAMFS_BUS_NAME, obj, FAMFS_FS_IFACE, "HealthReasons", NULL,
						 &l), >=, 0);
	s = g_strjoinv("\n", l);
	g_strfreev(l);
	return s;
}

static char *prop_s(struct env *e, const char *obj, const char *prop)
{
	char *v = NULL;

	g_assert_cmpint(sd_bus_get_property_string(e->bus, FAMFS_BUS_NAME, obj, FAMFS_FS_IFACE, prop, NULL, &v), >=, 0);
	return v;
}

static int create_file(struct env *e, const char *path, uint64_t size)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	int r = sd_bus_call_method(e->bus, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "CreateFile",
				   &err, &reply, "stua{sv}", path, size, 0644, 0);

	if (r < 0)
		g_printerr("# CreateFile %s: %s\n", path, err.message);
	sd_bus_error_free(&err);
	sd_bus_message_unref(reply);
	return r;
}

/* -1 when the call fails, else whether @dir lists @name. */
static int lists(struct env *e, const char *dir, const char *name)
{
	sd_bus_message *reply = NULL;
	const char *n;
	uint64_t size;
	uint32_t mode, uid, gid;
	int found = 0;

	if (sd_bus_call_method(e->bus, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "ListFiles", NULL,
			       &reply, "s", dir) < 0)
		return -1;
	g_assert_cmpint(sd_bus_message_enter_container(reply, 'a', "(stuuu)"), >=, 0);
	while (sd_bus_message_read(reply, "(stuuu)", &n, &size, &mode, &uid, &gid) > 0)
		found |= !strcmp(n, name);
	sd_bus_message_unref(reply);
	return found;
}

/* ---- tests ---- */

static const char *default_conf = "[manager]\nudev = yes\nbackend = auto\n";

static void test_coldplug(void)
{
	struct env e;
	struct fsinfo fi;
	g_autofree char *good = NULL, *zero = NULL, *bad = NULL, *r = NULL, *be = NULL;

	env_setup(&e);
	good = make_image(&e, "good.img", IMG_FAMFS);
	zero = make_image(&e, "zero.img", IMG_ZERO);
	bad = make_image(&e, "bad.img", IMG_CORRUPT);
	g_free(add_dax(&e, "dax0.0", good, false));
	g_free(add_dax(&e, "dax1.0", zero, false));
	g_free(add_dax(&e, "dax2.0", bad, false));
	daemon_start(&e, default_conf);

	/* Found at start: a healthy famfs, mounted (view) under the mount root. */
	g_assert_true(find_fs(&e, "/dev/dax0.0", &fi));
	g_assert_cmpstr(fi.health, ==, "ok");
	g_assert_cmpstr(fi.mountpoint, ==, MROOT "/dax0.0");
	g_assert_cmpstr(fi.role, ==, "master");
	be = prop_s(&e, fi.obj, "Backend");
	g_assert_cmpstr(be, ==, "view");   /* an image node: famfs.ko cannot mount it */
	g_assert_cmpint(create_file(&e, MROOT "/dax0.0/cold", 4 << 20), >=, 0);
	g_assert_cmpint(lists(&e, MROOT "/dax0.0", "cold"), ==, 1);

	/* No famfs on it: no object at all. */
	g_assert_false(find_fs(&e, "/dev/dax1.0", &fi));

	/* Corrupt: reported, failed, nothing reachable under a mount point. */
	g_assert_true(find_fs(&e, "/dev/dax2.0", &fi));
	g_assert_cmpstr(fi.health, ==, "failed");
	r = reasons(&e, fi.obj);
	g_assert_nonnull(strstr(r, "superblock"));
	g_assert_cmpint(lists(&e, fi.mountpoint, "x"), ==, -1);
	g_assert_cmpint(count_fs(&e), ==, 2);
	env_teardown(&e);
}

static void test_hotplug_cycle(void)
{
	struct env e;
	struct fsinfo fi, fi2;
	g_autofree char *img = NULL, *sys = NULL, *r = NULL, *zero = NULL, *sys2 = NULL;
	uint64_t ms;

	env_setup(&e);
	img = make_image(&e, "hot.img", IMG_FAMFS);
	zero = make_image(&e, "plain.img", IMG_ZERO);
	daemon_start(&e, default_conf);
	g_assert_cmpint(count_fs(&e), ==, 0);

	/* add → attach */
	sys = add_dax(&e, "dax3.0", img, true);
	ms = wait_health(&e, "/dev/dax3.0", "ok", &fi);
	g_test_message("add -> attached in %" G_GUINT64_FORMAT " ms", ms);
	g_assert_cmpstr(fi.mountpoint, ==, MROOT "/dax3.0");
	g_assert_cmpint(create_file(&e, MROOT "/dax3.0/kept", 2 << 20), >=, 0);

	/* a device without famfs appearing: ignored */
	sys2 = add_dax(&e, "dax4.0", zero, true);
	g_usleep(300000);
	g_assert_false(find_fs(&e, "/dev/dax4.0", &fi2));

	/* change with the same file system: nothing moves */
	umockdev_testbed_uevent(e.tb, sys, "change");
	g_usleep(200000);
	g_assert_true(find_fs(&e, "/dev/dax3.0", &fi2));
	g_assert_cmpstr(fi2.health, ==, "ok");
	g_assert_cmpstr(fi2.obj, ==, fi.obj);

	/* remove → failed, "device removed", calls fail cleanly, daemon lives */
	remove_dax(&e, "dax3.0", sys);
	wait_health(&e, "/dev/dax3.0", "failed", &fi2);
	g_assert_cmpstr(fi2.obj, ==, fi.obj);
	r = reasons(&e, fi2.obj);
	g_assert_cmpstr(r, ==, "device removed");
	g_assert_cmpint(lists(&e, MROOT "/dax3.0", "kept"), ==, -1);
	g_assert_cmpint(create_file(&e, MROOT "/dax3.0/after", 2 << 20), <, 0);
	g_assert_true(daemon_alive(&e));

	/* back → re-attached, same object, the file is still there */
	g_free(sys);
	sys = add_dax(&e, "dax3.0", img, true);
	ms = wait_health(&e, "/dev/dax3.0", "ok", &fi2);
	g_test_message("re-add -> re-attached in %" G_GUINT64_FORMAT " ms", ms);
	g_assert_cmpstr(fi2.obj, ==, fi.obj);
	g_assert_cmpint(lists(&e, MROOT "/dax3.0", "kept"), ==, 1);

	/* the plain device gets famfs, and says so with "change" */
	remkfs(&e, zero);
	umockdev_testbed_uevent(e.tb, sys2, "change");
	wait_health(&e, "/dev/dax4.0", "ok", &fi2);

	/* re-made with another UUID under the daemon: the old one is detached */
	remkfs(&e, img);
	umockdev_testbed_uevent(e.tb, sys, "change");
	{
		uint64_t t0 = now_ms();
		bool moved = false;

		while (!moved && now_ms() - t0 < 5000) {
			moved = find_fs(&e, "/dev/dax3.0", &fi2) && strcmp(fi2.uuid, fi.uuid) != 0;
			g_usleep(10000);
		}
		g_assert_true(moved);
		g_assert_cmpstr(fi2.health, ==, "ok");
		g_assert_cmpint(lists(&e, MROOT "/dax3.0", "kept"), ==, 0);
	}
	env_teardown(&e);
}

static void test_automount(void)
{
	struct env e;
	struct fsinfo fi;
	g_autofree char *a = NULL, *b = NULL, *conf = NULL, *uuid_b = NULL;
	char *sys;

	env_setup(&e);
	a = make_image(&e, "a.img", IMG_FAMFS);
	b = make_image(&e, "b.img", IMG_FAMFS);

	/* Learn b's UUID from a first daemon. */
	g_free(add_dax(&e, "dax5.0", b, false));
	daemon_start(&e, default_conf);
	g_assert_true(find_fs(&e, "/dev/dax5.0", &fi));
	uuid_b = g_strdup(fi.uuid);
	g_assert_cmpuint(strlen(uuid_b), ==, 36);
	env_teardown(&e);

	/* AutoMount off by default, on for b with its own mount point. */
	env_setup(&e);
	conf = g_strdup_printf("[manager]\nautomount = no\n\n[filesystem %s]\nautomount = yes\n"
			       "mount-point = " MROOT "/special\n", uuid_b);
	daemon_start(&e, conf);
	sys = add_dax(&e, "dax6.0", a, true);
	wait_health(&e, "/dev/dax6.0", "ok", &fi);
	g_assert_cmpstr(fi.mountpoint, ==, "");            /* attached, not mounted */
	g_assert_cmpint(create_file(&e, MROOT "/dax6.0/x", 2 << 20), <, 0);
	g_free(sys);
	sys = add_dax(&e, "dax5.0", b, true);
	wait_health(&e, "/dev/dax5.0", "ok", &fi);
	g_assert_cmpstr(fi.mountpoint, ==, MROOT "/special");
	g_assert_cmpint(create_file(&e, MROOT "/special/y", 2 << 20), >=, 0);
	g_assert_cmpint(lists(&e, MROOT "/special", "y"), ==, 1);
	g_free(sys);
	env_teardown(&e);

	/* On by default, off for b. */
	env_setup(&e);
	g_free(conf);
	conf = g_strdup_printf("[manager]\nautomount = yes\n[filesystem %s]\nautomount = no\n", uuid_b);
	g_free(add_dax(&e, "dax5.0", b, false));
	g_free(add_dax(&e, "dax6.0", a, false));
	daemon_start(&e, conf);
	g_assert_true(find_fs(&e, "/dev/dax5.0", &fi));
	g_assert_cmpstr(fi.mountpoint, ==, "");
	g_assert_true(find_fs(&e, "/dev/dax6.0", &fi));
	g_assert_cmpstr(fi.mountpoint, ==, MROOT "/dax6.0");
	env_teardown(&e);
}

/* The daemon refuses a bad [filesystem] section instead of guessing. */
static void put_counters(struct env *e, unsigned pte, unsigned pmd, unsigned pud)
{
	g_autofree char *root = umockdev_testbed_get_root_dir(e->tb);
	g_autofree char *dir = g_build_filename(root, "sys", "fs", "famfs", NULL);
	const unsigned v[3] = { pte, pmd, pud };
	const char *names[3] = { "pte_fault_ct", "pmd_fault_ct", "pud_fault_ct" };

	g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
	for (int i = 0; i < 3; i++) {
		g_autofree char *p = g_build_filename(dir, names[i], NULL);
		g_autofree char *text = g_strdup_printf("%u\n", v[i]);
		g_autofree char *tmp = g_strdup_printf("%s.new", p);

		/* whole files only: the daemon must never read half of one */
		g_assert_true(g_file_set_contents(tmp, text, -1, NULL));
		g_assert_cmpint(rename(tmp, p), ==, 0);
	}
}

static int on_manager_props(sd_bus_message *msg, void *userdata, sd_bus_error *err)
{
	uint64_t *last_pmd = userdata;
	const char *iface;

	g_assert_cmpint(sd_bus_message_read(msg, "s", &iface), >, 0);
	g_assert_cmpstr(iface, ==, FAMFS_MANAGER_IFACE);
	g_assert_cmpint(sd_bus_message_enter_container(msg, 'a', "{sv}"), >, 0);
	while (sd_bus_message_enter_container(msg, 'e', "sv") > 0) {
		const char *name;

		g_assert_cmpint(sd_bus_message_read(msg, "s", &name), >, 0);
		if (!strcmp(name, "FaultsPMD"))
			g_assert_cmpint(sd_bus_message_read(msg, "v", "t", &last_pmd[0]), >, 0);
		else
			g_assert_cmpint(sd_bus_message_skip(msg, "v"), >=, 0);
		g_assert_cmpint(sd_bus_message_exit_container(msg), >=, 0);
	}
	last_pmd[1]++;
	return 0;
}

/*
 * famfs.ko's fault counters are module-wide: they are on the Manager
 * object (not on each file system), and a change reaches clients as a
 * PropertiesChanged, at most one a second however fast they move.
 */
static void test_fault_counters(void)
{
	struct env e;
	struct fsinfo fi;
	g_autofree char *img = NULL;
	uint64_t v = 0, seen[2] = { 0, 0 }, t0;

	env_setup(&e);
	put_counters(&e, 5, 7, 0);
	img = make_image(&e, "faults.img", IMG_FAMFS);
	g_free(add_dax(&e, "dax0.0", img, false));
	daemon_start(&e, default_conf);
	g_assert_true(find_fs(&e, "/dev/dax0.0", &fi));
	g_assert_cmpint(sd_bus_get_property_trivial(e.bus, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE,
						    "FaultsPMD", NULL, 't', &v), >=, 0);
	g_assert_cmpuint(v, ==, 7);
	g_assert_cmpint(sd_bus_get_property_trivial(e.bus, FAMFS_BUS_NAME, fi.obj, FAMFS_FS_IFACE, "FaultsPMD", NULL,
						    't', &v), <, 0);
	g_assert_cmpint(sd_bus_match_signal(e.bus, NULL, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH, "org.freedesktop.DBus.Properties",
					    "PropertiesChanged", on_manager_props, seen), >=, 0);

	/* 20 changes in 2 s: every one is read, at most one signal a second is sent */
	t0 = now_ms();
	for (unsigned i = 1; i <= 20; i++) {
		put_counters(&e, 5, 7 + i, 0);
		while (now_ms() - t0 < i * 100) {
			while (sd_bus_process(e.bus, NULL) > 0)
				;
			(void)sd_bus_wait(e.bus, 10000);
		}
	}
	while (now_ms() - t0 < 3500 && seen[0] != 27) {
		while (sd_bus_process(e.bus, NULL) > 0)
			;
		(void)sd_bus_wait(e.bus, 10000);
	}
	g_test_message("%" PRIu64 " PropertiesChanged for 20 changes in %" PRIu64 " ms", seen[1], now_ms() - t0);
	g_assert_cmpuint(seen[0], ==, 27);
	g_assert_cmpuint(seen[1], >=, 2);
	g_assert_cmpuint(seen[1], <=, (now_ms() - t0) / 1000 + 1);
	env_teardown(&e);
}

static void test_bad_config(void)
{
	static const char *const bad[] = {
		"[filesystem not-a-uuid]\nautomount = yes\n",
		"[filesystem " UUID_A "]\nmount-point = relative/path\n",
		"[filesystem " UUID_A "]\nmount-point = /run/../etc\n",
		"[filesystem " UUID_A "]\ncolour = blue\n",
		"[manager]\nbackend = fuse\n",
		"[manager]\nautomount = maybe\n",
		"[manager]\nudev-source = netlink\n",
		"[manager]\nkernel-module = ../famfs\n",
	};

	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autofree char *conf = g_build_filename(topdir, "bad.conf", NULL);
		g_autofree char *arg = g_strdup_printf("--config=%s", conf);
		const char *argv[] = { manager_exe, arg, NULL };
		g_autoptr(GError) err = NULL;
		g_autofree char *out = NULL, *errs = NULL;
		int status;

		g_assert_true(g_file_set_contents(conf, bad[i], -1, NULL));
		g_assert_true(g_spawn_sync("/", (char **)argv, NULL, 0, die_with_parent, NULL, &out, &errs, &status,
					   &err));
		g_assert_true(WIFEXITED(status));
		/* EX_CONFIG, which the unit's RestartPreventExitStatus names */
		g_assert_cmpint(WEXITSTATUS(status), ==, EX_CONFIG);
		g_assert_nonnull(strstr(errs, "bad.conf"));
	}
}

int main(int argc, char **argv)
{
	int r;

	g_test_init(&argc, &argv, NULL);
	manager_exe = g_getenv("FAMFS_MANAGER");
	mkfs_exe = g_getenv("MKFS_FAMFS");
	policy_file = g_getenv("FAMFS_BUS_POLICY");
	if (!manager_exe || !mkfs_exe || !policy_file) {
		printf("1..0 # SKIP FAMFS_MANAGER, MKFS_FAMFS and FAMFS_BUS_POLICY must be set\n");
		return 77;
	}
	if (!g_getenv("LD_PRELOAD") || !strstr(g_getenv("LD_PRELOAD"), "umockdev")) {
		printf("1..0 # SKIP not under umockdev-wrapper\n");
		return 77;
	}
	topdir = g_dir_make_tmp("famfs-hotplug-XXXXXX", NULL);
	g_assert_nonnull(topdir);
	g_test_add_func("/udev/coldplug", test_coldplug);
	g_test_add_func("/udev/hotplug-cycle", test_hotplug_cycle);
	g_test_add_func("/udev/automount", test_automount);
	g_test_add_func("/udev/bad-config", test_bad_config);
	g_test_add_func("/udev/fault-counters", test_fault_counters);
	r = g_test_run();
	if (r == 0) {
		g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", topdir);

		(void)!system(cmd);
	}
	return r;
}
