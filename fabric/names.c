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

static const uint8_t zero16[16];

/* An IPv6 address a name can carry: one without a scope (a name has no
 * interface index to go with a link-local one; on the link the channel
 * is raw anyway), not multicast, not unspecified nor any other of ::/8
 * (IPv4-mapped and -compatible ones included) but loopback, which
 * reaches only local setup sockets (the unit tests'). */
static bool ip6_unicast(const uint8_t a[16])
{
	static const uint8_t loopback[16] = { [15] = 1 };

	if (a[0] == 0)
		return memcmp(a, loopback, 16) == 0;
	return a[0] != 0xff && !(a[0] == 0xfe && (a[1] & 0xc0) == 0x80);
}

/* The subnet-router anycast address (host bits all 0, RFC 4291 2.6.1),
 * which is a router's, not an endpoint's; /127 and /128 have none. */
static bool subnet_anycast6(const uint8_t a[16], unsigned int prefix)
{
	if (prefix >= 127)
		return false;
	for (unsigned int bit = prefix; bit < 128; bit++)
		if (a[bit / 8] & (0x80u >> (bit % 8)))
			return false;
	return true;
}

static const char *addr_why(const struct ufi_name *n)
{
	if (n->family == 4) {
		if (memcmp(n->ip6, zero16, 16) != 0)
			return "IPv6 address bytes in an IPv4 name";
		if (!ip_unicast(n->ip))
			return "not a unicast IPv4 address (0/8, multicast, reserved, broadcast)";
		if (n->prefix < 1 || n->prefix > 32)
			return "an IPv4 prefix length outside 1-32";
		if (subnet_edge(n))
			return "the subnet's own or broadcast address";
		return NULL;
	}
	if (n->family == 6) {
		if (n->ip != 0)
			return "IPv4 address bytes in an IPv6 name";
		if (!ip6_unicast(n->ip6))
			return "an IPv6 address a name cannot carry (link-local, multicast, "
			       "unspecified, IPv4-mapped or other ::/8)";
		if (n->prefix < 1 || n->prefix > 128)
			return "an IPv6 prefix length outside 1-128";
		if (subnet_anycast6(n->ip6, n->prefix))
			return "the subnet-router anycast address of its prefix";
		return NULL;
	}
	return "an address family other than 4 and 6";
}

const char *ufi_name_why(const struct ufi_name *n)
{
	static const uint8_t zero_mac[6];

	if (n->magic[0] != 'U' || n->magic[1] != 'F')
		return "not a unet name (magic)";
	if (n->version != 2)
		return "an unknown name version";
	if (n->flags & ~UFI_NAME_F_ROUTED)
		return "unknown flags";
	if (memcmp(n->mac, zero_mac, sizeof(zero_mac)) == 0 || (n->mac[0] & 1))
		return "a zero or multicast MAC";
	if (n->port == 0)
		return "port 0";
	return addr_why(n);
}

bool ufi_name_valid(const struct ufi_name *n)
{
	return ufi_name_why(n) == NULL;
}

/* Whether a and b (16 bytes each) differ within their first plen bits. */
static bool differ_within(const uint8_t *a, const uint8_t *b, unsigned int plen)
{
	for (unsigned int i = 0; i < 16 && plen; i++) {
		unsigned int bits = plen < 8 ? plen : 8;
		uint8_t mask = (uint8_t)(0xff00u >> bits);

		if ((a[i] ^ b[i]) & mask)
			return true;
		plen -= bits;
	}
	return false;
}

bool ufi_name_routed(const struct ufi_name *a, const struct ufi_name *b)
{
	unsigned int plen = a->prefix > b->prefix ? a->prefix : b->prefix;

	if ((a->flags | b->flags) & UFI_NAME_F_ROUTED || a->family != b->family)
		return true;
	if (a->family == 6)
		return differ_within(a->ip6, b->ip6, plen > 128 ? 128 : plen);
	uint32_t mask = plen >= 32 ? 0xffffffffu : plen == 0 ? 0 : ~(0xffffffffu >> plen);
	return ((ntohl(a->ip) ^ ntohl(b->ip)) & mask) != 0;
}

int ufi_name_to_str(const struct ufi_name *n, char *buf, size_t len)
{
	const uint8_t *ip = (const uint8_t *)&n->ip, *a = n->ip6;
	int r;

	if (n->family == 6)
		r = snprintf(buf, len,
			     "fi_unet://%02x:%02x:%02x:%02x:%02x:%02x/ep=%05u/"
			     "[%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x]"
			     "/%03u:%05u/f=%02x/nonce=%08x",
			     n->mac[0], n->mac[1], n->mac[2], n->mac[3], n->mac[4], n->mac[5],
			     ntohs(n->ep_id), a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8],
			     a[9], a[10], a[11], a[12], a[13], a[14], a[15], n->prefix,
			     ntohs(n->port), n->flags, n->nonce);
	else
		r = snprintf(buf, len,
			     "fi_unet://%02x:%02x:%02x:%02x:%02x:%02x/ep=%05u/%03u.%03u.%03u.%03u/%02u:%05u/f=%02x/nonce=%08x",
			     n->mac[0], n->mac[1], n->mac[2], n->mac[3], n->mac[4], n->mac[5],
			     ntohs(n->ep_id), ip[0], ip[1], ip[2], ip[3], n->prefix, ntohs(n->port),
			     n->flags, n->nonce);
	return r < 0 || (size_t)r >= len ? -FI_ETOOSMALL : r;
}

