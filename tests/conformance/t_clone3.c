/* t_clone3: clone3 as fork (exit_signal SIGCHLD): the child runs and its status is waited
 * for (across a checkpoint), CLONE_PARENT_SETTID writes the child's pid for the parent, and
 * the structure's size is checked as Linux checks it (EINVAL below the first version, E2BIG
 * past a page or with unknown non-zero bytes, zero bytes past it fine); CSIGNAL bits in flags
 * and an exit signal above 64 are EINVAL. */
#include "check.h"

#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>

#ifndef SYS_clone3
#define SYS_clone3 435
#endif

struct clone_args_v0 {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

#define CLONE_PARENT_SETTID_FLAG 0x00100000

static long clone3_(void *args, size_t size)
{
	return syscall(SYS_clone3, args, size);
}

int main(void)
{
	pid_t tid = 0;
	struct clone_args_v0 ca;

	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_PARENT_SETTID_FLAG;
	ca.parent_tid = (uintptr_t)&tid;
	ca.exit_signal = SIGCHLD;
	long child = clone3_(&ca, sizeof(ca));
	if (child == 0)
		_exit(5);
	CHECK(child > 0);
	maybe_save(); /* a clone3 child running or a zombie, its status not yet collected */
	CHECK_EQ(tid, child);
	int st;
	CHECK_EQ(waitpid((pid_t)child, &st, 0), child);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 5);

	/* A larger structure whose unknown tail is zero is fine. */
	static unsigned char big[256];
	memset(big, 0, sizeof(big));
	memcpy(big, &ca, sizeof(ca));
	((struct clone_args_v0 *)big)->flags = 0;
	child = clone3_(big, sizeof(big));
	if (child == 0)
		_exit(6);
	CHECK(child > 0);
	CHECK_EQ(waitpid((pid_t)child, &st, 0), child);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 6);

	big[200] = 1;
	CHECK_ERR(clone3_(big, sizeof(big)), E2BIG);
	CHECK_ERR(clone3_(&ca, 32), EINVAL);
	CHECK_ERR(clone3_(&ca, 8192), E2BIG);
	ca.flags = SIGCHLD; /* CSIGNAL bits belong in exit_signal */
	CHECK_ERR(clone3_(&ca, sizeof(ca)), EINVAL);
	ca.flags = 0;
	ca.exit_signal = 65;
	CHECK_ERR(clone3_(&ca, sizeof(ca)), EINVAL);
	CHECK_ERR(clone3_(BAD_PTR, sizeof(ca)), EFAULT);
	return check_done();
}
