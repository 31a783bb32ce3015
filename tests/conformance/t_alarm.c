/*
 * t_alarm: alarm and the interval timers. The alarm syscall returns the previous alarm's remaining
 * seconds (rounded) and shares ITIMER_REAL with setitimer/getitimer; a one-shot ITIMER_REAL
 * delivers SIGALRM (si_code SI_KERNEL) no earlier than asked, a periodic one keeps ticking;
 * ITIMER_VIRTUAL and ITIMER_PROF count CPU time; a forked child starts with no timers; bad
 * arguments are EINVAL.
 */
#include "check.h"
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

static volatile int fired[3]; /* SIGALRM, SIGVTALRM, SIGPROF */
static volatile int alrm_code;

static void on_timer(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (sig == SIGALRM) {
		fired[0]++;
		alrm_code = si->si_code;
	} else if (sig == SIGVTALRM) {
		fired[1]++;
	} else if (sig == SIGPROF) {
		fired[2]++;
	}
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* The raw syscall: musl's alarm() is setitimer and rounds up instead of to nearest. */
static long sys_alarm(unsigned seconds)
{
	return syscall(SYS_alarm, seconds);
}

static long long tv_us(struct timeval tv)
{
	return tv.tv_sec * 1000000LL + tv.tv_usec;
}

/* Waits (sigsuspend with SIGALRM blocked otherwise) until fired[0] reaches n. */
static void await_alarms(int n)
{
	sigset_t block, old, wait_mask;

	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	sigprocmask(SIG_BLOCK, &block, &old);
	wait_mask = old;
	sigdelset(&wait_mask, SIGALRM);
	while (fired[0] < n)
		sigsuspend(&wait_mask);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static void test_alarm_bookkeeping(void)
{
	struct itimerval it;

	CHECK_EQ(sys_alarm(0), 0);
	CHECK_EQ(sys_alarm(5), 0);
	CHECK_EQ(sys_alarm(3), 5);
	CHECK_EQ(getitimer(ITIMER_REAL, &it), 0);
	CHECK(tv_us(it.it_value) > 2000000 && tv_us(it.it_value) <= 3000000);
	CHECK_EQ(tv_us(it.it_interval), 0);

	/* A forked child has no alarm; ours is untouched. */
	pid_t pid = fork();
	if (pid == 0) {
		struct itimerval c;
		int ok = getitimer(ITIMER_REAL, &c) == 0 && c.it_value.tv_sec == 0 &&
			 c.it_value.tv_usec == 0 && sys_alarm(0) == 0;
		_exit(ok ? 0 : 1);
	}
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);

	CHECK_EQ(sys_alarm(0), 3);
	CHECK_EQ(getitimer(ITIMER_REAL, &it), 0);
	CHECK_EQ(tv_us(it.it_value), 0);

	/* setitimer's old value, and alarm seeing a setitimer's time. */
	struct itimerval set = {{0, 0}, {7, 250000}}, old;
	CHECK_EQ(setitimer(ITIMER_REAL, &set, &old), 0);
	CHECK_EQ(tv_us(old.it_value), 0);
	CHECK_EQ(sys_alarm(0), 7);
	set.it_value.tv_sec = 7;
	set.it_value.tv_usec = 600000;
	CHECK_EQ(setitimer(ITIMER_REAL, &set, NULL), 0);
	CHECK_EQ(sys_alarm(0), 8); /* rounded to nearest */
	set.it_value.tv_sec = 0;
	set.it_value.tv_usec = 1000;
	set.it_interval = set.it_value;
	CHECK_EQ(setitimer(ITIMER_REAL, &set, NULL), 0);
	struct itimerval off = {{0, 0}, {0, 0}};
	CHECK_EQ(setitimer(ITIMER_REAL, &off, &old), 0);
	CHECK(tv_us(old.it_value) <= 1000);
	CHECK_EQ(tv_us(old.it_interval), 1000);

	/* Errors. */
	CHECK_ERR(getitimer(99, &it), EINVAL);
	CHECK_ERR(setitimer(99, &set, NULL), EINVAL);
	set.it_value.tv_usec = 1000000;
	CHECK_ERR(setitimer(ITIMER_REAL, &set, NULL), EINVAL);
	set.it_value.tv_usec = -1;
	CHECK_ERR(setitimer(ITIMER_REAL, &set, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_getitimer, ITIMER_REAL, BAD_PTR), EFAULT);
}

static void test_real_timer_fires(void)
{
	struct itimerval it = {{0, 0}, {0, 50000}}, left;

	fired[0] = 0;
	long long start = now_ms();
	CHECK_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
	CHECK_EQ(getitimer(ITIMER_REAL, &left), 0);
	CHECK(tv_us(left.it_value) > 0 && tv_us(left.it_value) <= 50000);
	await_alarms(1);
	CHECK(now_ms() - start >= 50);
	CHECK(now_ms() - start < 1500);
	CHECK_EQ(alrm_code, SI_KERNEL);
	CHECK_EQ(getitimer(ITIMER_REAL, &left), 0);
	CHECK_EQ(tv_us(left.it_value), 0); /* one-shot: disarmed */

	/* Armed across a save point. */
	it.it_value.tv_usec = 200000;
	fired[0] = 0;
	start = now_ms();
	CHECK_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
	maybe_save(); /* an armed interval timer */
	await_alarms(1);
	CHECK(now_ms() - start >= 200);

	/* Periodic: five ticks of 20 ms take at least 100 ms. */
	struct itimerval per = {{0, 20000}, {0, 20000}};
	fired[0] = 0;
	start = now_ms();
	CHECK_EQ(setitimer(ITIMER_REAL, &per, NULL), 0);
	await_alarms(5);
	CHECK(now_ms() - start >= 100);
	CHECK_EQ(getitimer(ITIMER_REAL, &left), 0);
	CHECK_EQ(tv_us(left.it_interval), 20000);
	CHECK(tv_us(left.it_value) > 0 && tv_us(left.it_value) <= 20000);
	struct itimerval off = {{0, 0}, {0, 0}};
	CHECK_EQ(setitimer(ITIMER_REAL, &off, NULL), 0);
}

/* CPU-time timers: spin until the signal comes (at most three seconds of wall time). */
static void test_cpu_timers(void)
{
	struct itimerval it = {{0, 0}, {0, 30000}};
	static const int which[2] = {ITIMER_VIRTUAL, ITIMER_PROF};

	for (int i = 0; i < 2; i++) {
		fired[1 + i] = 0;
		CHECK_EQ(setitimer(which[i], &it, NULL), 0);
		long long start = now_ms();
		volatile unsigned long spin = 0;
		while (fired[1 + i] == 0 && now_ms() - start < 3000)
			spin++;
		CHECK_EQ(fired[1 + i], 1);
		CHECK(now_ms() - start >= 30 - 5); /* CPU time cannot outrun wall time much */
	}
}

int main(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_timer;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	CHECK_EQ(sigaction(SIGALRM, &sa, NULL), 0);
	CHECK_EQ(sigaction(SIGVTALRM, &sa, NULL), 0);
	CHECK_EQ(sigaction(SIGPROF, &sa, NULL), 0);
	test_alarm_bookkeeping();
	test_real_timer_fires();
	test_cpu_timers();
	return check_done();
}
