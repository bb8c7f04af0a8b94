/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_uam_proto.c - the U-Net Active Messages protocol (lib/uam/uam_proto.c)
 * with no network: two endpoints joined by a simulated link in memory
 * that drops, duplicates and reorders frames with seeded dice, and a
 * simulated clock.  Fast and deterministic; no root needed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "uam/uam_impl.h"

#define FRAME 1492 /* what an MTU-1500 unet channel carries */
#define FRAME_MAX 9208 /* the most any side here uses: MTU 9216 */
/* The frames both sides of a simulation use (side_open), FRAME but in the
 * jumbo fuzz, and what a kept buffer holds there (0: a whole frame), as a
 * jumbo endpoint's one send buffer. */
static uint32_t sim_frame = FRAME, sim_kbuf_max;
#define STEP_NS 20000 /* simulated time per step */

struct pkt {
	struct pkt *next;
	int from; /* the side that sent it */
	uint64_t at; /* delivered from this time on (sim->delay_steps) */
	uint32_t len;
	uint8_t data[];
};

struct side {
	struct sim *sim;
	int idx;
	struct uam_ep *ep;
	struct uam_chan *ch;
	/* A second channel (side_link3): frames from side xidx go to xch,
	 * the rest to ch */
	struct uam_chan *xch;
	int xidx;
	struct pkt *head, *tail; /* frames on their way to this side */
	uint32_t queued;
	bool paused; /* does not poll: frames pile up */
	bool dead;   /* vanished: frames to it are lost */
	bool blocked; /* its transport is full: every send gets -EAGAIN */
	uint32_t tx_used; /* frames sent in this step (sim->tx_budget) */
	uint32_t max_sent; /* the longest frame it sent */
	/* kept buffers (uam_transport.buf_get): out now, given, refused for
	 * the cap (sim->kept_max), and sent through xmit_buf */
	uint32_t kept_out;
	uint64_t kept_gets, kept_refused, kept_tx;
};

/* A kept buffer of the simulated transport: malloc'd per buffer, so the
 * sanitizer sees a read of one after it was given back. */
struct kbuf {
	uint32_t xmits; /* times sent itself: at most once (the contract) */
	uint32_t gen;	/* ep->tx_gen when it was: in the unflushed batch
			 * while that has not moved */
	uint8_t frame[FRAME_MAX];
};

/* What the bulk tests watch of side 0's STORE fragments (or of its
 * frames of another type): the sequence number of the store's first one
 * (base), the offsets from it whose first transmission is lost (drop),
 * and when each offset below SEQLOG was sent first and last. */
#define SEQLOG 8192
struct seqlog {
	uint8_t type; /* 0: UAM_T_STORE */
	uint32_t base;
	const uint32_t *drop;
	int ndrop;
	uint8_t ntx[SEQLOG];
	uint64_t first[SEQLOG], last[SEQLOG];
};

struct sim {
	uint64_t now;
	uint64_t rng;
	uint32_t loss_ppm, dup_ppm, reorder_ppm;
	/* s[2]: a third host, only with side_link3 */
	struct side s[3];
	uint64_t sent, lost;
	/* 0, or: frames take this many steps to arrive; a side sends at most
	 * tx_budget frames per step (more get -EAGAIN, as a full transport),
	 * so the link has a bandwidth and a delay, and a window too small for
	 * their product shows as a slower transfer. */
	uint32_t delay_steps, tx_budget;
	/* 0, or the frames a side takes from its link per step (64 if 0): a
	 * receiver slower than its sender, whose frames queue on the link
	 * (in the real one, the receive ring) behind what came first. */
	uint32_t rx_budget;
	/* kept buffers a side may have out (0: the transport offers none) */
	uint32_t kept_max;
	struct seqlog *seqlog;
	/* frames side 0 sent, kept for the fuzz test (NULL: none kept) */
	struct pkt **corpus;
	uint32_t ncorpus, max_corpus;
	/* STORE and GET_DATA fragments each side sent, by header (compact,
	 * full), and the most data a compact one carried */
	uint64_t cfrags[2], ffrags[2];
	uint32_t cfrag_max;
};

/* A compact fragment (the middle of a store or get: uam_impl.h). */
static bool is_cfrag(const uint8_t *f)
{
	return f[0] == (UAM_C_FORMAT | UAM_T_STORE) || f[0] == (UAM_C_FORMAT | UAM_T_GET_DATA);
}

/* Either compact form: a request or reply, or a middle fragment. */
static bool is_compact_frame(const uint8_t *f)
{
	return f[0] == (UAM_C_FORMAT | UAM_T_REQUEST) || f[0] == (UAM_C_FORMAT | UAM_T_REPLY) ||
	       is_cfrag(f);
}

static uint32_t rget32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A frame's type and sequence number, whichever header it has (at least
 * UAM_C_HDR_LEN bytes). */
static uint8_t frame_type(const uint8_t *f)
{
	return is_compact_frame(f) ? f[UAM_C_OFF_KIND] & ~UAM_C_FORMAT : f[UAM_OFF_TYPE];
}
static uint32_t frame_seq(const uint8_t *f)
{
	return rget32(f + (is_compact_frame(f) ? UAM_C_OFF_SEQ : UAM_OFF_SEQ));
}

static uint32_t dice(struct sim *sim)
{
	sim->rng ^= sim->rng << 13;
	sim->rng ^= sim->rng >> 7;
	sim->rng ^= sim->rng << 17;
	return (uint32_t)(sim->rng % 1000000);
}

static void enqueue(struct side *to, int from, const void *f, uint32_t len, bool reorder)
{
	struct pkt *p = malloc(sizeof(*p) + len);

	assert_non_null(p);
	p->from = from;
	p->len = len;
	p->at = to->sim->now + (uint64_t)to->sim->delay_steps * STEP_NS;
	memcpy(p->data, f, len);
	p->next = NULL;
	if (reorder && to->head && to->head != to->tail) {
		/* overtake the last frame on the link */
		struct pkt *prev = to->head;

		while (prev->next != to->tail)
			prev = prev->next;
		p->next = to->tail;
		prev->next = p;
	} else if (reorder && to->head) {
		p->next = to->head;
		to->head = p;
	} else {
		if (to->tail)
			to->tail->next = p;
		else
			to->head = p;
		to->tail = p;
	}
	to->queued++;
}

static int sim_xmit(void *ctx, void *handle, const void *hdr, uint32_t hlen, const void *data,
		    uint32_t dlen)
{
	struct side *from = ctx;
	struct sim *sim = from->sim;
	/* A channel's handle is its own side, or (side_link3) the side it
	 * leads to */
	struct side *to = handle != from ? handle : &sim->s[1 - from->idx];
	uint8_t frame[1 << 16];
	uint32_t len = hlen + dlen;

	if (from->blocked || (sim->tx_budget && from->tx_used >= sim->tx_budget))
		return -EAGAIN;
	from->tx_used++;
	if (len > from->max_sent)
		from->max_sent = len;
	memcpy(frame, hdr, hlen);
	if (dlen)
		memcpy(frame + hlen, data, dlen);
	sim->sent++;
	if (from->idx > 1) {
		/* the third host's frames are not counted */
	} else if (is_cfrag(frame)) {
		sim->cfrags[from->idx]++;
		if (dlen > sim->cfrag_max)
			sim->cfrag_max = dlen;
	} else if (!is_compact_frame(frame) &&
		   (frame[UAM_OFF_TYPE] == UAM_T_STORE || frame[UAM_OFF_TYPE] == UAM_T_GET_DATA)) {
		sim->ffrags[from->idx]++;
	}
	if (sim->seqlog && from->idx == 0 &&
	    frame_type(frame) == (sim->seqlog->type ? sim->seqlog->type : UAM_T_STORE)) {
		struct seqlog *l = sim->seqlog;
		uint32_t off = frame_seq(frame) - l->base;

		if (off < SEQLOG) {
			if (!l->ntx[off]++)
				l->first[off] = sim->now;
			l->last[off] = sim->now;
			for (int i = 0; i < l->ndrop; i++)
				if (l->drop[i] == off && l->ntx[off] == 1) {
					sim->lost++;
					return 0;
				}
		}
	}
	if (sim->corpus && from->idx == 0 && sim->ncorpus < sim->max_corpus) {
		struct pkt *p = malloc(sizeof(*p) + len);

		assert_non_null(p);
		p->len = len;
		memcpy(p->data, frame, len);
		sim->corpus[sim->ncorpus++] = p;
	}
	if (to->dead || (sim->loss_ppm && dice(sim) < sim->loss_ppm)) {
		sim->lost++;
		return 0;
	}
	enqueue(to, from->idx, frame, len, sim->reorder_ppm && dice(sim) < sim->reorder_ppm);
	if (sim->dup_ppm && dice(sim) < sim->dup_ppm)
		enqueue(to, from->idx, frame, len, false);
	return 0;
}

static uint64_t sim_buf_get(void *ctx, uint8_t **frame)
{
	struct side *s = ctx;
	struct kbuf *kb;

	if (s->kept_out >= s->sim->kept_max) {
		s->kept_refused++;
		return UAM_NO_KBUF;
	}
	kb = calloc(1, sizeof(*kb));
	assert_non_null(kb);
	s->kept_out++;
	s->kept_gets++;
	*frame = kb->frame;
	return (uint64_t)(uintptr_t)kb;
}

static int sim_xmit_buf(void *ctx, void *handle, const void *hdr, uint32_t hlen, uint64_t kbuf,
			uint32_t dlen)
{
	struct side *s = ctx;
	struct kbuf *kb = (struct kbuf *)(uintptr_t)kbuf;
	int err;

	assert_int_equal(kb->xmits, 0);
	assert_true(hlen + dlen <= (sim_kbuf_max ? sim_kbuf_max : sim_frame));
	memcpy(kb->frame, hdr, hlen);
	err = sim_xmit(ctx, handle, kb->frame, hlen + dlen, NULL, 0);
	if (!err) {
		kb->xmits++;
		kb->gen = s->ep->tx_gen;
		s->kept_tx++;
	}
	return err;
}

/* The simulated link sends at once; a flush only ends the batch, as the
 * real transport's does (uam.c). */
static void sim_flush(void *ctx)
{
	((struct side *)ctx)->ep->tx_gen++;
}

static void sim_buf_put(void *ctx, uint64_t kbuf)
{
	struct side *s = ctx;
	struct kbuf *kb = (struct kbuf *)(uintptr_t)kbuf;

	/* never while a descriptor of the unflushed batch names it */
	assert_false(kb->xmits && kb->gen == s->ep->tx_gen);
	assert_true(s->kept_out > 0);
	s->kept_out--;
	free(kb);
}

static int32_t seq_diff_test(uint32_t a, uint32_t b) { return (int32_t)(a - b); }

/* Whether the frame with seq is held with its data already placed. */
static bool rxs_placed(const struct uam_chan *ch, uint32_t seq)
{
	const struct uam_rx_slot *r = &ch->rx[seq & ch->ep->slot_mask];

	return r->present && r->placed;
}

static uint64_t sim_now(void *ctx)
{
	return ((struct side *)ctx)->sim->now;
}

/* Sequence numbers of new channels start here (the protocol's test hook;
 * 0: the default). */
static uint32_t test_isn;

static void side_open(struct sim *sim, int i, const struct uam_ep_opts *o)
{
	struct side *s = &sim->s[i];
	struct uam_transport tr = { .xmit = sim_xmit,
				    .now_ns = sim_now,
				    .flush = sim_flush,
				    .buf_get = sim_buf_get,
				    .xmit_buf = sim_xmit_buf,
				    .buf_put = sim_buf_put,
				    .ctx = s,
				    .max_frame = sim_frame,
				    .kbuf_max = sim_kbuf_max };

	s->sim = sim;
	s->idx = i;
	s->ep = calloc(1, sizeof(*s->ep));
	assert_non_null(s->ep);
	assert_int_equal(uamp_ep_init(s->ep, o, &tr), 0);
	if (test_isn)
		s->ep->isn = test_isn;
	s->ch = uamp_chan_new(s->ep, s);
	assert_non_null(s->ch);
}

/* Lose every frame on its way to s. */
static void side_drain(struct side *s)
{
	while (s->head) {
		struct pkt *p = s->head;

		s->head = p->next;
		free(p);
	}
	s->tail = NULL;
	s->queued = 0;
}

static void side_close(struct side *s)
{
	side_drain(s);
	if (s->ep) {
		uamp_ep_fini(s->ep);
		free(s->ep);
		/* every kept buffer given back, sent or not */
		assert_int_equal(s->kept_out, 0);
	}
	s->ep = NULL;
	s->ch = NULL;
	s->xch = NULL;
}

static struct sim *sim_new(uint64_t seed, uint32_t loss, uint32_t dup, uint32_t reorder,
			   const struct uam_ep_opts *o)
{
	struct sim *sim = calloc(1, sizeof(*sim));

	assert_non_null(sim);
	sim->rng = seed;
	sim->now = 1000000000ull;
	sim->loss_ppm = loss;
	sim->dup_ppm = dup;
	sim->reorder_ppm = reorder;
	/* fewer than a window: a burst of medium messages takes both paths,
	 * the kept buffer and the slot copy */
	sim->kept_max = 24;
	side_open(sim, 0, o);
	side_open(sim, 1, o);
	return sim;
}

static void sim_free(struct sim *sim)
{
	side_close(&sim->s[0]);
	side_close(&sim->s[1]);
	side_close(&sim->s[2]);
	free(sim);
}

/* A third host: side 2, with an endpoint of its own and a channel to side
 * 1, which gets a second channel (s[1].xch) for it.  What the XDP program
 * guarantees holds here too: side 1 takes its frames only on that
 * channel. */
static void side_link3(struct sim *sim, const struct uam_ep_opts *o)
{
	struct side *s = &sim->s[2];

	side_open(sim, 2, o);
	uamp_chan_free(s->ch); /* side_open's channel leads nowhere */
	s->ch = uamp_chan_new(s->ep, &sim->s[1]);
	assert_non_null(s->ch);
	sim->s[1].xch = uamp_chan_new(sim->s[1].ep, s);
	assert_non_null(sim->s[1].xch);
	sim->s[1].xidx = 2;
}

/* One step: each polling side takes what reached it, then runs timers. */
static void step(struct sim *sim)
{
	for (int i = 0; i < 3; i++) {
		struct side *s = &sim->s[i];

		s->tx_used = 0;
		if (!s->ep || s->paused)
			continue;
		for (uint32_t n = 0; n < (sim->rx_budget ? sim->rx_budget : 64) && s->head &&
				     s->head->at <= sim->now;
		     n++) {
			struct pkt *p = s->head;

			s->head = p->next;
			if (!s->head)
				s->tail = NULL;
			s->queued--;
			/* s->ch is looked up for each frame (as uam_poll
			 * does): a handler may have closed it */
			if (s->xch && p->from == s->xidx) {
				if (!s->dead)
					uamp_input(s->xch, p->data, p->len);
			} else if (!s->dead && s->ch) {
				uamp_input(s->ch, p->data, p->len);
			}
			free(p);
		}
		/* A vanished peer sends nothing more either (not even an
		 * acknowledgement it still owed). */
		if (!s->dead)
			uamp_tick(s->ep);
	}
	sim->now += STEP_NS;
}

/* ---- Forged frames: what a hostile or broken peer could send ---------- */

static void wput16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void wput32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}
static void wput64(uint8_t *p, uint64_t v)
{
	wput32(p, (uint32_t)(v >> 32));
	wput32(p + 4, (uint32_t)v);
}

/* A header as side `from` would send it (its session, its ack and credit)
 * with sequence number seq. */
static void forge_hdr(struct sim *sim, int from, uint8_t *f, uint8_t type, uint8_t flags,
		      uint8_t nargs, uint16_t handler, uint32_t seq, uint32_t token, uint32_t aux,
		      uint32_t dlen)
{
	struct uam_chan *ch = sim->s[from].ch;

	memset(f, 0, UAM_HDR_LEN);
	f[UAM_OFF_VERSION] = UAM_WIRE_VERSION;
	f[UAM_OFF_TYPE] = type;
	f[UAM_OFF_FLAGS] = flags;
	f[UAM_OFF_NARGS] = nargs;
	wput16(f + UAM_OFF_HANDLER, handler);
	wput16(f + UAM_OFF_CREDIT, (uint16_t)sim->s[from].ep->o.window);
	wput32(f + UAM_OFF_SESSION, ch->session);
	wput32(f + UAM_OFF_SEQ, seq);
	wput32(f + UAM_OFF_ACK, ch->rcv_next);
	wput32(f + UAM_OFF_TOKEN, token);
	wput32(f + UAM_OFF_AUX, aux);
	wput32(f + UAM_OFF_DLEN, dlen);
}

/* The sequence number for a frame forged in the name of an idle side: its
 * own next frames then follow it, so the stream stays in order. */
static uint32_t forge_seq(struct sim *sim, int from)
{
	struct uam_chan *ch = sim->s[from].ch;
	uint32_t seq = ch->snd_next;

	assert_int_equal(ch->snd_una, ch->snd_next);
	assert_null(ch->head);
	ch->snd_una = ch->snd_next = seq + 1;
	return seq;
}

/* Feed a forged frame from a buffer of exactly len bytes, so that the
 * sanitizer sees any read beyond it. */
static void feed(struct sim *sim, int to, const uint8_t *f, uint32_t len)
{
	uint8_t *copy = malloc(len ? len : 1);

	assert_non_null(copy);
	memcpy(copy, f, len);
	uamp_input(sim->s[to].ch, copy, len);
	free(copy);
}

/* ---- Handlers ----------------------------------------------------------- */

enum { H_ECHO = 1, H_ECHO_REPLY = 2, H_STORED = 3 };

struct counts {
	uint64_t next_req, next_rep; /* what must come next, in order */
	uint64_t reqs, reps, stores;
	uint64_t bad;
	struct uam_msg last_store;
	int reply_twice, reply_outside;
};

static void h_echo(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	struct counts *c = ctx;
	uint64_t r[2] = { m->args[0], m->args[0] * 3 + 1 };

	(void)ep;
	if (m->kind != UAM_MSG_REQUEST || m->nargs != 2 || m->args[0] != c->next_req ||
	    m->args[1] != ~m->args[0])
		c->bad++;
	c->next_req = m->args[0] + 1;
	c->reqs++;
	if (uam_reply(m, H_ECHO_REPLY, r, 2))
		c->bad++;
	c->reply_twice = uam_reply(m, H_ECHO_REPLY, r, 2);
}

static void h_echo_reply(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	struct counts *c = ctx;

	(void)ep;
	if (m->kind != UAM_MSG_REPLY || m->nargs != 2 || m->args[0] != c->next_rep ||
	    m->args[1] != m->args[0] * 3 + 1)
		c->bad++;
	c->next_rep = m->args[0] + 1;
	c->reps++;
	c->reply_outside = uam_reply(m, H_ECHO_REPLY, NULL, 0);
}

static void h_stored(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	struct counts *c = ctx;

	(void)ep;
	c->stores++;
	c->last_store = *m;
}

static void handlers(struct sim *sim, struct counts *c)
{
	for (int i = 0; i < 2; i++) {
		uam_ep__set_handler(sim->s[i].ep, H_ECHO, h_echo, c);
		uam_ep__set_handler(sim->s[i].ep, H_ECHO_REPLY, h_echo_reply, c);
		uam_ep__set_handler(sim->s[i].ep, H_STORED, h_stored, c);
	}
}

/* ---- Cases -------------------------------------------------------------- */

/* n requests from side 0, as fast as the queue takes them; every one must
 * be handled once and in order, every reply received once and in order. */
static void run_requests(struct sim *sim, uint64_t n)
{
	struct counts c = { 0 };
	uint64_t sent = 0;
	long steps;

	handlers(sim, &c);
	for (steps = 0; steps < 5000000 && c.reps < n; steps++) {
		while (sent < n) {
			uint64_t a[2] = { sent, ~sent };
			int r = uam_request(sim->s[0].ch, H_ECHO, a, 2);

			if (r == -EAGAIN)
				break;
			assert_int_equal(r, (int)sent);
			sent++;
		}
		step(sim);
	}
	assert_int_equal(uam_chan__error(sim->s[0].ch), 0);
	assert_int_equal(uam_chan__error(sim->s[1].ch), 0);
	assert_int_equal(c.bad, 0);
	assert_int_equal(c.reqs, n);
	assert_int_equal(c.reps, n);
	assert_int_equal(c.reply_twice, -EPERM);
	assert_int_equal(c.reply_outside, -EPERM);
	/* a few more steps: nothing more may arrive */
	for (int i = 0; i < 2000; i++)
		step(sim);
	assert_int_equal(c.reqs, n);
	assert_int_equal(c.reps, n);
}

static void test_requests_clean(void **state)
{
	struct sim *sim = sim_new(1, 0, 0, 0, NULL);
	struct uam_stats st;

	(void)state;
	run_requests(sim, 20000);
	uam_ep__stats(sim->s[0].ep, &st);
	assert_int_equal(st.retransmits, 0);
	assert_int_equal(st.replies, 20000);
	uam_ep__stats(sim->s[1].ep, &st);
	assert_int_equal(st.requests, 20000);
	assert_int_equal(st.dup_dropped, 0);
	sim_free(sim);
}

