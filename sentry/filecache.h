/* filecache — the pages of host (lower-layer) files in the memory file, kept across mappings:
 * the Sentry's page cache. Private mappings of such a file (every exec of a program maps its
 * text) share the cached pages copy-on-write instead of each reading its own copy. */
#ifndef SENTRY_FILECACHE_H
#define SENTRY_FILECACHE_H

#include <stddef.h>
#include <sys/types.h>

struct vfs_file;
struct mobj;

/* The memory object caching FILE, with the pages of [OFF, OFF+LEN) read in (a new reference;
 * byte N of the file is at offset N of the object, and the object ends at the file's last
 * page, zero past its end). NULL when FILE is not a lower-layer file that cannot change under
 * the sandbox, is too large, or cannot be read. */
struct mobj *filecache_get(struct vfs_file *file, off_t off, size_t len);
/* A range of a file that filecache_get will be asked for. */
struct filecache_range {
	struct vfs_file *file;
	off_t off;
	size_t len;
};
#define FILECACHE_PREFETCH_MAX 8

/* Starts reading in the pages of RANGES (at most FILECACHE_PREFETCH_MAX) on a thread of the
 * Sentry's own, on another CPU, while the caller does something else: exec, while it makes
 * the new stub. The next call into this file waits for it and takes its share of what is left.
 * The thread is made by a Sentry already confined, and inherits all of it. */
void filecache_prefetch(const struct filecache_range *ranges, int n);
/* Forgets every cached file (their pages go when no mapping holds them any more): a
 * checkpoint saves only pages some mapping holds. */
void filecache_clear(void);

#endif
