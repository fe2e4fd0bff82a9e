// SPDX-License-Identifier: GPL-2.0
/*
 * famfs_vm_test - the famfs kernel module tests, run inside the test VM
 *
 * usage: famfs_vm_test main|shared|client|media
 *
 * Prints TAP on stdout.  "main" runs on the legacy pmem device that
 * memmap= gives (/dev/pmem0, 512 MiB); "shared" runs on a file-backed
 * NVDIMM that the host peer (tests/vm/shm_peer.c), or a second guest
 * running "client", maps at the same time;
 * "media" injects a memory failure under a famfs file.
 * Needs /modules/famfs.ko, /bin/mkfs.famfs, /bin/fsck.famfs and ndctl.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
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
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <linux/famfs_ioctl.h>

#include "vm_common.h"

#define MNT	"/mnt/famfs"
#define MKFS	"/bin/mkfs.famfs"
#define FSCK	"/bin/fsck.famfs"
#define KO	"/modules/famfs.ko"
#define FAMFS_STATFS_MAGIC 0x87b282feU

static const char *dev = "/dev/pmem0";
static int ntest;
static int nfail;

/* ---- TAP ---------------------------------------------------------------- */

static bool tap(bool ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static bool tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", ok ? "ok" : "not ok", ++ntest);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!ok)
		nfail++;
	return ok;
}

static void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* Expect rc == 0 */
static bool tap_rc(int rc, const char *what)
{
	if (rc)
		return tap(false, "%s (error: %s)", what, strerror(-rc));
	return tap(true, "%s", what);
}

/* Expect failure with exactly errno want (rc is 0 or -errno) */
static bool tap_errno(int rc, int want, const char *what)
{
	if (rc == -want)
		return tap(true, "%s -> %s", what, strerrorname_np(want));
	return tap(false, "%s: want %s, got %s", what, strerrorname_np(want),
		   rc ? strerrorname_np(-rc) : "success");
}

/* ---- helpers ------------------------------------------------------------ */

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	fflush(stdout);
	st = system(cmd);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static int neg_errno(int rc)
{
	return rc < 0 ? -errno : 0;
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static int read_long(const char *path, long long *val)
{
	char buf[64];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	*val = strtoll(buf, NULL, 0);
	return 0;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -EIO;
}

static void *xmalloc(size_t n)
{
	void *p;

	if (posix_memalign(&p, 4096, n ? n : 1)) {
		printf("Bail out! out of memory\n");
		exit(1);
	}
	return p;
}

/* Read device bytes through O_DIRECT, so no page cache sits in between */
static int dev_read(uint64_t off, void *buf, size_t len)
{
	int fd = open(dev, O_RDONLY | O_DIRECT);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = pread(fd, buf, len, off);
	close(fd);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

static int wait_for(const char *path, int tenths)
{
	while (!exists(path) && tenths-- > 0)
		usleep(100000);
	return exists(path) ? 0 : -ENOENT;
}

/* Read one byte of a mapping; -EFAULT instead of dying on SIGBUS/SIGSEGV */
static sigjmp_buf probe_jmp;

static void probe_signal(int sig)
{
	siglongjmp(probe_jmp, sig);
}

static int probe_byte(const volatile unsigned char *p, unsigned char *val)
{
	struct sigaction sa = { .sa_handler = probe_signal }, obus, osegv;
	int rc = 0;

	sigaction(SIGBUS, &sa, &obus);
	sigaction(SIGSEGV, &sa, &osegv);
	if (sigsetjmp(probe_jmp, 1) == 0)
		*val = *p;
	else
		rc = -EFAULT;
	sigaction(SIGBUS, &obus, NULL);
	sigaction(SIGSEGV, &osegv, NULL);
	return rc;
}

/* ---- ioctl wrappers: 0 or -errno ----------------------------------------- */

static int map_v1(int fd, uint32_t ftype, uint64_t size, uint64_t n,
		  const uint64_t *off, const uint64_t *len)
{
	struct famfs_ioc_map m;
	uint64_t i;

	memset(&m, 0, sizeof(m));
	m.extent_type = SIMPLE_DAX_EXTENT;
	m.file_type = ftype;
	m.file_size = size;
	m.ext_list_count = n;
	for (i = 0; i < n && i < FAMFS_MAX_EXTENTS; i++) {
		m.ext_list[i].offset = off[i];
		m.ext_list[i].len = len[i];
	}
	return neg_errno(ioctl(fd, FAMFSIOC_MAP_CREATE, &m));
}

static int map_v2(int fd, uint32_t ftype, uint64_t size, uint32_t n,
		  struct famfs_ioc_simple_extent *se)
{
	struct famfs_ioc_fmap m;

	memset(&m, 0, sizeof(m));
	m.fioc_file_size = size;
	m.fioc_file_type = ftype;
	m.fioc_ext_type = FAMFS_IOC_EXT_SIMPLE;
	m.fioc_nextents = n;
	m.kse = se;
	return neg_errno(ioctl(fd, FAMFSIOC_MAP_CREATE_V2, &m));
}

static int map_v2i(int fd, uint64_t size, uint32_t niext,
		   struct famfs_ioc_interleaved_ext *ie)
{
	struct famfs_ioc_fmap m;

	memset(&m, 0, sizeof(m));
	m.fioc_file_size = size;
	m.fioc_file_type = FAMFS_REG;
	m.fioc_ext_type = FAMFS_IOC_EXT_INTERLEAVE;
	m.fioc_niext = niext;
	m.kie = ie;
	return neg_errno(ioctl(fd, FAMFSIOC_MAP_CREATE_V2, &m));
}

static int one_v2(int fd, uint64_t size, uint64_t off, uint64_t len)
{
	struct famfs_ioc_simple_extent se = { .offset = off, .len = len };

	return map_v2(fd, FAMFS_REG, size, 1, &se);
}

static int create_file(const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), MNT "/%s", rel);
	return open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
}

/*
 * Runs @fn(@arg) in a child that dropped to uid and gid 65534; returns its
 * exit status (100: it could not drop them), or -1 if it did not exit.
 */
static int as_nobody(int (*fn)(void *), void *arg)
{
	pid_t pid;
	int wst = 0;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(100);
		_exit(fn(arg));
	}
	if (pid < 0 || waitpid(pid, &wst, 0) < 0 || !WIFEXITED(wst))
		return -1;
	return WEXITSTATUS(wst);
}

/* Child exit codes for an unprivileged call: 0 EPERM, 102 success, 103 other */
static int eperm_status(long rc)
{
	return rc == -EPERM ? 0 : rc >= 0 ? 102 : 103;
}

/* ---- file system state shared by the tests ------------------------------- */

static uint64_t log_len;
static uint64_t data0;		/* first data offset the tests use */
static uint64_t dev_bytes;

static int mount_famfs(const char *opts)
{
	mkdir(MNT, 0755);
	return neg_errno(mount(dev, MNT, "famfs", 0, opts));
}

/* .meta/.superblock and .meta/.log, as the daemon would create them */
static int make_meta(bool verbose)
{
	uint64_t off = 0, len = ALIGN_2M;
	unsigned char sb[4096];
	int fd, rc;

	if (mkdir(MNT "/.meta", 0700) && errno != EEXIST)
		return -errno;

	fd = create_file(".meta/.superblock");
	if (fd < 0)
		return -errno;
	rc = map_v1(fd, FAMFS_SUPERBLOCK, ALIGN_2M, 1, &off, &len);
	if (verbose)
		tap_rc(rc, "MAP_CREATE (v1) .meta/.superblock, offset 0 length 2 MiB");
	if (rc) {
		close(fd);
		return rc;
	}
	if (pread(fd, sb, sizeof(sb), 0) != sizeof(sb)) {
		rc = -errno;
		close(fd);
		return rc ? rc : -EIO;
	}
	close(fd);

	if (verbose) {
		uint64_t magic, ver;

		memcpy(&magic, sb, 8);
		memcpy(&ver, sb + 8, 8);
		tap(magic == VM_SB_MAGIC && ver == VM_SB_VERSION,
		    "read(2) of .meta/.superblock shows magic 0x%llx version %llu",
		    (unsigned long long)magic, (unsigned long long)ver);
	}
	memcpy(&log_len, sb + VM_SB_LOGLEN_OFF, 8);
	if (log_len < 8 * MiB || log_len > dev_bytes / 2)
		return -EUCLEAN;
	data0 = vm_data_base(log_len);

	fd = create_file(".meta/.log");
	if (fd < 0)
		return -errno;
	{
		struct famfs_ioc_simple_extent se = {
			.offset = ALIGN_2M, .len = log_len,
		};

		rc = map_v2(fd, FAMFS_LOG, log_len, 1, &se);
	}
	if (verbose)
		tap_rc(rc, "MAP_CREATE_V2 .meta/.log, offset 2 MiB");
	if (!rc && verbose) {
		uint64_t *p = mmap(NULL, log_len, PROT_READ, MAP_SHARED, fd, 0);

		if (p == MAP_FAILED) {
			tap(false, "mmap .meta/.log: %s", strerror(errno));
		} else {
			tap(p[0] == VM_LOG_MAGIC && p[1] == log_len,
			    "mmap of .meta/.log shows log magic 0x%llx, length %llu",
			    (unsigned long long)p[0], (unsigned long long)p[1]);
			munmap(p, log_len);
		}
	}
	close(fd);
	return rc;
}

static long long dev_size_bytes(void)
{
	long long sectors = 0;
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/block/%s/size",
		 strrchr(dev, '/') + 1);
	if (read_long(path, &sectors))
		return 0;
	return sectors * 512;
}

/* ---- data identity --------------------------------------------------------- */

