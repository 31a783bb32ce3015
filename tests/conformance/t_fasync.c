/*
 * t_fasync: asynchronous I/O signals. F_SETOWN names the process (F_GETOWN reads it back, a
 * process group negative; a pid that names nothing is ESRCH), F_SETOWN_EX a thread; with
 * O_ASYNC (F_SETFL or FIOASYNC) data arriving in a pipe sends the owner SIGIO (SI_KERNEL),
 * or F_SETSIG's signal with si_code POLL_IN, si_fd and si_band; without O_ASYNC nothing is
 * sent. A write by another process signals too, and so does one after a save point.
 */
#include "check.h"
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

static int wait_sig(const sigset_t *set, siginfo_t *si, long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	memset(si, 0, sizeof(*si));
	return sigtimedwait(set, si, &ts);
}

int main(void)
{
	int p[2], sig = SIGRTMIN + 2;
	sigset_t set;
	siginfo_t si;
	char buf[16];

	sigemptyset(&set);
	sigaddset(&set, SIGIO);
	sigaddset(&set, sig);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &set, NULL), 0);
	CHECK_EQ(pipe(p), 0);

	CHECK_EQ(fcntl(p[0], F_GETOWN), 0);
	CHECK_EQ(fcntl(p[0], F_SETOWN, getpid()), 0);
	CHECK_EQ(fcntl(p[0], F_GETOWN), getpid());
	CHECK_ERR(fcntl(p[0], F_SETOWN, 0x3ffffff0), ESRCH);
	CHECK_ERR(fcntl(p[0], F_SETSIG, 65), EINVAL);

	/* No O_ASYNC: no signal. */
	CHECK_EQ(write(p[1], "a", 1), 1);
	CHECK_ERR(wait_sig(&set, &si, 0), EAGAIN);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 1);

	/* O_ASYNC: SIGIO from the kernel. */
	CHECK_EQ(fcntl(p[0], F_SETFL, O_ASYNC), 0);
	CHECK(fcntl(p[0], F_GETFL) & O_ASYNC);
	CHECK_EQ(write(p[1], "b", 1), 1);
	CHECK_EQ(wait_sig(&set, &si, 2000), SIGIO);
	CHECK_EQ(si.si_code, SI_KERNEL);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 1);

	/* F_SETSIG: the chosen signal, with what happened and on which descriptor. */
	CHECK_EQ(fcntl(p[0], F_SETSIG, sig), 0);
	CHECK_EQ(fcntl(p[0], F_GETSIG), sig);
	maybe_save(); /* an owner, a signal and O_ASYNC on a pipe */
	CHECK_EQ(write(p[1], "c", 1), 1);
	CHECK_EQ(wait_sig(&set, &si, 2000), sig);
	CHECK_EQ(si.si_code, POLL_IN);
	CHECK_EQ(si.si_fd, p[0]);
	CHECK(si.si_band & POLLIN);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 1);

	/* A writer in another process. */
	pid_t pid = fork();
	if (pid == 0)
		_exit(write(p[1], "d", 1) == 1 ? 0 : 1);
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(wait_sig(&set, &si, 2000), sig);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 1);

	/* FIOASYNC clears and sets it too. */
	int off = 0, on = 1;
	CHECK_EQ(ioctl(p[0], FIOASYNC, &off), 0);
	CHECK(!(fcntl(p[0], F_GETFL) & O_ASYNC));
	CHECK_EQ(write(p[1], "e", 1), 1);
	CHECK_ERR(wait_sig(&set, &si, 0), EAGAIN);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 1);
	CHECK_EQ(ioctl(p[0], FIOASYNC, &on), 0);
	CHECK(fcntl(p[0], F_GETFL) & O_ASYNC);

	/* Owners: a thread (F_OWNER_TID), a process group (negative). */
	struct f_owner_ex ex = {F_OWNER_TID, (pid_t)syscall(SYS_gettid)}, got;
	CHECK_EQ(fcntl(p[0], F_SETOWN_EX, &ex), 0);
	CHECK_EQ(fcntl(p[0], F_GETOWN_EX, &got), 0);
	CHECK_EQ(got.type, F_OWNER_TID);
	CHECK_EQ(got.pid, ex.pid);
	CHECK_EQ(write(p[1], "f", 1), 1);
	CHECK_EQ(wait_sig(&set, &si, 2000), sig);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 1);
	ex.type = 99;
	CHECK_ERR(fcntl(p[0], F_SETOWN_EX, &ex), EINVAL);
	/* A group of our own (a session leader has one): the signal goes to every process in
	 * it. */
	if (getsid(0) != getpid())
		CHECK_EQ(setpgid(0, 0), 0);
	CHECK_EQ(fcntl(p[0], F_SETOWN, -getpgrp()), 0);
	CHECK_EQ(fcntl(p[0], F_GETOWN), -getpgrp());
	CHECK_EQ(write(p[1], "g", 1), 1);
	CHECK_EQ(wait_sig(&set, &si, 2000), sig);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 1);

	close(p[0]);
	close(p[1]);
	return check_done();
}
