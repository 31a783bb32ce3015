/* The sandbox's private loopback network: AF_INET and AF_INET6 endpoints, TCP (SOCK_STREAM)
 * and UDP (SOCK_DGRAM), on 127.0.0.0/8, ::1 and IPv4-mapped IPv6, and the port table they are
 * bound in. There is no packet: a TCP connection is two endpoints joined in the Sentry, each
 * one's receive queue holding what the other wrote (sock.h: the receiver pays), and a UDP
 * datagram goes straight onto the queue of the socket it is addressed to. What a program can
 * observe is Linux's loopback (states, errors, readiness, addresses, options); Linux's
 * net/ipv4/af_inet.c, tcp.c and udp.c are the model, and the states carry Linux's numbers so
 * that TCP_INFO and /proc/net/tcp show them as they are. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

#include "vfs/internal.h"
#include "vfs/save.h"
#include "vfs/sock.h"
#include "vfs/vfs.h"

/* Linux's TCP states (include/net/tcp_states.h); UDP sockets are CLOSE or ESTABLISHED. */
enum {
	ST_ESTABLISHED = 1,
	ST_SYN_SENT,
	ST_SYN_RECV,
	ST_FIN_WAIT1,
	ST_FIN_WAIT2,
	ST_TIME_WAIT,
	ST_CLOSE,
	ST_CLOSE_WAIT,
	ST_LAST_ACK,
	ST_LISTEN,
	ST_CLOSING,
};

#define RCV_SHUTDOWN 1
#define SEND_SHUTDOWN 2
#define SHUTDOWN_MASK 3

/* net.ipv4.tcp_wmem[1] and tcp_rmem[1]: a TCP socket's buffers before SO_SNDBUF/SO_RCVBUF. */
#define TCP_SNDBUF_DEFAULT 16384
#define TCP_RCVBUF_DEFAULT 131072
/* What a queued datagram costs its receiver beyond its bytes (Linux charges skb truesize). */
#define UDP_OVERHEAD 768
/* The largest UDP payloads (65535 less the IP and UDP headers). */
#define UDP4_MAX 65507
#define UDP6_MAX 65527
/* Loopback's MTU and the segment size TCP uses over it. */
#define LO_MTU 65536
#define LO_MSS 32768
#define PROT_SOCK 1024	    /* net.ipv4.ip_unprivileged_port_start */
#define SIN6_LEN_RFC2133 24 /* the least sockaddr_in6 Linux takes */
/* A stream's small writes share messages of at least this much room. */
#define STREAM_CHUNK 4096

/* An endpoint address: IPv6 form (IPv4 as ::ffff:a.b.c.d) and a port in host order. */
struct inet_ep {
	uint8_t addr[16];
	uint16_t port;
};

/* Per-socket integer options Linux keeps and reads back (table below). */
enum {
	OPT_TTL,
	OPT_TOS,
	OPT_RECVERR,
	OPT_PKTINFO,
	OPT_RECVTTL,
	OPT_RECVTOS,
	OPT_MTU_DISCOVER,
	OPT_MULTICAST_TTL,
	OPT_MULTICAST_LOOP,
	OPT_FREEBIND,
	OPT_BIND_NO_PORT,
	OPT_HDRINCL_UNUSED,
	OPT6_UNICAST_HOPS,
	OPT6_MULTICAST_HOPS,
	OPT6_MULTICAST_LOOP,
	OPT6_TCLASS,
	OPT6_RECVPKTINFO,
	OPT6_RECVERR,
	OPT6_MTU_DISCOVER,
	OPT6_RECVTCLASS,
	OPT6_RECVHOPLIMIT,
	OPT_NODELAY,
	OPT_CORK,
	OPT_KEEPIDLE,
	OPT_KEEPINTVL,
	OPT_KEEPCNT,
	OPT_MAXSEG,
	OPT_DEFER_ACCEPT,
	OPT_QUICKACK,
	OPT_USER_TIMEOUT,
	OPT_SYNCNT,
	OPT_LINGER2,
	OPT_WINDOW_CLAMP,
	OPT_FASTOPEN,
	OPT_NOTSENT_LOWAT,
	OPT_FASTOPEN_CONNECT,
	OPT_UDP_CORK,
	OPT_UDP_SEGMENT,
	OPT_UDP_GRO,
	NOPTS
};

#define FOR_TCP 1
#define FOR_UDP 2
#define FOR_V6 4      /* only on AF_INET6 sockets */
#define OPT_IS_BOOL 8 /* kept as 0 or 1 */
#define FOR_ALL (FOR_TCP | FOR_UDP)

static const struct int_opt {
	int level, name;
	int def;
	int min, max;
	unsigned int applies;
} int_opts[NOPTS] = {
    [OPT_TTL] = {IPPROTO_IP, IP_TTL, 64, 1, 255, FOR_ALL},
    [OPT_TOS] = {IPPROTO_IP, IP_TOS, 0, INT_MIN, INT_MAX, FOR_ALL},
    [OPT_RECVERR] = {IPPROTO_IP, IP_RECVERR, 0, INT_MIN, INT_MAX, OPT_IS_BOOL | FOR_ALL},
    [OPT_PKTINFO] = {IPPROTO_IP, IP_PKTINFO, 0, INT_MIN, INT_MAX, OPT_IS_BOOL | FOR_ALL},
    [OPT_RECVTTL] = {IPPROTO_IP, IP_RECVTTL, 0, INT_MIN, INT_MAX, OPT_IS_BOOL | FOR_ALL},
    [OPT_RECVTOS] = {IPPROTO_IP, IP_RECVTOS, 0, INT_MIN, INT_MAX, OPT_IS_BOOL | FOR_ALL},
    [OPT_MTU_DISCOVER] = {IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_WANT, 0, IP_PMTUDISC_OMIT,
			  FOR_ALL},
    [OPT_MULTICAST_TTL] = {IPPROTO_IP, IP_MULTICAST_TTL, 1, -1, 255, FOR_ALL},
    [OPT_MULTICAST_LOOP] = {IPPROTO_IP, IP_MULTICAST_LOOP, 1, INT_MIN, INT_MAX,
			    OPT_IS_BOOL | FOR_ALL},
    [OPT_FREEBIND] = {IPPROTO_IP, IP_FREEBIND, 0, INT_MIN, INT_MAX, OPT_IS_BOOL | FOR_ALL},
    [OPT_BIND_NO_PORT] = {IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 0, INT_MIN, INT_MAX,
			  OPT_IS_BOOL | FOR_ALL},
    [OPT_HDRINCL_UNUSED] = {-1, -1, 0, 0, 0, 0},
    [OPT6_UNICAST_HOPS] = {IPPROTO_IPV6, IPV6_UNICAST_HOPS, -1, -1, 255, FOR_ALL | FOR_V6},
    [OPT6_MULTICAST_HOPS] = {IPPROTO_IPV6, IPV6_MULTICAST_HOPS, -1, -1, 255, FOR_ALL | FOR_V6},
    [OPT6_MULTICAST_LOOP] = {IPPROTO_IPV6, IPV6_MULTICAST_LOOP, 1, 0, 1, FOR_ALL | FOR_V6},
    [OPT6_TCLASS] = {IPPROTO_IPV6, IPV6_TCLASS, 0, -1, 255, FOR_ALL | FOR_V6},
    [OPT6_RECVPKTINFO] = {IPPROTO_IPV6, IPV6_RECVPKTINFO, 0, INT_MIN, INT_MAX,
			  OPT_IS_BOOL | FOR_ALL | FOR_V6},
    [OPT6_RECVERR] = {IPPROTO_IPV6, IPV6_RECVERR, 0, INT_MIN, INT_MAX,
		      OPT_IS_BOOL | FOR_ALL | FOR_V6},
    [OPT6_MTU_DISCOVER] = {IPPROTO_IPV6, IPV6_MTU_DISCOVER, IPV6_PMTUDISC_WANT, 0,
			   IPV6_PMTUDISC_OMIT, FOR_ALL | FOR_V6},
    [OPT6_RECVTCLASS] = {IPPROTO_IPV6, IPV6_RECVTCLASS, 0, INT_MIN, INT_MAX,
			 OPT_IS_BOOL | FOR_ALL | FOR_V6},
    [OPT6_RECVHOPLIMIT] = {IPPROTO_IPV6, IPV6_RECVHOPLIMIT, 0, INT_MIN, INT_MAX,
			   OPT_IS_BOOL | FOR_ALL | FOR_V6},
    [OPT_NODELAY] = {IPPROTO_TCP, TCP_NODELAY, 0, INT_MIN, INT_MAX, OPT_IS_BOOL | FOR_TCP},
    [OPT_CORK] = {IPPROTO_TCP, TCP_CORK, 0, INT_MIN, INT_MAX, OPT_IS_BOOL | FOR_TCP},
    [OPT_KEEPIDLE] = {IPPROTO_TCP, TCP_KEEPIDLE, 7200, 1, 32767, FOR_TCP},
    [OPT_KEEPINTVL] = {IPPROTO_TCP, TCP_KEEPINTVL, 75, 1, 32767, FOR_TCP},
    [OPT_KEEPCNT] = {IPPROTO_TCP, TCP_KEEPCNT, 9, 1, 127, FOR_TCP},
    [OPT_MAXSEG] = {IPPROTO_TCP, TCP_MAXSEG, 0, 88, 32767, FOR_TCP},
    [OPT_DEFER_ACCEPT] = {IPPROTO_TCP, TCP_DEFER_ACCEPT, 0, INT_MIN, INT_MAX, FOR_TCP},
    [OPT_QUICKACK] = {IPPROTO_TCP, TCP_QUICKACK, 1, INT_MIN, INT_MAX, OPT_IS_BOOL | FOR_TCP},
    [OPT_USER_TIMEOUT] = {IPPROTO_TCP, TCP_USER_TIMEOUT, 0, 0, INT_MAX, FOR_TCP},
    [OPT_SYNCNT] = {IPPROTO_TCP, TCP_SYNCNT, 6, 1, 127, FOR_TCP},
    [OPT_LINGER2] = {IPPROTO_TCP, TCP_LINGER2, 60, INT_MIN, INT_MAX, FOR_TCP},
    [OPT_WINDOW_CLAMP] = {IPPROTO_TCP, TCP_WINDOW_CLAMP, 0, 0, INT_MAX, FOR_TCP},
    [OPT_FASTOPEN] = {IPPROTO_TCP, TCP_FASTOPEN, 0, 0, INT_MAX, FOR_TCP},
    [OPT_NOTSENT_LOWAT] = {IPPROTO_TCP, TCP_NOTSENT_LOWAT, 0, INT_MIN, INT_MAX, FOR_TCP},
    [OPT_FASTOPEN_CONNECT] = {IPPROTO_TCP, TCP_FASTOPEN_CONNECT, 0, 0, 1, FOR_TCP},
    [OPT_UDP_CORK] = {IPPROTO_UDP, UDP_CORK, 0, INT_MIN, INT_MAX, OPT_IS_BOOL | FOR_UDP},
    [OPT_UDP_SEGMENT] = {IPPROTO_UDP, UDP_SEGMENT, 0, 0, 65535, FOR_UDP},
    [OPT_UDP_GRO] = {IPPROTO_UDP, UDP_GRO, 0, INT_MIN, INT_MAX, OPT_IS_BOOL | FOR_UDP},
};

