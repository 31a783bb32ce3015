/* The memory file: one memfd holding all guest memory (anonymous memory, brk, stacks, private
 * copies of file pages). Stubs map ranges of it at guest addresses; the Sentry maps all of it,
 * so guest memory is read and written with memcpy. Unwritten ranges are holes and cost nothing. */
#ifndef MEM_MEMFILE_H
#define MEM_MEMFILE_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

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
/* The bound may change while the sandbox runs (the OCI runtime's `update`): this is the bounded
 * tmpfs's reconfiguration context (an fspick descriptor), or -1 when the file is not bounded
 * by a tmpfs of its own. Setting its "size" takes CAP_SYS_ADMIN over the user namespace the
 * tmpfs was made in, which a confined Sentry no longer has: the descriptor is handed to a
 * client that has it (the sandbox's owner). One failed reconfiguration spends it (the kernel
 * will not reuse a failed context), so only a size the file can take should be asked for. */
int memfile_reconf_fd(void);
/* Reads the bound back from the file's filesystem after a change: the new bound (or the old
 * one if it cannot be read). */
uint64_t memfile_limit_reread(void);
int memfile_fd(void);
/* The memory file again, with a file position of its own, for copies that write at the
 * position (sendfile): memfile_fd's is moved by SEEK_DATA/SEEK_HOLE. Or -errno. */
int memfile_copy_fd(void);

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
/* Writes LEN bytes at P, a place in the Sentry's view (memfile_ptr), through the file instead,
 * so that the page does not enter the view's page tables. Falls back to the view when the
 * file refuses (a bounded file's ENOSPC then faults as a write through the view would). */
void memfile_write_at(void *p, const void *src, size_t len);
/* The pages at the top of the file that the Sentry keeps for itself (the guests' vDSO,
 * sentry/vdso.c): no allocation reaches them, no image holds them and no write to them is
 * tracked; they are at the same offset in every Sentry, restored ones too. */
void memfile_reserved(uint64_t *off, uint64_t *len);
bool memfile_is_reserved(uint64_t off);
/* Allocates LEN bytes (a page multiple) of zeroed file; returns the offset, or -ENOMEM. */
int64_t memfile_alloc(uint64_t len);
/* Returns a range to the allocator and punches it out, so it reads as zeros and frees memory. */
void memfile_free(uint64_t off, uint64_t len);
/* The frees that follow (until called with false) are of an address space whose writes were
 * collected by write tracking: in a slot, they do not count as changes. */
void memfile_free_harvested(bool on);
/* Zeroes a range in place (madvise(DONTNEED) of private memory). */
void memfile_zero(uint64_t off, uint64_t len);
/* Copies LEN bytes from SRC to DST within the file, skipping holes (SEEK_DATA/SEEK_HOLE), so
 * a copy costs only the pages that hold data; DST is written through the file, not mapped in
 * the Sentry. 0, or a negative errno (-ENOSPC: a bounded file is full). */
int memfile_copy(uint64_t dst, uint64_t src, uint64_t len);
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

/* Checkpoint (docs/image-format.md, "memory"): the allocator and every non-zero page of the
 * file. The pages go into data files of the image, in chunks compressed or stored raw,
 * written by worker threads straight from the Sentry's view of the file; the section holds
 * their index. memfile_load fills a freshly initialised file with them, at the same offsets,
 * so every saved offset (VMAs, memory objects) stays valid. */
struct enc;
struct dec;
struct image;
struct image_out;

struct memfile_parent;

struct memfile_save_opts {
	struct image_out *out;	       /* the image being written, for its data files */
	struct memfile_parent *parent; /* checkpoint --parent: refer to its unchanged pages */
	uint32_t codec;		       /* IMAGE_CODEC_* */
	bool no_inline;	 /* data files however few the pages (tests of lazy restores) */
	bool all_inline; /* every page inside the section however many (a signed image) */
	/* checkpoint --base: PARENT is a base to refer to whether or not writes were tracked
	 * since it (where not, its pages are compared); the image is named by its content. */
	bool base;
	/* checkpoint --golden: the mappable form (every page raw in pages.0 at its own memory
	 * offset, holes for the rest), named by its content. */
	bool golden;
};

struct memfile_save_stats {
	uint64_t pages;	     /* pages saved */
	uint64_t ref_pages;  /* of which in the parent's images (not in this one's files) */
	uint64_t file_bytes; /* bytes of the data files */
};

/* On failure *ERR (malloc'd) says why in one line, or is NULL if E's error does. */
int memfile_save(struct enc *e, const struct memfile_save_opts *o, struct memfile_save_stats *st,
		 char **err);
/* checkpoint --parent PATH: the parent's memory index, checked (a version 2 image whose data
 * files are all there). Its pages can only be referred to when write tracking knows every
 * change since it (memfile_parent_usable). With BASE (checkpoint --base) it must refer to no
 * other image. DIRFD (taken over) is the image's directory, or -1 to open PATH. On failure
 * *ERR says why in one line. */
int memfile_parent_open(const char *path, int dirfd, bool base, struct memfile_parent **out,
			char **err);
