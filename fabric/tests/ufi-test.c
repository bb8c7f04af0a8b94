/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ufi-test - a libfabric client of the `unet` provider, run as two
 * processes (server and client, one per namespace).  Knows nothing of the
 * provider but its name: everything goes through libfabric.
 *
 *   ufi-test server|client --me FILE --peer FILE [--iters N] [--blocking]
 *
 * Each side writes its endpoint name (the string form, FI_ADDR_STR) to
 * --me and waits for the other's in --peer.  Then, in lock step:
 *   pingpong   tagged, every size from 0 to 1 MiB, eager and rendezvous,
 *              fi_tinject for small ones, contents checked each way
 *   data       fi_tsenddata: the 32-bit CQ data and FI_REMOTE_CQ_DATA
 *   msg        untagged fi_send / fi_recv
 *   unexpected 12 messages sent before any receive is posted, found with
 *              FI_PEEK, received in another order than sent; same-tag
 *              messages arrive in send order
 *   directed   a receive for the peer's address only does not take a
 *              message from ourselves with the same tag
 *   ignore     ignore bits: a receive with tag T, ignore 0xff matches T|0x42
 *   trunc      eager and rendezvous messages into a short buffer:
 *              FI_ETRUNC with olen, the prefix delivered
 *   cancel     a receive nobody sends to: fi_cancel, FI_ECANCELED entry
 *   peek       FI_PEEK miss = FI_ENOMSG; FI_PEEK|FI_CLAIM then FI_CLAIM;
 *              FI_PEEK|FI_DISCARD
 *   many       each side sends 100 rendezvous messages and then 5 small
 *              ones, all with one tag, before posting any receive (more
 *              than UAM's 64 regions: the provider queues them), then
 *              receives the 105 in send order
 *   zero       a 0-byte fi_tsendmsg with flags 0 gives no completion
 *              under FI_SELECTIVE_COMPLETION, but the peer gets it
 * --av-table opens an FI_AV_TABLE (addresses 0, 1, ...) instead of a MAP.
 * --blocking waits with fi_cq_sread and checks FI_GETWAIT + poll().
 * Without it, the end checks that polling fi_cq_read with nothing coming
 * leaves the CPU to a task that wants it (check_poll_idle).
 * --late-av: the server inserts the client's name only after a message
 * from it arrived (phase_late_av).
 * --wait FILE: once both names are known, wait for FILE to exist before
 * anything is sent (fabric_spoof sends its forged HELLOs meanwhile).
 * --hold FILE: once the channel is up (the first barrier), print
 * "ufi-test holding" and keep the provider's progress going until FILE
 * exists (fabric_spoof replays a HELLO it saw meanwhile), then go on.
 * --dead-peer: after the first barrier the server dies (_exit, no
 * fi_close); the client's receive from it must end with an error entry
 * (FI_EIO, prov_errno ETIMEDOUT) within 10 s, and a send to it fail.
 *
 *   ufi-test hints
 * checks fi_getinfo's matching alone: what the provider does not serve gets
 * -FI_ENODATA, hints->dest_addr (binary and string) is copied into the
 * info, and a bad one is refused.
 *
 * Prints "ufi-test ok ..." and exits 0, or "ufi-test: FAIL ..." and 1.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_ep *ep;
static struct fid_av *av;
static struct fid_cq *cq;
static struct fi_info *info;
static fi_addr_t peer, self_addr;
static bool server, blocking, dead_peer, av_table, late_av, no_idle;
static int iters = 20;
static size_t inject_size;

#define TAG_PP 0x1000000000000000ull
#define TAG_BAR 0x2000000000000000ull
#define TAG_UX 0x3000000000000000ull
#define TAG_DIR 0x4000000000000000ull
#define TAG_MISC 0x5000000000000000ull
#define TIMEOUT_MS 20000

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stdout, "ufi-test: FAIL (%s) ", server ? "server" : "client");
	vfprintf(stdout, fmt, ap);
	fprintf(stdout, "\n");
	va_end(ap);
	fflush(stdout);
	exit(1);
}

#define CHECK(call)                                                                    \
	do {                                                                           \
		ssize_t r_ = (call);                                                   \
		if (r_ < 0)                                                            \
			die("%s: %zd %s (line %d)", #call, r_, fi_strerror((int)-r_), \
			    __LINE__);                                                 \
	} while (0)

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- completions, kept until someone asks for their context ---- */

struct comp {
	struct comp *next;
	struct fi_cq_tagged_entry e;
	fi_addr_t src;
	bool error;
	struct fi_cq_err_entry err;
};
static struct comp *comps;
static int n_polls_blocked;

static void cq_drain_once(int block_ms)
{
	struct fi_cq_tagged_entry e[8];
	fi_addr_t src[8];
	ssize_t n;

	if (blocking && block_ms > 0) {
		n = fi_cq_sreadfrom(cq, e, 8, src, NULL, block_ms);
		n_polls_blocked++;
	} else {
		n = fi_cq_readfrom(cq, e, 8, src);
	}
	if (n == -FI_EAVAIL) {
		struct comp *c = calloc(1, sizeof(*c));
		if (!c)
			die("oom");
		CHECK(fi_cq_readerr(cq, &c->err, 0));
		c->error = true;
		c->e.op_context = c->err.op_context;
		c->e.len = c->err.len;
		c->e.tag = c->err.tag;
		c->e.flags = c->err.flags;
		c->next = comps;
		comps = c;
		return;
	}
	if (n == -FI_EAGAIN)
		return;
	if (n < 0)
		die("fi_cq_read: %s", fi_strerror((int)-n));
	for (ssize_t i = 0; i < n; i++) {
		struct comp *c = calloc(1, sizeof(*c));
		if (!c)
			die("oom");
		c->e = e[i];
		c->src = src[i];
		c->next = comps;
		comps = c;
	}
}

