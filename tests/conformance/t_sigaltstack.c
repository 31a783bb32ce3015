/*
 * t_sigaltstack: alternate signal stacks. Initially disabled; an SA_ONSTACK handler runs on
 * the registered stack (a local's address lies inside it) and sigaltstack there reports
 * SS_ONSTACK and refuses changes with EPERM; handlers without SA_ONSTACK, or with the stack
 * disabled, run on the normal stack; bad sizes and flags fail; a forked child inherits the
 * setting, a new thread starts without one; a thread overflowing its stack catches the
 * SIGSEGV on its alternate stack. A checkpoint taken in a handler running on the alternate
 * stack leaves it there.
 */
#include "check.h"
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define ALT_SIZE (64 * 1024)

static char *alt_base;
static volatile uintptr_t handler_local;
static volatile int handler_flags, handler_set_errno, handler_runs, save_in_handler;

static void on_usr1(int sig)
{
	volatile char here = 0;
	stack_t cur, attempt;

	(void)sig;
	(void)here;
	if (save_in_handler) {
		save_in_handler = 0;
		maybe_save(); /* a signal frame on the alternate stack */
	}
	handler_local = (uintptr_t)&here;
	handler_flags = -1;
	if (sigaltstack(NULL, &cur) == 0)
		handler_flags = cur.ss_flags;
	/* Changing the stack we are running on is refused. */
	attempt.ss_sp = alt_base;
	attempt.ss_size = ALT_SIZE;
	attempt.ss_flags = 0;
	handler_set_errno = sigaltstack(&attempt, NULL) == 0 ? 0 : errno;
	handler_runs++;
}

static int on_alt_stack(uintptr_t p)
{
	return p >= (uintptr_t)alt_base && p < (uintptr_t)alt_base + ALT_SIZE;
}

static void install(int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = flags;
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
}

static void test_alt_stack_basics(void)
{
	stack_t ss, old;

	/* Nothing registered at start. */
	CHECK_EQ(sigaltstack(NULL, &old), 0);
	CHECK_EQ(old.ss_flags, SS_DISABLE);

	alt_base = mmap(NULL, ALT_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(alt_base != MAP_FAILED);
	ss.ss_sp = alt_base;
	ss.ss_size = ALT_SIZE;
	ss.ss_flags = 0;
	CHECK_EQ(sigaltstack(&ss, &old), 0);
	CHECK_EQ(old.ss_flags, SS_DISABLE);
	CHECK_EQ(sigaltstack(NULL, &old), 0);
	CHECK_EQ(old.ss_sp, alt_base);
	CHECK_EQ(old.ss_size, ALT_SIZE);
	CHECK_EQ(old.ss_flags, 0);

	/* SA_ONSTACK: the handler's frame is on the alternate stack. */
	install(SA_ONSTACK);
	handler_runs = 0;
	save_in_handler = 1;
	CHECK_EQ(raise(SIGUSR1), 0);
	CHECK_EQ(handler_runs, 1);
	CHECK(on_alt_stack(handler_local));
	CHECK_EQ(handler_flags, SS_ONSTACK);
	CHECK_EQ(handler_set_errno, EPERM);
	/* Back on the normal stack. */
	CHECK_EQ(sigaltstack(NULL, &old), 0);
	CHECK_EQ(old.ss_flags, 0);
	volatile char local = 0;
	CHECK(!on_alt_stack((uintptr_t)&local));

	/* Without SA_ONSTACK the handler stays on the normal stack. */
	install(0);
	CHECK_EQ(raise(SIGUSR1), 0);
	CHECK_EQ(handler_runs, 2);
	CHECK(!on_alt_stack(handler_local));
	CHECK_EQ(handler_flags, 0);
	CHECK_EQ(handler_set_errno, 0); /* not on it, so it could be replaced */

	/* Errors: too small, bad flags. */
	ss.ss_size = 1024; /* below the kernel's MINSIGSTKSZ (2048) */
	CHECK_ERR(sigaltstack(&ss, NULL), ENOMEM);
	ss.ss_size = ALT_SIZE;
	ss.ss_flags = 0x1234;
	CHECK_ERR(sigaltstack(&ss, NULL), EINVAL);
	ss.ss_flags = 0;
	CHECK_ERR(syscall(SYS_sigaltstack, BAD_PTR, NULL), EFAULT); /* musl reads *ss first */
	CHECK_EQ(sigaltstack(&ss, NULL), 0);

	/* A forked child inherits it. */
	pid_t pid = fork();
	if (pid == 0) {
		stack_t c;
		install(SA_ONSTACK);
		raise(SIGUSR1);
		_exit(sigaltstack(NULL, &c) == 0 && c.ss_sp == alt_base && c.ss_size == ALT_SIZE &&
			      on_alt_stack(handler_local)
			  ? 0
			  : 1);
	}
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);

	/* SS_DISABLE: SA_ONSTACK handlers fall back to the normal stack. */
	ss.ss_flags = SS_DISABLE;
	CHECK_EQ(sigaltstack(&ss, NULL), 0);
	CHECK_EQ(sigaltstack(NULL, &old), 0);
	CHECK_EQ(old.ss_flags, SS_DISABLE);
	install(SA_ONSTACK);
	CHECK_EQ(raise(SIGUSR1), 0);
	CHECK(!on_alt_stack(handler_local));
	CHECK_EQ(handler_flags, SS_DISABLE);
	signal(SIGUSR1, SIG_DFL);
}

