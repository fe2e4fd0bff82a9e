// SPDX-License-Identifier: GPL-2.0
/*
 * fullstack-tool - small timing and data helpers for the full-stack guest
 * test (guest/fullstack.sh); each command prints one line and exits 0 on
 * success, 1 on failure.
 *
 *   rebind DRIVER DEVICE MOUNTPOINT   unbind DEVICE from the driver whose
 *                                 sysfs directory is DRIVER, wait for the
 *                                 unmount, bind it, time device → mount
 *   wait-mount MOUNTPOINT MS      wait until MOUNTPOINT is a famfs mount
 *   mmap-write FILE SEED          fill FILE through a MAP_SHARED mapping
 *   pattern SIZE SEED             write the bytes mmap-write stores
 *   poke FILE WORD                store a u64 at offset 0 of FILE (mmap)
 *   wait-word FILE WORD MS        wait until offset 0 of FILE holds WORD
 *   wait-file PATH MS             wait until PATH exists
 *   copy-in FILE DEVICE LEN       store the first LEN bytes of FILE at
 *                                 offset 0 of DEVICE, through a mapping
 *                                 (device-dax has no write(2)); LEN a
 *                                 multiple of 2 MiB
 *   sum DEVICE LEN                a 64-bit hash of DEVICE's first LEN
 *                                 bytes, read through a mapping
 *   torn-tail LOG                 through a mapping of LOG (a mount's
 *                                 .meta/.log), append an entry whose CRC
 *                                 is wrong: a write torn in flight
 *   mmap-hold FILE READY          map FILE (MAP_SHARED), touch its first
 *                                 page, create READY, then keep the
 *                                 mapping (and no descriptor) until killed
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "omf.h"

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int is_mounted(const char *mnt)
{
	char line[1024], dev[256], dir[512], type[64];
	FILE *f = fopen("/proc/mounts", "r");
	int found = 0;

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%255s %511s %63s", dev, dir, type) == 3 &&
		    !strcmp(dir, mnt) && !strcmp(type, "famfs"))
			found = 1;
	fclose(f);
	return found;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n < 0 ? -errno : 0;
}

/*
 * Waits until is_mounted(mnt) == want; returns microseconds or -1.  It
 * sleeps on /proc/self/mounts, which the kernel marks POLLPRI at every mount
 * or unmount in this namespace: a poll loop would take CPU from the daemon
 * whose mount it times.
 */
static int64_t wait_mount(const char *mnt, int want, uint64_t timeout_ms)
{
	uint64_t t0 = now_us(), spent;
	int fd = open("/proc/self/mounts", O_RDONLY | O_CLOEXEC);
	int64_t r = -1;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLPRI };

		if (is_mounted(mnt) == want) {
			r = (int64_t)(now_us() - t0);
			break;
		}
		spent = now_us() - t0;
		if (spent >= timeout_ms * 1000)
			break;
		if (fd < 0 || poll(&pfd, 1, (int)((timeout_ms * 1000 - spent) / 1000) + 1) < 0)
			usleep(500);
	}
	if (fd >= 0)
		close(fd);
	return r;
}

static uint8_t pat_byte(uint64_t i, uint64_t seed)
{
	uint64_t x = (i / 8 + 1) * 0x9E3779B97F4A7C15ULL ^ seed * 0xD6E8FEB86659FD93ULL;

	x ^= x >> 29;
	return (uint8_t)(x >> ((i % 8) * 8));
}

static int cmd_rebind(const char *driver, const char *ns, const char *mnt)
{
	char path[256];
	uint64_t t0;
	int64_t us;
	int r;

	snprintf(path, sizeof(path), "%s/unbind", driver);
	r = write_str(path, ns);
	if (r < 0) {
		printf("cannot unbind %s: %s\n", ns, strerror(-r));
		return 1;
	}
	us = wait_mount(mnt, 0, 10000);
	if (us < 0) {
		printf("%s still mounted 10 s after its device went away\n", mnt);
		return 1;
	}
	printf("unmounted %lld.%03lld ms after the device was removed; ", (long long)us / 1000,
	       (long long)us % 1000);
	usleep(300000);
	t0 = now_us();
	snprintf(path, sizeof(path), "%s/bind", driver);
	r = write_str(path, ns);
	if (r < 0) {
		printf("cannot bind %s: %s\n", ns, strerror(-r));
		return 1;
	}
	us = wait_mount(mnt, 1, 10000);
	if (us < 0) {
		printf("%s not mounted 10 s after its device came back\n", mnt);
		return 1;
	}
	us = (int64_t)(now_us() - t0);
	printf("device appearance to mount: %lld.%03lld ms\n", (long long)us / 1000, (long long)us % 1000);
	return 0;
}

