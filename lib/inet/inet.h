/* SPDX-License-Identifier: BSD-2-Clause */
/* inet.h - IPv4 helpers both protocol layers (lib/udp, lib/tcp) use,
 * below both and knowing neither: what a layer keeps of its endpoint
 * (endpoint.c), whether the kernel has an address (kernel_addr.c), and
 * the neighbours the XDP program learnt from ARP (neigh.c).  No lwIP and
 * no BPF header here: lib/tcp/tcp.c includes it next to lwIP's.  Never
 * installed. */
#ifndef UNET_INET_H
#define UNET_INET_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/csum.h" /* the checksums every IP layer uses */

struct unet_endpoint;
struct unet_iface;

/* What an IP layer keeps of the endpoint it is attached to: the member
 * `inet` of each layer's state, filled when that state is made. */
struct unet_inet_ep {
	struct unet_endpoint *ep;
	struct unet_iface *iface; /* NULL: an endpoint from unetd, which keeps
				   * the interface's maps for it (remote) */
	char ifname[IF_NAMESIZE]; /* for logs ("ifindex N" if it has none) */
	int ifindex;
	uint32_t slot;		  /* the endpoint's slot */
	uint32_t mtu, frame_size;
	uint8_t mac[6]; /* the interface's */
	int neigh_fd;	/* the interface's unet_neigh map; -1: none (an endpoint
			 * from unetd gets it from the daemon later) */
};

/* Fill in for ep; with an interface (not from unetd), open its unet_neigh
 * map.  Returns 0 or -errno (then nothing is left open). */
int unet_inet_ep_init(struct unet_inet_ep *in, struct unet_endpoint *ep);
/* Close what in holds (the neighbour map). */
void unet_inet_ep_fini(struct unet_inet_ep *in);

/* The interface's map of neighbours the XDP program learnt from ARP
 * (bpf/unet_abi.h, "unet_neigh"), in its pin directory. */
#define UNET_MAP_NEIGH "unet_neigh"

/* The addresses U-Net owns on an interface (addr.c): a map the XDP
 * program reads to answer ARP for them (bpf/unet_abi.h).  Its pinned name
 * is older than TCP, which shares it with UDP. */
#define UNET_MAP_INET_ADDRS "unet_udp_addrs"
/* flags: answer ARP for it (the kernel does not have the address) */
#define UNET_INET_ADDR_ARP 1u

/* Register laddr (network order) for endpoint unless a live endpoint has
 * it (a dead owner's entry is replaced).  Returns 1 if registered now, 0
 * if someone live (or this endpoint) has it, -errno. */
int unet_inet_addr_claim(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr,
			 uint32_t flags);
/* Remove laddr's registration if endpoint still holds it. */
void unet_inet_addr_release(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr);
/* 1 if addr is registered and answers ARP, 0 if not, -errno. */
int unet_inet_addr_answers_arp(struct unet_iface *iface, uint32_t addr);
/* Remove the dead owners' addresses.  Returns how many, or -errno. */
int unet_inet_addr_reclaim(struct unet_iface *iface);

/* Whether this network namespace has addr (network order) on any
 * interface: then the kernel answers ARP for it, and U-Net must not. */
bool unet_inet_kernel_addr(uint32_t addr);

/* Now on the clock of bpf_ktime_get_ns() (CLOCK_MONOTONIC), which stamps
 * unet_neigh's entries. */
uint64_t unet_inet_now_ns(void);
/* iface's unet_neigh map, opened for the caller (close it), or -errno. */
int unet_inet_neigh_open(struct unet_iface *iface);
/* The MAC unet_neigh (fd; < 0: none) has for ip, if it is younger than
 * max_age_ns at now (unet_inet_now_ns); *when (if not NULL) gets when it
 * was learnt.  Returns 0 or -ENOENT. */
int unet_inet_neigh(int fd, uint32_t ip, uint64_t now, uint64_t max_age_ns, uint8_t mac[6],
		    uint64_t *when);

