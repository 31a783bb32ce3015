/* struct task — a guest thread: identity, its address space, fd table, filesystem context,
 * signal state, limits, and where it stands in a syscall. Shared parts (mm, files, signal
 * handlers) are reference-counted so CLONE_VM/FILES/SIGHAND can share them. */
#ifndef SENTRY_TASK_H
#define SENTRY_TASK_H

#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>

#include "common/limits.h"
#include "platform/platform.h"
#include "vfs/vfs.h"
#include "vfs/waitq.h"
#include "sentry/seccomp.h"
#include "sentry/signal.h"

#define NSIG_GUEST 64

/* The kernel's struct sigaction for rt_sigaction (not libc's). */
struct ksigaction {
	uint64_t handler;
	uint64_t flags;
	uint64_t restorer;
	uint64_t mask;
};

/* A table of signal actions. A forked process shares its parent's until either changes one
 * (sighand_own): most children never do, or exec first, and the table is 2 KiB of the few
 * a process costs the Sentry (docs/platform.md, "What a process costs the Sentry"). */
struct sigactions {
	int refs; /* the sighands that use it */
	struct ksigaction act[NSIG_GUEST];
};

/* Signal actions, shared under CLONE_SIGHAND: one reference per task. */
struct sighand {
	int refs;
	struct sigactions *sa; /* read freely; changed only after sighand_own */
	/* Signals whose action is SIG_IGN, and those with a handler (bit N-1 for signal N):
	 * what /proc shows of every process, kept by sighand_changed at each change of SA. */
	uint64_t ignored, caught;
};

/* One blocking syscall of a task (DESIGN.md §4, sched.h: blocking = retry). A handler that
 * cannot finish registers what would let it progress and returns task_block(); after a
 * wake-up the loop runs the same handler again with RETRY set, and the handler finds here what
 * its earlier runs did.
 *
 * Lifetime. The waits, the wake-up time and the run queue are dropped by task_cancel_wait
 * before each retry, at exit and at teardown. RETRY and TIMED_OUT are cleared when a syscall
 * enters and when one finishes, INTR_RET when one finishes, INTERRUPTED once an interrupted
 * retry is over. SIGWAIT_SET must be empty outside rt_sigtimedwait (signal delivery reads it):
 * that handler clears it when it returns, and so does the end of an interrupted retry. The
 * other handlers' fields are written by a handler before it blocks and read only on its
 * retries: nothing clears them in between, so they may hold a past syscall's values.
 * PENDING_OPEN holds a reference, dropped by its handler or by task_release.
 *
 * Checkpoint. A blocked task is saved as "inside syscall SC" and retried after the restore,
 * which registers its waits again: the waits, the wake-up time and the run queue are not
 * saved, nor TIMED_OUT and INTERRUPTED, which last one run of a handler. Everything else is
 * (task_save). */
struct syscall_wait {
	/* sched.c's: whether the task is parked in its syscall, and what wakes it. */
	bool blocked;
	bool on_runq;
	struct task *runq_next;
	struct task_waiter *waiters;
	bool has_wake_at;
	struct timespec wake_at; /* monotonic (task_wait_until) */
	/* The retry itself (kernel.c). */
	bool retry;		/* the handler runs again after a wake-up */
	bool timed_out;		/* ... because WAKE_AT passed */
	bool interrupt_pending; /* a signal asked for the blocked syscall to end */
	bool interrupted; /* the retry is because a signal arrived: finish or return intr_ret */
	int intr_ret;	  /* what the syscall returns when a signal ends it */
	/* What handlers keep across their retries. */
	struct timespec deadline;      /* the syscall's own timeout, monotonic */
	size_t io_done;		       /* bytes a stream write or send already passed on */
	struct vfs_file *pending_open; /* a FIFO end opened, waiting for its partner */
	bool sigwait_zero;	       /* rt_sigtimedwait with a zero timeout */
	uint64_t sigwait_set; /* rt_sigtimedwait: signals that end the wait even if blocked */
	bool futex_woken, futex_timed;
	bool futex_requeued; /* FUTEX_REQUEUE moved it: it waits on FUTEX_KEY */
	uint64_t futex_key;
	/* --strace printed the call's entry part when it blocked (not saved: a restore's trace
	 * is a new one, which shows the whole call when it ends). */
	bool strace_shown;
};

