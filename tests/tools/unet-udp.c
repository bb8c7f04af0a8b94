/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet-udp - the U-Net side of the UDP integration tests: UDP sockets on a
 * U-Net endpoint (include/unet-xdp/unet_udp.h) talking to kernel sockets (udp-kern).
 *
 *   unet-udp echo  IFACE --local A:P [--ports N] [--remote A[:P]] [opts]
 *       echo every datagram to its sender from the socket it came to
 *       (ports P..P+N-1, one socket each); on SIGTERM or --timeout print
 *       "echo echoed=N" and "udpstats key=value ...", exit 0.
 *   unet-udp sizes IFACE --local A:P --remote A:P [--min M] --max N [opts]
 *       send payloads of M (default 1)..N bytes to an echo service, check
 *       each echo byte for byte, print "sizes ok M..N"; a send refused
 *       for its size prints "sizes refused N: <strerror>".
 *   unet-udp unreach IFACE --local A:P --remote A:P --count N [--gap-ms G]
 *       send N datagrams to a peer that does not answer ARP, G ms apart,
 *       each with one unet_udp__send_copy call (no retry), and print
 *       "unreach sends=N ok=N eagain=N ehostunreach=N other=N".  Stops
 *       early at --timeout (sends= then says how far it got).
 *
 * A send that returns -EAGAIN (send queue full, or the peer's ARP answer
 * not in yet) is retried for up to 2 s, as an application would.
 *
 * opts: --partial auto|accept|reject, --queue-mask M, --xdp-mode
 * native|skb, --timeout S (default 30), --arp-ttl-ms T, --copy (send with
 * a copy instead of in place), --no-tx-csum-offload (UDP checksums in
 * software even where the device could compute them).  Prints "ready
 * endpoint=ID max_payload=N tx_csum_offload=0|1" once its sockets are
 * open.  Exit 0 on success, 1 on failure, 2 on usage errors.
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

#define MAX_PORTS 64

static void on_log(enum unet_log_level l, const char *msg, void *ctx)
{
	(void)ctx;
	if (l <= UNET_LOG_WARN)
		fprintf(stderr, "unet-udp: libunet: %s\n", msg);
}

static void print_stats(struct unet_endpoint *ep)
{
	struct unet_udp_stats st;

	unet_udp__stats(ep, &st);
	printf("udpstats rx=%llu tx=%llu bad_ip_csum=%llu bad_udp_csum=%llu partial=%llu "
	       "partial_refused=%llu malformed=%llu no_socket=%llu arp_req=%llu arp_rep=%llu "
	       "arp_rx=%llu arp_failed=%llu arp_rep_limited=%llu arp_rejected=%llu arp_ignored=%llu "
	       "tx_unresolved=%llu tx_csum_offload=%llu\n",
	       (unsigned long long)st.rx_datagrams, (unsigned long long)st.tx_datagrams,
	       (unsigned long long)st.rx_bad_ip_csum, (unsigned long long)st.rx_bad_udp_csum,
	       (unsigned long long)st.rx_partial_csum, (unsigned long long)st.rx_partial_refused,
	       (unsigned long long)st.rx_malformed, (unsigned long long)st.rx_no_socket,
	       (unsigned long long)st.arp_requests_sent, (unsigned long long)st.arp_replies_sent,
	       (unsigned long long)st.arp_rx, (unsigned long long)st.arp_failed,
	       (unsigned long long)st.arp_replies_limited, (unsigned long long)st.arp_rejected,
	       (unsigned long long)st.arp_ignored, (unsigned long long)st.tx_unresolved,
	       (unsigned long long)st.tx_csum_offload);
}

static int send_one_try(struct unet_endpoint *ep, struct unet_udp_sock *s, bool copy,
			const uint8_t *data, uint32_t len, uint32_t addr, uint16_t port)
{
	uint64_t buf;
	int err;

	if (copy)
		return unet_udp__send_copy(s, data, len, addr, port);
	buf = unet_endpoint__buf_alloc(ep);
	if (buf == UNET_NO_BUF)
		return -EAGAIN;
	memcpy(unet_udp__buf_payload(ep, buf), data, len);
	err = unet_udp__send(s, buf, len, addr, port);
	if (err)
		unet_endpoint__buf_free(ep, buf);
	return err;
}

static void sleep_ms(uint64_t ms)
{
	nanosleep(&(struct timespec){ .tv_sec = (time_t)(ms / 1000),
				      .tv_nsec = (long)(ms % 1000) * 1000000 },
		  NULL);
}

