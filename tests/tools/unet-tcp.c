// SPDX-License-Identifier: BSD-2-Clause
/*
 * unet-tcp - TCP over U-Net test tool (unet_tcp.h), against kernel TCP
 * peers (tests/tools/tcp-peer.py, iperf3, the kernel).
 *
 *   unet-tcp IFACE --local ADDR MODE [options]
 *
 * Servers (print "ready endpoint=ID port=P" once listening):
 *   echo  --port P [--conns N] [--backlog B]   echo every connection
 *   sink  --port P [--conns N]                 read to EOF, check the
 *         pattern, answer "<bytes>\n", close
 *   idle  --port P                             accept, never read; at the
 *         end "idle conns=N heap_grew=B" (malloc's bytes in use, mallinfo2,
 *         at the end with the connections open, less after listen)
 * Clients:
 *   sizes  --remote A:P [--max M]   every write size 1..2048, then sampled
 *          to M (default 65536), each echoed back and compared
 *   source --remote A:P --bytes N   send N pattern bytes, shutdown, expect
 *          the sink's "<N>\n"
 *   conns  --remote A:P --count N [--bytes B]  N concurrent connections,
 *          each B bytes echoed and compared
 *   rr     --remote A:P [--count N] [--size S] [--block]  round trips:
 *          prints "rr p50_us=... p99_us=..."
 *   hold   --remote A:P             connect, send 1 MiB, then wait to be
 *          killed (SIGKILL tests)
 *   abort  --remote A:P             connect, send 100 bytes, wait 200 ms,
 *          reset the connection (unet_tcp__abort: lwIP sends RST)
 *   quiet  --remote A:P --bytes N   send N bytes (the window opens), wait
 *          until all are acknowledged, then one unet_tcp__send of 64 KiB
 *          and no library call for 3 s: prints "quiet total=T" (what the
 *          peer must hold by then: the frames of that last call must
 *          leave without a further call, layer.h unet_layer_queue)
 * iperf3 interop (iperf3's control protocol, one TCP stream, -n bytes):
 *   iperf-server --port P           serve one `iperf3 -c ADDR -p P -n N`:
 *          prints "iperf-server bytes=B num=N sent=S" (what arrived on the
 *          data stream, the -n asked for, what the client's results say
 *          it sent: at least N)
 *   iperf-client --remote A:P --bytes N  be `iperf3 -c -n N` against
 *          `iperf3 -s`: prints "iperf-client bytes=N server_bytes=B"
 * Common: [--xdp-mode native|skb] [--timeout S] (default 60): the whole
 * run must finish in S seconds; [--partial auto|accept|reject]: the
 * endpoint's policy for partial checksums (unet_tcp_opts.partial_csum);
 * [--segment-mib M]: the endpoint's segment (default 32; below 32 with
 * the default rings: a direct grant under an 8 MiB locked-memory limit);
 * [--no-tx-csum-offload]: an endpoint without room for TX metadata
 * (unet_endpoint_opts.no_tx_csum_offload; "endpoint tx_csum_offload=0|1"
 * says what it got).  At exit: "epstats k=v ..." and "tcpstats k=v ..."
 * (the endpoint's counters).  Exit 0 on success.
 *
 * The stream pattern: byte i of a connection is (i + seed) % 251.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <unet-xdp/unet.h>
#include <unet-xdp/unet_tcp.h>

#define BACKLOG_CAP 2048 /* connections a server tool serves at once */

static volatile sig_atomic_t stop;
static uint64_t deadline_ms;
static struct unet_endpoint *ep;
static enum unet_tcp_partial partial; /* --partial */

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void on_log(enum unet_log_level l, const char *msg, void *ctx)
{
	(void)ctx;
	if (l <= UNET_LOG_WARN)
		fprintf(stderr, "unet-tcp: libunet: %s\n", msg);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool late(void)
{
	return stop || now_ms() > deadline_ms;
}

static int left_ms(void)
{
	uint64_t n = now_ms();

	return n >= deadline_ms ? 0 : (int)(deadline_ms - n);
}

static void pattern(uint8_t *p, size_t len, uint64_t off, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)((off + i + seed) % 251);
}

/* Offset of the first byte of p that is not the pattern, or len. */
static size_t pattern_check(const uint8_t *p, size_t len, uint64_t off, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != (uint8_t)((off + i + seed) % 251))
			return i;
	return len;
}

