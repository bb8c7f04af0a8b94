/* SPDX-License-Identifier: BSD-2-Clause */
/* endpoint.c - what an IP layer keeps of its endpoint (inet.h), taken
 * from the endpoint once, when the layer's state is made. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/layer.h"
#include "inet/inet.h"

int unet_inet_ep_init(struct unet_inet_ep *in, struct unet_endpoint *ep)
{
	struct unet_endpoint_info info;
	int err = unet_endpoint__info(ep, &info);

	if (err)
		return err;
	in->ep = ep;
	in->iface = unet_layer_iface(ep);
	in->ifindex = info.ifindex;
	if (!if_indextoname((unsigned int)info.ifindex, in->ifname))
		snprintf(in->ifname, sizeof(in->ifname), "ifindex %d", info.ifindex);
	in->slot = unet_layer_slot(ep);
	in->mtu = unet_layer_mtu(ep);
	in->frame_size = info.frame_size;
	memcpy(in->mac, info.mac, 6);
	in->neigh_fd = -1;
	if (in->iface) {
		in->neigh_fd = unet_inet_neigh_open(in->iface);
		if (in->neigh_fd < 0)
			return in->neigh_fd;
	}
	return 0;
}

void unet_inet_ep_fini(struct unet_inet_ep *in)
{
	if (in->neigh_fd >= 0)
		close(in->neigh_fd);
	in->neigh_fd = -1;
}
