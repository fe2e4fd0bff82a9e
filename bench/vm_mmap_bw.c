// SPDX-License-Identifier: GPL-2.0
/*
 * vm_mmap_bw - sequential mmap read bandwidth: a famfs file against the
 * same bytes read through a raw mapping of its device, in the same boot
 *
 * usage: vm_mmap_bw [bench|bench-devdax]
 * "bench" measures on /dev/pmem0; "bench-devdax" (the test kernel with
 * dev_dax_iomap, two memmap regions) measures on /dev/pmem0 and then on
 * /dev/dax1.0, the second region made a devdax namespace, so that both
 * figures come from one boot.
 *
 * Runs inside the test VM (bench/vm/meson.build boots it with
 * tests/vm/run-vm.sh).  It loads famfs.ko, makes a file system with
 * mkfs.famfs, creates a 256 MiB file with MAP_CREATE_V2 and fills it with
 * write(2).  Then, WARMUP + RUNS times, it maps the file (famfs) and the
 * device range under it (/dev/pmem0), reads every byte once and times
 * mmap + faults + read, then reads the faulted-in mapping again and times
 * that.  The two of a run go back to back, in turns famfs first and raw
 * first, so that each run's ratio famfs/raw compares passes that met the
 * same host (under TCG a guest's bandwidth drifts by 2x within a boot);
 * the first WARMUP runs are not counted.  Prints the median bandwidth of
 * each, the median of the per-run ratios (the target, >= 0.95, is on the
 * fresh mapping), what a 2 MiB fault costs each
 * (the difference of the two passes), the famfs fault counters and the minor faults
 * of both per GiB, as TAP comments; TAP test lines check that both read
 * the same bytes and that famfs took no PTE faults.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <linux/famfs_ioctl.h>

#include "vm_common.h"

#define MNT	"/mnt/famfs"
#define FSIZE	(256 * MiB)
#define WARMUP	2
#define RUNS	11

static int ntest, nfail;

static void tap(int ok, const char *what)
{
	printf("%s %d - %s\n", ok ? "ok" : "not ok", ++ntest, what);
	if (!ok)
		nfail++;
}

static void bail(const char *what)
{
	printf("Bail out! %s: %s\n", what, strerror(errno));
	exit(1);
}

static int sh(const char *cmd)
{
	int st;

	fflush(stdout);
	st = system(cmd);
	return st == -1 ? -1 : WEXITSTATUS(st);
}

static long long read_ll(const char *path)
{
	char buf[64] = "";
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	return n > 0 ? strtoll(buf, NULL, 0) : -1;
}

static void write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || write(fd, s, strlen(s)) < 0)
		printf("# cannot write %s: %s\n", path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

static int map_one(int fd, uint32_t type, uint64_t size, uint64_t off,
		   uint64_t len)
{
	struct famfs_ioc_simple_extent se = { .offset = off, .len = len };
	struct famfs_ioc_fmap m;

	memset(&m, 0, sizeof(m));
	m.fioc_file_size = size;
	m.fioc_file_type = type;
	m.fioc_ext_type = FAMFS_IOC_EXT_SIMPLE;
	m.fioc_nextents = 1;
	m.kse = &se;
	return ioctl(fd, FAMFSIOC_MAP_CREATE_V2, &m);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static uint64_t read_pass(const uint64_t *p)
{
	uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	size_t i, n = FSIZE / 8;

	for (i = 0; i < n; i += 4) {
		s0 += p[i];
		s1 ^= p[i + 1];
		s2 += p[i + 2];
		s3 ^= p[i + 3];
	}
	return s0 ^ (s1 << 1) ^ (s2 << 2) ^ (s3 << 3);
}

struct timed_pass {
	double fresh;	/* mmap + faults + read of a new mapping */
	double mapped;	/* a second read of the same mapping, all faulted in */
	uint64_t sum;	/* the checksum of the first read */
	bool stable;	/* the second read saw the same bytes */
};

/* Read every byte of a fresh mapping, then again */
static struct timed_pass timed_read(int fd, off_t off, long *faults)
{
	struct timed_pass t;
	const uint64_t *p;
	long f0 = minflt();
	double t0 = now();

