/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stream - one-way bandwidth over one U-Net channel.
 *
 *   stream recv IFACE --tag T --peer MAC --peer-tag P [--spin]
 *   stream send IFACE --tag T --peer MAC --peer-tag P [--count N] [--size B] [--batch K]
 *   common: [--timeout S] (default 30)
 *
 * The sender builds messages in place in its segment and queues them K at a
 * time with unet_endpoint__send_batch, then sends an end marker (three
 * times, in case one is dropped).  The receiver handles messages in an upcall
 * run by unet_endpoint__dispatch, and measures the bandwidth from its first
 * message to its last.  It stops at the end marker, after 2 s without
 * messages, or at the timeout.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <unet-xdp/unet.h>

struct msg_head { uint32_t seq; uint32_t flags; }; /* head of every message */
enum { MSG_END = 1 }; /* end marker: seq holds the number of messages sent */

struct rx_state { uint64_t msgs, bytes, first_ns, last_ns, first_len, sent; int done; };

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }
static void on_log(enum unet_log_level l, const char *msg, void *ctx)
{ (void)ctx; if (l <= UNET_LOG_WARN) fprintf(stderr, "stream: libunet: %s\n", msg); }

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The upcall: runs inside unet_endpoint__dispatch; the buffer goes back to
 * the free queue when it returns. */
static void on_message(struct unet_endpoint *ep, const struct unet_recv_desc *d, void *ctx)
{
	struct rx_state *s = ctx;
	struct msg_head h = {0};
	(void)ep;
	memcpy(&h, d->data, d->len < sizeof(h) ? d->len : sizeof(h));
	if (h.flags & MSG_END) { s->done = 1; s->sent = h.seq; return; }
	s->last_ns = now_ns();
	if (s->msgs++ == 0) { s->first_ns = s->last_ns; s->first_len = d->len; }
	s->bytes += d->len;
}

static int do_recv(struct unet_endpoint *ep, int spin, uint64_t deadline)
{
	struct rx_state s = {0};
	unet_endpoint__set_handler(ep, on_message, &s);
	printf("stream: receiving (%s)\n", spin ? "spin" : "block");
	fflush(stdout);
	while (!s.done && !stop && now_ns() < deadline) {
		int n = unet_endpoint__dispatch(ep, spin ? 0 : 100, 256);
		if (n < 0 && n != -EINTR) { fprintf(stderr, "stream: dispatch: %s\n", strerror(-n)); return 1; }
		if (s.msgs && now_ns() - s.last_ns > 2000000000u)
			break; /* idle: the end marker was lost */
	}
	if (s.msgs < 2) { fprintf(stderr, "stream: received %lu messages: nothing to measure\n", s.msgs); return 1; }
	/* Rate over the interval between the first and the last arrival. */
	double secs = (s.last_ns - s.first_ns) / 1e9;
	double rate = (s.msgs - 1) / secs, gbit = (s.bytes - s.first_len) * 8 / secs / 1e9;
	struct unet_endpoint_stats st = {0};
	unet_endpoint__stats(ep, &st); /* where losses happened: the kernel's counters */
	printf("stream: %lu messages, %lu bytes in %.3f s%s; dropped: receive queue full %lu, free queue empty %lu\n",
	       s.msgs, s.bytes, secs, s.done ? "" : " (no end marker)", st.rx_ring_full, st.rx_fill_empty);
	printf("bw msgs=%lu bytes=%lu secs=%.3f msgs_per_s=%.0f gbit_s=%.3f", s.msgs, s.bytes, secs, rate, gbit);
	if (s.done) printf(" sent=%lu lost=%lu\n", s.sent, s.sent - s.msgs);
	else printf(" sent=unknown lost=unknown\n");
	return 0;
}

