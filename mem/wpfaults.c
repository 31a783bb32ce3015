/* Write tracking of a stub's address space when the Sentry cannot read the stub's pagemap (a
 * confined Sentry: the stub is not dumpable and its memory belongs to a user namespace where
 * the Sentry holds no capability, so /proc/PID/pagemap is refused and PAGEMAP_SCAN cannot
 * find what the asynchronous write-protection recorded). The stub's userfaultfd is then set up
 * for synchronous write-protection: the first write to a protected page after a base stops the
 * writing thread with a fault message, which a thread of the Sentry answers here by noting the
 * WPQ_BLOCK-aligned block around the page and lifting the protection of that block. A harvest
 * takes the noted blocks and protects them again (docs/checkpoint.md, "Write tracking under
 * confinement"). A block rather than a page because every fault is a round trip the guest
 * waits for: a page at a time, writing 256 MiB after a restore cost it a second more.
 *
 * The order keeps every write seen: a block is noted before its protection is lifted, and the
 * write it stopped only lands after that, so a write is either in the blocks a harvest takes, or
 * lands after the harvest (and is noted for the next one). */
#include "mem/internal.h"

#include <errno.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

struct wpq {
	int uffd;
	uint64_t *addr; /* page addresses noted since the last take */
	size_t n, cap;
	bool lost; /* a page could not be noted: everything counts as written */
	bool dead; /* its descriptor reported an error: no longer polled */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t acked;
	bool running;
	int wake;	/* an eventfd: the set changed */
	struct wpq **q; /* the set the thread watches */
	size_t nq, cap;
	uint64_t gen, gen_seen; /* changes of the set, and the last one the thread has taken */
} wp = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, .wake = -1};

/* A page of Q's written: its block noted, then the block's protection lifted (which wakes the
 * writer). A block that reaches past the registered range is refused (ENOENT), possibly after
 * a part of it was lifted, all of which is noted; the page itself is then lifted alone. */
static void answer(struct wpq *q, uint64_t addr)
{
	uint64_t block = addr & ~(uint64_t)(WPQ_BLOCK - 1);
	struct uffdio_writeprotect w = {.range = {block, WPQ_BLOCK}, .mode = 0};

	pthread_mutex_lock(&wp.lock);
	if (q->n == q->cap) {
		size_t cap = q->cap ? 2 * q->cap : 256;
		uint64_t *a = realloc(q->addr, cap * sizeof(*a));
		if (a) {
			q->addr = a;
			q->cap = cap;
		}
	}
	if (q->n < q->cap)
		q->addr[q->n++] = block;
	else
		q->lost = true;
	pthread_mutex_unlock(&wp.lock);
	if (!ioctl(q->uffd, UFFDIO_WRITEPROTECT, &w))
		return;
	w.range = (struct uffdio_range){addr, MEMFILE_PAGE};
	if (ioctl(q->uffd, UFFDIO_WRITEPROTECT, &w) && errno != ENOENT) {
		/* Still protected: the writer would wait forever. Wake it to fault again. */
		ioctl(q->uffd, UFFDIO_WAKE, &w.range);
	}
}

static void drain(struct wpq *q)
{
	struct uffd_msg m[16];
	ssize_t n;

	while ((n = read(q->uffd, m, sizeof(m))) > 0)
		for (size_t i = 0; i < (size_t)n / sizeof(m[0]); i++)
			if (m[i].event == UFFD_EVENT_PAGEFAULT)
				answer(q, m[i].arg.pagefault.address & ~(MEMFILE_PAGE - 1));
}

