/* The syscall table and the dispatcher. Adding a syscall is adding a row here and its handler
 * in the sys_*.c file of its area. */
#include "sentry/syscall.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#include "sentry/control.h"
#include "sentry/ipc.h"
#include "mem/memfile.h"
#include "sentry/kernel.h"
#include "sentry/syscalls.h"
#include "sentry/task.h"

static const char *const names[SYSCALL_MAX] = {
#include "syscall_names.h"
};

/* A row names the handler sys_NR (defined under that name in the file of its area); ROWX
 * rows print their result in hex. PARTIAL rows say what is missing, NOSYS rows why the
 * handler answers -ENOSYS. Syscalls without a row are ENOSYS and named once on stderr. */
#define ROW(nr, args) [SYS_##nr] = {#nr, sys_##nr, args, 'd', SYSCALL_SUPPORTED, NULL}
#define ROWX(nr, args) [SYS_##nr] = {#nr, sys_##nr, args, 'x', SYSCALL_SUPPORTED, NULL}
#define PARTIAL(nr, args, note) [SYS_##nr] = {#nr, sys_##nr, args, 'd', SYSCALL_PARTIAL, note}
#define PARTIALX(nr, args, note) [SYS_##nr] = {#nr, sys_##nr, args, 'x', SYSCALL_PARTIAL, note}
#define NOSYS(nr, args, note) [SYS_##nr] = {#nr, sys_##nr, args, 'd', SYSCALL_UNIMPLEMENTED, note}

#define XATTR_NOTE                                                                                 \
	"no filesystem keeps extended attributes: getting, setting and removing one is "           \
	"EOPNOTSUPP, a list is empty"

#define INOTIFY_NOTE                                                                               \
	"events come from the sandbox's own VFS operations; a hard link's other name on the "      \
	"overlay root or a host bind mount is another inode here, and an unmount sends no "        \
	"IN_UNMOUNT (a watch keeps the mount busy)"

