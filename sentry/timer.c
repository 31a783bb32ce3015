/* Guest timers on the kernel's ktimers: the per-process ITIMER_REAL (and alarm), POSIX timers
 * (timer_create & co) and timerfd files. Expiry sends a signal or wakes a file's readers. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>

#include "common/units.h"
#include "sentry/kernel.h"
#include "sentry/mm.h"
#include "sentry/sched.h"
#include "sentry/signal.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"
#include "sentry/timer.h"
#include "state/codec.h"
#include "vfs/save.h"
#include "vfs/vfs.h"
#include "vfs/waitq.h"

#define container_of(p, type, member) ((type *)((char *)(p)-offsetof(type, member)))

static struct timespec tv_to_ts(struct timeval tv)
{
	return (struct timespec){tv.tv_sec, tv.tv_usec * NSEC_PER_USEC};
}

static struct timeval ts_to_tv(struct timespec ts)
{
	/* Round up, so a running timer never reads as disarmed. */
	return (struct timeval){ts.tv_sec, (ts.tv_nsec + NSEC_PER_USEC - 1) / NSEC_PER_USEC};
}

static bool valid_tv(struct timeval tv)
{
	return tv.tv_sec >= 0 && tv.tv_usec >= 0 && tv.tv_usec < USEC_PER_SEC;
}

static bool valid_ts(struct timespec ts)
{
	return ts.tv_sec >= 0 && ts.tv_nsec >= 0 && ts.tv_nsec < NSEC_PER_SEC;
}

/* --- ITIMER_REAL and alarm ----------------------------------------------------------------- */

static void itimer_fired(struct ktimer *k, uint64_t n)
{
	struct process_timers *pt = container_of(k, struct process_timers, real);
	siginfo_t si;

	(void)n;
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGALRM;
	si.si_code = SI_KERNEL;
	signal_send_process(pt->leader, SIGALRM, &si);
}

/* CPU-time itimers are sampled: the host tells CPU time, not when a budget runs out. The
 * stub's CPU time counts for both: guest time spent in the Sentry is not charged. */
#define CPU_POLL_NS 4000000L

static void posix_fired(struct ktimer *k, uint64_t n);

/* True (and re-armed or disarmed) if C has run out at CPU time NOW. */
static bool cpu_expired(struct cpu_itimer *c, struct timespec now)
{
	if (!c->armed || ts_cmp(now, c->expiry) < 0)
		return false;
	if (ts_is_zero(c->interval))
		c->armed = false;
	else
		c->expiry = ts_add(now, c->interval);
	return true;
}

/* RLIMIT_CPU of LEADER's process at CPU time NOW, as Linux checks it: SIGKILL at the hard
 * limit; SIGXCPU at the soft one, which then moves a second on, so that it comes every second.
 * Whether the limit still needs watching. */
static bool cpu_limit_check(struct task *leader, struct timespec now)
{
	struct rlimit *l = &leader->rlim[RLIMIT_CPU];
	siginfo_t si;

	if (l->rlim_cur == RLIM_INFINITY)
		return false;
	memset(&si, 0, sizeof(si));
	si.si_code = SI_KERNEL;
	if (l->rlim_max != RLIM_INFINITY && (uint64_t)now.tv_sec >= l->rlim_max) {
		si.si_signo = SIGKILL;
		signal_send_process_forced(leader, SIGKILL, &si);
		return false;
	}
	if ((uint64_t)now.tv_sec >= l->rlim_cur) {
		si.si_signo = SIGXCPU;
		signal_send_process(leader, SIGXCPU, &si);
		rlim_t next = l->rlim_cur + 1;
		for_each_task(o)
			if (o->tgid == leader->tgid)
				o->rlim[RLIMIT_CPU].rlim_cur = next;
	}
	return true;
}

