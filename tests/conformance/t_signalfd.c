/*
 * t_signalfd: reading blocked signals as data. A pending signal in the fd's mask makes the fd
 * readable (poll, epoll) and a read returns a 128-byte signalfd_siginfo (ssi_signo, ssi_code,
 * ssi_pid, ssi_uid, ssi_int for sigqueue, ssi_status for SIGCHLD) and consumes it; queued
 * real-time signals come several per read; signals outside the mask are left alone; the mask
 * can be replaced; an empty fd is EAGAIN (non-blocking) or blocks until a signal arrives from
 * another process; short buffers and bad flags are EINVAL.
 */
#include "check.h"
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>

static sigset_t set_of(int a, int b)
{
	sigset_t s;

	sigemptyset(&s);
	if (a)
		sigaddset(&s, a);
	if (b)
		sigaddset(&s, b);
	return s;
}

static int readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static int is_pending(int sig)
{
	sigset_t p;

	sigpending(&p);
	return sigismember(&p, sig);
}

static void test_basic(void)
{
	sigset_t mask = set_of(SIGUSR1, SIGRTMIN), other = set_of(SIGUSR2, 0);
	struct signalfd_siginfo si[4];

	CHECK_EQ(sizeof(struct signalfd_siginfo), 128);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &mask, NULL), 0);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &other, NULL), 0);
	int fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CHECK_ERR(read(fd, si, sizeof(si)), EAGAIN);
	CHECK(!readable(fd));

	/* kill: SI_USER from us. */
	CHECK_EQ(kill(getpid(), SIGUSR1), 0);
	CHECK(readable(fd));
	maybe_save(); /* a pending blocked signal behind a signalfd */
	memset(si, 0, sizeof(si));
	CHECK_EQ(read(fd, si, sizeof(si)), 128);
	CHECK_EQ(si[0].ssi_signo, SIGUSR1);
	CHECK_EQ(si[0].ssi_code, SI_USER);
	CHECK_EQ(si[0].ssi_pid, getpid());
	CHECK_EQ(si[0].ssi_uid, getuid());
	CHECK(!is_pending(SIGUSR1)); /* consumed */
	CHECK(!readable(fd));

	/* Signals outside the mask stay pending and do not make the fd readable. */
	CHECK_EQ(kill(getpid(), SIGUSR2), 0);
	CHECK(!readable(fd));
	CHECK(is_pending(SIGUSR2));

	/* Queued real-time signals: several per read, in order, with their values. */
	for (int i = 0; i < 3; i++) {
		union sigval v = {.sival_int = 100 + i};
		CHECK_EQ(sigqueue(getpid(), SIGRTMIN, v), 0);
	}
	memset(si, 0, sizeof(si));
	CHECK_EQ(read(fd, si, sizeof(si)), 3 * 128);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(si[i].ssi_signo, SIGRTMIN);
		CHECK_EQ(si[i].ssi_code, SI_QUEUE);
		CHECK_EQ(si[i].ssi_int, 100 + i);
		CHECK_EQ(si[i].ssi_pid, getpid());
	}
	/* A buffer for one takes one. */
	union sigval v = {.sival_int = 7};
	CHECK_EQ(sigqueue(getpid(), SIGRTMIN, v), 0);
	CHECK_EQ(sigqueue(getpid(), SIGRTMIN, v), 0);
	CHECK_EQ(read(fd, si, 128 + 64), 128);
	CHECK_EQ(read(fd, si, 128), 128);
	CHECK_ERR(read(fd, si, 64), EINVAL);

	/* Replace the mask: now SIGUSR2 (already pending) is readable. */
	CHECK_EQ(signalfd(fd, &other, 0), fd);
	CHECK(readable(fd));
	CHECK_EQ(read(fd, si, sizeof(si)), 128);
	CHECK_EQ(si[0].ssi_signo, SIGUSR2);
	CHECK(!is_pending(SIGUSR2));

	/* Errors. */
	CHECK_ERR(signalfd(-1, &mask, 0x1234), EINVAL);
	CHECK_ERR(signalfd(0, &mask, 0), EINVAL); /* stdin is not a signalfd */
	CHECK_ERR(syscall(SYS_signalfd4, -1, &mask, 4, 0), EINVAL);
	close(fd);
}

static void test_sigchld_and_blocking_read(void)
{
	sigset_t mask = set_of(SIGCHLD, SIGUSR1);
	struct signalfd_siginfo si;
	int status;

	CHECK_EQ(sigprocmask(SIG_BLOCK, &mask, NULL), 0);
	int fd = signalfd(-1, &mask, 0);
	CHECK(fd >= 0);

	/* A child's exit: SIGCHLD with its pid and status; the child still needs reaping. */
	pid_t pid = fork();
	if (pid == 0)
		_exit(23);
	CHECK_EQ(read(fd, &si, sizeof(si)), 128);
	CHECK_EQ(si.ssi_signo, SIGCHLD);
	CHECK_EQ(si.ssi_code, CLD_EXITED);
	CHECK_EQ(si.ssi_pid, pid);
	CHECK_EQ(si.ssi_status, 23);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(WEXITSTATUS(status), 23);

	/* A blocking read waits for a signal sent by another process (then its exit). */
	pid_t parent = getpid();
	pid = fork();
	if (pid == 0) {
		struct timespec d = {0, 30 * 1000 * 1000};
		nanosleep(&d, NULL);
		_exit(kill(parent, SIGUSR1) == 0 ? 0 : 1);
	}
	CHECK_EQ(read(fd, &si, sizeof(si)), 128);
	CHECK_EQ(si.ssi_signo, SIGUSR1);
	CHECK_EQ(si.ssi_pid, pid);
	CHECK_EQ(si.ssi_code, SI_USER);
	CHECK_EQ(read(fd, &si, sizeof(si)), 128);
	CHECK_EQ(si.ssi_signo, SIGCHLD);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);

	/* Through epoll. */
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 5}, out;
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0);
	CHECK_EQ(epoll_wait(ep, &out, 1, 0), 0);
	CHECK_EQ(raise(SIGUSR1), 0);
	CHECK_EQ(epoll_wait(ep, &out, 1, 1000), 1);
	CHECK_EQ(out.data.u64, 5);
	CHECK_EQ(read(fd, &si, sizeof(si)), 128);
	CHECK_EQ(si.ssi_code, SI_TKILL);
	close(ep);
	close(fd);
}

int main(void)
{
	test_basic();
	test_sigchld_and_blocking_read();
	return check_done();
}
