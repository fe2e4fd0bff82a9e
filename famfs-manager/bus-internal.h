/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the bus layer's files share; nothing outside the bus-*.c files includes this. */
#ifndef FAMFS_MANAGER_BUS_INTERNAL_H
#define FAMFS_MANAGER_BUS_INTERNAL_H

#include <systemd/sd-bus.h>

#include "bus.h"
#include "cleanup.h"

struct fsys;

extern const sd_bus_vtable bus_manager_vtable[];
extern const sd_bus_vtable bus_fsys_vtable[];

/* Appends a name from the medium (or a path built from one) as an escaped "s". */
int bus_append_name(sd_bus_message *m, const char *raw);

/* The Check reply for @f: the checker's findings, and the kernel mount's. */
int bus_reply_check(sd_bus_message *msg, struct bus_server *s, struct fsys *f, sd_bus_error *e);

int bus_fsys_find(sd_bus *bus, const char *path, const char *iface, void *userdata, void **found,
		  sd_bus_error *e);
int bus_fsys_enumerate(sd_bus *bus, const char *path, void *userdata, char ***nodes, sd_bus_error *e);

#endif
