/* Address-space operations: each edits the VMA set and injects the matching mmap, munmap or
 * mprotect into the stub, mapping memory-file ranges MAP_SHARED|MAP_FIXED at guest addresses.
 * Also the guest-memory accessors, which resolve addresses through the VMAs to the Sentry's
 * view of the memory file. */
#include "sentry/mm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "platform/platform.h"
#include "sentry/filecache.h"
#include "sentry/aio.h"
#include "sentry/membarrier.h"
#include "sentry/vdso.h"
#include "mem/memfile.h"
#include "vfs/vfs.h"
#include "state/codec.h"

#define MMAP_MIN_ADDR 0x10000UL
#define STACK_RESERVE (8UL << 20)
#define MMAP_GAP (128UL << 20)
#define POPULATE_TEXT_MAX (8UL << 20)

static int install(struct mm *mm, const struct vma *v);
static int install_flags(struct mm *mm, const struct vma *v, int extra);

/* The stub page, or the vDSO's pages: the Sentry's, in no image, watched by no one. */
static bool sentry_pages(const struct vma *v)
{
	return v->flags & (VMA_RESERVED | VMA_VDSO);
}

/* The vDSO's clock page, [vvar]: like Linux's (a VM_PFNMAP mapping without VM_MAYWRITE or
 * VM_MAYEXEC), never writable nor executable, and no MADV_DONTNEED or MADV_FREE. */
static bool clock_page(const struct vma *v)
{
	return (v->flags & (VMA_VDSO | VMA_NO_WRITE)) == (VMA_VDSO | VMA_NO_WRITE);
}
static void split_ref(struct vma *piece);
static int break_cow(struct mm *mm, uintptr_t start, uintptr_t end);

/* What the host maps for V: nothing past a file's end (access is SIGBUS), and no write to
 * memory shared copy-on-write (the fault copies it first). */
static int host_prot(const struct vma *v)
{
	if (v->flags & VMA_PAST_EOF)
		return PROT_NONE;
	return v->flags & VMA_COW ? v->prot & ~PROT_WRITE : v->prot;
}

static long inject(struct mm *mm, long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	const long args[6] = {a0, a1, a2, a3, a4, a5};

	return platform_inject(mm->via, nr, args);
}

void mm_set_layout(struct mm *mm, size_t size, uint64_t stack_rnd, uint64_t stack_rnd_max,
		   uint64_t mmap_rnd)
{
	mm->stack_top = PAGE_DOWN(mm->task_size - stack_rnd);
	mm->mmap_base = PAGE_DOWN(mm->task_size - (size > STACK_RESERVE ? size : STACK_RESERVE) -
				  MMAP_GAP - stack_rnd_max - mmap_rnd);
}

struct mm *mm_new(struct platform_thread *thread)
{
	struct mm *mm = calloc(1, sizeof(*mm));
	uintptr_t top = platform_user_top();

	if (!mm)
		return NULL;
	mm->refs = 1;
	mm->uffd = -1;
	mm->via = thread;
	mm->vmas.on_split = split_ref;
	if (top > (1UL << 47) - PAGE_SIZE)
		top = (1UL << 47) - PAGE_SIZE; /* guests expect a 47-bit address space */
	mm->task_size = mm->stack_top = top;
	mm->mmap_base = PAGE_DOWN(top - STACK_RESERVE - MMAP_GAP);
	struct vma stub = {
	    .start = platform_stub_base(),
	    .end = platform_stub_base() + platform_stub_len(),
	    .prot = PROT_READ | PROT_EXEC,
	    .flags = VMA_RESERVED,
	};
	if (vma_insert(&mm->vmas, &stub)) {
		free(mm);
		return NULL;
	}
	return mm;
}

/* A piece leaving the address space: private memory is punched out at once (no other piece
 * maps those pages, unless they are shared copy-on-write), and the piece's reference on its
 * memory object goes. */
static void free_piece(const struct vma *v, void *ctx)
{
	(void)ctx;
	if (v->flags & VMA_RESERVED)
		return;
	/* Shared memory written here and unmapped: its written bits go with the mapping.
	 * (Private memory is zeroed or freed below, which counts; memory shared copy on write
	 * is mapped without write.) */
	if (v->flags & MAP_SHARED)
		memfile_track_untracked(v->mf_off, v->end - v->start);
	if (!(v->flags & (MAP_SHARED | VMA_COW)) && v->mobj->refs > 1)
		memfile_zero(v->mf_off, v->end - v->start);
	mobj_put(v->mobj);
	if (v->dentry)
		vfs_dentry_put(v->dentry);
}

/* A piece that moved elsewhere (mremap): only its old reference goes. */
static void drop_piece_ref(const struct vma *v, void *ctx)
{
	(void)ctx;
	mobj_put(v->mobj);
	if (v->dentry)
		vfs_dentry_put(v->dentry);
}

/* A new piece (a split, a copy for fork or a move) takes its own references. */
static void split_ref(struct vma *piece)
{
	if (piece->mobj)
		mobj_get(piece->mobj);
	if (piece->dentry)
		vfs_dentry_get(piece->dentry);
}

struct mm *mm_get(struct mm *mm)
{
	mm->refs++;
	return mm;
}

void mm_collect_writes(struct mm *mm)
{
	if (!mm || !mm->tracked)
		return;
	memfile_track_space_end(mm);
	mm->tracked = false;
	mm->collected = true;
}

void mm_put(struct mm *mm)
{
	if (!mm || --mm->refs > 0)
		return;
	/* Its writes, unless collected before its stub went (mm_collect_writes): a stub gone
	 * already makes its whole memory count as changed. */
	mm_collect_writes(mm);
	aio_mm_release(mm);
	if (mm->uffd >= 0)
		close(mm->uffd);
	free(mm->fresh);
	memfile_free_harvested(mm->collected);
	for (size_t i = 0; i < mm->vmas.n; i++)
		free_piece(&mm->vmas.v[i], NULL);
	memfile_free_harvested(false);
	vma_set_destroy(&mm->vmas);
	free(mm);
}

/* Fork shares private memory copy-on-write: parent and child map the same memory object
 * without write on the host, and whichever writes first gets its own copy (break_cow). The
 * parent's writable pieces lose write on the host here, through its stopped thread. */
struct mm *mm_fork(struct mm *parent, struct platform_thread *thread)
{
	struct mm *mm = mm_new(thread);

	if (!mm)
		return NULL;
	mm->mmap_base = parent->mmap_base;
	mm->stack_top = parent->stack_top;
	mm->brk_start = parent->brk_start;
	mm->brk = parent->brk;
	mm->arg_start = parent->arg_start;
	mm->arg_end = parent->arg_end;
	mm->env_start = parent->env_start;
	mm->env_end = parent->env_end;
	mm->membarrier = parent->membarrier;
	if (vma_set_reserve(&mm->vmas, parent->vmas.n))
		goto fail;
	size_t nwipe = 0;
	for (size_t i = 0; i < parent->vmas.n; i++) {
		struct vma *pv = &parent->vmas.v[i];
		if (pv->flags & (VMA_RESERVED | VMA_DONTFORK))
			continue;
		if (pv->flags & VMA_WIPEONFORK) {
			nwipe++; /* mapped afresh below */
			continue;
		}
		if (!(pv->flags & (MAP_SHARED | VMA_COW))) {
			pv->flags |= VMA_COW;
			parent->cow_epoch++;
			if (host_prot(pv) != pv->prot &&
			    inject(parent, SYS_mprotect, pv->start, pv->end - pv->start,
				   host_prot(pv), 0, 0, 0) < 0) {
				pv->flags |= VMA_HOST_STALE; /* retried before the parent runs */
				parent->host_stale = true;
			}
		}
		struct vma v = *pv;
		v.flags &= ~(VMA_HOST_STALE | VMA_HOST_REMAP | MAP_LOCKED); /* locks stay behind */
		mobj_get(v.mobj);
		if (v.dentry)
			vfs_dentry_get(v.dentry);
		if (install(mm, &v)) {
			mobj_put(v.mobj);
			if (v.dentry)
				vfs_dentry_put(v.dentry);
			goto fail;
		}
	}
	/* MADV_WIPEONFORK ranges: new zero memory of the child's own. */
	for (size_t i = 0; nwipe && i < parent->vmas.n; i++) {
		const struct vma *pv = &parent->vmas.v[i];
		if ((pv->flags & (VMA_WIPEONFORK | VMA_RESERVED | VMA_DONTFORK)) != VMA_WIPEONFORK)
			continue;
		if (mm_map(mm, pv->start, pv->end - pv->start, pv->prot,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | (pv->flags & MAP_GROWSDOWN),
			   NULL, 0, 0, pv->name[0] ? pv->name : NULL) < 0 ||
		    vma_set_flags(&mm->vmas, pv->start, pv->end, VMA_WIPEONFORK, 0))
			goto fail;
	}
	return mm;
fail:
	mm_put(mm);
	return NULL;
}

static bool touches_reserved(struct mm *mm, uintptr_t start, uintptr_t end)
{
	uintptr_t s = platform_stub_base(), e = s + platform_stub_len();

	(void)mm;
	return start < e && end > s;
}