static void print_stats(void)
{
	struct unet_endpoint_stats es;
	struct unet_tcp_stats s;

	if (ep && !unet_endpoint__stats(ep, &es))
		printf("epstats rx_dropped=%llu rx_bad_pieces=%llu rx_no_jumbo_slot=%llu\n",
		       (unsigned long long)es.rx_dropped, (unsigned long long)es.rx_bad_pieces,
		       (unsigned long long)es.rx_no_jumbo_slot);
	if (!ep || unet_tcp__stats(ep, &s))
		return;
	printf("tcpstats rx_frames=%llu rx_arp=%llu rx_not_ours=%llu rx_malformed=%llu "
	       "rx_syn_dropped=%llu accept_refused=%llu tx_frames=%llu tx_busy=%llu "
	       "tx_unresolved=%llu arp_requests=%llu connections=%llu rx_bad_csum=%llu "
	       "rx_partial_csum=%llu rx_partial_refused=%llu rx_no_conn=%llu "
	       "rx_out_of_window=%llu rx_nomem=%llu rx_gso=%llu rx_syn_cookies=%llu "
	       "syn_cookie_conns=%llu rx_ooseq_dropped=%llu rx_mem_dropped=%llu\n",
	       (unsigned long long)s.rx_frames, (unsigned long long)s.rx_arp,
	       (unsigned long long)s.rx_not_ours, (unsigned long long)s.rx_malformed,
	       (unsigned long long)s.rx_syn_dropped, (unsigned long long)s.accept_refused,
	       (unsigned long long)s.tx_frames, (unsigned long long)s.tx_busy,
	       (unsigned long long)s.tx_unresolved, (unsigned long long)s.arp_requests,
	       (unsigned long long)s.connections, (unsigned long long)s.rx_bad_csum,
	       (unsigned long long)s.rx_partial_csum, (unsigned long long)s.rx_partial_refused,
	       (unsigned long long)s.rx_no_conn, (unsigned long long)s.rx_out_of_window,
	       (unsigned long long)s.rx_nomem, (unsigned long long)s.rx_gso,
	       (unsigned long long)s.rx_syn_cookies, (unsigned long long)s.syn_cookie_conns,
	       (unsigned long long)s.rx_ooseq_dropped, (unsigned long long)s.rx_mem_dropped);
}

/* Send all of len bytes (blocking, bounded by the run's deadline). */
static int send_all(struct unet_tcp *c, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = unet_tcp__send(c, p, len, left_ms() ? left_ms() : 1);

		if (n < 0)
			return (int)n;
		p += n;
		len -= (size_t)n;
		if (late())
			return -ETIMEDOUT;
	}
	return 0;
}

static int recv_all(struct unet_tcp *c, uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = unet_tcp__recv(c, p, len, left_ms() ? left_ms() : 1);

		if (n == 0)
			return -EPIPE;
		if (n < 0)
			return (int)n;
		p += n;
		len -= (size_t)n;
		if (late())
			return -ETIMEDOUT;
	}
	return 0;
}

/* ---- Servers ---------------------------------------------------------------- */

struct sconn {
	struct unet_tcp *c;
	uint8_t *out; /* echo: bytes to send back; sink: the answer */
	size_t olen, ooff;
	uint64_t got;
	bool bad, eof;
};

/* Accept and never read, until the run ends (memory held for peers). */
static int idle(uint32_t laddr, uint16_t port)
{
	UNET_OPTS_INIT(unet_tcp_opts, o);
	struct unet_tcp *l, *cs[64];
	struct unet_endpoint_info info;
	unsigned int n = 0;
	size_t heap0;

	o.partial_csum = partial;
	l = unet_tcp__listen(ep, laddr, port, &o);
	if (!l) {
		fprintf(stderr, "unet-tcp: listen: %s\n", strerror(errno));
		return 1;
	}
	heap0 = mallinfo2().uordblks;
	unet_endpoint__info(ep, &info);
	printf("ready endpoint=%u port=%u\n", info.id, port);
	fflush(stdout);
	while (!late()) {
		struct unet_tcp *c;

		while (n < 64 && (c = unet_tcp__accept(l, 0)))
			cs[n++] = c;
		unet_endpoint__dispatch(ep, 20, 64);
	}
	printf("idle conns=%u heap_grew=%lld\n", n, (long long)mallinfo2().uordblks - (long long)heap0);
	while (n)
		unet_tcp__abort(cs[--n]);
	unet_tcp__close(l);
	return 0;
}

