/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet-peer - the test peer of the integration suite.  One program, several
 * modes, using only the public API of include/unet-xdp/unet.h:
 *
 *   echo   echo every message back on the channel it came in on
 *   sizes  send one message of every size 1..max_payload, check each echo
 *   send   send --count sequence-numbered messages per channel, paced
 *   recv   expect --count sequence-numbered messages per channel
 *   hold   hold an endpoint and its channels, count what arrives
 *   stats  print the interface counters and channels (no endpoint)
 *
 * Every mode that opens an endpoint prints one line
 *   ready endpoint=ID nqueues=N queue_mask=0xM max_payload=P mode=MODE zerocopy=Z
 * on stdout once its channels are open, so a script can wait for it.
 * Every loop is bounded in time by --timeout (and in count where it sends).
 * Exit status: 0 on success, 1 on any failure, 2 on a usage error.
 */
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <unet-xdp/unet.h>
#include "tool_common.h"

#define MAX_CHANNELS 64
#define RECV_BATCH 64
#define SEQ_BYTES 8

static const char *prog = "unet-peer";

struct chan_spec {
	uint16_t tag, peer_tag;
	uint8_t peer_mac[6];
	int queue; /* tx queue, -1: --queue or the endpoint's first queue */
};

struct cfg {
	const char *mode;
	const char *ifname;
	struct chan_spec ch[MAX_CHANNELS];
	unsigned int nch;
	unsigned int ntags, npeers, npeer_tags;
	enum unet_xdp_mode xdp_mode;
	double timeout;	     /* seconds */
	uint64_t count;	     /* messages (per channel for send/recv) */
	bool count_set;
	double rate;	     /* messages per second over all channels, 0: unpaced */
	int queue;	     /* tx queue for every channel, -1: default */
	uint32_t queue_mask; /* receive queues to bind, 0: all */
	int queues;	     /* expected number of queues, -1: don't check */
	uint32_t size;	     /* payload size for send */
	uint64_t seq_base;   /* send: first sequence number */
	uint32_t max_size;   /* sizes: largest size to try, 0: max_payload */
	long long expect;    /* hold: exact number of messages expected, -1 any */
	uint32_t linger_ms;  /* recv: keep receiving after the last one */
	bool verbose;
	bool quiet;
};

struct peer {
	struct cfg *cfg;
	struct unet_endpoint *ep;
	struct unet_endpoint_info info;
	struct unet_channel *ch[MAX_CHANNELS];
};

/* ---- small helpers ------------------------------------------------------ */

static void err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void sleep_s(double s)
{
	struct timespec ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

static void log_fn(enum unet_log_level level, const char *msg, void *ctx)
{
	static const char *names[] = { "error", "warn", "info", "debug" };
	const struct cfg *cfg = ctx;
	size_t n;

	if (level == UNET_LOG_DEBUG && !cfg->verbose)
		return;
	n = strlen(msg);
	fprintf(stderr, "%s: libunet %s: %s%s", prog,
		(unsigned int)level < 4 ? names[level] : "?", msg,
		n && msg[n - 1] == '\n' ? "" : "\n");
}

static const char *mode_name(enum unet_xdp_mode m)
{
	switch (m) {
	case UNET_XDP_MODE_NATIVE:
		return "native";
	case UNET_XDP_MODE_SKB:
		return "skb";
	default:
		return "auto";
	}
}


static int parse_double(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < 0 || v != v)
		return -1;
	*out = v;
	return 0;
}

/* Byte j of the message of size n (sizes mode). */
static inline uint8_t size_pattern(uint32_t n, uint32_t j)
{
	return (uint8_t)((n * 29u) + (j * 13u) + (j >> 8) + 0x3cu);
}

