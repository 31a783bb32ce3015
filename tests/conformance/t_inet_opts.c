/* Options and timeouts of loopback sockets: SOL_SOCKET flags, buffer sizes as Linux stores
 * them, SO_LINGER, SO_RCVTIMEO/SO_SNDTIMEO read back and applied to recv, accept and send,
 * SO_RCVLOWAT's effect on readiness, TCP_NODELAY/TCP_CORK/keepalive options with their
 * ranges, TCP_MAXSEG, TCP_CONGESTION, TCP_INFO's state through a connection's life (and a
 * listener's queue), IP_TTL/IP_TOS, unknown options and levels, SIOCOUTQ, and SO_REUSEPORT
 * spreading connections over a group of listeners. Options set on sockets survive
 * checkpoint and restore. */
#include <fcntl.h>
#include <net/if.h>
#include <signal.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/time.h>

#include "check.h"
#include "inet.h"

#ifndef SIOCINQ
#define SIOCINQ FIONREAD
#endif
#ifndef SIOCOUTQ
#define SIOCOUTQ TIOCOUTQ
#endif

static void on_alarm(int sig)
{
	(void)sig;
}

static int set_int(int fd, int level, int name, int v)
{
	return setsockopt(fd, level, name, &v, sizeof(v));
}

static struct tcp_info info_of(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(&ti, 0xff, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		ti.tcpi_state = 0xff;
	return ti;
}

static void test_socket_level(void)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct linger lg = {1, 5}, lg2;
	socklen_t len = sizeof(lg2);

	for (int name = SO_REUSEADDR; name <= SO_KEEPALIVE; name++) {
		if (name != SO_REUSEADDR && name != SO_KEEPALIVE)
			continue;
		CHECK_EQ(int_opt(s, SOL_SOCKET, name), 0);
		CHECK_EQ(set_int(s, SOL_SOCKET, name, 7), 0);
		CHECK_EQ(int_opt(s, SOL_SOCKET, name), 1);
	}
	CHECK_EQ(set_int(s, SOL_SOCKET, SO_REUSEPORT, 1), 0);
	CHECK_EQ(int_opt(s, SOL_SOCKET, SO_REUSEPORT), 1);
	CHECK_EQ(set_int(s, SOL_SOCKET, SO_SNDBUF, 10000), 0);
	CHECK_EQ(int_opt(s, SOL_SOCKET, SO_SNDBUF), 20000);
	CHECK_EQ(set_int(s, SOL_SOCKET, SO_SNDBUF, 1), 0);
	CHECK_EQ(int_opt(s, SOL_SOCKET, SO_SNDBUF), 4608);
	CHECK_EQ(set_int(s, SOL_SOCKET, SO_RCVBUF, 1), 0);
	CHECK_EQ(int_opt(s, SOL_SOCKET, SO_RCVBUF), 2304);
	CHECK_EQ(set_int(s, SOL_SOCKET, SO_RCVBUF, 1 << 30), 0);
	CHECK(int_opt(s, SOL_SOCKET, SO_RCVBUF) < (1 << 30)); /* capped by net.core.rmem_max */
	CHECK_EQ(setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
	CHECK_EQ(getsockopt(s, SOL_SOCKET, SO_LINGER, &lg2, &len), 0);
	CHECK_EQ(len, sizeof(lg2));
	CHECK_EQ(lg2.l_onoff, 1);
	CHECK_EQ(lg2.l_linger, 5);
	CHECK_ERR(setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, 4), EINVAL);
	char dev[IFNAMSIZ] = "";
	len = sizeof(dev);
	CHECK_EQ(getsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, dev, &len), 0);
	CHECK_EQ(len, 0);
	CHECK_EQ(setsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, "lo", 3), 0);
	len = sizeof(dev);
	CHECK_EQ(getsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, dev, &len), 0);
	CHECK_EQ(len, 3);
	CHECK_STREQ(dev, "lo");
	CHECK_ERR(setsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, "nosuch0", 8), ENODEV);
	CHECK_EQ(setsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, "", 1), 0);
	CHECK_ERR(set_int(s, SOL_SOCKET, 9999, 1), ENOPROTOOPT);
	CHECK_EQ(int_opt(s, SOL_SOCKET, 9999), -ENOPROTOOPT - 100000);
	CHECK_ERR(set_int(s, 12345, 1, 1), ENOPROTOOPT);
	CHECK_ERR(set_int(s, SOL_SOCKET, SO_KEEPALIVE, 1) +
		      setsockopt(s, SOL_SOCKET, SO_KEEPALIVE, &lg, 2),
		  EINVAL);
	struct timeval tv = {1, 500000}, got;
	CHECK_EQ(setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)), 0);
	len = sizeof(got);
	CHECK_EQ(getsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &got, &len), 0);
	CHECK_EQ(got.tv_sec, 1);
	CHECK_EQ(got.tv_usec, 500000);
	CHECK_ERR(setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv) - 1), EINVAL);
	maybe_save(); /* options set on a socket */
	CHECK_EQ(int_opt(s, SOL_SOCKET, SO_KEEPALIVE), 1);
	CHECK_EQ(int_opt(s, SOL_SOCKET, SO_SNDBUF), 4608);
	len = sizeof(got);
	CHECK_EQ(getsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &got, &len), 0);
	CHECK_EQ(got.tv_usec, 500000);
	close(s);
}