static void test_requests_lossy(void **state)
{
	struct sim *sim = sim_new(2, 100000, 0, 0, NULL);
	struct uam_stats a, b;

	(void)state;
	run_requests(sim, 20000);
	uam_ep__stats(sim->s[0].ep, &a);
	uam_ep__stats(sim->s[1].ep, &b);
	print_message("loss 10%%: lost %llu of %llu, retransmits %llu+%llu, timeouts %llu+%llu\n",
		      (unsigned long long)sim->lost, (unsigned long long)sim->sent,
		      (unsigned long long)a.retransmits, (unsigned long long)b.retransmits,
		      (unsigned long long)a.timeouts, (unsigned long long)b.timeouts);
	assert_true(sim->lost > 1000);
	assert_true(a.retransmits > 0 && b.retransmits > 0);
	assert_true(a.out_of_order + b.out_of_order > 0);
	sim_free(sim);
}

static void test_requests_dup_reorder(void **state)
{
	struct sim *sim = sim_new(3, 50000, 50000, 50000, NULL);
	struct uam_stats a, b;

	(void)state;
	run_requests(sim, 20000);
	uam_ep__stats(sim->s[0].ep, &a);
	uam_ep__stats(sim->s[1].ep, &b);
	assert_true(a.dup_dropped + b.dup_dropped > 100);
	assert_true(a.out_of_order + b.out_of_order > 100);
	sim_free(sim);
}

/* The test hooks on UAM's own send path, over a clean link. */
static void test_inject_hooks(void **state)
{
	UNET_OPTS_INIT(uam_ep_opts, o);
	struct sim *sim;
	struct uam_stats a, b;

	(void)state;
	o.inject.dup_ppm = 50000;
	o.inject.reorder_ppm = 50000;
	o.inject.seed = 42;
	sim = sim_new(4, 0, 0, 0, &o);
	run_requests(sim, 10000);
	uam_ep__stats(sim->s[0].ep, &a);
	uam_ep__stats(sim->s[1].ep, &b);
	assert_true(a.dup_dropped + b.dup_dropped > 100);
	assert_true(a.out_of_order + b.out_of_order > 100);
	sim_free(sim);
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

struct opdone {
	int n, status, id;
};

static void op_cb(struct uam_ep *ep, int op, int status, void *ctx)
{
	struct opdone *d = ctx;

	(void)ep;
	d->n++;
	d->status = status;
	d->id = op;
}

static void run_until(struct sim *sim, const int *flag, long max_steps)
{
	for (long i = 0; i < max_steps && !*flag; i++)
		step(sim);
}

/*
 * The peer's ACKs say how large a frame it takes (aux): our fragments
 * start at UAM_BASE_FRAME and grow to that, never past our own max_frame
 * nor below UAM_MIN_FRAME, whatever the peer says (4000-byte frames
 * here: what a hostile 65535 or 2^32 - 1 must not raise, and a 1 must not
 * shrink below 256).  Every store arrives intact; a medium message past
 * what the peer said is refused.
 */
static void test_frame_size_said(void **state)
{
	static const struct {
		uint32_t said, want;
	} cases[] = { { 3000, 3000 }, { 65535, 4000 }, { UINT32_MAX, 4000 }, { 1, UAM_MIN_FRAME } };
	size_t n = 30000;
	uint8_t *src = malloc(n), *dst = malloc(n);

	(void)state;
	assert_non_null(src);
	assert_non_null(dst);
	sim_frame = 4000;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct sim *sim = sim_new(90 + k, 0, 0, 0, NULL);
		struct opdone d = { 0 };

		sim->s[1].ep->say_frame = cases[k].said;
		assert_int_equal(sim->s[0].ch->frame, UAM_BASE_FRAME);
		assert_false(sim->s[0].ch->frame_said);
		assert_int_equal(uam_region__register(sim->s[1].ep, 5, dst, n, UAM_REGION_WRITE), 0);
		for (int r = 0; r < 3; r++) {
			fill(src, n, (uint32_t)(k * 10 + (size_t)r));
			memset(dst, 0, n);
			d.n = 0;
			assert_true(uam_store(sim->s[0].ch, src, n, 5, 0, 0, NULL, 0, op_cb, &d) > 0);
			run_until(sim, &d.n, 100000);
			assert_int_equal(d.n, 1);
			assert_int_equal(d.status, 0);
			assert_memory_equal(dst, src, n);
		}
		assert_true(sim->s[0].ch->frame_said);
		assert_int_equal(sim->s[0].ch->frame, cases[k].want);
		assert_true(sim->s[0].max_sent <= (cases[k].want > UAM_BASE_FRAME ? cases[k].want
										  : UAM_BASE_FRAME));
		if (cases[k].want > UAM_BASE_FRAME)
			assert_int_equal(sim->s[0].max_sent, cases[k].want);
		assert_int_equal(uam_chan__medium_max_args(sim->s[0].ch, 0),
				 cases[k].want - UAM_C_HDR_LEN);
		assert_int_equal(uam_request_medium(sim->s[0].ch, 1, NULL, 0, src,
						    cases[k].want - UAM_C_HDR_LEN + 1),
				 -EMSGSIZE);
		sim_free(sim);
	}
	sim_frame = FRAME;
	free(src);
	free(dst);
}

static void test_store_and_get_lossy(void **state)
{
	size_t n = 1 << 20;
	uint8_t *src = malloc(n), *dst = calloc(1, n + 100), *back = calloc(1, n);
	struct sim *sim = sim_new(5, 50000, 20000, 20000, NULL);
	struct counts c = { 0 };
	struct opdone d = { 0 }, g = { 0 };
	uint64_t args[3] = { 7, 8, 9 };
	int id;

	(void)state;
	assert_non_null(src);
	assert_non_null(dst);
	assert_non_null(back);
	fill(src, n, 77);
	handlers(sim, &c);
	assert_int_equal(uam_region__register(sim->s[1].ep, 5, dst, n + 100,
					      UAM_REGION_WRITE | UAM_REGION_READ), 0);
	assert_int_equal(uam_region__register(sim->s[1].ep, 5, dst, 1, UAM_REGION_READ), -EEXIST);
	assert_int_equal(uam_region__register(sim->s[0].ep, 9, back, n, UAM_REGION_WRITE), 0);

	id = uam_store(sim->s[0].ch, src, n, 5, 100, H_STORED, args, 3, op_cb, &d);
	assert_true(id > 0);
	run_until(sim, &d.n, 2000000);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.id, id);
	assert_int_equal(d.status, 0);
	assert_int_equal(c.stores, 1);
	assert_int_equal(c.last_store.kind, UAM_MSG_STORE);
	assert_int_equal(c.last_store.region, 5);
	assert_int_equal(c.last_store.offset, 100);
	assert_int_equal(c.last_store.len, n);
	assert_int_equal(c.last_store.nargs, 3);
	assert_int_equal(c.last_store.args[2], 9);
	assert_memory_equal(dst + 100, src, n);

	id = uam_get(sim->s[0].ch, 5, 100, n, 9, 0, op_cb, &g);
	assert_true(id > 0);
	run_until(sim, &g.n, 2000000);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.status, 0);
	assert_memory_equal(back, src, n);
	/* the stores' and the get's middle fragments went compact */
	assert_true(sim->cfrags[0] >= 700 && sim->cfrags[1] >= 700);
	sim_free(sim);
	free(src);
	free(dst);
	free(back);
}

static void test_region_errors(void **state)
{
	uint8_t buf[4096] = { 0 }, mine[4096];
	struct sim *sim = sim_new(6, 0, 0, 0, NULL);
	struct counts c = { 0 };
	struct opdone d = { 0 };
	struct uam_stats st;

	(void)state;
	handlers(sim, &c);
	assert_int_equal(uam_region__register(sim->s[1].ep, 1, buf, sizeof(buf), UAM_REGION_READ), 0);
	assert_int_equal(uam_region__register(sim->s[0].ep, 2, mine, sizeof(mine), UAM_REGION_WRITE), 0);
	/* unknown region */
	assert_true(uam_store(sim->s[0].ch, mine, 10, 99, 0, H_STORED, NULL, 0, op_cb, &d) > 0);
	run_until(sim, &d.n, 10000);
	assert_int_equal(d.status, -EFAULT);
	/* read-only region */
	d.n = 0;
	assert_true(uam_store(sim->s[0].ch, mine, 10, 1, 0, H_STORED, NULL, 0, op_cb, &d) > 0);
	run_until(sim, &d.n, 10000);
	assert_int_equal(d.status, -EFAULT);
	/* beyond its end, spanning fragments */
	d.n = 0;
	assert_int_equal(uam_region__unregister(sim->s[1].ep, 1), 0);
	assert_int_equal(uam_region__register(sim->s[1].ep, 1, buf, sizeof(buf), UAM_REGION_WRITE), 0);
	assert_true(uam_store(sim->s[0].ch, mine, 4000, 1, 1000, H_STORED, NULL, 0, op_cb, &d) > 0);
	run_until(sim, &d.n, 10000);
	assert_int_equal(d.status, -EFAULT);
	assert_int_equal(c.stores, 0);
	/* get from a region that is not readable */
	d.n = 0;
	assert_true(uam_get(sim->s[0].ch, 1, 0, 100, 2, 0, op_cb, &d) > 0);
	run_until(sim, &d.n, 10000);
	assert_int_equal(d.status, -EFAULT);
	/* our own region is checked before anything is sent */
	assert_int_equal(uam_get(sim->s[0].ch, 1, 0, 100, 3, 0, op_cb, &d), -EINVAL);
	assert_int_equal(uam_get(sim->s[0].ch, 1, 0, 5000, 2, 0, op_cb, &d), -EINVAL);
	uam_ep__stats(sim->s[1].ep, &st);
	assert_int_equal(st.region_errors, 4);
	/* the channel still works */
	d.n = 0;
	assert_true(uam_store(sim->s[0].ch, mine, 100, 1, 0, H_STORED, NULL, 0, op_cb, &d) > 0);
	run_until(sim, &d.n, 10000);
	assert_int_equal(d.status, 0);
	assert_int_equal(c.stores, 1);
	sim_free(sim);
}

/*
 * Issue 23 (1): a region bound to one channel (uam_region__register_opts)
 * is that peer's alone.  A third host, with a channel of its own to the
 * same endpoint, stores into a writable region bound to another peer and
 * gets from a readable one: both refused as if no region had the id
 * (-EFAULT), counted region_errors on its channel, the regions untouched
 * and nothing of ours read.  The bound peer's store and get work; a region
 * for every channel still serves the third host; our own get on another
 * channel cannot land in a bound region; a region bound to a channel that
 * closed is nobody's.
 */
static void test_region_bound_to_chan(void **state)
{
	static uint8_t wr[8192], rd[8192], src[8192], back[8192], open_r[64];
	struct sim *sim = sim_new(23, 0, 0, 0, NULL);
	UNET_OPTS_INIT(uam_region_opts, ro);
	struct uam_ep *victim = sim->s[1].ep;
	struct counts c = { 0 };
	struct opdone d = { 0 };
	struct uam_stats st;

	(void)state;
	handlers(sim, &c);
	side_link3(sim, NULL);
	uam_ep__set_handler(sim->s[2].ep, H_STORED, h_stored, &c);
	memset(wr, 0xAA, sizeof(wr));
	fill(rd, sizeof(rd), 1);
	fill(src, sizeof(src), 2);
	memset(back, 0, sizeof(back));
	ro.chan = sim->s[1].ch;
	assert_int_equal(uam_region__register_opts(victim, 48, wr, sizeof(wr), UAM_REGION_WRITE, &ro), 0);
	assert_int_equal(uam_region__register_opts(victim, 0, rd, sizeof(rd), UAM_REGION_READ, &ro), 0);
	assert_int_equal(uam_region__register(victim, 7, open_r, sizeof(open_r), UAM_REGION_WRITE), 0);
	assert_int_equal(uam_region__register(sim->s[2].ep, 5, back, sizeof(back), UAM_REGION_WRITE), 0);

	/* the third host stores into the bound region: refused, untouched */
	assert_true(uam_store(sim->s[2].ch, src, sizeof(src), 48, 0, H_STORED, NULL, 0, op_cb, &d) > 0);
	run_until(sim, &d.n, 10000);
	assert_int_equal(d.status, -EFAULT);
	assert_int_equal(c.stores, 0);
	for (size_t i = 0; i < sizeof(wr); i++)
		assert_int_equal(wr[i], 0xAA);
	/* and gets from the bound region: refused, nothing of it read */
	d.n = 0;
	assert_true(uam_get(sim->s[2].ch, 0, 0, sizeof(rd), 5, 0, op_cb, &d) > 0);
	run_until(sim, &d.n, 10000);
	assert_int_equal(d.status, -EFAULT);
	for (size_t i = 0; i < sizeof(back); i++)
		assert_int_equal(back[i], 0);
	assert_int_equal(uam_chan__stats(sim->s[1].xch, &st), 0);
	assert_int_equal(st.region_errors, 2);
	assert_int_equal(uam_chan__stats(sim->s[1].ch, &st), 0);
	assert_int_equal(st.region_errors, 0);

	/* the bound peer reaches both */
	d.n = 0;
	assert_true(uam_store(sim->s[0].ch, src, sizeof(src), 48, 0, H_STORED, NULL, 0, op_cb, &d) > 0);
	run_until(sim, &d.n, 10000);
	assert_int_equal(d.status, 0);
	assert_memory_equal(wr, src, sizeof(src));
	assert_int_equal(uam_region__register(sim->s[0].ep, 5, back, sizeof(back), UAM_REGION_WRITE), 0);
	d.n = 0;
	assert_true(uam_get(sim->s[0].ch, 0, 0, sizeof(rd), 5, 0, op_cb, &d) > 0);
	run_until(sim, &d.n, 10000);
	assert_int_equal(d.status, 0);
	assert_memory_equal(back, rd, sizeof(rd));
	/* a region for every channel serves the third host */
	d.n = 0;
	assert_true(uam_store(sim->s[2].ch, src, sizeof(open_r), 7, 0, H_STORED, NULL, 0, op_cb, &d) > 0);
	run_until(sim, &d.n, 10000);
	assert_int_equal(d.status, 0);
	assert_memory_equal(open_r, src, sizeof(open_r));
	assert_int_equal(c.stores, 2);

	/* our get on another channel may not land in a bound region */
	assert_int_equal(uam_get(sim->s[1].xch, 5, 0, 16, 48, 0, op_cb, &d), -EINVAL);
	/* a channel of another endpoint cannot be bound */
	ro.chan = sim->s[2].ch;
	assert_int_equal(uam_region__register_opts(victim, 9, wr, 16, UAM_REGION_WRITE, &ro), -EINVAL);
	/* a region bound to a channel that closed is nobody's, even for a
	 * channel allocated where it was */
	ro.chan = sim->s[1].xch;
	assert_int_equal(uam_region__register_opts(victim, 9, wr, 16, UAM_REGION_WRITE, &ro), 0);
	uamp_chan_free(sim->s[1].xch);
	sim->s[1].xch = NULL;
	assert_int_equal(uam_region__unregister(victim, 48), 0);
	ro.chan = NULL;
	assert_int_equal(uam_region__register_opts(victim, 48, wr, sizeof(wr), UAM_REGION_WRITE, &ro), 0);
	d.n = 0;
	assert_true(uam_store(sim->s[0].ch, src, 16, 9, 0, H_STORED, NULL, 0, op_cb, &d) > 0);
	run_until(sim, &d.n, 10000);
	assert_int_equal(d.status, -EFAULT);
	assert_int_equal(uam_region__unregister(victim, 9), 0);
	sim_free(sim);
}

/* The victim's request handler for test_peer_queue_bound: a 1000-byte
 * medium reply to every request. */
static void h_flood(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	static const uint8_t pay[1000];
	uint64_t *n = ctx;

	(void)ep;
	(*n)++;
	assert_int_equal(uam_reply_medium(m, H_ECHO_REPLY, NULL, 0, pay, sizeof(pay)), 0);
}

static uint32_t queued_items(const struct uam_chan *ch)
{
	uint32_t n = 0;

	for (const struct uam_item *it = ch->head; it; it = it->next)
		n++;
	return n;
}

/*
 * Issue 23 (10): a peer that sends requests and acknowledges nothing.
 * Every reply past the window it gave us queues; the queue (replies,
 * DONEs, GET_DATA: everything queued because of the peer's frames) is
 * bounded per channel (max_peer_queued, default 2 x window): past it the
 * peer's requests are not taken (held or refused unacknowledged, so its
 * window shuts), and the channel lives.  Once it acknowledges, the
 * queue drains and every request it was promised is delivered, once.
 */
static void test_peer_queue_bound(void **state)
{
	struct sim *sim = sim_new(10, 0, 0, 0, NULL);
	struct side *v = &sim->s[1];
	uint32_t seq = sim->s[0].ch->snd_next, maxq = 0, bound = 2 * v->ep->o.window;
	uint64_t handled = 0;
	uint8_t f[UAM_HDR_LEN + 16];
	struct uam_stats st;

	(void)state;
	sim->s[0].paused = true; /* it takes nothing, acknowledges nothing */
	assert_int_equal(uam_ep__set_handler(v->ep, H_ECHO, h_flood, &handled), 0);
	for (uint32_t i = 0; i < 20000; i++) {
		/* what the victim takes next, and a few frames past it */
		forge_hdr(sim, 0, f, UAM_T_REQUEST, 0, 2, H_ECHO, seq + i % 8, i, 0, 0);
		wput32(f + UAM_OFF_ACK, 0); /* nothing of the victim's */
		wput64(f + UAM_OFF_SACK, 0);
		wput64(f + UAM_HDR_LEN, i);
		wput64(f + UAM_HDR_LEN + 8, 0);
		feed(sim, 1, f, sizeof(f));
		seq = v->ch->rcv_next;
		if (queued_items(v->ch) > maxq)
			maxq = queued_items(v->ch);
		if (i % 16 == 15)
			step(sim); /* 25 ms in all: under the victim's timeout */
	}
	assert_int_equal(uam_chan__error(v->ch), 0);
	uam_chan__stats(v->ch, &st);
	print_message("peer queue: at most %u items queued (bound %u), %llu requests taken of "
		      "20000 sent, %llu held back\n",
		      maxq, bound, (unsigned long long)st.requests,
		      (unsigned long long)st.peer_queue_full);
	assert_true(maxq <= bound);
	assert_true(st.peer_queue_full > 0);
	/* what the victim holds: its queue, its item pools, its window */
	assert_true(v->ep->nitems + v->ep->nmitems <= 2 * 256);

	/* The peer acknowledges: the queue drains, what was held is taken. */
	for (int k = 0; k < 2000 && (v->ch->head || v->ch->rx_held); k++) {
		forge_hdr(sim, 0, f, UAM_T_ACK, 0, 0, 0, 0, 0, 0, 0);
		wput32(f + UAM_OFF_ACK, v->ch->snd_next);
		wput64(f + UAM_OFF_SACK, 0);
		feed(sim, 1, f, UAM_HDR_LEN);
		step(sim);
	}
	assert_null(v->ch->head);
	assert_int_equal(v->ch->rx_held, 0);
	assert_int_equal(uam_chan__error(v->ch), 0);
	uam_chan__stats(v->ch, &st);
	assert_int_equal(handled, st.requests);
	assert_int_equal(st.requests, v->ch->rcv_next - sim->s[0].ch->snd_next);
	sim_free(sim);
}

/*
 * Issue 23 (5), UAM's half: uam_chan__pause withholds credit.  A paused
 * receiver runs no handler and acknowledges none of the requests; the
 * sender's window shuts, its queue fills to max_queued and its calls get
 * -EAGAIN; what the receiver holds is at most a window of frames.  Paused
 * for 3 s, past the 2 s timeout: the sender's probes are answered (ACKs
 * of nothing new), so the paused peer is alive, not timed out.  Resumed,
 * every request is delivered once, in order, with no channel failure.
 */
