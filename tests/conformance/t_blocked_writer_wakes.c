/*
 * t_blocked_writer_wakes: a call blocked because the way out is full ends, as on Linux, when
 * what would take the data goes away. A writer blocked on a full pipe or FIFO (write, writev,
 * sendfile, splice from a file or a pipe, tee) gets EPIPE and SIGPIPE once the last reader
 * closes. One blocked on a full stream socket (write, sendmsg, sendfile) gets ECONNRESET when
 * the peer closes with the data unread and EPIPE when the peer shuts reading, neither with
 * SIGPIPE (a new write gets that). A connect waiting in a full backlog gets ECONNREFUSED when
 * the listener closes, a send waiting for room at a datagram peer ECONNREFUSED when the peer
 * closes, and a read or splice from an empty pipe 0 when the last writer closes. Each call
 * runs in a child with a two-second alarm, so one that never wakes fails with EINTR.
 */
#include "check.h"
#include "scratch.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

#define FILE_SIZE 65536

static int fd_out, fd_in; /* the blocked call's descriptors */
static off_t file_off;
static struct sockaddr_un listener_addr;
static volatile sig_atomic_t sigpipes;

struct outcome {
	long ret;
	int err;
	int sigpipes;
};

static void on_sigpipe(int sig)
{
	(void)sig;
	sigpipes++;
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void pause_ms(long ms)
{
	struct timespec ts = {0, ms * 1000000};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* What the parent does to the other end once the child is blocked. */
static void cut_close(int fd)
{
	close(fd);
}

static void cut_shut_reading(int fd)
{
	shutdown(fd, SHUT_RD);
}

/*
 * Forks a child that closes CHILD_CLOSE (its copy of the end it must not hold) and runs OP,
 * which blocks; 200 ms later the parent applies CUT to CUT_FD (closes the last reader,
 * writer, peer or listener). Returns what OP returned in the child, its errno and the
 * SIGPIPEs it got.
 */
static struct outcome blocked_until(long (*op)(void), int child_close, void (*cut)(int), int cut_fd)
{
	struct outcome o = {0, -1, 0};
	int rp[2];

	if (pipe(rp))
		return o;
	pid_t pid = fork();
	if (pid == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sigpipes = 0;
		sa.sa_handler = on_alarm; /* no SA_RESTART: a wait that never ends is EINTR */
		sigaction(SIGALRM, &sa, NULL);
		close(rp[0]);
		if (child_close >= 0)
			close(child_close);
		alarm(2);
		errno = 0;
		o.ret = op();
		o.err = o.ret < 0 ? errno : 0;
		o.sigpipes = sigpipes;
		if (write(rp[1], &o, sizeof(o)) != sizeof(o))
			_exit(2);
		_exit(0);
	}
	close(rp[1]);
	pause_ms(200);
	maybe_save(); /* the call blocked in the child is retried after a restore, and still wakes
		       */
	cut(cut_fd);
	if (pid < 0 || read(rp[0], &o, sizeof(o)) != sizeof(o))
		o = (struct outcome){0, -1, 0};
	waitpid(pid, NULL, 0);
	close(rp[0]);
	return o;
}

static struct outcome blocked_until_close(long (*op)(void), int child_close, int parent_close)
{
	return blocked_until(op, child_close, cut_close, parent_close);
}

/* Fills FD (a pipe's write end or a socket) until it takes no more. */
static void fill(int fd)
{
	static char junk[4096];
	int fl = fcntl(fd, F_GETFL);

	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	while (write(fd, junk, sizeof(junk)) > 0)
		;
	while (write(fd, junk, 1) > 0)
		;
	fcntl(fd, F_SETFL, fl);
}

static long op_write(void)
{
	static char buf[8192];

	return write(fd_out, buf, sizeof(buf));
}

static long op_writev(void)
{
	static char a[100], b[5000];
	struct iovec iov[2] = {{a, sizeof(a)}, {b, sizeof(b)}};

	return writev(fd_out, iov, 2);
}

static long op_sendmsg(void)
{
	static char buf[8192];
	struct iovec iov = {buf, sizeof(buf)};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};

	return sendmsg(fd_out, &m, 0);
}

static long op_sendfile(void)
{
	return sendfile(fd_out, fd_in, NULL, FILE_SIZE);
}

static long op_sendfile_off(void)
{
	file_off = 100;
	return sendfile(fd_out, fd_in, &file_off, FILE_SIZE - 100);
}

static long op_splice_file(void)
{
	loff_t off = 0;

	return splice(fd_in, &off, fd_out, NULL, FILE_SIZE, 0);
}

static long op_splice_pipe(void)
{
	return splice(fd_in, NULL, fd_out, NULL, 4096, 0);
}

static long op_tee(void)
{
	return tee(fd_in, fd_out, 4096, 0);
}

static long op_read(void)
{
	char buf[16];

	return read(fd_in, buf, sizeof(buf));
}

static long op_connect(void)
{
	int s = socket(AF_UNIX, SOCK_STREAM, 0);

	return connect(s, (struct sockaddr *)&listener_addr, sizeof(listener_addr));
}

/* The calls' outcome: ERR (with SIGPIPE when WANT_SIGPIPE), or RET when ERR is 0. */
#define CHECK_OUTCOME(o, want_ret, want_err, want_sigpipe)                                         \
	do {                                                                                       \
		struct outcome o_ = (o);                                                           \
		if (want_err) {                                                                    \
			CHECK_EQ(o_.ret, -1);                                                      \
		} else {                                                                           \
			CHECK_EQ(o_.ret, want_ret);                                                \
		}                                                                                  \
		CHECK_EQ(o_.err, want_err);                                                        \
		CHECK_EQ(o_.sigpipes, want_sigpipe);                                               \
	} while (0)

static void make_file(void)
{
	static char data[FILE_SIZE];

	memset(data, 'f', sizeof(data));
	int fd = open("src", O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, data, sizeof(data)), sizeof(data));
	close(fd);
}