bool memfile_parent_usable(const struct memfile_parent *p);
void memfile_parent_close(struct memfile_parent *p);
/* Leaves [OFF, OFF+LEN) out of the next memfile_save: its owner restores those pages itself
 * (private file pages identical to their file). memfile_save forgets the ranges; a save that
 * fails before it calls memfile_save_skip_clear. */
int memfile_save_skip(uint64_t off, uint64_t len);
void memfile_save_skip_clear(void);

struct memfile_load_opts {
	const struct image *img; /* the image read (its version, codec, and data files) */
	const char *dir;	 /* its name, for messages */
	bool lazy; /* restore --lazy: pages arrive when touched, and in the background */
	/* The pages are written on threads of their own while the caller goes on; it must call
	 * memfile_load_join before anything reads or watches guest memory. */
	bool async;
};

/* Loads the section D into a freshly initialised memory file. On failure *ERR (malloc'd) says
 * what is wrong in one line, or is NULL when D's error does. */
int memfile_load(struct dec *d, const struct memfile_load_opts *o, char **err);
/* Waits for an async load's pages: 0, or what went wrong in *ERR (malloc'd). 0 at once when
 * none is running. */
int memfile_load_join(char **err);
/* How long the last memfile_load took (the memory's part of a restore: a full load, or a
 * slot's overlay), in ms. */
double memfile_load_ms(void);
/* --stats of a restore, finer: named instants (a static string each), printed by
 * memfile_marks_print as the ms since the one before, after START. Cheap (a clock read); at
 * most 64 are kept. Detailed (memfile_marks_detail, for --stats), each also takes the process's
 * CPU time and page faults (two more syscalls), printed by phase too. */
void memfile_marks_detail(bool on);
void memfile_mark(const char *what);
void memfile_marks_print(FILE *f, const struct timespec *start);
/* Of the memory the last memfile_load wrote, the bytes given huge folios (whole 2 MiB blocks
 * it filled while the host's memory came fast enough; docs/checkpoint.md). */
uint64_t memfile_load_huge(void);
/* Prints what the memory section D of IMG holds: chunks by kind, data files; *FILE_BYTES gets
 * the data files' size. */
void memfile_inspect(struct dec *d, const struct image *img, const char *dir, FILE *out,
		     uint64_t *file_bytes);
/* Lazy restore (restore --lazy; docs/checkpoint.md). After memfile_load with opts->lazy, pages
 * of the image's data files are placed when first touched and in the background, once
 * memfile_lazy_start is called (when the guest is ready to run). Every mapping of the file
 * that the restore makes in a stub must be handed over with memfile_lazy_watch; any other
 * mapping made while loading must first have its range loaded (memfile_lazy_ensure), since a
 * page not yet loaded would read as zeros through it. A page that cannot be loaded ends the
 * Sentry with one line. */
bool memfile_lazy_active(void);
/* A stub's mapping: ADDR..ADDR+LEN in its address space maps file offset OFF. */
struct memfile_space_range {
	uint64_t addr, len, off;
	/* Registered and protected already by memfile_track_prepare_space (a warm slot's spare
	 * stub), and mapped since as it was then. */
	bool prepared;
};
/* Watches the address space of userfaultfd UFFD (taken over, closed when loading ends) whose
 * mappings of the file are R[0..N). */
int memfile_lazy_watch(int uffd, const struct memfile_space_range *r, size_t n, char **err);
int memfile_lazy_start(void);
/* Loads every page still missing and waits until the loader has let go of everything. */
void memfile_lazy_wait(void);
/* Loads every page of [OFF, OFF+LEN) still in the image, now. */
void memfile_lazy_ensure(uint64_t off, uint64_t len);

/* Write tracking (mem/pagediff.c): which pages may have changed since a base image, for
 * checkpoint --parent. A base is set up while the guest is stopped, right after an image is
 * written or restored: memfile_track_begin (the Sentry's own view of the file), then
 * memfile_track_space for every stub address space, then memfile_track_commit with the image's
 * memory id. A checkpoint first collects what was written since (memfile_track_harvest). */
int memfile_track_begin(void);
/* Address space KEY (a stub with process id PID) maps the file at R[0..N): its writes are
 * tracked through UFFD (taken over; -1 once KEY is known). FRESH[0..NFRESH) are the ranges
 * mapped since the last base, which must be protected anew (all of them the first time).
 * UNTOUCHED: KEY is new and its stub has run nothing since its ranges were mapped, so it maps
 * no page of them yet (a restored stub), and they may be watched lazily. */
int memfile_track_space(const void *key, int uffd, int pid, const struct memfile_space_range *r,
			size_t n, const struct memfile_space_range *fresh, size_t nfresh,
			bool untouched);
/* Ahead of a restore (a warm slot's spare stub, which maps R[0..N) of the prepared slot and has
 * run nothing): UFFD is set up, R registered, and the golden image's holes in R protected, as
 * the first memfile_track_space of an untouched stub would; that call then takes UFFD over
 * and does for a range marked prepared only what the restore changed since (what it wrote or
 * punched out). UFFD stays the caller's. 0, or a negative errno (then nothing is prepared,
 * and UFFD may have its API set: a restore must not use it). */
