/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * eager.c - messages that travel whole in UAM medium messages: one EAGER
 * request up to the endpoint's eager_max, or FRAG requests back to back
 * up to UFI_FRAG_MAX (no rendezvous round trips), both the sending and
 * the arriving side.  An arrival goes to a posted receive or becomes an
 * unexpected message (match.c).
 */
#include <stdlib.h>
#include <string.h>

#include "msg.h"

static void deliver_eager(struct ufi_ep *ep, struct ufi_peer *p, uint64_t tag, uint64_t data,
			  uint32_t mf, const void *buf, size_t len);

/*
 * The eager path, the one place that knows how a small message travels:
 * one UAM request with a two-word header (tag; data<<32 | len<<8 | flags).
 * The data rides in the same frame as a UAM medium message
 * (uam_request_medium), up to the endpoint's medium_max; inject_size is
 * UFI_INJECT_MEDIUM.
 */
#define UFI_INJECT_MEDIUM 1024
/* Larger messages up to this go eagerly in several medium messages. */
#define UFI_FRAG_MAX 16384

size_t ufi_eager_max(void)
{
	return UFI_INJECT_MEDIUM;
}

/* Messages up to this go eagerly (in fragments above ufi_ep_eager_max). */
size_t ufi_ep_frag_max(struct ufi_ep *ep)
{
	return UFI_FRAG_MAX > ep->eager_max ? UFI_FRAG_MAX : ep->eager_max;
}

/* The endpoint's eager limit; 0 if it cannot honour inject_size. */
size_t ufi_ep_eager_max(struct ufi_ep *ep)
{
	size_t m = uam_ep__medium_max(ep->uam);
	return m >= UFI_INJECT_MEDIUM ? m : 0;
}

/* What one eager message to p carries: the endpoint's eager_max, or less
 * while p's channel has not heard that the peer takes frames that large,
 * or when its link's MTU is smaller (uam_chan__medium_max_args): the
 * smaller MTU of the two wins, and a larger message goes in fragments or
 * by rendezvous instead of being lost on the link. */
size_t ufi_peer_eager_max(struct ufi_ep *ep, struct ufi_peer *p)
{
	size_t m;

	if (p->self || !p->ch)
		return ep->eager_max;
	m = uam_chan__medium_max_args(p->ch, UAM_MAX_ARGS);
	return m < ep->eager_max ? m : ep->eager_max;
}

int ufi_eager_send(struct ufi_ep *ep, struct ufi_peer *p, uint64_t tag, uint64_t data,
		   uint32_t mf, const void *buf, size_t len)
{
	uint64_t a[UAM_MAX_ARGS] = { 0 };

	if (p->self) {
		deliver_eager(ep, p, tag, data, mf, buf, len);
		return 0;
	}
	a[0] = tag;
	a[1] = (data << 32) | ((uint64_t)len << 8) | mf;
	return uam_request_medium(p->ch, H_EAGER, a, 2, buf, len);
}

static void deliver_eager(struct ufi_ep *ep, struct ufi_peer *p, uint64_t tag, uint64_t data,
			  uint32_t mf, const void *buf, size_t len)
{
	int q = mf & UFI_MF_TAGGED ? Q_TAG : Q_MSG;
	struct ufi_rx *r = ufi_take_posted(ep, q, p, tag);
	struct ufi_ux *u;

	if (r) {
		size_t n = len < r->len ? len : r->len;
		if (n)
			memcpy(r->buf, buf, n);
		ufi_rx_done(ep, r->ctx, r->flags, r->buf, r->len, len, tag, data, mf, p, 0, 0);
		free(r);
		return;
	}
	u = calloc(1, sizeof(*u) + len);
	if (!u) {
		FI_WARN(&ufi_prov, FI_LOG_EP_DATA, "out of memory: unexpected message dropped\n");
		return;
	}
	*u = (struct ufi_ux){ .peer = p, .tag = tag, .data = data, .mflags = mf, .len = len,
			      .region = SELF_REGION };
	if (len)
		memcpy(u->eager, buf, len);
	ufi_ux_charge(ep, u, sizeof(*u) + len);
	ufi_push_ux(ep, q, u);
}

