/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet-forge-udp - a hostile UDP client of unetd: on an emulated endpoint
 * with one UDP socket open it writes onto its send ring, as any client
 * can, IPv4 and ARP frames the daemon must refuse:
 *
 *   unet-forge-udp IFACE --local ADDR:PORT --remote ADDR:PORT
 *
 * From a port it did not open; from an address it did not open; an ARP
 * reply for an address it has no port on; ICMP; IPv4 with options; from
 * its own port, a wrong IPv4 header checksum and a TTL of 0; from its
 * own port to the routable channels' port.  Then prints the daemon's
 * counters as
 *   forge-udp tx_sent=N tx_foreign_tag=N tx_bad_frame=N tx_foreign_peer=N
 * and exits 0 if the three foreign frames, the four bad ones and the one
 * to the channel port were refused and nothing was sent: a datagram to
 * the channel port is judged as a routable channel's frame, and a plain
 * UDP datagram (its checksum set, no U-Net header) is not one
 * (tx_bad_frame).  Needs unetd (UNET_DAEMON_SOCKET) and a policy that
 * grants PORT.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/objects.h"
#include "proto/unetd_proto.h"
#include "udp/udp_impl.h"

static void on_log(enum unet_log_level l, const char *msg, void *ctx)
{
	(void)ctx;
	if (l <= UNET_LOG_WARN)
		fprintf(stderr, "unet-forge-udp: libunet: %s\n", msg);
}

static int parse_addr(const char *s, uint32_t *addr, uint16_t *port)
{
	char buf[64], *colon;

	snprintf(buf, sizeof(buf), "%s", s);
	colon = strrchr(buf, ':');
	if (!colon)
		return -1;
	*colon = '\0';
	*port = (uint16_t)strtoul(colon + 1, NULL, 10);
	return inet_pton(AF_INET, buf, addr) == 1 && *port ? 0 : -1;
}

/* Send flen bytes built at the start of a fresh buffer (+6, as UDP). */
static void raw(struct unet_endpoint *ep, void (*build)(uint8_t *f, void *ctx), void *ctx,
		uint32_t flen)
{
	uint64_t buf = unet_endpoint__buf_alloc(ep);

	memset(unet_layer_buf(ep, buf), 0, ep->frame_size);
	build(unet_layer_buf(ep, buf) + UNET_UDP_TX_PAD, ctx);
	if (unet_layer_xmit(ep, 0, buf, UNET_UDP_TX_PAD, flen))
		fprintf(stderr, "unet-forge-udp: xmit refused locally\n");
}

struct udp_forge {
	const uint8_t *dst, *src;
	uint32_t saddr, daddr;
	uint16_t sport, dport;
	int kind; /* 0 UDP, 1 ICMP, 2 IPv4 with options, 3 a wrong IP header
		   * checksum, 4 TTL 0 (its checksum right) */
};

static void build_udp(uint8_t *f, void *ctx)
{
	struct udp_forge *u = ctx;

	unet_udp_build(f, u->dst, u->src, u->saddr, u->daddr, u->sport, u->dport, 8, 1);
	if (u->kind == 1)
		f[23] = 1; /* ICMP */
	if (u->kind == 2)
		f[14] = 0x46; /* an option word */
	if (u->kind == 3)
		f[24] ^= 0x5a;
	if (u->kind == 4) {
		uint16_t sum;

		f[22] = 0;
		f[24] = f[25] = 0;
		sum = htons((uint16_t)~unet_csum_fold(unet_csum_add(0, f + 14, 20)));
		memcpy(f + 24, &sum, 2);
	}
}

static void build_arp(uint8_t *f, void *ctx)
{
	struct unet_arp_msg *m = ctx;
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	unet_arp_build(f, bcast, m);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "local", required_argument, NULL, 'l' },
		{ "remote", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	UNET_OPTS_INIT(unet_endpoint_opts, o);
	static const uint8_t peer[6] = { 2, 0, 0, 0, 0, 0x42 };
	struct udp_forge u = { .dst = peer };
	struct unet_arp_msg m = { .op = 2 };
	const struct unetd_ep_counters *k;
	uint32_t laddr = 0, raddr = 0;
	uint16_t lport = 0, rport = 0;
	struct unet_endpoint *ep;
	int c, ok;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'l' && !parse_addr(optarg, &laddr, &lport))
			continue;
		if (c == 'r' && !parse_addr(optarg, &raddr, &rport))
			continue;
		return 2;
	}
	if (optind + 1 != argc || !laddr || !raddr) {
		fprintf(stderr, "usage: unet-forge-udp IFACE --local ADDR:PORT --remote ADDR:PORT\n");
		return 2;
	}
	unet_set_log_fn(on_log, NULL);
	o.kind = UNET_ENDPOINT_EMULATED;
	ep = unet_endpoint__create(argv[optind], &o);
	if (!ep || !unet_udp__open(ep, laddr, lport, NULL)) {
		fprintf(stderr, "unet-forge-udp: %s\n", strerror(errno));
		return 1;
	}
	u.src = ep->mac;
	u.daddr = raddr;
	u.dport = rport;
	u.saddr = laddr;
	u.sport = (uint16_t)(lport + 1); /* a port it did not open */
	raw(ep, build_udp, &u, 60);
	u.saddr = raddr; /* an address it did not open */
	u.sport = lport;
	raw(ep, build_udp, &u, 60);
	memcpy(m.sha, ep->mac, 6);
	m.spa = raddr; /* ARP for an address it has no port on */
	m.tpa = raddr;
	raw(ep, build_arp, &m, 60);
	u.saddr = laddr;
	u.kind = 1;
	raw(ep, build_udp, &u, 60);
	u.kind = 2;
	raw(ep, build_udp, &u, 60);
	/* From its own address and port, with a malformed IPv4 header. */
	u.sport = lport;
	u.kind = 3;
	raw(ep, build_udp, &u, 60);
	u.kind = 4;
	raw(ep, build_udp, &u, 60);
	/* From its own address and port, to the routable channels' port:
	 * a forged channel frame for any peer that has a channel to us. */
	u.kind = 0;
	u.sport = lport;
	u.dport = UNET_CHAN_PORT_DEFAULT;
	raw(ep, build_udp, &u, 60);
	if (unet_endpoint__flush(ep, 2000))
		fprintf(stderr, "unet-forge-udp: flush did not complete\n");
	k = &ep->region->counters;
	printf("forge-udp tx_sent=%" PRIu64 " tx_foreign_tag=%" PRIu64 " tx_bad_frame=%" PRIu64
	       " tx_foreign_peer=%" PRIu64 "\n",
	       k->tx_sent, k->tx_foreign_tag, k->tx_bad_frame, k->tx_foreign_peer);
	ok = k->tx_sent == 0 && k->tx_foreign_tag == 3 && k->tx_bad_frame == 5 &&
	     k->tx_foreign_peer == 0;
	unet_endpoint__destroy(ep);
	return ok ? 0 : 1;
}
