/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sort.h - what the two sorts share: their input, their two ways of
 * moving items to their ranks ("bulk" and "small"), and the check of
 * their output, and their RESULT line.
 *
 * Input: N 32-bit keys per rank from the seeded generator (rank-dependent).
 * Output check (every rank): its keys are in order, its last key <= the
 * next rank's first key, the number of keys and the sum and xor of all
 * keys (64-bit) are what they were before the sort.  A sort that loses,
 * duplicates, corrupts or misorders a key fails one of these.
 */
#ifndef SORT_H
#define SORT_H

#include "par.h"

struct sort_sig {
	uint64_t count, sum, xor;
};

/* --mode bulk|small (bulk if absent): the mode's name, and in *small
 * whether it is small; any other value ends the program (status 2). */
static inline const char *sort_mode(int argc, char **argv, int *small)
{
	const char *mode = par_opt_str(argc, argv, "mode", "bulk");

	*small = !strcmp(mode, "small");
	if (!*small && strcmp(mode, "bulk"))
		par_die(2, "--mode bulk|small, not %s", mode);
	return mode;
}

static inline void sort_input(uint32_t *k, long n, uint64_t seed)
{
	uint64_t s = seed * 1000003ULL + (uint64_t)par_rank;

	for (long i = 0; i < n; i++)
		k[i] = (uint32_t)(par_rand(&s) >> 32);
}

/* The global signature of a distributed key set. */
static inline struct sort_sig sort_sig(const uint32_t *k, long n)
{
	uint64_t loc[3] = { (uint64_t)n, 0, 0 }, glob[3];

	for (long i = 0; i < n; i++) {
		loc[1] += k[i];
		loc[2] ^= (uint64_t)k[i] * 0x9E3779B97F4A7C15ULL;
	}
	CK(MPI_Allreduce(loc, glob, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD));
	CK(MPI_Allreduce(&loc[2], &glob[2], 1, MPI_UINT64_T, MPI_BXOR, MPI_COMM_WORLD));
	return (struct sort_sig){ glob[0], glob[1], glob[2] };
}

static inline void sort_check(const char *prog, const uint32_t *k, long n, struct sort_sig before)
{
	for (long i = 1; i < n; i++)
		if (k[i - 1] > k[i])
			WRONG("%s: key %ld (%u) > key %ld (%u)", prog, i - 1, k[i - 1], i, k[i]);
	/* The boundary with the next rank (empty ranks pass their
	 * predecessor's last key on). */
	uint32_t last = 0, prev = 0;
	int have = n > 0, prev_have = 0;
	MPI_Status st;

	if (par_rank > 0) {
		uint32_t msg[2];

		CK(MPI_Recv(msg, 2, MPI_UINT32_T, par_rank - 1, 77, MPI_COMM_WORLD, &st));
		prev_have = (int)msg[0];
		prev = msg[1];
		if (prev_have && have && prev > k[0])
			WRONG("%s: rank %d ends with %u > my first key %u", prog, par_rank - 1, prev, k[0]);
	}
	last = have ? k[n - 1] : prev;
	if (par_rank + 1 < par_size) {
		uint32_t msg[2] = { (uint32_t)(have || prev_have), last };

		CK(MPI_Send(msg, 2, MPI_UINT32_T, par_rank + 1, 77, MPI_COMM_WORLD));
	}
	struct sort_sig after = sort_sig(k, n);

	if (after.count != before.count || after.sum != before.sum || after.xor != before.xor)
		WRONG("%s: keys changed: count %llu sum %llu xor %llx, want %llu %llu %llx", prog,
		      (unsigned long long)after.count, (unsigned long long)after.sum, (unsigned long long)after.xor,
		      (unsigned long long)before.count, (unsigned long long)before.sum,
		      (unsigned long long)before.xor);
}

/*
 * The end of a timed sort, on every rank: the slowest rank's time since
 * t0, sort_check of the nk keys k this rank holds, and rank 0's RESULT
 * line for "PROG-MODE" with n keys per rank.
 */
