/* SPDX-License-Identifier: BSD-2-Clause */
/* udp_impl.h - UDP/IPv4 over U-Net inside the library: checksums
 * (inet_csum.c), ARP frames and the ARP cache (arp.c), UDP frames and
 * sockets (udp.c), the pinned-map side (udp_admin.c).  Never installed.
 * The pure functions here are unit-tested (tests/unit/test_udp.c). */
#ifndef UNET_UDP_IMPL_H
#define UNET_UDP_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"
#include "unet-xdp/unet_udp.h"

/* The UDP layer's maps in the interface's pin directory. */
#define UNET_MAP_UDP_PORTS "unet_udp_ports"
#define UNET_MAP_UDP_ADDRS "unet_udp_addrs"
#define UNET_MAP_NEIGH "unet_neigh"

#define UNET_ETH_P_IP 0x0800
#define UNET_ETH_P_ARP 0x0806
#define UNET_IP_HLEN 20
#define UNET_UDP_HLEN 8
/* Ethernet + IPv4 (no options) + UDP: what we send. */
#define UNET_UDP_HDRS (UNET_ETH_HLEN + UNET_IP_HLEN + UNET_UDP_HLEN)
/* A UDP send buffer's frame starts this far into the buffer, so the
 * payload after the 42 bytes of headers is 8-byte aligned (6 + 42 = 48).
 * Completions find the buffer by the frame it is in, whatever the offset. */
#define UNET_UDP_TX_PAD 6
#define UNET_UDP_TX_PAYLOAD (UNET_UDP_TX_PAD + UNET_UDP_HDRS)
#define UNET_ARP_FRAME_LEN 60 /* 14 + 28, padded to the Ethernet minimum */

/* ---- inet_csum.c: the Internet checksum (RFC 1071) --------------------- */

/* Add len bytes at data to the running one's-complement sum (64-bit, not
 * folded); data is read as big-endian 16-bit words, an odd last byte is
 * padded with a zero.  Returns the new sum. */
uint64_t unet_csum_add(uint64_t sum, const void *data, size_t len);
/* Fold a running sum into 16 bits (not inverted). */
uint16_t unet_csum_fold(uint64_t sum);
/* The IPv4 pseudo-header of UDP (addresses in network order, len the UDP
 * length), as a running sum. */
uint64_t unet_csum_pseudo(uint32_t saddr, uint32_t daddr, uint8_t proto, uint16_t len);

/* ---- arp.c ------------------------------------------------------------- */

struct unet_arp_msg {
	uint16_t op; /* 1 request, 2 reply */
	uint8_t sha[6], tha[6];
	uint32_t spa, tpa; /* network order */
};

/* Write an ARP frame (Ethernet + 28 bytes, padded to 60) at frame; eth_dst
 * is the Ethernet destination.  Returns its length (60). */
uint32_t unet_arp_build(uint8_t *frame, const uint8_t eth_dst[6], const struct unet_arp_msg *m);
/* Parse an IPv4-over-Ethernet ARP frame (after at most one VLAN tag).
 * Returns 0, or -EINVAL for anything else. */
int unet_arp_parse(const uint8_t *frame, uint32_t len, struct unet_arp_msg *m);

#define UNET_ARP_CACHE_SLOTS 64

struct unet_arp_entry {
	uint32_t ip; /* network order; 0: free slot */
	uint8_t mac[6];
	uint64_t updated_ns; /* CLOCK_MONOTONIC of the answer it came from */
};

/* The endpoint's own cache in front of the interface's unet_neigh map.
 * Times are passed in (CLOCK_MONOTONIC ns), so tests set the clock. */
struct unet_arp_cache {
	struct unet_arp_entry e[UNET_ARP_CACHE_SLOTS];
	uint64_t ttl_ns;
};

void unet_arp_cache_init(struct unet_arp_cache *c, uint64_t ttl_ns);
/* Returns 0 and *mac for an entry younger than the TTL, -ESTALE for an
 * expired one (to be resolved again), -ENOENT for none. */
int unet_arp_cache_lookup(const struct unet_arp_cache *c, uint32_t ip, uint64_t now_ns,
			  uint8_t mac[6]);
/* Insert or refresh ip's entry, learnt at updated_ns (an older answer
 * never replaces a newer one).  A full cache drops its oldest entry. */
void unet_arp_cache_update(struct unet_arp_cache *c, uint32_t ip, const uint8_t mac[6],
			   uint64_t updated_ns);

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

/* ---- udp.c: the endpoint's UDP state ------------------------------------ */

struct unet_udp_state;

struct unet_udp_sock {
	struct unet_udp_state *st;
	uint32_t laddr, raddr; /* network order */
	uint16_t lport, rport; /* host order */
	uint32_t txq;
	bool accept_partial;
	bool owns_addr; /* registered laddr in unet_udp_addrs */
	unet_recv_handler handler;
	void *handler_ctx;
	struct unet_udp_sock *next;
};

/* The endpoint's UDP layer (attached with unet_layer_attach). */
struct unet_udp_state {
	struct unet_endpoint *ep;
	struct unet_iface *iface;
	uint32_t slot; /* our endpoint slot */
	uint32_t mtu, frame_size;
	uint8_t mac[6];
	int neigh_fd;  /* the interface's unet_neigh map */
	struct unet_udp_sock *socks;
	struct unet_arp_cache arp;
	uint64_t arp_timeout_ns;
	uint16_t ip_id;
	struct unet_udp_stats st;
};

/* ---- udp_admin.c: the pinned maps ------------------------------------ */

/* Remove UDP ports and addresses whose endpoint is missing or stale
 * (registered with the core, which calls it under the interface lock).
 * Returns how many were removed, or -errno. */
int unet_udp_reclaim(struct unet_iface *iface);

/* Install laddr:lport for endpoint (replacing a stale owner's entry).
 * Returns 0, -EADDRINUSE (a live endpoint has it), -ENOSPC, -errno. */
int unet_udp_port_add(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr,
		      uint16_t lport, uint32_t raddr, uint16_t rport);
/* Remove laddr:lport if endpoint still owns it. */
void unet_udp_port_remove(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr,
			  uint16_t lport);
/* Register laddr in unet_udp_addrs for endpoint unless a live endpoint
 * has it.  Returns 1 if registered now, 0 if someone live has it, -errno. */
int unet_udp_addr_claim(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr,
			uint32_t flags);
/* Remove laddr's registration if endpoint holds it. */
void unet_udp_addr_release(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr);

#endif /* UNET_UDP_IMPL_H */
