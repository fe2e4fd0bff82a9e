// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * famfsctl's administration verbs: attach (mount), detach (umount),
 * format, repair and check.  Format, repair and check run as jobs in the
 * daemon; the verb waits for the job (a progress line on a terminal)
 * unless --no-wait, and exits with the job's outcome.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admin-output.h"
#include "client-admin.h"
#include "famfsctl.h"
#include "message.h"
#include "output.h"
#include "units.h"

/* The file system @target names: its mount point, its device or its object. */
static int find_fs(const char *target, struct fsinfo_list *l, const struct fsinfo **ret)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	int r;

	r = client_list_fs(l, &e);
	if (r < 0)
		return client_error("list file systems", NULL, &e, r);
	for (size_t i = 0; i < l->n; i++) {
		const struct fsinfo *f = &l->v[i];

		if ((f->mountpoint[0] && !strcmp(f->mountpoint, target)) || !strcmp(f->device, target) ||
		    !strcmp(f->object, target)) {
			*ret = f;
			return 0;
		}
	}
	tool_error("%s is not an attached famfs file system (its mount point, device or object)", target);
	return -ENODEV;
}

struct progress_line {
	const char *what, *target;
	bool shown;
};

static void show_progress(double fraction, void *userdata)
{
	struct progress_line *p = userdata;

	fprintf(stderr, "\r%s %s: %3.0f%%", p->what, p->target, fraction * 100);
	fflush(stderr);
	p->shown = true;
}

/*
 * Waits for @job and prints how it ended; returns 0 when it succeeded,
 * -EIO (reported) when it did not.
 */
static int wait_job(const char *job, const char *what, const char *target, struct job_state *ret)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	struct progress_line p = { what, target, false };
	int r;

	r = client_job_wait(job, !arg_json && isatty(STDERR_FILENO) ? show_progress : NULL, &p, ret, &e);
	if (p.shown)
		fprintf(stderr, "\r\033[K");
	if (r < 0)
		return client_error("follow the job", job, &e, r);
	if (!ret->success && !arg_json)
		tool_error("%s %s failed: %s [%s]", what, target, ret->message, ret->error_name);
	return ret->success ? 0 : -EIO;
}

int cmd_attach(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mount-point", required_argument, NULL, 'm' },
		{ "backend", required_argument, NULL, 'b' },
		{ "read-only", no_argument, NULL, 'r' },
		{ 0 }
	};
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_(fsinfo_list_clear) struct fsinfo_list l = { 0 };
	_cleanup_free_ char *object = NULL;
	struct attach_request req = { 0 };
	const struct fsinfo *f;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "m:b:r", opts, NULL)) != -1) {
		switch (c) {
		case 'm': req.mount_point = optarg; break;
		case 'b': req.backend = optarg; break;
		case 'r': req.read_only = true; break;
		default: return FAMFSCTL_USAGE;
		}
	}
	if (optind != argc - 1)
		return ctl_usage_error("usage: famfsctl %s [--mount-point DIR] [--backend auto|kernel|view] [--read-only] DEVICE",
				       argv[0]);
	r = client_attach(argv[optind], &req, &object, &e);
	if (r < 0)
		return client_error("attach", argv[optind], &e, r);
	r = find_fs(object, &l, &f);
	if (r < 0)
		return r;
	admin_print_attached(argv[optind], f, arg_json);
	return FAMFSCTL_OK;
}

int cmd_detach(int argc, char **argv)
{
	static const struct option opts[] = { { "force", no_argument, NULL, 'f' }, { 0 } };
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_(fsinfo_list_clear) struct fsinfo_list l = { 0 };
	const struct fsinfo *f;
	bool force = false;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f", opts, NULL)) != -1) {
		if (c == 'f')
			force = true;
		else
			return FAMFSCTL_USAGE;
	}
	if (optind != argc - 1)
		return ctl_usage_error("usage: famfsctl %s [--force] MOUNTPOINT|DEVICE", argv[0]);
	r = find_fs(argv[optind], &l, &f);
	if (r < 0)
		return r;
	r = client_detach(f->object, force, &e);
	if (r < 0)
		return client_error("detach", argv[optind], &e, r);
	admin_print_detached(argv[optind], f->object, arg_json);
	return FAMFSCTL_OK;
}

/* Waits for (or with @no_wait, just names) a job @what started on @target. */
static int finish_job(const char *job, const char *what, const char *target, bool no_wait)
{
	_cleanup_(job_state_clear) struct job_state s = { 0 };
	int r;

	if (no_wait) {
		admin_print_started(job, what, target, arg_json);
		return FAMFSCTL_OK;
	}
	r = wait_job(job, what, target, &s);
	if (r < 0 && !arg_json)
		return r;
	admin_print_job(job, target, &s, arg_json);
	return r < 0 ? FAMFSCTL_FAILED : FAMFSCTL_OK;
}

