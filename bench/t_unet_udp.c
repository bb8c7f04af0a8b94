/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * t_unet_udp.c - the unet-udp transport of unet-bench: UDP/IPv4 over U-Net
 * (include/unet-xdp/unet_udp.h), so its round trip and message rate sit beside kernel
 * UDP (the udp transport) in one run.  It talks to anything that speaks
 * UDP: the other end may be this transport or the kernel's udp one.
 *
 * Needs --iface IF --local IP:PORT --remote IP:PORT (and takes --queue-mask,
 * --busy-poll, --xdp-mode as the unet transport).  Sends are in place: the
 * payload is written into the segment buffer behind the headers the
 * library fills in, one send call per message (each builds its headers
 * and checksums, and kicks the send queue).  Receives are batches from
 * the endpoint's receive queue, given back on the next call.  The peer is
 * resolved (ARP) at open, so no measured message waits for it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include <unet-xdp/unet.h>
#include <unet-xdp/unet_udp.h>

struct bench_conn {
	struct unet_endpoint *ep;
	struct unet_udp_sock *sock;
	bool v6;
	struct bench_unet_rx rx;
};


/* An address of either family: IP:PORT or [IPV6]:PORT. */
struct uu_addr {
	bool v6;
	uint32_t addr;
	struct in6_addr addr6;
	uint16_t port;
};

static int parse_ipport(const char *s, struct uu_addr *a)
{
	char buf[64], *colon, *host;
	long p;

	if (!s || strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	colon = strrchr(buf, ':');
	if (!colon)
		return -1;
	*colon = '\0';
	host = buf;
	a->v6 = buf[0] == '[';
	if (a->v6) {
		if (colon == buf || colon[-1] != ']')
			return -1;
		colon[-1] = '\0';
		host = buf + 1;
	}
	p = strtol(colon + 1, NULL, 10);
	if (p <= 0 || p > 65535)
		return -1;
	a->port = (uint16_t)p;
	if (a->v6)
		return inet_pton(AF_INET6, host, &a->addr6) == 1 ? 0 : -1;
	return inet_pton(AF_INET, host, &a->addr) == 1 ? 0 : -1;
}

static void uu_close(struct bench_conn *c)
{
	struct unet_udp_stats st;

	if (!c)
		return;
	bench_unet_rx_release(c->ep, &c->rx);
	if (c->ep && unet_udp__stats(c->ep, &st) == 0 && (st.rx_datagrams || st.tx_datagrams))
		fprintf(stderr,
			"unet-bench: unet-udp: rx %llu tx %llu; dropped: bad csum %llu, "
			"malformed %llu, no socket %llu; partial csum accepted %llu\n",
			(unsigned long long)st.rx_datagrams, (unsigned long long)st.tx_datagrams,
			(unsigned long long)(st.rx_bad_ip_csum + st.rx_bad_udp_csum),
			(unsigned long long)st.rx_malformed, (unsigned long long)st.rx_no_socket,
			(unsigned long long)st.rx_partial_csum);
	unet_udp__close(c->sock);
	bench_unet_wait_forget(c->ep);
	unet_endpoint__destroy(c->ep);
	free(c);
}

static struct bench_conn *uu_open(const struct bench_opts *o)
{
	UNET_OPTS_INIT(unet_endpoint_opts, eo);
	UNET_OPTS_INIT(unet_udp_opts, uo);
	struct uu_addr la, ra;
	struct bench_conn *c;
	int err;

	if (!o->iface || parse_ipport(o->local, &la) || parse_ipport(o->remote, &ra) ||
	    la.v6 != ra.v6) {
		fprintf(stderr, "unet-bench: unet-udp needs --iface, --local and --remote, both "
				"IP:PORT or both [IPV6]:PORT\n");
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	unet_set_log_fn(bench_unet_log, NULL);
	eo.mode = (enum unet_xdp_mode)o->xdp_mode;
	eo.busy_poll_usec = (uint32_t)o->busy_poll_usec;
	eo.queue_mask = o->queue_mask;
	eo.no_tx_csum_offload = o->no_tx_csum;
	c->ep = unet_endpoint__create(o->iface, &eo);
	if (!c->ep) {
		fprintf(stderr, "unet-bench: unet_endpoint__create %s: %s\n", o->iface,
			strerror(errno));
		free(c);
		return NULL;
	}
	if (bench_unet_wait_mode(c->ep, o)) {
		uu_close(c);
		return NULL;
	}
	c->v6 = la.v6;
	uo.remote_port = ra.port;
	if (c->v6) {
		uo.remote_addr6 = ra.addr6;
		c->sock = unet_udp__open6(c->ep, &la.addr6, la.port, &uo);
	} else {
		uo.remote_addr = ra.addr;
		c->sock = unet_udp__open(c->ep, la.addr, la.port, &uo);
	}
	if (!c->sock) {
		fprintf(stderr, "unet-bench: unet_udp__open %s: %s\n", o->local, strerror(errno));
		uu_close(c);
		return NULL;
	}
	if ((uint32_t)o->size > unet_udp__max_payload(c->sock)) {
		fprintf(stderr, "unet-bench: --size %ld > UDP max payload %u\n", o->size,
			unet_udp__max_payload(c->sock));
		uu_close(c);
		return NULL;
	}
	/* The peer may start later than we do: keep asking for a while. */
	for (int i = 0; i < 10; i++) {
		err = c->v6 ? unet_udp__resolve6(c->sock, NULL, 1000) :
			      unet_udp__resolve(c->sock, 0, 1000);
		if (err != -EHOSTUNREACH)
			break;
	}
	if (err) {
		fprintf(stderr, "unet-bench: resolving %s: %s\n", o->remote, strerror(-err));
		uu_close(c);
		return NULL;
	}
	return c;
}

static int uu_send(struct bench_conn *c, const struct bench_tx *tx, unsigned int n)
{
	unsigned int k;

	for (k = 0; k < n; k++) {
		uint64_t buf = unet_endpoint__buf_alloc(c->ep);
		int err;

		if (buf == UNET_NO_BUF)
			break;
		bench_tx_write(unet_udp__buf_payload(c->ep, buf), &tx[k]);
		err = c->v6 ? unet_udp__send6(c->sock, buf, tx[k].len, NULL, 0) :
			      unet_udp__send(c->sock, buf, tx[k].len, 0, 0);
		if (err) {
			unet_endpoint__buf_free(c->ep, buf);
			if (err == -EAGAIN)
				break;
			return k ? (int)k : err;
		}
	}
	if (k < n)
		unet_endpoint__complete(c->ep);
	return (int)k;
}

static int uu_recv(struct bench_conn *c, struct bench_rx *rx, unsigned int max, bool block)
{
	return bench_unet_recv(c->ep, &c->rx, rx, max, block);
}

static int uu_flush(struct bench_conn *c, int timeout_ms)
{
	return unet_endpoint__flush(c->ep, timeout_ms);
}

const struct bench_transport bench_unet_udp = {
	.name = "unet-udp",
	.open = uu_open,
	.send = uu_send,
	.recv = uu_recv,
	.flush = uu_flush,
	.close = uu_close,
};
