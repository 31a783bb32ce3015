/*
 * t_kill_perm: who may signal whom (kill(2), "Permissions"): a process whose real and
 * effective uids are neither the target's real nor saved uid gets EPERM (signal 0 too), from
 * kill, tkill, tgkill and rt_sigqueueinfo, and for a process group with no process it may
 * signal; SIGCONT to its own session is allowed; a matching real uid is enough (seteuid away
 * from root still signals root); a process may always signal itself. The checks follow a save
 * point: they are of the ids, process group and session the restore gave back.
 */
#include "check.h"
#include <signal.h>
#include <sys/wait.h>

static int ordinary(pid_t root_pid)
{
	siginfo_t si = {0};

	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		return 1;
	maybe_save(); /* an unprivileged process beside root's */
	errno = 0;
	if (kill(root_pid, 0) != -1 || errno != EPERM)
		return 2;
	errno = 0;
	if (kill(root_pid, SIGTERM) != -1 || errno != EPERM)
		return 3;
	errno = 0;
	if (syscall(SYS_tkill, root_pid, SIGTERM) != -1 || errno != EPERM)
		return 4;
	errno = 0;
	if (syscall(SYS_tgkill, root_pid, root_pid, 0) != -1 || errno != EPERM)
		return 5;
	si.si_code = SI_QUEUE;
	errno = 0;
	if (syscall(SYS_rt_sigqueueinfo, root_pid, SIGUSR1, &si) != -1 || errno != EPERM)
		return 6;
	errno = 0;
	if (kill(-root_pid, 0) != -1 || errno != EPERM) /* the root's own group */
		return 7;
	if (kill(root_pid, SIGCONT) != 0) /* same session */
		return 8;
	if (kill(getpid(), 0) != 0)
		return 9;
	errno = 0;
	if (kill(999999, 0) != -1 || errno != ESRCH)
		return 10;
	return 0;
}

/* Only the effective uid changed: the real uid still matches root's processes. */
static int seteuid_only(pid_t root_pid)
{
	if (seteuid(65534))
		return 1;
	maybe_save(); /* real and saved uid 0, effective 65534 */
	if (kill(root_pid, 0) != 0)
		return 2;
	return 0;
}

static void run(int (*fn)(pid_t), const char *what, pid_t root_pid)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(fn(root_pid));
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		dprintf(1, "%s: step %d failed\n", what,
			WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
	/* A root process in a group of its own for the children to aim at. */
	pid_t target = fork();
	if (target == 0) {
		setpgid(0, 0);
		signal(SIGCONT, SIG_IGN);
		pause();
		_exit(0);
	}
	setpgid(target, target);
	run(ordinary, "an ordinary user", target);
	run(seteuid_only, "seteuid only", target);
	CHECK_EQ(kill(target, 0), 0);
	CHECK_EQ(kill(target, SIGKILL), 0);
	CHECK_EQ(waitpid(target, NULL, 0), target);
	return check_done();
}
