/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uam.h - U-Net Active Messages: reliable, flow-controlled request/reply
 * with handlers, and bulk store/get into registered memory, as a library
 * layer over the raw endpoint API of unet.h.
 *
 * Model (von Eicken et al., SOSP'95, section 5):
 *   - a UAM endpoint wraps one unet endpoint and takes over its receive
 *     queue; a UAM channel wraps one unet channel (both peers open it);
 *   - handlers are registered by index (0..UAM_MAX_HANDLERS-1) and run
 *     inside uam_poll / uam_wait / uam_call / uam_op__wait, never from a
 *     signal or another thread;
 *   - a request runs its handler at the receiver, which may send one reply
 *     (uam_reply) whose handler, also named by index, runs at the
 *     requester;
 *   - uam_store copies any amount of local memory into a region the peer
 *     registered (uam_region__register), then runs a handler there; its
 *     completion is signalled back to the sender (op callback or
 *     uam_op__wait); uam_get is the reverse;
 *   - every channel is reliable: exactly once, in order, over a network
 *     that drops, duplicates and reorders (docs/uam.md: sequence numbers,
 *     selective acknowledgement, retransmission with backoff, credits).
 *
 * Errors (as in unet.h): int functions return >= 0 on success or a
 * negative errno; pointer functions NULL with errno set.  Two errors mean
 * the channel is dead, and every pending and later call on it returns the
 * same one (uam_chan__error):
 *   -ETIMEDOUT   the peer acknowledged nothing for timeout_ms (default
 *                2000 ms) while data was outstanding: it died, vanished
 *                or stopped polling;
 *   -ECONNRESET  the peer closed and reopened its channel or restarted: a
 *                stream starting with a new session arrived.  Reopen the
 *                channel (uam_chan__close, uam_chan__open) to talk again.
 * Other: -EAGAIN (local queue full: poll and retry), -ETIME (a call or op
 * wait ran out of its own timeout; the operation is still under way),
 * -EFAULT (region id or range refused by the peer), -EPROTO (the peer
 * reported a status we do not know), -EINVAL, -ENOMEM.
 *
 * Not thread-safe: one thread drives an endpoint and its channels.
 */
#ifndef UAM_H
#define UAM_H

#include <stddef.h>
#include <stdint.h>

#include "unet.h"

#ifdef __cplusplus
extern "C" {
#endif

#define UAM_MAX_ARGS 8	     /* 64-bit words in a short message */
#define UAM_MAX_HANDLERS 256 /* handler indices 0..255 */
#define UAM_MAX_REGIONS 64   /* registered regions per endpoint */
#define UAM_MAX_WINDOW 512   /* frames in flight per channel and direction */

struct uam_ep;
struct uam_chan;

enum uam_msg_kind {
	UAM_MSG_REQUEST = 1, /* uam_request / uam_call: the handler may reply */
	UAM_MSG_REPLY,	     /* uam_reply */
	UAM_MSG_STORE,	     /* a uam_store completed into one of our regions */
};

/* What a handler receives.  Valid only during the handler call. */
struct uam_msg {
	struct uam_chan *chan;
	enum uam_msg_kind kind;
	uint16_t handler;
	uint8_t nargs;
	uint32_t token; /* request id (echoed in its reply) */
	uint64_t args[UAM_MAX_ARGS];
	/* UAM_MSG_STORE: where the data landed in our memory */
	uint32_t region;
	uint64_t offset, len;
	/* UAM_MSG_REQUEST / UAM_MSG_REPLY sent as a medium message: its
	 * payload, in place in the receive buffer (no copy), valid only
	 * during the handler; NULL and 0 for a short message.  In a reply
	 * captured by uam_call it points into the channel's own copy,
	 * valid until the next uam_call on the channel or its close. */
	const void *data;
	size_t data_len;
};

typedef void (*uam_handler_fn)(struct uam_ep *ep, const struct uam_msg *msg, void *ctx);
/* Completion of a store or get: status 0, -EFAULT, -EPROTO, -ETIMEDOUT,
 * -ECONNRESET. */
typedef void (*uam_op_fn)(struct uam_ep *ep, int op, int status, void *ctx);

/*
 * TEST HOOKS ONLY: faults applied on UAM's own send path, to exercise the
 * protocol (loss is injected lower down, in the XDP program:
 * unet_iface__set_fault).  Per million frames sent: dup_ppm are sent
 * twice; reorder_ppm are held back and sent after the next frame (or at
 * the end of the poll).  All 0 (the default) for real use.
 */
struct uam_inject_opts {
	uint32_t dup_ppm;
	uint32_t reorder_ppm;
	uint64_t seed; /* 0: a fixed default */
};

struct uam_ep_opts {
	size_t sz;
	/* Credits: frames each channel's peer may send beyond what we have
	 * delivered; we keep that many receive buffers per channel.
	 * 4..UAM_MAX_WINDOW, default 64.  A bulk stream wants more (256 to
	 * 512 keep a veth link busy through the receiver's scheduling
	 * hiccups and past a loss); uam_chan__open needs 2 * window
	 * receive buffers per channel. */
	uint32_t window;
	/* Requests, stores and gets a channel queues locally while it has
	 * no credit; beyond it calls return -EAGAIN.  Default 1024. */
	uint32_t max_queued;
	/* Stores and gets in progress per endpoint.  Default 256. */
	uint32_t max_ops;
	/* Retransmission timeout, from the measured round trip as RFC 6298
	 * (SRTT + 4 RTTVAR + ack_delay_us; 1 ms before the first sample),
	 * never below rto_min_us (default 100: a round trip on a link is
	 * microseconds, not TCP's 200 ms) nor above rto_max_us (default
	 * 200000); doubles on each expiry, back to the measured value when
	 * the peer acknowledges something.  Most losses are recovered
	 * before it: fast retransmit on SACK evidence, and a tail-loss probe
	 * after two smoothed round trips. */
	uint32_t rto_min_us, rto_max_us;
	/* A channel with unacknowledged data and no acknowledgement for this
	 * long fails with -ETIMEDOUT.  Default 2000 ms. */
	uint32_t timeout_ms;
	struct uam_inject_opts inject; /* test hooks, see above */
	/* Delayed acknowledgement: a received frame is acknowledged on the
	 * next frame we send anyway (a reply, say), or by an explicit ACK
	 * once it has waited this long or a quarter of the window is
	 * unacknowledged (at the end of the receive round; also then for a
	 * duplicate, a frame that opens a gap or fills one, and every
	 * window/64 frames (at least 1) past a gap: the sender needs that SACK).  Default 50 us, or half of
	 * rto_min_us if that is less; must be below rto_min_us. */
	uint32_t ack_delay_us;
	/* What a channel queues because of its peer's frames (replies,
	 * DONEs, a get's data) while the peer leaves our frames
	 * unacknowledged: at most this many items (up to 1.5 KiB each with
	 * a medium reply).  Past it the peer's requests, gets and last
	 * store fragments are not taken (held, unacknowledged, so its
	 * window shuts) until it acknowledges.  Default 2 * window. */
	uint32_t max_peer_queued;
};

/* Create a UAM endpoint on uep (which stays the caller's: destroy it after
 * the UAM endpoint).  From now on UAM consumes uep's receive queue; frames
 * on unet channels without a UAM channel are released and counted.
 * Returns NULL with errno EINVAL (bad option), ENOMEM. */
UNET_API struct uam_ep *uam_ep__create(struct unet_endpoint *uep, const struct uam_ep_opts *opts);
/* Close every channel (failing pending ops with -ECONNRESET) and free.
 * Accepts NULL.  Never from inside a handler. */
UNET_API void uam_ep__destroy(struct uam_ep *ep);

/* Handler for index idx (fn NULL: unset).  Messages for an unset index
 * are dropped (acknowledged) and counted.  Returns 0 or -EINVAL. */
UNET_API int uam_ep__set_handler(struct uam_ep *ep, unsigned int idx, uam_handler_fn fn, void *ctx);

/* Region flags: what the peer may do. */
#define UAM_REGION_WRITE 0x1 /* target of the peer's uam_store */
#define UAM_REGION_READ 0x2  /* source of the peer's uam_get */

/* Register [base, base+len) as region id for the peer's stores/gets.  The
 * memory stays the caller's and must outlive the registration.  Every
 * channel of the endpoint reaches the region: use
 * uam_region__register_opts to give it to one peer only.  Returns 0,
 * -EEXIST (id in use), -ENOSPC (UAM_MAX_REGIONS), -EINVAL. */
UNET_API int uam_region__register(struct uam_ep *ep, uint32_t id, void *base, size_t len,
				  unsigned int flags);

struct uam_region_opts {
	size_t sz;
	/* NULL: every channel of the endpoint may store into or get from
	 * the region (as uam_region__register).  Else only this channel's
	 * peer: a store or get that names the region on any other channel
	 * is refused exactly as one naming no region (-EFAULT at its
	 * sender, nothing written or read) and counted region_errors on
	 * that channel; our own uam_get on another channel may not land in
	 * it (-EINVAL).  When the channel is closed, the region stays bound
	 * to it and no peer reaches it until it is unregistered. */
	struct uam_chan *chan;
};
/* As uam_region__register, with opts (NULL: as uam_region__register).
 * Returns 0, -EEXIST, -ENOSPC, -EINVAL (also: opts->chan of another
 * endpoint, closed or failed; unknown opts fields not zero). */
UNET_API int uam_region__register_opts(struct uam_ep *ep, uint32_t id, void *base, size_t len,
				       unsigned int flags, const struct uam_region_opts *opts);
/* Returns 0 or -ENOENT. */
UNET_API int uam_region__unregister(struct uam_ep *ep, uint32_t id);

/* Open the UAM channel on a unet channel of the endpoint (one per unet
 * channel; the peer opens its side the same way).  Returns NULL with errno
 * EINVAL, EEXIST (already open), ENOSPC (not enough receive buffers on the
 * endpoint to guarantee the window's credits), ENOMEM. */
UNET_API struct uam_chan *uam_chan__open(struct uam_ep *ep, struct unet_channel *uch);
/* Free the channel; its pending ops fail with -ECONNRESET.  The unet
 * channel stays open.  Accepts NULL.  Safe from a handler, the channel's
 * own included: it is failed at once and freed when the handler's caller
 * (uam_poll, uam_wait, uam_call) is done with it. */
UNET_API void uam_chan__close(struct uam_chan *ch);
/* 0 while the channel works, else -ETIMEDOUT or -ECONNRESET (see top). */
UNET_API int uam_chan__error(const struct uam_chan *ch);
/* Withhold credit from the channel's peer: from now on its requests are
 * not taken (no handler runs for them, none is acknowledged), each held
 * in its window slot as it comes, so the peer can have at most `window`
 * frames out and its calls queue, then return -EAGAIN, at its end.
 * Replies, acknowledgements, stores and gets go on.  For a layer that
 * must bound what a peer makes it keep (unexpected messages).  Safe from
 * a handler (it applies from the next frame).  uam_chan__resume gives
 * the credit back: what was held is delivered, in order, at the next
 * uam_poll.  Both return 0 or -EINVAL. */
UNET_API int uam_chan__pause(struct uam_chan *ch);
UNET_API int uam_chan__resume(struct uam_chan *ch);
UNET_API struct unet_channel *uam_chan__unet(const struct uam_chan *ch);

/* ---- Short messages ---------------------------------------------------- */

/* Send a request running handler at the peer with nargs (<= UAM_MAX_ARGS)
 * words.  Queued if the channel has no credit.  Returns the request token
 * (>= 0, echoed as msg->token in the reply), -EAGAIN (max_queued
 * reached), -ETIMEDOUT / -ECONNRESET (channel dead), -EINVAL. */
UNET_API int uam_request(struct uam_chan *ch, unsigned int handler, const uint64_t *args,
			 unsigned int nargs);
/* From inside a request handler only: send its one reply.  Never fails for
 * lack of queue space.  Returns 0, -EPERM (not in a request handler, or
 * already replied), -EINVAL, or the channel's error. */
UNET_API int uam_reply(const struct uam_msg *req, unsigned int handler, const uint64_t *args,
		       unsigned int nargs);
/* Round trip: send a request and wait for its reply, which is copied into
 * *reply instead of running a reply handler.  timeout_ms -1: until the
 * channel fails.  A full queue is waited out within the timeout.  Only
 * one uam_call per channel at a time (handlers must not call it).
 * Returns 0, -ETIME (no reply yet; a late reply is dropped and counted),
 * the channel's error, -EINVAL. */
UNET_API int uam_call(struct uam_chan *ch, unsigned int handler, const uint64_t *args,
		      unsigned int nargs, struct uam_msg *reply, int timeout_ms);

/* ---- Medium messages --------------------------------------------------- */

/*
 * A request or reply with a payload that travels in the same frame as
 * its arguments and is handed to the handler in place in the receive
 * buffer (msg->data, msg->data_len): no store, no extra round.  The
 * payload is copied when the call is made, so the caller's buffer is
 * free again at once.  Same reliability as short messages.
 */

/* Largest payload a medium message with nargs arguments carries in one
 * frame: the U-Net payload (the endpoint's MTU less 8) less a 20-byte
 * header and nargs * 8 bytes, so 1472 bytes with no arguments at MTU
 * 1500 (the largest UDP payload there) and 8 bytes less per argument.
 * 0 for ep NULL or nargs > UAM_MAX_ARGS. */
UNET_API size_t uam_ep__medium_max_args(const struct uam_ep *ep, unsigned int nargs);
/* The same with UAM_MAX_ARGS arguments: a payload this long fits with any
 * nargs (1408 bytes at MTU 1500).  0 for ep NULL. */
UNET_API size_t uam_ep__medium_max(const struct uam_ep *ep);
/* The largest medium payload with nargs arguments that ch's peer takes
 * now: uam_ep__medium_max_args once the peer has said (in its
 * acknowledgements) that it takes frames that large; until then, or if
 * its link's MTU is smaller, what its frames hold (1472 bytes with no
 * arguments for a frame of 1492, what every peer takes).  A larger
 * payload, up to uam_ep__medium_max_args, is still sent, and lost if the
 * peer's link drops it; once the peer has said less, it is refused with
 * -EMSGSIZE.  0 for ch NULL or nargs > UAM_MAX_ARGS. */
UNET_API size_t uam_chan__medium_max_args(const struct uam_chan *ch, unsigned int nargs);
/* As uam_request, with len bytes of data (data may be NULL if len is 0).
 * Returns the request token (>= 0), -EMSGSIZE (len >
 * uam_ep__medium_max_args(ep, nargs)), or as uam_request. */
UNET_API int uam_request_medium(struct uam_chan *ch, unsigned int handler, const uint64_t *args,
				unsigned int nargs, const void *data, size_t len);
/* As uam_reply, with len bytes of data.  Returns 0, -EMSGSIZE (len >
 * uam_ep__medium_max_args(ep, nargs)), or as uam_reply. */
UNET_API int uam_reply_medium(const struct uam_msg *req, unsigned int handler,
			      const uint64_t *args, unsigned int nargs, const void *data,
			      size_t len);

/* ---- Bulk transfers --------------------------------------------------- */

/* Copy len bytes from src into the peer's region `region` at offset, in
 * as many frames as it takes; when all arrived the peer runs handler with
 * args (kind UAM_MSG_STORE), then signals us: cb(op, status) runs here (or,
 * with cb NULL, uam_op__wait collects the status).  src must stay valid
 * and unchanged until then.  Returns the op id (> 0), -EAGAIN (max_queued
 * or max_ops reached), the channel's error, -EINVAL. */
UNET_API int uam_store(struct uam_chan *ch, const void *src, size_t len, uint32_t region,
		       uint64_t offset, unsigned int handler, const uint64_t *args,
		       unsigned int nargs, uam_op_fn cb, void *ctx);
/* Copy len bytes of the peer's region `remote_region` at remote_offset
 * into our region `local_region` at local_offset (registered with
 * UAM_REGION_WRITE).  Completion as for uam_store.  The peer reads its
 * region as it sends (and resends) the data, without a snapshot: it
 * should not change that range while a get is in progress.  Returns the
 * op id (> 0) or as uam_store. */
UNET_API int uam_get(struct uam_chan *ch, uint32_t remote_region, uint64_t remote_offset,
		     size_t len, uint32_t local_region, uint64_t local_offset, uam_op_fn cb,
		     void *ctx);
/* Wait for an op started without a callback and collect its status.
 * Returns its status (0, -EFAULT, -EPROTO, -ETIMEDOUT, -ECONNRESET), -ETIME
 * (still running after timeout_ms; wait again), -ENOENT (no such op, or it
 * has a callback). */
UNET_API int uam_op__wait(struct uam_ep *ep, int op, int timeout_ms);

/* ---- Batching ----------------------------------------------------------- */

/* Every call that sends hands its frames to the kernel at once, with one
 * kick (a system call in copy mode) per call; a poll sends everything its
 * handlers and acknowledgements produced with one kick.  Between
 * uam_ep__cork and uam_ep__uncork, sends are only queued, and the uncork
 * (or any poll) sends them all with one kick: for a burst of requests.
 * Nests.  uam_ep__uncork returns 0, or -EINVAL (not corked). */
UNET_API void uam_ep__cork(struct uam_ep *ep);
UNET_API int uam_ep__uncork(struct uam_ep *ep);

/* ---- Progress --------------------------------------------------------- */

/* Receive, run handlers, acknowledge, retransmit what timed out, send what
 * credits allow.  Never blocks.  Returns the number of handlers run and
 * ops completed (0 if none), or -errno. */
UNET_API int uam_poll(struct uam_ep *ep);
/* As uam_poll, but block up to timeout_ms (-1: no limit) until something
 * was handled, waking for retransmissions on the way.  Returns as
 * uam_poll (0 on timeout), -EINTR. */
UNET_API int uam_wait(struct uam_ep *ep, int timeout_ms);

struct uam_stats {
	uint64_t tx_frames, rx_frames; /* every UAM frame, incl. acks and repeats */
	uint64_t tx_acks;	       /* explicit (not piggybacked) acknowledgements */
	uint64_t retransmits;	       /* frames sent again */
	uint64_t timeouts;	       /* retransmission timer expiries */
	uint64_t dup_dropped;	       /* received twice: dropped */
	uint64_t out_of_order;	       /* held until the gap before them filled */
	uint64_t out_of_window;	       /* beyond the credits we gave: dropped */
	uint64_t credit_stalls;	       /* times a sender ran out of credit */
	uint64_t requests, replies, stores, gets; /* delivered to us */
	uint64_t no_handler;	       /* message for an unset handler index */
	uint64_t late_replies;	       /* replies to a uam_call that gave up */
	uint64_t bad_frames;	       /* malformed, unknown channel */
	uint64_t region_errors;	       /* stores/gets refused (-EFAULT) */
	uint64_t chan_failures;	       /* channels that failed */
	uint64_t peer_queue_full;      /* the peer's frames not taken: our queue of
					* what it asked for was full (max_peer_queued) */
};
/* Sum over the endpoint's channels (and ones closed before). Returns 0 or
 * -EINVAL. */
UNET_API int uam_ep__stats(const struct uam_ep *ep, struct uam_stats *st);
/* One channel.  Returns 0 or -EINVAL. */
UNET_API int uam_chan__stats(const struct uam_chan *ch, struct uam_stats *st);

#ifdef __cplusplus
}
#endif
#endif /* UAM_H */
