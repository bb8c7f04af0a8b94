/* SPDX-License-Identifier: BSD-2-Clause */
/* kernel_addr.c - whether the kernel has an IPv4 or IPv6 address (inet.h). */
#include <ifaddrs.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "inet/inet.h"

bool unet_inet_kernel_addr(uint32_t addr)
{
	struct ifaddrs *ifa, *i;
	bool found = false;

	if (getifaddrs(&ifa))
		return false;
	for (i = ifa; i && !found; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == addr)
			found = true;
	freeifaddrs(ifa);
	return found;
}

bool unet_inet6_kernel_addr(const uint8_t addr[16])
{
	struct ifaddrs *ifa, *i;
	bool found = false;

	if (getifaddrs(&ifa))
		return false;
	for (i = ifa; i && !found; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET6 &&
		    !memcmp(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, addr, 16))
			found = true;
	freeifaddrs(ifa);
	return found;
}
