// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_fabric_proto.c - the libfabric provider's parsers against a hostile
 * peer, without a network (docs/libfabric.md, "Tests").
 *
 * Two seeded fuzzers, each ending with a valid exchange that must still
 * work:
 *   - HELLO datagrams on the setup socket (fabric/conn.c): mutated HELLOs
 *     through ufi_conn_hello, each checked against the rules written out
 *     again here (hello_model); what the accepted ones may do (an answer
 *     to a known peer, a bounded number of strangers) counted exactly.
 *   - UAM messages a peer sends (fabric/msg.h: EAGER, FRAG, RTS, FIN
 *     and the rest) through ufi_proto_input, from a valid sender mutated
 *     (argument counts, lengths, offsets, totals, cookies, regions at
 *     their edges, payload length and pointer), against a model of what
 *     each may deliver (msg_model): receive completions, unexpected
 *     messages, send completions, all counted exactly; every payload and
 *     receive buffer is a heap block of its exact size, so ASan (make
 *     check's second pass) sees any copy past one.
 * The endpoint is a real struct ufi_ep with real completion queues but
 * no U-Net endpoint and no UAM: what would go to the network (FIN,
 * uam_get) fails with -EINVAL on the NULL channel, which the provider
 * already handles (a failed pull completes the receive with an error).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ufi.h"
#include "fuzz.h"

/* The wire's handler indices (msg.h) and limits (eager.c, hello.c),
 * written out again: a change there must show up here. */
enum { H_EAGER = 1, H_RTS, H_FIN, H_PING, H_SYNC, H_SYNC_ACK, H_BYE, H_FRAG };
#define EAGER_MAX 1024
#define FRAG_MAX 16384
#define HELLO_LEN 96
#define HELLO_FT 84 /* from tag; to tag at 86, the nonces at 88 and 92 */
#define A_NONCE 0x0a11ce55u /* our nonce for peer a (fx_init) */
#define HELLO_MAGIC 0x55464948u
#define TAG_MIN 1024

static double secs_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* ---- The fixture: an endpoint, its queues, two peers ---------------------- */

struct fx {
	struct ufi_ep ep;
	struct ufi_cq rxcq, txcq;
	struct ufi_peer a, b; /* a sends everything; b's state must not move */
};

static void fx_init(struct fx *f)
{
	memset(f, 0, sizeof(*f));
	f->ep.enabled = true;
	f->ep.rx_cq = &f->rxcq;
	f->ep.tx_cq = &f->txcq;
	f->ep.eager_max = EAGER_MAX;
	f->ep.frag_max = FRAG_MAX;
	f->ep.udp_fd = -1;
	f->rxcq.fmt = FI_CQ_FORMAT_TAGGED;
	f->txcq.fmt = FI_CQ_FORMAT_TAGGED;
	/* what ufi_cq_open and ufi_proto_init wire up */
	f->rxcq.report = &ufi_cq_report;
	f->txcq.report = &ufi_cq_report;
	ufi_proto_attach(&f->ep);
	for (int i = 0; i < 2; i++) {
		struct ufi_peer *p = i ? &f->b : &f->a;

		p->name.magic[0] = 'U';
		p->name.magic[1] = 'F';
		p->name.version = 2;
		p->name.family = 4;
		p->name.mac[5] = (uint8_t)(0x10 + i);
		p->name.prefix = 8; /* 127/8: the tests' HELLOs go over loopback */
		p->name.nonce = 0xabcd0000u + (uint32_t)i;
		p->addr = (fi_addr_t)i;
		p->state = UFI_PEER_UP;
		p->ltag = (uint16_t)(2000 + i);
		p->rtag = (uint16_t)(3000 + i);
		p->my_nonce = A_NONCE + (uint32_t)i;
	}
	f->a.next = &f->b;
	f->ep.peers = &f->a;
}

static unsigned int list_len(const struct ufi_cqe *e)
{
	unsigned int n = 0;

	for (; e; e = e->next)
		n++;
	return n;
}

static void cq_clear(struct ufi_cq *cq)
{
	struct ufi_cqe *lists[] = { cq->head, cq->ehead, cq->free_list };

	for (int i = 0; i < 3; i++)
		while (lists[i]) {
			struct ufi_cqe *e = lists[i];

			lists[i] = e->next;
			free(e);
		}
	cq->head = cq->tail = cq->ehead = cq->etail = cq->free_list = NULL;
}

static unsigned int ux_len(const struct ufi_ep *ep, int q)
{
	unsigned int n = 0;

	for (const struct ufi_ux *u = ep->ux[q]; u; u = u->next)
		n++;
	return n;
}

static unsigned int posted_len(const struct ufi_ep *ep, int q)
{
	unsigned int n = 0;

	for (const struct ufi_rx *r = ep->posted[q]; r; r = r->next)
		n++;
	return n;
}

/* A rendezvous send of peer p waiting for its FIN (region -1: none). */
static void add_tx(struct ufi_ep *ep, struct ufi_peer *p, uint32_t cookie)
{
	struct ufi_tx *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	*t = (struct ufi_tx){ .peer = p, .cookie = cookie, .region = -1, .flags = FI_COMPLETION,
			      .next = ep->txs };
	ep->txs = t;
	ep->outstanding++;
}

static bool has_tx(const struct ufi_ep *ep, const struct ufi_peer *p, uint32_t cookie)
{
	for (const struct ufi_tx *t = ep->txs; t; t = t->next)
		if (t->peer == p && t->cookie == cookie)
			return true;
	return false;
}

/* Everything the fixture holds, freed (the receives' buffers are the
 * caller's). */
static void fx_free(struct fx *f)
{
	struct ufi_ep *ep = &f->ep;

	ufi_ep_free_queues(ep);
	for (struct ufi_peer *p = ep->peers; p; p = p->next)
		if (p->in) {
			free(p->in->rx);
			free(p->in->ux);
			free(p->in);
			p->in = NULL;
		}
	cq_clear(&f->rxcq);
	cq_clear(&f->txcq);
}

/* ---- UAM messages: the model ------------------------------------------------ */

/*
 * What the handlers document (msg.h), from the message alone plus the
 * state a peer's messages build up (a fragmented message under way) and
 * the receives posted.  Every receive the test posts matches any message
 * of its queue (tagged, all tag bits ignored; or untagged).
 */
struct model {
	unsigned int posted[2]; /* receives posted, not taken */
	unsigned int ux[2];	/* unexpected messages waiting */
	bool in, in_rx;		/* a's fragmented message under way; it took a receive */
	int in_q;
	uint64_t total, got;
	uint64_t rx_events; /* receive completions and errors */
	uint64_t tx_events; /* send completions (FIN) */
	uint64_t accepted, rejected;
	uint64_t frag_into_rx; /* fragmented messages that started into a receive */
};

static void m_deliver(struct model *md, int q)
{
	if (md->posted[q]) {
		md->posted[q]--;
		md->rx_events++;
	} else {
		md->ux[q]++;
	}
}

static void m_frag_end(struct model *md, bool ok)
{
	if (!md->in)
		return;
	if (md->in_rx)
		md->rx_events++;
	else if (ok)
		md->ux[md->in_q]++;
	md->in = false;
}

/* Posting a receive on q: an unexpected message takes it, or a
 * fragmented one still arriving, or it waits. */
static void m_post(struct model *md, int q)
{
	if (md->ux[q]) {
		md->ux[q]--;
		md->rx_events++;
	} else if (md->in && !md->in_rx && md->in_q == q) {
		md->in_rx = true;
	} else {
		md->posted[q]++;
	}
}

static void msg_model(struct model *md, const struct uam_msg *m, const struct ufi_ep *ep,
		      const struct ufi_peer *a)
{
	const uint64_t *g = m->args;
	int q = (int)(g[1] & 1); /* UFI_MF_TAGGED: the tagged queue */
	bool ok;

	switch (m->handler) {
	case H_EAGER:
		ok = m->nargs == 2 && m->data_len == ((g[1] >> 8) & 0xffffff) &&
		     (m->data_len == 0 || m->data);
		if (ok)
			m_deliver(md, q);
		break;
	case H_RTS:
		ok = m->nargs == 5 && g[2] != 0 && g[2] <= ((uint64_t)1 << 30) && g[3] < UINT32_MAX &&
		     g[4] <= UINT32_MAX;
		if (ok)
			m_deliver(md, q);
		break;
	case H_FIN:
		ok = m->nargs == 2 && g[0] <= UINT32_MAX && has_tx(ep, a, (uint32_t)g[0]);
		if (ok)
			md->tx_events++;
		break;
	case H_FRAG:
		ok = false;
		if (m->nargs != 4 || !m->data_len)
			break;
		if (g[2] > FRAG_MAX || g[3] >= g[2] || m->data_len > g[2] - g[3]) {
			m_frag_end(md, false);
			break;
		}
		if (g[3] == 0) {
			m_frag_end(md, false);
			md->in = true;
			md->in_q = q;
			md->total = g[2];
			md->got = 0;
			md->in_rx = md->posted[q] > 0;
			if (md->in_rx) {
				md->posted[q]--;
				md->frag_into_rx++;
			}
		}
		if (!md->in || g[3] != md->got || g[2] != md->total) {
			m_frag_end(md, false);
			break;
		}
		ok = true;
		md->got += m->data_len;
		if (md->got == md->total)
			m_frag_end(md, true);
		break;
	default: /* PING, SYNC, SYNC_ACK, unknown: nothing to deliver */
		ok = true;
		break;
	}
	ok ? md->accepted++ : md->rejected++;
}

/* The endpoint's state against the model's. */
static void check_model(const struct fx *f, const struct model *md, uint64_t i, uint64_t seed)
{
	uint64_t rx = list_len(f->rxcq.head) + list_len(f->rxcq.ehead);
	uint64_t tx = list_len(f->txcq.head) + list_len(f->txcq.ehead);

	for (int q = 0; q < 2; q++)
		if (ux_len(&f->ep, q) != md->ux[q] || posted_len(&f->ep, q) != md->posted[q])
			fail_msg("after message %llu: queue %d has %u unexpected, %u posted; the "
				 "model %u, %u (replay: UNET_FUZZ_SEED=%#llx)",
				 (unsigned long long)i, q, ux_len(&f->ep, q), posted_len(&f->ep, q),
				 md->ux[q], md->posted[q], (unsigned long long)seed);
	if (rx != md->rx_events || tx != md->tx_events)
		fail_msg("after message %llu: %llu receive and %llu send completions; the model "
			 "%llu, %llu (replay: UNET_FUZZ_SEED=%#llx)",
			 (unsigned long long)i, (unsigned long long)rx, (unsigned long long)tx,
			 (unsigned long long)md->rx_events, (unsigned long long)md->tx_events,
			 (unsigned long long)seed);
	if ((f->a.in != NULL) != md->in)
		fail_msg("after message %llu: a fragmented message %s under way; the model says "
			 "the opposite", (unsigned long long)i, f->a.in ? "is" : "is not");
	/* b sent nothing: nothing of b's may have moved */
	assert_null(f->b.in);
	assert_int_equal(f->b.state, UFI_PEER_UP);
}

/* ---- UAM messages: the generator ------------------------------------------- */

static const uint64_t edges[] = { 0,	  1,	  2,	  63,	     64,	 1023,
				  1024,	  1025,	  16383,  16384,     16385,	 0xffffff,
				  1 << 24, 1 << 30, (1u << 30) + 1, UINT32_MAX, 1ull << 32,
				  INT64_MAX, (uint64_t)INT64_MIN, UINT64_MAX, (uint64_t)-4095,
				  (uint64_t)-4096 };
#define NEDGES (sizeof(edges) / sizeof(edges[0]))

/* A well-behaved sender's fragmented message under way. */
struct sender {
	bool frag;
	uint64_t total, off, tag;
	uint32_t mf;
};

/* One message from a (valid, then perhaps mutated) into m; the payload
 * (m->data_len bytes, a heap block of exactly that size, or NULL) is
 * the caller's to free. */
static void gen_msg(uint64_t *rng, struct sender *s, struct uam_msg *m, void **payload)
{
	uint64_t r = fuzz_next(rng);
	size_t len = 0;

	memset(m, 0, sizeof(*m));
	m->kind = UAM_MSG_REQUEST;
	if (s->frag && r % 3 != 0) { /* the next fragment of the message under way */
		len = s->total - s->off < EAGER_MAX ? s->total - s->off : EAGER_MAX;
		m->handler = H_FRAG;
		m->nargs = 4;
		m->args[0] = s->tag;
		m->args[1] = s->mf;
		m->args[2] = s->total;
		m->args[3] = s->off;
		s->off += len;
		s->frag = s->off < s->total;
	} else {
		switch ((r >> 4) % 8) {
		case 0:
		case 1: /* eager */
			len = (r >> 8) % 4 ? (r >> 12) % 64 : (r >> 12) % (EAGER_MAX + 1);
			m->handler = H_EAGER;
			m->nargs = 2;
			m->args[0] = r >> 20;
			m->args[1] = (uint64_t)(uint32_t)(r >> 30) << 32 | (uint64_t)len << 8 |
				     ((r >> 40) & 3);
			break;
		case 2:
		case 3: /* a new fragmented message */
			s->total = EAGER_MAX + 1 + (r >> 8) % (FRAG_MAX - EAGER_MAX);
			s->off = 0;
			s->tag = r >> 24;
			s->mf = (uint32_t)((r >> 40) & 3);
			len = EAGER_MAX;
			m->handler = H_FRAG;
			m->nargs = 4;
			m->args[0] = s->tag;
			m->args[1] = s->mf;
			m->args[2] = s->total;
			m->args[3] = 0;
			s->off = len;
			s->frag = true;
			break;
		case 4: /* rendezvous */
			m->handler = H_RTS;
			m->nargs = 5;
			m->args[0] = r >> 20;
			m->args[1] = (r >> 40) & 3;
			m->args[2] = 1 + (r >> 8) % 100000;
			m->args[3] = (r >> 30) % 48;
			m->args[4] = (uint32_t)(r >> 32);
			break;
		case 5: /* FIN for one of a's sends, or not */
			m->handler = H_FIN;
			m->nargs = 2;
			m->args[0] = (r >> 8) % 24;
			m->args[1] = (r >> 16) % 4 ? 0 : (uint64_t)-(int64_t)((r >> 20) % 200);
			break;
		default: /* keepalive and close handshake, or no such handler */
			m->handler = (uint16_t)((r >> 8) % 4 == 0 ? (r >> 12) % 256
								   : (uint64_t[]){ H_PING, H_SYNC,
										   H_SYNC_ACK }[(r >> 12) % 3]);
			if (m->handler == H_BYE)
				m->handler = H_PING; /* BYE closes the peer: by design */
			m->nargs = (uint8_t)((r >> 24) % 3);
			break;
		}
	}
	/* mutations: half the messages, 1-3 each */
	if ((r >> 48) % 2) {
		for (unsigned int k = 0, nm = 1 + (unsigned int)((r >> 50) % 3); k < nm; k++) {
			uint64_t x = fuzz_next(rng), e = edges[(x >> 8) % NEDGES];

			switch (x % 7) {
			case 0:
				m->nargs = (uint8_t)((x >> 16) % 4 ? (x >> 20) % (UAM_MAX_ARGS + 1)
								   : x >> 24);
				break;
			case 1: /* an argument at an edge */
				m->args[(x >> 16) % 5] = e;
				break;
			case 2: /* the eager length field at an edge, or off by one */
				m->args[1] = (m->args[1] & ~(0xffffffull << 8)) |
					     (((x >> 16) % 2 ? e : len + ((x >> 20) % 3) - 1) & 0xffffff)
						     << 8;
				break;
			case 3: /* the payload longer or shorter than said */
				len = (x >> 16) % 4 ? (len + ((x >> 20) % 5) - 2) & 0xffff
						    : (x >> 24) % 20000;
				break;
			case 4: /* a fragment's total or offset at an edge, or off by one */
				m->args[2 + (x >> 16) % 2] = (x >> 20) % 2 ? e
									    : m->args[2 + (x >> 16) % 2] +
										      (x >> 24) % 3 - 1;
				break;
			case 5: /* another handler for the same arguments */
				m->handler = (uint16_t)(1 + (x >> 16) % 8);
				if (m->handler == H_BYE)
					m->handler = H_FRAG;
				break;
			default: /* a bit flipped in an argument */
				m->args[(x >> 16) % 5] ^= 1ull << ((x >> 24) % 64);
				break;
			}
		}
	}
	*payload = NULL;
	if (len) {
		uint8_t *d = malloc(len);

		assert_non_null(d);
		for (size_t i = 0; i < len; i++)
			d[i] = (uint8_t)(i * 7 + (r & 0xff));
		*payload = d;
		/* now and then an eager message says it carries data but has
		 * none (UAM never hands a handler a length without data: only
		 * the eager handler's own check is exercised here) */
		m->data = m->handler == H_EAGER && (r >> 56) % 64 == 0 ? NULL : d;
	}
	m->data_len = len;
}

/* Receive buffers: heap blocks of their exact size, kept until the end. */
struct bufs {
	void **b;
	size_t *len;
	unsigned int n, cap;
};

static unsigned int buf_new(struct bufs *bs, size_t len)
{
	if (bs->n == bs->cap) {
		bs->cap = bs->cap ? 2 * bs->cap : 256;
		bs->b = realloc(bs->b, bs->cap * sizeof(*bs->b));
		bs->len = realloc(bs->len, bs->cap * sizeof(*bs->len));
		assert_non_null(bs->b);
		assert_non_null(bs->len);
	}
	bs->b[bs->n] = malloc(len ? len : 1);
	assert_non_null(bs->b[bs->n]);
	bs->len[bs->n] = len;
	return bs->n++;
}

static void bufs_free(struct bufs *bs)
{
	for (unsigned int i = 0; i < bs->n; i++)
		free(bs->b[i]);
	free(bs->b);
	free(bs->len);
}

/* Post a receive (tagged: every tag; or untagged) of a fresh buffer of
 * len bytes; its context is the buffer's index + 1. */
static void post(struct fx *f, struct bufs *bs, int q, size_t len)
{
	unsigned int i = buf_new(bs, len);

	assert_int_equal(ufi_recv(&f->ep, bs->b[i], len, FI_ADDR_UNSPEC, 0, ~0ull,
				  (q ? FI_TAGGED : FI_MSG) | FI_COMPLETION,
				  (void *)(uintptr_t)(i + 1)),
			 0);
}

/* Completions name a buffer of ours and never claim more than it holds;
 * a receive that completed is over, so its buffer is freed here (seen
 * again in a later check: skipped). */
static void check_completions(const struct fx *f, struct bufs *bs)
{
	const struct ufi_cqe *lists[] = { f->rxcq.head, f->rxcq.ehead };

	for (int l = 0; l < 2; l++)
		for (const struct ufi_cqe *e = lists[l]; e; e = e->next) {
			uintptr_t i = (uintptr_t)e->e.op_context;

			assert_true(i >= 1 && i <= bs->n);
			if (!bs->b[i - 1])
				continue;
			assert_true(e->e.len <= bs->len[i - 1]);
			assert_true(e->e.len == 0 || e->e.buf == bs->b[i - 1]);
			free(bs->b[i - 1]);
			bs->b[i - 1] = NULL;
		}
}

/*
 * Seeded fuzz of the protocol handlers: FUZZ_MSGS messages from peer a,
 * half of them mutated, with receives of random sizes posted now and
 * then; after every message the endpoint must agree with the model
 * (checked every 64 messages and at the end), and every completion must
 * lie in its buffer.  Then a valid exchange: an eager message, a
 * fragmented one and a rendezvous arrive whole, a FIN completes its send.
 */
#define FUZZ_MSG_SEED 0x75666970726f746full /* "ufiproto" */
#define FUZZ_MSGS 1000000

static void test_fuzz_messages(void **state)
{
	uint64_t seed = fuzz_seed(FUZZ_MSG_SEED), rng = seed, n = fuzz_count(FUZZ_MSGS);
	struct fx *f = calloc(1, sizeof(*f));
	struct model md = { 0 };
	struct sender snd = { 0 };
	struct bufs bs = { 0 };
	struct timespec t0;

	(void)state;
	assert_non_null(f);
	fx_init(f);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	print_message("fabric messages fuzz: seed %#llx (UNET_FUZZ_SEED), %llu messages "
		      "(UNET_FUZZ_COUNT)\n",
		      (unsigned long long)seed, (unsigned long long)n);
	for (uint32_t c = 0; c < 24; c++) { /* sends waiting for FIN: a's 0..11, b's 0..11 */
		add_tx(&f->ep, c < 12 ? &f->a : &f->b, c % 12);
	}
	for (uint64_t i = 0; i < n; i++) {
		struct uam_msg m;
		void *payload;
		uint64_t r = fuzz_next(&rng);

		/* receives: small, eager-sized or large; in alternate stretches
		 * of 2048 messages a few always wait (messages land in them:
		 * copies bounded by the buffer), else one now and then
		 * (messages wait as unexpected, and receives find them) */
		for (int q = 0; q < 2; q++) {
			size_t len = (r >> 9) % 3 == 0 ? (r >> 12) % 64
				     : (r >> 9) % 3 == 1 ? (r >> 12) % (EAGER_MAX + 2)
							 : (r >> 12) % (FRAG_MAX + 2);

			if ((i >> 11) & 1 ? md.posted[q] < 4
					  : r % 32 == (uint64_t)q) {
				m_post(&md, q);
				post(f, &bs, q, len);
			}
		}
		/* unexpected messages taken before they pile up (the lists
		 * stay short, so a long run stays linear) */
		for (int q = 0; q < 2; q++)
			if (md.ux[q] > 64) {
				m_post(&md, q);
				post(f, &bs, q, (r >> 20) % (FRAG_MAX + 2));
			}
		if (r % 4096 == 1) /* a's sends are waited for again */
			for (uint32_t c = 0; c < 12; c++)
				if (!has_tx(&f->ep, &f->a, c))
					add_tx(&f->ep, &f->a, c);
		gen_msg(&rng, &snd, &m, &payload);
		msg_model(&md, &m, &f->ep, &f->a);
		ufi_proto_input(&f->ep, &f->a, &m);
		free(payload);
		if (i % 64 == 63 || i == n - 1) {
			check_model(f, &md, i, seed);
			check_completions(f, &bs);
		}
		if (i % 4096 == 4095) { /* keep the lists short */
			cq_clear(&f->rxcq);
			cq_clear(&f->txcq);
			md.rx_events = md.tx_events = 0;
		}
	}
	print_message("fabric messages fuzz: %llu accepted, %llu rejected, %llu fragmented "
		      "messages into posted receives, %.2f s\n",
		      (unsigned long long)md.accepted, (unsigned long long)md.rejected,
		      (unsigned long long)md.frag_into_rx, secs_since(&t0));
	assert_true(md.accepted > n / 4 && md.rejected > n / 10);
	/* fragments landed in posted receives (copies bounded by them) */
	assert_true(md.frag_into_rx > n / 100);
	/* b's sends were never completed by a's FINs */
	for (uint32_t c = 0; c < 12; c++)
		assert_true(has_tx(&f->ep, &f->b, c));

	/* After the storm, a valid exchange: first everything unexpected is
	 * taken and a message still arriving ended by a new one. */
	for (int q = 0; q < 2; q++)
		while (md.ux[q]) {
			m_post(&md, q);
			post(f, &bs, q, FRAG_MAX);
		}
	check_model(f, &md, n, seed);
	cq_clear(&f->rxcq);
	cq_clear(&f->txcq);
	{
		uint8_t data[5000];
		unsigned int rb;
		struct uam_msg m = { .kind = UAM_MSG_REQUEST, .handler = H_EAGER, .nargs = 2 };
		const struct ufi_cqe *e;

		for (size_t i = 0; i < sizeof(data); i++)
			data[i] = (uint8_t)(i * 13 + 5);
		/* a receive already posted takes nothing yet: post a fresh one
		 * after the leftovers are gone */
		for (int q = 0; q < 2; q++)
			while (f->ep.posted[q]) {
				struct ufi_rx *x = f->ep.posted[q];

				f->ep.posted[q] = x->next;
				free(x);
			}
		f->ep.posted_tail[0] = f->ep.posted_tail[1] = NULL;
		if (f->a.in) { /* the message under way, ended by a fresh one */
			free(f->a.in->rx);
			free(f->a.in->ux);
			free(f->a.in);
			f->a.in = NULL;
		}
		/* eager, tagged, with remote data */
		rb = buf_new(&bs, 2000);
		assert_int_equal(ufi_recv(&f->ep, bs.b[rb], 2000, FI_ADDR_UNSPEC, 0x77, 0,
					  FI_TAGGED | FI_COMPLETION, (void *)(uintptr_t)(rb + 1)),
				 0);
		m.args[0] = 0x77;
		m.args[1] = (uint64_t)0xdada << 32 | 700u << 8 | 3;
		m.data = data;
		m.data_len = 700;
		ufi_proto_input(&f->ep, &f->a, &m);
		e = f->rxcq.head;
		assert_non_null(e);
		assert_null(e->next);
		assert_null(f->rxcq.ehead);
		assert_int_equal(e->e.len, 700);
		assert_int_equal(e->e.tag, 0x77);
		assert_int_equal(e->e.data, 0xdada);
		assert_memory_equal(bs.b[rb], data, 700);
		cq_clear(&f->rxcq);
		/* fragmented: 5000 bytes in 1024-byte pieces */
		rb = buf_new(&bs, 5000);
		assert_int_equal(ufi_recv(&f->ep, bs.b[rb], 5000, FI_ADDR_UNSPEC, 0, 0,
					  FI_MSG | FI_COMPLETION, (void *)(uintptr_t)(rb + 1)),
				 0);
		for (size_t off = 0; off < sizeof(data); off += EAGER_MAX) {
			struct uam_msg fr = { .kind = UAM_MSG_REQUEST, .handler = H_FRAG, .nargs = 4,
					      .args = { 9, 0, sizeof(data), off } };

			fr.data = data + off;
			fr.data_len = sizeof(data) - off < EAGER_MAX ? sizeof(data) - off : EAGER_MAX;
			ufi_proto_input(&f->ep, &f->a, &fr);
		}
		e = f->rxcq.head;
		assert_non_null(e);
		assert_null(e->next);
		assert_null(f->rxcq.ehead);
		assert_int_equal(e->e.len, sizeof(data));
		assert_memory_equal(bs.b[rb], data, sizeof(data));
		assert_null(f->a.in);
		cq_clear(&f->rxcq);
		/* a rendezvous with no receive: waits, whole, as unexpected */
		{
			struct uam_msg rts = { .kind = UAM_MSG_REQUEST, .handler = H_RTS, .nargs = 5,
					       .args = { 5, 1, 123456, 7, 0xc0c0 } };
			struct ufi_ux *u;

			ufi_proto_input(&f->ep, &f->a, &rts);
			u = f->ep.ux[1];
			assert_non_null(u);
			assert_null(u->next);
			assert_int_equal(u->len, 123456);
			assert_int_equal(u->region, 7);
			assert_int_equal(u->cookie, 0xc0c0);
			assert_int_equal(u->tag, 5);
		}
		/* a FIN completes a's send with that cookie, and only it */
		{
			struct uam_msg fin = { .kind = UAM_MSG_REQUEST, .handler = H_FIN, .nargs = 2,
					       .args = { 0x5eed, 0 } };
			int out;

			add_tx(&f->ep, &f->a, 0x5eed);
			out = f->ep.outstanding;
			ufi_proto_input(&f->ep, &f->a, &fin);
			assert_false(has_tx(&f->ep, &f->a, 0x5eed));
			assert_int_equal(f->ep.outstanding, out - 1);
			assert_int_equal(list_len(f->txcq.head), 1);
			assert_null(f->txcq.ehead);
		}
	}
	fx_free(f);
	bufs_free(&bs);
	free(f);
}

/* ---- HELLO ---------------------------------------------------------------- */

/* A UDP socket on 127.0.0.1, any port; *sa gets its address. */
static int udp_lo(struct sockaddr_in *sa)
{
	socklen_t sl = sizeof(*sa);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)sa, sizeof(*sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)sa, &sl), 0);
	return fd;
}

