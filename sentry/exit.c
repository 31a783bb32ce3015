/* The end of processes: exit_group, zombies, reparenting to init, and reaping by wait4 and
 * waitid. A process's leader task outlives it as a zombie holding only its wait status. */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "common/units.h"
#include "sentry/control.h"
#include "sentry/kernel.h"
#include "sentry/mm.h"
#include "sentry/sched.h"
#include "sentry/pidfd.h"
#include "vfs/vfs.h"
#include "sentry/signal.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"
#include "sentry/tty.h"
#include "sentry/syscall.h"
#include "sentry/timer.h"
#include "sentry/futex.h"
#include "sentry/ipc.h"
#include "sentry/locks.h"

static void record_cpu_time(struct task *t)
{
	clockid_t cid;

	if (t->pt && clock_getcpuclockid(t->pt->host_pid, &cid) == 0 &&
	    clock_gettime(cid, &t->cpu_time) == 0)
		t->cpu_time = ts_add(t->cpu_time, t->group_leader->cpu_base);
	if (t->pt)
		t->maxrss = process_maxrss(t);
}

/* The nearest living ancestor of LEADER that is a child subreaper, else init. */
static struct task *new_parent_for_orphans(struct task *leader)
{
	for (struct task *a = leader->parent; a; a = a->parent)
		if (a->child_subreaper && !a->zombie && !a->exited)
			return a;
	struct task *init = task_by_tid(1);
	return init != leader ? init : NULL;
}

/* Children of LEADER go to a subreaper or init, and learn of it through PR_SET_PDEATHSIG. */
static void reparent_children(struct task *leader)
{
	if (!leader->had_children)
		return; /* nobody to look for: no walk of every task at every exit */
	struct task *heir = new_parent_for_orphans(leader);

	for_each_task(c) {
		if (c->parent != leader)
			continue;
		c->parent = heir;
		if (heir)
			heir->had_children = true;
		/* As on Linux: nobody may make a child that signals init or a subreaper with
		 * anything but SIGCHLD when it dies. */
		if (c->group_leader == c)
			c->exit_signal = SIGCHLD;
		if (c->pdeath_signal && !c->zombie)
			signal_send_thread(c, c->pdeath_signal, NULL);
		if (c->zombie && c->parent)
			waitq_wake(&c->parent->child_wait, 0);
	}
}

/* Whether the parent asked for its children to be reaped for it. */
static bool parent_autoreaps(struct task *parent)
{
	struct ksigaction *a;

	if (!parent || !parent->sighand)
		return true;
	a = &parent->sighand->sa->act[SIGCHLD - 1];
	return a->handler == (uint64_t)SIG_IGN || (a->flags & SA_NOCLDWAIT);
}

/* Whether the stub of PT hosts only threads of process TGID (a vfork child may share it). */
static bool stub_exclusive(struct platform_thread *pt, pid_t tgid)
{
	if (pt->stub->threads == 1)
		return true; /* PT alone: no walk of every task at every exit */
	for_each_task(o)
		if (o->pt && o->pt->stub == pt->stub && o->tgid != tgid)
			return false;
	return true;
}

/* A thread leaves its memory: the robust locks it holds are marked their owner dead,
 * CLONE_CHILD_CLEARTID's word is zeroed and its waiters woken (pthread_join), and a vfork
 * parent gets its memory back. */
static void thread_mm_release(struct task *t)
{
	futex_robust_release(t->mm, t->robust_list, t->tid);
	t->robust_list = 0;
	if (t->clear_child_tid && t->mm && t->mm->refs > 1) {
		uint32_t zero = 0;
		if (copy_out(t->mm, t->clear_child_tid, &zero, sizeof(zero)) == 0)
			futex_wake_addr(t->mm, t->clear_child_tid, 1);
	}
	t->clear_child_tid = 0;
	kernel_vfork_release(t);
}

void kernel_exit_thread(struct task *t, int status)
{
	struct task *leader = t->group_leader;
	bool others = false;

	for_each_thread_of(leader, o)
		others |= o != t && !o->thread_gone && !o->zombie;
	if (!others) {
		kernel_exit_group(t, status);
		return;
	}
	if (kernel.cfg.strace)
		strace_exit_thread(t, status);
	thread_mm_release(t);
	if (t == leader) {
		/* The process lives on in its other threads; the leader keeps its identity. */
		record_cpu_time(t);
		task_release(t);
		t->thread_gone = true;
		return;
	}
	task_release(t);
	task_unlink_free(t);
}

