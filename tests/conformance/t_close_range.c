/* t_close_range: close_range(2) closes every descriptor in [first, last] (gaps and numbers
 * past the table are fine), CLOSE_RANGE_CLOEXEC marks them close-on-exec instead, and
 * CLOSE_RANGE_UNSHARE first gives the caller a table of its own: a process sharing ours
 * (clone with CLONE_FILES) closing that way leaves our descriptors open. Bad flags and
 * first > last are EINVAL. */
#include "check.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>

#define CR_UNSHARE 0x2
#define CR_CLOEXEC 0x4

static long close_range_(unsigned int first, unsigned int last, unsigned int flags)
{
	return syscall(SYS_close_range, first, last, flags);
}

static bool is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static int shared_fd;

static int unshare_and_close(void *arg)
{
	(void)arg;
	return close_range_((unsigned int)shared_fd, (unsigned int)shared_fd, CR_UNSHARE) == 0 &&
		       !is_open(shared_fd)
		   ? 0
		   : 1;
}

int main(void)
{
	int fds[6];

	for (int i = 0; i < 6; i++) {
		fds[i] = open("/etc/passwd", O_RDONLY);
		CHECK(fds[i] >= 0);
	}
	close(fds[2]); /* a gap */

	CHECK_EQ(close_range_(fds[0], fds[1], CR_CLOEXEC), 0);
	maybe_save(); /* close-on-exec flags, and a gap in the table */
	CHECK_EQ(fcntl(fds[0], F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(fds[1], F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(fds[3], F_GETFD), 0);

	CHECK_EQ(close_range_(fds[1], fds[4], 0), 0);
	CHECK(is_open(fds[0]));
	CHECK(!is_open(fds[1]) && !is_open(fds[3]) && !is_open(fds[4]));
	CHECK(is_open(fds[5]));
	CHECK_EQ(close_range_(fds[5], ~0U, 0), 0); /* to the end of any table */
	CHECK(!is_open(fds[5]));

	CHECK_ERR(close_range_(5, 4, 0), EINVAL);
	CHECK_ERR(close_range_(3, 4, 0x100), EINVAL);

	/* A sharer unsharing before it closes leaves our descriptor alone. */
	shared_fd = open("/etc/passwd", O_RDONLY);
	CHECK(shared_fd >= 0);
	static char stack[64 * 1024];
	pid_t child = clone(unshare_and_close, stack + sizeof(stack), CLONE_FILES | SIGCHLD, NULL);
	CHECK(child > 0);
	int st;
	CHECK_EQ(waitpid(child, &st, 0), child);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(is_open(shared_fd));
	close(shared_fd);
	close(fds[0]);
	return check_done();
}
