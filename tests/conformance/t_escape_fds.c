/*
 * t_escape_fds: the escape corpus's descriptor probing. No Sentry or host descriptor is visible
 * to a guest at any number: what fcntl(F_GETFD) finds open over the whole range a process may
 * use (and at the largest numbers) is exactly what /proc/self/fd lists, natively and in the
 * sandbox; in the sandbox that is the three stdio descriptors and nothing else, before and
 * after a checkpoint and an exec.
 * conformance: native-proc
 */
#include "check.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>

/* Open descriptors below LIMIT found by probing, as a bitmap in SEEN; their
 * count. */
static int probe(unsigned char *seen, int limit)
{
	int n = 0;

	for (int fd = 0; fd < limit; fd++) {
		errno = 0;
		int r = fcntl(fd, F_GETFD);
		if (r >= 0) {
			seen[fd / 8] |= 1 << (fd % 8);
			n++;
		} else {
			CHECK_EQ(errno, EBADF);
		}
	}
	return n;
}

static int listed(unsigned char *seen, int limit)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0, self = d ? dirfd(d) : -1;

	CHECK(d != NULL);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		int fd = atoi(de->d_name);
		if (fd == self)
			continue;
		CHECK(fd < limit);
		if (fd < limit)
			CHECK(seen[fd / 8] & (1 << (fd % 8)));
		n++;
	}
	if (d)
		closedir(d);
	return n;
}

static int check_table(void)
{
	struct rlimit rl;
	int limit;

	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
	limit = rl.rlim_cur > 65536 ? 65536 : (int)rl.rlim_cur;
	unsigned char *seen = calloc(limit / 8 + 1, 1);
	int n = probe(seen, limit);
	CHECK_EQ(listed(seen, limit), n);
	/* The numbers a host descriptor would most likely sit at, beyond the soft
	 * limit too. */
	int high[] = {limit - 1, limit, 65535, 1 << 20, (1 << 20) - 1, 0x7fffffff};
	for (unsigned i = 0; i < sizeof(high) / sizeof(high[0]); i++)
		if (high[i] >= limit)
			CHECK_ERR(fcntl(high[i], F_GETFD), EBADF);
	if (in_sandbox()) {
		CHECK_EQ(n, 3);
		for (int fd = 0; fd < 3; fd++)
			CHECK(seen[0] & (1 << fd));
	}
	free(seen);
	return n;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "child")) {
		check_table();
		return check_failures ? 1 : 0; /* the parent reports */
	}
	check_table();
	maybe_save();
	check_table();
	/* After an exec, with nothing new open. */
	pid_t pid = fork();
	if (pid == 0) {
		execl(argv[0], argv[0], "child", (char *)NULL);
		_exit(127);
	}
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return check_done();
}
