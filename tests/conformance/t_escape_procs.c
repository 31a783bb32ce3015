/*
 * t_escape_procs: the escape corpus's host process access. No process outside the sandbox has a
 * pid in it: every pid that is not one of the sandbox's own (every one up to 65535, and samples
 * up to INT_MAX) is ESRCH to kill, tkill, tgkill, getpgid, getsid, getpriority,
 * sched_getscheduler, prlimit, pidfd_open, process_vm_readv and ptrace, and has no /proc entry;
 * kill(-1) reaches only the sandbox's processes. What Linux checks before the pid (bad flags,
 * nothing to copy) comes first. ptrace and process_vm_readv/writev of another process follow
 * the Yama scope the system reports (/proc/sys/kernel/yama/ptrace_scope; absent is 0): the
 * sandbox reports 3, where every attach is EPERM, the caller's own memory is the only one
 * reachable and PTRACE_TRACEME is EPERM; natively (no Yama here) root attaches to and reads its
 * child and its sibling. An unprivileged process gets EPERM for pid 1 whatever the scope.
 * conformance: native-proc
 */
#include "check.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>

static unsigned char live[65536 / 8];

static int is_live(long pid)
{
	return pid > 0 && pid < 65536 && (live[pid / 8] & (1 << (pid % 8)));
}

/* The pids /proc lists: the sandbox's processes. */
static int list_live(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	memset(live, 0, sizeof(live));
	CHECK(d != NULL);
	while (d && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		CHECK(pid < 65536);
		if (pid < 65536)
			live[pid / 8] |= 1 << (pid % 8);
		n++;
	}
	if (d)
		closedir(d);
	return n;
}

static int yama_scope(void)
{
	char buf[16] = "";
	int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY);

	if (fd < 0)
		return 0;
	CHECK(read(fd, buf, sizeof(buf) - 1) > 0);
	close(fd);
	return atoi(buf);
}

static long vm_read(pid_t pid, void *dst, const void *src, size_t n)
{
	struct iovec l = {dst, n}, r = {(void *)src, n};

	return syscall(SYS_process_vm_readv, pid, &l, 1UL, &r, 1UL, 0UL);
}

/* Every way of naming PID, which is nobody here: ESRCH (ENOENT for /proc). */
static void absent(long pid)
{
	char byte, path[32];
	struct rlimit rl;
	struct stat st;

	CHECK_ERR(kill(pid, 0), ESRCH);
	CHECK_ERR(syscall(SYS_tkill, pid, 0), ESRCH);
	CHECK_ERR(syscall(SYS_tgkill, pid, pid, 0), ESRCH);
	CHECK_ERR(syscall(SYS_tgkill, 1, pid, 0), ESRCH);
	CHECK_ERR(getpgid(pid), ESRCH);
	CHECK_ERR(getsid(pid), ESRCH);
	CHECK_ERR(getpriority(PRIO_PROCESS, pid), ESRCH);
	CHECK_ERR(syscall(SYS_sched_getscheduler, pid), ESRCH);
	CHECK_ERR(prlimit(pid, RLIMIT_NOFILE, NULL, &rl), ESRCH);
	CHECK_ERR(syscall(SYS_pidfd_open, pid, 0), ESRCH);
	CHECK_ERR(vm_read(pid, &byte, &byte, 1), ESRCH);
	CHECK_ERR(ptrace(PTRACE_ATTACH, pid, 0, 0), ESRCH);
	CHECK_ERR(ptrace(PTRACE_SEIZE, pid, 0, 0), ESRCH);
	CHECK_ERR(ptrace(PTRACE_PEEKDATA, pid, &byte, 0), ESRCH);
	snprintf(path, sizeof(path), "/proc/%ld", pid);
	CHECK_ERR(stat(path, &st), ENOENT);
}

