// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * famfsctl's commands: each parses its arguments, makes its calls through
 * the client and hands the result to the output or the data path.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client.h"
#include "data.h"
#include "famfsctl.h"
#include "message.h"
#include "output.h"
#include "units.h"

static int parse_mode(const char *s, uint32_t *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 8);
	if (errno || end == s || *end || v > 07777) {
		tool_error("invalid mode \"%s\": expected octal permission bits like 0644", s);
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

/* -N STRIPS, -B BUCKETS, -C CHUNK of create and cp. */
static int parse_interleave(int c, const char *v, struct interleave *il)
{
	uint64_t x;

	if (c == 'C') {
		if (famfs_parse_size(v, &x) < 0 || x == 0) {
			tool_error("invalid chunk size \"%s\"", v);
			return -EINVAL;
		}
		il->chunk = x;
		return 0;
	}
	if (famfs_parse_size(v, &x) < 0 || x == 0 || x > 64) {
		tool_error("invalid -%c \"%s\": expected 1 to 64", c, v);
		return -EINVAL;
	}
	if (c == 'N')
		il->nstrips = (uint32_t)x;
	else
		il->nbuckets = (uint32_t)x;
	return 0;
}

int cmd_status(int argc, char **argv)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_(fsinfo_list_clear) struct fsinfo_list l = { 0 };
	int r;

	if (argc > 1)
		return ctl_usage_error("status takes no arguments");
	r = client_list_fs(&l, &e);
	if (r < 0)
		return client_error("get the status", NULL, &e, r);
	if (arg_json)
		json_print_status(&l);
	else
		text_status(&l);
	return FAMFSCTL_OK;
}

int cmd_ls(int argc, char **argv)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_(listing_clear) struct listing l = { 0 };
	bool long_format = false;
	int c, r;

	optind = 1;
	while ((c = getopt(argc, argv, "l")) != -1) {
		if (c == 'l')
			long_format = true;
		else
			return FAMFSCTL_USAGE;
	}
	if (optind != argc - 1)
		return ctl_usage_error("usage: famfsctl ls [-l] PATH");
	r = client_list_files(argv[optind], &l, &e);
	if (r < 0)
		return client_error("list", argv[optind], &e, r);
	if (arg_json)
		json_print_listing(&l);
	else
		text_listing(&l, long_format);
	return FAMFSCTL_OK;
}

static int create_file(const char *path, uint64_t size, uint32_t mode, const struct interleave *il)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	int r;

	r = client_create_file(path, size, mode, il, &e);
	if (r < 0)
		return client_error("create", path, &e, r);
	return 0;
}

int cmd_create(int argc, char **argv)
{
	struct interleave il = { 0 };
	uint64_t size = 0;
	uint32_t mode = 0644;
	bool have_size = false;
	int c;

	optind = 1;
	while ((c = getopt(argc, argv, "s:m:N:B:C:")) != -1) {
		switch (c) {
		case 'N':
		case 'B':
		case 'C':
			if (parse_interleave(c, optarg, &il) < 0)
				return FAMFSCTL_USAGE;
			break;
		case 's':
			if (famfs_parse_size(optarg, &size) < 0)
				return ctl_usage_error("invalid size \"%s\" (examples: 4096, 2M, 1G)", optarg);
			have_size = true;
			break;
		case 'm':
			if (parse_mode(optarg, &mode) < 0)
				return FAMFSCTL_USAGE;
			break;
		default:
			return FAMFSCTL_USAGE;
		}
	}
	if (!have_size || optind != argc - 1)
		return ctl_usage_error("usage: famfsctl create -s SIZE [-m MODE] [-N STRIPS [-B BUCKETS] [-C CHUNK]] PATH");
	return create_file(argv[optind], size, mode, &il);
}

