/*
 * t_nanosleep: sleeping. nanosleep and clock_nanosleep (relative, TIMER_ABSTIME, on
 * CLOCK_MONOTONIC and CLOCK_REALTIME) sleep at least the time asked and not much more (the
 * upper bound is loose, SLACK_MS, to stay deterministic on a loaded host); an absolute time
 * in the past returns at once; bad timespecs and clocks are EINVAL; a handled signal ends the
 * sleep with EINTR and the time left (not for TIMER_ABSTIME, which has none to report), a
 * sleep of 2^63-1 seconds too. A
 * child asleep, relative and absolute, across a checkpoint wakes neither early nor never.
 */
#include "check.h"
#include <limits.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

#define SLACK_MS 200

static long long now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long ts_ns(struct timespec ts)
{
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static struct timespec ns_ts(long long ns)
{
	struct timespec ts = {ns / 1000000000, ns % 1000000000};

	return ts;
}

#define MS 1000000LL

/* Checks that the elapsed time since start (monotonic) is in [want, want + SLACK_MS]. */
#define CHECK_SLEPT(start, want_ns)                                                                \
	do {                                                                                       \
		long long el_ = now_ns(CLOCK_MONOTONIC) - (start);                                 \
		CHECK(el_ >= (want_ns));                                                           \
		CHECK(el_ <= (want_ns) + SLACK_MS * MS);                                           \
	} while (0)

static void test_durations(void)
{
	struct timespec req = ns_ts(50 * MS), rem = {99, 99};
	long long start;

	start = now_ns(CLOCK_MONOTONIC);
	CHECK_EQ(nanosleep(&req, &rem), 0);
	CHECK_SLEPT(start, 50 * MS);

	/* Both libcs implement nanosleep with clock_nanosleep: the nanosleep syscall itself. */
	start = now_ns(CLOCK_MONOTONIC);
	CHECK_EQ(syscall(SYS_nanosleep, &req, NULL), 0);
	CHECK_SLEPT(start, 50 * MS);

	start = now_ns(CLOCK_MONOTONIC);
	CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL), 0);
	CHECK_SLEPT(start, 50 * MS);

	start = now_ns(CLOCK_MONOTONIC);
	CHECK_EQ(clock_nanosleep(CLOCK_REALTIME, 0, &req, NULL), 0);
	CHECK_SLEPT(start, 50 * MS);

	/* Absolute, monotonic: we wake at or after the deadline. */
	start = now_ns(CLOCK_MONOTONIC);
	struct timespec deadline = ns_ts(start + 50 * MS);
	CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL), 0);
	CHECK(now_ns(CLOCK_MONOTONIC) >= ts_ns(deadline));
	CHECK_SLEPT(start, 50 * MS);

	/* Absolute, realtime. */
	long long rstart = now_ns(CLOCK_REALTIME);
	start = now_ns(CLOCK_MONOTONIC);
	deadline = ns_ts(rstart + 40 * MS);
	CHECK_EQ(clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &deadline, NULL), 0);
	CHECK(now_ns(CLOCK_REALTIME) >= ts_ns(deadline));
	CHECK_SLEPT(start, 40 * MS - 5 * MS); /* (the realtime clock may be slewed a little) */

	/* In the past: at once. */
	start = now_ns(CLOCK_MONOTONIC);
	deadline = ns_ts(1);
	CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL), 0);
	CHECK_SLEPT(start, 0);

	/* Zero: returns. */
	struct timespec zero = {0, 0};
	CHECK_EQ(nanosleep(&zero, NULL), 0);
	CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &zero, NULL), 0);
	/* CLOCK_BOOTTIME sleeps too. */
	start = now_ns(CLOCK_MONOTONIC);
	req = ns_ts(20 * MS);
	CHECK_EQ(clock_nanosleep(CLOCK_BOOTTIME, 0, &req, NULL), 0);
	CHECK_SLEPT(start, 20 * MS);
}

/*
 * Children sleep 300 ms (relatively, and to an absolute monotonic deadline) while we
 * checkpoint; each exits 0 if it woke on time: not early, and within a few seconds however
 * long the checkpoint took.
 */
