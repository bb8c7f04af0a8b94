/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * netlink.h - the kernel's routing and neighbour tables, asked over
 * rtnetlink (netlink.c): which interface and gateway the kernel would
 * send to an address by, and a neighbour's MAC address (or a request to
 * resolve one).  In the core because both routable channels (chan_udp.c)
 * and the IP layers (lib/inet/route.c, route6.c) follow the kernel's
 * next hops.  Never installed.
 */
#ifndef UNET_CORE_NETLINK_H
#define UNET_CORE_NETLINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/if_addr.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#define NL_BUF 4096
/* the kernel's NUD_VALID (not exported): states that hold a usable MAC */
#define KNEIGH_VALID \
	(NUD_PERMANENT | NUD_NOARP | NUD_REACHABLE | NUD_PROBE | NUD_STALE | NUD_DELAY)

struct unet_nl_req {
	struct nlmsghdr nh;
	union {
		struct rtmsg rt;
		struct ndmsg nd;
	};
	char attrs[64];
};

/* Append attribute type (len bytes of data) to r. */
void unet_nl_add_attr(struct unet_nl_req *r, uint16_t type, const void *data, uint16_t len);
/*
 * Send r on a new NETLINK_ROUTE socket and read its answer into buf.
 * Returns the answer's length, 0 for a bare acknowledgement, or -errno
 * (the kernel's error for the request).
 */
int unet_nl_ask(struct unet_nl_req *r, char *buf, size_t size);

/* What the kernel's route to an address says. */
struct unet_nl_route {
	int oif;	    /* the interface it leaves by */
	uint8_t type;	    /* RTN_UNICAST, RTN_LOCAL, ... */
	bool gateway;	    /* via holds the gateway */
	uint8_t via[16];    /* the gateway (4 or 16 bytes, network order) */
	uint32_t route_mtu; /* the route's RTAX_MTU; 0: none */
	bool have_src;	    /* src holds the kernel's preferred source */
	uint8_t src[16];    /* RTA_PREFSRC (4 or 16 bytes, network order) */
};

/*
 * One RTM_GETROUTE for dst (alen 4: AF_INET, 16: AF_INET6), from src
 * when not NULL (the kernel must own it), on oif's behalf when oif is
 * not 0 (a link-local destination means something only with its link).
 * Returns 0 (*rt filled), -ENOENT (no route at all), -EPROTO (an answer
 * that does not parse), -errno.
 */
int unet_nl_route_get(int family, const void *dst, const void *src, uint16_t alen, int oif,
		      struct unet_nl_route *rt);
/* Parse one RTM_NEWROUTE answer of n bytes in buf into *rt (alen: the
 * address length).  Returns 0 or -EPROTO. */
int unet_nl_route_parse(const char *buf, int n, uint16_t alen, struct unet_nl_route *rt);
/*
 * The kernel's neighbour entry for ip (alen bytes, family AF_INET or
 * AF_INET6) on ifindex.  Returns 0 (*mac set), 1 (set, but STALE: ask the
 * kernel to confirm it), -EAGAIN (being resolved, or no MAC),
 * -EHOSTUNREACH (resolution FAILED), -ENOENT (no entry), -errno.
 */
int unet_nl_kneigh_get(int family, int ifindex, const void *ip, uint16_t alen, uint8_t mac[6]);
/* Parse one RTM_NEWNEIGH answer of n bytes: as unet_nl_kneigh_get. */
int unet_nl_kneigh_parse(const char *buf, int n, uint8_t mac[6]);
/*
 * The addresses of family (AF_INET or AF_INET6) on ifindex, in the
 * kernel's order: fn is called with each (4 or 16 bytes, network order;
 * IPv4's local address, not a point-to-point peer's) and its ifaddrmsg,
 * until fn returns non-zero or max addresses have been seen.  The kernel
 * filters the dump to the one interface (NETLINK_GET_STRICT_CHK), and the
 * dump is dropped at the bound: the cost of a call is fixed whatever the
 * namespace or the interface holds (its administrator, who may be any
 * user in a namespace of its own, chooses how many).  Returns what fn
 * returned, 0 (the list ended), -E2BIG (max seen, fn never stopped), or
 * -errno.
 */
#define UNET_NL_ADDRS_MAX 256
int unet_nl_addrs(int family, int ifindex, unsigned int max,
		  int (*fn)(const uint8_t *addr, const struct ifaddrmsg *ifa, void *ctx), void *ctx);
/* Parse one RTM_NEWADDR answer of n bytes in buf for family into addr (4
 * or 16 bytes).  Returns 0, or -EPROTO (not one of family's, no address
 * of the right length, or it does not parse). */
int unet_nl_addr_parse(const char *buf, int n, int family, uint8_t addr[16]);

/* Ask the kernel to resolve ip (NTF_USE: as a packet of its own would;
 * the entry is created when missing).  Needs CAP_NET_ADMIN.  Returns 0
 * or -errno. */
int unet_nl_kneigh_use(int family, int ifindex, const void *ip, uint16_t alen);

#endif /* UNET_CORE_NETLINK_H */
