// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The parts of the kernel backend that need no famfs.ko: log entry →
 * MAP_CREATE_V2 argument, MAP_GET_V2 result ↔ log comparison, the fault
 * counter files, module detection, the backend choice, the queue between
 * the replay and the worker that makes the files, and the SIGBUS guard of
 * mappings whose device can go away.  The mount
 * itself is tested in the VM (tests/vm, fullstack).
 */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>

#include "kernel.h"
#include "medium-guard.h"
#include "log.h"

static void make_file_entry(struct famfs_log_entry *e, uint64_t size, uint32_t n)
{
	memset(e, 0, sizeof(*e));
	e->type = FAMFS_LOG_FILE;
	e->file.size = size;
	e->file.ext_type = FAMFS_EXT_SIMPLE;
	e->file.nextents = n;
	for (uint32_t i = 0; i < n && i < FAMFS_MAX_SIMPLE_EXTENTS; i++) {
		e->file.se[i].offset = (16 + 4 * i) * FAMFS_ALLOC_UNIT;
		e->file.se[i].len = 2 * FAMFS_ALLOC_UNIT;
	}
}

static void test_simple(void)
{
	struct famfs_log_entry e;
	struct kernel_fmap km;
	struct famfs_ioc_get_fmap got;
	struct famfs_err err = {0};

	make_file_entry(&e, 5 << 20, 2);
	g_assert_cmpint(kernel_fmap_from_entry(&e, &km, &err), ==, 0);
	g_assert_cmpuint(km.fmap.fioc_file_size, ==, 5 << 20);
	g_assert_cmpuint(km.fmap.fioc_file_type, ==, FAMFS_REG);
	g_assert_cmpuint(km.fmap.fioc_ext_type, ==, FAMFS_IOC_EXT_SIMPLE);
	g_assert_cmpuint(km.fmap.fioc_nextents, ==, 2);
	g_assert_true(km.fmap.kse == km.se);
	g_assert_cmpuint(km.se[1].offset, ==, 20 * FAMFS_ALLOC_UNIT);

	/* What the kernel would report for it: identical. */
	memset(&got, 0, sizeof(got));
	got.iocmap.fioc_file_size = 5 << 20;
	got.iocmap.fioc_file_type = FAMFS_REG;
	got.iocmap.fioc_ext_type = FAMFS_IOC_EXT_SIMPLE;
	got.iocmap.fioc_nextents = 2;
	for (int i = 0; i < 2; i++) {
		got.ikse[i].offset = km.se[i].offset;
		got.ikse[i].len = km.se[i].len;
	}
	g_assert_cmpint(kernel_fmap_compare(&got, &km, &err), ==, 0);

	/* Each difference is found and named. */
	got.ikse[1].len += FAMFS_ALLOC_UNIT;
	g_assert_cmpint(kernel_fmap_compare(&got, &km, &err), ==, -EILSEQ);
	g_assert_nonnull(strstr(err.msg, "extent 1"));
	got.ikse[1].len -= FAMFS_ALLOC_UNIT;
	got.iocmap.fioc_file_size++;
	g_assert_cmpint(kernel_fmap_compare(&got, &km, &err), ==, -EILSEQ);
	g_assert_nonnull(strstr(err.msg, "size"));
	got.iocmap.fioc_file_size--;
	got.iocmap.fioc_nextents = 1;
	g_assert_cmpint(kernel_fmap_compare(&got, &km, &err), ==, -EILSEQ);
	got.iocmap.fioc_nextents = 2;
	got.iocmap.fioc_ext_type = FAMFS_IOC_EXT_INTERLEAVE;
	g_assert_cmpint(kernel_fmap_compare(&got, &km, &err), ==, -EILSEQ);
	got.iocmap.fioc_ext_type = FAMFS_IOC_EXT_SIMPLE;
	got.iocmap.fioc_file_type = FAMFS_LOG;
	g_assert_cmpint(kernel_fmap_compare(&got, &km, &err), ==, -EILSEQ);

	/* More extents than MAP_GET_V2 can report: said so, not "equal". */
	make_file_entry(&e, 6 << 20, 3);
	g_assert_cmpint(kernel_fmap_from_entry(&e, &km, &err), ==, 0);
	got.iocmap.fioc_file_type = FAMFS_REG;
	got.iocmap.fioc_file_size = 6 << 20;
	got.iocmap.fioc_nextents = 3;
	g_assert_cmpint(kernel_fmap_compare(&got, &km, &err), ==, -E2BIG);
}

