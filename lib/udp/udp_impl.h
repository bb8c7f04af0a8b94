/* SPDX-License-Identifier: BSD-2-Clause */
/* udp_impl.h - UDP/IPv4 and IPv6 over U-Net inside the library: checksums
 * (lib/core/csum.c), ARP frames and the ARP cache (arp.c), UDP frames and
 * sockets (udp.c), IPv6 frames, neighbour solicitations and sockets
 * (udp6.c), the pinned-map side (udp_admin.c).  Never installed.
 * The pure functions here are unit-tested (tests/unit/test_udp.c). */
#ifndef UNET_UDP_IMPL_H
#define UNET_UDP_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"
#include "core/layer.h" /* enum unet_layer_verdict */
#include "inet/inet.h" /* UNET_MAP_NEIGH, the address map */
#include "unet-xdp/unet_udp.h"

/* The UDP layer's port map in the interface's pin directory (its
 * addresses: UNET_MAP_INET_ADDRS, inet.h). */
#define UNET_MAP_UDP_PORTS "unet_udp_ports"

#define UNET_ETH_P_IP 0x0800
#define UNET_ETH_P_ARP 0x0806
#define UNET_IP_HLEN 20
#define UNET_UDP_HLEN 8
/* Ethernet + IPv4 (no options) + UDP: what we send. */
#define UNET_UDP_HDRS (UNET_ETH_HLEN + UNET_IP_HLEN + UNET_UDP_HLEN)
/* Ethernet + IPv6 (no extension headers) + UDP: what we send over IPv6. */
#define UNET_UDP6_HDRS (UNET_ETH_HLEN + UNET_IP6_HLEN + UNET_UDP_HLEN)
/* The payload of a UDP send buffer is this far into the buffer, for
 * either IP version (unet_udp__buf_payload does not know the socket), and
 * 8-byte aligned; the frame starts 80 - 42 bytes in for IPv4, 80 - 62 for
 * IPv6: either way past the 16 bytes of TX metadata in front of it that
 * ask the device for the checksum (lib/core/txmd.h; the kernel refuses a
 * frame that starts inside that room).  Completions find the buffer by
 * the frame it is in, whatever the offset. */
#define UNET_UDP_TX_PAYLOAD 80
#define UNET_UDP_TX_PAD (UNET_UDP_TX_PAYLOAD - UNET_UDP_HDRS)
#define UNET_UDP6_TX_PAD (UNET_UDP_TX_PAYLOAD - UNET_UDP6_HDRS)
#define UNET_ARP_FRAME_LEN 60 /* 14 + 28, padded to the Ethernet minimum */

/* ---- arp.c ------------------------------------------------------------- */

struct unet_arp_msg {
	uint16_t op; /* 1 request, 2 reply */
	uint8_t sha[6], tha[6];
	uint32_t spa, tpa; /* network order */
	uint8_t eth_src[6]; /* parse: the frame's Ethernet source (build sends from sha) */
};

/* Write an ARP frame (Ethernet + 28 bytes, padded to 60) at frame; eth_dst
 * is the Ethernet destination.  Returns its length (60). */
uint32_t unet_arp_build(uint8_t *frame, const uint8_t eth_dst[6], const struct unet_arp_msg *m);
/* Parse an IPv4-over-Ethernet ARP frame (after at most one VLAN tag).
 * Returns 0, or -EINVAL for anything else. */
int unet_arp_parse(const uint8_t *frame, uint32_t len, struct unet_arp_msg *m);

/* Whether what a parsed ARP frame says about its sender may be believed at
 * all, as bpf/xdp_arp.h judges it: sha is the frame's Ethernet source,
 * unicast and non-zero; spa is not 0, 255.255.255.255 or multicast. */
bool unet_arp_sender_valid(const struct unet_arp_msg *m);


#define UNET_ARP_CACHE_SLOTS 64

enum unet_arp_state {
	UNET_ARP_FREE = 0,
	UNET_ARP_RESOLVED, /* mac is the answer learnt at updated_ns */
	UNET_ARP_PENDING,  /* asked since since_ns, last at asked_ns */
	UNET_ARP_FAILED,   /* no answer: unreachable since since_ns (negative cache) */
};

struct unet_arp_entry {
	uint32_t ip; /* network order; 0: free slot */
	uint8_t mac[6];
	uint8_t state; /* enum unet_arp_state */
	uint64_t updated_ns; /* RESOLVED: CLOCK_MONOTONIC of the answer it came from */
	uint64_t since_ns;   /* PENDING: first request; FAILED: when it failed */
	uint64_t asked_ns;   /* PENDING: last request */
};