static void no_one_else(void)
{
	int n = list_live(), bad = 0;
	long first = 0;
	char buf[32] = "";
	int fd = open("/proc/sys/kernel/pid_max", O_RDONLY);

	CHECK_EQ(n, 1); /* the test alone */
	CHECK(is_live(getpid()));
	/* kill(pid, 0) for every pid a process here could have below 65536. */
	for (long pid = 2; pid < 65536; pid++) {
		if (is_live(pid))
			continue;
		errno = 0;
		if (kill(pid, 0) != -1 || errno != ESRCH) {
			if (!bad++)
				first = pid;
		}
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(first, 0);
	/* Every call for the low pids, where a host process would most likely sit, and for
	 * samples up to the largest. */
	for (long pid = 2; pid < 600; pid++)
		if (!is_live(pid))
			absent(pid);
	CHECK(fd >= 0);
	CHECK(fd >= 0 && read(fd, buf, sizeof(buf) - 1) > 0);
	close(fd);
	long pid_max = atol(buf);
	CHECK(pid_max >= 32768);
	long high[] = {32767, 32768, 65535, 65536, 99999, 1 << 22, pid_max - 1, pid_max, INT_MAX};
	for (unsigned i = 0; i < sizeof(high) / sizeof(high[0]); i++)
		absent(high[i]);
	CHECK_ERR(kill(INT_MIN, 0), ESRCH);
	CHECK_ERR(kill(-99999, 0), ESRCH);
	CHECK_ERR(kill(-2, 0), ESRCH);
	/* Everyone but init and the caller: nobody. */
	CHECK_ERR(kill(-1, 0), ESRCH);
}

/* Argument checks Linux makes before it looks for the process. */
static void before_the_pid(void)
{
	char a = 'a', b = 'b';
	struct iovec l = {&b, 1}, r = {&a, 1}, zero = {&a, 0};
	struct iovec many[1025];

	for (int i = 0; i < 1025; i++)
		many[i] = l;
	CHECK_ERR(syscall(SYS_pidfd_open, 0, 0), EINVAL);
	CHECK_ERR(syscall(SYS_pidfd_open, -1, 0), EINVAL);
	CHECK_ERR(syscall(SYS_pidfd_open, 99999, 1), EINVAL);
	CHECK_ERR(syscall(SYS_process_vm_readv, 99999, &l, 1UL, &r, 1UL, 1UL), EINVAL);
	CHECK_EQ(syscall(SYS_process_vm_readv, 99999, &l, 0UL, &r, 1UL, 0UL), 0);
	CHECK_EQ(syscall(SYS_process_vm_readv, 99999, &l, 1UL, &r, 0UL, 0UL), 0);
	CHECK_EQ(syscall(SYS_process_vm_writev, 99999, &l, 1UL, &zero, 1UL, 0UL), 0);
	CHECK_ERR(syscall(SYS_process_vm_readv, 99999, many, 1025UL, &r, 1UL, 0UL), EINVAL);
	CHECK_ERR(syscall(SYS_process_vm_readv, 99999, &l, 1UL, many, 1025UL, 0UL), EINVAL);
	CHECK_ERR(syscall(SYS_process_vm_readv, 99999, &l, 1UL, BAD_PTR, 1UL, 0UL), EFAULT);
	CHECK_ERR(syscall(SYS_process_vm_readv, 99999, BAD_PTR, 1UL, &r, 1UL, 0UL), EFAULT);
	struct iovec neg = {&a, (size_t)SSIZE_MAX + 1};
	CHECK_ERR(syscall(SYS_process_vm_readv, 99999, &l, 1UL, &neg, 1UL, 0UL), EINVAL);
	/* ptrace: the caller itself is never a tracee of its own; SEIZE's arguments first. */
	CHECK_ERR(ptrace(PTRACE_ATTACH, getpid(), 0, 0), EPERM);
	CHECK_ERR(ptrace(PTRACE_SEIZE, getpid(), 0, 0), EPERM);
	CHECK_ERR(ptrace(PTRACE_SEIZE, getpid(), (void *)1, 0), EIO);
	CHECK_ERR(ptrace(PTRACE_SEIZE, getpid(), 0, (void *)(1UL << 30)), EIO);
	CHECK_ERR(ptrace(PTRACE_CONT, getpid(), 0, 0), ESRCH);
}

static char remote_buf[32] = "the process's own bytes";
static pid_t thread_tid;

static void *thread_main(void *arg)
{
	__atomic_store_n(&thread_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	pause();
	return arg;
}

/* process_vm_readv/writev of the caller's own memory, through its pid and a thread's tid. */
static void own_memory(void)
{
	char got[32] = "", more[12] = "";
	struct iovec l[2] = {{got, 4}, {more, 12}};
	struct iovec r[2] = {{remote_buf, 8}, {(void *)0x7e0000000000UL, 8}};
	pthread_t th;

	CHECK_EQ(vm_read(getpid(), got, remote_buf, sizeof(remote_buf)), sizeof(remote_buf));
	CHECK_STREQ(got, remote_buf);
	/* Scattered locally, and a remote segment that cannot be read ends the copy. */
	memset(got, 0, sizeof(got));
	CHECK_EQ(syscall(SYS_process_vm_readv, getpid(), l, 2UL, r, 2UL, 0UL), 8);
	CHECK(!memcmp(got, "the ", 4) && !memcmp(more, "proc\0", 5));
	CHECK_ERR(syscall(SYS_process_vm_readv, getpid(), l, 2UL, &r[1], 1UL, 0UL), EFAULT);
	struct iovec bad_local = {BAD_PTR, 4}, one = {remote_buf, 4};
	CHECK_ERR(syscall(SYS_process_vm_readv, getpid(), &bad_local, 1UL, &one, 1UL, 0UL), EFAULT);
	struct iovec src = {(void *)"OWN", 3};
	CHECK_EQ(syscall(SYS_process_vm_writev, getpid(), &src, 1UL, &one, 1UL, 0UL), 3);
	CHECK(!memcmp(remote_buf, "OWN process's", 13));
	memcpy(remote_buf, "the", 3);

	CHECK_EQ(pthread_create(&th, NULL, thread_main, NULL), 0);
	while (!__atomic_load_n(&thread_tid, __ATOMIC_SEQ_CST))
		usleep(1000);
	memset(got, 0, sizeof(got));
	CHECK_EQ(vm_read(thread_tid, got, remote_buf, 8), 8);
	CHECK(!memcmp(got, "the proc", 8));
	CHECK_EQ(pthread_kill(th, SIGUSR1), 0);
	CHECK_EQ(pthread_join(th, NULL), 0);
}

static void on_usr1(int sig)
{
	(void)sig;
	pthread_exit(NULL);
}

/* Another process of root's: its child and a sibling of the caller. */
static void other_processes(int scope)
{
	int st;
	char got[32] = "";
	pid_t child = fork();

	if (child == 0) {
		pause();
		_exit(0);
	}
	CHECK_EQ(kill(child, 0), 0);
	CHECK_EQ(kill(-1, 0), 0); /* the child, now */
	maybe_save();
	/* ptrace and memory of the child, as the system's scope says. */
	if (scope == 3) {
		CHECK_ERR(ptrace(PTRACE_ATTACH, child, 0, 0), EPERM);
		CHECK_ERR(ptrace(PTRACE_SEIZE, child, 0, 0), EPERM);
		CHECK_ERR(vm_read(child, got, remote_buf, 8), EPERM);
	} else {
		CHECK_EQ(ptrace(PTRACE_ATTACH, child, 0, 0), 0);
		CHECK_EQ(waitpid(child, &st, __WALL), child);
		CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
		CHECK_EQ(ptrace(PTRACE_DETACH, child, 0, 0), 0);
		CHECK_EQ(vm_read(child, got, remote_buf, 8), 8);
		CHECK(!memcmp(got, "the proc", 8));
	}
	CHECK_ERR(ptrace(PTRACE_CONT, child, 0, 0), ESRCH);
	CHECK_ERR(ptrace(PTRACE_KILL, child, 0, 0), ESRCH);

	/* A sibling: a second child attaches to the first. */
	pid_t sib = fork();
	if (sib == 0) {
		long r = ptrace(PTRACE_ATTACH, child, 0, 0);
		int e = errno;
		if (scope == 3)
			_exit(r == -1 && e == EPERM ? 0 : 1);
		if (r != 0 || waitpid(child, &st, __WALL) != child || !WIFSTOPPED(st))
			_exit(2);
		_exit(ptrace(PTRACE_DETACH, child, 0, 0) == 0 ? 0 : 3);
	}
	CHECK_EQ(waitpid(sib, &st, 0), sib);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	/* PTRACE_TRACEME: the parent would become the tracer. */
	pid_t me = fork();
	if (me == 0) {
		long r = ptrace(PTRACE_TRACEME, 0, 0, 0);
		_exit(scope == 3 ? (r == -1 && errno == EPERM ? 0 : 1) : (r == 0 ? 0 : 1));
	}
	CHECK_EQ(waitpid(me, &st, 0), me);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	/* An unprivileged process and root's pid 1: EPERM whatever the scope. */
	pid_t u = fork();
	if (u == 0) {
		char b;
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(10);
		if (ptrace(PTRACE_ATTACH, 1, 0, 0) != -1 || errno != EPERM)
			_exit(11);
		if (vm_read(1, &b, remote_buf, 1) != -1 || errno != EPERM)
			_exit(12);
		if (kill(1, SIGKILL) != -1 || errno != EPERM)
			_exit(13);
		if (syscall(SYS_tgkill, 1, 1, SIGKILL) != -1 || errno != EPERM)
			_exit(14);
		if (kill(1, 0) != -1 || errno != EPERM)
			_exit(15);
		if (ptrace(PTRACE_TRACEME, 0, 0, 0) != (scope == 3 ? -1 : 0))
			_exit(16);
		_exit(0);
	}
	CHECK_EQ(waitpid(u, &st, 0), u);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);

	/* A zombie has no memory left; once reaped, no pid. */
	kill(child, SIGKILL);
	siginfo_t si;
	CHECK_EQ(waitid(P_PID, child, &si, WEXITED | WNOWAIT), 0);
	CHECK_ERR(vm_read(child, got, remote_buf, 1), ESRCH);
	CHECK_EQ(waitpid(child, &st, 0), child);
	absent(child);
	absent(sib);
	absent(me);
	absent(u);
}

int main(void)
{
	signal(SIGUSR1, on_usr1);
	int scope = yama_scope();
	if (in_sandbox())
		CHECK_EQ(scope, 3);
	CHECK(scope == 0 || scope == 1 || scope == 3);
	no_one_else();
	before_the_pid();
	own_memory();
	other_processes(scope);
	return check_done();
}