struct inet_sock {
	struct sock_core c; /* references: its file's (or an accept queue's), its peer's */
	int family;	    /* AF_INET or AF_INET6 */
	int protocol;	    /* IPPROTO_TCP or IPPROTO_UDP */
	int state;	    /* ST_* */
	bool connecting;    /* a connect that returned EINPROGRESS is not reported yet */
	bool ss_connected;  /* connect reported success (Linux's SS_CONNECTED): no other one */
	bool fin_sent;	    /* shutdown(SHUT_WR) or close sent the end of the stream */
	bool sndbuf_locked; /* SO_SNDBUF was set: TCP's autotuning leaves it alone */
	struct inet_ep local, remote;
	bool bound;	  /* LOCAL.port is taken in the port table */
	bool port_locked; /* bind chose the port (Linux's SOCK_BINDPORT_LOCK) */
	bool addr_locked; /* bind chose the address */
	bool v6only;
	bool dead; /* its file is gone (or, for an embryo, its listener) */
	int shutdown;
	int err; /* SO_ERROR */
	struct vfs_file *file;
	struct inet_sock *peer; /* TCP: the other end, a reference */
	/* A listener's accept queue: connected server ends waiting for accept (the queue holds
	 * their reference), and the connections waiting for room in it (SYN_SENT clients, no
	 * reference: each one's release unlinks it). */
	struct inet_sock *acc_head, *acc_tail, *acc_next;
	int acc_len, backlog;
	struct inet_sock *listener; /* an embryo's: whose queue holds it (no reference) */
	struct inet_sock *syn_head, *syn_tail, *syn_next;
	struct inet_sock *syn_target; /* a SYN_SENT client's listener (no reference) */
	int iopt[NOPTS];
	char congestion[16];
	char bound_dev[16]; /* SO_BINDTODEVICE: "" or "lo" */
	uint32_t drops;	    /* UDP datagrams its full queue refused */
	uint64_t bytes_sent, bytes_received, segs_out, segs_in;
	struct timespec last_send, last_recv;
	struct inet_sock *all_next, **all_pprev; /* every endpoint, in creation order */
};

static const struct vfs_file_ops inet_ops;
static const struct vfs_sock_ops inet_sock_ops;
static struct inet_sock *all_head, **all_tail = &all_head;
static int port_lo = 32768, port_hi = 60999;
static unsigned int port_seed;

/* --- addresses ----------------------------------------------------------------------------- */

static const uint8_t v4mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

static bool ep_is_v4(const uint8_t *a)
{
	return memcmp(a, v4mapped_prefix, 12) == 0;
}

static bool ep_is_v6any(const uint8_t *a)
{
	static const uint8_t zero[16];
	return memcmp(a, zero, 16) == 0;
}

static bool ep_is_v4any(const uint8_t *a)
{
	return ep_is_v4(a) && !a[12] && !a[13] && !a[14] && !a[15];
}

static bool ep_is_any(const uint8_t *a)
{
	return ep_is_v6any(a) || ep_is_v4any(a);
}

static void ep_set_v4(uint8_t *a, const void *in_addr)
{
	memcpy(a, v4mapped_prefix, 12);
	memcpy(a + 12, in_addr, 4);
}

static void ep_set_v4_loopback(uint8_t *a)
{
	static const uint8_t lo[4] = {127, 0, 0, 1};
	ep_set_v4(a, lo);
}

static void ep_set_v6_loopback(uint8_t *a)
{
	memset(a, 0, 16);
	a[15] = 1;
}

static bool ep_is_v6_loopback(const uint8_t *a)
{
	static const uint8_t lo[16] = {[15] = 1};
	return memcmp(a, lo, 16) == 0;
}

/* Local addresses of the sandbox: lo's 127.0.0.0/8 and ::1. */
static bool ep_is_local(const uint8_t *a)
{
	return ep_is_v4(a) ? a[12] == 127 : ep_is_v6_loopback(a);
}

static bool ep_is_v4_multicast(const uint8_t *a)
{
	return ep_is_v4(a) && (a[12] & 0xf0) == 0xe0;
}

static bool ep_is_v4_broadcast(const uint8_t *a)
{
	return ep_is_v4(a) && a[12] == 255 && a[13] == 255 && a[14] == 255 && a[15] == 255;
}

/* A guest sockaddr as an endpoint, for socket S. FOR_BIND: bind's checks (Linux's inet_bind
 * and inet6_bind); otherwise connect's and sendto's. */
static int addr_in(const struct inet_sock *s, const void *uaddr, unsigned int len, bool for_bind,
		   struct inet_ep *ep)
{
	sa_family_t fam;

	if (len < sizeof(fam))
		return -EINVAL;
	memcpy(&fam, uaddr, sizeof(fam));
	memset(ep, 0, sizeof(*ep));
	if (s->family == AF_INET) {
		struct sockaddr_in sin;
		if (len < sizeof(sin))
			return -EINVAL;
		memcpy(&sin, uaddr, sizeof(sin));
		if (fam != AF_INET) {
			/* Linux takes AF_UNSPEC for AF_INET, but bind only with INADDR_ANY. */
			if (fam != AF_UNSPEC ||
			    (for_bind && sin.sin_addr.s_addr != htonl(INADDR_ANY)))
				return -EAFNOSUPPORT;
		}
		ep_set_v4(ep->addr, &sin.sin_addr);
		ep->port = ntohs(sin.sin_port);
		return 0;
	}
	struct sockaddr_in6 sin6;
	if (len < SIN6_LEN_RFC2133)
		return -EINVAL;
	memset(&sin6, 0, sizeof(sin6));
	memcpy(&sin6, uaddr, len < sizeof(sin6) ? len : sizeof(sin6));
	if (fam != AF_INET6)
		return -EAFNOSUPPORT;
	memcpy(ep->addr, &sin6.sin6_addr, 16);
	ep->port = ntohs(sin6.sin6_port);
	if (ep_is_v4(ep->addr) && s->v6only)
		return for_bind ? -EINVAL : -ENETUNREACH;
	return 0;
}

/* The guest sockaddr of EP as socket S's family shows it. */
static void addr_out(const struct inet_sock *s, const struct inet_ep *ep, void *out,
		     unsigned int *len)
{
	if (s->family == AF_INET) {
		struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(ep->port)};
		memcpy(&sin.sin_addr, ep->addr + 12, 4);
		memcpy(out, &sin, sizeof(sin));
		*len = sizeof(sin);
	} else {
		struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6, .sin6_port = htons(ep->port)};
		memcpy(&sin6.sin6_addr, ep->addr, 16);
		memcpy(out, &sin6, sizeof(sin6));
		*len = sizeof(sin6);
	}
}

/* What S accepts as a bound socket: IPv4 destinations, IPv6 ones. */
static bool accepts_v4(const struct inet_sock *s, const uint8_t *local)
{
	return s->family == AF_INET || ep_is_v4(local) || (ep_is_v6any(local) && !s->v6only);
}

static bool accepts_v6(const struct inet_sock *s, const uint8_t *local)
{
	return s->family == AF_INET6 && !ep_is_v4(local);
}

/* Whether two sockets bound to A (for S) and B (for O) would receive for a common address
 * (Linux's inet_rcv_saddr_equal with wildcards matching anything). */
static bool addrs_overlap(const struct inet_sock *s, const uint8_t *a, const struct inet_sock *o,
			  const uint8_t *b)
{
	if (accepts_v4(s, a) && accepts_v4(o, b)) {
		bool a_any = ep_is_any(a), b_any = ep_is_any(b);
		if (a_any || b_any || memcmp(a + 12, b + 12, 4) == 0)
			return true;
	}
	if (accepts_v6(s, a) && accepts_v6(o, b))
		return ep_is_v6any(a) || ep_is_v6any(b) || memcmp(a, b, 16) == 0;
	return false;
}

/* How well S, bound, takes traffic for D: -1 not at all, more for an exact address and for
 * an AF_INET socket receiving IPv4 (Linux's compute_score). */
static int match_score(const struct inet_sock *s, const uint8_t *d)
{
	if (ep_is_v4(d)) {
		if (!accepts_v4(s, s->local.addr))
			return -1;
		int fam = s->family == AF_INET ? 1 : 0;
		if (ep_is_any(s->local.addr))
			return 1 + fam;
		return memcmp(s->local.addr + 12, d + 12, 4) == 0 ? 4 + fam : -1;
	}
	if (!accepts_v6(s, s->local.addr))
		return -1;
	if (ep_is_v6any(s->local.addr))
		return 1;
	return memcmp(s->local.addr, d, 16) == 0 ? 4 : -1;
}

/* Where a packet from S to DST would go and from which address (*SRC): only lo exists, so
 * anything but a local destination is unreachable. DST's any address means the host itself,
 * as Linux routes it. */
static int route(const struct inet_sock *s, struct inet_ep *dst, struct inet_ep *src)
{
	if (ep_is_v4any(dst->addr))
		ep_set_v4_loopback(dst->addr);
	else if (ep_is_v6any(dst->addr))
		ep_set_v6_loopback(dst->addr);
	if (ep_is_v4(dst->addr) && s->family == AF_INET6 && s->v6only)
		return -ENETUNREACH;
	if (ep_is_v4_broadcast(dst->addr) && !sock_opt(&s->c, SO_BROADCAST))
		return -EACCES;
	if (!ep_is_local(dst->addr))
		return -ENETUNREACH;
	*src = s->local;
	if (ep_is_any(src->addr)) {
		if (ep_is_v4(dst->addr))
			ep_set_v4_loopback(src->addr);
		else
			ep_set_v6_loopback(src->addr);
	} else if (ep_is_v4(src->addr) != ep_is_v4(dst->addr)) {
		return -ENETUNREACH;
	}
	return 0;
}

static bool is_tcp(const struct inet_sock *s)
{
	return s->protocol == IPPROTO_TCP;
}

/* --- the port table ------------------------------------------------------------------------ */

void vfs_inet_port_range(int *lo, int *hi)
{
	*lo = port_lo;
	*hi = port_hi;
}

int vfs_inet_set_port_range(int lo, int hi)
{
	if (lo < 1 || hi > 65535 || lo > hi)
		return -EINVAL;
	port_lo = lo;
	port_hi = hi;
	return 0;
}

