// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * verify --seed SEED FILE...: does each file hold the fill pattern of
 * create --fill (pattern.h)?  Names the first byte that differs.
 */
#include <getopt.h>
#include <stdio.h>

#include "args.h"
#include "famfsctl.h"
#include "fill.h"
#include "message.h"
#include "output.h"

int cmd_verify(int argc, char **argv)
{
	static const struct option opts[] = { { "seed", required_argument, NULL, 'S' }, { 0 } };
	struct json_object *json = NULL;
	bool have_seed = false, all_ok = true;
	uint64_t seed = 0;
	int c, r, failed = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "S:", opts, NULL)) != -1) {
		if (c != 'S')
			return FAMFSCTL_USAGE;
		if (parse_seed_arg(optarg, &seed) < 0)
			return FAMFSCTL_USAGE;
		have_seed = true;
	}
	if (!have_seed || optind >= argc)
		return ctl_usage_error("usage: famfsctl verify --seed SEED PATH...");
	if (arg_json)
		json = json_list_new();
	for (int a = optind; a < argc; a++) {
		struct verify_result v;

		r = verify_file(argv[a], seed, &v);
		if (r < 0) {
			failed = r;
			continue;
		}
		all_ok &= v.ok;
		if (json)
			json_verify_list_add(json, argv[a], seed, &v);
		else
			text_verify(argv[a], seed, &v);
	}
	json_print(json);
	/* as check: an operational error outranks a mismatch */
	if (failed < 0)
		return failed;
	return all_ok ? FAMFSCTL_OK : FAMFSCTL_DAMAGED;
}
