/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet-tcp-ports - how many TCP ports one process may hold: opens NEPS
 * endpoints on IFACE and listens on ports FIRST, FIRST+1, ... of ADDR,
 * PER_EP on each endpoint, until one is refused; prints
 *   held N refused ERRNO-NAME
 * and keeps them all for HOLD seconds (so that another user can be tried
 * meanwhile), then closes them and exits 0.  Bounded: at most 64
 * endpoints, 4096 ports.
 *
 *   unet-tcp-ports IFACE ADDR FIRST NEPS PER_EP HOLD
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <unet-xdp/unet.h>
#include <unet-xdp/unet_tcp.h>

#include "tool_common.h"

int main(int argc, char **argv)
{
	uint64_t first, neps, per, hold;
	static struct unet_tcp *ls[4096];
	struct unet_endpoint *eps[64];
	unsigned int held = 0, nep = 0;
	const char *refused = "none";
	uint32_t addr;

	if (argc != 7 || inet_pton(AF_INET, argv[2], &addr) != 1 || parse_u64(argv[3], 65535, &first) ||
	    parse_u64(argv[4], 64, &neps) || parse_u64(argv[5], 4096, &per) ||
	    parse_u64(argv[6], 600, &hold)) {
		fprintf(stderr, "usage: unet-tcp-ports IFACE ADDR FIRST NEPS(<=64) PER_EP(<=4096) HOLD(<=600)\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	catch_stop_signals();
	for (uint64_t i = 0; i < neps && !strcmp(refused, "none"); i++) {
		UNET_OPTS_INIT(unet_endpoint_opts, eo);
		struct unet_endpoint *ep = unet_endpoint__create(argv[1], &eo);

		if (!ep) {
			fprintf(stderr, "unet-tcp-ports: endpoint %u: %s\n", (unsigned)i, strerror(errno));
			return 1;
		}
		eps[nep++] = ep;
		for (uint64_t j = 0; j < per; j++) {
			uint64_t port = first + held;

			if (port > 65535 || held == 4096) {
				refused = "ERANGE";
				break;
			}
			ls[held] = unet_tcp__listen(ep, addr, (uint16_t)port, NULL);
			if (!ls[held]) {
				refused = strerrorname_np(errno);
				break;
			}
			held++;
		}
	}
	printf("held %u refused %s\n", held, refused ? refused : "?");
	for (uint64_t t = 0; t < hold * 10 && !stop_flag; t++)
		usleep(100000);
	for (unsigned int k = 0; k < held; k++)
		unet_tcp__close(ls[k]);
	for (unsigned int k = 0; k < nep; k++)
		unet_endpoint__destroy(eps[k]);
	return 0;
}
