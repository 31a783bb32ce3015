/* Netlink sockets: the kernel side of NETLINK_ROUTE answers the requests tools make to learn
 * the network (getifaddrs, ip addr, ip link, ip route) from the sandbox's interfaces
 * (netdev.c): RTM_GETLINK, RTM_GETADDR and RTM_GETROUTE, as dumps or single queries; other
 * dumps are empty, changes are refused with EPERM (no CAP_NET_ADMIN), anything else is
 * EOPNOTSUPP. NETLINK_SOCK_DIAG answers SOCK_DIAG_BY_FAMILY dumps of TCP, UDP and Unix
 * sockets (what ss lists). Answers are datagrams on the socket's queue (sock.h: the receiver
 * pays), each a run of netlink messages as Linux's skbs carry them. Other netlink families
 * do not exist (EPROTONOSUPPORT). */
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_arp.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>

#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "vfs/internal.h"
#include "vfs/save.h"
#include "vfs/sock.h"
#include "vfs/vfs.h"

#define NL_OVERHEAD 768	     /* what a queued answer costs its receiver beyond its bytes */
#define NL_ANSWER_MAX 16384  /* bytes of messages in one datagram of a dump */
#define NL_REQUEST_MAX 65536 /* the largest request processed */
#define NL_ROVER_START -4096 /* where Linux's autobind picks port ids once the pid is taken */

struct nl_sock {
	struct sock_core c;
	int protocol;
	uint32_t portid; /* 0 until bound */
	uint32_t groups;
	uint32_t dst_portid, dst_groups;
	unsigned int flags; /* NL_F_* */
	bool dead;
	struct nl_sock *next; /* every netlink socket, for port ids */
};

#define NL_F_EXT_ACK 1
#define NL_F_CAP_ACK 2
#define NL_F_STRICT 4
#define NL_F_NO_ENOBUFS 8
#define NL_F_PKTINFO 16
#define NL_F_LISTEN_ALL 32

static const struct vfs_file_ops nl_ops;
static struct nl_sock *socks;
static int32_t rover = NL_ROVER_START;

static struct nl_sock *nl_of(struct sock_core *c)
{
	return (struct nl_sock *)c;
}

static void nl_free(struct sock_core *c)
{
	struct nl_sock *s = nl_of(c);

	for (struct nl_sock **pp = &socks; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	free(s);
}

static struct nl_sock *by_portid(uint32_t portid)
{
	for (struct nl_sock *s = socks; s; s = s->next)
		if (!s->dead && s->portid == portid)
			return s;
	return NULL;
}

static bool portid_taken(const struct nl_sock *self, uint32_t portid)
{
	for (struct nl_sock *s = socks; s; s = s->next)
		if (s != self && !s->dead && s->portid == portid)
			return true;
	return false;
}

/* Linux's netlink_autobind: the process's pid if free, else negative ids counted down. */
static int autobind(struct nl_sock *s)
{
	if (s->portid)
		return 0;
	uint32_t id = (uint32_t)s->c.owner.pid;
	if (!id || by_portid(id)) {
		do {
			id = (uint32_t)rover--;
			if (rover > NL_ROVER_START)
				rover = NL_ROVER_START;
		} while (by_portid(id));
	}
	s->portid = id;
	return 0;
}

static int nl_new(int type, int protocol, const struct vfs_unix_cred *owner, struct nl_sock **out)
{
	struct nl_sock *s;

	if (type != SOCK_RAW && type != SOCK_DGRAM)
		return -ESOCKTNOSUPPORT;
	if (protocol != NETLINK_ROUTE && protocol != NETLINK_SOCK_DIAG)
		return -EPROTONOSUPPORT;
	if (!(s = calloc(1, sizeof(*s))))
		return -ENOMEM;
	sock_core_init(&s->c, type, owner, SOCK_BUF_DEFAULT, SOCK_BUF_DEFAULT, nl_free);
	s->protocol = protocol;
	s->next = socks;
	socks = s;
	*out = s;
	return 0;
}

int vfs_netlink_socket_new(int type, int protocol, int flags, const struct vfs_unix_cred *owner,
			   struct vfs_file **out)
{
	struct nl_sock *s;
	struct vfs_file *f;
	int err = nl_new(type, protocol, owner, &s);

	if (err)
		return err;
	if (!(f = calloc(1, sizeof(*f)))) {
		sock_core_put(&s->c);
		return -ENOMEM;
	}
	f->ops = &nl_ops;
	f->refs = 1;
	f->flags = O_RDWR | (flags & O_NONBLOCK);
	f->priv = s;
	*out = f;
	return 0;
}

/* --- building answers ---------------------------------------------------------------------- */

struct answer {
	char *buf;
	size_t len, cap;
	bool oom;
};

static void *put(struct answer *a, size_t n)
{
	size_t need = a->len + NLMSG_ALIGN(n);

	if (need > a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 4096;
		while (cap < need)
			cap *= 2;
		char *b = realloc(a->buf, cap);
		if (!b) {
			a->oom = true;
			return NULL;
		}
		a->buf = b;
		a->cap = cap;
	}
	void *p = a->buf + a->len;
	memset(p, 0, NLMSG_ALIGN(n));
	a->len = need;
	return p;
}

/* Starts a message; its length is set by msg_end. Returns its offset in A. */
static size_t msg_begin(struct answer *a, uint16_t type, uint16_t flags, uint32_t seq,
			uint32_t portid, const void *body, size_t blen)
{
	size_t off = a->len;
	struct nlmsghdr *h = put(a, NLMSG_HDRLEN);

	if (!h)
		return off;
	h->nlmsg_type = type;
	h->nlmsg_flags = flags;
	h->nlmsg_seq = seq;
	h->nlmsg_pid = portid;
	void *b = put(a, blen);
	if (b)
		memcpy(b, body, blen);
	return off;
}

static void msg_end(struct answer *a, size_t off)
{
	if (a->oom)
		return;
	((struct nlmsghdr *)(a->buf + off))->nlmsg_len = (uint32_t)(a->len - off);
}

static void attr(struct answer *a, uint16_t type, const void *data, size_t len)
{
	struct rtattr *r = put(a, RTA_LENGTH(len));

	if (!r)
		return;
	r->rta_type = type;
	r->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(r), data, len);
}

