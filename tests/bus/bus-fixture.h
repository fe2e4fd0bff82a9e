/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the bus tests share: a private dbus-daemon of type system, the real
 * famfs-manager on it, images made by mkfs.famfs and checked by fsck.famfs,
 * bus helpers, and the fixture of one daemon serving a master and a client
 * image.  Each test program hands its tests to bus_test_main().
 */
#ifndef FAMFS_TEST_BUS_FIXTURE_H
#define FAMFS_TEST_BUS_FIXTURE_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "famfs/bus-api.h"
#include "private-bus.h"

#define NOBODY "65534"

/* Who run() runs a command as. */
#define AS_ROOT 0
#define AS_NOBODY 1
#define AS_NOBODY_GROUP 2       /* uid 65534 with supplementary group OTHER_GID */
#define OTHER_GID "4242"

#define UUID_A "11111111-2222-4333-8444-555555555555"
#define UUID_B "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"
#define MP "/run/famfs-test/master"
#define MPC "/run/famfs-test/other"

/* The programs under test, from the environment (see meson.build). */
extern const char *manager_exe, *famfsctl_exe, *mkfs_exe, *fsck_exe, *policy_file, *interop_dir;
/* This run's scratch directory. */
extern char *topdir;

/* ---- processes ---- */

uint64_t now_us(void);
void stop_pid(GPid pid, int sig);
void bus_start(struct private_bus *b, const char *name);
void wait_name(const char *addr, const char *name, GPid pid);
GPid daemon_start(struct private_bus *b, const char *uuid_file, const char *const *devices,
		  const char *const *extra);
/*
 * When set, daemon_start() sends the daemon's stderr to this file (appended)
 * and names it in JOURNAL_STREAM, so that each line starts with its "<N>"
 * priority as it would in the journal.
 */
extern const char *daemon_log;
/* Whether a line of @path starts with "<@prio>" and contains every string of the NULL-terminated list. */
bool log_has_line(const char *path, int prio, const char *first, ...) G_GNUC_NULL_TERMINATED;
/* Prefixes @argv with setpriv to uid NOBODY when @as_nobody (AS_NOBODY, AS_NOBODY_GROUP). */
void argv_add_setpriv(GPtrArray *argv, int as_nobody);
int run(char **out, char **errout, const char *bus_addr, int as_nobody, const char *first, ...);

/* sd_bus_call_method() on famfs-manager's Manager object. */
int manager_call(sd_bus *bus, const char *member, sd_bus_error *e, sd_bus_message **reply,
		 const char *types, ...);

/* ---- images ---- */

/* @text in a file @name of this run's own directory (two runs at once must not share one) */
char *write_test_file(const char *name, const char *text);
char *write_uuid_file(const char *name, const char *uuid);
char *make_image_log(const char *name, uint64_t size, const char *uuid_file, const char *loglen);
char *make_image(const char *name, uint64_t size, const char *uuid_file);
void assert_fsck_clean(const char *image);
GBytes *meta_snapshot(const char *image);
uint64_t image_next_index(const char *image);
char *make_data(const char *name, size_t size, unsigned seed);

/* ---- bus helpers ---- */

char *fs_object(sd_bus *bus, const char *mountpoint);
char *get_prop_s(sd_bus *bus, const char *obj, const char *prop);
uint64_t get_prop_t(sd_bus *bus, const char *obj, const char *prop);
char *get_reasons(sd_bus *bus, const char *obj);
int create_file(sd_bus *bus, const char *path, uint64_t size, uint32_t mode, sd_bus_error *e);
bool list_has(sd_bus *bus, const char *dir, const char *name, uint64_t *ret_size, uint32_t *ret_mode);

/* ---- fixture: one bus, one daemon with a master and a client image ---- */

struct fixture {
	struct private_bus bus;
	GPid daemon;
	char *uuid_a, *uuid_b;      /* this host, another host */
	char *img, *other;          /* master of img (MP), client of other (MPC) */
	sd_bus *conn;
};

/* @data: NULL, or one more daemon argument */
void fixture_setup(struct fixture *f, gconstpointer data);
void fixture_teardown(struct fixture *f, gconstpointer data);

/*
 * Reads the environment, skips unless root, makes topdir, registers the
 * program's tests with @add_tests and runs them; removes topdir after.
 */
int bus_test_main(int argc, char **argv, void (*add_tests)(void));

#endif
