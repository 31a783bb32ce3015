/*
 * t_exec: execve from a forked child. The new image gets the given argv and envp and keeps the
 * pid; a missing file is ENOENT, a directory or a file without execute permission EACCES, a
 * path through a file ENOTDIR; O_CLOEXEC descriptors are closed and the others inherited;
 * handled signals revert to default while ignored ones stay ignored; exec from a second
 * thread replaces the whole thread group and keeps the process's pid. An exec'd image waiting
 * on a pipe carries on after a checkpoint and restore with its pid.
 */
#include "check.h"
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

struct run {
	int status;
	char out[256];
	size_t len;
};

static char *const no_env[] = {NULL};

/*
 * Runs prep(arg) then execve(path, argv, envp) in a child whose stdout and stderr are a pipe;
 * collects the output and the wait status. An exec failure writes "errno N" and exits 120.
 */
static void run_child(struct run *r, const char *path, char *const argv[], char *const envp[],
		      void (*prep)(void *), void *arg)
{
	int p[2];

	memset(r, 0, sizeof(*r));
	if (pipe(p) != 0) {
		CHECK(0);
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		dup2(p[1], 1);
		dup2(p[1], 2);
		if (p[1] > 2)
			close(p[1]);
		if (prep)
			prep(arg);
		execve(path, argv, envp);
		dprintf(1, "errno %d", errno);
		_exit(120);
	}
	close(p[1]);
	ssize_t n;
	while (r->len < sizeof(r->out) - 1 &&
	       (n = read(p[0], r->out + r->len, sizeof(r->out) - 1 - r->len)) > 0)
		r->len += (size_t)n;
	r->out[r->len] = '\0';
	close(p[0]);
	CHECK_EQ(waitpid(pid, &r->status, 0), pid);
}

static void test_exec_passes_argv_and_env(void)
{
	struct run r;
	char *argv[] = {"echo", "a", "b c", "", "d", NULL};

	run_child(&r, "/bin/echo", argv, no_env, NULL, NULL);
	CHECK_EQ(r.status, 0);
	CHECK_STREQ(r.out, "a b c  d\n");

	char *sh_argv[] = {"sh", "-c", "echo \"$FOO|$0|$1|$#\"", "zero", "first arg", NULL};
	char *env[] = {"FOO=bar baz", "PATH=/bin", NULL};
	run_child(&r, "/bin/sh", sh_argv, env, NULL, NULL);
	CHECK_EQ(r.status, 0);
	CHECK_STREQ(r.out, "bar baz|zero|first arg|1\n");

	/* The exit status of the new image is the child's. */
	char *exit_argv[] = {"sh", "-c", "exit 42", NULL};
	run_child(&r, "/bin/sh", exit_argv, no_env, NULL, NULL);
	CHECK(WIFEXITED(r.status));
	CHECK_EQ(WEXITSTATUS(r.status), 42);
}

/* The new image keeps the pid: sh's $$ is the pid fork returned, before and after a
 * checkpoint taken while it waits for a line on its stdin. */
