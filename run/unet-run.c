/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet-run - run an unmodified program with its AF_INET sockets on U-Net:
 * sets the preload library's settings in the environment, adds
 * libunet-preload.so to LD_PRELOAD and executes the program
 * (docs/unet-run.md, unet-run(1)).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"
#include "unet-xdp/version.h"

/* LIBDIR/unet-xdp relative to BINDIR, from the Makefile. */
#ifndef RUN_PRELOAD_REL
#define RUN_PRELOAD_REL RUN_PRELOAD_REL_DEFAULT
#endif

static void usage(FILE *f)
{
	fprintf(f, "usage: unet-run [--iface IF[,IF...]] [--log FILE] [--spin-us N] [--batch-sends]\n"
		   "                [--] PROG [ARGS...]\n"
		   "  --iface IF     accelerate traffic leaving by IF (repeatable; default: every\n"
		   "                 interface with the U-Net XDP program attached)\n"
		   "  --log FILE     append one line per socket: accelerated or not, and why\n"
		   "                 (FILE 'stderr': standard error)\n"
		   "  --spin-us N    busy-poll N microseconds before a blocking wait sleeps\n"
		   "  --batch-sends  TCP segments sent while handling the events of one wait\n"
		   "                 leave together, at the thread's next wait (see unet-run(1))\n"
		   "The same settings as environment: UNET_RUN_IFACE, UNET_RUN_LOG, UNET_RUN_SPIN_US,\n"
		   "UNET_RUN_BATCH_SENDS=1.\n");
}

/* The preload library: beside or under our own executable, else the
 * bare name for the dynamic loader's search path. */
static const char *find_preload(char *buf)
{
	char exe[PATH_MAX], cand[3][PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int k;

	if (n > 0) {
		exe[n] = '\0';
		k = run_preload_candidates(exe, RUN_PRELOAD_REL, cand, 3);
		for (int i = 0; i < k; i++) {
			if (access(cand[i], R_OK) == 0 && realpath(cand[i], buf))
				return buf;
		}
	}
	return RUN_PRELOAD_NAME;
}

static void set_or_die(const char *name, const char *value)
{
	if (setenv(name, value, 1) < 0) {
		fprintf(stderr, "unet-run: setenv %s: %s\n", name, strerror(errno));
		exit(127);
	}
}

int main(int argc, char **argv)
{
	char err[256], lib[PATH_MAX], pre[8192];
	struct run_opts o;
	const char *path;

	if (run_opts_parse(&o, argc, argv, err, sizeof(err)) < 0) {
		fprintf(stderr, "unet-run: %s\n", err);
		usage(stderr);
		return 2;
	}
	if (o.help) {
		usage(stdout);
		return 0;
	}
	if (o.version) {
		printf("unet-run %d.%d.%d\n", UNET_VERSION_MAJOR, UNET_VERSION_MINOR,
		       UNET_VERSION_PATCH);
		return 0;
	}
	if (o.iface[0])
		set_or_die("UNET_RUN_IFACE", o.iface);
	if (o.log)
		set_or_die("UNET_RUN_LOG", o.log);
	if (o.spin_us)
		set_or_die("UNET_RUN_SPIN_US", o.spin_us);
	if (o.batch_sends)
		set_or_die("UNET_RUN_BATCH_SENDS", "1");
	path = find_preload(lib);
	if (run_preload_env(getenv("LD_PRELOAD"), path, pre, sizeof(pre)) < 0) {
		fprintf(stderr, "unet-run: LD_PRELOAD too long\n");
		return 127;
	}
	set_or_die("LD_PRELOAD", pre);
	execvp(argv[o.prog], argv + o.prog);
	fprintf(stderr, "unet-run: %s: %s\n", argv[o.prog], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
