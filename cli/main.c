/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unetctl - administer U-Net on AF_XDP: attach the XDP program to an
 * interface, list and set up channels, look at endpoints and counters,
 * ask unetd what it serves, and tell a user why an endpoint would be
 * direct or emulated (doctor).
 *
 * Subcommands live in tables (struct cmd), as in bpftool.  Every command
 * prints through one emitter (em_*) that writes either text or JSON, so
 * there is a single printing path per listing.  Errors are one line,
 * "unetctl: ...", on stderr, with exit status 1.
 */
#include <string.h>

#include "unetctl.h"

static int do_group(const struct cmd *c, int argc, char **argv);
static int do_help(const struct cmd *c, int argc, char **argv);

static const struct cmd cmds[] = {
	{ "attach", do_attach, "IFACE [--mode native|skb|auto] [--chan-port PORT]",
	  "load the XDP program, attach it to IFACE and pin it", NULL, "attach" },
	{ "detach", do_detach, "IFACE", "detach the XDP program and remove its pins", NULL,
	  "detach" },
	{ "status", do_status, "[IFACE]",
	  "program, mode, queues, endpoints and channels of IFACE (default: all)", NULL,
	  "status" },
	{ "channel", do_group, "{list|add|del} ...", "channels (default: list)", channel_cmds,
	  "channel" },
	{ "endpoint", do_group, "{list} ...", "endpoints (default: list)", endpoint_cmds,
	  "endpoint" },
	{ "udp", do_group, "{list|del} ...", "UDP/IPv4 ports over U-Net (default: list)",
	  udp_cmds, "udp" },
	{ "tcp", do_group, "{list|del} ...", "TCP/IPv4 ports over U-Net (default: list)",
	  tcp_cmds, "tcp" },
	{ "sockets", do_sockets, "[--pid PID]",
	  "U-Net sockets of processes under unet-run (yours; root: everyone's)", NULL, "sockets" },
	{ "steer", do_steer, "IFACE [--endpoint ID] [--install | --remove]",
	  "the flow steering rules (ethtool ntuple filters) that put each endpoint's routable "
	  "channels, UDP and TCP ports on its first bound queue: printed to paste, or inserted "
	  "(--install) or deleted (--remove) through the driver",
	  NULL, "steer" },
	{ "stats", do_stats, "IFACE", "the XDP program's counters on IFACE", NULL, "stats" },
	{ "reclaim", do_reclaim, "IFACE",
	  "remove endpoints whose owner died, their channels and UDP ports", NULL, "reclaim" },
	{ "fault", do_fault, "IFACE --drop-ppm N",
	  "test hook: drop N per million U-Net frames that would be delivered (0: off)", NULL,
	  "fault" },
	{ "daemon", do_group, "{status}", "unetd, the daemon (default: status)", daemon_cmds,
	  "daemon" },
	{ "doctor", do_doctor, "[IFACE]",
	  "for you: direct or emulated endpoint, copy or zero-copy, native or skb, what is "
	  "missing and how to fix it (no root needed; exit 1: no endpoint)",
	  NULL, "doctor" },
	{ "help", do_help, "", "this help", NULL, "help" },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: unetctl [OPTIONS] COMMAND [ARGS]\n"
		   "U-Net on AF_XDP: attach the XDP program, set up channels, watch it.\n\n"
		   "Commands:\n");
	for (const struct cmd *c = cmds; c->name; c++) {
		if (c->sub) {
			for (const struct cmd *s = c->sub; s->name; s++)
				fprintf(f, "  %s %s %s\n      %s\n", c->name, s->name, s->args,
					s->help);
		} else {
			fprintf(f, "  %s%s%s\n      %s\n", c->name, *c->args ? " " : "", c->args,
				c->help);
		}
	}
	fprintf(f, "\n%s\nRun as root (daemon status and doctor: anyone).  unetctl COMMAND --help "
		   "for one command.\n",
		global_opts_help);
}

static int do_help(const struct cmd *c, int argc, char **argv)
{
	(void)c;
	(void)argc;
	(void)argv;
	usage(stdout);
	return 0;
}

static const struct cmd *find_cmd(const struct cmd *table, const char *name)
{
	for (const struct cmd *c = table; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

/* "channel ..." / "endpoint ...": the next word picks the command; global
 * options may come first; none means list. */
static int do_group(const struct cmd *c, int argc, char **argv)
{
	const struct cmd *s;
	int i = 0;

	for (; i < argc && argv[i][0] == '-'; i++) {
		int r;

		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage_cmd(c, stdout);
			return 0;
		}
		r = global_opt(argc, argv, &i);
		if (r < 0)
			return 1;
		if (!r)
			return fail("unknown option: %s (unetctl %s --help)", argv[i], c->full);
	}
	if (i == argc)
		return c->sub[0].fn(&c->sub[0], 0, argv + i);
	if (!strcmp(argv[i], "help")) {
		usage_cmd(c, stdout);
		return 0;
	}
	s = find_cmd(c->sub, argv[i]);
	if (!s)
		return fail("unknown subcommand: %s %s (unetctl %s --help)", c->name, argv[i],
			    c->name);
	return s->fn(s, argc - i - 1, argv + i + 1);
}

/* unetctl --version: the version it was built with, the library's it
 * runs with (they differ when unetctl links the shared library), and the
 * JSON schema's. */
static int print_version(void)
{
	em_open(NULL, EM_LINE);
	em_str("unetctl", UNET_VERSION_STRING);
	em_str("library", unet_version_string());
	if (!ctl.json)
		em_u64("json_schema", UNETCTL_JSON_SCHEMA);
	em_close();
	return 0;
}

int main(int argc, char **argv)
{
	const struct cmd *c;
	bool version = false;
	int i = 1, r;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "-V") || !strcmp(argv[i], "--version")) {
			version = true;
			continue;
		}
		r = global_opt(argc, argv, &i);
		if (r < 0)
			return 1;
		if (!r)
			return fail("unknown option: %s (unetctl --help)", argv[i]);
	}
	if (version) {
		if (i < argc)
			return fail("--version takes no command (unetctl --help)");
		return print_version();
	}
	if (i == argc) {
		usage(stderr);
		return 1;
	}
	c = find_cmd(cmds, argv[i]);
	if (!c)
		return fail("unknown subcommand: %s (unetctl --help)", argv[i]);
	unet_set_log_fn(log_cb, NULL);
	r = c->fn(c, argc - i - 1, argv + i + 1);
	fflush(stdout);
	return r ? 1 : 0;
}

