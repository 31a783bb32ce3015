/* The rows of the Sentry's own seccomp allowlist (docs/security.md has every row with its
 * reason): exactly the host system calls a locked Sentry makes, compiled with libseccomp. The
 * build compiles them once (scripts/gen-seccomp.c) into the program sentry/hostpolicy.c
 * installs, so a start does not pay libseccomp's compilation; tests/unit/test_hostpolicy.c
 * checks that the embedded program is what this file compiles at run time. */
#include "sentry/hostpolicy.h"

#include "platform/platform.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/fs.h>
#include <linux/membarrier.h>
#include <linux/userfaultfd.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/socket.h>
#include <linux/sockios.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <termios.h>
#include <unistd.h>

/* The stub threads platform_thread_new injects (the Sentry's worker threads are made with them
 * too, plus what glibc's pthread_create adds). */
#define STUB_THREAD_FLAGS                                                                          \
	(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM)
/* Linux 6.7's ioctl on /proc/PID/pagemap (mem/pagediff.c), which the headers may predate:
 * its argument is 12 64-bit words. */
#ifndef PAGEMAP_SCAN
#define PAGEMAP_SCAN _IOWR('f', 16, uint64_t[12])
#endif
/* What glibc's pthread_create passes to clone (clone3 is refused with ENOSYS below). */
#define PTHREAD_FLAGS                                                                              \
	(STUB_THREAD_FLAGS | CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID)

struct rule {
	int nr;
	unsigned int nargs;
	struct scmp_arg_cmp arg[2];
};

#define ANY(name)                                                                                  \
	{                                                                                          \
		SCMP_SYS(name), 0,                                                                 \
		{                                                                                  \
			{                                                                          \
				0, 0, 0, 0                                                         \
			}                                                                          \
		}                                                                                  \
	}
#define ONE(name, a)                                                                               \
	{                                                                                          \
		SCMP_SYS(name), 1,                                                                 \
		{                                                                                  \
			a,                                                                         \
			{                                                                          \
				0, 0, 0, 0                                                         \
			}                                                                          \
		}                                                                                  \
	}
#define TWO(name, a, b)                                                                            \
	{                                                                                          \
		SCMP_SYS(name), 2,                                                                 \
		{                                                                                  \
			a, b                                                                       \
		}                                                                                  \
	}
#define EQ(i, v)                                                                                   \
	{                                                                                          \
		(i), SCMP_CMP_EQ, (v), 0                                                           \
	}
#define MASKED(i, mask, v)                                                                         \
	{                                                                                          \
		(i), SCMP_CMP_MASKED_EQ, (mask), (v)                                               \
	}

