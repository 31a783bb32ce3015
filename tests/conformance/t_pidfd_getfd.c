/*
 * t_pidfd_getfd: pidfd_getfd duplicates a descriptor of the process a pidfd names (the same
 * open file description: offsets are shared), close-on-exec; a descriptor it does not have is
 * EBADF, flags EINVAL, a descriptor that is no pidfd EBADF, a reaped process ESRCH. Another
 * process needs ptrace access: the sandbox, like Yama's ptrace_scope 3, gives none (EPERM);
 * natively root may have it.
 */
#include "check.h"
#include <fcntl.h>
#include <sys/wait.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

static long getfd(int pidfd, int fd, unsigned flags)
{
	return syscall(SYS_pidfd_getfd, pidfd, fd, flags);
}

int main(void)
{
	int self = syscall(SYS_pidfd_open, getpid(), 0);
	CHECK(self >= 0);
	int p[2];
	CHECK_EQ(pipe(p), 0);
	int fd = open("/etc/passwd", O_RDONLY);
	CHECK(fd >= 0);

	maybe_save();
	int dup = getfd(self, fd, 0);
	CHECK(dup >= 0 && dup != fd);
	CHECK_EQ(fcntl(dup, F_GETFD), FD_CLOEXEC);
	char c;
	CHECK_EQ(read(fd, &c, 1), 1);
	CHECK_EQ(lseek(dup, 0, SEEK_CUR), 1); /* one open file description */
	int wdup = getfd(self, p[1], 0);
	CHECK(wdup >= 0);
	CHECK_EQ(write(wdup, "z", 1), 1);
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(c, 'z');

	CHECK_ERR(getfd(self, 999, 0), EBADF);
	CHECK_ERR(getfd(self, fd, 1), EINVAL);
	CHECK_ERR(getfd(fd, fd, 0), EBADF); /* not a pidfd */
	CHECK_ERR(getfd(-1, fd, 0), EBADF);

	/* Another process. */
	int go[2];
	CHECK_EQ(pipe(go), 0);
	pid_t pid = fork();
	if (pid == 0) {
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	int child = syscall(SYS_pidfd_open, pid, 0);
	CHECK(child >= 0);
	long r = getfd(child, go[0], 0);
	if (in_sandbox())
		CHECK_EQ(r == -1 && errno == EPERM, 1);
	else
		CHECK(r >= 0 || errno == EPERM);
	CHECK_EQ(write(go[1], "g", 1), 1);
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK_ERR(getfd(child, 0, 0), ESRCH);
	return check_done();
}
