/*
 * t_proc_misc: process-level odds and ends. Sessions and groups: a forked child can setsid
 * (becoming session and group leader) but a group leader cannot (EPERM), nor can a session
 * leader change its group; setpgid refuses other sessions (EPERM), non-children (ESRCH),
 * children that have exec'd (EACCES) and negative groups (EINVAL). prctl names (15 bytes,
 * inherited by fork), sched_getaffinity/setaffinity, sched_yield and the scheduler queries,
 * getrusage for self, children and thread, and times() advancing with child CPU time.
 */
#include "check.h"
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <time.h>

static int run_child(int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(fn());
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Exit codes: 0 = as expected, otherwise the number of the failed step. */
static int child_setsid(void)
{
	pid_t me = getpid();

	if (getpgid(0) == me) /* fork never makes a group leader */
		return 1;
	if (setsid() != me)
		return 2;
	if (getsid(0) != me || getpgid(0) != me || getpgrp() != me)
		return 3;
	/* Now a session (and group) leader. */
	if (setsid() != -1 || errno != EPERM)
		return 4;
	if (setpgid(0, 0) != -1 || errno != EPERM)
		return 5;
	return 0;
}

static int child_group_leader_setsid(void)
{
	if (setpgid(0, 0) != 0 || getpgid(0) != getpid())
		return 1;
	if (setsid() != -1 || errno != EPERM)
		return 2;
	if (getsid(0) != getsid(getppid()))
		return 3;
	return 0;
}

static void test_sessions_and_groups(void)
{
	CHECK_EQ(getpgid(0), getpgrp());
	CHECK_EQ(getpgid(getpid()), getpgrp());
	/* 0 when the session leader is outside our pid namespace (as under CI); the sandbox's
	 * init leads its own session. */
	CHECK(getsid(0) >= 0);
	if (in_sandbox())
		CHECK_EQ(getsid(0), 1);
	CHECK_EQ(getsid(getpid()), getsid(0));
	CHECK_ERR(getpgid(0x3fffffff), ESRCH);
	CHECK_ERR(getsid(0x3fffffff), ESRCH);

	CHECK_EQ(run_child(child_setsid), 0);
	CHECK_EQ(run_child(child_group_leader_setsid), 0);
	CHECK_ERR(setpgid(0, -1), EINVAL);

	/* A child in another session cannot be moved into our groups. */
	int ready[2], hold[2], status;
	CHECK_EQ(pipe(ready), 0);
	CHECK_EQ(pipe(hold), 0);
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		setsid();
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		(void)read(hold[0], &c, 1);
		_exit(0);
	}
	char c;
	CHECK_EQ(read(ready[0], &c, 1), 1);
	CHECK_EQ(getsid(pid), pid);
	CHECK_ERR(setpgid(pid, getpgrp()), EPERM);
	CHECK_ERR(setpgid(pid, pid), EPERM); /* a session leader */
	maybe_save();			     /* a child in its own session */
	CHECK_EQ(write(hold[1], "h", 1), 1);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);

	/* A group that does not exist in our session. */
	pid = fork();
	if (pid == 0) {
		(void)read(hold[0], &c, 1);
		_exit(0);
	}
	CHECK_ERR(setpgid(pid, 0x3fffffff), EPERM);
	/* Moving it into its own group and back into ours works. */
	CHECK_EQ(setpgid(pid, pid), 0);
	CHECK_EQ(getpgid(pid), pid);
	CHECK_EQ(setpgid(pid, getpgrp()), 0);
	CHECK_EQ(getpgid(pid), getpgrp());
	CHECK_EQ(write(hold[1], "h", 1), 1);
	CHECK_EQ(waitpid(pid, &status, 0), pid);

	/* A grandchild is not ours to move. */
	int report[2];
	CHECK_EQ(pipe(report), 0);
	pid = fork();
	if (pid == 0) {
		pid_t gc = fork();
		if (gc == 0) {
			(void)read(hold[0], &c, 1);
			_exit(0);
		}
		(void)write(report[1], &gc, sizeof(gc));
		waitpid(gc, NULL, 0);
		_exit(0);
	}
	pid_t gc = 0;
	CHECK_EQ(read(report[0], &gc, sizeof(gc)), sizeof(gc));
	CHECK_ERR(setpgid(gc, gc), ESRCH);
	CHECK_EQ(write(hold[1], "h", 1), 1);
	CHECK_EQ(waitpid(pid, &status, 0), pid);

	/* After exec the child's group is fixed: EACCES. A close-on-exec pipe signals the exec. */
	int execd[2];
	CHECK_EQ(pipe2(execd, O_CLOEXEC), 0);
	pid = fork();
	if (pid == 0) {
		char *argv[] = {"sleep", "5", NULL};
		char *envp[] = {NULL};
		close(execd[0]);
		execve("/bin/sleep", argv, envp);
		_exit(127);
	}
	close(execd[1]);
	CHECK_EQ(read(execd[0], &c, 1), 0); /* EOF: exec happened */
	CHECK_ERR(setpgid(pid, pid), EACCES);
	CHECK_EQ(kill(pid, SIGKILL), 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status));
	for (int i = 0; i < 2; i++) {
		close(ready[i]);
		close(hold[i]);
		close(report[i]);
	}
	close(execd[0]);
}

