/* The kernel: global state of one sandbox and its event loop. The Sentry is single-threaded;
 * everything here is touched only from the loop, so nothing is locked. */
#ifndef SENTRY_KERNEL_H
#define SENTRY_KERNEL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "platform/platform.h"
#include "sentry/caps.h"
#include "sentry/confine.h"

struct task;
struct vfs_dentry;
struct procinfo_ops;

/* --network: the private loopback network (the default; "none" is the same, nothing being
 * reachable beyond the sandbox's lo), or the host's, through sockets the Sentry owns. */
enum kernel_network { NETWORK_LOOPBACK, NETWORK_NONE, NETWORK_HOST };

/* --mount type=bind,src=HOST,dst=GUEST[,ro] (and -v HOST:GUEST[:ro]): a host directory or
 * file seen at GUEST, read-only or writable (changes then reach the host). */
struct kernel_bind {
	const char *src; /* absolute host path */
	const char *dst; /* absolute guest path */
	bool ro;
};

struct kernel_fsmount {
	const char *type; /* "proc", "sysfs", "tmpfs" */
	const char *dst;
};

struct kernel_rlimit {
	int resource; /* RLIMIT_* */
	uint64_t soft, hard;
};

struct kernel_config {
	const char *rootfs;
	char **argv; /* guest argv; argv[0] is the path run */
	char **envp;
	const char *cwd;
	int cpus;
	bool strace;
	const char *strace_file; /* --strace -o: the trace's host file (NULL: stderr) */
	bool strace_append;	 /* add to STRACE_FILE instead of emptying it (the
				  * save-restore test's restarts) */
	bool eager_kernfs;	 /* build /proc and /sys whole at start (for comparisons) */
	bool stats;		 /* print the synthetic filesystems' inode counts at exit */
	enum platform_placement placement;
	enum platform_kind platform; /* --platform */
	/* The checkpoint-test syscall (tests/conformance/check.h's maybe_save) checkpoints,
	 * tears down and restores the whole sandbox (DESIGN.md §8). */
	bool save_restore_test;
	bool save_restore_lazy; /* --save-restore-test=lazy: the restores are lazy */
	/* --save-restore-test=slots: the first checkpoint is a golden image, restored through
	 * a pool of one slot made for it; every later one a delta against it, restored through
	 * that pool (docs/checkpoint.md, "The save-restore test"). */
	bool save_restore_slots;
	const char *srt_slots; /* that pool's directory, once the sandbox runs from it */
	const char *id;	       /* --id: the name the control socket is reached by, or NULL */
	enum kernel_network network;
	struct confine_opts confine;
	int pids; /* --pids: the most tasks at once; 0 for DEFAULT_PIDS */
	const struct kernel_bind *binds;
	int nbinds;
	bool user_set; /* --user: init's uid and gid (else root) */
	uid_t uid;
	gid_t gid;
	const char *hostname;	  /* --hostname: uname's nodename (NULL: "minisentry") */
	bool quiet;		  /* --quiet: no notices of unimplemented syscalls */
	const char *export_upper; /* --export-upper: a host directory the upper layer goes to */
	const char *upper;	  /* --upper: a host directory the upper layer comes from and
				   * goes back to (absolute) */
	bool root_readonly;	  /* the root filesystem refuses changes (EROFS) */
	/* Filesystems mounted besides the usual ones (an OCI bundle's): "proc", "sysfs" or
	 * "tmpfs" at an absolute guest path, made if missing. */
	const struct kernel_fsmount *fsmounts;
	int nfsmounts;
	/* An OCI process's: init's supplementary groups, resource limits and umask. */
	const gid_t *groups;
	int ngroups;
	const struct kernel_rlimit *rlimits;
	int nrlimits;
	bool umask_set;
	mode_t umask;
	bool no_new_privs; /* init starts with no_new_privs set (process.noNewPrivileges) */
	/* A seccomp program init starts filtered by (an OCI bundle's linux.seccomp): SECCOMP_LEN
	 * instructions of struct sock_filter's layout, or none. */
	const void *seccomp_prog;
	unsigned int seccomp_len;
	bool seccomp_log; /* SECCOMP_FILTER_FLAG_LOG */
	/* process.capabilities: init's sets before its first exec, and the default of an exec
	 * request that names none; NULL: every capability. */
	const struct caps_sets *caps;
	/* --memory: the bytes all guest memory may hold (sentry/oom.c past it); 0 for the
	 * default share of the host's RAM. */
	uint64_t memory;
};

