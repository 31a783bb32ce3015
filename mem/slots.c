/* Slots (docs/checkpoint.md, "Slots"): ready copies of a golden image's memory on a tmpfs, one of
 * which a restore claims and uses as its memory file, overlays with the delta's pages, and
 * resets to the golden image when the sandbox ends.
 *
 * DIR/pool holds the pool's header and one state byte per slot; DIR/slot.I is slot I, a sparse
 * file equal to the golden image's pages.0 (the mappable form) up to the memory file's size.
 * Claiming takes the next index from a shared cursor and an open-file-description lock on the
 * slot's state byte: O(1) while the pool is not nearly exhausted, never a slot another holds,
 * and the lock goes with a Sentry that dies. The state byte says READY or IN_USE: IN_USE under
 * a lock nobody holds is a slot a dead Sentry left, reset fully before it is used again. */
#include "mem/memfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "mem/internal.h"
#include "state/image.h"

#define POOL_MAGIC "MSSLOTS1"
#define POOL_MAX 4096
#define TMPFS_MAGIC_ 0x01021994

enum { SLOT_READY = 1, SLOT_IN_USE = 2 };

struct pool_hdr {
	char magic[8];
	uint32_t count, pad;
	uint8_t golden_id[ID_LEN];
	uint64_t cursor; /* the next slot to try, shared */
	char golden[PATH_MAX];
	uint8_t state[]; /* per slot */
};

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

/* The golden image: its index (the chunks are where its pages lie in pages.0, at their own
 * offsets) and pages.0 mapped. */
struct golden {
	struct image img;
	struct store st;
	const uint8_t *map;
	uint64_t len;
};

static void golden_close(struct golden *g)
{
	if (g->map)
		munmap((void *)g->map, g->len);
	g->map = NULL;
	store_close(&g->st);
	image_free(&g->img);
}

static int golden_open(const char *path, struct golden *g, char **err)
{
	char *why = NULL;
	int e;

	memset(g, 0, sizeof(*g));
	g->img.dirfd = -1;
	if ((e = store_open_image(path, &g->img, &g->st, &why))) {
		failf(err, e, "%s", why ? why : strerror(-e));
		free(why);
		return e;
	}
	if (!store_is_mappable(&g->st)) {
		golden_close(g);
		return failf(err, -EINVAL,
			     "image '%s' is not a golden image (checkpoint --golden writes one)",
			     path);
	}
	g->len = g->st.nfiles ? g->st.sizes[0] : 0;
	if (g->len) {
		void *m = mmap(NULL, g->len, PROT_READ, MAP_SHARED, g->st.fds[0], 0);
		if (m == MAP_FAILED) {
			e = -errno;
			golden_close(g);
			return failf(err, e, "image '%s': cannot map pages.0: %s", path,
				     strerror(-e));
		}
		g->map = m;
	}
	return 0;
}

static int write_all(int fd, const uint8_t *src, uint64_t a, uint64_t b)
{
	while (a < b) {
		ssize_t n = pwrite(fd, src + a, b - a, a);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		a += n;
	}
	return 0;
}

/* Writes the golden image's pages [A, B) into FD at the same offsets. By sendfile, in the host
 * kernel, where it can: a pwrite from the golden mapping faults each page of it in first, in
 * every Sentry anew (a reset of 1,900 pages: 120 faults, at up to tens of us each in a
 * paravirtualised guest). Moves FD's position. */
static int golden_copy(const struct golden *g, int fd, uint64_t a, uint64_t b)
{
	off_t in = (off_t)a;

	if (lseek(fd, in, SEEK_SET) != in)
		return write_all(fd, g->map, a, b);
	while ((uint64_t)in < b) {
		ssize_t n = sendfile(fd, g->st.fds[0], &in, b - (uint64_t)in);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return write_all(fd, g->map, (uint64_t)in, b);
	}
	return 0;
}

