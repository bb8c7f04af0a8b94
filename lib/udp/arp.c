/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * arp.c - ARP (RFC 826) for IPv4 over Ethernet: building and parsing the
 * frames, and the endpoint's cache of resolved neighbours.  The cache is
 * a small array searched linearly (64 entries: an endpoint talks to few
 * peers), with an expiry so a peer that changed its MAC is asked again.
 * Where the answers come from is udp.c's business (docs/udp.md, "ARP").
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "udp/udp_impl.h"

#define ARP_LEN 28

uint32_t unet_arp_build(uint8_t *frame, const uint8_t eth_dst[6], const struct unet_arp_msg *m)
{
	uint8_t *a = frame + UNET_ETH_HLEN;
	uint16_t v;

	memcpy(frame, eth_dst, 6);
	memcpy(frame + 6, m->sha, 6);
	v = htons(UNET_ETH_P_ARP);
	memcpy(frame + 12, &v, 2);
	v = htons(1); /* Ethernet */
	memcpy(a, &v, 2);
	v = htons(UNET_ETH_P_IP);
	memcpy(a + 2, &v, 2);
	a[4] = 6;
	a[5] = 4;
	v = htons(m->op);
	memcpy(a + 6, &v, 2);
	memcpy(a + 8, m->sha, 6);
	memcpy(a + 14, &m->spa, 4);
	memcpy(a + 18, m->tha, 6);
	memcpy(a + 24, &m->tpa, 4);
	memset(a + ARP_LEN, 0, UNET_ARP_FRAME_LEN - UNET_ETH_HLEN - ARP_LEN);
	return UNET_ARP_FRAME_LEN;
}

int unet_arp_parse(const uint8_t *frame, uint32_t len, struct unet_arp_msg *m)
{
	uint32_t off = 12;
	const uint8_t *a;
	uint16_t proto, v;

	if (len < UNET_ETH_HLEN)
		return -EINVAL;
	memcpy(&proto, frame + off, 2);
	off += 2;
	if (proto == htons(0x8100) || proto == htons(0x88A8)) {
		if (len < off + 4)
			return -EINVAL;
		memcpy(&proto, frame + off + 2, 2);
		off += 4;
	}
	if (proto != htons(UNET_ETH_P_ARP) || len < off + ARP_LEN)
		return -EINVAL;
	a = frame + off;
	memcpy(&v, a, 2);
	if (v != htons(1))
		return -EINVAL;
	memcpy(&v, a + 2, 2);
	if (v != htons(UNET_ETH_P_IP) || a[4] != 6 || a[5] != 4)
		return -EINVAL;
	memcpy(&v, a + 6, 2);
	m->op = ntohs(v);
	memcpy(m->sha, a + 8, 6);
	memcpy(&m->spa, a + 14, 4);
	memcpy(m->tha, a + 18, 6);
	memcpy(&m->tpa, a + 24, 4);
	return 0;
}

void unet_arp_cache_init(struct unet_arp_cache *c, uint64_t ttl_ns)
{
	memset(c, 0, sizeof(*c));
	c->ttl_ns = ttl_ns;
}

static struct unet_arp_entry *find(const struct unet_arp_cache *c, uint32_t ip)
{
	for (int i = 0; i < UNET_ARP_CACHE_SLOTS; i++)
		if (c->e[i].ip == ip)
			return (struct unet_arp_entry *)&c->e[i];
	return NULL;
}

int unet_arp_cache_lookup(const struct unet_arp_cache *c, uint32_t ip, uint64_t now_ns,
			  uint8_t mac[6])
{
	const struct unet_arp_entry *e;

	if (!ip || !(e = find(c, ip)))
		return -ENOENT;
	/* An answer from the future (a clock that went backwards in a test)
	 * counts as fresh: its age is 0. */
	if (now_ns > e->updated_ns && now_ns - e->updated_ns >= c->ttl_ns)
		return -ESTALE;
	memcpy(mac, e->mac, 6);
	return 0;
}

void unet_arp_cache_update(struct unet_arp_cache *c, uint32_t ip, const uint8_t mac[6],
			   uint64_t updated_ns)
{
	struct unet_arp_entry *e;

	if (!ip)
		return;
	e = find(c, ip);
	if (e && e->updated_ns > updated_ns)
		return;
	if (!e)
		e = find(c, 0);
	if (!e) {
		e = &c->e[0];
		for (int i = 1; i < UNET_ARP_CACHE_SLOTS; i++)
			if (c->e[i].updated_ns < e->updated_ns)
				e = &c->e[i];
	}
	e->ip = ip;
	memcpy(e->mac, mac, 6);
	e->updated_ns = updated_ns;
}
