/* poll, ppoll, select and pselect6: one readiness pass over the files; if nothing is ready
 * and there is time left, a second pass registers a wait on every file (its wait queue, or
 * its host descriptor) and the task blocks until any fires, then the whole call is re-run. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/select.h>

#include "common/units.h"
#include "sentry/mm.h"
#include "sentry/sched.h"
#include "sentry/signal.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"
#include "vfs/vfs.h"

#define POLL_MAX_FDS 65536
#define ALWAYS (POLLHUP | POLLERR | POLLNVAL)

/* Current readiness of F (files without a poll op are always ready, as on Linux). */
static uint32_t file_ready(struct vfs_file *f, struct waitq **wq)
{
	*wq = NULL;
	if (f->ops->poll)
		return f->ops->poll(f, wq);
	return POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM;
}

static long wait_epoll_host_fds(struct task *t, struct vfs_file *f);

static long wait_on(struct task *t, struct vfs_file *f, struct waitq *wq, uint32_t events)
{
	if (vfs_is_epoll(f)) {
		long err = wait_epoll_host_fds(t, f);
		if (err)
			return err;
	}
	if (f->ops->host_fd && f->ops->host_fd(f) >= 0)
		return task_wait_host_fd(t, f->ops->host_fd(f),
					 events & (POLLIN | POLLOUT | POLLPRI));
	if (wq)
		return task_wait_queue(t, wq, events | POLLHUP | POLLERR);
	return 0;
}

/* Fills revents; with WAIT registers waits on every file. Returns the number ready. */
static long poll_pass(struct task *t, struct pollfd *fds, size_t n, bool wait)
{
	long ready = 0;

	for (size_t i = 0; i < n; i++) {
		struct waitq *wq;
		fds[i].revents = 0;
		if (fds[i].fd < 0)
			continue;
		struct vfs_file *f = arg_file(t, fds[i].fd);
		if (!f) {
			fds[i].revents = POLLNVAL;
			ready++;
			continue;
		}
		uint32_t m = file_ready(f, &wq);
		fds[i].revents = m & ((uint16_t)fds[i].events | ALWAYS);
		if (fds[i].revents)
			ready++;
		if (wait) {
			long err = wait_on(t, f, wq, (uint16_t)fds[i].events);
			if (err)
				return err;
		}
	}
	return ready;
}

/* The shared driver: a deadline in t->blk.deadline (when TIMED) set on the first call. */
static long do_poll(struct task *t, struct pollfd *fds, size_t n, bool timed)
{
	long ready = poll_pass(t, fds, n, false);

	if (ready || t->blk.interrupted)
		return ready ? ready : -ERESTARTNOHAND;
	if (timed && ts_cmp(mono_now(), t->blk.deadline) >= 0)
		return 0;
	long err = poll_pass(t, fds, n, true);
	if (err < 0)
		return err;
	if (timed)
		task_wait_until(t, &t->blk.deadline);
	t->blk.intr_ret = -ERESTARTNOHAND;
	return task_block(t);
}

/* Sets the temporary signal mask of ppoll/pselect6 for the duration of the call. */
static long set_call_sigmask(struct task *t, uintptr_t mask_addr, size_t size)
{
	uint64_t mask;

	if (!mask_addr || t->blk.retry)
		return 0;
	if (size != sizeof(uint64_t))
		return -EINVAL;
	if (copy_in(t->mm, &mask, mask_addr, sizeof(mask)))
		return -EFAULT;
	t->saved_sigmask = t->sigmask;
	t->has_saved_sigmask = true;
	t->sigmask = mask & ~UNBLOCKABLE;
	return 0;
}

