/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * chan_udp.c - what a routable channel (U-Net inside UDP/IPv4 or
 * UDP/IPv6) needs from the host beyond the maps: the interface's channel
 * port, its address, the next hop's MAC address, and the source port held
 * against other local processes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "core/chan_udp.h"
#include "core/netlink.h"

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

/* The interface's first IPv4 address. */
static int first_ipv4(const uint8_t *a, const struct ifaddrmsg *ifa, void *ctx)
{
	(void)ifa;
	memcpy(ctx, a, 4);
	return 1;
}

int unet_chan_local_ipv4(const char *ifname, uint32_t *addr)
{
	int oif = (int)if_nametoindex(ifname), r;

	if (oif <= 0)
		return -ENODEV;
	r = unet_nl_addrs(AF_INET, oif, UNET_NL_ADDRS_MAX, first_ipv4, addr);
	return r == 1 ? 0 : r == 0 || r == -E2BIG ? -EADDRNOTAVAIL : r;
}

bool unet_chan_ipv6_link_local(const uint8_t a[16])
{
	return a[0] == 0xfe && (a[1] & 0xc0) == 0x80;
}

struct pick6 {
	bool want_ll;	   /* the peer is link-local: so is our source */
	const uint8_t *kernel; /* the kernel's choice, or NULL */
	bool have;	   /* addr holds the first of the right scope */
	uint8_t addr[16];
};

static int pick_ipv6(const uint8_t *a, const struct ifaddrmsg *ifa, void *ctx)
{
	struct pick6 *p = ctx;

	(void)ifa;
	if (unet_chan_ipv6_link_local(a) != p->want_ll)
		return 0;
	if (p->kernel && !memcmp(a, p->kernel, 16)) {
		memcpy(p->addr, a, 16);
		p->have = true;
		return 1; /* the kernel's own: nothing better to find */
	}
	if (!p->have) {
		memcpy(p->addr, a, 16);
		p->have = true;
		if (!p->kernel)
			return 1;
	}
	return 0;
}

int unet_chan_local_ipv6(const char *ifname, const uint8_t peer[16], uint8_t addr[16])
{
	struct pick6 p = { .want_ll = unet_chan_ipv6_link_local(peer) };
	int oif = (int)if_nametoindex(ifname), r;
	struct unet_nl_route rt;

	if (oif <= 0)
		return -ENODEV;
	/* The kernel's own choice for the peer out of this interface (RFC
	 * 6724: the longest matching prefix, not deprecated, not
	 * tentative), as its sockets would send from: the interface's
	 * first address would be whichever came last -- one a router
	 * advertisement from any host on the link just made (the peer,
	 * which names us by our configured address, would drop all). */
	if (unet_nl_route_get(AF_INET6, peer, NULL, 16, oif, &rt) == 0 && rt.have_src &&
	    unet_chan_ipv6_link_local(rt.src) == p.want_ll)
		p.kernel = rt.src;
	/* The kernel's choice if it is this interface's; else the first of
	 * the peer's scope: a link-local peer answers a link-local source,
	 * any other a global one (RFC 6724's first rule).  Among the first
	 * UNET_NL_ADDRS_MAX of the interface's addresses only: past them
	 * the first of the right scope, if any was seen. */
	r = unet_nl_addrs(AF_INET6, oif, UNET_NL_ADDRS_MAX, pick_ipv6, &p);
	if (r < 0 && r != -E2BIG)
		return r;
	if (!p.have)
		return -EADDRNOTAVAIL;
	memcpy(addr, p.addr, 16);
	return 0;
}

/* How often opening a channel looks while it waits (up to
 * UNET_CHAN_RESOLVE_WAIT_MS).  The kernel's first ARP request leaves at
 * once; an answer takes a round trip. */
#define CHAN_RESOLVE_STEP_MS 10

/* The next hop's MAC from the kernel's neighbour table; when it has none
 * (or only a stale one), ask it to resolve (NTF_USE), as a send of its
 * own would.  Returns 0, -EAGAIN (asked: look again), -errno. */
