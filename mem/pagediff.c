/* Which pages of the memory file may differ from a base image (docs/checkpoint.md, "Checkpoint
 * cost that follows what changed"): the page diff that `checkpoint --parent` saves, and that a
 * differential checkpoint against a golden image (issue 12) or the reset of a slot can use
 * the same way. Since the base was written (or restored), a page counts as changed when:
 *  - it was written through a watched mapping: the Sentry's own view of the file, and every
 *    stub's mappings of it, are registered with a userfaultfd in asynchronous write-protect
 *    mode (UFFD_FEATURE_WP_ASYNC), so the first write to a page after the base only flips its
 *    write-protect bit, and PAGEMAP_SCAN reads and resets those bits without a fault message;
 *  - its range was allocated, freed or zeroed (memfile_alloc, memfile_zero);
 *  - its range was mapped, moved or unmapped in a stub since the base (a mapping no one
 *    watches yet, or one whose written bits go with it): the whole range, conservatively.
 * Anything that goes wrong on the way (a scan that fails) makes the diff unusable until the
 * next base, never wrong. A stub whose pagemap the Sentry may not read (a confined Sentry) is
 * watched by synchronous write-protection instead (mem/wpfaults.c): its first write to a page
 * after a base is a fault that the Sentry notes and lets through.
 *
 * What a base costs before the guest runs does not grow with the memory where the kernel allows
 * (docs/checkpoint.md, "Write tracking that starts lazily"): the Sentry's view protects only
 * the pages it maps (a page it maps later comes in unprotected, and counts as written), and a
 * restored stub, which maps no page yet, only the file's holes: its ranges are registered for
 * minor faults too, and the file's pages come in write-protected on first touch (wpfaults.c).
 * Otherwise every page of a newly watched range is protected up front, as a marker in the page
 * tables where nothing is mapped. */
#include "mem/memfile.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "mem/internal.h"

/* Linux 6.7's PAGEMAP_SCAN and asynchronous write-protection, which the C library's headers
 * may predate. */
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif
#ifndef UFFD_FEATURE_MINOR_SHMEM
#define UFFD_FEATURE_MINOR_SHMEM (1 << 10)
#endif
#ifndef UFFDIO_REGISTER_MODE_MINOR
#define UFFDIO_REGISTER_MODE_MINOR ((__u64)1 << 2)
#endif
#ifndef PAGEMAP_SCAN
#define PAGE_IS_WRITTEN (1 << 1)
#define PAGE_IS_PRESENT (1 << 3)
struct page_region {
	uint64_t start, end, categories;
};
struct pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#define PM_SCAN_WP_MATCHING (1 << 0)
#endif

#define SCAN_VEC 512

/* A watched stub address space, and where its registered ranges map the file (newest last:
 * a range mapped anew over an older one wins). */
struct tspace {
	const void *key;
	int uffd, pagemap; /* pagemap -1: watched by fault (Q) */
	bool lazy;	   /* its ranges are registered for first touches too (Q maps them) */
	struct wpq *q;
	struct memfile_space_range *r;
	size_t n;
};

static struct {
	bool ready; /* UFFD and PAGEMAP set up, MINOR and LAZY_VIEW known */
	bool on;    /* watching since a base */
	bool valid; /* nothing lost since the base */
	uint8_t base[ID_LEN];
	uint64_t *dirty; /* per page: changed since the base */
	uint64_t dirty_words;
	int uffd, pagemap; /* the Sentry's own */
	uint64_t self_end; /* [0, self_end) of the file is watched in the Sentry's view */
	/* Only what is mapped is protected at a base, and a page with nothing mapped counts as
	 * unwritten: in the Sentry's view (LAZY_VIEW) and in a stub tracked asynchronously;
	 * stubs may be registered for first touches (MINOR: the kernel can). */
	bool lazy_view, minor;
	struct tspace *sp;
	size_t nsp, cap;
	char *why; /* why watching is not possible here */
} tr = {.uffd = -1, .pagemap = -1};

