/* The clock syscalls: the guest's clocks (sentry/clock.h), read with the arithmetic the vDSO
 * uses, so that a syscall and a vDSO read never disagree; and sleeps. A guest that reads its
 * clocks through syscalls (no vDSO, or one not calibrated yet) gives the clocks a chance to
 * re-draw their lines too. */
#include <errno.h>
#include <sys/time.h>
#include <time.h>

#include "common/units.h"
#include "sentry/kernel.h"
#include "sentry/mm.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/sched.h"
#include "sentry/signal.h"
#include "sentry/task.h"
#include "sentry/timer.h"

static bool valid_clock(clockid_t id)
{
	switch (id) {
	case CLOCK_REALTIME:
	case CLOCK_MONOTONIC:
	case CLOCK_PROCESS_CPUTIME_ID:
	case CLOCK_THREAD_CPUTIME_ID:
	case CLOCK_MONOTONIC_RAW:
	case CLOCK_REALTIME_COARSE:
	case CLOCK_MONOTONIC_COARSE:
	case CLOCK_BOOTTIME:
	case CLOCK_REALTIME_ALARM:
	case CLOCK_BOOTTIME_ALARM:
	case CLOCK_TAI:
		return true;
	default:
		return false;
	}
}

/* CPU-time clocks of the guest are its stub's (thread) CPU time on the host. */
static int guest_clock(struct task *t, clockid_t id, struct timespec *ts)
{
	id = timer_decode_clock(t, id);
	if (!valid_clock(id))
		return -EINVAL;
	if (id == CLOCK_PROCESS_CPUTIME_ID || id == CLOCK_THREAD_CPUTIME_ID) {
		*ts = process_cpu_time(t);
		return 0;
	}
	return clock_now(id, ts);
}

long sys_clock_gettime(struct task *t, const unsigned long *a)
{
	struct timespec ts;
	int err;

	clock_tick();
	err = guest_clock(t, arg_int(a, 0), &ts);

	if (err)
		return err;
	return copy_out(t->mm, a[1], &ts, sizeof(ts));
}

long sys_clock_getres(struct task *t, const unsigned long *a)
{
	struct timespec ts;

	clockid_t clk = timer_decode_clock(t, arg_int(a, 0));
	if (!valid_clock(clk))
		return -EINVAL;
	if (clock_getres(clk, &ts))
		return -errno;
	return a[1] ? copy_out(t->mm, a[1], &ts, sizeof(ts)) : 0;
}

long sys_gettimeofday(struct task *t, const unsigned long *a)
{
	struct timespec now;
	struct timezone tz = {0, 0};

	clock_tick();
	clock_now(CLOCK_REALTIME, &now);
	struct timeval tv = {now.tv_sec, now.tv_nsec / NSEC_PER_USEC};
	if (a[0] && copy_out(t->mm, a[0], &tv, sizeof(tv)))
		return -EFAULT;
	if (a[1] && copy_out(t->mm, a[1], &tz, sizeof(tz)))
		return -EFAULT;
	return 0;
}

/* Setting the time: the guest's CLOCK_REALTIME is the host's, which the sandbox's root does
 * not own, so a valid request is EPERM, as for root in a user namespace (CAP_SYS_TIME counts
 * only in the initial one). The arguments are checked first, in Linux's order. */
#define TIME_SETTOD_SEC_MAX (INT64_MAX / NSEC_PER_SEC - 30LL * 365 * 86400)

static bool valid_settod(const struct timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_sec < TIME_SETTOD_SEC_MAX && ts->tv_nsec >= 0 &&
	       ts->tv_nsec < NSEC_PER_SEC;
}

long sys_clock_settime(struct task *t, const unsigned long *a)
{
	clockid_t id = arg_int(a, 0), clk = timer_decode_clock(t, id);
	struct timespec ts;

	/* Only CLOCK_REALTIME and the CPU-time clocks named by pid have a clock_set. */
	if (clk != CLOCK_REALTIME && (id >= 0 || clk < 0))
		return -EINVAL;
	if (copy_in(t->mm, &ts, a[1], sizeof(ts)))
		return -EFAULT;
	if (clk == CLOCK_REALTIME && !valid_settod(&ts))
		return -EINVAL;
	return -EPERM; /* and a CPU-time clock can never be set */
}

