/* SPDX-License-Identifier: BSD-2-Clause */
/* neigh.c - reading the neighbours the XDP program learnt from ARP
 * (unet_neigh, inet.h) for both protocol layers. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>

#include "core/clock.h"
#include "core/layer.h"
#include "inet/inet.h"

uint64_t unet_inet_now_ns(void)
{
	return unet_mono_ns();
}

int unet_inet_neigh_open(struct unet_iface *iface)
{
	return unet_iface_map_open(iface, UNET_MAP_NEIGH, BPF_MAP_TYPE_LRU_HASH, sizeof(__u32),
				   sizeof(struct unet_neigh_val));
}

int unet_inet_neigh(int fd, uint32_t ip, uint64_t now, uint64_t max_age_ns, uint8_t mac[6],
		    uint64_t *when)
{
	struct unet_neigh_val nv;

	if (fd < 0 || bpf_map_lookup_elem(fd, &ip, &nv))
		return -ENOENT;
	/* An entry stamped after now (another CPU) is fresh. */
	if (now > nv.updated_ns && now - nv.updated_ns >= max_age_ns)
		return -ENOENT;
	memcpy(mac, nv.mac, 6);
	if (when)
		*when = nv.updated_ns;
	return 0;
}