	p = mmap(NULL, FSIZE, PROT_READ, MAP_SHARED, fd, off);
	if (p == MAP_FAILED)
		bail("mmap");
	t.sum = read_pass(p);
	t.fresh = now() - t0;
	*faults = minflt() - f0;
	t0 = now();
	t.stable = read_pass(p) == t.sum;
	t.mapped = now() - t0;
	munmap((void *)p, FSIZE);
	return t;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One device: mkfs, mount, a 256 MiB file, RUNS alternating reads of it and of the raw device. */
static void bench_device(const char *dev)
{
	double t_famfs[RUNS], t_raw[RUNS], m_famfs[RUNS], m_raw[RUNS], ratio[RUNS], m_ratio[RUNS];
	double bw_f, bw_r, mbw_f, mbw_r, r, gib = FSIZE / (double)(1 << 30);
	struct timed_pass tf, tr;
	long long pte = 0, pmd = 0, pud = 0;
	long long pte_run, pmd_run, pud_run;
	long flt_f = 0, flt_r = 0, flt_famfs_run, flt_raw_run;
	uint64_t log_len, data0, first_f = 0, first_r = 0;
	int same = 1, fd, dfd, i;
	unsigned char sb[4096];
	char *buf;

	char cmd[128], what[160];

	snprintf(cmd, sizeof(cmd), "/bin/mkfs.famfs -f %s >/dev/null", dev);
	if (sh("insmod /modules/famfs.ko") || sh(cmd))
		bail("insmod famfs.ko / mkfs.famfs");
	mkdir(MNT, 0755);
	if (mount(dev, MNT, "famfs", 0, ""))
		bail("mount");
	mkdir(MNT "/.meta", 0700);
	fd = open(MNT "/.meta/.superblock", O_RDWR | O_CREAT, 0444);
	if (fd < 0 || map_one(fd, FAMFS_SUPERBLOCK, ALIGN_2M, 0, ALIGN_2M) ||
	    pread(fd, sb, sizeof(sb), 0) != sizeof(sb))
		bail(".meta/.superblock");
	close(fd);
	memcpy(&log_len, sb + VM_SB_LOGLEN_OFF, 8);
	data0 = vm_data_base(log_len);
	fd = open(MNT "/.meta/.log", O_RDWR | O_CREAT, 0644);
	if (fd < 0 || map_one(fd, FAMFS_LOG, log_len, ALIGN_2M, log_len))
		bail(".meta/.log");
	close(fd);

	fd = open(MNT "/bench", O_RDWR | O_CREAT, 0644);
	if (fd < 0 || map_one(fd, FAMFS_REG, FSIZE, data0, FSIZE))
		bail("MAP_CREATE_V2 of the 256 MiB file");
	buf = malloc(8 * MiB);
	for (i = 0; i < (int)(FSIZE / (8 * MiB)); i++) {
		vm_pat_fill(buf, 8 * MiB, i * 8 * MiB, 77);
		if (pwrite(fd, buf, 8 * MiB, i * 8 * MiB) != (ssize_t)(8 * MiB))
			bail("write");
	}
	free(buf);

	dfd = open(dev, O_RDONLY);
	if (dfd < 0)
		bail("open the device");

	printf("# %s: famfs file of 256 MiB at device offset %llu; %d runs each after %d not counted, "
	       "famfs and raw back to back, in turns first\n", dev, (unsigned long long)data0, RUNS, WARMUP);
	for (i = -WARMUP; i < RUNS; i++) {
		bool famfs_first = i % 2 == 0;

		if (!famfs_first)
			tr = timed_read(dfd, data0, &flt_raw_run);
		write_str("/sys/fs/famfs/fault_count_enable", "1");
		tf = timed_read(fd, 0, &flt_famfs_run);
		pte_run = read_ll("/sys/fs/famfs/pte_fault_ct");
		pmd_run = read_ll("/sys/fs/famfs/pmd_fault_ct");
		pud_run = read_ll("/sys/fs/famfs/pud_fault_ct");
		write_str("/sys/fs/famfs/fault_count_enable", "0");
		if (famfs_first)
			tr = timed_read(dfd, data0, &flt_raw_run);

		same &= tf.stable && tr.stable;
		if (i == -WARMUP) {
			first_f = tf.sum;
			first_r = tr.sum;
		}
		same &= tf.sum == first_f && tr.sum == first_r && tf.sum == tr.sum;
		printf("# %s %d: famfs %.1f MiB/s, raw %s %.1f MiB/s (ratio %.3f); faulted in: famfs %.1f, raw %.1f MiB/s\n",
		       i < 0 ? "warm-up" : "run", i < 0 ? i + WARMUP + 1 : i + 1, 256 / tf.fresh, dev, 256 / tr.fresh, tr.fresh / tf.fresh,
		       256 / tf.mapped, 256 / tr.mapped);
		if (i < 0)
			continue;
		t_famfs[i] = tf.fresh;
		m_famfs[i] = tf.mapped;
		t_raw[i] = tr.fresh;
		m_raw[i] = tr.mapped;
		ratio[i] = tr.fresh / tf.fresh;
		m_ratio[i] = tr.mapped / tf.mapped;
		flt_f += flt_famfs_run;
		flt_r += flt_raw_run;
		pte += pte_run;
		pmd += pmd_run;
		pud += pud_run;
	}
	close(dfd);
	close(fd);

	bw_f = 256 / median(t_famfs, RUNS);
	bw_r = 256 / median(t_raw, RUNS);
	printf("# %s: median sequential mmap read: famfs %.1f MiB/s, raw %.1f MiB/s\n",
	       dev, bw_f, bw_r);
	r = median(ratio, RUNS);
	printf("# %s: ratio famfs/raw, median of the runs' ratios: %.3f (target >= 0.95: %s); of the medians: %.3f\n",
	       dev, r, r >= 0.95 ? "met" : "NOT met", bw_f / bw_r);
	mbw_f = 256 / median(m_famfs, RUNS);
	mbw_r = 256 / median(m_raw, RUNS);
	printf("# %s: median read of a faulted-in mapping: famfs %.1f MiB/s, raw %.1f MiB/s, median ratio %.3f\n",
	       dev, mbw_f, mbw_r, median(m_ratio, RUNS));
	/* what the faults cost: a fresh pass minus a pass over the faulted-in mapping */
	printf("# %s: fault cost per 2 MiB (fresh - faulted-in, medians): famfs %.1f us, raw %.1f us\n",
	       dev, (256 / bw_f - 256 / mbw_f) * 1e6 / (FSIZE / ALIGN_2M),
	       (256 / bw_r - 256 / mbw_r) * 1e6 / (FSIZE / ALIGN_2M));
	printf("# %s: famfs faults per GiB: pte %.1f, pmd %.1f, pud %.1f\n", dev,
	       pte / (gib * RUNS), pmd / (gib * RUNS), pud / (gib * RUNS));
	printf("# %s: minor faults per GiB (getrusage): famfs %.1f, raw %.1f\n", dev,
	       flt_f / (gib * RUNS), flt_r / (gib * RUNS));

	snprintf(what, sizeof(what), "famfs and raw %s mappings read the same bytes in every run", dev);
	tap(same, what);
	snprintf(what, sizeof(what), "famfs on %s served the file with PMD faults only (128 per run)", dev);
	tap(pte == 0 && pmd == RUNS * (long long)(FSIZE / ALIGN_2M), what);

	umount(MNT);
	sh("rmmod famfs");
}

int main(int argc, char **argv)
{
	const char *scenario = argc > 1 ? argv[1] : "bench";

	setvbuf(stdout, NULL, _IOLBF, 0);
	bench_device("/dev/pmem0");
	if (!strcmp(scenario, "bench-devdax")) {
		if (sh("ndctl create-namespace -f -e namespace1.0 -m devdax -a 2M >/tmp/ndctl.out 2>&1") ||
		    access("/dev/dax1.0", F_OK)) {
			sh("sed 's/^/# ndctl: /' /tmp/ndctl.out");
			errno = ENODEV;
			bail("ndctl create-namespace -m devdax on the second region");
		}
		bench_device("/dev/dax1.0");
	}
	printf("1..%d\n", ntest);
	return nfail ? 1 : 0;
}
