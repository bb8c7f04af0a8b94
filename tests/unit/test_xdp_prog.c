// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_xdp_prog.c - the XDP program alone, on crafted frames.
 *
 * The program is loaded from its skeleton with pinning switched off (the
 * test never touches bpffs) and run with BPF_PROG_TEST_RUN.  Frames are
 * built here byte by byte, not with the library's wire helpers, so this
 * checks the program against docs/wire-format.md independently of lib/.
 * Every case asserts the return code and the exact change of every
 * interface counter and of the per-channel counters of the tags involved.
 *
 * Setup: the process moves into its own network namespace (unshare), so the
 * AF_XDP socket that makes the "delivered" cases possible is bound to a
 * private loopback device.  Not root -> every case is skipped; no AF_XDP ->
 * the cases that need a socket are skipped; the program not loading as root
 * is a failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#include "core/internal.h" /* UNET_MAP_*: the maps the core opens */
#include "udp/udp_impl.h"	   /* UNET_MAP_UDP_PORTS; UNET_MAP_INET_ADDRS, UNET_MAP_NEIGH (inet/inet.h) */
#include "tcp/tcp_impl.h"	   /* UNET_MAP_TCP_PORTS: the TCP layer's */
#include "inet/port_group.h"	   /* UNET_MAP_PORT_GROUPS */
#include "unet_abi.h"
#include "unet_xdp.skel.h"
#include "fuzz.h"

/* ---- Fixture -------------------------------------------------------------- */

#define EP_SOCK 3     /* endpoint with a socket on queue 0 */
#define EP_NOSOCK 5   /* endpoint with no socket at all */
#define TAG_GOOD 0x1234
#define TAG_NOSOCK 0x0777
#define TAG_UNKNOWN 0x0999
#define PEER_TAG 0x0042
#define PEER_TAG_NOSOCK 0x0043
/* Endpoint incarnations (unet_endpoint_val.token): random and non-zero in
 * the library; fixed here.  A channel is delivered only while its
 * owner_token is the token now in its endpoint slot. */
#define TOKEN_SOCK 0x5eed000000000003ull
#define TOKEN_NOSOCK 0x5eed000000000005ull

static const uint8_t LOCAL_MAC[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
static const uint8_t PEER_MAC[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };
static const uint8_t OTHER_MAC[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x03 };

/* Tags whose channel counters every case checks (all must stay 0 unless
 * the case expects otherwise).  Tag 0 has a stats slot too. */
#define TAG_CHAN 0x0555 /* a routable channel (UDP/IPv4) owned by EP_SOCK */
#define TAG_CHAN6 0x0556 /* a routable channel (UDP/IPv6) owned by EP_SOCK */
static const uint32_t watched_tags[] = { TAG_GOOD, TAG_NOSOCK, TAG_UNKNOWN, 0, TAG_CHAN,
					 TAG_CHAN6 };
enum { W_GOOD, W_NOSOCK, W_UNKNOWN, W_ZERO, W_CHAN, W_CHAN6, W__COUNT };

static const char *const ctr_names[UNET_CTR__COUNT] = {
	[UNET_CTR_RX] = "rx",
	[UNET_CTR_PASS] = "pass",
	[UNET_CTR_DELIVERED] = "delivered",
	[UNET_CTR_DROP_MALFORMED] = "drop_malformed",
	[UNET_CTR_DROP_VERSION] = "drop_version",
	[UNET_CTR_DROP_UNKNOWN_TAG] = "drop_unknown_tag",
	[UNET_CTR_DROP_WRONG_SRC] = "drop_wrong_src",
	[UNET_CTR_DROP_NO_SOCKET] = "drop_no_socket",
	[UNET_CTR_DROP_INJECTED] = "drop_injected",
	[UNET_CTR_UDP_DELIVERED] = "udp_delivered",
	[UNET_CTR_ARP_DELIVERED] = "arp_delivered",
	[UNET_CTR_DROP_UDP_FILTER] = "drop_udp_filter",
	[UNET_CTR_DROP_IP_FRAGMENT] = "drop_ip_fragment",
	[UNET_CTR_DROP_IP_MALFORMED] = "drop_ip_malformed",
	[UNET_CTR_DROP_QUEUE_RANGE] = "drop_queue_range",
	[UNET_CTR_TCP_DELIVERED] = "tcp_delivered",
	[UNET_CTR_DROP_TCP_MALFORMED] = "drop_tcp_malformed",
	[UNET_CTR_DROP_CHAN_IP] = "drop_chan_ip",
	[UNET_CTR_DROP_CHAN_FRAG] = "drop_chan_frag",
	[UNET_CTR_DROP_CHAN_UDPLEN] = "drop_chan_udplen",
	[UNET_CTR_DROP_CHAN_CSUM] = "drop_chan_csum",
	[UNET_CTR_DROP_CHAN_KIND] = "drop_chan_kind",
	[UNET_CTR_CHAN_DELIVERED] = "chan_delivered",
	[UNET_CTR_DROP_IP6_EXTHDR] = "drop_ip6_exthdr",
	[UNET_CTR_ND_DELIVERED] = "nd_delivered",
};

#define NFRAMES 64

static struct {
	bool root;		/* may run at all */
	char skip_why[256];	/* why every case is skipped, if !root */
	int load_err;		/* skeleton open/load error, 0 if loaded */
	struct unet_xdp_bpf *skel;
	int prog_fd;
	int ncpus;
	/* AF_XDP socket at UNET_XSK_INDEX(EP_SOCK, 0) */
	bool xsk_ok;
	char xsk_why[256];
	void *umem_area;
	size_t umem_size;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fill;
	struct xsk_ring_cons comp;
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;
	/* a device with more than UNET_MAX_QUEUES rx queues, 0 if none */
	int mq_ifindex;
} g;

/* ---- Frames, built by hand (network byte order written out explicitly) -- */

struct frame_spec {
	const uint8_t *src_mac; /* default PEER_MAC */
	uint16_t vlan_tpid;	/* 0: no VLAN tag */
	uint16_t vlan_tci;
	uint16_t ethertype;
	uint8_t version;
	uint8_t flags;
	uint16_t dst_tag;
	uint16_t src_tag;
	uint16_t len;	  /* header len field */
	uint16_t payload; /* payload bytes actually present */
	uint16_t pad;	  /* zero bytes after the payload */
	uint32_t cut;	  /* if non-zero, the frame ends after this many bytes */
};

static struct frame_spec good_spec(void)
{
	return (struct frame_spec){
		.src_mac = PEER_MAC,
		.ethertype = UNET_ETH_P,
		.version = UNET_WIRE_VERSION,
		.dst_tag = TAG_GOOD,
		.src_tag = PEER_TAG,
		.len = 64,
		.payload = 64,
	};
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Build the frame described by s into buf (cap bytes); returns its length. */
static uint32_t build(uint8_t *buf, size_t cap, const struct frame_spec *s)
{
	uint32_t off = 0;

	assert_true(cap >= 14 + 4 + 8 + (size_t)s->payload + s->pad);
	memset(buf, 0, cap);
	memcpy(buf, LOCAL_MAC, 6);
	memcpy(buf + 6, s->src_mac ? s->src_mac : PEER_MAC, 6);
	off = 12;
	if (s->vlan_tpid) {
		put16(buf + off, s->vlan_tpid);
		put16(buf + off + 2, s->vlan_tci);
		off += 4;
	}
	put16(buf + off, s->ethertype);
	off += 2;
	/* U-Net header: version, flags, dst_tag, src_tag, len */
	buf[off] = s->version;
	buf[off + 1] = s->flags;
	put16(buf + off + 2, s->dst_tag);
	put16(buf + off + 4, s->src_tag);
	put16(buf + off + 6, s->len);
	off += 8;
	for (uint32_t i = 0; i < s->payload; i++)
		buf[off + i] = (uint8_t)(0xa0 + i);
	off += s->payload + s->pad;
	if (s->cut && s->cut < off)
		off = s->cut;
	return off;
}

/* ---- Counters --------------------------------------------------------------- */

struct snap {
	uint64_t ifc[UNET_CTR__COUNT];
	struct unet_channel_stats ch[W__COUNT];
};

static void read_snap(struct snap *s)
{
	int if_fd = bpf_map__fd(g.skel->maps.unet_if_stats);
	int ch_fd = bpf_map__fd(g.skel->maps.unet_chan_stats);
	uint64_t *v = calloc((size_t)g.ncpus, sizeof(*v));
	struct unet_channel_stats *c = calloc((size_t)g.ncpus, sizeof(*c));

	assert_non_null(v);
	assert_non_null(c);
	memset(s, 0, sizeof(*s));
	for (uint32_t i = 0; i < UNET_CTR__COUNT; i++) {
		assert_int_equal(bpf_map_lookup_elem(if_fd, &i, v), 0);
		for (int cpu = 0; cpu < g.ncpus; cpu++)
			s->ifc[i] += v[cpu];
	}
	for (int w = 0; w < W__COUNT; w++) {
		uint32_t tag = watched_tags[w];

		assert_int_equal(bpf_map_lookup_elem(ch_fd, &tag, c), 0);
		for (int cpu = 0; cpu < g.ncpus; cpu++) {
			s->ch[w].delivered += c[cpu].delivered;
			s->ch[w].delivered_bytes += c[cpu].delivered_bytes;
			s->ch[w].drop_wrong_src += c[cpu].drop_wrong_src;
			s->ch[w].drop_no_socket += c[cpu].drop_no_socket;
		}
	}
	free(v);
	free(c);
}

/* Expected deltas: a frame counted as rx plus exactly one outcome. */
static struct snap one(enum unet_if_counter outcome)
{
	struct snap e = { 0 };

	e.ifc[UNET_CTR_RX] = 1;
	e.ifc[outcome] = 1;
	return e;
}

static void chan_fields(const struct unet_channel_stats *c, uint64_t f[4])
{
	f[0] = c->delivered;
	f[1] = c->delivered_bytes;
	f[2] = c->drop_wrong_src;
	f[3] = c->drop_no_socket;
}

static void check_delta(const struct snap *before, const struct snap *want)
{
	struct snap now;
	static const char *const fnames[] = { "delivered", "delivered_bytes", "drop_wrong_src",
					      "drop_no_socket" };

	read_snap(&now);
	for (int i = 0; i < UNET_CTR__COUNT; i++) {
		uint64_t d = now.ifc[i] - before->ifc[i];

		if (d != want->ifc[i])
			fail_msg("if counter %s changed by %llu, expected %llu", ctr_names[i],
				 (unsigned long long)d, (unsigned long long)want->ifc[i]);
	}
	for (int w = 0; w < W__COUNT; w++) {
		uint64_t n[4], b[4], x[4];

		chan_fields(&now.ch[w], n);
		chan_fields(&before->ch[w], b);
		chan_fields(&want->ch[w], x);
		for (int f = 0; f < 4; f++)
			if (n[f] - b[f] != x[f])
				fail_msg("tag 0x%04x %s changed by %llu, expected %llu",
					 watched_tags[w], fnames[f], (unsigned long long)(n[f] - b[f]),
					 (unsigned long long)x[f]);
	}
}

/* ---- Running the program ------------------------------------------------------ */

static void need_prog(void)
{
	if (!g.root) {
		print_message("SKIP: %s\n", g.skip_why);
		skip();
	}
	if (g.load_err)
		fail_msg("unet_xdp.bpf.o did not load as root: %s", strerror(-g.load_err));
}

static void need_xsk(void)
{
	need_prog();
	if (!g.xsk_ok) {
		print_message("SKIP: no AF_XDP socket for the delivered cases: %s\n", g.xsk_why);
		skip();
	}
}

/* Run the program once on pkt; ctx may be NULL (queue 0 of lo).  Returns
 * the syscall's result; *retval and (if out) the frame after the run. */
static int run_prog(const uint8_t *pkt, uint32_t n, const struct xdp_md *ctx, uint32_t *retval,
		    uint8_t *out, uint32_t *out_len)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt, .data_size_in = n, .repeat = 1);
	struct xdp_md run_ctx;
	int err;

	if (ctx) {
		/* The kernel wants data_end == the frame length (no metadata). */
		run_ctx = *ctx;
		run_ctx.data = 0;
		run_ctx.data_meta = 0;
		run_ctx.data_end = n;
		opts.ctx_in = &run_ctx;
		opts.ctx_size_in = sizeof(run_ctx);
	}
	if (out) {
		opts.data_out = out;
		opts.data_size_out = *out_len;
	}
	err = bpf_prog_test_run_opts(g.prog_fd, &opts);
	if (err)
		return -errno;
	*retval = opts.retval;
	if (out_len)
		*out_len = opts.data_size_out;
	return 0;
}

/* Run pkt, assert the verdict and the counter deltas. */
static void expect_run(const uint8_t *pkt, uint32_t n, const struct xdp_md *ctx, uint32_t verdict,
		       const struct snap *want)
{
	struct snap before;
	uint32_t ret = 0xdead;

	read_snap(&before);
	assert_int_equal(run_prog(pkt, n, ctx, &ret, NULL, NULL), 0);
	assert_int_equal(ret, verdict);
	check_delta(&before, want);
}

/* A frame the program must leave to the kernel when it arrives as ctx
 * says (NULL: queue 0 of lo): XDP_PASS, counted as pass (and nothing
 * else), and not a byte changed. */
static void expect_pass_untouched_on(const uint8_t *pkt, uint32_t n, const struct xdp_md *ctx)
{
	uint8_t out[2048];
	uint32_t out_len = sizeof(out), ret = 0xdead;
	struct snap before, want = one(UNET_CTR_PASS);

	assert_true(n <= sizeof(out));
	read_snap(&before);
	assert_int_equal(run_prog(pkt, n, ctx, &ret, out, &out_len), 0);
	assert_int_equal(ret, XDP_PASS);
	assert_int_equal(out_len, n);
	assert_memory_equal(out, pkt, n);
	check_delta(&before, &want);
}

static void expect_pass_untouched(const uint8_t *pkt, uint32_t n)
{
	expect_pass_untouched_on(pkt, n, NULL);
}

static void expect_spec(const struct frame_spec *s, uint32_t verdict, const struct snap *want)
{
	uint8_t buf[2048];
	uint32_t n = build(buf, sizeof(buf), s);

	expect_run(buf, n, NULL, verdict, want);
}

/* ---- Setup -------------------------------------------------------------------- */

static int lo_up(void)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int err = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		err = -errno;
	} else {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
			err = -errno;
	}
	close(fd);
	return err;
}

static int load_prog(void)
{
	struct bpf_map *map;
	int err;

	g.skel = unet_xdp_bpf__open();
	if (!g.skel)
		return -errno;
	/* No pinning: the test must not see or leave anything in bpffs. */
	bpf_object__for_each_map(map, g.skel->obj)
	{
		err = bpf_map__set_pin_path(map, NULL);
		if (err)
			return err;
	}
	err = unet_xdp_bpf__load(g.skel);
	if (err)
		return err;
	g.prog_fd = bpf_program__fd(g.skel->progs.unet_xdp_rx);
	return g.prog_fd < 0 ? g.prog_fd : 0;
}

/* The token of the endpoint incarnation the fixture put in slot ep. */
static uint64_t ep_token(uint32_t ep)
{
	return ep == EP_SOCK ? TOKEN_SOCK : ep == EP_NOSOCK ? TOKEN_NOSOCK : 0;
}

/* A channel owned by the incarnation now in slot ep (as the library
 * makes them: owner_token = that slot's token). */
static int add_channel(uint32_t tag, const uint8_t mac[6], uint16_t peer_tag, uint32_t ep)
{
	struct unet_channel_val v = { .peer_tag = peer_tag, .endpoint = ep, .owner_pid = 1,
				      .owner_token = ep_token(ep) };

	memcpy(v.peer_mac, mac, 6);
	return bpf_map_update_elem(bpf_map__fd(g.skel->maps.unet_channels), &tag, &v, BPF_ANY) ? -errno
											  : 0;
}

static int add_endpoint(uint32_t slot, uint64_t token)
{
	struct unet_endpoint_val v = { .pid = (uint32_t)getpid(), .nqueues = 1, .token = token };

	snprintf(v.comm, sizeof(v.comm), "test_xdp_prog");
	return bpf_map_update_elem(bpf_map__fd(g.skel->maps.unet_endpoints), &slot, &v, BPF_ANY) ? -errno
												  : 0;
}

/* ---- UDP/IPv4 fixture ----------------------------------------------------
 * 10.0.0.1:6000 -> EP_SOCK (any source); 10.0.0.1:6001 -> EP_SOCK, only
 * from 10.0.0.9:7000; 10.0.0.1:6002 -> EP_NOSOCK.  Addresses: 10.0.0.1 is
 * the kernel's (ARP passed), 10.0.0.7 U-Net's (ARP to EP_SOCK), 10.0.0.8
 * U-Net's, registered by EP_NOSOCK (an endpoint with no socket at all: a
 * SIGKILLed owner, not yet reclaimed).
 */
#define UDP_DST 0x0a000001u
#define UDP_SRC 0x0a000002u
#define UDP_UNET_ADDR 0x0a000007u
#define UDP_DEAD_ADDR 0x0a000008u /* U-Net's, registered by EP_NOSOCK */

/* UDP ports and addresses owned by the incarnation now in slot ep (as
 * the library makes them), or by another one (token). */
static int add_udp_tok(uint32_t addr, uint16_t port, uint32_t ep, uint32_t raddr, uint16_t rport,
		       uint64_t token)
{
	struct unet_udp_key k = { .addr = htonl(addr), .port = htons(port) };
	struct unet_udp_val v = { .endpoint = ep, .remote_addr = raddr ? htonl(raddr) : 0,
				  .remote_port = htons(rport), .owner_pid = 1, .owner_token = token };

	return bpf_map_update_elem(bpf_map__fd(g.skel->maps.unet_udp_ports), &k, &v, BPF_ANY) ? -errno : 0;
}

static int add_udp(uint32_t addr, uint16_t port, uint32_t ep, uint32_t raddr, uint16_t rport)
{
	return add_udp_tok(addr, port, ep, raddr, rport, ep_token(ep));
}

static int add_udp_addr_tok(uint32_t addr, uint32_t ep, uint32_t flags, uint64_t token)
{
	__be32 k = htonl(addr);
	struct unet_udp_addr_val v = { .endpoint = ep, .flags = flags, .owner_token = token };

	return bpf_map_update_elem(bpf_map__fd(g.skel->maps.unet_udp_addrs), &k, &v, BPF_ANY) ? -errno : 0;
}

static int add_udp_addr(uint32_t addr, uint32_t ep, uint32_t flags)
{
	return add_udp_addr_tok(addr, ep, flags, ep_token(ep));
}

/* TCP ports: 10.0.0.1:8000 -> EP_SOCK, 10.0.0.1:8002 -> EP_NOSOCK. */
static int add_tcp(uint32_t addr, uint16_t port, uint32_t ep)
{
	struct unet_tcp_key k = { .addr = htonl(addr), .port = htons(port) };
	struct unet_tcp_val v = { .endpoint = ep, .owner_pid = 1, .owner_token = ep_token(ep) };

	return bpf_map_update_elem(bpf_map__fd(g.skel->maps.unet_tcp_ports), &k, &v, BPF_ANY) ? -errno : 0;
}

static int add_udp_fixture(void)
{
	if (add_tcp(UDP_DST, 8000, EP_SOCK) || add_tcp(UDP_DST, 8002, EP_NOSOCK))
		return -1;
	return add_udp(UDP_DST, 6000, EP_SOCK, 0, 0) ||
	       add_udp(UDP_DST, 6001, EP_SOCK, 0x0a000009, 7000) ||
	       add_udp(UDP_DST, 6002, EP_NOSOCK, 0, 0) || add_udp_addr(UDP_DST, EP_SOCK, 0) ||
	       add_udp_addr(UDP_UNET_ADDR, EP_SOCK, UNET_UDP_ADDR_ARP) ||
	       add_udp_addr(UDP_DEAD_ADDR, EP_NOSOCK, UNET_UDP_ADDR_ARP);
}

/* AF_XDP socket on lo queue 0, copy mode, no XDP program of libxdp's own;
 * put into the XSKMAP at (EP_SOCK, 0) and at (EP_SOCK + 1, 0).  The second
 * slot is what an unchecked queue index >= UNET_MAX_QUEUES of EP_SOCK would
 * alias to, so the queue-bound case proves the bound is enforced. */
static void setup_xsk(void)
{
	struct xsk_socket_config cfg = {
		.rx_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
		.tx_size = XSK_RING_PROD__DEFAULT_NUM_DESCS,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_COPY,
	};
	int xsks_fd = bpf_map__fd(g.skel->maps.unet_xsks);
	uint32_t idx;
	int err, fd;

	g.umem_size = (size_t)NFRAMES * XSK_UMEM__DEFAULT_FRAME_SIZE;
	g.umem_area = mmap(NULL, g.umem_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g.umem_area == MAP_FAILED) {
		g.umem_area = NULL;
		snprintf(g.xsk_why, sizeof(g.xsk_why), "mmap UMEM: %s", strerror(errno));
		return;
	}
	err = xsk_umem__create(&g.umem, g.umem_area, g.umem_size, &g.fill, &g.comp, NULL);
	if (err) {
		g.umem = NULL;
		snprintf(g.xsk_why, sizeof(g.xsk_why), "xsk_umem__create: %s", strerror(-err));
		return;
	}
	err = xsk_socket__create(&g.xsk, "lo", 0, g.umem, &g.rx, &g.tx, &cfg);
	if (err) {
		g.xsk = NULL;
		snprintf(g.xsk_why, sizeof(g.xsk_why), "xsk_socket__create(lo, queue 0, copy): %s",
			 strerror(-err));
		return;
	}
	fd = xsk_socket__fd(g.xsk);
	idx = UNET_XSK_INDEX(EP_SOCK, 0);
	if (bpf_map_update_elem(xsks_fd, &idx, &fd, BPF_ANY)) {
		snprintf(g.xsk_why, sizeof(g.xsk_why), "XSKMAP update: %s", strerror(errno));
		return;
	}
	idx = UNET_XSK_INDEX(EP_SOCK + 1, 0);
	if (bpf_map_update_elem(xsks_fd, &idx, &fd, BPF_ANY)) {
		snprintf(g.xsk_why, sizeof(g.xsk_why), "XSKMAP update: %s", strerror(errno));
		return;
	}
	g.xsk_ok = true;
}

/* A veth with 20 rx queues in our private namespace, so a run can claim a
 * queue index >= UNET_MAX_QUEUES (lo has only one queue and
 * BPF_PROG_TEST_RUN rejects an index the device does not have).  The
 * namespace is ours alone, so fixed names cannot collide. */
static void setup_multiqueue_dev(void)
{
	int st = system("ip link add unetq0 numrxqueues 20 numtxqueues 20 type veth "
			"peer name unetq1 numrxqueues 20 numtxqueues 20 >/dev/null 2>&1");

	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return;
	g.mq_ifindex = (int)if_nametoindex("unetq0");
}

static int add_chan_fixture(void);
static int add_chan6_fixture(void);
static int add_udp6_fixture(void);
static int add_tcp6_fixture(void);

static int group_setup(void **state)
{
	(void)state;
	if (geteuid() != 0) {
		snprintf(g.skip_why, sizeof(g.skip_why),
			 "not root: loading and test-running XDP programs needs CAP_BPF, "
			 "CAP_NET_ADMIN and a private network namespace");
		return 0;
	}
	if (unshare(CLONE_NEWNET) < 0) {
		snprintf(g.skip_why, sizeof(g.skip_why), "unshare(CLONE_NEWNET): %s", strerror(errno));
		return 0;
	}
	g.root = true;
	if (lo_up() < 0)
		snprintf(g.xsk_why, sizeof(g.xsk_why), "cannot bring lo up");

	g.ncpus = libbpf_num_possible_cpus();
	g.load_err = g.ncpus < 0 ? g.ncpus : load_prog();
	if (g.load_err)
		return 0;

	if (add_endpoint(EP_SOCK, TOKEN_SOCK) || add_endpoint(EP_NOSOCK, TOKEN_NOSOCK) ||
	    add_channel(TAG_GOOD, PEER_MAC, PEER_TAG, EP_SOCK) ||
	    add_channel(TAG_NOSOCK, PEER_MAC, PEER_TAG_NOSOCK, EP_NOSOCK)) {
		g.load_err = -EIO;
		return 0;
	}
	if (add_udp_fixture() || add_chan_fixture() || add_chan6_fixture() || add_udp6_fixture() ||
	    add_tcp6_fixture()) {
		g.load_err = -EIO;
		return 0;
	}
	if (!g.xsk_why[0])
		setup_xsk();
	setup_multiqueue_dev();
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	/* The namespace, and the veth in it, go with the process. */
	if (g.xsk)
		xsk_socket__delete(g.xsk);
	if (g.umem)
		xsk_umem__delete(g.umem);
	if (g.umem_area)
		munmap(g.umem_area, g.umem_size);
	unet_xdp_bpf__destroy(g.skel);
	return 0;
}

/* ---- Cases -------------------------------------------------------------------- */

/* ---- Routable channels: U-Net inside UDP/IPv4 (bpf/xdp_chan.h) ----------------- */

#define CHAN_PEER_ADDR 0x0a000102u /* 10.0.1.2 */
#define CHAN_PEER_PORT 50001
#define CHAN_PEER_TAG 0x0066

/* TAG_CHAN: EP_SOCK's routable channel to CHAN_PEER_ADDR:CHAN_PEER_PORT,
 * peer tag CHAN_PEER_TAG; the port is the default (unet_chan_cfg left 0). */
static int add_chan_fixture(void)
{
	struct unet_channel_val v = { .peer_tag = CHAN_PEER_TAG, .endpoint = EP_SOCK,
				      .owner_pid = 1, .owner_token = TOKEN_SOCK,
				      .flags = UNET_CHAN_F_UDP4, .peer_port = htons(CHAN_PEER_PORT) };
	uint32_t addr = htonl(CHAN_PEER_ADDR), tag = TAG_CHAN;

	memcpy(v.peer_mac, OTHER_MAC, 6);
	memcpy(v.peer_addr, &addr, 4);
	return bpf_map_update_elem(bpf_map__fd(g.skel->maps.unet_channels), &tag, &v, BPF_ANY) ? -errno
											  : 0;
}

struct chan_spec {
	uint32_t saddr;
	uint32_t daddr;	     /* 0: UDP_DST */
	uint16_t sport, dport;
	uint8_t version, ihl;
	uint16_t frag;	     /* frag_off field */
	int tot_len_adj;     /* added to the right total length */
	int udp_len_adj;     /* added to the right UDP length */
	int unet_len_adj;    /* added to the right U-Net len */
	uint16_t csum;
	uint16_t dst_tag, src_tag;
	uint16_t payload;
	uint16_t pad;	     /* Ethernet padding after the datagram */
	uint32_t cut;	     /* if non-zero, the frame ends here */
};

