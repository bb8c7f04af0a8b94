/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet-grant-probe - what a client can do with a direct-access endpoint
 * unetd granted it, beyond its grant:
 *
 *   unet-grant-probe IFACE
 *
 * Gets an endpoint (kind DIRECT) from unetd, checks that it is one, then
 * tries with the granted socket what the daemon must have made impossible:
 * bind it again (to another queue, to another device), register another
 * segment, resize its rings.  Prints one line per attempt and exits 0 if
 * every one was refused, 1 otherwise.  Run it as an unprivileged user the
 * policy grants direct endpoints to.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <linux/if_xdp.h>

#include "core/objects.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif

static void on_log(enum unet_log_level l, const char *msg, void *ctx)
{
	(void)ctx;
	if (l <= UNET_LOG_WARN)
		fprintf(stderr, "unet-grant-probe: libunet: %s\n", msg);
}

static int refused(const char *what, int r)
{
	printf("%s: %s\n", what, r ? strerror(errno) : "ALLOWED");
	return r != 0;
}

int main(int argc, char **argv)
{
	UNET_OPTS_INIT(unet_endpoint_opts, o);
	struct unet_endpoint_info info;
	struct unet_endpoint *ep;
	struct sockaddr_xdp sa = { .sxdp_family = AF_XDP };
	struct xdp_umem_reg reg;
	uint32_t ring = 4096;
	void *mem;
	int ok = 1, fd;

	if (argc != 2) {
		fprintf(stderr, "usage: unet-grant-probe IFACE\n");
		return 2;
	}
	unet_set_log_fn(on_log, NULL);
	o.kind = UNET_ENDPOINT_DIRECT;
	ep = unet_endpoint__create(argv[1], &o);
	if (!ep) {
		fprintf(stderr, "unet-grant-probe: endpoint: %s\n", strerror(errno));
		return 1;
	}
	unet_endpoint__info(ep, &info);
	printf("kind=%s queue_mask=%#x reason=%s\n",
	       info.kind == UNET_ENDPOINT_DIRECT ? "direct" : "emulated", info.queue_mask,
	       info.kind_reason);
	if (info.kind != UNET_ENDPOINT_DIRECT)
		return 1;
	fd = ep->q[0].fd;
	sa.sxdp_ifindex = (uint32_t)if_nametoindex(argv[1]);
	sa.sxdp_queue_id = ep->q[0].queue_id + 1;
	sa.sxdp_flags = XDP_COPY;
	ok &= refused("bind to another queue", bind(fd, (struct sockaddr *)&sa, sizeof(sa)));
	sa.sxdp_ifindex = 1; /* lo */
	sa.sxdp_queue_id = 0;
	ok &= refused("bind to another device", bind(fd, (struct sockaddr *)&sa, sizeof(sa)));
	mem = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(&reg, 0, sizeof(reg));
	reg.addr = (uint64_t)(uintptr_t)mem;
	reg.len = 1 << 20;
	reg.chunk_size = 2048;
	ok &= refused("register another segment",
		      setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)));
	ok &= refused("resize the receive ring", setsockopt(fd, SOL_XDP, XDP_RX_RING, &ring, sizeof(ring)));
	unet_endpoint__destroy(ep);
	return ok ? 0 : 1;
}
