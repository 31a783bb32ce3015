/*
 * t_rlimit: resource limits through prlimit64, getrlimit and setrlimit: all three views
 * agree, a lowered soft limit reads back (and RLIMIT_NOFILE is enforced with EMFILE), the soft
 * limit cannot exceed the hard one, unknown resources are EINVAL and other pids ESRCH.
 */
#include "check.h"
#include <fcntl.h>
#include <sys/resource.h>

static long prlimit_raw(int pid, int res, const struct rlimit *new, struct rlimit *old)
{
	return syscall(SYS_prlimit64, pid, res, new, old);
}

static void check_consistent(int res)
{
	struct rlimit a, b, c;

	CHECK_EQ(prlimit_raw(0, res, NULL, &a), 0);
	CHECK_EQ(syscall(SYS_getrlimit, res, &b), 0);
	CHECK_EQ(getrlimit(res, &c), 0);
	CHECK_EQ(a.rlim_cur, b.rlim_cur);
	CHECK_EQ(a.rlim_max, b.rlim_max);
	CHECK_EQ(a.rlim_cur, c.rlim_cur);
	CHECK_EQ(a.rlim_max, c.rlim_max);
	CHECK(a.rlim_cur <= a.rlim_max);
}

int main(void)
{
	struct rlimit orig, lim, old;
	int res[] = {RLIMIT_NOFILE, RLIMIT_STACK, RLIMIT_AS, RLIMIT_CORE, RLIMIT_NPROC};

	for (size_t i = 0; i < sizeof(res) / sizeof(res[0]); i++)
		check_consistent(res[i]);

	/* RLIMIT_NOFILE: lower the soft limit to 10, and fds 10 and up cannot be opened. */
	CHECK_EQ(prlimit_raw(0, RLIMIT_NOFILE, NULL, &orig), 0);
	CHECK(orig.rlim_cur >= 10);
	lim.rlim_cur = 10;
	lim.rlim_max = orig.rlim_max;
	CHECK_EQ(prlimit_raw(0, RLIMIT_NOFILE, &lim, &old), 0);
	CHECK_EQ(old.rlim_cur, orig.rlim_cur);
	CHECK_EQ(old.rlim_max, orig.rlim_max);
	CHECK_EQ(syscall(SYS_getrlimit, RLIMIT_NOFILE, &old), 0);
	CHECK_EQ(old.rlim_cur, 10);
	check_consistent(RLIMIT_NOFILE);
	maybe_save();
	CHECK_EQ(syscall(SYS_getrlimit, RLIMIT_NOFILE, &old), 0);
	CHECK_EQ(old.rlim_cur, 10);

	int fds[16], n = 0, fd;
	while (n < 16 && (fd = open("/etc/passwd", O_RDONLY)) >= 0) {
		CHECK(fd < 10);
		fds[n++] = fd;
	}
	CHECK(n < 16);
	CHECK_ERR(open("/etc/passwd", O_RDONLY), EMFILE);
	while (n > 0)
		close(fds[--n]);

	/* Back up to the original soft limit through setrlimit(2). */
	CHECK_EQ(syscall(SYS_setrlimit, RLIMIT_NOFILE, &orig), 0);
	check_consistent(RLIMIT_NOFILE);
	CHECK_EQ(prlimit_raw(0, RLIMIT_NOFILE, NULL, &old), 0);
	CHECK_EQ(old.rlim_cur, orig.rlim_cur);

	/* RLIMIT_STACK: lower the soft limit to 4 MiB (or less) and read it back. */
	CHECK_EQ(getrlimit(RLIMIT_STACK, &orig), 0);
	lim = orig;
	if (lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur > 4 << 20)
		lim.rlim_cur = 4 << 20;
	if (lim.rlim_cur > lim.rlim_max)
		lim.rlim_cur = lim.rlim_max;
	CHECK_EQ(setrlimit(RLIMIT_STACK, &lim), 0);
	CHECK_EQ(prlimit_raw(0, RLIMIT_STACK, NULL, &old), 0);
	CHECK_EQ(old.rlim_cur, lim.rlim_cur);
	CHECK_EQ(old.rlim_max, orig.rlim_max);
	check_consistent(RLIMIT_STACK);

	/* Soft above hard is EINVAL and changes nothing. */
	CHECK_EQ(prlimit_raw(0, RLIMIT_NOFILE, NULL, &orig), 0);
	lim.rlim_max = 64;
	lim.rlim_cur = 65;
	CHECK_ERR(prlimit_raw(0, RLIMIT_NOFILE, &lim, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_setrlimit, RLIMIT_NOFILE, &lim), EINVAL);
	CHECK_EQ(prlimit_raw(0, RLIMIT_NOFILE, NULL, &old), 0);
	CHECK_EQ(old.rlim_cur, orig.rlim_cur);
	CHECK_EQ(old.rlim_max, orig.rlim_max);

	/* Our own pid is the same as 0. */
	CHECK_EQ(prlimit_raw(getpid(), RLIMIT_NOFILE, NULL, &old), 0);
	CHECK_EQ(old.rlim_cur, orig.rlim_cur);

	CHECK_ERR(prlimit_raw(0, 1000, NULL, &old), EINVAL);
	CHECK_ERR(syscall(SYS_getrlimit, 1000, &old), EINVAL);
	CHECK_ERR(syscall(SYS_getrlimit, RLIMIT_NOFILE, BAD_PTR), EFAULT);
	CHECK_ERR(prlimit_raw(0, RLIMIT_NOFILE, BAD_PTR, NULL), EFAULT);
	CHECK_ERR(prlimit_raw(0x3fffffff, RLIMIT_NOFILE, NULL, &old), ESRCH);
	return check_done();
}