static void attr_u32(struct answer *a, uint16_t type, uint32_t v)
{
	attr(a, type, &v, sizeof(v));
}

static void attr_u8(struct answer *a, uint16_t type, uint8_t v)
{
	attr(a, type, &v, sizeof(v));
}

static void attr_str(struct answer *a, uint16_t type, const char *s)
{
	attr(a, type, s, strlen(s) + 1);
}

static void link_msg(struct answer *a, const struct vfs_netdev *d, uint16_t flags, uint32_t seq,
		     uint32_t portid)
{
	struct ifinfomsg ifi = {.ifi_family = AF_UNSPEC,
				.ifi_type = (unsigned short)d->type,
				.ifi_index = d->index,
				.ifi_flags = d->flags | IFF_LOWER_UP};
	static const uint8_t zero_mac[6];
	struct vfs_netdev_stats st;
	struct rtnl_link_stats64 s64 = {0};
	struct rtnl_link_stats s32 = {0};
	size_t off = msg_begin(a, RTM_NEWLINK, flags, seq, portid, &ifi, sizeof(ifi));

	vfs_netdev_stats(d, &st);
	s64.rx_packets = st.rx_packets;
	s64.tx_packets = st.tx_packets;
	s64.rx_bytes = st.rx_bytes;
	s64.tx_bytes = st.tx_bytes;
	s32.rx_packets = (uint32_t)st.rx_packets;
	s32.tx_packets = (uint32_t)st.tx_packets;
	s32.rx_bytes = (uint32_t)st.rx_bytes;
	s32.tx_bytes = (uint32_t)st.tx_bytes;
	attr_str(a, IFLA_IFNAME, d->name);
	attr_u32(a, IFLA_TXQLEN, (uint32_t)d->txqlen);
	attr_u8(a, IFLA_OPERSTATE, IF_OPER_UNKNOWN);
	attr_u8(a, IFLA_LINKMODE, 0);
	attr_u32(a, IFLA_MTU, (uint32_t)d->mtu);
	attr_u32(a, IFLA_GROUP, 0);
	attr_u32(a, IFLA_PROMISCUITY, 0);
	attr_u32(a, IFLA_NUM_TX_QUEUES, 1);
	attr_u32(a, IFLA_NUM_RX_QUEUES, 1);
	attr_u8(a, IFLA_CARRIER, 1);
	attr_str(a, IFLA_QDISC, "noqueue");
	attr(a, IFLA_ADDRESS, zero_mac, sizeof(zero_mac));
	attr(a, IFLA_BROADCAST, zero_mac, sizeof(zero_mac));
	attr(a, IFLA_STATS64, &s64, sizeof(s64));
	attr(a, IFLA_STATS, &s32, sizeof(s32));
	msg_end(a, off);
}

