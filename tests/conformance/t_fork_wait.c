/*
 * t_fork_wait: fork and the wait family. Exit codes and deaths by signal come back through
 * wait4/waitpid's status word and waitid's siginfo; WNOHANG sees a running child as "nothing
 * yet" and no children as ECHILD; a child's memory is a copy (MAP_SHARED excepted) while its
 * file descriptions are shared with the parent; SIGCHLD tells the parent who exited.
 */
#include "check.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

static int global_value = 1;

/* Forks a child that runs fn(arg) and _exits with its result. */
static pid_t spawn(int (*fn)(long), long arg)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(fn(arg));
	return pid;
}

static int exit_with(long code)
{
	return (int)code;
}

/* Blocks until the parent writes a byte (or closes) on fd, then exits with that byte. */
static int exit_with_byte_from(long fd)
{
	unsigned char c = 0;

	if (read((int)fd, &c, 1) != 1)
		return 100;
	return c;
}

static int global_after_byte_from(long fd)
{
	unsigned char c;

	if (read((int)fd, &c, 1) != 1)
		return 100;
	return global_value;
}

static int check_parent_is(long ppid)
{
	return getppid() == (pid_t)ppid ? 0 : 1;
}

int main(void)
{
	int status;
	siginfo_t si;

	/* No children at all: every wait flavour says ECHILD. */
	CHECK_ERR(wait(&status), ECHILD);
	CHECK_ERR(waitpid(-1, &status, WNOHANG), ECHILD);
	CHECK_ERR(waitid(P_ALL, 0, &si, WEXITED | WNOHANG), ECHILD);

	/* Exit codes come back through WEXITSTATUS, truncated to 8 bits. */
	static const int codes[] = {0, 1, 42, 255, 256 + 7};
	for (unsigned i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		pid_t pid = spawn(exit_with, codes[i]);
		CHECK(pid > 0);
		status = -1;
		CHECK_EQ(waitpid(pid, &status, 0), pid);
		CHECK(WIFEXITED(status));
		CHECK(!WIFSIGNALED(status));
		CHECK_EQ(WEXITSTATUS(status), codes[i] & 0xff);
		CHECK_EQ(status, (codes[i] & 0xff) << 8);
		/* Reaped: the pid is no longer our child. */
		CHECK_ERR(waitpid(pid, &status, WNOHANG), ECHILD);
	}

	/* WNOHANG returns 0 while the child runs (blocked on a pipe we hold). */
	int go[2];
	CHECK_EQ(pipe(go), 0);
	pid_t pid = spawn(exit_with_byte_from, go[0]);
	CHECK(pid > 0);
	status = -1;
	CHECK_EQ(waitpid(pid, &status, WNOHANG), 0);
	CHECK_EQ(wait4(pid, &status, WNOHANG, NULL), 0);
	memset(&si, 0x5a, sizeof(si));
	CHECK_EQ(waitid(P_PID, pid, &si, WEXITED | WNOHANG), 0);
	CHECK_EQ(si.si_pid, 0); /* Linux zeroes the siginfo when nothing is waitable */
	CHECK_EQ(si.si_signo, 0);
	maybe_save(); /* a child blocked on a pipe, not yet reaped */
	CHECK_EQ(write(go[1], "\x21", 1), 1);
	/* WNOWAIT: see the exit without reaping, then reap it with WNOHANG. */
	memset(&si, 0, sizeof(si));
	CHECK_EQ(waitid(P_PID, pid, &si, WEXITED | WNOWAIT), 0);
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_signo, SIGCHLD);
	CHECK_EQ(si.si_code, CLD_EXITED);
	CHECK_EQ(si.si_status, 0x21);
	memset(&si, 0, sizeof(si));
	CHECK_EQ(waitid(P_ALL, 0, &si, WEXITED | WNOHANG), 0);
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_signo, SIGCHLD);
	CHECK_EQ(si.si_code, CLD_EXITED);
	CHECK_EQ(si.si_status, 0x21);
	CHECK_EQ(si.si_uid, getuid());
	CHECK_ERR(waitid(P_PID, pid, &si, WEXITED | WNOHANG), ECHILD);
	CHECK_ERR(waitid(P_ALL, 0, &si, 0), EINVAL); /* no state asked for */

	/* Killed by a signal: WIFSIGNALED/WTERMSIG, and CLD_KILLED through waitid. */
	pid = spawn(exit_with_byte_from, go[0]);
	CHECK(pid > 0);
	CHECK_EQ(kill(pid, SIGTERM), 0);
	status = -1;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status));
	CHECK(!WIFEXITED(status));
	CHECK_EQ(WTERMSIG(status), SIGTERM);
	CHECK_EQ(status, SIGTERM);

	pid = spawn(exit_with_byte_from, go[0]);
	CHECK(pid > 0);
	CHECK_EQ(kill(pid, SIGKILL), 0);
	memset(&si, 0, sizeof(si));
	CHECK_EQ(waitid(P_PID, pid, &si, WEXITED), 0);
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_code, CLD_KILLED);
	CHECK_EQ(si.si_status, SIGKILL);

	/* wait4 fills a struct rusage. */
	pid = spawn(exit_with, 3);
	struct rusage ru;
	memset(&ru, 0xff, sizeof(ru));
	CHECK_EQ(wait4(pid, &status, 0, &ru), pid);
	CHECK_EQ(WEXITSTATUS(status), 3);
	CHECK(ru.ru_utime.tv_sec >= 0 && ru.ru_utime.tv_usec >= 0 && ru.ru_utime.tv_usec < 1000000);
	CHECK(ru.ru_stime.tv_sec >= 0 && ru.ru_stime.tv_usec >= 0 && ru.ru_stime.tv_usec < 1000000);

	/* The child's parent is us. */
	pid = spawn(check_parent_is, getpid());
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);

	/* Several children: each is reaped exactly once, then ECHILD. */
	pid_t kids[3];
	int seen[3] = {0, 0, 0};
	for (int i = 0; i < 3; i++)
		kids[i] = spawn(exit_with, 10 + i);
	for (int i = 0; i < 3; i++) {
		pid_t got = wait(&status);
		for (int k = 0; k < 3; k++) {
			if (got == kids[k]) {
				seen[k]++;
				CHECK_EQ(WEXITSTATUS(status), 10 + k);
			}
		}
	}
	CHECK_EQ(seen[0] + seen[1] * 10 + seen[2] * 100, 111);
	CHECK_ERR(wait(&status), ECHILD);

	/* Memory: private data (globals, heap, stack, MAP_PRIVATE) is copied; MAP_SHARED is not. */
	int *heap = malloc(sizeof(int));
	volatile int stack_value = 1;
	int *priv = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(heap && priv != MAP_FAILED && shared != MAP_FAILED);
	*heap = *priv = *shared = 1;
	pid = fork();
	if (pid == 0) {
		global_value = 2;
		*heap = 2;
		stack_value = 2;
		*priv = 2;
		*shared = 2;
		_exit(global_value + *heap + stack_value + *priv == 8 ? 0 : 1);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
	CHECK_EQ(global_value, 1);
	CHECK_EQ(*heap, 1);
	CHECK_EQ(stack_value, 1);
	CHECK_EQ(*priv, 1);
	CHECK_EQ(*shared, 2);
	/* A parent write after the fork does not show in the child either. */
	global_value = 5;
	pid = spawn(global_after_byte_from, go[0]);
	global_value = 6;
	CHECK_EQ(write(go[1], "x", 1), 1);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 5);
	free(heap);

	/* Descriptors are shared: the child writes into our pipe and moves our file offset. */
	int data[2];
	CHECK_EQ(pipe(data), 0);
	int fd = open("/bin/busybox", O_RDONLY);
	CHECK(fd >= 0);
	pid = fork();
	if (pid == 0) {
		close(data[0]);
		int ok = write(data[1], "from child", 10) == 10 && lseek(fd, 100, SEEK_SET) == 100;
		_exit(ok ? 0 : 1);
	}
	close(data[1]);
	char buf[32];
	ssize_t n = 0, r;
	while ((r = read(data[0], buf + n, sizeof(buf) - n)) > 0)
		n += r;
	CHECK_EQ(n, 10);
	CHECK(memcmp(buf, "from child", 10) == 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 100);
	close(fd);
	close(data[0]);

	/* SIGCHLD (blocked here, taken with sigtimedwait) names the child and its status. */
	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &chld, &old), 0);
	pid = spawn(exit_with, 9);
	struct timespec ts = {5, 0};
	memset(&si, 0, sizeof(si));
	CHECK_EQ(sigtimedwait(&chld, &si, &ts), SIGCHLD);
	CHECK_EQ(si.si_signo, SIGCHLD);
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_code, CLD_EXITED);
	CHECK_EQ(si.si_status, 9);
	/* Taking the signal did not reap the child. */
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(WEXITSTATUS(status), 9);
	CHECK_EQ(sigprocmask(SIG_SETMASK, &old, NULL), 0);

	return check_done();
}
