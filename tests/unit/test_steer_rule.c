// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_steer_rule - unetctl steer's rules alone (cli/steer_rule.c): the
 * flow spec handed to the driver, IPv4 and IPv6 (flow type, each field and its mask,
 * queue, location), the ethtool line printed for it (fields left out when
 * they match anything), a buffer too small, the first bound queue, and a
 * driver's rule recognised as ours whatever its location.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "steer_rule.h"

static uint32_t ip(const char *s)
{
	uint32_t a;

	assert_int_equal(inet_pton(AF_INET, s, &a), 1);
	return a;
}

/* A routable channel's rule: every field given. */
static void test_channel_rule(void **state)
{
	struct steer_rule r = {
		.src_ip = ip("10.1.2.3"), .dst_ip = ip("10.1.2.4"),
		.src_port = 56396, .dst_port = 61955, .queue = 3,
	};
	struct ethtool_rx_flow_spec fs;
	const struct ethtool_tcpip4_spec *h = &fs.h_u.udp_ip4_spec, *m = &fs.m_u.udp_ip4_spec;
	char line[200];

	(void)state;
	memset(&fs, 0x5a, sizeof(fs)); /* whatever was there goes */
	steer_rule_spec(&r, &fs);
	assert_int_equal(fs.flow_type, UDP_V4_FLOW);
	assert_int_equal(h->ip4src, ip("10.1.2.3"));
	assert_int_equal(h->ip4dst, ip("10.1.2.4"));
	assert_int_equal(h->psrc, htons(56396));
	assert_int_equal(h->pdst, htons(61955));
	assert_int_equal(h->tos, 0);
	assert_int_equal(m->ip4src, 0xffffffffu);
	assert_int_equal(m->ip4dst, 0xffffffffu);
	assert_int_equal(m->psrc, 0xffff);
	assert_int_equal(m->pdst, 0xffff);
	assert_int_equal(m->tos, 0);
	assert_int_equal(fs.ring_cookie, 3);
	assert_int_equal(fs.location, RX_CLS_LOC_ANY);
	/* No extension fields: a driver without them takes the rule. */
	assert_int_equal(fs.flow_type & FLOW_EXT, 0);
	static const struct ethtool_flow_ext zero_ext;
	assert_memory_equal(&fs.h_ext, &zero_ext, sizeof(zero_ext));
	assert_memory_equal(&fs.m_ext, &zero_ext, sizeof(zero_ext));

	assert_int_equal(steer_rule_format(&r, "eth0", line, sizeof(line)),
			 (int)strlen("ethtool -N eth0 flow-type udp4 src-ip 10.1.2.3 dst-ip 10.1.2.4 "
				     "src-port 56396 dst-port 61955 action 3"));
	assert_string_equal(line, "ethtool -N eth0 flow-type udp4 src-ip 10.1.2.3 dst-ip 10.1.2.4 "
				  "src-port 56396 dst-port 61955 action 3");
}

/* A listening TCP port: only the destination; the source matches any. */
static void test_tcp_any_source(void **state)
{
	struct steer_rule r = { .tcp = true, .dst_ip = ip("192.168.0.1"), .dst_port = 80 };
	struct ethtool_rx_flow_spec fs;
	char line[200];

	(void)state;
	steer_rule_spec(&r, &fs);
	assert_int_equal(fs.flow_type, TCP_V4_FLOW);
	assert_int_equal(fs.h_u.tcp_ip4_spec.ip4src, 0);
	assert_int_equal(fs.m_u.tcp_ip4_spec.ip4src, 0);
	assert_int_equal(fs.m_u.tcp_ip4_spec.psrc, 0);
	assert_int_equal(fs.h_u.tcp_ip4_spec.pdst, htons(80));
	assert_int_equal(fs.m_u.tcp_ip4_spec.pdst, 0xffff);
	assert_int_equal(fs.m_u.tcp_ip4_spec.ip4dst, 0xffffffffu);
	assert_int_equal(fs.ring_cookie, 0);
	steer_rule_format(&r, "enp1s0f0np0", line, sizeof(line));
	assert_string_equal(line,
			    "ethtool -N enp1s0f0np0 flow-type tcp4 dst-ip 192.168.0.1 dst-port 80 action 0");
	/* An unconnected UDP port on any address: the port alone. */
	struct steer_rule u = { .dst_port = 7000, .queue = 15 };
	steer_rule_format(&u, "eth1", line, sizeof(line));
	assert_string_equal(line, "ethtool -N eth1 flow-type udp4 dst-port 7000 action 15");
}

