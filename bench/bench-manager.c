// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * famfs-manager benchmarks, printed with medians:
 *   attach   attach + full replay of the interop "many" image (15,420 entries)
 *   create   single CreateFile calls per second over a private bus
 *   batch    CreateFiles files per second
 *   follow   append on the master to FilesAdded on a client (p50, p99), and
 *            for the first file after the client's peeks slowed down
 *   idle     a client daemon's CPU use over 60 s while nothing happens
 *
 * bench-manager --manager PATH --mkfs PATH [--interop DIR] [--only NAME] [--config FILE]
 * [--idle-seconds N]
 * (--config: the daemons' configuration file, default none: the defaults;
 * --idle-seconds: how long idle CPU is measured, default 60)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#include "famfs/bus-api.h"
#include "manager.h"


static const char *manager_exe, *mkfs_exe, *interop = "../shared/interop", *only;
static char config_arg[300] = "--config=/dev/null";
static unsigned idle_secs = 60;
static char workdir[] = "/tmp/famfs-bench-XXXXXX";

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double percentile(double *v, size_t n, double p)
{
	size_t k;

	qsort(v, n, sizeof(*v), cmp_double);
	k = (size_t)(p * (n - 1) + 0.5);
	return v[k];
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static pid_t spawn(char *const argv[], const char *bus_addr)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (bus_addr)
			setenv("DBUS_SYSTEM_BUS_ADDRESS", bus_addr, 1);
		freopen("/dev/null", "w", stderr);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static void stop(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
}

struct bus {
	char addr[300];
	pid_t pid;
};

static void bus_start(struct bus *b, const char *name)
{
	char dir[256], conf[300], arg[320];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/%s", workdir, name);
	mkdir(dir, 0755);
	snprintf(conf, sizeof(conf), "%s/bus.conf", dir);
	f = fopen(conf, "w");
	fprintf(f, "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
		" \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
		"<busconfig><type>system</type><listen>unix:path=%s/sock</listen><auth>EXTERNAL</auth>\n"
		"<policy context=\"default\"><allow user=\"*\"/><allow own=\"*\"/>"
		"<allow send_destination=\"*\"/><allow receive_sender=\"*\"/></policy>"
		"<limit name=\"max_incoming_bytes\">1000000000</limit>"
		"<limit name=\"max_message_size\">200000000</limit></busconfig>\n", dir);
	fclose(f);
	snprintf(arg, sizeof(arg), "--config-file=%s", conf);
	snprintf(b->addr, sizeof(b->addr), "unix:path=%s/sock", dir);
	{
		char *argv[] = { "/usr/bin/dbus-daemon", arg, "--nofork", "--nopidfile", NULL };

		b->pid = spawn(argv, NULL);
	}
	for (int i = 0; i < 500; i++) {
		char s[300];

		snprintf(s, sizeof(s), "%s/sock", dir);
		if (access(s, F_OK) == 0)
			return;
		usleep(10000);
	}
	fprintf(stderr, "bench: dbus-daemon did not start\n");
	exit(1);
}

static sd_bus *connect_to(const char *addr)
{
	sd_bus *bus = NULL;

	if (sd_bus_new(&bus) < 0 || sd_bus_set_address(bus, addr) < 0 || sd_bus_set_bus_client(bus, 1) < 0 ||
	    sd_bus_start(bus) < 0) {
		fprintf(stderr, "bench: cannot connect to %s\n", addr);
		exit(1);
	}
	return bus;
}

static pid_t daemon_start(struct bus *b, const char *image, const char *uuid_file, sd_bus **ret)
{
	char *argv[] = { (char *)manager_exe, config_arg, "--mount-root=/run/famfs-bench",
			 "--system-uuid-file", (char *)uuid_file, "--device", (char *)image, NULL };
	pid_t pid = spawn(argv, b->addr);
	sd_bus *bus = connect_to(b->addr);

	for (int i = 0; i < 1000; i++) {
		sd_bus_message *reply = NULL;
		int has = 0;

		if (sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
				       "NameHasOwner", NULL, &reply, "s", FAMFS_BUS_NAME) >= 0)
			sd_bus_message_read(reply, "b", &has);
		sd_bus_message_unref(reply);
		if (has) {
			*ret = bus;
			return pid;
		}
		usleep(10000);
	}
	fprintf(stderr, "bench: famfs-manager did not start\n");
	exit(1);
}