/*
 * write(2) a pattern, read it back through mmap; mmap-write another, read
 * it back with read(2).  Leaves the second pattern (seed2) in the file.
 */
static void data_identity(const char *name, int fd, uint64_t size,
			  uint64_t seed1, uint64_t seed2)
{
	unsigned char *buf = xmalloc(size);
	unsigned char *map;
	long long bad;
	ssize_t n;

	vm_pat_fill(buf, size, 0, seed1);
	n = pwrite(fd, buf, size, 0);
	tap(n == (ssize_t)size, "%s: write(2) of %llu bytes (got %zd)", name,
	    (unsigned long long)size, n);

	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		tap(false, "%s: mmap: %s", name, strerror(errno));
		tap(false, "%s: mmap write, read(2) back", name);
		free(buf);
		return;
	}
	bad = vm_pat_check(map, size, 0, seed1);
	tap(bad < 0, "%s: mmap reads what write(2) wrote%s", name,
	    bad < 0 ? "" : " (mismatch)");
	if (bad >= 0)
		diag("first difference at file offset %lld", bad);

	vm_pat_fill(map, size, 0, seed2);
	msync(map, size, MS_SYNC);
	munmap(map, size);

	memset(buf, 0, size);
	n = pread(fd, buf, size, 0);
	bad = n == (ssize_t)size ? vm_pat_check(buf, size, 0, seed2) : 0;
	tap(n == (ssize_t)size && bad < 0,
	    "%s: read(2) reads what mmap wrote (read %zd)", name, n);
	if (bad >= 0)
		diag("first difference at file offset %lld", bad);
	free(buf);
}

/* Compare device bytes [dev_off, +len) with the file pattern at file_off */
static long long dev_matches(uint64_t dev_off, uint64_t len, uint64_t file_off,
			     uint64_t seed)
{
	uint64_t rlen = vm_round_up(len, 4096);
	unsigned char *buf = xmalloc(rlen);
	long long bad;

	if (dev_read(dev_off, buf, rlen)) {
		free(buf);
		return 0;
	}
	bad = vm_pat_check(buf, len, file_off, seed);
	free(buf);
	return bad;
}

/* ---- the main scenario ------------------------------------------------------- */

static void test_load(void)
{
	long long kabi = 0;

	tap(sh("insmod " KO) == 0, "insmod famfs.ko");
	tap(exists("/sys/fs/famfs/fault_count_enable") &&
	    exists("/sys/fs/famfs/pte_fault_ct") &&
	    exists("/sys/fs/famfs/pmd_fault_ct") &&
	    exists("/sys/fs/famfs/pud_fault_ct"),
	    "/sys/fs/famfs has the fault counters");
	read_long("/sys/module/famfs/parameters/famfs_kabi_version", &kabi);
	tap(kabi == FAMFS_KABI_VERSION, "famfs_kabi_version is %lld", kabi);
}

/*
 * Gives the log a torn tail behind the mount's back (one more slot counted
 * than written), checks that fsck.famfs -y finds it but will not repair a
 * mounted device, and puts the header back.
 */
