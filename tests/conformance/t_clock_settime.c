/*
 * t_clock_settime: clock_settime and settimeofday check their arguments as Linux does
 * (EINVAL for a clock that cannot be set, before EFAULT for a bad pointer; EINVAL for a bad
 * time) and refuse with EPERM a caller without CAP_SYS_TIME over the clock: the sandbox's
 * root, whose clock is the host's (as root in a user namespace), and natively a process that
 * dropped CAP_SYS_TIME. A CPU-time clock named by pid can never be set (EPERM);
 * CLOCK_PROCESS_CPUTIME_ID and CLOCK_THREAD_CPUTIME_ID have no clock_set (EINVAL). No call
 * here may change the host's time: natively the valid requests are made only without the
 * capability.
 * conformance: no-save the calls change nothing that a checkpoint could carry
 * conformance: no-musl (musl-gcc has no <linux/capability.h>)
 */
#include "check.h"
#include <linux/capability.h>
#include <sys/time.h>
#include <time.h>

static int drop_cap_sys_time(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[CAP_SYS_TIME / 32].effective &= ~(1u << (CAP_SYS_TIME % 32));
	return (int)syscall(SYS_capset, &h, d);
}

int main(void)
{
	struct timespec now, bad;
	struct timeval tv;

	CHECK_EQ(clock_gettime(CLOCK_REALTIME, &now), 0);

	/* Clocks without a clock_set: EINVAL, even before the pointer is read. */
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_MONOTONIC, &now), EINVAL);
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_MONOTONIC, BAD_PTR), EINVAL);
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_BOOTTIME, &now), EINVAL);
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_MONOTONIC_RAW, &now), EINVAL);
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_REALTIME_COARSE, &now), EINVAL);
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_TAI, &now), EINVAL);
	CHECK_ERR(syscall(SYS_clock_settime, 12345, &now), EINVAL);

	/* CLOCK_REALTIME: a bad pointer, then a bad time. */
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_REALTIME, BAD_PTR), EFAULT);
	bad = now;
	bad.tv_nsec = 1000000000;
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_REALTIME, &bad), EINVAL);
	bad.tv_nsec = -1;
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_REALTIME, &bad), EINVAL);
	bad.tv_sec = -1;
	bad.tv_nsec = 0;
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_REALTIME, &bad), EINVAL);

	/* CPU-time clocks are never set: by pid (the calling process's -6, thread's -2) EPERM,
	 * after the pointer is read; the two fixed ids have no clock_set. */
	CHECK_ERR(syscall(SYS_clock_settime, -6, &now), EPERM);
	CHECK_ERR(syscall(SYS_clock_settime, -2, &now), EPERM);
	CHECK_ERR(syscall(SYS_clock_settime, -6, BAD_PTR), EFAULT);
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_PROCESS_CPUTIME_ID, &now), EINVAL);
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_THREAD_CPUTIME_ID, &now), EINVAL);

	/* settimeofday: the microseconds are checked, then the pointers. */
	tv.tv_sec = now.tv_sec;
	tv.tv_usec = 1000000;
	CHECK_ERR(syscall(SYS_settimeofday, &tv, NULL), EINVAL);
	tv.tv_usec = -1;
	CHECK_ERR(syscall(SYS_settimeofday, &tv, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_settimeofday, BAD_PTR, NULL), EFAULT);
	tv.tv_usec = 1000000;
	CHECK_ERR(syscall(SYS_settimeofday, &tv, BAD_PTR), EINVAL);

	/* The sandbox's root: every capability in its sets, and still not the host's clock. */
	if (in_sandbox()) {
		CHECK_ERR(syscall(SYS_clock_settime, CLOCK_REALTIME, &now), EPERM);
		tv.tv_usec = 0;
		CHECK_ERR(syscall(SYS_settimeofday, &tv, NULL), EPERM);
		CHECK_ERR(syscall(SYS_settimeofday, NULL, NULL), EPERM);
	}

	/* Without CAP_SYS_TIME: EPERM everywhere. */
	CHECK_EQ(drop_cap_sys_time(), 0);
	CHECK_EQ(clock_gettime(CLOCK_REALTIME, &now), 0);
	CHECK_ERR(syscall(SYS_clock_settime, CLOCK_REALTIME, &now), EPERM);
	tv.tv_sec = now.tv_sec;
	tv.tv_usec = 0;
	CHECK_ERR(syscall(SYS_settimeofday, &tv, NULL), EPERM);
	CHECK_ERR(syscall(SYS_settimeofday, NULL, NULL), EPERM);
	struct timezone tz = {0, 0};
	CHECK_ERR(syscall(SYS_settimeofday, NULL, &tz), EPERM);
	CHECK_ERR(syscall(SYS_settimeofday, NULL, BAD_PTR), EFAULT);
	/* Still readable. */
	CHECK_EQ(clock_gettime(CLOCK_REALTIME, &now), 0);
	CHECK(now.tv_sec > 1600000000);

	return check_done();
}
