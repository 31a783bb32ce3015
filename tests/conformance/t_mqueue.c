/*
 * t_mqueue: POSIX message queues. Names are checked (ENOENT, EEXIST, EACCES for a '/',
 * ENAMETOOLONG) and attributes too (EINVAL); messages come out highest priority first and in
 * order within one; a full queue is EAGAIN without waiting and ETIMEDOUT past a deadline, an
 * empty one the same for a receiver; sizes are EMSGSIZE and the wrong direction EBADF; the
 * queue file reads its status line and polls; mq_notify signals (SI_MESGQ) once, when a
 * message reaches an empty queue, and a second registration is EBUSY; an unlinked queue lives
 * on while open; a receiver blocked in another process gets a message sent later. Queued
 * messages, a registration and a blocked receiver are live across save points.
 */
#include "check.h"
#include <fcntl.h>
#include <mqueue.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

static char name[64];

static long raw_open(const char *n, int flags, int mode, struct mq_attr *a)
{
	return syscall(SYS_mq_open, n, flags, mode, a);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static struct timespec abs_in_ms(long ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	long long ns = ts.tv_sec * 1000000000LL + ts.tv_nsec + ms * 1000000LL;
	ts.tv_sec = ns / 1000000000LL;
	ts.tv_nsec = ns % 1000000000LL;
	return ts;
}

static void test_names_and_attrs(void)
{
	struct mq_attr bad = {.mq_maxmsg = 0, .mq_msgsize = 16};
	char longname[300];

	CHECK_ERR(raw_open(name + 1, O_RDWR, 0600, NULL), ENOENT);
	CHECK_ERR(raw_open("a/b", O_RDWR | O_CREAT, 0600, NULL), EACCES);
	CHECK_ERR(raw_open("", O_RDWR | O_CREAT, 0600, NULL), ENOENT);
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	CHECK_ERR(raw_open(longname, O_RDWR | O_CREAT, 0600, NULL), ENAMETOOLONG);
	CHECK_ERR(raw_open(name + 1, O_RDWR | O_CREAT, 0600, &bad), EINVAL);
	bad.mq_maxmsg = 4;
	bad.mq_msgsize = -1;
	CHECK_ERR(raw_open(name + 1, O_RDWR | O_CREAT, 0600, &bad), EINVAL);
	/* O_ACCMODE makes a queue that can be neither read nor written, and is refused by one
	 * that exists. */
	long none = raw_open(name + 1, O_ACCMODE | O_CREAT, 0600, NULL);
	char c;
	CHECK(none >= 0);
	CHECK_ERR(mq_send((mqd_t)none, "m", 1, 0), EBADF);
	CHECK_ERR(mq_receive((mqd_t)none, &c, 8192, NULL), EBADF);
	CHECK_ERR(raw_open(name + 1, O_ACCMODE, 0, NULL), EINVAL);
	close((int)none);
	CHECK_EQ(mq_unlink(name), 0);

	/* The defaults: /proc/sys/fs/mqueue's msg_default and msgsize_default. */
	mqd_t q = mq_open(name, O_RDWR | O_CREAT | O_EXCL, 0640, NULL);
	CHECK(q >= 0);
	struct mq_attr a;
	CHECK_EQ(mq_getattr(q, &a), 0);
	CHECK_EQ(a.mq_maxmsg, 10);
	CHECK_EQ(a.mq_msgsize, 8192);
	CHECK_EQ(a.mq_curmsgs, 0);
	CHECK_EQ(a.mq_flags, 0);
	CHECK_ERR(mq_open(name, O_RDWR | O_CREAT | O_EXCL, 0640, NULL), EEXIST);
	struct stat st;
	CHECK_EQ(fstat(q, &st), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0640 & ~022);
	CHECK_EQ(mq_close(q), 0);
	CHECK_EQ(mq_unlink(name), 0);
	CHECK_ERR(mq_unlink(name), ENOENT);
}

static void test_order_and_limits(void)
{
	struct mq_attr at = {.mq_maxmsg = 4, .mq_msgsize = 32};
	mqd_t q = mq_open(name, O_RDWR | O_CREAT | O_NONBLOCK, 0600, &at);
	char buf[64];
	unsigned int prio;

	CHECK(q >= 0);
	CHECK_EQ(mq_send(q, "one", 3, 1), 0);
	CHECK_EQ(mq_send(q, "five-a", 6, 5), 0);
	CHECK_EQ(mq_send(q, "three", 5, 3), 0);
	CHECK_EQ(mq_send(q, "five-b", 6, 5), 0);
	CHECK_ERR(mq_send(q, "full", 4, 0), EAGAIN);
	CHECK_ERR(mq_send(q, buf, 33, 0), EMSGSIZE);
	CHECK_ERR(syscall(SYS_mq_timedsend, q, "x", 1, 32768, NULL), EINVAL);

	/* The status line: the bytes queued. */
	char st[128] = "";
	CHECK_EQ(lseek(q, 0, SEEK_SET), 0);
	CHECK(read(q, st, sizeof(st) - 1) > 0);
	CHECK(!strncmp(st, "QSIZE:20 ", 9));

	struct pollfd p = {.fd = q, .events = POLLIN | POLLOUT};
	CHECK_EQ(poll(&p, 1, 0), 1);
	CHECK_EQ(p.revents, POLLIN);

	maybe_save(); /* four messages queued */

	CHECK_ERR(mq_receive(q, buf, 31, &prio), EMSGSIZE);
	CHECK_EQ(mq_receive(q, buf, sizeof(buf), &prio), 6);
	CHECK(!memcmp(buf, "five-a", 6));
	CHECK_EQ(prio, 5);
	CHECK_EQ(mq_receive(q, buf, sizeof(buf), &prio), 6);
	CHECK(!memcmp(buf, "five-b", 6));
	CHECK_EQ(mq_receive(q, buf, sizeof(buf), &prio), 5);
	CHECK_EQ(prio, 3);
	CHECK_EQ(mq_receive(q, buf, sizeof(buf), NULL), 3);
	CHECK(!memcmp(buf, "one", 3));
	CHECK_ERR(mq_receive(q, buf, sizeof(buf), &prio), EAGAIN);
	CHECK_EQ(poll(&p, 1, 0), 1);
	CHECK_EQ(p.revents, POLLOUT);

	/* Blocking again: an empty queue times out at its deadline, a full one too. */
	struct mq_attr nb = {.mq_flags = 0}, old;
	CHECK_EQ(mq_setattr(q, &nb, &old), 0);
	CHECK_EQ(old.mq_flags, O_NONBLOCK);
	CHECK_EQ(old.mq_maxmsg, 4);
	struct timespec dl = abs_in_ms(50);
	long long t0 = now_ms();
	CHECK_ERR(mq_timedreceive(q, buf, sizeof(buf), NULL, &dl), ETIMEDOUT);
	CHECK(now_ms() - t0 >= 45);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(mq_send(q, "m", 1, 0), 0);
	dl = abs_in_ms(-1000);
	CHECK_ERR(mq_timedsend(q, "m", 1, 0, &dl), ETIMEDOUT);
	struct timespec badts = {0, 2000000000L};
	CHECK_ERR(mq_timedsend(q, "m", 1, 0, &badts), EINVAL);
	CHECK_EQ(mq_close(q), 0);

	/* The direction of the descriptor. */
	mqd_t w = mq_open(name, O_WRONLY);
	mqd_t r = mq_open(name, O_RDONLY);
	CHECK(w >= 0 && r >= 0);
	CHECK_ERR(mq_receive(w, buf, sizeof(buf), NULL), EBADF);
	CHECK_ERR(mq_send(r, "m", 1, 0), EBADF);
	CHECK_ERR(mq_send(0, "m", 1, 0), EBADF);
	CHECK_EQ(mq_receive(r, buf, sizeof(buf), NULL), 1);

	/* Unlinked, the queue lives on in its descriptors. */
	CHECK_EQ(mq_unlink(name), 0);
	CHECK_ERR(mq_open(name, O_RDWR), ENOENT);
	CHECK_EQ(mq_send(w, "after", 5, 0), 0);
	maybe_save(); /* an unlinked queue held open */
	CHECK_EQ(mq_getattr(r, &old), 0);
	CHECK_EQ(old.mq_curmsgs, 4);
	mq_close(w);
	mq_close(r);
}

static volatile int got_sig;

static void test_notify(void)
{
	struct mq_attr at = {.mq_maxmsg = 2, .mq_msgsize = 16};
	mqd_t q = mq_open(name, O_RDWR | O_CREAT | O_NONBLOCK, 0600, &at);
	struct sigevent ev;
	sigset_t usr1;
	siginfo_t si;
	struct timespec t2 = {2, 0}, zero = {0, 0};
	char buf[16];

	CHECK(q >= 0);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &usr1, NULL), 0);
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = SIGUSR1;
	ev.sigev_value.sival_int = 4242;
	CHECK_EQ(mq_notify(q, &ev), 0);
	CHECK_ERR(mq_notify(q, &ev), EBUSY);
	ev.sigev_notify = 1234;
	CHECK_ERR(mq_notify(q, &ev), EINVAL);

	char st[128] = "";
	CHECK(pread(q, st, sizeof(st) - 1, 0) > 0);
	char want[64];
	snprintf(want, sizeof(want), "SIGNO:%-5d NOTIFY_PID:%-6d", SIGUSR1, getpid());
	CHECK(strstr(st, want) != NULL);

	maybe_save(); /* a registration */

	CHECK_EQ(mq_send(q, "hi", 2, 0), 0);
	memset(&si, 0, sizeof(si));
	CHECK_EQ(sigtimedwait(&usr1, &si, &t2), SIGUSR1);
	CHECK_EQ(si.si_code, SI_MESGQ);
	CHECK_EQ(si.si_value.sival_int, 4242);
	CHECK_EQ(si.si_pid, getpid());
	/* Once: the registration is gone. */
	CHECK_EQ(mq_receive(q, buf, sizeof(buf), NULL), 2);
	CHECK_EQ(mq_send(q, "hi", 2, 0), 0);
	CHECK_ERR(sigtimedwait(&usr1, &si, &zero), EAGAIN);
	CHECK_EQ(mq_receive(q, buf, sizeof(buf), NULL), 2);

	/* Unregistered with NULL, and by closing a descriptor of the queue. */
	ev.sigev_notify = SIGEV_SIGNAL;
	CHECK_EQ(mq_notify(q, &ev), 0);
	CHECK_EQ(mq_notify(q, NULL), 0);
	CHECK_EQ(mq_notify(q, &ev), 0);
	mqd_t other = mq_open(name, O_RDWR);
	CHECK(other >= 0);
	CHECK_EQ(mq_close(other), 0);
	CHECK_EQ(mq_notify(q, &ev), 0); /* not EBUSY: the close dropped it */
	CHECK_EQ(mq_notify(q, NULL), 0);
	CHECK_EQ(sigprocmask(SIG_UNBLOCK, &usr1, NULL), 0);
	mq_close(q);
	CHECK_EQ(mq_unlink(name), 0);
}