/* A HELLO by hand (docs/libfabric.md: magic, from name, to name, from
 * tag, to tag, network order; the sender's nonce and the one it echoes,
 * opaque). */
static void hello_build(uint8_t *b, const struct ufi_name *from, const struct ufi_name *to,
			uint16_t ft, uint16_t tt, uint32_t mine, uint32_t yours)
{
	put16(b, (uint16_t)(HELLO_MAGIC >> 16));
	put16(b + 2, (uint16_t)HELLO_MAGIC);
	memcpy(b + 4, from, UFI_NAME_LEN);
	memcpy(b + 4 + UFI_NAME_LEN, to, UFI_NAME_LEN);
	put16(b + 4 + 2 * UFI_NAME_LEN, ft);
	put16(b + 6 + 2 * UFI_NAME_LEN, tt);
	memcpy(b + HELLO_FT + 4, &mine, 4);
	memcpy(b + HELLO_FT + 8, &yours, 4);
}

static uint32_t hello_u32(const uint8_t *b, size_t off)
{
	uint32_t v;

	memcpy(&v, b + off, 4);
	return v;
}

/* names.c's rules for a name from outside, written out again. */
static bool name_model(const struct ufi_name *n)
{
	static const uint8_t zero[16], lo6[16] = { [15] = 1 };
	uint32_t ip = ntohl(n->ip), host;

	if (n->magic[0] != 'U' || n->magic[1] != 'F' || n->version != 2 || (n->flags & ~1u) ||
	    (n->mac[0] & 1) ||
	    !(n->mac[0] | n->mac[1] | n->mac[2] | n->mac[3] | n->mac[4] | n->mac[5]) || !n->port)
		return false;
	if (n->family == 6) {
		const uint8_t *a = n->ip6;
		bool host_zero = true;

		if (n->ip || n->prefix < 1 || n->prefix > 128)
			return false;
		if (a[0] == 0 && memcmp(a, lo6, 16)) /* ::/8 but loopback */
			return false;
		if (a[0] == 0xff || (a[0] == 0xfe && (a[1] & 0xc0) == 0x80))
			return false; /* multicast, link-local */
		for (unsigned int bit = n->prefix; bit < 128; bit++)
			host_zero &= !((a[bit / 8] >> (7 - bit % 8)) & 1);
		return n->prefix >= 127 || !host_zero; /* subnet-router anycast */
	}
	if (n->family != 4 || memcmp(n->ip6, zero, 16) || n->prefix < 1 || n->prefix > 32)
		return false;
	if (ip >> 24 == 0 || ip >> 28 >= 0xe) /* 0/8, multicast, reserved, broadcast */
		return false;
	host = n->prefix == 32 ? 0 : 0xffffffffu >> n->prefix;
	return n->prefix > 30 || ((ip & host) != 0 && (ip & host) != host);
}