static int hop_mac(int family, int ifindex, const uint8_t *via, uint16_t alen, uint8_t mac[6])
{
	int err = unet_nl_kneigh_get(family, ifindex, via, alen, mac);

	if (err == 1) { /* STALE: usable, and confirmed for next time */
		unet_nl_kneigh_use(family, ifindex, via, alen);
		return 0;
	}
	if (err == -EAGAIN || err == -ENOENT || err == -EHOSTUNREACH) {
		int u = unet_nl_kneigh_use(family, ifindex, via, alen);

		return u < 0 ? u : -EAGAIN;
	}
	return err;
}

int unet_chan_next_hop(int family, int ifindex, const void *saddr, const void *daddr,
		       uint32_t if_mtu, bool wait, struct unet_chan_hop *hop)
{
	uint16_t alen = family == AF_INET6 ? 16 : 4;
	struct unet_nl_route rt;
	int oif = 0, err;

	memset(hop, 0, sizeof(*hop));
	memcpy(hop->via, daddr, alen);
	hop->mtu = if_mtu;
	/* A link-local peer is on the link it is asked on: the kernel needs
	 * the interface to route it at all. */
	if (family == AF_INET6 && unet_chan_ipv6_link_local(daddr))
		oif = ifindex;
	err = unet_nl_route_get(family, daddr, saddr, alen, oif, &rt);
	if (err == -ENOENT)
		err = 0; /* no route at all: the link's, reached directly */
	else if (!err && (rt.type != RTN_UNICAST || rt.oif != ifindex))
		return -ENETUNREACH; /* local, broadcast, or by another interface */
	if (err)
		return err;
	if (rt.gateway)
		memcpy(hop->via, rt.via, alen); /* IPv6: mostly the router's link-local */
	if (rt.route_mtu && rt.route_mtu < hop->mtu)
		hop->mtu = rt.route_mtu;
	err = hop_mac(family, ifindex, hop->via, alen, hop->mac);
	for (int waited = 0; wait && err == -EAGAIN && waited < UNET_CHAN_RESOLVE_WAIT_MS;
	     waited += CHAN_RESOLVE_STEP_MS) {
		struct timespec step = { .tv_nsec = CHAN_RESOLVE_STEP_MS * 1000000L };

		nanosleep(&step, NULL);
		err = unet_nl_kneigh_get(family, ifindex, hop->via, alen, hop->mac);
		if (err == 1)
			err = 0;
		else if (err == -ENOENT)
			err = -EAGAIN;
	}
	if (err == -EAGAIN && wait)
		err = -EHOSTUNREACH; /* the kernel asked, nobody answered */
	return err;
}

int unet_chan_hold_port(int family, uint16_t port)
{
	/*
	 * The port on every address, not only the channel's: a socket
	 * another user binds to the port on another local address
	 * (127.0.0.1) could still send from ours with IP_PKTINFO, and the
	 * peer would take it for the channel.  No SO_REUSEADDR, so no other
	 * socket gets the port on any address while we hold it.  Held on
	 * both families at once (an IPv6 socket, not V6ONLY) whatever the
	 * channel's: one port, one channel -- an IPv4 channel's port free on
	 * IPv6 let another user send as its tag to a peer whose channel
	 * names this host by an IPv6 address.  A kernel without IPv6: IPv4
	 * alone (no IPv6 channel can exist there).  Nobody reads it: its
	 * queue is the smallest the kernel allows.
	 */
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_ANY) };
	struct sockaddr_in6 sa6 = { .sin6_family = AF_INET6, .sin6_port = htons(port),
				    .sin6_addr = IN6ADDR_ANY_INIT };
	int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0), zero = 0;
	bool v6 = fd >= 0;
	int err;

	if (!v6 && errno == EAFNOSUPPORT && family == AF_INET)
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &zero, sizeof(zero));
	if (v6) {
		/* Refused, the port would be IPv6's alone: fail instead. */
		err = setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		if (!err)
			err = bind(fd, (const struct sockaddr *)&sa6, sizeof(sa6));
	} else {
		err = bind(fd, (const struct sockaddr *)&sa, sizeof(sa));
	}
	if (err) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}