int cmd_format(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "log-len", required_argument, NULL, 'l' },
		{ "no-wait", no_argument, NULL, 'W' },
		{ 0 }
	};
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_free_ char *job = NULL;
	bool force = false, no_wait = false;
	uint64_t log_len = 0;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "fl:", opts, NULL)) != -1) {
		switch (c) {
		case 'f': force = true; break;
		case 'W': no_wait = true; break;
		case 'l':
			if (famfs_parse_size(optarg, &log_len) < 0 || log_len == 0)
				return ctl_usage_error("invalid log length \"%s\"", optarg);
			break;
		default: return FAMFSCTL_USAGE;
		}
	}
	if (optind != argc - 1)
		return ctl_usage_error("usage: famfsctl format [--force] [--log-len SIZE] [--no-wait] DEVICE");
	r = client_format(argv[optind], force, log_len, &job, &e);
	if (r < 0)
		return client_error("format", argv[optind], &e, r);
	return finish_job(job, "format", argv[optind], no_wait);
}

int cmd_repair(int argc, char **argv)
{
	static const struct option opts[] = { { "no-wait", no_argument, NULL, 'W' }, { 0 } };
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_(fsinfo_list_clear) struct fsinfo_list l = { 0 };
	_cleanup_free_ char *job = NULL;
	const struct fsinfo *f;
	bool no_wait = false;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'W')
			no_wait = true;
		else
			return FAMFSCTL_USAGE;
	}
	if (optind != argc - 1)
		return ctl_usage_error("usage: famfsctl repair [--no-wait] MOUNTPOINT|DEVICE");
	r = find_fs(argv[optind], &l, &f);
	if (r < 0)
		return r;
	r = client_repair(f->object, &job, &e);
	if (r < 0)
		return client_error("repair", argv[optind], &e, r);
	return finish_job(job, "repair", argv[optind], no_wait);
}

/* One file system: prints its verdict and findings (or adds them to @json); *@clean goes false on damage. */
static int check_one(const char *mountpoint, bool no_wait, struct json_object *json, bool *clean)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_(check_result_clear) struct check_result c = { 0 };
	_cleanup_(job_state_clear) struct job_state s = { 0 };
	_cleanup_free_ char *job = NULL;
	int r;

	r = client_start_check(mountpoint, &job, &e);
	if (r < 0)
		return client_error("check", mountpoint, &e, r);
	if (no_wait) {
		/* one line (or object) per job, not the findings list */
		if (!json)
			printf("check %s: started %s\n", mountpoint, job);
		else
			json_check_list_add_job(json, mountpoint, job);
		return 0;
	}
	r = wait_job(job, "check", mountpoint, &s);
	if (r < 0) {
		if (arg_json)
			tool_error("check %s failed: %s [%s]", mountpoint, s.message, s.error_name);
		return r;
	}
	r = client_job_result(job, &c, &e);
	if (r < 0)
		return client_error("read the check of", mountpoint, &e, r);
	if (strcmp(c.verdict, "clean") != 0)
		*clean = false;
	if (json)
		json_check_list_add(json, mountpoint, &c);
	else
		text_check(mountpoint, &c);
	return 0;
}

int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = { { "no-wait", no_argument, NULL, 'W' }, { 0 } };
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_(fsinfo_list_clear) struct fsinfo_list l = { 0 };
	struct json_object *json = NULL;
	bool clean = true, no_wait = false;
	int c, r, failed = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'W')
			no_wait = true;
		else
			return FAMFSCTL_USAGE;
	}
	if (optind == argc) {
		r = client_list_fs(&l, &e);
		if (r < 0)
			return client_error("list file systems", NULL, &e, r);
	}
	if (arg_json)
		json = json_check_list_new();
	if (optind < argc) {
		for (int a = optind; a < argc; a++) {
			r = check_one(argv[a], no_wait, json, &clean);
			if (r < 0)
				failed = r;
		}
	} else {
		for (size_t i = 0; i < l.n; i++) {
			r = check_one(l.v[i].mountpoint, no_wait, json, &clean);
			if (r < 0)
				failed = r;
		}
	}
	json_print(json);
	/* As fsck(8): an operational error outranks damage found. */
	if (failed < 0)
		return failed;
	return clean ? FAMFSCTL_OK : FAMFSCTL_DAMAGED;
}