/* Whether S may not take PORT on ADDR because of another bound socket (Linux's
 * inet_bind_conflict and udp_lib_lport_inuse): the addresses overlap and neither
 * SO_REUSEADDR (on both, the other one not listening) nor SO_REUSEPORT (on both, same
 * owner) allows sharing. */
static bool port_conflict(const struct inet_sock *s, const uint8_t *addr, uint16_t port)
{
	bool s_reuse = sock_opt(&s->c, SO_REUSEADDR), s_reuseport = sock_opt(&s->c, SO_REUSEPORT);

	for (struct inet_sock *o = all_head; o; o = o->all_next) {
		if (o == s || !o->bound || o->protocol != s->protocol || o->local.port != port)
			continue;
		if (!addrs_overlap(s, addr, o, o->local.addr))
			continue;
		bool o_reuse = sock_opt(&o->c, SO_REUSEADDR);
		if (s_reuse && o_reuse && (!is_tcp(o) || o->state != ST_LISTEN))
			continue;
		if (s_reuseport && sock_opt(&o->c, SO_REUSEPORT) &&
		    s->c.owner.uid == o->c.owner.uid)
			continue;
		return true;
	}
	return false;
}

/* A free port for S on ADDR from the ephemeral range: bind picks odd ones and connect even
 * ones, as Linux leaves the parity of the range's start to connect (PARITY 1 or 0; -1 any).
 * -EADDRINUSE when none is left. */
static int pick_port(const struct inet_sock *s, const uint8_t *addr, int parity)
{
	int n = port_hi - port_lo + 1;

	if (!port_seed) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		port_seed = (unsigned int)(ts.tv_nsec ^ ts.tv_sec) | 1;
	}
	port_seed = port_seed * 1103515245u + 12345u;
	int start = (int)((port_seed >> 8) % (unsigned int)n);
	for (int i = 0; i < n; i++) {
		int p = port_lo + (start + i) % n;
		if (parity >= 0 && ((p - port_lo) & 1) != parity && n > 1)
			continue;
		if (!port_conflict(s, addr, (uint16_t)p))
			return p;
	}
	return -EADDRINUSE;
}

/* The wildcard address of S's family into A. */
static void set_any(const struct inet_sock *s, uint8_t *a)
{
	memset(a, 0, 16);
	if (s->family == AF_INET)
		memcpy(a, v4mapped_prefix, 12);
}

/* Gives back the port (and the address, unless bind chose it) that S took implicitly. */
static void unbind(struct inet_sock *s)
{
	s->bound = false;
	s->port_locked = false;
	s->local.port = 0;
	if (!s->addr_locked)
		set_any(s, s->local.addr);
}

/* Binds S to an ephemeral port on its address (autobind: listen, send and connect do it). */
static int autobind(struct inet_sock *s, int parity)
{
	if (s->bound)
		return 0;
	int p = pick_port(s, s->local.addr, parity);
	if (p < 0)
		return parity == 0 ? -EADDRNOTAVAIL : -EAGAIN;
	s->local.port = (uint16_t)p;
	s->bound = true;
	return 0;
}

/* --- sockets ------------------------------------------------------------------------------- */

static struct inet_sock *inet_of(struct sock_core *c)
{
	return (struct inet_sock *)c;
}

static struct inet_sock *sk_get(struct inet_sock *s)
{
	sock_core_get(&s->c);
	return s;
}

static void sk_put(struct inet_sock *s)
{
	if (s)
		sock_core_put(&s->c);
}

static void sk_free(struct sock_core *c)
{
	struct inet_sock *s = inet_of(c);

	if (s->all_pprev) {
		*s->all_pprev = s->all_next;
		if (s->all_next)
			s->all_next->all_pprev = s->all_pprev;
		else
			all_tail = s->all_pprev;
	}
	free(s);
}

static struct inet_sock *sk_new(int family, int protocol, const struct vfs_unix_cred *owner)
{
	struct inet_sock *s = calloc(1, sizeof(*s));
	bool tcp = protocol == IPPROTO_TCP;

	if (!s)
		return NULL;
	sock_core_init(&s->c, tcp ? SOCK_STREAM : SOCK_DGRAM, owner,
		       tcp ? TCP_SNDBUF_DEFAULT : SOCK_BUF_DEFAULT,
		       tcp ? TCP_RCVBUF_DEFAULT : SOCK_BUF_DEFAULT, sk_free);
	s->family = family;
	s->protocol = protocol;
	s->state = ST_CLOSE;
	if (family == AF_INET)
		memcpy(s->local.addr, v4mapped_prefix, 12);
	s->remote = s->local;
	for (int i = 0; i < NOPTS; i++)
		s->iopt[i] = int_opts[i].def;
	strcpy(s->congestion, "cubic");
	s->all_pprev = all_tail;
	*all_tail = s;
	all_tail = &s->all_next;
	return s;
}

static struct vfs_file *sk_file(struct inet_sock *s, int flags)
{
	struct vfs_file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->ops = &inet_ops;
	f->refs = 1;
	f->flags = O_RDWR | (flags & O_NONBLOCK);
	f->priv = s;
	s->file = f;
	return f;
}

static void wake(struct inet_sock *s, uint32_t events)
{
	waitq_wake(&s->c.wq, events);
}

int vfs_inet_socket_new(int family, int type, int protocol, int flags,
			const struct vfs_unix_cred *owner, struct vfs_file **out)
{
	struct inet_sock *s;

	if (family != AF_INET && family != AF_INET6)
		return -EAFNOSUPPORT;
	switch (type) {
	case SOCK_STREAM:
		if (protocol && protocol != IPPROTO_TCP)
			return -EPROTONOSUPPORT;
		protocol = IPPROTO_TCP;
		break;
	case SOCK_DGRAM:
		if (protocol == IPPROTO_ICMP || protocol == IPPROTO_ICMPV6)
			return -EACCES; /* ping sockets: outside net.ipv4.ping_group_range */
		if (protocol && protocol != IPPROTO_UDP)
			return -EPROTONOSUPPORT;
		protocol = IPPROTO_UDP;
		break;
	case SOCK_RAW:
		return -EPERM; /* no CAP_NET_RAW */
	default:
		return -ESOCKTNOSUPPORT;
	}
	if (!(s = sk_new(family, protocol, owner)))
		return -ENOMEM;
	if (!(*out = sk_file(s, flags))) {
		sk_put(s);
		return -ENOMEM;
	}
	return 0;
}

bool vfs_is_inet_socket(struct vfs_file *f)
{
	return f->ops == &inet_ops;
}

/* Options an accepted socket gets from its listener, as Linux's clone of the listening sock. */
static void inherit(struct inet_sock *e, const struct inet_sock *l)
{
	e->c.opts = l->c.opts;
	e->c.sndbuf = l->c.sndbuf;
	e->c.rcvbuf = l->c.rcvbuf;
	memcpy(e->iopt, l->iopt, sizeof(e->iopt));
	memcpy(e->congestion, l->congestion, sizeof(e->congestion));
	memcpy(e->bound_dev, l->bound_dev, sizeof(e->bound_dev));
	e->v6only = l->v6only;
}

/* --- TCP connections ----------------------------------------------------------------------- */

/* A peer that is gone with a reset: what it does to S (Linux's tcp_reset). */
static void tcp_reset(struct inet_sock *s)
{
	if (s->state == ST_SYN_SENT)
		s->err = ECONNREFUSED;
	else if (s->state == ST_CLOSE_WAIT)
		s->err = EPIPE;
	else if (s->state != ST_CLOSE)
		s->err = ECONNRESET;
	s->state = ST_CLOSE;
	s->shutdown = SHUTDOWN_MASK;
	wake(s, 0);
}

/* S's peer sent its FIN: S reads to the end of what is queued, then EOF. */
static void tcp_fin_received(struct inet_sock *s)
{
	s->shutdown |= RCV_SHUTDOWN;
	if (s->state == ST_ESTABLISHED)
		s->state = ST_CLOSE_WAIT;
	else if (s->state == ST_FIN_WAIT2 || s->state == ST_FIN_WAIT1)
		s->state = ST_CLOSE; /* then TIME_WAIT, which the socket no longer shows */
	wake(s, 0);
}

/* Breaks S's connection: the peer sees a reset (RESET) or the end of the stream. */
static void tcp_unlink_peer(struct inet_sock *s, bool reset)
{
	struct inet_sock *p = s->peer;

	if (!p)
		return;
	s->peer = NULL;
	if (p->peer == s) {
		p->peer = NULL;
		sk_put(s);
		if (reset)
			tcp_reset(p);
		else
			tcp_fin_received(p);
	}
	sk_put(p);
}

static void syn_unlink(struct inet_sock *c)
{
	struct inet_sock *l = c->syn_target;

	if (!l)
		return;
	for (struct inet_sock **pp = &l->syn_head, *prev = NULL; *pp;
	     prev = *pp, pp = &(*pp)->syn_next)
		if (*pp == c) {
			*pp = c->syn_next;
			if (l->syn_tail == c)
				l->syn_tail = prev;
			break;
		}
	c->syn_next = NULL;
	c->syn_target = NULL;
}

static bool acc_full(const struct inet_sock *l)
{
	return l->acc_len > l->backlog;
}

/* Linux grows an established connection's send buffer (tcp_wmem[2] on loopback, where the
 * round trip is short and the window wide) unless the program set SO_SNDBUF: what a writer
 * can queue before EAGAIN, and what getsockopt then reads, follow. */
static void autotune(struct inet_sock *s)
{
	if (!s->sndbuf_locked && s->c.sndbuf < SOCK_BUF_GROWN_MAX)
		s->c.sndbuf = SOCK_BUF_GROWN_MAX;
}

/* Joins client C to listener L: a new server end E, connected to C, waits in L's accept
 * queue (Linux's three-way handshake, finished before accept as on loopback). DST is the
 * address C connected to (E's local address). */
static int tcp_establish(struct inet_sock *c, struct inet_sock *l, const struct inet_ep *dst)
{
	struct inet_sock *e = sk_new(l->family, IPPROTO_TCP, &l->c.owner);

	if (!e)
		return -ENOMEM;
	inherit(e, l);
	e->local = *dst;
	e->remote = c->local;
	e->bound = true;
	e->ss_connected = true;
	e->state = ST_ESTABLISHED;
	e->sndbuf_locked = l->sndbuf_locked;
	autotune(e);
	autotune(c);
	e->peer = sk_get(c);
	c->peer = sk_get(e);
	c->state = ST_ESTABLISHED;
	c->remote = *dst;
	if (l->acc_tail)
		l->acc_tail->acc_next = e;
	else
		l->acc_head = e;
	l->acc_tail = e;
	l->acc_len++;
	e->listener = l;
	clock_gettime(CLOCK_MONOTONIC, &e->last_recv);
	c->last_send = c->last_recv = e->last_recv;
	wake(l, POLLIN);
	wake(c, POLLOUT);
	return 0;
}