static struct chan_spec chan_good(void)
{
	return (struct chan_spec){ .saddr = CHAN_PEER_ADDR, .sport = CHAN_PEER_PORT,
				   .dport = UNET_CHAN_PORT_DEFAULT, .version = 4, .ihl = 5,
				   .dst_tag = TAG_CHAN, .src_tag = CHAN_PEER_TAG, .payload = 40 };
}

/* What a routable channel's frame carries after its UDP header, over
 * IPv4 (build_chan) and IPv6 (build_chan6) alike: the U-Net header at uh
 * (its len the payload's plus unet_len_adj), payload bytes of a pattern,
 * pad bytes of Ethernet padding.  Returns the frame's length, or cut if
 * that is shorter and not 0. */
static uint32_t put_chan_unet(uint8_t *buf, uint32_t uh, uint16_t dst_tag, uint16_t src_tag,
			      int unet_len_adj, uint16_t payload, uint16_t pad, uint32_t cut)
{
	uint32_t n = uh + 8 + payload + pad;

	buf[uh] = UNET_WIRE_VERSION;
	put16(buf + uh + 2, dst_tag);
	put16(buf + uh + 4, src_tag);
	put16(buf + uh + 6, (uint16_t)(payload + unet_len_adj));
	for (uint32_t i = 0; i < payload; i++)
		buf[uh + 8 + i] = (uint8_t)(0x50 + i);
	return cut && cut < n ? cut : n;
}

static uint32_t build_chan(uint8_t *buf, size_t cap, const struct chan_spec *c)
{
	uint32_t hl = c->ihl * 4u, ip = 14, udp, uh;
	uint32_t tot = hl + 8 + 8 + c->payload;

	assert_true(cap >= ip + 60 + 16 + (size_t)c->payload + c->pad);
	memset(buf, 0, cap);
	memcpy(buf, LOCAL_MAC, 6);
	memcpy(buf + 6, OTHER_MAC, 6);
	put16(buf + 12, 0x0800);
	buf[ip] = (uint8_t)(c->version << 4 | c->ihl);
	put16(buf + ip + 2, (uint16_t)(tot + c->tot_len_adj));
	put16(buf + ip + 6, c->frag);
	buf[ip + 8] = 64;
	buf[ip + 9] = 17;
	put16(buf + ip + 12, (uint16_t)(c->saddr >> 16));
	put16(buf + ip + 14, (uint16_t)c->saddr);
	put16(buf + ip + 16, (uint16_t)((c->daddr ? c->daddr : UDP_DST) >> 16));
	put16(buf + ip + 18, (uint16_t)(c->daddr ? c->daddr : UDP_DST));
	udp = ip + hl;
	put16(buf + udp, c->sport);
	put16(buf + udp + 2, c->dport);
	put16(buf + udp + 4, (uint16_t)(tot - hl + c->udp_len_adj));
	put16(buf + udp + 6, c->csum);
	uh = udp + 8;
	return put_chan_unet(buf, uh, c->dst_tag, c->src_tag, c->unet_len_adj, c->payload, c->pad,
			     c->cut);
}

static void expect_chan(const struct chan_spec *c, uint32_t verdict, const struct snap *want)
{
	uint8_t buf[2048];
	uint32_t n = build_chan(buf, sizeof(buf), c);

	expect_run(buf, n, NULL, verdict, want);
}

/* A routable channel's frame from its peer's address and port, with its
 * tag, is delivered and counted both as delivered and chan_delivered. */
static void test_chan_good_delivered(void **state)
{
	struct chan_spec c = chan_good();
	struct snap want = one(UNET_CTR_DELIVERED);

	(void)state;
	need_xsk();
	want.ifc[UNET_CTR_CHAN_DELIVERED] = 1;
	want.ch[W_CHAN].delivered = 1;
	want.ch[W_CHAN].delivered_bytes = 40;
	expect_chan(&c, XDP_REDIRECT, &want);
	/* Ethernet padding after the datagram is not payload, and allowed. */
	c.payload = 1;
	c.pad = 17;
	want.ch[W_CHAN].delivered_bytes = 1;
	expect_chan(&c, XDP_REDIRECT, &want);
}

/* Protection: another source address, another source port, another peer
 * tag -- each dropped as wrong_src on the channel. */
static void test_chan_spoofed_source_dropped(void **state)
{
	struct chan_spec c = chan_good();
	struct snap want = one(UNET_CTR_DROP_WRONG_SRC);

	(void)state;
	need_prog();
	want.ch[W_CHAN].drop_wrong_src = 1;
	c.saddr = CHAN_PEER_ADDR + 1;
	expect_chan(&c, XDP_DROP, &want);
	c = chan_good();
	c.sport = CHAN_PEER_PORT + 1;
	expect_chan(&c, XDP_DROP, &want);
	c = chan_good();
	c.src_tag = CHAN_PEER_TAG + 1;
	expect_chan(&c, XDP_DROP, &want);
	/* A tag that names no channel. */
	c = chan_good();
	c.dst_tag = TAG_UNKNOWN;
	want = one(UNET_CTR_DROP_UNKNOWN_TAG);
	expect_chan(&c, XDP_DROP, &want);
}

/* A raw frame for a routable channel (even from the MAC its sends go to)
 * and a UDP-encapsulated one for a raw channel: drop_chan_kind. */
static void test_chan_kind_mismatch_dropped(void **state)
{
	struct frame_spec s = good_spec();
	struct chan_spec c = chan_good();
	struct snap want = one(UNET_CTR_DROP_CHAN_KIND);

	(void)state;
	need_prog();
	s.dst_tag = TAG_CHAN;
	s.src_tag = CHAN_PEER_TAG;
	s.src_mac = OTHER_MAC;
	want.ch[W_CHAN].drop_wrong_src = 1;
	expect_spec(&s, XDP_DROP, &want);
	want = one(UNET_CTR_DROP_CHAN_KIND);
	want.ch[W_GOOD].drop_wrong_src = 1;
	c.dst_tag = TAG_GOOD;
	c.src_tag = PEER_TAG;
	expect_chan(&c, XDP_DROP, &want);
}

/* The IP and UDP header checks, each with its own counter. */
static void test_chan_bad_headers_dropped(void **state)
{
	struct chan_spec c;
	struct snap want;

	(void)state;
	need_prog();
	/* IP options */
	c = chan_good();
	c.ihl = 6;
	want = one(UNET_CTR_DROP_CHAN_IP);
	expect_chan(&c, XDP_DROP, &want);
	/* total length past the frame, and shorter than IP + UDP */
	c = chan_good();
	c.tot_len_adj = 1;
	expect_chan(&c, XDP_DROP, &want);
	c = chan_good();
	c.tot_len_adj = -(int)(8 + 8 + c.payload + 1);
	expect_chan(&c, XDP_DROP, &want);
	/* truncated UDP header (ports present, length missing) */
	c = chan_good();
	c.cut = 14 + 20 + 6;
	expect_chan(&c, XDP_DROP, &want);
	/* a first fragment (MF) */
	c = chan_good();
	c.frag = 0x2000;
	want = one(UNET_CTR_DROP_CHAN_FRAG);
	expect_chan(&c, XDP_DROP, &want);
	/* UDP length not the IP payload's, either way */
	c = chan_good();
	c.udp_len_adj = -1;
	want = one(UNET_CTR_DROP_CHAN_UDPLEN);
	expect_chan(&c, XDP_DROP, &want);
	c.udp_len_adj = 1;
	expect_chan(&c, XDP_DROP, &want);
	/* U-Net len not the rest of the datagram */
	c = chan_good();
	c.unet_len_adj = -1;
	expect_chan(&c, XDP_DROP, &want);
	c.unet_len_adj = 1;
	expect_chan(&c, XDP_DROP, &want);
	/* a checksum: we send 0 and take nothing else */
	c = chan_good();
	c.csum = 0x1234;
	want = one(UNET_CTR_DROP_CHAN_CSUM);
	expect_chan(&c, XDP_DROP, &want);
	/* a datagram too short for the U-Net header */
	c = chan_good();
	c.payload = 0;
	c.cut = 14 + 20 + 8 + 4;
	c.tot_len_adj = -4;
	c.udp_len_adj = -4;
	want = one(UNET_CTR_DROP_MALFORMED);
	expect_chan(&c, XDP_DROP, &want);
	/* U-Net version inside */
	c = chan_good();
	{
		uint8_t buf[256];
		uint32_t n = build_chan(buf, sizeof(buf), &c);

		buf[14 + 20 + 8] = UNET_WIRE_VERSION + 1;
		want = one(UNET_CTR_DROP_VERSION);
		expect_run(buf, n, NULL, XDP_DROP, &want);
	}
}

/* Not ours, passed untouched: another UDP port, a non-first fragment (no
 * UDP header to tell), IPv4 of another version field. */
static void test_chan_other_traffic_passed(void **state)
{
	struct chan_spec c;
	uint8_t buf[256];

	(void)state;
	need_prog();
	c = chan_good();
	c.dport = UNET_CHAN_PORT_DEFAULT + 1;
	expect_pass_untouched(buf, build_chan(buf, sizeof(buf), &c));
	c = chan_good();
	c.frag = 0x0010;
	expect_pass_untouched(buf, build_chan(buf, sizeof(buf), &c));
}

/* The port is the interface's (unet_chan_cfg): once another is set, the
 * default is not ours any more and the new one is. */
static void test_chan_port_configurable(void **state)
{
	int fd;
	uint32_t key = 0;
	struct unet_chan_cfg cfg = { .udp_port = 40000 }, zero = { 0 };
	struct chan_spec c = chan_good();
	uint8_t buf[256];
	struct snap want = one(UNET_CTR_DROP_CHAN_CSUM);

	(void)state;
	need_prog();
	fd = bpf_map__fd(g.skel->maps.unet_chan_cfg);
	assert_int_equal(bpf_map_update_elem(fd, &key, &cfg, BPF_ANY), 0);
	c.csum = 1; /* a verdict that needs no socket */
	expect_pass_untouched(buf, build_chan(buf, sizeof(buf), &c));
	c.dport = 40000;
	expect_chan(&c, XDP_DROP, &want);
	assert_int_equal(bpf_map_update_elem(fd, &key, &zero, BPF_ANY), 0);
}


/* ---- Routable channels over IPv6 (bpf/xdp_chan6.h) ------------------------------ */

/* fd00:1::2, the peer of TAG_CHAN6; frames go to fd00:99::1 (no U-Net
 * UDP address: anything not the channel's is the kernel's). */
static const uint8_t CHAN6_PEER[16] = { 0xfd, 0, 0, 1, [15] = 2 };
static const uint8_t CHAN6_DST[16] = { 0xfd, 0, 0, 0x99, [15] = 1 };

/* TAG_CHAN6: EP_SOCK's routable IPv6 channel to CHAN6_PEER port
 * CHAN_PEER_PORT, peer tag CHAN_PEER_TAG. */
static int add_chan6_fixture(void)
{
	struct unet_channel_val v = { .peer_tag = CHAN_PEER_TAG, .endpoint = EP_SOCK,
				      .owner_pid = 1, .owner_token = ep_token(EP_SOCK),
				      .flags = UNET_CHAN_F_UDP6, .peer_port = htons(CHAN_PEER_PORT) };
	uint32_t tag = TAG_CHAN6;

	memcpy(v.peer_mac, OTHER_MAC, 6);
	memcpy(v.peer_addr, CHAN6_PEER, 16);
	return bpf_map_update_elem(bpf_map__fd(g.skel->maps.unet_channels), &tag, &v, BPF_ANY) ? -errno
											  : 0;
}

struct chan6_spec {
	uint8_t saddr[16];
	const uint8_t *daddr; /* NULL: CHAN6_DST */
	uint16_t sport, dport;
	uint8_t version;
	uint8_t ext;	      /* an extension header before UDP: 0 none, else its
			       * type (0 hop-by-hop, 44 fragment, ...) */
	uint16_t frag_off;    /* the fragment header's offset field */
	int plen_adj;	      /* added to the right payload length */
	int udp_len_adj;      /* added to the right UDP length */
	int unet_len_adj;     /* added to the right U-Net len */
	uint16_t csum;
	uint16_t dst_tag, src_tag;
	uint16_t payload;
	uint16_t pad;	      /* Ethernet padding after the datagram */
	uint32_t cut;	      /* if non-zero, the frame ends here */
};

static struct chan6_spec chan6_good(void)
{
	struct chan6_spec c = { .sport = CHAN_PEER_PORT, .dport = UNET_CHAN_PORT_DEFAULT,
				.version = 6, .csum = 0xbeef, /* XDP checks only that it is not 0 */
				.dst_tag = TAG_CHAN6, .src_tag = CHAN_PEER_TAG, .payload = 40 };

	memcpy(c.saddr, CHAN6_PEER, 16);
	return c;
}

static uint32_t build_chan6(uint8_t *buf, size_t cap, const struct chan6_spec *c)
{
	uint32_t ip = 14, ext = c->ext || c->frag_off ? 8 : 0, udp = ip + 40 + ext, uh = udp + 8;
	uint32_t ulen = 8 + 8 + c->payload;

	assert_true(cap >= uh + 8 + (size_t)c->payload + c->pad);
	memset(buf, 0, cap);
	memcpy(buf, LOCAL_MAC, 6);
	memcpy(buf + 6, OTHER_MAC, 6);
	put16(buf + 12, 0x86dd);
	buf[ip] = (uint8_t)(c->version << 4);
	put16(buf + ip + 4, (uint16_t)(ext + ulen + c->plen_adj));
	buf[ip + 6] = ext ? c->ext : 17;
	buf[ip + 7] = 64;
	memcpy(buf + ip + 8, c->saddr, 16);
	memcpy(buf + ip + 24, c->daddr ? c->daddr : CHAN6_DST, 16);
	if (ext) {
		buf[ip + 40] = 17; /* next: UDP; length 0 (8 bytes) */
		put16(buf + ip + 42, c->frag_off);
	}
	put16(buf + udp, c->sport);
	put16(buf + udp + 2, c->dport);
	put16(buf + udp + 4, (uint16_t)(ulen + c->udp_len_adj));
	put16(buf + udp + 6, c->csum);
	return put_chan_unet(buf, uh, c->dst_tag, c->src_tag, c->unet_len_adj, c->payload, c->pad,
			     c->cut);
}

static void expect_chan6(const struct chan6_spec *c, uint32_t verdict, const struct snap *want)
{
	uint8_t buf[2048];
	uint32_t n = build_chan6(buf, sizeof(buf), c);

	expect_run(buf, n, NULL, verdict, want);
}

/* A routable IPv6 channel's frame from its peer's address and port, with
 * its tag, is delivered and counted both as delivered and chan_delivered;
 * Ethernet padding after the datagram is not payload. */
static void test_chan6_good_delivered(void **state)
{
	struct chan6_spec c = chan6_good();
	struct snap want = one(UNET_CTR_DELIVERED);

	(void)state;
	need_xsk();
	want.ifc[UNET_CTR_CHAN_DELIVERED] = 1;
	want.ch[W_CHAN6].delivered = 1;
	want.ch[W_CHAN6].delivered_bytes = 40;
	expect_chan6(&c, XDP_REDIRECT, &want);
	c.payload = 1;
	c.pad = 17;
	want.ch[W_CHAN6].delivered_bytes = 1;
	expect_chan6(&c, XDP_REDIRECT, &want);
}

/* Protection over all 128 bits of the source address, the source port
 * and the peer tag: each lie dropped as wrong_src on the channel. */
static void test_chan6_spoofed_source_dropped(void **state)
{
	struct chan6_spec c;
	struct snap want = one(UNET_CTR_DROP_WRONG_SRC);

	(void)state;
	need_prog();
	want.ch[W_CHAN6].drop_wrong_src = 1;
	for (int byte = 0; byte < 16; byte++) {
		c = chan6_good();
		c.saddr[byte] ^= 0x01;
		expect_chan6(&c, XDP_DROP, &want);
	}
	/* the IPv4 peer's address in the first four bytes, the rest 0 */
	c = chan6_good();
	memset(c.saddr, 0, 16);
	put16(c.saddr, (uint16_t)(CHAN_PEER_ADDR >> 16));
	put16(c.saddr + 2, (uint16_t)CHAN_PEER_ADDR);
	expect_chan6(&c, XDP_DROP, &want);
	c = chan6_good();
	c.sport = CHAN_PEER_PORT + 1;
	expect_chan6(&c, XDP_DROP, &want);
	c = chan6_good();
	c.src_tag = CHAN_PEER_TAG + 1;
	expect_chan6(&c, XDP_DROP, &want);
	c = chan6_good();
	c.dst_tag = TAG_UNKNOWN;
	want = one(UNET_CTR_DROP_UNKNOWN_TAG);
	expect_chan6(&c, XDP_DROP, &want);
}

/* An IPv6 frame for an IPv4 channel, an IPv4 one for the IPv6 channel, a
 * raw frame for it: drop_chan_kind, whatever their addresses say. */
static void test_chan6_kind_mismatch_dropped(void **state)
{
	struct chan6_spec c6 = chan6_good();
	struct chan_spec c4 = chan_good();
	struct frame_spec s = good_spec();
	struct snap want = one(UNET_CTR_DROP_CHAN_KIND);

	(void)state;
	need_prog();
	want.ch[W_CHAN].drop_wrong_src = 1;
	c6.dst_tag = TAG_CHAN;
	expect_chan6(&c6, XDP_DROP, &want);
	want = one(UNET_CTR_DROP_CHAN_KIND);
	want.ch[W_CHAN6].drop_wrong_src = 1;
	c4.dst_tag = TAG_CHAN6;
	expect_chan(&c4, XDP_DROP, &want);
	s.dst_tag = TAG_CHAN6;
	s.src_tag = CHAN_PEER_TAG;
	s.src_mac = OTHER_MAC;
	expect_spec(&s, XDP_DROP, &want);
}

/* The IPv6 and UDP header checks, each with its counter. */
static void test_chan6_bad_headers_dropped(void **state)
{
	struct chan6_spec c;
	struct snap want;

	(void)state;
	need_prog();
	/* payload length past the frame, shorter than UDP's header */
	c = chan6_good();
	c.plen_adj = 1;
	want = one(UNET_CTR_DROP_CHAN_IP);
	expect_chan6(&c, XDP_DROP, &want);
	c = chan6_good();
	c.plen_adj = -(int)(8 + 8 + c.payload) + 7;
	expect_chan6(&c, XDP_DROP, &want);
	/* truncated UDP header (ports present, length missing) */
	c = chan6_good();
	c.cut = 14 + 40 + 6;
	expect_chan6(&c, XDP_DROP, &want);
	/* UDP length not the payload length, either way */
	c = chan6_good();
	c.udp_len_adj = -1;
	want = one(UNET_CTR_DROP_CHAN_UDPLEN);
	expect_chan6(&c, XDP_DROP, &want);
	c.udp_len_adj = 1;
	expect_chan6(&c, XDP_DROP, &want);
	/* a payload length shorter than the datagram, UDP's agreeing */
	c = chan6_good();
	c.plen_adj = -1;
	c.udp_len_adj = -1;
	expect_chan6(&c, XDP_DROP, &want);
	/* U-Net len not the rest of the datagram */
	c = chan6_good();
	c.unet_len_adj = -1;
	expect_chan6(&c, XDP_DROP, &want);
	c.unet_len_adj = 1;
	expect_chan6(&c, XDP_DROP, &want);
	/* no checksum: IPv6 forbids it */
	c = chan6_good();
	c.csum = 0;
	want = one(UNET_CTR_DROP_CHAN_CSUM);
	expect_chan6(&c, XDP_DROP, &want);
	/* a datagram too short for the U-Net header */
	c = chan6_good();
	c.payload = 0;
	c.cut = 14 + 40 + 8 + 4;
	c.plen_adj = -4;
	c.udp_len_adj = -4;
	want = one(UNET_CTR_DROP_MALFORMED);
	expect_chan6(&c, XDP_DROP, &want);
	/* U-Net version inside */
	c = chan6_good();
	{
		uint8_t buf[256];
		uint32_t n = build_chan6(buf, sizeof(buf), &c);

		buf[14 + 40 + 8] = UNET_WIRE_VERSION + 1;
		want = one(UNET_CTR_DROP_VERSION);
		expect_run(buf, n, NULL, XDP_DROP, &want);
	}
}

/* Extension headers: UDP to the channel port behind a hop-by-hop,
 * destination-options or first fragment header is dropped and counted
 * (drop_ip6_exthdr), even from the channel's peer with its tags; a later
 * fragment (no UDP header) and UDP to another port behind one are the
 * kernel's, untouched. */
static void test_chan6_exthdr(void **state)
{
	struct chan6_spec c;
	struct snap want = one(UNET_CTR_DROP_IP6_EXTHDR);
	uint8_t buf[256];

	(void)state;
	need_prog();
	c = chan6_good();
	c.ext = 60; /* destination options */
	expect_chan6(&c, XDP_DROP, &want);
	c.ext = 44; /* a first fragment, M set */
	c.frag_off = 0x0001;
	expect_chan6(&c, XDP_DROP, &want);
	c.frag_off = 0x0008 | 0x0001; /* offset 1 (8 bytes): no UDP header */
	expect_pass_untouched(buf, build_chan6(buf, sizeof(buf), &c));
	c = chan6_good();
	c.ext = 60;
	c.dport = UNET_CHAN_PORT_DEFAULT + 1;
	expect_pass_untouched(buf, build_chan6(buf, sizeof(buf), &c));
}

/* Not ours, passed untouched: another UDP port; a version field that is
 * not 6. */
static void test_chan6_other_traffic_passed(void **state)
{
	struct chan6_spec c;
	uint8_t buf[256];

	(void)state;
	need_prog();
	c = chan6_good();
	c.dport = UNET_CHAN_PORT_DEFAULT + 1;
	expect_pass_untouched(buf, build_chan6(buf, sizeof(buf), &c));
	c = chan6_good();
	c.version = 4;
	expect_pass_untouched(buf, build_chan6(buf, sizeof(buf), &c));
}

/* ---- Transit: the destination address (bpf/xdp_dest.h) ------------------------- */

/*
 * A host that forwards: unetq0 (the veth of setup_multiqueue_dev) with
 * forwarding on, 10.9.0.1/24 and fd00:9::1/64 its own, 10.8.0.1/24 and
 * fd00:8::1/64 on its peer unetq1 (another interface of this host), and
 * reject routes to 203.0.113.0/24 and 2001:db8:66::/48.  Frames are run
 * as arriving on unetq0.  Taken down again by transit_teardown, so the
 * other cases see the namespace as before.
 */
#define TR_OURS 0x0a090001u	 /* 10.9.0.1 */
#define TR_FOREIGN 0x0a09004du	 /* 10.9.0.77: on the link, another host's */
#define TR_SUBNET_BCAST 0x0a0900ffu /* 10.9.0.255 */
#define TR_OTHER_IF 0x0a080001u	 /* 10.8.0.1, on unetq1 */
#define TR_REJECTED 0xcb007105u	 /* 203.0.113.5 */
#define TR_NO_ROUTE 0xc000024du	 /* 192.0.2.77: the namespace has no route there */
static const uint8_t TR6_OURS[16] = { 0xfd, 0, 0, 9, [15] = 1 };
static const uint8_t TR6_FOREIGN[16] = { 0xfd, 0, 0, 9, [15] = 0x77 };
static const uint8_t TR6_OTHER_IF[16] = { 0xfd, 0, 0, 8, [15] = 1 };
static const uint8_t TR6_REJECTED[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0x66, [15] = 5 };
static const uint8_t TR6_LINK_LOCAL[16] = { 0xfe, 0x80, [15] = 0x77 };
static const uint8_t TR6_MCAST[16] = { 0xff, 0x02, [15] = 1 };
static const uint8_t TR6_ANYCAST[16] = { 0xfd, 0, 0, 9 }; /* fd00:9::, a router's subnet anycast */

static int sh(const char *cmd)
{
	int st = system(cmd);

	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int set_forwarding(const char *family, const char *ifname, int on)
{
	char path[128];
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "/proc/sys/net/%s/conf/%s/forwarding", family, ifname);
	f = fopen(path, "w");
	if (!f)
		return -1;
	err = fprintf(f, "%d\n", on) < 0;
	return fclose(f) || err ? -1 : 0;
}

static void transit_setup(struct xdp_md *ctx)
{
	need_prog();
	if (!g.mq_ifindex) {
		print_message("SKIP: cannot create a veth (ip link add ... type veth)\n");
		skip();
	}
	/* what a failed case before may have left */
	(void)sh("{ ip addr flush dev unetq0; ip addr flush dev unetq1; "
		 "ip route del prohibit 203.0.113.0/24; ip -6 route del prohibit 2001:db8:66::/48; "
		 "ip route del default; ip -6 route del default; "
		 "for f in '' -6; do for t in 100 101 102; do "
		 "ip $f rule del pref $t; ip $f route flush table $t; done; done; "
		 "sysctl -qw net.ipv4.conf.all.route_localnet=0 net.ipv4.conf.unetq0.route_localnet=0 "
		 "net.ipv4.conf.all.bc_forwarding=0 net.ipv4.conf.unetq0.bc_forwarding=0 "
		 "net.ipv4.conf.unetq1.bc_forwarding=0; "
		 "} >/dev/null 2>&1");
	if (sh("ip link set unetq0 up && ip link set unetq1 up && "
	       "ip addr add 10.9.0.1/24 dev unetq0 && ip addr add 10.8.0.1/24 dev unetq1 && "
	       "ip addr add fd00:9::1/64 dev unetq0 nodad && "
	       "ip addr add fd00:8::1/64 dev unetq1 nodad && "
	       "ip route add prohibit 203.0.113.0/24 && ip -6 route add prohibit 2001:db8:66::/48") ||
	    set_forwarding("ipv4", "unetq0", 1) || set_forwarding("ipv6", "unetq0", 1))
		fail_msg("cannot set up the forwarding veth (ip addr/route, forwarding sysctls)");
	*ctx = (struct xdp_md){ .ingress_ifindex = (uint32_t)g.mq_ifindex };
}

static void transit_teardown(void)
{
	assert_int_equal(set_forwarding("ipv4", "unetq0", 0), 0);
	assert_int_equal(set_forwarding("ipv6", "unetq0", 0), 0);
	assert_int_equal(sh("ip addr flush dev unetq0 && ip addr flush dev unetq1 && "
			    "ip route del prohibit 203.0.113.0/24 && "
			    "ip -6 route del prohibit 2001:db8:66::/48 && "
			    "ip link set unetq0 down && ip link set unetq1 down"),
			 0);
}

