/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uam_impl.h - U-Net Active Messages internals, shared by uam_proto.c (the
 * protocol: pure, no network, unit-tested over a simulated link) and uam.c
 * (the glue to a unet endpoint).  Never installed.
 */
#ifndef UAM_IMPL_H
#define UAM_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "unet-xdp/uam.h"

/* ---- Wire format (docs/uam.md), inside the U-Net payload ----------------- */

#define UAM_WIRE_VERSION 1

enum uam_type {
	UAM_T_ACK = 0,	   /* unsequenced: acknowledgement and credit only */
	UAM_T_REQUEST = 1, /* args */
	UAM_T_REPLY = 2,   /* args */
	UAM_T_STORE = 3,   /* fragment ext + (last: args) + data */
	UAM_T_GET_REQ = 4, /* get ext */
	UAM_T_GET_DATA = 5, /* as STORE, data for our uam_get */
	UAM_T_DONE = 6,	   /* op finished: token = op id, aux = status */
	UAM_T__COUNT
};

#define UAM_F_LAST 0x01 /* last fragment of a store / get */

/* Fixed header, 40 bytes, all fields big-endian. */
#define UAM_HDR_LEN 40
#define UAM_OFF_VERSION 0
#define UAM_OFF_TYPE 1
#define UAM_OFF_FLAGS 2
#define UAM_OFF_NARGS 3
#define UAM_OFF_HANDLER 4
#define UAM_OFF_CREDIT 6
#define UAM_OFF_SESSION 8
#define UAM_OFF_SEQ 12
#define UAM_OFF_ACK 16
#define UAM_OFF_TOKEN 20
#define UAM_OFF_SACK 24
#define UAM_OFF_AUX 32
#define UAM_OFF_DLEN 36
/*
 * Compact header, 20 bytes, for REQUEST and REPLY (short and medium
 * messages): what a message needs, so a 1472-byte payload with no
 * arguments fits one MTU-1500 frame.  Its first byte is never the full
 * header's version: UAM_C_FORMAT | type.  No flags, aux, dlen (the frame
 * length, which the core hands over exactly, less the header and the
 * args), nor SACK (a receiver holding frames out of order sends its SACK
 * in an ACK, which has the full header); the credit in units of 4
 * (rounded down: safe), the handler in one byte (UAM_MAX_HANDLERS 256).
 * The receiver decodes it into the full header's layout (frame_hdr in
 * uam_proto.c), so sequencing, acknowledgement and delivery read one
 * layout.
 */
#define UAM_C_FORMAT 0x10 /* | UAM_T_REQUEST or UAM_T_REPLY */
#define UAM_C_HDR_LEN 20
#define UAM_C_OFF_KIND 0
#define UAM_C_OFF_NARGS 1
#define UAM_C_OFF_HANDLER 2
#define UAM_C_OFF_CREDIT 3 /* credit / UAM_C_CREDIT_UNIT */
#define UAM_C_OFF_SESSION 4
#define UAM_C_OFF_SEQ 8
#define UAM_C_OFF_ACK 12
#define UAM_C_OFF_TOKEN 16
#define UAM_C_CREDIT_UNIT 4
/*
 * Compact fragment, 24 bytes of header, for the STORE and GET_DATA
 * fragments between a transfer's first and its LAST (those two keep the
 * full header: the first says what the transfer is, region, start and
 * total, which the receiver keeps; the LAST carries the handler's args).
 * Kind, credit, session, seq, ack and token where the compact header has
 * them, two bytes that must be 0 where it has nargs and handler, then a
 * u32: the fragment's offset from the transfer's start.  Its data is the
 * rest of the frame (at least one byte): 1468 bytes at MTU 1500, against
 * the full header's 1428.  A fragment past 4 GiB of its transfer goes
 * with the full header.  The receiver takes region, start and total from
 * the transfer the token names (ch->xfer) and checks the offset and
 * length against them.
 */
#define UAM_CF_HDR_LEN 24
#define UAM_CF_OFF_ZERO 1 /* 2 bytes: 0 */
#define UAM_CF_OFF_REL 20
_Static_assert(UAM_MAX_HANDLERS <= 256, "the compact header has one byte for the handler");
_Static_assert(UAM_MAX_WINDOW / UAM_C_CREDIT_UNIT <= 255, "the compact credit is one byte");

