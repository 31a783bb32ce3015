/* Unit tests for Unix domain socket objects (vfs/unix.c): stream and datagram data paths,
 * EAGAIN instead of blocking and the wake-ups that end a wait, shutdown and close semantics,
 * the name table (abstract names per type, the path registry), listen/connect/accept,
 * SCM_RIGHTS references, credentials and socket options. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "vfs/vfs.h"
#include "vfs/waitq.h"

static const struct vfs_unix_cred CRED = {42, 1000, 100};

static ssize_t sock_send(struct vfs_file *f, const char *s, size_t len)
{
	struct iovec iov = {(void *)s, len};
	struct vfs_unix_msg m = {.iov = &iov, .iovcnt = 1, .cred = CRED};

	return vfs_unix_sendmsg(f, &m);
}

static ssize_t sock_recv(struct vfs_file *f, char *buf, size_t len, int flags)
{
	struct iovec iov = {buf, len};
	struct vfs_unix_msg m = {.iov = &iov, .iovcnt = 1, .flags = flags};
	ssize_t r = vfs_unix_recvmsg(f, &m);

	for (int i = 0; i < m.nfiles; i++)
		vfs_file_put(m.files[i]);
	free(m.files);
	return r;
}

static uint32_t sock_poll(struct vfs_file *f)
{
	struct waitq *wq;

	return f->ops->poll(f, &wq);
}

static void pair(int type, struct vfs_file **a, struct vfs_file **b)
{
	assert_int_equal(vfs_unix_socketpair(type, 0, &CRED, a, b), 0);
}

static struct vfs_file *sock(int type)
{
	struct vfs_file *f;

	assert_int_equal(vfs_unix_socket_new(type, 0, &CRED, &f), 0);
	return f;
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

static void test_stream_pair_moves_bytes_across_writes(void **state)
{
	struct vfs_file *a, *b;
	char buf[16];

	(void)state;
	pair(SOCK_STREAM, &a, &b);
	assert_int_equal(sock_send(a, "abc", 3), 3);
	assert_int_equal(sock_send(a, "def", 3), 3);
	assert_int_equal(sock_recv(b, buf, 4, MSG_PEEK), 4);
	assert_int_equal(sock_recv(b, buf, sizeof(buf), 0), 6);
	assert_memory_equal(buf, "abcdef", 6);
	assert_int_equal(sock_recv(b, buf, sizeof(buf), 0), -EAGAIN);
	vfs_file_put(a);
	vfs_file_put(b);
}

static void test_stream_reader_is_woken_by_a_write(void **state)
{
	struct vfs_file *a, *b;
	struct waitq *wq;
	struct wake_count c = {0};

	(void)state;
	pair(SOCK_STREAM, &a, &b);
	b->ops->poll(b, &wq);
	waitq_add(wq, &c.w, count_wake, POLLIN);
	assert_int_equal(sock_send(a, "x", 1), 1);
	assert_true(c.calls > 0);
	assert_true(sock_poll(b) & POLLIN);
	waitq_remove(&c.w);
	vfs_file_put(a);
	vfs_file_put(b);
}

static void test_stream_close_gives_eof_epipe_and_hangup(void **state)
{
	struct vfs_file *a, *b;
	char buf[8];

	(void)state;
	pair(SOCK_STREAM, &a, &b);
	assert_int_equal(sock_send(a, "hi", 2), 2);
	vfs_file_put(a);
	assert_int_equal(sock_poll(b) & (POLLHUP | POLLRDHUP | POLLIN),
			 POLLHUP | POLLRDHUP | POLLIN);
	assert_int_equal(sock_recv(b, buf, sizeof(buf), 0), 2);
	assert_int_equal(sock_recv(b, buf, sizeof(buf), 0), 0);
	assert_int_equal(sock_send(b, "x", 1), -EPIPE);
	assert_true(vfs_unix_sends_sigpipe(b));
	vfs_file_put(b);
}

static void test_closing_with_unread_data_resets_the_peer(void **state)
{
	struct vfs_file *a, *b;
	char buf[8];

	(void)state;
	pair(SOCK_STREAM, &a, &b);
	assert_int_equal(sock_send(b, "unread", 6), 6);
	vfs_file_put(a);
	assert_true(sock_poll(b) & POLLERR);
	assert_int_equal(sock_recv(b, buf, sizeof(buf), 0), -ECONNRESET);
	assert_int_equal(sock_recv(b, buf, sizeof(buf), 0), 0);
	vfs_file_put(b);
}

static void test_shutdown_wr_is_eof_for_the_peer_only(void **state)
{
	struct vfs_file *a, *b;
	char buf[8];

	(void)state;
	pair(SOCK_STREAM, &a, &b);
	assert_int_equal(vfs_unix_shutdown(a, SHUT_WR), 0);
	assert_int_equal(vfs_unix_shutdown(a, 3), -EINVAL);
	assert_int_equal(sock_recv(b, buf, sizeof(buf), 0), 0);
	assert_int_equal(sock_send(a, "x", 1), -EPIPE);
	assert_int_equal(sock_send(b, "y", 1), 1);
	assert_int_equal(sock_recv(a, buf, sizeof(buf), 0), 1);
	vfs_file_put(a);
	vfs_file_put(b);
}

static void test_full_send_buffer_gives_eagain_until_read(void **state)
{
	struct vfs_file *a, *b;
	static char big[65536];
	ssize_t n, queued = 0;
	int v = 4096;
	struct waitq *wq;
	struct wake_count c = {0};

	(void)state;
	pair(SOCK_STREAM, &a, &b);
	assert_int_equal(vfs_unix_setsockopt(a, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)), 0);
	while ((n = sock_send(a, big, sizeof(big))) > 0)
		queued += n;
	assert_int_equal(n, -EAGAIN);
	assert_int_equal(queued, 8192);
	assert_false(sock_poll(a) & POLLOUT);
	a->ops->poll(a, &wq);
	waitq_add(wq, &c.w, count_wake, POLLOUT);
	assert_int_equal(sock_recv(b, big, sizeof(big), 0), 8192);
	assert_true(c.calls > 0);
	assert_true(sock_poll(a) & POLLOUT);
	waitq_remove(&c.w);
	vfs_file_put(a);
	vfs_file_put(b);
}

static void test_dgram_keeps_boundaries_and_reports_truncation(void **state)
{
	struct vfs_file *a, *b;
	char buf[8];
	struct iovec iov = {buf, 2};
	struct vfs_unix_msg m = {.iov = &iov, .iovcnt = 1};

	(void)state;
	pair(SOCK_DGRAM, &a, &b);
	assert_int_equal(sock_send(a, "first", 5), 5);
	assert_int_equal(sock_send(a, "second", 6), 6);
	assert_int_equal(vfs_unix_recvmsg(b, &m), 2);
	assert_int_equal(m.msg_flags, MSG_TRUNC);
	assert_int_equal(sock_recv(b, buf, 1, MSG_TRUNC), 6);
	assert_int_equal(sock_recv(b, buf, sizeof(buf), 0), -EAGAIN);
	assert_false(vfs_unix_sends_sigpipe(a));
	vfs_file_put(a);
	vfs_file_put(b);
}

static void test_abstract_names_are_per_type_and_unique(void **state)
{
	struct vfs_file *s1 = sock(SOCK_STREAM), *s2 = sock(SOCK_STREAM), *d = sock(SOCK_DGRAM);
	struct vfs_unix_sock *found;

	(void)state;
	assert_int_equal(vfs_unix_bind_abstract(s1, "name", 4), 0);
	assert_int_equal(vfs_unix_bind_abstract(s1, "other", 5), -EINVAL);
	assert_int_equal(vfs_unix_bind_abstract(s2, "name", 4), -EADDRINUSE);
	assert_int_equal(vfs_unix_bind_abstract(d, "name", 4), 0);
	assert_int_equal(vfs_unix_lookup_abstract(SOCK_STREAM, "name", 4, &found), 0);
	assert_int_equal(vfs_unix_lookup_abstract(SOCK_SEQPACKET, "name", 4, &found),
			 -ECONNREFUSED);
	vfs_file_put(s1);
	assert_int_equal(vfs_unix_lookup_abstract(SOCK_STREAM, "name", 4, &found), -ECONNREFUSED);
	assert_int_equal(vfs_unix_bind_abstract(s2, "name", 4), 0);
	vfs_file_put(s2);
	vfs_file_put(d);
}

static void test_path_registry_binds_looks_up_and_unbinds(void **state)
{
	struct vfs_file *s = sock(SOCK_STREAM), *t = sock(SOCK_STREAM);
	struct vfs_unix_sock *found;
	char addr[VFS_UNIX_ADDR_MAX];
	unsigned int len;

	(void)state;
	assert_int_equal(vfs_unix_lookup_path("/tmp/s", &found), -ENOENT);
	assert_int_equal(vfs_unix_bind_path(s, "/tmp/s", "s"), 0);
	assert_int_equal(vfs_unix_bind_path(t, "/tmp/s", "../tmp/s"), -EADDRINUSE);
	assert_int_equal(vfs_unix_lookup_path("/tmp/s", &found), 0);
	assert_int_equal(vfs_unix_getname(s, false, addr, &len), 0);
	assert_int_equal(len, offsetof(struct sockaddr_un, sun_path) + 2);
	assert_string_equal(addr + offsetof(struct sockaddr_un, sun_path), "s");
	assert_int_equal(vfs_unix_unbind_path("/tmp/s"), 0);
	assert_int_equal(vfs_unix_lookup_path("/tmp/s", &found), -ENOENT);
	assert_int_equal(vfs_unix_bind_path(t, "/tmp/s", "/tmp/s"), 0);
	vfs_file_put(s);
	vfs_file_put(t);
}

static void test_connect_is_queued_and_accept_hands_out_the_server_end(void **state)
{
	struct vfs_file *l = sock(SOCK_STREAM), *c = sock(SOCK_STREAM), *s;
	struct vfs_unix_sock *target;
	const struct vfs_unix_cred client = {7, 1, 2}, server = {8, 3, 4};
	struct vfs_unix_cred got;
	unsigned int len;
	char buf[8];

	(void)state;
	assert_int_equal(vfs_unix_listen(l, 1, &server), -EINVAL); /* unbound */
	assert_int_equal(vfs_unix_bind_abstract(l, "srv", 3), 0);
	assert_int_equal(vfs_unix_lookup_abstract(SOCK_STREAM, "srv", 3, &target), 0);
	assert_int_equal(vfs_unix_connect(c, target, &client, NULL), -ECONNREFUSED);
	assert_int_equal(vfs_unix_listen(l, 0, &server), 0);
	assert_int_equal(vfs_unix_accept(l, 0, &s), -EAGAIN);
	assert_int_equal(vfs_unix_connect(c, target, &client, NULL), 0);
	assert_int_equal(vfs_unix_connect(c, target, &client, NULL), -EISCONN);
	assert_true(sock_poll(l) & POLLIN);
	assert_int_equal(sock_send(c, "early", 5), 5);
	assert_int_equal(vfs_unix_getsockopt(c, SOL_SOCKET, SO_PEERCRED, &got, &len), 0);
	assert_int_equal(got.pid, 8);
	assert_int_equal(vfs_unix_accept(l, O_NONBLOCK, &s), 0);
	assert_int_equal(s->flags & O_NONBLOCK, O_NONBLOCK);
	assert_int_equal(vfs_unix_getsockopt(s, SOL_SOCKET, SO_PEERCRED, &got, &len), 0);
	assert_int_equal(got.pid, 7);
	assert_int_equal(got.uid, 1);
	assert_int_equal(sock_recv(s, buf, sizeof(buf), 0), 5);
	assert_int_equal(vfs_unix_getname(s, false, buf, &len), 0);
	assert_int_equal(len, offsetof(struct sockaddr_un, sun_path) + 4);
	vfs_file_put(s);
	vfs_file_put(c);
	vfs_file_put(l);
}

