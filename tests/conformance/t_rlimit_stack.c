/*
 * t_rlimit_stack: RLIMIT_STACK at exec sizes the main thread's stack as Linux does: a
 * program run under a 32 MiB limit can recurse through 24 MiB of stack, and one run under a
 * 1 MiB limit dies of SIGSEGV when it goes 2 MiB deep.
 */
#include "check.h"
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define MB (1UL << 20)

/* Uses about DEPTH pages of stack. */
static int recurse(unsigned long depth)
{
	volatile char page[4096];

	page[0] = (char)depth;
	page[4095] = (char)depth;
	if (depth == 0)
		return page[0];
	return recurse(depth - 1) + page[4095];
}

/* Runs this program again under a stack limit of LIMIT, using USE bytes of stack; its wait
 * status. */
static int run_with(const char *self, unsigned long limit, unsigned long use)
{
	char arg[32];
	int status;

	snprintf(arg, sizeof(arg), "%lu", use / 4096);
	pid_t pid = fork();
	if (pid == 0) {
		struct rlimit lim = {limit, RLIM_INFINITY};
		if (setrlimit(RLIMIT_STACK, &lim))
			_exit(10);
		execl(self, self, "probe", arg, (char *)NULL);
		_exit(11);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "probe") == 0) {
		recurse(strtoul(argv[2], NULL, 10));
		return 0;
	}
	struct rlimit lim;
	CHECK_EQ(getrlimit(RLIMIT_STACK, &lim), 0);
	CHECK(lim.rlim_max == RLIM_INFINITY || lim.rlim_max >= 32 * MB);
	maybe_save();

	int status = run_with(argv[0], 32 * MB, 24 * MB);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);

	status = run_with(argv[0], 1 * MB, 2 * MB);
	CHECK(WIFSIGNALED(status));
	CHECK_EQ(WTERMSIG(status), SIGSEGV);

	status = run_with(argv[0], 1 * MB, 512 * 1024);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	return check_done();
}
