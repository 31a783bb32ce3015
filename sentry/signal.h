/* Signals, entirely emulated: per-thread and per-process pending sets and queues, actions and
 * masks, delivery by writing an rt_sigframe on the guest stack, and the syscall restart rules
 * for a signal that interrupts a blocked syscall. Host signals never reach guest handlers. */
#ifndef SENTRY_SIGNAL_H
#define SENTRY_SIGNAL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

struct task;
struct sighand;

#define SIGBIT(s) (1ULL << ((s)-1))
#define UNBLOCKABLE (SIGBIT(SIGKILL) | SIGBIT(SIGSTOP))

/* Linux's internal restart codes: a syscall interrupted by a signal returns one of these, and
 * delivery turns it into -EINTR or a restart. Never seen by the guest. */
#define ERESTARTSYS 512	   /* restart if the handler has SA_RESTART (or there is none) */
#define ERESTARTNOINTR 513 /* always restart */
#define ERESTARTNOHAND 514 /* restart only if no handler runs */

struct sigqueued {
	siginfo_t info;
	struct sigqueued *next;
};

struct sigpending {
	uint64_t set;
	struct sigqueued *head; /* one entry per pending instance, in arrival order */
};

/* Queues SIG with INFO (NULL: SI_KERNEL-style info from the Sentry) for thread T. The signal
 * comes from inside the sandbox (a guest's kill, a pipe, a timer, a child's exit): the
 * sandbox's init drops it if its action is SIG_DFL, SIGKILL and SIGSTOP included, as Linux's
 * PID-namespace init does (pid_namespaces(7)). */
void signal_send_thread(struct task *t, int sig, const siginfo_t *info);
/* Queues SIG for the process whose leader is LEADER and wakes a thread that can take it; from
 * inside the sandbox, as above. */
void signal_send_process(struct task *leader, int sig, const siginfo_t *info);
/* The same, by the kernel's own decision (Linux's SEND_SIG_PRIV: the OOM killer, the hard
 * RLIMIT_CPU): SIGKILL ends even init. */
void signal_send_process_forced(struct task *leader, int sig, const siginfo_t *info);
/* A signal the host sent minisentry, passed on to LEADER: it reaches the sandbox's init as
 * it always did (a terminal's Ctrl-C ends the command that runs as init). */
void signal_send_process_from_host(struct task *leader, int sig, const siginfo_t *info);
/* The SIGCHLD info a parent gets for child C. */
siginfo_t *signal_child_info(struct task *c, siginfo_t *si);
#define SI_KERNEL_CHILD(c) signal_child_info((c), &(siginfo_t){0})

/* T's alternate signal stack, as Linux keeps it: whether SP lies on it (never, for an
 * SS_AUTODISARM one); setting it from SP as sigaltstack does (0, -EPERM while on it, -EINVAL,
 * -ENOMEM); and what sigaltstack reports of it from SP. */
bool signal_on_altstack(const struct task *t, uint64_t sp);
int signal_set_altstack(struct task *t, const stack_t *ss, uint64_t sp);
stack_t signal_get_altstack(const struct task *t, uint64_t sp);
/* Takes the lowest pending signal of SET for T (thread queue first); 0 if none. */
int signal_dequeue(struct task *t, uint64_t set, siginfo_t *info);
/* True if T has a pending signal it does not block. */
bool signal_pending(struct task *t);
/* Delivers T's pending signals before it returns to the guest. T is stopped; RET is the result
 * of the syscall it stopped in (or 0 with IN_SYSCALL false). Returns false if T is gone (a
 * fatal signal). Writes registers when a handler runs or a syscall restarts; otherwise sets
 * rax to the (converted) RET when IN_SYSCALL. */
bool signal_deliver(struct task *t, long ret, bool in_syscall);
/* Queues SIG with SI for T as Linux's force_sig_info does: unblocked, and back to SIG_DFL if
 * it was blocked or ignored (seccomp's SIGSYS); delivered when T next returns to the guest. */
void signal_force(struct task *t, int sig, const siginfo_t *si);
/* Whether SIG ending T's process reports a core dump (0x80 in the wait status). */
bool signal_dumps_core(const struct task *t, int sig);
/* A fault raised by T's own instruction: delivered to its handler or fatal. */
void signal_fault(struct task *t, int sig);
/* T stopped at a syscall whose instruction lies in the stub page (docs/platform.md), a range
 * the guest does not have: answered with the fault Linux gives for running code from an
 * unmapped page, not served. True if it was such a syscall. */
bool signal_stub_syscall(struct task *t);
void signal_free_pending(struct sigpending *p);
/* signalfd.c: a signal was queued somewhere; signalfd readers look again. */
void signalfd_notify(void);
/* Makes signalfd files checkpointable (vfs_file_kind_register): called once at start, before
 * a checkpoint or a restore; 0 or -EEXIST when registered already, -ENOMEM. */
int signalfd_register_kind(void);
/* After a sigaction: if SIG is now ignored, its pending instances in T's process go. */
void signal_flush_ignored(struct task *t, int sig);

/* Checkpoint: handler tables are a kind (CK_SIGHAND, state/codec.h); a pending set with its
 * queue is part of a task's record. */
struct enc;
struct dec;
/* Exec resets every handled signal's action to the default (ignored ones stay ignored):
 * sighand_exec_prepare makes SH's table its own if that changes anything (0 or -ENOMEM),
 * before the point of no return; sighand_exec_reset then resets. */
int sighand_exec_prepare(struct sighand *sh);
void sighand_exec_reset(struct sighand *sh);
/* Recomputes SH's ignored and caught masks: called after every change of SH->sa. */
void sighand_changed(struct sighand *sh);
int sighand_save(struct enc *e, const void *sh);
void *sighand_load(struct dec *d);
void sighand_drop(void *sh);
void sigpending_save(struct enc *e, const struct sigpending *p);
void sigpending_load(struct dec *d, struct sigpending *p);

#endif
