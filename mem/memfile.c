/* The memory file and its allocator: a first-fit free list of extents over a sparse memfd (or,
 * bounded by --memory, a file on a tmpfs of that size) mapped once into the Sentry. Freed
 * extents are punched out so they cost no memory. */
#include "mem/memfile.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/mount.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mem/internal.h"
#include "state/codec.h"

struct memfile_state mf = {.fd = -1, .reconf_fd = -1, .mnt_fd = -1, .copy_fd = -1};

/* Frees of an address space whose writes were collected (memfile_free_harvested). */
static bool harvested;

void memfile_free_harvested(bool on)
{
	harvested = on;
}

/* A fault on the memory file is the bounded tmpfs refusing a page. Inside memfile_guard: back
 * to it. Outside (an access no guard covers yet), the page, a hole, is replaced in the
 * Sentry's view by a private zero page so that the access completes, and memfile_settle puts
 * it in the file afterwards. Anything else is a real fault: the default action ends the
 * Sentry. */
static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	char *a = si->si_addr;

	(void)uc;
	if (a >= mf.base && a < mf.base + MEMFILE_SIZE) {
		if (mf.guard)
			siglongjmp(*mf.guard, 1);
		char *page = (char *)((uintptr_t)a & ~(uintptr_t)(MEMFILE_PAGE - 1));
		if (mf.nspill < (int)(sizeof(mf.spill) / sizeof(mf.spill[0])) &&
		    mmap(page, MEMFILE_PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == page) {
			mf.spill[mf.nspill++] = (uint64_t)(page - mf.base);
			return;
		}
	}
	signal(sig, SIG_DFL);
}

int memfile_settle(void)
{
	int lost = 0;

	for (int i = 0; i < mf.nspill; i++) {
		uint64_t off = mf.spill[i];
		char *p = mf.base + off;
		ssize_t w = pwrite(mf.fd, p, MEMFILE_PAGE, off);
		if (w != MEMFILE_PAGE && mf.full_hook && mf.full_hook())
			w = pwrite(mf.fd, p, MEMFILE_PAGE, off);
		lost += w != MEMFILE_PAGE;
		/* The shared view back, whatever happened: a lost page reads as the hole it is. */
		if (mmap(p, MEMFILE_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, mf.fd,
			 off) != p)
			abort(); /* the Sentry's view of guest memory would be wrong */
	}
	mf.nspill = 0;
	return lost ? -ENOMEM : 0;
}

static int map_file(void)
{
	/* A claimed slot is the memory file as it is: the golden image's pages, ready. */
	if (memfile_slot_fd() < 0 && ftruncate(mf.fd, MEMFILE_SIZE))
		return -errno;
	mf.base =
	    mmap(NULL, MEMFILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, mf.fd, 0);
	if (mf.base == MAP_FAILED)
		return -errno;
	/* Huge folios only where a restore asks for them (dense.c), and only if the view's
	 * blocks line up with the file's. */
	if (mf.huge &&
	    ((uintptr_t)mf.base % DENSE_BYTES || madvise(mf.base, MEMFILE_SIZE, MADV_NOHUGEPAGE)))
		mf.huge = false;
	return 0;
}

int memfile_init(void)
{
	workers_init();
	mf.huge = false;
	mf.fd = memfile_slot_fd() >= 0 ? memfile_slot_fd()
				       : memfd_create("minisentry-memory", MFD_CLOEXEC);
	if (mf.fd < 0)
		return -errno;
	return map_file();
}

/* A tmpfs of LIMIT bytes, mounted nowhere (fsopen/fsmount): only the file keeps it alive. It
 * must allow exec (guest code is mapped from the file); nothing can be reached through it but
 * the one unnamed file. Its reconfiguration context (fspick) is made now, while we may: it is
 * what lets the bound change later (memfile_reconf_fd), and none can be made once the Sentry
 * has dropped its capabilities. */
static int bounded_file(uint64_t limit, bool huge)
{
	char size[32];
	int fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC), mnt, fd;

	if (fs < 0)
		return -errno;
	snprintf(size, sizeof(size), "%llu", (unsigned long long)limit);
	if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", size, 0) ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0700", 0) ||
	    (huge && syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "huge", "advise", 0)) ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0)) {
		int e = -errno;
		close(fs);
		return e;
	}
	mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	close(fs);
	if (mnt < 0)
		return -errno;
	fd = openat(mnt, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		fd = -errno;
		close(mnt);
		return fd;
	}
	if (mf.reconf_fd < 0)
		mf.reconf_fd =
		    (int)syscall(SYS_fspick, mnt, "", FSPICK_EMPTY_PATH | FSPICK_CLOEXEC);
	/* Kept, not closed: closing the last reference to a detached mount unmounts it, and an
	 * unmount waits for an RCU grace period (0.1-0.5 ms of every start here, more while a
	 * thread makes the network namespace). It goes with the Sentry's exit, which its
	 * launcher does not wait for. Nothing else is reachable through it. */
	mf.mnt_fd = mnt;
	return fd;
}

