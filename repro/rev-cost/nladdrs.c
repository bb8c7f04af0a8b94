// SPDX-License-Identifier: BSD-2-Clause
/*
 * nladdrs.c - unet_nl_addrs and the source-address choices built on it,
 * against a namespace the caller shaped (nladdrs.sh runs it as nobody in
 * a user+network namespace of its own).
 *
 *   nladdrs list FAMILY IFNAME          every address the dump gives (max 256)
 *   nladdrs v4 IFNAME                   unet_chan_local_ipv4
 *   nladdrs v6 IFNAME PEER              unet_chan_local_ipv6
 *   nladdrs has IFNAME A.B.C.D          as unetd_device_has: found / not found / error
 *   nladdrs loop FAMILY IFNAME N OTHER  N dumps; counts answers naming an
 *                                       address of OTHER's (another device), errors
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/chan_udp.h"
#include "core/netlink.h"

static int print_one(const uint8_t *a, const struct ifaddrmsg *ifa, void *ctx)
{
	char s[64];

	inet_ntop(*(int *)ctx, a, s, sizeof(s));
	printf("%s idx=%u flags=0x%x prefix=%u\n", s, ifa->ifa_index, ifa->ifa_flags,
	       ifa->ifa_prefixlen);
	return 0;
}

static int is_addr(const uint8_t *a, const struct ifaddrmsg *ifa, void *ctx)
{
	(void)ifa;
	return !memcmp(a, ctx, 4);
}

struct other {
	int fam;
	int n;
	uint8_t a[4096][16];
	int bad;
	int seen;
};

static int check_other(const uint8_t *a, const struct ifaddrmsg *ifa, void *ctx)
{
	struct other *o = ctx;

	(void)ifa;
	o->seen++;
	for (int i = 0; i < o->n; i++)
		if (!memcmp(a, o->a[i], o->fam == AF_INET ? 4 : 16))
			o->bad++;
	return 0;
}

static int collect(const uint8_t *a, const struct ifaddrmsg *ifa, void *ctx)
{
	struct other *o = ctx;

	(void)ifa;
	if (o->n < 4096)
		memcpy(o->a[o->n++], a, 16);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "list")) {
		int fam = !strcmp(argv[2], "6") ? AF_INET6 : AF_INET;
		int r = unet_nl_addrs(fam, (int)if_nametoindex(argv[3]), UNET_NL_ADDRS_MAX, print_one,
				      &fam);
		printf("unet_nl_addrs: %d (%s)\n", r, r < 0 ? strerror(-r) : "ok");
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "v4")) {
		uint32_t a = 0;
		char s[32];
		int r = unet_chan_local_ipv4(argv[2], &a);

		printf("unet_chan_local_ipv4: %d %s\n", r, r ? strerror(-r) : inet_ntop(AF_INET, &a, s, 32));
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "v6")) {
		uint8_t p[16], a[16];
		char s[64];
		int r;

		inet_pton(AF_INET6, argv[3], p);
		r = unet_chan_local_ipv6(argv[2], p, a);
		printf("unet_chan_local_ipv6(peer %s): %d %s\n", argv[3], r,
		       r ? strerror(-r) : inet_ntop(AF_INET6, a, s, 64));
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "has")) {
		uint32_t a;
		int r;

		inet_pton(AF_INET, argv[3], &a);
		r = unet_nl_addrs(AF_INET, (int)if_nametoindex(argv[2]), UNET_NL_ADDRS_MAX, is_addr, &a);
		printf("device has %s: %s (%d)\n", argv[3], r == 1 ? "found" : "NOT found", r);
		return 0;
	}
	if (argc >= 6 && !strcmp(argv[1], "loop")) {
		static struct other o;
		int fam = !strcmp(argv[2], "6") ? AF_INET6 : AF_INET, n = atoi(argv[4]), errs = 0,
		    big = 0, ok = 0;
		struct timespec t0, t1;

		o.fam = fam;
		/* OTHER's addresses before the loop (the first 256) */
		unet_nl_addrs(fam, (int)if_nametoindex(argv[5]), UNET_NL_ADDRS_MAX, collect, &o);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int i = 0; i < n; i++) {
			int r = unet_nl_addrs(fam, (int)if_nametoindex(argv[3]), UNET_NL_ADDRS_MAX,
					      check_other, &o);
			if (r == -E2BIG)
				big++;
			else if (r < 0) {
				if (errs++ < 3)
					printf("dump %d: %s\n", i, strerror(-r));
			} else
				ok++;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("loop: %d dumps (%d ended, %d at the bound, %d errors), %d addresses seen, %d of "
		       "them %s's; %.3f ms a dump\n",
		       n, ok, big, errs, o.seen, o.bad, argv[5],
		       ((t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6) / n);
		return 0;
	}
	fprintf(stderr, "usage: see the head of nladdrs.c\n");
	return 2;
}