/* ---- options ------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s MODE IFACE [options]\n"
		"modes: echo | sizes | send | recv | hold | stats\n"
		"channels (one per --tag; --peer once applies to all):\n"
		"  --tag T --peer MAC --peer-tag P   (repeatable, in order)\n"
		"  --channels T:P:MAC[/Q][,...]      (local tag, peer tag, peer MAC,\n"
		"                                     send queue)\n"
		"options:\n"
		"  --xdp-mode native|skb|auto   mode if the program is not attached yet\n"
		"  --timeout S        bound on the whole run (default 10)\n"
		"  --count N          echo: messages to echo (default: until timeout)\n"
		"                     send/recv: messages per channel (default 1000)\n"
		"  --rate R           send: messages per second over all channels (0: unpaced)\n"
		"  --size B           send: payload bytes (>= 8, default 64)\n"
		"  --seq-base S       send: first sequence number (several senders, one\n"
		"                     channel: give each its own range of recv's --count)\n"
		"  --queue Q          send on queue Q (unet_channel_opts.tx_queue; default:\n"
		"                     the endpoint's lowest queue)\n"
		"  --queue-mask M     bind only the receive queues in bit mask M (default all)\n"
		"  --queues N         fail unless the endpoint bound N queues\n"
		"  --max-size B       sizes: stop at B instead of max_payload\n"
		"  --expect N         hold: exactly N messages must arrive\n"
		"  --expect-none      hold: nothing may arrive (= --expect 0)\n"
		"  --linger MS        recv: keep receiving MS after the last (default 200)\n"
		"  -v, --verbose      library debug logs;  -q, --quiet\n"
		"  -h, --help\n",
		prog);
}

enum {
	OPT_TAG = 256,
	OPT_PEER,
	OPT_PEER_TAG,
	OPT_CHANNELS,
	OPT_XDP_MODE,
	OPT_TIMEOUT,
	OPT_COUNT,
	OPT_RATE,
	OPT_SIZE,
	OPT_QUEUE,
	OPT_QUEUES,
	OPT_QUEUE_MASK,
	OPT_MAX_SIZE,
	OPT_EXPECT,
	OPT_EXPECT_NONE,
	OPT_LINGER,
	OPT_SEQ_BASE,
};

static int add_channel_list(struct cfg *cfg, const char *arg)
{
	char *dup = strdup(arg), *save = NULL, *item;
	int ret = 0;

	if (!dup)
		return -1;
	for (item = strtok_r(dup, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *p1 = strchr(item, ':'), *p2, *slash = strchr(item, '/');
		uint64_t t, p, q = 0;

		if (!p1 || !(p2 = strchr(p1 + 1, ':'))) {
			ret = -1;
			break;
		}
		*p1 = *p2 = '\0';
		if (slash) {
			*slash = '\0';
			if (parse_u64(slash + 1, 1023, &q)) {
				ret = -1;
				break;
			}
		}
		if (cfg->nch >= MAX_CHANNELS || parse_u64(item, 65535, &t) || t == 0 ||
		    parse_u64(p1 + 1, 65535, &p) || p == 0 ||
		    unet_parse_mac(p2 + 1, cfg->ch[cfg->nch].peer_mac)) {
			ret = -1;
			break;
		}
		cfg->ch[cfg->nch].tag = (uint16_t)t;
		cfg->ch[cfg->nch].peer_tag = (uint16_t)p;
		cfg->ch[cfg->nch].queue = slash ? (int)q : -1;
		cfg->nch++;
		cfg->ntags = cfg->npeers = cfg->npeer_tags = cfg->nch;
	}
	free(dup);
	return ret;
}

static int parse_args(int argc, char **argv, struct cfg *cfg)
{
	static const struct option opts[] = {
		{ "tag", required_argument, NULL, OPT_TAG },
		{ "peer", required_argument, NULL, OPT_PEER },
		{ "peer-tag", required_argument, NULL, OPT_PEER_TAG },
		{ "channels", required_argument, NULL, OPT_CHANNELS },
		{ "xdp-mode", required_argument, NULL, OPT_XDP_MODE },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "rate", required_argument, NULL, OPT_RATE },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "queue", required_argument, NULL, OPT_QUEUE },
		{ "queues", required_argument, NULL, OPT_QUEUES },
		{ "queue-mask", required_argument, NULL, OPT_QUEUE_MASK },
		{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
		{ "expect", required_argument, NULL, OPT_EXPECT },
		{ "expect-none", no_argument, NULL, OPT_EXPECT_NONE },
		{ "linger", required_argument, NULL, OPT_LINGER },
		{ "seq-base", required_argument, NULL, OPT_SEQ_BASE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint8_t first_mac[6] = { 0 };
	uint64_t v;
	int c;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		exit(0);
	}
	cfg->mode = argv[1];
	cfg->timeout = 10;
	cfg->count = 1000;
	cfg->queue = -1;
	cfg->queues = -1;
	cfg->size = 64;
	cfg->expect = -1;
	cfg->linger_ms = 200;
	for (unsigned int i = 0; i < MAX_CHANNELS; i++)
		cfg->ch[i].queue = -1;

	optind = 1;
	while ((c = getopt_long(argc - 1, argv + 1, "vqh", opts, NULL)) != -1) {
		switch (c) {
		case OPT_TAG:
			if (cfg->ntags >= MAX_CHANNELS || parse_u64(optarg, 65535, &v) || v == 0) {
				err("bad --tag '%s' (1..65535)", optarg);
				return 2;
			}
			cfg->ch[cfg->ntags++].tag = (uint16_t)v;
			break;
		case OPT_PEER_TAG:
			if (cfg->npeer_tags >= MAX_CHANNELS || parse_u64(optarg, 65535, &v) || v == 0) {
				err("bad --peer-tag '%s' (1..65535)", optarg);
				return 2;
			}
			cfg->ch[cfg->npeer_tags++].peer_tag = (uint16_t)v;
			break;
		case OPT_PEER:
			if (cfg->npeers >= MAX_CHANNELS ||
			    unet_parse_mac(optarg, cfg->ch[cfg->npeers].peer_mac)) {
				err("bad --peer '%s' (aa:bb:cc:dd:ee:ff)", optarg);
				return 2;
			}
			if (cfg->npeers == 0)
				memcpy(first_mac, cfg->ch[0].peer_mac, 6);
			cfg->npeers++;
			break;
		case OPT_CHANNELS:
			if (cfg->ntags != cfg->nch || cfg->npeers != cfg->nch ||
			    cfg->npeer_tags != cfg->nch) {
				err("--channels cannot follow an incomplete --tag/--peer/--peer-tag");
				return 2;
			}
			if (add_channel_list(cfg, optarg)) {
				err("bad --channels '%s' (T:P:MAC[,...])", optarg);
				return 2;
			}
			break;
		case OPT_XDP_MODE:
			if (!strcmp(optarg, "native"))
				cfg->xdp_mode = UNET_XDP_MODE_NATIVE;
			else if (!strcmp(optarg, "skb"))
				cfg->xdp_mode = UNET_XDP_MODE_SKB;
			else if (!strcmp(optarg, "auto"))
				cfg->xdp_mode = UNET_XDP_MODE_AUTO;
			else {
				err("bad --xdp-mode '%s' (native|skb|auto)", optarg);
				return 2;
			}
			break;
		case OPT_TIMEOUT:
			if (parse_double(optarg, &cfg->timeout) || cfg->timeout <= 0 ||
			    cfg->timeout > 3600) {
				err("bad --timeout '%s' (seconds, > 0, <= 3600)", optarg);
				return 2;
			}
			break;
		case OPT_COUNT:
			if (parse_u64(optarg, 100000000, &cfg->count)) {
				err("bad --count '%s'", optarg);
				return 2;
			}
			cfg->count_set = true;
			break;
		case OPT_RATE:
			if (parse_double(optarg, &cfg->rate)) {
				err("bad --rate '%s'", optarg);
				return 2;
			}
			break;
		case OPT_SIZE:
			if (parse_u64(optarg, 65535, &v) || v < SEQ_BYTES) {
				err("bad --size '%s' (>= %d)", optarg, SEQ_BYTES);
				return 2;
			}
			cfg->size = (uint32_t)v;
			break;
		case OPT_QUEUE:
			if (parse_u64(optarg, 1023, &v)) {
				err("bad --queue '%s'", optarg);
				return 2;
			}
			cfg->queue = (int)v;
			break;
		case OPT_QUEUES:
			if (parse_u64(optarg, 1024, &v) || v == 0) {
				err("bad --queues '%s'", optarg);
				return 2;
			}
			cfg->queues = (int)v;
			break;
		case OPT_QUEUE_MASK:
			if (parse_u64(optarg, UINT32_MAX, &v) || v == 0) {
				err("bad --queue-mask '%s'", optarg);
				return 2;
			}
			cfg->queue_mask = (uint32_t)v;
			break;
		case OPT_MAX_SIZE:
			if (parse_u64(optarg, 65535, &v) || v == 0) {
				err("bad --max-size '%s'", optarg);
				return 2;
			}
			cfg->max_size = (uint32_t)v;
			break;
		case OPT_EXPECT:
			if (parse_u64(optarg, 100000000, &v)) {
				err("bad --expect '%s'", optarg);
				return 2;
			}
			cfg->expect = (long long)v;
			break;
		case OPT_EXPECT_NONE:
			cfg->expect = 0;
			break;
		case OPT_LINGER:
			if (parse_u64(optarg, 60000, &v)) {
				err("bad --linger '%s' (ms)", optarg);
				return 2;
			}
			cfg->linger_ms = (uint32_t)v;
			break;
		case OPT_SEQ_BASE:
			if (parse_u64(optarg, 100000000, &cfg->seq_base)) {
				err("bad --seq-base '%s'", optarg);
				return 2;
			}
			break;
		case 'v':
			cfg->verbose = true;
			break;
		case 'q':
			cfg->quiet = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return 2;
		}
	}
	/* optind counts in argv + 1. */
	if (optind + 1 < argc)
		cfg->ifname = argv[optind + 1];
	if (optind + 2 < argc) {
		err("unexpected argument '%s'", argv[optind + 2]);
		return 2;
	}
	if (!cfg->ifname) {
		err("missing IFACE");
		usage(stderr);
		return 2;
	}

	/* Complete the --tag/--peer/--peer-tag channels. */
	if (cfg->ntags > cfg->nch) {
		unsigned int i;

		if (cfg->npeer_tags != cfg->ntags) {
			err("%u --tag but %u --peer-tag", cfg->ntags, cfg->npeer_tags);
			return 2;
		}
		if (cfg->npeers == 1 && cfg->ntags > 1) {
			for (i = 1; i < cfg->ntags; i++)
				memcpy(cfg->ch[i].peer_mac, first_mac, 6);
		} else if (cfg->npeers != cfg->ntags) {
			err("%u --tag but %u --peer", cfg->ntags, cfg->npeers);
			return 2;
		}
		cfg->nch = cfg->ntags;
	} else if (cfg->npeers != cfg->nch || cfg->npeer_tags != cfg->nch) {
		err("--peer/--peer-tag without --tag");
		return 2;
	}
	for (unsigned int i = 0; i < cfg->nch; i++)
		for (unsigned int j = 0; j < i; j++)
			if (cfg->ch[i].tag == cfg->ch[j].tag) {
				err("tag %u given twice", cfg->ch[i].tag);
				return 2;
			}
	if (strcmp(cfg->mode, "stats") && cfg->nch == 0) {
		err("mode %s needs at least one channel (--tag/--peer/--peer-tag)", cfg->mode);
		return 2;
	}
	return 0;
}

