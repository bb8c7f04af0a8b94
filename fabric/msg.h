/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * msg.h - the messaging floor's parts, shared among its files only
 * (ufi.h says where the floor lies).  Bottom up, each calling only those
 * before it:
 *
 *   match.c  posted receives, unexpected messages and their credit, and
 *            completions handed to the CQ (through its ufi_cq_report)
 *   eager.c  messages that travel in UAM medium messages: one (EAGER) or
 *            several back to back (FRAG), both ways
 *   rndv.c   rendezvous: regions, RTS, the receiver's pull, FIN (and the
 *            queue of control messages that found UAM's queue full)
 *   send.c   a send started now (eager, fragments or rendezvous), or
 *            queued behind the sends that wait (the pend queue)
 *   proto.c  UAM's handlers dispatched, a failed peer's operations ended,
 *            progress, the wake-up hint, fi_close's goodbye
 *   post.c   the API's side: ufi_send, ufi_recv (FI_PEEK, FI_CLAIM),
 *            ufi_cancel
 *
 * UAM handlers (indices at both ends):
 *   EAGER  args: tag, data<<32 | len<<8 | flags, then the data (eager.c)
 *   RTS    args: tag, data<<32 | flags, len, region, cookie: "pull len bytes
 *          from my region"; the receiver uam_get()s them once matched
 *   FIN    args: cookie, status: the pull is over, the sender completes
 *   PING   keepalive: unacknowledged data makes UAM notice a dead peer
 *   SYNC / SYNC_ACK / BYE: fi_close makes sure peers took our last data
 *   FRAG   (with UAM medium messages) args: tag, data<<32 | flags, total,
 *          offset; a fragment of a message up to UFI_FRAG_MAX sent eagerly
 *          in back-to-back medium messages: no rendezvous round trips
 * Matching happens in arrival order on each in-order channel, so sends
 * from one peer match in the order they were sent (FI_ORDER_SAS).
 */
#ifndef UFI_MSG_H
#define UFI_MSG_H

#include "ufi.h"

enum { H_EAGER = 1, H_RTS, H_FIN, H_PING, H_SYNC, H_SYNC_ACK, H_BYE, H_FRAG };

#define Q_MSG 0
#define Q_TAG 1
#define SELF_REGION UINT32_MAX
#define UX_RNDV 0x100 /* ufi_ux.mflags: a rendezvous, not eager data */

/* ---- match.c ---- */
void ufi_tx_done(struct ufi_ep *ep, void *ctx, uint64_t flags, uint64_t tag, int err,
		 int prov_errno);
/* A receive is over: msglen bytes arrived for a buffer of buflen. */
void ufi_rx_done(struct ufi_ep *ep, void *ctx, uint64_t rflags, void *buf, size_t buflen,
		 size_t msglen, uint64_t tag, uint64_t data, uint32_t mf, struct ufi_peer *p,
		 int err, int prov_errno);
struct ufi_rx *ufi_take_posted(struct ufi_ep *ep, int q, const struct ufi_peer *p, uint64_t tag);
bool ufi_ux_matches(struct ufi_ep *ep, const struct ufi_ux *u, fi_addr_t src, uint64_t tag,
		    uint64_t ignore, int q);
struct ufi_ux *ufi_find_ux(struct ufi_ep *ep, int q, fi_addr_t src, uint64_t tag,
			   uint64_t ignore, bool unlink);
void ufi_ux_charge(struct ufi_ep *ep, struct ufi_ux *u, size_t cost);
void ufi_ux_free(struct ufi_ep *ep, struct ufi_ux *u);
void ufi_push_ux(struct ufi_ep *ep, int q, struct ufi_ux *u);
/* Fail the receives posted for p (and, if nothing else failed, the first
 * wildcard one): how many. */
int ufi_fail_posted(struct ufi_ep *ep, struct ufi_peer *p, int failed);

/* ---- eager.c ---- */
/* One message in one medium message (to self: delivered at once). */
int ufi_eager_send(struct ufi_ep *ep, struct ufi_peer *p, uint64_t tag, uint64_t data,
		   uint32_t mf, const void *buf, size_t len);
/* Several medium messages, back to back on the channel, from *off on.
 * Returns 0, or -EAGAIN with *off at the first fragment not sent (the
 * rest must go before anything else: the pend queue), or an error. */
int ufi_frag_send(struct ufi_ep *ep, struct ufi_peer *p, const unsigned char *buf, size_t len,
		  uint64_t tag, uint64_t data, uint32_t mf, size_t *off);
void ufi_h_eager(struct ufi_ep *ep, struct ufi_peer *p, const struct uam_msg *m);
void ufi_h_frag(struct ufi_ep *ep, struct ufi_peer *p, const struct uam_msg *m);
/* The fragmented message in progress from p is over (or abandoned). */
void ufi_frag_end(struct ufi_ep *ep, struct ufi_peer *p, int err);

/* ---- rndv.c ---- */
void ufi_send_ctl(struct ufi_ep *ep, struct ufi_peer *p, unsigned h, uint64_t a0, uint64_t a1);
void ufi_flush_ctls(struct ufi_ep *ep);
/* The rendezvous send of a message: 0, -EAGAIN (no region free), or an error. */
int ufi_rndv_send(struct ufi_ep *ep, struct ufi_peer *p, const void *buf, size_t len,
		  uint64_t tag, uint64_t data, uint32_t mf, uint64_t flags, void *ctx);
void ufi_start_get(struct ufi_ep *ep, struct ufi_peer *p, void *buf, size_t buflen,
		   size_t msglen, void *ctx, uint64_t rflags, uint64_t tag, uint64_t data,
		   uint32_t mf, uint32_t region, uint32_t cookie);
void ufi_retry_gets(struct ufi_ep *ep);
void ufi_h_rts(struct ufi_ep *ep, struct ufi_peer *p, const struct uam_msg *m);
void ufi_h_fin(struct ufi_ep *ep, struct ufi_peer *p, const struct uam_msg *m);
/* End p's rendezvous sends / pulls with its error: how many. */
int ufi_rndv_fail_txs(struct ufi_ep *ep, struct ufi_peer *p);
int ufi_rndv_fail_gets(struct ufi_ep *ep, struct ufi_peer *p);

/* ---- send.c ---- */
/* Send now: 0, -EAGAIN (UAM's queue is full, or no region is free for a
 * rendezvous: later; *off says how much of a fragmented eager message
 * went), or an error. */
int ufi_send_now(struct ufi_ep *ep, struct ufi_peer *p, const void *buf, size_t len,
		 uint64_t tag, uint64_t data, uint32_t mf, uint64_t flags, void *ctx, size_t *off);
ssize_t ufi_pend_send(struct ufi_ep *ep, struct ufi_peer *p, const void *buf, size_t len,
		      uint64_t tag, uint64_t data, uint32_t mf, uint64_t flags, void *ctx,
		      size_t off);
void ufi_flush_pend(struct ufi_ep *ep);
/* End p's queued sends with its error: how many. */
int ufi_pend_fail(struct ufi_ep *ep, struct ufi_peer *p);

#endif /* UFI_MSG_H */
