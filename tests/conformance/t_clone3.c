/* t_clone3: clone3 as fork (exit_signal SIGCHLD): the child runs and its status is waited
 * for (across a checkpoint), CLONE_PARENT_SETTID writes the child's pid for the parent,
 * CLONE_PIDFD gives the parent a close-on-exec pidfd of the child (clone3's field, or clone's
 * parent_tid slot: not with CLONE_PARENT_SETTID there), CLONE_CLEAR_SIGHAND resets the
 * child's handlers as exec does, and
 * the structure's size is checked as Linux checks it (EINVAL below the first version, E2BIG
 * past a page or with unknown non-zero bytes, zero bytes past it fine); CSIGNAL bits in flags
 * and an exit signal above 64 are EINVAL. */
#include "check.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#ifndef SYS_clone3
#define SYS_clone3 435
#endif

struct clone_args_v0 {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

#define CLONE_PARENT_SETTID_FLAG 0x00100000
#define CLONE_PIDFD_FLAG 0x00001000
#define CLONE_CLEAR_SIGHAND_FLAG 0x100000000ULL

static long clone3_(void *args, size_t size)
{
	return syscall(SYS_clone3, args, size);
}

/* CLONE_PIDFD through clone3 and through clone: a pidfd that polls readable once the child
 * has exited, and waitid(P_PIDFD) reaps it. */
static void on_usr1(int sig)
{
	(void)sig;
}

/* CLONE_CLEAR_SIGHAND: the child's handled signals are SIG_DFL, its ignored ones still
 * ignored, neither with flags or mask left; not with CLONE_SIGHAND. */
static void test_clear_sighand(void)
{
	struct sigaction sa;
	struct clone_args_v0 ca;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaddset(&sa.sa_mask, SIGTERM);
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	sa.sa_handler = SIG_IGN;
	CHECK_EQ(sigaction(SIGUSR2, &sa, NULL), 0);
	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_CLEAR_SIGHAND_FLAG;
	ca.exit_signal = SIGCHLD;
	long child = clone3_(&ca, sizeof(ca));
	if (child == 0) {
		struct sigaction u1, u2;
		if (sigaction(SIGUSR1, NULL, &u1) || sigaction(SIGUSR2, NULL, &u2))
			_exit(1);
		if (u1.sa_handler != SIG_DFL || (u1.sa_flags & SA_RESTART) ||
		    sigismember(&u1.sa_mask, SIGTERM))
			_exit(2);
		if (u2.sa_handler != SIG_IGN || (u2.sa_flags & SA_RESTART))
			_exit(3);
		_exit(0);
	}
	CHECK(child > 0);
	int st;
	CHECK_EQ(waitpid((pid_t)child, &st, 0), child);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
	ca.flags = CLONE_CLEAR_SIGHAND_FLAG | CLONE_SIGHAND | CLONE_VM;
	CHECK_ERR(clone3_(&ca, sizeof(ca)), EINVAL);
	signal(SIGUSR1, SIG_DFL);
	signal(SIGUSR2, SIG_DFL);
}

static void test_pidfd(void)
{
	struct clone_args_v0 ca;
	int pidfd = -1;

	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_PIDFD_FLAG;
	ca.pidfd = (uintptr_t)&pidfd;
	ca.exit_signal = SIGCHLD;
	long child = clone3_(&ca, sizeof(ca));
	if (child == 0)
		_exit(7);
	CHECK(child > 0);
	CHECK(pidfd > 2);
	CHECK_EQ(fcntl(pidfd, F_GETFD), FD_CLOEXEC);
	struct pollfd p = {.fd = pidfd, .events = POLLIN};
	CHECK_EQ(poll(&p, 1, 5000), 1);
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	CHECK_EQ(waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED), 0);
	CHECK_EQ(si.si_pid, child);
	CHECK_EQ(si.si_status, 7);
	close(pidfd);

	/* clone(2): the descriptor goes where parent_tid points. */
	pidfd = -1;
	child = syscall(SYS_clone, CLONE_PIDFD_FLAG | SIGCHLD, NULL, &pidfd, NULL, NULL);
	if (child == 0)
		_exit(8);
	CHECK(child > 0 && pidfd > 2);
	int st;
	CHECK_EQ(waitpid((pid_t)child, &st, 0), child);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 8);
	close(pidfd);
	CHECK_ERR(syscall(SYS_clone, CLONE_PIDFD_FLAG | CLONE_PARENT_SETTID_FLAG | SIGCHLD, NULL,
			  &pidfd, NULL, NULL),
		  EINVAL);
}

int main(void)
{
	pid_t tid = 0;
	struct clone_args_v0 ca;

	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_PARENT_SETTID_FLAG;
	ca.parent_tid = (uintptr_t)&tid;
	ca.exit_signal = SIGCHLD;
	long child = clone3_(&ca, sizeof(ca));
	if (child == 0)
		_exit(5);
	CHECK(child > 0);
	maybe_save(); /* a clone3 child running or a zombie, its status not yet collected */
	CHECK_EQ(tid, child);
	int st;
	CHECK_EQ(waitpid((pid_t)child, &st, 0), child);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 5);

	/* A larger structure whose unknown tail is zero is fine. */
	static unsigned char big[256];
	memset(big, 0, sizeof(big));
	memcpy(big, &ca, sizeof(ca));
	((struct clone_args_v0 *)big)->flags = 0;
	child = clone3_(big, sizeof(big));
	if (child == 0)
		_exit(6);
	CHECK(child > 0);
	CHECK_EQ(waitpid((pid_t)child, &st, 0), child);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 6);

	big[200] = 1;
	CHECK_ERR(clone3_(big, sizeof(big)), E2BIG);
	CHECK_ERR(clone3_(&ca, 32), EINVAL);
	CHECK_ERR(clone3_(&ca, 8192), E2BIG);
	ca.flags = SIGCHLD; /* CSIGNAL bits belong in exit_signal */
	CHECK_ERR(clone3_(&ca, sizeof(ca)), EINVAL);
	ca.flags = 0;
	ca.exit_signal = 65;
	CHECK_ERR(clone3_(&ca, sizeof(ca)), EINVAL);
	CHECK_ERR(clone3_(BAD_PTR, sizeof(ca)), EFAULT);
	test_pidfd();
	test_clear_sighand();
	return check_done();
}