static long poll_common(struct task *t, uintptr_t ufds, size_t n, bool timed)
{
	if (n > POLL_MAX_FDS || n > t->rlim[RLIMIT_NOFILE].rlim_cur)
		return -EINVAL;
	struct pollfd *fds = calloc(n ? n : 1, sizeof(*fds));
	if (!fds)
		return -ENOMEM;
	long r = copy_in(t->mm, fds, ufds, n * sizeof(*fds)) ? -EFAULT : do_poll(t, fds, n, timed);
	if (r >= 0) {
		/* Only revents goes back, field by field, as Linux writes it. */
		for (size_t i = 0; i < n && r >= 0; i++)
			if (copy_out(t->mm,
				     ufds + i * sizeof(*fds) + offsetof(struct pollfd, revents),
				     &fds[i].revents, sizeof(short)))
				r = -EFAULT;
	}
	free(fds);
	return r;
}

long sys_poll(struct task *t, const unsigned long *a)
{
	int timeout = arg_int(a, 2);

	if (!t->blk.retry && timeout >= 0)
		t->blk.deadline =
		    ts_add(mono_now(), (struct timespec){timeout / MSEC_PER_SEC,
							 (timeout % MSEC_PER_SEC) * NSEC_PER_MSEC});
	return poll_common(t, a[0], a[1], timeout >= 0);
}

long sys_ppoll(struct task *t, const unsigned long *a)
{
	struct timespec ts;
	long err;

	if (!t->blk.retry && a[2]) {
		if (copy_in(t->mm, &ts, a[2], sizeof(ts)))
			return -EFAULT;
		if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= NSEC_PER_SEC)
			return -EINVAL;
		t->blk.deadline = ts_add(mono_now(), ts);
	}
	if ((err = set_call_sigmask(t, a[3], a[4])))
		return err;
	long r = poll_common(t, a[0], a[1], a[2] != 0);
	if (r >= 0 && a[2]) {
		struct timespec left = ts_sub(t->blk.deadline, mono_now());
		copy_out(t->mm, a[2], &left, sizeof(left));
	}
	return r;
}

/* select(2) in terms of poll: the three fd sets become poll events and back. */
static long select_common(struct task *t, int nfds, uintptr_t rd, uintptr_t wr, uintptr_t ex,
			  bool timed)
{
	size_t bytes = ((size_t)nfds + 63) / 64 * 8;
	uint64_t *sets[3] = {0};
	uintptr_t addrs[3] = {rd, wr, ex};
	struct pollfd *fds = NULL;
	size_t n = 0;
	long r = -ENOMEM;

	if (nfds < 0 || nfds > (int)t->rlim[RLIMIT_NOFILE].rlim_cur)
		return -EINVAL;
	for (int k = 0; k < 3; k++) {
		if (!(sets[k] = calloc(1, bytes ? bytes : 8)))
			goto out;
		if (addrs[k] && copy_in(t->mm, sets[k], addrs[k], bytes)) {
			r = -EFAULT;
			goto out;
		}
	}
	if (!(fds = calloc(nfds ? nfds : 1, sizeof(*fds))))
		goto out;
	for (int fd = 0; fd < nfds; fd++) {
		short ev = 0;
		if (sets[0][fd / 64] & (1ULL << (fd % 64)))
			ev |= POLLIN | POLLRDNORM;
		if (sets[1][fd / 64] & (1ULL << (fd % 64)))
			ev |= POLLOUT | POLLWRNORM;
		if (sets[2][fd / 64] & (1ULL << (fd % 64)))
			ev |= POLLPRI;
		if (!ev)
			continue;
		if (!arg_file(t, fd)) {
			r = -EBADF;
			goto out;
		}
		fds[n++] = (struct pollfd){.fd = fd, .events = ev};
	}
	r = do_poll(t, fds, n, timed);
	if (r < 0)
		goto out;
	memset(sets[0], 0, bytes), memset(sets[1], 0, bytes), memset(sets[2], 0, bytes);
	r = 0;
	for (size_t i = 0; i < n; i++) {
		int fd = fds[i].fd;
		short re = fds[i].revents, ev = fds[i].events;
		uint64_t bit = 1ULL << (fd % 64);
		if ((ev & POLLIN) && (re & (POLLIN | POLLRDNORM | POLLHUP | POLLERR)))
			sets[0][fd / 64] |= bit, r++;
		if ((ev & POLLOUT) && (re & (POLLOUT | POLLWRNORM | POLLERR)))
			sets[1][fd / 64] |= bit, r++;
		if ((ev & POLLPRI) && (re & POLLPRI))
			sets[2][fd / 64] |= bit, r++;
	}
	for (int k = 0; k < 3; k++)
		if (addrs[k] && copy_out(t->mm, addrs[k], sets[k], bytes))
			r = -EFAULT;
out:
	for (int k = 0; k < 3; k++)
		free(sets[k]);
	free(fds);
	return r;
}