/* ---- endpoint set-up ---------------------------------------------------- */

static int peer_open(struct peer *p)
{
	struct cfg *cfg = p->cfg;
	UNET_OPTS_INIT(unet_endpoint_opts, eo);
	unsigned int i;
	int ret;

	eo.mode = cfg->xdp_mode;
	eo.queue_mask = cfg->queue_mask;
	/* The library itself waits out a queue still held by a socket the
	 * kernel is freeing (EBUSY for a few ms after its owner exited). */
	p->ep = unet_endpoint__create(cfg->ifname, &eo);
	if (!p->ep) {
		err("cannot create an endpoint on %s: %s", cfg->ifname, strerror(errno));
		return -1;
	}
	ret = unet_endpoint__info(p->ep, &p->info);
	if (ret < 0) {
		err("unet_endpoint__info: %s", strerror(-ret));
		return -1;
	}
	if (cfg->queues > 0 && p->info.nqueues != (uint32_t)cfg->queues) {
		err("endpoint bound %u queues, expected %d", p->info.nqueues, cfg->queues);
		return -1;
	}
	for (i = 0; i < cfg->nch; i++) {
		UNET_OPTS_INIT(unet_channel_opts, co);
		char mac[18];

		if (cfg->ch[i].queue >= 0)
			co.tx_queue = cfg->ch[i].queue;
		else if (cfg->queue >= 0)
			co.tx_queue = cfg->queue;
		else /* the lowest queue the endpoint has */
			co.tx_queue = p->info.queue_mask ? __builtin_ctz(p->info.queue_mask) : 0;
		p->ch[i] = unet_channel__open(p->ep, cfg->ch[i].tag, cfg->ch[i].peer_mac,
					      cfg->ch[i].peer_tag, &co);
		if (!p->ch[i]) {
			err("cannot open channel tag %u (peer %s tag %u, queue %d): %s",
			    cfg->ch[i].tag, unet_format_mac(cfg->ch[i].peer_mac, mac),
			    cfg->ch[i].peer_tag, co.tx_queue, strerror(errno));
			return -1;
		}
	}
	printf("ready endpoint=%u nqueues=%u queue_mask=%#x max_payload=%u mode=%s zerocopy=%d\n",
	       p->info.id, p->info.nqueues, p->info.queue_mask, p->info.max_payload,
	       mode_name(p->info.mode), p->info.zerocopy ? 1 : 0);
	fflush(stdout);
	return 0;
}

