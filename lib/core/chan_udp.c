/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * chan_udp.c - what a routable channel (U-Net inside UDP/IPv4) needs from
 * the host beyond the maps: the interface's channel port, its IPv4
 * address, the next hop's MAC address, and the source port held against
 * other local processes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "core/chan_udp.h"

int unet_chan_port_of(struct unet_iface *iface)
{
	int fd = unet_iface_map(iface, UNET_MAP_CHAN_CFG, BPF_MAP_TYPE_ARRAY, sizeof(__u32),
				sizeof(struct unet_chan_cfg));
	struct unet_chan_cfg cfg;
	__u32 key = 0;

	if (fd < 0)
		return fd;
	if (bpf_map_lookup_elem(fd, &key, &cfg))
		return -errno;
	return cfg.udp_port ? cfg.udp_port : UNET_CHAN_PORT_DEFAULT;
}

int unet_chan_set_port(struct unet_iface *iface, uint16_t port)
{
	int fd = unet_iface_map(iface, UNET_MAP_CHAN_CFG, BPF_MAP_TYPE_ARRAY, sizeof(__u32),
				sizeof(struct unet_chan_cfg));
	struct unet_chan_cfg cfg = { .udp_port = port };
	__u32 key = 0;

	if (fd < 0)
		return fd;
	return bpf_map_update_elem(fd, &key, &cfg, BPF_ANY) ? -errno : 0;
}

int unet_chan_local_ipv4(const char *ifname, uint32_t *addr)
{
	struct ifaddrs *ifa, *i;
	int err = -EADDRNOTAVAIL;

	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || strcmp(i->ifa_name, ifname))
			continue;
		*addr = ((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr.s_addr;
		err = 0;
		break;
	}
	freeifaddrs(ifa);
	return err;
}

/*
 * On-link peers only: the peer's own entry in the kernel's neighbour
 * table (/proc/net/arp, complete entries of this device).  A routed peer
 * needs the route's gateway looked up first and its entry here: that
 * lookup replaces `addr` by the gateway before this search.
 */
int unet_chan_nexthop_mac(const char *ifname, uint32_t addr, uint8_t mac[6])
{
	char line[256], ip[64], hw[64], dev[64];
	unsigned int type, flags, m[6];
	FILE *f = fopen("/proc/net/arp", "re");
	int err = -EHOSTUNREACH;

	if (!f)
		return -errno;
	if (!fgets(line, sizeof(line), f)) { /* the header line */
		fclose(f);
		return err;
	}
	while (fgets(line, sizeof(line), f)) {
		struct in_addr a;

		if (sscanf(line, "%63s 0x%x 0x%x %63s %*s %63s", ip, &type, &flags, hw, dev) != 5 ||
		    strcmp(dev, ifname) || inet_pton(AF_INET, ip, &a) != 1 || a.s_addr != addr ||
		    !(flags & 0x2) /* ATF_COM: resolved */ ||
		    sscanf(hw, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 6)
			continue;
		for (int k = 0; k < 6; k++)
			mac[k] = (uint8_t)m[k];
		err = 0;
		break;
	}
	fclose(f);
	return err;
}

int unet_chan_hold_port(uint32_t addr, uint16_t port)
{
	/*
	 * The port on every address, not only addr's: a socket another user
	 * binds to the port on another local address (127.0.0.1) could still
	 * send from addr with IP_PKTINFO, and the peer would take it for the
	 * channel.  No SO_REUSEADDR, so no other socket gets the port on any
	 * address while we hold it.  Nobody reads it: its queue is the
	 * smallest the kernel allows.
	 */
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_ANY) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), zero = 0;

	(void)addr;
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &zero, sizeof(zero));
	if (bind(fd, (const struct sockaddr *)&sa, sizeof(sa))) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}
