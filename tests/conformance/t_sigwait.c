/*
 * t_sigwait: waiting for signals. sigsuspend swaps in a mask, runs the handler and returns
 * EINTR with the old mask back; pause returns EINTR once a handler has run; sigtimedwait and
 * sigwaitinfo take a blocked pending signal (lowest first, real-time ones in queue order with
 * their values) without running a handler, time out with EAGAIN no earlier than asked, and
 * wake for a signal from another process; a thread waiting in sigwaitinfo gets a
 * process-directed signal that every thread blocks.
 */
#include "check.h"
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <sys/wait.h>

static volatile int handled;

static void on_sig(int sig)
{
	(void)sig;
	handled++;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static sigset_t set_of(int a, int b)
{
	sigset_t s;

	sigemptyset(&s);
	if (a)
		sigaddset(&s, a);
	if (b)
		sigaddset(&s, b);
	return s;
}

/* Forks a child that sleeps ms milliseconds, sends sig to us and exits 0. */
static pid_t signal_later(int sig, long ms)
{
	pid_t parent = getpid();
	pid_t pid = fork();

	if (pid == 0) {
		struct timespec d = {ms / 1000, (ms % 1000) * 1000000};
		nanosleep(&d, NULL);
		_exit(kill(parent, sig) == 0 ? 0 : 1);
	}
	return pid;
}

static void reap(pid_t pid)
{
	int status;

	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
}

static void test_sigsuspend_and_pause(void)
{
	sigset_t usr1 = set_of(SIGUSR1, 0), old, empty, now;

	signal(SIGUSR1, on_sig);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &usr1, &old), 0);

	/* Already pending: sigsuspend returns at once after the handler. */
	handled = 0;
	CHECK_EQ(raise(SIGUSR1), 0);
	CHECK_EQ(handled, 0);
	sigemptyset(&empty);
	CHECK_ERR(sigsuspend(&empty), EINTR);
	CHECK_EQ(handled, 1);
	CHECK_EQ(sigprocmask(SIG_BLOCK, NULL, &now), 0);
	CHECK(sigismember(&now, SIGUSR1));

	/* Not yet pending: it sleeps until another process signals. */
	pid_t pid = signal_later(SIGUSR1, 30);
	CHECK_ERR(sigsuspend(&empty), EINTR);
	CHECK_EQ(handled, 2);
	reap(pid);

	/*
	 * pause, with the signal unblocked. A signal landing before pause would be lost to it,
	 * so the child keeps sending until we stop it.
	 */
	CHECK_EQ(sigprocmask(SIG_SETMASK, &old, NULL), 0);
	pid_t parent = getpid();
	pid = fork();
	if (pid == 0) {
		struct timespec d = {0, 20 * 1000 * 1000};
		for (int i = 0; i < 250; i++) {
			nanosleep(&d, NULL);
			kill(parent, SIGUSR1);
		}
		_exit(0);
	}
	CHECK_ERR(pause(), EINTR);
	CHECK(handled >= 3);
	CHECK_EQ(kill(pid, SIGKILL), 0);
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	signal(SIGUSR1, SIG_DFL);
}

static void test_sigtimedwait(void)
{
	sigset_t set = set_of(SIGUSR1, SIGUSR2), old;
	siginfo_t si;
	struct timespec zero = {0, 0}, t50 = {0, 50 * 1000 * 1000};

	signal(SIGUSR1, on_sig);
	signal(SIGUSR2, on_sig);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &set, &old), 0);
	handled = 0;

	/* Nothing pending. */
	CHECK_ERR(sigtimedwait(&set, &si, &zero), EAGAIN);
	long long start = now_ms();
	CHECK_ERR(sigtimedwait(&set, &si, &t50), EAGAIN);
	CHECK(now_ms() - start >= 50);
	CHECK(now_ms() - start < 1500);

	/* Two pending: lowest number first; the handler never runs. */
	CHECK_EQ(kill(getpid(), SIGUSR2), 0);
	CHECK_EQ(kill(getpid(), SIGUSR1), 0);
	maybe_save(); /* blocked pending signals */
	memset(&si, 0, sizeof(si));
	CHECK_EQ(sigwaitinfo(&set, &si), SIGUSR1);
	CHECK_EQ(si.si_signo, SIGUSR1);
	CHECK_EQ(si.si_code, SI_USER);
	CHECK_EQ(si.si_pid, getpid());
	int sig = 0;
	CHECK_EQ(sigwait(&set, &sig), 0);
	CHECK_EQ(sig, SIGUSR2);
	CHECK_EQ(handled, 0);
	CHECK_ERR(sigtimedwait(&set, &si, &zero), EAGAIN);

	/* Real-time: queued in order with values. */
	sigset_t rt = set_of(SIGRTMIN + 2, 0);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &rt, NULL), 0);
	for (int i = 0; i < 3; i++) {
		union sigval v = {.sival_int = 50 + i};
		CHECK_EQ(sigqueue(getpid(), SIGRTMIN + 2, v), 0);
	}
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(sigtimedwait(&rt, &si, &zero), SIGRTMIN + 2);
		CHECK_EQ(si.si_code, SI_QUEUE);
		CHECK_EQ(si.si_value.sival_int, 50 + i);
	}
	CHECK_ERR(sigtimedwait(&rt, &si, &zero), EAGAIN);

	/* Woken by another process. */
	pid_t pid = signal_later(SIGUSR2, 30);
	struct timespec t5 = {5, 0};
	memset(&si, 0, sizeof(si));
	CHECK_EQ(sigtimedwait(&set, &si, &t5), SIGUSR2);
	CHECK_EQ(si.si_pid, pid);
	reap(pid);

	/* Errors. */
	struct timespec bad = {0, 1000000000};
	CHECK_ERR(sigtimedwait(&set, &si, &bad), EINVAL);
	CHECK_ERR(syscall(SYS_rt_sigtimedwait, &set, &si, &zero, 4), EINVAL);
	CHECK_EQ(sigprocmask(SIG_SETMASK, &old, NULL), 0);
	signal(SIGUSR1, SIG_DFL);
	signal(SIGUSR2, SIG_DFL);
}

static void *waiter(void *arg)
{
	sigset_t set = set_of(SIGUSR1, 0);
	siginfo_t si;
	struct timespec t5 = {5, 0};

	(void)arg;
	int sig = sigtimedwait(&set, &si, &t5);
	return (void *)(long)(sig == SIGUSR1 && si.si_code == SI_USER ? 0 : 1);
}

static void test_thread_sigwait(void)
{
	sigset_t set = set_of(SIGUSR1, 0), old;
	pthread_t t;
	void *ret;

	/* Blocked everywhere (threads inherit the mask); the waiter takes it. */
	CHECK_EQ(pthread_sigmask(SIG_BLOCK, &set, &old), 0);
	CHECK_EQ(pthread_create(&t, NULL, waiter, NULL), 0);
	struct timespec d = {0, 20 * 1000 * 1000};
	nanosleep(&d, NULL);
	CHECK_EQ(kill(getpid(), SIGUSR1), 0);
	CHECK_EQ(pthread_join(t, &ret), 0);
	CHECK_EQ((long)ret, 0);
	sigset_t pending;
	CHECK_EQ(sigpending(&pending), 0);
	CHECK(!sigismember(&pending, SIGUSR1));
	CHECK_EQ(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
}

int main(void)
{
	test_sigsuspend_and_pause();
	test_sigtimedwait();
	test_thread_sigwait();
	return check_done();
}