/* conn.c's rules, written out again: whether the datagram is a HELLO to
 * self that is taken at all (an IPv4 name from an IPv4 address here). */
static bool hello_model(const struct ufi_name *self, const uint8_t *b, size_t len,
			const struct sockaddr_in *from, socklen_t fl)
{
	struct ufi_name fn;

	if (len != HELLO_LEN)
		return false;
	memcpy(&fn, b + 4, sizeof(fn));
	return b[0] == 0x55 && b[1] == 0x46 && b[2] == 0x49 && b[3] == 0x48 &&
	       !memcmp(b + 4 + UFI_NAME_LEN, self, UFI_NAME_LEN) && name_model(&fn) &&
	       fn.family == 4 && fl == sizeof(*from) && from->sin_family == AF_INET &&
	       fn.ip == from->sin_addr.s_addr && fn.port == from->sin_port &&
	       ((b[HELLO_FT] << 8 | b[HELLO_FT + 1]) >= TAG_MIN ||
		(b[HELLO_FT] << 8 | b[HELLO_FT + 1]) == 0) &&
	       hello_u32(b, HELLO_FT + 4) != 0;
}

/* HELLOs answered to peer a (its name's address is sock, which the
 * strangers' made-up names share: their challenges are skipped):
 * counted, each checked to be a HELLO from us to a with a's tags, or a
 * challenge (from tag 0: counted in *challenges if given), and a nonce
 * of ours (which may have been renewed since it was sent). */
static unsigned int drain_answers(int sock, const struct fx *f, uint64_t *challenges)
{
	uint8_t b[128], want[HELLO_LEN];
	unsigned int n = 0;
	ssize_t r;

	hello_build(want, &f->ep.name, &f->a.name, f->a.ltag, f->a.rtag, f->a.my_nonce,
		    f->a.peer_nonce);
	while ((r = recv(sock, b, sizeof(b), 0)) >= 0) {
		assert_int_equal(r, HELLO_LEN);
		if (memcmp(b + 4 + UFI_NAME_LEN, &f->a.name, UFI_NAME_LEN))
			continue; /* a challenge to a stranger */
		assert_memory_equal(b, want, HELLO_FT);
		assert_memory_equal(b + HELLO_FT + 2, want + HELLO_FT + 2, 2);
		assert_int_not_equal(hello_u32(b, HELLO_FT + 4), 0);
		if (b[HELLO_FT] == 0 && b[HELLO_FT + 1] == 0) {
			assert_non_null(challenges);
			(*challenges)++;
		} else {
			assert_memory_equal(b + HELLO_FT, want + HELLO_FT, 2);
			n++;
		}
	}
	return n;
}

/*
 * Seeded fuzz of HELLO: valid HELLOs from a known peer (a, up) and from
 * strangers, mutated (bytes set, bits flipped, cut, lengthened, tags at
 * their edges, the sender's address not its name's, the address length
 * wrong).  Each is checked by ufi_hello_parse against hello_model, then
 * acted on (ufi_conn_hello): a known peer's HELLO is answered exactly
 * when it is a challenge, unproven, or says our answer was lost; a proven
 * one with another tag is challenged (from tag 0, a fresh nonce) and
 * renegotiates only when it echoes that challenge; our nonce for the
 * peer changes exactly then; a stranger's makes a peer (whose
 * channel cannot open here: it fails) up to UFI_MAX_STRANGERS and no
 * more.  Then a valid HELLO from a is answered.  (The two sockets' ports
 * are the kernel's choice, so a replay may differ in the few mutations
 * that happen to hit them; the model covers every outcome.)
 */
#define FUZZ_HELLO_SEED 0x68656c6c6f667a7aull /* "hellofzz" */
#define FUZZ_HELLOS 200000

