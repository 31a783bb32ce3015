/* Checkpoint and restore of a whole sandbox (DESIGN.md §7, docs/checkpoint.md). The guest's
 * threads are stopped first (quiesce.c); then checkpoint.c writes the image of the kernel, or
 * rebuilds a kernel from one in a Sentry that has set up its memory file and platform but no
 * guest yet. Each object is saved and loaded beside its definition (task.c, signal.c, mm.c,
 * vfs/save.c, mem/memfile.c, ...) with state/codec.h; the image's files are state/image.h's. */
#ifndef SENTRY_CHECKPOINT_H
#define SENTRY_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sentry/evict.h"

struct kernel_bind;

struct kernel_restore_opts {
	const char *rootfs; /* instead of the image's */
	bool force;	    /* use a rootfs where files the image depends on changed */
	bool lazy;	    /* start before the memory is loaded (mem/memfile.h) */
	/* --image-key: the image must carry a MAC made with this key (state/mac.h). */
	const uint8_t *key;
	size_t key_len;
	/* Bind mounts whose host path is not the image's: each replaces the image's bind mount
	 * on the same guest path (an OCI restore into a new container, whose engine gave it new
	 * files). */
	const struct kernel_bind *binds;
	int nbinds;
	const char *slots; /* restore --slots DIR: the memory file is a slot of that pool */
	/* The image is read beneath this directory descriptor (a warm slot's Sentry reaches no
	 * path: sentry/warm.c) rather than opened by its path, which then names it in messages. */
	bool image_by_fd;
	int image_fd;
};

/* How to write an image. */
struct checkpoint_opts {
	bool force;	    /* replace an existing image */
	uint32_t codec;	    /* IMAGE_CODEC_* (state/compress.h); 0 for zlib */
	const char *parent; /* an earlier image of this sandbox whose unchanged pages to refer to */
	/* checkpoint --base: PARENT is a full image to refer to by comparison where writes were
	 * not tracked since it; its directory's descriptor (the client's: a confined Sentry
	 * reaches no path), or -1 to open PARENT by its path. */
	bool base;
	int base_fd;
	bool golden;	/* the mappable form (checkpoint --golden) */
	bool no_inline; /* pages in data files however few (to test lazy restores) */
	bool goes_on;	/* the sandbox runs on: track its writes for a later --parent */
	/* --image-key: a MAC of the image made with KEY (KEY_LEN bytes); its memory is then kept
	 * inside its sections (no data files, no --parent or --base), which the MAC covers. */
	const uint8_t *key;
	size_t key_len;
	/* The tag its temporary directories are named with (struct image's tag), so that the
	 * client can clean up after a Sentry that died mid-way; NULL for random names. */
	const char *tag;
};

struct checkpoint_stats {
	uint64_t bytes;		     /* on disk */
	uint64_t pages;		     /* memory pages saved */
	uint64_t ref_pages;	     /* of which in the --parent's images */
	struct evict_report evicted; /* what eviction before the save freed */
	const char *note;	     /* why --parent was not used, or NULL (static) */
	bool delta;		     /* --base: the image refers to the base */
};

/* Tracks writes to guest memory from now on, against the image just written or restored (the
 * guest stopped): what makes a later checkpoint --parent of that image cheap. */
void checkpoint_track_base(void);

/* Stops every running guest thread (PTRACE_INTERRUPT) and waits until all are stopped; a
 * thread caught entering a syscall is put back before its syscall instruction. */
int kernel_quiesce(void);
/* Lets the threads kernel_quiesce stopped run again (checkpoint --leave-running, from the
 * control socket's event: no task is inside a syscall then). */
void kernel_unquiesce(void);

/* Writes the image of the (quiesced) kernel to DIR beneath directory descriptor AT (or
 * AT_FDCWD); see image_begin for O->force. On failure nothing is left at DIR and *ERR
 * (malloc'd) says why in one line. */
int checkpoint_save(int at, const char *dir, const struct checkpoint_opts *o,
		    struct checkpoint_stats *stats, char **err);

/* Loads the image in DIR into the kernel and starts its tasks. On failure *ERR says why. (The
 * two steps below leave the tasks stopped: task_load_resume starts them.) */
int checkpoint_load(const char *dir, const struct kernel_restore_opts *o, char **err);

/* The same in two steps, so that the Sentry can lock itself in between (kernel.c): _begin
 * reads the image's files, checks their lengths, checksums and MAC, and decodes only the
 * kernel record (which names the rootfs); _finish decodes everything else, in a Sentry that no
 * longer reaches any host path. _finish or _abort ends what _begin started. */
struct checkpoint_restore;
int checkpoint_load_begin(const char *dir, const struct kernel_restore_opts *o,
			  struct checkpoint_restore **r, char **err);
int checkpoint_load_finish(struct checkpoint_restore *r, const struct kernel_restore_opts *o,
			   char **err);
void checkpoint_load_abort(struct checkpoint_restore *r);

/* Prints what the image in DIR holds: sections, objects per kind, bytes, pages. */
int checkpoint_inspect(const char *dir, FILE *out, char **err);
/* The same, refusing an image without a right MAC for KEY (when not NULL). */
int checkpoint_inspect_signed(const char *dir, const uint8_t *key, size_t key_len, FILE *out,
			      char **err);

#endif