/* Writes the golden pages of [OFF, OFF+LEN) into FD (a slot, whose range reads as zeros). */
static int golden_fill(const struct golden *g, int fd, uint64_t off, uint64_t len)
{
	uint64_t end = off + len;
	int e = 0;

	for (uint64_t k = store_chunk_after(&g->st, off);
	     !e && k < g->st.nch && g->st.ch[k].mem_off < end; k++) {
		const struct chunk *c = &g->st.ch[k];
		uint64_t a = c->mem_off > off ? c->mem_off : off;
		uint64_t b = c->mem_off + (uint64_t)c->pages * MEMFILE_PAGE;
		e = golden_copy(g, fd, a, b < end ? b : end);
	}
	return e;
}

/* Makes slot FD equal to the golden image again in [OFF, OFF+LEN): the golden image's pages
 * written over where it has them (in place: no page freed and allocated again), holes punched
 * where it has none. */
static int slot_reset_range(const struct golden *g, int fd, uint64_t off, uint64_t len)
{
	uint64_t at = off, end = off + len, k = store_chunk_after(&g->st, off);
	int e = 0;

	while (!e && at < end) {
		const struct chunk *c = k < g->st.nch ? &g->st.ch[k] : NULL;
		uint64_t b;
		if (c && c->mem_off <= at) {
			b = c->mem_off + (uint64_t)c->pages * MEMFILE_PAGE;
			b = b < end ? b : end;
			e = golden_copy(g, fd, at, b);
			k++;
		} else {
			b = c && c->mem_off < end ? c->mem_off : end;
			if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, at, b - at))
				e = -errno;
		}
		at = b;
	}
	return e;
}

/* Everything (a slot a dead Sentry left: how far its memory reached is not known). */
static int slot_reset_all(const struct golden *g, int fd)
{
	return slot_reset_range(g, fd, 0, MEMFILE_SIZE);
}

/* --- minisentry slots ---------------------------------------------------------------------- */

int memfile_slots_create(const char *golden, unsigned count, const char *dir, char **err)
{
	char path[PATH_MAX + 32], real[PATH_MAX];
	struct golden g;
	struct statfs sf;
	int e = 0, dfd = -1, pfd = -1;

	*err = NULL;
	if (count == 0 || count > POOL_MAX)
		return failf(err, -EINVAL, "--count is 1 to %d", POOL_MAX);
	if (!realpath(golden, real))
		return failf(err, -errno, "image '%s': %s", golden, strerror(errno));
	if ((e = golden_open(real, &g, err)))
		return e;
	if (mkdir(dir, 0700) && errno != EEXIST) {
		e = failf(err, -errno, "'%s': %s", dir, strerror(errno));
		goto out;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		e = failf(err, -errno, "'%s': %s", dir, strerror(errno));
		goto out;
	}
	/* Slots are memory: on a disk, every page the guest dirtied would be written back. */
	if (fstatfs(dfd, &sf) || sf.f_type != TMPFS_MAGIC_) {
		e = failf(err, -EINVAL, "'%s' is not on a tmpfs (use one under /dev/shm)", dir);
		goto out;
	}
	if (fchmod(dfd, 0700)) {
		e = failf(err, -errno, "'%s': %s", dir, strerror(errno));
		goto out;
	}
	pfd = openat(dfd, "pool", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (pfd < 0) {
		e = failf(err, -errno, "'%s': %s", dir,
			  errno == EEXIST ? "holds a pool already" : strerror(errno));
		goto out;
	}
	size_t size = sizeof(struct pool_hdr) + count;
	struct pool_hdr *h = calloc(1, size);
	if (!h) {
		e = failf(err, -ENOMEM, "out of memory");
		goto out;
	}
	memcpy(h->magic, POOL_MAGIC, 8);
	h->count = count;
	memcpy(h->golden_id, g.st.id, ID_LEN);
	snprintf(h->golden, sizeof(h->golden), "%s", real);
	for (unsigned i = 0; i < count; i++) {
		snprintf(path, sizeof(path), "slot.%u", i);
		int fd =
		    openat(dfd, path, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 || ftruncate(fd, MEMFILE_SIZE) || (e = golden_fill(&g, fd, 0, g.len))) {
			e = failf(err, e ? e : -errno, "'%s/%s': %s", dir, path,
				  strerror(e ? -e : errno));
			if (fd >= 0)
				close(fd);
			free(h);
			goto out;
		}
		close(fd);
		h->state[i] = SLOT_READY;
	}
	/* The pool appears last: a claimer never sees slots half made. */
	if (pwrite(pfd, h, size, 0) != (ssize_t)size)
		e = failf(err, -EIO, "'%s/pool': cannot write", dir);
	free(h);
out:
	if (e && pfd >= 0)
		unlinkat(dfd, "pool", 0);
	if (pfd >= 0)
		close(pfd);
	if (dfd >= 0)
		close(dfd);
	golden_close(&g);
	return e;
}

/* --- the claimed slot ---------------------------------------------------------------------- */

static struct {
	bool active;
	int pool_fd, fd;
	struct pool_hdr *hdr;
	size_t hdr_len;
	unsigned index;
	struct golden g;
	bool recovered;
	struct extent *written; /* what the restore wrote into the slot */
	size_t nwritten, capwritten;
	bool overflow; /* too much to remember: reset it all */
} slot = {.pool_fd = -1, .fd = -1};

static bool lock_byte(int fd, off_t at)
{
	struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = at, .l_len = 1};

	return fcntl(fd, F_OFD_SETLK, &l) == 0;
}