long sys_select(struct task *t, const unsigned long *a)
{
	struct timeval tv;

	if (!t->blk.retry && a[4]) {
		if (copy_in(t->mm, &tv, a[4], sizeof(tv)))
			return -EFAULT;
		/* Microseconds may carry whole seconds; a sum past time_t is negative to Linux
		 * (it wraps), so EINVAL. */
		time_t sec;
		if (tv.tv_sec < 0 || tv.tv_usec < 0 ||
		    __builtin_add_overflow(tv.tv_sec, tv.tv_usec / USEC_PER_SEC, &sec))
			return -EINVAL;
		t->blk.deadline =
		    ts_add(mono_now(),
			   (struct timespec){sec, (tv.tv_usec % USEC_PER_SEC) * NSEC_PER_USEC});
	}
	long r = select_common(t, arg_int(a, 0), a[1], a[2], a[3], a[4] != 0);
	if (r >= 0 && a[4]) {
		/* Linux reports the time left. */
		struct timespec left = ts_sub(t->blk.deadline, mono_now());
		tv = (struct timeval){left.tv_sec, left.tv_nsec / NSEC_PER_USEC};
		copy_out(t->mm, a[4], &tv, sizeof(tv));
	}
	return r;
}

long sys_pselect6(struct task *t, const unsigned long *a)
{
	struct timespec ts;
	struct {
		uint64_t ss;
		uint64_t len;
	} sig = {0, 0};
	long err;

	if (!t->blk.retry && a[4]) {
		if (copy_in(t->mm, &ts, a[4], sizeof(ts)))
			return -EFAULT;
		if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= NSEC_PER_SEC)
			return -EINVAL;
		t->blk.deadline = ts_add(mono_now(), ts);
	}
	if (a[5] && copy_in(t->mm, &sig, a[5], sizeof(sig)))
		return -EFAULT;
	if ((err = set_call_sigmask(t, sig.ss, sig.len)))
		return err;
	long r = select_common(t, arg_int(a, 0), a[1], a[2], a[3], a[4] != 0);
	if (r >= 0 && a[4]) {
		struct timespec left = ts_sub(t->blk.deadline, mono_now());
		copy_out(t->mm, a[4], &left, sizeof(left));
	}
	return r;
}

/* --- epoll and eventfd ------------------------------------------------------------------- */

/* Registers waits on the host descriptors inside epoll F (the sandbox's stdio). */
static long wait_epoll_host_fds(struct task *t, struct vfs_file *f)
{
	int fds[64];
	uint32_t ev[64];
	int n = vfs_epoll_host_fds(f, fds, ev, 64);

	for (int i = 0; i < n && i < 64; i++) {
		long err = task_wait_host_fd(t, fds[i], ev[i] & (POLLIN | POLLOUT | POLLPRI));
		if (err)
			return err;
	}
	return 0;
}

long sys_epoll_create1(struct task *t, const unsigned long *a)
{
	struct vfs_file *f;
	long err;

	if (a[0] & ~(unsigned long)EPOLL_CLOEXEC)
		return -EINVAL;
	if ((err = vfs_epoll_new(arg_int(a, 0), &f)))
		return err;
	return task_install_file(t, f, a[0] & EPOLL_CLOEXEC);
}

long sys_epoll_create(struct task *t, const unsigned long *a)
{
	const unsigned long none[6] = {0};

	if (arg_int(a, 0) <= 0)
		return -EINVAL;
	return sys_epoll_create1(t, none);
}

