/*
 * t_gettimeofday: gettimeofday(2) and time(2) agree with CLOCK_REALTIME, time() stores what it
 * returns, NULL arguments are accepted, bad pointers give EFAULT, and neither goes back
 * across a checkpoint and restore.
 */
#include "check.h"
#include <sys/time.h>
#include <time.h>

int main(void)
{
	struct timeval tv;
	struct timespec ts;

	CHECK_EQ(syscall(SYS_gettimeofday, &tv, NULL), 0);
	CHECK(tv.tv_usec >= 0 && tv.tv_usec < 1000000);
	CHECK_EQ(syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts), 0);
	long long tv_us = tv.tv_sec * 1000000LL + tv.tv_usec;
	long long ts_us = ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
	CHECK(ts_us >= tv_us);
	CHECK(ts_us - tv_us < 2000000);

	CHECK_EQ(gettimeofday(&tv, NULL), 0);
	CHECK(tv.tv_usec >= 0 && tv.tv_usec < 1000000);
	CHECK_EQ(syscall(SYS_gettimeofday, NULL, NULL), 0);

	time_t t1 = (time_t)-1;
	long r = syscall(SYS_time, &t1);
	CHECK_EQ(r, t1);
	/* time(2) reads Linux's coarse clock, which lags gettimeofday by up to a tick: just
	 * after a second begins it may still name the one before (seen natively in CI). */
	CHECK(t1 >= tv.tv_sec - 1 && t1 - tv.tv_sec < 2);
	CHECK(syscall(SYS_time, NULL) >= t1);
	maybe_save(); /* the realtime clock carries on from where it was */
	struct timeval after;
	CHECK_EQ(gettimeofday(&after, NULL), 0);
	CHECK(after.tv_sec * 1000000LL + after.tv_usec >= ts_us);
	time_t t2;
	CHECK_EQ(time(&t2), t2);
	CHECK(t2 >= t1);

	CHECK_ERR(syscall(SYS_gettimeofday, BAD_PTR, NULL), EFAULT);
	CHECK_ERR(syscall(SYS_time, BAD_PTR), EFAULT);
	return check_done();
}
