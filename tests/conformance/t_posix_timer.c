/*
 * t_posix_timer: timer_create and friends with SIGEV_SIGNAL and SIGEV_NONE. An expiry sends
 * the chosen signal with si_code SI_TIMER and the sigevent's value, no earlier than asked
 * (relative or TIMER_ABSTIME); timer_gettime reports the time left; a periodic timer whose
 * signal stays blocked queues one signal and counts the rest as overruns; a CPU-time clock
 * timer fires after CPU use; deleted timers and bad clocks are EINVAL.
 */
#include "check.h"
#include <signal.h>
#include <time.h>

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static long long ts_ms(struct timespec ts)
{
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static timer_t make_timer(clockid_t clock, int notify, int sig, int value)
{
	struct sigevent sev;
	timer_t t = 0;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = notify;
	sev.sigev_signo = sig;
	sev.sigev_value.sival_int = value;
	CHECK_EQ(timer_create(clock, &sev, &t), 0);
	return t;
}

static void test_one_shot_and_periodic(sigset_t *rt)
{
	siginfo_t si;
	struct timespec t5 = {5, 0};
	int sig = SIGRTMIN + 1;
	timer_t t = make_timer(CLOCK_MONOTONIC, SIGEV_SIGNAL, sig, 77);
	struct itimerspec its = {{0, 0}, {0, 50 * 1000 * 1000}}, cur;

	/* Relative one-shot. */
	long long start = now_ms();
	CHECK_EQ(timer_settime(t, 0, &its, NULL), 0);
	CHECK_EQ(timer_gettime(t, &cur), 0);
	CHECK(ts_ms(cur.it_value) <= 50 && (cur.it_value.tv_sec || cur.it_value.tv_nsec));
	memset(&si, 0, sizeof(si));
	CHECK_EQ(sigtimedwait(rt, &si, &t5), sig);
	CHECK(now_ms() - start >= 50);
	CHECK_EQ(si.si_code, SI_TIMER);
	CHECK_EQ(si.si_value.sival_int, 77);
	CHECK_EQ(timer_gettime(t, &cur), 0);
	CHECK_EQ(cur.it_value.tv_sec + cur.it_value.tv_nsec, 0);

	/* Absolute (timed from before the deadline is read: a thread delayed between the two
	 * would see less than 40 ms). */
	start = now_ms();
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	its.it_value = now;
	its.it_value.tv_nsec += 40 * 1000 * 1000;
	if (its.it_value.tv_nsec >= 1000000000) {
		its.it_value.tv_sec++;
		its.it_value.tv_nsec -= 1000000000;
	}
	CHECK_EQ(timer_settime(t, TIMER_ABSTIME, &its, NULL), 0);
	maybe_save(); /* an armed POSIX timer */
	CHECK_EQ(sigtimedwait(rt, &si, &t5), sig);
	CHECK(now_ms() - start >= 40);

	/* Periodic 5 ms with the signal blocked for 100 ms: one signal, the rest overruns. */
	struct itimerspec per = {{0, 5 * 1000 * 1000}, {0, 5 * 1000 * 1000}};
	CHECK_EQ(timer_settime(t, 0, &per, NULL), 0);
	struct timespec d = {0, 100 * 1000 * 1000};
	nanosleep(&d, NULL);
	memset(&si, 0, sizeof(si));
	CHECK_EQ(sigtimedwait(rt, &si, &t5), sig);
	CHECK(si.si_overrun >= 5);
	struct timespec zero = {0, 0};
	/* Disarm; at most one more signal may have been queued meanwhile. */
	struct itimerspec off = {{0, 0}, {0, 0}};
	struct itimerspec old;
	CHECK_EQ(timer_settime(t, 0, &off, &old), 0);
	CHECK_EQ(ts_ms(old.it_interval), 5);
	(void)sigtimedwait(rt, &si, &zero);
	CHECK_ERR(sigtimedwait(rt, &si, &zero), EAGAIN);
	CHECK(timer_getoverrun(t) >= 0);

	CHECK_EQ(timer_delete(t), 0);
	CHECK_ERR(timer_settime(t, 0, &its, NULL), EINVAL);
	CHECK_ERR(timer_gettime(t, &cur), EINVAL);
}

static void test_sigev_none(sigset_t *rt)
{
	siginfo_t si;
	struct timespec zero = {0, 0};
	timer_t t = make_timer(CLOCK_MONOTONIC, SIGEV_NONE, 0, 0);
	struct itimerspec its = {{0, 0}, {0, 40 * 1000 * 1000}}, cur;

	CHECK_EQ(timer_settime(t, 0, &its, NULL), 0);
	struct timespec d = {0, 60 * 1000 * 1000};
	nanosleep(&d, NULL);
	CHECK_EQ(timer_gettime(t, &cur), 0);
	CHECK_EQ(cur.it_value.tv_sec + cur.it_value.tv_nsec, 0); /* expired quietly */
	CHECK_ERR(sigtimedwait(rt, &si, &zero), EAGAIN);
	CHECK_EQ(timer_delete(t), 0);
}

static void test_cpu_clock_timer(sigset_t *rt)
{
	siginfo_t si;
	struct timespec zero = {0, 0};
	int sig = SIGRTMIN + 1;
	timer_t t = make_timer(CLOCK_PROCESS_CPUTIME_ID, SIGEV_SIGNAL, sig, 5);
	struct itimerspec its = {{0, 0}, {0, 30 * 1000 * 1000}};

	CHECK_EQ(timer_settime(t, 0, &its, NULL), 0);
	long long start = now_ms();
	int got = -1;
	volatile unsigned long spin = 0;
	while (now_ms() - start < 3000) {
		for (int i = 0; i < 100000; i++)
			spin++;
		got = sigtimedwait(rt, &si, &zero);
		if (got == sig)
			break;
	}
	CHECK_EQ(got, sig);
	CHECK_EQ(si.si_value.sival_int, 5);
	CHECK(now_ms() - start >= 25);
	CHECK_EQ(timer_delete(t), 0);
}

int main(void)
{
	sigset_t rt;

	sigemptyset(&rt);
	sigaddset(&rt, SIGRTMIN + 1);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &rt, NULL), 0);
	test_one_shot_and_periodic(&rt);
	test_sigev_none(&rt);
	test_cpu_clock_timer(&rt);

	timer_t t;
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGRTMIN + 1;
	CHECK_ERR(timer_create(12345, &sev, &t), EINVAL);
	sev.sigev_signo = 99;
	CHECK_ERR(timer_create(CLOCK_MONOTONIC, &sev, &t), EINVAL);
	return check_done();
}
