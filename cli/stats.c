/* SPDX-License-Identifier: BSD-2-Clause */
/* stats.c - unetctl stats (the XDP program's counters) and fault (the
 * injected-loss test hook). */

#include <string.h>

#include "unetctl.h"

static void unetd_stats(const char *ifname);

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
	unetd_stats(pos[0]);
	em_close();
	return 0;
}

/*
 * The endpoints unetd emulates on ifname, with the counters of their
 * messages in pieces: the daemon's own endpoint's (frames in pieces from
 * the link it refused or had no slot for) and each client's (chains it
 * refused).  Endpoints of other processes keep their counters to
 * themselves (unet_endpoint__stats); nothing when unetd is not there.
 */
static void unetd_stats(const char *ifname)
{
	const struct daemon_view *v = daemon_view();
	bool first = true;

	if (!v->reachable)
		return;
	for (uint32_t i = 0; i < v->st.nlisted; i++) {
		const struct unetd_status_ep *se = &v->eps[i];

		if (strcmp(se->ifname, ifname))
			continue;
		if (first) {
			em_u64("unetd_rx_bad_pieces", se->iface_rx_bad_pieces);
			em_u64("unetd_rx_no_jumbo_slot", se->iface_rx_no_jumbo_slot);
			em_open_array("unetd_endpoints");
			first = false;
		}
		em_open(NULL, EM_LINE);
		em_u64("id", se->ep);
		em_u64("uid", se->uid);
		em_u64("rx_delivered", se->counters.rx_delivered);
		em_u64("rx_dropped", se->counters.rx_dropped);
		em_u64("tx_sent", se->counters.tx_sent);
		em_u64("tx_bad_pieces", se->counters.tx_bad_pieces);
		em_close();
	}
	if (!first)
		em_close_array();
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
