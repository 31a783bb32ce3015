/*
 * t_poll_pipe: poll and ppoll on pipes. POLLIN once data is written, POLLOUT on a writable
 * write end (not on a full one), POLLHUP on the read end once the writer is gone (with POLLIN
 * while data remains), POLLERR on the write end once the reader is gone; POLLNVAL for a
 * closed fd, negative fds ignored; a timeout returns 0 no earlier than asked; the raw ppoll
 * writes back the time left and swaps in a signal mask; another process's write wakes a
 * blocked poll.
 */
#include "check.h"
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static short revents(int fd, short events)
{
	struct pollfd p = {.fd = fd, .events = events, .revents = 0x5a5a};

	int n = poll(&p, 1, 0);
	CHECK_EQ(n, p.revents ? 1 : 0);
	return p.revents;
}

static void test_pipe_states(void)
{
	int p[2];
	char buf[64];

	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(revents(p[0], POLLIN), 0);
	CHECK_EQ(revents(p[1], POLLOUT), POLLOUT);
	CHECK_EQ(revents(p[1], POLLIN), 0);
	CHECK_EQ(write(p[1], "data", 4), 4);
	CHECK_EQ(revents(p[0], POLLIN | POLLOUT), POLLIN); /* a read end is never writable */
	CHECK_EQ(revents(p[0], POLLRDNORM), POLLRDNORM);
	CHECK_EQ(revents(p[0], 0), 0);
	maybe_save(); /* a pipe with data in it */
	CHECK_EQ(revents(p[0], POLLIN), POLLIN);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 4);
	CHECK_EQ(revents(p[0], POLLIN), 0);

	/* Writer gone: POLLHUP, with POLLIN while there is data; reported even if not asked. */
	CHECK_EQ(write(p[1], "xy", 2), 2);
	close(p[1]);
	CHECK_EQ(revents(p[0], POLLIN), POLLIN | POLLHUP);
	CHECK_EQ(revents(p[0], 0), POLLHUP);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 2);
	CHECK_EQ(revents(p[0], POLLIN), POLLHUP);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 0);
	close(p[0]);

	/* Reader gone: POLLERR on the write end. */
	CHECK_EQ(pipe(p), 0);
	close(p[0]);
	CHECK_EQ(revents(p[1], POLLOUT), POLLOUT | POLLERR);
	CHECK_EQ(revents(p[1], 0), POLLERR);
	close(p[1]);

	/* A full pipe is not writable; emptying it makes it so again. */
	CHECK_EQ(pipe2(p, O_NONBLOCK), 0);
	static char big[65536];
	ssize_t n, total = 0;
	while ((n = write(p[1], big, sizeof(big))) > 0)
		total += n;
	CHECK(total > 0);
	CHECK_EQ(revents(p[1], POLLOUT), 0);
	while (read(p[0], big, sizeof(big)) > 0)
		;
	CHECK_EQ(revents(p[1], POLLOUT), POLLOUT);
	close(p[0]);
	close(p[1]);
}

static void test_fd_edge_cases(void)
{
	int p[2];

	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(write(p[1], "a", 1), 1);
	int closed = dup(p[0]);
	close(closed);
	struct pollfd fds[3] = {
	    {.fd = p[0], .events = POLLIN},
	    {.fd = closed, .events = POLLIN},
	    {.fd = -p[0], .events = POLLIN, .revents = 0x77},
	};
	CHECK_EQ(poll(fds, 3, 0), 2);
	CHECK_EQ(fds[0].revents, POLLIN);
	CHECK_EQ(fds[1].revents, POLLNVAL);
	CHECK_EQ(fds[2].revents, 0); /* negative: ignored, revents cleared */
	CHECK_ERR(syscall(SYS_poll, BAD_PTR, 1, 0), EFAULT);
	CHECK_EQ(poll(NULL, 0, 0), 0);
	close(p[0]);
	close(p[1]);
}

static void test_timeouts(void)
{
	int p[2];

	CHECK_EQ(pipe(p), 0);
	struct pollfd pfd = {.fd = p[0], .events = POLLIN};
	long long start = now_ms();
	CHECK_EQ(poll(&pfd, 1, 50), 0);
	CHECK(now_ms() - start >= 50);
	CHECK(now_ms() - start < 1500);
	CHECK_EQ(pfd.revents, 0);

	/* No fds: poll is a sleep. */
	start = now_ms();
	CHECK_EQ(poll(NULL, 0, 30), 0);
	CHECK(now_ms() - start >= 30);

	/* Raw ppoll: a timeout that expires is written back as zero... */
	struct timespec ts = {0, 40 * 1000 * 1000};
	start = now_ms();
	CHECK_EQ(syscall(SYS_ppoll, &pfd, 1, &ts, NULL, 8), 0);
	CHECK(now_ms() - start >= 40);
	CHECK_EQ(ts.tv_sec, 0);
	CHECK_EQ(ts.tv_nsec, 0);
	/* ...and an early return leaves the time left. */
	CHECK_EQ(write(p[1], "r", 1), 1);
	ts.tv_sec = 5;
	ts.tv_nsec = 0;
	CHECK_EQ(syscall(SYS_ppoll, &pfd, 1, &ts, NULL, 8), 1);
	CHECK(ts.tv_sec == 4 || ts.tv_sec == 5);
	CHECK(ts.tv_sec * 1000000000LL + ts.tv_nsec > 4000000000LL);
	ts.tv_nsec = 1000000000;
	CHECK_ERR(syscall(SYS_ppoll, &pfd, 1, &ts, NULL, 8), EINVAL);
	close(p[0]);
	close(p[1]);
}

static volatile int usr1_count;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_count++;
}

static void test_ppoll_sigmask(void)
{
	int p[2];
	sigset_t block, old, during;
	struct sigaction sa;

	CHECK_EQ(pipe(p), 0);
	struct pollfd pfd = {.fd = p[0], .events = POLLIN};
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &block, &old), 0);
	usr1_count = 0;
	CHECK_EQ(kill(getpid(), SIGUSR1), 0);

	struct timespec ts = {0, 20 * 1000 * 1000};
	CHECK_EQ(ppoll(&pfd, 1, &ts, &block), 0);
	CHECK_EQ(usr1_count, 0);
	sigemptyset(&during);
	ts.tv_sec = 5;
	long long start = now_ms();
	CHECK_ERR(ppoll(&pfd, 1, &ts, &during), EINTR);
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

static void test_woken_by_child(void)
{
	int p[2], status;

	CHECK_EQ(pipe(p), 0);
	/* Timed from before the fork: a parent scheduled late after it sees less. */
	long long start = now_ms();
	pid_t pid = fork();
	if (pid == 0) {
		struct timespec d = {0, 50 * 1000 * 1000};
		nanosleep(&d, NULL);
		_exit(write(p[1], "c", 1) == 1 ? 0 : 1);
	}
	struct pollfd pfd = {.fd = p[0], .events = POLLIN};
	CHECK_EQ(poll(&pfd, 1, -1), 1);
	CHECK_EQ(pfd.revents, POLLIN);
	CHECK(now_ms() - start >= 40);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	test_pipe_states();
	test_fd_edge_cases();
	test_timeouts();
	test_ppoll_sigmask();
	test_woken_by_child();
	return check_done();
}
