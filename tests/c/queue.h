/* A growable queue of handles (calls or approvals) that foreign threads
 * complete, and a small deterministic random generator: shared by the stress
 * test and the soak. Needs <pthread.h>, <stdlib.h> (support.h includes it). */
#ifndef CAPSTAN_TEST_QUEUE_H
#define CAPSTAN_TEST_QUEUE_H

#include <pthread.h>
#include <stdlib.h>

/* A growable queue of handles (calls or approvals) for the foreign threads. */
struct queue {
    pthread_mutex_t lock;
    pthread_cond_t ready;
    void **items;
    size_t head, tail, cap; /* head, tail: positions; tail - head items queued */
    int closed;
};

static inline void q_init(struct queue *q) {
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->ready, NULL);
    q->cap = 1024;
    q->items = calloc(q->cap, sizeof(void *));
    q->head = q->tail = 0;
    q->closed = 0;
}

static inline void q_push(struct queue *q, void *item) {
    pthread_mutex_lock(&q->lock);
    if (q->tail - q->head == q->cap) { /* full: double, unwrapping the ring */
        void **bigger = calloc(q->cap * 2, sizeof(void *));
        for (size_t i = 0; i < q->cap; i++) bigger[i] = q->items[(q->head + i) % q->cap];
        free(q->items);
        q->items = bigger;
        q->tail -= q->head;
        q->head = 0;
        q->cap *= 2;
    }
    q->items[q->tail++ % q->cap] = item;
    pthread_cond_signal(&q->ready);
    pthread_mutex_unlock(&q->lock);
}

static inline void *q_pop(struct queue *q) {
    pthread_mutex_lock(&q->lock);
    while (q->head == q->tail && !q->closed) pthread_cond_wait(&q->ready, &q->lock);
    void *item = q->head == q->tail ? NULL : q->items[q->head++ % q->cap];
    pthread_mutex_unlock(&q->lock);
    return item;
}

static inline void q_close(struct queue *q) {
    pthread_mutex_lock(&q->lock);
    q->closed = 1;
    pthread_cond_broadcast(&q->ready);
    pthread_mutex_unlock(&q->lock);
}

/* A linear congruential generator: the same sequence for the same seed. */
static inline unsigned next_rand(unsigned *s) {
    *s = *s * 1103515245u + 12345u;
    return (*s >> 16) & 0x7fff;
}

#endif
