// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * famfsctl: the command-line client of famfs-manager.  Everything goes over
 * the bus; file data goes through the descriptor OpenFile hands over, so
 * this program never opens a famfs device itself.  That descriptor is the
 * whole device or the file alone, as the daemon decides for the caller;
 * the extents that come with it say where to map either way.  Callers
 * other than root write by handing the daemon a sealed memfd (WriteFile).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "config.h"
#include "escape.h"
#include "units.h"

#define BUS_NAME   "org.famfs.Manager"
#define ROOT_PATH  "/org/famfs/Manager"
#define MGR_IFACE  "org.famfs.Manager1"
#define FS_IFACE   "org.famfs.FileSystem1"
#define CALL_TIMEOUT_USEC (120ULL * 1000000)

#define EXIT_FAIL 1
#define EXIT_USAGE 2

static bool arg_json;
static bool arg_ask_password = true;
static sd_bus *bus;

struct fsinfo {
	char *object;
	char *uuid, *device, *mountpoint, *role, *backend, *health;
	char **reasons;
	uint64_t log_used, log_total, capacity, allocated, free_bytes, files, directories;
	uint64_t replayed, invalid, torn, last_replay;
};

static void fsinfo_clear(struct fsinfo *f)
{
	free(f->object);
	free(f->uuid);
	free(f->device);
	free(f->mountpoint);
	free(f->role);
	free(f->backend);
	free(f->health);
	for (char **p = f->reasons; p && *p; p++)
		free(*p);
	free(f->reasons);
	memset(f, 0, sizeof(*f));
}

static int fail_call(const char *what, const char *arg, const sd_bus_error *e, int r)
{
	if (e && sd_bus_error_is_set(e))
		fprintf(stderr, "famfsctl: cannot %s%s%s: %s [%s]\n", what, arg ? " " : "", arg ? arg : "",
			e->message ? e->message : "", e->name);
	else
		fprintf(stderr, "famfsctl: cannot %s%s%s: %s\n", what, arg ? " " : "", arg ? arg : "",
			strerror(-r));
	return EXIT_FAIL;
}

static int connect_bus(void)
{
	int r = sd_bus_open_system(&bus);

	if (r < 0) {
		const char *a = getenv("DBUS_SYSTEM_BUS_ADDRESS");

		fprintf(stderr, "famfsctl: cannot connect to the system bus%s%s: %s\n", a ? " at " : "",
			a ? a : "", strerror(-r));
		return r;
	}
	(void)sd_bus_set_allow_interactive_authorization(bus, arg_ask_password);
	return 0;
}

static void print_json(json_object *o)
{
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

/* ---- file systems ---- */

static int read_props(const char *object, struct fsinfo *f, sd_bus_error *e)
{
	static const struct {
		const char *name;
		size_t off;
	} strs[] = {
		{ "UUID", offsetof(struct fsinfo, uuid) },
		{ "Device", offsetof(struct fsinfo, device) },
		{ "MountPoint", offsetof(struct fsinfo, mountpoint) },
		{ "Role", offsetof(struct fsinfo, role) },
		{ "Backend", offsetof(struct fsinfo, backend) },
		{ "Health", offsetof(struct fsinfo, health) },
	}, nums[] = {
		{ "LogEntriesUsed", offsetof(struct fsinfo, log_used) },
		{ "LogEntriesTotal", offsetof(struct fsinfo, log_total) },
		{ "Capacity", offsetof(struct fsinfo, capacity) },
		{ "Allocated", offsetof(struct fsinfo, allocated) },
		{ "Free", offsetof(struct fsinfo, free_bytes) },
		{ "Files", offsetof(struct fsinfo, files) },
		{ "Directories", offsetof(struct fsinfo, directories) },
		{ "EntriesReplayed", offsetof(struct fsinfo, replayed) },
		{ "InvalidEntries", offsetof(struct fsinfo, invalid) },
		{ "TornTailRetries", offsetof(struct fsinfo, torn) },
		{ "LastReplay", offsetof(struct fsinfo, last_replay) },
	};
	sd_bus_message *reply = NULL;
	int r;

	r = sd_bus_call_method(bus, BUS_NAME, object, "org.freedesktop.DBus.Properties", "GetAll", e,
			       &reply, "s", FS_IFACE);
	if (r < 0)
		return r;
	f->object = strdup(object);
	r = sd_bus_message_enter_container(reply, 'a', "{sv}");
	while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
		const char *key, *contents;
		char type;
		bool done = false;

		r = sd_bus_message_read(reply, "s", &key);
		if (r >= 0)
			r = sd_bus_message_peek_type(reply, &type, &contents);
		if (r < 0)
			break;
		if (!strcmp(contents, "s")) {
			for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]) && !done; i++) {
				if (strcmp(strs[i].name, key) == 0) {
					const char *v;

					r = sd_bus_message_read(reply, "v", "s", &v);
					*(char **)((char *)f + strs[i].off) = strdup(v);
					done = true;
				}
			}
		} else if (!strcmp(contents, "t")) {
			for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]) && !done; i++) {
				if (strcmp(nums[i].name, key) == 0) {
					r = sd_bus_message_read(reply, "v", "t", (uint64_t *)((char *)f + nums[i].off));
					done = true;
				}
			}
		} else if (!strcmp(contents, "as") && !strcmp(key, "HealthReasons")) {
			r = sd_bus_message_enter_container(reply, 'v', "as");
			if (r >= 0)
				r = sd_bus_message_read_strv(reply, &f->reasons);
			if (r >= 0)
				r = sd_bus_message_exit_container(reply);
			done = true;
		}
		if (r >= 0 && !done)
			r = sd_bus_message_skip(reply, "v");
		if (r >= 0)
			r = sd_bus_message_exit_container(reply);
	}
	sd_bus_message_unref(reply);
	return r < 0 ? r : 0;
}

