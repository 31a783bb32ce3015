/* Unit tests for the Sentry's seccomp allowlist (sentry/hostpolicy.c), installed for real in a
 * forked child: a call it allows runs, one outside it kills the process, the debug mode makes
 * it fail with ENOSYS instead, and arguments are checked where the table says so. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sentry/confine.h"
#include "sentry/hostpolicy.h"

enum { DONE = 0, KILLED = 128 + SIGSYS };

/* Runs CALL in a child under the allowlist in mode DEBUG: its exit status (CALL's return value
 * as a status byte), or 128 + the signal that killed it. */
static int under_policy(enum confine_debug debug, int (*call)(void))
{
	int st;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 2); /* the debug mode's lines */
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || hostpolicy_install(debug, false))
			_exit(99);
		_exit(call());
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int getpid_call(void)
{
	return getpid() > 0 ? 0 : 1;
}

static int inet_socket(void)
{
	return socket(AF_INET, SOCK_STREAM, 0) < 0 && errno == ENOSYS ? 0 : 1;
}

static int unix_socket(void)
{
	return socket(AF_UNIX, SOCK_STREAM, 0) < 0 && errno == ENOSYS ? 0 : 1;
}

static __attribute__((unused)) int ptrace_attach(void)
{
	return ptrace(PTRACE_ATTACH, 1, 0, 0) < 0 && errno == ENOSYS ? 0 : 1;
}

/* Allowed requests reach the kernel: no such process. */
static int ptrace_interrupt(void)
{
	return ptrace(PTRACE_INTERRUPT, 999999, 0, 0) < 0 && errno == ESRCH ? 0 : 1;
}

static int ioctl_tiocsti(void)
{
	char c = 'x';
	return ioctl(0, TIOCSTI, &c) < 0 && errno == ENOSYS ? 0 : 1;
}

static int open_create_without_excl(void)
{
	return openat(AT_FDCWD, "/nonexistent/x", O_WRONLY | O_CREAT, 0600) < 0 && errno == ENOSYS
		   ? 0
		   : 1;
}

/* Allowed shapes reach the kernel: the directory is not there. */
static int open_create_excl(void)
{
	return openat(AT_FDCWD, "/nonexistent/x", O_WRONLY | O_CREAT | O_EXCL, 0600) < 0 &&
		       errno == ENOENT
		   ? 0
		   : 1;
}

static int kill_other_signal(void)
{
	return kill(getpid(), 0) < 0 && errno == ENOSYS ? 0 : 1;
}

/* What only new stubs needed when they were forked from the locked Sentry: gone with the stub
 * factory. */
static __attribute__((unused)) int fork_call(void)
{
	long r = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	if (r == 0)
		_exit(0);
	return r < 0 && errno == ENOSYS ? 0 : 1;
}

static int ptrace_seize(void)
{
	return ptrace(PTRACE_SEIZE, 1, 0, 0) < 0 && errno == ENOSYS ? 0 : 1;
}

static int setns_user(void)
{
	return setns(0, CLONE_NEWUSER) < 0 && errno == ENOSYS ? 0 : 1;
}

static int seccomp_filter(void)
{
	return syscall(SYS_seccomp, 1, 0, NULL) < 0 && errno == ENOSYS ? 0 : 1;
}

static int mmap_exec(void)
{
	return mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) ==
			   MAP_FAILED &&
		       errno == ENOSYS
		   ? 0
		   : 1;
}

static int mprotect_exec(void)
{
	void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p != MAP_FAILED && mprotect(p, 4096, PROT_READ | PROT_EXEC) < 0 && errno == ENOSYS
		   ? 0
		   : 1;
}

static int mmap_writable(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p != MAP_FAILED && mprotect(p, 4096, PROT_READ) == 0 ? 0 : 1;
}

static void test_allowed_calls_run(void **state)
{
	(void)state;
	assert_int_equal(under_policy(CONFINE_DEBUG_OFF, getpid_call), DONE);
	assert_int_equal(under_policy(CONFINE_DEBUG_OFF, ptrace_interrupt), DONE);
	assert_int_equal(under_policy(CONFINE_DEBUG_OFF, open_create_excl), DONE);
	assert_int_equal(under_policy(CONFINE_DEBUG_OFF, mmap_writable), DONE);
}

