// SPDX-License-Identifier: GPL-2.0
/*
 * famfs_vm_test - the famfs kernel module tests, run inside the test VM
 *
 * usage: famfs_vm_test main|shared|client|media|devdax|devdax-media
 *
 * Prints TAP on stdout.  "main" runs on the legacy pmem device that
 * memmap= gives (/dev/pmem0, 512 MiB); "shared" runs on a file-backed
 * NVDIMM that the host peer (tests/vm/shm_peer.c), or a second guest
 * running "client", maps at the same time;
 * "media" injects a memory failure under a famfs file; "devdax" and
 * "devdax-media" run "main" (without the stock kernel's refusal) and
 * "media" on /dev/dax0.0, made from the same region, on a kernel with
 * dev_dax_iomap (kmod/kernel-patches).
 * Needs /modules/famfs.ko, /bin/mkfs.famfs, /bin/fsck.famfs and ndctl.
 */
#include "vm_test.h"

/* The module's tests on the device dev names (pmem or devdax). */
static void module_tests(void)
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
}

static void scenario_main(void)
{
	module_tests();
	test_devdax_refused();
	test_dmesg("at the end");
}

/* On a kernel with dev_dax_iomap: the same tests on /dev/dax0.0. */
static void scenario_devdax(void)
{
	use_devdax();
	module_tests();
	test_devdax_wrong_mode();
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
	} else if (!strcmp(scenario, "devdax")) {
		scenario_devdax();
	} else if (!strcmp(scenario, "devdax-media")) {
		use_devdax();
		scenario_media();
	} else {
		printf("Bail out! unknown scenario %s\n", scenario);
		return 2;
	}
	printf("1..%d\n", ntest);
	return nfail ? 1 : 0;
}
