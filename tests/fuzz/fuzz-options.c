// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The a{sv} options of the daemon's methods (famfs-manager/bus-options.c
 * bus_read_options, through bus_parse_options) on messages built from the fuzz
 * input: any keys, any variant types, nesting, and bodies that are not an
 * a{sv} at all.  No daemon and no bus traffic: the message is built, sealed
 * and rewound as a received one would be.  Properties: no crash or leak;
 * a refusal is an error, never a silent success; a success sets no error.
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>

#include "famfs/bus-api.h"
#include "fuzz-common.h"
#include "bus-options.h"

static const char *const allowed_sets[] = {
	"uid gid nstrips nbuckets chunk_size",   /* CreateFile */
	"uid gid",                               /* CreateFiles */
	"uid gid parents",                       /* Mkdir */
	"writable",                              /* OpenFile */
	"",
};
static const char *const keys[] = {
	"uid", "gid", "nstrips", "nbuckets", "chunk_size", "parents", "writable",
	"", " ", "uid gid", "ui", "d", "gid ", "chunk", "size", "writable ",
};
static const char *const types[] = {
	"u", "t", "b", "s", "i", "q", "x", "y", "d", "o", "g", "ay", "as", "a{sv}", "(uu)", "v",
};

static sd_bus *bus;

static void take_string(struct fuzz_input *in, char *buf, size_t size)
{
	size_t n = fuzz_u8(in) % size;

	for (size_t k = 0; k < n; k++)
		buf[k] = (char)(0x20 + fuzz_u8(in) % 0x5f);   /* printable ASCII: valid UTF-8 */
	buf[n] = '\0';
}

static int append_value(sd_bus_message *m, struct fuzz_input *in, const char *type, unsigned depth)
{
	char s[40];
	uint64_t v = fuzz_u64(in);
	int r;

	switch (type[0]) {
	case 'u': case 't': case 'b': case 'i': case 'q': case 'x': case 'y': {
		uint32_t u32 = (uint32_t)v;
		int i = (int)v;
		uint16_t q = (uint16_t)v;
		uint8_t y = (uint8_t)v;

		return sd_bus_message_append_basic(m, type[0],
			type[0] == 't' || type[0] == 'x' ? (const void *)&v :
			type[0] == 'q' ? (const void *)&q : type[0] == 'y' ? (const void *)&y :
			type[0] == 'u' ? (const void *)&u32 : (const void *)&i);
	}
	case 'd': {
		double d = (double)(int64_t)v;

		return sd_bus_message_append_basic(m, 'd', &d);
	}
	case 's':
		take_string(in, s, sizeof(s));
		return sd_bus_message_append_basic(m, 's', s);
	case 'o':
		return sd_bus_message_append_basic(m, 'o', "/org/famfs");
	case 'g':
		return sd_bus_message_append_basic(m, 'g', "a{sv}");
	case 'v':
		if (depth > 3)
			return sd_bus_message_append(m, "v", "u", (uint32_t)v);
		r = sd_bus_message_open_container(m, 'v', types[v % 16]);
		if (r >= 0)
			r = append_value(m, in, types[v % 16], depth + 1);
		return r < 0 ? r : sd_bus_message_close_container(m);
	case '(':
		return sd_bus_message_append(m, "(uu)", (uint32_t)v, (uint32_t)(v >> 32));
	default:
		break;
	}
	/* arrays */
	if (!strcmp(type, "ay"))
		return sd_bus_message_append_array(m, 'y', &v, v % 9);
	if (!strcmp(type, "as")) {
		take_string(in, s, sizeof(s));
		return sd_bus_message_append(m, "as", 2, s, "uid");
	}
	/* a{sv}, nested */
	r = sd_bus_message_open_container(m, 'a', "{sv}");
	if (r >= 0 && depth < 3 && (v & 1)) {
		const char *key = keys[(v >> 8) % 16], *t = types[(v >> 16) % 16];

		r = sd_bus_message_open_container(m, 'e', "sv");
		if (r >= 0)
			r = sd_bus_message_append_basic(m, 's', key);
		if (r >= 0)
			r = sd_bus_message_open_container(m, 'v', t);
		if (r >= 0)
			r = append_value(m, in, t, depth + 1);
		if (r >= 0)
			r = sd_bus_message_close_container(m);
		if (r >= 0)
			r = sd_bus_message_close_container(m);
	}
	return r < 0 ? r : sd_bus_message_close_container(m);
}

static int build(sd_bus_message *m, struct fuzz_input *in)
{
	uint8_t top = fuzz_u8(in);
	int r;

	if (top % 16 == 0)   /* not an a{sv}: the method's signature was not checked */
		return append_value(m, in, types[(top >> 4) % 16], 0);
	r = sd_bus_message_open_container(m, 'a', "{sv}");
	for (unsigned k = 0; r >= 0 && in->n > 0 && k < 32; k++) {
		uint8_t sel = fuzz_u8(in), tsel = fuzz_u8(in);
		char raw[40];
		const char *key = keys[sel % 16];

		if (sel >= 0xf0) {
			take_string(in, raw, sizeof(raw));
			key = raw;
		}
		r = sd_bus_message_open_container(m, 'e', "sv");
		if (r >= 0)
			r = sd_bus_message_append_basic(m, 's', key);
		if (r >= 0)
			r = sd_bus_message_open_container(m, 'v', types[tsel % 16]);
		if (r >= 0)
			r = append_value(m, in, types[tsel % 16], 1);
		if (r >= 0)
			r = sd_bus_message_close_container(m);
		if (r >= 0)
			r = sd_bus_message_close_container(m);
	}
	return r < 0 ? r : sd_bus_message_close_container(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *m = NULL;
	const char *allowed;
	int r;

	if (!bus) {
		int sv[2];

		/* A bus that never connects: messages need one to be made. */
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0 ||
		    sd_bus_new(&bus) < 0 || sd_bus_set_fd(bus, sv[0], sv[0]) < 0 || sd_bus_start(bus) < 0)
			fuzz_fail("cannot set up an unconnected bus");
	}
	allowed = allowed_sets[fuzz_u8(&in) % 5];
	r = sd_bus_message_new_method_call(bus, &m, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE,
					   "CreateFile");
	if (r < 0)
		fuzz_fail("sd_bus_message_new_method_call: %s", strerror(-r));
	if (build(m, &in) < 0 || sd_bus_message_seal(m, 1, 0) < 0 || sd_bus_message_rewind(m, true) < 0)
		goto out;   /* a message sd-bus would not have sent */

	r = bus_parse_options(m, allowed, &e);
	if (r >= 0 && sd_bus_error_is_set(&e))
		fuzz_fail("options accepted (%d) with an error set: %s", r, e.message);
	if (sd_bus_error_is_set(&e) && (r >= 0 || !e.message || !e.message[0]))
		fuzz_fail("options refused without a message (%d)", r);
out:
	sd_bus_error_free(&e);
	sd_bus_message_unref(m);
	return 0;
}