static void peer_close(struct peer *p)
{
	unsigned int i;

	for (i = 0; i < p->cfg->nch; i++)
		unet_channel__close(p->ch[i]);
	unet_endpoint__destroy(p->ep);
}

static int chan_index(const struct peer *p, const struct unet_channel *ch)
{
	unsigned int i;

	for (i = 0; i < p->cfg->nch; i++)
		if (p->ch[i] == ch)
			return (int)i;
	return -1;
}

/* Wait for something to receive, at most until deadline and 50 ms. */
static int wait_rx(struct peer *p, double deadline)
{
	double left = deadline - now_s();
	int ms, ret;

	if (left <= 0)
		return 0;
	ms = left > 0.05 ? 50 : (int)(left * 1000) + 1;
	ret = unet_endpoint__wait(p->ep, ms);
	if (ret < 0 && ret != -EINTR) {
		err("unet_endpoint__wait: %s", strerror(-ret));
		return ret;
	}
	return 0;
}

/* Send with retries while the send queue is full, until deadline. */
static int send_retry(struct peer *p, struct unet_channel *ch, const void *data, size_t len,
		      double deadline)
{
	for (;;) {
		int ret = unet_channel__send_copy(ch, data, len);

		if (ret != -EAGAIN)
			return ret;
		unet_endpoint__complete(p->ep);
		if (stop_flag || now_s() > deadline)
			return -ETIMEDOUT;
		sleep_s(20e-6);
	}
}