static void mark(uint64_t off, uint64_t len)
{
	uint64_t first = off / MEMFILE_PAGE, last = (off + len + MEMFILE_PAGE - 1) / MEMFILE_PAGE;

	/* The reserved pages are in no image: nothing to know of them (and a bitmap reaching the
	 * top of the file would be large). */
	if (!tr.on || !len || off >= MEMFILE_USABLE)
		return;
	if (last > tr.dirty_words * 64) {
		uint64_t n = (last / 64 + 1) * 2;
		uint64_t *d = realloc(tr.dirty, n * sizeof(*d));
		if (!d) {
			tr.valid = false;
			return;
		}
		memset(d + tr.dirty_words, 0, (n - tr.dirty_words) * sizeof(*d));
		tr.dirty = d;
		tr.dirty_words = n;
	}
	for (uint64_t p = first; p < last; p++)
		tr.dirty[p / 64] |= 1ULL << (p % 64);
}

/* Since a slot was claimed (memfile_slot_claim): the pages changed, gathered at every base,
 * and whether every change was seen. */
static struct {
	bool on, lost;
	uint64_t *bits, words;
} acc;

static void gather(void)
{
	if (!acc.on || !tr.dirty)
		return;
	if (acc.words < tr.dirty_words) {
		uint64_t *v = realloc(acc.bits, tr.dirty_words * sizeof(*v));
		if (!v) {
			acc.lost = true;
			return;
		}
		memset(v + acc.words, 0, (tr.dirty_words - acc.words) * sizeof(*v));
		acc.bits = v;
		acc.words = tr.dirty_words;
	}
	for (uint64_t i = 0; i < tr.dirty_words; i++)
		acc.bits[i] |= tr.dirty[i];
}

void memfile_track_since_claim_start(void)
{
	acc.on = true;
}

bool memfile_track_since_claim_known(void)
{
	if (!acc.on || !tr.on || acc.lost)
		return false;
	if (memfile_track_harvest())
		return false;
	gather();
	return !acc.lost;
}

bool memfile_track_since_claim_add(uint64_t off, uint64_t len)
{
	uint64_t first = off / MEMFILE_PAGE, last = (off + len + MEMFILE_PAGE - 1) / MEMFILE_PAGE;

	if (!len)
		return true;
	if (last > acc.words * 64) {
		uint64_t n = (last + 63) / 64;
		uint64_t *v = realloc(acc.bits, n * sizeof(*v));
		if (!v)
			return false;
		memset(v + acc.words, 0, (n - acc.words) * sizeof(*v));
		acc.bits = v;
		acc.words = n;
	}
	for (uint64_t p = first; p < last; p++)
		acc.bits[p / 64] |= 1ULL << (p % 64);
	return true;
}

uint64_t memfile_track_since_claim_end(void)
{
	return acc.words * 64;
}

bool memfile_track_since_claim(uint64_t page)
{
	return page / 64 < acc.words && (acc.bits[page / 64] >> (page % 64) & 1);
}

void memfile_track_untracked(uint64_t off, uint64_t len)
{
	mark(off, len);
}

bool memfile_track_dirty(uint64_t page)
{
	return page / 64 < tr.dirty_words && (tr.dirty[page / 64] >> (page % 64) & 1);
}

/* A userfaultfd for write-protection of this process's view, or of a stub's (UFFD, made by
 * the platform): its API set, with minor faults on shared memory when MINOR. *FEATURES: what
 * the kernel offers. */
static int api(int uffd, bool async, bool minor, uint64_t *features)
{
	struct uffdio_api a = {.api = UFFD_API,
			       .features =
				   UFFD_FEATURE_WP_UNPOPULATED | UFFD_FEATURE_WP_HUGETLBFS_SHMEM};

	if (async)
		a.features |= UFFD_FEATURE_WP_ASYNC;
	if (minor)
		a.features |= UFFD_FEATURE_MINOR_SHMEM;
	if (ioctl(uffd, UFFDIO_API, &a))
		return -errno;
	if (features)
		*features = a.features;
	return 0;
}