long sys_epoll_ctl(struct task *t, const unsigned long *a)
{
	struct vfs_file *ep = arg_file(t, arg_int(a, 0));
	struct vfs_file *target = arg_file(t, arg_int(a, 2));
	struct epoll_event ev;

	if (!ep || !target)
		return -EBADF;
	if (arg_int(a, 1) != EPOLL_CTL_DEL && copy_in(t->mm, &ev, a[3], sizeof(ev)))
		return -EFAULT;
	return vfs_epoll_ctl(ep, arg_int(a, 1), arg_int(a, 2), target,
			     arg_int(a, 1) == EPOLL_CTL_DEL ? NULL : &ev);
}

static long do_epoll_wait(struct task *t, int epfd, uintptr_t events, int maxevents, bool timed)
{
	struct vfs_file *ep = arg_file(t, epfd);
	struct waitq *wq = NULL;
	long err;

	if (!ep)
		return -EBADF;
	if (!vfs_is_epoll(ep) || maxevents <= 0 ||
	    maxevents > INT_MAX / (int)sizeof(struct epoll_event))
		return -EINVAL;
	int cap = maxevents < 1024 ? maxevents : 1024;
	struct epoll_event *out = malloc(cap * sizeof(*out));
	if (!out)
		return -ENOMEM;
	long n = vfs_epoll_wait(ep, out, cap);
	if (n > 0 && copy_out(t->mm, events, out, n * sizeof(*out)))
		n = -EFAULT;
	free(out);
	if (n != 0 || t->blk.interrupted)
		return n ? n : -EINTR;
	if (timed && ts_cmp(mono_now(), t->blk.deadline) >= 0)
		return 0;
	ep->ops->poll(ep, &wq);
	if ((wq && (err = task_wait_queue(t, wq, POLLIN))) || (err = wait_epoll_host_fds(t, ep)))
		return err;
	if (timed)
		task_wait_until(t, &t->blk.deadline);
	t->blk.intr_ret = -EINTR; /* epoll_wait is never restarted */
	return task_block(t);
}

static void set_ms_deadline(struct task *t, int timeout)
{
	if (!t->blk.retry && timeout >= 0)
		t->blk.deadline =
		    ts_add(mono_now(), (struct timespec){timeout / MSEC_PER_SEC,
							 (timeout % MSEC_PER_SEC) * NSEC_PER_MSEC});
}

long sys_epoll_wait(struct task *t, const unsigned long *a)
{
	set_ms_deadline(t, arg_int(a, 3));
	return do_epoll_wait(t, arg_int(a, 0), a[1], arg_int(a, 2), arg_int(a, 3) >= 0);
}

long sys_epoll_pwait(struct task *t, const unsigned long *a)
{
	long err;

	set_ms_deadline(t, arg_int(a, 3));
	if ((err = set_call_sigmask(t, a[4], a[5])))
		return err;
	return do_epoll_wait(t, arg_int(a, 0), a[1], arg_int(a, 2), arg_int(a, 3) >= 0);
}

/* epoll_pwait with a timespec timeout (NULL: none): EFAULT, then EINVAL for a bad time,
 * before anything else is looked at. */
long sys_epoll_pwait2(struct task *t, const unsigned long *a)
{
	struct timespec ts;
	long err;

	if (a[3] && !t->blk.retry) {
		if (copy_in(t->mm, &ts, a[3], sizeof(ts)))
			return -EFAULT;
		if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= NSEC_PER_SEC)
			return -EINVAL;
		t->blk.deadline = ts_add(mono_now(), ts);
	}
	if ((err = set_call_sigmask(t, a[4], a[5])))
		return err;
	return do_epoll_wait(t, arg_int(a, 0), a[1], arg_int(a, 2), a[3] != 0);
}

long sys_eventfd2(struct task *t, const unsigned long *a)
{
	struct vfs_file *f;
	long err;

	if ((err = vfs_eventfd_new(arg_uint(a, 0), arg_int(a, 1), &f)))
		return err;
	return task_install_file(t, f, a[1] & EFD_CLOEXEC);
}

long sys_eventfd(struct task *t, const unsigned long *a)
{
	const unsigned long args[6] = {a[0], 0};

	return sys_eventfd2(t, args);
}