static void test_fuzz_hello(void **state)
{
	uint64_t seed = fuzz_seed(FUZZ_HELLO_SEED), rng = seed, n = fuzz_count(FUZZ_HELLOS);
	uint64_t accepted = 0, want_answers = 0, answers = 0, want_strangers;
	uint64_t renegs = 0, want_renegs = 0, challenges = 0, want_challenges = 0;
	bool challenged = false; /* our nonce for a went out in a challenge */
	struct fx *f = calloc(1, sizeof(*f));
	struct sockaddr_in self_sa, a_sa;
	struct timespec t0;
	int a_sock;
	unsigned int npeers = 0, base = UFI_MAX_STRANGERS - 300;

	(void)state;
	assert_non_null(f);
	fx_init(f);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	print_message("fabric hello fuzz: seed %#llx (UNET_FUZZ_SEED), %llu datagrams "
		      "(UNET_FUZZ_COUNT)\n",
		      (unsigned long long)seed, (unsigned long long)n);
	f->ep.udp_fd = udp_lo(&self_sa);
	a_sock = udp_lo(&a_sa);
	f->ep.name = f->a.name;
	f->ep.name.mac[5] = 0x01;
	f->ep.name.nonce = 0x5e1f;
	f->ep.name.ip = self_sa.sin_addr.s_addr;
	f->ep.name.port = self_sa.sin_port;
	f->a.name.ip = a_sa.sin_addr.s_addr;
	f->a.name.port = a_sa.sin_port;
	f->b.name.ip = a_sa.sin_addr.s_addr;
	f->b.name.port = htons(9); /* b: a name nobody sends from */
	/* Close to the strangers' bound, so the run reaches it. */
	f->ep.strangers = base;
	want_strangers = base;

	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = fuzz_next(&rng);
		uint8_t b[HELLO_LEN + 64];
		struct ufi_name from = f->a.name;
		struct sockaddr_in sa = a_sa;
		socklen_t fl = sizeof(sa);
		size_t len = HELLO_LEN;
		bool stranger = (r >> 4) % 4 == 0, take;
		uint16_t ft = f->a.rtag, tt = (r >> 8) % 2 ? 0 : f->a.ltag;
		/* a's nonce, and ours echoed (authenticated) */
		uint32_t mine = 0x5eed0a01u + (uint32_t)((r >> 36) % 3), yours = f->a.my_nonce;
		uint32_t nonce_before = f->a.my_nonce;
		bool rolls = false; /* the call must renew our nonce for a */
		struct ufi_hello h;
		uint8_t *d;

		if (stranger) { /* a name never seen: a fresh nonce */
			from.nonce = (uint32_t)(0x80000000u | (uint32_t)i);
			ft = (uint16_t)(TAG_MIN + (r >> 16) % 1000);
			tt = (r >> 12) % 4 ? 0 : (uint16_t)(r >> 32);
			mine = (uint32_t)(r >> 32) | 1;
			yours = (uint32_t)r;
		} else if ((r >> 10) % 4 == 0) {
			ft = (uint16_t)(r >> 16); /* any tag, from a spoofer: unproven */
			yours = (uint32_t)(r >> 40) | 0x100u;
		} else if ((r >> 10) % 8 == 1) {
			yours = 0; /* a peer that has not heard from us */
		} else if ((r >> 10) % 8 == 2) {
			ft = 0; /* a challenge */
		}
		hello_build(b, &from, &f->ep.name, ft, tt, mine, yours);
		if ((r >> 20) % 2) {
			for (unsigned int k = 0, nm = 1 + (unsigned int)((r >> 24) % 3); k < nm; k++) {
				uint64_t x = fuzz_next(&rng);

				switch (x % 8) {
				case 0:
					b[(x >> 8) % HELLO_LEN] ^= (uint8_t)(1u << ((x >> 16) % 8));
					break;
				case 1:
					b[(x >> 8) % HELLO_LEN] = (uint8_t)(x >> 16);
					break;
				case 2: /* cut */
					len = (x >> 8) % HELLO_LEN;
					break;
				case 3: /* longer */
					len = HELLO_LEN + 1 + (x >> 8) % 63;
					memset(b + HELLO_LEN, (int)(x >> 16) & 0xff, len - HELLO_LEN);
					break;
				case 4: { /* a tag at an edge */
					static const uint16_t te[] = { 0, 1, TAG_MIN - 1, TAG_MIN,
								       TAG_MIN + 1, 0xffff };

					put16(b + HELLO_FT + 2 * ((x >> 8) % 2), te[(x >> 12) % 6]);
					break;
				}
				case 5: /* from somewhere else than its name says */
					if ((x >> 8) % 2)
						sa.sin_port = htons((uint16_t)(ntohs(sa.sin_port) + 1));
					else
						sa.sin_addr.s_addr ^= htonl(1);
					break;
				case 6: { /* a field of the sender's name at an edge */
					static const uint8_t pe[] = { 0, 1, 8, 30, 31, 32, 33, 255 };
					uint8_t *fn = b + 4;

					switch ((x >> 8) % 5) {
					case 0: /* flags */
						fn[3] = (uint8_t)(x >> 16) & 3;
						break;
					case 1: /* the MAC multicast or zero */
						if ((x >> 12) % 2)
							fn[4] |= 1;
						else
							memset(fn + 4, 0, 6);
						break;
					case 2: /* the prefix */
						fn[18] = pe[(x >> 12) % 8];
						break;
					case 3: /* the address's top or host byte */
						fn[(x >> 12) % 2 ? 12 : 15] = (uint8_t)(x >> 16);
						break;
					default: /* the family another, or port 0 */
						if ((x >> 12) % 3 == 0)
							fn[19] = (uint8_t)(x >> 16) | 1;
						else if ((x >> 12) % 3 == 1)
							fn[19] = 6; /* IPv6 with the IPv4 bytes */
						else
							memset(fn + 16, 0, 2);
						break;
					}
					break;
				}
				default: /* the address length or family wrong */
					if ((x >> 8) % 2)
						fl = (socklen_t)((x >> 12) % sizeof(sa));
					else
						sa.sin_family = AF_INET6;
					break;
				}
			}
		}
		/* the datagram in a heap block of its exact size: ASan sees a
		 * read past it */
		d = malloc(len ? len : 1);
		assert_non_null(d);
		memcpy(d, b, len);
		take = hello_model(&f->ep.name, b, len, &sa, fl);
		if ((ufi_hello_parse(&f->ep.name, d, len, (const struct sockaddr *)&sa, fl, &h) == 0) != take)
			fail_msg("datagram %llu (%zu bytes): parsed %s, the rules say %s "
				 "(replay: UNET_FUZZ_SEED=%#llx)",
				 (unsigned long long)i, len, take ? "no" : "yes", take ? "yes" : "no",
				 (unsigned long long)seed);
		if (take) {
			struct ufi_name fn;

			memcpy(&fn, b + 4, sizeof(fn));
			accepted++;
			assert_memory_equal(&h.from, &fn, UFI_NAME_LEN);
			assert_int_equal(h.from_tag, b[HELLO_FT] << 8 | b[HELLO_FT + 1]);
			assert_int_equal(h.to_tag, b[HELLO_FT + 2] << 8 | b[HELLO_FT + 3]);
			if (!memcmp(&fn, &f->a.name, UFI_NAME_LEN)) {
				/* up: a challenge or an unproven HELLO is answered
				 * (our HELLO, its nonce echoed); a proven one with
				 * another tag is challenged (a fresh nonce, from tag
				 * 0), and renegotiates only when it echoes that
				 * challenge (the channel cannot open here: a fails,
				 * and is set up again below); a proven one with a's
				 * tag uses a challenge up, and is answered when our
				 * answer was lost */
				if (h.from_tag == 0 || hello_u32(b, HELLO_FT + 8) != f->a.my_nonce) {
					want_answers++;
				} else if (h.from_tag != f->a.rtag && challenged) {
					want_renegs++;
					challenged = false;
				} else if (h.from_tag != f->a.rtag) {
					want_challenges++;
					challenged = rolls = true;
				} else {
					want_answers += h.to_tag != f->a.ltag;
					rolls = challenged;
					challenged = false;
				}
			} else if (!memcmp(&fn, &f->b.name, UFI_NAME_LEN) ||
				   !memcmp(&fn, &f->ep.name, UFI_NAME_LEN)) {
				/* nothing */
			} else if (h.to_tag == 0 && want_strangers < UFI_MAX_STRANGERS) {
				bool seen = false;

				for (const struct ufi_peer *p = f->ep.peers; p; p = p->next)
					seen |= !memcmp(&p->name, &fn, UFI_NAME_LEN);
				want_strangers += !seen;
			}
		}
		ufi_conn_hello(&f->ep, d, len, (const struct sockaddr *)&sa, fl);
		free(d);
		if (rolls)
			assert_int_not_equal(f->a.my_nonce, nonce_before);
		else if (f->a.state == UFI_PEER_UP)
			assert_int_equal(f->a.my_nonce, nonce_before);
		if (f->a.state != UFI_PEER_UP) {
			/* only a proven HELLO with another tag (renegotiation) */
			renegs++;
			assert_int_equal(renegs, want_renegs);
			f->a.state = UFI_PEER_UP;
			f->a.rtag = 3000;
			f->a.ltag = 2000;
			f->a.err = 0;
		}
		if (i % 32 == 31)
			answers += drain_answers(a_sock, f, &challenges);
	}
	answers += drain_answers(a_sock, f, &challenges);
	for (const struct ufi_peer *p = f->ep.peers; p; p = p->next)
		npeers++;
	print_message("fabric hello fuzz: %llu accepted, %llu answered, %llu challenged, %llu strangers (bound %d), "
		      "%.2f s\n",
		      (unsigned long long)accepted, (unsigned long long)answers, (unsigned long long)challenges,
		      (unsigned long long)(f->ep.strangers - base), UFI_MAX_STRANGERS,
		      secs_since(&t0));
	assert_int_equal(answers, want_answers);
	assert_int_equal(renegs, want_renegs);
	assert_true(renegs > 0);
	assert_int_equal(challenges, want_challenges);
	assert_int_equal(f->ep.strangers, want_strangers);
	assert_int_equal(f->ep.strangers, UFI_MAX_STRANGERS); /* the bound was reached */
	assert_int_equal(npeers, 2 + want_strangers - base);
	assert_true(accepted > n / 4 && accepted < n - n / 10);
	/* a and b untouched */
	assert_int_equal(f->a.state, UFI_PEER_UP);
	assert_int_equal(f->a.rtag, 3000);
	assert_int_equal(f->a.ltag, 2000);
	assert_int_equal(f->b.state, UFI_PEER_UP);

	/* After the storm: a's HELLO saying our answer was lost is answered. */
	{
		uint8_t b[HELLO_LEN];
		struct timespec ts = { 0, 10000000 };

		hello_build(b, &f->a.name, &f->ep.name, f->a.rtag, 0, 0x5eed0a01u, f->a.my_nonce);
		ufi_conn_hello(&f->ep, b, sizeof(b), (const struct sockaddr *)&a_sa, sizeof(a_sa));
		nanosleep(&ts, NULL);
		assert_int_equal(drain_answers(a_sock, f, NULL), 1);
	}
	/* And through the socket: a datagram longer than a HELLO whose start
	 * is that HELLO is refused (the receive must not cut it to size),
	 * the HELLO itself answered. */
	{
		uint8_t b[HELLO_LEN + 8] = { 0 };
		struct timespec ts = { 0, 10000000 };

		hello_build(b, &f->a.name, &f->ep.name, f->a.rtag, 0, 0x5eed0a01u, f->a.my_nonce);
		assert_int_equal(sendto(a_sock, b, sizeof(b), 0, (struct sockaddr *)&self_sa,
					sizeof(self_sa)),
				 sizeof(b));
		nanosleep(&ts, NULL);
		ufi_conn_poll(&f->ep, 0);
		nanosleep(&ts, NULL);
		assert_int_equal(drain_answers(a_sock, f, NULL), 0);
		assert_int_equal(sendto(a_sock, b, HELLO_LEN, 0, (struct sockaddr *)&self_sa,
					sizeof(self_sa)),
				 HELLO_LEN);
		nanosleep(&ts, NULL);
		ufi_conn_poll(&f->ep, 0);
		nanosleep(&ts, NULL);
		assert_int_equal(drain_answers(a_sock, f, NULL), 1);
	}
	close(a_sock);
	close(f->ep.udp_fd);
	/* the strangers */
	while (f->ep.peers != &f->a) {
		struct ufi_peer *p = f->ep.peers;

		f->ep.peers = p->next;
		free(p);
	}
	fx_free(f);
	free(f);
}

/*
 * Made-up names in HELLOs.  A first HELLO from a name not in
 * our AV makes only a record (bounded, 4096); a channel comes once its
 * HELLO is authenticated (conn.c), and strangers holding one are at most
 * a quarter of the endpoint's channels (8 of the default 32,
 * ufi_stranger_admit); past that a stranger that never sent a message
 * within the grace, or failed, is reclaimed, and if none is the HELLO is
 * ignored; one that talks is never reclaimed.  A stranger's failure is
 * never reported on a wildcard receive (an AV peer's still is), and a
 * failed peer gives its channel back.  (No network here: strangers are
 * admitted and marked up by hand, as the HELLO's channel would.)
 */
static struct ufi_peer *stranger_up(struct fx *f, uint32_t k)
{
	struct ufi_name n = f->a.name;
	struct ufi_peer *p;

	n.nonce = 0x57000000u + k;
	p = ufi_peer_stranger(&f->ep, &n);
	if (!p || !ufi_stranger_admit(&f->ep, p))
		return NULL; /* the record stays, with no channel */
	p->state = UFI_PEER_UP;
	return p;
}

/* Strangers holding a channel. */
static unsigned int strangers_up(const struct ufi_ep *ep)
{
	unsigned int n = 0;

	for (const struct ufi_peer *p = ep->peers; p; p = p->next)
		n += p->addr == FI_ADDR_NOTAVAIL && p->state == UFI_PEER_UP;
	return n;
}

static void test_strangers_bounded(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct ufi_peer *s[8], *talker, *p;
	uint8_t buf[64];
	uint32_t k = 0;

	(void)state;
	assert_non_null(f);
	fx_init(f);
	/* the default endpoint: 2048 receive buffers, window 32: 32 peers */
	assert_int_equal(ufi_stranger_quota(2048, 32), 8);
	assert_int_equal(ufi_stranger_quota(64, 32), 1);
	f->ep.stranger_quota = ufi_stranger_quota(2048, 32);
	for (int i = 0; i < 8; i++)
		assert_non_null(s[i] = stranger_up(f, k++));
	/* the quota is reached; all are fresh: the next are refused */
	for (int i = 0; i < 100; i++)
		assert_null(stranger_up(f, k++));
	assert_int_equal(strangers_up(&f->ep), 8);
	assert_int_equal(f->ep.strangers, 108); /* records: no channel */
	/* one talks; then all are past their grace: the silent ones are
	 * reclaimed for new names, oldest first, the talker never */
	talker = s[3];
	talker->heard = true;
	for (p = f->ep.peers; p; p = p->next)
		p->since_ns -= (UFI_STRANGER_GRACE_MS + 1) * 1000000ull;
	for (int i = 0; i < 7; i++)
		assert_non_null(stranger_up(f, k++));
	assert_null(stranger_up(f, k++)); /* the 7 new ones are fresh */
	assert_int_equal(strangers_up(&f->ep), 8);
	for (p = f->ep.peers; p && p != talker; p = p->next)
		;
	assert_ptr_equal(p, talker);

	/* a wildcard receive is posted; a stranger fails: not reported on it */
	assert_int_equal(ufi_recv(&f->ep, buf, sizeof(buf), FI_ADDR_UNSPEC, 0, ~0ull,
				  FI_TAGGED | FI_COMPLETION, buf),
			 0);
	ufi_peer_fail(&f->ep, talker, -ETIMEDOUT);
	assert_null(f->rxcq.ehead);
	assert_int_equal(posted_len(&f->ep, 1), 1);
	/* it gave its channel back and its place: a new name is taken */
	assert_null(talker->ch);
	assert_null(talker->uch);
	assert_non_null(stranger_up(f, k++));
	/* an AV peer's failure with nothing waiting on it still ends the
	 * wildcard receive (MPI_ANY_SOURCE learns of it) */
	ufi_peer_fail(&f->ep, &f->b, -ETIMEDOUT);
	assert_non_null(f->rxcq.ehead);
	assert_int_equal(posted_len(&f->ep, 1), 0);

	while (f->ep.peers != &f->a) {
		p = f->ep.peers;
		f->ep.peers = p->next;
		free(p);
	}
	fx_free(f);
	free(f);
}

/*
 * Unexpected messages are bounded by withholding credit,
 * never by dropping.  Peer a floods eager messages nobody receives: once
 * it holds ep.ux_peer_max (64 KiB here) its channel is paused (in a real
 * endpoint UAM then takes no more of its messages: test_uam_proto
 * test_chan_pause); b, adding to the endpoint past ep.ux_max (96 KiB), is
 * paused too.  Receives posted afterwards take every message (none was
 * dropped) and the peers are resumed as they get under the bounds.
 */