/* The endpoint's own cache in front of the interface's unet_neigh map, and
 * its resolver's state (pending and failed peers).  Times are passed in
 * (CLOCK_MONOTONIC ns), so tests set the clock. */
struct unet_arp_cache {
	struct unet_arp_entry e[UNET_ARP_CACHE_SLOTS];
	uint64_t ttl_ns;     /* a resolved entry is used this long */
	uint64_t timeout_ns; /* a resolution gives up after this long */
	uint64_t retry_ns;   /* a pending peer is asked again this often */
	uint64_t neg_ns;     /* a failed peer is remembered this long */
	uint32_t ask_rate, ask_burst; /* ARP requests, all peers together */
	struct unet_rate ask;
};

/* Defaults of unet_arp_cache_init besides the TTL. */
#define UNET_ARP_TIMEOUT_NS (1000ull * 1000 * 1000)
#define UNET_ARP_RETRY_NS (200ull * 1000 * 1000)
#define UNET_ARP_NEG_NS (1000ull * 1000 * 1000)
#define UNET_ARP_ASK_RATE 50 /* requests a second, and as many at once */

void unet_arp_cache_init(struct unet_arp_cache *c, uint64_t ttl_ns);
/* Returns 0 and *mac for a resolved entry younger than the TTL, -ESTALE
 * for an expired one (to be resolved again), -ENOENT for none (also while
 * pending or failed). */
int unet_arp_cache_lookup(const struct unet_arp_cache *c, uint32_t ip, uint64_t now_ns,
			  uint8_t mac[6]);
/* Insert or refresh ip's entry as resolved, learnt at updated_ns (an older
 * answer never replaces a newer one; a pending or failed entry is
 * resolved).  A full cache drops its oldest entry. */
void unet_arp_cache_update(struct unet_arp_cache *c, uint32_t ip, const uint8_t mac[6],
			   uint64_t updated_ns);
/* Whether ip is in the negative cache (failed, less than neg_ns ago). */
bool unet_arp_cache_unreachable(const struct unet_arp_cache *c, uint32_t ip, uint64_t now_ns);
/* Forget ip's entry, whatever its state. */
void unet_arp_cache_forget(struct unet_arp_cache *c, uint32_t ip);

/* What a send to ip does at now (unet_arp_cache_next). */
enum unet_arp_next {
	UNET_ARP_USE,	  /* resolved: *mac set */
	UNET_ARP_ASK,	  /* send an ARP request now, the send gets -EAGAIN */
	UNET_ARP_WAIT,	  /* asked lately (or the request budget is spent): -EAGAIN */
	UNET_ARP_GAVE_UP, /* the resolution just timed out: -EHOSTUNREACH, count it */
	UNET_ARP_UNREACH, /* in the negative cache: -EHOSTUNREACH, no request */
};
/*
 * The resolver's step for ip at now: starts a resolution (ASK) for an
 * unknown, expired or no longer negative peer; asks a pending peer again
 * every retry_ns; gives up after timeout_ns (GAVE_UP, then UNREACH for
 * neg_ns).  Requests are rate-limited over all peers (ask_rate a second):
 * over the budget it answers WAIT without recording anything.
 */
enum unet_arp_next unet_arp_cache_next(struct unet_arp_cache *c, uint32_t ip, uint64_t now_ns,
				       uint8_t mac[6]);

enum unet_arp_learn {
	UNET_ARP_LEARNT,   /* the cache has spa -> sha now */
	UNET_ARP_REJECTED, /* sender not valid (unet_arp_sender_valid) */
	UNET_ARP_IGNORED,  /* valid, but not believed (see below) */
};
/*
 * Learn from an ARP frame that reached the endpoint (to_us: its tpa is one
 * of our addresses).  Only a valid sender, only a frame to us, never an
 * announcement (spa == tpa); a reply only if we are resolving spa
 * (PENDING: an answer to our request); a request may create an entry in a
 * free or expired slot, resolve a pending or failed one, refresh a fresh
 * one with the same MAC -- but never change the MAC of a fresh entry.
 */
enum unet_arp_learn unet_arp_learn(struct unet_arp_cache *c, const struct unet_arp_msg *m,
				   bool to_us, uint64_t now_ns);

/* ---- udp.c: frames -------------------------------------------------------- */