static void addr_msgs(struct answer *a, const struct vfs_netdev *d, int family, uint16_t flags,
		      uint32_t seq, uint32_t portid)
{
	struct ifa_cacheinfo ci = {.ifa_prefered = 0xffffffff, .ifa_valid = 0xffffffff};
	uint32_t ifa_flags = IFA_F_PERMANENT;

	if (family == AF_UNSPEC || family == AF_INET) {
		struct ifaddrmsg ifa = {.ifa_family = AF_INET,
					.ifa_prefixlen = d->v4_prefix,
					.ifa_flags = IFA_F_PERMANENT,
					.ifa_scope = RT_SCOPE_HOST,
					.ifa_index = (uint32_t)d->index};
		size_t off = msg_begin(a, RTM_NEWADDR, flags, seq, portid, &ifa, sizeof(ifa));
		attr(a, IFA_ADDRESS, d->v4, 4);
		attr(a, IFA_LOCAL, d->v4, 4);
		attr_str(a, IFA_LABEL, d->name);
		attr_u32(a, IFA_FLAGS, ifa_flags);
		attr(a, IFA_CACHEINFO, &ci, sizeof(ci));
		msg_end(a, off);
	}
	if (family == AF_UNSPEC || family == AF_INET6) {
		struct ifaddrmsg ifa = {.ifa_family = AF_INET6,
					.ifa_prefixlen = d->v6_prefix,
					.ifa_flags = IFA_F_PERMANENT,
					.ifa_scope = RT_SCOPE_HOST,
					.ifa_index = (uint32_t)d->index};
		size_t off = msg_begin(a, RTM_NEWADDR, flags, seq, portid, &ifa, sizeof(ifa));
		attr(a, IFA_ADDRESS, d->v6, 16);
		attr(a, IFA_CACHEINFO, &ci, sizeof(ci));
		attr_u32(a, IFA_FLAGS, ifa_flags);
		msg_end(a, off);
	}
}

/* One route: FAMILY, destination DST/PLEN of TYPE in TABLE, through lo (index 1). */
static void route_msg(struct answer *a, int family, const void *dst, int plen, int type, int table,
		      int scope, const void *prefsrc, uint32_t metric, uint32_t seq,
		      uint32_t portid)
{
	struct rtmsg rtm = {.rtm_family = (unsigned char)family,
			    .rtm_dst_len = (unsigned char)plen,
			    .rtm_table = (unsigned char)table,
			    .rtm_protocol = RTPROT_KERNEL,
			    .rtm_scope = (unsigned char)scope,
			    .rtm_type = (unsigned char)type};
	size_t alen = family == AF_INET ? 4 : 16;
	size_t off = msg_begin(a, RTM_NEWROUTE, NLM_F_MULTI, seq, portid, &rtm, sizeof(rtm));

	attr_u32(a, RTA_TABLE, (uint32_t)table);
	attr(a, RTA_DST, dst, alen);
	if (family == AF_INET6)
		attr_u32(a, RTA_PRIORITY, metric);
	if (prefsrc)
		attr(a, RTA_PREFSRC, prefsrc, alen);
	attr_u32(a, RTA_OIF, 1);
	msg_end(a, off);
}

/* lo's routes as Linux makes them: IPv4 in the local table (127.0.0.0/8, 127.0.0.1, the
 * broadcast address), IPv6 ::1 in the main table and the local one. */
static void routes(struct answer *a, int family, uint32_t seq, uint32_t portid)
{
	static const uint8_t net4[4] = {127, 0, 0, 0}, lo4[4] = {127, 0, 0, 1},
			     bcast4[4] = {127, 255, 255, 255};
	static const uint8_t lo6[16] = {[15] = 1};

	if (family == AF_UNSPEC || family == AF_INET) {
		route_msg(a, AF_INET, net4, 8, RTN_LOCAL, RT_TABLE_LOCAL, RT_SCOPE_HOST, lo4, 0,
			  seq, portid);
		route_msg(a, AF_INET, lo4, 32, RTN_LOCAL, RT_TABLE_LOCAL, RT_SCOPE_HOST, lo4, 0,
			  seq, portid);
		route_msg(a, AF_INET, bcast4, 32, RTN_BROADCAST, RT_TABLE_LOCAL, RT_SCOPE_LINK, lo4,
			  0, seq, portid);
	}
	if (family == AF_UNSPEC || family == AF_INET6) {
		route_msg(a, AF_INET6, lo6, 128, RTN_UNICAST, RT_TABLE_MAIN, RT_SCOPE_UNIVERSE,
			  NULL, 256, seq, portid);
		route_msg(a, AF_INET6, lo6, 128, RTN_LOCAL, RT_TABLE_LOCAL, RT_SCOPE_UNIVERSE, NULL,
			  0, seq, portid);
	}
}

/* --- requests ------------------------------------------------------------------------------ */

static void queue_answer(struct nl_sock *s, struct answer *a)
{
	if (a->oom || !a->len)
		return;
	struct iovec iov = {a->buf, a->len};
	struct sock_msg *m = sock_msg_new(NULL, &iov, 1, a->len, a->len, a->len + NL_OVERHEAD);
	if (!m)
		return;
	struct sockaddr_nl from = {.nl_family = AF_NETLINK}; /* the kernel */
	memcpy(m->from, &from, sizeof(from));
	m->fromlen = sizeof(from);
	sock_rq_push(&s->c, m);
}

