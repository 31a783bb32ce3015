/* pidfd: files that name a process (pidfd.c). */
#ifndef SENTRY_PIDFD_H
#define SENTRY_PIDFD_H

#include <sys/types.h>

struct task;
struct vfs_file;

/* A process exited or was reaped: pidfd pollers look again. */
void pidfd_notify(void);
/* The pid F names: 0, -EBADF if F is not a pidfd, -ESRCH if its process was reaped (*PID is
 * set then too). */
int pidfd_target(struct vfs_file *f, pid_t *pid);
/* A new pidfd (a reference) naming the process LEADER leads; FLAGS: O_NONBLOCK. */
int pidfd_new(struct task *leader, int flags, struct vfs_file **out);
/* Makes pidfds checkpointable (vfs_file_kind_register): once at start. */
int pidfd_register_kind(void);

#endif
