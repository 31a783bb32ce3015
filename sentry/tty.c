/* Controlling terminals and job control (man 4 tty_ioctl, credentials(7)): one model for the
 * sandbox's own terminal and for pseudo-terminals (vfs/pty.c). A terminal's state is a struct
 * vfs_tty_ctl — the session it controls and that session's foreground group; a session's
 * controlling terminal is the terminal whose state names it, so processes carry no link of
 * their own. Here are the ioctls that read and change it, the rules Linux applies to a
 * background group's reads and writes, and the hooks through which a pair signals groups. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <linux/capability.h>
#include <sys/ioctl.h>

#include "sentry/caps.h"
#include "sentry/fdtable.h"
#include "sentry/kernel.h"
#include "sentry/sched.h"
#include "sentry/signal.h"
#include "sentry/syscalls.h"
#include "sentry/task.h"
#include "sentry/clock.h"
#include "sentry/tty.h"
#include "vfs/pty.h"

static void tty_signal_pgrp(pid_t pgrp, int sig)
{
	siginfo_t si = {.si_signo = sig, .si_code = SI_KERNEL};

	for_each_process(p)
		if (!p->zombie && p->pgid == pgrp)
			signal_send_process(p, sig, &si);
}

/* Linux's tty_vhangup of a session's terminal: the controlling process and the foreground
 * group get SIGHUP and SIGCONT. */
static void hangup(pid_t sid, pid_t pgrp)
{
	siginfo_t si = {.si_code = SI_KERNEL};

	for_each_process(p)
		if (!p->zombie && (p->tgid == sid || (pgrp && p->pgid == pgrp))) {
			si.si_signo = SIGHUP;
			signal_send_process(p, SIGHUP, &si);
			si.si_signo = SIGCONT;
			signal_send_process(p, SIGCONT, &si);
		}
}

/* The sandbox's terminal's state lives in the kernel (kernel.tty_sid, tty_fg_pgid). */
static bool host_tty_controls(pid_t sid)
{
	return sid && kernel.tty_sid == sid;
}

static bool session_has_ctty(pid_t sid)
{
	return host_tty_controls(sid) || vfs_pty_of_session(sid, NULL);
}

static bool sig_ignored_or_blocked(struct task *t, int sig)
{
	return (t->sigmask & SIGBIT(sig)) ||
	       t->sighand->sa->act[sig - 1].handler == (uint64_t)SIG_IGN;
}

/* POSIX's orphaned process group (Linux's will_become_orphaned_pgrp): no member has a parent
 * in another group of the same session (init's children do not count). Nobody would be
 * there to continue it, so it is not stopped. */
static bool pgrp_orphaned(pid_t pgrp, pid_t sid)
{
	for_each_process(p)
		if (!p->zombie && p->pgid == pgrp && p->parent && p->parent->tgid != 1 &&
		    p->parent->pgid != pgrp && p->parent->sid == sid)
			return false;
	return true;
}

/* Linux's __tty_check_change: a process of a background group of the terminal's session that
 * reads it (SIGTTIN) or writes it under TOSTOP (SIGTTOU) stops its group, unless it ignores
 * the signal (a read then fails with EIO, a write goes on) or its group is orphaned (EIO). */
static int job_check(const struct vfs_tty_ctl *c, int sig)
{
	struct task *t = kernel.current;

	if (!t || !c->sid || c->sid != t->sid || !c->pgrp || t->pgid == c->pgrp)
		return 0;
	if (sig_ignored_or_blocked(t, sig))
		return sig == SIGTTIN ? -EIO : 0;
	if (pgrp_orphaned(t->pgid, t->sid))
		return -EIO;
	tty_signal_pgrp(t->pgid, sig);
	return -ERESTARTSYS;
}

/* Linux's tty_open_proc_set_tty: a session leader without a controlling terminal takes one
 * that controls no session by opening it. */
static void open_ctty(struct vfs_tty_ctl *c)
{
	struct task *t = kernel.current;

	if (!t || t->sid != t->tgid || c->sid || session_has_ctty(t->sid))
		return;
	c->sid = t->sid;
	c->pgrp = t->pgid;
}

static pid_t current_sid(void)
{
	return kernel.current ? kernel.current->sid : 0;
}

static void current_cred(uid_t *uid, gid_t *gid)
{
	*uid = kernel.current ? kernel.current->euid : 0;
	*gid = kernel.current ? kernel.current->egid : 0;
}

/* VTIME: a deadline of the syscall, set on its first call. */
static bool read_timeout(unsigned int decisecs)
{
	struct task *t = kernel.current;
	struct timespec now = mono_now();

	if (!t)
		return true;
	if (!t->blk.retry) {
		struct timespec d = {decisecs / 10, (long)(decisecs % 10) * 100000000L};
		t->blk.deadline = ts_add(now, d);
	} else if (ts_cmp(now, t->blk.deadline) >= 0) {
		return true;
	}
	task_wait_until(t, &t->blk.deadline);
	return false;
}

static const struct vfs_pty_hooks pty_hooks = {
    .signal_pgrp = tty_signal_pgrp,
    .hangup = hangup,
    .job_check = job_check,
    .open_ctty = open_ctty,
    .current_sid = current_sid,
    .current_cred = current_cred,
    .read_timeout = read_timeout,
};

