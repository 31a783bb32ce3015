/*
 * t_clock_gettime: the four clocks a program reads (realtime, monotonic, boottime, process CPU
 * time) through the raw syscall and the libc wrapper: normalised values, monotonic clocks that
 * never step back, realtime agreeing with time(), EINVAL for a bad clock id, EFAULT for a bad
 * pointer.
 */
#include "check.h"
#include <time.h>

static long long ns(const struct timespec *ts)
{
	return ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

static int normalised(const struct timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000L;
}

static void check_clock(clockid_t id, int must_be_nonzero)
{
	struct timespec a, b;

	CHECK_EQ(syscall(SYS_clock_gettime, id, &a), 0);
	CHECK(normalised(&a));
	if (must_be_nonzero)
		CHECK(ns(&a) > 0);
	for (int i = 0; i < 1000; i++) {
		CHECK_EQ(syscall(SYS_clock_gettime, id, &b), 0);
		if (ns(&b) < ns(&a)) {
			CHECK(ns(&b) >= ns(&a));
			break;
		}
		a = b;
	}
	CHECK_EQ(clock_gettime(id, &b), 0);
	CHECK(normalised(&b));
	CHECK(ns(&b) >= ns(&a));
}

int main(void)
{
	struct timespec rt, mono, boot, cpu1, cpu2;

	check_clock(CLOCK_REALTIME, 1);
	check_clock(CLOCK_MONOTONIC, 1);
	check_clock(CLOCK_BOOTTIME, 1);
	check_clock(CLOCK_PROCESS_CPUTIME_ID, 0);

	/* Realtime is the epoch clock time() reads; any host has a clock set after 2020. */
	time_t before = time(NULL);
	CHECK_EQ(syscall(SYS_clock_gettime, CLOCK_REALTIME, &rt), 0);
	time_t after = time(NULL);
	CHECK(rt.tv_sec >= before && rt.tv_sec <= after);
	CHECK(rt.tv_sec > 1577836800);

	/* Boot time counts suspend on top of monotonic time, so it is never behind. */
	CHECK_EQ(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &mono), 0);
	CHECK_EQ(syscall(SYS_clock_gettime, CLOCK_BOOTTIME, &boot), 0);
	CHECK(ns(&boot) >= ns(&mono));

	/* Burning CPU advances the process CPU clock, not by more than the wall clock did. */
	struct timespec w1, w2;
	CHECK_EQ(syscall(SYS_clock_gettime, CLOCK_PROCESS_CPUTIME_ID, &cpu1), 0);
	CHECK_EQ(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &w1), 0);
	volatile unsigned long spin = 0;
	do {
		for (int i = 0; i < 100000; i++)
			spin += i;
		CHECK_EQ(syscall(SYS_clock_gettime, CLOCK_PROCESS_CPUTIME_ID, &cpu2), 0);
		CHECK_EQ(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &w2), 0);
	} while (ns(&cpu2) - ns(&cpu1) < 20000000LL && ns(&w2) - ns(&w1) < 5000000000LL);
	CHECK(ns(&cpu2) - ns(&cpu1) >= 20000000LL);

	maybe_save();
	/* Monotonic time keeps going forward across a checkpoint. */
	struct timespec m2;
	CHECK_EQ(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &m2), 0);
	CHECK(ns(&m2) >= ns(&w2));

	CHECK_ERR(syscall(SYS_clock_gettime, 1000, &rt), EINVAL);
	CHECK_ERR(syscall(SYS_clock_gettime, -1000, &rt), EINVAL);
	CHECK_ERR(syscall(SYS_clock_gettime, CLOCK_REALTIME, BAD_PTR), EFAULT);
	CHECK_ERR(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, BAD_PTR), EFAULT);
	return check_done();
}
