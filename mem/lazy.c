/* Lazy restore (restore --lazy, docs/checkpoint.md "Lazy restore"): the guest starts before its
 * memory is loaded. The grid cells that hold chunks of the image's data files are registered
 * with userfaultfd in missing mode, in the Sentry's view of the memory file and in every
 * restored stub's mappings of it. A page first touched anywhere faults to the fault thread,
 * which loads the chunk holding it (or supplies a zero page for a page the image does not
 * hold) into the memory file through the Sentry's userfaultfd, and wakes the toucher; a
 * background thread loads the remaining chunks in address order. Pages are only ever placed
 * with UFFDIO_COPY, which refuses a page already there, and only while they are still
 * wanted: a range the kernel frees or zeroes meanwhile is crossed off first (lazy_forget), so
 * a late load can never bring back old data. When the last chunk is in, every userfaultfd is
 * closed, which unregisters its ranges. A chunk that cannot be loaded (the data file cut
 * short, a checksum mismatch) ends the Sentry, and so the sandbox, with one line. */
#include "mem/memfile.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mem/internal.h"
#include "state/compress.h"

#define MAX_SPACES 1024

enum { CHUNK_PENDING, CHUNK_BUSY, CHUNK_DONE };

/* A watched address space: a stub's userfaultfd and where its registered ranges map the file
 * (a snapshot: a range that later moves or is mapped anew is not registered any more, so a
 * fault always comes from one of these, however they were split or shrunk since). */
struct space {
	int uffd;
	struct memfile_space_range *r;
	size_t n;
};

static struct {
	bool active; /* loading: read without the lock only as a hint */
	struct store s;
	char *dir;
	uint8_t *state;	      /* per chunk */
	uint64_t *todo;	      /* per page below npages: still to be placed from the image */
	uint64_t npages;      /* the memory file's allocated pages at the restore */
	struct extent *cells; /* the registered ranges of the file: merged grid cells */
	size_t ncells;
	pthread_mutex_t lock; /* todo, state, spaces; held across every UFFDIO_COPY */
	pthread_cond_t done;  /* a chunk became CHUNK_DONE */
	int uffd;	      /* the Sentry's, over its view of the file */
	int wake;	      /* eventfd: the fault thread re-reads the spaces, or finishes */
	struct space spaces[MAX_SPACES];
	size_t nspaces;
	uint64_t nleft; /* chunks not yet done */
	bool finished;	/* every chunk is in: the fault thread closes everything */
	pthread_t fault_thread, bg_thread;
	bool fault_started, bg_started;
} lz = {
    .lock = PTHREAD_MUTEX_INITIALIZER, .done = PTHREAD_COND_INITIALIZER, .uffd = -1, .wake = -1};

/* The end: one line, and the Sentry goes, taking its stubs with it (PTRACE_O_EXITKILL). No
 * stdio: the kernel thread may hold its locks while it waits on a page. */
static __attribute__((noreturn)) void lazy_die(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (write(2, line, n) < 0) {
		/* nothing more to be done */
	}
	_exit(1);
}

static bool todo_test(uint64_t page)
{
	return page < lz.npages && (lz.todo[page / 64] >> (page % 64) & 1);
}

static void todo_clear(uint64_t page)
{
	if (page < lz.npages)
		lz.todo[page / 64] &= ~(1ULL << (page % 64));
}

static void say(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(char **err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(err, fmt, ap) < 0)
		*err = NULL;
	va_end(ap);
}

/* The chunk holding page offset OFF, or -1. */
static int64_t find_chunk(uint64_t off)
{
	uint64_t lo = 0, hi = lz.s.nch;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		const struct chunk *c = &lz.s.ch[mid];
		if (off < c->mem_off)
			hi = mid;
		else if (off >= c->mem_off + (uint64_t)c->pages * MEMFILE_PAGE)
			lo = mid + 1;
		else
			return mid;
	}
	return -1;
}

/* Places LEN bytes at file offset OFF from SRC, skipping pages already there. Called with the
 * lock held. */