/* Whether the guest has every page of [start, end) mapped: the stub page is not the guest's. */
static bool guest_mapped(struct mm *mm, uintptr_t start, uintptr_t end)
{
	return vma_range_covered(&mm->vmas, start, end) && !touches_reserved(mm, start, end);
}

static bool valid_range(struct mm *mm, uintptr_t start, size_t len)
{
	return len && start + len > start && start + len <= mm->task_size;
}

/* Copies FILE_BYTES of FILE at OFF into the memory file at MF. Bytes past EOF stay zero. */
static int fill_from_file(struct vfs_file *file, uint64_t mf, off_t off, size_t file_bytes)
{
	char *dst = memfile_ptr(mf);
	int to = file->ops->copy_to_fd && file_bytes ? memfile_copy_fd() : -1;

	/* As the file cache fills: a copy inside the host kernel writes the memory file's pages
	 * through tmpfs, where a read into the Sentry's view faults each page in first (a
	 * program's data segment, ten pages of busybox: 0.17 ms of a start). Anything it cannot
	 * do, the read does. */
	if (to >= 0 &&
	    file->ops->copy_to_fd(file, to, (off_t)mf, file_bytes, off) == (ssize_t)file_bytes)
		return 0;
	if (!file->ops->pread_kernel)
		return -ENODEV;
	while (file_bytes) {
		ssize_t n = file->ops->pread_kernel(file, dst, file_bytes, off);
		if (n < 0)
			return n;
		if (n == 0)
			break;
		dst += n;
		off += n;
		file_bytes -= n;
	}
	return 0;
}

/* A new mapping of the file in MM's stub: no one watches writes through it until the next
 * base, so its range counts as changed, and the next base protects it. */
static void track_mapped(struct mm *mm, const struct vma *v)
{
	memfile_track_untracked(v->mf_off, v->end - v->start);
	if (!mm->tracked || sentry_pages(v))
		return;
	if (mm->nfresh == mm->capfresh) {
		size_t cap = mm->capfresh ? 2 * mm->capfresh : 16;
		struct memfile_space_range *f = realloc(mm->fresh, cap * sizeof(*f));
		if (!f) {
			memfile_track_invalidate();
			return;
		}
		mm->fresh = f;
		mm->capfresh = cap;
	}
	mm->fresh[mm->nfresh++] =
	    (struct memfile_space_range){v->start, v->end - v->start, v->mf_off, false};
}

static bool premap_take(const struct mm *mm, const struct vma *v);
static bool premap_taken(const struct mm *mm, uint64_t start, uint64_t len, uint64_t off);
static void premap_done(const struct mm *mm);

int mm_track(struct mm *mm, struct platform_thread *stopped)
{
	struct memfile_space_range *r = calloc(mm->vmas.n + 1, sizeof(*r));
	size_t n = 0;
	int uffd = -1, e;

	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < mm->vmas.n; i++) {
		const struct vma *v = &mm->vmas.v[i];
		if (!sentry_pages(v))
			r[n++] = (struct memfile_space_range){
			    v->start, v->end - v->start, v->mf_off,
			    premap_taken(mm, v->start, v->end - v->start, v->mf_off)};
	}
	if (!mm->tracked) {
		/* The one its stub made at a restore, or one made now. */
		uffd = mm->uffd >= 0 ? mm->uffd : platform_stub_uffd(stopped);
		mm->uffd = -1;
		if (uffd < 0) {
			free(r);
			return uffd;
		}
	}
	e = memfile_track_space(mm, uffd, stopped->host_pid, r, n, mm->fresh, mm->nfresh,
				mm->untouched);
	mm->untouched = false;
	free(r);
	premap_done(mm);
	mm->nfresh = 0;
	mm->tracked = !e;
	return e;
}

/* Set while mm_load maps a lazily restored address space: its mappings are watched
 * (memfile_lazy_watch) instead of loaded first. */
static bool loading_lazily;

/* Installs a VMA backed by memory-file offset MF at [addr, addr+len) in the stub. */
static int install(struct mm *mm, const struct vma *v)
{
	return install_flags(mm, v, 0);
}

/* The same, mapped with MAP_SHARED|MAP_FIXED and EXTRA: 0, or MAP_POPULATE to make its pages
 * present at once (never while a lazy restore loads). */
static int install_flags(struct mm *mm, const struct vma *v, int extra)
{
	/* While a lazy restore loads, a new mapping of the file would see the pages not yet
	 * loaded as zeros: load them first. */
	if (!loading_lazily)
		memfile_lazy_ensure(v->mf_off, v->end - v->start);
	else
		extra &= ~MAP_POPULATE;
	if (premap_take(mm, v)) {
		track_mapped(mm, v);
		return vma_insert(&mm->vmas, v);
	}
	long r = inject(mm, SYS_mmap, v->start, v->end - v->start, host_prot(v),
			MAP_SHARED | MAP_FIXED | extra, memfile_fd(), v->mf_off);

	if (r < 0)
		return r;
	if ((uintptr_t)r != v->start)
		return -ENOMEM;
	track_mapped(mm, v);
	return vma_insert(&mm->vmas, v);
}

/* MAP_32BIT, as Linux places it for a 64-bit process: bottom-up in the second GiB, so that
 * 32-bit code (a far jump to the compatibility code segment) can run there. Linux starts at a
 * random page of its first 32 MiB; this starts at its bottom. */
static uintptr_t gap_32bit(struct mm *mm, size_t len)
{
	uintptr_t at = 0x40000000UL, top = 0x80000000UL;

	for (size_t i = 0; i < mm->vmas.n && at + len <= top; i++) {
		const struct vma *v = &mm->vmas.v[i];
		if (v->end <= at)
			continue;
		if (v->start >= at + len)
			break;
		at = v->end;
	}
	return len <= top && at <= top - len ? at : 0;
}

/* Chooses where a LEN-byte mapping goes (LEN page-aligned): at ADDR for MAP_FIXED (after
 * dropping the bookkeeping of what is there: the new host mapping replaces it), else near the
 * hint or top-down in the mmap area. */
static long place(struct mm *mm, uintptr_t addr, size_t len, int flags)
{
	int err;

	if (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) {
		if (addr & (PAGE_SIZE - 1))
			return -EINVAL;
		/* Over the stub page, which Linux would have free, the mapping cannot be made:
		 * ENOMEM, as for a mapping the address space has no room for. */
		if (!valid_range(mm, addr, len) || addr < MMAP_MIN_ADDR ||
		    touches_reserved(mm, addr, addr + len))
			return -ENOMEM;
		if (!vma_range_free(&mm->vmas, addr, addr + len)) {
			if (flags & MAP_FIXED_NOREPLACE)
				return -EEXIST;
			/* The new host mapping replaces the old one; only the bookkeeping goes. */
			if ((err = vma_remove(&mm->vmas, addr, addr + len, free_piece, NULL)))
				return err;
		}
	} else {
		addr = PAGE_DOWN(addr);
		if (!addr || addr < MMAP_MIN_ADDR || !valid_range(mm, addr, len) ||
		    !vma_range_free(&mm->vmas, addr, addr + len))
			addr = flags & MAP_32BIT
				   ? gap_32bit(mm, len)
				   : vma_find_gap(&mm->vmas, len, MMAP_MIN_ADDR, mm->mmap_base);
		if (!addr)
			return -ENOMEM;
	}
	return addr;
}

/* Marks the pages of shared mappings of MO in MM that lie past MF_EOF (the memory-file offset
 * of the first whole page past the end of the file MO holds) as past EOF, and the others as
 * not, leaving the host's protection to mm_sync_host. */
static bool mark_past_eof(struct mm *mm, struct mobj *mo, uint64_t mf_eof)
{
	bool changed = false;

	for (size_t i = 0; i < mm->vmas.n; i++) {
		struct vma v = mm->vmas.v[i];
		if (v.mobj != mo || !(v.flags & MAP_SHARED))
			continue;
		uintptr_t cut = mf_eof <= v.mf_off ? v.start
				: mf_eof - v.mf_off >= v.end - v.start
				    ? v.end
				    : v.start + (mf_eof - v.mf_off);
		bool past_now = cut < v.end && !(v.flags & VMA_PAST_EOF);
		bool back_now = cut > v.start && (v.flags & VMA_PAST_EOF);
		if (!past_now && !back_now)
			continue;
		/* Pieces split off here are handled on later turns of the loop. */
		if (vma_set_flags(&mm->vmas, cut, v.end, VMA_PAST_EOF | VMA_HOST_STALE, 0) ||
		    vma_set_flags(&mm->vmas, v.start, cut, VMA_HOST_STALE, VMA_PAST_EOF))
			continue; /* out of memory: the host keeps the old protection */
		changed = true;
	}
	return changed;
}

/* Brings the host's mappings up to what the stale VMAs say, through mm->via (a stopped
 * thread); a piece the host refuses stays stale for the next try. */
