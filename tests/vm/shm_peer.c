// SPDX-License-Identifier: GPL-2.0
/*
 * shm_peer - the "other host" of the shared-memory VM test
 *
 * usage: shm_peer FILE [TIMEOUT_SECS]
 *
 * FILE backs the guest's emulated NVDIMM (memory-backend-file, share=on),
 * so this process and the guest map the same memory.  The guest makes an
 * fsdax namespace on it, runs mkfs.famfs, mounts famfs and writes the first
 * half of a file (tests/vm/guest/vm_test_shared.c, scenario "shared").  We
 * find the famfs superblock in the file (the namespace puts it at some
 * aligned offset), wait for the guest's half, check every byte, and answer
 * with the second half, which the guest reads back through famfs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "guest/vm_common.h"

static uint64_t rd64(const volatile unsigned char *p)
{
	uint64_t v;

	memcpy(&v, (const void *)p, 8);
	return v;
}

int main(int argc, char **argv)
{
	const uint64_t scan = 256 * MiB;
	volatile unsigned char *m, *f;
	uint64_t off, base = UINT64_MAX, log_len = 0, data0;
	time_t deadline;
	struct stat st;
	long long bad;
	int fd;

	if (argc < 2) {
		fprintf(stderr, "usage: shm_peer FILE [TIMEOUT_SECS]\n");
		return 2;
	}
	deadline = time(NULL) + (argc > 2 ? atoi(argv[2]) : 600);

	fd = open(argv[1], O_RDWR);
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "shm_peer: cannot open %s: %s\n", argv[1],
			strerror(errno));
		return 1;
	}
	m = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		fprintf(stderr, "shm_peer: mmap: %s\n", strerror(errno));
		return 1;
	}

	/* 1. the superblock the guest's mkfs.famfs wrote */
	while (base == UINT64_MAX && time(NULL) < deadline) {
		for (off = 0; off + 4 * MiB < scan && off + 4 * MiB < (uint64_t)st.st_size;
		     off += 4096) {
			if (rd64(m + off) != VM_SB_MAGIC ||
			    rd64(m + off + 8) != VM_SB_VERSION ||
			    rd64(m + off + ALIGN_2M) != VM_LOG_MAGIC)
				continue;
			log_len = rd64(m + off + VM_SB_LOGLEN_OFF);
			if (log_len < 8 * MiB || off + ALIGN_2M + log_len > (uint64_t)st.st_size)
				continue;
			base = off;
			break;
		}
		if (base == UINT64_MAX)
			usleep(200000);
	}
	if (base == UINT64_MAX) {
		fprintf(stderr, "shm_peer: no famfs superblock appeared\n");
		return 1;
	}
	data0 = vm_data_base(log_len);
	printf("famfs superblock at file offset %llu, log %llu bytes, shared file at device offset %llu\n",
	       (unsigned long long)base, (unsigned long long)log_len,
	       (unsigned long long)data0);
	f = m + base + data0;
	if (base + data0 + 2 * VM_SHARED_LEN > (uint64_t)st.st_size) {
		fprintf(stderr, "shm_peer: shared file would lie outside %s\n", argv[1]);
		return 1;
	}

	/* 2. the guest's half */
	while (memcmp((const void *)f, VM_SHARED_GUEST_MAGIC,
		      sizeof(VM_SHARED_GUEST_MAGIC))) {
		if (time(NULL) >= deadline) {
			fprintf(stderr, "shm_peer: the guest's data never appeared\n");
			return 1;
		}
		usleep(20000);
		__sync_synchronize();
	}
	__sync_synchronize();
	bad = vm_pat_check((const void *)(f + VM_SHARED_HDR),
			   VM_SHARED_LEN - VM_SHARED_HDR, VM_SHARED_HDR,
			   VM_SHARED_SEED_GUEST);
	if (bad >= 0) {
		fprintf(stderr, "shm_peer: guest data differs at file offset %lld\n",
			bad + VM_SHARED_HDR);
		return 1;
	}
	printf("read the guest's %llu bytes: identical\n",
	       (unsigned long long)VM_SHARED_LEN);

	/* 3. our answer: data first, then the magic */
	vm_pat_fill((void *)(f + VM_SHARED_LEN + VM_SHARED_HDR),
		    VM_SHARED_LEN - VM_SHARED_HDR, VM_SHARED_LEN + VM_SHARED_HDR,
		    VM_SHARED_SEED_HOST);
	__sync_synchronize();
	memcpy((void *)(f + VM_SHARED_LEN), VM_SHARED_HOST_MAGIC,
	       sizeof(VM_SHARED_HOST_MAGIC));
	msync((void *)m, st.st_size, MS_SYNC);
	printf("wrote the host's %llu bytes\n", (unsigned long long)VM_SHARED_LEN);
	return 0;
}
