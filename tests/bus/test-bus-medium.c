// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The medium under the daemon: re-formatted by a third host while a master
 * and a client serve it, damaged images (bad superblock, bad entry, junk, too
 * small, missing), and a torn tail that completes late or a device that goes.
 */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "bus-fixture.h"
#include "log.h"
#include "omf.h"

/* Health of @obj on @bus, or NULL when the object is gone. */
static char *try_health(sd_bus *bus, const char *obj)
{
	char *v = NULL;

	if (sd_bus_get_property_string(bus, FAMFS_BUS_NAME, obj, FAMFS_FS_IFACE, "Health", NULL, &v) < 0)
		return NULL;
	return v;
}

static int count_props_changed(sd_bus_message *msg, void *userdata, sd_bus_error *e)
{
	const char *iface;
	int *counts = userdata;

	g_assert_cmpint(sd_bus_message_read(msg, "s", &iface), >, 0);
	counts[0]++;
	/* Role and UUID are announced with the rest: they are not const. */
	g_assert_cmpint(sd_bus_message_enter_container(msg, 'a', "{sv}"), >, 0);
	while (sd_bus_message_enter_container(msg, 'e', "sv") > 0) {
		const char *name;

		g_assert_cmpint(sd_bus_message_read(msg, "s", &name), >, 0);
		if (!strcmp(name, "Role") || !strcmp(name, "UUID"))
			counts[1]++;
		g_assert_cmpint(sd_bus_message_skip(msg, "v"), >=, 0);
		g_assert_cmpint(sd_bus_message_exit_container(msg), >=, 0);
	}
	return 0;
}

static char *image_uuid(const char *image)
{
	struct famfs_superblock sb;
	char *s = g_malloc(37);
	int fd = open(image, O_RDONLY);

	g_assert_cmpint(pread(fd, &sb, sizeof(sb), 0), ==, sizeof(sb));
	close(fd);
	uuid_unparse_lower(sb.uuid, s);
	return s;
}

/*
 * A third host re-formats the device under a master and a client
 * (mkfs.famfs -f, or -f -k which only destroys the superblock).  Within a
 * poll interval both report failed, saying what changed; every change is
 * refused with MediumChanged and nothing is written into the new medium.
 * After the grace period the old object goes and the new file system is
 * attached in its place (-f), or the old object stays failed (-k: nothing
 * famfs is left on the device).
 */
