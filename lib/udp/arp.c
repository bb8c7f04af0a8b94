/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * arp.c - ARP (RFC 826) for IPv4 over Ethernet: building and parsing the
 * frames, and the endpoint's cache of resolved neighbours.  The cache is
 * a small array searched linearly (64 entries: an endpoint talks to few
 * peers), with an expiry so a peer that changed its MAC is asked again,
 * and the resolver's state in it: peers being asked (pending) and peers
 * that did not answer (a negative cache).  What the endpoint believes of
 * an ARP frame (unet_arp_learn) and the rate limiter are here too: pure
 * functions, the clock passed in.  Where the answers come from is udp.c's
 * business (docs/udp.md, "ARP").
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
	memcpy(m->eth_src, frame + 6, 6);
	memcpy(&v, a + 6, 2);
	m->op = ntohs(v);
	memcpy(m->sha, a + 8, 6);
	memcpy(&m->spa, a + 14, 4);
	memcpy(m->tha, a + 18, 6);
	memcpy(&m->tpa, a + 24, 4);
	return 0;
}

bool unet_arp_sender_valid(const struct unet_arp_msg *m)
{
	static const uint8_t zero[6];
	const uint8_t *spa = (const uint8_t *)&m->spa;

	if (memcmp(m->sha, m->eth_src, 6) || (m->sha[0] & 1) || !memcmp(m->sha, zero, 6))
		return false;
	if (!m->spa || m->spa == 0xffffffffu)
		return false;
	return (spa[0] & 0xf0) != 0xe0; /* 224.0.0.0/4 */
}

/* How long ago `then` was; 0 if it is in the future (a clock set back in
 * a test). */
static uint64_t age(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}

void unet_arp_cache_init(struct unet_arp_cache *c, uint64_t ttl_ns)
{
	memset(c, 0, sizeof(*c));
	c->ttl_ns = ttl_ns;
	c->timeout_ns = UNET_ARP_TIMEOUT_NS;
	c->retry_ns = UNET_ARP_RETRY_NS;
	c->neg_ns = UNET_ARP_NEG_NS;
	c->ask_rate = c->ask_burst = UNET_ARP_ASK_RATE;
}

static struct unet_arp_entry *find(const struct unet_arp_cache *c, uint32_t ip)
{
	for (int i = 0; i < UNET_ARP_CACHE_SLOTS; i++)
		if (c->e[i].ip == ip && (ip || c->e[i].state == UNET_ARP_FREE))
			return (struct unet_arp_entry *)&c->e[i];
	return NULL;
}

static bool fresh(const struct unet_arp_cache *c, const struct unet_arp_entry *e, uint64_t now)
{
	return e->state == UNET_ARP_RESOLVED && age(now, e->updated_ns) < c->ttl_ns;
}

/* When the entry last changed, for eviction (oldest first). */
static uint64_t stamp(const struct unet_arp_entry *e)
{
	return e->state == UNET_ARP_RESOLVED ? e->updated_ns : e->since_ns;
}

/* A slot for a new entry: a free one, else the oldest. */
static struct unet_arp_entry *slot_for_new(struct unet_arp_cache *c)
{
	struct unet_arp_entry *e = find(c, 0);

	if (e)
		return e;
	e = &c->e[0];
	for (int i = 1; i < UNET_ARP_CACHE_SLOTS; i++)
		if (stamp(&c->e[i]) < stamp(e))
			e = &c->e[i];
	return e;
}

static void set_resolved(struct unet_arp_entry *e, uint32_t ip, const uint8_t mac[6], uint64_t when)
{
	memset(e, 0, sizeof(*e));
	e->ip = ip;
	e->state = UNET_ARP_RESOLVED;
	memcpy(e->mac, mac, 6);
	e->updated_ns = when;
}

int unet_arp_cache_lookup(const struct unet_arp_cache *c, uint32_t ip, uint64_t now_ns,
			  uint8_t mac[6])
{
	const struct unet_arp_entry *e;

	if (!ip || !(e = find(c, ip)) || e->state != UNET_ARP_RESOLVED)
		return -ENOENT;
	/* An answer from the future (a clock that went backwards in a test)
	 * counts as fresh: its age is 0. */
	if (!fresh(c, e, now_ns))
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
	if (e && e->state == UNET_ARP_RESOLVED && e->updated_ns > updated_ns)
		return;
	if (!e)
		e = slot_for_new(c);
	set_resolved(e, ip, mac, updated_ns);
}

