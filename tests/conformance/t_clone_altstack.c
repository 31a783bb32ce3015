/*
 * t_clone_altstack: who keeps the creator's alternate signal stack across clone. Linux clears
 * it in a child that shares the address space (a thread, or a clone(CLONE_VM) process), and
 * keeps it in a fork child (a copy of the stack) and a vfork child (which borrows the parent's
 * stack while the parent sleeps). A thread created while its creator has an alternate stack
 * runs its SA_ONSTACK handlers on its own stack, so two threads can be in handlers at once:
 * here the main thread waits inside a handler on its alternate stack while a second thread
 * takes a signal, and the main handler's locals and frame come through intact. (A shared
 * alternate stack made the second frame overwrite the first, and the main thread returned
 * from its handler onto the other thread's stack: CPython's asyncio tests crashed so.)
 */
#include "check.h"
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#define ALT_SIZE (64 * 1024)
#define PATTERN_LEN 2048

static char *alt_base;

static int on_main_alt(uintptr_t p)
{
	return p >= (uintptr_t)alt_base && p < (uintptr_t)alt_base + ALT_SIZE;
}

/* What a thread saw: its alternate stack at start, and where its SA_ONSTACK handler ran. */
struct seen {
	int flags;
	uintptr_t sp, size, handler_local;
};

static volatile uintptr_t usr1_local;

static void on_usr1(int sig)
{
	volatile char here = 0;

	(void)sig;
	(void)here;
	usr1_local = (uintptr_t)&here;
}

static void install(int sig, void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = SA_ONSTACK;
	CHECK_EQ(sigaction(sig, &sa, NULL), 0);
}

/* To the calling thread itself: a clone(CLONE_VM) child shares the C library's idea of who
 * it is with its parent (musl's raise would signal the parent). */
static void raise_here(int sig)
{
	syscall(SYS_tgkill, syscall(SYS_getpid), syscall(SYS_gettid), sig);
}

static void look(struct seen *s)
{
	stack_t cur;

	s->flags = -1;
	if (sigaltstack(NULL, &cur) == 0) {
		s->flags = cur.ss_flags;
		s->sp = (uintptr_t)cur.ss_sp;
		s->size = cur.ss_size;
	}
	usr1_local = 0;
	raise_here(SIGUSR1);
	s->handler_local = usr1_local;
}

static void *thread_look(void *arg)
{
	look(arg);
	maybe_save(); /* the main thread's alternate stack set, this thread's not */
	return NULL;
}

static int clone_look(void *arg)
{
	look(arg);
	return 0;
}

static void test_who_keeps_it(void)
{
	stack_t ss;
	struct seen s;

	alt_base = mmap(NULL, ALT_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(alt_base != MAP_FAILED);
	ss.ss_sp = alt_base;
	ss.ss_size = ALT_SIZE;
	ss.ss_flags = 0;
	CHECK_EQ(sigaltstack(&ss, NULL), 0);
	install(SIGUSR1, on_usr1);

	/* A thread starts without one: its handler runs on its own stack. */
	pthread_t t;
	memset(&s, 0, sizeof(s));
	CHECK_EQ(pthread_create(&t, NULL, thread_look, &s), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(s.flags, SS_DISABLE);
	CHECK_EQ(s.size, 0);
	CHECK(s.handler_local != 0 && !on_main_alt(s.handler_local));

	/* So does a process made with CLONE_VM (no CLONE_VFORK). */
	char *stack =
	    mmap(NULL, ALT_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(stack != MAP_FAILED);
	memset(&s, 0, sizeof(s));
	pid_t pid = clone(clone_look, stack + ALT_SIZE, CLONE_VM | SIGCHLD, &s);
	CHECK(pid > 0);
	int status = -1;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
	CHECK_EQ(s.flags, SS_DISABLE);
	CHECK(s.handler_local != 0 && !on_main_alt(s.handler_local));
	munmap(stack, ALT_SIZE);

	/* A vfork child keeps it (Linux clears it only for CLONE_VM without CLONE_VFORK). */
	memset(&s, 0, sizeof(s));
	pid = vfork();
	if (pid == 0) {
		stack_t c;
		if (sigaltstack(NULL, &c) == 0) {
			s.flags = c.ss_flags;
			s.sp = (uintptr_t)c.ss_sp;
			s.size = c.ss_size;
		}
		_exit(0);
	}
	CHECK(pid > 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(s.flags, 0);
	CHECK_EQ(s.sp, (uintptr_t)alt_base);
	CHECK_EQ(s.size, ALT_SIZE);

	/* And a fork child. */
	pid = fork();
	if (pid == 0) {
		look(&s);
		_exit(s.flags == 0 && s.sp == (uintptr_t)alt_base && s.size == ALT_SIZE &&
			      on_main_alt(s.handler_local)
			  ? 0
			  : 1);
	}
	CHECK(pid > 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);

	/* The creator's own is unchanged. */
	CHECK_EQ(sigaltstack(NULL, &ss), 0);
	CHECK_EQ(ss.ss_flags, 0);
	CHECK_EQ(ss.ss_sp, alt_base);
}

/* Two threads in SA_ONSTACK handlers at once. */
static volatile int main_in_handler, thread_handled;
static volatile int pattern_ok = -1;

static int wait_for(volatile int *flag)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!*flag) {
		sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > 5)
			return 0;
	}
	return 1;
}

static void on_usr2_main(int sig)
{
	volatile unsigned char mine[PATTERN_LEN];

	(void)sig;
	for (int i = 0; i < PATTERN_LEN; i++)
		mine[i] = (unsigned char)(i * 7 + 1);
	main_in_handler = 1;
	int ok = wait_for(&thread_handled);
	for (int i = 0; i < PATTERN_LEN && ok; i++)
		ok = mine[i] == (unsigned char)(i * 7 + 1);
	pattern_ok = ok;
}

static void on_usr2_thread(int sig)
{
	volatile unsigned char theirs[PATTERN_LEN];

	(void)sig;
	for (int i = 0; i < PATTERN_LEN; i++)
		theirs[i] = 0xee;
	(void)theirs[0];
}

static void *thread_signalled(void *arg)
{
	(void)arg;
	if (!wait_for(&main_in_handler))
		return NULL;
	raise(SIGUSR2); /* this thread's: same handler table, so swap to the thread's handler */
	thread_handled = 1;
	return NULL;
}

static void thread_handler(int sig)
{
	if (pthread_self() == *(pthread_t *)&alt_base[0])
		on_usr2_main(sig);
	else
		on_usr2_thread(sig);
}

/* In a child process, so that a broken kernel's crash is a reported failure. */
static void test_two_handlers_at_once(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		pthread_t t;
		/* The handler tells the threads apart by the main thread's id, kept where neither
		 * handler's frame reaches: the bottom of the alternate stack. */
		*(pthread_t *)&alt_base[0] = pthread_self();
		install(SIGUSR2, thread_handler);
		if (pthread_create(&t, NULL, thread_signalled, NULL))
			_exit(2);
		raise(SIGUSR2);
		pthread_join(t, NULL);
		_exit(pattern_ok == 1 && thread_handled ? 0 : 1);
	}
	int status = -1;
	CHECK(pid > 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
}

int main(void)
{
	test_who_keeps_it();
	test_two_handlers_at_once();
	return check_done();
}
