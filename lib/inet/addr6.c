/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * addr6.c - the IPv6 addresses U-Net has UDP ports on (inet.h,
 * "unet_udp6_addrs"): the map the XDP program reads to hand neighbour
 * solicitations for an address U-Net owns alone to its endpoint, and to
 * know that a frame to it with extension headers is nobody's.  Ownership
 * as for the IPv4 addresses (addr.c).
 */
#include <errno.h>
#include <stddef.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "core/layer.h"
#include "inet/inet.h"

_Static_assert(UNET_INET6_ADDR_ND == UNET_UDP6_ADDR_ND, "inet.h's ND flag is the ABI's");

static const struct unet_owned_map addrs6_map = {
	.key_size = 16,
	.val_size = sizeof(struct unet_udp_addr_val),
	.max_entries = UNET_MAX_UDP_ADDRS,
	.endpoint_off = offsetof(struct unet_udp_addr_val, endpoint),
	.token_off = offsetof(struct unet_udp_addr_val, owner_token),
};

static int addrs6_fd(struct unet_iface *iface)
{
	return unet_iface_map(iface, UNET_MAP_INET6_ADDRS, BPF_MAP_TYPE_HASH, 16,
			      sizeof(struct unet_udp_addr_val));
}

int unet_inet6_addr_claim(struct unet_iface *iface, uint32_t endpoint, const uint8_t addr[16],
			  uint32_t flags)
{
	int afd = addrs6_fd(iface);
	struct unet_udp_addr_val v = { .endpoint = endpoint, .flags = flags }, old;

	if (afd < 0)
		return afd;
	v.owner_token = unet_iface_slot_token(iface, endpoint);
	if (!v.owner_token)
		return -ESRCH;
	if (bpf_map_lookup_elem(afd, addr, &old) == 0) {
		if (unet_owner_alive(iface, old.endpoint, old.owner_token))
			return 0;
		bpf_map_delete_elem(afd, addr);
	}
	v.owner_pid = (uint32_t)getpid();
	if (bpf_map_update_elem(afd, addr, &v, BPF_NOEXIST))
		return errno == EEXIST ? 0 : -errno;
	return 1;
}

void unet_inet6_addr_release(struct unet_iface *iface, uint32_t endpoint, const uint8_t addr[16])
{
	int afd = addrs6_fd(iface);

	if (afd >= 0)
		unet_owned_remove(iface, afd, &addrs6_map, addr, endpoint);
}

int unet_inet6_addr_answers_nd(struct unet_iface *iface, const uint8_t addr[16])
{
	int afd = addrs6_fd(iface);
	struct unet_udp_addr_val v;

	if (afd < 0)
		return afd;
	return !bpf_map_lookup_elem(afd, addr, &v) && (v.flags & UNET_UDP6_ADDR_ND);
}

int unet_inet6_addr_reclaim(struct unet_iface *iface)
{
	int afd = addrs6_fd(iface);

	if (afd < 0)
		return afd;
	return unet_owned_reclaim(iface, afd, &addrs6_map, NULL);
}
