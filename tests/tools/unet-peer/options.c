/* SPDX-License-Identifier: BSD-2-Clause */
/* options.c - unet-peer's command line. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "peer.h"

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

void usage(FILE *f)
{
	fprintf(f,
		"usage: %s MODE IFACE [options]\n"
		"modes: echo | sizes | send | recv | hold | stats\n"
		"channels (one per --tag; --peer once applies to all):\n"
		"  --tag T --peer MAC --peer-tag P   (repeatable, in order)\n"
		"  --peer-ip ADDR     routable channels (U-Net in UDP/IPv4 or IPv6) to ADDR, no --peer\n"
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
		"  --min-size B       sizes: start at B instead of 1\n"
		"  --no-multi-buffer  one chunk per message even on a jumbo MTU\n"
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
	OPT_MIN_SIZE,
	OPT_NO_MULTI_BUFFER,
	OPT_EXPECT,
	OPT_EXPECT_NONE,
	OPT_LINGER,
	OPT_SEQ_BASE,
	OPT_PEER_IP,
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

int parse_args(int argc, char **argv, struct cfg *cfg)
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
		{ "min-size", required_argument, NULL, OPT_MIN_SIZE },
		{ "no-multi-buffer", no_argument, NULL, OPT_NO_MULTI_BUFFER },
		{ "expect", required_argument, NULL, OPT_EXPECT },
		{ "expect-none", no_argument, NULL, OPT_EXPECT_NONE },
		{ "linger", required_argument, NULL, OPT_LINGER },
		{ "seq-base", required_argument, NULL, OPT_SEQ_BASE },
		{ "peer-ip", required_argument, NULL, OPT_PEER_IP },
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
		case OPT_NO_MULTI_BUFFER:
			cfg->no_multi_buffer = true;
			break;
		case OPT_MIN_SIZE:
			if (parse_u64(optarg, 65535, &v) || v == 0) {
				err("bad --min-size '%s'", optarg);
				return 2;
			}
			cfg->min_size = (uint32_t)v;
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
		case OPT_PEER_IP:
			if (strchr(optarg, ':')) {
				if (inet_pton(AF_INET6, optarg, cfg->peer_addr6) != 1) {
					err("bad --peer-ip '%s' (IPv6 address)", optarg);
					return 2;
				}
				cfg->peer_ip6 = true;
				cfg->peer_ip = 1; /* routable, as for IPv4 */
			} else if (inet_pton(AF_INET, optarg, &cfg->peer_ip) != 1 || !cfg->peer_ip) {
				err("bad --peer-ip '%s' (IPv4 address)", optarg);
				return 2;
			}
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

	/* Routable channels name their peer by --peer-ip: no --peer needed. */
	if (cfg->peer_ip && cfg->npeers == 0)
		cfg->npeers = cfg->ntags;
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
