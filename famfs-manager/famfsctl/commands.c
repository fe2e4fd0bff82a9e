// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * famfsctl's commands: each parses its arguments, makes its calls through
 * the client and hands the result to the output or the data path.  create
 * and mkdir are in create.c, cp in copy.c, verify in verify.c, flush in
 * flush.c.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "data.h"
#include "famfsctl.h"
#include "message.h"
#include "output.h"
#include "units.h"

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
