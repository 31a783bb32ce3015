/*
 * t_sigpipe: writing to a pipe with no reader. By default SIGPIPE kills the writer; ignored,
 * the write fails with EPIPE; handled, the handler runs (si_code SI_USER, si_pid ourselves)
 * and the write fails with EPIPE; blocked, the write fails and SIGPIPE stays pending. A
 * reader still open elsewhere (a child's copy) keeps the pipe writable.
 */
#include "check.h"
#include <signal.h>
#include <sys/wait.h>

static volatile int handled;
static siginfo_t handled_info;

static void on_pipe(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	handled_info = *si;
	handled++;
}

/* A pipe whose read end is closed; returns the write end. */
static int broken_pipe(void)
{
	int p[2];

	if (pipe(p) != 0)
		return -1;
	close(p[0]);
	return p[1];
}

static void test_default_kills(void)
{
	int status;

	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGPIPE, SIG_DFL);
		int w = broken_pipe();
		(void)write(w, "x", 1);
		_exit(99);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status));
	CHECK_EQ(WTERMSIG(status), SIGPIPE);
}

static void test_ignored_gives_epipe(void)
{
	int w = broken_pipe();

	signal(SIGPIPE, SIG_IGN);
	CHECK_ERR(write(w, "x", 1), EPIPE);
	CHECK_EQ(write(w, "", 0), 0); /* Linux: an empty write to a pipe returns 0 first */
	close(w);
	signal(SIGPIPE, SIG_DFL);
}

static void test_handled_gives_epipe(void)
{
	struct sigaction sa;
	int w = broken_pipe();

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_pipe;
	sa.sa_flags = SA_SIGINFO;
	CHECK_EQ(sigaction(SIGPIPE, &sa, NULL), 0);
	handled = 0;
	CHECK_ERR(write(w, "xyz", 3), EPIPE);
	CHECK_EQ(handled, 1);
	CHECK_EQ(handled_info.si_signo, SIGPIPE);
	CHECK_EQ(handled_info.si_code, SI_USER);
	CHECK_EQ(handled_info.si_pid, getpid());
	CHECK_EQ(handled_info.si_uid, getuid());
	close(w);
	signal(SIGPIPE, SIG_DFL);
}

static void test_blocked_stays_pending(void)
{
	sigset_t set, old, pending;
	int w = broken_pipe();

	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &set, &old), 0);
	CHECK_ERR(write(w, "x", 1), EPIPE);
	CHECK_EQ(sigpending(&pending), 0);
	CHECK(sigismember(&pending, SIGPIPE));
	maybe_save(); /* a pending blocked SIGPIPE */
	siginfo_t si;
	struct timespec zero = {0, 0};
	CHECK_EQ(sigtimedwait(&set, &si, &zero), SIGPIPE);
	CHECK_EQ(si.si_code, SI_USER);
	CHECK_EQ(sigpending(&pending), 0);
	CHECK(!sigismember(&pending, SIGPIPE));
	CHECK_EQ(sigprocmask(SIG_SETMASK, &old, NULL), 0);
	close(w);
}

static void test_reader_elsewhere_keeps_pipe_open(void)
{
	int p[2], go[2], status;

	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(pipe(go), 0);
	pid_t pid = fork();
	if (pid == 0) {
		char buf[8], c;
		close(p[1]);
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(100);
		_exit(read(p[0], buf, sizeof(buf)) == 5 && memcmp(buf, "hello", 5) == 0 ? 0 : 1);
	}
	close(p[0]);
	close(go[0]);
	/* Our read end is closed, the child's is not: the write succeeds. */
	signal(SIGPIPE, SIG_IGN);
	CHECK_EQ(write(p[1], "hello", 5), 5);
	CHECK_EQ(write(go[1], "g", 1), 1);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
	/* The last reader is gone now. */
	CHECK_ERR(write(p[1], "x", 1), EPIPE);
	signal(SIGPIPE, SIG_DFL);
	close(p[1]);
	close(go[1]);
}

int main(void)
{
	test_default_kills();
	test_ignored_gives_epipe();
	test_handled_gives_epipe();
	test_blocked_stays_pending();
	test_reader_elsewhere_keeps_pipe_open();
	return check_done();
}
