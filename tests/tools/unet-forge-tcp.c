/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet-forge-tcp - a hostile TCP client of unetd: on an emulated
 * endpoint that holds one listening TCP port (through the daemon) it
 * writes onto its send ring, as any client can, TCP segments the daemon
 * must refuse:
 *
 *   unet-forge-tcp IFACE --local ADDR:PORT --remote ADDR:PORT
 *                  [--forge-addr ADDR] [--other PORT] [--honest PORT]
 *
 * From --forge-addr (an address it holds no port on) and its own port;
 * from a port it does not hold (PORT + 1); with a data offset past the
 * IP length and one below the header's 20 bytes; from --other, a port
 * another client holds on ADDR.  Each goes to the remote ADDR:PORT.
 * (The counts are of these frames alone: the library's own sends before
 * them are not.)  Then one honest SYN from its own port to --honest (the same remote
 * address), which the daemon must send: so a counter at the peer that
 * sees it shows it would have seen the others.  Prints
 *   forge-tcp tx_sent=N tx_foreign_tag=N tx_bad_frame=N
 * and exits 0 if only the honest segment went, the foreign ones were
 * counted as foreign and the malformed ones as bad.  Needs unetd
 * (UNET_DAEMON_SOCKET) and a policy that grants PORT.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/objects.h"
#include "inet/inet.h"
#include "proto/unetd_proto.h"
#include "unet-xdp/unet_tcp.h"

#define TX_PAD 18 /* the frame's start in its buffer: IP 4-byte aligned, room for TX metadata */