static void feed_eager(struct fx *f, struct ufi_peer *p, uint64_t tag, size_t len)
{
	static uint8_t data[1024];
	struct uam_msg m = { .kind = UAM_MSG_REQUEST, .handler = H_EAGER, .nargs = 2 };

	m.args[0] = tag;
	m.args[1] = ((uint64_t)len << 8) | 1; /* UFI_MF_TAGGED */
	m.data = data;
	m.data_len = (uint32_t)len;
	ufi_proto_input(&f->ep, p, &m);
}

static void test_ux_bounded(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	unsigned int na = 0, nb = 0, got = 0;
	static uint8_t buf[1024];

	(void)state;
	assert_non_null(f);
	fx_init(f);
	f->ep.ux_peer_max = 64 << 10;
	f->ep.ux_max = 96 << 10;
	while (!f->a.ux_paused && na < 1000) {
		feed_eager(f, &f->a, na, 1000);
		na++;
	}
	print_message("unexpected: peer a paused after %u messages, %zu bytes held\n", na,
		      f->a.ux_bytes);
	assert_true(f->a.ux_paused);
	assert_true(f->a.ux_bytes >= 64 << 10 && f->a.ux_bytes < (64 << 10) + 1000 + 256);
	assert_false(f->b.ux_paused);
	/* b's own first messages are taken; the endpoint's bound pauses it */
	while (!f->b.ux_paused && nb < 1000) {
		feed_eager(f, &f->b, 100000 + nb, 1000);
		nb++;
	}
	assert_true(f->b.ux_paused);
	assert_true(f->ep.ux_bytes >= 96 << 10 && f->ep.ux_bytes < (96 << 10) + 1000 + 256);
	assert_int_equal(f->ep.ux_bytes, f->a.ux_bytes + f->b.ux_bytes);
	assert_int_equal(ux_len(&f->ep, 1), na + nb);

	/* every message is received; the peers are resumed on the way */
	for (unsigned int i = 0; i < na + nb; i++) {
		assert_int_equal(ufi_recv(&f->ep, buf, sizeof(buf), FI_ADDR_UNSPEC, 0, ~0ull,
					  FI_TAGGED | FI_COMPLETION, buf),
				 0);
		if (i == nb + 40) /* the endpoint is well under its bound */
			assert_false(f->b.ux_paused);
	}
	for (const struct ufi_cqe *e = f->rxcq.head; e; e = e->next)
		got++;
	assert_int_equal(got, na + nb);
	assert_null(f->rxcq.ehead);
	assert_false(f->a.ux_paused);
	assert_false(f->b.ux_paused);
	assert_int_equal(f->ep.ux_bytes, 0);
	assert_int_equal(f->a.ux_bytes, 0);
	fx_free(f);
	free(f);
}

/*
 * One spoofed datagram must not break a pair.  A host that
 * can send from peer a's address (but not receive a's traffic) sends a
 * HELLO with a tag of its own before a does: we take no tag from it, we
 * only challenge the address in a's name (our HELLO, from_tag 0, our
 * nonce for a, its nonce echoed).  The real a, which gets the challenge,
 * echoes our nonce: its tag is taken, and our nonce for a renewed.  Up,
 * a spoofed HELLO with another tag changes nothing (a's address gets our
 * HELLO again), nor does one echoing a nonce seen on the wire: the
 * setup's (used up) or one we sent since (only challenged, from tag 0
 * with a fresh nonce; the real a answers with its own tag, which uses
 * the challenge up).  A HELLO with another tag that echoes a fresh
 * challenge (a set its side up anew) renegotiates.  (No network
 * here: taking a tag tries to open the channel, which fails, so what is
 * checked is the tag taken.)
 */
static void test_hello_spoofed(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct sockaddr_in self_sa, a_sa;
	struct timespec ts = { 0, 5000000 };
	uint8_t b[HELLO_LEN], got[128];
	uint32_t seen;
	int a_sock;

	(void)state;
	assert_non_null(f);
	fx_init(f);
	f->ep.udp_fd = udp_lo(&self_sa);
	a_sock = udp_lo(&a_sa);
	f->ep.name = f->b.name;
	f->ep.name.mac[5] = 0x01;
	f->ep.name.ip = self_sa.sin_addr.s_addr;
	f->ep.name.port = self_sa.sin_port;
	f->a.name.ip = a_sa.sin_addr.s_addr;
	f->a.name.port = a_sa.sin_port;
	f->a.state = UFI_PEER_IDLE; /* a has not asked yet */
	f->a.ltag = f->a.rtag = 0;

	/* the spoofer, from a's address, before a */
	hello_build(b, &f->a.name, &f->ep.name, 0x1111, 0, 0xbad0bad0u, 0);
	ufi_conn_hello(&f->ep, b, sizeof(b), (const struct sockaddr *)&a_sa, sizeof(a_sa));
	assert_int_equal(f->a.state, UFI_PEER_IDLE);
	assert_int_equal(f->a.rtag, 0);
	nanosleep(&ts, NULL);
	/* the challenge went to a's address */
	assert_int_equal(recv(a_sock, got, sizeof(got), 0), HELLO_LEN);
	assert_memory_equal(got + 4, &f->ep.name, UFI_NAME_LEN);
	assert_memory_equal(got + 4 + UFI_NAME_LEN, &f->a.name, UFI_NAME_LEN);
	assert_int_equal(got[HELLO_FT] << 8 | got[HELLO_FT + 1], 0);
	assert_int_equal(hello_u32(got, HELLO_FT + 4), A_NONCE);
	assert_int_equal(hello_u32(got, HELLO_FT + 8), 0xbad0bad0u);
	/* the real a: its own HELLO first (unproven: challenged too), then
	 * with our nonce echoed: its tag is taken */
	hello_build(b, &f->a.name, &f->ep.name, 0x2222, 0, 0xa0a0a0a0u, 0);
	ufi_conn_hello(&f->ep, b, sizeof(b), (const struct sockaddr *)&a_sa, sizeof(a_sa));
	assert_int_equal(f->a.rtag, 0);
	hello_build(b, &f->a.name, &f->ep.name, 0x2222, 0, 0xa0a0a0a0u, hello_u32(got, HELLO_FT + 4));
	ufi_conn_hello(&f->ep, b, sizeof(b), (const struct sockaddr *)&a_sa, sizeof(a_sa));
	assert_int_equal(f->a.rtag, 0x2222);
	/* the challenge's nonce is used up: the next ones are fresh */
	seen = hello_u32(got, HELLO_FT + 4);
	assert_int_not_equal(f->a.my_nonce, seen);

	/* up (as if the channel had opened) */
	f->a.state = UFI_PEER_UP;
	f->a.ltag = 2000;
	f->a.err = 0;
	while (recv(a_sock, got, sizeof(got), 0) >= 0)
		;
	/* a spoofed HELLO with another tag: nothing changes, a gets our HELLO */
	hello_build(b, &f->a.name, &f->ep.name, 0x3333, 0, 0xbad0bad1u, 0x12345678u);
	ufi_conn_hello(&f->ep, b, sizeof(b), (const struct sockaddr *)&a_sa, sizeof(a_sa));
	assert_int_equal(f->a.state, UFI_PEER_UP);
	assert_int_equal(f->a.rtag, 0x2222);
	nanosleep(&ts, NULL);
	assert_int_equal(recv(a_sock, got, sizeof(got), 0), HELLO_LEN);
	assert_int_equal(got[HELLO_FT] << 8 | got[HELLO_FT + 1], 2000);
	assert_int_equal(got[HELLO_FT + 2] << 8 | got[HELLO_FT + 3], 0x2222);
	assert_int_not_equal(hello_u32(got, HELLO_FT + 4), seen);

	/* The setup's challenge, seen on the wire once, echoed later with
	 * another tag (before the fix: a renegotiation, the pair's channel
	 * failed with ECONNRESET): unproven, nothing changes, a gets our
	 * HELLO. */
	hello_build(b, &f->a.name, &f->ep.name, 0x5555, 0, 0xbad0bad2u, seen);
	ufi_conn_hello(&f->ep, b, sizeof(b), (const struct sockaddr *)&a_sa, sizeof(a_sa));
	assert_int_equal(f->a.state, UFI_PEER_UP);
	assert_int_equal(f->a.rtag, 0x2222);
	nanosleep(&ts, NULL);
	assert_int_equal(recv(a_sock, got, sizeof(got), 0), HELLO_LEN);
	assert_int_equal(got[HELLO_FT] << 8 | got[HELLO_FT + 1], 2000);

	/* The nonce of a HELLO we sent since (the answer just above), echoed
	 * with another tag: still no renegotiation, only a fresh challenge
	 * (from tag 0, a new nonce) to a's address. */
	seen = hello_u32(got, HELLO_FT + 4);
	hello_build(b, &f->a.name, &f->ep.name, 0x4444, 0, 0xbad0bad3u, seen);
	ufi_conn_hello(&f->ep, b, sizeof(b), (const struct sockaddr *)&a_sa, sizeof(a_sa));
	assert_int_equal(f->a.state, UFI_PEER_UP);
	assert_int_equal(f->a.rtag, 0x2222);
	nanosleep(&ts, NULL);
	assert_int_equal(recv(a_sock, got, sizeof(got), 0), HELLO_LEN);
	assert_int_equal(got[HELLO_FT] << 8 | got[HELLO_FT + 1], 0);
	assert_int_not_equal(hello_u32(got, HELLO_FT + 4), seen);
	/* the real a, up, answers it with its own tag: that uses it up */
	seen = hello_u32(got, HELLO_FT + 4);
	hello_build(b, &f->a.name, &f->ep.name, 0x2222, 2000, 0xa0a0a0a1u, seen);
	ufi_conn_hello(&f->ep, b, sizeof(b), (const struct sockaddr *)&a_sa, sizeof(a_sa));
	assert_int_equal(f->a.rtag, 0x2222);
	assert_int_not_equal(f->a.my_nonce, seen);
	hello_build(b, &f->a.name, &f->ep.name, 0x4444, 0, 0xbad0bad4u, seen);
	ufi_conn_hello(&f->ep, b, sizeof(b), (const struct sockaddr *)&a_sa, sizeof(a_sa));
	assert_int_equal(f->a.rtag, 0x2222);
	while (recv(a_sock, got, sizeof(got), 0) >= 0)
		;

	/* a, setting its side up anew: its HELLO with another tag and our
	 * current nonce is challenged; its echo of the challenge
	 * renegotiates */
	hello_build(b, &f->a.name, &f->ep.name, 0x4444, 0, 0xa0a0a0a2u, f->a.my_nonce);
	ufi_conn_hello(&f->ep, b, sizeof(b), (const struct sockaddr *)&a_sa, sizeof(a_sa));
	assert_int_equal(f->a.rtag, 0x2222);
	nanosleep(&ts, NULL);
	assert_int_equal(recv(a_sock, got, sizeof(got), 0), HELLO_LEN);
	assert_int_equal(got[HELLO_FT] << 8 | got[HELLO_FT + 1], 0);
	hello_build(b, &f->a.name, &f->ep.name, 0x4444, 0, 0xa0a0a0a2u, hello_u32(got, HELLO_FT + 4));
	ufi_conn_hello(&f->ep, b, sizeof(b), (const struct sockaddr *)&a_sa, sizeof(a_sa));
	assert_int_equal(f->a.rtag, 0x4444);

	close(a_sock);
	close(f->ep.udp_fd);
	fx_free(f);
	free(f);
}

/* A name as an endpoint on 10.201.0.1/24 gives it. */
static struct ufi_name name_at(const char *ip, unsigned int prefix)
{
	struct ufi_name n = { .magic = { 'U', 'F' }, .version = 2, .family = 4,
			      .mac = { 0x02, 0, 0, 0, 0, 0x0a }, .ep_id = htons(3),
			      .port = htons(47000), .nonce = 0x0123abcd };

	n.prefix = (uint8_t)prefix;
	assert_int_equal(inet_pton(AF_INET, ip, &n.ip), 1);
	return n;
}

/* An address and prefix, and whether a name at it is valid. */
struct name_case {
	const char *ip;
	unsigned int prefix;
	bool ok;
};

/* Each case as a name of one family (at): valid as it says, by the
 * provider and by the model alike. */
static void check_name_cases(const struct name_case *cases, size_t count,
			     struct ufi_name (*at)(const char *ip, unsigned int prefix))
{
	for (size_t i = 0; i < count; i++) {
		struct ufi_name m = at(cases[i].ip, cases[i].prefix);

		if (ufi_name_valid(&m) != cases[i].ok || name_model(&m) != cases[i].ok)
			fail_msg("%s/%u: valid %d, want %d", cases[i].ip, cases[i].prefix,
				 !cases[i].ok, cases[i].ok);
	}
}

/* n with the routed flag in its string form: exactly want (fixed width),
 * read back to the same bytes, and refused by a buffer one byte short. */
static void check_name_string(const struct ufi_name *n, const char *want)
{
	struct ufi_name m = *n, c;
	char s[UFI_STR_LEN];
	int len = (int)strlen(want);

	m.flags = UFI_NAME_F_ROUTED;
	assert_int_equal(ufi_name_to_str(&m, s, sizeof(s)), len);
	assert_string_equal(s, want);
	assert_int_equal(ufi_name_from_str(s, &c), 0);
	assert_memory_equal(&c, &m, UFI_NAME_LEN);
	assert_int_equal(ufi_name_to_str(&m, s, (size_t)len), -FI_ETOOSMALL);
}

