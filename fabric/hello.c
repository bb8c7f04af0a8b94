/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hello.c - the HELLO datagram that channel setup exchanges (conn.c tells
 * what each side does with it): its layout, packing, the checks a
 * received one must pass, and the secret nonces ("cookies") that
 * authenticate it.  Pure but for the random source; calls nothing else
 * of the provider but the clock and names.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <arpa/inet.h>

#include "ufi.h"

#define HELLO_MAGIC 0x55464948u /* "UFIH" */

struct hello {
	uint32_t magic;
	struct ufi_name from, to;
	uint16_t from_tag, to_tag; /* network order; from_tag 0: none yet */
	uint32_t my_nonce, your_nonce;
} __attribute__((packed));
_Static_assert(sizeof(struct hello) == UFI_HELLO_LEN, "HELLO is 96 bytes");

void ufi_hello_pack(const struct ufi_hello *h, const struct ufi_name *to,
		    unsigned char buf[UFI_HELLO_LEN])
{
	struct hello w = { .magic = htonl(HELLO_MAGIC), .from = h->from, .to = *to };

	w.from_tag = htons(h->from_tag);
	w.to_tag = htons(h->to_tag);
	w.my_nonce = h->my_nonce; /* opaque: byte order is the sender's */
	w.your_nonce = h->your_nonce;
	memcpy(buf, &w, sizeof(w));
}

/* Whether the datagram came from the address and port name n gives. */
static bool from_name(const struct ufi_name *n, const struct sockaddr *from, socklen_t fromlen)
{
	if (n->family == 4) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)(const void *)from;
		return fromlen == sizeof(*s) && s->sin_family == AF_INET &&
		       s->sin_addr.s_addr == n->ip && s->sin_port == n->port;
	}
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)(const void *)from;
	return fromlen == sizeof(*s6) && s6->sin6_family == AF_INET6 &&
	       memcmp(s6->sin6_addr.s6_addr, n->ip6, 16) == 0 && s6->sin6_port == n->port;
}

int ufi_hello_parse(const struct ufi_name *self, const void *buf, size_t len,
		    const struct sockaddr *from, socklen_t fromlen, struct ufi_hello *out)
{
	struct hello h;

	if (len != sizeof(h) || fromlen < (socklen_t)sizeof(sa_family_t))
		return -EPROTO;
	memcpy(&h, buf, sizeof(h));
	if (ntohl(h.magic) != HELLO_MAGIC || memcmp(&h.to, self, UFI_NAME_LEN) != 0 ||
	    !ufi_name_valid(&h.from) || !from_name(&h.from, from, fromlen) ||
	    (ntohs(h.from_tag) < UFI_TAG_MIN && ntohs(h.from_tag) != 0) || !h.my_nonce)
		return -EPROTO;
	out->from = h.from;
	out->from_tag = ntohs(h.from_tag);
	out->to_tag = ntohs(h.to_tag);
	out->my_nonce = h.my_nonce;
	out->your_nonce = h.your_nonce;
	return 0;
}

uint32_t ufi_hello_nonce(void)
{
	uint32_t n = 0;

	while (!n)
		if (getrandom(&n, sizeof(n), GRND_NONBLOCK) != sizeof(n))
			n = (uint32_t)(ufi_now_ns() * 0x9E3779B97F4A7C15ull >> 32) ^ (uint32_t)rand();
	return n;
}

