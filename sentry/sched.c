/* The run queue, the waits a blocked task registers, the deadline timer and host-descriptor
 * watches. One timerfd armed for the earliest deadline and one epoll registration per watched
 * host descriptor feed the kernel loop; everything else is wait queues inside the Sentry. */
#include "sentry/sched.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "common/units.h"
#include "sentry/kernel.h"
#include "sentry/signal.h"
#include "sentry/task.h"
#include "vfs/waitq.h"

struct task_waiter {
	struct waiter w;
	struct task *t;
	struct task_waiter *next; /* in the task's list */
};

/* A host descriptor some task waits on; registered with epoll while anyone waits. */
struct host_watch {
	int fd;
	uint32_t armed; /* events registered with epoll */
	struct waitq q;
	struct host_watch *next;
};

static struct {
	int epfd, timerfd;
	struct task *runq_head, *runq_tail;
	struct host_watch *watches;
	struct ktimer *timers; /* armed kernel timers */
	int ndeadlines;	       /* tasks with blk.has_wake_at: no scan of all tasks when zero */
	int timer_tag;	       /* the address identifies the timer in epoll data */
	struct timespec armed;
} sched = {.timerfd = -1};

/* Every deadline the Sentry keeps is in guest monotonic time (clock.h), which a restore
 * continues from the checkpoint's; only arming the host timerfd converts back. */

/* A + NS, through ts_add: A may be a guest's deadline, too far off for nanoseconds. */
static struct timespec ts_add_ns(struct timespec a, int64_t ns)
{
	struct timespec d = {ns / NSEC_PER_SEC, ns % NSEC_PER_SEC};

	if (d.tv_nsec < 0) {
		d.tv_sec--;
		d.tv_nsec += NSEC_PER_SEC;
	}
	return ts_add(a, d);
}

/* Guest timeouts arrive here as the guest gave them (nanosleep of 2^63-1 seconds is valid):
 * a sum beyond what time_t holds stays at its end, as Linux's timespec64_add_safe keeps it,
 * instead of wrapping into the past (a sleep "forever" that returned at once). */
struct timespec ts_add(struct timespec a, struct timespec b)
{
	const struct timespec end = {b.tv_sec < 0 ? INT64_MIN : INT64_MAX, 0};
	struct timespec r;

	if (__builtin_add_overflow(a.tv_sec, b.tv_sec, &r.tv_sec))
		return end;
	r.tv_nsec = a.tv_nsec + b.tv_nsec;
	if (r.tv_nsec >= NSEC_PER_SEC) {
		if (r.tv_sec == INT64_MAX)
			return end;
		r.tv_sec++;
		r.tv_nsec -= NSEC_PER_SEC;
	}
	return r;
}

int ts_cmp(struct timespec a, struct timespec b)
{
	if (a.tv_sec != b.tv_sec)
		return a.tv_sec < b.tv_sec ? -1 : 1;
	return a.tv_nsec < b.tv_nsec ? -1 : a.tv_nsec > b.tv_nsec;
}

struct timespec ts_sub(struct timespec a, struct timespec b)
{
	struct timespec r = {a.tv_sec - b.tv_sec, a.tv_nsec - b.tv_nsec};

	if (r.tv_nsec < 0) {
		r.tv_sec--;
		r.tv_nsec += NSEC_PER_SEC;
	}
	if (r.tv_sec < 0)
		r = (struct timespec){0, 0};
	return r;
}

bool ts_is_zero(struct timespec a)
{
	return a.tv_sec == 0 && a.tv_nsec == 0;
}

void ktimer_cancel(struct ktimer *k)
{
	if (!k->armed)
		return;
	for (struct ktimer **pp = &sched.timers; *pp; pp = &(*pp)->next)
		if (*pp == k) {
			*pp = k->next;
			break;
		}
	k->armed = false;
}

void ktimer_arm(struct ktimer *k, struct timespec deadline, struct timespec interval)
{
	ktimer_cancel(k);
	k->deadline = deadline;
	k->interval = interval;
	k->armed = true;
	k->next = sched.timers;
	sched.timers = k;
}

struct timespec ktimer_remaining(const struct ktimer *k)
{
	if (!k->armed)
		return (struct timespec){0, 0};
	struct timespec left = ts_sub(k->deadline, mono_now());
	/* An armed timer that is due reports a tiny remainder, never "disarmed". */
	return ts_is_zero(left) ? (struct timespec){0, 1} : left;
}

