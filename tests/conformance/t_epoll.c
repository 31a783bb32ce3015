/*
 * t_epoll: readiness through epoll on pipes and eventfds. Level-triggered registrations
 * report while data remains, EPOLLET ones once per new arrival, EPOLLONESHOT once until
 * re-armed with MOD; MOD changes events and data, DEL removes; ADD twice is EEXIST, MOD/DEL
 * of an unregistered fd ENOENT, regular files EPERM, the epoll fd itself EINVAL; timeouts of 0
 * and N ms; epoll_pwait swaps in a signal mask for the wait; writers' EPOLLOUT and a closed
 * writer's EPOLLHUP; closing the last reference unregisters; nested epoll; a blocked
 * epoll_wait is woken by another process.
 */
#include "check.h"
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int add(int ep, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = {.events = events, .data.u64 = data};

	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

static int mod(int ep, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = {.events = events, .data.u64 = data};

	return epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
}

/* epoll_wait with timeout 0 for one event; returns its data (0 if none), events in *ev. */
static uint64_t poll_one(int ep, uint32_t *events)
{
	struct epoll_event out[4];
	int n = epoll_wait(ep, out, 4, 0);

	CHECK(n >= 0 && n <= 1);
	*events = n == 1 ? out[0].events : 0;
	return n == 1 ? out[0].data.u64 : 0;
}

static void drain(int fd)
{
	char buf[256];

	int fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	fcntl(fd, F_SETFL, fl);
}

static void test_level_edge_oneshot(void)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	int lt[2], et[2], os[2];
	uint32_t ev;

	CHECK(ep >= 0);
	CHECK_EQ(fcntl(ep, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(pipe(lt), 0);
	CHECK_EQ(pipe(et), 0);
	CHECK_EQ(pipe(os), 0);
	CHECK_EQ(add(ep, lt[0], EPOLLIN, 0x1111), 0);
	CHECK_EQ(poll_one(ep, &ev), 0);

	/* Level-triggered: reported as long as data is there. */
	CHECK_EQ(write(lt[1], "ab", 2), 2);
	CHECK_EQ(poll_one(ep, &ev), 0x1111);
	CHECK_EQ(ev, EPOLLIN);
	maybe_save(); /* an epoll set with a ready pipe */
	CHECK_EQ(poll_one(ep, &ev), 0x1111);
	char c;
	CHECK_EQ(read(lt[0], &c, 1), 1);
	CHECK_EQ(poll_one(ep, &ev), 0x1111);
	CHECK_EQ(read(lt[0], &c, 1), 1);
	CHECK_EQ(poll_one(ep, &ev), 0);

	/* Edge-triggered: once per arrival, even with data left. */
	CHECK_EQ(add(ep, et[0], EPOLLIN | EPOLLET, 0x2222), 0);
	CHECK_EQ(write(et[1], "xy", 2), 2);
	CHECK_EQ(poll_one(ep, &ev), 0x2222);
	CHECK_EQ(poll_one(ep, &ev), 0);
	CHECK_EQ(read(et[0], &c, 1), 1);
	CHECK_EQ(poll_one(ep, &ev), 0);
	CHECK_EQ(write(et[1], "z", 1), 1);
	CHECK_EQ(poll_one(ep, &ev), 0x2222);
	CHECK_EQ(poll_one(ep, &ev), 0);
	drain(et[0]);

	/* One-shot: once, then disabled until MOD re-arms it. */
	CHECK_EQ(add(ep, os[0], EPOLLIN | EPOLLONESHOT, 0x3333), 0);
	CHECK_EQ(write(os[1], "1", 1), 1);
	CHECK_EQ(poll_one(ep, &ev), 0x3333);
	CHECK_EQ(poll_one(ep, &ev), 0);
	CHECK_EQ(write(os[1], "2", 1), 1);
	CHECK_EQ(poll_one(ep, &ev), 0);
	CHECK_EQ(mod(ep, os[0], EPOLLIN | EPOLLONESHOT, 0x3334), 0);
	CHECK_EQ(poll_one(ep, &ev), 0x3334);
	drain(os[0]);

	/* MOD changes the data; DEL removes the fd. */
	CHECK_EQ(write(lt[1], "q", 1), 1);
	CHECK_EQ(mod(ep, lt[0], EPOLLIN, 0x4444), 0);
	CHECK_EQ(poll_one(ep, &ev), 0x4444);
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_DEL, lt[0], NULL), 0);
	CHECK_EQ(poll_one(ep, &ev), 0);
	drain(lt[0]);

	/* Errors. */
	CHECK_EQ(add(ep, et[0], EPOLLIN, 1), -1);
	CHECK_EQ(errno, EEXIST);
	CHECK_EQ(mod(ep, lt[0], EPOLLIN, 1), -1);
	CHECK_EQ(errno, ENOENT);
	CHECK_ERR(epoll_ctl(ep, EPOLL_CTL_DEL, lt[0], NULL), ENOENT);
	CHECK_EQ(add(ep, ep, EPOLLIN, 1), -1);
	CHECK_EQ(errno, EINVAL);
	int file = open("/bin/busybox", O_RDONLY);
	CHECK(file >= 0);
	CHECK_EQ(add(ep, file, EPOLLIN, 1), -1);
	CHECK_EQ(errno, EPERM);
	close(file);
	CHECK_EQ(add(ep, 9999, EPOLLIN, 1), -1);
	CHECK_EQ(errno, EBADF);
	CHECK_EQ(add(lt[0], et[0], EPOLLIN, 1), -1); /* not an epoll fd */
	CHECK_EQ(errno, EINVAL);
	struct epoll_event out = {.events = EPOLLIN};
	CHECK_ERR(epoll_ctl(ep, 99, et[0], &out), EINVAL);
	CHECK_ERR(epoll_wait(ep, &out, 0, 0), EINVAL);
	CHECK_ERR(epoll_wait(lt[0], &out, 1, 0), EINVAL);
	CHECK_ERR(syscall(SYS_epoll_create, 0), EINVAL); /* musl maps epoll_create to create1 */
	CHECK_ERR(epoll_create1(0x1234), EINVAL);

	for (int i = 0; i < 2; i++) {
		close(lt[i]);
		close(et[i]);
		close(os[i]);
	}
	close(ep);
}

