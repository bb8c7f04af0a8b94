/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet-bench - round-trip latency and one-way rate of U-Net and of the
 * kernel's UDP and AF_PACKET paths, measured by one loop for all.
 *
 *   unet-bench echo     --transport T [opts] --mode spin|block|adaptive [--cpu N] [--timeout S] [--count N]
 *   unet-bench pingpong --transport T [opts] --size B --count N [--warmup W] --mode spin|block|adaptive
 *   unet-bench sink     --transport T [opts] --size B [--count N] --mode spin|block|adaptive [--idle-ms M]
 *   unet-bench source   --transport T [opts] --size B --count N [--batch K]
 *   unet-bench logp     --transport T [opts] --size B --count N   (peer: echo --mode spin)
 *   unet-bench bulk|calls --transport uam [opts] ... (see usage)
 *   (T: unet, uam, udp, udp-mmsg, packet)
 *
 * stdout carries exactly one JSON line per run (the result); progress and
 * errors go to stderr.  The exit status is 0 only for a complete run.
 * See usage() for the transports' options.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include <unet-xdp/unet.h>

#define PING_TIMEOUT_NS 1000000000ull	 /* a measured ping lost after 1 s */
#define WARMUP_TIMEOUT_NS 100000000ull	 /* a warm-up ping retried after 100 ms */
#define END_MARKERS 3			 /* end markers a source sends ... */
#define END_PAUSE_US 20000		 /* ... this far apart */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: unet-bench ROLE --transport unet|uam|udp|udp-mmsg|packet|unet-udp [OPTIONS]\n"
		"roles:\n"
		"  echo      reflect every message; ends after --count measured messages,\n"
		"            the client's last one, or --timeout\n"
		"  pingpong  --size B --count N [--warmup W]: round trips, one JSON line\n"
		"  sink      --size B [--count N] [--idle-ms M]: receive, one JSON line (rate)\n"
		"  source    --size B --count N [--batch K]: send as fast as possible, then an\n"
		"            end marker carrying the number sent\n"
		"  bulk      --bulk-bytes B --count N [--batch K] [--bulk-get] (uam): N stores\n"
		"            of B bytes into the peer's memory (--bulk-get: N gets of B bytes\n"
		"            from it), K in flight; the peer runs echo with the same --bulk-bytes\n"
		"  logp      --size B --count N: LogP overheads against a spinning echo: o_s\n"
		"            (a send call), o_r (a receive call with the message there), the\n"
		"            round trip, L = rtt/2 - o_s - o_r; one JSON line\n"
		"  calls     --size B --count N [--batch K] (uam): N calls (a message and\n"
		"            its echo), K in flight; calls per second\n"
		"  echo, pingpong --vs T --vs-tag T2 --vs-peer-tag P2 [--vs-block K]: a second\n"
		"            transport (unet, uam; same --iface and --peer, its own tags) in the\n"
		"            same run, spinning: the pingpong alternates K round trips (1000) on\n"
		"            each and prints both p50s and their ratio; the echo serves both.\n"
		"            The first transport takes queue 0, the second queues 1-2: the\n"
		"            interface needs three (veth: numtxqueues/numrxqueues 3)\n"
		"common:     --mode spin|block|adaptive  --cpu N  --timeout S (default 30)\n"
		"            --batch K (1..%d)  --spin-us US (adaptive: spin budget; unet, uam,\n"
		"            unet-udp: unet_endpoint__set_spin_us, default the library's;\n"
		"            udp, udp-mmsg: SO_BUSY_POLL, default 50)\n"
		"unet, uam:  --iface IF --tag T --peer MAC --peer-tag P [--channels N]\n"
		"            [--busy-poll USEC] [--queue-mask M] [--xdp-mode native|skb|auto]\n"
		"            [--segment BYTES] [--ring N] (unet: segment size, entries per ring)\n"
		"unet:       --peer-ip ADDR instead of --peer: routable channels (U-Net in\n"
		"            UDP/IPv4 to ADDR); with --vs the second transport's stay raw\n"
		"udp, udp-mmsg: --local IP:PORT --remote IP:PORT\n"
		"unet-udp:   --iface IF --local IP:PORT --remote IP:PORT [--queue-mask M]\n"
		"            [--busy-poll USEC] [--xdp-mode M]: UDP/IPv4 over U-Net\n"
		"udp, udp-mmsg, unet-udp: [IPV6]:PORT for both addresses: over IPv6\n"
		"unet-udp, unet-tcp: [--no-tx-csum-offload]: checksums in software even\n"
		"            where the device could compute them (AF_XDP TX metadata)\n"
		"packet:     --iface IF --peer MAC   (EtherType 0x88B6, TPACKET_V3 receive ring)\n"
		"uam:        Active Messages over the unet channel: up to 64 bytes as a short\n"
		"            request, up to the medium limit (1472 with no args at MTU 1500:\n"
		"            every size) as one medium request, longer (smaller MTUs) as\n"
		"            several\n"
		"sizes: %d..%d bytes on every transport; up to %d for unet source and sink\n"
		"(at a jumbo MTU: one frame in pieces)\n",
		BENCH_MAX_BATCH, BENCH_MIN_SIZE, BENCH_MAX_SIZE, BENCH_MAX_SIZE_JUMBO);
}