/*
 * IPv4, on the forwarding interface: a channel's frame (its tag, its
 * peer's address, port and tag: everything right) to another host's
 * address is transit -- passed untouched and counted as passed, never
 * delivered or dropped -- and so is one that is malformed too.  To our
 * address, to our address on another interface (the weak host model the
 * kernel follows), to our subnet's broadcast address, to an address with
 * no route and to one a reject route covers (the kernel drops both) the
 * frame is ours as before.  With forwarding off nothing is transit.
 */
static void test_chan_transit_passed(void **state)
{
	struct chan_spec c = chan_good();
	struct snap want = one(UNET_CTR_DROP_WRONG_SRC);
	struct xdp_md ctx;
	uint8_t buf[256];

	(void)state;
	transit_setup(&ctx);
	want.ch[W_CHAN].drop_wrong_src = 1;
	/* ours: a spoofed source port is caught by the channel's check (a
	 * verdict that needs no socket), a good frame delivered */
	c.daddr = TR_OURS;
	c.sport = CHAN_PEER_PORT + 1;
	expect_run(buf, build_chan(buf, sizeof(buf), &c), &ctx, XDP_DROP, &want);
	c.daddr = TR_OTHER_IF;
	expect_run(buf, build_chan(buf, sizeof(buf), &c), &ctx, XDP_DROP, &want);
	c.daddr = TR_SUBNET_BCAST;
	expect_run(buf, build_chan(buf, sizeof(buf), &c), &ctx, XDP_DROP, &want);
	c.daddr = TR_NO_ROUTE; /* the kernel drops it: not transit */
	expect_run(buf, build_chan(buf, sizeof(buf), &c), &ctx, XDP_DROP, &want);
	c.daddr = TR_REJECTED; /* the kernel discards it: not transit */
	expect_run(buf, build_chan(buf, sizeof(buf), &c), &ctx, XDP_DROP, &want);
	if (g.xsk_ok) {
		struct snap del = one(UNET_CTR_DELIVERED);

		c = chan_good();
		c.daddr = TR_OURS;
		del.ifc[UNET_CTR_CHAN_DELIVERED] = 1;
		del.ch[W_CHAN].delivered = 1;
		del.ch[W_CHAN].delivered_bytes = 40;
		expect_run(buf, build_chan(buf, sizeof(buf), &c), &ctx, XDP_REDIRECT, &del);
	}
	/* transit: good or malformed */
	c = chan_good();
	c.daddr = TR_FOREIGN;
	expect_pass_untouched_on(buf, build_chan(buf, sizeof(buf), &c), &ctx);
	c.csum = 0x1234;
	expect_pass_untouched_on(buf, build_chan(buf, sizeof(buf), &c), &ctx);
	c = chan_good();
	c.daddr = TR_FOREIGN;
	c.ihl = 6;
	expect_pass_untouched_on(buf, build_chan(buf, sizeof(buf), &c), &ctx);
	c = chan_good();
	c.daddr = TR_FOREIGN;
	c.frag = 0x2000;
	expect_pass_untouched_on(buf, build_chan(buf, sizeof(buf), &c), &ctx);
	/* forwarding off on the interface: the kernel would drop a frame for
	 * an address it does not have, nothing transits; ours as before */
	assert_int_equal(set_forwarding("ipv4", "unetq0", 0), 0);
	c = chan_good();
	c.daddr = TR_FOREIGN;
	c.sport = CHAN_PEER_PORT + 1;
	expect_run(buf, build_chan(buf, sizeof(buf), &c), &ctx, XDP_DROP, &want);
	transit_teardown();
}

/*
 * Destinations the host keeps whatever its routes say -- multicast,
 * limited broadcast, loopback, 0.0.0.0 (a socket bound to the channel
 * port would receive them) -- are ours, checked and dropped unless
 * delivered, on an interface that forwards and with a default route that
 * would answer "forward" for each (so no lookup may decide them).  And the
 * host's own class E address, a directed broadcast with bc_forwarding on,
 * 127.0.0.1 with route_localnet on: kept by the kernel, ours.  Another
 * host's class E address on the link is forwarded: transit.
 */
static void test_chan_group_destination_ours(void **state)
{
	static const uint32_t dsts[] = { 0xe0000001u, 0xef010203u, 0xffffffffu, 0x7f000001u,
					 0xf0000001u, 0x0a0800ffu };
	struct snap want = one(UNET_CTR_DROP_WRONG_SRC);
	struct chan_spec c;
	struct xdp_md ctx;
	uint8_t buf[256];
	uint32_t n;

	(void)state;
	transit_setup(&ctx);
	if (sh("ip route add default via 10.9.0.77 && ip addr add 240.0.0.1/24 dev unetq0 && "
	       "sysctl -qw net.ipv4.conf.all.route_localnet=1 net.ipv4.conf.unetq0.route_localnet=1 "
	       "net.ipv4.conf.all.bc_forwarding=1 net.ipv4.conf.unetq0.bc_forwarding=1 "
	       "net.ipv4.conf.unetq1.bc_forwarding=1"))
		fail_msg("cannot add the default route, 240.0.0.1 or the forwarding knobs");
	want.ch[W_CHAN].drop_wrong_src = 1;
	for (size_t i = 0; i < sizeof(dsts) / sizeof(dsts[0]); i++) {
		c = chan_good();
		c.daddr = dsts[i];
		c.sport = CHAN_PEER_PORT + 1;
		expect_run(buf, build_chan(buf, sizeof(buf), &c), &ctx, XDP_DROP, &want);
	}
	/* 0.0.0.0 (chan_spec's 0 means UDP_DST: written here), from a real
	 * source and from 0.0.0.0 (the kernel's local broadcast) */
	c = chan_good();
	c.sport = CHAN_PEER_PORT + 1;
	n = build_chan(buf, sizeof(buf), &c);
	memset(buf + 14 + 16, 0, 4);
	expect_run(buf, n, &ctx, XDP_DROP, &want);
	memset(buf + 14 + 12, 0, 4);
	expect_run(buf, n, &ctx, XDP_DROP, &want);
	/* another host's class E address: forwarded like any unicast */
	c = chan_good();
	c.daddr = 0xf0000005u;
	expect_pass_untouched_on(buf, build_chan(buf, sizeof(buf), &c), &ctx);
	assert_int_equal(sh("ip route del default via 10.9.0.77 && "
			    "sysctl -qw net.ipv4.conf.all.route_localnet=0 "
			    "net.ipv4.conf.unetq0.route_localnet=0 net.ipv4.conf.all.bc_forwarding=0 "
			    "net.ipv4.conf.unetq0.bc_forwarding=0 net.ipv4.conf.unetq1.bc_forwarding=0"),
			 0);
	transit_teardown();
}

/* As test_chan_group_destination_ours for IPv6, with a default route out
 * the forwarding veth: multicast, ::, ::1, another host's link-local
 * address are ours. */
static void test_chan6_group_destination_ours(void **state)
{
	static const uint8_t zero[16], lo[16] = { [15] = 1 };
	static const uint8_t *const dsts[] = { TR6_MCAST, zero, lo, TR6_LINK_LOCAL };
	struct snap want = one(UNET_CTR_DROP_WRONG_SRC);
	struct chan6_spec c;
	struct xdp_md ctx;
	uint8_t buf[256];

	(void)state;
	transit_setup(&ctx);
	if (sh("ip -6 route add default via fd00:9::77"))
		fail_msg("cannot add the IPv6 default route");
	want.ch[W_CHAN6].drop_wrong_src = 1;
	for (size_t i = 0; i < sizeof(dsts) / sizeof(dsts[0]); i++) {
		c = chan6_good();
		c.daddr = dsts[i];
		c.sport = CHAN_PEER_PORT + 1;
		expect_run(buf, build_chan6(buf, sizeof(buf), &c), &ctx, XDP_DROP, &want);
	}
	assert_int_equal(sh("ip -6 route del default via fd00:9::77"), 0);
	transit_teardown();
}

/*
 * Policy routing: rules that choose a table by what XDP sees (the IPv4
 * TOS byte, the IPv6 traffic class, UDP and its ports) are judged as the
 * kernel judges them.  10.203/16 (2001:db8:203::/48) is routed out the
 * forwarding veth only for TOS (traffic class) 0x10, 10.204/16
 * (2001:db8:204::/48) only for UDP to the channel port and 10.206/16
 * (2001:db8:206::/48) only from the peer's port: transit.  The same
 * datagram with TOS 0 has no route: ours.  And a local route in a table
 * a rule selects (10.205/16, 2001:db8:205::/48: AnyIP) is ours.
 */
#define TR_TOS_ROUTED 0x0acb0005u	/* 10.203.0.5 */
#define TR_DPORT_ROUTED 0x0acc0005u	/* 10.204.0.5 */
#define TR_RULE_LOCAL 0x0acd0005u	/* 10.205.0.5 */
#define TR_SPORT_ROUTED 0x0ace0005u	/* 10.206.0.5 */
static const uint8_t TR6_TOS_ROUTED[16] = { 0x20, 0x01, 0x0d, 0xb8, 0x02, 0x03, [15] = 5 };
static const uint8_t TR6_DPORT_ROUTED[16] = { 0x20, 0x01, 0x0d, 0xb8, 0x02, 0x04, [15] = 5 };
static const uint8_t TR6_RULE_LOCAL[16] = { 0x20, 0x01, 0x0d, 0xb8, 0x02, 0x05, [15] = 5 };
static const uint8_t TR6_SPORT_ROUTED[16] = { 0x20, 0x01, 0x0d, 0xb8, 0x02, 0x06, [15] = 5 };

static void policy_rules(const char *ip, const char *tos_net, const char *dport_net,
			 const char *local_net, const char *sport_net, const char *via)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "%1$s rule add pref 100 tos 0x10 lookup 100 && "
		 "%1$s route add %2$s via %6$s table 100 && "
		 "%1$s rule add pref 101 ipproto udp dport %7$u lookup 101 && "
		 "%1$s route add %3$s via %6$s table 101 && "
		 "%1$s route add local %4$s dev unetq0 table 101 && "
		 "%1$s rule add pref 102 ipproto udp sport %8$u lookup 102 && "
		 "%1$s route add %5$s via %6$s table 102",
		 ip, tos_net, dport_net, local_net, sport_net, via, UNET_CHAN_PORT_DEFAULT,
		 CHAN_PEER_PORT);
	if (sh(cmd))
		fail_msg("cannot add the policy rules (%s rule ... tos/ipproto/dport/sport)", ip);
}

static void policy_rules_del(const char *ip)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "%1$s rule del pref 100 && %1$s rule del pref 101 && %1$s rule del pref 102 && "
		 "%1$s route flush table 100 && %1$s route flush table 101 && "
		 "%1$s route flush table 102",
		 ip);
	assert_int_equal(sh(cmd), 0);
}

static void test_chan_policy_rules(void **state)
{
	struct snap want = one(UNET_CTR_DROP_WRONG_SRC), want6 = one(UNET_CTR_DROP_WRONG_SRC);
	struct chan6_spec c6;
	struct chan_spec c;
	struct xdp_md ctx;
	uint8_t buf[256];
	uint32_t n;

	(void)state;
	transit_setup(&ctx);
	policy_rules("ip", "10.203.0.0/16", "10.204.0.0/16", "10.205.0.0/16", "10.206.0.0/16",
		     "10.9.0.77");
	policy_rules("ip -6", "2001:db8:203::/48", "2001:db8:204::/48", "2001:db8:205::/48",
		     "2001:db8:206::/48", "fd00:9::77");
	want.ch[W_CHAN].drop_wrong_src = 1;
	want6.ch[W_CHAN6].drop_wrong_src = 1;

	/* IPv4: the TOS byte, the destination port, the source port */
	c = chan_good();
	c.daddr = TR_TOS_ROUTED;
	n = build_chan(buf, sizeof(buf), &c);
	buf[14 + 1] = 0x10;
	expect_pass_untouched_on(buf, n, &ctx);
	c.sport = CHAN_PEER_PORT + 1; /* TOS 0: no route, ours */
	expect_run(buf, build_chan(buf, sizeof(buf), &c), &ctx, XDP_DROP, &want);
	c = chan_good();
	c.daddr = TR_DPORT_ROUTED;
	expect_pass_untouched_on(buf, build_chan(buf, sizeof(buf), &c), &ctx);
	c.daddr = TR_SPORT_ROUTED;
	expect_pass_untouched_on(buf, build_chan(buf, sizeof(buf), &c), &ctx);
	c.sport = CHAN_PEER_PORT + 1; /* another source port: no route */
	expect_run(buf, build_chan(buf, sizeof(buf), &c), &ctx, XDP_DROP, &want);
	c.daddr = TR_RULE_LOCAL; /* a local route in the rule's table */
	expect_run(buf, build_chan(buf, sizeof(buf), &c), &ctx, XDP_DROP, &want);

	/* IPv6: the traffic class (version 6, class 0x10: 0x61 0x00) */
	c6 = chan6_good();
	c6.daddr = TR6_TOS_ROUTED;
	n = build_chan6(buf, sizeof(buf), &c6);
	buf[14] = 0x61;
	expect_pass_untouched_on(buf, n, &ctx);
	c6.sport = CHAN_PEER_PORT + 1;
	expect_run(buf, build_chan6(buf, sizeof(buf), &c6), &ctx, XDP_DROP, &want6);
	c6 = chan6_good();
	c6.daddr = TR6_DPORT_ROUTED;
	expect_pass_untouched_on(buf, build_chan6(buf, sizeof(buf), &c6), &ctx);
	c6.ext = 60; /* the ports behind a destination-options header too */
	c6.frag_off = 0x0001;
	expect_pass_untouched_on(buf, build_chan6(buf, sizeof(buf), &c6), &ctx);
	c6 = chan6_good();
	c6.daddr = TR6_SPORT_ROUTED;
	expect_pass_untouched_on(buf, build_chan6(buf, sizeof(buf), &c6), &ctx);
	c6.sport = CHAN_PEER_PORT + 1;
	expect_run(buf, build_chan6(buf, sizeof(buf), &c6), &ctx, XDP_DROP, &want6);
	c6.daddr = TR6_RULE_LOCAL;
	expect_run(buf, build_chan6(buf, sizeof(buf), &c6), &ctx, XDP_DROP, &want6);

	policy_rules_del("ip");
	policy_rules_del("ip -6");
	transit_teardown();
}

/* IPv6, as test_chan_transit_passed: another host's address -> passed
 * untouched (behind an extension header too, which is not counted as
 * drop_ip6_exthdr); our address, ours on another interface, a link-local
 * one (never forwarded), the subnet-router anycast address, one with no
 * route, a reject route's, a multicast group's -> ours. */
static void test_chan6_transit_passed(void **state)
{
	struct chan6_spec c = chan6_good();
	struct snap want = one(UNET_CTR_DROP_WRONG_SRC);
	struct xdp_md ctx;
	uint8_t buf[256];

	(void)state;
	transit_setup(&ctx);
	want.ch[W_CHAN6].drop_wrong_src = 1;
	c.sport = CHAN_PEER_PORT + 1;
	c.daddr = TR6_OURS;
	expect_run(buf, build_chan6(buf, sizeof(buf), &c), &ctx, XDP_DROP, &want);
	c.daddr = TR6_OTHER_IF;
	expect_run(buf, build_chan6(buf, sizeof(buf), &c), &ctx, XDP_DROP, &want);
	c.daddr = TR6_LINK_LOCAL;
	expect_run(buf, build_chan6(buf, sizeof(buf), &c), &ctx, XDP_DROP, &want);
	c.daddr = TR6_ANYCAST;
	expect_run(buf, build_chan6(buf, sizeof(buf), &c), &ctx, XDP_DROP, &want);
	c.daddr = CHAN6_DST; /* no route */
	expect_run(buf, build_chan6(buf, sizeof(buf), &c), &ctx, XDP_DROP, &want);
	c.daddr = TR6_REJECTED;
	expect_run(buf, build_chan6(buf, sizeof(buf), &c), &ctx, XDP_DROP, &want);
	c.daddr = TR6_MCAST;
	expect_run(buf, build_chan6(buf, sizeof(buf), &c), &ctx, XDP_DROP, &want);
	if (g.xsk_ok) {
		struct snap del = one(UNET_CTR_DELIVERED);

		c = chan6_good();
		c.daddr = TR6_OURS;
		del.ifc[UNET_CTR_CHAN_DELIVERED] = 1;
		del.ch[W_CHAN6].delivered = 1;
		del.ch[W_CHAN6].delivered_bytes = 40;
		expect_run(buf, build_chan6(buf, sizeof(buf), &c), &ctx, XDP_REDIRECT, &del);
	}
	/* ours behind an extension header: dropped as before */
	c = chan6_good();
	c.daddr = TR6_OURS;
	c.ext = 44; /* a first fragment: offset 0, M set */
	c.frag_off = 0x0001;
	want = one(UNET_CTR_DROP_IP6_EXTHDR);
	expect_run(buf, build_chan6(buf, sizeof(buf), &c), &ctx, XDP_DROP, &want);
	/* transit */
	c = chan6_good();
	c.daddr = TR6_FOREIGN;
	expect_pass_untouched_on(buf, build_chan6(buf, sizeof(buf), &c), &ctx);
	c.csum = 0;
	expect_pass_untouched_on(buf, build_chan6(buf, sizeof(buf), &c), &ctx);
	c = chan6_good();
	c.daddr = TR6_FOREIGN;
	c.ext = 44;
	c.frag_off = 0x0001;
	expect_pass_untouched_on(buf, build_chan6(buf, sizeof(buf), &c), &ctx);
	/* forwarding off: nothing transits */
	assert_int_equal(set_forwarding("ipv6", "unetq0", 0), 0);
	c = chan6_good();
	c.daddr = TR6_FOREIGN;
	c.sport = CHAN_PEER_PORT + 1;
	want = one(UNET_CTR_DROP_WRONG_SRC);
	want.ch[W_CHAN6].drop_wrong_src = 1;
	expect_run(buf, build_chan6(buf, sizeof(buf), &c), &ctx, XDP_DROP, &want);
	transit_teardown();
}

/* ---- Routable channels over IPv6: fuzz ------------------------------------------ */

static void set_drop_ppm(uint32_t ppm);

/* A channel entry as the program sees it (the map, read once before the
 * fuzz: the model must not depend on the program). */
struct fz_chan {
	bool present, current; /* in unet_channels; its owner_token the slot's */
	struct unet_channel_val v;
};

static struct fz_chan *fz_chans; /* indexed by tag */

static void fz_chan_snapshot(void)
{
	int cfd = bpf_map__fd(g.skel->maps.unet_channels);
	int efd = bpf_map__fd(g.skel->maps.unet_endpoints);
	uint32_t key, next, *prev = NULL;

	fz_chans = calloc(65536, sizeof(*fz_chans));
	assert_non_null(fz_chans);
	while (bpf_map_get_next_key(cfd, prev, &next) == 0) {
		struct fz_chan *c = &fz_chans[next & 0xffff];
		struct unet_endpoint_val ev;

		key = next;
		prev = &key;
		if (next > 0xffff || bpf_map_lookup_elem(cfd, &key, &c->v))
			continue;
		c->present = true;
		c->current = bpf_map_lookup_elem(efd, &c->v.endpoint, &ev) == 0 &&
			     ev.token == c->v.owner_token;
	}
}

static bool fz6_in(const uint8_t *a, const uint8_t *p, unsigned int bytes)
{
	return memcmp(a, p, bytes) == 0;
}

/*
 * Whether a datagram to the channel port from s to d, arriving on the
 * forwarding veth of transit_setup, is this host's (1) or not (0):
 * bpf/xdp_dest.h and the kernel's IPv6 FIB written out for that
 * namespace.  Only a destination the kernel forwards as unicast is not:
 * fd00:9::/64 on the forwarding veth and fd00:8::/64 on the other, less
 * their addresses that are ours (fd00:9::1, fd00:9:: its subnet-router
 * anycast address, fd00:8::1).  Everything else is kept: multicast,
 * unspecified, loopback and link-local destinations (before any lookup),
 * a link-local, multicast or loopback source (never forwarded),
 * 2001:db8:66::/48 (a reject route) and addresses with no route.
 */
static int fz6_dest_ours(const uint8_t *s, const uint8_t *d)
{
	static const uint8_t lo[16] = { [15] = 1 };
	bool s_strict = s[0] == 0xff || (s[0] == 0xfe && (s[1] & 0xc0) == 0x80) || !memcmp(s, lo, 16);

	if (d[0] == 0xff || (d[0] == 0xfe && (d[1] & 0xc0) == 0x80) || s_strict)
		return 1;
	if (!memcmp(d, TR6_OURS, 16) || !memcmp(d, TR6_OTHER_IF, 16) || !memcmp(d, TR6_ANYCAST, 16))
		return 1;
	return !(fz6_in(d, TR6_OURS, 8) || fz6_in(d, TR6_OTHER_IF, 8));
}

