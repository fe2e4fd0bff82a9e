/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * famfsctl's bus client: one connection, one function per method it calls,
 * each decoding the reply into plain structs.  Nothing here prints but
 * client_error(), which the commands call with their own wording.  On
 * failure a function returns a negative errno, fills @e when the daemon
 * refused, and leaves its ret_* output untouched.
 */
#ifndef FAMFSCTL_CLIENT_H
#define FAMFSCTL_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "cleanup.h"

/* Connects to the system bus (DBUS_SYSTEM_BUS_ADDRESS overrides it); reports failure. */
int client_connect(bool ask_password);
void client_disconnect(void);

/* Prints "famfsctl: cannot WHAT ARG: why [error name]"; returns @r. */
int client_error(const char *what, const char *arg, const sd_bus_error *e, int r);

/* A file system's properties (org.famfs.FileSystem1). */
struct fsinfo {
	char *object;
	char *uuid, *device, *mountpoint, *role, *backend, *health;
	char **reasons;
	uint64_t log_used, log_total, capacity, allocated, free_bytes, files, directories;
	uint64_t replayed, invalid, torn, last_replay;
};

struct fsinfo_list {
	struct fsinfo *v;
	size_t n;
};

void fsinfo_list_clear(struct fsinfo_list *l);

/* All attached file systems, in the daemon's order. */
int client_list_fs(struct fsinfo_list *ret, sd_bus_error *e);

/* The module-wide fault counters: PTE, PMD, PUD. */
int client_get_faults(uint64_t ret_faults[3], sd_bus_error *e);

/* A directory listing; the names live as long as the listing. */
struct dir_entry {
	const char *name;
	uint64_t size;
	uint32_t mode, uid, gid;
};

struct listing {
	sd_bus_message *reply;
	struct dir_entry *entries;
	size_t n;
};

void listing_clear(struct listing *l);
int client_list_files(const char *path, struct listing *ret, sd_bus_error *e);

/* Where a file's bytes are: simple extents, or the strips of an interleaved file. */
#define LAYOUT_MAX_EXTENTS 16

struct extent {
	uint64_t devindex, offset, len;
};

struct file_layout {
	uint64_t size;
	uint32_t mode, uid, gid;    /* GetFileLayout only */
	uint32_t type;              /* 0 simple, 1 interleaved */
	uint64_t chunk;
	struct extent ext[LAYOUT_MAX_EXTENTS];
	size_t n;
};

int client_get_layout(const char *path, struct file_layout *ret, sd_bus_error *e);

/*
 * OpenFile: a descriptor (the caller's to close) and where to map it;
 * @descriptor NULL leaves the kind to the daemon, or asks for "device".
 */
int client_open_file(const char *path, bool writable, const char *descriptor, int *ret_fd,
		     struct file_layout *ret, sd_bus_error *e);

/* Interleaving for CreateFile; 0 leaves a value to the daemon. */
struct interleave {
	uint32_t nstrips, nbuckets;
	uint64_t chunk;
};

/* The "uid" and "gid" options of CreateFile, CreateFiles and Mkdir; unset: the caller's. */
struct owner {
	bool has_uid, has_gid;
	uint32_t uid, gid;
};

int client_create_file(const char *path, uint64_t size, uint32_t mode, const struct interleave *il,
		       const struct owner *o, sd_bus_error *e);
int client_mkdir(const char *path, uint32_t mode, bool parents, const struct owner *o, sd_bus_error *e);

/* One file of a CreateFiles batch. */
struct batch_file {
	const char *path;
	uint64_t size;
	uint32_t mode;
};

/* CreateFiles: all of them or none; *@ret_created says how many the daemon made. */
int client_create_files(const struct batch_file *files, size_t n, const struct owner *o, uint32_t *ret_created,
			sd_bus_error *e);
/* WriteFile: the daemon copies the sealed memfd @data_fd into @path. */
int client_write_file(const char *path, int data_fd, sd_bus_error *e);

/* Check's verdict and findings; the strings live as long as the result. */
struct check_finding {
	const char *severity, *code, *path, *message;
	int64_t index;
};

struct check_result {
	sd_bus_message *reply;
	const char *verdict;
	uint64_t errors, warnings;
	struct check_finding *findings;
	size_t n;
};

void check_result_clear(struct check_result *c);
/* Decodes a check's "stta(ssxss)" (Job1.Result); takes a reference on @reply. */
int client_read_check(sd_bus_message *reply, struct check_result *ret);

/* The connection, for the calls of client-admin.c. */
sd_bus *client_bus(void);

#endif
