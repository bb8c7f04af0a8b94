/* SPDX-License-Identifier: BSD-2-Clause */
/* route.c - address choice (route.h). */
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "route.h"

bool route_iface_listed(const char *list, const char *ifname)
{
	size_t n = strlen(ifname);

	if (!list || n == 0)
		return false;
	for (const char *p = list; *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == n && memcmp(p, ifname, n) == 0)
			return true;
		if (!end)
			break;
		p = end + 1;
	}
	return false;
}

bool route_is_loopback(uint32_t addr)
{
	return (ntohl(addr) >> 24) == 127;
}

int route_iface_of_addr(const struct ifaddrs *ifa, uint32_t addr, char name[IF_NAMESIZE])
{
	for (; ifa; ifa = ifa->ifa_next) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)ifa->ifa_addr;

		if (!sin || sin->sin_family != AF_INET || sin->sin_addr.s_addr != addr)
			continue;
		strncpy(name, ifa->ifa_name, IF_NAMESIZE - 1);
		name[IF_NAMESIZE - 1] = '\0';
		return 0;
	}
	return -ENOENT;
}

int route_local(uint32_t addr, char name[IF_NAMESIZE])
{
	struct ifaddrs *ifa;
	int err;

	if (getifaddrs(&ifa) < 0)
		return -errno;
	err = route_iface_of_addr(ifa, addr, name);
	freeifaddrs(ifa);
	return err == -ENOENT ? -EADDRNOTAVAIL : err;
}

int route_lookup(uint32_t dst, uint32_t *src, char name[IF_NAMESIZE])
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(9),
				  .sin_addr.s_addr = dst };
	struct sockaddr_in me;
	socklen_t len = sizeof(me);
	int fd, err = 0;

	/* Raw system calls: this runs inside the interposed socket calls,
	 * and must neither recurse into them nor be logged as the
	 * program's own socket. */
	fd = (int)syscall(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (syscall(SYS_connect, fd, (struct sockaddr *)&to, sizeof(to)) < 0 ||
	    syscall(SYS_getsockname, fd, (struct sockaddr *)&me, &len) < 0)
		err = -errno;
	syscall(SYS_close, fd);
	if (err)
		return err;
	*src = me.sin_addr.s_addr;
	return route_local(me.sin_addr.s_addr, name);
}
