/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * udp_admin.c - UDP ports and addresses in the interface's pinned maps
 * (unet_udp_ports, unet_udp_addrs): installing and removing them for a
 * socket, listing, deleting and reclaiming them for unetctl.  Ownership
 * works as for channels (docs/control-plane.md): an entry names its
 * endpoint slot and the token of the incarnation that made it, and is
 * stale once that slot is gone, its owner died, or another process holds
 * the slot now (another token).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <arpa/inet.h>

#include "core/layer.h"
#include "udp/udp_impl.h"

/* The interface's UDP maps (opened once per iface by the core, which
 * checks them as its own). */
static int ports_fd(struct unet_iface *iface)
{
	return unet_iface_map(iface, UNET_MAP_UDP_PORTS, BPF_MAP_TYPE_HASH,
			      sizeof(struct unet_udp_key), sizeof(struct unet_udp_val));
}

static int addrs_fd(struct unet_iface *iface)
{
	return unet_iface_map(iface, UNET_MAP_UDP_ADDRS, BPF_MAP_TYPE_HASH, sizeof(__u32),
			      sizeof(struct unet_udp_addr_val));
}

/* Whether the entry's owner -- endpoint slot id, incarnation token -- is
 * alive: a live process holds the slot with that token (0 is nobody's). */
static bool owner_alive(struct unet_iface *iface, uint32_t id, uint64_t token)
{
	return token && unet_iface_slot_alive(iface, id, token);
}

int unet_udp_port_add(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr,
		      uint16_t lport, uint32_t raddr, uint16_t rport)
{
	int pfd = ports_fd(iface);
	struct unet_udp_key key = { .addr = laddr, .port = htons(lport) };
	struct unet_udp_val v, old;
	uint32_t pid = (uint32_t)getpid(); /* the owner opens its own ports */
	uint64_t token;

	if (pfd < 0)
		return pfd;

	token = unet_iface_slot_token(iface, endpoint);
	if (!token)
		return -ESRCH;
	if (bpf_map_lookup_elem(pfd, &key, &old) == 0) {
		if (owner_alive(iface, old.endpoint, old.owner_token)) {
			unet_log(UNET_LOG_ERROR, "%s: UDP port %u in use by endpoint %u (pid %u)",
				 iface->ifname, lport, old.endpoint, old.owner_pid);
			return -EADDRINUSE;
		}
		unet_log(UNET_LOG_INFO, "%s: replacing stale UDP port %u", iface->ifname, lport);
		if (bpf_map_delete_elem(pfd, &key) && errno != ENOENT)
			return -errno;
	}
	memset(&v, 0, sizeof(v));
	v.endpoint = endpoint;
	v.remote_addr = raddr;
	v.remote_port = htons(rport);
	v.owner_pid = pid;
	v.owner_token = token;
	if (bpf_map_update_elem(pfd, &key, &v, BPF_NOEXIST)) {
		int err = -errno;

		return err == -EEXIST ? -EADDRINUSE : err == -E2BIG ? -ENOSPC : err;
	}
	return 0;
}

void unet_udp_port_remove(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr,
			  uint16_t lport)
{
	int pfd = ports_fd(iface);
	struct unet_udp_key key = { .addr = laddr, .port = htons(lport) };
	struct unet_udp_val v;

	if (pfd < 0)
		return;

	/* Only if still ours (slot and incarnation): an administrator may
	 * have deleted it and another endpoint taken the port since. */
	if (!bpf_map_lookup_elem(pfd, &key, &v) && v.endpoint == endpoint &&
	    v.owner_token == unet_iface_slot_token(iface, endpoint))
		bpf_map_delete_elem(pfd, &key);
}

int unet_udp_addr_claim(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr,
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
		if (owner_alive(iface, old.endpoint, old.owner_token))
			return 0;
		bpf_map_delete_elem(afd, &laddr);
	}
	v.owner_pid = (uint32_t)getpid();
	if (bpf_map_update_elem(afd, &laddr, &v, BPF_NOEXIST))
		return errno == EEXIST ? 0 : -errno;
	return 1;
}

void unet_udp_addr_release(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr)
{
	int afd = addrs_fd(iface);
	struct unet_udp_addr_val v;

	if (afd < 0)
		return;

	if (!bpf_map_lookup_elem(afd, &laddr, &v) && v.endpoint == endpoint &&
	    v.owner_token == unet_iface_slot_token(iface, endpoint))
		bpf_map_delete_elem(afd, &laddr);
}