/* The longest hostname (Linux's __NEW_UTS_LEN). */
#define KERNEL_HOSTNAME_MAX 64
/* Sets the hostname (DOMAIN: the domain name) to the first LEN (<= 64) bytes of NAME. */
void kernel_set_uts_name(bool domain, const char *name, size_t len);

struct kernel {
	struct kernel_config cfg;
	char hostname[KERNEL_HOSTNAME_MAX + 1];	  /* uname's nodename */
	char domainname[KERNEL_HOSTNAME_MAX + 1]; /* and its domainname */
	struct task *dead;			  /* exited this event; freed by the loop */
	struct task *current;			  /* the task whose syscall is being served */
	pid_t next_pid;
	struct vfs_dentry *root;
	int epfd;
	bool done;
	pid_t tty_sid, tty_fg_pgid; /* the sandbox terminal's session and foreground group */
	int exit_status;	    /* minisentry run's exit status once init is gone */
	struct timespec boot_mono, boot_real; /* when the sandbox started */
	uint64_t forks;
	bool frozen;	 /* paused (sentry/freeze.c): kernel_resume lets no task run */
	int thaw_signal; /* SIGTERM or SIGHUP that came while frozen: acted on at the thaw */
};

extern struct kernel kernel;

/* A process started from outside into a running sandbox (an OCI runtime's `exec`): it has no
 * parent in the sandbox (getppid() is 0, as for a process that entered the namespaces), its
 * own session, credentials UID and GID, and host descriptors STDIO as 0-2. */
struct kernel_spawn {
	char **argv, **envp; /* NULL-terminated */
	const char *cwd;     /* or NULL for / */
	uid_t uid;
	gid_t gid;
	const gid_t *groups; /* supplementary groups */
	int ngroups;
	int no_new_privs;	      /* 0 or 1; -1: as init was configured */
	const struct caps_sets *caps; /* or NULL: init's configured sets */
	const void *seccomp_prog;     /* as kernel_config's: the filter it starts with, or none */
	unsigned int seccomp_len;
	bool seccomp_log;
	int stdio[3];
};
/* Starts S in the sandbox: its pid in *PID, or a negative errno with MSG saying why. */
int kernel_spawn(const struct kernel_spawn *s, pid_t *pid, char *msg, size_t size);

struct user_regs_struct;
/* T's SIGSEGV (SI_KERNEL, registers REGS) was an `int $0x80` on a host without IA-32
 * emulation: served as the i386 syscall it is (true), or not one (false). */
bool kernel_int80_fault(struct task *t, struct user_regs_struct *regs);

/* Sets up the sandbox and runs it until init exits; returns run's exit status, or a negative
 * errno before the guest started (the message is already printed), or 2 when the --strace -o
 * file cannot be opened (said too). */
int kernel_run(const struct kernel_config *cfg);

struct kernel_restore_opts;
/* When main() began (host monotonic): restore's --stats measure from it. */
extern struct timespec kernel_main_start;
/* Restores the sandbox in image directory IMAGE and runs it as kernel_run does; CFG gives the
 * options of this run (strace, placement, id), the image the rest. DELETE_IMAGE removes the
 * image once it is loaded (the save-restore test's own images). */
int kernel_restore(const struct kernel_config *cfg, const char *image,
		   const struct kernel_restore_opts *o, bool delete_image);
/* A warm slot's Sentry (sentry/warm.c): kernel_warm_setup does what kernel_restore does before
 * it reads an image (its slot prepared, not claimed: nothing is written to it); once it is
 * locked in and its request has come (the slot claimed, stdio in place), kernel_warm_restore
 * restores IMAGE (a name for messages: O reads it by its descriptor) and serves it, as
 * kernel_restore. The process CPU time --stats reports starts at KERNEL_CPU_START. */
int kernel_warm_setup(const struct kernel_config *cfg);
int kernel_warm_restore(const struct kernel_config *cfg, const char *image,
			const struct kernel_restore_opts *o);