static void test_ip_and_tcp_level(void)
{
	int s = socket(AF_INET, SOCK_STREAM, 0), u = socket(AF_INET, SOCK_DGRAM, 0);
	char cc[16];
	socklen_t len;

	CHECK_EQ(int_opt(s, IPPROTO_IP, IP_TTL), 64);
	CHECK_EQ(set_int(s, IPPROTO_IP, IP_TTL, 5), 0);
	CHECK_EQ(int_opt(s, IPPROTO_IP, IP_TTL), 5);
	CHECK_EQ(set_int(s, IPPROTO_IP, IP_TTL, -1), 0);
	CHECK_EQ(int_opt(s, IPPROTO_IP, IP_TTL), 64);
	CHECK_ERR(set_int(s, IPPROTO_IP, IP_TTL, 0), EINVAL);
	CHECK_ERR(set_int(s, IPPROTO_IP, IP_TTL, 256), EINVAL);
	CHECK_EQ(set_int(s, IPPROTO_IP, IP_TOS, 0x10), 0);
	CHECK_EQ(int_opt(s, IPPROTO_IP, IP_TOS), 0x10);
	CHECK_EQ(int_opt(s, IPPROTO_IP, IP_MTU), -ENOTCONN - 100000);

	CHECK_EQ(int_opt(s, IPPROTO_TCP, TCP_NODELAY), 0);
	CHECK_EQ(set_int(s, IPPROTO_TCP, TCP_NODELAY, 5), 0);
	CHECK_EQ(int_opt(s, IPPROTO_TCP, TCP_NODELAY), 1);
	CHECK_EQ(set_int(s, IPPROTO_TCP, TCP_CORK, 1), 0);
	CHECK_EQ(int_opt(s, IPPROTO_TCP, TCP_CORK), 1);
	CHECK_EQ(int_opt(s, IPPROTO_TCP, TCP_KEEPIDLE), 7200);
	CHECK_EQ(int_opt(s, IPPROTO_TCP, TCP_KEEPINTVL), 75);
	CHECK_EQ(int_opt(s, IPPROTO_TCP, TCP_KEEPCNT), 9);
	CHECK_EQ(set_int(s, IPPROTO_TCP, TCP_KEEPIDLE, 30), 0);
	CHECK_EQ(set_int(s, IPPROTO_TCP, TCP_KEEPINTVL, 5), 0);
	CHECK_EQ(set_int(s, IPPROTO_TCP, TCP_KEEPCNT, 3), 0);
	CHECK_EQ(int_opt(s, IPPROTO_TCP, TCP_KEEPIDLE), 30);
	CHECK_EQ(int_opt(s, IPPROTO_TCP, TCP_KEEPINTVL), 5);
	CHECK_EQ(int_opt(s, IPPROTO_TCP, TCP_KEEPCNT), 3);
	CHECK_ERR(set_int(s, IPPROTO_TCP, TCP_KEEPIDLE, 0), EINVAL);
	CHECK_ERR(set_int(s, IPPROTO_TCP, TCP_KEEPIDLE, 32768), EINVAL);
	CHECK_ERR(set_int(s, IPPROTO_TCP, TCP_KEEPCNT, 128), EINVAL);
	CHECK_EQ(int_opt(s, IPPROTO_TCP, TCP_MAXSEG), 536);
	CHECK_ERR(set_int(s, IPPROTO_TCP, TCP_MAXSEG, 10), EINVAL);
	CHECK_EQ(set_int(s, IPPROTO_TCP, TCP_MAXSEG, 1000), 0);
	CHECK_EQ(int_opt(s, IPPROTO_TCP, TCP_MAXSEG), 1000);
	CHECK_ERR(setsockopt(s, IPPROTO_TCP, TCP_CONGESTION, "no-such-cc", 10), ENOENT);
	CHECK_EQ(setsockopt(s, IPPROTO_TCP, TCP_CONGESTION, "reno", 4), 0);
	len = sizeof(cc);
	CHECK_EQ(getsockopt(s, IPPROTO_TCP, TCP_CONGESTION, cc, &len), 0);
	CHECK_STREQ(cc, "reno");
	CHECK_ERR(set_int(s, IPPROTO_TCP, 9999, 1), ENOPROTOOPT);
	/* TCP options do not exist on UDP. */
	CHECK_ERR(set_int(u, IPPROTO_TCP, TCP_NODELAY, 1), ENOPROTOOPT);
	CHECK_EQ(int_opt(u, IPPROTO_TCP, TCP_NODELAY), -EOPNOTSUPP - 100000);
	maybe_save(); /* IP and TCP options set */
	CHECK_EQ(int_opt(s, IPPROTO_TCP, TCP_KEEPIDLE), 30);
	CHECK_EQ(int_opt(s, IPPROTO_TCP, TCP_CORK), 1);
	CHECK_EQ(int_opt(s, IPPROTO_IP, IP_TOS), 0x10);
	close(s);
	close(u);
}

