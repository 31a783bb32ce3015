/*
 * t_sa_restart: a handled signal interrupting a blocking syscall. With SA_RESTART, read on an
 * empty pipe and wait4 are restarted and complete; without it they fail with EINTR. Sleeps
 * and waits for readiness (nanosleep, poll) fail with EINTR either way. The signal is a
 * periodic ITIMER_REAL SIGALRM, so it also lands if the first tick comes early; the data
 * (or the child's exit) is produced by a child only after the handler has run. The first
 * handler of a restarted read and of an interrupted one checkpoints: the pending restart or
 * EINTR survives the restore.
 */
#include "check.h"
#include <poll.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

static int go_w = -1; /* the handler tells the helper child to proceed */
static volatile int alarms, save_in_handler;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
	if (go_w >= 0 && alarms == 1)
		(void)write(go_w, "g", 1);
	if (save_in_handler && alarms == 1)
		maybe_save(); /* a read interrupted, to be restarted or to fail with EINTR */
}

static void install(int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGALRM, &sa, NULL), 0);
}

/* A 20 ms periodic SIGALRM. */
static void start_ticks(void)
{
	struct itimerval it = {{0, 20000}, {0, 20000}};

	alarms = 0;
	CHECK_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
}

static void stop_ticks(void)
{
	struct itimerval off = {{0, 0}, {0, 0}};

	CHECK_EQ(setitimer(ITIMER_REAL, &off, NULL), 0);
}

/*
 * Forks a helper that waits for the handler's "go", sleeps 100 ms (several ticks land on the
 * blocked parent meanwhile), writes "x" to data_w if it is not -1, and exits with 5.
 */
static pid_t start_helper(int data_w)
{
	int go[2];

	CHECK_EQ(pipe(go), 0);
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		struct timespec d = {0, 100 * 1000 * 1000};
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(100);
		nanosleep(&d, NULL);
		if (data_w >= 0 && write(data_w, "x", 1) != 1)
			_exit(101);
		_exit(5);
	}
	close(go[0]);
	go_w = go[1];
	return pid;
}

static void finish_helper(pid_t pid)
{
	int status;

	close(go_w);
	go_w = -1;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 5);
}

static void test_read_restarted(void)
{
	int data[2];
	char c = 0;

	CHECK_EQ(pipe(data), 0);
	install(SA_RESTART);
	pid_t pid = start_helper(data[1]);
	save_in_handler = 1;
	start_ticks();
	CHECK_EQ(read(data[0], &c, 1), 1);
	stop_ticks();
	save_in_handler = 0;
	CHECK_EQ(c, 'x');
	CHECK(alarms >= 1);
	finish_helper(pid);
	close(data[0]);
	close(data[1]);
}

static void test_read_interrupted(void)
{
	int data[2];
	char c;

	CHECK_EQ(pipe(data), 0);
	install(0);
	save_in_handler = 1;
	start_ticks();
	CHECK_ERR(read(data[0], &c, 1), EINTR);
	stop_ticks();
	save_in_handler = 0;
	CHECK(alarms >= 1);
	close(data[0]);
	close(data[1]);
}

static void test_wait_restarted_or_interrupted(void)
{
	int status;

	install(SA_RESTART);
	pid_t pid = start_helper(-1);
	start_ticks();
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	stop_ticks();
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 5);
	CHECK(alarms >= 1);
	close(go_w);
	go_w = -1;

	install(0);
	pid = start_helper(-1);
	start_ticks();
	CHECK_ERR(waitpid(pid, &status, 0), EINTR);
	stop_ticks();
	finish_helper(pid);
}

/* Sleeps and readiness waits are never restarted. */
static void test_never_restarted(void)
{
	int p[2];

	install(SA_RESTART);
	struct timespec req = {1, 0}, rem = {0, 0};
	start_ticks();
	CHECK_ERR(nanosleep(&req, &rem), EINTR);
	stop_ticks();
	CHECK(rem.tv_sec < 1 && (rem.tv_sec > 0 || rem.tv_nsec > 0));

	CHECK_EQ(pipe(p), 0);
	struct pollfd pfd = {.fd = p[0], .events = POLLIN};
	start_ticks();
	CHECK_ERR(poll(&pfd, 1, 1000), EINTR);
	stop_ticks();
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	test_read_restarted();
	test_read_interrupted();
	test_wait_restarted_or_interrupted();
	test_never_restarted();
	signal(SIGALRM, SIG_DFL);
	return check_done();
}