static void test_tools_refuse_mounted(void)
{
	uint64_t hdr[6], torn[6];
	int fd = open(dev, O_RDWR), rc;

	if (fd < 0 || pread(fd, hdr, sizeof(hdr), 2 * MiB) != sizeof(hdr)) {
		tap(false, "read the log header of %s: %s", dev, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	memcpy(torn, hdr, sizeof(torn));
	torn[4]++;	/* next_seqnum */
	torn[5]++;	/* next_index: the slot there is empty */
	rc = pwrite(fd, torn, sizeof(torn), 2 * MiB) == sizeof(torn) && fsync(fd) == 0;
	tap(rc, "a torn tail written into the mounted device's log");
	rc = sh(FSCK " -y %s >/tmp/fsck.out 2>&1", dev);
	tap(rc == 12 && sh("grep -q -e mounted -e 'in use' /tmp/fsck.out") == 0,
	    "fsck.famfs -y finds it and refuses to repair a mounted device (exit %d)", rc);
	if (rc != 12)
		sh("sed 's/^/# fsck: /' /tmp/fsck.out");
	rc = pread(fd, torn, sizeof(torn), 2 * MiB) == sizeof(torn) && torn[5] == hdr[5] + 1;
	tap(rc, "the mounted device's log was left as it was");
	rc = pwrite(fd, hdr, sizeof(hdr), 2 * MiB) == sizeof(hdr) && fsync(fd) == 0;
	tap(rc, "the log header put back");
	close(fd);
}

static void test_mkfs_mount(bool do_mkfs)
{
	struct statfs sfs;
	int rc;

	dev_bytes = dev_size_bytes();
	diag("%s: %llu bytes", dev, (unsigned long long)dev_bytes);
	if (do_mkfs && sh("blockdev --setro %s", dev) == 0) {
		int rc2 = sh(MKFS " %s >/tmp/mkfs.out 2>&1", dev);
		bool said = sh("grep -q read-only /tmp/mkfs.out") == 0;

		tap(rc2 == 1 && said, "mkfs.famfs refuses a read-only device, saying so (%d)", rc2);
		if (rc2 != 1 || !said)
			sh("sed 's/^/# mkfs: /' /tmp/mkfs.out");
		sh("blockdev --setrw %s", dev);
	}
	if (do_mkfs)
		tap(exists(MKFS) && sh(MKFS " %s", dev) == 0, "mkfs.famfs %s",
		    dev);
	tap(exists(FSCK) && sh(FSCK " %s", dev) == 0,
	    "fsck.famfs %s is clean%s", dev, do_mkfs ? " after mkfs" : "");

	rc = mount_famfs("");
	tap_rc(rc, "mount -t famfs /dev/pmem0 " MNT);
	if (rc) {
		printf("Bail out! cannot mount famfs\n");
		exit(1);
	}
	memset(&sfs, 0, sizeof(sfs));
	rc = neg_errno(statfs(MNT, &sfs));
	tap(rc == 0 && (uint32_t)sfs.f_type == FAMFS_STATFS_MAGIC,
	    "statfs f_type is 0x%x", (unsigned int)sfs.f_type);

	/* The standalone tools keep their hands off a mounted device */
	test_tools_refuse_mounted();
	rc = sh(FSCK " -M %s >/dev/null 2>&1", dev);
	tap(rc == 0, "fsck.famfs -M skips the mounted device (%d)", rc);
	rc = sh(MKFS " -f %s >/tmp/mkfs.out 2>&1", dev);
	tap(rc == 1 && sh("grep -q -e 'in use' -e mounted /tmp/mkfs.out") == 0,
	    "mkfs.famfs -f refuses the mounted device, saying why (%d)", rc);
	if (rc != 1)
		sh("sed 's/^/# mkfs: /' /tmp/mkfs.out");

	mkdir("/mnt/famfs2", 0755);
	rc = neg_errno(mount(dev, "/mnt/famfs2", "famfs", 0, ""));
	tap_errno(rc, EBUSY, "a second mount of the same device");
	if (!rc)
		umount("/mnt/famfs2");

	{
		int ifd = open("/tmp/image", O_RDWR | O_CREAT, 0644);

		if (ifd >= 0) {
			ftruncate(ifd, 16 * MiB);
			close(ifd);
		}
		rc = neg_errno(mount("/tmp/image", "/mnt/famfs2", "famfs", 0, ""));
		tap_errno(rc, ENOTBLK, "mount -t famfs of a regular file");
		if (!rc)
			umount("/mnt/famfs2");
		unlink("/tmp/image");
	}

	rc = make_meta(true);
	if (rc) {
		printf("Bail out! no .meta files (%s)\n", strerror(-rc));
		exit(1);
	}
	diag("log length %llu, test data from offset %llu",
	     (unsigned long long)log_len, (unsigned long long)data0);
}

static void test_get(int fd_sb)
{
	struct famfs_ioc_map m;
	int rc;

	memset(&m, 0xff, sizeof(m));
	rc = neg_errno(ioctl(fd_sb, FAMFSIOC_MAP_GET, &m));
	tap(rc == 0 && m.file_type == FAMFS_SUPERBLOCK &&
	    m.ext_list_count == 1 && m.ext_list[0].offset == 0 &&
	    m.ext_list[0].len == ALIGN_2M && m.file_size == ALIGN_2M,
	    "MAP_GET on .meta/.superblock returns its map");
}

static void test_v1_simple(void)
{
	uint64_t off[2] = { data0, data0 + 8 * MiB };
	uint64_t len[2] = { 4 * MiB, 2 * MiB };
	uint64_t size = 5 * MiB + 123;
	struct famfs_extent ext[2];
	struct famfs_ioc_map m;
	long long bad;
	int fd, rc;

	fd = create_file("v1two");
	rc = map_v1(fd, FAMFS_REG, size, 2, off, len);
	tap_rc(rc, "MAP_CREATE (v1) with 2 simple extents");

	memset(&m, 0, sizeof(m));
	rc = neg_errno(ioctl(fd, FAMFSIOC_MAP_GET, &m));
	memset(ext, 0, sizeof(ext));
	rc = rc ? rc : neg_errno(ioctl(fd, FAMFSIOC_MAP_GETEXT, ext));
	tap(rc == 0 && m.ext_list_count == 2 && m.file_size == size &&
	    ext[0].offset == off[0] && ext[0].len == len[0] &&
	    ext[1].offset == off[1] && ext[1].len == len[1],
	    "MAP_GET and MAP_GETEXT return the 2 extents");

	{
		struct stat st;

		tap(fstat(fd, &st) == 0 && (uint64_t)st.st_size == size,
		    "the file size is the mapped size");
	}

	data_identity("v1two", fd, size, 11, 12);

	bad = dev_matches(off[0], len[0], 0, 12);
	tap(bad < 0, "v1two: bytes [0, 4 MiB) are at device offset %llu",
	    (unsigned long long)off[0]);
	bad = dev_matches(off[1], size - len[0], len[0], 12);
	tap(bad < 0, "v1two: bytes [4 MiB, EOF) are at device offset %llu",
	    (unsigned long long)off[1]);

	/* Writes never extend: cut at EOF, nothing at EOF, nothing appended */
	{
		char b[100];
		ssize_t n;
		int afd;

		memset(b, 'x', sizeof(b));
		n = pwrite(fd, b, sizeof(b), size);
		tap(n == 0, "write at EOF writes 0 bytes (got %zd)", n);
		n = pwrite(fd, b, sizeof(b), size - 10);
		tap(n == 10, "write across EOF is cut at EOF (wrote %zd of 100)", n);
		afd = open(MNT "/v1two", O_WRONLY | O_APPEND);
		n = write(afd, b, sizeof(b));
		tap(n == 0, "O_APPEND write writes 0 bytes (got %zd)", n);
		close(afd);
		n = pread(fd, b, sizeof(b), size);
		tap(n == 0, "read at EOF returns 0 (got %zd)", n);
		{
			struct stat st;

			tap(fstat(fd, &st) == 0 && (uint64_t)st.st_size == size,
			    "the size did not change");
		}
	}

	/* A private mapping copies on write and leaves the file alone */
	{
		unsigned char *pm, b[64];
		bool same;

		pm = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		if (pm == MAP_FAILED) {
			tap(false, "MAP_PRIVATE mmap: %s", strerror(errno));
		} else {
			memset(pm + 4096, 0xa5, sizeof(b));
			same = pm[4096] == 0xa5;
			munmap(pm, size);
			same = same && pread(fd, b, sizeof(b), 4096) == sizeof(b) &&
			       vm_pat_check(b, sizeof(b), 4096, 12) < 0;
			tap(same, "a MAP_PRIVATE write stays private (the file keeps its bytes)");
		}
	}
	close(fd);
}

static void test_v2_interleaved(void)
{
	struct famfs_ioc_simple_extent st[3];
	struct famfs_ioc_interleaved_ext ie;
	struct famfs_ioc_get_fmap g;
	uint64_t chunk = 2 * MiB, size = 20 * MiB + 77, k, nchunks;
	bool placed = true;
	int fd, rc, i;

	for (i = 0; i < 3; i++) {
		st[i].devindex = 0;
		st[i].offset = data0 + (96 + 16 * i) * MiB;
		st[i].len = 8 * MiB;
	}
	ie.ie_nstrips = 3;
	ie.ie_chunk_size = chunk;
	ie.ie_nbytes = 24 * MiB;
	ie.ie_strips = st;

	fd = create_file("inter");
	rc = map_v2i(fd, size, 1, &ie);
	tap_rc(rc, "MAP_CREATE_V2, interleaved: 3 strips of 8 MiB, 2 MiB chunks");

	memset(&g, 0, sizeof(g));
	rc = neg_errno(ioctl(fd, FAMFSIOC_MAP_GET_V2, &g));
	tap(rc == 0 && g.iocmap.fioc_ext_type == FAMFS_IOC_EXT_INTERLEAVE &&
	    g.iocmap.fioc_niext == 1 && g.iocmap.fioc_file_size == size &&
	    g.ks.ikie.ie_nstrips == 3 && g.ks.ikie.ie_chunk_size == chunk &&
	    g.ks.ikie.ie_nbytes == 24 * MiB &&
	    g.ks.kie_strips[2].offset == st[2].offset &&
	    g.ks.kie_strips[2].len == st[2].len,
	    "MAP_GET_V2 returns the interleaved map");
	{
		struct famfs_ioc_map m;

		rc = neg_errno(ioctl(fd, FAMFSIOC_MAP_GET, &m));
		tap_errno(rc, EINVAL, "MAP_GET (v1) on an interleaved file");
	}

	data_identity("inter", fd, size, 21, 22);

	/* chunk k lives in strip k % 3 at offset (k / 3) * chunk */
	nchunks = (size + chunk - 1) / chunk;
	for (k = 0; k < nchunks; k++) {
		uint64_t fo = k * chunk;
		uint64_t n = size - fo < chunk ? size - fo : chunk;
		uint64_t d = st[k % 3].offset + (k / 3) * chunk;

		if (dev_matches(d, n, fo, 22) >= 0) {
			diag("chunk %llu is not at device offset %llu",
			     (unsigned long long)k, (unsigned long long)d);
			placed = false;
		}
	}
	tap(placed, "inter: each of the %llu chunks is in strip k%%3 at (k/3)*chunk",
	    (unsigned long long)nchunks);
	close(fd);

	/* An interleaved extent that ends mid-page: its last page faults fine */
	{
		uint64_t odd = 6 * MiB + 77;
		unsigned char *m;
		char tail[77];
		bool ok;

		for (i = 0; i < 3; i++)
			st[i].offset = data0 + (144 + 4 * i) * MiB,
			st[i].len = 4 * MiB;
		ie.ie_nbytes = odd;
		fd = create_file("inter_odd");
		rc = map_v2i(fd, odd, 1, &ie);
		tap_rc(rc, "MAP_CREATE_V2, interleaved extent of 6 MiB + 77 bytes");
		memset(tail, 0x5a, sizeof(tail));
		ok = pwrite(fd, tail, sizeof(tail), 6 * MiB) == sizeof(tail);
		m = mmap(NULL, odd, PROT_READ, MAP_SHARED, fd, 0);
		if (m != MAP_FAILED) {
			unsigned char a = 0, z = 0;

			ok = ok && probe_byte(m + 6 * MiB + 76, &z) == 0 &&
			     probe_byte(m + 6 * MiB, &a) == 0 &&
			     a == 0x5a && z == 0x5a;
		}
		tap(ok && m != MAP_FAILED,
		    "its last, partial page reads back through mmap (no SIGBUS)");
		if (m != MAP_FAILED)
			munmap(m, odd);
		close(fd);
	}
}

/* Two interleaved extents back to back: the second starts where the first ends */
static void test_v2_two_iexts(void)
{
	struct famfs_ioc_simple_extent s0[2], s1[3];
	struct famfs_ioc_interleaved_ext ie[2];
	struct famfs_ioc_get_fmap g;
	uint64_t chunk = 2 * MiB, size = 10 * MiB, k, b = data0 + 220 * MiB;
	bool placed = true;
	int fd, rc, i;

	for (i = 0; i < 2; i++) {
		s0[i].devindex = 0;
		s0[i].offset = b + 2 * i * MiB;
		s0[i].len = 2 * MiB;
	}
	for (i = 0; i < 3; i++) {
		s1[i].devindex = 0;
		s1[i].offset = b + (8 + 4 * i) * MiB;
		s1[i].len = 4 * MiB;
	}
	ie[0] = (struct famfs_ioc_interleaved_ext){ 2, chunk, 4 * MiB, s0 };
	ie[1] = (struct famfs_ioc_interleaved_ext){ 3, chunk, 6 * MiB, s1 };

	fd = create_file("inter2");
	rc = map_v2i(fd, size, 2, ie);
	tap_rc(rc, "MAP_CREATE_V2 with 2 interleaved extents (2 and 3 strips)");
	rc = neg_errno(ioctl(fd, FAMFSIOC_MAP_GET_V2, &g));
	tap_errno(rc, E2BIG, "MAP_GET_V2 of a map with 2 interleaved extents");

	data_identity("inter2", fd, size, 31, 32);
	for (k = 0; k < 5; k++) {
		uint64_t fo = k * chunk, d;

		if (k < 2)
			d = s0[k % 2].offset + (k / 2) * chunk;
		else
			d = s1[(k - 2) % 3].offset + ((k - 2) / 3) * chunk;
		if (dev_matches(d, chunk, fo, 32) >= 0) {
			diag("chunk %llu is not at device offset %llu",
			     (unsigned long long)k, (unsigned long long)d);
			placed = false;
		}
	}
	tap(placed, "inter2: chunks of each interleaved extent are where its strips say");
	close(fd);
}

/* Two threads race MAP_CREATE_V2 on one file: exactly one may win */
struct race_arg {
	pthread_barrier_t *bar;
	int fd;
	uint64_t off;
	int rc;
};

static void *race_map(void *p)
{
	struct race_arg *a = p;

	pthread_barrier_wait(a->bar);
	a->rc = one_v2(a->fd, ALIGN_2M, a->off, ALIGN_2M);
	return NULL;
}

/* Readers hammering one interleaved file through read(2) and mmap */
struct reader_arg {
	int fd;
	uint64_t size;
	unsigned int seed;
	int bad;
};

static void *reader(void *p)
{
	struct reader_arg *a = p;
	unsigned char buf[8192];
	unsigned char *m;
	int i;

	m = mmap(NULL, a->size, PROT_READ, MAP_SHARED, a->fd, 0);
	if (m == MAP_FAILED) {
		a->bad++;
		return NULL;
	}
	for (i = 0; i < 400; i++) {
		uint64_t off = (rand_r(&a->seed) % (a->size / 8 - 1024)) * 8;

		if (pread(a->fd, buf, sizeof(buf), off) != sizeof(buf) ||
		    vm_pat_check(buf, sizeof(buf), off, 22) >= 0)
			a->bad++;
		if (vm_pat_check(m + off, 512, off, 22) >= 0)
			a->bad++;
	}
	munmap(m, a->size);
	return NULL;
}

static void test_races(void)
{
	struct reader_arg ra[4];
	pthread_t th[4];
	pthread_barrier_t bar;
	int r, wins = 0, eexist = 0, other = 0, bad = 0, fd, i;

	pthread_barrier_init(&bar, NULL, 2);
	for (r = 0; r < 50; r++) {
		struct race_arg a[2];
		char name[32];

		snprintf(name, sizeof(name), "race%d", r);
		fd = create_file(name);
		for (i = 0; i < 2; i++) {
			a[i] = (struct race_arg){ &bar, fd,
				data0 + (250 + 2 * (r % 8)) * MiB, 0 };
			pthread_create(&th[i], NULL, race_map, &a[i]);
		}
		for (i = 0; i < 2; i++) {
			pthread_join(th[i], NULL);
			if (a[i].rc == 0)
				wins++;
			else if (a[i].rc == -EEXIST)
				eexist++;
			else
				other++;
		}
		close(fd);
	}
	pthread_barrier_destroy(&bar);
	tap(wins == 50 && eexist == 50 && other == 0,
	    "50 races of two MAP_CREATE_V2 on one file: one wins, one gets EEXIST (%d/%d/%d)",
	    wins, eexist, other);

	fd = open(MNT "/inter", O_RDONLY);
	for (i = 0; i < 4; i++) {
		ra[i] = (struct reader_arg){ fd, 20 * MiB, 1000u + i, 0 };
		pthread_create(&th[i], NULL, reader, &ra[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		bad += ra[i].bad;
	}
	close(fd);
	tap(bad == 0, "4 threads reading an interleaved file at random (read(2) and mmap): %d mismatches",
	    bad);
}

static void test_faults(void)
{
	uint64_t size = 64 * MiB, i;
	long long pte = -1, pmd = -1, pud = -1;
	volatile unsigned char *p;
	unsigned long sum = 0;
	int fd, rc;

	fd = create_file("big64");
	rc = one_v2(fd, size, data0 + 32 * MiB, size);
	tap_rc(rc, "MAP_CREATE_V2, one simple extent of 64 MiB");

	rc = write_str("/sys/fs/famfs/fault_count_enable", "1");
	tap_rc(rc, "fault counting enabled (counters cleared)");

	p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		tap(false, "mmap big64: %s", strerror(errno));
		close(fd);
		return;
	}
	tap(((uintptr_t)p & (ALIGN_2M - 1)) == 0,
	    "the mapping is 2 MiB aligned (%p)", (void *)p);
	for (i = 0; i < size; i += 4096)
		sum += p[i];
	munmap((void *)p, size);
	diag("checksum %lu", sum);

	read_long("/sys/fs/famfs/pte_fault_ct", &pte);
	read_long("/sys/fs/famfs/pmd_fault_ct", &pmd);
	read_long("/sys/fs/famfs/pud_fault_ct", &pud);
	write_str("/sys/fs/famfs/fault_count_enable", "0");
	tap(pte == 0, "64 MiB touched page by page: pte_fault_ct == 0 (%lld)", pte);
	tap(pmd == 32, "64 MiB touched page by page: pmd_fault_ct == 32 (%lld)", pmd);
	tap(pud == 0, "pud_fault_ct == 0 (%lld)", pud);

	/* Its size is exactly its extent: a read at EOF must not look past it */
	{
		char b[4096];

		sh("dmesg -c >/dev/null");
		tap(pread(fd, b, sizeof(b), size) == 0,
		    "read at EOF of a file that fills its extent returns 0");
		tap(sh("dmesg | grep -q 'outside its extents'") != 0,
		    "and the kernel log stays quiet about it");
	}
	close(fd);
}

static void test_truncate(void)
{
	char b[4096];
	void *m;
	int fd, rc;

	fd = create_file("trunc");
	rc = one_v2(fd, ALIGN_2M, data0 + 160 * MiB, ALIGN_2M);
	tap_rc(rc, "MAP_CREATE_V2 for the truncate test");
	tap(pread(fd, b, sizeof(b), 0) == sizeof(b), "read before truncate works");

	rc = neg_errno(truncate(MNT "/trunc", MiB));
	diag("truncate(2) itself returned %s", rc ? strerror(-rc) : "0");
	rc = neg_errno(pread(fd, b, sizeof(b), 0));
	tap_errno(rc, ENXIO, "read after truncate");
	rc = neg_errno(pwrite(fd, b, sizeof(b), 0));
	tap_errno(rc, ENXIO, "write after truncate");
	m = mmap(NULL, ALIGN_2M, PROT_READ, MAP_SHARED, fd, 0);
	rc = m == MAP_FAILED ? -errno : 0;
	tap_errno(rc, ENXIO, "mmap after truncate");
	if (m != MAP_FAILED)
		munmap(m, ALIGN_2M);
	close(fd);
}

/* Every bad MAP_CREATE argument, each on its own fresh file */
/* as_nobody(): MAP_CREATE_V2 of a 4 KiB file on bad_unpriv at device offset *@arg */
static int unpriv_map_create(void *arg)
{
	int fd = open(MNT "/bad_unpriv", O_RDWR);

	if (fd < 0)
		return 101;
	return eperm_status(one_v2(fd, 4096, *(uint64_t *)arg, ALIGN_2M));
}

static void test_bad_ioctls(void)
{
	uint64_t base = data0 + 170 * MiB, tiny = 4096;
	struct famfs_ioc_simple_extent se[FAMFS_IOC_MAX_SIMPLE_EXTENTS + 1];
	struct famfs_ioc_simple_extent st[FAMFS_MAX_STRIPS + 1];
	struct famfs_ioc_interleaved_ext ie[FAMFS_IOC_MAX_INTERLEAVED_EXTENTS + 1];
	uint64_t off[2], len[2];
	char name[32];
	int fd, rc, i, n = 0;
	struct famfs_ioc_fmap fm;

#define FRESH() (snprintf(name, sizeof(name), "bad%d", n++), \
		 close(fd), fd = create_file(name))
	fd = create_file("bad_first");

	for (i = 0; i <= FAMFS_IOC_MAX_SIMPLE_EXTENTS; i++) {
		se[i].devindex = 0;
		se[i].offset = base + i * ALIGN_2M;
		se[i].len = ALIGN_2M;
	}
	for (i = 0; i <= FAMFS_MAX_STRIPS; i++) {
		st[i].devindex = 0;
		st[i].offset = base + i * ALIGN_2M;
		st[i].len = ALIGN_2M;
	}
	for (i = 0; i <= FAMFS_IOC_MAX_INTERLEAVED_EXTENTS; i++) {
		ie[i].ie_nstrips = 2;
		ie[i].ie_chunk_size = ALIGN_2M;
		ie[i].ie_nbytes = 4 * MiB;
		ie[i].ie_strips = st;
	}

	off[0] = base + tiny; len[0] = ALIGN_2M;
	FRESH();
	tap_errno(map_v1(fd, FAMFS_REG, tiny, 1, off, len), EINVAL,
		  "v1: extent offset not 2 MiB aligned");
	FRESH();
	tap_errno(one_v2(fd, tiny, base + tiny, ALIGN_2M), EINVAL,
		  "v2: extent offset not 2 MiB aligned");

	off[0] = base; len[0] = MiB; off[1] = base + ALIGN_2M; len[1] = ALIGN_2M;
	FRESH();
	tap_errno(map_v1(fd, FAMFS_REG, MiB, 2, off, len), EINVAL,
		  "v1: a non-last extent length not a 2 MiB multiple");
	FRESH();
	tap_errno(one_v2(fd, 0, base, 0), EINVAL, "v2: zero-length extent");
	FRESH();
	tap_errno(one_v2(fd, 5000, base, 5000), EINVAL,
		  "v2: last extent length not a page multiple");

	FRESH();
	tap_errno(map_v1(fd, FAMFS_REG, tiny, 0, off, len), ENOSPC,
		  "v1: zero extents");
	FRESH();
	tap_errno(map_v2(fd, FAMFS_REG, tiny, 0, se), ENOSPC, "v2: zero extents");
	FRESH();
	tap_errno(map_v2i(fd, tiny, 0, ie), ENOSPC,
		  "v2: zero interleaved extents");

	FRESH();
	tap_errno(map_v1(fd, FAMFS_REG, tiny, FAMFS_MAX_EXTENTS + 1, off, len),
		  E2BIG, "v1: 3 extents (max 2)");
	FRESH();
	tap_errno(map_v2(fd, FAMFS_REG, tiny, FAMFS_IOC_MAX_SIMPLE_EXTENTS + 1, se),
		  E2BIG, "v2: 17 simple extents (max 16)");
	FRESH();
	tap_errno(map_v2i(fd, tiny, FAMFS_IOC_MAX_INTERLEAVED_EXTENTS + 1, ie),
		  E2BIG, "v2: 5 interleaved extents (max 4)");
	FRESH();
	ie[0].ie_nstrips = FAMFS_MAX_STRIPS + 1;
	tap_errno(map_v2i(fd, tiny, 1, ie), E2BIG, "v2: 17 strips (max 16)");
	FRESH();
	ie[0].ie_nstrips = 0;
	tap_errno(map_v2i(fd, tiny, 1, ie), EINVAL, "v2: zero strips");
	ie[0].ie_nstrips = 2;

	off[0] = base; len[0] = ALIGN_2M;
	FRESH();
	tap_errno(map_v1(fd, FAMFS_REG, ALIGN_2M + 1, 1, off, len), EINVAL,
		  "v1: file size larger than its extents");
	FRESH();
	tap_errno(one_v2(fd, ALIGN_2M + 1, base, ALIGN_2M), EINVAL,
		  "v2: file size larger than its extents");
	FRESH();
	tap_errno(map_v2i(fd, 4 * MiB + 1, 1, ie), EINVAL,
		  "v2: file size larger than its interleaved extent");
	FRESH();
	ie[0].ie_nbytes = 6 * MiB;
	tap_errno(map_v2i(fd, tiny, 1, ie), EINVAL,
		  "v2: interleaved nbytes larger than the strips hold");
	ie[0].ie_nbytes = 4 * MiB;
	FRESH();
	ie[0].ie_chunk_size = MiB;
	tap_errno(map_v2i(fd, tiny, 1, ie), EINVAL,
		  "v2: chunk size not a 2 MiB multiple");
	ie[0].ie_chunk_size = ALIGN_2M;

	off[0] = 0; len[0] = ALIGN_2M;
	FRESH();
	tap_errno(map_v1(fd, FAMFS_REG, tiny, 1, off, len), EINVAL,
		  "v1: offset 0 on a regular file");
	FRESH();
	tap_errno(one_v2(fd, tiny, 0, ALIGN_2M), EINVAL,
		  "v2: offset 0 on a regular file");
	FRESH();
	{
		struct famfs_ioc_simple_extent z = { 0, 0, ALIGN_2M };

		tap_errno(map_v2(fd, FAMFS_LOG, tiny, 1, &z), EINVAL,
			  "v2: offset 0 on a log file");
	}
	FRESH();
	tap_errno(one_v2(fd, tiny, vm_round_up(dev_bytes, ALIGN_2M), ALIGN_2M),
		  EINVAL, "v2: extent past the end of the device");
	FRESH();
	se[0].devindex = 1;
	tap_errno(map_v2(fd, FAMFS_REG, tiny, 1, se), EINVAL,
		  "v2: devindex 1 (only device 0 exists)");
	se[0].devindex = 0;
	FRESH();
	tap_errno(map_v2(fd, 7, tiny, 1, se), EINVAL, "v2: unknown file type");
	FRESH();
	memset(&fm, 0, sizeof(fm));
	fm.fioc_file_size = tiny;
	fm.fioc_ext_type = 9;
	fm.fioc_nextents = 1;
	fm.kse = se;
	rc = neg_errno(ioctl(fd, FAMFSIOC_MAP_CREATE_V2, &fm));
	tap_errno(rc, EINVAL, "v2: unknown extent type");
	FRESH();
	{
		struct famfs_ioc_map m;

		memset(&m, 0, sizeof(m));
		m.extent_type = INTERLEAVED_EXTENT;
		m.file_size = tiny;
		m.ext_list_count = 1;
		m.ext_list[0].offset = base;
		m.ext_list[0].len = ALIGN_2M;
		rc = neg_errno(ioctl(fd, FAMFSIOC_MAP_CREATE, &m));
		tap_errno(rc, EINVAL, "v1: interleaved extent type");
	}
	FRESH();
	fm.fioc_ext_type = FAMFS_IOC_EXT_SIMPLE;
	fm.kse = (void *)16;
	rc = neg_errno(ioctl(fd, FAMFSIOC_MAP_CREATE_V2, &fm));
	tap_errno(rc, EFAULT, "v2: extent list pointer not readable");
	rc = neg_errno(ioctl(fd, FAMFSIOC_MAP_CREATE_V2, (void *)16));
	tap_errno(rc, EFAULT, "v2: argument pointer not readable");

	/* The refused file is still unmapped, then takes a good map */
	{
		struct famfs_ioc_map m;
		char b[16];

		rc = neg_errno(ioctl(fd, FAMFSIOC_MAP_GET, &m));
		tap_errno(rc, ENODATA, "MAP_GET on a file that has no map");
		rc = neg_errno(pread(fd, b, sizeof(b), 0));
		tap_errno(rc, ENXIO, "read of a file that has no map");
		rc = one_v2(fd, tiny, base, ALIGN_2M);
		tap_rc(rc, "a good MAP_CREATE_V2 after the refused ones");
		rc = one_v2(fd, tiny, base, ALIGN_2M);
		tap_errno(rc, EEXIST, "v2: MAP_CREATE_V2 twice");
		off[0] = base; len[0] = ALIGN_2M;
		rc = map_v1(fd, FAMFS_REG, tiny, 1, off, len);
		tap_errno(rc, EEXIST, "v1: MAP_CREATE on a mapped file");
		tap_rc(neg_errno(ioctl(fd, FAMFSIOC_NOP)),
		       "FAMFSIOC_NOP on a famfs file");
	}
	close(fd);

	/* Only CAP_SYS_ADMIN may hand out device memory */
	fd = create_file("bad_unpriv");
	fchmod(fd, 0666);
	close(fd);
	rc = as_nobody(unpriv_map_create, &base);
	tap(rc == 0, "MAP_CREATE_V2 by an unprivileged user -> EPERM (child exit %d)", rc);

	/* Not famfs: a tmpfs file, a famfs directory, the block device */
	fd = open("/tmp/not-famfs", O_RDWR | O_CREAT, 0644);
	tap_errno(neg_errno(ioctl(fd, FAMFSIOC_NOP)), ENOTTY,
		  "FAMFSIOC_NOP on a tmpfs file");
	tap_errno(one_v2(fd, tiny, base, ALIGN_2M), ENOTTY,
		  "MAP_CREATE_V2 on a tmpfs file");
	close(fd);
	fd = open(MNT "/.meta", O_RDONLY | O_DIRECTORY);
	tap_errno(one_v2(fd, tiny, base, ALIGN_2M), ENOTTY,
		  "MAP_CREATE_V2 on a famfs directory");
	close(fd);
	fd = open(dev, O_RDONLY);
	off[0] = base; len[0] = ALIGN_2M;
	tap_errno(map_v1(fd, FAMFS_REG, tiny, 1, off, len), ENOTTY,
		  "MAP_CREATE on the pmem block device");
	close(fd);
#undef FRESH
}

/* ---- MKFILES (this tree's batch create on a directory) ----------------------- */

struct mkf_req {
	struct famfs_ioc_mkfile f;
	struct famfs_ioc_fmap m;
	struct famfs_ioc_simple_extent se;
};

static void mkf_set(struct mkf_req *r, const char *name, uint32_t mode,
		    uint64_t size, uint64_t off)
{
	memset(r, 0, sizeof(*r));
	r->se.offset = off;
	r->se.len = vm_round_up(size, ALIGN_2M);
	r->m.fioc_file_size = size;
	r->m.fioc_file_type = FAMFS_REG;
	r->m.fioc_ext_type = FAMFS_IOC_EXT_SIMPLE;
	r->m.fioc_nextents = 1;
	r->m.kse = &r->se;
	r->f.name = (uintptr_t)name;
	r->f.name_len = strlen(name);
	r->f.mode = mode;
	r->f.fmap = (uintptr_t)&r->m;
}

static long mkfiles(int dfd, struct famfs_ioc_mkfile *f, uint32_t count,
		    uint32_t flags)
{
	struct famfs_ioc_mkfiles b = {
		.files = (uintptr_t)f, .count = count, .flags = flags,
	};
	long rc = ioctl(dfd, FAMFSIOC_MKFILES, &b);

	return rc < 0 ? -errno : rc;
}

/* One request in its own call: its per-file result, or the call's error */
static int mkfile_one(int dfd, struct mkf_req *r)
{
	long rc = mkfiles(dfd, &r->f, 1, 0);

	return rc < 0 ? (int)rc : r->f.result;
}

struct unpriv_mkfiles {
	int dfd;
	struct famfs_ioc_mkfile *req;
};

/* as_nobody(): one MKFILES request */
static int unpriv_mkfiles(void *arg)
{
	struct unpriv_mkfiles *u = arg;

	return eperm_status(mkfiles(u->dfd, u->req, 1, 0));
}

static void test_mkfiles(void)
{
	struct unpriv_mkfiles unpriv;
	int st_child;
	uint64_t base = data0 + 300 * MiB;
	struct famfs_ioc_simple_extent st[2];
	struct famfs_ioc_get_fmap got;
	struct mkf_req r[4], bad;
	struct famfs_ioc_mkfile many[FAMFS_IOC_MAX_MKFILES + 1];
	char longname[NAME_MAX + 2];
	struct stat sb;
	long rc;
	int dfd, fd;

	tap(mkdir(MNT "/mkf", 0755) == 0, "MKFILES: mkdir mkf");
	dfd = open(MNT "/mkf", O_RDONLY | O_DIRECTORY);

	/* A batch: two simple files, an interleaved one, and a taken name */
	mkf_set(&r[0], "a", 0640, 3 * MiB, base);
	r[0].f.uid = 1234;
	r[0].f.gid = 5678;
	mkf_set(&r[1], "b", 04755, 4096, base + 4 * MiB);
	mkf_set(&r[2], "c", 0444, 8 * MiB, 0);
	st[0] = (struct famfs_ioc_simple_extent){ 0, base + 6 * MiB, 4 * MiB };
	st[1] = (struct famfs_ioc_simple_extent){ 0, base + 10 * MiB, 4 * MiB };
	{
		static struct famfs_ioc_interleaved_ext ie;

		ie.ie_nstrips = 2;
		ie.ie_chunk_size = ALIGN_2M;
		ie.ie_nbytes = 8 * MiB;
		ie.ie_strips = st;
		r[2].m.fioc_ext_type = FAMFS_IOC_EXT_INTERLEAVE;
		r[2].m.fioc_niext = 1;
		r[2].m.kie = &ie;
	}
	mkf_set(&r[3], "a", 0644, 4096, base + 14 * MiB);
	{
		struct famfs_ioc_mkfile f[4];

		mode_t old_umask;

		for (int i = 0; i < 4; i++) {
			f[i] = r[i].f;
			f[i].result = 12345;
		}
		/* the modes are the log's: the caller's umask must not apply */
		old_umask = umask(077);
		rc = mkfiles(dfd, f, 4, 0);
		umask(old_umask);
		tap(rc == 3 && f[0].result == 0 && f[1].result == 0 &&
		    f[2].result == 0 && f[3].result == -EEXIST,
		    "MKFILES: a batch of 4 made 3, the taken name -> EEXIST (rc %ld; results %d %d %d %d)",
		    rc, f[0].result, f[1].result, f[2].result, f[3].result);
	}
	if (stat(MNT "/mkf/a", &sb))
		memset(&sb, 0, sizeof(sb));
	tap(S_ISREG(sb.st_mode) &&
	    (sb.st_mode & 07777) == 0640 && sb.st_uid == 1234 &&
	    sb.st_gid == 5678 && sb.st_size == 3 * (off_t)MiB,
	    "MKFILES: a has mode 0640 (umask 077 ignored), owner 1234:5678, size 3 MiB (got %o %u:%u %lld)",
	    sb.st_mode & 07777, sb.st_uid, sb.st_gid, (long long)sb.st_size);
	if (stat(MNT "/mkf/b", &sb))
		memset(&sb, 0, sizeof(sb));
	tap(S_ISREG(sb.st_mode) && (sb.st_mode & 07777) == 04755 &&
	    sb.st_uid == 0 && sb.st_size == 4096,
	    "MKFILES: b keeps its setuid bit: mode 04755 (umask 077 ignored), owner 0, 4096 bytes");
	fd = open(MNT "/mkf/a", O_RDWR);
	memset(&got, 0, sizeof(got));
	tap(fd >= 0 && ioctl(fd, FAMFSIOC_MAP_GET_V2, &got) == 0 &&
	    got.iocmap.fioc_ext_type == FAMFS_IOC_EXT_SIMPLE &&
	    got.iocmap.fioc_nextents == 1 && got.ikse[0].offset == base &&
	    got.ikse[0].len == 4 * MiB && got.iocmap.fioc_file_size == 3 * MiB,
	    "MKFILES: MAP_GET_V2 on a returns the map it was given");
	if (fd >= 0) {
		data_identity("MKFILES a", fd, 3 * MiB, 71, 72);
		tap(dev_matches(base, 3 * MiB, 0, 72) < 0,
		    "MKFILES a: the bytes are at its extent on the device");
		close(fd);
	}
	fd = open(MNT "/mkf/c", O_RDWR);
	memset(&got, 0, sizeof(got));
	tap(fd >= 0 && ioctl(fd, FAMFSIOC_MAP_GET_V2, &got) == 0 &&
	    got.iocmap.fioc_ext_type == FAMFS_IOC_EXT_INTERLEAVE &&
	    got.ks.ikie.ie_nstrips == 2 &&
	    got.ks.kie_strips[1].offset == base + 10 * MiB,
	    "MKFILES: c is interleaved over 2 strips");
	if (fd >= 0) {
		data_identity("MKFILES c", fd, 8 * MiB, 73, 74);
		close(fd);
	}

	/* Per-file refusals: each leaves no file behind */
#define REFUSED(req, nm, want, what) do {				\
		tap_errno(mkfile_one(dfd, req), want, "MKFILES: " what); \
		tap(!exists(MNT "/mkf/" nm), "MKFILES: no file after: " what); \
	} while (0)
	mkf_set(&bad, "x", 0644, 4096, base + 16 * MiB);
	bad.f.name_len = 0;
	tap_errno(mkfile_one(dfd, &bad), EINVAL, "MKFILES: empty name");
	mkf_set(&bad, "x/y", 0644, 4096, base + 16 * MiB);
	tap_errno(mkfile_one(dfd, &bad), EINVAL, "MKFILES: name with a slash");
	mkf_set(&bad, ".", 0644, 4096, base + 16 * MiB);
	tap_errno(mkfile_one(dfd, &bad), EINVAL, "MKFILES: name \".\"");
	mkf_set(&bad, "..", 0644, 4096, base + 16 * MiB);
	tap_errno(mkfile_one(dfd, &bad), EINVAL, "MKFILES: name \"..\"");
	mkf_set(&bad, "x\0y", 0644, 4096, base + 16 * MiB);
	bad.f.name_len = 3;
	REFUSED(&bad, "x", EINVAL, "name with a NUL byte");
	memset(longname, 'n', sizeof(longname));
	longname[NAME_MAX + 1] = '\0';
	mkf_set(&bad, longname, 0644, 4096, base + 16 * MiB);
	tap_errno(mkfile_one(dfd, &bad), EINVAL, "MKFILES: name of NAME_MAX + 1 bytes");
	mkf_set(&bad, "x", 0644, 4096, base + 16 * MiB);
	bad.f.name = 8;
	tap_errno(mkfile_one(dfd, &bad), EFAULT, "MKFILES: unreadable name");
	mkf_set(&bad, "x", S_IFREG | 0644, 4096, base + 16 * MiB);
	REFUSED(&bad, "x", EINVAL, "mode with file type bits");
	mkf_set(&bad, "x", 0644, 4096, base + 16 * MiB);
	bad.f.reserved = 1;
	REFUSED(&bad, "x", EINVAL, "reserved field set");
	mkf_set(&bad, "x", 0644, 4096, base + 16 * MiB);
	bad.f.uid = (uint32_t)-1;
	REFUSED(&bad, "x", EINVAL, "uid -1");
	mkf_set(&bad, "x", 0644, 4096, base + 16 * MiB + 4096);
	REFUSED(&bad, "x", EINVAL, "extent offset not 2 MiB aligned");
	mkf_set(&bad, "x", 0644, 4096, 0);
	REFUSED(&bad, "x", EINVAL, "a regular file at device offset 0");
	mkf_set(&bad, "x", 0644, 4096, dev_bytes);
	REFUSED(&bad, "x", EINVAL, "extent past the end of the device");
	mkf_set(&bad, "x", 0644, 8 * MiB, base + 16 * MiB);
	bad.se.len = ALIGN_2M;
	REFUSED(&bad, "x", EINVAL, "file size larger than its extents");
	mkf_set(&bad, "x", 0644, 4096, base + 16 * MiB);
	bad.m.fioc_file_type = FAMFS_LOG;
	REFUSED(&bad, "x", EINVAL, "file type LOG");
	mkf_set(&bad, "x", 0644, 4096, base + 16 * MiB);
	bad.m.fioc_nextents = 0;
	REFUSED(&bad, "x", ENOSPC, "zero extents");
	mkf_set(&bad, "x", 0644, 4096, base + 16 * MiB);
	bad.m.fioc_nextents = FAMFS_IOC_MAX_SIMPLE_EXTENTS + 1;
	REFUSED(&bad, "x", E2BIG, "too many extents");
	mkf_set(&bad, "x", 0644, 4096, base + 16 * MiB);
	bad.f.fmap = 8;
	REFUSED(&bad, "x", EFAULT, "unreadable map");
	mkf_set(&bad, "x", 0644, 4096, base + 16 * MiB);
	bad.m.kse = (void *)8;
	REFUSED(&bad, "x", EFAULT, "unreadable extents");
#undef REFUSED

	/* The call as a whole */
	mkf_set(&bad, "x", 0644, 4096, base + 16 * MiB);
	tap_errno((int)mkfiles(dfd, &bad.f, 0, 0), EINVAL, "MKFILES: count 0");
	tap_errno((int)mkfiles(dfd, many, FAMFS_IOC_MAX_MKFILES + 1, 0), EINVAL,
		  "MKFILES: count above FAMFS_IOC_MAX_MKFILES");
	tap_errno((int)mkfiles(dfd, &bad.f, 1, 1), EINVAL, "MKFILES: flags set");
	tap_errno((int)mkfiles(dfd, (void *)8, 1, 0), EFAULT,
		  "MKFILES: unreadable request array");
	tap_errno(neg_errno(ioctl(dfd, FAMFSIOC_MKFILES, (void *)8)), EFAULT,
		  "MKFILES: unreadable argument");
	tap(!exists(MNT "/mkf/x"), "MKFILES: still no file x");
	fd = open(MNT "/mkf/a", O_RDONLY);
	tap_errno((int)mkfiles(fd, &bad.f, 1, 0), ENOTTY, "MKFILES on a famfs file");
	close(fd);
	fd = open("/tmp", O_RDONLY | O_DIRECTORY);
	tap_errno((int)mkfiles(fd, &bad.f, 1, 0), ENOTTY, "MKFILES on a tmpfs directory");
	close(fd);
	unpriv.dfd = dfd;
	unpriv.req = &bad.f;
	st_child = as_nobody(unpriv_mkfiles, &unpriv);
	tap(st_child == 0 && !exists(MNT "/mkf/x"),
	    "MKFILES by an unprivileged user -> EPERM (child exit %d)", st_child);
	tap(mount(NULL, MNT, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) == 0,
	    "MKFILES: remount the mount read-only");
	tap_errno((int)mkfiles(dfd, &bad.f, 1, 0), EROFS, "MKFILES on a read-only mount");
	tap(mount(NULL, MNT, NULL, MS_REMOUNT | MS_BIND, NULL) == 0,
	    "MKFILES: remount read-write");
	tap(mkfile_one(dfd, &bad) == 0 && exists(MNT "/mkf/x"),
	    "MKFILES: the same request succeeds once it is valid and allowed");

	/* A directory removed under an open descriptor */
	tap(mkdir(MNT "/mkf/gone", 0755) == 0, "MKFILES: mkdir mkf/gone");
	fd = open(MNT "/mkf/gone", O_RDONLY | O_DIRECTORY);
	tap(rmdir(MNT "/mkf/gone") == 0, "MKFILES: rmdir it, its descriptor open");
	mkf_set(&bad, "y", 0644, 4096, base + 18 * MiB);
	tap_errno(mkfile_one(fd, &bad), ENOENT, "MKFILES in a removed directory");
	close(fd);

	/* Clean up so later tests see the mount as before */
	for (const char *const *n = (const char *const[]){ "a", "b", "c", "x", NULL }; *n; n++) {
		char path[64];

		snprintf(path, sizeof(path), MNT "/mkf/%s", *n);
		unlink(path);
	}
	close(dfd);
	tap(rmdir(MNT "/mkf") == 0, "MKFILES: rmdir mkf after unlinking its files");
}

static void test_namespace(void)
{
	char buf[64];
	ssize_t n;
	bool ok;

	ok = mkdir(MNT "/dir", 0755) == 0 && mkdir(MNT "/dir/sub", 0700) == 0;
	tap(ok, "mkdir");
	n = symlink("dir/sub", MNT "/lnk") ? -1 :
	    readlink(MNT "/lnk", buf, sizeof(buf));
	tap(n == 7 && !memcmp(buf, "dir/sub", 7), "symlink and readlink");
	tap(rename(MNT "/dir/sub", MNT "/dir/sub2") == 0 &&
	    exists(MNT "/dir/sub2") && !exists(MNT "/dir/sub"), "rename");
	tap(link(MNT "/v1two", MNT "/dir/hard") == 0, "link");
	tap(unlink(MNT "/dir/hard") == 0 && exists(MNT "/v1two"),
	    "unlink of one name leaves the other");
	tap(mknod(MNT "/fifo", S_IFIFO | 0600, 0) == 0, "mknod (fifo)");
	tap(rmdir(MNT "/dir/sub2") == 0 && rmdir(MNT "/dir") == 0, "rmdir");
	tap(unlink(MNT "/lnk") == 0 && unlink(MNT "/fifo") == 0,
	    "unlink of a symlink and a fifo");
}

static void test_unmount_unload(void)
{
	volatile unsigned char *p;
	unsigned char c = 0;
	int fd, rc;

	/* A live mapping (its file closed) keeps the mount busy */
	fd = open(MNT "/v1two", O_RDONLY);
	p = mmap(NULL, 4 * MiB, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		tap(false, "mmap for the busy-unmount test: %s", strerror(errno));
	} else {
		c = p[0];
		rc = neg_errno(umount(MNT));
		tap_errno(rc, EBUSY, "umount while a file is mapped");
		munmap((void *)p, 4 * MiB);
	}
	tap_rc(neg_errno(umount(MNT)), "umount once the mapping is gone");
	tap(exists(FSCK) && sh(FSCK " %s", dev) == 0,
	    "fsck.famfs is clean after the kernel wrote file data");

	/* Lazy unmount under a live mapping: the mapping still works, and
	 * dropping it releases the super block, the device and the module */
	rc = mount_famfs("");
	if (!rc)
		rc = make_meta(false);
	fd = rc ? -1 : create_file("lazy");
	rc = fd < 0 ? -EIO : one_v2(fd, 2 * MiB, data0, 2 * MiB);
	p = rc ? MAP_FAILED :
	    mmap(NULL, 2 * MiB, PROT_READ, MAP_SHARED, fd, 0);
	if (fd >= 0)
		close(fd);
	rc = neg_errno(umount2(MNT, MNT_DETACH));
	tap(p != MAP_FAILED && rc == 0, "umount -l with a file still mapped");
	tap(p != MAP_FAILED && probe_byte(p, &c) == 0 &&
	    c == vm_pat_word(0, 12) % 256,
	    "the mapping still reads the file after umount -l");
	tap(sh("rmmod famfs 2>/dev/null") != 0,
	    "rmmod refuses while the detached mount is mapped");
	if (p != MAP_FAILED)
		munmap((void *)p, 2 * MiB);

	tap(sh("rmmod famfs") == 0, "rmmod famfs once the last mapping is gone");
	tap(!exists("/sys/fs/famfs") && !exists("/sys/module/famfs"),
	    "/sys/fs/famfs and /sys/module/famfs are gone");
}

/* One full cycle; returns 0 or a short reason in why */
static int cycle(int i, char *why, size_t whylen)
{
	volatile unsigned char *p;
	unsigned char c = 0;
	char b[4096];
	int fd, rc;

	if (sh("insmod " KO)) {
		snprintf(why, whylen, "insmod");
		return -1;
	}
	/* odd cycles use mount(8)/umount(8), even ones the system calls */
	if (i % 2)
		rc = sh("mount -t famfs %s " MNT, dev) ? -EIO : 0;
	else
		rc = mount_famfs(i == 0 ? "mode=0700" : "");
	if (rc) {
		snprintf(why, whylen, "mount: %s", strerror(-rc));
		return -1;
	}
	if (i == 0) {
		struct stat st;
		FILE *f = fopen("/proc/mounts", "r");
		char line[512];
		bool shown = false;

		while (f && fgets(line, sizeof(line), f))
			if (strstr(line, " famfs ") && strstr(line, "mode=700"))
				shown = true;
		if (f)
			fclose(f);
		memset(&st, 0, sizeof(st));
		stat(MNT, &st);
		tap((st.st_mode & 07777) == 0700 && shown,
		    "mount -o mode=0700: root mode 0%o, shown in /proc/mounts",
		    st.st_mode & 07777);
		tap(sh("rmmod famfs 2>/dev/null") != 0,
		    "rmmod refuses while mounted");
	}
	rc = make_meta(false);
	if (rc) {
		snprintf(why, whylen, "meta files: %s", strerror(-rc));
		return -1;
	}
	fd = create_file("c");
	rc = fd < 0 ? -errno : one_v2(fd, 4 * MiB, data0 + 200 * MiB, 4 * MiB);
	if (rc) {
		snprintf(why, whylen, "map: %s", strerror(-rc));
		return -1;
	}
	memset(b, i, sizeof(b));
	if (pwrite(fd, b, sizeof(b), 2 * MiB) != sizeof(b)) {
		snprintf(why, whylen, "write");
		return -1;
	}
	p = mmap(NULL, 4 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		snprintf(why, whylen, "mmap: %s", strerror(errno));
		return -1;
	}
	c = p[2 * MiB];
	p[0] = c;
	munmap((void *)p, 4 * MiB);
	close(fd);
	if (c != (unsigned char)i) {
		snprintf(why, whylen, "mmap read %u, wrote %u", c, i);
		return -1;
	}
	if (i % 2)
		rc = sh("umount " MNT) ? -EIO : 0;
	else
		rc = neg_errno(umount(MNT));
	if (rc) {
		snprintf(why, whylen, "umount: %s", strerror(-rc));
		return -1;
	}
	if (sh("rmmod famfs")) {
		snprintf(why, whylen, "rmmod");
		return -1;
	}
	return 0;
}

static void test_cycles(void)
{
	char why[128] = "";
	int i, done = 0;

	for (i = 0; i < 20; i++) {
		if (cycle(i, why, sizeof(why))) {
			diag("cycle %d failed at: %s", i, why);
			umount(MNT);
			sh("rmmod famfs 2>/dev/null");
			break;
		}
		done++;
	}
	tap(done == 20,
	    "20 cycles of insmod, mount, map, write, mmap, umount, rmmod (%d done)",
	    done);
}

static void test_devdax(void)
{
	char line[512];
	bool msg = false;
	FILE *f;
	int rc;

	rc = sh("ndctl create-namespace -f -e namespace0.0 -m devdax -a 2M >/tmp/ndctl.out 2>&1");
	if (rc)
		sh("sed 's/^/# ndctl: /' /tmp/ndctl.out");
	tap(rc == 0, "ndctl create-namespace -m devdax");
	tap(wait_for("/dev/dax0.0", 50) == 0, "/dev/dax0.0 appears");

	dev = "/dev/dax0.0";
	tap(sh(MKFS " -f /dev/dax0.0") == 0, "mkfs.famfs /dev/dax0.0");
	tap(sh(FSCK " /dev/dax0.0") == 0, "fsck.famfs /dev/dax0.0");

	sh("insmod " KO);
	sh("dmesg -c >/dev/null");
	rc = mount_famfs("");
	tap_errno(rc, EOPNOTSUPP, "mount -t famfs /dev/dax0.0 on a kernel without dev_dax_iomap");
	if (!rc)
		umount(MNT);
	f = popen("dmesg", "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (strstr(line, "famfs") && strstr(line, "lacks dev_dax_iomap")) {
			msg = true;
			line[strcspn(line, "\n")] = 0;
			diag("%s", line);
		}
	}
	if (f)
		pclose(f);
	tap(msg, "the kernel log says the kernel lacks dev_dax_iomap");
	tap(sh("rmmod famfs") == 0, "rmmod famfs after the refused mount");
	dev = "/dev/pmem0";
}