/* Room appeared in L's accept queue: the first client waiting for it connects. */
static void syn_admit(struct inet_sock *l)
{
	while (l->syn_head && !acc_full(l)) {
		struct inet_sock *c = l->syn_head;
		struct inet_ep dst = c->remote;
		syn_unlink(c);
		if (tcp_establish(c, l, &dst)) {
			tcp_reset(c);
			break;
		}
	}
}

/* L stops listening (close, shutdown): queued connections are reset, waiting ones refused. */
static void listener_stop(struct inet_sock *l)
{
	while (l->syn_head) {
		struct inet_sock *c = l->syn_head;
		syn_unlink(c);
		tcp_reset(c);
	}
	while (l->acc_head) {
		struct inet_sock *e = l->acc_head;
		l->acc_head = e->acc_next;
		e->acc_next = NULL;
		e->listener = NULL;
		e->dead = true;
		tcp_unlink_peer(e, true);
		e->bound = false;
		sk_put(e);
	}
	l->acc_tail = NULL;
	l->acc_len = 0;
	l->state = ST_CLOSE;
	wake(l, 0);
}

/* The listener a connection to DST reaches, or NULL: the best address match, and among the
 * members of a SO_REUSEPORT group, one chosen by a hash of the client's port (Linux spreads by
 * a hash of the four-tuple). */
static struct inet_sock *find_listener(const struct inet_ep *dst, const struct inet_ep *src)
{
	struct inet_sock *best = NULL;
	int best_score = -1, n = 0;

	for (struct inet_sock *s = all_head; s; s = s->all_next) {
		if (s->protocol != IPPROTO_TCP || s->state != ST_LISTEN ||
		    s->local.port != dst->port)
			continue;
		int sc = match_score(s, dst->addr);
		if (sc > best_score) {
			best = s;
			best_score = sc;
			n = 1;
		} else if (sc == best_score && sc >= 0) {
			n++;
		}
	}
	if (!best || n == 1 || !sock_opt(&best->c, SO_REUSEPORT))
		return best;
	uint32_t h = ((uint32_t)src->port * 2654435761u) ^ ((uint32_t)src->addr[15] << 16);
	int pick = (int)((h >> 16) % (uint32_t)n);
	for (struct inet_sock *s = all_head; s; s = s->all_next)
		if (s->protocol == IPPROTO_TCP && s->state == ST_LISTEN &&
		    s->local.port == dst->port && match_score(s, dst->addr) == best_score &&
		    sock_opt(&s->c, SO_REUSEPORT) && pick-- == 0)
			return s;
	return best;
}

/* connect(2) with AF_UNSPEC on a TCP socket: the connection is dropped with a reset. */
static int tcp_disconnect(struct inet_sock *s)
{
	if (s->state == ST_LISTEN)
		listener_stop(s);
	syn_unlink(s);
	tcp_unlink_peer(s, true);
	sock_rq_purge(&s->c);
	s->state = ST_CLOSE;
	s->shutdown = 0;
	s->fin_sent = false;
	s->connecting = false;
	s->ss_connected = false;
	if (!s->port_locked)
		unbind(s);
	set_any(s, s->remote.addr);
	s->remote.port = 0;
	wake(s, 0);
	return 0;
}

static int tcp_connect(struct vfs_file *f, struct inet_sock *s, const void *uaddr, unsigned int len)
{
	bool nonblock = f->flags & O_NONBLOCK;
	struct inet_ep dst, src;
	int err;

	if (s->connecting) {
		/* A connect already under way: its outcome, once (Linux's SS_CONNECTING). */
		if (s->state == ST_SYN_SENT)
			return -EALREADY;
		s->connecting = false;
		if (s->state == ST_CLOSE) {
			err = s->err ? -s->err : -ECONNABORTED;
			s->err = 0;
			return err;
		}
		s->ss_connected = true;
		return 0;
	}
	if (len >= sizeof(sa_family_t) && ((const struct sockaddr *)uaddr)->sa_family == AF_UNSPEC)
		return tcp_disconnect(s);
	if (s->state != ST_CLOSE || s->ss_connected)
		return -EISCONN;
	if ((err = addr_in(s, uaddr, len, false, &dst)))
		return err;
	if (ep_is_v4_broadcast(dst.addr) || ep_is_v4_multicast(dst.addr))
		return -ENETUNREACH;
	if ((err = route(s, &dst, &src)))
		return err;
	bool was_bound = s->bound;
	if (!ep_is_any(src.addr) && !s->addr_locked)
		memcpy(s->local.addr, src.addr, 16);
	if ((err = autobind(s, 0))) {
		if (!s->addr_locked)
			unbind(s);
		return err;
	}
	s->shutdown = 0;
	s->err = 0;
	s->remote = dst;
	struct inet_sock *l = find_listener(&dst, &s->local);
	if (!l || (l->shutdown & RCV_SHUTDOWN)) {
		/* Nothing listens: the SYN is answered by a reset. */
		if (!was_bound)
			unbind(s);
		else if (!s->addr_locked)
			set_any(s, s->local.addr);
		set_any(s, s->remote.addr);
		s->remote.port = 0;
		if (!nonblock)
			return -ECONNREFUSED;
		s->err = ECONNREFUSED;
		s->connecting = true;
		s->shutdown = SHUTDOWN_MASK;
		return -EINPROGRESS;
	}
	if (acc_full(l)) {
		/* The accept queue is full: the SYN waits (Linux drops it and retries). */
		s->state = ST_SYN_SENT;
		s->syn_target = l;
		if (l->syn_tail)
			l->syn_tail->syn_next = s;
		else
			l->syn_head = s;
		l->syn_tail = s;
		s->connecting = true;
		return -EINPROGRESS;
	}
	if ((err = tcp_establish(s, l, &dst)))
		return err;
	if (nonblock) {
		s->connecting = true;
		return -EINPROGRESS;
	}
	s->ss_connected = true;
	return 0;
}

static int tcp_listen(struct inet_sock *s, int backlog)
{
	if ((s->state != ST_CLOSE && s->state != ST_LISTEN) || s->connecting || s->ss_connected)
		return -EINVAL;
	if (s->state == ST_CLOSE) {
		if (s->bound && port_conflict(s, s->local.addr, s->local.port))
			return -EADDRINUSE;
		int err = autobind(s, 1);
		if (err)
			return err == -EAGAIN ? -EADDRINUSE : err;
		s->shutdown = 0;
		s->state = ST_LISTEN;
	}
	s->backlog = backlog;
	syn_admit(s);
	return 0;
}

/* --- TCP data ------------------------------------------------------------------------------ */

/* Bytes S has in flight towards its peer that the peer's window does not hold yet (what
 * SIOCOUTQ reports: unacknowledged data). */
static size_t tcp_outq(const struct inet_sock *s)
{
	if (!s->peer)
		return 0;
	size_t q = s->peer->c.rq_bytes, win = s->peer->c.rcvbuf;
	return q > win ? q - win : 0;
}

/* The most S may have queued at its peer: the peer's receive buffer plus S's send buffer. */
static size_t tcp_capacity(const struct inet_sock *s)
{
	return s->c.sndbuf + s->peer->c.rcvbuf;
}

static bool tcp_writable(const struct inet_sock *s)
{
	if (!s->peer)
		return true;
	size_t used = s->peer->c.rq_bytes, cap = tcp_capacity(s);
	/* Linux's sk_stream_is_writeable: free space at least half of what is queued. */
	return used < cap && cap - used >= used / 2;
}

static ssize_t tcp_send(struct inet_sock *s, struct vfs_sock_msg *m)
{
	size_t total = sock_iov_total(m->iov, m->iovcnt);
	struct inet_sock *p = s->peer;

	/* Urgent data: a peer that set SO_OOBINLINE reads it in line, as Linux delivers it
	 * (ftplib's ABOR); otherwise its last byte would leave the stream for recv(MSG_OOB),
	 * which is not offered. */
	if ((m->flags & MSG_OOB) && !(p && sock_opt(&p->c, SO_OOBINLINE)))
		return -EOPNOTSUPP;
	if (s->err) {
		int err = s->err;
		s->err = 0;
		return -err;
	}
	if (s->shutdown & SEND_SHUTDOWN)
		return -EPIPE;
	if (s->state == ST_SYN_SENT)
		return -EAGAIN;
	if (s->state != ST_ESTABLISHED && s->state != ST_CLOSE_WAIT)
		return -EPIPE;
	if (!p) {
		/* The peer closed: the data is lost and its reset ends the connection. */
		s->err = EPIPE;
		s->state = ST_CLOSE;
		s->shutdown = SHUTDOWN_MASK;
		wake(s, 0);
		return (ssize_t)total;
	}
	if (total == 0)
		return 0;
	size_t cap = tcp_capacity(s), used = p->c.rq_bytes;
	if (used >= cap)
		return -EAGAIN;
	size_t chunk = cap - used < total ? cap - used : total;
	if (!sock_rq_append(&p->c, m->iov, m->iovcnt, chunk)) {
		size_t room = chunk < STREAM_CHUNK ? STREAM_CHUNK : chunk;
		struct sock_msg *msg = sock_msg_new(NULL, m->iov, m->iovcnt, chunk, room, chunk);
		if (!msg)
			return -ENOMEM;
		sock_rq_push(&p->c, msg);
	}
	s->bytes_sent += chunk;
	s->segs_out += (chunk + LO_MSS - 1) / LO_MSS;
	netdev_lo_xmit((chunk + LO_MSS - 1) / LO_MSS, chunk + 66 * ((chunk + LO_MSS - 1) / LO_MSS));
	p->bytes_received += chunk;
	p->segs_in += (chunk + LO_MSS - 1) / LO_MSS;
	clock_gettime(CLOCK_MONOTONIC, &s->last_send);
	p->last_recv = s->last_send;
	return (ssize_t)chunk;
}

