/* SPDX-License-Identifier: BSD-2-Clause */
/* channel.c - unetctl channel list, add and del. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "unetctl.h"

static int do_channel_list(const struct cmd *c, int argc, char **argv)
{
	return list_over(c, argc, argv, LIST_CHANNELS);
}

static int do_channel_add(const struct cmd *c, int argc, char **argv)
{
	const char *ep_s = NULL, *tag_s = NULL, *peer_s = NULL, *ptag_s = NULL, *ip_s = NULL,
		   *pport_s = NULL;
	const struct optdef defs[] = {
		{ "--endpoint", &ep_s }, { "--tag", &tag_s },	      { "--peer", &peer_s },
		{ "--peer-tag", &ptag_s }, { "--peer-ip", &ip_s }, { "--peer-port", &pport_s },
		{ NULL, NULL },
	};
	struct unet_iface *iface;
	uint16_t tag = 0, peer_tag = 0;
	unsigned long ep, pport = 0;
	struct in_addr addr = { 0 };
	struct in6_addr addr6;
	bool v6 = false;
	uint8_t mac[6] = { 0 };
	char macs[18];
	char *pos[1];
	int n, r, err;

	if (root_cmd_start(c, argc, argv, defs, pos, 1, 1, &n, &r))
		return r;
	if (!ep_s || !tag_s || !ptag_s || !peer_s == !ip_s)
		return fail("missing option, or both --peer and --peer-ip (usage: unetctl %s %s)",
			    c->full, c->args);
	if (pport_s && !ip_s)
		return fail("--peer-port needs --peer-ip");
	if (parse_uint(ep_s, 0, UNET_MAX_ENDPOINTS - 1, &ep))
		return fail("invalid endpoint: %s (0..%d)", ep_s, UNET_MAX_ENDPOINTS - 1);
	if (parse_tag("tag", tag_s, &tag) || parse_tag("peer tag", ptag_s, &peer_tag))
		return 1;
	if (peer_s && unet_parse_mac(peer_s, mac))
		return fail("invalid MAC address: %s (aa:bb:cc:dd:ee:ff)", peer_s);
	/* An address with a colon is IPv6 (no zone: a link-local peer is on
	 * IFACE's link, the zone that matters). */
	if (ip_s && strchr(ip_s, ':')) {
		v6 = true;
		if (inet_pton(AF_INET6, ip_s, &addr6) != 1)
			return fail("invalid IPv6 address: %s", ip_s);
		if (IN6_IS_ADDR_UNSPECIFIED(&addr6) || IN6_IS_ADDR_LOOPBACK(&addr6) ||
		    IN6_IS_ADDR_MULTICAST(&addr6) || IN6_IS_ADDR_V4MAPPED(&addr6))
			return fail("%s: not a unicast peer address (unspecified, loopback, "
				    "multicast or IPv4-mapped)", ip_s);
	} else if (ip_s && (inet_pton(AF_INET, ip_s, &addr) != 1 || !addr.s_addr)) {
		return fail("invalid IPv4 address: %s", ip_s);
	}
	if (pport_s && parse_uint(pport_s, 1, 65535, &pport))
		return fail("invalid peer port: %s (1..65535)", pport_s);

	iface = open_iface(pos[0]);
	if (!iface)
		return 1;
	if (v6)
		err = unet_iface__channel_add_ipv6(iface, (uint32_t)ep, tag, addr6.s6_addr,
						   (uint16_t)pport, peer_tag);
	else if (ip_s)
		err = unet_iface__channel_add_ipv4(iface, (uint32_t)ep, tag, addr.s_addr,
						   (uint16_t)pport, peer_tag);
	else
		err = unet_iface__channel_add(iface, (uint32_t)ep, tag, mac, peer_tag);
	unet_iface__close(iface);
	if (err == -EADDRINUSE)
		return fail("tag %u in use on %s", tag, pos[0]);
	if (err == -ESRCH)
		return fail("no live endpoint %lu on %s (unetctl endpoint list %s)", ep, pos[0],
			    pos[0]);
	if (err == -EHOSTUNREACH && v6)
		return fail("%s: its next hop on %s (the route's gateway, or the peer on the link) "
			    "did not answer neighbour solicitation: not in the kernel's neighbour "
			    "table", ip_s, pos[0]);
	if (err == -EHOSTUNREACH)
		return fail("%s: its next hop on %s (the route's gateway, or the peer on the link) "
			    "did not answer ARP: not in the kernel's neighbour table", ip_s, pos[0]);
	if (err == -ENETUNREACH)
		return fail("%s: the kernel does not route it by %s", ip_s, pos[0]);
	if (err)
		return fail_iface(err, pos[0]);
	em_open(NULL, EM_LINE);
	em_str("iface", pos[0]);
	em_u64("tag", tag);
	if (ip_s) {
		em_str("transport", v6 ? "udp6" : "udp4");
		em_str("peer_ip", ip_s);
		if (pport)
			em_u64("peer_port", pport);
	} else {
		em_str("transport", "raw");
		em_str("peer_mac", unet_format_mac(mac, macs));
	}
	em_u64("peer_tag", peer_tag);
	em_u64("endpoint", ep);
	em_close();
	return 0;
}

static int do_channel_del(const struct cmd *c, int argc, char **argv)
{
	struct unet_iface *iface;
	uint16_t tag = 0;
	char *pos[2];
	int n, r, err;

	if (root_cmd_start(c, argc, argv, NULL, pos, 2, 2, &n, &r))
		return r;
	if (parse_tag("tag", pos[1], &tag))
		return 1;
	iface = open_iface(pos[0]);
	if (!iface)
		return 1;
	err = unet_iface__channel_del(iface, tag);
	unet_iface__close(iface);
	if (err == -ENOENT)
		return fail("no channel with tag %u on %s", tag, pos[0]);
	if (err)
		return fail_iface(err, pos[0]);
	em_open(NULL, EM_LINE);
	em_str("iface", pos[0]);
	em_u64("tag", tag);
	em_bool("deleted", true);
	em_close();
	return 0;
}

const struct cmd channel_cmds[] = {
	{ "list", do_channel_list, "[IFACE]",
	  "list channels: tag, peer, endpoint, owner, stale, counters", NULL, "channel list" },
	{ "add", do_channel_add,
	  "IFACE --endpoint ID --tag T (--peer MAC | --peer-ip ADDR [--peer-port N]) --peer-tag P",
	  "bind tag T to live endpoint ID, accepting frames from MAC (raw) or from ADDR and UDP "
	  "port N (routable, U-Net in UDP/IPv4 or UDP/IPv6) with tag P",
	  NULL,
	  "channel add" },
	{ "del", do_channel_del, "IFACE TAG", "remove a channel, whoever owns it", NULL,
	  "channel del" },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};