/* A full pipe whose write end is fd_out; returns its read end. */
static int full_pipe(void)
{
	int p[2];

	CHECK_EQ(pipe(p), 0);
	fill(p[1]);
	fd_out = p[1];
	return p[0];
}

static void pipe_writers(void)
{
	long (*const ops[])(void) = {op_write, op_writev, op_sendfile, op_sendfile_off,
				     op_splice_file};
	const char *names[] = {"write", "writev", "sendfile", "sendfile at an offset",
			       "splice from a file"};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		dprintf(1, "pipe: %s\n", names[i]);
		fd_in = open("src", O_RDONLY);
		int r = full_pipe();
		CHECK_OUTCOME(blocked_until_close(ops[i], r, r), 0, EPIPE, 1);
		close(fd_out);
		close(fd_in);
	}
	/* What a failed sendfile read from the file is not lost: its offset did not move. */
	fd_in = open("src", O_RDONLY);
	int r = full_pipe();
	blocked_until_close(op_sendfile, r, r);
	CHECK_EQ(lseek(fd_in, 0, SEEK_CUR), 0);
	close(fd_out);
	close(fd_in);
}

static void pipe_to_pipe(void)
{
	long (*const ops[])(void) = {op_splice_pipe, op_tee};

	for (size_t i = 0; i < 2; i++) {
		dprintf(1, "pipe: %s\n", i ? "tee" : "splice from a pipe");
		int src[2];
		CHECK_EQ(pipe(src), 0);
		CHECK_EQ(write(src[1], "data", 4), 4);
		fd_in = src[0];
		int r = full_pipe();
		CHECK_OUTCOME(blocked_until_close(ops[i], r, r), 0, EPIPE, 1);
		/* The bytes in the source pipe are still there. */
		char buf[8];
		CHECK_EQ(read(src[0], buf, sizeof(buf)), 4);
		close(fd_out);
		close(src[0]);
		close(src[1]);
	}
}

static void fifo_writer(void)
{
	dprintf(1, "fifo: write\n");
	CHECK_EQ(mkfifo("fifo", 0600), 0);
	int r = open("fifo", O_RDONLY | O_NONBLOCK);
	fd_out = open("fifo", O_WRONLY);
	CHECK(r >= 0 && fd_out >= 0);
	fill(fd_out);
	CHECK_OUTCOME(blocked_until_close(op_write, r, r), 0, EPIPE, 1);
	close(fd_out);
	unlink("fifo");
}

