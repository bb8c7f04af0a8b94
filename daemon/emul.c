/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * emul.c - kernel-emulated endpoints (U-Net, section 3.5 of the paper):
 * any number of clients per device queue, each with a shared region
 * (segment and AF_XDP-shaped rings, lib/proto/unetd_proto.h) that this
 * daemon serves from its one real endpoint on the interface.
 *
 * The daemon plays the kernel's part for the region, and trusts nothing
 * in it: every index, descriptor and frame header is read once into the
 * daemon's own memory and checked there, so a client rewriting its region
 * while we work cannot make us act on something we did not check.  The
 * region is a memfd the daemon made and sealed against shrinking, so a
 * client cannot make our accesses fault (SIGBUS) either.
 *
 * Send: a client's frame is copied into a buffer of the real endpoint,
 * then checked: a U-Net frame (EtherType, version, lengths), from a tag
 * this endpoint owns, to that channel's peer MAC and peer tag; or, to
 * the channel port, exactly a routable channel's frame as the daemon
 * decided its headers (chan.c, chan_check.c); or IPv4 UDP, TCP or ARP
 * from an address and port it holds (udp.c, tcp_check.c); the source
 * MAC is written by us.  A frame larger than one
 * buffer comes as a chain of descriptors (XDP_PKT_CONTD): each piece is
 * copied into the endpoint's own gathering buffer as it is taken, and the
 * whole copy is checked, then sent by the real endpoint from its channel
 * (emul_pieces.c); an IPv4 UDP or TCP frame in pieces the same way,
 * its lengths checked to add up and then its source as a single one's.
 * Anything else is dropped and counted by reason
 * (struct unetd_ep_counters).  Clients are served in deficit round robin,
 * weighted by their policy share, so one flooding client cannot starve
 * another.
 *
 * Receive: the real endpoint's channels are the clients' channels
 * (routable ones too: their frames go with their IP and UDP headers);
 * each frame goes to the owner's free buffer (or buffers, as a chain, for a
 * frame larger than one) and receive ring, or, when the
 * owner has no free buffer or no room, is dropped and counted for that
 * owner alone.  UDP datagrams, TCP segments and ARP for the addresses
 * and ports its emulated endpoints hold (daemon/udp.c, daemon/tcp.c)
 * reach the real endpoint too, and a layer of ours on it routes each to
 * its owner the same way.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/bpf.h> /* XDP_PACKET_HEADROOM */
#include <linux/if_xdp.h>

#include "unetd.h"
#include "core/csum.h"
#include "core/pieces.h" /* XDP_PKT_CONTD, UNET_MAX_PIECES */
#include "udp/udp_impl.h"
#include "wire_get.h"

#define DEFAULT_SEGMENT (2u << 20)
#define DEFAULT_RING 1024u
#define MAX_RING 8192u
#define MAX_SEGMENT (64u << 20)
#define RX_HEADROOM 2	 /* payloads 8-byte aligned, as the library's own */
#define TX_OFF 2	 /* where a copied frame starts in our send buffer */
/* Fair service: a client of share S (the policy's weight, 1-1000, 100 by
 * default) may send QUANTUM * S / SHARE_UNIT frames a round: 4 at the
 * default share.  The deficit counts in 1/SHARE_UNIT of a frame, so that
 * small shares add up across rounds and big ones stay proportional. */
#define QUANTUM 4
#define SHARE_UNIT 100
#define DEFICIT_ROUNDS 4 /* what a backlogged client may be owed, in rounds */
#define RX_BATCH 64

/* ---- The shared region ----------------------------------------------- */

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* Lay a ring of size entries of desc_size bytes out at *off. */
static void ring_layout(struct unetd_ring_off *r, uint64_t *off, uint32_t size, size_t desc_size)
{
	r->producer = *off;
	r->consumer = *off + 64;
	r->flags = *off + 128;
	r->desc = *off + 192;
	r->size = size;
	*off = align_up(r->desc + (uint64_t)size * desc_size, 64);
}

static void ring_view(struct unetd_ring *v, uint8_t *base, const struct unetd_ring_off *r)
{
	v->producer = (uint32_t *)(base + r->producer);
	v->consumer = (uint32_t *)(base + r->consumer);
	v->flags = (uint32_t *)(base + r->flags);
	v->desc = base + r->desc;
	v->size = r->size;
	v->mask = r->size - 1;
	v->local = 0;
}

static int region_make(struct unetd_emul *e, uint32_t frame_size, uint32_t segment_size,
		       uint32_t ring_size)
{
	struct unetd_region hdr = { 0 };
	uint64_t off = align_up(sizeof(hdr), 64), seg_off, total;
	uint8_t *base;
	int fd;

	ring_layout(&hdr.fill, &off, ring_size, sizeof(uint64_t));
	ring_layout(&hdr.rx, &off, ring_size, sizeof(struct xdp_desc));
	ring_layout(&hdr.tx, &off, ring_size, sizeof(struct xdp_desc));
	ring_layout(&hdr.comp, &off, ring_size, sizeof(uint64_t));
	seg_off = align_up(off, frame_size > 4096 ? frame_size : 4096);
	total = seg_off + segment_size;
	hdr.magic = UNETD_REGION_MAGIC;
	hdr.version = UNETD_PROTO_VERSION;
	hdr.frame_size = frame_size;
	hdr.nframes = segment_size / frame_size;
	hdr.segment_off = seg_off;
	hdr.segment_size = (uint64_t)hdr.nframes * frame_size;
	hdr.headroom = RX_HEADROOM;

	fd = memfd_create("unet-emulated", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	/* Sealed before the client ever sees it: it can neither shrink the
	 * region under us (SIGBUS) nor grow it, nor unseal. */
	if (ftruncate(fd, (off_t)total) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
		int err = -errno;

		close(fd);
		return err;
	}
	base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		int err = -errno;

		close(fd);
		return err;
	}
	memcpy(base, &hdr, sizeof(hdr));
	e->region = (struct unetd_region *)base;
	e->region_size = total;
	e->segment = base + seg_off;
	e->segment_size = hdr.segment_size;
	e->frame_size = frame_size;
	e->nframes = hdr.nframes;
	e->memfd = fd;
	ring_view(&e->fill, base, &hdr.fill);
	ring_view(&e->rx, base, &hdr.rx);
	ring_view(&e->tx, base, &hdr.tx);
	ring_view(&e->comp, base, &hdr.comp);
	/* Until the data plane runs hot, clients must kick us. */
	__atomic_store_n(e->tx.flags, UNETD_RING_NEED_WAKEUP, __ATOMIC_RELEASE);
	return 0;
}

