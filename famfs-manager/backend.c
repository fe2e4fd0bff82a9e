// SPDX-License-Identifier: LGPL-2.1-or-later
/* The backend a configuration names. */
#include <errno.h>
#include <string.h>

#include "backend.h"

const char *backend_choice_name(enum backend_choice c)
{
	switch (c) {
	case BACKEND_KERNEL:
		return "kernel";
	case BACKEND_VIEW:
		return "view";
	default:
		return "auto";
	}
}

int backend_choice_parse(const char *s, enum backend_choice *ret)
{
	if (!strcmp(s, "auto"))
		*ret = BACKEND_AUTO;
	else if (!strcmp(s, "kernel"))
		*ret = BACKEND_KERNEL;
	else if (!strcmp(s, "view"))
		*ret = BACKEND_VIEW;
	else
		return -EINVAL;
	return 0;
}
