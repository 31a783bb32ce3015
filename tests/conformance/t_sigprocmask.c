/*
 * t_sigprocmask: the blocked mask through the raw rt_sigprocmask: SIG_SETMASK/BLOCK/UNBLOCK
 * with the old mask returned, SIGKILL and SIGSTOP silently never blocked, a NULL set only
 * queries (whatever `how` says), bad `how`, sigset sizes and pointers fail. No signal is sent.
 */
#include "check.h"
#include <signal.h>
#include <stdint.h>

#define BIT(sig) (1ULL << ((sig)-1))

static long mask(int how, const uint64_t *set, uint64_t *old)
{
	return syscall(SYS_rt_sigprocmask, how, set, old, 8);
}

static uint64_t current(void)
{
	uint64_t cur = 0x1234;

	CHECK_EQ(mask(SIG_BLOCK, NULL, &cur), 0);
	return cur;
}

int main(void)
{
	uint64_t orig, set, old;

	CHECK_EQ(mask(SIG_SETMASK, NULL, &orig), 0);

	set = 0;
	CHECK_EQ(mask(SIG_SETMASK, &set, &old), 0);
	CHECK_EQ(old, orig);
	CHECK_EQ(current(), 0);

	set = BIT(SIGUSR1) | BIT(SIGUSR2);
	CHECK_EQ(mask(SIG_BLOCK, &set, &old), 0);
	CHECK_EQ(old, 0);
	CHECK_EQ(current(), BIT(SIGUSR1) | BIT(SIGUSR2));
	set = BIT(SIGUSR1);
	CHECK_EQ(mask(SIG_UNBLOCK, &set, &old), 0);
	CHECK_EQ(old, BIT(SIGUSR1) | BIT(SIGUSR2));
	CHECK_EQ(current(), BIT(SIGUSR2));
	set = BIT(SIGHUP) | BIT(40);
	CHECK_EQ(mask(SIG_BLOCK, &set, NULL), 0);
	CHECK_EQ(current(), BIT(SIGUSR2) | BIT(SIGHUP) | BIT(40));

	maybe_save();
	CHECK_EQ(current(), BIT(SIGUSR2) | BIT(SIGHUP) | BIT(40));

	/* SIGKILL and SIGSTOP are stripped silently, including from "everything". */
	set = BIT(SIGKILL) | BIT(SIGSTOP) | BIT(SIGTERM);
	CHECK_EQ(mask(SIG_SETMASK, &set, NULL), 0);
	CHECK_EQ(current(), BIT(SIGTERM));
	set = ~0ULL;
	CHECK_EQ(mask(SIG_SETMASK, &set, NULL), 0);
	CHECK_EQ(current(), ~0ULL & ~(BIT(SIGKILL) | BIT(SIGSTOP)));

	/* With no new set, `how` is not looked at. */
	CHECK_EQ(mask(99, NULL, &old), 0);
	CHECK_EQ(old, ~0ULL & ~(BIT(SIGKILL) | BIT(SIGSTOP)));

	set = 0;
	CHECK_ERR(mask(99, &set, NULL), EINVAL);
	CHECK_ERR(mask(-1, &set, NULL), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigprocmask, SIG_SETMASK, &set, NULL, 4), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigprocmask, SIG_SETMASK, &set, NULL, 16), EINVAL);
	CHECK_ERR(mask(SIG_SETMASK, BAD_PTR, NULL), EFAULT);
	CHECK_ERR(mask(SIG_SETMASK, NULL, BAD_PTR), EFAULT);
	/* The failed calls changed nothing. */
	CHECK_EQ(current(), ~0ULL & ~(BIT(SIGKILL) | BIT(SIGSTOP)));

	/* The libc wrapper agrees for ordinary signals. */
	set = 0;
	CHECK_EQ(mask(SIG_SETMASK, &set, NULL), 0);
	sigset_t ss, os;
	sigemptyset(&ss);
	sigaddset(&ss, SIGALRM);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &ss, NULL), 0);
	CHECK_EQ(current(), BIT(SIGALRM));
	CHECK_EQ(sigprocmask(SIG_SETMASK, NULL, &os), 0);
	CHECK(sigismember(&os, SIGALRM));
	CHECK(!sigismember(&os, SIGUSR1));

	CHECK_EQ(mask(SIG_SETMASK, &orig, NULL), 0);
	CHECK_EQ(current(), orig);
	return check_done();
}
