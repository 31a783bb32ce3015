/* Advisory file locks: POSIX record locks (owned by a process), OFD record locks and flock(2)
 * locks (owned by an open file description). Waiters park on one queue woken by every
 * unlock and retry. */
#ifndef SENTRY_LOCKS_H
#define SENTRY_LOCKS_H

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

#endif