/* STORE / GET_DATA extension: u64 offset of this fragment's data in the
 * region, u64 offset where the whole transfer starts, u64 total length. */
#define UAM_FRAG_EXT 24
/* GET_REQ extension: u64 remote offset, u64 length, u64 local offset,
 * u64 local region (nargs 1); aux = remote region, token = op id. */
#define UAM_GET_EXT 24
/* An ACK frame may carry dlen bytes (a multiple of 8, at most this many)
 * of extended SACK after the header: u64 word k, bit i says frame
 * ack + 65 + 64 k + i is held.  The header's bitmap reports only 64 frames
 * beyond the ack; a window deeper than that would hide its later losses
 * from fast retransmit. */
#define UAM_SACK_EXT_MAX ((UAM_MAX_WINDOW + 63) / 64 * 8)

/* Smallest UAM frame size we work with (a store fragment must carry data). */
#define UAM_MIN_FRAME 256
/*
 * The frame size every peer takes: MTU 1500 less U-Net's 8-byte header.
 * A channel sends its store and get fragments in frames of this size (or
 * its own max_frame, if less) until the peer says in an ACK (its aux
 * field: the largest frame it takes; 0 from a peer that does not say)
 * that it takes larger ones, so a jumbo-MTU host talking to an MTU-1500
 * one falls back to the smaller frames and nothing is lost for size.
 */
#define UAM_BASE_FRAME 1492

/* ---- Transport: how the protocol sends, and its clock ------------------ */

struct uam_transport {
	/* Send one frame on the channel's transport handle: hlen bytes of
	 * header, then dlen bytes of data (NULL, 0 for none) read straight
	 * from the caller's memory, so bulk data is copied once, into the
	 * transport.  0, -EAGAIN (no room now: the frame is retried later)
	 * or -errno (treated as lost). */
	int (*xmit)(void *tctx, void *chan_handle, const void *hdr, uint32_t hlen,
		    const void *data, uint32_t dlen);
	uint64_t (*now_ns)(void *tctx);
	/* Optional: frames xmit accepted may wait in the transport until
	 * this is called (one kick for a batch).  The protocol calls it at
	 * the end of every send made outside a deferred section
	 * (uamp_defer), and uam.c at the end of each poll. */
	void (*flush)(void *tctx);
	/*
	 * Optional (all three or none): kept buffers, so that a medium
	 * message is copied once, into the buffer that goes out, and not
	 * first into its window slot.  buf_get gives a buffer of max_frame
	 * bytes (*frame: where the frame starts) that the protocol keeps
	 * until buf_put, or UAM_NO_KBUF (none to spare: the slot copy is
	 * used).  xmit_buf sends kbuf itself with hdr (hlen bytes) put at
	 * its start and dlen bytes of data after it, already there; once
	 * only: a repeat is an xmit that copies from the kept frame, which
	 * the protocol may read but not write from here on.  buf_put gives
	 * the buffer back, sent or not (the transport frees it once its
	 * send, if any, completed).  A transport with kept buffers has a
	 * flush and counts its flushes in ep->tx_gen: a buffer sent since
	 * the last one is flushed before it is given back (slot_unkeep).
	 */
	uint64_t (*buf_get)(void *tctx, uint8_t **frame);
	int (*xmit_buf)(void *tctx, void *chan_handle, const void *hdr, uint32_t hlen,
			uint64_t kbuf, uint32_t dlen);
	void (*buf_put)(void *tctx, uint64_t kbuf);
	void *ctx;
	uint32_t max_frame; /* largest frame the transport carries */
	/* Largest frame a kept buffer holds (0: max_frame): a medium
	 * message in a larger frame is copied into its slot instead. */
	uint32_t kbuf_max;
};
#define UAM_NO_KBUF UINT64_MAX

/* ---- Objects --------------------------------------------------------- */

enum { SLOT_FREE = 0, SLOT_INFLIGHT, SLOT_SACKED };

