/* Unit tests for the loopback network's endpoints (vfs/inet.c) through their socket
 * operations: the port table's conflict rules and ephemeral ranges, a connection made in the
 * listener's queue and the wake-ups that end a wait, the backlog holding a connect back until
 * accept, stream capacity and EAGAIN, resets and EOF, UDP delivery to the best-matching
 * socket, and what /proc/net is told. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "vfs/vfs.h"
#include "vfs/waitq.h"

static const struct vfs_unix_cred OWNER = {42, 1000, 100};

static struct vfs_file *sock(int family, int type)
{
	struct vfs_file *f;

	assert_int_equal(vfs_inet_socket_new(family, type, 0, O_NONBLOCK, &OWNER, &f), 0);
	return f;
}

static const struct vfs_sock_ops *ops(struct vfs_file *f)
{
	return vfs_sock_ops(f);
}

static struct sockaddr_in lo4(uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static uint16_t port_of(struct vfs_file *f)
{
	struct sockaddr_in6 a;
	unsigned int len;

	assert_int_equal(ops(f)->getname(f, 0, &a, &len), 0);
	return ntohs(a.sin6_port);
}

static int bind4(struct vfs_file *f, const char *addr, uint16_t port)
{
	struct sockaddr_in a = lo4(port);

	a.sin_addr.s_addr = inet_addr(addr);
	return ops(f)->bind(f, &a, sizeof(a));
}

static int setint(struct vfs_file *f, int level, int name, int v)
{
	return ops(f)->setsockopt(f, level, name, &v, sizeof(v));
}

static ssize_t send_str(struct vfs_file *f, const char *s, size_t len)
{
	struct iovec iov = {(void *)s, len};
	struct vfs_sock_msg m = {.iov = &iov, .iovcnt = 1};

	return ops(f)->sendmsg(f, &m);
}

static ssize_t recv_buf(struct vfs_file *f, char *buf, size_t len)
{
	struct iovec iov = {buf, len};
	struct vfs_sock_msg m = {.iov = &iov, .iovcnt = 1};

	return ops(f)->recvmsg(f, &m);
}

static uint32_t ready(struct vfs_file *f)
{
	struct waitq *wq;

	return f->ops->poll(f, &wq);
}

struct wake_count {
	struct waiter w; /* first: the callback casts back */
	int calls;
};

static void count_wake(struct waiter *w, uint32_t events)
{
	(void)events;
	((struct wake_count *)w)->calls++;
}

static void test_bind_conflicts_follow_linux_rules(void **state)
{
	(void)state;
	struct vfs_file *a = sock(AF_INET, SOCK_STREAM), *b = sock(AF_INET, SOCK_STREAM);
	struct vfs_file *c = sock(AF_INET6, SOCK_STREAM);

	assert_int_equal(bind4(a, "127.0.0.1", 0), 0);
	uint16_t p = port_of(a);
	assert_true(p >= 32768 && p <= 60999);
	assert_int_equal(bind4(b, "0.0.0.0", p), -EADDRINUSE);
	assert_int_equal(bind4(b, "127.0.0.2", p), 0);
	/* A dual-stack wildcard overlaps both. */
	struct sockaddr_in6 any6 = {.sin6_family = AF_INET6, .sin6_port = htons(p)};
	assert_int_equal(ops(c)->bind(c, &any6, sizeof(any6)), -EADDRINUSE);
	assert_int_equal(bind4(a, "127.0.0.1", 0), -EINVAL);
	assert_int_equal(bind4(b, "127.0.0.3", 0), -EINVAL);
	struct vfs_file *d = sock(AF_INET, SOCK_STREAM);
	assert_int_equal(bind4(d, "192.0.2.1", 0), -EADDRNOTAVAIL);
	vfs_file_put(a);
	vfs_file_put(b);
	/* Closed: the port is free. */
	assert_int_equal(ops(c)->bind(c, &any6, sizeof(any6)), 0);
	vfs_file_put(c);
	vfs_file_put(d);
}

static void test_ephemeral_ports_come_from_the_range(void **state)
{
	(void)state;
	int lo, hi;

	vfs_inet_port_range(&lo, &hi);
	assert_int_equal(vfs_inet_set_port_range(5, 1), -EINVAL);
	assert_int_equal(vfs_inet_set_port_range(40000, 40002), 0);
	struct vfs_file *s[3];
	for (int i = 0; i < 3; i++) {
		s[i] = sock(AF_INET, SOCK_DGRAM);
		assert_int_equal(bind4(s[i], "127.0.0.1", 0), i < 3 ? 0 : -EADDRINUSE);
		assert_true(port_of(s[i]) >= 40000 && port_of(s[i]) <= 40002);
	}
	struct vfs_file *x = sock(AF_INET, SOCK_DGRAM);
	assert_int_equal(bind4(x, "127.0.0.1", 0), -EADDRINUSE);
	for (int i = 0; i < 3; i++)
		vfs_file_put(s[i]);
	vfs_file_put(x);
	assert_int_equal(vfs_inet_set_port_range(lo, hi), 0);
}

