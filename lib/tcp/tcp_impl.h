/* SPDX-License-Identifier: BSD-2-Clause */
/* tcp_impl.h - TCP/IPv4 over U-Net inside the library: the pinned-map
 * side (tcp_admin.c) and what tcp.c shares with it.  Never installed. */
#ifndef UNET_TCP_IMPL_H
#define UNET_TCP_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "core/internal.h"

/* The TCP layer's map in the interface's pin directory. */
#define UNET_MAP_TCP_PORTS "unet_tcp_ports"
/* Its IPv6 twin (struct unet_tcp6_key -> struct unet_tcp_val). */
#define UNET_MAP_TCP6_PORTS "unet_tcp6_ports"

/* ---- tcp_admin.c: the pinned map ------------------------------------ */

/* Install laddr:lport for endpoint (flags UNET_TCP_PORT_*), replacing a
 * stale owner's entry.  Returns 0, -EADDRINUSE (a live endpoint has it),
 * -ENOSPC, -ESRCH, -errno. */
int unet_tcp_port_add(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr,
		      uint16_t lport, uint32_t flags);
/* Remove laddr:lport if endpoint (this incarnation) still owns it. */
void unet_tcp_port_remove(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr,
			  uint16_t lport);
/* Remove entries whose endpoint is gone (the core calls it, under the
 * interface lock).  Returns how many, or -errno. */
int unet_tcp_reclaim(struct unet_iface *iface);

/* ---- tcp_admin.c: the kernel's side, kept apart from lwIP's headers --- */

/* Hold laddr:*lport against the kernel: a TCP socket bound to it
 * (IP_FREEBIND: the address need not be the kernel's); with SO_REUSEADDR
 * for a listening port (then unet_tcp_reserve_listen), without for a
 * connection's.  *lport 0: the kernel picks an ephemeral port and *lport
 * gets it.  Returns the socket (close it to give the port back) or
 * -EADDRINUSE, -errno. */
int unet_tcp_reserve(uint32_t laddr, uint16_t *lport, bool listening);
/* Make a listening port's socket listen (after its map entry exists).
 * Returns 0 or -EADDRINUSE, -errno. */
int unet_tcp_reserve_listen(int fd);

#endif /* UNET_TCP_IMPL_H */
