/* AF_INET6 over loopback: ::1, the dual stack (a socket on [::] takes IPv4 connections and
 * datagrams, shown as IPv4-mapped addresses), IPV6_V6ONLY (binding beside an IPv4 socket,
 * refusing IPv4, fixed once bound), a socket bound to ::ffff:127.0.0.1, sockaddr_in6 length
 * and family checks, and IPv6 options read back. A dual-stack listener with a queued IPv4
 * connection and a v6 connection with bytes queued survive checkpoint and restore. */
#include <fcntl.h>
#include <netinet/tcp.h>

#include "check.h"
#include "inet.h"

static const struct in6_addr mapped_lo = {
    .s6_addr = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1}};

static void test_names_and_args(void)
{
	int s = socket(AF_INET6, SOCK_STREAM, 0);
	struct sockaddr_in6 a = lo6(0);
	socklen_t len = sizeof(a);

	CHECK_EQ(int_opt(s, SOL_SOCKET, SO_DOMAIN), AF_INET6);
	CHECK_EQ(getsockname(s, (struct sockaddr *)&a, &len), 0);
	CHECK_EQ(len, sizeof(a));
	CHECK_EQ(a.sin6_family, AF_INET6);
	CHECK(IN6_IS_ADDR_UNSPECIFIED(&a.sin6_addr));
	CHECK_EQ(a.sin6_port, 0);
	a = lo6(0);
	CHECK_ERR(bind(s, (struct sockaddr *)&a, 23), EINVAL);
	struct sockaddr_in four = lo4(0);
	CHECK_ERR(bind(s, (struct sockaddr *)&four, sizeof(four)), EINVAL);
	CHECK_ERR(connect(s, (struct sockaddr *)&a, 23), EINVAL);
	/* The RFC 2133 sockaddr_in6 (no scope id) is long enough. */
	CHECK_EQ(bind(s, (struct sockaddr *)&a, 24), 0);
	len = sizeof(a);
	CHECK_EQ(getsockname(s, (struct sockaddr *)&a, &len), 0);
	CHECK(IN6_IS_ADDR_LOOPBACK(&a.sin6_addr));
	CHECK(a.sin6_port != 0);
	int v = 1;
	CHECK_ERR(setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &v, sizeof(v)), EINVAL);
	CHECK_EQ(int_opt(s, IPPROTO_IPV6, IPV6_UNICAST_HOPS), 64);
	v = 7;
	CHECK_EQ(setsockopt(s, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &v, sizeof(v)), 0);
	CHECK_EQ(int_opt(s, IPPROTO_IPV6, IPV6_UNICAST_HOPS), 7);
	v = 256;
	CHECK_ERR(setsockopt(s, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &v, sizeof(v)), EINVAL);
	close(s);
	/* IPv6 options do not exist on an IPv4 socket (ip_getsockopt and ip_setsockopt refuse
	 * the level with different errors). */
	s = socket(AF_INET, SOCK_STREAM, 0);
	CHECK_EQ(int_opt(s, IPPROTO_IPV6, IPV6_V6ONLY), -EOPNOTSUPP - 100000);
	CHECK_ERR(setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &v, sizeof(v)), ENOPROTOOPT);
	close(s);
}