static void place(uint64_t off, const uint8_t *src, uint64_t len)
{
	while (len) {
		struct uffdio_copy c = {
		    .dst = (uintptr_t)mf.base + off, .src = (uintptr_t)src, .len = len, .mode = 0};
		if (ioctl(lz.uffd, UFFDIO_COPY, &c) == 0 || c.copy > 0) {
			uint64_t n = c.copy > 0 ? (uint64_t)c.copy : len;
			off += n, src += n, len -= n;
			continue;
		}
		if (c.copy == -EAGAIN || errno == EAGAIN || errno == EINTR)
			continue;
		/* A page that is there already (nothing should put one there first; if something
		 * did, what it put is newer than the image): leave it. */
		if (c.copy == -EEXIST || errno == EEXIST) {
			off += MEMFILE_PAGE, src += MEMFILE_PAGE, len -= MEMFILE_PAGE;
			continue;
		}
		lazy_die("minisentry: restore: cannot place memory of image '%s' (%s); the "
			 "sandbox is killed",
			 lz.dir, strerror(errno));
	}
}

struct loader {
	struct chunk_reader r;
	uint8_t *pages;
	bool ready;
};

static void loader_init(struct loader *l)
{
	int e = chunk_reader_init(&l->r);
	l->pages = malloc(CHUNK_BYTES);
	l->ready = true;
	if (e || !l->pages)
		lazy_die("minisentry: restore: out of memory loading image '%s'; the sandbox is "
			 "killed",
			 lz.dir);
}

static void loader_free(struct loader *l)
{
	chunk_reader_free(&l->r);
	free(l->pages);
}

/* Makes chunk K's pages present (those still wanted), loading it here unless another thread
 * is, in which case this waits for that one. */
static void load(struct loader *l, uint64_t k)
{
	const struct chunk *c = &lz.s.ch[k];

	pthread_mutex_lock(&lz.lock);
	if (lz.state[k] != CHUNK_PENDING) {
		while (lz.state[k] != CHUNK_DONE)
			pthread_cond_wait(&lz.done, &lz.lock);
		pthread_mutex_unlock(&lz.lock);
		return;
	}
	lz.state[k] = CHUNK_BUSY;
	pthread_mutex_unlock(&lz.lock);
	/* Read and checked outside the lock: nothing is placed from a chunk that fails. */
	const char *why = store_read_chunk(&lz.s, c, &l->r, l->pages);
	if (why)
		lazy_die("minisentry: restore: image '%s' is %s (memory at 0x%llx); the sandbox is "
			 "killed",
			 lz.dir, why, (unsigned long long)c->mem_off);
	pthread_mutex_lock(&lz.lock);
	uint64_t first = c->mem_off / MEMFILE_PAGE;
	for (uint32_t i = 0; i < c->pages;) {
		if (!todo_test(first + i)) {
			i++;
			continue;
		}
		uint32_t run = i;
		while (i < c->pages && todo_test(first + i))
			todo_clear(first + i++);
		place(c->mem_off + (uint64_t)run * MEMFILE_PAGE, l->pages + run * MEMFILE_PAGE,
		      (uint64_t)(i - run) * MEMFILE_PAGE);
	}
	lz.state[k] = CHUNK_DONE;
	if (--lz.nleft == 0) {
		lz.finished = true;
		uint64_t one = 1;
		if (write(lz.wake, &one, sizeof(one)) < 0) {
			/* the fault thread also polls with a timeout */
		}
	}
	pthread_cond_broadcast(&lz.done);
	pthread_mutex_unlock(&lz.lock);
}

/* Page offset OFF was touched in a registered range: make it present. */
static void serve(struct loader *l, uint64_t off)
{
	int64_t k = find_chunk(off);

	if (k >= 0)
		load(l, k);
	/* A page the image does not hold (or one freed since): zeros. One that a load placed
	 * meanwhile makes this fail with EEXIST, which is what we want. */
	pthread_mutex_lock(&lz.lock);
	if (k < 0 || !todo_test(off / MEMFILE_PAGE)) {
		struct uffdio_zeropage z = {.range = {(uintptr_t)mf.base + off, MEMFILE_PAGE}};
		if (ioctl(lz.uffd, UFFDIO_ZEROPAGE, &z) && errno != EEXIST && errno != EAGAIN)
			lazy_die("minisentry: restore: cannot place a page (%s); the sandbox is "
				 "killed",
				 strerror(errno));
	}
	pthread_mutex_unlock(&lz.lock);
}