static void test_reformat(gconstpointer data)
{
	bool kill = GPOINTER_TO_INT(data);
	struct private_bus b1 = {0}, b2 = {0};
	g_autofree char *ua = write_uuid_file("uuid-rf-a", UUID_A), *ub = write_uuid_file("uuid-rf-b", UUID_B);
	g_autofree char *uc = write_uuid_file("uuid-rf-c", "cccccccc-dddd-4eee-8fff-000000000000");
	g_autofree char *img = make_image("reformat.img", 64ULL << 20, ua);
	g_autofree char *out = NULL, *errs = NULL, *obj = NULL, *old_uuid = image_uuid(img), *new_uuid = NULL;
	g_autofree char *expect = NULL;
	const char *devs[] = { img, NULL };
	const char *extra[] = { "--poll-interval=100", "--torn-tail-grace=3000", NULL };
	const char *mp = "/run/famfs-test/reformat";
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus *bus[2];
	GPid pid[2];
	int props[2][2] = { { 0 } };
	uint64_t t0, worst = 0;

	bus_start(&b1, "bus-rf-master");
	bus_start(&b2, "bus-rf-client");
	pid[0] = daemon_start(&b1, ua, devs, extra);
	pid[1] = daemon_start(&b2, ub, devs, extra);
	bus[0] = bus_connect(b1.addr);
	bus[1] = bus_connect(b2.addr);
	obj = fs_object(bus[0], mp);
	for (int i = 0; i < 3; i++) {
		g_autofree char *p = g_strdup_printf("%s/old%d", mp, i);

		g_assert_cmpint(create_file(bus[0], p, 1 << 20, 0644, &e), >=, 0);
	}
	t0 = now_us();
	while (get_prop_t(bus[1], obj, "Files") < 3 && now_us() - t0 < 5000000)
		g_usleep(5000);
	g_assert_cmpuint(get_prop_t(bus[1], obj, "Files"), ==, 3);
	for (int k = 0; k < 2; k++)
		sd_bus_match_signal(bus[k], NULL, FAMFS_BUS_NAME, obj, "org.freedesktop.DBus.Properties",
				    "PropertiesChanged", count_props_changed, props[k]);

	if (kill)
		g_assert_cmpint(run(&out, &errs, NULL, false, mkfs_exe, "-q", "-f", "-k", img, NULL), ==, 0);
	else
		g_assert_cmpint(run(&out, &errs, NULL, false, mkfs_exe, "-q", "-f", "-l", "8M",
				    "--system-uuid-file", uc, img, NULL), ==, 0);
	t0 = now_us();
	new_uuid = image_uuid(img);
	expect = kill ? g_strdup("superblock no longer valid (superblock: bad magic 0x0") :
		 g_strdup_printf("superblock UUID changed from %s to %s: the device was re-formatted", old_uuid,
				 new_uuid);
	for (int k = 0; k < 2; k++) {
		g_autofree char *h = NULL, *reasons = NULL;

		for (;;) {
			g_free(h);
			h = get_prop_s(bus[k], obj, "Health");
			if (!strcmp(h, "failed") || now_us() - t0 > 3000000)
				break;
			g_usleep(2000);
		}
		worst = MAX(worst, now_us() - t0);
		g_assert_cmpstr(h, ==, "failed");
		/* mkfs writes the log first: the reset log may be seen before the new superblock */
		for (;;) {
			g_free(reasons);
			reasons = get_reasons(bus[k], obj);
			if (strstr(reasons, expect) || now_us() - t0 > 1000000)
				break;
			g_usleep(2000);
		}
		g_test_message("daemon %d: %s", k, reasons);
		g_assert_nonnull(strstr(reasons, expect));
	}
	g_test_message("both daemons failed %" PRIu64 " us after the re-format (100 ms poll)", worst);
	g_assert_cmpuint(worst, <=, 250000);

	/* nothing reaches the new medium: not from the master, not through the client */
	{
		g_autoptr(GBytes) before = meta_snapshot(img), after = NULL;
		sd_bus_message *reply = NULL;
		g_autofree char *p = g_strdup_printf("%s/new", mp), *d = g_strdup_printf("%s/dir", mp);

		for (int k = 0; k < 2; k++) {
			g_assert_cmpint(create_file(bus[k], p, 1 << 20, 0644, &e), <, 0);
			g_assert_cmpstr(e.name, ==, "org.famfs.Error.MediumChanged");
			g_assert_nonnull(strstr(e.message, expect));
			sd_bus_error_free(&e);
		}
		g_assert_cmpint(manager_call(bus[0], "Mkdir", &e, &reply, "sua{sv}",
					     d, 0755, 0), <, 0);
		g_assert_cmpstr(e.name, ==, "org.famfs.Error.MediumChanged");
		sd_bus_error_free(&e);
		g_assert_cmpint(manager_call(bus[0], "CreateFiles", &e, &reply,
					     "a(stu)a{sv}", 1, p, (uint64_t)4096, 0644, 0), <, 0);
		g_assert_cmpstr(e.name, ==, "org.famfs.Error.MediumChanged");
		sd_bus_error_free(&e);
		after = meta_snapshot(img);
		g_assert_true(g_bytes_equal(before, after));
	}
	if (kill) {
		/* the old log is still there, untouched: 3 entries */
		g_assert_cmpuint(image_next_index(img), ==, 3);
	} else {
		assert_fsck_clean(img);
		g_assert_cmpuint(image_next_index(img), ==, 0);
	}
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < 20 && props[k][0] == 0; i++) {
			while (sd_bus_process(bus[k], NULL) > 0)
				;
			g_usleep(10000);
		}
		g_assert_cmpint(props[k][0], >, 0);
		g_assert_cmpint(props[k][1], >, 0);
	}

	/* after the grace period: the new medium is a new file system, the old object goes */
	for (int k = 0; k < 2; k++) {
		t0 = now_us();
		if (kill) {
			g_autofree char *role = NULL, *reasons = NULL;

			while (now_us() - t0 < 10000000) {
				g_free(role);
				role = get_prop_s(bus[k], obj, "Role");
				if (!strcmp(role, "unknown"))
					break;
				g_usleep(20000);
			}
			g_assert_cmpstr(role, ==, "unknown");
			reasons = get_reasons(bus[k], obj);
			g_assert_nonnull(strstr(reasons, expect));
			g_assert_cmpint(create_file(bus[k], "/run/famfs-test/reformat/x", 4096, 0644, &e), <, 0);
			sd_bus_error_free(&e);
		} else {
			g_autofree char *h = NULL, *now_obj = NULL, *uuid = NULL, *role = NULL;

			while (now_us() - t0 < 10000000 && (h = try_health(bus[k], obj))) {
				g_clear_pointer(&h, g_free);
				g_usleep(20000);
			}
			g_assert_null(h);
			now_obj = fs_object(bus[k], mp);
			g_assert_cmpstr(now_obj, !=, obj);
			uuid = get_prop_s(bus[k], now_obj, "UUID");
			g_assert_cmpstr(uuid, ==, new_uuid);
			h = get_prop_s(bus[k], now_obj, "Health");
			g_assert_cmpstr(h, ==, "ok");
			g_assert_cmpuint(get_prop_t(bus[k], now_obj, "Files"), ==, 0);
			/* the third host made it: both are clients of the new file system */
			role = get_prop_s(bus[k], now_obj, "Role");
			g_assert_cmpstr(role, ==, "client");
			g_assert_cmpint(create_file(bus[k], "/run/famfs-test/reformat/x", 4096, 0644, &e), <, 0);
			g_assert_cmpstr(e.name, ==, "org.famfs.Error.NotMaster");
			sd_bus_error_free(&e);
		}
	}

	for (int k = 0; k < 2; k++) {
		sd_bus_flush_close_unref(bus[k]);
		stop_pid(pid[k], SIGTERM);
	}
	private_bus_stop(&b1);
	private_bus_stop(&b2);
	if (!kill) {
		assert_fsck_clean(img);
		g_assert_cmpuint(image_next_index(img), ==, 0);
	}
	g_unlink(img);
}