static void test_full_backlog_makes_connect_wait_on_the_listener(void **state)
{
	struct vfs_file *l = sock(SOCK_SEQPACKET), *c1 = sock(SOCK_SEQPACKET);
	struct vfs_file *c2 = sock(SOCK_SEQPACKET), *s;
	struct vfs_unix_sock *target;
	struct waitq *wq = NULL, *lwq;
	char buf[4];

	(void)state;
	assert_int_equal(vfs_unix_bind_abstract(l, "bl", 2), 0);
	assert_int_equal(vfs_unix_listen(l, 0, &CRED), 0);
	assert_int_equal(vfs_unix_lookup_abstract(SOCK_SEQPACKET, "bl", 2, &target), 0);
	assert_int_equal(vfs_unix_connect(c1, target, &CRED, &wq), 0);
	assert_int_equal(vfs_unix_connect(c2, target, &CRED, &wq), -EAGAIN);
	l->ops->poll(l, &lwq);
	assert_ptr_equal(wq, lwq);
	assert_int_equal(vfs_unix_accept(l, 0, &s), 0);
	assert_int_equal(vfs_unix_connect(c2, target, &CRED, &wq), 0);
	/* Closing the listener resets the connection it never accepted. */
	vfs_file_put(l);
	assert_int_equal(sock_recv(c2, buf, sizeof(buf), 0), -ECONNRESET);
	vfs_file_put(s);
	vfs_file_put(c1);
	vfs_file_put(c2);
}

