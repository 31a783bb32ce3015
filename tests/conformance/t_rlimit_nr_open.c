/*
 * t_rlimit_nr_open: /proc/sys/fs/nr_open bounds RLIMIT_NOFILE's hard limit, for root too
 * (EPERM past it); lowering it (in the sandbox only: natively it is the host's) bounds later
 * setrlimit calls and survives a checkpoint; values below 64 are EINVAL.
 */
#include "check.h"
#include <fcntl.h>
#include <sys/resource.h>

static long read_nr_open(void)
{
	char buf[32] = "";
	int fd = open("/proc/sys/fs/nr_open", O_RDONLY);

	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

static int write_nr_open(const char *v)
{
	int fd = open("/proc/sys/fs/nr_open", O_WRONLY);

	if (fd < 0)
		return -1;
	ssize_t n = write(fd, v, strlen(v));
	int err = errno;
	close(fd);
	errno = err;
	return n < 0 ? -1 : 0;
}

int main(void)
{
	struct rlimit orig, lim;
	long nr_open = read_nr_open();

	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &orig), 0);
	if (nr_open < 0) {
		CHECK(!in_sandbox()); /* natively in a chroot without /proc */
		maybe_save();
		return check_done();
	}
	lim.rlim_cur = orig.rlim_cur;
	lim.rlim_max = (rlim_t)nr_open + 1;
	CHECK_ERR(setrlimit(RLIMIT_NOFILE, &lim), EPERM);
	lim.rlim_max = nr_open;
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &lim), 0);
	if (in_sandbox()) {
		CHECK_ERR(write_nr_open("63\n"), EINVAL);
		CHECK_EQ(write_nr_open("4096\n"), 0);
		maybe_save();
		CHECK_EQ(read_nr_open(), 4096);
		lim.rlim_cur = 1024;
		lim.rlim_max = 4097;
		CHECK_ERR(setrlimit(RLIMIT_NOFILE, &lim), EPERM);
		lim.rlim_max = 4096;
		CHECK_EQ(setrlimit(RLIMIT_NOFILE, &lim), 0);
	} else {
		maybe_save();
	}
	return check_done();
}
