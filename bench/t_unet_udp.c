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
	struct bench_unet_rx rx;
};


static int parse_ipport(const char *s, uint32_t *addr, uint16_t *port)
{
	char buf[64], *colon;
	struct in_addr a;
	long p;

	if (!s || strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	colon = strchr(buf, ':');
	if (!colon)
		return -1;
	*colon = '\0';
	p = strtol(colon + 1, NULL, 10);
	if (p <= 0 || p > 65535 || inet_pton(AF_INET, buf, &a) != 1)
		return -1;
	*addr = a.s_addr;
	*port = (uint16_t)p;
	return 0;
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
	uint32_t laddr, raddr;
	uint16_t lport, rport;
	struct bench_conn *c;
	int err;

	if (!o->iface || parse_ipport(o->local, &laddr, &lport) ||
	    parse_ipport(o->remote, &raddr, &rport)) {
		fprintf(stderr, "unet-bench: unet-udp needs --iface, --local IP:PORT and "
				"--remote IP:PORT\n");
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
	uo.remote_addr = raddr;
	uo.remote_port = rport;
	c->sock = unet_udp__open(c->ep, laddr, lport, &uo);
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
		err = unet_udp__resolve(c->sock, 0, 1000);
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
		err = unet_udp__send(c->sock, buf, tx[k].len, 0, 0);
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