struct uam_tx_slot {
	uint8_t *buf;	     /* header, fragment fields, args */
	uint32_t len;
	const uint8_t *data; /* a fragment's data, in the store's source or
			      * our region, or a medium payload in the kept
			      * buffer: read again on a retransmission */
	uint32_t dlen;
	uint64_t kbuf; /* the kept buffer data lies in, or UAM_NO_KBUF */
	uint32_t kgen; /* ep->tx_gen when kbuf went to xmit_buf */
	uint8_t state;
	bool need_tx;	 /* (re)send at the next push */
	uint32_t ntx;	 /* times sent */
	uint64_t sent_ns; /* last transmission */
	uint32_t tx_order; /* ch->tx_count at it: which of two frames left
			    * first, where both read one clock value */
};

struct uam_rx_slot {
	uint8_t *buf;
	uint32_t len;
	bool present;
	bool placed; /* a fragment whose data is already in the region: buf
		      * holds its header, extension and args only */
};

/* Work queued on a channel, turned into frames as credit allows.  Kept
 * in per-endpoint pools (ep->items, ep->mitems) once freed. */
struct uam_item {
	struct uam_item *next;
	bool medium;	   /* has room for the largest medium payload */
	uint8_t type;	   /* UAM_T_* */
	bool counted;	   /* counts against max_queued */
	uint16_t handler;
	uint8_t nargs;
	uint32_t token;	   /* request token / op id */
	uint32_t aux;	   /* region / status */
	uint64_t args[UAM_MAX_ARGS];
	/* STORE / GET_DATA: src[0..len) to region aux at base_off */
	const uint8_t *src;
	uint64_t len, cursor, base_off;
	/* GET_REQ */
	uint64_t remote_off, local_off;
	uint32_t local_region;
	/* REQUEST / REPLY sent as medium messages: their payload, copied
	 * when the call was made (the caller's buffer is free at once) */
	uint32_t dlen;
	uint8_t payload[];
};

struct uam_op {
	int id; /* 0: slot free */
	struct uam_chan *chan;
	uint8_t type;	   /* UAM_T_STORE or UAM_T_GET_REQ: what the peer answers */
	bool sent;	   /* its last frame was built, with sequence number: */
	uint32_t last_seq;
	/* a get: where its data must land (region, offset, length) */
	uint32_t region;
	uint64_t off, len;
	bool done;
	int status;
	uam_op_fn cb;
	void *ctx;
};

struct uam_region {
	bool used;
	bool bound;	       /* only chan may reach it (NULL: closed, none) */
	struct uam_chan *chan; /* uam_region_opts.chan */
	uint32_t id;
	uint8_t *base;
	uint64_t len;
	unsigned int flags;
};

/*
 * A channel.  What every message sent or received touches comes first,
 * in the first three cache lines (checked below), then the counters: a
 * request/reply round trip reads and writes five adjacent lines of it,
 * where the fields in the order they were added spread over seven.
 */
struct uam_chan {
	/* ---- line 0-1: sequencing, acknowledgement, the queues ---------- */
	struct uam_ep *ep;
	void *handle;		 /* transport's channel (a struct unet_channel *) */
	struct uam_tx_slot *tx;	 /* window entries, by seq & slot_mask */
	struct uam_rx_slot *rx;
	struct uam_item *head, *tail;
	uint32_t session, peer_session;
	int err;
	/* send side */
	uint32_t snd_una, snd_next; /* oldest unacknowledged, next new seq */
	uint32_t peer_credit;
	uint32_t tx_hint;  /* no frame before this one needs sending: push
			    * starts there, not at snd_una (mark_tx) */
	uint32_t tx_count; /* data frame transmissions, for tx_order */
	uint32_t tx_rot;   /* frame seq is in slot (seq + tx_rot) & slot_mask
			    * (new_slot turns the ring while nothing is in
			    * flight) */
	uint32_t next_token;
	/* receive side */
	uint32_t rcv_next;    /* next seq to deliver */
	uint32_t rcv_high;    /* one past the highest seq received (>= rcv_next):
			       * a frame beyond it opens a new gap */
	uint32_t rx_held;     /* slots of rx[] present: frames that came early */
	uint32_t rx_unacked;  /* frames received since our last ack went out */
	uint32_t ooo_unacked; /* of them, past a gap we already reported */
	uint32_t call_token;  /* uam_call in progress (call_active) */
	bool ack_due;
	bool ack_now; /* a duplicate or a frame past a gap came: the sender
		       * needs our SACK now, not after ack_delay_us */
	bool stalled;
	bool have_rtt, tlp_sent;
	bool call_active, call_done;
	bool closing : 1;
	bool paused : 1; /* uam_chan__pause: the peer's requests wait */
	uint64_t ack_due_ns; /* when the oldest unacknowledged frame came */

