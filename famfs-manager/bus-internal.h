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

/* The Check reply for @f: the checker's findings, and the kernel mount's. */
int bus_reply_check(sd_bus_message *msg, struct bus_server *s, struct fsys *f, sd_bus_error *e);

int bus_fsys_find(sd_bus *bus, const char *path, const char *iface, void *userdata, void **found,
		  sd_bus_error *e);
int bus_fsys_enumerate(sd_bus *bus, const char *path, void *userdata, char ***nodes, sd_bus_error *e);

#endif
