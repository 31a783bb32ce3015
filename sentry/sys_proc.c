/* Process identity and the per-process knobs of the first milestone: ids, exit, uname,
 * arch_prctl, resource limits, umask, getrandom. */
#include <asm/prctl.h>
#include <errno.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/utsname.h>

#include "fs-proc/procfs.h"
#include "sentry/kernel.h"
#include "sentry/mm.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/seccomp.h"
#include "sentry/task.h"
#include "sentry/caps.h"
#include "sentry/timer.h"

long sys_getpid(struct task *t, const unsigned long *a)
{
	(void)a;
	return t->tgid;
}

long sys_gettid(struct task *t, const unsigned long *a)
{
	(void)a;
	return t->tid;
}

long sys_getppid(struct task *t, const unsigned long *a)
{
	(void)a;
	return t->group_leader->parent ? t->group_leader->parent->tgid : 0;
}

long sys_setpgid(struct task *t, const unsigned long *a)
{
	pid_t pid = arg_int(a, 0), pgid = arg_int(a, 1);
	struct task *p = pid == 0 ? t->group_leader : task_by_tid(pid);

	if (pgid < 0)
		return -EINVAL;
	if (!p || p->group_leader != p || (p != t->group_leader && p->parent != t->group_leader))
		return -ESRCH;
	if (p != t->group_leader && p->did_exec)
		return -EACCES; /* a child that has exec'd is no longer ours to move */
	if (p->sid == p->tgid || p->sid != t->sid)
		return -EPERM; /* a session leader, or a child in another session */
	if (pgid == 0)
		pgid = p->tgid;
	if (pgid != p->tgid) {
		bool exists = false;
		for_each_task(o)
			exists |= !o->zombie && o->pgid == pgid && o->sid == t->sid;
		if (!exists)
			return -EPERM;
	}
	for_each_thread_of(p, o)
		o->pgid = pgid;
	return 0;
}

long sys_setsid(struct task *t, const unsigned long *a)
{
	(void)a;
	for_each_task(o)
		if (!o->zombie && o->pgid == t->tgid)
			return -EPERM; /* already a process group leader */
	for_each_thread_of(t->group_leader, o)
		o->pgid = o->sid = t->tgid;
	return t->tgid;
}

long sys_vfork(struct task *t, const unsigned long *a)
{
	(void)a;
	if (t->blk.retry && t->vfork_child)
		return kernel_vfork_wait(t);
	return kernel_clone(t, CLONE_VM | CLONE_VFORK | SIGCHLD, 0, 0, 0, 0, 0);
}

long sys_getuid(struct task *t, const unsigned long *a)
{
	(void)a;
	return t->uid;
}

long sys_geteuid(struct task *t, const unsigned long *a)
{
	(void)a;
	return t->euid;
}

long sys_getgid(struct task *t, const unsigned long *a)
{
	(void)a;
	return t->gid;
}

long sys_getegid(struct task *t, const unsigned long *a)
{
	(void)a;
	return t->egid;
}

static long put_three_ids(struct task *t, const unsigned long *a, unsigned r, unsigned e,
			  unsigned s)
{
	unsigned ids[3] = {r, e, s};

	for (int i = 0; i < 3; i++)
		if (copy_out(t->mm, a[i], &ids[i], sizeof(ids[i])))
			return -EFAULT;
	return 0;
}

long sys_getresuid(struct task *t, const unsigned long *a)
{
	return put_three_ids(t, a, t->uid, t->euid, t->suid);
}

long sys_getresgid(struct task *t, const unsigned long *a)
{
	return put_three_ids(t, a, t->gid, t->egid, t->sgid);
}

long sys_getpgrp(struct task *t, const unsigned long *a)
{
	(void)a;
	return t->pgid;
}

long sys_getpgid(struct task *t, const unsigned long *a)
{
	pid_t pid = arg_int(a, 0);
	struct task *p = pid == 0 ? t : task_by_tid(pid);

	return p ? p->pgid : -ESRCH;
}

long sys_getsid(struct task *t, const unsigned long *a)
{
	pid_t pid = arg_int(a, 0);
	struct task *p = pid == 0 ? t : task_by_tid(pid);

	return p ? p->sid : -ESRCH;
}

long sys_exit(struct task *t, const unsigned long *a)
{
	kernel_exit_thread(t, (int)(a[0] & 0xff) << 8);
	return 0;
}

long sys_exit_group(struct task *t, const unsigned long *a)
{
	kernel_exit_group(t, (int)(a[0] & 0xff) << 8);
	return 0;
}

long sys_set_tid_address(struct task *t, const unsigned long *a)
{
	t->clear_child_tid = a[0];
	return t->tid;
}