/* Registers [ADDR, ADDR+LEN) of UFFD's address space for write-protection, and for first
 * touches when LAZY (false on return where the kernel refused that: not shared memory), and
 * protects all of it when PROTECT (a range watched lazily is protected all the same when it
 * may map pages already). */
static int watch(int uffd, uint64_t addr, uint64_t len, bool *lazy, bool protect)
{
	struct uffdio_register r = {.range = {addr, len}, .mode = UFFDIO_REGISTER_MODE_WP};
	struct uffdio_writeprotect w = {.range = {addr, len}, .mode = UFFDIO_WRITEPROTECT_MODE_WP};

	if (!len)
		return 0;
	if (lazy && *lazy) {
		r.mode |= UFFDIO_REGISTER_MODE_MINOR;
		if (!ioctl(uffd, UFFDIO_REGISTER, &r) && (r.ioctls & (1ULL << _UFFDIO_CONTINUE)))
			return protect && ioctl(uffd, UFFDIO_WRITEPROTECT, &w) ? -errno : 0;
		*lazy = false;
		protect = true;
		r.mode = UFFDIO_REGISTER_MODE_WP;
	}
	if (ioctl(uffd, UFFDIO_REGISTER, &r))
		return -errno;
	return protect && ioctl(uffd, UFFDIO_WRITEPROTECT, &w) ? -errno : 0;
}

/* The written pages of [START, END) in PAGEMAP, reset to protected: each region goes to FN
 * (when not NULL). The kernel counts a page with nothing mapped as written unless it holds a
 * protection marker: where nothing was protected up front (MAPPED_ONLY) only mapped pages are
 * asked for, the others being unwritten. (Elsewhere this keeps a written page that was
 * unmapped since, swapped out, counted.) */
static int scan(int pagemap, uint64_t start, uint64_t end, bool mapped_only,
		void (*fn)(const struct tspace *sp, uint64_t a, uint64_t b),
		const struct tspace *sp)
{
	static struct page_region v[SCAN_VEC];

	while (start < end) {
		struct pm_scan_arg a = {.size = sizeof(a),
					.flags = PM_SCAN_WP_MATCHING,
					.start = start,
					.end = end,
					.vec = (uintptr_t)v,
					.vec_len = SCAN_VEC,
					.category_mask = PAGE_IS_WRITTEN,
					.return_mask = PAGE_IS_WRITTEN};
		if (mapped_only) {
			a.category_mask |= PAGE_IS_PRESENT;
			a.return_mask |= PAGE_IS_PRESENT;
		}
		long n = ioctl(pagemap, PAGEMAP_SCAN, &a);
		if (n < 0)
			return -errno;
		for (long i = 0; i < n && fn; i++)
			fn(sp, v[i].start, v[i].end);
		if (a.walk_end <= start)
			return -EIO;
		start = a.walk_end;
	}
	return 0;
}

static void mark_self(const struct tspace *sp, uint64_t a, uint64_t b)
{
	(void)sp;
	mark(a - (uintptr_t)mf.base, b - a);
}

/* Addresses [A, B) of SP: the file pages its newest covering ranges map there. */
static void mark_space(const struct tspace *sp, uint64_t a, uint64_t b)
{
	for (uint64_t at = a; at < b; at += MEMFILE_PAGE)
		for (size_t i = sp->n; i-- > 0;)
			if (at >= sp->r[i].addr && at - sp->r[i].addr < sp->r[i].len) {
				mark(sp->r[i].off + (at - sp->r[i].addr), MEMFILE_PAGE);
				break;
			}
}

static void mark_all(const struct tspace *sp)
{
	for (size_t i = 0; i < sp->n; i++)
		mark(sp->r[i].off, sp->r[i].len);
}

