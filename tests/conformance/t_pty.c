/*
 * t_pty: pseudo-terminals (man 4 pts, man 3 termios, man 4 tty_ioctl). posix_openpt, grantpt,
 * unlockpt and ptsname make a pair whose slave is locked until unlocked (EIO), /dev/pts lists
 * it; the line discipline between master and slave: ICRNL, canonical editing (ERASE, KILL,
 * WERASE, EOF), echo, ONLCR, non-canonical VMIN/VTIME, ISIG's SIGINT to the foreground group,
 * TIOCSWINSZ's SIGWINCH; controlling terminals (setsid + open, /dev/tty, TIOCGSID, tcgetpgrp,
 * SIGTTIN for a background group); queue limits; hang-ups both ways. A checkpoint is taken
 * with data queued both ways and a slave reader blocked. An orphaned background group's read
 * fails with EIO.
 *
 * conformance: native-devpts (natively, the chroot gets a devpts of its own)
 */
#include "check.h"
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/epoll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

static int open_master(void)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY);

	CHECK(m >= 0);
	CHECK_EQ(grantpt(m), 0);
	CHECK_EQ(unlockpt(m), 0);
	return m;
}

static int open_slave(int m, int flags)
{
	char *name = ptsname(m);
	int s;

	CHECK(name != NULL);
	s = open(name ? name : "/", O_RDWR | O_NOCTTY | flags);
	CHECK(s >= 0);
	return s;
}

/* Everything readable from FD now (non-blocking), NUL-terminated, into BUF. */
static ssize_t drain(int fd, char *buf, size_t size)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	size_t n = 0;

	while (n + 1 < size && poll(&p, 1, 100) == 1 && (p.revents & POLLIN)) {
		ssize_t r = read(fd, buf + n, size - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	return (ssize_t)n;
}

static short revents(int fd, short events)
{
	struct pollfd p = {.fd = fd, .events = events};

	CHECK(poll(&p, 1, 0) >= 0);
	return p.revents;
}

static void test_open_and_names(void)
{
	struct stat st, ptmx;
	char name[64];
	int m = posix_openpt(O_RDWR | O_NOCTTY), n = -1, lock = -1;

	CHECK(m >= 0);
	CHECK_EQ(stat("/dev/ptmx", &ptmx), 0);
	CHECK(S_ISCHR(ptmx.st_mode));
	CHECK_EQ(fstat(m, &st), 0);
	CHECK(S_ISCHR(st.st_mode));
	CHECK_EQ(major(st.st_rdev), 5);
	CHECK_EQ(minor(st.st_rdev), 2);
	CHECK_EQ(ioctl(m, TIOCGPTN, &n), 0);
	CHECK(n >= 0);
	snprintf(name, sizeof(name), "/dev/pts/%d", n);
	CHECK_STREQ(ptsname(m), name);
	CHECK_EQ(ioctl(m, TIOCGPTLCK, &lock), 0);
	CHECK_EQ(lock, 1); /* a new pair is locked */
	CHECK_ERR(open(name, O_RDWR | O_NOCTTY), EIO);
	CHECK_ERR(ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY), EIO);
	CHECK_EQ(grantpt(m), 0);
	CHECK_EQ(unlockpt(m), 0);
	CHECK_EQ(ioctl(m, TIOCGPTLCK, &lock), 0);
	CHECK_EQ(lock, 0);
	CHECK_EQ(stat(name, &st), 0);
	CHECK(S_ISCHR(st.st_mode));
	CHECK_EQ(major(st.st_rdev), 136 + (unsigned)n / 256);
	CHECK_EQ(minor(st.st_rdev), (unsigned)n % 256);
	CHECK_EQ(st.st_uid, getuid());

	/* /dev/pts lists it (and ptmx) */
	DIR *d = opendir("/dev/pts");
	struct dirent *e;
	int seen = 0, seen_ptmx = 0;
	CHECK(d != NULL);
	while (d && (e = readdir(d))) {
		seen |= strcmp(e->d_name, name + 9) == 0;
		seen_ptmx |= strcmp(e->d_name, "ptmx") == 0;
	}
	if (d)
		closedir(d);
	CHECK(seen);
	CHECK(seen_ptmx);

	int s = open(name, O_RDWR | O_NOCTTY);
	CHECK(s >= 0);
	CHECK(isatty(s));
	CHECK(isatty(m));
	if (in_sandbox() || access("/proc/self/fd", F_OK) == 0) /* musl's ttyname reads /proc */
		CHECK_STREQ(ttyname(s), name);
	CHECK_ERR(ioctl(s, TIOCGPTN, &n), ENOTTY); /* a master's request */
	int peer = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY);
	CHECK(peer >= 0);
	CHECK_EQ(fstat(peer, &st), 0);
	CHECK_EQ(major(st.st_rdev), 136 + (unsigned)n / 256);
	CHECK_EQ(minor(st.st_rdev), (unsigned)n % 256);
	CHECK_ERR(ioctl(s, TIOCGPTPEER, O_RDWR), EIO); /* only a master has a peer */
	/* a non-terminal is no master */
	int pfd[2];
	CHECK_EQ(pipe(pfd), 0);
	CHECK(ptsname(pfd[0]) == NULL);
	close(pfd[0]);
	close(pfd[1]);
	close(peer);
	close(s);
	close(m);
	/* the node goes with the master */
	CHECK_ERR(stat(name, &st), ENOENT);
}

