/* Unit tests for oci/seccomp.c: the profile podman writes into config.json (its default, as
 * `podman create` resolved it) compiles, and the program, installed in a child by the host
 * kernel itself, answers each kind of rule as the profile says; and what a profile may not be
 * is refused with one line. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oci/json.h"
#include "oci/seccomp.h"

static int compile(const char *text, struct oci_bpf *b, char *err)
{
	char jerr[200];
	struct json *j = json_parse(text, strlen(text), jerr, sizeof(jerr));
	assert_non_null(j);
	int r = oci_seccomp_compile(j, b, err, 256);
	json_free(j);
	return r;
}

/* The errno syscall NR with ARGS gets under B, installed in a child: 0 when it succeeds. */
static int errno_under(const struct oci_bpf *b, long nr, long a0, long a1, long a2)
{
	int fds[2], status, e = -1;

	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sock_fprog prog = {(unsigned short)b->len, (struct sock_filter *)b->insns};
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
			_exit(100);
		errno = 0;
		long r = syscall(nr, a0, a1, a2);
		e = r < 0 ? errno : 0;
		if (write(fds[1], &e, sizeof(e)) != sizeof(e))
			_exit(101);
		_exit(0);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &e, sizeof(e)), sizeof(e));
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return e;
}

static char *podman_profile(void)
{
	char path[4096], err[200];
	const char *slash = strrchr(__FILE__, '/');
	char *text;
	size_t len;

	snprintf(path, sizeof(path), "%.*s/oci_seccomp_podman.json",
		 slash ? (int)(slash - __FILE__) : 1, slash ? __FILE__ : ".");
	assert_int_equal(json_read_file(path, &text, &len, err, sizeof(err)), 0);
	return text;
}

static void test_podman_default_profile_filters_as_it_says(void **state)
{
	struct oci_bpf b;
	char err[256];
	char *text = podman_profile();
	(void)state;

	assert_int_equal(compile(text, &b, err), 0);
	free(text);
	assert_true(b.len > 10 && b.len <= 4096);
	assert_false(b.log);
	assert_int_equal(errno_under(&b, SYS_getpid, 0, 0, 0), 0);
	/* An explicit SCMP_ACT_ERRNO rule, errnoRet 1. */
	assert_int_equal(errno_under(&b, SYS_acct, 0, 0, 0), EPERM);
	/* Argument rules: personality is allowed for the values listed only; the default,
	 * ERRNO with defaultErrnoRet 38, answers the others and unlisted syscalls. */
	assert_int_equal(errno_under(&b, SYS_personality, 0xffffffff, 0, 0), 0);
	assert_int_equal(errno_under(&b, SYS_personality, 1, 0, 0), ENOSYS);
	assert_int_equal(errno_under(&b, SYS_add_key, 0, 0, 0), ENOSYS);
	/* Two conditions of one rule (AND): NETLINK_AUDIT sockets get errnoRet 22. */
	assert_int_equal(errno_under(&b, SYS_socket, AF_NETLINK, SOCK_RAW, 9), EINVAL);
	oci_bpf_free(&b);
}

static void test_same_index_twice_means_either(void **state)
{
	struct oci_bpf b;
	char err[256];
	(void)state;

	/* Two conditions on argument 0 cannot both hold: runc makes them one rule each. */
	assert_int_equal(compile("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":"
				 "[\"dup\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":7,\"args\":"
				 "[{\"index\":0,\"value\":1000,\"op\":\"SCMP_CMP_EQ\"},{\"index\":"
				 "0,\"value\":1001,\"op\":\"SCMP_CMP_EQ\"}]},{\"names\":[\"no_such_"
				 "call\",\"acct\"],\"action\":\"SCMP_ACT_ALLOW\"}],\"flags\":["
				 "\"SECCOMP_FILTER_FLAG_LOG\"]}",
				 &b, err),
			 0);
	assert_true(b.log);
	assert_int_equal(errno_under(&b, SYS_dup, 1000, 0, 0), E2BIG);
	assert_int_equal(errno_under(&b, SYS_dup, 1001, 0, 0), E2BIG);
	assert_int_equal(errno_under(&b, SYS_dup, 0, 0, 0), 0);
	oci_bpf_free(&b);
}

static void test_bad_profiles_are_refused_with_a_reason(void **state)
{
	static const struct {
		const char *profile, *says;
	} cases[] = {
	    {"[]", "must be an object"},
	    {"{}", "defaultAction must be a string"},
	    {"{\"defaultAction\":\"SCMP_ACT_MAYBE\"}", "unknown action SCMP_ACT_MAYBE"},
	    {"{\"defaultAction\":\"SCMP_ACT_NOTIFY\"}", "SCMP_ACT_NOTIFY is not supported"},
	    {"{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":-1}", "defaultErrnoRet"},
	    {"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"architectures\":[\"SCMP_ARCH_Z80\"]}",
	     "unknown architecture SCMP_ARCH_Z80"},
	    {"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"flags\":[\"SECCOMP_FILTER_FLAG_X\"]}",
	     "unknown flag"},
	    {"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"action\":\"SCMP_ACT_TRAP\"}]}",
	     "syscalls[0].names"},
	    {"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],\"action\":"
	     "\"SCMP_ACT_TRAP\",\"args\":[{\"index\":6,\"value\":0,\"op\":\"SCMP_CMP_EQ\"}]}]}",
	     "index must be 0 to 5"},
	    {"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],\"action\":"
	     "\"SCMP_ACT_TRAP\",\"args\":[{\"index\":0,\"value\":0,\"op\":\"SCMP_CMP_ABOUT\"}]}]}",
	     "unknown op SCMP_CMP_ABOUT"},
	    {"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerPath\":\"/run/agent.sock\"}",
	     "listenerPath is not supported"},
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct oci_bpf b;
		char err[256] = "";
		if (compile(cases[i].profile, &b, err) != -1 || !strstr(err, cases[i].says))
			fail_msg("%s: said '%s', wanted '%s'", cases[i].profile, err,
				 cases[i].says);
		assert_null(b.insns);
		assert_null(strchr(err, '\n'));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_podman_default_profile_filters_as_it_says),
	    cmocka_unit_test(test_same_index_twice_means_either),
	    cmocka_unit_test(test_bad_profiles_are_refused_with_a_reason),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
