/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uam-peer - Active Messages over a routable channel (U-Net inside
 * UDP/IPv4 or UDP/IPv6: A with a colon), for the tests that put a
 * router between the two ends.
 *
 *   uam-peer serve IFACE --tag T --peer-ip A --peer-tag P [--timeout S]
 *   uam-peer run IFACE --tag T --peer-ip A --peer-tag P [--until FILE] [--timeout S]
 *
 * serve echoes every medium request back as a medium reply and holds a
 * 1 MiB region (id 1) the peer may store into and get from.  run checks,
 * byte for byte: a medium call of every size the channel takes
 * (1..uam_chan__medium_max_args(ch, 1)); stores and gets of sizes around
 * the fragment edges up to 256 KiB; then, with --until, medium calls of
 * cycling sizes until FILE exists (a route changes meanwhile), saying
 * "medium max now N" when what the channel takes changes.  Prints
 * "ready ..." once open, "medium ok 1..N", "bulk ok", "calls ok N".
 * Exit status 0 on success, 1 on a failure, 2 on a usage error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <unet-xdp/uam.h>
#include <unet-xdp/unet.h>

#include "tool_common.h"

#define H_ECHO 1
#define H_ECHOED 2
#define REGION 1
#define REGION_LEN (1u << 20)

static uint8_t pattern(uint64_t n, uint64_t j)
{
	return (uint8_t)((n * 131u) ^ (j * 7u) ^ (j >> 8) ^ 0x5au);
}

static void on_echo(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	(void)ep;
	(void)ctx;
	uam_reply_medium(m, H_ECHOED, m->args, m->nargs, m->data, m->data_len);
}

struct echo_wait {
	uint64_t want; /* the size asked */
	bool got, bad;
};

static void on_echoed(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	struct echo_wait *w = ctx;
	const uint8_t *d = m->data;

	(void)ep;
	if (w->got || m->nargs != 1 || m->args[0] != w->want || m->data_len != w->want) {
		w->bad = true;
		return;
	}
	for (uint64_t j = 0; j < w->want; j++)
		if (d[j] != pattern(w->want, j)) {
			fprintf(stderr, "size %llu: byte %llu differs\n", (unsigned long long)w->want,
				(unsigned long long)j);
			w->bad = true;
			return;
		}
	w->got = true;
}

/* One medium call of n bytes and its echo.  0 or -errno. */
static int echo_call(struct uam_ep *ep, struct uam_chan *ch, struct echo_wait *w, uint8_t *buf,
		     uint64_t n, double deadline)
{
	uint64_t arg = n;
	int err;

	for (uint64_t j = 0; j < n; j++)
		buf[j] = pattern(n, j);
	w->want = n;
	w->got = w->bad = false;
	err = uam_request_medium(ch, H_ECHO, &arg, 1, buf, n);
	if (err < 0)
		return err;
	while (!w->got && !w->bad && !stop_flag) {
		if (now_s() > deadline)
			return -ETIMEDOUT;
		err = uam_chan__error(ch);
		if (err)
			return err;
		uam_wait(ep, 100);
	}
	return w->got ? 0 : -EIO;
}

struct op_done {
	int status;
	bool done;
};

static void on_op(struct uam_ep *ep, int op, int status, void *ctx)
{
	struct op_done *d = ctx;

	(void)ep;
	(void)op;
	d->status = status;
	d->done = true;
}

static int op_wait(struct uam_ep *ep, struct op_done *d, double deadline)
{
	while (!d->done && !stop_flag && now_s() < deadline)
		uam_wait(ep, 100);
	return d->done ? d->status : -ETIMEDOUT;
}

/* Stores of sizes around the fragment edges into the peer's region, each
 * read back with a get and compared.  0 or -errno. */
static int bulk(struct uam_ep *ep, struct uam_chan *ch, uint8_t *src, uint8_t *back,
		double deadline)
{
	/* what one fragment carries is a little less than a frame: sizes
	 * on both sides of one, two and many frames */
	uint32_t frame = (uint32_t)unet_channel__max_payload(uam_chan__unet(ch));
	uint64_t sizes[] = { 1, frame - 64, frame - 40, frame - 32, frame, frame + 1,
			     2 * frame + 7, 10 * frame + 3, 65536, 262144 };

	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t n = sizes[i];
		struct op_done d = { 0 };
		int op;

		for (uint64_t j = 0; j < n; j++)
			src[j] = pattern(n + 1000, j);
		memset(back, 0, n);
		op = uam_store(ch, src, n, REGION, 4096, 0, NULL, 0, on_op, &d);
		if (op < 0)
			return op;
		if ((op = op_wait(ep, &d, deadline)))
			return op;
		memset(&d, 0, sizeof(d));
		op = uam_get(ch, REGION, 4096, n, REGION, 0, on_op, &d);
		if (op < 0)
			return op;
		if ((op = op_wait(ep, &d, deadline)))
			return op;
		if (memcmp(src, back, n)) {
			fprintf(stderr, "store+get of %llu bytes: the data came back changed\n",
				(unsigned long long)n);
			return -EIO;
		}
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: uam-peer serve|run IFACE --tag T --peer-ip A --peer-tag P "
			"[--until FILE] [--timeout S]\n");
}

