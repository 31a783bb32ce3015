/*
 * t_sched_attr: sched_setattr and sched_getattr agree with sched_setscheduler and
 * setpriority (the nice value of a fair policy, the priority of a real-time one,
 * SCHED_FLAG_RESET_ON_FORK, KEEP_POLICY and KEEP_PARAMS) and follow Linux's size rules (0 is
 * the first version, a short or a bigger structure with unknown fields set is E2BIG with the
 * size written back); ioprio_set and ioprio_get keep a thread's I/O class and level (unset:
 * 0 for the thread, derived from its nice value for its group), fork inherits them, and both
 * survive a checkpoint.
 */
#include "check.h"
#include <sched.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/wait.h>

struct attr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
	uint32_t util_min, util_max;
};

#define IOPRIO(cls, level) ((cls) << 13 | (level))

/* Raw calls: musl's sched_getscheduler and sched_getparam are ENOSYS stubs. */
static long getscheduler(void)
{
	return syscall(SYS_sched_getscheduler, 0);
}

static int getparam(void)
{
	struct sched_param sp = {.sched_priority = -1};

	return syscall(SYS_sched_getparam, 0, &sp) ? -1 : sp.sched_priority;
}

static long setattr(int pid, struct attr *a)
{
	return syscall(SYS_sched_setattr, pid, a, 0);
}

static long getattr(int pid, struct attr *a, unsigned size)
{
	return syscall(SYS_sched_getattr, pid, a, size, 0);
}