/* dmesg since boot must have no WARNING, BUG, Oops, ... */
static void dmesg_save(void)
{
	sh("dmesg >/tmp/dmesg.all");
}

static void test_dmesg(const char *when)
{
	static const char *const bad[] = {
		"WARNING:", "BUG:", "BUG ", "Oops", "general protection",
		"Call Trace", "kernel BUG", "refcount_t", "UBSAN", "KASAN",
		"list_add corruption", "list_del corruption", "VFS: Busy inodes",
		"outside its extents",	/* iomap asked for an unmapped offset */
	};
	char line[512];
	int hits = 0;
	FILE *f;
	size_t i;

	dmesg_save();
	f = fopen("/tmp/dmesg.all", "r");
	while (f && fgets(line, sizeof(line), f)) {
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			if (strstr(line, bad[i])) {
				line[strcspn(line, "\n")] = 0;
				diag("dmesg: %s", line);
				hits++;
				break;
			}
		}
	}
	if (f)
		fclose(f);
	tap(f && hits == 0, "dmesg %s: no WARNING, BUG, Oops or Call Trace (%d hits)",
	    when, hits);
}

static void scenario_main(void)
{
	int fd;

	test_load();
	test_mkfs_mount(true);
	fd = open(MNT "/.meta/.superblock", O_RDONLY);
	test_get(fd);
	close(fd);
	test_v1_simple();
	test_v2_interleaved();
	test_v2_two_iexts();
	test_races();
	test_faults();
	test_truncate();
	test_bad_ioctls();
	test_mkfiles();
	test_namespace();
	test_unmount_unload();
	test_cycles();
	test_dmesg("after the module tests and 20 cycles");
	test_devdax();
	test_dmesg("at the end");
}

