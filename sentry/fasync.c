/* Asynchronous I/O signals (sentry/fasync.h). A file with O_ASYNC has a waiter on its poll
 * queue; the waiter only notes what happened (a wake-up runs inside the object's own change)
 * and the loop sends the signals afterwards, holding a reference on the file meanwhile. */
#include "sentry/fasync.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "sentry/fdtable.h"
#include "sentry/kernel.h"
#include "sentry/mm.h"
#include "sentry/signal.h"
#include "sentry/task.h"
#include "vfs/vfs.h"
#include "vfs/waitq.h"

#ifndef F_SETSIG
#define F_SETSIG 10
#define F_GETSIG 11
#endif

/* Files whose queue woke since the last delivery, each with a reference and what woke. */
struct note {
	struct vfs_file *f;
	uint32_t events;
	struct note *next;
};

static struct note *notes;

static struct vfs_fasync *fasync_of(struct vfs_file *f)
{
	if (!f->fasync) {
		f->fasync = calloc(1, sizeof(*f->fasync));
		if (f->fasync)
			f->fasync->file = f;
	}
	return f->fasync;
}

static void woken(struct waiter *w, uint32_t events)
{
	struct vfs_fasync *fa = (struct vfs_fasync *)((char *)w - offsetof(struct vfs_fasync, w));

	for (struct note *n = notes; n; n = n->next)
		if (n->f == fa->file) {
			n->events |= events ? events : POLLIN | POLLOUT;
			return;
		}
	struct note *n = malloc(sizeof(*n));
	if (!n)
		return; /* a signal lost to memory pressure, as a full signal queue loses one */
	n->f = vfs_file_get(fa->file);
	n->events = events ? events : POLLIN | POLLOUT;
	n->next = notes;
	notes = n;
}

/* Watches F's queue while it has O_ASYNC. */
static int arm(struct vfs_file *f)
{
	struct vfs_fasync *fa = f->fasync;
	struct waitq *wq = NULL;

	if (!fa)
		return 0;
	waitq_remove(&fa->w);
	if (!(f->flags & O_ASYNC) || !f->ops->poll)
		return 0;
	f->ops->poll(f, &wq);
	if (wq)
		waitq_add(wq, &fa->w, woken, 0);
	return 0;
}

int fasync_flags_changed(struct vfs_file *f, int fd)
{
	if (!(f->flags & O_ASYNC) && !f->fasync)
		return 0;
	struct vfs_fasync *fa = fasync_of(f);
	if (!fa)
		return -ENOMEM;
	if (f->flags & O_ASYNC)
		fa->fd = fd; /* si_fd: the descriptor O_ASYNC was set through */
	return arm(f);
}

void fasync_restore(void)
{
	for_each_task(t)
		if (t->files)
			for (int fd = 0; fd < t->files->n; fd++) {
				struct vfs_file *f = fdtable_peek(t->files, fd);
				if (f && f->fasync && !f->fasync->w.q)
					arm(f);
			}
}

/* The signal's reason for EVENTS, as Linux's kill_fasync callers give it, and its band. */
static int reason_of(uint32_t events, long *band)
{
	if (events & POLLIN) {
		*band = POLLIN | POLLRDNORM;
		return POLL_IN;
	}
	if (events & POLLOUT) {
		*band = POLLOUT | POLLWRNORM | POLLWRBAND;
		return POLL_OUT;
	}
	if (events & POLLHUP) {
		*band = POLLHUP | POLLERR;
		return POLL_HUP;
	}
	*band = POLLERR;
	return POLL_ERR;
}

static void send_one(struct task *to, const struct vfs_fasync *fa, uint32_t events, bool thread)
{
	siginfo_t si;
	int sig = fa->sig ? fa->sig : SIGIO;

	memset(&si, 0, sizeof(si));
	si.si_signo = sig;
	if (fa->sig) {
		long band;
		si.si_code = reason_of(events, &band);
		si.si_band = band;
		si.si_fd = fa->fd;
	} else {
		si.si_code = SI_KERNEL;
	}
	if (thread)
		signal_send_thread(to, sig, &si);
	else
		signal_send_process(to, sig, &si);
}

