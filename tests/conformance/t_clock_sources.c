/*
 * t_clock_sources: the clocks read through every door a program has — the libc wrappers (which
 * a vDSO serves without a syscall), the raw syscalls, gettimeofday, time and getcpu — agree:
 * interleaved reads never step back, gettimeofday is realtime in microseconds, the resolutions
 * are the kernel's, getcpu names a CPU the process may run on, and monotonic time read through
 * libc goes on forward across a checkpoint. A vDSO (issue 14) must keep all of this.
 */
#include "check.h"
#include <sched.h>
#include <sys/time.h>
#include <time.h>

static long long ns(const struct timespec *ts)
{
	return ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

/* Reads CLOCK alternately through libc and the raw syscall: neither is ever behind the other. */
static void interleaved(clockid_t clock)
{
	struct timespec prev, cur;

	CHECK_EQ(clock_gettime(clock, &prev), 0);
	for (int i = 0; i < 2000; i++) {
		if (i % 2)
			CHECK_EQ(clock_gettime(clock, &cur), 0);
		else
			CHECK_EQ(syscall(SYS_clock_gettime, clock, &cur), 0);
		if (ns(&cur) < ns(&prev)) {
			CHECK(ns(&cur) >= ns(&prev));
			return;
		}
		prev = cur;
	}
}

int main(void)
{
	struct timespec rt, rt2, res, m1, m2;
	struct timeval tv;

	interleaved(CLOCK_MONOTONIC);
	interleaved(CLOCK_BOOTTIME);
	interleaved(CLOCK_REALTIME);

	/* gettimeofday is realtime cut to microseconds, between two realtime reads. */
	CHECK_EQ(clock_gettime(CLOCK_REALTIME, &rt), 0);
	CHECK_EQ(gettimeofday(&tv, NULL), 0);
	CHECK_EQ(clock_gettime(CLOCK_REALTIME, &rt2), 0);
	CHECK(tv.tv_usec >= 0 && tv.tv_usec < 1000000);
	long long tv_ns = tv.tv_sec * 1000000000LL + tv.tv_usec * 1000LL;
	CHECK(tv_ns >= ns(&rt) - 999 && tv_ns <= ns(&rt2));
	struct timeval tv2;
	CHECK_EQ(syscall(SYS_gettimeofday, &tv2, NULL), 0);
	CHECK(tv2.tv_sec > tv.tv_sec || (tv2.tv_sec == tv.tv_sec && tv2.tv_usec >= tv.tv_usec));

	/* time() is realtime's seconds, never ahead of a later read. */
	time_t t = time(NULL);
	CHECK_EQ(clock_gettime(CLOCK_REALTIME, &rt), 0);
	CHECK(t <= rt.tv_sec && t >= rt.tv_sec - 1);
	time_t t2 = 0;
	CHECK_EQ(time(&t2), t2);
	CHECK(t2 >= t);

	/* High-resolution clocks resolve a nanosecond; libc and the syscall say the same. */
	clockid_t hr[] = {CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME};
	for (unsigned i = 0; i < sizeof(hr) / sizeof(hr[0]); i++) {
		CHECK_EQ(clock_getres(hr[i], &res), 0);
		CHECK_EQ(res.tv_sec, 0);
		CHECK_EQ(res.tv_nsec, 1);
		CHECK_EQ(syscall(SYS_clock_getres, hr[i], &res), 0);
		CHECK_EQ(res.tv_nsec, 1);
	}
	/* The coarse clocks tick: coarser than a nanosecond, finer than a second. */
	CHECK_EQ(clock_getres(CLOCK_MONOTONIC_COARSE, &res), 0);
	CHECK(res.tv_sec == 0 && res.tv_nsec > 1);
	CHECK_ERR(clock_getres((clockid_t)1000, &res), EINVAL);

	/* getcpu: a CPU this process may run on, the same as sched_getcpu's; node 0 here. */
	cpu_set_t set;
	unsigned int cpu = ~0U, node = ~0U;
	CHECK_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	CHECK_EQ(syscall(SYS_getcpu, &cpu, &node, NULL), 0);
	CHECK(cpu < CPU_SETSIZE && CPU_ISSET(cpu, &set));
	int c = sched_getcpu();
	CHECK(c >= 0 && c < CPU_SETSIZE && CPU_ISSET(c, &set));
	CHECK_EQ(syscall(SYS_getcpu, NULL, NULL, NULL), 0);

	/* Across a checkpoint, monotonic time read through libc goes on forward. */
	CHECK_EQ(clock_gettime(CLOCK_MONOTONIC, &m1), 0);
	maybe_save();
	CHECK_EQ(clock_gettime(CLOCK_MONOTONIC, &m2), 0);
	CHECK(ns(&m2) >= ns(&m1));
	interleaved(CLOCK_MONOTONIC);
	check_done();
}