/* Both ends of a channel between names a and b choose the same kind. */
#define assert_routed_both(a, b, want)                         \
	do {                                                   \
		assert_int_equal(ufi_name_routed(a, b), want); \
		assert_int_equal(ufi_name_routed(b, a), want); \
	} while (0)

/* Every field of a name from outside is checked, the string form
 * round-trips, and both ends of a channel choose the same kind. */
static void test_names(void **state)
{
	struct ufi_name n = name_at("10.201.0.1", 24), m, c = name_at("10.202.0.2", 24);
	static const struct name_case ips[] = {
		{ "10.201.0.1", 24, true },	{ "10.201.0.0", 24, false }, /* the subnet's own */
		{ "10.201.0.255", 24, false },	/* its broadcast */
		{ "10.201.0.255", 16, true },	{ "10.201.0.0", 31, true },
		{ "10.201.0.1", 32, true },	{ "10.201.0.1", 0, false },
		{ "10.201.0.1", 33, false },	{ "0.0.0.0", 24, false },
		{ "0.1.2.3", 8, false },	{ "224.0.0.1", 24, false },
		{ "239.1.2.3", 8, false },	{ "240.0.0.1", 8, false },
		{ "255.255.255.255", 24, false }, { "127.0.0.1", 8, true },
	};

	(void)state;
	check_name_cases(ips, sizeof(ips) / sizeof(ips[0]), name_at);
	m = n, m.flags = 0x02;
	assert_false(ufi_name_valid(&m));
	m = n, m.flags = UFI_NAME_F_ROUTED;
	assert_true(ufi_name_valid(&m));
	m = n, m.family = 0; /* version 1's reserved byte: no family */
	assert_false(ufi_name_valid(&m));
	m = n, m.family = 6; /* an IPv4 address under family 6 */
	assert_false(ufi_name_valid(&m));
	m = n, m.ip6[15] = 1; /* IPv6 bytes under family 4 */
	assert_false(ufi_name_valid(&m));
	m = n, m.mac[0] = 0x03; /* multicast */
	assert_false(ufi_name_valid(&m));
	m = n, memset(m.mac, 0, 6);
	assert_false(ufi_name_valid(&m));
	m = n, m.port = 0;
	assert_false(ufi_name_valid(&m));
	m = n, m.version = 1; /* in memory every name is version 2 (ufi_name_from_bin) */
	assert_false(ufi_name_valid(&m));
	m = n, m.version = 3;
	assert_false(ufi_name_valid(&m));

	/* the string form: fixed width, round trip, the same checks */
	check_name_string(&n, "fi_unet://02:00:00:00:00:0a/ep=00003/010.201.000.001/24:47000/"
			      "f=01/nonce=0123abcd");
	assert_int_not_equal(ufi_name_from_str("fi_unet://02:00:00:00:00:0a/ep=00003/"
					       "010.201.000.001/33:47000/f=00/nonce=0123abcd", &c), 0);
	assert_int_not_equal(ufi_name_from_str("fi_unet://02:00:00:00:00:0a/ep=00003/"
					       "224.201.000.001/24:47000/f=00/nonce=0123abcd", &c), 0);
	assert_int_not_equal(ufi_name_from_str("fi_unet://02:00:00:00:00:0a/ep=00003/"
					       "010.201.000.001/24:47000/f=04/nonce=0123abcd", &c), 0);
	assert_int_not_equal(ufi_name_from_str("fi_unet://02:00:00:00:00:0a/ep=00003/"
					       "010.201.000.001/24:00000/f=00/nonce=0123abcd", &c), 0);
	assert_int_not_equal(ufi_name_from_str("fi_unet://02:00:00:00:00:0a/ep=00003/"
					       "010.201.000.001/24:47000/f=00/nonce=0123abcdx", &c), 0);
	/* the old form (no prefix, no flags) is refused, not misread */
	assert_int_not_equal(ufi_name_from_str("fi_unet://02:00:00:00:00:0a/ep=00003/"
					       "010.201.000.001:47000/nonce=0123abcd", &c), 0);

	/* an AV insert of a bad name is refused */
	{
		struct ufi_addrs t = { 0 };
		fi_addr_t a;

		m = n, m.prefix = 40;
		assert_int_equal(ufi_addrs_add(&t, &m, &a), -FI_EINVAL);
		assert_true(a == FI_ADDR_NOTAVAIL);
		assert_int_equal(ufi_addrs_add(&t, &n, &a), 0);
		assert_true(a == 0);
		ufi_addrs_free(&t);
	}

	/* the channel's kind, alike from both ends */
	m = name_at("10.201.0.2", 24);
	assert_routed_both(&n, &m, false);
	c = name_at("10.202.0.2", 24);
	assert_routed_both(&n, &c, true);
	/* prefixes that disagree: on-link only if both ends say so */
	m = name_at("10.201.1.2", 16);
	assert_routed_both(&n, &m, true);
	m = name_at("10.201.0.2", 16);
	assert_routed_both(&n, &m, false);
	/* one end asks for routable channels: both use them */
	m = name_at("10.201.0.2", 24);
	m.flags = UFI_NAME_F_ROUTED;
	assert_routed_both(&n, &m, true);
}

/* A name as an endpoint on an IPv6 interface gives it. */
static struct ufi_name name6_at(const char *ip, unsigned int prefix)
{
	struct ufi_name n = name_at("10.0.0.1", 8);

	n.ip = 0;
	n.family = 6;
	n.prefix = (uint8_t)prefix;
	assert_int_equal(inet_pton(AF_INET6, ip, n.ip6), 1);
	return n;
}

/* IPv6 names: every field checked, the string form (fixed width, one
 * spelling) round-trips, the channel's kind alike from both ends. */