static const struct rule rules[] = {
    /* Descriptors the Sentry holds: stdio, the memory file, the rootfs and its names, the
     * event loop's, the control socket and a checkpoint's directory. */
    ANY(read),
    ANY(write),
    ANY(readv),
    ANY(writev),
    ANY(pread64),
    ANY(preadv),
    ANY(pwrite64),
    ANY(lseek),
    ANY(close),
    ANY(close_range),
    ANY(dup),
    ANY(fcntl),
    ANY(fstat),
    ANY(newfstatat),
    ANY(statx),
    ANY(fstatfs),
    ANY(getdents64),
    ANY(readlinkat),
    /* Lower-layer names, one component beneath an O_PATH descriptor (vfs/hostfs.c). The
     * RESOLVE_ flags are in a structure seccomp cannot read; its size at least is pinned. */
    ONE(openat2, EQ(3, sizeof(struct open_how))),
    /* /proc/self of our own PID namespace, and image files: a file is created only new. */
    ONE(openat, MASKED(2, O_CREAT, 0)),
    ONE(openat, MASKED(2, O_CREAT | O_EXCL, O_CREAT | O_EXCL)),
    ANY(mkdirat),
    ANY(unlinkat),
    ANY(renameat),
    ANY(renameat2),
    /* Writable bind mounts (vfs/hostfs.c): one name beneath a held directory of the bind's
     * detached mount (nosymfollow), or the object of a held descriptor by /proc/self/fd/N. */
    ANY(symlinkat),
    ANY(linkat),
    ANY(fchmodat),
    ANY(utimensat),
    /* The memory file: holes punched when guest memory is freed, and copy on write's copies
     * made inside it (mem/memfile.c), which read and write no more than read and write may. */
    ANY(fallocate),
    ANY(ftruncate),
    ANY(copy_file_range),
    /* The file cache: a lower-layer file's pages copied into the memory file in the kernel. */
    ANY(sendfile),
    /* The sandbox's terminal: the requests vfs/hostfd.c forwards, and isatty/tcsetattr. */
    ONE(ioctl, EQ(1, TCGETS)),
    ONE(ioctl, EQ(1, TCSETS)),
    ONE(ioctl, EQ(1, TCSETSW)),
    ONE(ioctl, EQ(1, TCSETSF)),
    ONE(ioctl, EQ(1, TIOCGWINSZ)),
    ONE(ioctl, EQ(1, TIOCSWINSZ)),
    ONE(ioctl, EQ(1, FIONREAD)),
    ONE(ioctl, EQ(1, TIOCOUTQ)),
    ONE(ioctl, EQ(1, TCFLSH)),
    ONE(ioctl, EQ(1, TCXONC)),
    ONE(ioctl, EQ(1, TCSBRK)),
    /* Memory: the Sentry's heap and its mapping of the memory file, never executable (the
     * stubs' mappings of guest code are injected into the stubs, which this filter does not
     * reach). */
    ONE(mmap, MASKED(2, PROT_EXEC, 0)),
    ANY(munmap),
    ONE(mprotect, MASKED(2, PROT_EXEC, 0)),
    ANY(mremap),
    ANY(madvise),
    ANY(brk),
    /* Which pages of the memory file are in memory: where its data ends (mem/memfile.c). */
    ANY(mincore),
    /* The event loop. */
    ANY(epoll_create1),
    ANY(epoll_ctl),
    ANY(epoll_wait),
    ANY(epoll_pwait),
    ANY(poll),
    ANY(ppoll),
    ANY(timerfd_create),
    ANY(timerfd_settime),
    ANY(timerfd_gettime),
    ANY(signalfd4),
    ANY(rt_sigtimedwait),
    /* Signals: its own handlers and masks; SIGKILL for stubs; its own threads only (raise). */
    ANY(rt_sigaction),
    ANY(rt_sigprocmask),
    ANY(rt_sigreturn),
    ONE(kill, EQ(1, SIGKILL)),
    ONE(tgkill, EQ(0, 1)),
    /* The seccomp platform stops a running guest thread with this signal. */
    ONE(tgkill, EQ(2, PLATFORM_SIGPARK)),
    /* Stubs: traced from their birth (the factory was seized before the lock), driven,
     * waited for. */
    ANY(wait4),
    ANY(waitid),
    ANY(exit),
    ANY(exit_group),
    ONE(ptrace, EQ(0, PTRACE_INTERRUPT)),
    ONE(ptrace, EQ(0, PTRACE_CONT)),
    ONE(ptrace, EQ(0, PTRACE_SYSEMU)),
    ONE(ptrace, EQ(0, PTRACE_GETREGS)),
    ONE(ptrace, EQ(0, PTRACE_SETREGS)),
    ONE(ptrace, EQ(0, PTRACE_GETREGSET)),
    ONE(ptrace, EQ(0, PTRACE_SETREGSET)),
    ONE(ptrace, EQ(0, PTRACE_GETSIGINFO)),
    ONE(ptrace, EQ(0, PTRACE_PEEKUSER)),
    ONE(ptrace, EQ(0, PTRACE_POKEUSER)),
    ONE(ptrace, EQ(0, PTRACE_GET_SYSCALL_INFO)),
    ONE(ptrace, EQ(0, PTRACE_DETACH)), /* the seccomp platform lets a new stub go */
    /* Its own capability sets, read (--selftest-confinement checks they are empty). */
    ANY(capget),
    ONE(prctl, EQ(0, PR_CAPBSET_READ)),
    /* Its own resource limits, read: a new task's start from them (sentry/task.c). */
    TWO(prlimit64, EQ(0, 0), EQ(2, 0)),
    /* Placement: stub threads' CPUs, and their CPU time. */
    ANY(sched_getaffinity),
    ANY(sched_setaffinity),
    ANY(sched_yield),
    ANY(getcpu),
    /* A guest's membarrier: a barrier on every CPU that runs a stub (sentry/membarrier.c). */
    TWO(membarrier, EQ(0, MEMBARRIER_CMD_GLOBAL_EXPEDITED), EQ(1, 0)),
    TWO(membarrier, EQ(0, MEMBARRIER_CMD_GLOBAL), EQ(1, 0)),
    ANY(setitimer),
    /* Time, identity and randomness the guest is told about. */
    ANY(clock_gettime),
    ANY(clock_getres),
    ANY(clock_nanosleep),
    ANY(nanosleep),
    ANY(gettimeofday),
    ANY(time),
    ANY(getrusage),
    ANY(sysinfo),
    ANY(uname),
    ANY(getpid),
    ANY(gettid),
    ANY(getppid),
    ANY(getuid),
    ANY(geteuid),
    ANY(getgid),
    ANY(getegid),
    ANY(getrandom),
    /* The control socket: a checkpoint request, with the descriptor it brings (SCM_RIGHTS),
     * on an accepted connection. The Sentry makes no socket once locked: no socket, connect,
     * bind or sendto, so it reaches no Unix socket of the host by its path (with the host's
     * root as ROOTFS there are many beneath it), and there is no network in its namespace. */
    ANY(accept4),
    ANY(recvmsg),
    /* And one descriptor back on an accepted connection: the memory file's reconfiguration
     * context, for the client of an `update` that may resize it (sentry/control.c). A stream
     * connection has its peer: sendmsg reaches no other socket through it; the Sentry holds
     * no datagram socket of its own (it makes none; the stubs' socket is a connected pair
     * whose Sentry end is shut for writing). */
    ANY(sendmsg),
    /* Checkpoint and restore of memory (mem/, docs/checkpoint.md): worker threads that read
     * and write the image's data files (glibc's pthread_create, after clone3's ENOSYS), a
     * lazy restore's fault and loader threads, woken by an eventfd; userfaultfds for missing
     * pages and for write tracking, the stubs' sent by the stubs themselves (recvmsg, on the
     * stubs' socket: platform/stubfd.c), driven by their own ioctls; the written pages found
     * with PAGEMAP_SCAN on the memory file's mapping and on the stubs' pagemaps; a lazily watched
     * stub's pages mapped on first touch (UFFDIO_CONTINUE, UFFDIO_COPY). A new thread
     * registers its robust list and glibc's rseq area first thing. */
    ONE(clone, EQ(0, PTHREAD_FLAGS)),
    ANY(set_robust_list),
    ANY(rseq),
    ANY(futex),
    ANY(eventfd2),
    ONE(userfaultfd, EQ(0, O_CLOEXEC | O_NONBLOCK)),
    ONE(userfaultfd, EQ(0, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY)),
    ONE(pidfd_open, EQ(1, 0)),
    ONE(ioctl, EQ(1, UFFDIO_API)),
    ONE(ioctl, EQ(1, UFFDIO_REGISTER)),
    ONE(ioctl, EQ(1, UFFDIO_UNREGISTER)),
    ONE(ioctl, EQ(1, UFFDIO_COPY)),
    ONE(ioctl, EQ(1, UFFDIO_ZEROPAGE)),
    ONE(ioctl, EQ(1, UFFDIO_WAKE)),
    ONE(ioctl, EQ(1, UFFDIO_WRITEPROTECT)),
    ONE(ioctl, EQ(1, UFFDIO_CONTINUE)),
    ONE(ioctl, EQ(1, PAGEMAP_SCAN)),
};