static void done_msg(struct answer *a, uint32_t seq, uint32_t portid)
{
	int zero = 0;
	size_t off = msg_begin(a, NLMSG_DONE, NLM_F_MULTI, seq, portid, &zero, sizeof(zero));

	msg_end(a, off);
}

/* NLMSG_ERROR for request H: ERR (0: an acknowledgement, which echoes only the header, as
 * does an error with NETLINK_CAP_ACK; an error echoes the whole request otherwise). */
static void error_msg(struct nl_sock *s, struct answer *a, const struct nlmsghdr *h, int err)
{
	size_t echo = err && !(s->flags & NL_F_CAP_ACK) ? h->nlmsg_len : NLMSG_HDRLEN;
	struct nlmsghdr *e;
	size_t off = msg_begin(a, NLMSG_ERROR, echo == NLMSG_HDRLEN ? NLM_F_CAPPED : 0,
			       h->nlmsg_seq, s->portid, &err, sizeof(err));

	if ((e = put(a, echo)))
		memcpy(e, h, echo);
	msg_end(a, off);
}

/* The address family a GET request asks for: the first byte of its body (rtgenmsg, or the
 * family field that starts ifinfomsg, ifaddrmsg and rtmsg alike). */
static int req_family(const struct nlmsghdr *h)
{
	return h->nlmsg_len > NLMSG_HDRLEN ? *(const unsigned char *)NLMSG_DATA(h) : AF_UNSPEC;
}

/* RTM_GETLINK for one interface: by index, or by IFLA_IFNAME. */
static const struct vfs_netdev *link_target(const struct nlmsghdr *h)
{
	const struct ifinfomsg *ifi = NLMSG_DATA(h);

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)))
		return NULL;
	if (ifi->ifi_index)
		return vfs_netdev_by_index(ifi->ifi_index);
	int len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*ifi)));
	for (const struct rtattr *r = IFLA_RTA(ifi); RTA_OK(r, len); r = RTA_NEXT(r, len))
		if (r->rta_type == IFLA_IFNAME) {
			char name[IFNAMSIZ] = {0};
			size_t n = RTA_PAYLOAD(r) < IFNAMSIZ - 1 ? RTA_PAYLOAD(r) : IFNAMSIZ - 1;
			memcpy(name, RTA_DATA(r), n);
			return vfs_netdev_by_name(name);
		}
	return NULL;
}

/* --- NETLINK_SOCK_DIAG ---------------------------------------------------------------------- */

struct diag_ctx {
	struct answer *a;
	const struct nlmsghdr *req;
	uint32_t portid;
	int family; /* the request's: only sockets of it */
	uint32_t states;
	unsigned int show; /* unix: UDIAG_SHOW_* */
};

static int inet_diag_row(const struct vfs_inet_info *i, void *arg)
{
	struct diag_ctx *c = arg;
	struct inet_diag_msg m = {.idiag_family = (uint8_t)i->family,
				  .idiag_state = (uint8_t)i->state,
				  .idiag_rqueue = i->rxq,
				  .idiag_wqueue = i->txq,
				  .idiag_uid = i->uid,
				  .idiag_inode = (uint32_t)i->ino};

	if (i->family != c->family || !(c->states & (1u << i->state)))
		return 0;
	m.id.idiag_sport = htons(i->lport);
	m.id.idiag_dport = htons(i->rport);
	if (i->family == AF_INET) {
		memcpy(m.id.idiag_src, i->local + 12, 4);
		memcpy(m.id.idiag_dst, i->remote + 12, 4);
	} else {
		memcpy(m.id.idiag_src, i->local, 16);
		memcpy(m.id.idiag_dst, i->remote, 16);
	}
	m.id.idiag_cookie[0] = (uint32_t)i->ino;
	m.id.idiag_cookie[1] = (uint32_t)(i->ino >> 32);
	size_t off = msg_begin(c->a, SOCK_DIAG_BY_FAMILY, NLM_F_MULTI, c->req->nlmsg_seq, c->portid,
			       &m, sizeof(m));
	msg_end(c->a, off);
	return 0;
}

