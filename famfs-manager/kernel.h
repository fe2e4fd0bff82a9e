/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel backend (famfs.ko): mount -t famfs, the .meta files, files
 * made in MKFILES batches (or one MAP_CREATE_V2 each), fault counters from
 * /sys/fs/famfs; what the manager core, the tests and the benchmarks use of
 * it (backend-kernel.c lists which file does what).  The pure helpers
 * (building and comparing ioctl maps, reading the counters, module
 * detection) take their inputs as arguments so the unit tests can run them
 * without the module.
 */
#ifndef FAMFS_MANAGER_KERNEL_H
#define FAMFS_MANAGER_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "omf.h"

/* The uapi's v1 enum shares its name with the on-media one in omf.h. */
#define famfs_extent_type famfs_ioc_v1_extent_type
#include <linux/famfs_ioctl.h>
#undef famfs_extent_type

#include "backend.h"

/* Mount flags, as upstream's v1 mount uses them. */
#define KERNEL_MOUNT_FLAGS (MS_NOATIME | MS_NOSUID | MS_NOEXEC | MS_NODEV)

/*
 * Whether famfs.ko is loaded: @root/sys/module/famfs exists or
 * @root/proc/filesystems lists famfs.  @root is "" on a real system.
 */
bool kernel_famfs_available(const char *root);

/*
 * Loads the module: a path ending in ".ko" is loaded with finit_module(2),
 * anything else is a module name for modprobe(8).
 */
int kernel_famfs_load(const char *spec, struct famfs_err *err);

/*
 * An ioctl map with its extents, self-contained (the pointers point into
 * the struct itself once kernel_fmap_fix_pointers() ran).
 */
struct kernel_fmap {
	struct famfs_ioc_fmap fmap;
	struct famfs_ioc_simple_extent se[FAMFS_IOC_MAX_SIMPLE_EXTENTS];
	struct famfs_ioc_interleaved_ext ie;
	struct famfs_ioc_simple_extent strips[FAMFS_MAX_STRIPS];
};

/* The MAP_CREATE_V2 argument for the FILE entry @e. */
int kernel_fmap_from_entry(const struct famfs_log_entry *e, struct kernel_fmap *ret,
			   struct famfs_err *err);
/* For .meta/.superblock and .meta/.log: one simple extent. */
void kernel_fmap_meta(uint32_t file_type, uint64_t offset, uint64_t len, struct kernel_fmap *ret);
void kernel_fmap_fix_pointers(struct kernel_fmap *m);

/*
 * Compares what MAP_GET_V2 returned with what @want says; 0 when they are
 * the same map, -EILSEQ with the first difference in @err otherwise.
 */
int kernel_fmap_compare(const struct famfs_ioc_get_fmap *got, const struct kernel_fmap *want,
			struct famfs_err *err);

/*
 * A batch of sibling files for the MKFILES ioctl (kernel-mkfiles.c).  add
 * keeps @name and @map (its pointers fixed, see kernel_fmap_fix_pointers)
 * by pointer: both must live until clear; @tag is the caller's, handed
 * back by result.  add returns false when the
 * batch is full or @parent is another directory's; submit issues the ioctl
 * on @dirfd and returns the call's -errno (ENOTTY: a module without
 * MKFILES), after which each file's result (0 or -errno) is there for
 * result().
 */
#define KERNEL_MKFILES_MAX 256

struct kernel_mkfiles;

struct kernel_mkfiles *kernel_mkfiles_new(void);
void kernel_mkfiles_free(struct kernel_mkfiles *b);
uint32_t kernel_mkfiles_count(const struct kernel_mkfiles *b);
uint32_t kernel_mkfiles_parent(const struct kernel_mkfiles *b);
bool kernel_mkfiles_add(struct kernel_mkfiles *b, uint32_t parent, void *tag, const char *name,
			uint32_t mode, uint32_t uid, uint32_t gid, const struct kernel_fmap *map);
int kernel_mkfiles_submit(struct kernel_mkfiles *b, int dirfd);
int kernel_mkfiles_result(const struct kernel_mkfiles *b, uint32_t i, void **tag,
			  const struct kernel_fmap **map);
