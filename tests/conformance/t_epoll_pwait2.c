/*
 * t_epoll_pwait2: epoll_pwait with a timespec timeout. NULL waits until an event; a zero
 * timeout polls; a short one times out after at least that long; a bad timespec is EINVAL and
 * a bad pointer EFAULT, both before the descriptor is looked at; the signal mask is swapped
 * in for the wait (a signal it unblocks ends the wait with EINTR).
 * conformance: no-save the waits are short; t_epoll saves epoll sets
 */
#include "check.h"
#include <signal.h>
#include <sys/epoll.h>
#include <time.h>

#ifndef SYS_epoll_pwait2
#define SYS_epoll_pwait2 441
#endif

static long pwait2(int ep, struct epoll_event *ev, int n, const struct timespec *ts,
		   const sigset_t *mask)
{
	return syscall(SYS_epoll_pwait2, ep, ev, n, ts, mask, mask ? 8 : 0);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void on_usr1(int sig)
{
	(void)sig;
}

int main(void)
{
	int ep = epoll_create1(0), p[2];
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 7}, out[2];
	struct timespec zero = {0, 0}, short_ts = {0, 50 * 1000 * 1000}, bad = {0, 1000000000};

	CHECK(ep >= 0);
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev), 0);

	CHECK_EQ(pwait2(ep, out, 2, &zero, NULL), 0);
	double t0 = now();
	CHECK_EQ(pwait2(ep, out, 2, &short_ts, NULL), 0);
	CHECK(now() - t0 >= 0.045);

	CHECK_ERR(pwait2(ep, out, 2, &bad, NULL), EINVAL);
	bad.tv_nsec = -1;
	CHECK_ERR(pwait2(ep, out, 2, &bad, NULL), EINVAL);
	bad.tv_sec = -1;
	bad.tv_nsec = 0;
	CHECK_ERR(pwait2(ep, out, 2, &bad, NULL), EINVAL);
	CHECK_ERR(pwait2(ep, out, 2, BAD_PTR, NULL), EFAULT);
	CHECK_ERR(pwait2(-1, out, 2, BAD_PTR, NULL), EFAULT); /* the timeout comes first */
	CHECK_ERR(pwait2(-1, out, 2, &zero, NULL), EBADF);
	CHECK_ERR(pwait2(p[0], out, 2, &zero, NULL), EINVAL);
	CHECK_ERR(pwait2(ep, out, 0, &zero, NULL), EINVAL);
	CHECK_EQ(syscall(SYS_epoll_pwait2, ep, out, 2, &zero, NULL, 3), 0); /* no mask: any size */

	/* Ready: NULL returns at once with the event. */
	CHECK_EQ(write(p[1], "x", 1), 1);
	CHECK_EQ(pwait2(ep, out, 2, NULL, NULL), 1);
	CHECK_EQ(out[0].events, EPOLLIN);
	CHECK_EQ(out[0].data.u64, 7);
	char c;
	CHECK_EQ(read(p[0], &c, 1), 1);

	/* SIGUSR1 blocked, unblocked only for the wait: the pending one ends it with EINTR. */
	sigset_t block, during;
	signal(SIGUSR1, on_usr1);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, NULL);
	raise(SIGUSR1);
	sigemptyset(&during);
	struct timespec long_ts = {5, 0};
	t0 = now();
	CHECK_ERR(pwait2(ep, out, 2, &long_ts, &during), EINTR);
	CHECK(now() - t0 < 4);
	sigset_t after;
	sigprocmask(SIG_BLOCK, NULL, &after);
	CHECK(sigismember(&after, SIGUSR1)); /* the mask is back */
	CHECK_ERR(syscall(SYS_epoll_pwait2, ep, out, 2, &zero, &during, 4), EINVAL);

	return check_done();
}