static struct comp *take(void *ctx)
{
	for (struct comp **pp = &comps; *pp; pp = &(*pp)->next)
		if ((*pp)->e.op_context == ctx) {
			struct comp *c = *pp;
			*pp = c->next;
			return c;
		}
	return NULL;
}

static struct comp *wait_ctx(void *ctx)
{
	uint64_t end = now_ms() + TIMEOUT_MS;
	struct comp *c;

	while (!(c = take(ctx))) {
		if (now_ms() > end)
			die("no completion for context %p within %d ms", ctx, TIMEOUT_MS);
		cq_drain_once(100);
	}
	return c;
}

static void wait_ok(void *ctx, const char *what)
{
	struct comp *c = wait_ctx(ctx);

	if (c->error)
		die("%s: error completion %d (%s), prov_errno %d", what, c->err.err,
		    fi_strerror(c->err.err), c->err.prov_errno);
	free(c);
}

/* Post, retrying on -FI_EAGAIN (the provider sets up channels meanwhile). */
#define POST(call)                                                                  \
	do {                                                                        \
		uint64_t end_ = now_ms() + TIMEOUT_MS;                              \
		ssize_t r_;                                                         \
		while ((r_ = (call)) == -FI_EAGAIN) {                               \
			if (now_ms() > end_)                                        \
				die("%s: still -FI_EAGAIN after %d ms", #call,      \
				    TIMEOUT_MS);                                    \
			cq_drain_once(1);                                           \
		}                                                                   \
		if (r_ < 0)                                                         \
			die("%s: %zd %s (line %d)", #call, r_, fi_strerror((int)-r_), \
			    __LINE__);                                              \
	} while (0)

static void fill(unsigned char *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(seed * 31 + i * 7 + (i >> 8));
}

static void verify(const unsigned char *b, size_t n, unsigned seed, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != (unsigned char)(seed * 31 + i * 7 + (i >> 8)))
			die("%s: byte %zu of %zu is 0x%02x, want 0x%02x", what, i, n, b[i],
			    (unsigned char)(seed * 31 + i * 7 + (i >> 8)));
}

static void tsend(const void *buf, size_t len, fi_addr_t to, uint64_t tag, void *ctx)
{
	if (len <= inject_size && !ctx) {
		POST(fi_tinject(ep, buf, len, to, tag));
		return;
	}
	POST(fi_tsend(ep, buf, len, NULL, to, tag, ctx));
	wait_ok(ctx, "tsend");
}

static void trecv(void *buf, size_t len, fi_addr_t from, uint64_t tag, uint64_t ignore,
		  struct fi_context *ctx, size_t want_len, uint64_t want_tag)
{
	struct comp *c;

	POST(fi_trecv(ep, buf, len, NULL, from, tag, ignore, ctx));
	c = wait_ctx(ctx);
	if (c->error)
		die("trecv tag %#llx: error %d (%s)", (unsigned long long)tag, c->err.err,
		    fi_strerror(c->err.err));
	if (c->e.len != want_len || c->e.tag != want_tag || !(c->e.flags & FI_RECV) ||
	    !(c->e.flags & FI_TAGGED))
		die("trecv: len %zu tag %#llx flags %#llx, want len %zu tag %#llx", c->e.len,
		    (unsigned long long)c->e.tag, (unsigned long long)c->e.flags, want_len,
		    (unsigned long long)want_tag);
	if (c->src != from && from != FI_ADDR_UNSPEC)
		die("trecv: source %llu, want %llu", (unsigned long long)c->src,
		    (unsigned long long)from);
	free(c);
}

static void barrier(unsigned n)
{
	struct fi_context ctx;
	uint64_t x = n, y = 0;

	if (server) {
		trecv(&y, 8, peer, TAG_BAR | n, 0, &ctx, 8, TAG_BAR | n);
		tsend(&x, 8, peer, TAG_BAR | n, NULL);
	} else {
		tsend(&x, 8, peer, TAG_BAR | n, NULL);
		trecv(&y, 8, peer, TAG_BAR | n, 0, &ctx, 8, TAG_BAR | n);
	}
	if (y != n)
		die("barrier %u: got %llu", n, (unsigned long long)y);
}

/* ---- phases ---- */

/*
 * --late-av: the client sends to the server before the server has put the
 * client's name in its AV (Open MPI adds peers lazily, on first use).  The
 * server must still answer the channel setup and deliver the message, its
 * source FI_ADDR_NOTAVAIL; after fi_av_insert every later receive names
 * the client by its address (trecv checks the source).
 */
static const uint64_t late_word = 0x1a7e5e11dull;

static void phase_late_av(void)
{
	struct fi_context ctx;
	uint64_t y = 0;
	struct comp *c;

	POST(fi_trecv(ep, &y, 8, NULL, FI_ADDR_UNSPEC, TAG_MISC | 0xa1, 0, &ctx));
	c = wait_ctx(&ctx);
	if (c->error || c->e.len != 8 || y != late_word)
		die("late-av: the message from a peer not in the AV did not arrive intact");
	if (c->src != FI_ADDR_NOTAVAIL)
		die("late-av: source %llu, want FI_ADDR_NOTAVAIL", (unsigned long long)c->src);
	free(c);
}

static void phase_pingpong(void)
{
	/* around the eager limits: one medium frame at MTU 1500 (1408; 1380
	 * on a routable channel, 28 bytes of IP and UDP less) and 9000
	 * (8908), the fragmented eager messages' end (16384) */
	static const size_t sizes[] = { 0,    1,    8,	  47,	 48,	49,    100,   1000,
					1380, 1381, 1408, 1409, 1500,	4096,  8908,  8909,
					16384, 16385, 65536, 1 << 20 };
	size_t max = 1 << 20;
	unsigned char *s = malloc(max), *r = malloc(max);
	struct fi_context sc, rc;

	if (!s || !r)
		die("oom");
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k];
		int it = n >= 65536 ? 3 : iters;
		for (int i = 0; i < it; i++) {
			unsigned seed = (unsigned)(k * 1000 + i);
			uint64_t tag = TAG_PP | (k << 16) | (uint64_t)i;
			if (server) {
				memset(r, 0, n);
				trecv(r, max, peer, tag, 0, &rc, n, tag);
				verify(r, n, seed, "pingpong at server");
				fill(s, n, seed + 1);
				tsend(s, n, peer, tag, n <= inject_size ? NULL : &sc);
			} else {
				fill(s, n, seed);
				tsend(s, n, peer, tag, n <= inject_size ? NULL : &sc);
				memset(r, 0, n);
				trecv(r, max, peer, tag, 0, &rc, n, tag);
				verify(r, n, seed + 1, "pingpong at client");
			}
		}
	}
	free(s);
	free(r);
}