/* A block a write of SP stopped at (wpfaults.c): counted, and protected again for the next
 * base. A block that reaches past a registered range is refused, possibly after protecting a
 * part of it; it is then protected page by page. */
static void refault(void *arg, uint64_t addr)
{
	const struct tspace *sp = arg;
	struct uffdio_writeprotect w = {.range = {addr, WPQ_BLOCK},
					.mode = UFFDIO_WRITEPROTECT_MODE_WP};

	mark_space(sp, addr, addr + WPQ_BLOCK);
	if (!ioctl(sp->uffd, UFFDIO_WRITEPROTECT, &w))
		return;
	for (uint64_t at = addr; at < addr + WPQ_BLOCK; at += MEMFILE_PAGE) {
		w.range = (struct uffdio_range){at, MEMFILE_PAGE};
		/* Not there any more (unmapped, its process gone): nothing to protect. */
		if (ioctl(sp->uffd, UFFDIO_WRITEPROTECT, &w) && errno != ENOENT && errno != ESRCH)
			tr.valid = false;
	}
}

static void harvest_space(struct tspace *sp)
{
	if (sp->q && !wpq_take(sp->q, refault, sp)) {
		mark_all(sp);
		return;
	}
	if (sp->pagemap < 0)
		return;
	for (size_t i = 0; i < sp->n; i++)
		if (scan(sp->pagemap, sp->r[i].addr, sp->r[i].addr + sp->r[i].len, sp->lazy,
			 mark_space, sp)) {
			mark_all(sp); /* its process is gone: what it wrote is not known */
			return;
		}
}

int memfile_track_harvest(void)
{
	if (!tr.on)
		return -ENOENT;
	if (scan(tr.pagemap, (uintptr_t)mf.base, (uintptr_t)mf.base + tr.self_end, tr.lazy_view,
		 mark_self, NULL))
		tr.valid = false;
	for (size_t i = 0; i < tr.nsp; i++)
		harvest_space(&tr.sp[i]);
	return tr.valid ? 0 : -EIO;
}

/* Whether the host can swap: swapping a page of the file out unmaps it, and a written page the
 * Sentry's view maps without protection would then look unwritten. (sysinfo: a confined
 * Sentry's /proc has no /proc/swaps.) */
static bool swap_configured(void)
{
	struct sysinfo si;

	return sysinfo(&si) || si.totalswap;
}

static void fail_off(const char *what, int e)
{
	free(tr.why);
	if (asprintf(&tr.why, "%s: %s", what, strerror(-e)) < 0)
		tr.why = NULL;
	tr.valid = false;
}