static void fire_timers(struct timespec now)
{
	bool again = true;

	while (again) {
		again = false;
		for (struct ktimer *k = sched.timers; k; k = k->next) {
			if (ts_cmp(now, k->deadline) < 0)
				continue;
			uint64_t n = 1;
			ktimer_cancel(k);
			if (!ts_is_zero(k->interval)) {
				struct timespec next = ts_add(k->deadline, k->interval);
				while (ts_cmp(now, next) >= 0) {
					next = ts_add(next, k->interval);
					n++;
				}
				ktimer_arm(k, next, k->interval);
			}
			k->fn(k, n); /* may re-arm or cancel timers: rescan */
			again = true;
			break;
		}
	}
}

static void waiter_fired(struct waiter *w, uint32_t events)
{
	(void)events;
	task_wake(((struct task_waiter *)w)->t);
}

int task_wait_queue(struct task *t, struct waitq *q, uint32_t events)
{
	struct task_waiter *tw = calloc(1, sizeof(*tw));

	if (!tw)
		return -ENOMEM;
	tw->t = t;
	tw->next = t->blk.waiters;
	t->blk.waiters = tw;
	waitq_add(q, &tw->w, waiter_fired, events);
	return 0;
}

int task_waitq_wake_n(struct waitq *q, int n, uint32_t bits, void (*mark)(struct task *))
{
	struct waiter *w = q->head, *next;
	int woken = 0;

	/* Oldest first would be fairer; the queue is newest first, so walk to the end. */
	for (; w && woken < n; w = next) {
		next = w->next;
		if (!(w->events & bits))
			continue;
		struct task *t = ((struct task_waiter *)w)->t;
		waitq_remove(w);
		if (mark)
			mark(t);
		task_wake(t);
		woken++;
	}
	return woken;
}

int task_waitq_requeue(struct waitq *from, struct waitq *to, int n, void (*moved_fn)(struct task *))
{
	int moved = 0;

	while (from->head && moved < n) {
		struct waiter *w = from->head;
		waitq_remove(w);
		waitq_add(to, w, w->fn, w->events);
		if (moved_fn)
			moved_fn(((struct task_waiter *)w)->t); /* w is the first member */
		moved++;
	}
	return moved;
}

static struct host_watch *watch_for(int fd)
{
	struct host_watch *w;

	for (w = sched.watches; w; w = w->next)
		if (w->fd == fd)
			return w;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->fd = fd;
	w->next = sched.watches;
	sched.watches = w;
	return w;
}