/* The first 64 bytes are what walks of every task read (the task list, the tid hash, a
 * process's threads, procfs's pid list): one cache line per task, which matters at 10,000. */
struct task {
	pid_t tid, tgid, pgid, sid;
	struct task *group_leader; /* itself for a process's first thread */
	struct task *next;	   /* in the task list (for_each_task), or on kernel.dead */
	struct task *prev;	   /* in the task list: unlinking is O(1) */
	struct task *hash_next;	   /* in the tid hash */
	struct task *parent;	   /* the parent process's leader; NULL for init */
	int exit_signal;	   /* sent to the parent at exit (SIGCHLD, or none) */
	bool zombie;		   /* exited, waiting to be reaped by the parent */
	bool thread_gone;	   /* the leader's own thread exited; the process lives on */
	bool had_threads;	   /* on the leader: a CLONE_THREAD child was ever made */
	bool stopped;		   /* on the leader: the group is stopped (SIGSTOP & co) */
	int exit_status;	   /* wait status: code << 8, or a signal number (| 0x80 core) */
	struct timespec cpu_time;  /* CPU time of the process when it exited */
	struct timespec cpu_base;  /* on the leader: CPU time of its stubs before this one (exec,
				    * restore), which the host no longer counts */
	struct waitq child_wait;   /* woken when a child changes state (on the leader) */
	uid_t uid, euid, suid;
	gid_t gid, egid, sgid;
	gid_t *groups; /* supplementary groups */
	int ngroups;
	struct platform_thread *pt;
	struct mm *mm;
	struct fdtable *files;
	struct vfs_fs_ctx *fs; /* root, cwd, umask: shared under CLONE_FS (fs_new, fs_get) */
	struct sighand *sighand;
	uint64_t sigmask;
	struct sigpending pending;	  /* sent to this thread */
	struct sigpending shared_pending; /* sent to the process (on the leader) */
	/* On init's leader: a fault with no handler may kill it (Linux clears SIGNAL_UNKILLABLE
	 * for a forced signal); host signals queued for it, which reach it as they always did. */
	bool init_killable;
	uint64_t host_sigs;
	bool has_saved_sigmask; /* sigsuspend & co: restore this after the handler */
	uint64_t saved_sigmask;
	stack_t altstack;
	bool running;  /* resumed: guest code runs, an interrupt is needed to stop it */
	bool regs_set; /* the handler wrote every register (execve, rt_sigreturn) */
	uint64_t fault_addr, fault_trapno, fault_err; /* for the sigcontext of a fault */
	/* A write fault let through unresolved (mm_write_fault): its address, and the address
	 * space's cow_epoch then. */
	uint64_t write_fault_retried, write_fault_epoch;
	struct timespec cchild_time; /* CPU time of reaped children */
	long maxrss, cchild_maxrss;  /* KiB: at exit; largest of reaped children */
	uint64_t rss_peak;	     /* bytes: the largest resident size procfs reported */
	struct rlimit rlim[RLIM_NLIMITS];
	uint64_t affinity[CPU_MASK_WORDS]; /* of the --cpus CPUs */
	bool did_exec;			   /* setpgid on it then fails with EACCES */
	uintptr_t clear_child_tid;
	uintptr_t robust_list;
	bool no_new_privs;
	struct task_seccomp seccomp; /* its seccomp mode and filters (seccomp.c) */
	/* Capabilities (caps.c): this thread's sets, bit N for capability N, and securebits. */
	uint64_t cap_eff, cap_prm, cap_inh, cap_bnd, cap_amb;
	unsigned int securebits;
	int oom_score_adj;	  /* on the leader: -1000..1000, inherited by fork; the OOM killer's
				   * (oom.c) adjustment */
	int nice;		  /* this thread's, -20..19, inherited by fork and clone; the host
				   * scheduler does not see it (the stubs cannot be given priority) */
	int sched_policy;	  /* sched_setscheduler's, kept like nice (sys_sched.c) */
	int sched_priority;	  /* its real-time priority: 1..99 for FIFO and RR, else 0 */
	bool sched_reset_on_fork; /* SCHED_RESET_ON_FORK */
	uint16_t ioprio;	  /* ioprio_set's class and level; 0: unset */
	unsigned int personality; /* personality(2): inherited by fork, kept by exec */
	bool oom_victim;	  /* on the leader: the OOM killer chose it (oom.c) */
	char comm[16];
	struct timespec start_time;	     /* monotonic */
	struct vfs_dentry *exe;		     /* the executable (a reference) */
	uint64_t rchar, wchar, syscr, syscw; /* /proc/PID/io */
	uint64_t nsyscalls;
	uint64_t resumes; /* times it was let run: what procfs's cached figures are keyed on */
	struct {
		uint64_t key; /* the process's resumes when taken */
		uint64_t rss_pages;
		struct timespec cpu;
	} snap; /* on the leader: figures that cannot change while the process does not run */
	struct task_vm_snap {
		const struct mm *mm;			   /* taken of this address space, */
		uint64_t gen;				   /* its VMA set at this generation, */
		const struct vfs_dentry *exe;		   /* with this executable */
		uint64_t vsize, locked, stack, code, data; /* bytes */
		uint64_t start_code, end_code, start_data, end_data;
	} vm_snap;   /* on the leader: procfs's address-space figures (procinfo.c's fill_vm) */
	bool exited; /* gone from the task list; freed once the current event is handled */