/* A shared writable mapping of all of @path, or NULL (said why); its size in @ret_size */
static uint8_t *map_whole(const char *path, size_t *ret_size)
{
	struct stat st;
	void *p;
	int fd = open(path, O_RDWR);

	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size <= 0) {
		printf("cannot open %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		printf("cannot mmap %s: %s\n", path, strerror(errno));
		return NULL;
	}
	*ret_size = (size_t)st.st_size;
	return p;
}

static int cmd_mmap_write(const char *path, uint64_t seed)
{
	size_t size;
	uint8_t *p = map_whole(path, &size);

	if (!p)
		return 1;
	for (uint64_t i = 0; i < (uint64_t)size; i++)
		p[i] = pat_byte(i, seed);
	for (uint64_t i = 0; i < (uint64_t)size; i++)
		if (p[i] != pat_byte(i, seed)) {
			printf("byte %llu reads back wrong\n", (unsigned long long)i);
			return 1;
		}
	msync(p, size, MS_SYNC);
	munmap(p, size);
	printf("wrote %lld bytes through a shared mapping\n", (long long)size);
	return 0;
}

/* What a writer that died mid-append leaves: next_index past an entry that is not intact. */
static int cmd_torn_tail(const char *path)
{
	struct famfs_log_header *h;
	struct famfs_log_entry *e;
	struct stat st;
	uint8_t *p;
	int fd = open(path, O_RDWR);

	if (fd < 0 || fstat(fd, &st) < 0 || (size_t)st.st_size < sizeof(*h) + sizeof(*e)) {
		printf("cannot open %s: %s\n", path, strerror(errno));
		return 1;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		printf("cannot mmap %s: %s\n", path, strerror(errno));
		return 1;
	}
	h = (struct famfs_log_header *)p;
	if (h->next_index > h->last_index) {
		printf("the log is full\n");
		return 1;
	}
	e = (struct famfs_log_entry *)(p + sizeof(*h)) + h->next_index;
	memset(e, 0xab, sizeof(*e));
	e->seqnum = h->next_index;
	h->next_index++;
	h->next_seqnum++;
	msync(p, (size_t)st.st_size, MS_SYNC);
	printf("torn entry at index %llu\n", (unsigned long long)(h->next_index - 1));
	munmap(p, (size_t)st.st_size);
	return 0;
}

/* A mapping of @path held by a process with no descriptor of it: what makes a mount busy. */
static int cmd_mmap_hold(const char *path, const char *ready)
{
	size_t size;
	volatile uint8_t *p = map_whole(path, &size);
	int fd;

	if (!p)
		return 1;
	p[0] = p[0];
	fd = open(ready, O_CREAT | O_WRONLY, 0644);
	if (fd < 0) {
		printf("cannot create %s: %s\n", ready, strerror(errno));
		return 1;
	}
	close(fd);
	for (;;)
		pause();
}

/* A media failure under a page of @path: what a real one makes famfs.ko do. */
static int cmd_poison(const char *path, uint64_t offset)
{
	volatile uint8_t *p;
	int fd = open(path, O_RDWR);
	int r;

	if (fd < 0) {
		printf("cannot open %s: %s\n", path, strerror(errno));
		return 1;
	}
	p = mmap(NULL, offset + 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		printf("cannot mmap %s: %s\n", path, strerror(errno));
		return 1;
	}
	p[offset] = 1;
	r = madvise((void *)(p + offset), 4096, MADV_HWPOISON);
	if (r < 0)
		printf("madvise(MADV_HWPOISON) at offset %llu of %s: %s\n", (unsigned long long)offset, path,
		       strerror(errno));
	munmap((void *)p, offset + 4096);
	return r < 0;
}

static int cmd_pattern(uint64_t size, uint64_t seed)
{
	static uint8_t buf[65536];

	for (uint64_t off = 0; off < size;) {
		size_t n = size - off < sizeof(buf) ? (size_t)(size - off) : sizeof(buf);

		for (size_t i = 0; i < n; i++)
			buf[i] = pat_byte(off + i, seed);
		if (fwrite(buf, 1, n, stdout) != n)
			return 1;
		off += n;
	}
	return 0;
}

static volatile uint64_t *map_word(const char *path, int *ret_fd)
{
	void *p;
	int fd = open(path, O_RDWR);

	if (fd < 0) {
		printf("cannot open %s: %s\n", path, strerror(errno));
		return NULL;
	}
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		printf("cannot mmap %s: %s\n", path, strerror(errno));
		close(fd);
		return NULL;
	}
	*ret_fd = fd;
	return p;
}

static int cmd_poke(const char *path, uint64_t word)
{
	volatile uint64_t *w;
	int fd;

	w = map_word(path, &fd);
	if (!w)
		return 1;
	*w = word;
	msync((void *)w, 4096, MS_SYNC);
	munmap((void *)w, 4096);
	close(fd);
	printf("stored 0x%llx in %s\n", (unsigned long long)word, path);
	return 0;
}