int memfile_track_prepare_space(int uffd, int pid, const struct memfile_space_range *r, size_t n);
/* Address space KEY is going: what it wrote is collected now. */
void memfile_track_space_end(const void *key);
/* [OFF, OFF+LEN) changed, or is mapped where no one watches it. */
void memfile_track_untracked(uint64_t off, uint64_t len);
int memfile_track_harvest(void);
void memfile_track_commit(const uint8_t id[16]);
void memfile_track_invalidate(void);
/* True when every change since image ID is known. */
bool memfile_track_base_is(const uint8_t id[16]);
bool memfile_track_dirty(uint64_t page);
/* Why tracking cannot work here (NULL: it can, or was not tried). */
const char *memfile_track_why_not(void);
/* The memory id of the image the last memfile_save wrote or memfile_load read; false when
 * there is none (a version 1 image). */
bool memfile_image_id(uint8_t id[16]);

/* Slots (mem/slots.c; docs/checkpoint.md, "Slots"). `minisentry slots`: N ready copies of
 * golden image GOLDEN's memory in DIR (on a tmpfs). On failure *ERR says why in one line. */
int memfile_slots_create(const char *golden, unsigned count, const char *dir, char **err);
/* restore --slots DIR, before memfile_init: claims a ready slot (one a dead Sentry left is
 * reset fully first); memfile_init then uses it as the memory file, and memfile_load
 * overlays only what the image holds beyond the golden image. */
int memfile_slot_claim(const char *dir, char **err);
bool memfile_slot_active(void);
/* A warm slot (sentry/warm.c; docs/checkpoint.md, "Warm slots"). The client of a restore
 * reserves a slot: the next in turn whose state byte it can lock, as a claim does, without
 * reading the golden image; the pool's descriptor (which holds the lock), or a negative errno
 * with *ERR. The slot's waiting Sentry has prepared that slot before: its pool and golden
 * image opened and its file open, to be the memory file (memfile_init), but not claimed and
 * never written. Given the client's descriptor, it adopts the claim (the lock must be held by
 * that descriptor; it is taken over, closed on failure) and the slot is claimed as by
 * memfile_slot_claim, recovered first if a dead Sentry left it. */
int memfile_slot_reserve(const char *dir, unsigned *index, char **err);
/* The number of slots of DIR's pool, or a negative errno. */
int memfile_slots_count(const char *dir);
int memfile_slot_prepare(const char *dir, unsigned index, char **err);
int memfile_slot_adopt(int pool_fd, const char *dir, char **err);
int memfile_slot_pool_fd(void);
/* Section NAME of the prepared or claimed slot's golden image, as read (-ENOENT: none). */
int memfile_slot_golden_section(const char *name, const void **data, size_t *len);
/* The claimed slot's number (-1: none); *RECOVERED: a dead Sentry had left it. */
int memfile_slot_index(bool *recovered);
/* The claimed or prepared slot's file (-1: none): the memory file. */
int memfile_slot_fd(void);
/* The claimed slot's golden image: its path, as its pool names it, and its directory's
 * descriptor (NULL and -1 without a slot): what a later checkpoint --base of it needs in a
 * Sentry that reaches no path. */
const char *memfile_slot_golden_path(void);
int memfile_slot_golden_dirfd(void);
/* The restore wrote [OFF, OFF+LEN) of the slot (not through tracked mappings). */
void memfile_slot_written(uint64_t off, uint64_t len);
struct memfile_slot_stats {
	uint64_t pages; /* pages reset */
	bool tracked;	/* by write tracking; else by comparison with the golden image */
	bool recovered; /* the claim found the slot left by a dead Sentry */
};
/* When the sandbox has ended (no stub left): the slot is made the golden image again, only
 * where the restore wrote and the guest dirtied when writes were tracked; memfile_slot_release
 * then returns it to the pool. */
int memfile_slot_reset(struct memfile_slot_stats *stats);
/* Whether the claimed slot is exactly its golden image (the save-restore test's slots
 * variant checks every claim: a reset that missed a page shows there); 0, or why not in *ERR.
 * A read of the golden image's data and of the slot's. */
int memfile_slot_check(char **err);
void memfile_slot_release(void);
/* The restore is about to write [OFF, OFF+LEN) of the memory file by other means than the
 * memory section (a mapped file's clean pages): in a slot, zeroed first and reset later. */
void memfile_restore_write(uint64_t off, uint64_t len);
/* Write tracking since a slot was claimed, across bases. */
void memfile_track_since_claim_start(void);
bool memfile_track_since_claim_known(void);
/* [OFF, OFF+LEN) counts as changed since the claim too (what the restore wrote): one set, so
 * that a page both the restore and the guest wrote is reset once. False if out of memory. */
bool memfile_track_since_claim_add(uint64_t off, uint64_t len);
uint64_t memfile_track_since_claim_end(void);
bool memfile_track_since_claim(uint64_t page);

/* CK_MOBJ: a memory object's range; its references are retaken by what loads after it. */
int mobj_save(struct enc *e, const void *obj);
void *mobj_load(struct dec *d);
void mobj_drop(void *obj);

#endif