long sys_settimeofday(struct task *t, const unsigned long *a)
{
	struct timeval tv;
	struct timezone tz;

	if (a[0]) {
		if (copy_in(t->mm, &tv, a[0], sizeof(tv)))
			return -EFAULT;
		if (tv.tv_usec < 0 || tv.tv_usec >= USEC_PER_SEC)
			return -EINVAL;
		struct timespec ts = {tv.tv_sec, tv.tv_usec * NSEC_PER_USEC};
		if (!valid_settod(&ts))
			return -EINVAL;
	}
	if (a[1] && copy_in(t->mm, &tz, a[1], sizeof(tz)))
		return -EFAULT;
	return -EPERM;
}

/* The coarse clock's seconds, as Linux's time() (and the vDSO's). */
long sys_time(struct task *t, const unsigned long *a)
{
	struct timespec ts;

	clock_tick();
	clock_now(CLOCK_REALTIME_COARSE, &ts);
	time_t now = ts.tv_sec;

	if (a[0] && copy_out(t->mm, a[0], &now, sizeof(now)))
		return -EFAULT;
	return now;
}

static bool valid_ts(const struct timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < NSEC_PER_SEC;
}

/* Sleeps until t->blk.deadline (monotonic). Interrupted, it reports the time left in REM
 * (when given) and ends with EINTR once a handler runs. */
static long sleep_until_deadline(struct task *t, uintptr_t rem)
{
	struct timespec now = mono_now();

	if (ts_cmp(now, t->blk.deadline) >= 0)
		return 0;
	if (t->blk.interrupted) {
		struct timespec left = ts_sub(t->blk.deadline, now);
		if (rem && copy_out(t->mm, rem, &left, sizeof(left)))
			return -EFAULT;
		return -ERESTARTNOHAND;
	}
	task_wait_until(t, &t->blk.deadline);
	return task_block(t);
}

long sys_nanosleep(struct task *t, const unsigned long *a)
{
	struct timespec req;

	if (!t->blk.retry) {
		if (copy_in(t->mm, &req, a[0], sizeof(req)))
			return -EFAULT;
		if (!valid_ts(&req))
			return -EINVAL;
		t->blk.deadline = ts_add(mono_now(), req);
	}
	return sleep_until_deadline(t, a[1]);
}

long sys_clock_nanosleep(struct task *t, const unsigned long *a)
{
	clockid_t clk = arg_int(a, 0);
	int flags = arg_int(a, 1);
	struct timespec req, now;

	if (!t->blk.retry) {
		switch (clk) {
		case CLOCK_REALTIME:
		case CLOCK_MONOTONIC:
		case CLOCK_BOOTTIME:
		case CLOCK_TAI:
			break;
		case CLOCK_THREAD_CPUTIME_ID:
			return -EINVAL;
		default:
			/* CPU-time clocks would need the guest's CPU accounting to drive a timer.
			 */
			return valid_clock(clk)
				   ? syscall_unsupported(t, -EOPNOTSUPP, "clock %d", clk)
				   : -EINVAL;
		}
		if (copy_in(t->mm, &req, a[2], sizeof(req)))
			return -EFAULT;
		if (!valid_ts(&req))
			return -EINVAL;
		if (flags & TIMER_ABSTIME) {
			/* Convert to the monotonic deadline the scheduler keeps. */
			clock_now(clk, &now);
			t->blk.deadline = ts_add(mono_now(), ts_sub(req, now));
		} else {
			t->blk.deadline = ts_add(mono_now(), req);
		}
	}
	return sleep_until_deadline(t, (flags & TIMER_ABSTIME) ? 0 : a[3]);
}