static void test_chan_pause(void **state)
{
	UNET_OPTS_INIT(uam_ep_opts, o);
	struct sim *sim;
	struct counts c = { 0 };
	uint64_t sent = 0;
	uint32_t maxheld = 0;
	int again = 0;

	(void)state;
	o.max_queued = 32;
	sim = sim_new(12, 0, 0, 0, &o);
	handlers(sim, &c);
	/* a round trip first: each side knows the other's session */
	assert_int_equal(uam_request(sim->s[0].ch, H_ECHO, (uint64_t[]){ 0, ~0ull }, 2), 0);
	for (int i = 0; i < 100; i++)
		step(sim);
	assert_int_equal(c.reps, 1);
	sent = 1;
	assert_int_equal(uam_chan__pause(sim->s[1].ch), 0);
	for (int step_i = 0; step_i < 150000; step_i++) { /* 3 s */
		while (sent < 100000) {
			uint64_t a[2] = { sent, ~sent };
			int r = uam_request(sim->s[0].ch, H_ECHO, a, 2);

			if (r == -EAGAIN) {
				again++;
				break;
			}
			if (r < 0)
				fail_msg("request %llu at step %d: %d", (unsigned long long)sent, step_i, r);
			sent++;
		}
		step(sim);
		if (sim->s[1].ch->rx_held > maxheld)
			maxheld = sim->s[1].ch->rx_held;
	}
	print_message("paused: %llu requests accepted by the sender, %u held at most, %llu "
		      "taken\n",
		      (unsigned long long)sent, maxheld, (unsigned long long)c.reqs);
	assert_int_equal(c.reqs, 1);
	assert_true(again > 0);
	assert_true(sent <= 1 + 64 + 32); /* the window and the sender's queue */
	assert_true(maxheld <= 64);
	assert_int_equal(uam_chan__error(sim->s[0].ch), 0);
	assert_int_equal(uam_chan__resume(sim->s[1].ch), 0);
	for (int step_i = 0; step_i < 20000 && c.reps < sent; step_i++)
		step(sim);
	assert_int_equal(c.bad, 0);
	assert_int_equal(c.reqs, sent);
	assert_int_equal(c.reps, sent);
	assert_int_equal(uam_chan__error(sim->s[0].ch), 0);
	assert_int_equal(uam_chan__error(sim->s[1].ch), 0);
	assert_int_equal(uam_chan__pause(NULL), -EINVAL);
	sim_free(sim);
}

/* A receiver that stops polling: the sender runs out of credit, queues up
 * to max_queued, then gets -EAGAIN; nothing is lost when it comes back. */
static void test_credit_stall(void **state)
{
	UNET_OPTS_INIT(uam_ep_opts, o);
	struct sim *sim;
	struct counts c = { 0 };
	struct uam_stats st;
	uint64_t sent = 0;
	int r;

	(void)state;
	o.window = 16;
	o.max_queued = 100;
	sim = sim_new(7, 0, 0, 0, &o);
	handlers(sim, &c);
	/* one round trip first: until then the sender assumes the minimum
	 * credit, not the peer's window */
	{
		uint64_t a[2] = { 0, ~0ull };

		assert_int_equal(uam_request(sim->s[0].ch, H_ECHO, a, 2), 0);
		for (int i = 0; i < 100; i++)
			step(sim);
		assert_int_equal(c.reps, 1);
		sent = 1;
	}
	sim->s[1].paused = true;
	for (;;) {
		uint64_t a[2] = { sent, ~sent };

		r = uam_request(sim->s[0].ch, H_ECHO, a, 2);
		if (r < 0)
			break;
		sent++;
	}
	assert_int_equal(r, -EAGAIN);
	assert_int_equal(sent, 1 + 16 + 100);
	/* half a second of not polling: the sender only probes */
	for (int i = 0; i < 25000; i++)
		step(sim);
	assert_int_equal(uam_chan__error(sim->s[0].ch), 0);
	/* the window, then a probe (the oldest frame) per
	 * (backed-off) expiry: the receive queue fills slowly */
	print_message("frames waiting at the paused receiver: %u\n", sim->s[1].queued);
	assert_true(sim->s[1].queued >= 16 && sim->s[1].queued < 2 * 16 + 20);
	uam_ep__stats(sim->s[0].ep, &st);
	assert_true(st.credit_stalls >= 1);
	assert_true(st.timeouts >= 1);
	sim->s[1].paused = false;
	for (int i = 0; i < 100000 && c.reps < sent; i++)
		step(sim);
	assert_int_equal(c.reqs, sent);
	assert_int_equal(c.reps, sent);
	assert_int_equal(c.bad, 0);
	sim_free(sim);
}

/* A peer that vanishes: everything pending fails with -ETIMEDOUT within
 * timeout_ms (plus one step), and so does every new call. */
static void test_peer_dies(void **state)
{
	UNET_OPTS_INIT(uam_ep_opts, o);
	static uint8_t big[1 << 20];
	struct sim *sim;
	struct opdone d = { 0 };
	uint64_t t0, a[1] = { 0 };
	struct counts c = { 0 };

	(void)state;
	o.timeout_ms = 500;
	sim = sim_new(8, 0, 0, 0, &o);
	handlers(sim, &c);
	assert_true(uam_store(sim->s[0].ch, big, sizeof(big), 1, 0, H_STORED, NULL, 0, op_cb, &d) > 0);
	for (int i = 0; i < 10; i++)
		step(sim);
	sim->s[1].dead = true;
	t0 = sim->now;
	run_until(sim, &d.n, 1000000);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.status, -ETIMEDOUT);
	assert_true(sim->now - t0 <= 500 * 1000000ull + 2 * STEP_NS);
	assert_int_equal(uam_chan__error(sim->s[0].ch), -ETIMEDOUT);
	assert_int_equal(uam_request(sim->s[0].ch, H_ECHO, a, 1), -ETIMEDOUT);
	assert_int_equal(uam_store(sim->s[0].ch, big, 1, 1, 0, 0, NULL, 0, NULL, NULL), -ETIMEDOUT);
	sim_free(sim);
}

/* A peer that restarts (new session): -ECONNRESET. */
static void test_peer_restarts(void **state)
{
	struct sim *sim = sim_new(9, 0, 0, 0, NULL);
	struct counts c = { 0 };
	uint64_t a[2] = { 0, ~0ull };

	(void)state;
	handlers(sim, &c);
	assert_int_equal(uam_request(sim->s[0].ch, H_ECHO, a, 2), 0);
	for (int i = 0; i < 100; i++)
		step(sim);
	assert_int_equal(c.reps, 1);
	side_close(&sim->s[1]);
	sim->now += 1000; /* a different session */
	side_open(sim, 1, NULL);
	handlers(sim, &c);
	c.next_req = 0;
	assert_int_equal(uam_request(sim->s[1].ch, H_ECHO, a, 2), 0);
	for (int i = 0; i < 100; i++)
		step(sim);
	assert_int_equal(uam_chan__error(sim->s[0].ch), -ECONNRESET);
	assert_int_equal(uam_request(sim->s[0].ch, H_ECHO, a, 2), -ECONNRESET);
	sim_free(sim);
}

/* Round trip capture (the first half of uam_call) and late replies. */
static void test_call_capture(void **state)
{
	struct sim *sim = sim_new(10, 0, 0, 0, NULL);
	struct counts c = { 0 };
	struct uam_msg reply;
	struct uam_stats st;
	uint64_t a[2] = { 0, ~0ull };

	(void)state;
	handlers(sim, &c);
	assert_int_equal(uamp_call_start(sim->s[0].ch, H_ECHO, a, 2, &reply), 0);
	for (int i = 0; i < 100 && !sim->s[0].ch->call_done; i++)
		step(sim);
	assert_true(sim->s[0].ch->call_done);
	assert_int_equal(reply.kind, UAM_MSG_REPLY);
	assert_int_equal(reply.args[1], 1);
	assert_int_equal(c.reps, 0); /* captured, not handled */
	sim->s[0].ch->call_active = false;
	/* a call that gives up before its reply comes */
	a[0] = 1;
	a[1] = ~1ull;
	assert_int_equal(uamp_call_start(sim->s[0].ch, H_ECHO, a, 2, &reply), 0);
	sim->s[0].ch->call_active = false;
	for (int i = 0; i < 100; i++)
		step(sim);
	uam_chan__stats(sim->s[0].ch, &st);
	assert_int_equal(st.late_replies, 1);
	assert_int_equal(c.reps, 0);
	sim_free(sim);
}

static void test_bad_args(void **state)
{
	struct sim *sim = sim_new(11, 0, 0, 0, NULL);
	uint64_t a[UAM_MAX_ARGS + 1] = { 0 };
	UNET_OPTS_INIT(uam_ep_opts, o);
	struct uam_ep ep = { 0 };
	struct uam_transport tr = { .xmit = sim_xmit, .now_ns = sim_now, .ctx = &sim->s[0],
				    .max_frame = FRAME };

	(void)state;
	assert_int_equal(uam_request(sim->s[0].ch, UAM_MAX_HANDLERS, a, 1), -EINVAL);
	assert_int_equal(uam_request(sim->s[0].ch, 1, a, UAM_MAX_ARGS + 1), -EINVAL);
	assert_int_equal(uam_request(sim->s[0].ch, 1, NULL, 1), -EINVAL);
	assert_int_equal(uam_request(NULL, 1, a, 1), -EINVAL);
	assert_int_equal(uam_ep__set_handler(sim->s[0].ep, UAM_MAX_HANDLERS, NULL, NULL), -EINVAL);
	assert_int_equal(uam_region__register(sim->s[0].ep, 1, a, 8, 0), -EINVAL);
	assert_int_equal(uam_region__unregister(sim->s[0].ep, 77), -ENOENT);
	o.window = 3;
	assert_int_equal(uamp_ep_init(&ep, &o, &tr), -EINVAL);
	o.window = UAM_MAX_WINDOW + 1;
	assert_int_equal(uamp_ep_init(&ep, &o, &tr), -EINVAL);
	/* kept buffers: all three calls or none, and a flush */
	tr.buf_get = sim_buf_get;
	assert_int_equal(uamp_ep_init(&ep, NULL, &tr), -EINVAL);
	tr.xmit_buf = sim_xmit_buf;
	assert_int_equal(uamp_ep_init(&ep, NULL, &tr), -EINVAL);
	tr.buf_put = sim_buf_put;
	assert_int_equal(uamp_ep_init(&ep, NULL, &tr), -EINVAL); /* no flush */
	tr.flush = sim_flush;
	assert_int_equal(uamp_ep_init(&ep, NULL, &tr), 0);
	uamp_ep_fini(&ep);
	sim_free(sim);
}

/* The frame parser refuses garbage without touching state. */
static void test_garbage_frames(void **state)
{
	struct sim *sim = sim_new(12, 0, 0, 0, NULL);
	uint8_t f[FRAME];
	struct uam_stats st;
	uint32_t seed = 5;

	(void)state;
	for (int i = 0; i < 20000; i++) {
		uint32_t len = (uint32_t)(i % FRAME);

		fill(f, len, seed++);
		if (len > 0)
			f[0] = (i & 1) ? UAM_WIRE_VERSION : f[0];
		uamp_input(sim->s[1].ch, f, len);
		step(sim);
	}
	uam_chan__stats(sim->s[1].ch, &st);
	assert_true(st.bad_frames > 15000);
	sim_free(sim);
}

/* Sequence numbers cross 2^32 with windows that are not powers of two
 * (slots indexed by seq % window broke there), over a link that loses,
 * duplicates and reorders, for requests and a store and get. */
static void test_seq_wrap_windows(void **state)
{
	static const uint32_t windows[] = { 4, 5, 7, 48, 63, 64, 65, 200 };
	static const uint32_t refused[] = { 1, 3, UAM_MAX_WINDOW + 1, 100000 };
	size_t n = 256 << 10;
	uint8_t *src = malloc(n), *dst = calloc(1, n), *back = calloc(1, n);

	(void)state;
	assert_non_null(src);
	assert_non_null(dst);
	assert_non_null(back);
	fill(src, n, 99);
	for (size_t k = 0; k < sizeof(refused) / sizeof(refused[0]); k++) {
		UNET_OPTS_INIT(uam_ep_opts, o);
		struct uam_ep ep = { 0 };
		struct side s = { 0 };
		struct uam_transport tr = { .xmit = sim_xmit, .now_ns = sim_now, .ctx = &s,
					    .max_frame = FRAME };

		o.window = refused[k];
		assert_int_equal(uamp_ep_init(&ep, &o, &tr), -EINVAL);
	}
	for (size_t k = 0; k < sizeof(windows) / sizeof(windows[0]); k++) {
		UNET_OPTS_INIT(uam_ep_opts, o);
		struct sim *sim;
		struct counts c = { 0 };
		struct opdone d = { 0 }, g = { 0 };

		o.window = windows[k];
		/* the wrap comes after 1000 frames each way */
		test_isn = 0xffffffffu - 1000;
		sim = sim_new(100 + k, 30000, 20000, 30000, &o);
		test_isn = 0;
		run_requests(sim, 3000);
		assert_true(seq_diff_test(sim->s[0].ch->snd_next, 0xffffffffu - 1000) > 1000);
		assert_true(sim->s[0].ch->snd_next < 0x10000000u); /* it wrapped */
		memset(&c, 0, sizeof(c));
		handlers(sim, &c);
		assert_int_equal(uam_region__register(sim->s[1].ep, 5, dst, n,
						      UAM_REGION_WRITE | UAM_REGION_READ), 0);
		assert_int_equal(uam_region__register(sim->s[0].ep, 9, back, n, UAM_REGION_WRITE), 0);
		assert_true(uam_store(sim->s[0].ch, src, n, 5, 0, H_STORED, NULL, 0, op_cb, &d) > 0);
		run_until(sim, &d.n, 2000000);
		assert_int_equal(d.status, 0);
		assert_int_equal(c.stores, 1);
		assert_true(uam_get(sim->s[0].ch, 5, 0, n, 9, 0, op_cb, &g) > 0);
		run_until(sim, &g.n, 2000000);
		assert_int_equal(g.status, 0);
		assert_memory_equal(back, src, n);
		assert_int_equal(uam_chan__error(sim->s[0].ch), 0);
		assert_int_equal(uam_chan__error(sim->s[1].ch), 0);
		print_message("window %u: across the wrap, snd_next now %u\n", windows[k],
			      sim->s[0].ch->snd_next);
		sim_free(sim);
		memset(dst, 0, n);
		memset(back, 0, n);
	}
	free(src);
	free(dst);
	free(back);
}

/* Lengths from the wire are checked against what was allocated: a frame
 * longer than the largest the transport carries (the receive slots hold
 * that much) is refused, held early or not; so are lengths whose sum
 * overflows. */
static void test_frame_lengths(void **state)
{
	struct sim *sim = sim_new(13, 0, 0, 0, NULL);
	static uint8_t f[1 << 16];
	uint32_t seq = sim->s[0].ch->snd_next, rcv = sim->s[1].ch->rcv_next;
	struct uam_stats st;

	(void)state;
	/* 1518 bytes (a fragment of 100 bytes and trailing junk) that came
	 * early: it would be held in a slot of FRAME bytes */
	forge_hdr(sim, 0, f, UAM_T_STORE, 0, 0, 0, seq + 1, 1, 5, 100);
	feed(sim, 1, f, 1518);
	/* the same in sequence, and one of 64 KiB */
	forge_hdr(sim, 0, f, UAM_T_STORE, 0, 0, 0, seq, 1, 5, 100);
	feed(sim, 1, f, 1518);
	forge_hdr(sim, 0, f, UAM_T_STORE, 0, 0, 0, seq, 1, 5, sizeof(f) - UAM_HDR_LEN - UAM_FRAG_EXT);
	feed(sim, 1, f, sizeof(f));
	/* dlen that wraps the length sum around */
	forge_hdr(sim, 0, f, UAM_T_STORE, UAM_F_LAST, 8, 0, seq + 2, 1, 5, 0xffffffffu - 100);
	feed(sim, 1, f, FRAME);
	/* a request shorter than its arguments */
	forge_hdr(sim, 0, f, UAM_T_REQUEST, 0, 8, 1, seq + 3, 1, 0, 0);
	feed(sim, 1, f, UAM_HDR_LEN + 8 * 7);
	uam_chan__stats(sim->s[1].ch, &st);
	assert_int_equal(st.out_of_order, 0);
	assert_int_equal(st.bad_frames, 5);
	assert_int_equal(sim->s[1].ch->rcv_next, rcv);
	sim_free(sim);
}

/*
 * An ACK frame's extended SACK (the held frames beyond the header's 64):
 * whole words only, no more than UAM_SACK_EXT_MAX bytes, exactly as long
 * as dlen says, else dropped as bad; a bit for a frame 100 beyond the ack
 * marks it held and makes the holes sent before it go again (fast
 * retransmit); a bit for a frame never sent changes nothing.
 */
/* Side's send slots other than the first n were never used. */
static void assert_slots_unused_past(struct sim *sim, int side, uint32_t n)
{
	struct uam_chan *ch = sim->s[side].ch;

	for (uint32_t k = 0; k < n; k++)
		assert_true(ch->tx[k].ntx >= 1);
	for (uint32_t k = n; k <= sim->s[side].ep->slot_mask; k++)
		assert_int_equal(ch->tx[k].ntx, 0);
}

/*
 * Traffic that drains reuses the send slots (and their frame buffers) of
 * the frames before it: with nothing in flight the ring turns (new_slot),
 * so 200 request/reply round trips at a window of 512 use slot 0 on each
 * side and no other (they walked 200 slots and 200 frame buffers, cold in
 * the cache, before), and bursts of 8 that drain use slots 0-7.  Every
 * request and reply still arrives once and in order, and the sequence
 * numbers run on (the wrap itself: test_seq_wrap_windows).
 */
static void test_slot_reuse(void **state)
{
	UNET_OPTS_INIT(uam_ep_opts, o);
	struct counts c = { 0 };
	struct sim *sim;
	uint64_t i = 0;

	(void)state;
	o.window = 512;
	sim = sim_new(21, 0, 0, 0, &o);
	handlers(sim, &c);
	for (; i < 200; i++) {
		assert_true(uam_request(sim->s[0].ch, H_ECHO, (uint64_t[]){ i, ~i }, 2) >= 0);
		for (int k = 0; k < 10 && c.reps < i + 1; k++)
			step(sim);
		assert_int_equal(c.reps, i + 1);
	}
	assert_slots_unused_past(sim, 0, 1);
	assert_slots_unused_past(sim, 1, 1);
	for (int burst = 0; burst < 5; burst++) {
		for (int b = 0; b < 8; b++, i++)
			assert_true(uam_request(sim->s[0].ch, H_ECHO, (uint64_t[]){ i, ~i }, 2) >= 0);
		for (int k = 0; k < 20 && c.reps < i; k++)
			step(sim);
		assert_int_equal(c.reps, i);
		assert_int_equal(sim->s[0].ch->snd_una, sim->s[0].ch->snd_next);
	}
	assert_slots_unused_past(sim, 0, 8);
	assert_slots_unused_past(sim, 1, 8);
	assert_int_equal(c.reqs, 240);
	assert_int_equal(c.bad, 0);
	sim_free(sim);
}

/* The send slot of frame seq, as the protocol finds it (txs: the ring
 * turned by tx_rot). */
static struct uam_tx_slot *tx_slot(struct uam_chan *ch, uint32_t seq)
{
	return &ch->tx[(seq + ch->tx_rot) & ch->ep->slot_mask];
}

static void test_ack_ext_sack(void **state)
{
	UNET_OPTS_INIT(uam_ep_opts, o);
	/* 200 fragments: the first and the LAST of 1428 bytes, 198 compact
	 * ones of 1468 between */
	static uint8_t src[2 * 1428 + 198 * 1468], dst[sizeof(src)];
	uint8_t f[UAM_HDR_LEN + UAM_SACK_EXT_MAX + 8];
	struct counts c = { 0 };
	struct opdone d = { 0 };
	struct uam_stats st0, st;
	struct uam_chan *ch;
	struct sim *sim;
	uint32_t una;

	(void)state;
	fill(src, sizeof(src), 7);
	o.window = 512;
	sim = sim_new(16, 0, 0, 0, &o);
	ch = sim->s[0].ch;
	handlers(sim, &c);
	assert_int_equal(uam_region__register(sim->s[1].ep, 5, dst, sizeof(dst), UAM_REGION_WRITE), 0);
	/* both sides know each other's session and credit */
	assert_true(uam_request(ch, H_ECHO, (uint64_t[]){ 0, ~0ull }, 2) >= 0);
	for (int i = 0; i < 10; i++)
		step(sim);
	assert_int_equal(c.reps, 1);
	/* 200 fragments sent, none acknowledged (the receiver is away) */
	sim->s[1].paused = true;
	assert_true(uam_store(ch, src, sizeof(src), 5, 0, H_STORED, NULL, 0, op_cb, &d) > 0);
	step(sim);
	una = ch->snd_una;
	assert_int_equal(ch->snd_next - una, 200);
	uam_chan__stats(ch, &st0);

	/* malformed: half a word, a length that disagrees, too many words */
	memset(f, 0, sizeof(f));
	forge_hdr(sim, 1, f, UAM_T_ACK, 0, 0, 0, 0, 0, 0, 4);
	wput32(f + UAM_OFF_ACK, una);
	feed(sim, 0, f, UAM_HDR_LEN + 4);
	wput32(f + UAM_OFF_DLEN, 8);
	feed(sim, 0, f, UAM_HDR_LEN + 16);
	wput32(f + UAM_OFF_DLEN, UAM_SACK_EXT_MAX + 8);
	feed(sim, 0, f, UAM_HDR_LEN + UAM_SACK_EXT_MAX + 8);
	uam_chan__stats(ch, &st);
	assert_int_equal(st.bad_frames - st0.bad_frames, 3);
	for (uint32_t k = 0; k < 200; k++)
		assert_int_equal(tx_slot(ch, una + k)->state, SLOT_INFLIGHT);

	/* frame una + 100 held (word 0, bit 35), and a bit for una + 300,
	 * never sent (word 3, bit 43) */
	wput32(f + UAM_OFF_DLEN, 32);
	wput64(f + UAM_HDR_LEN, 1ull << 35);
	wput64(f + UAM_HDR_LEN + 24, 1ull << 43);
	feed(sim, 0, f, UAM_HDR_LEN + 32);
	uam_chan__stats(ch, &st);
	assert_int_equal(st.bad_frames - st0.bad_frames, 3);
	assert_int_equal(tx_slot(ch, una + 100)->state, SLOT_SACKED);
	assert_int_equal(tx_slot(ch, una + 300)->state, SLOT_FREE);
	/* the 100 before it went again at once, nothing after it */
	assert_int_equal(st.retransmits - st0.retransmits, 100);
	for (uint32_t k = 101; k < 200; k++)
		assert_int_equal(tx_slot(ch, una + k)->ntx, 1);

	/* and the store still completes, once, with everything there */
	sim->s[1].paused = false;
	run_until(sim, &d.n, 100000);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.status, 0);
	assert_int_equal(c.stores, 1);
	assert_memory_equal(dst, src, sizeof(src));
	sim_free(sim);
}