/* ---- the shared-memory scenario --------------------------------------------- */

static void scenario_shared(void)
{
	unsigned char *map;
	uint64_t size = 2 * VM_SHARED_LEN;
	long long bad;
	time_t end;
	bool seen = false;
	int fd, rc;

	sh("ndctl list -RN 2>&1 | sed 's/^/# ndctl: /'");
	rc = sh("ndctl create-namespace -f -e namespace0.0 -m fsdax -a 2M --map=mem >/tmp/ndctl.out 2>&1");
	if (rc)
		rc = sh("ndctl create-namespace -r region0 -m fsdax -a 2M --map=mem >/tmp/ndctl.out 2>&1");
	if (rc)
		sh("sed 's/^/# ndctl: /' /tmp/ndctl.out");
	tap(rc == 0, "ndctl create-namespace -m fsdax on the shared NVDIMM");
	tap(wait_for("/dev/pmem0", 100) == 0, "/dev/pmem0 appears");

	test_load();
	test_mkfs_mount(true);

	fd = create_file("shared");
	rc = one_v2(fd, size, data0, size);
	tap_rc(rc, "MAP_CREATE_V2 for the shared file");

	/* Our half: data first, the magic last, so the peer sees it whole */
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		tap(false, "mmap shared file: %s", strerror(errno));
		return;
	}
	vm_pat_fill(map + VM_SHARED_HDR, VM_SHARED_LEN - VM_SHARED_HDR,
		    VM_SHARED_HDR, VM_SHARED_SEED_GUEST);
	__sync_synchronize();
	memcpy(map, VM_SHARED_GUEST_MAGIC, sizeof(VM_SHARED_GUEST_MAGIC));
	msync(map, size, MS_SYNC);
	diag("guest wrote its half; waiting for the other host's");
	fflush(stdout);

	end = time(NULL) + 300;
	while (time(NULL) < end) {
		if (!memcmp((void *)(map + VM_SHARED_LEN), VM_SHARED_HOST_MAGIC,
			    sizeof(VM_SHARED_HOST_MAGIC))) {
			seen = true;
			break;
		}
		usleep(20000);
		__sync_synchronize();
	}
	tap(seen, "the other host's write shows up in the famfs file (mmap)");
	bad = vm_pat_check(map + VM_SHARED_LEN + VM_SHARED_HDR,
			   VM_SHARED_LEN - VM_SHARED_HDR,
			   VM_SHARED_LEN + VM_SHARED_HDR, VM_SHARED_SEED_HOST);
	tap(seen && bad < 0, "mmap reads the other host's 2 MiB exactly");
	munmap(map, size);

	{
		unsigned char *buf = xmalloc(VM_SHARED_LEN);
		ssize_t n = pread(fd, buf, VM_SHARED_LEN, VM_SHARED_LEN);

		bad = vm_pat_check(buf + VM_SHARED_HDR, VM_SHARED_LEN - VM_SHARED_HDR,
				   VM_SHARED_LEN + VM_SHARED_HDR, VM_SHARED_SEED_HOST);
		tap(seen && n == (ssize_t)VM_SHARED_LEN && bad < 0,
		    "read(2) reads the other host's 2 MiB exactly");
		free(buf);
	}
	close(fd);
	tap_rc(neg_errno(umount(MNT)), "umount");
	tap(sh("rmmod famfs") == 0, "rmmod famfs");
	test_dmesg("at the end");
}