/* openpty (glibc: TIOCGPTPEER; musl: ptsname and open) with a window size. */
static void test_openpty(void)
{
	struct winsize ws = {.ws_row = 30, .ws_col = 100}, got;
	char name[64];
	int m = -1, s = -1;

	CHECK_EQ(openpty(&m, &s, name, NULL, &ws), 0);
	CHECK(strncmp(name, "/dev/pts/", 9) == 0);
	CHECK_EQ(ioctl(s, TIOCGWINSZ, &got), 0);
	CHECK_EQ(got.ws_row, 30);
	CHECK_EQ(got.ws_col, 100);
	CHECK_EQ(write(s, "hi", 2), 2);
	char buf[8] = "";
	CHECK_EQ(drain(m, buf, sizeof(buf)), 2);
	CHECK_STREQ(buf, "hi");
	close(s);
	close(m);
}

static void test_default_termios(void)
{
	int m = open_master(), s = open_slave(m, 0);
	struct termios t;
	struct winsize ws;

	CHECK_EQ(tcgetattr(s, &t), 0);
	CHECK((t.c_lflag & (ICANON | ECHO | ISIG | ECHOE | ECHOK)) ==
	      (ICANON | ECHO | ISIG | ECHOE | ECHOK));
	CHECK((t.c_oflag & (OPOST | ONLCR)) == (OPOST | ONLCR));
	CHECK(t.c_iflag & ICRNL);
	CHECK_EQ(t.c_cc[VINTR], 3);
	CHECK_EQ(t.c_cc[VERASE], 0177);
	CHECK_EQ(t.c_cc[VKILL], 025);
	CHECK_EQ(t.c_cc[VEOF], 4);
	CHECK_EQ(t.c_cc[VMIN], 1);
	CHECK_EQ(ioctl(s, TIOCGWINSZ, &ws), 0);
	CHECK_EQ(ws.ws_row, 0);
	CHECK_EQ(ws.ws_col, 0);
	/* the master answers the same termios */
	struct termios tm;
	CHECK_EQ(tcgetattr(m, &tm), 0);
	close(s);
	close(m);
}

