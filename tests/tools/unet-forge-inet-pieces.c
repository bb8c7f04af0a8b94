/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet-forge-inet-pieces - a hostile UDP and TCP client of unetd whose
 * frames come in pieces: on an emulated endpoint at a jumbo MTU, holding
 * UDP port PORT and TCP port PORT + 1 (through the daemon), it writes
 * chains of descriptors (XDP_PKT_CONTD on all but the last) straight
 * onto its send ring, each a lie the daemon must refuse, between two
 * honest 5000-byte UDP datagrams in pieces of its own:
 *
 *   unet-forge-inet-pieces IFACE --local ADDR:PORT --remote ADDR:PORT --peer MAC
 *
 * The lies, in order (each waited for: the daemon has taken every
 * descriptor before the next is written), all to the remote ADDR:PORT
 * (TCP: PORT + 1) through MAC:
 *   udp-port   the first piece Ethernet and IPv4 only; the second starts
 *              with a UDP header from a port the endpoint does not hold
 *   udp-addr   the first piece ends inside the IPv4 header; the second
 *              carries a source address the endpoint holds no port on
 *   ip-over    an IPv4 total length 100 bytes more than the pieces hold
 *   ip-under   the IPv4 and UDP lengths both 100 bytes less than the
 *              pieces hold (bytes past them no other check looks at)
 *   udp-len    a UDP length one byte short of the IPv4 payload
 *   fragment   more fragments set
 *   tcp-port   a TCP segment whose second piece names a port it does not hold
 *   tcp-doff   a TCP data offset past the end of a segment of two pieces
 *   rewrite    the first piece taken with a UDP source port it does not
 *              hold; rewritten in the segment to its own port before the
 *              last piece is posted (the daemon must judge what it
 *              copied, not what the segment says now)
 * then, in one descriptor of its 4096-byte frames (longer than one of
 * the daemon's 2048-byte buffers: gathered and sent in pieces), an
 * honest 3000-byte datagram and one from a port it does not hold; then
 * prints the daemon's counters for the endpoint's sends:
 *   inet-pieces tx_sent=N tx_foreign_tag=N tx_bad_frame=N tx_bad_pieces=N
 * and exits 0 if they are 3, 5, 5, 0.  The peer must see exactly the
 * three honest datagrams.  Needs unetd (UNET_DAEMON_SOCKET) serving an MTU of
 * at least 6000 with multi-buffer, and a policy that grants PORT and
 * PORT + 1.
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
#include "unet-xdp/unet_udp.h"
#include "forge_ring.h"
#include "tool_common.h"

#define TOOL "unet-forge-inet-pieces"
#define HONEST 5000u
#define SINGLE 3000u /* a datagram whose frame one 4096-byte buffer holds */
#define MAX_CHAIN 8
#define ETH_HLEN 14
#define IP_HLEN 20
#define UDP_HLEN 8
#define TCP_HLEN 20

/* What a frame says of itself; each lie changes one field. */
struct hdrs {
	const uint8_t *dst, *src;
	uint8_t proto;
	uint32_t saddr, daddr;
	uint16_t sport, dport;
	uint32_t data;	       /* payload bytes after the UDP or TCP header */
	int32_t ip_len_delta;  /* added to the IPv4 total length */
	int32_t udp_len_delta; /* added to the UDP length */
	uint16_t frag;	       /* the IPv4 flags and fragment offset */
	uint8_t doff_words;    /* TCP data offset (0: 5) */
};

/* The frame h describes, checksums right, in f.  Returns its length. */
static uint32_t build(uint8_t *f, const struct hdrs *h)
{
	uint32_t l4 = (h->proto == IPPROTO_UDP ? UDP_HLEN : TCP_HLEN) + h->data;
	uint8_t *ip = f + ETH_HLEN, *t = ip + IP_HLEN;
	uint64_t sum;

	memcpy(f, h->dst, 6);
	memcpy(f + 6, h->src, 6);
	put16(f + 12, 0x0800);
	ip[0] = 0x45;
	ip[1] = 0;
	put16(ip + 2, (uint16_t)(IP_HLEN + l4 + h->ip_len_delta));
	put16(ip + 4, 0);
	put16(ip + 6, h->frag);
	ip[8] = 64;
	ip[9] = h->proto;
	put16(ip + 10, 0);
	memcpy(ip + 12, &h->saddr, 4);
	memcpy(ip + 16, &h->daddr, 4);
	put16(ip + 10, (uint16_t)~unet_csum_fold(unet_csum_add(0, ip, IP_HLEN)));
	put16(t, h->sport);
	put16(t + 2, h->dport);
	if (h->proto == IPPROTO_UDP) {
		for (uint32_t i = 0; i < h->data; i++)
			t[UDP_HLEN + i] = (uint8_t)(i * 7 + 3);
		put16(t + 4, (uint16_t)(l4 + h->udp_len_delta));
		put16(t + 6, 0);
		sum = unet_csum_pseudo(h->saddr, h->daddr, IPPROTO_UDP, (uint16_t)l4);
		put16(t + 6, (uint16_t)~unet_csum_fold(unet_csum_add(sum, t, l4)));
	} else {
		memset(t + 4, 0, TCP_HLEN - 4);
		memset(t + TCP_HLEN, 0x5a, h->data);
		put16(t + 4, 0x1234);
		t[12] = (uint8_t)((h->doff_words ? h->doff_words : 5) << 4);
		t[13] = 0x02; /* SYN */
		put16(t + 14, 1024);
		sum = unet_csum_pseudo(h->saddr, h->daddr, IPPROTO_TCP, (uint16_t)l4);
		put16(t + 16, (uint16_t)~unet_csum_fold(unet_csum_add(sum, t, l4)));
	}
	return ETH_HLEN + IP_HLEN + l4;
}

struct forge {
	struct unet_endpoint *ep;
	uint32_t room; /* what the library puts in a piece */
	struct forge_piece p[MAX_CHAIN];
	uint32_t lens[MAX_CHAIN], n;
};

/* The frame h describes, in pieces: a first piece of first bytes (0: a
 * full one, or the whole frame if it holds it), the rest in full
 * pieces.  Posted whole unless open (then only the first piece). */
static void chain(struct forge *f, const struct hdrs *h, uint32_t first, bool open)
{
	static uint8_t frame[16384];
	uint32_t flen = build(frame, h);

	if (!first)
		first = f->room;
	if (first > flen)
		first = flen; /* one piece */
	f->lens[0] = first;
	f->n = 1 + forge_even_lens(f->lens + 1, flen - first, f->room);
	forge_split(f->ep, TOOL, frame, f->p, f->lens, f->n);
	forge_post(f->ep, f->p, open ? 1 : f->n, open);
	forge_settle(f->ep, TOOL);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "local", required_argument, NULL, 'l' },
		{ "remote", required_argument, NULL, 'r' },
		{ "peer", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	UNET_OPTS_INIT(unet_endpoint_opts, o);
	const struct unetd_ep_counters *k;
	struct unetd_ep_counters before;
	struct unet_endpoint_info info;
	uint64_t sent, foreign, bad, bad_pieces;
	uint32_t laddr = 0, raddr = 0;
	uint16_t lport = 0, rport = 0;
	struct forge f = { 0 };
	uint8_t peer[6] = { 0 };
	bool have_peer = false;
	struct hdrs udp, h;
	uint8_t *sp;
	int c, ok;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		/* a port, and PORT + 1 a port too */
		if (c == 'l' && !parse_ipv4_port(optarg, &laddr, &lport) && lport && lport < 65535)
			continue;
		if (c == 'r' && !parse_ipv4_port(optarg, &raddr, &rport) && rport && rport < 65535)
			continue;
		if (c == 'p' && !unet_parse_mac(optarg, peer) && (have_peer = true))
			continue;
		return 2;
	}
	if (optind + 1 != argc || !laddr || !raddr || !have_peer) {
		fprintf(stderr, "usage: " TOOL " IFACE --local ADDR:PORT --remote ADDR:PORT --peer MAC\n");
		return 2;
	}
	unet_set_log_fn(forge_on_log, TOOL);
	o.kind = UNET_ENDPOINT_EMULATED;
	/* Longer than the daemon's 2048-byte buffers: a frame in one of
	 * ours may be too (single, below). */
	o.frame_size = 4096;
	f.ep = unet_endpoint__create(argv[optind], &o);
	if (!f.ep || !unet_udp__open(f.ep, laddr, lport, NULL) ||
	    !unet_tcp__listen(f.ep, laddr, (uint16_t)(lport + 1), NULL)) {
		fprintf(stderr, TOOL ": %s\n", strerror(errno));
		return 1;
	}
	unet_endpoint__info(f.ep, &info);
	if (!info.multi_buffer || info.max_payload < HONEST + 100) {
		fprintf(stderr, TOOL ": no frames in pieces here (max_payload %u)\n", info.max_payload);
		return 1;
	}
	/* What the library sent of its own (an ARP announcement of the
	 * address) is not ours to count. */
	if (unet_endpoint__flush(f.ep, 2000))
		fprintf(stderr, TOOL ": flush did not complete\n");
	k = &f.ep->region->counters;
	before = *k;
	f.room = f.ep->frame_size - 256 - UNET_ALIGN_PAD;
	udp = (struct hdrs){ .dst = peer, .src = f.ep->mac, .proto = IPPROTO_UDP, .saddr = laddr,
			     .daddr = raddr, .sport = lport, .dport = rport, .data = HONEST,
			     .frag = 0x4000 };

	chain(&f, &udp, 0, false); /* honest */
	h = udp;
	h.sport = (uint16_t)(lport + 5); /* udp-port */
	chain(&f, &h, ETH_HLEN + IP_HLEN, false);
	h = udp;
	h.saddr = htonl(ntohl(laddr) + 1); /* udp-addr */
	chain(&f, &h, ETH_HLEN + 12, false);
	h = udp;
	h.ip_len_delta = 100; /* ip-over */
	chain(&f, &h, 0, false);
	h.ip_len_delta = h.udp_len_delta = -100; /* ip-under */
	chain(&f, &h, 0, false);
	h = udp;
	h.udp_len_delta = -1; /* udp-len */
	chain(&f, &h, 0, false);
	h = udp;
	h.frag = 0x2000; /* fragment: more to come */
	chain(&f, &h, 0, false);
	h = udp;
	h.proto = IPPROTO_TCP; /* tcp-port */
	h.sport = (uint16_t)(lport + 6);
	h.dport = (uint16_t)(rport + 1);
	chain(&f, &h, ETH_HLEN + IP_HLEN, false);
	h.sport = (uint16_t)(lport + 1); /* tcp-doff: 60 bytes of header in 20 */
	h.data = 0;
	h.doff_words = 15;
	chain(&f, &h, ETH_HLEN + IP_HLEN + 10, false);
	h = udp;
	h.sport = (uint16_t)(lport + 5); /* rewrite */
	chain(&f, &h, 0, true);
	sp = (uint8_t *)f.ep->segment + f.p[0].addr + ETH_HLEN + IP_HLEN;
	put16(sp, lport);
	forge_post(f.ep, f.p + 1, f.n - 1, false);
	forge_settle(f.ep, TOOL);
	h = udp;
	h.data = SINGLE; /* single: one descriptor, more than a daemon's buffer holds */
	chain(&f, &h, 0, false);
	h.sport = (uint16_t)(lport + 5); /* single-port */
	chain(&f, &h, 0, false);
	chain(&f, &udp, 0, false); /* honest */

	sent = k->tx_sent - before.tx_sent;
	foreign = k->tx_foreign_tag - before.tx_foreign_tag;
	bad = k->tx_bad_frame - before.tx_bad_frame;
	bad_pieces = k->tx_bad_pieces - before.tx_bad_pieces;
	printf("inet-pieces tx_sent=%" PRIu64 " tx_foreign_tag=%" PRIu64 " tx_bad_frame=%" PRIu64
	       " tx_bad_pieces=%" PRIu64 "\n",
	       sent, foreign, bad, bad_pieces);
	ok = sent == 3 && foreign == 5 && bad == 5 && bad_pieces == 0;
	unet_endpoint__destroy(f.ep);
	return ok ? 0 : 1;
}
