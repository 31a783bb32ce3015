/*
 * t_cwd: chdir and getcwd: the raw getcwd returns the length including the NUL, chdir("/etc")
 * makes relative opens work there, ".." from "/" stays at "/", "." and ".." components are
 * resolved; chdir to a file is ENOTDIR, to a missing name ENOENT; a short buffer is ERANGE.
 */
#include "check.h"
#include <fcntl.h>

static void check_cwd(const char *want)
{
	char buf[4096];

	memset(buf, 'X', sizeof(buf));
	long n = syscall(SYS_getcwd, buf, sizeof(buf));
	CHECK_EQ(n, strlen(want) + 1);
	CHECK_STREQ(buf, want);
	CHECK_STREQ(getcwd(buf, sizeof(buf)), want);
}

int main(void)
{
	char buf[4096];

	CHECK(syscall(SYS_getcwd, buf, sizeof(buf)) > 0);
	CHECK_EQ(buf[0], '/');

	CHECK_EQ(syscall(SYS_chdir, "/"), 0);
	check_cwd("/");
	CHECK_EQ(syscall(SYS_chdir, ".."), 0);
	check_cwd("/");
	CHECK_EQ(syscall(SYS_chdir, "/etc"), 0);
	check_cwd("/etc");

	/* Relative paths now resolve from /etc. */
	int fd = open("passwd", O_RDONLY);
	CHECK(fd >= 0);
	char head[5];
	CHECK_EQ(read(fd, head, 5), 5);
	CHECK(memcmp(head, "root:", 5) == 0);
	close(fd);
	CHECK_EQ(access("./group", F_OK), 0);
	CHECK_EQ(access("../etc/hostname", F_OK), 0);

	maybe_save();
	check_cwd("/etc");
	CHECK_EQ(access("passwd", R_OK), 0);

	CHECK_EQ(syscall(SYS_chdir, "../bin/./"), 0);
	check_cwd("/bin");
	CHECK_EQ(syscall(SYS_chdir, "/../../etc/../bin/.."), 0);
	check_cwd("/");
	CHECK_EQ(syscall(SYS_chdir, "//etc//"), 0);
	check_cwd("/etc");
	CHECK_EQ(chdir(".."), 0);
	check_cwd("/");
	CHECK_EQ(chdir("etc"), 0);
	check_cwd("/etc");

	/* Failures leave the cwd alone. */
	CHECK_ERR(syscall(SYS_chdir, "passwd"), ENOTDIR);
	CHECK_ERR(syscall(SYS_chdir, "/etc/passwd"), ENOTDIR);
	CHECK_ERR(syscall(SYS_chdir, "/etc/passwd/"), ENOTDIR);
	CHECK_ERR(syscall(SYS_chdir, "/nonexistent"), ENOENT);
	CHECK_ERR(syscall(SYS_chdir, ""), ENOENT);
	CHECK_ERR(syscall(SYS_chdir, BAD_PTR), EFAULT);
	check_cwd("/etc");

	/* getcwd: "/etc" needs 5 bytes. */
	CHECK_ERR(syscall(SYS_getcwd, buf, 4), ERANGE);
	CHECK_ERR(syscall(SYS_getcwd, buf, 1), ERANGE);
	CHECK_EQ(syscall(SYS_getcwd, buf, 5), 5);
	CHECK_STREQ(buf, "/etc");
	CHECK_ERR(syscall(SYS_getcwd, BAD_PTR, 4096), EFAULT);
	return check_done();
}