static void test_interleaved(void)
{
	struct famfs_log_entry e;
	struct kernel_fmap km;
	struct famfs_ioc_get_fmap got;
	struct famfs_err err = {0};

	memset(&e, 0, sizeof(e));
	e.type = FAMFS_LOG_FILE;
	e.file.size = 20 << 20;
	e.file.ext_type = FAMFS_EXT_INTERLEAVED;
	e.file.nextents = 1;
	e.file.ie[0].nstrips = 3;
	e.file.ie[0].chunk_size = FAMFS_ALLOC_UNIT;
	for (int j = 0; j < 3; j++) {
		e.file.ie[0].strips[j].offset = (100 + 10 * j) * FAMFS_ALLOC_UNIT;
		e.file.ie[0].strips[j].len = (j == 1 ? 5 : 4) * FAMFS_ALLOC_UNIT;
	}
	g_assert_cmpint(kernel_fmap_from_entry(&e, &km, &err), ==, 0);
	g_assert_cmpuint(km.fmap.fioc_ext_type, ==, FAMFS_IOC_EXT_INTERLEAVE);
	g_assert_cmpuint(km.fmap.fioc_niext, ==, 1);
	g_assert_true(km.fmap.kie == &km.ie);
	g_assert_true(km.ie.ie_strips == km.strips);
	/* the shortest strip (4 chunks) bounds it: 3 × 4 × 2 MiB */
	g_assert_cmpuint(km.ie.ie_nbytes, ==, 12 * FAMFS_ALLOC_UNIT);
	g_assert_cmpuint(km.strips[2].offset, ==, 120 * FAMFS_ALLOC_UNIT);

	memset(&got, 0, sizeof(got));
	got.iocmap.fioc_file_size = e.file.size;
	got.iocmap.fioc_file_type = FAMFS_REG;
	got.iocmap.fioc_ext_type = FAMFS_IOC_EXT_INTERLEAVE;
	got.iocmap.fioc_niext = 1;
	got.ks.ikie.ie_nstrips = 3;
	got.ks.ikie.ie_chunk_size = FAMFS_ALLOC_UNIT;
	got.ks.ikie.ie_nbytes = km.ie.ie_nbytes;
	for (int j = 0; j < 3; j++) {
		got.ks.kie_strips[j].offset = km.strips[j].offset;
		got.ks.kie_strips[j].len = km.strips[j].len;
	}
	g_assert_cmpint(kernel_fmap_compare(&got, &km, &err), ==, 0);
	got.ks.kie_strips[2].offset += FAMFS_ALLOC_UNIT;
	g_assert_cmpint(kernel_fmap_compare(&got, &km, &err), ==, -EILSEQ);
	g_assert_nonnull(strstr(err.msg, "strip 2"));
	got.ks.kie_strips[2].offset -= FAMFS_ALLOC_UNIT;
	got.ks.ikie.ie_chunk_size *= 2;
	g_assert_cmpint(kernel_fmap_compare(&got, &km, &err), ==, -EILSEQ);

	/* Hostile entries are refused, never turned into an ioctl. */
	e.file.ie[0].nstrips = 17;
	g_assert_cmpint(kernel_fmap_from_entry(&e, &km, &err), ==, -EINVAL);
	e.file.ie[0].nstrips = 0;
	g_assert_cmpint(kernel_fmap_from_entry(&e, &km, &err), ==, -EINVAL);
	e.file.ie[0].nstrips = 3;
	e.file.ie[0].chunk_size = 0;
	g_assert_cmpint(kernel_fmap_from_entry(&e, &km, &err), ==, -EINVAL);
	e.file.ie[0].chunk_size = FAMFS_ALLOC_UNIT;
	e.file.nextents = 2;
	g_assert_cmpint(kernel_fmap_from_entry(&e, &km, &err), ==, -EINVAL);
	e.file.nextents = 1;
	e.file.ext_type = 7;
	g_assert_cmpint(kernel_fmap_from_entry(&e, &km, &err), ==, -EINVAL);
	make_file_entry(&e, 1, 0);
	g_assert_cmpint(kernel_fmap_from_entry(&e, &km, &err), ==, -EINVAL);
	make_file_entry(&e, 1, 17);
	g_assert_cmpint(kernel_fmap_from_entry(&e, &km, &err), ==, -EINVAL);
	e.type = FAMFS_LOG_MKDIR;
	g_assert_cmpint(kernel_fmap_from_entry(&e, &km, &err), ==, -EINVAL);
}

