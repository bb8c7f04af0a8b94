/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rsort - radix sort, the Split-C benchmark of the U-Net paper, in its
 * two versions.
 *
 *   rsort [--keys N] [--mode bulk|small] [--seed X]
 *
 * N 32-bit keys per rank (default 16384), sorted by 4 passes over 8-bit
 * digits, least significant first.  Each pass: every rank counts its
 * digits, the counts are gathered everywhere (MPI_Allgather), and from
 * them every key gets its global position (stable: by digit, then rank,
 * then local order); position g goes to rank g / N, slot g mod N, so each
 * rank holds N keys after every pass.  With --mode bulk (default) the
 * (slot, key) pairs for each rank travel together (MPI_Alltoall of the
 * counts, then MPI_Alltoallv); with --mode small every pair is its own
 * message (sort.h small_exchange), as the paper's small-message version
 * stores one key at a time.  sort.h checks the result.
 */
#include "sort.h"

#define RADIX 256

struct place {
	uint32_t *keys;
	long n;
};

static void put_pair(const uint32_t *item, void *ctx)
{
	struct place *p = ctx;

	if (item[0] >= (uint64_t)p->n)
		WRONG("rsort: slot %u out of range", item[0]);
	p->keys[item[0]] = item[1];
}

int main(int argc, char **argv)
{
	static const char *const known[] = { "keys", "mode", "seed", NULL };

	par_init(&argc, &argv);
	par_opts_done(argc, argv, known, "[--keys N] [--mode bulk|small] [--seed X]");
	long n = par_opt(argc, argv, "keys", 16384, 1L << 26);
	uint64_t seed = (uint64_t)par_opt(argc, argv, "seed", 1, 1L << 40);
	int small;
	const char *mode = sort_mode(argc, argv, &small);
	int P = par_size;
	uint32_t *keys = malloc(sizeof(uint32_t) * (size_t)n), *nk = malloc(sizeof(uint32_t) * (size_t)n);
	uint32_t *pairs = malloc(sizeof(uint32_t) * 2 * (size_t)n), *rpairs = malloc(sizeof(uint32_t) * 2 * (size_t)n);
	int *hist = malloc(sizeof(int) * RADIX), *H = malloc(sizeof(int) * RADIX * (size_t)P);
	long *pos = malloc(sizeof(long) * RADIX);
	int *dest = malloc(sizeof(int) * (size_t)n);
	int *scnt = malloc(sizeof(int) * (size_t)P), *rcnt = malloc(sizeof(int) * (size_t)P);

	if (!keys || !nk || !pairs || !rpairs || !hist || !H || !pos || !dest || !scnt || !rcnt)
		par_die(2, "out of memory");
	sort_input(keys, n, seed);
	struct sort_sig before = sort_sig(keys, n);

	CK(MPI_Barrier(MPI_COMM_WORLD));
	double t0 = MPI_Wtime();

	for (int pass = 0; pass < 4; pass++) {
		int shift = pass * 8;

		memset(hist, 0, sizeof(int) * RADIX);
		for (long i = 0; i < n; i++)
			hist[keys[i] >> shift & 0xff]++;
		CK(MPI_Allgather(hist, RADIX, MPI_INT, H, RADIX, MPI_INT, MPI_COMM_WORLD));
		/* My first global position for each digit. */
		long base = 0;

		for (int d = 0; d < RADIX; d++) {
			long mine = base;

			for (int r = 0; r < P; r++) {
				if (r == par_rank)
					mine = base;
				base += H[(size_t)r * RADIX + (size_t)d];
			}
			pos[d] = mine;
		}
		/* pairs[2i] = slot, pairs[2i+1] = key; dest[i] = rank. */
		for (long i = 0; i < n; i++) {
			long g = pos[keys[i] >> shift & 0xff]++;

			dest[i] = (int)(g / n);
			pairs[2 * i] = (uint32_t)(g % n);
			pairs[2 * i + 1] = keys[i];
		}
		if (small) {
			struct place pl = { nk, n };

			small_exchange(pairs, 2, n, dest, n, 10 + pass, put_pair, &pl);
		} else {
			long tot = exchange_counts(dest, n, scnt, rcnt);

			if (tot != n)
				WRONG("rsort: pass %d brings %ld keys, want %ld", pass, tot, n);
			bulk_exchange(pairs, 2, n, dest, scnt, rcnt, rpairs, pairs);
			for (long i = 0; i < n; i++) {
				if (pairs[2 * i] >= (uint64_t)n)
					WRONG("rsort: slot %u out of range", pairs[2 * i]);
				nk[pairs[2 * i]] = pairs[2 * i + 1];
			}
		}
		uint32_t *t = keys;

		keys = nk;
		nk = t;
	}
	sort_done("rsort", mode, t0, keys, n, n, before);
	free(keys);
	free(nk);
	free(pairs);
	free(rpairs);
	free(hist);
	free(H);
	free(pos);
	free(dest);
	free(scnt);
	free(rcnt);
	MPI_Finalize();
	return 0;
}
