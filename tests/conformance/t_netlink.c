/* Netlink read by hand: NETLINK_ROUTE's binding (a port id), RTM_GETLINK and RTM_GETADDR
 * dumps with lo in them, a single RTM_GETLINK by index, a change refused with EPERM; a
 * NETLINK_SOCK_DIAG dump that lists a TCP listener and a bound Unix socket (what ss reads);
 * other netlink families absent from the sandbox. A netlink socket with an answer queued
 * survives checkpoint and restore.
 * conformance: no-musl (the kernel's netlink headers come with glibc's) */
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <net/if.h>
#include <stddef.h>
#include <sys/un.h>

#include <netinet/tcp.h>
#include <sys/stat.h>

#include "check.h"
#include "inet.h"

/* One RTM_GET* dump request on netlink socket FD; the answer's messages are counted into
 * *LINKS (lo's RTM_NEWLINK) and *ADDRS (lo's RTM_NEWADDR) until NLMSG_DONE. */
static int dump(int fd, int type, int seq, int *links, int *addrs)
{
	struct {
		struct nlmsghdr h;
		struct rtgenmsg g;
	} req = {.h = {.nlmsg_len = sizeof(req),
		       .nlmsg_type = (unsigned short)type,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		       .nlmsg_seq = (unsigned int)seq},
		 .g = {.rtgen_family = AF_UNSPEC}};
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	static char buf[65536];

	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel)) !=
	    sizeof(req))
		return -1;
	for (int rounds = 0; rounds < 100; rounds++) {
		if (!(poll_events(fd, POLLIN, 2000) & POLLIN))
			return -2;
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0)
			return -3;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != (unsigned int)seq)
				return -4;
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR)
				return -5;
			if (h->nlmsg_type == RTM_NEWLINK) {
				struct ifinfomsg *ifi = NLMSG_DATA(h);
				*links += (ifi->ifi_flags & IFF_LOOPBACK) != 0;
			} else if (h->nlmsg_type == RTM_NEWADDR) {
				struct ifaddrmsg *a = NLMSG_DATA(h);
				*addrs += a->ifa_scope == RT_SCOPE_HOST;
			}
		}
	}
	return -6;
}

static void test_netlink(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	struct sockaddr_nl me = {.nl_family = AF_NETLINK};
	socklen_t len = sizeof(me);
	int links = 0, addrs = 0;

	CHECK(fd >= 0);
	CHECK_EQ(int_opt(fd, SOL_SOCKET, SO_PROTOCOL), NETLINK_ROUTE);
	CHECK_EQ(int_opt(fd, SOL_SOCKET, SO_DOMAIN), AF_NETLINK);
	CHECK_EQ(bind(fd, (struct sockaddr *)&me, sizeof(me)), 0);
	CHECK_EQ(getsockname(fd, (struct sockaddr *)&me, &len), 0);
	CHECK_EQ(len, sizeof(me));
	CHECK_EQ(me.nl_family, AF_NETLINK);
	CHECK(me.nl_pid != 0);
	CHECK_EQ(dump(fd, RTM_GETLINK, 1, &links, &addrs), 0);
	CHECK_EQ(links, 1);
	CHECK_EQ(dump(fd, RTM_GETADDR, 2, &links, &addrs), 0);
	CHECK(addrs >= 2); /* 127.0.0.1 and ::1, both scope host */
	/* An answer left queued over a checkpoint. */
	struct {
		struct nlmsghdr h;
		struct ifinfomsg i;
	} req = {.h = {.nlmsg_len = sizeof(req),
		       .nlmsg_type = RTM_GETLINK,
		       .nlmsg_flags = NLM_F_REQUEST,
		       .nlmsg_seq = 3},
		 .i = {.ifi_family = AF_UNSPEC, .ifi_index = (int)if_nametoindex("lo")}};
	CHECK_EQ(send(fd, &req, sizeof(req), 0), sizeof(req));
	maybe_save(); /* a netlink socket with an answer queued */
	char buf[8192];
	CHECK_EQ(poll_events(fd, POLLIN, 2000), POLLIN);
	ssize_t n = recv(fd, buf, sizeof(buf), 0);
	CHECK(n > (ssize_t)NLMSG_LENGTH(sizeof(struct ifinfomsg)));
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	CHECK_EQ(h->nlmsg_type, RTM_NEWLINK);
	CHECK_EQ(h->nlmsg_seq, 3);
	if (in_sandbox()) {
		/* Changing an address needs CAP_NET_ADMIN. */
		struct {
			struct nlmsghdr h;
			struct ifaddrmsg a;
		} add = {.h = {.nlmsg_len = sizeof(add),
			       .nlmsg_type = RTM_NEWADDR,
			       .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE,
			       .nlmsg_seq = 4},
			 .a = {.ifa_family = AF_INET, .ifa_prefixlen = 8, .ifa_index = 1}};
		CHECK_EQ(send(fd, &add, sizeof(add), 0), sizeof(add));
		CHECK_EQ(poll_events(fd, POLLIN, 2000), POLLIN);
		n = recv(fd, buf, sizeof(buf), 0);
		CHECK(n >= (ssize_t)NLMSG_LENGTH(sizeof(struct nlmsgerr)));
		CHECK_EQ(h->nlmsg_type, NLMSG_ERROR);
		CHECK_EQ(((struct nlmsgerr *)NLMSG_DATA(h))->error, -EPERM);
	}
	close(fd);
	/* NETLINK_ROUTE and NETLINK_SOCK_DIAG are the families the sandbox has. */
	if (in_sandbox())
		CHECK_ERR(socket(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT), EPROTONOSUPPORT);
}

