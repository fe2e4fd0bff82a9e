// SPDX-License-Identifier: GPL-2.0
/*
 * replay-tool - the guest side of the replay benchmark and of the re-attach
 * test (bench/vm-replay/bench-replay.sh, tests/vm/guest/reattach.sh).
 *
 *   replay-tool fill DEV UUIDFILE PREFIX SIZE [MAX]
 *       as the master, create files PREFIX00000, PREFIX00001, ... of SIZE
 *       bytes (log entries only, no data written) in batches of 5000 until
 *       the log is full or MAX files were made; prints "files N"
 *   replay-tool view DEV
 *       the view backend's work: open the device and replay the whole log
 *       into the in-memory namespace, then run the attach-time check on it
 *       (famfs_check_medium); prints "view_us N entries M open_us O
 *       replay_us R check_us C" (N = O + R: open and replay)
 *   replay-tool bare DEV MNT open|mkfiles
 *       the floor for a kernel replay: mount -t famfs DEV MNT (fresh), then
 *       for every log entry in order only mkdirat, and for files either
 *       openat(O_CREAT) on the parent's fd + MAP_CREATE_V2 + close (open),
 *       or MKFILES batches of siblings (mkfiles); prints "bare_us N files M";
 *       leaves the mount in place
 *   replay-tool daemon LOG TIMEOUT_MS PROGRAM ARGS...
 *       starts PROGRAM with its stderr on a pipe, copies that to LOG, and
 *       times (from just before exec) the line the kernel backend prints
 *       when it has the mount ("famfs mounted", populated; "mount adopted",
 *       taken over, before the replay) and the daemon's "ready on the bus";
 *       prints "pid P attach_us A ready_us R backend_ms B inst_us I adopted
 *       0|1 cpu_replay_us C1 cpu_inst_us C2 cpu_process_us C3" (B: the
 *       backend's attach, I: its instantiation of the namespace, which on
 *       a fresh mount with two CPUs overlaps the replay, from the line that
 *       says "instantiated in"; C1-C3: the CPU time, in that window, of the
 *       replaying thread, the instantiating worker and the whole process,
 *       from the line that says "CPU time:", 0 without one), then leaves a
 *       child copying the rest of the daemon's stderr to LOG
 *   replay-tool hotplug DEVICE MNT LOG TIMEOUT_MS [DRIVER]
 *       the device leaves and comes back while a daemon runs (automount, udev
 *       events): unbinds DEVICE from DRIVER (a sysfs driver directory;
 *       default /sys/bus/nd/drivers/nd_pmem), waits until MNT is
 *       unmounted, binds it again and times, from the return of the bind
 *       (the device is probed, its uevent sent), the next "famfs mounted"
 *       line in LOG (the running daemon's stderr): "bind_us N hotplug_us H
 *       backend_ms B inst_us I", N the bind itself (the kernel's probe), B
 *       and I as the daemon logs them
 *   replay-tool median N...
 *       the median of its arguments
 *   replay-tool exec PROGRAM ARGS...
 *       runs PROGRAM once (output to /dev/null); prints "exec_us N status S",
 *       the wall time from fork to its exit
 *   replay-tool rewrite LOGFILE INDEX OFFSET
 *       moves the first extent of FILE entry INDEX to OFFSET in place, CRC
 *       fixed up (a hostile rewrite); prints "old_offset N"
 *   replay-tool count MNT
 *       files and directories below MNT, .meta excluded: "files F dirs D"
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "fs.h"
#include "kernel.h"
#include "sysuuid.h"

#define BATCH 5000

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int die(const char *what, const char *msg)
{
	fprintf(stderr, "replay-tool: %s: %s\n", what, msg);
	return 1;
}

static int cmd_fill(int argc, char **argv)
{
	static struct famfs_file_spec specs[BATCH];
	static char names[BATCH][64];
	const struct famfs_device *dev;
	struct famfs_err err = {0};
	struct famfs_fs *fs;
	uint8_t uuid[16];
	uint64_t size, max = UINT64_MAX, made = 0, t0;
	size_t batch = BATCH;
	int r;

	if (argc < 6)
		return die("fill", "usage: fill DEV UUIDFILE PREFIX SIZE [MAX]");
	size = strtoull(argv[5], NULL, 0);
	if (argc > 6)
		max = strtoull(argv[6], NULL, 0);
	if (famfs_system_uuid_get(argv[3], false, uuid, &err) < 0)
		return die(argv[3], err.msg);
	if (famfs_fs_open(argv[2], FAMFS_DEVICE_WRITE, uuid, &fs, &err) < 0)
		return die(argv[2], err.msg);
	if (!famfs_fs_is_master(fs)) {
		famfs_fs_close(fs);
		return die(argv[2], "this host is not the file system's master");
	}
	if (famfs_fs_replay(fs, NULL, NULL, NULL, &err) < 0) {
		famfs_fs_close(fs);
		return die("replay", err.msg);
	}
	t0 = now_us();
	while (made < max && batch > 0) {
		size_t n = batch;

		if (max - made < n)
			n = (size_t)(max - made);
		for (size_t i = 0; i < n; i++) {
			snprintf(names[i], sizeof(names[i]), "%s%05" PRIu64, argv[4], made + i);
			specs[i] = (struct famfs_file_spec){ .relpath = names[i], .size = size,
							     .mode = 0644 };
		}
		memset(&err, 0, sizeof(err));
		r = famfs_fs_create_files(fs, specs, n, NULL, NULL, &err);
		if (r == -FAMFS_ELOGFULL || r == -ENOSPC) {
			/* All or nothing: retry what fits with smaller batches. */
			batch = n / 2;
			continue;
		}
		if (r < 0) {
			famfs_fs_close(fs);
			return die("create", err.msg);
		}
		made += n;
	}
	/*
	 * A pmem block device's mapping is page cache: write it back, or a
	 * famfs mount of the device (DAX, past the page cache) and other hosts
	 * would not see the new entries until the last close of the device.
	 * Device-dax has no page cache (and refuses msync): the library wrote
	 * the entries back from the CPU caches as it appended them.
	 */
	dev = famfs_fs_device(fs);
	if (dev->kind != FAMFS_DEVICE_DAX && (msync(dev->base, dev->size, MS_SYNC) < 0 || fsync(dev->fd) < 0)) {
		famfs_fs_close(fs);
		return die("msync", strerror(errno));
	}
	printf("files %" PRIu64 " entries %" PRIu64 " fill_us %" PRIu64 "\n", made, famfs_fs_applied(fs),
	       now_us() - t0);
	famfs_fs_close(fs);
	return 0;
}