static int child_name_inherited(void)
{
	char name[32] = {0};

	if (prctl(PR_GET_NAME, name, 0, 0, 0) != 0)
		return 1;
	return strcmp(name, "pending-test-na") == 0 ? 0 : 2;
}

static void test_prctl_name(void)
{
	char name[32];

	memset(name, 0, sizeof(name));
	CHECK_EQ(prctl(PR_GET_NAME, name, 0, 0, 0), 0);
	CHECK(strlen(name) > 0 && strlen(name) <= 15);
	CHECK_EQ(prctl(PR_SET_NAME, "short", 0, 0, 0), 0);
	memset(name, 0x55, sizeof(name));
	CHECK_EQ(prctl(PR_GET_NAME, name, 0, 0, 0), 0);
	CHECK_STREQ(name, "short");
	/* Longer names keep their first 15 bytes. */
	CHECK_EQ(prctl(PR_SET_NAME, "pending-test-name-too-long", 0, 0, 0), 0);
	memset(name, 0x55, sizeof(name));
	CHECK_EQ(prctl(PR_GET_NAME, name, 0, 0, 0), 0);
	CHECK_STREQ(name, "pending-test-na");
	CHECK_EQ(run_child(child_name_inherited), 0);
	CHECK_ERR(prctl(PR_SET_NAME, BAD_PTR, 0, 0, 0), EFAULT);
	CHECK_ERR(prctl(0x7fffffff, 0, 0, 0, 0), EINVAL);
}

static void test_sched(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CHECK_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	CHECK(CPU_COUNT(&set) >= 1);
	/* The raw call returns the size of the kernel's mask in bytes. */
	long n = syscall(SYS_sched_getaffinity, 0, sizeof(set), &set);
	CHECK(n >= 8 && n <= (long)sizeof(set) && n % 8 == 0);
	CHECK_ERR(syscall(SYS_sched_getaffinity, 0, 3, &set), EINVAL);
	CHECK_ERR(syscall(SYS_sched_getaffinity, 0x3fffffff, sizeof(set), &set), ESRCH);
	CHECK_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
	CPU_ZERO(&set);
	CHECK_ERR(sched_setaffinity(0, sizeof(set), &set), EINVAL);
	CHECK_EQ(sched_yield(), 0);
	/* Raw calls: musl's wrappers for these are ENOSYS stubs. */
	CHECK_EQ(syscall(SYS_sched_getscheduler, 0), SCHED_OTHER);
	struct sched_param sp = {.sched_priority = 99};
	CHECK_EQ(syscall(SYS_sched_getparam, 0, &sp), 0);
	CHECK_EQ(sp.sched_priority, 0);
	CHECK_EQ(sched_get_priority_min(SCHED_OTHER), 0);
	CHECK_EQ(sched_get_priority_max(SCHED_OTHER), 0);
	CHECK_EQ(sched_get_priority_max(SCHED_FIFO), 99);
}

static long long cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int burn_cpu(void)
{
	volatile unsigned long x = 0;
	long long start = cpu_ms();

	while (cpu_ms() - start < 120)
		x++;
	return 0;
}

static long long tv_ms(struct timeval tv)
{
	return tv.tv_sec * 1000LL + tv.tv_usec / 1000;
}

static void test_rusage_and_times(void)
{
	struct rusage ru;
	struct tms t1, t2;
	long hz = sysconf(_SC_CLK_TCK);

	CHECK_EQ(hz, 100);
	CHECK_EQ(getrusage(RUSAGE_SELF, &ru), 0);
	CHECK(ru.ru_maxrss > 0);
	CHECK(ru.ru_utime.tv_usec >= 0 && ru.ru_utime.tv_usec < 1000000);
	CHECK_EQ(getrusage(RUSAGE_THREAD, &ru), 0);
	CHECK_ERR(getrusage(12345, &ru), EINVAL);
	CHECK_ERR(syscall(SYS_getrusage, RUSAGE_SELF, BAD_PTR), EFAULT);

	clock_t c1 = times(&t1);
	CHECK(c1 != (clock_t)-1);
	struct rusage before;
	CHECK_EQ(getrusage(RUSAGE_CHILDREN, &before), 0);
	/* A child that burns 120 ms of CPU: RUSAGE_CHILDREN and tms_c* grow once it is reaped. */
	CHECK_EQ(run_child(burn_cpu), 0);
	struct timespec d = {0, 100 * 1000 * 1000};
	nanosleep(&d, NULL);
	clock_t c2 = times(&t2);
	CHECK(c2 - c1 >= 8); /* at least 100 ms of sleep at 100 ticks/s, plus the child */
	CHECK_EQ(getrusage(RUSAGE_CHILDREN, &ru), 0);
	long long child_ms = tv_ms(ru.ru_utime) + tv_ms(ru.ru_stime) - tv_ms(before.ru_utime) -
			     tv_ms(before.ru_stime);
	CHECK(child_ms >= 100);
	CHECK((t2.tms_cutime + t2.tms_cstime) - (t1.tms_cutime + t1.tms_cstime) >= 8);
	CHECK(t2.tms_utime >= t1.tms_utime);
}

int main(void)
{
	test_sessions_and_groups();
	test_prctl_name();
	test_sched();
	test_rusage_and_times();
	return check_done();
}
