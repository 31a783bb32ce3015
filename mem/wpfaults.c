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
 * The same thread maps the pages of a stub whose ranges are watched lazily (also for a stub
 * tracked asynchronously): there only the file's holes are protected up front (a marker in the
 * page tables), the ranges are registered for minor faults besides write-protection, and the
 * first touch of a page of the file that the stub does not map yet stops the toucher. Its
 * WPQ_LAZY_SPAN-aligned span is then mapped from the file write-protected (UFFDIO_CONTINUE), so
 * a write to it still stops; a write that made the fault notes its block first and maps that
 * block writable. A hole is left to the kernel, which allocates a page under the marker
 * protected: one page, as without tracking.
 *
 * The order keeps every write seen: a block is noted before its protection is lifted (or it is
 * mapped writable), and the write it stopped only lands after that; a take and its protecting
 * again run under the lock that a note and its lifting hold, so a write is either in the blocks
 * a harvest takes, or lands after the harvest protected its block again (and stops, to be noted
 * for the next one). */
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

/* Linux 6.4's write-protected UFFDIO_CONTINUE, which the C library's headers may predate. */
#ifndef UFFDIO_CONTINUE_MODE_WP
#define UFFDIO_CONTINUE_MODE_WP ((__u64)1 << 1)
#endif

struct wpq {
	int uffd;
	unsigned flags; /* WPQ_* */
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

/* Notes BLOCK for Q's next take. Under wp.lock. */
static void note_locked(struct wpq *q, uint64_t block)
{
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
}

/* A page of Q's written: its block noted, then the block's protection lifted (which wakes the
 * writer). A block that reaches past the registered range is refused (ENOENT), possibly after
 * a part of it was lifted, all of which is noted; the page itself is then lifted alone. */
static void answer_write(struct wpq *q, uint64_t addr)
{
	uint64_t block = addr & ~(uint64_t)(WPQ_BLOCK - 1);
	struct uffdio_writeprotect w = {.range = {block, WPQ_BLOCK}, .mode = 0};

	note_locked(q, block);
	if (!ioctl(q->uffd, UFFDIO_WRITEPROTECT, &w))
		return;
	w.range = (struct uffdio_range){addr, MEMFILE_PAGE};
	if (ioctl(q->uffd, UFFDIO_WRITEPROTECT, &w) && errno != ENOENT) {
		/* Still protected: the writer would wait forever. Wake it to fault again. */
		ioctl(q->uffd, UFFDIO_WAKE, &w.range);
	}
}

/* Maps [A, END) of Q's address space from the file (UFFDIO_CONTINUE), write-protected when WP.
 * A page mapped already, or that the file does not hold (a hole: protected by a marker), is
 * left as it is when SKIP; otherwise the first one stops it. Returns 0, or the error that
 * stopped it (-ENOENT before anything was mapped: the range is not inside one registered
 * mapping). */
static int map_range(struct wpq *q, uint64_t a, uint64_t end, bool wp, bool skip)
{
	while (a < end) {
		struct uffdio_continue c = {.range = {a, end - a},
					    .mode = wp ? UFFDIO_CONTINUE_MODE_WP : 0};
		if (!ioctl(q->uffd, UFFDIO_CONTINUE, &c))
			return 0;
		if (errno == EAGAIN &&
		    c.mapped > 0) /* stopped part way, at a page it could not map */
			a += (uint64_t)c.mapped;
		else if ((errno == EEXIST || errno == EFAULT) && skip)
			a += MEMFILE_PAGE;
		else
			return -errno;
	}
	return 0;
}

/* Q's stub touched ADDR, a page of the file it does not map yet (a minor fault of a lazily
 * watched range): maps ADDR's block and the rest of its span (up to the first page it cannot
 * map), write-protected; a write that made the fault, where writes are noted (not WPQ_ASYNC),
 * notes the block and maps it writable. A block or span that reaches past the registered range
 * is refused (ENOENT): then the page alone, and no more of the span. The toucher is woken
 * either way (a page mapped by someone else meanwhile, or not at all, is touched again). */
static void answer_touch(struct wpq *q, uint64_t addr, bool write)
{
	uint64_t block = addr & ~(uint64_t)(WPQ_BLOCK - 1);
	uint64_t span = addr & ~(uint64_t)(WPQ_LAZY_SPAN - 1);
	bool wp = !write || (q->flags & WPQ_ASYNC);
	struct uffdio_range page = {addr, MEMFILE_PAGE};
	int e;

	if (!wp)
		note_locked(q, block);
	e = map_range(q, block, block + WPQ_BLOCK, wp, true);
	if (e == -ENOENT)
		map_range(q, addr, addr + MEMFILE_PAGE, wp, true);
	else if (!e) {
		map_range(q, block + WPQ_BLOCK, span + WPQ_LAZY_SPAN, true, false);
		map_range(q, span, block, true, false);
	}
	ioctl(q->uffd, UFFDIO_WAKE, &page);
}

static void drain(struct wpq *q)
{
	struct uffd_msg m[16];
	ssize_t n;

	while ((n = read(q->uffd, m, sizeof(m))) > 0)
		for (size_t i = 0; i < (size_t)n / sizeof(m[0]); i++) {
			uint64_t addr = m[i].arg.pagefault.address & ~(MEMFILE_PAGE - 1);
			uint64_t flags = m[i].arg.pagefault.flags;
			if (m[i].event != UFFD_EVENT_PAGEFAULT)
				continue;
			pthread_mutex_lock(&wp.lock);
			if (flags & UFFD_PAGEFAULT_FLAG_WP)
				answer_write(q, addr);
			else
				answer_touch(q, addr, flags & UFFD_PAGEFAULT_FLAG_WRITE);
			pthread_mutex_unlock(&wp.lock);
		}
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

struct wpq *wpq_add(int uffd, unsigned flags)
{
	struct wpq *q = calloc(1, sizeof(*q));
	int e = 0;

	if (!q)
		return NULL;
	q->uffd = uffd;
	q->flags = flags;
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
	bool lost;

	/* Under the lock, protecting again included: a block being noted and lifted meanwhile
	 * would be lifted after FN protects it, and its write missed by the next take. */
	pthread_mutex_lock(&wp.lock);
	for (size_t i = 0; i < q->n; i++)
		fn(arg, q->addr[i]);
	lost = q->lost;
	free(q->addr);
	q->addr = NULL;
	q->n = q->cap = 0;
	q->lost = false;
	pthread_mutex_unlock(&wp.lock);
	return !lost;
}
