/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_ring - ring latency and all-to-all time across every rank.
 *
 *   mpi_ring [--rounds N] [--warmup W] [--a2a-bytes B] [--a2a-iters K]
 *
 * Ring: rank 0 sends an 8-byte token to rank 1, each rank adds its rank
 * and passes it on, rank 0 receives it from rank P-1; N measured rounds
 * after W unmeasured ones.  The figure is one lap divided by P (one hop),
 * min and p50.  While the token travels, P-1 ranks wait in MPI_Recv, so
 * with more ranks than cores this is the case where a waiting rank must
 * let the rank it waits for run.
 * All-to-all: K calls of MPI_Alltoall with B bytes to every rank; the
 * figure is the time per call (p50 over the calls, the slowest rank's).
 * Every token is checked against the closed form of the sum, every byte
 * of every all-to-all block against its pattern (sender, receiver,
 * call); a wrong value is a wrong result (exit 2).
 */
#include "par.h"

static unsigned char pattern(int from, int to, int call, size_t i)
{
	return (unsigned char)(from * 37 + to * 11 + call * 5 + (int)i * 3);
}

int main(int argc, char **argv)
{
	static const char *const known[] = { "rounds", "warmup", "a2a-bytes", "a2a-iters", NULL };

	par_init(&argc, &argv);
	par_opts_done(argc, argv, known,
		      "[--rounds N] [--warmup W] [--a2a-bytes B] [--a2a-iters K]");
	int rounds = (int)par_opt(argc, argv, "rounds", 1000, 10000000);
	int warm = (int)par_opt(argc, argv, "warmup", 100, 10000000);
	long a2a_bytes = par_opt(argc, argv, "a2a-bytes", 65536, 16L << 20);
	int a2a_iters = (int)par_opt(argc, argv, "a2a-iters", 20, 1000000);
	int P = par_size, me = par_rank;

	if (P < 2)
		par_die(2, "needs at least 2 ranks");
	double *lap = malloc(sizeof(double) * (size_t)rounds);
	double *a2a = malloc(sizeof(double) * (size_t)a2a_iters);
	unsigned char *sbuf = malloc((size_t)a2a_bytes * (size_t)P);
	unsigned char *rbuf = malloc((size_t)a2a_bytes * (size_t)P);

	if (!lap || !a2a || !sbuf || !rbuf)
		par_die(2, "out of memory");
	/* The token after one lap: start value + 1 + 2 + ... + (P-1). */
	uint64_t lap_sum = (uint64_t)P * (uint64_t)(P - 1) / 2;

	CK(MPI_Barrier(MPI_COMM_WORLD));
	for (int r = -warm; r < rounds; r++) {
		uint64_t tok = (uint64_t)(r + warm) * 1000003u;
		double t0 = MPI_Wtime();

		if (me == 0) {
			uint64_t back;

			CK(MPI_Send(&tok, 1, MPI_UINT64_T, 1, 7, MPI_COMM_WORLD));
			CK(MPI_Recv(&back, 1, MPI_UINT64_T, P - 1, 7, MPI_COMM_WORLD,
				    MPI_STATUS_IGNORE));
			if (back != tok + lap_sum)
				WRONG("ring round %d: token %llu, expected %llu", r,
				      (unsigned long long)back, (unsigned long long)(tok + lap_sum));
			if (r >= 0)
				lap[r] = (MPI_Wtime() - t0) * 1e6;
		} else {
			uint64_t got;

			CK(MPI_Recv(&got, 1, MPI_UINT64_T, me - 1, 7, MPI_COMM_WORLD,
				    MPI_STATUS_IGNORE));
			uint64_t want = tok + (uint64_t)me * (uint64_t)(me - 1) / 2;
			if (got != want)
				WRONG("ring round %d at rank %d: token %llu, expected %llu", r, me,
				      (unsigned long long)got, (unsigned long long)want);
			got += (uint64_t)me;
			CK(MPI_Send(&got, 1, MPI_UINT64_T, (me + 1) % P, 7, MPI_COMM_WORLD));
		}
	}
	CK(MPI_Barrier(MPI_COMM_WORLD));
	for (int c = 0; c < a2a_iters; c++) {
		for (int to = 0; to < P; to++)
			for (long i = 0; i < a2a_bytes; i++)
				sbuf[(size_t)to * (size_t)a2a_bytes + (size_t)i] =
					pattern(me, to, c, (size_t)i);
		memset(rbuf, 0, (size_t)a2a_bytes * (size_t)P);
		double t0 = MPI_Wtime();

		CK(MPI_Alltoall(sbuf, (int)a2a_bytes, MPI_BYTE, rbuf, (int)a2a_bytes, MPI_BYTE,
				MPI_COMM_WORLD));
		double t = (MPI_Wtime() - t0) * 1e6, slowest;

		CK(MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
		a2a[c] = slowest;
		for (int from = 0; from < P; from++)
			for (long i = 0; i < a2a_bytes; i++) {
				unsigned char b = rbuf[(size_t)from * (size_t)a2a_bytes + (size_t)i];
				if (b != pattern(from, me, c, (size_t)i))
					WRONG("all-to-all call %d: byte %ld from rank %d is %u", c, i,
					      from, b);
			}
	}
	CK(MPI_Barrier(MPI_COMM_WORLD));
	if (me == 0) {
		double lmin = par_quantile(lap, rounds, 0), lp50 = par_quantile(lap, rounds, 0.5);
		double ap50 = par_quantile(a2a, a2a_iters, 0.5);

		printf("RESULT {\"prog\":\"ring\",\"ranks\":%d,\"rounds\":%d,\"hop_min_us\":%.2f,"
		       "\"hop_p50_us\":%.2f,\"lap_p50_us\":%.2f}\n",
		       P, rounds, lmin / P, lp50 / P, lp50);
		printf("RESULT {\"prog\":\"alltoall\",\"ranks\":%d,\"bytes\":%ld,\"iters\":%d,"
		       "\"p50_us\":%.2f}\n",
		       P, a2a_bytes, a2a_iters, ap50);
		printf("RESULT {\"prog\":\"ring\",\"ranks\":%d,\"ok\":true}\n", P);
		fflush(stdout);
	}
	free(lap);
	free(a2a);
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}
