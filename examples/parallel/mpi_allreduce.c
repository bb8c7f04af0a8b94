/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_allreduce - MPI_Allreduce latency by rank count.
 *
 *   mpi_allreduce [--iters N] [--warmup W] [--count DOUBLES]
 *   mpi_allreduce --soak SECONDS
 *
 * For P = 2, 4, 8, ... up to the job's size (and the job's size itself):
 * the first P ranks (MPI_Comm_split) time N MPI_Allreduce(MPI_SUM) of
 * --count doubles (default 1) after W unmeasured ones; min, p50 and p90
 * per call.  Each rank contributes values that depend on its rank and
 * the iteration, and checks every element of every result against the
 * closed form (exact in doubles), so a wrong sum is a wrong result.
 *
 * --soak: for SECONDS, all ranks reduce by hand, each iteration an
 * exchange of one value between every pair of ranks (MPI_Isend/Irecv,
 * checked the same way), rank 0 deciding when to stop inside the
 * exchanged values.  It is the program of the "rank killed mid-run" test:
 * every survivor then has a send to and a receive from the dead rank
 * outstanding and must leave with an MPI error, not hang.
 */
#include "par.h"

static double value(int rank, int it, int i)
{
	return (double)((rank + 1) * 3 + it % 97 + i);
}

/* The expected sum over ranks 0..p-1 of value(rank, it, i). */
static double expect(int p, int it, int i)
{
	return 3.0 * p * (p + 1) / 2 + (double)p * (it % 97 + i);
}

static void one(MPI_Comm comm, int p, int it, int count, double *in, double *out)
{
	for (int i = 0; i < count; i++)
		in[i] = value(par_rank, it, i);
	CK(MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, comm));
	for (int i = 0; i < count; i++)
		if (out[i] != expect(p, it, i))
			WRONG("allreduce over %d ranks, iteration %d, element %d: %g, want %g", p, it, i,
			      out[i], expect(p, it, i));
}

static int soak(int seconds)
{
	double mine[2], t0 = MPI_Wtime();
	double (*in)[2] = malloc(sizeof(double[2]) * (size_t)par_size);
	MPI_Request *rq = malloc(sizeof(MPI_Request) * 2 * (size_t)par_size);
	long it = 0;

	if (!in || !rq)
		par_die(2, "out of memory");
	for (;; it++) {
		int itv = (int)(it % 100000), nr = 0;
		double sum = 0, stop = 0;

		mine[0] = value(par_rank, itv, 0);
		/* Rank 0 says stop in its second word. */
		mine[1] = par_rank == 0 && MPI_Wtime() - t0 >= seconds;
		/* Every rank exchanges with every other one, each iteration:
		 * each survivor of a dead rank has a send to it and a receive
		 * from it outstanding, so each learns of it on its own. */
		for (int r = 0; r < par_size; r++) {
			if (r == par_rank)
				continue;
			CK(MPI_Irecv(in[r], 2, MPI_DOUBLE, r, 9, MPI_COMM_WORLD, &rq[nr++]));
			CK(MPI_Isend(mine, 2, MPI_DOUBLE, r, 9, MPI_COMM_WORLD, &rq[nr++]));
		}
		CK(MPI_Waitall(nr, rq, MPI_STATUSES_IGNORE));
		in[par_rank][0] = mine[0];
		in[par_rank][1] = mine[1];
		for (int r = 0; r < par_size; r++) {
			sum += in[r][0];
			stop += in[r][1];
		}
		if (sum != expect(par_size, itv, 0))
			WRONG("soak iteration %ld: %g, want %g", it, sum, expect(par_size, itv, 0));
		if (stop != 0)
			break;
		if (it == 0 && par_rank == 0) {
			printf("soak running\n");
			fflush(stdout);
		}
	}
	if (par_rank == 0)
		printf("RESULT {\"prog\":\"allreduce-soak\",\"ranks\":%d,\"iters\":%ld,\"ok\":true}\n", par_size, it);
	free(in);
	free(rq);
	MPI_Finalize();
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const known[] = { "iters", "warmup", "count", "soak", NULL };

	par_init(&argc, &argv);
	par_opts_done(argc, argv, known, "[--iters N] [--warmup W] [--count DOUBLES] | --soak SECONDS");
	int iters = (int)par_opt(argc, argv, "iters", 1000, 10000000);
	int warm = (int)par_opt(argc, argv, "warmup", 100, 10000000);
	int count = (int)par_opt(argc, argv, "count", 1, 1 << 24);
	int secs = (int)par_opt(argc, argv, "soak", 0, 86400);

	if (secs > 0)
		return soak(secs);
	double *in = malloc(sizeof(double) * (size_t)count), *out = malloc(sizeof(double) * (size_t)count);
	double *lat = malloc(sizeof(double) * (size_t)iters);

	if (!in || !out || !lat)
		par_die(2, "out of memory");
	for (int p = 2; p <= par_size; p = p * 2 > par_size && p < par_size ? par_size : p * 2) {
		MPI_Comm comm;

		CK(MPI_Comm_split(MPI_COMM_WORLD, par_rank < p ? 0 : MPI_UNDEFINED, par_rank, &comm));
		if (par_rank < p) {
			for (int it = -warm; it < iters; it++) {
				double t0 = MPI_Wtime();

				one(comm, p, it < 0 ? -it : it, count, in, out);
				if (it >= 0)
					lat[it] = (MPI_Wtime() - t0) * 1e6;
			}
			CK(MPI_Comm_free(&comm));
		}
		if (par_rank == 0) {
			double p50 = par_quantile(lat, iters, 0.5), p90 = par_quantile(lat, iters, 0.9);

			printf("RESULT {\"prog\":\"allreduce\",\"ranks\":%d,\"count\":%d,\"iters\":%d,"
			       "\"min_us\":%.2f,\"p50_us\":%.2f,\"p90_us\":%.2f}\n",
			       p, count, iters, lat[0], p50, p90);
			fflush(stdout);
		}
		CK(MPI_Barrier(MPI_COMM_WORLD));
	}
	if (par_rank == 0)
		printf("RESULT {\"prog\":\"allreduce\",\"ranks\":%d,\"ok\":true}\n", par_size);
	free(in);
	free(out);
	free(lat);
	MPI_Finalize();
	return 0;
}