static void on_log(enum unet_log_level l, const char *msg, void *ctx)
{
	(void)ctx;
	if (l <= UNET_LOG_WARN)
		fprintf(stderr, "unet-forge-tcp: libunet: %s\n", msg);
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

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

struct seg {
	const uint8_t *dst, *src;
	uint32_t saddr, daddr;
	uint16_t sport, dport;
	uint8_t doff_words; /* the TCP header's data offset, in 32-bit words */
};

/* A SYN of 20 bytes of TCP header (no options, no data) in f, its data
 * offset field as s asks, checksums right. */
static uint32_t build(uint8_t *f, const struct seg *s)
{
	uint8_t *ip = f + 14, *t = ip + 20;
	uint64_t sum;

	memcpy(f, s->dst, 6);
	memcpy(f + 6, s->src, 6);
	put16(f + 12, 0x0800);
	ip[0] = 0x45;
	put16(ip + 2, 40);
	put16(ip + 6, 0x4000); /* DF */
	ip[8] = 64;
	ip[9] = IPPROTO_TCP;
	memcpy(ip + 12, &s->saddr, 4);
	memcpy(ip + 16, &s->daddr, 4);
	put16(ip + 10, (uint16_t)~unet_csum_fold(unet_csum_add(0, ip, 20)));
	put16(t, s->sport);
	put16(t + 2, s->dport);
	put16(t + 4, 0x1234);
	t[12] = (uint8_t)(s->doff_words << 4);
	t[13] = 0x02; /* SYN */
	put16(t + 14, 1024);
	sum = unet_csum_pseudo(s->saddr, s->daddr, IPPROTO_TCP, 20);
	put16(t + 16, (uint16_t)~unet_csum_fold(unet_csum_add(sum, t, 20)));
	return 14 + 40 < 60 ? 60 : 14 + 40;
}

static void raw(struct unet_endpoint *ep, const struct seg *s)
{
	uint64_t buf = unet_endpoint__buf_alloc(ep);
	uint32_t flen;

	memset(unet_layer_buf(ep, buf), 0, ep->frame_size);
	flen = build(unet_layer_buf(ep, buf) + TX_PAD, s);
	if (unet_layer_xmit(ep, 0, buf, TX_PAD, flen))
		fprintf(stderr, "unet-forge-tcp: xmit refused locally\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "local", required_argument, NULL, 'l' },
		{ "remote", required_argument, NULL, 'r' },
		{ "forge-addr", required_argument, NULL, 'a' },
		{ "other", required_argument, NULL, 'o' },
		{ "honest", required_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	UNET_OPTS_INIT(unet_endpoint_opts, o);
	static const uint8_t peer[6] = { 2, 0, 0, 0, 0, 0x42 };
	const struct unetd_ep_counters *k;
	struct unetd_ep_counters before;
	uint64_t sent, foreign, bad;
	uint32_t laddr = 0, raddr = 0, faddr = 0;
	uint16_t lport = 0, rport = 0, other = 0, honest = 0;
	unsigned int nforeign = 0, nbad = 0;
	struct unet_endpoint *ep;
	struct seg s;
	int c, ok;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'l' && !parse_addr(optarg, &laddr, &lport))
			continue;
		if (c == 'r' && !parse_addr(optarg, &raddr, &rport))
			continue;
		if (c == 'a' && inet_pton(AF_INET, optarg, &faddr) == 1)
			continue;
		if (c == 'o' && (other = (uint16_t)strtoul(optarg, NULL, 10)))
			continue;
		if (c == 'h' && (honest = (uint16_t)strtoul(optarg, NULL, 10)))
			continue;
		return 2;
	}
	if (optind + 1 != argc || !laddr || !raddr) {
		fprintf(stderr, "usage: unet-forge-tcp IFACE --local ADDR:PORT --remote ADDR:PORT "
				"[--forge-addr ADDR] [--other PORT] [--honest PORT]\n");
		return 2;
	}
	unet_set_log_fn(on_log, NULL);
	o.kind = UNET_ENDPOINT_EMULATED;
	ep = unet_endpoint__create(argv[optind], &o);
	if (!ep || !unet_tcp__listen(ep, laddr, lport, NULL)) {
		fprintf(stderr, "unet-forge-tcp: %s\n", strerror(errno));
		return 1;
	}
	/* What the library sent of its own (an ARP announcement of the
	 * address) is not ours to count. */
	if (unet_endpoint__flush(ep, 2000))
		fprintf(stderr, "unet-forge-tcp: flush did not complete\n");
	k = &ep->region->counters;
	before = *k;
	s = (struct seg){ .dst = peer, .src = ep->mac, .saddr = laddr, .daddr = raddr,
			  .sport = lport, .dport = rport, .doff_words = 5 };
	if (faddr) {
		s.saddr = faddr; /* an address it holds no port on */
		raw(ep, &s);
		s.saddr = laddr;
		nforeign++;
	}
	s.sport = (uint16_t)(lport + 1); /* a port it does not hold */
	raw(ep, &s);
	nforeign++;
	s.sport = lport;
	s.doff_words = 15; /* 60 bytes of header in a 20-byte segment */
	raw(ep, &s);
	s.doff_words = 4; /* shorter than the header itself */
	raw(ep, &s);
	nbad += 2;
	s.doff_words = 5;
	if (other) {
		s.sport = other; /* another client's */
		raw(ep, &s);
		s.sport = lport;
		nforeign++;
	}
	if (honest) {
		s.dport = honest;
		raw(ep, &s);
	}
	if (unet_endpoint__flush(ep, 2000))
		fprintf(stderr, "unet-forge-tcp: flush did not complete\n");
	sent = k->tx_sent - before.tx_sent;
	foreign = k->tx_foreign_tag - before.tx_foreign_tag;
	bad = k->tx_bad_frame - before.tx_bad_frame;
	printf("forge-tcp tx_sent=%" PRIu64 " tx_foreign_tag=%" PRIu64 " tx_bad_frame=%" PRIu64 "\n",
	       sent, foreign, bad);
	ok = sent == (honest ? 1u : 0u) && foreign == nforeign && bad == nbad;
	unet_endpoint__destroy(ep);
	return ok ? 0 : 1;
}
