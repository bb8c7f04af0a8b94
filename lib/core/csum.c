/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * csum.c - the Internet checksum (RFC 1071), csum.h.  A 64-bit
 * accumulator takes any number of 16-bit words without a carry being
 * lost, so folding happens once, at the end.
 */
#include "core/csum.h"

uint64_t unet_csum_add(uint64_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;

	/* Big-endian words, whatever the host: the checksum is defined on
	 * the bytes as they are on the wire. */
	while (len >= 2) {
		sum += (uint32_t)p[0] << 8 | p[1];
		p += 2;
		len -= 2;
	}
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

uint16_t unet_csum_fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

uint64_t unet_csum_pseudo(uint32_t saddr, uint32_t daddr, uint8_t proto, uint16_t len)
{
	uint64_t sum = 0;

	/* The addresses are in network order already: add their bytes. */
	sum = unet_csum_add(sum, &saddr, 4);
	sum = unet_csum_add(sum, &daddr, 4);
	return sum + proto + len;
}

uint64_t unet_csum_pseudo6(const uint8_t saddr[16], const uint8_t daddr[16], uint8_t proto,
			   uint32_t len)
{
	uint64_t sum = unet_csum_add(0, saddr, 16);

	/* RFC 8200 8.1: addresses, a 32-bit length, 3 zero bytes, the next
	 * header: as 16-bit words, the length's two halves and proto. */
	sum = unet_csum_add(sum, daddr, 16);
	return sum + (len >> 16) + (len & 0xffff) + proto;
}
