/* Huge folios where a restore fills whole 2 MiB blocks of the memory file. A restore pays most
 * for fresh pages (docs/checkpoint.md, "Moving memory"), and a 2 MiB folio is one allocation
 * where 4 KiB pages are 512. The bounded memory file's tmpfs is mounted huge=advise, so that
 * only a mapping marked MADV_HUGEPAGE gets huge folios: the Sentry's view of the file is
 * marked MADV_NOHUGEPAGE, and only the blocks a restore writes whole, only while it writes
 * them, MADV_HUGEPAGE. A sparse guest still costs 4 KiB per page, and no guest's own fault
 * ever makes a huge folio. Marking back to MADV_NOHUGEPAGE (not just clearing the mark) lets
 * the kernel merge the view into one mapping again. */
#include "mem/internal.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* A fresh huge folio that takes longer than this to allocate (and clear) costs more than the
 * 512 small pages would: on this VM, memory the host has taken back (free page reporting
 * returns free 2 MiB blocks to it) costs 5-10 ms per block, against ~0.2 ms for memory it
 * still backs and ~1.3 ms for the block's small pages. */
#define SLOW_NS 1000000
/* Slow blocks before the rest of a fill gets small pages: one could be a preempted thread. */
#define STRIKES 2

bool dense_possible(void)
{
	return mf.huge;
}

int dense_add(struct dense *d, uint64_t off)
{
	if (d->n && d->runs[d->n - 1].off + d->runs[d->n - 1].len == off) {
		d->runs[d->n - 1].len += DENSE_BYTES;
		return 0;
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 16;
		struct extent *r = realloc(d->runs, cap * sizeof(*r));
		if (!r)
			return -1;
		d->runs = r;
		d->cap = cap;
	}
	d->runs[d->n++] = (struct extent){off, DENSE_BYTES};
	return 0;
}

static void mark(const struct dense *d, int advice)
{
	for (size_t i = 0; i < d->n; i++)
		madvise(mf.base + d->runs[i].off, d->runs[i].len, advice);
}

void dense_begin(struct dense *d)
{
	d->on = d->n > 0;
	if (d->on)
		mark(d, MADV_HUGEPAGE);
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000 + (uint64_t)t.tv_nsec;
}

void dense_block(struct dense *d, uint64_t off)
{
	if (!__atomic_load_n(&d->on, __ATOMIC_RELAXED))
		return;
	/* Allocating the block on its own is what can be timed: the copy into it that follows
	 * may be a decompression, whose speed says nothing about the memory. An error (no room
	 * in a bounded file) is the copy's to meet. */
	uint64_t t = now_ns();
	madvise(mf.base + off, MEMFILE_PAGE, MADV_POPULATE_WRITE);
	t = now_ns() - t;
	__atomic_fetch_add(&d->blocks, 1, __ATOMIC_RELAXED);
	if (t <= SLOW_NS || __atomic_add_fetch(&d->strikes, 1, __ATOMIC_RELAXED) != STRIKES)
		return;
	__atomic_store_n(&d->on, false, __ATOMIC_RELAXED);
	mark(d, MADV_NOHUGEPAGE);
}

void dense_end(struct dense *d)
{
	if (d->on)
		mark(d, MADV_NOHUGEPAGE);
	free(d->runs);
	d->runs = NULL;
	d->n = d->cap = 0;
	d->on = false;
}
