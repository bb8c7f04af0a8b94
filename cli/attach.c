/* SPDX-License-Identifier: BSD-2-Clause */
/* attach.c - unetctl attach, detach and status: the XDP program on an
 * interface. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unetctl.h"

/* The warning for a device with more receive queues than U-Net serves, in
 * buf ("" when there are not more). */
static const char *queue_warning(const char *ifname, unsigned int devq, char *buf, size_t size)
{
	buf[0] = '\0';
	if (devq > UNET_MAX_QUEUES)
		snprintf(buf, size,
			 "%s has %u receive queues, U-Net serves queues 0-%d only "
			 "(UNET_MAX_QUEUES %d): frames arriving on queues %d-%u are dropped "
			 "(ethtool -L %s rx %d or combined %d, or steer them)",
			 ifname, devq, UNET_MAX_QUEUES - 1, UNET_MAX_QUEUES, UNET_MAX_QUEUES,
			 devq - 1, ifname, UNET_MAX_QUEUES, UNET_MAX_QUEUES);
	return buf;
}

int do_attach(const struct cmd *c, int argc, char **argv)
{
	const char *mode_s = NULL, *port_s = NULL;
	const struct optdef defs[] = { { "--mode", &mode_s }, { "--chan-port", &port_s }, { NULL, NULL } };
	unsigned long chan_port = 0;
	int port;
	enum unet_xdp_mode mode = UNET_XDP_MODE_AUTO;
	struct unet_iface_opts opts;
	struct unet_iface_status st;
	struct unet_iface *iface;
	char *pos[1];
	char warn[320];
	unsigned int devq;
	int n, r, err;

	if (root_cmd_start(c, argc, argv, defs, pos, 1, 1, &n, &r))
		return r;
	opts = iface_opts();
	if (mode_s) {
		if (!strcmp(mode_s, "native"))
			mode = UNET_XDP_MODE_NATIVE;
		else if (!strcmp(mode_s, "skb"))
			mode = UNET_XDP_MODE_SKB;
		else if (strcmp(mode_s, "auto"))
			return fail("invalid mode: %s (native, skb or auto)", mode_s);
	}
	if (port_s && parse_uint(port_s, 1, 65535, &chan_port))
		return fail("invalid channel port: %s (1..65535)", port_s);
	err = unet_iface__attach(pos[0], mode, &opts);
	if (err)
		return fail_iface(err, pos[0]);
	iface = unet_iface__open(pos[0], &opts);
	if (!iface)
		return fail_iface(errno, pos[0]);
	err = unet_iface__status(iface, &st);
	/* The routable channels' port: set only when asked, so attaching an
	 * attached interface again keeps what it had. */
	if (!err && port_s)
		err = unet_iface__set_chan_port(iface, (uint16_t)chan_port);
	port = err ? err : unet_iface__chan_port(iface);
	unet_iface__close(iface);
	if (err)
		return fail_iface(err, pos[0]);
	/* Unreadable without --chan-port: a program attached before routable
	 * channels existed; it is attached, there is just no port to show. */
	if (mode != UNET_XDP_MODE_AUTO && st.mode != mode)
		fprintf(stderr,
			"unetctl: note: %s was already attached in %s mode (unetctl detach %s "
			"to change it)\n",
			pos[0], mode_name(st.mode, st.link_alive), pos[0]);
	devq = st.device_queues;
	if (*queue_warning(pos[0], devq, warn, sizeof(warn)))
		fprintf(stderr, "unetctl: warning: %s\n", warn);
	em_open(NULL, EM_LINE);
	em_str("ifname", st.ifname);
	em_str("mode", mode_name(st.mode, st.link_alive));
	em_u64("prog_id", st.prog_id);
	em_u64("queues", st.nqueues);
	em_u64("device_queues", devq);
	if (port > 0)
		em_u64("chan_port", (uint64_t)port);
	em_close();
	return 0;
}

int do_detach(const struct cmd *c, int argc, char **argv)
{
	struct unet_iface_opts opts;
	char *pos[1];
	int n, r, err;

	if (root_cmd_start(c, argc, argv, NULL, pos, 1, 1, &n, &r))
		return r;
	opts = iface_opts();
	err = unet_iface__detach(pos[0], &opts);
	if (err)
		return fail_iface(err, pos[0]);
	em_open(NULL, EM_LINE);
	em_str("ifname", pos[0]);
	em_bool("detached", true);
	em_close();
	return 0;
}

/* One interface's status, as a ROWS block. Returns 0 or the exit status. */
static int status_one(const char *ifname)
{
	struct unet_iface_status st;
	struct unet_iface *iface;
	struct list eps = { 0 };
	char warn[320];
	unsigned int devq;
	int err;

	iface = open_iface(ifname);
	if (!iface)
		return 1;
	int port;

	err = unet_iface__status(iface, &st);
	port = unet_iface__chan_port(iface);
	devq = st.device_queues;
	queue_warning(ifname, devq, warn, sizeof(warn));
	if (!err)
		err = get_endpoints(iface, &eps);
	unet_iface__close(iface);
	if (err) {
		free(eps.v);
		return fail_iface(err, ifname);
	}
	em_open(NULL, EM_ROWS);
	em_str("ifname", st.ifname);
	em_u64("ifindex", (uint64_t)(st.ifindex > 0 ? st.ifindex : 0));
	em_bool("attached", st.link_alive);
	em_str("mode", mode_name(st.mode, st.link_alive));
	em_u64("prog_id", st.prog_id);
	em_u64("queues", st.nqueues);
	em_u64("device_queues", devq);
	if (*warn)
		em_str("warning", warn);
	if (port > 0) /* < 0: pins of a program from before routable channels */
		em_u64("chan_port", (uint64_t)port);
	em_u64("channels", st.n_channels);
	em_open_array("endpoints");
	for (size_t i = 0; i < eps.n; i++)
		print_endpoint(st.ifname, false, &((struct unet_endpoint_entry *)eps.v)[i]);
	em_close_array();
	em_close();
	free(eps.v);
	return 0;
}

int do_status(const struct cmd *c, int argc, char **argv)
{
	struct names ns = { 0 };
	char *pos[1];
	int n, r;

	if (root_cmd_start(c, argc, argv, NULL, pos, 0, 1, &n, &r))
		return r;
	if (n == 1)
		return status_one(pos[0]);
	r = all_ifaces(&ns);
	if (!r) {
		/* Collect everything first: a failure prints no partial JSON. */
		em_open_array("interfaces");
		for (size_t i = 0; i < ns.n && !r; i++)
			r = status_one(ns.v[i]);
		em_close_array();
	}
	free_names(&ns);
	return r;
}
