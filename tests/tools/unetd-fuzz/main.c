/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unetd-fuzz - seeded hostile requests on unetd's socket:
 *
 *   unetd-fuzz --socket PATH --iface IF [--count N] [--seed S] [--seconds T]
 *              [--peer ADDR]... [--tags LO-HI] [--channels N]
 *
 * Each request is one of: random bytes of any length (up to past the
 * largest message), a good header with a random type and body, a request
 * with a file descriptor attached, truncated and overlong bodies, and
 * well-formed requests with random fields (endpoints on IF or on names
 * that are no interface, random kinds and sizes, channels on random
 * endpoints and tags, destroys of endpoints that may not exist).  A
 * dropped connection is counted and made again.
 *
 * With --peer (an IPv4 or IPv6 address on IF's link that answers; up to
 * four of each), a quarter of the requests are well-formed routable
 * channel opens of both families with hostile fields, on a connection of
 * their own, each judged (chan.c): what names something the caller may
 * not use must be refused -- --tags is the policy's grant to the caller,
 * --channels its channel quota -- and what opens must carry what the
 * daemon decides.  Prints
 *   chan opens=N opened=N refused=N must_refuse=N wrong=N bad=N ...
 *   chan refused endpoint=N tag0=N ...
 *
 * At the end the daemon must still answer HELLO and STATUS on a fresh
 * connection, and every channel check must have held: exit 0 if so, 1
 * if not.  Prints
 *   fuzz requests=N replies=N errors=N dropped=N endpoints=N alive=0|1
 * Bounded by --count (default 10000) and --seconds (default 60).
 *
 *   unetd-fuzz --socket PATH --hold N
 *
 * opens N connections at once, says HELLO on each, and prints
 *   hold served=K of N
 * (how many the daemon answered), exit 0.
 *
 *   unetd-fuzz --socket PATH --strict [--seed S]
 *
 * judges the protocol's strictness (strict.c): every reserved byte of
 * every request type set (seeded values) must be refused with EINVAL on a
 * connection that stays, the same requests with them zero must not be,
 * and a body a byte shorter or longer than its type's must drop the
 * connection.  Prints
 *   strict reserved refused=N of N clean=N of N length dropped=N of N kept=1
 * exit 0 if every check held, 1 if not.
 *
 *   unetd-fuzz --socket PATH --flood SECONDS [--count N]
 *
 * sends CH_OPEN_IPV4 requests on an endpoint that is nobody's, back to
 * back for SECONDS (N at most, default 10000), each refused, and prints
 *   flood requests=N refused=N
 * exit 0 if every one was answered and refused.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"

static size_t fill_body(uint16_t type, uint8_t *b, const char *iface)
{
	switch (type) {
	case UNETD_REQ_HELLO: {
		struct unetd_hello h = { .version = rnd() % 4 ? UNETD_PROTO_VERSION : rnd() };

		memcpy(b, &h, sizeof(h));
		return sizeof(h);
	}
	case UNETD_REQ_EP_CREATE: {
		static const uint32_t sizes[] = { 0, 1, 2048, 4096, 65536, 1u << 20, 1u << 30, UINT32_MAX };
		struct unetd_ep_create c = { 0 };

		if (rnd() % 3)
			snprintf(c.ifname, sizeof(c.ifname), "%s", iface);
		else
			for (size_t i = 0; i < sizeof(c.ifname); i++)
				c.ifname[i] = (char)rnd();
		c.kind = rnd() % 4 ? rnd() % 3 : rnd();
		c.segment_size = sizes[rnd() % 8];
		c.frame_size = rnd() % 2 ? 2048 : sizes[rnd() % 8];
		c.ring_size = rnd() % 2 ? 1024 : sizes[rnd() % 8];
		memcpy(b, &c, sizeof(c));
		return sizeof(c);
	}
	case UNETD_REQ_EP_DESTROY: {
		struct unetd_ep_ref r = { .ep = rnd() % 8, .reserved = rnd() % 8 ? 0 : rnd() };

		memcpy(b, &r, sizeof(r));
		return sizeof(r);
	}
	case UNETD_REQ_CH_OPEN: {
		struct unetd_ch_open c = { .ep = rnd() % 8, .tag = (uint16_t)rnd(),
					   .peer_tag = (uint16_t)rnd() };

		if (rnd() % 8 == 0)
			c.pad[rnd() % 2] = (uint8_t)(1 + rnd() % 255);

		for (int i = 0; i < 6; i++)
			c.peer_mac[i] = (uint8_t)rnd();
		memcpy(b, &c, sizeof(c));
		return sizeof(c);
	}
	case UNETD_REQ_CH_CLOSE: {
		struct unetd_ch_ref r = { .ep = rnd() % 8, .tag = (uint16_t)rnd(),
					  .pad = rnd() % 8 ? 0 : (uint16_t)rnd() };

		memcpy(b, &r, sizeof(r));
		return sizeof(r);
	}
	case UNETD_REQ_CH_OPEN_IPV4: {
		/* Peers the daemon must refuse (none, broadcast, multicast,
		 * loopback, unresolved) and random ones; tags and ports any. */
		static const uint32_t peers[] = { 0, 0xffffffffu, 0xe0000001u, 0x7f000001u,
						  0x0ac90001u, 0x0ac90002u };
		struct unetd_ch_open_ipv4 c = { .ep = rnd() % 8, .tag = (uint16_t)rnd(),
						.peer_tag = (uint16_t)rnd(),
						.peer_port = rnd() % 2 ? 0 : (uint16_t)rnd(),
						.pad = rnd() % 8 ? 0 : (uint16_t)rnd() };

		c.peer_addr = htonl(rnd() % 2 ? peers[rnd() % 6] : (uint32_t)rnd());
		memcpy(b, &c, sizeof(c));
		return sizeof(c);
	}
	case UNETD_REQ_CH_OPEN_IPV6: {
		/* The same over IPv6: unspecified, loopback, multicast, a
		 * link-local, or random bytes. */
		struct unetd_ch_open_ipv6 c = { .ep = rnd() % 8, .tag = (uint16_t)rnd(),
						.peer_tag = (uint16_t)rnd(),
						.peer_port = rnd() % 2 ? 0 : (uint16_t)rnd(),
						.pad = rnd() % 8 ? 0 : (uint16_t)rnd() };

		switch (rnd() % 4) {
		case 0:
			c.peer_addr[15] = (uint8_t)(rnd() % 2);
			break;
		case 1:
			c.peer_addr[0] = 0xff;
			c.peer_addr[1] = 0x02;
			c.peer_addr[15] = 1;
			break;
		case 2:
			c.peer_addr[0] = 0xfe;
			c.peer_addr[1] = 0x80;
			/* fall through */
		default:
			for (int i = c.peer_addr[0] ? 8 : 0; i < 16; i++)
				c.peer_addr[i] = (uint8_t)rnd();
			break;
		}
		memcpy(b, &c, sizeof(c));
		return sizeof(c);
	}
	default:
		return 0;
	}
}

