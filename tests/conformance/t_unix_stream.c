/* AF_UNIX SOCK_STREAM and SOCK_SEQPACKET: socket() argument errors and other families,
 * socketpair I/O, shutdown and EOF, EPIPE and SIGPIPE, ECONNRESET, MSG_PEEK and MSG_DONTWAIT,
 * poll readiness, buffer limits, bind/listen/connect/accept on an abstract name across a
 * fork (names, SO_PEERCRED, accept4 flags), socket options, and seqpacket boundaries. Queued
 * bytes, a full buffer with a writer blocked on it, and a connection waiting in a listener's
 * backlog survive a checkpoint and restore. */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "check.h"

static volatile int sigpipes;

static void on_sigpipe(int sig)
{
	(void)sig;
	sigpipes++;
}

/* An abstract address "\0NAME.PID" (unique when the native suite runs in parallel). */
static socklen_t abstract_addr(struct sockaddr_un *sun, const char *name)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	int n = snprintf(sun->sun_path + 1, sizeof(sun->sun_path) - 1, "%s.%d", name, getpid());
	return offsetof(struct sockaddr_un, sun_path) + 1 + n;
}

static short poll_one(int fd, short events)
{
	struct pollfd p = {.fd = fd, .events = events};

	return poll(&p, 1, 0) == 1 ? p.revents : 0;
}

static void test_socket_args(void)
{
	int fd;

	CHECK_ERR(socket(200, SOCK_STREAM, 0), EAFNOSUPPORT);
	CHECK_ERR(socket(AF_DECnet, SOCK_STREAM, 0), EAFNOSUPPORT);
	/* AF_INET exists (the sandbox's own loopback network: t_inet_*). */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(fd >= 0);
	close(fd);
	CHECK_ERR(socket(AF_UNIX, SOCK_STREAM | 0x10, 0), EINVAL);
	CHECK_ERR(socket(AF_UNIX, 12, 0), EINVAL);
	CHECK_ERR(socket(AF_UNIX, SOCK_RDM, 0), ESOCKTNOSUPPORT);
	CHECK_ERR(socket(AF_UNIX, SOCK_STREAM, 2), EPROTONOSUPPORT);
	fd = socket(AF_UNIX, SOCK_STREAM, PF_UNIX);
	CHECK(fd >= 0);
	close(fd);
	CHECK_ERR(listen(-1, 1), EBADF);
	CHECK_ERR(listen(0, 1), ENOTSOCK); /* stdin is /dev/null */
}

