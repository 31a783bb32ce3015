/*
 * t_kill_pgrp: signals by process group. Children moved into a new group with setpgid all
 * die of kill(-pgid, SIGTERM) and are reaped by waitpid(-pgid); kill(0, sig) reaches the
 * caller's whole group (itself included) and nobody outside it; waitpid(0) and
 * waitid(P_PGID) select by group; signal 0 probes existence; missing pids and groups are
 * ESRCH, bad signal numbers EINVAL. kill(-1) is left out: natively it would reach the host.
 */
#include "check.h"
#include <limits.h>
#include <signal.h>
#include <sys/wait.h>

static volatile int usr1_count;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_count++;
}

/* A child that moves into group pgid (0: its own) and blocks reading fd. */
static pid_t blocked_child(pid_t pgid, int fd)
{
	pid_t pid = fork();

	if (pid == 0) {
		char c;
		setpgid(0, pgid);
		(void)read(fd, &c, 1);
		_exit(100);
	}
	/* Both sides call setpgid, so the move is done whichever runs first. */
	if (pid > 0)
		CHECK_EQ(setpgid(pid, pgid ? pgid : pid), 0);
	return pid;
}

static void test_kill_group(void)
{
	int hold[2], status;

	CHECK_EQ(pipe(hold), 0);
	pid_t leader = blocked_child(0, hold[0]);
	pid_t a = blocked_child(leader, hold[0]);
	pid_t b = blocked_child(leader, hold[0]);
	CHECK_EQ(getpgid(leader), leader);
	CHECK_EQ(getpgid(a), leader);
	CHECK_EQ(getpgid(b), leader);
	CHECK(getpgid(0) != leader);
	CHECK_EQ(kill(-leader, 0), 0);
	CHECK_EQ(killpg(leader, 0), 0);
	maybe_save(); /* a process group of blocked children */
	CHECK_EQ(kill(-leader, SIGTERM), 0);
	int reaped = 0;
	for (int i = 0; i < 3; i++) {
		pid_t got = waitpid(-leader, &status, 0);
		CHECK(got == leader || got == a || got == b);
		CHECK(WIFSIGNALED(status));
		CHECK_EQ(WTERMSIG(status), SIGTERM);
		reaped += got == leader ? 1 : got == a ? 10 : got == b ? 100 : 1000;
	}
	CHECK_EQ(reaped, 111);
	CHECK_ERR(waitpid(-leader, &status, WNOHANG), ECHILD);
	CHECK_ERR(kill(-leader, 0), ESRCH);
	CHECK_ERR(killpg(leader, SIGTERM), ESRCH);
	close(hold[0]);
	close(hold[1]);
}

/*
 * In a child that leads a new group with two grandchildren: kill(0, SIGUSR1) runs the child's
 * handler and kills the grandchildren. Exit status: 0 if all went as expected.
 */
static int group_self_kill(void)
{
	int ready[2], hold[2], status;
	pid_t kids[2];

	if (setpgid(0, 0) != 0 || pipe(ready) != 0 || pipe(hold) != 0)
		return 10;
	for (int i = 0; i < 2; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			char c;
			signal(SIGUSR1, SIG_DFL);
			if (write(ready[1], "r", 1) != 1)
				_exit(11);
			(void)read(hold[0], &c, 1);
			_exit(12);
		}
		if (kids[i] < 0)
			return 13;
	}
	for (int i = 0; i < 2; i++) {
		char c;
		if (read(ready[0], &c, 1) != 1)
			return 14;
	}
	usr1_count = 0;
	if (kill(0, SIGUSR1) != 0)
		return 15;
	if (usr1_count != 1)
		return 16;
	for (int i = 0; i < 2; i++) {
		if (waitpid(kids[i], &status, 0) != kids[i])
			return 17;
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGUSR1)
			return 18;
	}
	return 0;
}

static void test_kill_zero_is_own_group(void)
{
	struct sigaction sa;
	int status;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	usr1_count = 0;
	pid_t pid = fork();
	if (pid == 0)
		_exit(group_self_kill());
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	/* We are in another group: nothing reached us. */
	CHECK_EQ(usr1_count, 0);
	signal(SIGUSR1, SIG_DFL);
}

static void test_wait_by_group(void)
{
	int status;
	siginfo_t si;

	/* One child in our group, one in a group of its own; both exit. */
	pid_t same = fork();
	if (same == 0)
		_exit(1);
	int go[2];
	CHECK_EQ(pipe(go), 0);
	pid_t other = fork();
	if (other == 0) {
		char c;
		setpgid(0, 0);
		close(go[1]);
		(void)read(go[0], &c, 1); /* exits once its group is set up on both sides */
		_exit(2);
	}
	CHECK_EQ(setpgid(other, other), 0);
	close(go[0]);
	close(go[1]);
	CHECK_EQ(waitid(P_PID, other, &si, WEXITED | WNOWAIT), 0);

	/* waitpid(0): only our group's child. */
	CHECK_EQ(waitpid(0, &status, 0), same);
	CHECK_EQ(WEXITSTATUS(status), 1);
	CHECK_ERR(waitpid(0, &status, WNOHANG), ECHILD);
	/* waitid(P_PGID) finds the other one. */
	memset(&si, 0, sizeof(si));
	CHECK_EQ(waitid(P_PGID, other, &si, WEXITED), 0);
	CHECK_EQ(si.si_pid, other);
	CHECK_EQ(si.si_status, 2);
	CHECK_ERR(waitid(P_PGID, other, &si, WEXITED | WNOHANG), ECHILD);
}

static void test_existence_and_errors(void)
{
	CHECK_EQ(kill(getpid(), 0), 0);
	CHECK_EQ(kill(0, 0), 0);
	/* -1 is not "group 1" but "everyone else": only meaningful when we are not pid 1 (the
	 * sandbox's init). */
	if (getpgid(0) != 1)
		CHECK_EQ(kill(-getpgid(0), 0), 0);
	CHECK_ERR(kill(0x3fffffff, 0), ESRCH);
	CHECK_ERR(kill(-0x3fffffff, 0), ESRCH);
	CHECK_ERR(kill(INT_MIN, 0), ESRCH);
	CHECK_ERR(kill(getpid(), 65), EINVAL);
	CHECK_ERR(kill(getpid(), -1), EINVAL);
}

int main(void)
{
	test_kill_group();
	test_kill_zero_is_own_group();
	test_wait_by_group();
	test_existence_and_errors();
	return check_done();
}