/* A buffer too small: -1 and an empty string, never a cut-off command. */
static void test_format_too_small(void **state)
{
	struct steer_rule r = { .dst_ip = ip("10.0.0.1"), .dst_port = 7000, .queue = 1 };
	char line[200];
	int n;

	(void)state;
	n = steer_rule_format(&r, "eth0", line, sizeof(line));
	assert_true(n > 0);
	for (size_t len = 0; len <= (size_t)n; len++) {
		char small[200];

		memset(small, 'x', sizeof(small));
		assert_int_equal(steer_rule_format(&r, "eth0", small, len), -1);
		if (len)
			assert_int_equal(small[0], '\0');
		assert_int_equal(small[len], 'x'); /* nothing written past len */
	}
	assert_int_equal(steer_rule_format(&r, "eth0", line, (size_t)n + 1), n);
}

/* The interface name is one word for a POSIX shell, whatever it holds
 * (Linux names may hold ';', '$', '`', quotes): the line is meant to be
 * pasted.  Each printed line's name, given to /bin/sh, comes back as the
 * name; before, "$(id)" and "a;id" were printed bare and ran id. */
static void test_format_quotes_ifname(void **state)
{
	static const char *const names[] = { "eth0", "a;id", "$(id)", "`id`", "a|sh", "a&&b",
					     "it's", "'", "a b", "x\"y\\z", "*", "~root", "a\tb",
					     "-h", "" };
	struct steer_rule r = { .dst_port = 7000, .queue = 1 };
	char line[256], cmd[400], back[64];

	(void)state;
	steer_rule_format(&r, "a;id", line, sizeof(line));
	assert_string_equal(line, "ethtool -N 'a;id' flow-type udp4 dst-port 7000 action 1");
	steer_rule_format(&r, "it's", line, sizeof(line));
	assert_string_equal(line, "ethtool -N 'it'\\''s' flow-type udp4 dst-port 7000 action 1");
	steer_rule_format(&r, "enp1s0f0np0.100", line, sizeof(line));
	assert_string_equal(line, "ethtool -N enp1s0f0np0.100 flow-type udp4 dst-port 7000 action 1");
	assert_int_equal(steer_rule_format(&r, "sixteen-chars-xx", line, sizeof(line)), -1);
	assert_string_equal(line, "");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		FILE *f;
		size_t n;

		assert_true(steer_rule_format(&r, names[i], line, sizeof(line)) > 0);
		/* the line's words as the shell splits them: the third is the name */
		snprintf(cmd, sizeof(cmd), "set -- %s; printf '%%s' \"$3\"", line);
		f = popen(cmd, "r");
		assert_non_null(f);
		n = fread(back, 1, sizeof(back) - 1, f);
		back[n] = '\0';
		assert_int_equal(pclose(f), 0);
		if (strcmp(back, names[i]))
			fail_msg("\"%s\" printed as %s, the shell reads \"%s\"", names[i], line, back);
	}
}

static void test_first_queue(void **state)
{
	(void)state;
	assert_int_equal(steer_first_queue(0), -1);
	assert_int_equal(steer_first_queue(1), 0);
	assert_int_equal(steer_first_queue(0x6), 1);
	assert_int_equal(steer_first_queue(0x8000), 15);
	assert_int_equal(steer_first_queue(0x80000000u), 31);
}

/* A driver's rule is ours when flow and queue are, wherever it sits and
 * whatever flag bits it reports; any other field or queue is not. */