static void test_canonical(void)
{
	int m = open_master(), s = open_slave(m, O_NONBLOCK);
	char buf[256];
	int n = -1;

	/* ICRNL and echo: typed "hello\r" reads as a line, echoes with ONLCR */
	CHECK_EQ(write(m, "hel", 3), 3);
	CHECK_ERR(read(s, buf, sizeof(buf)), EAGAIN); /* no line yet */
	CHECK_EQ(revents(s, POLLIN | POLLOUT), POLLOUT);
	CHECK_EQ(write(m, "lo\r", 3), 3);
	CHECK_EQ(revents(s, POLLIN) & POLLIN, POLLIN);
	CHECK_EQ(ioctl(s, FIONREAD, &n), 0);
	CHECK_EQ(n, 6);
	CHECK_EQ(read(s, buf, sizeof(buf)), 6);
	CHECK(memcmp(buf, "hello\n", 6) == 0);
	CHECK_EQ(drain(m, buf, sizeof(buf)), 7);
	CHECK_STREQ(buf, "hello\r\n");

	/* ERASE, KILL, WERASE (ECHOE: erasures echo as backspace-space-backspace) */
	CHECK_EQ(write(m, "abc\177\177d\n", 7), 7);
	CHECK_EQ(read(s, buf, sizeof(buf)), 3);
	CHECK(memcmp(buf, "ad\n", 3) == 0);
	CHECK(drain(m, buf, sizeof(buf)) > 0);
	CHECK_STREQ(buf, "abc\b \b\b \bd\r\n");
	CHECK_EQ(write(m, "xyz\025ok\n", 7), 7);
	CHECK_EQ(read(s, buf, sizeof(buf)), 3);
	CHECK(memcmp(buf, "ok\n", 3) == 0);
	drain(m, buf, sizeof(buf));
	CHECK_EQ(write(m, "one two\027three\n", 14), 14);
	CHECK_EQ(read(s, buf, sizeof(buf)), 10);
	CHECK(memcmp(buf, "one three\n", 10) == 0);
	drain(m, buf, sizeof(buf));

	/* one line per read; a short read leaves the rest of the line */
	CHECK_EQ(write(m, "l1\nl2\n", 6), 6);
	CHECK_EQ(read(s, buf, 1), 1);
	CHECK_EQ(buf[0], 'l');
	CHECK_EQ(read(s, buf, sizeof(buf)), 2);
	CHECK_EQ(read(s, buf, sizeof(buf)), 3);
	CHECK(memcmp(buf, "l2\n", 3) == 0);
	drain(m, buf, sizeof(buf));

	/* EOF ends a line without a newline; alone, it reads as end of file */
	CHECK_EQ(write(m, "ab\004", 3), 3);
	CHECK_EQ(read(s, buf, sizeof(buf)), 2);
	CHECK(memcmp(buf, "ab", 2) == 0);
	CHECK_EQ(write(m, "\004", 1), 1);
	CHECK_EQ(read(s, buf, sizeof(buf)), 0);
	CHECK_ERR(read(s, buf, sizeof(buf)), EAGAIN);
	drain(m, buf, sizeof(buf));
	CHECK_STREQ(buf, "ab");

	/* ECHOCTL: a control character echoes as ^X */
	CHECK_EQ(write(m, "\001\n", 2), 2);
	CHECK_EQ(read(s, buf, sizeof(buf)), 2);
	drain(m, buf, sizeof(buf));
	CHECK_STREQ(buf, "^A\r\n");

	/* no ECHO: nothing comes back; ECHONL still echoes the newline */
	struct termios t;
	CHECK_EQ(tcgetattr(s, &t), 0);
	t.c_lflag &= ~ECHO;
	t.c_lflag |= ECHONL;
	CHECK_EQ(tcsetattr(s, TCSANOW, &t), 0);
	CHECK_EQ(write(m, "secret\n", 7), 7);
	CHECK_EQ(read(s, buf, sizeof(buf)), 7);
	drain(m, buf, sizeof(buf));
	CHECK_STREQ(buf, "\r\n");

	/* IGNCR drops carriage returns; INLCR turns newlines into them */
	t.c_iflag |= IGNCR;
	CHECK_EQ(tcsetattr(s, TCSANOW, &t), 0);
	CHECK_EQ(write(m, "a\rb\n", 4), 4);
	CHECK_EQ(read(s, buf, sizeof(buf)), 3);
	CHECK(memcmp(buf, "ab\n", 3) == 0);
	drain(m, buf, sizeof(buf));
	close(s);
	close(m);
}

