/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * route.h - address choice: which interface a socket's traffic would use,
 * and whether that interface is one U-Net serves.
 *
 * The pure parts (lists, loopback, matching an address to an interface)
 * take their inputs as arguments, so the unit tests drive them without a
 * network; route_lookup asks the kernel.  Addresses are IPv4 in network
 * byte order.
 */
#ifndef UNET_RUN_ROUTE_H
#define UNET_RUN_ROUTE_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ifaddrs;

/* Whether ifname is one of the comma-separated names in list (exact,
 * whole names; empty items ignored). */
bool route_iface_listed(const char *list, const char *ifname);

/* 127.0.0.0/8. */
bool route_is_loopback(uint32_t addr);

/* The name of the interface in ifa (a getifaddrs list) that holds IPv4
 * address addr, copied into name[IF_NAMESIZE].  Returns 0 or -ENOENT. */
int route_iface_of_addr(const struct ifaddrs *ifa, uint32_t addr, char name[IF_NAMESIZE]);

/* The kernel's choice for traffic to dst: the source address it would
 * use and the interface holding that address.  Works by connecting a
 * throwaway UDP socket (no packet is sent).  Returns 0 or -errno
 * (-ENETUNREACH when there is no route). */
int route_lookup(uint32_t dst, uint32_t *src, char name[IF_NAMESIZE]);

/* The interface holding local address addr (bind to a specific
 * address).  Returns 0, -EADDRNOTAVAIL or -errno. */
int route_local(uint32_t addr, char name[IF_NAMESIZE]);

#endif /* UNET_RUN_ROUTE_H */
