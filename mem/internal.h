/* What the files of mem/ share and nothing else sees: the memory file's state (its descriptor,
 * the Sentry's mapping of it, the allocator) and the worker threads that save and load it. */
#ifndef MEM_INTERNAL_H
#define MEM_INTERNAL_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Virtual size only: a sparse file and a MAP_NORESERVE view. */
#define MEMFILE_SIZE (1ULL << 40)
#define MEMFILE_PAGE 4096ULL
/* The top of the file is the Sentry's own (memfile_reserved); allocations and images end below
 * it. */
#define MEMFILE_RESERVED (64 * MEMFILE_PAGE)
#define MEMFILE_USABLE (MEMFILE_SIZE - MEMFILE_RESERVED)

struct extent {
	uint64_t off, len;
};

struct memfile_state {
	int fd;
	char *base;
	uint64_t bump; /* everything at and above is free */
	uint64_t high; /* the highest bump yet: in a slot, freed pages may hold data up to it */
	struct extent *free;
	size_t nfree, capfree;
	uint64_t limit; /* --memory: the bounded file's size, 0 when unbounded */
	bool huge;	/* the file can have huge folios where the view asks (dense.c) */
	int reconf_fd;	/* the bounded tmpfs's reconfiguration context, or -1 */
	int mnt_fd;	/* the bounded tmpfs's detached mount, or -1 (bounded_file) */
	int copy_fd;	/* the file again, with a position of its own (memfile_copy_fd), or -1 */
	bool (*full_hook)(void);
	sigjmp_buf *guard; /* the memfile_guard running, if any */
	/* Pages the bounded file had no room for, touched outside a guard: private pages stand
	 * in for them in the Sentry's view until memfile_settle (offsets). Room for everything
	 * one syscall may write (Linux's MAX_RW_COUNT, which reads and writes are capped at):
	 * a guest's read of /dev/zero into 100 MiB past a 64 MiB bound spilled 25,600 pages, and
	 * with room for 256 killed the Sentry. Untouched, the array costs no memory. */
	uint64_t spill[(0x7ffff000 >> 12) + 64];
	volatile int nspill;
};

extern struct memfile_state mf;

/* The next extent of data at or after AT, before END: false when the rest is a hole, else
 * [*DATA, *STOP) (STOP capped at END). */
bool mf_next_data(uint64_t at, uint64_t end, uint64_t *data, uint64_t *stop);

/* All LEN bytes at OFF of FD read into BUF, or written from it (WRITE), through EINTR and short
 * transfers: 0, -EIO for a file that ends early, or another negative errno. */
int mf_pio_all(int fd, void *buf, size_t len, uint64_t off, bool write);

/* Write tracking by fault (wpfaults.c), for a stub whose pagemap the Sentry cannot read: UFFD
 * (its API set for synchronous write-protection) is watched by a thread of the Sentry that
 * notes the WPQ_BLOCK-aligned block of each page a write stopped at and lifts that block's
 * protection. Ranges registered for minor faults too (watched lazily: only holes are
 * protected up front) get the file's pages mapped, write-protected, by WPQ_LAZY_SPAN-aligned
 * span when the stub first touches them. With WPQ_ASYNC (asynchronous write-protection, read by
 * PAGEMAP_SCAN) the thread only maps, and notes nothing. wpq_take hands FN the address of
 * every block noted since the last take, under the lock that noting takes (false if some were
 * lost: count everything as written); wpq_remove stops watching (UFFD stays the caller's). */
#define WPQ_BLOCK (64 * 1024)
#define WPQ_LAZY_SPAN (1024 * 1024)
#define WPQ_ASYNC 1u
struct wpq;
struct wpq *wpq_add(int uffd, unsigned flags);
void wpq_remove(struct wpq *q);
bool wpq_take(struct wpq *q, void (*fn)(void *arg, uint64_t addr), void *arg);

/* [OFF, OFF+LEN) of the file was punched out (memfile_zero) or written by a slot's restore
 * (memfile_slot_written) since the last base: a lazily watched stub must not take it for a
 * page of the file that every touch reports (pagediff.c). */
void track_hole(uint64_t off, uint64_t len);

#define WORKERS_MAX 8

/* Remembers the CPUs this process may use, before the Sentry pins itself to one. */
void workers_init(void);
/* How many threads a bounded phase (saving or loading memory) uses: the CPUs the process was
 * allowed at workers_init, at most 8. */
int workers_count(void);
/* Runs FN(ARG, I) for I in [0, N) on N threads, the caller being I = 0, and returns when all
 * have returned. The others block every signal, so the Sentry's signals (SIGCHLD through its
 * signalfd, the placement tick's SIGALRM) still reach only its own thread. Work is shared by
 * the callers' own counters: if a thread cannot be made, the others simply do its share. */
void workers_run(int n, void (*fn)(void *arg, int i), void *arg);

/* --- huge folios for blocks a restore fills whole (dense.c) --- */

#define DENSE_BYTES (2ULL << 20)

/* The 2 MiB blocks one fill (a restore's load) writes whole, merged into runs. */
struct dense {
	struct extent *runs;
	size_t n, cap;
	bool on;	 /* blocks still get huge folios */
	int strikes;	 /* blocks that were slow to allocate */
	uint64_t blocks; /* blocks allocated while on */
};

/* Whether the memory file can have huge folios (the bounded file, on its own tmpfs). */
bool dense_possible(void);
/* The block at OFF (DENSE_BYTES-aligned, after the last one added) will be written whole. */
int dense_add(struct dense *d, uint64_t off);
/* Marks D's blocks for huge folios in the Sentry's view. */
void dense_begin(struct dense *d);
/* A worker is about to fill block OFF of D: allocates it now, timed. Where huge folios cost
 * more than small pages (memory the host no longer backs), the rest of D gets small pages.
 * Thread-safe. */