void kernel_exit_group(struct task *t, int status)
{
	struct task *leader = t->group_leader;

	if (kernel.cfg.strace)
		strace_exit(t, status);
	if (leader->tid == 1)
		kernel_init_exiting(status);

	record_cpu_time(leader);
	if (t->pt && stub_exclusive(t->pt, t->tgid)) {
		/* What the stub wrote is read before it dies, unless a thread of it still runs
		 * (it could write after the read: then all its memory counts as changed). */
		bool running = false;
		for_each_thread_of(leader, o)
			running |= o != t && o->running && !o->thread_gone && !o->zombie;
		if (!running)
			mm_collect_writes(t->mm);
		platform_kill(t->pt); /* every thread at once; releases below just free */
	}
	/* Robust locks its threads held, for the processes that share them. */
	for_each_thread_of(leader, o) {
		if (!o->thread_gone && !o->zombie)
			futex_robust_release(o->mm, o->robust_list, o->tid);
		o->robust_list = 0;
	}
	/* A process that never made a thread has only its leader: no walk of every task. */
	for_each_task_safe(o, next) {
		if (!leader->had_threads)
			break;
		if (o->tgid == t->tgid && o != leader) {
			kernel_vfork_release(o);
			task_release(o);
			task_unlink_free(o);
		}
	}
	kernel_vfork_release(leader);
	timers_release(leader);
	locks_on_exit(leader);
	tty_session_leader_exit(leader); /* a session leader's terminal is given up */
	task_release(leader);
	ipc_on_exit(leader); /* SEM_UNDO; segments it was the last to map */
	reparent_children(leader);
	if (leader->tid == 1) {
		kernel.done = true;
		kernel.exit_status = (status & 0x7f) ? 128 + (status & 0x7f) : (status >> 8) & 0xff;
	}
	leader->exit_status = status;
	control_exec_exited(leader->tgid, status);
	struct task *parent = leader->parent;
	if (!parent || parent_autoreaps(parent)) {
		task_unlink_free(leader);
		if (parent)
			waitq_wake(&parent->child_wait, 0);
		pidfd_notify();
		return;
	}
	leader->zombie = true;
	if (leader->exit_signal)
		signal_send_process(parent, leader->exit_signal, SI_KERNEL_CHILD(leader));
	waitq_wake(&parent->child_wait, 0);
	pidfd_notify();
}

void kernel_reap(struct task *c)
{
	struct task *parent = c->parent;

	if (parent) {
		parent->cchild_time = ts_add(parent->cchild_time, c->cpu_time);
		parent->cchild_time = ts_add(parent->cchild_time, c->cchild_time);
		long rss = c->maxrss > c->cchild_maxrss ? c->maxrss : c->cchild_maxrss;
		if (rss > parent->cchild_maxrss)
			parent->cchild_maxrss = rss;
	}
	task_unlink_free(c);
	pidfd_notify();
}

static bool child_matches(struct task *parent, struct task *c, int idtype, pid_t id)
{
	if (c->parent != parent || c->group_leader != c)
		return false;
	switch (idtype) {
	case P_PID:
		return c->tgid == id;
	case P_PGID:
		return c->pgid == id;
	default:
		return true;
	}
}

struct wait_result {
	pid_t pid;
	int status; /* wait(2) status word */
	int code;   /* CLD_* for waitid */
	int cld_status;
	uid_t uid;
	struct timespec cpu;
};

/* The common part of wait4 and waitid: 0 with R filled, 0 with R->pid == 0 under WNOHANG,
 * -ECHILD, or a block. */
static long do_wait(struct task *t, int idtype, pid_t id, int options, struct wait_result *r)
{
	struct task *parent = t->group_leader;
	bool any = false;

	memset(r, 0, sizeof(*r));
	/* One pid is a lookup, not a walk of every task (a parent reaping 10,000 children by pid
	 * would be quadratic). Every branch that reaps C returns. */
	for (struct task *c = idtype == P_PID ? task_by_tid(id) : task_list_first(); c;
	     c = idtype == P_PID ? NULL : c->next) {
		if (!child_matches(parent, c, idtype, id))
			continue;
		any = true;
		r->pid = c->tgid;
		r->uid = c->uid;
		if (c->zombie && (options & WEXITED)) {
			siginfo_t si;
			signal_child_info(c, &si);
			r->status = c->exit_status;
			r->code = si.si_code;
			r->cld_status = si.si_status;
			r->cpu = ts_add(c->cpu_time, c->cchild_time);
			if (!(options & WNOWAIT))
				kernel_reap(c);
			return 0;
		}
		if (!c->zombie && c->stopped && c->stop_report && (options & WSTOPPED)) {
			r->status = (c->stop_sig << 8) | 0x7f;
			r->code = CLD_STOPPED;
			r->cld_status = c->stop_sig;
			if (!(options & WNOWAIT))
				c->stop_report = false;
			return 0;
		}
		if (!c->zombie && c->cont_report && (options & WCONTINUED)) {
			r->status = 0xffff;
			r->code = CLD_CONTINUED;
			r->cld_status = SIGCONT;
			if (!(options & WNOWAIT))
				c->cont_report = false;
			return 0;
		}
		r->pid = 0;
	}
	if (!any)
		return -ECHILD;
	if (options & WNOHANG)
		return 0;
	long err = task_wait_queue(t, &parent->child_wait, 0);
	return err ? err : task_block(t);
}