int memfile_init_bounded(uint64_t limit)
{
	struct sigaction sa = {.sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO | SA_NODEFER};
	/* huge=advise: a kernel without transparent huge pages refuses it. */
	int fd = bounded_file(limit, true);

	mf.huge = fd >= 0;
	if (fd < 0)
		fd = bounded_file(limit, false);
	if (fd < 0)
		return fd;
	if (sigaction(SIGBUS, &sa, NULL)) {
		close(fd);
		return -errno;
	}
	workers_init();
	mf.fd = fd;
	mf.limit = limit;
	return map_file();
}

uint64_t memfile_limit(void)
{
	return mf.limit;
}

int memfile_reconf_fd(void)
{
	return mf.limit ? mf.reconf_fd : -1;
}

uint64_t memfile_limit_reread(void)
{
	struct statfs sf;

	if (mf.limit && fstatfs(mf.fd, &sf) == 0 && sf.f_blocks > 0)
		mf.limit = (uint64_t)sf.f_blocks * (uint64_t)sf.f_bsize;
	return mf.limit;
}

uint64_t memfile_used(void)
{
	struct stat st;

	return fstat(mf.fd, &st) == 0 ? (uint64_t)st.st_blocks * 512 : 0;
}

void memfile_set_full_hook(bool (*hook)(void))
{
	mf.full_hook = hook;
}

int memfile_guard(void (*fn)(void *arg), void *arg)
{
	sigjmp_buf env;
	volatile int tries = 0;

	if (!mf.limit || mf.guard) {
		fn(arg); /* unbounded, or inside a guard already: that one catches */
		return 0;
	}
	if (sigsetjmp(env, 0)) {
		mf.guard = NULL;
		if (tries++ || !mf.full_hook || !mf.full_hook())
			return -ENOMEM;
	}
	mf.guard = &env;
	fn(arg);
	mf.guard = NULL;
	return 0;
}

int memfile_fd(void)
{
	return mf.fd;
}