static void phase_data(void)
{
	struct fi_context sc, rc;
	uint64_t tag = TAG_MISC | 1;
	unsigned char b[3000];
	struct comp *c;

	if (!server) {
		fill(b, 16, 7);
		POST(fi_tsenddata(ep, b, 16, NULL, 0xdeadbeef, peer, tag, &sc));
		wait_ok(&sc, "tsenddata eager");
		fill(b, sizeof(b), 8);
		POST(fi_tsenddata(ep, b, sizeof(b), NULL, 0x12345678, peer, tag + 1, &sc));
		wait_ok(&sc, "tsenddata rendezvous");
		return;
	}
	for (int k = 0; k < 2; k++) {
		POST(fi_trecv(ep, b, sizeof(b), NULL, peer, tag + k, 0, &rc));
		c = wait_ctx(&rc);
		if (c->error || !(c->e.flags & FI_REMOTE_CQ_DATA) ||
		    c->e.data != (k ? 0x12345678u : 0xdeadbeefu) || c->e.len != (k ? 3000u : 16u))
			die("tsenddata %d: error %d flags %#llx data %#llx len %zu", k, c->error,
			    (unsigned long long)c->e.flags, (unsigned long long)c->e.data, c->e.len);
		verify(b, c->e.len, k ? 8 : 7, "tsenddata");
		free(c);
	}
}

static void phase_msg(void)
{
	struct fi_context sc, rc;
	unsigned char b[5000];
	struct comp *c;

	for (int k = 0; k < 2; k++) {
		size_t n = k ? 5000 : 20;
		if (server) {
			POST(fi_recv(ep, b, sizeof(b), NULL, peer, &rc));
			c = wait_ctx(&rc);
			if (c->error || c->e.len != n || !(c->e.flags & FI_MSG))
				die("fi_recv %d: error %d len %zu flags %#llx", k, c->error,
				    c->e.len, (unsigned long long)c->e.flags);
			verify(b, n, 40 + k, "fi_recv");
			free(c);
		} else {
			fill(b, n, 40 + k);
			POST(fi_send(ep, b, n, NULL, peer, &sc));
			wait_ok(&sc, "fi_send");
		}
	}
}

/* 12 messages before any receive: 3 tags x (2 eager + 2 rendezvous) */
static void phase_unexpected(void)
{
	static unsigned char big[6][20000]; /* each unchanged until its send completes */
	unsigned char small[48], r[20000];
	struct fi_context sc[12], rc, pc;
	struct comp *c;

	if (!server) {
		for (int t = 0; t < 3; t++)
			for (int j = 0; j < 4; j++) {
				int k = t * 4 + j;
				size_t n = j < 2 ? 30 : 20000;
				unsigned char *b = j < 2 ? small : big[t * 2 + j - 2];
				fill(b, n, 100 + k);
				if (n <= inject_size)
					POST(fi_tinject(ep, b, n, peer, TAG_UX | t));
				else
					POST(fi_tsend(ep, b, n, NULL, peer, TAG_UX | t, &sc[k]));
			}
		barrier(10);
		for (int t = 0; t < 3; t++)
			for (int j = 2; j < 4; j++)
				wait_ok(&sc[t * 4 + j], "unexpected rendezvous send");
		return;
	}
	/* wait until the last one is there: FI_PEEK until it matches */
	for (uint64_t end = now_ms() + TIMEOUT_MS;;) {
		struct fi_msg_tagged m = { .addr = peer, .tag = TAG_UX | 2, .context = &pc };
		int seen = 0;
		POST(fi_trecvmsg(ep, &m, FI_PEEK | FI_COMPLETION));
		c = wait_ctx(&pc);
		if (!c->error)
			seen = 1;
		else if (c->err.err != FI_ENOMSG)
			die("peek: error %d, want FI_ENOMSG or a match", c->err.err);
		free(c);
		if (seen)
			break;
		if (now_ms() > end)
			die("unexpected messages never arrived");
		usleep(1000);
	}
	/* all 12 are (or are becoming) unexpected: receive tag 2, then 0, then 1;
	 * within a tag, in send order */
	static const int order[] = { 2, 0, 1 };
	for (int oi = 0; oi < 3; oi++) {
		int t = order[oi];
		for (int j = 0; j < 4; j++) {
			size_t n = j < 2 ? 30 : 20000;
			memset(r, 0, sizeof(r));
			trecv(r, sizeof(r), peer, TAG_UX | t, 0, &rc, n, TAG_UX | t);
			verify(r, n, 100 + t * 4 + j, "unexpected");
		}
	}
	barrier(10);
}

/* Directed receives, both ways round: posted before a message from
 * ourselves with the same tag arrives (the posted-queue match), and posted
 * after one is already unexpected (the unexpected-queue match). */
