/* The network interfaces of the sandbox: lo, with 127.0.0.1/8 and ::1/128, as Linux sets it
 * up in a new network namespace once lo is up. There is no other interface in the private
 * network (and with --network none): everything else is unreachable. /proc/net/dev,
 * if_inet6, netlink's RTM_GETLINK/RTM_GETADDR and the SIOCGIF* ioctls all read this table;
 * the loopback endpoints (inet.c) count their traffic here. */
#include <net/if.h>
#include <net/if_arp.h>
#include <string.h>

#include "vfs/internal.h"
#include "vfs/vfs.h"

static const struct vfs_netdev netdevs[] = {
    {.name = "lo",
     .index = 1,
     .flags = IFF_UP | IFF_LOOPBACK | IFF_RUNNING,
     .mtu = 65536,
     .type = ARPHRD_LOOPBACK,
     .txqlen = 1000,
     .v4 = {127, 0, 0, 1},
     .v4_prefix = 8,
     .v6 = {[15] = 1},
     .v6_prefix = 128},
};

#define NNETDEVS (int)(sizeof(netdevs) / sizeof(netdevs[0]))

static struct vfs_netdev_stats lo_stats;

const struct vfs_netdev *vfs_netdev_at(int i)
{
	return i >= 0 && i < NNETDEVS ? &netdevs[i] : NULL;
}

const struct vfs_netdev *vfs_netdev_by_index(int index)
{
	for (int i = 0; i < NNETDEVS; i++)
		if (netdevs[i].index == index)
			return &netdevs[i];
	return NULL;
}

const struct vfs_netdev *vfs_netdev_by_name(const char *name)
{
	for (int i = 0; i < NNETDEVS; i++)
		if (!strcmp(netdevs[i].name, name))
			return &netdevs[i];
	return NULL;
}

void vfs_netdev_stats(const struct vfs_netdev *d, struct vfs_netdev_stats *st)
{
	(void)d;
	*st = lo_stats;
}

void netdev_lo_xmit(uint64_t packets, uint64_t bytes)
{
	/* What lo sends it receives. */
	lo_stats.tx_packets += packets;
	lo_stats.rx_packets += packets;
	lo_stats.tx_bytes += bytes;
	lo_stats.rx_bytes += bytes;
}
