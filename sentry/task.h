/* struct task — a guest thread: identity, its address space, fd table, filesystem context,
 * signal state, limits, and where it stands in a syscall. Shared parts (mm, files, signal
 * handlers) are reference-counted so CLONE_VM/FILES/SIGHAND can share them. */
#ifndef SENTRY_TASK_H
#define SENTRY_TASK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "platform/platform.h"
#include "vfs/vfs.h"

#define NSIG_GUEST 64

/* The kernel's struct sigaction for rt_sigaction (not libc's). */
struct ksigaction {
	uint64_t handler;
	uint64_t flags;
	uint64_t restorer;
	uint64_t mask;
};

struct sighand {
	int refs;
	struct ksigaction act[NSIG_GUEST];
};

struct task {
	pid_t tid, tgid, ppid, pgid, sid;
	uid_t uid, euid, suid;
	gid_t gid, egid, sgid;
	struct platform_thread *pt;
	struct mm *mm;
	struct fdtable *files;
	struct vfs_fs_ctx fs;
	struct sighand *sighand;
	uint64_t sigmask;
	struct rlimit rlim[RLIM_NLIMITS];
	uintptr_t clear_child_tid;
	uintptr_t robust_list;
	bool no_new_privs;
	char comm[16];
	bool exited; /* gone from the task list; freed once the current event is handled */

	struct platform_syscall sc; /* the syscall being served; re-run when a block ends */
	bool blocked;
	int block_fd;       /* host descriptor whose readiness wakes the task, or -1 */
	short block_events; /* EPOLLIN / EPOLLOUT */

	struct task *next; /* in the kernel's task list */
};

/* A task with default credentials, limits and signal state, no mm and no platform thread. */
struct task *task_new(pid_t tid);
void task_free(struct task *t);
struct task *task_by_host_tid(pid_t host_tid);
struct task *task_by_tid(pid_t tid);

/* Parks T until host descriptor FD is ready for EVENTS; the syscall is then re-run. Returns
 * the internal code the handler returns. */
long task_block_on_fd(struct task *t, int fd, short events);

/* The internal "would block" result of a handler: never seen by the guest. */
#define ESENTRY_BLOCK 1000

#endif