static void watch_drop(struct host_watch *w)
{
	for (struct host_watch **pp = &sched.watches; *pp; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	if (w->armed)
		epoll_ctl(sched.epfd, EPOLL_CTL_DEL, w->fd, NULL);
	free(w);
}

int task_wait_host_fd(struct task *t, int fd, uint32_t events)
{
	struct host_watch *w = watch_for(fd);
	int err;

	if (!w)
		return -ENOMEM;
	if ((w->armed | events) != w->armed) {
		struct epoll_event ev = {.events = w->armed | events, .data.ptr = w};
		int op = w->armed ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
		if (epoll_ctl(sched.epfd, op, fd, &ev)) {
			err = -errno;
			if (!w->q.head && !w->armed)
				watch_drop(w);
			return err;
		}
		w->armed |= events;
	}
	return task_wait_queue(t, &w->q, events);
}

void task_wait_until(struct task *t, const struct timespec *deadline)
{
	if (!t->blk.has_wake_at)
		sched.ndeadlines++;
	t->blk.has_wake_at = true;
	t->blk.wake_at = *deadline;
}

long task_block(struct task *t)
{
	t->blk.blocked = true;
	/* A signal that arrived while the thread was running (its interrupt stop still on the
	 * way) must end this wait at once, or nothing would. */
	if (signal_pending(t)) {
		t->blk.interrupt_pending = true;
		task_wake(t);
	}
	return -ESENTRY_BLOCK;
}

void task_wake(struct task *t)
{
	if (!t->blk.blocked || t->blk.on_runq)
		return;
	t->blk.on_runq = true;
	t->blk.runq_next = NULL;
	if (sched.runq_tail)
		sched.runq_tail->blk.runq_next = t;
	else
		sched.runq_head = t;
	sched.runq_tail = t;
}

void task_cancel_wait(struct task *t)
{
	while (t->blk.waiters) {
		struct task_waiter *tw = t->blk.waiters;
		t->blk.waiters = tw->next;
		waitq_remove(&tw->w);
		free(tw);
	}
	if (t->blk.has_wake_at)
		sched.ndeadlines--;
	t->blk.has_wake_at = false;
	if (t->blk.on_runq) {
		struct task **pp = &sched.runq_head, *prev = NULL;
		for (; *pp; prev = *pp, pp = &(*pp)->blk.runq_next)
			if (*pp == t) {
				*pp = t->blk.runq_next;
				if (sched.runq_tail == t)
					sched.runq_tail = prev;
				break;
			}
		t->blk.on_runq = false;
	}
	t->blk.blocked = false;
}

void sched_run_woken(void)
{
	while (sched.runq_head) {
		struct task *t = sched.runq_head;
		sched.runq_head = t->blk.runq_next;
		if (!sched.runq_head)
			sched.runq_tail = NULL;
		t->blk.on_runq = false;
		bool timed_out = t->blk.has_wake_at && ts_cmp(mono_now(), t->blk.wake_at) >= 0;
		bool interrupted = t->blk.interrupt_pending;
		task_cancel_wait(t);
		t->blk.interrupt_pending = false;
		t->blk.retry = true;
		t->blk.timed_out = timed_out;
		if (interrupted)
			kernel_interrupt_syscall(t);
		else
			kernel_retry_syscall(t);
	}
}

bool sched_needs_events(void)
{
	return sched.watches || sched.timers || sched.ndeadlines > 0;
}

int sched_init(int epfd)
{
	sched.epfd = epfd;
	sched.timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (sched.timerfd < 0)
		return -errno;
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &sched.timer_tag};
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, sched.timerfd, &ev))
		return -errno;
	return 0;
}

void sched_arm_timer(void)
{
	struct timespec earliest = {0, 0};
	bool any = false;

	if (sched.ndeadlines) {
		for_each_task(t)
			if (t->blk.has_wake_at && (!any || ts_cmp(t->blk.wake_at, earliest) < 0)) {
				earliest = t->blk.wake_at;
				any = true;
			}
	}
	for (struct ktimer *k = sched.timers; k; k = k->next)
		if (!any || ts_cmp(k->deadline, earliest) < 0) {
			earliest = k->deadline;
			any = true;
		}
	if (!any || (earliest.tv_sec == 0 && earliest.tv_nsec == 0))
		earliest = (struct timespec){0, any ? 1 : 0}; /* 0 disarms; 1 ns is "now" */
	if (ts_cmp(earliest, sched.armed) == 0)
		return;
	struct itimerspec its = {.it_value = earliest};
	if (any) {
		/* A host timer may fire a little before guest time gets there (the guest's
		 * clock is steered towards the host's, not on it): expire_deadlines finds nothing
		 * due then, and the timer is armed again. */
		its.it_value = ts_add_ns(earliest, -clock_host_offset());
		if (its.it_value.tv_sec < 0 || ts_is_zero(its.it_value))
			its.it_value = (struct timespec){0, 1};
	}
	timerfd_settime(sched.timerfd, TFD_TIMER_ABSTIME, &its, NULL);
	sched.armed = earliest;
}

static void expire_deadlines(void)
{
	struct timespec now = mono_now();
	uint64_t ticks;

	while (read(sched.timerfd, &ticks, sizeof(ticks)) > 0)
		;
	sched.armed = (struct timespec){0, 0};
	fire_timers(now);
	for_each_task(t)
		if (t->blk.has_wake_at && ts_cmp(now, t->blk.wake_at) >= 0)
			task_wake(t);
}

bool sched_handle_event(void *ptr, uint32_t events)
{
	if (ptr == &sched.timer_tag) {
		expire_deadlines();
		return true;
	}
	for (struct host_watch *w = sched.watches; w; w = w->next) {
		if (w != ptr)
			continue;
		/* A hang-up or error ends every wait, whatever it waited for. */
		waitq_wake(&w->q, events & (EPOLLHUP | EPOLLERR) ? 0 : events);
		/* Level-triggered: a watch nobody waits on any more would fire forever. */
		if (!w->q.head)
			watch_drop(w);
		return true;
	}
	return false;
}