/* One-line error on stderr; returns 1 for `return die(...)`. */
static int die(const char *fmt, ...)
{
	va_list ap;

	fputs("unet-bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

/* ---- JSON: one line on stdout, one printing path for every role -------- */

static int json_n;

static void json_key(const char *k)
{
	printf("%s\"%s\":", json_n++ ? "," : "{", k);
}
static void json_str(const char *k, const char *v)
{
	json_key(k);
	printf("\"%s\"", v); /* our values are fixed names, nothing to escape */
}
static void json_int(const char *k, long long v)
{
	json_key(k);
	printf("%lld", v);
}
static void json_num(const char *k, double v, int prec)
{
	json_key(k);
	if (isfinite(v))
		printf("%.*f", prec, v);
	else
		printf("null");
}
static void json_null(const char *k)
{
	json_key(k);
	printf("null");
}
static void json_end(void)
{
	printf("}\n");
	fflush(stdout);
	json_n = 0;
}

/* ---- Options ------------------------------------------------------------ */

static int parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || *end || end == s || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static const struct bench_transport *find_transport(const char *name)
{
	static const struct bench_transport *all[] = { &bench_unet, &bench_uam, &bench_udp,
						       &bench_udp_mmsg, &bench_packet,
						       &bench_unet_udp, &bench_tcp, &bench_unet_tcp };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}

static const char *mode_name(const struct bench_opts *o)
{
	return o->mode == BENCH_SPIN ? "spin" : o->mode == BENCH_BLOCK ? "block" : "adaptive";
}

/* The JSON fields every role starts with. */
static void json_head(const char *test, const struct bench_opts *o)
{
	json_str("test", test);
	json_str("transport", o->transport);
	json_str("mode", mode_name(o));
	/* U-Net endpoints: whether sent checksums were the device's. */
	if (bench_unet_tx_csum >= 0)
		json_int("tx_csum_offload", bench_unet_tx_csum);
	if (strcmp(test, "echo")) /* the echo reflects whatever size comes */
		json_int("size", o->size);
}

/* How the run's receives waited: the spin budget and what the waits did
 * (U-Net endpoints), or the busy-polling socket's NAPI id (kernel UDP,
 * adaptive).  Nothing for a spinning run, which never waits. */
static void json_wait(const struct bench_opts *o)
{
	UNET_OPTS_INIT(unet_wait_stats, ws);
	long napi = bench_udp_napi_id();

	if (o->mode == BENCH_SPIN)
		return;
	if (bench_unet_wait_stats(&ws) == 0) {
		json_int("spin_us", ws.spin_us);
		json_int("waits", (long long)ws.waits);
		json_int("wait_spin_hits", (long long)ws.spin_hits);
		json_int("wait_sleeps", (long long)ws.sleeps);
		json_num("wait_spin_ms", (double)ws.spin_ns / 1e6, 3);
	}
	if (napi >= 0)
		json_int("napi_id", napi);
}

/* ---- echo --------------------------------------------------------------- */

/* A transport and its connection: the run's, or with --vs one of two. */
struct side {
	const struct bench_transport *t;
	struct bench_conn *c;
};

/* Reflect what comes on each side (two with --vs, polled in turn, which
 * is why --vs is refused unless spinning: a blocking receive on one side
 * would leave the other unserved). */
static int run_echo(const struct bench_opts *o, const struct side *sd, int nsides,
		    uint64_t deadline)
{
	struct bench_rx rx[BENCH_MAX_BATCH];
	struct bench_tx tx[BENCH_MAX_BATCH];
	long echoed = 0, all = 0;
	bool last = false;
	uint64_t cpu0 = 0;

	fprintf(stderr, "unet-bench: echo on %s%s%s (%s) ready\n", o->transport,
		nsides > 1 ? " and " : "", nsides > 1 ? o->vs_transport : "", mode_name(o));
	while (!last && !stop && (!o->count || echoed < o->count) && bench_now_ns() < deadline) {
		for (int s = 0; s < nsides && !last; s++) {
			const struct bench_transport *t = sd[s].t;
			int n = t->recv(sd[s].c, rx, (unsigned int)o->batch, o->mode != BENCH_SPIN);
			long k;

			if (n < 0)
				return die("echo: receive: %s", strerror(-n));
			for (int i = 0; i < n; i++) {
				struct bench_hdr h = bench_rx_hdr(&rx[i]);

				tx[i] = (struct bench_tx){ .data = rx[i].data, .len = rx[i].len };
				echoed += !(h.flags & BENCH_F_WARMUP);
				last |= !!(h.flags & BENCH_F_LAST);
			}
			if (n <= 0)
				continue;
			if (!all) /* CPU from the first message: not the wait for the client */
				cpu0 = bench_cpu_us();
			k = bench_send_all(t, sd[s].c, tx, (unsigned int)n, deadline, &stop);
			if (k < 0)
				return die("echo: send: %s", strerror((int)-k));
			all += k;
		}
	}
	for (int s = 0; s < nsides; s++)
		if (sd[s].t->flush)
			sd[s].t->flush(sd[s].c, 1000);
	json_head("echo", o);
	json_int("echoed", echoed);
	json_int("messages", all);
	json_num("cpu_us_per_msg", all ? (double)(bench_cpu_us() - cpu0) / (double)all : NAN, 3);
	json_wait(o);
	json_end();
	fprintf(stderr, "unet-bench: echo: %ld measured messages echoed (%ld in all), ended by %s\n",
		echoed, all, last ? "the client's last message" :
		o->count && echoed >= o->count ? "count" : stop ? "signal" : "timeout");
	/* Short of --count without the client's last message: a timeout. */
	return o->count && echoed < o->count && !last;
}

/* ---- pingpong ------------------------------------------------------------ */

/* Send one ping and wait for its echo until limit.  Returns 1 (echoed),
 * 0 (not in time), -errno.  Echoes of earlier, lost pings are dropped. */
static int ping(const struct bench_opts *o, const struct bench_transport *t,
		struct bench_conn *c, uint32_t seq, uint32_t flags, uint64_t limit)
{
	struct bench_tx tx = { .seq = seq, .flags = flags, .len = (uint32_t)o->size };
	long sent = bench_send_all(t, c, &tx, 1, limit, &stop);

	if (sent <= 0)
		return (int)sent;
	return bench_recv_seq(t, c, seq, o->mode != BENCH_SPIN, limit, &stop);
}

/* Warm-up pings until want of them were echoed: also waits for the echo
 * to come up, so its losses are retries, not results; at least one ping
 * is always sent.  Returns the number echoed (0: none by the deadline),
 * or -errno. */
static long warm_up(const struct bench_opts *o, const struct bench_transport *t,
		    struct bench_conn *c, uint32_t *seq, long want, uint64_t deadline)
{
	long warm = 0;

	while (warm < want && !stop && bench_now_ns() < deadline) {
		uint64_t lim = bench_now_ns() + WARMUP_TIMEOUT_NS;
		int r = ping(o, t, c, ++*seq, BENCH_F_WARMUP, lim < deadline ? lim : deadline);

		if (r < 0)
			return r;
		warm += r;
	}
	return warm;
}

/* One measured ping: its round trip into rtt[*done] (and *done + 1), or
 * *lost + 1 if no echo came in time.  Returns ping's result. */
static int timed_ping(const struct bench_opts *o, const struct bench_transport *t,
		      struct bench_conn *c, uint32_t *seq, uint64_t deadline, uint64_t *rtt,
		      long *done, long *lost)
{
	uint64_t t0 = bench_now_ns(), lim = t0 + PING_TIMEOUT_NS;
	int r = ping(o, t, c, ++*seq, 0, lim < deadline ? lim : deadline);

	if (r > 0)
		rtt[(*done)++] = bench_now_ns() - t0;
	else if (!r)
		(*lost)++;
	return r;
}

/* Tell the echo we are done (unmeasured, so it does not count): up to
 * three tries, each waiting briefly for the reflection. */
static void say_last(const struct bench_opts *o, const struct bench_transport *t,
		     struct bench_conn *c, uint32_t *seq)
{
	for (int i = 0; i < 3; i++) {
		uint64_t lim = bench_now_ns() + 50000000ull;

		if (ping(o, t, c, ++*seq, BENCH_F_WARMUP | BENCH_F_LAST, lim) != 0)
			break;
	}
}

static int run_pingpong(const struct bench_opts *o, const struct bench_transport *t,
			struct bench_conn *c, uint64_t deadline)
{
	uint64_t *rtt = calloc((size_t)o->count, sizeof(*rtt));
	long warm, done = 0, lost = 0;
	uint32_t seq = 0;
	uint64_t cpu0, cpu1;
	int r = 0;

	if (!rtt)
		return die("out of memory for %ld samples", o->count);
	fprintf(stderr, "unet-bench: pingpong on %s (%s), %ld bytes, %ld round trips\n",
		o->transport, mode_name(o), o->size, o->count);
	warm = warm_up(o, t, c, &seq, o->warmup > 0 ? o->warmup : 1, deadline);
	if (warm < 0) {
		r = (int)warm;
		goto err;
	}
	if (!warm) {
		free(rtt);
		return die("pingpong: no echo from the peer within the timeout");
	}
	cpu0 = bench_cpu_us();
	while (done + lost < o->count && !stop && bench_now_ns() < deadline)
		if ((r = timed_ping(o, t, c, &seq, deadline, rtt, &done, &lost)) < 0)
			goto err;
	cpu1 = bench_cpu_us();
	say_last(o, t, c, &seq);
	if (!done) {
		free(rtt);
		return die("pingpong: all %ld measured round trips lost", lost);
	}
	bench_sort_u64(rtt, (size_t)done);
	json_head("pingpong", o);
	json_int("channels", o->channels);
	json_int("count", done);
	json_int("lost", lost);
	json_num("min_us", rtt[0] / 1e3, 2);
	json_num("p50_us", bench_percentile(rtt, (size_t)done, 0.50) / 1e3, 2);
	json_num("p90_us", bench_percentile(rtt, (size_t)done, 0.90) / 1e3, 2);
	json_num("p99_us", bench_percentile(rtt, (size_t)done, 0.99) / 1e3, 2);
	json_num("p999_us", bench_percentile(rtt, (size_t)done, 0.999) / 1e3, 2);
	json_num("max_us", rtt[done - 1] / 1e3, 2);
	json_num("cpu_us_per_msg", (double)(cpu1 - cpu0) / (double)(done + lost), 3);
	json_wait(o);
	json_end();
	fprintf(stderr, "unet-bench: pingpong: %ld round trips, %ld lost, p50 %.2f us\n", done,
		lost, bench_percentile(rtt, (size_t)done, 0.50) / 1e3);
	free(rtt);
	if (done + lost < o->count)
		return die("pingpong: stopped after %ld of %ld round trips (timeout or signal)",
			   done + lost, o->count);
	return 0;
err:
	free(rtt);
	return die("pingpong: %s", strerror(-r));
}

/*
 * pingpong --vs: round trips on two transports in one run, in alternate
 * blocks of vs_block, each side's warm-up first.  A host whose speed
 * changes from one second, or one process, to the next moves both alike
 * here, so their ratio is steadier than that of two runs (a raw U-Net
 * p50 moved between 3.3 and 6.5 us from run to run on the 2-vCPU VM of
 * docs/performance.md).
 */
static int run_pingpong_vs(const struct bench_opts *o, const struct side *sd, uint64_t deadline)
{
	uint64_t *rtt[2] = { calloc((size_t)o->count, sizeof(uint64_t)),
			     calloc((size_t)o->count, sizeof(uint64_t)) };
	long done[2] = { 0, 0 }, lost[2] = { 0, 0 };
	uint32_t seq[2] = { 0, 0 };
	double p50[2];
	int r = 0;

	if (!rtt[0] || !rtt[1]) {
		r = -ENOMEM;
		goto out;
	}
	fprintf(stderr, "unet-bench: pingpong on %s and %s, %ld bytes, %ld round trips each, blocks of %ld\n",
		o->transport, o->vs_transport, o->size, o->count, o->vs_block);
	for (int s = 0; s < 2; s++) {
		long warm = warm_up(o, sd[s].t, sd[s].c, &seq[s], o->warmup > 0 ? o->warmup : 1,
				    deadline);

		if (warm < 0) {
			r = (int)warm;
			goto out;
		}
		if (!warm) {
			r = die("pingpong: no echo on %s within the timeout",
				s ? o->vs_transport : o->transport);
			goto out;
		}
	}
	for (long blk = 0; done[0] + lost[0] < o->count || done[1] + lost[1] < o->count; blk++) {
		int s = (int)(blk % 2);

		for (long i = 0; i < o->vs_block && done[s] + lost[s] < o->count; i++) {
			if (stop || bench_now_ns() >= deadline) {
				r = die("pingpong: stopped after %ld and %ld of %ld round trips (timeout or signal)",
					done[0] + lost[0], done[1] + lost[1], o->count);
				goto out;
			}
			r = timed_ping(o, sd[s].t, sd[s].c, &seq[s], deadline, rtt[s], &done[s],
				       &lost[s]);
			if (r < 0)
				goto out;
		}
	}
	say_last(o, sd[0].t, sd[0].c, &seq[0]); /* the echo ends on either side's */
	if (!done[0] || !done[1]) {
		r = die("pingpong: all measured round trips of %s lost",
			done[0] ? o->vs_transport : o->transport);
		goto out;
	}
	for (int s = 0; s < 2; s++) {
		bench_sort_u64(rtt[s], (size_t)done[s]);
		p50[s] = bench_percentile(rtt[s], (size_t)done[s], 0.50) / 1e3;
	}
	json_head("pingpong", o);
	json_int("count", done[0]);
	json_int("lost", lost[0]);
	json_num("p50_us", p50[0], 2);
	json_num("p99_us", bench_percentile(rtt[0], (size_t)done[0], 0.99) / 1e3, 2);
	json_str("vs_transport", o->vs_transport);
	json_int("vs_block", o->vs_block);
	json_int("vs_count", done[1]);
	json_int("vs_lost", lost[1]);
	json_num("vs_p50_us", p50[1], 2);
	json_num("vs_p99_us", bench_percentile(rtt[1], (size_t)done[1], 0.99) / 1e3, 2);
	json_num("p50_ratio", p50[0] / p50[1], 3);
	json_end();
	fprintf(stderr, "unet-bench: pingpong: p50 %s %.2f us, %s %.2f us: %.3fx\n", o->transport,
		p50[0], o->vs_transport, p50[1], p50[0] / p50[1]);
	r = 0;
out:
	free(rtt[0]);
	free(rtt[1]);
	if (r == -ENOMEM)
		return die("out of memory for %ld samples", o->count);
	return r < 0 ? die("pingpong: %s", strerror(-r)) : r;
}

/* ---- logp ----------------------------------------------------------------- */

static int run_logp(const struct bench_opts *o, const struct bench_transport *t,
		    struct bench_conn *c, uint64_t deadline)
{
	struct bench_logp r;
	int err;

	fprintf(stderr, "unet-bench: logp on %s, %ld bytes, %ld samples\n", o->transport, o->size,
		o->count);
	err = bench_logp_measure(o, t, c, deadline, &r);
	if (err)
		return die("logp: %s", strerror(-err));
	json_head("logp", o);
	json_int("samples", r.samples);
	json_int("retries", r.retries);
	json_num("rtt_us", r.rtt_us, 3);
	json_num("os_us", r.os_us, 3);
	json_num("or_us", r.or_us, 3);
	json_num("L_us", r.L_us, 3);
	json_end();
	fprintf(stderr, "unet-bench: logp: rtt %.2f us, o_s %.2f us, o_r %.2f us, L %.2f us\n",
		r.rtt_us, r.os_us, r.or_us, r.L_us);
	return 0;
}

/* ---- bulk ----------------------------------------------------------------- */

/* Bulk transfers (UAM stores of --bulk-bytes each, --batch in flight):
 * bandwidth of data known to have landed in the peer's memory. */
static int run_bulk(const struct bench_opts *o, const struct bench_transport *t,
		    struct bench_conn *c, uint64_t deadline)
{
	uint64_t t0, t1, cpu0, cpu1;
	long done;
	double secs;

	fprintf(stderr, "unet-bench: bulk on %s, %ld %s of %ld bytes, %ld in flight\n",
		o->transport, o->count, o->bulk_get ? "gets" : "stores", o->bulk_bytes, o->batch);
	cpu0 = bench_cpu_us();
	t0 = bench_now_ns();
	done = t->bulk(c, (size_t)o->bulk_bytes, o->count, (unsigned int)o->batch, deadline);
	t1 = bench_now_ns();
	cpu1 = bench_cpu_us();
	if (done < 0)
		return die("bulk: %s", strerror((int)-done));
	secs = (double)(t1 - t0) / 1e9;
	json_head("bulk", o);
	json_str("op", o->bulk_get ? "get" : "store");
	json_int("bulk_bytes", o->bulk_bytes);
	json_int("batch", o->batch);
	json_int("transfers", done);
	json_num("secs", secs, 6);
	json_num("gbit_s", (double)done * (double)o->bulk_bytes * 8 / secs / 1e9, 3);
	json_num("cpu_us_per_msg", (double)(cpu1 - cpu0) / (double)(done ? done : 1), 3);
	json_end();
	if (done < o->count)
		return die("bulk: %ld of %ld transfers completed (timeout or signal)", done, o->count);
	return 0;
}

/* ---- calls ---------------------------------------------------------------- */

/* Calls (a message and its echo) with --batch of them in flight, over a
 * reliable transport (uam): calls per second, the figure loss recovery
 * is judged by (run with loss injected on the link, unetctl fault). */
static int run_calls(const struct bench_opts *o, const struct bench_transport *t,
		     struct bench_conn *c, uint64_t deadline)
{
	struct bench_rx rx[BENCH_MAX_BATCH];
	long sent = 0, done = 0, warm;
	uint32_t seq = 0;
	uint64_t t0, t1;

	fprintf(stderr, "unet-bench: calls on %s, %ld of %ld bytes, %ld in flight\n", o->transport,
		o->count, o->size, o->batch);
	warm = warm_up(o, t, c, &seq, 1, deadline);
	if (warm < 0)
		return die("calls: %s", strerror((int)-warm));
	if (!warm)
		return die("calls: no echo from the peer within the timeout");
	t0 = bench_now_ns();
	while (done < o->count && !stop && bench_now_ns() < deadline) {
		int n;

		while (sent < o->count && sent - done < o->batch) {
			struct bench_tx tx = { .seq = ++seq, .len = (uint32_t)o->size };
			int k = t->send(c, &tx, 1);

			if (k < 0)
				return die("calls: send: %s", strerror(-k));
			if (!k) {
				seq--;
				break;
			}
			sent++;
		}
		n = t->recv(c, rx, BENCH_MAX_BATCH, o->mode == BENCH_BLOCK);
		if (n < 0)
			return die("calls: receive: %s", strerror(-n));
		for (int i = 0; i < n; i++)
			done += !(bench_rx_hdr(&rx[i]).flags & BENCH_F_WARMUP);
	}
	t1 = bench_now_ns();
	say_last(o, t, c, &seq);
	json_head("calls", o);
	json_int("batch", o->batch);
	json_int("count", done);
	json_num("secs", (double)(t1 - t0) / 1e9, 6);
	json_num("calls_per_s", (double)done / ((double)(t1 - t0) / 1e9), 1);
	json_end();
	fprintf(stderr, "unet-bench: calls: %ld in %.3f s, %ld in flight\n", done,
		(double)(t1 - t0) / 1e9, o->batch);
	if (done < o->count)
		return die("calls: %ld of %ld completed (timeout or signal)", done, o->count);
	return 0;
}

/* ---- sink ----------------------------------------------------------------- */

static int run_sink(const struct bench_opts *o, const struct bench_transport *t,
		    struct bench_conn *c, uint64_t deadline)
{
	struct bench_rx rx[BENCH_MAX_BATCH];
	uint64_t msgs = 0, bytes = 0, first_n = 0, first_bytes = 0;
	uint64_t first_ns = 0, last_ns = 0, cpu0 = 0, cpu_s = 0, cpu_s_ns = 0, cpu_s_msgs = 0;
	uint64_t idle_ns = (uint64_t)o->idle_ms * 1000000u;
	long long sent = -1;
	const char *why = "timeout";

	fprintf(stderr, "unet-bench: sink on %s (%s) ready\n", o->transport, mode_name(o));
	while (!stop) {
		int n = t->recv(c, rx, (unsigned int)o->batch, o->mode != BENCH_SPIN);
		uint64_t now = bench_now_ns();
		uint64_t got = 0;

		if (n < 0)
			return die("sink: receive: %s", strerror(-n));
		for (int i = 0; i < n; i++) {
			struct bench_hdr h = bench_rx_hdr(&rx[i]);

			if (h.flags & BENCH_F_END) {
				sent = h.seq;
				continue;
			}
			got++;
			bytes += rx[i].len;
		}
		if (got) {
			if (!msgs) {
				/* The rate runs from this first arrival: what came
				 * with it arrived before the clock started. */
				first_ns = now;
				first_n = got;
				first_bytes = bytes;
				cpu0 = bench_cpu_us();
				cpu_s = cpu0;
				cpu_s_ns = now;
				cpu_s_msgs = got;
			}
			msgs += got;
			last_ns = now;
			/* CPU time sampled at most once a millisecond: the
			 * system call must not become what we measure. */
			if (now - cpu_s_ns >= 1000000u) {
				cpu_s = bench_cpu_us();
				cpu_s_ns = now;
				cpu_s_msgs = msgs;
			}
		}
		if (sent >= 0) {
			why = "end marker";
			break;
		}
		if (o->count && msgs >= (uint64_t)o->count) {
			why = "count";
			break;
		}
		if (msgs && now - last_ns > idle_ns) {
			why = "idle";
			break;
		}
		if (now >= deadline)
			break;
	}
	if (stop)
		why = "signal";
	if (why[0] != 'i' && why[0] != 't' && msgs) { /* ended on an arrival: exact */
		cpu_s = bench_cpu_us();
		cpu_s_msgs = msgs;
	}
	if (msgs <= first_n || last_ns == first_ns)
		return die("sink: received %llu messages in one burst or none (%s): nothing to measure",
			   (unsigned long long)msgs, why);
	double secs = (double)(last_ns - first_ns) / 1e9;
	double rate = (double)(msgs - first_n) / secs;
	double gbit = (double)(bytes - first_bytes) * 8 / secs / 1e9;

	json_head("rate", o);
	json_int("batch", o->batch);
	json_int("channels", o->channels);
	json_int("msgs", (long long)msgs);
	json_num("secs", secs, 6);
	json_num("msgs_per_s", rate, 0);
	json_num("gbit_s", gbit, 4);
	json_num("cpu_us_per_msg",
		 cpu_s_msgs > first_n ? (double)(cpu_s - cpu0) / (double)(cpu_s_msgs - first_n) : NAN, 3);
	if (sent >= 0) {
		json_int("sent", sent);
		json_int("lost", sent - (long long)msgs);
	} else {
		json_null("sent");
		json_null("lost");
	}
	json_end();
	fprintf(stderr, "unet-bench: sink: %llu messages in %.3f s (%.0f msgs/s, %.3f Gbit/s), ended by %s\n",
		(unsigned long long)msgs, secs, rate, gbit, why);
	return 0;
}

/* ---- source --------------------------------------------------------------- */

static int run_source(const struct bench_opts *o, const struct bench_transport *t,
		      struct bench_conn *c, uint64_t deadline)
{
	struct bench_tx tx[BENCH_MAX_BATCH];
	uint64_t sent = 0, t0, t1, cpu0, cpu1, full = 0;
	int flushed = 0;

	fprintf(stderr, "unet-bench: source on %s, %ld x %ld bytes, batch %ld\n", o->transport,
		o->count, o->size, o->batch);
	t0 = bench_now_ns();
	cpu0 = bench_cpu_us();
	while (sent < (uint64_t)o->count && !stop && bench_now_ns() < deadline) {
		unsigned int k = (unsigned int)o->batch, i;
		int n;

		if (k > (uint64_t)o->count - sent)
			k = (unsigned int)((uint64_t)o->count - sent);
		for (i = 0; i < k; i++)
			tx[i] = (struct bench_tx){ .seq = (uint32_t)(sent + i), .len = (uint32_t)o->size };
		n = t->send(c, tx, k);
		if (n < 0)
			return die("source: send: %s", strerror(-n));
		full += n == 0;
		sent += (uint64_t)n;
	}
	/* Everything on the wire before the clock stops and before the end
	 * marker (U-Net in copy mode sends in the kick: see docs/platform.md). */
	if (t->flush)
		flushed = t->flush(c, 2000);
	t1 = bench_now_ns();
	cpu1 = bench_cpu_us();
	/* End marker, a few times with a pause: with no flow control a sink
	 * still behind drops what finds its queue full; give it time. */
	for (int i = 0; i < END_MARKERS; i++) {
		struct bench_tx end = { .seq = (uint32_t)sent, .flags = BENCH_F_END,
					.len = (uint32_t)o->size };
		uint64_t lim = bench_now_ns() + 1000000000ull;

		usleep(END_PAUSE_US);
		if (bench_send_all(t, c, &end, 1, lim, &stop) < 0)
			break;
		if (t->flush)
			t->flush(c, 1000);
	}
	double secs = (double)(t1 - t0) / 1e9;

	json_head("source", o);
	json_int("batch", o->batch);
	json_int("channels", o->channels);
	json_int("count", o->count);
	json_int("sent", (long long)sent);
	json_num("secs", secs, 6);
	json_num("msgs_per_s", (double)sent / secs, 0);
	json_num("gbit_s", (double)sent * (double)o->size * 8 / secs / 1e9, 4);
	json_num("cpu_us_per_msg", sent ? (double)(cpu1 - cpu0) / (double)sent : NAN, 3);
	json_end();
	fprintf(stderr, "unet-bench: source: sent %llu in %.3f s (%.0f msgs/s offered), queue full %llu times%s\n",
		(unsigned long long)sent, secs, (double)sent / secs, (unsigned long long)full,
		flushed ? ", flush timed out" : "");
	if (sent < (uint64_t)o->count)
		return die("source: sent %llu of %ld (timeout or signal)", (unsigned long long)sent,
			   o->count);
	return 0;
}

/* ---- main ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
	enum {
		O_TRANSPORT = 256, O_MODE, O_CPU, O_TIMEOUT, O_COUNT, O_WARMUP, O_SIZE, O_BATCH,
		O_IDLE, O_IFACE, O_TAG, O_PEER, O_PEER_TAG, O_CHANNELS, O_BUSY, O_QMASK, O_XDP,
		O_LOCAL, O_REMOTE, O_BULK, O_SEGMENT, O_RING, O_SPIN_US, O_BULK_GET, O_VS, O_VS_TAG,
		O_VS_PEER_TAG, O_VS_BLOCK, O_NO_TX_CSUM, O_PEER_IP, O_HELP
	};
	static const struct option lopts[] = {
		{ "transport", 1, 0, O_TRANSPORT }, { "mode", 1, 0, O_MODE },
		{ "cpu", 1, 0, O_CPU },		    { "timeout", 1, 0, O_TIMEOUT },
		{ "count", 1, 0, O_COUNT },	    { "warmup", 1, 0, O_WARMUP },
		{ "size", 1, 0, O_SIZE },	    { "batch", 1, 0, O_BATCH },
		{ "idle-ms", 1, 0, O_IDLE },	    { "iface", 1, 0, O_IFACE },
		{ "tag", 1, 0, O_TAG },		    { "peer", 1, 0, O_PEER },
		{ "peer-tag", 1, 0, O_PEER_TAG },   { "channels", 1, 0, O_CHANNELS },
		{ "busy-poll", 1, 0, O_BUSY },	    { "queue-mask", 1, 0, O_QMASK },
		{ "xdp-mode", 1, 0, O_XDP },	    { "local", 1, 0, O_LOCAL },
		{ "remote", 1, 0, O_REMOTE },	    { "bulk-bytes", 1, 0, O_BULK },
		{ "segment", 1, 0, O_SEGMENT },	    { "ring", 1, 0, O_RING },
		{ "spin-us", 1, 0, O_SPIN_US },	    { "help", 0, 0, O_HELP },
		{ "bulk-get", 0, 0, O_BULK_GET },   { "vs", 1, 0, O_VS },
		{ "vs-tag", 1, 0, O_VS_TAG },	    { "vs-peer-tag", 1, 0, O_VS_PEER_TAG },
		{ "vs-block", 1, 0, O_VS_BLOCK },   { "no-tx-csum-offload", 0, 0, O_NO_TX_CSUM },
		{ "peer-ip", 1, 0, O_PEER_IP },
		{ 0, 0, 0, 0 }
	};
	struct bench_opts o = {
		.mode = BENCH_SPIN, .cpu = -1, .timeout_s = 30, .warmup = 100, .size = 64,
		.batch = 64, .idle_ms = 2000, .channels = 1, .xdp_mode = UNET_XDP_MODE_AUTO,
		.spin_us = -1, .vs_block = 1000,
	};
	const struct bench_transport *t, *vt = NULL;
	struct bench_conn *c, *vc = NULL;
	long v;
	int opt, ret;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	o.role = argv[1];
	optind = 2;
	while ((opt = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		const char *bad = NULL;

		switch (opt) {
		case O_TRANSPORT: o.transport = optarg; break;
		case O_MODE:
			if (!strcmp(optarg, "spin")) o.mode = BENCH_SPIN;
			else if (!strcmp(optarg, "block")) o.mode = BENCH_BLOCK;
			else if (!strcmp(optarg, "adaptive")) o.mode = BENCH_ADAPTIVE;
			else bad = "--mode";
			break;
		case O_CPU: if (parse_long(optarg, 0, CPU_SETSIZE - 1, &v)) bad = "--cpu"; else o.cpu = (int)v; break;
		case O_TIMEOUT: {
			char *end;
			o.timeout_s = strtod(optarg, &end);
			if (*end || end == optarg || !(o.timeout_s > 0 && o.timeout_s <= 86400)) bad = "--timeout";
			break;
		}
		case O_COUNT: if (parse_long(optarg, 1, UINT32_MAX - 1, &o.count)) bad = "--count"; break;
		case O_WARMUP: if (parse_long(optarg, 0, 10000000, &o.warmup)) bad = "--warmup"; break;
		case O_SIZE: if (parse_long(optarg, BENCH_MIN_SIZE, BENCH_MAX_SIZE_JUMBO, &o.size)) bad = "--size"; break;
		case O_BATCH: if (parse_long(optarg, 1, BENCH_MAX_BATCH, &o.batch)) bad = "--batch"; break;
		case O_IDLE: if (parse_long(optarg, 1, 3600000, &o.idle_ms)) bad = "--idle-ms"; break;
		case O_IFACE: o.iface = optarg; break;
		case O_TAG: if (parse_long(optarg, 1, 65535, &o.tag)) bad = "--tag"; break;
		case O_PEER_TAG: if (parse_long(optarg, 1, 65535, &o.peer_tag)) bad = "--peer-tag"; break;
		case O_PEER:
			if (unet_parse_mac(optarg, o.peer_mac)) bad = "--peer";
			else o.have_peer = true;
			break;
		case O_PEER_IP:
			if (inet_pton(AF_INET, optarg, &o.peer_ip) != 1 || !o.peer_ip) bad = "--peer-ip";
			else o.have_peer = true;
			break;
		case O_CHANNELS: if (parse_long(optarg, 1, 65535, &o.channels)) bad = "--channels"; break;
		case O_BUSY: if (parse_long(optarg, 0, 1000000, &o.busy_poll_usec)) bad = "--busy-poll"; break;
		case O_SEGMENT: if (parse_long(optarg, 4096, 1L << 30, &o.segment_bytes)) bad = "--segment"; break;
		case O_RING: if (parse_long(optarg, 64, 65536, &o.ring) || (o.ring & (o.ring - 1))) bad = "--ring"; break;
		case O_QMASK: if (parse_long(optarg, 0, UINT32_MAX, &v)) bad = "--queue-mask"; else o.queue_mask = (uint32_t)v; break;
		case O_XDP:
			if (!strcmp(optarg, "native")) o.xdp_mode = UNET_XDP_MODE_NATIVE;
			else if (!strcmp(optarg, "skb")) o.xdp_mode = UNET_XDP_MODE_SKB;
			else if (!strcmp(optarg, "auto")) o.xdp_mode = UNET_XDP_MODE_AUTO;
			else bad = "--xdp-mode";
			break;
		case O_LOCAL: o.local = optarg; break;
		case O_REMOTE: o.remote = optarg; break;
		case O_BULK: if (parse_long(optarg, 1, 1L << 30, &o.bulk_bytes)) bad = "--bulk-bytes"; break;
		case O_BULK_GET: o.bulk_get = true; break;
		case O_NO_TX_CSUM: o.no_tx_csum = true; break;
		case O_SPIN_US: if (parse_long(optarg, 0, UNET_SPIN_US_MAX, &o.spin_us)) bad = "--spin-us"; break;
		case O_VS: o.vs_transport = optarg; break;
		case O_VS_TAG: if (parse_long(optarg, 1, 65535, &o.vs_tag)) bad = "--vs-tag"; break;
		case O_VS_PEER_TAG: if (parse_long(optarg, 1, 65535, &o.vs_peer_tag)) bad = "--vs-peer-tag"; break;
		case O_VS_BLOCK: if (parse_long(optarg, 1, 1000000, &o.vs_block)) bad = "--vs-block"; break;
		case O_HELP: usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
		if (bad) {
			die("bad %s '%s' (see --help)", bad, optarg);
			return 2;
		}
	}
	if (optind != argc) {
		die("unexpected argument '%s'", argv[optind]);
		return 2;
	}
	if (!o.transport || !(t = find_transport(o.transport))) {
		die("--transport must be one of unet, uam, udp, udp-mmsg, packet, unet-udp");
		return 2;
	}
	if (o.mode == BENCH_ADAPTIVE && t == &bench_packet) {
		die("--mode adaptive: unet, uam, unet-udp (spin budget) or udp, udp-mmsg (SO_BUSY_POLL)");
		return 2;
	}
	if (o.channels > 1 && t != &bench_unet && t != &bench_uam) {
		die("--channels is a unet option");
		return 2;
	}
	bool is_echo = !strcmp(o.role, "echo"), is_ping = !strcmp(o.role, "pingpong");
	bool is_sink = !strcmp(o.role, "sink"), is_source = !strcmp(o.role, "source");
	if (o.size > BENCH_MAX_SIZE && (t != &bench_unet || !(is_sink || is_source))) {
		die("--size over %d: unet source and sink only (a jumbo MTU's messages)", BENCH_MAX_SIZE);
		return 2;
	}
	bool is_bulk = !strcmp(o.role, "bulk"), is_logp = !strcmp(o.role, "logp");
	bool is_calls = !strcmp(o.role, "calls");

	if (!is_echo && !is_ping && !is_sink && !is_source && !is_bulk && !is_logp && !is_calls) {
		die("unknown role '%s': echo, pingpong, sink, source, bulk, logp or calls", o.role);
		return 2;
	}
	if (is_calls && t != &bench_uam) {
		die("calls needs a reliable transport: --transport uam");
		return 2;
	}
	if (is_bulk && (!t->bulk || !o.bulk_bytes)) {
		die("bulk needs --transport uam and --bulk-bytes");
		return 2;
	}
	if ((is_ping || is_source || is_bulk || is_logp || is_calls) && !o.count) {
		die("%s needs --count", o.role);
		return 2;
	}
	if (o.vs_transport) {
		vt = find_transport(o.vs_transport);
		if (!vt || (vt != &bench_unet && vt != &bench_uam) ||
		    (t != &bench_unet && t != &bench_uam)) {
			die("--vs: both transports unet or uam (one interface, one peer)");
			return 2;
		}
		if (!is_echo && !is_ping) {
			die("--vs is for echo and pingpong");
			return 2;
		}
		if (o.mode != BENCH_SPIN || o.channels > 1) {
			die("--vs: spinning, one channel");
			return 2;
		}
		if (!o.vs_tag || !o.vs_peer_tag || o.vs_tag == o.tag) {
			die("--vs needs --vs-tag (not --tag's) and --vs-peer-tag");
			return 2;
		}
	}
	if (o.cpu >= 0 && (ret = bench_pin_cpu(o.cpu)))
		return die("cannot pin to CPU %d: %s", o.cpu, strerror(-ret));

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (vt)
		o.queue_mask = 1;
	c = t->open(&o);
	if (!c)
		return 1;
	if (vt) {
		struct bench_opts vo = o;

		vo.transport = o.vs_transport;
		vo.tag = o.vs_tag;
		vo.peer_tag = o.vs_peer_tag;
		vo.peer_ip = 0; /* raw: a routable first one is measured against it */
		/* Each endpoint its own queues (one UMEM per queue).  On veth
		 * a frame sent on tx queue q lands on the peer's rx queue q in
		 * native mode, q - 1 in skb mode (tests/integration/t_core.sh):
		 * the first endpoint sends and receives on queue 0, the second
		 * sends on 2 and receives on 1 and 2. */
		vo.queue_mask = 6;
		vo.tx_queue = 2;
		vc = vt->open(&vo);
		if (!vc) {
			t->close(c);
			return 1;
		}
	}
	uint64_t deadline = bench_now_ns() + (uint64_t)(o.timeout_s * 1e9);
	const struct side sides[2] = { { t, c }, { vt, vc } };

	if (is_echo)
		ret = run_echo(&o, sides, vt ? 2 : 1, deadline);
	else if (is_ping && vt)
		ret = run_pingpong_vs(&o, sides, deadline);
	else if (is_ping)
		ret = run_pingpong(&o, t, c, deadline);
	else if (is_sink)
		ret = run_sink(&o, t, c, deadline);
	else if (is_bulk)
		ret = run_bulk(&o, t, c, deadline);
	else if (is_logp)
		ret = run_logp(&o, t, c, deadline);
	else if (is_calls)
		ret = run_calls(&o, t, c, deadline);
	else
		ret = run_source(&o, t, c, deadline);
	if (vt)
		vt->close(vc);
	t->close(c);
	return ret;
}