void mm_sync_host(struct mm *mm)
{
	bool stale = false;

	for (size_t i = 0; i < mm->vmas.n; i++) {
		struct vma *v = &mm->vmas.v[i];
		long r;
		if (!(v->flags & VMA_HOST_STALE))
			continue;
		if (v->flags & VMA_HOST_REMAP) {
			memfile_lazy_ensure(v->mf_off, v->end - v->start);
			track_mapped(mm, v);
		}
		if (v->flags & VMA_HOST_REMAP)
			r = inject(mm, SYS_mmap, v->start, v->end - v->start, host_prot(v),
				   MAP_SHARED | MAP_FIXED, memfile_fd(), v->mf_off);
		else
			r = inject(mm, SYS_mprotect, v->start, v->end - v->start, host_prot(v), 0,
				   0, 0);
		if (r < 0)
			stale = true;
		else
			v->flags &= ~(VMA_HOST_STALE | VMA_HOST_REMAP);
	}
	mm->host_stale = stale;
}

void mm_file_resized(struct mm *mm, struct mobj *mo, uint64_t size, bool via_stopped)
{
	if (mark_past_eof(mm, mo, mo->off + PAGE_UP(size))) {
		mm->host_stale = true;
		if (via_stopped)
			mm_sync_host(mm);
	}
}

/* Copy on write. A piece of private memory shared since a fork is copied, whole, when its
 * address space first writes to it (a write fault, or the Sentry writing on the guest's
 * behalf); if no other piece holds its memory object any more, it only gets write back. The
 * host follows through mm->via, which the callers keep a stopped thread of MM (a piece the
 * host refused stays stale, for mm_sync_host to retry before a thread runs). A piece is never
 * written while shared, so nobody sees a copy being made. */
static int break_cow(struct mm *mm, uintptr_t start, uintptr_t end)
{
	bool changed = false;
	int err = 0;

	/* [start, end) is covered (the callers checked): walk its pieces, which stay put. */
	for (uintptr_t at = start; at < end;) {
		struct vma *v = vma_find(&mm->vmas, at);
		if (!v)
			break;
		at = v->end;
		if (!(v->flags & VMA_COW))
			continue;
		if (v->mobj->refs > 1) {
			size_t len = v->end - v->start;
			struct mobj *copy = mobj_new(len);
			if (!copy) {
				err = -ENOMEM;
				break;
			}
			if (memfile_copy_guarded(copy->off, v->mf_off, len)) {
				mobj_put(copy);
				err = -ENOMEM;
				break;
			}
			mobj_put(v->mobj);
			v->mobj = copy;
			v->mf_off = copy->off;
			v->flags = (v->flags | VMA_HOST_REMAP) & ~VMA_VDSO; /* the process's own */
		}
		v->flags = (v->flags & ~VMA_COW) | VMA_HOST_STALE;
		changed = true;
	}
	if (changed) {
		mm->cow_epoch++;
		mm->host_stale = true;
		mm_sync_host(mm);
	}
	return err;
}

bool mm_write_fault(struct mm *mm, uintptr_t addr, bool *resolved)
{
	struct vma *v = vma_find(&mm->vmas, addr);

	*resolved = false;
	if (!v || !(v->prot & PROT_WRITE) || (v->flags & (VMA_RESERVED | VMA_PAST_EOF)))
		return false;
	if (v->flags & VMA_COW) {
		if (break_cow(mm, v->start, v->end))
			return false;
		*resolved = true;
		return true;
	}
	/* Another thread broke it meanwhile: the write goes through on the retry. */
	return !(v->flags & VMA_HOST_STALE);
}

long mm_map_pages(struct mm *mm, uintptr_t addr, size_t len, int prot, int flags, struct mobj *mo,
		  uint64_t mf_off, const char *name)
{
	if (!len || (addr | len) & (PAGE_SIZE - 1) || !valid_range(mm, addr, len) ||
	    touches_reserved(mm, addr, addr + len) || !vma_range_free(&mm->vmas, addr, addr + len))
		return -EINVAL;
	struct vma v = {
	    .start = addr,
	    .end = addr + len,
	    .prot = prot,
	    .flags = flags,
	    .mobj = mobj_get(mo),
	    .mf_off = mf_off,
	};
	snprintf(v.name, sizeof(v.name), "%s", name);
	int err = install(mm, &v);
	if (err) {
		mobj_put(mo);
		return err;
	}
	return addr;
}

uintptr_t mm_find_free(struct mm *mm, size_t len)
{
	return vma_find_gap(&mm->vmas, len, MMAP_MIN_ADDR, mm->mmap_base);
}

long mm_map_mobj(struct mm *mm, uintptr_t addr, size_t len, int prot, int flags, struct mobj *mo,
		 uint64_t mf_off, off_t file_off, uint64_t ino, uint64_t file_size)
{
	if (len == 0)
		return -EINVAL;
	if (PAGE_UP(len) < len)
		return -ENOMEM;
	len = PAGE_UP(len);
	long at = place(mm, addr, len, flags);
	if (at < 0)
		return at;
	struct vma v = {
	    .start = at,
	    .end = at + len,
	    .prot = prot,
	    .flags = MAP_SHARED | (flags & VMA_NO_WRITE),
	    .mobj = mobj_get(mo),
	    .mf_off = mf_off,
	    .file_off = file_off,
	    .ino = ino,
	};
	int err = install(mm, &v);
	if (err) {
		mobj_put(mo);
		return err;
	}
	/* Whole pages past the end of the file fault with SIGBUS, as on Linux. */
	mm_file_resized(mm, mo, file_size, true);
	return at;
}

long mm_map(struct mm *mm, uintptr_t addr, size_t len, int prot, int flags, struct vfs_file *file,
	    off_t off, size_t file_bytes, const char *name)
{
	int err;

	if (len == 0 || (off & (PAGE_SIZE - 1)))
		return -EINVAL;
	if (PAGE_UP(len) < len)
		return -ENOMEM;
	len = PAGE_UP(len);
	long at = place(mm, addr, len, flags);
	if (at < 0)
		return at;
	addr = at;
	/* A private mapping showing a host file's own pages (to the end of the mapping or of
	 * the file) shares them with the file cache, copy-on-write; anything else gets its own
	 * copy of what the file holds. */
	struct stat st;
	bool have_st = file && file->ops->getattr && file->ops->getattr(file, &st) == 0;
	struct mobj *mo = NULL;
	bool cached = have_st && !(flags & MAP_SHARED) &&
		      (file_bytes >= len || (uint64_t)off + file_bytes >= (uint64_t)st.st_size) &&
		      (mo = filecache_get(file, off, len));
	if (!cached && !(mo = mobj_new(len)))
		return -ENOMEM;
	uint64_t mf = cached ? mo->off + (uint64_t)off : mo->off;
	struct vma v = {
	    .start = addr,
	    .end = addr + len,
	    .prot = prot,
	    .flags = (flags &
		      (MAP_SHARED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN | VMA_NO_WRITE)) |
		     (prot & PROT_WRITE ? VMA_WAS_WRITABLE : 0) | (cached ? VMA_COW : 0),
	    .mobj = mo,
	    .mf_off = mf,
	    .file_off = file ? off : 0,
	};
	if (name)
		snprintf(v.name, sizeof(v.name), "%s", name);
	if (file) {
		if (have_st) {
			v.ino = st.st_ino;
			v.dev = st.st_dev;
		}
		if (file->dentry)
			v.dentry = vfs_dentry_get(file->dentry);
		if (file_bytes > len)
			file_bytes = len;
		if (!cached && (err = fill_from_file(file, mf, off, file_bytes)))
			goto out_free;
	}
	size_t eof = PAGE_UP(file_bytes);
	if (file && (flags & MM_SIGBUS_PAST_EOF) && eof < len) {
		/* Two pieces of one memory object: the file's pages, then the pages past its end,
		 * each holding a reference. */
		struct vma tail = v;
		tail.start = addr + eof;
		tail.mf_off += eof;
		tail.file_off += eof;
		tail.flags |= VMA_PAST_EOF;
		if (eof == 0) {
			if ((err = install(mm, &tail)))
				goto out_free;
			return addr;
		}
		v.end = addr + eof;
		if ((err = install(mm, &v)))
			goto out_free;
		split_ref(&tail);
		if ((err = install(mm, &tail))) {
			drop_piece_ref(&tail, NULL);
			mm_unmap(mm, addr, eof); /* drops the head's references */
			return err;
		}
		return addr;
	}
	/* Text from the file cache (a program's, its libraries') is mapped present: the stub's
	 * first touch of each 64 KiB of it is otherwise a fault (20-30 us on this project's nested
	 * VM, where the hypervisor shadows the page tables), 14 for busybox's `true` (0.5 ms of its
	 * run, against 0.25 ms to map its 1.5 MiB present). Its pages are in the cache already;
	 * larger programs, whose runs touch a smaller share of their text, fault as before. */
	int extra = cached && (prot & PROT_EXEC) && len <= POPULATE_TEXT_MAX ? MAP_POPULATE : 0;
	if ((err = install_flags(mm, &v, extra)))
		goto out_free;
	return addr;
out_free:
	mobj_put(mo);
	if (v.dentry)
		vfs_dentry_put(v.dentry);
	return err;
}