static void test_sleep_across_save(void)
{
	pid_t kids[2];

	for (int i = 0; i < 2; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			long long start = now_ns(CLOCK_MONOTONIC);
			struct timespec rel = ns_ts(300 * MS), abs = ns_ts(start + 300 * MS);
			int r = i == 0
				    ? clock_nanosleep(CLOCK_MONOTONIC, 0, &rel, NULL)
				    : clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL);
			long long slept = now_ns(CLOCK_MONOTONIC) - start;
			_exit(r != 0 ? 1 : slept < 300 * MS ? 2 : slept > 5000 * MS ? 3 : 0);
		}
		CHECK(kids[i] > 0);
	}
	struct timespec settle = ns_ts(50 * MS);
	nanosleep(&settle, NULL);
	maybe_save(); /* both children asleep */
	for (int i = 0; i < 2; i++) {
		int status;
		CHECK_EQ(waitpid(kids[i], &status, 0), kids[i]);
		CHECK(WIFEXITED(status));
		CHECK_EQ(WEXITSTATUS(status), 0);
	}
}

static void test_errors(void)
{
	struct timespec bad = {0, 1000000000};
	struct timespec neg_ns = {0, -1};
	struct timespec neg_s = {-1, 0};
	struct timespec ok = {0, 1000};

	CHECK_ERR(nanosleep(&bad, NULL), EINVAL);
	CHECK_ERR(nanosleep(&neg_ns, NULL), EINVAL);
	CHECK_ERR(nanosleep(&neg_s, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_nanosleep, BAD_PTR, NULL), EFAULT);
	/* clock_nanosleep returns the error instead of setting errno. */
	CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &bad, NULL), EINVAL);
	CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &neg_ns, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_clock_nanosleep, 12345, 0, &ok, NULL), EINVAL);
}

static volatile int alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

/* A 50 ms one-shot SIGALRM. */
static void arm_alarm(void)
{
	struct itimerval it = {{0, 0}, {0, 50000}};

	alarms = 0;
	CHECK_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
}

static void test_interrupted(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART; /* sleeps are not restarted even so */
	CHECK_EQ(sigaction(SIGALRM, &sa, NULL), 0);

	struct timespec req = {1, 0}, rem = {0, 0};
	long long start = now_ns(CLOCK_MONOTONIC);
	arm_alarm();
	CHECK_ERR(syscall(SYS_nanosleep, &req, &rem), EINTR);
	long long slept = now_ns(CLOCK_MONOTONIC) - start;
	CHECK_EQ(alarms, 1);
	CHECK(slept >= 50 * MS);
	/* rem is what was left: about 1 s - slept (more by the time from the first clock read to
	 * the sleep and from the signal to the second read, each a few round trips to the Sentry
	 * that a loaded host may delay by tens of ms: SLACK_MS / 4). */
	CHECK(ts_ns(rem) > 0 && ts_ns(rem) < 1000 * MS);
	CHECK(ts_ns(rem) <= 1000 * MS - slept + SLACK_MS / 4 * MS);
	CHECK(ts_ns(rem) >= 1000 * MS - slept - SLACK_MS * MS);

	/* clock_nanosleep relative: EINTR (returned) with the time left. */
	rem.tv_sec = rem.tv_nsec = 0;
	arm_alarm();
	CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &req, &rem), EINTR);
	CHECK(ts_ns(rem) > 0 && ts_ns(rem) < 1000 * MS);

	/* TIMER_ABSTIME: EINTR, and rem is left alone. */
	struct timespec deadline = ns_ts(now_ns(CLOCK_MONOTONIC) + 1000 * MS);
	rem.tv_sec = 77;
	rem.tv_nsec = 77;
	arm_alarm();
	CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, &rem), EINTR);
	CHECK_EQ(rem.tv_sec, 77);
	CHECK_EQ(rem.tv_nsec, 77);

	/* Longer than any clock counts: still a sleep (Linux keeps the deadline at the largest
	 * time there is), which the signal ends, never one that returns 0 at once. */
	struct timespec forever = {LONG_MAX, 999999999};
	start = now_ns(CLOCK_MONOTONIC);
	arm_alarm();
	CHECK_ERR(syscall(SYS_nanosleep, &forever, &rem), EINTR);
	CHECK(now_ns(CLOCK_MONOTONIC) - start >= 50 * MS);
	arm_alarm();
	CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &forever, NULL), EINTR);
	signal(SIGALRM, SIG_DFL);
}

int main(void)
{
	test_durations();
	test_sleep_across_save();
	test_errors();
	test_interrupted();
	return check_done();
}
