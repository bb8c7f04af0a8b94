/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * options.h - unet-run's command line, where it finds its preload
 * library, and the LD_PRELOAD it hands the program: pure functions (no
 * environment, no file system but the existence checks the caller
 * passes in), unit-tested in tests/unit/test_unet_run.c.
 */
#ifndef UNET_RUN_OPTIONS_H
#define UNET_RUN_OPTIONS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#define RUN_PRELOAD_NAME "libunet-preload.so"

struct run_opts {
	char iface[1024];    /* comma-separated; "" : not given */
	const char *log;     /* NULL: not given */
	const char *spin_us; /* NULL: not given; else digits, checked */
	bool batch_sends;    /* --batch-sends */
	bool help, version;
	int prog;	     /* argv index of PROG (0 with help/version) */
};

/* Parse argv; on error returns -1 with a message in err[errlen]. */
int run_opts_parse(struct run_opts *o, int argc, char **argv, char *err, size_t errlen);

/* Where an install puts the library, relative to unet-run's directory,
 * when LIBDIR is PREFIX/lib. */
#define RUN_PRELOAD_REL_DEFAULT "../lib/unet-xdp"

/* The places unet-run looks for its library, in order, given the path of
 * its own executable in directory DIR: DIR/rel (rel: LIBDIR/unet-xdp
 * relative to BINDIR as built, e.g. ../lib/x86_64-linux-gnu/unet-xdp on
 * Debian; NULL or "" for none), DIR/../lib/unet-xdp (an install under
 * any prefix), then DIR itself (the build tree).  Writes up to max (3)
 * paths; returns how many. */
int run_preload_candidates(const char *exe, const char *rel, char out[][PATH_MAX], int max);

/* The LD_PRELOAD value for the program: old (may be NULL or empty) with
 * lib appended -- preloads the user chose come first (a sanitizer's
 * runtime must), and lib is not added twice.  -1 when it does not fit. */
int run_preload_env(const char *old, const char *lib, char *out, size_t n);

#endif /* UNET_RUN_OPTIONS_H */
