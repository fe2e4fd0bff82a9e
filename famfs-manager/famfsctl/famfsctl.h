/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * famfsctl's commands and its exit status.  main.c parses the global
 * options and dispatches to a cmd_<name>() (commands.c); those stay thin on
 * top of the bus client (client.h), the data path (data.h) and the output
 * (output.h).
 */
#ifndef FAMFSCTL_H
#define FAMFSCTL_H

#include <stdbool.h>

/*
 * The exit status, documented in famfsctl(8) and --help.  The values are
 * fsck(8)'s, as fsck.famfs uses them: check keeps fsck's meaning (0 clean,
 * 4 damage found), every other command succeeds (0) or fails (8).
 */
enum famfsctl_exit {
	FAMFSCTL_OK = 0,
	FAMFSCTL_DAMAGED = 4,      /* check: damage found and left uncorrected; verify: a file differs */
	FAMFSCTL_FAILED = 8,       /* operational error: refused, a call or I/O failed */
	FAMFSCTL_USAGE = 16,       /* usage error */
};

/* --json: JSON output for status, ls, map, check, verify and flush. */
extern bool arg_json;

/*
 * Each returns an exit status (enum famfsctl_exit), or a negative errno
 * for an operational error it has already reported.
 */
int cmd_status(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_create(int argc, char **argv);
int cmd_mkdir(int argc, char **argv);
int cmd_cp(int argc, char **argv);
int cmd_cat(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_flush(int argc, char **argv);
int cmd_map(int argc, char **argv);
/* admin.c: the verbs that drive Attach, Detach, Format, Repair and Check */
int cmd_attach(int argc, char **argv);
int cmd_detach(int argc, char **argv);
int cmd_format(int argc, char **argv);
int cmd_repair(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_metrics(int argc, char **argv);

#endif