static void test_names6(void **state)
{
	struct ufi_name n = name6_at("fd01::1", 64), m, c;
	static const struct name_case ips[] = {
		{ "fd01::1", 64, true },	  { "2001:db8:1::5", 48, true },
		{ "fd01::", 64, false },	  /* the subnet-router anycast address */
		{ "fd01::", 127, true },	  { "fd01::", 128, true },
		{ "fd01::1", 0, false },	  { "fd01::1", 129, false },
		{ "fd01::1", 255, false },	  { "::", 64, false },
		{ "::1", 128, true },		  { "::ffff:10.1.2.3", 96, false }, /* IPv4-mapped */
		{ "::10.1.2.3", 96, false },	  { "fe80::1", 64, false }, /* needs a scope */
		{ "febf::1", 64, false },	  { "fec0::1", 64, true },
		{ "ff02::1", 64, false },	  { "ff0e::1", 16, false },
	};

	(void)state;
	check_name_cases(ips, sizeof(ips) / sizeof(ips[0]), name6_at);
	m = n, m.ip = htonl(0x0a000001); /* IPv4 bytes under family 6 */
	assert_false(ufi_name_valid(&m));
	m = n, m.family = 4; /* IPv6 bytes under family 4 */
	assert_false(ufi_name_valid(&m));
	m = n, m.port = 0;
	assert_false(ufi_name_valid(&m));

	/* the string form */
	check_name_string(&n, "fi_unet://02:00:00:00:00:0a/ep=00003/"
			      "[fd01:0000:0000:0000:0000:0000:0000:0001]/064:47000/f=01/nonce=0123abcd");
	static const char *const bad[] = {
		/* another spelling of a good name: one spelling only */
		"fi_unet://02:00:00:00:00:0a/ep=00003/[fd01::1]/064:47000/f=00/nonce=0123abcd",
		"fi_unet://02:00:00:00:00:0a/ep=00003/"
		"[fd01:0000:0000:0000:0000:0000:0000:0001]/64:47000/f=00/nonce=0123abcd",
		"fi_unet://02:00:00:00:00:0a/ep=00003/"
		"[FD01:0000:0000:0000:0000:0000:0000:0001]/064:47000/f=00/nonce=0123abcd",
		/* bad fields */
		"fi_unet://02:00:00:00:00:0a/ep=00003/"
		"[fd01:0000:0000:0000:0000:0000:0000:0001]/129:47000/f=00/nonce=0123abcd",
		"fi_unet://02:00:00:00:00:0a/ep=00003/"
		"[fe80:0000:0000:0000:0000:0000:0000:0001]/064:47000/f=00/nonce=0123abcd",
		"fi_unet://02:00:00:00:00:0a/ep=00003/"
		"[ff02:0000:0000:0000:0000:0000:0000:0001]/064:47000/f=00/nonce=0123abcd",
		"fi_unet://02:00:00:00:00:0a/ep=00003/"
		"[fd01:0000:0000:0000:0000:0000:0000:0000]/064:47000/f=00/nonce=0123abcd",
		"fi_unet://02:00:00:00:00:0a/ep=00003/"
		"[fd01:0000:0000:0000:0000:0000:0000:0001]/064:00000/f=00/nonce=0123abcd",
		"fi_unet://02:00:00:00:00:0a/ep=00003/"
		"[fd01:0000:0000:0000:0000:0000:0000:0001]/064:47000/f=02/nonce=0123abcd",
		"fi_unet://02:00:00:00:00:0a/ep=00003/"
		"[fd01:0000:0000:0000:0000:0000:0000:0001]/064:47000/f=00/nonce=0123abcdx",
		"fi_unet://02:00:00:00:00:0a/ep=00003/"
		"[fd01:0000:0000:0000:0000:0000:0000:0001%eth0]/064:47000/f=00/nonce=0123abcd",
		"fi_unet://02:00:00:00:00:0a/ep=00003/"
		"[fd01:0000:0000:0000:0000:0000:0000:0001/064:47000/f=00/nonce=0123abcd",
		"fi_unet://02:00:00:00:00:0a/ep=00003/"
		"[fd01:0000:0000:0000:0000:0000:0000:0000:0001]/064:47000/f=00/nonce=0123abcd",
		"fi_unet://02:00:00:00:00:0a/ep=00003/[]/064:47000/f=00/nonce=0123abcd",
		"fi_unet://02:00:00:00:00:0a/ep=00003/[010.201.000.001]/24:47000/f=00/nonce=0123abcd",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (ufi_name_from_str(bad[i], &c) == 0)
			fail_msg("taken: %s", bad[i]);

	/* the channel's kind: the longer prefix decides, as for IPv4 */
	m = name6_at("fd01::2", 64);
	assert_routed_both(&n, &m, false);
	c = name6_at("fd02::2", 64);
	assert_routed_both(&n, &c, true);
	m = name6_at("fd01::1:2", 112); /* on n's /64, not within a /112 */
	assert_routed_both(&n, &m, true);
	m = name6_at("fd01::3", 127); /* fd01::2/127 holds ::2 and ::3, not ::1 */
	assert_true(ufi_name_routed(&n, &m));
	m = name6_at("fd01::0", 127);
	assert_false(ufi_name_routed(&n, &m));
	m = name6_at("fd01::2", 64);
	m.flags = UFI_NAME_F_ROUTED;
	assert_routed_both(&n, &m, true);
	/* families that differ never share a raw channel (nor any) */
	c = name_at("10.201.0.1", 24);
	assert_routed_both(&n, &c, true);
}

/* Binary names from outside: the 40-byte form, and the 24-byte one of
 * version 1 (IPv4) converted; anything else refused, nothing read past
 * the slot (each in a heap block of its exact size: ASan). */
static void test_name_bin(void **state)
{
	struct ufi_name v4 = name_at("10.201.0.1", 24), v6 = name6_at("fd01::1", 64), n;
	uint8_t v1[UFI_NAME_V1_LEN];
	uint8_t *d;

	(void)state;
	/* version 1 as an older provider gave it: byte 2 is 1, byte 19 0 */
	memcpy(v1, &v4, sizeof(v1));
	v1[2] = 1;
	v1[19] = 0;
	assert_int_equal(ufi_name_bin_len(v1), UFI_NAME_V1_LEN);
	assert_int_equal(ufi_name_bin_len(&v4), UFI_NAME_LEN);
	/* no known version: no length (nothing past byte 2 is read) */
	n = v4, n.version = 3;
	assert_int_equal(ufi_name_bin_len(&n), 0);
	n = v4, n.magic[1] = 'G';
	assert_int_equal(ufi_name_bin_len(&n), 0);
	d = malloc(sizeof(v1));
	assert_non_null(d);
	memcpy(d, v1, sizeof(v1));
	assert_int_equal(ufi_name_from_bin(d, sizeof(v1), &n), 0);
	assert_memory_equal(&n, &v4, UFI_NAME_LEN);
	d[19] = 4; /* its reserved byte set */
	assert_int_equal(ufi_name_from_bin(d, sizeof(v1), &n), -FI_EINVAL);
	d[19] = 0, d[2] = 2; /* version 2 in a 24-byte slot */
	assert_int_equal(ufi_name_from_bin(d, sizeof(v1), &n), -FI_EINVAL);
	d[2] = 1, d[18] = 33; /* its fields checked as ever */
	assert_int_equal(ufi_name_from_bin(d, sizeof(v1), &n), -FI_EINVAL);
	free(d);

	d = malloc(UFI_NAME_LEN);
	assert_non_null(d);
	memcpy(d, &v6, UFI_NAME_LEN);
	assert_int_equal(ufi_name_from_bin(d, UFI_NAME_LEN, &n), 0);
	assert_memory_equal(&n, &v6, UFI_NAME_LEN);
	memcpy(d, &v4, UFI_NAME_LEN);
	assert_int_equal(ufi_name_from_bin(d, UFI_NAME_LEN, &n), 0);
	assert_memory_equal(&n, &v4, UFI_NAME_LEN);
	d[2] = 1; /* version 1 in a 40-byte slot */
	assert_int_equal(ufi_name_from_bin(d, UFI_NAME_LEN, &n), -FI_EINVAL);
	assert_int_equal(n.version, 0); /* zeroed, refused */
	/* other lengths */
	for (size_t len = 0; len <= UFI_NAME_LEN + 1; len++)
		if (len != UFI_NAME_V1_LEN && len != UFI_NAME_LEN)
			assert_int_equal(ufi_name_from_bin(d, len, &n), -FI_EINVAL);
	/* each refusal says why (the AV's warning) */
	assert_non_null(strstr(ufi_name_bin_why(d, 41), "length"));
	assert_non_null(strstr(ufi_name_bin_why(d, UFI_NAME_LEN), "version"));
	memcpy(d, &v6, UFI_NAME_LEN);
	assert_null(ufi_name_bin_why(d, UFI_NAME_LEN));
	d[19] = 4;
	assert_non_null(strstr(ufi_name_bin_why(d, UFI_NAME_LEN), "IPv6 address bytes"));
	d[19] = 5;
	assert_non_null(strstr(ufi_name_bin_why(d, UFI_NAME_LEN), "family"));
	d[19] = 6, d[18] = 129;
	assert_non_null(strstr(ufi_name_bin_why(d, UFI_NAME_LEN), "1-128"));
	d[18] = 64, d[24] = 0xfe, d[25] = 0x80;
	assert_non_null(strstr(ufi_name_bin_why(d, UFI_NAME_LEN), "link-local"));
	free(d);
	n = v4, n.ip6[0] = 1;
	assert_non_null(strstr(ufi_name_why(&n), "IPv6 address bytes"));
	n = v4, n.prefix = 0;
	assert_non_null(strstr(ufi_name_why(&n), "1-32"));
	n = v6, n.ip = 1;
	assert_non_null(strstr(ufi_name_why(&n), "IPv4 address bytes"));
	n = v6, n.port = 0;
	assert_non_null(strstr(ufi_name_why(&n), "port"));
	d = malloc(UFI_NAME_V1_LEN);
	assert_non_null(d);
	memcpy(d, v1, UFI_NAME_V1_LEN);
	d[19] = 1;
	assert_non_null(strstr(ufi_name_bin_why(d, UFI_NAME_V1_LEN), "reserved"));
	free(d);
}

/* A heap block of exactly len bytes holding buf's first len (ASan sees
 * any read past it). */
static uint8_t *exact(const void *buf, size_t len)
{
	uint8_t *d = malloc(len);

	assert_non_null(d);
	memcpy(d, buf, len);
	return d;
}

/* fi_av_insert and fi_av_straddr take names with no buffer length: a
 * name is read no further than its own first three bytes say it is long
 * (24 for version 1, 40 for version 2, nothing past them otherwise); one
 * call's names lie at the first one's length, and one of another length
 * or of no known version is refused with every name after it (where they
 * start is unknown).  Each buffer in a heap block of its exact size:
 * before the fix, a 24-byte buffer whose version byte was not 1 and a
 * 40-byte name followed by a 24-byte one were read as 40 bytes each
 * (ASan: heap-buffer-overflow). */
static void test_av_name_bounds(void **state)
{
	struct ufi_domain *dom = calloc(1, sizeof(*dom));
	struct fi_av_attr at = { .type = FI_AV_TABLE };
	struct ufi_name v[3] = { name_at("10.201.0.1", 24), name_at("10.201.0.2", 24),
				 name6_at("fd01::3", 64) };
	uint8_t v1[UFI_NAME_V1_LEN], buf[3 * UFI_NAME_LEN], *d;
	char s[UFI_STR_LEN], want[UFI_STR_LEN];
	struct fid_av *av;
	fi_addr_t fa[3];
	size_t l;

	(void)state;
	assert_non_null(dom);
	assert_int_equal(ufi_av_open(&dom->fid, &at, &av, NULL), 0);
	memcpy(v1, &v[1], sizeof(v1));
	v1[2] = 1;
	v1[19] = 0;

	/* straddr: a version-1 name in 24 bytes, one of no known version in
	 * 24 bytes and in 3, a version-2 name in 40 */
	d = exact(v1, sizeof(v1));
	l = sizeof(s);
	av->ops->straddr(av, d, s, &l);
	assert_true(ufi_name_to_str(&v[1], want, sizeof(want)) > 0);
	assert_string_equal(s, want);
	d[2] = 7;
	l = sizeof(s);
	av->ops->straddr(av, d, s, &l);
	assert_string_equal(s, "fi_unet://invalid");
	free(d);
	d = exact("UF\x09", 3);
	l = sizeof(s);
	av->ops->straddr(av, d, s, &l);
	assert_string_equal(s, "fi_unet://invalid");
	free(d);
	d = exact(&v[2], UFI_NAME_LEN);
	l = sizeof(s);
	av->ops->straddr(av, d, s, &l);
	assert_true(ufi_name_to_str(&v[2], want, sizeof(want)) > 0);
	assert_string_equal(s, want);
	free(d);

	/* insert: a 24-byte buffer of no known version */
	d = exact(v1, sizeof(v1));
	d[2] = 7;
	assert_int_equal(av->ops->insert(av, d, 1, fa, 0, NULL), 0);
	assert_true(fa[0] == FI_ADDR_NOTAVAIL);
	free(d);
	/* a 40-byte name, then a version-1 one: 64 bytes */
	memcpy(buf, &v[0], UFI_NAME_LEN);
	memcpy(buf + UFI_NAME_LEN, v1, sizeof(v1));
	d = exact(buf, UFI_NAME_LEN + UFI_NAME_V1_LEN);
	assert_int_equal(av->ops->insert(av, d, 2, fa, 0, NULL), 1);
	assert_true(fa[0] != FI_ADDR_NOTAVAIL && fa[1] == FI_ADDR_NOTAVAIL);
	free(d);
	/* 40, 24, 40: the third is not read either (it would start past
	 * 104 bytes at the first's stride) */
	memcpy(buf + UFI_NAME_LEN + UFI_NAME_V1_LEN, &v[2], UFI_NAME_LEN);
	d = exact(buf, 2 * UFI_NAME_LEN + UFI_NAME_V1_LEN);
	assert_int_equal(av->ops->insert(av, d, 3, fa, 0, NULL), 1);
	assert_true(fa[1] == FI_ADDR_NOTAVAIL && fa[2] == FI_ADDR_NOTAVAIL);
	free(d);
	/* a version-1 name, then a 40-byte one: 64 bytes, the second's slot
	 * (at 24) is not a name */
	memcpy(buf, v1, sizeof(v1));
	memcpy(buf + UFI_NAME_V1_LEN, &v[0], UFI_NAME_LEN);
	d = exact(buf, UFI_NAME_LEN + UFI_NAME_V1_LEN);
	assert_int_equal(av->ops->insert(av, d, 2, fa, 0, NULL), 1);
	assert_true(fa[0] != FI_ADDR_NOTAVAIL && fa[1] == FI_ADDR_NOTAVAIL);
	free(d);
	/* all of one version: every name taken, a bad one of the right
	 * version refused alone */
	for (int i = 0; i < 3; i++)
		memcpy(buf + i * UFI_NAME_LEN, &v[i], UFI_NAME_LEN);
	buf[UFI_NAME_LEN + 18] = 0; /* the middle one's prefix */
	d = exact(buf, 3 * UFI_NAME_LEN);
	assert_int_equal(av->ops->insert(av, d, 3, fa, 0, NULL), 2);
	assert_true(fa[0] != FI_ADDR_NOTAVAIL && fa[1] == FI_ADDR_NOTAVAIL &&
		    fa[2] != FI_ADDR_NOTAVAIL);
	free(d);
	memcpy(buf, v1, sizeof(v1));
	memcpy(buf + UFI_NAME_V1_LEN, v1, sizeof(v1));
	buf[UFI_NAME_V1_LEN + 15] = 9; /* 10.201.0.9 */
	d = exact(buf, 2 * UFI_NAME_V1_LEN);
	assert_int_equal(av->ops->insert(av, d, 2, fa, 0, NULL), 2);
	free(d);
	assert_int_equal(av->ops->insert(av, NULL, 1, fa, 0, NULL), -FI_EINVAL);

	/* the string form: read no further than the longest valid one */
	dom->addr_str = true;
	d = malloc(UFI_STR_LEN - 1);
	assert_non_null(d);
	memset(d, 'f', UFI_STR_LEN - 1);
	l = sizeof(s);
	av->ops->straddr(av, d, s, &l);
	assert_int_equal(l, UFI_STR_LEN);
	free(d);
	assert_int_equal(fi_close(&av->fid), 0);
	free(dom);
}

/* The IPv4 string form has one spelling, as the IPv6 one: the text
 * ufi_name_to_str gives.  Each other spelling of the same name refused
 * (before, sscanf took them all, "nonce=-1" as ffffffff and a MAC byte
 * "-e" as f2). */
static void test_names_str4(void **state)
{
	static const char good[] =
		"fi_unet://02:00:00:00:00:0a/ep=00001/010.201.000.001/24:47000/f=00/nonce=0123abcd";
	static const char *const bad[] = {
		"fi_unet://2:0:0:0:0:a/ep=1/10.201.0.1/24:47000/f=0/nonce=123abcd",
		"fi_unet://02:00:00:00:00:0a/ep=1/010.201.000.001/24:47000/f=00/nonce=0123abcd",
		"fi_unet://02:00:00:00:00:0a/ep=00001/10.201.000.001/24:47000/f=00/nonce=0123abcd",
		"fi_unet://02:00:00:00:00:0a/ep=00001/010.201.000.001/24:4700/f=00/nonce=0123abcd",
		"fi_unet://02:00:00:00:00:0a/ep=00001/010.201.000.001/24:47000/f=0/nonce=0123abcd",
		"fi_unet://02:00:00:00:00:0a/ep=00001/010.201.000.001/24:47000/f=00/nonce=123abcd",
		"fi_unet:// 2: 0: 0: 0: 0: a/ep= 1/ 10. 201. 0. 1/ 24: 47000/f= 0/nonce= 123abcd",
		"fi_unet://02:00:00:00:00:0a/ep=00001/010.201.000.001/ 24:47000/f=00/nonce=0123abcd",
		"fi_unet://+2:+0:00:00:00:0a/ep=+0001/+10.201.000.001/24:47000/f=00/nonce=+123abcd",
		"fi_unet://02:00:00:00:00:0a/ep=+0001/010.201.000.001/24:47000/f=00/nonce=0123abcd",
		"fi_unet://-e:00:00:00:00:0a/ep=00001/010.201.000.001/24:47000/f=00/nonce=0123abcd",
		"fi_unet://02:00:00:00:00:0a/ep=00001/010.201.000.001/24:47000/f=00/nonce=-1",
		"fi_unet://02:00:00:00:00:0A/ep=00001/010.201.000.001/24:47000/f=00/nonce=0123abcd",
		"fi_unet://02:00:00:00:00:0a/ep=00001/010.201.000.001/24:47000/f=00/nonce=0123ABCD",
		"fi_unet://0x2:00:00:00:00:0a/ep=00001/010.201.000.001/24:47000/f=00/nonce=0x123abc",
		"fi_unet://02:00:00:00:00:0a/ep=00001/010.201.000.001/24:47000/f=00/nonce=0123abcd ",
	};
	struct ufi_name n;
	char back[UFI_STR_LEN];

	(void)state;
	assert_int_equal(ufi_name_from_str(good, &n), 0);
	assert_true(ufi_name_to_str(&n, back, sizeof(back)) > 0);
	assert_string_equal(back, good);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (ufi_name_from_str(bad[i], &n) == 0)
			fail_msg("taken: \"%s\"", bad[i]);
		assert_int_equal(n.version, 0); /* zeroed */
	}
}

/*
 * Seeded fuzz of fi_av_insert's binary buffers: 1 to 6 names, each of
 * version 1 (24 bytes) or 2 (40), some with their magic, version or a
 * field mutated, laid side by side each at the length its own first
 * three bytes say (3 bytes for one of no known version, which ends the
 * buffer), in a heap block of exactly that size (ASan: any read past
 * it).  Taken exactly as the rules written out again say: the names up
 * to the first whose length is not the first one's, each if its fields
 * hold.  The count goes on past the buffer's end: those names must not
 * be read.
 */
#define FUZZ_AV_SEED 0x6176696e73657274ull /* "avinsert" */
#define FUZZ_AVS 20000

