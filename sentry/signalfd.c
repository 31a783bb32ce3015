/* signalfd: a file that reads the reading task's pending signals in its mask as
 * signalfd_siginfo records. Readiness depends on who asks (kernel.current), as on Linux; any
 * newly queued signal wakes the readers so they look again. A checkpoint saves the mask (the
 * pending signals are the tasks'). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>

#include "sentry/kernel.h"
#include "sentry/mm.h"
#include "sentry/signal.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"
#include "vfs/save.h"
#include "vfs/vfs.h"
#include "vfs/waitq.h"

struct sigfd {
	uint64_t mask;
};

static struct waitq arrivals; /* woken by signal.c whenever a signal is queued */

void signalfd_notify(void)
{
	waitq_wake(&arrivals, POLLIN);
}

static void to_ssi(const siginfo_t *si, struct signalfd_siginfo *o)
{
	memset(o, 0, sizeof(*o));
	o->ssi_signo = si->si_signo;
	o->ssi_errno = si->si_errno;
	o->ssi_code = si->si_code;
	o->ssi_pid = si->si_pid;
	o->ssi_uid = si->si_uid;
	o->ssi_status = si->si_status;
	o->ssi_int = si->si_int;
	o->ssi_ptr = (uint64_t)si->si_ptr;
	o->ssi_addr = (uint64_t)si->si_addr;
	if (si->si_code == SI_TIMER) {
		o->ssi_tid = si->si_timerid;
		o->ssi_overrun = si->si_overrun;
	}
}

static ssize_t sigfd_read(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	struct sigfd *s = f->priv;
	struct task *t = kernel.current;
	size_t room = 0, done = 0;

	(void)pos;
	for (int i = 0; i < iovcnt; i++)
		room += iov[i].iov_len;
	if (room < sizeof(struct signalfd_siginfo))
		return -EINVAL;
	/* The iovecs come from one guest buffer; fill them record by record. */
	while (done + sizeof(struct signalfd_siginfo) <= room) {
		siginfo_t si;
		struct signalfd_siginfo ssi;
		if (!signal_dequeue(t, s->mask, &si))
			break;
		to_ssi(&si, &ssi);
		size_t off = done, k = 0;
		for (int i = 0; i < iovcnt && k < sizeof(ssi); i++) {
			if (off >= iov[i].iov_len) {
				off -= iov[i].iov_len;
				continue;
			}
			size_t n = iov[i].iov_len - off;
			if (n > sizeof(ssi) - k)
				n = sizeof(ssi) - k;
			memcpy((char *)iov[i].iov_base + off, (char *)&ssi + k, n);
			k += n;
			off = 0;
		}
		done += sizeof(ssi);
	}
	return done ? (ssize_t)done : -EAGAIN;
}

static uint32_t sigfd_poll(struct vfs_file *f, struct waitq **wq)
{
	struct sigfd *s = f->priv;
	struct task *t = kernel.current;

	*wq = &arrivals;
	if (!t)
		return 0;
	uint64_t pending = t->pending.set | t->group_leader->shared_pending.set;
	return (pending & s->mask) ? POLLIN | POLLRDNORM : 0;
}

static void sigfd_release(struct vfs_file *f)
{
	free(f->priv);
}

static const struct vfs_file_ops sigfd_ops = {
    .read = sigfd_read,
    .poll = sigfd_poll,
    .getattr = vfs_anon_getattr,
    .release = sigfd_release,
};

static long do_signalfd(struct task *t, int fd, uintptr_t mask_addr, size_t size, int flags)
{
	uint64_t mask;

	if (size != sizeof(uint64_t))
		return -EINVAL;
	if (flags & ~(SFD_CLOEXEC | SFD_NONBLOCK))
		return -EINVAL;
	if (copy_in(t->mm, &mask, mask_addr, sizeof(mask)))
		return -EFAULT;
	mask &= ~UNBLOCKABLE;
	if (fd != -1) {
		struct vfs_file *f = arg_file(t, fd);
		if (!f)
			return -EBADF;
		if (f->ops != &sigfd_ops)
			return -EINVAL;
		((struct sigfd *)f->priv)->mask = mask;
		signalfd_notify();
		return fd;
	}
	struct sigfd *s = calloc(1, sizeof(*s));
	struct vfs_file *f = calloc(1, sizeof(*f));
	if (!s || !f) {
		free(s);
		free(f);
		return -ENOMEM;
	}
	s->mask = mask;
	f->ops = &sigfd_ops;
	f->refs = 1;
	f->flags = O_RDWR | ((flags & SFD_NONBLOCK) ? O_NONBLOCK : 0);
	f->priv = s;
	return task_install_file(t, f, flags & SFD_CLOEXEC);
}

long sys_signalfd4(struct task *t, const unsigned long *a)
{
	return do_signalfd(t, arg_int(a, 0), a[1], a[2], arg_int(a, 3));
}

long sys_signalfd(struct task *t, const unsigned long *a)
{
	return do_signalfd(t, arg_int(a, 0), a[1], a[2], 0);
}

static int sigfd_save(struct enc *e, struct vfs_file *f)
{
	enc_u64(e, ((struct sigfd *)f->priv)->mask);
	return 0;
}

static int sigfd_load(struct dec *d, struct vfs_file *f)
{
	uint64_t mask = dec_u64(d);
	struct sigfd *s;

	if (!dec_ok(d) || (mask & UNBLOCKABLE))
		return dec_fail(d, "bad signalfd record");
	if (!(s = calloc(1, sizeof(*s))))
		return dec_fail(d, "out of memory");
	s->mask = mask;
	f->priv = s;
	return 0;
}

static const struct vfs_file_kind sigfd_kind = {
    .name = "signalfd",
    .ops = &sigfd_ops,
    .save = sigfd_save,
    .load = sigfd_load,
};

int signalfd_register_kind(void)
{
	return vfs_file_kind_register(&sigfd_kind);
}
