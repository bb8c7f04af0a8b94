/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * route.c - next hops from the kernel's routing and neighbour tables
 * (inet.h), for both protocol layers: which interface and gateway the
 * kernel would send a datagram for dst through (RTM_GETROUTE), the MTU on
 * that path (the interface's, lowered by the route's RTAX_MTU), and the
 * gateway's MAC (RTM_GETNEIGH; when the kernel has none, RTM_NEWNEIGH
 * with NTF_USE asks it to resolve one, as a send of its own would).
 *
 * Answers are cached per destination for UNET_INET_ROUTE_TTL_NS and then
 * asked again: that is how a route or neighbour change is followed
 * (docs/udp.md, "Routing").  Plain netlink, one short-lived socket per
 * question (core/netlink.c: routable channels ask the same).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "core/internal.h"
#include "core/netlink.h"
#include "inet/inet.h"

int unet_inet_route_get(int ifindex, uint32_t dst, uint32_t src, struct unet_inet_hop *hop)
{
	struct unet_nl_route rt;
	int err;

	memset(hop, 0, sizeof(*hop));
	hop->dst = dst;
	hop->via = dst;
	/* The source only when the kernel has it: a lookup from an address
	 * the kernel does not own fails (ENETUNREACH), and routing by
	 * destination is all the kernel itself would do for it then. */
	err = unet_nl_route_get(AF_INET, &dst, src ? &src : NULL, 4, 0, &rt);
	if (err)
		return err;
	if (rt.gateway) {
		memcpy(&hop->via, rt.via, 4);
		hop->gateway = true;
	}
	hop->route_mtu = rt.route_mtu;
	if (rt.type != RTN_UNICAST || rt.oif != ifindex) {
		/* local, broadcast, or through another interface: not a
		 * peer this endpoint's link reaches */
		hop->other_oif = rt.oif != ifindex ? rt.oif : 0;
		return -ENETUNREACH;
	}
	return 0;
}

int unet_inet_kneigh_get(int ifindex, uint32_t ip, uint8_t mac[6])
{
	return unet_nl_kneigh_get(AF_INET, ifindex, &ip, 4, mac);
}

int unet_inet_kneigh_use(int ifindex, uint32_t ip)
{
	return unet_nl_kneigh_use(AF_INET, ifindex, &ip, 4);
}

void unet_inet_routes_init(struct unet_inet_routes *rs)
{
	memset(rs, 0, sizeof(*rs));
	rs->ttl_ns = UNET_INET_ROUTE_TTL_NS;
}


bool unet_inet_route_budget(uint64_t *budget_tat, uint64_t now)
{
	const uint64_t interval = 1000000000ull / UNET_INET_ROUTE_RATE;
	uint64_t tat = *budget_tat > now ? *budget_tat : now;

	if (tat - now > (uint64_t)(UNET_INET_ROUTE_RATE - 1) * interval)
		return false;
	*budget_tat = tat + interval;
	return true;
}

struct unet_inet_hop *unet_inet_route(struct unet_inet_routes *rs, const struct unet_inet_ep *in,
				      uint32_t dst, uint32_t src, uint64_t now)
{
	struct unet_inet_hop *h = NULL, *old = &rs->e[0];
	struct unet_inet_hop fresh;
	int err;

	for (unsigned int i = 0; i < UNET_INET_ROUTE_SLOTS; i++) {
		struct unet_inet_hop *e = &rs->e[i];

		if (e->dst == dst && e->checked_ns) {
			h = e;
			break;
		}
		if (e->checked_ns < old->checked_ns)
			old = e;
	}
	if (h && unet_inet_since(now, h->checked_ns) < rs->ttl_ns)
		return h;
	if (!unet_inet_route_budget(&rs->budget_tat, now)) {
		if (h)
			return h; /* expired, still the best we know */
		memset(&rs->over, 0, sizeof(rs->over));
		rs->over.dst = rs->over.via = dst;
		rs->over.err = -EAGAIN;
		rs->over.mtu = in->mtu;
		return &rs->over;
	}
	err = unet_inet_route_get(in->ifindex, dst, src, &fresh);
	/* No route at all: an address range the kernel knows nothing of
	 * (U-Net-owned addresses on an interface the kernel has none on) is
	 * this link's, reached directly as it always was. */
	if (err == -ENOENT)
		err = 0;
	fresh.err = err;
	if (err && (!h || h->err != err)) {
		char other[IF_NAMESIZE] = "";

		if (fresh.other_oif && !if_indextoname((unsigned int)fresh.other_oif, other))
			snprintf(other, sizeof(other), "ifindex %d", fresh.other_oif);
		unet_log(UNET_LOG_WARN, "%s: %s: %s%s", in->ifname,
			 inet_ntoa((struct in_addr){ .s_addr = dst }),
			 fresh.other_oif ? "not sent: the kernel routes it by " : "no route: ",
			 fresh.other_oif ? other : strerror(-err));
	}
	fresh.mtu = in->mtu;
	if (fresh.route_mtu && fresh.route_mtu < fresh.mtu)
		fresh.mtu = fresh.route_mtu;
	/* the same gateway keeps the MAC it had (asked again after its own
	 * time) */
	if (h && h->gateway && fresh.gateway && h->via == fresh.via) {
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

int unet_inet_hop_mac(struct unet_inet_routes *rs, const struct unet_inet_ep *in,
		      struct unet_inet_hop *h, uint64_t now, uint8_t mac[6])
{
	uint64_t stamp = now ? now : 1;
	int err;

	if (h->mac_ns && unet_inet_since(now, h->mac_ns) < rs->ttl_ns) {
		memcpy(mac, h->mac, 6);
		return 0;
	}
	/* Refused the right to ask lately: the caller resolves it itself,
	 * without two system calls per send until the next look. */
	if (h->denied_ns && unet_inet_since(now, h->denied_ns) < rs->ttl_ns)
		return -EPERM;
	err = unet_inet_kneigh_get(in->ifindex, h->via, mac);
	if (err >= 0) {
		if (err == 1 && unet_inet_since(now, h->asked_ns) >= rs->ttl_ns) {
			h->asked_ns = stamp;
			unet_inet_kneigh_use(in->ifindex, h->via);
		}
		memcpy(h->mac, mac, 6);
		h->mac_ns = stamp;
		h->failed_ns = 0;
		return 0;
	}
	/* The kernel gave up on our question: unreachable for a TTL, then
	 * asked again (its resolution takes longer than a TTL). */
	if (err == -EHOSTUNREACH && h->asked_ns) {
		if (!h->failed_ns) {
			h->failed_ns = stamp;
			unet_log(UNET_LOG_WARN, "%s: gateway %s did not answer ARP (the kernel's entry is FAILED)",
				 in->ifname, inet_ntoa((struct in_addr){ .s_addr = h->via }));
		}
		if (unet_inet_since(now, h->failed_ns) < rs->ttl_ns)
			return err;
	}
	if (err == -EHOSTUNREACH || err == -ENOENT || (err == -EAGAIN && !h->asked_ns)) {
		int u = unet_inet_kneigh_use(in->ifindex, h->via);

		if (u < 0) {
			h->denied_ns = stamp;
			return -EPERM; /* not allowed to ask: the caller asks itself */
		}
		h->asked_ns = stamp;
		h->failed_ns = 0;
		return -EAGAIN;
	}
	return err;
}