static void fill_rusage(struct rusage *ru, struct timespec cpu)
{
	memset(ru, 0, sizeof(*ru));
	ru->ru_utime.tv_sec = cpu.tv_sec;
	ru->ru_utime.tv_usec = cpu.tv_nsec / NSEC_PER_USEC;
}

long sys_wait4(struct task *t, const unsigned long *a)
{
	pid_t pid = arg_int(a, 0);
	int options = arg_int(a, 2);
	struct wait_result r;
	int idtype = pid > 0 ? P_PID : pid == -1 ? P_ALL : P_PGID;
	pid_t id = pid < -1 ? -pid : pid == 0 ? t->pgid : pid;

	if (options & ~(WNOHANG | WUNTRACED | WCONTINUED | __WNOTHREAD | __WCLONE | __WALL))
		return -EINVAL;
	if (pid == INT_MIN)
		return -ESRCH;
	/* wait4's WUNTRACED is waitid's WSTOPPED. */
	long err =
	    do_wait(t, idtype, id, options | WEXITED | ((options & WUNTRACED) ? WSTOPPED : 0), &r);
	if (err)
		return err;
	if (r.pid && a[1] && copy_out(t->mm, a[1], &r.status, sizeof(int)))
		return -EFAULT;
	if (r.pid && a[3]) {
		struct rusage ru;
		fill_rusage(&ru, r.cpu);
		if (copy_out(t->mm, a[3], &ru, sizeof(ru)))
			return -EFAULT;
	}
	return r.pid;
}

long sys_waitid(struct task *t, const unsigned long *a)
{
	int idtype = arg_int(a, 0), options = arg_int(a, 3);
	pid_t id = arg_int(a, 1);
	struct wait_result r;

	if (options & ~(WNOHANG | WEXITED | WSTOPPED | WCONTINUED | WNOWAIT | __WNOTHREAD |
			__WCLONE | __WALL))
		return -EINVAL;
	if (!(options & (WEXITED | WSTOPPED | WCONTINUED)))
		return -EINVAL;
	bool nonblock_pidfd = false;
	if (idtype == 3) { /* P_PIDFD */
		/* The process the pidfd names; one reaped already is nobody's child. */
		struct vfs_file *f = arg_file(t, id);
		if (!f)
			return -EBADF;
		long err = pidfd_target(f, &id);
		if (err == -EBADF)
			return err;
		if (err)
			return -ECHILD;
		idtype = P_PID;
		nonblock_pidfd = (f->flags & O_NONBLOCK) && !(options & WNOHANG);
		if (nonblock_pidfd)
			options |= WNOHANG;
	}
	if (idtype != P_ALL && idtype != P_PID && idtype != P_PGID)
		return -EINVAL;
	if (idtype == P_PGID && id == 0)
		id = t->pgid;
	if (idtype != P_ALL && id <= 0 && idtype == P_PID)
		return -EINVAL;
	long err = do_wait(t, idtype, id, options, &r);
	if (err)
		return err;
	if (nonblock_pidfd && !r.pid)
		return -EAGAIN; /* a non-blocking pidfd: not exited yet */
	if (a[2]) {
		siginfo_t si;
		memset(&si, 0, sizeof(si));
		if (r.pid) {
			si.si_signo = SIGCHLD;
			si.si_pid = r.pid;
			si.si_uid = r.uid;
			si.si_code = r.code;
			si.si_status = r.cld_status;
		}
		if (copy_out(t->mm, a[2], &si, sizeof(si)))
			return -EFAULT;
	}
	if (a[4]) {
		struct rusage ru;
		fill_rusage(&ru, r.cpu);
		if (copy_out(t->mm, a[4], &ru, sizeof(ru)))
			return -EFAULT;
	}
	return 0;
}
