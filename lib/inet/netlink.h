/* SPDX-License-Identifier: BSD-2-Clause */
/* netlink.h - the rtnetlink questions route.c (IPv4) and route6.c (IPv6)
 * both ask: one request, one answer, on a short-lived socket.  Never
 * installed. */
#ifndef UNET_INET_NETLINK_H
#define UNET_INET_NETLINK_H

#include <stddef.h>
#include <stdint.h>

#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#define NL_BUF 4096
/* the kernel's NUD_VALID (not exported): states that hold a usable MAC */
#define KNEIGH_VALID \
	(NUD_PERMANENT | NUD_NOARP | NUD_REACHABLE | NUD_PROBE | NUD_STALE | NUD_DELAY)

struct unet_nl_req {
	struct nlmsghdr nh;
	union {
		struct rtmsg rt;
		struct ndmsg nd;
	};
	char attrs[64];
};

/* Append attribute type (len bytes of data) to r. */
void unet_nl_add_attr(struct unet_nl_req *r, uint16_t type, const void *data, uint16_t len);
/*
 * Send r on a new NETLINK_ROUTE socket and read its answer into buf.
 * Returns the answer's length, 0 for a bare acknowledgement, or -errno
 * (the kernel's error for the request).
 */
int unet_nl_ask(struct unet_nl_req *r, char *buf, size_t size);
/* The kernel's neighbour entry for ip (alen bytes, family AF_INET or
 * AF_INET6) on ifindex: as unet_inet_kneigh_get (inet.h). */
int unet_nl_kneigh_get(int family, int ifindex, const void *ip, uint16_t alen, uint8_t mac[6]);
/* Ask the kernel to resolve ip (NTF_USE): as unet_inet_kneigh_use. */
int unet_nl_kneigh_use(int family, int ifindex, const void *ip, uint16_t alen);

#endif /* UNET_INET_NETLINK_H */
