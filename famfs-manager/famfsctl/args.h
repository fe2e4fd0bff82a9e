/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The option values several commands share.  Each reports a bad value as
 * a usage error ("invalid mode ...") and returns -EINVAL.
 */
#ifndef FAMFSCTL_ARGS_H
#define FAMFSCTL_ARGS_H

#include <stdint.h>

#include "client.h"

/* -m MODE: octal permission bits, at most 07777. */
int parse_mode(const char *s, uint32_t *ret);

/* -N STRIPS, -B BUCKETS (1 to 64), -C CHUNK (a size above 0) of create and cp; @c is the letter. */
int parse_interleave(int c, const char *v, struct interleave *il);

/* -u USER, -g GROUP: a number, or a name this host's user or group database knows. */
int parse_owner_uid(const char *s, struct owner *o);
int parse_owner_gid(const char *s, struct owner *o);

/* --fill SEED, --seed SEED (pattern.h). */
int parse_seed_arg(const char *s, uint64_t *ret);

#endif
