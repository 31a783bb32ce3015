/* pidfd: a file that names a process (pidfd_open). It is readable in poll once the process
 * has exited (and hangs up once it is reaped), pidfd_send_signal signals it and waitid's
 * P_PIDFD waits for it. The process is named by its pid and its start time, so a pid used
 * again by another process does not make the file name that one (Linux holds a struct pid).
 * A checkpoint saves both. */
#include "sentry/pidfd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/units.h"
#include "sentry/fdtable.h"
#include "sentry/kernel.h"
#include "sentry/sched.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"
#include "vfs/save.h"
#include "vfs/vfs.h"
#include "vfs/waitq.h"

#ifndef PIDFD_NONBLOCK
#define PIDFD_NONBLOCK O_NONBLOCK
#endif
#define PIDFD_THREAD O_EXCL /* Linux 6.9: a pidfd of one thread */

struct pidfd {
	pid_t pid;
	struct timespec start; /* the leader's start_time */
};

static struct waitq exits; /* woken by exit.c whenever a process exits or is reaped */

void pidfd_notify(void)
{
	waitq_wake(&exits, POLLIN);
}

/* The process P names, or NULL once it has been reaped. */
static struct task *pidfd_task(const struct pidfd *p)
{
	struct task *t = task_by_tid(p->pid);

	if (!t || t->group_leader != t || ts_cmp(t->start_time, p->start) != 0)
		return NULL;
	return t;
}

static uint32_t pidfd_poll(struct vfs_file *f, struct waitq **wq)
{
	struct task *t = pidfd_task(f->priv);

	*wq = &exits;
	if (!t)
		return POLLIN | POLLRDNORM | POLLHUP;
	return t->zombie || t->exited ? POLLIN | POLLRDNORM : 0;
}

/* One inode per process, as Linux's pidfs gives (never the Sentry's own addresses): the pid
 * in the low bits, its start time above, so a reused pid is another inode. */
static int pidfd_getattr(struct vfs_file *f, struct stat *st)
{
	const struct pidfd *p = f->priv;

	memset(st, 0, sizeof(*st));
	st->st_mode = S_IRUSR | S_IWUSR;
	st->st_nlink = 1;
	st->st_ino = (ino_t)(uint32_t)p->pid |
		     (ino_t)((uint64_t)p->start.tv_sec * 1000000000ULL + (uint64_t)p->start.tv_nsec)
			 << 32;
	st->st_blksize = 4096;
	return 0;
}

static void pidfd_release(struct vfs_file *f)
{
	free(f->priv);
}

static const struct vfs_file_ops pidfd_ops = {
    .poll = pidfd_poll,
    .getattr = pidfd_getattr,
    .release = pidfd_release,
};

int pidfd_target(struct vfs_file *f, pid_t *pid)
{
	if (!f || f->ops != &pidfd_ops)
		return -EBADF;
	*pid = ((struct pidfd *)f->priv)->pid;
	return pidfd_task(f->priv) ? 0 : -ESRCH;
}

int pidfd_new(struct task *leader, int flags, struct vfs_file **out)
{
	struct pidfd *s = calloc(1, sizeof(*s));
	struct vfs_file *f = calloc(1, sizeof(*f));

	if (!s || !f) {
		free(s);
		free(f);
		return -ENOMEM;
	}
	s->pid = leader->tid;
	s->start = leader->start_time;
	f->ops = &pidfd_ops;
	f->refs = 1;
	f->flags = O_RDWR | (flags & O_NONBLOCK);
	f->priv = s;
	*out = f;
	return 0;
}

long sys_pidfd_open(struct task *t, const unsigned long *a)
{
	pid_t pid = arg_int(a, 0);

	if (a[1] & ~(unsigned long)(PIDFD_NONBLOCK | PIDFD_THREAD))
		return -EINVAL;
	if (pid <= 0)
		return -EINVAL;
	struct task *p = task_by_tid(pid);
	if (!p)
		return -ESRCH;
	if (a[1] & PIDFD_THREAD)
		return syscall_unsupported(t, -EINVAL, "PIDFD_THREAD");
	if (p->group_leader != p)
		return -ENOENT; /* a thread that does not lead its process (EINVAL before 6.9) */
	struct vfs_file *f;
	int err = pidfd_new(p, (a[1] & PIDFD_NONBLOCK) ? O_NONBLOCK : 0, &f);
	if (err)
		return err;
	return task_install_file(t, f, true); /* a pidfd is always close-on-exec */
}

/* pidfd_getfd(2): a duplicate of another process's descriptor, close-on-exec. It needs
 * ptrace access (PTRACE_MODE_ATTACH_REALCREDS), which the sandbox gives a process over itself
 * only, as under Yama's ptrace_scope 3 (sys_ptrace.c, process_vm_readv): any other is EPERM. */
long sys_pidfd_getfd(struct task *t, const unsigned long *a)
{
	struct vfs_file *pf = arg_file(t, arg_int(a, 0));
	int fd = arg_int(a, 1);

	if (a[2])
		return -EINVAL;
	if (!pf)
		return -EBADF;
	if (pf->ops != &pidfd_ops)
		return -EBADF;
	struct task *p = pidfd_task(pf->priv);
	if (!p)
		return -ESRCH;
	if (p->group_leader != t->group_leader)
		return -EPERM;
	struct vfs_file *f = p->files ? fdtable_peek(p->files, fd) : NULL;
	if (!f)
		return -EBADF; /* not open, or the process has exited (a zombie has no table) */
	return task_install_file(t, vfs_file_get(f), true);
}

static int pidfd_save(struct enc *e, struct vfs_file *f)
{
	struct pidfd *s = f->priv;

	enc_u32(e, (uint32_t)s->pid);
	enc_timespec(e, s->start);
	return 0;
}

static int pidfd_load(struct dec *d, struct vfs_file *f)
{
	pid_t pid = (pid_t)dec_u32(d);
	struct timespec start = dec_timespec(d);
	struct pidfd *s;

	if (!dec_ok(d) || pid <= 0)
		return dec_fail(d, "bad pidfd record");
	if (!(s = calloc(1, sizeof(*s))))
		return dec_fail(d, "out of memory");
	s->pid = pid;
	s->start = start;
	f->priv = s;
	return 0;
}

static const struct vfs_file_kind pidfd_kind = {
    .name = "pidfd",
    .ops = &pidfd_ops,
    .save = pidfd_save,
    .load = pidfd_load,
};

int pidfd_register_kind(void)
{
	return vfs_file_kind_register(&pidfd_kind);
}
