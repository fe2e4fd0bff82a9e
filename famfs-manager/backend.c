// SPDX-License-Identifier: LGPL-2.1-or-later
/* The backend a configuration names. */
#include <errno.h>
#include <string.h>

#include "backend.h"

/* One table for both directions, so a name cannot be parsed but not printed. */
static const char *const backend_choice_names[] = {
	[BACKEND_AUTO] = "auto",
	[BACKEND_KERNEL] = "kernel",
	[BACKEND_VIEW] = "view",
};

#define N_BACKEND_CHOICES (sizeof(backend_choice_names) / sizeof(backend_choice_names[0]))

const char *backend_choice_name(enum backend_choice c)
{
	return (unsigned)c < N_BACKEND_CHOICES ? backend_choice_names[c] : "auto";
}

int backend_choice_parse(const char *s, enum backend_choice *ret)
{
	for (unsigned i = 0; i < N_BACKEND_CHOICES; i++) {
		if (!strcmp(s, backend_choice_names[i])) {
			*ret = (enum backend_choice)i;
			return 0;
		}
	}
	return -EINVAL;
}
