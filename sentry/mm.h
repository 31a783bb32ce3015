/* mm — a guest address space: its VMA set, brk and layout, and the stub process that mirrors
 * it on the host. Every change to the set is paired with an injected host call through a
 * stopped thread of the address space (mm->via), and all guest memory access goes through
 * copy_in/copy_out, which check the VMAs and return -EFAULT. */
#ifndef SENTRY_MM_H
#define SENTRY_MM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "mem/memfile.h"
#include "sentry/vma.h"

struct platform_thread;
struct vfs_file;
struct mobj;

#undef PAGE_SIZE
#define PAGE_SIZE 4096UL
#define PAGE_DOWN(x) ((uintptr_t)(x) & ~(PAGE_SIZE - 1))
#define PAGE_UP(x) (((uintptr_t)(x) + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1))

struct mm {
	int refs;
	struct vma_set vmas;
	struct platform_thread *via; /* a stopped thread of this mm, for injections */
	uintptr_t task_size;	     /* the end of guest addresses */
	uintptr_t mmap_base;	     /* top-down allocations start below this */
	uintptr_t stack_top;	     /* at most task_size; lower by a random shift (exec.c) */
	uintptr_t brk_start, brk;
	uintptr_t arg_start, arg_end, env_start, env_end; /* for /proc/PID/cmdline, environ */
	bool host_stale;    /* some VMA has VMA_HOST_STALE: mm_sync_host before running */
	uint64_t cow_epoch; /* counts the changes of copy-on-write sharing (fork, break_cow) */
	unsigned int visit; /* for walks over every mm (kernel.c) */
	/* Write tracking (mem/pagediff.c): watched since a base, and the ranges mapped since,
	 * which the next base must protect. */
	bool tracked;
	bool collected;		 /* its writes were read before its stub went (mm_collect_writes) */
	int uffd;		 /* the userfaultfd a restored stub made, until mm_track takes it */
	bool untouched;		 /* restored, and its stub has run nothing yet: it maps no page */
	unsigned int membarrier; /* the MEMBARRIER_CMD_REGISTER_* done (sentry/membarrier.c) */
	struct aio_ctx *aio;	 /* its io_setup contexts (sentry/aio.c) */
	struct memfile_space_range *fresh;
	size_t nfresh, capfresh;
};

/* Writes to MM's memory from now on are tracked (checkpoint --parent), through STOPPED, one of
 * its stopped threads. */
int mm_track(struct mm *mm, struct platform_thread *stopped);

/* MM's stub is about to die with no thread of it running: what it wrote is read now, while its
 * page tables exist (a stub killed first takes its written bits with it, and then all of its
 * memory must count as changed). MM is watched no more; its frees count as no change. */
void mm_collect_writes(struct mm *mm);

/* A new address space mirrored by the stub that THREAD belongs to. */
struct mm *mm_new(struct platform_thread *thread);
/* Lays out a fresh MM for exec, before anything is mapped: the stack's top STACK_RND bytes
 * below the end of guest addresses, room for a stack of SIZE bytes, and mmap's top-down area
 * below it, a gap, the largest stack shift STACK_RND_MAX (so that no draw makes the two meet)
 * and MMAP_RND more. Zero shifts give the layout without randomisation. */
void mm_set_layout(struct mm *mm, size_t size, uint64_t stack_rnd, uint64_t stack_rnd_max,
		   uint64_t mmap_rnd);
/* Another reference on MM (CLONE_VM); mm_put drops one, the last frees MM. */
struct mm *mm_get(struct mm *mm);
void mm_put(struct mm *mm);
/* A copy of PARENT for fork: private memory shared copy-on-write, MAP_SHARED memory shared,
 * mirrored by the new stub THREAD belongs to. PARENT->via must be a stopped thread. */
struct mm *mm_fork(struct mm *parent, struct platform_thread *thread);

/* mmap(2): returns the address or a negative errno. For a file mapping, FILE_BYTES bytes of
 * FILE from OFF are copied in (private mappings) and the rest of the range is zero; with
 * MM_SIGBUS_PAST_EOF in FLAGS, whole pages past FILE_BYTES fault with SIGBUS instead, as a
 * mapping past the end of a file does. */
#define MM_SIGBUS_PAST_EOF 0x20000000
long mm_map(struct mm *mm, uintptr_t addr, size_t len, int prot, int flags, struct vfs_file *file,
	    off_t off, size_t file_bytes, const char *name);
/* A MAP_SHARED mapping of memory object MO from memory-file offset MF_OFF (a file's pages in
 * the memory file: tmpfs and the overlay's upper layer); takes its own reference on MO. */
long mm_map_mobj(struct mm *mm, uintptr_t addr, size_t len, int prot, int flags, struct mobj *mo,
		 uint64_t mf_off, off_t file_off, uint64_t ino, uint64_t file_size);