/* Waits for output too, unlike sd_bus_call() after a partial write. */
struct done {
	bool done;
	bool error;
};

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
	struct done *d = userdata;

	d->done = true;
	d->error = sd_bus_message_is_method_error(m, NULL);
	if (d->error)
		fprintf(stderr, "bench: %s\n", sd_bus_message_get_error(m)->message);
	return 0;
}

static int call_wait(sd_bus *bus, sd_bus_message *msg)
{
	struct done d = {0};
	int r = sd_bus_call_async(bus, NULL, msg, on_reply, &d, 600ULL * 1000000);

	while (r >= 0 && !d.done) {
		r = sd_bus_process(bus, NULL);
		if (r == 0)
			r = sd_bus_wait(bus, 100000);
	}
	return r < 0 ? r : d.error ? -EIO : 0;
}

static void bench_attach(void)
{
	char src[512], img[512];
	double v[15];
	int n = 15;

	snprintf(src, sizeof(src), "%s/many/many.img.zst", interop);
	snprintf(img, sizeof(img), "/var/tmp/famfs-bench-many.img");
	if (access(src, R_OK) != 0) {
		printf("attach: skipped (%s not found)\n", src);
		return;
	}
	if (access(img, R_OK) != 0 && sh("zstd -q -d --sparse '%s' -o '%s'", src, img) != 0) {
		printf("attach: skipped (cannot decompress %s)\n", src);
		return;
	}
	for (int i = 0; i < n; i++) {
		struct manager m = {0};
		struct fsys *f = NULL;
		uint64_t t0;
		int r;

		manager_init(&m);
		m.cfg.mount_root = strdup("/run/famfs-bench");
		t0 = now_ns();
		r = manager_attach(&m, img, "attached", &f);
		v[i] = (now_ns() - t0) / 1e6;
		if (r < 0 || !f->bt.fs || fsys_count(f, false) != 15420) {
			printf("attach: failed (%s)\n", r < 0 ? strerror(-r) : f->attach_error);
			return;
		}
		manager_done(&m);
	}
	{
		double med = percentile(v, n, 0.5);

		printf("attach + check + full replay of many (15420 entries, 32 GiB sparse): median %.2f ms, min %.2f ms (%d runs; target <= 20 ms)\n",
		       med, v[0], n);
	}
}

static int create_one(sd_bus *bus, const char *path)
{
	sd_bus_message *reply = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int r = sd_bus_call_method(bus, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "CreateFile", &e,
				   &reply, "stua{sv}", path, (uint64_t)4096, 0644, 0);

	if (r < 0)
		fprintf(stderr, "bench: CreateFile %s: %s\n", path, e.message);
	sd_bus_error_free(&e);
	sd_bus_message_unref(reply);
	return r;
}

/* An empty method call to the daemon: what any call over the bus costs */
static int ping(sd_bus *bus)
{
	sd_bus_message *reply = NULL;
	int r = sd_bus_call_method(bus, FAMFS_BUS_NAME, "/", "org.freedesktop.DBus.Peer", "Ping", NULL, &reply, "");

	sd_bus_message_unref(reply);
	return r;
}

static uint64_t cpu_ns(pid_t pid);

/* CPU time per call, in microseconds, of the three processes a call goes through */
struct call_cost {
	double client_us, broker_us, daemon_us;
};

struct cost_meter {
	pid_t daemon, broker;
	uint64_t client0, broker0, daemon0;
};

static void cost_start(struct cost_meter *cm)
{
	cm->client0 = cpu_ns(getpid());
	cm->broker0 = cpu_ns(cm->broker);
	cm->daemon0 = cpu_ns(cm->daemon);
}

static struct call_cost cost_per_call(const struct cost_meter *cm, int calls)
{
	return (struct call_cost){
		.client_us = (cpu_ns(getpid()) - cm->client0) / 1e3 / calls,
		.broker_us = (cpu_ns(cm->broker) - cm->broker0) / 1e3 / calls,
		.daemon_us = (cpu_ns(cm->daemon) - cm->daemon0) / 1e3 / calls,
	};
}

