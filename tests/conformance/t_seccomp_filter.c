/*
 * t_seccomp_filter: seccomp filters a program installs on itself: ERRNO (capped at 4095),
 * ALLOW, LOG, TRACE and USER_NOTIF with no tracer or listener (ENOSYS), TRAP (SIGSYS with
 * SYS_SECCOMP, the call's address, number, arch and data, rax still the number), filters
 * stacked (the most restrictive action, the newest filter's data), arguments and arch in
 * struct seccomp_data, the vsyscall page's calls, PR_GET_SECCOMP and /proc/self/status, and
 * filters kept over fork, exec and a checkpoint.
 */
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <ucontext.h>

#include "check.h"
#include "seccomp.h"

/* What every process of the test expects once the first filters are in. */
static void check_inherited(long nfilters)
{
	CHECK_ERR(syscall(SYS_getppid), 6);
	CHECK_ERR(syscall(SYS_getpgid, 4242), 7);
	CHECK(syscall(SYS_getpgid, 0) > 0);
	CHECK_ERR(syscall(SYS_sched_getscheduler, 0), 4095);
	CHECK_EQ(prctl(PR_GET_SECCOMP, 0, 0, 0, 0), 2);
	CHECK_STATUS("/proc/self/status", "Seccomp", 2);
	CHECK_STATUS("/proc/self/status", "Seccomp_filters", nfilters);
	CHECK_STATUS("/proc/self/status", "NoNewPrivs", 1);
}

static volatile siginfo_t trapped;
static volatile long trapped_rax;
static volatile int ntrapped;

static void on_sigsys(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	trapped = *si;
	trapped_rax = uc->uc_mcontext.gregs[REG_RAX];
	uc->uc_mcontext.gregs[REG_RAX] = 777; /* what the trapped call returns */
	ntrapped++;
}

