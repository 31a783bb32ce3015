/* Host sockets (--network host): a guest's AF_INET, AF_INET6 and NETLINK_ROUTE sockets are
 * sockets of the host that the Sentry owns, always non-blocking on the host side; a guest
 * that must wait is parked on the descriptor's readiness in the event loop (host_fd), like
 * the sandbox's stdio. Linux itself is then the network: addresses, errors and options are
 * the host's. This is the only file that makes network calls to the host; the Sentry's
 * seccomp allowlist must let these through in this mode: socket (AF_INET, AF_INET6,
 * AF_NETLINK), bind, listen, connect, accept4, getsockname, getpeername, shutdown,
 * setsockopt, getsockopt, sendmsg, recvmsg, ioctl (FIONREAD, TIOCOUTQ, SIOCATMARK,
 * SIOCOUTQNSD and the SIOCGIF* reads), poll, fstat and close.
 *
 * A host socket cannot be checkpointed: its state is the host kernel's. A checkpoint of a
 * sandbox that holds any is refused, with one line naming them. */
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vfs/internal.h"
#include "vfs/save.h"
#include "vfs/vfs.h"

struct hostnet {
	int fd;
	int family, type;
	struct hostnet *next, **pprev; /* every host socket, to name them */
};

static const struct vfs_file_ops hostnet_ops;
static struct hostnet *all;

static int hn_fd(struct vfs_file *f)
{
	return ((struct hostnet *)f->priv)->fd;
}

static struct vfs_file *hn_file(int fd, int family, int type, int flags)
{
	struct vfs_file *f = calloc(1, sizeof(*f));
	struct hostnet *h = calloc(1, sizeof(*h));

	if (!f || !h) {
		free(f);
		free(h);
		return NULL;
	}
	h->fd = fd;
	h->family = family;
	h->type = type;
	h->next = all;
	if (all)
		all->pprev = &h->next;
	all = h;
	h->pprev = &all;
	f->ops = &hostnet_ops;
	f->refs = 1;
	f->flags = O_RDWR | (flags & O_NONBLOCK);
	f->priv = h;
	return f;
}

int vfs_hostnet_socket_new(int family, int type, int protocol, int flags, struct vfs_file **out)
{
	if (family == AF_NETLINK) {
		if (type != SOCK_RAW && type != SOCK_DGRAM)
			return -ESOCKTNOSUPPORT;
		if (protocol != NETLINK_ROUTE)
			return -EPROTONOSUPPORT;
	} else if (family == AF_INET || family == AF_INET6) {
		/* TCP and UDP only: raw sockets stay refused, whatever the Sentry may do. */
		if (type == SOCK_RAW)
			return -EPERM;
		if (type == SOCK_STREAM	 ? protocol && protocol != IPPROTO_TCP
		    : type == SOCK_DGRAM ? protocol && protocol != IPPROTO_UDP
					 : true)
			return type == SOCK_STREAM || type == SOCK_DGRAM ? -EPROTONOSUPPORT
									 : -ESOCKTNOSUPPORT;
	} else {
		return -EAFNOSUPPORT;
	}
	int fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol);
	if (fd < 0)
		return -errno;
	if (!(*out = hn_file(fd, family, type, flags))) {
		close(fd);
		return -ENOMEM;
	}
	return 0;
}

bool vfs_is_hostnet_socket(struct vfs_file *f)
{
	return f->ops == &hostnet_ops;
}

/* --- socket operations: the host's, on the host descriptor --------------------------------- */

static int hn_bind(struct vfs_file *f, const void *addr, unsigned int len)
{
	return bind(hn_fd(f), addr, len) ? -errno : 0;
}

static int hn_listen(struct vfs_file *f, int backlog)
{
	return listen(hn_fd(f), backlog) ? -errno : 0;
}

/* The host descriptor never blocks, so a TCP connect is always EINPROGRESS first; the
 * caller waits for POLLOUT and calls again, and the host reports the outcome. */
static int hn_connect(struct vfs_file *f, const void *addr, unsigned int len)
{
	return connect(hn_fd(f), addr, len) ? -errno : 0;
}