static int unix_diag_row(const struct vfs_unix_info *i, void *arg)
{
	struct diag_ctx *c = arg;
	int state = i->listening    ? 10
		    : i->state == 3 ? 1
				    : 7; /* TCP_LISTEN, _ESTABLISHED, _CLOSE */
	struct unix_diag_msg m = {.udiag_family = AF_UNIX,
				  .udiag_type = (uint8_t)i->type,
				  .udiag_state = (uint8_t)state,
				  .udiag_ino = (uint32_t)i->ino,
				  .udiag_cookie = {(uint32_t)i->ino, (uint32_t)(i->ino >> 32)}};
	size_t path = offsetof(struct sockaddr_un, sun_path);

	if (!(c->states & (1u << state)))
		return 0;
	size_t off = msg_begin(c->a, SOCK_DIAG_BY_FAMILY, NLM_F_MULTI, c->req->nlmsg_seq, c->portid,
			       &m, sizeof(m));
	if ((c->show & UDIAG_SHOW_NAME) && i->addrlen > path)
		attr(c->a, UNIX_DIAG_NAME, i->addr + path, i->addrlen - path);
	if (c->show & UDIAG_SHOW_RQLEN) {
		struct unix_diag_rqlen q = {0, 0};
		attr(c->a, UNIX_DIAG_RQLEN, &q, sizeof(q));
	}
	msg_end(c->a, off);
	return 0;
}

/* SOCK_DIAG_BY_FAMILY: a dump of the sockets of one family (and for AF_INET/AF_INET6, one
 * protocol) in the states asked for; -ENOENT for families without a diag module here. */
static int sock_diag(struct nl_sock *s, const struct nlmsghdr *h, struct answer *a)
{
	const unsigned char *body = NLMSG_DATA(h);
	size_t blen = h->nlmsg_len - NLMSG_HDRLEN;
	struct diag_ctx c = {.a = a, .req = h, .portid = s->portid};

	if (!(h->nlmsg_flags & NLM_F_DUMP) || blen < 1)
		return -EOPNOTSUPP;
	c.family = body[0];
	if (c.family == AF_INET || c.family == AF_INET6) {
		struct inet_diag_req_v2 r;
		if (blen < sizeof(r))
			return -EINVAL;
		memcpy(&r, body, sizeof(r));
		if (r.sdiag_protocol != IPPROTO_TCP && r.sdiag_protocol != IPPROTO_UDP)
			return -ENOENT;
		c.states = r.idiag_states;
		return vfs_inet_foreach(r.sdiag_protocol, inet_diag_row, &c);
	}
	if (c.family == AF_UNIX) {
		struct unix_diag_req r;
		if (blen < sizeof(r))
			return -EINVAL;
		memcpy(&r, body, sizeof(r));
		c.states = r.udiag_states;
		c.show = r.udiag_show;
		return vfs_unix_foreach(unix_diag_row, &c);
	}
	return -ENOENT;
}