static void test_meta(void)
{
	struct kernel_fmap km;

	kernel_fmap_meta(FAMFS_LOG, FAMFS_LOG_OFFSET, 8 << 20, &km);
	g_assert_cmpuint(km.fmap.fioc_file_type, ==, FAMFS_LOG);
	g_assert_cmpuint(km.fmap.fioc_file_size, ==, 8 << 20);
	g_assert_cmpuint(km.fmap.fioc_nextents, ==, 1);
	g_assert_cmpuint(km.se[0].offset, ==, FAMFS_LOG_OFFSET);
	g_assert_true(km.fmap.kse == km.se);
}

static void put(const char *dir, const char *name, const char *text)
{
	g_autofree char *p = g_build_filename(dir, name, NULL);

	g_assert_true(g_file_set_contents(p, text, -1, NULL));
}

static void test_fault_counters(void)
{
	g_autofree char *dir = g_dir_make_tmp("famfs-kfc-XXXXXX", NULL);
	uint64_t v[3] = { 7, 7, 7 };

	g_assert_cmpint(kernel_read_fault_counters(dir, v), ==, -ENOENT);
	g_assert_cmpuint(v[0], ==, 7);   /* untouched on failure */
	put(dir, "pte_fault_ct", "0\n");
	put(dir, "pmd_fault_ct", "1483\n");
	put(dir, "pud_fault_ct", "3\n");
	g_assert_cmpint(kernel_read_fault_counters(dir, v), ==, 0);
	g_assert_cmpuint(v[0], ==, 0);
	g_assert_cmpuint(v[1], ==, 1483);
	g_assert_cmpuint(v[2], ==, 3);
	put(dir, "pud_fault_ct", "-3\n");
	g_assert_cmpint(kernel_read_fault_counters(dir, v), ==, -EBADMSG);
	put(dir, "pud_fault_ct", "12abc\n");
	g_assert_cmpint(kernel_read_fault_counters(dir, v), ==, -EBADMSG);
	put(dir, "pud_fault_ct", "99999999999999999999999\n");
	g_assert_cmpint(kernel_read_fault_counters(dir, v), ==, -EBADMSG);
	put(dir, "pud_fault_ct", "");
	g_assert_cmpint(kernel_read_fault_counters(dir, v), ==, -ENODATA);
	g_assert_cmpuint(v[1], ==, 1483);
}

/* famfs.ko's dax_error in /proc/self/mounts, with the offset it reports. */
static void test_media_error(void)
{
	g_autofree char *dir = g_dir_make_tmp("famfs-kme-XXXXXX", NULL);
	g_autofree char *mounts = g_build_filename(dir, "mounts", NULL);
	char why[256] = "";

	g_assert_cmpint(kernel_media_error(mounts, "/run/famfs/a", why, sizeof(why)), ==, -ENOENT);
	put(dir, "mounts",
	    "/dev/pmem0 /run/famfs/a famfs rw,nosuid,nodev,noexec,noatime 0 0\n"
	    "/dev/pmem1 /run/famfs/b famfs rw,noatime,dax_error,dax_error_offset=0x4a00000,dax_error_len=0x1000 0 0\n"
	    "/dev/pmem2 /run/famfs/c famfs rw,dax_error 0 0\n"
	    "/dev/pmem3 /run/famfs/d famfs rw,dax_error,dax_error_offset=0x0,dax_error_len=0xffffffffffffffff 0 0\n"
	    "tmpfs /run/famfs/e tmpfs rw,dax_error 0 0\n");
	g_assert_cmpint(kernel_media_error(mounts, "/run/famfs/a", why, sizeof(why)), ==, 0);
	g_assert_cmpint(kernel_media_error(mounts, "/run/famfs/none", why, sizeof(why)), ==, 0);
	g_assert_cmpint(kernel_media_error(mounts, "/run/famfs/e", why, sizeof(why)), ==, 0);
	g_assert_cmpint(kernel_media_error(mounts, "/run/famfs/b", why, sizeof(why)), ==, 1);
	g_assert_cmpstr(why, ==, "media failure reported by famfs.ko at device offset 0x4a00000, length 0x1000: "
			"every read, write and fault on /run/famfs/b fails with EIO");
	g_assert_cmpint(kernel_media_error(mounts, "/run/famfs/c", why, sizeof(why)), ==, 1);
	g_assert_nonnull(strstr(why, "the module does not say where"));
	g_assert_cmpint(kernel_media_error(mounts, "/run/famfs/d", why, sizeof(why)), ==, 1);
	g_assert_nonnull(strstr(why, "the whole device failed or went away"));
}

