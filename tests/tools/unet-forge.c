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
 * longer than a frame; a well-formed message of its own channel, 3000
 * bytes long, inside its 4096-byte frame but longer than any frame the
 * daemon sends (its buffers are 2048 bytes: it must refuse it before it
 * copies a byte); an honest message.  Then prints the daemon's counters
 * for the endpoint as
 *   forge tx_sent=N tx_foreign_tag=N tx_foreign_peer=N tx_bad_frame=N tx_bad_desc=N
 * and exits 0 if they are 2, 1, 2, 2, 3: what the daemon must have done.
 * The peer (a unet-peer hold on the other side) must see exactly the two
 * honest messages.  Needs unetd (UNET_DAEMON_SOCKET); run as any user the
 * policy lets have an emulated endpoint with tag T.
 *
 *   unet-forge IFACE --tag T --peer MAC --peer-tag P --hostile SECONDS [--count N]
 *
 * A hostile region: the first thread sends honest messages (at most N,
 * default 2000000) by writing frames and descriptors straight onto the
 * send ring, keeps the free queue stocked and empties the receive queue;
 * the second thread meanwhile rewrites, at random (seeded, --seed), the
 * send ring's descriptors (their flag of a frame in pieces too), the
 * frames in the segment, every ring index and descriptor the client may
 * write, and the region's header, for SECONDS, in storms of 20 ms with
 * 5 ms of calm between them.  Prints
 *   hostile honest=N scribbles=N tx_sent=N tx_bad_desc=N tx_bad_frame=N
 *           tx_foreign_tag=N tx_foreign_peer=N rx_delivered=N rx_dropped=N
 *           tx_bad_pieces=N
 * (the daemon's counters for the endpoint: the one part of the region the
 * scribbler spares) and exits 0 once
 * the time is up.  What must hold is checked elsewhere: the daemon lives,
 * serves others, and puts only well-formed frames of this channel on the
 * wire.
 *
 *   unet-forge IFACE --tag T --peer MAC --peer-tag P --stall SECONDS
 *
 * A client that never drains its receive queue: opens the channel, prints
 * "ready", sleeps SECONDS (or until SIGTERM/SIGINT), then prints
 *   stall rx_delivered=N rx_dropped=N
 * from the daemon's counters for it.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stddef.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/objects.h"
#include "proto/unetd_proto.h"
#include "forge_ring.h"

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
	unet_pool_move(&ep->pool, buf, UNET_FRAME_APP, UNET_FRAME_TX);
	forge_raw(ep, buf + 2, flen);
}