/*
 * 2000 single CreateFile calls, then 2000 Pings on the same connection
 * right after (the baseline of this run); calls per second of each, and
 * what each call cost every process in CPU time.
 */
static double create_rate(sd_bus *bus, struct cost_meter *cm, int run, const char *tag, double *ret_ping_rate,
			  struct call_cost *ret_create_cost, struct call_cost *ret_ping_cost)
{
	uint64_t t0;
	int n = 2000;

	cost_start(cm);
	t0 = now_ns();
	for (int i = 0; i < n; i++) {
		char p[96];

		snprintf(p, sizeof(p), "/run/famfs-bench/bench/s%s%d-%05d", tag, run, i);
		if (create_one(bus, p) < 0)
			exit(1);
	}
	double rate = n / ((now_ns() - t0) / 1e9);

	*ret_create_cost = cost_per_call(cm, n);
	cost_start(cm);
	t0 = now_ns();
	for (int i = 0; i < n; i++)
		if (ping(bus) < 0) {
			fprintf(stderr, "bench: Peer.Ping failed\n");
			exit(1);
		}
	*ret_ping_rate = n / ((now_ns() - t0) / 1e9);
	*ret_ping_cost = cost_per_call(cm, n);
	return rate;
}

static int cmp_cost_total(const void *a, const void *b)
{
	const struct call_cost *x = a, *y = b;
	double tx = x->client_us + x->broker_us + x->daemon_us, ty = y->client_us + y->broker_us + y->daemon_us;

	return tx < ty ? -1 : tx > ty;
}

/* The run whose total is the median, so that its three parts add up */
static struct call_cost median_cost(struct call_cost *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_cost_total);
	return v[n / 2];
}

/* This process, the daemon and its dbus-daemon on CPU 0 (all threads), or back on every CPU */
static void pin_to_cpu0(bool pin, pid_t daemon, pid_t broker)
{
	pid_t pids[] = { 0, daemon, broker };
	cpu_set_t set;

	CPU_ZERO(&set);
	if (pin)
		CPU_SET(0, &set);
	else
		for (int c = 0; c < CPU_SETSIZE && c < sysconf(_SC_NPROCESSORS_ONLN); c++)
			CPU_SET(c, &set);
	for (size_t i = 0; i < sizeof(pids) / sizeof(pids[0]); i++) {
		char dir[64];
		DIR *d;
		struct dirent *e;

		snprintf(dir, sizeof(dir), "/proc/%d/task", pids[i] ? pids[i] : getpid());
		d = opendir(dir);
		while (d && (e = readdir(d)))
			if (e->d_name[0] != '.')
				(void)sched_setaffinity(atoi(e->d_name), sizeof(set), &set);
		if (d)
			closedir(d);
	}
}

struct follow {
	const char *want;
	uint64_t seen_ns;
};

static int on_files_added(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
	struct follow *fl = userdata;
	const char *p;

	if (sd_bus_message_enter_container(m, 'a', "s") < 0)
		return 0;
	while (sd_bus_message_read(m, "s", &p) > 0)
		if (fl->want && strcmp(p, fl->want) == 0)
			fl->seen_ns = now_ns();
	return 0;
}

/* Creates @path on the master @m; ms until the client @c's FilesAdded names it (2000: never) */
static double follow_one(sd_bus *m, sd_bus *c, struct follow *fl, const char *path)
{
	uint64_t t0;

	fl->want = path;
	fl->seen_ns = 0;
	t0 = now_ns();
	if (create_one(m, path) < 0)
		exit(1);
	while (!fl->seen_ns && now_ns() - t0 < 2000000000ULL) {
		if (sd_bus_process(c, NULL) == 0)
			sd_bus_wait(c, 10000);
	}
	return fl->seen_ns ? (fl->seen_ns - t0) / 1e6 : 2000;
}

/* CPU time @pid has run, in ns: the first field of /proc/PID/schedstat */
static uint64_t cpu_ns(pid_t pid)
{
	char path[64];
	unsigned long long ns = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%llu", &ns) != 1)
			ns = 0;
		fclose(f);
	}
	return ns;
}

