/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet-tcp6-pair - one process, two U-Net endpoints (one lwIP between
 * them), each listening for TCP/IPv6 on the same port and never
 * accepting: for tests of what one endpoint's peers can do to the
 * other's connections (tests/integration/t_tcp6.sh, tcp6_two_endpoints).
 *
 *   unet-tcp6-pair IF1 ADDR1 IF2 ADDR2 PORT BACKLOG SECONDS
 *
 * Prints "ready endpoint=ID" once both listen, drives both endpoints
 * for SECONDS (or until SIGTERM), then "endpoint N rx_syn_dropped=K" for
 * each.  Exit 0, 1 on a failure, 2 on usage errors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <unet-xdp/unet.h>
#include <unet-xdp/unet_tcp.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct unet_endpoint *ep[2];
	struct unet_tcp *l[2];
	struct unet_endpoint_info info;
	time_t until;

	if (argc != 8) {
		fprintf(stderr, "usage: unet-tcp6-pair IF1 ADDR1 IF2 ADDR2 PORT BACKLOG SECONDS\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGTERM, on_term);
	for (int i = 0; i < 2; i++) {
		UNET_OPTS_INIT(unet_endpoint_opts, eo);
		UNET_OPTS_INIT(unet_tcp_opts, to);
		struct in6_addr a;

		if (inet_pton(AF_INET6, argv[2 + 2 * i], &a) != 1) {
			fprintf(stderr, "unet-tcp6-pair: bad address %s\n", argv[2 + 2 * i]);
			return 2;
		}
		ep[i] = unet_endpoint__create(argv[1 + 2 * i], &eo);
		if (!ep[i]) {
			fprintf(stderr, "unet-tcp6-pair: endpoint on %s: %s\n", argv[1 + 2 * i],
				strerror(errno));
			return 1;
		}
		to.backlog = (uint32_t)atoi(argv[6]);
		l[i] = unet_tcp__listen6(ep[i], &a, (uint16_t)atoi(argv[5]), &to);
		if (!l[i]) {
			fprintf(stderr, "unet-tcp6-pair: listen on %s: %s\n", argv[2 + 2 * i],
				strerror(errno));
			return 1;
		}
	}
	if (unet_endpoint__info(ep[0], &info) == 0)
		printf("ready endpoint=%u\n", info.id);
	until = time(NULL) + atoi(argv[7]);
	while (!stop && time(NULL) < until)
		for (int i = 0; i < 2; i++)
			unet_endpoint__dispatch(ep[i], 5, 64);
	for (int i = 0; i < 2; i++) {
		struct unet_tcp_stats s;

		if (unet_tcp__stats(ep[i], &s) == 0)
			printf("endpoint %d rx_syn_dropped=%llu\n", i + 1,
			       (unsigned long long)s.rx_syn_dropped);
	}
	return 0;
}
