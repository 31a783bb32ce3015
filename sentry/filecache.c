/* The Sentry's page cache of host files: one memory object per recently mapped lower-layer
 * file, filled page by page as mappings ask, and shared copy-on-write by every private
 * mapping of those pages (mm.c maps them VMA_COW). Without it each exec of a program read
 * its text into fresh memory again; a compiler run execs cc1 per source file.
 *
 * Only files the sandbox cannot change are cached (the host tree below the overlay, never
 * written); an entry is known by the host file's own device, inode, size and modification
 * time, so a file changed on the host behind the sandbox's back is a new entry. The cache holds a
 * few files and a bounded number of pages; the least recently used entry goes first. */
#include "sentry/filecache.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mem/memfile.h"
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

struct mobj *filecache_get(struct vfs_file *file, off_t off, size_t len)
{
	struct stat host;
	const struct stat *st = &host;

	if (!file->dentry || vfs_dentry_host_stat(file->dentry, &host) || !S_ISREG(st->st_mode) ||
	    !file->ops->pread_kernel || st->st_size <= 0 || (uint64_t)st->st_size > FC_MAX_FILE ||
	    off < 0 || (uint64_t)off % FC_PAGE)
		return NULL;
	uint64_t pages = ((uint64_t)st->st_size + FC_PAGE - 1) / FC_PAGE;
	uint64_t first = (uint64_t)off / FC_PAGE, last = first + (len + FC_PAGE - 1) / FC_PAGE;
	if (last > pages || last <= first)
		return NULL;
	struct fc_entry *e = lookup(st);
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
