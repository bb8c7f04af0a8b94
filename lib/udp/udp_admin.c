/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * udp_admin.c - UDP ports in the interface's pinned maps (unet_udp_ports,
 * and unet_udp6_ports for IPv6):
 * installing and removing them for a socket, listing, deleting and
 * reclaiming them for unetctl (the addresses are lib/inet's).  Ownership
 * works as for channels (docs/control-plane.md): an entry names its
 * endpoint slot and the token of the incarnation that made it, and is
 * stale once that slot is gone, its owner died, or another process holds
 * the slot now (another token).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <arpa/inet.h>

#include "core/layer.h"
#include "inet/port_group.h"
#include "udp/udp_impl.h"

/* The interface's UDP port map (opened once per iface by the core, which
 * checks it as its own); the address map is lib/inet's (addr.c). */
static int ports_fd(struct unet_iface *iface)
{
	return unet_iface_map(iface, UNET_MAP_UDP_PORTS, BPF_MAP_TYPE_HASH,
			      sizeof(struct unet_udp_key), sizeof(struct unet_udp_val));
}

/* Where the owner sits in the maps' values (bpf/unet_abi.h), for the
 * core's owned-entry helpers (core/layer.h). */
static const struct unet_owned_map ports_map = {
	.key_size = sizeof(struct unet_udp_key),
	.val_size = sizeof(struct unet_udp_val),
	.max_entries = UNET_MAX_UDP_PORTS,
	.endpoint_off = offsetof(struct unet_udp_val, endpoint),
	.token_off = offsetof(struct unet_udp_val, owner_token),
};

/* The same map, for SO_REUSEPORT groups (inet/port_group.h). */
static const struct unet_port_kind ports_kind = {
	.proto = IPPROTO_UDP,
	.name = "UDP",
	.map = &ports_map,
	.flags_off = offsetof(struct unet_udp_val, flags),
	.flags_size = sizeof(((struct unet_udp_val *)0)->flags),
	.pid_off = offsetof(struct unet_udp_val, owner_pid),
	.ports_fd = ports_fd,
};

int unet_udp_port_join(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr,
		       uint16_t lport, uint32_t uid)
{
	struct unet_udp_val v;
	int err;

	memset(&v, 0, sizeof(v));
	v.endpoint = endpoint;
	v.flags = UNET_PORT_F_GROUP;
	v.owner_pid = (uint32_t)getpid();
	v.owner_token = unet_iface_slot_token(iface, endpoint);
	if (!v.owner_token)
		return -ESRCH;
	err = unet_port_group_join(iface, &ports_kind, endpoint, laddr, lport, uid, &v);
	if (err == -EADDRINUSE)
		unet_log(UNET_LOG_ERROR, "%s: UDP port %u in use without SO_REUSEPORT",
			 iface->ifname, lport);
	return err;
}

int unet_udp_port_add(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr,
		      uint16_t lport, uint32_t raddr, uint16_t rport)
{
	int pfd = ports_fd(iface);
	struct unet_udp_key key = { .addr = laddr, .port = htons(lport) };
	struct unet_udp_val v;
	uint32_t pid = (uint32_t)getpid(); /* the owner opens its own ports */
	uint64_t token;

	if (pfd < 0)
		return pfd;

	token = unet_iface_slot_token(iface, endpoint);
	if (!token)
		return -ESRCH;
	memset(&v, 0, sizeof(v));
	v.endpoint = endpoint;
	v.remote_addr = raddr;
	v.remote_port = htons(rport);
	v.owner_pid = pid;
	v.owner_token = token;
	/* A SO_REUSEPORT group whose entry names a dead member is still
	 * held by the others. */
	if (unet_port_group_busy(iface, &ports_kind, laddr, lport))
		return -EADDRINUSE;
	return unet_port_put(iface, pfd, &ports_kind, &key, &v, lport);
}

void unet_udp_port_remove(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr,
			  uint16_t lport)
{
	int pfd = ports_fd(iface);
	struct unet_udp_key key = { .addr = laddr, .port = htons(lport) };

	if (pfd >= 0 && !unet_port_group_leave(iface, &ports_kind, endpoint, laddr, lport))
		unet_owned_remove(iface, pfd, &ports_map, &key, endpoint);
}

/* The IPv6 ports: the same, in their own map (bpf/unet_abi.h). */
static int ports6_fd(struct unet_iface *iface)
{
	return unet_iface_map(iface, UNET_MAP_UDP6_PORTS, BPF_MAP_TYPE_HASH,
			      sizeof(struct unet_udp6_key), sizeof(struct unet_udp6_val));
}

static const struct unet_owned_map ports6_map = {
	.key_size = sizeof(struct unet_udp6_key),
	.val_size = sizeof(struct unet_udp6_val),
	.max_entries = UNET_MAX_UDP_PORTS,
	.endpoint_off = offsetof(struct unet_udp6_val, endpoint),
	.token_off = offsetof(struct unet_udp6_val, owner_token),
};

static const struct unet_port_kind ports6_kind = {
	.proto = IPPROTO_UDP,
	.name = "UDP/IPv6",
	.map = &ports6_map,
	.flags_off = offsetof(struct unet_udp6_val, flags),
	.flags_size = sizeof(((struct unet_udp6_val *)0)->flags),
	.pid_off = offsetof(struct unet_udp6_val, owner_pid),
	.ports_fd = ports6_fd,
};

static struct unet_udp6_key key6(const uint8_t addr[16], uint16_t port)
{
	struct unet_udp6_key k;

	memset(&k, 0, sizeof(k));
	memcpy(k.addr, addr, 16);
	k.port = htons(port);
	return k;
}

int unet_udp6_port_add(struct unet_iface *iface, uint32_t endpoint, const uint8_t laddr[16],
		       uint16_t lport, const uint8_t raddr[16], uint16_t rport)
{
	int pfd = ports6_fd(iface);
	struct unet_udp6_key key = key6(laddr, lport);
	struct unet_udp6_val v;
	uint64_t token;

	if (pfd < 0)
		return pfd;
	token = unet_iface_slot_token(iface, endpoint);
	if (!token)
		return -ESRCH;
	memset(&v, 0, sizeof(v));
	v.endpoint = endpoint;
	memcpy(v.remote_addr, raddr, 16);
	v.remote_port = htons(rport);
	v.owner_pid = (uint32_t)getpid();
	v.owner_token = token;
	return unet_port_put(iface, pfd, &ports6_kind, &key, &v, lport);
}

void unet_udp6_port_remove(struct unet_iface *iface, uint32_t endpoint, const uint8_t laddr[16],
			   uint16_t lport)
{
	int pfd = ports6_fd(iface);
	struct unet_udp6_key key = key6(laddr, lport);

	if (pfd >= 0)
		unet_owned_remove(iface, pfd, &ports6_map, &key, endpoint);
}

/* unet_iface__for_each_udp's walk: the caller's fn, and the address map
 * (whether the entry's address answers ARP). */
struct udp_each {
	int (*fn)(const struct unet_udp_entry *, void *ctx);
	void *ctx;
	struct unet_iface *iface;
};

static int udp_each_entry(const void *key, const void *val, bool stale, void *ctx)
{
	const struct unet_udp_key *k = key;
	const struct unet_udp_val *v = val;
	struct udp_each *w = ctx;
	struct unet_udp_entry e;

	memset(&e, 0, sizeof(e));
	e.addr = k->addr;
	e.port = ntohs(k->port);
	e.remote_addr = v->remote_addr;
	e.remote_port = ntohs(v->remote_port);
	e.endpoint = v->endpoint;
	e.pid = v->owner_pid;
	e.stale = stale;
	e.answers_arp = unet_inet_addr_answers_arp(w->iface, k->addr) == 1;
	e.delivered = v->delivered;
	e.delivered_bytes = v->delivered_bytes;
	e.drop_filter = v->drop_filter;
	e.drop_no_socket = v->drop_no_socket;
	return w->fn(&e, w->ctx);
}

static int udp6_each_entry(const void *key, const void *val, bool stale, void *ctx)
{
	const struct unet_udp6_key *k = key;
	const struct unet_udp6_val *v = val;
	struct udp_each *w = ctx;
	struct unet_udp_entry e;

	memset(&e, 0, sizeof(e));
	e.v6 = true;
	memcpy(e.addr6.s6_addr, k->addr, 16);
	memcpy(e.remote_addr6.s6_addr, v->remote_addr, 16);
	e.port = ntohs(k->port);
	e.remote_port = ntohs(v->remote_port);
	e.endpoint = v->endpoint;
	e.pid = v->owner_pid;
	e.stale = stale;
	e.answers_arp = unet_inet6_addr_answers_nd(w->iface, k->addr) == 1;
	e.delivered = v->delivered;
	e.delivered_bytes = v->delivered_bytes;
	e.drop_filter = v->drop_filter;
	e.drop_no_socket = v->drop_no_socket;
	return w->fn(&e, w->ctx);
}

int unet_iface__for_each_udp(struct unet_iface *iface,
			     int (*fn)(const struct unet_udp_entry *, void *ctx), void *ctx)
{
	int pfd = ports_fd(iface);
	struct udp_each w = { .fn = fn, .ctx = ctx, .iface = iface };
	int err, p6fd;

	if (pfd < 0)
		return pfd;
	if (!iface || !fn)
		return -EINVAL;
	err = unet_owned_each(iface, pfd, &ports_map, udp_each_entry, &w);
	if (err)
		return err;
	/* A program attached before IPv6 has no IPv6 map: no IPv6 ports. */
	p6fd = ports6_fd(iface);
	if (p6fd < 0)
		return p6fd == -ENOENT ? 0 : p6fd;
	return unet_owned_each(iface, p6fd, &ports6_map, udp6_each_entry, &w);
}

int unet_iface__udp_del(struct unet_iface *iface, uint32_t addr, uint16_t port)
{
	struct unet_udp_key key = { .addr = addr, .port = htons(port) };

	if (!iface)
		return -EINVAL;
	return unet_port_delete(iface, &ports_kind, &key);
}

int unet_iface__udp_del6(struct unet_iface *iface, const struct in6_addr *addr, uint16_t port)
{
	struct unet_udp6_key key;

	if (!iface || !addr)
		return -EINVAL;
	key = key6(addr->s6_addr, port);
	return unet_port_delete(iface, &ports6_kind, &key);
}

static void port_reclaimed(struct unet_iface *iface, const void *key, const void *val)
{
	unet_log(UNET_LOG_INFO, "%s: reclaimed UDP port %u (endpoint %u)", iface->ifname,
		 ntohs(((const struct unet_udp_key *)key)->port),
		 ((const struct unet_udp_val *)val)->endpoint);
}

int unet_udp_reclaim(struct unet_iface *iface)
{
	int pfd = ports_fd(iface);
	int ports, addrs;

	if (pfd < 0)
		return pfd;

	/* Groups first: a group's entry naming a dead member moves to a
	 * live one, and is not reclaimed below. */
	unet_port_group_reclaim(iface, &ports_kind);
	ports = unet_owned_reclaim(iface, pfd, &ports_map, port_reclaimed);
	if (ports < 0)
		return ports;
	addrs = unet_inet_addr_reclaim(iface);
	if (addrs < 0)
		return ports ? ports : addrs;
	ports += addrs;
	/* IPv6, if the attached program has its maps. */
	pfd = ports6_fd(iface);
	if (pfd >= 0) {
		int n = unet_owned_reclaim(iface, pfd, &ports6_map, NULL);

		if (n > 0)
			ports += n;
		n = unet_inet6_addr_reclaim(iface);
		if (n > 0)
			ports += n;
	}
	return ports;
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