static void *fault_thread(void *arg)
{
	struct pollfd *p = NULL;
	struct wpq **qs = NULL;
	size_t room = 0;

	(void)arg;
	for (;;) {
		/* The set as it is now: a queue removed before this is no longer read. */
		pthread_mutex_lock(&wp.lock);
		size_t n = wp.nq;
		if (n + 1 > room) {
			struct pollfd *np = realloc(p, (n + 1) * sizeof(*p));
			struct wpq **nq = np ? realloc(qs, (n + 1) * sizeof(*qs)) : NULL;
			if (np)
				p = np;
			if (nq)
				qs = nq;
			if (np && nq)
				room = n + 1;
		}
		if (n + 1 > room) {
			/* No memory for the set: every queue counts as lost, none is read. */
			for (size_t i = 0; i < wp.nq; i++)
				wp.q[i]->lost = true;
			n = room ? room - 1 : 0;
		}
		p[0] = (struct pollfd){.fd = wp.wake, .events = POLLIN};
		for (size_t i = 0; i < n; i++) {
			qs[i] = wp.q[i];
			/* A negative descriptor is not polled. */
			p[i + 1] =
			    (struct pollfd){.fd = qs[i]->dead ? -1 : qs[i]->uffd, .events = POLLIN};
		}
		wp.gen_seen = wp.gen;
		pthread_cond_broadcast(&wp.acked);
		pthread_mutex_unlock(&wp.lock);
		if (poll(p, n + 1, -1) < 0)
			continue;
		if (p[0].revents) {
			uint64_t v;
			if (read(wp.wake, &v, sizeof(v)) < 0) {
				/* nothing: the next look reads the set anyway */
			}
		}
		for (size_t i = 0; i < n; i++) {
			if (p[i + 1].revents & POLLIN)
				drain(qs[i]);
			else if (p[i + 1].revents) {
				pthread_mutex_lock(&wp.lock);
				qs[i]->dead = qs[i]->lost = true;
				pthread_mutex_unlock(&wp.lock);
			}
		}
	}
	return NULL;
}

/* After a change of the set: returns once the thread has taken it (and so reads no queue that
 * has left it). */
static void changed_locked(void)
{
	uint64_t one = 1, gen = ++wp.gen;

	if (write(wp.wake, &one, sizeof(one)) < 0) {
		/* the counter is full: the thread is awake already */
	}
	while (wp.gen_seen < gen)
		pthread_cond_wait(&wp.acked, &wp.lock);
}

static int start_locked(void)
{
	sigset_t all, old;
	pthread_t t;

	if (wp.running)
		return 0;
	if (wp.wake < 0 && (wp.wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
		return -errno;
	/* The Sentry's signals are the main thread's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int e = pthread_create(&t, NULL, fault_thread, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e)
		return -e;
	pthread_detach(t);
	wp.running = true;
	return 0;
}

struct wpq *wpq_add(int uffd)
{
	struct wpq *q = calloc(1, sizeof(*q));
	int e = 0;

	if (!q)
		return NULL;
	q->uffd = uffd;
	pthread_mutex_lock(&wp.lock);
	if (wp.nq == wp.cap) {
		size_t cap = wp.cap ? 2 * wp.cap : 16;
		struct wpq **v = realloc(wp.q, cap * sizeof(*v));
		if (v) {
			wp.q = v;
			wp.cap = cap;
		}
	}
	if (wp.nq == wp.cap || (e = start_locked())) {
		pthread_mutex_unlock(&wp.lock);
		free(q);
		return NULL;
	}
	wp.q[wp.nq++] = q;
	changed_locked();
	pthread_mutex_unlock(&wp.lock);
	return q;
}

void wpq_remove(struct wpq *q)
{
	if (!q)
		return;
	pthread_mutex_lock(&wp.lock);
	for (size_t i = 0; i < wp.nq; i++)
		if (wp.q[i] == q) {
			wp.q[i] = wp.q[--wp.nq];
			changed_locked();
			break;
		}
	pthread_mutex_unlock(&wp.lock);
	free(q->addr);
	free(q);
}

bool wpq_take(struct wpq *q, void (*fn)(void *arg, uint64_t addr), void *arg)
{
	uint64_t *a;
	size_t n;
	bool lost;

	pthread_mutex_lock(&wp.lock);
	a = q->addr;
	n = q->n;
	lost = q->lost;
	q->addr = NULL;
	q->n = q->cap = 0;
	q->lost = false;
	pthread_mutex_unlock(&wp.lock);
	for (size_t i = 0; i < n; i++)
		fn(arg, a[i]);
	free(a);
	return !lost;
}