/* All attached file systems, in the daemon's order. */
static int list_fs(struct fsinfo **ret, size_t *ret_n, sd_bus_error *e)
{
	sd_bus_message *reply = NULL;
	struct fsinfo *v = NULL;
	size_t n = 0;
	const char *obj, *uuid, *dev, *mp, *role, *health;
	int r;

	r = sd_bus_call_method(bus, BUS_NAME, ROOT_PATH, MGR_IFACE, "ListFileSystems", e, &reply, "");
	if (r < 0)
		return r;
	r = sd_bus_message_enter_container(reply, 'a', "(osssss)");
	while (r >= 0 && (r = sd_bus_message_read(reply, "(osssss)", &obj, &uuid, &dev, &mp, &role,
						   &health)) > 0) {
		struct fsinfo *nv = realloc(v, (n + 1) * sizeof(*v));

		if (!nv) {
			r = -ENOMEM;
			break;
		}
		v = nv;
		memset(&v[n], 0, sizeof(v[n]));
		r = read_props(obj, &v[n], e);
		n++;
	}
	sd_bus_message_unref(reply);
	if (r < 0) {
		for (size_t i = 0; i < n; i++)
			fsinfo_clear(&v[i]);
		free(v);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

static const char *nz(const char *s)
{
	return s ? s : "";
}

static int cmd_status(int argc, char **argv)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	struct fsinfo *v = NULL;
	size_t n = 0;
	char b1[32], b2[32], b3[32];
	int r;

	if (argc > 1) {
		fprintf(stderr, "famfsctl: status takes no arguments\n");
		return EXIT_USAGE;
	}
	r = list_fs(&v, &n, &e);
	if (r < 0)
		return fail_call("get the status", NULL, &e, r);
	if (arg_json) {
		json_object *root = json_object_new_object(), *arr = json_object_new_array();

		for (size_t i = 0; i < n; i++) {
			json_object *o = json_object_new_object(), *rs = json_object_new_array();

			json_object_object_add(o, "object", json_object_new_string(nz(v[i].object)));
			json_object_object_add(o, "uuid", json_object_new_string(nz(v[i].uuid)));
			json_object_object_add(o, "device", json_object_new_string(nz(v[i].device)));
			json_object_object_add(o, "mountpoint", json_object_new_string(nz(v[i].mountpoint)));
			json_object_object_add(o, "role", json_object_new_string(nz(v[i].role)));
			json_object_object_add(o, "backend", json_object_new_string(nz(v[i].backend)));
			json_object_object_add(o, "health", json_object_new_string(nz(v[i].health)));
			for (char **p = v[i].reasons; p && *p; p++)
				json_object_array_add(rs, json_object_new_string(*p));
			json_object_object_add(o, "health_reasons", rs);
			json_object_object_add(o, "log_used", json_object_new_uint64(v[i].log_used));
			json_object_object_add(o, "log_total", json_object_new_uint64(v[i].log_total));
			json_object_object_add(o, "capacity", json_object_new_uint64(v[i].capacity));
			json_object_object_add(o, "allocated", json_object_new_uint64(v[i].allocated));
			json_object_object_add(o, "free", json_object_new_uint64(v[i].free_bytes));
			json_object_object_add(o, "files", json_object_new_uint64(v[i].files));
			json_object_object_add(o, "directories", json_object_new_uint64(v[i].directories));
			json_object_object_add(o, "entries_replayed", json_object_new_uint64(v[i].replayed));
			json_object_object_add(o, "invalid_entries", json_object_new_uint64(v[i].invalid));
			json_object_object_add(o, "torn_tail_retries", json_object_new_uint64(v[i].torn));
			json_object_object_add(o, "last_replay_usec", json_object_new_uint64(v[i].last_replay));
			json_object_array_add(arr, o);
		}
		json_object_object_add(root, "filesystems", arr);
		print_json(root);
	} else {
		if (n == 0)
			printf("no famfs file systems attached\n");
		for (size_t i = 0; i < n; i++) {
			struct fsinfo *f = &v[i];

			printf("%s%s\n", i ? "\n" : "", nz(f->mountpoint));
			printf("  uuid:        %s\n", f->uuid && f->uuid[0] ? f->uuid : "(unreadable)");
			printf("  device:      %s\n", nz(f->device));
			printf("  role:        %s (backend %s)\n", nz(f->role), nz(f->backend));
			printf("  health:      %s\n", nz(f->health));
			for (char **p = f->reasons; p && *p; p++)
				printf("               - %s\n", *p);
			printf("  log:         %" PRIu64 " of %" PRIu64 " entries used\n", f->log_used,
			       f->log_total);
			printf("  space:       %s allocated of %s, %s free\n",
			       famfs_format_size(f->allocated, b1, sizeof(b1)),
			       famfs_format_size(f->capacity, b2, sizeof(b2)),
			       famfs_format_size(f->free_bytes, b3, sizeof(b3)));
			printf("  contents:    %" PRIu64 " file%s, %" PRIu64 " director%s\n", f->files,
			       f->files == 1 ? "" : "s", f->directories, f->directories == 1 ? "y" : "ies");
			printf("  replayed:    %" PRIu64 " entries, %" PRIu64 " invalid seen\n", f->replayed,
			       f->invalid);
		}
	}
	for (size_t i = 0; i < n; i++)
		fsinfo_clear(&v[i]);
	free(v);
	return 0;
}

/* ---- namespace ---- */

static void mode_string(uint32_t mode, char out[11])
{
	static const char rwx[] = "rwxrwxrwx";

	out[0] = S_ISDIR(mode) ? 'd' : '-';
	for (int i = 0; i < 9; i++)
		out[i + 1] = (mode & (0400 >> i)) ? rwx[i] : '-';
	out[10] = '\0';
}

static int cmd_ls(int argc, char **argv)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	json_object *arr = NULL;
	bool longfmt = false;
	const char *path, *name;
	uint64_t size;
	uint32_t mode, uid, gid;
	int c, r;

	optind = 1;
	while ((c = getopt(argc, argv, "l")) != -1) {
		if (c == 'l')
			longfmt = true;
		else
			return EXIT_USAGE;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "famfsctl: usage: famfsctl ls [-l] PATH\n");
		return EXIT_USAGE;
	}
	path = argv[optind];
	r = sd_bus_call_method(bus, BUS_NAME, ROOT_PATH, MGR_IFACE, "ListFiles", &e, &reply, "s", path);
	if (r < 0)
		return fail_call("list", path, &e, r);
	if (arg_json)
		arr = json_object_new_array();
	r = sd_bus_message_enter_container(reply, 'a', "(stuuu)");
	while (r >= 0 && (r = sd_bus_message_read(reply, "(stuuu)", &name, &size, &mode, &uid, &gid)) > 0) {
		if (arr) {
			json_object *o = json_object_new_object();

			json_object_object_add(o, "name", json_object_new_string(name));
			json_object_object_add(o, "type", json_object_new_string(S_ISDIR(mode) ? "directory" : "file"));
			json_object_object_add(o, "size", json_object_new_uint64(size));
			json_object_object_add(o, "mode", json_object_new_int(mode & 07777));
			json_object_object_add(o, "uid", json_object_new_int64(uid));
			json_object_object_add(o, "gid", json_object_new_int64(gid));
			json_object_array_add(arr, o);
		} else if (longfmt) {
			char ms[11];

			mode_string(mode, ms);
			printf("%s %6u %6u %12" PRIu64 " %s%s\n", ms, uid, gid, size, name,
			       S_ISDIR(mode) ? "/" : "");
		} else {
			printf("%s%s\n", name, S_ISDIR(mode) ? "/" : "");
		}
	}
	sd_bus_message_unref(reply);
	if (arr)
		print_json(arr);
	if (r < 0)
		return fail_call("read the listing of", path, NULL, r);
	return 0;
}

