/*
 * t_exit_status: exit_group's status reaches the runner: this test must exit with status 3.
 * conformance: expect-exit 3
 */
#include "check.h"

int main(void)
{
	CHECK_EQ(syscall(SYS_getpid) > 0, 1);
	maybe_save();
	int status = check_done() ? 1 : 3;
	syscall(SYS_exit_group, status);
	return 99; /* not reached */
}
