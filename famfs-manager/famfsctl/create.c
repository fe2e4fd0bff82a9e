// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The commands that add to the namespace without copying data in: create
 * (one file, or a list as one CreateFiles batch; --fill writes the pattern
 * of fill.h) and mkdir.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "client.h"
#include "famfsctl.h"
#include "filelist.h"
#include "fill.h"
#include "message.h"
#include "units.h"

#define CREATE_USAGE                                                                                        \
	"usage: famfsctl create -s SIZE [-m MODE] [-u USER] [-g GROUP] [-N STRIPS [-B BUCKETS] [-C CHUNK]] " \
	"[--fill SEED] PATH\n"                                                                               \
	"       famfsctl create --from-list LIST [-m MODE] [-u USER] [-g GROUP] [--fill SEED]"

struct create_args {
	struct interleave il;
	struct owner owner;
	uint64_t size, seed;
	uint32_t mode;
	bool have_size, have_interleave, fill;
	const char *list;
};

static int parse_create_args(int argc, char **argv, struct create_args *a)
{
	enum { OPT_FILL = 0x100, OPT_FROM_LIST };
	static const struct option opts[] = {
		{ "fill", required_argument, NULL, OPT_FILL },
		{ "from-list", required_argument, NULL, OPT_FROM_LIST },
		{ 0 },
	};
	int c;

	*a = (struct create_args){ .mode = 0644 };
	optind = 1;
	while ((c = getopt_long(argc, argv, "s:m:N:B:C:u:g:", opts, NULL)) != -1) {
		switch (c) {
		case 'N':
		case 'B':
		case 'C':
			if (parse_interleave(c, optarg, &a->il) < 0)
				return FAMFSCTL_USAGE;
			a->have_interleave = true;
			break;
		case 's':
			if (famfs_parse_size(optarg, &a->size) < 0)
				return ctl_usage_error("invalid size \"%s\" (examples: 4096, 2M, 1G)", optarg);
			a->have_size = true;
			break;
		case 'm':
			if (parse_mode(optarg, &a->mode) < 0)
				return FAMFSCTL_USAGE;
			break;
		case 'u':
			if (parse_owner_uid(optarg, &a->owner) < 0)
				return FAMFSCTL_USAGE;
			break;
		case 'g':
			if (parse_owner_gid(optarg, &a->owner) < 0)
				return FAMFSCTL_USAGE;
			break;
		case OPT_FILL:
			if (parse_seed_arg(optarg, &a->seed) < 0)
				return FAMFSCTL_USAGE;
			a->fill = true;
			break;
		case OPT_FROM_LIST:
			a->list = optarg;
			break;
		default:
			return FAMFSCTL_USAGE;
		}
	}
	if (a->list) {
		if (a->have_size || a->have_interleave || optind != argc)
			return ctl_usage_error("create --from-list takes the paths and sizes from the list: no -s, -N, -B, -C or PATH\n%s",
					       CREATE_USAGE);
	} else if (!a->have_size || optind != argc - 1) {
		return ctl_usage_error(CREATE_USAGE);
	}
	return 0;
}

/* The element a CreateFiles error names ("element 3 (/x): ..."), or -1. */
static long element_of(const char *message)
{
	unsigned long k;
	char *end;

	if (!message || strncmp(message, "element ", 8) != 0)
		return -1;
	errno = 0;
	k = strtoul(message + 8, &end, 10);
	if (errno || end == message + 8 || *end != ' ')
		return -1;
	return (long)k;
}

static int read_list(const char *name, uint32_t mode, struct file_list *ret)
{
	_cleanup_fclose_ FILE *own = NULL;
	struct famfs_err err = { 0 };
	FILE *f = stdin;
	int r;

	if (strcmp(name, "-") != 0) {
		own = fopen(name, "re");
		if (!own)
			return tool_error_errno(-errno, "cannot read the list %s: %m", name);
		f = own;
	}
	r = file_list_parse(f, strcmp(name, "-") ? name : "(standard input)", mode, ret, &err);
	if (r < 0) {
		tool_error("%s", err.msg);
		return r == -EINVAL ? FAMFSCTL_USAGE : r;
	}
	if (ret->n == 0) {
		file_list_clear(ret);
		return tool_error_errno(-EINVAL, "cannot create the files of %s: it names no file", name);
	}
	return 0;
}

static int create_from_list(const struct create_args *a)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_(file_list_clear) struct file_list l = { 0 };
	_cleanup_free_ struct batch_file *files = NULL;
	uint32_t created = 0;
	long k;
	int r;

	r = read_list(a->list, a->mode, &l);
	if (r != 0)
		return r;
	files = calloc(l.n, sizeof(*files));
	if (!files)
		return tool_error_errno(-ENOMEM, "cannot create the files of %s: %m", a->list);
	for (size_t i = 0; i < l.n; i++)
		files[i] = (struct batch_file){ l.v[i].path, l.v[i].size, l.v[i].mode };
	r = client_create_files(files, l.n, &a->owner, &created, &e);
	if (r < 0 && sd_bus_error_is_set(&e) && (k = element_of(e.message)) >= 0 && (size_t)k < l.n) {
		tool_error("cannot create the files of %s: line %u: %s [%s]; no file was created", a->list,
			   file_list_line_of(&l, (size_t)k), e.message, e.name);
		return r;
	}
	if (r < 0)
		return client_error("create the files of", a->list, &e, r);
	if (created != l.n)
		return tool_error_errno(-EPROTO, "cannot create the files of %s: the daemon created %u of %zu",
					a->list, created, l.n);
	for (size_t i = 0; a->fill && i < l.n; i++) {
		r = fill_file(l.v[i].path, l.v[i].size, a->seed);
		if (r < 0)
			return tool_error_errno(r, "the files of %s were created, but %s (line %u) and the files after it were not filled",
						a->list, l.v[i].path, l.v[i].line);
	}
	return FAMFSCTL_OK;
}

int cmd_create(int argc, char **argv)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	struct create_args a;
	const char *path;
	int r;

	r = parse_create_args(argc, argv, &a);
	if (r != 0)
		return r;
	if (a.list)
		return create_from_list(&a);
	path = argv[optind];
	r = client_create_file(path, a.size, a.mode, &a.il, &a.owner, &e);
	if (r < 0)
		return client_error("create", path, &e, r);
	if (a.fill) {
		r = fill_file(path, a.size, a.seed);
		if (r < 0)
			return tool_error_errno(r, "%s was created but not filled", path);
	}
	return FAMFSCTL_OK;
}

int cmd_mkdir(int argc, char **argv)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	struct owner owner = { 0 };
	bool parents = false;
	uint32_t mode = 0755;
	int c, r;

	optind = 1;
	while ((c = getopt(argc, argv, "pm:u:g:")) != -1) {
		if (c == 'p')
			parents = true;
		else if (c == 'm') {
			if (parse_mode(optarg, &mode) < 0)
				return FAMFSCTL_USAGE;
		} else if (c == 'u') {
			if (parse_owner_uid(optarg, &owner) < 0)
				return FAMFSCTL_USAGE;
		} else if (c == 'g') {
			if (parse_owner_gid(optarg, &owner) < 0)
				return FAMFSCTL_USAGE;
		} else
			return FAMFSCTL_USAGE;
	}
	if (optind != argc - 1)
		return ctl_usage_error("usage: famfsctl mkdir [-p] [-m MODE] [-u USER] [-g GROUP] PATH");
	r = client_mkdir(argv[optind], mode, parents, &owner, &e);
	if (r < 0)
		return client_error("create directory", argv[optind], &e, r);
	return FAMFSCTL_OK;
}