static void test_tcp_info_and_queues(void)
{
	int l = tcp_listener(3), c, s;

	CHECK_EQ(info_of(l).tcpi_state, TCP_LISTEN);
	c = tcp_client(port_of(l));
	CHECK(c >= 0);
	CHECK_EQ(poll_events(l, POLLIN, 1000), POLLIN);
	struct tcp_info ti = info_of(l);
	CHECK_EQ(ti.tcpi_unacked, 1); /* the accept queue */
	CHECK_EQ(ti.tcpi_sacked, 3);  /* the backlog */
	s = accept(l, NULL, NULL);
	CHECK(s >= 0);
	CHECK_EQ(info_of(c).tcpi_state, TCP_ESTABLISHED);
	CHECK_EQ(info_of(s).tcpi_state, TCP_ESTABLISHED);
	CHECK(int_opt(c, IPPROTO_TCP, TCP_MAXSEG) > 536);
	CHECK(int_opt(c, IPPROTO_IP, IP_MTU) >= 1500);
	CHECK_EQ(write(c, "12345678", 8), 8);
	CHECK_EQ(poll_events(s, POLLIN, 1000), POLLIN);
	int q = -1;
	CHECK_EQ(ioctl(c, SIOCOUTQ, &q), 0);
	CHECK_EQ(q, 0);
	CHECK_EQ(ioctl(s, SIOCINQ, &q), 0);
	CHECK_EQ(q, 8);
	CHECK_EQ(shutdown(c, SHUT_WR), 0);
	CHECK_EQ(poll_events(s, POLLRDHUP, 1000), POLLRDHUP);
	usleep(100000); /* Linux acknowledges the FIN after its delayed-ACK time */
	CHECK_EQ(info_of(c).tcpi_state, TCP_FIN_WAIT2);
	CHECK_EQ(info_of(s).tcpi_state, TCP_CLOSE_WAIT);
	maybe_save(); /* a half-closed connection in FIN_WAIT2 / CLOSE_WAIT */
	CHECK_EQ(info_of(s).tcpi_state, TCP_CLOSE_WAIT);
	CHECK_EQ(shutdown(s, SHUT_WR), 0);
	CHECK_EQ(poll_events(c, POLLRDHUP, 1000) & POLLRDHUP, POLLRDHUP);
	usleep(100000);
	CHECK_EQ(info_of(c).tcpi_state, TCP_CLOSE);
	CHECK_EQ(info_of(s).tcpi_state, TCP_CLOSE);
	close(c);
	close(s);
	close(l);
}

