/* Signal state syscalls. Handlers and masks are kept per task; delivery comes with the
 * processes milestone. */
#include <errno.h>
#include <linux/capability.h>
#include <limits.h>
#include <signal.h>

#include "sentry/mm.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/kernel.h"
#include "fs-proc/procfs.h"
#include "sentry/pidfd.h"
#include "sentry/sched.h"
#include "sentry/signal.h"
#include "sentry/task.h"
#include "sentry/caps.h"
#include "platform/platform.h"
#include <string.h>
#include <sys/user.h>

#include "common/units.h"

#define KNOWN_SA_FLAGS                                                                             \
	(SA_NOCLDSTOP | SA_NOCLDWAIT | SA_SIGINFO | SA_ONSTACK | SA_RESTART | SA_NODEFER |         \
	 SA_RESETHAND | 0x800 /* SA_EXPOSE_TAGBITS */ | 0x04000000 /* SA_RESTORER */)

long sys_rt_sigaction(struct task *t, const unsigned long *a)
{
	int sig = arg_int(a, 0);
	struct ksigaction act;

	if (a[3] != sizeof(uint64_t))
		return -EINVAL;
	if (sig < 1 || sig > NSIG_GUEST)
		return -EINVAL;
	if (a[1] && (sig == SIGKILL || sig == SIGSTOP))
		return -EINVAL;
	if (a[1] && copy_in(t->mm, &act, a[1], sizeof(act)))
		return -EFAULT;
	if (a[2] && copy_out(t->mm, a[2], &t->sighand->sa->act[sig - 1], sizeof(act)))
		return -EFAULT;
	if (a[1]) {
		if (sighand_own(t->sighand))
			return -ENOMEM;
		act.mask &= ~UNBLOCKABLE;
		act.flags &= KNOWN_SA_FLAGS; /* unknown bits read back as clear, as on Linux */
		t->sighand->sa->act[sig - 1] = act;
		sighand_changed(t->sighand);
		signal_flush_ignored(t, sig);
	}
	return 0;
}

long sys_rt_sigprocmask(struct task *t, const unsigned long *a)
{
	uint64_t set, old = t->sigmask;

	if (a[3] != sizeof(uint64_t))
		return -EINVAL;
	if (a[1]) {
		if (copy_in(t->mm, &set, a[1], sizeof(set)))
			return -EFAULT;
		switch (arg_int(a, 0)) {
		case SIG_BLOCK:
			t->sigmask |= set;
			break;
		case SIG_UNBLOCK:
			t->sigmask &= ~set;
			break;
		case SIG_SETMASK:
			t->sigmask = set;
			break;
		default:
			return -EINVAL;
		}
		t->sigmask &= ~UNBLOCKABLE;
	}
	if (a[2] && copy_out(t->mm, a[2], &old, sizeof(old))) {
		t->sigmask = old;
		return -EFAULT;
	}
	return 0;
}

static void user_info(struct task *t, int sig, siginfo_t *si, int code)
{
	memset(si, 0, sizeof(*si));
	si->si_signo = sig;
	si->si_code = code;
	si->si_pid = t->tgid;
	si->si_uid = t->uid;
}

/* check_kill_permission: T may signal P if it is in the same process, if either of T's real
 * and effective uids is P's real or saved uid, with CAP_KILL, or for SIGCONT in its session. */
static long may_signal(struct task *t, struct task *p, int sig)
{
	if (p->tgid == t->tgid || t->euid == p->suid || t->euid == p->uid || t->uid == p->suid ||
	    t->uid == p->uid || caps_has(t, CAP_KILL) || (sig == SIGCONT && p->sid == t->sid))
		return 0;
	return -EPERM;
}

/* Sends SIG to every process in group PGID that T may signal: 0 if it could signal one,
 * else the last refusal, or -ESRCH if the group is empty. */
static long kill_pgrp(struct task *t, pid_t pgid, int sig, const siginfo_t *si)
{
	long ret = -ESRCH;
	bool sent = false;

	for_each_process(p)
		if (p->pgid == pgid) {
			long err = may_signal(t, p, sig);
			if (err) {
				ret = err;
				continue;
			}
			sent = true;
			if (sig && !p->zombie)
				signal_send_process(p, sig, si);
		}
	return sent ? 0 : ret;
}

