/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * par.h - what the MPI programs of examples/parallel share: option parsing,
 * MPI error checking, a seeded random generator, timing statistics and
 * the one result line each program prints.
 *
 * Every program sets MPI_ERRORS_RETURN on MPI_COMM_WORLD and checks every
 * call with CK(): an MPI error (a peer that died, a broken network) is
 * printed as "rank R: MPI error in CALL: TEXT" and the rank exits with
 * status 3, so a failure is visible and never a hang of the caller.
 * A wrong result prints "rank R: WRONG ..." and exits with status 2.
 * Rank 0 ends a correct run with one line
 *   RESULT {"prog": ..., "ranks": P, ..., "ok": true}
 * (JSON on one line) that scripts/bench-parallel.sh reads.
 */
#ifndef PAR_H
#define PAR_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

static int par_rank, par_size;

static inline void par_die(int code, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	/* One write per line: stderr is unbuffered, and several ranks dying
	 * at once would otherwise interleave their pieces in mpirun's output. */
	n = snprintf(line, sizeof(line), "rank %d: ", par_rank);
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	fwrite(line, 1, (size_t)n, stderr);
	exit(code);
}

static inline void par_ck(int rc, const char *call)
{
	char text[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (rc == MPI_SUCCESS)
		return;
	if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
		snprintf(text, sizeof(text), "error code %d", rc);
	par_die(3, "MPI error in %s: %s", call, text);
}

/* CK(MPI_Call(...)): the call, checked. */
#define CK(call) par_ck((call), #call)

/* A wrong result: exit 2 with the reason. */
#define WRONG(...) par_die(2, "WRONG " __VA_ARGS__)

static inline void par_init(int *argc, char ***argv)
{
	if (MPI_Init(argc, argv) != MPI_SUCCESS) {
		fprintf(stderr, "MPI_Init failed\n");
		exit(3);
	}
	CK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	CK(MPI_Comm_rank(MPI_COMM_WORLD, &par_rank));
	CK(MPI_Comm_size(MPI_COMM_WORLD, &par_size));
}

/* Options are "--name value" pairs.  par_opt returns the value of --name
 * as a positive integer (def when absent); a malformed value or an
 * unknown option ends the program with status 2 (par_opts_done). */
static inline long par_opt(int argc, char **argv, const char *name, long def, long max)
{
	for (int i = 1; i + 1 < argc; i++) {
		if (strncmp(argv[i], "--", 2) || strcmp(argv[i] + 2, name))
			continue;
		char *end;
		long v = strtol(argv[i + 1], &end, 0);

		if (*end || v < 1 || v > max)
			par_die(2, "bad value for --%s: %s (1..%ld)", name, argv[i + 1], max);
		return v;
	}
	return def;
}

/* The string value of --name (def when absent). */
static inline const char *par_opt_str(int argc, char **argv, const char *name, const char *def)
{
	for (int i = 1; i + 1 < argc; i++)
		if (argv[i][0] == '-' && argv[i][1] == '-' && !strcmp(argv[i] + 2, name))
			return argv[i + 1];
	return def;
}

/* Every argument must be a known "--name value" pair. */
static inline void par_opts_done(int argc, char **argv, const char *const *known, const char *usage)
{
	for (int i = 1; i < argc; i += 2) {
		int ok = 0;

		for (const char *const *k = known; *k && !ok; k++)
			ok = argv[i][0] == '-' && argv[i][1] == '-' && !strcmp(argv[i] + 2, *k) && i + 1 < argc;
		if (!ok) {
			if (par_rank == 0)
				fprintf(stderr, "usage: %s %s\n", argv[0], usage);
			MPI_Finalize();
			exit(2);
		}
	}
}

/* splitmix64: small, seedable, the same stream on every platform. */
static inline uint64_t par_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* A hash of (a, b, c) into [0, 1): the same on every rank, so every rank
 * can build the same global input (graphs) without communication. */
static inline double par_hash01(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t s = a * 0x100000001B3ULL ^ b * 0xC2B2AE3D27D4EB4FULL ^ c * 0x165667B19E3779F9ULL;

	return (double)(par_rand(&s) >> 11) / 9007199254740992.0;
}

static inline int par_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Quantile q (0..1) of n samples (sorts them). */
static inline double par_quantile(double *v, int n, double q)
{
	qsort(v, (size_t)n, sizeof(*v), par_cmp_double);
	int i = (int)(q * (n - 1) + 0.5);

	return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

#endif
