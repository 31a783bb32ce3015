/* A stub's userfaultfd for the Sentry (docs/security.md, "A stub's userfaultfd"): only the
 * stub can make one for its address space, and a confined Sentry cannot take it with
 * pidfd_getfd (the stub is not dumpable, its mm belongs to a user namespace where the Sentry
 * holds no capability). The stub sends it with sendmsg(SCM_RIGHTS) on a socket every stub
 * inherits from the factory; the Sentry holds the other end. Under the seccomp platform a guest
 * can make that call too (the stub's gadget, its own registers), so everything that arrives is
 * hostile until checked: the sender's pid (SCM_CREDENTIALS, which the kernel fills in and an
 * unprivileged sender cannot forge), one descriptor of the right kind, nothing truncated. */
#include "platform/internal.h"

#include <errno.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <unistd.h>

/* At most this many messages are looked at for one answer (about what the socket's buffer
 * holds): a guest that keeps sending cannot keep the Sentry reading. */
#define STUBFD_MAX_MSGS 256

int stubfd_socketpair(int sv[2])
{
	int one = 1;

	/* SEQPACKET: a connected pair, so the stubs' end reaches the Sentry's and nothing else;
	 * non-blocking both ways: a message that is not there is an error, never a wait. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv))
		return -errno;
	/* The kernel attaches each sender's pid; the Sentry sends nothing to the stubs. */
	if (setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) ||
	    shutdown(sv[0], SHUT_WR)) {
		int err = -errno;
		close(sv[0]);
		close(sv[1]);
		return err;
	}
	return 0;
}

void stubfd_message(struct stub_fdmsg *m, const int fds[STUB_FDMSG_FDS])
{
	struct cmsghdr *c;

	memset(m, 0, sizeof(*m));
	m->iov.iov_base = m->byte;
	m->iov.iov_len = 1;
	m->hdr.msg_iov = &m->iov;
	m->hdr.msg_iovlen = 1;
	m->hdr.msg_control = m->control;
	m->hdr.msg_controllen = CMSG_SPACE(STUB_FDMSG_FDS * sizeof(int));
	c = CMSG_FIRSTHDR(&m->hdr);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(STUB_FDMSG_FDS * sizeof(int));
	memcpy(CMSG_DATA(c), fds, STUB_FDMSG_FDS * sizeof(int));
}

_Static_assert(sizeof(((struct stub_fdmsg *)0)->control) ==
		   CMSG_SPACE(STUB_FDMSG_FDS * sizeof(int)),
	       "the message's control buffer holds its descriptors exactly");

static bool on_fs(int fd, unsigned long magic)
{
	struct statfs sf;

	return fstatfs(fd, &sf) == 0 && (unsigned long)sf.f_type == magic;
}

void stubfd_drain(int sock)
{
	int fds[STUB_FDMSG_FDS];

	stubfd_recv(sock, -1, fds); /* no one's: each closed */
}

/* One message from SOCK: 1 if it is PID's, with its descriptor in FDS; 0 if it was
 * anything else (its descriptors closed); a negative errno if none was there. */
static int recv_one(int sock, pid_t pid, int fds[STUB_FDMSG_FDS])
{
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred)) +
			 CMSG_SPACE(STUB_FDMSG_FDS * sizeof(int))];
		struct cmsghdr align;
	} control;
	char byte[2];
	struct iovec iov = {byte, sizeof(byte)};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = control.buf,
			   .msg_controllen = sizeof(control.buf)};
	int got[STUB_FDMSG_FDS + 1], ngot = 0;
	bool from_pid = false, whole;
	ssize_t n = recvmsg(sock, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	/* What did not fit the buffer the kernel closed itself; what did is ours to close. */
	whole = n == 1 && !(m.msg_flags & (MSG_CTRUNC | MSG_TRUNC));
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET)
			continue;
		if (c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len == CMSG_LEN(sizeof(struct ucred))) {
			struct ucred cr;
			memcpy(&cr, CMSG_DATA(c), sizeof(cr));
			from_pid = pid > 0 && cr.pid == pid;
		} else if (c->cmsg_type == SCM_RIGHTS) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t i = 0; i < k; i++) {
				int fd;
				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
				if (ngot < STUB_FDMSG_FDS + 1)
					got[ngot++] = fd;
				else
					close(fd); /* cannot be: the buffer holds no more */
			}
		}
	}
	/* A userfaultfd is an anonymous inode: of a stub's descriptors, only its doorbell (an
	 * eventfd) is one too, which the caller's UFFDIO_API handshake then refuses. */
	if (whole && from_pid && ngot == STUB_FDMSG_FDS && on_fs(got[0], ANON_INODE_FS_MAGIC)) {
		fds[0] = got[0];
		return 1;
	}
	for (int i = 0; i < ngot; i++)
		close(got[i]);
	return 0;
}

int stubfd_recv(int sock, pid_t pid, int fds[STUB_FDMSG_FDS])
{
	for (int i = 0; i < STUBFD_MAX_MSGS; i++) {
		int r = recv_one(sock, pid, fds);
		if (r < 0)
			return r;
		if (r == 1)
			return 0;
	}
	return -EBADMSG;
}
