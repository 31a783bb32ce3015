/*
 * t_anon_inode: eventfd, epoll, signalfd and timerfd descriptors are files of Linux's one
 * anonymous inode: fstat shows the same device and inode number for all four, mode 0600 with
 * no file type bits, one link, and a 4096-byte block size; a checkpoint keeps that.
 */
#include "check.h"
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>

static void check_all(const int *fds, int n)
{
	struct stat first, st;

	CHECK_EQ(fstat(fds[0], &first), 0);
	CHECK_EQ(first.st_mode, S_IRUSR | S_IWUSR);
	CHECK_EQ(first.st_nlink, 1);
	CHECK_EQ(first.st_blksize, 4096);
	for (int i = 1; i < n; i++) {
		CHECK_EQ(fstat(fds[i], &st), 0);
		CHECK_EQ(st.st_dev, first.st_dev);
		CHECK_EQ(st.st_ino, first.st_ino);
		CHECK_EQ(st.st_mode, first.st_mode);
		CHECK_EQ(st.st_nlink, 1);
	}
}

int main(void)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	int fds[] = {eventfd(0, 0), epoll_create1(0), signalfd(-1, &mask, 0),
		     timerfd_create(CLOCK_MONOTONIC, 0)};
	for (int i = 0; i < 4; i++)
		CHECK(fds[i] >= 0);
	check_all(fds, 4);
	maybe_save();
	check_all(fds, 4);
	return check_done();
}