/* send_one_try, again while it says -EAGAIN, for at most 2 s. */
static int send_one(struct unet_endpoint *ep, struct unet_udp_sock *s, bool copy,
		    const uint8_t *data, uint32_t len, uint32_t addr, uint16_t port)
{
	double until = now_s() + 2.0;
	int err;

	while ((err = send_one_try(ep, s, copy, data, len, addr, port)) == -EAGAIN &&
	       now_s() < until && !stop_flag) {
		unet_endpoint__complete(ep);
		nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 }, NULL);
	}
	return err;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: unet-udp echo|sizes|unreach IFACE --local A:P [--ports N] [--remote A[:P]]\n"
		   "       [--min M] [--max N] [--count N] [--partial auto|accept|reject] [--queue-mask M]\n"
		   "       [--xdp-mode native|skb] [--timeout S] [--arp-ttl-ms T] [--copy]\n"
		   "       [--no-tx-csum-offload]\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "local", 1, 0, 'l' },	     { "remote", 1, 0, 'r' },  { "ports", 1, 0, 'n' },
		{ "max", 1, 0, 'm' },	     { "partial", 1, 0, 'p' }, { "queue-mask", 1, 0, 'q' },
		{ "xdp-mode", 1, 0, 'x' },   { "timeout", 1, 0, 't' }, { "arp-ttl-ms", 1, 0, 'a' },
		{ "copy", 0, 0, 'c' },	     { "help", 0, 0, 'h' },    { "gap-ms", 1, 0, 'g' },
		{ "count", 1, 0, 'C' },	     { "min", 1, 0, 'M' },
		{ "no-tx-csum-offload", 0, 0, 'O' }, { 0, 0, 0, 0 },
	};
	UNET_OPTS_INIT(unet_endpoint_opts, eo);
	UNET_OPTS_INIT(unet_udp_opts, uo);
	struct unet_udp_sock *socks[MAX_PORTS] = { 0 };
	struct unet_endpoint_info info;
	struct unet_endpoint *ep;
	uint32_t laddr = 0, raddr = 0;
	uint16_t lport = 0, rport = 0;
	uint64_t nports = 1, min = 1, max = 0, timeout = 30, gap_ms = 0, count = 0, v;
	const char *mode, *ifname;
	bool copy = false;
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
			if (parse_ipv4_port(optarg, &laddr, &lport) || !lport)
				return fprintf(stderr, "bad --local %s\n", optarg), 2;
			break;
		case 'r':
			if (parse_ipv4_port(optarg, &raddr, &rport))
				return fprintf(stderr, "bad --remote %s\n", optarg), 2;
			break;
		case 'n':
			if (parse_u64(optarg, MAX_PORTS, &nports) || !nports)
				return fprintf(stderr, "bad --ports\n"), 2;
			break;
		case 'm':
			if (parse_u64(optarg, 65535, &max))
				return fprintf(stderr, "bad --max\n"), 2;
			break;
		case 'M':
			if (parse_u64(optarg, 65535, &min) || !min)
				return fprintf(stderr, "bad --min\n"), 2;
			break;
		case 'p':
			uo.partial_csum = !strcmp(optarg, "accept")   ? UNET_UDP_PARTIAL_ACCEPT
					  : !strcmp(optarg, "reject") ? UNET_UDP_PARTIAL_REJECT
								      : UNET_UDP_PARTIAL_AUTO;
			break;
		case 'q':
			if (parse_u64(optarg, 0xffff, &v))
				return fprintf(stderr, "bad --queue-mask\n"), 2;
			eo.queue_mask = (uint32_t)v;
			break;
		case 'x':
			eo.mode = !strcmp(optarg, "native") ? UNET_XDP_MODE_NATIVE : UNET_XDP_MODE_SKB;
			break;
		case 't':
			if (parse_u64(optarg, 3600, &timeout))
				return fprintf(stderr, "bad --timeout\n"), 2;
			break;
		case 'a':
			if (parse_u64(optarg, 3600000, &v))
				return fprintf(stderr, "bad --arp-ttl-ms\n"), 2;
			uo.arp_ttl_ms = (uint32_t)v;
			break;
		case 'c':
			copy = true;
			break;
		case 'O':
			eo.no_tx_csum_offload = true;
			break;
		case 'C':
			if (parse_u64(optarg, 1000000, &count))
				return fprintf(stderr, "bad --count\n"), 2;
			break;
		case 'g':
			if (parse_u64(optarg, 10000, &gap_ms))
				return fprintf(stderr, "bad --gap-ms\n"), 2;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!laddr || (strcmp(mode, "echo") && strcmp(mode, "sizes") && strcmp(mode, "unreach")) ||
	    (!strcmp(mode, "sizes") && (!raddr || !rport || !max)) ||
	    (!strcmp(mode, "unreach") && (!raddr || !rport || !count))) {
		usage(stderr);
		return 2;
	}
	catch_stop_signals();
	unet_set_log_fn(on_log, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);

	ep = unet_endpoint__create(ifname, &eo);
	if (!ep) {
		fprintf(stderr, "unet-udp: endpoint on %s: %s\n", ifname, strerror(errno));
		return 1;
	}
	uo.remote_addr = raddr;
	uo.remote_port = rport;
	for (uint64_t i = 0; i < nports; i++) {
		socks[i] = unet_udp__open(ep, laddr, (uint16_t)(lport + i), &uo);
		if (!socks[i]) {
			fprintf(stderr, "unet-udp: open port %u: %s\n", (unsigned)(lport + i),
				strerror(errno));
			goto out;
		}
	}
	unet_endpoint__info(ep, &info);
	printf("ready endpoint=%u max_payload=%u tx_csum_offload=%d\n", info.id,
	       unet_udp__max_payload(socks[0]), info.tx_csum_offload);

	double deadline = now_s() + (double)timeout;
	struct unet_recv_desc d[64];

	if (!strcmp(mode, "echo")) {
		uint64_t echoed = 0;

		while (!stop_flag && now_s() < deadline) {
			int n = unet_endpoint__recv(ep, d, 64);

			if (n == 0) {
				unet_endpoint__wait(ep, 50);
				continue;
			}
			for (int i = 0; i < n; i++) {
				struct unet_udp_sock *s = unet_udp__desc_sock(&d[i]);

				if (!s) {
					fprintf(stderr, "unet-udp: a U-Net message on a UDP echo\n");
					continue;
				}
				for (int k = 0; k < 3; k++) {
					int err = send_one(ep, s, copy, d[i].data, d[i].len,
							   d[i].src_addr, d[i].src_port);
					if (err != -EAGAIN) {
						if (err)
							fprintf(stderr, "unet-udp: echo: %s\n",
								strerror(-err));
						else
							echoed++;
						break;
					}
					unet_endpoint__complete(ep);
				}
			}
			unet_endpoint__release(ep, d, (unsigned int)n);
		}
		unet_endpoint__flush(ep, 500);
		printf("echo echoed=%llu\n", (unsigned long long)echoed);
		rc = 0;
	} else if (!strcmp(mode, "unreach")) {
		uint64_t sends = 0, ok = 0, eagain = 0, unreach = 0, other = 0;
		const uint8_t msg[8] = { 0 };

		for (; sends < count && !stop_flag && now_s() < deadline; sends++) {
			int err = unet_udp__send_copy(socks[0], msg, sizeof(msg), 0, 0);

			if (!err)
				ok++;
			else if (err == -EAGAIN)
				eagain++;
			else if (err == -EHOSTUNREACH)
				unreach++;
			else
				other++;
			unet_endpoint__complete(ep);
			if (gap_ms)
				sleep_ms(gap_ms);
		}
		printf("unreach sends=%llu ok=%llu eagain=%llu ehostunreach=%llu other=%llu\n",
		       (unsigned long long)sends, (unsigned long long)ok, (unsigned long long)eagain,
		       (unsigned long long)unreach, (unsigned long long)other);
		rc = 0;
	} else {
		uint8_t msg[65536];

		for (uint32_t size = (uint32_t)min; size <= max && !stop_flag; size++) {
			bool ok = false;

			if (gap_ms && size > min)
				sleep_ms(gap_ms);
			for (uint32_t j = 0; j < size; j++)
				msg[j] = seq_pattern(size, j);
			for (int attempt = 0; attempt < 3 && !ok && !stop_flag; attempt++) {
				int err = send_one(ep, socks[0], copy, msg, size, 0, 0);
				double until = now_s() + 1.0;

				if (err)
					fprintf(stderr, "unet-udp: send %u: %s\n", size, strerror(-err));
				if (err == -EMSGSIZE) {
					printf("sizes refused %u: %s\n", size, strerror(-err));
					goto out;
				}
				if (err) {
					if (err != -EAGAIN)
						goto out;
					continue;
				}
				while (!ok && now_s() < until && !stop_flag) {
					int n = unet_endpoint__recv(ep, d, 64);

					if (!n) {
						unet_endpoint__wait(ep, 10);
						continue;
					}
					for (int i = 0; i < n; i++) {
						if (unet_udp__desc_sock(&d[i]) && d[i].len == size &&
						    !memcmp(d[i].data, msg, size))
							ok = true;
						else
							fprintf(stderr,
								"unet-udp: size %u: unexpected %u bytes\n",
								size, d[i].len);
					}
					unet_endpoint__release(ep, d, (unsigned int)n);
				}
			}
			if (!ok) {
				printf("sizes failed at %u\n", size);
				goto out;
			}
			if (now_s() > deadline) {
				printf("sizes timed out at %u\n", size);
				goto out;
			}
		}
		printf("sizes ok %llu..%llu\n", (unsigned long long)min, (unsigned long long)max);
		rc = 0;
	}
out:
	print_stats(ep);
	for (uint64_t i = 0; i < nports; i++)
		unet_udp__close(socks[i]);
	unet_endpoint__destroy(ep);
	return rc;
}
