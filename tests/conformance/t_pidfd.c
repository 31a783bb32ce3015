/*
 * t_pidfd: pidfd_open names a process (close-on-exec always; ENOENT, before Linux 6.9 EINVAL,
 * for a thread that does not lead its process; EINVAL for bad flags or pids; ESRCH for no
 * process); the file polls readable
 * once the process has exited; pidfd_send_signal signals it (EINVAL for unknown flags or an
 * info whose signal differs; ESRCH once it is reaped;
 * EPERM for a forged si_code sent to another process); waitid(P_PIDFD) waits for it, and
 * with a non-blocking pidfd gives EAGAIN while it runs; a reaped process's pidfd gives
 * ECHILD and hangs up.
 * A file that is not a pidfd is EBADF to both calls; an open /proc/PID directory serves
 * pidfd_send_signal as a pidfd (not /proc/PID/task/TID).
 * conformance: native-proc
 */
#include "check.h"
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static int pidfd_open(pid_t pid, unsigned flags)
{
	return (int)syscall(SYS_pidfd_open, pid, flags);
}

static int send_signal(int fd, int sig, siginfo_t *info, unsigned flags)
{
	return (int)syscall(SYS_pidfd_send_signal, fd, sig, info, flags);
}

static short poll_events(int fd, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, timeout_ms) == 1 ? p.revents : 0;
}

static pthread_t thread;
static volatile pid_t thread_tid;
static int thread_go[2];

static void *thread_main(void *arg)
{
	char c;

	(void)arg;
	thread_tid = (pid_t)syscall(SYS_gettid);
	read(thread_go[0], &c, 1);
	return NULL;
}