static void test_rights_hold_file_references_until_received_or_dropped(void **state)
{
	struct vfs_file *a, *b, *rd, *wr;
	struct iovec iov = {"x", 1};
	struct vfs_unix_msg m = {.iov = &iov, .iovcnt = 1, .cred = CRED};
	char buf[4];
	struct iovec riov = {buf, sizeof(buf)};
	struct vfs_unix_msg r = {.iov = &riov, .iovcnt = 1};

	(void)state;
	pair(SOCK_DGRAM, &a, &b);
	assert_int_equal(vfs_pipe_new(0, &rd, &wr), 0);
	m.files = &rd;
	m.nfiles = 1;
	assert_int_equal(vfs_unix_sendmsg(a, &m), 1);
	assert_int_equal(rd->refs, 2);
	r.flags = MSG_PEEK;
	assert_int_equal(vfs_unix_recvmsg(b, &r), 1);
	assert_int_equal(r.nfiles, 1);
	assert_int_equal(rd->refs, 3);
	vfs_file_put(r.files[0]);
	free(r.files);
	r.flags = 0;
	assert_int_equal(vfs_unix_recvmsg(b, &r), 1);
	assert_int_equal(r.nfiles, 1);
	assert_ptr_equal(r.files[0], rd);
	assert_int_equal(rd->refs, 2);
	vfs_file_put(r.files[0]);
	free(r.files);
	/* A message never read gives its references back when the socket goes. */
	assert_int_equal(vfs_unix_sendmsg(a, &m), 1);
	assert_int_equal(rd->refs, 2);
	vfs_file_put(b);
	assert_int_equal(rd->refs, 1);
	vfs_file_put(a);
	vfs_file_put(rd);
	vfs_file_put(wr);
}