static void name_init(struct ufi_name *n, const unsigned m[6], unsigned ep, unsigned prefix,
		      unsigned port, unsigned flags, unsigned nonce)
{
	memset(n, 0, sizeof(*n));
	n->magic[0] = 'U';
	n->magic[1] = 'F';
	n->version = 2;
	n->flags = (uint8_t)flags;
	for (int i = 0; i < 6; i++)
		n->mac[i] = (uint8_t)m[i];
	n->ep_id = htons((uint16_t)ep);
	n->prefix = (uint8_t)prefix;
	n->port = htons((uint16_t)port);
	n->nonce = nonce;
}

/* The IPv6 form: parsed loosely, then held to the exact text
 * ufi_name_to_str gives back (every group in four digits, the prefix in
 * three), so a name has one spelling. */
static int name6_from_str(const char *s, struct ufi_name *n)
{
	unsigned m[6], ep, prefix, port, flags, nonce;
	char a[40], back[UFI_STR_LEN];
	int used = 0;

	if (sscanf(s,
		   "fi_unet://%2x:%2x:%2x:%2x:%2x:%2x/ep=%5u/[%39[0-9a-f:]]/%3u:%5u/f=%2x/nonce=%8x%n",
		   &m[0], &m[1], &m[2], &m[3], &m[4], &m[5], &ep, a, &prefix, &port, &flags, &nonce,
		   &used) != 12 ||
	    s[used] != '\0')
		return -FI_EINVAL;
	if (ep > 65535 || port > 65535 || prefix > 128 || flags > 255)
		return -FI_EINVAL;
	name_init(n, m, ep, prefix, port, flags, nonce);
	n->family = 6;
	if (inet_pton(AF_INET6, a, n->ip6) != 1 || ufi_name_to_str(n, back, sizeof(back)) < 0 ||
	    strcmp(back, s) != 0)
		return -FI_EINVAL;
	return ufi_name_valid(n) ? 0 : -FI_EINVAL;
}

/* The IPv4 form, held like the IPv6 one to the exact text
 * ufi_name_to_str gives back (two hex digits a MAC byte, lowercase; the
 * endpoint and port in five digits, each address byte in three, the
 * prefix in two; eight hex digits of nonce): sscanf alone would also take
 * one-digit fields, spaces, signs and uppercase, so that one name had
 * many spellings and "nonce=-1" meant ffffffff. */
static int name4_from_str(const char *s, struct ufi_name *n)
{
	unsigned m[6], ep, ip[4], prefix, port, flags, nonce;
	char back[UFI_STR_LEN];
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
	name_init(n, m, ep, prefix, port, flags, nonce);
	n->family = 4;
	uint8_t *b = (uint8_t *)&n->ip;
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)ip[i];
	if (ufi_name_to_str(n, back, sizeof(back)) < 0 || strcmp(back, s) != 0)
		return -FI_EINVAL;
	return ufi_name_valid(n) ? 0 : -FI_EINVAL;
}

int ufi_name_from_str(const char *s, struct ufi_name *n)
{
	int r;

	memset(n, 0, sizeof(*n));
	r = strchr(s, '[') ? name6_from_str(s, n) : name4_from_str(s, n);
	if (r)
		memset(n, 0, sizeof(*n));
	return r;
}

size_t ufi_name_bin_len(const void *buf)
{
	const uint8_t *b = buf;

	/* bytes 0-2 only: both forms have them, whatever follows */
	if (b[0] != 'U' || b[1] != 'F')
		return 0;
	return b[2] == 1 ? UFI_NAME_V1_LEN : b[2] == 2 ? UFI_NAME_LEN : 0;
}

/* Decode a binary name from a slot of len bytes into *n (zeroed first):
 * NULL, or why it is refused. */
static const char *decode_bin(const void *buf, size_t len, struct ufi_name *n)
{
	const uint8_t *b = buf;

	memset(n, 0, sizeof(*n));
	if (len == UFI_NAME_V1_LEN) {
		/* Version 1: IPv4 only, its byte 19 reserved (0) where
		 * version 2 has the family. */
		if (b[2] != 1)
			return "a 24-byte name that is not of version 1";
		if (b[19] != 0)
			return "a version-1 name with its reserved byte set";
		memcpy(n, b, UFI_NAME_V1_LEN);
		n->version = 2;
		n->family = 4;
	} else if (len == UFI_NAME_LEN) {
		memcpy(n, b, UFI_NAME_LEN);
	} else {
		return "a name length other than 24 (version 1) and 40 bytes";
	}
	return ufi_name_why(n);
}

int ufi_name_from_bin(const void *buf, size_t len, struct ufi_name *n)
{
	if (decode_bin(buf, len, n)) {
		memset(n, 0, sizeof(*n));
		return -FI_EINVAL;
	}
	return 0;
}

const char *ufi_name_bin_why(const void *buf, size_t len)
{
	struct ufi_name n;

	return decode_bin(buf, len, &n);
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
