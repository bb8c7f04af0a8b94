/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * layer.c - the endpoint's side of layer.h: which layers above the core
 * are attached to an endpoint, and what they may know of it.  The
 * receive path that offers them frames is in rx_frame.c, the interface's
 * side (reclaim of their tables, their maps) in iface.c.
 */
#include <errno.h>

#include "core/objects.h"

int unet_layer_attach(struct unet_endpoint *ep, const struct unet_layer *layer, void *state)
{
	if (!ep || !layer || !layer->rx || !layer->destroy)
		return -EINVAL;
	if (unet_layer_state(ep, layer))
		return -EEXIST;
	if (ep->nlayers == UNET_MAX_LAYERS)
		return -ENOSPC;
	ep->layers[ep->nlayers].layer = layer;
	ep->layers[ep->nlayers].state = state;
	ep->nlayers++;
	return 0;
}

void *unet_layer_state(const struct unet_endpoint *ep, const struct unet_layer *layer)
{
	for (unsigned int i = 0; ep && i < ep->nlayers; i++)
		if (ep->layers[i].layer == layer)
			return ep->layers[i].state;
	return NULL;
}

struct unet_iface *unet_layer_iface(const struct unet_endpoint *ep)
{
	return ep->iface;
}

uint32_t unet_layer_slot(const struct unet_endpoint *ep)
{
	return ep->id;
}

uint32_t unet_layer_mtu(const struct unet_endpoint *ep)
{
	/* A frame in pieces is reassembled in a slot sized for this much
	 * (pieces.h); above it the link still works, frames stop growing. */
	return ep->mtu < UNET_JUMBO_MTU_MAX ? ep->mtu : UNET_JUMBO_MTU_MAX;
}

int unet_layer_txq(const struct unet_endpoint *ep, int qid)
{
	if (qid <= 0)
		return 0;
	for (uint32_t i = 0; i < ep->nqueues; i++)
		if (ep->q[i].queue_id == (uint32_t)qid)
			return (int)i;
	return -EINVAL;
}