static int parse_mode(const char *s, uint32_t *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 8);
	if (errno || end == s || *end || v > 07777) {
		fprintf(stderr, "famfsctl: invalid mode \"%s\": expected octal permission bits like 0644\n", s);
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

/* Interleaving for create and cp: 0 means the daemon's default. */
static uint32_t arg_nstrips, arg_nbuckets;
static uint64_t arg_chunk;

static int parse_interleave(int c, const char *v)
{
	uint64_t x;

	if (c == 'C') {
		if (famfs_parse_size(v, &arg_chunk) < 0 || arg_chunk == 0) {
			fprintf(stderr, "famfsctl: invalid chunk size \"%s\"\n", v);
			return -EINVAL;
		}
		return 0;
	}
	if (famfs_parse_size(v, &x) < 0 || x == 0 || x > 64) {
		fprintf(stderr, "famfsctl: invalid -%c \"%s\": expected 1 to 64\n", c, v);
		return -EINVAL;
	}
	if (c == 'N')
		arg_nstrips = (uint32_t)x;
	else
		arg_nbuckets = (uint32_t)x;
	return 0;
}

static int call_create(const char *path, uint64_t size, uint32_t mode)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *call = NULL, *reply = NULL;
	int r;

	r = sd_bus_message_new_method_call(bus, &call, BUS_NAME, ROOT_PATH, MGR_IFACE, "CreateFile");
	if (r >= 0)
		r = sd_bus_message_append(call, "stu", path, size, mode);
	if (r >= 0)
		r = sd_bus_message_open_container(call, 'a', "{sv}");
	if (r >= 0 && arg_nstrips)
		r = sd_bus_message_append(call, "{sv}", "nstrips", "u", arg_nstrips);
	if (r >= 0 && arg_nbuckets)
		r = sd_bus_message_append(call, "{sv}", "nbuckets", "u", arg_nbuckets);
	if (r >= 0 && arg_chunk)
		r = sd_bus_message_append(call, "{sv}", "chunk_size", "t", arg_chunk);
	if (r >= 0)
		r = sd_bus_message_close_container(call);
	if (r >= 0)
		r = sd_bus_call(bus, call, CALL_TIMEOUT_USEC, &e, &reply);
	sd_bus_message_unref(call);
	if (r < 0) {
		fail_call("create", path, &e, r);
		sd_bus_error_free(&e);
		return r;
	}
	sd_bus_message_unref(reply);
	return 0;
}