void dense_block(struct dense *d, uint64_t off);
/* The fill is over: the view asks for small pages again everywhere. */
void dense_end(struct dense *d);

/* --- the memory section of an image (memsave.c) --- */

#define CHUNK_PAGES 64 /* 256 KiB: a lazy restore's unit of loading, the grid of --parent */
#define CHUNK_BYTES (CHUNK_PAGES * MEMFILE_PAGE)
/* An image with at most this much data (non-zero pages), none of it incompressible, keeps it
 * inside the section, compressed with it: no data files to create, which is most of what an
 * idle sandbox's checkpoint costs, and one compression stream, which for a small sandbox is
 * smaller than chunks compressed each on its own (a busybox sandbox with 8 sleepers: 43 KB
 * against 50 KB). */
#define INLINE_MAX (1u << 20)
#define MAX_FILES 64
#define MAX_IMAGES 32
#define ID_LEN 16

struct dec;
struct compressor;
struct memfile_load_opts;

/* How a chunk is stored. */
enum chunk_how {
	HOW_RAW,    /* its pages as they are, in a data file, at a page-aligned offset */
	HOW_PACKED, /* compressed with the image's codec, in a data file */
	HOW_INLINE, /* its pages follow its index entry in the section */
	HOW_REF,    /* the same pages of another image (--parent) */
	HOW_COUNT,
};

struct chunk {
	uint64_t mem_off; /* in the memory file */
	uint32_t pages;
	uint8_t how;
	uint32_t where; /* HOW_RAW, HOW_PACKED: data file; HOW_REF: image */
	uint64_t file_off, stored;
	uint32_t crc; /* CRC-32C of the stored bytes */
	const void *inline_data;
};

struct image;
struct store;

/* An image whose pages this one refers to (HOW_REF chunks): named by its memory id and path,
 * opened (and its own index checked) by store_open_refs. */
struct ref_image {
	uint8_t id[ID_LEN];
	char *path;
	struct image *img; /* kept read: its inline chunks live in its memory section */
	struct store *st;
};

/* The index of a version 2 memory section, checked against the image's files. */
struct store {
	uint32_t codec;
	const char *dir;
	uint32_t nfiles;
	int fds[MAX_FILES];
	uint64_t sizes[MAX_FILES];
	uint32_t nimages;
	struct ref_image refs[MAX_IMAGES];
	struct chunk *ch;
	uint64_t nch;
	uint8_t id[ID_LEN];
	uint64_t bump; /* the allocated size of the memory file it describes */
};

/* Parses and checks a version 2 index, after the allocator state: every number bounded by the
 * files' real sizes and BUMP, the memory file's allocated size, before it is used. Opens the
 * data files. On failure either D's error or *ERR says why; store_close frees S either way. */
int store_parse(struct dec *d, const struct memfile_load_opts *o, uint64_t bump, struct store *s,
		char **err);
/* Whether S is in the golden form: no references, every chunk raw in pages.0 at its own memory
 * offset, so that pages.0 is a sparse copy of the memory file. */
bool store_is_mappable(const struct store *s);
/* Reads the version 2 image at PATH and its memory index (checked, data files open). */
int store_open_image(const char *path, struct image *img, struct store *st, char **err);
/* The golden image of the claimed slot (slots.c), or NULL. */
const struct store *slot_golden_store(void);
/* The same for a slot prepared but not claimed yet (a warm slot's Sentry), else NULL. */
const struct store *slot_golden_store_prepared(void);
const uint8_t *memfile_slot_golden_id(void);
/* Opens the images S refers to and checks that each is the one named (its memory id). */
int store_open_refs(struct store *s, char **err);
void store_close(struct store *s);
/* The first chunk of S (its chunks are in address order) that ends after OFF. */
uint64_t store_chunk_after(const struct store *s, uint64_t off);
/* Closes the data files of S and of the images it refers to, keeping the index. */
void store_close_files(struct store *s);

/* What a thread needs to read chunks: a decompressor per codec and two chunk buffers. */
struct chunk_reader {
	struct compressor *z[3];
	uint8_t *buf; /* a compressed chunk */
	uint8_t *tmp; /* a referenced chunk, whole */
};

int chunk_reader_init(struct chunk_reader *r);
void chunk_reader_free(struct chunk_reader *r);
/* Puts chunk C's pages at DST: read straight there when raw, else read into a buffer and
 * decompressed there, or taken from the image it refers to; checked either way. Returns NULL,
 * or what is wrong with it ("corrupt (checksum mismatch)", "truncated"...). */
const char *store_read_chunk(struct store *s, const struct chunk *c, struct chunk_reader *r,
			     uint8_t *dst);

/* --- lazy restore (lazy.c) --- */

/* A userfaultfd for this process (O_NONBLOCK, before its UFFDIO_API): the syscall, or
 * /dev/userfaultfd where the syscall is kept from this user (vm.unprivileged_userfaultfd = 0
 * and no CAP_SYS_PTRACE). A negative errno when neither works. */
int mem_userfaultfd(void);

/* Takes over S (its file chunks only) and starts serving faults on the grid cells that hold
 * them; the background load waits for memfile_lazy_start. On failure *ERR says why. */
int lazy_begin(struct store *s, const char *dir, char **err);
/* [OFF, OFF+LEN) was freed or zeroed: its pages are no longer wanted from the image. */
void lazy_forget(uint64_t off, uint64_t len);

#endif
