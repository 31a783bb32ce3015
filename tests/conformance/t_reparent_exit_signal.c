/*
 * t_reparent_exit_signal: a child's exit signal is its parent's choice (clone's CSIGNAL), but
 * an orphan's is reset to SIGCHLD when it is reparented, so that nobody can make a child that
 * sends SIGKILL (or anything else) to init or a subreaper when it dies. This test is the
 * subreaper: a middle process makes a grandchild with exit signal SIGUSR1 and dies; when the
 * grandchild dies, this process must get SIGCHLD, never SIGUSR1, and can reap it without
 * __WCLONE.
 */
#include "check.h"
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

static volatile sig_atomic_t got_chld, got_usr1;

static void on_signal(int sig)
{
	if (sig == SIGCHLD)
		got_chld++;
	else if (sig == SIGUSR1)
		got_usr1++;
}

static void nap(long ms)
{
	struct timespec d = {ms / 1000, (ms % 1000) * 1000000};
	nanosleep(&d, NULL);
}

int main(void)
{
	struct sigaction sa = {.sa_handler = on_signal};
	int pfd[2], go[2], status;
	pid_t me = getpid(), grandchild = 0;

	CHECK_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	CHECK_EQ(sigaction(SIGCHLD, &sa, NULL), 0);
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	CHECK_EQ(pipe(pfd), 0);
	CHECK_EQ(pipe(go), 0);

	pid_t middle = fork();
	if (middle == 0) {
		/* A fork-like clone whose exit signal is SIGUSR1. */
		long gc = syscall(SYS_clone, (unsigned long)SIGUSR1, 0, 0, 0, 0);
		if (gc == 0) {
			char c;
			close(go[1]);
			/* Dies only when told, so that its SIGCHLD is the only one to come. */
			_exit(read(go[0], &c, 1) == 1 && getppid() == me ? 0 : 3);
		}
		if (gc > 0)
			(void)!write(pfd[1], &gc, sizeof(gc));
		_exit(gc > 0 ? 0 : 1);
	}
	CHECK(middle > 0);
	close(pfd[1]);
	close(go[0]);
	long gc = 0;
	CHECK_EQ(read(pfd[0], &gc, sizeof(gc)), (long)sizeof(gc));
	grandchild = (pid_t)gc;
	CHECK_EQ(waitpid(middle, &status, 0), middle);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	maybe_save(); /* the orphan is ours now, with its exit signal already reset */

	got_chld = 0;
	CHECK_EQ(write(go[1], "x", 1), 1);
	/* Reparented, the grandchild is an ordinary child: found without __WCLONE. */
	CHECK_EQ(waitpid(grandchild, &status, 0), grandchild);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	for (int i = 0; i < 100 && !got_chld; i++)
		nap(5);
	CHECK(got_chld > 0);
	CHECK_EQ(got_usr1, 0);
	return check_done();
}