long sys_uname(struct task *t, const unsigned long *a)
{
	struct utsname u;

	memset(&u, 0, sizeof(u));
	strcpy(u.sysname, "Linux");
	snprintf(u.nodename, sizeof(u.nodename), "%s", kernel.hostname);
	strcpy(u.release, "6.1.0");
	strcpy(u.version, "#1 SMP minisentry");
	strcpy(u.machine, "x86_64");
	snprintf(u.domainname, sizeof(u.domainname), "%s", kernel.domainname);
	return copy_out(t->mm, a[0], &u, sizeof(u));
}

/* sethostname and setdomainname: CAP_SYS_ADMIN (the sandbox is its own UTS namespace). */
static long set_uts_name(struct task *t, const unsigned long *a, bool domain)
{
	char name[KERNEL_HOSTNAME_MAX];
	int len = arg_int(a, 1);

	if (!caps_has(t, CAP_SYS_ADMIN))
		return -EPERM;
	if (len < 0 || len > KERNEL_HOSTNAME_MAX)
		return -EINVAL;
	if (copy_in(t->mm, name, a[0], (size_t)len))
		return -EFAULT;
	kernel_set_uts_name(domain, name, (size_t)len);
	return 0;
}

long sys_sethostname(struct task *t, const unsigned long *a)
{
	return set_uts_name(t, a, false);
}

long sys_setdomainname(struct task *t, const unsigned long *a)
{
	return set_uts_name(t, a, true);
}

long sys_arch_prctl(struct task *t, const unsigned long *a)
{
	struct user_regs_struct regs;
	int err;

	switch (arg_int(a, 0)) {
	case ARCH_SET_FS:
	case ARCH_SET_GS:
		if (a[1] >= (1UL << 47))
			return -EPERM;
		if ((err = platform_get_regs(t->pt, &regs)))
			return err;
		if (arg_int(a, 0) == ARCH_SET_FS)
			regs.fs_base = a[1];
		else
			regs.gs_base = a[1];
		return platform_set_regs(t->pt, &regs);
	case ARCH_GET_FS:
	case ARCH_GET_GS:
		if ((err = platform_get_regs(t->pt, &regs)))
			return err;
		unsigned long v = arg_int(a, 0) == ARCH_GET_FS ? regs.fs_base : regs.gs_base;
		return copy_out(t->mm, a[1], &v, sizeof(v));
	default:
		return -EINVAL;
	}
}

static long do_prlimit(struct task *t, int res, uintptr_t new_addr, uintptr_t old_addr)
{
	struct rlimit nl;

	if (res < 0 || res >= RLIM_NLIMITS)
		return -EINVAL;
	if (new_addr) {
		if (copy_in(t->mm, &nl, new_addr, sizeof(nl)))
			return -EFAULT;
		if (nl.rlim_cur > nl.rlim_max)
			return -EINVAL;
		if (res == RLIMIT_NOFILE && nl.rlim_max > (rlim_t)procfs_nr_open)
			return -EPERM;
		/* Raising the hard limit needs CAP_SYS_RESOURCE; the guest's root has it. */
		if (nl.rlim_max > t->rlim[res].rlim_max && t->euid != 0)
			return -EPERM;
	}
	if (old_addr && copy_out(t->mm, old_addr, &t->rlim[res], sizeof(struct rlimit)))
		return -EFAULT;
	if (new_addr) {
		/* Limits are the process's: every thread sees the new one. */
		for_each_task(o)
			if (o->tgid == t->tgid)
				o->rlim[res] = nl;
		if (res == RLIMIT_CPU)
			timers_cpu_limit_changed(t->group_leader);
	}
	return 0;
}

long sys_prlimit64(struct task *t, const unsigned long *a)
{
	pid_t pid = arg_int(a, 0);
	struct task *p = pid == 0 ? t : task_by_tid(pid);

	if (!p)
		return -ESRCH;
	return do_prlimit(p, arg_int(a, 1), a[2], a[3]);
}

long sys_getrlimit(struct task *t, const unsigned long *a)
{
	return do_prlimit(t, arg_int(a, 0), 0, a[1]);
}

long sys_setrlimit(struct task *t, const unsigned long *a)
{
	return do_prlimit(t, arg_int(a, 0), a[1], 0);
}

long sys_umask(struct task *t, const unsigned long *a)
{
	mode_t old = t->fs->umask;

	t->fs->umask = a[0] & 0777;
	return old;
}

long sys_sched_yield(struct task *t, const unsigned long *a)
{
	(void)t;
	(void)a;
	return 0;
}

