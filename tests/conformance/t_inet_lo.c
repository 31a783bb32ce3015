/* The lo interface as programs see it: SIOCGIFCONF, SIOCGIFFLAGS/INDEX/NAME/MTU/ADDR/NETMASK
 * and friends (ENODEV for a name that does not exist, EPERM for changes without
 * CAP_NET_ADMIN), if_nametoindex and getifaddrs (glibc's and musl's, netlink underneath),
 * and a listener, a connection and a bound UDP socket in /proc/net/tcp and /proc/net/udp.
 * Natively only lo's part of the host's interfaces is checked; the sandbox has lo alone. A
 * listener and a bound UDP socket survive checkpoint and restore.
 * conformance: native-proc */
#include <ifaddrs.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/ioctl.h>

#include "check.h"
#include "inet.h"

static void test_ioctls(void)
{
	int s = socket(AF_INET, SOCK_DGRAM, 0), u = socket(AF_UNIX, SOCK_DGRAM, 0);
	struct ifreq r;
	struct ifreq reqs[16];
	struct ifconf ic = {.ifc_len = sizeof(reqs), .ifc_req = reqs};
	bool found = false;

	CHECK_EQ(ioctl(s, SIOCGIFCONF, &ic), 0);
	CHECK(ic.ifc_len > 0 && ic.ifc_len % (int)sizeof(struct ifreq) == 0);
	for (int i = 0; i < ic.ifc_len / (int)sizeof(struct ifreq); i++) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&reqs[i].ifr_addr;
		if (strcmp(reqs[i].ifr_name, "lo"))
			continue;
		found = true;
		CHECK_EQ(sin->sin_family, AF_INET);
		CHECK_EQ(sin->sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	}
	CHECK(found);
	if (in_sandbox())
		CHECK_EQ(ic.ifc_len, sizeof(struct ifreq));
	/* Without a buffer: the length needed. */
	ic.ifc_buf = NULL;
	ic.ifc_len = 0;
	CHECK_EQ(ioctl(s, SIOCGIFCONF, &ic), 0);
	CHECK(ic.ifc_len >= (int)sizeof(struct ifreq));

	memset(&r, 0, sizeof(r));
	strcpy(r.ifr_name, "lo");
	CHECK_EQ(ioctl(s, SIOCGIFFLAGS, &r), 0);
	CHECK_EQ(r.ifr_flags & (IFF_UP | IFF_LOOPBACK | IFF_RUNNING),
		 IFF_UP | IFF_LOOPBACK | IFF_RUNNING);
	CHECK_EQ(ioctl(u, SIOCGIFFLAGS, &r), 0); /* any socket answers */
	CHECK_EQ(ioctl(s, SIOCGIFINDEX, &r), 0);
	int index = r.ifr_ifindex;
	CHECK(index > 0);
	CHECK_EQ(if_nametoindex("lo"), (unsigned int)index);
	char name[IF_NAMESIZE];
	CHECK_STREQ(if_indextoname((unsigned int)index, name), "lo");
	memset(&r, 0, sizeof(r));
	r.ifr_ifindex = index;
	CHECK_EQ(ioctl(s, SIOCGIFNAME, &r), 0);
	CHECK_STREQ(r.ifr_name, "lo");
	CHECK_EQ(ioctl(s, SIOCGIFMTU, &r), 0);
	CHECK_EQ(r.ifr_mtu, 65536);
	CHECK_EQ(ioctl(s, SIOCGIFADDR, &r), 0);
	CHECK_EQ(((struct sockaddr_in *)&r.ifr_addr)->sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	CHECK_EQ(ioctl(s, SIOCGIFNETMASK, &r), 0);
	CHECK_EQ(((struct sockaddr_in *)&r.ifr_netmask)->sin_addr.s_addr, htonl(0xff000000));
	CHECK_EQ(ioctl(s, SIOCGIFHWADDR, &r), 0);
	CHECK_EQ(r.ifr_hwaddr.sa_family, 772);	      /* ARPHRD_LOOPBACK */
	CHECK_ERR(ioctl(u, SIOCGIFADDR, &r), ENOTTY); /* addresses: AF_INET sockets only */
	strcpy(r.ifr_name, "nosuch0");
	CHECK_ERR(ioctl(s, SIOCGIFFLAGS, &r), ENODEV);
	CHECK_EQ(if_nametoindex("nosuch0"), 0);
	r.ifr_ifindex = 12345;
	CHECK_ERR(ioctl(s, SIOCGIFNAME, &r), ENODEV);
	if (in_sandbox()) {
		/* Root in the sandbox has no CAP_NET_ADMIN over the host; changes are refused. */
		strcpy(r.ifr_name, "lo");
		r.ifr_mtu = 1500;
		CHECK_ERR(ioctl(s, SIOCSIFMTU, &r), EPERM);
	}
	close(s);
	close(u);
}

static void test_getifaddrs(void)
{
	struct ifaddrs *ifa;
	bool v4 = false, v6 = false;
	int n = 0;

	CHECK_EQ(getifaddrs(&ifa), 0);
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
		if (strcmp(i->ifa_name, "lo") || !i->ifa_addr)
			continue;
		n++;
		CHECK(i->ifa_flags & IFF_LOOPBACK);
		if (i->ifa_addr->sa_family == AF_INET) {
			v4 = true;
			CHECK_EQ(((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr,
				 htonl(INADDR_LOOPBACK));
			CHECK_EQ(((struct sockaddr_in *)i->ifa_netmask)->sin_addr.s_addr,
				 htonl(0xff000000));
		} else if (i->ifa_addr->sa_family == AF_INET6) {
			v6 = true;
			CHECK(
			    IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr));
		}
	}
	CHECK(v4);
	CHECK(v6);
	CHECK(n >= 2);
	freeifaddrs(ifa);
}

/* Whether /proc/net/FILE has a line with local port PORT in state ST (hex). */
static bool proc_net_has(const char *file, uint16_t port, const char *st)
{
	char path[64], line[512], want[16];
	bool found = false;

	snprintf(path, sizeof(path), "/proc/net/%s", file);
	snprintf(want, sizeof(want), ":%04X", port);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char local[64], remote[64], state[8];
		if (sscanf(line, "%*d: %63s %63s %7s", local, remote, state) != 3)
			continue;
		size_t ll = strlen(local);
		if (ll > 5 && !strcmp(local + ll - 5, want) && !strcmp(state, st))
			found = true;
	}
	fclose(f);
	return found;
}

