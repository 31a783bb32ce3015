/*
 * t_seccomp_kill: seccomp's killing actions and modes: KILL_PROCESS and KILL_THREAD (SIGSYS;
 * the last thread takes its process with it, another thread dies alone), a division by zero in
 * a program (which returns 0, KILL_THREAD), strict mode (read, write, exit and rt_sigreturn
 * only; anything else, exit_group too, is SIGKILL), and TSYNC (every thread gets the filter,
 * and a thread with a filter of its own stops it: its tid, or ESRCH with TSYNC_ESRCH).
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "check.h"
#include "seccomp.h"

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

static void kill_process(void)
{
	sc_nnp();
	sc_on(SYS_getppid, SECCOMP_RET_KILL_PROCESS, 0);
	syscall(SYS_getppid);
	_exit(3); /* not reached */
}

static void kill_last_thread(void)
{
	sc_nnp();
	sc_on(SYS_getppid, SECCOMP_RET_KILL_THREAD, 0);
	syscall(SYS_getppid);
	_exit(3);
}

static void divide_by_zero(void)
{
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LDX | BPF_IMM, 0),
	    LOAD_NR,
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 2),
	    BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0),
	    RET(SECCOMP_RET_ALLOW),
	    RET(SECCOMP_RET_ALLOW),
	};
	sc_nnp();
	if (sc_install(f, 6, 0))
		_exit(4);
	syscall(SYS_getppid);
	_exit(3);
}

static volatile pid_t killed_tid;

static void *killed_thread(void *arg)
{
	(void)arg;
	killed_tid = (pid_t)syscall(SYS_gettid);
	syscall(SYS_getppid);
	return (void *)1; /* not reached */
}

static void kill_one_thread(void)
{
	pthread_t th;

	sc_nnp();
	CHECK_EQ(sc_on(SYS_getppid, SECCOMP_RET_KILL_THREAD, 0), 0);
	CHECK_EQ(pthread_create(&th, NULL, killed_thread, NULL), 0);
	/* Gone alone (musl's pthread_join would wait for a word only pthread_exit writes). */
	int i;
	for (i = 0; i < 5000; i++) {
		if (killed_tid && syscall(SYS_tgkill, getpid(), killed_tid, 0) == -1 &&
		    errno == ESRCH)
			break;
		usleep(1000);
	}
	CHECK(i < 5000);
	maybe_save();
	CHECK(syscall(SYS_getpid) > 0);
}

static void strict_ok(void)
{
	char c = 'x';

	CHECK_EQ(prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0), 0);
	if (syscall(SYS_write, 1, &c, 0) != 0 || syscall(SYS_read, 0, &c, 0) != 0)
		syscall(SYS_exit, 5);
	syscall(SYS_exit, 7);
}

static void strict_getpid(void)
{
	CHECK_EQ(sc_seccomp(SECCOMP_SET_MODE_STRICT, 0, NULL), 0);
	syscall(SYS_getpid);
	syscall(SYS_exit, 7);
}

static void strict_exit_group(void)
{
	CHECK_EQ(sc_seccomp(SECCOMP_SET_MODE_STRICT, 0, NULL), 0);
	syscall(SYS_exit_group, 7);
	syscall(SYS_exit, 8);
}

static int tsync_pipe[2];
static volatile pid_t other_tid;

static void *tsync_thread(void *arg)
{
	char c;

	if (arg) /* a filter of its own: TSYNC must stop at it */
		sc_on(SYS_getpgid, SECCOMP_RET_ERRNO | 3, 0);
	other_tid = (pid_t)syscall(SYS_gettid);
	if (read(tsync_pipe[0], &c, 1) != 1)
		return (void *)2;
	errno = 0;
	long r = syscall(SYS_getppid);
	return (void *)(long)(r == -1 && errno == 9 ? 0 : 1);
}

static void tsync(void)
{
	pthread_t th;
	void *res = (void *)-1;
	char path[64];

	sc_nnp();
	CHECK_EQ(pipe(tsync_pipe), 0);
	CHECK_EQ(pthread_create(&th, NULL, tsync_thread, NULL), 0);
	while (!other_tid)
		usleep(1000);
	/* The other thread, blocked in read, gets this filter too. */
	CHECK_EQ(sc_on(SYS_getppid, SECCOMP_RET_ERRNO | 9, SECCOMP_FILTER_FLAG_TSYNC), 0);
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)other_tid);
	CHECK_STATUS(path, "Seccomp", 2);
	CHECK_STATUS(path, "Seccomp_filters", 1);
	maybe_save();
	CHECK_EQ(write(tsync_pipe[1], "x", 1), 1);
	CHECK_EQ(pthread_join(th, &res), 0);
	CHECK(res == NULL);
}

static void tsync_diverged(void)
{
	pthread_t th;

	sc_nnp();
	CHECK_EQ(pipe(tsync_pipe), 0);
	CHECK_EQ(sc_on(SYS_getsid, SECCOMP_RET_ERRNO | 4, 0), 0);
	CHECK_EQ(pthread_create(&th, NULL, tsync_thread, (void *)1), 0);
	char path[64];
	while (!other_tid)
		usleep(1000);
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)other_tid);
	while (!other_tid)
		usleep(1000);
	CHECK_STATUS(path, "Seccomp_filters", 2);
	/* Its chain is not an ancestor of ours: nothing changes. */
	CHECK_EQ(sc_on(SYS_getppid, SECCOMP_RET_ERRNO | 9, SECCOMP_FILTER_FLAG_TSYNC), other_tid);
	CHECK_ERR(sc_on(SYS_getppid, SECCOMP_RET_ERRNO | 9,
			SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_TSYNC_ESRCH),
		  ESRCH);
	CHECK_STATUS("/proc/self/status", "Seccomp_filters", 1);
	CHECK(syscall(SYS_getppid) > 0);
	/* Without TSYNC it goes on this thread alone. */
	CHECK_EQ(sc_on(SYS_getppid, SECCOMP_RET_ERRNO | 9, 0), 0);
	CHECK_ERR(syscall(SYS_getppid), 9);
	CHECK_EQ(write(tsync_pipe[1], "x", 1), 1);
	void *res = NULL;
	CHECK_EQ(pthread_join(th, &res), 0);
	CHECK(res == (void *)1); /* the other thread's getppid was not filtered */
}

int main(void)
{
	int st;

	st = run_child(kill_process);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS);
	st = run_child(kill_last_thread);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS);
	st = run_child(divide_by_zero);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS);
	st = run_child(kill_one_thread);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	st = run_child(strict_ok);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7);
	st = run_child(strict_getpid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	st = run_child(strict_exit_group);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

	st = run_child(tsync);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	st = run_child(tsync_diverged);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return check_done();
}