static void test_exec_keeps_pid(void)
{
	int p[2], in[2];

	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(pipe(in), 0);
	pid_t pid = fork();
	if (pid == 0) {
		char *argv[] = {"sh", "-c", "echo $$; read line; echo $$ $line", NULL};
		dup2(in[0], 0);
		dup2(p[1], 1);
		close(in[1]);
		execve("/bin/sh", argv, no_env);
		_exit(127);
	}
	close(in[0]);
	close(p[1]);
	char buf[64] = {0};
	size_t len = 0;
	ssize_t n;
	while (len < sizeof(buf) - 1 && !memchr(buf, '\n', len) &&
	       (n = read(p[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	CHECK_EQ(atol(buf), pid);
	maybe_save(); /* the exec'd sh blocked in read */
	CHECK_EQ(write(in[1], "after\n", 6), 6);
	close(in[1]);
	while (len < sizeof(buf) - 1 && (n = read(p[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(p[0]);
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
	char want[64];
	snprintf(want, sizeof(want), "%d\n%d after\n", pid, pid);
	CHECK_STREQ(buf, want);
}

static void test_exec_errors(void)
{
	char *argv[] = {"x", NULL};

	/* In this process: a failed execve returns and leaves everything as it was. */
	CHECK_ERR(execve("/no/such/file", argv, no_env), ENOENT);
	CHECK_ERR(execve("/bin", argv, no_env), EACCES);
	CHECK_ERR(execve("/", argv, no_env), EACCES);
	CHECK_ERR(execve("/etc/passwd", argv, no_env), EACCES); /* mode 0644, even for root */
	CHECK_ERR(execve("/bin/busybox/x", argv, no_env), ENOTDIR);
	CHECK_ERR(execve("", argv, no_env), ENOENT);
	CHECK_ERR(syscall(SYS_execve, BAD_PTR, argv, no_env), EFAULT);
	CHECK_ERR(syscall(SYS_execve, "/bin/true", BAD_PTR, no_env), EFAULT);
	CHECK_ERR(syscall(SYS_execve, "/bin/true", argv, BAD_PTR), EFAULT);
}

static void test_cloexec(void)
{
	int ce[2], pl[2];

	CHECK_EQ(pipe2(ce, O_CLOEXEC), 0);
	CHECK_EQ(pipe(pl), 0);
	CHECK_EQ(fcntl(ce[1], F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(pl[1], F_GETFD), 0);

	pid_t pid = fork();
	if (pid == 0) {
		char cmd[128];
		close(ce[0]);
		close(pl[0]);
		/* Writing to the close-on-exec fd fails (status 1 from the redirection) and the
		 * script goes on; the plain fd stays open. Errors go to the plain pipe too. */
		snprintf(cmd, sizeof(cmd),
			 "echo lost >&%d; a=$?; echo kept >&%d; echo \"status $a\" >&%d; exit 0",
			 ce[1], pl[1], pl[1]);
		char *argv[] = {"sh", "-c", cmd, NULL};
		dup2(pl[1], 2);
		execve("/bin/sh", argv, no_env);
		_exit(127);
	}
	close(ce[1]);
	close(pl[1]);
	char buf[256] = {0};
	size_t len = 0;
	ssize_t n;
	while (len < sizeof(buf) - 1 && (n = read(pl[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	/* The close-on-exec pipe's write end died with the exec: EOF and no data. */
	char c;
	CHECK_EQ(read(ce[0], &c, 1), 0);
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
	CHECK(strstr(buf, "kept\n") != NULL);
	CHECK(strstr(buf, "status 1\n") != NULL);
	CHECK(strstr(buf, "lost") == NULL);
	close(ce[0]);
	close(pl[0]);
}

static void on_usr1(int sig)
{
	(void)sig;
}

static void handle_usr1_ignore_usr2(void *arg)
{
	(void)arg;
	signal(SIGUSR1, on_usr1);
	signal(SIGUSR2, SIG_IGN);
}

static void test_exec_resets_handled_signals(void)
{
	struct run r;

	/* An ignored signal stays ignored in the new image. */
	char *ign_argv[] = {"sh", "-c", "kill -USR2 $$; echo survived", NULL};
	run_child(&r, "/bin/sh", ign_argv, no_env, handle_usr1_ignore_usr2, NULL);
	CHECK_EQ(r.status, 0);
	CHECK_STREQ(r.out, "survived\n");

	/* A handled one is back to its default action (terminate). */
	char *dfl_argv[] = {"sh", "-c", "kill -USR1 $$; echo survived", NULL};
	run_child(&r, "/bin/sh", dfl_argv, no_env, handle_usr1_ignore_usr2, NULL);
	CHECK(WIFSIGNALED(r.status));
	CHECK_EQ(WTERMSIG(r.status), SIGUSR1);
	CHECK_STREQ(r.out, "");
}

static void *exec_from_thread(void *arg)
{
	int fd = *(int *)arg;
	/* The pipeline's children send SIGCHLD to the process, which the old main thread must
	 * not be left to take (into the handler of an image that is gone). */
	char *argv[] = {"sh", "-c", "true | true; sleep 0.05 | true; echo $$", NULL};

	dup2(fd, 1);
	execve("/bin/sh", argv, no_env);
	_exit(126);
}

/* exec from a non-leader thread: the other threads go away and the pid stays the tgid. */
static void test_exec_from_second_thread(void)
{
	int p[2];

	CHECK_EQ(pipe(p), 0);
	pid_t pid = fork();
	if (pid == 0) {
		pthread_t t;
		close(p[0]);
		if (pthread_create(&t, NULL, exec_from_thread, &p[1]) != 0)
			_exit(125);
		/* The main thread blocks; the exec must tear it down. */
		for (;;)
			pause();
	}
	close(p[1]);
	char buf[32] = {0};
	size_t len = 0;
	ssize_t n;
	while (len < sizeof(buf) - 1 && (n = read(p[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(p[0]);
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
	CHECK_EQ(atol(buf), pid);
}

struct leader_exec_pipes {
	int go_rd, mark_wr;
};

/* Blocks until the pipe has a byte, then marks that it ran on. */
static void *wait_then_mark(void *arg)
{
	struct leader_exec_pipes *lp = arg;
	char c;

	if (read(lp->go_rd, &c, 1) == 1 && write(lp->mark_wr, "x", 1) != 1)
		_exit(124);
	return NULL;
}

/* exec from the leader while another thread waits: the other thread goes too, and a byte
 * the new image sends it wakes nobody. */
static void test_exec_from_leader_kills_threads(void)
{
	int go[2], mark[2], out[2];

	CHECK_EQ(pipe(go), 0);
	CHECK_EQ(pipe(mark), 0);
	CHECK_EQ(pipe(out), 0);
	pid_t pid = fork();
	if (pid == 0) {
		static struct leader_exec_pipes lp;
		pthread_t t;
		lp.go_rd = go[0];
		lp.mark_wr = mark[1];
		close(mark[0]);
		close(out[0]);
		if (pthread_create(&t, NULL, wait_then_mark, &lp) != 0)
			_exit(125);
		char cmd[64];
		snprintf(cmd, sizeof(cmd), "echo go >&%d; sleep 0.1; echo $$", go[1]);
		char *argv[] = {"sh", "-c", cmd, NULL};
		dup2(out[1], 1);
		execve("/bin/sh", argv, no_env);
		_exit(126);
	}
	close(go[0]);
	close(go[1]);
	close(mark[1]);
	close(out[1]);
	char buf[32] = {0}, c;
	CHECK(read(out[0], buf, sizeof(buf) - 1) > 0);
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
	CHECK_EQ(atol(buf), pid);
	CHECK_EQ(read(mark[0], &c, 1), 0); /* nobody ran on to mark */
	close(mark[0]);
	close(out[0]);
}

/* exec deletes the process's POSIX timers: one due after the exec sends nothing. */
static void test_exec_deletes_posix_timers(void)
{
	int out[2];

	CHECK_EQ(pipe(out), 0);
	pid_t pid = fork();
	if (pid == 0) {
		struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1};
		struct itimerspec its = {.it_value = {0, 50 * 1000 * 1000}};
		timer_t tm;
		if (timer_create(CLOCK_MONOTONIC, &ev, &tm) || timer_settime(tm, 0, &its, NULL))
			_exit(125);
		char *argv[] = {"sh", "-c", "sleep 0.2; echo alive", NULL};
		close(out[0]);
		dup2(out[1], 1);
		execve("/bin/sh", argv, no_env);
		_exit(126);
	}
	close(out[1]);
	char buf[32] = {0};
	CHECK(read(out[0], buf, sizeof(buf) - 1) > 0);
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
	CHECK_STREQ(buf, "alive\n");
	close(out[0]);
}

int main(void)
{
	test_exec_passes_argv_and_env();
	test_exec_keeps_pid();
	test_exec_errors();
	test_cloexec();
	test_exec_resets_handled_signals();
	test_exec_from_second_thread();
	test_exec_from_leader_kills_threads();
	test_exec_deletes_posix_timers();
	return check_done();
}
