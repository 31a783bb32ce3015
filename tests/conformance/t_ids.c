/*
 * t_ids: process and credential ids. In a single-threaded process gettid equals getpid, the
 * parent is another process (none, 0, for the init of a pid namespace, as the sandbox starts
 * us), and each uid/gid equals its effective twin: root, as the runner starts every mode (a
 * chroot, `unshare -r`, the sandbox's default). Raw syscalls and the libc wrappers must agree.
 */
#include "check.h"

int main(void)
{
	long pid = syscall(SYS_getpid);
	long ppid = syscall(SYS_getppid);

	CHECK(pid > 0);
	CHECK_EQ(pid, getpid());
	CHECK_EQ(syscall(SYS_gettid), pid);
	CHECK_EQ(gettid(), pid);
	if (in_sandbox())
		CHECK_EQ(pid, 1);
	if (pid == 1)
		CHECK_EQ(ppid, 0);
	else
		CHECK(ppid > 0);
	CHECK(ppid != pid);
	CHECK_EQ(getppid(), ppid);

	CHECK_EQ(syscall(SYS_getuid), 0);
	CHECK_EQ(syscall(SYS_getgid), 0);
	CHECK_EQ(syscall(SYS_getuid), syscall(SYS_geteuid));
	CHECK_EQ(syscall(SYS_getgid), syscall(SYS_getegid));
	CHECK_EQ(getuid(), syscall(SYS_getuid));
	CHECK_EQ(geteuid(), syscall(SYS_geteuid));
	CHECK_EQ(getgid(), syscall(SYS_getgid));
	CHECK_EQ(getegid(), syscall(SYS_getegid));

	maybe_save();
	/* Ids survive a checkpoint unchanged. */
	CHECK_EQ(syscall(SYS_getpid), pid);
	CHECK_EQ(syscall(SYS_gettid), pid);
	CHECK_EQ(syscall(SYS_getppid), ppid);
	return check_done();
}
