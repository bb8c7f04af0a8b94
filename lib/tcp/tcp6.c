/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcp6.c - the IPv6 side of TCP over U-Net that needs no lwIP
 * (docs/tcp.md, "IPv6"): the checks a received IPv6/TCP frame passes
 * before lwIP sees it, and the answer to a neighbour solicitation for
 * the endpoint's IPv6 address when U-Net owns it alone.  tcp.c calls
 * both; lwIP's headers are not included here (they redefine the socket
 * API's names), so these are also what the unit tests and the fuzz
 * test reach directly.
 */
#include <errno.h>
#include <string.h>

#include "core/layer.h"
#include "inet/inet.h"
#include "tcp/tcp_impl.h"

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

bool unet_tcp6_addr_usable(const uint8_t a[16])
{
	/* Link-local addresses need a zone, which neither our API nor
	 * the lwIP netif carries: global and unique-local ones only. */
	return unet_inet6_addr_unicast(a) && !(a[0] == 0xfe && (a[1] & 0xc0) == 0x80);
}

enum unet_tcp6_verdict unet_tcp6_check(uint8_t *frame, uint32_t len, const uint8_t addr[16],
				       bool accept_partial, uint32_t mtu, struct unet_tcp6_seg *seg)
{
	uint8_t *ip = frame + UNET_ETH_HLEN, *t;
	uint32_t plen, doff;
	uint64_t pseudo, sum;
	uint16_t field, fixed;

	if (len < UNET_ETH_HLEN + 40 || get16(frame + 12) != 0x86dd || ip[0] >> 4 != 6)
		return UNET_TCP6_NOT_TCP;
	if (ip[6] != 6)
		return UNET_TCP6_NOT_TCP;
	/* Never lwIP's to forward (IPV6_FORWARD is on in its build). */
	if (memcmp(ip + 24, addr, 16))
		return UNET_TCP6_NOT_OURS;
	/*
	 * A source that cannot be a host's on the link, or our own address:
	 * lwIP would answer (a reset) to ::1 or to its own address through
	 * its loopback path, which posts to the tcpip thread we do not run
	 * -- an assertion that aborts the process (seen: "Invalid mbox",
	 * tcpip.c).  So neither reaches lwIP.
	 */
	if (!unet_tcp6_addr_usable(ip + 8) || !memcmp(ip + 8, addr, 16))
		return UNET_TCP6_MALFORMED;
	/* Padding after the payload is allowed, a frame shorter is not; no
	 * jumbogram (payload length 0), no segment longer than the link. */
	plen = get16(ip + 4);
	if (plen < 20 || plen > len - UNET_ETH_HLEN - 40 || 40 + plen > mtu)
		return UNET_TCP6_MALFORMED;
	t = ip + 40;
	doff = (t[12] >> 4) * 4u;
	if (doff < 20 || doff > plen)
		return UNET_TCP6_MALFORMED;
	/* The checksum with the IPv6 pseudo-header (mandatory: 0 is no
	 * exception for TCP); a partial one completed if the policy takes
	 * it, in place: lwIP checks it again on its copy. */
	pseudo = unet_csum_pseudo6(ip + 8, ip + 24, 6, plen);
	sum = unet_csum_add(unet_csum_add(pseudo, t, 16), t + 18, plen - 18);
	field = get16(t + 16);
	seg->partial = false;
	if (unet_csum_fold(sum + field) != 0xffff) {
		if (field != unet_csum_fold(pseudo))
			return UNET_TCP6_BAD_CSUM;
		if (!accept_partial)
			return UNET_TCP6_PARTIAL_REFUSED;
		fixed = (uint16_t)~unet_csum_fold(sum);
		t[16] = (uint8_t)(fixed >> 8);
		t[17] = (uint8_t)fixed;
		seg->partial = true;
	}
	memcpy(seg->saddr, ip + 8, 16);
	memcpy(seg->daddr, ip + 24, 16);
	seg->t = t;
	seg->tl = plen;
	seg->doff = doff;
	return UNET_TCP6_OK;
}

int unet_tcp6_answer_ns(struct unet_endpoint *ep, uint32_t txq, const uint8_t mac[6],
			const uint8_t addr[16], const uint8_t *frame, uint32_t len,
			struct unet_tcp6_nd *nd)
{
	struct unet_rate rate = { .tat = nd->rate_tat };
	struct unet_nd_ns ns;
	bool take;
	uint64_t buf;
	uint32_t flen;

	switch (unet_nd_parse_ns(frame, len, &ns)) {
	case UNET_ND_NS:
		break;
	case UNET_ND_NOT_NS:
		return -ENOMSG;
	case UNET_ND_REJECTED:
		return -EPERM;
	default:
		return -EINVAL;
	}
	if (memcmp(ns.target, addr, 16))
		return -EPERM;
	/* As many answers a second as the UDP layer gives (a flood of
	 * solicitations costs a bounded number of frames). */
	take = unet_rate_take(&rate, unet_inet_now_ns(), UNET_INET_REPLY_RATE, UNET_INET_REPLY_RATE);
	nd->rate_tat = rate.tat;
	if (!take)
		return -EBUSY;
	buf = unet_endpoint__buf_alloc(ep);
	if (buf == UNET_NO_BUF)
		return -EBUSY;
	flen = unet_nd_build_na(unet_layer_buf(ep, buf) + UNET_TCP_TX_OFF, mac, &ns);
	if (unet_layer_xmit(ep, txq, buf, UNET_TCP_TX_OFF, flen)) {
		unet_endpoint__buf_free(ep, buf);
		return -EBUSY;
	}
	return 0;
}
