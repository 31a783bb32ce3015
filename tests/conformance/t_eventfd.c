/*
 * t_eventfd: the 64-bit counter. Writes add, a read returns the sum and zeroes it (with
 * EFD_SEMAPHORE: returns 1 and decrements); reading zero blocks or, with EFD_NONBLOCK, fails
 * EAGAIN; the counter stops at 2^64-2 (a write past it blocks or fails EAGAIN, writing 2^64-1
 * is EINVAL); poll reports POLLIN for a non-zero counter and POLLOUT while a 1 fits; a write
 * in another process wakes a blocked reader.
 */
#include "check.h"
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>

static uint64_t rd(int fd)
{
	uint64_t v = 0;

	CHECK_EQ(read(fd, &v, sizeof(v)), 8);
	return v;
}

static void wr(int fd, uint64_t v)
{
	CHECK_EQ(write(fd, &v, sizeof(v)), 8);
}

static short revents(int fd, short events)
{
	struct pollfd p = {.fd = fd, .events = events};

	CHECK(poll(&p, 1, 0) >= 0);
	return p.revents;
}

static void test_counter(void)
{
	int fd = eventfd(3, EFD_NONBLOCK | EFD_CLOEXEC);
	uint64_t v;

	CHECK(fd >= 0);
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CHECK(fcntl(fd, F_GETFL) & O_NONBLOCK);
	CHECK_EQ(revents(fd, POLLIN | POLLOUT), POLLIN | POLLOUT);
	CHECK_EQ(rd(fd), 3);
	CHECK_ERR(read(fd, &v, sizeof(v)), EAGAIN);
	CHECK_EQ(revents(fd, POLLIN | POLLOUT), POLLOUT);
	wr(fd, 5);
	wr(fd, 7);
	CHECK_EQ(rd(fd), 12);
	/* Writing 0 is allowed and changes nothing. */
	wr(fd, 0);
	CHECK_ERR(read(fd, &v, sizeof(v)), EAGAIN);

	/* Size and value errors. */
	uint32_t small = 1;
	CHECK_ERR(write(fd, &small, sizeof(small)), EINVAL);
	CHECK_ERR(read(fd, &small, sizeof(small)), EINVAL);
	v = UINT64_MAX;
	CHECK_ERR(write(fd, &v, sizeof(v)), EINVAL);
	/* A bigger read buffer is fine: 8 bytes move. (Longer writes vary by kernel version.) */
	uint64_t two[2] = {0, 99};
	wr(fd, 4);
	CHECK_EQ(read(fd, two, sizeof(two)), 8);
	CHECK_EQ(two[1], 99);
	CHECK_EQ(two[0], 4);

	/* The ceiling is 2^64-2: one more would overflow. */
	wr(fd, UINT64_MAX - 1);
	CHECK_EQ(revents(fd, POLLIN | POLLOUT), POLLIN);
	v = 1;
	CHECK_ERR(write(fd, &v, sizeof(v)), EAGAIN);
	wr(fd, 0);
	maybe_save(); /* an eventfd at its maximum */
	CHECK_EQ(rd(fd), UINT64_MAX - 1);
	close(fd);

	CHECK_ERR(eventfd(0, 0x1234), EINVAL);
}

static void test_semaphore(void)
{
	int fd = eventfd(3, EFD_SEMAPHORE | EFD_NONBLOCK);
	uint64_t v;

	CHECK(fd >= 0);
	CHECK_EQ(rd(fd), 1);
	CHECK_EQ(rd(fd), 1);
	wr(fd, 2);
	CHECK_EQ(rd(fd), 1);
	CHECK_EQ(rd(fd), 1);
	CHECK_EQ(rd(fd), 1);
	CHECK_ERR(read(fd, &v, sizeof(v)), EAGAIN);
	CHECK_EQ(revents(fd, POLLIN), 0);
	close(fd);
}

static void test_blocking_read_woken_by_child(void)
{
	int fd = eventfd(0, 0);
	int status;

	CHECK(fd >= 0);
	pid_t pid = fork();
	if (pid == 0) {
		struct timespec d = {0, 30 * 1000 * 1000};
		uint64_t v = 41;
		nanosleep(&d, NULL);
		_exit(write(fd, &v, sizeof(v)) == 8 ? 0 : 1);
	}
	CHECK_EQ(rd(fd), 41); /* blocks until the child writes */
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
	close(fd);
}

static void *write_one(void *arg)
{
	uint64_t v = 1;

	return (void *)(intptr_t)write(*(int *)arg, &v, sizeof(v));
}

/* A write that would overflow blocks until a read makes room. */
static void test_blocking_write(void)
{
	int fd = eventfd(0, 0);
	pthread_t t;
	void *ret;

	CHECK(fd >= 0);
	wr(fd, UINT64_MAX - 1);
	CHECK_EQ(pthread_create(&t, NULL, write_one, &fd), 0);
	struct timespec d = {0, 30 * 1000 * 1000};
	nanosleep(&d, NULL);
	CHECK_EQ(rd(fd), UINT64_MAX - 1);
	CHECK_EQ(pthread_join(t, &ret), 0);
	CHECK_EQ((intptr_t)ret, 8);
	CHECK_EQ(rd(fd), 1);
	close(fd);
}

int main(void)
{
	test_counter();
	test_semaphore();
	test_blocking_read_woken_by_child();
	test_blocking_write();
	return check_done();
}
