/* t_proc_oom: /proc/PID/oom_score_adj keeps what is written (-1000..1000, EINVAL outside),
 * /proc/PID/oom_adj shows the same value on Linux's older -17..15 scale and writes through to
 * it, and a child inherits its parent's value. (Values below 0 need CAP_SYS_RESOURCE, which
 * root may lack natively, as on the machines this runs on: only 0..1000 are written.)
 * conformance: native-proc */
#include "check.h"

#include <fcntl.h>
#include <sys/wait.h>

static int read_int(const char *path)
{
	char buf[32] = {0};
	int fd = open(path, O_RDONLY);

	CHECK(fd >= 0);
	if (fd < 0)
		return -99999;
	CHECK(read(fd, buf, sizeof(buf) - 1) > 0);
	close(fd);
	return atoi(buf);
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, s, strlen(s));
	int err = n < 0 ? -errno : 0;
	close(fd);
	return err;
}

int main(void)
{
	const char *adj = "/proc/self/oom_score_adj", *old = "/proc/self/oom_adj";

	CHECK_EQ(write_str(adj, "500\n"), 0);
	CHECK_EQ(read_int(adj), 500);
	CHECK_EQ(read_int(old), 8); /* 500 * 17 / 1000 */
	CHECK_EQ(write_str(adj, "1001"), -EINVAL);
	CHECK_EQ(write_str(adj, "-1001"), -EINVAL);
	CHECK_EQ(write_str(adj, "abc"), -EINVAL);
	CHECK_EQ(read_int(adj), 500);

	pid_t pid = fork();
	if (pid == 0)
		_exit(read_int("/proc/self/oom_score_adj") == 500 ? 0 : 1);
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* oom_adj only ever raises the value here: lowering it through the old interface needs
	 * CAP_SYS_RESOURCE even down to 0. */
	CHECK_EQ(write_str(adj, "0"), 0);
	CHECK_EQ(write_str(old, "4"), 0);
	CHECK_EQ(read_int(adj), 235); /* 4 * 1000 / 17 */
	CHECK_EQ(read_int(old), 3);   /* 235 * 17 / 1000 */
	CHECK_EQ(write_str(old, "16"), -EINVAL);
	maybe_save();
	CHECK_EQ(read_int(adj), 235);
	CHECK_EQ(write_str(old, "15"), 0);
	CHECK_EQ(read_int(adj), 1000);
	CHECK_EQ(read_int(old), 15);
	CHECK_EQ(write_str(adj, "0"), 0);
	CHECK_EQ(read_int(old), 0);
	return check_done();
}
