/*
 * t_sigaction: handler state only (no signal is ever delivered): rt_sigaction stores the
 * handler, flags, restorer and mask and hands them back as the old action; SIGKILL and SIGSTOP
 * are dropped from the mask and cannot be given an action; bad signal numbers, sigset sizes
 * and pointers fail. The libc wrapper's actions read back through the raw call.
 */
#include "check.h"
#include <signal.h>
#include <stdint.h>

struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

#define KSA_RESTORER 0x04000000UL
#define KSA_UNSUPPORTED 0x00000400UL
#define BIT(sig) (1ULL << ((sig)-1))

static void handler(int sig)
{
	(void)sig;
}

static void restorer(void)
{
}

static long ksigaction(int sig, const struct ksigaction *act, struct ksigaction *old)
{
	return syscall(SYS_rt_sigaction, sig, act, old, 8);
}

int main(void)
{
	struct ksigaction act, old;

	/* Set a handler: the previous action comes back as old, the new one reads back whole. */
	act.handler = (void *)handler;
	act.flags = SA_RESTART | SA_SIGINFO | SA_NODEFER | KSA_RESTORER;
	act.restorer = (void *)restorer;
	act.mask = BIT(SIGUSR2) | BIT(SIGTERM) | BIT(40) | BIT(64);
	CHECK_EQ(ksigaction(SIGUSR1, &act, NULL), 0);
	memset(&old, 0x55, sizeof(old));
	CHECK_EQ(ksigaction(SIGUSR1, NULL, &old), 0);
	CHECK_EQ(old.handler, handler);
	CHECK_EQ(old.flags, act.flags);
	CHECK_EQ(old.restorer, restorer);
	CHECK_EQ(old.mask, act.mask);

	maybe_save();
	memset(&old, 0, sizeof(old));
	struct ksigaction ign = {.handler = SIG_IGN, .flags = KSA_RESTORER, .restorer = restorer};
	CHECK_EQ(ksigaction(SIGUSR1, &ign, &old), 0);
	CHECK_EQ(old.handler, handler);
	CHECK_EQ(old.flags, act.flags);
	CHECK_EQ(old.mask, act.mask);
	CHECK_EQ(ksigaction(SIGUSR1, NULL, &old), 0);
	CHECK_EQ(old.handler, SIG_IGN);
	CHECK_EQ(old.mask, 0);

	/* SIGKILL and SIGSTOP never stay in a handler's mask; unknown flags are dropped. */
	act.mask = BIT(SIGKILL) | BIT(SIGSTOP) | BIT(SIGHUP);
	act.flags = SA_RESTART | KSA_RESTORER | KSA_UNSUPPORTED;
	CHECK_EQ(ksigaction(SIGUSR2, &act, NULL), 0);
	CHECK_EQ(ksigaction(SIGUSR2, NULL, &old), 0);
	CHECK_EQ(old.mask, BIT(SIGHUP));
	CHECK_EQ(old.flags, SA_RESTART | KSA_RESTORER);

	/* Real-time signals up to 64 are valid. */
	act.flags = KSA_RESTORER;
	act.mask = 0;
	CHECK_EQ(ksigaction(64, &act, &old), 0);
	CHECK_EQ(ksigaction(34, &act, &old), 0);

	/* SIGKILL/SIGSTOP: any new action is EINVAL, reading the old one is fine. */
	CHECK_ERR(ksigaction(SIGKILL, &act, NULL), EINVAL);
	CHECK_ERR(ksigaction(SIGSTOP, &act, NULL), EINVAL);
	struct ksigaction dfl = {.handler = SIG_DFL};
	CHECK_ERR(ksigaction(SIGKILL, &dfl, NULL), EINVAL);
	CHECK_EQ(ksigaction(SIGKILL, NULL, &old), 0);
	CHECK_EQ(old.handler, SIG_DFL);
	CHECK_ERR(ksigaction(0, &act, NULL), EINVAL);
	CHECK_ERR(ksigaction(65, &act, NULL), EINVAL);
	CHECK_ERR(ksigaction(-1, NULL, &old), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigaction, SIGUSR1, &act, NULL, 4), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigaction, SIGUSR1, &act, NULL, 16), EINVAL);
	CHECK_ERR(ksigaction(SIGUSR1, BAD_PTR, NULL), EFAULT);
	CHECK_ERR(ksigaction(SIGUSR1, NULL, BAD_PTR), EFAULT);

	/* The libc wrapper installs a restorer; the rest is what was asked for. */
	struct sigaction sa, sold;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	CHECK_EQ(ksigaction(SIGUSR1, NULL, &old), 0);
	CHECK_EQ(old.handler, handler);
	CHECK_EQ(old.flags & ~KSA_RESTORER, SA_RESTART);
	CHECK_EQ(old.mask, BIT(SIGINT));
	CHECK_EQ(sigaction(SIGUSR1, NULL, &sold), 0);
	CHECK_EQ(sold.sa_handler, handler);
	CHECK(sigismember(&sold.sa_mask, SIGINT));
	CHECK(!sigismember(&sold.sa_mask, SIGUSR2));
	CHECK_ERR(sigaction(SIGKILL, &sa, NULL), EINVAL);

	/* Back to the defaults. */
	CHECK_EQ(ksigaction(SIGUSR1, &dfl, NULL), 0);
	CHECK_EQ(ksigaction(SIGUSR2, &dfl, NULL), 0);
	CHECK_EQ(ksigaction(34, &dfl, NULL), 0);
	CHECK_EQ(ksigaction(64, &dfl, NULL), 0);
	CHECK_EQ(ksigaction(SIGUSR1, NULL, &old), 0);
	CHECK_EQ(old.handler, SIG_DFL);
	return check_done();
}