/* ---- Medium messages ---------------------------------------------------- */

enum { H_MREQ = 10, H_MREP = 11 };

/* The byte at position i of medium message k of size n: differs by
 * message, size and position, so a payload from another message, a
 * shifted one or a truncated one is seen. */
static uint8_t mbyte(uint64_t k, size_t n, size_t i)
{
	return (uint8_t)(k * 131 + n * 7 + i * 13 + (i >> 8));
}

/* Medium message k of a run: its args, payload size and its reply's. */
struct mplan {
	uint8_t nargs;
	uint16_t size, rsize;
};

struct mcounts {
	uint64_t next_req, next_rep, reqs, reps, bad;
	const struct mplan *plan;
	uint64_t n;
};

/* Argument i of message k (and of its reply). */
static uint64_t marg(uint64_t k, unsigned int i)
{
	return k * 0x9E3779B97F4A7C15ULL + i;
}

static bool mcheck(const struct uam_msg *m, uint64_t k, size_t n)
{
	const uint8_t *d = m->data;

	if (m->data_len != n || (n && !d) || (!n && d))
		return false;
	for (size_t i = 0; i < n; i++)
		if (d[i] != mbyte(k, n, i))
			return false;
	return true;
}

/* Message k of the plan, with its args and payload as sent: k is the one
 * that must come next (in order, exactly once), and a message with no
 * args carries it only in its payload's bytes. */
static bool mcheck_plan(const struct mcounts *c, const struct uam_msg *m, uint64_t k, bool reply)
{
	const struct mplan *pl = &c->plan[k];

	if (k >= c->n || m->nargs != pl->nargs)
		return false;
	for (unsigned int i = 0; i < pl->nargs; i++)
		if (m->args[i] != marg(k, i))
			return false;
	return mcheck(m, k, reply ? pl->rsize : pl->size);
}

static void mfill(uint8_t *buf, uint64_t k, size_t n)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = mbyte(k, n, i);
}

static void h_mreq(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	struct mcounts *c = ctx;
	uint64_t k = c->next_req, a[UAM_MAX_ARGS];
	static uint8_t out[1 << 16];

	(void)ep;
	if (m->kind != UAM_MSG_REQUEST || !mcheck_plan(c, m, k, false)) {
		c->bad++;
		return;
	}
	c->next_req = k + 1;
	c->reqs++;
	for (unsigned int i = 0; i < UAM_MAX_ARGS; i++)
		a[i] = marg(k, i);
	mfill(out, k, c->plan[k].rsize);
	if (uam_reply_medium(m, H_MREP, a, c->plan[k].nargs, out, c->plan[k].rsize))
		c->bad++;
	memset(out, 0xee, c->plan[k].rsize); /* the caller's buffer is free at once */
}

static void h_mrep(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	struct mcounts *c = ctx;
	uint64_t k = c->next_rep;

	(void)ep;
	if (m->kind != UAM_MSG_REPLY || !mcheck_plan(c, m, k, true)) {
		c->bad++;
		return;
	}
	c->next_rep = k + 1;
	c->reps++;
}

/*
 * The plan of a run: `rounds` rounds, each of every size from 0 to the
 * largest a frame takes beside its args (all of 0..64, then steps of 29,
 * then the largest), with 0, 8, 2, 0, 8, 2... args; each reply carries
 * the largest size less the request's, so both directions see every
 * size.  With 0 args the largest is 1472 bytes (one MTU-1500 frame).
 * Returns the number of messages.
 */
static uint64_t mplan_make(struct sim *sim, struct mplan *plan, uint64_t room, uint64_t rounds)
{
	static const uint8_t cycle[] = { 0, UAM_MAX_ARGS, 2 };
	uint64_t n = 0;

	for (uint64_t r = 0; r < rounds; r++) {
		uint8_t na = cycle[r % 3];
		size_t max = uam_ep__medium_max_args(sim->s[0].ep, na);

		for (size_t sz = 0;; sz = sz < 64 ? sz + 1 : sz + 29) {
			if (sz > max)
				sz = max;
			assert_true(n < room);
			plan[n++] = (struct mplan){ .nargs = na, .size = (uint16_t)sz,
						    .rsize = (uint16_t)(max - sz) };
			if (sz == max)
				break;
		}
	}
	return n;
}

/* Medium requests and replies of every size from 0 to the largest, with
 * and without args (mplan_make), over a link with the given faults: each
 * delivered once, in order, with its args and content. */
static void run_medium(uint64_t seed, uint32_t loss, uint32_t dup, uint32_t reorder, uint64_t rounds)
{
	struct sim *sim = sim_new(seed, loss, dup, reorder, NULL);
	struct mplan *plan = calloc(rounds * 256, sizeof(*plan));
	struct mcounts c = { 0 };
	static uint8_t buf[1 << 16];
	uint64_t sent = 0, n;
	long steps;

	assert_non_null(plan);
	/* 1492 bytes of U-Net payload at MTU 1500, a 20-byte header */
	assert_int_equal(uam_ep__medium_max_args(sim->s[0].ep, 0), 1472);
	assert_int_equal(uam_ep__medium_max_args(sim->s[0].ep, 0), FRAME - UAM_C_HDR_LEN);
	assert_int_equal(uam_ep__medium_max_args(sim->s[0].ep, 8), 1408);
	assert_int_equal(uam_ep__medium_max(sim->s[0].ep), 1408);
	n = mplan_make(sim, plan, rounds * 256, rounds);
	c.plan = plan;
	c.n = n;
	for (int i = 0; i < 2; i++) {
		uam_ep__set_handler(sim->s[i].ep, H_MREQ, h_mreq, &c);
		uam_ep__set_handler(sim->s[i].ep, H_MREP, h_mrep, &c);
	}
	for (steps = 0; steps < 5000000 && c.reps < n; steps++) {
		while (sent < n) {
			const struct mplan *pl = &plan[sent];
			uint64_t a[UAM_MAX_ARGS];
			int r;

			for (unsigned int i = 0; i < UAM_MAX_ARGS; i++)
				a[i] = marg(sent, i);
			mfill(buf, sent, pl->size);
			r = uam_request_medium(sim->s[0].ch, H_MREQ, a, pl->nargs, buf, pl->size);
			memset(buf, 0xdd, pl->size); /* free at once: queued ones were copied */
			if (r == -EAGAIN)
				break;
			assert_int_equal(r, (int)sent);
			sent++;
		}
		step(sim);
	}
	for (int i = 0; i < 2000; i++)
		step(sim);
	print_message("medium: %llu each way, sizes 0..1472 (0 args), 0..1408 (8), 0..1456 (2), "
		      "lost %llu of %llu frames\n", (unsigned long long)n,
		      (unsigned long long)sim->lost, (unsigned long long)sim->sent);
	assert_int_equal(uam_chan__error(sim->s[0].ch), 0);
	assert_int_equal(uam_chan__error(sim->s[1].ch), 0);
	assert_int_equal(c.bad, 0);
	assert_int_equal(c.reqs, n);
	assert_int_equal(c.reps, n);
	if (loss)
		assert_true(sim->lost > n / 50);
	/* payloads kept in transport buffers (sent themselves once, copied
	 * from for a repeat) and, past the transport's cap, in the slot */
	print_message("medium: kept buffers %llu/%llu, sent themselves %llu/%llu, slot copies past "
		      "the cap %llu/%llu\n", (unsigned long long)sim->s[0].kept_gets,
		      (unsigned long long)sim->s[1].kept_gets, (unsigned long long)sim->s[0].kept_tx,
		      (unsigned long long)sim->s[1].kept_tx, (unsigned long long)sim->s[0].kept_refused,
		      (unsigned long long)sim->s[1].kept_refused);
	for (int i = 0; i < 2; i++) {
		assert_true(sim->s[i].kept_tx > n / 4);
		assert_true(sim->s[i].kept_refused > 0);
	}
	free(plan);
	sim_free(sim);
}

static void test_medium_clean(void **state)
{
	(void)state;
	run_medium(21, 0, 0, 0, 4);
}

static void test_medium_lossy(void **state)
{
	(void)state;
	run_medium(22, 100000, 0, 0, 20);
}

static void test_medium_dup_reorder(void **state)
{
	(void)state;
	run_medium(23, 50000, 50000, 50000, 20);
}

/* A compact request or reply as side `from` would send it: its session,
 * ack and credit, and seq; len is up to the caller. */
static void forge_compact(struct sim *sim, int from, uint8_t *f, uint8_t type, uint8_t nargs,
			  uint8_t handler, uint32_t seq, uint32_t token)
{
	struct uam_chan *ch = sim->s[from].ch;

	memset(f, 0, UAM_C_HDR_LEN);
	f[UAM_C_OFF_KIND] = UAM_C_FORMAT | type;
	f[UAM_C_OFF_NARGS] = nargs;
	f[UAM_C_OFF_HANDLER] = handler;
	f[UAM_C_OFF_CREDIT] = (uint8_t)(sim->s[from].ep->o.window / UAM_C_CREDIT_UNIT);
	wput32(f + UAM_C_OFF_SESSION, ch->session);
	wput32(f + UAM_C_OFF_SEQ, seq);
	wput32(f + UAM_C_OFF_ACK, ch->rcv_next);
	wput32(f + UAM_C_OFF_TOKEN, token);
}

/* The limits of medium messages, a medium reply caught by uam_call, and
 * malformed frames of both headers. */
static void test_medium_limits(void **state)
{
	struct sim *sim = sim_new(24, 0, 0, 0, NULL);
	struct uam_ep *ep = sim->s[0].ep;
	size_t max2 = uam_ep__medium_max_args(ep, 2), max0 = uam_ep__medium_max_args(ep, 0);
	struct mplan plan[2] = { { .nargs = 2, .size = 0, .rsize = (uint16_t)max2 },
				 { .nargs = 0, .size = (uint16_t)max0, .rsize = 0 } };
	struct mcounts c = { .plan = plan, .n = 2 };
	static uint8_t buf[1 << 16];
	uint64_t a[2] = { marg(0, 0), marg(0, 1) };
	struct uam_msg reply;
	uint8_t f[FRAME + 8];
	struct uam_stats st;
	uint64_t bad;

	(void)state;
	uam_ep__set_handler(sim->s[1].ep, H_MREQ, h_mreq, &c);
	assert_int_equal(uam_ep__medium_max(NULL), 0);
	assert_int_equal(uam_ep__medium_max_args(NULL, 0), 0);
	assert_int_equal(uam_ep__medium_max_args(ep, UAM_MAX_ARGS + 1), 0);
	assert_int_equal(uam_ep__medium_max_args(ep, 1), max0 - 8);
	assert_int_equal(uam_request_medium(sim->s[0].ch, H_MREQ, a, 2, buf, max2 + 1), -EMSGSIZE);
	assert_int_equal(uam_request_medium(sim->s[0].ch, H_MREQ, NULL, 0, buf, max0 + 1), -EMSGSIZE);
	assert_int_equal(uam_request_medium(sim->s[0].ch, H_MREQ, a, 2, NULL, 1), -EINVAL);
	assert_int_equal(uam_request_medium(NULL, H_MREQ, a, 2, buf, 1), -EINVAL);
	assert_int_equal(uam_reply_medium(NULL, H_MREP, a, 2, buf, 1), -EINVAL);
	/* the reply (the largest with 2 args) is copied out of the receive
	 * buffer for the caller, who reads it after the poll */
	assert_int_equal(uamp_call_start(sim->s[0].ch, H_MREQ, a, 2, &reply), 0);
	for (int i = 0; i < 100 && !sim->s[0].ch->call_done; i++)
		step(sim);
	assert_true(sim->s[0].ch->call_done);
	sim->s[0].ch->call_active = false;
	assert_int_equal(c.bad, 0);
	assert_int_equal(reply.kind, UAM_MSG_REPLY);
	assert_int_equal(reply.nargs, 2);
	assert_true(mcheck(&reply, 0, max2));
	assert_true(reply.data == sim->s[0].ch->call_data);
	for (int i = 0; i < 20; i++)
		step(sim); /* both sides idle, everything acknowledged */

	/* Full header: a medium request whose dlen disagrees with its
	 * length, and a DONE with data: refused before anything is
	 * delivered. */
	forge_hdr(sim, 0, f, UAM_T_REQUEST, 0, 0, H_MREQ, sim->s[0].ch->snd_next, 1, 0, 10);
	feed(sim, 1, f, UAM_HDR_LEN + 9);
	feed(sim, 1, f, UAM_HDR_LEN + 11);
	forge_hdr(sim, 0, f, UAM_T_DONE, 0, 0, 0, sim->s[0].ch->snd_next, 1, 0, 10);
	feed(sim, 1, f, UAM_HDR_LEN + 10);
	/* Compact header: shorter than itself or than its args, more args
	 * than a message has, longer than a frame, a kind that has no
	 * compact form (ACK, GET_REQ, DONE, and beyond), a stale session. */
	forge_compact(sim, 0, f, UAM_T_REQUEST, 0, H_MREQ, sim->s[0].ch->snd_next, 1);
	feed(sim, 1, f, UAM_C_HDR_LEN - 1);
	feed(sim, 1, f, 1);
	feed(sim, 1, f, 0);
	feed(sim, 1, f, FRAME + 1);
	forge_compact(sim, 0, f, UAM_T_REQUEST, 2, H_MREQ, sim->s[0].ch->snd_next, 1);
	feed(sim, 1, f, UAM_C_HDR_LEN + 15);
	forge_compact(sim, 0, f, UAM_T_REPLY, UAM_MAX_ARGS + 1, H_MREQ, sim->s[0].ch->snd_next, 1);
	feed(sim, 1, f, UAM_C_HDR_LEN + 8 * (UAM_MAX_ARGS + 1));
	forge_compact(sim, 0, f, UAM_T_REQUEST, 0, H_MREQ, sim->s[0].ch->snd_next, 1);
	f[UAM_C_OFF_NARGS] = 0xff;
	feed(sim, 1, f, UAM_C_HDR_LEN + 100);
	for (uint8_t t = 0; t < 16; t++) {
		/* (compact fragments: test_compact_frag_bounds) */
		if (t == UAM_T_REQUEST || t == UAM_T_REPLY || t == UAM_T_STORE || t == UAM_T_GET_DATA)
			continue;
		forge_compact(sim, 0, f, t, 0, H_MREQ, sim->s[0].ch->snd_next, 1);
		feed(sim, 1, f, UAM_C_HDR_LEN + 8);
	}
	forge_compact(sim, 0, f, UAM_T_REQUEST, 0, H_MREQ, sim->s[0].ch->snd_next, 1);
	wput32(f + UAM_C_OFF_SESSION, sim->s[0].ch->session ^ 0x5a5a0000u);
	feed(sim, 1, f, UAM_C_HDR_LEN + 8);
	uam_chan__stats(sim->s[1].ch, &st);
	bad = 3 + 4 + 1 + 1 + 1 + 12 + 1;
	assert_int_equal(st.bad_frames, bad);
	assert_int_equal(c.reqs, 1);
	assert_int_equal(uam_chan__error(sim->s[1].ch), 0);

	/* And one that is right: 1472 bytes with no args, in one frame,
	 * handed to the handler with its content (plan[1]). */
	forge_compact(sim, 0, f, UAM_T_REQUEST, 0, H_MREQ, forge_seq(sim, 0), 2);
	mfill(f + UAM_C_HDR_LEN, 1, max0);
	feed(sim, 1, f, UAM_C_HDR_LEN + (uint32_t)max0);
	uam_chan__stats(sim->s[1].ch, &st);
	assert_int_equal(st.bad_frames, bad);
	assert_int_equal(c.reqs, 2);
	assert_int_equal(c.bad, 0);
	assert_int_equal(UAM_C_HDR_LEN + max0, FRAME);
	sim_free(sim);
}

/* ---- Loss recovery ---------------------------------------------------- */

struct calls {
	uint64_t done;
};

static void h_call(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	(void)ep;
	(void)ctx;
	uam_reply(m, H_ECHO_REPLY, m->args, 1);
}

static void h_call_rep(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	(void)ep;
	(void)m;
	((struct calls *)ctx)->done++;
}

/* Simulated time n request/reply calls take with `depth` in flight at
 * loss_ppm each way. */
static uint64_t calls_time(uint64_t seed, uint32_t loss_ppm, unsigned int depth, uint64_t n,
			   struct uam_stats *st)
{
	struct sim *sim = sim_new(seed, loss_ppm, 0, 0, NULL);
	struct calls c = { 0 };
	uint64_t sent = 0, t0 = sim->now, t;

	uam_ep__set_handler(sim->s[1].ep, H_ECHO, h_call, &c);
	uam_ep__set_handler(sim->s[0].ep, H_ECHO_REPLY, h_call_rep, &c);
	for (long i = 0; i < 10000000 && c.done < n; i++) {
		while (sent < n && sent - c.done < depth) {
			uint64_t a[1] = { sent };

			assert_true(uam_request(sim->s[0].ch, H_ECHO, a, 1) >= 0);
			sent++;
		}
		step(sim);
	}
	assert_int_equal(c.done, n);
	t = sim->now - t0;
	print_message("srtt %llu rttvar %llu rto %u (requester); srtt %llu rto %u (responder)\n",
		      (unsigned long long)sim->s[0].ch->srtt_ns, (unsigned long long)sim->s[0].ch->rttvar_ns,
		      sim->s[0].ch->rto_us, (unsigned long long)sim->s[1].ch->srtt_ns, sim->s[1].ch->rto_us);
	uam_ep__stats(sim->s[0].ep, st);
	sim_free(sim);
	return t;
}

/*
 * Calls per second at 10% loss each way against none, with 1 and 16
 * calls in flight (issue 11's targets: >= 0.2x and >= 0.5x).  Losses are
 * recovered from round-trip evidence (fast retransmit, the tail-loss
 * probe, a timeout from the measured round trip), not by waiting out a
 * fixed floor of milliseconds.  Fails if fast retransmit does not fire
 * for a burst sent within one clock reading (16 in flight fell to 0.31x).
 * Simulated time: a step is 20 us.
 */
static void test_loss_recovery(void **state)
{
	static const unsigned int depths[] = { 1, 16 };
	static const double floor_ratio[] = { 0.2, 0.5 };

	(void)state;
	for (int k = 0; k < 2; k++) {
		struct uam_stats clean, lossy;
		uint64_t t0 = calls_time(31, 0, depths[k], 5000, &clean);
		uint64_t t1 = calls_time(32, 100000, depths[k], 5000, &lossy);
		double ratio = (double)t0 / (double)t1;

		print_message("%u in flight: %.3f s clean, %.3f s at 10%% loss: %.2fx; "
			      "retransmits %llu, timeouts %llu\n",
			      depths[k], t0 / 1e9, t1 / 1e9, ratio,
			      (unsigned long long)lossy.retransmits,
			      (unsigned long long)lossy.timeouts);
		assert_true(ratio >= floor_ratio[k]);
	}
}

/* Store n bytes from src into region 5 at offset 0 (no handler), run
 * until it completes, and check it succeeded and dst holds src.
 * Returns the simulated time it took. */
static uint64_t store_checked(struct sim *sim, const uint8_t *src, const uint8_t *dst, size_t n)
{
	struct opdone d = { 0 };
	uint64_t t0 = sim->now;

	assert_true(uam_store(sim->s[0].ch, src, n, 5, 0, 0, NULL, 0, op_cb, &d) > 0);
	run_until(sim, &d.n, 2000000);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.status, 0);
	assert_memory_equal(dst, src, n);
	return sim->now - t0;
}

