// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_tcp_fuzz.c - lib/tcp's receive path (and lwIP behind it) against
 * mutated segments on a live connection (docs/tcp.md, "Tests").
 *
 * One process, two endpoints on a veth pair: a U-Net TCP client on a, a
 * U-Net TCP server on b, a real connection between them carrying a
 * byte stream whose every byte is a known function of its offset.  The
 * fuzzer hands frames straight to the TCP layer's input function on b
 * (the one the core calls for every non-U-Net frame: tcp_layer_rx, found
 * through the endpoint's layer table), each a heap block of its exact
 * length so ASan sees a read past it.  The frames are segments of the
 * live connection, built from its real sequence numbers, then mutated:
 *   - checksum broken (bits flipped, bytes set, lengths, offsets, options
 *     mangled, the checksum made wrong if the mutations left it right),
 *     carrying garbage at the very next sequence number;
 *   - checksum right, garbage entirely outside the receive window (ahead,
 *     behind, at the window's edges and across the 2^31 wrap);
 *   - checksum right, the stream's own bytes, entirely before rcv_nxt
 *     (duplicates lwIP must trim away);
 *   - checksum right, odd flags (URG, ECE/CWR, ACK numbers at their
 *     edges), TCP options of every kind and length, SYNs at the
 *     listening port from made-up ports;
 *   - lengths that do not add up (IP total length, IHL, data offset, the
 *     frame cut short), another address, another protocol, ARP.
 * Every frame's verdict and the layer's counters are checked against the
 * rules tcp_layer_rx documents (model_rx); no byte may reach the
 * application during the storm (every new byte at rcv_nxt was garbage);
 * afterwards the connection carries 64 KiB each way, verified byte for
 * byte, and no forged handshake completed.
 *
 * Needs root and a veth pair: UNET_TEST_IFACE_A / UNET_TEST_IFACE_B,
 * UNET_PIN_ROOT, UNET_TEST_XDP_MODE (the integration suite's "tcp_fuzz").
 * Without them the test is skipped, never passed.
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <lwip/priv/tcp_priv.h> /* tcp_active_pcbs: the connection's sequence numbers */
#include <lwip/tcp.h>

#include <unet-xdp/unet.h>
#include <unet-xdp/unet_tcp.h>

#include "core/objects.h"
#include "fuzz.h"

#define TAG_A 331
#define TAG_B 332
#include "veth_pair.h"

#define IP_A 0x0a62000au /* 10.98.0.10, 10.98.0.11: not the kernel's */
#define IP_B 0x0a62000bu
#define PORT 7300

#define FUZZ_TCP_SEED 0x6c77697066757a7aull /* "lwipfuzz" */
#define FUZZ_TCP_FRAMES 200000

/* The stream's byte at offset o (client -> server and back). */
static uint8_t pat(uint64_t o)
{
	return (uint8_t)(o * 31 + (o >> 8) * 7 + 1);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct conn {
	struct pair *p;
	struct unet_tcp *l, *c, *s; /* listener (b), client (a), server (b) */
	uint16_t cport;		    /* the client's port */
	uint32_t mtu;
	uint64_t up_sent, up_got;     /* client -> server stream */
	uint64_t down_sent, down_got; /* server -> client stream */
	enum unet_layer_verdict (*rx)(void *, uint16_t, uint8_t *, uint32_t, struct unet_recv_desc *);
	void *rx_state;
};

static void pump(struct conn *k)
{
	unet_endpoint__dispatch(k->p->a, 0, 64);
	unet_endpoint__dispatch(k->p->b, 0, 64);
}

/* lwIP's pcb of the server side of the connection (NULL: gone). */
static struct tcp_pcb *server_pcb(const struct conn *k)
{
	for (struct tcp_pcb *q = tcp_active_pcbs; q; q = q->next)
		if (q->local_port == PORT && q->remote_port == k->cport &&
		    ip_2_ip4(&q->local_ip)->addr == htonl(IP_B) && q->state == ESTABLISHED)
			return q;
	return NULL;
}

/* n bytes of the stream from `from` to `to`, read and checked byte for
 * byte on the other side, within 20 s. */
static void stream(struct conn *k, bool up, size_t n)
{
	struct unet_tcp *from = up ? k->c : k->s, *to = up ? k->s : k->c;
	uint64_t *sent = up ? &k->up_sent : &k->down_sent, *got = up ? &k->up_got : &k->down_got;
	uint64_t end = *sent + n, deadline = now_ms() + 20000;
	uint8_t buf[4096];

	while (*got < end) {
		if (*sent < end) {
			size_t m = end - *sent < sizeof(buf) ? end - *sent : sizeof(buf);
			ssize_t w;

			for (size_t i = 0; i < m; i++)
				buf[i] = pat(*sent + i);
			w = unet_tcp__send(from, buf, m, 0);
			if (w > 0)
				*sent += (uint64_t)w;
			else if (w != -EAGAIN)
				fail_msg("send: %s", strerror((int)-w));
		}
		pump(k);
		for (;;) {
			ssize_t r = unet_tcp__recv(to, buf, sizeof(buf), 0);

			if (r == -EAGAIN)
				break;
			if (r <= 0)
				fail_msg("recv: %zd (%s) after %llu bytes", r,
					 r ? strerror((int)-r) : "end of stream", (unsigned long long)*got);
			for (ssize_t i = 0; i < r; i++)
				if (buf[i] != pat(*got + (uint64_t)i))
					fail_msg("stream byte %llu is %#x, not %#x: data that was never "
						 "sent reached the application",
						 (unsigned long long)(*got + (uint64_t)i), buf[i],
						 pat(*got + (uint64_t)i));
			*got += (uint64_t)r;
		}
		if (now_ms() > deadline)
			fail_msg("stream stalled: %llu of %llu bytes in 20 s", (unsigned long long)*got,
				 (unsigned long long)end);
	}
}

/* ---- Checksums (RFC 1071), written out again: independent of lib/ -------- */

static uint32_t sum16(const uint8_t *p, size_t n, uint32_t s)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The partial checksum (CHECKSUM_PARTIAL: the pseudo-header's sum, folded,
 * not inverted) a kernel would leave in a segment of tl bytes (IPv4
 * header at ip) for a NIC to complete: what the layer accepts on veth. */
static uint16_t tcp_partial(const uint8_t *ip, uint32_t tl)
{
	uint8_t ph[12];

	memcpy(ph, ip + 12, 8);
	ph[8] = 0;
	ph[9] = 6;
	put16(ph + 10, (uint16_t)tl);
	return (uint16_t)~fold(sum16(ph, 12, 0));
}

/* The TCP checksum a segment of tl bytes at t (IPv4 header at ip) must
 * carry, its own checksum field taken as 0. */
static uint16_t tcp_csum(const uint8_t *ip, const uint8_t *t, uint32_t tl)
{
	uint8_t ph[12];
	uint32_t s;

	memcpy(ph, ip + 12, 8);
	ph[8] = 0;
	ph[9] = 6;
	put16(ph + 10, (uint16_t)tl);
	s = sum16(ph, 12, 0);
	s = sum16(t, 16, s); /* up to the checksum */
	s = sum16(t + 18, tl - 18, s);
	return fold(s);
}

/* ---- Segments ------------------------------------------------------------- */

struct seg {
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t wnd;
	uint8_t ihl, doff; /* words */
	const uint8_t *opt; /* doff*4 - 20 bytes of TCP options */
	uint32_t plen;
	bool garbage; /* payload 0xee..., else the stream's bytes at seq */
	uint32_t irs1; /* the stream's offset 0 in sequence space */
};

/* A well-formed Ethernet/IPv4/TCP frame from a to b into f (room for
 * 2048); returns its length. */
static uint32_t build(const struct conn *k, uint8_t *f, const struct seg *s)
{
	uint32_t hl = s->ihl * 4u, tl = s->doff * 4u + s->plen, tot = hl + tl;
	uint8_t *ip = f + 14, *t = ip + hl, *d = t + s->doff * 4u;

	memset(f, 0, 14 + tot);
	memcpy(f, k->p->ib.mac, 6);
	memcpy(f + 6, k->p->ia.mac, 6);
	put16(f + 12, 0x0800);
	ip[0] = (uint8_t)(0x40 | s->ihl);
	put16(ip + 2, (uint16_t)tot);
	put16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = 6;
	put32(ip + 12, IP_A);
	put32(ip + 16, IP_B);
	for (uint32_t i = 20; i < hl; i++)
		ip[i] = 1; /* NOP */
	put16(ip + 10, fold(sum16(ip, hl, 0)));
	put16(t, s->sport);
	put16(t + 2, s->dport);
	put32(t + 4, s->seq);
	put32(t + 8, s->ack);
	t[12] = (uint8_t)(s->doff << 4);
	t[13] = s->flags;
	put16(t + 14, s->wnd);
	if (s->doff > 5)
		memcpy(t + 20, s->opt, s->doff * 4u - 20);
	for (uint32_t i = 0; i < s->plen; i++)
		d[i] = s->garbage ? (uint8_t)(0xee ^ (i & 1)) : pat((uint32_t)(s->seq - s->irs1) + i);
	put16(t + 16, tcp_csum(ip, t, tl));
	return 14 + tot;
}

/* TCP options: each kind lwIP knows (MSS, window scale, SACK permitted,
 * timestamps), NOP, EOL and unknown kinds, with lengths 0, 1, 2, right,
 * too long; up to 40 bytes. */
static uint8_t gen_opts(uint64_t *rng, uint8_t *o)
{
	uint32_t n = 0, want = 4 * (uint32_t)(fuzz_next(rng) % 11);

	while (n < want) {
		uint64_t x = fuzz_next(rng);
		static const uint8_t kinds[] = { 0, 1, 2, 3, 4, 8, 5, 30, 254, 255 };
		uint8_t kind = kinds[x % sizeof(kinds)], len;

		o[n++] = kind;
		if (n >= want)
			break;
		if (kind <= 1)
			continue;
		len = (x >> 8) % 4 == 0 ? (uint8_t)((x >> 12) % 3) : (uint8_t)((x >> 12) % 12);
		o[n++] = len;
		for (uint32_t i = 2; i < len && n < want; i++)
			o[n++] = (uint8_t)(x >> (16 + i));
	}
	while (n < want)
		o[n++] = 1;
	return (uint8_t)(5 + want / 4);
}

/* ---- What tcp_layer_rx documents ------------------------------------------ */

enum outcome {
	O_NOT_MINE,
	O_ARP,
	O_ARP_LONG,
	O_NOT_OURS,
	O_MALFORMED,
	O_BAD_CSUM,
	O_SEQ_TRAP,
	O_FED,
	O_FED_PARTIAL, /* a partial checksum, accepted (veth), completed, fed */
	O_SYN_COOKIE, /* a SYN for the listener, no connection: answered with a cookie */
	O__N
};

static enum outcome model_rx(const struct conn *k, const uint8_t *f, uint32_t n)
{
	uint16_t proto = get16(f + 12);
	const uint8_t *ip = f + 14;
	uint32_t hlen, tot;

	if (proto == 0x0806)
		return n > 1514 ? O_ARP_LONG : O_ARP; /* too long: consumed, not counted */
	if (proto != 0x0800 || n < 14 + 20)
		return O_NOT_MINE;
	if (ip[0] >> 4 != 4 || ip[9] != 6)
		return O_NOT_MINE;
	if (get16(ip + 16) != (IP_B >> 16) || get16(ip + 18) != (IP_B & 0xffff))
		return O_NOT_OURS;
	hlen = (ip[0] & 0xfu) * 4;
	tot = get16(ip + 2);
	if (hlen < 20 || tot < hlen + 20 || tot > n - 14)
		return O_MALFORMED;
	{
		/* a source no host has, or our own (docs/tcp.md) */
		uint32_t src = (uint32_t)get16(ip + 12) << 16 | get16(ip + 14);

		if (!src || src == IP_B || src >> 24 == 127 || src >> 28 == 14 || src == 0xffffffffu)
			return O_MALFORMED;
	}
	{
		const uint8_t *t = ip + hlen;
		uint32_t doff = (t[12] >> 4) * 4u, seq = (uint32_t)get16(t + 4) << 16 | get16(t + 6);
		bool partial = false;

		if (doff < 20 || doff > tot - hlen)
			return O_MALFORMED;
		if (fold(sum16(ip, hlen, 0)) != 0)
			return O_BAD_CSUM;
		if (get16(t + 16) != tcp_csum(ip, t, tot - hlen)) {
			if (get16(t + 16) != tcp_partial(ip, tot - hlen))
				return O_BAD_CSUM;
			partial = true; /* the pair is veth: accepted */
		}
		/* longer than the link: only a partial-checksum data segment
		 * (GSO) is taken, never one of these */
		if (tot > k->mtu)
			return O_MALFORMED;
		for (struct tcp_pcb *q = tcp_active_pcbs; q; q = q->next)
			if (q->local_port == get16(t + 2) && q->remote_port == get16(t) &&
			    ntohl(ip_2_ip4(&q->remote_ip)->addr) ==
				    ((uint32_t)get16(ip + 12) << 16 | get16(ip + 14)) &&
			    ntohl(ip_2_ip4(&q->local_ip)->addr) == IP_B) {
				/* a segment of sequence length 1 at exactly
				 * rcv_nxt + 2^31 of a connection: lwIP would
				 * abort on it (docs/tcp.md) */
				if (tot - hlen - doff + ((t[13] & 0x03) ? 1 : 0) == 1 &&
				    q->rcv_nxt - seq == 0x80000000u)
					return O_SEQ_TRAP; /* counted as malformed */
				return partial ? O_FED_PARTIAL : O_FED;
			}
		/* no connection: a SYN for the listener gets a SYN cookie
		 * from the layer, and lwIP never sees it (docs/tcp.md) */
		if ((t[13] & 0x16) == 0x02 && get16(t + 2) == PORT)
			return O_SYN_COOKIE;
		return partial ? O_FED_PARTIAL : O_FED;
	}
}

/* ---- The storm -------------------------------------------------------------- */

/* One mutated frame for the live connection into f (room for 2048);
 * returns its length. */
static uint32_t fuzz_frame(struct conn *k, uint64_t *rng, uint8_t *f, uint32_t irs1)
{
	struct tcp_pcb *sp = server_pcb(k);
	uint64_t r = fuzz_next(rng);
	uint8_t opts[40];
	struct seg s = { .sport = k->cport, .dport = PORT, .flags = 0x18, .wnd = 8192, .ihl = 5,
			 .doff = 5, .opt = opts, .irs1 = irs1 };
	uint32_t rcv_nxt, wnd, n, cls = (uint32_t)(r % 16);
	uint8_t *ip = f + 14, *t;

	assert_non_null(sp);
	rcv_nxt = sp->rcv_nxt;
	wnd = sp->rcv_wnd ? sp->rcv_wnd : 1;
	s.ack = sp->snd_nxt;
	s.plen = (uint32_t)((r >> 8) % 4 ? (r >> 12) % 200 : (r >> 12) % 1401);
	if (cls < 6) { /* checksum broken, garbage at rcv_nxt */
		s.seq = rcv_nxt;
		s.garbage = true;
		if (s.plen == 0)
			s.plen = 1;
		if ((r >> 24) % 2)
			s.doff = gen_opts(rng, opts);
	} else if (cls < 9) { /* checksum right, garbage outside the window */
		uint32_t d[] = { wnd, wnd + 1, wnd + 1000, 0x7fffffffu, 0x80000000u, 0x80000001u,
				 (uint32_t)-s.plen, (uint32_t)-s.plen - 1, (uint32_t)-s.plen - 1000,
				 wnd + (uint32_t)((r >> 32) % 0x10000000u) };

		s.garbage = true;
		s.seq = rcv_nxt + d[(r >> 24) % 10];
		if (s.plen == 0)
			s.plen = 1;
		if ((uint64_t)(s.seq - rcv_nxt) + s.plen > 0x100000000ull || s.seq - rcv_nxt < wnd)
			s.seq = rcv_nxt + wnd; /* (d + len) wrapped into the window: not allowed */
	} else if (cls < 11) { /* checksum right, the stream's own bytes, all old */
		uint32_t back = (uint32_t)((r >> 24) % 3000);
		uint64_t have = rcv_nxt - irs1; /* bytes the server has */

		if (s.plen > have)
			s.plen = (uint32_t)have;
		if (back > have - s.plen)
			back = (uint32_t)(have - s.plen);
		s.seq = rcv_nxt - s.plen - back;
	} else if (cls < 13) { /* checksum right: flags, ACK numbers, options */
		static const uint8_t fl[] = { 0x10, 0x30, 0x50, 0x90, 0xd0, 0x18, 0x38, 0x10 };
		uint32_t acks[] = { sp->snd_nxt, sp->snd_nxt + 1, sp->lastack - 1, sp->snd_nxt + 0x7fffffffu,
				    sp->snd_nxt + 0x80000000u, 0, 0xffffffffu };

		s.flags = fl[(r >> 24) % 8];
		s.ack = acks[(r >> 28) % 7];
		s.wnd = (uint16_t)((r >> 32) % 3 ? r >> 40 : 0);
		s.doff = gen_opts(rng, opts);
		/* no data, or data outside the window */
		s.garbage = true;
		if (s.plen)
			s.seq = rcv_nxt + wnd + (uint32_t)((r >> 48) % 1000);
		else
			s.seq = rcv_nxt;
		if (s.flags & 0x20) /* URG: a pointer anywhere */
			s.wnd |= 1;
	} else if (cls < 14) { /* a SYN at the listener from a made-up port */
		s.sport = (uint16_t)(40000 + (r >> 24) % 20000);
		if (s.sport == k->cport)
			s.sport++;
		s.flags = 0x02;
		s.seq = (uint32_t)(r >> 32);
		s.ack = 0;
		s.plen = 0;
		s.doff = gen_opts(rng, opts);
	} else { /* lengths that do not add up, and other structure */
		s.seq = rcv_nxt;
		s.garbage = true;
		s.ihl = (uint8_t)(5 + (r >> 24) % 3);
	}
	n = build(k, f, &s);
	t = ip + s.ihl * 4u;
	if (cls >= 14 || cls < 6) {
		for (unsigned int m = 0, nm = 1 + (unsigned int)((r >> 40) % 3); m < nm; m++) {
			uint64_t x = fuzz_next(rng);
			uint32_t hl = (ip[0] & 0xfu) * 4, e[] = { 0, 19, 20, hl + 19, hl + 20,
								  n - 14, n - 13, n - 15, 1501, 0xffff };

			switch (x % 9) {
			case 0:
				f[(x >> 8) % n] ^= (uint8_t)(1u << ((x >> 16) % 8));
				break;
			case 1:
				if (n > 14)
					f[14 + (x >> 8) % (n - 14)] = (uint8_t)(x >> 16);
				break;
			case 2: /* IP total length at an edge */
				put16(ip + 2, (uint16_t)e[(x >> 8) % 10]);
				break;
			case 3: /* IHL, version */
				ip[0] = (uint8_t)(((x >> 8) % 8 ? 4 : (x >> 12) % 16) << 4 | (x >> 16) % 16);
				break;
			case 4: /* data offset */
				t[12] = (uint8_t)(((x >> 8) % 16) << 4);
				break;
			case 5: /* cut short */
				n = 14 + (uint32_t)((x >> 8) % (n - 13));
				break;
			case 6: /* trailing bytes */
				for (uint32_t i = 0, m2 = (uint32_t)((x >> 8) % 64); i < m2 && n < 2048; i++)
					f[n++] = (uint8_t)(x >> (i % 48));
				break;
			case 7: /* another address, protocol, EtherType */
				if ((x >> 8) % 3 == 0)
					ip[19] ^= 1;
				else if ((x >> 8) % 3 == 1)
					ip[9] = (uint8_t)((x >> 16) % 2 ? 17 : x >> 24);
				else
					put16(f + 12, (x >> 16) % 2 ? 0x0806 : 0x86dd);
				break;
			default: /* the IP header's checksum */
				ip[10] ^= (uint8_t)(x >> 16);
				break;
			}
		}
		/* No IP fragments: the XDP program never lets one reach the
		 * layer (a first fragment for our port is dropped, a later one
		 * is the kernel's: test_xdp_prog), and lwIP would put the
		 * fragments of different frames (all IP id 0) together.  The
		 * IP checksum stays as right or wrong as it was. */
		if (n >= 14 + 20 && (get16(ip + 6) & 0x3fff)) {
			uint32_t hl = (ip[0] & 0xfu) * 4;
			bool ok = hl >= 20 && 14 + hl <= n && fold(sum16(ip, hl, 0)) == 0;

			put16(ip + 6, 0x4000);
			if (ok) {
				put16(ip + 10, 0);
				put16(ip + 10, fold(sum16(ip, hl, 0)));
			}
		}
		/* garbage must never pass a checksum: make the TCP one wrong
		 * (for the frame's own lengths) if the mutations left it right,
		 * complete or partial (which the layer takes on veth) */
		if (n >= 14 + 20) {
			uint32_t hl = (ip[0] & 0xfu) * 4, tot = get16(ip + 2);

			if (hl >= 20 && tot >= hl + 20 && tot <= n - 14) {
				uint8_t *tt = ip + hl;

				while (get16(tt + 16) == tcp_csum(ip, tt, tot - hl) ||
				       get16(tt + 16) == tcp_partial(ip, tot - hl))
					put16(tt + 16, (uint16_t)(get16(tt + 16) + 0x5a));
			}
		}
	}
	return n;
}

static void test_tcp_fuzz(void **state)
{
	uint64_t seed = fuzz_seed(FUZZ_TCP_SEED), rng = seed, frames = fuzz_count(FUZZ_TCP_FRAMES);
	uint64_t want[O__N] = { 0 }, t0;
	struct unet_tcp_stats before, after, a_before, a_after;
	uint64_t real;
	struct conn k = { .p = *state };
	struct tcp_pcb *sp;
	uint32_t irs1;
	char path[128];
	FILE *fm;

	NEED_PAIR(k.p);
	/* the link's MTU: what the layer bounds an IP datagram by */
	snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", if_b);
	fm = fopen(path, "r");
	assert_non_null(fm);
	assert_int_equal(fscanf(fm, "%u", &k.mtu), 1);
	fclose(fm);

	k.l = unet_tcp__listen(k.p->b, htonl(IP_B), PORT, NULL);
	assert_non_null(k.l);
	k.c = unet_tcp__connect(k.p->a, htonl(IP_A), htonl(IP_B), PORT, NULL, 0);
	assert_non_null(k.c);
	t0 = now_ms();
	while (!k.s || !(unet_tcp__events(k.c) & UNET_TCP_OUT)) {
		pump(&k);
		if (!k.s)
			k.s = unet_tcp__accept(k.l, 0);
		if (now_ms() - t0 > 10000)
			fail_msg("no connection between the two endpoints in 10 s");
	}
	k.cport = unet_tcp__local_port(k.c);
	/* the TCP layer's input function on b, as the core calls it */
	for (unsigned int i = 0; i < k.p->b->nlayers; i++)
		if (!strcmp(k.p->b->layers[i].layer->name, "tcp")) {
			k.rx = k.p->b->layers[i].layer->rx;
			k.rx_state = k.p->b->layers[i].state;
		}
	assert_non_null(k.rx);
	sp = server_pcb(&k);
	assert_non_null(sp);
	irs1 = sp->rcv_nxt; /* nothing received yet: offset 0 */
	stream(&k, true, 8192);
	stream(&k, false, 4096);

	print_message("tcp fuzz: seed %#llx (UNET_FUZZ_SEED), %llu frames (UNET_FUZZ_COUNT), "
		      "MTU %u\n",
		      (unsigned long long)seed, (unsigned long long)frames, k.mtu);
	t0 = now_ms();
	assert_int_equal(unet_tcp__stats(k.p->b, &before), 0);
	assert_int_equal(unet_tcp__stats(k.p->a, &a_before), 0);
	for (uint64_t i = 0; i < frames; i++) {
		uint8_t f[2048], *h;
		uint32_t n = fuzz_frame(&k, &rng, f, irs1);
		enum outcome o = model_rx(&k, f, n);
		struct unet_recv_desc d = { 0 };
		enum unet_layer_verdict v;

		h = malloc(n);
		assert_non_null(h);
		memcpy(h, f, n);
		v = k.rx(k.rx_state, get16(f + 12), h, n, &d);
		free(h);
		if (v != (o == O_NOT_MINE ? UNET_LAYER_NOT_MINE : UNET_LAYER_CONSUMED))
			fail_msg("frame %llu (%u bytes): verdict %d, the rules say %s (replay: "
				 "UNET_FUZZ_SEED=%#llx)",
				 (unsigned long long)i, n, (int)v,
				 o == O_NOT_MINE ? "not mine" : "consumed", (unsigned long long)seed);
		want[o]++;
		if (i % 16 == 15)
			pump(&k);
		/* not one byte of it reaches the application */
		{
			uint8_t b[64];
			ssize_t r = unet_tcp__recv(k.s, b, sizeof(b), 0);

			if (r != -EAGAIN)
				fail_msg("frame %llu: the server read %zd (replay: UNET_FUZZ_SEED=%#llx)",
					 (unsigned long long)i, r, (unsigned long long)seed);
		}
		if (unet_tcp__error(k.s) || unet_tcp__error(k.c))
			fail_msg("frame %llu broke the connection: server %d, client %d",
				 (unsigned long long)i, unet_tcp__error(k.s), unet_tcp__error(k.c));
	}
	/* what a's lwIP sent b meanwhile (answers to b's answers, ARP) went
	 * through the same counters: let it arrive, and count it */
	for (uint64_t until = now_ms() + 3000, quiet = 0; quiet < 10 && now_ms() < until;) {
		struct timespec ts = { 0, 5000000 };
		uint64_t seen;

		pump(&k);
		nanosleep(&ts, NULL);
		assert_int_equal(unet_tcp__stats(k.p->b, &after), 0);
		assert_int_equal(unet_tcp__stats(k.p->a, &a_after), 0);
		real = a_after.tx_frames - a_before.tx_frames;
		seen = after.rx_frames - before.rx_frames + after.rx_arp - before.rx_arp;
		/* all of a's frames in (at least), and nothing new for 10 rounds */
		quiet = seen >= want[O_FED] + want[O_FED_PARTIAL] + want[O_ARP] + real ? quiet + 1
											 : 0;
	}
	assert_int_equal(unet_tcp__stats(k.p->b, &after), 0);
	assert_int_equal(unet_tcp__stats(k.p->a, &a_after), 0);
	real = a_after.tx_frames - a_before.tx_frames;
	print_message("tcp fuzz: %llu to lwIP (%llu partial checksums), %llu SYNs answered with a "
		      "cookie, %llu "
		      "malformed, %llu bad checksums, %llu not ours, "
		      "%llu ARP, %llu not TCP, %llu at rcv_nxt + 2^31; %llu real frames from a "
		      "meanwhile; %.2f s\n",
		      (unsigned long long)(want[O_FED] + want[O_FED_PARTIAL]),
		      (unsigned long long)want[O_FED_PARTIAL], (unsigned long long)want[O_SYN_COOKIE],
		      (unsigned long long)want[O_MALFORMED], (unsigned long long)want[O_BAD_CSUM],
		      (unsigned long long)want[O_NOT_OURS], (unsigned long long)want[O_ARP],
		      (unsigned long long)want[O_NOT_MINE], (unsigned long long)want[O_SEQ_TRAP],
		      (unsigned long long)real,
		      (double)(now_ms() - t0) / 1000.0);
	assert_int_equal(after.rx_malformed - before.rx_malformed,
			 want[O_MALFORMED] + want[O_SEQ_TRAP]);
	assert_int_equal(after.rx_not_ours - before.rx_not_ours, want[O_NOT_OURS]);
	assert_int_equal(after.rx_bad_csum - before.rx_bad_csum, want[O_BAD_CSUM]);
	assert_int_equal(after.rx_partial_csum - before.rx_partial_csum, want[O_FED_PARTIAL]);
	assert_int_equal(after.rx_partial_refused - before.rx_partial_refused, 0);
	/* every SYN for the listener answered with a cookie (or counted
	 * dropped: no send buffer), none fed; every other frame fed, and
	 * a's own frames (among them its resets for our SYN-ACKs) fed or
	 * ARP */
	{
		uint64_t fed = after.rx_frames - before.rx_frames + after.rx_arp - before.rx_arp;
		uint64_t syn = after.rx_syn_cookies - before.rx_syn_cookies + after.rx_syn_dropped -
			       before.rx_syn_dropped;
		uint64_t base = want[O_FED] + want[O_FED_PARTIAL] + want[O_ARP] + real;

		if (fed != base || syn != want[O_SYN_COOKIE])
			fail_msg("%llu frames fed to lwIP, %llu SYNs answered or dropped; the rules "
				 "say %llu and %llu",
				 (unsigned long long)fed, (unsigned long long)syn,
				 (unsigned long long)base, (unsigned long long)want[O_SYN_COOKIE]);
	}
	assert_int_equal(after.syn_cookie_conns - before.syn_cookie_conns, 0);
	assert_true(want[O_FED] > frames / 4 && want[O_MALFORMED] > frames / 50 && want[O_SEQ_TRAP] &&
		    want[O_BAD_CSUM] > frames / 8 && want[O_SYN_COOKIE] > frames / 50);

	/* After the storm: the connection still carries data both ways, and
	 * no forged handshake completed. */
	stream(&k, true, 65536);
	stream(&k, false, 65536);
	assert_null(unet_tcp__accept(k.l, 0));
	unet_tcp__close(k.c);
	unet_tcp__close(k.s);
	unet_tcp__close(k.l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tcp_fuzz, pair_setup, pair_teardown),
	};

	pair_env();
	return cmocka_run_group_tests_name("tcp_fuzz", tests, NULL, NULL);
}