/* ---- Rings, from the daemon's side -------------------------------------- */

/* Entries the client has produced that we have not consumed; a producer
 * index more than a ring ahead is a lie, and reads as empty. */
static uint32_t ring_avail(const struct unetd_ring *r)
{
	uint32_t n = __atomic_load_n(r->producer, __ATOMIC_ACQUIRE) - r->local;

	return n > r->size ? 0 : n;
}

static void ring_consumed(struct unetd_ring *r, uint32_t n)
{
	r->local += n;
	__atomic_store_n(r->consumer, r->local, __ATOMIC_RELEASE);
}

/* Room for us to produce into; a consumer index that says more than a
 * ring is in use reads as full (the client only hurts itself). */
static uint32_t ring_room(const struct unetd_ring *r)
{
	uint32_t used = r->local - __atomic_load_n(r->consumer, __ATOMIC_ACQUIRE);

	return used > r->size ? 0 : r->size - used;
}

static void ring_publish(struct unetd_ring *r)
{
	__atomic_store_n(r->producer, r->local, __ATOMIC_RELEASE);
}

/* One read of a descriptor the client may be rewriting. */
static struct xdp_desc read_desc(const struct unetd_ring *r, uint32_t idx)
{
	const volatile struct xdp_desc *d = (const volatile struct xdp_desc *)r->desc + (idx & r->mask);
	struct xdp_desc c = { .addr = d->addr, .len = d->len, .options = d->options };

	return c;
}

static uint64_t read_addr(const struct unetd_ring *r, uint32_t idx)
{
	return ((const volatile uint64_t *)r->desc)[idx & r->mask];
}

/* Whether the current pass woke a client that was sleeping. */
static bool woke_sleeper;
/* Some endpoint was given frames it has not been told of: deliver sets
 * it, iface_rx pays it.  Frames come both as descriptors of channels and
 * through the UDP, TCP and ARP layers, which take theirs inside
 * unet_endpoint__recv and return none: a pass may deliver and return 0. */
static bool notify_owed;
/* Some endpoint's receive counters changed in this pass (deliver sets
 * it, and its endpoint's counters_dirty): iface_rx publishes those
 * endpoints' counters, and only those. */
static bool counters_owed;

/* The daemon's counters, copied where the client reads them. */
static void publish_counters(struct unetd_emul *e)
{
	e->region->counters = e->counters;
	e->counters_dirty = false;
}

