/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * names.c - endpoint names (ufi.h: struct ufi_name), in binary and in
 * string form, and the address table: fi_addr_t i is the i-th name
 * inserted (FI_AV_TABLE's promise; FI_AV_MAP hands out the same).  The
 * AV object (av.c) is this table behind fi_ops_av; the peer table
 * (peer.c) looks names up in the table of the AV its endpoint is bound
 * to.  Calls nothing else of the provider.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "ufi.h"

/* ---- names ---- */

/* A unicast IPv4 address a peer's interface can have (network order). */
static bool ip_unicast(uint32_t ip_be)
{
	uint32_t ip = ntohl(ip_be);
	uint8_t top = (uint8_t)(ip >> 24);

	/* 0/8 "this network", 224/4 multicast, 240/4 reserved with the
	 * broadcast address.  Loopback stays: a name there reaches no XDP
	 * interface, only the local host's setup sockets (the unit tests') */
	return top != 0 && top < 224;
}

/* The subnet's own address or its broadcast (host bits all 0 or all 1),
 * which no interface has; /31 and /32 have no such addresses. */
static bool subnet_edge(const struct ufi_name *n)
{
	uint32_t host = n->prefix >= 32 ? 0 : 0xffffffffu >> n->prefix;
	uint32_t ip = ntohl(n->ip);

	return n->prefix <= 30 && ((ip & host) == 0 || (ip & host) == host);
}

bool ufi_name_valid(const struct ufi_name *n)
{
	static const uint8_t zero_mac[6];

	return n->magic[0] == 'U' && n->magic[1] == 'F' && n->version == 1 &&
	       (n->flags & ~UFI_NAME_F_ROUTED) == 0 && n->rsvd == 0 &&
	       memcmp(n->mac, zero_mac, sizeof(zero_mac)) != 0 && !(n->mac[0] & 1) &&
	       ip_unicast(n->ip) && n->prefix >= 1 && n->prefix <= 32 && !subnet_edge(n) &&
	       n->port != 0;
}

bool ufi_name_routed(const struct ufi_name *a, const struct ufi_name *b)
{
	unsigned int plen = a->prefix > b->prefix ? a->prefix : b->prefix;
	uint32_t mask = plen >= 32 ? 0xffffffffu : plen == 0 ? 0 : ~(0xffffffffu >> plen);

	if ((a->flags | b->flags) & UFI_NAME_F_ROUTED)
		return true;
	return ((ntohl(a->ip) ^ ntohl(b->ip)) & mask) != 0;
}

int ufi_name_to_str(const struct ufi_name *n, char *buf, size_t len)
{
	const uint8_t *ip = (const uint8_t *)&n->ip;
	int r = snprintf(buf, len,
			 "fi_unet://%02x:%02x:%02x:%02x:%02x:%02x/ep=%05u/%03u.%03u.%03u.%03u/%02u:%05u/f=%02x/nonce=%08x",
			 n->mac[0], n->mac[1], n->mac[2], n->mac[3], n->mac[4], n->mac[5],
			 ntohs(n->ep_id), ip[0], ip[1], ip[2], ip[3], n->prefix, ntohs(n->port),
			 n->flags, n->nonce);
	return r < 0 || (size_t)r >= len ? -FI_ETOOSMALL : r;
}

int ufi_name_from_str(const char *s, struct ufi_name *n)
{
	unsigned m[6], ep, ip[4], prefix, port, flags, nonce;
	int used = 0;

	if (sscanf(s,
		   "fi_unet://%2x:%2x:%2x:%2x:%2x:%2x/ep=%5u/%3u.%3u.%3u.%3u/%2u:%5u/f=%2x/nonce=%8x%n",
		   &m[0], &m[1], &m[2], &m[3], &m[4], &m[5], &ep, &ip[0], &ip[1], &ip[2], &ip[3],
		   &prefix, &port, &flags, &nonce, &used) != 15 ||
	    s[used] != '\0')
		return -FI_EINVAL;
	if (ep > 65535 || port > 65535 || ip[0] > 255 || ip[1] > 255 || ip[2] > 255 ||
	    ip[3] > 255 || prefix > 32 || flags > 255)
		return -FI_EINVAL;
	memset(n, 0, sizeof(*n));
	n->magic[0] = 'U';
	n->magic[1] = 'F';
	n->version = 1;
	n->flags = (uint8_t)flags;
	for (int i = 0; i < 6; i++)
		n->mac[i] = (uint8_t)m[i];
	n->ep_id = htons((uint16_t)ep);
	uint8_t *b = (uint8_t *)&n->ip;
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)ip[i];
	n->prefix = (uint8_t)prefix;
	n->port = htons((uint16_t)port);
	n->nonce = nonce;
	return ufi_name_valid(n) ? 0 : -FI_EINVAL;
}

/* ---- the address table ---- */

const struct ufi_name *ufi_addrs_name(const struct ufi_addrs *t, fi_addr_t addr)
{
	if (addr >= t->n || !t->valid[addr])
		return NULL;
	return &t->names[addr];
}

fi_addr_t ufi_addrs_find(const struct ufi_addrs *t, const struct ufi_name *n)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->valid[i] && memcmp(&t->names[i], n, UFI_NAME_LEN) == 0)
			return i;
	return FI_ADDR_NOTAVAIL;
}

int ufi_addrs_grow(struct ufi_addrs *t, size_t need)
{
	size_t cap = t->cap ? t->cap : 16;
	struct ufi_name *n;
	bool *v;

	if (need <= t->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	n = realloc(t->names, cap * sizeof(*n));
	if (!n)
		return -FI_ENOMEM;
	t->names = n;
	v = realloc(t->valid, cap * sizeof(*v));
	if (!v)
		return -FI_ENOMEM;
	t->valid = v;
	t->cap = cap;
	return 0;
}

int ufi_addrs_add(struct ufi_addrs *t, const struct ufi_name *n, fi_addr_t *out)
{
	int r;

	if (!ufi_name_valid(n)) {
		*out = FI_ADDR_NOTAVAIL;
		return -FI_EINVAL;
	}
	r = ufi_addrs_grow(t, t->n + 1);
	if (r) {
		*out = FI_ADDR_NOTAVAIL;
		return r;
	}
	t->names[t->n] = *n;
	t->valid[t->n] = true;
	*out = t->n++;
	return 0;
}

void ufi_addrs_remove(struct ufi_addrs *t, fi_addr_t addr)
{
	if (addr < t->n)
		t->valid[addr] = false;
}

void ufi_addrs_free(struct ufi_addrs *t)
{
	free(t->names);
	free(t->valid);
	*t = (struct ufi_addrs){ 0 };
}
