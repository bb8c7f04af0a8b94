/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * addr.c - the IPv4 addresses U-Net owns on an interface (inet.h): the
 * map the XDP program reads to answer ARP for them and to know they are
 * ours, shared by UDP and TCP sockets on the same address.  An entry
 * names its endpoint slot and the token of the incarnation that made it,
 * and is stale once that owner is gone (core/owned.c), as for ports.
 */
#include <errno.h>
#include <stddef.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "core/layer.h"
#include "inet/inet.h"

_Static_assert(UNET_INET_ADDR_ARP == UNET_UDP_ADDR_ARP, "inet.h's ARP flag is the ABI's");

/* Where the owner sits in the map's value (bpf/unet_abi.h), for the
 * core's owned-entry helpers. */
static const struct unet_owned_map addrs_map = {
	.key_size = sizeof(__u32),
	.val_size = sizeof(struct unet_udp_addr_val),
	.max_entries = UNET_MAX_UDP_ADDRS,
	.endpoint_off = offsetof(struct unet_udp_addr_val, endpoint),
	.token_off = offsetof(struct unet_udp_addr_val, owner_token),
};

/* The map, opened once per iface by the core, which checks it as its own. */
static int addrs_fd(struct unet_iface *iface)
{
	return unet_iface_map(iface, UNET_MAP_INET_ADDRS, BPF_MAP_TYPE_HASH, sizeof(__u32),
			      sizeof(struct unet_udp_addr_val));
}

int unet_inet_addr_claim(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr,
			 uint32_t flags)
{
	int afd = addrs_fd(iface);
	struct unet_udp_addr_val v = { .endpoint = endpoint, .flags = flags }, old;

	if (afd < 0)
		return afd;

	v.owner_token = unet_iface_slot_token(iface, endpoint);
	if (!v.owner_token)
		return -ESRCH;
	if (bpf_map_lookup_elem(afd, &laddr, &old) == 0) {
		/* ours already, or a live owner's; an earlier incarnation's
		 * of our own slot is stale like any dead owner's */
		if (unet_owner_alive(iface, old.endpoint, old.owner_token))
			return 0;
		bpf_map_delete_elem(afd, &laddr);
	}
	v.owner_pid = (uint32_t)getpid();
	if (bpf_map_update_elem(afd, &laddr, &v, BPF_NOEXIST))
		return errno == EEXIST ? 0 : -errno;
	return 1;
}

void unet_inet_addr_release(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr)
{
	int afd = addrs_fd(iface);

	if (afd >= 0)
		unet_owned_remove(iface, afd, &addrs_map, &laddr, endpoint);
}

int unet_inet_addr_answers_arp(struct unet_iface *iface, uint32_t addr)
{
	int afd = addrs_fd(iface);
	struct unet_udp_addr_val v;

	if (afd < 0)
		return afd;
	return !bpf_map_lookup_elem(afd, &addr, &v) && (v.flags & UNET_UDP_ADDR_ARP);
}

int unet_inet_addr_reclaim(struct unet_iface *iface)
{
	int afd = addrs_fd(iface);

	if (afd < 0)
		return afd;
	return unet_owned_reclaim(iface, afd, &addrs_map, NULL);
}
