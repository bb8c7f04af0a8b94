/* SPDX-License-Identifier: BSD-2-Clause */
/* inet.h - IPv4 helpers both protocol layers (lib/udp, lib/tcp) use,
 * below both and knowing neither.  Never installed. */
#ifndef UNET_INET_H
#define UNET_INET_H

#include <stdbool.h>
#include <stdint.h>

/* Whether this network namespace has addr (network order) on any
 * interface: then the kernel answers ARP for it, and U-Net must not. */
bool unet_inet_kernel_addr(uint32_t addr);

#endif /* UNET_INET_H */