/* The file offset of faulting address ADDR in space SP, or UINT64_MAX. */
static uint64_t translate(const struct space *sp, uint64_t addr)
{
	for (size_t i = 0; i < sp->n; i++)
		if (addr >= sp->r[i].addr && addr - sp->r[i].addr < sp->r[i].len)
			return sp->r[i].off + (addr - sp->r[i].addr);
	return UINT64_MAX;
}

/* Drains the messages of userfaultfd FD (space SP, or the Sentry's when NULL). */
static void drain(struct loader *l, int fd, const struct space *sp)
{
	struct uffd_msg msg[16];

	for (;;) {
		ssize_t n = read(fd, msg, sizeof(msg));
		if (n <= 0)
			return; /* EAGAIN: nothing more; a space whose process is gone: nothing */
		for (size_t i = 0; i < (size_t)n / sizeof(msg[0]); i++) {
			if (msg[i].event != UFFD_EVENT_PAGEFAULT)
				continue;
			uint64_t addr = msg[i].arg.pagefault.address & ~(MEMFILE_PAGE - 1);
			uint64_t off = sp ? translate(sp, addr) : addr - (uintptr_t)mf.base;
			if (off == UINT64_MAX || off >= MEMFILE_SIZE)
				lazy_die(
				    "minisentry: restore: a fault at 0x%llx outside the memory "
				    "file; the sandbox is killed",
				    (unsigned long long)addr);
			serve(l, off & ~(MEMFILE_PAGE - 1));
			struct uffdio_range r = {addr, MEMFILE_PAGE};
			ioctl(fd, UFFDIO_WAKE, &r);
		}
	}
}

/* Every chunk is in. Closing a userfaultfd unregisters its ranges and wakes whoever waits on
 * them: they find their page, or fault normally. The index stays (a thread may still look at
 * a chunk's state, which says done), the data files go. */
static void finish(void)
{
	pthread_mutex_lock(&lz.lock);
	__atomic_store_n(&lz.active, false, __ATOMIC_RELEASE);
	for (size_t i = 0; i < lz.nspaces; i++) {
		/* Closing our descriptor is enough when it is the last one (the stub's was closed
		 * at its start); unregistering first makes sure no fault can wait for us. */
		for (size_t k = 0; k < lz.spaces[i].n; k++) {
			struct uffdio_range r = {lz.spaces[i].r[k].addr, lz.spaces[i].r[k].len};
			ioctl(lz.spaces[i].uffd, UFFDIO_UNREGISTER, &r);
		}
		close(lz.spaces[i].uffd);
		free(lz.spaces[i].r);
	}
	lz.nspaces = 0;
	close(lz.uffd);
	lz.uffd = -1;
	store_close_files(&lz.s);
	pthread_mutex_unlock(&lz.lock);
}

static void *fault_main(void *arg)
{
	struct loader l;

	(void)arg;
	loader_init(&l);
	static struct pollfd p[MAX_SPACES + 2];
	static int fds[MAX_SPACES];

	for (;;) {
		size_t n = 0;
		pthread_mutex_lock(&lz.lock);
		bool finished = lz.finished;
		p[n++] = (struct pollfd){.fd = lz.wake, .events = POLLIN};
		p[n++] = (struct pollfd){.fd = lz.uffd, .events = POLLIN};
		for (size_t i = 0; i < lz.nspaces; i++) {
			fds[i] = lz.spaces[i].uffd;
			p[n++] = (struct pollfd){.fd = fds[i], .events = POLLIN};
		}
		size_t nspaces = lz.nspaces;
		pthread_mutex_unlock(&lz.lock);
		if (finished)
			break;
		if (poll(p, n, 1000) < 0)
			continue;
		if (p[0].revents) {
			uint64_t v;
			if (read(lz.wake, &v, sizeof(v)) < 0) {
				/* already drained */
			}
		}
		if (p[1].revents)
			drain(&l, lz.uffd, NULL);
		for (size_t i = 0; i < nspaces; i++)
			if (p[i + 2].revents & POLLIN)
				drain(&l, fds[i], &lz.spaces[i]);
	}
	finish();
	loader_free(&l);
	return NULL;
}

static void *bg_main(void *arg)
{
	struct loader l;

	(void)arg;
	loader_init(&l);
	for (uint64_t k = 0; k < lz.s.nch; k++)
		load(&l, k);
	loader_free(&l);
	return NULL;
}

