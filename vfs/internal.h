/* vfs/internal.h — helpers shared between the files of vfs/; not part of the subsystem's
 * public face (vfs.h). */
#ifndef VFS_INTERNAL_H
#define VFS_INTERNAL_H

#include <limits.h>
#include <stdbool.h>

#include "vfs/vfs.h"

/* What a parent walk stopped before: the kind of the last component and its name. */
enum vfs_last_type {
	VFS_LAST_NORM,	 /* an ordinary name, in NAME */
	VFS_LAST_DOT,	 /* "." */
	VFS_LAST_DOTDOT, /* ".." */
	VFS_LAST_ROOT,	 /* no component at all: the path was "/" (or only slashes) */
};

struct vfs_last {
	enum vfs_last_type type;
	bool trailing_slash; /* the path went on with slashes after the last component */
	char name[NAME_MAX + 1];
};

/* dentry.c */

/* A new root dentry for INO (whose reference it takes over); the root is its own parent. */
int vfs_dentry_new_root(struct vfs_inode *ino, struct vfs_dentry **out);
/* The child NAME of directory DIR, from the cache or from DIR's inode lookup (and then
 * cached). Returns a referenced dentry, or -ENOENT and friends. */
int vfs_dentry_child(struct vfs_dentry *dir, const char *name, struct vfs_dentry **out);

/* mount.c */

/* Replaces *D (a referenced dentry) with the root of the topmost mount stacked on it, if it
 * is a mountpoint: what descending into a directory sees. */
void vfs_follow_mounts(struct vfs_dentry **d);
/* A device number for a new in-memory filesystem's st_dev: major 0 as Linux gives its
 * anonymous filesystems, minors counted from a range host filesystems do not reach in
 * practice, in creation order (so the same start-up sequence gives the same numbers). */
dev_t vfs_anon_dev_new(void);

/* hostfd.c */

/* Makes F, a file being opened by vfs_open, a wrapper of host descriptor FD (owned by F when
 * OWNED), as vfs_file_host_fd does for a new file. Returns -ENOMEM (FD stays the caller's). A
 * file on a dentry (/dev/tty) stats as that dentry; one without stats as FD. */
int vfs_host_fd_attach(struct vfs_file *f, int fd, bool owned);

/* lookup.c */

/* The one place where permission to search directory DIR is decided. */
int vfs_may_lookup(struct vfs_dentry *dir);
/* Path walk shared by vfs_lookup and vfs_open. *NLINKS counts symlinks followed so far and
 * is carried across walks that belong to one operation (O_CREAT following a final link).
 * With LAST == NULL resolves the whole path; otherwise stops before the last component,
 * returns its parent directory in *OUT and describes the component in *LAST. */
int vfs_walk(const struct vfs_fs_ctx *fs, struct vfs_dentry *start, const char *path,
	     int lookup_flags, int *nlinks, struct vfs_dentry **out, struct vfs_last *last);
/* Reads the target of symlink D into BUF (PATH_MAX bytes) NUL-terminated; -ENOENT for an
 * empty target, -ENAMETOOLONG if it does not fit. */
int vfs_read_link_target(struct vfs_dentry *d, char *buf);

#endif
