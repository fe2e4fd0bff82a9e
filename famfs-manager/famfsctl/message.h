/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * famfsctl's messages: the tools' helper (tools/message.h) with the
 * famfsctl prefix, and the usage error every command reports the same way.
 */
#ifndef FAMFSCTL_MESSAGE_H
#define FAMFSCTL_MESSAGE_H

#define TOOL_NAME "famfsctl"
#include "tools/message.h"

#include "famfsctl.h"

/* Prints the message and evaluates to FAMFSCTL_USAGE. */
#define ctl_usage_error(...) (tool_error(__VA_ARGS__), FAMFSCTL_USAGE)

#endif
