/* SPDX-License-Identifier: BSD-2-Clause */
/* stats.c - unet-peer stats: print the interface counters and channels (no endpoint). */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "peer.h"

struct stats_ctx {
	int n;
};

int print_channel(const struct unet_channel_entry *e, void *ctx)
{
	struct stats_ctx *sc = ctx;
	char mac[18];

	sc->n++;
	printf("channel tag=%u peer=%s peer_tag=%u endpoint=%u pid=%u stale=%d delivered=%" PRIu64
	       " delivered_bytes=%" PRIu64 " drop_wrong_src=%" PRIu64 " drop_no_socket=%" PRIu64
	       "\n",
	       e->tag, unet_format_mac(e->peer_mac, mac), e->peer_tag, e->endpoint, e->pid,
	       e->stale ? 1 : 0, e->delivered, e->delivered_bytes, e->drop_wrong_src,
	       e->drop_no_socket);
	return 0;
}

int print_endpoint(const struct unet_endpoint_entry *e, void *ctx)
{
	(void)ctx;
	printf("endpoint id=%u pid=%u nqueues=%u comm=%.16s stale=%d\n", e->id, e->pid, e->nqueues,
	       e->comm, e->stale ? 1 : 0);
	return 0;
}

int mode_stats(struct cfg *cfg)
{
	UNET_OPTS_INIT(unet_iface_opts, io);
	struct unet_iface *iface = unet_iface__open(cfg->ifname, &io);
	uint64_t v[UNET_STAT__COUNT];
	struct stats_ctx sc = { 0 };
	int i, ret;

	if (!iface) {
		err("cannot open %s: %s", cfg->ifname, strerror(errno));
		return 1;
	}
	ret = unet_iface__stats(iface, v);
	if (ret < 0) {
		err("unet_iface__stats: %s", strerror(-ret));
		unet_iface__close(iface);
		return 1;
	}
	for (i = 0; i < UNET_STAT__COUNT; i++)
		printf("%s %" PRIu64 "\n", unet_stat_name(i) ? unet_stat_name(i) : "?", v[i]);
	ret = unet_iface__for_each_channel(iface, print_channel, &sc);
	if (ret >= 0)
		ret = unet_iface__for_each_endpoint(iface, print_endpoint, NULL);
	unet_iface__close(iface);
	if (ret < 0) {
		err("listing %s: %s", cfg->ifname, strerror(-ret));
		return 1;
	}
	return 0;
}