	/* ---- line 2: the retransmission timer --------------------------- */
	/* From the measured round trip (RFC 6298's SRTT/RTTVAR with a
	 * microsecond floor): rto_us is the current timeout, backoff the
	 * expiries since the last progress, tlp_sent a tail-loss probe
	 * since then. */
	uint64_t last_progress_ns;
	uint64_t last_tx_ns;  /* the last (re)transmission of a data frame */
	uint64_t min_sent_ns; /* no frame in flight was sent before: the
			       * timers skip the window walk until one
			       * could have expired */
	uint64_t srtt_ns, rttvar_ns;
	uint32_t rto_us;
	uint32_t backoff;
	struct uam_msg *call_out;
	uint32_t held_len; /* test hook: a frame held back (held) */
	uint32_t nqueued;  /* counted items queued (uam_ep_opts.max_queued) */

	/* ---- lines 3-4: the counters (frames, messages) follow at once --- */
	struct uam_stats st;

	/* ---- the rest: transfers, test hooks, list links ----------------- */
	/* The timers restarted here by frames the peer sent before our
	 * oldest one reached it (queue_progress: a round trip before the
	 * latest came); the round trip of a frame sent before it is sampled
	 * from there.  Out of the first lines: read by the timers and the
	 * round-trip sample, written only while such frames come. */
	uint64_t queue_ns;
	/* Items queued that are not counted in nqueued: queued because of
	 * the peer's frames (uam_ep_opts.max_peer_queued).  Out of the first
	 * lines: read only while something is queued (ch->head). */
	uint32_t npeer;
	/* The last ACK frame from the peer: it is alive, if holding our
	 * frames unacknowledged (paused, or its peer queue full) */
	uint64_t heard_ns;
	/* The store or get data being received (fragments of one transfer
	 * come in sequence, never interleaved with another's). */
	struct {
		bool active;
		uint8_t type;
		int err; /* 0, -EFAULT (region refused), -EPROTO (inconsistent) */
		uint32_t region, token;
		uint64_t base, total, next; /* next: offset the next fragment has */
	} xfer;
	uint8_t *call_data; /* a captured reply's payload (max_frame bytes) */
	/* The largest frame we send this peer's fragments in: UAM_BASE_FRAME
	 * (or max_frame, if less) until the peer's ACK says (frame_said) how
	 * large a frame it takes, then that, within [UAM_MIN_FRAME,
	 * max_frame]. */
	uint32_t frame;
	bool frame_said;
	/* The largest frame the channel's transport handle carries (a
	 * routable unet channel: one send buffer less UDP/IP): frame never
	 * exceeds it.  max_frame unless the transport says less
	 * (uamp_chan_frame_max). */
	uint32_t frame_max;
	uint8_t *held;	    /* test hook: a frame held back to be sent after
			     * the next one */
	uint8_t *scratch;   /* one frame, for acks */
	struct uam_chan *next;	      /* kept as it was when closed: see uamp_enter */
	struct uam_chan *zombie_next; /* closed, to be freed (ep->zombies) */
};
/* uamp_chan_new allocates channels on a cache-line boundary. */
#define UAM_CHAN_ALIGN 64
_Static_assert(offsetof(struct uam_chan, st) <= 3 * UAM_CHAN_ALIGN,
	       "a message's channel state fits three cache lines");