static void test_blocked_receiver(void)
{
	mqd_t q = mq_open(name, O_RDWR | O_CREAT, 0600, NULL);
	int ready[2];
	char c;

	CHECK(q >= 0);
	CHECK_EQ(pipe(ready), 0);
	pid_t pid = fork();
	if (pid == 0) {
		char buf[8192];
		unsigned int prio = 0;
		close(ready[0]);
		CHECK_EQ(write(ready[1], "r", 1), 1);
		ssize_t n = mq_receive(q, buf, sizeof(buf), &prio);
		_exit(n == 5 && !memcmp(buf, "hello", 5) && prio == 7 ? 0 : 1);
	}
	close(ready[1]);
	CHECK_EQ(read(ready[0], &c, 1), 1);
	struct timespec d = {0, 100 * 1000 * 1000};
	nanosleep(&d, NULL);
	maybe_save(); /* a receiver blocked in another process */
	CHECK_EQ(mq_send(q, "hello", 5, 7), 0);
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(ready[0]);
	mq_close(q);
	CHECK_EQ(mq_unlink(name), 0);
}

int main(void)
{
	snprintf(name, sizeof(name), "/conformance-mq-%d", (int)getpid());
	mq_unlink(name);
	test_names_and_attrs();
	test_order_and_limits();
	test_notify();
	test_blocked_receiver();
	mq_unlink(name);
	return check_done();
}
