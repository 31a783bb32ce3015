/* The fd table: descriptor numbers to open file descriptions, with per-descriptor
 * FD_CLOEXEC. Shared between tasks cloned with CLONE_FILES (refs). */
#ifndef SENTRY_FDTABLE_H
#define SENTRY_FDTABLE_H

#include <stdbool.h>

struct vfs_file;

struct fd_entry {
	struct vfs_file *file; /* NULL: free slot */
	bool cloexec;
};

struct fdtable {
	int refs;
	struct fd_entry *fds;
	int n; /* slots allocated */
};

struct fdtable *fdtable_new(void);
/* A new table with the same descriptors (new references), for fork and unshare. */
struct fdtable *fdtable_copy(struct fdtable *old);
/* Another reference on table T (CLONE_FILES); fdtable_put drops one, the last closes every
 * descriptor and frees T. */
struct fdtable *fdtable_get(struct fdtable *t);
void fdtable_put(struct fdtable *t);
/* Installs FILE (taking the caller's reference) at the lowest free number >= MIN, below
 * LIMIT; returns it or -EMFILE. */
int fdtable_install(struct fdtable *t, struct vfs_file *file, bool cloexec, int min, int limit);
/* Installs FILE at exactly FD, closing what was there. Returns FD or a negative errno. */
int fdtable_install_at(struct fdtable *t, int fd, struct vfs_file *file, bool cloexec, int limit);
/* The file at FD, or NULL. Borrowed, not a new reference: valid while the table holds it.
 * Syscall handlers reach it through arg_file (sentry/sysarg.h). */
struct vfs_file *fdtable_peek(struct fdtable *t, int fd);
struct fd_entry *fdtable_entry(struct fdtable *t, int fd);
int fdtable_close(struct fdtable *t, int fd);

/* Checkpoint (CK_FDTABLE, state/codec.h). */
struct enc;
struct dec;
int fdtable_save(struct enc *e, const void *t);
void *fdtable_load(struct dec *d);
void fdtable_drop(void *t);

#endif
