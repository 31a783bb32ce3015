/*
 * t_set_tid_address: set_tid_address(2) returns the caller's tid whatever the pointer (even
 * NULL or unmapped: it is only used at thread exit). The libc's own address cannot be known,
 * so the last call leaves a pointer to a live static in its place.
 */
#include "check.h"

static int clear_me = 42;

int main(void)
{
	long tid = syscall(SYS_gettid);

	CHECK_EQ(syscall(SYS_set_tid_address, &clear_me), tid);
	CHECK_EQ(syscall(SYS_set_tid_address, NULL), tid);
	CHECK_EQ(syscall(SYS_set_tid_address, BAD_PTR), tid);
	CHECK_EQ(syscall(SYS_set_tid_address, &clear_me), tid);
	CHECK_EQ(tid, getpid());
	maybe_save();
	CHECK_EQ(syscall(SYS_set_tid_address, &clear_me), tid);
	/* Nothing is written at the address while the thread lives. */
	CHECK_EQ(clear_me, 42);
	return check_done();
}
