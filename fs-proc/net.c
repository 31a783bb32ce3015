/* /proc/PID/net (and /proc/net, a link to self/net): the tables of the sandbox's network
 * namespace as Linux prints them — tcp, tcp6, udp, udp6 and unix from the sockets, dev,
 * if_inet6 and route from its interfaces (lo alone), raw and raw6 empty (no raw sockets).
 * Every process shares the one namespace, so every PID shows the same tables. Formats are
 * those of net/ipv4/tcp_ipv4.c and udp.c, net/ipv6, af_unix.c and net/core/net-procfs.c,
 * padding included, since tools (netstat, ss) parse them by column. */
#include "fs-proc/internal.h"

#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "vfs/vfs.h"

#define TCP_LINE 150 /* TMPSZ: /proc/net/tcp lines are padded to 149 characters */
#define UDP_LINE 128 /* udp: to 127 */

struct table {
	struct kernfs_buf *b;
	int family; /* AF_INET: the IPv4 tables (IPv4 and mapped endpoints of AF_INET
		     * sockets); AF_INET6: the IPv6 ones (AF_INET6 sockets) */
	int n;
};

/* An address as these tables print it: the in-memory words of the network-order address
 * in hex, so 127.0.0.1 is 0100007F on x86. */
static void put_addr4(struct kernfs_buf *b, const uint8_t *a16)
{
	uint32_t w;

	memcpy(&w, a16 + 12, 4);
	kernfs_buf_printf(b, "%08X", w);
}

static void put_addr6(struct kernfs_buf *b, const uint8_t *a16)
{
	for (int i = 0; i < 4; i++) {
		uint32_t w;
		memcpy(&w, a16 + 4 * i, 4);
		kernfs_buf_printf(b, "%08X", w);
	}
}

static void put_ends(struct table *t, const struct vfs_inet_info *i)
{
	if (t->family == AF_INET) {
		put_addr4(t->b, i->local);
		kernfs_buf_printf(t->b, ":%04X ", i->lport);
		put_addr4(t->b, i->remote);
	} else {
		put_addr6(t->b, i->local);
		kernfs_buf_printf(t->b, ":%04X ", i->lport);
		put_addr6(t->b, i->remote);
	}
	kernfs_buf_printf(t->b, ":%04X", i->rport);
}

static int tcp_row(const struct vfs_inet_info *i, void *arg)
{
	struct table *t = arg;

	if (i->family != t->family)
		return 0;
	kernfs_buf_printf(t->b, "%4d: ", t->n++);
	put_ends(t, i);
	/* timer, retransmits, uid, probes, inode, refs, pointer, rto, ato, quick/pingpong, cwnd,
	 * ssthresh (-1 in initial slow start; a listener shows its fastopen queue length). */
	kernfs_buf_printf(
	    t->b, " %02X %08X:%08X %02X:%08lX %08X %5u %8d %llu %d %016x %lu %lu %u %u %d",
	    i->state, i->txq, i->rxq, 0, 0ul, 0, i->uid, 0, (unsigned long long)i->ino,
	    i->state == 10 ? 1 : 2, 0, i->state == 10 ? 100ul : 20ul, i->state == 10 ? 0ul : 4ul, 0,
	    10, i->state == 10 ? 0 : -1);
	if (t->family == AF_INET)
		kernfs_buf_pad(t->b, TCP_LINE - 1);
	kernfs_buf_putc(t->b, '\n');
	return 0;
}

static int udp_row(const struct vfs_inet_info *i, void *arg)
{
	struct table *t = arg;

	if (i->family != t->family)
		return 0;
	/* The first column is the hash bucket, which is the port's slot in Linux's table. */
	kernfs_buf_printf(t->b, "%5d: ", i->lport & 0x7f);
	put_ends(t, i);
	kernfs_buf_printf(t->b, " %02X %08X:%08X %02X:%08lX %08X %5u %8d %llu %d %016x %u",
			  i->state, i->txq, i->rxq, 0, 0ul, 0, i->uid, 0,
			  (unsigned long long)i->ino, 2, 0, i->drops);
	if (t->family == AF_INET)
		kernfs_buf_pad(t->b, UDP_LINE - 1);
	kernfs_buf_putc(t->b, '\n');
	t->n++;
	return 0;
}

static void header(struct kernfs_buf *b, const char *text, size_t pad)
{
	kernfs_buf_puts(b, text);
	if (pad)
		kernfs_buf_pad(b, pad);
	kernfs_buf_putc(b, '\n');
}

static int show_tcp_family(struct kernfs_buf *b, int family)
{
	struct table t = {.b = b, .family = family};

	if (family == AF_INET)
		header(b,
		       "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when "
		       "retrnsmt   uid  timeout inode",
		       TCP_LINE - 1);
	else
		header(
		    b,
		    "  sl  local_address                         remote_address                  "
		    "      st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
		    0);
	return vfs_inet_foreach(IPPROTO_TCP, tcp_row, &t);
}

static int show_udp_family(struct kernfs_buf *b, int family)
{
	struct table t = {.b = b, .family = family};

	if (family == AF_INET)
		header(b,
		       "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when "
		       "retrnsmt   uid  timeout inode ref pointer drops",
		       UDP_LINE - 1);
	else
		header(
		    b,
		    "  sl  local_address                         remote_address                  "
		    "      st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref "
		    "pointer drops",
		    0);
	return vfs_inet_foreach(IPPROTO_UDP, udp_row, &t);
}