/* Opens DIR's pool (mapped: its header, cursor and state bytes) and its golden image, which
 * must still be the one the pool was made from. */
static int pool_open(const char *dir, char **err)
{
	char path[PATH_MAX + 32];
	struct stat st;
	int e;

	snprintf(path, sizeof(path), "%s/pool", dir);
	slot.pool_fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (slot.pool_fd < 0)
		return failf(err, -errno, "slots '%s': %s", dir,
			     errno == ENOENT ? "no pool there (minisentry slots makes one)"
					     : strerror(errno));
	if (fstat(slot.pool_fd, &st) || st.st_size < (off_t)sizeof(struct pool_hdr) ||
	    (st.st_mode & 077))
		return failf(err, -EINVAL, "slots '%s': a bad pool file", dir);
	slot.hdr_len = st.st_size;
	slot.hdr = mmap(NULL, slot.hdr_len, PROT_READ | PROT_WRITE, MAP_SHARED, slot.pool_fd, 0);
	if (slot.hdr == MAP_FAILED) {
		slot.hdr = NULL;
		return failf(err, -errno, "slots '%s': %s", dir, strerror(errno));
	}
	struct pool_hdr *h = slot.hdr;
	if (memcmp(h->magic, POOL_MAGIC, 8) || !h->count || h->count > POOL_MAX ||
	    slot.hdr_len != sizeof(*h) + h->count || !memchr(h->golden, 0, sizeof(h->golden)))
		return failf(err, -EINVAL, "slots '%s': a bad pool file", dir);
	char *why = NULL;
	if ((e = golden_open(h->golden, &slot.g, &why))) {
		failf(err, e, "slots '%s': golden image: %s", dir, why ? why : strerror(-e));
		free(why);
		return e;
	}
	if (memcmp(slot.g.st.id, h->golden_id, ID_LEN))
		return failf(err, -EINVAL,
			     "slots '%s' were made from another golden image than '%s' is now", dir,
			     h->golden);
	return 0;
}

/* Slot INDEX's file, which must be a whole slot. */
static int slot_file_open(const char *dir, char **err)
{
	char path[PATH_MAX + 32];
	struct stat st;

	snprintf(path, sizeof(path), "%s/slot.%u", dir, slot.index);
	slot.fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (slot.fd < 0 || fstat(slot.fd, &st) || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size != MEMFILE_SIZE)
		return failf(err, -EINVAL, "slots '%s': slot.%u is missing or bad", dir,
			     slot.index);
	return 0;
}

/* The claim's last step, under the slot's lock: a slot a dead Sentry left (IN_USE, its lock
 * gone with it) is reset fully, never used as it is; then it is ours. */
