// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Times the checker on a full 256 MiB log (493,447 FILE entries, built in
 * memory), fsck.famfs as a whole process on an image holding that log, and
 * fsck.famfs on the full 8 MiB log of the interop fixture "many".  The
 * baselines measured in the same run: the CRC-32 of every log byte
 * (famfs_crc32, ISA-L or zlib), and for the whole process, one plain read
 * pass over the same log bytes of the image (read(2) from the page cache,
 * what `dd` of them costs); the target is fsck <= 2 x that read pass.
 *
 *   bench-fsck [--runs N] [--many IMAGE] [--fsck PATH]
 */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-common.h"
#include "check.h"
#include "device.h"
#include "log.h"
#include "superblock.h"

#define MiB (UINT64_C(1) << 20)
#define AU FAMFS_ALLOC_UNIT

static const uint8_t bench_uuid[16] = { 1, 2, 3, 4, 5, 6, 0x47, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

/* A medium whose log is full of one-unit files, in an anonymous mapping. */
static uint8_t *build_full_log(uint64_t log_len, uint64_t *ret_size)
{
	uint64_t slots = famfs_log_slots(log_len);
	uint64_t size = famfs_data_start(log_len) + slots * AU;
	struct famfs_log_header *h;
	struct famfs_log_entry *e;
	struct famfs_superblock sb;
	uint8_t *base;

	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	famfs_superblock_init(&sb, &(struct famfs_superblock_params){
		.dev_size = size, .log_len = log_len, .system_uuid = bench_uuid, .dev_name = "bench" });
	memcpy(base, &sb, sizeof(sb));
	h = (void *)(base + FAMFS_LOG_OFFSET);
	famfs_log_format(h, log_len);
	e = famfs_log_entries(h);
	for (uint64_t i = 0; i < slots; i++) {
		struct famfs_fmap map = { .ext_type = FAMFS_EXT_SIMPLE, .nextents = 1 };
		char name[16];

		snprintf(name, sizeof(name), "f%07" PRIu64, i);
		map.se[0] = (struct famfs_simple_extent){ 0, famfs_data_start(log_len) + i * AU, AU };
		famfs_entry_make_file(&e[i], name, 4096, 0644, 0, 0, &map, NULL);
		e[i].seqnum = i;
		e[i].crc = famfs_log_entry_crc(&e[i]);
	}
	h->next_index = h->next_seqnum = slots;
	*ret_size = size;
	return base;
}

static double time_check(const uint8_t *base, uint64_t size, unsigned flags, uint64_t *files)
{
	struct famfs_check_report *r = NULL;
	double t0 = bench_now(), t;

	if (famfs_check_medium(base, size, flags, &r) < 0) {
		fprintf(stderr, "check failed\n");
		exit(1);
	}
	t = bench_now() - t0;
	if (famfs_check_report_errors(r)) {
		fprintf(stderr, "benchmark medium does not check clean\n");
		exit(1);
	}
	*files = r->summary.files;
	famfs_check_report_free(r);
	return t;
}

static double time_crc_floor(const uint8_t *base, uint64_t log_len)
{
	volatile uint32_t sink;
	double t0 = bench_now();

	sink = famfs_crc32(base + FAMFS_LOG_OFFSET, log_len);
	(void)sink;
	return bench_now() - t0;
}

static void bench_full_log(uint64_t log_len, int runs)
{
	double *with = calloc(runs, sizeof(double)), *without = calloc(runs, sizeof(double));
	double *floor = calloc(runs, sizeof(double));
	uint64_t size, files = 0;
	uint8_t *base = build_full_log(log_len, &size);
	double m_with, m_without, m_floor;

	for (int i = 0; i < runs; i++) {
		floor[i] = time_crc_floor(base, log_len);
		with[i] = time_check(base, size, 0, &files);
		without[i] = time_check(base, size, FAMFS_CHECK_NO_CROSSLINKS, &files);
	}
	m_with = bench_median(with, runs);
	m_without = bench_median(without, runs);
	m_floor = bench_median(floor, runs);
	printf("full %" PRIu64 " MiB log, %" PRIu64 " FILE entries (in memory), median of %d:\n",
	       log_len / MiB, files, runs);
	printf("  check with cross-link pairs   %8.1f ms\n", m_with * 1e3);
	printf("  check without cross-links     %8.1f ms\n", m_without * 1e3);
	printf("  baseline: %-5s crc32 of log  %8.1f ms  (check / baseline = %.2f)\n",
	       famfs_crc32_implementation(), m_floor * 1e3, m_with / m_floor);
	munmap(base, size);
	free(with);
	free(without);
	free(floor);
}

static double run_fsck_process(const char *fsck, const char *image);

/* One read(2) pass over [off, off + len) of @fd, 1 MiB at a time */
static double time_read_pass(int fd, uint64_t off, uint64_t len)
{
	static uint8_t buf[1 << 20];
	double t0 = bench_now();

	for (uint64_t done = 0; done < len;) {
		ssize_t n = pread(fd, buf, len - done < sizeof(buf) ? len - done : sizeof(buf), (off_t)(off + done));

		if (n <= 0) {
			perror("bench-fsck: read pass");
			exit(1);
		}
		done += (uint64_t)n;
	}
	return bench_now() - t0;
}

/*
 * fsck.famfs -n, whole process, on a sparse image holding the full log of
 * @log_len bytes (the data area is holes), against one read pass over the
 * same log bytes in the same run.
 */
static void bench_full_log_process(uint64_t log_len, const char *fsck, int runs)
{
	double *proc = calloc(runs, sizeof(double)), *pass = calloc(runs, sizeof(double));
	char image[] = "/tmp/bench-fsck-XXXXXX";
	uint64_t size, head, files = 0;
	uint8_t *base = build_full_log(log_len, &size);
	double m_proc, m_pass;
	int fd = mkstemp(image);

	head = famfs_data_start(log_len);
	(void)time_check(base, size, 0, &files);
	if (fd < 0 || ftruncate(fd, (off_t)size) < 0 || pwrite(fd, base, head, 0) != (ssize_t)head) {
		perror("bench-fsck: the full-log image");
		exit(1);
	}
	munmap(base, size);
	/* Written back first: the flusher copying 256 MiB out meanwhile made both figures jump. */
	if (fsync(fd) < 0) {
		perror("bench-fsck: fsync of the full-log image");
		exit(1);
	}
	(void)time_read_pass(fd, FAMFS_LOG_OFFSET, log_len);	/* in the page cache from here on */
	for (int i = 0; i < runs; i++) {
		pass[i] = time_read_pass(fd, FAMFS_LOG_OFFSET, log_len);
		proc[i] = run_fsck_process(fsck, image);
	}
	m_proc = bench_median(proc, runs);
	m_pass = bench_median(pass, runs);
	printf("full %" PRIu64 " MiB log, %" PRIu64 " FILE entries, image file (%s CRC-32), median of %d:\n",
	       log_len / MiB, files, famfs_crc32_implementation(), runs);
	printf("  fsck.famfs -n, whole process  %8.1f ms\n", m_proc * 1e3);
	printf("  baseline: read(2) of the log  %8.1f ms  (fsck / baseline = %.2f, target <= 2: %s)\n",
	       m_pass * 1e3, m_proc / m_pass, m_proc / m_pass <= 2 ? "met" : "NOT met");
	close(fd);
	if (getenv("BENCH_FSCK_KEEP_IMAGE"))
		printf("  the image stays: %s\n", image);
	else
		unlink(image);
	free(proc);
	free(pass);
}

static double run_fsck_process(const char *fsck, const char *image)
{
	double t0 = bench_now();
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		int null = open("/dev/null", 1);

		dup2(null, 1);
		execl(fsck, fsck, "-n", image, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "%s %s did not exit 0\n", fsck, image);
		exit(1);
	}
	return bench_now() - t0;
}

