/*
 * t_select: select and pselect6 on pipes. The result counts ready bits across the three sets,
 * which are rewritten to hold only the ready fds; a timeout returns 0 no earlier than asked
 * and the raw syscalls write back the time left (zero after expiry); pselect6 swaps in a
 * signal mask for the wait; a closed fd in a set is EBADF, a negative nfds or timeout EINVAL,
 * and so is a timeval whose microseconds carry its seconds past what time_t holds.
 * The raw syscalls are used where the time left matters: musl passes select a copy.
 */
#include "check.h"
#include <limits.h>
#include <signal.h>
#include <sys/select.h>
#include <sys/time.h>
#include <time.h>

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static long raw_select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
	return syscall(SYS_select, n, r, w, e, tv);
}

static long raw_pselect6(int n, fd_set *r, fd_set *w, fd_set *e, struct timespec *ts,
			 const sigset_t *mask)
{
	struct {
		const sigset_t *set;
		size_t size;
	} sig = {mask, 8};

	return syscall(SYS_pselect6, n, r, w, e, ts, mask ? &sig : NULL);
}

static void test_readiness(void)
{
	int a[2], b[2];
	fd_set r, w, e;
	struct timeval zero = {0, 0};

	CHECK_EQ(pipe(a), 0);
	CHECK_EQ(pipe(b), 0);
	int nfds = (a[1] > b[1] ? a[1] : b[1]) + 1;

	/* Nothing readable; both write ends writable. */
	FD_ZERO(&r);
	FD_ZERO(&w);
	FD_ZERO(&e);
	FD_SET(a[0], &r);
	FD_SET(b[0], &r);
	FD_SET(a[1], &w);
	FD_SET(b[1], &w);
	FD_SET(a[0], &e);
	CHECK_EQ(select(nfds, &r, &w, &e, &zero), 2);
	CHECK(!FD_ISSET(a[0], &r) && !FD_ISSET(b[0], &r));
	CHECK(FD_ISSET(a[1], &w) && FD_ISSET(b[1], &w));
	CHECK(!FD_ISSET(a[0], &e)); /* pipes never have exceptional conditions */

	/* Data on b: b's read end only. */
	CHECK_EQ(write(b[1], "x", 1), 1);
	FD_ZERO(&r);
	FD_SET(a[0], &r);
	FD_SET(b[0], &r);
	zero.tv_sec = 0;
	zero.tv_usec = 0;
	CHECK_EQ(select(nfds, &r, NULL, NULL, &zero), 1);
	CHECK(!FD_ISSET(a[0], &r));
	CHECK(FD_ISSET(b[0], &r));
	maybe_save(); /* a pipe with data in it */

	/* The same fd in two sets counts twice. */
	FD_ZERO(&r);
	FD_ZERO(&w);
	FD_SET(b[0], &r);
	FD_SET(b[0], &w);
	FD_SET(b[1], &w);
	CHECK_EQ(select(nfds, &r, &w, NULL, &zero), 2);
	CHECK(FD_ISSET(b[0], &r) && !FD_ISSET(b[0], &w) && FD_ISSET(b[1], &w));

	/* A closed writer makes the read end readable (EOF). */
	close(a[1]);
	FD_ZERO(&r);
	FD_SET(a[0], &r);
	CHECK_EQ(select(a[0] + 1, &r, NULL, NULL, &zero), 1);
	CHECK(FD_ISSET(a[0], &r));

	/* Errors. */
	FD_ZERO(&r);
	FD_SET(a[1], &r); /* closed above */
	CHECK_ERR(select(a[1] + 1, &r, NULL, NULL, &zero), EBADF);
	CHECK_ERR(raw_select(-1, NULL, NULL, NULL, &zero), EINVAL);
	struct timeval neg = {-1, 0};
	CHECK_ERR(raw_select(0, NULL, NULL, NULL, &neg), EINVAL);
	FD_ZERO(&r);
	FD_SET(a[0], &r);
	CHECK_ERR(raw_select(a[0] + 1, BAD_PTR, NULL, NULL, &zero), EFAULT);
	close(a[0]);
	close(b[0]);
	close(b[1]);
}