static void notify(struct unetd_emul *e)
{
	/* Pairs with the client's store of client_sleeping and its fence
	 * before it rechecks the rings (unetd_proto.h). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&e->region->client_sleeping, __ATOMIC_RELAXED)) {
		uint64_t one = 1;

		if (write(e->notify_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			unetd_log(UNET_LOG_DEBUG, "endpoint %u: notify: %s", e->handle,
				  strerror(errno));
		woke_sleeper = true;
	}
	e->notify_pending = false;
}

/* ---- Sending: check, copy, send ---------------------------------------- */

static struct unetd_chan *chan_of(struct unetd_emul *e, uint16_t tag)
{
	if (e->by_tag_hint && e->by_tag_hint->tag == tag)
		return e->by_tag_hint;
	for (struct unetd_chan *c = e->chans; c; c = c->next)
		if (c->tag == tag)
			return e->by_tag_hint = c;
	return NULL;
}

static const struct unetd_chan_wire *routable_of(void *ctx, uint16_t tag)
{
	struct unetd_chan *c = chan_of(ctx, tag);

	return c && c->routable ? &c->w : NULL;
}

/* A frame to the routable channels' port: exactly one of e's routable
 * channels' (chan_check.c), whatever UDP ports e holds. */
static uint64_t *check_chan_frame(struct unetd_emul *e, const uint8_t *f, uint32_t len,
				  uint16_t chan_port)
{
	struct unetd_ep_counters *k = &e->counters;

	switch (unetd_chan_check_frame(f, len, chan_port, routable_of, e)) {
	case UNETD_CHAN_OK:
		return NULL;
	case UNETD_CHAN_FOREIGN_TAG:
	case UNETD_CHAN_FOREIGN_SRC:
		return &k->tx_foreign_tag;
	case UNETD_CHAN_FOREIGN_PEER:
		return &k->tx_foreign_peer;
	default:
		return &k->tx_bad_frame;
	}
}

/* A 20-byte IPv4 header whose words sum to all ones (RFC 1071). */
static bool ipv4_hdr_sum_ok(const uint8_t *ip)
{
	return unet_csum_fold(unet_csum_add(0, ip, UNET_IP_HLEN)) == 0xffff;
}

/* Judge the daemon's own copy f[0..len) of a frame e wants sent.
 * Returns 0, or the counter to charge. */
static uint64_t *check_frame(struct unetd_emul *e, const uint8_t *f, uint32_t len)
{
	struct unetd_ep_counters *k = &e->counters;
	const struct unet_endpoint_info *info = &e->iface->info;
	struct unetd_chan *c;
	uint16_t proto, dst_tag, src_tag, plen;

	/* An IPv4 header as the libraries write it: its checksum right and
	 * a TTL above 0 (the source checks below would let a malformed
	 * header leave from the client's own address). */
	if (len >= UNET_ETH_HLEN + UNET_IP_HLEN && unetd_get16(f + 12) == UNET_ETH_P_IP &&
	    (f[14] & 0x0f) == 5 && (!f[22] || !ipv4_hdr_sum_ok(f + UNET_ETH_HLEN)))
		return &k->tx_bad_frame;
	/* Frames shorter than 60 bytes are padded to 60 by the library. */
	if (len >= UNET_ETH_HLEN + UNET_IP_HLEN && unetd_get16(f + 12) == UNET_ETH_P_IP &&
	    f[23] == IPPROTO_TCP)
		return unetd_tcp_check(e, f, len);
	if (len >= UNET_ETH_HLEN + UNET_IP_HLEN + UNET_UDP_HLEN &&
	    unetd_get16(f + 12) == UNET_ETH_P_IP && f[23] == IPPROTO_UDP) {
		/* Read once per datagram: the port may change under us. */
		uint16_t chan_port = unetd_chan_port(e->iface);

		if (unetd_get16(f + 36) == chan_port)
			return check_chan_frame(e, f, len, chan_port);
		return unetd_udp_check(e, (uint8_t *)f, len, chan_port);
	}
	/* IPv6: only a routable channel's frame (the daemon serves its
	 * clients no other IPv6), judged whole, to the byte, by chan_check.c;
	 * anything else fails that as a bad frame. */
	if (len >= UNET_ETH_HLEN && unetd_get16(f + 12) == UNET_ETH_P_IPV6)
		return check_chan_frame(e, f, len, unetd_chan_port(e->iface));
	if (len >= UNET_ETH_HLEN && unetd_get16(f + 12) != UNET_ETH_P)
		return unetd_udp_check(e, (uint8_t *)f, len, 0); /* ARP, short IPv4 */
	if (len < UNET_PAYLOAD_OFF ||
	    len > (UNET_PAYLOAD_OFF + info->max_payload < 60 ? 60 : UNET_PAYLOAD_OFF + info->max_payload))
		return &k->tx_bad_frame;
	proto = unetd_get16(f + 12);
	if (proto != UNET_ETH_P || f[14] != UNET_WIRE_VERSION)
		return &k->tx_bad_frame;
	dst_tag = unetd_get16(f + 16);
	src_tag = unetd_get16(f + 18);
	plen = unetd_get16(f + 20);
	if (!plen || plen > len - UNET_PAYLOAD_OFF || plen > info->max_payload)
		return &k->tx_bad_frame;
	c = chan_of(e, src_tag);
	if (!c)
		return &k->tx_foreign_tag;
	/* A routable channel's messages go inside UDP/IP only: raw, they
	 * would reach its next hop as a channel they are not. */
	if (c->routable || dst_tag != c->peer_tag || memcmp(f, c->peer_mac, 6))
		return &k->tx_foreign_peer;
	return NULL;
}

/* Serve up to budget frames of e's send ring.  Returns how many it took. */
/* The longest frame e may hand us: what one of our own send buffers
 * holds past TX_OFF and the headroom the core keeps, and what the device
 * sends (its MTU's frame).  A client's frames may be larger (4096) than
 * ours (2048); a descriptor longer than this is refused before a byte is
 * copied into our buffer. */
static uint32_t max_tx_len(const struct unetd_emul *e)
{
	const struct unet_endpoint_info *info = &e->iface->info;
	uint32_t buf = info->frame_size - XDP_PACKET_HEADROOM - TX_OFF;
	uint32_t wire = UNET_PAYLOAD_OFF + info->max_payload;

	if (wire < 60)
		wire = 60;
	return buf < wire ? buf : wire;
}

bool unetd_emul_multi_buffer(const struct unetd_emul *e)
{
	return e->multi_buffer;
}

uint32_t unetd_emul_max_payload(const struct unetd_emul *e)
{
	uint32_t m = e->iface->info.max_payload, tx = max_tx_len(e) - UNET_PAYLOAD_OFF;

	/* Frames in pieces both ways: whatever the real endpoint takes and
	 * sends (its own pieces), gathered in the daemon's memory. */
	if (e->multi_buffer)
		return m;

	/* What the daemon sends for the client (one of its own send
	 * buffers, not frames in pieces) and what fits the client's frames. */
	if (m > tx)
		m = tx;
	if (m > e->frame_size - 256)
		m = e->frame_size - 256;
	return m;
}

/* Send e's IPv4 or IPv6 frame gathered from pieces, e->txa.buf[0..len):
 * an IPv4 one's lengths add up (unetd_chain_ipv4_check; an IPv6 one is a
 * routable channel's, whose check takes every length to the byte), then
 * the checks of a frame in one piece (its source address and port are
 * e's), all on our copy;
 * sent as it is, in pieces of the real endpoint, with our source MAC.
 * A frame that waited for our queue is judged again: its port may have
 * closed meanwhile.  Returns 0, or -EAGAIN when our own buffers or send
 * queue are full (the frame stays ready). */
static int send_gathered_inet(struct unetd_emul *e)
{
	struct unetd_tx_asm *a = &e->txa;
	struct unet_layer_parts whole = { .head = a->buf, .hlen = a->len };
	bool v6 = unetd_get16(a->buf + 12) == UNET_ETH_P_IPV6;
	uint64_t *bad;
	int err;

	if (!v6 && unetd_chain_ipv4_check(a->buf, a->len) != UNETD_CHAIN_OK)
		bad = &e->counters.tx_bad_frame;
	else
		bad = check_frame(e, a->buf, a->len);
	if (bad) {
		a->ready = false;
		(*bad)++;
		return 0;
	}
	memcpy(a->buf + 6, e->iface->info.mac, 6);
	err = unet_layer_queue_frame(e->iface->ep, 0, a->len, unet_layer_fill_copy, &whole);
	if (err == -EAGAIN) {
		a->ready = true;
		return err;
	}
	a->ready = false;
	if (err) {
		e->counters.tx_dropped++;
		return 0;
	}
	unet_layer_kick(e->iface->ep);
	e->counters.tx_sent++;
	return 0;
}

/* Send e's checked frame in pieces, e->txa.buf[0..len): a U-Net message
 * rebuilt by the real endpoint from the channel (the same bytes: every
 * header field was checked equal to the channel's), or IPv4 or IPv6
 * (send_gathered_inet).  Returns 0, or -EAGAIN when our own buffers or
 * send queue are full (the frame stays ready). */
static int send_gathered(struct unetd_emul *e)
{
	struct unetd_tx_asm *a = &e->txa;
	struct unetd_ep_counters *k = &e->counters;
	uint16_t dst_tag = 0, src_tag = 0, plen = 0;
	struct unetd_chan *c = NULL;
	uint64_t *bad = NULL;
	int err;

	if (a->len >= UNET_ETH_HLEN && (unetd_get16(a->buf + 12) == UNET_ETH_P_IP ||
				       unetd_get16(a->buf + 12) == UNET_ETH_P_IPV6))
		return send_gathered_inet(e);
	if (!a->ready) {
		switch (unetd_chain_check(a->buf, a->len, e->iface->info.mac,
					  e->iface->info.max_payload, &dst_tag, &src_tag, &plen)) {
		case UNETD_CHAIN_OK:
			c = chan_of(e, src_tag);
			if (!c)
				bad = &k->tx_foreign_tag;
			else if (c->routable || dst_tag != c->peer_tag ||
				 memcmp(a->buf, c->peer_mac, 6))
				bad = &k->tx_foreign_peer;
			break;
		case UNETD_CHAIN_FOREIGN_SRC:
			bad = &k->tx_foreign_tag;
			break;
		default:
			bad = &k->tx_bad_frame;
			break;
		}
		if (bad) {
			(*bad)++;
			return 0;
		}
		a->ready = true;
	} else {
		src_tag = unetd_get16(a->buf + 18);
		plen = unetd_get16(a->buf + 20);
		c = chan_of(e, src_tag);
		if (!c || c->routable) {
			/* Closed (or the tag reopened as a routable channel)
			 * while the frame waited: refused as sent now. */
			a->ready = false;
			k->tx_foreign_tag++;
			return 0;
		}
	}
	err = unet_channel__send_copy(c->ch, a->buf + UNET_PAYLOAD_OFF, plen);
	if (err == -EAGAIN)
		return err;
	a->ready = false;
	if (err)
		k->tx_dropped++;
	else
		k->tx_sent++;
	return 0;
}

/* One frame in one descriptor d (the common case): copied into a buffer
 * of the real endpoint, checked there, sent.  Returns 0, or -EAGAIN
 * when our own buffers or send queue are full (d not taken). */
static int send_single(struct unetd_emul *e, const struct xdp_desc *d, uint32_t max_len)
{
	struct unet_endpoint *real = e->iface->ep;
	uint64_t in_frame = d->addr & (e->frame_size - 1);
	uint64_t *bad;
	uint64_t buf;
	uint8_t *p;
	int err;

	if (d->addr >= e->segment_size || d->len > e->frame_size - in_frame || d->len > max_len) {
		e->counters.tx_bad_desc++;
		return 0;
	}
	buf = unet_endpoint__buf_alloc(real);
	if (buf == UNET_NO_BUF)
		return -EAGAIN;
	p = unet_layer_buf(real, buf) + TX_OFF;
	memcpy(p, e->segment + d->addr, d->len);
	bad = check_frame(e, p, d->len);
	if (!bad) {
		memcpy(p + 6, e->iface->info.mac, 6);
		err = unet_layer_xmit(real, 0, buf, TX_OFF, d->len);
		if (err == -EAGAIN) {
			unet_endpoint__buf_free(real, buf);
			return err;
		}
		if (err) {
			unet_endpoint__buf_free(real, buf);
			bad = &e->counters.tx_dropped;
		} else {
			e->counters.tx_sent++;
		}
	} else {
		unet_endpoint__buf_free(real, buf);
	}
	if (bad)
		(*bad)++;
	return 0;
}

/* Serve up to budget descriptors of e's send ring.  Returns how many it
 * took.  A frame in pieces takes one descriptor a piece, so a small
 * share still gets its jumbo message out, over several rounds. */
static int emul_tx(struct unetd_emul *e, int budget)
{
	struct unetd_tx_asm *a = &e->txa;
	uint32_t n = ring_avail(&e->tx), room = ring_room(&e->comp), done = 0;
	uint32_t max_len = max_tx_len(e);

	/* A frame in pieces checked earlier, waiting for our send queue. */
	if (a->ready && send_gathered(e) == -EAGAIN)
		return 0;
	if (n > (uint32_t)budget)
		n = (uint32_t)budget;
	if (n > room)
		n = room;
	for (; done < n; done++) {
		struct xdp_desc d = read_desc(&e->tx, e->tx.local + done);
		/* A frame in one descriptor longer than one of our own send
		 * buffers, but within what the device sends, is gathered
		 * and sent in pieces like a chain of one. */
		bool piece = (d.options & XDP_PKT_CONTD) || a->active || a->discard ||
			     (d.len > max_len && d.len <= a->cap);
		int err = 0;

		if (!piece) {
			err = send_single(e, &d, max_len);
			if (err == -EAGAIN)
				break; /* our own buffers or queue are full: later */
		} else {
			switch (unetd_piece_take(a, e->segment, e->segment_size, e->frame_size, &d)) {
			case UNETD_PIECE_BAD_DESC:
				e->counters.tx_bad_desc++;
				break;
			case UNETD_PIECE_BAD_PIECES:
				e->counters.tx_bad_pieces++;
				break;
			case UNETD_PIECE_FRAME:
				err = send_gathered(e);
				break;
			default:
				break;
			}
		}
		/* The buffer goes back to the client either way, as the
		 * kernel completes what it refused: its bytes, if wanted,
		 * are in our memory now. */
		((uint64_t *)e->comp.desc)[e->comp.local++ & e->comp.mask] = d.addr;
		if (err == -EAGAIN) {
			done++;
			break; /* the gathered frame waits (a->ready) */
		}
	}
	if (done) {
		ring_consumed(&e->tx, done);
		ring_publish(&e->comp);
		publish_counters(e);
		notify(e);
	}
	return (int)done;
}

/* ---- Receiving: into the owner's buffers -------------------------------- */

/* Put frame[0..len) in e's free buffers and on its receive ring: one
 * buffer, or, for a frame larger than one (a jumbo frame, when e takes
 * them), a chain of them, every one but the last flagged XDP_PKT_CONTD,
 * which the client reassembles as it does a socket's.  All or nothing:
 * without enough free buffers and room, the frame is the owner's loss. */
static void deliver(struct unetd_emul *e, const uint8_t *frame, uint32_t len)
{
	struct unetd_ep_counters *k = &e->counters;
	uint32_t room = e->frame_size - RX_HEADROOM, n = (len + room - 1) / room, done = 0;
	uint64_t base[UNET_MAX_PIECES];
	bool bad = false;

	/* Delivered or dropped, a counter moves. */
	e->counters_dirty = true;
	counters_owed = true;
	if ((n > 1 && !e->multi_buffer) || n > UNET_MAX_PIECES || ring_avail(&e->fill) < n ||
	    ring_room(&e->rx) < n) {
		k->rx_dropped++;
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		base[i] = read_addr(&e->fill, e->fill.local + i) & ~(uint64_t)(e->frame_size - 1);
		bad |= base[i] >= e->segment_size;
	}
	ring_consumed(&e->fill, n);
	if (bad) {
		k->rx_dropped++; /* a buffer that is not one: the client's loss */
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct xdp_desc *rd = (struct xdp_desc *)e->rx.desc + (e->rx.local++ & e->rx.mask);
		uint32_t take = len - done < room ? len - done : room;

		memcpy(e->segment + base[i] + RX_HEADROOM, frame + done, take);
		rd->addr = base[i] + RX_HEADROOM;
		rd->len = take;
		rd->options = i + 1 < n ? XDP_PKT_CONTD : 0;
		done += take;
	}
	ring_publish(&e->rx);
	k->rx_delivered++;
	e->notify_pending = true;
	notify_owed = true;
}

static int iface_rx(struct unetd_iface *f)
{
	struct unet_recv_desc ds[RX_BATCH];
	int n = unet_endpoint__recv(f->ep, ds, RX_BATCH);

	for (int i = 0; i < n; i++) {
		struct unetd_chan *c = ds[i].channel ? unet_channel__ctx(ds[i].channel) : NULL;

		/* U-Net frames are untagged: the headers are right before the
		 * payload the core handed us (Ethernet and U-Net, or for a
		 * routable channel Ethernet, IPv4 or IPv6, UDP and U-Net: the
		 * client's library checks them again against its channel). */
		uint32_t hdrs = !c || !c->routable ? UNET_PAYLOAD_OFF
				: c->w.v6	   ? UNET_UDP6_PAYLOAD_OFF
						   : UNET_UDP_PAYLOAD_OFF;

		if (c)
			deliver(c->owner, (const uint8_t *)ds[i].data - hdrs, ds[i].len + hdrs);
	}
	if (n > 0)
		unet_endpoint__release(f->ep, ds, (unsigned int)n);
	/* After the frames a layer took as well as the descriptors: both
	 * deliver. */
	if (counters_owed) {
		counters_owed = false;
		for (struct unetd_emul *e = f->emuls; e; e = e->next)
			if (e->counters_dirty)
				publish_counters(e);
	}
	if (notify_owed) {
		notify_owed = false;
		for (struct unetd_emul *e = f->emuls; e; e = e->next)
			if (e->notify_pending)
				notify(e);
	}
	return n > 0 ? n : 0;
}

/* ---- UDP, TCP and ARP for emulated endpoints: routing what comes in ---- */

/* The endpoint with UDP port addr:port, or (any_port, for ARP) with any
 * port on addr, UDP or TCP. */
static struct unetd_emul *owner_of(struct unetd_iface *f, uint32_t addr, uint16_t port, bool any_port)
{
	for (struct unetd_emul *e = f->emuls; e; e = e->next) {
		for (struct unetd_udp_port *p = e->udp; p; p = p->next)
			if (p->laddr == addr && (any_port || p->lport == port))
				return e;
		for (struct unetd_tcp_port *p = any_port ? e->tcp : NULL; p; p = p->next)
			if (p->laddr == addr)
				return e;
	}
	return NULL;
}

/* Whether e holds UDP (or TCP) port addr:port. */
static bool emul_holds_port(const struct unetd_emul *e, bool tcp, uint32_t addr, uint16_t port)
{
	for (const struct unetd_udp_port *p = tcp ? NULL : e->udp; p; p = p->next)
		if (p->laddr == addr && p->lport == port)
			return true;
	for (const struct unetd_tcp_port *p = tcp ? e->tcp : NULL; p; p = p->next)
		if (p->laddr == addr && p->lport == port)
			return true;
	return false;
}


/*
 * The emulated endpoint that gets a datagram or segment from saddr:sport
 * (network order) for UDP or TCP port addr:port.  Several hold it only
 * when it is a SO_REUSEPORT group's (the daemon's place in it: the same
 * user's, unet_*_port_join checked): the flow goes to one of them by the
 * XDP program's hash, so a source's datagrams and a connection's
 * segments stay on one while they stay as they are.
 */
static struct unetd_emul *flow_owner_of(struct unetd_iface *f, bool tcp, uint32_t addr,
					uint16_t port, uint32_t saddr, uint16_t sport)
{
	struct unetd_emul *e, *first = NULL;
	uint32_t n = 0, k;

	for (e = f->emuls; e; e = e->next)
		if (emul_holds_port(e, tcp, addr, port) && n++ == 0)
			first = e;
	if (n <= 1)
		return first;
	k = unet_port_group_hash(saddr, htons(sport)) % n;
	for (e = f->emuls; e; e = e->next)
		if (emul_holds_port(e, tcp, addr, port) && k-- == 0)
			return e;
	return first;
}

/* The daemon's layer on its real endpoint: IPv4 and ARP frames the XDP
 * program put on it (only for ports and addresses registered under its
 * slot, i.e. its emulated endpoints') go to the endpoint that owns them. */
static enum unet_layer_verdict route_rx(void *state, uint16_t proto, uint8_t *frame, uint32_t len,
					struct unet_recv_desc *desc)
{
	struct unetd_iface *f = state;
	struct unetd_emul *e = NULL;
	uint32_t addr, saddr;

	(void)desc;
	if (proto == UNET_ETH_P_IP) {
		uint32_t hl;

		/* UDP's header is the shorter: both have their ports first. */
		if (len < UNET_ETH_HLEN + UNET_IP_HLEN + UNET_UDP_HLEN ||
		    (frame[23] != IPPROTO_UDP && frame[23] != IPPROTO_TCP))
			return UNET_LAYER_CONSUMED;
		hl = (frame[14] & 0xf) * 4u;
		if (hl < UNET_IP_HLEN || len < UNET_ETH_HLEN + hl + UNET_UDP_HLEN)
			return UNET_LAYER_CONSUMED;
		memcpy(&addr, frame + 30, 4);
		memcpy(&saddr, frame + 26, 4);
		e = flow_owner_of(f, frame[23] == IPPROTO_TCP, addr,
				  unetd_get16(frame + UNET_ETH_HLEN + hl + 2), saddr,
				  unetd_get16(frame + UNET_ETH_HLEN + hl));
	} else if (proto == UNET_ETH_P_ARP) {
		if (len < UNET_ETH_HLEN + 28)
			return UNET_LAYER_CONSUMED;
		memcpy(&addr, frame + UNET_ETH_HLEN + 24, 4);
		e = owner_of(f, addr, 0, true);
	} else {
		return UNET_LAYER_NOT_MINE;
	}
	/* The client checks the frame itself (its UDP layer parses and
	 * verifies everything); we only route it. */
	if (e)
		deliver(e, frame, len);
	return UNET_LAYER_CONSUMED;
}

static void route_destroy(void *state)
{
	(void)state;
}

static const struct unet_layer route_layer = {
	.name = "unetd-route",
	.rx = route_rx,
	.destroy = route_destroy,
};

void unetd_emul_register(struct unetd *d)
{
	d->iface_layer = &route_layer;
}

/* ---- The data plane ------------------------------------------------------- */

/* Serve one round of deficit round robin over f's clients: each may send
 * its quantum, plus what it was owed from earlier rounds while it stayed
 * backlogged (what it does not use it does not keep once its ring is
 * empty).  light picks whom: true, the clients with no more queued than
 * one quantum (a ping-pong, a request), false, the backlogged.  Serving
 * the light ones first changes only the order within a round, not what
 * anyone gets: a message of a client that sends little waits for no
 * flood ahead of it.  Sets *backlog if a ring still has frames after its
 * turn. */
static int serve_round(struct unetd_iface *f, bool light, bool *backlog)
{
	int work = 0;

	for (struct unetd_emul *e = f->emuls; e; e = e->next) {
		/* A frame in pieces waiting for our send queue counts. */
		uint32_t avail = ring_avail(&e->tx) + e->txa.ready;
		int q = QUANTUM * (int)e->share, sent;

		if (!avail || (avail * SHARE_UNIT <= (uint32_t)q) != light)
			continue;
		/* What it is owed (our own queue was full) is bounded, but
		 * always lets a tiny share send a frame now and then. */
		e->deficit += q;
		if (e->deficit > DEFICIT_ROUNDS * q + SHARE_UNIT)
			e->deficit = DEFICIT_ROUNDS * q + SHARE_UNIT;
		sent = emul_tx(e, e->deficit / SHARE_UNIT);
		e->deficit -= sent * SHARE_UNIT;
		if (e->deficit < 0 || (!ring_avail(&e->tx) && !e->txa.ready))
			e->deficit = 0;
		else
			*backlog = true;
		work += sent;
	}
	return work;
}

int unetd_dataplane_poll(struct unetd *d)
{
	int work = 0;

	for (struct unetd_iface *f = d->ifaces; f; f = f->next) {
		bool backlog = false;
		int light;

		if (!f->ep)
			continue;
		/* One round per pass, receive side first: under a flood a
		 * frame that arrived, or one a light client queued, waits for
		 * at most one round (QUANTUM frames of each backlogged
		 * client), not for several. */
		woke_sleeper = false;
		work += iface_rx(f);
		light = serve_round(f, true, &backlog);
		work += light + serve_round(f, false, &backlog);
		unet_endpoint__complete(f->ep);
		/* Saturated, and someone is waiting to run: a client we just
		 * woke (its notify eventfd), or the peer of a light client's
		 * message, woken by our send (veth runs the receiver's side
		 * on our CPU).  On a machine with few CPUs, where a flooding
		 * client spins on the other one, that process would otherwise
		 * wait for our time slice to end (milliseconds); let it run
		 * now.  Costs a system call per round only while saturated. */
		if (backlog && (woke_sleeper || light))
			sched_yield();
	}
	return work;
}

bool unetd_dataplane_arm(struct unetd *d)
{
	for (struct unetd_iface *f = d->ifaces; f; f = f->next)
		for (struct unetd_emul *e = f->emuls; e; e = e->next)
			__atomic_store_n(e->tx.flags, UNETD_RING_NEED_WAKEUP, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (struct unetd_iface *f = d->ifaces; f; f = f->next) {
		if (f->ep && unet_endpoint__tx_pending(f->ep))
			return true;
		for (struct unetd_emul *e = f->emuls; e; e = e->next)
			if (ring_avail(&e->tx) || e->txa.ready)
				return true;
	}
	return false;
}

void unetd_dataplane_disarm(struct unetd *d)
{
	for (struct unetd_iface *f = d->ifaces; f; f = f->next)
		for (struct unetd_emul *e = f->emuls; e; e = e->next)
			__atomic_store_n(e->tx.flags, 0, __ATOMIC_RELEASE);
}

/* ---- Interfaces and endpoints ------------------------------------------ */

/*
 * The policy's share is the user's weight on an interface, however many
 * endpoints it has there: each of its n endpoints on f serves with 1/n
 * of it (at least 1), so eight endpoints of one user get together what
 * one endpoint of another user of equal share gets.
 */
static void reshare(struct unetd_iface *f, uint32_t uid)
{
	uint32_t n = 0;

	for (struct unetd_emul *e = f->emuls; e; e = e->next)
		n += e->client->uid == uid;
	for (struct unetd_emul *e = f->emuls; e; e = e->next)
		if (e->client->uid == uid)
			e->share = e->user_share / n ? e->user_share / n : 1;
}

struct unetd_emul *unetd_emul_create(struct unetd *d, struct unetd_client *c,
				     const struct unetd_ep_create *req, const struct unetd_grant *g,
				     int *err, char *msg, size_t msglen)
{
	uint32_t frame = req->frame_size ? req->frame_size : 2048;
	uint32_t seg = req->segment_size ? req->segment_size : DEFAULT_SEGMENT;
	uint32_t ring = req->ring_size ? req->ring_size : DEFAULT_RING;
	struct epoll_event ev;
	struct unetd_emul *e;
	char ifname[16];

	memcpy(ifname, req->ifname, sizeof(ifname));
	ifname[sizeof(ifname) - 1] = '\0';
	if ((frame != 2048 && frame != 4096) || (ring & (ring - 1)) || ring < 64 || ring > MAX_RING ||
	    seg > MAX_SEGMENT || seg / frame < 2 * ring / 4) {
		snprintf(msg, msglen, "bad sizes: frame %u, segment %u, ring %u", frame, seg, ring);
		*err = -EINVAL;
		return NULL;
	}
	*err = unetd_quota_check(d, c, g, seg, msg, msglen);
	if (*err)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e) {
		*err = -ENOMEM;
		return NULL;
	}
	e->memfd = e->kick_fd = e->notify_fd = -1;
	e->iface = unetd_iface_get(d, c, ifname, err);
	if (!e->iface) {
		snprintf(msg, msglen, "%s: cannot serve it: %s", ifname, strerror(-*err));
		free(e);
		return NULL;
	}
	if (!e->iface->ep) {
		snprintf(msg, msglen, "%s: every queue is set aside for direct grants", ifname);
		*err = -EOPNOTSUPP;
		unetd_iface_put(d, e->iface);
		free(e);
		return NULL;
	}
	*err = region_make(e, frame, seg, ring);
	if (*err) {
		snprintf(msg, msglen, "shared region: %s", strerror(-*err));
		goto fail;
	}
	e->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	e->notify_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (e->kick_fd < 0 || e->notify_fd < 0) {
		*err = -errno;
		snprintf(msg, msglen, "eventfd: %s", strerror(errno));
		goto fail;
	}
	e->src.kind = UNETD_SRC_KICK;
	e->src.obj = e;
	ev.events = EPOLLIN;
	ev.data.ptr = &e->src;
	if (epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, e->kick_fd, &ev)) {
		*err = -errno;
		snprintf(msg, msglen, "epoll: %s", strerror(errno));
		goto fail;
	}
	/* Frames in pieces when the real endpoint takes and sends them. */
	e->multi_buffer = e->iface->info.multi_buffer;
	if (e->multi_buffer) {
		e->txa.cap = UNET_PAYLOAD_OFF + e->iface->info.max_payload;
		e->txa.buf = malloc(e->txa.cap);
		if (!e->txa.buf) {
			*err = -ENOMEM;
			snprintf(msg, msglen, "out of memory");
			epoll_ctl(d->epoll_fd, EPOLL_CTL_DEL, e->kick_fd, NULL);
			goto fail;
		}
	}
	e->handle = ++d->next_handle;
	e->client = c;
	e->user_share = g->share ? g->share : 1;
	e->next = e->iface->emuls;
	e->iface->emuls = e;
	e->iface->nemuls++;
	e->iface->users++;
	reshare(e->iface, c->uid);
	e->cnext = c->emuls;
	c->emuls = e;
	c->nemuls++;
	c->segment_bytes += seg;
	unetd_log_user(&c->user->log, c->uid, UNET_LOG_INFO, "%s: emulated endpoint %u for uid %u pid %u (%s)",
		       ifname, e->handle, c->uid, c->pid, g->rule);
	return e;
fail:
	if (e->kick_fd >= 0)
		close(e->kick_fd);
	if (e->notify_fd >= 0)
		close(e->notify_fd);
	if (e->region)
		munmap(e->region, e->region_size);
	if (e->memfd >= 0)
		close(e->memfd);
	unetd_iface_put(d, e->iface);
	free(e);
	return NULL;
}

