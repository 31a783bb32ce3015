/* The syscall table and the dispatcher. Adding a syscall is adding a row here and its handler
 * in the sys_*.c file of its area. */
#include "sentry/syscall.h"

#include <errno.h>
#include <stdio.h>
#include <sys/syscall.h>

#include "sentry/control.h"
#include "sentry/kernel.h"
#include "sentry/syscalls.h"
#include "sentry/task.h"

static const char *const names[SYSCALL_MAX] = {
#include "syscall_names.h"
};

#define ROW(nr, name, args) [SYS_##nr] = {#nr, sys_##name, args, 'd'}
#define ROWX(nr, name, args) [SYS_##nr] = {#nr, sys_##name, args, 'x'}

static const struct syscall_def table[SYSCALL_MAX] = {
    ROW(read, read, "dpu"),
    ROW(write, write, "dbu"),
    ROW(open, open, "sFo"),
    ROW(close, close, "d"),
    ROW(stat, stat, "sp"),
    ROW(fstat, fstat, "dp"),
    ROW(lstat, lstat, "sp"),
    ROW(lseek, lseek, "ddd"),
    ROWX(mmap, mmap, "pxxxdx"),
    ROW(mprotect, mprotect, "pxx"),
    ROW(munmap, munmap, "px"),
    ROWX(brk, brk, "p"),
    ROW(rt_sigaction, rt_sigaction, "dppu"),
    ROW(rt_sigprocmask, rt_sigprocmask, "dppu"),
    ROW(ioctl, ioctl, "dxp"),
    ROW(pread64, pread64, "dpud"),
    ROW(pwrite64, pwrite64, "dbud"),
    ROW(readv, readv, "dpd"),
    ROW(writev, writev, "dpd"),
    ROW(access, access, "so"),
    ROW(sched_yield, sched_yield, ""),
    ROWX(mremap, mremap, "pxxxp"),
    ROW(madvise, madvise, "pxd"),
    ROW(msync, msync, "pxx"),
    ROW(dup, dup, "d"),
    ROW(dup2, dup2, "dd"),
    ROW(getpid, getpid, ""),
    ROW(exit, exit, "d"),
    ROW(uname, uname, "p"),
    ROW(fcntl, fcntl, "ddx"),
    ROW(getcwd, getcwd, "pu"),
    ROW(chdir, chdir, "s"),
    ROW(fchdir, fchdir, "d"),
    ROW(readlink, readlink, "spu"),
    ROW(umask, umask, "o"),
    ROW(gettimeofday, gettimeofday, "pp"),
    ROW(getrlimit, getrlimit, "dp"),
    ROW(getuid, getuid, ""),
    ROW(getgid, getgid, ""),
    ROW(geteuid, geteuid, ""),
    ROW(getegid, getegid, ""),
    ROW(getppid, getppid, ""),
    ROW(getpgrp, getpgrp, ""),
    ROW(getgroups, getgroups, "dp"),
    ROW(getresuid, getresuid, "ppp"),
    ROW(getresgid, getresgid, "ppp"),
    ROW(getpgid, getpgid, "d"),
    ROW(getsid, getsid, "d"),
    ROW(arch_prctl, arch_prctl, "xp"),
    ROW(setrlimit, setrlimit, "dp"),
    ROW(gettid, gettid, ""),
    ROW(time, time, "p"),
    ROW(getdents64, getdents64, "dpu"),
    ROW(set_tid_address, set_tid_address, "p"),
    ROW(clock_gettime, clock_gettime, "dp"),
    ROW(clock_getres, clock_getres, "dp"),
    ROW(exit_group, exit_group, "d"),
    ROW(openat, openat, "fsFo"),
    ROW(newfstatat, newfstatat, "fspx"),
    ROW(readlinkat, readlinkat, "fspu"),
    ROW(faccessat, faccessat, "fso"),
    ROW(dup3, dup3, "ddx"),
    ROW(prlimit64, prlimit64, "ddpp"),
    ROW(getrandom, getrandom, "pux"),
    ROW(statx, statx, "fsxxp"),
    ROW(faccessat2, faccessat2, "fsox"),
    ROW(set_robust_list, set_robust_list, "pu"),
    ROW(rseq, rseq, "puxx"),
    ROW(prctl, prctl, "dxxxx"),
    ROW(setpgid, setpgid, "dd"),
    ROW(setsid, setsid, ""),
    ROW(vfork, vfork, ""),
    ROW(clone, clone, "xpppp"),
    ROW(fork, fork, ""),
    ROW(clone3, clone3, "pu"),
    ROW(execve, execve, "spp"),
    ROW(execveat, execveat, "fsppx"),
    ROW(wait4, wait4, "dpxp"),
    ROW(waitid, waitid, "ddpxp"),
    ROW(kill, kill, "dd"),
    ROW(tkill, tkill, "dd"),
    ROW(tgkill, tgkill, "ddd"),
    ROW(rt_sigqueueinfo, rt_sigqueueinfo, "ddp"),
    ROW(rt_tgsigqueueinfo, rt_tgsigqueueinfo, "dddp"),
    ROW(rt_sigpending, rt_sigpending, "pu"),
    ROW(rt_sigsuspend, rt_sigsuspend, "pu"),
    ROW(pause, pause, ""),
    ROW(sigaltstack, sigaltstack, "pp"),
    ROW(rt_sigreturn, rt_sigreturn, ""),
    ROW(pipe, pipe, "p"),
    ROW(pipe2, pipe2, "px"),
    ROW(sendfile, sendfile, "ddpu"),
    ROW(copy_file_range, copy_file_range, "dpdpux"),
    ROW(splice, splice, "dpdpux"),
    ROW(preadv, preadv, "dpdd"),
    ROW(tee, tee, "ddux"),
    ROW(openat2, openat2, "fspu"),
    ROW(pwritev, pwritev, "dpdd"),
    ROW(preadv2, preadv2, "dpddxx"),
    ROW(pwritev2, pwritev2, "dpddxx"),
    ROW(socket, socket, "ddd"),
    ROW(connect, connect, "dpd"),
    ROW(accept, accept, "dpp"),
    ROW(sendto, sendto, "dbuxpd"),
    ROW(recvfrom, recvfrom, "dpuxpp"),
    ROW(sendmsg, sendmsg, "dpx"),
    ROW(recvmsg, recvmsg, "dpx"),
    ROW(shutdown, shutdown, "dd"),
    ROW(bind, bind, "dpd"),
    ROW(listen, listen, "dd"),
    ROW(getsockname, getsockname, "dpp"),
    ROW(getpeername, getpeername, "dpp"),
    ROW(socketpair, socketpair, "dddp"),
    ROW(setsockopt, setsockopt, "dddpd"),
    ROW(getsockopt, getsockopt, "dddpp"),
    ROW(accept4, accept4, "dppx"),
    ROW(mkdir, mkdir, "so"),
    ROW(mkdirat, mkdirat, "fso"),
    ROW(mknod, mknod, "sox"),
    ROW(mknodat, mknodat, "fsox"),
    ROW(unlink, unlink, "s"),
    ROW(unlinkat, unlinkat, "fsx"),
    ROW(rmdir, rmdir, "s"),
    ROW(rename, rename, "ss"),
    ROW(renameat, renameat, "fsfs"),
    ROW(renameat2, renameat2, "fsfsx"),
    ROW(link, link, "ss"),
    ROW(linkat, linkat, "fsfsx"),
    ROW(symlink, symlink, "ss"),
    ROW(symlinkat, symlinkat, "sfs"),
    ROW(chmod, chmod, "so"),
    ROW(fchmod, fchmod, "do"),
    ROW(fchmodat, fchmodat, "fso"),
    ROW(chown, chown, "sdd"),
    ROW(fchown, fchown, "ddd"),
    ROW(lchown, lchown, "sdd"),
    ROW(fchownat, fchownat, "fsddx"),
    ROW(truncate, truncate, "sd"),
    ROW(ftruncate, ftruncate, "dd"),
    ROW(fallocate, fallocate, "dxdd"),
    ROW(fadvise64, fadvise64, "dddd"),
    ROW(close_range, close_range, "uux"),
    ROW(utimensat, utimensat, "fspx"),
    ROW(futimesat, futimesat, "fsp"),
    ROW(utimes, utimes, "sp"),
    ROW(utime, utime, "sp"),
    ROW(creat, creat, "so"),
    ROW(statfs, statfs, "sp"),
    ROW(fstatfs, fstatfs, "dp"),
    ROW(fsync, fsync, "d"),
    ROW(setxattr, setxattr, "sspux"),
    ROW(lsetxattr, lsetxattr, "sspux"),
    ROW(fsetxattr, fsetxattr, "dspux"),
    ROW(getxattr, getxattr, "sspu"),
    ROW(lgetxattr, lgetxattr, "sspu"),
    ROW(fgetxattr, fgetxattr, "dspu"),
    ROW(listxattr, listxattr, "spu"),
    ROW(llistxattr, llistxattr, "spu"),
    ROW(flistxattr, flistxattr, "dpu"),
    ROW(removexattr, removexattr, "ss"),
    ROW(lremovexattr, lremovexattr, "ss"),
    ROW(fremovexattr, fremovexattr, "ds"),
    ROW(fdatasync, fdatasync, "d"),
    ROW(sync, sync, ""),
    ROW(syncfs, syncfs, "d"),
    ROW(chroot, chroot, "s"),
    ROW(memfd_create, memfd_create, "sx"),
    ROW(flock, flock, "dx"),
    ROW(setuid, setuid, "d"),
    ROW(setgid, setgid, "d"),
    ROW(setreuid, setreuid, "dd"),
    ROW(setregid, setregid, "dd"),
    ROW(setresuid, setresuid, "ddd"),
    ROW(setresgid, setresgid, "ddd"),
    ROW(setfsuid, setfsuid, "d"),
    ROW(setfsgid, setfsgid, "d"),
    ROW(setgroups, setgroups, "dp"),
    ROW(mount, mount, "sssxp"),
    ROW(umount2, umount2, "sx"),
    ROW(nanosleep, nanosleep, "pp"),
    ROW(clock_nanosleep, clock_nanosleep, "dxpp"),
    ROW(rt_sigtimedwait, rt_sigtimedwait, "pppu"),
    ROW(futex, futex, "pxdpxx"),
    ROW(signalfd, signalfd, "dpu"),
    ROW(signalfd4, signalfd4, "dpux"),
    ROW(sched_getaffinity, sched_getaffinity, "dup"),
    ROW(sched_setaffinity, sched_setaffinity, "dup"),
    ROW(sched_getscheduler, sched_getscheduler, "d"),
    ROW(sched_getparam, sched_getparam, "dp"),
    ROW(sched_get_priority_max, sched_get_priority_max, "d"),
    ROW(sched_get_priority_min, sched_get_priority_min, "d"),
    ROW(getrusage, getrusage, "dp"),
    ROW(times, times, "p"),
    ROW(sysinfo, sysinfo, "p"),
    ROW(poll, poll, "pud"),
    ROW(epoll_create, epoll_create, "d"),
    ROW(epoll_create1, epoll_create1, "x"),
    ROW(epoll_ctl, epoll_ctl, "dddp"),
    ROW(epoll_wait, epoll_wait, "dpdd"),
    ROW(epoll_pwait, epoll_pwait, "dpddpu"),
    ROW(eventfd, eventfd, "u"),
    ROW(eventfd2, eventfd2, "ux"),
    ROW(ppoll, ppoll, "puppu"),
    ROW(select, select, "dpppp"),
    ROW(pselect6, pselect6, "dppppp"),
    ROW(getitimer, getitimer, "dp"),
    ROW(setitimer, setitimer, "dpp"),
    ROW(alarm, alarm, "u"),
    ROW(timer_create, timer_create, "dpp"),
    ROW(timer_settime, timer_settime, "dxpp"),
    ROW(timer_gettime, timer_gettime, "dp"),
    ROW(timer_getoverrun, timer_getoverrun, "d"),
    ROW(timer_delete, timer_delete, "d"),
    ROW(timerfd_create, timerfd_create, "dx"),
    ROW(timerfd_settime, timerfd_settime, "dxpp"),
    ROW(timerfd_gettime, timerfd_gettime, "dp"),
};

