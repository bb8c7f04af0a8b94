/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet-udp6 - the U-Net side of the UDP/IPv6 integration tests: one
 * UDP/IPv6 socket on a U-Net endpoint (include/unet-xdp/unet_udp.h,
 * "IPv6") talking to kernel sockets (udp6-kern.py).
 *
 *   unet-udp6 echo  IFACE --local [A]:P [opts]
 *       echo every datagram to its sender; on SIGTERM or --timeout print
 *       "echo echoed=N" and "udpstats key=value ...", exit 0.
 *   unet-udp6 sizes IFACE --local [A]:P --remote [A]:P --max N [opts]
 *       send payloads of the sizes of size_sweep() up to N to an echo
 *       service, check each echo byte for byte, print "sizes ok N"; then
 *       check that N + 1 bytes fail with EMSGSIZE ("emsgsize ok").
 *
 * opts: --xdp-mode native|skb, --timeout S (default 30).  Prints "ready
 * endpoint=ID max_payload=N" once the socket is open.  Exit 0 on success,
 * 1 on failure, 2 on usage errors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <unet-xdp/unet.h>
#include <unet-xdp/unet_udp.h>
#include "tool_common.h"

static void on_log(enum unet_log_level l, const char *msg, void *ctx)
{
	(void)ctx;
	if (l <= UNET_LOG_WARN)
		fprintf(stderr, "unet-udp6: libunet: %s\n", msg);
}

/* [ADDR]:PORT.  Returns 0 or -1. */
static int parse_ip6_port(const char *s, struct in6_addr *a, uint16_t *port)
{
	char buf[INET6_ADDRSTRLEN + 2];
	const char *end = strrchr(s, ']');
	uint64_t p;

	if (s[0] != '[' || !end || end[1] != ':' || (size_t)(end - s - 1) >= sizeof(buf))
		return -1;
	memcpy(buf, s + 1, (size_t)(end - s - 1));
	buf[end - s - 1] = '\0';
	if (inet_pton(AF_INET6, buf, a) != 1 || parse_u64(end + 2, 65535, &p))
		return -1;
	*port = (uint16_t)p;
	return 0;
}

/* The sizes a sweep up to max tries: every size to 16 (the short ones
 * and their padding), every 127th to max - 4, the last 4 up to max.
 * Returns the next size after size, or 0 past max.  udp6-kern.py has the
 * same sweep. */
static uint32_t size_next(uint32_t size, uint32_t max)
{
	if (size < 16 || size + 4 >= max)
		size++;
	else
		size = size + 127 < max - 4 ? size + 127 : max - 4;
	return size <= max ? size : 0;
}

static void print_stats(struct unet_endpoint *ep)
{
	struct unet_udp_stats st;

	unet_udp__stats(ep, &st);
	printf("udpstats rx=%llu tx=%llu bad_udp_csum=%llu partial=%llu partial_refused=%llu "
	       "malformed=%llu no_socket=%llu nd_rx=%llu nd_rep=%llu nd_rejected=%llu "
	       "nd_ignored=%llu tx_unresolved=%llu\n",
	       (unsigned long long)st.rx_datagrams, (unsigned long long)st.tx_datagrams,
	       (unsigned long long)st.rx_bad_udp_csum, (unsigned long long)st.rx_partial_csum,
	       (unsigned long long)st.rx_partial_refused, (unsigned long long)st.rx_malformed,
	       (unsigned long long)st.rx_no_socket, (unsigned long long)st.arp_rx,
	       (unsigned long long)st.arp_replies_sent, (unsigned long long)st.arp_rejected,
	       (unsigned long long)st.arp_ignored, (unsigned long long)st.tx_unresolved);
}

/* Send, again while it says -EAGAIN (the kernel resolving the next hop,
 * or the send queue full), for at most 2 s. */
static int send_one(struct unet_endpoint *ep, struct unet_udp_sock *s, const uint8_t *data,
		    uint32_t len, const struct in6_addr *to, uint16_t port)
{
	double until = now_s() + 2.0;
	int err;

	while ((err = unet_udp__send_copy6(s, data, len, to, port)) == -EAGAIN && now_s() < until &&
	       !stop_flag) {
		unet_endpoint__complete(ep);
		nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 }, NULL);
	}
	return err;
}

/* Echo until stopped; then take what is still queued (a test counts
 * what the XDP program delivered, stops us, and reads our counters), at
 * most a bounded number of rounds. */
static int echo(struct unet_endpoint *ep, double deadline)
{
	struct unet_recv_desc d[64];
	uint64_t echoed = 0;
	int drain = 100;

	while (drain > 0) {
		int n = unet_endpoint__recv(ep, d, 64);

		if (stop_flag || now_s() >= deadline) {
			if (n <= 0)
				break;
			drain--;
		}
		if (n <= 0) {
			unet_endpoint__wait(ep, 50);
			continue;
		}
		for (int i = 0; i < n; i++) {
			struct unet_udp_sock *s = unet_udp__desc_sock(&d[i]);
			struct in6_addr from;
			int err;

			if (!s || unet_udp__desc_src6(&d[i], &from)) {
				fprintf(stderr, "unet-udp6: not an IPv6 datagram\n");
				continue;
			}
			err = send_one(ep, s, d[i].data, d[i].len, &from, d[i].src_port);
			if (err)
				fprintf(stderr, "unet-udp6: echo: %s\n", strerror(-err));
			else
				echoed++;
		}
		unet_endpoint__release(ep, d, (unsigned int)n);
	}
	unet_endpoint__flush(ep, 500);
	printf("echo echoed=%llu\n", (unsigned long long)echoed);
	return 0;
}

