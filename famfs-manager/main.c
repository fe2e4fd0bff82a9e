// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * famfs-manager: attaches famfs devices, follows their logs and serves
 * org.famfs.Manager on the system bus.  main() wires the layers: the
 * configuration, the manager core with its device sources and follower,
 * and the bus server, which hears of the core's changes through the
 * struct manager_events registered here.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <systemd/sd-daemon.h>

#include "config.h"
#include "bus.h"
#include "cleanup.h"
#include "famfs/bus-api.h"
#include "follower.h"
#include "hotplug.h"
#include "kernel-mount.h"
#include "logging.h"
#include "manager.h"
#include "medium-guard.h"
#include "systemd-restart.h"
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
	if (errno || end == v || *end || v[0] == '-' || x < min || x > 3600ULL * 1000)
		return log_error_errno(EINVAL, "invalid %s \"%s\": expected milliseconds, %llu to 3600000", opt, v,
				       (unsigned long long)min);
	*ret = x;
	return 0;
}

static void notify_status(struct manager *m, bool ready)
{
	size_t ok = manager_count_healthy(m);

	(void)sd_notifyf(0, "%sSTATUS=%zu file system(s) attached, %zu healthy, %zu degraded or failed",
			 ready ? "READY=1\n" : "", m->nfsys, ok, m->nfsys - ok);
}

/*
 * The event loop's first turn, before any bus message is read: the
 * attaches that adopted a mount replay the log now (the name is already
 * owned, so the mount was taken over as early as it can be; every answer
 * still sees the whole namespace), and then the daemon is ready.
 */
static int on_started(sd_event_source *s, void *userdata)
{
	struct manager *m = userdata;

	(void)s;
	manager_finish_start(m);
	notify_status(m, true);
	log_info("ready on the bus as %s (%zu file systems, poll %llu ms)", FAMFS_BUS_NAME, m->nfsys,
		 (unsigned long long)m->cfg.poll_ms);
	return 0;
}

/* The core's events, as the bus server shows them. */
struct daemon {
	struct manager m;
	struct bus_server *server;
};

static void on_fs_added(void *userdata, struct fsys *f)
{
	struct daemon *d = userdata;

	bus_fsys_added(d->server, f);
}

static void on_fs_removed(void *userdata, struct fsys *f)
{
	struct daemon *d = userdata;

	bus_fsys_removed(d->server, f);
}

static void on_changed(void *userdata, bool now)
{
	struct daemon *d = userdata;

	if (!now) {
		bus_schedule_flush(d->server);
		return;
	}
	bus_flush_changes(d->server);
	notify_status(&d->m, false);
}

static void on_faults_changed(void *userdata)
{
	struct daemon *d = userdata;

	bus_faults_changed(d->server);
}

static void on_job_added(void *userdata, struct job *j)
{
	struct daemon *d = userdata;

	bus_job_added(d->server, j);
}

static void on_job_finished(void *userdata, struct job *j)
{
	struct daemon *d = userdata;

	bus_job_finished(d->server, j);
}

static void on_job_removed(void *userdata, struct job *j)
{
	struct daemon *d = userdata;

	bus_job_removed(d->server, j);
}

static const struct manager_events daemon_events = {
	.fs_added = on_fs_added,
	.fs_removed = on_fs_removed,
	.changed = on_changed,
	.faults_changed = on_faults_changed,
	.job_added = on_job_added,
	.job_finished = on_job_finished,
	.job_removed = on_job_removed,
};

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct manager *m = userdata;

	(void)sd_notify(0, "STOPPING=1\nSTATUS=Shutting down");
	return sd_event_exit(m->event, 0);
}

