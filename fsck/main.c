// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fsck.famfs: checks a famfs file system (superblock, log, every entry,
 * paths, cross-links) and repairs only what is safe: a torn or invalid log
 * tail and header counters that disagree with the intact entries.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include "config.h"
#include "fsck.h"
#include "sysuuid.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: fsck.famfs [OPTIONS] DEVICE\n"
		"Check a famfs file system on a DAX device, a pmem device or an image file.\n\n"
		"  -n            check only, never write (the default)\n"
		"  -y            repair what can be repaired safely\n"
		"  -p, -a        preen: the same safe repairs, without questions\n"
		"  -v            verbose: print every finding and the layout\n"
		"      --json    print the report as JSON (see fsck.famfs(8))\n"
		"  -u, --system-uuid-file PATH  host UUID file, to show this host's role\n"
		"  -f -T -l -M -C FD   accepted for fsck(8) and systemd-fsck; -M skips a mounted device\n"
		"  -h, --help    show this help\n"
		"  -V, --version show the version\n\n"
		"Exit status: 0 clean, 1 errors corrected, 4 errors left uncorrected,\n"
		"8 operational error, 16 usage error.\n");
}

static int parse_options(int argc, char **argv, struct fsck_options *o)
{
	enum { OPT_JSON = 0x100, OPT_NO_CROSSLINKS };
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "no-crosslinks", no_argument, NULL, OPT_NO_CROSSLINKS },
		{ "system-uuid-file", required_argument, NULL, 'u' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	int modes = 0, c;

	while ((c = getopt_long(argc, argv, "nypafTlMC::vu:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': o->mode = REPAIR_NO; modes |= 1; break;
		case 'y': o->mode = REPAIR_YES; modes |= 2; break;
		case 'p':
		case 'a': o->mode = REPAIR_PREEN; modes |= 4; break;
		case 'M': o->skip_mounted = true; break;
		case 'f': case 'T': case 'l': case 'C':
			break;   /* force, no title, lock, progress fd: nothing to do here */
		case 'v': o->verbose = true; break;
		case 'u': o->uuid_file = optarg; break;
		case OPT_JSON: o->json = true; break;
		case OPT_NO_CROSSLINKS: o->no_crosslinks = true; break;
		case 'h': usage(stdout); exit(FSCK_OK);
		case 'V': printf("fsck.famfs %s\n", PACKAGE_VERSION); exit(FSCK_OK);
		default: usage(stderr); return -1;
		}
	}
	if (modes & (modes - 1)) {
		tool_error("-n, -y and -p exclude each other");
		return -1;
	}
	if (optind != argc - 1) {
		tool_error("%s", optind >= argc ? "no device given" : "more than one device given");
		usage(stderr);
		return -1;
	}
	o->device = argv[optind];
	return 0;
}

const char *fsck_role(const struct famfs_check_report *r, const char *uuid_file)
{
	uint8_t host[16];

	if (!r->summary.superblock_valid || famfs_system_uuid_get(uuid_file, false, host, NULL) < 0)
		return "unknown";
	return memcmp(host, r->summary.system_uuid, 16) == 0 ? "master" : "client";
}

static int status_of(const struct famfs_check_report *r, const struct repair_result *rep)
{
	if (famfs_check_report_errors(r) == 0)
		return FSCK_OK;
	if (rep->performed)
		return famfs_check_repair_fixes_all(r) ? FSCK_CORRECTED : FSCK_CORRECTED | FSCK_UNCORRECTED;
	return FSCK_UNCORRECTED;
}

int main(int argc, char **argv)
{
	_cleanup_(famfs_device_closep) struct famfs_device *dev = NULL;
	_cleanup_(famfs_check_report_freep) struct famfs_check_report *r = NULL;
	struct fsck_options o = { .mode = REPAIR_NO };
	struct famfs_err err = { 0 };
	struct repair_result rep = { 0 };
	int status, ret;

	if (parse_options(argc, argv, &o) < 0)
		return FSCK_USAGE;

	ret = famfs_device_open(o.device, 0, &dev, &err);
	if (ret < 0) {
		tool_error("%s", err.msg);
		return FSCK_OPERATIONAL;
	}
	if (o.skip_mounted && famfs_device_is_mounted(dev))
		return FSCK_OK;
	ret = famfs_check_device(dev, o.no_crosslinks ? FAMFS_CHECK_NO_CROSSLINKS : 0, &r);
	if (ret < 0) {
		tool_error_errno(ret, "cannot check %s: %m", o.device);
		return FSCK_OPERATIONAL;
	}

	/* The read-only mapping stays valid and shows what a repair wrote. */
	if (o.mode != REPAIR_NO && r->repair.needed && fsck_repair(&o, r, &rep) < 0) {
		if (!o.json)
			tool_error("%s", rep.error.msg);
		status = FSCK_OPERATIONAL | FSCK_UNCORRECTED;
	} else {
		status = status_of(r, &rep);
	}
	if (o.json)
		ret = fsck_print_json(&o, dev, r, &rep, status);
	else
		fsck_print_text(&o, dev, r, &rep, status);
	return status;
}