static void cpu_poll_fired(struct ktimer *k, uint64_t n)
{
	struct process_timers *pt = container_of(k, struct process_timers, cpu_poll);
	static const int sigs[2] = {SIGVTALRM, SIGPROF};
	struct timespec now = process_cpu_time(pt->leader);
	bool armed = cpu_limit_check(pt->leader, now);

	(void)n;
	for (int i = 0; i < 2; i++) {
		struct cpu_itimer *c = &pt->cpu[i];
		if (cpu_expired(c, now)) {
			siginfo_t si;
			memset(&si, 0, sizeof(si));
			si.si_signo = sigs[i];
			si.si_code = SI_KERNEL;
			signal_send_process(pt->leader, sigs[i], &si);
		}
		armed |= c->armed;
	}
	for (struct posix_timer *p = pt->posix; p; p = p->next) {
		if (cpu_expired(&p->cpu, now))
			posix_fired(&p->k, 1);
		armed |= p->cpu.armed;
	}
	if (!armed)
		ktimer_cancel(k);
}

static void cpu_poll_start(struct process_timers *pt)
{
	if (!pt->cpu_poll.armed)
		ktimer_arm(&pt->cpu_poll, ts_add(mono_now(), (struct timespec){0, CPU_POLL_NS}),
			   (struct timespec){0, CPU_POLL_NS});
}

static struct process_timers *timers_of(struct task *t)
{
	struct task *l = t->group_leader;

	if (!l->timers) {
		l->timers = calloc(1, sizeof(*l->timers));
		if (!l->timers)
			return NULL;
		l->timers->leader = l;
		l->timers->real.fn = itimer_fired;
		l->timers->cpu_poll.fn = cpu_poll_fired;
	}
	return l->timers;
}

void timers_cpu_limit_changed(struct task *leader)
{
	struct process_timers *pt;

	if (leader->rlim[RLIMIT_CPU].rlim_cur != RLIM_INFINITY && (pt = timers_of(leader)))
		cpu_poll_start(pt);
}

void timers_release(struct task *leader)
{
	struct process_timers *pt = leader->timers;

	if (!pt)
		return;
	ktimer_cancel(&pt->real);
	ktimer_cancel(&pt->cpu_poll);
	timers_exec(leader);
	free(pt);
	leader->timers = NULL;
}

void timers_exec(struct task *leader)
{
	struct process_timers *pt = leader->timers;

	while (pt && pt->posix) {
		struct posix_timer *p = pt->posix;
		pt->posix = p->next;
		ktimer_cancel(&p->k);
		free(p);
	}
}

static long get_itimer(struct task *t, int which, struct itimerval *out)
{
	struct process_timers *pt;

	memset(out, 0, sizeof(*out));
	if (which != ITIMER_REAL && which != ITIMER_VIRTUAL && which != ITIMER_PROF)
		return -EINVAL;
	if (!(pt = timers_of(t)))
		return -ENOMEM;
	if (which == ITIMER_REAL) {
		out->it_value = ts_to_tv(ktimer_remaining(&pt->real));
		out->it_interval = ts_to_tv(pt->real.interval);
		return 0;
	}
	struct cpu_itimer *c = &pt->cpu[which == ITIMER_PROF];
	if (c->armed) {
		struct timespec left = ts_sub(c->expiry, process_cpu_time(t));
		out->it_value = ts_to_tv(ts_is_zero(left) ? (struct timespec){0, 1} : left);
		out->it_interval = ts_to_tv(c->interval);
	}
	return 0;
}

long sys_getitimer(struct task *t, const unsigned long *a)
{
	struct itimerval v;
	long err = get_itimer(t, arg_int(a, 0), &v);

	return err ? err : copy_out(t->mm, a[1], &v, sizeof(v));
}