/*
 * The second host of the two-guest test: boots on the NVDIMM that guest 1
 * (scenario "shared") made an fsdax namespace and a famfs file system on,
 * mounts it without mkfs, maps the same file, checks guest 1's half through
 * famfs and writes the other half, which guest 1 is waiting for.
 */
static void scenario_client(void)
{
	uint64_t size = 2 * VM_SHARED_LEN;
	unsigned char *buf, *map;
	long long bad;
	ssize_t n;
	int fd, rc;

	test_load();
	test_mkfs_mount(false);

	fd = create_file("shared");
	rc = one_v2(fd, size, data0, size);
	tap_rc(rc, "MAP_CREATE_V2 of the file guest 1 wrote, same extent");

	buf = xmalloc(VM_SHARED_LEN);
	n = pread(fd, buf, VM_SHARED_LEN, 0);
	bad = vm_pat_check(buf + VM_SHARED_HDR, VM_SHARED_LEN - VM_SHARED_HDR,
			   VM_SHARED_HDR, VM_SHARED_SEED_GUEST);
	tap(n == (ssize_t)VM_SHARED_LEN &&
	    !memcmp(buf, VM_SHARED_GUEST_MAGIC, sizeof(VM_SHARED_GUEST_MAGIC)) &&
	    bad < 0, "read(2) sees guest 1's 2 MiB exactly");

	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	bad = map == MAP_FAILED ? 0 :
	      vm_pat_check(map + VM_SHARED_HDR, VM_SHARED_LEN - VM_SHARED_HDR,
			   VM_SHARED_HDR, VM_SHARED_SEED_GUEST);
	tap(bad < 0, "mmap sees guest 1's 2 MiB exactly");
	if (map != MAP_FAILED)
		munmap(map, size);

	/* The answer, through write(2): data first, then the magic */
	vm_pat_fill(buf, VM_SHARED_LEN, VM_SHARED_LEN, VM_SHARED_SEED_HOST);
	n = pwrite(fd, buf + VM_SHARED_HDR, VM_SHARED_LEN - VM_SHARED_HDR,
		   VM_SHARED_LEN + VM_SHARED_HDR);
	__sync_synchronize();
	n = n < 0 ? n : pwrite(fd, VM_SHARED_HOST_MAGIC,
			       sizeof(VM_SHARED_HOST_MAGIC), VM_SHARED_LEN);
	tap(n == sizeof(VM_SHARED_HOST_MAGIC),
	    "write(2) of the answer into the second half");
	free(buf);
	close(fd);

	tap_rc(neg_errno(umount(MNT)), "umount");
	tap(sh("rmmod famfs") == 0, "rmmod famfs");
	test_dmesg("at the end");
}

