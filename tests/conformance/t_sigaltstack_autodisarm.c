/*
 * t_sigaltstack_autodisarm: SS_AUTODISARM. A handler that runs on such a stack finds it
 * disarmed (sigaltstack reports SS_DISABLE and may set another one, where an armed stack in use
 * refuses with EPERM); the frame's uc_stack holds the stack as it was, and rt_sigreturn puts it
 * back; a signal nested in the handler runs below the first on the same stack; a stack without
 * the flag is not disarmed. A checkpoint taken in the disarmed handler keeps all of it.
 */
#include "check.h"
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <ucontext.h>

#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31)
#endif
#define ALT_SIZE (64 * 1024)

static char *alt_base, *other_base;
static volatile uintptr_t outer_local, inner_local;
static volatile int in_flags = -2, set_ret = -2, set_errno, uc_flags = -2, nested_runs;
static void *volatile uc_sp;
static volatile size_t uc_size;

static int in_alt(uintptr_t p)
{
	return p >= (uintptr_t)alt_base && p < (uintptr_t)alt_base + ALT_SIZE;
}

static void on_usr2(int sig)
{
	volatile char here = 0;

	(void)sig;
	inner_local = (uintptr_t)&here;
	nested_runs++;
}

static void on_usr1(int sig, siginfo_t *si, void *ctx)
{
	volatile char here = 0;
	const ucontext_t *uc = ctx;
	stack_t cur, other = {.ss_sp = other_base, .ss_size = ALT_SIZE};

	(void)sig;
	(void)si;
	outer_local = (uintptr_t)&here;
	uc_sp = uc->uc_stack.ss_sp;
	uc_size = uc->uc_stack.ss_size;
	uc_flags = uc->uc_stack.ss_flags;
	maybe_save(); /* a checkpoint in a handler on a disarmed stack */
	if (sigaltstack(NULL, &cur) == 0)
		in_flags = cur.ss_flags;
	raise(SIGUSR2); /* nested, SA_ONSTACK: on the stack it is on */
	errno = 0;
	set_ret = sigaltstack(&other, NULL); /* disarmed: another may be set */
	set_errno = errno;
}

int main(void)
{
	struct sigaction sa = {0};
	stack_t ss, cur;

	alt_base = mmap(NULL, ALT_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	other_base =
	    mmap(NULL, ALT_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(alt_base != MAP_FAILED && other_base != MAP_FAILED);
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	sa.sa_handler = on_usr2;
	sa.sa_flags = SA_ONSTACK;
	CHECK_EQ(sigaction(SIGUSR2, &sa, NULL), 0);

	ss.ss_sp = alt_base;
	ss.ss_size = ALT_SIZE;
	ss.ss_flags = SS_AUTODISARM;
	CHECK_EQ(sigaltstack(&ss, NULL), 0);
	CHECK_EQ(sigaltstack(NULL, &cur), 0);
	CHECK_EQ(cur.ss_flags, (int)SS_AUTODISARM);

	raise(SIGUSR1);
	CHECK(in_alt(outer_local));
	CHECK_EQ(in_flags, SS_DISABLE);
	CHECK_EQ(set_ret, 0);
	CHECK_EQ(set_errno, 0);
	/* The frame holds the stack as it was before the handler. */
	CHECK(uc_sp == alt_base);
	CHECK_EQ(uc_size, ALT_SIZE);
	CHECK_EQ(uc_flags, (int)SS_AUTODISARM);
	CHECK_EQ(nested_runs, 1);
	CHECK(in_alt(inner_local));
	CHECK(inner_local < outer_local);
	/* rt_sigreturn put the saved one back, over what the handler set. */
	CHECK_EQ(sigaltstack(NULL, &cur), 0);
	CHECK(cur.ss_sp == alt_base);
	CHECK_EQ(cur.ss_size, ALT_SIZE);
	CHECK_EQ(cur.ss_flags, (int)SS_AUTODISARM);

	/* Without the flag the stack stays armed in the handler: EPERM to a change there. */
	ss.ss_flags = 0;
	CHECK_EQ(sigaltstack(&ss, NULL), 0);
	in_flags = set_ret = uc_flags = -2;
	raise(SIGUSR1);
	CHECK_EQ(in_flags, SS_ONSTACK);
	CHECK_EQ(set_ret, -1);
	CHECK_EQ(set_errno, EPERM);
	CHECK_EQ(uc_flags, 0);
	CHECK_EQ(nested_runs, 2);
	CHECK_EQ(sigaltstack(NULL, &cur), 0);
	CHECK(cur.ss_sp == alt_base);
	CHECK_EQ(cur.ss_flags, 0);
	return check_done();
}
