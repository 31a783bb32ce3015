/*
 * t_sched_policy: sched_setscheduler, sched_setparam and sched_rr_get_interval, as CPython's
 * test_posix and posix_spawn's scheduler attribute use them. A thread's policy and real-time
 * priority are what it set last; FIFO and RR need a priority of 1..99, the others 0;
 * SCHED_RESET_ON_FORK is reported with the policy and gives a child SCHED_OTHER; fork keeps
 * the policy otherwise. The round-robin slice is 100 ms for SCHED_RR and 0 for SCHED_FIFO.
 * /proc/PID/stat's priority is -1 - the real-time priority. An ordinary user without
 * RLIMIT_RTPRIO may not take a real-time policy.
 * conformance: native-proc
 */
#include "check.h"
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif

/* Field 18 of /proc/self/stat. */
static long stat_prio(void)
{
	char buf[1024];
	long prio = -1000;
	FILE *f = fopen("/proc/self/stat", "r");

	if (!f)
		return prio;
	if (fgets(buf, sizeof(buf), f)) {
		char *p = strrchr(buf, ')') + 2;
		for (int i = 3; i < 18; i++)
			p = strchr(p, ' ') + 1;
		sscanf(p, "%ld", &prio);
	}
	fclose(f);
	return prio;
}

static int child_status(pid_t kid)
{
	int status = -1;

	if (waitpid(kid, &status, 0) != kid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + (status & 0x7f);
}

int main(void)
{
	struct sched_param sp = {0};
	struct timespec ts;

	CHECK_EQ(syscall(SYS_sched_getscheduler, 0), SCHED_OTHER);
	CHECK_EQ(syscall(SYS_sched_rr_get_interval, 0, &ts), 0);
	CHECK_EQ(syscall(SYS_sched_setscheduler, 0, SCHED_OTHER, &sp), 0);
	CHECK_EQ(syscall(SYS_sched_setparam, 0, &sp), 0);

	/* Bad arguments. */
	CHECK_ERR(syscall(SYS_sched_setscheduler, -1, SCHED_OTHER, &sp), EINVAL);
	CHECK_ERR(syscall(SYS_sched_setscheduler, 0, SCHED_OTHER, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_sched_setscheduler, 0, SCHED_OTHER, BAD_PTR), EFAULT);
	CHECK_ERR(syscall(SYS_sched_setscheduler, 0, 4, &sp), EINVAL);
	CHECK_ERR(syscall(SYS_sched_setscheduler, 0, 77, &sp), EINVAL);
	CHECK_ERR(syscall(SYS_sched_setscheduler, 0, -1, &sp), EINVAL);
	CHECK_ERR(syscall(SYS_sched_setscheduler, 99999, SCHED_OTHER, &sp), ESRCH);
	CHECK_ERR(syscall(SYS_sched_setparam, -1, &sp), EINVAL);
	CHECK_ERR(syscall(SYS_sched_setparam, 99999, &sp), ESRCH);
	CHECK_ERR(syscall(SYS_sched_rr_get_interval, -1, &ts), EINVAL);
	CHECK_ERR(syscall(SYS_sched_rr_get_interval, 99999, &ts), ESRCH);
	CHECK_ERR(syscall(SYS_sched_rr_get_interval, 0, BAD_PTR), EFAULT);
	sp.sched_priority = 1; /* a priority for a policy that has none */
	CHECK_ERR(syscall(SYS_sched_setscheduler, 0, SCHED_OTHER, &sp), EINVAL);
	CHECK_ERR(syscall(SYS_sched_setparam, 0, &sp), EINVAL);
	sp.sched_priority = 0; /* none for one that needs it */
	CHECK_ERR(syscall(SYS_sched_setscheduler, 0, SCHED_FIFO, &sp), EINVAL);
	sp.sched_priority = 100;
	CHECK_ERR(syscall(SYS_sched_setscheduler, 0, SCHED_RR, &sp), EINVAL);
	sp.sched_priority = -1;
	CHECK_ERR(syscall(SYS_sched_setscheduler, 0, SCHED_RR, &sp), EINVAL);
	CHECK_EQ(syscall(SYS_sched_getscheduler, 0), SCHED_OTHER);

	/* BATCH and IDLE are kept; root may leave IDLE. */
	sp.sched_priority = 0;
	CHECK_EQ(syscall(SYS_sched_setscheduler, 0, SCHED_BATCH, &sp), 0);
	CHECK_EQ(syscall(SYS_sched_getscheduler, 0), SCHED_BATCH);
	CHECK_EQ(syscall(SYS_sched_setscheduler, 0, SCHED_IDLE, &sp), 0);
	CHECK_EQ(syscall(SYS_sched_getscheduler, 0), SCHED_IDLE);

	/* FIFO: its priority, a slice of 0, and a priority in /proc. */
	sp.sched_priority = 3;
	CHECK_EQ(syscall(SYS_sched_setscheduler, 0, SCHED_FIFO, &sp), 0);
	CHECK_EQ(syscall(SYS_sched_getscheduler, 0), SCHED_FIFO);
	memset(&sp, 0xff, sizeof(sp));
	CHECK_EQ(syscall(SYS_sched_getparam, 0, &sp), 0);
	CHECK_EQ(sp.sched_priority, 3);
	CHECK_EQ(syscall(SYS_sched_rr_get_interval, 0, &ts), 0);
	CHECK_EQ(ts.tv_sec, 0);
	CHECK_EQ(ts.tv_nsec, 0);
	CHECK_EQ(stat_prio(), -4);
	sp.sched_priority = 7;
	CHECK_EQ(syscall(SYS_sched_setparam, 0, &sp), 0);
	CHECK_EQ(syscall(SYS_sched_getscheduler, 0), SCHED_FIFO);
	CHECK_EQ(syscall(SYS_sched_getparam, 0, &sp), 0);
	CHECK_EQ(sp.sched_priority, 7);
	sp.sched_priority = 0;
	CHECK_ERR(syscall(SYS_sched_setparam, 0, &sp), EINVAL);

	/* A child keeps FIFO 7. */
	pid_t kid = fork();
	if (kid == 0) {
		struct sched_param c;
		if (syscall(SYS_sched_getscheduler, 0) != SCHED_FIFO)
			_exit(1);
		if (syscall(SYS_sched_getparam, 0, &c) || c.sched_priority != 7)
			_exit(2);
		_exit(0);
	}
	CHECK_EQ(child_status(kid), 0);

	/* RR with SCHED_RESET_ON_FORK: reported with the policy; a 100 ms slice. */
	sp.sched_priority = 5;
	CHECK_EQ(syscall(SYS_sched_setscheduler, 0, SCHED_RR | SCHED_RESET_ON_FORK, &sp), 0);
	maybe_save(); /* the policy, its priority and the reset flag */
	CHECK_EQ(syscall(SYS_sched_getscheduler, 0), SCHED_RR | SCHED_RESET_ON_FORK);
	CHECK_EQ(syscall(SYS_sched_getparam, 0, &sp), 0);
	CHECK_EQ(sp.sched_priority, 5);
	CHECK_EQ(syscall(SYS_sched_rr_get_interval, 0, &ts), 0);
	CHECK_EQ(ts.tv_sec, 0);
	CHECK_EQ(ts.tv_nsec, 100000000);
	CHECK_EQ(stat_prio(), -6);
	kid = fork();
	if (kid == 0) {
		struct sched_param c;
		if (syscall(SYS_sched_getscheduler, 0) != SCHED_OTHER)
			_exit(1);
		if (syscall(SYS_sched_getparam, 0, &c) || c.sched_priority != 0)
			_exit(2);
		_exit(0);
	}
	CHECK_EQ(child_status(kid), 0);

	/* Back to SCHED_OTHER; an ordinary user without RLIMIT_RTPRIO gets EPERM for RR, and for
	 * changing root's threads, but may pick BATCH for itself. */
	sp.sched_priority = 0;
	CHECK_EQ(syscall(SYS_sched_setscheduler, 0, SCHED_OTHER, &sp), 0);
	CHECK_EQ(syscall(SYS_sched_getscheduler, 0), SCHED_OTHER);
	pid_t parent = getpid();
	kid = fork();
	if (kid == 0) {
		struct sched_param c = {0};
		struct rlimit rl = {0, 0};
		if (setrlimit(RLIMIT_RTPRIO, &rl) || setresuid(65534, 65534, 65534))
			_exit(10);
		c.sched_priority = 1;
		errno = 0;
		if (syscall(SYS_sched_setscheduler, 0, SCHED_RR, &c) != -1 || errno != EPERM)
			_exit(11);
		c.sched_priority = 0;
		errno = 0;
		if (syscall(SYS_sched_setscheduler, parent, SCHED_BATCH, &c) != -1 ||
		    errno != EPERM)
			_exit(12);
		if (syscall(SYS_sched_setscheduler, 0, SCHED_BATCH, &c) ||
		    syscall(SYS_sched_getscheduler, 0) != SCHED_BATCH)
			_exit(13);
		if (syscall(SYS_sched_getscheduler, parent) != SCHED_OTHER) /* reading is allowed */
			_exit(14);
		_exit(0);
	}
	CHECK_EQ(child_status(kid), 0);

	return check_done();
}