static void phase_directed(void)
{
	struct fi_context rc1, rc2, sc;
	uint64_t mine[2] = { 0x5e1f, 0x5e2f }, theirs[2] = { 0x7ee2, 0x7ee3 }, got[2] = { 0, 0 }, g;
	struct comp *c;

	if (!server) {
		barrier(20);
		for (int k = 0; k < 2; k++) {
			POST(fi_tsend(ep, &theirs[k], 8, NULL, peer, TAG_DIR | k, &sc));
			wait_ok(&sc, "directed send");
		}
		return;
	}
	POST(fi_trecv(ep, &got[0], 8, NULL, peer, TAG_DIR, 0, &rc1));
	POST(fi_tsend(ep, &mine[0], 8, NULL, self_addr, TAG_DIR, &sc));
	wait_ok(&sc, "self send 0");
	POST(fi_tsend(ep, &mine[1], 8, NULL, self_addr, TAG_DIR | 1, &sc));
	wait_ok(&sc, "self send 1");
	POST(fi_trecv(ep, &got[1], 8, NULL, peer, TAG_DIR | 1, 0, &rc2));
	barrier(20);
	for (int k = 0; k < 2; k++) {
		c = wait_ctx(k ? &rc2 : &rc1);
		if (c->error || got[k] != theirs[k] || c->src != peer)
			die("directed receive %d got %#llx from %llu, want %#llx from the peer", k,
			    (unsigned long long)got[k], (unsigned long long)c->src,
			    (unsigned long long)theirs[k]);
		free(c);
	}
	for (int k = 0; k < 2; k++) {
		g = 0;
		trecv(&g, 8, FI_ADDR_UNSPEC, TAG_DIR | k, 0, &rc1, 8, TAG_DIR | k);
		if (g != mine[k])
			die("wildcard receive %d got %#llx, want our own %#llx", k,
			    (unsigned long long)g, (unsigned long long)mine[k]);
	}
}

static void phase_ignore(void)
{
	struct fi_context rc;
	uint64_t v = 77, g = 0;

	if (!server) {
		tsend(&v, 8, peer, TAG_MISC | 0x4200 | 0x42, NULL);
	} else {
		trecv(&g, 8, peer, TAG_MISC | 0x4200, 0xff, &rc, 8, TAG_MISC | 0x4242);
		if (g != 77)
			die("ignore bits: got %llu", (unsigned long long)g);
	}
	barrier(30);
}

static void phase_trunc(void)
{
	unsigned char b[6000], r[16];
	struct fi_context sc, rc;
	struct comp *c;

	for (int k = 0; k < 2; k++) {
		size_t n = k ? 6000 : 40;
		if (!server) {
			fill(b, n, 200 + k);
			POST(fi_tsend(ep, b, n, NULL, peer, TAG_MISC | 0x100 | k, &sc));
			wait_ok(&sc, "truncated send");
			continue;
		}
		memset(r, 0, sizeof(r));
		POST(fi_trecv(ep, r, sizeof(r), NULL, peer, TAG_MISC | 0x100 | k, 0, &rc));
		c = wait_ctx(&rc);
		if (!c->error || c->err.err != FI_ETRUNC || c->err.olen != n - sizeof(r) ||
		    c->err.len != sizeof(r))
			die("truncation %d: error %d err %d olen %zu len %zu, want FI_ETRUNC olen %zu",
			    k, c->error, c->err.err, c->err.olen, c->err.len, n - sizeof(r));
		verify(r, sizeof(r), 200 + k, "truncated prefix");
		free(c);
	}
	barrier(40);
}

static void phase_cancel(void)
{
	struct fi_context rc;
	unsigned char b[8];
	struct comp *c;

	POST(fi_trecv(ep, b, 8, NULL, peer, TAG_MISC | 0x200, 0, &rc));
	CHECK(fi_cancel(&ep->fid, &rc));
	c = wait_ctx(&rc);
	if (!c->error || c->err.err != FI_ECANCELED)
		die("cancel: error %d err %d, want FI_ECANCELED", c->error, c->err.err);
	free(c);
	if (fi_cancel(&ep->fid, &rc) != -FI_ENOENT)
		die("cancel of nothing did not say -FI_ENOENT");
	barrier(50);
}

static void phase_peek(void)
{
	struct fi_context pc, cc, sc;
	unsigned char b[3000], r[3000];
	struct comp *c;

	if (!server) {
		for (int k = 0; k < 3; k++) {
			size_t n = k == 1 ? 3000 : 24;
			fill(b, n, 300 + k);
			POST(fi_tsend(ep, b, n, NULL, peer, TAG_MISC | 0x300 | k, &sc));
			wait_ok(&sc, "peek send");
		}
		barrier(60);
		return;
	}
	/* a tag nobody sent: FI_ENOMSG */
	struct fi_msg_tagged m = { .addr = peer, .tag = TAG_MISC | 0x3ff, .context = &pc };
	POST(fi_trecvmsg(ep, &m, FI_PEEK | FI_COMPLETION));
	c = wait_ctx(&pc);
	if (!c->error || c->err.err != FI_ENOMSG)
		die("peek miss: error %d err %d, want FI_ENOMSG", c->error, c->err.err);
	free(c);
	/* k = 0 (eager) and 1 (rendezvous): PEEK|CLAIM, then CLAIM */
	for (int k = 0; k < 2; k++) {
		size_t n = k == 1 ? 3000 : 24;
		uint64_t tag = TAG_MISC | 0x300 | (uint64_t)k;
		for (uint64_t end = now_ms() + TIMEOUT_MS;;) {
			m = (struct fi_msg_tagged){ .addr = peer, .tag = tag, .context = &cc };
			POST(fi_trecvmsg(ep, &m, FI_PEEK | FI_CLAIM | FI_COMPLETION));
			c = wait_ctx(&cc);
			if (!c->error)
				break;
			if (c->err.err != FI_ENOMSG || now_ms() > end)
				die("peek|claim %d: err %d", k, c->err.err);
			free(c);
			usleep(1000);
		}
		if (c->e.len != n || c->e.tag != tag)
			die("peek|claim %d: len %zu tag %#llx", k, c->e.len,
			    (unsigned long long)c->e.tag);
		free(c);
		/* claimed: a plain peek no longer sees it */
		m = (struct fi_msg_tagged){ .addr = peer, .tag = tag, .context = &pc };
		POST(fi_trecvmsg(ep, &m, FI_PEEK | FI_COMPLETION));
		c = wait_ctx(&pc);
		if (!c->error || c->err.err != FI_ENOMSG)
			die("claimed message still visible to FI_PEEK");
		free(c);
		struct iovec iov = { r, sizeof(r) };
		memset(r, 0, sizeof(r));
		m = (struct fi_msg_tagged){ .msg_iov = &iov, .iov_count = 1, .addr = peer,
					    .tag = tag, .context = &cc };
		POST(fi_trecvmsg(ep, &m, FI_CLAIM | FI_COMPLETION));
		c = wait_ctx(&cc);
		if (c->error || c->e.len != n)
			die("claim %d: error %d len %zu", k, c->error, c->e.len);
		verify(r, n, 300 + k, "claimed");
		free(c);
	}
	/* k = 2: PEEK|DISCARD */
	for (uint64_t end = now_ms() + TIMEOUT_MS;;) {
		m = (struct fi_msg_tagged){ .addr = peer, .tag = TAG_MISC | 0x302, .context = &pc };
		POST(fi_trecvmsg(ep, &m, FI_PEEK | FI_DISCARD | FI_COMPLETION));
		c = wait_ctx(&pc);
		if (!c->error)
			break;
		if (now_ms() > end)
			die("peek|discard never matched");
		free(c);
		usleep(1000);
	}
	free(c);
	m = (struct fi_msg_tagged){ .addr = peer, .tag = TAG_MISC | 0x302, .context = &pc };
	POST(fi_trecvmsg(ep, &m, FI_PEEK | FI_COMPLETION));
	c = wait_ctx(&pc);
	if (!c->error || c->err.err != FI_ENOMSG)
		die("discarded message still there");
	free(c);
	barrier(60);
}

