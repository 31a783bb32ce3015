/*
 * t_rlimit_cpu: RLIMIT_CPU as Linux enforces it: SIGXCPU when the process's CPU time reaches
 * the soft limit (which kills by default), again every second after, and SIGKILL at the hard
 * limit; the limit is the process's, inherited over fork.
 * conformance: no-musl (CPU-bound for seconds; the C library plays no part)
 */
#include "check.h"
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

static int report[2];

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Each SIGXCPU leaves a byte in the pipe, for the parent to count after the SIGKILL. */
static void on_xcpu(int sig)
{
	(void)sig;
	write(report[1], "x", 1);
}

/* Burns SECONDS of CPU time, computing between rare clock reads (a read is a syscall the
 * Sentry serves, whose time is not the guest's). */
static void spin(double seconds)
{
	volatile unsigned long n;

	while (cpu_now() < seconds)
		for (n = 0; n < 10000000; n++)
			;
}

int main(void)
{
	int status;

	/* Default action: killed by SIGXCPU at the soft limit. */
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct rlimit lim = {1, RLIM_INFINITY};
		if (setrlimit(RLIMIT_CPU, &lim))
			_exit(10);
		maybe_save();
		spin(4);
		_exit(11);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status));
	CHECK_EQ(WTERMSIG(status), SIGXCPU);

	/* Handled: SIGXCPU at 1 s and 2 s of CPU, SIGKILL at 3 s; the limit is inherited over
	 * fork, each process counting its own CPU time. */
	struct rlimit lim = {1, 3};
	CHECK_EQ(pipe(report), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		signal(SIGXCPU, on_xcpu);
		if (setrlimit(RLIMIT_CPU, &lim))
			_exit(10);
		pid_t g = fork();
		if (g == 0) {
			signal(SIGXCPU, SIG_DFL);
			spin(6);
			_exit(11);
		}
		if (waitpid(g, &status, 0) != g || !WIFSIGNALED(status))
			_exit(12);
		/* The grandchild, which kept the default action, died of SIGXCPU. */
		if (WTERMSIG(status) != SIGXCPU)
			_exit(13);
		spin(6);
		_exit(14);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status));
	CHECK_EQ(WTERMSIG(status), SIGKILL);
	if (WIFEXITED(status))
		printf("child exited %d\n", WEXITSTATUS(status));
	close(report[1]);
	char buf[8];
	CHECK_EQ(read(report[0], buf, sizeof(buf)), 2);
	return check_done();
}
