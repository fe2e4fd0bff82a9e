/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The integrity checks (seqnum and CRC) of a whole log, computed on
 * background threads while the caller walks the entries in order: the
 * CRCs, and the first read of the log, overlap the rest of a check instead
 * of coming before it.
 *
 * A log that read(2) can reach (an image file, a pmem block device) is read
 * a chunk at a time into a small ring of buffers that the caller then walks:
 * the first touch of each page of a fresh file mapping costs far more than
 * read(2)'s copy (about 2 us a page under a shadow-paging hypervisor), and
 * the ring stays in the cache for the caller.  A device-DAX log has no
 * read(2) and is used in place.
 */
#ifndef FAMFS_INTEGRITY_H
#define FAMFS_INTEGRITY_H

#include <stdint.h>

#include "omf.h"

struct famfs_integrity_pass;

/*
 * Entries go through a pass in chunks; with a ring (or a hook), chunk c
 * occupies slot c % FAMFS_INTEGRITY_RING_CHUNKS until the caller releases it.
 */
#define FAMFS_INTEGRITY_CHUNK_ENTRIES 2048
#define FAMFS_INTEGRITY_RING_CHUNKS 4

/*
 * Work the caller wants done per chunk on the thread that read it, once
 * codes[first, end) are known: @e[k] is entry k for first <= k < end (in the
 * ring or the mapping), readable until the chunk is released.  Whatever it
 * writes for slot (first / CHUNK_ENTRIES) % RING_CHUNKS is the caller's to
 * read once famfs_integrity_wait() covers the chunk, and is not overwritten
 * before the caller releases it.
 */
struct famfs_integrity_hook {
	void (*prepare)(void *arg, const struct famfs_log_entry *e, uint64_t first, uint64_t end);
	void *arg;
};

/*
 * Starts computing codes[k] = famfs_log_entry_check_integrity(entry k, k)
 * for k < @n, of the @n entries mapped at @entries.  With @fd >= 0, the
 * entries are read from @fd, entry 0 at byte @offset, and a chunk that
 * cannot be read is copied from the mapping instead.  -ENOMEM only when the
 * pass cannot be allocated; threads that cannot start leave their work to
 * famfs_integrity_wait().  @hook (may be NULL) is called for each chunk.
 */
int famfs_integrity_start(const struct famfs_log_entry *entries, uint64_t n, int fd, uint64_t offset,
			  uint8_t *codes, const struct famfs_integrity_hook *hook,
			  struct famfs_integrity_pass **ret);

/*
 * Returns once codes[0 .. @upto) are known (all of them for @upto >= @n).
 * With a ring or a hook, @upto is at most famfs_integrity_reach() past the first
 * entry not yet released.
 */
void famfs_integrity_wait(struct famfs_integrity_pass *p, uint64_t upto);

/* Entry @k, which famfs_integrity_wait() has made ready and which is not released. */
const struct famfs_log_entry *famfs_integrity_entry(const struct famfs_integrity_pass *p, uint64_t k);

/* The caller is done with entries [0, @below): their buffers may be reused. */
void famfs_integrity_release(struct famfs_integrity_pass *p, uint64_t below);

/* How many entries past the first unreleased one a wait may ask for. */
uint64_t famfs_integrity_reach(void);

/* Waits for every code, stops the threads and frees the pass; NULL does nothing. */
void famfs_integrity_finish(struct famfs_integrity_pass *p);

#endif
