/*
 * t_ioctl: TCGETS is ENOTTY on anything that is not a terminal: stdout (the runner makes it a
 * pipe, on which lseek is ESPIPE), a regular file, a directory; isatty() agrees; a bad fd is
 * EBADF. The stdout pipe the sandbox was given stays one across a checkpoint and restore.
 */
#include "check.h"
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

int main(void)
{
	char termios[256];
	struct stat st;

	maybe_save(); /* stdout: a host pipe handed to the sandbox */
	CHECK_EQ(fstat(1, &st), 0);
	CHECK(S_ISFIFO(st.st_mode));
	CHECK_ERR(syscall(SYS_ioctl, 1, TCGETS, termios), ENOTTY);
	CHECK_ERR(syscall(SYS_lseek, 1, 0, SEEK_CUR), ESPIPE);
	errno = 0;
	CHECK_EQ(isatty(1), 0);
	CHECK_EQ(errno, ENOTTY);

	int fd = open("/etc/passwd", O_RDONLY);
	CHECK(fd >= 0);
	CHECK_ERR(syscall(SYS_ioctl, fd, TCGETS, termios), ENOTTY);
	CHECK_ERR(syscall(SYS_ioctl, fd, TIOCGWINSZ, termios), ENOTTY);
	CHECK_EQ(isatty(fd), 0);
	close(fd);
	fd = open("/etc", O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	CHECK_ERR(syscall(SYS_ioctl, fd, TCGETS, termios), ENOTTY);
	close(fd);

	CHECK_ERR(syscall(SYS_ioctl, 999, TCGETS, termios), EBADF);
	CHECK_ERR(syscall(SYS_ioctl, fd, TCGETS, termios), EBADF);
	return check_done();
}
