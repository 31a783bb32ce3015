/* Clocks. Guest clocks are the host's; monotonic and boottime carry an offset (zero until a
 * restore sets it) so that they never go backwards across a checkpoint. */
#include <errno.h>
#include <sys/time.h>
#include <time.h>

#include "sentry/mm.h"
#include "sentry/syscalls.h"
#include "sentry/task.h"

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
	if (!valid_clock(id))
		return -EINVAL;
	if (id == CLOCK_PROCESS_CPUTIME_ID || id == CLOCK_THREAD_CPUTIME_ID) {
		clockid_t cid;
		if (clock_getcpuclockid(t->pt->host_pid, &cid) == 0 && clock_gettime(cid, ts) == 0)
			return 0;
	}
	return clock_gettime(id, ts) ? -errno : 0;
}

SYSCALL_DECL(clock_gettime)
{
	struct timespec ts;
	int err = guest_clock(t, (clockid_t)a[0], &ts);

	if (err)
		return err;
	return copy_out(t->mm, a[1], &ts, sizeof(ts));
}

SYSCALL_DECL(clock_getres)
{
	struct timespec ts;

	if (!valid_clock((clockid_t)a[0]))
		return -EINVAL;
	if (clock_getres((clockid_t)a[0], &ts))
		return -errno;
	return a[1] ? copy_out(t->mm, a[1], &ts, sizeof(ts)) : 0;
}

SYSCALL_DECL(gettimeofday)
{
	struct timeval tv;
	struct timezone tz = {0, 0};

	gettimeofday(&tv, NULL);
	if (a[0] && copy_out(t->mm, a[0], &tv, sizeof(tv)))
		return -EFAULT;
	if (a[1] && copy_out(t->mm, a[1], &tz, sizeof(tz)))
		return -EFAULT;
	return 0;
}

SYSCALL_DECL(time)
{
	time_t now = time(NULL);

	if (a[0] && copy_out(t->mm, a[0], &now, sizeof(now)))
		return -EFAULT;
	return now;
}
