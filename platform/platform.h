/* platform — how guest code is run and stopped. The ptrace platform runs each guest address
 * space in a stub process (a fork of the stub factory, a process that holds nothing but the
 * stub page) and each guest thread as a host thread of it, stopped at every syscall by
 * PTRACE_SYSEMU.
 * The Sentry's syscall code sees only this interface, so a faster platform (SIGSYS in the stub
 * with shared memory, seccomp USER_NOTIF) can be added without changing it. */
#ifndef PLATFORM_PLATFORM_H
#define PLATFORM_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sched.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/user.h>

/* Where guest threads run relative to the Sentry (DESIGN.md §9). */
enum platform_placement {
	PLACEMENT_SAME,	 /* on the Sentry's CPU: cheapest syscall round trip */
	PLACEMENT_OTHER, /* on another CPU: for measuring, and for compute-bound guests */
	PLACEMENT_AUTO,	 /* by what each thread does: platform/placement.c */
};

/* How guest syscalls are intercepted (docs/platform.md). */
enum platform_kind {
	PLATFORM_PTRACE,  /* every syscall a PTRACE_SYSEMU stop of the stub thread */
	PLATFORM_SECCOMP, /* a seccomp SIGSYS handled in the stub, answered through shared memory */
};

/* The host signal that stops a running thread of the seccomp platform. */
#define PLATFORM_SIGPARK SIGUSR2

struct platform_systrap_stub;

/* A stub process: one guest address space, shared by its host threads. */
struct platform_stub {
	pid_t pid;
	int threads; /* platform_threads not yet released */
	bool killed;
	struct platform_stub *next, **pprev; /* in the list of all stubs */
	struct platform_systrap_stub *sys;   /* the seccomp platform's: its areas, its pidfd */
};

/* One host thread running guest code. */
struct platform_thread {
	pid_t tid;	/* host thread id */
	pid_t host_pid; /* host pid of its stub process */
	struct platform_stub *stub;
	/* PLACEMENT_AUTO (platform/placement.c): when it was last resumed, whether it runs now,
	 * whether it may run on any CPU and how many short runs in a row it made since; its place
	 * in the queue of running threads not spread that the tick looks at, and what the tick saw
	 * at its last look. */
	uint64_t resumed_ns;
	bool running;
	bool spread;
	int short_runs;
	bool look_queued;
	struct platform_thread *look_prev, *look_next;
	uint64_t tick_resumed, tick_cpu; /* the run and its process's CPU time then */
	/* Whether it runs away from the Sentry's CPU on trial (seccomp, docs/platform.md), and
	 * the window of events that measures it: their count (negative while it settles after a
	 * move), the Sentry's calls into its stub meanwhile, when it began; the windows of its
	 * trial still to come and the best of them; slow windows in a row after it; ns an event in
	 * its last window at home; no trial before trial_after_ns (backoff_ns after a failed one,
	 * doubling). */
	bool away, batch; /* batch: its host policy is SCHED_BATCH (set at a stop) */
	int win_events, win_injects, trial, slow;
	uint64_t win_start_ns, best_ns, home_ns, trial_after_ns, backoff_ns;
	void *owner; /* the Sentry's: whose thread this is (a cache it keeps and checks) */
	/* Private to the platform: its place in the tid table and, while it runs (resumed or
	 * interrupted), in the list platform_wait asks; whether its exit was reported. */
	struct platform_thread *hash_next;
	bool watched;
	struct platform_thread *w_prev, *w_next;
	bool exited;
	/* The seccomp platform's: its area (the Sentry's view), the area's slot in the stub,
	 * whether its last event was a syscall, its place in its stub's list of threads. */
	bool systrap;
	bool at_syscall;
	uint64_t interrupted_ns; /* when it was sent PLATFORM_SIGPARK, until it stops */
	int local;
	struct systrap_area *area;
	struct platform_thread *sib_next, **sib_pprev;
};

/* Stubs keep the memory file open as descriptor MEMFD. Maps the stub page into the Sentry,
 * where every later fork inherits it. Returns 0 or a negative errno. */
int platform_init(int memfd, enum platform_placement placement, enum platform_kind kind);
/* The seccomp platform: descriptors for the Sentry's event loop to wait on, edge-triggered
 * (a guest thread may have an event: platform_wait finds it; nothing to read), and
 * level-triggered (a stub died: call platform_take_fd_events). -1 and -1 under ptrace,
 * whose events come with SIGCHLD. */
int platform_event_fd(void);
int platform_exit_fd(void);
void platform_take_fd_events(void);
/* "ptrace" or "seccomp". */
const char *platform_name(void);
/* Whether this host can run the seccomp platform (its handler needs FSGSBASE). */
bool platform_seccomp_supported(void);

/* The CPUs the Sentry was allowed when it started (platform_init pins it to one of them):
 * where a helper thread of the Sentry may run beside it. */
void platform_start_cpus(cpu_set_t *set);

/* HOOK runs in the stub factory after the Sentry has seized it and before the stub page runs:
 * the Sentry's way to give stubs their own credentials (sentry/confine.c), which every stub
 * inherits. It does not return on failure (the factory exits). */
void platform_set_stub_hook(void (*hook)(void));
/* Starts the stub factory, which every later platform_stub_new forks: after
 * platform_set_stub_hook and before the Sentry confines itself (it is forked from the Sentry,
 * which a locked Sentry cannot do). Returns 0 or a negative errno. */