extern struct timespec kernel_cpu_start;
/* The loop watches warm restore client connection FD: the sandbox ends when it closes. */
int kernel_watch_client(int fd);
/* The sandbox restored from a slot is over (no stub is left): its slot is reset and goes back
 * to the pool (nothing without a slot). */
void kernel_slot_done(void);

struct enc;
struct dec;
/* kernel_save.c: the image's "kernel" section (configuration, clocks, pid allocator, the rootfs
 * files the image depends on); saving it queues every task. Loading it checks the rootfs and
 * the CPU first. KERNEL_CKPT_SAVE_ROOTFS_DEPS ends the record once every dentry is saved. */
int kernel_ckpt_save(struct enc *e);
int kernel_ckpt_save_rootfs_deps(struct enc *e);
int kernel_ckpt_load(struct dec *d, const struct kernel_restore_opts *o);
/* The rootfs a kernel record (DATA, LEN bytes) names, into BUF (SIZE bytes); 0 or -EINVAL. */
int kernel_ckpt_rootfs(const void *data, size_t len, char *buf, size_t size);

/* Re-runs T's syscall after a wake-up (sched.c calls it) and resumes T if it finished. */
void kernel_retry_syscall(struct task *t);

/* Ends T's blocked syscall with t->blk.intr_ret because a signal arrived, and lets T run. */
void kernel_interrupt_syscall(struct task *t);
/* Lets stopped task T run guest code again. */
void kernel_resume(struct task *t);
/* Ends T's syscall with RET as the loop does after its handler (signals, then the resume): for
 * a handler that hands its syscall to another task (exec from a thread, exec.c). */
void kernel_finish_syscall(struct task *t, long ret);

/* The platform when --platform is not given: MINISENTRY_PLATFORM (ptrace or seccomp) if set,
 * else seccomp where the host can run it. */
enum platform_kind kernel_default_platform(void);

/* Stops the tick (placement, clocks) before the Sentry execs: an interval timer outlives exec. */
void kernel_stop_tick(void);
/* sys_sched.c: every visible CPU in T's affinity mask; the CPU time of T's process. */
void sched_default_affinity(struct task *t);
/* Gives a new task C its parent P's scheduling policy (SCHED_RESET_ON_FORK applied). */
void sched_inherit(struct task *c, const struct task *p);
struct timespec process_cpu_time(struct task *t);
long process_maxrss(struct task *t);
struct timespec thread_cpu_time(struct task *t);

/* procinfo.c: what procfs reads of the kernel. */
extern const struct procinfo_ops kernel_procinfo;
/* A new procfs or sysfs for this kernel (the mounts at start, and mount(2) inside). */
int kernel_new_procfs(struct vfs_dentry **root);
int kernel_new_sysfs(struct vfs_dentry **root);

/* Kills every guest thread and frees every task (the end of a sandbox). */
void kernel_teardown(void);

/* Frees the tasks that died while handling the last event. */
void kernel_free_dead(void);

/* exit.c: ends the thread group of T with wait status STATUS (exit code << 8, or a signal
 * number); the leader stays as a zombie for its parent to reap. */
void kernel_exit_group(struct task *t, int status);
/* Init is exiting with wait STATUS: a run that nothing after can change tells its launcher now. */
void kernel_init_exiting(int status);
/* exit(2) of one thread: the last one ends the group. */
void kernel_exit_thread(struct task *t, int status);
/* A vfork child gives the address space back (exec or exit): its parent runs again. */
void kernel_vfork_release(struct task *c);
/* The vfork parent's (re-run) wait; returns the child's pid once it let go. */
long kernel_vfork_wait(struct task *p);
/* Reaps zombie child C of its parent (wait4/waitid). */
void kernel_reap(struct task *c);

/* fork.c: fork/clone of T; returns the child's pid or a negative errno. With CLONE_PIDFD the
 * parent's pidfd of the child is written at PIDFD_ADDR. */
long kernel_clone(struct task *t, unsigned long flags, uintptr_t stack, uintptr_t parent_tid,
		  uintptr_t child_tid, uintptr_t tls, uintptr_t pidfd_addr);

#endif
