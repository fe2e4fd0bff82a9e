// SPDX-License-Identifier: GPL-2.0
/*
 * The main scenario's map tests: famfs.ko loads, mkfs and mount, the
 * tools refuse a mounted device, MAP_CREATE v1 and v2 (simple and
 * interleaved) with the data read back, races, faults, truncate, and
 * every bad ioctl argument.
 */
#include "vm_test.h"

/* ---- the main scenario ------------------------------------------------------- */

void test_load(void)
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
	int rc;

	if (dev_read(2 * MiB, hdr, sizeof(hdr))) {
		tap(false, "read the log header of %s", dev);
		return;
	}
	memcpy(torn, hdr, sizeof(torn));
	torn[4]++;	/* next_seqnum */
	torn[5]++;	/* next_index: the slot there is empty */
	rc = dev_write(2 * MiB, torn, sizeof(torn)) == 0;
	tap(rc, "a torn tail written into the mounted device's log");
	rc = sh(FSCK " -y %s >/tmp/fsck.out 2>&1", dev);
	tap(rc == 12 && sh("grep -q -e mounted -e 'in use' /tmp/fsck.out") == 0,
	    "fsck.famfs -y finds it and refuses to repair a mounted device (exit %d)", rc);
	if (rc != 12)
		sh("sed 's/^/# fsck: /' /tmp/fsck.out");
	rc = dev_read(2 * MiB, torn, sizeof(torn)) == 0 && torn[5] == hdr[5] + 1;
	tap(rc, "the mounted device's log was left as it was");
	rc = dev_write(2 * MiB, hdr, sizeof(hdr)) == 0;
	tap(rc, "the log header put back");
}

void test_mkfs_mount(bool do_mkfs)
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
	tap(rc == 0, "mount -t famfs %s " MNT "%s%s", dev, rc ? ": " : "", rc ? strerror(-rc) : "");
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

void test_get(int fd_sb)
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

void test_v1_simple(void)
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

void test_v2_interleaved(void)
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
void test_v2_two_iexts(void)
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

void test_races(void)
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

void test_faults(void)
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

		dmesg_clear();
		tap(pread(fd, b, sizeof(b), size) == 0,
		    "read at EOF of a file that fills its extent returns 0");
		tap(sh("dmesg | grep -q 'outside its extents'") != 0,
		    "and the kernel log stays quiet about it");
	}
	close(fd);
}

void test_truncate(void)
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

void test_bad_ioctls(void)
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
		  "MAP_CREATE on the device node");
	close(fd);
#undef FRESH
}
