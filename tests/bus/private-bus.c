// SPDX-License-Identifier: LGPL-2.1-or-later
/* A private dbus-daemon of type system for the tests; see private-bus.h. */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>

#include "private-bus.h"

void die_with_parent(gpointer data)
{
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
}

/* Connects to @addr and asks the bus for its id: 0, or a negative errno. */
static int bus_answers(const char *addr)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus *bus = NULL;
	int r;

	r = sd_bus_new(&bus);
	if (r >= 0)
		r = sd_bus_set_address(bus, addr);
	if (r >= 0)
		r = sd_bus_set_bus_client(bus, 1);
	if (r >= 0)
		r = sd_bus_start(bus);
	if (r >= 0)
		r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
				       "GetId", &e, NULL, "");
	sd_bus_error_free(&e);
	sd_bus_flush_close_unref(bus);
	return r < 0 ? r : 0;
}

void private_bus_start(struct private_bus *b, const char *dir, const char *policy_file, char **envp)
{
	g_autofree char *conf = NULL, *text = NULL, *sock = NULL, *arg = NULL;
	g_autoptr(GError) err = NULL;
	const char *argv[] = { "dbus-daemon", NULL, "--nofork", "--nopidfile", NULL };
	int r = -ENOENT;

	b->dir = g_strdup(dir);
	g_assert_cmpint(g_mkdir_with_parents(b->dir, 0755), ==, 0);
	g_assert_cmpint(chmod(b->dir, 0755), ==, 0);
	sock = g_build_filename(b->dir, "bus", NULL);
	conf = g_build_filename(b->dir, "bus.conf", NULL);
	g_unlink(sock);
	text = g_strdup_printf(
		"<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
		" \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
		"<busconfig>\n  <type>system</type>\n  <listen>unix:path=%s</listen>\n"
		"  <auth>EXTERNAL</auth>\n"
		"  <policy context=\"default\">\n    <allow user=\"*\"/>\n    <allow own=\"*\"/>\n"
		"    <allow send_destination=\"*\" eavesdrop=\"true\"/>\n    <allow receive_sender=\"*\"/>\n"
		"  </policy>\n  <include>%s</include>\n</busconfig>\n", sock, policy_file);
	g_assert_true(g_file_set_contents(conf, text, -1, NULL));
	arg = g_strdup_printf("--config-file=%s", conf);
	argv[1] = arg;
	g_assert_true(g_spawn_async(NULL, (char **)argv, envp,
				    G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDERR_TO_DEV_NULL,
				    die_with_parent, NULL, &b->pid, &err));
	b->addr = g_strdup_printf("unix:path=%s", sock);
	/*
	 * The socket file appears when dbus-daemon binds it, a moment before
	 * it listens: until then a connection is refused.  Wait for an answer.
	 */
	for (int i = 0; i < 500; i++) {
		int st;

		g_assert_cmpint(waitpid(b->pid, &st, WNOHANG), ==, 0);   /* still running */
		r = bus_answers(b->addr);
		if (r != -ENOENT && r != -ECONNREFUSED)
			break;
		g_usleep(10000);
	}
	if (r < 0)
		g_error("the private bus at %s does not answer: %s", b->addr, g_strerror(-r));
}

void private_bus_stop(struct private_bus *b)
{
	int st;

	if (b->pid > 0) {
		kill(b->pid, SIGTERM);
		waitpid(b->pid, &st, 0);
	}
	g_free(b->dir);
	g_free(b->addr);
	memset(b, 0, sizeof(*b));
}

sd_bus *bus_connect(const char *addr)
{
	sd_bus *bus = NULL;

	g_assert_cmpint(sd_bus_new(&bus), >=, 0);
	g_assert_cmpint(sd_bus_set_address(bus, addr), >=, 0);
	g_assert_cmpint(sd_bus_set_bus_client(bus, 1), >=, 0);
	g_assert_cmpint(sd_bus_start(bus), >=, 0);
	return bus;
}

bool bus_name_has_owner(sd_bus *bus, const char *name)
{
	sd_bus_message *reply = NULL;
	int has = 0;

	if (sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
			       "NameHasOwner", NULL, &reply, "s", name) < 0)
		return false;
	(void)sd_bus_message_read(reply, "b", &has);
	sd_bus_message_unref(reply);
	return has;
}
