/*
 * t_init_signals: the init of a PID namespace cannot be killed from inside it (pid_namespaces(7),
 * kill(2)). The test runs as pid 1 (natively in a fresh PID namespace, `native-proc`; in the
 * sandbox as its init). From a child and from init itself, SIGKILL and SIGSTOP sent to init are
 * dropped, and so is every other signal whose action is SIG_DFL; kill returns 0 all the same.
 * A signal init handles or ignores behaves as for any process; a blocked SIG_DFL signal stays
 * pending (sigpending shows it) and is dropped when unblocked. Kernel-made signals obey the same
 * rule: SIGPIPE of a write to a pipe with no reader (the write fails with EPIPE), SIGALRM of a
 * timer, and a child's exit signal (a clone child whose exit signal is SIGKILL). Only a
 * process that is not init dies of what it does not handle.
 * conformance: native-proc
 */
#include "check.h"
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

static volatile sig_atomic_t usr2_seen;

static void on_usr2(int sig)
{
	(void)sig;
	usr2_seen++;
}

static void pause_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Init's state letter in /proc/1/stat (R, S, T, ...). */
static char init_state(void)
{
	char buf[512], *p;
	FILE *f = fopen("/proc/1/stat", "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

/* In a child: sends init every signal that would end or stop any other process, and checks
 * that each send succeeds and that init is still there and not stopped. The exit status says
 * how many checks failed. */
static int child_signals_init(void)
{
	const int sigs[] = {SIGKILL, SIGSTOP, SIGTERM, SIGINT,	SIGHUP,	 SIGQUIT, SIGUSR1,
			    SIGSEGV, SIGABRT, SIGTSTP, SIGTTIN, SIGALRM, SIGRTMIN};
	int bad = 0;

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		if (kill(1, sigs[i]) != 0) {
			dprintf(1, "kill(1, %d) from a child: %s\n", sigs[i], strerror(errno));
			bad++;
		}
		pause_ms(5);
		char st = init_state();
		if (kill(1, 0) != 0 || st == 'T' || st == 't' || st == 'Z' || st == 'X') {
			dprintf(1, "after signal %d from a child init is '%c'\n", sigs[i], st);
			bad++;
		}
	}
	if (syscall(SYS_tgkill, 1, 1, SIGKILL) != 0 || syscall(SYS_tkill, 1, SIGTERM) != 0)
		bad++;
	return bad;
}

static int exit_now(void *arg)
{
	(void)arg;
	return 0;
}

int main(void)
{
	int st;
	sigset_t set, pending;

	if (getpid() != 1) {
		/* Natively without a PID namespace of its own (as an ordinary user): nothing to
		 * test. */
		dprintf(1, "not pid 1: skipped\n");
		return check_done();
	}
	/* A group of its own for kill(0, ...): natively init shares unshare's, in the sandbox it
	 * leads its session already. */
	if (getpgrp() != getpid())
		CHECK_EQ(setpgid(0, 0), 0);
	/* SIGUSR2 is handled: it arrives as for any process. */
	CHECK_EQ(signal(SIGUSR2, on_usr2) == SIG_ERR, 0);
	maybe_save();

	/* From a child: nothing it sends ends or stops init. */
	pid_t c = fork();
	CHECK(c >= 0);
	if (c == 0)
		_exit(child_signals_init());
	CHECK_EQ(waitpid(c, &st, 0), c);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
	CHECK_EQ(kill(1, 0), 0);

	/* From init itself: kill, raise, its own group, tgkill, sigqueue. */
	CHECK_EQ(kill(1, SIGKILL), 0);
	CHECK_EQ(kill(getpid(), SIGTERM), 0);
	CHECK_EQ(raise(SIGINT), 0);
	CHECK_EQ(kill(0, SIGHUP), 0);
	CHECK_EQ(syscall(SYS_tgkill, 1, 1, SIGSTOP), 0);
	union sigval v = {.sival_int = 7};
	CHECK_EQ(sigqueue(1, SIGUSR1, v), 0);
	CHECK_EQ(sigqueue(1, SIGRTMIN + 1, v), 0);
	maybe_save();

	/* A handled signal still arrives. */
	CHECK_EQ(kill(1, SIGUSR2), 0);
	CHECK_EQ(usr2_seen, 1);

	/* Blocked, a SIG_DFL signal waits like any other; unblocked, it is dropped. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &set, NULL), 0);
	CHECK_EQ(kill(1, SIGTERM), 0);
	CHECK_EQ(sigpending(&pending), 0);
	CHECK_EQ(sigismember(&pending, SIGTERM), 1);
	maybe_save();
	CHECK_EQ(sigprocmask(SIG_UNBLOCK, &set, NULL), 0);
	CHECK_EQ(sigpending(&pending), 0);
	CHECK_EQ(sigismember(&pending, SIGTERM), 0);

	/* Kernel-made signals: SIGPIPE (the write fails with EPIPE), SIGALRM of an interval
	 * timer, a child's SIGKILL exit signal. */
	int p[2];
	CHECK_EQ(pipe(p), 0);
	close(p[0]);
	CHECK_ERR(write(p[1], "x", 1), EPIPE);
	close(p[1]);
	struct itimerval it = {{0, 0}, {0, 10000}};
	CHECK_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
	pause_ms(50);
	static char stack[16384] __attribute__((aligned(16)));
	pid_t k = clone(exit_now, stack + sizeof(stack), SIGKILL, NULL);
	CHECK(k > 0);
	pause_ms(20);
	CHECK_EQ(waitpid(k, &st, __WALL), k);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	/* Any other process still dies of what it does not handle. */
	c = fork();
	CHECK(c >= 0);
	if (c == 0) {
		raise(SIGTERM);
		_exit(0);
	}
	CHECK_EQ(waitpid(c, &st, 0), c);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	return check_done();
}
