/* The Sentry's page cache of host files: one memory object per recently mapped lower-layer
 * file, filled page by page as mappings ask, and shared copy-on-write by every private
 * mapping of those pages (mm.c maps them VMA_COW). Without it each exec of a program read
 * its text into fresh memory again; a compiler run execs cc1 per source file.
 *
 * Only files the sandbox cannot change are cached (the host tree below the overlay, never
 * written); an entry is known by the host file's own device, inode, size and modification
 * time, so a file changed on the host behind the sandbox's back is a new entry. The cache holds a
 * few files and a bounded number of pages; the least recently used entry goes first.
 *
 * exec reads a program in ahead (filecache_prefetch): a thread on another CPU copies its pages
 * while the Sentry makes the new stub, and the Sentry shares what is left when it maps them. */
#include "sentry/filecache.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mem/memfile.h"
#include "platform/platform.h"
#include "vfs/vfs.h"

#define FC_PAGE 4096ULL
#define FC_ENTRIES 32
#define FC_MAX_FILE (256ULL << 20)   /* larger files are read per mapping, as before */
#define FC_MAX_FILLED (512ULL << 20) /* pages read in, over all entries */

struct fc_entry {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct mobj *mo;  /* the cache's reference */
	uint8_t *filled;  /* a bit per page: read in */
	uint64_t nfilled; /* pages read in */
	uint64_t last_use;
};

static struct fc_entry cache[FC_ENTRIES];
static uint64_t use_clock, total_filled;

/* A read-ahead in progress (filecache_prefetch): its ranges' pages are copied in chunks, which
 * the thread and, once it needs them, the Sentry take in turn. While it runs nothing else in
 * this file runs (every entry point waits for it first, ahead_finish): the entries, their
 * bitmaps and the files it reads stay as they were when it started. Copies go through
 * pread/pwrite at explicit offsets, so the two share no file position. */
#define AHEAD_CHUNK 32 /* pages: 128 KiB */
#define AHEAD_MIN 64   /* pages to read before a thread is worth its start */
#define AHEAD_MAX FILECACHE_PREFETCH_MAX

struct ahead_range {
	struct fc_entry *e;
	struct vfs_file *file; /* a reference */
	uint64_t first, last;  /* pages */
	uint64_t chunk0;       /* the job's first chunk index for this range */
};

static struct {
	bool running;
	pthread_t thread;
	struct ahead_range r[AHEAD_MAX];
	int n;
	uint64_t nchunks;
	atomic_uint_fast64_t next; /* the next chunk to take */
	atomic_bool failed;
	cpu_set_t cpus; /* where the thread runs */
} ahead;

static void ahead_finish(void);

static void entry_drop(struct fc_entry *e)
{
	if (!e->mo)
		return;
	total_filled -= e->nfilled;
	mobj_put(e->mo);
	free(e->filled);
	memset(e, 0, sizeof(*e));
}

void filecache_clear(void)
{
	ahead_finish();
	for (int i = 0; i < FC_ENTRIES; i++)
		entry_drop(&cache[i]);
}

static struct fc_entry *lru(void)
{
	struct fc_entry *old = NULL;

	for (int i = 0; i < FC_ENTRIES; i++)
		if (cache[i].mo && (!old || cache[i].last_use < old->last_use))
			old = &cache[i];
	return old;
}

static struct fc_entry *lookup(const struct stat *st)
{
	struct fc_entry *free_slot = NULL;

	for (int i = 0; i < FC_ENTRIES; i++) {
		struct fc_entry *e = &cache[i];
		if (!e->mo) {
			free_slot = free_slot ? free_slot : e;
			continue;
		}
		if (e->dev == st->st_dev && e->ino == st->st_ino) {
			if (e->size == st->st_size && e->mtime.tv_sec == st->st_mtim.tv_sec &&
			    e->mtime.tv_nsec == st->st_mtim.tv_nsec)
				return e;
			entry_drop(e); /* the file changed on the host */
			free_slot = free_slot ? free_slot : e;
		}
	}
	struct fc_entry *e = free_slot ? free_slot : lru();
	uint64_t pages = ((uint64_t)st->st_size + FC_PAGE - 1) / FC_PAGE;

	entry_drop(e);
	e->mo = mobj_new(pages * FC_PAGE);
	e->filled = calloc((pages + 7) / 8, 1);
	if (!e->mo || !e->filled) {
		if (e->mo)
			mobj_put(e->mo);
		free(e->filled);
		memset(e, 0, sizeof(*e));
		return NULL;
	}
	e->dev = st->st_dev;
	e->ino = st->st_ino;
	e->size = st->st_size;
	e->mtime = st->st_mtim;
	return e;
}

static bool page_filled(const struct fc_entry *e, uint64_t p)
{
	return e->filled[p / 8] & (1u << (p % 8));
}