/* SIGHUP: Reload, as the bus method does it. */
static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct manager *m = userdata;
	struct famfs_err err = {0};

	(void)sd_notify(0, "RELOADING=1");
	(void)manager_reload(m, &err);
	notify_status(m, true);
	return 0;
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
	struct daemon d = {0};
	struct manager *m = &d.m;
	sd_event_source *started = NULL;
	struct manager_config *cli = &m->source.overlay;
	const char *config_path = MANAGER_DEFAULT_CONFIG;
	bool config_given = false;
	struct famfs_err err = {0};
	sd_bus *bus = NULL;
	sigset_t ss;
	int c, r;

	manager_init(m);
	config_init(cli);
	while ((c = getopt_long(argc, argv, "d:r:p:g:u:c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (config_add_device(cli, optarg, &err) < 0) {
				log_error("--device %s: %s", optarg, err.msg);
				return 1;
			}
			break;
		case 'r':
			if (optarg[0] != '/') {
				log_error("--mount-root must be an absolute path, not \"%s\"", optarg);
				return 1;
			}
			free(cli->mount_root);
			cli->mount_root = strdup(optarg);
			break;
		case 'p':
			if (parse_ms_arg("--poll-interval", optarg, 1, &cli->poll_ms) < 0)
				return 1;
			m->source.poll_given = true;
			break;
		case 'g':
			if (parse_ms_arg("--torn-tail-grace", optarg, 0, &cli->grace_ms) < 0)
				return 1;
			m->source.grace_given = true;
			break;
		case 'u':
			free(cli->system_uuid_file);
			cli->system_uuid_file = strdup(optarg);
			break;
		case 'c':
			config_path = optarg;
			config_given = true;
			break;
		case OPT_NO_POLKIT:
			m->source.no_polkit = true;
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
		log_error("unexpected argument \"%s\"", argv[optind]);
		return 1;
	}

	/* The file first, then the command line on top; Reload and SIGHUP read both again. */
	m->source.path = strdup(config_path);
	m->source.must_exist = config_given;
	if (!m->source.path) {
		log_error("out of memory");
		return 1;
	}
	config_free(&m->cfg);
	r = manager_load_config(m, &m->cfg, &err);
	if (r < 0) {
		/* EX_CONFIG: the unit's RestartPreventExitStatus, no restart loop */
		log_error("%s", err.msg);
		(void)sd_notifyf(0, "STATUS=Configuration error: %s", err.msg);
		manager_done(m);
		return EX_CONFIG;
	}

	r = famfs_system_uuid_get(m->cfg.system_uuid_file, false, m->host_uuid, &err);
	if (r < 0)
		log_warning("no system UUID (%s): this host is a client of every file system", err.msg);
	else
		m->have_host_uuid = true;

	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGHUP);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	if (medium_guard_install() < 0)
		log_warning_errno(errno, "cannot install the SIGBUS handler: %m");
	signal(SIGPIPE, SIG_IGN);

	r = sd_event_default(&m->event);
	if (r < 0) {
		log_error_errno(r, "cannot create the event loop: %m");
		return 1;
	}
	(void)sd_event_add_signal(m->event, NULL, SIGTERM, on_signal, m);
	(void)sd_event_add_signal(m->event, NULL, SIGINT, on_signal, m);
	(void)sd_event_add_signal(m->event, NULL, SIGHUP, on_sighup, m);
	(void)sd_event_set_watchdog(m->event, true);

	m->starting = true;
	for (size_t i = 0; i < m->cfg.ndevices; i++)
		(void)manager_attach(m, m->cfg.devices[i], "attached", NULL);
	if (m->cfg.ndevices == 0 && !m->cfg.udev)
		log_warning("no devices configured (use --device or %s)", config_path);

	r = sd_bus_open_system(&bus);
	if (r < 0) {
		log_error_errno(r, "cannot connect to the system bus%s%s: %m",
				getenv("DBUS_SYSTEM_BUS_ADDRESS") ? " at " : "",
				getenv("DBUS_SYSTEM_BUS_ADDRESS") ? getenv("DBUS_SYSTEM_BUS_ADDRESS") : "");
		goto out;
	}
	r = bus_server_new(m, bus, &d.server);
	if (r < 0) {
		log_error_errno(r, "cannot set up the bus objects: %m");
		goto out;
	}
	manager_set_events(m, &daemon_events, &d);
	/* Devices already there become objects before anyone sees the name. */
	(void)hotplug_start(m);
	follower_update_faults(m);
	r = sd_bus_request_name(d.server->bus, FAMFS_BUS_NAME, 0);
	if (r < 0) {
		log_error_errno(r, "cannot own %s: %m%s", FAMFS_BUS_NAME,
				r == -EEXIST ? " (is another famfs-manager running?)" :
				r == -EACCES ? " (the bus policy allows only root to own it)" : "");
		goto out;
	}
	r = follower_start(m);
	if (r < 0) {
		log_error_errno(r, "cannot start the follower timer: %m");
		goto out;
	}
	/* Before the first bus message: the bus's source has a lower priority. */
	r = sd_event_add_defer(m->event, &started, on_started, m);
	if (r >= 0)
		r = sd_event_source_set_priority(started, SD_EVENT_PRIORITY_IMPORTANT);
	if (r < 0) {
		started = sd_event_source_unref(started);
		(void)on_started(NULL, m);
	}
	r = sd_event_loop(m->event);
	if (r < 0)
		log_error_errno(r, "event loop failed: %m");
	else if (systemd_restart_pending()) {
		log_info("systemd is restarting the service: leaving the mounts for the next instance to adopt");
		kernel_mounts_leave_for_restart();
	}
out:
	sd_event_source_unref(started);
	hotplug_stop(m);
	follower_stop(m);
	manager_set_events(m, NULL, NULL);
	d.server = bus_server_free(d.server);
	manager_done(m);
	sd_event_unref(m->event);
	return r < 0 ? 1 : 0;
}
