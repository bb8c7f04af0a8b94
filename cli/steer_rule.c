/* SPDX-License-Identifier: BSD-2-Clause */
/* steer_rule.c - flow steering rules built and printed (steer_rule.h). */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "steer_rule.h"

int steer_first_queue(uint32_t mask)
{
	for (int q = 0; q < 32; q++)
		if (mask & (1u << q))
			return q;
	return -1;
}

void steer_rule_spec(const struct steer_rule *r, struct ethtool_rx_flow_spec *fs)
{
	/* tcp_ip4_spec and udp_ip4_spec are the same layout: one serves
	 * both flow types. */
	struct ethtool_tcpip4_spec *h = &fs->h_u.tcp_ip4_spec, *m = &fs->m_u.tcp_ip4_spec;

	memset(fs, 0, sizeof(*fs));
	fs->flow_type = r->tcp ? TCP_V4_FLOW : UDP_V4_FLOW;
	/* The kernel's masks are "compare these bits" (the ethtool
	 * program's command line has it the other way round). */
	h->ip4src = r->src_ip;
	m->ip4src = r->src_ip ? UINT32_MAX : 0;
	h->ip4dst = r->dst_ip;
	m->ip4dst = r->dst_ip ? UINT32_MAX : 0;
	h->psrc = htons(r->src_port);
	m->psrc = r->src_port ? UINT16_MAX : 0;
	h->pdst = htons(r->dst_port);
	m->pdst = r->dst_port ? UINT16_MAX : 0;
	fs->ring_cookie = r->queue;
	fs->location = RX_CLS_LOC_ANY;
}

bool steer_rule_matches(const struct steer_rule *r, const struct ethtool_rx_flow_spec *fs)
{
	struct ethtool_rx_flow_spec want;

	steer_rule_spec(r, &want);
	/* A driver may report flag bits (FLOW_EXT, FLOW_MAC_EXT) and
	 * extension fields it keeps by itself: compare the flow alone. */
	return (fs->flow_type & ~(uint32_t)(FLOW_EXT | FLOW_MAC_EXT | FLOW_RSS)) == want.flow_type &&
	       !memcmp(&fs->h_u.tcp_ip4_spec, &want.h_u.tcp_ip4_spec,
		       sizeof(want.h_u.tcp_ip4_spec)) &&
	       !memcmp(&fs->m_u.tcp_ip4_spec, &want.m_u.tcp_ip4_spec,
		       sizeof(want.m_u.tcp_ip4_spec)) &&
	       fs->ring_cookie == want.ring_cookie;
}

int steer_rule_format(const struct steer_rule *r, const char *ifname, char *buf, size_t len)
{
	char ip[INET_ADDRSTRLEN], sip[32] = "", dip[32] = "", sport[24] = "", dport[24] = "";
	int n;

	if (r->src_ip)
		snprintf(sip, sizeof(sip), " src-ip %s", inet_ntop(AF_INET, &r->src_ip, ip, sizeof(ip)));
	if (r->dst_ip)
		snprintf(dip, sizeof(dip), " dst-ip %s", inet_ntop(AF_INET, &r->dst_ip, ip, sizeof(ip)));
	if (r->src_port)
		snprintf(sport, sizeof(sport), " src-port %u", r->src_port);
	if (r->dst_port)
		snprintf(dport, sizeof(dport), " dst-port %u", r->dst_port);
	n = snprintf(buf, len, "ethtool -N %s flow-type %s%s%s%s%s action %u", ifname,
		     r->tcp ? "tcp4" : "udp4", sip, dip, sport, dport, r->queue);
	if (n < 0 || (size_t)n >= len) {
		if (len)
			buf[0] = '\0';
		return -1;
	}
	return n;
}
