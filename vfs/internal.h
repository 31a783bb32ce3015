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

/* file.c: the read, write and pread_kernel ops of every filesystem's directory files. */
ssize_t vfs_dir_read(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos);
ssize_t vfs_dir_write(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos);
ssize_t vfs_dir_pread_kernel(struct vfs_file *f, void *buf, size_t len, off_t off);

/* netdev.c: loopback traffic, counted on lo (PACKETS with BYTES of payload and headers). */
void netdev_lo_xmit(uint64_t packets, uint64_t bytes);

/* hostfs.c: true for an inode of the host (lower) filesystem. */
bool hostfs_is_inode(struct vfs_inode *ino);

/* hostfd.c */

/* Makes F, a file being opened by vfs_open, a wrapper of host descriptor FD (owned by F when
 * OWNED), as vfs_file_host_fd does for a new file. Returns -ENOMEM (FD stays the caller's). A
 * file on a dentry (/dev/tty) stats as that dentry; one without stats as FD. */
int vfs_host_fd_attach(struct vfs_file *f, int fd, bool owned);

/* lookup.c */

/* The one place where permission to search directory DIR is decided. */
int vfs_may_lookup(struct vfs_dentry *dir);
/* One path operation's walk, which may take several calls (O_CREAT walks to the parent,
 * then follows a final symlink itself): what the calls share. */
struct vfs_walk {
	const struct vfs_fs_ctx *fs;
	const struct vfs_cred *cred; /* search permission is checked against it (NULL: none) */
	struct vfs_dentry *root;     /* where "/" leads and ".." stops: FS->root, or the start
				      * directory for a scoped lookup (a reference) */
	int flags;		     /* VFS_LOOKUP_* */
	int nlinks;		     /* symlinks followed so far, against VFS_MAX_SYMLINKS */
	bool root_set;		     /* see walk_jump_root in lookup.c */
};

/* Starts a walk with FLAGS from START (NULL: FS->cwd), which scoped lookups take as their
 * root; vfs_walk_end drops what it holds. */
void vfs_walk_begin(struct vfs_walk *w, const struct vfs_fs_ctx *fs, const struct vfs_cred *cred,
		    struct vfs_dentry *start, int flags);
void vfs_walk_end(struct vfs_walk *w);
/* Walks PATH from START (NULL: FS->cwd; an absolute PATH starts at W's root) as vfs_walk
 * does. */
int vfs_walk_path(struct vfs_walk *w, struct vfs_dentry *start, const char *path,
		  struct vfs_dentry **out, struct vfs_last *last);
/* The last component NAME in DIR, found by the caller's own lookup (O_CREAT): replaces *D
 * (referenced) with what is mounted on it, if anything; -EXDEV under NO_XDEV. */
int vfs_walk_enter(struct vfs_walk *w, struct vfs_dentry **d);
/* Follows symlink LINK, the last component in DIR, under W's rules. A magic link leads
 * straight to its target: *OUT gets it (a reference) and *REST is NULL. Any other symlink's
 * target is read into TARGET (PATH_MAX bytes): *REST is what is left to walk of it and *OUT
 * where to walk it from (DIR, or W's root for an absolute target; a reference). */
int vfs_walk_follow(struct vfs_walk *w, struct vfs_dentry *dir, struct vfs_dentry *link,
		    char *target, struct vfs_dentry **out, const char **rest);
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
/* chmod(2) and chown(2) of an object whose attributes are ST, by CRED: the change to make, or
 * -EPERM (or -EOPNOTSUPP: a symlink's mode) as Linux decides (vfs/namei.c). */
int vfs_chmod_attr(const struct stat *st, const struct vfs_cred *cred, mode_t mode,
		   struct vfs_setattr *attr);
/* A pipe's or socket's pseudo inode in its file record (vfs/pseudo.c): written only when
 * changed, read if present. */
struct enc;
struct dec;
void vfs_pseudo_save(struct enc *e, struct vfs_file *f);
int vfs_pseudo_load(struct dec *d, struct vfs_file *f);
int vfs_chown_attr(const struct stat *st, const struct vfs_cred *cred, uid_t uid, gid_t gid,
		   struct vfs_setattr *attr);

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

/* Checkpoint and restore (vfs/save.c drives these; the record layouts are in
 * docs/image-format.md, section "vfs"). Each filesystem saves and loads its own objects. */

struct enc;
struct dec;
struct vfs_file_kind;

/* save.c: the next component of a saved path at *P ("a/b/c", separators repeated or leading
 * are skipped) into NAME, advancing *P. 1: a component; 0: the end; -EINVAL: ".", "..", or
 * longer than NAME_MAX. */
int vfs_path_next(const char **p, char name[NAME_MAX + 1]);

/* mount.c: the allocators' positions, so a restore continues numbering where the checkpoint
 * stopped (st_dev and mount ids the guest saw stay the same), and a mount by id. */
unsigned int vfs_anon_dev_next(void);
void vfs_anon_dev_set_next(unsigned int minor);
int vfs_mount_next_id(void);
void vfs_mount_set_next_id(int id);
struct vfs_mount *vfs_mount_by_id(int id);

/* dentry.c: a dentry for INO (whose reference it takes over on success) named NAME under PARENT (a
 * reference is taken) that is not in PARENT's list: what an unlinked name held open looks
 * like, rebuilt by a restore. */
int vfs_dentry_new_detached(struct vfs_dentry *parent, const char *name, struct vfs_inode *ino,
			    struct vfs_dentry **out);