#define MANY 100
#define MANY_SMALL 5
static void phase_many(void)
{
	static unsigned char s[MANY + MANY_SMALL][4096], r[4096];
	static struct fi_context sc[MANY + MANY_SMALL];
	struct fi_context rc;

	for (int i = 0; i < MANY + MANY_SMALL; i++) {
		size_t n = i < MANY ? sizeof(s[i]) : 16;
		fill(s[i], n, 500 + i + (server ? 1000 : 0));
		POST(fi_tsend(ep, s[i], n, NULL, peer, TAG_MISC | 0x600, &sc[i]));
	}
	for (int i = 0; i < MANY + MANY_SMALL; i++) {
		size_t n = i < MANY ? sizeof(r) : 16;
		memset(r, 0, sizeof(r));
		trecv(r, sizeof(r), peer, TAG_MISC | 0x600, 0, &rc, n, TAG_MISC | 0x600);
		verify(r, n, 500 + i + (server ? 0 : 1000), "many, in send order");
	}
	for (int i = 0; i < MANY + MANY_SMALL; i++)
		wait_ok(&sc[i], "many: send");
	barrier(65);
}

static void phase_zero(void)
{
	struct fi_context rc, sc;
	struct comp *c;

	if (!server) {
		struct fi_msg_tagged m = { .iov_count = 0, .addr = peer, .tag = TAG_MISC | 0x400,
					   .context = &sc };
		POST(fi_tsendmsg(ep, &m, 0));
		barrier(70);
		/* everything it could have produced has been read by now */
		cq_drain_once(0);
		if ((c = take(&sc)))
			die("a 0-byte fi_tsendmsg with flags 0 gave a completion");
		return;
	}
	trecv(NULL, 0, peer, TAG_MISC | 0x400, 0, &rc, 0, TAG_MISC | 0x400);
	barrier(70);
	(void)c;
}

static void phase_dead(uint64_t t0)
{
	struct fi_context rc;
	unsigned char b[8];
	char es[128];
	struct comp *c;
	uint64_t t;
	ssize_t r;

	if (server) {
		printf("ufi-test server dies now\n");
		fflush(stdout);
		/* Keep making progress a while, so the barrier's reply (perhaps
		 * still queued behind channel setup, or lost and due again)
		 * reaches the client; a plain sleep made no progress and the
		 * client sometimes failed its barrier instead of its receive. */
		for (uint64_t end = now_ms() + 300; now_ms() < end;)
			cq_drain_once(10);
		_exit(0);
	}
	t = now_ms();
	POST(fi_trecv(ep, b, 8, NULL, peer, TAG_MISC | 0x500, 0, &rc));
	c = wait_ctx(&rc);
	if (!c->error || c->err.err != FI_EIO || c->err.prov_errno != ETIMEDOUT)
		die("receive from a dead peer: error %d err %d prov_errno %d, want FI_EIO/ETIMEDOUT",
		    c->error, c->err.err, c->err.prov_errno);
	printf("dead peer noticed after %llu ms: %s (%s)\n", (unsigned long long)(now_ms() - t),
	       fi_strerror(c->err.err),
	       fi_cq_strerror(cq, c->err.prov_errno, NULL, es, sizeof(es)));
	free(c);
	r = fi_tsend(ep, b, 8, NULL, peer, TAG_MISC | 0x501, &rc);
	if (r != -FI_EIO)
		die("send to a dead peer returned %zd, want -FI_EIO", r);
	printf("ufi-test ok client dead-peer ms=%llu\n", (unsigned long long)(now_ms() - t0));
	fi_close(&ep->fid);
	exit(0);
}

static uint64_t cpu_ms(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
}

/* Blocked in fi_cq_sread with nothing coming, a rank sleeps: 1 s of
 * waiting may cost at most 50 ms of CPU.  It takes about 1 here; spinning
 * takes all the CPU it gets (200 ms on the loaded test machine, 1000 on
 * an idle one). */
