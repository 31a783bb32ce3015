/* sentry/tty.h — controlling terminals and job control (sentry/tty.c), for the sandbox's own
 * terminal and pseudo-terminals alike. */
#ifndef SENTRY_TTY_H
#define SENTRY_TTY_H

#include <sys/types.h>

struct task;
struct vfs_file;

/* Gives vfs/pty.c the kernel's hooks; before the first task. */
void tty_init(void);
/* TIOCGPGRP, TIOCSPGRP, TIOCGSID, TIOCSCTTY (VAL its argument), TIOCNOTTY on terminal F for T:
 * ARG is the Sentry buffer of the request's argument. -ENOTTY if F is no terminal. */
long tty_ioctl_jobctl(struct task *t, struct vfs_file *f, unsigned int cmd, void *arg, long val);
/* TIOCGPTPEER: a descriptor of pty master F's slave opened with FLAGS. */
long tty_ioctl_peer(struct task *t, struct vfs_file *f, long flags);
/* A session leader exits: its pseudo-terminal (if any) controls no session any more, its
 * foreground group hung up. */
void tty_session_leader_exit(struct task *leader);
/* /proc/PID/stat's tty_nr and tpgid for a process of session SID. */
void tty_proc_info(pid_t sid, int *tty_nr, pid_t *tpgid);

#endif
