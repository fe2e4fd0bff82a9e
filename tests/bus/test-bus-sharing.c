// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A master and a client on two buses sharing one image: the client follows
 * the master's log within two poll intervals, announces what it finds, may
 * not create or write, and reads back the bytes the master wrote.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "bus-fixture.h"
#include "peek-schedule.h"

static int on_files_added(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	const char *p;

	g_assert_cmpint(sd_bus_message_enter_container(msg, 'a', "s"), >, 0);
	while (sd_bus_message_read(msg, "s", &p) > 0) {
		g_assert_true(g_str_has_prefix(p, "/run/famfs-test/shared/n"));
		(*(int *)userdata)++;
	}
	return 0;
}

static int on_props_changed(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	(*(int *)userdata)++;
	return 0;
}

static void test_master_client(void)
{
	struct private_bus b1 = {0}, b2 = {0};
	g_autofree char *ua = write_uuid_file("uuid-mc-a", UUID_A), *ub = write_uuid_file("uuid-mc-b", UUID_B);
	g_autofree char *img = make_image("shared.img", 2ULL << 30, ua);
	g_autofree char *src = make_data("mc.bin", 3 * 1024 * 1024 + 5, 11);
	g_autofree char *out = NULL, *errs = NULL, *orig = NULL, *obj = NULL, *role = NULL;
	const char *devs[] = { img, NULL };
	const char *extra[] = { "--poll-interval=100", NULL };
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus *m, *c;
	GPid pm, pc;
	size_t olen;
	uint64_t worst = 0;
	int added = 0, props_changed = 0;

	bus_start(&b1, "bus-master");
	bus_start(&b2, "bus-client");
	pm = daemon_start(&b1, ua, devs, extra);
	pc = daemon_start(&b2, ub, devs, extra);
	m = bus_connect(b1.addr);
	c = bus_connect(b2.addr);
	obj = fs_object(c, "/run/famfs-test/shared");
	role = get_prop_s(c, obj, "Role");
	g_assert_cmpstr(role, ==, "client");

	/* the client announces what it finds */
	sd_bus_match_signal(c, NULL, FAMFS_BUS_NAME, obj, FAMFS_FS_IFACE, "FilesAdded", on_files_added, &added);
	sd_bus_match_signal(c, NULL, FAMFS_BUS_NAME, obj, "org.freedesktop.DBus.Properties", "PropertiesChanged",
			    on_props_changed, &props_changed);

	/* new files show up on the client within two poll intervals */
	for (int i = 0; i < 5; i++) {
		char p[64], name[16];
		uint64_t t0, dt;

		snprintf(name, sizeof(name), "n%d", i);
		snprintf(p, sizeof(p), "/run/famfs-test/shared/%s", name);
		g_assert_cmpint(create_file(m, p, 1000 + i, 0644, &e), >=, 0);
		t0 = now_us();
		/* a property read does not run the follower (ListFiles would) */
		while (get_prop_t(c, obj, "Files") < (uint64_t)i + 1 && now_us() - t0 < 2000000)
			g_usleep(2000);
		dt = now_us() - t0;
		worst = dt > worst ? dt : worst;
		g_assert_true(list_has(c, "/run/famfs-test/shared", name, NULL, NULL));
	}
	g_test_message("worst follow latency %" PRIu64 " us at a 100 ms poll", worst);
	g_assert_cmpuint(worst, <=, 200000);
	g_assert_cmpuint(get_prop_t(c, obj, "Files"), ==, 5);
	for (int i = 0; i < 50 && (added < 5 || props_changed == 0); i++) {
		while (sd_bus_process(c, NULL) > 0)
			;
		g_usleep(10000);
	}
	g_assert_cmpint(added, ==, 5);
	g_assert_cmpint(props_changed, >, 0);

	/* the client cannot create */
	g_assert_cmpint(create_file(c, "/run/famfs-test/shared/nope", 1, 0644, &e), <, 0);
	g_assert_cmpstr(e.name, ==, "org.famfs.Error.NotMaster");
	sd_bus_error_free(&e);

	/* nor write into the master's files: OpenFile gives it read-only descriptors only */
	{
		sd_bus_message *reply = NULL;

		g_assert_cmpint(manager_call(c, "OpenFile", &e, &reply, "sa{sv}",
					     "/run/famfs-test/shared/n0", 1, "writable", "b", 1), <, 0);
		g_assert_cmpstr(e.name, ==, "org.famfs.Error.ReadOnly");
		g_assert_nonnull(strstr(e.message, "clients do not write"));
		sd_bus_error_free(&e);
		g_assert_cmpint(manager_call(c, "OpenFile", &e, &reply, "sa{sv}",
					     "/run/famfs-test/shared/n0", 0), >=, 0);
		sd_bus_message_unref(reply);
	}

	/* data written through the master reads back identical through the client */
	g_assert_cmpint(run(&out, &errs, b1.addr, false, famfsctl_exe, "cp", src, "/run/famfs-test/shared/data",
			    NULL), ==, 0);
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&errs, g_free);
	g_usleep(250000);
	g_assert_cmpint(run(&out, &errs, b2.addr, false, famfsctl_exe, "cat", "/run/famfs-test/shared/data",
			    NULL), ==, 0);
	g_assert_true(g_file_get_contents(src, &orig, &olen, NULL));
	g_assert_cmpmem(out, olen, orig, olen);

	sd_bus_flush_close_unref(m);
	sd_bus_flush_close_unref(c);
	stop_pid(pm, SIGTERM);
	stop_pid(pc, SIGTERM);
	private_bus_stop(&b1);
	private_bus_stop(&b2);
	assert_fsck_clean(img);
	g_unlink(img);
}