struct uam_ep {
	struct uam_ep_opts o;
	struct uam_transport tr;
	struct unet_endpoint *uep; /* uam.c; NULL in unit tests */
	/* ---- what every message touches, together (a few cache lines: the
	 * kernel's send path evicts them between round trips) ---- */
	struct uam_chan *chans;
	uint32_t nchans;
	uint32_t slot_mask; /* window slots - 1: a power of two - 1 */
	int progress; /* handlers run + ops completed since last reset */
	/* the request whose handler runs now, for uam_reply */
	const struct uam_msg *cur_req;
	bool cur_replied;
	/* Depth of uamp_enter sections, and the channels closed inside
	 * them, freed when the outermost one ends. */
	int busy;
	struct uam_chan *zombies;
	/* Some channel owes its ack now (a new gap, a filled hole, a
	 * duplicate, or a quarter window unacknowledged): uamp_round_acks
	 * sends it at the end of the receive round. */
	bool acks_owed;
	/* Depth of sections whose sends are flushed at their end, not at
	 * each push: a poll's batch, uam_ep__cork. */
	int defer_tx, corks;
	/* The clock, read once per poll (clock_hold: inside uam_poll's
	 * batch): timers are 100 us and more, a batch a few us.  Not per
	 * cork: a cork may last while the application waits for credit. */
	uint64_t clock_ns;
	bool clock_ok;
	int clock_hold;
	/* uam.c: kept buffers out (uam_transport.buf_get), and at most:
	 * half the segment's send buffers, so the rest always remain for
	 * acks, fragments and the FILL ring whatever peers leave unacked */
	uint32_t kept, kept_max;
	/* Flushes so far (the transport counts them): a kept buffer handed
	 * to xmit_buf at the current count may still wait in the batch, and
	 * is flushed before it is given back (slot_unkeep). */
	uint32_t tx_gen;
	uint32_t ntxb;	     /* uam.c: frames in txb, below */
	bool pieces_owed;    /* uam.c: frames in pieces queued, kick owed */
	uint32_t idle_polls; /* uam.c: polls without a frame since the last tick */
	/* uam.c: frames built, not yet handed to the kernel (one kick) */
	struct unet_send_desc txb[64];
	bool txb_kept[64]; /* txb[i] is a kept buffer: not freed if refused */

	/* ---- the rest ---- */
	struct {
		uam_handler_fn fn;
		void *ctx;
	} h[UAM_MAX_HANDLERS];
	struct uam_region regions[UAM_MAX_REGIONS];
	struct uam_op *ops;
	int last_op_id;
	uint64_t rng;
	uint32_t next_session; /* of the next channel opened */
	/* Test hook: 0, or the first sequence number of every channel's
	 * stream instead of uamp_isn's (preset after uamp_ep_init, before
	 * uamp_chan_new, the same on both peers, to cross the 2^32 wrap). */
	uint32_t isn;
	/* Test hook: send every fragment with the full header, as a peer
	 * from before the compact fragments did. */
	bool full_frags;
	/* Test hook: 0, or a lower bound than 2^32 - 1 for the offset from
	 * its transfer's start that a compact fragment may have: the ones
	 * past it go with the full header, as past 4 GiB. */
	uint32_t cfrag_rel_max;
	/* Test hook: 0, or what our ACKs say is the largest frame we take,
	 * instead of max_frame (a peer that says anything). */
	uint32_t say_frame;
	uint64_t tx_lost; /* frames the send queue refused at a flush */
	/* Freed items kept for reuse (no allocation per queued message):
	 * short ones, medium ones (with payload room), and their counts. */
	struct uam_item *items, *mitems;
	uint32_t nitems, nmitems;
	struct uam_stats closed; /* stats of channels already closed */
	uint64_t bad_frames;	 /* frames with no channel */
};
_Static_assert(offsetof(struct uam_ep, txb) <= 5 * 64,
	       "what every message touches of the endpoint fits five cache lines");

/* ---- uam_proto.c -------------------------------------------------------- */

/* The first sequence number of a stream with this session. */
uint32_t uamp_isn(const struct uam_ep *ep, uint32_t session);
/* Fill ep (zeroed by the caller) from opts (may be NULL) and tr.  Returns
 * 0 or -EINVAL / -ENOMEM. */
int uamp_ep_init(struct uam_ep *ep, const struct uam_ep_opts *opts, const struct uam_transport *tr);
/* Free what uamp_ep_init and the channels allocated (not ep itself). */
void uamp_ep_fini(struct uam_ep *ep);
/* A channel over the transport handle.  NULL with errno. */
struct uam_chan *uamp_chan_new(struct uam_ep *ep, void *handle);
/* Close ch: fail it (-ECONNRESET), unlink it; free it now, or, inside an
 * uamp_enter section (a handler or callback closing it), when the
 * outermost section ends.  A second call while it waits does nothing. */