static ssize_t tcp_recv(struct vfs_file *f, struct inet_sock *s, struct vfs_sock_msg *m)
{
	size_t room = sock_iov_total(m->iov, m->iovcnt), copied = 0;
	bool peek = m->flags & MSG_PEEK, trunc = m->flags & MSG_TRUNC;
	bool nonblock = (m->flags & MSG_DONTWAIT) || (f->flags & O_NONBLOCK);

	if (s->state == ST_LISTEN)
		return -ENOTCONN;
	if (m->flags & MSG_OOB)
		return -EINVAL; /* no urgent data is ever sent */
	if (!s->c.rq_bytes) {
		if (s->err) {
			int err = s->err;
			s->err = 0;
			return -err;
		}
		if (s->shutdown & RCV_SHUTDOWN)
			return 0;
		if (s->state == ST_CLOSE)
			return -ENOTCONN;
		return -EAGAIN;
	}
	/* A blocking read waits for SO_RCVLOWAT bytes (or all it asked for, if fewer). */
	size_t target = (size_t)s->c.opts.rcvlowat < room ? (size_t)s->c.opts.rcvlowat : room;
	if (!nonblock && s->c.rq_bytes < target && !(s->shutdown & RCV_SHUTDOWN) && !s->err)
		return -EAGAIN;
	for (struct sock_msg *msg = s->c.rq; msg && copied < room;) {
		size_t n = msg->len - msg->off;
		if (n > room - copied)
			n = room - copied;
		if (!trunc)
			sock_iov_copy_to(m->iov, m->iovcnt, copied, msg->data + msg->off, n);
		copied += n;
		if (peek) {
			msg = msg->next;
			continue;
		}
		sock_rq_consume(&s->c, msg, n);
		if (msg->off < msg->len)
			break;
		sock_msg_free(sock_rq_pop(&s->c));
		msg = s->c.rq;
	}
	if (!peek && s->peer)
		wake(s->peer, POLLOUT);
	return (ssize_t)copied;
}

/* --- UDP ----------------------------------------------------------------------------------- */

/* The socket a datagram from SRC to DST is delivered to, or NULL (Linux's udp lookup: a
 * connected socket only takes its peer's datagrams; the best address match wins, a
 * SO_REUSEPORT group shares by a hash of the source port). */
static struct inet_sock *udp_find(const struct inet_ep *dst, const struct inet_ep *src)
{
	struct inet_sock *best = NULL;
	int best_score = -1, n = 0;

	for (struct inet_sock *s = all_head; s; s = s->all_next) {
		if (s->protocol != IPPROTO_UDP || !s->bound || s->local.port != dst->port ||
		    s->dead)
			continue;
		int sc = match_score(s, dst->addr);
		if (sc < 0)
			continue;
		if (s->state == ST_ESTABLISHED) {
			if (s->remote.port != src->port ||
			    (ep_is_v4(src->addr) ? memcmp(s->remote.addr + 12, src->addr + 12, 4)
						 : memcmp(s->remote.addr, src->addr, 16)))
				continue;
			sc += 8;
		}
		if (sc > best_score) {
			best = s;
			best_score = sc;
			n = 1;
		} else if (sc == best_score) {
			n++;
		}
	}
	if (!best || n == 1 || !sock_opt(&best->c, SO_REUSEPORT))
		return best;
	int pick = (int)((((uint32_t)src->port * 2654435761u) >> 16) % (uint32_t)n);
	for (struct inet_sock *s = all_head; s; s = s->all_next)
		if (s->protocol == IPPROTO_UDP && s->bound && !s->dead &&
		    s->local.port == dst->port && s->state != ST_ESTABLISHED &&
		    match_score(s, dst->addr) == best_score && pick-- == 0)
			return s;
	return best;
}

static int udp_connect(struct inet_sock *s, const void *uaddr, unsigned int len)
{
	struct inet_ep dst, src;
	int err;

	if (len >= sizeof(sa_family_t) &&
	    ((const struct sockaddr *)uaddr)->sa_family == AF_UNSPEC) {
		/* Dissolve the association; what connect chose goes back to the wildcard. */
		s->state = ST_CLOSE;
		set_any(s, s->remote.addr);
		s->remote.port = 0;
		if (!s->port_locked && s->bound)
			unbind(s);
		else if (!s->addr_locked)
			set_any(s, s->local.addr);
		return 0;
	}
	if (s->family == AF_INET6 && len >= sizeof(struct sockaddr_in) &&
	    ((const struct sockaddr *)uaddr)->sa_family == AF_INET) {
		/* ip6_datagram_connect takes an IPv4 address too, as its mapped form. */
		struct sockaddr_in sin;
		if (s->v6only)
			return -EAFNOSUPPORT;
		memcpy(&sin, uaddr, sizeof(sin));
		memset(&dst, 0, sizeof(dst));
		ep_set_v4(dst.addr, &sin.sin_addr);
		dst.port = ntohs(sin.sin_port);
	} else if ((err = addr_in(s, uaddr, len, false, &dst))) {
		return err;
	}
	if ((err = route(s, &dst, &src)))
		return err;
	if ((err = autobind(s, -1)))
		return err;
	if (!s->addr_locked)
		memcpy(s->local.addr, src.addr, 16);
	s->remote = dst;
	s->state = ST_ESTABLISHED;
	return 0;
}

static ssize_t udp_send(struct inet_sock *s, struct vfs_sock_msg *m)
{
	size_t len = sock_iov_total(m->iov, m->iovcnt);
	struct inet_ep dst, src;
	int err;

	if (m->flags & MSG_OOB)
		return -EOPNOTSUPP;
	if (m->name && m->namelen) {
		sa_family_t fam;
		memcpy(&fam, m->name, m->namelen < sizeof(fam) ? 0 : sizeof(fam));
		if (m->namelen < sizeof(fam))
			return -EINVAL;
		if (s->family == AF_INET6 && fam == AF_UNSPEC)
			goto connected; /* udpv6_sendmsg: no address */
		if (s->family == AF_INET6 && fam == AF_INET) {
			/* udpv6_sendmsg sends an IPv4 address as IPv4, unless v6only. */
			struct sockaddr_in sin;
			if (m->namelen < sizeof(sin))
				return -EINVAL;
			if (s->v6only)
				return -ENETUNREACH;
			memcpy(&sin, m->name, sizeof(sin));
			memset(&dst, 0, sizeof(dst));
			ep_set_v4(dst.addr, &sin.sin_addr);
			dst.port = ntohs(sin.sin_port);
		} else if (s->family == AF_INET6 && fam != AF_INET6) {
			return -EINVAL;
		} else if ((err = addr_in(s, m->name, m->namelen, false, &dst))) {
			return err;
		}
		if (dst.port == 0)
			return -EINVAL;
	} else {
	connected:
		if (s->state != ST_ESTABLISHED)
			return -EDESTADDRREQ;
		dst = s->remote;
	}
	if (len > (ep_is_v4(dst.addr) ? UDP4_MAX : UDP6_MAX))
		return -EMSGSIZE;
	if (s->err && s->state == ST_ESTABLISHED && !m->name) {
		err = s->err;
		s->err = 0;
		return -err;
	}
	if ((err = route(s, &dst, &src)))
		return err;
	if ((err = autobind(s, -1)))
		return err;
	src.port = s->local.port;
	struct inet_sock *r = udp_find(&dst, &src);
	if (!r) {
		/* ICMP port unreachable: reported to a connected socket (Linux's udp_err). */
		if (s->state == ST_ESTABLISHED) {
			s->err = ECONNREFUSED;
			wake(s, POLLERR);
		}
		return (ssize_t)len;
	}
	if (r->c.rmem > r->c.rcvbuf || (r->shutdown & RCV_SHUTDOWN)) {
		r->drops++;
		return (ssize_t)len;
	}
	struct sock_msg *msg = sock_msg_new(NULL, m->iov, m->iovcnt, len, len, len + UDP_OVERHEAD);
	if (!msg)
		return -ENOMEM;
	addr_out(r, &src, msg->from, &msg->fromlen);
	sock_rq_push(&r->c, msg);
	netdev_lo_xmit(1, len + (ep_is_v4(dst.addr) ? 42 : 62));
	s->bytes_sent += len;
	r->bytes_received += len;
	return (ssize_t)len;
}

static ssize_t udp_recv(struct inet_sock *s, struct vfs_sock_msg *m)
{
	size_t room = sock_iov_total(m->iov, m->iovcnt);
	bool peek = m->flags & MSG_PEEK;
	struct sock_msg *msg = s->c.rq;

	if (m->flags & MSG_OOB)
		return -EOPNOTSUPP;
	if (s->err) {
		int err = s->err;
		s->err = 0;
		return -err;
	}
	if (!msg)
		return (s->shutdown & RCV_SHUTDOWN) ? 0 : -EAGAIN;
	size_t n = msg->len < room ? msg->len : room;
	sock_iov_copy_to(m->iov, m->iovcnt, 0, msg->data, n);
	if (msg->len > room)
		m->msg_flags |= MSG_TRUNC;
	if (m->addr) {
		memcpy(m->addr, msg->from, msg->fromlen);
		m->addrlen = msg->fromlen;
	}
	size_t len = msg->len;
	if (!peek)
		sock_msg_free(sock_rq_pop(&s->c));
	return (m->flags & MSG_TRUNC) ? (ssize_t)len : (ssize_t)n;
}

/* --- the socket operations ----------------------------------------------------------------- */

static int inet_bind(struct vfs_file *f, const void *uaddr, unsigned int len)
{
	struct inet_sock *s = f->priv;
	struct inet_ep ep;
	int err;

	if ((err = addr_in(s, uaddr, len, true, &ep)))
		return err;
	if (!ep_is_any(ep.addr) && !ep_is_local(ep.addr) && !s->iopt[OPT_FREEBIND] &&
	    !(s->protocol == IPPROTO_UDP &&
	      (ep_is_v4_multicast(ep.addr) || ep_is_v4_broadcast(ep.addr))))
		return -EADDRNOTAVAIL;
	if (ep.port && ep.port < PROT_SOCK && s->c.owner.uid != 0)
		return -EACCES;
	if (s->bound || s->state != ST_CLOSE)
		return -EINVAL;
	if (ep.port) {
		if (port_conflict(s, ep.addr, ep.port))
			return -EADDRINUSE;
	} else if (!s->iopt[OPT_BIND_NO_PORT] || !is_tcp(s)) {
		int p = pick_port(s, ep.addr, is_tcp(s) ? 1 : -1);
		if (p < 0)
			return p;
		ep.port = (uint16_t)p;
	}
	s->local = ep;
	s->bound = ep.port != 0;
	s->port_locked = ep.port != 0;
	s->addr_locked = !ep_is_any(ep.addr);
	return 0;
}

static int inet_listen(struct vfs_file *f, int backlog)
{
	struct inet_sock *s = f->priv;

	if (!is_tcp(s))
		return -EOPNOTSUPP;
	return tcp_listen(s, backlog);
}

static int inet_connect(struct vfs_file *f, const void *uaddr, unsigned int len)
{
	struct inet_sock *s = f->priv;

	return is_tcp(s) ? tcp_connect(f, s, uaddr, len) : udp_connect(s, uaddr, len);
}