/* The Sentry's own userfaultfd and pagemap, and what the kernel offers. */
static int track_init(void)
{
	int e;

	if (!tr.ready) {
		if (tr.why)
			return -ENOTSUP; /* tried before */
		tr.uffd = mem_userfaultfd();
		/* vm.unprivileged_userfaultfd=0 and no capability (a confined Sentry): user-mode
		 * faults only, which asynchronous write-protection never sends anyway (the kernel's
		 * own writes through the view, a read(2) into it, flip the bit all the same). */
		if (tr.uffd < 0) {
			int fd = (int)syscall(SYS_userfaultfd,
					      O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
			if (fd >= 0)
				tr.uffd = fd;
		}
		if (tr.uffd < 0) {
			fail_off("userfaultfd", tr.uffd);
			tr.uffd = -1;
			return -ENOTSUP;
		}
		uint64_t features = 0;
		tr.pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
		if (tr.pagemap < 0 || (e = api(tr.uffd, true, false, &features))) {
			fail_off("write tracking", tr.pagemap < 0 ? -errno : e);
			close(tr.uffd);
			if (tr.pagemap >= 0)
				close(tr.pagemap);
			tr.uffd = tr.pagemap = -1;
			return -ENOTSUP;
		}
		tr.ready = true;
		tr.minor = (features & UFFD_FEATURE_MINOR_SHMEM) && !getenv("MINISENTRY_WP_EAGER");
		tr.lazy_view = tr.minor && !swap_configured();
	}
	return 0;
}

int memfile_track_begin(void)
{
	int e;

	memfile_lazy_wait();
	if (!tr.on) {
		if ((e = track_init()))
			return e;
		tr.on = true;
	} else if (!tr.valid) {
		acc.lost = true; /* a change since the last base went unseen */
	}
	tr.valid = true;
	/* The part of the file allocated since the last base: watched from now on. */
	if (mf.bump > tr.self_end) {
		if ((e = watch(tr.uffd, (uintptr_t)mf.base + tr.self_end, mf.bump - tr.self_end,
			       NULL, !tr.lazy_view))) {
			fail_off("write tracking of the memory file", e);
			return e;
		}
		tr.self_end = mf.bump;
	}
	memfile_mark("tb-view-reg");
	/* What the view maps unprotected now (read since the harvest: by the checkpoint that
	 * set this base, or by the restore) is protected, not counted. */
	if (tr.lazy_view && (e = scan(tr.pagemap, (uintptr_t)mf.base,
				      (uintptr_t)mf.base + tr.self_end, true, NULL, NULL))) {
		fail_off("write tracking of the memory file", e);
		return e;
	}
	memfile_mark("tb-view-scan");
	return 0;
}

/* The ranges of the file punched out or written by a slot's restore since the last base: a
 * page there may be a hole now where a lazily watched stub would take it for a page of the
 * file (which the kernel would then fill, writable, without a word). */
#define HOLES_MAX 4096
static struct {
	struct extent *v;
	size_t n, cap;
	bool overflow; /* more than HOLES_MAX, or no memory: they could be anywhere */
} holes;

void track_hole(uint64_t off, uint64_t len)
{
	struct extent *last = holes.n ? &holes.v[holes.n - 1] : NULL;

	if (!len || holes.overflow)
		return;
	if (last && last->off + last->len == off) {
		last->len += len;
		return;
	}
	if (holes.n == holes.cap) {
		size_t cap = holes.cap ? 2 * holes.cap : 64;
		struct extent *v = cap <= HOLES_MAX ? realloc(holes.v, cap * sizeof(*v)) : NULL;
		if (!v) {
			holes.overflow = true;
			return;
		}
		holes.v = v;
		holes.cap = cap;
	}
	holes.v[holes.n++] = (struct extent){off, len};
}

/* Protects the part of SP's range R that maps [A, B) of the file. */
static int protect_file(const struct tspace *sp, const struct memfile_space_range *r, uint64_t a,
			uint64_t b)
{
	if (a < r->off)
		a = r->off;
	if (b > r->off + r->len)
		b = r->off + r->len;
	if (a >= b)
		return 0;
	struct uffdio_writeprotect w = {.range = {r->addr + (a - r->off), b - a},
					.mode = UFFDIO_WRITEPROTECT_MODE_WP};
	return ioctl(sp->uffd, UFFDIO_WRITEPROTECT, &w) ? -errno : 0;
}

/* SP's lazily watched range R: a first touch of a page of the file is reported (a minor fault),
 * not one of a hole, which must therefore be protected (a marker): when FIRST (a stub that maps
 * nothing yet), every part of R that a claimed slot's golden image has no page for, or all of R
 * without a slot (a file whose holes are not known without walking it); then what was punched
 * out since the last base. */
/* The parts of SP's range R that golden image G has no page for. */
static int protect_golden_holes(const struct tspace *sp, const struct memfile_space_range *r,
				const struct store *g)
{
	uint64_t at = r->off, end = r->off + r->len;
	int e = 0;

	for (uint64_t k = store_chunk_after(g, at); k < g->nch && at < end && !e; k++) {
		uint64_t cs = g->ch[k].mem_off;
		uint64_t ce = cs + (uint64_t)g->ch[k].pages * MEMFILE_PAGE;
		if (cs > at)
			e = protect_file(sp, r, at, cs);
		if (ce > at)
			at = ce;
	}
	if (!e && at < end)
		e = protect_file(sp, r, at, end);
	return e;
}

static int protect_lazy(const struct tspace *sp, const struct memfile_space_range *r, bool first)
{
	const struct store *g = first && memfile_slot_active() ? slot_golden_store() : NULL;
	int e = 0;

	if (holes.overflow || (first && !g))
		return protect_file(sp, r, r->off, r->off + r->len);
	if (first)
		e = protect_golden_holes(sp, r, g);
	for (size_t i = 0; i < holes.n && !e; i++)
		e = protect_file(sp, r, holes.v[i].off, holes.v[i].off + holes.v[i].len);
	return e;
}

static struct tspace *find_space(const void *key)
{
	for (size_t i = 0; i < tr.nsp; i++)
		if (tr.sp[i].key == key)
			return &tr.sp[i];
	return NULL;
}

/* A new watched space SP of UFFD, the stub PID's: its pagemap if the Sentry may read it, its
 * userfaultfd's API set, its fault queue. UFFD is the caller's on failure. */
static int space_init(struct tspace *sp, const void *key, int uffd, int pid)
{
	char path[64];
	int e;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	*sp = (struct tspace){.key = key, .uffd = uffd, .pagemap = -1};
	/* A confined Sentry may not read it (EACCES, EPERM): watched by fault instead. */
	sp->pagemap = open(path, O_RDONLY | O_CLOEXEC);
	/* Asynchronously, an unmapped page must look unwritten (scan), which only holds where
	 * nothing unmaps a written one. */
	sp->lazy = tr.minor && (sp->pagemap < 0 || tr.lazy_view);
	e = api(uffd, sp->pagemap >= 0, sp->lazy, NULL);
	if (!e && (sp->pagemap < 0 || sp->lazy) &&
	    !(sp->q = wpq_add(uffd, sp->pagemap >= 0 ? WPQ_ASYNC : 0)))
		e = -ENOMEM;
	if (e && sp->pagemap >= 0)
		close(sp->pagemap);
	return e;
}

/* A space prepared ahead of its restore (memfile_track_prepare_space): set up, and its ranges
 * R[0..N) registered (lazily where LAZY[i]) with the golden image's holes protected. */
static struct {
	bool set;
	struct tspace sp;
	struct memfile_space_range *r;
	bool *lazy;
	size_t n;
} pre;

int memfile_track_prepare_space(int uffd, int pid, const struct memfile_space_range *r, size_t n)
{
	const struct store *g = slot_golden_store_prepared();
	int e;

	if (pre.set || !g || uffd < 0)
		return -EINVAL;
	if ((e = track_init()) || (e = space_init(&pre.sp, NULL, uffd, pid)))
		return e;
	pre.r = calloc(n + 1, sizeof(*pre.r));
	pre.lazy = calloc(n + 1, sizeof(*pre.lazy));
	/* From here the space is set up: on any failure it is used with no range prepared. */
	pre.set = true;
	for (size_t i = 0; pre.r && pre.lazy && i < n; i++) {
		bool lazy = pre.sp.lazy;
		e = watch(uffd, r[i].addr, r[i].len, &lazy, !pre.sp.lazy);
		if (!e && lazy)
			e = protect_golden_holes(&pre.sp, &r[i], g);
		if (e)
			break;
		pre.r[pre.n] = r[i];
		pre.lazy[pre.n++] = lazy;
	}
	if (e)
		pre.n = 0;
	return e;
}

/* The prepared range equal to R: whether it was watched lazily (*LAZY); false for none. */
static bool prepared(const struct memfile_space_range *r, bool *lazy)
{
	for (size_t i = 0; r->prepared && i < pre.n; i++)
		if (pre.r[i].addr == r->addr && pre.r[i].len == r->len && pre.r[i].off == r->off) {
			*lazy = pre.lazy[i];
			return true;
		}
	return false;
}

int memfile_track_space(const void *key, int uffd, int pid, const struct memfile_space_range *r,
			size_t n, const struct memfile_space_range *fresh, size_t nfresh,
			bool untouched)
{
	struct tspace *sp = find_space(key);
	bool adopted = false;
	int e = 0;

	if (!tr.on) {
		if (uffd >= 0)
			close(uffd);
		return -ENOTSUP;
	}
	if (!sp) {
		if (uffd < 0)
			return -EINVAL;
		if (tr.nsp == tr.cap) {
			size_t cap = tr.cap ? 2 * tr.cap : 16;
			struct tspace *v = realloc(tr.sp, cap * sizeof(*v));
			if (!v) {
				close(uffd);
				return -ENOMEM;
			}
			tr.sp = v;
			tr.cap = cap;
		}
		sp = &tr.sp[tr.nsp];
		if (pre.set && pre.sp.uffd == uffd) {
			*sp = pre.sp;
			sp->key = key;
			adopted = true;
		} else if ((e = space_init(sp, key, uffd, pid))) {
			close(uffd);
			return e;
		}
		tr.nsp++;
		fresh = r;
		nfresh = n;
	} else {
		if (uffd >= 0)
			close(uffd);
		untouched = false;
	}
	/* Every range is registered (again: a range registered already stays so, in the same
	 * mode); only those mapped since the last base need protecting, the others were reset by
	 * the harvest. Of a lazily watched stub that has mapped no page yet (UNTOUCHED: just
	 * restored, not run), only the holes; a range the kernel will not watch lazily is
	 * protected whole. */
	for (size_t i = 0; i < n && !e; i++) {
		bool lazy = sp->lazy;
		/* Prepared: what the restore wrote or punched out since is all there is to do. */
		if (adopted && untouched && prepared(&r[i], &lazy)) {
			if (lazy)
				e = protect_lazy(sp, &r[i], false);
			continue;
		}
		e = watch(sp->uffd, r[i].addr, r[i].len, &lazy, untouched && !sp->lazy);
		if (!e && lazy)
			e = protect_lazy(sp, &r[i], untouched);
	}
	memfile_mark("tb-stub");
	for (size_t i = 0; i < nfresh && !e && !untouched; i++) {
		bool lazy = sp->lazy;
		e = watch(sp->uffd, fresh[i].addr, fresh[i].len, &lazy, true);
	}
	if (adopted) {
		free(pre.r);
		free(pre.lazy);
		pre.r = NULL;
		pre.lazy = NULL;
		pre.n = 0;
		pre.set = false;
	}
	struct memfile_space_range *copy = calloc(n + 1, sizeof(*copy));
	if (!copy && !e)
		e = -ENOMEM;
	if (e) {
		free(copy);
		tr.valid = false;
		return e;
	}
	memcpy(copy, r, n * sizeof(*r));
	free(sp->r);
	sp->r = copy;
	sp->n = n;
	return 0;
}

void memfile_track_space_end(const void *key)
{
	struct tspace *sp = find_space(key);

	if (!sp)
		return;
	/* What it wrote, while its page tables still exist; then its mappings count as gone. */
	harvest_space(sp);
	wpq_remove(sp->q);
	close(sp->uffd);
	if (sp->pagemap >= 0)
		close(sp->pagemap);
	free(sp->r);
	*sp = tr.sp[--tr.nsp];
}

void memfile_track_commit(const uint8_t id[ID_LEN])
{
	if (!tr.on)
		return;
	memcpy(tr.base, id, ID_LEN);
	gather();
	holes.n = 0;
	holes.overflow = false;
	if (tr.dirty)
		memset(tr.dirty, 0, tr.dirty_words * sizeof(*tr.dirty));
}

void memfile_track_invalidate(void)
{
	tr.valid = false;
}

bool memfile_track_base_is(const uint8_t id[ID_LEN])
{
	return tr.on && tr.valid && !memcmp(tr.base, id, ID_LEN);
}

const char *memfile_track_why_not(void)
{
	return tr.why;
}