long sys_setitimer(struct task *t, const unsigned long *a)
{
	struct itimerval nv, old;
	struct process_timers *pt;
	int which = arg_int(a, 0);
	long err;

	if (which != ITIMER_REAL && which != ITIMER_VIRTUAL && which != ITIMER_PROF)
		return -EINVAL;
	memset(&nv, 0, sizeof(nv));
	if (a[1] && copy_in(t->mm, &nv, a[1], sizeof(nv)))
		return -EFAULT;
	if (!valid_tv(nv.it_value) || !valid_tv(nv.it_interval))
		return -EINVAL;
	if ((err = get_itimer(t, which, &old)))
		return err;
	if (a[2] && copy_out(t->mm, a[2], &old, sizeof(old)))
		return -EFAULT;
	pt = timers_of(t);
	struct timespec value = tv_to_ts(nv.it_value);
	if (which != ITIMER_REAL) {
		struct cpu_itimer *c = &pt->cpu[which == ITIMER_PROF];
		c->armed = !ts_is_zero(value);
		c->expiry = ts_add(process_cpu_time(t), value);
		c->interval = tv_to_ts(nv.it_interval);
		if (c->armed)
			cpu_poll_start(pt);
		return 0;
	}
	if (ts_is_zero(value))
		ktimer_cancel(&pt->real);
	else
		ktimer_arm(&pt->real, ts_add(mono_now(), value), tv_to_ts(nv.it_interval));
	return 0;
}

long sys_alarm(struct task *t, const unsigned long *a)
{
	struct process_timers *pt = timers_of(t);
	unsigned int secs = arg_uint(a, 0);

	if (!pt)
		return -ENOMEM;
	struct timespec left = ktimer_remaining(&pt->real);
	/* alarm(2) reports whole seconds, rounding a partial one up (at least 1 if armed). */
	long old = left.tv_sec + (left.tv_nsec >= 500000000 || (left.tv_sec == 0 && left.tv_nsec));
	if (secs)
		ktimer_arm(&pt->real, ts_add(mono_now(), (struct timespec){secs, 0}),
			   (struct timespec){0, 0});
	else
		ktimer_cancel(&pt->real);
	return old;
}

/* --- POSIX timers ------------------------------------------------------------------------- */

static void posix_fired(struct ktimer *k, uint64_t n)
{
	struct posix_timer *p = container_of(k, struct posix_timer, k);
	struct task *target = p->leader;
	siginfo_t si;

	if (p->notify == SIGEV_NONE)
		return;
	if (p->queued) {
		p->overrun += n; /* one signal stands for every expiry until it is taken */
		return;
	}
	/* Periods the loop missed are overruns of this expiry's signal. */
	p->overrun = n - 1;
	p->queued = true;
	memset(&si, 0, sizeof(si));
	si.si_signo = p->signo;
	si.si_code = SI_TIMER;
	si.si_timerid = p->id;
	si.si_overrun = n - 1;
	si.si_value = p->value;
	if (p->notify == SIGEV_THREAD_ID) {
		target = task_by_tid(p->tid);
		if (target)
			signal_send_thread(target, p->signo, &si);
	} else {
		signal_send_process(target, p->signo, &si);
	}
}

/* Timer ids are per process; the signal's queue belongs to the process the timer is in. */
void timer_signal_dequeued(siginfo_t *info)
{
	for_each_process(l) {
		if (!l->timers)
			continue;
		for (struct posix_timer *p = l->timers->posix; p; p = p->next)
			if (p->id == info->si_timerid && p->queued && p->signo == info->si_signo) {
				p->queued = false;
				info->si_overrun = p->overrun;
				p->overrun_last = p->overrun;
				p->overrun = 0;
				return;
			}
	}
}

clockid_t timer_decode_clock(struct task *t, clockid_t clk)
{
	if (clk >= 0)
		return clk;
	pid_t pid = ~(clk >> 3);
	bool thread = clk & 4;
	if ((clk & 7) == 7)
		return -EINVAL; /* a clock fd: not supported */
	if (thread)
		return (pid == 0 || pid == t->tid) ? CLOCK_THREAD_CPUTIME_ID : -EINVAL;
	return (pid == 0 || pid == t->tgid) ? CLOCK_PROCESS_CPUTIME_ID : -EINVAL;
}

static struct posix_timer *find_timer(struct task *t, int id)
{
	struct process_timers *pt = t->group_leader->timers;