static int inet_accept(struct vfs_file *f, int flags, struct vfs_file **out)
{
	struct inet_sock *s = f->priv, *e;

	if (!is_tcp(s))
		return -EOPNOTSUPP;
	if (s->state != ST_LISTEN)
		return -EINVAL;
	if (!(e = s->acc_head))
		return -EAGAIN;
	if (!(*out = sk_file(e, flags)))
		return -ENOMEM;
	s->acc_head = e->acc_next;
	if (!s->acc_head)
		s->acc_tail = NULL;
	e->acc_next = NULL;
	e->listener = NULL;
	s->acc_len--;
	syn_admit(s);
	return 0;
}

static int inet_getname(struct vfs_file *f, int peer, void *addr, unsigned int *len)
{
	struct inet_sock *s = f->priv;

	if (peer) {
		/* Linux's inet_getname: no peer port, or (for getpeername) a TCP socket closed or
		 * still connecting. */
		bool gone = is_tcp(s) ? s->state == ST_CLOSE || s->state == ST_SYN_SENT ||
					    s->state == ST_LISTEN
				      : s->state != ST_ESTABLISHED;
		if (!s->remote.port || (gone && peer == 1))
			return -ENOTCONN;
		addr_out(s, &s->remote, addr, len);
	} else {
		addr_out(s, &s->local, addr, len);
	}
	return 0;
}

static ssize_t inet_sendmsg(struct vfs_file *f, struct vfs_sock_msg *m)
{
	struct inet_sock *s = f->priv;

	return is_tcp(s) ? tcp_send(s, m) : udp_send(s, m);
}

static ssize_t inet_recvmsg(struct vfs_file *f, struct vfs_sock_msg *m)
{
	struct inet_sock *s = f->priv;

	m->addrlen = 0;
	if (m->flags & MSG_ERRQUEUE)
		return -EAGAIN; /* nothing ever goes on the error queue */
	/* A stream reports no source address (recvfrom's length comes back 0). */
	return is_tcp(s) ? tcp_recv(f, s, m) : udp_recv(s, m);
}

static int inet_shutdown(struct vfs_file *f, int how)
{
	struct inet_sock *s = f->priv;

	if (how < SHUT_RD || how > SHUT_RDWR)
		return -EINVAL;
	int mode = how + 1;
	if (!is_tcp(s)) {
		s->shutdown |= mode;
		wake(s, 0);
		return s->state == ST_ESTABLISHED ? 0 : -ENOTCONN;
	}
	switch (s->state) {
	case ST_LISTEN:
		if (mode & RCV_SHUTDOWN)
			listener_stop(s);
		return 0;
	case ST_SYN_SENT:
		syn_unlink(s);
		s->state = ST_CLOSE;
		s->connecting = false;
		wake(s, 0);
		return 0;
	case ST_CLOSE:
		s->shutdown |= mode;
		wake(s, 0);
		return -ENOTCONN;
	}
	s->shutdown |= mode;
	if ((mode & SEND_SHUTDOWN) && !s->fin_sent) {
		s->fin_sent = true;
		if (s->state == ST_ESTABLISHED)
			s->state = ST_FIN_WAIT2;
		else if (s->state == ST_CLOSE_WAIT)
			s->state = ST_CLOSE; /* LAST_ACK, acknowledged at once */
		if (s->peer)
			tcp_fin_received(s->peer);
	}
	wake(s, 0);
	return 0;
}

/* --- options ------------------------------------------------------------------------------- */

static const struct int_opt *find_opt(const struct inet_sock *s, int level, int name, int *idx)
{
	unsigned int kind = is_tcp(s) ? FOR_TCP : FOR_UDP;

	for (int i = 0; i < NOPTS; i++) {
		const struct int_opt *o = &int_opts[i];
		if (o->level != level || o->name != name || !(o->applies & kind))
			continue;
		if ((o->applies & FOR_V6) && s->family != AF_INET6)
			return NULL;
		*idx = i;
		return o;
	}
	return NULL;
}

/* Whether LEVEL is one S answers at all (another one is ENOPROTOOPT, as Linux's ip_*sockopt
 * says for levels it does not know). */
static bool level_ok(const struct inet_sock *s, int level)
{
	switch (level) {
	case IPPROTO_IP:
		return true;
	case IPPROTO_IPV6:
		return s->family == AF_INET6;
	case IPPROTO_TCP:
		return is_tcp(s);
	case IPPROTO_UDP:
		return !is_tcp(s);
	}
	return false;
}

static bool has_route(const struct inet_sock *s)
{
	return is_tcp(s) ? s->state != ST_CLOSE && s->state != ST_LISTEN
			 : s->state == ST_ESTABLISHED;
}

static uint32_t ms_since(const struct timespec *t)
{
	struct timespec now;

	if (!t->tv_sec && !t->tv_nsec)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint32_t)((now.tv_sec - t->tv_sec) * 1000 + (now.tv_nsec - t->tv_nsec) / 1000000);
}

/* TCP_INFO: the state and counters a loopback connection shows (no loss, no retransmits, a
 * window that is the peer's buffer). A listener's unacked/sacked are its accept queue's
 * length and backlog, as Linux reports them. */
static void tcp_info(const struct inet_sock *s, struct tcp_info *ti)
{
	bool conn = s->state != ST_CLOSE && s->state != ST_LISTEN && s->state != ST_SYN_SENT;

	memset(ti, 0, sizeof(*ti));
	ti->tcpi_state = (uint8_t)s->state;
	ti->tcpi_rto = conn ? 204000 : 1000000;
	ti->tcpi_ato = conn ? 40000 : 0;
	ti->tcpi_snd_mss = conn ? LO_MSS : TCP_MSS_DEFAULT;
	ti->tcpi_rcv_mss = TCP_MSS_DEFAULT;
	ti->tcpi_advmss = LO_MSS;
	ti->tcpi_pmtu = LO_MTU - 1;
	ti->tcpi_snd_ssthresh = 0x7fffffff;
	ti->tcpi_snd_cwnd = 10;
	ti->tcpi_reordering = 3;
	if (s->state == ST_LISTEN) {
		ti->tcpi_unacked = (uint32_t)s->acc_len;
		ti->tcpi_sacked = (uint32_t)s->backlog;
		return;
	}
	if (!conn)
		return;
	ti->tcpi_options = TCPI_OPT_TIMESTAMPS | TCPI_OPT_SACK | TCPI_OPT_WSCALE;
	ti->tcpi_snd_wscale = 7;
	ti->tcpi_rcv_wscale = 7;
	ti->tcpi_rtt = 20;
	ti->tcpi_rttvar = 10;
	ti->tcpi_rcv_ssthresh = (uint32_t)s->c.rcvbuf / 2;
	ti->tcpi_rcv_space = (uint32_t)s->c.rcvbuf / 2;
	ti->tcpi_last_data_sent = ms_since(&s->last_send);
	ti->tcpi_last_data_recv = ms_since(&s->last_recv);
	ti->tcpi_last_ack_recv = ti->tcpi_last_data_sent;
	ti->tcpi_pacing_rate = ~0ull;
	ti->tcpi_max_pacing_rate = ~0ull;
	ti->tcpi_bytes_acked = s->bytes_sent - tcp_outq(s);
	ti->tcpi_bytes_received = s->bytes_received;
	ti->tcpi_segs_out = (uint32_t)s->segs_out + 2;
	ti->tcpi_segs_in = (uint32_t)s->segs_in + 2;
	ti->tcpi_data_segs_out = (uint32_t)s->segs_out;
	ti->tcpi_data_segs_in = (uint32_t)s->segs_in;
	ti->tcpi_notsent_bytes = (uint32_t)tcp_outq(s);
	ti->tcpi_min_rtt = 10;
	ti->tcpi_bytes_sent = s->bytes_sent;
	ti->tcpi_snd_wnd = s->peer ? (uint32_t)s->peer->c.rcvbuf : 0;
	ti->tcpi_unacked = tcp_outq(s) ? 1 : 0;
}

static int inet_getsockopt(struct vfs_file *f, int level, int name, void *val, unsigned int *len)
{
	struct inet_sock *s = f->priv;
	int v, idx;

	if (level == SOL_SOCKET) {
		switch (name) {
		case SO_TYPE:
			v = s->c.type;
			break;
		case SO_PROTOCOL:
			v = s->protocol;
			break;
		case SO_DOMAIN:
			v = s->family;
			break;
		case SO_ACCEPTCONN:
			v = s->state == ST_LISTEN;
			break;
		case SO_ERROR:
			v = s->err;
			s->err = 0;
			break;
		case SO_PEERCRED: {
			struct vfs_unix_cred c = {0, (uint32_t)-1, (uint32_t)-1};
			memcpy(val, &c, sizeof(c));
			*len = sizeof(c);
			return 0;
		}
		case SO_BINDTODEVICE:
			/* The device's name with its NUL, or nothing when bound to none. */
			*len = s->bound_dev[0] ? (unsigned int)strlen(s->bound_dev) + 1 : 0;
			memcpy(val, s->bound_dev, *len);
			return 0;
		case SO_COOKIE: {
			uint64_t cookie = s->c.ino;
			memcpy(val, &cookie, sizeof(cookie));
			*len = sizeof(cookie);
			return 0;
		}
		default:
			return sock_core_getsockopt(&s->c, name, val, len);
		}
		memcpy(val, &v, sizeof(v));
		*len = sizeof(v);
		return 0;
	}
	if (!level_ok(s, level))
		return s->family == AF_INET ? -EOPNOTSUPP : -ENOPROTOOPT;
	if (level == IPPROTO_TCP && name == TCP_INFO) {
		struct tcp_info ti;
		tcp_info(s, &ti);
		unsigned int n = *len < sizeof(ti) ? *len : (unsigned int)sizeof(ti);
		memcpy(val, &ti, n);
		*len = n;
		return 0;
	}
	if (level == IPPROTO_TCP && name == TCP_CONGESTION) {
		memset(val, 0, 16);
		strcpy(val, s->congestion);
		*len = 16;
		return 0;
	}
	if ((level == IPPROTO_IP && name == IP_MTU) ||
	    (level == IPPROTO_IPV6 && name == IPV6_MTU)) {
		if (!has_route(s))
			return -ENOTCONN;
		v = LO_MTU;
	} else if (level == IPPROTO_IP && name == IP_OPTIONS) {
		*len = 0;
		return 0;
	} else if (level == IPPROTO_IPV6 && name == IPV6_V6ONLY) {
		v = s->v6only;
	} else if (level == IPPROTO_TCP && name == TCP_MAXSEG) {
		if (has_route(s))
			v = LO_MSS;
		else
			v = s->iopt[OPT_MAXSEG] ? s->iopt[OPT_MAXSEG] : (int)TCP_MSS_DEFAULT;
	} else {
		if (!find_opt(s, level, name, &idx))
			return -ENOPROTOOPT;
		v = s->iopt[idx];
		if (idx == OPT6_UNICAST_HOPS && v < 0)
			v = s->iopt[OPT_TTL];
		else if (idx == OPT6_MULTICAST_HOPS && v < 0)
			v = 1;
	}
	memcpy(val, &v, sizeof(v));
	*len = sizeof(v);
	return 0;
}