/* Reap completions for a while so queued frames leave before destroy. */
static void drain_tx(struct peer *p, double max_s)
{
	double end = now_s() + max_s;
	int idle = 0;

	while (idle < 5 && now_s() < end) {
		if (unet_endpoint__complete(p->ep) > 0)
			idle = 0;
		else
			idle++;
		sleep_s(2e-3);
	}
}

static void print_ep_stats(struct peer *p, const char *who)
{
	struct unet_endpoint_stats st;

	if (unet_endpoint__stats(p->ep, &st) < 0)
		return;
	fprintf(stderr,
		"%s: %s endpoint stats: rx_msgs=%" PRIu64 " tx_msgs=%" PRIu64
		" rx_dropped=%" PRIu64 " rx_ring_full=%" PRIu64 " rx_fill_empty=%" PRIu64
		" rx_invalid=%" PRIu64 " tx_invalid=%" PRIu64 " rx_unknown_channel=%" PRIu64 "\n",
		prog, who, st.rx_msgs, st.tx_msgs, st.rx_dropped, st.rx_ring_full,
		st.rx_fill_empty, st.rx_invalid_descs, st.tx_invalid_descs, st.rx_unknown_channel);
}

static uint64_t foreign_msgs(struct peer *p)
{
	struct unet_endpoint_stats st;

	if (unet_endpoint__stats(p->ep, &st) < 0)
		return 0;
	return st.rx_unknown_channel;
}

/* ---- modes -------------------------------------------------------------- */

static int mode_echo(struct peer *p)
{
	struct cfg *cfg = p->cfg;
	struct unet_recv_desc d[RECV_BATCH];
	double deadline = now_s() + cfg->timeout;
	uint64_t echoed = 0, foreign = 0;
	int failed = 0;

	while (!stop_flag && !failed && now_s() < deadline &&
	       (!cfg->count_set || echoed < cfg->count)) {
		int n = unet_endpoint__recv(p->ep, d, RECV_BATCH), i;

		if (n < 0) {
			err("unet_endpoint__recv: %s", strerror(-n));
			failed = 1;
			break;
		}
		if (n == 0) {
			if (wait_rx(p, deadline) < 0)
				failed = 1;
			continue;
		}
		for (i = 0; i < n; i++) {
			int ret;

			if (chan_index(p, d[i].channel) < 0) {
				foreign++;
				continue;
			}
			ret = send_retry(p, d[i].channel, d[i].data, d[i].len, deadline);
			if (ret < 0) {
				err("echo of a %u-byte message failed: %s", d[i].len, strerror(-ret));
				failed = 1;
				break;
			}
			echoed++;
		}
		if ((i = unet_endpoint__release(p->ep, d, (unsigned int)n)) < 0) {
			err("unet_endpoint__release: %s", strerror(-i));
			failed = 1;
		}
	}
	drain_tx(p, 0.2);
	if (!cfg->quiet)
		printf("echo echoed=%" PRIu64 " foreign=%" PRIu64 "\n", echoed, foreign);
	if (foreign) {
		err("%" PRIu64 " message(s) for channels this endpoint does not own", foreign);
		failed = 1;
	}
	if (cfg->count_set && echoed != cfg->count && !failed) {
		err("echoed %" PRIu64 " of %" PRIu64 " messages before the timeout", echoed,
		    cfg->count);
		failed = 1;
	}
	return failed ? 1 : 0;
}