static void test_fuzz_av_insert(void **state)
{
	uint64_t seed = fuzz_seed(FUZZ_AV_SEED), rng = seed, n = fuzz_count(FUZZ_AVS);
	const struct ufi_name base[3] = { name_at("10.201.0.1", 24), name6_at("fd01::1", 64),
					  name_at("10.202.7.9", 16) };
	struct ufi_domain *dom = calloc(1, sizeof(*dom));
	struct fi_av_attr at = { .type = FI_AV_TABLE };
	uint64_t taken = 0, refused = 0;
	struct timespec t0;
	struct fid_av *av;

	(void)state;
	assert_non_null(dom);
	assert_int_equal(ufi_av_open(&dom->fid, &at, &av, NULL), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	print_message("fabric AV insert fuzz: seed %#llx (UNET_FUZZ_SEED), %llu calls "
		      "(UNET_FUZZ_COUNT)\n",
		      (unsigned long long)seed, (unsigned long long)n);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = fuzz_next(&rng);
		size_t count = 1 + r % 6, len = 0, stride = 0;
		uint8_t buf[6 * UFI_NAME_LEN], *d;
		fi_addr_t fa[6];
		int want = 0, got;
		bool lost = false;

		for (size_t k = 0; k < count; k++) {
			uint64_t x = fuzz_next(&rng);
			uint8_t b[UFI_NAME_LEN];
			size_t own;

			memcpy(b, &base[x % 3], sizeof(b));
			if ((x >> 2) % 3 == 0 && b[19] == 4) { /* version 1 */
				b[2] = 1;
				b[19] = 0;
			}
			if ((x >> 4) % 4 == 0) { /* one byte: a header, a field or any */
				static const uint8_t hot[] = { 0, 1, 2, 2, 2, 3, 18, 19 };
				size_t atb = (x >> 8) % 2 ? hot[(x >> 12) % 8] : (x >> 12) % UFI_NAME_LEN;

				b[atb] = (x >> 20) % 2 ? (uint8_t)(x >> 24) : (uint8_t)((x >> 24) % 4);
			}
			own = b[0] == 'U' && b[1] == 'F' && (b[2] == 1 || b[2] == 2)
				      ? (b[2] == 1 ? UFI_NAME_V1_LEN : UFI_NAME_LEN)
				      : 3;
			memcpy(buf + len, b, own);
			len += own;
			if (k == 0)
				stride = own;
			if (!lost && own == stride && own != 3) {
				struct ufi_name m;

				memset(&m, 0, sizeof(m));
				memcpy(&m, b, own);
				if (own == UFI_NAME_V1_LEN) {
					m.version = b[19] == 0 ? 2 : 0;
					m.family = 4;
				}
				want += name_model(&m);
			} else {
				lost = true;
			}
			if (own != stride || own == 3)
				break; /* the buffer ends: the names after it are not there */
		}
		d = exact(buf, len);
		got = av->ops->insert(av, d, count, fa, 0, NULL);
		free(d);
		if (got != want)
			fail_msg("call %llu (%zu names, %zu bytes): %d taken, the rules say %d "
				 "(replay: UNET_FUZZ_SEED=%#llx)",
				 (unsigned long long)i, count, len, got, want,
				 (unsigned long long)seed);
		taken += (uint64_t)got;
		refused += count - (size_t)got;
		for (size_t k = 0; k < count; k++)
			if (fa[k] != FI_ADDR_NOTAVAIL)
				av->ops->remove(av, &fa[k], 1, 0);
	}
	print_message("fabric AV insert fuzz: %llu names taken, %llu refused, %.2f s\n",
		      (unsigned long long)taken, (unsigned long long)refused, secs_since(&t0));
	assert_true(taken > n / 2 && refused > n / 4);
	assert_int_equal(fi_close(&av->fid), 0);
	free(dom);
}

/* A HELLO over IPv6: taken only from the address and port its sender's
 * IPv6 name gives, with the IPv6 address length and family. */
static void test_hello6(void **state)
{
	struct ufi_name self = name6_at("fd02::2", 64), from = name6_at("fd01::1", 64);
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons(47000) };
	struct sockaddr_in sa4 = { .sin_family = AF_INET, .sin_port = htons(47000) };
	uint8_t b[HELLO_LEN];
	struct ufi_hello h;
	struct sockaddr_in6 t;

	(void)state;
	self.nonce = 0x11;
	memcpy(sa.sin6_addr.s6_addr, from.ip6, 16);
	hello_build(b, &from, &self, 2000, 0, 0x5eed, 0);
	assert_int_equal(ufi_hello_parse(&self, b, sizeof(b), (const struct sockaddr *)&sa,
					 sizeof(sa), &h), 0);
	assert_memory_equal(&h.from, &from, UFI_NAME_LEN);
	assert_int_equal(h.from_tag, 2000);
	t = sa, t.sin6_port = htons(47001);
	assert_int_equal(ufi_hello_parse(&self, b, sizeof(b), (const struct sockaddr *)&t,
					 sizeof(t), &h), -EPROTO);
	t = sa, t.sin6_addr.s6_addr[15] ^= 1;
	assert_int_equal(ufi_hello_parse(&self, b, sizeof(b), (const struct sockaddr *)&t,
					 sizeof(t), &h), -EPROTO);
	t = sa, t.sin6_family = AF_INET;
	assert_int_equal(ufi_hello_parse(&self, b, sizeof(b), (const struct sockaddr *)&t,
					 sizeof(t), &h), -EPROTO);
	assert_int_equal(ufi_hello_parse(&self, b, sizeof(b), (const struct sockaddr *)&sa,
					 sizeof(sa) - 1, &h), -EPROTO);
	assert_int_equal(ufi_hello_parse(&self, b, sizeof(b), (const struct sockaddr *)&sa,
					 sizeof(sa4), &h), -EPROTO);
	/* an IPv4 source for an IPv6 name */
	assert_int_equal(ufi_hello_parse(&self, b, sizeof(b), (const struct sockaddr *)&sa4,
					 sizeof(sa4), &h), -EPROTO);
	/* an IPv6 name whose sender claims the IPv4 family of the same bytes */
	from.family = 4;
	hello_build(b, &from, &self, 2000, 0, 0x5eed, 0);
	assert_int_equal(ufi_hello_parse(&self, b, sizeof(b), (const struct sockaddr *)&sa,
					 sizeof(sa), &h), -EPROTO);
}

/* A peer of the other family: no tag reserved, no HELLO sent (our
 * setup socket cannot reach it); it fails at once with EAFNOSUPPORT. */
static void test_family_mismatch(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	(void)state;
	assert_non_null(f);
	fx_init(f);
	f->ep.name = f->a.name; /* IPv4 (fx_init) */
	f->ep.name.mac[5] = 0x01;
	f->ep.udp_fd = -1;
	f->a.name = name6_at("fd02::2", 64);
	f->a.state = UFI_PEER_IDLE;
	f->a.ltag = 0;
	ufi_conn_start(&f->ep, &f->a);
	assert_int_equal(f->a.state, UFI_PEER_FAILED);
	assert_int_equal(f->a.err, -EAFNOSUPPORT);
	assert_int_equal(f->a.ltag, 0);
	assert_int_equal(f->ep.connecting, 0);
	fx_free(f);
	free(f);
}

/*
 * Seeded fuzz of the names a peer or launcher hands us: valid IPv4,
 * IPv6 and version-1 names, mutated at the bytes that matter (version,
 * family, prefix, address, the other family's bytes) or anywhere, in
 * slots of the right and the wrong length, each in a heap block of its
 * exact size (ASan sees a read past it); ufi_name_from_bin must agree
 * with the rules written out again (name_model).  Then their string
 * forms, mutated: a string taken is a valid name that prints back to
 * exactly that string (IPv6) and parses to the same name again.
 */
#define FUZZ_NAME_SEED 0x6e616d657366757aull /* "namesfuz" */
#define FUZZ_NAMES 60000

static void test_fuzz_names(void **state)
{
	uint64_t seed = fuzz_seed(FUZZ_NAME_SEED), rng = seed, n = fuzz_count(FUZZ_NAMES);
	const struct ufi_name base[3] = { name_at("10.201.0.1", 24), name6_at("fd01::1", 64),
					  name6_at("2001:db8::77", 120) };
	uint64_t taken_bin = 0, taken_str = 0;
	static const uint8_t hot[] = { 2, 3, 12, 15, 18, 19, 24, 25, 39 };
	struct timespec t0;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	print_message("fabric name fuzz: seed %#llx (UNET_FUZZ_SEED), %llu names "
		      "(UNET_FUZZ_COUNT)\n",
		      (unsigned long long)seed, (unsigned long long)n);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = fuzz_next(&rng);
		uint8_t b[UFI_NAME_LEN];
		size_t len = UFI_NAME_LEN;
		struct ufi_name got, want;
		bool ok;
		uint8_t *d;

		memcpy(b, &base[r % 3], sizeof(b));
		if ((r >> 2) % 4 == 0) { /* version 1 */
			len = UFI_NAME_V1_LEN;
			b[2] = 1;
			b[19] = 0;
		}
		for (unsigned int k = 0, nm = (unsigned int)((r >> 4) % 4); k < nm; k++) {
			uint64_t x = fuzz_next(&rng);
			size_t at = x % 2 ? hot[(x >> 8) % sizeof(hot)] : (x >> 8) % UFI_NAME_LEN;

			if ((x >> 16) % 4 == 0)
				b[at] = (uint8_t)(x >> 24);
			else if ((x >> 16) % 4 == 1)
				b[at] = (uint8_t[]){ 0, 1, 2, 4, 6, 32, 33, 127, 128, 129, 255 }[(x >> 24) % 11];
			else
				b[at] ^= (uint8_t)(1u << ((x >> 24) % 8));
		}
		if ((r >> 8) % 16 == 0) /* the slot cut or longer */
			len = (r >> 12) % (UFI_NAME_LEN + 2);
		d = malloc(len ? len : 1);
		assert_non_null(d);
		memcpy(d, b, len < sizeof(b) ? len : sizeof(b));
		if (len > sizeof(b))
			memset(d + sizeof(b), 0, len - sizeof(b));
		memset(&want, 0, sizeof(want));
		if (len == UFI_NAME_V1_LEN && b[2] == 1 && b[19] == 0) {
			memcpy(&want, b, UFI_NAME_V1_LEN);
			want.version = 2;
			want.family = 4;
			ok = name_model(&want);
		} else if (len == UFI_NAME_LEN) {
			memcpy(&want, b, UFI_NAME_LEN);
			ok = name_model(&want);
		} else {
			ok = false;
		}
		if ((ufi_name_from_bin(d, len, &got) == 0) != ok)
			fail_msg("name %llu (%zu bytes): taken %s, the rules say %s "
				 "(replay: UNET_FUZZ_SEED=%#llx)",
				 (unsigned long long)i, len, ok ? "no" : "yes", ok ? "yes" : "no",
				 (unsigned long long)seed);
		free(d);
		if (!ok)
			continue;
		taken_bin++;
		assert_memory_equal(&got, &want, UFI_NAME_LEN);

		/* its string form, one character changed or the end cut */
		char s[UFI_STR_LEN], back[UFI_STR_LEN];
		int sl = ufi_name_to_str(&got, s, sizeof(s));
		struct ufi_name sn, again;

		assert_true(sl > 0);
		if ((r >> 20) % 2) {
			uint64_t x = fuzz_next(&rng);
			size_t at = (x >> 8) % (size_t)sl;

			if (x % 3 == 0)
				s[at] = '\0';
			else
				s[at] = "0123456789abcdef:[]./f%x"[(x >> 16) % 24];
		}
		d = (uint8_t *)strdup(s);
		assert_non_null(d);
		if (ufi_name_from_str((const char *)d, &sn) == 0) {
			taken_str++;
			assert_true(ufi_name_valid(&sn));
			assert_true(ufi_name_to_str(&sn, back, sizeof(back)) > 0);
			assert_string_equal(back, s); /* one spelling a name */
			assert_int_equal(ufi_name_from_str(back, &again), 0);
			assert_memory_equal(&again, &sn, UFI_NAME_LEN);
		}
		free(d);
	}
	print_message("fabric name fuzz: %llu binary and %llu string names taken, %.2f s\n",
		      (unsigned long long)taken_bin, (unsigned long long)taken_str, secs_since(&t0));
	assert_true(taken_bin > 0 && taken_str > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fuzz_messages),
		cmocka_unit_test(test_fuzz_hello),
		cmocka_unit_test(test_strangers_bounded),
		cmocka_unit_test(test_ux_bounded),
		cmocka_unit_test(test_hello_spoofed),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_names6),
		cmocka_unit_test(test_name_bin),
		cmocka_unit_test(test_av_name_bounds),
		cmocka_unit_test(test_names_str4),
		cmocka_unit_test(test_fuzz_av_insert),
		cmocka_unit_test(test_hello6),
		cmocka_unit_test(test_family_mismatch),
		cmocka_unit_test(test_fuzz_names),
	};

	return cmocka_run_group_tests_name("fabric_proto", tests, NULL, NULL);
}