static int show_tcp(struct kernfs_node *n, struct kernfs_buf *b)
{
	(void)n;
	return show_tcp_family(b, AF_INET);
}

static int show_tcp6(struct kernfs_node *n, struct kernfs_buf *b)
{
	(void)n;
	return show_tcp_family(b, AF_INET6);
}

static int show_udp(struct kernfs_node *n, struct kernfs_buf *b)
{
	(void)n;
	return show_udp_family(b, AF_INET);
}

static int show_udp6(struct kernfs_node *n, struct kernfs_buf *b)
{
	(void)n;
	return show_udp_family(b, AF_INET6);
}

static int show_raw(struct kernfs_node *n, struct kernfs_buf *b)
{
	(void)n;
	header(b,
	       "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid "
	       " timeout inode ref pointer drops",
	       0);
	return 0;
}

static int show_raw6(struct kernfs_node *n, struct kernfs_buf *b)
{
	(void)n;
	header(b,
	       "  sl  local_address                         remote_address                        "
	       "st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops",
	       0);
	return 0;
}

static int unix_row(const struct vfs_unix_info *i, void *arg)
{
	struct kernfs_buf *b = arg;
	size_t off = offsetof(struct sockaddr_un, sun_path);

	kernfs_buf_printf(b, "%016llx: %08X %08X %08X %04X %02X %5llu",
			  (unsigned long long)i->ino << 6, (unsigned int)i->refs, 0,
			  i->listening ? 0x10000u : 0u, (unsigned int)i->type, i->state,
			  (unsigned long long)i->ino);
	if (i->addrlen > off) {
		const char *path = i->addr + off;
		size_t len = i->addrlen - off;
		kernfs_buf_putc(b, ' ');
		if (path[0] == 0) {
			/* An abstract name: '@' and its bytes. */
			kernfs_buf_putc(b, '@');
			kernfs_buf_write(b, path + 1, len - 1);
		} else {
			kernfs_buf_write(b, path, strnlen(path, len));
		}
	}
	kernfs_buf_putc(b, '\n');
	return 0;
}

static int show_unix(struct kernfs_node *n, struct kernfs_buf *b)
{
	(void)n;
	kernfs_buf_puts(b, "Num       RefCount Protocol Flags    Type St Inode Path\n");
	return vfs_unix_foreach(unix_row, b);
}

static int show_dev(struct kernfs_node *n, struct kernfs_buf *b)
{
	const struct vfs_netdev *d;

	(void)n;
	kernfs_buf_puts(b, "Inter-|   Receive                                                |  "
			   "Transmit\n");
	kernfs_buf_puts(b, " face |bytes    packets errs drop fifo frame compressed multicast|"
			   "bytes    packets errs drop fifo colls carrier compressed\n");
	for (int i = 0; (d = vfs_netdev_at(i)); i++) {
		struct vfs_netdev_stats st;
		vfs_netdev_stats(d, &st);
		kernfs_buf_printf(
		    b,
		    "%6s:%8llu %7llu %4u %4u %4u %5u %10u %9u %8llu %7llu %4u %4u %4u "
		    "%5u %7u %10u\n",
		    d->name, (unsigned long long)st.rx_bytes, (unsigned long long)st.rx_packets, 0,
		    0, 0, 0, 0, 0, (unsigned long long)st.tx_bytes,
		    (unsigned long long)st.tx_packets, 0, 0, 0, 0, 0, 0);
	}
	return 0;
}

static int show_if_inet6(struct kernfs_node *n, struct kernfs_buf *b)
{
	const struct vfs_netdev *d;

	(void)n;
	for (int i = 0; (d = vfs_netdev_at(i)); i++) {
		for (int k = 0; k < 16; k++)
			kernfs_buf_printf(b, "%02x", d->v6[k]);
		/* index, prefix length, scope (IFA_HOST 0x10), flags (IFA_F_PERMANENT) */
		kernfs_buf_printf(b, " %02x %02x %02x %02x %8s\n", d->index, d->v6_prefix, 0x10,
				  0x80, d->name);
	}
	return 0;
}

/* The IPv4 main table: empty, since lo's routes are all in the local table. */
static int show_route(struct kernfs_node *n, struct kernfs_buf *b)
{
	(void)n;
	kernfs_buf_puts(b, "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU"
			   "\tWindow\tIRTT");
	kernfs_buf_pad(b, 127);
	kernfs_buf_putc(b, '\n');
	return 0;
}

#define NET_FILE(NAME, SHOW)                                                                       \
	{                                                                                          \
		.name = (NAME), .mode = S_IFREG | 0444, .flags = KERNFS_WRITE_EINVAL,              \
		.show = (SHOW), .getattr = procfs_pid_owner                                        \
	}

const struct kernfs_entry procfs_net_rows[] = {
    NET_FILE("dev", show_dev),
    NET_FILE("if_inet6", show_if_inet6),
    NET_FILE("raw", show_raw),
    NET_FILE("raw6", show_raw6),
    NET_FILE("route", show_route),
    NET_FILE("tcp", show_tcp),
    NET_FILE("tcp6", show_tcp6),
    NET_FILE("udp", show_udp),
    NET_FILE("udp6", show_udp6),
    NET_FILE("unix", show_unix),
    KERNFS_END_ROW,
};