static int mode_sizes(struct peer *p)
{
	struct cfg *cfg = p->cfg;
	struct unet_channel *ch = p->ch[0];
	uint32_t max = p->info.max_payload, n, j;
	double deadline = now_s() + cfg->timeout;
	uint8_t *buf;
	int ret, failed = 0;

	if (cfg->max_size && cfg->max_size < max)
		max = cfg->max_size;
	if (max == 0) {
		err("endpoint reports max_payload 0");
		return 1;
	}
	buf = malloc(max + 1);
	if (!buf) {
		err("out of memory");
		return 1;
	}
	for (n = 1; n <= max && !failed; n++) {
		bool got = false;

		for (j = 0; j < n; j++)
			buf[j] = size_pattern(n, j);
		ret = send_retry(p, ch, buf, n, deadline);
		if (ret < 0) {
			err("send of size %u failed: %s", n, strerror(-ret));
			failed = 1;
			break;
		}
		while (!got && !failed && !stop_flag) {
			struct unet_recv_desc d[RECV_BATCH];
			int k, i;

			if (now_s() > deadline) {
				err("no echo of size %u before the timeout", n);
				failed = 1;
				break;
			}
			k = unet_endpoint__recv(p->ep, d, RECV_BATCH);
			if (k < 0) {
				err("unet_endpoint__recv: %s", strerror(-k));
				failed = 1;
				break;
			}
			if (k == 0) {
				if (wait_rx(p, deadline) < 0) {
					failed = 1;
					break;
				}
				continue;
			}
			for (i = 0; i < k && !failed; i++) {
				const uint8_t *data = d[i].data;

				if (d[i].channel != ch) {
					err("size %u: message on another channel (tag %u)", n,
					    d[i].channel ? unet_channel__tag(d[i].channel) : 0);
					failed = 1;
				} else if (got || d[i].len != n) {
					err("size %u: echo has %u bytes%s", n, d[i].len,
					    got ? " (extra message)" : "");
					failed = 1;
				} else {
					for (j = 0; j < n; j++)
						if (data[j] != size_pattern(n, j))
							break;
					if (j < n) {
						err("size %u: mismatch at byte %u: got 0x%02x want 0x%02x",
						    n, j, data[j], size_pattern(n, j));
						failed = 1;
					}
					got = true;
				}
			}
			unet_endpoint__release(p->ep, d, (unsigned int)k);
		}
		if (stop_flag && !got && !failed) {
			err("interrupted at size %u", n);
			failed = 1;
		}
	}
	if (!failed) {
		/* One past the largest must be refused, with nothing sent. */
		uint32_t big = p->info.max_payload + 1;
		uint8_t *b2 = calloc(1, big);

		ret = b2 ? unet_channel__send_copy(ch, b2, big) : -ENOMEM;
		free(b2);
		if (ret != -EMSGSIZE) {
			err("send of %u bytes (max_payload + 1) returned %d, want -EMSGSIZE", big, ret);
			failed = 1;
		} else {
			printf("sizes ok 1..%u\n", max);
		}
	}
	free(buf);
	drain_tx(p, 0.1);
	return failed ? 1 : 0;
}

static int mode_send(struct peer *p)
{
	struct cfg *cfg = p->cfg;
	uint64_t total = cfg->count * cfg->nch, sent = 0, eagain = 0;
	uint32_t size = cfg->size, j;
	double start = now_s(), deadline = start + cfg->timeout, t;
	uint8_t *buf;
	int failed = 0;

	if (size > p->info.max_payload) {
		err("--size %u exceeds max_payload %u", size, p->info.max_payload);
		return 1;
	}
	buf = malloc(size);
	if (!buf) {
		err("out of memory");
		return 1;
	}
	while (sent < total && !stop_flag) {
		uint64_t allowed = total;

		t = now_s();
		if (t > deadline) {
			err("sent only %" PRIu64 " of %" PRIu64 " messages in %.1f s", sent, total,
			    cfg->timeout);
			failed = 1;
			break;
		}
		if (cfg->rate > 0) {
			double a = (t - start) * cfg->rate + 1;

			allowed = a < (double)total ? (uint64_t)a : total;
		}
		if (sent >= allowed) {
			double next = start + (double)sent / cfg->rate;

			sleep_s(next - t > 1e-3 ? 1e-3 : next - t);
			continue;
		}
		while (sent < allowed) {
			/* Round robin over the channels; seq counts per channel. */
			unsigned int c = (unsigned int)(sent % cfg->nch);
			uint64_t seq = cfg->seq_base + sent / cfg->nch, be = htobe64(seq);
			int ret;

			memcpy(buf, &be, SEQ_BYTES);
			for (j = SEQ_BYTES; j < size; j++)
				buf[j] = seq_pattern(seq, j);
			ret = unet_channel__send_copy(p->ch[c], buf, size);
			if (ret == -EAGAIN) {
				eagain++;
				unet_endpoint__complete(p->ep);
				sleep_s(20e-6);
				break; /* re-check the deadline */
			}
			if (ret < 0) {
				err("send of message %" PRIu64 " failed: %s", sent, strerror(-ret));
				failed = 1;
				break;
			}
			sent++;
		}
		if (failed)
			break;
	}
	drain_tx(p, 0.5);
	t = now_s() - start;
	if (!cfg->quiet)
		printf("send sent=%" PRIu64 " channels=%u size=%u elapsed=%.3f rate=%.0f eagain=%" PRIu64
		       "\n",
		       sent, cfg->nch, size, t, t > 0 ? (double)sent / t : 0.0, eagain);
	if (stop_flag && sent < total) {
		err("interrupted after %" PRIu64 " of %" PRIu64 " messages", sent, total);
		failed = 1;
	}
	free(buf);
	return failed ? 1 : 0;
}

struct rx_track {
	uint8_t *seen; /* bitmap of count bits */
	uint64_t unique, dup, out_of_range, corrupt, short_msgs;
};

