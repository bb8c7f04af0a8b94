/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet-tcp6 - the U-Net side of the TCP/IPv6 integration tests: one
 * TCP/IPv6 connection on a U-Net endpoint (include/unet-xdp/unet_tcp.h,
 * "IPv6") talking to a kernel socket (tcp6-kern.py).
 *
 *   unet-tcp6 server IFACE --local [A]:P --bytes N [opts]
 *       listen, accept one connection, read N bytes and check them
 *       (pattern below), send N bytes of the pattern back, close.
 *   unet-tcp6 client IFACE --local [A] --remote [A]:P --bytes N [opts]
 *       connect, send N bytes of the pattern, read N back and check them.
 *
 * Byte i of a stream is (i * 7 + i / 251) & 0xff (tcp6-kern.py has it).
 * Prints "ready endpoint=ID" once listening (server), then "ok N mss=M
 * peer=ADDR", and at exit "tcpstats k=v ...".  opts: --xdp-mode
 * native|skb, --timeout S (default 20).  Exit 0 on success, 1 on
 * failure, 2 on usage errors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unet-xdp/unet.h>
#include <unet-xdp/unet_tcp.h>
#include "tool_common.h"

static void on_log(enum unet_log_level l, const char *msg, void *ctx)
{
	(void)ctx;
	if (l <= UNET_LOG_WARN)
		fprintf(stderr, "unet-tcp6: libunet: %s\n", msg);
}

static uint8_t pat(uint64_t i)
{
	return (uint8_t)(i * 7 + i / 251);
}

/* [ADDR]:PORT or [ADDR] (port then 0).  Returns 0 or -1. */
static int parse_ip6(const char *s, struct in6_addr *a, uint16_t *port)
{
	char buf[INET6_ADDRSTRLEN + 2];
	const char *end = strrchr(s, ']');
	uint64_t p = 0;

	if (s[0] != '[' || !end || (size_t)(end - s - 1) >= sizeof(buf))
		return -1;
	memcpy(buf, s + 1, (size_t)(end - s - 1));
	buf[end - s - 1] = '\0';
	if (inet_pton(AF_INET6, buf, a) != 1)
		return -1;
	if (end[1] && (end[1] != ':' || parse_u64(end + 2, 65535, &p)))
		return -1;
	*port = (uint16_t)p;
	return 0;
}

static void print_stats(struct unet_endpoint *ep)
{
	struct unet_tcp_stats st;

	if (unet_tcp__stats(ep, &st))
		return;
	printf("tcpstats rx_frames=%llu rx_not_ours=%llu rx_malformed=%llu rx_bad_csum=%llu "
	       "rx_partial_csum=%llu rx_partial_refused=%llu rx_no_conn=%llu rx_syn_dropped=%llu "
	       "tx_frames=%llu tx_unresolved=%llu\n",
	       (unsigned long long)st.rx_frames, (unsigned long long)st.rx_not_ours,
	       (unsigned long long)st.rx_malformed, (unsigned long long)st.rx_bad_csum,
	       (unsigned long long)st.rx_partial_csum, (unsigned long long)st.rx_partial_refused,
	       (unsigned long long)st.rx_no_conn, (unsigned long long)st.rx_syn_dropped,
	       (unsigned long long)st.tx_frames, (unsigned long long)st.tx_unresolved);
}

/* Send n bytes of the pattern, then read n and check them. */
static int exchange(struct unet_tcp *c, uint64_t n, bool send_first, double deadline)
{
	static uint8_t buf[65536];
	uint64_t sent = 0, got = 0;

	for (int phase = 0; phase < 2; phase++) {
		bool sending = (phase == 0) == send_first;

		while ((sending ? sent : got) < n) {
			ssize_t r;

			if (now_s() > deadline || stop_flag) {
				fprintf(stderr, "unet-tcp6: timed out (sent %llu, got %llu)\n",
					(unsigned long long)sent, (unsigned long long)got);
				return 1;
			}
			if (sending) {
				size_t k = n - sent < sizeof(buf) ? n - sent : sizeof(buf);

				for (size_t j = 0; j < k; j++)
					buf[j] = pat(sent + j);
				r = unet_tcp__send(c, buf, k, 100);
				if (r > 0)
					sent += (uint64_t)r;
			} else {
				r = unet_tcp__recv(c, buf, sizeof(buf), 100);
				if (r == 0) {
					fprintf(stderr, "unet-tcp6: end of stream at %llu\n",
						(unsigned long long)got);
					return 1;
				}
				for (ssize_t j = 0; j < r; j++)
					if (buf[j] != pat(got + (uint64_t)j)) {
						fprintf(stderr, "unet-tcp6: byte %llu wrong\n",
							(unsigned long long)(got + (uint64_t)j));
						return 1;
					}
				if (r > 0)
					got += (uint64_t)r;
			}
			if (r < 0 && r != -EAGAIN) {
				fprintf(stderr, "unet-tcp6: %s: %s\n", sending ? "send" : "recv",
					strerror((int)-r));
				return 1;
			}
		}
	}
	return 0;
}

