/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * wire_udp.c - building and checking routable channels' frames: the
 * U-Net header inside UDP/IPv4 or UDP/IPv6 (docs/wire-format.md,
 * "Routable channels").  Pure functions, like wire.c; the XDP program
 * (bpf/xdp_chan.h, xdp_chan6.h) is the gate and this is the library's
 * second look -- and, over IPv6, the only check of the UDP checksum.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "core/internal.h"
#include "core/csum.h"

#define ETH_MIN_FRAME 60 /* without FCS */
#define ETH_P_IPV4 0x0800
#define ETH_P_IPV6 0x86DD
#define IP_PROTO_UDP 17
#define IP_TTL_DEFAULT 64
#define IP_DF 0x4000
#define IP6_HOP_LIMIT 64

/* The IPv4 header checksum over hlen bytes (RFC 1071). */
static uint16_t ip_csum(const uint8_t *h, uint32_t hlen)
{
	uint32_t sum = 0;

	for (uint32_t i = 0; i + 1 < hlen; i += 2)
		sum += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The Ethernet header and, at udp, the UDP header (checksum 0 for now)
 * and the U-Net header: what both address families put alike. */
static void put_eth_udp_unet(uint8_t *frame, uint8_t *udp, const struct unet_wire_udp *w,
			     uint16_t ethertype, uint32_t ulen, uint32_t len)
{
	struct unet_hdr h = {
		.version = UNET_WIRE_VERSION,
		.dst_tag = htons(w->dst_tag),
		.src_tag = htons(w->src_tag),
		.len = htons((uint16_t)len),
	};

	memcpy(frame, w->dst_mac, 6);
	memcpy(frame + 6, w->src_mac, 6);
	put16(frame + 12, ethertype);
	put16(udp, w->sport);
	put16(udp + 2, w->dport);
	put16(udp + 4, (uint16_t)ulen);
	put16(udp + 6, 0);
	memcpy(udp + UNET_UDP_HLEN, &h, sizeof(h));
}

static uint32_t build4(uint8_t *frame, const struct unet_wire_udp *w, uint32_t len)
{
	uint8_t *ip = frame + UNET_ETH_HLEN, *udp = ip + UNET_IP_HLEN;
	uint32_t tot = UNET_IP_HLEN + UNET_UDP_HLEN + UNET_HDR_LEN + len;
	uint32_t flen = UNET_ETH_HLEN + tot;

	/* the UDP checksum stays 0: docs/wire-format.md */
	put_eth_udp_unet(frame, udp, w, ETH_P_IPV4, tot - UNET_IP_HLEN, len);
	memset(ip, 0, UNET_IP_HLEN);
	ip[0] = 0x45;
	put16(ip + 2, (uint16_t)tot);
	/* DF: a routable channel's frames are never fragmented (the XDP
	 * program drops fragments), so a too-small path MTU must show. */
	put16(ip + 6, IP_DF);
	ip[8] = IP_TTL_DEFAULT;
	ip[9] = IP_PROTO_UDP;
	memcpy(ip + 12, &w->saddr, 4);
	memcpy(ip + 16, &w->daddr, 4);
	put16(ip + 10, ip_csum(ip, UNET_IP_HLEN));
	if (flen < ETH_MIN_FRAME) {
		memset(frame + flen, 0, ETH_MIN_FRAME - flen);
		flen = ETH_MIN_FRAME;
	}
	return flen;
}

static int parse4(const uint8_t *frame, uint32_t frame_len, uint16_t port, struct unet_wire_udp *w,
		  uint32_t *payload_off, uint32_t *len)
{
	const uint8_t *ip = frame + UNET_ETH_HLEN, *udp = ip + UNET_IP_HLEN;
	struct unet_hdr h;
	uint32_t tot;

	if (frame_len < UNET_UDP_PAYLOAD_OFF || get16(frame + 12) != ETH_P_IPV4 ||
	    ip[0] != 0x45 || ip[9] != IP_PROTO_UDP || get16(udp + 2) != port)
		return -EINVAL;
	tot = get16(ip + 2);
	if (tot < UNET_IP_HLEN + UNET_UDP_HLEN + UNET_HDR_LEN || UNET_ETH_HLEN + tot > frame_len ||
	    (get16(ip + 6) & 0x3fff) || get16(udp + 4) != tot - UNET_IP_HLEN || get16(udp + 6))
		return -EINVAL;
	memcpy(&h, udp + UNET_UDP_HLEN, sizeof(h));
	if (h.version != UNET_WIRE_VERSION || !h.len ||
	    ntohs(h.len) != tot - UNET_IP_HLEN - UNET_UDP_HLEN - UNET_HDR_LEN)
		return -EINVAL;
	memset(w, 0, sizeof(*w));
	memcpy(w->src_mac, frame + 6, 6);
	memcpy(w->dst_mac, frame, 6);
	memcpy(&w->saddr, ip + 12, 4);
	memcpy(&w->daddr, ip + 16, 4);
	w->sport = get16(udp);
	w->dport = port;
	w->dst_tag = ntohs(h.dst_tag);
	w->src_tag = ntohs(h.src_tag);
	*payload_off = UNET_UDP_PAYLOAD_OFF;
	*len = ntohs(h.len);
	return 0;
}

/* The UDP checksum of the datagram at udp (ulen bytes) between the IPv6
 * addresses at ip + 8 and ip + 24, as it goes on the wire (0 sent as
 * 0xffff, RFC 768). */
static uint16_t udp6_csum(const uint8_t *ip, const uint8_t *udp, uint32_t ulen)
{
	uint64_t sum = unet_csum_pseudo6(ip + 8, ip + 24, IP_PROTO_UDP, ulen);
	uint16_t c = (uint16_t)~unet_csum_fold(unet_csum_add(sum, udp, ulen));

	return c ? c : 0xffff;
}

static uint32_t build6(uint8_t *frame, const struct unet_wire_udp *w, uint32_t len)
{
	uint8_t *ip = frame + UNET_ETH_HLEN, *udp = ip + UNET_IP6_HLEN;
	uint32_t ulen = UNET_UDP_HLEN + UNET_HDR_LEN + len;
	uint32_t flen = UNET_ETH_HLEN + UNET_IP6_HLEN + ulen;

	put_eth_udp_unet(frame, udp, w, ETH_P_IPV6, ulen, len);
	/* version 6, traffic class 0, flow label 0: the 5-tuple (the source
	 * port is the channel's) is what ECMP and RSS hash on, as over IPv4 */
	memset(ip, 0, 4);
	ip[0] = 0x60;
	put16(ip + 4, (uint16_t)ulen);
	ip[6] = IP_PROTO_UDP;
	ip[7] = IP6_HOP_LIMIT;
	memcpy(ip + 8, w->saddr6, 16);
	memcpy(ip + 24, w->daddr6, 16);
	/* Mandatory over IPv6 (RFC 8200 8.1): a pass over the payload. */
	put16(udp + 6, udp6_csum(ip, udp, ulen));
	/* 14 + 40 + 8 + 8 = 70 bytes of headers: never short of 60 */
	return flen;
}

uint32_t unet_wire_udp_build(uint8_t *frame, const struct unet_wire_udp *w, uint32_t len)
{
	return w->v6 ? build6(frame, w, len) : build4(frame, w, len);
}

static int parse6(const uint8_t *frame, uint32_t frame_len, uint16_t port, struct unet_wire_udp *w,
		  uint32_t *payload_off, uint32_t *len)
{
	const uint8_t *ip = frame + UNET_ETH_HLEN, *udp = ip + UNET_IP6_HLEN;
	struct unet_hdr h;
	uint32_t plen;

	/* Next header UDP: an extension header is refused, as the XDP
	 * program refuses it. */
	if (frame_len < UNET_UDP6_PAYLOAD_OFF || (ip[0] >> 4) != 6 || ip[6] != IP_PROTO_UDP ||
	    get16(udp + 2) != port)
		return -EINVAL;
	plen = get16(ip + 4);
	if (plen < UNET_UDP_HLEN + UNET_HDR_LEN || UNET_ETH_HLEN + UNET_IP6_HLEN + plen > frame_len ||
	    get16(udp + 4) != plen || !get16(udp + 6))
		return -EINVAL;
	/* The sum over the whole datagram with its checksum field folds to
	 * all ones when it is right. */
	if (unet_csum_fold(unet_csum_add(unet_csum_pseudo6(ip + 8, ip + 24, IP_PROTO_UDP, plen),
					 udp, plen)) != 0xffff)
		return -EINVAL;
	memcpy(&h, udp + UNET_UDP_HLEN, sizeof(h));
	if (h.version != UNET_WIRE_VERSION || !h.len ||
	    ntohs(h.len) != plen - UNET_UDP_HLEN - UNET_HDR_LEN)
		return -EINVAL;
	memset(w, 0, sizeof(*w));
	memcpy(w->src_mac, frame + 6, 6);
	memcpy(w->dst_mac, frame, 6);
	w->v6 = true;
	memcpy(w->saddr6, ip + 8, 16);
	memcpy(w->daddr6, ip + 24, 16);
	w->sport = get16(udp);
	w->dport = port;
	w->dst_tag = ntohs(h.dst_tag);
	w->src_tag = ntohs(h.src_tag);
	*payload_off = UNET_UDP6_PAYLOAD_OFF;
	*len = ntohs(h.len);
	return 0;
}

int unet_wire_udp_parse(const uint8_t *frame, uint32_t frame_len, uint16_t port,
			struct unet_wire_udp *w, uint32_t *payload_off, uint32_t *len)
{
	if (frame_len < UNET_ETH_HLEN)
		return -EINVAL;
	if (get16(frame + 12) == ETH_P_IPV6)
		return parse6(frame, frame_len, port, w, payload_off, len);
	return parse4(frame, frame_len, port, w, payload_off, len);
}
