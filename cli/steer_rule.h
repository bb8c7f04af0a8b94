/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * steer_rule.h - one flow steering rule (an ethtool ntuple filter): which
 * UDP or TCP flow over IPv4 or IPv6 a NIC should put on which receive queue, as
 * the kernel's struct ethtool_rx_flow_spec and as the line a user pastes
 * ("ethtool -N IFACE flow-type ..."). Pure: no I/O, unit-tested alone.
 */
#ifndef UNETCTL_STEER_RULE_H
#define UNETCTL_STEER_RULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <netinet/in.h>

#include <linux/ethtool.h>

struct steer_rule {
	bool tcp;	   /* tcp4/tcp6, else udp4/udp6 */
	bool v6;	   /* IPv6: src_ip6 and dst_ip6 (src_ip and dst_ip unused) */
	uint32_t src_ip;   /* network order; 0: any */
	uint32_t dst_ip;   /* network order; 0: any */
	struct in6_addr src_ip6; /* all zero: any */
	struct in6_addr dst_ip6; /* all zero: any */
	uint16_t src_port; /* host order; 0: any */
	uint16_t dst_port; /* host order; 0: any */
	uint32_t queue;	   /* the receive queue its frames go to */
};

/* The lowest queue in mask (bit q: queue q), or -1 for an empty mask. */
int steer_first_queue(uint32_t mask);

/* The rule as the kernel's flow spec for ETHTOOL_SRXCLSRLINS (UDP_V4_FLOW,
 * TCP_V4_FLOW with tcp_ip4_spec; UDP_V6_FLOW, TCP_V6_FLOW with
 * tcp_ip6_spec): the fields given are matched exactly (mask all ones),
 * the others not at all; the driver picks the location (RX_CLS_LOC_ANY). */
void steer_rule_spec(const struct steer_rule *r, struct ethtool_rx_flow_spec *fs);

/* Whether a driver's rule fs is r (same flow type, fields, masks and
 * queue), whatever its location. */
bool steer_rule_matches(const struct steer_rule *r, const struct ethtool_rx_flow_spec *fs);

/* "ethtool -N IFACE flow-type udp4 src-ip A dst-ip B src-port P dst-port
 * Q action N" (udp6/tcp6 with IPv6 addresses, as ethtool writes them)
 * into buf, the fields that are any left out.  IFACE is one word for a
 * POSIX shell: as it is if it holds only letters, digits and ._-+@%,=,
 * else in single quotes (a ' as '\'').  Returns the length, or -1 when
 * it does not fit or IFACE is longer than an interface name can be (buf
 * then holds "" if len > 0). */
int steer_rule_format(const struct steer_rule *r, const char *ifname, char *buf, size_t len);

/* ethtool's name of the rule's flow type: "udp4", "tcp4", "udp6", "tcp6". */
const char *steer_rule_flow(const struct steer_rule *r);

#endif /* UNETCTL_STEER_RULE_H */
