/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * layer.h - what the core offers the protocol layers above it (UDP/ARP in
 * lib/udp/, next TCP and emulated endpoints).  A layer includes this
 * header and the public ones, and nothing else of the core: the core
 * never calls a layer by name, only through the hooks registered here.
 *
 * Four things a layer can do:
 *   - claim received frames that are not U-Net messages (anything whose
 *     EtherType is not 0x88B5 that the XDP program put on the endpoint's
 *     receive queue) and turn them into receive descriptors, or consume
 *     them (ARP);
 *   - send whole frames it built itself through the endpoint's send
 *     queues (the core checks the buffer and the length);
 *   - keep tables in the interface's pinned maps, which the core asks it
 *     to reclaim, under the interface lock, when their owners are gone;
 *   - run time-driven work (TCP's timers and retransmissions) from the
 *     application's own calls, through the progress hook.
 */
#ifndef UNET_LAYER_H
#define UNET_LAYER_H

#include <stdbool.h>
#include <stdint.h>

#include "core/internal.h"

/* ---- Per endpoint --------------------------------------------------- */

enum unet_layer_verdict {
	UNET_LAYER_NOT_MINE = 0, /* not this layer's frame: offer it to the next */
	UNET_LAYER_DELIVER,	 /* desc filled: hand it to the application */
	UNET_LAYER_CONSUMED,	 /* used or refused: the core gives the frame back */
};

/* The public header only names struct unet_layer: this is it. */
struct unet_layer {
	const char *name;
	/*
	 * A received frame of len bytes (Ethernet header first, untagged;
	 * len is within the frame buffer) with EtherType `proto` (host
	 * order).  On UNET_LAYER_DELIVER the layer has set desc->data, len
	 * (at most what lies in the frame), sock, src_addr, src_port; the
	 * core sets channel, buf and layer.  May send (an ARP reply).
	 */
	enum unet_layer_verdict (*rx)(void *state, uint16_t proto, uint8_t *frame, uint32_t len,
				      struct unet_recv_desc *desc);
	/* The upcall for a descriptor this layer delivered (NULL: none, the
	 * endpoint's handler runs). */
	unet_recv_handler (*handler)(void *state, const struct unet_recv_desc *desc, void **ctx);
	/* The endpoint is being destroyed: close everything, free state. */
	void (*destroy)(void *state);
	/*
	 * Optional (NULL: none).  Time-driven work: timers, retransmissions,
	 * frames the layer queued while the send queue was full.  The core
	 * has no thread of its own, so this runs on the application's
	 * thread, from its calls into the endpoint:
	 *   - at the start of every unet_endpoint__recv (so a spinning
	 *     application and unet_endpoint__dispatch run it);
	 *   - in unet_endpoint__wait, before each sleep: the sleep is cut to
	 *     the returned deadline, and the hook runs again when it expires
	 *     (the wait goes on sleeping until its own timeout).
	 * Returns how many milliseconds from now the layer wants to be
	 * called again at the latest, or -1 for no deadline.  May send.  An
	 * application that sleeps on unet_endpoint__fd() itself bounds its
	 * sleep the same way (unet_endpoint__next_timeout).
	 */
	int (*progress)(void *state);
};

/* Attach a layer's state to ep (at most UNET_MAX_LAYERS).  Returns 0,
 * -EEXIST (already attached), -ENOSPC. */
#define UNET_MAX_LAYERS 4
int unet_layer_attach(struct unet_endpoint *ep, const struct unet_layer *layer, void *state);
/* The state attached for layer, or NULL. */
void *unet_layer_state(const struct unet_endpoint *ep, const struct unet_layer *layer);

/* What a layer needs to know about its endpoint. */
struct unet_iface *unet_layer_iface(const struct unet_endpoint *ep);
uint32_t unet_layer_slot(const struct unet_endpoint *ep); /* endpoint slot */
/* The link's MTU, at most 9216 (the largest frame a layer gets whole). */
uint32_t unet_layer_mtu(const struct unet_endpoint *ep);
/* Index into the endpoint's queues of device queue qid (for sending), or
 * -EINVAL if the endpoint did not bind it. */
int unet_layer_txq(const struct unet_endpoint *ep, int qid);

/* An endpoint served by unetd has no interface maps (unet_layer_iface is
 * NULL): a layer asks the daemon for what it would have written there.
 * One request (type, body: lib/proto/unetd_proto.h) on the endpoint's
 * connection; up to cap bytes of the reply to rep; *fd gets a descriptor
 * the reply carried (-1: none) if fd is not NULL.  Returns 0, the
 * daemon's error (its reason logged), -ENOTCONN (not an endpoint from
 * unetd), -errno. */
int unet_layer_daemon_call(struct unet_endpoint *ep, uint16_t type, const void *body,
			   uint32_t len, void *rep, uint32_t cap, int *fd);
/* The endpoint's id at the daemon (its requests name it). */
uint32_t unet_layer_daemon_ep(const struct unet_endpoint *ep);

/* ---- Sending whole frames -------------------------------------------- */

/* Where buf (a buffer the application or the layer holds, from
 * unet_endpoint__buf_alloc) starts in the segment, or NULL (EINVAL) if it
 * is not such a buffer. */
uint8_t *unet_layer_buf(struct unet_endpoint *ep, uint64_t buf);
/*
 * Kept send buffers.  A layer that may have to send a frame again (a
 * retransmission) can build it once in a segment buffer and keep that,
 * rather than a copy in its own memory.  unet_layer_buf_keep(ep, buf),
 * on a buffer the layer holds and before it is queued: when its send
 * completes, buf comes back to the layer (held as from
 * unet_endpoint__buf_alloc) instead of going to the pool.  While queued
 * the layer may read it (to copy it into a new buffer for a repeat) but
 * not write it: a zero-copy driver may be sending it.
 * unet_layer_buf_unkeep gives it up, to the pool now if the layer holds
 * it, or at its completion if it is still on a ring.  A kept buffer the
 * send refused is still the layer's.  Both return 0 or -EINVAL.
 */
int unet_layer_buf_keep(struct unet_endpoint *ep, uint64_t buf);
int unet_layer_buf_unkeep(struct unet_endpoint *ep, uint64_t buf);
/*
 * Put the frame of flen bytes that starts off bytes into buf on send
 * queue txq and kick it.  The frame must fit the buffer and the link
 * (flen <= MTU + 14), and start past the room for TX metadata where the
 * endpoint has it (16 bytes into the buffer: txmd.c).  Returns 0
 * (the core owns buf from here), -EINVAL, -EMSGSIZE, -EAGAIN (queue
 * full: buf still the caller's), -ENETDOWN.
 */
int unet_layer_xmit(struct unet_endpoint *ep, uint32_t txq, uint64_t buf, uint32_t off,
		    uint32_t flen);
/*
 * Batched sending: the same as unet_layer_xmit, without the kick.  A
 * kick is a system call (in copy mode the kernel sends the frames inside
 * it, 32 per sendto, and the kick repeats until the queue is empty), so
 * a layer that sends many frames in one go (TCP: a window's worth of
 * segments, the ACKs for a batch of received segments) queues them all
 * and kicks once.  Any kick of the queue (the core's own, when it reaps
 * completions) pays what is owed.  The kick is owed
 * from here, and unet_layer_kick(ep) pays it: the layer calls it before
 * it returns to the application from any call that may have queued.
 * The core pays what is owed itself at the end of every
 * unet_endpoint__recv (so frames a layer queued from rx or progress
 * leave once per receive pass), in unet_endpoint__next_timeout, and
 * before every sleep in unet_endpoint__wait.  Frames leave in the order
 * they were queued (one ring per queue), batched or not.
 */
int unet_layer_queue(struct unet_endpoint *ep, uint32_t txq, uint64_t buf, uint32_t off,
		     uint32_t flen);
void unet_layer_kick(struct unet_endpoint *ep);
/*
 * Held kicks, for a caller that answers many events in one pass (unet-run's
 * --batch-sends: the replies an event loop writes after one epoll_wait).
 * While this thread holds them, unet_layer_kick and the kick after reaping
 * completions pay nothing: frames stay queued and owed, and leave together
 * at the next kick not held.  Bounded: a full send ring still kicks
 * (unet_tx_reserve), and unet_endpoint__wait ends the hold before it sleeps
 * (nothing queued sleeps with us).  Releasing (on false) kicks nothing:
 * the caller then calls unet_layer_kick for every endpoint it may have used
 * meanwhile.  Per thread.
 */
void unet_layer_hold_kicks(bool on);
/*
 * Transmit checksums computed by the device (or the kernel, in copy
 * mode: AF_XDP TX metadata, txmd.c).  unet_layer_tx_csum(ep, off): true
 * when the endpoint has it and a frame off bytes into its buffer leaves
 * the room it takes.  unet_layer_xmit_csum: unet_layer_xmit of a frame
 * whose checksum field, csum->offset bytes after csum->start (both from
 * the frame's first byte), holds the folded pseudo-header sum and is to
 * be completed over the bytes from csum->start to the frame's end.
 * Returns what unet_layer_xmit returns, -EINVAL also without the
 * feature or for a field outside the frame.
 */
struct unet_tx_csum {
	uint16_t start, offset;
};
bool unet_layer_tx_csum(const struct unet_endpoint *ep, uint32_t off);
int unet_layer_xmit_csum(struct unet_endpoint *ep, uint32_t txq, uint64_t buf, uint32_t off,
			 uint32_t flen, const struct unet_tx_csum *csum);

/*
 * Frames larger than one send buffer (jumbo MTUs, docs/platform.md):
 * whether the endpoint can send and receive them (its sockets have
 * AF_XDP multi-buffer); without it a layer's frames are one send buffer
 * each, and the kernel drops larger ones on receive.  Received frames
 * in pieces reach the layer's rx whole, reassembled.  For an
 * endpoint emulated by unetd, true when the daemon also takes IPv4 UDP
 * and TCP frames in pieces (UNETD_EP_INET_PIECES).
 */
bool unet_layer_multi_buffer(const struct unet_endpoint *ep);
/* Writes len bytes of the frame, from frame offset off, at dst. */
typedef void (*unet_layer_fill_fn)(void *ctx, uint8_t *dst, uint32_t off, uint32_t len);
/*
 * Queue a frame of flen bytes (at most the MTU, up to 9216, + 14) on
 * txq as one chain of send buffers, without a kick (owed, as
 * unet_layer_queue): fill writes each piece.  The first piece holds at
 * least 1790 bytes (2048-byte chunks), so headers written at offset 0
 * lie whole in it.  The frame is the core's once queued (no kept
 * buffers: a layer that retransmits keeps its own copy).  Returns 0,
 * -EINVAL, -EMSGSIZE (too long, or no multi-buffer), -EAGAIN (no
 * buffers or ring room: nothing queued), -ENETDOWN.
 */
int unet_layer_queue_frame(struct unet_endpoint *ep, uint32_t txq, uint32_t flen,
			   unet_layer_fill_fn fill, void *ctx);
/* A frame in two parts (head, hlen bytes, then body): a fill for it. */
struct unet_layer_parts {
	const void *head;
	uint32_t hlen;
	const void *body;
};
void unet_layer_fill_copy(void *ctx, uint8_t *dst, uint32_t off, uint32_t len);
/*
 * One U-Net message of hlen + dlen bytes on raw channel ch, copied from
 * hdr and then data straight into as many send buffers as it needs and
 * queued as one chain (a frame in pieces: docs/platform.md), without the
 * kick (owed, as unet_layer_queue).  For a message larger than one send
 * buffer (info.buf_payload), up to info.max_payload.  Returns 0,
 * -EMSGSIZE (too long, a routable channel, or an endpoint without
 * multi-buffer), -EAGAIN (no buffers or ring room: nothing queued),
 * -ENETDOWN, -EINVAL.
 */
int unet_layer_queue_pieces(struct unet_channel *ch, const void *hdr, uint32_t hlen,
			    const void *data, uint32_t dlen);
/* Chunks (free-queue buffers on receive, send buffers on send) a U-Net
 * message of len bytes takes: 1 up to info.buf_payload. */
uint32_t unet_layer_msg_pieces(const struct unet_endpoint *ep, uint32_t len);

/* ---- Per interface: shared tables ------------------------------------ */

/* A layer's tables in the interface's pinned maps. */
struct unet_iface_layer {
	const char *name;
	/* Remove every entry whose endpoint slot is not live (use
	 * unet_iface_slot_alive).  Called with the interface lock held,
	 * before the core frees dead slots.  Returns how many were
	 * removed, or -errno. */
	int (*reclaim)(struct unet_iface *iface);
	struct unet_iface_layer *next;
};
/* Register once (from a constructor in the layer's object). */
void unet_iface_layer_register(struct unet_iface_layer *l);

/* Whether endpoint slot `slot` is owned by a live process, and (if
 * token is non-zero) by the incarnation with that token. */
bool unet_iface_slot_alive(struct unet_iface *iface, uint32_t slot, uint64_t token);
/* The token of the live owner of slot, 0 if none. */
uint64_t unet_iface_slot_token(struct unet_iface *iface, uint32_t slot);

/* Endpoint slots, for a trusted process that makes endpoints for others
 * (unetd's direct-access grants): claim one for v (token and alive map
 * made), give it back if it still holds token, and put a socket in (fd)
 * or take it out of (fd < 0) the XSKMAP at (slot, queue).  Return the
 * slot / 0, or -errno. */
int unet_iface_slot_claim(struct unet_iface *iface, const struct unet_endpoint_val *v);
void unet_iface_slot_release(struct unet_iface *iface, uint32_t slot, uint64_t token);
int unet_iface_xsk_set(struct unet_iface *iface, uint32_t slot, uint32_t queue, int fd);

/* The interface lock: serialises changes to the shared tables (slots,
 * channels, layer tables) between processes.  flock on the pin directory,
 * so a process that dies holding it lets go.  Returns 0 or -errno. */
int unet_iface_lock(struct unet_iface *iface);
void unet_iface_unlock(struct unet_iface *iface);

/* A map of the attached program, by name (one the library does not open
 * itself), checked as unet_iface__open checks its own: the pin is not a
 * link, the map belongs to the attached program, and has this type and
 * sizes.  Returns an fd (the caller closes it) or -errno. */
int unet_iface_map_open(struct unet_iface *iface, const char *name, uint32_t type,
			uint32_t key_size, uint32_t value_size);
/* The same, opened once and kept by iface (name must be a string that
 * lives as long): the fd stays the iface's, closed with it. */
int unet_iface_map(struct unet_iface *iface, const char *name, uint32_t type, uint32_t key_size,
		   uint32_t value_size);

/* ---- Per interface: owned entries ---------------------------------- */

/*
 * A layer's map entries whose values name their owner as channels do
 * (docs/control-plane.md): the endpoint slot (__u32), the pid that made
 * the entry (__u32, for listings) and the token of the incarnation that
 * owns it (__u64); an entry is stale once no live process holds the slot
 * with that token.  Where those fields sit in the value is the layer's
 * map layout: it says so here, and lib/core/owned.c reads them there.
 */
#define UNET_OWNED_VAL_MAX 128 /* largest value these helpers read */
struct unet_owned_map {
	uint32_t key_size, val_size; /* the map's; val_size <= UNET_OWNED_VAL_MAX */
	uint32_t max_entries;	     /* at most this many keys are walked */
	size_t endpoint_off, token_off; /* offsetof the owner's slot, token */
};

/* Whether the owner (slot, token) is alive: a live process holds the slot
 * with that token (0 is nobody's). */
bool unet_owner_alive(struct unet_iface *iface, uint32_t slot, uint64_t token);
/* Put key -> val (owner fields filled by the caller) in map fd, first
 * deleting an entry at key whose owner is dead.  Returns 0, 1 if it
 * replaced a dead owner's entry, -EADDRINUSE (a live owner has key: *old,
 * a value-sized buffer, holds its entry), -EEXIST (another process put
 * one in meanwhile), -ENOSPC (map full), -EINVAL, -errno. */
int unet_owned_put(struct unet_iface *iface, int fd, const struct unet_owned_map *m,
		   const void *key, const void *val, void *old);
/* Delete key if endpoint (its current incarnation) still owns it. */
void unet_owned_remove(struct unet_iface *iface, int fd, const struct unet_owned_map *m,
		       const void *key, uint32_t endpoint);
/* fn(key, value, whether its owner is dead, ctx) for every entry, until
 * fn returns non-zero (returned).  Keys are collected first; an entry
 * deleted meanwhile is skipped.  Returns 0, fn's value, or -errno. */
int unet_owned_each(struct unet_iface *iface, int fd, const struct unet_owned_map *m,
		    int (*fn)(const void *key, const void *val, bool stale, void *ctx), void *ctx);
/* Delete every entry whose owner is dead, telling reclaimed (if not NULL)
 * of each after it is gone.  Returns how many, or -errno. */
int unet_owned_reclaim(struct unet_iface *iface, int fd, const struct unet_owned_map *m,
		       void (*reclaimed)(struct unet_iface *iface, const void *key,
					 const void *val));

#endif /* UNET_LAYER_H */
