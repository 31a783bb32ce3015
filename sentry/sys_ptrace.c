/* Reaching into other processes: ptrace and process_vm_readv/writev (pidfds: pidfd.c). No guest
 * process may trace or read another: the sandbox behaves as Linux with Yama's ptrace_scope at
 * 3 (/proc/sys/kernel/yama/ptrace_scope says so), where every attach fails with EPERM whoever
 * asks, and a process reaches only its own memory. Lookups see only the sandbox's processes
 * (a host process has no pid here), so every other pid is ESRCH, in the order Linux checks. */
#include <errno.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "sentry/mm.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"

#ifndef PTRACE_O_EXITKILL
#define PTRACE_O_EXITKILL (1 << 20)
#endif
#ifndef PTRACE_O_SUSPEND_SECCOMP
#define PTRACE_O_SUSPEND_SECCOMP (1 << 21)
#endif
#define PTRACE_O_MASK (0xff | PTRACE_O_EXITKILL | PTRACE_O_SUSPEND_SECCOMP)

long sys_ptrace(struct task *t, const unsigned long *a)
{
	long request = a[0];
	pid_t pid = arg_int(a, 1);

	(void)t;
	/* Yama (scope 3) refuses to make the parent a tracer. */
	if (request == PTRACE_TRACEME)
		return -EPERM;
	struct task *p = task_by_tid(pid);
	if (pid <= 0 || !p)
		return -ESRCH;
	if (request == PTRACE_ATTACH || request == PTRACE_SEIZE) {
		/* ptrace_attach: PTRACE_SEIZE's own arguments first (EIO), then the access
		 * check, which scope 3 fails for every task, the caller's own included. */
		if (request == PTRACE_SEIZE &&
		    (a[2] != 0 || (a[3] & ~(unsigned long)PTRACE_O_MASK)))
			return -EIO;
		return -EPERM;
	}
	/* Every other request needs a tracee stopped for the caller, and there is none. */
	return -ESRCH;
}

/* process_vm_rw_core's access check (mm_access): the caller's own address space, shared by
 * its threads and by processes made with CLONE_VM, and nothing else under scope 3. A zombie
 * has none left. */
static long vm_target(struct task *t, pid_t pid, struct mm **mm)
{
	struct task *p = pid > 0 ? task_by_tid(pid) : NULL;

	if (!p)
		return -ESRCH;
	if (p->zombie || p->exited || !p->mm)
		return -ESRCH;
	if (p->mm != t->mm)
		return -EPERM;
	*mm = p->mm;
	return 0;
}

/* Copies between the caller's iovecs and the remote ones, remote segment by remote segment as
 * Linux does: a remote page that cannot be reached ends the copy, and so does a local one; the
 * bytes moved by then are the result, or -EFAULT when none were. */
static long vm_copy(struct task *t, struct mm *mm, const struct iovec *lv, unsigned long lcnt,
		    const struct iovec *rv, unsigned long rcnt, bool write)
{
	char buf[4096];
	size_t li = 0, loff = 0, done = 0;

	for (unsigned long ri = 0; ri < rcnt; ri++) {
		uintptr_t raddr = (uintptr_t)rv[ri].iov_base;
		size_t rleft = rv[ri].iov_len;
		while (rleft > 0) {
			while (li < lcnt && loff == lv[li].iov_len) {
				li++;
				loff = 0;
			}
			if (li == lcnt)
				return done;
			/* One piece: within a remote page, a local segment and the buffer. */
			size_t n = 4096 - (raddr & 4095);
			if (n > rleft)
				n = rleft;
			if (n > lv[li].iov_len - loff)
				n = lv[li].iov_len - loff;
			uintptr_t laddr = (uintptr_t)lv[li].iov_base + loff;
			if (write) {
				if (copy_in(t->mm, buf, laddr, n))
					return done ? (long)done : -EFAULT;
				if (copy_out(mm, raddr, buf, n))
					return done ? (long)done : -EFAULT;
			} else {
				if (copy_in(mm, buf, raddr, n))
					return done ? (long)done : -EFAULT;
				if (copy_out(t->mm, laddr, buf, n))
					return done ? (long)done : -EFAULT;
			}
			done += n;
			loff += n;
			raddr += n;
			rleft -= n;
		}
	}
	return done;
}

static long process_vm_rw(struct task *t, const unsigned long *a, bool write)
{
	pid_t pid = arg_int(a, 0);
	unsigned long lcnt = a[2], rcnt = a[4];
	struct iovec *lv = NULL, *rv = NULL;
	struct mm *mm;
	long ret;

	if (a[5] != 0)
		return -EINVAL;
	/* The local iovecs as import_iovec takes them; nothing to move is 0 before anything
	 * else is looked at. */
	if (lcnt > ARG_IOV_MAX)
		return -EINVAL;
	if ((ret = arg_iovec(t, a[1], lcnt, &lv)) <= 0)
		return ret;
	/* The remote ones are only copied in and their lengths checked (iovec_from_user). */
	if (rcnt > ARG_IOV_MAX) {
		ret = -EINVAL;
		goto out;
	}
	if (rcnt && !(rv = malloc(rcnt * sizeof(*rv)))) {
		ret = -ENOMEM;
		goto out;
	}
	if (rcnt && copy_in(t->mm, rv, a[3], rcnt * sizeof(*rv))) {
		ret = -EFAULT;
		goto out;
	}
	bool any = false;
	for (unsigned long i = 0; i < rcnt; i++) {
		if ((ssize_t)rv[i].iov_len < 0) {
			ret = -EINVAL;
			goto out;
		}
		any |= rv[i].iov_len > 0;
	}
	if (!any) {
		ret = 0;
		goto out;
	}
	if ((ret = vm_target(t, pid, &mm)))
		goto out;
	ret = vm_copy(t, mm, lv, lcnt, rv, rcnt, write);
out:
	free(lv);
	free(rv);
	return ret;
}

long sys_process_vm_readv(struct task *t, const unsigned long *a)
{
	return process_vm_rw(t, a, false);
}

long sys_process_vm_writev(struct task *t, const unsigned long *a)
{
	return process_vm_rw(t, a, true);
}
