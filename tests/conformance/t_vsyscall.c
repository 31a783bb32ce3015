/*
 * t_vsyscall: the legacy vsyscall page, which old static binaries call for gettimeofday, time
 * and getcpu at fixed addresses, answers as the syscalls do; and getcpu(2) itself names a CPU
 * the thread may run on.
 */
#include "check.h"
#include <sched.h>
#include <sys/time.h>
#include <time.h>

#define VSYSCALL_GETTIMEOFDAY 0xffffffffff600000UL
#define VSYSCALL_TIME 0xffffffffff600400UL
#define VSYSCALL_GETCPU 0xffffffffff600800UL

int main(void)
{
	long (*vgettimeofday)(struct timeval *, void *) = (void *)VSYSCALL_GETTIMEOFDAY;
	long (*vtime)(long *) = (void *)VSYSCALL_TIME;
	long (*vgetcpu)(unsigned *, unsigned *, void *) = (void *)VSYSCALL_GETCPU;
	struct timeval tv = {0};
	long t1 = 0, t2;
	unsigned cpu = ~0u, node = ~0u;
	cpu_set_t set;

	t2 = vtime(&t1);
	CHECK_EQ(t1, t2);
	CHECK(t2 > 1600000000); /* a date of this century, not 0 or -ENOSYS */
	CHECK(labs(t2 - (long)time(NULL)) <= 2);
	CHECK_EQ(vtime(NULL) >= t2, 1);

	maybe_save();
	CHECK_EQ(vgettimeofday(&tv, NULL), 0);
	CHECK(labs((long)tv.tv_sec - (long)time(NULL)) <= 2);
	CHECK(tv.tv_usec >= 0 && tv.tv_usec < 1000000);

	CHECK_EQ(vgetcpu(&cpu, &node, NULL), 0);
	CHECK_EQ(node, 0u);
	CHECK_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	CHECK(cpu < CPU_SETSIZE && CPU_ISSET(cpu, &set));

	/* getcpu(2) itself, with either pointer NULL. */
	cpu = ~0u;
	CHECK_EQ(syscall(SYS_getcpu, &cpu, NULL, NULL), 0);
	CHECK(cpu < CPU_SETSIZE && CPU_ISSET(cpu, &set));
	CHECK_EQ(syscall(SYS_getcpu, NULL, &node, NULL), 0);
	CHECK_EQ(node, 0u);
	CHECK_ERR(syscall(SYS_getcpu, BAD_PTR, NULL, NULL), EFAULT);
	return check_done();
}