static int cmd_create(int argc, char **argv)
{
	uint64_t size = 0;
	uint32_t mode = 0644;
	bool have_size = false;
	int c;

	optind = 1;
	while ((c = getopt(argc, argv, "s:m:N:B:C:")) != -1) {
		switch (c) {
		case 'N':
		case 'B':
		case 'C':
			if (parse_interleave(c, optarg) < 0)
				return EXIT_USAGE;
			break;
		case 's':
			if (famfs_parse_size(optarg, &size) < 0) {
				fprintf(stderr, "famfsctl: invalid size \"%s\" (examples: 4096, 2M, 1G)\n", optarg);
				return EXIT_USAGE;
			}
			have_size = true;
			break;
		case 'm':
			if (parse_mode(optarg, &mode) < 0)
				return EXIT_USAGE;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (!have_size || optind != argc - 1) {
		fprintf(stderr, "famfsctl: usage: famfsctl create -s SIZE [-m MODE] [-N STRIPS [-B BUCKETS] [-C CHUNK]] PATH\n");
		return EXIT_USAGE;
	}
	return call_create(argv[optind], size, mode) < 0 ? EXIT_FAIL : 0;
}

static int cmd_mkdir(int argc, char **argv)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	bool parents = false;
	uint32_t mode = 0755;
	int c, r;

	optind = 1;
	while ((c = getopt(argc, argv, "pm:")) != -1) {
		if (c == 'p')
			parents = true;
		else if (c == 'm') {
			if (parse_mode(optarg, &mode) < 0)
				return EXIT_USAGE;
		} else
			return EXIT_USAGE;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "famfsctl: usage: famfsctl mkdir [-p] [-m MODE] PATH\n");
		return EXIT_USAGE;
	}
	r = sd_bus_call_method(bus, BUS_NAME, ROOT_PATH, MGR_IFACE, "Mkdir", &e, &reply, "sua{sv}",
			       argv[optind], mode, 1, "parents", "b", parents);
	if (r < 0)
		return fail_call("create directory", argv[optind], &e, r);
	sd_bus_message_unref(reply);
	return 0;
}

/* ---- maps and data ---- */

struct extent {
	uint64_t devindex, offset, len;
};

struct layout {
	uint64_t size;
	uint32_t type;      /* 0 simple, 1 interleaved */
	uint64_t chunk;
	struct extent ext[16];
	uint8_t *map[16];
	size_t n;
};

static int read_extents(sd_bus_message *reply, struct layout *l)
{
	uint64_t a, b, c;
	int r;

	l->n = 0;
	r = sd_bus_message_enter_container(reply, 'a', "(ttt)");
	while (r >= 0 && (r = sd_bus_message_read(reply, "(ttt)", &a, &b, &c)) > 0) {
		if (l->n == 16)
			return -E2BIG;
		l->ext[l->n++] = (struct extent){ a, b, c };
	}
	if (r >= 0)
		r = sd_bus_message_exit_container(reply);
	return r;
}

static int cmd_map(int argc, char **argv)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	struct layout l = {0};
	uint32_t mode, uid, gid;
	char b1[32];
	int r;

	if (argc != 2) {
		fprintf(stderr, "famfsctl: usage: famfsctl map PATH\n");
		return EXIT_USAGE;
	}
	r = sd_bus_call_method(bus, BUS_NAME, ROOT_PATH, MGR_IFACE, "GetFileLayout", &e, &reply, "s", argv[1]);
	if (r < 0)
		return fail_call("get the map of", argv[1], &e, r);
	r = sd_bus_message_read(reply, "tuuuut", &l.size, &mode, &uid, &gid, &l.type, &l.chunk);
	if (r >= 0)
		r = read_extents(reply, &l);
	sd_bus_message_unref(reply);
	if (r < 0)
		return fail_call("read the map of", argv[1], NULL, r);
	if (arg_json) {
		json_object *o = json_object_new_object(), *arr = json_object_new_array();

		json_object_object_add(o, "path", json_object_new_string(argv[1]));
		json_object_object_add(o, "size", json_object_new_uint64(l.size));
		json_object_object_add(o, "mode", json_object_new_int(mode));
		json_object_object_add(o, "uid", json_object_new_int64(uid));
		json_object_object_add(o, "gid", json_object_new_int64(gid));
		json_object_object_add(o, "extent_type", json_object_new_string(l.type ? "interleaved" : "simple"));
		if (l.type)
			json_object_object_add(o, "chunk_size", json_object_new_uint64(l.chunk));
		for (size_t i = 0; i < l.n; i++) {
			json_object *x = json_object_new_object();

			json_object_object_add(x, "devindex", json_object_new_uint64(l.ext[i].devindex));
			json_object_object_add(x, "offset", json_object_new_uint64(l.ext[i].offset));
			json_object_object_add(x, "length", json_object_new_uint64(l.ext[i].len));
			json_object_array_add(arr, x);
		}
		json_object_object_add(o, l.type ? "strips" : "extents", arr);
		print_json(o);
		return 0;
	}
	printf("%s: %" PRIu64 " bytes (%s), mode %04o, uid %u, gid %u\n", argv[1], l.size,
	       famfs_format_size(l.size, b1, sizeof(b1)), mode, uid, gid);
	if (l.type)
		printf("interleaved: %zu strips, chunk %s\n", l.n, famfs_format_size(l.chunk, b1, sizeof(b1)));
	printf("%-8s %-18s %-18s %s\n", "devindex", "offset", "length", "");
	for (size_t i = 0; i < l.n; i++)
		printf("%-8" PRIu64 " 0x%016" PRIx64 " 0x%016" PRIx64 " %s\n", l.ext[i].devindex,
		       l.ext[i].offset, l.ext[i].len, famfs_format_size(l.ext[i].len, b1, sizeof(b1)));
	return 0;
}

