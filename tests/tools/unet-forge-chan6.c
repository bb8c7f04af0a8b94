/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet-forge-chan6 - a hostile client of unetd on a routable IPv6
 * channel: on an emulated endpoint with one routable IPv6 channel open
 * (tag T to PEER, peer tag P) it writes onto its send ring, as any client
 * can, frames the daemon must refuse, between honest messages:
 *
 *   unet-forge-chan6 IFACE --tag T --peer-ip PEER --peer-tag P --other-ip ADDR
 *
 * Each forged frame is the channel's own, built as the library builds it
 * (the UDP checksum right, unless that is the lie), with one thing
 * changed.  Whole frames: from ADDR; from another source port; from a
 * tag not its own; the frame as IPv4 would carry it; to ADDR; to another
 * MAC; to another peer tag; the message as raw U-Net to the channel's
 * next hop; a hop limit of 0; a hop-by-hop extension header; an IPv6
 * payload length past the datagram; a UDP length, a U-Net length that
 * does not add up; a wrong UDP checksum; none (0); a traffic class.
 * Then frames of a 1000-byte message in two pieces (the first ends
 * inside the IPv6 source address, so the daemon must judge the gathered
 * whole): honest; from ADDR; a payload byte changed after the checksum;
 * to ADDR.  Then a last honest message.  Prints the daemon's counters
 * for the endpoint as
 *   forge-chan6 tx_sent=N tx_foreign_tag=N tx_foreign_peer=N tx_bad_frame=N
 * and exits 0 if they are 3, 5, 5, 9: what the daemon must have done.
 * The peer must see exactly the three honest messages.  Needs unetd
 * (UNET_DAEMON_SOCKET) serving a jumbo MTU (frames in pieces), and a
 * policy that grants tag T.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/csum.h"
#include "core/objects.h"
#include "proto/unetd_proto.h"
#include "forge_ring.h"

#define TOOL "unet-forge-chan6"
#define PIECES_MSG 1000
#define FIRST_PIECE 30 /* Ethernet and 16 bytes of IPv6: inside the source address */

/* The UDP checksum written again after a change (over the IPv6 payload
 * length's datagram, as the daemon sums it). */
static void udp6_recsum(uint8_t *f)
{
	uint8_t *ip = f + UNET_ETH_HLEN, *udp = ip + 40;
	uint32_t ulen = (uint32_t)(ip[4] << 8 | ip[5]);
	uint16_t c;

	put16(udp + 6, 0);
	c = (uint16_t)~unet_csum_fold(
		unet_csum_add(unet_csum_pseudo6(ip + 8, ip + 24, 17, ulen), udp, ulen));
	put16(udp + 6, c ? c : 0xffff);
}

enum change {
	F_HONEST,
	F_FROM_OTHER_ADDR,
	F_FROM_OTHER_PORT,
	F_FROM_OTHER_TAG,
	F_AS_IPV4,
	F_TO_OTHER_ADDR,
	F_TO_OTHER_MAC,
	F_TO_OTHER_TAG,
	F_RAW_UNET,
	F_HOP_ZERO,
	F_EXT_HDR,
	F_PLEN_LONG,
	F_UDP_LEN_BAD,
	F_UNET_LEN_BAD,
	F_CSUM_BAD,
	F_CSUM_NONE,
	F_TCLASS,
	F__WHOLE,
	/* in pieces */
	P_HONEST = F__WHOLE,
	P_FROM_OTHER_ADDR,
	P_PAYLOAD_AFTER_CSUM,
	P_TO_OTHER_ADDR,
	P__END,
};

/* The channel's frame of len payload bytes with one change, in f;
 * returns its length. */
static uint32_t build_changed(const struct unet_channel *ch, const uint8_t other[16],
			      enum change how, uint8_t *f, uint32_t len)
{
	static const uint8_t other_mac[6] = { 2, 0, 0, 0, 0, 0x99 };
	struct unet_wire_udp w = ch->w;
	uint8_t *ip = f + UNET_ETH_HLEN;
	bool honest = how == F_HONEST || how == P_HONEST;
	uint32_t flen;

