// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The daemon process itself: a bad configuration refused at startup, and
 * kill -9 in the middle of a batch leaving all of it or none of it.
 */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "bus-fixture.h"
#include "check.h"
#include "omf.h"

static int count_files(const char *image)
{
	struct famfs_log_header h;
	int fd = open(image, O_RDONLY);

	g_assert_cmpint(pread(fd, &h, sizeof(h), FAMFS_LOG_OFFSET), ==, sizeof(h));
	close(fd);
	return (int)h.next_index;
}

static void test_kill9(void)
{
	struct private_bus b = {0};
	g_autofree char *ua = write_uuid_file("uuid-k", UUID_A);
	/* 256 MiB log, 1 TiB sparse: room for big batches, long enough to be hit mid-append */
	g_autofree char *img = make_image_log("kill.img", 1ULL << 40, ua, "256M");
	const char *devs[] = { img, NULL };
	int prev = 0;

	bus_start(&b, "bus-kill");
	for (int round = 0; round < 6; round++) {
		sd_bus_message *call = NULL;
		sd_bus *conn;
		GPid pid = daemon_start(&b, ua, devs, NULL);
		g_autofree char *out = NULL, *errs = NULL;
		int n, rc;

		conn = bus_connect(b.addr);
		g_assert_cmpint(sd_bus_message_new_method_call(conn, &call, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH,
							       FAMFS_MANAGER_IFACE, "CreateFiles"), >=, 0);
		g_assert_cmpint(sd_bus_message_open_container(call, 'a', "(stu)"), >=, 0);
		for (int i = 0; i < 60000; i++) {
			char p[64];

			snprintf(p, sizeof(p), "/run/famfs-test/kill/r%d-%05d", round, i);
			g_assert_cmpint(sd_bus_message_append(call, "(stu)", p, (uint64_t)4096, 0644), >=, 0);
		}
		g_assert_cmpint(sd_bus_message_close_container(call), >=, 0);
		g_assert_cmpint(sd_bus_message_append(call, "a{sv}", 0), >=, 0);
		g_assert_cmpint(sd_bus_send(conn, call, NULL), >=, 0);
		g_assert_cmpint(sd_bus_flush(conn), >=, 0);
		/* anywhere from "not yet started" to "probably done" */
		g_usleep(round * 25000);
		stop_pid(pid, SIGKILL);
		sd_bus_message_unref(call);
		sd_bus_flush_close_unref(conn);

		rc = run(&out, &errs, NULL, false, fsck_exe, "-n", img, NULL);
		if (rc != 0) {
			/* only an invalid tail may be left, which repair cuts */
			struct famfs_check_report *rep = NULL;
			g_autofree char *buf = NULL;
			gsize len;

			g_assert_cmpint(rc, ==, 4);
			g_assert_true(g_file_get_contents(img, &buf, &len, NULL));
			g_assert_cmpint(famfs_check_medium((uint8_t *)buf, len, 0, &rep), ==, 0);
			g_assert_true(famfs_check_repair_fixes_all(rep));
			famfs_check_report_free(rep);
			g_clear_pointer(&out, g_free);
			g_clear_pointer(&errs, g_free);
			g_assert_cmpint(run(&out, &errs, NULL, false, fsck_exe, "-y", img, NULL), ==, 1);
		}
		/* all or nothing */
		n = count_files(img);
		{
			/* entries in the slot past the end: the kill landed inside the append */
			struct famfs_log_entry slot;
			int fd = open(img, O_RDONLY);

			g_assert_cmpint(pread(fd, &slot, sizeof(slot), FAMFS_LOG_OFFSET + sizeof(struct famfs_log_header) +
					      (uint64_t)n * sizeof(slot)), ==, sizeof(slot));
			close(fd);
			g_test_message("round %d: %d entries after kill -9%s", round, n - prev,
				       slot.crc != 0 ? " (killed mid-append: slots written, header not advanced)" : "");
		}
		g_assert_true(n - prev == 0 || n - prev == 60000);
		prev = n;
	}
	private_bus_stop(&b);
	assert_fsck_clean(img);
	g_unlink(img);
}

static void test_config(void)
{
	g_autofree char *conf = g_build_filename(topdir, "bad.conf", NULL);
	g_autofree char *out = NULL, *errs = NULL;
	g_autofree char *arg = g_strdup_printf("--config=%s", conf);

	g_assert_true(g_file_set_contents(conf, "[manager]\npoll-interval = soon\n", -1, NULL));
	g_assert_cmpint(run(&out, &errs, NULL, false, manager_exe, arg, NULL), ==, EX_CONFIG);
	g_assert_nonnull(strstr(errs, "bad.conf:2: invalid value \"soon\" for poll-interval"));
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&errs, g_free);
	g_assert_true(g_file_set_contents(conf, "[manager]\ncolour = blue\n", -1, NULL));
	g_assert_cmpint(run(&out, &errs, NULL, false, manager_exe, arg, NULL), ==, EX_CONFIG);
	g_assert_nonnull(strstr(errs, "unknown key \"colour\""));
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&errs, g_free);
	g_assert_cmpint(run(&out, &errs, NULL, false, manager_exe, "--poll-interval=-5", NULL), ==, 1);
	g_assert_nonnull(strstr(errs, "invalid --poll-interval"));
}

static void add_tests(void)
{
	g_test_add_func("/bus/kill9-batch", test_kill9);
	g_test_add_func("/bus/config", test_config);
}

int main(int argc, char **argv)
{
	return bus_test_main(argc, argv, add_tests);
}