/* Device pointer for file offset @off and how many bytes run on from there. */
static uint8_t *locate(const struct layout *l, uint64_t off, uint64_t *ret_run)
{
	if (l->type == 1) {
		uint64_t c = off / l->chunk, s = c % l->n, in = (c / l->n) * l->chunk + off % l->chunk;

		if (in >= l->ext[s].len)
			return NULL;
		*ret_run = l->chunk - off % l->chunk;
		return l->map[s] + in;
	}
	for (size_t i = 0; i < l->n; i++) {
		if (off < l->ext[i].len) {
			*ret_run = l->ext[i].len - off;
			return l->map[i] + off;
		}
		off -= l->ext[i].len;
	}
	return NULL;
}

static void unmap_layout(struct layout *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->map[i] && l->map[i] != MAP_FAILED)
			munmap(l->map[i], l->ext[i].len);
}

/* OpenFile, then map every extent of the descriptor it returns. */
static int open_mapped(const char *path, bool writable, struct layout *l)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	int fd, r;

	r = sd_bus_call_method(bus, BUS_NAME, ROOT_PATH, MGR_IFACE, "OpenFile", &e, &reply, "sa{sv}", path,
			       1, "writable", "b", writable);
	if (r < 0) {
		fail_call(writable ? "open for writing" : "open", path, &e, r);
		sd_bus_error_free(&e);
		return r;
	}
	r = sd_bus_message_read(reply, "htut", &fd, &l->size, &l->type, &l->chunk);
	if (r >= 0)
		r = read_extents(reply, l);
	if (r >= 0 && l->type == 1 && (l->chunk == 0 || l->n == 0))
		r = -EBADMSG;
	for (size_t i = 0; r >= 0 && i < l->n; i++) {
		l->map[i] = mmap(NULL, l->ext[i].len, writable ? PROT_READ | PROT_WRITE : PROT_READ,
				 MAP_SHARED, fd, (off_t)l->ext[i].offset);
		if (l->map[i] == MAP_FAILED) {
			r = -errno;
			l->map[i] = NULL;
		}
	}
	sd_bus_message_unref(reply);   /* closes the descriptor; the mappings stay */
	if (r < 0) {
		fprintf(stderr, "famfsctl: cannot map %s: %s\n", path, strerror(-r));
		unmap_layout(l);
	}
	return r;
}

static int cmd_cat(int argc, char **argv)
{
	struct layout l = {0};
	int rc = 0;

	if (argc < 2) {
		fprintf(stderr, "famfsctl: usage: famfsctl cat PATH...\n");
		return EXIT_USAGE;
	}
	for (int a = 1; a < argc; a++) {
		memset(&l, 0, sizeof(l));
		if (open_mapped(argv[a], false, &l) < 0) {
			rc = EXIT_FAIL;
			continue;
		}
		for (uint64_t off = 0; off < l.size;) {
			uint64_t run;
			uint8_t *p = locate(&l, off, &run);
			ssize_t w;

			if (!p) {
				fprintf(stderr, "famfsctl: %s: map ends before the file size\n", argv[a]);
				rc = EXIT_FAIL;
				break;
			}
			if (run > l.size - off)
				run = l.size - off;
			w = write(STDOUT_FILENO, p, run);
			if (w < 0) {
				if (errno == EINTR)
					continue;
				fprintf(stderr, "famfsctl: cannot write to stdout: %s\n", strerror(errno));
				unmap_layout(&l);
				return EXIT_FAIL;
			}
			off += w;
		}
		unmap_layout(&l);
	}
	return rc;
}

/*
 * A caller that is not root has no descriptor of the device to write
 * through: the data goes in a sealed memfd, which the daemon copies into
 * the file (WriteFile).
 */
static int write_via_daemon(const char *dst, int src, uint64_t size)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	static char buf[1 << 20];
	int mfd, r = 0;

	mfd = memfd_create("famfsctl-cp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0) {
		fprintf(stderr, "famfsctl: cannot copy to %s: memfd_create: %s\n", dst, strerror(errno));
		return -errno;
	}
	for (uint64_t done = 0; done < size;) {
		ssize_t n = read(src, buf, size - done < sizeof(buf) ? (size_t)(size - done) : sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : -EIO;
			fprintf(stderr, "famfsctl: cannot read the source of %s: %s\n", dst,
				n < 0 ? strerror(errno) : "file shrank");
			goto out;
		}
		for (ssize_t off = 0, w; off < n; off += w) {
			w = write(mfd, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR) {
				w = 0;
				continue;
			}
			if (w <= 0) {
				r = w < 0 ? -errno : -EIO;
				fprintf(stderr, "famfsctl: cannot copy to %s: %s\n", dst, strerror(-r));
				goto out;
			}
		}
		done += (uint64_t)n;
	}
	if (fcntl(mfd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		r = -errno;
		fprintf(stderr, "famfsctl: cannot seal the data for %s: %s\n", dst, strerror(errno));
		goto out;
	}
	r = sd_bus_call_method(bus, BUS_NAME, ROOT_PATH, MGR_IFACE, "WriteFile", &e, &reply, "sha{sv}", dst, mfd,
			       0);
	if (r < 0) {
		fail_call("write", dst, &e, r);
		sd_bus_error_free(&e);
	}
	sd_bus_message_unref(reply);
out:
	close(mfd);
	return r;
}