static void test_passcred_delivers_the_senders_credentials(void **state)
{
	struct vfs_file *a, *b;
	char buf[4];
	struct iovec iov = {buf, sizeof(buf)};
	struct vfs_unix_msg r = {.iov = &iov, .iovcnt = 1};
	int on = 1;

	(void)state;
	pair(SOCK_DGRAM, &a, &b);
	assert_int_equal(sock_send(a, "1", 1), 1);
	assert_int_equal(vfs_unix_recvmsg(b, &r), 1);
	assert_false(r.has_cred);
	assert_int_equal(vfs_unix_setsockopt(b, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)), 0);
	assert_int_equal(sock_send(a, "2", 1), 1);
	assert_int_equal(vfs_unix_recvmsg(b, &r), 1);
	assert_true(r.has_cred);
	assert_int_equal(r.cred.pid, CRED.pid);
	assert_int_equal(r.cred.uid, CRED.uid);
	vfs_file_put(a);
	vfs_file_put(b);
}

static void test_socket_options_and_fstat(void **state)
{
	struct vfs_file *s = sock(SOCK_SEQPACKET);
	int v = 0;
	unsigned int len;
	struct stat st;

	(void)state;
	assert_int_equal(vfs_unix_getsockopt(s, SOL_SOCKET, SO_TYPE, &v, &len), 0);
	assert_int_equal(v, SOCK_SEQPACKET);
	assert_int_equal(len, sizeof(int));
	assert_int_equal(vfs_unix_getsockopt(s, SOL_SOCKET, SO_RCVBUF, &v, &len), 0);
	assert_int_equal(v, 212992);
	v = 1;
	assert_int_equal(vfs_unix_setsockopt(s, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)), 0);
	assert_int_equal(vfs_unix_getsockopt(s, SOL_SOCKET, SO_RCVBUF, &v, &len), 0);
	assert_int_equal(v, 2304);
	assert_int_equal(vfs_unix_getsockopt(s, 6 /* SOL_TCP */, 1, &v, &len), -EOPNOTSUPP);
	assert_int_equal(vfs_unix_getsockopt(s, SOL_SOCKET, 12345, &v, &len), -ENOPROTOOPT);
	assert_int_equal(vfs_unix_setsockopt(s, SOL_SOCKET, SO_PASSCRED, &v, 2), -EINVAL);
	assert_int_equal(s->ops->getattr(s, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_uid, CRED.uid);
	vfs_file_put(s);
}

