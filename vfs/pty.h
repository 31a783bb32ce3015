/* vfs/pty.h — pseudo-terminals (man 4 pts, man 3 posix_openpt): opening /dev/ptmx makes a
 * master and slave pair whose slave is /dev/pts/N (136:N), joined by a line discipline
 * (vfs/tty_ldisc.h). Sessions, process groups and signals are the kernel's: the pair only keeps
 * which session it controls and its foreground group (struct vfs_tty_ctl), and asks the kernel
 * through hooks whenever a rule of job control applies (sentry/tty.c implements them). */
#ifndef VFS_PTY_H
#define VFS_PTY_H

#include <stdbool.h>
#include <sys/types.h>

#include "vfs/vfs.h"

struct enc;
struct dec;
struct vfs_synth_dynamic;

/* Job control state of a terminal: the session it is the controlling terminal of and that
 * session's foreground process group (0 when it controls none). The sandbox's own terminal
 * has one too (sentry/tty.c). */
struct vfs_tty_ctl {
	pid_t sid, pgrp;
};

/* What the line discipline asks of the kernel, for the task whose syscall is being served. */
struct vfs_pty_hooks {
	/* ISIG's characters and TIOCSWINSZ: SIG to every process of group PGRP. */
	void (*signal_pgrp)(pid_t pgrp, int sig);
	/* The master is gone: the controlling process of session SID gets SIGHUP and SIGCONT,
	 * and so does the foreground group PGRP (Linux's tty_vhangup). */
	void (*hangup)(pid_t sid, pid_t pgrp);
	/* A read (SIG SIGTTIN) or write (SIGTTOU, asked only under TOSTOP) of a slave whose
	 * session is C's: 0 to go on, or what the syscall ends with (-EIO, -ERESTARTSYS with the
	 * signal sent to the caller's group), as Linux's tty_check_change. */
	int (*job_check)(const struct vfs_tty_ctl *c, int sig);
	/* A slave opened without O_NOCTTY: the caller's session takes C if it is its leader's,
	 * has no controlling terminal and C controls no session. */
	void (*open_ctty)(struct vfs_tty_ctl *c);
	/* The caller's session, credentials (the slave node's owner) and, for VTIME, a timer:
	 * READ_TIMEOUT arms a wait of DECISECS tenths of a second on the first call of a syscall
	 * and returns true once it has run out on a retry. */
	pid_t (*current_sid)(void);
	void (*current_cred)(uid_t *uid, gid_t *gid);
	bool (*read_timeout)(unsigned int decisecs);
};
void vfs_pty_set_hooks(const struct vfs_pty_hooks *hooks);

/* The open of /dev/ptmx and /dev/pts/ptmx: F becomes the master of a new, locked pair. */
int vfs_ptmx_open(struct vfs_inode *ino, struct vfs_file *f, int flags);
/* devpts's part of /dev/pts: one node per live pair. */
extern const struct vfs_synth_dynamic vfs_devpts_dynamic;

/* True if F is a master (MASTER) or a slave of a pair. */
bool vfs_is_pty(struct vfs_file *f, bool *master);
/* The job control state of F's pair, or NULL if F is not a pty. */
struct vfs_tty_ctl *vfs_pty_ctl(struct vfs_file *f);
/* The pair that controls session SID: its state, and its number in *INDEX; NULL if none. */
struct vfs_tty_ctl *vfs_pty_of_session(pid_t sid, int *index);
/* TIOCGPTPEER: a new open of master F's slave with FLAGS, without a path lookup; -EIO while
 * locked, -EINVAL unless F is a master. */
int vfs_pty_open_peer(struct vfs_file *f, int flags, struct vfs_file **out);
/* /dev/tty of a task whose session a pair controls: F becomes an open of that slave.
 * -ENOENT when no pair controls the caller's session. */
int vfs_pty_open_ctty(struct vfs_file *f, int flags);

/* Checkpoint: every pair (termios, queues, lock, job control, node owner) in the devfs mount
 * record, so that the /dev/pts/N dentries of the image resolve before the files load; files
 * name their pair by number. */
int vfs_pty_save_all(struct enc *e);
int vfs_pty_load_all(struct dec *d);
/* True while any pair lives (a checkpoint without a devfs to carry them refuses). */
bool vfs_pty_any(void);
/* The end of a load (vfs_load_finish): frees the pairs no loaded file holds. */
void vfs_pty_drop_unused(void);
extern const struct vfs_file_kind vfs_pty_master_kind, vfs_pty_slave_kind;

#endif