int mem_userfaultfd(void)
{
	int fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (fd < 0 && (errno == EPERM || errno == ENOSYS)) {
		int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
		if (dev >= 0) {
			fd = ioctl(dev, _IO(0xAA, 0x00) /* USERFAULTFD_IOC_NEW */,
				   O_CLOEXEC | O_NONBLOCK);
			close(dev);
		}
	}
	return fd < 0 ? -errno : fd;
}

/* The Sentry's userfaultfd for missing pages. */
static int new_uffd(void)
{
	int fd = mem_userfaultfd();

	if (fd < 0)
		return fd;
	struct uffdio_api api = {.api = UFFD_API, .features = UFFD_FEATURE_MISSING_SHMEM};
	if (ioctl(fd, UFFDIO_API, &api)) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

static int start_thread(pthread_t *t, void *(*fn)(void *))
{
	sigset_t all, old;

	/* Signals are the kernel thread's (its signalfd, the placement tick). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int e = pthread_create(t, NULL, fn, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -e;
}

int lazy_begin(struct store *s, const char *dir, char **err)
{
	int e;

	lz.s = *s;
	memset(s, 0, sizeof(*s));
	lz.dir = strdup(dir);
	lz.npages = mf.bump / MEMFILE_PAGE;
	lz.state = calloc(lz.s.nch ? lz.s.nch : 1, 1);
	lz.todo = calloc(lz.npages / 64 + 1, sizeof(uint64_t));
	lz.cells = calloc(lz.s.nch ? lz.s.nch : 1, sizeof(*lz.cells));
	if (!lz.dir || !lz.state || !lz.todo || !lz.cells) {
		e = -ENOMEM;
		say(err, "out of memory");
		goto fail;
	}
	/* What is wanted, and the grid cells that hold it, merged into ranges. */
	for (uint64_t k = 0; k < lz.s.nch; k++) {
		const struct chunk *c = &lz.s.ch[k];
		for (uint64_t p = c->mem_off / MEMFILE_PAGE;
		     p < c->mem_off / MEMFILE_PAGE + c->pages; p++)
			lz.todo[p / 64] |= 1ULL << (p % 64);
		uint64_t cell = c->mem_off & ~(CHUNK_BYTES - 1);
		if (lz.ncells &&
		    lz.cells[lz.ncells - 1].off + lz.cells[lz.ncells - 1].len >= cell) {
			lz.cells[lz.ncells - 1].len =
			    cell + CHUNK_BYTES - lz.cells[lz.ncells - 1].off;
		} else {
			lz.cells[lz.ncells++] = (struct extent){cell, CHUNK_BYTES};
		}
	}
	lz.nleft = lz.s.nch;
	if ((e = lz.uffd = new_uffd()) < 0) {
		say(err, "restore --lazy needs userfaultfd: %s", strerror(-e));
		goto fail;
	}
	if ((lz.wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		e = -errno;
		say(err, "cannot set up a lazy restore: %s", strerror(-e));
		goto fail;
	}
	for (size_t i = 0; i < lz.ncells; i++) {
		struct uffdio_register r = {
		    .range = {(uintptr_t)mf.base + lz.cells[i].off, lz.cells[i].len},
		    .mode = UFFDIO_REGISTER_MODE_MISSING};
		if (ioctl(lz.uffd, UFFDIO_REGISTER, &r)) {
			e = -errno;
			say(err, "restore --lazy: cannot register the memory file: %s",
			    strerror(-e));
			goto fail;
		}
	}
	__atomic_store_n(&lz.active, true, __ATOMIC_RELEASE);
	/* Faults come from here on (the restore itself touches memory: clean pages it reads
	 * again from their files, tmpfs contents), so the fault thread starts now; the
	 * background loader waits for lazy_start, once the guest is ready to run. */
	lz.fault_started = true;
	if ((e = start_thread(&lz.fault_thread, fault_main))) {
		lz.fault_started = false;
		__atomic_store_n(&lz.active, false, __ATOMIC_RELEASE);
		say(err, "cannot start the lazy loader: %s", strerror(-e));
		goto fail;
	}
	return 0;
fail:
	if (lz.uffd >= 0)
		close(lz.uffd);
	lz.uffd = -1;
	if (lz.wake >= 0)
		close(lz.wake);
	lz.wake = -1;
	store_close(&lz.s);
	return e;
}

bool memfile_lazy_active(void)
{
	return __atomic_load_n(&lz.active, __ATOMIC_ACQUIRE);
}

int memfile_lazy_watch(int uffd, const struct memfile_space_range *r, size_t n, char **err)
{
	struct space sp = {.uffd = uffd};
	int e = 0;

	*err = NULL;
	pthread_mutex_lock(&lz.lock);
	if (!lz.active) {
		pthread_mutex_unlock(&lz.lock);
		close(uffd);
		return 0;
	}
	struct uffdio_api api = {.api = UFFD_API, .features = UFFD_FEATURE_MISSING_SHMEM};
	if (ioctl(uffd, UFFDIO_API, &api)) {
		e = -errno;
		goto out;
	}
	if (lz.nspaces == MAX_SPACES) {
		e = -ENOSPC;
		goto out;
	}
	if (!(sp.r = calloc(n * lz.ncells + 1, sizeof(*sp.r)))) {
		e = -ENOMEM;
		goto out;
	}
	/* Each mapping's intersection with the registered cells: only there can a page be
	 * missing that the image holds. */
	for (size_t i = 0; i < n; i++)
		for (size_t c = 0; c < lz.ncells; c++) {
			uint64_t lo = r[i].off > lz.cells[c].off ? r[i].off : lz.cells[c].off;
			uint64_t hi = r[i].off + r[i].len < lz.cells[c].off + lz.cells[c].len
					  ? r[i].off + r[i].len
					  : lz.cells[c].off + lz.cells[c].len;
			if (lo >= hi)
				continue;
			struct memfile_space_range x = {r[i].addr + (lo - r[i].off), hi - lo, lo,
							false};
			struct uffdio_register reg = {.range = {x.addr, x.len},
						      .mode = UFFDIO_REGISTER_MODE_MISSING};
			if (ioctl(uffd, UFFDIO_REGISTER, &reg)) {
				e = -errno;
				free(sp.r);
				goto out;
			}
			sp.r[sp.n++] = x;
		}
	lz.spaces[lz.nspaces++] = sp;
out:
	pthread_mutex_unlock(&lz.lock);
	if (e) {
		close(uffd);
		say(err, "restore --lazy: cannot watch an address space: %s", strerror(-e));
		return e;
	}
	uint64_t one = 1;
	if (write(lz.wake, &one, sizeof(one)) < 0) {
		/* polled with a timeout */
	}
	return 0;
}

int memfile_lazy_start(void)
{
	if (!memfile_lazy_active() || lz.bg_started)
		return 0;
	lz.bg_started = true;
	return start_thread(&lz.bg_thread, bg_main);
}

void memfile_lazy_ensure(uint64_t off, uint64_t len)
{
	struct loader l = {0};

	if (!memfile_lazy_active() || !len)
		return;
	pthread_mutex_lock(&lz.lock);
	if (!lz.active) {
		pthread_mutex_unlock(&lz.lock);
		return;
	}
	uint64_t k = store_chunk_after(&lz.s, off), nch = lz.s.nch;
	pthread_mutex_unlock(&lz.lock);
	/* The index does not change while loading; the lock guards its end (finish). */
	for (; k < nch; k++) {
		pthread_mutex_lock(&lz.lock);
		bool go = lz.active && lz.s.ch[k].mem_off < off + len && lz.state[k] != CHUNK_DONE;
		bool past = !lz.active || lz.s.ch[k].mem_off >= off + len;
		pthread_mutex_unlock(&lz.lock);
		if (past)
			break;
		if (!go)
			continue;
		if (!l.ready)
			loader_init(&l);
		load(&l, k);
	}
	if (l.ready)
		loader_free(&l);
}

void memfile_lazy_wait(void)
{
	if (!lz.fault_started)
		return;
	/* Everything in, then the fault thread closes every userfaultfd and ends. */
	memfile_lazy_ensure(0, lz.npages * MEMFILE_PAGE);
	pthread_join(lz.fault_thread, NULL);
	if (lz.bg_started)
		pthread_join(lz.bg_thread, NULL);
	lz.fault_started = lz.bg_started = false;
}

void lazy_forget(uint64_t off, uint64_t len)
{
	if (!memfile_lazy_active())
		return;
	pthread_mutex_lock(&lz.lock);
	if (lz.active)
		for (uint64_t p = off / MEMFILE_PAGE; p < (off + len) / MEMFILE_PAGE; p++)
			todo_clear(p);
	pthread_mutex_unlock(&lz.lock);
}