static const struct syscall_def table[SYSCALL_MAX] = {
    ROW(read, "dBu"),
    ROW(write, "dbu"),
    ROW(open, "sFo"),
    ROW(close, "d"),
    ROW(stat, "sy"),
    ROW(fstat, "dy"),
    ROW(lstat, "sy"),
    ROW(lseek, "dde"),
    PARTIALX(mmap, "puPMdx",
	     "of devices only /dev/zero maps (as anonymous memory, private or shared; a shared "
	     "one at a non-zero offset does not fault with SIGBUS past its length as Linux's "
	     "shmem object does); other files that are not regular files are ENODEV"),
    ROW(mprotect, "puP"),
    ROW(munmap, "pu"),
    ROWX(brk, "p"),
    ROW(rt_sigaction, "Saqu"),
    ROW(rt_sigprocmask, "Hkmu"),
    PARTIAL(ioctl, "dxp",
	    "terminal requests (termios, window size, job control), FIONREAD, FIONBIO, FIOASYNC, "
	    "FIOCLEX/FIONCLEX, pty masters' TIOCGPTN/TIOCSPTLCK/TIOCGPTLCK/TIOCGPTPEER, and on "
	    "sockets SIOCOUTQ/SIOCATMARK and the SIOCGIF* interface reads (changes are EPERM); "
	    "other requests (packet mode, TIOCSTI, TIOCCONS, line disciplines) are ENOTTY"),
    ROW(pread64, "dBud"),
    ROW(pwrite64, "dbud"),
    ROW(readv, "did"),
    ROW(writev, "dvd"),
    ROW(access, "sO"),
    ROW(sched_yield, ""),
    PARTIALX(mremap, "pxxxp", "MREMAP_DONTUNMAP is EINVAL"),
    PARTIAL(madvise, "pu9", "MADV_REMOVE, MADV_COLD/PAGEOUT and MADV_COLLAPSE are EINVAL"),
    ROW(msync, "pxx"),
    ROW(mincore, "pup"),
    PARTIAL(mlock, "px", "counts against RLIMIT_MEMLOCK; the host pages are not locked"),
    PARTIAL(mlock2, "pxx", "counts against RLIMIT_MEMLOCK; the host pages are not locked"),
    ROW(munlock, "px"),
    PARTIAL(mlockall, "x", "MCL_FUTURE is accepted but later mappings are not locked"),
    ROW(munlockall, ""),
    ROW(dup, "d"),
    ROW(dup2, "dd"),
    ROW(getpid, ""),
    ROW(exit, "d"),
    ROW(uname, "N"),
    ROW(sethostname, "bd"),
    ROW(setdomainname, "bd"),
    PARTIAL(fcntl, "ddx",
	    "leases and F_NOTIFY are EINVAL; O_ASYNC's signal follows the file's poll "
	    "queue (a reader's data, a writer's room), not Linux's per-object list of events"),
    ROW(getcwd, "Zu"),
    ROW(chdir, "s"),
    ROW(fchdir, "d"),
    ROW(readlink, "sBu"),
    ROW(umask, "o"),
    ROW(gettimeofday, "pp"),
    ROW(getrlimit, "Lr"),
    ROW(getuid, ""),
    ROW(getgid, ""),
    ROW(geteuid, ""),
    ROW(getegid, ""),
    ROW(getppid, ""),
    ROW(getpgrp, ""),
    ROW(getgroups, "d\\G"),
    ROW(getresuid, ":::"),
    ROW(getresgid, ":::"),
    ROW(getpgid, "d"),
    ROW(getsid, "d"),
    PARTIAL(arch_prctl, "Rp",
	    "ARCH_SET_FS/GS and ARCH_GET_FS/GS only: other codes (CET, CPUID faulting, AMX "
	    "permissions) are EINVAL"),
    PARTIAL(setrlimit, "Ll",
	    "enforced: NOFILE FSIZE AS DATA NPROC CPU STACK MEMLOCK; others kept, reported"),
    ROW(gettid, ""),
    ROW(time, "p"),
    ROW(getdents, "dpu"),
    ROW(getdents64, "dDu"),
    ROW(set_tid_address, "p"),
    ROW(clock_gettime, "cV"),
    ROW(clock_getres, "cV"),
    PARTIAL(clock_settime, "ct",
	    "the host's clock is not the sandbox's to set: a valid request is EPERM, as for root "
	    "in a user namespace"),
    PARTIAL(settimeofday, "pp",
	    "the host's clock is not the sandbox's to set: a valid request is EPERM, as for root "
	    "in a user namespace"),
    ROW(exit_group, "d"),
    ROW(openat, "fsFo"),
    ROW(newfstatat, "fsyT"),
    ROW(readlinkat, "fsBu"),
    ROW(faccessat, "fsO"),
    ROW(dup3, "ddK"),
    PARTIAL(prlimit64, "dLlr",
	    "enforced: NOFILE FSIZE AS DATA NPROC CPU STACK MEMLOCK; others kept, reported"),
    ROW(getrandom, "guG"),
    ROWX(personality, "x"),
    ROW(statx, "fs%&@"),
    ROW(faccessat2, "fsOT"),
    ROW(set_robust_list, "pu"),
    ROW(get_robust_list, "dpp"),
    NOSYS(rseq, "pxxx", "restartable sequences are not offered: glibc and musl run without them"),
    PARTIAL(
	prctl, "dxxxx",
	"PR_SET/GET_NAME, PR_SET/GET_NO_NEW_PRIVS, PR_GET_DUMPABLE, PR_SET/GET_CHILD_SUBREAPER, "
	"PR_SET/GET_PDEATHSIG, PR_SET/GET_SECCOMP and the capability options; other options "
	"are EINVAL"),
    PARTIAL(seccomp, "\\o\\fp",
	    "strict mode and filters (evaluated by the Sentry, docs/seccomp.md); "
	    "SECCOMP_FILTER_FLAG_NEW_LISTENER (user notification) is ENOSYS, so RET_USER_NOTIF "
	    "finds no listener (ENOSYS); RET_TRACE finds no tracer (ENOSYS); RET_LOG logs "
	    "nothing"),
    ROW(setpgid, "dd"),
    ROW(setsid, ""),
    ROW(vfork, ""),
    PARTIAL(clone, "xpppp",
	    "namespaces (CLONE_NEW*) are ENOSYS; CLONE_PTRACE, CLONE_UNTRACED and CLONE_IO change "
	    "nothing (no process is traced, there are no I/O contexts)"),
    ROW(fork, ""),
    PARTIAL(clone3, "pu", "as clone; set_tid and CLONE_INTO_CGROUP are ENOSYS too"),
    ROW(execve, "sAE"),
    ROW(execveat, "fsAEx"),
    PARTIAL(wait4, "dwW.", "the rusage has only ru_utime (all CPU time counts as user time)"),
    ROW(waitid, "ddpxp"),
    ROW(kill, "dS"),
    ROW(tkill, "dS"),
    ROW(tgkill, "ddS"),
    PARTIAL(ptrace, "ddpp",
	    "no process can be traced, as under Yama's ptrace_scope 3: PTRACE_TRACEME, "
	    "PTRACE_ATTACH and PTRACE_SEIZE are EPERM, every other request ESRCH"),
    PARTIAL(process_vm_readv, "dpupux",
	    "only the caller's own address space: another process's is EPERM, as under Yama's "
	    "ptrace_scope 3"),
    PARTIAL(process_vm_writev, "dpupux",
	    "only the caller's own address space: another process's is EPERM, as under Yama's "
	    "ptrace_scope 3"),
    PARTIAL(pidfd_open, "dx",
	    "PIDFD_THREAD (a pidfd of one thread, Linux 6.9) is EINVAL; no PIDFD_GET_INFO ioctl"),
    PARTIAL(pidfd_getfd, "ddx",
	    "only the caller's own process: another's is EPERM, as under Yama's ptrace_scope 3"),
    PARTIAL(pidfd_send_signal, "dSpx", "the PIDFD_SIGNAL_* flags (Linux 6.9) are EINVAL"),
    ROW(rt_sigqueueinfo, "ddp"),
    ROW(rt_tgsigqueueinfo, "dddp"),
    ROW(rt_sigpending, "mu"),
    ROW(rt_sigsuspend, "ku"),
    ROW(pause, ""),
    ROW(sigaltstack, "^_"),
    ROW(rt_sigreturn, ""),
    ROW(pipe, "j"),
    ROW(pipe2, "jK"),
    ROW(sendfile, "ddpu"),
    ROW(copy_file_range, "dpdpux"),
    ROW(splice, "dpdpux"),
    ROW(preadv, "didd"),
    ROW(tee, "ddux"),
    ROW(openat2, "fspu"),
    ROW(pwritev, "dvdd"),
    PARTIAL(preadv2, "dpddxx", "the RWF_ flags are accepted but have no effect"),
    PARTIAL(pwritev2, "dpddxx", "the RWF_ flags are accepted but have no effect"),
    PARTIAL(socket, "123",
	    "AF_UNIX, and AF_INET/AF_INET6 TCP and UDP on the sandbox's loopback; raw and packet "
	    "sockets are EPERM (no CAP_NET_RAW), other families EAFNOSUPPORT"),
    ROW(connect, "d*d"),
    ROW(accept, "d'\\l"),
    PARTIAL(sendto, "dbu$*d",
	    "MSG_OOB: TCP urgent data reaches a peer that set SO_OOBINLINE in line; otherwise "
	    "EOPNOTSUPP"),
    PARTIAL(recvfrom, "dBu$'\\l", "MSG_OOB is EOPNOTSUPP (TCP: EINVAL, there is no urgent data)"),
    PARTIAL(sendmsg, "d;$",
	    "control messages SCM_RIGHTS and SCM_CREDENTIALS on AF_UNIX; IP-level ones are "
	    "accepted and ignored; MSG_OOB only in line, to a TCP peer with SO_OOBINLINE, "
	    "otherwise EOPNOTSUPP"),
    PARTIAL(recvmsg, "d`$",
	    "AF_INET/AF_INET6 deliver no control messages (IP_PKTINFO, timestamps); MSG_OOB is "
	    "EOPNOTSUPP"),
    ROW(shutdown, "d~"),
    ROW(bind, "d*d"),
    ROW(listen, "dd"),
    ROW(getsockname, "d'\\l"),
    ROW(getpeername, "d'\\l"),
    ROW(socketpair, "123j"),
    PARTIAL(setsockopt, "d<>+d",
	    "multicast membership is ENODEV (lo does not do multicast); IP and TCP options are "
	    "kept and read back, most without effect on loopback; SO_LINGER only resets"),
    ROW(getsockopt, "d<>=\\l"),
    ROW(accept4, "d'\\l,"),
    ROW(recvmmsg, "dpuxp"),
    ROW(sendmmsg, "dpux"),
    ROW(mkdir, "so"),
    ROW(mkdirat, "fso"),
    ROW(mknod, "sox"),
    ROW(mknodat, "fsox"),
    ROW(unlink, "s"),
    ROW(unlinkat, "fsT"),
    ROW(rmdir, "s"),
    ROW(rename, "ss"),
    ROW(renameat, "fsfs"),
    ROW(renameat2, "fsfsx"),
    ROW(link, "ss"),
    ROW(linkat, "fsfsT"),
    ROW(symlink, "ss"),
    ROW(symlinkat, "sfs"),
    ROW(chmod, "so"),
    ROW(fchmod, "do"),
    ROW(fchmodat, "fso"),
    ROW(chown, "sdd"),
    ROW(fchown, "ddd"),
    ROW(lchown, "sdd"),
    ROW(fchownat, "fsddT"),
    ROW(truncate, "sd"),
    ROW(ftruncate, "dd"),
    PARTIAL(fallocate, "dxdd",
	    "FALLOC_FL_ZERO_RANGE, COLLAPSE_RANGE, INSERT_RANGE and UNSHARE_RANGE are EOPNOTSUPP"),
    PARTIAL(unshare, "x", "new namespaces (CLONE_NEW*) are ENOSYS, as in clone"),
    ROW(fadvise64, "ddd#"),
    ROW(readahead, "ddu"),
    ROW(close_range, "uux"),
    ROW(utimensat, "fs0T"),
    ROW(futimesat, "fsp"),
    ROW(utimes, "sp"),
    ROW(utime, "sp"),
    ROW(creat, "so"),
    ROW(statfs, "s\\s"),
    PARTIAL(fstatfs, "d\\s",
	    "pipes, sockets and anonymous files answer as pipefs, sockfs and anon_inodefs; a "
	    "descriptor handed in from the host (stdio) is ENOSYS"),
    ROW(fsync, "d"),
    PARTIAL(setxattr, "sspux", XATTR_NOTE),
    PARTIAL(lsetxattr, "sspux", XATTR_NOTE),
    PARTIAL(fsetxattr, "dspux", XATTR_NOTE),
    PARTIAL(getxattr, "sspu", XATTR_NOTE),
    PARTIAL(lgetxattr, "sspu", XATTR_NOTE),
    PARTIAL(fgetxattr, "dspu", XATTR_NOTE),
    PARTIAL(listxattr, "spu", XATTR_NOTE),
    PARTIAL(llistxattr, "spu", XATTR_NOTE),
    PARTIAL(flistxattr, "dpu", XATTR_NOTE),
    PARTIAL(removexattr, "ss", XATTR_NOTE),
    PARTIAL(lremovexattr, "ss", XATTR_NOTE),
    PARTIAL(fremovexattr, "ds", XATTR_NOTE),
    ROW(fdatasync, "d"),
    ROW(sync_file_range, "dddx"),
    ROW(sync, ""),
    ROW(syncfs, "d"),
    ROW(chroot, "s"),
    PARTIAL(memfd_create, "sx", "MFD_HUGETLB is EINVAL (there are no huge pages)"),
    ROW(flock, "dx"),
    ROW(setuid, "d"),
    ROW(setgid, "d"),
    ROW(setreuid, "dd"),
    ROW(setregid, "dd"),
    ROW(setresuid, "ddd"),
    ROW(setresgid, "ddd"),
    PARTIAL(setfsuid, "d", "there are no separate filesystem ids: it changes the effective uid"),
    PARTIAL(setfsgid, "d", "there are no separate filesystem ids: it changes the effective gid"),
    ROW(setgroups, "d\\g"),
    PARTIAL(mount, "\"\"\"|\"",
	    "new tmpfs, proc and sysfs mounts only: bind, move, remount and propagation changes "
	    "are EOPNOTSUPP, other filesystem types ENODEV"),
    ROW(umount2, "s/"),
    ROW(nanosleep, "tz"),
    PARTIAL(clock_nanosleep, "cxtz", "CPU-time clocks are EOPNOTSUPP"),
    ROW(rt_sigtimedwait, "kptu"),
    PARTIAL(futex, "pUdpph",
	    "the requeue-to-PI operations (FUTEX_WAIT_REQUEUE_PI, CMP_REQUEUE_PI) are ENOSYS; "
	    "LOCK_PI and UNLOCK_PI hand the lock over in order, with no priority to inherit"),
    ROW(futex_waitv, "puxpd"),
    ROW(syslog, "dpd"),
    ROW(io_setup, "up"),
    ROW(io_destroy, "x"),
    PARTIAL(io_submit, "xdp",
	    "requests are carried out when submitted (their completions wait in the ring); "
	    "IOCB_CMD_POLL is EINVAL"),
    ROW(io_getevents, "xddpt"),
    PARTIAL(io_cancel, "xpp", "no request is ever in flight to cancel: EINVAL"),
    ROW(signalfd, "dpu"),
    ROW(signalfd4, "dpux"),
    /* inotify (sentry/sys_inotify.c, vfs/inotify.c) */
    ROW(inotify_init, ""),
    ROW(inotify_init1, "x"),
    PARTIAL(inotify_add_watch, "dsx", INOTIFY_NOTE),
    ROW(inotify_rm_watch, "dd"),
    ROW(sched_getaffinity, "du\\a"),
    PARTIAL(sched_setaffinity, "dup",
	    "the mask is kept and reported but does not pin guest threads to host CPUs"),
    ROW(sched_getscheduler, "d"),
    ROW(sched_getparam, "dp"),
    PARTIAL(sched_setscheduler, "ddp",
	    "the policy and priority are kept and reported but do not reach the host scheduler"),
    PARTIAL(sched_setparam, "dp",
	    "the priority is kept and reported but does not reach the host scheduler"),
    ROW(sched_rr_get_interval, "dp"),
    PARTIAL(sched_setattr, "dpx",
	    "as sched_setscheduler and setpriority; utilisation clamps are EOPNOTSUPP (a kernel "
	    "without CONFIG_UCLAMP_TASK), SCHED_DEADLINE is EBUSY (no bandwidth to admit), a fair "
	    "policy's sched_runtime (custom slice) is not kept"),
    ROW(sched_getattr, "dpux"),
    PARTIAL(ioprio_set, "ddx",
	    "the class and level are kept and reported; no I/O is scheduled by them"),
    ROW(ioprio_get, "dd"),
    ROW(sched_get_priority_max, "d"),
    ROW(sched_get_priority_min, "d"),
    PARTIAL(getrusage, ").", "only ru_utime (all CPU time counts as user time) and ru_maxrss"),
    PARTIAL(times, "\\T", "all CPU time counts as user time: tms_stime and tms_cstime are 0"),
    ROW(sysinfo, "\\i"),
    ROW(getpriority, "\\wd"),
    ROW(setpriority, "\\wdd"),
    PARTIAL(capget, "pp", "no file capabilities"),
    PARTIAL(capset, "pp",
	    "the sets follow Linux's rules; CAP_SETUID, CAP_SETGID, CAP_SETPCAP and CAP_SYS_NICE "
	    "are checked against them, other privileges against the effective uid"),
    ROW(getcpu, "::p"),
    PARTIAL(
	membarrier, "ddd",
	"the RSEQ commands are EINVAL (restartable sequences are not offered); every barrier is "
	"the host's global expedited one over the stubs (sentry/membarrier.c)"),
    ROW(poll, "Qud"),
    ROW(epoll_create, "d"),
    ROW(epoll_create1, "5"),
    ROW(epoll_ctl, "d6d7"),
    ROW(epoll_wait, "d8dd"),
    ROW(epoll_pwait, "d8ddku"),
    ROW(epoll_pwait2, "d8dtku"),
    ROW(eventfd, "u"),
    ROW(eventfd2, "u4"),
    ROW(ppoll, "Qutku"),
    ROW(select, "d[[[("),
    ROW(pselect6, "d[[[t]"),
    ROW(getitimer, "!}"),
    ROW(setitimer, "!{}"),
    ROW(alarm, "u"),
    PARTIAL(timer_create, "dpp",
	    "the thread CPU-time, raw, coarse and alarm clocks are EOPNOTSUPP"),
    ROW(timer_settime, "dxpp"),
    ROW(timer_gettime, "dp"),
    ROW(timer_getoverrun, "d"),
    ROW(timer_delete, "d"),
    ROW(timerfd_create, "dx"),
    ROW(timerfd_settime, "dxpp"),
    ROW(timerfd_gettime, "dp"),
    ROW(mq_open, "\"Fop"),
    ROW(mq_unlink, "\""),
    ROW(mq_timedsend, "dbuut"),
    ROW(mq_timedreceive, "dBupt"),
    PARTIAL(mq_notify, "dp",
	    "SIGEV_THREAD (glibc's netlink-socket notification) is ENOSYS; SIGEV_SIGNAL and "
	    "SIGEV_NONE are served"),
    ROW(mq_getsetattr, "dpp"),
    /* System V IPC (sentry/ipc*.c) */
    PARTIAL(shmget, "xux",
	    "SHM_HUGETLB is EINVAL; a segment larger than the memory file can hold (about 1 TiB) "
	    "is ENOMEM"),
    ROWX(shmat, "dpx"),
    ROW(shmdt, "p"),
    PARTIAL(shmctl, "ddp", "SHM_LOCK keeps the flag and its permission; no page is pinned"),
    ROW(semget, "xdx"),
    ROW(semop, "dpu"),
    ROW(semtimedop, "dput"),
    ROW(semctl, "dddx"),
    ROW(msgget, "xx"),
    ROW(msgsnd, "dpux"),
    ROW(msgrcv, "dpudx"),
    ROW(msgctl, "ddp"),
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

bool syscall_quiet;

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
	if (syscall_quiet)
		return;
	fprintf(stderr, "minisentry: unimplemented syscall %s (%ld): returning ENOSYS\n",
		name ? name : "unknown", nr);
}