/* ---- route.c: next hops from the kernel's routing and neighbour tables -- */

/* How long an answer is used before the kernel is asked again: how fast
 * a route or neighbour change is followed (docs/udp.md, "Routing"). */
#define UNET_INET_ROUTE_TTL_NS 1000000000ull
#define UNET_INET_ROUTE_SLOTS 16

/* How the kernel reaches dst, as this endpoint sends to it. */
struct unet_inet_hop {
	uint32_t dst;	     /* network order; the key */
	uint32_t via;	     /* the next hop: the gateway, or dst on the link */
	bool gateway;	     /* via is a gateway */
	int err;	     /* 0; -ENETUNREACH: no route by this endpoint's
			      * interface (other_oif: the route's), or the
			      * kernel's error for the lookup */
	int other_oif;
	uint32_t route_mtu;  /* the route's RTAX_MTU; 0: none */
	uint32_t mtu;	     /* what fits: the interface's, or the route's if lower */
	uint8_t mac[6];	     /* the gateway's, when mac_ns */
	uint64_t checked_ns; /* when the route was asked; 0: a free slot */
	uint64_t mac_ns;     /* when the kernel gave mac */
	uint64_t asked_ns;   /* when we last asked the kernel to resolve via */
	uint64_t failed_ns;  /* when its resolution was first seen FAILED */
	uint64_t denied_ns;  /* when we were last refused asking (EPERM) */
};

/* A small per-endpoint cache of hops (oldest replaced). */
struct unet_inet_routes {
	struct unet_inet_hop e[UNET_INET_ROUTE_SLOTS];
	struct unet_inet_hop over; /* what a lookup over the budget returns */
	uint64_t ttl_ns;
	uint64_t budget_tat; /* lookups: UNET_INET_ROUTE_RATE a second */
};

/* At most this many kernel lookups a second per endpoint (a burst of as
 * many): a peer that makes us answer many forged sources (a reset to
 * each) cannot make us ask the kernel for each. */
#define UNET_INET_ROUTE_RATE 200

void unet_inet_routes_init(struct unet_inet_routes *rs);
/* now - then, 0 when then is later (stamps of one clock). */
static inline uint64_t unet_inet_since(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}
/* One lookup from a next-hop cache's budget (a token bucket of
 * UNET_INET_ROUTE_RATE a second, as many at once; *budget_tat its
 * theoretical arrival time).  False when spent. */
bool unet_inet_route_budget(uint64_t *budget_tat, uint64_t now);
/* The hop for dst (network order) from in's endpoint, from the cache or
 * asked again when older than the TTL.  src: our address if the kernel
 * has it (the lookup honours it), else 0.  Never NULL; its err says
 * whether dst is reachable by this interface: -EAGAIN when dst is not
 * cached and the lookup budget is spent (try again later; an expired
 * entry is used a while longer instead). */
struct unet_inet_hop *unet_inet_route(struct unet_inet_routes *rs, const struct unet_inet_ep *in,
				      uint32_t dst, uint32_t src, uint64_t now);
/* The MAC of h's gateway from the kernel's neighbour table, cached for the
 * TTL; when the kernel has none, ask it to resolve.  Returns 0 (*mac
 * set), -EAGAIN (the kernel is resolving: try again), -EHOSTUNREACH (the
 * kernel's resolution failed; asked again a TTL later), -EPERM (not
 * allowed to ask the kernel: resolve it yourself; not asked again for a
 * TTL), -errno. */
int unet_inet_hop_mac(struct unet_inet_routes *rs, const struct unet_inet_ep *in,
		      struct unet_inet_hop *h, uint64_t now, uint8_t mac[6]);

/* One RTM_GETROUTE for dst (src as above) on ifindex's behalf.  Returns 0
 * (*hop filled but for mtu and the cache fields), -ENOENT (the kernel has
 * no route), -ENETUNREACH (the route is not a unicast one by ifindex;
 * hop->other_oif says which, 0 if it is ifindex's), -errno. */
