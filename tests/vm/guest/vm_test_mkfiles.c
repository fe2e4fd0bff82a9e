// SPDX-License-Identifier: GPL-2.0
/*
 * FAMFSIOC_MKFILES, this tree's batch create of files with their maps on
 * a directory: batches, permissions, every refused request.
 */
#include "vm_test.h"

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

void test_mkfiles(void)
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