/* Maps LEN bytes of memory object MO from memory-file offset MF_OFF at ADDR, which must be
 * free, with PROT and FLAGS (MAP_PRIVATE or MAP_SHARED and VMA_* flags, kept as they are) and
 * NAME: pages the Sentry provides (the vDSO's). Takes its own reference on MO. */
long mm_map_pages(struct mm *mm, uintptr_t addr, size_t len, int prot, int flags, struct mobj *mo,
		  uint64_t mf_off, const char *name);
/* The highest LEN free bytes of MM's mmap area, where a mapping without a hint goes; 0 if
 * none. */
uintptr_t mm_find_free(struct mm *mm, size_t len);
/* The file whose pages MO holds is now SIZE bytes: MM's shared mappings of it fault with SIGBUS
 * past its last page and stop doing so below it. The host follows at once when VIA_STOPPED
 * (mm->via is a stopped thread), else at mm_sync_host, before a thread of MM runs again. */
void mm_file_resized(struct mm *mm, struct mobj *mo, uint64_t size, bool via_stopped);
void mm_sync_host(struct mm *mm);
int mm_unmap(struct mm *mm, uintptr_t addr, size_t len);
int mm_protect(struct mm *mm, uintptr_t addr, size_t len, int prot);
long mm_brk(struct mm *mm, uintptr_t addr);
long mm_remap(struct mm *mm, uintptr_t old, size_t old_len, size_t new_len, int flags,
	      uintptr_t new_addr);
int mm_advise(struct mm *mm, uintptr_t addr, size_t len, int advice);
/* msync(2): argument checks; the pages need no writing back. */
int mm_sync(struct mm *mm, uintptr_t addr, size_t len, int flags);
/* A guest write to ADDR faulted (SEGV_ACCERR) through a stopped thread now in mm->via: true
 * if the write may go on when the thread resumes — the memory was shared copy-on-write and is
 * now this address space's own (*RESOLVED), or another thread made it so already; false if
 * the fault is the guest's (the address is not writable for it). */
bool mm_write_fault(struct mm *mm, uintptr_t addr, bool *resolved);
/* True if ADDR lies in a file mapping past the end of its file (a fault there is SIGBUS). */
bool mm_past_eof(struct mm *mm, uintptr_t addr);
/* ADDR is in a mapping of the memory file (anything but the stub and pages past a file's end). */
bool mm_in_memory_file(struct mm *mm, uintptr_t addr);
/* Bytes of MM's mappings that hold data (resident), and mapped at all. */
uint64_t mm_resident(struct mm *mm);
uint64_t mm_virtual(struct mm *mm);
/* mincore(2) for NPAGES pages from START (page-aligned): VEC[i] is 1 where the memory file
 * holds the page's data. Stops at the first page no guest mapping covers: returns the number
 * of pages filled. */
size_t mm_mincore(struct mm *mm, uintptr_t start, size_t npages, unsigned char *vec);
/* The OOM reaper: punches out MM's private memory (not shared, not shared copy-on-write),
 * which only a dying process may lose. */
void mm_reap(struct mm *mm);

int copy_in(struct mm *mm, void *dst, uintptr_t src, size_t len);
int copy_out(struct mm *mm, uintptr_t dst, const void *src, size_t len);
/* copy_out of a few bytes the Sentry will not touch again soon (a new child's tid), written
 * through the memory file: through the Sentry's view, each fork would leave a page of the
 * child's mapped in the Sentry, with a page-table page of its own (docs/platform.md, "What a
 * process costs the Sentry"). A syscall more than copy_out. */
int copy_out_cold(struct mm *mm, uintptr_t dst, const void *src, size_t len);
/* Copies a NUL-terminated string of at most MAX bytes (with the NUL); returns its length,
 * -EFAULT, or -ENAMETOOLONG. */
long copy_string_in(struct mm *mm, char *dst, uintptr_t src, size_t max);
/* Compares the 32-bit word at ADDR (4-aligned) with *EXPECTED and, if equal, replaces it with
 * DESIRED, atomically with respect to guest threads running on other CPUs. Returns 0, -EAGAIN
 * with the word's value in *EXPECTED when it differed, or -EFAULT. */
int mm_cmpxchg_u32(struct mm *mm, uintptr_t addr, uint32_t *expected, uint32_t desired);
/* Translates [addr, addr+len) into Sentry iovecs into the memory file; checks protections
 * for reading (WRITE false) or writing. Returns the number of iovecs or -EFAULT. A range
 * longer than MAX iovecs is cut short (the caller moves what it got). */
int mm_iovecs(struct mm *mm, uintptr_t addr, size_t len, bool write, struct iovec *iov, int max);

/* Checkpoint (CK_MM, state/codec.h). mm_load starts a new stub process for the address space
 * and leaves its one thread, stopped, in mm->via for the first task of the mm to take. */
struct enc;
struct dec;
int mm_save(struct enc *e, const void *mm);
void *mm_load(struct dec *d);
/* Makes the stub (and its userfaultfd) the next mm_load takes, ahead of time: 0 or -errno. */
int mm_prepare_spare_stub(void);
void mm_drop(void *mm);

#endif
