/* SPDX-License-Identifier: BSD-2-Clause */
/* veth.c - whether an interface is a veth (where kernel peers leave
 * checksums to be completed). */
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "inet/inet.h"

bool unet_inet_is_veth(const char *ifname)
{
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr;
	bool veth = false;
	int fd;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (char *)&di;
	if (ioctl(fd, SIOCETHTOOL, &ifr) == 0)
		veth = !strcmp(di.driver, "veth");
	close(fd);
	return veth;
}