static void check_idle(void)
{
	struct fi_cq_tagged_entry e;
	uint64_t t0 = now_ms(), c0 = cpu_ms(), dt, dc;
	ssize_t r = fi_cq_sread(cq, &e, 1, NULL, 1000);

	dt = now_ms() - t0;
	dc = cpu_ms() - c0;
	if (r != -FI_EAGAIN || dt < 900)
		die("idle fi_cq_sread returned %zd after %llu ms, want -FI_EAGAIN after 1 s", r,
		    (unsigned long long)dt);
	if (dc > 50)
		die("blocked in fi_cq_sread for %llu ms, it used %llu ms of CPU (spinning?)",
		    (unsigned long long)dt, (unsigned long long)dc);
	printf("idle wait %llu ms, cpu %llu ms\n", (unsigned long long)dt, (unsigned long long)dc);
}

static uint64_t ru_ms(const struct rusage *ru)
{
	return (uint64_t)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000 +
	       (uint64_t)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1000;
}

/* Polling fi_cq_read with nothing coming, while another task wants our
 * CPU: the provider must sleep instead of spinning (its idle wait).  We
 * and a child that only spins are pinned to one CPU for 1 s; the child
 * is never idle, so a poller that spun would get about as much CPU as
 * it does (fair share), whatever else the machine runs.  A poller that
 * sleeps gets almost none; the bound is a quarter of the child's. */
static void check_poll_idle(void)
{
	struct fi_cq_tagged_entry e;
	cpu_set_t old, one;
	struct rusage ru;
	uint64_t t0, c0, dc, hog;
	pid_t child;
	int cpu = sched_getcpu(), st;
	ssize_t r;

	if (cpu < 0 || sched_getaffinity(0, sizeof(old), &old))
		die("sched_getcpu/sched_getaffinity: %s", strerror(errno));
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		die("sched_setaffinity: %s", strerror(errno));
	child = fork();
	if (child < 0)
		die("fork: %s", strerror(errno));
	if (child == 0) {
		for (;;)
			__asm__ __volatile__("" ::: "memory");
	}
	t0 = now_ms();
	c0 = cpu_ms();
	while (now_ms() - t0 < 1000) {
		r = fi_cq_read(cq, &e, 1);
		if (r != -FI_EAGAIN)
			die("idle fi_cq_read returned %zd, want -FI_EAGAIN", r);
	}
	dc = cpu_ms() - c0;
	kill(child, SIGKILL);
	if (waitpid(child, &st, 0) != child)
		die("waitpid: %s", strerror(errno));
	getrusage(RUSAGE_CHILDREN, &ru);
	hog = ru_ms(&ru);
	sched_setaffinity(0, sizeof(old), &old);
	printf("poll idle: 1 s of fi_cq_read beside a spinning task on CPU %d: cpu %llu ms, the "
	       "spinner's %llu ms\n",
	       cpu, (unsigned long long)dc, (unsigned long long)hog);
	if (dc * 4 > hog)
		die("polling an idle CQ took %llu ms of CPU beside a spinner that got %llu ms "
		    "(spinning instead of leaving the CPU?)",
		    (unsigned long long)dc, (unsigned long long)hog);
}

static void check_wait_fd(void)
{
	int fd = -1;
	struct fid *fids[1] = { &cq->fid };
	struct pollfd p;

	CHECK(fi_control(&cq->fid, FI_GETWAIT, &fd));
	if (fd < 0)
		die("FI_GETWAIT gave fd %d", fd);
	/* nothing pending: trywait says block, and poll times out quietly */
	int r = fi_trywait(fabric, fids, 1);
	if (r != 0 && r != -FI_EAGAIN)
		die("fi_trywait: %d", r);
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	if (poll(&p, 1, 10) < 0)
		die("poll on the wait fd: %s", strerror(errno));
	printf("wait fd %d ok (trywait %d)\n", fd, r);
}

/* ---- fi_getinfo's matching ---- */

static struct fi_info *base_hints(void)
{
	struct fi_info *h = fi_allocinfo();

	if (!h)
		die("oom");
	h->fabric_attr->prov_name = strdup("unet");
	h->ep_attr->type = FI_EP_RDM;
	return h;
}

static void expect_nodata(struct fi_info *h, const char *what)
{
	struct fi_info *i = NULL;
	int r = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &i);

	if (r != -FI_ENODATA)
		die("hints %s: fi_getinfo returned %d, want -FI_ENODATA", what, r);
	fi_freeinfo(h);
}

/* Names from outside through an AV (docs/libfabric.md, "Addresses"):
 * ours (40 bytes) taken; its 24-byte version-1 form (an IPv4 name of an
 * older provider: bytes 0-23, version byte 1, byte 19 zero) taken alone
 * and two side by side, each the same peer as ours; refused with
 * FI_ADDR_NOTAVAIL: an IPv4 address under the IPv6 family, a version-1
 * name with its reserved byte set, a version-2 name among version-1
 * ones.  Also as hints->dest_addr of 24 bytes. */
