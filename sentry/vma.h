/* The VMA set of an address space: sorted, non-overlapping ranges with their protection and
 * their backing in the memory file. Pure bookkeeping, no host calls, so it is unit-tested on
 * its own; mm.c pairs each change with the matching injected host call. */
#ifndef SENTRY_VMA_H
#define SENTRY_VMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VMA_NAME_MAX 24

/* flags beyond mmap(2)'s MAP_SHARED/MAP_PRIVATE/MAP_ANONYMOUS */
#define VMA_RESERVED 0x1000000	    /* the stub page: never given to the guest */
#define VMA_PAST_EOF 0x2000000	    /* file pages past EOF: host PROT_NONE, access is SIGBUS */
#define VMA_NO_WRITE 0x4000000	    /* a shared mapping of a file not open for writing */
#define VMA_HOST_STALE 0x8000000    /* the host's protection is not yet what the flags say */
#define VMA_WAS_WRITABLE 0x10000000 /* was ever mapped or protected writable */
/* Private memory whose memory object other pieces (another address space's, after fork) may
 * map too: the host maps it without write, and the first write copies it (mm.c, "Copy on
 * write"). */
#define VMA_COW 0x20000000
#define VMA_HOST_REMAP 0x40000000 /* with VMA_HOST_STALE: the host maps another range now */
/* Maps the vDSO's pages (sentry/vdso.c), [vvar] or [vdso], always copy-on-write; cleared when
 * a write gives the process its own copy. A checkpoint saves such a VMA as "the vDSO". */
#define VMA_VDSO 0x400000
/* MADV_DONTFORK: a fork's child does not get the range; MADV_WIPEONFORK: it gets zeros there
 * (private anonymous memory only). */
#define VMA_DONTFORK 0x800000
#define VMA_WIPEONFORK 0x200000

struct mobj;
struct vfs_dentry;

struct vma {
	uintptr_t start, end; /* page-aligned, [start, end) */
	struct mobj *mobj;    /* the memory object backing it (one reference per piece) */
	int prot;
	int flags;
	uint64_t mf_off;	   /* memory-file offset backing START */
	uint64_t file_off;	   /* for file mappings: file offset of START (shown in maps) */
	uint64_t ino;		   /* for file mappings: the inode number, else 0 */
	uint64_t dev;		   /* and its st_dev */
	struct vfs_dentry *dentry; /* and its name (one reference per piece), for maps */
	char name[VMA_NAME_MAX];   /* "[stack]", "[heap]", or empty */
};

struct vma_set {
	struct vma *v;
	size_t n, cap;
	/* Changes with every edit of the set through these functions (and vma_set_touched),
	 * to a value no other set ever had: what procfs's cached figures are keyed on. 0 for a
	 * set never edited. */
	uint64_t gen;
	/* Called on the upper piece whenever a VMA is split in two, so that a piece can take its
	 * own reference on what backs it. */
	void (*on_split)(struct vma *piece);
};

void vma_set_destroy(struct vma_set *s);
/* Code that edits VMAs in place (their range, protection, flags, name or backing) calls this
 * after. */
void vma_set_touched(struct vma_set *s);
/* The VMA containing ADDR, or NULL. */
struct vma *vma_find(struct vma_set *s, uintptr_t addr);
/* True if no VMA intersects [start, end). */
bool vma_range_free(const struct vma_set *s, uintptr_t start, uintptr_t end);
/* True if VMAs cover [start, end) without holes. */
bool vma_range_covered(const struct vma_set *s, uintptr_t start, uintptr_t end);
/* Room for N VMAs in all, allocated now and no more (a fork's copy of a set of N): growth by
 * doubling would hold up to twice what is used. 0 or -ENOMEM. */
int vma_set_reserve(struct vma_set *s, size_t n);
/* Inserts V, which must not overlap any VMA. Returns 0 or -ENOMEM. */
int vma_insert(struct vma_set *s, const struct vma *v);
/* Removes [start, end), splitting VMAs at the edges; calls FN for each removed piece. */
int vma_remove(struct vma_set *s, uintptr_t start, uintptr_t end,
	       void (*fn)(const struct vma *piece, void *ctx), void *ctx);
/* Sets PROT on [start, end) (which must be covered), splitting at the edges. */
int vma_protect(struct vma_set *s, uintptr_t start, uintptr_t end, int prot);
/* Sets SET and clears CLEAR in the flags of [start, end) (which must be covered), splitting
 * at the edges. */
int vma_set_flags(struct vma_set *s, uintptr_t start, uintptr_t end, int set, int clear);
/* Highest LEN-byte gap that ends at or below TOP and starts at or above BOTTOM; 0 if none. */
uintptr_t vma_find_gap(const struct vma_set *s, size_t len, uintptr_t bottom, uintptr_t top);

#endif
