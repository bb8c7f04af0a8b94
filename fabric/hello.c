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
_Static_assert(sizeof(struct hello) == UFI_HELLO_LEN, "HELLO is 64 bytes");

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

int ufi_hello_parse(const struct ufi_name *self, const void *buf, size_t len,
		    const struct sockaddr_in *from, socklen_t fromlen, struct ufi_hello *out)
{
	struct hello h;

	if (len != sizeof(h) || fromlen != sizeof(*from) || from->sin_family != AF_INET)
		return -EPROTO;
	memcpy(&h, buf, sizeof(h));
	if (ntohl(h.magic) != HELLO_MAGIC || memcmp(&h.to, self, UFI_NAME_LEN) != 0 ||
	    !ufi_name_valid(&h.from) || h.from.ip != from->sin_addr.s_addr ||
	    h.from.port != from->sin_port ||
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