static int mode_recv(struct peer *p)
{
	struct cfg *cfg = p->cfg;
	struct rx_track tr[MAX_CHANNELS];
	struct unet_recv_desc d[RECV_BATCH];
	uint64_t want = cfg->count, total_unique = 0, foreign = 0, foreign_lib;
	double start = now_s(), deadline = start + cfg->timeout, done_at = 0, end;
	unsigned int c;
	int failed = 0;

	memset(tr, 0, sizeof(tr));
	for (c = 0; c < cfg->nch; c++) {
		tr[c].seen = calloc(1, want / 8 + 1);
		if (!tr[c].seen) {
			err("out of memory");
			failed = 1;
			goto out;
		}
	}
	end = deadline;
	while (!stop_flag && now_s() < end) {
		int n = unet_endpoint__recv(p->ep, d, RECV_BATCH), i;

		if (n < 0) {
			err("unet_endpoint__recv: %s", strerror(-n));
			failed = 1;
			break;
		}
		if (n == 0) {
			if (wait_rx(p, end) < 0) {
				failed = 1;
				break;
			}
			continue;
		}
		for (i = 0; i < n; i++) {
			int ci = chan_index(p, d[i].channel);
			struct rx_track *t;
			const uint8_t *data = d[i].data;
			uint64_t seq, be;
			uint32_t j;

			if (ci < 0) {
				foreign++;
				continue;
			}
			t = &tr[ci];
			if (d[i].len < SEQ_BYTES) {
				t->short_msgs++;
				continue;
			}
			memcpy(&be, data, SEQ_BYTES);
			seq = be64toh(be);
			if (seq >= want) {
				t->out_of_range++;
				continue;
			}
			for (j = SEQ_BYTES; j < d[i].len; j++)
				if (data[j] != seq_pattern(seq, j))
					break;
			if (j < d[i].len) {
				if (t->corrupt++ == 0)
					err("tag %u seq %" PRIu64 ": byte %u is 0x%02x, want 0x%02x",
					    cfg->ch[ci].tag, seq, j, data[j], seq_pattern(seq, j));
				continue;
			}
			if (t->seen[seq / 8] & (1u << (seq % 8))) {
				t->dup++;
			} else {
				t->seen[seq / 8] |= (uint8_t)(1u << (seq % 8));
				t->unique++;
				total_unique++;
			}
		}
		if ((i = unet_endpoint__release(p->ep, d, (unsigned int)n)) < 0) {
			err("unet_endpoint__release: %s", strerror(-i));
			failed = 1;
			break;
		}
		if (!done_at && total_unique == want * cfg->nch) {
			/* All there: linger a little to catch duplicates. */
			done_at = now_s();
			end = done_at + cfg->linger_ms / 1000.0;
			if (end > deadline)
				end = deadline;
		}
	}
out:
	foreign_lib = p->ep ? foreign_msgs(p) : 0;
	{
		uint64_t r = 0, l = 0, du = 0, bad = 0;

		for (c = 0; c < cfg->nch && tr[c].seen; c++) {
			uint64_t lost = want - tr[c].unique;

			bad += tr[c].out_of_range + tr[c].corrupt + tr[c].short_msgs;
			r += tr[c].unique;
			l += lost;
			du += tr[c].dup;
			if (!cfg->quiet && cfg->nch > 1)
				printf("recv tag=%u received=%" PRIu64 " lost=%" PRIu64 " dup=%" PRIu64
				       " bad=%" PRIu64 "\n",
				       cfg->ch[c].tag, tr[c].unique, lost, tr[c].dup,
				       tr[c].out_of_range + tr[c].corrupt + tr[c].short_msgs);
		}
		printf("recv received=%" PRIu64 " lost=%" PRIu64 " dup=%" PRIu64 " bad=%" PRIu64
		       " foreign=%" PRIu64 " elapsed=%.3f\n",
		       r, l, du, bad, foreign + foreign_lib, (done_at ? done_at : now_s()) - start);
		if (l || du || bad || foreign || foreign_lib) {
			if (p->ep)
				print_ep_stats(p, "recv");
			if (!failed)
				err("expected %" PRIu64 " unique messages on each of %u channel(s)",
				    want, cfg->nch);
			failed = 1;
		}
	}
	for (c = 0; c < cfg->nch; c++)
		free(tr[c].seen);
	return failed ? 1 : 0;
}

