// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * famfs-manager: attaches famfs devices, follows their logs and serves
 * org.famfs.Manager on the system bus.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "config.h"
#include "manager.h"
#include "medium-guard.h"
#include "sysuuid.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: famfs-manager [OPTIONS]\n"
		"Attach famfs devices and serve org.famfs.Manager on the system bus.\n\n"
		"  -d, --device PATH            dax or pmem device, or image file (repeatable)\n"
		"  -r, --mount-root DIR         where file systems appear (default %s)\n"
		"  -p, --poll-interval MS       log follower period (default %d)\n"
		"  -g, --torn-tail-grace MS     wait before an invalid log tail degrades health\n"
		"                               (default %d)\n"
		"  -u, --system-uuid-file PATH  this host's system UUID (default %s)\n"
		"  -c, --config PATH            configuration file (default %s)\n"
		"      --no-polkit              deny non-root callers without asking polkit\n"
		"  -h, --help                   show this help\n"
		"      --version                show the version\n",
		MANAGER_DEFAULT_MOUNT_ROOT, MANAGER_DEFAULT_POLL_MS, MANAGER_DEFAULT_GRACE_MS,
		FAMFS_DEFAULT_SYSTEM_UUID_FILE, MANAGER_DEFAULT_CONFIG);
}

static int parse_ms_arg(const char *opt, const char *v, uint64_t min, uint64_t *ret)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno || end == v || *end || v[0] == '-' || x < min || x > 3600ULL * 1000) {
		fprintf(stderr, "famfs-manager: invalid %s \"%s\": expected milliseconds, %llu to 3600000\n",
			opt, v, (unsigned long long)min);
		return -EINVAL;
	}
	*ret = x;
	return 0;
}

static void notify_status(struct manager *m, bool ready);

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct manager *m = userdata;
	bool changed = false;

	for (struct fsys *f = m->fsys; f; f = f->next)
		changed |= fsys_follow(f);
	hotplug_replace_changed_media(m);
	bus_update_faults(m);
	if (changed) {
		bus_flush_changes(m);
		notify_status(m, false);
	}
	(void)sd_event_source_set_time(s, usec + m->cfg.poll_ms * 1000);
	return 0;
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct manager *m = userdata;

	(void)sd_notify(0, "STOPPING=1\nSTATUS=Shutting down");
	return sd_event_exit(m->event, 0);
}

static void notify_status(struct manager *m, bool ready)
{
	size_t ok = 0, bad = 0;

	for (struct fsys *f = m->fsys; f; f = f->next) {
		if (f->health == HEALTH_OK)
			ok++;
		else
			bad++;
	}
	(void)sd_notifyf(0, "%sSTATUS=%zu file system(s) attached, %zu healthy, %zu degraded or failed",
			 ready ? "READY=1\n" : "", m->nfsys, ok, bad);
}

