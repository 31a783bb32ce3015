/*
 * t_timerfd: timer file descriptors. A relative or TFD_TIMER_ABSTIME one-shot makes a
 * blocking read return the 8-byte expiration count 1 no earlier than asked; a periodic timer
 * accumulates expirations between reads; TFD_NONBLOCK reads EAGAIN before expiry; poll sees
 * POLLIN only once expired; timerfd_gettime reports the time left and the interval; a zero
 * it_value disarms; bad clocks, flags, times and short reads fail.
 */
#include "check.h"
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <sys/timerfd.h>
#include <time.h>

static long long now_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static struct timespec ms_ts(long long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

	return ts;
}

static long long ts_ms(struct timespec ts)
{
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static uint64_t read_count(int fd)
{
	uint64_t n = 0;

	CHECK_EQ(read(fd, &n, sizeof(n)), 8);
	return n;
}

static void test_relative_and_absolute(void)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, 0);
	struct itimerspec its = {{0, 0}, ms_ts(50)}, cur;

	CHECK(fd >= 0);
	/* Unarmed: all zero. */
	CHECK_EQ(timerfd_gettime(fd, &cur), 0);
	CHECK_EQ(cur.it_value.tv_sec + cur.it_value.tv_nsec, 0);

	long long start = now_ms(CLOCK_MONOTONIC);
	CHECK_EQ(timerfd_settime(fd, 0, &its, NULL), 0);
	CHECK_EQ(timerfd_gettime(fd, &cur), 0);
	CHECK(ts_ms(cur.it_value) <= 50 && (cur.it_value.tv_sec || cur.it_value.tv_nsec));
	CHECK_EQ(read_count(fd), 1);
	CHECK(now_ms(CLOCK_MONOTONIC) - start >= 50);
	CHECK_EQ(timerfd_gettime(fd, &cur), 0);
	CHECK_EQ(cur.it_value.tv_sec + cur.it_value.tv_nsec, 0);

	/* Absolute on CLOCK_MONOTONIC. */
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	start = ts_ms(t);
	t.tv_nsec += 50 * 1000000;
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	its.it_value = t;
	struct itimerspec old;
	CHECK_EQ(timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, &old), 0);
	CHECK_EQ(old.it_value.tv_sec + old.it_value.tv_nsec, 0);
	/* gettime reports relative time even for an absolute timer. */
	CHECK_EQ(timerfd_gettime(fd, &cur), 0);
	CHECK(ts_ms(cur.it_value) <= 50);
	CHECK_EQ(read_count(fd), 1);
	CHECK(now_ms(CLOCK_MONOTONIC) >= start + 50);

	/* An absolute time in the past expires at once. */
	its.it_value.tv_sec = 1;
	its.it_value.tv_nsec = 0;
	CHECK_EQ(timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL), 0);
	CHECK_EQ(read_count(fd), 1);
	close(fd);

	/* CLOCK_REALTIME, relative. */
	fd = timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	its.it_value = ms_ts(30);
	start = now_ms(CLOCK_MONOTONIC);
	CHECK_EQ(timerfd_settime(fd, 0, &its, NULL), 0);
	CHECK_EQ(read_count(fd), 1);
	CHECK(now_ms(CLOCK_MONOTONIC) - start >= 30);
	close(fd);
}