int main(int argc, char **argv)
{
	uint64_t tag = 0, peer_tag = 0, timeout = 60;
	const char *until = NULL;
	struct unet_endpoint *uep;
	struct unet_channel *uch;
	struct uam_ep *ep;
	struct uam_chan *ch;
	struct in_addr peer = { 0 };
	uint8_t peer6[16];
	bool v6 = false;
	struct echo_wait w = { 0 };
	uint8_t *region, *buf;
	double deadline;
	bool serve;
	int err = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3 || (strcmp(argv[1], "serve") && strcmp(argv[1], "run"))) {
		usage();
		return 2;
	}
	serve = !strcmp(argv[1], "serve");
	for (int i = 3; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--tag"))
			err |= parse_u64(argv[i + 1], 65534, &tag);
		else if (!strcmp(argv[i], "--peer-tag"))
			err |= parse_u64(argv[i + 1], 65534, &peer_tag);
		else if (!strcmp(argv[i], "--peer-ip"))
			err |= (strchr(argv[i + 1], ':')
					? (v6 = inet_pton(AF_INET6, argv[i + 1], peer6) == 1)
					: inet_pton(AF_INET, argv[i + 1], &peer) == 1)
				       ? 0
				       : -1;
		else if (!strcmp(argv[i], "--until"))
			until = argv[i + 1];
		else if (!strcmp(argv[i], "--timeout"))
			err |= parse_u64(argv[i + 1], 3600, &timeout);
		else
			err = -1;
	}
	if (err || !tag || !peer_tag || (!peer.s_addr && !v6)) {
		usage();
		return 2;
	}
	deadline = now_s() + (double)timeout;
	catch_stop_signals();
	region = aligned_alloc(4096, REGION_LEN);
	buf = malloc(REGION_LEN);
	if (!region || !buf)
		return 1;
	uep = unet_endpoint__create(argv[2], NULL);
	if (!uep) {
		fprintf(stderr, "uam-peer: endpoint on %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	uch = v6 ? unet_channel__open_ipv6(uep, (uint16_t)tag, peer6, 0, (uint16_t)peer_tag, NULL)
		 : unet_channel__open_ipv4(uep, (uint16_t)tag, peer.s_addr, 0, (uint16_t)peer_tag,
					   NULL);
	ep = uch ? uam_ep__create(uep, NULL) : NULL;
	ch = ep ? uam_chan__open(ep, uch) : NULL;
	if (!ch) {
		fprintf(stderr, "uam-peer: channel: %s\n", strerror(errno));
		uam_ep__destroy(ep);
		unet_endpoint__destroy(uep);
		return 1;
	}
	uam_ep__set_handler(ep, H_ECHO, on_echo, NULL);
	uam_ep__set_handler(ep, H_ECHOED, on_echoed, &w);
	uam_region__register(ep, REGION, region, REGION_LEN,
			     serve ? UAM_REGION_WRITE | UAM_REGION_READ : UAM_REGION_WRITE);
	printf("ready max_payload=%u\n", unet_channel__max_payload(uch));
	if (serve) {
		while (!stop_flag && now_s() < deadline)
			uam_wait(ep, 100);
	} else {
		uint64_t n, max = 0, calls = 0;

		for (n = 1; !err; n++) {
			/* what the peer takes, as it has said by now */
			max = uam_chan__medium_max_args(ch, 1);
			if (n > max)
				break;
			err = echo_call(ep, ch, &w, buf, n, deadline);
		}
		if (err) {
			fprintf(stderr, "medium call of %llu bytes: %s\n", (unsigned long long)n,
				strerror(-err));
			goto out;
		}
		printf("medium ok 1..%llu\n", (unsigned long long)max);
		err = bulk(ep, ch, buf, region, deadline);
		if (err) {
			fprintf(stderr, "bulk: %s\n", strerror(-err));
			goto out;
		}
		printf("bulk ok\n");
		for (n = 1; until && access(until, F_OK) && !err && !stop_flag; n = n % max + 1, calls++) {
			/* a route's MTU may lower it meanwhile */
			uint64_t m = uam_chan__medium_max_args(ch, 1);

			if (m != max) {
				printf("medium max now %llu\n", (unsigned long long)m);
				max = m;
				n = n > max ? max : n;
			}
			err = echo_call(ep, ch, &w, buf, n, deadline);
		}
		if (err) {
			fprintf(stderr, "call %llu (%llu bytes): %s\n", (unsigned long long)calls,
				(unsigned long long)n, strerror(-err));
			goto out;
		}
		if (until)
			printf("calls ok %llu\n", (unsigned long long)calls);
	}
out:
	uam_ep__destroy(ep);
	unet_endpoint__destroy(uep);
	free(region);
	free(buf);
	return err ? 1 : 0;
}