struct unet_udp_frame {
	uint32_t saddr, daddr;	 /* network order */
	uint16_t sport, dport;	 /* host order */
	uint32_t payload_off;	 /* from the frame start */
	uint32_t len;		 /* payload bytes */
	bool partial;		 /* the UDP checksum was the partial kind */
};

/* Write Ethernet, IPv4 and UDP headers in front of a payload of len bytes
 * that is already at frame + UNET_UDP_HDRS, with both checksums complete.
 * Returns the frame length (at least 60: short frames are zero-padded). */
uint32_t unet_udp_build(uint8_t *frame, const uint8_t dst_mac[6], const uint8_t src_mac[6],
			uint32_t saddr, uint32_t daddr, uint16_t sport, uint16_t dport,
			uint32_t len, uint16_t ip_id);
/* The same with the UDP checksum left to the device: the field holds the
 * folded pseudo-header sum (what a CHECKSUM_PARTIAL skb carries), to be
 * completed over the UDP header and payload (UNET_UDP_CSUM_START,
 * UNET_UDP_CSUM_OFFSET). */
uint32_t unet_udp_build_offload(uint8_t *frame, const uint8_t dst_mac[6],
				const uint8_t src_mac[6], uint32_t saddr, uint32_t daddr,
				uint16_t sport, uint16_t dport, uint32_t len, uint16_t ip_id);
#define UNET_UDP_CSUM_START (UNET_ETH_HLEN + UNET_IP_HLEN)
#define UNET_UDP_CSUM_OFFSET 6

enum unet_udp_verdict {
	UNET_UDP_OK = 0,
	UNET_UDP_NOT_UDP,	 /* not IPv4/UDP at all */
	UNET_UDP_MALFORMED,	 /* truncated, bad lengths, fragment, IP options */
	UNET_UDP_BAD_IP_CSUM,
	UNET_UDP_BAD_UDP_CSUM,
	UNET_UDP_PARTIAL_REFUSED, /* partial checksum and accept_partial false */
};

/* Check an Ethernet frame as an IPv4/UDP datagram: lengths, header
 * checksum, UDP checksum (0 = none sent; a partial one only if
 * accept_partial).  Fills *f on UNET_UDP_OK (and the addresses and ports
 * whenever they could be read). */
enum unet_udp_verdict unet_udp_parse(const uint8_t *frame, uint32_t len, bool accept_partial,
				     struct unet_udp_frame *f);

/* ---- udp6.c: IPv6 frames -------------------------------------------------- */

struct unet_udp6_frame {
	uint8_t saddr[16], daddr[16];
	uint16_t sport, dport; /* host order */
	uint32_t payload_off;  /* from the frame start */
	uint32_t len;	       /* payload bytes */
	bool partial;	       /* the UDP checksum was the partial kind */
};

/* Write Ethernet, IPv6 and UDP headers in front of a payload of len bytes
 * already at frame + UNET_UDP6_HDRS, with a complete checksum (hop limit
 * 64, no extension headers).  Returns the frame length. */
uint32_t unet_udp6_build(uint8_t *frame, const uint8_t dst_mac[6], const uint8_t src_mac[6],
			 const uint8_t saddr[16], const uint8_t daddr[16], uint16_t sport,
			 uint16_t dport, uint32_t len);
/* Check an untagged Ethernet frame as IPv6/UDP: UDP directly after the
 * fixed header (anything else is UNET_UDP_NOT_UDP if it is not an
 * extension header, UNET_UDP_MALFORMED if it is), lengths against the
 * frame, the checksum (mandatory: 0 is UNET_UDP_BAD_UDP_CSUM; a partial
 * one only if accept_partial).  Fills *f on UNET_UDP_OK. */
enum unet_udp_verdict unet_udp6_parse(const uint8_t *frame, uint32_t len, bool accept_partial,
				      struct unet_udp6_frame *f);


struct unet_udp_state;
struct unet_udp_sock;
/* The IPv6 half of the layer (udp6.c), plugged into an endpoint's state
 * when its first IPv6 socket opens, so that udp.c (the IPv4 half and the
 * sockets both share) calls it without depending on it. */
struct unet_udp_family {
	/* The layer's receive hook for IPv6 frames (udp_layer_rx hands
	 * them on). */
	enum unet_layer_verdict (*rx)(struct unet_udp_state *st, uint8_t *frame, uint32_t len,
				      struct unet_recv_desc *desc);
	/* An IPv6 socket's maps and port holder, when it closes. */
	void (*close_maps)(struct unet_udp_sock *s);
};