static inline void sort_done(const char *prog, const char *mode, double t0, const uint32_t *k, long nk,
			     long n, struct sort_sig before)
{
	double secs = MPI_Wtime() - t0, maxsecs;
	char name[64];

	CK(MPI_Allreduce(&secs, &maxsecs, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
	snprintf(name, sizeof(name), "%s-%s", prog, mode);
	sort_check(name, k, nk, before);
	if (par_rank == 0)
		printf("RESULT {\"prog\":\"%s\",\"ranks\":%d,\"keys_per_rank\":%ld,\"secs\":%.6f,"
		       "\"us_per_key\":%.4f,\"ok\":true}\n",
		       name, par_size, n, maxsecs, maxsecs * 1e6 / (double)n);
}

static inline int sort_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The small-message exchange: every item (W 32-bit words) is one MPI
 * message to its destination, as the paper's small-message versions
 * store one key at a time.  dest[i] is item i's rank; items to myself are
 * copied.  Receives: exactly nrecv items, taken as they come (any
 * source), each handed to put(word pointer, ctx).  Sends are
 * nonblocking (MPI tag TAG), at most SMALL_WINDOW in flight, and the loop receives
 * while it sends, so no rank waits on a peer that is itself sending.
 */
#define SMALL_WINDOW 64

static inline void small_exchange(const uint32_t *items, int w, long n, const int *dest, long nrecv, int tag,
				  void (*put)(const uint32_t *item, void *ctx), void *ctx)
{
	MPI_Request rq[SMALL_WINDOW];
	int nfree = SMALL_WINDOW, freel[SMALL_WINDOW];
	long got = 0, i = 0;
	uint32_t in[4];

	if (w > 4)
		par_die(2, "small_exchange: items of at most 4 words");
	for (int s = 0; s < SMALL_WINDOW; s++) {
		rq[s] = MPI_REQUEST_NULL;
		freel[s] = s;
	}
	while (i < n || got < nrecv) {
		if (i < n && dest[i] == par_rank) {
			put(items + i * w, ctx);
			got++;
			i++;
			continue;
		}
		if (i < n && nfree > 0) {
			int s = freel[--nfree];

			CK(MPI_Isend(items + i * w, w, MPI_UINT32_T, dest[i], tag, MPI_COMM_WORLD, &rq[s]));
			i++;
		} else if (i < n) {
			int s;

			CK(MPI_Waitany(SMALL_WINDOW, rq, &s, MPI_STATUS_IGNORE));
			freel[nfree++] = s;
		}
		/* Take whatever has arrived. */
		for (;;) {
			int flag = 0;

			if (got >= nrecv)
				break;
			CK(MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
			if (!flag) {
				if (i < n)
					break;
				/* Nothing left to send: wait for the rest. */
				MPI_Status st;

				CK(MPI_Recv(in, w, MPI_UINT32_T, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st));
			} else {
				CK(MPI_Recv(in, w, MPI_UINT32_T, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			}
			put(in, ctx);
			got++;
		}
	}
	CK(MPI_Waitall(SMALL_WINDOW, rq, MPI_STATUSES_IGNORE));
}

/*
 * How many items go where: scnt[r] = how many of my n items go to rank r
 * (dest[i] is item i's rank), rcnt[r] = how many rank r sends me (one
 * MPI_Alltoall).  Returns how many items I receive in all.
 */
static inline long exchange_counts(const int *dest, long n, int *scnt, int *rcnt)
{
	long nrecv = 0;

	memset(scnt, 0, sizeof(int) * (size_t)par_size);
	for (long i = 0; i < n; i++)
		scnt[dest[i]]++;
	CK(MPI_Alltoall(scnt, 1, MPI_INT, rcnt, 1, MPI_INT, MPI_COMM_WORLD));
	for (int r = 0; r < par_size; r++)
		nrecv += rcnt[r];
	return nrecv;
}

/*
 * The bulk exchange: the items (W 32-bit words each) for each rank travel
 * together, in one MPI_Alltoallv.  scnt and rcnt are exchange_counts'.
 * The items are first grouped by destination (in their order) in
 * grouped (n * W words); out gets rank 0's items to me, then rank 1's,
 * and so on (W * the sum of rcnt words).  out may be items itself.
 */
static inline void bulk_exchange(const uint32_t *items, int w, long n, const int *dest, const int *scnt,
				 const int *rcnt, uint32_t *grouped, uint32_t *out)
{
	int P = par_size;
	int *sw = malloc(sizeof(int) * (size_t)P), *rw = malloc(sizeof(int) * (size_t)P);
	int *sdis = malloc(sizeof(int) * (size_t)P), *rdis = malloc(sizeof(int) * (size_t)P);
	int *fill = calloc((size_t)P, sizeof(int));

	if (!sw || !rw || !sdis || !rdis || !fill)
		par_die(2, "out of memory");
	/* MPI counts words: the counts and offsets of items, times W. */
	for (int r = 0, so = 0, ro = 0; r < P; r++) {
		sw[r] = w * scnt[r];
		rw[r] = w * rcnt[r];
		sdis[r] = so;
		rdis[r] = ro;
		so += sw[r];
		ro += rw[r];
	}
	for (long i = 0; i < n; i++) {
		int r = dest[i];

		memcpy(grouped + sdis[r] + fill[r], items + i * w, sizeof(uint32_t) * (size_t)w);
		fill[r] += w;
	}
	CK(MPI_Alltoallv(grouped, sw, sdis, MPI_UINT32_T, out, rw, rdis, MPI_UINT32_T, MPI_COMM_WORLD));
	free(sw);
	free(rw);
	free(sdis);
	free(rdis);
	free(fill);
}

#endif
