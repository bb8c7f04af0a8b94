/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * iface.c - which interface the provider serves (FI_UNET_IFACE, else the
 * only one with the unet XDP program attached), and its IPv4 or IPv6 address
 * (where channel setup listens: conn.c).  Calls nothing of the provider
 * but base.c.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include "ufi.h"

struct find_ctx {
	char found[IF_NAMESIZE];
	int n;
	char others[128];
};

static int find_one(const char *ifname, void *vctx)
{
	struct find_ctx *c = vctx;
	struct unet_iface_status st;
	struct unet_iface *ifc;

	if (if_nametoindex(ifname) == 0)
		return 0; /* pins of another namespace's interface */
	ifc = unet_iface__open(ifname, NULL);
	if (!ifc)
		return 0;
	if (unet_iface__status(ifc, &st) == 0 && st.link_alive &&
	    st.ifindex == (int)if_nametoindex(ifname)) {
		if (c->n == 0)
			snprintf(c->found, sizeof(c->found), "%s", ifname);
		else {
			size_t l = strlen(c->others);
			snprintf(c->others + l, sizeof(c->others) - l, " %s", ifname);
		}
		c->n++;
	}
	unet_iface__close(ifc);
	return 0;
}

int ufi_resolve_iface(char *ifname, size_t len)
{
	struct find_ctx c = { .n = 0 };
	int r;

	if (ufi_params.iface && *ufi_params.iface) {
		if (if_nametoindex(ufi_params.iface) == 0) {
			ufi_why("FI_UNET_IFACE=%s: no such interface here", ufi_params.iface);
			return -FI_ENODEV;
		}
		snprintf(ifname, len, "%s", ufi_params.iface);
		return 0;
	}
	r = unet_iface__for_each(NULL, find_one, &c);
	if (r < 0 || c.n == 0) {
		ufi_why("no interface with the unet XDP program attached here (%s); attach one "
			"(unetctl attach IFACE) or set FI_UNET_IFACE",
			r < 0 ? strerror(-r) : "none found under the pin root");
		return -FI_ENODATA;
	}
	if (c.n > 1) {
		ufi_why("several interfaces have the unet program (%s and%s): set FI_UNET_IFACE",
			c.found, c.others);
		return -FI_ENODATA;
	}
	snprintf(ifname, len, "%s", c.found);
	return 0;
}

int ufi_iface_ipv4(const char *ifname, struct in_addr *out, uint8_t *prefix)
{
	struct ifaddrs *ifa, *i;
	int r = -FI_EADDRNOTAVAIL;

	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    strcmp(i->ifa_name, ifname) == 0) {
			uint32_t mask = i->ifa_netmask ? ntohl(((struct sockaddr_in *)i->ifa_netmask)
								->sin_addr.s_addr)
						       : 0xffffffffu;
			*out = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
			/* a netmask's ones from the top (a /0 is taken as /32:
			 * no peer is on-link then, so every channel routes) */
			*prefix = (uint8_t)__builtin_popcount(mask);
			if (*prefix == 0)
				*prefix = 32;
			r = 0;
			break;
		}
	freeifaddrs(ifa);
	return r;
}


int ufi_iface_ipv6(const char *ifname, struct in6_addr *out, uint8_t *prefix)
{
	struct ifaddrs *ifa, *i;
	int r = -FI_EADDRNOTAVAIL;

	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i; i = i->ifa_next) {
		const struct in6_addr *a;

		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET6 ||
		    strcmp(i->ifa_name, ifname) != 0)
			continue;
		a = &((const struct sockaddr_in6 *)(const void *)i->ifa_addr)->sin6_addr;
		/* A link-local address needs a scope a name cannot carry;
		 * on the link the channel is raw anyway. */
		if (IN6_IS_ADDR_LINKLOCAL(a))
			continue;
		*out = *a;
		*prefix = 128;
		if (i->ifa_netmask) {
			const uint8_t *m = ((const struct sockaddr_in6 *)(const void *)i->ifa_netmask)
						   ->sin6_addr.s6_addr;
			unsigned int ones = 0;

			for (int k = 0; k < 16; k++)
				ones += (unsigned int)__builtin_popcount(m[k]);
			*prefix = (uint8_t)(ones ? ones : 128); /* /0 as /128: every channel routes */
		}
		r = 0;
		break;
	}
	freeifaddrs(ifa);
	return r;
}