static void test_matches(void **state)
{
	struct steer_rule r = { .src_ip = ip("10.0.0.2"), .dst_ip = ip("10.0.0.1"),
				.src_port = 5000, .dst_port = 7000, .queue = 2 };
	struct ethtool_rx_flow_spec fs, other;

	(void)state;
	steer_rule_spec(&r, &fs);
	fs.location = 1023;
	assert_true(steer_rule_matches(&r, &fs));
	fs.flow_type |= FLOW_EXT;
	assert_true(steer_rule_matches(&r, &fs));

	other = fs;
	other.ring_cookie = 3;
	assert_false(steer_rule_matches(&r, &other));
	other = fs;
	other.h_u.udp_ip4_spec.psrc = htons(5001);
	assert_false(steer_rule_matches(&r, &other));
	other = fs;
	other.m_u.udp_ip4_spec.ip4src = 0;
	assert_false(steer_rule_matches(&r, &other));
	other = fs;
	other.flow_type = TCP_V4_FLOW;
	assert_false(steer_rule_matches(&r, &other));
}

static struct in6_addr ip6(const char *s)
{
	struct in6_addr a;

	assert_int_equal(inet_pton(AF_INET6, s, &a), 1);
	return a;
}

/* An IPv6 routable channel's rule: UDP_V6_FLOW in tcp_ip6_spec, every
 * address word and port given and masked in full, the line ethtool takes
 * ("flow-type udp6", the addresses as inet_ntop writes them). */
static void test_channel_rule6(void **state)
{
	struct steer_rule r = {
		.v6 = true, .src_ip6 = ip6("fd02::2"), .dst_ip6 = ip6("fd01::1"),
		.src_port = 56396, .dst_port = 61955, .queue = 2,
	};
	struct ethtool_rx_flow_spec fs;
	const struct ethtool_tcpip6_spec *h = &fs.h_u.udp_ip6_spec, *m = &fs.m_u.udp_ip6_spec;
	static const uint8_t ones[16] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					  0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct in6_addr want_src = ip6("fd02::2"), want_dst = ip6("fd01::1");
	static const struct ethtool_flow_ext zero_ext;
	char line[200];

	(void)state;
	memset(&fs, 0x5a, sizeof(fs));
	steer_rule_spec(&r, &fs);
	assert_int_equal(fs.flow_type, UDP_V6_FLOW);
	assert_memory_equal(h->ip6src, &want_src, 16);
	assert_memory_equal(h->ip6dst, &want_dst, 16);
	assert_memory_equal(m->ip6src, ones, 16);
	assert_memory_equal(m->ip6dst, ones, 16);
	assert_int_equal(h->psrc, htons(56396));
	assert_int_equal(h->pdst, htons(61955));
	assert_int_equal(m->psrc, 0xffff);
	assert_int_equal(m->pdst, 0xffff);
	assert_int_equal(h->tclass, 0);
	assert_int_equal(m->tclass, 0);
	assert_int_equal(fs.ring_cookie, 2);
	assert_int_equal(fs.location, RX_CLS_LOC_ANY);
	assert_int_equal(fs.flow_type & FLOW_EXT, 0);
	assert_memory_equal(&fs.h_ext, &zero_ext, sizeof(zero_ext));
	assert_memory_equal(&fs.m_ext, &zero_ext, sizeof(zero_ext));
	assert_int_equal(steer_rule_format(&r, "eth0", line, sizeof(line)),
			 (int)strlen("ethtool -N eth0 flow-type udp6 src-ip fd02::2 dst-ip fd01::1 "
				     "src-port 56396 dst-port 61955 action 2"));
	assert_string_equal(line, "ethtool -N eth0 flow-type udp6 src-ip fd02::2 dst-ip fd01::1 "
				  "src-port 56396 dst-port 61955 action 2");
	assert_string_equal(steer_rule_flow(&r), "udp6");
	/* the longest address there is still fits a line */
	r.src_ip6 = ip6("fd12:3456:789a:bcde:f012:3456:789a:bcde");
	r.dst_ip6 = ip6("2001:db8:ffff:ffff:ffff:ffff:ffff:fffe");
	assert_true(steer_rule_format(&r, "enp1s0f0np0", line, sizeof(line)) > 0);
	assert_string_equal(line, "ethtool -N enp1s0f0np0 flow-type udp6 "
				  "src-ip fd12:3456:789a:bcde:f012:3456:789a:bcde "
				  "dst-ip 2001:db8:ffff:ffff:ffff:ffff:ffff:fffe "
				  "src-port 56396 dst-port 61955 action 2");
}