/* --network host (vfs/hostnet.c): the guest's IP sockets are host sockets the Sentry makes and
 * drives; only then is it left in the host's network namespace. */
static const struct rule host_network_rules[] = {
    ONE(socket, EQ(0, AF_INET)),
    ONE(socket, EQ(0, AF_INET6)),
    ONE(socket, EQ(0, AF_NETLINK)),
    ANY(bind),
    ANY(listen),
    ANY(connect),
    ANY(getsockname),
    ANY(getpeername),
    ANY(shutdown),
    ANY(setsockopt),
    ANY(getsockopt),
    ANY(sendto),
    ANY(recvfrom),
    ONE(ioctl, EQ(1, SIOCATMARK)),
    ONE(ioctl, EQ(1, SIOCOUTQNSD)),
    ONE(ioctl, EQ(1, SIOCGIFCONF)),
    ONE(ioctl, EQ(1, SIOCGIFFLAGS)),
    ONE(ioctl, EQ(1, SIOCGIFINDEX)),
    ONE(ioctl, EQ(1, SIOCGIFADDR)),
    ONE(ioctl, EQ(1, SIOCGIFNETMASK)),
    ONE(ioctl, EQ(1, SIOCGIFMTU)),
    ONE(ioctl, EQ(1, SIOCGIFNAME)),
    ONE(ioctl, EQ(1, SIOCGIFHWADDR)),
};

