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
/* The cached child NAME of DIR, or NULL (no reference taken, no lookup done). */
struct vfs_dentry *vfs_dentry_cached(struct vfs_dentry *dir, const char *name);
/* Takes D off its parent's list after its name was removed; D lives on while referenced. */
void vfs_dentry_unhash(struct vfs_dentry *d);
/* Moves cached D under NEWDIR as NEWNAME after a rename. -ENOMEM leaves D unhashed. */
int vfs_dentry_move(struct vfs_dentry *d, struct vfs_dentry *newdir, const char *newname);

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
/* vfs_walk checking search permission against CRED (NULL: no checks). */
int vfs_walk_cred(const struct vfs_fs_ctx *fs, const struct vfs_cred *cred,
		  struct vfs_dentry *start, const char *path, int lookup_flags, int *nlinks,
		  struct vfs_dentry **out, struct vfs_last *last);
/* Search permission on DIR for CRED. */
int vfs_may_lookup_cred(struct vfs_dentry *dir, const struct vfs_cred *cred);
/* Reads the target of symlink D into BUF (PATH_MAX bytes) NUL-terminated; -ENOENT for an
 * empty target, -ENAMETOOLONG if it does not fit. */
int vfs_read_link_target(struct vfs_dentry *d, char *buf);

/* attr.c */

/* Linux's generic_permission on inode INO for CRED (NULL: root), MASK of R_OK|W_OK|X_OK. */
int vfs_inode_permission(struct vfs_inode *ino, const struct vfs_cred *cred, int mask);
/* True if INO's filesystem cannot be written (it has no setattr). */
bool vfs_inode_rdonly(struct vfs_inode *ino);
/* The current time, for timestamps. */
struct timespec vfs_now(void);

/* namei.c */

/* Creates regular file NAME in DIR for O_CREAT, after the permission checks mknod makes. */
int vfs_create_in(struct vfs_dentry *dir, const struct vfs_cred *cred, const char *name,
		  mode_t mode);
/* Applies ATTR to D's inode (no permission checks: the caller made them). */
int vfs_setattr_dentry(struct vfs_dentry *d, struct vfs_setattr *attr);

/* memfs.c: the in-memory filesystem behind tmpfs and the overlay's upper layer. The overlay
 * uses the calls below directly, as its upper layer is always a memfs. */

/* A new memfs of type FS_TYPE whose root directory has MODE; inode numbers start at
 * INO_BASE + 1 (the root). Returns the root inode, the caller's reference. */
int memfs_new(const char *fs_type, mode_t mode, uint64_t ino_base, struct vfs_inode **root);
bool memfs_is(struct vfs_inode *ino);
/* The entry NAME of memfs directory DIR: its inode (a new reference) or, with *WHITEOUT set,
 * a whiteout (*OUT NULL); -ENOENT when there is neither. */
int memfs_lookup_entry(struct vfs_inode *dir, const char *name, bool *whiteout,
		       struct vfs_inode **out);
/* mknod that also returns the new inode (a new reference); replaces a whiteout NAME. */
int memfs_mknod_get(struct vfs_inode *dir, const char *name, const struct vfs_node_attr *attr,
		    struct vfs_inode **out);
/* Puts a whiteout at NAME, replacing any entry there. */
int memfs_whiteout(struct vfs_inode *dir, const char *name);
/* Removes the whiteout NAME if there is one. */
void memfs_drop_whiteout(struct vfs_inode *dir, const char *name);
void memfs_set_opaque(struct vfs_inode *dir, bool opaque);
bool memfs_is_opaque(struct vfs_inode *dir);
/* Lets unlinked memfs file INO be linked back in (O_TMPFILE without O_EXCL). */
void memfs_set_linkable(struct vfs_inode *ino);
/* The memfs inode behind INO: itself, or an overlay inode's upper one (NULL if none). */
struct vfs_inode *vfs_memfs_inode(struct vfs_inode *ino);
/* Removes every whiteout in DIR (before it is removed or replaced). */
void memfs_clear_whiteouts(struct vfs_inode *dir);
/* Calls FN for every entry of DIR in order, whiteouts included (INO NULL), until it returns
 * non-zero, which is returned. */
int memfs_foreach(struct vfs_inode *dir,
		  int (*fn)(const char *name, struct vfs_inode *ino, void *arg), void *arg);
/* Writes LEN bytes of BUF at OFF of memfs regular file INO (copy-up). */
int memfs_write_kernel(struct vfs_inode *ino, const void *buf, size_t len, off_t off);
/* The inode number memfs reports for INO, and an override kept by copy-up (0: none). */
ino_t memfs_ino(struct vfs_inode *ino);
void memfs_set_origin_ino(struct vfs_inode *ino, ino_t origin);
ino_t memfs_origin_ino(struct vfs_inode *ino);

/* Checkpoint kinds of the files outside the tree (vfs/save.c's table; vfs/save.h). */
struct vfs_file_kind;
extern const struct vfs_file_kind vfs_pipe_kind;    /* pipe.c: pipes and FIFOs */
extern const struct vfs_file_kind vfs_eventfd_kind; /* eventfd.c */
extern const struct vfs_file_kind vfs_epoll_kind;   /* epoll.c */
extern const struct vfs_file_kind vfs_unix_kind;    /* unix.c */
extern const struct vfs_file_kind vfs_hostfd_kind;  /* hostfd.c: the sandbox's stdio */

#endif