/* Simulated time a store of n bytes takes with this window and loss. */
static uint64_t store_time(uint64_t seed, uint32_t loss_ppm, uint32_t window, size_t n,
			   uint8_t *src, uint8_t *dst, struct uam_stats *st)
{
	UNET_OPTS_INIT(uam_ep_opts, o);
	struct sim *sim;
	uint64_t t0;

	o.window = window;
	sim = sim_new(seed, loss_ppm, 0, 0, &o);
	assert_int_equal(uam_region__register(sim->s[1].ep, 5, dst, n, UAM_REGION_WRITE), 0);
	/* one round trip first: the peer's credit is known from then on */
	assert_true(uam_request(sim->s[0].ch, 99, NULL, 0) >= 0);
	for (int i = 0; i < 10; i++)
		step(sim);
	t0 = store_checked(sim, src, dst, n);
	uam_ep__stats(sim->s[0].ep, st);
	sim_free(sim);
	return t0;
}

/*
 * Bulk at 1% loss keeps >= 0.8x of its loss-free speed (issue 11): with a
 * window of 256 frames, a lost fragment is resent on SACK evidence while
 * the rest of the window keeps flowing, and the timer restarts on every
 * ack, so a window being drained is not resent wholesale.  Simulated
 * time, a link that delivers 64 frames per 20 us step.
 */
static void test_bulk_loss_pipelined(void **state)
{
	size_t n = 4 << 20;
	uint8_t *src = malloc(n), *dst = calloc(1, n);
	struct uam_stats clean, lossy;
	uint64_t t0, t1;

	(void)state;
	assert_non_null(src);
	assert_non_null(dst);
	fill(src, n, 5);
	t0 = store_time(51, 0, 256, n, src, dst, &clean);
	memset(dst, 0, n);
	t1 = store_time(52, 10000, 256, n, src, dst, &lossy);
	print_message("4 MiB store, window 256: %.2f ms clean, %.2f ms at 1%% loss (%.2fx); "
		      "retransmits %llu (clean %llu), timeouts %llu\n",
		      t0 / 1e6, t1 / 1e6, (double)t0 / (double)t1,
		      (unsigned long long)lossy.retransmits, (unsigned long long)clean.retransmits,
		      (unsigned long long)lossy.timeouts);
	assert_int_equal(clean.retransmits, 0);
	assert_true((double)t0 / (double)t1 >= 0.8);
	free(src);
	free(dst);
}

/*
 * Flow control and SACK when requests and replies travel compact.  The
 * credit: side 0 learns side 1's window (256) from side 1's compact
 * request alone, with no ACK from side 1, and then sends 64 frames at
 * once (4, the credit assumed before, if it did not).  The SACK: side 0
 * sends A, B, C; B is lost and C overtakes A.  Side 1 holds C, delivers
 * A and replies to it with a compact frame, which has no room for the
 * SACK: the SACK must still go out, in an ACK in the same batch, so side
 * 0 resends B at once (fast retransmit) instead of after a timeout.
 */
static void test_compact_credit_sack(void **state)
{
	UNET_OPTS_INIT(uam_ep_opts, o);
	struct sim *sim;
	struct calls c0 = { 0 }, c1 = { 0 };
	struct uam_stats st0, st1;
	struct pkt *pa, *pb, *pc;
	uint64_t a[1] = { 7 };
	bool sack_seen = false;
	uint32_t una;

	(void)state;
	o.window = 256;
	sim = sim_new(25, 0, 0, 0, &o);
	uam_ep__set_handler(sim->s[0].ep, H_ECHO, h_call, &c0);
	uam_ep__set_handler(sim->s[1].ep, H_ECHO, h_call, &c1);
	uam_ep__set_handler(sim->s[0].ep, H_ECHO_REPLY, h_call_rep, &c0);
	uam_ep__set_handler(sim->s[1].ep, H_ECHO_REPLY, h_call_rep, &c1);
	assert_int_equal(sim->s[0].ch->peer_credit, 4);
	assert_true(uam_request(sim->s[1].ch, H_ECHO, a, 1) >= 0);
	assert_non_null(sim->s[0].head);
	assert_true(is_compact_frame(sim->s[0].head->data));
	uamp_input(sim->s[0].ch, sim->s[0].head->data, sim->s[0].head->len);
	side_drain(&sim->s[0]);
	uam_chan__stats(sim->s[1].ch, &st1);
	assert_int_equal(st1.tx_acks, 0);
	assert_int_equal(sim->s[0].ch->peer_credit, 256);
	side_drain(&sim->s[1]); /* side 0's reply: lost, resent */
	una = sim->s[0].ch->snd_una;
	uam_ep__cork(sim->s[0].ep);
	for (int i = 0; i < 64; i++)
		assert_true(uam_request(sim->s[0].ch, H_ECHO, a, 1) >= 0);
	assert_int_equal(uam_ep__uncork(sim->s[0].ep), 0);
	assert_int_equal(sim->s[0].ch->snd_next - una, 65);
	for (int i = 0; i < 200; i++)
		step(sim);
	assert_int_equal(c0.done, 64);
	assert_int_equal(c1.done, 1);

	/* The SACK. */
	uam_ep__cork(sim->s[0].ep);
	for (int i = 0; i < 3; i++)
		assert_true(uam_request(sim->s[0].ch, H_ECHO, a, 1) >= 0);
	assert_int_equal(uam_ep__uncork(sim->s[0].ep), 0);
	assert_int_equal(sim->s[1].queued, 3);
	pa = sim->s[1].head;
	pb = pa->next;
	pc = pb->next;
	free(pb);
	pc->next = pa;
	pa->next = NULL;
	sim->s[1].head = pc;
	sim->s[1].tail = pa;
	sim->s[1].queued = 2;
	uam_ep__stats(sim->s[0].ep, &st0);
	uam_ep__stats(sim->s[1].ep, &st1);
	step(sim); /* side 1 takes C, then A, and replies to A */
	for (struct pkt *p = sim->s[0].head; p; p = p->next) {
		const uint8_t *f = p->data;

		if (p->len == UAM_HDR_LEN && f[UAM_OFF_VERSION] == UAM_WIRE_VERSION &&
		    f[UAM_OFF_TYPE] == UAM_T_ACK && f[UAM_OFF_SACK + 7] == 1)
			sack_seen = true;
	}
	assert_true(sack_seen);
	for (int i = 0; i < 4; i++)
		step(sim);
	assert_int_equal(c0.done, 64 + 3);
	{
		struct uam_stats n0;

		uam_ep__stats(sim->s[0].ep, &n0);
		assert_int_equal(n0.timeouts - st0.timeouts, 0);
		assert_int_equal(n0.retransmits - st0.retransmits, 1);
	}
	assert_int_equal(uam_chan__error(sim->s[0].ch), 0);
	sim_free(sim);
}

/*
 * One store of n bytes from side 0 into side 1 over a link with a delay
 * (delay_steps each way) and a bandwidth (budget frames per 20 us step,
 * the sender's transport refusing more), as the real sender's kernel
 * path is: the steps it took, and both sides' stats.  o: the endpoints'
 * options (the window, the ack delay); log: what to drop and watch.
 */
static uint64_t bulk_run(uint64_t seed, uint32_t loss_ppm, const struct uam_ep_opts *o,
			 uint32_t delay, uint32_t budget, size_t n, const uint8_t *src, uint8_t *dst,
			 struct seqlog *log, struct uam_stats *tx, struct uam_stats *rx)
{
	struct sim *sim = sim_new(seed, 0, 0, 0, o);
	struct uam_stats rx0;
	uint64_t t0;

	sim->delay_steps = delay;
	sim->tx_budget = budget;
	memset(dst, 0, n);
	assert_int_equal(uam_region__register(sim->s[1].ep, 5, dst, n, UAM_REGION_WRITE), 0);
	/* one round trip first: the peer's credit and the round trip are
	 * known from then on */
	assert_true(uam_request(sim->s[0].ch, 99, NULL, 0) >= 0);
	for (uint32_t i = 0; i < 4 * delay + 20 || sim->s[0].ch->snd_una != sim->s[0].ch->snd_next; i++) {
		assert_true(i < 10000);
		step(sim);
	}
	uam_ep__stats(sim->s[1].ep, &rx0);
	sim->loss_ppm = loss_ppm;
	if (log)
		log->base = sim->s[0].ch->snd_next; /* the store's first fragment */
	sim->seqlog = log;
	t0 = store_checked(sim, src, dst, n);
	uam_ep__stats(sim->s[0].ep, tx);
	uam_ep__stats(sim->s[1].ep, rx);
	rx->tx_acks -= rx0.tx_acks;
	sim_free(sim);
	return t0 / STEP_NS;
}

/* Fragments of a store of n bytes (FRAME-byte frames, no args): the
 * first and the LAST with the full header (1428 bytes each), the ones
 * between compact (1468). */
static uint64_t frags(size_t n)
{
	uint64_t room = FRAME - UAM_HDR_LEN - UAM_FRAG_EXT, croom = FRAME - UAM_CF_HDR_LEN;

	if (n <= 2 * room)
		return n <= room ? 1 : 2;
	return 2 + (n - 2 * room + croom - 1) / croom;
}

/*
 * A bulk receiver gives credit back every quarter window, not every half
 * (issue 11: the sender waited on window turnaround): with a window of 256
 * over a link whose bandwidth-delay product is 16 frames/step x ~12 steps
 * (a delay of 5 steps each way, the ack's turn, the frame time) and acks
 * driven by count alone (ack_delay_us far out), a receiver that acked only
 * every half window (128 frames) left the sender waiting ~2 steps of
 * every 16; every quarter window it never waits.  Checks the
 * acknowledgements per window and that the link stays full.
 */
static void test_bulk_ack_every_quarter(void **state)
{
	UNET_OPTS_INIT(uam_ep_opts, o);
	size_t n = 4 << 20;
	uint8_t *src = malloc(n), *dst = malloc(n);
	struct uam_stats tx, rx;
	uint64_t steps, nf = frags(n), ideal = (nf + 15) / 16;

	(void)state;
	assert_non_null(src);
	assert_non_null(dst);
	fill(src, n, 9);
	o.window = 256;
	o.ack_delay_us = 5000; /* acks by count only */
	o.rto_min_us = 20000;
	steps = bulk_run(61, 0, &o, 5, 16, n, src, dst, NULL, &tx, &rx);
	print_message("window 256, acks by count: %llu fragments in %llu steps (the link: %llu): "
		      "%.2fx; receiver acks %llu (one per %.1f fragments), credit stalls %llu\n",
		      (unsigned long long)nf, (unsigned long long)steps, (unsigned long long)ideal,
		      (double)ideal / (double)steps, (unsigned long long)rx.tx_acks,
		      (double)nf / (double)rx.tx_acks, (unsigned long long)tx.credit_stalls);
	/* one ack per quarter window (64 frames): the count, give or take
	 * the partial quarters at the end */
	assert_true(rx.tx_acks >= nf / 64 && rx.tx_acks <= nf / 64 + 4);
	assert_int_equal(tx.retransmits, 0);
	/* the link full: within 5% of its bandwidth (plus the last frames'
	 * flight and the DONE's) */
	assert_true(steps <= ideal * 105 / 100 + 4 * 5);
	free(src);
	free(dst);
}

/*
 * Losses further than 64 frames beyond the ack are seen at once: a window
 * of 512 with the first transmissions of fragments 10, 110, 210, 310 and
 * 410 lost, a delay of 10 steps each way.  The header's SACK bitmap
 * covers 64 frames beyond the ack, which stays at 10 until that hole is
 * filled: without the ACK frame's extended SACK, the hole at 110 became
 * visible only then (two round trips late), the next one a round trip
 * after that, and so on.  Each must be resent by fast retransmit within
 * a round trip (and a few steps) of its first transmission, none by a
 * timeout.  Then the same at 1% random loss keeps >= 0.9x of the
 * loss-free speed with a window of 512.
 */
static void test_bulk_sack_beyond_64(void **state)
{
	static const uint32_t drop[] = { 10, 110, 210, 310, 410 };
	UNET_OPTS_INIT(uam_ep_opts, o);
	size_t n = 1 << 20;
	uint8_t *src = malloc(n), *dst = malloc(n);
	struct seqlog *log = calloc(1, sizeof(*log));
	struct uam_stats tx, rx, tx1, rx1;
	uint64_t steps, clean, lossy;

	(void)state;
	assert_non_null(src);
	assert_non_null(dst);
	assert_non_null(log);
	fill(src, n, 11);
	o.window = 512;
	log->drop = drop;
	log->ndrop = 5;
	steps = bulk_run(62, 0, &o, 10, 16, n, src, dst, log, &tx, &rx);
	print_message("window 512, 5 holes 100 apart: %llu steps, retransmits %llu, timeouts %llu\n",
		      (unsigned long long)steps, (unsigned long long)tx.retransmits,
		      (unsigned long long)tx.timeouts);
	for (int i = 0; i < 5; i++) {
		uint32_t k = drop[i];

		print_message("  fragment %u: sent at step %llu, again at %llu (%u times)\n", k,
			      (unsigned long long)(log->first[k] / STEP_NS % 100000),
			      (unsigned long long)(log->last[k] / STEP_NS % 100000), log->ntx[k]);
		assert_int_equal(log->ntx[k], 2);
		assert_true(log->last[k] - log->first[k] <= (2 * 10 + 4) * STEP_NS);
	}
	assert_int_equal(tx.timeouts, 0);
	assert_int_equal(tx.retransmits, 5);

	/* 4 MiB at 1% loss against none, window 512, delay 5 */
	n = 4 << 20;
	free(src);
	free(dst);
	src = malloc(n);
	dst = malloc(n);
	assert_non_null(src);
	assert_non_null(dst);
	fill(src, n, 12);
	clean = bulk_run(63, 0, &o, 5, 16, n, src, dst, NULL, &tx, &rx);
	lossy = bulk_run(64, 10000, &o, 5, 16, n, src, dst, NULL, &tx1, &rx1);
	print_message("window 512, 4 MiB: %llu steps clean, %llu at 1%% loss (%.2fx); retransmits "
		      "%llu, timeouts %llu; receiver acks %llu clean, %llu lossy\n",
		      (unsigned long long)clean, (unsigned long long)lossy,
		      (double)clean / (double)lossy, (unsigned long long)tx1.retransmits,
		      (unsigned long long)tx1.timeouts, (unsigned long long)rx.tx_acks,
		      (unsigned long long)rx1.tx_acks);
	assert_true((double)clean / (double)lossy >= 0.9);
	free(log);
	free(src);
	free(dst);
}

/* What gets_run saw: the steps the gets took, side 0's smoothed round
 * trip at the end, the most frames ever waiting for side 0 on the link,
 * and side 0's stats. */
struct gets_out {
	uint64_t steps, srtt_ns;
	uint32_t max_queue;
	struct uam_stats st;
};

/*
 * `count` gets of n bytes back to back, two in flight (as `unet-bench
 * bulk --bulk-get`), by side 0 out of side 1's memory, over a link with a
 * delay of one step and 64 frames a step, where side 0 takes only
 * rx_budget frames a step: a receiver slower than its sender, so the data
 * queues in front of it (in the real one, in its receive ring), up to the
 * window.  Each get's data is checked.  log: side 0's GET_REQs to drop
 * and watch (NULL: none).
 */
static void gets_run(const struct uam_ep_opts *o, uint32_t rx_budget, size_t n, int count,
		     struct seqlog *log, struct gets_out *out)
{
	struct sim *sim = sim_new(71, 0, 0, 0, o);
	uint8_t *src = malloc(n), *dst = malloc(n);
	struct opdone d = { 0 };
	int started = 0;
	uint64_t t0;

	assert_non_null(src);
	assert_non_null(dst);
	fill(src, n, 71);
	memset(out, 0, sizeof(*out));
	sim->delay_steps = 1;
	sim->tx_budget = 64;
	sim->rx_budget = rx_budget;
	assert_int_equal(uam_region__register(sim->s[1].ep, 5, src, n, UAM_REGION_READ), 0);
	assert_int_equal(uam_region__register(sim->s[0].ep, 9, dst, n, UAM_REGION_WRITE), 0);
	/* No round trip first (as the benchmark): the first two GET_REQs
	 * leave before anything came from side 1, and carry no ack its
	 * frames can be compared with. */
	if (log)
		log->base = sim->s[0].ch->snd_next; /* the first GET_REQ */
	sim->seqlog = log;
	t0 = sim->now;
	for (long i = 0; i < 100000 && d.n < count; i++) {
		while (started < count && started - d.n < 2) {
			memset(dst, 0, n); /* each get must write all of it again */
			assert_true(uam_get(sim->s[0].ch, 5, 0, n, 9, 0, op_cb, &d) > 0);
			started++;
		}
		step(sim);
		assert_int_equal(d.status, 0);
		if (sim->s[0].queued > out->max_queue)
			out->max_queue = sim->s[0].queued;
	}
	assert_int_equal(d.n, count);
	assert_memory_equal(dst, src, n);
	assert_int_equal(uam_chan__error(sim->s[0].ch), 0);
	out->steps = (sim->now - t0) / STEP_NS;
	out->srtt_ns = sim->s[0].ch->srtt_ns;
	uam_ep__stats(sim->s[0].ep, &out->st);
	sim_free(sim);
	free(src);
	free(dst);
}

/*
 * Loss-free gets pipelined two deep time nothing out.  The peer
 * acknowledges our next GET_REQ on the first frame it sends after it,
 * but that frame comes behind the data it sent before (the get before's:
 * up to a window, queued in front of our receiver).  The GET_REQ's timer
 * ran from its transmission, its round trip estimated from requests that
 * met no queue, so it expired (after a tail-loss probe) once a get: the
 * benchmark's 148-154 timeouts, two retransmissions each, for 150 gets
 * on a link that lost nothing; here 6 timeouts and 12 retransmissions for
 * 8 gets (none for the first two, sent to an idle peer).  Now frames the
 * peer sent before it had ours restart the timers (queue_progress); the
 * second GET_REQ, sent with the first before anything came from the
 * peer (so with an ack of 0, no seq of the peer's), still had its probe
 * sent once until that case was counted as acknowledging the start of
 * the peer's stream.
 * Then the same with the sixth GET_REQ lost: it must still be recovered
 * as soon as the queue in front of its ack is through (a tail-loss probe
 * a round trip later), not a queue's worth later again, nor by a
 * timeout: the round trip is not sampled from the wait behind the queue
 * (it was, at first: an srtt of 36 steps instead of 2.9, and the lost
 * GET_REQ resent 86 steps after it left instead of 66).
 */
static void test_gets_pipelined_no_timeouts(void **state)
{
	static const uint32_t drop[] = { 5 };
	UNET_OPTS_INIT(uam_ep_opts, o);
	struct seqlog *log = calloc(1, sizeof(*log));
	struct gets_out clean, lossy;
	int count = 8;

	(void)state;
	assert_non_null(log);
	o.window = 512;
	gets_run(&o, 8, 1 << 20, count, NULL, &clean);
	print_message("%d gets of 1 MiB, 2 in flight, window 512: %llu steps, up to %u frames "
		      "queued; side 0 retransmits %llu, timeouts %llu, srtt %llu ns\n",
		      count, (unsigned long long)clean.steps, clean.max_queue,
		      (unsigned long long)clean.st.retransmits,
		      (unsigned long long)clean.st.timeouts, (unsigned long long)clean.srtt_ns);
	/* the queue this is about: half a window and more */
	assert_true(clean.max_queue >= 256);
	assert_int_equal(clean.st.timeouts, 0);
	assert_int_equal(clean.st.retransmits, 0);
	/* the round trip (one step each way, the frame's turn, the ack's
	 * delay: 2.9 steps), not the wait behind the queue (63 steps) */
	assert_true(clean.srtt_ns <= 10 * STEP_NS);

	log->type = UAM_T_GET_REQ;
	log->drop = drop;
	log->ndrop = 1;
	gets_run(&o, 8, 1 << 20, count, log, &lossy);
	print_message("the sixth GET_REQ lost: %llu steps (%+lld), sent at step %llu, again at "
		      "%llu; retransmits %llu, timeouts %llu\n",
		      (unsigned long long)lossy.steps, (long long)(lossy.steps - clean.steps),
		      (unsigned long long)(log->first[5] / STEP_NS % 100000),
		      (unsigned long long)(log->last[5] / STEP_NS % 100000),
		      (unsigned long long)lossy.st.retransmits,
		      (unsigned long long)lossy.st.timeouts);
	assert_int_equal(log->ntx[5], 2);
	/* the queue in front (max_queue frames at 8 a step), then a probe
	 * (two round trips, less one: queue_progress) */
	assert_true(log->last[5] - log->first[5] <= (lossy.max_queue / 8 + 12) * STEP_NS);
	assert_int_equal(lossy.st.retransmits, 1);
	assert_int_equal(lossy.st.timeouts, 0);
	free(log);
}

/* A compact fragment as side `from` would send it: its session, ack and
 * credit, seq, the transfer's token, the offset from its start; the data
 * (dlen bytes of byte v) after the 24 bytes of header.  Returns the
 * frame's length. */