/* What the syscall being served met that is not implemented, for its --strace line. */
static char unsupported_now[96];

long syscall_unsupported(struct task *t, long err, const char *what, ...)
{
	static char reported[64][sizeof(unsupported_now) + 24]; /* "nr what", once each */
	static int nreported;
	const char *name = syscall_name(t->sc.nr);
	char key[sizeof(reported[0])];
	va_list ap;

	va_start(ap, what);
	vsnprintf(unsupported_now, sizeof(unsupported_now), what, ap);
	va_end(ap);
	snprintf(key, sizeof(key), "%ld %s", t->sc.nr, unsupported_now);
	for (int i = 0; i < nreported; i++)
		if (!strcmp(reported[i], key))
			return err;
	if (nreported < 64)
		memcpy(reported[nreported++], key, sizeof(key));
	if (syscall_quiet)
		return err;
	fprintf(stderr, "minisentry: %s: %s is not supported: returning %s\n",
		name ? name : "syscall", unsupported_now,
		strerrorname_np(-err) ? strerrorname_np(-err) : "an error");
	return err;
}

const char *syscall_unsupported_now(void)
{
	return unsupported_now[0] ? unsupported_now : NULL;
}

static const char *const support_names[] = {
    [SYSCALL_SUPPORTED] = "Supported",
    [SYSCALL_PARTIAL] = "Partial",
    [SYSCALL_UNIMPLEMENTED] = "Unimplemented",
};