void tty_init(void)
{
	vfs_pty_set_hooks(&pty_hooks);
}

/* The job control ioctls on terminal state C, Linux's tty_jobctrl_ioctl; MASTER: F is a pty
 * master, which answers for its slave without being anyone's controlling terminal. */
static long jobctl(struct task *t, struct vfs_tty_ctl *c, bool master, unsigned int cmd, void *arg,
		   long val)
{
	bool ours = c->sid && c->sid == t->sid;

	switch (cmd) {
	case TIOCGPGRP:
		if (!master && !ours)
			return -ENOTTY;
		*(pid_t *)arg = c->pgrp;
		return 0;
	case TIOCGSID:
		if ((!master && !ours) || !c->sid)
			return -ENOTTY;
		*(pid_t *)arg = c->sid;
		return 0;
	case TIOCSPGRP: {
		pid_t pgid = *(pid_t *)arg;
		bool exists = false;
		int err;
		if (ours && (err = job_check(c, SIGTTOU)))
			return err;
		if (!ours)
			return -ENOTTY;
		if (pgid < 0)
			return -EINVAL;
		for_each_task(o)
			exists |= !o->zombie && o->pgid == pgid && o->sid == t->sid;
		if (!exists)
			return -EPERM;
		c->pgrp = pgid;
		return 0;
	}
	case TIOCSCTTY:
		if (ours)
			return 0;
		if (t->sid != t->tgid || session_has_ctty(t->sid))
			return -EPERM;
		/* Another session's terminal is only taken by force (ARG 1, CAP_SYS_ADMIN). */
		if (c->sid && !(val == 1 && caps_has(t, CAP_SYS_ADMIN)))
			return -EPERM;
		c->sid = t->sid;
		c->pgrp = t->pgid;
		return 0;
	case TIOCNOTTY:
		if (!ours)
			return -ENOTTY;
		/* Linux's disassociate_ctty: the leader gives the terminal up and its foreground
		 * group is hung up. Another process's giving it up is not recorded: a session's
		 * processes share one controlling terminal here. */
		if (t->sid == t->tgid) {
			pid_t pgrp = c->pgrp;
			c->sid = c->pgrp = 0;
			if (pgrp > 0) {
				tty_signal_pgrp(pgrp, SIGHUP);
				tty_signal_pgrp(pgrp, SIGCONT);
			}
		}
		return 0;
	}
	return -ENOTTY;
}

long tty_ioctl_jobctl(struct task *t, struct vfs_file *f, unsigned int cmd, void *arg, long val)
{
	struct vfs_tty_ctl *c, host;
	bool master = false;
	char buf[64];
	long r;

	if (vfs_is_pty(f, &master))
		return jobctl(t, vfs_pty_ctl(f), master, cmd, arg, val);
	if (!f->ops->ioctl || f->ops->ioctl(f, TCGETS, buf) != 0)
		return -ENOTTY;
	/* The sandbox's terminal. */
	host = (struct vfs_tty_ctl){kernel.tty_sid, kernel.tty_fg_pgid};
	c = &host;
	r = jobctl(t, c, false, cmd, arg, val);
	kernel.tty_sid = host.sid;
	kernel.tty_fg_pgid = host.pgrp;
	return r;
}

long tty_ioctl_peer(struct task *t, struct vfs_file *f, long flags)
{
	struct vfs_file *peer;
	int err, fd;

	if (!vfs_is_pty(f, NULL))
		return -ENOTTY;
	if ((err = vfs_pty_open_peer(f, (int)flags, &peer)))
		return err;
	fd = fdtable_install(t->files, peer, flags & O_CLOEXEC, 0, task_nofile_limit(t));
	if (fd < 0)
		vfs_file_put(peer);
	return fd;
}

void tty_session_leader_exit(struct task *leader)
{
	struct vfs_tty_ctl *c = vfs_pty_of_session(leader->sid, NULL);

	/* Linux's disassociate_ctty(1): the foreground group is hung up and the terminal
	 * controls no session any more. */
	if (!c || leader->tgid != leader->sid)
		return;
	pid_t pgrp = c->pgrp;
	siginfo_t si = {.si_code = SI_KERNEL};
	c->sid = c->pgrp = 0;
	for_each_process(p)
		if (p != leader && !p->zombie && pgrp > 0 && p->pgid == pgrp) {
			si.si_signo = SIGHUP;
			signal_send_process(p, SIGHUP, &si);
			si.si_signo = SIGCONT;
			signal_send_process(p, SIGCONT, &si);
		}
}

void tty_proc_info(pid_t sid, int *tty_nr, pid_t *tpgid)
{
	int index;
	struct vfs_tty_ctl *c = vfs_pty_of_session(sid, &index);

	if (c) {
		/* new_encode_dev of the slave's 136 + N / 256 : N % 256 */
		*tty_nr = (index % 256) | ((136 + index / 256) << 8);
		*tpgid = c->pgrp;
		return;
	}
	*tpgid = sid == kernel.tty_sid ? kernel.tty_fg_pgid : -1;
	*tty_nr = sid == kernel.tty_sid && kernel.tty_sid ? (136 << 8) : 0;
}
