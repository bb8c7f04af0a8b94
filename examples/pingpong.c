/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pingpong - round-trip latency over one U-Net channel.
 *
 *   pingpong server IFACE --tag T --peer MAC --peer-tag P [--count N] [--spin|--block]
 *   pingpong client IFACE --tag T --peer MAC --peer-tag P [--count N] [--size B] [--spin|--block]
 *   common: [--timeout S] (default 30); server --count 0: no limit
 *
 * The client is direct-access U-Net: it builds each message in place in the
 * communication segment (buf_alloc, buf_payload) and hands the buffer to the
 * send queue.  The server is base-level: it reads from the receive queue and
 * echoes with send_copy.  --spin busy-polls the receive queue; --block
 * sleeps in unet_endpoint__wait.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <unet-xdp/unet.h>

struct ping { uint32_t seq; uint32_t flags; }; /* head of every message */
enum { PING_WARMUP = 1, PING_LAST = 2 };

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }
static void on_log(enum unet_log_level l, const char *msg, void *ctx)
{ (void)ctx; if (l <= UNET_LOG_WARN) fprintf(stderr, "pingpong: libunet: %s\n", msg); }

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static int cmp_u64(const void *a, const void *b)
{ uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b; return (x > y) - (x < y); }

/* Take one message, spinning or blocking, until deadline.  1: got one, 0: timed out. */
static int recv_one(struct unet_endpoint *ep, struct unet_recv_desc *d, int spin, uint64_t deadline)
{
	while (!stop && now_ns() < deadline) {
		int n = unet_endpoint__recv(ep, d, 1);
		if (n != 0)
			return n < 0 ? n : 1;
		if (!spin) {
			int ms = (int)((deadline - now_ns()) / 1000000) + 1;
			n = unet_endpoint__wait(ep, ms > 100 ? 100 : ms);
			if (n < 0 && n != -EINTR)
				return n;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{"tag", 1, 0, 't'}, {"peer", 1, 0, 'p'}, {"peer-tag", 1, 0, 'P'},
		{"count", 1, 0, 'c'}, {"size", 1, 0, 's'}, {"timeout", 1, 0, 'T'},
		{"spin", 0, 0, 'S'}, {"block", 0, 0, 'B'}, {0, 0, 0, 0}};
	long tag = 0, peer_tag = 0, count = 1000, size = 64, timeout = 30;
	int spin = 1, o, ret = 1;
	uint8_t peer[6] = {0};
	int have_peer = 0;

	while ((o = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (o) {
		case 't': tag = strtol(optarg, NULL, 0); break;
		case 'P': peer_tag = strtol(optarg, NULL, 0); break;
		case 'p': have_peer = unet_parse_mac(optarg, peer) == 0; break;
		case 'c': count = strtol(optarg, NULL, 0); break;
		case 's': size = strtol(optarg, NULL, 0); break;
		case 'T': timeout = strtol(optarg, NULL, 0); break;
		case 'S': spin = 1; break;
		case 'B': spin = 0; break;
		default: goto usage;
		}
	}
	if (argc - optind != 2 || !have_peer || tag <= 0 || tag > 65535 || peer_tag <= 0 ||
	    peer_tag > 65535 || count < 0 || timeout <= 0 || size < (long)sizeof(struct ping))
		goto usage;
	int server = !strcmp(argv[optind], "server");
	if (!server && (strcmp(argv[optind], "client") || count == 0))
		goto usage;

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	unet_set_log_fn(on_log, NULL);
	struct unet_endpoint *ep = unet_endpoint__create(argv[optind + 1], NULL);
	if (!ep) { perror("pingpong: unet_endpoint__create"); return 1; }
	struct unet_channel *ch = unet_channel__open(ep, tag, peer, peer_tag, NULL);
	if (!ch) { perror("pingpong: unet_channel__open"); goto out; }
	struct unet_endpoint_info info;
	unet_endpoint__info(ep, &info);
	if (size > info.max_payload) {
		fprintf(stderr, "pingpong: --size %ld > max payload %u\n", size, info.max_payload);
		goto out;
	}

	uint64_t deadline = now_ns() + (uint64_t)timeout * 1000000000u;
	struct unet_recv_desc d;
	if (server) { /* base level: echo with a copy, release the receive buffer */
		long echoed = 0;
		printf("pingpong: server on %s tag %ld (%s)\n", argv[optind + 1], tag, spin ? "spin" : "block");
		fflush(stdout);
		while ((count == 0 || echoed < count) && (o = recv_one(ep, &d, spin, deadline)) > 0) {
			struct ping p;
			memcpy(&p, d.data, sizeof(p));
			int err = -EAGAIN;
			for (int tries = 0; err == -EAGAIN && tries < 100000; tries++)
				if ((err = unet_channel__send_copy(ch, d.data, d.len)) == -EAGAIN)
					unet_endpoint__complete(ep);
			unet_endpoint__release(ep, &d, 1);
			if (err < 0) { fprintf(stderr, "pingpong: send: %s\n", strerror(-err)); goto out; }
			echoed += !(p.flags & PING_WARMUP);
			if (p.flags & PING_LAST)
				break;
		}
		printf("pingpong: server echoed %ld messages%s\n", echoed, o == 0 ? " (timeout)" : "");
		ret = o < 0 || (o == 0 && count > 0); /* timed out before --count */
		goto out;
	}

	/* Client, direct access: the message is written straight into the segment. */
	uint64_t *rtt = calloc(count, sizeof(*rtt));
	long done = 0, lost = 0, warm = 0;
	if (!rtt) goto out;
	for (uint32_t seq = 1; done + lost < count && !stop && now_ns() < deadline; seq++) {
		int warmup = warm < 10; /* first rounds: wait for the server, warm caches */
		uint64_t buf = unet_endpoint__buf_alloc(ep);
		if (buf == UNET_NO_BUF) { unet_endpoint__complete(ep); seq--; continue; }
		struct ping *p = unet_endpoint__buf_payload(ep, buf);
		memset(p, 0xab, size);
		p->seq = seq;
		p->flags = (warmup ? PING_WARMUP : 0) | (done + lost + 1 == count && !warmup ? PING_LAST : 0);
		uint64_t t0 = now_ns();
		int err = unet_channel__send(ch, buf, size);
		if (err < 0) {
			unet_endpoint__buf_free(ep, buf);
			if (err == -EAGAIN) { unet_endpoint__complete(ep); seq--; continue; }
			fprintf(stderr, "pingpong: send: %s\n", strerror(-err));
			goto out_free;
		}
		/* Wait for the echo of this seq; stale echoes of lost pings are dropped. */
		uint64_t limit = t0 + (warmup ? 100000000u : 1000000000u);
		int got = 0;
		while (!got && (o = recv_one(ep, &d, spin, limit < deadline ? limit : deadline)) > 0) {
			struct ping r;
			memcpy(&r, d.data, sizeof(r));
			got = r.seq == seq;
			unet_endpoint__release(ep, &d, 1);
		}
		uint64_t t1 = now_ns();
		if (o < 0) { fprintf(stderr, "pingpong: recv: %s\n", strerror(-o)); goto out_free; }
		if (warmup) warm += got;
		else if (got) rtt[done++] = t1 - t0;
		else lost++;
	}
	if (done == 0) {
		fprintf(stderr, "pingpong: no round trip completed (%s)\n", warm ? "all lost" : "server silent");
		goto out_free;
	}
	qsort(rtt, done, sizeof(*rtt), cmp_u64);
	printf("rtt_us mode=%s size=%ld count=%ld lost=%ld min=%.1f p50=%.1f p99=%.1f max=%.1f\n",
	       spin ? "spin" : "block", size, done, lost, rtt[0] / 1e3, rtt[done / 2] / 1e3,
	       rtt[(done * 99) / 100] / 1e3, rtt[done - 1] / 1e3);
	ret = done + lost < count; /* stopped early: timeout or signal */
	if (ret) fprintf(stderr, "pingpong: stopped after %ld of %ld round trips\n", done + lost, count);
out_free:
	free(rtt);
out:
	unet_endpoint__destroy(ep); /* closes the channel too */
	return ret;
usage:
	fprintf(stderr, "usage: pingpong server|client IFACE --tag T --peer MAC --peer-tag P\n"
			"       [--count N] [--size BYTES] [--spin|--block] [--timeout SECONDS]\n");
	return 2;
}