/* The headers of a frame the model and the program disagree on. */
static void fz_dump(const uint8_t *f, uint32_t n)
{
	for (uint32_t i = 0; i < n && i < 96; i++)
		print_message("%02x%s", f[i], i % 16 == 15 ? "\n" : " ");
	print_message("\n");
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/*
 * The U-Net header of a routable channel's datagram at f + uh (its len
 * already checked against the UDP length), as unet_demux() takes it:
 * version, len, tag, the channel's kind, its peer (the source address,
 * alen bytes at saddr, and the UDP source port just before the
 * destination port, 8 bytes before the U-Net header), the peer's tag,
 * a socket on queue 0.  *tag is set to the channel found (0: none).
 */
static enum unet_if_counter fz_demux(const uint8_t *f, uint32_t n, uint32_t uh, uint32_t kind,
				     const uint8_t *saddr, unsigned int alen, uint16_t *tag)
{
	const struct fz_chan *c;
	uint32_t len = get16(f + uh + 6);

	if (f[uh] != UNET_WIRE_VERSION)
		return UNET_CTR_DROP_VERSION;
	if (!len || uh + 8 + len > n)
		return UNET_CTR_DROP_MALFORMED;
	*tag = get16(f + uh + 2);
	c = &fz_chans[*tag];
	if (!*tag || !c->present || !c->current) {
		*tag = 0;
		return UNET_CTR_DROP_UNKNOWN_TAG;
	}
	if ((c->v.flags & (UNET_CHAN_F_UDP4 | UNET_CHAN_F_UDP6)) != kind)
		return UNET_CTR_DROP_CHAN_KIND;
	if (get16(f + uh - 8) != ntohs(c->v.peer_port) || memcmp(saddr, c->v.peer_addr, alen) ||
	    get16(f + uh + 4) != c->v.peer_tag)
		return UNET_CTR_DROP_WRONG_SRC;
	/* setup_xsk's socket sits in EP_SOCK's and EP_SOCK + 1's queue 0 */
	if (c->v.endpoint != EP_SOCK && c->v.endpoint != EP_SOCK + 1)
		return UNET_CTR_DROP_NO_SOCKET;
	return UNET_CTR_DELIVERED;
}

/*
 * What bpf/xdp_chan6.h, xdp_dest.h and xdp_unet.h document, written out
 * again from the frame's bytes: the interface counter an IPv6 frame of n
 * bytes (arriving on transit_setup's veth, queue 0) is counted under --
 * UNET_CTR_PASS for everything left to the kernel (no frame the
 * generator makes reaches a UDP/IPv6 or TCP/IPv6 port of U-Net's), else
 * the drop's counter or UNET_CTR_DELIVERED.  *tag is set to the channel
 * a frame reached the tag lookup for (0: none).
 */
static enum unet_if_counter fz6_model(const uint8_t *f, uint32_t n, uint16_t *tag)
{
	const uint8_t *ip = f + 14, *udp = ip + 40;
	uint32_t plen;
	uint8_t nh;

	*tag = 0;
	if (get16(f + 12) != 0x86dd || n < 14 + 40 || (ip[0] >> 4) != 6)
		return UNET_CTR_PASS;
	nh = ip[6];
	if (nh != 17) {
		/* ip6_walk_exthdrs: up to 4 hop-by-hop, routing, destination
		 * options or first-fragment headers inside the frame */
		uint32_t p = 14 + 40;

		if (nh != 0 && nh != 43 && nh != 60 && nh != 44)
			return UNET_CTR_PASS; /* not walked (ESP, ...): or not an extension */
		for (int i = 0; i < 4; i++) {
			if (nh == 0 || nh == 43 || nh == 60) {
				if (p + 2 > n)
					return UNET_CTR_PASS;
				nh = f[p];
				p += (f[p + 1] + 1u) * 8;
			} else if (nh == 44) {
				if (p + 8 > n || (get16(f + p + 2) & 0xfff8))
					return UNET_CTR_PASS;
				nh = f[p];
				p += 8;
			} else {
				break;
			}
		}
		if (nh != 17 || p + 4 > n || get16(f + p + 2) != UNET_CHAN_PORT_DEFAULT)
			return UNET_CTR_PASS;
		return fz6_dest_ours(ip + 8, ip + 24) ? UNET_CTR_DROP_IP6_EXTHDR : UNET_CTR_PASS;
	}
	if (14 + 40 + 4 > n || get16(udp + 2) != UNET_CHAN_PORT_DEFAULT)
		return UNET_CTR_PASS;
	if (!fz6_dest_ours(ip + 8, ip + 24))
		return UNET_CTR_PASS;
	plen = get16(ip + 4);
	if (plen < 8 || 14 + 40 + plen > n || 14 + 40 + 8 > n)
		return UNET_CTR_DROP_CHAN_IP;
	if (get16(udp + 4) != plen)
		return UNET_CTR_DROP_CHAN_UDPLEN;
	if (!get16(udp + 6))
		return UNET_CTR_DROP_CHAN_CSUM;
	if (14 + 40 + 16 > n)
		return UNET_CTR_DROP_MALFORMED;
	if (get16(udp + 8 + 6) + 16u != plen)
		return UNET_CTR_DROP_CHAN_UDPLEN;
	return fz_demux(f, n, 14 + 40 + 8, UNET_CHAN_F_UDP6, ip + 8, 16, tag);
}

/* One mutated IPv6 channel frame into buf (cap >= 2048); returns its length. */
static uint32_t fz6_frame(uint64_t *rng, uint8_t *buf, size_t cap)
{
	static const uint8_t *const dsts[] = { TR6_OURS,     TR6_OURS,	    TR6_OURS,	  TR6_OURS,
					       TR6_OTHER_IF, TR6_LINK_LOCAL, CHAN6_DST,	  TR6_FOREIGN,
					       TR6_FOREIGN,  TR6_REJECTED,   TR6_MCAST,	  TR6_OURS };
	static const uint16_t tags[] = { TAG_CHAN6, TAG_CHAN6, TAG_CHAN6, TAG_CHAN6,
					 TAG_CHAN,  TAG_GOOD,  TAG_UNKNOWN, 0 };
	static const uint8_t exts[] = { 0, 43, 60, 44, 44, 50 };
	struct chan6_spec c = chan6_good();
	uint64_t r = fuzz_next(rng);
	uint8_t *ip = buf + 14;
	uint32_t n;

	c.daddr = dsts[r % 12];
	c.dst_tag = tags[(r >> 4) % 8];
	c.payload = (uint16_t)((r >> 8) % 4 == 0 ? (r >> 12) % 1400 : 1 + (r >> 12) % 64);
	if ((r >> 24) % 6 == 0) {
		c.ext = exts[(r >> 28) % 6];
		/* offset 1 (a later fragment) a third of the time; for the
		 * other kinds the same bytes are option data, and non-zero
		 * (build_chan6 adds the 8-byte header for ext || frag_off) */
		c.frag_off = (uint16_t)((r >> 32) % 3 == 0 ? 0x0009 : 0x0001);
	}
	if ((r >> 36) % 16 == 0)
		memcpy(c.saddr, TR6_LINK_LOCAL, 16); /* a link-local source: kept */
	n = build_chan6(buf, cap, &c);
	for (unsigned int k = 0, nm = (unsigned int)((r >> 40) % 5); k < nm; k++) {
		uint64_t x = fuzz_next(rng);
		uint32_t at;

		switch (x % 10) {
		case 0: /* a bit flipped in the headers */
			at = (uint32_t)((x >> 8) % (n < 14 + 80 ? n : 14 + 80));
			buf[at] ^= (uint8_t)(1u << ((x >> 32) % 8));
			break;
		case 1: /* a byte set anywhere */
			buf[(x >> 8) % n] = (uint8_t)(x >> 40);
			break;
		case 2: /* cut short: anywhere past the Ethernet header */
			n = 14 + (uint32_t)((x >> 8) % (n - 13));
			break;
		case 3: /* longer: trailing bytes after the datagram */
			at = (uint32_t)((x >> 8) % 64);
			for (uint32_t i = 0; i < at && n < cap; i++)
				buf[n++] = (uint8_t)(x >> (i % 56));
			break;
		case 4: { /* payload length at an edge */
			uint32_t e[] = { 0, 7, 8, 15, 16, n - 54, n - 53, n - 55, 0xffff };

			put16(ip + 4, (uint16_t)e[(x >> 8) % 9]);
			break;
		}
		case 5: /* UDP length or the U-Net len, off by a little */
			if (n >= 14 + 40 + 16) {
				uint32_t o = (x >> 8) % 2 ? 14 + 40 + 4 : 14 + 40 + 8 + 6;

				put16(buf + o, (uint16_t)(get16(buf + o) + (int)((x >> 16) % 5) - 2));
			}
			break;
		case 6: /* the checksum: 0 (refused) or any */
			if (n >= 14 + 40 + 8)
				put16(ip + 46, (x >> 8) % 2 ? 0 : (uint16_t)(x >> 16));
			break;
		case 7: /* the next header, the version or the EtherType */
			if ((x >> 8) % 3 == 0)
				ip[6] = (uint8_t)((x >> 12) % 2 ? 17 : x >> 16);
			else if ((x >> 8) % 3 == 1)
				ip[0] = (uint8_t)(((x >> 12) % 4 ? 6 : (x >> 16) % 16) << 4);
			else
				put16(buf + 12, (x >> 16) % 4 ? 0x86dd : 0x88b6);
			break;
		case 8: /* the destination or the source, any of the list */
			memcpy(ip + ((x >> 8) % 3 ? 24 : 8), dsts[(x >> 12) % 12], 16);
			break;
		default: /* the destination port, the source port, the tags */
			if (n >= 14 + 40 + 16) {
				uint32_t o = 14 + 40 + ((x >> 8) % 2 ? 2 : 0);

				if ((x >> 12) % 3 == 0)
					o = 14 + 40 + 8 + 2 + 2 * ((x >> 16) % 2);
				put16(buf + o, (x >> 20) % 2 ? (uint16_t)(x >> 24) : get16(buf + o) ^ 1);
			}
			break;
		}
	}
	/* Another EtherType is one nobody takes (as in fz4_frame). */
	if (get16(buf + 12) != 0x86dd)
		put16(buf + 12, 0x88b6);
	return n;
}

/*
 * Seeded fuzz of the IPv6 channel path, on the forwarding veth of
 * transit_setup: channel frames to our addresses, another interface's,
 * a link-local one, a foreign one (transit), a reject route's and a
 * multicast group, for the channel, one of another kind, unknown tags;
 * some behind extension headers; each mutated 0-4 times (bits flipped,
 * bytes set, cut short, lengthened, payload length at its edges, UDP and
 * U-Net lengths off by a little, the checksum, next header / version /
 * EtherType, addresses, ports, tags).  Every frame's verdict is checked
 * against the rules written out again above (fz6_model), a passed one
 * untouched; then every interface counter moved by exactly the model's
 * counts and the channel's own by its deliveries and wrong sources.
 */
#define FZ6_SEED 0x6368616e365f787aull /* "chan6_xz" */
#define FZ6_FRAMES 300000

/* One family's channel fuzz: what differs between IPv4 and IPv6. */
struct fz_family {
	const char *name;
	uint32_t (*frame)(uint64_t *rng, uint8_t *buf, size_t cap);
	enum unet_if_counter (*model)(const uint8_t *f, uint32_t n, uint16_t *tag);
	uint16_t tag;		 /* the channel whose own counters are checked */
	int w;			 /* its index in struct snap's ch[] */
	uint32_t ulen_off;	 /* the U-Net header's len field in the frame */
	bool kind_is_wrong_src;	 /* the channel counts a wrong kind as a wrong source */
	enum unet_if_counter rare; /* the family's own drop, which must be reached */
	const char *rare_name;
};

/*
 * Run frames of f's generator through the program on transit_setup's
 * veth (ctx; set up by the caller, with whatever the family's model asks
 * of the namespace), each verdict against f's model, a passed frame
 * untouched; then every interface counter by the model's counts and the
 * channel's own by its deliveries and wrong sources; and every kind of
 * outcome reached, or the fuzz tests little.  Tears the set-up down.
 */
static void fz_chan_run(const struct fz_family *f, struct xdp_md *ctx, uint64_t seed_default,
			uint64_t frames_default)
{
	uint64_t seed = fuzz_seed(seed_default), rng = seed, frames = fuzz_count(frames_default);
	uint64_t want[UNET_CTR__COUNT] = { 0 }, chan_del = 0, chan_bytes = 0, chan_wrong = 0;
	struct snap before, now;
	uint8_t buf[2048], out[2048];

	fz_chan_snapshot();
	print_message("%s fuzz: seed %#llx (UNET_FUZZ_SEED), %llu frames (UNET_FUZZ_COUNT)\n",
		      f->name, (unsigned long long)seed, (unsigned long long)frames);
	read_snap(&before);
	for (uint64_t i = 0; i < frames; i++) {
		uint32_t n = f->frame(&rng, buf, sizeof(buf)), out_len = sizeof(out);
		uint32_t ret = 0xdead, verdict;
		uint16_t tag;
		enum unet_if_counter o = f->model(buf, n, &tag);

		assert_int_equal(run_prog(buf, n, ctx, &ret, out, &out_len), 0);
		verdict = o == UNET_CTR_PASS ? XDP_PASS : o == UNET_CTR_DELIVERED ? XDP_REDIRECT : XDP_DROP;
		if (ret != verdict) {
			fz_dump(buf, n);
			fail_msg("frame %llu (%u bytes): verdict %u, the rules say %u (counter %s) "
				 "(replay: UNET_FUZZ_SEED=%#llx)",
				 (unsigned long long)i, n, ret, verdict, ctr_names[o],
				 (unsigned long long)seed);
		}
		if (ret == XDP_PASS && (out_len != n || memcmp(out, buf, n)))
			fail_msg("frame %llu: passed but changed", (unsigned long long)i);
		want[o]++;
		if (o == UNET_CTR_DELIVERED) {
			want[UNET_CTR_CHAN_DELIVERED]++;
			if (tag == f->tag) {
				chan_del++;
				chan_bytes += get16(buf + f->ulen_off);
			}
		}
		if ((o == UNET_CTR_DROP_WRONG_SRC ||
		     (f->kind_is_wrong_src && o == UNET_CTR_DROP_CHAN_KIND)) &&
		    tag == f->tag)
			chan_wrong++;
	}
	read_snap(&now);
	free(fz_chans);
	fz_chans = NULL;
	transit_teardown();
	print_message("%s fuzz: %llu delivered, %llu passed, %llu wrong source, %llu chan_ip, "
		      "%llu %s\n",
		      f->name, (unsigned long long)want[UNET_CTR_DELIVERED],
		      (unsigned long long)want[UNET_CTR_PASS],
		      (unsigned long long)want[UNET_CTR_DROP_WRONG_SRC],
		      (unsigned long long)want[UNET_CTR_DROP_CHAN_IP],
		      (unsigned long long)want[f->rare], f->rare_name);
	want[UNET_CTR_RX] = frames;
	for (int k = 0; k < UNET_CTR__COUNT; k++)
		if (now.ifc[k] - before.ifc[k] != want[k])
			fail_msg("counter %s moved by %llu, the rules say %llu (replay: UNET_FUZZ_SEED=%#llx)",
				 ctr_names[k], (unsigned long long)(now.ifc[k] - before.ifc[k]),
				 (unsigned long long)want[k], (unsigned long long)seed);
	assert_int_equal(now.ch[f->w].delivered - before.ch[f->w].delivered, chan_del);
	assert_int_equal(now.ch[f->w].delivered_bytes - before.ch[f->w].delivered_bytes, chan_bytes);
	assert_int_equal(now.ch[f->w].drop_wrong_src - before.ch[f->w].drop_wrong_src, chan_wrong);
	/* every kind of outcome was reached, or the fuzz tests little */
	assert_true(want[UNET_CTR_DELIVERED] > frames / 50 && want[UNET_CTR_PASS] > frames / 20 &&
		    want[UNET_CTR_DROP_WRONG_SRC] > frames / 100 &&
		    want[UNET_CTR_DROP_CHAN_IP] > frames / 100 && want[f->rare] > frames / 200);
}

static void test_chan6_fuzz(void **state)
{
	static const struct fz_family v6 = {
		.name = "chan6", .frame = fz6_frame, .model = fz6_model, .tag = TAG_CHAN6,
		.w = W_CHAN6, .ulen_off = 14 + 40 + 8 + 6, .kind_is_wrong_src = true,
		.rare = UNET_CTR_DROP_IP6_EXTHDR, .rare_name = "exthdr",
	};
	struct xdp_md ctx;

	(void)state;
	need_xsk();
	set_drop_ppm(0);
	transit_setup(&ctx);
	fz_chan_run(&v6, &ctx, FZ6_SEED, FZ6_FRAMES);
}

/* ---- Routable channels over IPv4: fuzz ------------------------------------------ */

/* Whether the kernel has a broadcast route for a subnet's network address
 * (older kernels added one, 6.x does not): the model asks it once. */
static bool fz4_net_bcast;

/*
 * bpf/xdp_dest.h and the kernel's IPv4 FIB written out for
 * transit_setup's namespace, for a datagram arriving on the forwarding
 * veth: only what the kernel forwards as unicast is not ours --
 * 10.9.0.0/24 (on the veth) and 10.8.0.0/24 (on its peer) less our .1,
 * the broadcast .255 (and the network address if the kernel has a
 * broadcast route for it).  Everything else is kept: multicast, limited
 * broadcast, 0/8 and 127/8 (before any lookup), 203.0.113.0/24 (a reject
 * route), 240/4 and anything else with no route.
 */
static int fz4_dest_ours(uint32_t d)
{
	uint32_t host = d & 0xff;

	if ((d >> 8) == (TR_OURS >> 8) || (d >> 8) == (TR_OTHER_IF >> 8))
		return host == 1 || host == 255 || (host == 0 && fz4_net_bcast);
	return 1;
}

/*
 * What bpf/xdp_chan.h, xdp_dest.h and xdp_unet.h document, written out
 * again from the frame's bytes, as fz6_model() for IPv6: the interface
 * counter an IPv4 frame of n bytes arriving on the forwarding veth is
 * counted under (UNET_CTR_PASS for everything left to the kernel: no
 * frame the generator makes reaches a UDP or TCP port of U-Net's).
 */
static enum unet_if_counter fz4_model(const uint8_t *f, uint32_t n, uint16_t *tag)
{
	const uint8_t *ip = f + 14, *udp;
	uint32_t hlen, tot, d;

	*tag = 0;
	if (get16(f + 12) != 0x0800 || n < 14 + 20 || (ip[0] >> 4) != 4 || (ip[0] & 0xf) < 5 ||
	    ip[9] != 17 || (get16(ip + 6) & 0x1fff))
		return UNET_CTR_PASS;
	hlen = (ip[0] & 0xfu) * 4;
	udp = ip + hlen;
	if (14 + hlen + 4 > n || get16(udp + 2) != UNET_CHAN_PORT_DEFAULT)
		return UNET_CTR_PASS;
	d = (uint32_t)ip[16] << 24 | (uint32_t)ip[17] << 16 | (uint32_t)ip[18] << 8 | ip[19];
	if (!fz4_dest_ours(d))
		return UNET_CTR_PASS;
	if (hlen != 20)
		return UNET_CTR_DROP_CHAN_IP;
	tot = get16(ip + 2);
	if (tot < 28 || 14 + tot > n || 14 + 28 > n)
		return UNET_CTR_DROP_CHAN_IP;
	if (get16(ip + 6) & 0x2000)
		return UNET_CTR_DROP_CHAN_FRAG;
	if (get16(udp + 4) != tot - 20)
		return UNET_CTR_DROP_CHAN_UDPLEN;
	if (get16(udp + 6))
		return UNET_CTR_DROP_CHAN_CSUM;
	if (14 + 28 + 8 > n)
		return UNET_CTR_DROP_MALFORMED;
	if (get16(udp + 8 + 6) + 16u != tot - 20)
		return UNET_CTR_DROP_CHAN_UDPLEN;
	return fz_demux(f, n, 14 + 28, UNET_CHAN_F_UDP4, ip + 12, 4, tag);
}

/* One mutated IPv4 channel frame into buf (cap >= 2048); returns its length. */
static uint32_t fz4_frame(uint64_t *rng, uint8_t *buf, size_t cap)
{
	static const uint32_t dsts[] = { TR_OURS,	  TR_OURS,    TR_OURS,	   TR_OURS,
					 TR_OTHER_IF,	  TR_NO_ROUTE, TR_SUBNET_BCAST, TR_FOREIGN,
					 TR_FOREIGN,	  TR_REJECTED, 0xef010203u, 0xffffffffu };
	static const uint16_t tags[] = { TAG_CHAN, TAG_CHAN, TAG_CHAN,	  TAG_CHAN,
					 TAG_CHAN6, TAG_GOOD, TAG_UNKNOWN, 0 };
	static const uint16_t frags[] = { 0, 0x4000, 0x2000, 0x0001, 0x1fff, 0x2001, 0x4000, 0 };
	struct chan_spec c = chan_good();
	uint64_t r = fuzz_next(rng);
	uint8_t *ip = buf + 14;
	uint32_t n, hl;

	c.daddr = dsts[r % 12];
	c.dst_tag = tags[(r >> 4) % 8];
	c.payload = (uint16_t)((r >> 8) % 4 == 0 ? (r >> 12) % 1400 : 1 + (r >> 12) % 64);
	c.ihl = (uint8_t)((r >> 24) % 8 ? 5 : 6 + (r >> 28) % 2);
	n = build_chan(buf, cap, &c);
	for (unsigned int k = 0, nm = (unsigned int)((r >> 40) % 5); k < nm; k++) {
		uint64_t x = fuzz_next(rng);
		uint32_t at;

		hl = (ip[0] & 0xfu) * 4;
		switch (x % 10) {
		case 0: /* a bit flipped in the headers */
			at = (uint32_t)((x >> 8) % (n < 14 + 60 ? n : 14 + 60));
			buf[at] ^= (uint8_t)(1u << ((x >> 32) % 8));
			break;
		case 1: /* a byte set anywhere */
			buf[(x >> 8) % n] = (uint8_t)(x >> 40);
			break;
		case 2: /* cut short: anywhere past the Ethernet header */
			n = 14 + (uint32_t)((x >> 8) % (n - 13));
			break;
		case 3: /* longer: trailing bytes after the datagram */
			at = (uint32_t)((x >> 8) % 64);
			for (uint32_t i = 0; i < at && n < cap; i++)
				buf[n++] = (uint8_t)(x >> (i % 56));
			break;
		case 4: { /* tot_len at an edge */
			uint32_t e[] = { 0, 27, 28, 35, 36, n - 14, n - 13, n - 15, 0xffff };

			put16(ip + 2, (uint16_t)e[(x >> 8) % 9]);
			break;
		}
		case 5: /* UDP length or the U-Net len, off by a little */
			if (n >= 14 + hl + 16) {
				uint32_t o = (x >> 8) % 2 ? 14 + hl + 4 : 14 + hl + 8 + 6;

				put16(buf + o, (uint16_t)(get16(buf + o) + (int)((x >> 16) % 5) - 2));
			}
			break;
		case 6: /* the checksum (0 is the one taken), the fragment bits */
			if ((x >> 8) % 2)
				put16(ip + 6, frags[(x >> 12) % 8]);
			else if (n >= 14 + hl + 8)
				put16(ip + hl + 6, (x >> 12) % 2 ? 0 : (uint16_t)(x >> 16));
			break;
		case 7: /* IHL / version, the protocol, or the EtherType */
			if ((x >> 8) % 3 == 0)
				ip[0] = (uint8_t)(((x >> 12) % 4 ? 4 : (x >> 16) % 16) << 4 |
						  ((x >> 20) % 2 ? 5 : (x >> 24) % 16));
			else if ((x >> 8) % 3 == 1)
				ip[9] = (uint8_t)((x >> 12) % 2 ? 17 : 0x99);
			else
				put16(buf + 12, (x >> 16) % 4 ? 0x0800 : 0x88b6);
			break;
		case 8: { /* the destination or the source, any of the list */
			uint32_t a = dsts[(x >> 12) % 12];

			if ((x >> 8) % 3 == 0)
				a = (x >> 16) % 2 ? CHAN_PEER_ADDR : a;
			put16(ip + ((x >> 8) % 3 ? 16 : 12), (uint16_t)(a >> 16));
			put16(ip + ((x >> 8) % 3 ? 18 : 14), (uint16_t)a);
			break;
		}
		default: /* the destination port, the source port, the tags */
			if (n >= 14 + hl + 16) {
				uint32_t o = 14 + hl + ((x >> 8) % 2 ? 2 : 0);

				if ((x >> 12) % 3 == 0)
					o = 14 + hl + 8 + 2 + 2 * ((x >> 16) % 2);
				put16(buf + o, (x >> 20) % 2 ? (uint16_t)(x >> 24) : get16(buf + o) ^ 1);
			}
			break;
		}
	}
	/* Another EtherType is one nobody takes: raw U-Net, ARP and IPv6
	 * frames a flip could make have their own tests. */
	if (get16(buf + 12) != 0x0800)
		put16(buf + 12, 0x88b6);
	return n;
}

/*
 * Seeded fuzz of the IPv4 channel path, as test_chan6_fuzz: on the
 * forwarding veth, channel frames to our addresses, the subnet's
 * broadcast, an address with no route, a foreign one (transit), a reject
 * route's and a multicast group, for the channel, one of another kind,
 * unknown tags, with IP options now and then; each mutated 0-4 times.
 * Every frame's verdict against fz4_model, a passed one untouched; then
 * every interface counter's total and the channel's own.
 */
#define FZ4_SEED 0x6368616e345f787aull /* "chan4_xz" */
#define FZ4_FRAMES 300000

static void test_chan_fuzz(void **state)
{
	static const struct fz_family v4 = {
		.name = "chan", .frame = fz4_frame, .model = fz4_model, .tag = TAG_CHAN,
		.w = W_CHAN, .ulen_off = 14 + 28 + 6, .kind_is_wrong_src = false,
		.rare = UNET_CTR_DROP_CHAN_CSUM, .rare_name = "csum",
	};
	struct xdp_md ctx;

	(void)state;
	need_xsk();
	set_drop_ppm(0);
	transit_setup(&ctx);
	fz4_net_bcast = sh("ip route show table local 10.9.0.0 | grep -q broadcast") == 0;
	fz_chan_run(&v4, &ctx, FZ4_SEED, FZ4_FRAMES);
}

/* The layout the program and this file both assume (bpf/unet_abi.h). */
static void test_abi_layout(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct unet_hdr), UNET_HDR_LEN);
	assert_int_equal(offsetof(struct unet_hdr, dst_tag), 2);
	assert_int_equal(offsetof(struct unet_hdr, src_tag), 4);
	assert_int_equal(offsetof(struct unet_hdr, len), 6);
	assert_int_equal(UNET_PAYLOAD_OFF, 22);
	/* the UDP tables' owner tokens: 8-byte aligned, as their values */
	assert_int_equal(offsetof(struct unet_udp_val, owner_token) % 8, 0);
	assert_int_equal(sizeof(struct unet_udp_val) % 8, 0);
	assert_int_equal(offsetof(struct unet_udp_addr_val, owner_token) % 8, 0);
	assert_int_equal(sizeof(struct unet_udp_addr_val) % 8, 0);
}

static void test_good_frame_delivered(void **state)
{
	struct frame_spec s = good_spec();
	struct snap want = one(UNET_CTR_DELIVERED);

	(void)state;
	need_xsk();
	want.ch[W_GOOD].delivered = 1;
	want.ch[W_GOOD].delivered_bytes = 64;
	expect_spec(&s, XDP_REDIRECT, &want);
}

static void test_min_payload_delivered(void **state)
{
	/* 1-byte payload padded to the Ethernet minimum of 60. */
	struct frame_spec s = good_spec();
	struct snap want = one(UNET_CTR_DELIVERED);

	(void)state;
	need_xsk();
	s.len = 1;
	s.payload = 1;
	s.pad = 60 - 22 - 1;
	want.ch[W_GOOD].delivered = 1;
	want.ch[W_GOOD].delivered_bytes = 1;
	expect_spec(&s, XDP_REDIRECT, &want);
}

static void test_padded_frame_delivered(void **state)
{
	/* len 5, 33 bytes of padding: only the 5 count as payload. */
	struct frame_spec s = good_spec();
	struct snap want = one(UNET_CTR_DELIVERED);

	(void)state;
	need_xsk();
	s.len = 5;
	s.payload = 5;
	s.pad = 33;
	want.ch[W_GOOD].delivered = 1;
	want.ch[W_GOOD].delivered_bytes = 5;
	expect_spec(&s, XDP_REDIRECT, &want);
}

/*
 * VLANs (bpf/unet_abi.h): U-Net and UDP over U-Net take only untagged
 * frames.  A tagged frame belongs to a VLAN device stacked on this one
 * and is passed untouched, whatever it carries -- here a U-Net frame for
 * a good channel with a socket, which untagged would be delivered.
 */
static void test_vlan_8021q_unet_passed(void **state)
{
	struct frame_spec s = good_spec();
	uint8_t buf[256];
	uint32_t n;

	(void)state;
	need_prog();
	s.vlan_tpid = 0x8100;
	s.vlan_tci = 42;
	n = build(buf, sizeof(buf), &s);
	expect_pass_untouched(buf, n);
	s.vlan_tci = 0; /* priority tag, VLAN id 0: still a tag */
	n = build(buf, sizeof(buf), &s);
	expect_pass_untouched(buf, n);
	/* a U-Net header cut short behind a tag: not ours either */
	s.cut = 18 + 3;
	n = build(buf, sizeof(buf), &s);
	expect_pass_untouched(buf, n);
}

static void test_vlan_8021ad_unet_passed(void **state)
{
	struct frame_spec s = good_spec();
	uint8_t buf[256];
	uint32_t n;

	(void)state;
	need_prog();
	s.vlan_tpid = 0x88a8;
	s.vlan_tci = 7;
	n = build(buf, sizeof(buf), &s);
	expect_pass_untouched(buf, n);
}

static void test_flags_ignored(void **state)
{
	/* flags are reserved: ignored on receive. */
	struct frame_spec s = good_spec();
	struct snap want = one(UNET_CTR_DELIVERED);

	(void)state;
	need_xsk();
	s.flags = 0xff;
	want.ch[W_GOOD].delivered = 1;
	want.ch[W_GOOD].delivered_bytes = 64;
	expect_spec(&s, XDP_REDIRECT, &want);
}

static void test_max_payload_delivered(void **state)
{
	/* MTU 1500: 1492 payload bytes, frame of 1514. */
	struct frame_spec s = good_spec();
	struct snap want = one(UNET_CTR_DELIVERED);

	(void)state;
	need_xsk();
	s.len = 1492;
	s.payload = 1492;
	want.ch[W_GOOD].delivered = 1;
	want.ch[W_GOOD].delivered_bytes = 1492;
	expect_spec(&s, XDP_REDIRECT, &want);
}

static void test_unknown_tag_dropped(void **state)
{
	struct frame_spec s = good_spec();
	struct snap want = one(UNET_CTR_DROP_UNKNOWN_TAG);

	(void)state;
	need_prog();
	s.dst_tag = TAG_UNKNOWN;
	expect_spec(&s, XDP_DROP, &want);
}

static void test_tag_zero_dropped(void **state)
{
	/* Tag 0 is refused even if a (bogus) channel entry exists for it. */
	struct frame_spec s = good_spec();
	struct snap want = one(UNET_CTR_DROP_UNKNOWN_TAG);
	uint32_t zero = 0;

	(void)state;
	need_prog();
	s.dst_tag = 0;
	expect_spec(&s, XDP_DROP, &want);

	assert_int_equal(add_channel(0, PEER_MAC, PEER_TAG, EP_SOCK), 0);
	expect_spec(&s, XDP_DROP, &want);
	assert_int_equal(bpf_map_delete_elem(bpf_map__fd(g.skel->maps.unet_channels), &zero), 0);
}

static void test_wrong_src_mac_dropped(void **state)
{
	struct frame_spec s = good_spec();
	struct snap want = one(UNET_CTR_DROP_WRONG_SRC);

	(void)state;
	need_prog();
	s.src_mac = OTHER_MAC;
	want.ch[W_GOOD].drop_wrong_src = 1;
	expect_spec(&s, XDP_DROP, &want);
}

static void test_wrong_src_tag_dropped(void **state)
{
	struct frame_spec s = good_spec();
	struct snap want = one(UNET_CTR_DROP_WRONG_SRC);

	(void)state;
	need_prog();
	s.src_tag = PEER_TAG + 1;
	want.ch[W_GOOD].drop_wrong_src = 1;
	expect_spec(&s, XDP_DROP, &want);
	/* The right tag of another channel is still the wrong tag here. */
	s.src_tag = PEER_TAG_NOSOCK;
	expect_spec(&s, XDP_DROP, &want);
}