static void test_available(void)
{
	g_autofree char *root = g_dir_make_tmp("famfs-kroot-XXXXXX", NULL);
	g_autofree char *proc = g_build_filename(root, "proc", NULL);
	g_autofree char *mod = g_build_filename(root, "sys", "module", "famfs", NULL);

	g_assert_false(kernel_famfs_available(root));
	g_assert_cmpint(g_mkdir_with_parents(proc, 0755), ==, 0);
	put(proc, "filesystems", "nodev\tsysfs\nnodev\ttmpfs\n\text4\nnodev\tfamfsx\n");
	g_assert_false(kernel_famfs_available(root));
	put(proc, "filesystems", "nodev\tsysfs\nnodev\tfamfs\n\text4\n");
	g_assert_true(kernel_famfs_available(root));
	put(proc, "filesystems", "");
	g_assert_cmpint(g_mkdir_with_parents(mod, 0755), ==, 0);
	g_assert_true(kernel_famfs_available(root));
}

static void test_choice_and_load(void)
{
	enum backend_choice c;
	struct famfs_err err = {0};

	g_assert_cmpint(backend_choice_parse("kernel", &c), ==, 0);
	g_assert_cmpint(c, ==, BACKEND_KERNEL);
	g_assert_cmpstr(backend_choice_name(c), ==, "kernel");
	g_assert_cmpint(backend_choice_parse("view", &c), ==, 0);
	g_assert_cmpint(backend_choice_parse("auto", &c), ==, 0);
	g_assert_cmpint(backend_choice_parse("Kernel", &c), ==, -EINVAL);
	g_assert_cmpint(backend_choice_parse("", &c), ==, -EINVAL);
	/* Not a module name, not a .ko: refused before anything runs. */
	g_assert_cmpint(kernel_famfs_load("-v", &err), ==, -EINVAL);
	g_assert_cmpint(kernel_famfs_load("a/b", &err), ==, -EINVAL);
	g_assert_cmpint(kernel_famfs_load("/nonexistent/famfs.ko", &err), ==, -ENOENT);
	g_assert_nonnull(strstr(err.msg, "/nonexistent/famfs.ko"));
}

/* One thread: items come back in order, a full ring refuses, kept items stay. */
static void test_queue_single_thread(void)
{
	struct kernel_queue *q = kernel_queue_new(false);
	struct kernel_item *it;
	uint32_t n = 0;

	g_assert_nonnull(q);
	g_assert_null(kernel_queue_next(q, true));
	for (uint32_t i = 0; i < KERNEL_QUEUE_SLOTS; i++) {
		it = kernel_queue_reserve(q);
		g_assert_nonnull(it);
		it->node = i;
		kernel_queue_commit(q);
	}
	g_assert_null(kernel_queue_reserve(q));
	/* Read 300, keep the last 10 (an unsent batch): 290 slots come free. */
	for (uint32_t i = 0; i < 300; i++) {
		it = kernel_queue_next(q, false);
		g_assert_nonnull(it);
		g_assert_cmpuint(it->node, ==, i);
	}
	kernel_queue_release(q, 10);
	for (uint32_t i = 0; i < 290; i++) {
		it = kernel_queue_reserve(q);
		g_assert_nonnull(it);
		it->node = KERNEL_QUEUE_SLOTS + i;
		kernel_queue_commit(q);
	}
	g_assert_null(kernel_queue_reserve(q));
	/* Releasing fewer than before frees nothing more; the kept ten are intact. */
	kernel_queue_release(q, 20);
	g_assert_null(kernel_queue_reserve(q));
	while ((it = kernel_queue_next(q, false)) != NULL) {
		g_assert_cmpuint(it->node, ==, 300 + n);
		n++;
	}
	g_assert_cmpuint(n, ==, KERNEL_QUEUE_SLOTS - 300 + 290);
	kernel_queue_release(q, 0);
	kernel_queue_close(q);
	g_assert_null(kernel_queue_reserve(q));
	g_assert_null(kernel_queue_next(q, true));
	kernel_queue_free(q);
}

#define QUEUE_TEST_ITEMS 200000u

static void *queue_producer(void *arg)
{
	struct kernel_queue *q = arg;

	for (uint32_t i = 0; i < QUEUE_TEST_ITEMS; i++) {
		struct kernel_item *it = kernel_queue_reserve(q);

		g_assert_nonnull(it);
		it->node = i;
		snprintf(it->path, sizeof(it->path), "f%u", i);
		kernel_queue_commit(q);
	}
	kernel_queue_close(q);
	return NULL;
}

/*
 * Two threads, as at attach: the consumer holds batches of up to
 * KERNEL_MKFILES_MAX items; none of them may be overwritten before it
 * releases them, and every item arrives once, in order.  With
 * @release_each it releases after every item all but the batch it holds,
 * as the worker does; otherwise only once a batch is done.
 */
