// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "bus-options.h"
#include "famfs/bus-api.h"

static const struct option_def {
	const char *name;
	unsigned flag;
	const char *type;           /* "u", "t", "b" or "s" */
	size_t offset;              /* of the field in struct bus_options */
} option_table[] = {
	{ "uid",        BUS_OPT_UID,        "u", offsetof(struct bus_options, uid) },
	{ "gid",        BUS_OPT_GID,        "u", offsetof(struct bus_options, gid) },
	{ "nstrips",    BUS_OPT_NSTRIPS,    "u", offsetof(struct bus_options, nstrips) },
	{ "nbuckets",   BUS_OPT_NBUCKETS,   "u", offsetof(struct bus_options, nbuckets) },
	{ "chunk_size", BUS_OPT_CHUNK_SIZE, "t", offsetof(struct bus_options, chunk_size) },
	{ "parents",    BUS_OPT_PARENTS,    "b", offsetof(struct bus_options, parents) },
	{ "writable",   BUS_OPT_WRITABLE,   "b", offsetof(struct bus_options, writable) },
	{ "descriptor", BUS_OPT_DESCRIPTOR, "s", offsetof(struct bus_options, descriptor) },
	{ "mount_point", BUS_OPT_MOUNT_POINT, "s", offsetof(struct bus_options, mount_point) },
	{ "backend",    BUS_OPT_BACKEND,    "s", offsetof(struct bus_options, backend) },
	{ "read_only",  BUS_OPT_READ_ONLY,  "b", offsetof(struct bus_options, read_only) },
	{ "force",      BUS_OPT_FORCE,      "b", offsetof(struct bus_options, force) },
	{ "log_len",    BUS_OPT_LOG_LEN,    "t", offsetof(struct bus_options, log_len) },
};

#define N_OPTIONS (sizeof(option_table) / sizeof(option_table[0]))

/* "uid gid", for messages; "none" for no option. */
static const char *allowed_names(unsigned allowed, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < N_OPTIONS; i++)
		if (allowed & option_table[i].flag)
			n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%s", n ? " " : "",
					      option_table[i].name);
	return buf[0] ? buf : "none";
}

static int read_value(sd_bus_message *msg, const struct option_def *d, struct bus_options *o)
{
	void *field = (char *)o + d->offset;
	int b, r;

	switch (d->type[0]) {
	case 'b':
		r = sd_bus_message_read_basic(msg, 'b', &b);
		if (r >= 0)
			*(bool *)field = b;
		return r;
	default:
		/* u into uint32_t, t into uint64_t, s into const char * */
		return sd_bus_message_read_basic(msg, d->type[0], field);
	}
}

int bus_read_options(sd_bus_message *msg, unsigned allowed, struct bus_options *ret, sd_bus_error *e)
{
	struct bus_options o = {0};
	int r;

	r = sd_bus_message_enter_container(msg, 'a', "{sv}");
	if (r < 0)
		return r;
	while ((r = sd_bus_message_enter_container(msg, 'e', "sv")) > 0) {
		const struct option_def *d = NULL;
		const char *key, *contents;
		char type, names[128];

		r = sd_bus_message_read(msg, "s", &key);
		if (r < 0)
			return r;
		for (size_t i = 0; i < N_OPTIONS && !d; i++)
			if ((allowed & option_table[i].flag) && !strcmp(option_table[i].name, key))
				d = &option_table[i];
		if (!d)
			return sd_bus_error_setf(e, FAMFS_ERROR_INVALID_ARGUMENT,
						 "unknown option \"%s\" (this method takes: %s)", key,
						 allowed_names(allowed, names, sizeof(names)));
		r = sd_bus_message_peek_type(msg, &type, &contents);
		if (r < 0)
			return r;
		if (strcmp(contents, d->type) != 0)
			return sd_bus_error_setf(e, FAMFS_ERROR_INVALID_ARGUMENT,
						 "option \"%s\" must have type '%s', not '%s'", key, d->type, contents);
		r = sd_bus_message_enter_container(msg, 'v', d->type);
		if (r >= 0)
			r = read_value(msg, d, &o);
		if (r >= 0)
			r = sd_bus_message_exit_container(msg);
		if (r >= 0)
			r = sd_bus_message_exit_container(msg);
		if (r < 0)
			return r;
		o.given |= d->flag;
	}
	if (r < 0)
		return r;
	r = sd_bus_message_exit_container(msg);
	if (r < 0)
		return r;
	*ret = o;
	return 0;
}

int bus_parse_options(sd_bus_message *msg, const char *allowed, sd_bus_error *e)
{
	struct bus_options o;
	unsigned mask = 0;

	for (size_t i = 0; i < N_OPTIONS; i++) {
		size_t n = strlen(option_table[i].name);

		for (const char *p = strstr(allowed, option_table[i].name); p; p = strstr(p + 1, option_table[i].name))
			if ((p == allowed || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
				mask |= option_table[i].flag;
	}
	return bus_read_options(msg, mask, &o, e);
}