void kernel_mkfiles_clear(struct kernel_mkfiles *b);

/*
 * One namespace node to make in the mount, by value: the thread that makes
 * it never reads the namespace, which the replay may be growing meanwhile.
 */
struct kernel_item {
	uint32_t node;
	uint32_t parent;
	bool dir;
	uint32_t mode;           /* as the mount gets it: no write bits on clients */
	uint32_t uid;
	uint32_t gid;
	uint32_t name_off;       /* the last component of path */
	char path[FAMFS_MAX_PATHLEN];
	struct kernel_fmap map;  /* files; pointers fixed for where it lies */
};

/*
 * The items the kernel backend is to make, in log order, from the thread
 * that replays the log to the one that makes them (kernel-queue.c).  A
 * bounded ring: reserve hands out the next free slot, to be filled in
 * place and published with commit; next takes the oldest unread item;
 * release frees every item read so far but the last @keep (those of an
 * MKFILES batch not yet sent: the ioctl reads their names).
 * A queue made @threaded has the consumer on another thread: reserve
 * waits while the ring is full and next (with @wait) while it is empty
 * and not closed.  Without it neither waits: reserve returns NULL when
 * full.
 */
#define KERNEL_QUEUE_SLOTS 1024

struct kernel_queue;

struct kernel_queue *kernel_queue_new(bool threaded);
void kernel_queue_free(struct kernel_queue *q);
struct kernel_item *kernel_queue_reserve(struct kernel_queue *q);
void kernel_queue_commit(struct kernel_queue *q);
void kernel_queue_close(struct kernel_queue *q);
struct kernel_item *kernel_queue_next(struct kernel_queue *q, bool wait);
void kernel_queue_release(struct kernel_queue *q, uint32_t keep);

/* Reads @dir/{pte,pmd,pud}_fault_ct; -errno when any is unreadable or garbage. */
int kernel_read_fault_counters(const char *dir, uint64_t ret[3]);
/* The loaded module's counters (/sys/fs/famfs); zeros and -errno without it. */
int kernel_module_fault_counters(uint64_t ret[3]);
/* Turns the module's fault counting on (which clears the counters) unless it is on. */
void kernel_enable_fault_counting(void);

/*
 * Whether the famfs mount at @mountpoint in @mounts (a /proc/self/mounts
 * file) shows "dax_error": famfs.ko disabled it after a media failure.
 * Returns 1 with a reason naming the device offset and length the module
 * reported (dax_error_offset, dax_error_len) in @buf, 0 when the mount is
 * there without it or not there, -errno when @mounts cannot be read.
 */
int kernel_media_error(const char *mounts, const char *mountpoint, char *buf, size_t len);

/* Per-mount numbers of the last attach, for logs and the benchmark. */
struct kernel_stats {
	uint64_t created;      /* files and directories made in the mount */
	uint64_t existed;      /* already there and matching the log */
	uint64_t conflicts;    /* already there and different from the log */
	uint64_t errors;       /* could not be made */
	bool adopted;          /* the mount existed before this attach */
	uint64_t mount_usec;   /* mount(2) and the .meta files */
	uint64_t replay_usec;  /* instantiating the namespace */
	uint64_t worker_cpu_usec;  /* CPU time of the thread that made the nodes alongside the replay */
};

int kernel_stats_get(const struct backend_target *t, struct kernel_stats *ret);

/*
 * The mount-level part of `famfsctl check`: every regular file in the
 * mount has a map identical to its log entry, every file and directory
 * of the log is there, and nothing is there that the log does not know.
 * @fn is called once per problem; returns the number of problems or -errno.
 */
typedef void (*kernel_check_fn)(void *userdata, const char *code, int64_t index,
				const char *relpath, const char *message);
int kernel_check_mount(struct backend_target *t, kernel_check_fn fn, void *userdata, struct famfs_err *err);

/*
 * Who holds something in the mount at @mountpoint, as umount(2) would find
 * it busy: processes other than this one with an open file, a mapping or a
 * working or root directory on it (from /proc).  Returns how many, with
 * the first few as "pid N (comm)" in @buf.
 */
int kernel_mount_users(const char *mountpoint, char *buf, size_t len);

#endif
