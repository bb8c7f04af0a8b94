/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet-peer - the test peer of the integration suite.  One program, several
 * modes, using only the public API of include/unet-xdp/unet.h:
 *
 *   echo   echo every message back on the channel it came in on
 *   sizes  send one message of every size 1..max_payload, check each echo
 *   send   send --count sequence-numbered messages per channel, paced
 *   recv   expect --count sequence-numbered messages per channel
 *   hold   hold an endpoint and its channels, count what arrives
 *   stats  print the interface counters and channels (no endpoint)
 *
 * Every mode that opens an endpoint prints one line
 *   ready endpoint=ID nqueues=N queue_mask=0xM max_payload=P mode=MODE zerocopy=Z
 * on stdout once its channels are open, so a script can wait for it.
 * Every loop is bounded in time by --timeout (and in count where it sends).
 * Exit status: 0 on success, 1 on any failure, 2 on a usage error.
 *
 * The files: peer.h (what they share), common.c (logging, endpoint set-up,
 * send/receive helpers), options.c (the command line), one file per mode.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "peer.h"

/* The modes that open an endpoint, by name (stats does not). */
static const struct {
	const char *name;
	int (*run)(struct peer *p);
} modes[] = {
	{ "echo", mode_echo }, { "sizes", mode_sizes }, { "send", mode_send },
	{ "recv", mode_recv }, { "hold", mode_hold },
};

int main(int argc, char **argv)
{
	static struct cfg cfg;
	struct peer p = { .cfg = &cfg };
	unsigned int i;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = parse_args(argc, argv, &cfg);
	if (ret)
		return ret;
	unet_set_log_fn(log_fn, &cfg);

	catch_stop_signals();
	signal(SIGPIPE, SIG_IGN);

	/* stats opens no endpoint. */
	if (!strcmp(cfg.mode, "stats"))
		return mode_stats(&cfg);
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(cfg.mode, modes[i].name))
			break;
	if (i == sizeof(modes) / sizeof(modes[0])) {
		err("unknown mode '%s'", cfg.mode);
		usage(stderr);
		return 2;
	}
	if (peer_open(&p) < 0) {
		peer_close(&p);
		return 1;
	}
	ret = modes[i].run(&p);
	peer_close(&p);
	return ret;
}
