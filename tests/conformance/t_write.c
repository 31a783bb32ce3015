/*
 * t_write: write and writev on stdout (a pipe when the runner captures it): full counts,
 * zero-length writes, iovecs written in order (the runner sees the text), EFAULT for a bad
 * buffer, EINVAL for bad iovec counts, EBADF for closed or read-only descriptors.
 */
#include "check.h"
#include <fcntl.h>
#include <sys/uio.h>

int main(void)
{
	const char *line = "t_write: plain write\n";

	CHECK_EQ(syscall(SYS_write, 1, line, strlen(line)), strlen(line));
	CHECK_EQ(write(1, line, 0), 0);
	CHECK_EQ(syscall(SYS_write, 1, NULL, 0), 0);

	struct iovec iov[4] = {{"t_write: ", 9}, {NULL, 0}, {"vectored ", 9}, {"write\n", 6}};
	CHECK_EQ(syscall(SYS_writev, 1, iov, 4), 24);
	CHECK_EQ(writev(1, iov, 0), 0);
	maybe_save();
	CHECK_EQ(writev(1, iov + 2, 2), 15);

	CHECK_ERR(syscall(SYS_write, 1, BAD_PTR, 10), EFAULT);
	CHECK_ERR(syscall(SYS_write, 1, (void *)0xffff800000000000UL, 10), EFAULT);
	struct iovec bad[1] = {{BAD_PTR, 10}};
	CHECK_ERR(syscall(SYS_writev, 1, bad, 1), EFAULT);
	CHECK_ERR(syscall(SYS_writev, 1, BAD_PTR, 1), EFAULT);
	CHECK_ERR(syscall(SYS_writev, 1, iov, (long)-1), EINVAL);
	CHECK_ERR(syscall(SYS_writev, 1, iov, 1025), EINVAL);

	CHECK_ERR(syscall(SYS_write, 999, line, 1), EBADF);
	CHECK_ERR(syscall(SYS_write, -1, line, 1), EBADF);
	int fd = open("/etc/passwd", O_RDONLY);
	CHECK(fd >= 0);
	CHECK_ERR(syscall(SYS_write, fd, line, 1), EBADF);
	CHECK_ERR(syscall(SYS_writev, fd, iov, 4), EBADF);
	close(fd);
	CHECK_ERR(syscall(SYS_write, fd, line, 1), EBADF);

	/* stderr is writable too (the runner merges it into the captured output). */
	CHECK_EQ(syscall(SYS_write, 2, "t_write: stderr\n", 16), 16);
	return check_done();
}