static int do_send(struct unet_endpoint *ep, struct unet_channel *ch, long count, long size,
		   unsigned int batch, uint64_t deadline)
{
	struct unet_send_desc descs[256];
	uint64_t t0 = now_ns(), full = 0;
	long sent = 0;
	while (sent < count && !stop && now_ns() < deadline) {
		unsigned int n = 0, off = 0;
		/* Direct access: allocate segment buffers and write each message in place. */
		while (n < batch && sent + n < count) {
			uint64_t buf = unet_endpoint__buf_alloc(ep);
			if (buf == UNET_NO_BUF)
				break; /* all buffers in flight: send what we have */
			struct msg_head *h = unet_endpoint__buf_payload(ep, buf);
			h->seq = sent + n;
			h->flags = 0; /* the rest of the payload is whatever the buffer holds */
			descs[n++] = (struct unet_send_desc){ .channel = ch, .buf = buf, .len = size };
		}
		/* Queue them; on a full send queue reap completions and retry until the deadline. */
		while (off < n) {
			int k = unet_endpoint__send_batch(ep, descs + off, n - off);
			if (k < 0) { fprintf(stderr, "stream: send_batch: %s\n", strerror(-k)); return 1; }
			off += k;
			if (off < n) {
				full++;
				unet_endpoint__complete(ep);
				if (now_ns() >= deadline || stop) {
					for (unsigned int j = off; j < n; j++) unet_endpoint__buf_free(ep, descs[j].buf);
					n = off;
					break;
				}
			}
		}
		sent += off;
		if (n == 0)
			unet_endpoint__complete(ep);
	}
	unet_endpoint__flush(ep, 2000); /* all of it on the wire before the end marker */
	double secs = (now_ns() - t0) / 1e9;
	struct msg_head end = { .seq = (uint32_t)sent, .flags = MSG_END };
	/* End marker, sent with a copy (base level), three times a few ms
	 * apart: raw U-Net has no flow control, so a receiver still behind
	 * drops what finds its free queue empty; give it time to catch up. */
	for (int i = 0; i < 3; i++) {
		usleep(20000);
		for (int tries = 0; tries < 1000 && unet_channel__send_copy(ch, &end, sizeof(end)) == -EAGAIN; tries++)
			unet_endpoint__complete(ep), usleep(1000);
		unet_endpoint__flush(ep, 1000);
	}
	printf("stream: sent %ld messages of %ld bytes in %.3f s (%.0f msgs/s offered), queue full %lu times\n",
	       sent, size, secs, sent / secs, full);
	return sent < count;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{"tag", 1, 0, 't'}, {"peer", 1, 0, 'p'}, {"peer-tag", 1, 0, 'P'},
		{"count", 1, 0, 'c'}, {"size", 1, 0, 's'}, {"batch", 1, 0, 'b'},
		{"timeout", 1, 0, 'T'}, {"spin", 0, 0, 'S'}, {0, 0, 0, 0}};
	long tag = 0, peer_tag = 0, count = 100000, size = 1400, batch = 64, timeout = 30;
	int spin = 0, have_peer = 0, o, ret = 1;
	uint8_t peer[6];

	while ((o = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (o) {
		case 't': tag = strtol(optarg, NULL, 0); break;
		case 'P': peer_tag = strtol(optarg, NULL, 0); break;
		case 'p': have_peer = unet_parse_mac(optarg, peer) == 0; break;
		case 'c': count = strtol(optarg, NULL, 0); break;
		case 's': size = strtol(optarg, NULL, 0); break;
		case 'b': batch = strtol(optarg, NULL, 0); break;
		case 'T': timeout = strtol(optarg, NULL, 0); break;
		case 'S': spin = 1; break;
		default: goto usage;
		}
	}
	if (argc - optind != 2 || !have_peer || tag <= 0 || tag > 65535 || peer_tag <= 0 ||
	    peer_tag > 65535 || count <= 0 || count > UINT32_MAX || timeout <= 0 ||
	    size < (long)sizeof(struct msg_head) || batch < 1 || batch > 256)
		goto usage;
	int receiver = !strcmp(argv[optind], "recv");
	if (!receiver && strcmp(argv[optind], "send"))
		goto usage;

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	unet_set_log_fn(on_log, NULL);
	struct unet_endpoint *ep = unet_endpoint__create(argv[optind + 1], NULL);
	if (!ep) { perror("stream: unet_endpoint__create"); return 1; }
	struct unet_channel *ch = unet_channel__open(ep, tag, peer, peer_tag, NULL);
	struct unet_endpoint_info info;
	if (!ch) perror("stream: unet_channel__open");
	else if (unet_endpoint__info(ep, &info) == 0 && size > info.max_payload)
		fprintf(stderr, "stream: --size %ld > max payload %u\n", size, info.max_payload);
	else {
		uint64_t deadline = now_ns() + (uint64_t)timeout * 1000000000u;
		ret = receiver ? do_recv(ep, spin, deadline) : do_send(ep, ch, count, size, batch, deadline);
	}
	unet_endpoint__destroy(ep);
	return ret;
usage:
	fprintf(stderr, "usage: stream recv|send IFACE --tag T --peer MAC --peer-tag P\n"
			"       [--count N] [--size BYTES] [--batch K] [--spin] [--timeout SECONDS]\n");
	return 2;
}