/* A TCP/IPv6 listener: the destination alone, the source masked out;
 * an open UDP/IPv6 port: its port alone. */
static void test_tcp6_any_source(void **state)
{
	struct steer_rule r = { .tcp = true, .v6 = true, .dst_ip6 = ip6("2001:db8::1"),
				.dst_port = 80, .queue = 1 };
	struct ethtool_rx_flow_spec fs;
	static const uint8_t zero[16];
	char line[200];

	(void)state;
	steer_rule_spec(&r, &fs);
	assert_int_equal(fs.flow_type, TCP_V6_FLOW);
	assert_memory_equal(fs.h_u.tcp_ip6_spec.ip6src, zero, 16);
	assert_memory_equal(fs.m_u.tcp_ip6_spec.ip6src, zero, 16);
	assert_int_equal(fs.m_u.tcp_ip6_spec.psrc, 0);
	assert_int_equal(fs.h_u.tcp_ip6_spec.pdst, htons(80));
	assert_int_equal(fs.m_u.tcp_ip6_spec.pdst, 0xffff);
	assert_int_equal(fs.m_u.tcp_ip6_spec.ip6dst[0], 0xffffffffu);
	assert_int_equal(fs.m_u.tcp_ip6_spec.ip6dst[3], 0xffffffffu);
	steer_rule_format(&r, "eth0", line, sizeof(line));
	assert_string_equal(line,
			    "ethtool -N eth0 flow-type tcp6 dst-ip 2001:db8::1 dst-port 80 action 1");
	assert_string_equal(steer_rule_flow(&r), "tcp6");
	struct steer_rule u = { .v6 = true, .dst_port = 7000, .queue = 3 };
	steer_rule_format(&u, "eth1", line, sizeof(line));
	assert_string_equal(line, "ethtool -N eth1 flow-type udp6 dst-port 7000 action 3");
}

/* A driver's IPv6 rule is ours when its flow and queue are; an IPv4 rule
 * with the same ports, another address word or mask, is not. */
static void test_matches6(void **state)
{
	struct steer_rule r = { .v6 = true, .src_ip6 = ip6("fd02::2"), .dst_ip6 = ip6("fd01::1"),
				.src_port = 5000, .dst_port = 7000, .queue = 2 };
	struct steer_rule r4 = { .src_port = 5000, .dst_port = 7000, .queue = 2 };
	struct ethtool_rx_flow_spec fs, other;

	(void)state;
	steer_rule_spec(&r, &fs);
	fs.location = 7;
	assert_true(steer_rule_matches(&r, &fs));
	fs.flow_type |= FLOW_EXT;
	assert_true(steer_rule_matches(&r, &fs));
	other = fs;
	other.h_u.udp_ip6_spec.ip6src[3] ^= htonl(1);
	assert_false(steer_rule_matches(&r, &other));
	other = fs;
	other.h_u.udp_ip6_spec.ip6dst[0] ^= htonl(0x10000);
	assert_false(steer_rule_matches(&r, &other));
	other = fs;
	other.m_u.udp_ip6_spec.ip6src[2] = 0;
	assert_false(steer_rule_matches(&r, &other));
	other = fs;
	other.h_u.udp_ip6_spec.pdst = htons(7001);
	assert_false(steer_rule_matches(&r, &other));
	other = fs;
	other.flow_type = TCP_V6_FLOW;
	assert_false(steer_rule_matches(&r, &other));
	other = fs;
	other.flow_type = UDP_V4_FLOW;
	assert_false(steer_rule_matches(&r, &other));
	/* and the other way round: an IPv4 rule is not an IPv6 one */
	steer_rule_spec(&r4, &other);
	assert_true(steer_rule_matches(&r4, &other));
	r4.v6 = true;
	assert_false(steer_rule_matches(&r4, &other));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_channel_rule),	 cmocka_unit_test(test_tcp_any_source),
		cmocka_unit_test(test_format_too_small), cmocka_unit_test(test_first_queue),
		cmocka_unit_test(test_format_quotes_ifname),
		cmocka_unit_test(test_matches),		 cmocka_unit_test(test_channel_rule6),
		cmocka_unit_test(test_tcp6_any_source),	 cmocka_unit_test(test_matches6),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
