/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Making the namespace's nodes in the kernel backend's mount
 * (kernel-instantiate.c).  At attach the nodes go through a queue, on a
 * fresh mount to a worker thread that makes them while the replay goes on;
 * after attach each node is made when it is added.
 */
#ifndef FAMFS_MANAGER_KERNEL_INSTANTIATE_H
#define FAMFS_MANAGER_KERNEL_INSTANTIATE_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel.h"

struct kernel_maker;

/* Makes @t's nodes in the mount whose root is @root (not the maker's to close). */
struct kernel_maker *kernel_maker_new(struct backend_target *t, int root);
/* Stops the worker first, if one runs; accepts NULL; returns NULL. */
struct kernel_maker *kernel_maker_free(struct kernel_maker *mk);

/*
 * Readies the attach queue; with @overlap (and a second CPU) a worker
 * makes what kernel_maker_feed() queues until kernel_maker_stop().
 */
int kernel_maker_start(struct kernel_maker *mk, bool overlap, struct famfs_err *err);
bool kernel_maker_streaming(const struct kernel_maker *mk);
/* Queues @node (@e: its entry as the replay validated it, or NULL) for the worker. */
int kernel_maker_feed(struct kernel_maker *mk, uint32_t node, const struct famfs_log_entry *e,
		      struct famfs_err *err);
/* Waits for the worker, if one runs, to make everything queued. */
void kernel_maker_stop(struct kernel_maker *mk);

/* Without a worker: makes nodes [@first, @end), reporting failures, and ends the attach. */
void kernel_maker_make_range(struct kernel_maker *mk, uint32_t first, uint32_t end);

/* After attach: makes @node now and returns the result. */
int kernel_maker_make(struct kernel_maker *mk, uint32_t node, const struct famfs_log_entry *e,
		      struct famfs_err *err);

/* @n nodes found in the mount as the log says without looking (the adopt record's). */
void kernel_maker_count_existing(struct kernel_maker *mk, uint64_t n);
/* The created, existed, conflicts and errors counters of @ret, and the worker's CPU time once it is joined. */
void kernel_maker_counters(const struct kernel_maker *mk, struct kernel_stats *ret);
/* User and system CPU time of the calling thread or process (getrusage's RUSAGE_*), in microseconds; 0 if unknown. */
uint64_t kernel_cpu_usec(int who);

#endif