static int slot_take(const char *dir, char **err)
{
	uint8_t *state = &slot.hdr->state[slot.index];
	int e;

	if (__atomic_load_n(state, __ATOMIC_ACQUIRE) != SLOT_READY) {
		if ((e = slot_reset_all(&slot.g, slot.fd)))
			return failf(err, e, "slots '%s': cannot recover slot.%u: %s", dir,
				     slot.index, strerror(-e));
		slot.recovered = true;
	}
	__atomic_store_n(state, SLOT_IN_USE, __ATOMIC_RELEASE);
	slot.active = true;
	memfile_track_since_claim_start();
	return 0;
}

int memfile_slot_claim(const char *dir, char **err)
{
	int e;

	*err = NULL;
	if ((e = pool_open(dir, err)))
		goto fail;
	/* The next slot in turn; one that another Sentry holds is passed over. */
	struct pool_hdr *h = slot.hdr;
	uint32_t n = h->count;
	bool got = false;
	for (uint32_t tries = 0; tries < n && !got; tries++) {
		slot.index = __atomic_fetch_add(&h->cursor, 1, __ATOMIC_RELAXED) % n;
		got = lock_byte(slot.pool_fd, offsetof(struct pool_hdr, state) + slot.index);
	}
	if (!got) {
		e = failf(err, -EBUSY, "slots '%s': all %u slots are in use", dir, n);
		goto fail;
	}
	if ((e = slot_file_open(dir, err)) || (e = slot_take(dir, err)))
		goto fail;
	return 0;
fail:
	memfile_slot_release();
	return e;
}

/* --- a warm slot (sentry/warm.c) ----------------------------------------------------------- */

