/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A private dbus-daemon of type system for the tests: anyone may connect
 * and own names, and the included policy file (famfs-manager's) is what
 * keeps org.famfs.Manager to root.  Only GLib and sd-bus: the udev tests
 * link it as well as the bus tests.
 */
#ifndef FAMFS_TEST_PRIVATE_BUS_H
#define FAMFS_TEST_PRIVATE_BUS_H

#include <glib.h>
#include <stdbool.h>
#include <systemd/sd-bus.h>

struct private_bus {
	char *dir;      /* holds bus.conf and the socket */
	char *addr;     /* unix:path=... */
	GPid pid;
};

/* Children die with the test, even when an assertion aborts it. */
void die_with_parent(gpointer data);

/*
 * Starts dbus-daemon in @dir (made if need be) with @policy_file included,
 * in environment @envp (NULL: ours); returns once the bus answers calls.
 */
void private_bus_start(struct private_bus *b, const char *dir, const char *policy_file, char **envp);
void private_bus_stop(struct private_bus *b);

/* A client connection to @addr; asserts it works. */
sd_bus *bus_connect(const char *addr);
bool bus_name_has_owner(sd_bus *bus, const char *name);

#endif
