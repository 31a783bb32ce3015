/* Unit tests for the stubs' seccomp filter (platform/stubfilter.c), installed for real in a
 * forked child: a call from anywhere but the syscall instruction is trapped (SIGSYS with a
 * handler), one from it passes only if the Sentry could have injected it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "platform/stub.h"

/* The stand-in for the stub page's gadget: "syscall" and back. */
__asm__(".pushsection .text\n"
	".globl test_gadget\n"
	"test_gadget:\n"
	"	syscall\n"
	"	ret\n"
	".popsection\n");
extern const char test_gadget[];

#define MEMFD 1000 /* no such descriptor here */
#define THREAD_FLAGS                                                                               \
	(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM)

static long via_gadget(long nr, long a0, long a1, long a2, long a3, long a4)
{
	register long r10 __asm__("r10") = a3;
	register long r8 __asm__("r8") = a4;
	register long r9 __asm__("r9") = 0;
	long ret;

	/* Step over the red zone: the call pushes below the stack pointer. */
	__asm__ volatile("sub $128, %%rsp\n\tcall test_gadget\n\tadd $128, %%rsp"
			 : "=a"(ret)
			 : "a"(nr), "D"(a0), "S"(a1), "d"(a2), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

/* SIGSYS: leave through the gadget, as _exit's own call would be trapped again. */
static void trapped(int sig)
{
	(void)sig;
	via_gadget(SYS_exit, 42, 0, 0, 0, 0);
}

enum { ALLOWED = 0, TRAPPED = 42, KILLED = 128 + SIGSYS };

/* Runs CALL in a child under the filter; what became of it. */
static int under_filter(void (*call)(void))
{
	struct sock_filter f[STUB_MAX_FILTER];
	int n =
	    stub_filter_build(f, STUB_MAX_FILTER, (uint64_t)test_gadget + 2, MEMFD, THREAD_FLAGS);
	int st;

	assert_true(n > 6);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sock_fprog prog = {.len = (unsigned short)n, .filter = f};
		signal(SIGSYS, trapped);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
			_exit(99);
		call();
		via_gadget(SYS_exit, 0, 0, 0, 0, 0);
		_exit(98); /* not reached */
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void nothing(void)
{
}

static void getpid_directly(void)
{
	syscall(SYS_getpid);
}

static void getpid_via_gadget(void)
{
	via_gadget(SYS_getpid, 0, 0, 0, 0, 0);
}

static void munmap_nothing_via_gadget(void)
{
	via_gadget(SYS_munmap, 0, 0, 0, 0, 0);
}

static void mprotect_via_gadget(void)
{
	via_gadget(SYS_mprotect, 0, 4096, PROT_NONE, 0, 0);
}

static void mmap_anonymous_via_gadget(void)
{
	via_gadget(SYS_mmap, 0, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1);
}

static void mmap_other_fd_via_gadget(void)
{
	via_gadget(SYS_mmap, 0x10000, 4096, PROT_READ, MAP_SHARED | MAP_FIXED, 0);
}

static void mmap_memfd_via_gadget(void)
{
	/* Allowed through; the host then refuses it (no such descriptor here): EBADF. */
	if (via_gadget(SYS_mmap, 0x10000, 4096, PROT_READ, MAP_SHARED | MAP_FIXED, MEMFD) != -EBADF)
		via_gadget(SYS_exit, 97, 0, 0, 0, 0);
}

static void fork_via_gadget(void)
{
	via_gadget(SYS_clone, SIGCHLD, 0, 0, 0, 0);
}

static void exit_group_via_gadget(void)
{
	via_gadget(SYS_exit_group, 0, 0, 0, 0, 0);
}

static void test_a_call_from_elsewhere_is_trapped(void **state)
{
	(void)state;
	assert_int_equal(under_filter(getpid_directly), TRAPPED);
}

static void test_injected_calls_pass(void **state)
{
	(void)state;
	assert_int_equal(under_filter(nothing), ALLOWED); /* exit */
	assert_int_equal(under_filter(munmap_nothing_via_gadget), ALLOWED);
	assert_int_equal(under_filter(mprotect_via_gadget), ALLOWED);
	assert_int_equal(under_filter(mmap_memfd_via_gadget), ALLOWED);
}

static void test_other_calls_from_the_gadget_kill_the_stub(void **state)
{
	(void)state;
	assert_int_equal(under_filter(getpid_via_gadget), KILLED);
	assert_int_equal(under_filter(mmap_anonymous_via_gadget), KILLED);
	assert_int_equal(under_filter(mmap_other_fd_via_gadget), KILLED);
	assert_int_equal(under_filter(fork_via_gadget), KILLED);
	assert_int_equal(under_filter(exit_group_via_gadget), KILLED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_call_from_elsewhere_is_trapped),
	    cmocka_unit_test(test_injected_calls_pass),
	    cmocka_unit_test(test_other_calls_from_the_gadget_kill_the_stub),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
