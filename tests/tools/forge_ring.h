/* SPDX-License-Identifier: BSD-2-Clause */
/* forge_ring.h - what the tools that forge an emulated client's frames
 * (unet-forge, unet-forge-chan) share: a descriptor put on the send ring
 * as it is, past every check of the library, for unetd to judge. */
#ifndef UNET_FORGE_RING_H
#define UNET_FORGE_RING_H

#include <stdint.h>

#include "core/objects.h"

/* Put a descriptor (addr, len) on the endpoint's first send ring as it
 * is, waiting for room, and kick the daemon if it sleeps. */
static inline void forge_raw(struct unet_endpoint *ep, uint64_t addr, uint32_t len)
{
	struct xsk_ring_prod *tx = &ep->q[0].tx;
	uint32_t idx = 0;

	while (xsk_ring_prod__reserve(tx, 1, &idx) != 1)
		unet_endpoint__complete(ep);
	xsk_ring_prod__tx_desc(tx, idx)->addr = addr;
	xsk_ring_prod__tx_desc(tx, idx)->len = len;
	xsk_ring_prod__tx_desc(tx, idx)->options = 0;
	xsk_ring_prod__submit(tx, 1);
	ep->q[0].tx_pending++;
	if (xsk_ring_prod__needs_wakeup(tx))
		unet_remote_kick(ep);
}

#endif /* UNET_FORGE_RING_H */