static int mode_hold(struct peer *p)
{
	struct cfg *cfg = p->cfg;
	struct unet_recv_desc d[RECV_BATCH];
	double deadline = now_s() + cfg->timeout;
	uint64_t got = 0, foreign = 0;
	int failed = 0;

	while (!stop_flag && now_s() < deadline) {
		int n = unet_endpoint__recv(p->ep, d, RECV_BATCH), i;

		if (n < 0) {
			err("unet_endpoint__recv: %s", strerror(-n));
			failed = 1;
			break;
		}
		if (n == 0) {
			if (wait_rx(p, deadline) < 0) {
				failed = 1;
				break;
			}
			continue;
		}
		for (i = 0; i < n; i++) {
			int ci = chan_index(p, d[i].channel);

			if (ci < 0) {
				foreign++;
				continue;
			}
			got++;
			if (!cfg->quiet)
				printf("got tag=%u len=%u\n", cfg->ch[ci].tag, d[i].len);
			if (cfg->expect >= 0 && got > (uint64_t)cfg->expect)
				err("unexpected message on tag %u (%u bytes)", cfg->ch[ci].tag,
				    d[i].len);
		}
		fflush(stdout);
		unet_endpoint__release(p->ep, d, (unsigned int)n);
	}
	foreign += foreign_msgs(p);
	printf("hold received=%" PRIu64 " foreign=%" PRIu64 "\n", got, foreign);
	if (foreign) {
		err("%" PRIu64 " message(s) for channels this endpoint does not own", foreign);
		failed = 1;
	}
	if (cfg->expect >= 0 && got != (uint64_t)cfg->expect) {
		err("received %" PRIu64 " message(s), expected %lld", got, cfg->expect);
		failed = 1;
	}
	return failed ? 1 : 0;
}

struct stats_ctx {
	int n;
};

static int print_channel(const struct unet_channel_entry *e, void *ctx)
{
	struct stats_ctx *sc = ctx;
	char mac[18];

	sc->n++;
	printf("channel tag=%u peer=%s peer_tag=%u endpoint=%u pid=%u stale=%d delivered=%" PRIu64
	       " delivered_bytes=%" PRIu64 " drop_wrong_src=%" PRIu64 " drop_no_socket=%" PRIu64
	       "\n",
	       e->tag, unet_format_mac(e->peer_mac, mac), e->peer_tag, e->endpoint, e->pid,
	       e->stale ? 1 : 0, e->delivered, e->delivered_bytes, e->drop_wrong_src,
	       e->drop_no_socket);
	return 0;
}

static int print_endpoint(const struct unet_endpoint_entry *e, void *ctx)
{
	(void)ctx;
	printf("endpoint id=%u pid=%u nqueues=%u comm=%.16s stale=%d\n", e->id, e->pid, e->nqueues,
	       e->comm, e->stale ? 1 : 0);
	return 0;
}

static int mode_stats(struct cfg *cfg)
{
	UNET_OPTS_INIT(unet_iface_opts, io);
	struct unet_iface *iface = unet_iface__open(cfg->ifname, &io);
	uint64_t v[UNET_STAT__COUNT];
	struct stats_ctx sc = { 0 };
	int i, ret;

	if (!iface) {
		err("cannot open %s: %s", cfg->ifname, strerror(errno));
		return 1;
	}
	ret = unet_iface__stats(iface, v);
	if (ret < 0) {
		err("unet_iface__stats: %s", strerror(-ret));
		unet_iface__close(iface);
		return 1;
	}
	for (i = 0; i < UNET_STAT__COUNT; i++)
		printf("%s %" PRIu64 "\n", unet_stat_name(i) ? unet_stat_name(i) : "?", v[i]);
	ret = unet_iface__for_each_channel(iface, print_channel, &sc);
	if (ret >= 0)
		ret = unet_iface__for_each_endpoint(iface, print_endpoint, NULL);
	unet_iface__close(iface);
	if (ret < 0) {
		err("listing %s: %s", cfg->ifname, strerror(-ret));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct cfg cfg;
	struct peer p = { .cfg = &cfg };
	struct sigaction sa;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = parse_args(argc, argv, &cfg);
	if (ret)
		return ret;
	unet_set_log_fn(log_fn, &cfg);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: waits return EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (!strcmp(cfg.mode, "stats"))
		return mode_stats(&cfg);

	if (strcmp(cfg.mode, "echo") && strcmp(cfg.mode, "sizes") && strcmp(cfg.mode, "send") &&
	    strcmp(cfg.mode, "recv") && strcmp(cfg.mode, "hold")) {
		err("unknown mode '%s'", cfg.mode);
		usage(stderr);
		return 2;
	}
	if (peer_open(&p) < 0) {
		peer_close(&p);
		return 1;
	}
	if (!strcmp(cfg.mode, "echo"))
		ret = mode_echo(&p);
	else if (!strcmp(cfg.mode, "sizes"))
		ret = mode_sizes(&p);
	else if (!strcmp(cfg.mode, "send"))
		ret = mode_send(&p);
	else if (!strcmp(cfg.mode, "recv"))
		ret = mode_recv(&p);
	else
		ret = mode_hold(&p);
	peer_close(&p);
	return ret;
}
