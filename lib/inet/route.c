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
 * question, by raw system calls: the library also runs inside unet-run,
 * which interposes socket calls and must not see its own.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "core/internal.h"
#include "inet/inet.h"
#include "inet/netlink.h"


void unet_nl_add_attr(struct unet_nl_req *r, uint16_t type, const void *data, uint16_t len)
{
	struct rtattr *a = (struct rtattr *)((char *)r + NLMSG_ALIGN(r->nh.nlmsg_len));

	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + RTA_ALIGN(a->rta_len);
}

int unet_nl_ask(struct unet_nl_req *r, char *buf, size_t size)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 1 };
	int fd, n, err;

	fd = (int)syscall(SYS_socket, AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	/* the kernel answers at once; a bound wait all the same */
	syscall(SYS_setsockopt, fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	r->nh.nlmsg_seq = 1;
	if (syscall(SYS_sendto, fd, r, r->nh.nlmsg_len, 0, &kernel, sizeof(kernel)) < 0) {
		err = -errno;
		goto out;
	}
	for (;;) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		n = (int)syscall(SYS_recvfrom, fd, buf, size, 0, NULL, NULL);
		if (n < 0) {
			err = -errno;
			goto out;
		}
		if (!NLMSG_OK(h, (unsigned int)n))
			continue;
		if (h->nlmsg_seq != r->nh.nlmsg_seq)
			continue; /* not our answer (nothing else is subscribed) */
		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(h);

			err = h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) ? e->error : -EPROTO;
			goto out;
		}
		err = n;
		goto out;
	}
out:
	syscall(SYS_close, fd);
	return err;
}

int unet_inet_route_get(int ifindex, uint32_t dst, uint32_t src, struct unet_inet_hop *hop)
{
	struct unet_nl_req r;
	char buf[NL_BUF];
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	struct rtmsg *rt;
	struct rtattr *a;
	int n, len, oif = 0;

	memset(hop, 0, sizeof(*hop));
	hop->dst = dst;
	hop->via = dst;
	memset(&r, 0, sizeof(r));
	r.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
	r.nh.nlmsg_type = RTM_GETROUTE;
	r.nh.nlmsg_flags = NLM_F_REQUEST;
	r.rt.rtm_family = AF_INET;
	r.rt.rtm_dst_len = 32;
	unet_nl_add_attr(&r, RTA_DST, &dst, 4);
	/* The source only when the kernel has it: a lookup from an address
	 * the kernel does not own fails (ENETUNREACH), and routing by
	 * destination is all the kernel itself would do for it then. */
	if (src) {
		r.rt.rtm_src_len = 32;
		unet_nl_add_attr(&r, RTA_SRC, &src, 4);
	}
	n = unet_nl_ask(&r, buf, sizeof(buf));
	if (n == -ENETUNREACH)
		return -ENOENT; /* no route at all */
	if (n < 0)
		return n;
	if (n == 0 || !NLMSG_OK(h, (unsigned int)n) || h->nlmsg_type != RTM_NEWROUTE ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(*rt)))
		return -EPROTO;
	rt = NLMSG_DATA(h);
	len = (int)RTM_PAYLOAD(h);
	for (a = RTM_RTA(rt); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == RTA_OIF && RTA_PAYLOAD(a) >= 4) {
			memcpy(&oif, RTA_DATA(a), 4);
		} else if (a->rta_type == RTA_GATEWAY && RTA_PAYLOAD(a) >= 4) {
			memcpy(&hop->via, RTA_DATA(a), 4);
			hop->gateway = true;
		} else if (a->rta_type == RTA_METRICS) {
			struct rtattr *m = RTA_DATA(a);
			int mlen = (int)RTA_PAYLOAD(a);

			for (; RTA_OK(m, mlen); m = RTA_NEXT(m, mlen))
				if (m->rta_type == RTAX_MTU && RTA_PAYLOAD(m) >= 4)
					memcpy(&hop->route_mtu, RTA_DATA(m), 4);
		}
	}
	if (rt->rtm_type != RTN_UNICAST || oif != ifindex) {
		/* local, broadcast, or through another interface: not a
		 * peer this endpoint's link reaches */
		hop->other_oif = oif != ifindex ? oif : 0;
		return -ENETUNREACH;
	}
	return 0;
}

int unet_nl_kneigh_get(int family, int ifindex, const void *ip, uint16_t alen, uint8_t mac[6])
{
	struct unet_nl_req r;
	char buf[NL_BUF];
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	struct ndmsg *nd;
	struct rtattr *a;
	bool have_mac = false;
	int n, len;

	memset(&r, 0, sizeof(r));
	r.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg));
	r.nh.nlmsg_type = RTM_GETNEIGH;
	r.nh.nlmsg_flags = NLM_F_REQUEST;
	r.nd.ndm_family = (uint8_t)family;
	r.nd.ndm_ifindex = ifindex;
	unet_nl_add_attr(&r, NDA_DST, ip, alen);
	n = unet_nl_ask(&r, buf, sizeof(buf));
	if (n < 0)
		return n;
	if (n == 0 || !NLMSG_OK(h, (unsigned int)n) || h->nlmsg_type != RTM_NEWNEIGH ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(*nd)))
		return -EPROTO;
	nd = NLMSG_DATA(h);
	len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*nd)));
	for (a = (struct rtattr *)((char *)nd + NLMSG_ALIGN(sizeof(*nd))); RTA_OK(a, len);
	     a = RTA_NEXT(a, len))
		if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == 6) {
			memcpy(mac, RTA_DATA(a), 6);
			have_mac = true;
		}
	if (nd->ndm_state & NUD_FAILED)
		return -EHOSTUNREACH;
	if (!(nd->ndm_state & KNEIGH_VALID) || !have_mac)
		return -EAGAIN; /* INCOMPLETE, NONE */
	/* STALE: still the best the kernel knows; the caller asks it to
	 * confirm (unet_inet_kneigh_use), as its own use of it would. */
	return (nd->ndm_state & NUD_STALE) ? 1 : 0;
}

int unet_nl_kneigh_use(int family, int ifindex, const void *ip, uint16_t alen)
{
	struct unet_nl_req r;
	char buf[NL_BUF];
	int n;

	memset(&r, 0, sizeof(r));
	r.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg));
	r.nh.nlmsg_type = RTM_NEWNEIGH;
	/* NTF_USE: "use" the entry (created if missing), which starts or
	 * confirms resolution exactly as a packet of the kernel's would;
	 * it changes no state we name.  Needs CAP_NET_ADMIN. */
	r.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE;
	r.nd.ndm_family = (uint8_t)family;
	r.nd.ndm_ifindex = ifindex;
	r.nd.ndm_flags = NTF_USE;
	unet_nl_add_attr(&r, NDA_DST, ip, alen);
	n = unet_nl_ask(&r, buf, sizeof(buf));
	return n < 0 ? n : 0;
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