static int cmd_cp(int argc, char **argv)
{
	struct layout l = {0};
	const char *src, *dst;
	char *target = NULL;
	uint32_t mode = 0;
	bool have_mode = false;
	struct stat st;
	int c, fd, rc = EXIT_FAIL;

	optind = 1;
	while ((c = getopt(argc, argv, "m:N:B:C:")) != -1) {
		if (c == 'm') {
			if (parse_mode(optarg, &mode) < 0)
				return EXIT_USAGE;
			have_mode = true;
		} else if (c == 'N' || c == 'B' || c == 'C') {
			if (parse_interleave(c, optarg) < 0)
				return EXIT_USAGE;
		} else
			return EXIT_USAGE;
	}
	if (optind != argc - 2) {
		fprintf(stderr, "famfsctl: usage: famfsctl cp [-m MODE] [-N STRIPS [-B BUCKETS] [-C CHUNK]] LOCAL_FILE FAMFS_PATH\n");
		return EXIT_USAGE;
	}
	src = argv[optind];
	dst = argv[optind + 1];
	fd = open(src, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "famfsctl: cannot open %s: %s\n", src, strerror(errno));
		if (fd >= 0)
			close(fd);
		return EXIT_FAIL;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "famfsctl: %s is not a regular file\n", src);
		goto out;
	}
	if (st.st_size == 0) {
		fprintf(stderr, "famfsctl: %s is empty: famfs files are preallocated and cannot be empty\n", src);
		goto out;
	}
	if (dst[0] && dst[strlen(dst) - 1] == '/') {
		const char *b = strrchr(src, '/');

		if (asprintf(&target, "%s%s", dst, b ? b + 1 : src) < 0)
			goto out;
		dst = target;
	}
	if (!have_mode)
		mode = st.st_mode & 0777;
	if (call_create(dst, (uint64_t)st.st_size, mode) < 0)
		goto out;
	if (geteuid() != 0) {
		if (write_via_daemon(dst, fd, (uint64_t)st.st_size) >= 0)
			rc = 0;
		goto out;
	}
	if (open_mapped(dst, true, &l) < 0)
		goto out;
	for (uint64_t off = 0; off < l.size;) {
		uint64_t run;
		uint8_t *p = locate(&l, off, &run);
		ssize_t n;

		if (!p) {
			fprintf(stderr, "famfsctl: %s: map ends before the file size\n", dst);
			goto out_unmap;
		}
		if (run > l.size - off)
			run = l.size - off;
		n = read(fd, p, run);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "famfsctl: cannot read %s: %s\n", src, n < 0 ? strerror(errno) : "file shrank");
			goto out_unmap;
		}
		off += n;
	}
	for (size_t i = 0; i < l.n; i++) {
		if (msync(l.map[i], l.ext[i].len, MS_SYNC) < 0) {
			fprintf(stderr, "famfsctl: cannot flush %s: %s\n", dst, strerror(errno));
			goto out_unmap;
		}
	}
	rc = 0;
out_unmap:
	unmap_layout(&l);
out:
	free(target);
	close(fd);
	return rc;
}

/* ---- check ---- */

static int check_one(const char *path, json_object *arr, bool *clean)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *verdict, *sev, *code, *fpath, *msg;
	uint64_t errors, warnings;
	int64_t index;
	json_object *o = NULL, *fa = NULL;
	int r;

	r = sd_bus_call_method(bus, BUS_NAME, ROOT_PATH, MGR_IFACE, "Check", &e, &reply, "sa{sv}", path, 0);
	if (r < 0) {
		fail_call("check", path, &e, r);
		sd_bus_error_free(&e);
		return r;
	}
	r = sd_bus_message_read(reply, "stt", &verdict, &errors, &warnings);
	if (r < 0)
		goto out;
	if (strcmp(verdict, "clean") != 0)
		*clean = false;
	if (arr) {
		o = json_object_new_object();
		fa = json_object_new_array();
		json_object_object_add(o, "mountpoint", json_object_new_string(path));
		json_object_object_add(o, "verdict", json_object_new_string(verdict));
		json_object_object_add(o, "errors", json_object_new_uint64(errors));
		json_object_object_add(o, "warnings", json_object_new_uint64(warnings));
	} else {
		printf("%s: %s (%" PRIu64 " errors, %" PRIu64 " warnings)\n", path, verdict, errors, warnings);
	}
	r = sd_bus_message_enter_container(reply, 'a', "(ssxss)");
	while (r >= 0 && (r = sd_bus_message_read(reply, "(ssxss)", &sev, &code, &index, &fpath, &msg)) > 0) {
		if (fa) {
			json_object *x = json_object_new_object();

			json_object_object_add(x, "severity", json_object_new_string(sev));
			json_object_object_add(x, "code", json_object_new_string(code));
			json_object_object_add(x, "index", json_object_new_int64(index));
			json_object_object_add(x, "path", json_object_new_string(fpath));
			json_object_object_add(x, "message", json_object_new_string(msg));
			json_object_array_add(fa, x);
		} else {
			printf("  %s: %s: %s\n", sev, code, msg);
		}
	}
	if (o) {
		json_object_object_add(o, "findings", fa);
		json_object_array_add(arr, o);
	}
