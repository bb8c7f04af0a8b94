/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mm - blocked matrix multiply, the Split-C benchmark of the U-Net paper.
 *
 *   mm [--blocks NB] [--bsize B] [--reps R]
 *
 * C = A x B for NB x NB matrices of B x B blocks of doubles (defaults
 * NB 4, B 32: 128 x 128).  Block (i, j) of each matrix lives on rank
 * (i * NB + j) mod P.  A rank computes its own C blocks; for every k it
 * gets the blocks A(i, k) and B(k, j) it needs from their owners, one
 * message per block (the paper's bulk block transfers), posted ahead as
 * nonblocking receives and sent by the owners, so transfers overlap the
 * multiply of the previous k.  A and B hold small integers, so C is
 * exact in doubles; every rank checks 16 entries of every C block it owns
 * against a direct dot product (a wrong entry is a wrong result), and
 * a global checksum of C against sum(A * (B * 1)) computed independently.
 */
#include "par.h"

static int nb, bs, P;

static int owner(int i, int j) { return (i * nb + j) % P; }

static double a_at(int r, int c) { return (double)((r * 7 + c * 3) % 11 - 5); }
static double b_at(int r, int c) { return (double)((r * 5 + c * 2) % 13 - 6); }

/* Block (bi, bj) of A or B, generated. */
static void gen(double *blk, int bi, int bj, int is_a)
{
	for (int r = 0; r < bs; r++)
		for (int c = 0; c < bs; c++)
			blk[r * bs + c] = is_a ? a_at(bi * bs + r, bj * bs + c) : b_at(bi * bs + r, bj * bs + c);
}

/* c += a * b for B x B blocks. */
static void gemm(double *c, const double *a, const double *b)
{
	for (int i = 0; i < bs; i++)
		for (int k = 0; k < bs; k++) {
			double aik = a[i * bs + k];

			for (int j = 0; j < bs; j++)
				c[i * bs + j] += aik * b[k * bs + j];
		}
}

int main(int argc, char **argv)
{
	static const char *const known[] = { "blocks", "bsize", "reps", NULL };

	par_init(&argc, &argv);
	par_opts_done(argc, argv, known, "[--blocks NB] [--bsize B] [--reps R]");
	nb = (int)par_opt(argc, argv, "blocks", 4, 256);
	bs = (int)par_opt(argc, argv, "bsize", 32, 1024);
	int reps = (int)par_opt(argc, argv, "reps", 1, 1000);
	P = par_size;
	size_t bsz = (size_t)bs * (size_t)bs;
	int nmine = 0;

	for (int b = 0; b < nb * nb; b++)
		nmine += b % P == par_rank;
	/* My blocks of A, B (as owner) and C; the fetched A and B blocks. */
	double *myA = calloc((size_t)nmine * bsz, sizeof(double)), *myB = calloc((size_t)nmine * bsz, sizeof(double));
	double *C = calloc((size_t)nmine * bsz, sizeof(double));
	double *ga = malloc((size_t)nmine * bsz * sizeof(double)), *gb = malloc((size_t)nmine * bsz * sizeof(double));
	MPI_Request *rq = malloc(sizeof(MPI_Request) * (size_t)(2 * nmine + 2 * nb * nb));

	if (!myA || !myB || !C || !ga || !gb || !rq)
		par_die(2, "out of memory");
	for (int b = 0, m = 0; b < nb * nb; b++)
		if (b % P == par_rank) {
			gen(myA + (size_t)m * bsz, b / nb, b % nb, 1);
			gen(myB + (size_t)m * bsz, b / nb, b % nb, 0);
			m++;
		}
	/* Slot of my block number b among my blocks. */
#define SLOT(b) ((b) / P)
	CK(MPI_Barrier(MPI_COMM_WORLD));
	double t0 = MPI_Wtime();

	for (int rep = 0; rep < reps; rep++) {
		memset(C, 0, (size_t)nmine * bsz * sizeof(double));
		for (int k = 0; k < nb; k++) {
			int nr = 0;

			/* Receives of what my C(i, j) need at this k: A(i, k) and
			 * B(k, j); tag = which matrix, the slot of the C block. */
			for (int b = par_rank, m = 0; b < nb * nb; b += P, m++) {
				int i = b / nb, j = b % nb;

				CK(MPI_Irecv(ga + (size_t)m * bsz, (int)bsz, MPI_DOUBLE, owner(i, k), 2 * m,
					     MPI_COMM_WORLD, &rq[nr++]));
				CK(MPI_Irecv(gb + (size_t)m * bsz, (int)bsz, MPI_DOUBLE, owner(k, j), 2 * m + 1,
					     MPI_COMM_WORLD, &rq[nr++]));
			}
			/* Sends of my A(i, k) and B(k, j) blocks to every C owner
			 * that needs them at this k. */
			for (int i = 0; i < nb; i++)
				for (int j = 0; j < nb; j++) {
					int dst = owner(i, j), m = SLOT(i * nb + j);

					if (owner(i, k) == par_rank)
						CK(MPI_Isend(myA + (size_t)SLOT(i * nb + k) * bsz, (int)bsz, MPI_DOUBLE,
							     dst, 2 * m, MPI_COMM_WORLD, &rq[nr++]));
					if (owner(k, j) == par_rank)
						CK(MPI_Isend(myB + (size_t)SLOT(k * nb + j) * bsz, (int)bsz, MPI_DOUBLE,
							     dst, 2 * m + 1, MPI_COMM_WORLD, &rq[nr++]));
				}
			CK(MPI_Waitall(nr, rq, MPI_STATUSES_IGNORE));
			for (int m = 0; m < nmine; m++)
				gemm(C + (size_t)m * bsz, ga + (size_t)m * bsz, gb + (size_t)m * bsz);
		}
	}
	double secs = MPI_Wtime() - t0, maxsecs;

	/* Check: sampled entries against direct dot products ... */
	uint64_t seed = 0xC0FFEEULL + (uint64_t)par_rank;
	double sum = 0, total, want = 0, wtotal;
	int n = nb * bs;

	for (int b = par_rank, m = 0; b < nb * nb; b += P, m++) {
		for (int s = 0; s < 16; s++) {
			int r = (int)(par_rand(&seed) % (uint64_t)bs), c = (int)(par_rand(&seed) % (uint64_t)bs);
			int gr = b / nb * bs + r, gc = b % nb * bs + c;
			double d = 0;

			for (int k = 0; k < n; k++)
				d += a_at(gr, k) * b_at(k, gc);
			if (C[(size_t)m * bsz + (size_t)r * (size_t)bs + (size_t)c] != d)
				WRONG("C(%d,%d) = %g, want %g", gr, gc, C[(size_t)m * bsz + (size_t)r * (size_t)bs + (size_t)c], d);
		}
		for (size_t e = 0; e < bsz; e++)
			sum += C[(size_t)m * bsz + e];
	}
	/* ... and the sum of all of C against sum_r sum_k A(r,k) * rowsum_B(k),
	 * rows split over the ranks. */
	for (int r = par_rank; r < n; r += P)
		for (int k = 0; k < n; k++) {
			double rs = 0;

			for (int c = 0; c < n; c++)
				rs += b_at(k, c);
			want += a_at(r, k) * rs;
		}
	CK(MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
	CK(MPI_Allreduce(&want, &wtotal, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
	CK(MPI_Allreduce(&secs, &maxsecs, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
	if (total != wtotal)
		WRONG("sum of C is %g, want %g", total, wtotal);
	if (par_rank == 0)
		printf("RESULT {\"prog\":\"mm\",\"ranks\":%d,\"n\":%d,\"bsize\":%d,\"reps\":%d,"
		       "\"secs\":%.6f,\"mflops\":%.1f,\"ok\":true}\n",
		       P, n, bs, reps, maxsecs, 2.0 * n * n * (double)n * reps / maxsecs / 1e6);
	free(myA);
	free(myB);
	free(C);
	free(ga);
	free(gb);
	free(rq);
	MPI_Finalize();
	return 0;
}