int unet_inet_route_get(int ifindex, uint32_t dst, uint32_t src, struct unet_inet_hop *hop);
/* The kernel's neighbour entry for ip on ifindex.  Returns 0 (*mac set),
 * 1 (*mac set, STALE), -EAGAIN (being resolved, or no MAC), -EHOSTUNREACH
 * (FAILED), -ENOENT (none), -errno. */
int unet_inet_kneigh_get(int ifindex, uint32_t ip, uint8_t mac[6]);
/* Ask the kernel to resolve (or confirm) ip on ifindex (NTF_USE).
 * Returns 0 or -errno (-EPERM without CAP_NET_ADMIN). */
int unet_inet_kneigh_use(int ifindex, uint32_t ip);

/* ---- veth.c ------------------------------------------------------------ */

/* Whether ifname is a veth (ethtool's driver name): where kernel peers
 * send partial checksums (docs/udp.md, "Partial checksums"). */
bool unet_inet_is_veth(const char *ifname);

/* ---- IPv6 (inet6.h's share of this layer: addr6.c, route6.c) ------------ */

/* The IPv6 addresses U-Net has UDP ports on (bpf/unet_abi.h,
 * "unet_udp6_addrs"), and the flag: U-Net owns it alone, so its endpoint
 * answers neighbour solicitations for it. */
#define UNET_MAP_INET6_ADDRS "unet_udp6_addrs"
#define UNET_INET6_ADDR_ND 1u

/* Whether a is :: (all zero), without branching on its bytes. */
static inline bool unet_inet6_addr_zero(const uint8_t a[16])
{
	uint8_t d = 0;

	for (int i = 0; i < 16; i++)
		d |= a[i];
	return d == 0;
}

/* A unicast address a host may use on a link as its own or a peer's:
 * not ::, ::1, a multicast or a v4-mapped one (RFC 4291 2.5.2, 2.5.3,
 * 2.5.5.2, 2.7).  UDP and TCP check received sources and local
 * addresses with it. */
static inline bool unet_inet6_addr_unicast(const uint8_t a[16])
{
	static const uint8_t loopback[16] = { [15] = 1 };
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	return !unet_inet6_addr_zero(a) && a[0] != 0xff && memcmp(a, loopback, 16) != 0 &&
	       memcmp(a, mapped, 12) != 0;
}

/* As unet_inet_addr_claim / _release / _reclaim, for IPv6 addresses. */
int unet_inet6_addr_claim(struct unet_iface *iface, uint32_t endpoint, const uint8_t addr[16],
			  uint32_t flags);
void unet_inet6_addr_release(struct unet_iface *iface, uint32_t endpoint, const uint8_t addr[16]);
int unet_inet6_addr_reclaim(struct unet_iface *iface);
/* 1 if addr is registered and answered by U-Net (ND), 0 if not, -errno. */
int unet_inet6_addr_answers_nd(struct unet_iface *iface, const uint8_t addr[16]);
/* Whether this network namespace has addr on any interface. */
bool unet_inet6_kernel_addr(const uint8_t addr[16]);

#define UNET_IP6_HLEN 40
#define UNET_ETH_P_IPV6 0x86DD

/* Ethernet and the fixed IPv6 header in front of plen payload bytes
 * (nd6.c). */
void unet_ip6_put_eth(uint8_t *frame, const uint8_t dst_mac[6], const uint8_t src_mac[6],
		      const uint8_t saddr[16], const uint8_t daddr[16], uint16_t plen, uint8_t next,
		      uint8_t hop_limit);
/* The fixed header of an untagged IPv6 frame: -1 if not IPv6 at all, 0 if
 * the frame holds it and payload_len fits the frame (*plen set), 1 if
 * not. */
int unet_ip6_fixed(const uint8_t *frame, uint32_t len, uint32_t *plen);

/* A neighbour solicitation, checked (unet_nd_parse_ns). */
struct unet_nd_ns {
	uint8_t saddr[16], target[16];
	uint8_t reply_mac[6]; /* where an answer goes: the source link-layer
			       * address option, else the Ethernet source */
};