/* ADDR into the channel fuzz's peers: false if it is no address or
 * there are enough of its family. */
static bool add_peer(struct chan_fuzz_opts *o, const char *addr)
{
	if (o->npeers4 < 4 && inet_pton(AF_INET, addr, &o->peers4[o->npeers4]) == 1) {
		o->npeers4++;
		return true;
	}
	if (o->npeers6 < 4 && inet_pton(AF_INET6, addr, o->peers6[o->npeers6]) == 1) {
		o->npeers6++;
		return true;
	}
	return false;
}

/* HELLO and STATUS answered on a fresh connection: the daemon still
 * serves a well-behaved client. */
static bool still_serves(const char *path)
{
	struct unetd_hello hello = { .version = UNETD_PROTO_VERSION };
	struct fuzz_reply r;
	int fd = connect_to(path);
	bool ok;

	if (fd < 0)
		return false;
	ok = call(fd, 1, UNETD_REQ_HELLO, &hello, sizeof(hello), 2000, &r) == 1 && !r.h.err &&
	     call(fd, 2, UNETD_REQ_STATUS, NULL, 0, 2000, &r) == 1 && !r.h.err;
	close(fd);
	return ok;
}

/* --hold N: N connections at once, a HELLO on each; how many answered. */
static long hold_conns(const char *path, long n)
{
	static int fds[1024];
	struct unetd_req_hdr h = { .version = UNETD_PROTO_VERSION, .type = UNETD_REQ_HELLO,
				   .len = sizeof(struct unetd_hello), .seq = 1 };
	struct unetd_hello hello = { .version = UNETD_PROTO_VERSION };
	uint8_t buf[sizeof(h) + sizeof(hello)];
	struct fuzz_reply r;
	long served = 0, i;

	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), &hello, sizeof(hello));
	for (i = 0; i < n; i++)
		fds[i] = connect_to(path);
	for (i = 0; i < n; i++)
		if (fds[i] >= 0 && !send_req(fds[i], buf, sizeof(buf), false) &&
		    get_reply(fds[i], 2000, &r) == 1 && !r.h.err)
			served++;
	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return served;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' }, { "iface", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },  { "seed", required_argument, NULL, 'S' },
		{ "seconds", required_argument, NULL, 't' }, { "hold", required_argument, NULL, 'H' },
		{ "peer", required_argument, NULL, 'p' },   { "tags", required_argument, NULL, 'T' },
		{ "channels", required_argument, NULL, 'c' },
		{ "strict", no_argument, NULL, 'X' },	    { "flood", required_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 },
	};
	struct chan_fuzz_opts copts = { 0 };
	struct chan_fuzz *chan = NULL;
	const char *path = NULL, *iface = "lo";
	long count = 10000, seconds = 60, replies = 0, errors = 0, dropped = 0, created = 0, i;
	long hold = 0, flood = 0;
	bool strict = false;
	static uint8_t buf[UNETD_MAX_MSG + 512];
	unsigned lo, hi;
	bool ok, chan_ok = true;
	time_t end;
	int c, fd = -1;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': path = optarg; break;
		case 'i': iface = optarg; break;
		case 'n': count = strtol(optarg, NULL, 10); break;
		case 'S': fuzz_seed = strtoull(optarg, NULL, 0) | 1; break;
		case 't': seconds = strtol(optarg, NULL, 10); break;
		case 'H': hold = strtol(optarg, NULL, 10); break;
		case 'p':
			if (!add_peer(&copts, optarg)) {
				fprintf(stderr, "unetd-fuzz: --peer %s: not an address, or too many\n",
					optarg);
				return 2;
			}
			break;
		case 'T':
			if (sscanf(optarg, "%u-%u", &lo, &hi) != 2 || !lo || lo > hi || hi > 65535) {
				fprintf(stderr, "unetd-fuzz: --tags %s: want LO-HI within 1-65535\n",
					optarg);
				return 2;
			}
			copts.tag_lo = (uint16_t)lo;
			copts.tag_hi = (uint16_t)hi;
			break;
		case 'c': copts.quota = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'X': strict = true; break;
		case 'F': flood = strtol(optarg, NULL, 10); break;
		default: return 2;
		}
	}
	if (!path || count < 1 || seconds < 1) {
		fprintf(stderr, "usage: unetd-fuzz --socket PATH --iface IF [--count N] "
				"[--seed S] [--seconds T] [--peer ADDR]... [--tags LO-HI] "
				"[--channels N]\n"
				"       unetd-fuzz --socket PATH --hold N | --strict [--seed S] | "
				"--flood SECONDS [--count N]\n");
		return 2;
	}
	if (strict)
		return strict_run(path) ? 0 : 1;
	if (flood > 0) {
		long refused, n = flood_run(path, flood, count, &refused);

		printf("flood requests=%ld refused=%ld\n", n, refused);
		return n > 0 && refused == n ? 0 : 1;
	}
	if (hold > 0) {
		if (hold > 1024)
			hold = 1024;
		printf("hold served=%ld of %ld\n", hold_conns(path, hold), hold);
		return 0;
	}
	if (copts.npeers4 + copts.npeers6) {
		copts.path = path;
		copts.iface = iface;
		chan = chan_fuzz_new(&copts);
		if (!chan)
			return 1;
	}
	end = time(NULL) + seconds;
	for (i = 0; i < count && time(NULL) < end; i++) {
		struct unetd_req_hdr *h = (struct unetd_req_hdr *)buf;
		struct fuzz_reply r;
		bool with_fd = false;
		size_t len;

		if (chan && rnd() % 4 == 0) {
			chan_fuzz_step(chan);
			continue;
		}
		if (fd < 0 && (fd = connect_to(path)) < 0) {
			fprintf(stderr, "unetd-fuzz: connect %s: %s\n", path, strerror(errno));
			return 1;
		}
		h->version = UNETD_PROTO_VERSION;
		h->seq = (uint32_t)i;
		h->reserved = 0;
		switch (rnd() % 8) {
		case 0: /* noise, of any length up to past the largest message */
			len = rnd() % sizeof(buf);
			for (size_t k = 0; k < len; k++)
				buf[k] = (uint8_t)rnd();
			break;
		case 1: /* a header and a random body of a random claimed length */
			h->type = (uint16_t)(rnd() % (UNETD_REQ__COUNT + 2));
			len = sizeof(*h) + rnd() % 256;
			h->len = rnd() % 2 ? (uint32_t)(len - sizeof(*h)) : rnd();
			for (size_t k = sizeof(*h); k < len; k++)
				buf[k] = (uint8_t)rnd();
			break;
		case 2: /* well-formed, with a descriptor attached */
			with_fd = true;
			/* fall through */
		default: /* well-formed, random fields; sometimes cut short */
			h->type = (uint16_t)(1 + rnd() % (UNETD_REQ__COUNT - 1));
			h->len = (uint32_t)fill_body(h->type, buf + sizeof(*h), iface);
			len = sizeof(*h) + h->len;
			if (rnd() % 16 == 0 && len > 1)
				len -= 1 + rnd() % (len - 1);
			break;
		}
		if (send_req(fd, buf, len, with_fd)) {
			dropped++;
			close(fd);
			fd = -1;
			continue;
		}
		switch (get_reply(fd, 200, &r)) {
		case 1:
			replies++;
			if (r.h.err) {
				errors++;
			} else if (r.h.type == UNETD_REQ_EP_CREATE && r.body_len >= sizeof(uint32_t)) {
				uint32_t ep;

				created++;
				memcpy(&ep, r.body, sizeof(ep));
				/* another client's, live or soon gone */
				chan_fuzz_foreign(chan, ep);
			}
			break;
		case -1:
			dropped++;
			close(fd);
			fd = -1;
			break;
		}
	}
	if (fd >= 0)
		close(fd);
	if (chan)
		chan_ok = chan_fuzz_end(chan);
	ok = still_serves(path);
	printf("fuzz requests=%ld replies=%ld errors=%ld dropped=%ld endpoints=%ld alive=%d\n", i,
	       replies, errors, dropped, created, ok);
	return ok && chan_ok ? 0 : 1;
}