static int cmd_wait_word(const char *path, uint64_t word, uint64_t ms)
{
	volatile uint64_t *w;
	uint64_t t0 = now_us();
	int fd;

	w = map_word(path, &fd);
	if (!w)
		return 1;
	while (*w != word && now_us() - t0 < ms * 1000)
		usleep(200);
	if (*w != word) {
		printf("%s holds 0x%llx, not 0x%llx, after %llu ms\n", path, (unsigned long long)*w,
		       (unsigned long long)word, (unsigned long long)ms);
		return 1;
	}
	printf("%llu.%03llu ms\n", (unsigned long long)(now_us() - t0) / 1000,
	       (unsigned long long)(now_us() - t0) % 1000);
	return 0;
}

static int cmd_wait_file(const char *path, uint64_t ms)
{
	uint64_t t0 = now_us();
	struct stat st;

	while (stat(path, &st) < 0 && now_us() - t0 < ms * 1000)
		usleep(200);
	if (stat(path, &st) < 0) {
		printf("%s did not appear within %llu ms\n", path, (unsigned long long)ms);
		return 1;
	}
	printf("%llu.%03llu ms\n", (unsigned long long)(now_us() - t0) / 1000,
	       (unsigned long long)(now_us() - t0) % 1000);
	return 0;
}

/* A shared mapping of the first @len bytes of @path, or NULL (said why) */
static void *map_device(const char *path, uint64_t len, int writable)
{
	int fd = open(path, writable ? O_RDWR : O_RDONLY);
	void *p;

	if (fd < 0) {
		printf("cannot open %s: %s\n", path, strerror(errno));
		return NULL;
	}
	p = mmap(NULL, len, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		printf("cannot map %llu bytes of %s: %s\n", (unsigned long long)len, path, strerror(errno));
		return NULL;
	}
	return p;
}

static int cmd_copy_in(const char *file, const char *device, uint64_t len)
{
	uint8_t *dst = map_device(device, len, 1);
	int fd = open(file, O_RDONLY);
	uint64_t done = 0;
	ssize_t n = 0;

	if (!dst || fd < 0) {
		if (fd < 0)
			printf("cannot open %s: %s\n", file, strerror(errno));
		return 1;
	}
	while (done < len && (n = read(fd, dst + done, len - done)) > 0)
		done += (uint64_t)n;
	close(fd);
	munmap(dst, len);
	if (done < len) {
		printf("%s: %llu of %llu bytes read\n", file, (unsigned long long)done, (unsigned long long)len);
		return 1;
	}
	printf("copied %llu bytes\n", (unsigned long long)len);
	return 0;
}

static int cmd_sum(const char *device, uint64_t len)
{
	const uint64_t *p = map_device(device, len, 0);
	uint64_t h = 0xcbf29ce484222325ULL;

	if (!p)
		return 1;
	for (uint64_t i = 0; i < len / 8; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	munmap((void *)p, len);
	printf("%016llx\n", (unsigned long long)h);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "copy-in"))
		return cmd_copy_in(argv[2], argv[3], strtoull(argv[4], NULL, 0));
	if (argc == 4 && !strcmp(argv[1], "sum"))
		return cmd_sum(argv[2], strtoull(argv[3], NULL, 0));
	if (argc == 4 && !strcmp(argv[1], "poke"))
		return cmd_poke(argv[2], strtoull(argv[3], NULL, 0));
	if (argc == 5 && !strcmp(argv[1], "wait-word"))
		return cmd_wait_word(argv[2], strtoull(argv[3], NULL, 0), strtoull(argv[4], NULL, 10));
	if (argc == 4 && !strcmp(argv[1], "wait-file"))
		return cmd_wait_file(argv[2], strtoull(argv[3], NULL, 10));
	if (argc == 5 && !strcmp(argv[1], "rebind"))
		return cmd_rebind(argv[2], argv[3], argv[4]);
	if (argc == 4 && !strcmp(argv[1], "wait-mount")) {
		int64_t us = wait_mount(argv[2], 1, strtoull(argv[3], NULL, 10));

		if (us < 0) {
			printf("%s not mounted\n", argv[2]);
			return 1;
		}
		printf("mounted after %lld ms\n", (long long)us / 1000);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "mmap-write"))
		return cmd_mmap_write(argv[2], strtoull(argv[3], NULL, 0));
	if (argc == 3 && !strcmp(argv[1], "torn-tail"))
		return cmd_torn_tail(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "mmap-hold"))
		return cmd_mmap_hold(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "poison"))
		return cmd_poison(argv[2], strtoull(argv[3], NULL, 0));
	if (argc == 4 && !strcmp(argv[1], "pattern"))
		return cmd_pattern(strtoull(argv[2], NULL, 0), strtoull(argv[3], NULL, 0));
	fprintf(stderr, "usage: fullstack-tool rebind NS MNT | wait-mount MNT MS | mmap-write FILE SEED | poison FILE OFFSET | "
		"pattern SIZE SEED | copy-in FILE DEVICE LEN | sum DEVICE LEN\n");
	return 2;
}
