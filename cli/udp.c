/* SPDX-License-Identifier: BSD-2-Clause */
/* udp.c - unetctl udp list and del: UDP ports over U-Net. */

#include "unetctl.h"

static int do_udp_list(const struct cmd *c, int argc, char **argv)
{
	return list_over(c, argc, argv, LIST_UDP);
}

static int do_udp_del(const struct cmd *c, int argc, char **argv)
{
	return port_del(c, argc, argv, false);
}

const struct cmd udp_cmds[] = {
	{ "list", do_udp_list, "[IFACE]",
	  "list UDP ports: address, port, remote filter, endpoint, owner, stale, counters", NULL,
	  "udp list" },
	{ "del", do_udp_del, "IFACE ADDR:PORT",
	  "remove a UDP port, whoever owns it (its datagrams go to the kernel again)", NULL,
	  "udp del" },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};