static void test_output(void)
{
	int m = open_master(), s = open_slave(m, 0);
	char buf[64];
	struct termios t;
	int n = -1;

	CHECK_EQ(write(s, "a\nb", 3), 3);
	CHECK_EQ(ioctl(s, TIOCOUTQ, &n), 0);
	CHECK(n >= 0);
	struct pollfd p = {.fd = m, .events = POLLIN};
	CHECK_EQ(poll(&p, 1, 1000), 1); /* Linux moves it to the master's side in a moment */
	CHECK_EQ(ioctl(m, FIONREAD, &n), 0);
	CHECK_EQ(n, 4);
	CHECK_EQ(drain(m, buf, sizeof(buf)), 4);
	CHECK_STREQ(buf, "a\r\nb");
	CHECK_EQ(tcgetattr(s, &t), 0);
	t.c_oflag &= ~OPOST;
	CHECK_EQ(tcsetattr(s, TCSANOW, &t), 0);
	CHECK_EQ(write(s, "a\nb", 3), 3);
	CHECK_EQ(drain(m, buf, sizeof(buf)), 3);
	CHECK_STREQ(buf, "a\nb");
	/* poll: the master is readable once the slave wrote */
	CHECK_EQ(revents(m, POLLIN) & POLLIN, 0);
	CHECK_EQ(write(s, "x", 1), 1);
	CHECK_EQ(revents(m, POLLIN) & POLLIN, POLLIN);
	drain(m, buf, sizeof(buf));
	close(s);
	close(m);
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

static void test_noncanonical(void)
{
	int m = open_master(), s = open_slave(m, 0);
	struct termios t;
	struct timespec t0;
	char buf[64];

	CHECK_EQ(tcgetattr(s, &t), 0);
	cfmakeraw(&t);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	CHECK_EQ(tcsetattr(s, TCSANOW, &t), 0);
	CHECK_EQ(read(s, buf, sizeof(buf)), 0); /* polling read */
	CHECK_EQ(write(m, "\r\003x", 3), 3);	/* raw: no ICRNL, no ISIG, no echo */
	CHECK_EQ(read(s, buf, sizeof(buf)), 3);
	CHECK(memcmp(buf, "\r\003x", 3) == 0);
	CHECK_EQ(revents(m, POLLIN) & POLLIN, 0);

	/* VTIME alone: a read times out with 0 */
	t.c_cc[VTIME] = 1;
	CHECK_EQ(tcsetattr(s, TCSANOW, &t), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ(read(s, buf, sizeof(buf)), 0);
	CHECK(ms_since(&t0) >= 80);

	/* VMIN 2: a poll waits for two bytes; a read returns once they are there */
	t.c_cc[VMIN] = 2;
	t.c_cc[VTIME] = 0;
	CHECK_EQ(tcsetattr(s, TCSANOW, &t), 0);
	CHECK_EQ(write(m, "1", 1), 1);
	CHECK_EQ(revents(s, POLLIN) & POLLIN, 0);
	CHECK_EQ(write(m, "2", 1), 1);
	CHECK_EQ(revents(s, POLLIN) & POLLIN, POLLIN);
	CHECK_EQ(read(s, buf, sizeof(buf)), 2);

	/* VMIN 3 with VTIME: what came is returned when the timer runs out */
	t.c_cc[VMIN] = 3;
	t.c_cc[VTIME] = 1;
	CHECK_EQ(tcsetattr(s, TCSANOW, &t), 0);
	CHECK_EQ(write(m, "ab", 2), 2);
	CHECK_EQ(read(s, buf, sizeof(buf)), 2);

	/* switching to canonical: what was typed before is pushed as a line */
	CHECK_EQ(write(m, "pq", 2), 2);
	struct pollfd p = {.fd = s, .events = POLLIN};
	CHECK_EQ(poll(&p, 1, 1000), 1);
	t.c_lflag |= ICANON;
	CHECK_EQ(tcsetattr(s, TCSANOW, &t), 0);
	int fl = fcntl(s, F_GETFL);
	CHECK_EQ(fcntl(s, F_SETFL, fl | O_NONBLOCK), 0);
	CHECK_EQ(read(s, buf, sizeof(buf)), 2);
	CHECK(memcmp(buf, "pq", 2) == 0);
	CHECK_ERR(read(s, buf, sizeof(buf)), EAGAIN);
	CHECK_EQ(write(m, "\n", 1), 1);
	CHECK_EQ(read(s, buf, sizeof(buf)), 1);

	/* TCFLSH empties the input */
	CHECK_EQ(write(m, "zz\n", 3), 3);
	CHECK_EQ(tcflush(s, TCIFLUSH), 0);
	CHECK_ERR(read(s, buf, sizeof(buf)), EAGAIN);
	close(s);
	close(m);
}

/* Queues are bounded: a non-blocking writer on either side finally gets EAGAIN. */
static void test_limits(void)
{
	int m = open_master(), s = open_slave(m, 0);
	struct termios t;
	char buf[1024];
	long total = 0;
	ssize_t r;

	CHECK_EQ(tcgetattr(s, &t), 0);
	cfmakeraw(&t);
	CHECK_EQ(tcsetattr(s, TCSANOW, &t), 0);
	memset(buf, 'x', sizeof(buf));
	CHECK_EQ(fcntl(m, F_SETFL, O_NONBLOCK), 0);
	CHECK_EQ(fcntl(s, F_SETFL, O_NONBLOCK), 0);
	while ((r = write(m, buf, sizeof(buf))) > 0 && total < (64 << 20))
		total += r;
	CHECK_EQ(r, -1);
	CHECK_EQ(errno, EAGAIN);
	CHECK(total >= 4096);
	CHECK_EQ(revents(m, POLLOUT) & POLLOUT, 0);
	total = 0;
	while ((r = write(s, buf, sizeof(buf))) > 0 && total < (64 << 20))
		total += r;
	CHECK_EQ(r, -1);
	CHECK_EQ(errno, EAGAIN);
	CHECK(total >= 2048);
	CHECK_EQ(revents(s, POLLOUT) & POLLOUT, 0);
	/* a reader makes room */
	CHECK(read(m, buf, sizeof(buf)) > 0);
	CHECK(read(s, buf, sizeof(buf)) > 0);

	/* a blocking writer of more than the queue holds goes on as the reader takes it */
	CHECK_EQ(tcflush(s, TCIOFLUSH), 0);
	CHECK_EQ(fcntl(s, F_SETFL, 0), 0);
	CHECK_EQ(fcntl(m, F_SETFL, 0), 0);
	pid_t pid = fork();
	if (pid == 0) {
		static char big[3 * 4096 + 100];
		memset(big, 'y', sizeof(big));
		_exit(write(m, big, sizeof(big)) == sizeof(big) ? 0 : 1);
	}
	total = 0;
	while (total < 3 * 4096 + 100 && (r = read(s, buf, sizeof(buf))) > 0)
		total += r;
	CHECK_EQ(total, 3 * 4096 + 100);
	int st = -1;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(s);
	close(m);
}

/* The slave's last close: master reads EIO and polls POLLHUP, writes still go in. */
static void test_slave_hangup(void)
{
	int m = open_master(), s = open_slave(m, 0);
	char buf[16];

	CHECK_EQ(fcntl(m, F_SETFL, O_NONBLOCK), 0);
	CHECK_ERR(read(m, buf, sizeof(buf)), EAGAIN);
	close(s);
	CHECK_ERR(read(m, buf, sizeof(buf)), EIO);
	CHECK(revents(m, POLLIN) & POLLHUP);
	CHECK_EQ(write(m, "x\n", 2), 2);
	s = open_slave(m, 0);
	CHECK_EQ(read(s, buf, sizeof(buf)), 2); /* what was typed meanwhile */
	close(s);
	close(m);
}

static volatile sig_atomic_t got_hup, got_winch;
static void on_hup(int sig)
{
	(void)sig;
	got_hup = 1;
}
static void on_winch(int sig)
{
	(void)sig;
	got_winch = 1;
}

/* The child of a session of its own with slave S's name as its controlling terminal: it
 * writes "R" when ready. Exit codes report what it saw. */
static pid_t session_child(int m, int (*body)(int s))
{
	char name[64];
	pid_t pid;

	snprintf(name, sizeof(name), "%s", ptsname(m));
	pid = fork();
	if (pid == 0) {
		close(m);
		if (setsid() != getpid())
			_exit(90);
		int s = open(name, O_RDWR); /* no O_NOCTTY: it becomes ours */
		if (s < 0)
			_exit(91);
		if (tcgetsid(s) != getpid() || tcgetpgrp(s) != getpid())
			_exit(92);
		_exit(body(s));
	}
	return pid;
}

static void wait_ready(int m)
{
	char c = 0;
	struct pollfd p = {.fd = m, .events = POLLIN};

	CHECK_EQ(poll(&p, 1, 5000), 1);
	ssize_t rr = read(m, &c, 1);
	if (rr != 1)
		dprintf(1, "ready read %zd errno %d revents %x\n", rr, errno, p.revents);
	CHECK_EQ(rr, 1);
	CHECK_EQ(c, 'R');
}

static int body_ctty(int s)
{
	char buf[16];
	int t = open("/dev/tty", O_RDWR);

	if (t < 0)
		return 93;
	if (write(t, "R", 1) != 1)
		return 94;
	/* /dev/tty is the slave: a line typed at the master reads there */
	if (read(t, buf, sizeof(buf)) != 3 || memcmp(buf, "ok\n", 3))
		return 95;
	pid_t sid = -1;
	if (ioctl(s, TIOCGSID, &sid) || sid != getpid())
		return 96;
	return 0;
}

static void test_controlling_terminal(void)
{
	int m = open_master(), st = -1;
	char buf[16];
	struct termios t;
	pid_t pid = session_child(m, body_ctty);

	CHECK(pid > 0);
	/* The master answers for its slave without being anyone's terminal. */
	(void)t;
	wait_ready(m);
	CHECK_EQ(write(m, "ok\n", 3), 3);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
	drain(m, buf, sizeof(buf));
	/* TIOCSCTTY: only a session leader takes one */
	int s = open_slave(m, 0);
	pid = fork();
	if (pid == 0)
		_exit(ioctl(s, TIOCSCTTY, 0) == -1 && errno == EPERM ? 0 : 1);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(s);
	close(m);
}

static int body_sigint(int s)
{
	if (write(s, "R", 1) != 1)
		return 94;
	char buf[16];
	read(s, buf, sizeof(buf)); /* ^C kills it here */
	return 97;
}

static int body_winch(int s)
{
	signal(SIGWINCH, on_winch);
	if (write(s, "R", 1) != 1)
		return 94;
	char buf[16];
	/* the parent sets the size, then types a line */
	if (read(s, buf, sizeof(buf)) != 3)
		return 95;
	struct winsize ws;
	if (ioctl(s, TIOCGWINSZ, &ws) || ws.ws_row != 24 || ws.ws_col != 80)
		return 96;
	return got_winch ? 0 : 98;
}

static void test_isig_and_winch(void)
{
	int m = open_master(), st = -1;
	char buf[16];
	pid_t pid = session_child(m, body_sigint);

	wait_ready(m);
	CHECK_EQ(write(m, "\003", 1), 1);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT);
	drain(m, buf, sizeof(buf));
	CHECK_STREQ(buf, "^C");
	close(m); /* its slave is closed now: its reads give EIO */

	m = open_master();
	pid = session_child(m, body_winch);
	wait_ready(m);
	struct winsize ws = {.ws_row = 24, .ws_col = 80};
	CHECK_EQ(ioctl(m, TIOCSWINSZ, &ws), 0);
	CHECK_EQ(write(m, "go\n", 3), 3);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
	close(m);
}

/* A background group's read of its terminal stops it with SIGTTIN; ignoring SIGTTIN, the
 * read fails with EIO. */
static int body_ttin(int s)
{
	int st;
	pid_t bg = fork();

	if (bg == 0) {
		setpgid(0, 0);
		char c;
		read(s, &c, 1); /* stopped here */
		_exit(80);
	}
	setpgid(bg, bg);
	if (waitpid(bg, &st, WUNTRACED) != bg || !WIFSTOPPED(st) || WSTOPSIG(st) != SIGTTIN)
		return 81;
	kill(bg, SIGKILL);
	waitpid(bg, &st, 0);
	bg = fork();
	if (bg == 0) {
		setpgid(0, 0);
		signal(SIGTTIN, SIG_IGN);
		char c;
		_exit(read(s, &c, 1) == -1 && errno == EIO ? 0 : 82);
	}
	setpgid(bg, bg);
	if (waitpid(bg, &st, 0) != bg || !WIFEXITED(st))
		return 83;
	if (WEXITSTATUS(st))
		return WEXITSTATUS(st);
	/* An orphaned background group (its only member's parent is gone) is not stopped: its
	 * read fails with EIO. The member reports through a pipe. */
	int pfd[2];
	char verdict = 0;
	if (pipe(pfd))
		return 84;
	bg = fork();
	if (bg == 0) {
		setpgid(0, 0);
		pid_t parent = getpid();
		if (fork() == 0) {
			char c;
			while (getppid() == parent)
				usleep(1000);
			c = read(s, &c, 1) == -1 && errno == EIO ? 'y' : 'n';
			write(pfd[1], &c, 1);
			_exit(0);
		}
		_exit(0);
	}
	close(pfd[1]);
	waitpid(bg, &st, 0);
	if (read(pfd[0], &verdict, 1) != 1 || verdict != 'y')
		return 85;
	close(pfd[0]);
	return write(s, "R", 1) == 1 ? 0 : 94;
}

static void test_background_read(void)
{
	int m = open_master(), st = -1;
	pid_t pid = session_child(m, body_ttin);

	wait_ready(m);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
	close(m);
}

/* The master's close: the session leader gets SIGHUP, the slave reads end of file and
 * writes fail with EIO. */
static int body_hangup(int s)
{
	signal(SIGHUP, on_hup);
	if (write(s, "R", 1) != 1)
		return 94;
	char buf[16];
	ssize_t r;
	while ((r = read(s, buf, sizeof(buf))) > 0)
		;
	/* a reader woken by the hang-up gets EIO (Linux) or end of file; later reads see end
	 * of file */
	if (r != 0 && errno != EIO)
		return 95;
	if (read(s, buf, sizeof(buf)) != 0)
		return 99;
	if (write(s, "x", 1) != -1 || errno != EIO)
		return 96;
	return got_hup ? 0 : 98;
}

static void test_master_hangup(void)
{
	int m = open_master(), st = -1;
	pid_t pid = session_child(m, body_hangup);

	wait_ready(m);
	close(m);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
}

/* A slave held open after its master went: a checkpoint keeps it hung up. epoll sees both
 * sides before. */
static void test_hung_slave_and_epoll(void)
{
	int m = open_master(), s = open_slave(m, 0), ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN}, out[2];
	char buf[8];

	CHECK(ep >= 0);
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, m, &ev), 0);
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev), 0);
	CHECK_EQ(epoll_wait(ep, out, 2, 0), 0);
	CHECK_EQ(write(s, "o", 1), 1);
	CHECK_EQ(epoll_wait(ep, out, 2, 1000), 1);
	CHECK_EQ(read(m, buf, sizeof(buf)), 1);
	close(ep);
	close(m);
	maybe_save();
	CHECK_EQ(read(s, buf, sizeof(buf)), 0);
	CHECK_ERR(write(s, "x", 1), EIO);
	CHECK(revents(s, POLLIN) & POLLHUP);
	close(s);
}

