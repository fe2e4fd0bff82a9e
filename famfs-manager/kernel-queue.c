// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel backend's queue of nodes to make in the mount (see kernel.h).
 * At attach the replay produces on the main thread while a worker makes
 * the files, so the two overlap.  Each side sleeps only on an empty or a
 * full ring, and is woken only once there is a useful amount to do: a
 * wake-up per item would cost a context switch per file.
 */
#include <pthread.h>
#include <stdlib.h>

#include "kernel.h"

/* A sleeping consumer is woken once this many items wait (or at close). */
#define WAKE_CONSUMER_AT 64
/* A producer waiting on a full ring is woken once this many slots are free. */
#define WAKE_PRODUCER_AT (KERNEL_QUEUE_SLOTS / 4)

struct kernel_queue {
	pthread_mutex_t lock;
	pthread_cond_t readable;
	pthread_cond_t writable;
	bool threaded;
	bool closed;
	bool consumer_asleep;
	bool producer_asleep;
	uint64_t head;       /* items [0, head) are published */
	uint64_t next;       /* the consumer's next item */
	uint64_t released;   /* slots of items before this are free */
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
	q->head = q->next = q->released = 0;
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

struct kernel_item *kernel_queue_reserve(struct kernel_queue *q)
{
	struct kernel_item *it = NULL;

	pthread_mutex_lock(&q->lock);
	if (q->head - q->released == KERNEL_QUEUE_SLOTS && q->threaded) {
		while (KERNEL_QUEUE_SLOTS - (q->head - q->released) < WAKE_PRODUCER_AT) {
			q->producer_asleep = true;
			pthread_cond_wait(&q->writable, &q->lock);
		}
		q->producer_asleep = false;
	}
	if (q->head - q->released < KERNEL_QUEUE_SLOTS && !q->closed)
		it = &q->items[q->head % KERNEL_QUEUE_SLOTS];
	pthread_mutex_unlock(&q->lock);
	return it;
}

void kernel_queue_commit(struct kernel_queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->head++;
	if (q->consumer_asleep && q->head - q->next >= WAKE_CONSUMER_AT)
		pthread_cond_signal(&q->readable);
	pthread_mutex_unlock(&q->lock);
}

void kernel_queue_close(struct kernel_queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->closed = true;
	pthread_cond_signal(&q->readable);
	pthread_mutex_unlock(&q->lock);
}

struct kernel_item *kernel_queue_next(struct kernel_queue *q, bool wait)
{
	struct kernel_item *it = NULL;

	pthread_mutex_lock(&q->lock);
	if (wait && q->threaded) {
		while (q->next == q->head && !q->closed) {
			q->consumer_asleep = true;
			pthread_cond_wait(&q->readable, &q->lock);
		}
		q->consumer_asleep = false;
	}
	if (q->next < q->head)
		it = &q->items[q->next++ % KERNEL_QUEUE_SLOTS];
	pthread_mutex_unlock(&q->lock);
	return it;
}

void kernel_queue_release(struct kernel_queue *q, uint32_t keep)
{
	pthread_mutex_lock(&q->lock);
	if (q->next - q->released > keep)
		q->released = q->next - keep;
	if (q->producer_asleep && KERNEL_QUEUE_SLOTS - (q->head - q->released) >= WAKE_PRODUCER_AT)
		pthread_cond_signal(&q->writable);
	pthread_mutex_unlock(&q->lock);
}