static int cmd_view(int argc, char **argv)
{
	struct famfs_check_report *rep = NULL;
	struct famfs_err err = {0};
	struct famfs_fs *fs;
	uint64_t t0, t1, t2, t3;

	if (argc < 3)
		return die("view", "usage: view DEV");
	t0 = now_us();
	if (famfs_fs_open(argv[2], 0, NULL, &fs, &err) < 0)
		return die(argv[2], err.msg);
	t1 = now_us();
	if (famfs_fs_replay(fs, NULL, NULL, NULL, &err) < 0) {
		famfs_fs_close(fs);
		return die("replay", err.msg);
	}
	t2 = now_us();
	famfs_check_medium(famfs_fs_device(fs)->base, famfs_fs_device(fs)->size, 0, &rep);
	t3 = now_us();
	famfs_check_report_free(rep);
	printf("view_us %" PRIu64 " entries %" PRIu64 " open_us %" PRIu64 " replay_us %" PRIu64
	       " check_us %" PRIu64 "\n", t2 - t0, famfs_fs_applied(fs), t1 - t0, t2 - t1, t3 - t2);
	famfs_fs_close(fs);
	return 0;
}

static int cmd_bare(int argc, char **argv)
{
	struct famfs_err err = {0};
	const struct famfs_ns_node *n;
	struct kernel_mkfiles *batch = NULL;
	struct famfs_fs *fs;
	static struct kernel_fmap maps[KERNEL_MKFILES_MAX];
	struct kernel_fmap *map = &maps[0];
	uint64_t t0, t1, files = 0;
	int *dirfd_of, root, bad = 0;
	uint32_t nnodes = 0;
	bool use_mkfiles;

	if (argc < 5 || (strcmp(argv[4], "open") && strcmp(argv[4], "mkfiles")))
		return die("bare", "usage: bare DEV MNT open|mkfiles");
	use_mkfiles = !strcmp(argv[4], "mkfiles");
	if (famfs_fs_open(argv[2], 0, NULL, &fs, &err) < 0)
		return die(argv[2], err.msg);
	if (famfs_fs_replay(fs, NULL, NULL, NULL, &err) < 0)
		return die("replay", err.msg);
	while (famfs_ns_node(famfs_fs_namespace(fs), nnodes))
		nnodes++;
	dirfd_of = calloc(nnodes + 1, sizeof(int));
	if (!dirfd_of || (use_mkfiles && !(batch = kernel_mkfiles_new())))
		return die("bare", "out of memory");
	if (mount(argv[2], argv[3], "famfs", MS_NOATIME | MS_NOSUID | MS_NOEXEC | MS_NODEV, "") < 0)
		return die("mount", strerror(errno));
	root = open(argv[3], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return die(argv[3], strerror(errno));
	for (uint32_t i = 0; i <= nnodes; i++)
		dirfd_of[i] = -1;
	dirfd_of[FAMFS_NS_ROOT] = root;
	t0 = now_us();
	for (uint32_t id = 1; id <= nnodes; id++) {
		const char *name;
		int pfd, fd;

		n = id < nnodes ? famfs_ns_node(famfs_fs_namespace(fs), id) : NULL;
		/* MKFILES: a batch goes when it is full, or at a directory change */
		if (batch && kernel_mkfiles_count(batch) &&
		    (!n || n->kind == FAMFS_NS_DIR || n->parent != kernel_mkfiles_parent(batch) ||
		     kernel_mkfiles_count(batch) == KERNEL_MKFILES_MAX)) {
			const struct kernel_fmap *km;
			void *tag;

			if (kernel_mkfiles_submit(batch, dirfd_of[kernel_mkfiles_parent(batch)]) < 0)
				return die("MKFILES", strerror(errno));
			for (uint32_t i = 0; i < kernel_mkfiles_count(batch); i++)
				if (kernel_mkfiles_result(batch, i, &tag, &km) == 0)
					files++;
				else
					bad++;
			kernel_mkfiles_clear(batch);
		}
		if (!n)
			break;
		name = n->path + n->name_off;
		pfd = dirfd_of[n->parent];
		if (pfd < 0) {
			bad++;
			continue;
		}
		if (n->kind == FAMFS_NS_DIR) {
			if (mkdirat(pfd, name, n->mode & 07777) < 0)
				bad++;
			dirfd_of[id] = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			continue;
		}
		/* A batch keeps its maps by pointer: one slot per queued file. */
		map = &maps[batch ? kernel_mkfiles_count(batch) : 0];
		if (kernel_fmap_from_entry(famfs_fs_entry(fs, id), map, &err) < 0) {
			bad++;
			continue;
		}
		if (batch) {
			if (!kernel_mkfiles_add(batch, n->parent, NULL, name, n->mode, n->uid, n->gid, map))
				bad++;
			continue;
		}
		fd = openat(pfd, name, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, n->mode & 07777);
		if (fd < 0) {
			bad++;
			continue;
		}
		if (ioctl(fd, FAMFSIOC_MAP_CREATE_V2, &map->fmap) < 0)
			bad++;
		else
			files++;
		close(fd);
	}
	t1 = now_us();
	for (uint32_t i = 0; i < nnodes; i++)
		if (dirfd_of[i] >= 0)
			close(dirfd_of[i]);
	free(dirfd_of);
	kernel_mkfiles_free(batch);
	famfs_fs_close(fs);
	printf("bare_us %" PRIu64 " files %" PRIu64 " errors %d\n", t1 - t0, files, bad);
	return bad ? 1 : 0;
}

/* The backend's time and its instantiation's, from its "famfs mounted/adopted ... in B ms ... instantiated in I us" line. */
static void parse_backend_line(const char *line, unsigned long *backend_ms, unsigned long *inst_us)
{
	const char *p = strstr(line, " in ");

	if (p)
		*backend_ms = strtoul(p + 4, NULL, 10);
	p = strstr(line, "instantiated in ");
	if (p)
		*inst_us = strtoul(p + 16, NULL, 10);
}

/* CPU times from the "ran alongside the replay ... CPU time: R us replaying, W us instantiating, P us for the whole process" line. */
static void parse_cpu_line(const char *line, unsigned long cpu[3])
{
	const char *p = strstr(line, "CPU time: ");

	if (p && sscanf(p, "CPU time: %lu us replaying, %lu us instantiating, %lu us", &cpu[0], &cpu[1], &cpu[2]) != 3)
		cpu[0] = cpu[1] = cpu[2] = 0;
}

static int cmd_daemon(int argc, char **argv)
{
	char buf[8192], line[4096];
	uint64_t t0, attach_us = 0, ready_us = 0, deadline;
	unsigned long backend_ms = 0, inst_us = 0, cpu[3] = { 0, 0, 0 };
	size_t ll = 0;
	int adopted = -1, pfd[2], logfd;
	pid_t pid;

	if (argc < 5)
		return die("daemon", "usage: daemon LOG TIMEOUT_MS PROGRAM ARGS...");
	logfd = open(argv[2], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (logfd < 0)
		return die(argv[2], strerror(errno));
	deadline = strtoull(argv[3], NULL, 0) * 1000;
	if (pipe(pfd) < 0)
		return die("pipe", strerror(errno));
	t0 = now_us();
	pid = fork();
	if (pid < 0)
		return die("fork", strerror(errno));
	if (pid == 0) {
		dup2(pfd[1], 2);
		close(pfd[0]);
		close(pfd[1]);
		execvp(argv[4], argv + 4);
		fprintf(stderr, "exec %s: %s\n", argv[4], strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	deadline += t0;
	while (!ready_us && now_us() < deadline) {
		ssize_t got = read(pfd[0], buf, sizeof(buf));
		uint64_t t = now_us();

		if (got <= 0)
			break;
		if (write(logfd, buf, (size_t)got) < 0)
			break;
		for (ssize_t i = 0; i < got; i++) {
			if (buf[i] != '\n') {
				if (ll < sizeof(line) - 1)
					line[ll++] = buf[i];
				continue;
			}
			line[ll] = '\0';
			ll = 0;
			if (!attach_us && (strstr(line, ": famfs mounted ") || strstr(line, ": famfs mount adopted "))) {
				attach_us = t - t0;
				adopted = strstr(line, "mount adopted") != NULL;
			}
			/* An adopted mount is compared with the log on a later line */
			if (strstr(line, "instantiated in "))
				parse_backend_line(line, &backend_ms, &inst_us);
			if (strstr(line, "CPU time: "))
				parse_cpu_line(line, cpu);
			if (!ready_us && strstr(line, "ready on the bus"))
				ready_us = t - t0;
		}
	}
	printf("pid %d attach_us %" PRIu64 " ready_us %" PRIu64 " backend_ms %lu inst_us %lu adopted %d"
	       " cpu_replay_us %lu cpu_inst_us %lu cpu_process_us %lu\n",
	       (int)pid, attach_us, ready_us, backend_ms, inst_us, adopted, cpu[0], cpu[1], cpu[2]);
	fflush(stdout);
	if (!ready_us) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return 1;
	}
	/* The daemon keeps its stderr: a child copies the rest to the log. */
	if (fork() == 0) {
		ssize_t got;

		setsid();
		while ((got = read(pfd[0], buf, sizeof(buf))) > 0)
			if (write(logfd, buf, (size_t)got) < 0)
				break;
		_exit(0);
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int cmd_median(int argc, char **argv)
{
	double v[64];
	int n = 0;

	for (int i = 2; i < argc && n < 64; i++)
		v[n++] = strtod(argv[i], NULL);
	if (!n)
		return die("median", "no values");
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	printf("%.0f\n", n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
	return 0;
}

static void count_dir(int dfd, bool top, uint64_t *files, uint64_t *dirs)
{
	struct dirent *de;
	DIR *d = fdopendir(dfd);

	if (!d) {
		close(dfd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (top && !strcmp(de->d_name, ".meta"))
			continue;
		if (de->d_type == DT_DIR) {
			int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

			(*dirs)++;
			if (fd >= 0)
				count_dir(fd, false, files, dirs);
		} else {
			(*files)++;
		}
	}
	closedir(d);
}

/*
 * Rewrites FILE entry INDEX of a mounted file system's log in place, through
 * its .meta/.log (the DAX mapping the daemon reads): its first extent moves
 * to OFFSET and its CRC is made to match, as a hostile or buggy writer
 * could.  Prints the old offset so a second call can put it back.
 */
static int cmd_rewrite(int argc, char **argv)
{
	struct famfs_log_entry *e;
	struct famfs_log_header *h;
	struct stat st;
	uint64_t index, old;
	void *map;
	int fd;

	if (argc < 5)
		return die("rewrite", "usage: rewrite LOGFILE INDEX OFFSET");
	index = strtoull(argv[3], NULL, 0);
	fd = open(argv[2], O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return die(argv[2], strerror(errno));
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return die("mmap", strerror(errno));
	h = map;
	if (index >= h->next_index || (index + 1) * sizeof(*e) + sizeof(*h) > (uint64_t)st.st_size)
		return die("rewrite", "no such entry");
	e = &famfs_log_entries(h)[index];
	if (e->type != FAMFS_LOG_FILE)
		return die("rewrite", "not a FILE entry");
	old = e->file.se[0].offset;
	e->file.se[0].offset = strtoull(argv[4], NULL, 0);
	e->crc = famfs_log_entry_crc(e);
	msync(map, (size_t)st.st_size, MS_SYNC);
	printf("old_offset %" PRIu64 "\n", old);
	munmap(map, (size_t)st.st_size);
	close(fd);
	return 0;
}

/* Wall time from fork to exit of one run of PROGRAM ARGS, stdout/stderr to /dev/null. */
static bool mounted_at(const char *mnt)
{
	char line[4096], want[1024];
	bool found = false;
	FILE *fp = fopen("/proc/mounts", "re");

	if (!fp)
		return false;
	snprintf(want, sizeof(want), " %s famfs ", mnt);
	while (!found && fgets(line, sizeof(line), fp))
		found = strstr(line, want) != NULL;
	fclose(fp);
	return found;
}

/* The last "famfs mounted" line of @log after byte @from, or NULL; *ret_len: the log's length. */
static char *last_mounted_line(const char *log, long from, long *ret_len, char *buf, size_t size)
{
	char line[4096];
	char *found = NULL;
	FILE *fp = fopen(log, "re");

	*ret_len = from;
	if (!fp)
		return NULL;
	if (fseek(fp, from, SEEK_SET) == 0)
		while (fgets(line, sizeof(line), fp))
			if (strstr(line, ": famfs mounted ")) {
				snprintf(buf, size, "%s", line);
				found = buf;
			}
	*ret_len = ftell(fp);
	fclose(fp);
	return found;
}

static int write_sysfs(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, value, strlen(value)) < 0)
		r = -errno;
	close(fd);
	return r;
}

static int cmd_hotplug(int argc, char **argv)
{
	uint64_t t0, bind_us, deadline;
	char buf[4096], *line = NULL, unbind[PATH_MAX], bind[PATH_MAX];
	unsigned long backend_ms = 0, inst_us = 0;
	long len;
	int r, watch;

	if (argc < 6)
		return die("hotplug", "usage: hotplug DEVICE MNT LOG TIMEOUT_MS [DRIVER]");
	snprintf(unbind, sizeof(unbind), "%s/unbind", argc > 6 ? argv[6] : "/sys/bus/nd/drivers/nd_pmem");
	snprintf(bind, sizeof(bind), "%s/bind", argc > 6 ? argv[6] : "/sys/bus/nd/drivers/nd_pmem");
	deadline = strtoull(argv[5], NULL, 0) * 1000;
	r = write_sysfs(unbind, argv[2]);
	if (r < 0)
		return die("unbind", strerror(-r));
	t0 = now_us();
	while (mounted_at(argv[3]) && now_us() - t0 < deadline)
		usleep(1000);
	if (mounted_at(argv[3]))
		return die(argv[3], "still mounted after its device went away");
	(void)last_mounted_line(argv[4], 0, &len, buf, sizeof(buf));
	/*
	 * Woken by the log growing, not by polling it: a 1 ms poll loop took
	 * CPU from the daemon it was timing.
	 */
	watch = inotify_init1(IN_CLOEXEC);
	if (watch < 0 || inotify_add_watch(watch, argv[4], IN_MODIFY) < 0)
		return die("inotify", strerror(errno));
	t0 = now_us();
	r = write_sysfs(bind, argv[2]);
	if (r < 0)
		return die("bind", strerror(-r));
	bind_us = now_us() - t0;
	t0 += bind_us;
	for (;;) {
		struct pollfd pfd = { .fd = watch, .events = POLLIN };
		uint64_t spent;
		char ev[4096];

		line = last_mounted_line(argv[4], len, &len, buf, sizeof(buf));
		spent = now_us() - t0;
		if (line || spent >= deadline)
			break;
		if (poll(&pfd, 1, (int)((deadline - spent) / 1000) + 1) > 0 &&
		    read(watch, ev, sizeof(ev)) < 0)
			break;
	}
	close(watch);
	if (!line)
		return die(argv[4], "no \"famfs mounted\" line after the device came back");
	parse_backend_line(line, &backend_ms, &inst_us);
	printf("bind_us %" PRIu64 " hotplug_us %" PRIu64 " backend_ms %lu inst_us %lu\n", bind_us, now_us() - t0,
	       backend_ms, inst_us);
	return 0;
}

static int cmd_exec(int argc, char **argv)
{
	uint64_t t0, t1;
	pid_t pid;
	int st;

	if (argc < 3)
		return die("exec", "usage: exec PROGRAM ARGS...");
	t0 = now_us();
	pid = fork();
	if (pid < 0)
		return die("fork", strerror(errno));
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		dup2(fd, 1);
		dup2(fd, 2);
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return die("waitpid", strerror(errno));
	t1 = now_us();
	printf("exec_us %" PRIu64 " status %d\n", t1 - t0, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}

static int cmd_count(int argc, char **argv)
{
	uint64_t files = 0, dirs = 0;
	int fd;

	if (argc < 3)
		return die("count", "usage: count MNT");
	fd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return die(argv[2], strerror(errno));
	count_dir(fd, true, &files, &dirs);
	printf("files %" PRIu64 " dirs %" PRIu64 "\n", files, dirs);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return die("usage", "replay-tool fill|view|bare|daemon|median|count|exec|rewrite|hotplug ...");
	if (!strcmp(argv[1], "fill"))
		return cmd_fill(argc, argv);
	if (!strcmp(argv[1], "view"))
		return cmd_view(argc, argv);
	if (!strcmp(argv[1], "bare"))
		return cmd_bare(argc, argv);
	if (!strcmp(argv[1], "daemon"))
		return cmd_daemon(argc, argv);
	if (!strcmp(argv[1], "median"))
		return cmd_median(argc, argv);
	if (!strcmp(argv[1], "count"))
		return cmd_count(argc, argv);
	if (!strcmp(argv[1], "exec"))
		return cmd_exec(argc, argv);
	if (!strcmp(argv[1], "rewrite"))
		return cmd_rewrite(argc, argv);
	if (!strcmp(argv[1], "hotplug"))
		return cmd_hotplug(argc, argv);
	return die(argv[1], "unknown command");
}
