/* Advisory file locks: POSIX record locks (owned by a process), OFD record locks and flock(2)
 * locks (owned by an open file description). Waiters park on one queue woken by every
 * unlock and retry. */
#ifndef SENTRY_LOCKS_H
#define SENTRY_LOCKS_H

struct dec;
struct enc;
struct task;
struct vfs_file;

/* fcntl F_GETLK/F_SETLK/F_SETLKW and the F_OFD_ forms; ARG is the guest's struct flock. */
long locks_fcntl(struct task *t, struct vfs_file *f, int cmd, unsigned long arg);
long locks_flock(struct task *t, struct vfs_file *f, int op);
/* T closes a descriptor of F: its process's POSIX locks on the file go; when this is the last
 * reference to F, so do F's OFD and flock locks. */
void locks_on_close(struct task *t, struct vfs_file *f);
/* The process of LEADER is gone: all its POSIX locks go. */
void locks_on_exit(struct task *leader);

/* Checkpoint: every lock held, the files they are on as CK_FILE references (so call
 * locks_save before the checkpoint saves the queued files) and POSIX owners by tgid.
 * locks_load runs once every file and task is loaded, in a Sentry holding no lock; it returns
 * 0, or a negative errno with D's error set (the locks it made are dropped again). A POSIX
 * lock on an inode no process has a descriptor of cannot be saved. */
int locks_save(struct enc *e);
int locks_load(struct dec *d);

#endif