int main(int argc, char **argv)
{
	enum { OPT_VERSION = 256, OPT_NO_POLKIT };
	static const struct option longopts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "mount-root", required_argument, NULL, 'r' },
		{ "poll-interval", required_argument, NULL, 'p' },
		{ "torn-tail-grace", required_argument, NULL, 'g' },
		{ "system-uuid-file", required_argument, NULL, 'u' },
		{ "config", required_argument, NULL, 'c' },
		{ "no-polkit", no_argument, NULL, OPT_NO_POLKIT },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ 0 }
	};
	struct manager m = {0};
	struct manager_config cli;
	const char *config_path = MANAGER_DEFAULT_CONFIG;
	bool config_given = false, poll_given = false, grace_given = false, no_polkit = false;
	struct famfs_err err = {0};
	char errbuf[512];
	struct fsys **tail;
	sigset_t ss;
	int c, r;

	config_init(&cli);
	while ((c = getopt_long(argc, argv, "d:r:p:g:u:c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (config_add_device(&cli, optarg, errbuf, sizeof(errbuf)) < 0) {
				fprintf(stderr, "famfs-manager: --device %s: %s\n", optarg, errbuf);
				return 1;
			}
			break;
		case 'r':
			if (optarg[0] != '/') {
				fprintf(stderr, "famfs-manager: --mount-root must be an absolute path, not \"%s\"\n",
					optarg);
				return 1;
			}
			free(cli.mount_root);
			cli.mount_root = strdup(optarg);
			break;
		case 'p':
			if (parse_ms_arg("--poll-interval", optarg, 1, &cli.poll_ms) < 0)
				return 1;
			poll_given = true;
			break;
		case 'g':
			if (parse_ms_arg("--torn-tail-grace", optarg, 0, &cli.grace_ms) < 0)
				return 1;
			grace_given = true;
			break;
		case 'u':
			free(cli.system_uuid_file);
			cli.system_uuid_file = strdup(optarg);
			break;
		case 'c':
			config_path = optarg;
			config_given = true;
			break;
		case OPT_NO_POLKIT:
			no_polkit = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_VERSION:
			printf("famfs-manager %s\n", PACKAGE_VERSION);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "famfs-manager: unexpected argument \"%s\"\n", argv[optind]);
		return 1;
	}

	/* The file first, then the command line on top. */
	config_init(&m.cfg);
	r = config_load(&m.cfg, config_path, config_given, errbuf, sizeof(errbuf));
	if (r < 0) {
		fprintf(stderr, "famfs-manager: %s\n", errbuf);
		return 1;
	}
	if (cli.ndevices > 0) {
		for (size_t i = 0; i < m.cfg.ndevices; i++)
			free(m.cfg.devices[i]);
		memcpy(m.cfg.devices, cli.devices, sizeof(cli.devices));
		m.cfg.ndevices = cli.ndevices;
		cli.ndevices = 0;
	}
	if (cli.mount_root) {
		free(m.cfg.mount_root);
		m.cfg.mount_root = cli.mount_root;
		cli.mount_root = NULL;
	}
	if (!m.cfg.mount_root)
		m.cfg.mount_root = strdup(MANAGER_DEFAULT_MOUNT_ROOT);
	while (strlen(m.cfg.mount_root) > 1 && m.cfg.mount_root[strlen(m.cfg.mount_root) - 1] == '/')
		m.cfg.mount_root[strlen(m.cfg.mount_root) - 1] = '\0';
	if (cli.system_uuid_file) {
		free(m.cfg.system_uuid_file);
		m.cfg.system_uuid_file = cli.system_uuid_file;
		cli.system_uuid_file = NULL;
	}
	if (poll_given)
		m.cfg.poll_ms = cli.poll_ms;
	if (grace_given)
		m.cfg.grace_ms = cli.grace_ms;
	if (no_polkit)
		m.cfg.polkit = false;
	config_free(&cli);

	r = famfs_system_uuid_get(m.cfg.system_uuid_file, false, m.host_uuid, &err);
	if (r < 0)
		fprintf(stderr, "famfs-manager: no system UUID (%s): this host is a client of every file system\n",
			err.msg);
	else
		m.have_host_uuid = true;

	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	if (medium_guard_install() < 0)
		fprintf(stderr, "famfs-manager: cannot install the SIGBUS handler: %s\n", strerror(errno));
	signal(SIGPIPE, SIG_IGN);

	r = sd_event_default(&m.event);
	if (r < 0) {
		fprintf(stderr, "famfs-manager: cannot create the event loop: %s\n", strerror(-r));
		return 1;
	}
	(void)sd_event_add_signal(m.event, NULL, SIGTERM, on_signal, &m);
	(void)sd_event_add_signal(m.event, NULL, SIGINT, on_signal, &m);
	(void)sd_event_set_watchdog(m.event, true);

	tail = &m.fsys;
	for (size_t i = 0; i < m.cfg.ndevices; i++) {
		struct fsys *f;

		r = fsys_attach(&m, m.cfg.devices[i], &f);
		if (r == -EEXIST)
			continue;
		if (r < 0) {
			fprintf(stderr, "famfs-manager: %s: %s\n", m.cfg.devices[i], strerror(-r));
			continue;
		}
		*tail = f;
		tail = &f->next;
		m.nfsys++;
		fprintf(stderr, "famfs-manager: %s: %s at %s, %s, health %s%s%s\n", f->bt.device,
			f->bt.uuid[0] ? f->bt.uuid : "(no uuid)", f->bt.mountpoint,
			f->bt.fs ? (f->bt.fs->master ? "master" : "client") : "not usable",
			health_name(f->health), f->nreasons ? ": " : "", f->nreasons ? f->reasons[0] : "");
	}
	if (m.cfg.ndevices == 0 && !m.cfg.hp.udev)
		fprintf(stderr, "famfs-manager: no devices configured (use --device or %s)\n", config_path);

	r = sd_bus_open_system(&m.bus);
	if (r < 0) {
		fprintf(stderr, "famfs-manager: cannot connect to the system bus%s%s: %s\n",
			getenv("DBUS_SYSTEM_BUS_ADDRESS") ? " at " : "",
			getenv("DBUS_SYSTEM_BUS_ADDRESS") ? getenv("DBUS_SYSTEM_BUS_ADDRESS") : "",
			strerror(-r));
		goto out;
	}
	r = bus_setup(&m);
	if (r < 0) {
		fprintf(stderr, "famfs-manager: cannot set up the bus objects: %s\n", strerror(-r));
		goto out;
	}
	/* Devices already there become objects before anyone sees the name. */
	(void)hotplug_start(&m);
	bus_update_faults(&m);
	r = sd_bus_request_name(m.bus, MANAGER_BUS_NAME, 0);
	if (r < 0) {
		fprintf(stderr, "famfs-manager: cannot own %s: %s%s\n", MANAGER_BUS_NAME, strerror(-r),
			r == -EEXIST ? " (is another famfs-manager running?)" :
			r == -EACCES ? " (the bus policy allows only root to own it)" : "");
		goto out;
	}
	r = sd_event_add_time_relative(m.event, &m.timer, CLOCK_MONOTONIC, m.cfg.poll_ms * 1000,
				       1000, on_timer, &m);
	if (r < 0) {
		fprintf(stderr, "famfs-manager: cannot start the follower timer: %s\n", strerror(-r));
		goto out;
	}
	(void)sd_event_source_set_enabled(m.timer, SD_EVENT_ON);
	notify_status(&m, true);
	fprintf(stderr, "famfs-manager: ready on the bus as %s (%zu file systems, poll %llu ms)\n",
		MANAGER_BUS_NAME, m.nfsys, (unsigned long long)m.cfg.poll_ms);
	r = sd_event_loop(m.event);
	if (r < 0)
		fprintf(stderr, "famfs-manager: event loop failed: %s\n", strerror(-r));
out:
	hotplug_stop(&m);
	sd_event_source_unref(m.timer);
	sd_event_source_unref(m.flush);
	if (m.bus) {
		sd_bus_flush(m.bus);
		sd_bus_flush_close_unref(m.bus);
	}
	while (m.fsys) {
		struct fsys *n = m.fsys->next;

		fsys_free(m.fsys);
		m.fsys = n;
	}
	config_free(&m.cfg);
	sd_event_unref(m.event);
	return r < 0 ? 1 : 0;
}