static void bench_many(const char *image, const char *fsck, int runs)
{
	double *inproc = calloc(runs, sizeof(double)), *proc = calloc(runs, sizeof(double));
	double *floor = calloc(runs, sizeof(double));
	struct famfs_device *dev = NULL;
	struct famfs_err err = { 0 };
	uint64_t files = 0;

	if (famfs_device_open(image, 0, &dev, &err) < 0) {
		fprintf(stderr, "bench-fsck: %s\n", err.msg);
		exit(1);
	}
	for (int i = 0; i < runs; i++) {
		floor[i] = time_crc_floor(dev->base, FAMFS_LOG_LEN_DEFAULT);
		inproc[i] = time_check(dev->base, dev->size, 0, &files);
		if (fsck)
			proc[i] = run_fsck_process(fsck, image);
	}
	printf("interop fixture \"many\" (8 MiB log, %" PRIu64 " files), median of %d:\n", files, runs);
	printf("  check in process              %8.2f ms\n", bench_median(inproc, runs) * 1e3);
	if (fsck)
		printf("  fsck.famfs -n, whole process  %8.2f ms  (upstream's fsck: about 10 ms on these machines)\n",
		       bench_median(proc, runs) * 1e3);
	printf("  baseline: crc32 of the log    %8.2f ms  (check / baseline = %.2f)\n",
	       bench_median(floor, runs) * 1e3, bench_median(inproc, runs) / bench_median(floor, runs));
	famfs_device_close(dev);
	free(inproc);
	free(proc);
	free(floor);
}

int main(int argc, char **argv)
{
	const char *many = NULL, *fsck = NULL;
	int runs = 5, c;

	static const struct option opts[] = {
		{ "runs", required_argument, NULL, 'r' },
		{ "many", required_argument, NULL, 'm' },
		{ "fsck", required_argument, NULL, 'f' },
		{ 0 }
	};
	while ((c = getopt_long(argc, argv, "r:m:f:", opts, NULL)) != -1) {
		switch (c) {
		case 'r': runs = atoi(optarg) > 0 ? atoi(optarg) : 5; break;
		case 'm': many = optarg; break;
		case 'f': fsck = optarg; break;
		default:
			fprintf(stderr, "usage: bench-fsck [--runs N] [--many IMAGE] [--fsck PATH]\n");
			return 2;
		}
	}
	bench_full_log(256 * MiB, runs);
	if (fsck)
		bench_full_log_process(256 * MiB, fsck, runs * 2 + 1);
	bench_full_log(8 * MiB, runs * 3);
	if (many)
		bench_many(many, fsck, runs * 3);
	else
		printf("interop fixture \"many\": skipped (give --many IMAGE)\n");
	return 0;
}