static uint32_t forge_cfrag(struct sim *sim, int from, uint8_t *f, uint8_t type, uint32_t seq,
			    uint32_t token, uint32_t rel, uint32_t dlen, uint8_t v)
{
	struct uam_chan *ch = sim->s[from].ch;

	memset(f, 0, UAM_CF_HDR_LEN);
	f[UAM_C_OFF_KIND] = UAM_C_FORMAT | type;
	f[UAM_C_OFF_CREDIT] = (uint8_t)(sim->s[from].ep->o.window / UAM_C_CREDIT_UNIT);
	wput32(f + UAM_C_OFF_SESSION, ch->session);
	wput32(f + UAM_C_OFF_SEQ, seq);
	wput32(f + UAM_C_OFF_ACK, ch->rcv_next);
	wput32(f + UAM_C_OFF_TOKEN, token);
	wput32(f + UAM_CF_OFF_REL, rel);
	memset(f + UAM_CF_HDR_LEN, v, dlen);
	return UAM_CF_HDR_LEN + dlen;
}

/* Where fragment k of a store with no args starts: the first has the
 * full header (1428 bytes), then compact ones (1468). */
#define FULL_ROOM (FRAME - UAM_HDR_LEN - UAM_FRAG_EXT)
#define CF_ROOM (FRAME - UAM_CF_HDR_LEN)
static size_t frag_start(uint32_t k)
{
	return k ? FULL_ROOM + (size_t)(k - 1) * CF_ROOM : 0;
}

/*
 * Fragments that come early (behind a lost one) of the transfer being
 * received are written into the region at once, so the receiver copies
 * them once (issue 11: at 1% loss most fragments wait behind some hole,
 * and copying each into the reorder slot and again into the region
 * doubled the receiver's copies).  A store of 10 fragments (the first
 * and the LAST with the full header, 8 compact between), one of them
 * lost (drop_k).  Fragment 1 (compact) lost: before it is resent,
 * fragments 2-9 must already be in place and fragment 1's bytes
 * untouched; early frames of another transfer (another token, full or
 * compact) are held but not placed; then the store completes with
 * everything there, once.  Fragment 0 lost (the first, which says what
 * the transfer is): nothing can be placed, all 9 wait whole in their
 * slots, and the store completes just the same.
 */
static void early_run(uint32_t drop_k)
{
	const uint32_t drop[] = { drop_k };
	const size_t n = frag_start(9) + FULL_ROOM;
	static uint8_t src[32768], dst[32768], zero[32768];
	struct seqlog *log = calloc(1, sizeof(*log));
	uint8_t f[UAM_HDR_LEN + UAM_FRAG_EXT + 100];
	struct sim *sim = sim_new(17, 0, 0, 0, NULL);
	struct counts c = { 0 };
	struct opdone d = { 0 };
	struct uam_chan *rx = sim->s[1].ch;

	assert_true(frags(n) == 10 && n <= sizeof(src));
	assert_non_null(log);
	memset(dst, 0, sizeof(dst));
	fill(src, n, 13);
	handlers(sim, &c);
	assert_int_equal(uam_region__register(sim->s[1].ep, 5, dst, sizeof(dst), UAM_REGION_WRITE), 0);
	/* one round trip first: side 0 learns side 1's credit */
	assert_true(uam_request(sim->s[0].ch, 99, NULL, 0) >= 0);
	for (int i = 0; i < 20; i++)
		step(sim);
	assert_int_equal(sim->s[0].ch->snd_una, sim->s[0].ch->snd_next);
	log->drop = drop;
	log->ndrop = 1;
	log->base = sim->s[0].ch->snd_next;
	sim->seqlog = log;
	assert_true(uam_store(sim->s[0].ch, src, n, 5, 0, H_STORED, NULL, 0, op_cb, &d) > 0);
	/* side 1 takes the 9 others; side 0 has not resent the lost one */
	sim->s[0].paused = true;
	step(sim);
	assert_int_equal(log->ntx[drop_k], 1);
	assert_int_equal(sim->cfrags[0], 8);
	assert_int_equal(sim->ffrags[0], 2);
	assert_int_equal(sim->cfrag_max, CF_ROOM);
	if (drop_k == 0) {
		assert_int_equal(rx->rx_held, 9);
		assert_memory_equal(dst, zero, sizeof(dst)); /* no transfer open */
		for (uint32_t k = 1; k < 10; k++)
			assert_false(rxs_placed(rx, rx->rcv_next + k));
	} else {
		assert_int_equal(rx->rx_held, 8);
		assert_memory_equal(dst, src, frag_start(1));			   /* in order */
		assert_memory_equal(dst + frag_start(1), zero, CF_ROOM);	   /* the hole */
		assert_memory_equal(dst + frag_start(2), src + frag_start(2), n - frag_start(2));
		for (uint32_t k = 2; k < 10; k++)
			assert_true(rxs_placed(rx, rx->rcv_next + k - 1));
		/* early frames of another transfer: held, not placed */
		forge_hdr(sim, 0, f, UAM_T_STORE, 0, 0, 0, rx->rcv_next + 20, 999, 5, 100);
		wput64(f + UAM_HDR_LEN, 20000);
		wput64(f + UAM_HDR_LEN + 8, 20000);
		wput64(f + UAM_HDR_LEN + 16, 200);
		memset(f + UAM_HDR_LEN + UAM_FRAG_EXT, 0xab, 100);
		feed(sim, 1, f, sizeof(f));
		feed(sim, 1, f, forge_cfrag(sim, 0, f, UAM_T_STORE, rx->rcv_next + 21, 999, 20100, 100, 0xcd));
		assert_int_equal(rx->rx_held, 10);
		assert_false(rxs_placed(rx, rx->rcv_next + 20));
		assert_false(rxs_placed(rx, rx->rcv_next + 21));
	}
	/* the hole is filled, the store completes */
	sim->s[0].paused = false;
	run_until(sim, &d.n, 10000);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.status, 0);
	assert_int_equal(c.stores, 1);
	assert_memory_equal(dst, src, n);
	assert_memory_equal(dst + n, zero, sizeof(dst) - n);
	sim->seqlog = NULL;
	free(log);
	sim_free(sim);
}

static void test_early_fragments_placed(void **state)
{
	(void)state;
	early_run(1);
	early_run(0);
}

/*
 * Stores and gets with compact fragments, content checked: 1 MiB each
 * way over a clean link, every fragment but the first and the LAST of
 * each transfer compact and carrying FRAME - 24 bytes (1468 at MTU 1500),
 * the exact count of frames; then a sender that uses only full-header
 * fragments (as a peer from before them: the receiver still takes
 * them), for a store and for a get's data; then the two mixed, at 5%
 * loss, 5% duplication and 5% reordering.  The store's args and the
 * handler's view (region, offset, length) as uam_store gave them.
 */
static void compact_round(struct sim *sim, struct counts *c, size_t n, uint64_t off,
			  const uint8_t *src, uint8_t *dst, uint8_t *back)
{
	struct opdone d = { 0 }, g = { 0 };
	uint64_t args[2] = { 0x1234, n };
	uint64_t stores = c->stores;

	memset(dst, 0, n + off + 64);
	memset(back, 0, n);
	assert_true(uam_store(sim->s[0].ch, src, n, 5, off, H_STORED, args, 2, op_cb, &d) > 0);
	run_until(sim, &d.n, 2000000);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.status, 0);
	assert_int_equal(c->stores, stores + 1);
	assert_int_equal(c->last_store.offset, off);
	assert_int_equal(c->last_store.len, n);
	assert_int_equal(c->last_store.nargs, 2);
	assert_int_equal(c->last_store.args[0], 0x1234);
	assert_int_equal(c->last_store.args[1], n);
	assert_memory_equal(dst + off, src, n);
	for (size_t i = 0; i < off; i++)
		assert_int_equal(dst[i], 0);
	for (size_t i = 0; i < 64; i++)
		assert_int_equal(dst[off + n + i], 0);
	assert_true(uam_get(sim->s[0].ch, 5, off, n, 9, 0, op_cb, &g) > 0);
	run_until(sim, &g.n, 2000000);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.status, 0);
	assert_memory_equal(back, src, n);
}

static void test_compact_frags(void **state)
{
	const size_t n = 1 << 20;
	uint8_t *src = malloc(n), *dst = malloc(n + 4096), *back = malloc(n);
	uint64_t room = FRAME - UAM_HDR_LEN - UAM_FRAG_EXT, nf;
	struct counts c = { 0 };
	struct sim *sim;

	(void)state;
	assert_non_null(src);
	assert_non_null(dst);
	assert_non_null(back);
	fill(src, n, 21);
	for (int k = 0; k < 4; k++) {
		sim = sim_new(70 + (uint64_t)k, k >= 2 ? 50000 : 0, k >= 2 ? 50000 : 0,
			      k >= 2 ? 50000 : 0, NULL);
		handlers(sim, &c);
		assert_int_equal(uam_region__register(sim->s[1].ep, 5, dst, n + 4096,
						      UAM_REGION_WRITE | UAM_REGION_READ), 0);
		assert_int_equal(uam_region__register(sim->s[0].ep, 9, back, n, UAM_REGION_WRITE), 0);
		if (k == 1) {
			/* older peers: full headers only, both ways */
			sim->s[0].ep->full_frags = true;
			sim->s[1].ep->full_frags = true;
		}
		if (k == 3) {
			/* a transfer whose fragments past an offset go with
			 * the full header again (as past 4 GiB): both kinds
			 * mixed in one transfer, at loss */
			sim->s[0].ep->cfrag_rel_max = 300000;
			sim->s[1].ep->cfrag_rel_max = 300000;
		}
		/* sizes around the boundaries: one frame (with 2 args, the
		 * LAST's room is 16 bytes less), two, three, and 1 MiB */
		compact_round(sim, &c, room - 16, 3, src, dst, back);
		compact_round(sim, &c, room - 15, 0, src, dst, back);
		compact_round(sim, &c, 2 * room - 16, 0, src, dst, back);
		compact_round(sim, &c, 2 * room - 15, 1, src, dst, back);
		compact_round(sim, &c, n, 100, src, dst, back);
		print_message("%s: compact fragments %llu out, %llu back (at most %u bytes), "
			      "full %llu out, %llu back\n",
			      k == 0 ? "clean" : k == 1 ? "full headers only" : k == 2 ? "5% loss+dup+reorder"
							 : "compact up to 300000, then full, lossy",
			      (unsigned long long)sim->cfrags[0], (unsigned long long)sim->cfrags[1],
			      sim->cfrag_max, (unsigned long long)sim->ffrags[0],
			      (unsigned long long)sim->ffrags[1]);
		if (k == 0) {
			/* the stores' frames: their fragments exactly, the
			 * LAST carrying 16 bytes of args */
			nf = 1 + 2 + 2 + 3 + (2 + (n - 2 * room + 16 + CF_ROOM - 1) / CF_ROOM);
			assert_int_equal(sim->cfrags[0] + sim->ffrags[0], nf);
			/* and the gets' (no args: the LAST has 16 bytes
			 * more room) */
			nf = 1 + 1 + 2 + 2 + frags(n);
			assert_int_equal(sim->cfrags[1] + sim->ffrags[1], nf);
			assert_int_equal(sim->ffrags[0], 1 + 2 + 2 + 2 + 2);
			assert_int_equal(sim->cfrag_max, CF_ROOM);
			assert_true(CF_ROOM >= 1456);
		} else if (k == 1) {
			assert_int_equal(sim->cfrags[0] + sim->cfrags[1], 0);
			assert_true(sim->ffrags[0] > 700 && sim->ffrags[1] > 700);
		} else if (k == 2) {
			assert_true(sim->cfrags[0] > 700 && sim->cfrags[1] > 700);
		} else {
			/* 1 MiB: ~204 compact, ~524 full middle ones, each
			 * way (and more repeats at loss) */
			assert_true(sim->cfrags[0] > 200 && sim->cfrags[1] > 200);
			assert_true(sim->ffrags[0] > 520 && sim->ffrags[1] > 520);
		}
		assert_int_equal(c.bad, 0);
		sim_free(sim);
	}
	free(src);
	free(dst);
	free(back);
}

/*
 * A compact fragment names its transfer by token and says only its
 * offset from the transfer's start: a hostile one must not write outside
 * the transfer its first fragment opened (and we checked), in order or
 * early, nor into another transfer, nor with no transfer open.  Region
 * 5 (8 KiB) takes transfers at [1000, 1100): each case opens one (a full
 * first fragment of 10 bytes, 0x11), sends one bad compact fragment, and
 * closes it with a LAST; nothing outside [1000, 1010) may change, every
 * transfer fails (no handler), and the channel goes on.  Malformed ones
 * (too short, their zero bytes set, longer than a frame) are dropped
 * before anything past the header is read, counted bad_frames.
 */
static void test_compact_frag_bounds(void **state)
{
	static uint8_t region[8192], want[8192];
	uint8_t f[FRAME + 8];
	struct sim *sim = sim_new(18, 0, 0, 0, NULL);
	struct uam_chan *rx = sim->s[1].ch;
	struct counts c = { 0 };
	struct uam_stats st;
	uint64_t bad0;
	uint32_t token = 500;

	(void)state;
	handlers(sim, &c);
	assert_int_equal(uam_region__register(sim->s[1].ep, 5, region, sizeof(region),
					      UAM_REGION_WRITE), 0);
	memset(want + 1000, 0x11, 10);
	for (int k = 0; k < 9; k++, token++) {
		uint32_t first = forge_seq(sim, 0), s1 = forge_seq(sim, 0), s2;

		forge_hdr(sim, 0, f, UAM_T_STORE, 0, 0, 0, first, token, 5, 10);
		wput64(f + UAM_HDR_LEN, 1000);
		wput64(f + UAM_HDR_LEN + 8, 1000);
		wput64(f + UAM_HDR_LEN + 16, 100);
		memset(f + UAM_HDR_LEN + UAM_FRAG_EXT, 0x11, 10);
		feed(sim, 1, f, UAM_HDR_LEN + UAM_FRAG_EXT + 10);
		assert_true(rx->xfer.active);
		assert_int_equal(rx->xfer.err, 0);
		switch (k) {
		case 0: /* in order, past the transfer's end (by 1) */
			feed(sim, 1, f, forge_cfrag(sim, 0, f, UAM_T_STORE, s1, token, 10, 91, 0xee));
			break;
		case 1: /* in order, far outside it (inside the region) */
			feed(sim, 1, f, forge_cfrag(sim, 0, f, UAM_T_STORE, s1, token, 5000, 16, 0xee));
			break;
		case 2: /* in order, over what was written */
			feed(sim, 1, f, forge_cfrag(sim, 0, f, UAM_T_STORE, s1, token, 0, 16, 0xee));
			break;
		case 3: /* another transfer's token */
			feed(sim, 1, f, forge_cfrag(sim, 0, f, UAM_T_STORE, s1, token + 1000, 10, 16, 0xee));
			break;
		case 4: /* GET_DATA into a store */
			feed(sim, 1, f, forge_cfrag(sim, 0, f, UAM_T_GET_DATA, s1, token, 10, 16, 0xee));
			break;
		case 5: /* early, past the transfer's end (by 1) */
		case 6: /* early, far outside it */
		case 7: /* early, over what was written in order */
		case 8: /* early, the offset wrapping past 2^32 */ {
			static const uint32_t rel[] = { 50, 5000, 2, 0xfffffff0u }, dl[] = { 51, 16, 16, 32 };

			s2 = forge_seq(sim, 0); /* s1 is the hole */
			feed(sim, 1, f, forge_cfrag(sim, 0, f, UAM_T_STORE, s2, token, rel[k - 5],
						    dl[k - 5], 0xee));
			assert_true(rx->rx_held == 1 && !rxs_placed(rx, s2));
			assert_memory_equal(region, want, sizeof(region));
			/* then the hole: a fragment that is right */
			feed(sim, 1, f, forge_cfrag(sim, 0, f, UAM_T_STORE, s1, token, 10, 10, 0x11));
			memset(want + 1010, 0x11, 10);
			break;
		}
		}
		forge_hdr(sim, 0, f, UAM_T_STORE, UAM_F_LAST, 0, H_STORED, forge_seq(sim, 0), token, 5,
			  10);
		wput64(f + UAM_HDR_LEN, 1090);
		wput64(f + UAM_HDR_LEN + 8, 1000);
		wput64(f + UAM_HDR_LEN + 16, 100);
		memset(f + UAM_HDR_LEN + UAM_FRAG_EXT, 0x22, 10);
		feed(sim, 1, f, UAM_HDR_LEN + UAM_FRAG_EXT + 10);
		if (memcmp(region, want, sizeof(region)))
			print_message("case %d wrote outside its transfer\n", k);
		assert_memory_equal(region, want, sizeof(region));
		assert_false(rx->xfer.active);
		assert_int_equal(rx->rx_held, 0);
		assert_int_equal(c.stores, 0);
		memset(region + 1000, 0, 100);
		memset(want + 1000, 0, 100);
		memset(want + 1000, 0x11, 10);
	}
	memset(want + 1000, 0, 10);
	/* no transfer open: dropped */
	uam_chan__stats(rx, &st);
	bad0 = st.bad_frames;
	feed(sim, 1, f, forge_cfrag(sim, 0, f, UAM_T_STORE, forge_seq(sim, 0), token - 1, 0, 16, 0xee));
	uam_chan__stats(rx, &st);
	assert_int_equal(st.bad_frames, bad0 + 1);
	assert_int_equal(rx->rcv_next, sim->s[0].ch->snd_next); /* taken in sequence, then dropped */
	/* malformed: no data, a zero byte set, longer than a frame, shorter
	 * than the header; none takes a sequence number */
	forge_cfrag(sim, 0, f, UAM_T_STORE, sim->s[0].ch->snd_next, token - 1, 0, 0, 0);
	feed(sim, 1, f, UAM_CF_HDR_LEN);
	feed(sim, 1, f, UAM_CF_HDR_LEN - 1);
	feed(sim, 1, f, UAM_C_HDR_LEN);
	f[UAM_CF_OFF_ZERO] = 1;
	feed(sim, 1, f, UAM_CF_HDR_LEN + 8);
	f[UAM_CF_OFF_ZERO] = 0;
	f[UAM_CF_OFF_ZERO + 1] = 3;
	feed(sim, 1, f, UAM_CF_HDR_LEN + 8);
	f[UAM_CF_OFF_ZERO + 1] = 0;
	feed(sim, 1, f, FRAME + 1);
	uam_chan__stats(rx, &st);
	assert_int_equal(st.bad_frames, bad0 + 1 + 6);
	assert_int_equal(rx->rcv_next, sim->s[0].ch->snd_next);
	assert_memory_equal(region, want, sizeof(region));
	/* and a store that is right goes through, compact fragments and all */
	{
		static uint8_t src[5000];
		struct opdone d = { 0 };

		fill(src, sizeof(src), 3);
		memset(region, 0, sizeof(region));
		assert_true(uam_store(sim->s[0].ch, src, sizeof(src), 5, 3000, H_STORED, NULL, 0,
				      op_cb, &d) > 0);
		run_until(sim, &d.n, 10000);
		assert_int_equal(d.status, 0);
		assert_memory_equal(region + 3000, src, sizeof(src));
		assert_true(sim->cfrags[0] >= 2);
	}
	assert_int_equal(c.stores, 1);
	assert_int_equal(uam_chan__error(rx), 0);
	sim_free(sim);
}

/* A kept buffer goes back to the transport only once no unflushed batch
 * names it (sim_buf_put checks): a peer that acknowledges a medium
 * message still corked in our batch (it cannot have had it), and a
 * channel closed with one corked, end the batch first.  Given back
 * while named, the buffer could be handed out for the next frame of
 * the same batch, which would go out twice, once to this peer. */
static void test_kept_unflushed(void **state)
{
	struct sim *sim = sim_new(26, 0, 0, 0, NULL);
	struct uam_chan *ch = sim->s[0].ch;
	struct side *s0 = &sim->s[0];
	uint8_t payload[1000], f[UAM_HDR_LEN];
	struct counts c = { 0 };
	uint32_t gen;

	(void)state;
	handlers(sim, &c);
	memset(payload, 0x5a, sizeof(payload));
	/* both sessions known, everything acknowledged */
	assert_true(uam_request(ch, H_ECHO, (uint64_t[]){ 0, ~0ull }, 2) >= 0);
	for (int i = 0; i < 100; i++)
		step(sim);
	assert_int_equal(c.reps, 1);
	assert_int_equal(ch->snd_una, ch->snd_next);

	/* the peer acknowledges a medium request that waits in our batch */
	uam_ep__cork(s0->ep);
	gen = s0->ep->tx_gen;
	assert_true(uam_request_medium(ch, H_STORED, NULL, 0, payload, sizeof(payload)) >= 0);
	assert_int_equal(s0->kept_tx, 1);
	assert_int_equal(s0->kept_out, 1);
	assert_int_equal(s0->ep->tx_gen, gen); /* corked: not flushed */
	forge_hdr(sim, 1, f, UAM_T_ACK, 0, 0, 0, 0, 0, 0, 0);
	wput32(f + UAM_OFF_ACK, ch->snd_next);
	feed(sim, 0, f, UAM_HDR_LEN);
	assert_int_equal(ch->snd_una, ch->snd_next); /* taken */
	assert_int_equal(s0->kept_out, 0);
	assert_int_equal(s0->ep->tx_gen, gen + 1); /* the batch went first */

	/* the channel closes with one in the batch */
	gen = s0->ep->tx_gen;
	assert_true(uam_request_medium(ch, H_STORED, NULL, 0, payload, sizeof(payload)) >= 0);
	assert_int_equal(s0->kept_tx, 2);
	assert_int_equal(s0->ep->tx_gen, gen);
	uamp_chan_free(ch);
	s0->ch = NULL;
	assert_int_equal(s0->kept_out, 0);
	assert_int_equal(s0->ep->tx_gen, gen + 1);
	uam_ep__uncork(s0->ep);
	sim_free(sim);
}

