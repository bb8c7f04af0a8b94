/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet-forge-chan - a hostile client of unetd on a routable channel: on an
 * emulated endpoint with one routable channel open (tag T to PEER, peer
 * tag P) it writes onto its send ring, as any client can, frames the
 * daemon must refuse, between two honest messages:
 *
 *   unet-forge-chan IFACE --tag T --peer-ip PEER --peer-tag P --other-ip ADDR
 *
 * Each forged frame is the channel's own, built as the library builds it
 * (IP checksum right), with one thing changed: from ADDR; from another
 * source port; to ADDR; to another MAC; to another peer tag; from a tag
 * not its own; the message as raw U-Net to the channel's next hop; an IP
 * fragment; an IP length past the datagram; a UDP length, a U-Net length
 * that does not add up; a wrong IP checksum; IP options; the channel's
 * frame as IPv6 would carry it (well formed, from the IPv4 channel's tag:
 * a source that is not the channel's).  Then prints the daemon's
 * counters for the endpoint as
 *   forge-chan tx_sent=N tx_foreign_tag=N tx_foreign_peer=N tx_bad_frame=N
 * and exits 0 if they are 2, 4, 4, 6: what the daemon must have done.
 * The peer must see exactly the two honest messages.  Needs unetd
 * (UNET_DAEMON_SOCKET) and a policy that grants tag T.
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
#include "forge_ring.h"

/* The IPv4 header's checksum, written again after a change. */
static void ip_recsum(uint8_t *ip)
{
	uint32_t sum = 0;

	put16(ip + 10, 0);
	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	put16(ip + 10, (uint16_t)~sum);
}

enum change {
	F_HONEST,
	F_FROM_OTHER_ADDR,
	F_FROM_OTHER_PORT,
	F_TO_OTHER_ADDR,
	F_TO_OTHER_MAC,
	F_TO_OTHER_TAG,
	F_FROM_OTHER_TAG,
	F_RAW_UNET,
	F_FRAGMENT,
	F_IP_LEN_LONG,
	F_UDP_LEN_BAD,
	F_UNET_LEN_BAD,
	F_CSUM_BAD,
	F_IP_OPTIONS,
	F_AS_IPV6,
};

/* The channel's frame of 16 payload bytes with one change, sent raw. */
static void send_changed(struct unet_endpoint *ep, const struct unet_channel *ch, uint32_t other,
			 enum change how)
{
	static const uint8_t other_mac[6] = { 2, 0, 0, 0, 0, 0x99 };
	uint64_t buf = unet_endpoint__buf_alloc(ep);
	uint8_t *f = (uint8_t *)ep->segment + buf + 2, *ip = f + UNET_ETH_HLEN;
	struct unet_wire_udp w = ch->w;
	uint32_t flen;

	if (how == F_FROM_OTHER_ADDR)
		w.saddr = other;
	if (how == F_FROM_OTHER_PORT)
		w.sport = (uint16_t)(w.sport + 1);
	if (how == F_TO_OTHER_ADDR)
		w.daddr = other;
	if (how == F_TO_OTHER_MAC)
		memcpy(w.dst_mac, other_mac, 6);
	if (how == F_TO_OTHER_TAG)
		w.dst_tag = (uint16_t)(w.dst_tag + 1);
	if (how == F_FROM_OTHER_TAG)
		w.src_tag = (uint16_t)(w.src_tag + 1);
	if (how == F_AS_IPV6) { /* fd00::b to fd00::a, the checksum right */
		w.v6 = true;
		memset(w.saddr6, 0, 16);
		memset(w.daddr6, 0, 16);
		w.saddr6[0] = w.daddr6[0] = 0xfd;
		w.saddr6[15] = 0xb;
		w.daddr6[15] = 0xa;
	}
	memset(f, 0, 128);
	memcpy(f + unet_wire_udp_payload_off(&w),
	       how == F_HONEST ? "honest message!" : "forged message!", 16);
	flen = unet_wire_udp_build(f, &w, 16);
	switch (how) {
	case F_RAW_UNET: /* the U-Net header and message straight after Ethernet */
		memmove(f + UNET_ETH_HLEN, f + UNET_UDP_PAYLOAD_OFF - UNET_HDR_LEN, UNET_HDR_LEN + 16);
		put16(f + 12, UNET_ETH_P);
		flen = 60;
		break;
	case F_FRAGMENT:
		put16(ip + 6, 0x2000); /* more fragments follow */
		ip_recsum(ip);
		break;
	case F_IP_LEN_LONG:
		put16(ip + 2, (uint16_t)((ip[2] << 8 | ip[3]) + 4));
		ip_recsum(ip);
		flen += 4;
		break;
	case F_UDP_LEN_BAD:
		put16(ip + 24, (uint16_t)((ip[24] << 8 | ip[25]) - 1));
		break;
	case F_UNET_LEN_BAD:
		put16(ip + 34, 15);
		break;
	case F_CSUM_BAD:
		ip[11] ^= 1;
		break;
	case F_IP_OPTIONS:
		ip[0] = 0x46;
		ip_recsum(ip);
		break;
	default:
		break;
	}
	unet_pool_move(&ep->pool, buf, UNET_FRAME_APP, UNET_FRAME_TX);
	forge_raw(ep, buf + 2, flen);
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
	uint32_t peer = 0, other = 0;
	int c, tag = 0, peer_tag = 0, ok;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 't')
			tag = atoi(optarg);
		else if (c == 'P')
			peer_tag = atoi(optarg);
		else if (c == 'p' && inet_pton(AF_INET, optarg, &peer) == 1)
			continue;
		else if (c == 'o' && inet_pton(AF_INET, optarg, &other) == 1)
			continue;
		else
			return 2;
	}
	if (optind + 1 != argc || tag <= 0 || peer_tag <= 0 || tag >= 65535 || peer_tag >= 65535 ||
	    !peer || !other) {
		fprintf(stderr, "usage: unet-forge-chan IFACE --tag T --peer-ip ADDR --peer-tag P "
				"--other-ip ADDR\n");
		return 2;
	}
	unet_set_log_fn(forge_on_log, "unet-forge-chan");
	o.kind = UNET_ENDPOINT_EMULATED;
	ep = unet_endpoint__create(argv[optind], &o);
	ch = ep ? unet_channel__open_ipv4(ep, (uint16_t)tag, peer, 0, (uint16_t)peer_tag, NULL)
		: NULL;
	if (!ch) {
		fprintf(stderr, "unet-forge-chan: %s\n", strerror(errno));
		return 1;
	}
	for (enum change how = F_HONEST; how <= F_AS_IPV6; how++)
		send_changed(ep, ch, other, how);
	send_changed(ep, ch, other, F_HONEST);
	if (unet_endpoint__flush(ep, 2000))
		fprintf(stderr, "unet-forge-chan: flush did not complete\n");
	k = &ep->region->counters;
	printf("forge-chan tx_sent=%" PRIu64 " tx_foreign_tag=%" PRIu64 " tx_foreign_peer=%" PRIu64
	       " tx_bad_frame=%" PRIu64 "\n",
	       k->tx_sent, k->tx_foreign_tag, k->tx_foreign_peer, k->tx_bad_frame);
	ok = k->tx_sent == 2 && k->tx_foreign_tag == 4 && k->tx_foreign_peer == 4 &&
	     k->tx_bad_frame == 6;
	unet_channel__close(ch);
	unet_endpoint__destroy(ep);
	return ok ? 0 : 1;
}
