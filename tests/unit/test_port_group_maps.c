/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_port_group_maps.c - SO_REUSEPORT groups in an attached program's
 * maps (lib/inet/port_group.c through lib/udp/udp_admin.c and
 * lib/tcp/tcp_admin.c): joining as the group's user only, one place per
 * endpoint slot, the port entry moved to a live member when its own
 * leaves or dies, a socket without SO_REUSEPORT kept out while a member
 * lives, and reclaim clearing a group nobody is left in.
 *
 * Endpoint slots are claimed as unetd claims them for its grants (a
 * token and an alive map; closing the map is the owner's death), so no
 * AF_XDP socket is needed.  The interface comes from the environment
 * (run_pair_cmocka: UNET_TEST_IFACE_A, UNET_PIN_ROOT); without it every
 * case is skipped.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <bpf/bpf.h>

#include "core/layer.h"
#include "inet/port_group.h"
#include "tcp/tcp_impl.h"
#include "udp/udp_impl.h"

static const char *if_a, *pin_root;
static enum unet_xdp_mode mode = UNET_XDP_MODE_SKB;

#define LADDR htonl(0x0ac9a001u)
#define UID 1000

struct fixture {
	struct unet_iface *iface;
	struct {
		int alive_fd;
		uint64_t token;
		uint32_t slot;
	} ep[3];
};

static int setup(void **state)
{
	UNET_OPTS_INIT(unet_iface_opts, io);
	static struct fixture f;

	*state = NULL;
	if (!if_a || !pin_root)
		return 0;
	io.pin_root = pin_root;
	if (unet_iface__attach(if_a, mode, &io))
		return -1;
	f.iface = unet_iface__open(if_a, &io);
	if (!f.iface)
		return -1;
	for (int i = 0; i < 3; i++) {
		struct unet_endpoint_val v;
		uint32_t id;
		int slot;

		memset(&v, 0, sizeof(v));
		f.ep[i].alive_fd = unet_alive_map_create(&f.ep[i].token, &id);
		if (f.ep[i].alive_fd < 0)
			return -1;
		v.pid = (uint32_t)getpid();
		v.token = f.ep[i].token;
		v.alive_map_id = id;
		slot = unet_iface_slot_claim(f.iface, &v);
		if (slot < 0)
			return -1;
		f.ep[i].slot = (uint32_t)slot;
	}
	*state = &f;
	return 0;
}

#define NEED_IFACE(state)                                            \
	do {                                                         \
		if (!*(state)) {                                     \
			print_message("UNET_TEST_IFACE_A not set\n"); \
			skip();                                      \
		}                                                    \
	} while (0)

static int groups_fd(struct fixture *f)
{
	int fd = unet_iface_map(f->iface, UNET_MAP_PORT_GROUPS, BPF_MAP_TYPE_HASH,
				sizeof(struct unet_group_key), sizeof(struct unet_group_val));

	assert_true(fd >= 0);
	return fd;
}

static bool group_of(struct fixture *f, uint8_t proto, uint16_t port, struct unet_group_val *g)
{
	struct unet_group_key k = { .addr = LADDR, .port = htons(port), .proto = proto };

	return bpf_map_lookup_elem(groups_fd(f), &k, g) == 0;
}

static bool udp_entry(struct fixture *f, uint16_t port, struct unet_udp_val *v)
{
	struct unet_udp_key k = { .addr = LADDR, .port = htons(port) };
	int fd = unet_iface_map(f->iface, UNET_MAP_UDP_PORTS, BPF_MAP_TYPE_HASH, sizeof(k),
				sizeof(*v));

	assert_true(fd >= 0);
	return bpf_map_lookup_elem(fd, &k, v) == 0;
}

static bool tcp_entry(struct fixture *f, uint16_t port, struct unet_tcp_val *v)
{
	struct unet_tcp_key k = { .addr = LADDR, .port = htons(port) };
	int fd = unet_iface_map(f->iface, UNET_MAP_TCP_PORTS, BPF_MAP_TYPE_HASH, sizeof(k),
				sizeof(*v));

	assert_true(fd >= 0);
	return bpf_map_lookup_elem(fd, &k, v) == 0;
}

/* Join, refusals, leave: the entry follows a live member, and goes with
 * the last. */
static void test_udp_join_leave(void **state)
{
	struct fixture *f = *state;
	struct unet_group_val g, before;
	struct unet_udp_val v;
	uint32_t a, b, c;

	NEED_IFACE(state);
	a = f->ep[0].slot, b = f->ep[1].slot, c = f->ep[2].slot;
	assert_int_equal(unet_udp_port_join(f->iface, a, LADDR, 7001, UID), 0);
	assert_true(udp_entry(f, 7001, &v));
	assert_true(v.flags & UNET_PORT_F_GROUP);
	assert_int_equal(v.endpoint, a);
	assert_int_equal(unet_udp_port_join(f->iface, b, LADDR, 7001, UID), 0);
	assert_int_equal(unet_udp_port_join(f->iface, a, LADDR, 7001, UID), -EEXIST);
	assert_true(group_of(f, IPPROTO_UDP, 7001, &before));
	assert_int_equal(before.uid, UID);
	assert_int_equal(before.count, 2);
	/* another user: refused, nothing changed */
	assert_int_equal(unet_udp_port_join(f->iface, c, LADDR, 7001, UID + 1), -EACCES);
	assert_int_equal(unet_udp_port_join(f->iface, c, LADDR, 7001, 0), -EACCES);
	assert_true(group_of(f, IPPROTO_UDP, 7001, &g));
	assert_memory_equal(&g, &before, sizeof(g));
	/* a socket without SO_REUSEPORT */
	assert_int_equal(unet_udp_port_add(f->iface, c, LADDR, 7001, 0, 0), -EADDRINUSE);
	/* the member the entry names leaves: the entry moves to the other,
	 * whose place stays where it was */
	unet_udp_port_remove(f->iface, a, LADDR, 7001);
	assert_true(udp_entry(f, 7001, &v));
	assert_int_equal(v.endpoint, b);
	assert_true(v.owner_token == f->ep[1].token);
	assert_true(group_of(f, IPPROTO_UDP, 7001, &g));
	assert_int_equal(g.count, 2);
	assert_true(g.m[0].token == 0);
	assert_int_equal(g.m[1].endpoint, b);
	/* the last leaves: entry and group gone */
	unet_udp_port_remove(f->iface, b, LADDR, 7001);
	assert_false(udp_entry(f, 7001, &v));
	assert_false(group_of(f, IPPROTO_UDP, 7001, &g));
	/* a port held without a group cannot be joined */
	assert_int_equal(unet_udp_port_add(f->iface, a, LADDR, 7002, 0, 0), 0);
	assert_int_equal(unet_udp_port_join(f->iface, b, LADDR, 7002, UID), -EADDRINUSE);
	unet_udp_port_remove(f->iface, a, LADDR, 7002);
}

/* A listener group: as UDP's, and the entry stays a listener's. */
static void test_tcp_join_leave(void **state)
{
	struct fixture *f = *state;
	struct unet_group_val g;
	struct unet_tcp_val v;
	uint32_t a, b, c;

	NEED_IFACE(state);
	a = f->ep[0].slot, b = f->ep[1].slot, c = f->ep[2].slot;
	assert_int_equal(unet_tcp_port_join(f->iface, a, LADDR, 7101, UID), 0);
	assert_int_equal(unet_tcp_port_join(f->iface, b, LADDR, 7101, UID), 0);
	assert_int_equal(unet_tcp_port_join(f->iface, c, LADDR, 7101, UID + 1), -EACCES);
	assert_int_equal(unet_tcp_port_add(f->iface, c, LADDR, 7101, UNET_TCP_PORT_LISTEN),
			 -EADDRINUSE);
	assert_true(unet_tcp_group_live(f->iface, LADDR, 7101));
	assert_true(tcp_entry(f, 7101, &v));
	assert_int_equal(v.flags, UNET_TCP_PORT_LISTEN | UNET_PORT_F_GROUP);
	unet_tcp_port_remove(f->iface, a, LADDR, 7101);
	assert_true(tcp_entry(f, 7101, &v));
	assert_int_equal(v.endpoint, b);
	unet_tcp_port_remove(f->iface, b, LADDR, 7101);
	assert_false(tcp_entry(f, 7101, &v));
	assert_false(group_of(f, IPPROTO_TCP, 7101, &g));
	assert_false(unet_tcp_group_live(f->iface, LADDR, 7101));
}

/* The member the entry names dies (its alive map closes, no leave): the
 * port stays held by the other, and the entry moves to it when anyone
 * looks; once nobody is left, reclaim clears entry and group, and the
 * port is anyone's again. */
static void test_death_and_reclaim(void **state)
{
	struct fixture *f = *state;
	struct unet_group_val g;
	struct unet_udp_val v;
	uint32_t a, b, c;

	NEED_IFACE(state);
	a = f->ep[0].slot, b = f->ep[1].slot, c = f->ep[2].slot;
	assert_int_equal(unet_udp_port_join(f->iface, a, LADDR, 7201, UID), 0);
	assert_int_equal(unet_udp_port_join(f->iface, b, LADDR, 7201, UID), 0);
	close(f->ep[0].alive_fd);
	f->ep[0].alive_fd = -1;
	assert_int_equal(unet_udp_port_add(f->iface, c, LADDR, 7201, 0, 0), -EADDRINUSE);
	assert_true(udp_entry(f, 7201, &v));
	assert_int_equal(v.endpoint, b);
	assert_true(group_of(f, IPPROTO_UDP, 7201, &g));
	assert_true(g.m[0].token == 0);
	/* a newcomer of the user takes the dead member's place */
	assert_int_equal(unet_udp_port_join(f->iface, c, LADDR, 7201, UID), 0);
	assert_true(group_of(f, IPPROTO_UDP, 7201, &g));
	assert_int_equal(g.m[0].endpoint, c);
	assert_int_equal(g.count, 2);
	close(f->ep[1].alive_fd);
	close(f->ep[2].alive_fd);
	f->ep[1].alive_fd = f->ep[2].alive_fd = -1;
	assert_true(unet_udp_reclaim(f->iface) > 0);
	assert_false(udp_entry(f, 7201, &v));
	assert_false(group_of(f, IPPROTO_UDP, 7201, &g));
}

int main(void)
{
	const char *m = getenv("UNET_TEST_XDP_MODE");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_udp_join_leave),
		cmocka_unit_test(test_tcp_join_leave),
		cmocka_unit_test(test_death_and_reclaim),
	};

	if_a = getenv("UNET_TEST_IFACE_A");
	pin_root = getenv("UNET_PIN_ROOT");
	if (m && !strcmp(m, "native"))
		mode = UNET_XDP_MODE_NATIVE;
	return cmocka_run_group_tests_name("port_group_maps", tests, setup, NULL);
}