static void test_bad_types_are_refused(void **state)
{
	struct vfs_file *f;

	(void)state;
	assert_int_equal(vfs_unix_socket_new(SOCK_RDM, 0, &CRED, &f), -ESOCKTNOSUPPORT);
	assert_int_equal(vfs_unix_socket_new(SOCK_RAW, 0, &CRED, &f), 0);
	assert_int_equal(vfs_unix_type(f), SOCK_DGRAM);
	vfs_file_put(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stream_pair_moves_bytes_across_writes),
	    cmocka_unit_test(test_stream_reader_is_woken_by_a_write),
	    cmocka_unit_test(test_stream_close_gives_eof_epipe_and_hangup),
	    cmocka_unit_test(test_closing_with_unread_data_resets_the_peer),
	    cmocka_unit_test(test_shutdown_wr_is_eof_for_the_peer_only),
	    cmocka_unit_test(test_full_send_buffer_gives_eagain_until_read),
	    cmocka_unit_test(test_dgram_keeps_boundaries_and_reports_truncation),
	    cmocka_unit_test(test_abstract_names_are_per_type_and_unique),
	    cmocka_unit_test(test_path_registry_binds_looks_up_and_unbinds),
	    cmocka_unit_test(test_connect_is_queued_and_accept_hands_out_the_server_end),
	    cmocka_unit_test(test_full_backlog_makes_connect_wait_on_the_listener),
	    cmocka_unit_test(test_rights_hold_file_references_until_received_or_dropped),
	    cmocka_unit_test(test_passcred_delivers_the_senders_credentials),
	    cmocka_unit_test(test_socket_options_and_fstat),
	    cmocka_unit_test(test_bad_types_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