static int hn_accept(struct vfs_file *f, int flags, struct vfs_file **out)
{
	struct hostnet *h = f->priv;
	int fd = accept4(h->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (!(*out = hn_file(fd, h->family, h->type, flags))) {
		close(fd);
		return -ENOMEM;
	}
	return 0;
}

static int hn_getname(struct vfs_file *f, int peer, void *addr, unsigned int *len)
{
	socklen_t l = VFS_SOCK_ADDR_MAX;
	int r = peer ? getpeername(hn_fd(f), addr, &l) : getsockname(hn_fd(f), addr, &l);

	if (r)
		return -errno;
	*len = l;
	return 0;
}

static ssize_t hn_sendmsg(struct vfs_file *f, struct vfs_sock_msg *m)
{
	struct msghdr mh = {.msg_name = (void *)m->name,
			    .msg_namelen = m->name ? m->namelen : 0,
			    .msg_iov = (struct iovec *)m->iov,
			    .msg_iovlen = (size_t)m->iovcnt};
	/* SIGPIPE is the guest's to get, from the Sentry, never the Sentry's own. */
	ssize_t n = sendmsg(hn_fd(f), &mh, m->flags | MSG_DONTWAIT | MSG_NOSIGNAL);

	return n < 0 ? (errno == EWOULDBLOCK ? -EAGAIN : -errno) : n;
}

static ssize_t hn_recvmsg(struct vfs_file *f, struct vfs_sock_msg *m)
{
	char addr[VFS_SOCK_ADDR_MAX];
	struct msghdr mh = {.msg_name = m->addr ? addr : NULL,
			    .msg_namelen = m->addr ? sizeof(addr) : 0,
			    .msg_iov = (struct iovec *)m->iov,
			    .msg_iovlen = (size_t)m->iovcnt};
	ssize_t n = recvmsg(hn_fd(f), &mh, (m->flags & ~MSG_WAITALL) | MSG_DONTWAIT);

	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	m->msg_flags = mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC | MSG_EOR | MSG_OOB);
	m->addrlen = 0;
	if (m->addr && mh.msg_namelen) {
		m->addrlen = mh.msg_namelen < sizeof(addr) ? mh.msg_namelen : sizeof(addr);
		memcpy(m->addr, addr, m->addrlen);
	}
	return n;
}

static int hn_shutdown(struct vfs_file *f, int how)
{
	return shutdown(hn_fd(f), how) ? -errno : 0;
}

static int hn_getsockopt(struct vfs_file *f, int level, int name, void *val, unsigned int *len)
{
	socklen_t l = *len ? *len : VFS_SOCKOPT_MAX;

	if (l > VFS_SOCKOPT_MAX)
		l = VFS_SOCKOPT_MAX;
	if (getsockopt(hn_fd(f), level, name, val, &l))
		return -errno;
	*len = l;
	return 0;
}

static int hn_setsockopt(struct vfs_file *f, int level, int name, const void *val, unsigned int len)
{
	if (len > VFS_SOCKOPT_MAX)
		len = VFS_SOCKOPT_MAX;
	return setsockopt(hn_fd(f), level, name, val, len) ? -errno : 0;
}

static const struct vfs_sock_ops hostnet_sock_ops = {
    .family = AF_UNSPEC,
    .bind = hn_bind,
    .listen = hn_listen,
    .connect = hn_connect,
    .accept = hn_accept,
    .getname = hn_getname,
    .sendmsg = hn_sendmsg,
    .recvmsg = hn_recvmsg,
    .shutdown = hn_shutdown,
    .getsockopt = hn_getsockopt,
    .setsockopt = hn_setsockopt,
};

long vfs_hostnet_ifioctl(struct vfs_file *f, unsigned int cmd, void *arg)
{
	return ioctl(hn_fd(f), cmd, arg) ? -errno : 0;
}

/* --- the file ------------------------------------------------------------------------------ */

static ssize_t hn_read(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	struct vfs_sock_msg m = {.iov = iov, .iovcnt = iovcnt};

	(void)pos;
	return hn_recvmsg(f, &m);
}

static ssize_t hn_write(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	struct vfs_sock_msg m = {.iov = iov, .iovcnt = iovcnt};

	(void)pos;
	return hn_sendmsg(f, &m);
}

