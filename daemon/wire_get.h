/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * wire_get.h - what the daemon's frame checks read frames with: a
 * network-order load at any alignment (a client's frame lies at any
 * offset of its segment, and the daemon judges its own copy byte by
 * byte), and the header lengths they count with: unet_abi.h's (shared
 * with the XDP program and the library), plus TCP's fixed header.
 */
#ifndef UNETD_WIRE_GET_H
#define UNETD_WIRE_GET_H

#include <stdint.h>

#include "unet_abi.h"

/* A TCP header without options. */
#define UNETD_TCP_HLEN 20

static inline uint16_t unetd_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

#endif /* UNETD_WIRE_GET_H */