/* ---- media failure ----------------------------------------------------------- */

static bool mounts_show(const char *what)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/mounts", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, " famfs ") && strstr(line, what))
			found = true;
	if (f)
		fclose(f);
	return found;
}

/*
 * A poisoned page under a famfs file: the pmem driver passes the failure to
 * the dax holder (famfs), which disables the file system.  MADV_HWPOISON
 * injects it (CONFIG_MEMORY_FAILURE).
 */
static void scenario_media(void)
{
	volatile unsigned char *p;
	char line[512], b[64];
	bool logged = false;
	FILE *f;
	int fd, rc;

	test_load();
	test_mkfs_mount(true);
	tap(!mounts_show("dax_error"), "/proc/mounts shows no dax_error yet");

	fd = create_file("poison");
	rc = one_v2(fd, 4 * MiB, data0, 4 * MiB);
	tap_rc(rc, "MAP_CREATE_V2 for the media failure test");
	p = mmap(NULL, 4 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		tap(false, "mmap: %s", strerror(errno));
		return;
	}
	p[8192] = 1;
	sh("dmesg -c >/dev/null");
	rc = neg_errno(madvise((void *)(p + 8192), 4096, MADV_HWPOISON));
	tap_rc(rc, "madvise(MADV_HWPOISON) on a page of the file");
	munmap((void *)p, 4 * MiB);

	tap(mounts_show("dax_error"), "/proc/mounts shows dax_error");
	rc = neg_errno(pread(fd, b, sizeof(b), 0));
	tap_errno(rc, EIO, "read after the media failure");
	rc = neg_errno(pwrite(fd, b, sizeof(b), 0));
	tap_errno(rc, EIO, "write after the media failure");
	close(fd);

	f = popen("dmesg", "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (strstr(line, "famfs") && strstr(line, "media failure")) {
			logged = true;
			line[strcspn(line, "\n")] = 0;
			diag("%s", line);
		}
	}
	if (f)
		pclose(f);
	tap(logged, "the kernel log names the media failure");

	tap_rc(neg_errno(umount(MNT)), "umount after the media failure");
	tap(sh("rmmod famfs") == 0, "rmmod famfs");
	test_dmesg("at the end");
}

int main(int argc, char **argv)
{
	const char *scenario = argc > 1 ? argv[1] : "main";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(scenario, "main")) {
		scenario_main();
	} else if (!strcmp(scenario, "shared")) {
		scenario_shared();
	} else if (!strcmp(scenario, "client")) {
		scenario_client();
	} else if (!strcmp(scenario, "media")) {
		scenario_media();
	} else {
		printf("Bail out! unknown scenario %s\n", scenario);
		return 2;
	}
	printf("1..%d\n", ntest);
	return nfail ? 1 : 0;
}