static int sizes(struct unet_endpoint *ep, struct unet_udp_sock *s, uint32_t max, double deadline)
{
	static uint8_t msg[65536];
	struct unet_recv_desc d[64];
	int err;

	for (uint32_t size = 1; size && !stop_flag; size = size_next(size, max)) {
		bool ok = false;

		for (uint32_t j = 0; j < size; j++)
			msg[j] = seq_pattern(size, j);
		for (int attempt = 0; attempt < 3 && !ok && !stop_flag; attempt++) {
			double until = now_s() + 1.0;

			err = send_one(ep, s, msg, size, NULL, 0);
			if (err) {
				fprintf(stderr, "unet-udp6: send %u: %s\n", size, strerror(-err));
				if (err != -EAGAIN)
					return 1;
				continue;
			}
			while (!ok && now_s() < until && !stop_flag) {
				int n = unet_endpoint__recv(ep, d, 64);

				if (!n) {
					unet_endpoint__wait(ep, 10);
					continue;
				}
				for (int i = 0; i < n; i++) {
					if (unet_udp__desc_sock(&d[i]) == s && d[i].len == size &&
					    !memcmp(d[i].data, msg, size))
						ok = true;
					else
						fprintf(stderr, "unet-udp6: size %u: unexpected %u bytes\n",
							size, d[i].len);
				}
				unet_endpoint__release(ep, d, (unsigned int)n);
			}
		}
		if (!ok || now_s() > deadline) {
			printf("sizes failed at %u\n", size);
			return 1;
		}
	}
	printf("sizes ok %u\n", max);
	err = unet_udp__send_copy6(s, msg, max + 1, NULL, 0);
	if (err != -EMSGSIZE) {
		printf("send of %u bytes: %s, not EMSGSIZE\n", max + 1, strerror(-err));
		return 1;
	}
	printf("emsgsize ok\n");
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: unet-udp6 echo|sizes IFACE --local [A]:P [--remote [A]:P --max N]\n"
		   "       [--xdp-mode native|skb] [--timeout S]\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "local", 1, 0, 'l' },	   { "remote", 1, 0, 'r' },  { "max", 1, 0, 'm' },
		{ "xdp-mode", 1, 0, 'x' }, { "timeout", 1, 0, 't' }, { "help", 0, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	UNET_OPTS_INIT(unet_endpoint_opts, eo);
	UNET_OPTS_INIT(unet_udp_opts, uo);
	struct unet_udp_sock *s = NULL;
	struct unet_endpoint_info info;
	struct unet_endpoint *ep;
	struct in6_addr laddr = { 0 };
	uint16_t lport = 0, rport = 0;
	uint64_t max = 0, timeout = 30;
	const char *mode, *ifname;
	bool have_remote = false;
	int c, rc = 1;

	if (argc < 3) {
		usage(stderr);
		return 2;
	}
	mode = argv[1];
	ifname = argv[2];
	optind = 3;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'l':
			if (parse_ip6_port(optarg, &laddr, &lport) || !lport)
				return fprintf(stderr, "bad --local %s\n", optarg), 2;
			break;
		case 'r':
			if (parse_ip6_port(optarg, &uo.remote_addr6, &rport) || !rport)
				return fprintf(stderr, "bad --remote %s\n", optarg), 2;
			have_remote = true;
			break;
		case 'm':
			if (parse_u64(optarg, 65000, &max) || !max)
				return fprintf(stderr, "bad --max\n"), 2;
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
	if (!lport || (strcmp(mode, "echo") && strcmp(mode, "sizes")) ||
	    (!strcmp(mode, "sizes") && (!have_remote || !max))) {
		usage(stderr);
		return 2;
	}
	catch_stop_signals();
	unet_set_log_fn(on_log, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);

	ep = unet_endpoint__create(ifname, &eo);
	if (!ep) {
		fprintf(stderr, "unet-udp6: endpoint on %s: %s\n", ifname, strerror(errno));
		return 1;
	}
	uo.remote_port = rport;
	s = unet_udp__open6(ep, &laddr, lport, &uo);
	if (!s) {
		fprintf(stderr, "unet-udp6: open port %u: %s\n", lport, strerror(errno));
		goto out;
	}
	unet_endpoint__info(ep, &info);
	printf("ready endpoint=%u max_payload=%u\n", info.id, unet_udp__max_payload(s));
	if (!strcmp(mode, "echo"))
		rc = echo(ep, now_s() + (double)timeout);
	else
		rc = sizes(ep, s, (uint32_t)max, now_s() + (double)timeout);
out:
	print_stats(ep);
	unet_udp__close(s);
	unet_endpoint__destroy(ep);
	return rc;
}