static int inet_setsockopt(struct vfs_file *f, int level, int name, const void *val,
			   unsigned int len)
{
	struct inet_sock *s = f->priv;
	int v = 0, idx, err;

	if (level == SOL_SOCKET) {
		switch (name) {
		case SO_BINDTODEVICE: {
			char dev[17] = {0};
			memcpy(dev, val, len < 16 ? len : 16);
			if (dev[0] && !vfs_netdev_by_name(dev))
				return -ENODEV;
			strcpy(s->bound_dev, dev);
			return 0;
		}
		case SO_MARK:
			if (len < sizeof(int))
				return -EINVAL;
			return s->c.owner.uid == 0 ? 0 : -EPERM; /* CAP_NET_ADMIN */
		case SO_SNDBUF:
		case SO_RCVBUF:
			if ((err = sock_core_setsockopt(&s->c, name, val, len)))
				return err;
			if (name == SO_SNDBUF)
				s->sndbuf_locked = true;
			if (s->peer)
				wake(s->peer, POLLOUT); /* the window changed */
			return 0;
		}
		return sock_core_setsockopt(&s->c, name, val, len);
	}
	if (!level_ok(s, level))
		return -ENOPROTOOPT;
	if (level == IPPROTO_TCP && name == TCP_CONGESTION) {
		char name_buf[16] = {0};
		memcpy(name_buf, val, len < 15 ? len : 15);
		if (strcmp(name_buf, "cubic") && strcmp(name_buf, "reno"))
			return -ENOENT;
		strcpy(s->congestion, name_buf);
		return 0;
	}
	if ((level == IPPROTO_IP && (name == IP_ADD_MEMBERSHIP || name == IP_DROP_MEMBERSHIP)) ||
	    (level == IPPROTO_IPV6 &&
	     (name == IPV6_ADD_MEMBERSHIP || name == IPV6_DROP_MEMBERSHIP)))
		return -ENODEV; /* lo does not do multicast */
	if (len < sizeof(int)) {
		if (level != IPPROTO_IP || len < 1)
			return -EINVAL;
		v = *(const unsigned char *)val; /* ip_setsockopt takes a char too */
	} else {
		memcpy(&v, val, sizeof(v));
	}
	if (level == IPPROTO_IPV6 && name == IPV6_V6ONLY) {
		if (s->bound || s->state != ST_CLOSE)
			return -EINVAL;
		s->v6only = v != 0;
		return 0;
	}
	if (level == IPPROTO_IP && name == IP_TRANSPARENT)
		return s->c.owner.uid == 0 ? 0 : -EPERM;
	const struct int_opt *o = find_opt(s, level, name, &idx);
	if (!o)
		return -ENOPROTOOPT;
	if (idx == OPT_TTL && v == -1)
		v = o->def;
	if (idx == OPT_MULTICAST_TTL && v == -1)
		v = 1;
	if (v < o->min || v > o->max) {
		if (idx != OPT_MAXSEG || v != 0)
			return -EINVAL;
	}
	if (idx == OPT_TOS)
		v &= 0xff;
	s->iopt[idx] = (o->applies & OPT_IS_BOOL) ? v != 0 : v;
	return 0;
}

/* --- the file ------------------------------------------------------------------------------ */

static ssize_t inet_read(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	struct vfs_sock_msg m = {.iov = iov, .iovcnt = iovcnt};

	(void)pos;
	return inet_recvmsg(f, &m);
}

static ssize_t inet_write(struct vfs_file *f, const struct iovec *iov, int iovcnt, off_t *pos)
{
	struct vfs_sock_msg m = {.iov = iov, .iovcnt = iovcnt};

	(void)pos;
	return inet_sendmsg(f, &m);
}

static uint32_t inet_poll(struct vfs_file *f, struct waitq **wq)
{
	struct inet_sock *s = f->priv;
	uint32_t m = 0;

	*wq = &s->c.wq;
	if (is_tcp(s) && s->state == ST_LISTEN)
		return s->acc_head ? POLLIN | POLLRDNORM : 0;
	if (s->err)
		m |= POLLERR;
	if (s->shutdown == SHUTDOWN_MASK || (is_tcp(s) && s->state == ST_CLOSE))
		m |= POLLHUP;
	if (s->shutdown & RCV_SHUTDOWN)
		m |= POLLIN | POLLRDNORM | POLLRDHUP;
	if (!is_tcp(s)) {
		if (s->c.rq)
			m |= POLLIN | POLLRDNORM;
		return m | POLLOUT | POLLWRNORM | POLLWRBAND;
	}
	if (s->state == ST_SYN_SENT)
		return m;
	if (s->c.rq_bytes && s->c.rq_bytes >= (size_t)s->c.opts.rcvlowat)
		m |= POLLIN | POLLRDNORM;
	if ((s->shutdown & SEND_SHUTDOWN) || tcp_writable(s))
		m |= POLLOUT | POLLWRNORM;
	return m;
}

static long inet_ioctl(struct vfs_file *f, unsigned int cmd, void *arg)
{
	struct inet_sock *s = f->priv;

	switch (cmd) {
	case FIONREAD:
		if (is_tcp(s)) {
			if (s->state == ST_LISTEN)
				return -EINVAL;
			*(int *)arg = (int)s->c.rq_bytes;
		} else {
			*(int *)arg = s->c.rq ? (int)s->c.rq->len : 0;
		}
		return 0;
	case TIOCOUTQ:
	case SIOCOUTQNSD:
		if (!is_tcp(s)) {
			if (cmd == SIOCOUTQNSD)
				return -ENOTTY;
			*(int *)arg = 0;
			return 0;
		}
		if (s->state == ST_LISTEN)
			return -EINVAL;
		*(int *)arg = (int)tcp_outq(s);
		return 0;
	case SIOCATMARK:
		if (!is_tcp(s))
			return -ENOTTY;
		*(int *)arg = 0;
		return 0;
	default:
		return -ENOTTY;
	}
}

static int inet_getattr(struct vfs_file *f, struct stat *st)
{
	struct inet_sock *s = f->priv;

	sock_core_getattr(&s->c, st);
	return 0;
}

/* The end of S's file. A connection's peer sees the end of the stream, or a reset if S had
 * unread data or SO_LINGER with a zero time (Linux's tcp_close); a listener's queued
 * connections are reset. */
static void inet_release(struct vfs_file *f)
{
	struct inet_sock *s = f->priv;

	s->dead = true;
	s->file = NULL;
	syn_unlink(s);
	if (is_tcp(s) && s->state == ST_LISTEN)
		listener_stop(s);
	if (s->peer) {
		bool reset = s->c.rq_bytes || (s->c.opts.linger_onoff && !s->c.opts.linger_secs);
		tcp_unlink_peer(s, reset);
	}
	s->state = ST_CLOSE;
	s->bound = false;
	sock_rq_purge(&s->c);
	waitq_detach_all(&s->c.wq);
	sk_put(s);
}

static const struct vfs_sock_ops inet_sock_ops = {
    .family = AF_INET,
    .bind = inet_bind,
    .listen = inet_listen,
    .connect = inet_connect,
    .accept = inet_accept,
    .getname = inet_getname,
    .sendmsg = inet_sendmsg,
    .recvmsg = inet_recvmsg,
    .shutdown = inet_shutdown,
    .getsockopt = inet_getsockopt,
    .setsockopt = inet_setsockopt,
};

static const struct vfs_file_ops inet_ops = {
    .read = inet_read,
    .write = inet_write,
    .ioctl = inet_ioctl,
    .getattr = inet_getattr,
    .poll = inet_poll,
    .release = inet_release,
    .sock = &inet_sock_ops,
    .pseudo_inode = sock_pseudo_inode,
};

/* --- /proc/net ----------------------------------------------------------------------------- */

int vfs_inet_foreach(int protocol, int (*fn)(const struct vfs_inet_info *i, void *arg), void *arg)
{
	for (struct inet_sock *s = all_head; s; s = s->all_next) {
		if (s->protocol != protocol || (s->dead && !s->listener))
			continue;
		/* Linux lists TCP sockets in its listening and connection tables, UDP ones once
		 * bound. */
		if (protocol == IPPROTO_TCP ? s->state == ST_CLOSE : !s->bound)
			continue;
		struct vfs_inet_info i = {
		    .family = s->family,
		    .protocol = s->protocol,
		    .state = s->state,
		    .lport = s->local.port,
		    .rport = s->remote.port,
		    .uid = s->c.owner.uid,
		    .ino = s->c.ino,
		    .drops = s->drops,
		};
		memcpy(i.local, s->local.addr, 16);
		memcpy(i.remote, s->remote.addr, 16);
		if (s->state == ST_LISTEN) {
			i.rxq = (uint32_t)s->acc_len;
			i.txq = (uint32_t)s->backlog;
		} else if (is_tcp(s)) {
			i.rxq = (uint32_t)s->c.rq_bytes;
			i.txq = (uint32_t)tcp_outq(s);
		} else {
			i.rxq = (uint32_t)s->c.rmem;
		}
		int r = fn(&i, arg);
		if (r)
			return r;
	}
	return 0;
}

/* --- checkpoint ---------------------------------------------------------------------------- */

/* A socket file's CK_FILE record is its endpoint's state and receive queue, and for a
 * listener those of the connections in its accept queue (endpoints without a file of their
 * own). What points at other endpoints is the CK_FILE_LINKS record, loaded once every file
 * exists: a connection's peer (named by its file, or by its listener's file and place in the
 * accept queue), each queued connection's peer, and a listener's connects waiting for room.
 * The port table is not saved: a restored endpoint takes its port again as it was. */

enum { PEER_NONE, PEER_FILE, PEER_EMBRYO };

#define INET_MSG_MAX (64u << 20) /* no stream message outgrows the buffers */
#define INET_QUEUE_MAX 65536	 /* messages on one queue */

static void ep_save(struct enc *e, const struct inet_ep *ep)
{
	enc_raw(e, ep->addr, 16);
	enc_u32(e, ep->port);
}

static bool ep_load(struct dec *d, struct inet_ep *ep)
{
	dec_raw(d, ep->addr, 16);
	uint32_t port = dec_u32(d);
	ep->port = (uint16_t)port;
	return port <= 65535;
}