static int unmap_guest(struct mm *mm, uintptr_t addr, size_t len)
{
	int err;

	if (vma_range_free(&mm->vmas, addr, addr + len))
		return 0;
	if ((err = vma_remove(&mm->vmas, addr, addr + len, free_piece, NULL)))
		return err;
	long r = inject(mm, SYS_munmap, addr, len, 0, 0, 0, 0);
	return r < 0 ? r : 0;
}

int mm_unmap(struct mm *mm, uintptr_t addr, size_t len)
{
	int err;

	if ((addr & (PAGE_SIZE - 1)) || len == 0)
		return -EINVAL;
	len = PAGE_UP(len);
	if (addr + len < addr || addr + len > platform_user_top())
		return -EINVAL;
	if (touches_reserved(mm, addr, addr + len)) {
		/* The stub page is nothing of the guest's: as on Linux, unmapping a range with
		 * nothing in it succeeds, and what the guest has around it goes. */
		uintptr_t s = platform_stub_base(), e = s + platform_stub_len();
		if (addr < s && (err = unmap_guest(mm, addr, s - addr)))
			return err;
		return addr + len > e ? unmap_guest(mm, e, addr + len - e) : 0;
	}
	return unmap_guest(mm, addr, len);
}

/* Sets the protection of [ADDR, ADDR+LEN), every page of it mapped. */
static int protect_range(struct mm *mm, uintptr_t addr, size_t len, int prot)
{
	int err;

	if ((err = vma_protect(&mm->vmas, addr, addr + len, prot)))
		return err;
	if ((prot & PROT_WRITE) &&
	    (err = vma_set_flags(&mm->vmas, addr, addr + len, VMA_WAS_WRITABLE, 0)))
		return err;
	/* The host maps what host_prot says: pages past a file's end stay inaccessible and
	 * copy-on-write ones unwritable whatever the guest asks. One call when all agree. */
	bool uniform = true;
	for (uintptr_t at = addr; at < addr + len; at = vma_find(&mm->vmas, at)->end)
		uniform &= host_prot(vma_find(&mm->vmas, at)) == prot;
	if (uniform) {
		long r = inject(mm, SYS_mprotect, addr, len, prot, 0, 0, 0);
		return r < 0 ? r : 0;
	}
	for (uintptr_t at = addr; at < addr + len;) {
		struct vma *v = vma_find(&mm->vmas, at);
		uintptr_t end = v->end < addr + len ? v->end : addr + len;
		long r = inject(mm, SYS_mprotect, at, end - at, host_prot(v), 0, 0, 0);
		if (r < 0)
			return r;
		at = end;
	}
	return 0;
}

int mm_protect(struct mm *mm, uintptr_t addr, size_t len, int prot)
{
	if (addr & (PAGE_SIZE - 1))
		return -EINVAL;
	if (prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC | PROT_GROWSDOWN | PROT_GROWSUP))
		return -EINVAL;
	prot &= PROT_READ | PROT_WRITE | PROT_EXEC;
	if (len == 0)
		return 0;
	len = PAGE_UP(len);
	if (addr + len < addr)
		return -ENOMEM;
	/* As Linux, mapping by mapping from ADDR: those before a hole (the stub page is one: the
	 * guest has nothing there) or before a shared mapping of a file opened read-only that
	 * is asked for write are changed, and the call fails there. */
	uintptr_t at = addr, end = addr + len;
	int err = 0;
	while (at < end) {
		struct vma *v = vma_find(&mm->vmas, at);
		if (!v || (v->flags & VMA_RESERVED)) {
			err = -ENOMEM;
			break;
		}
		/* Nor is the vDSO's clock page made writable or executable (Linux's [vvar] has
		 * neither VM_MAYWRITE nor VM_MAYEXEC). */
		if (((prot & PROT_WRITE) && (v->flags & VMA_NO_WRITE)) ||
		    ((prot & PROT_EXEC) && clock_page(v))) {
			err = -EACCES;
			break;
		}
		at = v->end;
	}
	if (at > end)
		at = end;
	if (at > addr) {
		int e = protect_range(mm, addr, at - addr, prot);
		if (e)
			return e;
	}
	return err;
}

long mm_brk(struct mm *mm, uintptr_t addr)
{
	uintptr_t old_end = PAGE_UP(mm->brk), new_end = PAGE_UP(addr);

	if (addr < mm->brk_start || addr >= mm->mmap_base)
		return mm->brk;
	if (new_end > old_end) {
		if (!vma_range_free(&mm->vmas, old_end, new_end))
			return mm->brk;
		long r = mm_map(mm, old_end, new_end - old_end, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0, 0, "[heap]");
		if (r < 0)
			return mm->brk;
	} else if (new_end < old_end) {
		if (mm_unmap(mm, new_end, old_end - new_end))
			return mm->brk;
	}
	mm->brk = addr;
	return mm->brk;
}

/* Maps the pieces of [old, old+len) at NEW, keeping their memory-file ranges: no copy. */
static int move_pieces(struct mm *mm, uintptr_t old, size_t len, uintptr_t new)
{
	for (uintptr_t at = old; at < old + len;) {
		struct vma v = *vma_find(&mm->vmas, at); /* a copy: install reallocates */
		size_t n = (v.end < old + len ? v.end : old + len) - at;
		v.mf_off += at - v.start;
		v.file_off += at - v.start;
		v.start = new + (at - old);
		v.end = v.start + n;
		split_ref(&v);
		int err = install(mm, &v);
		if (err) {
			drop_piece_ref(&v, NULL);
			return err;
		}
		at += n;
	}
	return 0;
}

long mm_remap(struct mm *mm, uintptr_t old, size_t old_len, size_t new_len, int flags,
	      uintptr_t new_addr)
{
	int err;

	if ((old & (PAGE_SIZE - 1)) || new_len == 0)
		return -EINVAL;
	if (flags & ~(MREMAP_MAYMOVE | MREMAP_FIXED))
		return -EINVAL;
	if ((flags & MREMAP_FIXED) && (!(flags & MREMAP_MAYMOVE) || (new_addr & (PAGE_SIZE - 1))))
		return -EINVAL;
	old_len = PAGE_UP(old_len);
	new_len = PAGE_UP(new_len);
	if (new_len == 0 || old_len == 0)
		return -EINVAL;
	if (old + old_len < old || touches_reserved(mm, old, old + old_len) ||
	    !vma_range_covered(&mm->vmas, old, old + old_len))
		return -EFAULT;
	/* Growth takes the attributes of the last piece. The vDSO's mappings do not grow
	 * (VM_DONTEXPAND in Linux). */
	struct vma last = *vma_find(&mm->vmas, old + old_len - 1);
	if (new_len > old_len && (last.flags & VMA_VDSO))
		return -EFAULT;

	if (flags & MREMAP_FIXED) {
		if (!valid_range(mm, new_addr, new_len))
			return -EINVAL;
		/* Free on Linux, the stub's here: refused as a MAP_FIXED there is (place). */
		if (touches_reserved(mm, new_addr, new_addr + new_len))
			return -ENOMEM;
		if (new_addr < old + old_len && old < new_addr + new_len)
			return -EINVAL;
		if ((err = mm_unmap(mm, new_addr, new_len)))
			return err;
	} else if (new_len <= old_len) {
		if (new_len < old_len && (err = mm_unmap(mm, old + new_len, old_len - new_len)))
			return err;
		return old;
	} else if (valid_range(mm, old, new_len) && !touches_reserved(mm, old, old + new_len) &&
		   vma_range_free(&mm->vmas, old + old_len, old + new_len)) {
		long r = mm_map(mm, old + old_len, new_len - old_len, last.prot,
				last.flags | MAP_FIXED | MAP_ANONYMOUS, NULL, 0, 0, last.name);
		return r < 0 ? r : (long)old;
	} else if (!(flags & MREMAP_MAYMOVE)) {
		return -ENOMEM;
	} else {
		new_addr = vma_find_gap(&mm->vmas, new_len, MMAP_MIN_ADDR, mm->mmap_base);
		if (!new_addr)
			return -ENOMEM;
	}
	/* Move: the kept part of the old memory goes to NEW_ADDR as it is. */
	size_t keep = old_len < new_len ? old_len : new_len;
	if ((err = move_pieces(mm, old, keep, new_addr)))
		return err;
	if (new_len > keep) {
		long r = mm_map(mm, new_addr + keep, new_len - keep, last.prot,
				last.flags | MAP_FIXED | MAP_ANONYMOUS, NULL, 0, 0, last.name);
		if (r < 0)
			return r;
	}
	if (old_len > keep &&
	    (err = vma_remove(&mm->vmas, old + keep, old + old_len, free_piece, NULL)))
		return err;
	if ((err = vma_remove(&mm->vmas, old, old + keep, drop_piece_ref, NULL)))
		return err;
	inject(mm, SYS_munmap, old, old_len, 0, 0, 0, 0);
	return new_addr;
}

/* MADV_POPULATE_READ/WRITE: each page read (or written back with what it holds) through
 * copy_in/copy_out, the Sentry's sanctioned and accounted way into guest memory, in address
 * order, so the pages before a failure are populated as on Linux. A read of a hole allocates it
 * in the memory file (Linux maps the zero page there: resident either way); a write gives a page
 * shared copy-on-write its own copy, as a write fault does. */
