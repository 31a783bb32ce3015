/*
 * t_enosys: numbers no x86_64 kernel assigns are ENOSYS, through libc's syscall() and a raw
 * `syscall` instruction; maybe_save()'s number is among them natively, and the process
 * carries on normally afterwards.
 */
#include "check.h"

static long raw_syscall0(long nr)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "0"(nr) : "rcx", "r11", "memory");
	return ret;
}

int main(void)
{
	CHECK_ERR(syscall(1000), ENOSYS);
	/* Not the gap after rseq (334): new kernels fill it (uretprobe at 335 raises SIGILL). */
	CHECK_ERR(syscall(600), ENOSYS);
	CHECK_ERR(syscall(100000), ENOSYS);
	CHECK_EQ(raw_syscall0(1000), -ENOSYS);
	CHECK_EQ(raw_syscall0(0x7fffffff), -ENOSYS);
	CHECK_EQ(raw_syscall0(-2), -ENOSYS);

	/* The same unknown call twice gives the same answer. */
	CHECK_ERR(syscall(1000), ENOSYS);
	errno = 1234;
	maybe_save();
	CHECK_EQ(errno, 1234);
	CHECK_EQ(syscall(SYS_getpid), getpid());
	return check_done();
}