void unetd_emul_free(struct unetd *d, struct unetd_emul *e)
{
	struct unetd_iface *f = e->iface;
	struct unetd_emul **pp;

	while (e->chans)
		unetd_emul_chan_close(d, e, e->chans->tag);
	while (e->udp)
		unetd_udp_close(e->iface, e->iface->info.id, &e->udp, NULL, false, e->udp->laddr,
				e->udp->lport);
	while (e->tcp)
		unetd_tcp_close(e->iface, e->iface->info.id, &e->tcp, NULL, false, e->tcp->laddr,
				e->tcp->lport);
	for (pp = &e->iface->emuls; *pp; pp = &(*pp)->next)
		if (*pp == e) {
			*pp = e->next;
			e->iface->nemuls--;
			break;
		}
	for (pp = &e->client->emuls; *pp; pp = &(*pp)->cnext)
		if (*pp == e) {
			*pp = e->cnext;
			e->client->nemuls--;
			e->client->segment_bytes -= e->segment_size;
			break;
		}
	epoll_ctl(d->epoll_fd, EPOLL_CTL_DEL, e->kick_fd, NULL);
	close(e->kick_fd);
	close(e->notify_fd);
	munmap(e->region, e->region_size);
	close(e->memfd);
	free(e->txa.buf);
	e->txa.buf = NULL;
	unetd_log_user(e->client->user ? &e->client->user->log : NULL, e->client->uid, UNET_LOG_INFO,
		       "%s: emulated endpoint %u freed", e->iface->ifname, e->handle);
	/* Its kick event may still be in the batch being handled. */
	unetd_defer_free(d, &e->src);
	reshare(f, e->client->uid);
	f->users--;
	unetd_iface_put(d, f);
}

