/* SPDX-License-Identifier: BSD-2-Clause */
/* steer_rule.c - flow steering rules built and printed (steer_rule.h). */
#include <arpa/inet.h>
#include <net/if.h>
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

static bool ip6_any(const struct in6_addr *a)
{
	static const struct in6_addr zero;

	return memcmp(a, &zero, sizeof(zero)) == 0;
}

/* An IPv6 address and its mask in the kernel's four 32-bit words. */
static void spec_ip6(__be32 h[4], __be32 m[4], const struct in6_addr *a)
{
	memcpy(h, a, 16);
	memset(m, ip6_any(a) ? 0 : 0xff, 16);
}

void steer_rule_spec(const struct steer_rule *r, struct ethtool_rx_flow_spec *fs)
{
	/* tcp_ip4_spec and udp_ip4_spec are the same layout: one serves
	 * both flow types; so do tcp_ip6_spec and udp_ip6_spec. */
	struct ethtool_tcpip4_spec *h = &fs->h_u.tcp_ip4_spec, *m = &fs->m_u.tcp_ip4_spec;
	struct ethtool_tcpip6_spec *h6 = &fs->h_u.tcp_ip6_spec, *m6 = &fs->m_u.tcp_ip6_spec;

	memset(fs, 0, sizeof(*fs));
	fs->ring_cookie = r->queue;
	fs->location = RX_CLS_LOC_ANY;
	/* The kernel's masks are "compare these bits" (the ethtool
	 * program's command line has it the other way round). */
	if (r->v6) {
		fs->flow_type = r->tcp ? TCP_V6_FLOW : UDP_V6_FLOW;
		spec_ip6(h6->ip6src, m6->ip6src, &r->src_ip6);
		spec_ip6(h6->ip6dst, m6->ip6dst, &r->dst_ip6);
		h6->psrc = htons(r->src_port);
		m6->psrc = r->src_port ? UINT16_MAX : 0;
		h6->pdst = htons(r->dst_port);
		m6->pdst = r->dst_port ? UINT16_MAX : 0;
		return;
	}
	fs->flow_type = r->tcp ? TCP_V4_FLOW : UDP_V4_FLOW;
	h->ip4src = r->src_ip;
	m->ip4src = r->src_ip ? UINT32_MAX : 0;
	h->ip4dst = r->dst_ip;
	m->ip4dst = r->dst_ip ? UINT32_MAX : 0;
	h->psrc = htons(r->src_port);
	m->psrc = r->src_port ? UINT16_MAX : 0;
	h->pdst = htons(r->dst_port);
	m->pdst = r->dst_port ? UINT16_MAX : 0;
}

bool steer_rule_matches(const struct steer_rule *r, const struct ethtool_rx_flow_spec *fs)
{
	struct ethtool_rx_flow_spec want;
	/* the flow type's own part of the union, no more: a driver may
	 * leave anything past it */
	size_t len = r->v6 ? sizeof(want.h_u.tcp_ip6_spec) : sizeof(want.h_u.tcp_ip4_spec);

	steer_rule_spec(r, &want);
	/* A driver may report flag bits (FLOW_EXT, FLOW_MAC_EXT) and
	 * extension fields it keeps by itself: compare the flow alone. */
	return (fs->flow_type & ~(uint32_t)(FLOW_EXT | FLOW_MAC_EXT | FLOW_RSS)) == want.flow_type &&
	       !memcmp(&fs->h_u, &want.h_u, len) && !memcmp(&fs->m_u, &want.m_u, len) &&
	       fs->ring_cookie == want.ring_cookie;
}

/* Characters a POSIX shell takes literally in a word anywhere in it. */
static bool shell_plain(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("._-+@%,=", c) != NULL;
}

/* name as one word for a POSIX shell, into q (at least 4 x 15 + 3
 * bytes): as it is if every character is plain, else in single quotes,
 * each ' written '\''.  Linux interface names may hold ';', '$', '`',
 * quotes and the like, and the line is meant to be pasted. */
static void shell_word(const char *name, char *q)
{
	bool plain = *name != '\0';

	for (const char *c = name; *c; c++)
		plain &= shell_plain(*c);
	if (plain) {
		strcpy(q, name);
		return;
	}
	*q++ = '\'';
	for (const char *c = name; *c; c++) {
		if (*c == '\'') {
			memcpy(q, "'\\''", 4);
			q += 4;
		} else {
			*q++ = *c;
		}
	}
	*q++ = '\'';
	*q = '\0';
}

int steer_rule_format(const struct steer_rule *r, const char *ifname, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN], sip[64] = "", dip[64] = "", sport[24] = "", dport[24] = "";
	char dev[4 * (IF_NAMESIZE - 1) + 3];
	int n;

	if (strlen(ifname) >= IF_NAMESIZE) { /* no interface has such a name */
		if (len)
			buf[0] = '\0';
		return -1;
	}
	shell_word(ifname, dev);

	if (r->v6) {
		if (!ip6_any(&r->src_ip6))
			snprintf(sip, sizeof(sip), " src-ip %s",
				 inet_ntop(AF_INET6, &r->src_ip6, ip, sizeof(ip)));
		if (!ip6_any(&r->dst_ip6))
			snprintf(dip, sizeof(dip), " dst-ip %s",
				 inet_ntop(AF_INET6, &r->dst_ip6, ip, sizeof(ip)));
	} else {
		if (r->src_ip)
			snprintf(sip, sizeof(sip), " src-ip %s",
				 inet_ntop(AF_INET, &r->src_ip, ip, sizeof(ip)));
		if (r->dst_ip)
			snprintf(dip, sizeof(dip), " dst-ip %s",
				 inet_ntop(AF_INET, &r->dst_ip, ip, sizeof(ip)));
	}
	if (r->src_port)
		snprintf(sport, sizeof(sport), " src-port %u", r->src_port);
	if (r->dst_port)
		snprintf(dport, sizeof(dport), " dst-port %u", r->dst_port);
	n = snprintf(buf, len, "ethtool -N %s flow-type %s%s%s%s%s action %u", dev,
		     steer_rule_flow(r), sip, dip, sport, dport, r->queue);
	if (n < 0 || (size_t)n >= len) {
		if (len)
			buf[0] = '\0';
		return -1;
	}
	return n;
}

const char *steer_rule_flow(const struct steer_rule *r)
{
	return r->v6 ? (r->tcp ? "tcp6" : "udp6") : (r->tcp ? "tcp4" : "udp4");
}
