/*
 * t_zombie_reparent: process lifetime around exit. A dead child stays a zombie (still
 * signalable with 0) until reaped, also after a WNOWAIT peek; with SIGCHLD ignored children
 * are reaped by the kernel and wait blocks until they are gone, then fails ECHILD. An orphan
 * is reparented to the nearest child subreaper (this test), which can then wait for it, and a
 * PR_SET_PDEATHSIG orphan gets its signal when its parent dies.
 */
#include "check.h"
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

static void test_zombie_until_reaped(void)
{
	int status;
	siginfo_t si;

	pid_t pid = fork();
	if (pid == 0)
		_exit(4);
	CHECK(pid > 0);
	/* Wait for the exit without reaping; the zombie still "exists" for kill. */
	memset(&si, 0, sizeof(si));
	CHECK_EQ(waitid(P_PID, pid, &si, WEXITED | WNOWAIT), 0);
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_status, 4);
	CHECK_EQ(kill(pid, 0), 0);
	CHECK_EQ(kill(pid, SIGKILL), 0); /* signalling a zombie succeeds and changes nothing */
	maybe_save();			 /* a zombie not yet reaped */
	CHECK_EQ(getpgid(pid), getpgid(0));
	/* A second peek sees the same exit. */
	memset(&si, 0, sizeof(si));
	CHECK_EQ(waitid(P_PID, pid, &si, WEXITED | WNOWAIT | WNOHANG), 0);
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_code, CLD_EXITED);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 4);
	/* Reaped: gone. */
	CHECK_ERR(kill(pid, 0), ESRCH);
	CHECK_ERR(getpgid(pid), ESRCH);
}

static void test_sigchld_ignored_autoreaps(void)
{
	struct sigaction ign = {.sa_handler = SIG_IGN}, old;
	int status;

	CHECK_EQ(sigaction(SIGCHLD, &ign, &old), 0);
	pid_t pid = fork();
	if (pid == 0) {
		struct timespec d = {0, 50 * 1000 * 1000};
		nanosleep(&d, NULL);
		_exit(0);
	}
	CHECK(pid > 0);
	/* Blocks until the child has exited, then finds nothing to reap. */
	CHECK_ERR(waitpid(pid, &status, 0), ECHILD);
	CHECK_ERR(kill(pid, 0), ESRCH);

	/* SA_NOCLDWAIT with a default handler does the same. */
	struct sigaction nocldwait = {.sa_handler = SIG_DFL, .sa_flags = SA_NOCLDWAIT};
	CHECK_EQ(sigaction(SIGCHLD, &nocldwait, NULL), 0);
	pid = fork();
	if (pid == 0)
		_exit(0);
	CHECK(pid > 0);
	CHECK_ERR(wait(&status), ECHILD);
	CHECK_ERR(kill(pid, 0), ESRCH);
	CHECK_EQ(sigaction(SIGCHLD, &old, NULL), 0);
}

static ssize_t read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);
		if (n <= 0)
			return n < 0 ? n : (ssize_t)got;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

static void test_orphan_reparented_to_subreaper(void)
{
	int report[2], go[2], status;
	pid_t self = getpid();

	CHECK_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	int on = -1;
	CHECK_EQ(prctl(PR_GET_CHILD_SUBREAPER, &on, 0, 0, 0), 0);
	CHECK_EQ(on, 1);

	CHECK_EQ(pipe(report), 0);
	CHECK_EQ(pipe(go), 0);
	pid_t middle = fork();
	if (middle == 0) {
		int ready[2];
		if (pipe(ready) != 0)
			_exit(103);
		pid_t grandchild = fork();
		if (grandchild == 0) {
			/* Our parent is still alive: it waits for this report before exiting. */
			pid_t first_parent = getppid();
			char c;
			close(go[1]);
			if (write(ready[1], &first_parent, sizeof(first_parent)) < 0)
				_exit(104);
			/* Wait until the middle process is dead and reaped. */
			if (read(go[0], &c, 1) != 1)
				_exit(100);
			pid_t now_parent = getppid();
			if (write(report[1], &now_parent, sizeof(now_parent)) < 0)
				_exit(101);
			_exit(7);
		}
		pid_t ids[2] = {grandchild, 0};
		if (read_full(ready[0], &ids[1], sizeof(ids[1])) != sizeof(ids[1]))
			_exit(105);
		if (write(report[1], ids, sizeof(ids)) != sizeof(ids))
			_exit(102);
		_exit(0);
	}
	CHECK(middle > 0);
	close(report[1]);
	close(go[0]);
	pid_t ids[2] = {0, 0};
	CHECK_EQ(read_full(report[0], ids, sizeof(ids)), sizeof(ids));
	pid_t grandchild = ids[0];
	CHECK_EQ(ids[1], middle); /* the grandchild's parent before the middle exited */
	CHECK_EQ(waitpid(middle, &status, 0), middle);
	CHECK_EQ(status, 0);
	/* Reparenting happened before the middle process became waitable. */
	maybe_save(); /* an orphan blocked on a pipe */
	CHECK_EQ(kill(grandchild, 0), 0);
	CHECK_EQ(write(go[1], "g", 1), 1);
	pid_t now_parent = 0;
	CHECK_EQ(read_full(report[0], &now_parent, sizeof(now_parent)), sizeof(now_parent));
	CHECK_EQ(now_parent, self);
	CHECK_EQ(waitpid(grandchild, &status, 0), grandchild);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 7);
	CHECK_ERR(wait(&status), ECHILD);
	close(report[0]);
	close(go[1]);
}

static void test_pdeathsig(void)
{
	int report[2], hold[2], status;

	CHECK_EQ(pipe(report), 0);
	CHECK_EQ(pipe(hold), 0);
	pid_t middle = fork();
	if (middle == 0) {
		pid_t grandchild = fork();
		if (grandchild == 0) {
			char c;
			close(hold[1]);
			if (prctl(PR_SET_PDEATHSIG, SIGUSR1, 0, 0, 0) != 0)
				_exit(100);
			int sig = 0;
			if (prctl(PR_GET_PDEATHSIG, &sig, 0, 0, 0) != 0 || sig != SIGUSR1)
				_exit(101);
			/* Tell the parent we are armed, then block until killed. */
			if (write(report[1], "a", 1) != 1)
				_exit(102);
			(void)read(hold[0], &c, 1);
			_exit(103);
		}
		char armed;
		close(hold[1]);
		/* Exit only once the grandchild has armed its death signal. */
		if (read_full(report[0], &armed, 1) != 1)
			_exit(104);
		if (write(report[1], &grandchild, sizeof(grandchild)) != sizeof(grandchild))
			_exit(105);
		_exit(0);
	}
	CHECK(middle > 0);
	close(report[1]);
	CHECK_EQ(waitpid(middle, &status, 0), middle);
	CHECK_EQ(status, 0);
	pid_t grandchild = 0;
	CHECK_EQ(read_full(report[0], &grandchild, sizeof(grandchild)), sizeof(grandchild));
	CHECK_EQ(waitpid(grandchild, &status, 0), grandchild);
	CHECK(WIFSIGNALED(status));
	CHECK_EQ(WTERMSIG(status), SIGUSR1);
	close(report[0]);
	close(hold[0]);
	close(hold[1]);
}

int main(void)
{
	test_zombie_until_reaped();
	test_sigchld_ignored_autoreaps();
	test_orphan_reparented_to_subreaper();
	test_pdeathsig();
	return check_done();
}