void uamp_chan_free(struct uam_chan *ch);
/* Bracket code that runs handlers or op callbacks and then goes on using
 * channels (uamp_input, uamp_tick, uam_poll's batch, uam_call's wait):
 * a channel closed meanwhile stays allocated, failed and unlinked, until
 * the outermost uamp_leave frees it.  Nests. */
void uamp_enter(struct uam_ep *ep);
void uamp_leave(struct uam_ep *ep);
/* One received frame for ch. */
void uamp_input(struct uam_chan *ch, const uint8_t *frame, uint32_t len);
/* Timers, sends, acks of every channel: call after a batch of input. */
void uamp_tick(struct uam_ep *ep);
/* The acknowledgements owed now (ep->acks_owed): call at the end of
 * each receive round, before the kick, so a bulk sender gets credit back
 * while the receiver is still draining its ring. */
void uamp_round_acks(struct uam_ep *ep);
/* Nanoseconds until the next retransmission timer of any channel
 * (UINT64_MAX: none). */
uint64_t uamp_next_timer_ns(struct uam_ep *ep);
/* uam_call's first half: send the request and arrange for its reply to
 * land in *reply (ch->call_done); the waiting is uam.c's. */
int uamp_call_start(struct uam_chan *ch, unsigned int handler, const uint64_t *args,
		    unsigned int nargs, struct uam_msg *reply);
/* Sends inside uamp_defer .. uamp_undefer are flushed once, at the end. */
void uamp_defer(struct uam_ep *ep);
void uamp_undefer(struct uam_ep *ep);
/* The transport handle of ch carries frames of at most max (<= max_frame). */
void uamp_chan_frame_max(struct uam_chan *ch, uint32_t max);
/* Fail the channel with err (negative). */
void uamp_chan_fail(struct uam_chan *ch, int err);
/* What uam_timers.c calls of the sending core (uam_proto.c) and the
 * receive path (uam_input.c, uamp_drain_held): */
/* One frame to the transport: header f (len bytes), then dlen bytes of
 * data, copied from data or, if kbuf is a kept buffer sent for the
 * first time, already in it. */
int uamp_raw_xmit(struct uam_chan *ch, const uint8_t *f, uint32_t len, const uint8_t *data,
		  uint32_t dlen, uint64_t kbuf);
/* Fill the window from the queue, then send every frame marked need_tx. */
void uamp_push(struct uam_chan *ch);
/* An ACK on its own, now. */
void uamp_send_ack(struct uam_chan *ch);
/* Deliver the frames held from rcv_next on, in order, as long as none
 * must wait for the peer queue. */
void uamp_drain_held(struct uam_chan *ch);

/* Copy the caller's options struct of size sz (its first field) into ours
 * of our_size, which the caller has initialised with defaults: an older
 * caller's shorter struct leaves our later fields as they are; a newer
 * caller's longer one is taken only if the fields we do not know are zero.
 * Sets our size field to our_size.  Returns 0 or -EINVAL. */
static inline int uamp_copy_opts(void *ours, size_t our_size, const void *theirs, size_t sz)
{
	if (sz < sizeof(size_t))
		return -EINVAL;
	for (size_t i = our_size; i < sz; i++)
		if (((const uint8_t *)theirs)[i])
			return -EINVAL;
	memcpy(ours, theirs, sz < our_size ? sz : our_size);
	*(size_t *)ours = our_size;
	return 0;
}

/* uam_region.c: the endpoint's regions. */
/* Region id, registered, or NULL. */
struct uam_region *uamp_region_find(struct uam_ep *ep, uint32_t id);
/* Region id as the peer of ch may reach it: registered, and for every
 * channel or bound to ch (uam_region_opts.chan).  NULL if not: a region
 * bound to another peer is refused as if it did not exist. */
struct uam_region *uamp_region_for(struct uam_chan *ch, uint32_t id);
/* ch is closing: its regions stay bound, to no channel, so that a
 * channel allocated later at the same address does not inherit them. */
void uamp_regions_unbind(struct uam_ep *ep, const struct uam_chan *ch);

#endif /* UAM_IMPL_H */