/* The memory file again for the read-ahead's thread, with a position of its own: sendfile
 * writes at its descriptor's position, and the kernel thread's copies go through
 * memfile_copy_fd's. Opened by the kernel thread before the first read-ahead starts. */
static int ahead_fd = -1;

/* Copies chunk K of the read-ahead: its pages not yet in, from the host file to the memory file
 * at their places, through TO (a description of the memory file this thread alone writes
 * through) inside the host kernel, or else read into BUF and written. */
static int ahead_copy_chunk(uint64_t k, int to, char *buf)
{
	const struct ahead_range *r = &ahead.r[0];

	for (int i = 1; i < ahead.n && ahead.r[i].chunk0 <= k; i++)
		r = &ahead.r[i];
	uint64_t p = r->first + (k - r->chunk0) * AHEAD_CHUNK;
	uint64_t end = p + AHEAD_CHUNK < r->last ? p + AHEAD_CHUNK : r->last;
	for (; p < end; p++) {
		if (page_filled(r->e, p))
			continue;
		uint64_t off = p * FC_PAGE, want = FC_PAGE, run = 1;
		while (p + run < end && !page_filled(r->e, p + run))
			run++;
		want = run * FC_PAGE;
		if (off + want > (uint64_t)r->e->size)
			want = (uint64_t)r->e->size - off;
		/* As fill: one copy in the host kernel, where a read and a write made two (the
		 * read-ahead of a 2 MiB busybox: 0.45 against 0.8 ms of CPU). */
		if (to >= 0 && r->file->ops->copy_to_fd &&
		    r->file->ops->copy_to_fd(r->file, to, (off_t)(r->e->mo->off + off), want,
					     (off_t)off) == (ssize_t)want) {
			p += run - 1;
			continue;
		}
		if (r->file->ops->pread_kernel(r->file, buf, want, (off_t)off) != (ssize_t)want ||
		    pwrite(memfile_fd(), buf, want, (off_t)(r->e->mo->off + off)) != (ssize_t)want)
			return -EIO;
		p += run - 1;
	}
	return 0;
}

/* Takes and copies chunks until none is left, through buffer WHO (0 the Sentry, 1 the thread). */
static void ahead_work(int who)
{
	static char bufs[2][AHEAD_CHUNK * FC_PAGE];
	char *buf = bufs[who];
	int to = who ? ahead_fd : memfile_copy_fd();
	uint64_t k;

	while ((k = atomic_fetch_add(&ahead.next, 1)) < ahead.nchunks)
		if (ahead_copy_chunk(k, to, buf))
			atomic_store(&ahead.failed, true);
}

static void *ahead_main(void *arg)
{
	(void)arg;
	ahead_work(1);
	return NULL;
}

/* Waits for the read-ahead, sharing its work: its pages are then in, unless a copy failed,
 * when they are read again as usual. */
static void ahead_finish(void)
{
	if (!ahead.running)
		return;
	ahead_work(0);
	pthread_join(ahead.thread, NULL);
	ahead.running = false;
	bool ok = !atomic_load(&ahead.failed);
	for (int i = 0; i < ahead.n; i++) {
		struct ahead_range *r = &ahead.r[i];
		for (uint64_t p = r->first; p < r->last && ok; p++)
			if (!page_filled(r->e, p)) {
				r->e->filled[p / 8] |= (uint8_t)(1u << (p % 8));
				r->e->nfilled++;
				total_filled++;
			}
		vfs_file_put(r->file);
	}
	ahead.n = 0;
	ahead.nchunks = 0;
}

/* Reads the pages [first, last) not yet in, in runs. */
static int fill(struct fc_entry *e, struct vfs_file *file, uint64_t first, uint64_t last)
{
	for (uint64_t p = first; p < last;) {
		if (page_filled(e, p)) {
			p++;
			continue;
		}
		uint64_t end = p;
		while (end < last && !page_filled(e, end))
			end++;
		uint64_t off = p * FC_PAGE, want = (end - p) * FC_PAGE;
		if (off + want > (uint64_t)e->size)
			want = (uint64_t)e->size - off; /* the rest of the last page stays zero */
		/* A copy inside the host kernel writes the pages through tmpfs's write path; a read
		 * into the Sentry's view of them takes a page fault per page first (a 2 MiB
		 * busybox: ~0.75 against ~1.5 ms, most of a start). Anything it cannot do, the read
		 * does. */
		int to = file->ops->copy_to_fd ? memfile_copy_fd() : -1;
		if (to >= 0 && file->ops->copy_to_fd(file, to, (off_t)(e->mo->off + off), want,
						     (off_t)off) == (ssize_t)want)
			want = 0;
		char *dst = memfile_ptr(e->mo->off + off);
		while (want) {
			ssize_t n = file->ops->pread_kernel(file, dst, want, (off_t)off);
			if (n < 0)
				return (int)n;
			if (n == 0)
				return -EIO; /* shorter than it said: not cacheable */
			dst += n;
			off += (uint64_t)n;
			want -= (uint64_t)n;
		}
		e->nfilled += end - p;
		total_filled += end - p;
		for (; p < end; p++)
			e->filled[p / 8] |= (uint8_t)(1u << (p % 8));
	}
	return 0;
}