static void test_what_only_stubs_needed_kills(void **state)
{
	(void)state;
#ifndef __SANITIZE_ADDRESS__ /* a SAN=1 build lets LeakSanitizer clone its thread (hostpolicy.c)   \
			      */
	assert_int_equal(under_policy(CONFINE_DEBUG_OFF, fork_call), KILLED);
#endif
	assert_int_equal(under_policy(CONFINE_DEBUG_OFF, ptrace_seize), KILLED);
	assert_int_equal(under_policy(CONFINE_DEBUG_OFF, setns_user), KILLED);
	assert_int_equal(under_policy(CONFINE_DEBUG_OFF, seccomp_filter), KILLED);
	assert_int_equal(under_policy(CONFINE_DEBUG_OFF, mmap_exec), KILLED);
	assert_int_equal(under_policy(CONFINE_DEBUG_OFF, mprotect_exec), KILLED);
#ifndef __SANITIZE_ADDRESS__
	assert_int_equal(under_policy(CONFINE_DEBUG_TRAP, fork_call), DONE);
#endif
	assert_int_equal(under_policy(CONFINE_DEBUG_TRAP, mmap_exec), DONE);
}

static void test_anything_else_kills(void **state)
{
	(void)state;
	assert_int_equal(under_policy(CONFINE_DEBUG_OFF, inet_socket), KILLED);
	assert_int_equal(under_policy(CONFINE_DEBUG_OFF, unix_socket), KILLED);
#ifndef __SANITIZE_ADDRESS__ /* a SAN=1 build lets LeakSanitizer attach (hostpolicy.c) */
	assert_int_equal(under_policy(CONFINE_DEBUG_OFF, ptrace_attach), KILLED);
#endif
	assert_int_equal(under_policy(CONFINE_DEBUG_OFF, ioctl_tiocsti), KILLED);
	assert_int_equal(under_policy(CONFINE_DEBUG_OFF, open_create_without_excl), KILLED);
	assert_int_equal(under_policy(CONFINE_DEBUG_OFF, kill_other_signal), KILLED);
}

static void test_debug_mode_fails_with_enosys_and_goes_on(void **state)
{
	(void)state;
	assert_int_equal(under_policy(CONFINE_DEBUG_TRAP, inet_socket), DONE);
#ifndef __SANITIZE_ADDRESS__ /* a SAN=1 build lets LeakSanitizer attach (hostpolicy.c) */
	assert_int_equal(under_policy(CONFINE_DEBUG_TRAP, ptrace_attach), DONE);
#endif
	assert_int_equal(under_policy(CONFINE_DEBUG_TRAP, ioctl_tiocsti), DONE);
	assert_int_equal(under_policy(CONFINE_DEBUG_TRAP, kill_other_signal), DONE);
	assert_int_equal(under_policy(CONFINE_DEBUG_TRAP, getpid_call), DONE);
}

static void test_syscall_names_come_from_the_kernel_headers(void **state)
{
	(void)state;
	assert_string_equal(hostpolicy_syscall_name(SYS_socket), "socket");
	assert_string_equal(hostpolicy_syscall_name(SYS_ptrace), "ptrace");
	assert_null(hostpolicy_syscall_name(-1));
	assert_null(hostpolicy_syscall_name(100000));
}

/* The programs the build compiled (gen/hostpolicy_bpf.h) are, instruction for instruction,
 * what libseccomp compiles from the rows now: in every mode, with and without --network host,
 * for this build (sanitizer rows or not). A libseccomp that compiles differently, or a row
 * changed without a rebuild of the generated header, fails here. */
static void test_embedded_programs_are_what_libseccomp_compiles_at_run_time(void **state)
{
#if defined(__SANITIZE_ADDRESS__)
	const bool san = true;
#else
	const bool san = false;
#endif
	static const enum confine_debug modes[] = {CONFINE_DEBUG_OFF, CONFINE_DEBUG_TRAP,
						   CONFINE_DEBUG_LOG};
	(void)state;
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++)
		for (int net = 0; net < 2; net++) {
			size_t len = 0;
			const struct sock_filter *built = hostpolicy_program(modes[m], net, &len);
			int fd = memfd_create("hostpolicy", MFD_CLOEXEC);
			assert_non_null(built);
			assert_true(fd >= 0);
			assert_int_equal(hostpolicy_compile(modes[m], net, san, fd), 0);
			off_t bytes = lseek(fd, 0, SEEK_END);
			assert_int_equal(bytes, (off_t)(len * sizeof(struct sock_filter)));
			struct sock_filter *now = malloc(bytes);
			assert_non_null(now);
			assert_int_equal(pread(fd, now, bytes, 0), bytes);
			assert_memory_equal(now, built, bytes);
			free(now);
			close(fd);
		}
	assert_null(hostpolicy_program(CONFINE_DEBUG_NONE, false, &(size_t){0}));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_allowed_calls_run),
	    cmocka_unit_test(test_anything_else_kills),
	    cmocka_unit_test(test_what_only_stubs_needed_kills),
	    cmocka_unit_test(test_debug_mode_fails_with_enosys_and_goes_on),
	    cmocka_unit_test(test_syscall_names_come_from_the_kernel_headers),
	    cmocka_unit_test(test_embedded_programs_are_what_libseccomp_compiles_at_run_time),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