	for (struct posix_timer *p = pt ? pt->posix : NULL; p; p = p->next)
		if (p->id == id)
			return p;
	return NULL;
}

long sys_timer_create(struct task *t, const unsigned long *a)
{
	clockid_t clk = timer_decode_clock(t, arg_int(a, 0));
	struct sigevent ev;
	struct process_timers *pt = timers_of(t);

	if (!pt)
		return -ENOMEM;
	if (clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC && clk != CLOCK_BOOTTIME &&
	    clk != CLOCK_TAI && clk != CLOCK_PROCESS_CPUTIME_ID)
		return clk < 0 || clk > CLOCK_TAI
			   ? -EINVAL
			   : syscall_unsupported(t, -EOPNOTSUPP, "clock %d", clk);
	memset(&ev, 0, sizeof(ev));
	if (a[1]) {
		if (copy_in(t->mm, &ev, a[1], sizeof(ev)))
			return -EFAULT;
	} else {
		ev.sigev_notify = SIGEV_SIGNAL;
		ev.sigev_signo = SIGALRM;
	}
	if (ev.sigev_notify != SIGEV_NONE && ev.sigev_notify != SIGEV_SIGNAL &&
	    ev.sigev_notify != SIGEV_THREAD_ID)
		return -EINVAL;
	if (ev.sigev_notify != SIGEV_NONE && (ev.sigev_signo < 1 || ev.sigev_signo > NSIG_GUEST))
		return -EINVAL;
	if (ev.sigev_notify == SIGEV_THREAD_ID) {
		struct task *th = task_by_tid(ev._sigev_un._tid);
		if (!th || th->tgid != t->tgid)
			return -EINVAL;
	}
	struct posix_timer *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->id = pt->next_id++;
	p->clock = clk;
	p->notify = ev.sigev_notify;
	p->signo = ev.sigev_signo;
	p->value = a[1] ? ev.sigev_value : (union sigval){.sival_int = p->id};
	p->tid = ev._sigev_un._tid;
	p->leader = t->group_leader;
	p->k.fn = posix_fired;
	if (copy_out(t->mm, a[2], &p->id, sizeof(int))) {
		free(p);
		return -EFAULT;
	}
	p->next = pt->posix;
	pt->posix = p;
	return 0;
}

static void timer_value(struct ktimer *k, struct itimerspec *out)
{
	out->it_value = ktimer_remaining(k);
	out->it_interval = k->armed ? k->interval : (struct timespec){0, 0};
}

static void posix_value(struct posix_timer *p, struct itimerspec *out)
{
	if (p->clock != CLOCK_PROCESS_CPUTIME_ID) {
		timer_value(&p->k, out);
		return;
	}
	memset(out, 0, sizeof(*out));
	if (p->cpu.armed) {
		struct timespec left = ts_sub(p->cpu.expiry, process_cpu_time(p->leader));
		out->it_value = ts_is_zero(left) ? (struct timespec){0, 1} : left;
		out->it_interval = p->cpu.interval;
	}
}

/* Arms K from a guest itimerspec: relative, or absolute on clock CLK. */
static void arm_from(struct ktimer *k, clockid_t clk, bool abs, const struct itimerspec *v)
{
	if (ts_is_zero(v->it_value)) {
		ktimer_cancel(k);
		return;
	}
	struct timespec deadline;
	if (abs) {
		struct timespec now;
		clock_now(clk, &now);
		deadline = ts_add(mono_now(), ts_sub(v->it_value, now));
	} else {
		deadline = ts_add(mono_now(), v->it_value);
	}
	ktimer_arm(k, deadline, v->it_interval);
}

