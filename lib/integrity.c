// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device.h"
#include "hugepages.h"
#include "integrity.h"
#include "log.h"

/*
 * Workers claim chunks in order; the caller waits on the first chunk not
 * yet done.  One worker fewer than the CPUs: the caller's own walk is the
 * slow part of a check and needs a CPU of its own.  A read pass fills ring
 * slot (chunk % RING_CHUNKS); a worker waits for the caller to release a
 * slot's previous chunk before it reads over it.
 */
#define CHUNK_ENTRIES FAMFS_INTEGRITY_CHUNK_ENTRIES
#define RING_CHUNKS FAMFS_INTEGRITY_RING_CHUNKS
#define WORKERS_MAX 4
#define THREADED_MIN (4 * CHUNK_ENTRIES)

struct famfs_integrity_pass {
	const struct famfs_log_entry *entries;  /* the mapping */
	int fd;                                 /* >= 0: read into ring */
	uint64_t offset;                        /* of entry 0 in fd */
	struct famfs_log_entry *ring;           /* RING_CHUNKS * CHUNK_ENTRIES */
	uint8_t *codes;
	struct famfs_integrity_hook hook;
	uint64_t n, nchunks;
	atomic_uint_fast64_t next_chunk;    /* the next one to claim */
	atomic_uchar *chunk_done;
	uint64_t done_prefix;               /* the caller's: chunks [0, done_prefix) are done */
	uint64_t released_chunks;           /* under lock: chunks the caller is done with */
	pthread_mutex_t lock;
	pthread_cond_t chunk_finished;
	pthread_cond_t slot_freed;
	pthread_t workers[WORKERS_MAX];
	unsigned nworkers;
};

static struct famfs_log_entry *slot_of(const struct famfs_integrity_pass *p, uint64_t chunk)
{
	return &p->ring[(chunk % RING_CHUNKS) * CHUNK_ENTRIES];
}

/* Ring slots in use (for the entries or for what the hook leaves): a chunk waits for its slot. */
static bool bounded(const struct famfs_integrity_pass *p)
{
	return p->ring || p->hook.prepare;
}

static bool slot_free(const struct famfs_integrity_pass *p, uint64_t chunk)
{
	return chunk < p->released_chunks + RING_CHUNKS;
}

