/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef FSCK_FAMFS_H
#define FSCK_FAMFS_H

#include <stdbool.h>
#include <stdint.h>

#include "check.h"
#include "cleanup.h"
#include "device.h"
#include "error.h"

#define TOOL_NAME "fsck.famfs"
#include "tools/message.h"

/* fsck(8) exit status bits. */
enum {
	FSCK_OK = 0,
	FSCK_CORRECTED = 1,
	FSCK_UNCORRECTED = 4,
	FSCK_OPERATIONAL = 8,
	FSCK_USAGE = 16,
};

enum repair_mode {
	REPAIR_NO,      /* -n: never write */
	REPAIR_YES,     /* -y */
	REPAIR_PREEN,   /* -p / -a */
};

struct fsck_options {
	enum repair_mode mode;
	bool json;
	bool verbose;
	bool skip_mounted;       /* -M */
	bool no_crosslinks;      /* --no-crosslinks, for measurements */
	const char *uuid_file;
	const char *device;
};

/* One change a repair made or would make. */
struct repair_action {
	const char *field;
	uint64_t old_value;
	uint64_t new_value;
};

struct repair_result {
	bool attempted;
	bool performed;
	struct repair_action actions[2];
	int nactions;
	struct famfs_err error;     /* why the repair failed */
};

/* Role of this host for the checked file system: "master", "client" or "unknown". */
const char *fsck_role(const struct famfs_check_report *r, const char *uuid_file);

/* Returns 0 or a negative errno, with the reason in res->error. */
int fsck_repair(const struct fsck_options *o, const struct famfs_check_report *r,
		struct repair_result *res);

void fsck_print_text(const struct fsck_options *o, const struct famfs_device *dev,
		     const struct famfs_check_report *r, const struct repair_result *rep,
		     int status);
int fsck_print_json(const struct fsck_options *o, const struct famfs_device *dev,
		    const struct famfs_check_report *r, const struct repair_result *rep,
		    int status);

#endif
