/* vfs/inotify.h — inotify (man 7 inotify): instances as files of their own kind, watches on
 * dentries, and the fsnotify hooks through which the VFS reports what it does to the names and
 * files it manages. Each operation calls one hook where the VFS performs it (vfs/namei.c,
 * vfs/file.c, vfs/dentry.c), or for read(2) and write(2), whose data moves in the Sentry's
 * syscall layer, where that layer calls a file's read and write ops (sentry/sys_file.c). Every
 * hook returns at once while no watch exists. */
#ifndef VFS_INOTIFY_H
#define VFS_INOTIFY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "vfs/vfs.h"

struct vfs_file_kind;

/* inotify_init1(2): a new instance. FLAGS may hold O_NONBLOCK (the file's); UID is whose
 * instance it is for max_user_instances (-EMFILE past it) and max_user_watches. */
int vfs_inotify_new(int flags, uid_t uid, struct vfs_file **out);
bool vfs_is_inotify(struct vfs_file *f);
/* inotify_add_watch(2) on instance F for the object D names (resolved and its read permission
 * checked by the caller): the watch descriptor, the same one for an inode already watched
 * (its mask replaced, or extended with IN_MASK_ADD; -EEXIST with IN_MASK_CREATE), or -ENOSPC
 * past max_user_watches. MASK is checked by the caller for Linux's EINVALs. */
int vfs_inotify_add_watch(struct vfs_file *f, struct vfs_dentry *d, uint32_t mask);
/* inotify_rm_watch(2): queues IN_IGNORED for WD; -EINVAL if F has no such watch. */
int vfs_inotify_rm_watch(struct vfs_file *f, int wd);
/* Calls FN for each watch of instance F, newest first (/proc/PID/fdinfo), with its descriptor,
 * its mask (events and IN_ONESHOT/IN_EXCL_UNLINK) and the watched name's dentry. */
void vfs_inotify_foreach_watch(struct vfs_file *f,
			       void (*fn)(int wd, uint32_t mask, struct vfs_dentry *d, void *arg),
			       void *arg);
/* The limits of /proc/sys/fs/inotify: 0 max_queued_events, 1 max_user_instances, 2
 * max_user_watches. -EINVAL for a negative value. Instances take max_queued_events when made. */
int vfs_inotify_set_limit(int which, long value);

/* The hooks (Linux's fsnotify_*). F and D are what the operation acted on. */
void vfs_notify_open(struct vfs_file *f);
void vfs_notify_close(struct vfs_file *f);
void vfs_notify_access(struct vfs_file *f); /* read, getdents, the input of sendfile */
void vfs_notify_modify(struct vfs_file *f); /* write, fallocate, the output of sendfile */
/* NAME was made in DIR (mknod, mkdir, symlink, open with O_CREAT, a Unix socket's bind). */
void vfs_notify_create(struct vfs_dentry *dir, const char *name, bool isdir);
/* OLD got the new name NAME in DIR. */
void vfs_notify_link(struct vfs_dentry *old, struct vfs_dentry *dir, const char *name);
/* VICTIM (unhashed, referenced once by the caller) was removed from DIR as NAME. */
void vfs_notify_remove(struct vfs_dentry *dir, struct vfs_dentry *victim, const char *name,
		       bool isdir);
/* SRC went from ODIR/ONAME to NDIR/NNAME, replacing TGT, or exchanged with it. */
void vfs_notify_rename(struct vfs_dentry *odir, const char *oname, struct vfs_dentry *src,
		       struct vfs_dentry *ndir, const char *nname, struct vfs_dentry *tgt,
		       bool exchange);
/* The VFS_ATTR_* bits VALID were applied to D (Linux's fsnotify_change). */
void vfs_notify_setattr(struct vfs_dentry *d, unsigned int valid);
/* A reference to unhashed dentry D is about to be dropped: when only watches hold it now and
 * its inode is gone, the watches get IN_DELETE_SELF and IN_IGNORED (Linux's
 * fsnotify_inoderemove, at the last reference of a removed name). */
void vfs_notify_dentry_put(struct vfs_dentry *d);

/* How an instance is checkpointed (vfs/save.c's table of kinds). */
extern const struct vfs_file_kind vfs_inotify_kind;

#endif
