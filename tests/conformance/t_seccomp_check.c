/*
 * t_seccomp_check: what seccomp(2) and prctl refuse: programs Linux's checker rejects
 * (EINVAL: length 0 or past 4096, a bad opcode, a load outside struct seccomp_data or not
 * 32-bit aligned, a jump out of the program, no RET at the end, a division by a constant
 * zero, a shift by 32, scratch memory read before it is written), bad pointers (EFAULT), a
 * filter without no_new_privs or CAP_SYS_ADMIN (EACCES), unknown operations and flags,
 * switching between strict and filter mode; and the questions SECCOMP_GET_ACTION_AVAIL and
 * SECCOMP_GET_NOTIF_SIZES answer.
 */
#include <signal.h>
#include <sys/wait.h>

#include "check.h"
#include "seccomp.h"

#define ALLOW RET(SECCOMP_RET_ALLOW)

static void bad_programs(void)
{
	struct sock_filter ok[] = {ALLOW};
	struct sock_filter big[4097];
	struct sock_filter jump_out[] = {BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0), ALLOW};
	struct sock_filter ja_out[] = {BPF_STMT(BPF_JMP | BPF_JA, 1), ALLOW};
	struct sock_filter opcode[] = {BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 0), ALLOW};
	struct sock_filter mod[] = {BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, 3), ALLOW};
	struct sock_filter unknown[] = {BPF_STMT(0xffff, 0), ALLOW};
	struct sock_filter misaligned[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 1), ALLOW};
	struct sock_filter past_end[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 64), ALLOW};
	struct sock_filter no_ret[] = {ALLOW, BPF_STMT(BPF_LD | BPF_IMM, 0)};
	struct sock_filter div0[] = {BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0), ALLOW};
	struct sock_filter shift[] = {BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 32), ALLOW};
	struct sock_filter mem_unset[] = {BPF_STMT(BPF_LD | BPF_MEM, 2), ALLOW};
	struct sock_filter mem_one_path[] = {
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
	    BPF_STMT(BPF_ST, 2),
	    BPF_STMT(BPF_LD | BPF_MEM, 2),
	    ALLOW,
	};
	struct sock_filter mem_ok[] = {
	    BPF_STMT(BPF_LD | BPF_IMM, SECCOMP_RET_ALLOW),
	    BPF_STMT(BPF_ST, 2),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 0),
	    BPF_STMT(BPF_LD | BPF_MEM, 2),
	    BPF_STMT(BPF_RET | BPF_A, 0),
	};
	struct sock_filter mem_bad_index[] = {BPF_STMT(BPF_ST, 16), ALLOW};

	for (int i = 0; i < 4097; i++)
		big[i] = (struct sock_filter)ALLOW;
	CHECK_ERR(sc_install(ok, 0, 0), EINVAL);
	CHECK_ERR(sc_install(big, 4097, 0), EINVAL);
	CHECK_ERR(sc_install(jump_out, 2, 0), EINVAL);
	CHECK_ERR(sc_install(ja_out, 2, 0), EINVAL);
	CHECK_ERR(sc_install(opcode, 2, 0), EINVAL);
	CHECK_ERR(sc_install(mod, 2, 0), EINVAL);
	CHECK_ERR(sc_install(unknown, 2, 0), EINVAL);
	CHECK_ERR(sc_install(misaligned, 2, 0), EINVAL);
	CHECK_ERR(sc_install(past_end, 2, 0), EINVAL);
	CHECK_ERR(sc_install(no_ret, 2, 0), EINVAL);
	CHECK_ERR(sc_install(div0, 2, 0), EINVAL);
	CHECK_ERR(sc_install(shift, 2, 0), EINVAL);
	CHECK_ERR(sc_install(mem_unset, 2, 0), EINVAL);
	CHECK_ERR(sc_install(mem_one_path, 4, 0), EINVAL);
	CHECK_ERR(sc_install(mem_bad_index, 2, 0), EINVAL);
	CHECK_STATUS("/proc/self/status", "Seccomp_filters", 0);

	/* Bad pointers; a NULL program is EINVAL, as Linux checks it before copying. */
	CHECK_ERR(sc_seccomp(SECCOMP_SET_MODE_FILTER, 0, BAD_PTR), EFAULT);
	struct sock_fprog bad = {.len = 1, .filter = BAD_PTR};
	CHECK_ERR(sc_seccomp(SECCOMP_SET_MODE_FILTER, 0, &bad), EFAULT);
	struct sock_fprog null = {.len = 1, .filter = NULL};
	CHECK_ERR(sc_seccomp(SECCOMP_SET_MODE_FILTER, 0, &null), EINVAL);
	CHECK_ERR(sc_install(ok, 1, 1u << 20), EINVAL); /* unknown flag */

	/* Good ones: the largest program, and memory written on every path. */
	CHECK_EQ(sc_install(big, 4096, 0), 0);
	CHECK_EQ(sc_install(mem_ok, 5, 0), 0);
	CHECK_STATUS("/proc/self/status", "Seccomp_filters", 2);
	/* A chain is bounded: 32768 instructions, 4 more per filter. */
	int n = 2;
	long r;
	while ((r = sc_install(big, 4096, 0)) == 0)
		n++;
	CHECK_EQ(r, -1);
	CHECK_EQ(errno, ENOMEM);
	CHECK(n >= 4 && n <= 8); /* Linux counts its eBPF translation: fewer fit */
	/* Filter mode cannot become strict. */
	CHECK_ERR(prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0), EINVAL);
	CHECK_ERR(sc_seccomp(SECCOMP_SET_MODE_STRICT, 0, NULL), EINVAL);
	maybe_save();
	CHECK_STATUS("/proc/self/status", "Seccomp_filters", n);
}