static void pipe_readers(void)
{
	long (*const ops[])(void) = {op_read, op_splice_pipe};

	for (size_t i = 0; i < 2; i++) {
		dprintf(1, "pipe: %s of an empty pipe\n", i ? "splice" : "read");
		int p[2], sink[2];
		CHECK_EQ(pipe(p), 0);
		CHECK_EQ(pipe(sink), 0);
		fd_in = p[0];
		fd_out = sink[1];
		CHECK_OUTCOME(blocked_until_close(ops[i], p[1], p[1]), 0, 0, 0);
		close(p[0]);
		close(sink[0]);
		close(sink[1]);
	}
}

static void stream_socket_writers(void)
{
	long (*const ops[])(void) = {op_write, op_sendmsg, op_sendfile};
	const char *names[] = {"write", "sendmsg", "sendfile"};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		dprintf(1, "stream socket: %s\n", names[i]);
		int sv[2];
		CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		fill(sv[0]);
		fd_out = sv[0];
		fd_in = open("src", O_RDONLY);
		CHECK_OUTCOME(blocked_until_close(ops[i], sv[1], sv[1]), 0, ECONNRESET, 0);
		close(sv[0]);
		close(fd_in);
	}
}

static void stream_socket_shut_for_reading(void)
{
	long (*const ops[])(void) = {op_write, op_sendmsg, op_sendfile};
	const char *names[] = {"write", "sendmsg", "sendfile"};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		dprintf(1, "stream socket: %s, peer shuts reading\n", names[i]);
		int sv[2];
		CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		fill(sv[0]);
		fd_out = sv[0];
		fd_in = open("src", O_RDONLY);
		CHECK_OUTCOME(blocked_until(ops[i], -1, cut_shut_reading, sv[1]), 0, EPIPE, 0);
		/* A new write after that is refused with SIGPIPE. */
		sigpipes = 0;
		CHECK_ERR(write(sv[0], "x", 1), EPIPE);
		CHECK_EQ(sigpipes, 1);
		close(sv[0]);
		close(sv[1]);
		close(fd_in);
	}
}

static void datagram_sender(void)
{
	dprintf(1, "datagram socket: write\n");
	int sv[2];
	CHECK_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
	fill(sv[0]);
	fd_out = sv[0];
	CHECK_OUTCOME(blocked_until_close(op_write, sv[1], sv[1]), 0, ECONNREFUSED, 0);
	close(sv[0]);
}

static void connect_to_full_backlog(void)
{
	dprintf(1, "stream socket: connect to a full backlog\n");
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	listener_addr = (struct sockaddr_un){.sun_family = AF_UNIX};
	snprintf(listener_addr.sun_path, sizeof(listener_addr.sun_path), "%s/sock", scratch_dir);
	CHECK_EQ(bind(l, (struct sockaddr *)&listener_addr, sizeof(listener_addr)), 0);
	CHECK_EQ(listen(l, 0), 0);
	/* Connections the backlog takes, until one would have to wait. */
	int queued[8], n = 0;
	for (; n < 8; n++) {
		queued[n] = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (connect(queued[n], (struct sockaddr *)&listener_addr, sizeof(listener_addr))) {
			CHECK_EQ(errno, EAGAIN);
			break;
		}
	}
	CHECK(n < 8);
	CHECK_OUTCOME(blocked_until_close(op_connect, l, l), 0, ECONNREFUSED, 0);
	for (int i = 0; i <= n && i < 8; i++)
		close(queued[i]);
	unlink("sock");
}

int main(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigpipe;
	sigaction(SIGPIPE, &sa, NULL);
	scratch_enter("t_blocked_writer_wakes");
	make_file();
	pipe_writers();
	pipe_to_pipe();
	fifo_writer();
	pipe_readers();
	stream_socket_writers();
	stream_socket_shut_for_reading();
	datagram_sender();
	connect_to_full_backlog();
	unlink("src");
	scratch_leave();
	return check_done();
}
