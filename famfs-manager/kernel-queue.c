// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel backend's queue of nodes to make in the mount (see kernel.h).
 * At attach the replay produces on the main thread while a worker makes
 * the files, so the two overlap.  Each side sleeps only on an empty or a
 * full ring, and is woken only once there is a useful amount to do: a
 * wake-up per item would cost a context switch per file.
 *
 * Each side also works from its own copy of the other's position and
 * takes the lock only every PUBLISH_EVERY items, or when its copy says it
 * must wait: under emulation (and across CPUs) a lock round trip per item
 * on both sides cost more than filling the item.
 */
#include <pthread.h>
#include <stdlib.h>

#include "kernel.h"

/* A sleeping consumer is woken once this many items wait (or at close). */
#define WAKE_CONSUMER_AT 64
/* A producer waiting on a full ring is woken once this many slots are free. */
#define WAKE_PRODUCER_AT (KERNEL_QUEUE_SLOTS / 4)
/* A threaded queue's sides share their progress this often; far below both of the above. */
#define PUBLISH_EVERY 16

struct kernel_queue {
	pthread_mutex_t lock;
	pthread_cond_t readable;
	pthread_cond_t writable;
	bool threaded;
	bool closed;         /* set by the producer, read by the consumer under the lock */
	/* Shared: each written under the lock by one side, which may also read it unlocked. */
	bool consumer_asleep;
	bool producer_asleep;
	uint64_t head;       /* items [0, head) are published */
	uint64_t released;   /* slots of items before this are free */
	/* The producer's own: */
	uint64_t filled;     /* items [0, filled) are committed, published or not */
	uint64_t seen_released;
	/* The consumer's own: */
	uint64_t next;       /* the consumer's next item */
	uint64_t seen_head;
	uint64_t freed;      /* released, published or not */
	struct kernel_item items[KERNEL_QUEUE_SLOTS];
};

struct kernel_queue *kernel_queue_new(bool threaded)
{
	struct kernel_queue *q = malloc(sizeof(*q));

	if (!q)
		return NULL;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->readable, NULL);
	pthread_cond_init(&q->writable, NULL);
	q->threaded = threaded;
	q->closed = false;
	q->consumer_asleep = false;
	q->producer_asleep = false;
	q->head = q->released = 0;
	q->filled = q->seen_released = 0;
	q->next = q->seen_head = q->freed = 0;
	return q;
}

void kernel_queue_free(struct kernel_queue *q)
{
	if (!q)
		return;
	pthread_cond_destroy(&q->writable);
	pthread_cond_destroy(&q->readable);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

/* Without a second thread the consumer must see each item at once. */
static uint64_t publish_every(const struct kernel_queue *q)
{
	return q->threaded ? PUBLISH_EVERY : 1;
}

/* Producer, under the lock: makes every committed item visible. */
static void publish_head(struct kernel_queue *q)
{
	q->head = q->filled;
	if (q->consumer_asleep && q->head - q->next >= WAKE_CONSUMER_AT)
		pthread_cond_signal(&q->readable);
}

/* Consumer, under the lock: frees every slot released so far. */
static void publish_released(struct kernel_queue *q)
{
	q->released = q->freed;
	if (q->producer_asleep && KERNEL_QUEUE_SLOTS - (q->head - q->released) >= WAKE_PRODUCER_AT)
		pthread_cond_signal(&q->writable);
}

struct kernel_item *kernel_queue_reserve(struct kernel_queue *q)
{
	struct kernel_item *it = NULL;

	if (q->filled - q->seen_released < KERNEL_QUEUE_SLOTS && !q->closed)
		return &q->items[q->filled % KERNEL_QUEUE_SLOTS];
	pthread_mutex_lock(&q->lock);
	publish_head(q);
	if (q->head - q->released == KERNEL_QUEUE_SLOTS && q->threaded) {
		while (KERNEL_QUEUE_SLOTS - (q->head - q->released) < WAKE_PRODUCER_AT) {
			q->producer_asleep = true;
			pthread_cond_wait(&q->writable, &q->lock);
		}
		q->producer_asleep = false;
	}
	q->seen_released = q->released;
	if (q->head - q->released < KERNEL_QUEUE_SLOTS && !q->closed)
		it = &q->items[q->head % KERNEL_QUEUE_SLOTS];
	pthread_mutex_unlock(&q->lock);
	return it;
}

void kernel_queue_commit(struct kernel_queue *q)
{
	q->filled++;
	if (q->filled - q->head < publish_every(q))
		return;
	pthread_mutex_lock(&q->lock);
	publish_head(q);
	q->seen_released = q->released;
	pthread_mutex_unlock(&q->lock);
}

void kernel_queue_close(struct kernel_queue *q)
{
	pthread_mutex_lock(&q->lock);
	publish_head(q);
	q->closed = true;
	pthread_cond_signal(&q->readable);
	pthread_mutex_unlock(&q->lock);
}

struct kernel_item *kernel_queue_next(struct kernel_queue *q, bool wait)
{
	if (q->next == q->seen_head) {
		pthread_mutex_lock(&q->lock);
		publish_released(q);
		if (wait && q->threaded) {
			while (q->next == q->head && !q->closed) {
				q->consumer_asleep = true;
				pthread_cond_wait(&q->readable, &q->lock);
			}
			q->consumer_asleep = false;
		}
		q->seen_head = q->head;
		pthread_mutex_unlock(&q->lock);
		if (q->next == q->seen_head)
			return NULL;
	}
	return &q->items[q->next++ % KERNEL_QUEUE_SLOTS];
}

void kernel_queue_release(struct kernel_queue *q, uint32_t keep)
{
	if (q->next - q->freed > keep)
		q->freed = q->next - keep;
	if (q->freed - q->released < publish_every(q))
		return;
	pthread_mutex_lock(&q->lock);
	publish_released(q);
	pthread_mutex_unlock(&q->lock);
}