long sys_timer_settime(struct task *t, const unsigned long *a)
{
	struct posix_timer *p = find_timer(t, arg_int(a, 0));
	struct itimerspec nv, old;

	if (!p)
		return -EINVAL;
	if (copy_in(t->mm, &nv, a[2], sizeof(nv)))
		return -EFAULT;
	if (!valid_ts(nv.it_value) || !valid_ts(nv.it_interval))
		return -EINVAL;
	posix_value(p, &old);
	if (a[3] && copy_out(t->mm, a[3], &old, sizeof(old)))
		return -EFAULT;
	p->overrun = p->overrun_last = 0;
	if (p->clock == CLOCK_PROCESS_CPUTIME_ID) {
		struct timespec now = process_cpu_time(t);
		p->cpu.armed = !ts_is_zero(nv.it_value);
		p->cpu.expiry = (a[1] & TIMER_ABSTIME) ? nv.it_value : ts_add(now, nv.it_value);
		p->cpu.interval = nv.it_interval;
		if (p->cpu.armed)
			cpu_poll_start(t->group_leader->timers);
		return 0;
	}
	arm_from(&p->k, p->clock, a[1] & TIMER_ABSTIME, &nv);
	return 0;
}

long sys_timer_gettime(struct task *t, const unsigned long *a)
{
	struct posix_timer *p = find_timer(t, arg_int(a, 0));
	struct itimerspec v;

	if (!p)
		return -EINVAL;
	posix_value(p, &v);
	return copy_out(t->mm, a[1], &v, sizeof(v));
}

long sys_timer_getoverrun(struct task *t, const unsigned long *a)
{
	struct posix_timer *p = find_timer(t, arg_int(a, 0));

	return p ? p->overrun_last : -EINVAL;
}

long sys_timer_delete(struct task *t, const unsigned long *a)
{
	struct process_timers *pt = t->group_leader->timers;

	for (struct posix_timer **pp = pt ? &pt->posix : NULL; pp && *pp; pp = &(*pp)->next)
		if ((*pp)->id == arg_int(a, 0)) {
			struct posix_timer *p = *pp;
			*pp = p->next;
			ktimer_cancel(&p->k);
			free(p);
			return 0;
		}
	return -EINVAL;
}

/* --- timerfd ------------------------------------------------------------------------------ */

struct timerfd {
	struct ktimer k;
	clockid_t clock;
	uint64_t ticks;	   /* expirations not yet read */
	bool abs_realtime; /* armed with TFD_TIMER_ABSTIME on CLOCK_REALTIME */
	struct waitq wq;
};

static void timerfd_fired(struct ktimer *k, uint64_t n)
{
	struct timerfd *tf = container_of(k, struct timerfd, k);

	tf->ticks += n;
	waitq_wake(&tf->wq, POLLIN);
}

static ssize_t timerfd_read(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	struct timerfd *tf = f->priv;

	(void)pos;
	if (iovcnt < 1 || iov[0].iov_len < 8)
		return -EINVAL;
	if (!tf->ticks)
		return -EAGAIN;
	memcpy(iov[0].iov_base, &tf->ticks, 8);
	tf->ticks = 0;
	return 8;
}

static uint32_t timerfd_poll(struct vfs_file *f, struct waitq **wq)
{
	struct timerfd *tf = f->priv;

	*wq = &tf->wq;
	return tf->ticks ? POLLIN | POLLRDNORM : 0;
}

static void timerfd_release(struct vfs_file *f)
{
	struct timerfd *tf = f->priv;

	ktimer_cancel(&tf->k);
	waitq_detach_all(&tf->wq);
	free(tf);
}

static const struct vfs_file_ops timerfd_ops = {
    .read = timerfd_read,
    .poll = timerfd_poll,
    .getattr = vfs_anon_getattr,
    .release = timerfd_release,
};

static struct timerfd *timerfd_of(struct task *t, int fd)
{
	struct vfs_file *f = arg_file(t, fd);

	return f && f->ops == &timerfd_ops ? f->priv : NULL;
}

