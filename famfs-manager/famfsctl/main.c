// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * famfsctl: the command-line client of famfs-manager.  Everything goes over
 * the bus; file data goes through the descriptor OpenFile hands over, so
 * this program never opens a famfs device itself.  Callers other than root
 * write by handing the daemon a sealed memfd (WriteFile).
 *
 * This file: the global options, the usage text and the dispatch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "config.h"
#include "escape.h"
#include "famfsctl.h"
#include "message.h"

bool arg_json;
static bool arg_ask_password = true;

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "status", cmd_status },
	{ "ls", cmd_ls },
	{ "create", cmd_create },
	{ "mkdir", cmd_mkdir },
	{ "cp", cmd_cp },
	{ "cat", cmd_cat },
	{ "verify", cmd_verify },
	{ "flush", cmd_flush },
	{ "map", cmd_map },
	{ "check", cmd_check },
	{ "attach", cmd_attach },
	{ "mount", cmd_attach },
	{ "detach", cmd_detach },
	{ "umount", cmd_detach },
	{ "format", cmd_format },
	{ "repair", cmd_repair },
	{ "metrics", cmd_metrics },
};

static void usage(FILE *o)
{
	fprintf(o,
		"Usage: famfsctl [--json] [--no-ask-password] COMMAND [ARGS]\n\n"
		"Commands:\n"
		"  status                       attached file systems, health, usage\n"
		"  ls [-l] PATH                 list a directory\n"
		"  create -s SIZE [-m MODE] PATH  create a (preallocated) file\n"
		"      -N STRIPS -B BUCKETS -C CHUNK  (create, cp) interleave it\n"
		"      -u USER -g GROUP         (create, mkdir) owner and group\n"
		"      --fill SEED              write the seed's pattern into it\n"
		"  create --from-list LIST      create the files LIST names, all or none\n"
		"  mkdir [-p] [-m MODE] PATH    create a directory\n"
		"  cp [-r] [-m MODE] LOCAL PATH create PATH and copy LOCAL into it\n"
		"  cp [-r] LOCAL... DIRECTORY   copy files (trees with -r) into DIRECTORY\n"
		"  cat PATH...                  write file contents to stdout\n"
		"  verify --seed SEED PATH...   check files hold the seed's pattern (exit 4 if not)\n"
		"  flush PATH...                write the files' cache lines back to memory\n"
		"  map PATH                     show a file's extents\n"
		"  check [--no-wait] [MOUNTPOINT...]  run the checker as a job (exit 0 clean, 4 damaged)\n"
		"  attach|mount [--mount-point DIR] [--backend B] [--read-only] DEVICE\n"
		"                               attach (and mount) a famfs device\n"
		"  detach|umount [--force] MOUNTPOINT|DEVICE  unmount and detach it\n"
		"  format [--force] [--log-len SIZE] [--no-wait] DEVICE  make a famfs file system\n"
		"  repair [--no-wait] MOUNTPOINT|DEVICE  cut a torn log tail back (the master only)\n"
		"  metrics [--textfile DIR]     Prometheus text format\n\n"
		"Options:\n"
		"  -j, --json                   JSON output (status, ls, map, check, verify, flush,\n"
		"                               attach, detach, format, repair)\n"
		"      --no-ask-password        do not let polkit ask for a password\n"
		"  -h, --help                   this help\n"
		"      --version                the version\n"
		"The daemon is found on the system bus (DBUS_SYSTEM_BUS_ADDRESS overrides it).\n\n"
		"Exit status: 0 success (check: clean), 4 check found damage or verify a mismatch,\n"
		"8 operational error, 16 usage error.\n");
}

static bool is_json_option(const char *a)
{
	return !strcmp(a, "--json") || !strcmp(a, "-j");
}

/*
 * The options before the command.  Returns 1 with *ret_command set to go
 * on, 0 when done (--help, --version), -EINVAL for a usage error.
 */
static int parse_global_options(int argc, char **argv, int *ret_command)
{
	int a;

	for (a = 1; a < argc && argv[a][0] == '-'; a++) {
		if (is_json_option(argv[a])) {
			arg_json = true;
		} else if (!strcmp(argv[a], "--no-ask-password")) {
			arg_ask_password = false;
		} else if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[a], "--version")) {
			printf("famfsctl %s\n", PACKAGE_VERSION);
			return 0;
		} else {
			tool_error("unknown option %s", argv[a]);
			usage(stderr);
			return -EINVAL;
		}
	}
	if (a >= argc) {
		usage(stderr);
		return -EINVAL;
	}
	*ret_command = a;
	return 1;
}

int main(int argc, char **argv)
{
	int a, r;

	r = parse_global_options(argc, argv, &a);
	if (r <= 0)
		return r < 0 ? FAMFSCTL_USAGE : FAMFSCTL_OK;
	/* --json may also follow the command */
	for (int k = a + 1; k < argc; k++) {
		if (is_json_option(argv[k])) {
			arg_json = true;
			memmove(&argv[k], &argv[k + 1], (argc - k) * sizeof(*argv));
			argc--;
			k--;
		}
	}
	/*
	 * Paths are names as ls prints them, escaped (escape.h), and go to the
	 * daemon as they are; an argument that is not UTF-8 can only be raw
	 * bytes (say, pasted from a kernel mount) and is escaped here.  cp's
	 * local file is opened, never sent: cp is left alone.
	 */
	for (int k = a + 1; k < argc && strcmp(argv[a], "cp") != 0; k++) {
		if (!famfs_is_utf8(argv[k])) {
			argv[k] = famfs_escape_dup(argv[k]);
			if (!argv[k]) {
				tool_error("out of memory");
				return FAMFSCTL_FAILED;
			}
		}
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(commands[i].name, argv[a]) == 0) {
			if (client_connect(arg_ask_password) < 0)
				return FAMFSCTL_FAILED;
			r = commands[i].run(argc - a, argv + a);
			client_disconnect();
			return r < 0 ? FAMFSCTL_FAILED : r;
		}
	}
	tool_error("unknown command \"%s\"", argv[a]);
	usage(stderr);
	return FAMFSCTL_USAGE;
}
