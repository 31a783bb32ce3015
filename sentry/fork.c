/* fork and clone: a new task with copies (or shares, per the CLONE_ flags) of the caller's
 * address space, fd table, filesystem context and signal handlers, and a new stub process
 * that resumes where the caller stopped, with 0 in rax. */
#include <errno.h>
#include <sched.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>

#include "common/limits.h"
#include "sentry/fdtable.h"
#include "sentry/kernel.h"
#include "sentry/pidfd.h"
#include "sentry/mm.h"
#include "sentry/sched.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"
#include "sentry/timer.h"

#define CLONE_ARGS_SIZE_VER0 64 /* the first struct clone_args */

/* The clone flags this kernel implements. */
#define SUPPORTED                                                                                  \
	(CSIGNAL | CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | CLONE_PARENT_SETTID |               \
	 CLONE_SETTLS | CLONE_FILES | CLONE_SYSVSEM | CLONE_PARENT | CLONE_VM | CLONE_THREAD |     \
	 CLONE_SIGHAND | CLONE_VFORK | CLONE_FS | CLONE_DETACHED | CLONE_PIDFD | NO_EFFECT |       \
	 CLONE_CLEAR_SIGHAND)
#ifndef CLONE_CLEAR_SIGHAND
#define CLONE_CLEAR_SIGHAND 0x100000000ULL /* clone3 only */
#endif
/* No process is traced (ptrace is EPERM) and there are no I/O contexts: these change nothing. */
#define NO_EFFECT (CLONE_PTRACE | CLONE_UNTRACED | CLONE_IO)

/* EAGAIN when a new task would pass the sandbox's --pids bound, or P's RLIMIT_NPROC (the
 * tasks of its real user; root, who holds CAP_SYS_RESOURCE, is not bound by it). */
static long tasks_allowed(struct task *p)
{
	rlim_t nproc = p->rlim[RLIMIT_NPROC].rlim_cur, mine = 0;
	rlim_t pids = kernel.cfg.pids > 0 ? kernel.cfg.pids : DEFAULT_PIDS;

	if (task_count() >= pids)
		return -EAGAIN;
	if (p->uid == 0 || p->euid == 0 || nproc == RLIM_INFINITY)
		return 0;
	/* Only a bounded user's fork counts its tasks. */
	for_each_task(t)
		mine += t->uid == p->uid;
	return mine >= nproc ? -EAGAIN : 0;
}