long sys_timerfd_create(struct task *t, const unsigned long *a)
{
	clockid_t clk = arg_int(a, 0);
	int flags = arg_int(a, 1);

	if (clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC && clk != CLOCK_BOOTTIME &&
	    clk != CLOCK_REALTIME_ALARM && clk != CLOCK_BOOTTIME_ALARM)
		return -EINVAL;
	if (flags & ~(TFD_CLOEXEC | TFD_NONBLOCK))
		return -EINVAL;
	struct timerfd *tf = calloc(1, sizeof(*tf));
	struct vfs_file *f = calloc(1, sizeof(*f));
	if (!tf || !f) {
		free(tf);
		free(f);
		return -ENOMEM;
	}
	tf->clock = clk == CLOCK_REALTIME_ALARM	  ? CLOCK_REALTIME
		    : clk == CLOCK_BOOTTIME_ALARM ? CLOCK_BOOTTIME
						  : clk;
	tf->k.fn = timerfd_fired;
	f->ops = &timerfd_ops;
	f->refs = 1;
	f->flags = O_RDWR | (flags & TFD_NONBLOCK ? O_NONBLOCK : 0);
	f->priv = tf;
	return task_install_file(t, f, flags & TFD_CLOEXEC);
}

long sys_timerfd_settime(struct task *t, const unsigned long *a)
{
	struct timerfd *tf = timerfd_of(t, arg_int(a, 0));
	struct itimerspec nv, old;

	if (!arg_file(t, arg_int(a, 0)))
		return -EBADF;
	if (!tf)
		return -EINVAL;
	if (a[1] & ~(unsigned long)(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET))
		return -EINVAL;
	if (copy_in(t->mm, &nv, a[2], sizeof(nv)))
		return -EFAULT;
	if (!valid_ts(nv.it_value) || !valid_ts(nv.it_interval))
		return -EINVAL;
	timer_value(&tf->k, &old);
	if (a[3] && copy_out(t->mm, a[3], &old, sizeof(old)))
		return -EFAULT;
	tf->ticks = 0;
	tf->abs_realtime = (a[1] & TFD_TIMER_ABSTIME) && tf->clock == CLOCK_REALTIME;
	arm_from(&tf->k, tf->clock, a[1] & TFD_TIMER_ABSTIME, &nv);
	return 0;
}

long sys_timerfd_gettime(struct task *t, const unsigned long *a)
{
	struct timerfd *tf = timerfd_of(t, arg_int(a, 0));
	struct itimerspec v;

	if (!arg_file(t, arg_int(a, 0)))
		return -EBADF;
	if (!tf)
		return -EINVAL;
	timer_value(&tf->k, &v);
	return copy_out(t->mm, a[1], &v, sizeof(v));
}

/* --- checkpoint ---------------------------------------------------------------------------- */

/* Deadlines are in guest monotonic time, which a restore continues (mono_continue_from), so
 * they are saved as they are. */
static void ktimer_save(struct enc *e, const struct ktimer *k)
{
	enc_bool(e, k->armed);
	enc_i64(e, k->deadline.tv_sec);
	enc_i64(e, k->deadline.tv_nsec);
	enc_i64(e, k->interval.tv_sec);
	enc_i64(e, k->interval.tv_nsec);
}

static void ktimer_load(struct dec *d, struct ktimer *k)
{
	bool armed = dec_bool(d);
	struct timespec deadline = {dec_i64(d), dec_i64(d)};
	struct timespec interval = {dec_i64(d), dec_i64(d)};

	if (!valid_ts(deadline) || !valid_ts(interval))
		dec_fail(d, "bad timer");
	else if (armed && dec_ok(d))
		ktimer_arm(k, deadline, interval);
}

static void cpu_itimer_save(struct enc *e, const struct cpu_itimer *c)
{
	enc_bool(e, c->armed);
	enc_i64(e, c->expiry.tv_sec);
	enc_i64(e, c->expiry.tv_nsec);
	enc_i64(e, c->interval.tv_sec);
	enc_i64(e, c->interval.tv_nsec);
}

static void cpu_itimer_load(struct dec *d, struct cpu_itimer *c)
{
	c->armed = dec_bool(d);
	c->expiry = (struct timespec){dec_i64(d), dec_i64(d)};
	c->interval = (struct timespec){dec_i64(d), dec_i64(d)};
	if (!valid_ts(c->expiry) || !valid_ts(c->interval))
		dec_fail(d, "bad CPU timer");
}