static int serve(uint32_t laddr, uint16_t port, bool echo, unsigned int nconns, uint32_t backlog)
{
	UNET_OPTS_INIT(unet_tcp_opts, o);
	struct sconn *cs = calloc(BACKLOG_CAP, sizeof(*cs));
	static uint8_t buf[65536];
	unsigned int n = 0, done = 0, errors = 0;
	uint64_t bytes = 0;
	struct unet_tcp *l;

	o.backlog = backlog;
	o.partial_csum = partial;
	l = unet_tcp__listen(ep, laddr, port, &o);
	if (!l || !cs) {
		fprintf(stderr, "unet-tcp: listen: %s\n", strerror(errno));
		return 1;
	}
	struct unet_endpoint_info info;

	unet_endpoint__info(ep, &info);
	printf("ready endpoint=%u port=%u\n", info.id, port);
	fflush(stdout);
	while (!late() && (!nconns || done < nconns)) {
		bool progress = false;
		struct unet_tcp *c;

		while (n < BACKLOG_CAP && (c = unet_tcp__accept(l, 0))) {
			memset(&cs[n], 0, sizeof(cs[n]));
			cs[n++].c = c;
			progress = true;
		}
		for (unsigned int i = 0; i < n; i++) {
			struct sconn *s = &cs[i];
			ssize_t r;

			if (s->olen > s->ooff) {
				r = unet_tcp__send(s->c, s->out + s->ooff, s->olen - s->ooff, 0);
				if (r > 0) {
					s->ooff += (size_t)r;
					progress = true;
				} else if (r != -EAGAIN) {
					errors++;
					goto drop;
				}
				if (s->olen > s->ooff || !s->eof)
					continue;
				goto drop; /* sink: answer sent */
			}
			r = unet_tcp__recv(s->c, buf, sizeof(buf), 0);
			if (r == -EAGAIN)
				continue;
			progress = true;
			if (r > 0) {
				if (!echo && pattern_check(buf, (size_t)r, s->got, 0) != (size_t)r)
					s->bad = true;
				s->got += (uint64_t)r;
				bytes += (uint64_t)r;
				if (echo) {
					free(s->out);
					s->out = malloc((size_t)r);
					memcpy(s->out, buf, (size_t)r);
					s->olen = (size_t)r;
					s->ooff = 0;
				}
				continue;
			}
			if (r == 0 && !echo) {
				char a[32];

				s->eof = true;
				snprintf(a, sizeof(a), "%llu%s\n", (unsigned long long)s->got,
					 s->bad ? " bad" : "");
				free(s->out);
				s->out = (uint8_t *)strdup(a);
				s->olen = strlen(a);
				s->ooff = 0;
				continue;
			}
			if (r < 0)
				errors++;
drop:
			unet_tcp__close(s->c);
			free(s->out);
			cs[i--] = cs[--n];
			done++;
		}
		if (!progress)
			unet_endpoint__dispatch(ep, 20, 64);
	}
	for (unsigned int i = 0; i < n; i++) {
		unet_tcp__close(cs[i].c);
		free(cs[i].out);
	}
	free(cs);
	unet_tcp__close(l);
	printf("%s conns=%u bytes=%llu errors=%u\n", echo ? "echo" : "sink", done,
	       (unsigned long long)bytes, errors);
	return nconns && done < nconns ? 1 : 0;
}

/* ---- Clients ---------------------------------------------------------------- */

static struct unet_tcp *dial(uint32_t laddr, uint32_t raddr, uint16_t rport)
{
	UNET_OPTS_INIT(unet_tcp_opts, o);
	struct unet_tcp *c;

	o.partial_csum = partial;
	c = unet_tcp__connect(ep, laddr, raddr, rport, &o, 10000);

	if (!c)
		fprintf(stderr, "unet-tcp: connect: %s\n", strerror(errno));
	return c;
}

static int do_sizes(struct unet_tcp *c, size_t max)
{
	uint8_t *out = malloc(max), *in = malloc(max);
	size_t size = 1, count = 0;
	uint64_t off = 0;
	int err = 0;

	if (!out || !in)
		return 1;
	while (size <= max && !err) {
		pattern(out, size, off, 0);
		err = send_all(c, out, size);
		if (!err)
			err = recv_all(c, in, size);
		if (!err && memcmp(in, out, size)) {
			fprintf(stderr, "unet-tcp: size %zu: echo differs at %zu\n", size,
				pattern_check(in, size, off, 0));
			err = -EBADMSG;
		}
		off += size;
		count++;
		/* every size to 2048, then a sample (primes apart, so every
		 * residue modulo the MSS shows up), and the largest */
		if (size < 2048)
			size++;
		else if (size < max)
			size = size + 997 > max ? max : size + 997;
		else
			break;
	}
	if (err) {
		fprintf(stderr, "unet-tcp: sizes failed at %zu: %s\n", size, strerror(-err));
		return 1;
	}
	printf("sizes ok %zu sizes 1..%zu bytes=%llu\n", count, max, (unsigned long long)off);
	free(out);
	free(in);
	return 0;
}

