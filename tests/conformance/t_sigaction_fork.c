/*
 * t_sigaction_fork: after fork, parent and child have signal actions of their own. The child
 * starts with the parent's; an action either changes afterwards (sigaction, or SA_RESETHAND
 * as a handler runs) is not seen by the other; a checkpoint taken while neither has changed
 * anything keeps both sets. (minisentry shares the table until one side changes it.)
 */
#include "check.h"
#include <signal.h>
#include <sys/wait.h>

static volatile sig_atomic_t hits;

static void on_usr1(int sig)
{
	(void)sig;
	hits++;
}

static void on_usr2(int sig)
{
	(void)sig;
}

static void set_action(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	CHECK_EQ(sigaction(sig, &sa, NULL), 0);
}

static void *handler_of(int sig)
{
	struct sigaction sa;

	CHECK_EQ(sigaction(sig, NULL, &sa), 0);
	return (void *)sa.sa_handler;
}

/* The child's checks, its exit status the number of failures. GO says when the parent has
 * changed its own actions; DONE tells the parent the child has changed its. */
static int child(int go, int done)
{
	char c;

	CHECK_EQ(handler_of(SIGUSR1), (void *)on_usr1);
	CHECK_EQ(handler_of(SIGUSR2), (void *)on_usr2);
	CHECK_EQ(handler_of(SIGHUP), (void *)SIG_IGN);
	CHECK_EQ(read(go, &c, 1), 1);
	/* The parent set SIGUSR2 to SIG_IGN and SIGHUP to SIG_DFL: not here. */
	CHECK_EQ(handler_of(SIGUSR2), (void *)on_usr2);
	CHECK_EQ(handler_of(SIGHUP), (void *)SIG_IGN);
	/* SA_RESETHAND: one handler run, then the default, here only. */
	CHECK_EQ(raise(SIGUSR1), 0);
	CHECK_EQ(hits, 1);
	CHECK_EQ(handler_of(SIGUSR1), (void *)SIG_DFL);
	set_action(SIGTERM, SIG_IGN, 0);
	CHECK_EQ(write(done, "x", 1), 1);
	CHECK_EQ(read(go, &c, 1), 1);
	return check_failures;
}

int main(void)
{
	int to_child[2], to_parent[2], status;
	char c;

	set_action(SIGUSR1, on_usr1, SA_RESETHAND);
	set_action(SIGUSR2, on_usr2, SA_RESTART);
	set_action(SIGHUP, SIG_IGN, 0);
	CHECK_EQ(pipe(to_child), 0);
	CHECK_EQ(pipe(to_parent), 0);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(child(to_child[0], to_parent[1]));
	maybe_save();
	CHECK_EQ(handler_of(SIGUSR1), (void *)on_usr1);
	set_action(SIGUSR2, SIG_IGN, 0);
	set_action(SIGHUP, SIG_DFL, 0);
	CHECK_EQ(write(to_child[1], "x", 1), 1);
	CHECK_EQ(read(to_parent[0], &c, 1), 1);
	/* The child's SA_RESETHAND and its SIGTERM left the parent's actions as they were. */
	CHECK_EQ(handler_of(SIGUSR1), (void *)on_usr1);
	CHECK_EQ(handler_of(SIGTERM), (void *)SIG_DFL);
	CHECK_EQ(handler_of(SIGUSR2), (void *)SIG_IGN);
	CHECK_EQ(raise(SIGUSR1), 0);
	CHECK_EQ(hits, 1);
	CHECK_EQ(handler_of(SIGUSR1), (void *)SIG_DFL);
	CHECK_EQ(write(to_child[1], "x", 1), 1);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	return check_done();
}