static void test_timeouts_and_hup(void)
{
	int ep = epoll_create1(0);
	int p[2];
	struct epoll_event out[4];
	uint32_t ev;

	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(add(ep, p[0], EPOLLIN, 1), 0);
	long long start = now_ms();
	CHECK_EQ(epoll_wait(ep, out, 4, 50), 0);
	CHECK(now_ms() - start >= 50);
	CHECK(now_ms() - start < 1500);

	/* The write end is writable. */
	CHECK_EQ(add(ep, p[1], EPOLLOUT, 2), 0);
	CHECK_EQ(poll_one(ep, &ev), 2);
	CHECK_EQ(ev, EPOLLOUT);
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_DEL, p[1], NULL), 0);

	/* The writer goes away: EPOLLHUP (not asked for, always reported). */
	CHECK_EQ(write(p[1], "z", 1), 1);
	close(p[1]);
	CHECK_EQ(poll_one(ep, &ev), 1);
	CHECK_EQ(ev, EPOLLIN | EPOLLHUP);
	drain(p[0]);
	CHECK_EQ(poll_one(ep, &ev), 1);
	CHECK_EQ(ev, EPOLLHUP);
	close(p[0]);
	close(ep);
}

/* Closing the last reference to a file drops its registration; a dup keeps it. */
static void test_close_unregisters(void)
{
	int ep = epoll_create1(0);
	int efd = eventfd(0, 0);
	uint32_t ev;

	CHECK_EQ(add(ep, efd, EPOLLIN, 7), 0);
	int dup_fd = dup(efd);
	close(efd);
	uint64_t one = 1;
	CHECK_EQ(write(dup_fd, &one, 8), 8);
	CHECK_EQ(poll_one(ep, &ev), 7); /* the open file is still registered */
	close(dup_fd);
	CHECK_EQ(poll_one(ep, &ev), 0);
	close(ep);
}