	if (how == F_FROM_OTHER_ADDR || how == P_FROM_OTHER_ADDR)
		memcpy(w.saddr6, other, 16);
	if (how == F_FROM_OTHER_PORT)
		w.sport = (uint16_t)(w.sport + 1);
	if (how == F_FROM_OTHER_TAG)
		w.src_tag = (uint16_t)(w.src_tag + 1);
	if (how == F_AS_IPV4) { /* 10.201.0.2 to 10.201.0.1, the checksum right */
		w.v6 = false;
		w.saddr = htonl(0x0ac90002);
		w.daddr = htonl(0x0ac90001);
	}
	if (how == F_TO_OTHER_ADDR || how == P_TO_OTHER_ADDR)
		memcpy(w.daddr6, other, 16);
	if (how == F_TO_OTHER_MAC)
		memcpy(w.dst_mac, other_mac, 6);
	if (how == F_TO_OTHER_TAG)
		w.dst_tag = (uint16_t)(w.dst_tag + 1);
	memset(f, 0, UNET_UDP6_PAYLOAD_OFF + len + 64);
	for (uint32_t i = 0; i < len; i++)
		f[unet_wire_udp_payload_off(&w) + i] = (uint8_t)(honest ? 'h' + i % 7 : 'f' + i % 5);
	flen = unet_wire_udp_build(f, &w, len);
	switch (how) {
	case F_RAW_UNET: /* the U-Net header and message straight after Ethernet */
		memmove(f + UNET_ETH_HLEN, f + UNET_UDP6_PAYLOAD_OFF - UNET_HDR_LEN, UNET_HDR_LEN + len);
		put16(f + 12, UNET_ETH_P);
		flen = UNET_ETH_HLEN + UNET_HDR_LEN + len < 60 ? 60 : UNET_ETH_HLEN + UNET_HDR_LEN + len;
		break;
	case F_HOP_ZERO:
		ip[7] = 0;
		break;
	case F_EXT_HDR: /* a hop-by-hop header named, the datagram where it would be */
		ip[6] = 0;
		break;
	case F_PLEN_LONG: /* four bytes more than the datagram, and in the frame */
		put16(ip + 4, (uint16_t)((ip[4] << 8 | ip[5]) + 4));
		flen += 4;
		udp6_recsum(f);
		break;
	case F_UDP_LEN_BAD:
		put16(ip + 44, (uint16_t)((ip[44] << 8 | ip[45]) - 1));
		udp6_recsum(f);
		break;
	case F_UNET_LEN_BAD:
		put16(ip + 54, (uint16_t)(len - 1));
		udp6_recsum(f);
		break;
	case F_CSUM_BAD:
		ip[47] ^= 1;
		break;
	case F_CSUM_NONE:
		put16(ip + 46, 0);
		break;
	case F_TCLASS:
		ip[1] = 0xb8; /* traffic class 0x0b: a DSCP of the client's choosing */
		break;
	case P_PAYLOAD_AFTER_CSUM:
		f[flen - 1] ^= 1;
		break;
	default:
		break;
	}
	return flen;
}

static void send_whole(struct unet_endpoint *ep, const struct unet_channel *ch,
		       const uint8_t other[16], enum change how)
{
	uint64_t buf = forge_take_buf(ep, TOOL);

	forge_raw(ep, buf, build_changed(ch, other, how, (uint8_t *)ep->segment + buf, 16));
}

static void send_pieces(struct unet_endpoint *ep, const struct unet_channel *ch,
			const uint8_t other[16], enum change how)
{
	static uint8_t f[UNET_UDP6_PAYLOAD_OFF + PIECES_MSG + 64];
	struct forge_piece p[2];
	uint32_t flen = build_changed(ch, other, how, f, PIECES_MSG);
	uint32_t lens[2] = { FIRST_PIECE, flen - FIRST_PIECE };

	forge_split(ep, TOOL, f, p, lens, 2);
	forge_post(ep, p, 2, false);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tag", required_argument, NULL, 't' },
		{ "peer-ip", required_argument, NULL, 'p' },
		{ "peer-tag", required_argument, NULL, 'P' },
		{ "other-ip", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	UNET_OPTS_INIT(unet_endpoint_opts, o);
	const struct unetd_ep_counters *k;
	struct unet_endpoint *ep;
	struct unet_channel *ch;
	uint8_t peer[16], other[16];
	int c, tag = 0, peer_tag = 0, ok, have = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 't')
			tag = atoi(optarg);
		else if (c == 'P')
			peer_tag = atoi(optarg);
		else if (c == 'p' && inet_pton(AF_INET6, optarg, peer) == 1)
			have |= 1;
		else if (c == 'o' && inet_pton(AF_INET6, optarg, other) == 1)
			have |= 2;
		else
			return 2;
	}
	if (optind + 1 != argc || tag <= 0 || peer_tag <= 0 || tag >= 65535 || peer_tag >= 65535 ||
	    have != 3) {
		fprintf(stderr, "usage: " TOOL " IFACE --tag T --peer-ip ADDR6 --peer-tag P "
				"--other-ip ADDR6\n");
		return 2;
	}
	unet_set_log_fn(forge_on_log, TOOL);
	o.kind = UNET_ENDPOINT_EMULATED;
	ep = unet_endpoint__create(argv[optind], &o);
	ch = ep ? unet_channel__open_ipv6(ep, (uint16_t)tag, peer, 0, (uint16_t)peer_tag, NULL)
		: NULL;
	if (!ch) {
		fprintf(stderr, TOOL ": %s\n", strerror(errno));
		return 1;
	}
	if (unet_channel__max_payload(ch) < PIECES_MSG) {
		fprintf(stderr, TOOL ": max_payload %u, want %u at least\n",
			unet_channel__max_payload(ch), PIECES_MSG);
		return 1;
	}
	for (enum change how = F_HONEST; how < F__WHOLE; how++)
		send_whole(ep, ch, other, how);
	if (forge_settle(ep, TOOL))
		return 1;
	for (enum change how = P_HONEST; how < P__END; how++) {
		send_pieces(ep, ch, other, how);
		if (forge_settle(ep, TOOL))
			return 1;
	}
	send_whole(ep, ch, other, F_HONEST);
	if (forge_settle(ep, TOOL))
		return 1;
	k = &ep->region->counters;
	printf("forge-chan6 tx_sent=%" PRIu64 " tx_foreign_tag=%" PRIu64
	       " tx_foreign_peer=%" PRIu64 " tx_bad_frame=%" PRIu64 " tx_bad_pieces=%" PRIu64 "\n",
	       k->tx_sent, k->tx_foreign_tag, k->tx_foreign_peer, k->tx_bad_frame,
	       k->tx_bad_pieces);
	ok = k->tx_sent == 3 && k->tx_foreign_tag == 5 && k->tx_foreign_peer == 5 &&
	     k->tx_bad_frame == 9 && !k->tx_bad_pieces;
	unet_channel__close(ch);
	unet_endpoint__destroy(ep);
	return ok ? 0 : 1;
}
