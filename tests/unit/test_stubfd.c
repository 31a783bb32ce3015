/* Unit tests for the Sentry's receipt of a stub's userfaultfd (platform/stubfd.c): over a real
 * socket pair, only a whole message from the expected process with one anonymous-inode
 * descriptor is taken; anything else is dropped with every descriptor it brought, and nothing
 * waits. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "platform/internal.h"

static int sv[2];

static int setup(void **state)
{
	(void)state;
	return stubfd_socketpair(sv);
}

static int teardown(void **state)
{
	(void)state;
	close(sv[0]);
	close(sv[1]);
	return 0;
}

/* The lowest free descriptor number: what leaks shows as a higher one. */
static int lowest_free(void)
{
	int fd = dup(0);

	close(fd);
	return fd;
}

/* Sends LEN bytes with the N descriptors of FDS on the stubs' end. */
static void send_fds(const int *fds, int n, size_t len)
{
	union {
		char buf[CMSG_SPACE(8 * sizeof(int))];
		struct cmsghdr align;
	} control;
	char data[4] = "xyz";
	struct iovec iov = {data, len};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};

	if (n) {
		m.msg_control = control.buf;
		m.msg_controllen = CMSG_SPACE(n * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(n * sizeof(int));
		memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	}
	assert_int_equal(sendmsg(sv[1], &m, MSG_DONTWAIT | MSG_NOSIGNAL), (ssize_t)len);
}

/* The message the parameter page holds, as a stub sends it. */
static void send_as_stub(int fd)
{
	struct stub_fdmsg msg;
	const int fds[STUB_FDMSG_FDS] = {fd};

	stubfd_message(&msg, fds);
	assert_int_equal(sendmsg(sv[1], &msg.hdr, MSG_DONTWAIT | MSG_NOSIGNAL), 1);
}

static void test_a_stubs_message_is_taken(void **state)
{
	int fds[STUB_FDMSG_FDS] = {-1}, ev = eventfd(0, EFD_CLOEXEC);

	(void)state;
	assert_true(ev >= 0);
	send_as_stub(ev);
	assert_int_equal(stubfd_recv(sv[0], getpid(), fds), 0);
	assert_true(fds[0] >= 0 && fds[0] != ev);
	/* The same object, and close-on-exec. */
	uint64_t one = 1, got = 0;
	assert_int_equal(write(fds[0], &one, sizeof(one)), sizeof(one));
	assert_int_equal(read(ev, &got, sizeof(got)), sizeof(got));
	assert_int_equal(got, 1);
	assert_true(fcntl(fds[0], F_GETFD) & FD_CLOEXEC);
	close(fds[0]);
	close(ev);
}

static void test_no_message_is_an_error_not_a_wait(void **state)
{
	int fds[STUB_FDMSG_FDS];
	struct timespec a, b;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(stubfd_recv(sv[0], getpid(), fds), -EAGAIN);
	clock_gettime(CLOCK_MONOTONIC, &b);
	assert_true(b.tv_sec - a.tv_sec < 1);
}

/* Each of these is dropped, its descriptors closed, and the good message behind them taken. */
static void test_anything_else_is_dropped_with_what_it_brought(void **state)
{
	int ev = eventfd(0, EFD_CLOEXEC), ev2 = eventfd(0, EFD_CLOEXEC), p[2];
	int many[8], fds[STUB_FDMSG_FDS];

	(void)state;
	assert_true(ev >= 0 && ev2 >= 0 && pipe2(p, O_CLOEXEC) == 0);
	for (int i = 0; i < 8; i++)
		many[i] = ev;
	int before = lowest_free();
	send_fds(NULL, 0, 1);		  /* no descriptor */
	send_fds(&p[0], 1, 1);		  /* not an anonymous inode */
	send_fds((int[]){ev, ev2}, 2, 1); /* two */
	send_fds(many, 8, 1);		  /* more than the buffer holds: MSG_CTRUNC */
	send_fds(&ev, 1, 2);		  /* two bytes */
	send_fds(&ev, 1, 0);		  /* none */
	send_as_stub(ev2);
	assert_int_equal(stubfd_recv(sv[0], getpid(), fds), 0);
	assert_int_equal(fds[0], before); /* every one before it closed */
	close(fds[0]);
	assert_int_equal(lowest_free(), before);
	assert_int_equal(stubfd_recv(sv[0], getpid(), fds), -EAGAIN);
	close(ev);
	close(ev2);
	close(p[0]);
	close(p[1]);
}

/* From another process than the one asked (another stub, a guest of it): dropped. */
static void test_a_message_from_another_process_is_dropped(void **state)
{
	int ev = eventfd(0, EFD_CLOEXEC), fds[STUB_FDMSG_FDS], st;

	(void)state;
	assert_true(ev >= 0);
	int before = lowest_free();
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		send_as_stub(ev);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(stubfd_recv(sv[0], getpid(), fds), -EAGAIN);
	assert_int_equal(lowest_free(), before);
	/* And the one it was from is taken. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		send_as_stub(ev);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(stubfd_recv(sv[0], pid, fds), 0);
	close(fds[0]);
	close(ev);
}

/* A sender that keeps the socket full cannot keep the Sentry reading: it gives up. */
static void test_a_flood_is_bounded(void **state)
{
	int ev = eventfd(0, EFD_CLOEXEC), fds[STUB_FDMSG_FDS], n = 0;

	(void)state;
	assert_true(ev >= 0);
	int before = lowest_free();
	struct msghdr m = {0};
	char byte = 0;
	struct iovec iov = {&byte, 1};
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	while (sendmsg(sv[1], &m, MSG_DONTWAIT | MSG_NOSIGNAL) == 1 && n < 100000)
		n++;
	assert_true(n > 256);
	assert_int_equal(stubfd_recv(sv[0], getpid(), fds), -EBADMSG);
	stubfd_drain(sv[0]);
	int r;
	while ((r = stubfd_recv(sv[0], getpid(), fds)) == -EBADMSG)
		;
	assert_int_equal(r, -EAGAIN);
	assert_int_equal(lowest_free(), before);
	close(ev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_a_stubs_message_is_taken, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_no_message_is_an_error_not_a_wait, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_anything_else_is_dropped_with_what_it_brought,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_a_message_from_another_process_is_dropped, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_a_flood_is_bounded, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
