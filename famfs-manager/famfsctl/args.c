// SPDX-License-Identifier: LGPL-2.1-or-later
/* The option values several commands share (args.h). */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>

#include "args.h"
#include "message.h"
#include "pattern.h"
#include "units.h"

int parse_mode(const char *s, uint32_t *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 8);
	if (errno || end == s || *end || v > 07777 || s[0] == '-' || s[0] == '+') {
		tool_error("invalid mode \"%s\": expected octal permission bits like 0644", s);
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

int parse_interleave(int c, const char *v, struct interleave *il)
{
	uint64_t x;

	if (c == 'C') {
		if (famfs_parse_size(v, &x) < 0 || x == 0) {
			tool_error("invalid chunk size \"%s\"", v);
			return -EINVAL;
		}
		il->chunk = x;
		return 0;
	}
	if (famfs_parse_size(v, &x) < 0 || x == 0 || x > 64) {
		tool_error("invalid -%c \"%s\": expected 1 to 64", c, v);
		return -EINVAL;
	}
	if (c == 'N')
		il->nstrips = (uint32_t)x;
	else
		il->nbuckets = (uint32_t)x;
	return 0;
}

/* A decimal id below 2^32 - 1 ((uid_t)-1 means "unchanged" to the kernel); 1 when @s is no number. */
static int parse_id_number(const char *s, uint32_t *ret)
{
	unsigned long long v;
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return 1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end)
		return 1;
	if (errno || v >= UINT32_MAX)
		return -ERANGE;
	*ret = (uint32_t)v;
	return 0;
}

int parse_owner_uid(const char *s, struct owner *o)
{
	struct passwd *pw;
	int r = parse_id_number(s, &o->uid);

	if (r == 1) {
		errno = 0;
		pw = getpwnam(s);
		if (pw) {
			o->uid = pw->pw_uid;
			r = 0;
		}
	}
	if (r != 0) {
		tool_error("invalid user \"%s\": %s", s,
			   r == -ERANGE ? "a uid is below 4294967295" : "no such user, and not a number");
		return -EINVAL;
	}
	o->has_uid = true;
	return 0;
}

int parse_owner_gid(const char *s, struct owner *o)
{
	struct group *gr;
	int r = parse_id_number(s, &o->gid);

	if (r == 1) {
		errno = 0;
		gr = getgrnam(s);
		if (gr) {
			o->gid = gr->gr_gid;
			r = 0;
		}
	}
	if (r != 0) {
		tool_error("invalid group \"%s\": %s", s,
			   r == -ERANGE ? "a gid is below 4294967295" : "no such group, and not a number");
		return -EINVAL;
	}
	o->has_gid = true;
	return 0;
}

int parse_seed_arg(const char *s, uint64_t *ret)
{
	int r = pattern_parse_seed(s, ret);

	if (r < 0) {
		tool_error("invalid seed \"%s\": %s", s,
			   r == -ERANGE ? "it does not fit in 64 bits"
					: "expected a number from 0 to 18446744073709551615 (decimal, or hex with 0x)");
		return -EINVAL;
	}
	return 0;
}
