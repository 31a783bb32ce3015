/* vfs/save.h — the VFS's part of a checkpoint (DESIGN.md §7): the mount table and the contents
 * of every mounted filesystem, dentries referred to from outside (cwd, root, an open file,
 * an executable), and open file descriptions of every kind. The record layouts are written with
 * state/codec.h and documented in docs/image-format.md.
 *
 * Each *_load returns the object with one reference that belongs to the restore (dropped with
 * the matching *_drop once every object is loaded), or NULL with the decoder's error set. */
#ifndef VFS_SAVE_H
#define VFS_SAVE_H

#include "state/codec.h"
#include "vfs/vfs.h"

/* The mount table and every filesystem that is mounted (memfs trees with their data as
 * CK_MOBJ references, the overlay's upper layer and whiteouts, the lower layer by host path,
 * devfs, and procfs/sysfs as unpopulated). */
int vfs_save(struct enc *e);

/* Filesystems the VFS cannot build by itself (procfs and sysfs need the kernel): MAKE_FS makes
 * a new one of FS_TYPE ("proc", "sysfs") and returns its root dentry (a reference). */
typedef int (*vfs_make_fs_fn)(const char *fs_type, struct vfs_dentry **root);

/* Bind mounts are host trees: a restore opens HOST_PATH again (FLAGS: MS_RDONLY for a
 * read-only one; GUEST_PATH is where it is mounted) through OPEN, which the Sentry sets (it knows
 * how a confined Sentry reaches the host), and mounts the root it returns (a reference). Without
 * one, a bind mount in an image fails its restore. */
typedef int (*vfs_open_bind_fn)(const char *host_path, const char *guest_path, unsigned long flags,
				struct vfs_dentry **root);
void vfs_load_set_bind_opener(vfs_open_bind_fn open);

/* Rebuilds what vfs_save saved in a Sentry whose VFS is empty, with ROOTFS as the overlay's
 * lower layer (the caller has checked it is the saved one). *ROOT gets the root dentry (the
 * caller's reference). Returns 0 or a negative errno with D's error set. */
int vfs_load(struct dec *d, const char *rootfs, vfs_make_fs_fn make_fs, struct vfs_dentry **root);
/* Ends what vfs_load began: CK_DENTRY loads find the root filesystem through a reference
 * vfs_load keeps until this is called, once every dentry and file is loaded (or the restore
 * has failed). */
void vfs_load_finish(void);

/* CK_DENTRY */
int vfs_dentry_save(struct enc *e, const void *dentry);
void *vfs_dentry_load(struct dec *d);
void vfs_dentry_drop(void *dentry);

/* The host file of the rootfs that saved dentry DENTRY shows, for the restore to check that
 * it has not changed: its path under the rootfs ("/etc/passwd", malloc'd in *PATH) and its
 * stat now. Returns 1 if there is one, 0 if DENTRY shows nothing of the lower layer (a file
 * of the upper layer or of another filesystem), or a negative errno. */
int vfs_dentry_lower_file(const void *dentry, char **path, struct stat *st);

/* CK_FILE: an open file description, whatever its kind. */
int vfs_file_save(struct enc *e, const void *file);
void *vfs_file_load(struct dec *d);
void vfs_file_drop(void *file);

/* CK_FILE_LINKS: a file's references to other files (an epoll's interest list, descriptors in
 * flight in a socket's queue), loaded after every file. vfs_file_save queues a file whose kind
 * has links (save_links) for this section, and queues the files those links name at once, so
 * the links never add a file to a CK_FILE section already written. Load returns the file
 * (borrowed). */
int vfs_file_links_save(struct enc *e, const void *file);
void *vfs_file_links_load(struct dec *d);

/* Every kind of open file says how it is saved: a kind is found by its ops table. The common
 * fields (flags, offset, dentry) are saved by vfs_file_save; SAVE writes the rest, and LOAD
 * rebuilds F from it, F's common fields already loaded and F->ops set to OPS (LOAD may change
 * it); a failed LOAD frees what it made and returns non-zero. vfs/ registers its own kinds
 * (vfs/save.c's table); the Sentry's (signalfd, timerfd) call vfs_file_kind_register before a
 * checkpoint or a restore. NAME is what the image records. */
struct vfs_file_kind {
	const char *name;
	const struct vfs_file_ops *ops;
	int (*save)(struct enc *e, struct vfs_file *f);
	int (*load)(struct dec *d, struct vfs_file *f);
	/* Optional, for kinds whose files refer to other files (an epoll's targets, a socket's
	 * peer and the files in flight in its queue): SAVE_LINKS writes those references in F's
	 * CK_FILE_LINKS record (vfs_file_save queues it), which LOAD_LINKS reads once every file
	 * is loaded. A failed
	 * LOAD_LINKS leaves F whole (what it linked is undone by F's release) and returns
	 * non-zero. */
	int (*save_links)(struct enc *e, struct vfs_file *f);
	int (*load_links)(struct dec *d, struct vfs_file *f);
};
/* -EEXIST if a kind of that name or ops is registered already (harmless), -ENOMEM. */
int vfs_file_kind_register(const struct vfs_file_kind *kind);

#endif