/* A key of the daemons' configuration file in milliseconds, or @fallback (its default) */
static unsigned config_ms(const char *key, unsigned fallback)
{
	char line[256];
	size_t klen = strlen(key);
	unsigned ms = fallback;
	FILE *f = fopen(config_arg + 9, "r");

	while (f && fgets(line, sizeof(line), f)) {
		const char *p = line + strspn(line, " \t");

		if (!strncmp(p, key, klen) && sscanf(p + klen, " = %u", &ms) == 1)
			break;
	}
	if (f)
		fclose(f);
	return ms;
}

/* A child that sleeps @ms and wakes, forever: what the wake-ups alone cost here */
static pid_t waker_start(unsigned ms)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

		if (ms == 0)
			ts.tv_sec = 1;
		for (;;)
			nanosleep(&ts, NULL);
	}
	return pid;
}

/* RssAnon of @pid in bytes (anonymous memory it has touched) */
static uint64_t rss_anon_bytes(pid_t pid)
{
	char path[64], line[256];
	unsigned long long kb = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "RssAnon: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb * 1024;
}

/* The Files property of the one file system @bus's daemon serves */
static uint64_t files_of(sd_bus *bus)
{
	sd_bus_message *reply = NULL;
	const char *o, *u, *d, *mp, *ro, *h;
	uint64_t n = 0;

	if (sd_bus_call_method(bus, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "ListFileSystems", NULL,
			       &reply, "") >= 0 &&
	    sd_bus_message_read(reply, "a(osssss)", 1, &o, &u, &d, &mp, &ro, &h) > 0) {
		char obj[256];

		snprintf(obj, sizeof(obj), "%s", o);
		sd_bus_message_unref(reply);
		reply = NULL;
		(void)sd_bus_get_property_trivial(bus, FAMFS_BUS_NAME, obj, FAMFS_FS_IFACE, "Files", NULL, 't', &n);
	}
	sd_bus_message_unref(reply);
	return n;
}

/*
 * Anonymous memory per file: the master right after creating them, and
 * the client once it has replayed them all, each against itself at start.
 */
static void report_memory(pid_t pm, pid_t pc, sd_bus *c, uint64_t master0, uint64_t client0)
{
	uint64_t files, master1, t0;

	usleep(100000);	/* the daemon trims its heap once the last batch is answered */
	master1 = rss_anon_bytes(pm);
	t0 = now_ns();

	files = files_of(c);
	while (now_ns() - t0 < 20000000000ULL) {
		uint64_t n = files_of(c);

		if (n == files && n > 0 && now_ns() - t0 > 500000000ULL)
			break;
		files = n;
		usleep(100000);
	}
	printf("daemon anonymous memory at %" PRIu64 " files: master after creating them %.0f bytes/file "
	       "(%.1f MiB over its %.1f MiB at start), client after replaying them %.0f bytes/file (target <= 200)\n",
	       files, files ? (double)(master1 - master0) / files : 0, (master1 - master0) / 1048576.0,
	       master0 / 1048576.0, files ? (double)(rss_anon_bytes(pc) - client0) / files : 0);
}

