/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * route6.c - IPv6 next hops from the kernel's routing and neighbour
 * tables (inet.h): which interface and gateway the kernel would send a
 * datagram for dst through (RTM_GETROUTE, AF_INET6), the MTU on that path,
 * and the next hop's MAC (RTM_GETNEIGH; when the kernel has none,
 * RTM_NEWNEIGH with NTF_USE makes it solicit one, as a send of its own
 * would).  Unlike IPv4, a peer on the link is resolved by the kernel as
 * well: neighbour discovery to peers is the kernel's (docs/udp.md,
 * "IPv6").  Answers are cached for UNET_INET_ROUTE_TTL_NS, as route.c's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "core/internal.h"
#include "core/netlink.h"
#include "inet/inet.h"

static bool link_local(const uint8_t a[16])
{
	return a[0] == 0xfe && (a[1] & 0xc0) == 0x80;
}

int unet_inet6_route_get(int ifindex, const uint8_t dst[16], const uint8_t *src,
			 struct unet_inet6_hop *hop)
{
	struct unet_nl_route rt;
	int err;

	memset(hop, 0, sizeof(*hop));
	memcpy(hop->dst, dst, 16);
	memcpy(hop->via, dst, 16);
	/* A link-local address means something only with its link: ask
	 * about ours (every link has fe80::/64). */
	err = unet_nl_route_get(AF_INET6, dst, src, 16, link_local(dst) ? ifindex : 0, &rt);
	if (err)
		return err;
	if (rt.gateway) {
		memcpy(hop->via, rt.via, 16);
		hop->gateway = true;
	}
	hop->mtu = rt.route_mtu;
	if (rt.type != RTN_UNICAST || rt.oif != ifindex) {
		hop->other_oif = rt.oif != ifindex ? rt.oif : 0;
		return -ENETUNREACH;
	}
	return 0;
}

void unet_inet6_routes_init(struct unet_inet6_routes *rs)
{
	memset(rs, 0, sizeof(*rs));
	rs->ttl_ns = UNET_INET_ROUTE_TTL_NS;
}


struct unet_inet6_hop *unet_inet6_route(struct unet_inet6_routes *rs,
					const struct unet_inet_ep *in, const uint8_t dst[16],
					const uint8_t *src, uint64_t now)
{
	struct unet_inet6_hop *h = NULL, *old = &rs->e[0];
	struct unet_inet6_hop fresh;
	uint32_t route_mtu;
	int err;

	for (unsigned int i = 0; i < UNET_INET_ROUTE_SLOTS; i++) {
		struct unet_inet6_hop *e = &rs->e[i];

		if (e->checked_ns && !memcmp(e->dst, dst, 16)) {
			h = e;
			break;
		}
		if (e->checked_ns < old->checked_ns)
			old = e;
	}
	if (h && unet_inet_since(now, h->checked_ns) < rs->ttl_ns)
		return h;
	/* A budget of its own for IPv6. */
	if (!unet_inet_route_budget(&rs->budget_tat, now)) {
		if (h)
			return h;
		memset(&rs->over, 0, sizeof(rs->over));
		memcpy(rs->over.dst, dst, 16);
		memcpy(rs->over.via, dst, 16);
		rs->over.err = -EAGAIN;
		rs->over.mtu = in->mtu;
		return &rs->over;
	}
	err = unet_inet6_route_get(in->ifindex, dst, src, &fresh);
	/* No route at all: taken to be on this link, as for IPv4. */
	if (err == -ENOENT)
		err = 0;
	fresh.err = err;
	if (err && (!h || h->err != err)) {
		char a[INET6_ADDRSTRLEN], other[IF_NAMESIZE] = "";

		inet_ntop(AF_INET6, dst, a, sizeof(a));
		if (fresh.other_oif && !if_indextoname((unsigned int)fresh.other_oif, other))
			snprintf(other, sizeof(other), "ifindex %d", fresh.other_oif);
		unet_log(UNET_LOG_WARN, "%s: %s: %s%s", in->ifname, a,
			 fresh.other_oif ? "not sent: the kernel routes it by " : "no route: ",
			 fresh.other_oif ? other : strerror(-err));
	}
	route_mtu = fresh.mtu;
	fresh.mtu = in->mtu;
	if (route_mtu && route_mtu < fresh.mtu)
		fresh.mtu = route_mtu;
	/* the same next hop keeps the MAC it had (asked again after its own
	 * time) */
	if (h && !memcmp(h->via, fresh.via, 16)) {
		memcpy(fresh.mac, h->mac, 6);
		fresh.mac_ns = h->mac_ns;
		fresh.asked_ns = h->asked_ns;
		fresh.failed_ns = h->failed_ns;
	}
	fresh.checked_ns = now ? now : 1;
	if (!h)
		h = old;
	*h = fresh;
	return h;
}

int unet_inet6_hop_mac(struct unet_inet6_routes *rs, const struct unet_inet_ep *in,
		       struct unet_inet6_hop *h, uint64_t now, uint8_t mac[6])
{
	uint64_t stamp = now ? now : 1;
	int err;

	if (h->mac_ns && unet_inet_since(now, h->mac_ns) < rs->ttl_ns) {
		memcpy(mac, h->mac, 6);
		return 0;
	}
	err = unet_nl_kneigh_get(AF_INET6, in->ifindex, h->via, 16, mac);
	if (err >= 0) {
		if (err == 1 && unet_inet_since(now, h->asked_ns) >= rs->ttl_ns) {
			h->asked_ns = stamp;
			unet_nl_kneigh_use(AF_INET6, in->ifindex, h->via, 16);
		}
		memcpy(h->mac, mac, 6);
		h->mac_ns = stamp;
		h->failed_ns = 0;
		return 0;
	}
	if (err == -EHOSTUNREACH && h->asked_ns) {
		if (!h->failed_ns) {
			char a[INET6_ADDRSTRLEN];

			h->failed_ns = stamp;
			inet_ntop(AF_INET6, h->via, a, sizeof(a));
			unet_log(UNET_LOG_WARN,
				 "%s: %s did not answer neighbour solicitation (the kernel's entry is FAILED)",
				 in->ifname, a);
		}
		if (unet_inet_since(now, h->failed_ns) < rs->ttl_ns)
			return err;
	}
	if (err == -EHOSTUNREACH || err == -ENOENT || (err == -EAGAIN && !h->asked_ns)) {
		int u = unet_nl_kneigh_use(AF_INET6, in->ifindex, h->via, 16);

		if (u < 0)
			return -EPERM;
		h->asked_ns = stamp;
		h->failed_ns = 0;
		return -EAGAIN;
	}
	return err;
}
