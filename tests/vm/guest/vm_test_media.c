// SPDX-License-Identifier: GPL-2.0
/*
 * The "media" scenario: a memory failure injected under a famfs file.
 */
#include "vm_test.h"

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
void scenario_media(void)
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
	dmesg_clear();
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
