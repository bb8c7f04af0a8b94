/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet-forge - a hostile client of unetd: on an emulated endpoint it
 * writes frames straight onto its send ring (as any client can: the ring
 * is in its memory) that the daemon must refuse, between two honest
 * messages:
 *
 *   unet-forge IFACE --tag T --peer MAC --peer-tag P --other-mac MAC
 *
 * Sends, in order: an honest message; a frame from a tag it does not own;
 * to another MAC; to another peer tag; a raw IPv4 frame; a U-Net header
 * whose length overruns the frame; a descriptor past the segment; one
 * longer than a frame; an honest message.  Then prints the daemon's
 * counters for the endpoint as
 *   forge tx_sent=N tx_foreign_tag=N tx_foreign_peer=N tx_bad_frame=N tx_bad_desc=N
 * and exits 0 if they are 2, 1, 2, 2, 2: what the daemon must have done.
 * The peer (a unet-peer hold on the other side) must see exactly the two
 * honest messages.  Needs unetd (UNET_DAEMON_SOCKET); run as any user the
 * policy lets have an emulated endpoint with tag T.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/objects.h"
#include "proto/unetd_proto.h"

static void on_log(enum unet_log_level l, const char *msg, void *ctx)
{
	(void)ctx;
	if (l <= UNET_LOG_WARN)
		fprintf(stderr, "unet-forge: libunet: %s\n", msg);
}

/* Put a descriptor (addr, len) on the endpoint's send ring as it is. */
static void raw(struct unet_endpoint *ep, uint64_t addr, uint32_t len)
{
	struct xsk_ring_prod *tx = &ep->q[0].tx;
	uint32_t idx = 0;

	while (xsk_ring_prod__reserve(tx, 1, &idx) != 1)
		unet_endpoint__complete(ep);
	xsk_ring_prod__tx_desc(tx, idx)->addr = addr;
	xsk_ring_prod__tx_desc(tx, idx)->len = len;
	xsk_ring_prod__tx_desc(tx, idx)->options = 0;
	xsk_ring_prod__submit(tx, 1);
	ep->q[0].tx_pending++;
	if (xsk_ring_prod__needs_wakeup(tx))
		unet_remote_kick(ep);
}

/* A frame built in a buffer of our own, sent raw.  The buffer stays
 * ours in the pool's eyes until the daemon completes it. */
static void forged(struct unet_endpoint *ep, const uint8_t dst[6], uint16_t proto,
		   uint16_t dst_tag, uint16_t src_tag, uint16_t hdr_len, uint32_t flen)
{
	uint64_t buf = unet_endpoint__buf_alloc(ep);
	uint8_t *f = (uint8_t *)ep->segment + buf + 2;

	memset(f, 0x5a, flen);
	memcpy(f, dst, 6);
	memcpy(f + 6, ep->mac, 6);
	f[12] = (uint8_t)(proto >> 8);
	f[13] = (uint8_t)proto;
	f[14] = UNET_WIRE_VERSION;
	f[15] = 0;
	f[16] = (uint8_t)(dst_tag >> 8);
	f[17] = (uint8_t)dst_tag;
	f[18] = (uint8_t)(src_tag >> 8);
	f[19] = (uint8_t)src_tag;
	f[20] = (uint8_t)(hdr_len >> 8);
	f[21] = (uint8_t)hdr_len;
	unet_pool_move(&ep->pool, buf, UNET_FRAME_APP, UNET_FRAME_KERNEL);
	raw(ep, buf + 2, flen);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tag", required_argument, NULL, 't' },
		{ "peer", required_argument, NULL, 'p' },
		{ "peer-tag", required_argument, NULL, 'P' },
		{ "other-mac", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	UNET_OPTS_INIT(unet_endpoint_opts, o);
	uint8_t peer[6] = { 0 }, other[6] = { 0 };
	const struct unetd_ep_counters *k;
	long tag = 0, peer_tag = 0;
	struct unet_endpoint *ep;
	struct unet_channel *ch;
	int c, ok;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			tag = strtol(optarg, NULL, 10);
			break;
		case 'P':
			peer_tag = strtol(optarg, NULL, 10);
			break;
		case 'p':
			if (unet_parse_mac(optarg, peer))
				return 2;
			break;
		case 'o':
			if (unet_parse_mac(optarg, other))
				return 2;
			break;
		default:
			return 2;
		}
	}
	if (optind + 1 != argc || tag <= 0 || tag > 65534 || peer_tag <= 0 || peer_tag > 65534) {
		fprintf(stderr, "usage: unet-forge IFACE --tag T --peer MAC --peer-tag P "
				"--other-mac MAC\n");
		return 2;
	}
	unet_set_log_fn(on_log, NULL);
	o.kind = UNET_ENDPOINT_EMULATED;
	ep = unet_endpoint__create(argv[optind], &o);
	if (!ep) {
		fprintf(stderr, "unet-forge: endpoint: %s\n", strerror(errno));
		return 1;
	}
	ch = unet_channel__open(ep, (uint16_t)tag, peer, (uint16_t)peer_tag, NULL);
	if (!ch) {
		fprintf(stderr, "unet-forge: channel: %s\n", strerror(errno));
		return 1;
	}
	if (unet_channel__send_copy(ch, "honest-1", 8))
		return 1;
	forged(ep, peer, UNET_ETH_P, (uint16_t)peer_tag, (uint16_t)(tag + 1), 8, 60); /* foreign tag */
	forged(ep, other, UNET_ETH_P, (uint16_t)peer_tag, (uint16_t)tag, 8, 60);      /* foreign MAC */
	forged(ep, peer, UNET_ETH_P, (uint16_t)(peer_tag + 1), (uint16_t)tag, 8, 60); /* foreign peer tag */
	forged(ep, peer, 0x0800, 0, 0, 0, 60);					       /* raw IPv4 */
	forged(ep, peer, UNET_ETH_P, (uint16_t)peer_tag, (uint16_t)tag, 200, 60);    /* len overruns */
	raw(ep, ep->segment_size + 4096, 60);					       /* past the segment */
	{
		uint64_t buf = unet_endpoint__buf_alloc(ep);

		unet_pool_move(&ep->pool, buf, UNET_FRAME_APP, UNET_FRAME_KERNEL);
		raw(ep, buf + 2, ep->frame_size); /* runs past its frame */
	}
	if (unet_channel__send_copy(ch, "honest-2", 8))
		return 1;
	if (unet_endpoint__flush(ep, 2000))
		fprintf(stderr, "unet-forge: flush did not complete\n");
	k = &ep->region->counters;
	printf("forge tx_sent=%" PRIu64 " tx_foreign_tag=%" PRIu64 " tx_foreign_peer=%" PRIu64
	       " tx_bad_frame=%" PRIu64 " tx_bad_desc=%" PRIu64 "\n",
	       k->tx_sent, k->tx_foreign_tag, k->tx_foreign_peer, k->tx_bad_frame, k->tx_bad_desc);
	ok = k->tx_sent == 2 && k->tx_foreign_tag == 1 && k->tx_foreign_peer == 2 &&
	     k->tx_bad_frame == 2 && k->tx_bad_desc == 2;
	unet_endpoint__destroy(ep);
	return ok ? 0 : 1;
}