static void bench_bus(void)
{
	char img[300], ua[300], ub[300];
	struct bus b1, b2;
	sd_bus *m, *c;
	pid_t pm, pc;
	double rates[5];
	uint64_t anon_master0, anon_client0;
	int fd;

	snprintf(img, sizeof(img), "%s/bench.img", workdir);
	snprintf(ua, sizeof(ua), "%s/uuid-a", workdir);
	snprintf(ub, sizeof(ub), "%s/uuid-b", workdir);
	sh("echo 11111111-2222-4333-8444-555555555555 > %s; echo aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee > %s", ua, ub);
	fd = open(img, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	if (fd < 0 || ftruncate(fd, 1ULL << 40) < 0) {
		perror("bench: image");
		exit(1);
	}
	close(fd);
	if (sh("%s -q -l 256M --system-uuid-file %s %s", mkfs_exe, ua, img) != 0) {
		fprintf(stderr, "bench: mkfs.famfs failed\n");
		exit(1);
	}
	bus_start(&b1, "b1");
	bus_start(&b2, "b2");
	pm = daemon_start(&b1, img, ua, &m);
	pc = daemon_start(&b2, img, ub, &c);
	anon_master0 = rss_anon_bytes(pm);
	anon_client0 = rss_anon_bytes(pc);

	if (!only || !strcmp(only, "create")) {
		double pinned[5], pings[5], pinned_pings[5];
		struct call_cost create_cost[5], ping_cost[5], unpinned_cost;
		struct cost_meter cm = { .daemon = pm, .broker = b1.pid };

		for (int run = 0; run < 5; run++) {
			rates[run] = create_rate(m, &cm, run, "u", &pings[run], &unpinned_cost, &unpinned_cost);
			pin_to_cpu0(true, pm, b1.pid);
			pinned[run] = create_rate(m, &cm, run, "p", &pinned_pings[run], &create_cost[run], &ping_cost[run]);
			pin_to_cpu0(false, pm, b1.pid);
		}
		printf("single CreateFile over the bus: median %.0f calls/s unpinned (5 runs of 2000; target >= 5000); "
		       "empty call (Peer.Ping) %.0f/s\n", percentile(rates, 5, 0.5), percentile(pings, 5, 0.5));
		printf("single CreateFile, client, dbus-daemon and daemon pinned to CPU 0: median %.0f calls/s, "
		       "Peer.Ping %.0f/s on the same connection: ratio %.2f (target >= 0.7)\n",
		       percentile(pinned, 5, 0.5), percentile(pinned_pings, 5, 0.5),
		       percentile(pinned, 5, 0.5) / percentile(pinned_pings, 5, 0.5));
		{
			struct call_cost create = median_cost(create_cost, 5), empty = median_cost(ping_cost, 5);

			printf("CPU per call pinned (schedstat, median run): CreateFile client %.1f us, dbus-daemon %.1f us, "
			       "daemon %.1f us; Peer.Ping client %.1f us, dbus-daemon %.1f us, daemon %.1f us\n",
			       create.client_us, create.broker_us, create.daemon_us, empty.client_us, empty.broker_us,
			       empty.daemon_us);
		}
	}
	if (!only || !strcmp(only, "batch")) {
		for (int run = 0; run < 5; run++) {
			sd_bus_message *call = NULL;
			int n = 20000;
			uint64_t t0;

			sd_bus_message_new_method_call(m, &call, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "CreateFiles");
			sd_bus_message_open_container(call, 'a', "(stu)");
			for (int i = 0; i < n; i++) {
				char p[96];

				snprintf(p, sizeof(p), "/run/famfs-bench/bench/b%d-%05d", run, i);
				sd_bus_message_append(call, "(stu)", p, (uint64_t)4096, 0644);
			}
			sd_bus_message_close_container(call);
			sd_bus_message_append(call, "a{sv}", 0);
			t0 = now_ns();
			if (call_wait(m, call) < 0)
				exit(1);
			rates[run] = n / ((now_ns() - t0) / 1e9);
			sd_bus_message_unref(call);
		}
		printf("CreateFiles (batches of 20000, call to reply): median %.0f files/s (5 runs; target >= 50000)\n",
		       percentile(rates, 5, 0.5));
		report_memory(pm, pc, c, anon_master0, anon_client0);
	}
	if (!only || !strcmp(only, "follow")) {
		struct follow fl = {0};
		char obj[256];
		enum { n = 60, n_quiet = 5 };
		double lat[n], quiet[n_quiet];
		uint64_t quiet_usec = PEEK_ACTIVE_USEC + 2000000;

		/* the client's fs object: one device, so take the first */
		{
			sd_bus_message *reply = NULL;
			const char *o, *u, *d, *mp, *ro, *h;

			sd_bus_call_method(c, FAMFS_BUS_NAME, FAMFS_MANAGER_PATH, FAMFS_MANAGER_IFACE, "ListFileSystems", NULL, &reply, "");
			sd_bus_message_read(reply, "a(osssss)", 1, &o, &u, &d, &mp, &ro, &h);
			snprintf(obj, sizeof(obj), "%s", o);
			sd_bus_message_unref(reply);
		}
		sd_bus_match_signal(c, NULL, FAMFS_BUS_NAME, obj, FAMFS_FS_IFACE, "FilesAdded", on_files_added, &fl);
		for (int i = 0; i < n; i++) {
			char p[96];

			usleep(rand() % 100000);
			snprintf(p, sizeof(p), "/run/famfs-bench/bench/f%05d", i);
			lat[i] = follow_one(m, c, &fl, p);
		}
		printf("follow latency, CreateFile returns on master to FilesAdded on client, 0-100 ms apart "
		       "(config %s, follow-interval %u ms): p50 %.2f ms, p99 %.2f ms (%d samples; target p99 <= 5 ms)\n",
		       config_arg + 9, config_ms("follow-interval", MANAGER_DEFAULT_FOLLOW_MS),
		       percentile(lat, n, 0.5), percentile(lat, n, 0.99), n);
		/* the first file after the client's peeks slowed down (peek-schedule.h) */
		for (int i = 0; i < n_quiet; i++) {
			char p[96];

			usleep(quiet_usec);
			snprintf(p, sizeof(p), "/run/famfs-bench/bench/q%05d", i);
			quiet[i] = follow_one(m, c, &fl, p);
		}
		printf("follow latency of the first file after %.0f s quiet (follow-idle-interval %u ms): "
		       "median %.2f ms, max %.2f ms (%d samples)\n", quiet_usec / 1e6,
		       config_ms("follow-idle-interval", MANAGER_DEFAULT_FOLLOW_IDLE_MS),
		       percentile(quiet, n_quiet, 0.5), percentile(quiet, n_quiet, 1.0), n_quiet);
	}
	if (!only || !strcmp(only, "idle")) {
		unsigned idle_ms = config_ms("follow-idle-interval", MANAGER_DEFAULT_FOLLOW_IDLE_MS);
		uint64_t t0, c0, c1, w0, w1;
		pid_t waker = waker_start(idle_ms);
		double secs;

		/* idle: past the active window after the last file (peek-schedule.h) */
		usleep(PEEK_ACTIVE_USEC + 1000000);
		t0 = now_ns();
		c0 = cpu_ns(pc);
		w0 = cpu_ns(waker);
		sleep(idle_secs);
		c1 = cpu_ns(pc);
		w1 = cpu_ns(waker);
		secs = (now_ns() - t0) / 1e9;
		stop(waker);
		printf("client idle CPU (%s; %.0f s from %.0f s after the last file, schedstat): %.3f %% of one core "
		       "(target < 0.5 %%); baseline, a process that only wakes every %u ms: %.3f %%\n", config_arg + 9,
		       secs, PEEK_ACTIVE_USEC / 1e6 + 1, 100.0 * (double)(c1 - c0) / 1e9 / secs, idle_ms,
		       100.0 * (double)(w1 - w0) / 1e9 / secs);
	}
	sd_bus_flush_close_unref(m);
	sd_bus_flush_close_unref(c);
	stop(pm);
	stop(pc);
	stop(b1.pid);
	stop(b2.pid);
	unlink(img);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "manager", required_argument, NULL, 'm' }, { "mkfs", required_argument, NULL, 'k' },
		{ "interop", required_argument, NULL, 'i' }, { "only", required_argument, NULL, 'o' },
		{ "config", required_argument, NULL, 'c' }, { "idle-seconds", required_argument, NULL, 's' }, { 0 }
	};
	unsigned seed;
	int c;

	while ((c = getopt_long(argc, argv, "m:k:i:o:c:s:", opts, NULL)) != -1) {
		if (c == 'm')
			manager_exe = optarg;
		else if (c == 'k')
			mkfs_exe = optarg;
		else if (c == 'i')
			interop = optarg;
		else if (c == 'o')
			only = optarg;
		else if (c == 's')
			idle_secs = (unsigned)atoi(optarg) > 0 ? (unsigned)atoi(optarg) : 60;
		else if (c == 'c')
			snprintf(config_arg, sizeof(config_arg), "--config=%s", optarg);
		else
			return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	seed = (unsigned)now_ns();
	srand(seed);
	printf("random seed %u (the follow samples' gaps)\n", seed);
	if (!only || !strcmp(only, "attach"))
		bench_attach();
	if (only && !strcmp(only, "attach"))
		return 0;
	if (!manager_exe || !mkfs_exe) {
		fprintf(stderr, "bench: --manager and --mkfs are needed for the bus benchmarks\n");
		return 2;
	}
	if (!mkdtemp(workdir)) {
		perror("bench: mkdtemp");
		return 1;
	}
	chmod(workdir, 0755);
	bench_bus();
	sh("rm -rf %s", workdir);
	return 0;
}
