/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CPU cache maintenance for memory that other hosts share.  Shared CXL
 * memory need not be coherent between hosts, so a writer flushes what it
 * wrote and a reader invalidates what it is about to read.  On an image file
 * or a coherent device this is merely redundant.
 */
#ifndef FAMFS_CACHE_H
#define FAMFS_CACHE_H

#include <stddef.h>

/* Write back the cache lines covering [p, p+len) and fence. */
void famfs_cache_flush(const void *p, size_t len);

/* Drop the cache lines covering [p, p+len) so the next read goes to memory. */
void famfs_cache_invalidate(const void *p, size_t len);

#endif
