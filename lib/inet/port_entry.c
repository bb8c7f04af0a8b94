/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * port_entry.c - putting one UDP or TCP port entry, IPv4 or IPv6, in its
 * map (port_group.h, struct unet_port_kind), with the owned-entry put of
 * the core (core/layer.h) and what is logged about it, and deleting one
 * for unetctl: the same for every port map of both protocol layers.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <bpf/bpf.h>

#include "core/layer.h"
#include "inet/port_group.h"

int unet_port_put(struct unet_iface *iface, int pfd, const struct unet_port_kind *k,
		  const void *key, const void *val, uint16_t lport)
{
	/* The entry a live owner holds, read back to say who it is. */
	_Alignas(uint64_t) uint8_t old[UNET_OWNED_VAL_MAX];
	uint32_t endpoint, pid;
	int err;

	err = unet_owned_put(iface, pfd, k->map, key, val, old);
	if (err == -EADDRINUSE) {
		memcpy(&endpoint, old + k->map->endpoint_off, sizeof(endpoint));
		memcpy(&pid, old + k->pid_off, sizeof(pid));
		unet_log(UNET_LOG_ERROR, "%s: %s port %u in use by endpoint %u (pid %u)",
			 iface->ifname, k->name, lport, endpoint, pid);
	} else if (err == 1) {
		unet_log(UNET_LOG_INFO, "%s: replacing stale %s port %u", iface->ifname, k->name,
			 lport);
	}
	/* Another process put one in meanwhile: it holds the port now. */
	return err == -EEXIST ? -EADDRINUSE : err < 0 ? err : 0;
}

int unet_port_delete(struct unet_iface *iface, const struct unet_port_kind *k, const void *key)
{
	int pfd = k->ports_fd(iface);

	if (pfd < 0)
		return pfd;
	if (bpf_map_delete_elem(pfd, key))
		return -errno;
	return 0;
}
