/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A routable channel's open on an endpoint unetd serves (lib/core/
 * remote.c): the daemon answers EAGAIN while the kernel resolves the
 * next hop (it never waits on the network); the library asks again until
 * the daemon opens it, and after about a second of EAGAIN gives up with
 * EHOSTUNREACH, as root's own open does.  Any other refusal is final at
 * once.
 *
 * A thread plays the daemon on one end of a socket pair: it answers the
 * first n_eagain requests with EAGAIN, then with final_err (0: the
 * channel opened).  No interface, no root.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/objects.h"
#include "proto/unetd_proto.h"

#define EP_ID 7
#define TAG 5
#define PEER_TAG 9

struct fake_daemon {
	int fd;
	int n_eagain;	/* -1: EAGAIN for ever */
	int final_err;	/* after them: 0 (opened) or -errno */
	int requests;	/* CH_OPEN_IPV4/IPV6 requests seen */
	int other;	/* any other request (must be none) */
	int dirty;	/* requests with a reserved byte set (must be none:
			 * unetd refuses them) */
};

static void reply(struct fake_daemon *d, const struct unetd_req_hdr *h, int err,
		  const void *body, uint32_t blen)
{
	uint8_t b[sizeof(struct unetd_rep_hdr) + 64];
	struct unetd_rep_hdr r = { .version = UNETD_PROTO_VERSION, .type = h->type,
				   .seq = h->seq, .err = err, .len = err ? 0 : blen };

	if (err)
		snprintf(r.msg, sizeof(r.msg), "fake: %s", err == -EAGAIN ? "being resolved" : "no");
	memcpy(b, &r, sizeof(r));
	if (!err && blen)
		memcpy(b + sizeof(r), body, blen);
	assert_true(send(d->fd, b, sizeof(r) + r.len, MSG_NOSIGNAL) > 0);
}

static void *daemon_main(void *arg)
{
	struct fake_daemon *d = arg;
	uint8_t b[512];
	ssize_t n;

	while ((n = recv(d->fd, b, sizeof(b), 0)) >= (ssize_t)sizeof(struct unetd_req_hdr)) {
		struct unetd_req_hdr h;

		memcpy(&h, b, sizeof(h));
		d->dirty += h.reserved != 0;
		if (h.type == UNETD_REQ_CH_OPEN_IPV4) {
			struct unetd_ch_open_ipv4 q;
			struct unetd_ch_opened_ipv4 o = { .sport = 40000, .dport = 50000 };

			memcpy(&q, b + sizeof(h), sizeof(q));
			d->dirty += q.pad != 0;
			o.daddr = q.peer_addr;
			d->requests++;
			if (d->n_eagain < 0 || d->requests <= d->n_eagain)
				reply(d, &h, -EAGAIN, NULL, 0);
			else
				reply(d, &h, d->final_err, &o, sizeof(o));
		} else if (h.type == UNETD_REQ_CH_OPEN_IPV6) {
			struct unetd_ch_open_ipv6 q;
			struct unetd_ch_opened_ipv6 o = { .sport = 40000, .dport = 50000 };

			memcpy(&q, b + sizeof(h), sizeof(q));
			d->dirty += q.pad != 0;
			memcpy(o.daddr, q.peer_addr, 16);
			d->requests++;
			if (d->n_eagain < 0 || d->requests <= d->n_eagain)
				reply(d, &h, -EAGAIN, NULL, 0);
			else
				reply(d, &h, d->final_err, &o, sizeof(o));
		} else {
			d->other++;
			reply(d, &h, 0, NULL, 0);
		}
	}
	return NULL;
}

/* Open tag TAG (IPv6 when v6) against a daemon answering n_eagain
 * EAGAINs, then final_err; *requests: how many opens it saw. */
static int open_against(int n_eagain, int final_err, bool v6, int *requests)
{
	struct fake_daemon d = { .n_eagain = n_eagain, .final_err = final_err };
	struct unet_endpoint ep;
	struct unet_wire_udp w;
	uint16_t peer_port, max_payload;
	const uint8_t a6[16] = { 0xfd, 1, [15] = 0x77 };
	pthread_t t;
	int sv[2], err;

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	d.fd = sv[1];
	memset(&ep, 0, sizeof(ep));
	ep.daemon_fd = sv[0];
	ep.remote_ep = EP_ID;
	assert_int_equal(pthread_create(&t, NULL, daemon_main, &d), 0);
	if (v6)
		err = unet_remote_channel_open_ipv6(&ep, TAG, a6, 0, PEER_TAG, &w, &peer_port,
						    &max_payload);
	else
		err = unet_remote_channel_open_ipv4(&ep, TAG, htonl(0x0ac90063), 0, PEER_TAG, &w,
						    &peer_port, &max_payload);
	/* the channel close a failed open may send is the only other */
	close(sv[0]);
	pthread_join(t, NULL);
	close(sv[1]);
	assert_int_equal(d.other, 0);
	assert_int_equal(d.dirty, 0);
	*requests = d.requests;
	return err;
}

/* Resolved after a few EAGAINs: opened, having asked again each time. */
static void test_eagain_then_opened(void **state)
{
	int n;

	(void)state;
	assert_int_equal(open_against(3, 0, false, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(open_against(5, 0, true, &n), 0);
	assert_int_equal(n, 6);
}

/* Never resolved: EHOSTUNREACH, after more than one try (the bound is
 * the library's second, so once: IPv6 takes the same path; how long it
 * took is not asserted). */
static void test_eagain_for_ever(void **state)
{
	int n;

	(void)state;
	assert_int_equal(open_against(-1, 0, false, &n), -EHOSTUNREACH);
	assert_true(n > 1);
}

/* Another refusal is final: asked once. */
static void test_other_error_at_once(void **state)
{
	int n;

	(void)state;
	assert_int_equal(open_against(0, -EACCES, false, &n), -EACCES);
	assert_int_equal(n, 1);
	assert_int_equal(open_against(2, -EDQUOT, true, &n), -EDQUOT);
	assert_int_equal(n, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eagain_then_opened),
		cmocka_unit_test(test_eagain_for_ever),
		cmocka_unit_test(test_other_error_at_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
