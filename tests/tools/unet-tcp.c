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
 * Common: [--xdp-mode native|skb] [--timeout S] (default 60): the whole
 * run must finish in S seconds.  At exit: "tcpstats k=v ..." (the
 * endpoint's counters).  Exit 0 on success.
 *
 * The stream pattern: byte i of a connection is (i + seed) % 251.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
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
	struct unet_tcp_stats s;

	if (!ep || unet_tcp__stats(ep, &s))
		return;
	printf("tcpstats rx_frames=%llu rx_arp=%llu rx_not_ours=%llu rx_malformed=%llu "
	       "rx_syn_dropped=%llu accept_refused=%llu tx_frames=%llu tx_busy=%llu "
	       "tx_unresolved=%llu arp_requests=%llu connections=%llu\n",
	       (unsigned long long)s.rx_frames, (unsigned long long)s.rx_arp,
	       (unsigned long long)s.rx_not_ours, (unsigned long long)s.rx_malformed,
	       (unsigned long long)s.rx_syn_dropped, (unsigned long long)s.accept_refused,
	       (unsigned long long)s.tx_frames, (unsigned long long)s.tx_busy,
	       (unsigned long long)s.tx_unresolved, (unsigned long long)s.arp_requests,
	       (unsigned long long)s.connections);
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

static int serve(uint32_t laddr, uint16_t port, bool echo, unsigned int nconns, uint32_t backlog)
{
	UNET_OPTS_INIT(unet_tcp_opts, o);
	struct sconn *cs = calloc(BACKLOG_CAP, sizeof(*cs));
	static uint8_t buf[65536];
	unsigned int n = 0, done = 0, errors = 0;
	uint64_t bytes = 0;
	struct unet_tcp *l;

	o.backlog = backlog;
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
			unet_endpoint__wait(ep, 20);
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
	struct unet_tcp *c = unet_tcp__connect(ep, laddr, raddr, rport, NULL, 10000);

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
		cs[i].c = unet_tcp__connect(ep, laddr, raddr, rport, NULL, 0);
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
			unet_endpoint__wait(ep, 20);
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
		{ 0, 0, 0, 0 }
	};
	UNET_OPTS_INIT(unet_endpoint_opts, eo);
	uint32_t laddr = 0, raddr = 0, backlog = 0;
	uint16_t port = 0, rport = 0;
	unsigned long long bytes = 0;
	unsigned int count = 0;
	size_t max = 65536, size = 64;
	bool block = false;
	int timeout = 60, opt, rc = 2;
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
	/* Room for 64 KiB windows each way on hundreds of connections. */
	eo.segment_size = 32u << 20;
	eo.rx_size = eo.fill_size = 4096;
	ep = unet_endpoint__create(ifname, &eo);
	if (!ep) {
		fprintf(stderr, "unet-tcp: endpoint on %s: %s\n", ifname, strerror(errno));
		return 1;
	}
	if (!strcmp(mode, "echo") || !strcmp(mode, "sink")) {
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
		else if (!strcmp(mode, "rr"))
			rc = do_rr(c, count ? count : 10000, size, block);
		else if (!strcmp(mode, "hold")) {
			static uint8_t buf[1 << 20];

			rc = send_all(c, buf, sizeof(buf)) ? 1 : 0;
			printf("holding\n");
			while (!late())
				unet_endpoint__wait(ep, 100);
		}
		unet_tcp__close(c);
		/* let the FIN go out before the endpoint goes */
		for (int i = 0; i < 20; i++)
			unet_endpoint__wait(ep, 10);
	} else {
		rc = 1;
	}
	print_stats();
	unet_endpoint__destroy(ep);
	return rc;
}
