/* TCP over loopback (AF_INET): socket() arguments, a fresh socket's names and readiness,
 * bind (ephemeral ports, EADDRINUSE, SO_REUSEADDR, wildcard overlap, EADDRNOTAVAIL),
 * listen/connect/accept4 with their addresses, data both ways with MSG_PEEK, MSG_DONTWAIT,
 * FIONREAD, ECONNREFUSED blocking and not, a non-blocking connect's EINPROGRESS / SO_ERROR /
 * second connect, shutdown and half-close, EOF, EPIPE with SIGPIPE and MSG_NOSIGNAL,
 * resets (unread data, SO_LINGER 0, a listener closed with a queued connection), a full
 * backlog holding a connect back, MSG_WAITALL across writes, EPOLLRDHUP. Connections with
 * bytes queued both ways, a listener with a queued connection and a half-closed stream
 * survive checkpoint and restore. */
#include <fcntl.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

#include "check.h"
#include "inet.h"

static volatile int sigpipes;

static void on_sigpipe(int sig)
{
	(void)sig;
	sigpipes++;
}

static void test_socket_args(void)
{
	int sv[2];

	CHECK_ERR(socket(AF_INET, SOCK_STREAM, IPPROTO_UDP), EPROTONOSUPPORT);
	CHECK_ERR(socket(AF_INET, SOCK_SEQPACKET, 0), ESOCKTNOSUPPORT);
	CHECK_ERR(socket(AF_INET, SOCK_STREAM | 0x40000, 0), EINVAL);
	CHECK_ERR(socketpair(AF_INET, SOCK_STREAM, 0, sv), EOPNOTSUPP);
	/* Raw and packet sockets need CAP_NET_RAW, which the sandbox never has. */
	if (in_sandbox()) {
		CHECK_ERR(socket(AF_INET, SOCK_RAW, IPPROTO_ICMP), EPERM);
		CHECK_ERR(socket(AF_PACKET, SOCK_RAW, 0), EPERM);
	}
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
	CHECK(fd >= 0);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(int_opt(fd, SOL_SOCKET, SO_TYPE), SOCK_STREAM);
	CHECK_EQ(int_opt(fd, SOL_SOCKET, SO_PROTOCOL), IPPROTO_TCP);
	CHECK_EQ(int_opt(fd, SOL_SOCKET, SO_DOMAIN), AF_INET);
	CHECK_EQ(int_opt(fd, SOL_SOCKET, SO_ACCEPTCONN), 0);
	/* net.ipv4.tcp_wmem[1] and tcp_rmem[1]. */
	CHECK_EQ(int_opt(fd, SOL_SOCKET, SO_SNDBUF), 16384);
	CHECK_EQ(int_opt(fd, SOL_SOCKET, SO_RCVBUF), 131072);
	/* Unbound and unconnected: the wildcard name, no peer, hung up but writable. */
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	CHECK_EQ(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	CHECK_EQ(len, sizeof(a));
	CHECK_EQ(a.sin_family, AF_INET);
	CHECK_EQ(a.sin_addr.s_addr, htonl(INADDR_ANY));
	CHECK_EQ(a.sin_port, 0);
	len = sizeof(a);
	CHECK_ERR(getpeername(fd, (struct sockaddr *)&a, &len), ENOTCONN);
	CHECK_EQ(poll_events(fd, POLLIN | POLLOUT, 0), POLLOUT | POLLHUP);
	char c;
	CHECK_ERR(read(fd, &c, 1), ENOTCONN);
	CHECK_ERR(send(fd, "x", 1, MSG_NOSIGNAL), EPIPE);
	CHECK_ERR(shutdown(fd, SHUT_WR), ENOTCONN);
	close(fd);
}

static void test_bind(void)
{
	struct sockaddr_in a = lo4(0), b;
	socklen_t len = sizeof(b);
	int s1 = socket(AF_INET, SOCK_STREAM, 0), s2 = socket(AF_INET, SOCK_STREAM, 0);

	CHECK_ERR(bind(s1, (struct sockaddr *)&a, sizeof(a) - 1), EINVAL);
	struct sockaddr_in6 six = lo6(0);
	CHECK_ERR(bind(s1, (struct sockaddr *)&six, sizeof(six)), EAFNOSUPPORT);
	a.sin_addr.s_addr = inet_addr("192.0.2.1"); /* TEST-NET-1: no host has it */
	CHECK_ERR(bind(s1, (struct sockaddr *)&a, sizeof(a)), EADDRNOTAVAIL);
	a = lo4(0);
	CHECK_EQ(bind(s1, (struct sockaddr *)&a, sizeof(a)), 0);
	CHECK_EQ(getsockname(s1, (struct sockaddr *)&b, &len), 0);
	CHECK_EQ(b.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	uint16_t p = ntohs(b.sin_port);
	CHECK(p != 0);
	CHECK_ERR(bind(s1, (struct sockaddr *)&a, sizeof(a)), EINVAL); /* bound already */
	/* The same port: taken, on the same address, on the wildcard or through an alias. */
	a = lo4(p);
	CHECK_ERR(bind(s2, (struct sockaddr *)&a, sizeof(a)), EADDRINUSE);
	a.sin_addr.s_addr = htonl(INADDR_ANY);
	CHECK_ERR(bind(s2, (struct sockaddr *)&a, sizeof(a)), EADDRINUSE);
	/* Another address of 127.0.0.0/8 is another address. */
	a.sin_addr.s_addr = inet_addr("127.0.0.2");
	CHECK_EQ(bind(s2, (struct sockaddr *)&a, sizeof(a)), 0);
	close(s2);
	/* SO_REUSEADDR on both, neither listening: shared; once one listens, not. */
	int r1 = socket(AF_INET, SOCK_STREAM, 0), r2 = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	CHECK_EQ(setsockopt(r1, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
	CHECK_EQ(setsockopt(r2, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
	a = lo4(0);
	CHECK_EQ(bind(r1, (struct sockaddr *)&a, sizeof(a)), 0);
	a = lo4(port_of(r1));
	CHECK_EQ(bind(r2, (struct sockaddr *)&a, sizeof(a)), 0);
	CHECK_EQ(listen(r1, 1), 0);
	CHECK_ERR(listen(r2, 1), EADDRINUSE);
	close(r2);
	r2 = socket(AF_INET, SOCK_STREAM, 0);
	CHECK_EQ(setsockopt(r2, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
	CHECK_ERR(bind(r2, (struct sockaddr *)&a, sizeof(a)), EADDRINUSE);
	close(r1);
	close(r2);
	/* AF_UNSPEC is AF_INET for bind, with the any address only. */
	int u = socket(AF_INET, SOCK_STREAM, 0);
	a = lo4(0);
	a.sin_family = AF_UNSPEC;
	CHECK_ERR(bind(u, (struct sockaddr *)&a, sizeof(a)), EAFNOSUPPORT);
	a.sin_addr.s_addr = htonl(INADDR_ANY);
	CHECK_EQ(bind(u, (struct sockaddr *)&a, sizeof(a)), 0);
	close(u);
	close(s1);
	/* The port is free again once its socket is closed. */
	s2 = socket(AF_INET, SOCK_STREAM, 0);
	a = lo4(p);
	CHECK_EQ(bind(s2, (struct sockaddr *)&a, sizeof(a)), 0);
	close(s2);
}

static void test_connect_accept_and_data(void)
{
	int l = tcp_listener(8), one = 1;
	uint16_t port = port_of(l);
	struct sockaddr_in a, b;
	socklen_t len;
	char buf[64];

	CHECK_EQ(int_opt(l, SOL_SOCKET, SO_ACCEPTCONN), 1);
	CHECK_EQ(poll_events(l, POLLIN | POLLOUT, 0), 0);
	CHECK_EQ(fcntl(l, F_SETFL, O_NONBLOCK), 0);
	CHECK_ERR(accept(l, NULL, NULL), EAGAIN);
	CHECK_EQ(fcntl(l, F_SETFL, 0), 0);
	int c = tcp_client(port);
	CHECK(c >= 0);
	CHECK_EQ(setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)), 0);
	CHECK_EQ(poll_events(l, POLLIN, 1000), POLLIN);
	len = sizeof(a);
	int s = accept4(l, (struct sockaddr *)&a, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
	CHECK(s >= 0);
	CHECK_EQ(fcntl(s, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	CHECK_EQ(fcntl(s, F_GETFD), FD_CLOEXEC);
	/* The accepted address is the client's name; the server end's name is the listener's. */
	CHECK_EQ(len, sizeof(a));
	len = sizeof(b);
	CHECK_EQ(getsockname(c, (struct sockaddr *)&b, &len), 0);
	CHECK_EQ(b.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	CHECK_EQ(a.sin_port, b.sin_port);
	CHECK_EQ(a.sin_addr.s_addr, b.sin_addr.s_addr);
	len = sizeof(b);
	CHECK_EQ(getpeername(c, (struct sockaddr *)&b, &len), 0);
	CHECK_EQ(ntohs(b.sin_port), port);
	len = sizeof(b);
	CHECK_EQ(getsockname(s, (struct sockaddr *)&b, &len), 0);
	CHECK_EQ(ntohs(b.sin_port), port);
	CHECK_EQ(b.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	CHECK_EQ(int_opt(s, SOL_SOCKET, SO_ACCEPTCONN), 0);
	/* A connected socket cannot listen or connect again. */
	CHECK_ERR(listen(c, 1), EINVAL);
	a = lo4(port);
	CHECK_ERR(connect(c, (struct sockaddr *)&a, sizeof(a)), EISCONN);

	CHECK_EQ(poll_events(s, POLLIN | POLLOUT, 0), POLLOUT);
	CHECK_ERR(recv(s, buf, sizeof(buf), 0), EAGAIN);
	CHECK_ERR(recv(c, buf, sizeof(buf), MSG_DONTWAIT), EAGAIN);
	CHECK_EQ(write(c, "hello ", 6), 6);
	CHECK_EQ(send(c, "world", 5, 0), 5);
	CHECK_EQ(write(s, "pong", 4), 4);
	maybe_save(); /* 11 bytes queued one way, 4 the other */
	int n = -1;
	CHECK_EQ(poll_events(s, POLLIN, 1000) & POLLIN, POLLIN);
	CHECK_EQ(ioctl(s, FIONREAD, &n), 0);
	CHECK_EQ(n, 11);
	CHECK_EQ(recv(s, buf, 5, MSG_PEEK), 5);
	CHECK_EQ(memcmp(buf, "hello", 5), 0);
	CHECK_EQ(read(s, buf, sizeof(buf)), 11);
	CHECK_EQ(memcmp(buf, "hello world", 11), 0);
	CHECK_EQ(recv(c, buf, 2, 0), 2);
	CHECK_EQ(recv(c, buf + 2, sizeof(buf), 0), 2);
	CHECK_EQ(memcmp(buf, "pong", 4), 0);
	CHECK_ERR(ioctl(l, FIONREAD, &n), EINVAL);
	/* recvfrom on a stream gives no address. */
	CHECK_EQ(write(s, "z", 1), 1);
	len = sizeof(b);
	CHECK_EQ(poll_events(c, POLLIN, 1000), POLLIN);
	CHECK_EQ(recvfrom(c, buf, sizeof(buf), 0, (struct sockaddr *)&b, &len), 1);
	CHECK_EQ(len, 0);
	/* MSG_TRUNC on TCP drops the bytes without copying them. */
	CHECK_EQ(write(s, "abcdef", 6), 6);
	CHECK_EQ(poll_events(c, POLLIN, 1000), POLLIN);
	CHECK_EQ(recv(c, NULL, 4, MSG_TRUNC), 4);
	CHECK_EQ(recv(c, buf, sizeof(buf), 0), 2);
	CHECK_EQ(memcmp(buf, "ef", 2), 0);
	close(c);
	close(s);
	close(l);
}

static void test_refused(void)
{
	uint16_t p = free_port(SOCK_STREAM);
	struct sockaddr_in a = lo4(p);
	int c = socket(AF_INET, SOCK_STREAM, 0);

	CHECK_ERR(connect(c, (struct sockaddr *)&a, sizeof(a)), ECONNREFUSED);
	CHECK_ERR(connect(c, (struct sockaddr *)&a, sizeof(a)), ECONNREFUSED);
	CHECK_EQ(poll_events(c, POLLIN | POLLOUT, 0), POLLOUT | POLLHUP);
	close(c);
	/* Non-blocking: in progress, then the error is SO_ERROR, and the next connect reports
	 * the failure once. */
	c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	CHECK_ERR(connect(c, (struct sockaddr *)&a, sizeof(a)), EINPROGRESS);
	short ev = poll_events(c, POLLOUT, 2000);
	CHECK_EQ(ev & (POLLOUT | POLLERR | POLLHUP), POLLOUT | POLLERR | POLLHUP);
	CHECK_EQ(int_opt(c, SOL_SOCKET, SO_ERROR), ECONNREFUSED);
	CHECK_EQ(int_opt(c, SOL_SOCKET, SO_ERROR), 0);
	CHECK_ERR(connect(c, (struct sockaddr *)&a, sizeof(a)), ECONNABORTED);
	close(c);
	c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	CHECK_ERR(connect(c, (struct sockaddr *)&a, sizeof(a)), EINPROGRESS);
	CHECK(poll_events(c, POLLOUT, 2000) & POLLERR);
	CHECK_ERR(connect(c, (struct sockaddr *)&a, sizeof(a)), ECONNREFUSED);
	close(c);
	/* Bad addresses. */
	c = socket(AF_INET, SOCK_STREAM, 0);
	CHECK_ERR(connect(c, (struct sockaddr *)&a, sizeof(a) - 1), EINVAL);
	struct sockaddr_in6 six = lo6(p);
	CHECK_ERR(connect(c, (struct sockaddr *)&six, sizeof(six)), EAFNOSUPPORT);
	if (in_sandbox()) {
		/* Only lo exists: nothing else is reachable. */
		a.sin_addr.s_addr = inet_addr("192.0.2.1");
		CHECK_ERR(connect(c, (struct sockaddr *)&a, sizeof(a)), ENETUNREACH);
	}
	close(c);
}

static void test_nonblocking_connect(void)
{
	int l = tcp_listener(4);
	struct sockaddr_in a = lo4(port_of(l));
	int c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	CHECK_ERR(connect(c, (struct sockaddr *)&a, sizeof(a)), EINPROGRESS);
	CHECK_EQ(poll_events(c, POLLOUT, 2000), POLLOUT);
	CHECK_EQ(int_opt(c, SOL_SOCKET, SO_ERROR), 0);
	CHECK_EQ(connect(c, (struct sockaddr *)&a, sizeof(a)), 0);
	CHECK_ERR(connect(c, (struct sockaddr *)&a, sizeof(a)), EISCONN);
	int s = accept(l, NULL, NULL);
	CHECK(s >= 0);
	CHECK_EQ(send(c, "ok", 2, 0), 2);
	char buf[4];
	CHECK_EQ(recv(s, buf, sizeof(buf), 0), 2);
	close(s);
	close(c);
	close(l);
}

static void test_shutdown_and_eof(void)
{
	int c, s;
	char buf[16];

	CHECK_EQ(tcp_pair(&c, &s), 0);
	CHECK_ERR(shutdown(c, 7), EINVAL);
	CHECK_EQ(write(c, "last", 4), 4);
	CHECK_EQ(shutdown(c, SHUT_WR), 0);
	CHECK_ERR(send(c, "x", 1, MSG_NOSIGNAL), EPIPE);
	maybe_save(); /* half-closed with bytes before the end */
	short ev = poll_events(s, POLLIN | POLLOUT | POLLRDHUP, 1000);
	CHECK_EQ(ev, POLLIN | POLLOUT | POLLRDHUP);
	CHECK_EQ(read(s, buf, sizeof(buf)), 4);
	CHECK_EQ(read(s, buf, sizeof(buf)), 0);
	CHECK_EQ(read(s, buf, sizeof(buf)), 0);
	/* The other direction still works. */
	CHECK_EQ(write(s, "back", 4), 4);
	CHECK_EQ(poll_events(c, POLLIN, 1000) & POLLIN, POLLIN);
	CHECK_EQ(read(c, buf, sizeof(buf)), 4);
	CHECK_EQ(shutdown(s, SHUT_WR), 0);
	CHECK_EQ(poll_events(c, POLLIN | POLLRDHUP, 1000) & (POLLIN | POLLRDHUP),
		 POLLIN | POLLRDHUP);
	CHECK_EQ(read(c, buf, sizeof(buf)), 0);
	/* Both directions shut: hung up. */
	CHECK(poll_events(s, POLLIN, 1000) & POLLHUP);
	close(c);
	close(s);
	/* SHUT_RD: reads end at once, the peer may still write. */
	CHECK_EQ(tcp_pair(&c, &s), 0);
	CHECK_EQ(shutdown(s, SHUT_RD), 0);
	CHECK_EQ(read(s, buf, sizeof(buf)), 0);
	CHECK_EQ(write(c, "x", 1), 1);
	close(c);
	close(s);
}

static void test_close_epipe_and_resets(void)
{
	int c, s;
	char buf[16];

	signal(SIGPIPE, on_sigpipe);
	/* The peer closed: EOF; a first write goes (and is answered by a reset), the next one
	 * is EPIPE with SIGPIPE, unless MSG_NOSIGNAL. */
	CHECK_EQ(tcp_pair(&c, &s), 0);
	close(s);
	CHECK_EQ(poll_events(c, POLLIN | POLLRDHUP, 1000), POLLIN | POLLRDHUP);
	CHECK_EQ(read(c, buf, sizeof(buf)), 0);
	CHECK_EQ(write(c, "x", 1), 1);
	CHECK(poll_events(c, POLLIN, 1000) & POLLERR);
	sigpipes = 0;
	CHECK_ERR(send(c, "x", 1, MSG_NOSIGNAL), EPIPE);
	CHECK_EQ(sigpipes, 0);
	CHECK_ERR(write(c, "x", 1), EPIPE);
	CHECK_EQ(sigpipes, 1);
	CHECK_EQ(read(c, buf, sizeof(buf)), 0);
	close(c);

	/* Closed with data it never read: the peer is reset; what it has queued stays readable,
	 * then the error, then EOF. */
	CHECK_EQ(tcp_pair(&c, &s), 0);
	CHECK_EQ(write(c, "unread", 6), 6);
	CHECK_EQ(write(s, "kept", 4), 4);
	CHECK_EQ(poll_events(s, POLLIN, 1000), POLLIN);
	close(s);
	CHECK(poll_events(c, POLLIN, 1000) & POLLIN);
	CHECK_EQ(read(c, buf, sizeof(buf)), 4);
	CHECK_ERR(read(c, buf, sizeof(buf)), ECONNRESET);
	CHECK_EQ(read(c, buf, sizeof(buf)), 0);
	CHECK_ERR(send(c, "x", 1, MSG_NOSIGNAL), EPIPE);
	close(c);

	/* SO_LINGER with a zero time resets at close; writes then see ECONNRESET once. */
	CHECK_EQ(tcp_pair(&c, &s), 0);
	struct linger lg = {1, 0};
	CHECK_EQ(setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
	close(s);
	CHECK(poll_events(c, POLLIN, 1000) & POLLERR);
	sigpipes = 0;
	CHECK_ERR(write(c, "x", 1), ECONNRESET);
	CHECK_EQ(sigpipes, 0);
	CHECK_ERR(write(c, "x", 1), EPIPE);
	CHECK_EQ(sigpipes, 1);
	close(c);

	/* A listener closed with a connection it never accepted resets it. */
	int l = tcp_listener(4);
	c = tcp_client(port_of(l));
	CHECK(c >= 0);
	CHECK_EQ(poll_events(l, POLLIN, 1000), POLLIN);
	close(l);
	CHECK(poll_events(c, POLLIN, 1000) & POLLERR);
	CHECK_ERR(read(c, buf, sizeof(buf)), ECONNRESET);
	close(c);
	signal(SIGPIPE, SIG_DFL);
}

/* A listener holds backlog+1 connections; the next connect waits until accept makes room. */
static void test_backlog(void)
{
	int l = tcp_listener(1), c[3], s[3];
	struct sockaddr_in a = lo4(port_of(l));

	for (int i = 0; i < 3; i++) {
		c[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		CHECK_ERR(connect(c[i], (struct sockaddr *)&a, sizeof(a)), EINPROGRESS);
	}
	CHECK_EQ(poll_events(c[0], POLLOUT, 2000), POLLOUT);
	CHECK_EQ(poll_events(c[1], POLLOUT, 2000), POLLOUT);
	CHECK_EQ(poll_events(c[2], POLLOUT, 300), 0);
	CHECK_ERR(connect(c[2], (struct sockaddr *)&a, sizeof(a)), EALREADY);
	maybe_save(); /* two connections queued, one waiting for room */
	s[0] = accept(l, NULL, NULL);
	CHECK(s[0] >= 0);
	/* Linux lets the waiting SYN in on its next try (about a second later). */
	CHECK_EQ(poll_events(c[2], POLLOUT, 5000), POLLOUT);
	CHECK_EQ(connect(c[2], (struct sockaddr *)&a, sizeof(a)), 0);
	s[1] = accept(l, NULL, NULL);
	s[2] = accept(l, NULL, NULL);
	CHECK(s[1] >= 0 && s[2] >= 0);
	for (int i = 0; i < 3; i++) {
		close(c[i]);
		close(s[i]);
	}
	/* A blocking connect waits for room the same way. */
	int first = tcp_client(port_of(l)), second = tcp_client(port_of(l));
	CHECK(first >= 0 && second >= 0);
	pid_t pid = fork();
	if (pid == 0) {
		int cc = tcp_client(port_of(l));
		_exit(cc >= 0 && write(cc, "late", 4) == 4 ? 0 : 1);
	}
	usleep(200000);
	int a1 = accept(l, NULL, NULL), a2 = accept(l, NULL, NULL), a3 = accept(l, NULL, NULL);
	CHECK(a1 >= 0 && a2 >= 0 && a3 >= 0);
	char buf[8];
	CHECK_EQ(read(a3, buf, sizeof(buf)), 4);
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK_EQ(st, 0);
	close(a1);
	close(a2);
	close(a3);
	close(first);
	close(second);
	close(l);
}

static void test_waitall_and_rdhup(void)
{
	int c, s;
	char buf[32];

	CHECK_EQ(tcp_pair(&c, &s), 0);
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 4; i++) {
			usleep(20000);
			if (write(c, "abcd", 4) != 4)
				_exit(1);
		}
		usleep(20000);
		shutdown(c, SHUT_WR);
		_exit(0);
	}
	CHECK_EQ(recv(s, buf, 12, MSG_WAITALL), 12);
	CHECK_EQ(memcmp(buf, "abcdabcdabcd", 12), 0);
	/* Epoll sees the end of the stream as EPOLLRDHUP. */
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data.fd = s};
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev), 0);
	/* MSG_WAITALL stops at the end of the stream with what there was. */
	CHECK_EQ(recv(s, buf, sizeof(buf), MSG_WAITALL), 4);
	struct epoll_event out;
	CHECK_EQ(epoll_wait(ep, &out, 1, 2000), 1);
	CHECK_EQ(out.events & (EPOLLIN | EPOLLRDHUP), EPOLLIN | EPOLLRDHUP);
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK_EQ(st, 0);
	close(ep);
	close(c);
	close(s);
}

/* A writer fills the connection until EAGAIN; the reader drains it all. */
static void test_full_buffers(void)
{
	int c, s, one = 1;
	static char chunk[65536], in[65536];

	CHECK_EQ(tcp_pair(&c, &s), 0);
	CHECK_EQ(ioctl(c, FIONBIO, &one), 0);
	size_t sent = 0;
	ssize_t n;
	while ((n = write(c, chunk, sizeof(chunk))) > 0)
		sent += n;
	CHECK_ERR(write(c, chunk, sizeof(chunk)), EAGAIN);
	CHECK(sent >= 65536);
	CHECK_EQ(poll_events(c, POLLOUT, 0), 0);
	int q = -1;
	CHECK_EQ(ioctl(c, TIOCOUTQ, &q), 0);
	CHECK(q >= 0 && (size_t)q <= sent);
	maybe_save(); /* a full connection */
	size_t got = 0;
	while (got < sent) {
		if (!(poll_events(s, POLLIN, 2000) & POLLIN))
			break;
		n = read(s, in, sizeof(in));
		if (n <= 0)
			break;
		got += n;
	}
	CHECK_EQ(got, sent);
	CHECK_EQ(poll_events(c, POLLOUT, 1000), POLLOUT);
	close(c);
	close(s);
}

int main(void)
{
	test_socket_args();
	test_bind();
	test_connect_accept_and_data();
	test_refused();
	test_nonblocking_connect();
	test_shutdown_and_eof();
	test_close_epipe_and_resets();
	test_backlog();
	test_waitall_and_rdhup();
	test_full_buffers();
	return check_done();
}
