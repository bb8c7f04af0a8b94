/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcp_check.c - the check of a TCP/IPv4 frame an emulated endpoint wants
 * sent: well formed, from an address and port the endpoint holds.  Pure
 * (no daemon state but the endpoint's list of ports), so that the unit
 * tests run it on crafted frames (tests/unit/test_tcp_check.c).
 */
#include <netinet/in.h>
#include <string.h>

#include "unetd.h"
#include "wire_get.h"



enum unetd_tcp_verdict unetd_tcp_check_frame(const uint8_t *f, uint32_t len,
					     const struct unetd_tcp_port *held)
{
	uint16_t tot, frag, sport;
	uint32_t doff, saddr;
	bool addr_held = false;

	/* As lib/tcp sends: IPv4 without options (lwIP writes none), TCP,
	 * not a fragment, the IP length inside the frame, the TCP header
	 * (its data offset) inside the IP length. */
	if (len < UNET_ETH_HLEN + UNET_IP_HLEN + UNETD_TCP_HLEN || unetd_get16(f + 12) != 0x0800 || f[14] != 0x45 ||
	    f[23] != IPPROTO_TCP)
		return UNETD_TCP_BAD_FRAME;
	tot = unetd_get16(f + 16);
	frag = unetd_get16(f + 20);
	if (tot < UNET_IP_HLEN + UNETD_TCP_HLEN || UNET_ETH_HLEN + (uint32_t)tot > len || (frag & 0x3fff))
		return UNETD_TCP_BAD_FRAME;
	doff = (f[UNET_ETH_HLEN + UNET_IP_HLEN + 12] >> 4) * 4u;
	if (doff < UNETD_TCP_HLEN || doff > (uint32_t)tot - UNET_IP_HLEN)
		return UNETD_TCP_BAD_FRAME;
	memcpy(&saddr, f + 26, 4);
	sport = unetd_get16(f + UNET_ETH_HLEN + UNET_IP_HLEN);
	for (const struct unetd_tcp_port *p = held; p; p = p->next) {
		if (p->laddr != saddr)
			continue;
		if (p->lport == sport)
			return UNETD_TCP_OK;
		addr_held = true;
	}
	return addr_held ? UNETD_TCP_FOREIGN_PORT : UNETD_TCP_FOREIGN_ADDR;
}
