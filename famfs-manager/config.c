// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * /etc/famfs/manager.conf: a small ini file.
 *
 *   [manager]
 *   device = /dev/dax0.0          (repeatable)
 *   mount-root = /run/famfs
 *   poll-interval = 100           (milliseconds)
 *   torn-tail-grace = 2000        (milliseconds)
 *   system-uuid-file = /opt/famfs/system_uuid
 *   polkit = yes
 *   udev, udev-source, automount, backend, kernel-module: see hotplug.h
 *
 *   [filesystem UUID]             (one per file system, see hotplug.h)
 *   automount = no
 *   mount-point = /mnt/shared
 *
 * '#' and ';' start comments.  Unknown keys and sections are errors, so a
 * typo does not silently leave a default in place.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager.h"

#define CONFIG_LINE_MAX 4096

void config_init(struct manager_config *c)
{
	memset(c, 0, sizeof(*c));
	c->poll_ms = MANAGER_DEFAULT_POLL_MS;
	c->grace_ms = MANAGER_DEFAULT_GRACE_MS;
	c->polkit = true;
	hotplug_config_init(&c->hp);
}

void config_free(struct manager_config *c)
{
	for (size_t i = 0; i < c->ndevices; i++)
		free(c->devices[i]);
	free(c->mount_root);
	free(c->system_uuid_file);
	hotplug_config_free(&c->hp);
	memset(c, 0, sizeof(*c));
}

int config_add_device(struct manager_config *c, const char *path, char *errbuf, size_t errlen)
{
	if (path[0] == '\0') {
		snprintf(errbuf, errlen, "empty device path");
		return -EINVAL;
	}
	for (size_t i = 0; i < c->ndevices; i++)
		if (strcmp(c->devices[i], path) == 0)
			return 0;
	if (c->ndevices >= MANAGER_MAX_DEVICES) {
		snprintf(errbuf, errlen, "too many devices (at most %d)", MANAGER_MAX_DEVICES);
		return -E2BIG;
	}
	c->devices[c->ndevices] = strdup(path);
	if (!c->devices[c->ndevices])
		return -ENOMEM;
	c->ndevices++;
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int parse_ms(const char *v, uint64_t min, uint64_t max, uint64_t *ret)
{
	char *end;
	unsigned long long x;

	if (!isdigit((unsigned char)v[0]))
		return -EINVAL;
	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno || *end || x < min || x > max)
		return -EINVAL;
	*ret = x;
	return 0;
}

int config_parse_bool(const char *v, bool *ret)
{
	if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "on"))
		*ret = true;
	else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "off"))
		*ret = false;
	else
		return -EINVAL;
	return 0;
}

int config_set_string(char **dst, const char *v)
{
	char *s = strdup(v);

	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

/* "PATH:LINE: " before a message a key's parser left (or the errno's text). */
static void prefix_location(char *errbuf, size_t errlen, const char *path, unsigned lineno, int r)
{
	char why[256];

	snprintf(why, sizeof(why), "%s", errbuf[0] ? errbuf : strerror(-r));
	snprintf(errbuf, errlen, "%s:%u: %s", path, lineno, why);
}

int config_load(struct manager_config *c, const char *path, bool must_exist,
		char *errbuf, size_t errlen)
{
	char line[CONFIG_LINE_MAX];
	unsigned lineno = 0;
	bool in_manager = true;
	char fs_uuid[64] = "";   /* inside [filesystem UUID] */
	FILE *f;
	int r = 0;

	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT && !must_exist)
			return 0;
		r = -errno;
		snprintf(errbuf, errlen, "cannot open %s: %s", path, strerror(errno));
		return r;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s, *eq, *key, *val;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(errbuf, errlen, "%s:%u: line longer than %d bytes", path, lineno,
				 CONFIG_LINE_MAX - 2);
			r = -EINVAL;
			break;
		}
		s = trim(line);
		if (*s == '\0' || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			char *e = strchr(s, ']');

			if (!e || e[1] != '\0') {
				snprintf(errbuf, errlen, "%s:%u: malformed section header", path, lineno);
				r = -EINVAL;
				break;
			}
			*e = '\0';
			in_manager = strcmp(trim(s + 1), "manager") == 0;
			fs_uuid[0] = '\0';
			if (!in_manager && strncmp(trim(s + 1), "filesystem ", 11) == 0 &&
			    strlen(trim(trim(s + 1) + 11)) < sizeof(fs_uuid)) {
				snprintf(fs_uuid, sizeof(fs_uuid), "%s", trim(trim(s + 1) + 11));
				continue;
			}
			if (!in_manager) {
				snprintf(errbuf, errlen, "%s:%u: unknown section [%s] (only [manager])",
					 path, lineno, trim(s + 1));
				r = -EINVAL;
				break;
			}
			continue;
		}
		eq = strchr(s, '=');
		if (!eq) {
			snprintf(errbuf, errlen, "%s:%u: expected key = value", path, lineno);
			r = -EINVAL;
			break;
		}
		*eq = '\0';
		key = trim(s);
		val = trim(eq + 1);
		if (fs_uuid[0]) {
			r = hotplug_config_key(&c->hp, fs_uuid, key, val, errbuf, errlen);
			if (r == -ENOENT) {
				snprintf(errbuf, errlen, "%s:%u: unknown key \"%s\" in [filesystem %s]", path,
					 lineno, key, fs_uuid);
				r = -EINVAL;
				break;
			}
		} else if (!strcmp(key, "device")) {
			r = config_add_device(c, val, errbuf, errlen);
		} else if (!strcmp(key, "mount-root")) {
			r = val[0] == '/' ? config_set_string(&c->mount_root, val) : -EINVAL;
		} else if (!strcmp(key, "system-uuid-file")) {
			r = val[0] ? config_set_string(&c->system_uuid_file, val) : -EINVAL;
		} else if (!strcmp(key, "poll-interval")) {
			r = parse_ms(val, 1, 3600 * 1000, &c->poll_ms);
		} else if (!strcmp(key, "torn-tail-grace")) {
			r = parse_ms(val, 0, 3600 * 1000, &c->grace_ms);
		} else if (!strcmp(key, "polkit")) {
			r = config_parse_bool(val, &c->polkit);
		} else if ((r = hotplug_config_key(&c->hp, NULL, key, val, errbuf, errlen)) == -ENOENT) {
			snprintf(errbuf, errlen, "%s:%u: unknown key \"%s\"", path, lineno, key);
			r = -EINVAL;
			break;
		}
		if (r < 0) {
			if (r == -EINVAL)
				snprintf(errbuf, errlen, "%s:%u: invalid value \"%s\" for %s", path, lineno,
					 val, key);
			else if (r == -ENOMEM)
				snprintf(errbuf, errlen, "out of memory");
			else
				prefix_location(errbuf, errlen, path, lineno, r);
			break;
		}
	}
	if (r == 0 && ferror(f)) {
		snprintf(errbuf, errlen, "cannot read %s", path);
		r = -EIO;
	}
	fclose(f);
	return r;
}