long kernel_clone(struct task *p, unsigned long flags, uintptr_t stack, uintptr_t parent_tid,
		  uintptr_t child_tid, uintptr_t tls, uintptr_t pidfd_addr)
{
	struct user_regs_struct regs;
	size_t xsize = platform_fpstate_size();
	void *xsave = NULL;
	struct task *c = NULL;
	long err;

	if (flags & ~(unsigned long)SUPPORTED)
		return syscall_unsupported(p, -ENOSYS, "flags %#lx",
					   flags & ~(unsigned long)SUPPORTED);
	if ((flags & CSIGNAL) > 64)
		return -EINVAL;
	if (((flags & CLONE_THREAD) && !(flags & CLONE_SIGHAND)) ||
	    ((flags & CLONE_SIGHAND) && !(flags & CLONE_VM)))
		return -EINVAL;
	if ((flags & CLONE_THREAD) && (flags & CSIGNAL))
		flags &= ~(unsigned long)CSIGNAL; /* threads never signal their "parent" */
	if ((flags & CLONE_PIDFD) && (flags & (CLONE_THREAD | CLONE_DETACHED)))
		return -EINVAL; /* a pidfd names a process */
	if ((flags & CLONE_CLEAR_SIGHAND) && (flags & CLONE_SIGHAND))
		return -EINVAL; /* the handlers to clear would be the parent's too */
	if ((err = tasks_allowed(p)))
		return err;
	err = -ENOMEM;
	if (!(xsave = malloc(xsize)) || !(c = task_new(kernel.next_pid)))
		goto out;
	if ((err = platform_get_regs(p->pt, &regs)) ||
	    (err = platform_get_fpstate(p->pt, xsave, xsize)))
		goto out;
	kernel.next_pid++;
	if (flags & CLONE_THREAD) {
		p->group_leader->had_threads = true;
		c->tgid = p->tgid;
		c->group_leader = p->group_leader;
		c->parent = p->group_leader->parent;
	} else {
		c->group_leader = c;
		c->parent = (flags & CLONE_PARENT) ? p->group_leader->parent : p->group_leader;
	}
	if (c->parent)
		c->parent->had_children = true;
	c->exit_signal = flags & CSIGNAL;
	c->pgid = p->pgid;
	c->sid = p->sid;
	c->uid = p->uid, c->euid = p->euid, c->suid = p->suid;
	c->gid = p->gid, c->egid = p->egid, c->sgid = p->sgid;
	if (p->ngroups) {
		if (!(c->groups = malloc(p->ngroups * sizeof(gid_t))))
			goto out;
		memcpy(c->groups, p->groups, p->ngroups * sizeof(gid_t));
		c->ngroups = p->ngroups;
	}
	c->sigmask = p->sigmask;
	/* As Linux: a child sharing the address space (a thread) starts without an alternate
	 * signal stack, or two threads' handlers would write their frames over each other
	 * there; a vfork child borrows its sleeping parent's, a fork child has its own copy. */
	if ((flags & (CLONE_VM | CLONE_VFORK)) == CLONE_VM)
		c->altstack = (stack_t){.ss_flags = SS_DISABLE};
	else
		c->altstack = p->altstack;
	c->no_new_privs = p->no_new_privs;
	gseccomp_fork(c, p);
	c->oom_score_adj = p->group_leader->oom_score_adj;
	c->nice = p->nice;
	c->ioprio = p->ioprio;
	sched_inherit(c, p);
	c->cap_eff = p->cap_eff, c->cap_prm = p->cap_prm, c->cap_inh = p->cap_inh;
	c->cap_bnd = p->cap_bnd, c->cap_amb = p->cap_amb;
	c->securebits = p->securebits;
	c->personality = p->personality;
	memcpy(c->rlim, p->rlim, sizeof(c->rlim));
	memcpy(c->affinity, p->affinity, sizeof(c->affinity));
	memcpy(c->comm, p->comm, sizeof(c->comm));
	c->fs = (flags & CLONE_FS) ? fs_get(p->fs) : fs_new(p->fs->root, p->fs->cwd, p->fs->umask);
	if (!c->fs) {
		err = -ENOMEM;
		goto out;
	}
	err = -ENOMEM;
	if (flags & CLONE_SIGHAND) {
		c->sighand = sighand_get(p->sighand);
	} else {
		if (!(c->sighand = sighand_fork(p->sighand)))
			goto out;
		/* As exec leaves them: handled signals to SIG_DFL, ignored ones ignored. */
		if ((flags & CLONE_CLEAR_SIGHAND) && sighand_exec_prepare(c->sighand))
			goto out;
		if (flags & CLONE_CLEAR_SIGHAND)
			sighand_exec_reset(c->sighand);
	}
	if (flags & CLONE_FILES) {
		c->files = fdtable_get(p->files);
	} else if (!(c->files = fdtable_copy(p->files))) {
		goto out;
	}
	if (flags & CLONE_VM) {
		/* Same address space: a new host thread in the caller's stub. */
		if ((err = platform_thread_new(p->pt, &c->pt)))
			goto out;
		c->mm = mm_get(p->mm);
	} else {
		if ((err = platform_stub_new(&c->pt)))
			goto out;
		err = -ENOMEM;
		if (!(c->mm = mm_fork(p->mm, c->pt)))
			goto out;
	}
	regs.rax = 0;
	if (stack)
		regs.rsp = stack;
	if (flags & CLONE_SETTLS)
		regs.fs_base = tls;
	if ((err = platform_set_regs(c->pt, &regs)) ||
	    (err = platform_set_fpstate(c->pt, xsave, xsize)))
		goto out;
	if ((flags & CLONE_PARENT_SETTID) && copy_out(p->mm, parent_tid, &c->tid, sizeof(pid_t))) {
		err = -EFAULT;
		goto out;
	}
	if (flags & CLONE_PIDFD) {
		/* The parent's descriptor of the child (close-on-exec), given before it runs. */
		struct vfs_file *f;
		if ((err = pidfd_new(c, 0, &f)) || (err = task_install_file(p, f, true)) < 0)
			goto out;
		int fd = (int)err;
		if (copy_out(p->mm, pidfd_addr, &fd, sizeof(fd))) {
			fdtable_close(p->files, fd);
			err = -EFAULT;
			goto out;
		}
	}
	if (flags & CLONE_CHILD_SETTID)
		copy_out_cold(c->mm, child_tid, &c->tid, sizeof(pid_t));
	if (flags & CLONE_CHILD_CLEARTID)
		c->clear_child_tid = child_tid;
	if (flags & CLONE_VFORK)
		c->vfork_parent = p;
	if (p->exe)
		c->exe = vfs_dentry_get(p->exe);
	kernel.forks++;
	task_link(c);
	if (!(flags & CLONE_THREAD))
		timers_cpu_limit_changed(c); /* a fork starts its own CPU-time count */
	kernel_resume(c);
	err = c->tid;
	c = NULL;
	if (flags & CLONE_VFORK) {
		/* The parent sleeps until the child execs or exits (kernel_vfork_wait). */
		p->vfork_child = err;
		free(xsave);
		return kernel_vfork_wait(p);
	}
out:
	task_free(c);
	free(xsave);
	return err;
}