/* A channel left by a dead owner whose slot another process has since
 * taken (another token in the slot), or whose slot is gone: never
 * delivered, counted as an unknown tag, even with a socket in the slot. */
static void test_stale_owner_dropped(void **state)
{
	struct frame_spec s = good_spec();
	struct snap want = one(UNET_CTR_DROP_UNKNOWN_TAG);
	uint32_t slot = EP_SOCK;
	int ep_fd;

	(void)state;
	need_xsk();
	ep_fd = bpf_map__fd(g.skel->maps.unet_endpoints);
	assert_int_equal(add_endpoint(EP_SOCK, TOKEN_SOCK + 1), 0);
	expect_spec(&s, XDP_DROP, &want);
	assert_int_equal(bpf_map_delete_elem(ep_fd, &slot), 0);
	expect_spec(&s, XDP_DROP, &want);
	/* the owner back in its slot: delivered again */
	assert_int_equal(add_endpoint(EP_SOCK, TOKEN_SOCK), 0);
	want = one(UNET_CTR_DELIVERED);
	want.ch[W_GOOD].delivered = 1;
	want.ch[W_GOOD].delivered_bytes = 64;
	expect_spec(&s, XDP_REDIRECT, &want);
}

static void test_bad_version_dropped(void **state)
{
	struct frame_spec s = good_spec();
	struct snap want = one(UNET_CTR_DROP_VERSION);

	(void)state;
	need_prog();
	s.version = UNET_WIRE_VERSION + 1;
	expect_spec(&s, XDP_DROP, &want);
	s.version = 0;
	expect_spec(&s, XDP_DROP, &want);
	/* Version is judged before len: the fields belong to the version. */
	s.version = 2;
	s.len = 0;
	expect_spec(&s, XDP_DROP, &want);
}

static void test_truncated_header_malformed(void **state)
{
	/* The frame ends inside the U-Net header (EtherType says U-Net). */
	struct frame_spec s = good_spec();
	struct snap want = one(UNET_CTR_DROP_MALFORMED);

	(void)state;
	need_prog();
	s.cut = 14 + 7; /* one byte short of the header */
	expect_spec(&s, XDP_DROP, &want);
	s.cut = 14; /* EtherType and nothing else */
	expect_spec(&s, XDP_DROP, &want);
}

static void test_len_too_large_malformed(void **state)
{
	struct frame_spec s = good_spec();
	struct snap want = one(UNET_CTR_DROP_MALFORMED);

	(void)state;
	need_prog();
	s.len = 65; /* one more than present */
	expect_spec(&s, XDP_DROP, &want);
	s.len = 0xffff;
	expect_spec(&s, XDP_DROP, &want);
	/* Padding is no excuse: len 40 with 4 payload + 34 padding = 38. */
	s.len = 40;
	s.payload = 4;
	s.pad = 34;
	expect_spec(&s, XDP_DROP, &want);
}

static void test_len_zero_malformed(void **state)
{
	struct frame_spec s = good_spec();
	struct snap want = one(UNET_CTR_DROP_MALFORMED);

	(void)state;
	need_prog();
	s.len = 0;
	expect_spec(&s, XDP_DROP, &want);
}

static void test_no_socket_dropped(void **state)
{
	/* Channel is fine, its endpoint has no socket on queue 0. */
	struct frame_spec s = good_spec();
	struct snap want = one(UNET_CTR_DROP_NO_SOCKET);

	(void)state;
	need_prog();
	s.dst_tag = TAG_NOSOCK;
	s.src_tag = PEER_TAG_NOSOCK;
	want.ch[W_NOSOCK].drop_no_socket = 1;
	expect_spec(&s, XDP_DROP, &want);
}

static void test_queue_without_socket_dropped(void **state)
{
	/* EP_SOCK has a socket on queue 0 only; frames on queue 1 have none.
	 * Frames on queue UNET_MAX_QUEUES (which would alias EP_SOCK + 1's
	 * queue 0, where the socket also sits, if not bounded) and above
	 * cannot have one: counted drop_queue_range, and on the channel as
	 * drop_no_socket. */
	struct frame_spec s = good_spec();
	struct snap want = one(UNET_CTR_DROP_NO_SOCKET);
	struct xdp_md ctx = { 0 };
	uint8_t buf[256];
	uint32_t n;

	(void)state;
	need_xsk();
	if (!g.mq_ifindex) {
		print_message("SKIP: cannot create a veth with 20 rx queues "
			      "(ip link add ... type veth)\n");
		skip();
	}
	n = build(buf, sizeof(buf), &s);
	want.ch[W_GOOD].drop_no_socket = 1;
	ctx.ingress_ifindex = (uint32_t)g.mq_ifindex;
	ctx.rx_queue_index = 1;
	expect_run(buf, n, &ctx, XDP_DROP, &want);
	want = one(UNET_CTR_DROP_QUEUE_RANGE);
	want.ch[W_GOOD].drop_no_socket = 1;
	ctx.rx_queue_index = UNET_MAX_QUEUES;
	expect_run(buf, n, &ctx, XDP_DROP, &want);
	ctx.rx_queue_index = 19;
	expect_run(buf, n, &ctx, XDP_DROP, &want);
	/* and queue 0 of that device does reach the socket slot */
	want = one(UNET_CTR_DELIVERED);
	want.ch[W_GOOD].delivered = 1;
	want.ch[W_GOOD].delivered_bytes = 64;
	ctx.rx_queue_index = 0;
	expect_run(buf, n, &ctx, XDP_REDIRECT, &want);
}

static void set_drop_ppm(uint32_t ppm)
{
	struct unet_fault_cfg f = { .drop_ppm = ppm };
	uint32_t key = 0;

	assert_int_equal(bpf_map_update_elem(bpf_map__fd(g.skel->maps.unet_faults), &key, &f,
					     BPF_ANY), 0);
}

/* The loss hook: ppm 1000000 drops every frame that would be delivered
 * (counted as drop_injected, not delivered), 0 drops none; frames the
 * program refuses anyway keep their own counter, and other traffic is
 * not touched. */
static void test_injected_drop(void **state)
{
	struct frame_spec s = good_spec();
	struct snap want = one(UNET_CTR_DROP_INJECTED);
	uint8_t buf[256];
	uint32_t n;

	(void)state;
	need_xsk();
	n = build(buf, sizeof(buf), &s);
	set_drop_ppm(1000000);
	for (int i = 0; i < 20; i++)
		expect_run(buf, n, NULL, XDP_DROP, &want);
	/* an unknown tag is still an unknown tag */
	s.dst_tag = TAG_UNKNOWN;
	want = one(UNET_CTR_DROP_UNKNOWN_TAG);
	expect_spec(&s, XDP_DROP, &want);
	set_drop_ppm(0);
	want = one(UNET_CTR_DELIVERED);
	want.ch[W_GOOD].delivered = 1;
	want.ch[W_GOOD].delivered_bytes = 64;
	for (int i = 0; i < 20; i++)
		expect_run(buf, n, NULL, XDP_REDIRECT, &want);
	/* half: some of each over 400 frames (both with overwhelming odds) */
	set_drop_ppm(500000);
	{
		struct snap before, now;
		uint32_t ret;

		read_snap(&before);
		for (int i = 0; i < 400; i++)
			assert_int_equal(run_prog(buf, n, NULL, &ret, NULL, NULL), 0);
		read_snap(&now);
		assert_true(now.ifc[UNET_CTR_DROP_INJECTED] - before.ifc[UNET_CTR_DROP_INJECTED] > 100);
		assert_true(now.ifc[UNET_CTR_DELIVERED] - before.ifc[UNET_CTR_DELIVERED] > 100);
	}
	set_drop_ppm(0);
}

static void test_arp_passed(void **state)
{
	/* ARP request, 28 bytes, padded to 60. */
	static const uint8_t arp[60] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x08, 0x06,
		0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
		10,   0,    0,    2,    0,    0,    0,    0,    0,    0,    10,   0,    0,    1,
	};

	(void)state;
	need_prog();
	expect_pass_untouched(arp, sizeof(arp));
}

static void test_ipv4_passed(void **state)
{
	/* IPv4/UDP 10.0.0.2:5000 -> 10.0.0.1:5000, 4 bytes of data. */
	static const uint8_t ip[46] = {
		0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x08, 0x00,
		0x45, 0x00, 0x00, 0x20, 0x00, 0x01, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 10,   0,
		0,    2,    10,   0,    0,    1,    0x13, 0x88, 0x13, 0x88, 0x00, 0x0c, 0x00, 0x00,
		'p',  'i',
	};
	uint8_t padded[60] = { 0 };

	(void)state;
	need_prog();
	expect_pass_untouched(ip, sizeof(ip));
	memcpy(padded, ip, sizeof(ip));
	expect_pass_untouched(padded, sizeof(padded));
}

static void test_vlan_non_unet_passed(void **state)
{
	/* 802.1Q tag carrying IPv4; QinQ (a second tag) is passed too. */
	struct frame_spec s = good_spec();
	uint8_t buf[256];
	uint32_t n;

	(void)state;
	need_prog();
	s.vlan_tpid = 0x8100;
	s.vlan_tci = 10;
	s.ethertype = 0x0800;
	n = build(buf, sizeof(buf), &s);
	expect_pass_untouched(buf, n);

	s.vlan_tpid = 0x88a8;
	s.ethertype = 0x8100; /* the inner tag's TPID where the type would be */
	n = build(buf, sizeof(buf), &s);
	expect_pass_untouched(buf, n);
}

static void test_truncated_vlan_passed(void **state)
{
	/* A VLAN TPID and the frame ends inside the tag: we cannot tell what
	 * it carries, so it is not ours; the kernel deals with it. */
	struct frame_spec s = good_spec();
	uint8_t buf[256];
	uint32_t n;

	(void)state;
	need_prog();
	s.vlan_tpid = 0x8100;
	s.cut = 16;
	n = build(buf, sizeof(buf), &s);
	expect_pass_untouched(buf, n);
}

/* Run the program on the first linear_len bytes of pkt[0..n) as the linear
 * part of the frame (ctx data_end < data_size_in; newer kernels put the
 * rest in fragments, older ones refuse with EINVAL). */
static int run_linear(const uint8_t *pkt, uint32_t n, uint32_t linear_len, uint32_t *retval)
{
	struct xdp_md ctx = { .data_end = linear_len };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt, .data_size_in = n, .repeat = 1,
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx));

	if (bpf_prog_test_run_opts(g.prog_fd, &opts))
		return -errno;
	*retval = opts.retval;
	return 0;
}

/*
 * A jumbo frame in pieces (the program is loaded frags-aware): only the
 * first 1024 bytes are in the linear part, the rest in fragments.  The
 * U-Net length is checked against the whole frame: 8992 payload bytes in
 * a 9014-byte frame are delivered; a header claiming two bytes more than
 * the frame holds is malformed.  A program that measured the first piece
 * only would drop the first as malformed.
 */
static void test_jumbo_frame_in_pieces(void **state)
{
	struct frame_spec s = good_spec();
	struct snap before, ok = one(UNET_CTR_DELIVERED), bad = one(UNET_CTR_DROP_MALFORMED);
	static uint8_t buf[9200];
	uint32_t n, ret = 0xdead;
	int err;

	(void)state;
	need_xsk();
	s.len = 8992;
	s.payload = 8992;
	n = build(buf, sizeof(buf), &s);
	assert_int_equal(n, 9014);
	read_snap(&before);
	err = run_linear(buf, n, 1024, &ret);
	if (err == -EINVAL) {
		print_message("SKIP: this kernel cannot test-run a frame in pieces\n");
		skip();
	}
	assert_int_equal(err, 0);
	assert_int_equal(ret, XDP_REDIRECT);
	ok.ch[W_GOOD].delivered = 1;
	ok.ch[W_GOOD].delivered_bytes = 8992;
	check_delta(&before, &ok);

	s.payload = 8990; /* len still says 8992 */
	n = build(buf, sizeof(buf), &s);
	read_snap(&before);
	assert_int_equal(run_linear(buf, n, 1024, &ret), 0);
	assert_int_equal(ret, XDP_DROP);
	check_delta(&before, &bad);
}

static void test_short_frame(void **state)
{
	/*
	 * Decision: a frame shorter than an Ethernet header is passed (and
	 * counted rx + pass) by the program: it carries no EtherType, so it
	 * is not a U-Net frame, and the kernel discards runts itself.
	 *
	 * BPF_PROG_TEST_RUN for XDP refuses data shorter than ETH_HLEN with
	 * EINVAL before the program runs (bpf_test_init() checks the input
	 * size), and drivers never hand such frames to XDP.  So assert that
	 * the kernel refuses and nothing is counted; then, where the kernel
	 * lets ctx.data_end cut the linear part short of the input (6.18
	 * does), show the program a 13-byte and a 0-byte frame and assert
	 * the decision; and exactly 14 bytes (a bare Ethernet header) with a
	 * non-U-Net EtherType is passed untouched.
	 */
	uint8_t buf[64] = { 0 };
	uint32_t ret = 0xdead;
	struct snap before, none = { 0 }, want = one(UNET_CTR_PASS);
	int err;

	(void)state;
	need_prog();
	memcpy(buf, LOCAL_MAC, 6);
	memcpy(buf + 6, PEER_MAC, 6);
	put16(buf + 12, UNET_ETH_P);
	read_snap(&before);
	assert_int_equal(run_prog(buf, 13, NULL, &ret, NULL, NULL), -EINVAL);
	assert_int_equal(run_prog(buf, 1, NULL, &ret, NULL, NULL), -EINVAL);
	check_delta(&before, &none);

	read_snap(&before);
	err = run_linear(buf, 14, 13, &ret);
	if (err == -EINVAL) {
		print_message("note: kernel refuses ctx.data_end < data_size_in; "
			      "the runt case is not reachable here\n");
	} else {
		assert_int_equal(err, 0);
		assert_int_equal(ret, XDP_PASS);
		check_delta(&before, &want);
		read_snap(&before);
		assert_int_equal(run_linear(buf, 14, 0, &ret), 0);
		assert_int_equal(ret, XDP_PASS);
		check_delta(&before, &want);
	}

	put16(buf + 12, 0x86dd); /* IPv6 EtherType, no header */
	expect_pass_untouched(buf, 14);
}

/* ---- UDP/IPv4 and ARP ------------------------------------------------------ */

struct udp_spec {
	uint32_t saddr, daddr;
	uint16_t sport, dport;
	uint8_t ihl;	   /* 5 default; more: NOP options */
	uint8_t version;   /* 4 default */
	uint16_t frag;	   /* flags + offset field */
	uint16_t payload;  /* bytes present */
	int tot_adj;	   /* added to the true tot_len */
	int ulen_adj;	   /* added to the true UDP length */
	uint32_t cut;	   /* frame ends after this many bytes, if non-zero */
};

static struct udp_spec udp_good(uint16_t dport)
{
	return (struct udp_spec){ .saddr = UDP_SRC, .daddr = UDP_DST, .sport = 7000,
				  .dport = dport, .ihl = 5, .version = 4, .payload = 32 };
}

/* Ethernet (PEER_MAC to LOCAL_MAC, IPv4) and an IPv4 header by hand into
 * buf, zeroed first (cap bytes): ihl words, the ones past 20 bytes NOP
 * options; tot_len as given, so that a case can make it lie.  Returns
 * where the transport header goes. */
static uint8_t *put_eth_ipv4(uint8_t *buf, size_t cap, uint8_t version, uint8_t ihl,
			     uint16_t tot_len, uint16_t frag, uint8_t proto, uint32_t saddr,
			     uint32_t daddr)
{
	uint8_t *ip = buf + 14;

	memset(buf, 0, cap);
	memcpy(buf, LOCAL_MAC, 6);
	memcpy(buf + 6, PEER_MAC, 6);
	put16(buf + 12, 0x0800);
	ip[0] = (uint8_t)(version << 4 | ihl);
	put16(ip + 2, tot_len);
	put16(ip + 6, frag);
	ip[8] = 64;
	ip[9] = proto;
	put16(ip + 12, (uint16_t)(saddr >> 16));
	put16(ip + 14, (uint16_t)saddr);
	put16(ip + 16, (uint16_t)(daddr >> 16));
	put16(ip + 18, (uint16_t)daddr);
	for (uint32_t i = 20; i < ihl * 4u; i++)
		ip[i] = 1; /* NOP option */
	return ip + ihl * 4u;
}

/* The length of an IPv4 frame of tot bytes after Ethernet: padded to
 * Ethernet's 60-byte minimum, or cut short at cut if that is non-zero. */
static uint32_t ipv4_frame_len(uint32_t tot, uint32_t cut)
{
	uint32_t n = 14 + tot;

	if (n < 60)
		n = 60;
	return cut ? cut : n;
}

/* Run a built IPv4 frame: XDP_PASS must leave it untouched; any other
 * verdict counts one outcome. */
static void expect_ipv4(const uint8_t *buf, uint32_t n, uint32_t verdict,
			enum unet_if_counter outcome)
{
	struct snap want = one(outcome);

	if (verdict == XDP_PASS)
		expect_pass_untouched(buf, n);
	else
		expect_run(buf, n, NULL, verdict, &want);
}

/* IPv4/UDP frame by hand; checksums are left 0 (the program does not
 * check them: the library does). */
static uint32_t build_udp(uint8_t *buf, size_t cap, const struct udp_spec *s)
{
	uint32_t hl = s->ihl * 4u, ulen = 8u + s->payload, tot = hl + ulen;
	uint8_t *u;

	assert_true(cap >= 14 + tot + 64);
	u = put_eth_ipv4(buf, cap, s->version, s->ihl, (uint16_t)(tot + s->tot_adj), s->frag, 17,
			 s->saddr, s->daddr);
	put16(u, s->sport);
	put16(u + 2, s->dport);
	put16(u + 4, (uint16_t)(ulen + s->ulen_adj));
	for (uint32_t i = 0; i < s->payload; i++)
		u[8 + i] = (uint8_t)i;
	return ipv4_frame_len(tot, s->cut);
}

static struct unet_udp_val udp_port_stats(uint16_t port)
{
	struct unet_udp_key k = { .addr = htonl(UDP_DST), .port = htons(port) };
	struct unet_udp_val v;

	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(g.skel->maps.unet_udp_ports), &k, &v), 0);
	return v;
}

static void expect_udp(const struct udp_spec *s, uint32_t verdict, enum unet_if_counter outcome)
{
	uint8_t buf[2048];

	expect_ipv4(buf, build_udp(buf, sizeof(buf), s), verdict, outcome);
}

static void test_udp_to_our_port_delivered(void **state)
{
	struct udp_spec s = udp_good(6000);
	struct unet_udp_val before, after;

	(void)state;
	need_xsk();
	before = udp_port_stats(6000);
	expect_udp(&s, XDP_REDIRECT, UNET_CTR_UDP_DELIVERED);
	after = udp_port_stats(6000);
	assert_int_equal(after.delivered - before.delivered, 1);
	assert_int_equal(after.delivered_bytes - before.delivered_bytes, 32);
	/* IP options are skipped, not refused */
	s.ihl = 7;
	expect_udp(&s, XDP_REDIRECT, UNET_CTR_UDP_DELIVERED);
	/* the filter's own source gets through a connected port */
	s = udp_good(6001);
	s.saddr = 0x0a000009;
	expect_udp(&s, XDP_REDIRECT, UNET_CTR_UDP_DELIVERED);
	/* Ethernet padding after a tiny datagram is not a length error */
	s = udp_good(6000);
	s.payload = 1;
	expect_udp(&s, XDP_REDIRECT, UNET_CTR_UDP_DELIVERED);
}

static void test_udp_other_traffic_passed(void **state)
{
	struct udp_spec s = udp_good(6003); /* no such port */

	(void)state;
	need_prog();
	expect_udp(&s, XDP_PASS, UNET_CTR_PASS);
	s = udp_good(6000);
	s.daddr = 0x0a000003; /* our port number, another address */
	expect_udp(&s, XDP_PASS, UNET_CTR_PASS);
	/* not UDP: TCP to the same port */
	uint8_t buf[256];
	uint32_t n;

	s = udp_good(6000);
	n = build_udp(buf, sizeof(buf), &s);
	buf[14 + 9] = 6;
	expect_pass_untouched(buf, n);
}

static void test_udp_fragments(void **state)
{
	struct udp_spec s = udp_good(6000);

	(void)state;
	need_prog();
	/* first fragment of a datagram for our port: dropped, counted */
	s.frag = 0x2000;
	expect_udp(&s, XDP_DROP, UNET_CTR_DROP_IP_FRAGMENT);
	s.frag = 0x2000 | 0x4000; /* DF + MF makes no sense, still a fragment */
	expect_udp(&s, XDP_DROP, UNET_CTR_DROP_IP_FRAGMENT);
	/* a later fragment has no UDP header: not provably ours, passed */
	s.frag = 0x00b9;
	expect_udp(&s, XDP_PASS, UNET_CTR_PASS);
	/* first fragment for a kernel port: the kernel's */
	s = udp_good(6003);
	s.frag = 0x2000;
	expect_udp(&s, XDP_PASS, UNET_CTR_PASS);
}

static void test_udp_malformed(void **state)
{
	struct udp_spec s;

	(void)state;
	need_prog();
	/* tot_len longer than the frame (truncated datagram) */
	s = udp_good(6000);
	s.tot_adj = 100;
	expect_udp(&s, XDP_DROP, UNET_CTR_DROP_IP_MALFORMED);
	/* tot_len shorter than IP + UDP headers */
	s = udp_good(6000);
	s.tot_adj = -(int)(8 + 32 + 1);
	expect_udp(&s, XDP_DROP, UNET_CTR_DROP_IP_MALFORMED);
	/* UDP length beyond the IP payload, and below 8 */
	s = udp_good(6000);
	s.ulen_adj = 1;
	expect_udp(&s, XDP_DROP, UNET_CTR_DROP_IP_MALFORMED);
	s.ulen_adj = -(8 + 32) + 7;
	expect_udp(&s, XDP_DROP, UNET_CTR_DROP_IP_MALFORMED);
	/* the frame ends inside the UDP header, after the ports */
	s = udp_good(6000);
	s.cut = 14 + 20 + 6;
	expect_udp(&s, XDP_DROP, UNET_CTR_DROP_IP_MALFORMED);
	/* ...or before the destination port: cannot be ours, passed */
	s.cut = 14 + 20 + 3;
	expect_udp(&s, XDP_PASS, UNET_CTR_PASS);
	/* truncated IP header, IHL < 5, version 6 in an IPv4 frame: passed */
	s = udp_good(6000);
	s.cut = 14 + 12;
	expect_udp(&s, XDP_PASS, UNET_CTR_PASS);
	s = udp_good(6000);
	s.ihl = 4;
	expect_udp(&s, XDP_PASS, UNET_CTR_PASS);
	s = udp_good(6000);
	s.version = 6;
	expect_udp(&s, XDP_PASS, UNET_CTR_PASS);
}

static void test_udp_filter(void **state)
{
	struct udp_spec s = udp_good(6001); /* connected to 10.0.0.9:7000 */
	struct unet_udp_val before, after;

	(void)state;
	need_prog();
	before = udp_port_stats(6001);
	expect_udp(&s, XDP_DROP, UNET_CTR_DROP_UDP_FILTER); /* wrong address */
	s.saddr = 0x0a000009;
	s.sport = 7001;
	expect_udp(&s, XDP_DROP, UNET_CTR_DROP_UDP_FILTER); /* wrong port */
	after = udp_port_stats(6001);
	assert_int_equal(after.drop_filter - before.drop_filter, 2);
}

/* A second AF_XDP socket, of its own UMEM, for the tests that need a
 * socket to come and go. */
struct extra_xsk {
	void *area;
	size_t size;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fill, tx;
	struct xsk_ring_cons comp, rx;
};

static void extra_xsk_close(struct extra_xsk *x)
{
	if (x->xsk)
		xsk_socket__delete(x->xsk);
	if (x->umem)
		xsk_umem__delete(x->umem);
	if (x->area)
		munmap(x->area, x->size);
	memset(x, 0, sizeof(*x));
}

/* Socket on ifname's queue; returns its fd or -errno. */
static int extra_xsk_open(struct extra_xsk *x, const char *ifname, uint32_t queue)
{
	struct xsk_socket_config cfg = {
		.rx_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
		.tx_size = XSK_RING_PROD__DEFAULT_NUM_DESCS,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_COPY,
	};
	int err;

	memset(x, 0, sizeof(*x));
	x->size = (size_t)NFRAMES * XSK_UMEM__DEFAULT_FRAME_SIZE;
	x->area = mmap(NULL, x->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x->area == MAP_FAILED) {
		x->area = NULL;
		return -errno;
	}
	err = xsk_umem__create(&x->umem, x->area, x->size, &x->fill, &x->comp, NULL);
	if (err) {
		x->umem = NULL;
		extra_xsk_close(x);
		return err;
	}
	err = xsk_socket__create(&x->xsk, ifname, queue, x->umem, &x->rx, &x->tx, &cfg);
	if (err) {
		x->xsk = NULL;
		extra_xsk_close(x);
		return err;
	}
	return xsk_socket__fd(x->xsk);
}

/*
 * A SIGKILLed owner's UDP port: the kernel took its sockets out of the
 * XSKMAP when they closed, and until someone reclaims the port (or takes
 * it over) its datagrams go to the kernel -- passed untouched, port
 * counters unchanged -- instead of being dropped.  An owner that has a
 * socket, only on another queue, is alive: drop_no_socket as before.  The
 * socket here is a real one: closing it is what empties the slot.
 */
static void test_udp_dead_owner_passed(void **state)
{
	struct udp_spec s = udp_good(6002); /* -> EP_NOSOCK */
	struct unet_udp_val before, after;
	int xsks_fd, fd;
	uint32_t idx = UNET_XSK_INDEX(EP_NOSOCK, 1);
	struct extra_xsk x = { 0 };

	(void)state;
	need_xsk();
	xsks_fd = bpf_map__fd(g.skel->maps.unet_xsks);
	before = udp_port_stats(6002);
	expect_udp(&s, XDP_PASS, UNET_CTR_PASS);
	after = udp_port_stats(6002);
	assert_memory_equal(&after, &before, sizeof(after));

	/* alive, with its one socket on queue 1 (of another device: the
	 * program only looks at the map); the frame comes on queue 0 */
	fd = g.mq_ifindex ? extra_xsk_open(&x, "unetq0", 1) : -ENODEV;
	if (fd < 0) {
		print_message("note: no second AF_XDP socket (%s); the fixture's "
			      "socket stands in, removed by hand\n", strerror(-fd));
		fd = xsk_socket__fd(g.xsk);
	}
	assert_int_equal(bpf_map_update_elem(xsks_fd, &idx, &fd, BPF_ANY), 0);
	before = udp_port_stats(6002);
	expect_udp(&s, XDP_DROP, UNET_CTR_DROP_NO_SOCKET);
	after = udp_port_stats(6002);
	assert_int_equal(after.drop_no_socket - before.drop_no_socket, 1);

	/* the owner dies: its socket closes and the kernel takes it out of
	 * the map (user space cannot look into an XSKMAP; the verdict below,
	 * pass where it was drop, is what shows the slot empty) */
	if (x.xsk)
		extra_xsk_close(&x);
	else
		assert_int_equal(bpf_map_delete_elem(xsks_fd, &idx), 0);
	before = udp_port_stats(6002);
	expect_udp(&s, XDP_PASS, UNET_CTR_PASS);
	after = udp_port_stats(6002);
	assert_memory_equal(&after, &before, sizeof(after));
}

