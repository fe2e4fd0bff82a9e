// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * famfs_id: a udev probe, like udev's own *_id helpers.  Reads the famfs
 * superblock of a device and prints udev properties; prints nothing and
 * exits 0 for a device without famfs.  Never writes to the device.
 *
 *   famfs_id [--system-uuid-file FILE] DEVICE
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <uuid/uuid.h>

#include "config.h"
#include "device.h"
#include "log.h"
#include "superblock.h"
#include "sysuuid.h"

static void usage(FILE *out)
{
	fprintf(out, "Usage: famfs_id [--system-uuid-file FILE] DEVICE\n"
		"Print udev properties for the famfs file system on DEVICE.\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "system-uuid-file", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *uuid_file = NULL, *state = "valid", *error = NULL;
	const struct famfs_superblock *sb;
	const struct famfs_log_header *log;
	struct famfs_device *dev = NULL;
	struct famfs_err err = { 0 };
	enum famfs_finding_code code;
	uint8_t host[16];
	char uuid[37];
	int c;

	while ((c = getopt_long(argc, argv, "u:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'u': uuid_file = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	if (famfs_device_open(argv[optind], 0, &dev, &err) < 0) {
		fprintf(stderr, "famfs_id: %s\n", err.msg);
		return 1;
	}
	sb = (const void *)dev->base;
	if (dev->size < sizeof(*sb) || sb->magic != FAMFS_SUPER_MAGIC) {
		famfs_device_close(dev);
		return 0;   /* not famfs: say nothing */
	}

	code = famfs_superblock_validate(sb, dev->size, NULL);
	if (code != FAMFS_OK) {
		state = "invalid";
		error = famfs_finding_name(code);
	} else {
		log = (const void *)(dev->base + FAMFS_LOG_OFFSET);
		code = famfs_log_header_validate(log, sb->log_len, NULL);
		if (code != FAMFS_OK && code != FAMFS_F_LOG_NEXT_INDEX && code != FAMFS_F_LOG_NEXT_SEQNUM) {
			state = "invalid";
			error = famfs_finding_name(code);
		}
	}

	printf("ID_FS_TYPE=famfs\n");
	printf("ID_FS_USAGE=filesystem\n");
	/* The identity is printed whenever the superblock's CRC vouches for it. */
	if (sb->crc == famfs_superblock_crc(sb)) {
		uuid_unparse(sb->uuid, uuid);
		printf("ID_FS_UUID=%s\nID_FS_UUID_ENC=%s\n", uuid, uuid);
		printf("ID_FS_VERSION=%" PRIu64 "\n", sb->version);
		printf("FAMFS_OMF_VERSION=%u.%u\n", sb->omf_major, sb->omf_minor);
		printf("FAMFS_LOG_LEN=%" PRIu64 "\n", sb->log_len);
		uuid_unparse(sb->system_uuid, uuid);
		printf("FAMFS_MASTER_UUID=%s\n", uuid);
		if (famfs_system_uuid_get(uuid_file, false, host, NULL) == 0)
			printf("FAMFS_ROLE=%s\n", memcmp(host, sb->system_uuid, 16) == 0 ? "master" : "client");
		else
			printf("FAMFS_ROLE=client\n");
	}
	printf("FAMFS_STATE=%s\n", state);
	if (error)
		printf("FAMFS_ERROR=%s\n", error);
	famfs_device_close(dev);
	return 0;
}
