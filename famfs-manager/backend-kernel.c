// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel backend: famfs.ko serves the files.  This file is its ops
 * table and the order of things; each part has its own file:
 *
 *   kernel-mount.c        mount (or adopt), .meta, the .meta view, media errors, unmount
 *   kernel-instantiate.c  making the namespace's nodes in the mount
 *   kernel-adopt.c        the record that lets a restarted daemon trust an adopted mount
 *   kernel-check.c        the mount compared with the log, for famfsctl check
 *   kernel-fmap.c         the ioctl maps, built from log entries and compared
 *   kernel-module.c       famfs.ko itself: detection, loading, fault counters
 *   kernel-mkfiles.c, kernel-queue.c   the MKFILES batch and the attach queue
 *
 * The daemon reads and appends the log through the .meta files' DAX
 * mappings once they exist, so the mount and .meta come first
 * (kernel_prepare, before the replay); on a fresh mount a worker then makes
 * each node as the replay produces it, and kernel_attach, after the replay,
 * waits for it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "kernel-adopt.h"
#include "kernel-instantiate.h"
#include "kernel-mount.h"
#include "kernel.h"
#include "logging.h"

struct kstate {
	struct kernel_mount mount;
	struct kernel_maker *maker;
	struct kernel_adopt *adopt;   /* NULL: no record */
	bool ready;                   /* attach done; instantiate goes to the mount */
	uint32_t trusted;             /* nodes this attach took from the record */
	struct kernel_stats st;       /* the counters are the maker's */
	uint64_t t_prepared;          /* when the mount and .meta were done */
	uint64_t cpu_prepared;        /* and the CPU time of the thread that replays, then */
	uint64_t process_cpu_prepared; /* and of the whole process */
};

static uint64_t mono_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void release(struct backend_target *t, struct kstate *ks)
{
	bool unmounted;

	kernel_maker_free(ks->maker);
	unmounted = kernel_mount_release(&ks->mount, t);
	/*
	 * The record describes the mount: it goes with it, and stays with a
	 * mount left for a restart, whose next instance then knows the mount
	 * for its own (and unmounts it on a stop) and trusts what it made.
	 */
	kernel_adopt_close(ks->adopt, unmounted);
	free(ks);
	t->data = NULL;
	t->adopted = false;
}

static int prepare(struct backend_target *t, struct kstate *ks, struct famfs_err *err)
{
	uint64_t t0 = mono_usec();
	int r;

	r = kernel_mount_open(&ks->mount, t, err);
	if (r < 0)
		return r;
	ks->st.adopted = ks->mount.adopted;
	r = kernel_mount_make_meta(&ks->mount, t, err);
	if (r < 0)
		return r;
	r = kernel_mount_use_meta(&ks->mount, t, err);
	if (r < 0)
		return r;
	kernel_enable_fault_counting();
	ks->t_prepared = mono_usec();
	ks->cpu_prepared = kernel_cpu_usec(RUSAGE_THREAD);
	ks->process_cpu_prepared = kernel_cpu_usec(RUSAGE_SELF);
	ks->st.mount_usec = ks->t_prepared - t0;
	ks->adopt = kernel_adopt_open(ks->mount.root, t->fs, t->uuid);
	if (ks->st.adopted && kernel_adopt_names_mount(ks->adopt))
		ks->mount.mounted = true;
	t->adopted = ks->st.adopted;
	if (t->adopted)
		manager_log("%s: famfs mount adopted %s in %" PRIu64 " ms; compared with the log once it is replayed",
			    t->mountpoint, t->device, ks->st.mount_usec / 1000);
	ks->maker = kernel_maker_new(t, ks->mount.root);
	if (!ks->maker)
		return famfs_err_set(err, -ENOMEM, "out of memory");
	return kernel_maker_start(ks->maker, !ks->st.adopted, err);
}

/*
 * Before the replay at attach: mount (or adopt the mount already there),
 * make the .meta files and read the log through them from now on.  On a
 * mount of our own, which holds nothing yet, a worker then makes each node
 * as the replay produces it, so the replay and the file creation overlap;
 * kernel_attach waits for it.  An adopted mount is compared with its
 * record once the whole log is known, in kernel_attach.
 */
static int kernel_prepare(struct backend_target *t, struct famfs_err *err)
{
	struct kstate *ks;
	int r;

	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return famfs_err_set(err, -ENOMEM, "out of memory");
	ks->mount.root = -1;
	t->data = ks;
	r = prepare(t, ks, err);
	if (r < 0)
		release(t, ks);
	return r;
}

static int kernel_instantiate(struct backend_target *t, uint32_t node, const struct famfs_log_entry *e,
			      struct famfs_err *err)
{
	struct kstate *ks = t->data;
	bool next;
	int r;

	if (!ks || node == FAMFS_NS_ROOT || !famfs_ns_node(famfs_fs_namespace(t->fs), node))
		return 0;
	/* The replay at attach: the worker makes it. */
	if (kernel_maker_streaming(ks->maker))
		return kernel_maker_feed(ks->maker, node, e, err);
	/* Before the mount is ready, attach instantiates the whole namespace. */
	if (!ks->ready)
		return 0;
	next = kernel_adopt_is_next(ks->adopt, node);
	r = kernel_maker_make(ks->maker, node, e, err);
	kernel_adopt_advance(ks->adopt, node, next && r >= 0);
	return r;
}