/* The vfork parent's wait for its child to give the address space back. */
long kernel_vfork_wait(struct task *p)
{
	struct task *c = task_by_tid(p->vfork_child);

	if (!c || c->vfork_parent != p) {
		long pid = p->vfork_child;
		p->vfork_child = 0;
		return pid;
	}
	p->blk.intr_ret = p->vfork_child;
	long err = task_wait_queue(p, &p->vfork_wq, 0);
	return err ? err : task_block(p);
}

void kernel_vfork_release(struct task *c)
{
	if (!c->vfork_parent)
		return;
	waitq_wake(&c->vfork_parent->vfork_wq, 0);
	c->vfork_parent = NULL;
}

long sys_clone(struct task *t, const unsigned long *a)
{
	if (t->blk.retry && t->vfork_child)
		return kernel_vfork_wait(t);
	/* x86_64 argument order: flags, stack, parent_tid, child_tid, tls. CLONE_PIDFD writes the
	 * descriptor where CLONE_PARENT_SETTID would write the tid: not both. */
	if ((a[0] & CLONE_PIDFD) && (a[0] & CLONE_PARENT_SETTID))
		return -EINVAL;
	unsigned long flags = (uint32_t)a[0]; /* clone's flags are an int: no clone3-only flags */
	return kernel_clone(t, flags, a[1], a[2], a[3], a[4], a[2]);
}

long sys_fork(struct task *t, const unsigned long *a)
{
	(void)a;
	return kernel_clone(t, SIGCHLD, 0, 0, 0, 0, 0);
}

long sys_clone3(struct task *t, const unsigned long *a)
{
	if (t->blk.retry && t->vfork_child)
		return kernel_vfork_wait(t);
	struct {
		uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
		uint64_t set_tid, set_tid_size, cgroup; /* later versions of the structure */
	} args;
	long err = arg_struct(t, &args, sizeof(args), a[0], a[1], CLONE_ARGS_SIZE_VER0);

	if (err)
		return err;
	if (args.exit_signal > 64 || (args.flags & CSIGNAL))
		return -EINVAL;
	if (args.set_tid || args.set_tid_size)
		return syscall_unsupported(t, -ENOSYS, "set_tid"); /* choosing the child's pid */
	if (args.cgroup)
		return syscall_unsupported(t, -ENOSYS, "cgroup");
	return kernel_clone(t, args.flags | args.exit_signal,
			    args.stack ? args.stack + args.stack_size : 0, args.parent_tid,
			    args.child_tid, args.tls, args.pidfd);
}

/* unshare: a private copy of what the caller shares. CLONE_FILES copies a shared descriptor
 * table, CLONE_FS the root, working directory and umask; CLONE_SYSVSEM has nothing to do
 * (there are no SysV semaphores); CLONE_THREAD, CLONE_SIGHAND and CLONE_VM are allowed for a
 * process of one thread, where they change nothing. New namespaces are ENOSYS, as in clone. */
#define UNSHARE_NS                                                                                 \
	(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWUSER | CLONE_NEWPID | \
	 CLONE_NEWCGROUP | CLONE_NEWTIME)
#define UNSHARE_FLAGS                                                                              \
	(CLONE_THREAD | CLONE_FS | CLONE_SIGHAND | CLONE_VM | CLONE_FILES | CLONE_SYSVSEM |        \
	 UNSHARE_NS)

long sys_unshare(struct task *t, const unsigned long *a)
{
	unsigned long flags = a[0];
	int threads = 0;

	if (flags & ~(unsigned long)UNSHARE_FLAGS)
		return -EINVAL;
	if (flags & UNSHARE_NS)
		return syscall_unsupported(t, -ENOSYS, "namespaces (CLONE_NEW*)");
	for_each_thread_of(t->group_leader, o)
		threads += !o->zombie && !o->thread_gone;
	if ((flags & (CLONE_THREAD | CLONE_SIGHAND | CLONE_VM)) && threads > 1)
		return -EINVAL;
	if ((flags & CLONE_FILES) && t->files->refs > 1) {
		struct fdtable *copy = fdtable_copy(t->files);
		if (!copy)
			return -ENOMEM;
		fdtable_put(t->files);
		t->files = copy;
	}
	if (flags & CLONE_FS) {
		struct vfs_fs_ctx *fs = fs_new(t->fs->root, t->fs->cwd, t->fs->umask);
		if (!fs)
			return -ENOMEM;
		fs_put(t->fs);
		t->fs = fs;
	}
	return 0;
}
