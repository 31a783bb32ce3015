/*
 * t_stop_cont: job-control stops. SIGSTOP (and SIGTSTP at its default) stops a child, which
 * then makes no progress; waitpid(WUNTRACED) reports WIFSTOPPED/WSTOPSIG once, and waitid
 * CLD_STOPPED; SIGCONT resumes it (its handler runs too) and WCONTINUED/CLD_CONTINUED report
 * that; a stopped child dies of SIGKILL and of SIGTERM once continued; stopping a child
 * interrupts nothing: its blocking read resumes after SIGCONT.
 */
#include "check.h"
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

static volatile uint64_t *shared; /* [0]: the spinner's counter, [1]: its SIGCONT count */

static void sleep_ms(long ms)
{
	struct timespec d = {ms / 1000, (ms % 1000) * 1000000};

	nanosleep(&d, NULL);
}

static void on_cont(int sig)
{
	(void)sig;
	shared[1]++;
}

/*
 * A child that counts as fast as it can, in a process group of its own: with its parent (us)
 * in another group of the same session the group is not orphaned, so SIGTSTP's default
 * action stops it whatever group we run in (a sandbox's init may lead an orphaned one).
 */
static pid_t spinner(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		setpgid(0, 0);
		signal(SIGCONT, on_cont);
		for (;;)
			shared[0]++;
	}
	CHECK_EQ(setpgid(pid, pid), 0);
	return pid;
}

/* Waits until the spinner has visibly run. */
static int await_progress(void)
{
	uint64_t start = shared[0];

	for (int i = 0; i < 2000; i++) {
		if (shared[0] != start)
			return 1;
		sleep_ms(1);
	}
	return 0;
}

static void test_stop_and_continue(void)
{
	int status;
	siginfo_t si;

	shared[0] = shared[1] = 0;
	pid_t pid = spinner();
	CHECK(await_progress());

	CHECK_EQ(kill(pid, SIGSTOP), 0);
	status = 0;
	CHECK_EQ(waitpid(pid, &status, WUNTRACED), pid);
	CHECK(WIFSTOPPED(status));
	CHECK_EQ(WSTOPSIG(status), SIGSTOP);
	CHECK_EQ(status, (SIGSTOP << 8) | 0x7f);
	/* Reported once. */
	CHECK_EQ(waitpid(pid, &status, WUNTRACED | WNOHANG), 0);
	/* Not running: the counter stands still. */
	uint64_t frozen = shared[0];
	sleep_ms(50);
	CHECK_EQ(shared[0], frozen);
	maybe_save(); /* a stopped child */
	CHECK_EQ(shared[0], frozen);

	CHECK_EQ(kill(pid, SIGCONT), 0);
	CHECK_EQ(waitpid(pid, &status, WCONTINUED), pid);
	CHECK(WIFCONTINUED(status));
	CHECK_EQ(status, 0xffff);
	CHECK(await_progress());
	CHECK_EQ(shared[1], 1); /* the SIGCONT handler ran */

	/* The same through waitid, with SIGTSTP's default action. */
	CHECK_EQ(kill(pid, SIGTSTP), 0);
	memset(&si, 0, sizeof(si));
	CHECK_EQ(waitid(P_PID, pid, &si, WSTOPPED), 0);
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_code, CLD_STOPPED);
	CHECK_EQ(si.si_status, SIGTSTP);
	CHECK_EQ(kill(pid, SIGCONT), 0);
	memset(&si, 0, sizeof(si));
	CHECK_EQ(waitid(P_PID, pid, &si, WCONTINUED), 0);
	CHECK_EQ(si.si_code, CLD_CONTINUED);
	CHECK_EQ(si.si_status, SIGCONT);

	/* Stopped, then killed: SIGKILL needs no SIGCONT. */
	CHECK_EQ(kill(pid, SIGSTOP), 0);
	CHECK_EQ(waitpid(pid, &status, WUNTRACED), pid);
	CHECK(WIFSTOPPED(status));
	CHECK_EQ(kill(pid, SIGKILL), 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status));
	CHECK_EQ(WTERMSIG(status), SIGKILL);
}

static void test_term_while_stopped(void)
{
	int status;

	shared[0] = 0;
	pid_t pid = spinner();
	CHECK(await_progress());
	CHECK_EQ(kill(pid, SIGSTOP), 0);
	CHECK_EQ(waitpid(pid, &status, WUNTRACED), pid);
	/* SIGTERM stays pending while stopped; SIGCONT lets it act. */
	CHECK_EQ(kill(pid, SIGTERM), 0);
	sleep_ms(20);
	CHECK_EQ(waitpid(pid, &status, WNOHANG), 0);
	CHECK_EQ(kill(pid, SIGCONT), 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status));
	CHECK_EQ(WTERMSIG(status), SIGTERM);
}

static void test_stop_does_not_interrupt_read(void)
{
	int p[2], status;

	CHECK_EQ(pipe(p), 0);
	pid_t pid = fork();
	if (pid == 0) {
		char c = 0;
		close(p[1]);
		ssize_t n = read(p[0], &c, 1);
		_exit(n == 1 && c == 'k' ? 0 : n < 0 ? 10 + errno % 100 : 2);
	}
	close(p[0]);
	sleep_ms(20);
	CHECK_EQ(kill(pid, SIGSTOP), 0);
	CHECK_EQ(waitpid(pid, &status, WUNTRACED), pid);
	CHECK(WIFSTOPPED(status));
	CHECK_EQ(kill(pid, SIGCONT), 0);
	CHECK_EQ(write(p[1], "k", 1), 1);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	close(p[1]);
}

int main(void)
{
	shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shared != MAP_FAILED);
	if (shared == MAP_FAILED)
		return check_done();
	test_stop_and_continue();
	test_term_while_stopped();
	test_stop_does_not_interrupt_read();
	return check_done();
}