static void report(struct unet_tcp *c, uint64_t n)
{
	struct in6_addr peer;
	char a[INET6_ADDRSTRLEN] = "?";

	if (!unet_tcp__remote_addr6(c, &peer))
		inet_ntop(AF_INET6, &peer, a, sizeof(a));
	printf("ok %llu mss=%u peer=%s\n", (unsigned long long)n, unet_tcp__mss(c), a);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: unet-tcp6 server|client IFACE --local [A]:P|[A] [--remote [A]:P] "
		   "--bytes N [--xdp-mode native|skb] [--timeout S]\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "local", 1, 0, 'l' },	   { "remote", 1, 0, 'r' },  { "bytes", 1, 0, 'b' },
		{ "xdp-mode", 1, 0, 'x' }, { "timeout", 1, 0, 't' }, { "help", 0, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	UNET_OPTS_INIT(unet_endpoint_opts, eo);
	struct unet_tcp *l = NULL, *c = NULL;
	struct unet_endpoint_info info;
	struct in6_addr laddr, raddr;
	uint16_t lport = 0, rport = 0;
	uint64_t bytes = 0, timeout = 20;
	bool server, have_remote = false;
	const char *ifname;
	struct unet_endpoint *ep;
	double deadline;
	int ch, rc = 1;

	if (argc < 3) {
		usage(stderr);
		return 2;
	}
	server = !strcmp(argv[1], "server");
	if (!server && strcmp(argv[1], "client")) {
		usage(stderr);
		return 2;
	}
	ifname = argv[2];
	optind = 3;
	memset(&laddr, 0, sizeof(laddr));
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (ch) {
		case 'l':
			if (parse_ip6(optarg, &laddr, &lport))
				return fprintf(stderr, "bad --local %s\n", optarg), 2;
			break;
		case 'r':
			if (parse_ip6(optarg, &raddr, &rport) || !rport)
				return fprintf(stderr, "bad --remote %s\n", optarg), 2;
			have_remote = true;
			break;
		case 'b':
			if (parse_u64(optarg, 1ull << 32, &bytes) || !bytes)
				return fprintf(stderr, "bad --bytes\n"), 2;
			break;
		case 'x':
			eo.mode = !strcmp(optarg, "native") ? UNET_XDP_MODE_NATIVE : UNET_XDP_MODE_SKB;
			break;
		case 't':
			if (parse_u64(optarg, 3600, &timeout))
				return fprintf(stderr, "bad --timeout\n"), 2;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!bytes || (server && !lport) || (!server && !have_remote)) {
		usage(stderr);
		return 2;
	}
	catch_stop_signals();
	unet_set_log_fn(on_log, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	deadline = now_s() + (double)timeout;

	ep = unet_endpoint__create(ifname, &eo);
	if (!ep) {
		fprintf(stderr, "unet-tcp6: endpoint on %s: %s\n", ifname, strerror(errno));
		return 1;
	}
	unet_endpoint__info(ep, &info);
	if (server) {
		l = unet_tcp__listen6(ep, &laddr, lport, NULL);
		if (!l) {
			fprintf(stderr, "unet-tcp6: listen6: %s\n", strerror(errno));
			goto out;
		}
		printf("ready endpoint=%u\n", info.id);
		while (!c && now_s() < deadline && !stop_flag)
			c = unet_tcp__accept(l, 100);
		if (!c) {
			fprintf(stderr, "unet-tcp6: no connection\n");
			goto out;
		}
		if (!unet_tcp__is_v6(c)) {
			fprintf(stderr, "unet-tcp6: accepted an IPv4 connection\n");
			goto out;
		}
		rc = exchange(c, bytes, false, deadline);
	} else {
		c = unet_tcp__connect6(ep, &laddr, &raddr, rport, NULL, 5000);
		if (!c) {
			fprintf(stderr, "unet-tcp6: connect6: %s\n", strerror(errno));
			goto out;
		}
		rc = exchange(c, bytes, true, deadline);
	}
	if (!rc)
		report(c, bytes);
out:
	print_stats(ep);
	if (c) {
		/* let lwIP finish sending before the endpoint goes */
		unet_tcp__close(c);
		for (int i = 0; i < 200 && unet_tcp__closing(ep); i++)
			unet_endpoint__dispatch(ep, 10, 64);
	}
	unet_tcp__close(l);
	unet_endpoint__destroy(ep);
	return rc;
}