/* A corked endpoint (uam_ep__cork: sends wait for one kick) still keeps
 * time: its timers resend what was lost while it stays corked (a clock
 * read once per cork froze them, and a lossy corked sender stalled). */
static void test_cork_keeps_time(void **state)
{
	struct sim *sim = sim_new(41, 100000, 0, 0, NULL);

	(void)state;
	uam_ep__cork(sim->s[0].ep);
	uam_ep__cork(sim->s[0].ep);
	assert_int_equal(uam_ep__uncork(sim->s[0].ep), 0);
	run_requests(sim, 2000);
	assert_int_equal(uam_ep__uncork(sim->s[0].ep), 0);
	assert_int_equal(uam_ep__uncork(sim->s[0].ep), -EINVAL);
	sim_free(sim);
}

/* A DONE counts only for an op of the channel it came on, of the right
 * type, once the peer has acknowledged all of the op's frames: one sent
 * early must not complete a store whose fragments are still queued (the
 * application would free the source while they are read). */
static void test_done_premature(void **state)
{
	size_t n = 64 << 10;
	uint8_t *src = malloc(n), *dst = calloc(1, n), f[UAM_HDR_LEN];
	struct sim *sim = sim_new(14, 0, 0, 0, NULL);
	struct counts c = { 0 };
	struct opdone d = { 0 };
	int id;

	(void)state;
	assert_non_null(src);
	assert_non_null(dst);
	fill(src, n, 3);
	handlers(sim, &c);
	assert_int_equal(uam_region__register(sim->s[1].ep, 5, dst, n, UAM_REGION_WRITE), 0);
	id = uam_store(sim->s[0].ch, src, n, 5, 0, H_STORED, NULL, 0, op_cb, &d);
	assert_true(id > 0);
	forge_hdr(sim, 1, f, UAM_T_DONE, 0, 0, 0, forge_seq(sim, 1), (uint32_t)id, 0, 0);
	feed(sim, 0, f, UAM_HDR_LEN);
	assert_int_equal(d.n, 0);
	/* the real one completes it, with all the data there */
	run_until(sim, &d.n, 100000);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.status, 0);
	assert_int_equal(c.stores, 1);
	assert_memory_equal(dst, src, n);
	sim_free(sim);
	free(src);
	free(dst);
}

/* The frame of the given type on its way to side `to`. */
static struct pkt *on_link(struct sim *sim, int to, uint8_t type)
{
	struct pkt *p;

	for (p = sim->s[to].head; p && p->data[UAM_OFF_TYPE] != type; p = p->next)
		;
	assert_non_null(p);
	return p;
}

/* Answers on the wrong channel or of the wrong type are refused; the
 * status a DONE carries reaches the application as 0, -EFAULT or
 * -EPROTO, nothing else. */
static void test_done_checks(void **state)
{
	uint8_t src[3000], mine[256] = { 0 }, zero[256] = { 0 }, dst[4096];
	static const uint32_t odd[] = { 5, (uint32_t)-EPERM, (uint32_t)-ETIMEDOUT };
	struct sim *sim = sim_new(15, 0, 0, 0, NULL);
	struct counts c = { 0 };
	struct opdone d = { 0 };
	struct uam_chan *other;
	struct uam_stats st;
	struct pkt *p, *q;
	int id;

	(void)state;
	fill(src, sizeof(src), 5);
	handlers(sim, &c);
	assert_int_equal(uam_region__register(sim->s[1].ep, 5, dst, sizeof(dst), UAM_REGION_WRITE), 0);
	assert_int_equal(uam_region__register(sim->s[0].ep, 9, mine, sizeof(mine), UAM_REGION_WRITE), 0);
	/* a store of 3 fragments: delivered and acknowledged, its DONE held */
	sim->s[0].paused = true;
	id = uam_store(sim->s[0].ch, src, sizeof(src), 5, 0, H_STORED, NULL, 0, op_cb, &d);
	assert_true(id > 0);
	for (int i = 0; i < 10; i++)
		step(sim);
	assert_int_equal(c.stores, 1);
	/* a DONE on another channel of the endpoint: not that channel's op */
	other = uamp_chan_new(sim->s[0].ep, &sim->s[0]);
	assert_non_null(other);
	{
		uint8_t f[UAM_HDR_LEN];

		/* the start of a stream: `other` takes it as its peer's */
		forge_hdr(sim, 1, f, UAM_T_DONE, 0, 0, 0,
			  uamp_isn(sim->s[1].ep, sim->s[1].ch->session), (uint32_t)id, 0, 0);
			uamp_input(other, f, UAM_HDR_LEN);
		assert_int_equal(other->peer_session, sim->s[1].ch->session);
	}
	assert_int_equal(d.n, 0);
	uamp_chan_free(other);
	/* the DONE on the link turned into GET_DATA for the store: not a
	 * get, nothing written, nothing completed */
	p = on_link(sim, 0, UAM_T_DONE);
	assert_true(p == sim->s[0].head && !p->next);
	q = malloc(sizeof(*q) + UAM_HDR_LEN + UAM_FRAG_EXT + 16);
	assert_non_null(q);
	q->next = NULL;
	q->at = 0; /* due at once */
	q->len = UAM_HDR_LEN + UAM_FRAG_EXT + 16;
	memcpy(q->data, p->data, UAM_HDR_LEN);
	q->data[UAM_OFF_TYPE] = UAM_T_GET_DATA;
	q->data[UAM_OFF_FLAGS] = UAM_F_LAST;
	wput32(q->data + UAM_OFF_AUX, 9);
	wput32(q->data + UAM_OFF_DLEN, 16);
	wput64(q->data + UAM_HDR_LEN, 0);
	wput64(q->data + UAM_HDR_LEN + 8, 0);
	wput64(q->data + UAM_HDR_LEN + 16, 16);
	memset(q->data + UAM_HDR_LEN + UAM_FRAG_EXT, 0xee, 16);
	sim->s[0].head = sim->s[0].tail = q;
	free(p);
	sim->s[0].paused = false;
	for (int i = 0; i < 100; i++)
		step(sim);
	assert_int_equal(d.n, 0);
	assert_memory_equal(mine, zero, sizeof(mine));
	uam_chan__stats(sim->s[0].ch, &st);
	assert_int_equal(st.bad_frames, 1);
	/* statuses the peer has no business sending */
	for (size_t k = 0; k < sizeof(odd) / sizeof(odd[0]); k++) {
		d.n = 0;
		sim->s[0].paused = true;
		assert_true(uam_store(sim->s[0].ch, src, 100, 5, 0, H_STORED, NULL, 0, op_cb, &d) > 0);
		for (int i = 0; i < 10; i++)
			step(sim);
		wput32(on_link(sim, 0, UAM_T_DONE)->data + UAM_OFF_AUX, odd[k]);
		sim->s[0].paused = false;
		run_until(sim, &d.n, 1000);
		assert_int_equal(d.n, 1);
		assert_int_equal(d.status, -EPROTO);
	}
	/* and the channel still works */
	d.n = 0;
	assert_true(uam_store(sim->s[0].ch, src, 100, 5, 0, H_STORED, NULL, 0, op_cb, &d) > 0);
	run_until(sim, &d.n, 1000);
	assert_int_equal(d.status, 0);
	sim_free(sim);
}

/* A store's handler sees only offsets and lengths inside the region
 * (checked without overflow), and fragments that cover exactly what the
 * store claims. */
static void test_store_claims(void **state)
{
	static const uint64_t bad[][3] = {
		/* off, base, total */
		{ 0, 1ull << 40, 1ull << 62 },		/* far outside */
		{ 100, 100, UINT64_MAX - 50 },		/* base + total wraps */
		{ 0, 0, 4096 + 1 },			/* one past the end */
		{ 16, 0, 32 },				/* the start is missing */
		{ 0, 0, 32 },				/* the end is missing */
		{ 4090, 4090, 16 },			/* data past the end */
	};
	uint8_t buf[4096], f[UAM_HDR_LEN + UAM_FRAG_EXT + 16];
	struct sim *sim = sim_new(16, 0, 0, 0, NULL);
	struct counts c = { 0 };
	struct uam_stats st;

	(void)state;
	handlers(sim, &c);
	assert_int_equal(uam_region__register(sim->s[1].ep, 5, buf, sizeof(buf), UAM_REGION_WRITE), 0);
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		uint8_t *p = f + UAM_HDR_LEN;

		forge_hdr(sim, 0, f, UAM_T_STORE, UAM_F_LAST, 0, H_STORED, forge_seq(sim, 0), 77, 5, 16);
		wput64(p, bad[k][0]);
		wput64(p + 8, bad[k][1]);
		wput64(p + 16, bad[k][2]);
		memset(p + UAM_FRAG_EXT, 0xab, 16);
		feed(sim, 1, f, sizeof(f));
		if (c.stores)
			print_message("claim %zu: handler saw offset %llu len %llu\n", k,
				      (unsigned long long)c.last_store.offset,
				      (unsigned long long)c.last_store.len);
		assert_int_equal(c.stores, 0);
	}
	uam_chan__stats(sim->s[1].ch, &st);
	assert_int_equal(st.stores, sizeof(bad) / sizeof(bad[0]));
	sim_free(sim);
}

/* Handlers and op callbacks that close their own channel: the protocol
 * must not touch the channel after they return (it used to, in
 * uamp_input and uamp_tick: use after free, which ASan reports). */
static void h_close(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	struct side *s = ctx;

	(void)ep;
	if (uam_reply(m, H_ECHO_REPLY, NULL, 0) != 0)
		s->sim->lost++; /* counted as a failure below */
	uamp_chan_free(m->chan);
	s->ch = NULL;
}

static void cb_close(struct uam_ep *ep, int op, int status, void *ctx)
{
	struct side *s = ctx;

	(void)ep;
	(void)op;
	(void)status;
	if (s->ch) {
		uamp_chan_free(s->ch);
		s->ch = NULL;
	}
}

static void test_handler_closes_channel(void **state)
{
	UNET_OPTS_INIT(uam_ep_opts, o);
	uint8_t buf[8192] = { 0 }, src[8192] = { 0 };
	uint64_t a[2] = { 0, ~0ull };
	struct sim *sim;

	(void)state;
	/* a request handler, with more frames of the channel behind it
	 * (some of them held early, delivered in the same call) */
	sim = sim_new(17, 0, 0, 300000, NULL);
	uam_ep__set_handler(sim->s[1].ep, H_ECHO, h_close, &sim->s[1]);
	for (int i = 0; i < 4; i++)
		assert_true(uam_request(sim->s[0].ch, H_ECHO, a, 2) >= 0);
	for (int i = 0; i < 100; i++)
		step(sim);
	assert_null(sim->s[1].ch);
	assert_int_equal(sim->lost, 0);
	sim_free(sim);

	/* a store's callback, run on its DONE, closing with ops pending */
	sim = sim_new(18, 0, 0, 0, NULL);
	assert_int_equal(uam_region__register(sim->s[1].ep, 5, buf, sizeof(buf), UAM_REGION_WRITE), 0);
	for (int i = 0; i < 3; i++)
		assert_true(uam_store(sim->s[0].ch, src, 3000, 5, 0, 0, NULL, 0, cb_close,
				      &sim->s[0]) > 0);
	for (int i = 0; i < 100; i++)
		step(sim);
	assert_null(sim->s[0].ch);
	sim_free(sim);

	/* callbacks run by the timer when the peer vanished: uamp_tick
	 * walks on through the channels */
	o.timeout_ms = 50;
	sim = sim_new(19, 0, 0, 0, &o);
	for (int i = 0; i < 3; i++)
		assert_true(uam_store(sim->s[0].ch, src, 3000, 5, 0, 0, NULL, 0, cb_close,
				      &sim->s[0]) > 0);
	sim->s[1].dead = true;
	for (int i = 0; i < 5000 && sim->s[0].ch; i++)
		step(sim);
	assert_null(sim->s[0].ch);
	sim_free(sim);
}

/* The peer-failure timer measures silence from the peer, not local queue
 * pressure: sends that met -EAGAIN are not the peer's fault (a channel
 * whose first sends did failed with -ETIMEDOUT at once). */
static void test_timeout_not_local_pressure(void **state)
{
	UNET_OPTS_INIT(uam_ep_opts, o);
	struct sim *sim;
	struct counts c = { 0 };
	uint64_t a[2] = { 0, ~0ull };

	(void)state;
	o.timeout_ms = 100;
	sim = sim_new(20, 0, 0, 0, &o);
	handlers(sim, &c);
	/* the first send meets a full transport for 3 timeouts */
	sim->s[0].blocked = true;
	assert_int_equal(uam_request(sim->s[0].ch, H_ECHO, a, 2), 0);
	for (int i = 0; i < 3 * 100 * 1000000 / STEP_NS; i++)
		step(sim);
	assert_int_equal(uam_chan__error(sim->s[0].ch), 0);
	sim->s[0].blocked = false;
	for (int i = 0; i < 100 && c.reps < 1; i++)
		step(sim);
	assert_int_equal(c.reps, 1);
	/* (until the peer has our ack of its reply: else it would rightly
	 * time out on us while we cannot send) */
	for (int i = 0; i < 1000; i++)
		step(sim);
	assert_int_equal(sim->s[1].ch->snd_una, sim->s[1].ch->snd_next);
	/* a frame sent and lost; its retransmissions meet a full transport
	 * for 3 timeouts */
	a[0] = 1;
	a[1] = ~1ull;
	assert_int_equal(uam_request(sim->s[0].ch, H_ECHO, a, 2), 1);
	side_drain(&sim->s[1]);
	sim->s[0].blocked = true;
	for (int i = 0; i < 3 * 100 * 1000000 / STEP_NS; i++)
		step(sim);
	assert_int_equal(uam_chan__error(sim->s[0].ch), 0);
	sim->s[0].blocked = false;
	for (int i = 0; i < 100000 && c.reps < 2; i++)
		step(sim);
	assert_int_equal(c.reps, 2);
	assert_int_equal(uam_chan__error(sim->s[0].ch), 0);
	/* and a peer that is gone is still found out within timeout_ms */
	sim->s[1].dead = true;
	a[0] = 2;
	a[1] = ~2ull;
	assert_int_equal(uam_request(sim->s[0].ch, H_ECHO, a, 2), 2);
	for (int i = 0; i < 100 * 1000000 / STEP_NS + 2; i++)
		step(sim);
	assert_int_equal(uam_chan__error(sim->s[0].ch), -ETIMEDOUT);
	sim_free(sim);
}

/* A channel closed and opened again on the same endpoint gets a fresh
 * session: the peer's channel fails at once with -ECONNRESET (it used to
 * drop the new frames as duplicates until a timeout), and the peer's new
 * channel takes the new session cleanly, whatever frames of the old ones
 * are still on the link. */
static void test_reopen_new_session(void **state)
{
	struct sim *sim = sim_new(21, 0, 0, 0, NULL);
	struct counts c = { 0 }, c2[2] = { { 0 }, { 0 } };
	uint32_t old_session = sim->s[1].ch->session;
	uint64_t a[2] = { 0, ~0ull }, stale[2] = { 77, ~77ull };
	int i;

	(void)state;
	handlers(sim, &c);
	assert_int_equal(uam_request(sim->s[0].ch, H_ECHO, a, 2), 0);
	for (i = 0; i < 100; i++)
		step(sim);
	assert_int_equal(c.reps, 1);
	/* frames of the old channels still on the link both ways */
	assert_int_equal(uam_request(sim->s[0].ch, H_ECHO, stale, 2), 1);
	assert_int_equal(uam_request(sim->s[1].ch, H_ECHO, stale, 2), 0);
	/* side 1 closes and opens its channel again */
	uamp_chan_free(sim->s[1].ch);
	sim->s[1].ch = uamp_chan_new(sim->s[1].ep, &sim->s[1]);
	assert_non_null(sim->s[1].ch);
	assert_int_not_equal(sim->s[1].ch->session, old_session);
	assert_int_equal(uam_request(sim->s[1].ch, H_ECHO, a, 2), 0);
	for (i = 0; i < 100 && !uam_chan__error(sim->s[0].ch); i++)
		step(sim);
	assert_int_equal(uam_chan__error(sim->s[0].ch), -ECONNRESET);
	/* (side 0's old channel took side 1's stale request before that);
	 * from here each side counts what it handles on its own */
	for (i = 0; i < 2; i++) {
		uam_ep__set_handler(sim->s[i].ep, H_ECHO, h_echo, &c2[i]);
		uam_ep__set_handler(sim->s[i].ep, H_ECHO_REPLY, h_echo_reply, &c2[i]);
	}
	/* side 0 opens its side again: both work, in both directions */
	uamp_chan_free(sim->s[0].ch);
	sim->s[0].ch = uamp_chan_new(sim->s[0].ep, &sim->s[0]);
	assert_non_null(sim->s[0].ch);
	assert_int_equal(uam_request(sim->s[0].ch, H_ECHO, a, 2), 0);
	for (i = 0; i < 20000 && c2[0].reps + c2[1].reps < 2; i++)
		step(sim);
	print_message("reopened: both round trips after %d steps\n", i);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(c2[k].reqs, 1);
		assert_int_equal(c2[k].reps, 1);
		assert_int_equal(c2[k].bad, 0);
	}
	assert_int_equal(uam_chan__error(sim->s[0].ch), 0);
	assert_int_equal(uam_chan__error(sim->s[1].ch), 0);
	sim_free(sim);
}

/* ---- Fuzzing uamp_input ------------------------------------------------- */

#define FUZZ_SEED 0x5eed0f2aull
#define FUZZ_INPUTS 200000
#define FUZZ_REGION 65536
/* what fz_work sends from: the largest store (3 jumbo frames + 500) */
#define FUZZ_SRC 32768

struct fuzz {
	uint64_t rng;
	uint8_t *r0, *r1; /* side 0's region 9, side 1's region 5 */
	uint64_t handled, ops_done, bad;
	uint64_t compact_in, compact_handled; /* inputs with the compact header, and messages from them */
	/* compact fragments: inputs, those taken in sequence (the transfer
	 * moved on) or placed early, and those aimed at the open transfer */
	uint64_t cfrag_in, cfrag_taken, cfrag_placed, cfrag_aimed, cfrag_opened;
	uint64_t sum; /* of payload bytes read: ASan sees a payload past its frame */
};

static uint64_t frnd(struct fuzz *z)
{
	z->rng ^= z->rng << 13;
	z->rng ^= z->rng >> 7;
	z->rng ^= z->rng << 17;
	return z->rng;
}

static void fz_handler(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	struct fuzz *z = ctx;

	(void)ep;
	z->handled++;
	if (m->nargs > UAM_MAX_ARGS)
		z->bad++;
	/* a store's handler sees only what lies in the region */
	if (m->kind == UAM_MSG_STORE && ((m->region != 5 && m->region != 9) ||
					 m->offset > FUZZ_REGION || m->len > FUZZ_REGION - m->offset))
		z->bad++;
	/* a medium payload lies within the frame the handler was given,
	 * beside the smallest header and its args */
	if ((m->kind == UAM_MSG_REQUEST || m->kind == UAM_MSG_REPLY) &&
	    (m->data_len > sim_frame - UAM_C_HDR_LEN - m->nargs * 8u || (m->data_len && !m->data)))
		z->bad++;
	if (m->data_len)
		z->sum += ((const uint8_t *)m->data)[0] + ((const uint8_t *)m->data)[m->data_len - 1];
	if (m->kind == UAM_MSG_REQUEST)
		uam_reply_medium(m, 2, m->args, m->nargs, m->data, m->data_len);
}

static void fz_op(struct uam_ep *ep, int op, int status, void *ctx)
{
	struct fuzz *z = ctx;

	(void)ep;
	(void)op;
	z->ops_done++;
	if (status != 0 && status != -EFAULT && status != -EPROTO && status != -ECONNRESET &&
	    status != -ETIMEDOUT)
		z->bad++;
}