static void test_socketpair_basics(void)
{
	int sv[2], type = 0, v = 0;
	socklen_t len = sizeof(type);
	char buf[64];
	struct stat st;

	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	CHECK_EQ(fcntl(sv[0], F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(sv[0], F_GETFL) & O_ACCMODE, O_RDWR);
	CHECK_EQ(fstat(sv[0], &st), 0);
	CHECK(S_ISSOCK(st.st_mode));
	CHECK_EQ(getsockopt(sv[0], SOL_SOCKET, SO_TYPE, &type, &len), 0);
	CHECK_EQ(type, SOCK_STREAM);
	CHECK_EQ(len, sizeof(int));
	CHECK_EQ(getsockopt(sv[0], SOL_SOCKET, SO_DOMAIN, &v, &len), 0);
	CHECK_EQ(v, AF_UNIX);
	CHECK_EQ(getsockopt(sv[0], SOL_SOCKET, SO_ACCEPTCONN, &v, &len), 0);
	CHECK_EQ(v, 0);
	CHECK_EQ(getsockopt(sv[0], SOL_SOCKET, SO_ERROR, &v, &len), 0);
	CHECK_EQ(v, 0);
	v = 10000;
	CHECK_EQ(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)), 0);
	CHECK_EQ(getsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &v, &len), 0);
	CHECK_EQ(v, 20000);
	CHECK_ERR(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &v, 2), EINVAL);
	CHECK_ERR(getsockopt(sv[0], SOL_SOCKET, 9999, &v, &len), ENOPROTOOPT);
	struct ucred cred;
	len = sizeof(cred);
	CHECK_EQ(getsockopt(sv[1], SOL_SOCKET, SO_PEERCRED, &cred, &len), 0);
	CHECK_EQ(len, sizeof(cred));
	CHECK_EQ(cred.pid, getpid());
	CHECK_EQ(cred.uid, geteuid());
	CHECK_EQ(cred.gid, getegid());

	/* Fresh pair: writable, nothing to read. */
	CHECK_EQ(poll_one(sv[0], POLLIN | POLLOUT), POLLOUT);
	CHECK_EQ(write(sv[0], "hello", 5), 5);
	CHECK_EQ(write(sv[0], " world", 6), 6);
	maybe_save(); /* 11 bytes queued; options set on the socket */
	CHECK_EQ(poll_one(sv[1], POLLIN | POLLOUT), POLLIN | POLLOUT);
	int avail = 0;
	CHECK_EQ(ioctl(sv[1], FIONREAD, &avail), 0);
	CHECK_EQ(avail, 11);
	/* A peek leaves the data; a stream read runs across writes. */
	CHECK_EQ(recv(sv[1], buf, 3, MSG_PEEK), 3);
	CHECK_EQ(memcmp(buf, "hel", 3), 0);
	CHECK_EQ(read(sv[1], buf, sizeof(buf)), 11);
	CHECK_EQ(memcmp(buf, "hello world", 11), 0);
	CHECK_ERR(recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT), EAGAIN);
	/* Stream sockets take no address. */
	struct sockaddr_un sun;
	socklen_t alen = abstract_addr(&sun, "t_unix_stream.x");
	CHECK_ERR(sendto(sv[0], "x", 1, 0, (struct sockaddr *)&sun, alen), EISCONN);
	/* getsockname of an unnamed socket is just the family. */
	alen = sizeof(sun);
	CHECK_EQ(getsockname(sv[0], (struct sockaddr *)&sun, &alen), 0);
	CHECK_EQ(alen, sizeof(sa_family_t));
	CHECK_EQ(sun.sun_family, AF_UNIX);
	alen = sizeof(sun);
	CHECK_EQ(getpeername(sv[0], (struct sockaddr *)&sun, &alen), 0);
	CHECK_EQ(alen, sizeof(sa_family_t));

	/* shutdown(SHUT_WR): the peer reads what was sent, then EOF; we get EPIPE. */
	CHECK_EQ(write(sv[0], "abc", 3), 3);
	CHECK_EQ(shutdown(sv[0], SHUT_WR), 0);
	CHECK_ERR(shutdown(sv[0], 7), EINVAL);
	CHECK_EQ(poll_one(sv[1], POLLIN | POLLRDHUP), POLLIN | POLLRDHUP);
	CHECK_EQ(read(sv[1], buf, sizeof(buf)), 3);
	CHECK_EQ(read(sv[1], buf, sizeof(buf)), 0);
	CHECK_ERR(send(sv[0], "x", 1, MSG_NOSIGNAL), EPIPE);
	/* The other direction still works. */
	CHECK_EQ(write(sv[1], "back", 4), 4);
	CHECK_EQ(read(sv[0], buf, sizeof(buf)), 4);
	close(sv[0]);
	close(sv[1]);
}

static void test_peer_close(void)
{
	int sv[2];
	char buf[16];

	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	CHECK_EQ(write(sv[0], "data", 4), 4);
	close(sv[0]);
	/* Queued data is still read, then EOF; both directions are shut. */
	CHECK_EQ(poll_one(sv[1], POLLIN | POLLOUT | POLLRDHUP),
		 POLLIN | POLLOUT | POLLRDHUP | POLLHUP);
	CHECK_EQ(read(sv[1], buf, sizeof(buf)), 4);
	CHECK_EQ(read(sv[1], buf, sizeof(buf)), 0);
	/* Writing raises SIGPIPE, unless MSG_NOSIGNAL. */
	signal(SIGPIPE, on_sigpipe);
	sigpipes = 0;
	CHECK_ERR(send(sv[1], "x", 1, MSG_NOSIGNAL), EPIPE);
	CHECK_EQ(sigpipes, 0);
	CHECK_ERR(send(sv[1], "x", 1, 0), EPIPE);
	CHECK_EQ(sigpipes, 1);
	signal(SIGPIPE, SIG_DFL);
	close(sv[1]);

	/* Closing with unread data resets the peer: ECONNRESET once, then EOF. */
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	CHECK_EQ(write(sv[1], "unread", 6), 6);
	close(sv[0]);
	CHECK_ERR(read(sv[1], buf, sizeof(buf)), ECONNRESET);
	CHECK_EQ(read(sv[1], buf, sizeof(buf)), 0);
	close(sv[1]);
}

