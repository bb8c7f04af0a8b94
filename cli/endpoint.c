/* SPDX-License-Identifier: BSD-2-Clause */
/* endpoint.c - unetctl endpoint list and reclaim (endpoint slots whose
 * owner died). */

#include "unetctl.h"

static int do_endpoint_list(const struct cmd *c, int argc, char **argv)
{
	return list_over(c, argc, argv, LIST_ENDPOINTS);
}

int do_reclaim(const struct cmd *c, int argc, char **argv)
{
	struct unet_iface *iface;
	char *pos[1];
	int n, r;

	if (root_cmd_start(c, argc, argv, NULL, pos, 1, 1, &n, &r))
		return r;
	iface = open_iface(pos[0]);
	if (!iface)
		return 1;
	r = unet_iface__reclaim(iface);
	unet_iface__close(iface);
	if (r < 0)
		return fail_iface(r, pos[0]);
	em_open(NULL, EM_LINE);
	em_str("iface", pos[0]);
	em_u64("removed", (uint64_t)r);
	em_close();
	return 0;
}

const struct cmd endpoint_cmds[] = {
	{ "list", do_endpoint_list, "[IFACE]",
	  "list endpoints: slots (kind direct or unetd: owner pid, comm, stale) and the emulated "
	  "ones unetd serves (owner uid, pid)",
	  NULL, "endpoint list" },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};