static long hn_ioctl(struct vfs_file *f, unsigned int cmd, void *arg)
{
	switch (cmd) {
	case FIONREAD:
	case TIOCOUTQ:
	case SIOCATMARK:
	case SIOCOUTQNSD:
		return ioctl(hn_fd(f), cmd, arg) ? -errno : 0;
	}
	return -ENOTTY;
}

static int hn_getattr(struct vfs_file *f, struct stat *st)
{
	return fstat(hn_fd(f), st) ? -errno : 0;
}

static int hn_host_fd(struct vfs_file *f)
{
	return hn_fd(f);
}

static uint32_t hn_poll(struct vfs_file *f, struct waitq **wq)
{
	struct pollfd p = {.fd = hn_fd(f),
			   .events = POLLIN | POLLPRI | POLLOUT | POLLRDHUP | POLLRDNORM |
				     POLLRDBAND | POLLWRNORM | POLLWRBAND};
	int r;

	*wq = NULL;
	do
		r = poll(&p, 1, 0);
	while (r < 0 && errno == EINTR);
	return r < 0 ? POLLERR : (uint16_t)p.revents;
}

static void hn_release(struct vfs_file *f)
{
	struct hostnet *h = f->priv;

	*h->pprev = h->next;
	if (h->next)
		h->next->pprev = h->pprev;
	close(h->fd);
	free(h);
}

static const struct vfs_file_ops hostnet_ops = {
    .read = hn_read,
    .write = hn_write,
    .ioctl = hn_ioctl,
    .getattr = hn_getattr,
    .host_fd = hn_host_fd,
    .poll = hn_poll,
    .release = hn_release,
    .sock = &hostnet_sock_ops,
};

/* --- checkpoint: refused ------------------------------------------------------------------- */

static void format_addr(const struct sockaddr_storage *a, char *buf, size_t size)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)a;
		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
		snprintf(buf, size, "%s:%u", host, ntohs(sin->sin_port));
	} else if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)a;
		inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
		snprintf(buf, size, "[%s]:%u", host, ntohs(sin6->sin6_port));
	} else {
		snprintf(buf, size, "?");
	}
}

/* One host socket as the refusal names it: its protocol and its ends. */
static void describe(const struct hostnet *h, char *buf, size_t size)
{
	struct sockaddr_storage a, b;
	socklen_t la = sizeof(a), lb = sizeof(b);
	char sa[64] = "?", sb[64] = "";
	const char *proto = h->family == AF_NETLINK  ? "netlink"
			    : h->type == SOCK_STREAM ? "tcp"
						     : "udp";

	if (h->family != AF_NETLINK && !getsockname(h->fd, (struct sockaddr *)&a, &la))
		format_addr(&a, sa, sizeof(sa));
	if (h->family != AF_NETLINK && !getpeername(h->fd, (struct sockaddr *)&b, &lb)) {
		sb[0] = '-';
		sb[1] = '>';
		format_addr(&b, sb + 2, sizeof(sb) - 2);
	}
	snprintf(buf, size, "%s %s%s", proto, h->family == AF_NETLINK ? "" : sa, sb);
}

static int hostnet_save(struct enc *e, struct vfs_file *f)
{
	char list[512] = "", one[160];
	int n = 0;

	(void)f;
	for (struct hostnet *h = all; h; h = h->next, n++)
		if (n < 4) {
			describe(h, one, sizeof(one));
			if (strlen(list) + strlen(one) + 3 < sizeof(list))
				snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
					 n ? ", " : "", one);
		}
	return enc_fail(e,
			"%d host socket%s (--network host) cannot be saved: %s%s; close them or "
			"use the private network",
			n, n == 1 ? "" : "s", list, n > 4 ? ", ..." : "");
}

static int hostnet_load(struct dec *d, struct vfs_file *f)
{
	(void)f;
	return dec_fail(d, "a host socket in the image");
}

const struct vfs_file_kind vfs_hostnet_kind = {
    .name = "hostnet",
    .ops = &hostnet_ops,
    .save = hostnet_save,
    .load = hostnet_load,
};