void ufi_h_eager(struct ufi_ep *ep, struct ufi_peer *p, const struct uam_msg *m)
{
	const void *src;
	size_t len;

	if (!p || m->nargs < 2)
		return;
	len = (m->args[1] >> 8) & 0xffffff;
	/* the data is the medium frame's payload, exactly as long as the header says */
	if (m->nargs != 2 || m->data_len != len || (len && !m->data))
		return;
	src = m->data;
	deliver_eager(ep, p, m->args[0], m->args[1] >> 32, (uint32_t)m->args[1] & 0x3, src, len);
}

/* The fragmented message in progress from p is over (or abandoned). */
void ufi_frag_end(struct ufi_ep *ep, struct ufi_peer *p, int err)
{
	struct ufi_inmsg *in = p->in;

	p->in = NULL;
	if (!in)
		return;
	if (in->rx) {
		ufi_rx_done(ep, in->rx->ctx, in->rx->flags, in->rx->buf, in->rx->len, in->total,
			    in->tag, in->data, in->mf, p, err ? FI_EIO : 0, err);
		free(in->rx);
	} else if (in->ux) {
		if (err)
			ufi_ux_free(ep, in->ux);
		else
			ufi_push_ux(ep, in->mf & UFI_MF_TAGGED ? Q_TAG : Q_MSG, in->ux);
	}
	free(in);
}

void ufi_h_frag(struct ufi_ep *ep, struct ufi_peer *p, const struct uam_msg *m)
{
	struct ufi_inmsg *in;
	uint64_t total, off;

	if (!p || m->nargs != 4 || !m->data_len)
		return;
	total = m->args[2];
	off = m->args[3];
	if (total > UFI_FRAG_MAX || off >= total || m->data_len > total - off) {
		ufi_frag_end(ep, p, EPROTO);
		return;
	}
	if (off == 0) {
		uint32_t mf = (uint32_t)m->args[1] & 0x3;
		int q = mf & UFI_MF_TAGGED ? Q_TAG : Q_MSG;
		ufi_frag_end(ep, p, EPROTO); /* a message left unfinished */
		in = calloc(1, sizeof(*in));
		if (!in)
			return;
		*in = (struct ufi_inmsg){ .total = total, .tag = m->args[0], .data = m->args[1] >> 32,
					  .mf = mf };
		in->rx = ufi_take_posted(ep, q, p, in->tag);
		if (!in->rx) {
			/* unexpected: visible to receives and FI_PEEK once complete */
			in->ux = calloc(1, sizeof(*in->ux) + total);
			if (!in->ux) {
				free(in);
				return;
			}
			*in->ux = (struct ufi_ux){ .peer = p, .tag = in->tag, .data = in->data,
						   .mflags = mf, .len = total,
						   .region = SELF_REGION };
			ufi_ux_charge(ep, in->ux, sizeof(*in->ux) + total);
		}
		p->in = in;
	}
	in = p->in;
	if (!in || off != in->got || total != in->total) {
		ufi_frag_end(ep, p, EPROTO);
		return;
	}
	if (in->rx) {
		if (off < in->rx->len)
			memcpy((char *)in->rx->buf + off, m->data,
			       m->data_len < in->rx->len - off ? m->data_len : in->rx->len - off);
	} else {
		memcpy(in->ux->eager + off, m->data, m->data_len);
	}
	in->got += m->data_len;
	if (in->got == in->total)
		ufi_frag_end(ep, p, 0);
}

/*
 * Several medium messages, back to back on the channel, from *off on.
 * Returns 0, or -EAGAIN with *off at the first fragment not sent (the
 * rest must go before anything else: the pend queue), or an error.
 */
int ufi_frag_send(struct ufi_ep *ep, struct ufi_peer *p, const unsigned char *buf,
		  size_t len, uint64_t tag, uint64_t data, uint32_t mf, size_t *off)
{
	size_t chunk = ufi_peer_eager_max(ep, p);

	while (*off < len) {
		size_t n = len - *off < chunk ? len - *off : chunk;
		uint64_t a[4] = { tag, (data << 32) | mf, len, *off };
		int r = uam_request_medium(p->ch, H_FRAG, a, 4, buf + *off, n);
		if (r < 0)
			return r;
		*off += n;
	}
	ep->last_send_ns = ufi_now_ns();
	return 0;
}

