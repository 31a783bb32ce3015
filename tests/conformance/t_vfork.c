/*
 * t_vfork: vfork's child borrows the parent's memory (its writes are the parent's) and the
 * parent stays suspended until the child _exits or execs; posix_spawn (a CLONE_VM|CLONE_VFORK
 * clone in both libcs) runs programs, applies file actions and reports exec failure. A pipe a
 * spawned program wrote into and an ignored signal it inherits survive a checkpoint and
 * restore (taken in the parent: a vfork child that has not exec'd yet refuses one).
 */
#include "check.h"
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

/* Globals, not locals: a vfork child shares the parent's stack frame too. */
static volatile int shared_flag;
static volatile int child_errno;
static volatile pid_t child_pid_seen;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void test_vfork_shares_memory_and_suspends_parent(void)
{
	int status;

	shared_flag = 0;
	long long start = now_ms();
	pid_t pid = vfork();
	if (pid == 0) {
		/* The parent must not run while we sleep: it would see shared_flag == 0. */
		struct timespec delay = {0, 100 * 1000 * 1000};
		syscall(SYS_nanosleep, &delay, NULL);
		child_pid_seen = (pid_t)syscall(SYS_getpid);
		shared_flag = 1;
		_exit(7);
	}
	CHECK(pid > 0);
	CHECK_EQ(shared_flag, 1);
	CHECK_EQ(child_pid_seen, pid);
	CHECK(now_ms() - start >= 100);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 7);
}

static void test_vfork_exec_resumes_parent(void)
{
	int status;

	shared_flag = 0;
	pid_t pid = vfork();
	if (pid == 0) {
		char *argv[] = {"true", NULL};
		shared_flag = 1;
		execve("/bin/true", argv, environ);
		_exit(127);
	}
	CHECK(pid > 0);
	CHECK_EQ(shared_flag, 1);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);

	/* A failed exec leaves the child running on our memory; it reports errno there. */
	child_errno = 0;
	pid = vfork();
	if (pid == 0) {
		char *argv[] = {"missing", NULL};
		execve("/no/such/program", argv, environ);
		child_errno = errno;
		_exit(127);
	}
	CHECK(pid > 0);
	CHECK_EQ(child_errno, ENOENT);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(WEXITSTATUS(status), 127);
}

static void test_posix_spawn(void)
{
	pid_t pid = -1;
	int status;
	char *true_argv[] = {"true", NULL};
	char *false_argv[] = {"false", NULL};

	CHECK_EQ(posix_spawn(&pid, "/bin/true", NULL, NULL, true_argv, environ), 0);
	CHECK(pid > 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);

	CHECK_EQ(posix_spawn(&pid, "/bin/false", NULL, NULL, false_argv, environ), 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 1);

	/* posix_spawnp searches PATH. */
	CHECK_EQ(posix_spawnp(&pid, "true", NULL, NULL, true_argv, environ), 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);

	/* File actions: the child's stdout is our pipe. */
	int p[2];
	CHECK_EQ(pipe(p), 0);
	posix_spawn_file_actions_t fa;
	CHECK_EQ(posix_spawn_file_actions_init(&fa), 0);
	CHECK_EQ(posix_spawn_file_actions_adddup2(&fa, p[1], 1), 0);
	CHECK_EQ(posix_spawn_file_actions_addclose(&fa, p[0]), 0);
	char *echo_argv[] = {"echo", "spawned", "ok", NULL};
	CHECK_EQ(posix_spawn(&pid, "/bin/echo", &fa, NULL, echo_argv, environ), 0);
	CHECK_EQ(posix_spawn_file_actions_destroy(&fa), 0);
	close(p[1]);
	maybe_save(); /* a spawned child running or a zombie, its output in our pipe */
	char buf[64];
	ssize_t n = 0, r;
	while (n < (ssize_t)sizeof(buf) && (r = read(p[0], buf + n, sizeof(buf) - n)) > 0)
		n += r;
	close(p[0]);
	CHECK_EQ(n, 11);
	CHECK(n == 11 && memcmp(buf, "spawned ok\n", 11) == 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);

	/* Attributes: a signal ignored here is reset to default in the child. */
	posix_spawnattr_t attr;
	sigset_t def;
	sigemptyset(&def);
	sigaddset(&def, SIGTERM);
	signal(SIGTERM, SIG_IGN);
	maybe_save(); /* an ignored signal, which the next spawn inherits */
	CHECK_EQ(posix_spawnattr_init(&attr), 0);
	CHECK_EQ(posix_spawnattr_setsigdefault(&attr, &def), 0);
	CHECK_EQ(posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF), 0);
	char *sh_argv[] = {"sh", "-c", "kill -TERM $$; exit 3", NULL};
	CHECK_EQ(posix_spawn(&pid, "/bin/sh", NULL, &attr, sh_argv, environ), 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status));
	CHECK_EQ(WTERMSIG(status), SIGTERM);
	/* Without the attribute, the ignored disposition survives the exec. */
	CHECK_EQ(posix_spawn(&pid, "/bin/sh", NULL, NULL, sh_argv, environ), 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 3);
	CHECK_EQ(posix_spawnattr_destroy(&attr), 0);
	signal(SIGTERM, SIG_DFL);

	/* Exec failure is the return value; no child is left to reap. */
	char *missing_argv[] = {"missing", NULL};
	int err = posix_spawn(&pid, "/no/such/program", NULL, NULL, missing_argv, environ);
	CHECK_EQ(err, ENOENT);
	/*
	 * glibc reaps the failed child itself; musl leaves nothing either. Either way there is
	 * nothing waitable.
	 */
	CHECK_ERR(waitpid(-1, &status, WNOHANG), ECHILD);
}

int main(void)
{
	test_vfork_shares_memory_and_suspends_parent();
	test_vfork_exec_resumes_parent();
	test_posix_spawn();
	return check_done();
}
