/* SPDX-License-Identifier: BSD-2-Clause */
/* daemon.c - unetctl daemon status: what unetd serves. */
#include <string.h>

#include "unetctl.h"

/* ---- unetd's state ---------------------------------------------------- */

static int do_daemon_status(const struct cmd *c, int argc, char **argv)
{
	const struct daemon_view *v;
	char *pos[1], warn[128];
	int n, r;

	r = parse_args(c, argc, argv, NULL, pos, 0, 0, &n);
	if (r)
		return r < 0;
	/* No root needed: the daemon answers STATUS to anyone who connects. */
	v = daemon_view();
	if (!v->reachable)
		return fail("%s", v->err);
	em_open(NULL, EM_ROWS);
	em_str("socket", daemon_socket());
	em_bool("reachable", true);
	em_u64("pid", v->pid);
	em_u64("protocol_version", v->version);
	/* Our own connection is one of the daemon's clients: not counted. */
	em_u64("clients", v->st.nclients ? v->st.nclients - 1 : 0);
	em_u64("nendpoints", v->st.nendpoints);
	em_u64("req_bad", v->st.req_bad);
	em_u64("req_denied", v->st.req_denied);
	em_u64("req_throttled", v->st.req_throttled);
	if (v->st.nlisted < v->st.nendpoints) {
		snprintf(warn, sizeof(warn), "%u endpoints not listed (one status reply holds %u)",
			 v->st.nendpoints - v->st.nlisted, v->st.nlisted);
		em_str("warning", warn);
	}
	em_open_array("endpoints");
	for (uint32_t i = 0; i < v->st.nlisted; i++) {
		const struct unetd_status_ep *se = &v->eps[i];
		const struct unetd_ep_counters *k = &se->counters;

		em_open(NULL, EM_LINE);
		em_u64("id", se->ep);
		em_str("iface", se->ifname);
		em_u64("uid", se->uid);
		em_u64("pid", se->pid);
		em_u64("channels", se->nchannels);
		em_u64("rx_delivered", k->rx_delivered);
		em_u64("rx_dropped", k->rx_dropped);
		em_u64("tx_sent", k->tx_sent);
		em_u64("tx_bad_desc", k->tx_bad_desc);
		em_u64("tx_bad_frame", k->tx_bad_frame);
		em_u64("tx_foreign_tag", k->tx_foreign_tag);
		em_u64("tx_foreign_peer", k->tx_foreign_peer);
		em_u64("tx_dropped", k->tx_dropped);
		em_u64("tx_bad_pieces", k->tx_bad_pieces);
		em_u64("share", se->share);
		em_close();
	}
	em_close_array();
	em_close();
	return 0;
}

const struct cmd daemon_cmds[] = {
	{ "status", do_daemon_status, "",
	  "unetd's state: socket, pid, protocol, clients, refusals, endpoints with their counters "
	  "(no root needed)",
	  NULL, "daemon status" },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};
