/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the parts of famfs_vm_test share: TAP output on stdout, helpers, the
 * ioctl wrappers, the file system state the tests set up, and each part's
 * tests.  famfs_vm_test.c says what the program does.
 */
#ifndef FAMFS_VM_TEST_H
#define FAMFS_VM_TEST_H

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

/* The device under test, and the TAP counters. */
extern const char *dev;
extern int ntest;
extern int nfail;
/* The file system the main scenario made (make_meta). */
extern uint64_t log_len;
extern uint64_t data0;		/* first data offset the tests use */
extern uint64_t dev_bytes;

/* vm_test_util.c: TAP output, shell and file helpers, ioctl wrappers */

bool tap(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool tap_rc(int rc, const char *what);
bool tap_errno(int rc, int want, const char *what);
int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int neg_errno(int rc);
bool exists(const char *path);
int read_long(const char *path, long long *val);
int write_str(const char *path, const char *s);
void *xmalloc(size_t n);
int wait_for(const char *path, int tenths);
void dmesg_clear(void);
int probe_byte(const volatile unsigned char *p, unsigned char *val);
int map_v1(int fd, uint32_t ftype, uint64_t size, uint64_t n,
	   const uint64_t *off, const uint64_t *len);
int map_v2(int fd, uint32_t ftype, uint64_t size, uint32_t n, struct famfs_ioc_simple_extent *se);
int map_v2i(int fd, uint64_t size, uint32_t niext, struct famfs_ioc_interleaved_ext *ie);
int one_v2(int fd, uint64_t size, uint64_t off, uint64_t len);
int create_file(const char *rel);
int as_nobody(int (*fn)(void *), void *arg);
int eperm_status(long rc);
int mount_famfs(const char *opts);
int make_meta(bool verbose);
long long dev_size_bytes(void);
int dev_read(uint64_t off, void *buf, size_t len);
int dev_write(uint64_t off, const void *buf, size_t len);
void data_identity(const char *name, int fd, uint64_t size, uint64_t seed1, uint64_t seed2);
long long dev_matches(uint64_t dev_off, uint64_t len, uint64_t file_off, uint64_t seed);

/* vm_test_map.c: load, mkfs and mount, MAP_CREATE v1/v2, races, faults, bad ioctls */

void test_load(void);
void test_mkfs_mount(bool do_mkfs);
void test_get(int fd_sb);
void test_v1_simple(void);
void test_v2_interleaved(void);
void test_v2_two_iexts(void);
void test_races(void);
void test_faults(void);
void test_truncate(void);
void test_bad_ioctls(void);

/* vm_test_mkfiles.c: FAMFSIOC_MKFILES */

void test_mkfiles(void);

/* vm_test_lifecycle.c: namespace, unmount and unload, load cycles, devdax, dmesg */

void test_namespace(void);
void test_unmount_unload(void);
void test_cycles(void);
void use_devdax(void);
void test_devdax_refused(void);
void test_devdax_wrong_mode(void);
void test_dmesg(const char *when);

/* vm_test_shared.c: the shared-memory scenarios */

void scenario_shared(void);
void scenario_client(void);

/* vm_test_media.c: media failure */

void scenario_media(void);

#endif
