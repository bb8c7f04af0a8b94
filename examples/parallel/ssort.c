/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ssort - sample sort, the Split-C benchmark of the U-Net paper, in its
 * two versions.
 *
 *   ssort [--keys N] [--mode bulk|small] [--oversample S] [--seed X]
 *
 * N 32-bit keys per rank (default 16384).  Every rank draws S samples
 * (default 32) of its keys; the samples are gathered everywhere
 * (MPI_Allgather) and sorted, and P - 1 splitters picked from them.  Each
 * key goes to the rank whose splitter interval holds it: with --mode bulk
 * (default) the keys for each rank are sent together (MPI_Alltoall of the
 * counts, then MPI_Alltoallv); with --mode small every key is its own
 * message (sort.h small_exchange), the paper's small-message version.
 * Then each rank sorts what it received.  sort.h checks the result.
 */
#include "sort.h"

struct sink {
	uint32_t *out;
	long n;
};

static void put_key(const uint32_t *item, void *ctx)
{
	struct sink *s = ctx;

	s->out[s->n++] = item[0];
}

/* Rank of key k: the first splitter > k (binary search). */
static int bucket(uint32_t k, const uint32_t *spl, int nspl)
{
	int lo = 0, hi = nspl;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (spl[mid] <= k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int main(int argc, char **argv)
{
	static const char *const known[] = { "keys", "mode", "oversample", "seed", NULL };

	par_init(&argc, &argv);
	par_opts_done(argc, argv, known, "[--keys N] [--mode bulk|small] [--oversample S] [--seed X]");
	long n = par_opt(argc, argv, "keys", 16384, 1L << 28);
	int over = (int)par_opt(argc, argv, "oversample", 32, 1 << 20);
	uint64_t seed = (uint64_t)par_opt(argc, argv, "seed", 1, 1L << 40);
	int small;
	const char *mode = sort_mode(argc, argv, &small);
	int P = par_size;
	uint32_t *keys = malloc(sizeof(uint32_t) * (size_t)n);
	uint32_t *samp = malloc(sizeof(uint32_t) * (size_t)over), *all = malloc(sizeof(uint32_t) * (size_t)over * (size_t)P);
	uint32_t *spl = malloc(sizeof(uint32_t) * (size_t)P);
	int *dest = malloc(sizeof(int) * (size_t)n);
	int *scnt = malloc(sizeof(int) * (size_t)P), *rcnt = malloc(sizeof(int) * (size_t)P);
	uint32_t *sendbuf = malloc(sizeof(uint32_t) * (size_t)n);

	if (!keys || !samp || !all || !spl || !dest || !scnt || !rcnt || !sendbuf)
		par_die(2, "out of memory");
	sort_input(keys, n, seed);
	struct sort_sig before = sort_sig(keys, n);

	CK(MPI_Barrier(MPI_COMM_WORLD));
	double t0 = MPI_Wtime();
	uint64_t s = seed ^ 0x5A5A5A5AULL ^ (uint64_t)par_rank << 32;

	for (int i = 0; i < over; i++)
		samp[i] = keys[par_rand(&s) % (uint64_t)n];
	CK(MPI_Allgather(samp, over, MPI_UINT32_T, all, over, MPI_UINT32_T, MPI_COMM_WORLD));
	qsort(all, (size_t)over * (size_t)P, sizeof(uint32_t), sort_cmp_u32);
	for (int r = 1; r < P; r++)
		spl[r - 1] = all[(size_t)r * (size_t)over];
	for (long i = 0; i < n; i++)
		dest[i] = bucket(keys[i], spl, P - 1);
	long nrecv = exchange_counts(dest, n, scnt, rcnt);
	uint32_t *out = malloc(sizeof(uint32_t) * (size_t)(nrecv ? nrecv : 1));

	if (!out)
		par_die(2, "out of memory");
	if (small) {
		struct sink sk = { out, 0 };

		small_exchange(keys, 1, n, dest, nrecv, 5, put_key, &sk);
		if (sk.n != nrecv)
			WRONG("ssort: received %ld keys, want %ld", sk.n, nrecv);
	} else {
		bulk_exchange(keys, 1, n, dest, scnt, rcnt, sendbuf, out);
	}
	qsort(out, (size_t)nrecv, sizeof(uint32_t), sort_cmp_u32);
	sort_done("ssort", mode, t0, out, nrecv, n, before);
	free(keys);
	free(samp);
	free(all);
	free(spl);
	free(dest);
	free(scnt);
	free(rcnt);
	free(sendbuf);
	free(out);
	MPI_Finalize();
	return 0;
}