int cmd_mkdir(int argc, char **argv)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	bool parents = false;
	uint32_t mode = 0755;
	int c, r;

	optind = 1;
	while ((c = getopt(argc, argv, "pm:")) != -1) {
		if (c == 'p')
			parents = true;
		else if (c == 'm') {
			if (parse_mode(optarg, &mode) < 0)
				return FAMFSCTL_USAGE;
		} else
			return FAMFSCTL_USAGE;
	}
	if (optind != argc - 1)
		return ctl_usage_error("usage: famfsctl mkdir [-p] [-m MODE] PATH");
	r = client_mkdir(argv[optind], mode, parents, &e);
	if (r < 0)
		return client_error("create directory", argv[optind], &e, r);
	return FAMFSCTL_OK;
}

int cmd_cp(int argc, char **argv)
{
	_cleanup_free_ char *target = NULL;
	_cleanup_close_ int fd = -1;
	struct interleave il = { 0 };
	const char *src, *dst;
	uint32_t mode = 0;
	bool have_mode = false;
	struct stat st;
	int c, r;

	optind = 1;
	while ((c = getopt(argc, argv, "m:N:B:C:")) != -1) {
		if (c == 'm') {
			if (parse_mode(optarg, &mode) < 0)
				return FAMFSCTL_USAGE;
			have_mode = true;
		} else if (c == 'N' || c == 'B' || c == 'C') {
			if (parse_interleave(c, optarg, &il) < 0)
				return FAMFSCTL_USAGE;
		} else
			return FAMFSCTL_USAGE;
	}
	if (optind != argc - 2)
		return ctl_usage_error("usage: famfsctl cp [-m MODE] [-N STRIPS [-B BUCKETS] [-C CHUNK]] LOCAL_FILE FAMFS_PATH");
	src = argv[optind];
	dst = argv[optind + 1];
	fd = open(src, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return tool_error_errno(-errno, "cannot open %s: %m", src);
	if (!S_ISREG(st.st_mode))
		return tool_error_errno(-EINVAL, "cannot copy %s: not a regular file", src);
	if (st.st_size == 0)
		return tool_error_errno(-EINVAL, "cannot copy %s: it is empty, and famfs files are preallocated and cannot be empty",
					src);
	/* A destination ending in / gets the local file's name. */
	if (dst[0] && dst[strlen(dst) - 1] == '/') {
		const char *base = strrchr(src, '/');

		if (asprintf(&target, "%s%s", dst, base ? base + 1 : src) < 0)
			return tool_error_errno(-ENOMEM, "cannot copy %s: %m", src);
		dst = target;
	}
	if (!have_mode)
		mode = st.st_mode & 0777;
	r = create_file(dst, (uint64_t)st.st_size, mode, &il);
	if (r < 0)
		return r;
	return data_copy_in(fd, src, dst, (uint64_t)st.st_size);
}

int cmd_cat(int argc, char **argv)
{
	if (argc < 2)
		return ctl_usage_error("usage: famfsctl cat PATH...");
	return data_cat(argv + 1, argc - 1);
}

int cmd_map(int argc, char **argv)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	struct file_layout l;
	int r;

	if (argc != 2)
		return ctl_usage_error("usage: famfsctl map PATH");
	r = client_get_layout(argv[1], &l, &e);
	if (r < 0)
		return client_error("get the map of", argv[1], &e, r);
	if (arg_json)
		json_print_layout(argv[1], &l);
	else
		text_layout(argv[1], &l);
	return FAMFSCTL_OK;
}

int cmd_metrics(int argc, char **argv)
{
	static const struct option opts[] = { { "textfile", required_argument, NULL, 't' }, { 0 } };
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_(fsinfo_list_clear) struct fsinfo_list l = { 0 };
	const char *dir = NULL;
	uint64_t faults[3];
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "t:", opts, NULL)) != -1) {
		if (c == 't')
			dir = optarg;
		else
			return FAMFSCTL_USAGE;
	}
	if (optind != argc)
		return ctl_usage_error("usage: famfsctl metrics [--textfile DIR]");
	r = client_list_fs(&l, &e);
	if (r >= 0)
		r = client_get_faults(faults, &e);
	if (r < 0)
		return client_error("read the metrics", NULL, &e, r);
	if (!dir) {
		metrics_write(stdout, &l, faults);
		return FAMFSCTL_OK;
	}
	return metrics_write_textfile(dir, &l, faults);
}
