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