static int wait_child(pid_t pid)
{
	int st = -1;

	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st));
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#define VSYSCALL_TIME 0xffffffffff600400UL

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "exec-child")) {
		check_inherited(atol(argv[2]));
		return check_failures ? 1 : 0;
	}
	long n = 0;
	/* run.sh starts us by absolute path; /proc/self/exe needs a /proc natively. */
	const char *self = argv[0][0] == '/' ? argv[0] : "/proc/self/exe";

	CHECK_EQ(prctl(PR_GET_SECCOMP, 0, 0, 0, 0), 0);
	CHECK_STATUS("/proc/self/status", "Seccomp", 0);
	CHECK_STATUS("/proc/self/status", "Seccomp_filters", 0);
	sc_nnp();

	/* ERRNO, and the newest filter's data among equal actions. */
	CHECK_EQ(sc_on(SYS_getppid, SECCOMP_RET_ERRNO | 5, 0), 0);
	n++;
	CHECK_ERR(syscall(SYS_getppid), 5);
	CHECK(syscall(SYS_getpid) > 0);
	CHECK_EQ(sc_on(SYS_getppid, SECCOMP_RET_ERRNO | 6, 0), 0);
	n++;
	CHECK_ERR(syscall(SYS_getppid), 6);

	/* An argument and the arch. */
	struct sock_filter arg[] = {
	    LOAD_NR,
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpgid, 0, 3),
	    LOAD_ARG0_LO,
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 4242, 0, 1),
	    RET(SECCOMP_RET_ERRNO | 7),
	    RET(SECCOMP_RET_ALLOW),
	};
	CHECK_EQ(sc_install(arg, 6, 0), 0);
	n++;
	struct sock_filter arch[] = {
	    LOAD_ARCH,
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
	    RET(SECCOMP_RET_KILL_PROCESS),
	    RET(SECCOMP_RET_ALLOW),
	};
	CHECK_EQ(sc_install(arch, 4, SECCOMP_FILTER_FLAG_LOG), 0);
	n++;
	CHECK_ERR(syscall(SYS_getpgid, 4242), 7);
	CHECK(syscall(SYS_getpgid, 0) > 0);

	/* Less restrictive actions do not override ERRNO. */
	CHECK_EQ(sc_on(SYS_getppid, SECCOMP_RET_LOG, 0), 0);
	n++;
	CHECK_EQ(sc_on(SYS_getppid, SECCOMP_RET_ALLOW, 0), 0);
	n++;
	CHECK_EQ(sc_on(SYS_getppid, SECCOMP_RET_TRACE | 3, 0), 0);
	n++;
	CHECK_ERR(syscall(SYS_getppid), 6);
	/* No tracer, no listener: ENOSYS. ERRNO's data is capped at MAX_ERRNO. */
	CHECK_EQ(sc_on(SYS_getpriority, SECCOMP_RET_TRACE, 0), 0);
	n++;
	CHECK_ERR(syscall(SYS_getpriority, PRIO_PROCESS, 0), ENOSYS);
	CHECK_EQ(sc_on(SYS_getsid, SECCOMP_RET_USER_NOTIF, 0), 0);
	n++;
	CHECK_ERR(syscall(SYS_getsid, 0), ENOSYS);
	CHECK_EQ(sc_on(SYS_sched_getscheduler, SECCOMP_RET_ERRNO | 5000, 0), 0);
	n++;
	check_inherited(n);

	/* fork and exec keep them. */
	pid_t pid = fork();
	if (pid == 0) {
		check_failures = 0;
		check_inherited(n);
		_exit(check_failures ? 1 : 0);
	}
	CHECK_EQ(wait_child(pid), 0);
	pid = fork();
	if (pid == 0) {
		char num[16];
		snprintf(num, sizeof(num), "%ld", n);
		execl(self, self, "exec-child", num, (char *)NULL);
		_exit(99);
	}
	CHECK_EQ(wait_child(pid), 0);

	/* A checkpoint keeps them: this process's and a child's, which shares the chain. */
	int go[2];
	CHECK_EQ(pipe(go), 0);
	pid = fork();
	if (pid == 0) {
		char c;
		check_failures = 0;
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		check_inherited(n);
		_exit(check_failures ? 1 : 0);
	}
	close(go[0]);
	/* And a zombie that had them. */
	pid_t zombie = fork();
	if (zombie == 0)
		_exit(0);
	siginfo_t zi;
	CHECK_EQ(waitid(P_PID, zombie, &zi, WEXITED | WNOWAIT), 0);
	maybe_save();
	CHECK_EQ(wait_child(zombie), 0);
	check_inherited(n);
	CHECK_EQ(write(go[1], "x", 1), 1);
	close(go[1]);
	CHECK_EQ(wait_child(pid), 0);

	/* TRAP: SIGSYS with the call's details; the call returns what the handler leaves in rax. */
	struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};
	CHECK_EQ(sigaction(SIGSYS, &sa, NULL), 0);
	CHECK_EQ(sc_on(SYS_sched_get_priority_min, SECCOMP_RET_TRAP | 0x42, 0), 0);
	n++;
	long r = syscall(SYS_sched_get_priority_min, SCHED_OTHER);
	CHECK_EQ(r, 777);
	CHECK_EQ(ntrapped, 1);
	CHECK_EQ(trapped.si_signo, SIGSYS);
	CHECK_EQ(trapped.si_code, 1 /* SYS_SECCOMP */);
	CHECK_EQ(trapped.si_errno, 0x42);
	CHECK_EQ(trapped.si_syscall, SYS_sched_get_priority_min);
	CHECK_EQ(trapped.si_arch, AUDIT_ARCH_X86_64);
	CHECK_EQ(trapped_rax, SYS_sched_get_priority_min);
	const unsigned char *at = (const unsigned char *)trapped.si_call_addr;
	CHECK(at && at[-2] == 0x0f && at[-1] == 0x05); /* just after a `syscall` */
	/* TRAP wins over ERRNO. */
	CHECK_EQ(sc_on(SYS_getppid, SECCOMP_RET_TRAP | 1, 0), 0);
	n++;
	CHECK_EQ(syscall(SYS_getppid), 777);
	CHECK_EQ(ntrapped, 2);
	CHECK_EQ(trapped.si_errno, 1);
	CHECK_STATUS("/proc/self/status", "Seccomp_filters", n);

	/* The vsyscall page's calls are filtered as the syscall they stand for, at their own
	 * address. */
	struct sock_filter vsys[] = {
	    LOAD_NR,
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_time, 0, 3),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		     offsetof(struct seccomp_data, instruction_pointer) + 4),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffff, 0, 1),
	    RET(SECCOMP_RET_ERRNO | 9),
	    RET(SECCOMP_RET_ALLOW),
	};
	CHECK_EQ(sc_install(vsys, 6, 0), 0);
	n++;
	CHECK(syscall(SYS_time, NULL) > 0);
	long (*vtime)(long *) = (long (*)(long *))VSYSCALL_TIME;
	CHECK_EQ(vtime(NULL), -9);
	return check_done();
}
