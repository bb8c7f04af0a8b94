/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet-tcp-threads - two TCP endpoints in one process, on two threads
 * (docs/tcp.md, "Threads"): each thread makes its own endpoint on its own
 * interface, connects to a kernel echo server and streams pattern bytes
 * through it for a bounded time, checking every byte that comes back.
 * Both run at once, so lwIP's timers, which any endpoint's calls run,
 * keep producing segments for the other thread's connection.  Built
 * plain and with ThreadSanitizer (make tsan: build-tsan/).
 *
 *   unet-tcp-threads [--xdp-mode native|skb] [--seconds S]
 *                    IFACE1 LOCAL1 REMOTE1:PORT IFACE2 LOCAL2 REMOTE2:PORT
 *
 * Prints "thread N ok sent=B echoed=B writes=W" per thread; exits 0 if
 * both threads echoed every byte they sent, in order, within the time.
 * Every loop is bounded: S seconds of traffic (default 10, at most 120)
 * and at most 1 GiB per thread, then 20 s to drain.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <unet-xdp/unet.h>
#include <unet-xdp/unet_tcp.h>

#include "tool_common.h"

#define CHUNK 65536
#define IN_FLIGHT (256u << 10) /* sent and not echoed yet, at most */
#define MAX_BYTES (1ull << 30)
#define DRAIN_MS 20000

struct worker {
	unsigned int id;
	const char *ifname;
	uint32_t laddr, raddr;
	uint16_t rport;
	enum unet_xdp_mode mode;
	uint64_t run_ms;
	/* results */
	uint64_t sent, echoed, writes;
	int rc;
	char why[160];
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Byte i of thread id's stream. */
static uint8_t pat(uint64_t i, unsigned int id)
{
	return (uint8_t)((i + id * 97u) % 251);
}

static int stream(struct worker *w, struct unet_endpoint *ep, struct unet_tcp *c)
{
	static __thread uint8_t out[CHUNK + 251], in[CHUNK];
	uint64_t t0 = now_ms(), stop_send = t0 + w->run_ms, stop_all = stop_send + DRAIN_MS;
	size_t size = 1;

	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = pat(i, w->id);
	while (w->echoed < w->sent || (now_ms() < stop_send && w->sent < MAX_BYTES)) {
		bool moved = false;
		ssize_t n;

		if (now_ms() >= stop_all) {
			snprintf(w->why, sizeof(w->why), "timed out: sent %llu, echoed %llu",
				 (unsigned long long)w->sent, (unsigned long long)w->echoed);
			return 1;
		}
		if (now_ms() < stop_send && w->sent < MAX_BYTES &&
		    w->sent - w->echoed + size <= IN_FLIGHT) {
			n = unet_tcp__send(c, out + w->sent % 251, size, 0);
			if (n > 0) {
				w->sent += (uint64_t)n;
				w->writes++;
				moved = true;
				/* every size from 1 to 64 KiB comes up, primes apart */
				size = size + 7919 > CHUNK ? size + 7919 - CHUNK : size + 7919;
			} else if (n != -EAGAIN) {
				snprintf(w->why, sizeof(w->why), "send: %s", strerror((int)-n));
				return 1;
			}
		}
		n = unet_tcp__recv(c, in, sizeof(in), 0);
		if (n > 0) {
			for (ssize_t i = 0; i < n; i++)
				if (in[i] != pat(w->echoed + (uint64_t)i, w->id)) {
					snprintf(w->why, sizeof(w->why),
						 "byte %llu differs: got %u, want %u",
						 (unsigned long long)(w->echoed + (uint64_t)i),
						 in[i], pat(w->echoed + (uint64_t)i, w->id));
					return 1;
				}
			w->echoed += (uint64_t)n;
			if (w->echoed > w->sent) {
				snprintf(w->why, sizeof(w->why), "echoed %llu bytes, sent only %llu",
					 (unsigned long long)w->echoed, (unsigned long long)w->sent);
				return 1;
			}
			moved = true;
		} else if (n == 0 || n != -EAGAIN) {
			snprintf(w->why, sizeof(w->why), "recv: %s",
				 n ? strerror((int)-n) : "the peer closed");
			return 1;
		}
		if (!moved)
			unet_endpoint__dispatch(ep, 5, 64);
	}
	return 0;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	UNET_OPTS_INIT(unet_endpoint_opts, eo);
	UNET_OPTS_INIT(unet_tcp_opts, to);
	struct unet_endpoint *ep;
	struct unet_tcp *c;

	w->rc = 1;
	eo.mode = w->mode;
	eo.segment_size = 8u << 20;
	ep = unet_endpoint__create(w->ifname, &eo);
	if (!ep) {
		snprintf(w->why, sizeof(w->why), "endpoint on %s: %s", w->ifname, strerror(errno));
		return NULL;
	}
	c = unet_tcp__connect(ep, w->laddr, w->raddr, w->rport, &to, 10000);
	if (!c) {
		snprintf(w->why, sizeof(w->why), "connect: %s", strerror(errno));
	} else {
		w->rc = stream(w, ep, c);
		unet_tcp__close(c);
	}
	unet_endpoint__destroy(ep);
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = { { "xdp-mode", 1, 0, 'x' },
					    { "seconds", 1, 0, 's' },
					    { 0, 0, 0, 0 } };
	enum unet_xdp_mode mode = UNET_XDP_MODE_SKB;
	struct worker w[2];
	pthread_t th[2];
	uint64_t secs = 10;
	uint16_t lport;
	int opt, rc = 0;

	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (opt) {
		case 'x':
			mode = !strcmp(optarg, "native") ? UNET_XDP_MODE_NATIVE : UNET_XDP_MODE_SKB;
			break;
		case 's':
			if (parse_u64(optarg, 120, &secs) || !secs)
				return 2;
			break;
		default:
			return 2;
		}
	}
	if (argc - optind != 6) {
		fprintf(stderr, "usage: unet-tcp-threads [--xdp-mode native|skb] [--seconds S] "
				"IFACE1 LOCAL1 REMOTE1:PORT IFACE2 LOCAL2 REMOTE2:PORT\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (unsigned int i = 0; i < 2; i++) {
		char **a = argv + optind + 3 * i;

		memset(&w[i], 0, sizeof(w[i]));
		w[i].id = i + 1;
		w[i].ifname = a[0];
		w[i].mode = mode;
		w[i].run_ms = secs * 1000;
		if (parse_ipv4_port(a[1], &w[i].laddr, &lport) ||
		    parse_ipv4_port(a[2], &w[i].raddr, &w[i].rport) || !w[i].rport) {
			fprintf(stderr, "unet-tcp-threads: bad address %s or %s\n", a[1], a[2]);
			return 2;
		}
	}
	for (unsigned int i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, run, &w[i])) {
			fprintf(stderr, "unet-tcp-threads: pthread_create failed\n");
			return 1;
		}
	for (unsigned int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (unsigned int i = 0; i < 2; i++) {
		if (w[i].rc) {
			printf("thread %u failed: %s\n", w[i].id, w[i].why);
			rc = 1;
			continue;
		}
		printf("thread %u ok sent=%llu echoed=%llu writes=%llu\n", w[i].id,
		       (unsigned long long)w[i].sent, (unsigned long long)w[i].echoed,
		       (unsigned long long)w[i].writes);
	}
	return rc;
}