static void test_buffer_limit(void)
{
	int sv[2];
	static char buf[65536];
	long queued = 0, n;

	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	while ((n = write(sv[0], buf, sizeof(buf))) > 0)
		queued += n;
	CHECK_EQ(errno, EAGAIN);
	CHECK(queued > 0);
	maybe_save(); /* a full buffer: every byte is still there, and still no room */
	CHECK_EQ(poll_one(sv[0], POLLOUT), 0);
	while ((n = read(sv[1], buf, sizeof(buf))) > 0)
		queued -= n;
	CHECK_EQ(queued, 0);
	CHECK_EQ(poll_one(sv[0], POLLOUT), POLLOUT);
	close(sv[0]);
	close(sv[1]);

	/* Blocking both ways: a child writes 1 MiB, the parent reads it all. */
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(sv[0]);
		for (int i = 0; i < 16; i++) {
			memset(buf, 'a' + i, sizeof(buf));
			if (write(sv[1], buf, sizeof(buf)) != (ssize_t)sizeof(buf))
				_exit(1);
		}
		_exit(0);
	}
	close(sv[1]);
	long total = 0, bad = 0;
	bool saved = false;
	while ((n = read(sv[0], buf, 1000)) > 0) {
		for (long i = 0; i < n; i++)
			bad += buf[i] != 'a' + (total + i) / 65536;
		total += n;
		if (!saved && total >= 4 * 65536) {
			saved = true;
			maybe_save(); /* the child blocked in the middle of a write */
		}
	}
	CHECK_EQ(total, 16 * 65536);
	CHECK_EQ(bad, 0);
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
	close(sv[0]);
}

