/* vfs/kernfs.h — the helper procfs and sysfs are built with (DESIGN.md §5): trees of
 * directories, generated files and computed symlinks described by tables of rows, as Linux's
 * fs/proc/base.c lists a process's files. A directory is
 *   static   its rows are instantiated when it is (and in eager mode, everything is);
 *   lazy     its rows are instantiated one by one, on the lookup that names a row or the
 *            readdir that lists them all; its link count comes from the rows' types (or a
 *            count callback) without instantiating anything, so stat answers the same
 *            whether the directory was populated or not;
 *   dynamic  a part listed and looked up through callbacks on every readdir and lookup
 *            (/proc's pids, /proc/PID/fd); its children live only while a dentry holds them.
 * A directory may have rows and a dynamic part at once (/proc: fixed files, then pids).
 *
 * Regular files are seq-file style: SHOW writes the whole content into a growable buffer when
 * the file is opened (and again when a read starts over at offset 0), and reads, preads and
 * seeks are served from that snapshot here, once. STORE, if present, takes writes.
 * Symlinks have a fixed target or a READLINK callback run on every readlink.
 *
 * Nodes carry context their rows' callbacks read back: KEY[0..2] (inherited from the parent
 * and set by dynamic lookups: pid, tid, fd for procfs), ARG (the row's own) and PRIV (the row's,
 * or else the parent's). Row tables must outlive the filesystem (static storage). */
#ifndef VFS_KERNFS_H
#define VFS_KERNFS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "vfs/vfs.h"

#define KERNFS_NKEYS 3

struct kernfs_node;

/* The buffer a SHOW callback fills. Appends never fail: running out of memory is remembered
 * and turned into -ENOMEM when the callback returns. */
struct kernfs_buf {
	char *data;
	size_t len, cap;
	bool oom;
};

/* Makes room for MORE bytes and a NUL after them; false (the buffer then remembers it is out
 * of memory) if it cannot. */
bool kernfs_buf_grow(struct kernfs_buf *b, size_t more);

/* The appends are inline: a 10,000-process /proc/all/status is millions of them, most of a
 * constant string whose length the compiler then knows. */
static inline __attribute__((always_inline)) bool kernfs_buf_room(struct kernfs_buf *b, size_t more)
{
	return b->len + more + 1 <= b->cap || kernfs_buf_grow(b, more);
}

static inline __attribute__((always_inline)) void kernfs_buf_write(struct kernfs_buf *b,
								   const void *data, size_t len)
{
	if (!kernfs_buf_room(b, len))
		return;
	memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
}

static inline __attribute__((always_inline)) void kernfs_buf_puts(struct kernfs_buf *b,
								  const char *s)
{
	kernfs_buf_write(b, s, strlen(s));
}

static inline __attribute__((always_inline)) void kernfs_buf_putc(struct kernfs_buf *b, char c)
{
	if (!kernfs_buf_room(b, 1))
		return;
	b->data[b->len++] = c;
	b->data[b->len] = '\0';
}

/* Decimal numbers without printf: the per-process files of a 10,000-process /proc/all are
 * hundreds of thousands of them. NUMS writes each of V[0..N) after a space. */
