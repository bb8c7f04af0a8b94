/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kv - a key-value store over U-Net Active Messages.
 *
 *   kv server IFACE --tag T --peer MAC --peer-tag P [--seconds N]
 *   kv client IFACE --tag T --peer MAC --peer-tag P [--count N]
 *
 * Keys and values are 64-bit words.  PUT(key, value) and GET(key) are
 * requests; the server's handlers answer with one reply each.  The client
 * uses uam_call, the blocking round trip: UAM makes it reliable, so the
 * example has no retry logic even on a lossy link.  The client puts
 * count keys, reads them all back and prints "kv ok puts=N gets=N".
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <unet-xdp/uam.h>

enum { H_PUT = 1, H_GET = 2, H_PUT_DONE = 3, H_VALUE = 4 }; /* handler indices */

#define NSLOTS 65536 /* server table: open addressing, linear probing */

struct table {
	uint64_t key[NSLOTS], val[NSLOTS];
	uint8_t used[NSLOTS];
};

static uint64_t *slot(struct table *t, uint64_t key, int create)
{
	for (uint32_t i = 0, h = (uint32_t)(key * 0x9E3779B97F4A7C15ULL >> 48); i < NSLOTS; i++) {
		uint32_t s = (h + i) % NSLOTS;

		if (t->used[s] && t->key[s] == key)
			return &t->val[s];
		if (!t->used[s]) {
			if (!create)
				return NULL;
			t->used[s] = 1;
			t->key[s] = key;
			return &t->val[s];
		}
	}
	return NULL; /* full */
}

/* Request handlers run at the server; each sends its one reply. */
static void on_put(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	uint64_t *v = slot(ctx, m->args[0], 1), ok = v != NULL;

	(void)ep;
	if (v)
		*v = m->args[1];
	uam_reply(m, H_PUT_DONE, &ok, 1);
}

static void on_get(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	uint64_t *v = slot(ctx, m->args[0], 0), r[2] = { v != NULL, v ? *v : 0 };

	(void)ep;
	uam_reply(m, H_VALUE, r, 2);
}

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

static int usage(void)
{
	fprintf(stderr, "usage: kv server|client IFACE --tag T --peer MAC --peer-tag P "
			"[--seconds N] [--count N]\n");
	return 2;
}

int main(int argc, char **argv)
{
	long tag = 0, peer_tag = 0, seconds = 60, count = 1000;
	const char *peer = NULL;
	uint8_t mac[6];
	struct unet_endpoint *uep;
	struct unet_channel *uch;
	struct uam_ep *ep;
	struct uam_chan *ch;
	int server, err = 0;

	if (argc < 3 || (strcmp(argv[1], "server") && strcmp(argv[1], "client")))
		return usage();
	server = !strcmp(argv[1], "server");
	for (int i = 3; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--tag"))
			tag = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--peer-tag"))
			peer_tag = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--peer"))
			peer = argv[i + 1];
		else if (!strcmp(argv[i], "--seconds"))
			seconds = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--count"))
			count = atol(argv[i + 1]);
		else
			return usage();
	}
	if (!peer || unet_parse_mac(peer, mac) || tag <= 0 || tag > 65535 || peer_tag <= 0 ||
	    peer_tag > 65535)
		return usage();

	/* The raw U-Net layer: an endpoint and a channel to the peer... */
	uep = unet_endpoint__create(argv[2], NULL);
	if (!uep) {
		fprintf(stderr, "kv: endpoint on %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	uch = unet_channel__open(uep, (uint16_t)tag, mac, (uint16_t)peer_tag, NULL);
	/* ...and Active Messages on top of them. */
	ep = uch ? uam_ep__create(uep, NULL) : NULL;
	ch = ep ? uam_chan__open(ep, uch) : NULL;
	if (!ch) {
		fprintf(stderr, "kv: channel: %s\n", strerror(errno));
		uam_ep__destroy(ep);
		unet_endpoint__destroy(uep);
		return 1;
	}

	if (server) {
		struct table *t = calloc(1, sizeof(*t));
		time_t end = time(NULL) + seconds;

		if (!t)
			return 1;
		uam_ep__set_handler(ep, H_PUT, on_put, t);
		uam_ep__set_handler(ep, H_GET, on_get, t);
		signal(SIGTERM, on_signal);
		signal(SIGINT, on_signal);
		printf("ready\n");
		fflush(stdout);
		/* Handlers run from here.  A dead client is fine: the server
		 * only ever replies, and uam_wait keeps going. */
		while (!stop && time(NULL) < end)
			uam_wait(ep, 100);
		printf("kv server done\n");
		free(t);
	} else {
		struct uam_msg rep;
		long puts = 0, gets = 0;

		for (long k = 0; k < count && !err; k++) {
			uint64_t a[2] = { (uint64_t)k, (uint64_t)(k * k + 7) };

			err = uam_call(ch, H_PUT, a, 2, &rep, 5000);
			if (!err && rep.args[0] == 1)
				puts++;
		}
		for (long k = 0; k < count && !err; k++) {
			uint64_t a[1] = { (uint64_t)k };

			err = uam_call(ch, H_GET, a, 1, &rep, 5000);
			if (!err && rep.handler == H_VALUE && rep.args[0] == 1 &&
			    rep.args[1] == (uint64_t)(k * k + 7))
				gets++;
		}
		if (err)
			fprintf(stderr, "kv: call: %s\n", strerror(-err));
		else
			printf("kv %s puts=%ld gets=%ld\n",
			       puts == count && gets == count ? "ok" : "MISMATCH", puts, gets);
		if (puts != count || gets != count)
			err = -EIO;
	}
	uam_ep__destroy(ep);
	unet_endpoint__destroy(uep);
	return err ? 1 : 0;
}