static char *decompress_fixture(const char *name)
{
	g_autofree char *src = g_strdup_printf("%s/%s/%s.img.zst", interop_dir, name, name);
	g_autofree char *out = NULL, *errs = NULL;
	char *dst;

	if (!g_file_test(src, G_FILE_TEST_EXISTS))
		return NULL;
	dst = g_strdup_printf("%s/%s.img", topdir, name);
	g_assert_cmpint(run(&out, &errs, NULL, false, "zstd", "-q", "-f", "-d", "--sparse", src, "-o", dst, NULL), ==, 0);
	return dst;
}

static void test_damaged(void)
{
	struct private_bus b = {0};
	g_autofree char *ua = write_uuid_file("uuid-dmg", "f7c83d91-9f90-4a8e-ae2d-ac7a35d8cbcd");
	g_autofree char *badsb = decompress_fixture("basic_bad_sb_magic");
	g_autofree char *badent = decompress_fixture("basic_bad_entry_crc");
	g_autofree char *junk = g_build_filename(topdir, "junk.img", NULL);
	g_autofree char *tiny = g_build_filename(topdir, "tiny.img", NULL);
	g_autofree char *missing = g_build_filename(topdir, "missing.img", NULL);
	g_autofree char *obj = NULL, *h = NULL, *reasons = NULL, *out = NULL, *errs = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus *conn;
	GPid pid;
	int st;

	if (!badsb || !badent) {
		g_test_skip("interop fixtures not found");
		return;
	}
	{
		g_autofree char *rnd = make_data("junk.tmp", 8 << 20, 3);

		g_assert_cmpint(g_rename(rnd, junk), ==, 0);
	}
	g_assert_true(g_file_set_contents(tiny, "famfs", 5, NULL));
	{
		const char *devs[] = { badsb, badent, junk, tiny, missing, NULL };

		bus_start(&b, "bus-dmg");
		pid = daemon_start(&b, ua, devs, (const char *[]){ "--torn-tail-grace=100", NULL });
	}
	conn = bus_connect(b.addr);

	obj = fs_object(conn, "/run/famfs-test/basic_bad_sb_magic");
	h = get_prop_s(conn, obj, "Health");
	reasons = get_reasons(conn, obj);
	g_assert_cmpstr(h, ==, "failed");
	g_assert_nonnull(strstr(reasons, "superblock"));
	g_clear_pointer(&obj, g_free);
	g_clear_pointer(&h, free);
	g_clear_pointer(&reasons, g_free);

	obj = fs_object(conn, "/run/famfs-test/basic_bad_entry_crc");
	g_usleep(300000);
	h = get_prop_s(conn, obj, "Health");
	reasons = get_reasons(conn, obj);
	g_assert_cmpstr(h, !=, "ok");
	g_assert_nonnull(strstr(reasons, "log corrupt at index 2"));
	/* the entries before the bad one are there; nothing is appended after it */
	g_assert_cmpuint(get_prop_t(conn, obj, "LogEntriesUsed"), ==, 2);
	g_assert_cmpint(create_file(conn, "/run/famfs-test/basic_bad_entry_crc/new", 1, 0644, &e), <, 0);
	g_assert_true(sd_bus_error_has_names(&e, "org.famfs.Error.Corrupt", "org.famfs.Error.NotMaster"));
	sd_bus_error_free(&e);
	g_clear_pointer(&obj, g_free);
	g_clear_pointer(&h, free);
	g_clear_pointer(&reasons, g_free);

	for (const char *const *mp = (const char *const[]){ "/run/famfs-test/junk", "/run/famfs-test/tiny",
			"/run/famfs-test/missing", NULL }; *mp; mp++) {
		obj = fs_object(conn, *mp);
		h = get_prop_s(conn, obj, "Health");
		g_assert_cmpstr(h, ==, "failed");
		g_clear_pointer(&obj, g_free);
		g_clear_pointer(&h, free);
		g_autofree char *x = g_strdup_printf("%s/x", *mp);

		g_assert_cmpint(create_file(conn, x, 1, 0644, &e), <, 0);
		g_assert_cmpstr(e.name, ==, "org.famfs.Error.Corrupt");
		sd_bus_error_free(&e);
	}
	/* check reports the damage with fsck(8) codes */
	g_assert_cmpint(run(&out, &errs, b.addr, false, famfsctl_exe, "check",
			    "/run/famfs-test/basic_bad_entry_crc", NULL), ==, 4);
	g_assert_nonnull(strstr(out, "damaged"));

	sd_bus_flush_close_unref(conn);
	g_assert_cmpint(waitpid(pid, &st, WNOHANG), ==, 0);
	stop_pid(pid, SIGTERM);
	private_bus_stop(&b);
	g_unlink(badsb);
	g_unlink(badent);
	g_unlink(junk);
	g_unlink(tiny);
}

