/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet-fair - how long a light client's message waits behind a flood, in
 * frames rather than microseconds, so that the answer does not depend on
 * how busy the machine is.
 *
 *   unet-fair probe IFACE --peer MAC --flood-tag T --flood-peer-tag P
 *                   --ping-tag T --ping-peer-tag P [--count N] [--gap-us U]
 *                   [--timeout S]
 *     One process, two endpoints (two clients of unetd when it runs as a
 *     user).  It keeps the flood endpoint's send queue full of messages
 *     numbered 0, 1, 2, ... and now and then, with nothing else of its own
 *     queued, sends one ping on the other endpoint.  Just before each ping
 *     it reaps the flood's completions and writes into the ping how many
 *     flood messages had been sent by then (the stamp) and how many were
 *     still queued (the backlog).  Prints one JSON line of what it did.
 *
 *   unet-fair sink IFACE --peer MAC --flood-tag T --flood-peer-tag P
 *                  --ping-tag T --ping-peer-tag P [--count N] [--timeout S]
 *     One endpoint with both channels: the frames arrive in the order the
 *     sender put them on the wire.  For each ping, the flood messages
 *     sent ahead of it since its stamp are the number of the last flood
 *     message seen before it, plus one, minus the stamp.  Prints the
 *     distribution of those counts as one JSON line once --count pings
 *     arrived (or at --timeout: exit 1).
 *
 * What the count measures is the sender's order, not time: a ping served
 * within the next round of a fair scheduler waits behind a few frames of
 * the flood whatever else the CPUs do; one served after the flood's queue
 * waits behind thousands.  The reading is taken between two instructions
 * of one thread, so the only noise is the flood frames the sender takes
 * while the probe is preempted exactly there, which a median ignores.
 * Both modes print "ready" on stderr once their channels are open.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unet-xdp/unet.h>

#include "tool_common.h"

#define FLOOD_RING 8192u
#define FLOOD_SEGMENT (16u << 20)
#define MAX_COUNT 100000u
#define FLOOD_LEN 64u

/* A flood message carries its number; a ping its number, stamp, backlog. */
struct ping {
	uint64_t magic;
	uint64_t n;
	uint64_t stamp;	  /* flood messages completed before this ping was queued */
	uint64_t backlog; /* flood messages still queued then */
};
#define PING_MAGIC 0x70696e67666169ULL

struct cfg {
	const char *mode, *ifname;
	uint8_t peer[6];
	uint16_t flood_tag, flood_peer_tag, ping_tag, ping_peer_tag;
	uint64_t count, gap_us, timeout_s;
};

static void die_usage(const char *why)
{
	fprintf(stderr, "unet-fair: %s\n"
			"usage: unet-fair probe|sink IFACE --peer MAC --flood-tag T --flood-peer-tag P\n"
			"       --ping-tag T --ping-peer-tag P [--count N] [--gap-us U] [--timeout S]\n",
		why);
	exit(2);
}

static uint16_t parse_tag(const char *s, const char *name)
{
	uint64_t v;

	if (parse_u64(s, 65535, &v) || !v) {
		fprintf(stderr, "unet-fair: %s: not a tag 1-65535: '%s'\n", name, s);
		exit(2);
	}
	return (uint16_t)v;
}

static void parse_args(int argc, char **argv, struct cfg *c)
{
	static const struct option opts[] = {
		{ "peer", required_argument, NULL, 'p' },     { "flood-tag", required_argument, NULL, 'f' },
		{ "flood-peer-tag", required_argument, NULL, 'F' },
		{ "ping-tag", required_argument, NULL, 'g' }, { "ping-peer-tag", required_argument, NULL, 'G' },
		{ "count", required_argument, NULL, 'n' },    { "gap-us", required_argument, NULL, 'u' },
		{ "timeout", required_argument, NULL, 't' },  { NULL, 0, NULL, 0 },
	};
	bool peer = false;
	int o;

	c->count = 2000;
	c->gap_us = 200;
	c->timeout_s = 60;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'p':
			if (unet_parse_mac(optarg, c->peer))
				die_usage("--peer: not a MAC address");
			peer = true;
			break;
		case 'f': c->flood_tag = parse_tag(optarg, "--flood-tag"); break;
		case 'F': c->flood_peer_tag = parse_tag(optarg, "--flood-peer-tag"); break;
		case 'g': c->ping_tag = parse_tag(optarg, "--ping-tag"); break;
		case 'G': c->ping_peer_tag = parse_tag(optarg, "--ping-peer-tag"); break;
		case 'n':
			if (parse_u64(optarg, MAX_COUNT, &c->count) || !c->count)
				die_usage("--count: 1-100000");
			break;
		case 'u':
			if (parse_u64(optarg, 1000000, &c->gap_us))
				die_usage("--gap-us: 0-1000000");
			break;
		case 't':
			if (parse_u64(optarg, 3600, &c->timeout_s) || !c->timeout_s)
				die_usage("--timeout: 1-3600");
			break;
		default:
			die_usage("bad option");
		}
	}
	if (argc - optind != 2)
		die_usage("want a mode and an interface");
	c->mode = argv[optind];
	c->ifname = argv[optind + 1];
	if (!peer || !c->flood_tag || !c->flood_peer_tag || !c->ping_tag || !c->ping_peer_tag)
		die_usage("--peer and all four tags are required");
}

