/* AF_UNIX SOCK_DGRAM: message boundaries, MSG_TRUNC and MSG_PEEK, sendto/recvfrom between
 * abstract names with the sender's address, autobind, connect and AF_UNSPEC, EPERM towards a
 * socket associated elsewhere, ECONNREFUSED once the peer is gone, EMSGSIZE, a full buffer,
 * shutdown; and that EPIPE on datagram and seqpacket sockets raises no SIGPIPE. Queued
 * datagrams, names and associations survive a checkpoint and restore. */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "check.h"

static volatile int sigpipes;

static void on_sigpipe(int sig)
{
	(void)sig;
	sigpipes++;
}

static socklen_t abstract_addr(struct sockaddr_un *sun, const char *name)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	int n = snprintf(sun->sun_path + 1, sizeof(sun->sun_path) - 1, "%s.%d", name, getpid());
	return offsetof(struct sockaddr_un, sun_path) + 1 + n;
}

static void test_socketpair_boundaries(void)
{
	int sv[2], avail = -1;
	char buf[32];
	struct iovec iov = {buf, 3};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	CHECK_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
	CHECK_ERR(recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT), EAGAIN);
	CHECK_EQ(send(sv[0], "one", 3, 0), 3);
	CHECK_EQ(send(sv[0], "two!!", 5, 0), 5);
	CHECK_EQ(write(sv[0], "three", 5), 5);
	maybe_save(); /* three datagrams queued, each with its boundary */
	CHECK_EQ(ioctl(sv[1], FIONREAD, &avail), 0);
	CHECK_EQ(avail, 3); /* the next datagram's size */
	CHECK_EQ(recv(sv[1], buf, sizeof(buf), MSG_PEEK), 3);
	CHECK_EQ(recv(sv[1], buf, sizeof(buf), 0), 3);
	CHECK_EQ(memcmp(buf, "one", 3), 0);
	/* Too short a buffer: the rest of the datagram is lost. */
	CHECK_EQ(recvmsg(sv[1], &mh, 0), 3);
	CHECK_EQ(mh.msg_flags, MSG_TRUNC);
	CHECK_EQ(memcmp(buf, "two", 3), 0);
	CHECK_EQ(recv(sv[1], buf, 1, MSG_TRUNC), 5);
	CHECK_ERR(recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT), EAGAIN);
	/* Zero-length datagrams exist. */
	CHECK_EQ(send(sv[1], "", 0, 0), 0);
	CHECK_EQ(recv(sv[0], buf, sizeof(buf), MSG_DONTWAIT), 0);
	CHECK_ERR(recv(sv[0], buf, sizeof(buf), MSG_DONTWAIT), EAGAIN);
	/* A datagram larger than the send buffer never fits. */
	static char big[300000];
	CHECK_ERR(send(sv[0], big, sizeof(big), 0), EMSGSIZE);
	/* Non-blocking senders get EAGAIN once the buffer is full. */
	CHECK_EQ(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
	int sent = 0;
	while (send(sv[0], big, 4096, 0) == 4096)
		sent++;
	CHECK_EQ(errno, EAGAIN);
	CHECK(sent > 0);
	struct pollfd p = {.fd = sv[0], .events = POLLOUT};
	CHECK_EQ(poll(&p, 1, 0), 0);
	while (sent-- > 0)
		CHECK_EQ(recv(sv[1], big, sizeof(big), 0), 4096);
	CHECK_EQ(poll(&p, 1, 0), 1);

	/* shutdown(SHUT_WR) gives EPIPE, and no SIGPIPE for datagrams. */
	signal(SIGPIPE, on_sigpipe);
	CHECK_EQ(shutdown(sv[0], SHUT_WR), 0);
	CHECK_ERR(send(sv[0], "x", 1, 0), EPIPE);
	CHECK_ERR(write(sv[0], "x", 1), EPIPE);
	CHECK_EQ(sigpipes, 0);
	close(sv[0]);
	close(sv[1]);
}