/* Sends one SOCK_DIAG_BY_FAMILY dump request (BODY, LEN bytes) and returns how many answers
 * carry inode INO, or a negative number on failure. */
static int diag_count(int fd, const void *body, size_t len, uint32_t ino)
{
	struct {
		struct nlmsghdr h;
		char body[128];
	} req = {.h = {.nlmsg_len = (unsigned int)NLMSG_LENGTH(len),
		       .nlmsg_type = SOCK_DIAG_BY_FAMILY,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		       .nlmsg_seq = 7}};
	static char buf[65536];
	int found = 0;

	memcpy(req.body, body, len);
	if (send(fd, &req, req.h.nlmsg_len, 0) != (ssize_t)req.h.nlmsg_len)
		return -1;
	for (int rounds = 0; rounds < 1000; rounds++) {
		if (!(poll_events(fd, POLLIN, 2000) & POLLIN))
			return -2;
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0)
			return -3;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return found;
			if (h->nlmsg_type == NLMSG_ERROR)
				return -4;
			if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY)
				return -5;
			/* inet_diag_msg and unix_diag_msg keep the inode at different places. */
			const struct inet_diag_msg *im = NLMSG_DATA(h);
			const struct unix_diag_msg *um = NLMSG_DATA(h);
			if (im->idiag_family == AF_UNIX ? um->udiag_ino == ino
							: im->idiag_inode == ino)
				found++;
		}
	}
	return -6;
}

static void test_sock_diag(void)
{
	int fd = socket(AF_NETLINK, SOCK_DGRAM, NETLINK_SOCK_DIAG), l = tcp_listener(5);
	int u = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct stat st;

	CHECK(fd >= 0);
	snprintf(sun.sun_path + 1, sizeof(sun.sun_path) - 1, "diag.%d", getpid());
	CHECK_EQ(bind(u, (struct sockaddr *)&sun,
		      offsetof(struct sockaddr_un, sun_path) + 1 + strlen(sun.sun_path + 1)),
		 0);
	CHECK_EQ(listen(u, 1), 0);
	struct inet_diag_req_v2 tcp = {.sdiag_family = AF_INET,
				       .sdiag_protocol = IPPROTO_TCP,
				       .idiag_states = 1u << TCP_LISTEN};
	CHECK_EQ(fstat(l, &st), 0);
	CHECK_EQ(diag_count(fd, &tcp, sizeof(tcp), (uint32_t)st.st_ino), 1);
	tcp.idiag_states = 1u << TCP_ESTABLISHED;
	CHECK_EQ(diag_count(fd, &tcp, sizeof(tcp), (uint32_t)st.st_ino), 0);
	struct unix_diag_req ux = {.sdiag_family = AF_UNIX,
				   .udiag_states = 1u << TCP_LISTEN,
				   .udiag_show = UDIAG_SHOW_NAME};
	CHECK_EQ(fstat(u, &st), 0);
	CHECK_EQ(diag_count(fd, &ux, sizeof(ux), (uint32_t)st.st_ino), 1);
	close(u);
	close(l);
	close(fd);
}

int main(void)
{
	test_netlink();
	test_sock_diag();
	/* Netlink has no pairs (the guest syscall fuzzer found socketpair succeeding, with
	 * nothing made, and the socket leaked). */
	int sv[2];
	CHECK_ERR(socketpair(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE, sv), EOPNOTSUPP);
	CHECK_ERR(socketpair(AF_NETLINK, SOCK_DGRAM, NETLINK_ROUTE, sv), EOPNOTSUPP);
	return check_done();
}