/* memfs.c. A tree: the filesystem's identity and every inode under ROOT, hard links, whiteouts
 * and opaque directories, file data as CK_MOBJ references. */
int memfs_save_tree(struct enc *e, struct vfs_inode *root);
/* A new memfs with the saved identity; *ROOT is its root inode (the caller's reference). */
int memfs_load_tree(struct dec *d, struct vfs_inode **root);
/* One inode on its own (an unlinked file held open) with its filesystem's identity; a
 * directory's entries are left out when SHALLOW. */
int memfs_save_inline(struct enc *e, struct vfs_inode *ino, bool shallow);
/* Loads what memfs_save_inline wrote, in SB_OF's filesystem if it is a memfs with the saved
 * st_dev, else in a new one with the saved identity. */
int memfs_load_inline(struct dec *d, struct vfs_inode *sb_of, struct vfs_inode **out);
bool memfs_same_fs(struct vfs_inode *a, struct vfs_inode *b);
nlink_t memfs_nlink(struct vfs_inode *ino);
/* The path ("a/b") under memfs directory ROOT at which INO is linked (malloc'd into *PATH), or
 * -ENOENT. */
int memfs_path_of(struct vfs_inode *root, struct vfs_inode *ino, char **path);
/* The inode at PATH under memfs directory ROOT (a new reference), or a negative errno. */
int memfs_walk(struct vfs_inode *root, const char *path, struct vfs_inode **out);

/* overlay.c */
/* The root inode of the overlay root filesystem, or NULL (borrowed). */
struct vfs_inode *ovl_root_inode(void);
bool ovl_is(struct vfs_inode *ino);
struct vfs_inode *ovl_upper(struct vfs_inode *ino);
struct vfs_inode *ovl_lower(struct vfs_inode *ino);
/* The overlay's st_dev and its upper layer. */
int ovl_save(struct enc *e, struct vfs_inode *root);
/* Rebuilds the overlay over host directory ROOTFS; *ROOT gets its root dentry. */
int ovl_load(struct dec *d, const char *rootfs, struct vfs_dentry **root);
/* An overlay inode named NAME under overlay directory PARENT made of UPPER and LOWER (either
 * may be NULL, not both; their references are taken over, also on failure): an unlinked
 * name held open, rebuilt. */
int ovl_inode_detached(struct vfs_inode *parent, const char *name, struct vfs_inode *upper,
		       struct vfs_inode *lower, struct vfs_inode **out);

/* hostfs.c: the path of INO under its host root ("/a/b"; "" for the root), and the reverse. */
int hostfs_path_of(struct vfs_inode *ino, char **path);
int hostfs_walk(struct vfs_inode *root, const char *path, struct vfs_inode **out);

/* synth.c and kernfs.c: the identity of the filesystem INO belongs to (the st_dev and the time
 * its nodes are dated from, and for kernfs its type), read for a checkpoint and given back to
 * the filesystem rebuilt by a restore. -EINVAL if INO is not of that kind. */
int vfs_synth_identity(struct vfs_inode *ino, dev_t *dev, struct timespec *built);
int vfs_synth_set_identity(struct vfs_inode *ino, dev_t dev, struct timespec built);
int kernfs_identity(struct vfs_inode *ino, const char **type, dev_t *dev, struct timespec *built);
int kernfs_set_identity(struct vfs_inode *ino, dev_t dev, struct timespec built);

/* The kinds of open files each filesystem defines (vfs/save.h), listed in save.c. */
extern const struct vfs_file_kind vfs_path_file_kind;
extern const struct vfs_file_kind memfs_reg_kind, memfs_dir_kind;
extern const struct vfs_file_kind ovl_dir_kind;
extern const struct vfs_file_kind hostfs_reg_kind, hostfs_dir_kind;
extern const struct vfs_file_kind devfs_null_kind, devfs_zero_kind, devfs_full_kind,
    devfs_random_kind, devfs_urandom_kind;
extern const struct vfs_file_kind synth_dir_kind;
extern const struct vfs_file_kind kernfs_file_kind, kernfs_dir_kind;
/* save.c: the LOAD of kinds that keep nothing of their own: F is opened again on its
 * restored dentry's inode with its saved flags. */
int vfs_file_reopen(struct dec *d, struct vfs_file *f);
/* The SAVE of kinds with nothing of their own to save. */
int vfs_file_save_none(struct enc *e, struct vfs_file *f);
int vfs_file_load_none(struct dec *d, struct vfs_file *f);
/* Checkpoint kinds of the files outside the tree (vfs/save.c's table; vfs/save.h). */
struct vfs_file_kind;
extern const struct vfs_file_kind vfs_pipe_kind;    /* pipe.c: pipes and FIFOs */
extern const struct vfs_file_kind vfs_eventfd_kind; /* eventfd.c */
extern const struct vfs_file_kind vfs_epoll_kind;   /* epoll.c */
extern const struct vfs_file_kind vfs_unix_kind;    /* unix.c */
extern const struct vfs_file_kind vfs_inet_kind;    /* inet.c: the loopback network */
extern const struct vfs_file_kind vfs_netlink_kind; /* netlink.c */
extern const struct vfs_file_kind vfs_hostnet_kind; /* hostnet.c: refuses a checkpoint */
extern const struct vfs_file_kind vfs_hostfd_kind;  /* hostfd.c: the sandbox's stdio */

#endif