int memfile_copy_fd(void)
{
	char path[32];

	if (mf.copy_fd < 0) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", mf.fd);
		if ((mf.copy_fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
			return -errno;
	}
	return mf.copy_fd;
}

void *memfile_ptr(uint64_t off)
{
	return mf.base + off;
}

void memfile_write_at(void *p, const void *src, size_t len)
{
	uint64_t off = (uint64_t)((char *)p - mf.base);

	/* What the view's faults would have done: a page a lazy restore has not placed yet is
	 * loaded first (a write through the file would make the page, and the image's bytes
	 * could never be placed), and write tracking, which watches the view, is told. */
	memfile_lazy_ensure(off, len);
	memfile_track_untracked(off, len);
	if (mf_pio_all(mf.fd, (void *)src, len, off, true))
		memcpy(p, src, len);
}

int64_t memfile_alloc(uint64_t len)
{
	for (size_t i = 0; i < mf.nfree; i++) {
		struct extent *e = &mf.free[i];
		if (e->len < len)
			continue;
		uint64_t off = e->off;
		if (memfile_slot_active())
			memfile_zero(off, len);
		else
			memfile_track_untracked(off, len);
		e->off += len;
		e->len -= len;
		if (e->len == 0) {
			for (size_t j = i + 1; j < mf.nfree; j++)
				mf.free[j - 1] = mf.free[j];
			mf.nfree--;
		}
		return off;
	}
	if (len > MEMFILE_USABLE - mf.bump) /* not bump + len: a shmget's LEN may be near 2^64 */
		return -ENOMEM;
	mf.bump += len;
	if (mf.bump > mf.high)
		mf.high = mf.bump;
	if (memfile_slot_active())
		memfile_zero(mf.bump - len, len);
	else
		memfile_track_untracked(mf.bump - len, len);
	return mf.bump - len;
}

void memfile_reserved(uint64_t *off, uint64_t *len)
{
	*off = MEMFILE_USABLE;
	*len = MEMFILE_RESERVED;
}

bool memfile_is_reserved(uint64_t off)
{
	return off >= MEMFILE_USABLE && off < MEMFILE_SIZE;
}

void memfile_restore_write(uint64_t off, uint64_t len)
{
	if (!memfile_slot_active())
		return;
	fallocate(mf.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len);
	memfile_slot_written(off, len);
}

void memfile_zero(uint64_t off, uint64_t len)
{
	/* Crossed off first: a lazy restore must not bring the old pages back. */
	lazy_forget(off, len);
	memfile_track_untracked(off, len);
	track_hole(off, len);
	fallocate(mf.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len);
}

void memfile_free(uint64_t off, uint64_t len)
{
	size_t i = 0;

	if (len == 0)
		return;
	/* A slot keeps freed pages as they are (a guest's exit would otherwise punch out all
	 * of the golden image it ran on, and its reset copy it all back): memfile_alloc zeroes
	 * them when they are used again. Only pages whose writes were not collected count as
	 * changed. */
	if (!memfile_slot_active())
		memfile_zero(off, len);
	else if (!harvested)
		memfile_track_untracked(off, len);
	while (i < mf.nfree && mf.free[i].off < off)
		i++;
	/* Merge with the neighbours where they touch. */
	bool merged_prev = i > 0 && mf.free[i - 1].off + mf.free[i - 1].len == off;
	bool merged_next = i < mf.nfree && off + len == mf.free[i].off;
	if (merged_prev && merged_next) {
		mf.free[i - 1].len += len + mf.free[i].len;
		for (size_t j = i + 1; j < mf.nfree; j++)
			mf.free[j - 1] = mf.free[j];
		mf.nfree--;
	} else if (merged_prev) {
		mf.free[i - 1].len += len;
	} else if (merged_next) {
		mf.free[i].off = off;
		mf.free[i].len += len;
	} else {
		if (mf.nfree == mf.capfree) {
			size_t cap = mf.capfree ? 2 * mf.capfree : 64;
			struct extent *n = realloc(mf.free, cap * sizeof(*n));
			if (!n)
				return; /* the range is punched out; only its reuse is lost */
			mf.free = n;
			mf.capfree = cap;
		}
		for (size_t j = mf.nfree; j > i; j--)
			mf.free[j] = mf.free[j - 1];
		mf.free[i] = (struct extent){off, len};
		mf.nfree++;
	}
	/* The last extent touching the bump pointer goes back to it. */
	if (mf.nfree && mf.free[mf.nfree - 1].off + mf.free[mf.nfree - 1].len == mf.bump) {
		mf.bump = mf.free[mf.nfree - 1].off;
		mf.nfree--;
	}
}

int mf_pio_all(int fd, void *buf, size_t len, uint64_t off, bool write)
{
	char *p = buf;

	while (len) {
		ssize_t n = write ? pwrite(fd, p, len, (off_t)off) : pread(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* The first hole of the file in [D, END), or END. SEEK_HOLE would say, but it walks every page
 * of data from D to the hole however far past END that is (each of a delta's changed runs
 * inside 167 MiB of data walked all of it: ~3-15 ms a run). mincore of the Sentry's view says
 * which pages the file holds in memory (~0.25 ms for 167 MiB); only a page it does not hold
 * (a hole, or a page swapped out) is asked about with SEEK_DATA, which stops at data at once. */
static uint64_t hole_before(uint64_t d, uint64_t end)
{
	unsigned char vec[1024];
	uint64_t at = d & ~(uint64_t)(MEMFILE_PAGE - 1);

	while (at < end) {
		uint64_t n = (end - at + MEMFILE_PAGE - 1) / MEMFILE_PAGE;
		if (n > sizeof(vec))
			n = sizeof(vec);
		if (mincore(mf.base + at, n * MEMFILE_PAGE, vec)) {
			off_t h = lseek(mf.fd, (off_t)(at > d ? at : d), SEEK_HOLE);
			return h < 0 || (uint64_t)h > end ? end : (uint64_t)h;
		}
		for (uint64_t i = 0; i < n; i++, at += MEMFILE_PAGE)
			if (!(vec[i] & 1) && lseek(mf.fd, (off_t)at, SEEK_DATA) != (off_t)at)
				return at > d ? (at < end ? at : end) : d;
	}
	return end;
}

bool mf_next_data(uint64_t at, uint64_t end, uint64_t *data, uint64_t *stop)
{
	off_t d = lseek(mf.fd, at, SEEK_DATA);

	if (d < 0 || (uint64_t)d >= end)
		return false;
	*data = d;
	*stop = hole_before(d, end);
	return true;
}

/* One run of data copied inside the file by the kernel (copy_file_range), not through the
 * Sentry's view (DST is a fresh allocation: memfile_alloc counted it as written, and no lazy
 * restore's page is missing there): both sides are a guest's pages (copy on write after fork copies
 * a parent's stack and data for each child, or for the parent, ~12 pages per fork), and through the
 * view each page would also be mapped in the Sentry for good, a page-table entry and a page of its
 * resident size, with a page-table page per copied piece (docs/platform.md, "What a process
 * costs the Sentry"). A kernel that cannot copy a file's range so writes the view's bytes. */
static int copy_run(uint64_t dst, uint64_t src, uint64_t len)
{
	while (len) {
		loff_t in = (loff_t)src, out = (loff_t)dst;
		ssize_t n = copy_file_range(mf.fd, &in, mf.fd, &out, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 &&
		    (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP))
			return mf_pio_all(mf.fd, mf.base + src, len, dst, true);
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO; /* SRC was data: it cannot end here */
		src += (uint64_t)n;
		dst += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

int memfile_copy(uint64_t dst, uint64_t src, uint64_t len)
{
	uint64_t at = src, end = src + len;

	uint64_t data, stop;

	/* The holes are the truth only once the image's pages are in. */
	memfile_lazy_ensure(src, len);
	/* Past the last extent all is hole: the destination is fresh, so already zero. */
	for (; at < end && mf_next_data(at, end, &data, &stop); at = stop) {
		int err = copy_run(dst + (data - src), data, stop - data);
		if (err)
			return err;
	}
	return 0;
}

struct copy_args {
	uint64_t dst, src, len;
	int err;
};

static void copy_fn(void *arg)
{
	struct copy_args *c = arg;

	c->err = memfile_copy(c->dst, c->src, c->len);
}

/* A bounded file refuses a page with ENOSPC here (a write through the view would fault with
 * SIGBUS): the full hook may free room once, and the copy runs again, whole. */
int memfile_copy_guarded(uint64_t dst, uint64_t src, uint64_t len)
{
	struct copy_args c = {dst, src, len, 0};

	for (int tries = 0;; tries++) {
		if (memfile_guard(copy_fn, &c))
			return -ENOMEM;
		if (!c.err)
			return 0;
		if (c.err != -ENOSPC || tries || !mf.full_hook || !mf.full_hook())
			return -ENOMEM;
	}
}

struct mobj *mobj_new(uint64_t len)
{
	struct mobj *m = malloc(sizeof(*m));
	int64_t off;

	if (!m)
		return NULL;
	off = memfile_alloc(len);
	if (off < 0) {
		free(m);
		return NULL;
	}
	m->off = off;
	m->len = len;
	m->refs = 1;
	return m;
}

struct mobj *mobj_get(struct mobj *m)
{
	m->refs++;
	return m;
}

void mobj_put(struct mobj *m)
{
	if (!m || --m->refs > 0)
		return;
	memfile_free(m->off, m->len);
	free(m);
}

uint64_t memfile_data_bytes(uint64_t off, uint64_t len)
{
	uint64_t at = off, end = off + len, bytes = 0;

	uint64_t data, stop;

	for (; at < end && mf_next_data(at, end, &data, &stop); at = stop)
		bytes += stop - data;
	return bytes;
}

int64_t memfile_seek(uint64_t off, uint64_t end, bool data)
{
	memfile_lazy_ensure(off, end - off);
	off_t r = lseek(mf.fd, off, data ? SEEK_DATA : SEEK_HOLE);

	if (r < 0)
		return -errno;
	return (uint64_t)r < end ? r : (data ? -ENXIO : (int64_t)end);
}

int mobj_save(struct enc *e, const void *obj)
{
	const struct mobj *m = obj;

	enc_u64(e, m->off);
	enc_u64(e, m->len);
	return 0;
}

void *mobj_load(struct dec *d)
{
	uint64_t off = dec_u64(d), len = dec_u64(d);

	if (!dec_ok(d) || off % MEMFILE_PAGE || len % MEMFILE_PAGE || !len || off > mf.bump ||
	    len > mf.bump - off) {
		dec_fail(d, "bad memory object");
		return NULL;
	}
	struct mobj *m = malloc(sizeof(*m));
	if (!m) {
		dec_fail(d, "out of memory");
		return NULL;
	}
	*m = (struct mobj){.off = off, .len = len, .refs = 1};
	return m;
}

void mobj_drop(void *obj)
{
	mobj_put(obj);
}