const struct syscall_def *syscall_def(long nr)
{
	if (nr < 0 || nr >= SYSCALL_MAX || !table[nr].fn)
		return NULL;
	return &table[nr];
}

const char *syscall_name(long nr)
{
	if (nr < 0 || nr >= SYSCALL_MAX || !names[nr])
		return NULL;
	return names[nr];
}

static void report_unimplemented(long nr)
{
	static unsigned char reported[SYSCALL_MAX / 8];
	static long reported_other[64]; /* numbers outside the table */
	static int nother;
	const char *name = syscall_name(nr);

	if (nr >= 0 && nr < SYSCALL_MAX) {
		if (reported[nr / 8] & (1 << (nr % 8)))
			return;
		reported[nr / 8] |= 1 << (nr % 8);
	} else {
		for (int i = 0; i < nother; i++)
			if (reported_other[i] == nr)
				return;
		if (nother < 64)
			reported_other[nother++] = nr;
	}
	fprintf(stderr, "minisentry: unimplemented syscall %s (%ld): returning ENOSYS\n",
		name ? name : "unknown", nr);
}

long syscall_dispatch(struct task *t)
{
	const struct syscall_def *def = syscall_def(t->sc.nr);
	long ret;

	kernel.current = t;
	t->nsyscalls++;
	if (!t->sc.native) {
		ret = -ENOSYS; /* i386 syscalls through int $0x80 are refused */
	} else if (t->sc.nr == SAVE_RESTORE_TEST_SYSCALL && kernel.cfg.save_restore_test) {
		ret = control_save_restore_test(t);
	} else if (!def) {
		report_unimplemented(t->sc.nr);
		ret = -ENOSYS;
	} else {
		ret = def->fn(t, t->sc.args);
	}
	if (kernel.cfg.strace && (ret != -ESENTRY_BLOCK || !t->blk.retry))
		strace_print(t, ret);
	return ret;
}
