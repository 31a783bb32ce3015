/* Wait queue lists: doubly linked through pprev so a waiter can leave in O(1) from any queue. */
#include "vfs/waitq.h"

#include <stddef.h>

void waitq_add(struct waitq *q, struct waiter *w, waiter_fn fn, uint32_t events)
{
	w->fn = fn;
	w->events = events;
	w->q = q;
	w->next = q->head;
	w->pprev = &q->head;
	if (q->head)
		q->head->pprev = &w->next;
	q->head = w;
}

void waitq_remove(struct waiter *w)
{
	if (!w->q)
		return;
	*w->pprev = w->next;
	if (w->next)
		w->next->pprev = w->pprev;
	w->q = NULL;
	w->next = NULL;
	w->pprev = NULL;
}

void waitq_wake(struct waitq *q, uint32_t events)
{
	struct waiter *w = q->head, *next;

	for (; w; w = next) {
		next = w->next; /* the callback may dequeue W */
		if (!events || !w->events || (w->events & events))
			w->fn(w, events);
	}
}

void waitq_detach_all(struct waitq *q)
{
	waitq_wake(q, 0);
	while (q->head)
		waitq_remove(q->head);
}
