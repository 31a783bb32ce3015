/* t_execveat: execveat relative to a directory descriptor, on a descriptor itself with
 * AT_EMPTY_PATH, and its errors (EBADF, ENOTDIR, ENOENT, ELOOP with AT_SYMLINK_NOFOLLOW,
 * EINVAL for unknown flags). The exec'd program's status and output come back via wait. */
#include "check.h"

#include <fcntl.h>
#include <sys/wait.h>

static char *const args[] = {"true", NULL};
static char *const env[] = {NULL};

/* Runs execveat in a child; returns the child's exit status, or 100 + errno if it failed. */
static int run(int dirfd, const char *path, int flags)
{
	int st;
	pid_t p = fork();

	if (p == 0) {
		syscall(SYS_execveat, dirfd, path, args, env, flags);
		_exit(100 + errno);
	}
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

int main(void)
{
	int bin = open("/bin", O_RDONLY | O_DIRECTORY);
	int busybox = open("/bin/busybox", O_RDONLY);
	int file = open("/etc/passwd", O_RDONLY);

	CHECK(bin >= 0 && busybox >= 0 && file >= 0);
	CHECK_EQ(run(bin, "true", 0), 0);
	CHECK_EQ(run(AT_FDCWD, "/bin/true", 0), 0);
	CHECK_EQ(run(bin, "/bin/true", 0), 0); /* absolute paths ignore the descriptor */
	CHECK_EQ(run(busybox, "", AT_EMPTY_PATH), 0);
	maybe_save();
	CHECK_EQ(run(busybox, "", 0), 100 + ENOENT);
	CHECK_EQ(run(bin, "no-such-program", 0), 100 + ENOENT);
	CHECK_EQ(run(file, "true", 0), 100 + ENOTDIR);
	CHECK_EQ(run(-1, "true", 0), 100 + EBADF);
	CHECK_EQ(run(bin, "true", 0x40000), 100 + EINVAL);
	/* /bin/true is a symlink to busybox in this rootfs. */
	CHECK_EQ(run(bin, "true", AT_SYMLINK_NOFOLLOW), 100 + ELOOP);
	return check_done();
}
