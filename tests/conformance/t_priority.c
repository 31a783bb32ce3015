/*
 * t_priority: getpriority/setpriority and nice(3). Nice values are per thread, clamped to
 * -20..19, inherited by fork; the raw getpriority returns 20 - nice, the lowest nice of what
 * WHICH names; /proc/PID/stat shows priority 20 + nice and the nice value. Root may lower a
 * nice value; an ordinary user may only raise its own, and gets EACCES lowering it and EPERM
 * touching another user's process.
 * conformance: native-proc
 */
#include "check.h"
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

/* Fields 18 and 19 of /proc/PID/stat. */
static void stat_prio(pid_t pid, long *prio, long *nice)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	FILE *f = fopen(path, "r");
	*prio = *nice = -100;
	if (!f || !fgets(buf, sizeof(buf), f)) {
		if (f)
			fclose(f);
		return;
	}
	fclose(f);
	char *p = strrchr(buf, ')') + 2;
	/* state is field 3; priority is field 18: skip 15 fields after the state. */
	for (int i = 3; i < 18; i++)
		p = strchr(p, ' ') + 1;
	sscanf(p, "%ld %ld", prio, nice);
}

int main(void)
{
	long prio, nice0;
	int base = getpriority(PRIO_PROCESS, 0);

	CHECK_EQ(base, 0);
	CHECK_EQ(syscall(SYS_getpriority, PRIO_PROCESS, 0), 20);
	CHECK_ERR(syscall(SYS_getpriority, 3, 0), EINVAL);
	CHECK_ERR(syscall(SYS_getpriority, -1, 0), EINVAL);
	CHECK_ERR(setpriority(3, 0, 0), EINVAL);
	CHECK_ERR(syscall(SYS_getpriority, PRIO_PROCESS, 99999), ESRCH);
	CHECK_ERR(setpriority(PRIO_PROCESS, 99999, 1), ESRCH);

	CHECK_EQ(setpriority(PRIO_PROCESS, 0, 5), 0);
	CHECK_EQ(getpriority(PRIO_PROCESS, 0), 5);
	CHECK_EQ(getpriority(PRIO_PROCESS, getpid()), 5);
	stat_prio(getpid(), &prio, &nice0);
	CHECK_EQ(prio, 25);
	CHECK_EQ(nice0, 5);
	errno = 0;
	CHECK_EQ(nice(2), 7);
	CHECK_EQ(errno, 0);
	CHECK_EQ(setpriority(PRIO_PROCESS, 0, 100), 0); /* clamped */
	CHECK_EQ(getpriority(PRIO_PROCESS, 0), 19);
	CHECK_EQ(setpriority(PRIO_PROCESS, 0, -100), 0); /* root may lower it */
	CHECK_EQ(getpriority(PRIO_PROCESS, 0), -20);
	CHECK_EQ(setpriority(PRIO_PROCESS, 0, 3), 0);
	maybe_save(); /* the nice value */
	CHECK_EQ(getpriority(PRIO_PROCESS, 0), 3);

	/* A child inherits it; PRIO_PGRP and PRIO_USER see both and report the lowest. */
	int go[2], ready[2];
	char c;
	CHECK_EQ(pipe(go), 0);
	CHECK_EQ(pipe(ready), 0);
	pid_t kid = fork();
	if (kid == 0) {
		close(go[1]);
		if (getpriority(PRIO_PROCESS, 0) != 3)
			_exit(1);
		setpgid(0, 0);
		write(ready[1], "r", 1);
		read(go[0], &c, 1);
		_exit(getpriority(PRIO_PROCESS, 0) == 11 ? 0 : 2);
	}
	close(go[0]);
	CHECK_EQ(read(ready[0], &c, 1), 1);
	CHECK_EQ(getpriority(PRIO_PROCESS, kid), 3);
	CHECK_EQ(setpriority(PRIO_PGRP, kid, 11), 0);
	CHECK_EQ(getpriority(PRIO_PGRP, kid), 11);
	CHECK_EQ(getpriority(PRIO_PROCESS, 0), 3);
	stat_prio(kid, &prio, &nice0);
	CHECK_EQ(prio, 31);
	CHECK_EQ(nice0, 11);
	CHECK_EQ(getpriority(PRIO_USER, 0), 3); /* the lowest of this user's threads */
	CHECK_ERR(syscall(SYS_getpriority, PRIO_PGRP, 99999), ESRCH);
	CHECK_EQ(write(go[1], "x", 1), 1);
	int status;
	CHECK_EQ(waitpid(kid, &status, 0), kid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* An ordinary user: may raise, not lower, and not touch root's processes. */
	kid = fork();
	if (kid == 0) {
		if (setresuid(65534, 65534, 65534))
			_exit(10);
		if (setpriority(PRIO_PROCESS, 0, 6) != 0 || getpriority(PRIO_PROCESS, 0) != 6)
			_exit(11);
		errno = 0;
		if (setpriority(PRIO_PROCESS, 0, 4) != -1 || errno != EACCES)
			_exit(12);
		if (setpriority(PRIO_PROCESS, 0, 6) != 0) /* the same value is not lowering */
			_exit(13);
		errno = 0;
		if (setpriority(PRIO_PROCESS, getppid(), 10) != -1 || errno != EPERM)
			_exit(14);
		if (getpriority(PRIO_PROCESS, getppid()) != 3) /* reading is allowed */
			_exit(15);
		struct rlimit rl = {20 - 2, 20 - 2}; /* RLIMIT_NICE 18: down to nice 2 */
		if (setrlimit(RLIMIT_NICE, &rl) == 0)
			_exit(16); /* raising a hard limit needs root */
		_exit(0);
	}
	CHECK_EQ(waitpid(kid, &status, 0), kid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);

	return check_done();
}