/*
 * A UDP port or address entry left by a dead owner whose slot another
 * process has taken since (another token in the slot, with a live socket):
 * never delivered to the newcomer, even before anyone reclaims it -- the
 * datagram and the ARP frame are the kernel's, passed untouched, the
 * port's counters unchanged.  As for channels (test_stale_owner_dropped).
 */
static uint32_t build_arp(uint8_t *buf, uint16_t op, uint32_t spa, uint32_t tpa);

static void test_udp_stale_token_passed(void **state)
{
	struct udp_spec s = udp_good(6004);
	struct unet_udp_val before, after;
	struct snap want = one(UNET_CTR_UDP_DELIVERED);
	uint8_t buf[256];
	__be32 ak = htonl(0x0a00000a);

	(void)state;
	need_xsk();
	/* port 6004 and address 10.0.0.10: EP_SOCK's slot, an older token */
	assert_int_equal(add_udp_tok(UDP_DST, 6004, EP_SOCK, 0, 0, TOKEN_SOCK ^ 0xff00), 0);
	assert_int_equal(add_udp_addr_tok(0x0a00000a, EP_SOCK, UNET_UDP_ADDR_ARP, TOKEN_SOCK ^ 0xff00),
			 0);
	before = udp_port_stats(6004);
	expect_udp(&s, XDP_PASS, UNET_CTR_PASS);
	after = udp_port_stats(6004);
	assert_memory_equal(&after, &before, sizeof(after));
	expect_pass_untouched(buf, build_arp(buf, 1, 0x0a000016, 0x0a00000a));
	/* a zero token is nobody's */
	assert_int_equal(add_udp_tok(UDP_DST, 6004, EP_SOCK, 0, 0, 0), 0);
	expect_udp(&s, XDP_PASS, UNET_CTR_PASS);
	/* the same entries with the slot's token: delivered */
	assert_int_equal(add_udp(UDP_DST, 6004, EP_SOCK, 0, 0), 0);
	assert_int_equal(add_udp_addr(0x0a00000a, EP_SOCK, UNET_UDP_ADDR_ARP), 0);
	expect_udp(&s, XDP_REDIRECT, UNET_CTR_UDP_DELIVERED);
	want = one(UNET_CTR_ARP_DELIVERED);
	expect_run(buf, build_arp(buf, 1, 0x0a000016, 0x0a00000a), NULL, XDP_REDIRECT, &want);
	{
		struct unet_udp_key k = { .addr = htonl(UDP_DST), .port = htons(6004) };

		bpf_map_delete_elem(bpf_map__fd(g.skel->maps.unet_udp_ports), &k);
		bpf_map_delete_elem(bpf_map__fd(g.skel->maps.unet_udp_addrs), &ak);
	}
}

/* A live owner (socket on queue 0) and a datagram on queue 1 of a
 * multi-queue device: it has no socket there, the datagram is dropped
 * and counted (the kernel has no socket for the port either). */
static void test_udp_other_queue_dropped(void **state)
{
	struct udp_spec s = udp_good(6000);
	struct snap want = one(UNET_CTR_DROP_NO_SOCKET);
	struct unet_udp_val before, after;
	struct xdp_md ctx = { 0 };
	uint8_t buf[256];
	uint32_t n;

	(void)state;
	need_xsk();
	if (!g.mq_ifindex) {
		print_message("SKIP: cannot create a veth with 20 rx queues\n");
		skip();
	}
	n = build_udp(buf, sizeof(buf), &s);
	ctx.ingress_ifindex = (uint32_t)g.mq_ifindex;
	ctx.rx_queue_index = 1;
	before = udp_port_stats(6000);
	expect_run(buf, n, &ctx, XDP_DROP, &want);
	after = udp_port_stats(6000);
	assert_int_equal(after.drop_no_socket - before.drop_no_socket, 1);
	/* a queue no socket can be on: its own reason, the port's
	 * drop_no_socket as well */
	want = one(UNET_CTR_DROP_QUEUE_RANGE);
	ctx.rx_queue_index = UNET_MAX_QUEUES;
	before = udp_port_stats(6000);
	expect_run(buf, n, &ctx, XDP_DROP, &want);
	after = udp_port_stats(6000);
	assert_int_equal(after.drop_no_socket - before.drop_no_socket, 1);
	/* a dead owner's port on that queue: the kernel's, as on any queue */
	s = udp_good(6002);
	n = build_udp(buf, sizeof(buf), &s);
	want = one(UNET_CTR_PASS);
	expect_run(buf, n, &ctx, XDP_PASS, &want);
}

/* ARP frame (60 bytes, broadcast) from Ethernet source eth_src with sender
 * hardware address sha. */
static uint32_t build_arp_from(uint8_t *buf, uint16_t op, const uint8_t eth_src[6],
			       const uint8_t sha[6], uint32_t spa, uint32_t tpa)
{
	memset(buf, 0, 60);
	memset(buf, 0xff, 6);
	memcpy(buf + 6, eth_src, 6);
	put16(buf + 12, 0x0806);
	put16(buf + 14, 1);
	put16(buf + 16, 0x0800);
	buf[18] = 6;
	buf[19] = 4;
	put16(buf + 20, op);
	memcpy(buf + 22, sha, 6);
	put16(buf + 28, (uint16_t)(spa >> 16));
	put16(buf + 30, (uint16_t)spa);
	put16(buf + 38, (uint16_t)(tpa >> 16));
	put16(buf + 40, (uint16_t)tpa);
	return 60;
}

static uint32_t build_arp(uint8_t *buf, uint16_t op, uint32_t spa, uint32_t tpa)
{
	return build_arp_from(buf, op, PEER_MAC, PEER_MAC, spa, tpa);
}

static bool neigh_has(uint32_t ip, const uint8_t mac[6])
{
	__be32 k = htonl(ip);
	struct unet_neigh_val v;

	if (bpf_map_lookup_elem(bpf_map__fd(g.skel->maps.unet_neigh), &k, &v))
		return false;
	return !memcmp(v.mac, mac, 6) && v.updated_ns;
}

static void test_arp_for_unet_address(void **state)
{
	uint8_t buf[64];
	struct snap want = one(UNET_CTR_ARP_DELIVERED);

	(void)state;
	need_xsk();
	/* request for the U-Net-owned address: to its endpoint, sender learnt */
	expect_run(buf, build_arp(buf, 1, 0x0a000011, UDP_UNET_ADDR), NULL, XDP_REDIRECT, &want);
	assert_true(neigh_has(0x0a000011, PEER_MAC));
	/* reply to it, too */
	expect_run(buf, build_arp(buf, 2, 0x0a000012, UDP_UNET_ADDR), NULL, XDP_REDIRECT, &want);
	assert_true(neigh_has(0x0a000012, PEER_MAC));
}

/* ARP for the address a dead endpoint registered (it answered ARP for
 * it): passed, as for any address the kernel does not have; the sender is
 * still learnt. */
/* Whether unet_neigh has any entry for ip. */
static bool neigh_any(uint32_t ip)
{
	__be32 k = htonl(ip);
	struct unet_neigh_val v;

	return bpf_map_lookup_elem(bpf_map__fd(g.skel->maps.unet_neigh), &k, &v) == 0;
}

/*
 * ARP poisoning: unet_neigh learns a sender only if its hardware address
 * (sha) is the frame's Ethernet source and both are unicast and non-zero,
 * and its protocol address (spa) is not 0, broadcast or multicast.  Every
 * refused frame keeps its verdict (here: the kernel's address, passed
 * untouched; for the U-Net-owned address, still delivered).
 */
static void test_arp_learning_refused(void **state)
{
	static const uint8_t MCAST_MAC[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };
	static const uint8_t BCAST_MAC[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t ZERO_MAC[6] = { 0 };
	const struct {
		const char *what;
		const uint8_t *eth_src, *sha;
		uint32_t spa;
	} cases[] = {
		{ "sha differs from the Ethernet source", PEER_MAC, OTHER_MAC, 0x0a000031 },
		{ "Ethernet source differs from sha", OTHER_MAC, PEER_MAC, 0x0a000032 },
		{ "multicast sha", MCAST_MAC, MCAST_MAC, 0x0a000033 },
		{ "broadcast sha", BCAST_MAC, BCAST_MAC, 0x0a000034 },
		{ "zero sha", ZERO_MAC, ZERO_MAC, 0x0a000035 },
		{ "broadcast spa", PEER_MAC, PEER_MAC, 0xffffffff },
		{ "multicast spa", PEER_MAC, PEER_MAC, 0xe0000001 },
		{ "multicast spa (top of 224/4)", PEER_MAC, PEER_MAC, 0xefffffff },
		{ "spa 0 (an address probe)", PEER_MAC, PEER_MAC, 0 },
	};
	struct snap want = one(UNET_CTR_ARP_DELIVERED);
	uint8_t buf[64];

	(void)state;
	need_prog();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (uint16_t op = 1; op <= 2; op++) {
			expect_pass_untouched(buf, build_arp_from(buf, op, cases[i].eth_src,
								  cases[i].sha, cases[i].spa,
								  UDP_DST));
			if (neigh_any(cases[i].spa))
				fail_msg("learnt from an ARP %s with %s", op == 1 ? "request" : "reply",
					 cases[i].what);
		}
	}
	/* the verdict for the U-Net-owned address is unchanged: delivered,
	 * so the endpoint sees (and answers) it; nothing learnt */
	if (g.xsk_ok) {
		expect_run(buf, build_arp_from(buf, 1, PEER_MAC, OTHER_MAC, 0x0a000036, UDP_UNET_ADDR),
			   NULL, XDP_REDIRECT, &want);
		assert_false(neigh_any(0x0a000036));
	}
	/* and a good sender is still learnt */
	expect_pass_untouched(buf, build_arp_from(buf, 2, OTHER_MAC, OTHER_MAC, 0x0a000037, UDP_DST));
	assert_true(neigh_has(0x0a000037, OTHER_MAC));
}

static void test_arp_dead_owner_passed(void **state)
{
	uint8_t buf[64];

	(void)state;
	need_prog();
	expect_pass_untouched(buf, build_arp(buf, 1, 0x0a000015, UDP_DEAD_ADDR));
	assert_true(neigh_has(0x0a000015, PEER_MAC));
}

static void test_arp_for_kernel_address(void **state)
{
	uint8_t buf[64];

	(void)state;
	need_prog();
	/* the kernel's address: passed untouched, yet the sender is learnt,
	 * so an endpoint resolving from this address sees the reply */
	expect_pass_untouched(buf, build_arp(buf, 2, 0x0a000013, UDP_DST));
	assert_true(neigh_has(0x0a000013, PEER_MAC));
	/* ARP for an address without U-Net ports: nothing learnt */
	expect_pass_untouched(buf, build_arp(buf, 2, 0x0a000014, 0x0a000063));
	assert_false(neigh_has(0x0a000014, PEER_MAC));
	/* an address probe (sender 0.0.0.0) teaches nothing */
	expect_pass_untouched(buf, build_arp(buf, 1, 0, UDP_DST));
	assert_false(neigh_has(0, PEER_MAC));
}

/* Insert an 802.1Q / 802.1ad tag after the source MAC of the n-byte frame
 * in buf (cap bytes); returns the new length. */
static uint32_t add_vlan_tag(uint8_t *buf, uint32_t n, size_t cap, uint16_t tpid, uint16_t tci)
{
	assert_true(n + 4 <= cap);
	memmove(buf + 16, buf + 12, n - 12);
	put16(buf + 12, tpid);
	put16(buf + 14, tci);
	return n + 4;
}

/* UDP for a U-Net port behind a VLAN tag: the VLAN device's, passed
 * untouched, the port's counters unchanged -- also when untagged it would
 * be refused (first fragment, malformed). */
static void test_vlan_udp_passed(void **state)
{
	struct udp_spec s = udp_good(6000);
	struct unet_udp_val before, after;
	uint8_t buf[2048];
	uint32_t n;

	(void)state;
	need_prog();
	before = udp_port_stats(6000);
	n = add_vlan_tag(buf, build_udp(buf, sizeof(buf), &s), sizeof(buf), 0x8100, 100);
	expect_pass_untouched(buf, n);
	n = add_vlan_tag(buf, build_udp(buf, sizeof(buf), &s), sizeof(buf), 0x88a8, 100);
	expect_pass_untouched(buf, n);
	s.frag = 0x2000;
	n = add_vlan_tag(buf, build_udp(buf, sizeof(buf), &s), sizeof(buf), 0x8100, 100);
	expect_pass_untouched(buf, n);
	s = udp_good(6000);
	s.tot_adj = 100;
	n = add_vlan_tag(buf, build_udp(buf, sizeof(buf), &s), sizeof(buf), 0x8100, 100);
	expect_pass_untouched(buf, n);
	after = udp_port_stats(6000);
	assert_memory_equal(&after, &before, sizeof(after));
}

/* ARP behind a VLAN tag, even for the U-Net-owned address (untagged: to
 * its endpoint) or the kernel's one with U-Net ports: passed untouched,
 * and the sender is not learnt -- it is a neighbour on the VLAN. */
static void test_vlan_arp_passed(void **state)
{
	uint8_t buf[128];
	uint32_t n;

	(void)state;
	need_prog();
	n = add_vlan_tag(buf, build_arp(buf, 1, 0x0a000021, UDP_UNET_ADDR), sizeof(buf), 0x8100, 5);
	expect_pass_untouched(buf, n);
	assert_false(neigh_has(0x0a000021, PEER_MAC));
	n = add_vlan_tag(buf, build_arp(buf, 2, 0x0a000022, UDP_DST), sizeof(buf), 0x88a8, 5);
	expect_pass_untouched(buf, n);
	assert_false(neigh_has(0x0a000022, PEER_MAC));
}

/*
 * The library opens each pinned map by name and refuses one that is not
 * among the map ids of the program attached to the interface
 * (bpf_prog_info.map_ids), so every map it names (UNET_MAP_*: the core's
 * in lib/core/internal.h, the layers' in lib/udp/udp_impl.h,
 * lib/tcp/tcp_impl.h and lib/inet/inet.h) must be
 * used by the program -- a map the program never references is not in its
 * map_ids.  And every map of the object must be one of those names (a new
 * map needs its UNET_MAP_* and its place here).
 */
static void test_every_pinned_map_used(void **state)
{
	static const char *const lib_maps[] = {
		UNET_MAP_CHANNELS,  UNET_MAP_ENDPOINTS, UNET_MAP_CHAN_STATS,
		UNET_MAP_IF_STATS,  UNET_MAP_XSKS,	UNET_MAP_FAULTS,
		UNET_MAP_UDP_PORTS, UNET_MAP_INET_ADDRS, UNET_MAP_NEIGH,
		UNET_MAP_TCP_PORTS, UNET_MAP_CHAN_CFG, UNET_MAP_UDP6_PORTS,
		UNET_MAP_INET6_ADDRS, UNET_MAP_PORT_GROUPS, UNET_MAP_TCP6_PORTS,
	};
	enum { N_LIB = sizeof(lib_maps) / sizeof(lib_maps[0]) };
	char names[UNET_MAX_PROG_MAPS][BPF_OBJ_NAME_LEN] = { { 0 } };
	__u32 ids[UNET_MAX_PROG_MAPS] = { 0 };
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info), n;
	struct bpf_map *map;
	size_t nobj = 0;

	(void)state;
	need_prog();
	info.nr_map_ids = UNET_MAX_PROG_MAPS;
	info.map_ids = (__u64)(uintptr_t)ids;
	assert_int_equal(bpf_obj_get_info_by_fd(g.prog_fd, &info, &len), 0);
	/* the library reads at most UNET_MAX_PROG_MAPS ids */
	assert_true(info.nr_map_ids <= UNET_MAX_PROG_MAPS);
	n = info.nr_map_ids;
	for (__u32 i = 0; i < n; i++) {
		struct bpf_map_info mi = { 0 };
		__u32 mlen = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		assert_true(fd >= 0);
		assert_int_equal(bpf_obj_get_info_by_fd(fd, &mi, &mlen), 0);
		memcpy(names[i], mi.name, sizeof(names[i]));
		close(fd);
	}
	for (size_t m = 0; m < N_LIB; m++) {
		bool found = false;

		for (__u32 i = 0; i < n && !found; i++)
			found = !strncmp(names[i], lib_maps[m], BPF_OBJ_NAME_LEN - 1);
		if (!found)
			fail_msg("map %s (UNET_MAP_*) is not used by the program: "
				 "the library would refuse it", lib_maps[m]);
	}
	bpf_object__for_each_map(map, g.skel->obj)
	{
		bool known = false;

		for (size_t m = 0; m < N_LIB && !known; m++)
			known = !strcmp(bpf_map__name(map), lib_maps[m]);
		if (!known)
			fail_msg("map %s of the program has no UNET_MAP_* name",
				 bpf_map__name(map));
		nobj++;
	}
	assert_int_equal(nobj, N_LIB);
}

/* ---- TCP/IPv4 ---------------------------------------------------------------- */

struct tcp_spec {
	uint32_t daddr;
	uint16_t dport;
	uint8_t ihl;	  /* 5 default */
	uint8_t doff;	  /* TCP data offset in words, 5 default */
	uint16_t frag;	  /* flags + offset field */
	uint16_t payload; /* bytes after the TCP header */
	int tot_adj;	  /* added to the true tot_len */
	uint32_t cut;	  /* frame ends after this many bytes, if non-zero */
};

static struct tcp_spec tcp_good(uint16_t dport)
{
	return (struct tcp_spec){ .daddr = UDP_DST, .dport = dport, .ihl = 5, .doff = 5,
				  .payload = 100 };
}

/* IPv4/TCP frame by hand (checksums 0: lwIP checks them, not XDP). */
static uint32_t build_tcp(uint8_t *buf, size_t cap, const struct tcp_spec *s)
{
	uint32_t hl = s->ihl * 4u, tl = 20u + s->payload, tot = hl + tl;
	uint8_t *t;

	assert_true(cap >= 14 + tot + 64);
	t = put_eth_ipv4(buf, cap, 4, s->ihl, (uint16_t)(tot + s->tot_adj), s->frag, 6, UDP_SRC,
			 s->daddr);
	put16(t, 40000);
	put16(t + 2, s->dport);
	t[12] = (uint8_t)(s->doff << 4);
	t[13] = 0x10; /* ACK */
	for (uint32_t i = 0; i < s->payload; i++)
		t[20 + i] = (uint8_t)i;
	return ipv4_frame_len(tot, s->cut);
}

static struct unet_tcp_val tcp_port_stats(uint16_t port)
{
	struct unet_tcp_key k = { .addr = htonl(UDP_DST), .port = htons(port) };
	struct unet_tcp_val v;

	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(g.skel->maps.unet_tcp_ports), &k, &v), 0);
	return v;
}

static void expect_tcp(const struct tcp_spec *s, uint32_t verdict, enum unet_if_counter outcome)
{
	uint8_t buf[2048];

	expect_ipv4(buf, build_tcp(buf, sizeof(buf), s), verdict, outcome);
}

static void test_tcp_to_our_port_delivered(void **state)
{
	struct tcp_spec s = tcp_good(8000);
	struct unet_tcp_val before, after;

	(void)state;
	need_xsk();
	before = tcp_port_stats(8000);
	expect_tcp(&s, XDP_REDIRECT, UNET_CTR_TCP_DELIVERED);
	after = tcp_port_stats(8000);
	assert_int_equal(after.delivered - before.delivered, 1);
	assert_int_equal(after.delivered_bytes - before.delivered_bytes, 120);
	/* IP and TCP options are allowed */
	s.ihl = 6;
	s.doff = 8;
	expect_tcp(&s, XDP_REDIRECT, UNET_CTR_TCP_DELIVERED);
	/* a bare ACK (no data) in a minimum-size padded frame */
	s = tcp_good(8000);
	s.payload = 0;
	expect_tcp(&s, XDP_REDIRECT, UNET_CTR_TCP_DELIVERED);
	/* a full-size segment */
	s.payload = 1460;
	expect_tcp(&s, XDP_REDIRECT, UNET_CTR_TCP_DELIVERED);
}

/*
 * UDP and TCP in pieces (a jumbo MTU): only the first 1024 bytes are in
 * the linear part.  The datagram's and the segment's length is checked
 * against the whole frame: 9000 bytes of IP are delivered; an IP length
 * two bytes more than the frame holds is malformed (a program that
 * measured the first piece only drops the first, one that trusted the
 * IP length delivers the second); a transport header that does not lie
 * whole in the first piece is malformed.
 */
static void test_ip_in_pieces(void **state)
{
	struct udp_spec u = udp_good(6000);
	struct tcp_spec t = tcp_good(8000);
	static uint8_t buf[9200];
	struct unet_udp_val ub, ua;
	struct unet_tcp_val tb, ta;
	struct snap before, udp_ok = one(UNET_CTR_UDP_DELIVERED),
			    udp_bad = one(UNET_CTR_DROP_IP_MALFORMED),
			    tcp_ok = one(UNET_CTR_TCP_DELIVERED),
			    tcp_bad = one(UNET_CTR_DROP_TCP_MALFORMED);
	uint32_t n, ret = 0xdead;
	int err;

	(void)state;
	need_xsk();
	u.payload = 8972;
	n = build_udp(buf, sizeof(buf), &u);
	assert_int_equal(n, 9014);
	ub = udp_port_stats(6000);
	read_snap(&before);
	err = run_linear(buf, n, 1024, &ret);
	if (err == -EINVAL) {
		print_message("SKIP: this kernel cannot test-run a frame in pieces\n");
		skip();
	}
	assert_int_equal(err, 0);
	assert_int_equal(ret, XDP_REDIRECT);
	check_delta(&before, &udp_ok);
	ua = udp_port_stats(6000);
	assert_int_equal(ua.delivered_bytes - ub.delivered_bytes, 8972);

	u.tot_adj = 2;
	n = build_udp(buf, sizeof(buf), &u);
	read_snap(&before);
	assert_int_equal(run_linear(buf, n, 1024, &ret), 0);
	assert_int_equal(ret, XDP_DROP);
	check_delta(&before, &udp_bad);

	/* the ports in the first piece, the rest of the UDP header not */
	u.tot_adj = 0;
	n = build_udp(buf, sizeof(buf), &u);
	read_snap(&before);
	assert_int_equal(run_linear(buf, n, 14 + 20 + 6, &ret), 0);
	assert_int_equal(ret, XDP_DROP);
	check_delta(&before, &udp_bad);

	t.payload = 8960;
	n = build_tcp(buf, sizeof(buf), &t);
	assert_int_equal(n, 9014);
	tb = tcp_port_stats(8000);
	read_snap(&before);
	assert_int_equal(run_linear(buf, n, 1024, &ret), 0);
	assert_int_equal(ret, XDP_REDIRECT);
	check_delta(&before, &tcp_ok);
	ta = tcp_port_stats(8000);
	assert_int_equal(ta.delivered_bytes - tb.delivered_bytes, 8980);

	t.tot_adj = 2;
	n = build_tcp(buf, sizeof(buf), &t);
	read_snap(&before);
	assert_int_equal(run_linear(buf, n, 1024, &ret), 0);
	assert_int_equal(ret, XDP_DROP);
	check_delta(&before, &tcp_bad);

	t.tot_adj = 0;
	n = build_tcp(buf, sizeof(buf), &t);
	read_snap(&before);
	assert_int_equal(run_linear(buf, n, 14 + 20 + 10, &ret), 0);
	assert_int_equal(ret, XDP_DROP);
	check_delta(&before, &tcp_bad);
}

static void test_tcp_other_traffic_passed(void **state)
{
	struct tcp_spec s = tcp_good(8001); /* no such port: the kernel's */
	struct udp_spec u = udp_good(8000);

	(void)state;
	need_prog();
	expect_tcp(&s, XDP_PASS, UNET_CTR_PASS);
	s = tcp_good(8000);
	s.daddr = 0x0a000003; /* our port number, another address */
	expect_tcp(&s, XDP_PASS, UNET_CTR_PASS);
	/* UDP to the TCP port's number: a UDP port is not a TCP port */
	expect_udp(&u, XDP_PASS, UNET_CTR_PASS);
	/* a TCP port's number does not make a UDP port ours either way:
	 * TCP to UDP port 6000 is the kernel's */
	s = tcp_good(6000);
	expect_tcp(&s, XDP_PASS, UNET_CTR_PASS);
	/* a later fragment carries no ports: passed */
	s = tcp_good(8000);
	s.frag = 0x00b9;
	expect_tcp(&s, XDP_PASS, UNET_CTR_PASS);
}

static void test_tcp_malformed(void **state)
{
	struct tcp_spec s;

	(void)state;
	need_prog();
	/* data offset below 5 words, beyond the IP payload */
	s = tcp_good(8000);
	s.doff = 4;
	expect_tcp(&s, XDP_DROP, UNET_CTR_DROP_TCP_MALFORMED);
	s.doff = 15;
	s.payload = 10; /* 60 > 20 + 10 */
	expect_tcp(&s, XDP_DROP, UNET_CTR_DROP_TCP_MALFORMED);
	/* tot_len beyond the frame, and below IP + TCP headers */
	s = tcp_good(8000);
	s.tot_adj = 100;
	expect_tcp(&s, XDP_DROP, UNET_CTR_DROP_TCP_MALFORMED);
	s.tot_adj = -(int)(20 + 100) + 19;
	expect_tcp(&s, XDP_DROP, UNET_CTR_DROP_TCP_MALFORMED);
	/* the frame ends inside the TCP header, after the ports */
	s = tcp_good(8000);
	s.cut = 14 + 20 + 10;
	expect_tcp(&s, XDP_DROP, UNET_CTR_DROP_TCP_MALFORMED);
	/* a first fragment for our port */
	s = tcp_good(8000);
	s.frag = 0x2000;
	expect_tcp(&s, XDP_DROP, UNET_CTR_DROP_TCP_MALFORMED);
	/* before the destination port: cannot be told ours, passed */
	s = tcp_good(8000);
	s.cut = 14 + 20 + 3;
	expect_tcp(&s, XDP_PASS, UNET_CTR_PASS);
}

