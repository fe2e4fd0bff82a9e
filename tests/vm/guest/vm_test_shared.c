// SPDX-License-Identifier: GPL-2.0
/*
 * The shared-memory scenarios: "shared" on a file-backed NVDIMM the host
 * peer (tests/vm/shm_peer.c) maps at the same time, and "client", a second
 * guest on the same NVDIMM.
 */
#include "vm_test.h"

/* ---- the shared-memory scenario --------------------------------------------- */

void scenario_shared(void)
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
void scenario_client(void)
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
