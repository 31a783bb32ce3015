/*
 * t_rlimit_nproc: RLIMIT_NPROC bounds the tasks of a non-root real user: with the limit at
 * 3, a user with one process can fork twice and the third fork is EAGAIN;
 * a reaped child makes room again; root is not bound by it.
 */
#include "check.h"
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define UID 54321 /* a user with no other process, here or on the host */

static pid_t sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

static int child(void)
{
	struct rlimit lim = {3, 3};

	if (setresuid(UID, UID, UID) != 0)
		return 10;
	if (setrlimit(RLIMIT_NPROC, &lim) != 0)
		return 11;
	pid_t a = sleeper(), b = sleeper();
	if (a <= 0 || b <= 0)
		return 12;
	maybe_save();
	errno = 0;
	if (fork() != -1 || errno != EAGAIN)
		return 13;
	kill(a, SIGKILL);
	if (waitpid(a, NULL, 0) != a)
		return 14;
	pid_t c = sleeper();
	if (c <= 0)
		return 15;
	kill(b, SIGKILL);
	kill(c, SIGKILL);
	waitpid(b, NULL, 0);
	waitpid(c, NULL, 0);
	return 0;
}

int main(void)
{
	struct rlimit lim = {1, 1}, orig;

	/* Natively without real root (unshare -r) there is no other uid to become. */
	if (getuid() != 0 || setresuid(-1, -1, -1) != 0)
		return check_done();
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(child());
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 10 && !in_sandbox())
		return check_done(); /* unshare -r maps only root */
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);

	/* Root forks past its own limit. */
	CHECK_EQ(getrlimit(RLIMIT_NPROC, &orig), 0);
	lim.rlim_max = orig.rlim_max;
	CHECK_EQ(setrlimit(RLIMIT_NPROC, &lim), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(setrlimit(RLIMIT_NPROC, &orig), 0);
	return check_done();
}