static void send(struct vfs_fasync *fa, uint32_t events)
{
	if (fa->owner_type == F_OWNER_PGRP) {
		for_each_task(p)
			if (p->group_leader == p && p->pgid == fa->owner && !p->zombie)
				send_one(p, fa, events, false);
		return;
	}
	struct task *t = task_by_tid(fa->owner);
	if (!t || t->zombie || t->exited)
		return;
	if (fa->owner_type == F_OWNER_TID)
		send_one(t, fa, events, true);
	else if (t->group_leader == t)
		send_one(t, fa, events, false);
}

void fasync_deliver(void)
{
	while (notes) {
		struct note *n = notes;
		notes = n->next;
		struct vfs_file *f = n->f;
		struct vfs_fasync *fa = f->fasync;
		struct waitq *wq;
		/* Only what the file is ready for now and opened for. */
		uint32_t ready = f->ops->poll ? f->ops->poll(f, &wq) : POLLIN | POLLOUT;
		uint32_t mode = f->flags & O_ACCMODE;
		uint32_t can = (mode == O_WRONLY ? 0 : POLLIN) | (mode == O_RDONLY ? 0 : POLLOUT) |
			       POLLHUP | POLLERR;
		uint32_t ev = n->events & ready & can;
		if (fa && fa->owner && (f->flags & O_ASYNC) && ev)
			send(fa, ev);
		vfs_file_put(f);
		free(n);
	}
}

long fasync_fcntl(struct task *t, struct vfs_file *f, int fd, int cmd, unsigned long arg)
{
	struct f_owner_ex ex;
	struct vfs_fasync *fa;

	(void)fd;
	switch (cmd) {
	case F_GETOWN:
		if (!f->fasync || !f->fasync->owner)
			return 0;
		return f->fasync->owner_type == F_OWNER_PGRP ? -f->fasync->owner : f->fasync->owner;
	case F_SETOWN: {
		int who = (int)arg;
		if (who && who != INT_MIN && !task_by_tid(who < 0 ? -who : who))
			return -ESRCH;
		if (!(fa = fasync_of(f)))
			return -ENOMEM;
		fa->owner_type = who < 0 ? F_OWNER_PGRP : F_OWNER_PID;
		fa->owner = who < 0 ? -who : who;
		return 0;
	}
	case F_GETOWN_EX:
		memset(&ex, 0, sizeof(ex));
		if (f->fasync && f->fasync->owner) {
			ex.type = f->fasync->owner_type;
			ex.pid = f->fasync->owner;
		} else {
			ex.type = F_OWNER_PID;
		}
		return copy_out(t->mm, arg, &ex, sizeof(ex)) ? -EFAULT : 0;
	case F_SETOWN_EX:
		if (copy_in(t->mm, &ex, arg, sizeof(ex)))
			return -EFAULT;
		if (ex.type != F_OWNER_TID && ex.type != F_OWNER_PID && ex.type != F_OWNER_PGRP)
			return -EINVAL;
		if (ex.pid < 0)
			return -EINVAL;
		if (ex.pid && !(ex.type == F_OWNER_PGRP ? true : task_by_tid(ex.pid) != NULL))
			return -ESRCH;
		if (!(fa = fasync_of(f)))
			return -ENOMEM;
		fa->owner_type = ex.type;
		fa->owner = ex.pid;
		return 0;
	case F_GETSIG:
		return f->fasync ? f->fasync->sig : 0;
	case F_SETSIG:
		if (arg > 64)
			return -EINVAL;
		if (!(fa = fasync_of(f)))
			return -ENOMEM;
		fa->sig = (int)arg;
		return 0;
	default:
		return -EINVAL;
	}
}