bool unet_arp_cache_unreachable(const struct unet_arp_cache *c, uint32_t ip, uint64_t now_ns)
{
	const struct unet_arp_entry *e = ip ? find(c, ip) : NULL;

	return e && e->state == UNET_ARP_FAILED && age(now_ns, e->since_ns) < c->neg_ns;
}

void unet_arp_cache_forget(struct unet_arp_cache *c, uint32_t ip)
{
	struct unet_arp_entry *e = ip ? find(c, ip) : NULL;

	if (e)
		memset(e, 0, sizeof(*e));
}

enum unet_arp_next unet_arp_cache_next(struct unet_arp_cache *c, uint32_t ip, uint64_t now_ns,
				       uint8_t mac[6])
{
	struct unet_arp_entry *e = ip ? find(c, ip) : NULL;

	if (!ip)
		return UNET_ARP_UNREACH;
	if (e && fresh(c, e, now_ns)) {
		memcpy(mac, e->mac, 6);
		return UNET_ARP_USE;
	}
	if (e && e->state == UNET_ARP_PENDING) {
		if (age(now_ns, e->since_ns) >= c->timeout_ns) {
			e->state = UNET_ARP_FAILED;
			e->since_ns = now_ns;
			return UNET_ARP_GAVE_UP;
		}
		if (age(now_ns, e->asked_ns) < c->retry_ns ||
		    !unet_rate_take(&c->ask, now_ns, c->ask_rate, c->ask_burst))
			return UNET_ARP_WAIT;
		e->asked_ns = now_ns;
		return UNET_ARP_ASK;
	}
	if (e && e->state == UNET_ARP_FAILED && age(now_ns, e->since_ns) < c->neg_ns)
		return UNET_ARP_UNREACH;
	/* unknown, expired, or failed long enough ago: a new resolution */
	if (!unet_rate_take(&c->ask, now_ns, c->ask_rate, c->ask_burst))
		return UNET_ARP_WAIT;
	if (!e)
		e = slot_for_new(c);
	memset(e, 0, sizeof(*e));
	e->ip = ip;
	e->state = UNET_ARP_PENDING;
	e->since_ns = e->asked_ns = now_ns;
	return UNET_ARP_ASK;
}

enum unet_arp_learn unet_arp_learn(struct unet_arp_cache *c, const struct unet_arp_msg *m,
				   bool to_us, uint64_t now_ns)
{
	struct unet_arp_entry *e;

	if (!unet_arp_sender_valid(m))
		return UNET_ARP_REJECTED;
	if ((m->op != 1 && m->op != 2) || !to_us || m->spa == m->tpa)
		return UNET_ARP_IGNORED;
	e = find(c, m->spa);
	if (m->op == 2) {
		/* a reply: only the answer to a question we asked */
		if (!e || e->state != UNET_ARP_PENDING)
			return UNET_ARP_IGNORED;
		set_resolved(e, m->spa, m->sha, now_ns);
		return UNET_ARP_LEARNT;
	}
	/* a request to us: its sender is on the link with that MAC, as far
	 * as ARP can tell -- unless we hold a fresh answer that says
	 * otherwise */
	if (e && fresh(c, e, now_ns)) {
		if (memcmp(e->mac, m->sha, 6))
			return UNET_ARP_IGNORED;
		e->updated_ns = now_ns;
		return UNET_ARP_LEARNT;
	}
	if (!e) {
		/* a free or expired slot only: a stream of requests from
		 * many addresses never evicts what we resolved or asked */
		e = find(c, 0);
		for (int i = 0; !e && i < UNET_ARP_CACHE_SLOTS; i++) {
			struct unet_arp_entry *o = &c->e[i];

			if ((o->state == UNET_ARP_RESOLVED && !fresh(c, o, now_ns)) ||
			    (o->state == UNET_ARP_FAILED && age(now_ns, o->since_ns) >= c->neg_ns))
				e = o;
		}
		if (!e)
			return UNET_ARP_IGNORED;
	}
	set_resolved(e, m->spa, m->sha, now_ns);
	return UNET_ARP_LEARNT;
}