long sys_getrandom(struct task *t, const unsigned long *a)
{
	char buf[256];
	size_t len = a[1], done = 0;

	if (a[2] & ~(unsigned long)(GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE))
		return -EINVAL;
	if ((a[2] & GRND_RANDOM) && (a[2] & GRND_INSECURE))
		return -EINVAL;
	if (len > 33554431)
		len = 33554431; /* Linux caps one call at 32 MiB - 1 */
	while (done < len) {
		size_t n = len - done < sizeof(buf) ? len - done : sizeof(buf);
		ssize_t r = getrandom(buf, n, 0);
		if (r <= 0)
			return done ? (long)done : -EAGAIN;
		if (copy_out(t->mm, a[0] + done, buf, r))
			return done ? (long)done : -EFAULT;
		done += r;
	}
	return done;
}

/* personality: Linux keeps any value (the argument is 32 bits); 0xffffffff only asks. What
 * minisentry acts on is ADDR_NO_RANDOMIZE (exec.c); fork copies it, exec keeps it. */
long sys_personality(struct task *t, const unsigned long *a)
{
	unsigned int old = t->personality, want = (unsigned int)a[0];

	if (want != 0xffffffffu)
		t->personality = want;
	return old;
}

/* The list head a thread registered. Another process's needs ptrace_may_access in read mode
 * with real credentials: the caller's real uid and gid are all of the target's, or
 * CAP_SYS_PTRACE. */
long sys_get_robust_list(struct task *t, const unsigned long *a)
{
	struct task *p = arg_int(a, 0) ? task_by_tid(arg_int(a, 0)) : t;
	size_t len = 24; /* sizeof(struct robust_list_head) */

	if (!p)
		return -ESRCH;
	bool same = t->uid == p->uid && t->uid == p->euid && t->uid == p->suid &&
		    t->gid == p->gid && t->gid == p->egid && t->gid == p->sgid;
	if (p->tgid != t->tgid && !same && !caps_has(t, CAP_SYS_PTRACE))
		return -EPERM;
	if (copy_out(t->mm, a[2], &len, sizeof(len)))
		return -EFAULT;
	return copy_out(t->mm, a[1], &p->robust_list, sizeof(p->robust_list));
}

long sys_set_robust_list(struct task *t, const unsigned long *a)
{
	if (a[1] != 24) /* sizeof(struct robust_list_head) */
		return -EINVAL;
	t->robust_list = a[0];
	return 0;
}

/* Restartable sequences are not offered: glibc and musl fall back when rseq is ENOSYS. */
long sys_rseq(struct task *t, const unsigned long *a)
{
	(void)t;
	(void)a;
	return -ENOSYS;
}

/* seccomp(2): the filters are sentry/seccomp.c's. */
long sys_seccomp(struct task *t, const unsigned long *a)
{
	return gseccomp_op(t, arg_uint(a, 0), arg_uint(a, 1), a[2]);
}

long sys_prctl(struct task *t, const unsigned long *a)
{
	char name[16];

	switch (arg_int(a, 0)) {
	case PR_SET_NAME:
		memset(name, 0, sizeof(name));
		if (copy_string_in(t->mm, name, a[1], sizeof(name)) == -EFAULT)
			return -EFAULT;
		name[15] = 0;
		memcpy(t->comm, name, sizeof(name));
		return 0;
	case PR_GET_NAME:
		return copy_out(t->mm, a[1], t->comm, sizeof(t->comm));
	case PR_SET_NO_NEW_PRIVS:
		if (a[1] != 1 || a[2] || a[3] || a[4])
			return -EINVAL;
		t->no_new_privs = true;
		return 0;
	case PR_GET_NO_NEW_PRIVS:
		return t->no_new_privs;
	case PR_SET_SECCOMP:
		return gseccomp_prctl_set(t, a[1], a[2]);
	case PR_GET_SECCOMP:
		return t->seccomp.mode;
	case PR_GET_DUMPABLE:
		return 1;
	case PR_SET_CHILD_SUBREAPER:
		t->group_leader->child_subreaper = a[1] != 0;
		return 0;
	case PR_GET_CHILD_SUBREAPER: {
		int on = t->group_leader->child_subreaper;
		return copy_out(t->mm, a[1], &on, sizeof(on));
	}
	case PR_SET_PDEATHSIG:
		if (a[1] > NSIG_GUEST)
			return -EINVAL;
		t->pdeath_signal = arg_int(a, 1);
		return 0;
	case PR_GET_PDEATHSIG:
		return copy_out(t->mm, a[1], &t->pdeath_signal, sizeof(int));
	default: {
		long r = caps_prctl(t, arg_int(a, 0), a);
		return r != -ENOSYS ? r
				    : syscall_unsupported(t, -EINVAL, "option %d", arg_int(a, 0));
	}
	}
}
