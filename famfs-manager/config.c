// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * /etc/famfs/manager.conf: a small ini file, every key of it parsed here.
 *
 *   [manager]
 *   device = /dev/dax0.0          (repeatable)
 *   mount-root = /run/famfs
 *   poll-interval = 100           (milliseconds)
 *   follow-interval = 2           (milliseconds; 0: none)
 *   follow-idle-interval = 20     (milliseconds, after 3 s without a log moving)
 *   torn-tail-grace = 2000        (milliseconds)
 *   system-uuid-file = /opt/famfs/system_uuid
 *   polkit = yes
 *   udev = yes|no                 follow dax/pmem devices (default yes)
 *   udev-source = auto|udev|kernel
 *   automount = yes|no            default for every file system (yes)
 *   backend = auto|kernel|view    auto: kernel when famfs.ko is there
 *   kernel-module = famfs | /path/famfs.ko   load it when missing (unset: never)
 *
 *   [filesystem UUID]             (one per file system)
 *   automount = no
 *   mount-point = /mnt/shared
 *   backend = view
 *
 * '#' and ';' start comments.  Unknown keys and sections are errors, so a
 * typo does not silently leave a default in place.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include "cleanup.h"
#include "manager-config.h"

#define CONFIG_LINE_MAX 4096

void config_init(struct manager_config *c)
{
	memset(c, 0, sizeof(*c));
	c->poll_ms = MANAGER_DEFAULT_POLL_MS;
	c->follow_ms = MANAGER_DEFAULT_FOLLOW_MS;
	c->follow_idle_ms = MANAGER_DEFAULT_FOLLOW_IDLE_MS;
	c->grace_ms = MANAGER_DEFAULT_GRACE_MS;
	c->polkit = true;
	c->udev = true;
	c->automount = true;
	c->backend = BACKEND_AUTO;
}

void config_free(struct manager_config *c)
{
	for (size_t i = 0; i < c->ndevices; i++)
		free(c->devices[i]);
	free(c->mount_root);
	free(c->system_uuid_file);
	free(c->udev_source);
	free(c->kernel_module);
	for (size_t i = 0; i < c->nrules; i++)
		free(c->rules[i].mountpoint);
	memset(c, 0, sizeof(*c));
}

int config_add_device(struct manager_config *c, const char *path, struct famfs_err *err)
{
	if (path[0] == '\0')
		return famfs_err_set(err, -EINVAL, "empty device path");
	for (size_t i = 0; i < c->ndevices; i++)
		if (strcmp(c->devices[i], path) == 0)
			return 0;
	if (c->ndevices >= MANAGER_MAX_DEVICES)
		return famfs_err_set(err, -E2BIG, "too many devices (at most %d)", MANAGER_MAX_DEVICES);
	c->devices[c->ndevices] = strdup(path);
	if (!c->devices[c->ndevices])
		return famfs_err_set(err, -ENOMEM, "out of memory");
	c->ndevices++;
	return 0;
}

const struct fs_rule *config_rule(const struct manager_config *c, const char *uuid)
{
	for (size_t i = 0; i < c->nrules; i++)
		if (!strcmp(c->rules[i].uuid, uuid))
			return &c->rules[i];
	return NULL;
}

struct fs_rule *config_rule_add(struct manager_config *c, const char *uuid)
{
	struct fs_rule *rule = (struct fs_rule *)config_rule(c, uuid);

	if (rule || c->nrules >= MANAGER_MAX_RULES)
		return rule;
	rule = &c->rules[c->nrules++];
	memset(rule, 0, sizeof(*rule));
	snprintf(rule->uuid, sizeof(rule->uuid), "%s", uuid);
	rule->automount = -1;
	rule->backend = -1;
	return rule;
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

/* Values as the config file spells them: yes/no, true/false, on/off, 1/0. */
static int parse_bool(const char *v, bool *ret)
{
	if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "on"))
		*ret = true;
	else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "off"))
		*ret = false;
	else
		return -EINVAL;
	return 0;
}