void timers_save(struct enc *e, const struct task *leader)
{
	const struct process_timers *pt = leader->timers;
	uint64_t n = 0;

	enc_bool(e, pt != NULL);
	if (!pt)
		return;
	ktimer_save(e, &pt->real);
	cpu_itimer_save(e, &pt->cpu[0]);
	cpu_itimer_save(e, &pt->cpu[1]);
	enc_u32(e, pt->next_id);
	for (const struct posix_timer *p = pt->posix; p; p = p->next)
		n++;
	enc_u64(e, n);
	for (const struct posix_timer *p = pt->posix; p; p = p->next) {
		ktimer_save(e, &p->k);
		cpu_itimer_save(e, &p->cpu);
		enc_u32(e, p->id);
		enc_u32(e, p->clock);
		enc_u32(e, p->notify);
		enc_u32(e, p->signo);
		enc_u64(e, (uint64_t)(uintptr_t)p->value.sival_ptr);
		enc_u32(e, p->tid);
		enc_u32(e, p->overrun);
		enc_u32(e, p->overrun_last);
		enc_bool(e, p->queued);
	}
}

int timers_load(struct dec *d, struct task *leader)
{
	if (!dec_bool(d))
		return dec_ok(d) ? 0 : -EINVAL;
	struct process_timers *pt = timers_of(leader);
	if (!pt)
		return dec_fail(d, "out of memory");
	ktimer_load(d, &pt->real);
	cpu_itimer_load(d, &pt->cpu[0]);
	cpu_itimer_load(d, &pt->cpu[1]);
	pt->next_id = (int)dec_u32(d);
	uint64_t n = dec_max(d, 1 << 20, "timer count");
	struct posix_timer **tail = &pt->posix;
	for (uint64_t i = 0; i < n && dec_ok(d); i++) {
		struct posix_timer *p = calloc(1, sizeof(*p));
		if (!p)
			return dec_fail(d, "out of memory");
		p->k.fn = posix_fired;
		p->leader = leader;
		*tail = p; /* on the list at once: timers_release frees it on failure */
		tail = &p->next;
		ktimer_load(d, &p->k);
		cpu_itimer_load(d, &p->cpu);
		p->id = (int)dec_u32(d);
		p->clock = (clockid_t)dec_u32(d);
		p->notify = (int)dec_u32(d);
		p->signo = (int)dec_u32(d);
		p->value.sival_ptr = (void *)(uintptr_t)dec_u64(d);
		p->tid = (pid_t)dec_u32(d);
		p->overrun = (int)dec_u32(d);
		p->overrun_last = (int)dec_u32(d);
		p->queued = dec_bool(d);
		if (p->signo < 0 || p->signo > NSIG_GUEST)
			dec_fail(d, "bad timer signal");
	}
	if (pt->cpu[0].armed || pt->cpu[1].armed)
		cpu_poll_start(pt);
	for (struct posix_timer *p = pt->posix; p; p = p->next)
		if (p->cpu.armed)
			cpu_poll_start(pt);
	return dec_ok(d) ? 0 : -EINVAL;
}

/* --- timerfd checkpoint -------------------------------------------------------------------- */

/* The record: clock, unread expirations, and if armed the interval and the next expiry. The
 * expiry is saved as time remaining (monotonic and boottime clocks, and relative timers: the
 * restoring process's monotonic clock has another origin), or for a CLOCK_REALTIME timer
 * armed with TFD_TIMER_ABSTIME as the absolute wall-clock time, which it keeps: expiries the
 * wall clock passed while no Sentry ran are counted as expirations at restore. */

/* Saved times beyond this (about 146 years) are refused: nanoseconds stay within 63 bits. */
#define TIMERFD_MAX_SEC (INT64_MAX / NSEC_PER_SEC / 2)