static void queue_two_threads(bool release_each)
{
	struct kernel_queue *q = kernel_queue_new(true);
	struct kernel_item *batch[KERNEL_MKFILES_MAX], *it;
	uint32_t held = 0, seen = 0, want = 1;
	pthread_t t;
	char name[FAMFS_MAX_PATHLEN];

	g_assert_nonnull(q);
	g_assert_cmpint(pthread_create(&t, NULL, queue_producer, q), ==, 0);
	while ((it = kernel_queue_next(q, true)) != NULL) {
		g_assert_cmpuint(it->node, ==, seen);
		seen++;
		batch[held++] = it;
		if (release_each)
			kernel_queue_release(q, held);
		if (held < want)
			continue;
		for (uint32_t i = 0; i < held; i++) {
			snprintf(name, sizeof(name), "f%u", batch[i]->node);
			g_assert_cmpstr(batch[i]->path, ==, name);
			g_assert_cmpuint(batch[i]->node, ==, seen - held + i);
		}
		kernel_queue_release(q, 0);
		held = 0;
		want = want % KERNEL_MKFILES_MAX + 1;
	}
	g_assert_cmpint(pthread_join(t, NULL), ==, 0);
	g_assert_cmpuint(seen, ==, QUEUE_TEST_ITEMS);
	kernel_queue_free(q);
}

static void test_queue_two_threads(void)
{
	queue_two_threads(false);
}

static void test_queue_two_threads_release_each(void)
{
	queue_two_threads(true);
}

/* A shared file mapping whose file is cut short: pages past the end fault. */
static uint8_t *map_then_truncate(const char *path, size_t len)
{
	uint8_t *p;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(ftruncate(fd, (off_t)len), ==, 0);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	g_assert_true(p != MAP_FAILED);
	memset(p, 0xab, len);
	g_assert_cmpint(ftruncate(fd, 4096), ==, 0);
	close(fd);
	return p;
}

/*
 * A guarded mapping that faults is replaced by zeros and the access goes
 * on; a fault outside every guarded range still kills the process.
 */
static void test_medium_guard(void)
{
	char *dir = g_dir_make_tmp("famfs-guard-XXXXXX", NULL);
	char *path = g_build_filename(dir, "medium", NULL);
	const size_t len = 16 * 4096;
	volatile uint8_t *p;
	int status;
	pid_t pid;

	g_assert_cmpint(medium_guard_install(), ==, 0);
	p = map_then_truncate(path, len);
	g_assert_true(medium_guard_add((void *)p, len));
	g_assert_false(medium_guard_lost((const void *)p));
	g_assert_cmpuint(p[0], ==, 0xab);
	g_assert_cmpuint(p[8 * 4096], ==, 0);       /* past the end: SIGBUS, replaced */
	g_assert_true(medium_guard_lost((const void *)p));
	g_assert_cmpuint(p[0], ==, 0);              /* the whole range is zeros now */
	p[5] = 1;                                   /* and writable, privately */
	medium_guard_remove((void *)p);
	munmap((void *)p, len);

	/* Not guarded: the default action. */
	pid = fork();
	g_assert_cmpint(pid, >=, 0);
	if (pid == 0) {
		volatile uint8_t *q = map_then_truncate(path, len);

		(void)q[8 * 4096];
		_exit(0);
	}
	g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
	g_assert_true(WIFSIGNALED(status));
	g_assert_cmpint(WTERMSIG(status), ==, SIGBUS);
	g_unlink(path);
	g_rmdir(dir);
	g_free(path);
	g_free(dir);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/kernel-backend/simple", test_simple);
	g_test_add_func("/kernel-backend/interleaved", test_interleaved);
	g_test_add_func("/kernel-backend/meta", test_meta);
	g_test_add_func("/kernel-backend/fault-counters", test_fault_counters);
	g_test_add_func("/kernel-backend/media-error", test_media_error);
	g_test_add_func("/kernel-backend/available", test_available);
	g_test_add_func("/kernel-backend/choice-and-load", test_choice_and_load);
	g_test_add_func("/kernel-backend/queue-single-thread", test_queue_single_thread);
	g_test_add_func("/kernel-backend/queue-two-threads", test_queue_two_threads);
	g_test_add_func("/kernel-backend/queue-two-threads-release-each", test_queue_two_threads_release_each);
	g_test_add_func("/kernel-backend/medium-guard", test_medium_guard);
	return g_test_run();
}