static long do_kill(struct task *t, pid_t pid, int sig, const siginfo_t *si)
{
	if (sig < 0 || sig > NSIG_GUEST)
		return -EINVAL;
	if (pid > 0) {
		struct task *p = task_by_tid(pid);
		long err;
		if (!p)
			return -ESRCH;
		if ((err = may_signal(t, p->group_leader, sig)))
			return err;
		if (sig && !p->zombie) /* a zombie still exists: the signal just has no effect */
			signal_send_process(p->group_leader, sig, si);
		return 0;
	}
	if (pid == 0)
		return kill_pgrp(t, t->pgid, sig, si);
	if (pid == -1) {
		/* Everyone but init and the caller's own process; refusals are not errors. */
		bool found = false;
		for_each_process(p)
			if (!p->zombie && p->tgid != 1 && p->tgid != t->tgid) {
				found = true;
				if (sig && !may_signal(t, p, sig))
					signal_send_process(p, sig, si);
			}
		return found ? 0 : -ESRCH;
	}
	if (pid == INT_MIN)
		return -ESRCH;
	return kill_pgrp(t, -pid, sig, si);
}

long sys_kill(struct task *t, const unsigned long *a)
{
	siginfo_t si;

	user_info(t, arg_int(a, 1), &si, SI_USER);
	return do_kill(t, arg_int(a, 0), arg_int(a, 1), &si);
}

static long do_tkill(struct task *t, pid_t tgid, pid_t tid, int sig, const siginfo_t *si)
{
	if (sig < 0 || sig > NSIG_GUEST || tid <= 0)
		return -EINVAL;
	struct task *p = task_by_tid(tid);
	if (!p || p->zombie || (tgid > 0 && p->tgid != tgid))
		return -ESRCH;
	long err = may_signal(t, p, sig);
	if (err)
		return err;
	if (sig)
		signal_send_thread(p, sig, si);
	return 0;
}

long sys_tkill(struct task *t, const unsigned long *a)
{
	siginfo_t si;

	user_info(t, arg_int(a, 1), &si, SI_TKILL);
	return do_tkill(t, -1, arg_int(a, 0), arg_int(a, 1), &si);
}

long sys_tgkill(struct task *t, const unsigned long *a)
{
	siginfo_t si;

	if (arg_int(a, 0) <= 0)
		return -EINVAL;
	user_info(t, arg_int(a, 2), &si, SI_TKILL);
	return do_tkill(t, arg_int(a, 0), arg_int(a, 1), arg_int(a, 2), &si);
}

/* Info from user space may not pretend to come from the kernel or kill(2), unless it is sent
 * to the caller itself. */
static long queueinfo_in(struct task *t, pid_t target, int sig, uintptr_t addr, siginfo_t *si)
{
	if (copy_in(t->mm, si, addr, sizeof(*si)))
		return -EFAULT;
	if ((si->si_code >= 0 || si->si_code == SI_TKILL) && target != t->tgid)
		return -EPERM;
	si->si_signo = sig;
	return 0;
}

long sys_rt_sigqueueinfo(struct task *t, const unsigned long *a)
{
	siginfo_t si;
	long err = queueinfo_in(t, arg_int(a, 0), arg_int(a, 1), a[2], &si);

	return err ? err : do_kill(t, arg_int(a, 0), arg_int(a, 1), &si);
}

long sys_rt_tgsigqueueinfo(struct task *t, const unsigned long *a)
{
	siginfo_t si;
	long err = queueinfo_in(t, arg_int(a, 0), arg_int(a, 2), a[3], &si);

	return err ? err : do_tkill(t, arg_int(a, 0), arg_int(a, 1), arg_int(a, 2), &si);
}

/* pidfd_send_signal: kill(2) of the process a pidfd names, with rt_sigqueueinfo's rules for
 * INFO. Linux 6.9's PIDFD_SIGNAL_* flags are not offered (EINVAL, as before them). */