/* A checkpoint with data queued both ways and a reader blocked on the slave. */
static int body_blocked(int s)
{
	char buf[64];

	if (write(s, "Rqueued out\n", 12) != 12) /* one write: all of it is there with the R */
		return 94;
	ssize_t r = read(s, buf, sizeof(buf)); /* blocks across the checkpoint */
	if (r != 9 || memcmp(buf, "partial!\n", 9)) {
		dprintf(1, "blocked read %zd [%.*s]\n", r, (int)(r > 0 ? r : 0), buf);
		return 95;
	}
	return 0;
}

static void test_checkpoint(void)
{
	int m = open_master(), st = -1, lock = -1, n = -1;
	char buf[64];
	pid_t pid = session_child(m, body_blocked);
	int locked = posix_openpt(O_RDWR | O_NOCTTY); /* a locked pair too */

	wait_ready(m);
	CHECK_EQ(write(m, "partial", 7), 7); /* no line yet: the reader stays blocked */
	usleep(100000);
	CHECK_EQ(waitpid(pid, &st, WNOHANG), 0);
	maybe_save();
	CHECK_EQ(ioctl(locked, TIOCGPTLCK, &lock), 0);
	CHECK_EQ(lock, 1);
	CHECK_EQ(ioctl(m, FIONREAD, &n), 0);
	CHECK(n >= 12); /* "queued out\r\n", then the echo of "partial" */
	CHECK_EQ(write(m, "!\n", 2), 2);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
	drain(m, buf, sizeof(buf));
	CHECK_STREQ(buf, "queued out\r\npartial!\r\n");
	close(locked);
	close(m);
}

int main(void)
{
	test_open_and_names();
	test_openpty();
	test_default_termios();
	test_canonical();
	test_output();
	test_noncanonical();
	test_limits();
	test_slave_hangup();
	test_controlling_terminal();
	test_isig_and_winch();
	test_background_read();
	test_master_hangup();
	test_hung_slave_and_epoll();
	test_checkpoint();
	return check_done();
}