static void test_nonblock_poll_and_disarm(void)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	uint64_t n;

	CHECK(fd >= 0);
	CHECK(fcntl(fd, F_GETFL) & O_NONBLOCK);
	CHECK_ERR(read(fd, &n, sizeof(n)), EAGAIN); /* unarmed */
	struct itimerspec its = {{0, 0}, ms_ts(10 * 1000)};
	CHECK_EQ(timerfd_settime(fd, 0, &its, NULL), 0);
	CHECK_ERR(read(fd, &n, sizeof(n)), EAGAIN); /* not expired */
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	CHECK_EQ(poll(&pfd, 1, 0), 0);
	struct itimerspec cur;
	CHECK_EQ(timerfd_gettime(fd, &cur), 0);
	CHECK(ts_ms(cur.it_value) > 9000 && ts_ms(cur.it_value) <= 10000);
	maybe_save(); /* an armed timerfd */

	/* Re-arm short; poll blocks until it expires. */
	its.it_value = ms_ts(40);
	long long start = now_ms(CLOCK_MONOTONIC);
	struct itimerspec old;
	CHECK_EQ(timerfd_settime(fd, 0, &its, &old), 0);
	CHECK(ts_ms(old.it_value) > 8000);
	CHECK_EQ(poll(&pfd, 1, 5000), 1);
	CHECK_EQ(pfd.revents, POLLIN);
	CHECK(now_ms(CLOCK_MONOTONIC) - start >= 40);
	CHECK_EQ(read_count(fd), 1);
	CHECK_ERR(read(fd, &n, sizeof(n)), EAGAIN); /* reading resets the count */

	/* Disarm with a zero it_value: nothing expires. */
	its.it_value = ms_ts(20);
	CHECK_EQ(timerfd_settime(fd, 0, &its, NULL), 0);
	struct itimerspec zero = {{0, 0}, {0, 0}};
	CHECK_EQ(timerfd_settime(fd, 0, &zero, NULL), 0);
	CHECK_EQ(poll(&pfd, 1, 60), 0);
	CHECK_ERR(read(fd, &n, sizeof(n)), EAGAIN);
	close(fd);
}

static void test_periodic(void)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, 0);
	struct itimerspec its = {ms_ts(10), ms_ts(10)}, cur;

	CHECK(fd >= 0);
	long long start = now_ms(CLOCK_MONOTONIC);
	CHECK_EQ(timerfd_settime(fd, 0, &its, NULL), 0);
	struct timespec d = ms_ts(105);
	nanosleep(&d, NULL);
	uint64_t n = read_count(fd);
	long long elapsed = now_ms(CLOCK_MONOTONIC) - start;
	/* Ten periods have passed; no more than elapsed/10 (+1 for rounding) can have. */
	CHECK(n >= 10);
	CHECK(n <= (uint64_t)(elapsed / 10 + 1));
	/* It keeps going: the next read blocks until the next period. */
	CHECK_EQ(timerfd_gettime(fd, &cur), 0);
	CHECK_EQ(ts_ms(cur.it_interval), 10);
	CHECK(ts_ms(cur.it_value) <= 10);
	CHECK(read_count(fd) >= 1);
	close(fd);
}

static void test_errors(void)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, 0);
	struct itimerspec its = {{0, 0}, {0, 1000000000}};
	uint32_t small;

	CHECK_ERR(timerfd_create(12345, 0), EINVAL);
	CHECK_ERR(timerfd_create(CLOCK_MONOTONIC, 0x4), EINVAL);
	CHECK_ERR(timerfd_settime(fd, 0, &its, NULL), EINVAL);
	its.it_value.tv_nsec = -1;
	CHECK_ERR(timerfd_settime(fd, 0, &its, NULL), EINVAL);
	its.it_value.tv_nsec = 0;
	CHECK_ERR(timerfd_settime(fd, 0x100, &its, NULL), EINVAL);
	CHECK_ERR(timerfd_settime(0, 0, &its, NULL), EINVAL); /* stdin is no timerfd */
	CHECK_ERR(timerfd_gettime(1, &its), EINVAL);
	CHECK_ERR(timerfd_settime(-1, 0, &its, NULL), EBADF);
	its.it_value = ms_ts(1);
	CHECK_EQ(timerfd_settime(fd, 0, &its, NULL), 0);
	CHECK_ERR(read(fd, &small, sizeof(small)), EINVAL);
	CHECK_ERR(write(fd, &its, 8), EINVAL);
	close(fd);
}

int main(void)
{
	test_relative_and_absolute();
	test_nonblock_poll_and_disarm();
	test_periodic();
	test_errors();
	return check_done();
}