/* Reads entries [first, end) into their ring slot; what read(2) cannot give comes from the mapping. */
static const struct famfs_log_entry *stage_chunk(struct famfs_integrity_pass *p, uint64_t chunk,
						 uint64_t first, uint64_t end)
{
	struct famfs_log_entry *dst = slot_of(p, chunk);
	size_t len = (end - first) * sizeof(*dst), done = 0;

	while (done < len) {
		ssize_t r = pread(p->fd, (uint8_t *)dst + done, len - done,
				  (off_t)(p->offset + first * sizeof(*dst) + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		done += (size_t)r;
	}
	if (done < len)
		memcpy((uint8_t *)dst + done, (const uint8_t *)&p->entries[first] + done, len - done);
	return dst;
}

static void compute_chunk(struct famfs_integrity_pass *p, uint64_t chunk)
{
	uint64_t first = chunk * CHUNK_ENTRIES;
	uint64_t end = first + CHUNK_ENTRIES < p->n ? first + CHUNK_ENTRIES : p->n;
	const struct famfs_log_entry *e;

	if (p->ring) {
		e = stage_chunk(p, chunk, first, end) - first;
	} else {
		/* A log read for the first time: one call maps the chunk, not a fault per few pages. */
		famfs_device_prefault(&p->entries[first], (end - first) * sizeof(*p->entries));
		e = p->entries;
	}
	for (uint64_t i = first; i < end; i++)
		p->codes[i] = famfs_log_entry_check_integrity(&e[i], i, NULL);
	if (p->hook.prepare)
		p->hook.prepare(p->hook.arg, e, first, end);
	pthread_mutex_lock(&p->lock);
	atomic_store_explicit(&p->chunk_done[chunk], 1, memory_order_release);
	pthread_cond_broadcast(&p->chunk_finished);
	pthread_mutex_unlock(&p->lock);
}

/*
 * Claims and computes the next chunk; false when none is left, or when the
 * caller (@may_block false) would have to wait for its ring slot.
 */
static bool claim_and_compute(struct famfs_integrity_pass *p, bool may_block)
{
	uint64_t chunk;

	if (bounded(p)) {
		pthread_mutex_lock(&p->lock);
		/* Read again after each wake-up: the caller may have claimed it meanwhile. */
		while ((chunk = atomic_load(&p->next_chunk)) < p->nchunks && !slot_free(p, chunk) && may_block)
			pthread_cond_wait(&p->slot_freed, &p->lock);
		if (chunk < p->nchunks && slot_free(p, chunk))
			atomic_store(&p->next_chunk, chunk + 1);
		else
			chunk = UINT64_MAX;
		pthread_mutex_unlock(&p->lock);
	} else {
		chunk = atomic_fetch_add(&p->next_chunk, 1);
	}
	if (chunk >= p->nchunks)
		return false;
	compute_chunk(p, chunk);
	return true;
}

static void *worker(void *arg)
{
	while (claim_and_compute(arg, true))
		;
	return NULL;
}

uint64_t famfs_integrity_reach(void)
{
	return (RING_CHUNKS - 1) * CHUNK_ENTRIES;
}

static int alloc_ring(struct famfs_integrity_pass *p)
{
	size_t len = (size_t)RING_CHUNKS * CHUNK_ENTRIES * sizeof(*p->ring);
	void *ring;

	/* Not aligned_alloc: C11 wants its size a multiple of the alignment, and ASan holds it to that. */
	if (posix_memalign(&ring, 2u << 20, len) != 0)
		return -ENOMEM;
	p->ring = ring;
	famfs_advise_hugepages(p->ring, len);
	return 0;
}

int famfs_integrity_start(const struct famfs_log_entry *entries, uint64_t n, int fd, uint64_t offset,
			  uint8_t *codes, const struct famfs_integrity_hook *hook,
			  struct famfs_integrity_pass **ret)
{
	struct famfs_integrity_pass *p = calloc(1, sizeof(*p));
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned want;

	if (!p)
		return -ENOMEM;
	p->entries = entries;
	p->fd = fd;
	p->offset = offset;
	p->codes = codes;
	if (hook)
		p->hook = *hook;
	p->n = n;
	p->nchunks = (n + CHUNK_ENTRIES - 1) / CHUNK_ENTRIES;
	p->chunk_done = calloc(p->nchunks ? p->nchunks : 1, sizeof(*p->chunk_done));
	if (!p->chunk_done || (fd >= 0 && n > 0 && alloc_ring(p) < 0)) {
		free(p->chunk_done);
		free(p);
		return -ENOMEM;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->chunk_finished, NULL);
	pthread_cond_init(&p->slot_freed, NULL);
	atomic_init(&p->next_chunk, 0);
	if (n < THREADED_MIN) {
		/* The caller's waits compute a ring's chunks as it goes; a mapped log is done now. */
		while (!bounded(p) && claim_and_compute(p, false))
			;
	} else {
		want = cpus <= 2 ? 1 : cpus - 1 > WORKERS_MAX ? WORKERS_MAX : (unsigned)cpus - 1;
		while (p->nworkers < want && pthread_create(&p->workers[p->nworkers], NULL, worker, p) == 0)
			p->nworkers++;
	}
	*ret = p;
	return 0;
}

void famfs_integrity_wait(struct famfs_integrity_pass *p, uint64_t upto)
{
	uint64_t chunks = ((upto < p->n ? upto : p->n) + CHUNK_ENTRIES - 1) / CHUNK_ENTRIES;

	while (p->done_prefix < chunks) {
		if (atomic_load_explicit(&p->chunk_done[p->done_prefix], memory_order_acquire)) {
			p->done_prefix++;
			continue;
		}
		/* Not done: compute a chunk here if one is unclaimed (no thread started, or all busy). */
		if (claim_and_compute(p, false))
			continue;
		pthread_mutex_lock(&p->lock);
		while (!atomic_load_explicit(&p->chunk_done[p->done_prefix], memory_order_acquire))
			pthread_cond_wait(&p->chunk_finished, &p->lock);
		pthread_mutex_unlock(&p->lock);
	}
}

const struct famfs_log_entry *famfs_integrity_entry(const struct famfs_integrity_pass *p, uint64_t k)
{
	if (!p->ring)
		return &p->entries[k];
	return &slot_of(p, k / CHUNK_ENTRIES)[k % CHUNK_ENTRIES];
}

void famfs_integrity_release(struct famfs_integrity_pass *p, uint64_t below)
{
	uint64_t chunks = below >= p->n ? p->nchunks : below / CHUNK_ENTRIES;

	/* Only chunks seen done: a slot still being filled or read is not free. */
	if (chunks > p->done_prefix)
		chunks = p->done_prefix;
	if (!bounded(p) || chunks <= p->released_chunks)
		return;
	pthread_mutex_lock(&p->lock);
	p->released_chunks = chunks;
	pthread_cond_broadcast(&p->slot_freed);
	pthread_mutex_unlock(&p->lock);
}

void famfs_integrity_finish(struct famfs_integrity_pass *p)
{
	if (!p)
		return;
	while (p->done_prefix < p->nchunks) {
		famfs_integrity_release(p, p->done_prefix * CHUNK_ENTRIES);
		famfs_integrity_wait(p, (p->done_prefix + 1) * CHUNK_ENTRIES);
	}
	for (unsigned t = 0; t < p->nworkers; t++)
		pthread_join(p->workers[t], NULL);
	pthread_cond_destroy(&p->slot_freed);
	pthread_cond_destroy(&p->chunk_finished);
	pthread_mutex_destroy(&p->lock);
	free(p->ring);
	free(p->chunk_done);
	free(p);
}