static void check_old_names(const unsigned char *name, size_t nl)
{
	struct fi_av_attr ava = { .type = FI_AV_TABLE };
	unsigned char v1[2 * 24], bad[40], got[64];
	fi_addr_t a[2];
	size_t gl = sizeof(got);
	struct fi_info *h, *i;
	struct fid_av *av2;

	if (nl != 40)
		die("fi_getname gave %zu bytes, want 40", nl);
	CHECK(fi_av_open(domain, &ava, &av2, NULL));
	if (fi_av_insert(av2, name, 1, a, 0, NULL) != 1 || a[0] != 0)
		die("our own name was not taken");
	if (name[19] == 4) {
		memcpy(v1, name, 24);
		v1[2] = 1;
		v1[19] = 0;
		memcpy(v1 + 24, v1, 24);
		if (fi_av_insert(av2, v1, 1, a, 0, NULL) != 1 || a[0] != 1)
			die("a version-1 name was not taken");
		CHECK(fi_av_lookup(av2, 1, got, &gl));
		if (gl != nl || memcmp(got, name, nl))
			die("a version-1 name is not the same peer as its version-2 form");
		if (fi_av_insert(av2, v1, 2, a, 0, NULL) != 2 || a[0] != 2 || a[1] != 3)
			die("two version-1 names side by side were not both taken");
		v1[19] = 4;
		if (fi_av_insert(av2, v1, 1, a, 0, NULL) != 0 || a[0] != FI_ADDR_NOTAVAIL)
			die("a version-1 name with its reserved byte set was taken");
		v1[19] = 0;
		memcpy(v1 + 24, name, 24); /* a version-2 name's start among version-1 ones */
		if (fi_av_insert(av2, v1, 2, a, 0, NULL) != 1 || a[1] != FI_ADDR_NOTAVAIL)
			die("a version-2 name among version-1 ones was taken");
		h = base_hints();
		h->dest_addr = malloc(24);
		memcpy(h->dest_addr, v1, 24);
		h->dest_addrlen = 24;
		CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &i));
		fi_freeinfo(i);
		fi_freeinfo(h);
		memcpy(bad, name, 40);
		bad[19] = 6; /* IPv4 bytes under the IPv6 family */
		if (fi_av_insert(av2, bad, 1, a, 0, NULL) != 0 || a[0] != FI_ADDR_NOTAVAIL)
			die("an IPv4 address under the IPv6 family was taken");
	} else {
		memcpy(bad, name, 40);
		bad[19] = 4; /* IPv6 bytes under the IPv4 family */
		if (fi_av_insert(av2, bad, 1, a, 0, NULL) != 0 || a[0] != FI_ADDR_NOTAVAIL)
			die("an IPv6 address under the IPv4 family was taken");
	}
	CHECK(fi_close(&av2->fid));
}

static int run_hints(void)
{
	struct fi_info *h, *i;
	struct fid_ep *e;
	unsigned char name[64];
	size_t nl = 4;

	h = base_hints();
	h->caps = FI_TAGGED | FI_RMA;
	expect_nodata(h, "FI_RMA");
	h = base_hints();
	h->caps = FI_ATOMIC;
	expect_nodata(h, "FI_ATOMIC");
	h = base_hints();
	h->ep_attr->type = FI_EP_DGRAM;
	expect_nodata(h, "FI_EP_DGRAM");
	h = base_hints();
	h->ep_attr->type = FI_EP_MSG;
	expect_nodata(h, "FI_EP_MSG");
	h = base_hints();
	h->domain_attr->threading = FI_THREAD_SAFE;
	expect_nodata(h, "FI_THREAD_SAFE");
	h = base_hints();
	h->domain_attr->data_progress = FI_PROGRESS_AUTO;
	expect_nodata(h, "FI_PROGRESS_AUTO");
	h = base_hints();
	h->tx_attr->inject_size = 1 << 20;
	expect_nodata(h, "inject_size 1 MiB");
	h = base_hints();
	h->tx_attr->msg_order = FI_ORDER_STRICT;
	expect_nodata(h, "FI_ORDER_STRICT");
	h = base_hints();
	h->domain_attr->cq_data_size = 8;
	expect_nodata(h, "cq_data_size 8");
	h = base_hints();
	h->addr_format = FI_SOCKADDR_IN;
	expect_nodata(h, "FI_SOCKADDR_IN");
	h = base_hints();
	h->dest_addr = strdup("garbage");
	h->dest_addrlen = 8;
	expect_nodata(h, "a binary dest_addr of the wrong length");
	h = base_hints();
	h->addr_format = FI_ADDR_STR;
	h->dest_addr = strdup("fi_unet://nonsense");
	h->dest_addrlen = strlen(h->dest_addr) + 1;
	expect_nodata(h, "a malformed string dest_addr");

	/* a real name, binary: copied into the info */
	h = base_hints();
	CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info));
	if (info->next)
		die("more than one info for unet");
	if (strcmp(info->fabric_attr->prov_name, "unet") != 0)
		die("provider %s", info->fabric_attr->prov_name);
	CHECK(fi_fabric(info->fabric_attr, &fabric, NULL));
	CHECK(fi_domain(fabric, info, &domain, NULL));
	CHECK(fi_endpoint(domain, info, &e, NULL));
	if (fi_getname(&e->fid, name, &nl) != -FI_ETOOSMALL || nl == 0 || nl > sizeof(name))
		die("fi_getname into 4 bytes did not say -FI_ETOOSMALL with the length");
	CHECK(fi_getname(&e->fid, name, &nl));
	h->dest_addr = malloc(nl);
	memcpy(h->dest_addr, name, nl);
	h->dest_addrlen = nl;
	CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &i));
	if (i->dest_addrlen != nl || memcmp(i->dest_addr, name, nl) != 0)
		die("hints->dest_addr was not copied into the info");
	fi_freeinfo(i);
	fi_freeinfo(h);
	check_old_names(name, nl);
	CHECK(fi_close(&e->fid));
	CHECK(fi_close(&domain->fid));
	CHECK(fi_close(&fabric->fid));
	fi_freeinfo(info);
	printf("ufi-test ok hints\n");
	return 0;
}

/* ---- setup ---- */

static void write_file(const char *path, const char *s)
{
	char tmp[512];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%s\n", s) < 0 || fclose(f) || rename(tmp, path))
		die("cannot write %s", path);
}

/* The first line of path, once it is whole: a writer that is not ours
 * (a test's `echo go >FILE`) creates the file empty and writes it after,
 * so a file that exists but holds no complete line yet is waited for. */
static void read_file(const char *path, char *buf, size_t len)
{
	uint64_t end = now_ms() + TIMEOUT_MS;

	for (;;) {
		FILE *f = fopen(path, "r");
		bool whole = f && fgets(buf, (int)len, f) && strchr(buf, '\n');

		if (f)
			fclose(f);
		if (whole)
			break;
		if (now_ms() > end)
			die("%s %s after %d ms", f ? "no complete line in" : "no", path, TIMEOUT_MS);
		usleep(10000);
	}
	buf[strcspn(buf, "\n")] = '\0';
}

/* Progress (HELLOs answered, completions kept for later) until path
 * exists. */
