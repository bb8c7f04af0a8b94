/* SPDX-License-Identifier: BSD-2-Clause */
/* stats.c - unetctl stats (the XDP program's counters) and fault (the
 * injected-loss test hook). */

#include "unetctl.h"

int do_stats(const struct cmd *c, int argc, char **argv)
{
	uint64_t ctr[UNET_STAT__COUNT];
	struct unet_iface *iface;
	char *pos[1];
	int n, r, err;

	if (root_cmd_start(c, argc, argv, NULL, pos, 1, 1, &n, &r))
		return r;
	iface = open_iface(pos[0]);
	if (!iface)
		return 1;
	err = unet_iface__stats(iface, ctr);
	unet_iface__close(iface);
	if (err)
		return fail_iface(err, pos[0]);
	em_open(NULL, EM_ROWS);
	em_str("ifname", pos[0]);
	for (int i = 0; i < UNET_STAT__COUNT; i++)
		em_u64(unet_stat_name(i), ctr[i]);
	em_close();
	return 0;
}

/* Test hook: injected loss in the XDP program (no tc netem needed). */
int do_fault(const struct cmd *c, int argc, char **argv)
{
	const char *ppm_s = NULL;
	const struct optdef defs[] = { { "--drop-ppm", &ppm_s }, { NULL, NULL } };
	struct unet_iface *iface;
	unsigned long ppm;
	char *pos[1];
	int n, r, err;

	if (root_cmd_start(c, argc, argv, defs, pos, 1, 1, &n, &r))
		return r;
	if (!ppm_s)
		return fail("--drop-ppm is required (usage: unetctl %s %s)", c->full, c->args);
	if (parse_uint(ppm_s, 0, 1000000, &ppm))
		return fail("invalid --drop-ppm: %s (0..1000000)", ppm_s);
	iface = open_iface(pos[0]);
	if (!iface)
		return 1;
	err = unet_iface__set_fault(iface, (uint32_t)ppm);
	unet_iface__close(iface);
	if (err)
		return fail_iface(err, pos[0]);
	em_open(NULL, EM_LINE);
	em_str("iface", pos[0]);
	em_u64("drop_ppm", ppm);
	em_close();
	return 0;
}
