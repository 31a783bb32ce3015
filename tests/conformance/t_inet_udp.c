/* UDP over loopback (AF_INET): a fresh socket, implicit binding by sendto, datagram
 * boundaries, MSG_PEEK, MSG_TRUNC (as a result and as a flag), FIONREAD, empty datagrams,
 * EMSGSIZE, EDESTADDRREQ, connected sockets (their name, their filter on senders,
 * AF_UNSPEC), ECONNREFUSED reported to a connected sender, sendmmsg/recvmmsg, SO_RCVTIMEO,
 * a full receive buffer dropping datagrams, broadcast without SO_BROADCAST, SO_REUSEADDR and
 * SO_REUSEPORT groups. Bound sockets with datagrams queued, a connected pair and a pending
 * error survive checkpoint and restore. */
#include <fcntl.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/time.h>

#include "check.h"
#include "inet.h"

static int udp_bound(void)
{
	struct sockaddr_in a = lo4(0);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

static void test_fresh_and_autobind(void)
{
	int s = socket(AF_INET, SOCK_DGRAM, 0), r = udp_bound();
	struct sockaddr_in a, from;
	socklen_t len = sizeof(a);
	char buf[64];

	CHECK_ERR(socket(AF_INET, SOCK_DGRAM, IPPROTO_TCP), EPROTONOSUPPORT);
	CHECK_EQ(int_opt(s, SOL_SOCKET, SO_TYPE), SOCK_DGRAM);
	CHECK_EQ(int_opt(s, SOL_SOCKET, SO_PROTOCOL), IPPROTO_UDP);
	CHECK_EQ(int_opt(s, SOL_SOCKET, SO_SNDBUF), 212992);
	CHECK_EQ(int_opt(s, SOL_SOCKET, SO_RCVBUF), 212992);
	CHECK_EQ(poll_events(s, POLLIN | POLLOUT, 0), POLLOUT);
	CHECK_EQ(getsockname(s, (struct sockaddr *)&a, &len), 0);
	CHECK_EQ(a.sin_port, 0);
	CHECK_ERR(getpeername(s, (struct sockaddr *)&a, &len), ENOTCONN);
	CHECK_ERR(send(s, "x", 1, 0), EDESTADDRREQ);
	CHECK_ERR(listen(s, 1), EOPNOTSUPP);
	CHECK_ERR(accept(s, NULL, NULL), EOPNOTSUPP);
	CHECK_ERR(shutdown(s, SHUT_RD), ENOTCONN);
	close(s);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in to = lo4(port_of(r));
	/* sendto binds the sender to an ephemeral port on the wildcard address. */
	CHECK_EQ(sendto(s, "one", 3, 0, (struct sockaddr *)&to, sizeof(to)), 3);
	len = sizeof(a);
	CHECK_EQ(getsockname(s, (struct sockaddr *)&a, &len), 0);
	CHECK_EQ(a.sin_addr.s_addr, htonl(INADDR_ANY));
	CHECK(a.sin_port != 0);
	to.sin_port = 0;
	CHECK_ERR(sendto(s, "x", 1, 0, (struct sockaddr *)&to, sizeof(to)), EINVAL);
	CHECK_ERR(sendto(s, "x", 1, 0, (struct sockaddr *)&to, sizeof(to) - 1), EINVAL);
	to = lo4(port_of(r));
	CHECK_EQ(sendto(s, "", 0, 0, (struct sockaddr *)&to, sizeof(to)), 0);
	CHECK_EQ(sendto(s, "three", 5, 0, (struct sockaddr *)&to, sizeof(to)), 5);
	static char big[65508];
	CHECK_ERR(sendto(s, big, sizeof(big), 0, (struct sockaddr *)&to, sizeof(to)), EMSGSIZE);
	CHECK_EQ(sendto(s, big, sizeof(big) - 1, 0, (struct sockaddr *)&to, sizeof(to)),
		 sizeof(big) - 1);
	maybe_save(); /* four datagrams queued on a bound socket */
	CHECK_EQ(poll_events(r, POLLIN, 1000), POLLIN | 0);
	int n = -1;
	CHECK_EQ(ioctl(r, FIONREAD, &n), 0);
	CHECK_EQ(n, 3);
	len = sizeof(from);
	CHECK_EQ(recvfrom(r, buf, sizeof(buf), MSG_PEEK, (struct sockaddr *)&from, &len), 3);
	CHECK_EQ(len, sizeof(from));
	CHECK_EQ(from.sin_family, AF_INET);
	CHECK_EQ(from.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	CHECK_EQ(from.sin_port, a.sin_port);
	CHECK_EQ(recv(r, buf, sizeof(buf), 0), 3);
	CHECK_EQ(memcmp(buf, "one", 3), 0);
	CHECK_EQ(recv(r, buf, sizeof(buf), 0), 0); /* the empty one */
	/* A short buffer cuts the datagram: the rest is gone. */
	struct iovec iov = {buf, 2};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	CHECK_EQ(recvmsg(r, &mh, 0), 2);
	CHECK_EQ(mh.msg_flags & MSG_TRUNC, MSG_TRUNC);
	CHECK_EQ(recv(r, buf, 4, MSG_TRUNC), (long)sizeof(big) - 1);
	CHECK_ERR(recv(r, buf, sizeof(buf), MSG_DONTWAIT), EAGAIN);
	CHECK_EQ(ioctl(r, FIONREAD, &n), 0);
	CHECK_EQ(n, 0);
	close(s);
	close(r);
}

static void test_connected(void)
{
	int a = udp_bound(), b = udp_bound(), c = udp_bound();
	struct sockaddr_in to = lo4(port_of(b)), name;
	socklen_t len = sizeof(name);
	char buf[16];

	CHECK_EQ(connect(a, (struct sockaddr *)&to, sizeof(to)), 0);
	CHECK_EQ(getpeername(a, (struct sockaddr *)&name, &len), 0);
	CHECK_EQ(ntohs(name.sin_port), port_of(b));
	CHECK_EQ(send(a, "hi", 2, 0), 2);
	/* B connected to A takes datagrams from A only. */
	to = lo4(port_of(a));
	CHECK_EQ(connect(b, (struct sockaddr *)&to, sizeof(to)), 0);
	to = lo4(port_of(b));
	CHECK_EQ(sendto(c, "stray", 5, 0, (struct sockaddr *)&to, sizeof(to)), 5);
	CHECK_EQ(send(a, "again", 5, 0), 5);
	maybe_save(); /* a connected pair with datagrams queued */
	CHECK_EQ(poll_events(b, POLLIN, 1000), POLLIN);
	CHECK_EQ(recv(b, buf, sizeof(buf), 0), 2);
	CHECK_EQ(recv(b, buf, sizeof(buf), 0), 5);
	CHECK_EQ(memcmp(buf, "again", 5), 0);
	CHECK_ERR(recv(b, buf, sizeof(buf), MSG_DONTWAIT), EAGAIN);
	/* AF_UNSPEC dissolves the association. */
	struct sockaddr unspec = {.sa_family = AF_UNSPEC};
	CHECK_EQ(connect(a, &unspec, sizeof(unspec)), 0);
	len = sizeof(name);
	CHECK_ERR(getpeername(a, (struct sockaddr *)&name, &len), ENOTCONN);
	CHECK_ERR(send(a, "x", 1, 0), EDESTADDRREQ);
	close(a);
	close(b);
	close(c);
	/* A socket connected before binding gets the route's address and a port. */
	a = socket(AF_INET, SOCK_DGRAM, 0);
	to = lo4(9);
	CHECK_EQ(connect(a, (struct sockaddr *)&to, sizeof(to)), 0);
	len = sizeof(name);
	CHECK_EQ(getsockname(a, (struct sockaddr *)&name, &len), 0);
	CHECK_EQ(name.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	CHECK(name.sin_port != 0);
	close(a);
}

static void test_refused(void)
{
	uint16_t p = free_port(SOCK_DGRAM);
	struct sockaddr_in to = lo4(p);
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	char buf[8];

	/* Unconnected: an unreachable port is not reported. */
	CHECK_EQ(sendto(s, "x", 1, 0, (struct sockaddr *)&to, sizeof(to)), 1);
	CHECK_EQ(poll_events(s, POLLIN, 100), 0);
	CHECK_EQ(connect(s, (struct sockaddr *)&to, sizeof(to)), 0);
	CHECK_EQ(send(s, "x", 1, 0), 1);
	CHECK_EQ(poll_events(s, POLLIN, 1000), POLLERR);
	maybe_save(); /* a pending error */
	CHECK_ERR(recv(s, buf, sizeof(buf), 0), ECONNREFUSED);
	CHECK_EQ(poll_events(s, POLLIN, 0), 0);
	CHECK_EQ(send(s, "x", 1, 0), 1);
	CHECK_EQ(poll_events(s, POLLIN, 1000), POLLERR);
	CHECK_EQ(int_opt(s, SOL_SOCKET, SO_ERROR), ECONNREFUSED);
	CHECK_EQ(send(s, "x", 1, 0), 1);
	CHECK(poll_events(s, POLLOUT, 1000) & POLLERR);
	CHECK_ERR(send(s, "x", 1, 0), ECONNREFUSED);
	close(s);
}

static void test_mmsg(void)
{
	int r = udp_bound(), s = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in to = lo4(port_of(r)), from[4];
	char out[3][8] = {"a", "bb", "ccc"}, in[4][8];
	struct iovec oiov[3], iiov[4];
	struct mmsghdr om[3], im[4];

	memset(om, 0, sizeof(om));
	memset(im, 0, sizeof(im));
	for (int i = 0; i < 3; i++) {
		oiov[i] = (struct iovec){out[i], (size_t)i + 1};
		om[i].msg_hdr.msg_iov = &oiov[i];
		om[i].msg_hdr.msg_iovlen = 1;
		om[i].msg_hdr.msg_name = &to;
		om[i].msg_hdr.msg_namelen = sizeof(to);
	}
	for (int i = 0; i < 4; i++) {
		iiov[i] = (struct iovec){in[i], sizeof(in[i])};
		im[i].msg_hdr.msg_iov = &iiov[i];
		im[i].msg_hdr.msg_iovlen = 1;
		im[i].msg_hdr.msg_name = &from[i];
		im[i].msg_hdr.msg_namelen = sizeof(from[i]);
	}
	CHECK_EQ(sendmmsg(s, om, 3, 0), 3);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(om[i].msg_len, i + 1);
	CHECK_EQ(poll_events(r, POLLIN, 1000), POLLIN);
	usleep(10000);
	CHECK_EQ(recvmmsg(r, im, 4, MSG_WAITFORONE, NULL), 3);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(im[i].msg_len, i + 1);
		CHECK_EQ(memcmp(in[i], out[i], i + 1), 0);
		CHECK_EQ(im[i].msg_hdr.msg_namelen, sizeof(from[i]));
		CHECK_EQ(ntohs(from[i].sin_port), port_of(s));
	}
	CHECK_ERR(recvmmsg(r, im, 4, MSG_DONTWAIT, NULL), EAGAIN);
	close(r);
	close(s);
}

static void test_timeout_and_overflow(void)
{
	int r = udp_bound(), s = socket(AF_INET, SOCK_DGRAM, 0);
	struct timeval tv = {0, 200000}, got;
	socklen_t len = sizeof(got);
	struct timespec t0, t1;
	char buf[1024];

	tv.tv_usec = 1000000;
	CHECK_ERR(setsockopt(r, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), EDOM);
	tv.tv_usec = 200000;
	CHECK_EQ(setsockopt(r, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	CHECK_EQ(getsockopt(r, SOL_SOCKET, SO_RCVTIMEO, &got, &len), 0);
	CHECK_EQ(got.tv_sec, 0);
	CHECK_EQ(got.tv_usec, 200000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_ERR(recv(r, buf, sizeof(buf), 0), EAGAIN);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(ms_between(&t0, &t1) >= 180);
	CHECK(ms_between(&t0, &t1) < 2000);
	/* A full receive buffer drops what does not fit. */
	int v = 4096;
	CHECK_EQ(setsockopt(r, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)), 0);
	CHECK_EQ(int_opt(r, SOL_SOCKET, SO_RCVBUF), 8192);
	struct sockaddr_in to = lo4(port_of(r));
	for (int i = 0; i < 100; i++)
		CHECK_EQ(sendto(s, buf, sizeof(buf), 0, (struct sockaddr *)&to, sizeof(to)),
			 sizeof(buf));
	int got_n = 0;
	while (recv(r, buf, sizeof(buf), MSG_DONTWAIT) == sizeof(buf))
		got_n++;
	CHECK(got_n > 0);
	CHECK(got_n < 100);
	/* Broadcast needs SO_BROADCAST. */
	to.sin_addr.s_addr = htonl(INADDR_BROADCAST);
	CHECK_ERR(sendto(s, "x", 1, 0, (struct sockaddr *)&to, sizeof(to)), EACCES);
	close(r);
	close(s);
}

static void test_reuse(void)
{
	int a = socket(AF_INET, SOCK_DGRAM, 0), b = socket(AF_INET, SOCK_DGRAM, 0), one = 1;
	struct sockaddr_in addr = lo4(0);

	CHECK_EQ(bind(a, (struct sockaddr *)&addr, sizeof(addr)), 0);
	addr = lo4(port_of(a));
	CHECK_ERR(bind(b, (struct sockaddr *)&addr, sizeof(addr)), EADDRINUSE);
	close(a);
	close(b);
	/* SO_REUSEADDR on both: shared. */
	a = socket(AF_INET, SOCK_DGRAM, 0);
	b = socket(AF_INET, SOCK_DGRAM, 0);
	CHECK_EQ(setsockopt(a, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
	CHECK_EQ(setsockopt(b, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
	addr = lo4(0);
	CHECK_EQ(bind(a, (struct sockaddr *)&addr, sizeof(addr)), 0);
	addr = lo4(port_of(a));
	CHECK_EQ(bind(b, (struct sockaddr *)&addr, sizeof(addr)), 0);
	close(a);
	close(b);
	/* SO_REUSEPORT: a group that shares the datagrams of many senders. */
	int g[2], counts[2] = {0, 0};
	uint16_t port = 0;
	for (int i = 0; i < 2; i++) {
		g[i] = socket(AF_INET, SOCK_DGRAM, 0);
		CHECK_EQ(setsockopt(g[i], SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)), 0);
		addr = lo4(port);
		CHECK_EQ(bind(g[i], (struct sockaddr *)&addr, sizeof(addr)), 0);
		port = port_of(g[i]);
	}
	for (int i = 0; i < 32; i++) {
		int s = socket(AF_INET, SOCK_DGRAM, 0);
		addr = lo4(port);
		CHECK_EQ(sendto(s, "x", 1, 0, (struct sockaddr *)&addr, sizeof(addr)), 1);
		close(s);
	}
	char c;
	for (int i = 0; i < 2; i++)
		while (poll_events(g[i], POLLIN, 50) & POLLIN && recv(g[i], &c, 1, 0) == 1)
			counts[i]++;
	CHECK_EQ(counts[0] + counts[1], 32);
	CHECK(counts[0] > 0);
	CHECK(counts[1] > 0);
	close(g[0]);
	close(g[1]);
}

int main(void)
{
	test_fresh_and_autobind();
	test_connected();
	test_refused();
	test_mmsg();
	test_timeout_and_overflow();
	test_reuse();
	return check_done();
}
