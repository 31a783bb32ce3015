/* The syscall table: one row per x86_64 syscall number with its name, handler, argument
 * formats (which drive --strace) and how much of it is there. The table is the index of the
 * kernel: a syscall without a handler returns -ENOSYS and is named once on stderr, and a
 * partial one says what is missing (--strace, stderr, docs/syscalls.md). */
#ifndef SENTRY_SYSCALL_H
#define SENTRY_SYSCALL_H

#include <stdbool.h>
#include <stdio.h>

struct task;

typedef long (*syscall_fn)(struct task *t, const unsigned long *a);

/* Argument format letters (sentry/strace.c decodes them as strace does):
 *   d int, u unsigned, x hex, p pointer, s path, b buffer whose length is the next argument,
 *   f fd (AT_FDCWD), o octal mode, F open flags, K O_CLOEXEC|O_NONBLOCK, P mmap prot, M mmap
 *   flags, S signal, H sigprocmask how, A argv, E envp, R arch_prctl code, L rlimit resource,
 *   l rlimit, W wait options, G getrandom flags, a sigaction, k sigset, t timespec, c clock
 *   id, T AT_ flags, O access mode, e lseek whence, Q pollfds, U futex op, h futex val3,
 *   v iovecs, 1 2 3 socket family, type and protocol, 4 eventfd flags, 5 epoll_create1
 *   flags, 6 epoll_ctl op, 7 epoll_event, 9 madvise advice, 0 utimensat times, # fadvise
 *   advice, % statx flags, & statx mask, * sockaddr (length next), $ MSG_ flags, ~ shutdown
 *   how, C fcntl command, X FD_CLOEXEC, I ioctl request, ? an ioctl's structure, - TCFLSH
 *   queue, [ select fd set, ( timeval, ] pselect6 sigmask, ^ stack_t, ! itimer, { itimerval,
 *   ) rusage who, < socket option level, > option name, + option value (length next),
 *   , accept4 flags, | mount flags, / umount flags, " string, ; msghdr,
 *   J int, n prctl option (fcntl, ioctl, prctl, futex, open, openat and mount choose theirs
 *   by command or flags);
 * and what the call writes, decoded after it:
 *   B buffer of the result's length, g the same in hex, Z string, r rlimit, q sigaction,
 *   m sigset, y stat, N utsname, j int[2], D dirents, V timespec, z timespec left of a
 *   sleep, w wait status, i iovecs, 8 epoll events, Y an ioctl's structure, @ statx,
 *   _ stack_t, } itimerval, . rusage, = getsockopt value, : int, ` msghdr received,
 *   ' sockaddr (its length at the next argument).
 * A backslash and a letter are one argument of a second set: \w getpriority's which, \g
 * setgroups' list, \o seccomp's operation, \f its filter flags; written by the call: \G getgroups'
 * list, \T tms, \i sysinfo, \s statfs, \a CPU set, \l an in/out length ([128 => 16]). */
/* How much of a syscall is there, as in gVisor's table. */
enum syscall_support {
	SYSCALL_SUPPORTED,
	SYSCALL_PARTIAL, /* some flags, operations or cases are missing: the note says which */
	SYSCALL_UNIMPLEMENTED, /* -ENOSYS on purpose, quietly: the note says why */
};

struct syscall_def {
	const char *name;
	syscall_fn fn;
	const char *args;
	char ret; /* 'd' (default) or 'x' for addresses */
	enum syscall_support support;
	const char *note; /* what a partial or unimplemented row lacks */
};

#define SYSCALL_MAX 512

const struct syscall_def *syscall_def(long nr);
const char *syscall_name(long nr);

/* Serves T's current syscall (t->sc). Returns the guest-visible result, or -ESENTRY_BLOCK. */
long syscall_dispatch(struct task *t);

/* A handler met a part of its syscall that this kernel does not implement (WHAT,
 * printf-style: "set_tid", "flags 0x20000000"): names it on stderr once per syscall and WHAT,
 * marks the call's --strace line, and returns ERR for the handler to return. */
long syscall_unsupported(struct task *t, long err, const char *what, ...)
    __attribute__((format(printf, 3, 4)));
/* --quiet: unimplemented and unsupported syscalls are not named on stderr (they still fail
 * the same way, and --strace still shows them). */
extern bool syscall_quiet;

/* What the current syscall met that is unsupported (syscall_unsupported), or NULL. */
const char *syscall_unsupported_now(void);

/* --strace, as strace(1) -f prints: STRACE_ENTER formats the call before its handler runs (its
 * arguments may not survive it: an execve's argv), STRACE_PRINT prints it with its result,
 * STRACE_SIGNAL a signal taken by T (`--- SIGCHLD {...} ---`), STRACE_EXIT the end of T's
 * process (`+++ exited with N +++`). Lines carry `[pid N]` only while there is more than
 * one task. Output goes to stderr, or to STRACE_SET_OUTPUT's stream. STRACE_OPEN sends it to
 * the host file PATH (--strace -o), made if missing, emptied unless APPEND: it must be called
 * before confine_lock, which leaves the Sentry no host path to open; 0 or a negative errno. */
void strace_enter(struct task *t);
void strace_print(struct task *t, long ret);
void strace_signal(struct task *t, const void *siginfo);
/* A signal sent to T that it ignores, which the kernel discards: strace still shows it. */
void strace_ignored_signal(struct task *t, const void *siginfo);
void strace_exit(struct task *t, int status);
/* The end of thread T while its process lives on (`+++ exited with N +++` all the same). */
void strace_exit_thread(struct task *t, int status);
void strace_set_output(FILE *out);
/* The execve that started T (a program the Sentry loaded itself: init, `exec`), as strace
 * prints the command it runs: PATH and ARGV, ENVP the address of its ENVC-entry environment. */
void strace_exec_init(struct task *t, const char *path, char *const argv[], unsigned long envp,
		      int envc);
int strace_open(const char *path, bool append);

/* docs/syscalls.md, written from the table (`minisentry --syscall-table`). */
void syscall_table_markdown(FILE *out);

#endif