/* After the replay; kernel_prepare succeeded before it. */
static int kernel_attach(struct backend_target *t, struct famfs_err *err)
{
	struct kstate *ks = t->data;
	uint64_t t_replayed = mono_usec(), t_start;
	uint32_t nnodes = 0, first = 1;
	struct famfs_ns *ns;
	bool overlapped;

	if (!ks)
		return famfs_err_set(err, -EINVAL, "attach without prepare");
	/* Streaming, the instantiation began with the replay. */
	overlapped = kernel_maker_streaming(ks->maker);
	t_start = overlapped ? ks->t_prepared : t_replayed;
	/* Node ids grow in log order, so parents come before their children. */
	ns = famfs_fs_namespace(t->fs);
	while (famfs_ns_node(ns, nnodes))
		nnodes++;
	if (overlapped) {
		kernel_maker_stop(ks->maker);
	} else {
		if (ks->st.adopted) {
			ks->trusted = kernel_adopt_trusted(ks->adopt, nnodes);
			if (ks->trusted > 1) {
				/* Nodes [1, trusted) are in the mount as the log says. */
				first = ks->trusted;
				kernel_maker_count_existing(ks->maker, ks->trusted - 1);
			}
		}
		kernel_maker_make_range(ks->maker, first, nnodes);
	}
	kernel_maker_counters(ks->maker, &ks->st);
	kernel_adopt_record(ks->adopt, ks->st.conflicts || ks->st.errors ? 0 : nnodes);
	ks->st.replay_usec = mono_usec() - t_start;
	ks->ready = true;
	manager_log("%s: famfs %s %s in %" PRIu64 " ms: %" PRIu64 " made, %" PRIu64 " already there, %" PRIu64
		    " conflicts, %" PRIu64 " errors (instantiated in %" PRIu64 " us; %" PRIu32
		    " trusted from the previous attach's record)",
		    t->mountpoint, ks->st.adopted ? "mount adopted" : "mounted",
		    ks->st.adopted ? "and compared with the log" : t->device,
		    (mono_usec() - ks->t_prepared + ks->st.mount_usec) / 1000, ks->st.created, ks->st.existed,
		    ks->st.conflicts, ks->st.errors, ks->st.replay_usec, ks->trusted > 1 ? ks->trusted - 1 : 0);
	if (overlapped)
		manager_log("%s: the instantiation ran alongside the replay, which took %" PRIu64 " us of it; "
			    "CPU time: %" PRIu64 " us replaying, %" PRIu64 " us instantiating, %" PRIu64
			    " us for the whole process (the attach-time check's threads included)",
			    t->mountpoint, t_replayed - ks->t_prepared, kernel_cpu_usec(RUSAGE_THREAD) - ks->cpu_prepared,
			    ks->st.worker_cpu_usec, kernel_cpu_usec(RUSAGE_SELF) - ks->process_cpu_prepared);
	return 0;
}

static void kernel_detach(struct backend_target *t)
{
	struct kstate *ks = t->data;

	if (ks)
		release(t, ks);
}

static int kernel_open_data(struct backend_target *t, uint32_t node, bool writable, int *ret_fd,
			    struct famfs_err *err)
{
	const struct famfs_ns_node *n = famfs_ns_node(famfs_fs_namespace(t->fs), node);
	struct kstate *ks = t->data;
	int fd;

	if (!ks || !ks->ready || !n)
		return famfs_err_set(err, -ENODEV, "%s is not mounted", t->mountpoint);
	if (writable && !famfs_fs_is_master(t->fs))
		return famfs_err_set(err, -EROFS, "\"%s\": clients do not write", n->path);
	fd = kernel_open_beneath(ks->mount.root, n->path, (writable ? O_RDWR : O_RDONLY) | O_NOCTTY, 0);
	if (fd < 0)
		return famfs_err_set(err, fd, "cannot open %s/%s: %s", t->mountpoint, n->path, strerror(-fd));
	*ret_fd = fd;
	return 0;
}

static int kernel_in_use(struct backend_target *t, char *buf, size_t len)
{
	return kernel_ready_root(t) < 0 ? 0 : kernel_mount_users(t->mountpoint, buf, len);
}

static const uint8_t *kernel_medium_view(struct backend_target *t, uint64_t *readable)
{
	const struct kstate *ks = t->data;

	/* Only once the library reads through it too. */
	if (!ks || !ks->mount.view_in_use)
		return NULL;
	*readable = ks->mount.view_len;
	return ks->mount.view;
}

static int kernel_mount_media_error(struct backend_target *t, char *buf, size_t len)
{
	const struct kstate *ks = t->data;

	if (!ks || !ks->ready)
		return 0;
	return kernel_media_error("/proc/self/mounts", t->mountpoint, buf, len);
}

const struct backend_ops backend_kernel = {
	.name = "kernel",
	.prepare = kernel_prepare,
	.attach = kernel_attach,
	.instantiate = kernel_instantiate,
	.open_data = kernel_open_data,
	.medium_view = kernel_medium_view,
	.media_error = kernel_mount_media_error,
	.in_use = kernel_in_use,
	.detach = kernel_detach,
	.data_fd_is_file = true,
};

int kernel_ready_root(const struct backend_target *t)
{
	const struct kstate *ks = t->ops == &backend_kernel ? t->data : NULL;

	return ks && ks->ready ? ks->mount.root : -1;
}

int kernel_stats_get(const struct backend_target *t, struct kernel_stats *ret)
{
	const struct kstate *ks = t->ops != &backend_kernel ? NULL : t->data;

	if (!ks)
		return -ENODEV;
	*ret = ks->st;
	kernel_maker_counters(ks->maker, ret);
	return 0;
}
