/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nd6.c - IPv6 frames below the layers: the Ethernet and fixed IPv6
 * headers, and neighbour discovery's solicitation (checked) and
 * advertisement (built), which the UDP and TCP layers both answer for
 * the addresses U-Net owns alone (inet.h).
 */
#include <netinet/in.h>
#include <stdbool.h>
#include <string.h>

#include "core/layer.h"
#include "inet/inet.h"

#define ICMPV6_NS 135
#define ICMPV6_NA 136
#define ND_OPT_SLLA 1
#define ND_OPT_TLLA 2

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static bool mac_unicast(const uint8_t m[6])
{
	return !(m[0] & 1) && (m[0] | m[1] | m[2] | m[3] | m[4] | m[5]) != 0;
}

/* The fixed IPv6 header with Ethernet in front; the payload length and
 * next header as given. */
void unet_ip6_put_eth(uint8_t *frame, const uint8_t dst_mac[6], const uint8_t src_mac[6],
		      const uint8_t saddr[16], const uint8_t daddr[16], uint16_t plen,
		      uint8_t next, uint8_t hop_limit)
{
	uint8_t *ip = frame + UNET_ETH_HLEN;

	memcpy(frame, dst_mac, 6);
	memcpy(frame + 6, src_mac, 6);
	put16(frame + 12, UNET_ETH_P_IPV6);
	memset(ip, 0, 4);
	ip[0] = 0x60; /* version 6, traffic class 0, flow label 0 */
	put16(ip + 4, plen);
	ip[6] = next;
	ip[7] = hop_limit;
	memcpy(ip + 8, saddr, 16);
	memcpy(ip + 24, daddr, 16);
}

/* The fixed header of an untagged IPv6 frame: -1 if not IPv6 at all, 0 if
 * the frame holds it and payload_len fits the frame (*plen set), 1 if not. */
int unet_ip6_fixed(const uint8_t *frame, uint32_t len, uint32_t *plen)
{
	const uint8_t *ip = frame + UNET_ETH_HLEN;

	if (len < UNET_ETH_HLEN || get16(frame + 12) != UNET_ETH_P_IPV6)
		return -1;
	if (len < UNET_ETH_HLEN + UNET_IP6_HLEN || ip[0] >> 4 != 6)
		return 1;
	*plen = get16(ip + 4);
	/* padding after the payload is allowed, a frame shorter is not */
	return *plen > len - UNET_ETH_HLEN - UNET_IP6_HLEN ? 1 : 0;
}

/* Whether d is the solicited-node multicast group of target (ff02::1:ff
 * and target's last 24 bits, RFC 4291 2.7.1). */
static bool solicited_node(const uint8_t d[16], const uint8_t target[16])
{
	static const uint8_t prefix[13] = { 0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff };

	return !memcmp(d, prefix, 13) && !memcmp(d + 13, target + 13, 3);
}

enum unet_nd_verdict unet_nd_parse_ns(const uint8_t *frame, uint32_t len, struct unet_nd_ns *ns)
{
	const uint8_t *ip = frame + UNET_ETH_HLEN, *icmp = ip + UNET_IP6_HLEN, *opt;
	uint32_t plen, off;
	bool have_slla = false;
	int fixed;

	memset(ns, 0, sizeof(*ns));
	fixed = unet_ip6_fixed(frame, len, &plen);
	if (fixed < 0 || (fixed == 0 && ip[6] != IPPROTO_ICMPV6))
		return UNET_ND_NOT_NS;
	if (fixed > 0 || plen < 24)
		return UNET_ND_MALFORMED;
	if (icmp[0] != ICMPV6_NS)
		return UNET_ND_NOT_NS;
	/* RFC 4861 7.1.1: from the link itself (hop limit 255), code 0. */
	if (ip[7] != 255 || icmp[1] != 0)
		return UNET_ND_MALFORMED;
	if (unet_csum_fold(unet_csum_add(unet_csum_pseudo6(ip + 8, ip + 24, IPPROTO_ICMPV6, plen),
					 icmp, plen)) != 0xffff)
		return UNET_ND_BAD_CSUM;
	memcpy(ns->saddr, ip + 8, 16);
	memcpy(ns->target, icmp + 8, 16);
	memcpy(ns->reply_mac, frame + 6, 6);
	/* Options: type, length in units of 8 bytes (0 is invalid), all
	 * inside the payload. */
	for (off = 24; off < plen;) {
		opt = icmp + off;
		if (plen - off < 2 || opt[1] == 0 || opt[1] * 8u > plen - off)
			return UNET_ND_MALFORMED;
		if (opt[0] == ND_OPT_SLLA) {
			if (opt[1] != 1)
				return UNET_ND_MALFORMED;
			memcpy(ns->reply_mac, opt + 2, 6);
			have_slla = true;
		}
		off += opt[1] * 8u;
	}
	if (ns->target[0] == 0xff)
		return UNET_ND_MALFORMED; /* a solicitation for a group */
	/* Duplicate address detection (unspecified source, no option
	 * allowed) asks whether anyone has the address: we do not defend
	 * it, the kernel's answer or nobody's stands. */
	if (unet_inet6_addr_zero(ns->saddr))
		return have_slla ? UNET_ND_MALFORMED : UNET_ND_REJECTED;
	if (ns->saddr[0] == 0xff || !mac_unicast(ns->reply_mac))
		return UNET_ND_REJECTED;
	if (memcmp(ip + 24, ns->target, 16) && !solicited_node(ip + 24, ns->target))
		return UNET_ND_REJECTED;
	return UNET_ND_NS;
}

uint32_t unet_nd_build_na(uint8_t *frame, const uint8_t our_mac[6], const struct unet_nd_ns *ns)
{
	uint8_t *icmp = frame + UNET_ETH_HLEN + UNET_IP6_HLEN;
	uint16_t csum;

	unet_ip6_put_eth(frame, ns->reply_mac, our_mac, ns->target, ns->saddr, 32, IPPROTO_ICMPV6, 255);
	memset(icmp, 0, 32);
	icmp[0] = ICMPV6_NA;
	icmp[4] = 0x60; /* solicited, override (not a router) */
	memcpy(icmp + 8, ns->target, 16);
	icmp[24] = ND_OPT_TLLA;
	icmp[25] = 1;
	memcpy(icmp + 26, our_mac, 6);
	csum = (uint16_t)~unet_csum_fold(
		unet_csum_add(unet_csum_pseudo6(ns->target, ns->saddr, IPPROTO_ICMPV6, 32), icmp, 32));
	put16(icmp + 2, csum);
	return UNET_ND_NA_FRAME_LEN;
}
