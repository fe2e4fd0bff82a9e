// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "device.h"
#include "integrity.h"
#include "log.h"

/*
 * Workers claim chunks in order; the caller waits on the first chunk not
 * yet done.  One worker fewer than the CPUs: the caller's own walk is the
 * slow part of a check and needs a CPU of its own.
 */
#define CHUNK_ENTRIES 2048
#define WORKERS_MAX 4
#define THREADED_MIN (4 * CHUNK_ENTRIES)

struct famfs_integrity_pass {
	const struct famfs_log_entry *entries;
	uint8_t *codes;
	uint64_t n, nchunks;
	atomic_uint_fast64_t next_chunk;    /* the next one to claim */
	atomic_uchar *chunk_done;
	uint64_t done_prefix;               /* the caller's: chunks [0, done_prefix) are done */
	pthread_mutex_t lock;
	pthread_cond_t chunk_finished;
	pthread_t workers[WORKERS_MAX];
	unsigned nworkers;
};

static void compute_chunk(struct famfs_integrity_pass *p, uint64_t chunk)
{
	uint64_t first = chunk * CHUNK_ENTRIES;
	uint64_t end = first + CHUNK_ENTRIES < p->n ? first + CHUNK_ENTRIES : p->n;

	/* A log read for the first time: one call maps the chunk, not a fault per few pages. */
	famfs_device_prefault(&p->entries[first], (end - first) * sizeof(*p->entries));
	for (uint64_t i = first; i < end; i++)
		p->codes[i] = famfs_log_entry_check_integrity(&p->entries[i], i, NULL);
	pthread_mutex_lock(&p->lock);
	atomic_store_explicit(&p->chunk_done[chunk], 1, memory_order_release);
	pthread_cond_broadcast(&p->chunk_finished);
	pthread_mutex_unlock(&p->lock);
}

/* Claims and computes chunks until none is left; false when there was none. */
static bool claim_and_compute(struct famfs_integrity_pass *p)
{
	uint64_t chunk = atomic_fetch_add(&p->next_chunk, 1);

	if (chunk >= p->nchunks)
		return false;
	compute_chunk(p, chunk);
	return true;
}

static void *worker(void *arg)
{
	while (claim_and_compute(arg))
		;
	return NULL;
}

int famfs_integrity_start(const struct famfs_log_entry *entries, uint64_t n, uint8_t *codes,
			  struct famfs_integrity_pass **ret)
{
	struct famfs_integrity_pass *p = calloc(1, sizeof(*p));
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned want;

	if (!p)
		return -ENOMEM;
	p->entries = entries;
	p->codes = codes;
	p->n = n;
	p->nchunks = (n + CHUNK_ENTRIES - 1) / CHUNK_ENTRIES;
	p->chunk_done = calloc(p->nchunks ? p->nchunks : 1, sizeof(*p->chunk_done));
	if (!p->chunk_done) {
		free(p);
		return -ENOMEM;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->chunk_finished, NULL);
	atomic_init(&p->next_chunk, 0);
	if (n < THREADED_MIN) {
		while (claim_and_compute(p))
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
		if (claim_and_compute(p))
			continue;
		pthread_mutex_lock(&p->lock);
		while (!atomic_load_explicit(&p->chunk_done[p->done_prefix], memory_order_acquire))
			pthread_cond_wait(&p->chunk_finished, &p->lock);
		pthread_mutex_unlock(&p->lock);
	}
}

void famfs_integrity_finish(struct famfs_integrity_pass *p)
{
	if (!p)
		return;
	famfs_integrity_wait(p, p->n);
	for (unsigned t = 0; t < p->nworkers; t++)
		pthread_join(p->workers[t], NULL);
	pthread_cond_destroy(&p->chunk_finished);
	pthread_mutex_destroy(&p->lock);
	free(p->chunk_done);
	free(p);
}