enum unet_nd_verdict {
	UNET_ND_NS = 0,	   /* a valid solicitation from a host: answer it */
	UNET_ND_NOT_NS,	   /* IPv6, not a solicitation: not ours to judge */
	UNET_ND_MALFORMED, /* lengths, options, hop limit, code */
	UNET_ND_BAD_CSUM,
	UNET_ND_REJECTED,  /* valid, but not to be answered: duplicate address
			    * detection (unspecified source), a group or zero
			    * MAC to answer to, a destination that is neither
			    * the target nor its solicited-node group */
};
/* Check an untagged Ethernet frame as a neighbour solicitation (RFC 4861
 * 7.1.1).  Fills *ns on UNET_ND_NS. */
enum unet_nd_verdict unet_nd_parse_ns(const uint8_t *frame, uint32_t len, struct unet_nd_ns *ns);
/* Write a solicited neighbour advertisement answering ns for our_mac
 * (flags S and O, the target link-layer address option).  Returns the
 * frame length. */
uint32_t unet_nd_build_na(uint8_t *frame, const uint8_t our_mac[6], const struct unet_nd_ns *ns);
#define UNET_ND_NA_FRAME_LEN (UNET_ETH_HLEN + UNET_IP6_HLEN + 32)

/* Answers to neighbour solicitations (and ARP requests), a second, per
 * endpoint and layer: a flood of them costs a bounded number of frames. */
#define UNET_INET_REPLY_RATE 20

/* A rate limiter (GCRA: a token bucket of `burst` tokens refilled at
 * per_sec a second), clock passed in.  Zero-initialised: full. */
struct unet_rate {
	uint64_t tat; /* theoretical arrival time of the next event */
};
/* Take a token at now: true if allowed (and counted), false if over. */
bool unet_rate_take(struct unet_rate *r, uint64_t now_ns, uint32_t per_sec, uint32_t burst);

/* How the kernel reaches an IPv6 destination, as this endpoint sends to
 * it: as struct unet_inet_hop, and the next hop's MAC always from the
 * kernel's neighbour table (on the link too: IPv6 neighbour discovery is
 * the kernel's, docs/udp.md "IPv6"). */
struct unet_inet6_hop {
	uint8_t dst[16], via[16];
	bool gateway;
	int err;
	int other_oif;
	uint32_t mtu;
	uint8_t mac[6];
	uint64_t checked_ns, mac_ns, asked_ns, failed_ns;
};

struct unet_inet6_routes {
	struct unet_inet6_hop e[UNET_INET_ROUTE_SLOTS];
	struct unet_inet6_hop over;
	uint64_t ttl_ns;
	uint64_t budget_tat;
};

void unet_inet6_routes_init(struct unet_inet6_routes *rs);
/* As unet_inet_route, for IPv6 (src: our address if the kernel has it,
 * else NULL).  Never NULL. */
struct unet_inet6_hop *unet_inet6_route(struct unet_inet6_routes *rs,
					const struct unet_inet_ep *in, const uint8_t dst[16],
					const uint8_t *src, uint64_t now);
/* The MAC of h's next hop (the gateway, or dst on the link) from the
 * kernel's neighbour table, cached for the TTL; when the kernel has none,
 * ask it to resolve.  Returns 0 (*mac set), -EAGAIN (being resolved),
 * -EHOSTUNREACH (the kernel's resolution failed; asked again a TTL later),
 * -EPERM (not allowed to ask the kernel), -errno. */
int unet_inet6_hop_mac(struct unet_inet6_routes *rs, const struct unet_inet_ep *in,
		       struct unet_inet6_hop *h, uint64_t now, uint8_t mac[6]);
/* One RTM_GETROUTE for dst: as unet_inet_route_get, with hop->mtu the
 * route's RTAX_MTU (0: none). */
int unet_inet6_route_get(int ifindex, const uint8_t dst[16], const uint8_t *src,
			 struct unet_inet6_hop *hop);

#endif /* UNET_INET_H */