static void test_connect_queues_a_server_end_and_wakes_the_listener(void **state)
{
	(void)state;
	struct vfs_file *l = sock(AF_INET, SOCK_STREAM), *c = sock(AF_INET, SOCK_STREAM), *s;
	struct wake_count wc = {0};
	struct waitq *wq;
	char buf[16];

	assert_int_equal(bind4(l, "127.0.0.1", 0), 0);
	assert_int_equal(ops(l)->listen(l, 4), 0);
	assert_int_equal(ops(l)->accept(l, 0, &s), -EAGAIN);
	l->ops->poll(l, &wq);
	waitq_add(wq, &wc.w, count_wake, POLLIN);
	struct sockaddr_in a = lo4(port_of(l));
	/* A non-blocking connect reports EINPROGRESS, then its success once. */
	assert_int_equal(ops(c)->connect(c, &a, sizeof(a)), -EINPROGRESS);
	assert_int_equal(wc.calls, 1);
	waitq_remove(&wc.w);
	assert_int_equal(ops(c)->connect(c, &a, sizeof(a)), 0);
	assert_int_equal(ops(c)->connect(c, &a, sizeof(a)), -EISCONN);
	assert_int_equal(ready(l), POLLIN | POLLRDNORM);
	assert_int_equal(ops(l)->accept(l, 0, &s), 0);
	assert_int_equal(send_str(c, "hi", 2), 2);
	assert_int_equal(recv_buf(s, buf, sizeof(buf)), 2);
	assert_int_equal(recv_buf(s, buf, sizeof(buf)), -EAGAIN);
	/* The end of the stream, then EOF. */
	vfs_file_put(c);
	assert_true(ready(s) & POLLRDHUP);
	assert_int_equal(recv_buf(s, buf, sizeof(buf)), 0);
	vfs_file_put(s);
	vfs_file_put(l);
}

static void test_full_backlog_holds_the_connect_until_accept(void **state)
{
	(void)state;
	struct vfs_file *l = sock(AF_INET, SOCK_STREAM), *c[3], *s;

	assert_int_equal(bind4(l, "127.0.0.1", 0), 0);
	assert_int_equal(ops(l)->listen(l, 1), 0);
	struct sockaddr_in a = lo4(port_of(l));
	for (int i = 0; i < 3; i++) {
		c[i] = sock(AF_INET, SOCK_STREAM);
		assert_int_equal(ops(c[i])->connect(c[i], &a, sizeof(a)), -EINPROGRESS);
	}
	assert_int_equal(ops(c[2])->connect(c[2], &a, sizeof(a)), -EALREADY);
	assert_false(ready(c[2]) & POLLOUT);
	assert_int_equal(ops(l)->accept(l, 0, &s), 0);
	assert_true(ready(c[2]) & POLLOUT);
	assert_int_equal(ops(c[2])->connect(c[2], &a, sizeof(a)), 0);
	/* The accepted one closes: its client sees the end of the stream. Closing the listener
	 * resets what it never accepted. */
	vfs_file_put(s);
	vfs_file_put(l);
	char buf[4];
	assert_int_equal(recv_buf(c[0], buf, sizeof(buf)), 0);
	assert_int_equal(recv_buf(c[1], buf, sizeof(buf)), -ECONNRESET);
	assert_int_equal(recv_buf(c[1], buf, sizeof(buf)), 0);
	for (int i = 0; i < 3; i++)
		vfs_file_put(c[i]);
}

static void test_stream_capacity_is_both_buffers(void **state)
{
	(void)state;
	struct vfs_file *l = sock(AF_INET, SOCK_STREAM), *c = sock(AF_INET, SOCK_STREAM), *s;
	static char chunk[1 << 20];

	assert_int_equal(bind4(l, "127.0.0.1", 0), 0);
	assert_int_equal(ops(l)->listen(l, 1), 0);
	struct sockaddr_in a = lo4(port_of(l));
	assert_int_equal(ops(c)->connect(c, &a, sizeof(a)), -EINPROGRESS);
	assert_int_equal(ops(l)->accept(l, 0, &s), 0);
	assert_int_equal(setint(c, SOL_SOCKET, SO_SNDBUF, 5000), 0);
	assert_int_equal(setint(s, SOL_SOCKET, SO_RCVBUF, 5000), 0);
	assert_int_equal(send_str(c, chunk, sizeof(chunk)), 20000);
	assert_int_equal(send_str(c, chunk, 1), -EAGAIN);
	assert_false(ready(c) & POLLOUT);
	struct wake_count wc = {0};
	struct waitq *wq;
	c->ops->poll(c, &wq);
	waitq_add(wq, &wc.w, count_wake, POLLOUT);
	assert_int_equal(recv_buf(s, chunk, 15000), 15000);
	assert_true(wc.calls >= 1);
	waitq_remove(&wc.w);
	assert_true(ready(c) & POLLOUT);
	vfs_file_put(l);
	/* Closed with 5000 bytes unread: the peer is reset. */
	vfs_file_put(s);
	assert_int_equal(send_str(c, "x", 1), -ECONNRESET);
	assert_int_equal(send_str(c, "x", 1), -EPIPE);
	vfs_file_put(c);
}