/* Stack overflow in a thread with a small stack, caught on its own alternate stack. */
static __thread sigjmp_buf overflow_jmp;
static __thread char *thread_alt;
static volatile uintptr_t segv_local, segv_addr;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	volatile char here = 0;

	(void)sig;
	(void)uc;
	(void)here;
	segv_local = (uintptr_t)&here;
	segv_addr = (uintptr_t)si->si_addr;
	siglongjmp(overflow_jmp, 1);
}

/* Far deeper than any thread stack here: the bound only keeps the compiler quiet. */
static volatile long recurse_limit = 1L << 40;

static int recurse(volatile char *prev, long depth)
{
	volatile char frame[512];

	if (depth > recurse_limit)
		return 0;
	frame[0] = prev ? prev[0] + 1 : 0;
	return recurse(frame, depth + 1) + frame[1]; /* not a tail call */
}

struct overflow_result {
	int initial_flags, caught, on_alt;
	uintptr_t stack_lo, stack_hi;
};

static void *overflow_thread(void *arg)
{
	struct overflow_result *r = arg;
	stack_t ss;

	/* A new thread has no alternate stack. */
	r->initial_flags = sigaltstack(NULL, &ss) == 0 ? ss.ss_flags : -1;
	thread_alt = malloc(ALT_SIZE);
	ss.ss_sp = thread_alt;
	ss.ss_size = ALT_SIZE;
	ss.ss_flags = 0;
	if (!thread_alt || sigaltstack(&ss, NULL) != 0)
		return NULL;
	if (sigsetjmp(overflow_jmp, 1) == 0) {
		recurse(NULL, 0);
		return NULL;
	}
	r->caught = 1;
	r->on_alt =
	    segv_local >= (uintptr_t)thread_alt && segv_local < (uintptr_t)thread_alt + ALT_SIZE;
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	free(thread_alt);
	return NULL;
}

static void test_overflow_on_alt_stack(void)
{
	struct sigaction sa;
	pthread_attr_t attr;
	pthread_t t;
	struct overflow_result r = {.initial_flags = -2};

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	CHECK_EQ(sigaction(SIGSEGV, &sa, NULL), 0);
	CHECK_EQ(pthread_attr_init(&attr), 0);
	CHECK_EQ(pthread_attr_setstacksize(&attr, 256 * 1024), 0);
	CHECK_EQ(pthread_create(&t, &attr, overflow_thread, &r), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(pthread_attr_destroy(&attr), 0);
	CHECK_EQ(r.initial_flags, SS_DISABLE);
	CHECK_EQ(r.caught, 1);
	CHECK_EQ(r.on_alt, 1);
	CHECK(segv_addr != 0);
	signal(SIGSEGV, SIG_DFL);
}

int main(void)
{
	test_alt_stack_basics();
	test_overflow_on_alt_stack();
	return check_done();
}