static void test_v6_connection(void)
{
	int l = socket(AF_INET6, SOCK_STREAM, 0), c = socket(AF_INET6, SOCK_STREAM, 0);
	struct sockaddr_in6 a = lo6(0), b;
	socklen_t len;
	char buf[16];

	CHECK_EQ(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	CHECK_EQ(listen(l, 4), 0);
	a = lo6(port_of(l));
	CHECK_EQ(connect(c, (struct sockaddr *)&a, sizeof(a)), 0);
	len = sizeof(b);
	int s = accept(l, (struct sockaddr *)&b, &len);
	CHECK(s >= 0);
	CHECK_EQ(len, sizeof(b));
	CHECK(IN6_IS_ADDR_LOOPBACK(&b.sin6_addr));
	CHECK_EQ(ntohs(b.sin6_port), port_of(c));
	CHECK_EQ(write(c, "six", 3), 3);
	maybe_save(); /* an IPv6 connection with bytes queued */
	CHECK_EQ(poll_events(s, POLLIN, 1000), POLLIN);
	CHECK_EQ(read(s, buf, sizeof(buf)), 3);
	/* An IPv4 socket cannot connect to an IPv6 address, nor [::1] to IPv4 as v6only. */
	close(s);
	close(c);
	close(l);
}

static void test_dual_stack(void)
{
	int l = socket(AF_INET6, SOCK_STREAM, 0), v4;
	struct sockaddr_in6 any6 = {.sin6_family = AF_INET6}, b;
	socklen_t len;

	CHECK_EQ(int_opt(l, IPPROTO_IPV6, IPV6_V6ONLY), 0);
	CHECK_EQ(bind(l, (struct sockaddr *)&any6, sizeof(any6)), 0);
	uint16_t port = port_of(l);
	CHECK_EQ(listen(l, 4), 0);
	/* The IPv4 wildcard on the same port is taken by the dual-stack socket. */
	v4 = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a4 = lo4(port);
	a4.sin_addr.s_addr = htonl(INADDR_ANY);
	CHECK_ERR(bind(v4, (struct sockaddr *)&a4, sizeof(a4)), EADDRINUSE);
	close(v4);
	/* An IPv4 client reaches it; it sees the client as an IPv4-mapped address. */
	int c = tcp_client(port);
	CHECK(c >= 0);
	maybe_save(); /* a dual-stack listener with an IPv4 connection queued */
	len = sizeof(b);
	int s = accept(l, (struct sockaddr *)&b, &len);
	CHECK(s >= 0);
	CHECK_EQ(len, sizeof(b));
	CHECK_EQ(b.sin6_family, AF_INET6);
	CHECK(IN6_ARE_ADDR_EQUAL(&b.sin6_addr, &mapped_lo));
	CHECK_EQ(ntohs(b.sin6_port), port_of(c));
	len = sizeof(b);
	CHECK_EQ(getsockname(s, (struct sockaddr *)&b, &len), 0);
	CHECK(IN6_ARE_ADDR_EQUAL(&b.sin6_addr, &mapped_lo));
	CHECK_EQ(write(s, "v4", 2), 2);
	char buf[4];
	CHECK_EQ(poll_events(c, POLLIN, 1000), POLLIN);
	CHECK_EQ(read(c, buf, sizeof(buf)), 2);
	close(s);
	close(c);
	close(l);

	/* V6ONLY: the IPv4 port is free, and IPv4 clients are not taken. */
	l = socket(AF_INET6, SOCK_STREAM, 0);
	int one = 1;
	CHECK_EQ(setsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)), 0);
	CHECK_EQ(bind(l, (struct sockaddr *)&any6, sizeof(any6)), 0);
	CHECK_EQ(listen(l, 4), 0);
	port = port_of(l);
	c = socket(AF_INET, SOCK_STREAM, 0);
	a4 = lo4(port);
	CHECK_ERR(connect(c, (struct sockaddr *)&a4, sizeof(a4)), ECONNREFUSED);
	close(c);
	v4 = socket(AF_INET, SOCK_STREAM, 0);
	CHECK_EQ(bind(v4, (struct sockaddr *)&a4, sizeof(a4)), 0);
	close(v4);
	/* A v6only socket cannot reach an IPv4-mapped address. */
	c = socket(AF_INET6, SOCK_STREAM, 0);
	CHECK_EQ(setsockopt(c, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)), 0);
	struct sockaddr_in6 m = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
	m.sin6_addr = mapped_lo;
	CHECK_ERR(connect(c, (struct sockaddr *)&m, sizeof(m)), ENETUNREACH);
	close(c);
	close(l);

	/* A socket bound to ::ffff:127.0.0.1 is an IPv4 socket in disguise. */
	l = socket(AF_INET6, SOCK_STREAM, 0);
	m.sin6_port = 0;
	CHECK_EQ(bind(l, (struct sockaddr *)&m, sizeof(m)), 0);
	CHECK_EQ(listen(l, 4), 0);
	c = tcp_client(port_of(l));
	CHECK(c >= 0);
	s = accept(l, NULL, NULL);
	CHECK(s >= 0);
	close(s);
	close(c);
	c = socket(AF_INET6, SOCK_STREAM, 0);
	struct sockaddr_in6 a6 = lo6(port_of(l));
	CHECK_ERR(connect(c, (struct sockaddr *)&a6, sizeof(a6)), ECONNREFUSED);
	close(c);
	close(l);
}

static void test_udp6(void)
{
	int r = socket(AF_INET6, SOCK_DGRAM, 0), s4 = socket(AF_INET, SOCK_DGRAM, 0);
	int s6 = socket(AF_INET6, SOCK_DGRAM, 0);
	struct sockaddr_in6 any6 = {.sin6_family = AF_INET6}, from;
	socklen_t len;
	char buf[8];

	CHECK_EQ(bind(r, (struct sockaddr *)&any6, sizeof(any6)), 0);
	struct sockaddr_in to4 = lo4(port_of(r));
	struct sockaddr_in6 to6 = lo6(port_of(r));
	CHECK_EQ(sendto(s4, "four", 4, 0, (struct sockaddr *)&to4, sizeof(to4)), 4);
	CHECK_EQ(sendto(s6, "six", 3, 0, (struct sockaddr *)&to6, sizeof(to6)), 3);
	CHECK_EQ(poll_events(r, POLLIN, 1000), POLLIN);
	usleep(10000);
	len = sizeof(from);
	CHECK_EQ(recvfrom(r, buf, sizeof(buf), 0, (struct sockaddr *)&from, &len), 4);
	CHECK_EQ(len, sizeof(from));
	CHECK(IN6_ARE_ADDR_EQUAL(&from.sin6_addr, &mapped_lo));
	CHECK_EQ(ntohs(from.sin6_port), port_of(s4));
	len = sizeof(from);
	CHECK_EQ(recvfrom(r, buf, sizeof(buf), 0, (struct sockaddr *)&from, &len), 3);
	CHECK(IN6_IS_ADDR_LOOPBACK(&from.sin6_addr));
	CHECK_EQ(ntohs(from.sin6_port), port_of(s6));
	close(r);
	close(s4);
	close(s6);
}

int main(void)
{
	test_names_and_args();
	test_v6_connection();
	test_dual_stack();
	test_udp6();
	return check_done();
}