/* The entry for FILE and the pages [*FIRST, *LAST) of [OFF, OFF+LEN) in it, when FILE can be
 * cached at all. */
static struct fc_entry *entry_for(struct vfs_file *file, off_t off, size_t len, uint64_t *first,
				  uint64_t *last)
{
	struct stat host;
	const struct stat *st = &host;

	if (!file->dentry || vfs_dentry_host_stat(file->dentry, &host) || !S_ISREG(st->st_mode) ||
	    !file->ops->pread_kernel || st->st_size <= 0 || (uint64_t)st->st_size > FC_MAX_FILE ||
	    off < 0 || (uint64_t)off % FC_PAGE)
		return NULL;
	uint64_t pages = ((uint64_t)st->st_size + FC_PAGE - 1) / FC_PAGE;
	*first = (uint64_t)off / FC_PAGE;
	*last = *first + (len + FC_PAGE - 1) / FC_PAGE;
	if (*last > pages || *last <= *first)
		return NULL;
	return lookup(st);
}

void filecache_prefetch(const struct filecache_range *ranges, int n)
{
	uint64_t todo = 0;

	ahead_finish();
	for (int i = 0; i < n && ahead.n < AHEAD_MAX; i++) {
		struct ahead_range *r = &ahead.r[ahead.n];
		if (!(r->e = entry_for(ranges[i].file, ranges[i].off, ranges[i].len, &r->first,
				       &r->last)))
			continue;
		r->e->last_use = ++use_clock;
		uint64_t missing = 0;
		for (uint64_t p = r->first; p < r->last; p++)
			missing += !page_filled(r->e, p);
		if (!missing)
			continue;
		r->file = vfs_file_get(ranges[i].file);
		r->chunk0 = ahead.nchunks;
		ahead.nchunks += (r->last - r->first + AHEAD_CHUNK - 1) / AHEAD_CHUNK;
		todo += missing;
		ahead.n++;
	}
	atomic_store(&ahead.next, 0);
	atomic_store(&ahead.failed, false);
	/* The thread runs beside the Sentry, on a CPU it started with but is not pinned to (the
	 * new stub runs on the Sentry's): with none such it would only take turns with it. */
	cpu_set_t start, mine;
	platform_start_cpus(&start);
	CPU_ZERO(&ahead.cpus);
	if (sched_getaffinity(0, sizeof(mine), &mine) == 0)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &start) && !CPU_ISSET(c, &mine))
				CPU_SET(c, &ahead.cpus);
	if (ahead_fd < 0 && todo >= AHEAD_MIN) {
		char path[32];
		snprintf(path, sizeof(path), "/proc/self/fd/%d", memfile_fd());
		ahead_fd = open(path, O_WRONLY | O_CLOEXEC); /* else read and write, as before */
	}
	pthread_attr_t attr;
	bool started = todo >= AHEAD_MIN && CPU_COUNT(&ahead.cpus) > 0 && !pthread_attr_init(&attr);
	if (started) {
		/* It needs little stack (its chunk buffer is static), and it blocks every signal:
		 * the Sentry's are the kernel thread's (docs/checkpoint.md, "Threads in the
		 * Sentry"). */
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		pthread_attr_setstacksize(&attr, 64 << 10);
		started = !pthread_attr_setaffinity_np(&attr, sizeof(ahead.cpus), &ahead.cpus) &&
			  !pthread_create(&ahead.thread, &attr, ahead_main, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_attr_destroy(&attr);
	}
	if (started) {
		ahead.running = true;
		return;
	}
	/* Too little to share, or no thread: filecache_get reads it as it always did. */
	for (int i = 0; i < ahead.n; i++)
		vfs_file_put(ahead.r[i].file);
	ahead.n = 0;
	ahead.nchunks = 0;
}

struct mobj *filecache_get(struct vfs_file *file, off_t off, size_t len)
{
	uint64_t first, last;

	ahead_finish();
	struct fc_entry *e = entry_for(file, off, len, &first, &last);
	if (!e)
		return NULL;
	e->last_use = ++use_clock;
	if (fill(e, file, first, last)) {
		entry_drop(e);
		return NULL;
	}
	struct mobj *mo = mobj_get(e->mo);
	/* Over the bound: the least recently used entries go (this one last). */
	while (total_filled * FC_PAGE > FC_MAX_FILLED) {
		struct fc_entry *old = lru();
		if (!old || old == e)
			break;
		entry_drop(old);
	}
	return mo;
}
