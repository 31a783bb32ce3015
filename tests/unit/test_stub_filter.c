/* Unit tests for the stubs' seccomp filter (platform/stubfilter.c), installed for real in a
 * forked child: a call from anywhere but the syscall instruction is trapped (SIGSYS with a
 * handler), one from it passes only if the Sentry could have injected it. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "platform/stub.h"
#include "platform/systrap.h"

/* The stand-in for the stub page's gadget: "syscall" and back. */
__asm__(".pushsection .text\n"
	".globl test_gadget\n"
	"test_gadget:\n"
	"	syscall\n"
	"	ret\n"
	/* And the seccomp platform's, a few bytes on (the filter wants both in one page). */
	".balign 16\n"
	".globl test_gadget2\n"
	"test_gadget2:\n"
	"	syscall\n"
	"	ret\n"
	".popsection\n");
extern const char test_gadget[], test_gadget2[];

/* Where the filters are told the stub lies (nothing is mapped there in the test), its first
 * thread area, and the seccomp platform's range. */
#define STUB_BASE 0x7e0000000000UL
#define STUB_LEN (64 * 1024UL + 4096 * 16384UL)
#define AREA (STUB_BASE + 64 * 1024UL)
#define MEMFD 1000 /* no such descriptor here */
#define SYSFD 1001
#define DOORBELL 1002
#define FDSOCK 1003
/* The parameter page's message, where the filters are told it lies. */
#define FDMSG STUB_FDMSG_ADDR(STUB_BASE)
#define SYSTRAP_FLAGS                                                                              \
	(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |        \
	 CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID)

/* Whether the filters are built for the seccomp platform (its descriptors and rows). */
static bool systrap;
#define FORK_FLAGS (CLONE_PTRACE | SIGCHLD)
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

