/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The a{sv} options of the Manager1 methods, decoded from one table: each
 * option's name, type and field are in bus-options.c and nowhere else.  A
 * method names the options it takes as a mask; anything else, or a value
 * of another type, is InvalidArgument naming the option.
 */
#ifndef FAMFS_MANAGER_BUS_OPTIONS_H
#define FAMFS_MANAGER_BUS_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

enum {
	BUS_OPT_UID        = 1u << 0,
	BUS_OPT_GID        = 1u << 1,
	BUS_OPT_NSTRIPS    = 1u << 2,
	BUS_OPT_NBUCKETS   = 1u << 3,
	BUS_OPT_CHUNK_SIZE = 1u << 4,
	BUS_OPT_PARENTS    = 1u << 5,
	BUS_OPT_WRITABLE   = 1u << 6,
	BUS_OPT_DESCRIPTOR = 1u << 7,
	BUS_OPT_MOUNT_POINT = 1u << 8,
	BUS_OPT_BACKEND    = 1u << 9,
	BUS_OPT_READ_ONLY  = 1u << 10,
	BUS_OPT_FORCE      = 1u << 11,
	BUS_OPT_LOG_LEN    = 1u << 12,
};

struct bus_options {
	unsigned given;             /* BUS_OPT_* the caller set */
	uint32_t uid, gid;
	uint32_t nstrips, nbuckets;
	uint64_t chunk_size;
	bool parents;
	bool writable;
	const char *descriptor;     /* OpenFile: "auto", "device" or "file"; points into the message */
	const char *mount_point;    /* Attach; points into the message */
	const char *backend;        /* Attach: "auto", "kernel" or "view" */
	bool read_only;             /* Attach */
	bool force;                 /* Detach, Format */
	uint64_t log_len;           /* Format */
};

/* Reads the a{sv} at the message's read position, options in @allowed only. */
int bus_read_options(sd_bus_message *msg, unsigned allowed, struct bus_options *ret, sd_bus_error *e);

/* The same with the allowed names space separated ("uid gid"), for the option fuzzer. */
int bus_parse_options(sd_bus_message *msg, const char *allowed, sd_bus_error *e);

#endif