/*
 * With an hour between polls, only the log header peeks (follow-interval)
 * can show the client a new file, also after a quiet spell has slowed them
 * down; with them off it sees nothing.
 */
static void test_peeks_follow(void)
{
	struct private_bus b1 = {0}, b2 = {0};
	g_autofree char *ua = write_uuid_file("uuid-pk-a", UUID_A), *ub = write_uuid_file("uuid-pk-b", UUID_B);
	g_autofree char *img = make_image("peeks.img", 1ULL << 30, ua);
	g_autofree char *noconf = write_test_file("no-peeks.conf", "[manager]\nfollow-interval = 0\n");
	g_autofree char *noconf_arg = g_strconcat("--config=", noconf, NULL);
	g_autofree char *obj = NULL, *obj_off = NULL;
	const char *devs[] = { img, NULL };
	const char *hourly[] = { "--poll-interval=3600000", NULL };
	const char *hourly_no_peeks[] = { noconf_arg, "--poll-interval=3600000", NULL };
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus *m, *c;
	GPid pm, pc;
	uint64_t t0;

	bus_start(&b1, "bus-pk-master");
	bus_start(&b2, "bus-pk-client");
	pm = daemon_start(&b1, ua, devs, hourly);
	pc = daemon_start(&b2, ub, devs, hourly);
	m = bus_connect(b1.addr);
	c = bus_connect(b2.addr);
	obj = fs_object(c, "/run/famfs-test/peeks");
	g_assert_cmpint(create_file(m, "/run/famfs-test/peeks/p0", 4096, 0644, &e), >=, 0);
	t0 = now_us();
	while (get_prop_t(c, obj, "Files") < 1 && now_us() - t0 < 10000000)
		g_usleep(2000);
	g_assert_cmpuint(get_prop_t(c, obj, "Files"), ==, 1);
	/* quiet past the active window: the peeks slow down (peek-schedule.h) but go on */
	g_usleep(PEEK_ACTIVE_USEC + 1500000);
	g_assert_cmpint(create_file(m, "/run/famfs-test/peeks/p-quiet", 4096, 0644, &e), >=, 0);
	t0 = now_us();
	while (get_prop_t(c, obj, "Files") < 2 && now_us() - t0 < 10000000)
		g_usleep(2000);
	g_assert_cmpuint(get_prop_t(c, obj, "Files"), ==, 2);
	sd_bus_flush_close_unref(c);
	stop_pid(pc, SIGTERM);

	/* the same client with follow-interval = 0: the next file waits for the hourly poll */
	pc = daemon_start(&b2, ub, devs, hourly_no_peeks);
	c = bus_connect(b2.addr);
	obj_off = fs_object(c, "/run/famfs-test/peeks");
	g_assert_cmpuint(get_prop_t(c, obj_off, "Files"), ==, 2);
	g_assert_cmpint(create_file(m, "/run/famfs-test/peeks/p1", 4096, 0644, &e), >=, 0);
	g_usleep(1000000);
	g_assert_cmpuint(get_prop_t(c, obj_off, "Files"), ==, 2);

	sd_bus_flush_close_unref(m);
	sd_bus_flush_close_unref(c);
	stop_pid(pm, SIGTERM);
	stop_pid(pc, SIGTERM);
	private_bus_stop(&b1);
	private_bus_stop(&b2);
	g_unlink(noconf);
	g_unlink(img);
}

static void add_tests(void)
{
	g_test_add_func("/bus/master-client", test_master_client);
	g_test_add_func("/bus/peeks-follow", test_peeks_follow);
}

int main(int argc, char **argv)
{
	return bus_test_main(argc, argv, add_tests);
}