/* Every UDP port key, collected before any is deleted. */
static int port_keys(struct unet_iface *iface, struct unet_udp_key **keys, size_t *n)
{
	int pfd = ports_fd(iface);

	if (pfd < 0)
		return pfd;

	return unet_map_keys(pfd, sizeof(**keys), UNET_MAX_UDP_PORTS,
			     (void **)keys, n);
}

int unet_iface__for_each_udp(struct unet_iface *iface,
			     int (*fn)(const struct unet_udp_entry *, void *ctx), void *ctx)
{
	int pfd = ports_fd(iface);
	int afd = addrs_fd(iface);
	struct unet_udp_addr_val av;
	struct unet_udp_key *keys;
	struct unet_udp_entry e;
	struct unet_udp_val v;
	size_t n;
	int ret;

	if (pfd < 0 || afd < 0)
		return pfd < 0 ? pfd : afd;

	if (!iface || !fn)
		return -EINVAL;
	ret = port_keys(iface, &keys, &n);
	if (ret)
		return ret;
	for (size_t i = 0; i < n && !ret; i++) {
		if (bpf_map_lookup_elem(pfd, &keys[i], &v))
			continue; /* deleted meanwhile */
		memset(&e, 0, sizeof(e));
		e.addr = keys[i].addr;
		e.port = ntohs(keys[i].port);
		e.remote_addr = v.remote_addr;
		e.remote_port = ntohs(v.remote_port);
		e.endpoint = v.endpoint;
		e.pid = v.owner_pid;
		e.stale = !owner_alive(iface, v.endpoint, v.owner_token);
		e.answers_arp = !bpf_map_lookup_elem(afd, &keys[i].addr, &av) &&
				(av.flags & UNET_UDP_ADDR_ARP);
		e.delivered = v.delivered;
		e.delivered_bytes = v.delivered_bytes;
		e.drop_filter = v.drop_filter;
		e.drop_no_socket = v.drop_no_socket;
		ret = fn(&e, ctx);
	}
	free(keys);
	return ret;
}

int unet_iface__udp_del(struct unet_iface *iface, uint32_t addr, uint16_t port)
{
	int pfd = ports_fd(iface);
	struct unet_udp_key key = { .addr = addr, .port = htons(port) };

	if (pfd < 0)
		return pfd;

	if (!iface)
		return -EINVAL;
	if (bpf_map_delete_elem(pfd, &key))
		return -errno;
	return 0;
}

int unet_udp_reclaim(struct unet_iface *iface)
{
	int pfd = ports_fd(iface);
	int afd = addrs_fd(iface);
	struct unet_udp_key *keys;
	struct unet_udp_val v;
	int removed = 0, err;
	size_t n;

	if (pfd < 0 || afd < 0)
		return pfd < 0 ? pfd : afd;

	err = port_keys(iface, &keys, &n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		if (bpf_map_lookup_elem(pfd, &keys[i], &v) ||
		    owner_alive(iface, v.endpoint, v.owner_token))
			continue;
		if (bpf_map_delete_elem(pfd, &keys[i]) == 0) {
			unet_log(UNET_LOG_INFO, "%s: reclaimed UDP port %u (endpoint %u)",
				 iface->ifname, ntohs(keys[i].port), v.endpoint);
			removed++;
		}
	}
	free(keys);

	/* Addresses: a delete restarts the walk, so collect first. */
	__u32 *addrs;
	size_t na;

	err = unet_map_keys(afd, sizeof(*addrs), UNET_MAX_UDP_ADDRS,
			    (void **)&addrs, &na);
	if (err)
		return removed ? removed : err;
	for (size_t i = 0; i < na; i++) {
		struct unet_udp_addr_val av;

		if (bpf_map_lookup_elem(afd, &addrs[i], &av) ||
		    owner_alive(iface, av.endpoint, av.owner_token))
			continue;
		if (bpf_map_delete_elem(afd, &addrs[i]) == 0)
			removed++;
	}
	free(addrs);
	return removed;
}

/* The core reclaims our tables with its own (under the interface lock)
 * through this registration, without knowing what UDP is. */
static struct unet_iface_layer udp_iface_layer = {
	.name = "udp",
	.reclaim = unet_udp_reclaim,
};

__attribute__((constructor)) static void udp_iface_layer_init(void)
{
	unet_iface_layer_register(&udp_iface_layer);
}