static void test_listen_connect_accept(void)
{
	struct sockaddr_un sun, got;
	socklen_t len = abstract_addr(&sun, "t_unix_stream.srv"), glen;
	int lfd = socket(AF_UNIX, SOCK_STREAM, 0), v;
	char buf[32];

	CHECK(lfd >= 0);
	CHECK_ERR(listen(lfd, 4), EINVAL); /* not bound */
	CHECK_ERR(accept(lfd, NULL, NULL), EINVAL);
	CHECK_EQ(bind(lfd, (struct sockaddr *)&sun, len), 0);
	CHECK_ERR(bind(lfd, (struct sockaddr *)&sun, len), EINVAL);
	int other = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_ERR(bind(other, (struct sockaddr *)&sun, len), EADDRINUSE);
	/* Nobody listens yet. */
	CHECK_ERR(connect(other, (struct sockaddr *)&sun, len), ECONNREFUSED);
	CHECK_EQ(listen(lfd, 4), 0);
	glen = sizeof(v);
	CHECK_EQ(getsockopt(lfd, SOL_SOCKET, SO_ACCEPTCONN, &v, &glen), 0);
	CHECK_EQ(v, 1);
	CHECK_EQ(poll_one(lfd, POLLIN | POLLOUT), 0);
	CHECK_EQ(fcntl(lfd, F_SETFL, O_NONBLOCK), 0);
	CHECK_ERR(accept(lfd, NULL, NULL), EAGAIN);
	CHECK_EQ(fcntl(lfd, F_SETFL, 0), 0);
	close(other);

	glen = sizeof(got);
	CHECK_EQ(getsockname(lfd, (struct sockaddr *)&got, &glen), 0);
	CHECK_EQ(glen, len);
	CHECK_EQ(memcmp(&got, &sun, len), 0);

	int pipefd[2];
	CHECK_EQ(pipe(pipefd), 0);
	pid_t pid = fork();
	if (pid == 0) {
		int c = socket(AF_UNIX, SOCK_STREAM, 0);
		struct ucred cred;
		close(pipefd[1]);
		socklen_t cl = sizeof(cred);
		if (connect(c, (struct sockaddr *)&sun, len))
			_exit(10);
		if (connect(c, (struct sockaddr *)&sun, len) != -1 || errno != EISCONN)
			_exit(11);
		if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &cl) || cred.pid != getppid())
			_exit(12);
		if (write(c, "ping", 4) != 4)
			_exit(13);
		if (read(c, buf, sizeof(buf)) != 4 || memcmp(buf, "pong", 4))
			_exit(14);
		/* Wait for the parent's checks before closing. */
		if (read(pipefd[0], buf, 1) != 0)
			_exit(15);
		_exit(0);
	}
	close(pipefd[0]);
	/* Blocks until the child connects. */
	glen = sizeof(got);
	memset(&got, 0x55, sizeof(got));
	int s = accept4(lfd, (struct sockaddr *)&got, &glen, SOCK_CLOEXEC | SOCK_NONBLOCK);
	CHECK(s >= 0);
	CHECK_EQ(glen, sizeof(sa_family_t)); /* the client is unnamed */
	CHECK_EQ(got.sun_family, AF_UNIX);
	CHECK_EQ(fcntl(s, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(fcntl(s, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	struct ucred cred;
	glen = sizeof(cred);
	CHECK_EQ(getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &glen), 0);
	CHECK_EQ(cred.pid, pid);
	/* The accepted socket is named like the listener. */
	glen = sizeof(got);
	CHECK_EQ(getsockname(s, (struct sockaddr *)&got, &glen), 0);
	CHECK_EQ(glen, len);
	CHECK_EQ(memcmp(&got, &sun, len), 0);
	CHECK_EQ(fcntl(s, F_SETFL, 0), 0);
	CHECK_EQ(read(s, buf, sizeof(buf)), 4);
	CHECK_EQ(memcmp(buf, "ping", 4), 0);
	CHECK_EQ(write(s, "pong", 4), 4);
	close(pipefd[1]);
	CHECK_EQ(read(s, buf, sizeof(buf)), 0); /* the child closed */
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	close(s);

	/* A connect is complete once queued: data flows before accept. */
	int c = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_EQ(connect(c, (struct sockaddr *)&sun, len), 0);
	CHECK_EQ(write(c, "early", 5), 5);
	maybe_save(); /* a connection in the backlog, with data, not yet accepted */
	CHECK_EQ(poll_one(lfd, POLLIN), POLLIN);
	s = accept(lfd, NULL, NULL);
	CHECK(s >= 0);
	CHECK_EQ(read(s, buf, sizeof(buf)), 5);
	close(s);
	close(c);

	/* Closing the listener resets connections it never accepted. */
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_EQ(connect(c, (struct sockaddr *)&sun, len), 0);
	close(lfd);
	CHECK_ERR(read(c, buf, sizeof(buf)), ECONNRESET);
	close(c);
	/* The name went with it. */
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_ERR(connect(c, (struct sockaddr *)&sun, len), ECONNREFUSED);
	close(c);
}

static void test_connect_errors(void)
{
	struct sockaddr_un sun;
	int c = socket(AF_UNIX, SOCK_STREAM, 0), d = socket(AF_UNIX, SOCK_DGRAM, 0);
	socklen_t len = abstract_addr(&sun, "t_unix_stream.dgram");

	CHECK_EQ(bind(d, (struct sockaddr *)&sun, len), 0);
	/* Abstract names are per socket type. */
	CHECK_ERR(connect(c, (struct sockaddr *)&sun, len), ECONNREFUSED);
	CHECK_ERR(connect(c, (struct sockaddr *)&sun, 1), EINVAL);
	sun.sun_family = AF_INET;
	CHECK_ERR(connect(c, (struct sockaddr *)&sun, len), EINVAL);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strcpy(sun.sun_path, "/no-such-dir/sock");
	CHECK_ERR(connect(c, (struct sockaddr *)&sun, sizeof(sun)), ENOENT);
	char buf[4];
	CHECK_ERR(read(c, buf, sizeof(buf)), EINVAL); /* not connected */
	CHECK_ERR(write(c, "x", 1), ENOTCONN);
	socklen_t alen = sizeof(sun);
	CHECK_ERR(getpeername(c, (struct sockaddr *)&sun, &alen), ENOTCONN);
	CHECK_ERR(listen(d, 1), EOPNOTSUPP);
	CHECK_ERR(accept(d, NULL, NULL), EOPNOTSUPP);
	close(c);
	close(d);
}

static void test_seqpacket(void)
{
	int sv[2];
	char buf[16];
	struct iovec iov = {buf, 4};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	CHECK_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	CHECK_EQ(send(sv[0], "first", 5, 0), 5);
	CHECK_EQ(send(sv[0], "second", 6, 0), 6);
	CHECK_EQ(send(sv[0], "", 0, 0), 0);
	/* One message per read; a short buffer cuts it and says so. */
	CHECK_EQ(recvmsg(sv[1], &mh, 0), 4);
	CHECK_EQ(mh.msg_flags & MSG_TRUNC, MSG_TRUNC);
	CHECK_EQ(memcmp(buf, "firs", 4), 0);
	CHECK_EQ(recv(sv[1], buf, sizeof(buf), MSG_PEEK), 6);
	CHECK_EQ(recv(sv[1], buf, 2, MSG_TRUNC), 6);
	CHECK_EQ(recv(sv[1], buf, sizeof(buf), 0), 0); /* the empty message */
	CHECK_ERR(recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT), EAGAIN);
	close(sv[0]);
	CHECK_EQ(recv(sv[1], buf, sizeof(buf), 0), 0);
	CHECK_ERR(send(sv[1], "x", 1, MSG_NOSIGNAL), EPIPE);
	close(sv[1]);
}

int main(void)
{
	test_socket_args();
	test_socketpair_basics();
	test_peer_close();
	test_buffer_limit();
	test_listen_connect_accept();
	test_connect_errors();
	test_seqpacket();
	return check_done();
}