static void test_udp_goes_to_the_best_match_and_reports_refusal(void **state)
{
	(void)state;
	struct vfs_file *wild = sock(AF_INET, SOCK_DGRAM), *exact = sock(AF_INET, SOCK_DGRAM);
	struct vfs_file *s = sock(AF_INET, SOCK_DGRAM);
	char buf[8];

	assert_int_equal(setint(wild, SOL_SOCKET, SO_REUSEADDR, 1), 0);
	assert_int_equal(setint(exact, SOL_SOCKET, SO_REUSEADDR, 1), 0);
	assert_int_equal(bind4(wild, "0.0.0.0", 0), 0);
	assert_int_equal(bind4(exact, "127.0.0.1", port_of(wild)), 0);
	struct sockaddr_in to = lo4(port_of(wild));
	struct iovec iov = {"dgram", 5};
	struct vfs_sock_msg m = {.iov = &iov, .iovcnt = 1, .name = &to, .namelen = sizeof(to)};
	assert_int_equal(ops(s)->sendmsg(s, &m), 5);
	assert_int_equal(recv_buf(wild, buf, sizeof(buf)), -EAGAIN);
	assert_int_equal(recv_buf(exact, buf, sizeof(buf)), 5);
	vfs_file_put(wild);
	vfs_file_put(exact);
	/* Now nobody: a connected sender learns it. */
	assert_int_equal(ops(s)->connect(s, &to, sizeof(to)), 0);
	assert_int_equal(send_str(s, "x", 1), 1);
	assert_true(ready(s) & POLLERR);
	assert_int_equal(recv_buf(s, buf, sizeof(buf)), -ECONNREFUSED);
	vfs_file_put(s);
}

struct seen {
	int listeners, udp;
	uint16_t port;
};

static int count_row(const struct vfs_inet_info *i, void *arg)
{
	struct seen *s = arg;

	if (i->lport != s->port)
		return 0;
	if (i->protocol == IPPROTO_TCP && i->state == 10)
		s->listeners++;
	if (i->protocol == IPPROTO_UDP)
		s->udp++;
	return 0;
}

static void test_foreach_lists_listeners_and_bound_udp(void **state)
{
	(void)state;
	struct vfs_file *l = sock(AF_INET6, SOCK_STREAM), *u = sock(AF_INET, SOCK_DGRAM);
	struct vfs_file *idle = sock(AF_INET, SOCK_STREAM);
	struct sockaddr_in6 any6 = {.sin6_family = AF_INET6};
	struct seen seen = {0};

	assert_int_equal(ops(l)->bind(l, &any6, sizeof(any6)), 0);
	assert_int_equal(ops(l)->listen(l, 3), 0);
	seen.port = port_of(l);
	assert_int_equal(bind4(u, "127.0.0.1", seen.port), 0);
	assert_int_equal(bind4(idle, "127.0.0.5", seen.port), -EADDRINUSE);
	assert_int_equal(vfs_inet_foreach(IPPROTO_TCP, count_row, &seen), 0);
	assert_int_equal(vfs_inet_foreach(IPPROTO_UDP, count_row, &seen), 0);
	assert_int_equal(seen.listeners, 1);
	assert_int_equal(seen.udp, 1);
	vfs_file_put(l);
	vfs_file_put(u);
	vfs_file_put(idle);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bind_conflicts_follow_linux_rules),
	    cmocka_unit_test(test_ephemeral_ports_come_from_the_range),
	    cmocka_unit_test(test_connect_queues_a_server_end_and_wakes_the_listener),
	    cmocka_unit_test(test_full_backlog_holds_the_connect_until_accept),
	    cmocka_unit_test(test_stream_capacity_is_both_buffers),
	    cmocka_unit_test(test_udp_goes_to_the_best_match_and_reports_refusal),
	    cmocka_unit_test(test_foreach_lists_listeners_and_bound_udp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