static void test_timeouts_and_lowat(void)
{
	int l = tcp_listener(2), c, s, one = 1;
	struct timeval tv = {0, 200000};
	struct timespec t0, t1;
	char buf[16];

	CHECK_EQ(setsockopt(l, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_ERR(accept(l, NULL, NULL), EAGAIN);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(ms_between(&t0, &t1) >= 180 && ms_between(&t0, &t1) < 2000);
	c = tcp_client(port_of(l));
	s = accept(l, NULL, NULL);
	CHECK(c >= 0 && s >= 0);
	/* The accepted socket has its listener's options. */
	CHECK_EQ(setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_ERR(read(s, buf, sizeof(buf)), EAGAIN);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(ms_between(&t0, &t1) >= 180 && ms_between(&t0, &t1) < 2000);
	/* A signal ends a wait with a timeout with EINTR, even with SA_RESTART. */
	struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
	struct itimerval it = {.it_value = {0, 50000}};
	tv.tv_sec = 5;
	CHECK_EQ(setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	CHECK_EQ(sigaction(SIGALRM, &sa, NULL), 0);
	CHECK_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_ERR(read(s, buf, sizeof(buf)), EINTR);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(ms_between(&t0, &t1) < 2000);
	signal(SIGALRM, SIG_DFL);
	tv.tv_sec = 0;
	/* SO_RCVLOWAT: readable once that much is queued. */
	CHECK_EQ(set_int(s, SOL_SOCKET, SO_RCVLOWAT, 10), 0);
	CHECK_EQ(int_opt(s, SOL_SOCKET, SO_RCVLOWAT), 10);
	CHECK_EQ(write(c, "12345", 5), 5);
	CHECK_EQ(poll_events(s, POLLIN, 200), 0);
	CHECK_EQ(write(c, "67890", 5), 5);
	CHECK_EQ(poll_events(s, POLLIN, 1000), POLLIN);
	CHECK_EQ(read(s, buf, sizeof(buf)), 10);
	/* SO_SNDTIMEO: a blocking write to a full connection gives up with what it wrote. */
	CHECK_EQ(setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)), 0);
	static char chunk[1 << 20];
	CHECK_EQ(ioctl(c, FIONBIO, &one), 0);
	while (write(c, chunk, sizeof(chunk)) > 0)
		;
	one = 0;
	CHECK_EQ(ioctl(c, FIONBIO, &one), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_ERR(write(c, chunk, sizeof(chunk)), EAGAIN);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(ms_between(&t0, &t1) >= 180 && ms_between(&t0, &t1) < 2000);
	close(c);
	close(s);
	close(l);
}

static void test_reuseport_spreads(void)
{
	int l[2], one = 1, counts[2] = {0, 0};
	uint16_t port = 0;

	for (int i = 0; i < 2; i++) {
		struct sockaddr_in a = lo4(port);
		l[i] = socket(AF_INET, SOCK_STREAM, 0);
		CHECK_EQ(setsockopt(l[i], SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)), 0);
		CHECK_EQ(bind(l[i], (struct sockaddr *)&a, sizeof(a)), 0);
		CHECK_EQ(listen(l[i], 64), 0);
		port = port_of(l[i]);
	}
	int c[32];
	for (int i = 0; i < 32; i++)
		c[i] = tcp_client(port);
	for (int i = 0; i < 2; i++) {
		CHECK_EQ(fcntl(l[i], F_SETFL, O_NONBLOCK), 0);
		int s;
		while ((s = accept(l[i], NULL, NULL)) >= 0) {
			counts[i]++;
			close(s);
		}
	}
	CHECK_EQ(counts[0] + counts[1], 32);
	CHECK(counts[0] > 0);
	CHECK(counts[1] > 0);
	for (int i = 0; i < 32; i++)
		close(c[i]);
	close(l[0]);
	close(l[1]);
}

int main(void)
{
	test_socket_level();
	test_ip_and_tcp_level();
	test_tcp_info_and_queues();
	test_timeouts_and_lowat();
	test_reuseport_spreads();
	return check_done();
}