static int populate(struct mm *mm, uintptr_t addr, size_t len, bool write)
{
	for (uintptr_t at = addr; at < addr + len;) {
		struct vma *v = vma_find(&mm->vmas, at);
		if (!v || (v->flags & VMA_RESERVED))
			return -ENOMEM;
		if (v->flags & VMA_PAST_EOF)
			return -EFAULT; /* the access would be SIGBUS */
		if (!(v->prot & (PROT_READ | PROT_WRITE)) ||
		    (write && (!(v->prot & PROT_WRITE) || (v->flags & VMA_NO_WRITE))))
			return -EINVAL; /* Linux's answer to a permission problem here */
		uintptr_t end = v->end < addr + len ? v->end : addr + len;
		for (; at < end; at += PAGE_SIZE) {
			char c;
			if (copy_in(mm, &c, at, 1) || (write && copy_out(mm, at, &c, 1)))
				return -ENOMEM;
		}
	}
	return 0;
}

/* What a fork's child gets of [addr, addr+len): nothing (MADV_DONTFORK), zeros
 * (MADV_WIPEONFORK, private anonymous memory only), or a copy (MADV_DOFORK, KEEPONFORK). */
static int fork_advice(struct mm *mm, uintptr_t addr, size_t len, int advice)
{
	if (len == 0)
		return 0;
	if (addr + len < addr || !guest_mapped(mm, addr, addr + len))
		return -ENOMEM;
	if (advice == MADV_WIPEONFORK)
		for (uintptr_t at = addr; at < addr + len;) {
			const struct vma *v = vma_find(&mm->vmas, at);
			if ((v->flags & (MAP_SHARED | VMA_VDSO)) || v->dentry || v->ino)
				return -EINVAL;
			at = v->end;
		}
	int set = advice == MADV_DONTFORK     ? VMA_DONTFORK
		  : advice == MADV_WIPEONFORK ? VMA_WIPEONFORK
					      : 0;
	int clear = advice == MADV_DOFORK	? VMA_DONTFORK
		    : advice == MADV_KEEPONFORK ? VMA_WIPEONFORK
						: 0;
	int err = vma_set_flags(&mm->vmas, addr, addr + len, set, clear);
	if (!err)
		vma_set_touched(&mm->vmas);
	return err;
}

int mm_advise(struct mm *mm, uintptr_t addr, size_t len, int advice)
{
	if (addr & (PAGE_SIZE - 1))
		return -EINVAL;
	len = PAGE_UP(len);
	switch (advice) {
	case MADV_NORMAL:
	case MADV_RANDOM:
	case MADV_SEQUENTIAL:
	case MADV_WILLNEED:
	case MADV_MERGEABLE:
	case MADV_UNMERGEABLE:
	case MADV_HUGEPAGE:
	case MADV_NOHUGEPAGE:
	case MADV_DONTDUMP:
	case MADV_DODUMP:
	case MADV_FREE: /* may keep the contents: keeping them is correct */
		break;
	case MADV_DONTNEED:
		break;
	case MADV_DONTFORK:
	case MADV_DOFORK:
	case MADV_WIPEONFORK:
	case MADV_KEEPONFORK:
		return fork_advice(mm, addr, len, advice);
	case MADV_POPULATE_READ:
	case MADV_POPULATE_WRITE:
		if (addr + len < addr)
			return -EINVAL;
		return populate(mm, addr, len, advice == MADV_POPULATE_WRITE);
	default:
		return -EINVAL;
	}
	if (len == 0)
		return 0;
	if (!guest_mapped(mm, addr, addr + len))
		return -ENOMEM;
	for (uintptr_t at = addr;
	     (advice == MADV_DONTNEED || advice == MADV_FREE) && at < addr + len;
	     at = vma_find(&mm->vmas, at)->end)
		if (clock_page(vma_find(&mm->vmas, at)))
			return -EINVAL;
	if (advice != MADV_DONTNEED)
		return 0;
	for (uintptr_t at = addr; at < addr + len;) {
		struct vma *v = vma_find(&mm->vmas, at);
		uintptr_t end = v->end < addr + len ? v->end : addr + len;
		/* The vDSO's pages read back as they are, as Linux's special mappings fault their
		 * pages in again. */
		if (v->flags & VMA_VDSO) {
			at = end;
			continue;
		}
		int err = break_cow(mm, at, end); /* the zeros are this address space's own */
		if (err)
			return err;
		v = vma_find(&mm->vmas, at);
		/* Private pages read back as zeros (file-backed ones too: their file copy is gone
		 * with them; a later issue re-reads the file). Shared ones keep their data. */
		if (!(v->flags & MAP_SHARED) && !(v->flags & VMA_RESERVED))
			memfile_zero(v->mf_off + (at - v->start), end - at);
		at = end;
	}
	return 0;
}

struct walk_args {
	struct mm *mm;
	uintptr_t addr;
	size_t len;
	void (*fn)(void *p, size_t n, void *ctx);
	void **ctx; /* a cursor FN advances: put back for a second try */
	void *ctx0;
};

static void walk_pieces(void *arg)
{
	struct walk_args *w = arg;

	*w->ctx = w->ctx0;
	for (uintptr_t at = w->addr; at < w->addr + w->len;) {
		struct vma *v = vma_find(&w->mm->vmas, at);
		size_t n = (v->end < w->addr + w->len ? v->end : w->addr + w->len) - at;
		w->fn(memfile_ptr(v->mf_off + (at - v->start)), n, w->ctx);
		at += n;
	}
}

/* Calls FN on each Sentry-side piece of [addr, addr+len) if all of it is accessible. CTX
 * points to a cursor FN advances. Guest memory the bounded memory file has no room for is
 * -ENOMEM (after the OOM killer had its try). */
static int walk(struct mm *mm, uintptr_t addr, size_t len, bool write,
		void (*fn)(void *p, size_t n, void *ctx), void *ctx)
{
	int need = write ? PROT_WRITE : (PROT_READ | PROT_EXEC);

	if (addr + len < addr)
		return -EFAULT;
	/* Check first so a failed copy changes nothing. */
	bool cow = false;
	for (uintptr_t at = addr; at < addr + len;) {
		struct vma *v = vma_find(&mm->vmas, at);
		if (!v || (v->flags & (VMA_RESERVED | VMA_PAST_EOF)) || !(v->prot & need))
			return -EFAULT;
		cow |= (v->flags & VMA_COW) != 0;
		at = v->end;
	}
	if (write && cow && break_cow(mm, addr, addr + len))
		return -EFAULT;
	struct walk_args w = {mm, addr, len, fn, ctx, *(void **)ctx};
	return memfile_guard(walk_pieces, &w);
}

static void copy_from_guest(void *p, size_t n, void *ctx)
{
	char **dst = ctx;

	memcpy(*dst, p, n);
	*dst += n;
}

static void copy_to_guest(void *p, size_t n, void *ctx)
{
	const char **src = ctx;

	memcpy(p, *src, n);
	*src += n;
}

static void write_to_guest(void *p, size_t n, void *ctx)
{
	const char **src = ctx;

	memfile_write_at(p, *src, n);
	*src += n;
}

int copy_in(struct mm *mm, void *dst, uintptr_t src, size_t len)
{
	char *d = dst;

	return walk(mm, src, len, false, copy_from_guest, &d);
}

int copy_out(struct mm *mm, uintptr_t dst, const void *src, size_t len)
{
	const char *s = src;

	return walk(mm, dst, len, true, copy_to_guest, &s);
}

int copy_out_cold(struct mm *mm, uintptr_t dst, const void *src, size_t len)
{
	const char *s = src;

	return walk(mm, dst, len, true, write_to_guest, &s);
}

struct cas {
	uint32_t expected, desired;
	bool done;
};