static int do_quiet(struct unet_tcp *c, uint64_t bytes)
{
	static uint8_t buf[65536];
	uint64_t sent = 0;
	ssize_t n;
	int err = 0;

	while (sent < bytes && !err) {
		size_t k = bytes - sent > sizeof(buf) ? sizeof(buf) : (size_t)(bytes - sent);

		pattern(buf, k, sent, 0);
		err = send_all(c, buf, k);
		sent += k;
	}
	while (!err && unet_tcp__unacked(c) && !late())
		unet_endpoint__dispatch(ep, 10, 64);
	if (err || unet_tcp__unacked(c))
		return 1;
	pattern(buf, 65535, sent, 0);
	n = unet_tcp__send(c, buf, 65535, 0);
	if (n < 0)
		return 1;
	printf("quiet total=%llu last=%zd\n", (unsigned long long)(sent + (uint64_t)n), n);
	fflush(stdout);
	sleep(3);
	return 0;
}

static int do_source(struct unet_tcp *c, uint64_t bytes)
{
	static uint8_t buf[65536 + 251];
	uint64_t sent = 0, t0 = now_ns();
	char ans[64] = { 0 };
	size_t alen = 0;
	int err = 0;

	pattern(buf, sizeof(buf), 0, 0);
	while (sent < bytes && !err) {
		size_t n = bytes - sent > 65536 ? 65536 : (size_t)(bytes - sent);

		err = send_all(c, buf + sent % 251, n);
		sent += n;
	}
	if (!err)
		err = unet_tcp__shutdown(c);
	while (!err && alen < sizeof(ans) - 1) {
		ssize_t r = unet_tcp__recv(c, ans + alen, sizeof(ans) - 1 - alen, left_ms());

		if (r <= 0) {
			err = r < 0 ? (int)r : 0;
			break;
		}
		alen += (size_t)r;
	}
	double s = (double)(now_ns() - t0) / 1e9;

	if (err || strtoull(ans, NULL, 10) != bytes || strstr(ans, "bad")) {
		fprintf(stderr, "unet-tcp: source: sent %llu, peer says '%s' (%s)\n",
			(unsigned long long)sent, ans, err ? strerror(-err) : "");
		return 1;
	}
	printf("source ok bytes=%llu MBps=%.1f\n", (unsigned long long)bytes, bytes / s / 1e6);
	return 0;
}