int main(void)
{
	struct attr a = {0};
	char big[128] __attribute__((aligned(8)));

	setpgid(0, 0); /* a process group of our own, for the I/O priority of a group */

	/* Reading. */
	memset(&a, 0x55, sizeof(a));
	CHECK_EQ(getattr(0, &a, sizeof(a)), 0);
	CHECK_EQ(a.size, sizeof(a));
	CHECK_EQ(a.policy, SCHED_OTHER);
	CHECK_EQ(a.flags, 0);
	CHECK_EQ(a.nice, getpriority(PRIO_PROCESS, 0));
	CHECK_EQ(a.priority, 0);
	memset(big, 0x55, sizeof(big));
	CHECK_EQ(getattr(0, (struct attr *)big, sizeof(big)), 0);
	CHECK_EQ(((struct attr *)big)->size, sizeof(a));
	CHECK_EQ(big[sizeof(a)], 0);
	CHECK_EQ(big[sizeof(big) - 1], 0);
	CHECK_ERR(getattr(0, &a, 47), EINVAL);
	CHECK_ERR(syscall(SYS_sched_getattr, 0, &a, 48, 1), EINVAL);
	CHECK_ERR(getattr(-1, &a, 48), EINVAL);
	CHECK_ERR(getattr(0, NULL, 48), EINVAL);
	CHECK_ERR(getattr(0, &a, 4097), EINVAL);
	CHECK_ERR(getattr(999999, &a, 48), ESRCH);

	/* The nice value of a fair policy; size 0 is the first version. */
	a = (struct attr){.size = 48, .policy = SCHED_OTHER, .nice = 5};
	CHECK_EQ(setattr(0, &a), 0);
	CHECK_EQ(getpriority(PRIO_PROCESS, 0), 5);
	a = (struct attr){.size = 0, .policy = SCHED_BATCH, .nice = 7};
	CHECK_EQ(setattr(0, &a), 0);
	CHECK_EQ(getpriority(PRIO_PROCESS, 0), 7);
	CHECK_EQ(getscheduler(), SCHED_BATCH);
	a = (struct attr){.size = 48, .policy = SCHED_OTHER, .nice = -30}; /* clamped */
	CHECK_EQ(setattr(0, &a), 0);
	CHECK_EQ(getpriority(PRIO_PROCESS, 0), -20);

	/* Sizes. */
	a = (struct attr){.size = 40};
	CHECK_ERR(setattr(0, &a), E2BIG);
	CHECK_EQ(a.size, sizeof(a));
	memset(big, 0, sizeof(big));
	((struct attr *)big)->size = sizeof(big);
	CHECK_EQ(setattr(0, (struct attr *)big), 0); /* unknown fields zero: fine */
	big[90] = 1;
	CHECK_ERR(setattr(0, (struct attr *)big), E2BIG);
	CHECK_EQ(((struct attr *)big)->size, sizeof(a));
	CHECK_ERR(setattr(0, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_sched_setattr, 0, &a, 1), EINVAL);

	/* Real-time policies and the flags. */
	a = (struct attr){.size = 48, .policy = SCHED_FIFO};
	CHECK_ERR(setattr(0, &a), EINVAL);
	a.priority = 10;
	a.flags = 1; /* SCHED_FLAG_RESET_ON_FORK */
	CHECK_EQ(setattr(0, &a), 0);
	CHECK_EQ(getscheduler(), SCHED_FIFO | SCHED_RESET_ON_FORK);
	CHECK_EQ(getparam(), 10);
	memset(&a, 0, sizeof(a));
	CHECK_EQ(getattr(0, &a, sizeof(a)), 0);
	CHECK_EQ(a.policy, SCHED_FIFO);
	CHECK_EQ(a.priority, 10);
	CHECK_EQ(a.flags, 1);
	a = (struct attr){.size = 48, .flags = 0x08 | 0x10 | 1}; /* keep policy and params */
	CHECK_EQ(setattr(0, &a), 0);
	CHECK_EQ(getscheduler(), SCHED_FIFO | SCHED_RESET_ON_FORK);
	CHECK_EQ(getparam(), 10);
	a = (struct attr){.size = 48, .policy = SCHED_OTHER, .flags = 0x100};
	CHECK_ERR(setattr(0, &a), EINVAL);
	a = (struct attr){.size = 48, .policy = SCHED_OTHER, .flags = 0x20};
	CHECK_ERR(setattr(0, &a), EINVAL); /* a clamp needs the second version */
	a = (struct attr){.size = 48, .policy = 7};
	CHECK_ERR(setattr(0, &a), EINVAL);
	a = (struct attr){.size = 48, .policy = SCHED_OTHER, .flags = 1, .nice = 3};
	CHECK_EQ(setattr(0, &a), 0);

	/* I/O priorities. */
	CHECK_EQ(syscall(SYS_ioprio_get, 1, 0), 0); /* unset */
	CHECK_EQ(syscall(SYS_ioprio_get, 2, 0), IOPRIO(2, (3 + 20) / 5));
	CHECK_EQ(syscall(SYS_ioprio_set, 1, 0, IOPRIO(2, 7)), 0);
	CHECK_EQ(syscall(SYS_ioprio_get, 1, 0), IOPRIO(2, 7));
	CHECK_EQ(syscall(SYS_ioprio_get, 1, getpid()), IOPRIO(2, 7));
	CHECK_EQ(syscall(SYS_ioprio_set, 1, 0, IOPRIO(3, 0)), 0);
	CHECK_EQ(syscall(SYS_ioprio_get, 2, 0), IOPRIO(3, 0));
	CHECK_ERR(syscall(SYS_ioprio_set, 1, 0, IOPRIO(0, 1)), EINVAL);
	CHECK_ERR(syscall(SYS_ioprio_set, 1, 0, IOPRIO(4, 0)), EINVAL);
	CHECK_ERR(syscall(SYS_ioprio_set, 1, 0, -1), EINVAL);
	CHECK_ERR(syscall(SYS_ioprio_set, 9, 0, IOPRIO(2, 0)), EINVAL);
	CHECK_ERR(syscall(SYS_ioprio_get, 4, 0), EINVAL);
	CHECK_ERR(syscall(SYS_ioprio_get, 1, -1), ESRCH);
	CHECK_ERR(syscall(SYS_ioprio_set, 1, 999999, IOPRIO(2, 0)), ESRCH);
	CHECK_EQ(syscall(SYS_ioprio_set, 1, 0, IOPRIO(1, 2)), 0); /* real time: root's */
	CHECK_EQ(syscall(SYS_ioprio_get, 1, 0), IOPRIO(1, 2));

	maybe_save();
	CHECK_EQ(syscall(SYS_ioprio_get, 1, 0), IOPRIO(1, 2));
	CHECK_EQ(getpriority(PRIO_PROCESS, 0), 3);
	CHECK_EQ(getscheduler(), SCHED_OTHER | SCHED_RESET_ON_FORK);

	/* fork keeps the I/O priority; the reset flag gives the child a nice of at least 0
	 * and no flag. A non-root child may not take the real-time class. */
	a = (struct attr){.size = 48, .policy = SCHED_OTHER, .flags = 1, .nice = -4};
	CHECK_EQ(setattr(0, &a), 0);
	pid_t pid = fork();
	if (pid == 0) {
		struct attr c = {0};
		if (syscall(SYS_ioprio_get, 1, 0) != IOPRIO(1, 2))
			_exit(2);
		if (getattr(0, &c, sizeof(c)) || c.flags != 0 || c.nice != 0)
			_exit(3);
		if (setuid(1000))
			_exit(4);
		if (syscall(SYS_ioprio_set, 1, 0, IOPRIO(1, 0)) != -1 || errno != EPERM)
			_exit(5);
		if (syscall(SYS_ioprio_set, 1, 0, IOPRIO(2, 1)) != 0)
			_exit(6);
		c = (struct attr){.size = 48, .policy = SCHED_OTHER, .nice = -1};
		if (setattr(0, &c) != -1 || errno != EPERM)
			_exit(7);
		c.nice = 2;
		if (setattr(0, &c) != 0 || getpriority(PRIO_PROCESS, 0) != 2)
			_exit(8);
		c = (struct attr){.size = 48, .policy = SCHED_FIFO, .priority = 1};
		if (setattr(0, &c) != -1 || errno != EPERM)
			_exit(9);
		_exit(0);
	}
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
	return check_done();
}