out:
	sd_bus_message_unref(reply);
	if (r < 0)
		fprintf(stderr, "famfsctl: malformed Check reply for %s: %s\n", path, strerror(-r));
	return r;
}

static int cmd_check(int argc, char **argv)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	json_object *arr = arg_json ? json_object_new_array() : NULL;
	bool clean = true, failed = false;
	int r;

	if (argc > 1) {
		for (int a = 1; a < argc; a++)
			failed |= check_one(argv[a], arr, &clean) < 0;
	} else {
		struct fsinfo *v = NULL;
		size_t n = 0;

		r = list_fs(&v, &n, &e);
		if (r < 0) {
			json_object_put(arr);
			return fail_call("list file systems", NULL, &e, r) ? 8 : 8;
		}
		for (size_t i = 0; i < n; i++) {
			failed |= check_one(v[i].mountpoint, arr, &clean) < 0;
			fsinfo_clear(&v[i]);
		}
		free(v);
	}
	if (arr)
		print_json(arr);
	/* fsck(8) codes: 0 clean, 4 damage left, 8 operational error */
	return failed ? 8 : clean ? 0 : 4;
}

/* ---- metrics ---- */

static void prom_escape(FILE *o, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(o, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", o);
		else
			fputc(*s, o);
	}
}

static void prom_labels(FILE *o, const struct fsinfo *f)
{
	fputs("{uuid=\"", o);
	prom_escape(o, f->uuid);
	fputs("\"}", o);
}

static void write_metrics(FILE *o, const struct fsinfo *v, size_t n, const uint64_t faults[3])
{
	static const struct {
		const char *name, *type, *help;
		size_t off;
	} m[] = {
		{ "famfs_log_entries_used", "gauge", "Log entries written", offsetof(struct fsinfo, log_used) },
		{ "famfs_log_entries", "gauge", "Log entry slots in total", offsetof(struct fsinfo, log_total) },
		{ "famfs_capacity_bytes", "gauge", "Size of the file system", offsetof(struct fsinfo, capacity) },
		{ "famfs_allocated_bytes", "gauge", "Space in use, metadata included", offsetof(struct fsinfo, allocated) },
		{ "famfs_free_bytes", "gauge", "Space free for new files", offsetof(struct fsinfo, free_bytes) },
		{ "famfs_files", "gauge", "Files in the namespace", offsetof(struct fsinfo, files) },
		{ "famfs_directories", "gauge", "Directories in the namespace", offsetof(struct fsinfo, directories) },
		{ "famfs_log_replayed_entries_total", "counter", "Log entries applied to the namespace", offsetof(struct fsinfo, replayed) },
		{ "famfs_log_invalid_entries_total", "counter", "Invalid log entries seen", offsetof(struct fsinfo, invalid) },
		{ "famfs_log_torn_tail_retries_total", "counter", "Follower ticks spent waiting on an invalid tail", offsetof(struct fsinfo, torn) },
	};
	static const char *const healths[] = { "ok", "degraded", "failed" };

	fputs("# HELP famfs_filesystem_info Attached famfs file systems\n# TYPE famfs_filesystem_info gauge\n", o);
	for (size_t i = 0; i < n; i++) {
		fputs("famfs_filesystem_info{uuid=\"", o);
		prom_escape(o, v[i].uuid);
		fputs("\",device=\"", o);
		prom_escape(o, v[i].device);
		fputs("\",mountpoint=\"", o);
		prom_escape(o, v[i].mountpoint);
		fprintf(o, "\",role=\"%s\",backend=\"%s\"} 1\n", nz(v[i].role), nz(v[i].backend));
	}
	fputs("# HELP famfs_health File system health (1 for the current state)\n# TYPE famfs_health gauge\n", o);
	for (size_t i = 0; i < n; i++) {
		for (size_t h = 0; h < 3; h++) {
			fputs("famfs_health{uuid=\"", o);
			prom_escape(o, v[i].uuid);
			fprintf(o, "\",state=\"%s\"} %d\n", healths[h], v[i].health && !strcmp(v[i].health, healths[h]));
		}
	}
	for (size_t k = 0; k < sizeof(m) / sizeof(m[0]); k++) {
		fprintf(o, "# HELP %s %s\n# TYPE %s %s\n", m[k].name, m[k].help, m[k].name, m[k].type);
		for (size_t i = 0; i < n; i++) {
			fputs(m[k].name, o);
			prom_labels(o, &v[i]);
			fprintf(o, " %" PRIu64 "\n", *(const uint64_t *)((const char *)&v[i] + m[k].off));
		}
	}
	/* famfs.ko counts for the whole module: no uuid label. */
	fputs("# HELP famfs_faults_total Page faults famfs.ko served, all mounts, by page size\n"
	      "# TYPE famfs_faults_total counter\n", o);
	for (int s = 0; s < 3; s++) {
		static const char *const sz[] = { "pte", "pmd", "pud" };

		fprintf(o, "famfs_faults_total{size=\"%s\"} %" PRIu64 "\n", sz[s], faults[s]);
	}
	fputs("# HELP famfs_last_replay_timestamp_seconds When the last log entry was applied\n"
	      "# TYPE famfs_last_replay_timestamp_seconds gauge\n", o);
	for (size_t i = 0; i < n; i++) {
		fputs("famfs_last_replay_timestamp_seconds", o);
		prom_labels(o, &v[i]);
		fprintf(o, " %.6f\n", v[i].last_replay / 1e6);
	}
}