static int add_rules(scmp_filter_ctx ctx, const struct rule *rules, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct rule *r = &rules[i];
		int err = r->nargs
			      ? seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, r->nr, r->nargs, r->arg)
			      : seccomp_rule_add(ctx, SCMP_ACT_ALLOW, r->nr, 0);
		if (err)
			return err;
	}
	return 0;
}

/* A sanitizer build (SAN=1, tests only): LeakSanitizer's check at exit stops the Sentry's
 * threads from a thread of its own, which ptraces them (with the Sentry made dumpable for it),
 * and reads /proc/self with raw calls. */
static const struct rule sanitizer_rules[] = {
    ONE(prctl, EQ(0, PR_SET_PTRACER)),
    ONE(prctl, EQ(0, PR_GET_DUMPABLE)),
    ONE(prctl, EQ(0, PR_SET_DUMPABLE)),
    ONE(prctl, EQ(0, PR_SET_PDEATHSIG)),
    ANY(sigaltstack),
    ONE(open, MASKED(1, O_CREAT, 0)),
    ANY(getdents),
    ONE(clone, MASKED(0,
		      CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
			  CLONE_NEWUTS | CLONE_NEWCGROUP,
		      0)),
    ONE(ptrace, EQ(0, PTRACE_ATTACH)),
    ONE(ptrace, EQ(0, PTRACE_DETACH)),
    ANY(sched_getaffinity),
};

int hostpolicy_compile(enum confine_debug debug, bool host_network, bool sanitizer, int fd)
{
	uint32_t deflt = debug == CONFINE_DEBUG_TRAP  ? SCMP_ACT_TRAP
			 : debug == CONFINE_DEBUG_LOG ? SCMP_ACT_LOG
						      : SCMP_ACT_KILL_PROCESS;
	scmp_filter_ctx ctx = seccomp_init(deflt);
	int err = 0;

	if (!ctx)
		return -ENOMEM;
	/* A binary search on the syscall number: a ptrace on the syscall path is checked in a
	 * few comparisons. (Calls allowed whatever their arguments cost nothing: the kernel
	 * caches them.) */
	if ((err = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) ||
	    (err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2)))
		goto out;
	if ((err = add_rules(ctx, rules, sizeof(rules) / sizeof(rules[0]))))
		goto out;
	if (host_network &&
	    (err = add_rules(ctx, host_network_rules,
			     sizeof(host_network_rules) / sizeof(host_network_rules[0]))))
		goto out;
	if (sanitizer && (err = add_rules(ctx, sanitizer_rules,
					  sizeof(sanitizer_rules) / sizeof(sanitizer_rules[0]))))
		goto out;
	/* glibc tries clone3 first where it would use it, and falls back on ENOSYS. */
	if ((err = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0)))
		goto out;
	err = seccomp_export_bpf(ctx, fd);
out:
	seccomp_release(ctx);
	return err;
}