static struct unet_endpoint *open_ep(const char *ifname, bool big)
{
	UNET_OPTS_INIT(unet_endpoint_opts, eo);
	struct unet_endpoint *ep;

	if (big) {
		eo.segment_size = FLOOD_SEGMENT;
		eo.tx_size = eo.comp_size = eo.rx_size = eo.fill_size = FLOOD_RING;
	}
	ep = unet_endpoint__create(ifname, &eo);
	if (!ep) {
		fprintf(stderr, "unet-fair: cannot create an endpoint on %s: %s\n", ifname,
			strerror(errno));
		exit(1);
	}
	return ep;
}

static struct unet_channel *open_ch(struct unet_endpoint *ep, uint16_t tag, const uint8_t peer[6],
				    uint16_t peer_tag)
{
	struct unet_channel *ch = unet_channel__open(ep, tag, peer, peer_tag, NULL);

	if (!ch) {
		fprintf(stderr, "unet-fair: cannot open channel %u: %s\n", tag, strerror(errno));
		exit(1);
	}
	return ch;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The q-quantile (0..1) of the n sorted values in v. */
static uint64_t quantile(const uint64_t *v, uint64_t n, double q)
{
	uint64_t i = (uint64_t)(q * (double)(n - 1) + 0.5);

	return v[i < n ? i : n - 1];
}

static int run_probe(const struct cfg *c)
{
	struct unet_endpoint *ef = open_ep(c->ifname, true), *ep = open_ep(c->ifname, false);
	struct unet_channel *flood = open_ch(ef, c->flood_tag, c->peer, c->flood_peer_tag);
	struct unet_channel *ping = open_ch(ep, c->ping_tag, c->peer, c->ping_peer_tag);
	uint64_t *backlogs = calloc(c->count, sizeof(*backlogs));
	uint64_t fsent = 0, pings = 0;
	double end = now_s() + (double)c->timeout_s, next = 0;
	uint8_t msg[FLOOD_LEN] = { 0 };

	if (!backlogs)
		return 1;
	fprintf(stderr, "ready\n");
	while (pings < c->count && !stop_flag) {
		double now = now_s();

		if (now > end) {
			fprintf(stderr, "unet-fair: timeout after %" PRIu64 " pings\n", pings);
			return 1;
		}
		/* Keep the flood's queue full: the daemon must always have
		 * thousands of its frames to send. */
		unet_endpoint__complete(ef);
		for (int k = 0; k < 256 && unet_endpoint__tx_pending(ef) < FLOOD_RING - 64; k++) {
			int ret;

			memcpy(msg, &fsent, sizeof(fsent));
			ret = unet_channel__send_copy(flood, msg, sizeof(msg));
			if (ret == -EAGAIN)
				break;
			if (ret < 0) {
				fprintf(stderr, "unet-fair: flood send: %s\n", strerror(-ret));
				return 1;
			}
			fsent++;
		}
		/* A ping only when the last one has left: this client stays
		 * light (one message queued at a time). */
		unet_endpoint__complete(ep);
		if (now >= next && !unet_endpoint__tx_pending(ep)) {
			struct ping p = { .magic = PING_MAGIC, .n = pings };
			int ret;

			unet_endpoint__complete(ef);
			p.backlog = unet_endpoint__tx_pending(ef);
			p.stamp = fsent - p.backlog;
			ret = unet_channel__send_copy(ping, &p, sizeof(p));
			if (ret == -EAGAIN)
				continue;
			if (ret < 0) {
				fprintf(stderr, "unet-fair: ping send: %s\n", strerror(-ret));
				return 1;
			}
			backlogs[pings++] = p.backlog;
			next = now + (double)c->gap_us / 1e6;
		}
	}
	unet_endpoint__flush(ep, 1000);
	qsort(backlogs, pings, sizeof(*backlogs), cmp_u64);
	printf("{\"pings\": %" PRIu64 ", \"flood_sent\": %" PRIu64 ", \"backlog_p10\": %" PRIu64
	       ", \"backlog_p50\": %" PRIu64 "}\n",
	       pings, fsent, pings ? quantile(backlogs, pings, 0.1) : 0,
	       pings ? quantile(backlogs, pings, 0.5) : 0);
	free(backlogs);
	unet_endpoint__destroy(ep);
	unet_endpoint__destroy(ef);
	return pings == c->count ? 0 : 1;
}

static int run_sink(const struct cfg *c)
{
	struct unet_endpoint *ep = open_ep(c->ifname, true);
	struct unet_channel *flood = open_ch(ep, c->flood_tag, c->peer, c->flood_peer_tag);
	struct unet_channel *ping = open_ch(ep, c->ping_tag, c->peer, c->ping_peer_tag);
	uint64_t *waits = calloc(c->count, sizeof(*waits));
	/* expect: the next ping's number; pings lost on the way (the sink's
	 * queue overflowing under the flood) are counted, not waited for. */
	uint64_t pings = 0, expect = 0, lost = 0, floods = 0, next_flood = 0, bad = 0;
	double end = now_s() + (double)c->timeout_s;
	struct unet_recv_desc d[64];

	if (!waits)
		return 1;
	fprintf(stderr, "ready\n");
	while (expect < c->count && !stop_flag && now_s() < end) {
		int n = unet_endpoint__recv(ep, d, 64);

		if (n < 0) {
			fprintf(stderr, "unet-fair: recv: %s\n", strerror(-n));
			return 1;
		}
		for (int i = 0; i < n; i++) {
			struct ping p;
			uint64_t seq;

			if (d[i].channel == flood && d[i].len == FLOOD_LEN) {
				memcpy(&seq, d[i].data, sizeof(seq));
				if (seq + 1 > next_flood)
					next_flood = seq + 1;
				floods++;
			} else if (d[i].channel == ping && d[i].len == sizeof(p)) {
				memcpy(&p, d[i].data, sizeof(p));
				if (p.magic != PING_MAGIC || p.n < expect || p.n >= c->count) {
					bad++;
					continue;
				}
				lost += p.n - expect;
				expect = p.n + 1;
				/* Flood messages sent ahead of it since its stamp. */
				waits[pings++] = next_flood > p.stamp ? next_flood - p.stamp : 0;
			} else {
				bad++;
			}
		}
		if (n)
			unet_endpoint__release(ep, d, (unsigned int)n);
	}
	qsort(waits, pings, sizeof(*waits), cmp_u64);
	printf("{\"pings\": %" PRIu64 ", \"lost\": %" PRIu64 ", \"floods\": %" PRIu64
	       ", \"bad\": %" PRIu64 ", \"wait_p50\": %" PRIu64 ", \"wait_p90\": %" PRIu64
	       ", \"wait_max\": %" PRIu64 "}\n",
	       pings, lost, floods, bad, pings ? quantile(waits, pings, 0.5) : 0,
	       pings ? quantile(waits, pings, 0.9) : 0, pings ? waits[pings - 1] : 0);
	free(waits);
	unet_endpoint__destroy(ep);
	if (expect != c->count)
		fprintf(stderr, "unet-fair: timeout: the last ping seen was %" PRIu64 " of %" PRIu64 "\n",
			expect, c->count);
	return expect == c->count && !bad ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct cfg c = { 0 };

	parse_args(argc, argv, &c);
	setvbuf(stdout, NULL, _IOLBF, 0);
	catch_stop_signals();
	if (!strcmp(c.mode, "probe"))
		return run_probe(&c);
	if (!strcmp(c.mode, "sink"))
		return run_sink(&c);
	die_usage("mode is probe or sink");
	return 2;
}