void kernfs_buf_u64(struct kernfs_buf *b, uint64_t v);
void kernfs_buf_i64(struct kernfs_buf *b, int64_t v);
void kernfs_buf_nums(struct kernfs_buf *b, const int64_t *v, size_t n);
void kernfs_buf_printf(struct kernfs_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void kernfs_buf_vprintf(struct kernfs_buf *b, const char *fmt, va_list ap);
/* Space-pads the current line (from the last '\n') to COLUMNS characters (seq_pad). */
void kernfs_buf_pad(struct kernfs_buf *b, size_t columns);
void kernfs_buf_free(struct kernfs_buf *b);
/* CPU masks as Linux prints them: "%*pb" (hex in comma-separated 32-bit groups, the first only
 * as wide as its bits: "ff,ffffffff" for 40) and "%*pbl" ("0-3,8"), for NBITS bits of BITS. */
void kernfs_buf_bitmap(struct kernfs_buf *b, const uint64_t *bits, int nbits);
void kernfs_buf_bitmap_list(struct kernfs_buf *b, const uint64_t *bits, int nbits);

/* Row flags. */
#define KERNFS_WRITE_EACCES                                                                        \
	0x1			/* opening a file for an access its mode grants nobody (writing    \
				 * a 0444 file, reading a 0200 one) fails with EACCES, even for    \
				 * root (sysctl, sysfs); otherwise such writes fail at write(2) */
#define KERNFS_WRITE_EINVAL 0x2 /* a write to a file without STORE: -EINVAL (default -EIO) */
#define KERNFS_LAZY 0x4		/* a directory whose rows are instantiated on demand */
#define KERNFS_NLINK1 0x8	/* a directory reporting one link (Linux's sysctl dirs) */
#define KERNFS_MAGIC_LINK                                                                          \
	0x10 /* a symlink naming an object, not a path (/proc/PID/fd/N, cwd, root, exe): the       \
	      * VFS's is_magic_link query says so, for openat2's RESOLVE_NO_MAGICLINKS */

/* Where a dynamic part or a generated directory describes one child. ENTRY is the row it is
 * made from (static storage); NAME the child's name when it differs from ENTRY->name; KEY
 * comes pre-filled with the directory's keys; ARG the child's argument. */
struct kernfs_child_desc {
	const struct kernfs_entry *entry;
	char name[256];
	long key[KERNFS_NKEYS];
	long arg;
};

/* Rows computed by callbacks instead of a table (the cpuN directories of sysfs): COUNT says
 * how many rows and how many of them are directories, cheaply; ROW describes row I. */
struct kernfs_gen_ops {
	size_t (*count)(struct kernfs_node *dir, size_t *nsubdirs);
	int (*row)(struct kernfs_node *dir, size_t i, struct kernfs_child_desc *out);
};

/* What a dynamic part's ITERATE calls for each child, in ascending KEY order (KEY >= 0 is the
 * child's stable position: a pid, a descriptor number); a non-zero return stops it. */
typedef int (*kernfs_emit_fn)(void *ctx, const char *name, mode_t mode, long key);

struct kernfs_dyn_ops {
	int (*iterate)(struct kernfs_node *dir, kernfs_emit_fn emit, void *ctx);
	/* Describes child NAME in OUT, or -ENOENT. OUT->ARG must be the key ITERATE emits for it
	 * (the child's inode number is derived from it). */
	int (*lookup)(struct kernfs_node *dir, const char *name, struct kernfs_child_desc *out);
};

struct kernfs_entry {
	const char *name;
	mode_t mode; /* type and permission bits */
	unsigned int flags;
	/* Regular files. SIZE is what stat reports (Linux's procfs says 0, sysfs 4096). */
	int (*show)(struct kernfs_node *n, struct kernfs_buf *b);
	int (*store)(struct kernfs_node *n, const char *data, size_t len);
	off_t size;
	/* Symlinks: TARGET, or READLINK producing it into B. */
	const char *target;
	int (*readlink)(struct kernfs_node *n, struct kernfs_buf *b);
	/* Magic links naming an open file (/proc/PID/fd/N): that file, a new reference. */
	int (*link_file)(struct kernfs_node *n, struct vfs_file **out);
	/* Magic links naming a place (cwd, root, exe, a namespace): its dentry, a new reference.
	 * A walk through a LINK_FILE link lands on the file's dentry (or an anonymous one). A
	 * KERNFS_MAGIC_LINK row has one of the two; its readlink text is only shown. */
	int (*link_dentry)(struct kernfs_node *n, struct vfs_dentry **out);
	/* Directories: rows from a table or from GEN, and an optional dynamic part. The table has
	 * NCHILDREN rows or, when NCHILDREN is 0, the rows before its KERNFS_END_ROW: a table
	 * another file defines has no length the directory's file can take sizeof of. */
	const struct kernfs_entry *children;
	size_t nchildren;
	const struct kernfs_gen_ops *gen;
	const struct kernfs_dyn_ops *dyn;
	/* Optional: adjusts what stat reports (owner, a dynamic part's link count). */
	void (*getattr)(struct kernfs_node *n, struct stat *st);
	void *priv;
	long arg;
	const void *data; /* the row's constant, for its callbacks (a sysctl's default value) */
};

/* The end of a row table counted by its end rather than by NCHILDREN. */
#define KERNFS_END_ROW                                                                             \
	{                                                                                          \
		.name = NULL                                                                       \
	}

/* How many rows the table of directory row DIR has. */
size_t kernfs_nchildren(const struct kernfs_entry *dir);

/* A new filesystem of type FS_TYPE with statfs magic MAGIC whose root directory is ROOT_ENTRY.
 * EAGER instantiates every static and lazy directory now (dynamic parts stay dynamic).
 * *ROOT gets the root dentry, the caller's reference; the last put frees the tree. PRIV is the
 * root's context, inherited by every node below whose row has none; PRIV_RELEASE (may be
 * NULL) is called on it when the filesystem's last node goes, or at once if this fails. */
int kernfs_new(const char *fs_type, unsigned long magic, const struct kernfs_entry *root_entry,
	       void *priv, void (*priv_release)(void *priv), bool eager, struct vfs_dentry **root);

/* Context of a node, for callbacks. */
long kernfs_key(struct kernfs_node *n, int i);
long kernfs_arg(struct kernfs_node *n);
void *kernfs_priv(struct kernfs_node *n);
const struct kernfs_entry *kernfs_entry_of(struct kernfs_node *n);
/* The kernfs node behind INO, or NULL if INO is not one. */
struct kernfs_node *kernfs_node_of(struct vfs_inode *ino);

/* What a filesystem holds right now: its live inodes, the dentries cached in its tree, and
 * how many of its lazy directories are fully populated. */
struct kernfs_stats {
	unsigned long inodes;
	unsigned long dentries;
	unsigned long populated_dirs;
};

/* The counters of the kernfs filesystem whose root dentry is ROOT; -EINVAL if ROOT is not
 * one. Dentries are counted by walking the cached tree under ROOT (not into mounts). */
int kernfs_stats(struct vfs_dentry *root, struct kernfs_stats *out);

/* Evicts what nothing holds from the kernfs tree whose root dentry is ROOT: every
 * instantiated row not in use (by a dentry, an open file, a cwd) is freed, to be made again
 * when next looked at. Returns the number of nodes freed (0 if ROOT is not a kernfs root).
 * The image never holds kernfs nodes, so this only frees the Sentry's memory before a
 * checkpoint (seed 000's eviction before save). */
unsigned long kernfs_evict(struct vfs_dentry *root);

/* True if the lazy directory node behind D has instantiated all its rows. */
bool kernfs_dir_populated(struct vfs_dentry *d);

#endif