void syscall_table_markdown(FILE *out)
{
	int count[3] = {0};

	for (int nr = 0; nr < SYSCALL_MAX; nr++)
		if (table[nr].fn)
			count[table[nr].support]++;
	fprintf(out,
		"# Syscalls\n\n"
		"<!-- Written by `minisentry --syscall-table` from the table in sentry/syscall.c; "
		"`make lint` checks that it matches. -->\n\n");
	fprintf(
	    out,
	    "The x86_64 syscalls minisentry serves, marked as in gVisor's table: Supported (%d),\n"
	    "Partial (%d: the note says what is missing) and Unimplemented (%d: the handler\n"
	    "answers ENOSYS on purpose). Every number not listed is unimplemented too: it returns\n"
	    "ENOSYS and is named once on stderr. A partial call that meets a missing part names "
	    "it\n"
	    "once on stderr as well, and `--strace` marks its line.\n\n",
	    count[SYSCALL_SUPPORTED], count[SYSCALL_PARTIAL], count[SYSCALL_UNIMPLEMENTED]);
	fprintf(out, "| # | syscall | support | note |\n|---|---|---|---|\n");
	for (int nr = 0; nr < SYSCALL_MAX; nr++)
		if (table[nr].fn)
			fprintf(out, "| %d | %s | %s | %s |\n", nr, table[nr].name,
				support_names[table[nr].support],
				table[nr].note ? table[nr].note : "");
}

long syscall_dispatch(struct task *t)
{
	const struct syscall_def *def = syscall_def(t->sc.nr);
	long ret;

	kernel.current = t;
	unsupported_now[0] = 0;
	t->nsyscalls++;
	if (!t->sc.native) {
		ret = -ENOSYS; /* i386 syscalls through int $0x80 are refused */
	} else if (t->sc.nr == SAVE_RESTORE_TEST_SYSCALL && kernel.cfg.save_restore_test) {
		ret = control_save_restore_test(t);
	} else if (!def) {
		report_unimplemented(t->sc.nr);
		ret = -ENOSYS;
	} else {
		if (kernel.cfg.strace && !t->blk.retry)
			strace_enter(t);
		ret = def->fn(t, t->sc.args);
	}
	/* Guest memory the handler wrote where no guard covered it, past --memory: into the
	 * memory file (the OOM killer making room) before any guest thread can look. */
	memfile_settle();
	if (kernel.cfg.strace && (ret != -ESENTRY_BLOCK || !t->blk.retry))
		strace_print(t, ret);
	return ret;
}