static void sk_state_save(struct enc *e, const struct inet_sock *s)
{
	uint64_t n = 0;

	enc_u32(e, (uint32_t)s->family);
	enc_u32(e, (uint32_t)s->protocol);
	enc_u8(e, (uint8_t)s->state);
	enc_bool(e, s->connecting);
	enc_bool(e, s->ss_connected);
	enc_bool(e, s->fin_sent);
	enc_bool(e, s->sndbuf_locked);
	ep_save(e, &s->local);
	ep_save(e, &s->remote);
	enc_bool(e, s->bound);
	enc_bool(e, s->port_locked);
	enc_bool(e, s->addr_locked);
	enc_bool(e, s->v6only);
	enc_u8(e, (uint8_t)s->shutdown);
	enc_u32(e, (uint32_t)s->err);
	enc_u32(e, (uint32_t)s->backlog);
	sock_core_save(e, &s->c);
	enc_u32(e, NOPTS);
	for (int i = 0; i < NOPTS; i++)
		enc_u32(e, (uint32_t)s->iopt[i]);
	enc_str(e, s->congestion);
	enc_str(e, s->bound_dev);
	enc_u32(e, s->drops);
	enc_u64(e, s->bytes_sent);
	enc_u64(e, s->bytes_received);
	enc_u64(e, s->segs_out);
	enc_u64(e, s->segs_in);
	for (struct sock_msg *m = s->c.rq; m; m = m->next)
		n++;
	enc_u64(e, n);
	for (struct sock_msg *m = s->c.rq; m; m = m->next) {
		enc_bytes(e, m->data + m->off, m->len - m->off);
		enc_bytes(e, m->from, m->fromlen);
	}
}

static bool state_valid(int protocol, int state, bool embryo)
{
	if (protocol == IPPROTO_UDP)
		return state == ST_CLOSE || state == ST_ESTABLISHED;
	if (state < ST_ESTABLISHED || state > ST_CLOSING)
		return false;
	return !embryo || (state != ST_LISTEN && state != ST_SYN_SENT);
}

/* An endpoint from its saved state (the caller's reference), or NULL with D's error set. */
static struct inet_sock *sk_state_load(struct dec *d, bool embryo)
{
	static const struct vfs_unix_cred nobody;
	int family = (int)dec_u32(d), protocol = (int)dec_u32(d), state = dec_u8(d);
	struct inet_sock *s;

	if (!dec_ok(d))
		return NULL;
	if ((family != AF_INET && family != AF_INET6) ||
	    (protocol != IPPROTO_TCP && protocol != IPPROTO_UDP) ||
	    !state_valid(protocol, state, embryo) || (embryo && protocol != IPPROTO_TCP)) {
		dec_fail(d, "bad internet socket state");
		return NULL;
	}
	if (!(s = sk_new(family, protocol, &nobody))) {
		dec_fail(d, "out of memory");
		return NULL;
	}
	s->state = state;
	s->connecting = dec_bool(d);
	s->ss_connected = dec_bool(d);
	s->fin_sent = dec_bool(d);
	s->sndbuf_locked = dec_bool(d);
	bool ok = ep_load(d, &s->local) && ep_load(d, &s->remote);
	s->bound = dec_bool(d);
	s->port_locked = dec_bool(d);
	s->addr_locked = dec_bool(d);
	s->v6only = dec_bool(d);
	s->shutdown = dec_u8(d);
	uint32_t err = dec_u32(d), backlog = dec_u32(d);
	int core = sock_core_load(d, &s->c);
	uint32_t nopts = dec_u32(d);
	if (!dec_ok(d) || core || !ok || s->shutdown > SHUTDOWN_MASK || err >= 4096 ||
	    backlog > 65536 || nopts != NOPTS ||
	    (family == AF_INET && (!ep_is_v4(s->local.addr) || !ep_is_v4(s->remote.addr)))) {
		dec_fail(d, "bad internet socket state");
		goto fail;
	}
	s->err = (int)err;
	s->backlog = (int)backlog;
	for (int i = 0; i < NOPTS; i++)
		s->iopt[i] = (int)dec_u32(d);
	if (!dec_str_buf(d, s->congestion, sizeof(s->congestion)) ||
	    !dec_str_buf(d, s->bound_dev, sizeof(s->bound_dev)))
		goto fail;
	s->drops = dec_u32(d);
	s->bytes_sent = dec_u64(d);
	s->bytes_received = dec_u64(d);
	s->segs_out = dec_u64(d);
	s->segs_in = dec_u64(d);
	uint64_t n = dec_max(d, INET_QUEUE_MAX, "internet socket queue length");
	for (uint64_t i = 0; i < n && dec_ok(d); i++) {
		size_t len, fromlen;
		const void *data = dec_bytes(d, &len), *from = dec_bytes(d, &fromlen);
		size_t max = protocol == IPPROTO_TCP ? INET_MSG_MAX : UDP6_MAX;
		if (!dec_ok(d) || len > max || fromlen > SOCK_FROM_MAX) {
			dec_fail(d, "bad queued message");
			break;
		}
		struct iovec iov = {(void *)data, len};
		struct sock_msg *m = sock_msg_new(
		    NULL, &iov, 1, len, len, len + (protocol == IPPROTO_TCP ? 0 : UDP_OVERHEAD));
		if (!m) {
			dec_fail(d, "out of memory");
			break;
		}
		memcpy(m->from, from, fromlen);
		m->fromlen = (unsigned int)fromlen;
		sock_rq_push(&s->c, m);
	}
	if (dec_ok(d))
		return s;
fail:
	sk_put(s);
	return NULL;
}

/* Drops S made by a failed load: what it links to goes with it. */
static void sk_load_undo(struct inet_sock *s)
{
	while (s->acc_head) {
		struct inet_sock *e = s->acc_head;
		s->acc_head = e->acc_next;
		tcp_unlink_peer(e, false);
		sk_put(e);
	}
	s->acc_tail = NULL;
	s->acc_len = 0;
	tcp_unlink_peer(s, false);
	sk_put(s);
}

static int inet_save(struct enc *e, struct vfs_file *f)
{
	struct inet_sock *s = f->priv;

	sk_state_save(e, s);
	enc_u64(e, (uint64_t)s->acc_len);
	for (struct inet_sock *em = s->acc_head; em; em = em->acc_next)
		sk_state_save(e, em);
	return 0;
}

static int inet_load(struct dec *d, struct vfs_file *f)
{
	struct inet_sock *s = sk_state_load(d, false);

	if (!s)
		return -EINVAL;
	uint64_t n = dec_max(d, 65537, "accept queue length");
	if (n && s->state != ST_LISTEN)
		dec_fail(d, "connections queued on a socket that does not listen");
	for (uint64_t i = 0; i < n && dec_ok(d); i++) {
		struct inet_sock *em = sk_state_load(d, true);
		if (!em)
			break;
		if (s->acc_tail)
			s->acc_tail->acc_next = em;
		else
			s->acc_head = em;
		s->acc_tail = em;
		s->acc_len++;
		em->listener = s;
	}
	if (!dec_ok(d)) {
		sk_load_undo(s);
		return -EINVAL;
	}
	f->priv = s;
	s->file = f;
	return 0;
}

static void peer_save(struct enc *e, const struct inet_sock *o)
{
	if (!o) {
		enc_u8(e, PEER_NONE);
	} else if (o->file) {
		enc_u8(e, PEER_FILE);
		enc_ref(e, CK_FILE, o->file);
	} else if (o->listener && o->listener->file) {
		uint64_t i = 0;
		for (struct inet_sock *em = o->listener->acc_head; em && em != o; em = em->acc_next)
			i++;
		enc_u8(e, PEER_EMBRYO);
		enc_ref(e, CK_FILE, o->listener->file);
		enc_u64(e, i);
	} else {
		enc_u8(e, PEER_NONE); /* cannot happen: a peer that is gone is unlinked */
	}
}

/* The endpoint a peer reference names (borrowed), NULL for none (*NONE set) or on failure. */
static struct inet_sock *peer_load(struct dec *d, bool *none)
{
	struct inet_sock *o = NULL;
	uint8_t tag = dec_u8(d);

	*none = tag == PEER_NONE && dec_ok(d);
	if (*none)
		return NULL;
	struct vfs_file *f = tag == PEER_FILE || tag == PEER_EMBRYO ? dec_ref(d, CK_FILE) : NULL;
	if (f && f->ops == &inet_ops && f->priv) {
		o = f->priv;
		if (tag == PEER_EMBRYO) {
			uint64_t i = dec_u64(d);
			for (o = o->acc_head; o && i; o = o->acc_next)
				i--;
		}
	}
	if (!o || !is_tcp(o) || !dec_ok(d)) {
		dec_fail(d, "bad internet socket reference");
		return NULL;
	}
	return o;
}

static int peer_link(struct dec *d, struct inet_sock *s)
{
	bool none;
	struct inet_sock *o = peer_load(d, &none);

	if (none)
		return 0;
	if (!o || !is_tcp(s) || s->peer || o == s)
		return dec_fail(d, "bad connection");
	s->peer = sk_get(o);
	return 0;
}

static int inet_save_links(struct enc *e, struct vfs_file *f)
{
	struct inet_sock *s = f->priv;
	uint64_t n = 0;

	peer_save(e, s->peer);
	enc_u64(e, (uint64_t)s->acc_len);
	for (struct inet_sock *em = s->acc_head; em; em = em->acc_next)
		peer_save(e, em->peer);
	for (struct inet_sock *c = s->syn_head; c; c = c->syn_next)
		n++;
	enc_u64(e, n);
	for (struct inet_sock *c = s->syn_head; c; c = c->syn_next)
		enc_ref(e, CK_FILE, c->file);
	return 0;
}

static int inet_load_links(struct dec *d, struct vfs_file *f)
{
	struct inet_sock *s = f->priv;

	if (peer_link(d, s))
		return -EINVAL;
	if (dec_u64(d) != (uint64_t)s->acc_len)
		return dec_fail(d, "accept queue links do not match the queue");
	for (struct inet_sock *em = s->acc_head; em && dec_ok(d); em = em->acc_next)
		if (peer_link(d, em))
			return -EINVAL;
	uint64_t n = dec_max(d, INET_QUEUE_MAX, "connects waiting");
	for (uint64_t i = 0; i < n && dec_ok(d); i++) {
		struct vfs_file *cf = dec_ref(d, CK_FILE);
		struct inet_sock *c = cf && cf->ops == &inet_ops ? cf->priv : NULL;
		if (!c || c->syn_target || c->state != ST_SYN_SENT || s->state != ST_LISTEN)
			return dec_fail(d, "bad connect waiting for a listener");
		c->syn_target = s;
		if (s->syn_tail)
			s->syn_tail->syn_next = c;
		else
			s->syn_head = c;
		s->syn_tail = c;
	}
	return dec_ok(d) ? 0 : -EINVAL;
}

const struct vfs_file_kind vfs_inet_kind = {
    .name = "inet",
    .ops = &inet_ops,
    .save = inet_save,
    .load = inet_load,
    .save_links = inet_save_links,
    .load_links = inet_load_links,
};
