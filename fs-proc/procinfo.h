/* What procfs needs to know about the kernel's processes, and nothing else: the Sentry fills
 * these snapshots (sentry/procinfo.c), procfs formats them. Keeping the interface to plain
 * data lets fs-proc be unit-tested with made-up processes and never see a struct task. */
#ifndef FS_PROC_PROCINFO_H
#define FS_PROC_PROCINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/limits.h"

struct vfs_dentry;
struct vfs_file;

/* One memory mapping, as /proc/PID/maps shows it. */
struct procinfo_vma {
	uint64_t start, end;
	int prot;    /* PROT_* */
	bool shared; /* MAP_SHARED */
	uint64_t offset;
	uint64_t ino;
	unsigned int dev_major, dev_minor;
	char name[256]; /* a path, "[heap]", "[stack]", or empty */
	/* For smaps: bytes resident (pages of guest memory that hold data), whether the mapping
	 * is of a file, whether it was ever writable (its pages may be dirty copies), whether
	 * a shared one may become writable. */
	uint64_t rss;
	bool file, was_writable, may_write;
};

/* A snapshot of one thread (or, for a process, of its leader plus totals). */
struct procinfo_task {
	pid_t pid; /* tgid */
	pid_t tid;
	pid_t ppid, pgid, sid;
	pid_t tty_pgrp; /* foreground group of the sandbox terminal, or -1 */
	int tty_nr;	/* the stat field: 0 when the process has no terminal */
	char comm[16];
	char state; /* R, S, T, Z, t, D */
	uid_t uid, euid, suid;
	gid_t gid, egid, sgid;
	int ngroups;
	gid_t groups[32];
	int nthreads;
	uint64_t start_time_ns; /* since the sandbox booted */
	uint64_t utime_ns, stime_ns, cutime_ns, cstime_ns;
	uint64_t vsize, rss_pages; /* bytes, pages */
	uint64_t rss_file_pages;   /* of rss_pages, those backed by files (statm "shared") */
	uint64_t vm_peak, vm_data, vm_stack, vm_exe, vm_lib, vm_hwm, vm_lck; /* bytes */
	uint64_t sig_pending, sig_shared_pending, sig_blocked, sig_ignored, sig_caught;
	uint64_t start_code, end_code, start_stack, start_data, end_data, start_brk;
	uint64_t arg_start, arg_end, env_start, env_end;
	uint64_t minflt, majflt;
	uint64_t rchar, wchar, syscr, syscw, read_bytes, write_bytes; /* /proc/PID/io */
	uint64_t run_ns, wait_ns, timeslices;			      /* schedstat */
	uint64_t voluntary_ctxt, nonvoluntary_ctxt;
	int nice, priority;
	int exit_signal;
	uint64_t cpus_allowed[CPU_MASK_WORDS]; /* of --cpus CPUs */
	int umask;
	bool no_new_privs;
	int seccomp_mode;	      /* 0, 1 strict, 2 filter */
	unsigned int seccomp_filters; /* the filters in its chain */
	uint64_t cap_inh, cap_prm, cap_eff, cap_bnd, cap_amb;
	int oom_score_adj;
	struct {
		uint64_t cur, max; /* RLIM_INFINITY as UINT64_MAX */
	} rlim[16];
};

/* The operations the Sentry provides. Every function returns a negative errno on failure
 * (-ESRCH for a pid that is gone). */
struct procinfo_ops {
	/* The pids (thread-group ids) visible to the reader, ascending; returns how many (may
	 * exceed MAX: then call again with more room). */
	int (*pids)(pid_t *out, int max);
	/* The thread ids of process PID, ascending. */
	int (*tids)(pid_t pid, pid_t *out, int max);
	/* The calling task's pid and tid (for /proc/self and /proc/thread-self). */
	pid_t (*self_pid)(void);
	pid_t (*self_tid)(void);
	/* A snapshot of thread TID of process PID (TID == PID: the process, totals included). */
	int (*task)(pid_t pid, pid_t tid, struct procinfo_task *out);
	/* The process's argv or environ bytes (NUL-separated, as in its memory); returns the
	 * length copied into BUF (at most SIZE). */
	ssize_t (*cmdline)(pid_t pid, char *buf, size_t size);
	ssize_t (*environ)(pid_t pid, char *buf, size_t size);
	/* Its mappings; returns how many (may exceed MAX). */
	int (*vmas)(pid_t pid, struct procinfo_vma *out, int max);
	/* Its open descriptors, ascending; returns how many (may exceed MAX). */
	int (*fds)(pid_t pid, int *out, int max);
	/* The open file at descriptor FD (a new reference) and its FD_CLOEXEC flag. */
	int (*fd_file)(pid_t pid, int fd, struct vfs_file **out, bool *cloexec);
	/* Its cwd, root and executable: new dentry references (exe may be -ENOENT). */
	int (*cwd)(pid_t pid, struct vfs_dentry **out);
	int (*root)(pid_t pid, struct vfs_dentry **out);
	int (*exe)(pid_t pid, struct vfs_dentry **out);
	/* The reader's root, to show paths as the reader sees them. */
	struct vfs_dentry *(*reader_root)(void);
	/* System-wide figures. */
	uint64_t (*boot_time_s)(void); /* realtime seconds of the sandbox's boot */
	uint64_t (*uptime_ns)(void);
	uint64_t (*idle_ns)(void);
	int (*cpus)(void);	     /* --cpus */
	uint64_t (*mem_total)(void); /* bytes the guest may see as RAM */
	uint64_t (*mem_used)(void);  /* bytes of guest memory in use */
	unsigned long (*nr_running)(void);
	unsigned long (*nr_threads)(void);
	pid_t (*last_pid)(void);
	uint64_t (*forks)(void);
	const char *(*hostname)(void);
	/* Optional (NULL: "(none)", and neither name can be written): the NIS domain name, and
	 * what a write of /proc/sys/kernel/hostname or domainname sets (the first LEN bytes of
	 * NAME; LEN at most 64). */
	const char *(*domainname)(void);
	void (*set_uts_name)(bool domain, const char *name, size_t len);
	/* Optional (NULL: procfs takes them from task()): the effective uid and gid of process
	 * PID, which own its /proc/PID tree; asked on every stat there, so it should be cheap. */
	int (*owner)(pid_t pid, uid_t *uid, gid_t *gid);
	/* Optional (NULL: always): whether the reading task may see process PID's protected state,
	 * as Linux's ptrace_may_access(PTRACE_MODE_READ_FSCREDS) decides. /proc/PID/io refuses
	 * other readers, /proc/PID/stat hides its addresses from them, and /proc/all applies the
	 * same rule record by record. */
	bool (*may_read)(pid_t pid);
	/* Optional (NULL: writes fail with EIO): sets process PID's oom_score_adj (-1000..1000). */
	int (*set_oom_score_adj)(pid_t pid, int adj);
	/* Optional (NULL: the files are empty): the whole text of /proc/sysvipc/shm (KIND 0), sem
	 * (1) or msg (2), header included, in a malloc'd string the caller frees. */
	char *(*sysvipc)(int kind);
	/* Optional (NULL: kept, not applied): a write of /proc/sys/kernel/NAME, one of System V
	 * IPC's limits (shmmax, shmall, shmmni, sem, msgmax, msgmnb, msgmni), with VALUE, the
	 * sysctl's normalised text: 0, or -EINVAL and the value is refused. */
	int (*set_ipc_limit)(const char *name, const char *value);
};

#endif