/* A new channel for tag on e, not yet open: NULL with *err and msg if e
 * has the tag open already or memory is short.  Both kinds of channel
 * (local and routable) start here and end in emul_chan_link. */
static struct unetd_chan *emul_chan_new(struct unetd_emul *e, uint16_t tag, char *msg,
					size_t msglen, int *err)
{
	struct unetd_chan *c;

	if (chan_of(e, tag)) {
		snprintf(msg, msglen, "tag %u already open on this endpoint", tag);
		*err = -EADDRINUSE;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		*err = -ENOMEM;
	return c;
}

/* An open channel c joins e's list; its frames find it by the library's ctx. */
static void emul_chan_link(struct unetd_emul *e, struct unetd_chan *c)
{
	unet_channel__set_ctx(c->ch, c);
	c->next = e->chans;
	e->chans = c;
}

int unetd_emul_chan_open(struct unetd *d, struct unetd_emul *e, const struct unetd_ch_open *req,
			 const struct unetd_grant *g, char *msg, size_t msglen)
{
	struct unetd_chan *c;
	int err;

	(void)d;
	if (req->tag == UNET_TAG_INVALID || req->peer_tag == UNET_TAG_INVALID) {
		snprintf(msg, msglen, "tag 0 is reserved");
		return -EINVAL;
	}
	if (!unetd_grant_tag(g, req->tag)) {
		snprintf(msg, msglen, "tag %u not granted (%s)", req->tag, g->rule);
		return -EACCES;
	}
	c = emul_chan_new(e, req->tag, msg, msglen, &err);
	if (!c)
		return err;
	c->owner = e;
	c->tag = req->tag;
	c->peer_tag = req->peer_tag;
	memcpy(c->peer_mac, req->peer_mac, 6);
	/* The tag is the interface's: held by nobody else, daemon client or
	 * local process (the core refuses a live owner's tag). */
	c->ch = unet_channel__open(e->iface->ep, req->tag, req->peer_mac, req->peer_tag, NULL);
	if (!c->ch) {
		err = -errno;
		free(c);
		return unetd_chan_refused(err, req->tag, msg, msglen);
	}
	emul_chan_link(e, c);
	return 0;
}

int unetd_emul_chan_open_routable(struct unetd *d, struct unetd_emul *e,
				  const struct unetd_chan_req *req, const struct unetd_grant *g,
				  struct unetd_chan_opened *rep, char *msg, size_t msglen)
{
	struct unetd_chan *c;
	uint32_t hdrs;
	int err;

	(void)g; /* the tag was checked against it by the caller */
	c = emul_chan_new(e, req->tag, msg, msglen, &err);
	if (!c)
		return err;
	err = unetd_chan_open_real(d, e->iface, req, &c->ch, rep, msg, msglen);
	if (err) {
		free(c);
		return err;
	}
	/* What one of our send buffers takes, whatever the client's frames
	 * hold: the client learns it, rather than have longer messages
	 * refused as bad descriptors. */
	hdrs = req->v6 ? UNET_UDP6_PAYLOAD_OFF : UNET_UDP_PAYLOAD_OFF;
	if (rep->w.max_payload > max_tx_len(e) - hdrs)
		rep->w.max_payload = max_tx_len(e) - hdrs;
	c->w = rep->w;
	c->owner = e;
	c->tag = req->tag;
	c->peer_tag = req->peer_tag;
	memcpy(c->peer_mac, c->w.dst_mac, 6);
	c->routable = true;
	emul_chan_link(e, c);
	return 0;
}

int unetd_emul_chan_close(struct unetd *d, struct unetd_emul *e, uint16_t tag)
{
	(void)d;
	for (struct unetd_chan **pp = &e->chans; *pp; pp = &(*pp)->next) {
		struct unetd_chan *c = *pp;

		if (c->tag != tag)
			continue;
		*pp = c->next;
		if (e->by_tag_hint == c)
			e->by_tag_hint = NULL;
		unet_channel__close(c->ch);
		free(c);
		return 0;
	}
	return -ENOENT;
}
