/* SPDX-License-Identifier: BSD-2-Clause */
/* tcp.c - unetctl tcp list and del: TCP ports over U-Net. */

#include "unetctl.h"

static int do_tcp_del(const struct cmd *c, int argc, char **argv)
{
	return port_del(c, argc, argv, true);
}

static int do_tcp_list(const struct cmd *c, int argc, char **argv)
{
	return list_over(c, argc, argv, LIST_TCP);
}

const struct cmd tcp_cmds[] = {
	{ "list", do_tcp_list, "[IFACE]",
	  "list TCP ports: family, address, port, listen or connection, endpoint, owner, stale, "
	  "counters",
	  NULL, "tcp list" },
	{ "del", do_tcp_del, "IFACE ADDR:PORT",
	  "remove a TCP port, whoever owns it (its segments go to the kernel again)", NULL,
	  "tcp del" },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};
