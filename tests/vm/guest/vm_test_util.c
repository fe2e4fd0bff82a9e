// SPDX-License-Identifier: GPL-2.0
/*
 * What the guest tests share: TAP output, shell and file helpers, the
 * ioctl wrappers (0 or -errno), the file system the main scenario makes,
 * and the data identity checks.
 */
#include "vm_test.h"

const char *dev = "/dev/pmem0";
int ntest;
int nfail;

/* ---- TAP ---------------------------------------------------------------- */

bool tap(bool ok, const char *fmt, ...)
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

void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* Expect rc == 0 */
bool tap_rc(int rc, const char *what)
{
	if (rc)
		return tap(false, "%s (error: %s)", what, strerror(-rc));
	return tap(true, "%s", what);
}

/* Expect failure with exactly errno want (rc is 0 or -errno) */
bool tap_errno(int rc, int want, const char *what)
{
	if (rc == -want)
		return tap(true, "%s -> %s", what, strerrorname_np(want));
	return tap(false, "%s: want %s, got %s", what, strerrorname_np(want),
		   rc ? strerrorname_np(-rc) : "success");
}

/* ---- helpers ------------------------------------------------------------ */

int sh(const char *fmt, ...)
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

int neg_errno(int rc)
{
	return rc < 0 ? -errno : 0;
}

bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

int read_long(const char *path, long long *val)
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

int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -EIO;
}

void *xmalloc(size_t n)
{
	void *p;

	if (posix_memalign(&p, 4096, n ? n : 1)) {
		printf("Bail out! out of memory\n");
		exit(1);
	}
	return p;
}

static bool dev_is_char(void)
{
	struct stat st;

	return stat(dev, &st) == 0 && S_ISCHR(st.st_mode);
}

/*
 * Device-dax has no read(2)/write(2): its bytes are reached by mmap, in
 * windows aligned to the instance's alignment (2 MiB here).
 */
static int dev_dax_copy(uint64_t off, void *buf, size_t len, bool write)
{
	uint64_t start = off & ~(ALIGN_2M - 1);
	size_t maplen = vm_round_up(off + len - start, ALIGN_2M);
	unsigned char *p;
	int fd = open(dev, O_RDWR);

	if (fd < 0)
		return -errno;
	p = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, start);
	close(fd);
	if (p == MAP_FAILED)
		return -errno;
	if (write)
		memcpy(p + (off - start), buf, len);
	else
		memcpy(buf, p + (off - start), len);
	munmap(p, maplen);
	return 0;
}

/*
 * Device bytes, with no page cache in between: O_DIRECT on a pmem block
 * device, a mapping of a devdax one.
 */
int dev_read(uint64_t off, void *buf, size_t len)
{
	/* O_DIRECT reads whole, aligned blocks into an aligned buffer */
	uint64_t start = off & ~4095ULL, span = vm_round_up(off + len - start, 4096);
	unsigned char *bounce;
	int fd, rc = 0;
	ssize_t n;

	if (dev_is_char())
		return dev_dax_copy(off, buf, len, false);
	fd = open(dev, O_RDONLY | O_DIRECT);
	if (fd < 0)
		return -errno;
	bounce = xmalloc(span);
	n = pread(fd, bounce, span, start);
	if (n < 0)
		rc = -errno;
	else if ((uint64_t)n != span)
		rc = -EIO;
	else
		memcpy(buf, bounce + (off - start), len);
	free(bounce);
	close(fd);
	return rc;
}

/* Writes device bytes behind the file system's back (write + fsync on pmem). */
int dev_write(uint64_t off, const void *buf, size_t len)
{
	int fd, rc = 0;

	if (dev_is_char())
		return dev_dax_copy(off, (void *)buf, len, true);
	fd = open(dev, O_RDWR);
	if (fd < 0)
		return -errno;
	if (pwrite(fd, buf, len, off) != (ssize_t)len || fsync(fd))
		rc = errno ? -errno : -EIO;
	close(fd);
	return rc;
}

/*
 * Empties the kernel's ring buffer so that a test can look at what its own
 * step logged; test_dmesg() still sees what was in it.
 */
void dmesg_clear(void)
{
	sh("dmesg -c >>/tmp/dmesg.cleared");
}

int wait_for(const char *path, int tenths)
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

int probe_byte(const volatile unsigned char *p, unsigned char *val)
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

int map_v1(int fd, uint32_t ftype, uint64_t size, uint64_t n,
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

int map_v2(int fd, uint32_t ftype, uint64_t size, uint32_t n, struct famfs_ioc_simple_extent *se)
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

int map_v2i(int fd, uint64_t size, uint32_t niext, struct famfs_ioc_interleaved_ext *ie)
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

int one_v2(int fd, uint64_t size, uint64_t off, uint64_t len)
{
	struct famfs_ioc_simple_extent se = { .offset = off, .len = len };

	return map_v2(fd, FAMFS_REG, size, 1, &se);
}

int create_file(const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), MNT "/%s", rel);
	return open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
}

/*
 * Runs @fn(@arg) in a child that dropped to uid and gid 65534; returns its
 * exit status (100: it could not drop them), or -1 if it did not exit.
 */
int as_nobody(int (*fn)(void *), void *arg)
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
int eperm_status(long rc)
{
	return rc == -EPERM ? 0 : rc >= 0 ? 102 : 103;
}

/* ---- file system state shared by the tests ------------------------------- */

uint64_t log_len;
uint64_t data0;		/* first data offset the tests use */
uint64_t dev_bytes;

int mount_famfs(const char *opts)
{
	mkdir(MNT, 0755);
	return neg_errno(mount(dev, MNT, "famfs", 0, opts));
}

/* .meta/.superblock and .meta/.log, as the daemon would create them */
int make_meta(bool verbose)
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

long long dev_size_bytes(void)
{
	long long size = 0, sectors = 0;
	char path[128];
	const char *name = strrchr(dev, '/') + 1;

	if (dev_is_char()) {
		snprintf(path, sizeof(path), "/sys/bus/dax/devices/%s/size", name);
		return read_long(path, &size) ? 0 : size;
	}
	snprintf(path, sizeof(path), "/sys/class/block/%s/size", name);
	if (read_long(path, &sectors))
		return 0;
	return sectors * 512;
}

/* ---- data identity --------------------------------------------------------- */

/*
 * write(2) a pattern, read it back through mmap; mmap-write another, read
 * it back with read(2).  Leaves the second pattern (seed2) in the file.
 */
void data_identity(const char *name, int fd, uint64_t size, uint64_t seed1, uint64_t seed2)
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
long long dev_matches(uint64_t dev_off, uint64_t len, uint64_t file_off, uint64_t seed)
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
