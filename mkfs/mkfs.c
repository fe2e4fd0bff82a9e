// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mkfs.famfs: writes a famfs superblock and an empty log to a DAX device,
 * a pmem block device or an image file.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <uuid/uuid.h>

#include "config.h"
#include "cache.h"
#include "check.h"
#include "cleanup.h"
#include "device.h"
#include "format.h"
#include "log.h"
#include "superblock.h"
#include "sysuuid.h"
#include "units.h"

#define TOOL_NAME "mkfs.famfs"
#include "tools/message.h"

/* mkfs(8)'s exit status: 0 success, 1 failure; and 2 for a usage error (mkfs.famfs(8)). */
enum {
	MKFS_OK = 0,
	MKFS_FAILED = 1,
	MKFS_USAGE = 2,
};

struct options {
	bool force;
	bool kill;
	bool quiet;
	uint64_t log_len;
	const char *uuid_file;
	const char *device;
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: mkfs.famfs [OPTIONS] DEVICE\n"
		"Create a famfs file system on a DAX device, a pmem device or an image file.\n\n"
		"  -f, --force                 overwrite an existing famfs file system\n"
		"  -k, --kill                  with -f: invalidate the superblock instead\n"
		"  -l, --loglen SIZE           log length, a power of two >= 8M (default 8M)\n"
		"  -u, --system-uuid-file PATH host UUID file (default %s)\n"
		"  -q, --quiet                 print nothing but errors\n"
		"  -h, --help                  show this help\n"
		"  -V, --version               show the version\n",
		FAMFS_DEFAULT_SYSTEM_UUID_FILE);
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "kill", no_argument, NULL, 'k' },
		{ "loglen", required_argument, NULL, 'l' },
		{ "system-uuid-file", required_argument, NULL, 'u' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	int c;

	o->log_len = FAMFS_LOG_LEN_DEFAULT;
	while ((c = getopt_long(argc, argv, "fkl:u:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': o->force = true; break;
		case 'k': o->kill = true; break;
		case 'q': o->quiet = true; break;
		case 'u': o->uuid_file = optarg; break;
		case 'l':
			if (famfs_parse_size(optarg, &o->log_len) < 0 || !famfs_log_len_valid(o->log_len)) {
				tool_error("invalid log length \"%s\": it must be a power of two of at least 8M",
					   optarg);
				return -1;
			}
			break;
		case 'h': usage(stdout); exit(MKFS_OK);
		case 'V': printf("mkfs.famfs %s\n", PACKAGE_VERSION); exit(MKFS_OK);
		default: usage(stderr); return -1;
		}
	}
	if (optind != argc - 1) {
		tool_error("%s", optind >= argc ? "no device given" : "more than one device given");
		usage(stderr);
		return -1;
	}
	if (o->kill && !o->force) {
		tool_error("--kill destroys the file system and needs --force too");
		return -1;
	}
	o->device = argv[optind];
	return 0;
}

static int kill_superblock(struct famfs_device *dev, const struct options *o)
{
	struct famfs_superblock *sb = (void *)dev->base;

	sb->magic = 0;
	famfs_persist(dev, sb, sizeof(*sb));
	if (!o->quiet)
		printf("mkfs.famfs: invalidated the famfs superblock on %s\n", dev->path);
	return 0;
}

static void print_result(struct famfs_device *dev, const struct famfs_superblock *sb)
{
	_cleanup_(famfs_check_report_freep) struct famfs_check_report *r = NULL;
	char fs_uuid[37], sys_uuid[37], cap[32], freeb[32];

	uuid_unparse(sb->uuid, fs_uuid);
	uuid_unparse(sb->system_uuid, sys_uuid);
	printf("famfs file system created on %s (%s, %s)\n", dev->path,
	       famfs_device_kind_name(dev->kind), famfs_format_size(sb->dev_size, cap, sizeof(cap)));
	printf("  uuid:        %s\n", fs_uuid);
	printf("  master:      %s (this host)\n", sys_uuid);
	printf("  log:         %s, %" PRIu64 " entries\n",
	       famfs_format_size(sb->log_len, cap, sizeof(cap)), famfs_log_slots(sb->log_len));
	if (famfs_check_medium(dev->base, dev->size, 0, &r) == 0) {
		printf("  free space:  %s\n", famfs_format_size(r->summary.free, freeb, sizeof(freeb)));
		if (famfs_check_report_errors(r))
			printf("  warning: the new file system does not check clean\n");
	}
}

int main(int argc, char **argv)
{
	_cleanup_(famfs_device_closep) struct famfs_device *dev = NULL;
	struct options o = { 0 };
	struct famfs_err err = { 0 };
	struct famfs_superblock sb;
	uint8_t host_uuid[16];
	int r;

	if (parse_options(argc, argv, &o) < 0)
		return MKFS_USAGE;

	r = famfs_device_open(o.device, FAMFS_DEVICE_WRITE | FAMFS_DEVICE_EXCL, &dev, &err);
	if (r < 0) {
		tool_error("%s%s", err.msg, r == -EACCES || r == -EPERM ? " (is it read-only?)" : "");
		return MKFS_FAILED;
	}
	if (famfs_device_is_mounted(dev)) {
		tool_error("cannot format %s: it is mounted; unmount it first", o.device);
		return MKFS_FAILED;
	}

	/* --kill needs --force (parse_options): whatever the superblock holds goes. */
	if (o.kill)
		return kill_superblock(dev, &o) < 0 ? MKFS_FAILED : MKFS_OK;
	r = famfs_format_refuse(dev, o.log_len, o.force, &err);
	if (r < 0) {
		tool_error("%s", err.msg);
		return MKFS_FAILED;
	}

	r = famfs_system_uuid_get(o.uuid_file, true, host_uuid, &err);
	if (r < 0) {
		tool_error("%s", err.msg);
		return MKFS_FAILED;
	}

	/* The log first, the superblock last: a crash between leaves no valid superblock. */
	famfs_format_log(dev, o.log_len);
	famfs_format_superblock(dev, o.log_len, host_uuid, o.device);
	sb = *(const struct famfs_superblock *)dev->base;

	if (!o.quiet)
		print_result(dev, &sb);
	return MKFS_OK;
}