/* An entry in flight: counted past next_index but not yet valid. */
static void test_torn_tail(void)
{
	struct private_bus b = {0};
	g_autofree char *ua = write_uuid_file("uuid-t-a", UUID_A), *ub = write_uuid_file("uuid-t-b", UUID_B);
	g_autofree char *img = make_image("torn.img", 1ULL << 30, ua);
	g_autofree char *obj = NULL, *h = NULL, *reasons = NULL;
	const char *devs[] = { img, NULL };
	struct famfs_log_entry en;
	struct famfs_fmap map = { .ext_type = FAMFS_EXT_SIMPLE, .nextents = 1 };
	struct famfs_err err = {0};
	struct famfs_log_header hdr;
	uint64_t slot = FAMFS_LOG_OFFSET + sizeof(hdr);
	sd_bus *conn;
	GPid pid;
	int fd;

	bus_start(&b, "bus-torn");
	pid = daemon_start(&b, ub, devs, (const char *[]){ "--poll-interval=20", "--torn-tail-grace=400", NULL });
	conn = bus_connect(b.addr);
	obj = fs_object(conn, "/run/famfs-test/torn");

	map.se[0].offset = 512ULL << 20;
	map.se[0].len = 2ULL << 20;
	g_assert_cmpint(famfs_entry_make_file(&en, "torn", 100, 0644, 0, 0, &map, &err), ==, 0);
	en.seqnum = 0;
	en.crc = famfs_log_entry_crc(&en) ^ 1;   /* not yet complete */
	fd = open(img, O_RDWR);
	g_assert_cmpint(pwrite(fd, &en, sizeof(en), slot), ==, sizeof(en));
	g_assert_cmpint(pread(fd, &hdr, sizeof(hdr), FAMFS_LOG_OFFSET), ==, sizeof(hdr));
	hdr.next_index = hdr.next_seqnum = 1;
	g_assert_cmpint(pwrite(fd, &hdr, sizeof(hdr), FAMFS_LOG_OFFSET), ==, sizeof(hdr));

	/* inside the grace period: retried, still ok */
	g_usleep(150000);
	h = get_prop_s(conn, obj, "Health");
	g_assert_cmpstr(h, ==, "ok");
	g_clear_pointer(&h, free);
	g_assert_cmpuint(get_prop_t(conn, obj, "TornTailRetries"), >, 0);
	g_assert_cmpuint(get_prop_t(conn, obj, "Files"), ==, 0);
	/* past it: degraded, naming the index */
	g_usleep(500000);
	h = get_prop_s(conn, obj, "Health");
	reasons = get_reasons(conn, obj);
	g_assert_cmpstr(h, ==, "degraded");
	g_assert_nonnull(strstr(reasons, "index 0"));
	g_assert_nonnull(strstr(reasons, "follower stuck"));
	g_assert_cmpuint(get_prop_t(conn, obj, "InvalidEntries"), ==, 1);
	g_clear_pointer(&h, free);
	/* the write completes: the file appears and health recovers */
	en.crc = famfs_log_entry_crc(&en);
	g_assert_cmpint(pwrite(fd, &en, sizeof(en), slot), ==, sizeof(en));
	close(fd);
	g_usleep(200000);
	h = get_prop_s(conn, obj, "Health");
	g_assert_cmpstr(h, ==, "ok");
	g_assert_true(list_has(conn, "/run/famfs-test/torn", "torn", NULL, NULL));
	g_assert_cmpuint(get_prop_t(conn, obj, "Files"), ==, 1);
	assert_fsck_clean(img);

	/* the device goes away: failed, and the daemon keeps serving */
	g_assert_cmpint(g_unlink(img), ==, 0);
	g_usleep(200000);
	g_clear_pointer(&h, free);
	g_clear_pointer(&reasons, g_free);
	h = get_prop_s(conn, obj, "Health");
	reasons = get_reasons(conn, obj);
	g_assert_cmpstr(h, ==, "failed");
	g_assert_nonnull(strstr(reasons, "device gone"));

	sd_bus_flush_close_unref(conn);
	stop_pid(pid, SIGTERM);
	private_bus_stop(&b);
}

static void add_tests(void)
{
	g_test_add_data_func("/bus/reformat/mkfs", GINT_TO_POINTER(0), test_reformat);
	g_test_add_data_func("/bus/reformat/mkfs-kill", GINT_TO_POINTER(1), test_reformat);
	g_test_add_func("/bus/damaged", test_damaged);
	g_test_add_func("/bus/torn-tail", test_torn_tail);
}

int main(int argc, char **argv)
{
	return bus_test_main(argc, argv, add_tests);
}