static void no_privs(void)
{
	struct sock_filter ok[] = {ALLOW};
	struct sock_fprog prog = {.len = 1, .filter = ok};

	/* Root with CAP_SYS_ADMIN may; nobody without no_new_privs may not. */
	CHECK_EQ(setresuid(65534, 65534, 65534), 0);
	CHECK_ERR(sc_install(ok, 1, 0), EACCES);
	CHECK_ERR(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0), EACCES);
	CHECK_ERR(sc_install(ok, 0, 0), EINVAL); /* the length is checked first */
	CHECK_EQ(prctl(PR_GET_SECCOMP, 0, 0, 0, 0), 0);
	CHECK_EQ(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	CHECK_EQ(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0), 0);
	CHECK_EQ(prctl(PR_GET_SECCOMP, 0, 0, 0, 0), 2);
}

static void root_without_nnp(void)
{
	struct sock_filter ok[] = {ALLOW};

	CHECK_EQ(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), 0);
	CHECK_EQ(sc_install(ok, 1, 0), 0);
	CHECK_STATUS("/proc/self/status", "Seccomp", 2);
}

static int run_child(void (*fn)(void))
{
	int st = -1;
	pid_t pid = fork();

	if (pid == 0) {
		check_failures = 0;
		fn();
		_exit(check_failures ? 1 : 0);
	}
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	return st;
}

int main(void)
{
	unsigned int act;
	int st;

	/* Operations and their flags. */
	CHECK_ERR(sc_seccomp(99, 0, NULL), EINVAL);
	CHECK_ERR(sc_seccomp(SECCOMP_SET_MODE_STRICT, 1, NULL), EINVAL);
	CHECK_ERR(sc_seccomp(SECCOMP_SET_MODE_STRICT, 0, &act), EINVAL);
	CHECK_ERR(prctl(PR_SET_SECCOMP, 3, 0, 0, 0), EINVAL);
	static const unsigned int known[] = {
	    SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_KILL_THREAD, SECCOMP_RET_TRAP, SECCOMP_RET_ERRNO,
	    SECCOMP_RET_USER_NOTIF,   SECCOMP_RET_TRACE,       SECCOMP_RET_LOG,	 SECCOMP_RET_ALLOW,
	};
	for (unsigned int i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		act = known[i];
		CHECK_EQ(sc_seccomp(SECCOMP_GET_ACTION_AVAIL, 0, &act), 0);
	}
	act = 0x00010000;
	CHECK_ERR(sc_seccomp(SECCOMP_GET_ACTION_AVAIL, 0, &act), EOPNOTSUPP);
	act = SECCOMP_RET_ERRNO | 1; /* the action alone, without data */
	CHECK_ERR(sc_seccomp(SECCOMP_GET_ACTION_AVAIL, 0, &act), EOPNOTSUPP);
	act = SECCOMP_RET_ALLOW;
	CHECK_ERR(sc_seccomp(SECCOMP_GET_ACTION_AVAIL, 1, &act), EINVAL);
	CHECK_ERR(sc_seccomp(SECCOMP_GET_ACTION_AVAIL, 0, BAD_PTR), EFAULT);
	struct seccomp_notif_sizes sizes = {0};
	CHECK_EQ(sc_seccomp(SECCOMP_GET_NOTIF_SIZES, 0, &sizes), 0);
	CHECK_EQ(sizes.seccomp_notif, 80);
	CHECK_EQ(sizes.seccomp_notif_resp, 24);
	CHECK_EQ(sizes.seccomp_data, 64);
	CHECK_ERR(sc_seccomp(SECCOMP_GET_NOTIF_SIZES, 0, BAD_PTR), EFAULT);
	CHECK_ERR(sc_seccomp(SECCOMP_GET_NOTIF_SIZES, 2, &sizes), EINVAL);

	st = run_child(no_privs);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	st = run_child(root_without_nnp);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	/* User notification is not offered by minisentry (docs/seccomp.md): ENOSYS there, a
	 * listener's descriptor on Linux. */
	sc_nnp();
	struct sock_filter ok[] = {ALLOW};
	long fd = sc_install(ok, 1, SECCOMP_FILTER_FLAG_NEW_LISTENER);
	if (in_sandbox())
		CHECK(fd == -1 && errno == ENOSYS);
	else
		CHECK(fd >= 0);
	CHECK_ERR(sc_install(ok, 1, SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_TSYNC),
		  EINVAL);

	st = run_child(bad_programs);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return check_done();
}
