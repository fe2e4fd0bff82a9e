/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the bus layer's files share; nothing outside the bus-*.c files includes this. */
#ifndef FAMFS_MANAGER_BUS_INTERNAL_H
#define FAMFS_MANAGER_BUS_INTERNAL_H

#include <systemd/sd-bus.h>

#include "bus.h"
#include "cleanup.h"

struct fsys;

/* The longest path argument a call may pass. */
#define BUS_MAX_PATH_ARG 4096

extern const sd_bus_vtable bus_manager_vtable[];
extern const sd_bus_vtable bus_fsys_vtable[];
extern const sd_bus_vtable bus_job_vtable[];

/* Appends a name from the medium (or a path built from one) as an escaped "s". */
int bus_append_name(sd_bus_message *m, const char *raw);

/*
 * Resolves @path (as the bus passes it, escaped) to a usable file system
 * and its relative path (@rel, FAMFS_MAX_PATHLEN bytes); a file system
 * that failed, had a media failure or whose medium changed is refused
 * with the reason.
 */
int bus_resolve(struct bus_server *s, const char *path, struct fsys **ret_f, char *rel, sd_bus_error *e);

/* Manager1 methods (bus-create.c, bus-files.c), for the vtable in bus-manager.c. */
int method_create_file(sd_bus_message *msg, void *userdata, sd_bus_error *e);
int method_create_files(sd_bus_message *msg, void *userdata, sd_bus_error *e);
int method_mkdir(sd_bus_message *msg, void *userdata, sd_bus_error *e);
int method_get_file_map(sd_bus_message *msg, void *userdata, sd_bus_error *e);
int method_get_file_layout(sd_bus_message *msg, void *userdata, sd_bus_error *e);
int method_list_files(sd_bus_message *msg, void *userdata, sd_bus_error *e);
int method_list_files_raw(sd_bus_message *msg, void *userdata, sd_bus_error *e);
int method_open_file(sd_bus_message *msg, void *userdata, sd_bus_error *e);
int method_write_file(sd_bus_message *msg, void *userdata, sd_bus_error *e);

struct check_outcome;
struct job;

/* Appends a check's verdict, counts and findings: "stta(ssxss)". */
int bus_append_check(sd_bus_message *reply, const struct check_outcome *o);

/* Manager1 and FileSystem1 methods of bus-admin.c. */
int method_attach(sd_bus_message *msg, void *userdata, sd_bus_error *e);
int method_format(sd_bus_message *msg, void *userdata, sd_bus_error *e);
int method_reload(sd_bus_message *msg, void *userdata, sd_bus_error *e);
int method_set_automount(sd_bus_message *msg, void *userdata, sd_bus_error *e);
int method_fs_detach(sd_bus_message *msg, void *userdata, sd_bus_error *e);
int method_fs_repair(sd_bus_message *msg, void *userdata, sd_bus_error *e);

/*
 * Starts a check or repair job (@kind) on @f and replies with its object;
 * @f is refused first when a mutating job holds its device.
 */
int bus_start_check_job(sd_bus_message *msg, struct bus_server *s, struct fsys *f, int kind, sd_bus_error *e);
/* Replies to @msg with @j's object once it started, or the error that kept it from starting. */
int bus_reply_job(sd_bus_message *msg, struct bus_server *s, struct job *j, sd_bus_error *e);

/* The file system a FileSystem1 call is addressed to (looked up again after polkit answered). */
struct fsys *bus_call_fsys(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e);

int bus_job_find(sd_bus *bus, const char *path, const char *iface, void *userdata, void **found,
		 sd_bus_error *e);
int bus_job_enumerate(sd_bus *bus, const char *path, void *userdata, char ***nodes, sd_bus_error *e);

int bus_fsys_find(sd_bus *bus, const char *path, const char *iface, void *userdata, void **found,
		  sd_bus_error *e);
int bus_fsys_enumerate(sd_bus *bus, const char *path, void *userdata, char ***nodes, sd_bus_error *e);

#endif
