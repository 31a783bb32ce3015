/* Task objects: creation with Linux's defaults, lookup by guest or host thread id, and
 * parking a task on a host descriptor (blocking = retry: the syscall is re-run on wake-up). */
#include "sentry/task.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "sentry/fdtable.h"
#include "sentry/kernel.h"
#include "sentry/mm.h"

struct task *task_new(pid_t tid)
{
	struct task *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->tid = t->tgid = t->pgid = t->sid = tid;
	t->block_fd = -1;
	t->fs.umask = 022;
	for (int r = 0; r < RLIM_NLIMITS; r++)
		getrlimit(r, &t->rlim[r]);
	/* Linux's defaults for a fresh init, not whatever the Sentry was started with. */
	t->rlim[RLIMIT_NOFILE] = (struct rlimit){1024, 1048576};
	t->rlim[RLIMIT_STACK] = (struct rlimit){8 << 20, RLIM_INFINITY};
	t->rlim[RLIMIT_CORE] = (struct rlimit){0, RLIM_INFINITY};
	return t;
}

void task_free(struct task *t)
{
	if (!t)
		return;
	if (t->pt)
		platform_thread_free(t->pt);
	mm_put(t->mm);
	fdtable_put(t->files);
	if (t->fs.root)
		vfs_dentry_put(t->fs.root);
	if (t->fs.cwd)
		vfs_dentry_put(t->fs.cwd);
	if (t->sighand && --t->sighand->refs == 0)
		free(t->sighand);
	free(t);
}

struct task *task_by_host_tid(pid_t host_tid)
{
	for (struct task *t = kernel.tasks; t; t = t->next)
		if (t->pt && t->pt->tid == host_tid)
			return t;
	return NULL;
}

struct task *task_by_tid(pid_t tid)
{
	for (struct task *t = kernel.tasks; t; t = t->next)
		if (t->tid == tid)
			return t;
	return NULL;
}

long task_block_on_fd(struct task *t, int fd, short events)
{
	struct epoll_event ev = {.events = events, .data.fd = fd};

	if (epoll_ctl(kernel.epfd, EPOLL_CTL_ADD, fd, &ev) && errno == EEXIST)
		epoll_ctl(kernel.epfd, EPOLL_CTL_MOD, fd, &ev);
	t->blocked = true;
	t->block_fd = fd;
	t->block_events = events;
	kernel.nblocked_fd++;
	return -ESENTRY_BLOCK;
}