/* ---- udp.c: the endpoint's UDP state ------------------------------------ */

/* A datagram of len bytes at payload, checked and counted, for socket s
 * (found and filtered by the caller): the socket's largest, its partial
 * checksum policy; then handed over in desc.  Both IP versions. */
enum unet_layer_verdict unet_udp_deliver(struct unet_udp_state *st, struct unet_udp_sock *s,
					 uint8_t *payload, uint32_t len, bool partial,
					 uint32_t src_addr, uint16_t src_port,
					 struct unet_recv_desc *desc);


struct unet_udp_state;

struct unet_udp_sock {
	struct unet_udp_state *st;
	uint32_t laddr, raddr; /* network order */
	uint16_t lport, rport; /* host order */
	uint32_t txq;
	bool accept_partial;
	bool owns_addr; /* registered laddr in unet_udp_addrs */
	bool kernel_addr; /* the kernel has laddr (decided at open): it answers ARP */
	bool v6;	  /* an IPv6 socket: laddr6, raddr6 (laddr, raddr 0) */
	bool reuseport;	  /* the port is a SO_REUSEPORT group's */
	uint8_t laddr6[16], raddr6[16];
	/* IPv6 on an address the kernel also has: a kernel socket of ours
	 * bound to the port, so that no other socket takes it and gets what
	 * the XDP program must pass to the kernel (fragments, extension
	 * headers: it cannot find their port).  -1: none. */
	int hold_fd;
	unet_recv_handler handler;
	void *handler_ctx;
	struct unet_udp_sock *next;
};

/* The endpoint's UDP layer (attached with unet_layer_attach). */
struct unet_udp_state {
	struct unet_inet_ep inet; /* the endpoint, its interface (inet/inet.h) */
	struct unet_udp_sock *socks;
	struct unet_arp_cache arp;
	struct unet_inet_routes routes; /* next hops from the kernel */
	struct unet_inet6_routes routes6; /* the same for IPv6 */
	const struct unet_udp_family *v6; /* set by the first IPv6 socket */
	struct unet_rate arp_replies; /* what a remote host can make us send */
	uint16_t ip_id;
	struct unet_udp_stats st;
};

/* The endpoint's UDP state, attached as a layer when its first socket
 * opens.  Returns NULL with errno if that fails. */
struct unet_udp_state *unet_udp_state_get(struct unet_endpoint *ep);

/* ARP replies and neighbour advertisements the endpoint sends, all
 * requesters together: this many a second, and as many at once
 * (tests/integration/t_udp.sh knows it). */
#define UNET_UDP_REPLY_RATE UNET_INET_REPLY_RATE

/* ---- udp_admin.c: the pinned maps ------------------------------------ */

/* Remove UDP ports and addresses whose endpoint is missing or stale
 * (registered with the core, which calls it under the interface lock).
 * Returns how many were removed, or -errno. */
int unet_udp_reclaim(struct unet_iface *iface);

/* Install laddr:lport for endpoint (replacing a stale owner's entry).
 * Returns 0, -EADDRINUSE (a live endpoint has it), -ENOSPC, -errno. */
int unet_udp_port_add(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr,
		      uint16_t lport, uint32_t raddr, uint16_t rport);
/* Join endpoint to the SO_REUSEPORT group of laddr:lport as uid's (or
 * make the group): inet/port_group.h.  Returns 0, -EADDRINUSE (held
 * without a group), -EACCES (another user's group), -EEXIST (endpoint
 * is in uid's group already), -ENOSPC, -EOPNOTSUPP (no group map),
 * -errno. */
int unet_udp_port_join(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr,
		       uint16_t lport, uint32_t uid);
/* Remove laddr:lport if endpoint still owns it (or leave its group). */
void unet_udp_port_remove(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr,
			  uint16_t lport);

/* The same for IPv6 ports (unet_udp6_ports). */
#define UNET_MAP_UDP6_PORTS "unet_udp6_ports"
int unet_udp6_port_add(struct unet_iface *iface, uint32_t endpoint, const uint8_t laddr[16],
		       uint16_t lport, const uint8_t raddr[16], uint16_t rport);
void unet_udp6_port_remove(struct unet_iface *iface, uint32_t endpoint, const uint8_t laddr[16],
			   uint16_t lport);

#endif /* UNET_UDP_IMPL_H */