static void test_named(void)
{
	struct sockaddr_un a, b, from;
	socklen_t alen = abstract_addr(&a, "t_unix_dgram.a"),
		  blen = abstract_addr(&b, "t_unix_dgram.b");
	socklen_t flen;
	int sa = socket(AF_UNIX, SOCK_DGRAM, 0), sb = socket(AF_UNIX, SOCK_DGRAM, 0);
	int anon = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	char buf[32];

	CHECK_EQ(bind(sa, (struct sockaddr *)&a, alen), 0);
	CHECK_ERR(sendto(anon, "x", 1, 0, (struct sockaddr *)&b, blen), ECONNREFUSED);
	CHECK_EQ(bind(sb, (struct sockaddr *)&b, blen), 0);
	CHECK_EQ(sendto(sa, "from a", 6, 0, (struct sockaddr *)&b, blen), 6);
	flen = sizeof(from);
	CHECK_EQ(recvfrom(sb, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen), 6);
	CHECK_EQ(flen, alen);
	CHECK_EQ(memcmp(&from, &a, alen), 0);
	/* An unnamed sender has no address to report. */
	CHECK_EQ(sendto(anon, "anon", 4, 0, (struct sockaddr *)&b, blen), 4);
	flen = sizeof(from);
	CHECK_EQ(recvfrom(sb, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen), 4);
	CHECK_EQ(flen, 0);
	/* A short address buffer gets what fits and the full length. */
	CHECK_EQ(sendto(sa, "again", 5, 0, (struct sockaddr *)&b, blen), 5);
	memset(&from, 0, sizeof(from));
	flen = 4;
	CHECK_EQ(recvfrom(sb, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen), 5);
	CHECK_EQ(flen, alen);
	CHECK_EQ(from.sun_path[2], 0);
	CHECK_ERR(recv(sa, buf, sizeof(buf), MSG_DONTWAIT), EAGAIN);

	/* connect: a default destination, and only it may send to us. */
	CHECK_ERR(send(anon, "x", 1, 0), ENOTCONN);
	CHECK_EQ(connect(sb, (struct sockaddr *)&a, alen), 0);
	maybe_save(); /* two abstract names, an association, an unnamed socket */
	CHECK_EQ(send(sb, "hi a", 4, 0), 4);
	CHECK_EQ(recv(sa, buf, sizeof(buf), 0), 4);
	CHECK_ERR(sendto(anon, "x", 1, 0, (struct sockaddr *)&b, blen), EPERM);
	CHECK_EQ(sendto(sa, "ok", 2, 0, (struct sockaddr *)&b, blen), 2);
	CHECK_EQ(recv(sb, buf, sizeof(buf), 0), 2);
	flen = sizeof(from);
	CHECK_EQ(getpeername(sb, (struct sockaddr *)&from, &flen), 0);
	CHECK_EQ(flen, alen);
	/* AF_UNSPEC dissolves the association. */
	struct sockaddr unspec = {.sa_family = AF_UNSPEC};
	CHECK_EQ(connect(sb, &unspec, sizeof(unspec)), 0);
	CHECK_ERR(send(sb, "x", 1, 0), ENOTCONN);
	flen = sizeof(from);
	CHECK_ERR(getpeername(sb, (struct sockaddr *)&from, &flen), ENOTCONN);
	CHECK_EQ(sendto(anon, "now", 3, 0, (struct sockaddr *)&b, blen), 3);
	CHECK_EQ(recv(sb, buf, sizeof(buf), 0), 3);

	/* A gone peer refuses, then the association is dropped. */
	CHECK_EQ(connect(anon, (struct sockaddr *)&a, alen), 0);
	close(sa);
	CHECK_ERR(send(anon, "x", 1, 0), ECONNREFUSED);
	CHECK_ERR(send(anon, "x", 1, 0), ENOTCONN);
	CHECK_ERR(connect(anon, (struct sockaddr *)&a, alen), ECONNREFUSED);
	close(sb);
	close(anon);
}

static void test_autobind(void)
{
	struct sockaddr_un sun;
	socklen_t len = sizeof(sa_family_t);
	int s = socket(AF_UNIX, SOCK_DGRAM, 0);

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	CHECK_EQ(bind(s, (struct sockaddr *)&sun, len), 0);
	len = sizeof(sun);
	CHECK_EQ(getsockname(s, (struct sockaddr *)&sun, &len), 0);
	CHECK_EQ(len, offsetof(struct sockaddr_un, sun_path) + 6);
	CHECK_EQ(sun.sun_path[0], 0);
	CHECK_EQ(strspn(sun.sun_path + 1, "0123456789abcdef"), 5);
	/* The autobound name is reachable. */
	int c = socket(AF_UNIX, SOCK_DGRAM, 0);
	char buf[4];
	CHECK_EQ(sendto(c, "ab", 2, 0, (struct sockaddr *)&sun, len), 2);
	CHECK_EQ(recv(s, buf, sizeof(buf), 0), 2);
	close(c);
	close(s);
}

static void test_seqpacket_no_sigpipe(void)
{
	int sv[2];

	sigpipes = 0;
	signal(SIGPIPE, on_sigpipe);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	close(sv[1]);
	CHECK_ERR(write(sv[0], "x", 1), EPIPE);
	CHECK_ERR(send(sv[0], "x", 1, 0), EPIPE);
	CHECK_EQ(sigpipes, 0);
	close(sv[0]);
}

int main(void)
{
	test_socketpair_boundaries();
	test_named();
	test_autobind();
	test_seqpacket_no_sigpipe();
	return check_done();
}
