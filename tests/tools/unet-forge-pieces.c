/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet-forge-pieces - a hostile client of unetd whose messages come in
 * pieces: on an emulated endpoint at a jumbo MTU it writes chains of
 * descriptors (XDP_PKT_CONTD on all but the last) straight onto its send
 * ring, each a lie the daemon must refuse, between two honest 5000-byte
 * messages:
 *
 *   unet-forge-pieces IFACE --tag T --peer MAC --peer-tag P
 *
 * The lies, in order (each waited for: the daemon has taken every
 * descriptor before the next is written):
 *   over     the header's length 100 bytes more than the pieces hold
 *   under    100 bytes less
 *   outside  the second piece past the end of the segment
 *   across   the second piece running past the end of its frame
 *   tag      the first piece 18 bytes long; the second carries a source
 *            tag that is no channel of this endpoint
 *   mac      the first piece 8 bytes long; the second carries a source
 *            MAC that is not the interface's
 *   dst-tag  a destination tag that is not the channel's peer's
 *   dst-mac  a destination MAC that is not the channel's peer's
 *   many     19 pieces (18 at most)
 *   long     6 full pieces: longer than the largest frame
 *   rewrite  the first piece taken with a header whose length does not
 *            add up; the header then rewritten in the segment to one
 *            that does, before the last piece is posted (the daemon
 *            must judge what it copied, not what the segment says now)
 * then prints the daemon's counters for the endpoint:
 *   pieces tx_sent=N tx_bad_frame=N tx_bad_desc=N tx_foreign_tag=N
 *          tx_foreign_peer=N tx_bad_pieces=N
 * (as read before it overwrites them in its region, as a hostile client
 * may: unetctl stats must still show the daemon's own count)
 * and exits 0 if they are 2, 3, 2, 2, 2, 2 (with --linger S, after
 * keeping the endpoint S seconds more, or until SIGTERM, for a look at
 * it from outside).  The peer must see exactly
 * the two honest messages.  Needs unetd (UNET_DAEMON_SOCKET) serving an
 * MTU of at least 6000 with multi-buffer; run as any user the policy
 * lets have an emulated endpoint with tag T.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/objects.h"
#include "proto/unetd_proto.h"
#include "forge_ring.h"

#define HONEST 5000u

static volatile sig_atomic_t stop_flag;

static void on_term(int sig)
{
	(void)sig;
	stop_flag = 1;
}
#define MAX_CHAIN 20

struct forge {
	struct unet_endpoint *ep;
	uint8_t peer[6];
	uint16_t tag, peer_tag;
	uint64_t bufs[MAX_CHAIN];
	uint32_t nbufs;
};

#define TOOL "unet-forge-pieces"

static uint8_t *at(struct forge *f, uint64_t addr)
{
	return (uint8_t *)f->ep->segment + addr;
}

/* A U-Net frame written across pieces p[0..n) of the given lengths
 * (new buffers each), header fields as given. */
static void frame_in_pieces(struct forge *f, struct forge_piece *p, const uint32_t *lens,
			    uint32_t n, const uint8_t dst[6], const uint8_t src[6], uint16_t dst_tag,
			    uint16_t src_tag, uint16_t plen)
{
	uint8_t frame[16384];

	memset(frame, 0xa5, sizeof(frame));
	memcpy(frame, dst, 6);
	memcpy(frame + 6, src, 6);
	frame[12] = (uint8_t)(UNET_ETH_P >> 8);
	frame[13] = (uint8_t)UNET_ETH_P;
	frame[14] = UNET_WIRE_VERSION;
	frame[15] = 0;
	frame[16] = (uint8_t)(dst_tag >> 8);
	frame[17] = (uint8_t)dst_tag;
	frame[18] = (uint8_t)(src_tag >> 8);
	frame[19] = (uint8_t)src_tag;
	frame[20] = (uint8_t)(plen >> 8);
	frame[21] = (uint8_t)plen;
	/* Every chain here is shorter than frame[]. */
	forge_split(f->ep, TOOL, frame, p, lens, n);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tag", required_argument, NULL, 't' },
		{ "peer", required_argument, NULL, 'p' },
		{ "peer-tag", required_argument, NULL, 'P' },
		{ "linger", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	UNET_OPTS_INIT(unet_endpoint_opts, o);
	static const uint8_t other[6] = { 0x02, 0, 0, 0, 0, 0x99 };
	const struct unetd_ep_counters *k;
	struct unet_endpoint_info info;
	struct forge_piece p[MAX_CHAIN];
	uint32_t lens[MAX_CHAIN], n, room;
	struct forge f = { 0 };
	uint8_t msg[HONEST];
	struct unet_channel *ch;
	long tag = 0, peer_tag = 0, linger = 0;
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
			if (unet_parse_mac(optarg, f.peer))
				return 2;
			break;
		case 'l':
			linger = strtol(optarg, NULL, 10);
			if (linger < 0 || linger > 600)
				return 2;
			break;
		default:
			return 2;
		}
	}
	if (optind + 1 != argc || tag <= 0 || tag > 65534 || peer_tag <= 0 || peer_tag > 65534) {
		fprintf(stderr, "usage: unet-forge-pieces IFACE --tag T --peer MAC --peer-tag P\n");
		return 2;
	}
	f.tag = (uint16_t)tag;
	f.peer_tag = (uint16_t)peer_tag;
	unet_set_log_fn(forge_on_log, "unet-forge-pieces");
	o.kind = UNET_ENDPOINT_EMULATED;
	f.ep = unet_endpoint__create(argv[optind], &o);
	if (!f.ep) {
		fprintf(stderr, "unet-forge-pieces: endpoint: %s\n", strerror(errno));
		return 1;
	}
	unet_endpoint__info(f.ep, &info);
	if (!info.multi_buffer || info.max_payload < HONEST) {
		fprintf(stderr, "unet-forge-pieces: no messages in pieces here (max_payload %u)\n",
			info.max_payload);
		unet_endpoint__destroy(f.ep);
		return 1;
	}
	ch = unet_channel__open(f.ep, f.tag, f.peer, f.peer_tag, NULL);
	if (!ch) {
		fprintf(stderr, "unet-forge-pieces: channel: %s\n", strerror(errno));
		return 1;
	}
	k = &f.ep->region->counters;
	room = f.ep->frame_size - 256 - UNET_ALIGN_PAD; /* what the library puts in a piece */
	for (uint32_t i = 0; i < HONEST; i++)
		msg[i] = (uint8_t)(i * 7 + 1);
	if (unet_channel__send_copy(ch, msg, HONEST) || forge_settle(f.ep, TOOL))
		return 1;

	/* over, under */
	n = forge_even_lens(lens, UNET_PAYLOAD_OFF + HONEST, room);
	frame_in_pieces(&f, p, lens, n, f.peer, f.ep->mac, f.peer_tag, f.tag, HONEST + 100);
	forge_post(f.ep, p, n, false);
	forge_settle(f.ep, TOOL);
	frame_in_pieces(&f, p, lens, n, f.peer, f.ep->mac, f.peer_tag, f.tag, HONEST - 100);
	forge_post(f.ep, p, n, false);
	forge_settle(f.ep, TOOL);
	/* outside: the second piece past the segment */
	frame_in_pieces(&f, p, lens, n, f.peer, f.ep->mac, f.peer_tag, f.tag, HONEST);
	p[1].addr = f.ep->segment_size + 64;
	forge_post(f.ep, p, n, false);
	forge_settle(f.ep, TOOL);
	/* across: the second piece past the end of its frame */
	frame_in_pieces(&f, p, lens, n, f.peer, f.ep->mac, f.peer_tag, f.tag, HONEST);
	p[1].addr = (p[1].addr & ~(uint64_t)(f.ep->frame_size - 1)) + f.ep->frame_size - 100;
	forge_post(f.ep, p, n, false);
	forge_settle(f.ep, TOOL);
	/* tag: the source tag in the second piece, not ours */
	lens[0] = 18;
	n = 1 + forge_even_lens(lens + 1, UNET_PAYLOAD_OFF + HONEST - 18, room);
	frame_in_pieces(&f, p, lens, n, f.peer, f.ep->mac, f.peer_tag, (uint16_t)(f.tag + 1), HONEST);
	forge_post(f.ep, p, n, false);
	forge_settle(f.ep, TOOL);
	/* mac: the source MAC split, its second half in the second piece */
	lens[0] = 8;
	n = 1 + forge_even_lens(lens + 1, UNET_PAYLOAD_OFF + HONEST - 8, room);
	frame_in_pieces(&f, p, lens, n, f.peer, other, f.peer_tag, f.tag, HONEST);
	forge_post(f.ep, p, n, false);
	forge_settle(f.ep, TOOL);
	/* dst-tag, dst-mac */
	n = forge_even_lens(lens, UNET_PAYLOAD_OFF + HONEST, room);
	frame_in_pieces(&f, p, lens, n, f.peer, f.ep->mac, (uint16_t)(f.peer_tag + 1), f.tag, HONEST);
	forge_post(f.ep, p, n, false);
	forge_settle(f.ep, TOOL);
	frame_in_pieces(&f, p, lens, n, other, f.ep->mac, f.peer_tag, f.tag, HONEST);
	forge_post(f.ep, p, n, false);
	forge_settle(f.ep, TOOL);
	/* many: 19 pieces */
	n = forge_even_lens(lens, 19 * 100, 100);
	frame_in_pieces(&f, p, lens, n, f.peer, f.ep->mac, f.peer_tag, f.tag, 19 * 100 - UNET_PAYLOAD_OFF);
	forge_post(f.ep, p, n, false);
	forge_settle(f.ep, TOOL);
	/* long: 6 full pieces, more than the largest frame at MTU 9000 */
	n = forge_even_lens(lens, 6 * room, room);
	frame_in_pieces(&f, p, lens, n, f.peer, f.ep->mac, f.peer_tag, f.tag,
			(uint16_t)(6 * room - UNET_PAYLOAD_OFF));
	forge_post(f.ep, p, n, false);
	forge_settle(f.ep, TOOL);
	/* rewrite: taken with a length that does not add up, then fixed */
	n = forge_even_lens(lens, UNET_PAYLOAD_OFF + HONEST, room);
	frame_in_pieces(&f, p, lens, n, f.peer, f.ep->mac, f.peer_tag, f.tag, HONEST + 1);
	forge_post(f.ep, p, 1, true);
	forge_settle(f.ep, TOOL);
	at(&f, p[0].addr)[20] = (uint8_t)(HONEST >> 8);
	at(&f, p[0].addr)[21] = (uint8_t)HONEST;
	forge_post(f.ep, p + 1, n - 1, false);
	forge_settle(f.ep, TOOL);

	if (unet_channel__send_copy(ch, msg, HONEST) || forge_settle(f.ep, TOOL))
		return 1;
	/* Before the line the test waits for: it sends SIGTERM after it. */
	signal(SIGTERM, on_term);
	{
		struct unetd_ep_counters seen = *k;

		/* Then, as a hostile client may, the counters in the region
		 * are overwritten (its evidence erased, made-up numbers):
		 * root's view (unetctl stats, from the daemon) must be the
		 * daemon's own count, not this. */
		memset(&f.ep->region->counters, 0, sizeof(f.ep->region->counters));
		f.ep->region->counters.tx_sent = 0xdeadbeef;
		printf("pieces tx_sent=%" PRIu64 " tx_bad_frame=%" PRIu64 " tx_bad_desc=%" PRIu64
		       " tx_foreign_tag=%" PRIu64 " tx_foreign_peer=%" PRIu64
		       " tx_bad_pieces=%" PRIu64 "\n",
		       seen.tx_sent, seen.tx_bad_frame, seen.tx_bad_desc, seen.tx_foreign_tag,
		       seen.tx_foreign_peer, seen.tx_bad_pieces);
		ok = seen.tx_sent == 2 && seen.tx_bad_frame == 3 && seen.tx_bad_desc == 2 &&
		     seen.tx_foreign_tag == 2 && seen.tx_foreign_peer == 2 &&
		     seen.tx_bad_pieces == 2;
	}
	fflush(stdout);
	for (long i = 0; i < linger * 100 && !stop_flag; i++)
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	unet_channel__close(ch);
	unet_endpoint__destroy(f.ep);
	return ok ? 0 : 1;
}