/* Both sides at work: requests, stores and gets each way. */
static void fz_work(struct sim *sim, struct fuzz *z, uint8_t *src)
{
	uint64_t a[UAM_MAX_ARGS] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	for (int i = 0; i < 2; i++) {
		struct uam_chan *ch = sim->s[i].ch;
		uint32_t peer_region = i ? 9 : 5, mine = i ? 5 : 9;
		uint64_t off = frnd(z) % (FUZZ_REGION / 2), len = frnd(z) % (3 * sim_frame + 500);
		unsigned int na;

		if (!ch || ch->err)
			continue;
		uam_request(ch, 1, a, (unsigned int)(frnd(z) % (UAM_MAX_ARGS + 1)));
		/* medium messages too, so their frames are in the corpus */
		na = (unsigned int)(frnd(z) % (UAM_MAX_ARGS + 1));
		uam_request_medium(ch, 1, a, na, src,
				   frnd(z) % (uam_ep__medium_max_args(sim->s[i].ep, na) + 1));
		/* the largest a frame takes: 1472 bytes, no args */
		if (frnd(z) % 4 == 0)
			uam_request_medium(ch, 1, a, 0, src, uam_ep__medium_max_args(sim->s[i].ep, 0));
		uam_store(ch, src, len, peer_region, off, 1, a, 3, fz_op, z);
		uam_get(ch, peer_region, off, len, mine, off, fz_op, z);
	}
}

static struct sim *fz_sim(struct fuzz *z, uint8_t *src, struct pkt **corpus, uint32_t max)
{
	struct sim *sim = sim_new(frnd(z) | 1, 0, 0, 0, NULL);

	for (int i = 0; i < 2; i++)
		for (int h = 0; h < 4; h++)
			uam_ep__set_handler(sim->s[i].ep, (unsigned int)h, fz_handler, z);
	assert_int_equal(uam_region__register(sim->s[0].ep, 9, z->r0, FUZZ_REGION,
					      UAM_REGION_WRITE | UAM_REGION_READ), 0);
	assert_int_equal(uam_region__register(sim->s[1].ep, 5, z->r1, FUZZ_REGION,
					      UAM_REGION_WRITE | UAM_REGION_READ), 0);
	sim->corpus = corpus;
	sim->max_corpus = max;
	/* traffic both ways, so the victim (side 1) has ops in progress for
	 * DONE and GET_DATA to name, and a stream to land in */
	for (int k = 0; k < 20; k++) {
		fz_work(sim, z, src);
		for (int i = 0; i < 5; i++)
			step(sim);
	}
	sim->corpus = NULL;
	return sim;
}

/*
 * A compact fragment aimed at the transfer side 1 has open (as a hostile
 * peer that knows its token would): that transfer's type and token, an
 * offset at or around where it goes on, or around its end, and a length
 * around what is left of it (or around the largest frame).  Most of them
 * are taken, and the rest must be refused without a write outside the
 * transfer.  Returns the new length.
 */
static uint32_t fz_aim(struct fuzz *z, struct sim *sim, uint8_t *out, uint32_t len)
{
	const struct uam_chan *v = sim->s[1].ch;
	uint64_t at, left, rel, dl;

	if (!v)
		return len;
	if (!v->xfer.active || v->xfer.err) {
		/* None open: open one, with a full first fragment in
		 * sequence (into region 5, mostly inside it), for the next
		 * aimed ones; one that failed is closed first, by a LAST
		 * fragment with no data. */
		uint64_t base = frnd(z) % FUZZ_REGION, total = frnd(z) % 8000;
		uint32_t d = (uint32_t)(frnd(z) % (total < 1428 ? total + 1 : 1429));
		uint8_t c[UAM_C_HDR_LEN];

		if (frnd(z) % 8 == 0)
			total = frnd(z) % 2 ? UINT64_MAX - base + 1 : 1ull << 40;
		memcpy(c, out, UAM_C_HDR_LEN);
		memset(out, 0, UAM_HDR_LEN);
		out[UAM_OFF_VERSION] = UAM_WIRE_VERSION;
		out[UAM_OFF_TYPE] = UAM_T_STORE;
		wput16(out + UAM_OFF_CREDIT, c[UAM_C_OFF_CREDIT] * UAM_C_CREDIT_UNIT);
		memcpy(out + UAM_OFF_SESSION, c + UAM_C_OFF_SESSION, 4);
		wput32(out + UAM_OFF_SEQ, v->rcv_next);
		memcpy(out + UAM_OFF_ACK, c + UAM_C_OFF_ACK, 4);
		wput32(out + UAM_OFF_TOKEN, (uint32_t)frnd(z));
		wput32(out + UAM_OFF_AUX, 5);
		if (v->xfer.active) {
			out[UAM_OFF_FLAGS] = UAM_F_LAST;
			d = 0;
		}
		wput32(out + UAM_OFF_DLEN, d);
		wput64(out + UAM_HDR_LEN, base);
		wput64(out + UAM_HDR_LEN + 8, base);
		wput64(out + UAM_HDR_LEN + 16, total);
		for (uint32_t i = 0; i < d; i++)
			out[UAM_HDR_LEN + UAM_FRAG_EXT + i] = (uint8_t)frnd(z);
		z->cfrag_opened++;
		return UAM_HDR_LEN + UAM_FRAG_EXT + d;
	}
	z->cfrag_aimed++;
	at = v->xfer.next - v->xfer.base;
	left = v->xfer.total - at;
	switch (frnd(z) % 8) {
	default:
		rel = at;
		break;
	case 5:
		rel = at + (frnd(z) % 2 ? 1 : -1ull);
		break;
	case 6:
		rel = v->xfer.total - (frnd(z) % 3);
		break;
	case 7:
		rel = at + left + (frnd(z) % 3);
		break;
	}
	switch (frnd(z) % 4) {
	case 0:
		dl = left + (frnd(z) % 3) - 1;
		break;
	case 1:
		dl = sim_frame - UAM_CF_HDR_LEN + (frnd(z) % 3) - 1;
		break;
	default:
		dl = 1 + frnd(z) % (left < 2000 ? left + 1 : 2000);
		break;
	}
	if (dl > (1 << 17) - UAM_CF_HDR_LEN)
		dl = (1 << 17) - UAM_CF_HDR_LEN;
	out[UAM_C_OFF_KIND] = UAM_C_FORMAT | v->xfer.type;
	out[UAM_CF_OFF_ZERO] = out[UAM_CF_OFF_ZERO + 1] = 0;
	wput32(out + UAM_C_OFF_TOKEN, v->xfer.token);
	wput32(out + UAM_CF_OFF_REL, (uint32_t)rel);
	for (uint32_t i = len; i < UAM_CF_HDR_LEN + dl; i++)
		out[i] = (uint8_t)frnd(z);
	return UAM_CF_HDR_LEN + (uint32_t)dl;
}

/* One mutation of a frame side 0 sent, into out (room for 1 << 17). */
static uint32_t fz_mutate(struct fuzz *z, struct sim *sim, const struct pkt *p, uint8_t *out)
{
	static const uint64_t edges[] = { 0, 1, 7, 8, 0x7fffffff, 0x80000000, 0xffffffff,
					  FUZZ_REGION - 1, FUZZ_REGION, FUZZ_REGION + 1,
					  1ull << 32, 1ull << 63, UINT64_MAX, UINT64_MAX - 7 };
	uint32_t len = p->len, n;
	uint64_t r = frnd(z);

	memcpy(out, p->data, len);
	/* most inputs in the stream's window, so they reach deliver() */
	if (is_compact_frame(out) && len >= UAM_C_HDR_LEN && r % 4 != 0)
		wput32(out + UAM_C_OFF_SEQ, sim->s[1].ch ? sim->s[1].ch->rcv_next + (uint32_t)(frnd(z) % 3) : 0);
	else if (len >= UAM_HDR_LEN && r % 4 != 0)
		wput32(out + UAM_OFF_SEQ, sim->s[1].ch ? sim->s[1].ch->rcv_next + (uint32_t)(frnd(z) % 3) : 0);
	/* half the compact fragments aimed at the open transfer */
	if (is_cfrag(out) && len >= UAM_CF_HDR_LEN && sim->s[1].ch && (r >> 40) % 2 == 0) {
		len = fz_aim(z, sim, out, len);
		if (is_cfrag(out)) /* in sequence, or early */
			wput32(out + UAM_C_OFF_SEQ,
			       sim->s[1].ch->rcv_next + (frnd(z) % 2 ? 0 : 1 + (uint32_t)(frnd(z) % 3)));
		return len;
	}
	switch ((r >> 8) % 8) {
	case 0: /* random bytes, random length */
		len = (uint32_t)(frnd(z) % (sim_frame + 500));
		for (uint32_t i = 0; i < len; i++)
			out[i] = (uint8_t)frnd(z);
		if (len > 0 && frnd(z) % 2)
			out[0] = UAM_WIRE_VERSION;
		break;
	case 1: /* bit flips */
		for (n = 1 + (uint32_t)(frnd(z) % 4); n-- && len;)
			out[frnd(z) % len] ^= (uint8_t)(1u << (frnd(z) % 8));
		break;
	case 2: /* random bytes in place */
		for (n = 1 + (uint32_t)(frnd(z) % 8); n-- && len;)
			out[frnd(z) % len] = (uint8_t)frnd(z);
		break;
	case 3: /* truncated */
		len = len ? (uint32_t)(frnd(z) % len) : 0;
		break;
	case 4: /* longer, up to far beyond any frame */
		n = (uint32_t)(frnd(z) % 4 == 0 ? frnd(z) % (1 << 17) : frnd(z) % 64);
		if (len + n > (1 << 17))
			n = (1 << 17) - len;
		for (uint32_t i = 0; i < n; i++)
			out[len + i] = (uint8_t)frnd(z);
		len += n;
		break;
	default: { /* a field of the header or extension set to an edge */
		static const uint8_t off32[] = { UAM_OFF_SEQ, UAM_OFF_ACK, UAM_OFF_TOKEN,
						 UAM_OFF_AUX, UAM_OFF_DLEN };
		uint64_t e = edges[frnd(z) % (sizeof(edges) / sizeof(edges[0]))];

		if (is_compact_frame(out) && len >= UAM_C_HDR_LEN && frnd(z) % 2) {
			/* the compact header's fields; dlen is the length */
			static const uint8_t c32[] = { UAM_C_OFF_SESSION, UAM_C_OFF_SEQ,
						       UAM_C_OFF_ACK, UAM_C_OFF_TOKEN };

			switch (frnd(z) % (is_cfrag(out) ? 9 : 6)) {
			case 0: /* args beyond the frame, or more than a message has
				 * (a fragment: a byte that must be 0) */
				out[UAM_C_OFF_NARGS] = (uint8_t)(frnd(z) % 2 ? e : frnd(z) % 12);
				break;
			case 1: /* a kind with no compact form, or the full header's */
				out[UAM_C_OFF_KIND] = (uint8_t)(frnd(z) % 2 ? UAM_C_FORMAT | (frnd(z) % 16)
									    : frnd(z) % 4);
				break;
			case 2:
				wput32(out + c32[frnd(z) % sizeof(c32)], (uint32_t)e);
				break;
			case 3:
				out[UAM_C_OFF_CREDIT] = (uint8_t)frnd(z);
				out[UAM_C_OFF_HANDLER] = (uint8_t)frnd(z);
				break;
			case 4: /* the length around what the header and args need */
				len = is_cfrag(out) ? UAM_CF_HDR_LEN + (uint32_t)(frnd(z) % 3) - 1
						    : UAM_C_HDR_LEN + out[UAM_C_OFF_NARGS] * 8u +
							      (uint32_t)(frnd(z) % 3) - 1;
				break;
			case 5: /* the length around the largest frame */
				len = sim_frame - 1 + (uint32_t)(frnd(z) % 3);
				break;
			case 6: /* a fragment's offset from its transfer's start */
				wput32(out + UAM_CF_OFF_REL, (uint32_t)(frnd(z) % 2 ? e : frnd(z)));
				break;
			case 7:
			case 8:
				len = fz_aim(z, sim, out, len);
				break;
			}
			for (uint32_t i = p->len; i < len; i++) /* what it grew by */
				out[i] = (uint8_t)frnd(z);
			break;
		}
		if (len < UAM_HDR_LEN)
			break;
		switch (frnd(z) % 6) {
		case 0:
			out[UAM_OFF_NARGS] = (uint8_t)(frnd(z) % 2 ? e : frnd(z) % 12);
			break;
		case 1:
			out[UAM_OFF_TYPE] = (uint8_t)(frnd(z) % 9);
			out[UAM_OFF_FLAGS] = (uint8_t)(frnd(z) % 3);
			break;
		case 2:
			wput32(out + off32[frnd(z) % sizeof(off32)], (uint32_t)e);
			break;
		case 3:
			wput64(out + UAM_OFF_SACK, frnd(z) % 2 ? e : frnd(z));
			wput16(out + UAM_OFF_CREDIT, (uint16_t)frnd(z));
			break;
		case 4: /* fragment offsets, total; get offsets, length */
			if (len >= UAM_HDR_LEN + 32)
				wput64(out + UAM_HDR_LEN + 8 * (frnd(z) % 4), e);
			break;
		case 5: /* dlen that matches the length, or nearly */
			wput32(out + UAM_OFF_DLEN, len - UAM_HDR_LEN - UAM_FRAG_EXT +
						       (uint32_t)(frnd(z) % 3) - 1);
			break;
		}
	}
	}
	return len;
}

/*
 * Random and mutated frames (bit flips, truncations, huge lengths, edge
 * values in every length, offset and count) fed to a channel in the middle
 * of real traffic.  With a fixed seed, so a failure repeats.  Under ASan
 * (make check) any read or write outside what was allocated aborts it;
 * handlers check they only ever see ranges inside their region.  Compact
 * fragments (the middle of a store or get) are captured from the stores
 * and gets of up to 5000 bytes, get the compact mutations plus their
 * own (the offset from the transfer's start, the two bytes that must be
 * 0), and half of them are aimed at the transfer the victim has open
 * (its token, an offset at, around or past where it goes on, a length
 * around what is left; fz_aim), so that some are taken and the rest
 * meet the checks that matter.
 */
static void fuzz_input(uint64_t ninputs)
{
	struct fuzz z = { .rng = FUZZ_SEED };
	uint8_t *src = malloc(FUZZ_SRC), *in = malloc(1 << 17);
	struct pkt *corpus[512];
	uint32_t ncorpus;
	struct sim *sim;
	uint64_t inputs = 0, sims = 1;

	z.r0 = calloc(1, FUZZ_REGION);
	z.r1 = calloc(1, FUZZ_REGION);
	assert_non_null(src);
	assert_non_null(in);
	assert_non_null(z.r0);
	assert_non_null(z.r1);
	fill(src, FUZZ_SRC, 11);
	sim = fz_sim(&z, src, corpus, 512);
	ncorpus = sim->ncorpus;
	assert_true(ncorpus > 100);
	for (; inputs < ninputs; inputs++) {
		uint32_t len = fz_mutate(&z, sim, corpus[frnd(&z) % ncorpus], in);
		uint8_t *f = malloc(len ? len : 1); /* exact: ASan sees over-reads */

		assert_non_null(f);
		memcpy(f, in, len);
		if (len && is_compact_frame(f))
			z.compact_in++;
		if (len && is_cfrag(f))
			z.cfrag_in++;
		if (sim->s[1].ch) {
			struct uam_chan *v = sim->s[1].ch;
			uint64_t h = z.handled, next = v->xfer.next;
			bool cf = len >= UAM_CF_HDR_LEN && is_cfrag(f);
			uint32_t seq = cf ? frame_seq(f) : 0;
			bool placed = cf && rxs_placed(v, seq);

			uamp_input(v, f, len);
			if (len && is_compact_frame(f) && z.handled > h)
				z.compact_handled++;
			if (cf && v->xfer.next != next)
				z.cfrag_taken++;
			else if (cf && !placed && rxs_placed(v, seq))
				z.cfrag_placed++;
		}
		free(f);
		if (inputs % 16 == 15) {
			step(sim);
			if (inputs % 256 == 255)
				fz_work(sim, &z, src);
		}
		/* a channel that a mutated session reset, or that timed out
		 * on a stream the fuzzing broke (forged frames take the
		 * sequence numbers of real ones): start over, and now and
		 * then anyway, so inputs meet channels in many states */
		if (uam_chan__error(sim->s[0].ch) || uam_chan__error(sim->s[1].ch) ||
		    inputs % 4096 == 4095) {
			sim_free(sim);
			sim = fz_sim(&z, src, NULL, 0);
			sims++;
		}
	}
	print_message("fuzz, %u-byte frames: %llu inputs from %u captured frames (seed %#llx), "
		      "%llu handlers run, "
		      "%llu ops completed, %llu fresh channel pairs; %llu inputs compact, "
		      "%llu of them ran a handler; %llu compact fragments (%llu aimed at the open "
		      "transfer, %llu turned into a first fragment to open one), %llu taken in "
		      "sequence, %llu placed early\n",
		      sim_frame, (unsigned long long)inputs, ncorpus, (unsigned long long)FUZZ_SEED,
		      (unsigned long long)z.handled, (unsigned long long)z.ops_done,
		      (unsigned long long)sims, (unsigned long long)z.compact_in,
		      (unsigned long long)z.compact_handled, (unsigned long long)z.cfrag_in,
		      (unsigned long long)z.cfrag_aimed, (unsigned long long)z.cfrag_opened,
		      (unsigned long long)z.cfrag_taken,
		      (unsigned long long)z.cfrag_placed);
	assert_int_equal(z.bad, 0);
	/* the compact header is fuzzed, and not only refused */
	assert_true(z.compact_in > ninputs / 10);
	assert_true(z.compact_handled > 1000);
	/* compact fragments too: refused, and taken (in sequence or placed
	 * early) where they fit the transfer that is open */
	assert_true(z.cfrag_in > ninputs / 40);
	assert_true(z.cfrag_taken > ninputs / 1000 && z.cfrag_placed > ninputs / 2000);
	sim_free(sim);
	for (uint32_t i = 0; i < ncorpus; i++)
		free(corpus[i]);
	free(src);
	free(in);
	free(z.r0);
	free(z.r1);
}

static void test_fuzz_input(void **state)
{
	(void)state;
	fuzz_input(FUZZ_INPUTS);
}

/* The same at a jumbo MTU: 8992-byte frames (a medium message up to 8972
 * bytes, fragments of 8968), kept buffers of one 2048-byte chunk's
 * payload, as an MTU-9000 endpoint has; random lengths up to past the
 * frame. */
static void test_fuzz_input_jumbo(void **state)
{
	(void)state;
	sim_frame = 8992;
	sim_kbuf_max = 1720;
	fuzz_input(FUZZ_INPUTS / 2);
	sim_frame = FRAME;
	sim_kbuf_max = 0;
}

/* An argument: run only the tests whose names match it (cmocka's
 * pattern, e.g. "test_compact*"). */
int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_requests_clean),
		cmocka_unit_test(test_requests_lossy),
		cmocka_unit_test(test_requests_dup_reorder),
		cmocka_unit_test(test_inject_hooks),
		cmocka_unit_test(test_store_and_get_lossy),
		cmocka_unit_test(test_frame_size_said),
		cmocka_unit_test(test_region_errors),
		cmocka_unit_test(test_region_bound_to_chan),
		cmocka_unit_test(test_credit_stall),
		cmocka_unit_test(test_peer_queue_bound),
		cmocka_unit_test(test_chan_pause),
		cmocka_unit_test(test_peer_dies),
		cmocka_unit_test(test_peer_restarts),
		cmocka_unit_test(test_call_capture),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_garbage_frames),
		cmocka_unit_test(test_seq_wrap_windows),
		cmocka_unit_test(test_slot_reuse),
		cmocka_unit_test(test_frame_lengths),
		cmocka_unit_test(test_ack_ext_sack),
		cmocka_unit_test(test_medium_clean),
		cmocka_unit_test(test_medium_lossy),
		cmocka_unit_test(test_medium_dup_reorder),
		cmocka_unit_test(test_medium_limits),
		cmocka_unit_test(test_kept_unflushed),
		cmocka_unit_test(test_compact_credit_sack),
		cmocka_unit_test(test_loss_recovery),
		cmocka_unit_test(test_cork_keeps_time),
		cmocka_unit_test(test_bulk_loss_pipelined),
		cmocka_unit_test(test_bulk_ack_every_quarter),
		cmocka_unit_test(test_bulk_sack_beyond_64),
		cmocka_unit_test(test_gets_pipelined_no_timeouts),
		cmocka_unit_test(test_early_fragments_placed),
		cmocka_unit_test(test_compact_frags),
		cmocka_unit_test(test_compact_frag_bounds),
		cmocka_unit_test(test_done_premature),
		cmocka_unit_test(test_done_checks),
		cmocka_unit_test(test_store_claims),
		cmocka_unit_test(test_handler_closes_channel),
		cmocka_unit_test(test_timeout_not_local_pressure),
		cmocka_unit_test(test_reopen_new_session),
		cmocka_unit_test(test_fuzz_input),
		cmocka_unit_test(test_fuzz_input_jumbo),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
