/* Ancillary data on AF_UNIX sockets: SCM_RIGHTS passing a pipe end from a child to its
 * parent, MSG_CMSG_CLOEXEC, MSG_CTRUNC when the control buffer is short or missing, EBADF for a
 * bad descriptor, MSG_PEEK duplicating descriptors, a stream read stopping after the bytes
 * that carried descriptors, passing a socket over itself's peer, and SO_PASSCRED with
 * SCM_CREDENTIALS (implicit and explicit). A descriptor in flight (its only reference) and
 * queued credentials survive a checkpoint and restore. */
#include <fcntl.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "check.h"

static int send_fds(int s, const char *data, size_t len, const int *fds, int n)
{
	char ctl[CMSG_SPACE(4 * sizeof(int))];
	struct iovec iov = {(void *)data, len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	if (n) {
		memset(ctl, 0, sizeof(ctl));
		mh.msg_control = ctl;
		mh.msg_controllen = CMSG_SPACE(n * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(n * sizeof(int));
		memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	}
	return sendmsg(s, &mh, 0);
}

/* Receives into BUF and returns the byte count; *FDS gets the descriptors (up to 4), *NFDS
 * their number, *FLAGS the msg_flags. CTLSPACE is the control buffer's size (0: none). */
static int recv_fds(int s, char *buf, size_t len, int *fds, int *nfds, int *flags, size_t ctlspace,
		    int rflags)
{
	union {
		char buf[CMSG_SPACE(8 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {buf, len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	memset(&ctl, 0, sizeof(ctl));
	if (ctlspace) {
		mh.msg_control = ctl.buf;
		mh.msg_controllen = ctlspace;
	}
	int r = recvmsg(s, &mh, rflags);
	*nfds = 0;
	*flags = mh.msg_flags;
	if (r < 0)
		return r;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			memcpy(fds + *nfds, CMSG_DATA(c), n * sizeof(int));
			*nfds += n;
		}
	return r;
}

static void test_pipe_between_processes(void)
{
	int sv[2], fds[4], n, flags;
	char buf[64];

	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pid_t pid = fork();
	if (pid == 0) {
		int p[2];
		close(sv[0]);
		if (pipe(p))
			_exit(1);
		if (send_fds(sv[1], "P", 1, &p[0], 1) != 1)
			_exit(2);
		close(p[0]);
		if (write(p[1], "through the pipe", 16) != 16)
			_exit(3);
		_exit(0);
	}
	close(sv[1]);
	CHECK_EQ(recv_fds(sv[0], buf, sizeof(buf), fds, &n, &flags, sizeof(buf), MSG_CMSG_CLOEXEC),
		 1);
	CHECK_EQ(buf[0], 'P');
	CHECK_EQ(n, 1);
	CHECK_EQ(flags & MSG_CTRUNC, 0);
	if (n == 1) {
		struct stat st;
		CHECK_EQ(fstat(fds[0], &st), 0);
		CHECK(S_ISFIFO(st.st_mode));
		CHECK_EQ(fcntl(fds[0], F_GETFD), FD_CLOEXEC);
		CHECK_EQ(read(fds[0], buf, sizeof(buf)), 16);
		CHECK_EQ(memcmp(buf, "through the pipe", 16), 0);
		CHECK_EQ(read(fds[0], buf, sizeof(buf)), 0); /* the child's write end is gone */
		close(fds[0]);
	}
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
	close(sv[0]);
}

static void test_truncation_and_errors(void)
{
	int sv[2], p[2], fds[4], n, flags, two[2];
	char buf[16];

	CHECK_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
	CHECK_EQ(pipe(p), 0);
	int bad = 999;
	CHECK_ERR(send_fds(sv[0], "x", 1, &bad, 1), EBADF);
	/* Room for one descriptor of two: one arrives, the other is closed. */
	CHECK_EQ(send_fds(sv[0], "x", 1, p, 2), 1);
	CHECK_EQ(recv_fds(sv[1], buf, sizeof(buf), fds, &n, &flags, CMSG_LEN(sizeof(int)), 0), 1);
	CHECK_EQ(n, 1);
	CHECK_EQ(flags & MSG_CTRUNC, MSG_CTRUNC);
	CHECK_EQ(fcntl(fds[0], F_GETFD), 0);
	close(fds[0]);
	/* No control buffer at all. */
	CHECK_EQ(send_fds(sv[0], "y", 1, p, 1), 1);
	CHECK_EQ(recv_fds(sv[1], buf, sizeof(buf), fds, &n, &flags, 0, 0), 1);
	CHECK_EQ(n, 0);
	CHECK_EQ(flags & MSG_CTRUNC, MSG_CTRUNC);
	/* A peek hands out descriptors too, and the message keeps its own. */
	two[0] = p[1];
	two[1] = p[1];
	CHECK_EQ(send_fds(sv[0], "z", 1, two, 2), 1);
	CHECK_EQ(recv_fds(sv[1], buf, sizeof(buf), fds, &n, &flags, 64, MSG_PEEK), 1);
	CHECK_EQ(n, 2);
	for (int i = 0; i < n; i++)
		close(fds[i]);
	CHECK_EQ(recv_fds(sv[1], buf, sizeof(buf), fds, &n, &flags, 64, 0), 1);
	CHECK_EQ(n, 2);
	CHECK(n < 2 || fds[0] != fds[1]);
	if (n == 2) {
		CHECK_EQ(write(fds[1], "w", 1), 1);
		CHECK_EQ(read(p[0], buf, 1), 1);
		close(fds[0]);
		close(fds[1]);
	}
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
}

static void test_stream_boundary_and_socket_passing(void)
{
	int sv[2], other[2], fds[4], n, flags;
	char buf[16];

	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, other), 0);
	CHECK_EQ(send_fds(sv[0], "ab", 2, &other[1], 1), 2);
	CHECK_EQ(write(sv[0], "cd", 2), 2);
	close(other[1]);
	maybe_save(); /* other[1] exists only in the queued message */
	/* The read stops after the bytes that carried descriptors. */
	CHECK_EQ(recv_fds(sv[1], buf, sizeof(buf), fds, &n, &flags, 64, 0), 2);
	CHECK_EQ(n, 1);
	CHECK_EQ(recv_fds(sv[1], buf, sizeof(buf), fds + 1, &flags, &flags, 64, 0), 2);
	CHECK_EQ(memcmp(buf, "cd", 2), 0);
	if (n == 1) {
		/* The passed socket still talks to its peer. */
		CHECK_EQ(write(fds[0], "hey", 3), 3);
		CHECK_EQ(read(other[0], buf, sizeof(buf)), 3);
		close(fds[0]);
		CHECK_EQ(read(other[0], buf, sizeof(buf)), 0);
	}
	close(other[0]);
	close(sv[0]);
	close(sv[1]);
}

static void test_credentials(void)
{
	int sv[2], on = 1;
	char buf[16];
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {buf, sizeof(buf)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	CHECK_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
	CHECK_EQ(setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)), 0);
	socklen_t len = sizeof(on);
	on = 0;
	CHECK_EQ(getsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, &len), 0);
	CHECK_EQ(on, 1);
	pid_t pid = fork();
	if (pid == 0)
		_exit(send(sv[0], "c", 1, 0) == 1 ? 0 : 1);
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	maybe_save(); /* a datagram with the credentials of a process gone since */
	mh.msg_control = ctl.buf;
	mh.msg_controllen = sizeof(ctl.buf);
	CHECK_EQ(recvmsg(sv[1], &mh, 0), 1);
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	CHECK(c != NULL);
	if (c) {
		struct ucred cr;
		CHECK_EQ(c->cmsg_level, SOL_SOCKET);
		CHECK_EQ(c->cmsg_type, SCM_CREDENTIALS);
		CHECK_EQ(c->cmsg_len, CMSG_LEN(sizeof(cr)));
		memcpy(&cr, CMSG_DATA(c), sizeof(cr));
		CHECK_EQ(cr.pid, pid);
		CHECK_EQ(cr.uid, getuid());
		CHECK_EQ(cr.gid, getgid());
	}
	/* Explicit credentials: one's own are accepted as given. */
	struct ucred mine = {getpid(), getuid(), getgid()};
	struct msghdr sm = {.msg_iov = &iov, .msg_iovlen = 1};
	iov.iov_len = 1;
	sm.msg_control = ctl.buf;
	sm.msg_controllen = sizeof(ctl.buf);
	c = CMSG_FIRSTHDR(&sm);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_CREDENTIALS;
	c->cmsg_len = CMSG_LEN(sizeof(mine));
	memcpy(CMSG_DATA(c), &mine, sizeof(mine));
	CHECK_EQ(sendmsg(sv[0], &sm, 0), 1);
	c->cmsg_len = CMSG_LEN(sizeof(mine) - 1);
	CHECK_ERR(sendmsg(sv[0], &sm, 0), EINVAL);
	iov.iov_len = sizeof(buf);
	mh.msg_control = ctl.buf;
	mh.msg_controllen = sizeof(ctl.buf);
	CHECK_EQ(recvmsg(sv[1], &mh, 0), 1);
	c = CMSG_FIRSTHDR(&mh);
	CHECK(c != NULL && c->cmsg_type == SCM_CREDENTIALS);
	if (c) {
		struct ucred cr;
		memcpy(&cr, CMSG_DATA(c), sizeof(cr));
		CHECK_EQ(cr.pid, getpid());
	}
	/* A receiver without SO_PASSCRED gets no credentials. */
	CHECK_EQ(send(sv[1], "n", 1, 0), 1);
	mh.msg_control = ctl.buf;
	mh.msg_controllen = sizeof(ctl.buf);
	CHECK_EQ(recvmsg(sv[0], &mh, 0), 1);
	CHECK_EQ(mh.msg_controllen, 0);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	test_pipe_between_processes();
	test_truncation_and_errors();
	test_stream_boundary_and_socket_passing();
	test_credentials();
	return check_done();
}