static long via_gadget2(long nr, long a0, long a1, long a2, long a3)
{
	register long r10 __asm__("r10") = a3;
	long ret;

	__asm__ volatile("sub $128, %%rsp\n\tcall test_gadget2\n\tadd $128, %%rsp"
			 : "=a"(ret)
			 : "a"(nr), "D"(a0), "S"(a1), "d"(a2), "r"(r10)
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

/* Which filters a child runs under: a stub's, the factory's, or a stub forked from the factory
 * (the factory's with the stub's stacked on it). */
enum which { STUB, FACTORY, STACKED };

/* The only filter the factory's allows to be installed: the stub's, at this address. */
static struct sock_fprog stub_prog;
static struct sock_filter stub_f[STUB_MAX_FILTER];

static int build(struct sock_filter *f, bool factory)
{
	struct stub_filter_spec spec = {
	    .ip = (uint64_t)test_gadget + 2,
	    .ip2 = (uint64_t)test_gadget2 + 2,
	    .memfd = MEMFD,
	    .sysfd = systrap ? SYSFD : -1,
	    .doorbell = systrap ? DOORBELL : -1,
	    .systrap_thread_flags = SYSTRAP_FLAGS,
	    .thread_flags = THREAD_FLAGS,
	    .fork_flags = factory ? FORK_FLAGS : 0,
	    .stub_prog = factory ? (uint64_t)&stub_prog : 0,
	    .stub_base = STUB_BASE,
	    .stub_len = STUB_LEN,
	    .fdsock = FDSOCK,
	};
	return stub_filter_build(f, STUB_MAX_FILTER, &spec);
}

/* Runs CALL in a child under the filters WHICH; what became of it. */
static int under(enum which which, void (*call)(void))
{
	struct sock_filter f[STUB_MAX_FILTER];
	int n = build(which == STUB ? stub_f : f, which != STUB), st;

	assert_true(n > 6);
	if (which != STUB) {
		int m = build(stub_f, false);
		assert_true(m > 6);
		stub_prog = (struct sock_fprog){.len = (unsigned short)m, .filter = stub_f};
	}
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sock_fprog prog = {.len = (unsigned short)n,
					  .filter = which == STUB ? stub_f : f};
		signal(SIGSYS, trapped);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
			_exit(99);
		/* As the Sentry does in a new stub: through the gadget, the factory's filter. */
		if (which == STACKED &&
		    via_gadget(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, (long)&stub_prog, 0, 0))
			_exit(96);
		call();
		via_gadget(SYS_exit, 0, 0, 0, 0, 0);
		_exit(98); /* not reached */
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int under_filter(void (*call)(void))
{
	return under(STUB, call);
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

/* The text of a program from the file cache is mapped present at once (sentry/mm.c). */
static void mmap_memfd_populated_via_gadget(void)
{
	if (via_gadget(SYS_mmap, 0x10000, 4096, PROT_READ, MAP_SHARED | MAP_FIXED | MAP_POPULATE,
		       MEMFD) != -EBADF)
		via_gadget(SYS_exit, 97, 0, 0, 0, 0);
}

/* Any other flag with the memory file: refused. */
static void mmap_memfd_locked_via_gadget(void)
{
	via_gadget(SYS_mmap, 0x10000, 4096, PROT_READ, MAP_SHARED | MAP_FIXED | MAP_LOCKED, MEMFD);
}

/* A stub's userfaultfd to the Sentry (docs/security.md, "A stub's userfaultfd"): sendmsg of
 * the parameter page's message on the stubs' socket, in the one form the Sentry injects. */
static void send_fd_via_gadget(void)
{
	/* Allowed through; the host then refuses it (no such descriptor here): EBADF. */
	if (via_gadget(SYS_sendmsg, FDSOCK, FDMSG, MSG_DONTWAIT | MSG_NOSIGNAL, 0, 0) != -EBADF)
		via_gadget(SYS_exit, 97, 0, 0, 0, 0);
}

static void send_fd_on_another_socket_via_gadget(void)
{
	via_gadget(SYS_sendmsg, MEMFD, FDMSG, MSG_DONTWAIT | MSG_NOSIGNAL, 0, 0);
}

static void send_another_message_via_gadget(void)
{
	via_gadget(SYS_sendmsg, FDSOCK, FDMSG + 8, MSG_DONTWAIT | MSG_NOSIGNAL, 0, 0);
}

static void send_fd_blocking_via_gadget(void)
{
	via_gadget(SYS_sendmsg, FDSOCK, FDMSG, MSG_NOSIGNAL, 0, 0);
}

static void sendto_via_gadget(void)
{
	via_gadget(SYS_sendto, FDSOCK, FDMSG, 1, MSG_DONTWAIT | MSG_NOSIGNAL, 0);
}

static void recvmsg_via_gadget(void)
{
	via_gadget(SYS_recvmsg, FDSOCK, FDMSG, MSG_DONTWAIT, 0, 0);
}

static void fork_via_gadget(void)
{
	via_gadget(SYS_clone, SIGCHLD, 0, 0, 0, 0);
}

/* The fork's child leaves at once; the parent goes on to exit through the gadget. */
static void fork_and_leave_via_gadget(void)
{
	if (via_gadget(SYS_clone, FORK_FLAGS, 0, 0, 0, 0) == 0)
		via_gadget(SYS_exit, 0, 0, 0, 0, 0);
}

static void setsid_via_gadget(void)
{
	via_gadget(SYS_setsid, 0, 0, 0, 0, 0);
}

static void install_stub_filter_via_gadget(void)
{
	via_gadget(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, (long)&stub_prog, 0, 0);
}

static void install_another_filter_via_gadget(void)
{
	via_gadget(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, (long)&stub_prog + 8, 0, 0);
}

static void exit_group_via_gadget(void)
{
	via_gadget(SYS_exit_group, 0, 0, 0, 0, 0);
}

static const char eight[8];
static int word;

/* The handler's forms, naming its area (unmapped here: the host answers EBADF or EFAULT). */
static void ring_doorbell_via_gadget2(void)
{
	/* Allowed through; no such descriptor here: EBADF. */
	if (via_gadget2(SYS_write, DOORBELL, AREA + offsetof(struct systrap_area, one), 8, 0) !=
	    -EBADF)
		via_gadget(SYS_exit, 97, 0, 0, 0, 0);
}

static void ring_doorbell_short_via_gadget2(void)
{
	via_gadget2(SYS_write, DOORBELL, AREA + offsetof(struct systrap_area, one), 4, 0);
}

/* Any 8 bytes of the guest's own rather than its area's `one`. */
static void ring_doorbell_from_elsewhere_via_gadget2(void)
{
	via_gadget2(SYS_write, DOORBELL, (long)eight, 8, 0);
}

static void write_stdout_via_gadget2(void)
{
	via_gadget2(SYS_write, 1, (long)eight, 8, 0);
}

static void futex_wake_via_gadget2(void)
{
	if (via_gadget2(SYS_futex, AREA, FUTEX_WAKE, 1, 0) != -EFAULT)
		via_gadget(SYS_exit, 97, 0, 0, 0, 0);
}

static void futex_wait_via_gadget2(void)
{
	if (via_gadget2(SYS_futex, AREA + SYSTRAP_AREA, FUTEX_WAIT, 0, 0) != -EFAULT)
		via_gadget(SYS_exit, 97, 0, 0, 0, 0);
}

/* Its own thread's policy, the priority read from its area (unmapped here: EFAULT). */
static void batch_via_gadget2(void)
{
	if (via_gadget2(SYS_sched_setscheduler, 0, SCHED_BATCH,
			AREA + offsetof(struct systrap_area, args[5]), 0) != -EFAULT)
		via_gadget(SYS_exit, 97, 0, 0, 0, 0);
}

static void normal_via_gadget2(void)
{
	if (via_gadget2(SYS_sched_setscheduler, 0, SCHED_OTHER,
			AREA + offsetof(struct systrap_area, args[5]), 0) != -EFAULT)
		via_gadget(SYS_exit, 97, 0, 0, 0, 0);
}

/* Another thread's policy, a real-time one, the priority from the guest's own memory. */
static void batch_other_thread_via_gadget2(void)
{
	via_gadget2(SYS_sched_setscheduler, 1, SCHED_BATCH,
		    AREA + offsetof(struct systrap_area, args[5]), 0);
}

static void fifo_via_gadget2(void)
{
	via_gadget2(SYS_sched_setscheduler, 0, SCHED_FIFO,
		    AREA + offsetof(struct systrap_area, args[5]), 0);
}

static void batch_priority_elsewhere_via_gadget2(void)
{
	via_gadget2(SYS_sched_setscheduler, 0, SCHED_BATCH, (long)&word, 0);
}

/* A futex of the guest's own memory, a wait with a timeout, a wake of all. */
static void futex_wake_elsewhere_via_gadget2(void)
{
	via_gadget2(SYS_futex, (long)&word, FUTEX_WAKE, 1, 0);
}

static void futex_wait_with_timeout_via_gadget2(void)
{
	static const struct timespec ts = {0, 1000};
	via_gadget2(SYS_futex, AREA, FUTEX_WAIT, 0, (long)&ts);
}

static void futex_wake_all_via_gadget2(void)
{
	via_gadget2(SYS_futex, AREA, FUTEX_WAKE, 0x7fffffff, 0);
}

static void futex_requeue_via_gadget2(void)
{
	via_gadget2(SYS_futex, (long)&word, FUTEX_CMP_REQUEUE, 1, 0);
}

static void sigaltstack_via_gadget2(void)
{
	if (via_gadget2(SYS_sigaltstack, AREA + SYSTRAP_START_SS_OFF, 0, 0, 0) != -EFAULT)
		via_gadget(SYS_exit, 97, 0, 0, 0, 0);
}

/* Reading the old stack, or a stack_t of the guest's own. */
static void sigaltstack_old_via_gadget2(void)
{
	stack_t old;

	via_gadget2(SYS_sigaltstack, 0, (long)&old, 0, 0);
}

static void sigaltstack_elsewhere_via_gadget2(void)
{
	static const stack_t ss = {.ss_flags = SS_DISABLE};
	via_gadget2(SYS_sigaltstack, (long)&ss, 0, 0, 0);
}

static void unblock_all_via_gadget2(void)
{
	if (via_gadget2(SYS_rt_sigprocmask, SIG_UNBLOCK, AREA + SYSTRAP_START_SET_OFF, 0, 8) !=
	    -EFAULT)
		via_gadget(SYS_exit, 97, 0, 0, 0, 0);
}

/* Blocking (the Sentry's stop signal, SIGSYS) or setting a mask, from the same place. */
static void block_via_gadget2(void)
{
	via_gadget2(SYS_rt_sigprocmask, SIG_BLOCK, AREA + SYSTRAP_START_SET_OFF, 0, 8);
}

static void setmask_via_gadget2(void)
{
	via_gadget2(SYS_rt_sigprocmask, SIG_SETMASK, AREA + SYSTRAP_START_SET_OFF, 0, 8);
}

/* A thread of the handler's form but on a stack of the guest's choosing. */
static void thread_on_own_stack_via_gadget(void)
{
	static char stack[4096];
	via_gadget(SYS_clone, SYSTRAP_FLAGS, (long)(stack + sizeof(stack)), 0,
		   AREA + offsetof(struct systrap_area, tid), 0);
}

/* An area: a slot of the areas' file (never slot 0, the page shared with every stub), mapped
 * read-write as a whole area at an area's place. */
static long map_sysfd(long addr, long len, long prot, long offset)
{
	register long r10 __asm__("r10") = MAP_SHARED | MAP_FIXED;
	register long r8 __asm__("r8") = SYSFD;
	register long r9 __asm__("r9") = offset;
	long ret;

	__asm__ volatile("sub $128, %%rsp\n\tcall test_gadget\n\tadd $128, %%rsp"
			 : "=a"(ret)
			 : "a"((long)SYS_mmap), "D"(addr), "S"(len), "d"(prot), "r"(r10), "r"(r8),
			   "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

static void mmap_sysfd_via_gadget(void)
{
	if (map_sysfd(AREA, SYSTRAP_AREA, PROT_READ | PROT_WRITE, 5 * SYSTRAP_AREA) != -EBADF)
		via_gadget(SYS_exit, 97, 0, 0, 0, 0);
}

static void mmap_sysfd_shared_page_via_gadget(void)
{
	map_sysfd(AREA, SYSTRAP_AREA, PROT_READ | PROT_WRITE, 0);
}

static void mmap_sysfd_elsewhere_via_gadget(void)
{
	map_sysfd(0x10000, SYSTRAP_AREA, PROT_READ | PROT_WRITE, 5 * SYSTRAP_AREA);
}

static void mmap_sysfd_executable_via_gadget(void)
{
	map_sysfd(AREA, SYSTRAP_AREA, PROT_READ | PROT_EXEC, 5 * SYSTRAP_AREA);
}

/* Mapping calls that start in the stub's range. */
static void mprotect_stub_via_gadget(void)
{
	via_gadget(SYS_mprotect, STUB_BASE, 4096, PROT_READ | PROT_WRITE, 0, 0);
}

static void munmap_stub_via_gadget(void)
{
	via_gadget(SYS_munmap, STUB_BASE + 8192, 4096, 0, 0, 0);
}

static void mmap_memfd_over_stub_via_gadget(void)
{
	via_gadget(SYS_mmap, AREA, 4096, PROT_READ, MAP_SHARED | MAP_FIXED, MEMFD);
}

static void mmap_memfd_populated_over_stub_via_gadget(void)
{
	via_gadget(SYS_mmap, AREA, 4096, PROT_READ, MAP_SHARED | MAP_FIXED | MAP_POPULATE, MEMFD);
}

static void mprotect_above_stub_via_gadget(void)
{
	/* Allowed through; nothing mapped there: ENOMEM. */
	if (via_gadget(SYS_mprotect, STUB_BASE + STUB_LEN, 4096, PROT_READ, 0, 0) != -ENOMEM)
		via_gadget(SYS_exit, 97, 0, 0, 0, 0);
}

static void pdeathsig_via_gadget(void)
{
	via_gadget(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
}

static void getpid_via_gadget2(void)
{
	via_gadget2(SYS_getpid, 0, 0, 0, 0);
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
	assert_int_equal(under_filter(mmap_memfd_populated_via_gadget), ALLOWED);
}

/* No mapping call may start in the stub's range, whichever platform. */
static void test_nothing_maps_protects_or_unmaps_from_within_the_stub(void **state)
{
	(void)state;
	assert_int_equal(under_filter(mprotect_above_stub_via_gadget), ALLOWED);
	assert_int_equal(under_filter(mprotect_stub_via_gadget), KILLED);
	assert_int_equal(under_filter(munmap_stub_via_gadget), KILLED);
	assert_int_equal(under_filter(mmap_memfd_over_stub_via_gadget), KILLED);
	assert_int_equal(under_filter(mmap_memfd_populated_over_stub_via_gadget), KILLED);
	systrap = true;
	assert_int_equal(under_filter(mprotect_stub_via_gadget), TRAPPED);
	assert_int_equal(under_filter(munmap_stub_via_gadget), TRAPPED);
	assert_int_equal(under_filter(mmap_memfd_over_stub_via_gadget), TRAPPED);
	systrap = false;
}

static void test_other_calls_from_the_gadget_kill_the_stub(void **state)
{
	(void)state;
	assert_int_equal(under_filter(getpid_via_gadget), KILLED);
	assert_int_equal(under_filter(mmap_anonymous_via_gadget), KILLED);
	assert_int_equal(under_filter(mmap_other_fd_via_gadget), KILLED);
	assert_int_equal(under_filter(mmap_memfd_locked_via_gadget), KILLED);
	assert_int_equal(under_filter(fork_via_gadget), KILLED);
	assert_int_equal(under_filter(exit_group_via_gadget), KILLED);
}

/* The stubs' socket carries the one message, in the one form; nothing else of sockets. */
static void test_a_stub_sends_only_its_message_on_its_socket(void **state)
{
	(void)state;
	for (int sys = 0; sys < 2; sys++) {
		systrap = sys;
		int refused = sys ? TRAPPED : KILLED;
		assert_int_equal(under_filter(send_fd_via_gadget), ALLOWED);
		assert_int_equal(under(STACKED, send_fd_via_gadget), ALLOWED);
		assert_int_equal(under_filter(send_fd_on_another_socket_via_gadget), refused);
		assert_int_equal(under_filter(send_another_message_via_gadget), refused);
		assert_int_equal(under_filter(send_fd_blocking_via_gadget), refused);
		assert_int_equal(under_filter(sendto_via_gadget), refused);
		assert_int_equal(under_filter(recvmsg_via_gadget), refused);
	}
	systrap = false;
}

static void test_the_factory_forks_and_installs_only_the_stub_filter(void **state)
{
	(void)state;
	assert_int_equal(under(FACTORY, getpid_directly), TRAPPED);
	assert_int_equal(under(FACTORY, fork_and_leave_via_gadget), ALLOWED);
	assert_int_equal(under(FACTORY, install_stub_filter_via_gadget), ALLOWED);
	assert_int_equal(under(FACTORY, setsid_via_gadget), ALLOWED);
	assert_int_equal(under(FACTORY, fork_via_gadget), KILLED); /* untraced: other flags */
	assert_int_equal(under(FACTORY, mmap_memfd_via_gadget), ALLOWED);
	assert_int_equal(under(FACTORY, install_another_filter_via_gadget), KILLED);
	assert_int_equal(under(FACTORY, getpid_via_gadget), KILLED);
	assert_int_equal(under(FACTORY, mmap_anonymous_via_gadget), KILLED);
}

/* A stub forked from the factory holds both filters: the factory's extra calls are gone. */
static void test_a_stub_of_the_factory_can_neither_fork_nor_refilter(void **state)
{
	(void)state;
	assert_int_equal(under(STACKED, nothing), ALLOWED);
	assert_int_equal(under(STACKED, mprotect_via_gadget), ALLOWED);
	assert_int_equal(under(STACKED, mmap_memfd_via_gadget), ALLOWED);
	assert_int_equal(under(STACKED, mmap_memfd_populated_via_gadget), ALLOWED);
	assert_int_equal(under(STACKED, getpid_directly), TRAPPED);
	assert_int_equal(under(STACKED, fork_via_gadget), KILLED);
	assert_int_equal(under(STACKED, install_stub_filter_via_gadget), KILLED);
	assert_int_equal(under(STACKED, setsid_via_gadget), KILLED);
}

/* The seccomp platform's handler: its doorbell, its futex, its signal stack, its areas'
 * memory file, from either gadget; nothing of it when the filter is built for ptrace. */
/* Each of the handler's calls only in the form it makes it (docs/security.md, "Layer 4"):
 * what a guest jumping to the handler's gadget with its own registers may still do. */
static void test_the_handler_calls_are_pinned_to_their_own_form(void **state)
{
	(void)state;
	systrap = true;
	assert_int_equal(under_filter(ring_doorbell_from_elsewhere_via_gadget2), TRAPPED);
	assert_int_equal(under_filter(futex_wake_elsewhere_via_gadget2), TRAPPED);
	assert_int_equal(under_filter(futex_wait_with_timeout_via_gadget2), TRAPPED);
	assert_int_equal(under_filter(futex_wake_all_via_gadget2), TRAPPED);
	assert_int_equal(under_filter(sigaltstack_old_via_gadget2), TRAPPED);
	assert_int_equal(under_filter(sigaltstack_elsewhere_via_gadget2), TRAPPED);
	assert_int_equal(under_filter(block_via_gadget2), TRAPPED);
	assert_int_equal(under_filter(setmask_via_gadget2), TRAPPED);
	assert_int_equal(under_filter(thread_on_own_stack_via_gadget), TRAPPED);
	assert_int_equal(under_filter(mmap_sysfd_shared_page_via_gadget), TRAPPED);
	assert_int_equal(under_filter(mmap_sysfd_elsewhere_via_gadget), TRAPPED);
	assert_int_equal(under_filter(mmap_sysfd_executable_via_gadget), TRAPPED);
	assert_int_equal(under_filter(batch_other_thread_via_gadget2), TRAPPED);
	assert_int_equal(under_filter(fifo_via_gadget2), TRAPPED);
	assert_int_equal(under_filter(batch_priority_elsewhere_via_gadget2), TRAPPED);
	assert_int_equal(under(STACKED, block_via_gadget2), TRAPPED);
	assert_int_equal(under(STACKED, unblock_all_via_gadget2), ALLOWED);
	systrap = false;
}

static void test_the_seccomp_platform_rows(void **state)
{
	(void)state;
	systrap = true;
	assert_int_equal(under_filter(ring_doorbell_via_gadget2), ALLOWED);
	assert_int_equal(under_filter(futex_wake_via_gadget2), ALLOWED);
	assert_int_equal(under_filter(sigaltstack_via_gadget2), ALLOWED);
	assert_int_equal(under_filter(mmap_sysfd_via_gadget), ALLOWED);
	assert_int_equal(under_filter(futex_wait_via_gadget2), ALLOWED);
	assert_int_equal(under_filter(unblock_all_via_gadget2), ALLOWED);
	assert_int_equal(under_filter(batch_via_gadget2), ALLOWED);
	assert_int_equal(under_filter(normal_via_gadget2), ALLOWED);
	/* Refused calls trap to the handler (the Sentry answers SIGSEGV), not kill. */
	assert_int_equal(under_filter(ring_doorbell_short_via_gadget2), TRAPPED);
	assert_int_equal(under_filter(write_stdout_via_gadget2), TRAPPED);
	assert_int_equal(under_filter(futex_requeue_via_gadget2), TRAPPED);
	assert_int_equal(under_filter(getpid_via_gadget2), TRAPPED);
	assert_int_equal(under(FACTORY, pdeathsig_via_gadget), ALLOWED);
	assert_int_equal(under(STACKED, pdeathsig_via_gadget), TRAPPED);
	assert_int_equal(under(STACKED, ring_doorbell_via_gadget2), ALLOWED);
	systrap = false;
	assert_int_equal(under_filter(ring_doorbell_via_gadget2), KILLED);
	assert_int_equal(under_filter(mmap_sysfd_via_gadget), KILLED);
	assert_int_equal(under_filter(futex_wake_via_gadget2), KILLED);
	assert_int_equal(under_filter(batch_via_gadget2), KILLED);
}

/* The programs the build compiled, with a start's descriptors and addresses put in, are
 * instruction for instruction what libseccomp compiles for them now: for each platform, for a
 * stub and for the factory, over many places and descriptor numbers. */
static void test_built_filters_are_what_libseccomp_compiles_at_run_time(void **state)
{
	struct sock_filter built[STUB_MAX_FILTER], now[STUB_MAX_FILTER];
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	(void)state;
	for (int i = 0; i < 64; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t base = (0x7e00ULL - (x & 63)) << 32;
		struct stub_filter_spec spec = {
		    .ip = base + 2,
		    .ip2 = base + 0x42,
		    .memfd = 3 + (int)(x % 1000),
		    .thread_flags = STUB_THREAD_FLAGS,
		    .sysfd = i & 1 ? 4000 + (int)(x >> 20) % 1000 : -1,
		    .doorbell = i & 1 ? 5000 + (int)(x >> 30) % 1000 : -1,
		    .systrap_thread_flags = SYSTRAP_THREAD_FLAGS,
		    .fork_flags = i & 2 ? STUB_FORK_FLAGS : 0,
		    .stub_prog = i & 2 ? base + 4096 + 8 * (x >> 50 & 63) : 0,
		    .stub_base = base,
		    .stub_len = i & 1 ? STUB_LEN : 8192,
		    .fdsock = 6000 + (int)(x >> 40) % 1000,
		};
		int n = stub_filter_build(built, STUB_MAX_FILTER, &spec);
		int m = stub_filter_compile(now, STUB_MAX_FILTER, &spec);
		assert_true(n > 6);
		assert_int_equal(n, m);
		assert_memory_equal(built, now, n * sizeof(built[0]));
	}
	/* Not a kind the build compiled: other flags, a base not 4 GiB aligned. */
	struct stub_filter_spec odd = {.memfd = 3,
				       .thread_flags = CLONE_VM,
				       .sysfd = -1,
				       .stub_base = STUB_BASE,
				       .stub_len = 8192};
	assert_int_equal(stub_filter_build(built, STUB_MAX_FILTER, &odd), -EINVAL);
	odd.thread_flags = STUB_THREAD_FLAGS;
	odd.stub_base = STUB_BASE + 4096;
	assert_int_equal(stub_filter_build(built, STUB_MAX_FILTER, &odd), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_call_from_elsewhere_is_trapped),
	    cmocka_unit_test(test_injected_calls_pass),
	    cmocka_unit_test(test_other_calls_from_the_gadget_kill_the_stub),
	    cmocka_unit_test(test_a_stub_sends_only_its_message_on_its_socket),
	    cmocka_unit_test(test_the_factory_forks_and_installs_only_the_stub_filter),
	    cmocka_unit_test(test_a_stub_of_the_factory_can_neither_fork_nor_refilter),
	    cmocka_unit_test(test_the_seccomp_platform_rows),
	    cmocka_unit_test(test_the_handler_calls_are_pinned_to_their_own_form),
	    cmocka_unit_test(test_nothing_maps_protects_or_unmaps_from_within_the_stub),
	    cmocka_unit_test(test_built_filters_are_what_libseccomp_compiles_at_run_time),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