int main(void)
{
	int self = pidfd_open(getpid(), 0);

	CHECK(self >= 0);
	CHECK_EQ(fcntl(self, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(poll_events(self, 0), 0); /* running */
	CHECK_ERR(pidfd_open(getpid(), 0x1), EINVAL);
	CHECK_ERR(pidfd_open(0, 0), EINVAL);
	CHECK_ERR(pidfd_open(-1, 0), EINVAL);
	CHECK_ERR(pidfd_open(99999, 0), ESRCH);
	CHECK_EQ(send_signal(self, 0, NULL, 0), 0);
	CHECK_ERR(send_signal(self, 0, NULL, 0x100), EINVAL); /* no such flag */
	CHECK_ERR(send_signal(99, 0, NULL, 0), EBADF);
	CHECK_ERR(send_signal(self, 65, NULL, 0), EINVAL);

	/* A thread that does not lead the process has no pidfd of its own (without PIDFD_THREAD).
	 */
	CHECK_EQ(pipe(thread_go), 0);
	CHECK_EQ(pthread_create(&thread, NULL, thread_main, NULL), 0);
	while (!thread_tid)
		sched_yield();
	/* EINVAL before Linux 6.9, ENOENT since. */
	errno = 0;
	CHECK_EQ(pidfd_open(thread_tid, 0), -1);
	CHECK(errno == ENOENT || errno == EINVAL);
	CHECK_EQ(write(thread_go[1], "x", 1), 1);
	CHECK_ERR(send_signal(thread_go[1], 0, NULL, 0), EBADF); /* a pipe is not a pidfd */
	CHECK_EQ(pthread_join(thread, NULL), 0);

	/* A child that waits for a signal: SIGUSR1 with our info, then SIGTERM. */
	int ready[2];
	CHECK_EQ(pipe(ready), 0);
	pid_t kid = fork();
	if (kid == 0) {
		sigset_t set;
		siginfo_t si;
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		write(ready[1], "r", 1);
		if (sigwaitinfo(&set, &si) != SIGUSR1 || si.si_code != SI_QUEUE ||
		    si.si_value.sival_int != 42)
			_exit(1);
		pause(); /* until SIGTERM */
		_exit(2);
	}
	char c;
	CHECK_EQ(read(ready[0], &c, 1), 1);
	int fd = pidfd_open(kid, 0), nb = pidfd_open(kid, O_NONBLOCK);
	CHECK(fd >= 0);
	CHECK(nb >= 0);
	CHECK_EQ(fcntl(nb, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	CHECK_EQ(poll_events(fd, 0), 0);
	siginfo_t si;
	CHECK_ERR(syscall(SYS_waitid, P_PIDFD, nb, &si, WEXITED, NULL), EAGAIN);
	memset(&si, 0, sizeof(si));
	si.si_code = SI_QUEUE;
	si.si_signo = SIGUSR2;
	CHECK_ERR(send_signal(fd, SIGUSR1, &si, 0), EINVAL); /* the signals differ */
	si.si_code = SI_USER; /* kill(2)'s code is not for another process to forge */
	si.si_signo = SIGUSR1;
	CHECK_ERR(send_signal(fd, SIGUSR1, &si, 0), EPERM);
	CHECK_ERR(send_signal(fd, SIGUSR1, BAD_PTR, 0), EFAULT);
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGUSR1;
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_int = 42;
	maybe_save(); /* the pidfds of a live child */
	CHECK_EQ(send_signal(fd, SIGUSR1, &si, 0), 0);
	CHECK_EQ(poll_events(fd, 100), 0); /* the child goes on to pause() */
	CHECK_EQ(send_signal(fd, SIGTERM, NULL, 0), 0);
	CHECK_EQ(poll_events(fd, 10000), POLLIN); /* exited: a zombie */
	CHECK_EQ(poll_events(nb, 0), POLLIN);
	CHECK_EQ(send_signal(fd, 0, NULL, 0), 0); /* a zombie can still be signalled */
	memset(&si, 0, sizeof(si));
	CHECK_EQ(syscall(SYS_waitid, P_PIDFD, fd, &si, WEXITED | WNOWAIT, NULL), 0);
	CHECK_EQ(si.si_pid, kid);
	CHECK_EQ(si.si_code, CLD_KILLED);
	CHECK_EQ(si.si_status, SIGTERM);
	memset(&si, 0, sizeof(si));
	CHECK_EQ(syscall(SYS_waitid, P_PIDFD, nb, &si, WEXITED, NULL), 0);
	CHECK_EQ(si.si_pid, kid);

	/* Reaped: the pidfd hangs up, names nobody to signal or wait for. */
	CHECK_EQ(poll_events(fd, 0) & (POLLIN | POLLHUP), POLLIN | POLLHUP);
	CHECK_ERR(send_signal(fd, 0, NULL, 0), ESRCH);
	CHECK_ERR(syscall(SYS_waitid, P_PIDFD, fd, &si, WEXITED, NULL), ECHILD);
	CHECK_ERR(syscall(SYS_waitid, P_PIDFD, 99, &si, WEXITED, NULL), EBADF);
	CHECK_ERR(syscall(SYS_waitid, P_PIDFD, thread_go[0], &si, WEXITED, NULL), EBADF);
	CHECK_EQ(close(fd), 0);
	CHECK_EQ(close(nb), 0);

	/* /proc/PID as a pidfd for pidfd_send_signal. */
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d", getpid());
	int dir = open(path, O_RDONLY | O_DIRECTORY);
	CHECK(dir >= 0);
	CHECK_EQ(send_signal(dir, 0, NULL, 0), 0);
	signal(SIGUSR2, SIG_IGN);
	CHECK_EQ(send_signal(dir, SIGUSR2, NULL, 0), 0);
	signal(SIGUSR2, SIG_DFL);
	close(dir);
	snprintf(path, sizeof(path), "/proc/%d/task/%d", getpid(), getpid());
	dir = open(path, O_RDONLY | O_DIRECTORY);
	CHECK(dir >= 0);
	CHECK_ERR(send_signal(dir, 0, NULL, 0), EBADF);
	close(dir);
	dir = open("/proc", O_RDONLY | O_DIRECTORY);
	CHECK_ERR(send_signal(dir, 0, NULL, 0), EBADF);
	close(dir);

	/* Our own process is nobody's child here: ECHILD. */
	CHECK_ERR(syscall(SYS_waitid, P_PIDFD, self, &si, WEXITED | WNOHANG, NULL), ECHILD);
	CHECK_EQ(close(self), 0);

	return check_done();
}
