/* SPDX-License-Identifier: BSD-2-Clause */
/* common.c - unet-peer: logging, endpoint and channel set-up, and the
 * send/receive helpers every mode uses. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "peer.h"

const char *prog = "unet-peer";

void err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void sleep_s(double s)
{
	struct timespec ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

void log_fn(enum unet_log_level level, const char *msg, void *ctx)
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

int peer_open(struct peer *p)
{
	struct cfg *cfg = p->cfg;
	UNET_OPTS_INIT(unet_endpoint_opts, eo);
	unsigned int i;
	int ret;

	eo.mode = cfg->xdp_mode;
	eo.queue_mask = cfg->queue_mask;
	eo.no_multi_buffer = cfg->no_multi_buffer;
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
		if (cfg->peer_ip6)
			p->ch[i] = unet_channel__open_ipv6(p->ep, cfg->ch[i].tag, cfg->peer_addr6, 0,
							   cfg->ch[i].peer_tag, &co);
		else if (cfg->peer_ip)
			p->ch[i] = unet_channel__open_ipv4(p->ep, cfg->ch[i].tag, cfg->peer_ip, 0,
							   cfg->ch[i].peer_tag, &co);
		else
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
	       p->info.id, p->info.nqueues, p->info.queue_mask,
	       cfg->nch ? unet_channel__max_payload(p->ch[0]) : p->info.max_payload,
	       mode_name(p->info.mode), p->info.zerocopy ? 1 : 0);
	fflush(stdout);
	return 0;
}

void peer_close(struct peer *p)
{
	unsigned int i;

	for (i = 0; i < p->cfg->nch; i++)
		unet_channel__close(p->ch[i]);
	unet_endpoint__destroy(p->ep);
}

int chan_index(const struct peer *p, const struct unet_channel *ch)
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

int recv_or_wait(struct peer *p, struct unet_recv_desc *d, double deadline)
{
	int n = unet_endpoint__recv(p->ep, d, RECV_BATCH);

	if (n < 0) {
		err("unet_endpoint__recv: %s", strerror(-n));
		return -1;
	}
	if (n == 0 && wait_rx(p, deadline) < 0)
		return -1;
	return n;
}

/* Send with retries while the send queue is full, until deadline. */
int send_retry(struct peer *p, struct unet_channel *ch, const void *data, size_t len,
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
void drain_tx(struct peer *p, double max_s)
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

void print_ep_stats(struct peer *p, const char *who)
{
	struct unet_endpoint_stats st;

	if (unet_endpoint__stats(p->ep, &st) < 0)
		return;
	fprintf(stderr,
		"%s: %s endpoint stats: rx_msgs=%" PRIu64 " tx_msgs=%" PRIu64
		" rx_dropped=%" PRIu64 " rx_ring_full=%" PRIu64 " rx_fill_empty=%" PRIu64
		" rx_invalid=%" PRIu64 " tx_invalid=%" PRIu64 " rx_unknown_channel=%" PRIu64
		" rx_bad_pieces=%" PRIu64 " rx_no_jumbo_slot=%" PRIu64 "\n",
		prog, who, st.rx_msgs, st.tx_msgs, st.rx_dropped, st.rx_ring_full,
		st.rx_fill_empty, st.rx_invalid_descs, st.tx_invalid_descs, st.rx_unknown_channel,
		st.rx_bad_pieces, st.rx_no_jumbo_slot);
}

uint64_t foreign_msgs(struct peer *p)
{
	struct unet_endpoint_stats st;

	if (unet_endpoint__stats(p->ep, &st) < 0)
		return 0;
	return st.rx_unknown_channel;
}