long sys_pidfd_send_signal(struct task *t, const unsigned long *a)
{
	int sig = arg_int(a, 1);
	siginfo_t si;
	pid_t pid;

	if (a[3])
		return -EINVAL;
	struct vfs_file *f = arg_file(t, arg_int(a, 0));
	if (!f)
		return -EBADF;
	long err = pidfd_target(f, &pid);
	if (err == -EBADF && (pid = procfs_process_of(f->dentry)) > 0) /* /proc/PID */
		err = task_by_tid(pid) && task_by_tid(pid)->group_leader->tgid == pid ? 0 : -ESRCH;
	if (err)
		return err;
	if (a[2]) {
		if (copy_in(t->mm, &si, a[2], sizeof(si)))
			return -EFAULT;
		if (si.si_signo != sig)
			return -EINVAL;
		if ((si.si_code >= 0 || si.si_code == SI_TKILL) && pid != t->tgid)
			return -EPERM;
	} else {
		user_info(t, sig, &si, SI_USER);
	}
	return do_kill(t, pid, sig, &si);
}

long sys_rt_sigpending(struct task *t, const unsigned long *a)
{
	uint64_t set = (t->pending.set | t->group_leader->shared_pending.set) & t->sigmask;

	if (a[1] != sizeof(uint64_t))
		return -EINVAL;
	return copy_out(t->mm, a[0], &set, sizeof(set));
}

long sys_rt_sigsuspend(struct task *t, const unsigned long *a)
{
	uint64_t mask;

	if (a[1] != sizeof(uint64_t))
		return -EINVAL;
	if (!t->blk.retry) {
		if (copy_in(t->mm, &mask, a[0], sizeof(mask)))
			return -EFAULT;
		t->saved_sigmask = t->sigmask;
		t->has_saved_sigmask = true;
		t->sigmask = mask & ~UNBLOCKABLE;
	}
	/* Only a signal ends it: it returns -EINTR once a handler has run. */
	t->blk.intr_ret = -ERESTARTNOHAND;
	return task_block(t);
}

long sys_pause(struct task *t, const unsigned long *a)
{
	(void)a;
	t->blk.intr_ret = -ERESTARTNOHAND;
	return task_block(t);
}

long sys_sigaltstack(struct task *t, const unsigned long *a)
{
	struct user_regs_struct regs;
	stack_t ss;

	if (platform_get_regs(t->pt, &regs))
		return -EFAULT;
	/* As Linux: the old one is reported only once the new one is set. */
	stack_t old = signal_get_altstack(t, regs.rsp);
	if (a[0]) {
		if (copy_in(t->mm, &ss, a[0], sizeof(ss)))
			return -EFAULT;
		int err = signal_set_altstack(t, &ss, regs.rsp);
		if (err)
			return err;
	}
	if (a[1] && copy_out(t->mm, a[1], &old, sizeof(old)))
		return -EFAULT;
	return 0;
}

long sys_rt_sigtimedwait(struct task *t, const unsigned long *a)
{
	uint64_t set;
	siginfo_t si;

	if (a[3] != sizeof(uint64_t))
		return -EINVAL;
	if (copy_in(t->mm, &set, a[0], sizeof(set)))
		return -EFAULT;
	set &= ~UNBLOCKABLE;
	if (!t->blk.retry && a[2]) {
		struct timespec ts;
		if (copy_in(t->mm, &ts, a[2], sizeof(ts)))
			return -EFAULT;
		if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= NSEC_PER_SEC)
			return -EINVAL;
		t->blk.deadline = ts_add(mono_now(), ts);
		t->blk.sigwait_zero = ts.tv_sec == 0 && ts.tv_nsec == 0;
	}
	int sig = signal_dequeue(t, set, &si);
	if (sig) {
		t->blk.sigwait_set = 0;
		if (a[1] && copy_out(t->mm, a[1], &si, sizeof(si)))
			return -EFAULT;
		return sig;
	}
	if (t->blk.interrupted || t->blk.timed_out) {
		t->blk.sigwait_set = 0;
		return t->blk.timed_out ? -EAGAIN : -EINTR;
	}
	if (a[2] && (t->blk.sigwait_zero || ts_cmp(mono_now(), t->blk.deadline) >= 0))
		return -EAGAIN;
	if (a[2])
		task_wait_until(t, &t->blk.deadline);
	/* Signals in SET wake this wait even while blocked (signal.c looks at sigwait_set). */
	t->blk.sigwait_set = set;
	t->blk.intr_ret = -EINTR;
	return task_block(t);
}