	struct platform_syscall sc; /* the syscall being served; re-run when a block ends */
	struct syscall_wait blk;    /* where it stands in sc if sc blocks */
	bool child_subreaper;	    /* on the leader: orphans of descendants come here */
	int pdeath_signal;
	struct process_timers *timers; /* on the leader */
	struct task *vfork_parent;     /* set while a vfork child borrows its parent's memory */
	pid_t vfork_child;	       /* the vfork parent: whom it waits for */
	struct waitq vfork_wq;	       /* the vfork parent sleeps here */
	bool had_children;	       /* on a leader: it was ever some task's parent */
	int stop_sig;
	bool stop_report, cont_report; /* on the leader: not yet reported to wait4 */
	bool parked;		       /* held in its stop while the group is stopped */
};

/* The task list: every task from task_link to task_unlink_free, zombies included, in the
 * order they were linked (which a checkpoint saves and a restore relinks). Only task.c knows
 * how it is kept; everyone else walks it with these loops, which declare their variable. A
 * body may unlink other tasks (the walk goes on from T's next as it is then) but not T, except
 * under for_each_task_safe. */
struct task *task_list_first(void);
/* How many tasks the list holds. */
size_t task_count(void);
/* The pids of every process in the list (zombies included), ascending: the same set as
 * for_each_process, without visiting the tasks. Returns how many (may exceed MAX). */
int task_process_ids(pid_t *out, int max);

#define for_each_task(t) for (struct task *t = task_list_first(); t; t = t->next)
/* As for_each_task, reading the next task (into N) before the body runs, so that the body may
 * unlink T (but not N). */
#define for_each_task_safe(t, n)                                                                   \
	for (struct task *t = task_list_first(), *n = t ? t->next : NULL; t;                       \
	     t = n, n = t ? t->next : NULL)

/* The first process leader at T or after it in the list. */
static inline struct task *task_leader_at(struct task *t)
{
	while (t && t->group_leader != t)
		t = t->next;
	return t;
}

/* Every process, by its leader (zombies included). */
#define for_each_process(l)                                                                        \
	for (struct task *l = task_leader_at(task_list_first()); l; l = task_leader_at(l->next))

/* The first thread of LEADER's process at T or after it in the list. */
static inline struct task *task_thread_at(const struct task *leader, struct task *t)
{
	while (t && t->tgid != leader->tgid)
		t = t->next;
	return t;
}

/* A process that never made a thread has no other than its leader: its walk is the leader
 * alone, without a look at the list. */
static inline struct task *task_first_thread(struct task *leader)
{
	return leader->had_threads ? task_thread_at(leader, task_list_first()) : leader;
}

static inline struct task *task_next_thread(const struct task *leader, const struct task *t)
{
	return leader->had_threads ? task_thread_at(leader, t->next) : NULL;
}

/* Every thread of the process LEADER leads (a linked group leader, evaluated more than once),
 * the leader and zombies included, in list order. */
#define for_each_thread_of(leader, t)                                                              \
	for (struct task *t = task_first_thread(leader); t; t = task_next_thread((leader), t))