static int do_conns(uint32_t laddr, uint32_t raddr, uint16_t rport, unsigned int count,
		    size_t bytes)
{
	struct cc {
		struct unet_tcp *c;
		size_t sent, got;
		bool ok;
	} *cs = calloc(count, sizeof(*cs));
	uint8_t *in = malloc(bytes), *out = malloc(bytes + 251);
	unsigned int ok = 0, started = 0;

	if (!cs || !in || !out)
		return 1;
	pattern(out, bytes + 251, 0, 0);
	for (unsigned int i = 0; i < count; i++) {
		UNET_OPTS_INIT(unet_tcp_opts, o);

		o.partial_csum = partial;
		cs[i].c = unet_tcp__connect(ep, laddr, raddr, rport, &o, 0);
		if (!cs[i].c) {
			fprintf(stderr, "unet-tcp: connect %u: %s\n", i, strerror(errno));
			break;
		}
		started++;
	}
	while (!late() && ok < started) {
		bool progress = false;

		for (unsigned int i = 0; i < started; i++) {
			struct cc *c = &cs[i];
			ssize_t r;

			if (c->ok || !c->c)
				continue;
			if (c->sent < bytes) {
				r = unet_tcp__send(c->c, out + (i + c->sent) % 251, bytes - c->sent, 0);
				if (r > 0) {
					/* connection i's stream is the pattern with seed i */
					c->sent += (size_t)r;
					progress = true;
				} else if (r != -EAGAIN) {
					fprintf(stderr, "unet-tcp: conn %u send: %s\n", i, strerror((int)-r));
					goto out;
				}
			}
			r = unet_tcp__recv(c->c, in, bytes - c->got, 0);
			if (r > 0) {
				if (pattern_check(in, (size_t)r, c->got, i) != (size_t)r) {
					fprintf(stderr, "unet-tcp: conn %u: wrong data\n", i);
					goto out;
				}
				c->got += (size_t)r;
				progress = true;
				if (c->got == bytes) {
					c->ok = true;
					ok++;
				}
			} else if (r != -EAGAIN) {
				fprintf(stderr, "unet-tcp: conn %u recv: %zd\n", i, r);
				goto out;
			}
		}
		if (!progress)
			unet_endpoint__dispatch(ep, 20, 64);
	}
out:
	for (unsigned int i = 0; i < started; i++)
		unet_tcp__close(cs[i].c);
	printf("conns ok=%u of %u bytes=%zu\n", ok, count, bytes);
	free(cs);
	free(in);
	free(out);
	return ok == count ? 0 : 1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int do_rr(struct unet_tcp *c, unsigned int count, size_t size, bool block)
{
	uint64_t *t = calloc(count, sizeof(*t));
	uint8_t buf[4096];
	int err = 0;

	if (!t || size > sizeof(buf))
		return 1;
	memset(buf, 'r', size);
	for (unsigned int i = 0; i < count + 100 && !err; i++) {
		uint64_t t0 = now_ns();
		size_t got = 0;

		err = send_all(c, buf, size);
		while (!err && got < size) {
			ssize_t r = unet_tcp__recv(c, buf + got, size - got, block ? left_ms() : 0);

			if (r == -EAGAIN && !late())
				continue;
			if (r <= 0)
				err = r ? (int)r : -EPIPE;
			else
				got += (size_t)r;
		}
		if (i >= 100)
			t[i - 100] = now_ns() - t0;
	}
	if (err) {
		fprintf(stderr, "unet-tcp: rr: %s\n", strerror(-err));
		return 1;
	}
	qsort(t, count, sizeof(*t), cmp_u64);
	printf("rr count=%u size=%zu p50_us=%.1f p99_us=%.1f\n", count, size,
	       t[count / 2] / 1e3, t[count * 99 / 100] / 1e3);
	free(t);
	return 0;
}

/* ---- iperf3's control protocol (one TCP stream, bytes mode) ---------------
 * Control connection: the client sends a 37-byte cookie; the server
 * answers with one-byte states: PARAM_EXCHANGE (the client sends its
 * parameters, a 4-byte big-endian length and JSON), CREATE_STREAMS (the
 * client opens the data connection and sends the cookie on it),
 * TEST_START, TEST_RUNNING; the client sends the data, then TEST_END;
 * the server sends EXCHANGE_RESULTS, both exchange results as
 * length-prefixed JSON (client first), the server sends DISPLAY_RESULTS,
 * the client IPERF_DONE. */
enum { IP_TEST_START = 1, IP_TEST_RUNNING = 2, IP_TEST_END = 4, IP_PARAM_EXCHANGE = 9,
       IP_CREATE_STREAMS = 10, IP_EXCHANGE_RESULTS = 13, IP_DISPLAY_RESULTS = 14,
       IP_IPERF_DONE = 16 };
#define IP_COOKIE 37

static int ip_state_send(struct unet_tcp *c, uint8_t st)
{
	return send_all(c, &st, 1);
}

static int ip_state_expect(struct unet_tcp *c, uint8_t want)
{
	uint8_t st;
	int err = recv_all(c, &st, 1);

	if (!err && st != want) {
		fprintf(stderr, "unet-tcp: iperf3 sent state %d, expected %d\n", (int8_t)st, want);
		return -EPROTO;
	}
	return err;
}

static int ip_json_send(struct unet_tcp *c, const char *json)
{
	uint32_t n = htonl((uint32_t)strlen(json));
	int err = send_all(c, (const uint8_t *)&n, 4);

	return err ? err : send_all(c, (const uint8_t *)json, strlen(json));
}

/* Read one length-prefixed JSON message into buf (NUL-terminated). */
static int ip_json_recv(struct unet_tcp *c, char *buf, size_t cap)
{
	uint32_t n;
	int err = recv_all(c, (uint8_t *)&n, 4);

	if (err)
		return err;
	n = ntohl(n);
	if (n >= cap)
		return -EMSGSIZE;
	err = recv_all(c, (uint8_t *)buf, n);
	buf[err ? 0 : n] = '\0';
	return err;
}

static unsigned long long json_u64(const char *json, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(json, k);
	return p ? strtoull(p + strlen(k), NULL, 10) : 0;
}

static void ip_results(char *buf, size_t cap, unsigned long long bytes, double secs)
{
	snprintf(buf, cap,
		 "{\"cpu_util_total\":0,\"cpu_util_user\":0,\"cpu_util_system\":0,"
		 "\"sender_has_retransmits\":-1,\"streams\":[{\"id\":1,\"bytes\":%llu,"
		 "\"retransmits\":-1,\"jitter\":0,\"errors\":0,\"packets\":0,"
		 "\"start_time\":0,\"end_time\":%.6f}]}",
		 bytes, secs);
}

/* One read of the iperf data stream into buf, added to *got (*eof at its
 * end); with nothing there, one round of the endpoint's progress.
 * Returns 0 or -errno. */
static int ip_data_step(struct unet_tcp *data, uint8_t *buf, size_t cap, unsigned long long *got,
			bool *eof)
{
	ssize_t r = unet_tcp__recv(data, buf, cap, 0);

	if (r > 0) {
		*got += (unsigned long long)r;
		return 0;
	}
	if (r == 0)
		*eof = true;
	else if (r != -EAGAIN)
		return (int)r;
	unet_endpoint__dispatch(ep, 10, 64);
	return 0;
}

static int iperf_server(uint32_t laddr, uint16_t port)
{
	UNET_OPTS_INIT(unet_tcp_opts, o);
	uint8_t cookie[IP_COOKIE], cookie2[IP_COOKIE];
	static uint8_t buf[65536];
	static char json[65536];
	struct unet_tcp *l, *ctrl = NULL, *data = NULL;
	unsigned long long num, got = 0, sent = 0;
	struct unet_endpoint_info info;
	bool ended = false, eof = false;
	uint64_t t0, end_by = 0;
	int err;

	o.backlog = 8;
	o.partial_csum = partial;
	l = unet_tcp__listen(ep, laddr, port, &o);
	if (!l) {
		fprintf(stderr, "unet-tcp: listen: %s\n", strerror(errno));
		return 1;
	}
	unet_endpoint__info(ep, &info);
	printf("ready endpoint=%u port=%u\n", info.id, port);
	ctrl = unet_tcp__accept(l, left_ms());
	err = ctrl ? recv_all(ctrl, cookie, IP_COOKIE) : -errno;
	if (!err)
		err = ip_state_send(ctrl, IP_PARAM_EXCHANGE);
	if (!err)
		err = ip_json_recv(ctrl, json, sizeof(json));
	num = json_u64(json, "num");
	if (!err)
		err = ip_state_send(ctrl, IP_CREATE_STREAMS);
	if (!err) {
		data = unet_tcp__accept(l, left_ms());
		err = data ? recv_all(data, cookie2, IP_COOKIE) : -errno;
	}
	if (!err && memcmp(cookie, cookie2, IP_COOKIE))
		err = -EPROTO;
	if (!err)
		err = ip_state_send(ctrl, IP_TEST_START);
	if (!err)
		err = ip_state_send(ctrl, IP_TEST_RUNNING);
	t0 = now_ns();
	/* Data until TEST_END. */
	while (!err && !late() && !ended) {
		uint8_t st;
		ssize_t r;

		err = ip_data_step(data, buf, sizeof(buf), &got, &eof);
		r = unet_tcp__recv(ctrl, &st, 1, 0);
		if (r == 1 && st == IP_TEST_END)
			ended = true;
		else if (r != -EAGAIN && !err)
			err = r < 0 ? (int)r : -EPROTO;
	}
	if (!err)
		err = ip_state_send(ctrl, IP_EXCHANGE_RESULTS);
	if (!err)
		err = ip_json_recv(ctrl, json, sizeof(json)); /* the client's results */
	/* Then what is still in flight, up to what the client says it sent
	 * (iperf3 -n N sends at least N: now and then one block more), for
	 * at most 2 s: every byte the client sent is counted. */
	sent = err ? 0 : json_u64(json, "bytes");
	end_by = now_ms() + 2000;
	while (!err && !late() && !eof && got < sent && now_ms() <= end_by)
		err = ip_data_step(data, buf, sizeof(buf), &got, &eof);
	if (!err) {
		ip_results(json, sizeof(json), got, (now_ns() - t0) / 1e9);
		err = ip_json_send(ctrl, json);
	}
	if (!err)
		err = ip_state_send(ctrl, IP_DISPLAY_RESULTS);
	if (!err)
		err = ip_state_expect(ctrl, IP_IPERF_DONE);
	printf("iperf-server bytes=%llu num=%llu sent=%llu%s%s\n", got, num, sent, err ? " error " : "",
	       err ? strerror(-err) : "");
	unet_tcp__close(data);
	unet_tcp__close(ctrl);
	unet_tcp__close(l);
	for (int i = 0; i < 20; i++)
		unet_endpoint__dispatch(ep, 10, 64);
	return err ? 1 : 0;
}

static int iperf_client(uint32_t laddr, uint32_t raddr, uint16_t rport, unsigned long long bytes)
{
	static uint8_t buf[65536 + 251];
	static char json[65536];
	uint8_t cookie[IP_COOKIE];
	struct unet_tcp *ctrl, *data = NULL;
	unsigned long long sent = 0, server_bytes = 0;
	uint64_t t0;
	int err;

	for (int i = 0; i < IP_COOKIE - 1; i++)
		cookie[i] = (uint8_t)('a' + (now_ns() / (i + 1) + (unsigned)i * 7) % 26);
	cookie[IP_COOKIE - 1] = 0;
	ctrl = dial(laddr, raddr, rport);
	if (!ctrl)
		return 1;
	err = send_all(ctrl, cookie, IP_COOKIE);
	if (!err)
		err = ip_state_expect(ctrl, IP_PARAM_EXCHANGE);
	snprintf(json, sizeof(json),
		 "{\"tcp\":true,\"omit\":0,\"time\":0,\"num\":%llu,\"blockcount\":0,"
		 "\"parallel\":1,\"len\":131072,\"pacing_timer\":1000,"
		 "\"client_version\":\"3.12\"}", bytes);
	if (!err)
		err = ip_json_send(ctrl, json);
	if (!err)
		err = ip_state_expect(ctrl, IP_CREATE_STREAMS);
	if (!err) {
		data = dial(laddr, raddr, rport);
		err = data ? send_all(data, cookie, IP_COOKIE) : -ECONNREFUSED;
	}
	if (!err)
		err = ip_state_expect(ctrl, IP_TEST_START);
	if (!err)
		err = ip_state_expect(ctrl, IP_TEST_RUNNING);
	pattern(buf, sizeof(buf), 0, 0);
	t0 = now_ns();
	while (!err && sent < bytes) {
		size_t n = bytes - sent > 65536 ? 65536 : (size_t)(bytes - sent);

		err = send_all(data, buf + sent % 251, n);
		sent += n;
	}
	/* All acknowledged, and a moment for iperf3 to read it, before
	 * TEST_END: iperf3 stops reading its data streams at TEST_END. */
	while (!err && unet_tcp__unacked(data) && !late())
		unet_endpoint__dispatch(ep, 5, 64);
	double secs = (now_ns() - t0) / 1e9;

	for (int i = 0; !err && i < 20; i++)
		unet_endpoint__dispatch(ep, 10, 64);
	if (!err)
		err = ip_state_send(ctrl, IP_TEST_END);
	if (!err)
		err = ip_state_expect(ctrl, IP_EXCHANGE_RESULTS);
	if (!err) {
		ip_results(json, sizeof(json), sent, secs);
		err = ip_json_send(ctrl, json);
	}
	if (!err)
		err = ip_json_recv(ctrl, json, sizeof(json));
	if (!err)
		server_bytes = json_u64(strstr(json, "\"streams\"") ? strstr(json, "\"streams\"") : json,
					"bytes");
	if (!err)
		err = ip_state_expect(ctrl, IP_DISPLAY_RESULTS);
	if (!err)
		err = ip_state_send(ctrl, IP_IPERF_DONE);
	printf("iperf-client bytes=%llu server_bytes=%llu MBps=%.1f%s%s\n", sent, server_bytes,
	       sent / secs / 1e6, err ? " error " : "", err ? strerror(-err) : "");
	unet_tcp__close(data);
	unet_tcp__close(ctrl);
	for (int i = 0; i < 20; i++)
		unet_endpoint__dispatch(ep, 10, 64);
	return err || server_bytes != bytes ? 1 : 0;
}

/* ---- main ------------------------------------------------------------------- */

static int parse_hostport(const char *s, uint32_t *a, uint16_t *p)
{
	char buf[64], *colon;
	struct in_addr ia;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	colon = strchr(buf, ':');
	if (colon)
		*colon = '\0';
	if (inet_pton(AF_INET, buf, &ia) != 1)
		return -1;
	*a = ia.s_addr;
	if (p)
		*p = colon ? (uint16_t)atoi(colon + 1) : 0;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "local", 1, 0, 'l' }, { "remote", 1, 0, 'r' }, { "port", 1, 0, 'p' },
		{ "conns", 1, 0, 'n' }, { "count", 1, 0, 'n' }, { "backlog", 1, 0, 'B' },
		{ "max", 1, 0, 'm' },	{ "bytes", 1, 0, 'b' },	 { "size", 1, 0, 's' },
		{ "block", 0, 0, 'k' }, { "xdp-mode", 1, 0, 'x' }, { "timeout", 1, 0, 't' },
		{ "partial", 1, 0, 'P' }, { "segment-mib", 1, 0, 'S' },
		{ "no-tx-csum-offload", 0, 0, 'O' }, { 0, 0, 0, 0 }
	};
	UNET_OPTS_INIT(unet_endpoint_opts, eo);
	uint32_t laddr = 0, raddr = 0, backlog = 0;
	uint16_t port = 0, rport = 0;
	unsigned long long bytes = 0;
	unsigned int count = 0;
	size_t max = 65536, size = 64;
	bool block = false;
	int timeout = 60, opt, rc = 2;
	unsigned int segment_mib = 32;
	const char *ifname, *mode;
	struct unet_tcp *c = NULL;

	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (opt) {
		case 'l': if (parse_hostport(optarg, &laddr, NULL)) return 2; break;
		case 'r': if (parse_hostport(optarg, &raddr, &rport)) return 2; break;
		case 'p': port = (uint16_t)atoi(optarg); break;
		case 'n': count = (unsigned int)atoi(optarg); break;
		case 'B': backlog = (uint32_t)atoi(optarg); break;
		case 'm': max = strtoul(optarg, NULL, 0); break;
		case 'b': bytes = strtoull(optarg, NULL, 0); break;
		case 's': size = strtoul(optarg, NULL, 0); break;
		case 'k': block = true; break;
		case 'x': eo.mode = !strcmp(optarg, "skb") ? UNET_XDP_MODE_SKB : UNET_XDP_MODE_NATIVE; break;
		case 't': timeout = atoi(optarg); break;
		case 'S': segment_mib = (unsigned int)atoi(optarg); break;
		case 'O': eo.no_tx_csum_offload = true; break;
		case 'P':
			partial = !strcmp(optarg, "accept")   ? UNET_TCP_PARTIAL_ACCEPT :
				  !strcmp(optarg, "reject") ? UNET_TCP_PARTIAL_REJECT :
							      UNET_TCP_PARTIAL_AUTO;
			break;
		default: return 2;
		}
	}
	if (optind + 2 != argc || !laddr) {
		fprintf(stderr, "usage: unet-tcp IFACE --local ADDR {echo|sink|sizes|source|conns|rr|hold} ...\n");
		return 2;
	}
	ifname = argv[optind];
	mode = argv[optind + 1];
	deadline_ms = now_ms() + (uint64_t)timeout * 1000;
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGPIPE, SIG_IGN);
	unet_set_log_fn(on_log, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Room for 64 KiB windows each way on hundreds of connections; a
	 * smaller segment (a grant under an 8 MiB locked-memory limit) keeps
	 * the default rings. */
	eo.segment_size = segment_mib << 20;
	if (segment_mib >= 32)
		eo.rx_size = eo.fill_size = 4096;
	ep = unet_endpoint__create(ifname, &eo);
	if (!ep) {
		fprintf(stderr, "unet-tcp: endpoint on %s: %s\n", ifname, strerror(errno));
		return 1;
	}
	{
		struct unet_endpoint_info info;

		if (!unet_endpoint__info(ep, &info))
			printf("endpoint tx_csum_offload=%d\n", info.tx_csum_offload);
	}
	if (!strcmp(mode, "iperf-server")) {
		rc = iperf_server(laddr, port);
	} else if (!strcmp(mode, "iperf-client") && raddr && rport) {
		rc = iperf_client(laddr, raddr, rport, bytes);
	} else if (!strcmp(mode, "idle")) {
		rc = idle(laddr, port);
	} else if (!strcmp(mode, "echo") || !strcmp(mode, "sink")) {
		rc = serve(laddr, port, !strcmp(mode, "echo"), count, backlog);
	} else if (!raddr || !rport) {
		fprintf(stderr, "unet-tcp: %s needs --remote ADDR:PORT\n", mode);
	} else if (!strcmp(mode, "conns")) {
		rc = do_conns(laddr, raddr, rport, count ? count : 256, bytes ? (size_t)bytes : 4096);
	} else if ((c = dial(laddr, raddr, rport))) {
		if (!strcmp(mode, "sizes"))
			rc = do_sizes(c, max);
		else if (!strcmp(mode, "source"))
			rc = do_source(c, bytes);
		else if (!strcmp(mode, "quiet"))
			rc = do_quiet(c, bytes);
		else if (!strcmp(mode, "rr"))
			rc = do_rr(c, count ? count : 10000, size, block);
		else if (!strcmp(mode, "abort")) {
			static const uint8_t msg[100];

			rc = send_all(c, msg, sizeof(msg)) ? 1 : 0;
			for (int i = 0; i < 20; i++)
				unet_endpoint__dispatch(ep, 10, 64);
			unet_tcp__abort(c);
			c = NULL;
			printf("aborted\n");
		} else if (!strcmp(mode, "hold")) {
			static uint8_t buf[1 << 20];

			rc = send_all(c, buf, sizeof(buf)) ? 1 : 0;
			printf("holding\n");
			while (!late())
				unet_endpoint__dispatch(ep, 100, 64);
		}
		unet_tcp__close(c);
		/* let the FIN go out before the endpoint goes */
		for (int i = 0; i < 20; i++)
			unet_endpoint__dispatch(ep, 10, 64);
	} else {
		rc = 1;
	}
	print_stats();
	unet_endpoint__destroy(ep);
	return rc;
}