/* ---- --stall ---------------------------------------------------------------- */

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static int stall(struct unet_endpoint *ep, double seconds)
{
	const struct unetd_ep_counters *k = &ep->region->counters;
	struct sigaction sa = { .sa_handler = on_signal };
	struct timespec t0, t;

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	printf("ready endpoint=%u\n", ep->remote_ep);
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		usleep(20000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (!stop_flag && (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	printf("stall rx_delivered=%" PRIu64 " rx_dropped=%" PRIu64 "\n",
	       __atomic_load_n(&k->rx_delivered, __ATOMIC_RELAXED),
	       __atomic_load_n(&k->rx_dropped, __ATOMIC_RELAXED));
	return 0;
}

/* ---- --hostile --------------------------------------------------------------- */

struct hostile {
	struct unet_endpoint *ep;
	uint8_t peer[6];
	uint16_t tag, peer_tag;
	uint64_t max_honest, honest, scribbles, seed;
	atomic_bool done;
};

static uint64_t rnd(uint64_t *s)
{
	/* xorshift64*: seeded, so a failure can be replayed. */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* The frames the honest thread uses: the first quarter of the segment
 * for sending, the second for receiving. */
#define HONEST_TX_FRAMES 256u
#define HONEST_RX_FRAMES 256u

static void honest_frame(struct hostile *h, uint8_t *f, uint64_t seq)
{
	memcpy(f, h->peer, 6);
	memcpy(f + 6, h->ep->mac, 6);
	f[12] = (uint8_t)(UNET_ETH_P >> 8);
	f[13] = (uint8_t)UNET_ETH_P;
	f[14] = UNET_WIRE_VERSION;
	f[15] = 0;
	f[16] = (uint8_t)(h->peer_tag >> 8);
	f[17] = (uint8_t)h->peer_tag;
	f[18] = (uint8_t)(h->tag >> 8);
	f[19] = (uint8_t)h->tag;
	f[20] = 0;
	f[21] = 32;
	memcpy(f + UNET_PAYLOAD_OFF, &seq, sizeof(seq));
	memset(f + UNET_PAYLOAD_OFF + 8, 0x48, 24);
}

/* Thread 1: honest sends straight onto the ring, with its own indices
 * (whatever the scribbler left in the shared ones is overwritten). */
static void *honest_thread(void *arg)
{
	struct hostile *h = arg;
	struct unet_endpoint *ep = h->ep;
	struct unet_queue *q = &ep->q[0];
	uint32_t tx_prod = *q->tx.producer, fill_prod = *q->fill.producer, stuck = 0;
	uint32_t fsz = ep->frame_size;

	while (!atomic_load(&h->done) && h->honest < h->max_honest) {
		uint32_t cons = __atomic_load_n(q->tx.consumer, __ATOMIC_ACQUIRE);
		struct xdp_desc *d;
		uint64_t addr;

		/* The daemon consumed past our producer (it took a scribbled
		 * producer index at its word): carry on from where it is,
		 * or neither side would ever move again.  Likewise when the
		 * ring has looked full for a while: the consumer index may be
		 * a scribble, and the daemon, seeing our producer more than a
		 * ring ahead of where it is, reads the ring as empty; start
		 * again from the consumer index, or from the completion
		 * ring's producer (the daemon completes every entry it
		 * takes), in turn. */
		if ((int32_t)(cons - tx_prod) > 0)
			tx_prod = cons;
		if (tx_prod - cons >= q->tx.size && ++stuck % 64 == 0)
			tx_prod = (stuck & 64) ? cons : __atomic_load_n(q->comp.producer, __ATOMIC_ACQUIRE);
		/* Room on the send ring (the daemon's consumer index; a
		 * scribbled one only makes us overwrite or wait). */
		if (tx_prod - cons < q->tx.size) {
			addr = (uint64_t)(h->honest % HONEST_TX_FRAMES) * fsz + 2;
			honest_frame(h, (uint8_t *)ep->segment + addr, h->honest);
			d = &((struct xdp_desc *)q->tx.ring)[tx_prod & q->tx.mask];
			d->addr = addr;
			d->len = 60;
			d->options = 0;
			__atomic_store_n(q->tx.producer, ++tx_prod, __ATOMIC_RELEASE);
			h->honest++;
		}
		/* Keep the free queue stocked and throw away what arrived. */
		if ((int32_t)(__atomic_load_n(q->fill.consumer, __ATOMIC_ACQUIRE) - fill_prod) > 0)
			fill_prod = __atomic_load_n(q->fill.consumer, __ATOMIC_ACQUIRE);
		while (fill_prod - __atomic_load_n(q->fill.consumer, __ATOMIC_ACQUIRE) < q->fill.size) {
			((uint64_t *)q->fill.ring)[fill_prod & q->fill.mask] =
				(uint64_t)(HONEST_TX_FRAMES + fill_prod % HONEST_RX_FRAMES) * fsz;
			__atomic_store_n(q->fill.producer, ++fill_prod, __ATOMIC_RELEASE);
		}
		__atomic_store_n(q->rx.consumer, __atomic_load_n(q->rx.producer, __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
		__atomic_store_n(q->comp.consumer, __atomic_load_n(q->comp.producer, __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
		/* Kick every 16 messages, when the flags say so, and when the
		 * ring looks full (its consumer index may be a scribble: the
		 * daemon rewrites it once it consumes again). */
		if ((h->honest & 15) == 0 || (*q->tx.flags & UNETD_RING_NEED_WAKEUP) ||
		    tx_prod - cons >= q->tx.size) {
			unet_remote_kick(ep);
			sched_yield();
		}
	}
	return NULL;
}

/* Thread 2: scribble at random over everything the client can write. */
static void scribble(struct hostile *h)
{
	struct unet_endpoint *ep = h->ep;
	struct unet_queue *q = &ep->q[0];
	uint8_t *region = (uint8_t *)ep->region;
	uint64_t r = rnd(&h->seed), v = rnd(&h->seed);
	uint32_t *idx[] = { q->tx.producer, q->tx.consumer, q->fill.producer, q->fill.consumer,
			    q->rx.producer, q->rx.consumer, q->comp.producer, q->comp.consumer,
			    q->tx.flags };
	/* Values that hit the checks' edges as well as plain noise. */
	uint64_t edges[] = { 0, 1, 2, ep->frame_size - 1, ep->frame_size, ep->frame_size + 2,
			     ep->segment_size - 1, ep->segment_size, ep->segment_size + 2,
			     UINT32_MAX, UINT64_MAX, (uint64_t)1 << 63, v };
	uint64_t val = edges[(v >> 8) % (sizeof(edges) / sizeof(edges[0]))];

	switch (r % 8) {
	case 0: /* a send descriptor */
	case 1: {
		struct xdp_desc *d = &((struct xdp_desc *)q->tx.ring)[(r >> 8) & q->tx.mask];

		if (r & (1u << 4))
			d->addr = val;
		else if (r & (1u << 6))
			d->len = (uint32_t)val;
		else /* a piece of a frame, or its last (XDP_PKT_CONTD) */
			d->options ^= 1;
		break;
	}
	case 2: { /* a ring index: anything, or a near miss */
		uint32_t *p = idx[(r >> 8) % (sizeof(idx) / sizeof(idx[0]))];

		*p = (r & (1u << 5)) ? (uint32_t)val : *p + (uint32_t)(v % 5000) - 2500;
		break;
	}
	case 3: /* a byte of an honest frame's header (tags, lengths, EtherType, MACs) */
	case 4: {
		uint64_t f = (r >> 8) % HONEST_TX_FRAMES;

		((uint8_t *)ep->segment)[f * ep->frame_size + 2 + (v % 64)] = (uint8_t)(v >> 16);
		break;
	}
	case 5: /* anywhere in the segment */
		((uint8_t *)ep->segment)[v % ep->segment_size] = (uint8_t)r;
		break;
	case 6: /* a free queue entry (the daemon writes into what it names) */
		((uint64_t *)q->fill.ring)[(r >> 8) & q->fill.mask] = val;
		break;
	case 7: { /* anywhere in the region's header and rings but the
		   * daemon's counters (it only adds to them; sparing them
		   * keeps the summary line meaningful) */
		uint64_t at = v % (uint64_t)((uint8_t *)ep->segment - region);
		uint64_t k0 = offsetof(struct unetd_region, counters);

		if (at < k0 || at >= k0 + sizeof(struct unetd_ep_counters))
			region[at] = (uint8_t)r;
		break;
	}
	}
	h->scribbles++;
}

static int hostile(struct unet_endpoint *ep, const uint8_t peer[6], uint16_t tag,
		   uint16_t peer_tag, double seconds, uint64_t count, uint64_t seed)
{
	struct hostile h = { .ep = ep, .tag = tag, .peer_tag = peer_tag, .max_honest = count,
			     .seed = seed ? seed : 1 };
	const struct unetd_ep_counters *k = &ep->region->counters;
	struct timespec t0, t;
	pthread_t th;
	int err;

	if (ep->nframes < HONEST_TX_FRAMES + HONEST_RX_FRAMES) {
		fprintf(stderr, "unet-forge: the segment is too small\n");
		return 1;
	}
	memcpy(h.peer, peer, 6);
	atomic_init(&h.done, false);
	err = pthread_create(&th, NULL, honest_thread, &h);
	if (err) {
		fprintf(stderr, "unet-forge: pthread_create: %s\n", strerror(err));
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		for (int i = 0; i < 64; i++)
			scribble(&h);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 >= seconds)
			break;
		/* Now and then kick the daemon ourselves, whatever the flags say. */
		if ((h.scribbles & 1023) == 0)
			unet_remote_kick(ep);
		if ((h.scribbles & 255) == 0)
			sched_yield();
		/* Storms of 20 ms with 5 ms of calm between them: in the calm
		 * the honest thread's messages get through a region left in
		 * whatever state the storm made, which is a case too. */
		if (t.tv_nsec / 1000000 % 25 >= 20)
			usleep(5000);
	}
	atomic_store(&h.done, true);
	pthread_join(th, NULL);
	printf("hostile honest=%" PRIu64 " scribbles=%" PRIu64 " tx_sent=%" PRIu64
	       " tx_bad_desc=%" PRIu64 " tx_bad_frame=%" PRIu64 " tx_foreign_tag=%" PRIu64
	       " tx_foreign_peer=%" PRIu64 " rx_delivered=%" PRIu64 " rx_dropped=%" PRIu64
	       " tx_bad_pieces=%" PRIu64 "\n",
	       h.honest, h.scribbles, k->tx_sent, k->tx_bad_desc, k->tx_bad_frame, k->tx_foreign_tag,
	       k->tx_foreign_peer, k->rx_delivered, k->rx_dropped, k->tx_bad_pieces);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tag", required_argument, NULL, 't' },
		{ "peer", required_argument, NULL, 'p' },
		{ "peer-tag", required_argument, NULL, 'P' },
		{ "other-mac", required_argument, NULL, 'o' },
		{ "hostile", required_argument, NULL, 'H' },
		{ "stall", required_argument, NULL, 'S' },
		{ "count", required_argument, NULL, 'c' },
		{ "seed", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	UNET_OPTS_INIT(unet_endpoint_opts, o);
	uint8_t peer[6] = { 0 }, other[6] = { 0 };
	const struct unetd_ep_counters *k;
	long tag = 0, peer_tag = 0;
	double hostile_s = 0, stall_s = 0;
	uint64_t count = 2000000, seed = 0x5eed;
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
		case 'H':
			hostile_s = strtod(optarg, NULL);
			if (!(hostile_s > 0 && hostile_s <= 600))
				return 2;
			break;
		case 'S':
			stall_s = strtod(optarg, NULL);
			if (!(stall_s > 0 && stall_s <= 600))
				return 2;
			break;
		case 'c':
			count = strtoull(optarg, NULL, 0);
			break;
		case 'r':
			seed = strtoull(optarg, NULL, 0);
			break;
		default:
			return 2;
		}
	}
	if (optind + 1 != argc || tag <= 0 || tag > 65534 || peer_tag <= 0 || peer_tag > 65534) {
		fprintf(stderr, "usage: unet-forge IFACE --tag T --peer MAC --peer-tag P "
				"{--other-mac MAC | --hostile SECONDS [--count N] [--seed S] | "
				"--stall SECONDS}\n");
		return 2;
	}
	unet_set_log_fn(forge_on_log, "unet-forge");
	o.kind = UNET_ENDPOINT_EMULATED;
	/* Frames larger than the daemon's own (2048). */
	o.frame_size = 4096;
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
	if (hostile_s > 0 || stall_s > 0) {
		setvbuf(stdout, NULL, _IOLBF, 0);
		ok = hostile_s > 0 ? hostile(ep, peer, (uint16_t)tag, (uint16_t)peer_tag, hostile_s,
					     count, seed)
				   : stall(ep, stall_s);
		/* The region is in an undefined state: do not flush or close
		 * channels through it, just go (the daemon frees it all). */
		_exit(ok);
	}
	if (unet_channel__send_copy(ch, "honest-1", 8))
		return 1;
	forged(ep, peer, UNET_ETH_P, (uint16_t)peer_tag, (uint16_t)(tag + 1), 8, 60); /* foreign tag */
	forged(ep, other, UNET_ETH_P, (uint16_t)peer_tag, (uint16_t)tag, 8, 60);      /* foreign MAC */
	forged(ep, peer, UNET_ETH_P, (uint16_t)(peer_tag + 1), (uint16_t)tag, 8, 60); /* foreign peer tag */
	forged(ep, peer, 0x0800, 0, 0, 0, 60);					       /* raw IPv4 */
	forged(ep, peer, UNET_ETH_P, (uint16_t)peer_tag, (uint16_t)tag, 200, 60);    /* len overruns */
	forge_raw(ep, ep->segment_size + 4096, 60);				       /* past the segment */
	{
		uint64_t buf = unet_endpoint__buf_alloc(ep);

		unet_pool_move(&ep->pool, buf, UNET_FRAME_APP, UNET_FRAME_TX);
		forge_raw(ep, buf + 2, ep->frame_size); /* runs past its frame */
	}
	/* Inside our frame, longer than the daemon's: a descriptor error,
	 * refused before any copy (once it overran the daemon's buffer). */
	forged(ep, peer, UNET_ETH_P, (uint16_t)peer_tag, (uint16_t)tag, 3000 - UNET_PAYLOAD_OFF, 3000);
	if (unet_channel__send_copy(ch, "honest-2", 8))
		return 1;
	if (unet_endpoint__flush(ep, 2000))
		fprintf(stderr, "unet-forge: flush did not complete\n");
	k = &ep->region->counters;
	printf("forge tx_sent=%" PRIu64 " tx_foreign_tag=%" PRIu64 " tx_foreign_peer=%" PRIu64
	       " tx_bad_frame=%" PRIu64 " tx_bad_desc=%" PRIu64 "\n",
	       k->tx_sent, k->tx_foreign_tag, k->tx_foreign_peer, k->tx_bad_frame, k->tx_bad_desc);
	ok = k->tx_sent == 2 && k->tx_foreign_tag == 1 && k->tx_foreign_peer == 2 &&
	     k->tx_bad_frame == 2 && k->tx_bad_desc == 3;
	unet_endpoint__destroy(ep);
	return ok ? 0 : 1;
}
