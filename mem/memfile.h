/* The memory file: one memfd holding all guest memory (anonymous memory, brk, stacks, private
 * copies of file pages). Stubs map ranges of it at guest addresses; the Sentry maps all of it,
 * so guest memory is read and written with memcpy. Unwritten ranges are holes and cost nothing. */
#ifndef MEM_MEMFILE_H
#define MEM_MEMFILE_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

int memfile_init(void);
/* The same, bounded: the file lives on a tmpfs of LIMIT bytes of its own (a detached mount,
 * reachable only through the file), so that guest memory past LIMIT is refused by the host
 * kernel itself: a guest touching a new page then gets SIGBUS, and the Sentry's own accesses
 * through memfile_guard fail. Needs CAP_SYS_ADMIN over the Sentry's mount namespace (its
 * own, once confined); -EPERM otherwise. */
int memfile_init_bounded(uint64_t limit);
/* The bound (0: none) and the bytes of guest memory in use now (pages the file holds). */
uint64_t memfile_limit(void);
uint64_t memfile_used(void);
int memfile_fd(void);

/* The accounting point for the Sentry's own accesses to guest memory. Runs FN(ARG), which
 * reads or writes through memfile_ptr and holds nothing that a jump out of it would leak; if
 * the memory file is full and FN touched a page it has no room for, FN is abandoned, the
 * hook given to memfile_set_full_hook runs (the OOM killer: true when it freed something)
 * and FN runs once more from the start. 0, or -ENOMEM when there is still no room. */
int memfile_guard(void (*fn)(void *arg), void *arg);
void memfile_set_full_hook(bool (*hook)(void));
/* The safety net for accesses no guard covers: a page they touched that the bounded file had
 * no room for was given to the Sentry alone; this writes such pages into the file (after the
 * hook, if needed) and maps the file back. To be called before a guest runs again; cheap when
 * there is nothing to do. -ENOMEM if a page could not be kept. */
int memfile_settle(void);
/* The Sentry's view of byte OFF of the file. */
void *memfile_ptr(uint64_t off);
/* Allocates LEN bytes (a page multiple) of zeroed file; returns the offset, or -ENOMEM. */
int64_t memfile_alloc(uint64_t len);
/* Returns a range to the allocator and punches it out, so it reads as zeros and frees memory. */
void memfile_free(uint64_t off, uint64_t len);
/* Zeroes a range in place (madvise(DONTNEED) of private memory). */
void memfile_zero(uint64_t off, uint64_t len);
/* Copies LEN bytes from SRC to DST within the file, skipping holes (SEEK_DATA/SEEK_HOLE), so
 * a copy costs only the pages that hold data. */
void memfile_copy(uint64_t dst, uint64_t src, uint64_t len);
/* memfile_copy under memfile_guard: 0 or -ENOMEM. */
int memfile_copy_guarded(uint64_t dst, uint64_t src, uint64_t len);

/* Bytes of [OFF, OFF+LEN) that hold data (are not holes): resident memory. */
uint64_t memfile_data_bytes(uint64_t off, uint64_t len);

/* The next data (DATA) or hole at or after OFF, before END: its offset, END for a hole that
 * reaches it, or -ENXIO for no data. */
int64_t memfile_seek(uint64_t off, uint64_t end, bool data);

/* A memory object: one allocated range of the memory file, shared by every VMA piece that
 * maps part of it (pieces of one mapping after splits; every mm sharing a MAP_SHARED mapping
 * after fork). The range returns to the allocator when the last reference goes. */
struct mobj {
	uint64_t off, len;
	int refs;
};

struct mobj *mobj_new(uint64_t len);
struct mobj *mobj_get(struct mobj *m);
void mobj_put(struct mobj *m);

/* Checkpoint (state/codec.h): the allocator and every non-zero page of the file (*PAGES gets
 * how many). memfile_load fills a freshly initialised file with them, at the same offsets, so
 * every saved offset (VMAs, memory objects) stays valid. */
struct enc;
struct dec;
int memfile_save(struct enc *e, uint64_t *pages);
/* Leaves [OFF, OFF+LEN) out of the next memfile_save: its owner restores those pages itself
 * (private file pages identical to their file). memfile_save forgets the ranges; a save that
 * fails before it calls memfile_save_skip_clear. */
int memfile_save_skip(uint64_t off, uint64_t len);
void memfile_save_skip_clear(void);
int memfile_load(struct dec *d);
/* CK_MOBJ: a memory object's range; its references are retaken by what loads after it. */
int mobj_save(struct enc *e, const void *obj);
void *mobj_load(struct dec *d);
void mobj_drop(void *obj);

#endif