int memfile_slot_reserve(const char *dir, unsigned *index, char **err)
{
	char path[PATH_MAX + 32];
	struct pool_hdr h;
	struct stat st;
	int fd;

	*err = NULL;
	snprintf(path, sizeof(path), "%s/pool", dir);
	if ((fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return failf(err, -errno, "slots '%s': %s", dir, strerror(errno));
	if (fstat(fd, &st) || pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h.magic, POOL_MAGIC, 8) || !h.count || h.count > POOL_MAX ||
	    st.st_size != (off_t)(sizeof(h) + h.count)) {
		close(fd);
		return failf(err, -EINVAL, "slots '%s': a bad pool file", dir);
	}
	/* The cursor is shared through the file's pages, as the claimers' mappings share it. */
	uint64_t *cursor = mmap(NULL, sizeof(h), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (cursor == MAP_FAILED) {
		close(fd);
		return failf(err, -errno, "slots '%s': %s", dir, strerror(errno));
	}
	cursor = (uint64_t *)((char *)cursor + offsetof(struct pool_hdr, cursor));
	bool got = false;
	for (uint32_t tries = 0; tries < h.count && !got; tries++) {
		*index = __atomic_fetch_add(cursor, 1, __ATOMIC_RELAXED) % h.count;
		got = lock_byte(fd, offsetof(struct pool_hdr, state) + *index);
	}
	munmap((char *)cursor - offsetof(struct pool_hdr, cursor), sizeof(h));
	if (!got) {
		close(fd);
		return failf(err, -EBUSY, "slots '%s': all %u slots are in use", dir, h.count);
	}
	return fd;
}

int memfile_slots_count(const char *dir)
{
	char path[PATH_MAX + 32];
	struct pool_hdr h;
	int fd, n = -EINVAL;

	snprintf(path, sizeof(path), "%s/pool", dir);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -errno;
	if (pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) && !memcmp(h.magic, POOL_MAGIC, 8) &&
	    h.count && h.count <= POOL_MAX)
		n = (int)h.count;
	close(fd);
	return n;
}

int memfile_slot_prepare(const char *dir, unsigned index, char **err)
{
	int e;

	*err = NULL;
	if ((e = pool_open(dir, err)))
		goto fail;
	if (index >= slot.hdr->count) {
		e = failf(err, -EINVAL, "slots '%s': no slot.%u", dir, index);
		goto fail;
	}
	slot.index = index;
	if ((e = slot_file_open(dir, err)))
		goto fail;
	return 0;
fail:
	memfile_slot_release();
	return e;
}

/* Whether a write lock on slot INDEX's state byte conflicts with one through FD: F_WRLCK when
 * another open file description holds it, F_UNLCK when FD's own does or nobody does. */
static int lock_seen_through(int fd, unsigned index)
{
	struct flock l = {.l_type = F_WRLCK,
			  .l_whence = SEEK_SET,
			  .l_start = offsetof(struct pool_hdr, state) + index,
			  .l_len = 1};

	return fcntl(fd, F_OFD_GETLK, &l) ? -1 : l.l_type;
}

int memfile_slot_adopt(int pool_fd, const char *dir, char **err)
{
	struct stat mine, theirs;
	int e;

	*err = NULL;
	if (slot.fd < 0 || slot.active) {
		close(pool_fd);
		return failf(err, -EINVAL, "no slot prepared");
	}
	/* It must be our pool, and its descriptor must be the one holding our slot's lock: our
	 * own sees that lock held by another, theirs sees none in the way. */
	if (fstat(pool_fd, &theirs) || fstat(slot.pool_fd, &mine) || !S_ISREG(theirs.st_mode) ||
	    theirs.st_dev != mine.st_dev || theirs.st_ino != mine.st_ino) {
		close(pool_fd);
		return failf(err, -EINVAL, "slots '%s': the request's pool is another file", dir);
	}
	if (lock_seen_through(slot.pool_fd, slot.index) != F_WRLCK ||
	    lock_seen_through(pool_fd, slot.index) != F_UNLCK) {
		close(pool_fd);
		return failf(err, -EPERM, "slots '%s': the request does not hold slot.%u", dir,
			     slot.index);
	}
	/* From here the lock is ours: it goes with this descriptor, as a claim's does. */
	close(slot.pool_fd);
	slot.pool_fd = pool_fd;
	if ((e = slot_take(dir, err))) {
		memfile_slot_release();
		return e;
	}
	return 0;
}

int memfile_slot_index(bool *recovered)
{
	*recovered = slot.recovered;
	return slot.active ? (int)slot.index : -1;
}

bool memfile_slot_active(void)
{
	return slot.active;
}

int memfile_slot_fd(void)
{
	return slot.fd;
}

int memfile_slot_pool_fd(void)
{
	return slot.pool_fd;
}

const char *memfile_slot_golden_path(void)
{
	return slot.active ? slot.hdr->golden : NULL;
}

int memfile_slot_golden_dirfd(void)
{
	return slot.active ? slot.g.img.dirfd : -1;
}

void memfile_slot_written(uint64_t off, uint64_t len)
{
	track_hole(off, len);
	if (!slot.active || slot.overflow || !len)
		return;
	if (slot.nwritten &&
	    slot.written[slot.nwritten - 1].off + slot.written[slot.nwritten - 1].len == off) {
		slot.written[slot.nwritten - 1].len += len;
		return;
	}
	if (slot.nwritten == slot.capwritten) {
		size_t cap = slot.capwritten ? 2 * slot.capwritten : 256;
		struct extent *v = realloc(slot.written, cap * sizeof(*v));
		if (!v) {
			slot.overflow = true;
			return;
		}
		slot.written = v;
		slot.capwritten = cap;
	}
	slot.written[slot.nwritten++] = (struct extent){off, len};
}

int memfile_slot_golden_section(const char *name, const void **data, size_t *len)
{
	struct image_section *sec = slot.hdr ? image_find(&slot.g.img, name) : NULL;

	if (!sec)
		return -ENOENT;
	*data = sec->data;
	*len = sec->len;
	return 0;
}

const uint8_t *memfile_slot_golden_id(void)
{
	return slot.active ? slot.g.st.id : NULL;
}

const struct store *slot_golden_store(void)
{
	return slot.active ? &slot.g.st : NULL;
}

const struct store *slot_golden_store_prepared(void)
{
	return slot.hdr && slot.fd >= 0 ? &slot.g.st : NULL;
}

/* Punches out [AT, END) of the slot. SEEK_DATA would find its data, but from a hole that has
 * no data after it, it walks the whole terabyte (most of a reset's time, measured); the
 * range is bounded by the memory file's high-water mark instead. */
static int punch_data(uint64_t at, uint64_t end)
{
	if (at < end &&
	    fallocate(slot.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, at, end - at))
		return -errno;
	return 0;
}

/* Without tracking: every page of the golden image's data compared with the slot and written
 * back where it differs, and any other data in the slot punched out. Costs a read of the
 * golden's data, not a write of it. Both are read with pread: through mappings, each of their
 * pages would cost a fault (a second per 167 MiB on a loaded machine, against ~0.1 s). The
 * golden image's chunks are shared among the worker threads (no guest runs any more). */
struct compare_job {
	const struct golden *g;
	uint64_t next; /* the next chunk to take, shared */
	int err;       /* the first error, shared */
};

static void compare_worker(void *arg, int w)
{
	struct compare_job *j = arg;
	const struct golden *g = j->g;
	uint8_t *now = malloc(CHUNK_BYTES), *was = malloc(CHUNK_BYTES);
	int e = now && was ? 0 : -ENOMEM;

	(void)w;
	while (!e && !__atomic_load_n(&j->err, __ATOMIC_RELAXED)) {
		uint64_t k = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (k >= g->st.nch)
			break;
		const struct chunk *c = &g->st.ch[k];
		uint64_t off = c->mem_off, len = (uint64_t)c->pages * MEMFILE_PAGE;
		/* Between golden chunks the slot must be a hole. */
		uint64_t prev =
		    k ? g->st.ch[k - 1].mem_off + (uint64_t)g->st.ch[k - 1].pages * MEMFILE_PAGE
		      : 0;
		if (off > prev && (e = punch_data(prev, off)))
			break;
		if ((e = mf_pio_all(slot.fd, now, len, off, false)) ||
		    (e = mf_pio_all(g->st.fds[0], was, len, off, false)))
			break;
		for (uint64_t i = 0; i < len && !e; i += MEMFILE_PAGE)
			if (memcmp(now + i, was + i, MEMFILE_PAGE) &&
			    pwrite(slot.fd, was + i, MEMFILE_PAGE, off + i) != MEMFILE_PAGE)
				e = -EIO;
	}
	if (e)
		__atomic_compare_exchange_n(&j->err, &(int){0}, e, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
	free(now);
	free(was);
}

static int slot_reset_by_comparison(void)
{
	const struct golden *g = &slot.g;
	struct compare_job j = {.g = g};
	uint64_t at = 0;

	workers_run(workers_count(), compare_worker, &j);
	if (j.err)
		return j.err;
	if (g->st.nch)
		at = g->st.ch[g->st.nch - 1].mem_off +
		     (uint64_t)g->st.ch[g->st.nch - 1].pages * MEMFILE_PAGE;
	uint64_t end = mf.high > g->len ? mf.high : g->len;
	return punch_data(at, end);
}

/* Whether [AT, END) of the slot reads as zeros: its data found with SEEK_DATA (cheap on a
 * tmpfs, however sparse), read. The first page that is not in *BAD. */
static int slot_zero_between(uint64_t at, uint64_t end, uint8_t *buf, uint64_t *bad)
{
	static const uint8_t zero[MEMFILE_PAGE];

	while (at < end) {
		off_t d = lseek(slot.fd, (off_t)at, SEEK_DATA);
		if (d < 0)
			return errno == ENXIO ? 0 : -errno;
		if ((uint64_t)d >= end)
			return 0;
		off_t h = lseek(slot.fd, d, SEEK_HOLE);
		uint64_t stop = h < 0 || (uint64_t)h > end ? end : (uint64_t)h;
		for (uint64_t a = (uint64_t)d & ~(uint64_t)(MEMFILE_PAGE - 1); a < stop;) {
			uint64_t n = stop - a < CHUNK_BYTES ? stop - a : CHUNK_BYTES;
			int e = mf_pio_all(slot.fd, buf, n, a, false);
			if (e)
				return e;
			for (uint64_t i = 0; i < n; i += MEMFILE_PAGE)
				if (memcmp(buf + i, zero, MEMFILE_PAGE)) {
					*bad = a + i;
					return 0;
				}
			a += n;
		}
		at = stop;
	}
	return 0;
}

int memfile_slot_check(char **err)
{
	const struct golden *g = &slot.g;
	uint8_t *now = malloc(CHUNK_BYTES), *was = malloc(CHUNK_BYTES);
	uint64_t at = 0, bad = UINT64_MAX;
	int e = now && was ? 0 : -ENOMEM;

	*err = NULL;
	for (uint64_t k = 0; !e && bad == UINT64_MAX && k < g->st.nch; k++) {
		const struct chunk *c = &g->st.ch[k];
		uint64_t off = c->mem_off, len = (uint64_t)c->pages * MEMFILE_PAGE;
		if ((e = slot_zero_between(at, off, now, &bad)) || bad != UINT64_MAX ||
		    (e = mf_pio_all(slot.fd, now, len, off, false)) ||
		    (e = mf_pio_all(g->st.fds[0], was, len, off, false)))
			break;
		for (uint64_t i = 0; i < len && bad == UINT64_MAX; i += MEMFILE_PAGE)
			if (memcmp(now + i, was + i, MEMFILE_PAGE))
				bad = off + i;
		at = off + len;
	}
	if (!e && bad == UINT64_MAX)
		e = slot_zero_between(at, MEMFILE_SIZE, now, &bad);
	free(now);
	free(was);
	if (e)
		return failf(err, e, "cannot read slot.%u: %s", slot.index, strerror(-e));
	if (bad != UINT64_MAX)
		return failf(err, -EINVAL,
			     "slot.%u is not its golden image when claimed: the page at %#llx "
			     "differs",
			     slot.index, (unsigned long long)bad);
	return 0;
}

int memfile_slot_reset(struct memfile_slot_stats *stats)
{
	uint64_t pages = 0;
	int e = 0;

	if (!slot.active)
		return 0;
	bool tracked = memfile_track_since_claim_known();
	if (stats)
		*stats =
		    (struct memfile_slot_stats){.recovered = slot.recovered, .tracked = tracked};
	if (slot.overflow) {
		e = slot_reset_all(&slot.g, slot.fd);
		pages = MEMFILE_SIZE / MEMFILE_PAGE;
	} else if (!tracked) {
		for (size_t i = 0; i < slot.nwritten && !e; i++) {
			e = slot_reset_range(&slot.g, slot.fd, slot.written[i].off,
					     slot.written[i].len);
			pages += slot.written[i].len / MEMFILE_PAGE;
		}
		if (!e)
			e = slot_reset_by_comparison();
	} else {
		/* The ranges the restore wrote join the pages the guest or the Sentry changed
		 * since the claim: each page is reset (and counted) once, in runs. */
		for (size_t i = 0; i < slot.nwritten && !e; i++)
			if (!memfile_track_since_claim_add(slot.written[i].off,
							   slot.written[i].len))
				e = -ENOMEM;
		uint64_t n = memfile_track_since_claim_end();
		for (uint64_t p = 0; p < n && !e;) {
			if (!memfile_track_since_claim(p)) {
				p++;
				continue;
			}
			uint64_t q = p;
			while (q < n && memfile_track_since_claim(q))
				q++;
			e = slot_reset_range(&slot.g, slot.fd, p * MEMFILE_PAGE,
					     (q - p) * MEMFILE_PAGE);
			pages += q - p;
			p = q;
		}
	}
	/* The Sentry's reserved pages (the guests' vDSO) are no part of the golden image. */
	if (!e && !slot.overflow)
		e = punch_data(MEMFILE_USABLE, MEMFILE_SIZE);
	if (stats)
		stats->pages = pages;
	return e;
}

void memfile_slot_release(void)
{
	if (slot.active && slot.hdr)
		__atomic_store_n(&slot.hdr->state[slot.index], SLOT_READY, __ATOMIC_RELEASE);
	slot.active = false;
	if (slot.hdr)
		munmap(slot.hdr, slot.hdr_len);
	slot.hdr = NULL;
	/* The lock goes with the pool's descriptor. */
	if (slot.pool_fd >= 0)
		close(slot.pool_fd);
	slot.pool_fd = -1;
	golden_close(&slot.g);
	free(slot.written);
	slot.written = NULL;
	slot.nwritten = slot.capwritten = 0;
}
