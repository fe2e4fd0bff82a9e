// SPDX-License-Identifier: GPL-2.0
/*
 * The end of the main scenario: the namespace, unmount and unload, 20 load
 * cycles, devdax, and the kernel log checked for warnings.
 */
#include "vm_test.h"

void test_namespace(void)
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

void test_unmount_unload(void)
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

void test_cycles(void)
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

/* The memmap pmem region turned into a devdax namespace: dev is /dev/dax0.0. */
void use_devdax(void)
{
	int rc;

	rc = sh("ndctl create-namespace -f -e namespace0.0 -m devdax -a 2M >/tmp/ndctl.out 2>&1");
	if (rc)
		sh("sed 's/^/# ndctl: /' /tmp/ndctl.out");
	tap(rc == 0, "ndctl create-namespace -m devdax");
	rc = wait_for("/dev/dax0.0", 50);
	tap(rc == 0, "/dev/dax0.0 appears");
	if (rc) {
		printf("Bail out! no /dev/dax0.0\n");
		exit(1);
	}
	dev = "/dev/dax0.0";
}

/*
 * A devdax instance in system-ram mode (kmem; not onlined, so it can come
 * back): no character device, and every tool says which driver has it;
 * back in devdax mode the file system is as it was.
 */
void test_devdax_wrong_mode(void)
{
	int before, rc;

	/*
	 * What daxctl reconfigure-device --mode=system-ram does, through sysfs:
	 * daxctl looks for the kmem module with libkmod, which finds nothing in
	 * the initramfs for a built-in driver.  Not onlined (no auto-online),
	 * so the memory can be removed again.
	 */
	before = sh(FSCK " -n /dev/dax0.0 >/dev/null 2>&1");
	rc = sh("echo dax0.0 >/sys/bus/dax/drivers/device_dax/unbind && "
		"echo dax0.0 >/sys/bus/dax/drivers/kmem/new_id && "
		"readlink /sys/bus/dax/devices/dax0.0/driver | grep -q kmem");
	tap(rc == 0, "dax0.0 moved from device_dax to kmem (system-ram mode, not onlined)");
	if (rc)
		return;
	sh("insmod " KO);
	rc = mount_famfs("");
	tap(rc != 0, "mount -t famfs /dev/dax0.0 in system-ram mode fails (%s)", strerror(-rc));
	if (!rc)
		umount(MNT);
	rc = sh(FSCK " /dev/dax0.0 >/tmp/fsck.out 2>&1");
	sh("sed 's/^/# fsck: /' /tmp/fsck.out");
	tap(rc != 0 && sh("grep -q 'bound to kmem (system-ram mode)' /tmp/fsck.out") == 0,
	    "fsck.famfs says dax0.0 is in system-ram mode (exit %d)", rc);
	rc = sh(MKFS " -f /dev/dax0.0 >/tmp/mkfs.out 2>&1");
	tap(rc != 0 && sh("grep -q 'system-ram mode' /tmp/mkfs.out") == 0,
	    "mkfs.famfs -f refuses it, saying the same (exit %d)", rc);
	rc = sh("echo dax0.0 >/sys/bus/dax/drivers/kmem/remove_id; "
		"echo dax0.0 >/sys/bus/dax/drivers/kmem/unbind && "
		"echo dax0.0 >/sys/bus/dax/drivers/device_dax/bind");
	tap(rc == 0 && wait_for("/dev/dax0.0", 50) == 0, "back to device_dax: /dev/dax0.0 is there again");
	rc = sh(FSCK " -n /dev/dax0.0 >/dev/null 2>&1");
	tap(rc == before, "fsck.famfs -n gives what it gave before (%d, %d): nothing was changed", before, rc);
	sh("rmmod famfs");
}

/* On a stock kernel: mkfs and fsck work on devdax, the mount is refused, saying why. */
void test_devdax_refused(void)
{
	char line[512];
	bool msg = false;
	FILE *f;
	int rc;

	use_devdax();
	tap(sh(MKFS " -f /dev/dax0.0") == 0, "mkfs.famfs /dev/dax0.0");
	tap(sh(FSCK " /dev/dax0.0") == 0, "fsck.famfs /dev/dax0.0");

	sh("insmod " KO);
	dmesg_clear();
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

/*
 * dmesg since boot must have no WARNING, BUG, Oops, ...: what dmesg_clear()
 * took out of the ring buffer counts too.
 */
static void dmesg_save(void)
{
	sh("cat /tmp/dmesg.cleared 2>/dev/null >/tmp/dmesg.all; dmesg >>/tmp/dmesg.all");
}

void test_dmesg(const char *when)
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