static void test_timeouts(void)
{
	int p[2];
	fd_set r;

	CHECK_EQ(pipe(p), 0);
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	struct timeval tv = {0, 50000};
	long long start = now_ms();
	CHECK_EQ(raw_select(p[0] + 1, &r, NULL, NULL, &tv), 0);
	CHECK(now_ms() - start >= 50);
	CHECK(now_ms() - start < 1500);
	CHECK(!FD_ISSET(p[0], &r)); /* cleared on timeout */
	CHECK_EQ(tv.tv_sec, 0);
	CHECK_EQ(tv.tv_usec, 0);

	/* Early return: the time left is written back. */
	CHECK_EQ(write(p[1], "x", 1), 1);
	FD_SET(p[0], &r);
	tv.tv_sec = 5;
	tv.tv_usec = 0;
	CHECK_EQ(raw_select(p[0] + 1, &r, NULL, NULL, &tv), 1);
	CHECK(tv.tv_sec * 1000000LL + tv.tv_usec > 4000000);
	CHECK(tv.tv_sec * 1000000LL + tv.tv_usec <= 5000000);

	/* No fds at all: a sleep. */
	struct timeval nap = {0, 30000};
	start = now_ms();
	CHECK_EQ(select(0, NULL, NULL, NULL, &nap), 0);
	CHECK(now_ms() - start >= 30);

	/* pselect6 with a timespec: same, in nanoseconds. */
	char c;
	CHECK_EQ(read(p[0], &c, 1), 1);
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	struct timespec ts = {0, 40 * 1000 * 1000};
	start = now_ms();
	CHECK_EQ(raw_pselect6(p[0] + 1, &r, NULL, NULL, &ts, NULL), 0);
	CHECK(now_ms() - start >= 40);
	CHECK_EQ(ts.tv_sec, 0);
	CHECK_EQ(ts.tv_nsec, 0);
	ts.tv_nsec = 1000000000;
	CHECK_ERR(raw_pselect6(p[0] + 1, &r, NULL, NULL, &ts, NULL), EINVAL);
	/* Microseconds carry into the seconds; past what time_t holds that is EINVAL. */
	struct timeval huge = {LONG_MAX - 10, LONG_MAX};
	CHECK_ERR(raw_select(p[0] + 1, &r, NULL, NULL, &huge), EINVAL);
	close(p[0]);
	close(p[1]);
}

static volatile int usr1_count;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_count++;
}

static void test_pselect_sigmask(void)
{
	int p[2];
	fd_set r;
	sigset_t block, old, during;
	struct sigaction sa;

	CHECK_EQ(pipe(p), 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &block, &old), 0);
	usr1_count = 0;
	CHECK_EQ(kill(getpid(), SIGUSR1), 0);

	FD_ZERO(&r);
	FD_SET(p[0], &r);
	struct timespec ts = {0, 20 * 1000 * 1000};
	CHECK_EQ(pselect(p[0] + 1, &r, NULL, NULL, &ts, &block), 0);
	CHECK_EQ(usr1_count, 0);

	sigemptyset(&during);
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	ts.tv_sec = 5;
	ts.tv_nsec = 0;
	long long start = now_ms();
	CHECK_ERR(raw_pselect6(p[0] + 1, &r, NULL, NULL, &ts, &during), EINTR);
	CHECK(now_ms() - start < 2500);
	CHECK_EQ(usr1_count, 1);
	sigset_t now;
	CHECK_EQ(sigprocmask(SIG_BLOCK, NULL, &now), 0);
	CHECK(sigismember(&now, SIGUSR1));
	CHECK_EQ(sigprocmask(SIG_SETMASK, &old, NULL), 0);
	signal(SIGUSR1, SIG_DFL);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	test_readiness();
	test_timeouts();
	test_pselect_sigmask();
	return check_done();
}
