/* The memory file in an image (docs/image-format.md, "memory"). A checkpoint cuts the file's
 * data into chunks of at most CHUNK_PAGES pages on a fixed grid, leaving out holes, all-zero
 * pages and the ranges other code restores itself; worker threads compress each chunk, or
 * store it raw when a sample says it would not shrink, and write it to their own data file
 * straight from the Sentry's view of the memory file; the section keeps the allocator and the
 * chunks' index. A restore checks the index against the files' real sizes, then workers read
 * each chunk straight into the memory file, raw ones with one pread, and check its CRC-32C.
 * Images of format version 1 (every page inside the section) are still read. */
#include "mem/memfile.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "mem/internal.h"
#include "state/codec.h"
#include "state/compress.h"
#include "state/image.h"

static int failf(char **err, int ret, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int failf(char **err, int ret, const char *fmt, ...)
{
	va_list ap;

	if (*err)
		return ret;
	va_start(ap, fmt);
	if (vasprintf(err, fmt, ap) < 0)
		*err = NULL;
	va_end(ap);
	return ret;
}

/* The memory id of the image last written or read: the base write tracking starts from. */
static struct {
	bool set;
	uint8_t id[ID_LEN];
} last_image;

static int open_index(const char *path, int dirfd, struct image *img, struct store *st, char **err);

static bool page_is_zero(const char *p)
{
	static const char zero[MEMFILE_PAGE];

	return !memcmp(p, zero, MEMFILE_PAGE);
}

/* --- the ranges a checkpoint leaves out ---------------------------------------------------- */

/* Ranges the current checkpoint leaves out of the memory section because their owner restores
 * them another way (private file pages identical to their file: mm.c). */
static struct {
	struct extent *v;
	size_t n, cap;
} skip;

int memfile_save_skip(uint64_t off, uint64_t len)
{
	if (skip.n == skip.cap) {
		size_t cap = skip.cap ? 2 * skip.cap : 64;
		struct extent *v = realloc(skip.v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		skip.v = v;
		skip.cap = cap;
	}
	skip.v[skip.n++] = (struct extent){off, len};
	return 0;
}

void memfile_save_skip_clear(void)
{
	free(skip.v);
	skip.v = NULL;
	skip.n = skip.cap = 0;
}

static int extent_cmp(const void *a, const void *b)
{
	const struct extent *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* --- saving -------------------------------------------------------------------------------- */

/* A piece of work: a page range inside one grid cell that holds data and is not skipped; the
 * worker that takes it finds its runs of non-zero pages and stores each as a chunk. */
struct item {
	uint64_t off, len;
	struct chunk *ch;
	uint32_t nch, cap;
	uint64_t differs; /* compared or refined: bit I, page I of the cell is to be saved */
};

struct data_file {
	int fd;
	uint32_t no; /* pages.NO */
	uint64_t end;
};

struct memfile_parent {
	char *path;
	struct image img;
	struct store st;
	/* Its data files mapped (read-only): a comparison reads raw chunks where they lie. */
	const uint8_t *map[MAX_FILES];
	uint64_t maplen[MAX_FILES];
};

struct save_job {
	struct item *items;
	size_t nitems, next; /* next: the next item to take, shared */
	uint32_t codec;
	const struct store *parent; /* refer to its unchanged pages, or NULL */
	/* --base where writes were not tracked since it: what is unchanged is found by comparing
	 * with its pages (read through MAPS where raw). */
	bool compare;
	/* Tracked: a written page that still equals the parent's raw, mapped page is referred
	 * to (refine_item), so a write of the same bytes, or a page counted only because its
	 * tracking block was (wpfaults.c), costs the image nothing. */
	bool refine;
	/* --base: the items are the file's data (SEEK_DATA over all of it, once), so no page
	 * of them is looked up again: SEEK_HOLE walks all the data after where it starts. */
	bool data_items;
	const struct memfile_parent *mp;
	/* --golden: every chunk raw in pages.0 at its own memory offset (files[0], shared). */
	bool identity;
	struct image_out *out;
	struct data_file files[MAX_FILES]; /* one per worker, made on its first chunk */
	uint32_t nfiles;		   /* made so far, shared */
	bool failed;
	char *err;
	pthread_mutex_t lock; /* err */
};

static void job_fail(struct save_job *j, int e, const char *what)
{
	pthread_mutex_lock(&j->lock);
	if (!j->err && asprintf(&j->err, "%s: %s", what, strerror(-e)) < 0)
		j->err = NULL;
	__atomic_store_n(&j->failed, true, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&j->lock);
}

struct worker_state {
	struct compressor *c;
	uint8_t *buf;
	size_t cap;
	struct chunk_reader rd; /* --base by comparison: the base's chunks that are not raw */
	bool rd_ready;
	uint8_t *cell;
};

/* Stores the LEN bytes of memory at OFF (a run of non-zero pages) as chunk CH, in worker W's
 * data file. */
static int store_chunk(struct save_job *j, int w, struct worker_state *ws, uint64_t off,
		       uint64_t len, struct chunk *ch)
{
	const uint8_t *src = (const uint8_t *)mf.base + off;
	struct data_file *f = &j->files[w];
	const void *data = src;
	size_t stored = len;
	int e;

	*ch = (struct chunk){.mem_off = off, .pages = len / MEMFILE_PAGE, .how = HOW_RAW};
	if (j->identity) {
		/* The golden form: the data file is the memory file, with its holes. */
		ch->crc = crc32c(0, src, len);
		if ((e = mf_pio_all(j->files[0].fd, (void *)src, len, off, true)))
			return e;
		ch->file_off = off;
		ch->stored = len;
		return 0;
	}
	if (!compress_looks_incompressible(src, len)) {
		if (!ws->c && !(ws->c = compressor_new(j->codec)))
			return -ENOMEM;
		if (!ws->buf) {
			ws->cap = compress_bound(j->codec, CHUNK_BYTES);
			if (!(ws->buf = malloc(ws->cap)))
				return -ENOMEM;
		}
		size_t zlen = ws->cap;
		/* Worth it only if it saves an eighth: raw chunks cost nothing to restore. */
		if (compress_buf(ws->c, src, len, ws->buf, &zlen) == 0 && zlen < len - len / 8) {
			ch->how = HOW_PACKED;
			data = ws->buf;
			stored = zlen;
		}
	}
	if (f->fd < 0) {
		char name[32], *err = NULL;
		f->no = __atomic_fetch_add(&j->nfiles, 1, __ATOMIC_RELAXED);
		snprintf(name, sizeof(name), "pages.%u", f->no);
		f->fd = image_create_file(j->out, name, &err);
		free(err);
		if (f->fd < 0)
			return f->fd;
	}
	ch->where = f->no;
	/* Raw chunks sit at page-aligned offsets, so the file could be mapped or copied by page;
	 * the gap before one is a hole. */
	uint64_t at =
	    ch->how == HOW_RAW ? (f->end + MEMFILE_PAGE - 1) & ~(MEMFILE_PAGE - 1) : f->end;
	ch->crc = crc32c(0, data, stored);
	if ((e = mf_pio_all(f->fd, (void *)data, stored, at, true)))
		return e;
	ch->file_off = at;
	ch->stored = stored;
	f->end = at + stored;
	return 0;
}

/* Room for one more chunk of IT (most items make one or two). */
static struct chunk *item_chunks(struct item *it)
{
	if (it->nch == it->cap) {
		uint32_t cap = it->cap ? 2 * it->cap : 2;
		struct chunk *v = realloc(it->ch, cap * sizeof(*v));
		if (!v)
			return NULL;
		it->ch = v;
		it->cap = cap;
	}
	return &it->ch[it->nch];
}

/* The runs of non-zero pages in [P, END), stored as chunks of IT. */
static int save_runs(struct save_job *j, int w, struct worker_state *ws, struct item *it,
		     uint64_t p, uint64_t end)
{
	while (p < end) {
		while (p < end && page_is_zero(mf.base + p))
			p += MEMFILE_PAGE;
		uint64_t run = p;
		while (p < end && !page_is_zero(mf.base + p))
			p += MEMFILE_PAGE;
		if (p == run)
			continue;
		struct chunk *ch = item_chunks(it);
		if (!ch)
			return -ENOMEM;
		int e = store_chunk(j, w, ws, run, p - run, ch);
		if (e)
			return e;
		it->nch++;
	}
	return 0;
}

uint64_t store_chunk_after(const struct store *s, uint64_t off)
{
	uint64_t lo = 0, hi = s->nch;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (s->ch[mid].mem_off + (uint64_t)s->ch[mid].pages * MEMFILE_PAGE <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* With a parent: the pages of IT that changed since it are saved (if not zero); the others
 * are the parent's, referred to where it holds them (in its own files, or in the image its
 * reference names: references always point where the pages are), and zero where it does not
 * (it did not save them because they were). */
static bool item_dirty(const struct save_job *j, const struct item *it, uint64_t p)
{
	if (j->compare || j->refine)
		return it->differs >> ((p % CHUNK_BYTES) / MEMFILE_PAGE) & 1;
	return memfile_track_dirty(p / MEMFILE_PAGE);
}

/* --base without tracking: which pages of IT differ from the base's (zero where the base has
 * no chunk). Raw chunks are compared in the base's mapped file, the others once read. */
static int compare_item(struct save_job *j, struct worker_state *ws, struct item *it)
{
	const struct store *ps = j->parent;
	uint64_t p = it->off, end = it->off + it->len, k = store_chunk_after(ps, p);

	it->differs = 0;
	for (; p < end; p += MEMFILE_PAGE) {
		const uint8_t *now = (const uint8_t *)mf.base + p, *was = NULL;
		while (k < ps->nch && ps->ch[k].mem_off + ps->ch[k].pages * MEMFILE_PAGE <= p)
			k++;
		if (k < ps->nch && ps->ch[k].mem_off <= p) {
			const struct chunk *c = &ps->ch[k];
			uint64_t in = p - c->mem_off;
			if (c->how == HOW_RAW && j->mp->map[c->where])
				was = j->mp->map[c->where] + c->file_off + in;
			else {
				if (!ws->rd_ready) {
					if (chunk_reader_init(&ws->rd) ||
					    !(ws->cell = malloc(CHUNK_BYTES)))
						return -ENOMEM;
					ws->rd_ready = true;
				}
				/* Read once per item: its pages are in one cell, so in few chunks.
				 */
				if (in == 0 || p == it->off) {
					const char *why = store_read_chunk((struct store *)ps, c,
									   &ws->rd, ws->cell);
					if (why)
						return -EIO;
				}
				was = ws->cell + in;
			}
		}
		if (was ? memcmp(now, was, MEMFILE_PAGE) : !page_is_zero((const char *)now))
			it->differs |= 1ULL << ((p % CHUNK_BYTES) / MEMFILE_PAGE);
	}
	return 0;
}

/* Tracked: which written pages of IT are to be saved: all but those whose bytes equal the
 * parent's where it holds them raw in a mapped file (a golden image). Only data is read: a
 * hole (memory the guest gave back) read through the mapping would be filled. */
static void refine_item(const struct save_job *j, struct item *it)
{
	const struct store *ps = j->parent;
	uint64_t end = it->off + it->len, k = store_chunk_after(ps, it->off);

	it->differs = 0;
	for (uint64_t p = it->off; p < end; p += MEMFILE_PAGE) {
		if (!memfile_track_dirty(p / MEMFILE_PAGE))
			continue;
		uint64_t q = p, data = p, stop = p;
		while (q < end && memfile_track_dirty(q / MEMFILE_PAGE))
			q += MEMFILE_PAGE;
		for (uint64_t at = p; at < q; at += MEMFILE_PAGE) {
			const uint64_t bit = 1ULL << ((at % CHUNK_BYTES) / MEMFILE_PAGE);
			if (at >= stop && !mf_next_data(at, q, &data, &stop))
				data = stop = q; /* a hole to the run's end */
			while (k < ps->nch &&
			       ps->ch[k].mem_off + ps->ch[k].pages * MEMFILE_PAGE <= at)
				k++;
			const struct chunk *c =
			    k < ps->nch && ps->ch[k].mem_off <= at ? &ps->ch[k] : NULL;
			if (at >= data && c && c->how == HOW_RAW && j->mp->map[c->where] &&
			    !memcmp((const uint8_t *)mf.base + at,
				    j->mp->map[c->where] + c->file_off + (at - c->mem_off),
				    MEMFILE_PAGE))
				continue;
			it->differs |= bit;
		}
		p = q;
	}
}

static int save_item_parent(struct save_job *j, int w, struct worker_state *ws, struct item *it)
{
	const struct store *ps = j->parent;
	uint64_t p = it->off, end = it->off + it->len, k = store_chunk_after(ps, p);
	int e;

	if (j->compare && (e = compare_item(j, ws, it)))
		return e;
	if (j->refine)
		refine_item(j, it);
	while (p < end) {
		if (item_dirty(j, it, p)) {
			uint64_t q = p, data, stop;
			while (q < end && item_dirty(j, it, q))
				q += MEMFILE_PAGE;
			/* Only where there is data: reading a hole through the mapping would fill
			 * it with a page. A compared item is data (and SEEK_HOLE walks all the data
			 * that follows, which made a delta of a large guest quadratic). */
			if (j->data_items) {
				if ((e = save_runs(j, w, ws, it, p, q)))
					return e;
				p = q;
				continue;
			}
			for (uint64_t at = p; at < q && mf_next_data(at, q, &data, &stop);
			     at = stop)
				if ((e = save_runs(j, w, ws, it, data & ~(MEMFILE_PAGE - 1),
						   (stop + MEMFILE_PAGE - 1) &
						       ~(MEMFILE_PAGE - 1))))
					return e;
			p = q;
			continue;
		}
		while (k < ps->nch && ps->ch[k].mem_off + ps->ch[k].pages * MEMFILE_PAGE <= p)
			k++;
		if (k >= ps->nch || ps->ch[k].mem_off > p) {
			/* Not in the parent and unchanged: zero, unless something else saved it
			 * then (clean file pages): look, where it is not a hole. */
			uint64_t data, stop;
			if ((j->data_items || mf_next_data(p, p + MEMFILE_PAGE, &data, &stop)) &&
			    (e = save_runs(j, w, ws, it, p, p + MEMFILE_PAGE)))
				return e;
			p += MEMFILE_PAGE;
			continue;
		}
		const struct chunk *pc = &ps->ch[k];
		uint64_t stop = pc->mem_off + pc->pages * MEMFILE_PAGE, q = p;
		if (stop > end)
			stop = end;
		while (q < stop && !item_dirty(j, it, q))
			q += MEMFILE_PAGE;
		struct chunk *ch = item_chunks(it);
		if (!ch)
			return -ENOMEM;
		*ch = (struct chunk){.mem_off = p,
				     .pages = (q - p) / MEMFILE_PAGE,
				     .how = HOW_REF,
				     .where = pc->how == HOW_REF ? 1 + pc->where : 0};
		it->nch++;
		p = q;
	}
	return 0;
}

static void save_worker(void *arg, int w)
{
	struct save_job *j = arg;
	struct worker_state ws = {0};

	for (;;) {
		size_t k = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (k >= j->nitems || __atomic_load_n(&j->failed, __ATOMIC_RELAXED))
			break;
		struct item *it = &j->items[k];
		int e = j->parent ? save_item_parent(j, w, &ws, it)
				  : save_runs(j, w, &ws, it, it->off, it->off + it->len);
		if (e) {
			job_fail(j, e, "cannot write memory");
			break;
		}
	}
	compressor_free(ws.c);
	free(ws.buf);
	if (ws.rd_ready)
		chunk_reader_free(&ws.rd);
	free(ws.cell);
}

static int add_extent(struct extent **v, size_t *n, size_t *cap, uint64_t off, uint64_t len)
{
	if (*n == *cap) {
		size_t nc = *cap ? 2 * *cap : 256;
		struct extent *nv = realloc(*v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = (struct extent){off, len};
	return 0;
}

/* Where the pages to save may be: the file's data, found with SEEK_DATA. With a parent, only
 * the parent's chunks and the data of the ranges changed since: SEEK_DATA over a large file
 * walks every page of it, which for an unchanged gigabyte was most of the checkpoint. */
static int find_data(const struct store *parent, struct extent **out, size_t *nout)
{
	struct extent *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t data, stop;
	int e = 0;

	if (!parent) {
		for (uint64_t at = 0; !e && at < mf.bump && mf_next_data(at, mf.bump, &data, &stop);
		     at = stop)
			e = add_extent(&v, &n, &cap, data, stop - data);
		goto out;
	}
	for (uint64_t k = 0; !e && k < parent->nch; k++) {
		uint64_t off = parent->ch[k].mem_off, len = parent->ch[k].pages * MEMFILE_PAGE;
		if (off < mf.bump)
			e = add_extent(&v, &n, &cap, off,
				       len < mf.bump - off ? len : mf.bump - off);
	}
	for (uint64_t p = 0; !e && p < mf.bump / MEMFILE_PAGE;) {
		if (!memfile_track_dirty(p)) {
			p++;
			continue;
		}
		uint64_t q = p;
		while (q < mf.bump / MEMFILE_PAGE && memfile_track_dirty(q))
			q++;
		for (uint64_t at = p * MEMFILE_PAGE;
		     !e && mf_next_data(at, q * MEMFILE_PAGE, &data, &stop); at = stop)
			e = add_extent(&v, &n, &cap, data, stop - data);
		p = q;
	}
	qsort(v, n, sizeof(*v), extent_cmp);
	/* Merged: the ranges of the changed data may overlap the parent's chunks. */
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && v[i].off <= v[m - 1].off + v[m - 1].len) {
			uint64_t end = v[i].off + v[i].len;
			if (end > v[m - 1].off + v[m - 1].len)
				v[m - 1].len = end - v[m - 1].off;
		} else {
			v[m++] = v[i];
		}
	}
	n = m;
out:
	if (e)
		free(v);
	*out = e ? NULL : v;
	*nout = e ? 0 : n;
	return e;
}

/* The work: the ranges find_data gives, without the skipped ones, cut at the grid. */
static int make_items(const struct store *parent, struct item **out, size_t *nout, uint64_t *bytes)
{
	struct item *v = NULL;
	struct extent *src;
	size_t n = 0, cap = 0, cur = 0, nsrc;
	int e;

	*bytes = 0;
	if (skip.n)
		qsort(skip.v, skip.n, sizeof(*skip.v), extent_cmp);
	if ((e = find_data(parent, &src, &nsrc)))
		return e;
	for (size_t i = 0; i < nsrc; i++) {
		/* Holes are page-aligned on tmpfs-backed memfds; round anyway. */
		uint64_t p = src[i].off & ~(MEMFILE_PAGE - 1);
		uint64_t stop = (src[i].off + src[i].len + MEMFILE_PAGE - 1) & ~(MEMFILE_PAGE - 1);
		while (p < stop) {
			while (cur < skip.n && skip.v[cur].off + skip.v[cur].len <= p)
				cur++;
			if (cur < skip.n && skip.v[cur].off <= p) {
				p = skip.v[cur].off + skip.v[cur].len;
				continue;
			}
			uint64_t end = (p / CHUNK_BYTES + 1) * CHUNK_BYTES;
			if (end > stop)
				end = stop;
			if (cur < skip.n && skip.v[cur].off < end)
				end = skip.v[cur].off & ~(MEMFILE_PAGE - 1);
			if (end <= p) {
				p += MEMFILE_PAGE;
				continue;
			}
			if (n == cap) {
				size_t nc = cap ? 2 * cap : 256;
				struct item *nv = realloc(v, nc * sizeof(*nv));
				if (!nv) {
					free(v);
					free(src);
					return -ENOMEM;
				}
				v = nv;
				cap = nc;
			}
			v[n++] = (struct item){.off = p, .len = end - p};
			*bytes += end - p;
			p = end;
		}
	}
	free(src);
	*out = v;
	*nout = n;
	return 0;
}

static void enc_chunk(struct enc *e, const struct chunk *c)
{
	enc_u64(e, c->mem_off);
	enc_u32(e, c->pages);
	enc_u8(e, c->how);
	enc_u32(e, c->where);
	enc_u64(e, c->file_off);
	enc_u64(e, c->stored);
	enc_u32(e, c->crc);
	if (c->how == HOW_INLINE)
		enc_raw(e, c->inline_data, (size_t)c->pages * MEMFILE_PAGE);
}

/* Whether ITEMS hold at most INLINE_MAX bytes of non-zero pages, none of them looking
 * incompressible (those are stored raw, in a file, and not compressed with the section). */
static bool fits_inline(const struct item *items, size_t n, uint64_t bytes)
{
	uint64_t data = 0;

	if (bytes > 64 * INLINE_MAX)
		return false; /* not worth looking */
	for (size_t i = 0; i < n; i++)
		for (uint64_t p = items[i].off, end = p + items[i].len; p < end;
		     p += MEMFILE_PAGE) {
			if (page_is_zero(mf.base + p))
				continue;
			if ((data += MEMFILE_PAGE) > INLINE_MAX ||
			    compress_looks_incompressible(mf.base + p, MEMFILE_PAGE))
				return false;
		}
	return true;
}

/* A small image: every run of non-zero pages inline, in order, by this thread. */
static void save_inline(struct enc *e, const struct item *items, size_t n, uint64_t *pages)
{
	uint64_t count = 0;

	for (size_t i = 0; i < n; i++)
		for (uint64_t p = items[i].off, end = p + items[i].len; p < end;) {
			while (p < end && page_is_zero(mf.base + p))
				p += MEMFILE_PAGE;
			uint64_t run = p;
			while (p < end && !page_is_zero(mf.base + p))
				p += MEMFILE_PAGE;
			count += p > run;
		}
	enc_u32(e, 0); /* no data files */
	enc_u32(e, 0); /* no images referred to */
	enc_u64(e, count);
	for (size_t i = 0; i < n; i++)
		for (uint64_t p = items[i].off, end = p + items[i].len; p < end;) {
			while (p < end && page_is_zero(mf.base + p))
				p += MEMFILE_PAGE;
			uint64_t run = p;
			while (p < end && !page_is_zero(mf.base + p))
				p += MEMFILE_PAGE;
			if (p == run)
				continue;
			struct chunk c = {.mem_off = run,
					  .pages = (p - run) / MEMFILE_PAGE,
					  .how = HOW_INLINE,
					  .stored = p - run,
					  .inline_data = mf.base + run};
			c.crc = crc32c(0, c.inline_data, c.stored);
			enc_chunk(e, &c);
			*pages += c.pages;
		}
}

int memfile_parent_open(const char *path, int dirfd, bool base, struct memfile_parent **out,
			char **err)
{
	struct memfile_parent *p = calloc(1, sizeof(*p));
	const char *opt = base ? "--base" : "--parent";
	char *why = NULL;
	int e;

	*err = NULL;
	if (!p || !(p->path = strdup(path))) {
		free(p);
		if (dirfd >= 0)
			close(dirfd);
		return failf(err, -ENOMEM, "out of memory");
	}
	p->img.dirfd = -1;
	if ((e = open_index(path, dirfd, &p->img, &p->st, &why))) {
		failf(err, e, "cannot checkpoint: %s: %s", opt, why ? why : strerror(-e));
		free(why);
		free(p->path);
		free(p);
		return e;
	}
	/* A delta names its base only: one level, so that a slot (a copy of the base) plus the
	 * delta's own pages is the whole memory. */
	if (base && p->st.nimages) {
		failf(err, -EINVAL,
		      "cannot checkpoint: --base: image '%s' refers to other images; a base must "
		      "be a full image (checkpoint --golden)",
		      path);
		memfile_parent_close(p);
		return -EINVAL;
	}
	/* Raw chunks are compared where they lie. A mapping that fails only costs reads. */
	for (uint32_t i = 0; base && i < p->st.nfiles; i++) {
		if (!p->st.sizes[i])
			continue;
		void *m = mmap(NULL, p->st.sizes[i], PROT_READ, MAP_SHARED, p->st.fds[i], 0);
		if (m != MAP_FAILED) {
			p->map[i] = m;
			p->maplen[i] = p->st.sizes[i];
		}
	}
	*out = p;
	return 0;
}

bool memfile_parent_usable(const struct memfile_parent *p)
{
	return p && memfile_track_base_is(p->st.id) && 1 + p->st.nimages <= MAX_IMAGES;
}

void memfile_parent_close(struct memfile_parent *p)
{
	if (!p)
		return;
	for (int i = 0; i < MAX_FILES; i++)
		if (p->map[i])
			munmap((void *)p->map[i], p->maplen[i]);
	store_close(&p->st);
	image_free(&p->img);
	free(p->path);
	free(p);
}

/* The images a child of P refers to: P, then those P refers to (so that a reference always
 * names the image that holds the pages). */
static void enc_images(struct enc *e, const struct memfile_parent *p)
{
	if (!p) {
		enc_u32(e, 0);
		return;
	}
	enc_u32(e, 1 + p->st.nimages);
	enc_raw(e, p->st.id, ID_LEN);
	enc_str(e, p->path);
	for (uint32_t i = 0; i < p->st.nimages; i++) {
		enc_raw(e, p->st.refs[i].id, ID_LEN);
		enc_str(e, p->st.refs[i].path);
	}
}

/* An image named by its content (--golden, --base): a 128-bit hash of what the index says the
 * memory is: the allocator, each chunk's place and the CRC-32C of its bytes, the images it
 * refers to. Two lanes of a 64-bit multiply-xorshift mix. It tells a base from another one by
 * accident (a re-made golden image, a copy of another); it is no defence against an image
 * forged to collide (the image's MAC is). */
struct content_hash {
	uint64_t a, b;
};

static void hash_u64(struct content_hash *h, uint64_t v)
{
	h->a = (h->a ^ v) * 0x9e3779b97f4a7c15ULL;
	h->a ^= h->a >> 29;
	h->b = (h->b + v) * 0xbf58476d1ce4e5b9ULL;
	h->b ^= h->b >> 31;
}

static void content_id(const struct item *items, size_t n, const struct memfile_parent *parent,
		       uint8_t id[ID_LEN])
{
	struct content_hash h = {0x6d696e6973656e74ULL, 0x7279676f6c64656eULL};

	hash_u64(&h, mf.bump);
	for (size_t i = 0; i < mf.nfree; i++) {
		hash_u64(&h, mf.free[i].off);
		hash_u64(&h, mf.free[i].len);
	}
	if (parent) {
		uint64_t w[2];
		memcpy(w, parent->st.id, ID_LEN);
		hash_u64(&h, w[0]);
		hash_u64(&h, w[1]);
	}
	for (size_t i = 0; i < n; i++)
		for (uint32_t k = 0; k < items[i].nch; k++) {
			const struct chunk *c = &items[i].ch[k];
			hash_u64(&h, c->mem_off);
			hash_u64(&h, (uint64_t)c->pages << 8 | (c->how == HOW_REF));
			hash_u64(&h, c->crc);
		}
	/* A final avalanche (each lane through the other's value and a 64-bit finaliser), so
	 * that close inputs give unrelated ids. */
	uint64_t x = h.a ^ (h.b << 1 | h.b >> 63), y = h.b + h.a;
	for (int r = 0; r < 2; r++) {
		x = (x ^ x >> 33) * 0xff51afd7ed558ccdULL;
		y = (y ^ y >> 33) * 0xc4ceb9fe1a85ec53ULL;
	}
	h.a = x ^ x >> 33;
	h.b = y ^ y >> 33;
	memcpy(id, &h.a, 8);
	memcpy(id + 8, &h.b, 8);
}

int memfile_save(struct enc *e, const struct memfile_save_opts *o, struct memfile_save_stats *st,
		 char **err)
{
	struct save_job j = {.codec = o->codec, .out = o->out, .lock = PTHREAD_MUTEX_INITIALIZER};
	uint8_t id[ID_LEN];
	uint64_t bytes;
	int ret = 0;

	*err = NULL;
	*st = (struct memfile_save_stats){0};
	for (int i = 0; i < MAX_FILES; i++)
		j.files[i].fd = -1;
	/* A sandbox restored lazily may not have all its pages yet: SEEK_DATA would take the
	 * missing ones for holes. */
	memfile_lazy_ensure(0, mf.bump);
	/* What was written since the last image (the guest is stopped): also what makes the next
	 * base exact, whether or not this image uses it. */
	memfile_track_harvest();
	const struct memfile_parent *parent = memfile_parent_usable(o->parent) ? o->parent : NULL;
	/* A base is used whatever tracking knows: where it does not, by comparison. */
	if (!parent && o->base && o->parent) {
		parent = o->parent;
		j.compare = true;
	}
	j.mp = parent;
	j.parent = parent ? &parent->st : NULL;
	j.refine = parent && !j.compare;
	j.identity = o->golden;
	enc_u64(e, mf.bump);
	enc_u64(e, mf.nfree);
	for (size_t i = 0; i < mf.nfree; i++) {
		enc_u64(e, mf.free[i].off);
		enc_u64(e, mf.free[i].len);
	}
	/* The memory's identity, which a later image's --parent names. */
	if (getrandom(id, sizeof(id), 0) != sizeof(id)) {
		ret = failf(err, -EIO, "cannot checkpoint: no random bytes for the image's id");
		goto out;
	}
	size_t id_at = e->len;
	enc_raw(e, id, sizeof(id));
	enc_u32(e, CHUNK_PAGES);
	/* In a slot, freed memory keeps its pages until it is used again (memfile_free). */
	for (size_t i = 0; memfile_slot_active() && i < mf.nfree; i++)
		if ((ret = memfile_save_skip(mf.free[i].off, mf.free[i].len))) {
			ret = failf(err, ret, "cannot checkpoint: out of memory");
			goto out;
		}
	/* Compared with a base: the items are the file's data. Tracked: the base's chunks and the
	 * changed runs, as for --parent (the file's data may be much more: a guest that reads
	 * memory it never wrote gets zero pages there, unchanged since the base, and each was
	 * read to find it zero). */
	j.data_items = j.compare;
	if ((ret = make_items(j.data_items ? NULL : j.parent, &j.items, &j.nitems, &bytes))) {
		ret = failf(err, ret, "cannot checkpoint: out of memory");
		goto out;
	}
	if (o->all_inline ||
	    (!o->no_inline && !parent && !o->golden && fits_inline(j.items, j.nitems, bytes))) {
		save_inline(e, j.items, j.nitems, &st->pages);
		goto out;
	}
	if (o->golden) {
		char *why = NULL;
		j.files[0].fd = image_create_file(j.out, "pages.0", &why);
		free(why);
		if (j.files[0].fd < 0) {
			ret = failf(err, j.files[0].fd, "cannot checkpoint: pages.0: %s",
				    strerror(-j.files[0].fd));
			goto out;
		}
		j.nfiles = 1;
	}
	/* One thread per CPU, but none that would have less than a few chunks to do. */
	int n = workers_count();
	if ((uint64_t)n > bytes / (4 * CHUNK_BYTES))
		n = bytes / (4 * CHUNK_BYTES) ? (int)(bytes / (4 * CHUNK_BYTES)) : 1;
	workers_run(n, save_worker, &j);
	if (j.failed) {
		ret =
		    failf(err, -EIO, "cannot checkpoint: %s", j.err ? j.err : "cannot save memory");
		goto out;
	}
	/* The data files by number: pages.0, pages.1... in the order the workers made them. */
	uint64_t sizes[MAX_FILES] = {0};
	for (int i = 0; i < MAX_FILES; i++)
		if (j.files[i].fd >= 0)
			sizes[j.files[i].no] = j.files[i].end;
	if (o->golden)
		for (size_t i = 0; i < j.nitems; i++)
			for (uint32_t k = 0; k < j.items[i].nch; k++) {
				const struct chunk *c = &j.items[i].ch[k];
				if (c->file_off + c->stored > sizes[0])
					sizes[0] = c->file_off + c->stored;
			}
	enc_u32(e, j.nfiles);
	for (uint32_t i = 0; i < j.nfiles; i++) {
		enc_u64(e, sizes[i]);
		st->file_bytes += sizes[i];
	}
	enc_images(e, parent);
	uint64_t count = 0;
	for (size_t i = 0; i < j.nitems; i++)
		count += j.items[i].nch;
	enc_u64(e, count);
	for (size_t i = 0; i < j.nitems; i++)
		for (uint32_t k = 0; k < j.items[i].nch; k++) {
			const struct chunk *c = &j.items[i].ch[k];
			enc_chunk(e, c);
			st->pages += c->pages;
			if (c->how == HOW_REF)
				st->ref_pages += c->pages;
		}
	if (o->golden || o->base) {
		content_id(j.items, j.nitems, parent, id);
		if (enc_ok(e))
			memcpy(e->buf + id_at, id, ID_LEN);
	}
out:
	for (int i = 0; i < MAX_FILES; i++)
		if (j.files[i].fd >= 0)
			close(j.files[i].fd);
	for (size_t i = 0; i < j.nitems; i++)
		free(j.items[i].ch);
	free(j.items);
	memfile_save_skip_clear();
	pthread_mutex_destroy(&j.lock);
	free(j.err);
	if (!ret && !enc_ok(e))
		ret = -ENOMEM;
	if (!ret) {
		memcpy(last_image.id, id, ID_LEN);
		last_image.set = true;
	}
	return ret;
}

/* --- loading ------------------------------------------------------------------------------- */

bool memfile_image_id(uint8_t id[ID_LEN])
{
	if (last_image.set)
		memcpy(id, last_image.id, ID_LEN);
	return last_image.set;
}

void store_close_files(struct store *s)
{
	for (uint32_t i = 0; i < s->nfiles; i++)
		if (s->fds[i] >= 0)
			close(s->fds[i]);
	s->nfiles = 0;
	for (uint32_t i = 0; i < s->nimages; i++)
		if (s->refs[i].st)
			store_close_files(s->refs[i].st);
}

void store_close(struct store *s)
{
	for (uint32_t i = 0; i < s->nfiles; i++)
		if (s->fds[i] >= 0)
			close(s->fds[i]);
	s->nfiles = 0;
	for (uint32_t i = 0; i < s->nimages; i++) {
		free(s->refs[i].path);
		if (s->refs[i].st) {
			store_close(s->refs[i].st);
			free(s->refs[i].st);
		}
		if (s->refs[i].img) {
			image_free(s->refs[i].img);
			free(s->refs[i].img);
		}
	}
	s->nimages = 0;
	free(s->ch);
	s->ch = NULL;
}

/* Reads the allocator state, common to both versions: into the memory file when INSTALL,
 * else only checked (the bump in *BUMP). */
static int read_allocator(struct dec *d, bool install, uint64_t *bump_out)
{
	uint64_t bump = dec_max(d, MEMFILE_USABLE, "memory size");
	uint64_t nfree = dec_max(d, bump / MEMFILE_PAGE, "free list");
	uint64_t prev_end = 0;

	if (!dec_ok(d) || bump % MEMFILE_PAGE)
		return dec_fail(d, "bad memory allocator state");
	/* Each entry takes 16 bytes of the record: a count the record cannot hold is a lie. */
	if (nfree > (d->len - d->off) / 16)
		return dec_fail(d, "bad memory free list");
	struct extent *fr = calloc(nfree ? nfree : 1, sizeof(*fr));
	if (!fr)
		return dec_fail(d, "out of memory");
	for (uint64_t i = 0; i < nfree; i++) {
		fr[i].off = dec_u64(d);
		fr[i].len = dec_u64(d);
		if (fr[i].off < prev_end || fr[i].off % MEMFILE_PAGE || fr[i].len % MEMFILE_PAGE ||
		    !fr[i].len || fr[i].off > bump || fr[i].len > bump - fr[i].off) {
			free(fr);
			return dec_fail(d, "bad memory free list");
		}
		prev_end = fr[i].off + fr[i].len;
	}
	*bump_out = bump;
	if (!install) {
		free(fr);
		return 0;
	}
	free(mf.free);
	mf.free = fr;
	mf.nfree = mf.capfree = nfree;
	mf.bump = bump;
	if (bump > mf.high)
		mf.high = bump;
	return 0;
}

/* Version 1: runs of pages inside the section. */
static int load_v1(struct dec *d)
{
	uint64_t loaded = 0;

	for (;;) {
		uint64_t off = dec_u64(d);
		if (off == UINT64_MAX || !dec_ok(d))
			break;
		uint64_t npages = dec_u64(d);
		if (off % MEMFILE_PAGE || off > mf.bump || npages > (mf.bump - off) / MEMFILE_PAGE)
			return dec_fail(d, "bad memory extent");
		const void *p = dec_view(d, npages * MEMFILE_PAGE);
		loaded += npages * MEMFILE_PAGE;
		if (mf.limit && loaded > mf.limit)
			return dec_fail(d, "the image's memory does not fit in --memory");
		if (p)
			memcpy(mf.base + off, p, npages * MEMFILE_PAGE);
	}
	return dec_ok(d) ? 0 : -EINVAL;
}

int store_parse(struct dec *d, const struct memfile_load_opts *o, uint64_t bump, struct store *s,
		char **err)
{
	char name[64];

	memset(s, 0, sizeof(*s));
	s->codec = o->img->codec;
	s->dir = o->dir;
	s->bump = bump;
	dec_raw(d, s->id, sizeof(s->id));
	uint32_t grid = dec_u32(d);
	if (!dec_ok(d) || grid != CHUNK_PAGES)
		return dec_fail(d, "bad memory chunk size");
	uint32_t nfiles = dec_u32(d);
	if (!dec_ok(d) || nfiles > MAX_FILES)
		return dec_fail(d, "bad memory file count");
	for (uint32_t i = 0; i < nfiles; i++) {
		uint64_t size;
		snprintf(name, sizeof(name), "pages.%u", i);
		uint64_t want = dec_u64(d);
		if (!dec_ok(d))
			return -EINVAL;
		int fd = image_open_file(o->img, o->dir, name, &size, err);
		if (fd < 0)
			return fd;
		s->fds[s->nfiles] = fd;
		s->sizes[s->nfiles++] = size;
		if (size != want)
			return failf(err, -EINVAL, "image '%s' is truncated (%s)", o->dir, name);
	}
	uint32_t nimages = dec_u32(d);
	if (!dec_ok(d) || nimages > MAX_IMAGES)
		return dec_fail(d, "bad image references");
	for (uint32_t i = 0; i < nimages; i++) {
		struct ref_image *r = &s->refs[s->nimages];
		dec_raw(d, r->id, ID_LEN);
		char *path = dec_str(d);
		if (!path)
			return dec_fail(d, "bad image reference");
		s->nimages++;
		r->path = path;
		if (path[0] != '/' || strlen(path) >= 4096)
			return dec_fail(d, "bad image reference");
	}
	/* An index entry takes 37 bytes: more chunks than the record holds, or than the file
	 * has pages, is a lie. */
	s->nch = dec_u64(d);
	if (!dec_ok(d) || s->nch > (d->len - d->off) / 37 || s->nch > bump / MEMFILE_PAGE)
		return dec_fail(d, "bad memory chunk count");
	if (!(s->ch = calloc(s->nch ? s->nch : 1, sizeof(*s->ch))))
		return dec_fail(d, "out of memory");
	uint64_t prev_end = 0;
	for (uint64_t i = 0; i < s->nch; i++) {
		struct chunk *c = &s->ch[i];
		c->mem_off = dec_u64(d);
		c->pages = dec_u32(d);
		c->how = dec_u8(d);
		c->where = dec_u32(d);
		c->file_off = dec_u64(d);
		c->stored = dec_u64(d);
		c->crc = dec_u32(d);
		if (!dec_ok(d))
			return -EINVAL;
		uint64_t len = (uint64_t)c->pages * MEMFILE_PAGE;
		/* In order, apart, page-aligned, within one grid cell and the allocated file. */
		if (c->mem_off % MEMFILE_PAGE || c->mem_off < prev_end || c->pages == 0 ||
		    c->pages > CHUNK_PAGES || c->mem_off > bump || len > bump - c->mem_off ||
		    c->mem_off / CHUNK_BYTES != (c->mem_off + len - 1) / CHUNK_BYTES)
			return dec_fail(d, "bad memory chunk %llu", (unsigned long long)i);
		prev_end = c->mem_off + len;
		switch (c->how) {
		case HOW_INLINE:
			if (c->stored != len || c->where || c->file_off)
				return dec_fail(d, "bad memory chunk %llu", (unsigned long long)i);
			c->inline_data = dec_view(d, len);
			if (!c->inline_data)
				return -EINVAL;
			break;
		case HOW_RAW:
		case HOW_PACKED:
			if (c->where >= s->nfiles || c->stored == 0 ||
			    (c->how == HOW_RAW ? c->stored != len
					       : c->stored > compress_bound(s->codec, len)) ||
			    c->file_off > s->sizes[c->where] ||
			    c->stored > s->sizes[c->where] - c->file_off)
				return dec_fail(d, "bad memory chunk %llu", (unsigned long long)i);
			break;
		case HOW_REF:
			if (c->where >= s->nimages || c->stored || c->file_off || c->crc)
				return dec_fail(d, "bad memory chunk %llu", (unsigned long long)i);
			break;
		default:
			return dec_fail(d, "bad memory chunk %llu", (unsigned long long)i);
		}
	}
	return 0;
}

bool store_is_mappable(const struct store *s)
{
	if (s->nimages || s->nfiles > 1)
		return false;
	for (uint64_t i = 0; i < s->nch; i++)
		if (s->ch[i].how != HOW_RAW || s->ch[i].file_off != s->ch[i].mem_off)
			return false;
	return s->nfiles == 1 || s->nch == 0;
}

static void hex_id(const uint8_t id[ID_LEN], char out[2 * ID_LEN + 1])
{
	for (int i = 0; i < ID_LEN; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
}

/* Reads the version 2 image at PATH and its memory index into IMG and ST. */
static int open_index(const char *path, int dirfd, struct image *img, struct store *st, char **err)
{
	struct memfile_load_opts o = {.img = img, .dir = path};
	uint64_t bump;
	int ret;

	memset(st, 0, sizeof(*st));
	if ((ret = dirfd >= 0 ? image_read_fd(dirfd, path, img, err) : image_read(path, img, err)))
		return ret;
	if (img->version < 2) {
		image_free(img);
		return failf(err, -EINVAL, "image '%s' has format version %u", path, img->version);
	}
	struct image_section *m = image_find(img, "memory");
	if (!m) {
		image_free(img);
		return failf(err, -EINVAL, "image '%s' has no memory section", path);
	}
	struct dec d;
	dec_init(&d, m->data, m->len, NULL);
	ret = read_allocator(&d, false, &bump);
	if (!ret)
		ret = store_parse(&d, &o, bump, st, err);
	if (ret && !*err)
		failf(err, ret, "image '%s' is corrupt (section memory: %s)", path,
		      d.error ? d.error : strerror(-ret));
	dec_free(&d);
	if (ret) {
		store_close(st);
		image_free(img);
	}
	return ret;
}

int store_open_image(const char *path, struct image *img, struct store *st, char **err)
{
	*err = NULL;
	return open_index(path, -1, img, st, err);
}

int store_open_refs(struct store *s, char **err)
{
	for (uint32_t i = 0; i < s->nimages; i++) {
		struct ref_image *r = &s->refs[i];
		char want[2 * ID_LEN + 1], *why = NULL;
		hex_id(r->id, want);
		if (!(r->img = calloc(1, sizeof(*r->img))) || !(r->st = calloc(1, sizeof(*r->st))))
			return failf(err, -ENOMEM, "out of memory");
		r->img->dirfd = -1;
		int e = open_index(r->path, -1, r->img, r->st, &why);
		if (!e && memcmp(r->st->id, r->id, ID_LEN))
			e = failf(&why, -EINVAL, "it is another image");
		if (e) {
			failf(err, e, "image '%s' needs image '%s' (memory id %s): %s", s->dir,
			      r->path, want, why ? why : strerror(-e));
			free(why);
			free(r->st);
			r->st = NULL;
			free(r->img);
			r->img = NULL;
			return e;
		}
	}
	return 0;
}

int chunk_reader_init(struct chunk_reader *r)
{
	size_t bound = compress_bound(IMAGE_CODEC_ZLIB, CHUNK_BYTES);

	memset(r, 0, sizeof(*r));
	if (compress_bound(IMAGE_CODEC_ZSTD, CHUNK_BYTES) > bound)
		bound = compress_bound(IMAGE_CODEC_ZSTD, CHUNK_BYTES);
	r->buf = malloc(bound);
	r->tmp = malloc(CHUNK_BYTES);
	return r->buf && r->tmp ? 0 : -ENOMEM;
}

void chunk_reader_free(struct chunk_reader *r)
{
	for (int i = 0; i < 3; i++)
		compressor_free(r->z[i]);
	free(r->buf);
	free(r->tmp);
}

/* The chunk of S holding [OFF, OFF+LEN), or NULL. */
static const struct chunk *chunk_holding(const struct store *s, uint64_t off, uint64_t len)
{
	uint64_t lo = 0, hi = s->nch;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		const struct chunk *c = &s->ch[mid];
		if (off < c->mem_off)
			hi = mid;
		else if (off >= c->mem_off + (uint64_t)c->pages * MEMFILE_PAGE)
			lo = mid + 1;
		else
			return off + len <= c->mem_off + (uint64_t)c->pages * MEMFILE_PAGE ? c
											   : NULL;
	}
	return NULL;
}

const char *store_read_chunk(struct store *s, const struct chunk *c, struct chunk_reader *r,
			     uint8_t *dst)
{
	size_t len = (size_t)c->pages * MEMFILE_PAGE;
	int e;

	switch (c->how) {
	case HOW_INLINE:
		if (crc32c(0, c->inline_data, len) != c->crc)
			return "corrupt (checksum mismatch)";
		memcpy(dst, c->inline_data, len);
		return NULL;
	case HOW_RAW:
		if ((e = mf_pio_all(s->fds[c->where], dst, len, c->file_off, false)))
			return e == -EIO ? "truncated" : "unreadable";
		return crc32c(0, dst, len) == c->crc ? NULL : "corrupt (checksum mismatch)";
	case HOW_PACKED: {
		if (s->codec >= 3 ||
		    (!r->z[s->codec] && !(r->z[s->codec] = compressor_new(s->codec))))
			return "unreadable (out of memory)";
		if ((e = mf_pio_all(s->fds[c->where], r->buf, c->stored, c->file_off, false)))
			return e == -EIO ? "truncated" : "unreadable";
		if (crc32c(0, r->buf, c->stored) != c->crc)
			return "corrupt (checksum mismatch)";
		return decompress_buf(r->z[s->codec], r->buf, c->stored, dst, len)
			   ? "corrupt (does not decompress)"
			   : NULL;
	}
	case HOW_REF: {
		struct store *t = s->refs[c->where].st;
		const struct chunk *tc = t ? chunk_holding(t, c->mem_off, len) : NULL;
		if (!tc || tc->how == HOW_REF)
			return "corrupt (a page it refers to is not in that image)";
		if (tc->mem_off == c->mem_off && tc->pages == c->pages)
			return store_read_chunk(t, tc, r, dst);
		const char *why = store_read_chunk(t, tc, r, r->tmp);
		if (!why)
			memcpy(dst, r->tmp + (c->mem_off - tc->mem_off), len);
		return why;
	}
	}
	return "corrupt";
}

/* Loading: workers take the chunks of one 2 MiB block at a time, in order; a block they fill
 * whole may get a huge folio (dense.c). */
struct load_job {
	struct store *s;
	uint64_t *block; /* the index of each block's first chunk, then s->nch */
	uint64_t nblocks;
	struct dense dense;
	uint64_t next;
	bool failed;
	char *err;
	pthread_mutex_t lock;
	/* Each worker's chunk buffer and reader, made by the caller's thread: in its heap, which
	 * a waiting Sentry has written ahead (a new thread's own arena faults every page in). */
	uint8_t *buf[WORKERS_MAX];
	struct chunk_reader rd[WORKERS_MAX];
	int nbuf;
};

/* The blocks of J's chunks; the ones they fill whole are added to J's dense fill when the
 * memory file can have huge folios. */
static int load_blocks(struct load_job *j)
{
	const struct store *s = j->s;
	uint64_t pages = 0;

	if (!(j->block = malloc((s->nch + 1) * sizeof(*j->block))))
		return -ENOMEM;
	for (uint64_t i = 0; i < s->nch; i++) {
		uint64_t b = s->ch[i].mem_off / DENSE_BYTES;
		if (i && b == s->ch[i - 1].mem_off / DENSE_BYTES) {
			pages += s->ch[i].pages;
		} else {
			if (i && pages == DENSE_BYTES / MEMFILE_PAGE && dense_possible() &&
			    dense_add(&j->dense, s->ch[i - 1].mem_off / DENSE_BYTES * DENSE_BYTES))
				return -ENOMEM;
			j->block[j->nblocks++] = i;
			pages = s->ch[i].pages;
		}
	}
	if (s->nch && pages == DENSE_BYTES / MEMFILE_PAGE && dense_possible() &&
	    dense_add(&j->dense, s->ch[s->nch - 1].mem_off / DENSE_BYTES * DENSE_BYTES))
		return -ENOMEM;
	j->block[j->nblocks] = s->nch;
	return 0;
}

static void load_fail(struct load_job *j, const struct chunk *c, const char *why, int werr)
{
	pthread_mutex_lock(&j->lock);
	if (!j->err && (werr ? asprintf(&j->err, "cannot write memory at 0x%llx: %s",
					(unsigned long long)c->mem_off, strerror(-werr))
			     : asprintf(&j->err, "image '%s' is %s (memory at 0x%llx)", j->s->dir,
					why, (unsigned long long)c->mem_off)) < 0)
		j->err = NULL;
	__atomic_store_n(&j->failed, true, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&j->lock);
}

/* Puts chunk C into the memory file. Through a buffer and pwrite rather than straight into the
 * Sentry's view: a page a write fills whole needs no clearing, and a fault per fresh page costs
 * more than the second copy of a buffer that stays in the cache (docs/checkpoint.md, "Moving
 * memory"). NULL, or what is wrong ("corrupt ...", or with the memory file: *WRITE_ERR). */
static const char *load_chunk(struct store *s, const struct chunk *c, struct chunk_reader *r,
			      uint8_t *buf, int *write_err)
{
	const char *why = store_read_chunk(s, c, r, buf);
	if (why)
		return why;
	*write_err = mf_pio_all(mf.fd, buf, (size_t)c->pages * MEMFILE_PAGE, c->mem_off, true);
	return *write_err ? "" : NULL;
}

#define LOAD_PER_WORKER (16ULL << 20)

static void load_worker(void *arg, int w)
{
	struct load_job *j = arg;

	for (;;) {
		uint64_t k = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (k >= j->nblocks || __atomic_load_n(&j->failed, __ATOMIC_RELAXED))
			break;
		uint64_t first = j->block[k], end = j->block[k + 1], pages = 0;
		for (uint64_t i = first; i < end; i++)
			pages += j->s->ch[i].pages;
		if (pages == DENSE_BYTES / MEMFILE_PAGE && j->dense.n)
			dense_block(&j->dense, j->s->ch[first].mem_off / DENSE_BYTES * DENSE_BYTES);
		for (uint64_t i = first; i < end; i++) {
			const struct chunk *c = &j->s->ch[i];
			int werr = 0;
			const char *why = load_chunk(j->s, c, &j->rd[w], j->buf[w], &werr);
			if (why) {
				load_fail(j, c, why, werr);
				break;
			}
		}
	}
}

/* Buffers and readers for N workers of J; false when out of memory (what was made is freed by
 * load_end). */
static bool load_buffers(struct load_job *j, int n)
{
	for (; j->nbuf < n; j->nbuf++)
		if (chunk_reader_init(&j->rd[j->nbuf]) ||
		    !(j->buf[j->nbuf] = aligned_alloc(MEMFILE_PAGE, CHUNK_BYTES))) {
			j->nbuf++;
			return false;
		}
	return true;
}

/* Into a claimed slot, which holds the golden image already: S must be that image or a delta
 * of it. The delta's own chunks are read in place; the pages the golden image holds and S
 * does not (zero now) are punched out; what S refers to is there. Every range written is
 * remembered for the slot's reset. S keeps only its own chunks, for the loaders. */
static int slot_overlay(struct store *s, const char *dir, char **err)
{
	const struct store *g = slot_golden_store();
	char want[2 * ID_LEN + 1], has[2 * ID_LEN + 1];

	hex_id(g->id, want);
	if (!s->nimages && !memcmp(s->id, g->id, ID_LEN)) {
		s->nch = 0; /* the golden image itself: the slot is it */
		return 0;
	}
	if (s->nimages != 1 || memcmp(s->refs[0].id, g->id, ID_LEN)) {
		if (s->nimages)
			hex_id(s->refs[0].id, has);
		return failf(
		    err, -EINVAL,
		    "image '%s' is not a delta of the slots' golden image (memory id %s)%s%s", dir,
		    want, s->nimages ? ": its base is memory id " : "", s->nimages ? has : "");
	}
	uint64_t k = 0, nown = 0;
	for (uint64_t i = 0; i < g->nch; i++) {
		const struct chunk *gc = &g->ch[i];
		uint64_t at = gc->mem_off, end = at + (uint64_t)gc->pages * MEMFILE_PAGE;
		while (at < end) {
			while (k < s->nch && s->ch[k].mem_off + s->ch[k].pages * MEMFILE_PAGE <= at)
				k++;
			uint64_t stop =
			    k < s->nch && s->ch[k].mem_off < end ? s->ch[k].mem_off : end;
			if (stop > at) {
				/* The golden image's pages that are zero in S. */
				fallocate(mf.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, at,
					  stop - at);
				memfile_slot_written(at, stop - at);
				at = stop;
				continue;
			}
			at = s->ch[k].mem_off + s->ch[k].pages * MEMFILE_PAGE;
		}
	}
	for (uint64_t i = 0; i < s->nch; i++) {
		const struct chunk *c = &s->ch[i];
		uint64_t len = (uint64_t)c->pages * MEMFILE_PAGE;
		if (c->how == HOW_REF) {
			if (!chunk_holding(g, c->mem_off, len))
				return failf(err, -EINVAL,
					     "image '%s' is corrupt (memory at 0x%llx: a page it "
					     "refers to is not in its base)",
					     dir, (unsigned long long)c->mem_off);
			continue;
		}
		memfile_slot_written(c->mem_off, len);
		s->ch[nown++] = *c;
	}
	s->nch = nown;
	return 0;
}

static double load_ms;
static uint64_t load_huge;

/* The load's workers and what they work on: on the caller's thread, or (memfile_load_opts.async)
 * on threads of their own until memfile_load_join. */
static struct {
	struct store s;
	struct load_job j;
	int n;
	bool running;
	pthread_t th;
	struct timespec start;
} bg;

static void *load_run(void *arg)
{
	(void)arg;
	workers_run(bg.n, load_worker, &bg.j);
	load_huge = bg.j.dense.blocks * DENSE_BYTES;
	return NULL;
}

/* Starts the workers on a thread that blocks every signal, as workers_run's own do (the
 * Sentry's signals are its main thread's). False if no thread could be made. */
static bool load_start(void)
{
	sigset_t all, old;

	dense_begin(&bg.j.dense);
	clock_gettime(CLOCK_MONOTONIC, &bg.start);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	bg.running = pthread_create(&bg.th, NULL, load_run, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!bg.running)
		dense_end(&bg.j.dense);
	return bg.running;
}

/* The job's result, and everything it held freed. */
static int load_end(char **err)
{
	struct load_job *j = &bg.j;
	int ret = 0;

	if (j->failed)
		ret = failf(err, -EINVAL, "%s", j->err ? j->err : "cannot load memory");
	free(j->err);
	free(j->block);
	for (int w = 0; w < j->nbuf; w++) {
		chunk_reader_free(&j->rd[w]);
		free(j->buf[w]);
	}
	dense_end(&j->dense);
	pthread_mutex_destroy(&j->lock);
	store_close(&bg.s);
	memset(&bg.j, 0, sizeof(bg.j));
	return ret;
}

static struct {
	const char *what;
	struct timespec at, cpu;
	long faults;
} marks[64];
static unsigned nmarks;

static long minor_faults(void)
{
	struct rusage ru;
	return getrusage(RUSAGE_SELF, &ru) ? 0 : ru.ru_minflt;
}

static bool marks_detailed;

void memfile_marks_detail(bool on)
{
	marks_detailed = on;
}

void memfile_mark(const char *what)
{
	if (nmarks < sizeof(marks) / sizeof(marks[0])) {
		marks[nmarks].what = what;
		if (marks_detailed) {
			marks[nmarks].faults = minor_faults();
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &marks[nmarks].cpu);
		}
		clock_gettime(CLOCK_MONOTONIC, &marks[nmarks++].at);
	}
}

void memfile_marks_print(FILE *f, const struct timespec *start)
{
	struct timespec prev = *start;

	if (!nmarks)
		return;
	fprintf(f, "minisentry: stats: restore: phases (ms):");
	for (unsigned i = 0; i < nmarks; i++) {
		fprintf(f, " %s %.2f", marks[i].what,
			(marks[i].at.tv_sec - prev.tv_sec) * 1e3 +
			    (marks[i].at.tv_nsec - prev.tv_nsec) / 1e6);
		prev = marks[i].at;
	}
	fputc('\n', f);
	if (!marks_detailed)
		return;
	/* A page fault costs 1-3 us on bare metal, up to tens in a paravirtualised guest. */
	fprintf(f, "minisentry: stats: restore: cpu by phase (ms):");
	for (unsigned i = 1; i < nmarks; i++)
		fprintf(f, " %s %.2f", marks[i].what,
			(marks[i].cpu.tv_sec - marks[i - 1].cpu.tv_sec) * 1e3 +
			    (marks[i].cpu.tv_nsec - marks[i - 1].cpu.tv_nsec) / 1e6);
	fprintf(f, "\nminisentry: stats: restore: page faults by phase:");
	for (unsigned i = 1; i < nmarks; i++)
		fprintf(f, " %s %ld", marks[i].what, marks[i].faults - marks[i - 1].faults);
	fputc('\n', f);
}

double memfile_load_ms(void)
{
	return load_ms;
}

uint64_t memfile_load_huge(void)
{
	return load_huge;
}

static int memfile_load_timed(struct dec *d, const struct memfile_load_opts *o, char **err);

int memfile_load(struct dec *d, const struct memfile_load_opts *o, char **err)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	int ret = memfile_load_timed(d, o, err);
	clock_gettime(CLOCK_MONOTONIC, &b);
	load_ms = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
	return ret;
}

static int memfile_load_timed(struct dec *d, const struct memfile_load_opts *o, char **err)
{
	struct store s;
	uint64_t bump;
	int ret;

	*err = NULL;
	last_image.set = false;
	load_huge = 0;
	if ((ret = read_allocator(d, true, &bump)))
		return ret;
	if (o->img->version == 1)
		return load_v1(d);
	ret = store_parse(d, o, mf.bump, &s, err);
	memfile_mark("mem-index");
	if (!ret && mf.limit) {
		/* A bounded memory file (--memory) too small for the image is refused here, in one
		 * line, rather than met page by page as faults in the loaders. */
		uint64_t all = 0;
		for (uint64_t i = 0; i < s.nch; i++)
			all += s.ch[i].pages * MEMFILE_PAGE;
		if (all > mf.limit)
			ret = failf(
			    err, -ENOMEM,
			    "the image's memory (%llu MiB) does not fit in --memory (%llu MiB)",
			    (unsigned long long)(all >> 20), (unsigned long long)(mf.limit >> 20));
	}
	if (ret) {
		store_close(&s);
		return ret;
	}
	/* A delta onto a claimed slot needs no image but the slot's golden one, open and checked
	 * since the claim (slot_overlay refuses any other base): opening it again read and
	 * checked its whole index, which grows with it (0.9 ms at 1 GiB), and a warm slot's
	 * Sentry reaches no image by its path. */
	if (!(memfile_slot_active() && !o->lazy))
		ret = store_open_refs(&s, err);
	if (!ret && memfile_slot_active())
		ret = slot_overlay(&s, o->dir, err);
	memfile_mark("mem-refs");
	if (!ret) {
		memcpy(last_image.id, s.id, ID_LEN);
		last_image.set = true;
	}
	if (!ret && o->lazy) {
		/* Inline chunks now (the section goes away after the load), the rest lazily. */
		struct chunk_reader r;
		uint64_t nfile = 0;
		if (chunk_reader_init(&r))
			ret = failf(err, -ENOMEM, "out of memory");
		for (uint64_t i = 0; i < s.nch && !ret; i++) {
			const struct chunk *c = &s.ch[i];
			if (c->how != HOW_INLINE) {
				s.ch[nfile++] = *c;
				continue;
			}
			const char *why =
			    store_read_chunk(&s, c, &r, (uint8_t *)mf.base + c->mem_off);
			if (why)
				ret = failf(err, -EINVAL, "image '%s' is %s (memory at 0x%llx)",
					    o->dir, why, (unsigned long long)c->mem_off);
		}
		chunk_reader_free(&r);
		s.nch = nfile;
		if (!ret && nfile)
			ret = lazy_begin(&s, o->dir, err);
		store_close(&s);
		return ret;
	}
	if (!ret) {
		uint64_t bytes = 0;
		for (uint64_t i = 0; i < s.nch; i++)
			bytes += s.ch[i].how == HOW_INLINE ? 0 : s.ch[i].pages * MEMFILE_PAGE;
		/* A thread per LOAD_PER_WORKER at most: a delta's overlay onto a slot (7 MB) took
		 * 3.4-6 ms with two, and as little as 2.3 ms with one, which has no other to wait
		 * for (the second's share waits for a CPU on a busy host). */
		int n = workers_count();
		if ((uint64_t)n > bytes / LOAD_PER_WORKER)
			n = bytes / LOAD_PER_WORKER ? (int)(bytes / LOAD_PER_WORKER) : 1;
		bg.s = s; /* the job's now, until load_end */
		bg.j = (struct load_job){.s = &bg.s, .lock = PTHREAD_MUTEX_INITIALIZER};
		bg.n = n;
		if (load_blocks(&bg.j) || !load_buffers(&bg.j, n)) {
			bg.j.failed = true;
			bg.j.err = strdup("out of memory");
		} else if (o->async && load_start()) {
			return 0;
		} else {
			dense_begin(&bg.j.dense);
			load_run(NULL);
		}
		return load_end(err);
	}
	store_close(&s);
	return ret;
}

int memfile_load_join(char **err)
{
	if (!bg.running)
		return 0;
	pthread_join(bg.th, NULL);
	bg.running = false;
	int ret = load_end(err);
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	load_ms = (b.tv_sec - bg.start.tv_sec) * 1e3 + (b.tv_nsec - bg.start.tv_nsec) / 1e6;
	return ret;
}

void memfile_inspect(struct dec *d, const struct image *img, const char *dir, FILE *out,
		     uint64_t *file_bytes)
{
	static const char *names[HOW_COUNT] = {"raw", "compressed", "inline", "in another image"};
	struct memfile_load_opts o = {.img = img, .dir = dir};
	uint64_t n[HOW_COUNT] = {0}, pages[HOW_COUNT] = {0}, stored[HOW_COUNT] = {0};
	struct store s;
	char *err = NULL, id[2 * ID_LEN + 1];
	uint64_t bump;

	*file_bytes = 0;
	if (img->version == 1)
		return;
	/* The allocator is only checked: inspect does not touch the memory file. */
	int r = read_allocator(d, false, &bump);
	if (!r)
		r = store_parse(d, &o, bump, &s, &err);
	else
		memset(&s, 0, sizeof(s));
	if (r) {
		fprintf(out, "memory index: unreadable (%s)\n",
			err	   ? err
			: d->error ? d->error
				   : "?");
		free(err);
		store_close(&s);
		return;
	}
	for (uint64_t i = 0; i < s.nch; i++) {
		n[s.ch[i].how]++;
		pages[s.ch[i].how] += s.ch[i].pages;
		stored[s.ch[i].how] += s.ch[i].stored;
	}
	hex_id(s.id, id);
	fprintf(out, "memory id %s, %llu chunks of at most %u KiB\n", id, (unsigned long long)s.nch,
		(unsigned)(CHUNK_BYTES >> 10));
	for (int h = 0; h < HOW_COUNT; h++)
		if (n[h])
			fprintf(out, "  %-16s %8llu chunks %10llu pages %12llu bytes stored\n",
				names[h], (unsigned long long)n[h], (unsigned long long)pages[h],
				(unsigned long long)stored[h]);
	/* The golden form is recognised by its layout, which is all a slot needs of it. */
	if (store_is_mappable(&s))
		fprintf(out,
			"  golden: mappable (pages.0 holds every page at its memory offset)\n");
	if (s.nimages) {
		uint64_t changed = 0, extents = 0, prev_end = UINT64_MAX;
		for (uint64_t i = 0; i < s.nch; i++) {
			const struct chunk *c = &s.ch[i];
			if (c->how == HOW_REF)
				continue;
			changed += c->pages;
			extents += c->mem_off != prev_end;
			prev_end = c->mem_off + (uint64_t)c->pages * MEMFILE_PAGE;
		}
		hex_id(s.refs[0].id, id);
		fprintf(out,
			"  delta: %llu changed pages in %llu extents, %llu pages from the base "
			"%s\n",
			(unsigned long long)changed, (unsigned long long)extents,
			(unsigned long long)pages[HOW_REF], s.refs[0].path);
	}
	for (uint32_t i = 0; i < s.nfiles; i++) {
		fprintf(out, "  data file pages.%u: %llu bytes\n", i,
			(unsigned long long)s.sizes[i]);
		*file_bytes += s.sizes[i];
	}
	for (uint32_t i = 0; i < s.nimages; i++) {
		hex_id(s.refs[i].id, id);
		fprintf(out, "  refers to image %s (memory id %s)\n", s.refs[i].path, id);
	}
	store_close(&s);
}
