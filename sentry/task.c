/* Task objects: creation with Linux's defaults, lookup by guest or host thread id, and
 * parking a task on a host descriptor (blocking = retry: the syscall is re-run on wake-up). */
#include "sentry/task.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sentry/fdtable.h"
#include "sentry/locks.h"
#include "sentry/kernel.h"
#include "sentry/mm.h"
#include "sentry/sched.h"
#include "sentry/timer.h"

struct fs_shared {
	struct vfs_fs_ctx ctx; /* first: a ctx pointer is a fs_shared pointer */
	int refs;
};

struct vfs_fs_ctx *fs_new(struct vfs_dentry *root, struct vfs_dentry *cwd, mode_t umask)
{
	struct fs_shared *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->refs = 1;
	s->ctx.root = vfs_dentry_get(root);
	s->ctx.cwd = vfs_dentry_get(cwd);
	s->ctx.umask = umask;
	return &s->ctx;
}

struct vfs_fs_ctx *fs_get(struct vfs_fs_ctx *fs)
{
	((struct fs_shared *)fs)->refs++;
	return fs;
}

void fs_put(struct vfs_fs_ctx *fs)
{
	struct fs_shared *s = (struct fs_shared *)fs;

	if (!s || --s->refs > 0)
		return;
	vfs_dentry_put(s->ctx.root);
	vfs_dentry_put(s->ctx.cwd);
	free(s);
}

struct sighand *sighand_get(struct sighand *sh)
{
	sh->refs++;
	return sh;
}

void sighand_put(struct sighand *sh)
{
	if (sh && --sh->refs == 0)
		free(sh);
}

struct task *task_new(pid_t tid)
{
	struct task *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->tid = t->tgid = t->pgid = t->sid = tid;
	t->start_time = mono_now();
	for (int r = 0; r < RLIM_NLIMITS; r++)
		getrlimit(r, &t->rlim[r]);
	/* Linux's defaults for a fresh init, not whatever the Sentry was started with. */
	t->rlim[RLIMIT_NOFILE] = (struct rlimit){1024, 1048576};
	t->rlim[RLIMIT_STACK] = (struct rlimit){8 << 20, RLIM_INFINITY};
	t->rlim[RLIMIT_CORE] = (struct rlimit){0, RLIM_INFINITY};
	return t;
}

void task_release(struct task *t)
{
	task_cancel_wait(t);
	if (t->blk.pending_open) {
		vfs_file_put(t->blk.pending_open);
		t->blk.pending_open = NULL;
	}
	if (t->pt) {
		platform_thread_release(t->pt);
		t->pt = NULL;
	}
	mm_put(t->mm);
	t->mm = NULL;
	if (t->files && t->files->refs == 1)
		for (int fd = 0; fd < t->files->n; fd++)
			if (t->files->fds[fd].file)
				locks_on_close(t, t->files->fds[fd].file);
	fdtable_put(t->files);
	t->files = NULL;
	fs_put(t->fs);
	t->fs = NULL;
	if (t->exe) {
		vfs_dentry_put(t->exe);
		t->exe = NULL;
	}
	sighand_put(t->sighand);
	t->sighand = NULL;
}

void task_free(struct task *t)
{
	if (!t)
		return;
	task_release(t);
	timers_release(t); /* a process still alive when the sandbox ends (teardown) */
	signal_free_pending(&t->pending);
	signal_free_pending(&t->shared_pending);
	free(t->groups);
	free(t);
}

/* The task list (for_each_task), oldest first. */
static struct task *task_list;

/* Tasks by tid: what kill, wait and procfs look up constantly. */
#define TID_BUCKETS 4096
static struct task *tid_hash[TID_BUCKETS];

static void hash_remove(struct task *t)
{
	for (struct task **pp = &tid_hash[(unsigned)t->tid % TID_BUCKETS]; *pp;
	     pp = &(*pp)->hash_next)
		if (*pp == t) {
			*pp = t->hash_next;
			return;
		}
}

struct task *task_list_first(void)
{
	return task_list;
}

void task_link(struct task *t)
{
	struct task **pp = &task_list;

	while (*pp)
		pp = &(*pp)->next;
	t->next = NULL;
	*pp = t;
	t->hash_next = tid_hash[(unsigned)t->tid % TID_BUCKETS];
	tid_hash[(unsigned)t->tid % TID_BUCKETS] = t;
}

void task_unlink_free(struct task *t)
{
	for (struct task **pp = &task_list; *pp; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	hash_remove(t);
	/* Handlers and --strace may still look at T until the event is handled. */
	t->exited = true;
	t->next = kernel.dead;
	kernel.dead = t;
}

struct task *task_list_pop(void)
{
	struct task *t = task_list;

	if (t) {
		task_list = t->next;
		hash_remove(t);
	}
	return t;
}

struct task *task_by_host_tid(pid_t host_tid)
{
	for_each_task(t)
		if (t->pt && t->pt->tid == host_tid)
			return t;
	return NULL;
}

struct task *task_by_tid(pid_t tid)
{
	for (struct task *t = tid_hash[(unsigned)tid % TID_BUCKETS]; t; t = t->hash_next)
		if (t->tid == tid)
			return t;
	return NULL;
}

struct vfs_cred task_fs_cred(const struct task *t)
{
	return (struct vfs_cred){t->euid, t->egid, t->groups, t->ngroups};
}

struct vfs_cred task_real_cred(const struct task *t)
{
	return (struct vfs_cred){t->uid, t->gid, t->groups, t->ngroups};
}

int task_nofile_limit(struct task *t)
{
	rlim_t l = t->rlim[RLIMIT_NOFILE].rlim_cur;

	return l > 1048576 ? 1048576 : (int)l;
}

int task_install_file(struct task *t, struct vfs_file *f, bool cloexec)
{
	int fd = fdtable_install(t->files, f, cloexec, 0, task_nofile_limit(t));

	if (fd < 0)
		vfs_file_put(f);
	return fd;
}
