/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CPU cache maintenance for memory that other hosts share.  Shared CXL
 * memory need not be coherent between hosts, so a writer flushes what it
 * wrote and a reader invalidates what it is about to read.  On an image file
 * or a coherent device this is merely redundant.
 */
#ifndef FAMFS_CACHE_H
#define FAMFS_CACHE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Write back the cache lines covering [p, p+len) and fence (SFENCE).  On
 * x86-64 the instruction is chosen once through CPUID: CLWB (leaf 7 EBX
 * bit 24) where the CPU has it, which writes a line back and may keep it,
 * else CLFLUSHOPT (bit 23), else CLFLUSH, which every x86-64 has.
 */
void famfs_cache_flush(const void *p, size_t len);

/* The instruction and the fence famfs_cache_flush() uses on this CPU, for people: "clwb", "sfence". */
const char *famfs_cache_flush_instruction(void);
const char *famfs_cache_flush_fence(void);

/*
 * Drop the cache lines covering [p, p+len) so the next read goes to memory
 * (CLFLUSHOPT, else CLFLUSH: CLWB may keep the line; then MFENCE).
 */
void famfs_cache_invalidate(const void *p, size_t len);

#endif
