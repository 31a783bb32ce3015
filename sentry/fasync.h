/* Asynchronous I/O signals (fcntl(2) F_SETOWN & co, O_ASYNC, FIOASYNC): while a file has
 * O_ASYNC and an owner, its becoming readable or writable sends SIGIO, or F_SETSIG's signal
 * with si_code POLL_IN, POLL_OUT..., si_band and si_fd, to the owner: a thread, a process or
 * a process group. The owner is kept with the open file (struct vfs_fasync) and saved. */
#ifndef SENTRY_FASYNC_H
#define SENTRY_FASYNC_H

struct task;
struct vfs_file;

/* F_SETOWN, F_GETOWN, F_SETOWN_EX, F_GETOWN_EX, F_SETSIG, F_GETSIG on F (T's descriptor FD). */
long fasync_fcntl(struct task *t, struct vfs_file *f, int fd, int cmd, unsigned long arg);
/* F's O_ASYNC may have changed (F_SETFL, FIOASYNC) through T's descriptor FD: the file's
 * queue is watched exactly while it is set. */
int fasync_flags_changed(struct vfs_file *f, int fd);
/* Sends the signals the watched files asked for since the last call (the loop's, outside
 * any wake-up). */
void fasync_deliver(void);
/* After a restore: the loaded files with O_ASYNC watch their queues again. */
void fasync_restore(void);

#endif