/* A filesystem context holding references on ROOT and CWD, with one reference on itself. */
struct vfs_fs_ctx *fs_new(struct vfs_dentry *root, struct vfs_dentry *cwd, mode_t umask);
struct vfs_fs_ctx *fs_get(struct vfs_fs_ctx *fs);
void fs_put(struct vfs_fs_ctx *fs);
/* Checkpoint: filesystem contexts are a kind (CK_FSCTX, state/codec.h). */
struct enc;
struct dec;
int fsctx_save(struct enc *e, const void *fs);
void *fsctx_load(struct dec *d);
void fsctx_drop(void *fs);

/* A sighand with every action SIG_DFL, or NULL (out of memory). */
struct sighand *sighand_new(void);
/* Another reference on SH; sighand_put drops one (SH may be NULL), the last frees it. */
struct sighand *sighand_get(struct sighand *sh);
void sighand_put(struct sighand *sh);
/* A copy of SH for fork (no CLONE_SIGHAND), sharing its table until one of them changes it;
 * NULL if out of memory. */
struct sighand *sighand_fork(struct sighand *sh);
/* SH's table is its own from now on (copied if another sighand shares it), so that an action
 * may be changed: 0 or -ENOMEM. */
int sighand_own(struct sighand *sh);

/* The credentials T's file operations are checked against: its effective ids (there is no
 * separate fsuid) and supplementary groups; task_real_cred has the real ids, for access(2). */
struct vfs_cred task_fs_cred(const struct task *t);
struct vfs_cred task_real_cred(const struct task *t);

/* The highest descriptor number plus one that T may use (RLIMIT_NOFILE, capped as Linux's
 * nr_open). */
int task_nofile_limit(struct task *t);
/* RLIMIT_FSIZE when T grows a regular file from SIZE bytes to END: -EFBIG, with SIGXFSZ sent
 * to T, when END is past the limit and past SIZE (shrinking is always allowed), else 0. */
int task_fsize_check(struct task *t, uint64_t size, uint64_t end);
/* Installs new file F at T's lowest free descriptor; on failure F is put. Returns the fd or
 * -EMFILE/-ENOMEM. */
int task_install_file(struct task *t, struct vfs_file *f, bool cloexec);
/* T is about to close a descriptor of F (close, close_range, dup2 over it, close-on-exec,
 * exit): what Linux's flush does on every close. Its process's record locks on the file go,
 * and a message queue notification it registered on it. */
void task_file_closing(struct task *t, struct vfs_file *f);

/* A task with default credentials, limits and signal state, no mm and no platform thread. */
struct task *task_new(pid_t tid);
void task_free(struct task *t);
/* The task whose host thread is HOST_TID: every platform event is looked up by it. */
struct task *task_by_host_tid(pid_t host_tid);
/* Gives T the host thread PT (NULL: none), which remembers T for task_by_host_tid. */
void task_set_pt(struct task *t, struct platform_thread *pt);
struct task *task_by_tid(pid_t tid);
/* Appends T to the task list and the tid hash. */
void task_link(struct task *t);
/* Takes the first task off the task list and the tid hash and returns it (NULL when the list
 * is empty): teardown frees tasks one by one, and freeing one may walk the list. */
struct task *task_list_pop(void);
/* Removes T from the list and frees it once the current event is handled. */
void task_unlink_free(struct task *t);
/* Drops what a dead task holds: waits, its host thread, mm, files, fs, signal handlers. */
void task_release(struct task *t);

/* Checkpoint: tasks are a kind (CK_TASK, state/codec.h). A loaded task is linked and has its
 * host thread, but its leader and parent are named by pid until task_load_finish, which runs
 * after every section; task_load_resume then starts the restored tasks (after write tracking
 * has started: a task that ran before could write unseen). */
int task_save(struct enc *e, const void *t);
void *task_load(struct dec *d);
int task_load_finish(char **err);
void task_load_resume(void);
/* The task whose own syscall asked for the checkpoint (NULL: none): its image shows that
 * syscall returning RESULT. */
void task_save_set_caller(struct task *t, long result);

/* The internal "would block" result of a handler: never seen by the guest. */
#define ESENTRY_BLOCK 1000

#endif