static void test_proc_net(void)
{
	int l = tcp_listener(3), u = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = lo4(0);

	CHECK_EQ(bind(u, (struct sockaddr *)&a, sizeof(a)), 0);
	maybe_save(); /* a listener and a bound UDP socket, seen in /proc/net after */
	CHECK(proc_net_has("tcp", port_of(l), "0A")); /* TCP_LISTEN */
	CHECK(proc_net_has("udp", port_of(u), "07")); /* unconnected: TCP_CLOSE */
	int c = tcp_client(port_of(l));
	CHECK(c >= 0);
	CHECK(proc_net_has("tcp", port_of(c), "01")); /* ESTABLISHED */
	FILE *f = fopen("/proc/net/tcp", "r");
	char head[256] = "";
	CHECK(f != NULL);
	if (f) {
		CHECK(fgets(head, sizeof(head), f) != NULL);
		fclose(f);
	}
	CHECK_EQ(strncmp(head, "  sl  local_address rem_address   st tx_queue", 44), 0);
	CHECK_EQ(strlen(head), 150); /* padded to 149 characters */
	f = fopen("/proc/net/dev", "r");
	CHECK(f != NULL);
	bool lo = false;
	char line[256];
	while (f && fgets(line, sizeof(line), f))
		lo |= strncmp(line, "    lo:", 7) == 0;
	if (f)
		fclose(f);
	CHECK(lo);
	close(c);
	close(l);
	close(u);
}

int main(void)
{
	test_ioctls();
	test_getifaddrs();
	test_proc_net();
	return check_done();
}