int platform_start(void);

/* The range [base, base+len) that the stub page occupies in every guest address space. */
uintptr_t platform_stub_base(void);
size_t platform_stub_len(void);
/* One past the highest user address on this CPU (0x7ffffffff000 without la57). */
uintptr_t platform_user_top(void);

/* Makes a new empty address space with one thread, stopped and ready for injections and
 * set_regs. Returns 0 or a negative errno; *OUT is heap-allocated. */
int platform_stub_new(struct platform_thread **out);
/* platform_stub_new, and a userfaultfd of the new address space in *UFFD (O_NONBLOCK, the
 * only reference: the stub keeps none, and before its UFFDIO_API), for a lazy restore to
 * serve its missing pages or for tracking its writes. */
int platform_stub_new_uffd(struct platform_thread **out, int *uffd);
/* A userfaultfd of the address space of stopped thread T, made in its stub by injection
 * (O_NONBLOCK, the only reference, before its UFFDIO_API): the descriptor, or a negative
 * errno. */
int platform_stub_uffd(struct platform_thread *t);
/* A new host thread in the stub of stopped thread PARENT, itself stopped and waiting for its
 * registers. */
int platform_thread_new(struct platform_thread *parent, struct platform_thread **out);
/* Ends host thread T and frees it: the last thread of a stub takes the stub with it; another
 * one is stopped if running and made to exit. */
void platform_thread_release(struct platform_thread *t);

/* Runs syscall NR with ARGS inside T's address space, at the stub's syscall instruction.
 * T must be stopped; its registers are preserved. Returns the host syscall's result (a
 * negative errno on failure) or a negative errno if the thread could not be driven. */
long platform_inject(struct platform_thread *t, long nr, const long args[6]);

enum platform_event_kind {
	PEV_SYSCALL, /* stopped at a guest syscall (not executed) */
	PEV_SIGNAL,  /* stopped with a host signal for the guest: a fault, or a signal sent to it */
	PEV_EXITED,  /* the host thread is gone: exited or killed */
	PEV_STOP,    /* another stop (group stop, ptrace event): just resume */
};

struct platform_event {
	enum platform_event_kind kind;
	pid_t tid;
	int sig;	 /* PEV_SIGNAL: signal number; PEV_EXITED: killing signal or 0 */
	int exit_status; /* PEV_EXITED by exit */
};

/* Waits for the next event from any guest thread. With BLOCK false returns -EAGAIN when there
 * is none: it asks only the threads that can have one, so what it costs does not grow with
 * the number of parked threads. */
int platform_wait(struct platform_event *ev, bool block);
/* A SIGCHLD named host thread TID (its si_pid): if it is not one platform_wait asks, the next
 * one looks at every thread. */
void platform_note_sigchld(pid_t tid);
/* The thread with host thread id TID, or NULL: a table lookup. */
struct platform_thread *platform_thread_by_tid(pid_t tid);

struct platform_syscall {
	long nr;
	unsigned long args[6];
	unsigned long ip, sp;
	bool native; /* false for i386 (int $0x80) syscalls, which are refused */
};

/* Reads the syscall T is stopped at (cheap: one PTRACE_GET_SYSCALL_INFO). */
int platform_syscall_info(struct platform_thread *t, struct platform_syscall *sc);
/* Sets the syscall's return value (cheap: one PTRACE_POKEUSER of rax). */
int platform_set_return(struct platform_thread *t, long ret);
/* Resumes T until its next syscall or signal; SIG is delivered to the host thread (0: none). */
int platform_resume(struct platform_thread *t, int sig);
/* T's syscall blocks: it will not be resumed soon, so it should not spin for its answer
 * (the seccomp platform's handler sleeps at once); nothing for ptrace. */
void platform_blocked(struct platform_thread *t);
/* T stopped (an event of its came in): with PLACEMENT_AUTO, where it runs follows how often
 * it stops (platform/placement.c). */
void platform_thread_stopped(struct platform_thread *t);
/* With PLACEMENT_AUTO, to be called every few milliseconds: a thread that has been computing
 * without a stop since the tick last looked at it may run on any CPU. A call looks at a
 * bounded number of running threads, however many there are. */
void platform_placement_tick(void);

int platform_get_regs(struct platform_thread *t, struct user_regs_struct *regs);
int platform_set_regs(struct platform_thread *t, const struct user_regs_struct *regs);
/* The size of the xsave area; get/set the FPU state in xsave layout. */
size_t platform_fpstate_size(void);
/* The state components the CPU saves (XCR0). */
uint64_t platform_xfeatures(void);
int platform_get_fpstate(struct platform_thread *t, void *buf, size_t len);
int platform_set_fpstate(struct platform_thread *t, const void *buf, size_t len);
int platform_get_siginfo(struct platform_thread *t, siginfo_t *si);

/* Lets a stopped host thread that no guest thread owns any more run on to its exit. */
void platform_continue_stray(pid_t tid);

/* Stops running thread T; the stop arrives as a PEV_STOP event. */
int platform_interrupt(struct platform_thread *t);

/* Kills the whole stub process of T (all its threads); their releases are then just frees. */
void platform_kill(struct platform_thread *t);
/* Kills every stub process there is (the end of a sandbox, whoever owns them), and the
 * factory: no stub can be made after it. */
void platform_kill_all(void);

#endif