static void enc_ts(struct enc *e, struct timespec ts)
{
	enc_i64(e, ts.tv_sec);
	enc_i64(e, ts.tv_nsec);
}

static struct timespec dec_ts(struct dec *d)
{
	struct timespec ts;

	ts.tv_sec = dec_i64(d);
	ts.tv_nsec = dec_i64(d);
	if (ts.tv_sec < 0 || ts.tv_sec > TIMERFD_MAX_SEC || ts.tv_nsec < 0 ||
	    ts.tv_nsec >= NSEC_PER_SEC)
		dec_fail(d, "bad time");
	return ts;
}

static int64_t ts_ns(struct timespec ts)
{
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static struct timespec ns_ts(int64_t ns)
{
	return (struct timespec){ns / NSEC_PER_SEC, ns % NSEC_PER_SEC};
}

static int timerfd_save(struct enc *e, struct vfs_file *f)
{
	struct timerfd *tf = f->priv;
	struct timespec left = ktimer_remaining(&tf->k);

	enc_u32(e, (uint32_t)tf->clock);
	enc_u64(e, tf->ticks);
	enc_bool(e, tf->k.armed);
	if (!tf->k.armed)
		return 0;
	if (left.tv_sec > TIMERFD_MAX_SEC / 2 || tf->k.interval.tv_sec > TIMERFD_MAX_SEC)
		return enc_fail(e, "a timerfd armed for more than a century");
	enc_bool(e, tf->abs_realtime);
	if (tf->abs_realtime) {
		struct timespec now;
		clock_now(CLOCK_REALTIME, &now);
		enc_ts(e, ts_add(now, left));
	} else {
		enc_ts(e, left);
	}
	enc_ts(e, tf->k.interval);
	return 0;
}

/* Arms TF for an absolute CLOCK_REALTIME expiry AT, counting the periods already past. */
static void timerfd_arm_realtime(struct timerfd *tf, struct timespec at, struct timespec interval)
{
	struct timespec now;
	int64_t at_ns = ts_ns(at), now_ns, iv = ts_ns(interval);

	clock_now(CLOCK_REALTIME, &now);
	now_ns = ts_ns(now);
	if (at_ns <= now_ns) {
		if (!iv) {
			tf->ticks++;
			return;
		}
		int64_t n = (now_ns - at_ns) / iv + 1;
		tf->ticks += (uint64_t)n;
		at_ns += n * iv; /* < now + interval: no overflow */
	}
	ktimer_arm(&tf->k, ts_add(mono_now(), ns_ts(at_ns - now_ns)), interval);
}

static int timerfd_load(struct dec *d, struct vfs_file *f)
{
	clockid_t clock = (clockid_t)dec_u32(d);
	uint64_t ticks = dec_u64(d);
	bool armed = dec_bool(d), abs_realtime = armed && dec_bool(d);
	struct timespec value = {0, 0}, interval = {0, 0};
	struct timerfd *tf;

	if (armed) {
		value = dec_ts(d);
		interval = dec_ts(d);
	}
	if (!dec_ok(d) ||
	    (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC && clock != CLOCK_BOOTTIME) ||
	    (abs_realtime && clock != CLOCK_REALTIME) || (armed && ts_is_zero(value)))
		return dec_fail(d, "bad timerfd record");
	if (!(tf = calloc(1, sizeof(*tf))))
		return dec_fail(d, "out of memory");
	tf->clock = clock;
	tf->ticks = ticks;
	tf->abs_realtime = abs_realtime;
	tf->k.fn = timerfd_fired;
	if (abs_realtime)
		timerfd_arm_realtime(tf, value, interval);
	else if (armed)
		ktimer_arm(&tf->k, ts_add(mono_now(), value), interval);
	f->priv = tf;
	return 0;
}

static const struct vfs_file_kind timerfd_kind = {
    .name = "timerfd",
    .ops = &timerfd_ops,
    .save = timerfd_save,
    .load = timerfd_load,
};

int timerfd_register_kind(void)
{
	return vfs_file_kind_register(&timerfd_kind);
}