/* An owner with no socket anywhere (SIGKILLed, not reclaimed): the
 * kernel gets its segments (and answers with a reset). */
static void test_tcp_dead_owner_passed(void **state)
{
	struct tcp_spec s = tcp_good(8002);
	struct unet_tcp_val before, after;

	(void)state;
	need_xsk();
	before = tcp_port_stats(8002);
	expect_tcp(&s, XDP_PASS, UNET_CTR_PASS);
	after = tcp_port_stats(8002);
	assert_memory_equal(&after, &before, sizeof(after));
}

/* The loss hook applies to TCP segments for our ports, and only to them. */
static void test_tcp_injected_drop(void **state)
{
	struct tcp_spec s = tcp_good(8000);
	struct unet_tcp_val before, after;
	struct udp_spec u = udp_good(6000);

	(void)state;
	need_xsk();
	set_drop_ppm(1000000);
	before = tcp_port_stats(8000);
	for (int i = 0; i < 10; i++)
		expect_tcp(&s, XDP_DROP, UNET_CTR_DROP_INJECTED);
	after = tcp_port_stats(8000);
	assert_int_equal(after.drop_injected - before.drop_injected, 10);
	assert_int_equal(after.delivered - before.delivered, 0);
	/* the kernel's TCP is not touched */
	s.dport = 8001;
	expect_tcp(&s, XDP_PASS, UNET_CTR_PASS);
	/* nor is UDP over U-Net */
	expect_udp(&u, XDP_REDIRECT, UNET_CTR_UDP_DELIVERED);
	set_drop_ppm(0);
	s.dport = 8000;
	expect_tcp(&s, XDP_REDIRECT, UNET_CTR_TCP_DELIVERED);
}

/* ---- TCP/IPv4 fuzz ---------------------------------------------------------- */

/*
 * What bpf/xdp_tcp.h documents, written out again here from the frame's
 * bytes (not from the program): the verdict and the counter an IPv4/TCP
 * frame of n bytes gets.  *ours is set when the frame names a U-Net TCP
 * port; *bytes to what a delivered segment counts (IP payload).
 */
enum fz_tcp_out { FZ_PASS, FZ_MALFORMED, FZ_DELIVERED };

static enum fz_tcp_out fz_tcp_model(const uint8_t *f, uint32_t n, uint16_t *port, uint32_t *bytes)
{
	const uint8_t *ip = f + 14, *t;
	uint32_t hlen, tot, doff, daddr;
	uint16_t frag;

	*port = 0;
	if ((ip[0] >> 4) != 4 || (ip[0] & 0xf) < 5)
		return FZ_PASS;
	frag = (uint16_t)(ip[6] << 8 | ip[7]);
	if (frag & 0x1fff)
		return FZ_PASS; /* a later fragment: no ports */
	hlen = (ip[0] & 0xfu) * 4;
	if (14 + hlen + 4 > n)
		return FZ_PASS; /* the destination port is not in the frame */
	t = ip + hlen;
	daddr = (uint32_t)ip[16] << 24 | (uint32_t)ip[17] << 16 | (uint32_t)ip[18] << 8 | ip[19];
	*port = (uint16_t)(t[2] << 8 | t[3]);
	if (daddr != UDP_DST || (*port != 8000 && *port != 8002)) {
		*port = 0;
		return FZ_PASS; /* not a U-Net TCP port: the kernel's */
	}
	tot = (uint32_t)(ip[2] << 8 | ip[3]);
	if ((frag & 0x2000) || 14 + hlen + 20 > n || tot < hlen + 20 || 14 + tot > n)
		return FZ_MALFORMED;
	doff = (t[12] >> 4) * 4u;
	if (doff < 20 || doff > tot - hlen)
		return FZ_MALFORMED;
	if (*port == 8002)
		return FZ_PASS; /* its owner has no socket anywhere: the kernel resets */
	*bytes = tot - hlen;
	return FZ_DELIVERED;
}

/* One mutated IPv4/TCP frame into buf (cap >= 2048); returns its length. */
static uint32_t fz_tcp_frame(uint64_t *rng, uint8_t *buf, size_t cap)
{
	static const uint16_t ports[] = { 8000, 8000, 8000, 8000, 8000, 8000, 8002, 8001 };
	static const uint16_t frags[] = { 0, 0x4000, 0x2000, 0x0001, 0x1fff, 0x2001, 0xffff, 0x8000 };
	struct tcp_spec s = tcp_good(ports[fuzz_next(rng) % 8]);
	uint64_t r = fuzz_next(rng);
	uint32_t n, hl, tot;
	uint8_t *ip = buf + 14;

	s.ihl = (uint8_t)(5 + r % 3);
	s.doff = (uint8_t)(5 + (r >> 2) % 4);
	s.payload = (uint16_t)((r >> 4) % 4 == 0 ? (r >> 8) % 1461 : (r >> 8) % 64);
	if ((r >> 20) % 16 == 0)
		s.daddr = 0x0a000003; /* another host's address */
	n = build_tcp(buf, cap, &s);
	ip[20 + 4 * (s.ihl - 5) + 13] = (uint8_t)(r >> 24); /* any TCP flags */
	for (unsigned int k = 0, nm = 1 + (unsigned int)((r >> 32) % 4); k < nm; k++) {
		uint64_t x = fuzz_next(rng);
		uint32_t at;

		hl = (ip[0] & 0xfu) * 4;
		switch (x % 10) {
		case 0: /* a bit flipped in the headers */
			at = (uint32_t)((x >> 8) % (n < 14 + 80 ? n : 14 + 80));
			buf[at] ^= (uint8_t)(1u << ((x >> 32) % 8));
			break;
		case 1: /* a byte set anywhere */
			buf[(x >> 8) % n] = (uint8_t)(x >> 40);
			break;
		case 2: /* cut short: anywhere past the Ethernet header */
			n = 14 + (uint32_t)((x >> 8) % (n - 13));
			break;
		case 3: /* longer: trailing bytes after the datagram */
			at = (uint32_t)((x >> 8) % 64);
			for (uint32_t i = 0; i < at && n < cap; i++)
				buf[n++] = (uint8_t)(x >> (i % 56));
			break;
		case 4: /* IHL (and now and then the version) */
			ip[0] = (uint8_t)(((x >> 8) % 8 ? 4 : (x >> 12) % 16) << 4 | (x >> 16) % 16);
			break;
		case 5: { /* tot_len at an edge */
			uint32_t e[] = { 0, 1, hl + 19, hl + 20, n - 14, n - 13, n - 15, 0xffff,
					 hl, hl + (ip[hl + 12] >> 4) * 4u, hl + (ip[hl + 12] >> 4) * 4u - 1 };

			tot = e[(x >> 8) % (sizeof(e) / sizeof(e[0]))];
			put16(ip + 2, (uint16_t)tot);
			break;
		}
		case 6: /* fragment bits and offset */
			put16(ip + 6, frags[(x >> 8) % 8]);
			break;
		case 7: /* TCP data offset: any of the 16 */
			if (14 + hl + 13 <= n)
				ip[hl + 12] = (uint8_t)(((x >> 8) % 16) << 4 | (ip[hl + 12] & 0xf));
			break;
		case 8: /* the protocol or the EtherType */
			if ((x >> 8) % 2)
				ip[9] = (uint8_t)((x >> 8) % 4 ? 6 : x >> 16);
			else
				put16(buf + 12, (x >> 16) % 4 ? 0x0800 : (uint16_t)(x >> 24));
			break;
		default: /* the destination port: ours, the dead one's, another */
			if (14 + hl + 4 <= n)
				put16(ip + hl + 2, ports[(x >> 8) % 8]);
			break;
		}
	}
	return n;
}

/*
 * Seeded fuzz of the TCP path: valid segments for our ports (IP and TCP
 * options, any flags, 0..1460 bytes), each mutated 1-4 times (bits
 * flipped, bytes set, cut short, lengthened, IHL/version, tot_len at its
 * edges, fragment bits, data offset, protocol/EtherType, port), run
 * through the program.  Every IPv4/TCP frame's verdict is checked against
 * the rules written out again above (fz_tcp_model): a segment is
 * redirected only when it is for the live owner's port and well formed,
 * malformed ones for our ports are dropped and counted, everything else
 * is passed untouched.  Then the totals: tcp_delivered, drop_tcp_malformed
 * and the port's own counters moved by exactly the model's counts, every
 * frame counted once; and a valid segment after the storm is delivered.
 */
#define FZ_TCP_SEED 0x7463705f78647030ull /* "tcp_xdp0" */
#define FZ_TCP_FRAMES 1000000

static void test_tcp_fuzz(void **state)
{
	uint64_t seed = fuzz_seed(FZ_TCP_SEED), rng = seed, frames = fuzz_count(FZ_TCP_FRAMES);
	uint64_t want_del = 0, want_bytes = 0, want_mal = 0, model_pass = 0, other = 0;
	struct unet_tcp_val p0_before, p0_after, p2_before, p2_after;
	struct snap before, now;
	uint8_t buf[2048], out[2048];
	struct timespec t0, t1;
	uint64_t outcomes = 0;

	(void)state;
	need_xsk();
	set_drop_ppm(0);
	print_message("tcp fuzz: seed %#llx (UNET_FUZZ_SEED), %llu frames (UNET_FUZZ_COUNT)\n",
		      (unsigned long long)seed, (unsigned long long)frames);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	p0_before = tcp_port_stats(8000);
	p2_before = tcp_port_stats(8002);
	read_snap(&before);
	for (uint64_t i = 0; i < frames; i++) {
		uint32_t n = fz_tcp_frame(&rng, buf, sizeof(buf)), out_len = sizeof(out);
		uint32_t ret = 0xdead, bytes = 0, want;
		enum fz_tcp_out o = FZ_PASS;
		bool modelled = n >= 34 && buf[12] == 0x08 && buf[13] == 0 && buf[14 + 9] == 6;
		uint16_t port = 0;

		assert_int_equal(run_prog(buf, n, NULL, &ret, out, &out_len), 0);
		if (!modelled) {
			/* UDP, ARP, other EtherTypes: their own tests; here only
			 * that no TCP counter moves (checked in the totals) */
			other++;
			continue;
		}
		o = fz_tcp_model(buf, n, &port, &bytes);
		want = o == FZ_DELIVERED ? XDP_REDIRECT : o == FZ_MALFORMED ? XDP_DROP : XDP_PASS;
		if (ret != want)
			fail_msg("frame %llu (%u bytes, port %u): verdict %u, the rules say %u "
				 "(replay: UNET_FUZZ_SEED=%#llx)",
				 (unsigned long long)i, n, port, ret, want, (unsigned long long)seed);
		if (ret == XDP_PASS && (out_len != n || memcmp(out, buf, n)))
			fail_msg("frame %llu: passed but changed", (unsigned long long)i);
		want_del += o == FZ_DELIVERED;
		want_bytes += o == FZ_DELIVERED ? bytes : 0;
		want_mal += o == FZ_MALFORMED;
		model_pass += o == FZ_PASS;
	}
	read_snap(&now);
	p0_after = tcp_port_stats(8000);
	p2_after = tcp_port_stats(8002);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	for (int c = 0; c < UNET_CTR__COUNT; c++)
		if (c != UNET_CTR_RX)
			outcomes += now.ifc[c] - before.ifc[c];
	print_message("tcp fuzz: %llu delivered, %llu malformed, %llu passed, %llu not IPv4/TCP, "
		      "%.2f s\n",
		      (unsigned long long)want_del, (unsigned long long)want_mal,
		      (unsigned long long)model_pass, (unsigned long long)other,
		      (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	assert_int_equal(now.ifc[UNET_CTR_RX] - before.ifc[UNET_CTR_RX], frames);
	assert_int_equal(outcomes, frames); /* one outcome per frame */
	assert_int_equal(now.ifc[UNET_CTR_TCP_DELIVERED] - before.ifc[UNET_CTR_TCP_DELIVERED], want_del);
	assert_int_equal(now.ifc[UNET_CTR_DROP_TCP_MALFORMED] - before.ifc[UNET_CTR_DROP_TCP_MALFORMED],
			 want_mal);
	assert_int_equal(p0_after.delivered - p0_before.delivered, want_del);
	assert_int_equal(p0_after.delivered_bytes - p0_before.delivered_bytes, want_bytes);
	assert_int_equal(p0_after.drop_no_socket - p0_before.drop_no_socket, 0);
	assert_memory_equal(&p2_after, &p2_before, sizeof(p2_after));
	/* every kind of outcome was reached, or the fuzz tests little */
	assert_true(want_del > frames / 20 && want_mal > frames / 20 && model_pass > frames / 20);
	/* and a valid segment after the storm is delivered */
	{
		struct tcp_spec s = tcp_good(8000);

		expect_tcp(&s, XDP_REDIRECT, UNET_CTR_TCP_DELIVERED);
	}
}

/* ---- UDP/IPv6 and neighbour solicitations ------------------------------------
 * [2001:db8::1]:6000 -> EP_SOCK (any source); :6001 -> EP_SOCK, only from
 * [2001:db8::9]:7000; :6002 -> EP_NOSOCK.  Addresses: 2001:db8::1 the
 * kernel's, 2001:db8::7 U-Net's (EP_SOCK answers ND), 2001:db8::8 U-Net's,
 * registered by EP_NOSOCK (no socket at all).
 */
static void addr6(uint8_t a[16], uint8_t last)
{
	static const uint8_t base[16] = { 0x20, 0x01, 0x0d, 0xb8 };

	memcpy(a, base, 16);
	a[15] = last;
}

static int add_udp6(uint8_t last, uint16_t port, uint32_t ep, uint8_t rlast, uint16_t rport)
{
	struct unet_udp6_key k = { .port = htons(port) };
	struct unet_udp6_val v = { .endpoint = ep, .remote_port = htons(rport), .owner_pid = 1,
				   .owner_token = ep_token(ep) };

	addr6(k.addr, last);
	if (rlast)
		addr6(v.remote_addr, rlast);
	return bpf_map_update_elem(bpf_map__fd(g.skel->maps.unet_udp6_ports), &k, &v, BPF_ANY) ? -errno : 0;
}

static int add_udp6_addr(uint8_t last, uint32_t ep, uint32_t flags)
{
	uint8_t k[16];
	struct unet_udp_addr_val v = { .endpoint = ep, .flags = flags, .owner_token = ep_token(ep) };

	addr6(k, last);
	return bpf_map_update_elem(bpf_map__fd(g.skel->maps.unet_udp6_addrs), k, &v, BPF_ANY) ? -errno : 0;
}

static int add_udp6_fixture(void)
{
	return add_udp6(1, 6000, EP_SOCK, 0, 0) || add_udp6(1, 6001, EP_SOCK, 9, 7000) ||
	       add_udp6(1, 6002, EP_NOSOCK, 0, 0) || add_udp6_addr(1, EP_SOCK, 0) ||
	       add_udp6_addr(7, EP_SOCK, UNET_UDP6_ADDR_ND) ||
	       add_udp6_addr(8, EP_NOSOCK, UNET_UDP6_ADDR_ND);
}

struct udp6_spec {
	uint8_t src, dst;  /* last byte of 2001:db8::X */
	uint16_t sport, dport;
	uint8_t version;   /* 6 default */
	uint8_t next;	   /* next header, 17 default */
	uint16_t payload;  /* bytes present */
	int plen_adj;	   /* added to the true payload length */
	int ulen_adj;	   /* added to the true UDP length */
	uint32_t cut;	   /* frame ends after this many bytes, if non-zero */
	uint32_t pad;	   /* bytes of padding after the datagram */
};

static struct udp6_spec udp6_good(uint16_t dport)
{
	return (struct udp6_spec){ .src = 2, .dst = 1, .sport = 7000, .dport = dport,
				   .version = 6, .next = 17, .payload = 32 };
}

/* IPv6/UDP frame by hand; the checksum is left 0 (the program does not
 * check it: the library does). */
static uint32_t build_udp6(uint8_t *buf, size_t cap, const struct udp6_spec *s)
{
	uint32_t ulen = 8u + s->payload, n = 14 + 40 + ulen + s->pad;
	uint8_t *ip = buf + 14, *u = ip + 40;

	assert_true(cap >= n + 64);
	memset(buf, 0, cap);
	memcpy(buf, LOCAL_MAC, 6);
	memcpy(buf + 6, PEER_MAC, 6);
	put16(buf + 12, 0x86dd);
	ip[0] = (uint8_t)(s->version << 4);
	put16(ip + 4, (uint16_t)(ulen + s->plen_adj));
	ip[6] = s->next;
	ip[7] = 64;
	addr6(ip + 8, s->src);
	addr6(ip + 24, s->dst);
	put16(u, s->sport);
	put16(u + 2, s->dport);
	put16(u + 4, (uint16_t)(ulen + s->ulen_adj));
	for (uint32_t i = 0; i < s->payload; i++)
		u[8 + i] = (uint8_t)i;
	return s->cut ? s->cut : n;
}

static struct unet_udp6_val udp6_port_stats(uint16_t port)
{
	struct unet_udp6_key k = { .port = htons(port) };
	struct unet_udp6_val v;

	addr6(k.addr, 1);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(g.skel->maps.unet_udp6_ports), &k, &v), 0);
	return v;
}

static void expect_udp6(const struct udp6_spec *s, uint32_t verdict, enum unet_if_counter outcome)
{
	uint8_t buf[2048];

	expect_ipv4(buf, build_udp6(buf, sizeof(buf), s), verdict, outcome);
}

static void test_udp6_to_our_port_delivered(void **state)
{
	struct udp6_spec s = udp6_good(6000);
	struct unet_udp6_val before, after;

	(void)state;
	need_xsk();
	before = udp6_port_stats(6000);
	expect_udp6(&s, XDP_REDIRECT, UNET_CTR_UDP_DELIVERED);
	after = udp6_port_stats(6000);
	assert_int_equal(after.delivered - before.delivered, 1);
	assert_int_equal(after.delivered_bytes - before.delivered_bytes, 32);
	/* the connected port's own peer */
	s = udp6_good(6001);
	s.src = 9;
	expect_udp6(&s, XDP_REDIRECT, UNET_CTR_UDP_DELIVERED);
	/* Ethernet padding after the datagram is not a length error */
	s = udp6_good(6000);
	s.payload = 1;
	s.pad = 10;
	expect_udp6(&s, XDP_REDIRECT, UNET_CTR_UDP_DELIVERED);
}

static void test_udp6_other_traffic_passed(void **state)
{
	struct udp6_spec s = udp6_good(6003); /* no such port */

	(void)state;
	need_prog();
	expect_udp6(&s, XDP_PASS, UNET_CTR_PASS);
	s = udp6_good(6000);
	s.dst = 3; /* our port number, another address */
	expect_udp6(&s, XDP_PASS, UNET_CTR_PASS);
	s = udp6_good(6000);
	s.next = 6; /* TCP */
	expect_udp6(&s, XDP_PASS, UNET_CTR_PASS);
	s.next = 58; /* ICMPv6, not a solicitation */
	expect_udp6(&s, XDP_PASS, UNET_CTR_PASS);
	/* an extension header to the kernel's address: the kernel's */
	s = udp6_good(6000);
	s.next = 0;
	expect_udp6(&s, XDP_PASS, UNET_CTR_PASS);
	/* version 4 in an IPv6 frame, a truncated fixed header */
	s = udp6_good(6000);
	s.version = 4;
	expect_udp6(&s, XDP_PASS, UNET_CTR_PASS);
	s = udp6_good(6000);
	s.cut = 14 + 39;
	expect_udp6(&s, XDP_PASS, UNET_CTR_PASS);
	/* a dead owner's port (no socket on any queue) is the kernel's */
	s = udp6_good(6002);
	expect_udp6(&s, XDP_PASS, UNET_CTR_PASS);
}

static void test_udp6_malformed(void **state)
{
	struct udp6_spec s;

	(void)state;
	need_prog();
	/* payload length past the frame (a truncated datagram) */
	s = udp6_good(6000);
	s.plen_adj = 1;
	expect_udp6(&s, XDP_DROP, UNET_CTR_DROP_IP_MALFORMED);
	/* payload length below a UDP header */
	s = udp6_good(6000);
	s.plen_adj = -(8 + 32) + 7;
	expect_udp6(&s, XDP_DROP, UNET_CTR_DROP_IP_MALFORMED);
	/* UDP length past the payload length, and below 8 */
	s = udp6_good(6000);
	s.ulen_adj = 1;
	expect_udp6(&s, XDP_DROP, UNET_CTR_DROP_IP_MALFORMED);
	s.ulen_adj = -(8 + 32) + 7;
	expect_udp6(&s, XDP_DROP, UNET_CTR_DROP_IP_MALFORMED);
	/* the frame ends inside the UDP header, after the ports */
	s = udp6_good(6000);
	s.cut = 14 + 40 + 6;
	expect_udp6(&s, XDP_DROP, UNET_CTR_DROP_IP_MALFORMED);
	/* ...or before the destination port: cannot be ours, passed */
	s.cut = 14 + 40 + 3;
	expect_udp6(&s, XDP_PASS, UNET_CTR_PASS);
}

static void test_udp6_exthdr_dropped(void **state)
{
	static const uint8_t ext[] = { 0, 43, 44, 50, 51, 60, 135, 139, 140, 253, 254 };
	struct udp6_spec s = udp6_good(6000);

	(void)state;
	need_prog();
	/* to the address U-Net owns alone, whatever the extension header */
	s.dst = 7;
	for (size_t i = 0; i < sizeof(ext); i++) {
		s.next = ext[i];
		expect_udp6(&s, XDP_DROP, UNET_CTR_DROP_IP6_EXTHDR);
	}
}

static void test_udp6_filter(void **state)
{
	struct udp6_spec s = udp6_good(6001); /* connected to [2001:db8::9]:7000 */
	struct unet_udp6_val before, after;

	(void)state;
	need_prog();
	before = udp6_port_stats(6001);
	expect_udp6(&s, XDP_DROP, UNET_CTR_DROP_UDP_FILTER); /* wrong address */
	s.src = 9;
	s.sport = 7001;
	expect_udp6(&s, XDP_DROP, UNET_CTR_DROP_UDP_FILTER); /* wrong port */
	after = udp6_port_stats(6001);
	assert_int_equal(after.drop_filter - before.drop_filter, 2);
}

/* ---- TCP/IPv6 ---------------------------------------------------------------- */

/* TCP/IPv6 ports: [2001:db8::1]:8000 -> EP_SOCK, [2001:db8::1]:8002 ->
 * EP_NOSOCK, [2001:db8::7]:8000 -> EP_SOCK (the address U-Net owns
 * alone in the UDP/IPv6 fixture). */
static int add_tcp6(uint8_t last, uint16_t port, uint32_t ep)
{
	struct unet_tcp6_key k = { .port = htons(port) };
	struct unet_tcp_val v = { .endpoint = ep, .owner_pid = 1, .owner_token = ep_token(ep) };

	addr6(k.addr, last);
	return bpf_map_update_elem(bpf_map__fd(g.skel->maps.unet_tcp6_ports), &k, &v, BPF_ANY) ? -errno : 0;
}

static int add_tcp6_fixture(void)
{
	return add_tcp6(1, 8000, EP_SOCK) || add_tcp6(1, 8002, EP_NOSOCK) ||
	       add_tcp6(7, 8000, EP_SOCK);
}

struct tcp6_spec {
	uint8_t dst;	  /* last byte of 2001:db8::X */
	uint16_t dport;
	uint8_t version;  /* 6 default */
	uint8_t next;	  /* next header, 6 default */
	uint8_t doff;	  /* TCP data offset in words, 5 default */
	uint16_t payload; /* bytes after the TCP header */
	int plen_adj;	  /* added to the true payload length */
	uint32_t cut;	  /* frame ends after this many bytes, if non-zero */
	uint32_t pad;	  /* bytes of padding after the segment */
};

static struct tcp6_spec tcp6_good(uint16_t dport)
{
	return (struct tcp6_spec){ .dst = 1, .dport = dport, .version = 6, .next = 6, .doff = 5,
				   .payload = 100 };
}

/* IPv6/TCP frame by hand (checksum 0: the library checks it, not XDP). */
static uint32_t build_tcp6(uint8_t *buf, size_t cap, const struct tcp6_spec *s)
{
	uint32_t tl = 20u + s->payload, n = 14 + 40 + tl + s->pad;
	uint8_t *ip = buf + 14, *t = ip + 40;

	assert_true(cap >= n + 64);
	memset(buf, 0, cap);
	memcpy(buf, LOCAL_MAC, 6);
	memcpy(buf + 6, PEER_MAC, 6);
	put16(buf + 12, 0x86dd);
	ip[0] = (uint8_t)(s->version << 4);
	put16(ip + 4, (uint16_t)(tl + s->plen_adj));
	ip[6] = s->next;
	ip[7] = 64;
	addr6(ip + 8, 2);
	addr6(ip + 24, s->dst);
	put16(t, 40000);
	put16(t + 2, s->dport);
	t[12] = (uint8_t)(s->doff << 4);
	t[13] = 0x10; /* ACK */
	for (uint32_t i = 0; i < s->payload; i++)
		t[20 + i] = (uint8_t)i;
	return s->cut ? s->cut : n;
}

static struct unet_tcp_val tcp6_port_stats(uint8_t last, uint16_t port)
{
	struct unet_tcp6_key k = { .port = htons(port) };
	struct unet_tcp_val v;

	addr6(k.addr, last);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(g.skel->maps.unet_tcp6_ports), &k, &v), 0);
	return v;
}

static void expect_tcp6(const struct tcp6_spec *s, uint32_t verdict, enum unet_if_counter outcome)
{
	uint8_t buf[2048];

	expect_ipv4(buf, build_tcp6(buf, sizeof(buf), s), verdict, outcome);
}

static void test_tcp6_to_our_port_delivered(void **state)
{
	struct tcp6_spec s = tcp6_good(8000);
	struct unet_tcp_val before, after;

	(void)state;
	need_xsk();
	before = tcp6_port_stats(1, 8000);
	expect_tcp6(&s, XDP_REDIRECT, UNET_CTR_TCP_DELIVERED);
	after = tcp6_port_stats(1, 8000);
	assert_int_equal(after.delivered - before.delivered, 1);
	assert_int_equal(after.delivered_bytes - before.delivered_bytes, 120);
	/* TCP options */
	s.doff = 15;
	expect_tcp6(&s, XDP_REDIRECT, UNET_CTR_TCP_DELIVERED);
	/* a bare ACK, Ethernet padding after it */
	s = tcp6_good(8000);
	s.payload = 0;
	s.pad = 6;
	expect_tcp6(&s, XDP_REDIRECT, UNET_CTR_TCP_DELIVERED);
	/* a full-size segment at MTU 1500 */
	s = tcp6_good(8000);
	s.payload = 1440;
	expect_tcp6(&s, XDP_REDIRECT, UNET_CTR_TCP_DELIVERED);
	/* the address U-Net owns alone */
	s = tcp6_good(8000);
	s.dst = 7;
	expect_tcp6(&s, XDP_REDIRECT, UNET_CTR_TCP_DELIVERED);
}