static void hold(const char *path)
{
	uint64_t end = now_ms() + TIMEOUT_MS;

	printf("ufi-test holding\n");
	fflush(stdout);
	while (access(path, F_OK) != 0) {
		if (now_ms() > end)
			die("no %s after %d ms", path, TIMEOUT_MS);
		cq_drain_once(0);
		usleep(1000);
	}
}

int main(int argc, char **argv)
{
	const char *me = NULL, *peerf = NULL, *waitf = NULL, *holdf = NULL;
	struct fi_info *hints;
	struct fi_cq_attr cqa = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr ava = { .type = FI_AV_MAP };
	char name[256], pname[256];
	size_t nl = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "hints"))
		return run_hints();
	if (argc < 2 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: ufi-test server|client --me FILE --peer FILE [--iters N] "
				"[--blocking] [--av-table] [--dead-peer] [--late-av] [--no-idle] [--wait FILE] "
				"[--hold FILE]\n");
		return 2;
	}
	server = !strcmp(argv[1], "server");
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--me") && i + 1 < argc)
			me = argv[++i];
		else if (!strcmp(argv[i], "--peer") && i + 1 < argc)
			peerf = argv[++i];
		else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--blocking"))
			blocking = true;
		else if (!strcmp(argv[i], "--av-table"))
			av_table = true;
		else if (!strcmp(argv[i], "--dead-peer"))
			dead_peer = true;
		else if (!strcmp(argv[i], "--late-av"))
			late_av = true;
		else if (!strcmp(argv[i], "--no-idle")) /* fabric_client checks it */
			no_idle = true;
		else if (!strcmp(argv[i], "--wait") && i + 1 < argc)
			waitf = argv[++i];
		else if (!strcmp(argv[i], "--hold") && i + 1 < argc)
			holdf = argv[++i];
		else {
			fprintf(stderr, "ufi-test: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (!me || !peerf)
		die("--me and --peer are required");

	hints = fi_allocinfo();
	hints->caps = FI_TAGGED | FI_MSG | FI_DIRECTED_RECV | FI_SOURCE;
	hints->ep_attr->type = FI_EP_RDM;
	hints->addr_format = FI_ADDR_STR;
	hints->fabric_attr->prov_name = strdup("unet");
	hints->tx_attr->op_flags = FI_COMPLETION;
	hints->rx_attr->op_flags = FI_COMPLETION;
	hints->mode = FI_CONTEXT;
	CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info));
	if (strcmp(info->fabric_attr->prov_name, "unet") != 0)
		die("got provider %s", info->fabric_attr->prov_name);
	inject_size = info->tx_attr->inject_size;
	printf("provider %s domain %s inject_size %zu max_msg_size %zu\n",
	       info->fabric_attr->prov_name, info->domain_attr->name, inject_size,
	       info->ep_attr->max_msg_size);
	CHECK(fi_fabric(info->fabric_attr, &fabric, NULL));
	CHECK(fi_domain(fabric, info, &domain, NULL));
	CHECK(fi_endpoint(domain, info, &ep, NULL));
	cqa.wait_obj = blocking ? FI_WAIT_FD : FI_WAIT_NONE;
	CHECK(fi_cq_open(domain, &cqa, &cq, NULL));
	if (av_table)
		ava.type = FI_AV_TABLE;
	CHECK(fi_av_open(domain, &ava, &av, NULL));
	CHECK(fi_ep_bind(ep, &av->fid, 0));
	CHECK(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION));
	CHECK(fi_enable(ep));

	if (fi_getname(&ep->fid, NULL, &nl) != -FI_ETOOSMALL || nl == 0 || nl > sizeof(name))
		die("fi_getname(NULL) did not say -FI_ETOOSMALL with a length (len %zu)", nl);
	CHECK(fi_getname(&ep->fid, name, &nl));
	printf("name %s\n", name);
	write_file(me, name);
	read_file(peerf, pname, sizeof(pname));
	if (waitf) {
		char go[16];

		read_file(waitf, go, sizeof(go));
	}
	const char *names[2] = { pname, name };
	fi_addr_t addrs[2];
	if (late_av && server)
		phase_late_av();
	if (fi_av_insert(av, names, 2, addrs, 0, NULL) != 2)
		die("fi_av_insert of %s and %s failed", pname, name);
	peer = addrs[0];
	self_addr = addrs[1];
	if (av_table && (peer != 0 || self_addr != 1))
		die("FI_AV_TABLE gave addresses %llu and %llu, want 0 and 1",
		    (unsigned long long)peer, (unsigned long long)self_addr);
	{
		char s[128];
		size_t sl = sizeof(s);
		fi_av_straddr(av, pname, s, &sl);
		printf("peer %s\n", s);
	}

	if (late_av && !server)
		tsend(&late_word, 8, peer, TAG_MISC | 0xa1, NULL);
	if (blocking)
		check_wait_fd();
	uint64_t t0 = now_ms();
	barrier(1);
	if (holdf)
		hold(holdf);
	if (dead_peer)
		phase_dead(t0);
	phase_pingpong();
	barrier(2);
	phase_data();
	barrier(3);
	phase_msg();
	barrier(4);
	phase_unexpected();
	phase_directed();
	phase_ignore();
	phase_trunc();
	phase_cancel();
	phase_peek();
	phase_many();
	phase_zero();
	barrier(99);
	if (!no_idle) {
		if (blocking)
			check_idle();
		else
			check_poll_idle();
	}
	if (comps)
		die("completions nobody asked for are left (context %p)", comps->e.op_context);
	printf("ufi-test ok %s iters=%d blocking=%d sreads=%d ms=%llu\n",
	       server ? "server" : "client", iters, blocking, n_polls_blocked,
	       (unsigned long long)(now_ms() - t0));
	CHECK(fi_close(&ep->fid));
	CHECK(fi_close(&av->fid));
	CHECK(fi_close(&cq->fid));
	CHECK(fi_close(&domain->fid));
	CHECK(fi_close(&fabric->fid));
	fi_freeinfo(info);
	fi_freeinfo(hints);
	return 0;
}
