/* Wait queues: how an object (a pipe, a child's exit, a futex word) tells those waiting on it
 * that something changed. A waiter is a callback, so this layer knows nothing of tasks: the
 * kernel embeds waiters in its tasks and its callback re-runs the blocked syscall later
 * (blocking = retry, DESIGN.md §4). Wakers never run waiters' work directly. */
#ifndef VFS_WAITQ_H
#define VFS_WAITQ_H

#include <stdint.h>

struct waiter;
typedef void (*waiter_fn)(struct waiter *w, uint32_t events);

struct waiter {
	waiter_fn fn;
	uint32_t events; /* what the waiter cares about (POLLIN...), 0 for everything */
	struct waitq *q; /* NULL when not queued */
	struct waiter *next, **pprev;
};

struct waitq {
	struct waiter *head;
};

void waitq_add(struct waitq *q, struct waiter *w, waiter_fn fn, uint32_t events);
void waitq_remove(struct waiter *w);
/* Calls the callback of every waiter interested in EVENTS (0: all). Callbacks may dequeue
 * their own waiter but no other (the kernel's only marks the task runnable). */
void waitq_wake(struct waitq *q, uint32_t events);

/* For an object about to be freed: wakes every waiter and takes each off Q, so no waiter is
 * left pointing into freed memory. */
void waitq_detach_all(struct waitq *q);

#endif