static void test_nested(void)
{
	int outer = epoll_create1(0), inner = epoll_create1(0);
	int efd = eventfd(0, EFD_NONBLOCK);
	uint32_t ev;

	CHECK_EQ(add(inner, efd, EPOLLIN, 5), 0);
	CHECK_EQ(add(outer, inner, EPOLLIN, 6), 0);
	CHECK_EQ(poll_one(outer, &ev), 0);
	uint64_t one = 1;
	CHECK_EQ(write(efd, &one, 8), 8);
	CHECK_EQ(poll_one(outer, &ev), 6);
	CHECK_EQ(ev, EPOLLIN);
	CHECK_EQ(poll_one(inner, &ev), 5);
	/* A loop is refused. */
	CHECK_EQ(add(inner, outer, EPOLLIN, 7), -1);
	CHECK_EQ(errno, ELOOP);
	close(efd);
	close(inner);
	close(outer);
}

static volatile int usr1_count;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_count++;
}

static void test_pwait_sigmask(void)
{
	int ep = epoll_create1(0);
	int efd = eventfd(0, 0);
	struct epoll_event out[2];
	sigset_t block, old, during;
	struct sigaction sa;

	CHECK_EQ(add(ep, efd, EPOLLIN, 1), 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &block, &old), 0);
	usr1_count = 0;
	CHECK_EQ(kill(getpid(), SIGUSR1), 0);
	CHECK_EQ(usr1_count, 0);

	/* A mask that keeps it blocked: a plain timeout. */
	during = block;
	CHECK_EQ(epoll_pwait(ep, out, 2, 20, &during), 0);
	CHECK_EQ(usr1_count, 0);
	/* A mask that unblocks it: the handler runs and the wait fails EINTR at once. */
	sigemptyset(&during);
	long long start = now_ms();
	CHECK_ERR(epoll_pwait(ep, out, 2, 5000, &during), EINTR);
	CHECK(now_ms() - start < 2500);
	CHECK_EQ(usr1_count, 1);
	/* The old mask is back. */
	sigset_t now;
	CHECK_EQ(sigprocmask(SIG_BLOCK, NULL, &now), 0);
	CHECK(sigismember(&now, SIGUSR1));
	CHECK_EQ(sigprocmask(SIG_SETMASK, &old, NULL), 0);
	signal(SIGUSR1, SIG_DFL);
	close(efd);
	close(ep);
}

static void test_woken_by_other_process(void)
{
	int ep = epoll_create1(0);
	int p[2], status;
	struct epoll_event out[2];

	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(add(ep, p[0], EPOLLIN, 9), 0);
	/* Timed from before the fork: a parent scheduled late after it sees less. */
	long long start = now_ms();
	pid_t pid = fork();
	if (pid == 0) {
		struct timespec d = {0, 50 * 1000 * 1000};
		nanosleep(&d, NULL);
		_exit(write(p[1], "w", 1) == 1 ? 0 : 1);
	}
	CHECK_EQ(epoll_wait(ep, out, 2, -1), 1);
	CHECK_EQ(out[0].data.u64, 9);
	CHECK(now_ms() - start >= 40);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
	close(p[0]);
	close(p[1]);
	close(ep);
}

int main(void)
{
	test_level_edge_oneshot();
	test_timeouts_and_hup();
	test_close_unregisters();
	test_nested();
	test_pwait_sigmask();
	test_woken_by_other_process();
	return check_done();
}