/* Answers one request H (its length checked) on S. */
static void request(struct nl_sock *s, const struct nlmsghdr *h)
{
	struct answer a = {0};
	bool dump = (h->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
	int family = req_family(h), err = 0;
	const struct vfs_netdev *d;

	if (!(h->nlmsg_flags & NLM_F_REQUEST) || h->nlmsg_type < NLMSG_MIN_TYPE)
		return; /* not for the kernel, or a control message: nothing to do */
	if (s->protocol == NETLINK_SOCK_DIAG) {
		err = h->nlmsg_type == SOCK_DIAG_BY_FAMILY ? sock_diag(s, h, &a) : -EINVAL;
		goto answer;
	}
	switch (h->nlmsg_type) {
	case RTM_GETLINK:
		if (dump) {
			for (int i = 0; (d = vfs_netdev_at(i)); i++)
				link_msg(&a, d, NLM_F_MULTI, h->nlmsg_seq, s->portid);
		} else if ((d = link_target(h))) {
			link_msg(&a, d, 0, h->nlmsg_seq, s->portid);
		} else {
			err = -ENODEV;
		}
		break;
	case RTM_GETADDR:
		if (!dump) {
			err = -EOPNOTSUPP;
			break;
		}
		for (int i = 0; (d = vfs_netdev_at(i)); i++)
			addr_msgs(&a, d, family, NLM_F_MULTI, h->nlmsg_seq, s->portid);
		break;
	case RTM_GETROUTE:
		if (!dump) {
			err = -ENETUNREACH; /* a route lookup: only lo's own addresses have one */
			break;
		}
		routes(&a, family, h->nlmsg_seq, s->portid);
		break;
	case RTM_GETNEIGH:
	case RTM_GETRULE:
	case RTM_GETQDISC:
	case RTM_GETTCLASS:
	case RTM_GETTFILTER:
	case RTM_GETNETCONF:
	case RTM_GETNSID:
	case RTM_GETSTATS:
	case RTM_GETNEXTHOP:
		if (!dump)
			err = -EOPNOTSUPP;
		break; /* nothing of the kind exists */
	default:
		/* Every request but a GET needs CAP_NET_ADMIN (rtnetlink_rcv_msg). */
		err = h->nlmsg_type > RTM_MAX || (h->nlmsg_type & 3) == 2 ? -EOPNOTSUPP : -EPERM;
	}
answer:
	if (!err && dump) {
		queue_answer(s, &a);
		a.len = 0;
		done_msg(&a, h->nlmsg_seq, s->portid);
	} else if (err || (h->nlmsg_flags & NLM_F_ACK)) {
		error_msg(s, &a, h, err);
	}
	queue_answer(s, &a);
	free(a.buf);
}

/* --- socket operations --------------------------------------------------------------------- */

static int addr_in(const void *uaddr, unsigned int len, struct sockaddr_nl *nl)
{
	if (len < sizeof(*nl))
		return -EINVAL;
	memcpy(nl, uaddr, sizeof(*nl));
	return nl->nl_family == AF_NETLINK ? 0 : -EINVAL;
}

static int nl_bind(struct vfs_file *f, const void *uaddr, unsigned int len)
{
	struct nl_sock *s = f->priv;
	struct sockaddr_nl nl;
	int err = addr_in(uaddr, len, &nl);

	if (err)
		return err;
	if (s->portid && nl.nl_pid && nl.nl_pid != s->portid)
		return -EINVAL;
	if (!s->portid && nl.nl_pid) {
		if (by_portid(nl.nl_pid))
			return -EADDRINUSE;
		s->portid = nl.nl_pid;
	}
	autobind(s);
	s->groups = nl.nl_groups;
	return 0;
}

static int nl_listen(struct vfs_file *f, int backlog)
{
	(void)f;
	(void)backlog;
	return -EOPNOTSUPP;
}

static int nl_connect(struct vfs_file *f, const void *uaddr, unsigned int len)
{
	struct nl_sock *s = f->priv;
	struct sockaddr_nl nl;

	if (len >= sizeof(sa_family_t) &&
	    ((const struct sockaddr *)uaddr)->sa_family == AF_UNSPEC) {
		s->dst_portid = s->dst_groups = 0;
		return 0;
	}
	int err = addr_in(uaddr, len, &nl);
	if (err)
		return err;
	autobind(s);
	s->dst_portid = nl.nl_pid;
	s->dst_groups = nl.nl_groups;
	return 0;
}

static int nl_accept(struct vfs_file *f, int flags, struct vfs_file **out)
{
	(void)f;
	(void)flags;
	(void)out;
	return -EOPNOTSUPP;
}

static int nl_getname(struct vfs_file *f, int peer, void *addr, unsigned int *len)
{
	struct nl_sock *s = f->priv;
	struct sockaddr_nl nl = {.nl_family = AF_NETLINK};

	if (peer) {
		nl.nl_pid = s->dst_portid;
		nl.nl_groups = s->dst_groups;
	} else {
		nl.nl_pid = s->portid;
		nl.nl_groups = s->groups;
	}
	memcpy(addr, &nl, sizeof(nl));
	*len = sizeof(nl);
	return 0;
}

static ssize_t nl_sendmsg(struct vfs_file *f, struct vfs_sock_msg *m)
{
	struct nl_sock *s = f->priv;
	size_t len = sock_iov_total(m->iov, m->iovcnt);
	uint32_t dst = s->dst_portid;
	struct sockaddr_nl nl;
	int err;

	if (m->flags & MSG_OOB)
		return -EOPNOTSUPP;
	if (m->name && m->namelen) {
		if ((err = addr_in(m->name, m->namelen, &nl)))
			return err;
		dst = nl.nl_pid;
	}
	if (len > s->c.sndbuf - 32)
		return -EMSGSIZE;
	autobind(s);
	char *buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	sock_iov_copy_from(buf, m->iov, m->iovcnt, len);
	if (dst) {
		/* To another netlink socket of the sandbox. */
		struct nl_sock *o = by_portid(dst);
		struct iovec iov = {buf, len};
		struct sock_msg *msg =
		    o && o->c.rmem <= o->c.rcvbuf
			? sock_msg_new(NULL, &iov, 1, len, len, len + NL_OVERHEAD)
			: NULL;
		free(buf);
		if (!o)
			return -ECONNREFUSED;
		if (msg) {
			struct sockaddr_nl from = {.nl_family = AF_NETLINK, .nl_pid = s->portid};
			memcpy(msg->from, &from, sizeof(from));
			msg->fromlen = sizeof(from);
			sock_rq_push(&o->c, msg);
		}
		return (ssize_t)len;
	}
	size_t off = 0;
	while (len - off >= NLMSG_HDRLEN && len <= NL_REQUEST_MAX) {
		struct nlmsghdr *h = (struct nlmsghdr *)(buf + off);
		if (h->nlmsg_len < NLMSG_HDRLEN || h->nlmsg_len > len - off)
			break;
		request(s, h);
		off += NLMSG_ALIGN(h->nlmsg_len);
	}
	free(buf);
	return (ssize_t)len;
}

static ssize_t nl_recvmsg(struct vfs_file *f, struct vfs_sock_msg *m)
{
	struct nl_sock *s = f->priv;
	size_t room = sock_iov_total(m->iov, m->iovcnt);
	struct sock_msg *msg = s->c.rq;

	m->addrlen = 0;
	if (m->flags & MSG_OOB)
		return -EOPNOTSUPP;
	if (!msg)
		return -EAGAIN;
	size_t n = msg->len < room ? msg->len : room;
	sock_iov_copy_to(m->iov, m->iovcnt, 0, msg->data, n);
	if (msg->len > room)
		m->msg_flags |= MSG_TRUNC;
	if (m->addr) {
		memcpy(m->addr, msg->from, msg->fromlen);
		m->addrlen = msg->fromlen;
	}
	size_t len = msg->len;
	if (!(m->flags & MSG_PEEK))
		sock_msg_free(sock_rq_pop(&s->c));
	return (m->flags & MSG_TRUNC) ? (ssize_t)len : (ssize_t)n;
}

static int nl_shutdown(struct vfs_file *f, int how)
{
	(void)f;
	(void)how;
	return -EOPNOTSUPP;
}

static unsigned int opt_flag(int name)
{
	switch (name) {
	case NETLINK_EXT_ACK:
		return NL_F_EXT_ACK;
	case NETLINK_CAP_ACK:
		return NL_F_CAP_ACK;
	case NETLINK_GET_STRICT_CHK:
		return NL_F_STRICT;
	case NETLINK_NO_ENOBUFS:
		return NL_F_NO_ENOBUFS;
	case NETLINK_PKTINFO:
		return NL_F_PKTINFO;
	case NETLINK_LISTEN_ALL_NSID:
		return NL_F_LISTEN_ALL;
	}
	return 0;
}

static int nl_getsockopt(struct vfs_file *f, int level, int name, void *val, unsigned int *len)
{
	struct nl_sock *s = f->priv;
	int v;

	if (level == SOL_SOCKET) {
		switch (name) {
		case SO_TYPE:
			v = s->c.type;
			break;
		case SO_PROTOCOL:
			v = s->protocol;
			break;
		case SO_DOMAIN:
			v = AF_NETLINK;
			break;
		case SO_ERROR:
		case SO_ACCEPTCONN:
			v = 0;
			break;
		default:
			return sock_core_getsockopt(&s->c, name, val, len);
		}
	} else if (level == SOL_NETLINK) {
		if (name == NETLINK_LIST_MEMBERSHIPS) {
			memcpy(val, &s->groups, sizeof(s->groups));
			*len = sizeof(s->groups);
			return 0;
		}
		if (!opt_flag(name))
			return -ENOPROTOOPT;
		v = !!(s->flags & opt_flag(name));
	} else {
		return -ENOPROTOOPT;
	}
	memcpy(val, &v, sizeof(v));
	*len = sizeof(v);
	return 0;
}

static int nl_setsockopt(struct vfs_file *f, int level, int name, const void *val, unsigned int len)
{
	struct nl_sock *s = f->priv;
	int v;

	if (level == SOL_SOCKET)
		return sock_core_setsockopt(&s->c, name, val, len);
	if (level != SOL_NETLINK)
		return -ENOPROTOOPT;
	if (len < sizeof(int))
		return -EINVAL;
	memcpy(&v, val, sizeof(v));
	switch (name) {
	case NETLINK_ADD_MEMBERSHIP:
	case NETLINK_DROP_MEMBERSHIP:
		if (v <= 0 || v > RTNLGRP_MAX)
			return -EINVAL;
		if (v <= 32) {
			uint32_t bit = 1u << (v - 1);
			s->groups =
			    name == NETLINK_ADD_MEMBERSHIP ? s->groups | bit : s->groups & ~bit;
		}
		autobind(s);
		return 0;
	}
	if (!opt_flag(name))
		return -ENOPROTOOPT;
	s->flags = v ? s->flags | opt_flag(name) : s->flags & ~opt_flag(name);
	return 0;
}

static const struct vfs_sock_ops nl_sock_ops = {
    .family = AF_NETLINK,
    .bind = nl_bind,
    .listen = nl_listen,
    .connect = nl_connect,
    .accept = nl_accept,
    .getname = nl_getname,
    .sendmsg = nl_sendmsg,
    .recvmsg = nl_recvmsg,
    .shutdown = nl_shutdown,
    .getsockopt = nl_getsockopt,
    .setsockopt = nl_setsockopt,
};

/* --- the file ------------------------------------------------------------------------------ */

static ssize_t nl_read(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	struct vfs_sock_msg m = {.iov = iov, .iovcnt = iovcnt};

	(void)pos;
	return nl_recvmsg(f, &m);
}

static ssize_t nl_write(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	struct vfs_sock_msg m = {.iov = iov, .iovcnt = iovcnt};

	(void)pos;
	return nl_sendmsg(f, &m);
}

static uint32_t nl_poll(struct vfs_file *f, struct waitq **wq)
{
	struct nl_sock *s = f->priv;

	*wq = &s->c.wq;
	return (s->c.rq ? POLLIN | POLLRDNORM : 0) | POLLOUT | POLLWRNORM | POLLWRBAND;
}

static long nl_ioctl(struct vfs_file *f, unsigned int cmd, void *arg)
{
	struct nl_sock *s = f->priv;

	switch (cmd) {
	case FIONREAD:
		*(int *)arg = s->c.rq ? (int)s->c.rq->len : 0;
		return 0;
	case TIOCOUTQ:
		*(int *)arg = 0;
		return 0;
	}
	return -ENOTTY;
}

static int nl_getattr(struct vfs_file *f, struct stat *st)
{
	struct nl_sock *s = f->priv;

	sock_core_getattr(&s->c, st);
	return 0;
}

static void nl_release(struct vfs_file *f)
{
	struct nl_sock *s = f->priv;

	s->dead = true;
	sock_rq_purge(&s->c);
	waitq_detach_all(&s->c.wq);
	sock_core_put(&s->c);
}

static const struct vfs_file_ops nl_ops = {
    .read = nl_read,
    .write = nl_write,
    .ioctl = nl_ioctl,
    .getattr = nl_getattr,
    .poll = nl_poll,
    .release = nl_release,
    .sock = &nl_sock_ops,
    .pseudo_inode = sock_pseudo_inode,
};

/* --- checkpoint ---------------------------------------------------------------------------- */

/* The record: `u32` type, `u32` protocol, `u32` port id, `u32` groups, `u32` destination port
 * id and groups, `u32` option flags, the socket core, then the queued answers (`u64` count,
 * each `bytes` data and `bytes` source address). */

static int nl_save(struct enc *e, struct vfs_file *f)
{
	struct nl_sock *s = f->priv;
	uint64_t n = 0;

	enc_u32(e, (uint32_t)s->c.type);
	enc_u32(e, (uint32_t)s->protocol);
	enc_u32(e, s->portid);
	enc_u32(e, s->groups);
	enc_u32(e, s->dst_portid);
	enc_u32(e, s->dst_groups);
	enc_u32(e, s->flags);
	sock_core_save(e, &s->c);
	for (struct sock_msg *m = s->c.rq; m; m = m->next)
		n++;
	enc_u64(e, n);
	for (struct sock_msg *m = s->c.rq; m; m = m->next) {
		enc_bytes(e, m->data, m->len);
		enc_bytes(e, m->from, m->fromlen);
	}
	return 0;
}

static int nl_load(struct dec *d, struct vfs_file *f)
{
	static const struct vfs_unix_cred nobody;
	int type = (int)dec_u32(d), protocol = (int)dec_u32(d);
	struct nl_sock *s;

	if (!dec_ok(d))
		return -EINVAL;
	if (nl_new(type, protocol, &nobody, &s))
		return dec_fail(d, "bad netlink socket");
	s->portid = dec_u32(d);
	s->groups = dec_u32(d);
	s->dst_portid = dec_u32(d);
	s->dst_groups = dec_u32(d);
	s->flags = dec_u32(d);
	if (sock_core_load(d, &s->c) || (s->portid && portid_taken(s, s->portid)))
		goto fail;
	uint64_t n = dec_max(d, 4096, "netlink queue length");
	for (uint64_t i = 0; i < n && dec_ok(d); i++) {
		size_t len, fromlen;
		const void *data = dec_bytes(d, &len), *from = dec_bytes(d, &fromlen);
		if (!dec_ok(d) || len > NL_REQUEST_MAX || fromlen > SOCK_FROM_MAX) {
			dec_fail(d, "bad netlink message");
			break;
		}
		struct iovec iov = {(void *)data, len};
		struct sock_msg *m = sock_msg_new(NULL, &iov, 1, len, len, len + NL_OVERHEAD);
		if (!m) {
			dec_fail(d, "out of memory");
			break;
		}
		memcpy(m->from, from, fromlen);
		m->fromlen = (unsigned int)fromlen;
		sock_rq_push(&s->c, m);
	}
	if (!dec_ok(d))
		goto fail;
	f->priv = s;
	return 0;
fail:
	dec_fail(d, "bad netlink socket");
	s->dead = true;
	sock_core_put(&s->c);
	return -EINVAL;
}

const struct vfs_file_kind vfs_netlink_kind = {
    .name = "netlink",
    .ops = &nl_ops,
    .save = nl_save,
    .load = nl_load,
};