/* Replaces *@dst with a copy of @v. */
static int set_string(char **dst, const char *v)
{
	char *s = strdup(v);

	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

/* A mount point: absolute, no "." or ".." component, no doubled slashes. */
static bool mountpoint_ok(const char *p)
{
	size_t n = strlen(p);

	if (p[0] != '/' || n < 2 || n >= 1024 || p[n - 1] == '/')
		return false;
	if (strstr(p, "//") || strstr(p, "/./") || strstr(p, "/../"))
		return false;
	if ((n >= 2 && !strcmp(p + n - 2, "/.")) || (n >= 3 && !strcmp(p + n - 3, "/..")))
		return false;
	for (const char *s = p; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

static int parse_backend(const char *v, int *ret)
{
	enum backend_choice b;

	if (backend_choice_parse(v, &b) < 0)
		return -EINVAL;
	*ret = (int)b;
	return 0;
}

/* One key of [manager]: 0, -ENOENT when there is no such key, -EINVAL for a bad value. */
static int manager_key(struct manager_config *c, const char *key, const char *val,
		       struct famfs_err *err)
{
	int b, r;

	if (!strcmp(key, "device"))
		return config_add_device(c, val, err);
	if (!strcmp(key, "mount-root"))
		return val[0] == '/' ? set_string(&c->mount_root, val) : -EINVAL;
	if (!strcmp(key, "system-uuid-file"))
		return val[0] ? set_string(&c->system_uuid_file, val) : -EINVAL;
	if (!strcmp(key, "poll-interval"))
		return parse_ms(val, 1, 3600 * 1000, &c->poll_ms);
	if (!strcmp(key, "follow-interval"))
		return parse_ms(val, 0, 1000, &c->follow_ms);
	if (!strcmp(key, "follow-idle-interval"))
		return parse_ms(val, 1, 1000, &c->follow_idle_ms);
	if (!strcmp(key, "torn-tail-grace"))
		return parse_ms(val, 0, 3600 * 1000, &c->grace_ms);
	if (!strcmp(key, "polkit"))
		return parse_bool(val, &c->polkit);
	if (!strcmp(key, "udev"))
		return parse_bool(val, &c->udev);
	if (!strcmp(key, "automount"))
		return parse_bool(val, &c->automount);
	if (!strcmp(key, "udev-source")) {
		if (strcmp(val, "auto") && strcmp(val, "udev") && strcmp(val, "kernel"))
			return -EINVAL;
		return set_string(&c->udev_source, val);
	}
	if (!strcmp(key, "backend")) {
		r = parse_backend(val, &b);
		if (r >= 0)
			c->backend = (enum backend_choice)b;
		return r;
	}
	if (!strcmp(key, "kernel-module")) {
		if (!val[0] || (val[0] != '/' && strchr(val, '/')) || val[0] == '-')
			return -EINVAL;
		return set_string(&c->kernel_module, val);
	}
	return -ENOENT;
}

/* One key of [filesystem @uuid], as manager_key(). */
static int filesystem_key(struct manager_config *c, const char *uuid, const char *key, const char *val,
			  struct famfs_err *err)
{
	struct fs_rule *rule;
	char canon[37];
	uuid_t u;
	bool yes;

	if (uuid_parse(uuid, u) < 0)
		return famfs_err_set(err, -EINVAL, "[filesystem %s]: not a UUID", uuid);
	if (strcmp(key, "automount") && strcmp(key, "mount-point") && strcmp(key, "backend"))
		return -ENOENT;
	uuid_unparse_lower(u, canon);
	rule = config_rule_add(c, canon);
	if (!rule)
		return famfs_err_set(err, -E2BIG, "more than %d [filesystem] sections", MANAGER_MAX_RULES);
	if (!strcmp(key, "automount")) {
		if (parse_bool(val, &yes) < 0)
			return -EINVAL;
		rule->automount = yes;
		return 0;
	}
	if (!strcmp(key, "backend"))
		return parse_backend(val, &rule->backend);
	if (!mountpoint_ok(val))
		return -EINVAL;
	return set_string(&rule->mountpoint, val);
}

int config_load(struct manager_config *c, const char *path, bool must_exist, struct famfs_err *err)
{
	_cleanup_fclose_ FILE *f = NULL;
	char line[CONFIG_LINE_MAX];
	unsigned lineno = 0;
	char fs_uuid[64] = "";   /* inside [filesystem UUID] */
	int r = 0;

	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT && !must_exist)
			return 0;
		return famfs_err_set(err, -errno, "cannot open %s: %s", path, strerror(errno));
	}
	while (fgets(line, sizeof(line), f)) {
		struct famfs_err kerr = {0};
		char *s, *eq, *key, *val;

		lineno++;
		if (!strchr(line, '\n') && !feof(f))
			return famfs_err_set(err, -EINVAL, "%s:%u: line longer than %d bytes", path, lineno,
					     CONFIG_LINE_MAX - 2);
		s = trim(line);
		if (*s == '\0' || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			char *e = strchr(s, ']'), *name;

			if (!e || e[1] != '\0')
				return famfs_err_set(err, -EINVAL, "%s:%u: malformed section header", path, lineno);
			*e = '\0';
			name = trim(s + 1);
			fs_uuid[0] = '\0';
			if (!strcmp(name, "manager"))
				continue;
			if (strncmp(name, "filesystem ", 11) == 0 && strlen(trim(name + 11)) < sizeof(fs_uuid)) {
				snprintf(fs_uuid, sizeof(fs_uuid), "%s", trim(name + 11));
				continue;
			}
			return famfs_err_set(err, -EINVAL, "%s:%u: unknown section [%s] (only [manager])", path,
					     lineno, name);
		}
		eq = strchr(s, '=');
		if (!eq)
			return famfs_err_set(err, -EINVAL, "%s:%u: expected key = value", path, lineno);
		*eq = '\0';
		key = trim(s);
		val = trim(eq + 1);
		r = fs_uuid[0] ? filesystem_key(c, fs_uuid, key, val, &kerr) : manager_key(c, key, val, &kerr);
		if (r == -ENOENT && fs_uuid[0])
			return famfs_err_set(err, -EINVAL, "%s:%u: unknown key \"%s\" in [filesystem %s]", path,
					     lineno, key, fs_uuid);
		if (r == -ENOENT)
			return famfs_err_set(err, -EINVAL, "%s:%u: unknown key \"%s\"", path, lineno, key);
		if (r == -EINVAL)
			return famfs_err_set(err, -EINVAL, "%s:%u: invalid value \"%s\" for %s", path, lineno,
					     val, key);
		if (r == -ENOMEM)
			return famfs_err_set(err, -ENOMEM, "out of memory");
		if (r < 0)
			return famfs_err_set(err, r, "%s:%u: %s", path, lineno, kerr.msg[0] ? kerr.msg : strerror(-r));
	}
	if (ferror(f))
		return famfs_err_set(err, -EIO, "cannot read %s", path);
	return 0;
}

/* A copy of @s, or NULL for NULL; false when out of memory. */
static bool copy_string(char **dst, const char *s)
{
	char *c = s ? strdup(s) : NULL;

	if (s && !c)
		return false;
	free(*dst);
	*dst = c;
	return true;
}

int config_apply_overlay(struct manager_config *cfg, const struct manager_config *cli, bool poll_given,
			 bool grace_given, bool no_polkit)
{
	if (cli->ndevices > 0) {
		for (size_t i = 0; i < cfg->ndevices; i++)
			free(cfg->devices[i]);
		cfg->ndevices = 0;
		for (size_t i = 0; i < cli->ndevices; i++) {
			cfg->devices[i] = strdup(cli->devices[i]);
			if (!cfg->devices[i])
				return -ENOMEM;
			cfg->ndevices++;
		}
	}
	if (cli->mount_root && !copy_string(&cfg->mount_root, cli->mount_root))
		return -ENOMEM;
	if (cli->system_uuid_file && !copy_string(&cfg->system_uuid_file, cli->system_uuid_file))
		return -ENOMEM;
	if (poll_given)
		cfg->poll_ms = cli->poll_ms;
	if (grace_given)
		cfg->grace_ms = cli->grace_ms;
	if (no_polkit)
		cfg->polkit = false;
	if (!cfg->mount_root && !copy_string(&cfg->mount_root, MANAGER_DEFAULT_MOUNT_ROOT))
		return -ENOMEM;
	while (strlen(cfg->mount_root) > 1 && cfg->mount_root[strlen(cfg->mount_root) - 1] == '/')
		cfg->mount_root[strlen(cfg->mount_root) - 1] = '\0';
	return 0;
}