static int cmd_metrics(int argc, char **argv)
{
	static const struct option opts[] = { { "textfile", required_argument, NULL, 't' }, { 0 } };
	sd_bus_error e = SD_BUS_ERROR_NULL;
	const char *dir = NULL;
	struct fsinfo *v = NULL;
	uint64_t faults[3] = { 0 };
	size_t n = 0;
	int c, r, rc = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "t:", opts, NULL)) != -1) {
		if (c == 't')
			dir = optarg;
		else
			return EXIT_USAGE;
	}
	if (optind != argc) {
		fprintf(stderr, "famfsctl: usage: famfsctl metrics [--textfile DIR]\n");
		return EXIT_USAGE;
	}
	r = list_fs(&v, &n, &e);
	for (int k = 0; r >= 0 && k < 3; k++) {
		static const char *const names[] = { "FaultsPTE", "FaultsPMD", "FaultsPUD" };

		r = sd_bus_get_property_trivial(bus, BUS_NAME, ROOT_PATH, MGR_IFACE, names[k], &e, 't',
						&faults[k]);
	}
	if (r < 0)
		return fail_call("read the metrics", NULL, &e, r);
	if (!dir) {
		write_metrics(stdout, v, n, faults);
	} else {
		char tmp[PATH_MAX], final[PATH_MAX];
		FILE *o;
		int fd;

		snprintf(final, sizeof(final), "%s/famfs.prom", dir);
		snprintf(tmp, sizeof(tmp), "%s/.famfs.prom.XXXXXX", dir);
		fd = mkstemp(tmp);
		o = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!o) {
			fprintf(stderr, "famfsctl: cannot create a file in %s: %s\n", dir, strerror(errno));
			rc = EXIT_FAIL;
		} else {
			write_metrics(o, v, n, faults);
			if (fchmod(fd, 0644) < 0 || fflush(o) != 0 || fsync(fd) < 0 || ferror(o)) {
				fprintf(stderr, "famfsctl: cannot write %s: %s\n", tmp, strerror(errno));
				rc = EXIT_FAIL;
			}
			fclose(o);
			if (rc == 0 && rename(tmp, final) < 0) {
				fprintf(stderr, "famfsctl: cannot rename %s to %s: %s\n", tmp, final, strerror(errno));
				rc = EXIT_FAIL;
			}
			if (rc)
				unlink(tmp);
		}
	}
	for (size_t i = 0; i < n; i++)
		fsinfo_clear(&v[i]);
	free(v);
	return rc;
}

static void usage(FILE *o)
{
	fprintf(o,
		"Usage: famfsctl [--json] [--no-ask-password] COMMAND [ARGS]\n\n"
		"Commands:\n"
		"  status                       attached file systems, health, usage\n"
		"  ls [-l] PATH                 list a directory\n"
		"  create -s SIZE [-m MODE] PATH  create a (preallocated) file\n"
		"      -N STRIPS -B BUCKETS -C CHUNK  (create, cp) interleave it\n"
		"  mkdir [-p] [-m MODE] PATH    create a directory\n"
		"  cp [-m MODE] LOCAL PATH      create PATH and copy LOCAL into it\n"
		"  cat PATH...                  write file contents to stdout\n"
		"  map PATH                     show a file's extents\n"
		"  check [MOUNTPOINT...]        run the checker (exit 0 clean, 4 damaged)\n"
		"  metrics [--textfile DIR]     Prometheus text format\n\n"
		"Options:\n"
		"  -j, --json                   JSON output (status, ls, map, check)\n"
		"      --no-ask-password        do not let polkit ask for a password\n"
		"  -h, --help                   this help\n"
		"      --version                the version\n"
		"The daemon is found on the system bus (DBUS_SYSTEM_BUS_ADDRESS overrides it).\n");
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "status", cmd_status }, { "ls", cmd_ls }, { "create", cmd_create }, { "mkdir", cmd_mkdir },
		{ "cp", cmd_cp }, { "cat", cmd_cat }, { "map", cmd_map }, { "check", cmd_check },
		{ "metrics", cmd_metrics },
	};
	int a, r;

	for (a = 1; a < argc && argv[a][0] == '-'; a++) {
		if (!strcmp(argv[a], "--json") || !strcmp(argv[a], "-j"))
			arg_json = true;
		else if (!strcmp(argv[a], "--no-ask-password"))
			arg_ask_password = false;
		else if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[a], "--version")) {
			printf("famfsctl %s\n", PACKAGE_VERSION);
			return 0;
		} else {
			fprintf(stderr, "famfsctl: unknown option %s\n", argv[a]);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (a >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	/* --json may also follow the command */
	for (int k = a + 1; k < argc; k++) {
		if (!strcmp(argv[k], "--json") || !strcmp(argv[k], "-j")) {
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
				fprintf(stderr, "famfsctl: out of memory\n");
				return EXIT_FAIL;
			}
		}
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(cmds[i].name, argv[a]) == 0) {
			if (connect_bus() < 0)
				return strcmp(argv[a], "check") ? EXIT_FAIL : 8;
			r = cmds[i].fn(argc - a, argv + a);
			sd_bus_flush_close_unref(bus);
			return r;
		}
	}
	fprintf(stderr, "famfsctl: unknown command \"%s\"\n", argv[a]);
	usage(stderr);
	return EXIT_USAGE;
}