static void test_tcp6_other_traffic_passed(void **state)
{
	struct tcp6_spec s = tcp6_good(8001); /* no such port: the kernel's */

	(void)state;
	need_prog();
	expect_tcp6(&s, XDP_PASS, UNET_CTR_PASS);
	s = tcp6_good(8000);
	s.dst = 3; /* our port number, another address */
	expect_tcp6(&s, XDP_PASS, UNET_CTR_PASS);
	/* the IPv4 map's port is not an IPv6 port, and UDP/IPv6 ports are
	 * not TCP ports */
	s = tcp6_good(6000);
	expect_tcp6(&s, XDP_PASS, UNET_CTR_PASS);
	/* UDP to the TCP port's number */
	s = tcp6_good(8000);
	s.next = 17;
	expect_tcp6(&s, XDP_PASS, UNET_CTR_PASS);
	/* an extension header before TCP, to the kernel's address */
	s = tcp6_good(8000);
	s.next = 0;
	expect_tcp6(&s, XDP_PASS, UNET_CTR_PASS);
	/* version 4 in an IPv6 frame; cut before the destination port */
	s = tcp6_good(8000);
	s.version = 4;
	expect_tcp6(&s, XDP_PASS, UNET_CTR_PASS);
	s = tcp6_good(8000);
	s.cut = 14 + 40 + 3;
	expect_tcp6(&s, XDP_PASS, UNET_CTR_PASS);
	/* a dead owner's port: the kernel answers with a reset */
	s = tcp6_good(8002);
	expect_tcp6(&s, XDP_PASS, UNET_CTR_PASS);
}

static void test_tcp6_malformed(void **state)
{
	struct tcp6_spec s;

	(void)state;
	need_prog();
	/* payload length past the frame (truncated), below a TCP header,
	 * 0 (a jumbogram's) */
	s = tcp6_good(8000);
	s.plen_adj = 1;
	expect_tcp6(&s, XDP_DROP, UNET_CTR_DROP_TCP_MALFORMED);
	s.plen_adj = -(20 + 100) + 19;
	expect_tcp6(&s, XDP_DROP, UNET_CTR_DROP_TCP_MALFORMED);
	s.plen_adj = -(20 + 100);
	expect_tcp6(&s, XDP_DROP, UNET_CTR_DROP_TCP_MALFORMED);
	/* data offset below 5 words, beyond the payload */
	s = tcp6_good(8000);
	s.doff = 4;
	expect_tcp6(&s, XDP_DROP, UNET_CTR_DROP_TCP_MALFORMED);
	s.doff = 15;
	s.payload = 10; /* 60 > 20 + 10 */
	expect_tcp6(&s, XDP_DROP, UNET_CTR_DROP_TCP_MALFORMED);
	/* the frame ends inside the TCP header, after the ports */
	s = tcp6_good(8000);
	s.cut = 14 + 40 + 10;
	expect_tcp6(&s, XDP_DROP, UNET_CTR_DROP_TCP_MALFORMED);
}

/* An extension header (a fragment header included) before TCP, to the
 * address U-Net owns alone: dropped, never walked. */
static void test_tcp6_exthdr_dropped(void **state)
{
	static const uint8_t ext[] = { 0, 43, 44, 60 };
	struct tcp6_spec s = tcp6_good(8000);
	struct unet_tcp_val before, after;

	(void)state;
	need_prog();
	s.dst = 7;
	before = tcp6_port_stats(7, 8000);
	for (size_t i = 0; i < sizeof(ext); i++) {
		s.next = ext[i];
		expect_tcp6(&s, XDP_DROP, UNET_CTR_DROP_IP6_EXTHDR);
	}
	after = tcp6_port_stats(7, 8000);
	assert_int_equal(after.delivered, before.delivered);
}

/* An extension header before TCP to the kernel's address: a segment for
 * one of our ports is dropped (the kernel, with only our holder socket
 * on the port, would answer with a reset); the chain is walked, up to 4
 * headers; anything else goes to the kernel as before. */
static void test_tcp6_exthdr_kernel_addr(void **state)
{
	uint8_t buf[2048], *ip = buf + 14, *x;
	uint32_t n;
	struct tcp6_spec s = tcp6_good(8000);
	struct snap want = one(UNET_CTR_DROP_IP6_EXTHDR);

	(void)state;
	need_xsk();
	/* hop-by-hop (8 bytes) then TCP to our port: dropped */
	n = build_tcp6(buf, sizeof(buf), &s);
	memmove(ip + 48, ip + 40, n - 54);
	x = ip + 40;
	memset(x, 0, 8);
	x[0] = 6;
	ip[6] = 0;
	n += 8;
	expect_run(buf, n, NULL, XDP_DROP, &want);
	/* destination options of 16 bytes, then a first fragment, then TCP */
	n = build_tcp6(buf, sizeof(buf), &s);
	memmove(ip + 64, ip + 40, n - 54);
	memset(ip + 40, 0, 24);
	ip[6] = 60;
	ip[40] = 44; /* next: fragment */
	ip[41] = 1;  /* (1 + 1) * 8 bytes */
	ip[56] = 6;  /* fragment header's next: TCP; offset 0, M set */
	ip[59] = 1;
	n += 24;
	expect_run(buf, n, NULL, XDP_DROP, &want);
	/* a later fragment: no ports, the kernel's */
	ip[58] = 0x05;
	expect_pass_untouched(buf, n);
	/* the same hop-by-hop to a port of no one: the kernel's */
	s = tcp6_good(8001);
	n = build_tcp6(buf, sizeof(buf), &s);
	memmove(ip + 48, ip + 40, n - 54);
	memset(ip + 40, 0, 8);
	ip[40] = 6;
	ip[6] = 0;
	expect_pass_untouched(buf, n + 8);
	/* to a dead owner's port: the kernel's (it answers with a reset) */
	s = tcp6_good(8002);
	n = build_tcp6(buf, sizeof(buf), &s);
	memmove(ip + 48, ip + 40, n - 54);
	memset(ip + 40, 0, 8);
	ip[40] = 6;
	ip[6] = 0;
	expect_pass_untouched(buf, n + 8);
	/* five hop-by-hop headers, past the walk: to an address U-Net uses,
	 * dropped (its TCP header is out of sight; the kernel's holder
	 * socket would answer it), to any other the kernel's */
	for (int other = 0; other < 2; other++) {
		s = tcp6_good(8000);
		if (other)
			s.dst = 9;
		n = build_tcp6(buf, sizeof(buf), &s);
		memmove(ip + 80, ip + 40, n - 54);
		memset(ip + 40, 0, 40);
		for (int i = 0; i < 5; i++)
			ip[40 + 8 * i] = i < 4 ? 0 : 6;
		ip[6] = 0;
		if (other)
			expect_pass_untouched(buf, n + 40);
		else
			expect_run(buf, n + 40, NULL, XDP_DROP, &want);
	}
}

/* The loss hook applies to IPv6 segments for our ports too. */
static void test_tcp6_injected_drop(void **state)
{
	struct tcp6_spec s = tcp6_good(8000);
	struct unet_tcp_val before, after;

	(void)state;
	need_xsk();
	set_drop_ppm(1000000);
	before = tcp6_port_stats(1, 8000);
	for (int i = 0; i < 5; i++)
		expect_tcp6(&s, XDP_DROP, UNET_CTR_DROP_INJECTED);
	after = tcp6_port_stats(1, 8000);
	assert_int_equal(after.drop_injected - before.drop_injected, 5);
	set_drop_ppm(0);
	expect_tcp6(&s, XDP_REDIRECT, UNET_CTR_TCP_DELIVERED);
}

/* A neighbour solicitation for 2001:db8::target, hop limit hl. */
static uint32_t build_ns(uint8_t *buf, size_t cap, uint8_t target, uint8_t hl, uint8_t type)
{
	uint8_t *ip = buf + 14, *icmp = ip + 40;

	assert_true(cap >= 14 + 40 + 32);
	memset(buf, 0, cap);
	memcpy(buf, LOCAL_MAC, 6);
	memcpy(buf + 6, PEER_MAC, 6);
	put16(buf + 12, 0x86dd);
	ip[0] = 0x60;
	put16(ip + 4, 32);
	ip[6] = 58;
	ip[7] = hl;
	addr6(ip + 8, 2);
	addr6(ip + 24, target);
	icmp[0] = type;
	addr6(icmp + 8, target);
	icmp[24] = 1; /* source link-layer address */
	icmp[25] = 1;
	memcpy(icmp + 26, PEER_MAC, 6);
	return 14 + 40 + 32;
}

static void test_nd_solicitations(void **state)
{
	uint8_t buf[256];
	struct snap want = one(UNET_CTR_ND_DELIVERED);

	(void)state;
	need_xsk();
	/* for the address U-Net owns alone: to its endpoint */
	expect_run(buf, build_ns(buf, sizeof(buf), 7, 255, 135), NULL, XDP_REDIRECT, &want);
	/* not from the link itself (hop limit below 255): not believed */
	expect_pass_untouched(buf, build_ns(buf, sizeof(buf), 7, 254, 135));
	/* for the kernel's address, for nobody's, for a dead owner's */
	expect_pass_untouched(buf, build_ns(buf, sizeof(buf), 1, 255, 135));
	expect_pass_untouched(buf, build_ns(buf, sizeof(buf), 3, 255, 135));
	expect_pass_untouched(buf, build_ns(buf, sizeof(buf), 8, 255, 135));
	/* an advertisement, and a solicitation cut before its target */
	expect_pass_untouched(buf, build_ns(buf, sizeof(buf), 7, 255, 136));
	expect_pass_untouched(buf, 14 + 40 + 20);
}

/* ---- SO_REUSEPORT groups ------------------------------------------------------
 * A UDP or TCP port entry with UNET_PORT_F_GROUP goes to one member of
 * its group in unet_port_groups: the member at the flow's place
 * (unet_port_group_hash of the source), or the next one that is its
 * slot's incarnation and has a socket on the arrival queue.  Only EP_SOCK
 * has a socket (queue 0), so a flow whose place is another member's shows
 * up as moved: delivered, counted on EP_SOCK's place.
 */
#define GROUP_UDP_PORT 6010
#define GROUP_TCP_PORT 8010

/* The group at (UDP_DST, port, proto): n places, eps[i] with tokens[i]. */
static void set_group(uint8_t proto, uint16_t port, const uint32_t *eps, const uint64_t *tokens,
		      uint32_t n, uint32_t count)
{
	struct unet_group_key k = { .addr = htonl(UDP_DST), .port = htons(port), .proto = proto };
	struct unet_group_val v;

	memset(&v, 0, sizeof(v));
	v.uid = 0;
	v.count = count;
	for (uint32_t i = 0; i < n && i < UNET_PORT_GROUP_MAX; i++) {
		v.m[i].endpoint = eps[i];
		v.m[i].token = tokens[i];
		v.m[i].pid = 1;
	}
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(g.skel->maps.unet_port_groups), &k, &v,
					     BPF_ANY), 0);
}

static struct unet_group_val get_group(uint8_t proto, uint16_t port)
{
	struct unet_group_key k = { .addr = htonl(UDP_DST), .port = htons(port), .proto = proto };
	struct unet_group_val v;

	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(g.skel->maps.unet_port_groups), &k, &v), 0);
	return v;
}

static void del_group(uint8_t proto, uint16_t port)
{
	struct unet_group_key k = { .addr = htonl(UDP_DST), .port = htons(port), .proto = proto };

	bpf_map_delete_elem(bpf_map__fd(g.skel->maps.unet_port_groups), &k);
}

/* The group's port entries; their own owner is EP_NOSOCK with a stale
 * token: a group's entry is judged by its members, not by whom it names. */
static void set_group_ports(void)
{
	struct unet_udp_key uk = { .addr = htonl(UDP_DST), .port = htons(GROUP_UDP_PORT) };
	struct unet_udp_val uv = { .endpoint = EP_NOSOCK, .flags = UNET_PORT_F_GROUP,
				   .owner_pid = 1, .owner_token = TOKEN_NOSOCK ^ 1 };
	struct unet_tcp_key tk = { .addr = htonl(UDP_DST), .port = htons(GROUP_TCP_PORT) };
	struct unet_tcp_val tv = { .endpoint = EP_NOSOCK,
				   .flags = UNET_TCP_PORT_LISTEN | UNET_PORT_F_GROUP,
				   .owner_pid = 1, .owner_token = TOKEN_NOSOCK ^ 1 };

	assert_int_equal(bpf_map_update_elem(bpf_map__fd(g.skel->maps.unet_udp_ports), &uk, &uv,
					     BPF_ANY), 0);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(g.skel->maps.unet_tcp_ports), &tk, &tv,
					     BPF_ANY), 0);
}

/* Every source is delivered, to the member that can take it; sources
 * whose place is the member without a socket move to the next place. */
static void test_group_udp_delivered(void **state)
{
	const uint32_t eps[2] = { EP_NOSOCK, EP_SOCK };
	const uint64_t toks[2] = { TOKEN_NOSOCK, TOKEN_SOCK };
	struct unet_udp_val before, after;
	struct unet_group_val gv;
	uint32_t moved = 0;

	(void)state;
	need_xsk();
	set_group_ports();
	set_group(IPPROTO_UDP, GROUP_UDP_PORT, eps, toks, 2, 2);
	before = udp_port_stats(GROUP_UDP_PORT);
	for (uint16_t sport = 7000; sport < 7016; sport++) {
		struct udp_spec s = udp_good(GROUP_UDP_PORT);

		s.sport = sport;
		moved += unet_port_group_hash(htonl(UDP_SRC), htons(sport)) % 2 == 0;
		expect_udp(&s, XDP_REDIRECT, UNET_CTR_UDP_DELIVERED);
	}
	assert_true(moved > 0 && moved < 16); /* both places were some flow's */
	after = udp_port_stats(GROUP_UDP_PORT);
	assert_int_equal(after.delivered - before.delivered, 16);
	gv = get_group(IPPROTO_UDP, GROUP_UDP_PORT);
	assert_int_equal(gv.m[0].delivered, 0);
	assert_int_equal(gv.m[1].delivered, 16);
	del_group(IPPROTO_UDP, GROUP_UDP_PORT);
}

/* A member that is not its slot's incarnation (the slot was reused: a
 * foreign process's endpoint now) is never chosen, though its slot has a
 * socket: with no other member alive, the port is the kernel's. */
static void test_group_foreign_member_passed(void **state)
{
	const uint32_t eps[2] = { EP_SOCK, EP_NOSOCK };
	const uint64_t toks[2] = { TOKEN_SOCK ^ 1, TOKEN_NOSOCK };
	struct udp_spec s = udp_good(GROUP_UDP_PORT);
	struct tcp_spec t = tcp_good(GROUP_TCP_PORT);
	struct unet_group_val gv;

	(void)state;
	need_xsk();
	set_group_ports();
	set_group(IPPROTO_UDP, GROUP_UDP_PORT, eps, toks, 2, 2);
	set_group(IPPROTO_TCP, GROUP_TCP_PORT, eps, toks, 2, 2);
	for (uint16_t sport = 7000; sport < 7008; sport++) {
		s.sport = sport;
		expect_udp(&s, XDP_PASS, UNET_CTR_PASS);
	}
	expect_tcp(&t, XDP_PASS, UNET_CTR_PASS);
	gv = get_group(IPPROTO_UDP, GROUP_UDP_PORT);
	assert_int_equal(gv.m[0].delivered + gv.m[1].delivered, 0);
	del_group(IPPROTO_UDP, GROUP_UDP_PORT);
	del_group(IPPROTO_TCP, GROUP_TCP_PORT);
}

/* A port entry that says group with no group, or a group whose count is
 * 0 or past the member array: not ours, passed untouched. */
static void test_group_bad_values_passed(void **state)
{
	const uint32_t eps[UNET_PORT_GROUP_MAX] = { EP_SOCK };
	const uint64_t toks[UNET_PORT_GROUP_MAX] = { TOKEN_SOCK };
	struct udp_spec s = udp_good(GROUP_UDP_PORT);

	(void)state;
	need_xsk();
	set_group_ports();
	del_group(IPPROTO_UDP, GROUP_UDP_PORT);
	expect_udp(&s, XDP_PASS, UNET_CTR_PASS);
	set_group(IPPROTO_UDP, GROUP_UDP_PORT, eps, toks, 1, 0);
	expect_udp(&s, XDP_PASS, UNET_CTR_PASS);
	set_group(IPPROTO_UDP, GROUP_UDP_PORT, eps, toks, 1, UNET_PORT_GROUP_MAX + 1);
	expect_udp(&s, XDP_PASS, UNET_CTR_PASS);
	set_group(IPPROTO_UDP, GROUP_UDP_PORT, eps, toks, 1, 0xffffffffu);
	expect_udp(&s, XDP_PASS, UNET_CTR_PASS);
	/* the TCP group of the same port is another key */
	set_group(IPPROTO_TCP, GROUP_UDP_PORT, eps, toks, 1, 1);
	set_group(IPPROTO_UDP, GROUP_UDP_PORT, eps, toks, 1, 0);
	expect_udp(&s, XDP_PASS, UNET_CTR_PASS);
	/* a whole group of 8, the last place the only live one */
	{
		uint32_t e8[UNET_PORT_GROUP_MAX];
		uint64_t t8[UNET_PORT_GROUP_MAX];

		for (int i = 0; i < UNET_PORT_GROUP_MAX; i++) {
			e8[i] = EP_NOSOCK;
			t8[i] = TOKEN_NOSOCK ^ 1;
		}
		e8[UNET_PORT_GROUP_MAX - 1] = EP_SOCK;
		t8[UNET_PORT_GROUP_MAX - 1] = TOKEN_SOCK;
		set_group(IPPROTO_UDP, GROUP_UDP_PORT, e8, t8, UNET_PORT_GROUP_MAX,
			  UNET_PORT_GROUP_MAX);
		for (uint16_t sport = 7000; sport < 7008; sport++) {
			s.sport = sport;
			expect_udp(&s, XDP_REDIRECT, UNET_CTR_UDP_DELIVERED);
		}
	}
	del_group(IPPROTO_UDP, GROUP_UDP_PORT);
	del_group(IPPROTO_TCP, GROUP_UDP_PORT);
}

/* A live member with a socket, but not on the arrival queue, and no
 * other: the port stays U-Net's (dropped, counted); once its socket is
 * gone (it died) the kernel gets the port's traffic. */
static void test_group_no_socket_dropped(void **state)
{
	const uint32_t eps[1] = { EP_NOSOCK };
	const uint64_t toks[1] = { TOKEN_NOSOCK };
	struct udp_spec s = udp_good(GROUP_UDP_PORT);
	uint32_t idx = UNET_XSK_INDEX(EP_NOSOCK, 1);
	struct unet_udp_val before, after;
	int xsks_fd, fd;

	(void)state;
	need_xsk();
	set_group_ports();
	set_group(IPPROTO_UDP, GROUP_UDP_PORT, eps, toks, 1, 1);
	expect_udp(&s, XDP_PASS, UNET_CTR_PASS);
	xsks_fd = bpf_map__fd(g.skel->maps.unet_xsks);
	fd = xsk_socket__fd(g.xsk); /* stands in on queue 1: the program only looks at the map */
	assert_int_equal(bpf_map_update_elem(xsks_fd, &idx, &fd, BPF_ANY), 0);
	before = udp_port_stats(GROUP_UDP_PORT);
	expect_udp(&s, XDP_DROP, UNET_CTR_DROP_NO_SOCKET);
	after = udp_port_stats(GROUP_UDP_PORT);
	assert_int_equal(after.drop_no_socket - before.drop_no_socket, 1);
	assert_int_equal(bpf_map_delete_elem(xsks_fd, &idx), 0);
	expect_udp(&s, XDP_PASS, UNET_CTR_PASS);
	del_group(IPPROTO_UDP, GROUP_UDP_PORT);
}

/* A listener group: every segment of a connection goes where its source
 * hashes, and a member without a socket hands its share on. */
static void test_group_tcp_delivered(void **state)
{
	const uint32_t eps[3] = { EP_NOSOCK, EP_SOCK, EP_NOSOCK };
	const uint64_t toks[3] = { TOKEN_NOSOCK, TOKEN_SOCK, TOKEN_NOSOCK ^ 1 };
	struct tcp_spec t = tcp_good(GROUP_TCP_PORT);
	struct unet_tcp_val before, after;
	struct unet_group_val gv;
	uint8_t buf[2048];

	(void)state;
	need_xsk();
	set_group_ports();
	set_group(IPPROTO_TCP, GROUP_TCP_PORT, eps, toks, 3, 3);
	before = tcp_port_stats(GROUP_TCP_PORT);
	for (uint16_t sport = 40000; sport < 40012; sport++) {
		uint32_t n = build_tcp(buf, sizeof(buf), &t);

		put16(buf + 14 + 20, sport);
		expect_ipv4(buf, n, XDP_REDIRECT, UNET_CTR_TCP_DELIVERED);
	}
	after = tcp_port_stats(GROUP_TCP_PORT);
	assert_int_equal(after.delivered - before.delivered, 12);
	gv = get_group(IPPROTO_TCP, GROUP_TCP_PORT);
	assert_int_equal(gv.m[1].delivered, 12);
	assert_int_equal(gv.m[0].delivered + gv.m[2].delivered, 0);
	del_group(IPPROTO_TCP, GROUP_TCP_PORT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_abi_layout),
		cmocka_unit_test(test_every_pinned_map_used),
		cmocka_unit_test(test_good_frame_delivered),
		cmocka_unit_test(test_min_payload_delivered),
		cmocka_unit_test(test_padded_frame_delivered),
		cmocka_unit_test(test_chan_good_delivered),
		cmocka_unit_test(test_chan_spoofed_source_dropped),
		cmocka_unit_test(test_chan_kind_mismatch_dropped),
		cmocka_unit_test(test_chan_bad_headers_dropped),
		cmocka_unit_test(test_chan_other_traffic_passed),
		cmocka_unit_test(test_chan_port_configurable),
		cmocka_unit_test(test_chan_transit_passed),
		cmocka_unit_test(test_chan_group_destination_ours),
		cmocka_unit_test(test_chan6_group_destination_ours),
		cmocka_unit_test(test_chan_policy_rules),
		cmocka_unit_test(test_chan6_transit_passed),
		cmocka_unit_test(test_chan_fuzz),
		cmocka_unit_test(test_chan6_fuzz),
		cmocka_unit_test(test_chan6_good_delivered),
		cmocka_unit_test(test_chan6_spoofed_source_dropped),
		cmocka_unit_test(test_chan6_kind_mismatch_dropped),
		cmocka_unit_test(test_chan6_bad_headers_dropped),
		cmocka_unit_test(test_chan6_exthdr),
		cmocka_unit_test(test_chan6_other_traffic_passed),
		cmocka_unit_test(test_vlan_8021q_unet_passed),
		cmocka_unit_test(test_vlan_8021ad_unet_passed),
		cmocka_unit_test(test_flags_ignored),
		cmocka_unit_test(test_max_payload_delivered),
		cmocka_unit_test(test_jumbo_frame_in_pieces),
		cmocka_unit_test(test_unknown_tag_dropped),
		cmocka_unit_test(test_tag_zero_dropped),
		cmocka_unit_test(test_wrong_src_mac_dropped),
		cmocka_unit_test(test_wrong_src_tag_dropped),
		cmocka_unit_test(test_stale_owner_dropped),
		cmocka_unit_test(test_bad_version_dropped),
		cmocka_unit_test(test_truncated_header_malformed),
		cmocka_unit_test(test_len_too_large_malformed),
		cmocka_unit_test(test_len_zero_malformed),
		cmocka_unit_test(test_no_socket_dropped),
		cmocka_unit_test(test_queue_without_socket_dropped),
		cmocka_unit_test(test_injected_drop),
		cmocka_unit_test(test_arp_passed),
		cmocka_unit_test(test_ipv4_passed),
		cmocka_unit_test(test_vlan_non_unet_passed),
		cmocka_unit_test(test_truncated_vlan_passed),
		cmocka_unit_test(test_short_frame),
		cmocka_unit_test(test_udp_to_our_port_delivered),
		cmocka_unit_test(test_udp_other_traffic_passed),
		cmocka_unit_test(test_udp_fragments),
		cmocka_unit_test(test_udp_malformed),
		cmocka_unit_test(test_udp_filter),
		cmocka_unit_test(test_udp_dead_owner_passed),
		cmocka_unit_test(test_udp_stale_token_passed),
		cmocka_unit_test(test_udp_other_queue_dropped),
		cmocka_unit_test(test_arp_for_unet_address),
		cmocka_unit_test(test_arp_for_kernel_address),
		cmocka_unit_test(test_arp_dead_owner_passed),
		cmocka_unit_test(test_arp_learning_refused),
		cmocka_unit_test(test_vlan_udp_passed),
		cmocka_unit_test(test_vlan_arp_passed),
		cmocka_unit_test(test_tcp_to_our_port_delivered),
		cmocka_unit_test(test_ip_in_pieces),
		cmocka_unit_test(test_tcp_other_traffic_passed),
		cmocka_unit_test(test_tcp_malformed),
		cmocka_unit_test(test_tcp_dead_owner_passed),
		cmocka_unit_test(test_tcp_injected_drop),
		cmocka_unit_test(test_tcp_fuzz),
		cmocka_unit_test(test_udp6_to_our_port_delivered),
		cmocka_unit_test(test_udp6_other_traffic_passed),
		cmocka_unit_test(test_udp6_malformed),
		cmocka_unit_test(test_udp6_exthdr_dropped),
		cmocka_unit_test(test_udp6_filter),
		cmocka_unit_test(test_tcp6_to_our_port_delivered),
		cmocka_unit_test(test_tcp6_other_traffic_passed),
		cmocka_unit_test(test_tcp6_malformed),
		cmocka_unit_test(test_tcp6_exthdr_dropped),
		cmocka_unit_test(test_tcp6_exthdr_kernel_addr),
		cmocka_unit_test(test_tcp6_injected_drop),
		cmocka_unit_test(test_nd_solicitations),
		cmocka_unit_test(test_group_udp_delivered),
		cmocka_unit_test(test_group_foreign_member_passed),
		cmocka_unit_test(test_group_bad_values_passed),
		cmocka_unit_test(test_group_no_socket_dropped),
		cmocka_unit_test(test_group_tcp_delivered),
	};

	return cmocka_run_group_tests_name("xdp_prog", tests, group_setup, group_teardown);
}
