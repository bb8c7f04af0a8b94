// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_steer_rule - unetctl steer's rules alone (cli/steer_rule.c): the
 * flow spec handed to the driver (flow type, each field and its mask,
 * queue, location), the ethtool line printed for it (fields left out when
 * they match anything), a buffer too small, the first bound queue, and a
 * driver's rule recognised as ours whatever its location.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_channel_rule),	 cmocka_unit_test(test_tcp_any_source),
		cmocka_unit_test(test_format_too_small), cmocka_unit_test(test_first_queue),
		cmocka_unit_test(test_matches),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
