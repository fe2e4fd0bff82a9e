/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's settings: /etc/famfs/manager.conf (config.c reads it), with
 * the command line on top (main.c).  Every key is parsed and checked in
 * config.c; the rest of the daemon only reads the result.
 */
#ifndef FAMFS_MANAGER_CONFIG_H
#define FAMFS_MANAGER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "error.h"

#define MANAGER_DEFAULT_CONFIG        FAMFS_SYSCONFDIR "/manager.conf"
#define MANAGER_DEFAULT_MOUNT_ROOT    "/run/famfs"
#define MANAGER_DEFAULT_POLL_MS       100
#define MANAGER_DEFAULT_FOLLOW_MS     2
#define MANAGER_DEFAULT_FOLLOW_IDLE_MS 20
#define MANAGER_DEFAULT_GRACE_MS      2000
#define MANAGER_MAX_DEVICES           64
#define MANAGER_MAX_RULES             64

/* One [filesystem UUID] section. */
struct fs_rule {
	char uuid[37];
	int automount;            /* -1: the default */
	int backend;              /* -1: the default, else enum backend_choice */
	char *mountpoint;         /* NULL: under the mount root */
};

struct manager_config {
	char *devices[MANAGER_MAX_DEVICES];
	size_t ndevices;
	char *mount_root;
	uint64_t poll_ms;
	uint64_t follow_ms;        /* log header peek period; 0: only the poll */
	uint64_t follow_idle_ms;   /* the same once the logs have been quiet a while */
	uint64_t grace_ms;
	char *system_uuid_file;
	bool polkit;
	bool udev;                /* follow dax/pmem devices */
	char *udev_source;        /* "auto", "udev", "kernel" or NULL */
	bool automount;           /* the default of every file system */
	enum backend_choice backend;
	char *kernel_module;      /* load it when famfs.ko is missing; NULL: never */
	struct fs_rule rules[MANAGER_MAX_RULES];
	size_t nrules;
};

void config_init(struct manager_config *c);
void config_free(struct manager_config *c);
/* Reads an ini file; a missing file is fine unless @must_exist.  Messages name the file and line. */
int config_load(struct manager_config *c, const char *path, bool must_exist, struct famfs_err *err);
int config_add_device(struct manager_config *c, const char *path, struct famfs_err *err);
/* The command line (@cli) over what the file said; copies, and fills in the mount root. */
int config_apply_overlay(struct manager_config *cfg, const struct manager_config *cli, bool poll_given,
			 bool grace_given, bool no_polkit);
/* The [filesystem @uuid] section, made when missing (defaults throughout); NULL past MANAGER_MAX_RULES. */
struct fs_rule *config_rule_add(struct manager_config *c, const char *uuid);
/* The [filesystem @uuid] section (@uuid lowercase), or NULL. */
const struct fs_rule *config_rule(const struct manager_config *c, const char *uuid);

#endif
