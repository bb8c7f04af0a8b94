/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * csum.h - the Internet checksum (RFC 1071) and the IPv4 and IPv6
 * pseudo-headers, for every layer that writes or checks one: the core's
 * routable channels over IPv6, and the IP layers above it.
 */
#ifndef UNET_CORE_CSUM_H
#define UNET_CORE_CSUM_H

#include <stddef.h>
#include <stdint.h>

/* Add len bytes at data to the running one's-complement sum (64-bit, not
 * folded); data is read as big-endian 16-bit words, an odd last byte is
 * padded with a zero.  Returns the new sum. */
uint64_t unet_csum_add(uint64_t sum, const void *data, size_t len);
/* Fold a running sum into 16 bits (not inverted). */
uint16_t unet_csum_fold(uint64_t sum);
/* The IPv4 pseudo-header of UDP or TCP (addresses in network order, len
 * the UDP or TCP length), as a running sum. */
uint64_t unet_csum_pseudo(uint32_t saddr, uint32_t daddr, uint8_t proto, uint16_t len);
/* The IPv6 pseudo-header of UDP or TCP (RFC 8200 8.1), as a running sum. */
uint64_t unet_csum_pseudo6(const uint8_t saddr[16], const uint8_t daddr[16], uint8_t proto,
			   uint32_t len);

#endif /* UNET_CORE_CSUM_H */