static void cas_in_guest(void *p, size_t n, void *ctx)
{
	struct cas *c = *(struct cas **)ctx;

	if (n == sizeof(uint32_t))
		c->done = __atomic_compare_exchange_n((uint32_t *)p, &c->expected, c->desired,
						      false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

int mm_cmpxchg_u32(struct mm *mm, uintptr_t addr, uint32_t *expected, uint32_t desired)
{
	struct cas c = {*expected, desired, false};
	void *cursor = &c;

	if (addr & 3)
		return -EFAULT;
	int r = walk(mm, addr, sizeof(uint32_t), true, cas_in_guest, &cursor);
	if (r)
		return r;
	*expected = c.expected;
	return c.done ? 0 : -EAGAIN;
}

struct string_args {
	struct mm *mm;
	char *dst;
	uintptr_t src;
	size_t max;
	long ret;
};

static void string_in(void *arg)
{
	struct string_args *a = arg;
	size_t got = 0;

	while (got < a->max) {
		struct vma *v = vma_find(&a->mm->vmas, a->src + got);
		if (!v || (v->flags & (VMA_RESERVED | VMA_PAST_EOF)) ||
		    !(v->prot & (PROT_READ | PROT_EXEC))) {
			a->ret = -EFAULT;
			return;
		}
		size_t n = v->end - (a->src + got);
		if (n > a->max - got)
			n = a->max - got;
		const char *p = memfile_ptr(v->mf_off + (a->src + got - v->start));
		const char *nul = memchr(p, 0, n);
		if (nul) {
			memcpy(a->dst + got, p, nul - p + 1);
			a->ret = (long)(got + (nul - p));
			return;
		}
		memcpy(a->dst + got, p, n);
		got += n;
	}
	a->ret = -ENAMETOOLONG;
}

long copy_string_in(struct mm *mm, char *dst, uintptr_t src, size_t max)
{
	struct string_args a = {mm, dst, src, max, 0};
	int err = memfile_guard(string_in, &a);

	return err ? err : a.ret;
}

int mm_iovecs(struct mm *mm, uintptr_t addr, size_t len, bool write, struct iovec *iov, int max)
{
	int need = write ? PROT_WRITE : (PROT_READ | PROT_EXEC);
	int n = 0;

	if (addr + len < addr)
		return -EFAULT;
	for (uintptr_t at = addr; at < addr + len && n < max;) {
		struct vma *v = vma_find(&mm->vmas, at);
		if (!v || (v->flags & (VMA_RESERVED | VMA_PAST_EOF)) || !(v->prot & need))
			return n ? n : -EFAULT;
		if (write && (v->flags & VMA_COW)) {
			if (break_cow(mm, v->start, v->end))
				return n ? n : -EFAULT;
			v = vma_find(&mm->vmas, at);
		}
		size_t chunk = (v->end < addr + len ? v->end : addr + len) - at;
		iov[n].iov_base = memfile_ptr(v->mf_off + (at - v->start));
		iov[n].iov_len = chunk;
		n++;
		at += chunk;
	}
	return n;
}

bool mm_past_eof(struct mm *mm, uintptr_t addr)
{
	struct vma *v = vma_find(&mm->vmas, addr);

	return v && (v->flags & VMA_PAST_EOF);
}

bool mm_in_memory_file(struct mm *mm, uintptr_t addr)
{
	struct vma *v = vma_find(&mm->vmas, addr);

	return v && !(v->flags & (VMA_RESERVED | VMA_PAST_EOF));
}

uint64_t mm_resident(struct mm *mm)
{
	uint64_t bytes = 0;

	for (size_t i = 0; mm && i < mm->vmas.n; i++) {
		const struct vma *v = &mm->vmas.v[i];
		if (!(v->flags & VMA_RESERVED))
			bytes += memfile_data_bytes(v->mf_off, v->end - v->start);
	}
	return bytes;
}

/* Residency is what the memory file holds: a page of it that is not a hole has been touched
 * (written, or read through the stub's shared mapping, which allocates it) or filled by the
 * Sentry. A lazy restore loads the range first (memfile_seek), so a page restored from an image
 * counts as the touched page it was. */
size_t mm_mincore(struct mm *mm, uintptr_t start, size_t npages, unsigned char *vec)
{
	uintptr_t end = start + npages * PAGE_SIZE;

	memset(vec, 0, npages);
	for (uintptr_t at = start; at < end;) {
		struct vma *v = vma_find(&mm->vmas, at);
		if (!v || (v->flags & VMA_RESERVED))
			return (at - start) / PAGE_SIZE;
		uintptr_t stop = v->end < end ? v->end : end;
		uint64_t off = v->mf_off + (at - v->start), off_end = off + (stop - at);
		while (!(v->flags & VMA_PAST_EOF) && off < off_end) {
			int64_t data = memfile_seek(off, off_end, true);
			if (data < 0)
				break;
			int64_t hole = memfile_seek(data, off_end, false);
			if (hole < 0)
				hole = off_end;
			uint64_t first = PAGE_DOWN(data), last = PAGE_UP(hole);
			for (uint64_t o = first; o < last && o < off_end; o += PAGE_SIZE)
				vec[(v->start + (o - v->mf_off) - start) / PAGE_SIZE] = 1;
			off = last;
		}
		at = stop;
	}
	return npages;
}

uint64_t mm_virtual(struct mm *mm)
{
	uint64_t bytes = 0;

	for (size_t i = 0; mm && i < mm->vmas.n; i++)
		if (!(mm->vmas.v[i].flags & VMA_RESERVED))
			bytes += mm->vmas.v[i].end - mm->vmas.v[i].start;
	return bytes;
}

void mm_reap(struct mm *mm)
{
	for (size_t i = 0; i < mm->vmas.n; i++) {
		const struct vma *v = &mm->vmas.v[i];
		if (!(v->flags & (MAP_SHARED | VMA_COW | VMA_RESERVED)))
			memfile_zero(v->mf_off, v->end - v->start);
	}
}

int mm_sync(struct mm *mm, uintptr_t addr, size_t len, int flags)
{
	if ((addr & (PAGE_SIZE - 1)) || (flags & ~(MS_ASYNC | MS_INVALIDATE | MS_SYNC)) ||
	    ((flags & MS_ASYNC) && (flags & MS_SYNC)))
		return -EINVAL;
	len = PAGE_UP(len);
	if (addr + len < addr)
		return -ENOMEM;
	/* Shared file pages are the file's own pages in the memory file: nothing to write back.
	 * The range must be mapped, though. */
	return len == 0 || guest_mapped(mm, addr, addr + len) ? 0 : -ENOMEM;
}

/* Checkpoint: the layout and every VMA but the stub page, with their memory objects and file
 * names by reference. Loading makes a new stub process for the address space and maps every
 * VMA into it; its first thread is left in mm->via for a task to take (checkpoint.c).
 *
 * A private file mapping's pages that still hold exactly what the file holds (a program's
 * text and read-only data: most of an idle sandbox's memory) are not saved with the memory
 * file: the VMA records them as runs of clean pages, and the restore reads them from the
 * restored file again. */

/* Reads compared per step: a buffer small enough to stay in the cache, allocated once (a fresh
 * one per mapping cost more in page faults and zeroing than the compare itself). */
#define CLEAN_CHUNK (32 * PAGE_SIZE)

static bool clean_candidate(const struct vma *v)
{
	return v->dentry && !(v->flags & (MAP_SHARED | VMA_PAST_EOF | VMA_RESERVED)) &&
	       v->dentry->inode && S_ISREG(v->dentry->inode->mode);
}

/* A private mapping never writable, of a file that cannot change, still holds what the file
 * holds: no need to read and compare it (most of a program's text). */
static bool clean_for_sure(const struct vma *v)
{
	return !(v->flags & VMA_WAS_WRITABLE) && vfs_dentry_immutable(v->dentry);
}

/* Writes V's runs of clean pages (u64 count, then u64 first page, u64 pages each) and leaves
 * them out of the memory section. */
static int save_clean_runs(struct enc *e, const struct vma *v)
{
	static char *buf;
	uint64_t npages = (v->end - v->start) / PAGE_SIZE, *runs = NULL, nruns = 0, cap = 0;
	bool in_run = false, candidate = clean_candidate(v);

	uint64_t first = 0;

	if (candidate && !buf)
		buf = malloc(CLEAN_CHUNK);
	if (!candidate)
		npages = 0;
	/* All but the last page need no compare when the mapping never changed them; the last
	 * one may have been filled only in part (a segment ending inside it). */
	if (candidate && buf && npages > 1 && clean_for_sure(v)) {
		if (!(runs = malloc(2 * sizeof(*runs))))
			return enc_fail(e, "out of memory");
		runs[0] = 0;
		runs[1] = npages - 1;
		nruns = cap = 1;
		in_run = true;
		first = npages - 1;
	}

	for (uint64_t at = first; buf && at < npages; at += CLEAN_CHUNK / PAGE_SIZE) {
		uint64_t n =
		    npages - at < CLEAN_CHUNK / PAGE_SIZE ? npages - at : CLEAN_CHUNK / PAGE_SIZE;
		ssize_t got =
		    vfs_dentry_pread(v->dentry, buf, n * PAGE_SIZE, v->file_off + at * PAGE_SIZE);
		if (got < 0)
			break;				   /* unreadable: every page is saved */
		memset(buf + got, 0, n * PAGE_SIZE - got); /* past the end of the file: zeros */
		for (uint64_t i = 0; i < n; i++) {
			bool clean = !memcmp(memfile_ptr(v->mf_off + (at + i) * PAGE_SIZE),
					     buf + i * PAGE_SIZE, PAGE_SIZE);
			if (clean && !in_run) {
				if (nruns == cap) {
					cap = cap ? 2 * cap : 16;
					uint64_t *r = realloc(runs, cap * 2 * sizeof(*r));
					if (!r) {
						free(runs);
						return enc_fail(e, "out of memory");
					}
					runs = r;
				}
				runs[2 * nruns] = at + i;
				runs[2 * nruns + 1] = 0;
				nruns++;
			}
			if (clean)
				runs[2 * nruns - 1]++;
			in_run = clean;
		}
	}
	enc_u64(e, nruns);
	for (uint64_t i = 0; i < nruns; i++) {
		enc_u64(e, runs[2 * i]);
		enc_u64(e, runs[2 * i + 1]);
		if (memfile_save_skip(v->mf_off + runs[2 * i] * PAGE_SIZE,
				      runs[2 * i + 1] * PAGE_SIZE)) {
			free(runs);
			return enc_fail(e, "out of memory");
		}
	}
	free(runs);
	return 0;
}

/* Reads V's clean pages back from its file. */
static void load_clean_runs(struct dec *d, const struct vma *v)
{
	uint64_t npages = (v->end - v->start) / PAGE_SIZE, next = 0;
	uint64_t nruns = dec_max(d, npages, "clean page runs");

	if (nruns && !clean_candidate(v))
		dec_fail(d, "clean pages in a mapping that has no file");
	for (uint64_t i = 0; i < nruns && dec_ok(d); i++) {
		uint64_t first = dec_u64(d), n = dec_u64(d);
		if (first < next || first > npages || n == 0 || n > npages - first) {
			dec_fail(d, "bad clean page run");
			return;
		}
		next = first + n;
		uint64_t at = v->mf_off + first * PAGE_SIZE;
		memfile_restore_write(at, n * PAGE_SIZE);
		/* Written by the host kernel where it can: a read into the Sentry's view faults
		 * every page of it in first (175 faults, 3-8 ms of a warm slot restore here). */
		int to = memfile_copy_fd();
		ssize_t got = to >= 0
				  ? vfs_dentry_copy_to_fd(v->dentry, to, (off_t)at, n * PAGE_SIZE,
							  v->file_off + first * PAGE_SIZE)
				  : -ENOTSUP;
		if (got < 0)
			got = vfs_dentry_pread(v->dentry, memfile_ptr(at), n * PAGE_SIZE,
					       v->file_off + first * PAGE_SIZE);
		if (got < 0)
			dec_fail(d, "cannot read the pages of a mapped file again: %s",
				 strerror((int)-got));
	}
}
int mm_save(struct enc *e, const void *obj)
{
	const struct mm *mm = obj;
	uint64_t n = 0;

	enc_u64(e, mm->mmap_base);
	enc_u64(e, mm->stack_top);
	enc_u64(e, mm->brk_start);
	enc_u64(e, mm->brk);
	enc_u64(e, mm->arg_start);
	enc_u64(e, mm->arg_end);
	enc_u64(e, mm->env_start);
	enc_u64(e, mm->env_end);
	for (size_t i = 0; i < mm->vmas.n; i++)
		n += !(mm->vmas.v[i].flags & VMA_RESERVED);
	enc_u64(e, n);
	for (size_t i = 0; i < mm->vmas.n; i++) {
		const struct vma *v = &mm->vmas.v[i];
		if (v->flags & VMA_RESERVED)
			continue;
		/* The vDSO's pages are "the vDSO" at an offset in them, never memory. */
		bool vdso = v->flags & VMA_VDSO;
		enc_u64(e, v->start);
		enc_u64(e, v->end);
		enc_ref(e, CK_MOBJ, vdso ? NULL : v->mobj);
		enc_u32(e, v->prot);
		enc_u32(e, v->flags);
		enc_u64(e, vdso ? vdso_vma_offset(v) : v->mf_off);
		enc_u64(e, v->file_off);
		enc_u64(e, v->ino);
		enc_u64(e, v->dev);
		enc_ref(e, CK_DENTRY, v->dentry);
		enc_raw(e, v->name, sizeof(v->name));
		int err = save_clean_runs(e, v);
		if (err)
			return err;
	}
	/* Trailing fields: images from before have none. */
	if (mm->membarrier || mm->aio) {
		enc_u32(e, mm->membarrier);
		aio_save(e, mm);
	}
	return enc_ok(e) ? 0 : -ENOMEM;
}

/* A VMA saved as "the vDSO" (V's mf_off is its offset in the vDSO's pages): it maps the
 * restoring Sentry's, copy-on-write, the clock page never writable, whatever the image says. */
static int bind_vdso(struct dec *d, struct vma *v)
{
	int err = vdso_vma_bind(v, v->mf_off);

	if (err == -ENOEXEC)
		return dec_fail(d,
				"the image's processes use the vDSO of another minisentry build: "
				"restore it with the minisentry that took it");
	if (err)
		return dec_fail(d, "bad vDSO mapping");
	v->flags = (v->flags & ~MAP_SHARED) | MAP_PRIVATE | VMA_COW;
	if (v->mf_off - v->mobj->off < PAGE_SIZE) {
		v->flags |= VMA_NO_WRITE;
		v->prot &= ~PROT_WRITE;
	}
	return 0;
}

/* A lazily restored address space: its mappings of the memory file go to the loader, which
 * serves their missing pages through UFFD. */
static int watch_lazily(struct mm *mm, int uffd, struct dec *d)
{
	struct memfile_space_range *r = calloc(mm->vmas.n + 1, sizeof(*r));
	size_t n = 0;
	char *err = NULL;

	if (!r) {
		close(uffd);
		return dec_fail(d, "out of memory");
	}
	for (size_t i = 0; i < mm->vmas.n; i++) {
		const struct vma *v = &mm->vmas.v[i];
		if (!sentry_pages(v))
			r[n++] = (struct memfile_space_range){v->start, v->end - v->start,
							      v->mf_off, false};
	}
	int e = memfile_lazy_watch(uffd, r, n, &err);
	free(r);
	if (e)
		dec_fail(d, "%s", err ? err : strerror(-e));
	free(err);
	return e;
}

/* Beyond any guest mapping of the memory file (1 TiB): a golden image's VMA is not mapped past
 * it (the restore checks it against its memory object). */
#define MEMFILE_SPAN (1ULL << 40)

/* A stub made before the restore knew its image (a warm slot's waiting Sentry: sentry/warm.c),
 * with its userfaultfd: the first address space a restore loads takes it (OWNER). It maps
 * the golden image's first address space's mappings of the memory file already, registered
 * and protected for write tracking as a restore's first base would (docs/checkpoint.md,
 * "Warm slots"): a restored mapping equal to one of them is taken as it is. */
struct premap {
	uint64_t start, end, off;
	int prot;
	bool taken, broken; /* taken by a restored VMA; partly mapped over */
};
static struct {
	struct platform_thread *thread;
	int uffd;
	const struct mm *owner;
	bool loading; /* OWNER's mm_load is under way: its VMAs may be taken */
	struct premap *pre;
	size_t npre;
} spare = {NULL, -1, NULL, false, NULL, 0};

/* The memory-file mappings of the golden image's first address space (its mms section's first
 * record: the one a restore loads first), into *OUT. Only plain mappings of the file: not the
 * vDSO's, nothing odd (a forged golden image is refused by the restore itself, later). */
static size_t golden_vmas(struct premap **out)
{
	const void *data;
	size_t len, n = 0;
	struct dec d;

	*out = NULL;
	if (memfile_slot_golden_section("mms", &data, &len))
		return 0;
	dec_init(&d, data, len, NULL);
	dec_u64(&d); /* the record's id */
	uint64_t rlen = dec_u64(&d);
	if (!dec_ok(&d) || rlen > len) {
		dec_free(&d);
		return 0;
	}
	struct dec r = dec_sub(&d, rlen);
	for (int i = 0; i < 8; i++)
		dec_u64(&r); /* the layout */
	uint64_t nv = dec_max(&r, 4096, "VMA count");
	struct premap *v = dec_ok(&r) ? calloc(nv + 1, sizeof(*v)) : NULL;
	/* Where a restored VMA may lie: below the guests' top, not over the stub's own pages. */
	uint64_t top = platform_user_top(), stub_start = platform_stub_base();
	uint64_t stub_end = stub_start + platform_stub_len();
	if (top > (1UL << 47) - PAGE_SIZE)
		top = (1UL << 47) - PAGE_SIZE;
	for (uint64_t i = 0; v && i < nv && dec_ok(&r); i++) {
		struct vma x = {0};
		x.start = dec_u64(&r);
		x.end = dec_u64(&r);
		uint64_t mobj = dec_u64(&r);
		x.prot = (int)dec_u32(&r);
		x.flags = (int)dec_u32(&r);
		x.mf_off = dec_u64(&r);
		for (int k = 0; k < 4; k++)
			dec_u64(&r); /* file_off, ino, dev, dentry */
		char name[VMA_NAME_MAX];
		dec_raw(&r, name, sizeof(name));
		uint64_t nruns = dec_max(&r, 1 << 30, "clean page runs");
		for (uint64_t k = 0; k < 2 * nruns && dec_ok(&r); k++)
			dec_u64(&r);
		if (!dec_ok(&r) || !mobj || (x.flags & (VMA_VDSO | VMA_RESERVED)) ||
		    x.start % PAGE_SIZE || x.end % PAGE_SIZE || x.mf_off % PAGE_SIZE ||
		    x.end <= x.start || x.end > top || x.mf_off >= MEMFILE_SPAN ||
		    x.end - x.start > MEMFILE_SPAN - x.mf_off ||
		    (x.start < stub_end && stub_start < x.end))
			continue;
		/* Never over another (a restore refuses that image anyway). */
		bool over = false;
		for (size_t k = 0; k < n && !over; k++)
			over = v[k].start < x.end && x.start < v[k].end;
		if (!over)
			v[n++] =
			    (struct premap){x.start, x.end, x.mf_off, host_prot(&x), false, false};
	}
	dec_free(&r);
	dec_free(&d);
	*out = v;
	return v ? n : 0;
}

/* Maps the golden image's mappings in the spare stub, and has them watched. */
static void premap_golden(void)
{
	struct premap *v;
	size_t n = golden_vmas(&v), k = 0;

	for (size_t i = 0; i < n; i++) {
		long len = (long)(v[i].end - v[i].start), flags = MAP_SHARED | MAP_FIXED;
		const long a[6] = {(long)v[i].start, len,	    v[i].prot, flags,
				   memfile_fd(),     (long)v[i].off};
		if (platform_inject(spare.thread, SYS_mmap, a) == (long)v[i].start)
			v[k++] = v[i];
	}
	spare.pre = v;
	spare.npre = k;
	struct memfile_space_range *r = calloc(k + 1, sizeof(*r));
	if (!r)
		return;
	for (size_t i = 0; i < k; i++)
		r[i] = (struct memfile_space_range){v[i].start, v[i].end - v[i].start, v[i].off,
						    false};
	/* Not watched (no tracking here, or it failed): the restore watches them as any. */
	memfile_track_prepare_space(spare.uffd, spare.thread->host_pid, r, k);
	free(r);
}

int mm_prepare_spare_stub(void)
{
	if (spare.thread)
		return 0;
	int e = platform_stub_new_uffd(&spare.thread, &spare.uffd);
	if (!e && !getenv("MINISENTRY_NO_PREMAP"))
		premap_golden();
	return e;
}

/* V as the spare stub maps it already: taken. Otherwise what V will be mapped over is no
 * longer whole. */
static bool premap_take(const struct mm *mm, const struct vma *v)
{
	if (mm != spare.owner || !spare.loading)
		return false;
	for (size_t i = 0; i < spare.npre; i++) {
		struct premap *p = &spare.pre[i];
		if (p->start == v->start && p->end == v->end && p->off == v->mf_off &&
		    p->prot == host_prot(v) && !p->taken && !p->broken && !sentry_pages(v))
			return p->taken = true;
	}
	for (size_t i = 0; i < spare.npre; i++)
		if (spare.pre[i].start < v->end && v->start < spare.pre[i].end)
			spare.pre[i].broken = true;
	return false;
}

/* The golden mappings no restored VMA took: unmapped where no VMA is (the guest must find
 * nothing there). */
static void premap_drop_rest(struct mm *mm)
{
	for (size_t i = 0; i < spare.npre; i++) {
		const struct premap *p = &spare.pre[i];
		uint64_t at = p->start;
		if (p->taken)
			continue;
		while (at < p->end) {
			const struct vma *v = vma_find(&mm->vmas, at);
			if (v) {
				at = v->end;
				continue;
			}
			uint64_t end = p->end;
			for (size_t k = 0; k < mm->vmas.n; k++)
				if (mm->vmas.v[k].start > at && mm->vmas.v[k].start < end)
					end = mm->vmas.v[k].start;
			inject(mm, SYS_munmap, at, end - at, 0, 0, 0, 0);
			at = end;
		}
	}
}

/* MM's first base is set: the golden mappings' part is over. */
static void premap_done(const struct mm *mm)
{
	if (mm != spare.owner)
		return;
	free(spare.pre);
	spare.pre = NULL;
	spare.npre = 0;
	spare.owner = NULL;
}

/* Whether [START, START+LEN) at OFF of MM is a golden mapping taken as it is. */
static bool premap_taken(const struct mm *mm, uint64_t start, uint64_t len, uint64_t off)
{
	for (size_t i = 0; mm == spare.owner && i < spare.npre; i++)
		if (spare.pre[i].taken && spare.pre[i].start == start &&
		    spare.pre[i].end - start == len && spare.pre[i].off == off)
			return true;
	return false;
}

void *mm_load(struct dec *d)
{
	struct platform_thread *thread;
	struct mm *mm;
	bool lazy = memfile_lazy_active();
	int err, uffd = -1;

	/* A userfaultfd made by the new stub itself: for the lazy loader, or for tracking writes
	 * from the restore on (mm_track), which then needs no injection to make one. */
	bool premapped = false;
	if (spare.thread && !lazy) {
		thread = spare.thread;
		uffd = spare.uffd;
		spare.thread = NULL;
		spare.uffd = -1;
		premapped = spare.npre > 0;
		err = 0;
	} else {
		err = platform_stub_new_uffd(&thread, &uffd);
	}
	if (err && !lazy)
		err = platform_stub_new(&thread); /* no userfaultfd here: no tracking either */
	if (err) {
		if (lazy)
			dec_fail(d, "restore --lazy: cannot watch a new stub process: %s",
				 strerror(-err));
		dec_fail(d, "cannot start a stub process: %s", strerror(-err));
		return NULL;
	}
	memfile_mark("mm-stub");
	if (!(mm = mm_new(thread))) {
		platform_thread_release(thread);
		if (uffd >= 0)
			close(uffd);
		dec_fail(d, "out of memory");
		return NULL;
	}
	if (premapped) {
		spare.owner = mm;
		spare.loading = true;
	}
	loading_lazily = lazy;
	mm->mmap_base = dec_u64(d);
	mm->stack_top = dec_u64(d);
	mm->brk_start = dec_u64(d);
	mm->brk = dec_u64(d);
	mm->arg_start = dec_u64(d);
	mm->arg_end = dec_u64(d);
	mm->env_start = dec_u64(d);
	mm->env_end = dec_u64(d);
	if (dec_ok(d) && (mm->stack_top > mm->task_size || mm->mmap_base > mm->stack_top ||
			  mm->brk_start > mm->brk || mm->brk > mm->task_size))
		dec_fail(d, "bad address-space layout");
	uint64_t n = dec_max(d, 1 << 20, "VMA count");
	for (uint64_t i = 0; i < n && dec_ok(d); i++) {
		struct vma v = {0};
		v.start = dec_u64(d);
		v.end = dec_u64(d);
		v.mobj = dec_ref(d, CK_MOBJ);
		v.prot = (int)dec_u32(d);
		v.flags = (int)dec_u32(d);
		v.mf_off = dec_u64(d);
		v.file_off = dec_u64(d);
		v.ino = dec_u64(d);
		v.dev = dec_u64(d);
		v.dentry = dec_ref(d, CK_DENTRY);
		dec_raw(d, v.name, sizeof(v.name));
		v.name[VMA_NAME_MAX - 1] = 0;
		v.flags &= ~(VMA_HOST_STALE | VMA_HOST_REMAP); /* mapped afresh below */
		if (!dec_ok(d))
			break;
		if (v.start % PAGE_SIZE || v.end % PAGE_SIZE || v.end <= v.start ||
		    v.end > mm->task_size || (v.flags & VMA_RESERVED) ||
		    !vma_range_free(&mm->vmas, v.start, v.end)) {
			dec_fail(d, "bad VMA");
			break;
		}
		if ((v.flags & VMA_VDSO) && !v.mobj && !v.dentry) {
			if (bind_vdso(d, &v))
				break;
		} else if (!v.mobj || (v.flags & VMA_VDSO) || v.mf_off < v.mobj->off ||
			   v.mf_off - v.mobj->off > v.mobj->len ||
			   v.end - v.start > v.mobj->len - (v.mf_off - v.mobj->off)) {
			dec_fail(d, "bad VMA");
			break;
		}
		mobj_get(v.mobj);
		if (v.dentry)
			vfs_dentry_get(v.dentry);
		if ((err = install(mm, &v))) {
			mobj_put(v.mobj);
			if (v.dentry)
				vfs_dentry_put(v.dentry);
			dec_fail(d, "cannot map a VMA: %s", strerror(-err));
			break;
		}
		load_clean_runs(d, &v);
	}
	if (dec_ok(d) && !dec_at_end(d)) {
		mm->membarrier = dec_u32(d);
		if (mm->membarrier & ~MEMBARRIER_REGISTRATIONS)
			dec_fail(d, "bad membarrier registrations");
		if (dec_ok(d) && !dec_at_end(d))
			aio_load(d, mm);
	}
	if (premapped && dec_ok(d))
		premap_drop_rest(mm);
	spare.loading = false;
	memfile_mark("mm-vmas");
	loading_lazily = false;
	if (lazy && dec_ok(d)) {
		watch_lazily(mm, uffd, d); /* takes it, whatever happens */
		uffd = -1;
	} else if (dec_ok(d)) {
		mm->uffd = uffd;
		mm->untouched = true;
		uffd = -1;
	}
	if (uffd >= 0)
		close(uffd);
	if (!dec_ok(d)) {
		mm_put(mm);
		platform_thread_release(thread);
		return NULL;
	}
	return mm;
}

void mm_drop(void *obj)
{
	struct mm *mm = obj;

	/* No task took the stub's first thread (an image with an address space no task uses, or
	 * a restore that failed before its tasks): it goes with the mm, or the stub would be left
	 * running, and its memory with it. */
	if (mm->refs == 1 && mm->via) {
		platform_thread_release(mm->via);
		mm->via = NULL;
	}
	mm_put(mm);
}
