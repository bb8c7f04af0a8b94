/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cg - conjugate gradient, the Split-C benchmark of the U-Net paper.
 *
 *   cg [--grid M] [--iters K] [--tol E]
 *
 * Solves A x = b where A is the 5-point Laplacian of an M x M grid
 * (default 128) plus the identity (symmetric positive definite, well
 * conditioned enough to converge in tens of iterations).  Every rank owns
 * a band of grid rows; each iteration is one matrix-vector product (the
 * edge rows exchanged with the neighbours, MPI_Sendrecv) and two dot
 * products (MPI_Allreduce).  b = A x* for a known x*; the run stops when
 * the residual norm falls below 1e-E (default E 10) relative to |b|, or
 * after K iterations (default 500).  Check: it must have converged, and
 * max |x - x*| must be below 1e-6.
 */
#include <math.h>

#include "par.h"

static int M, r0, nr;

static double xstar(int r, int c) { return sin(0.1 * r) + cos(0.07 * c) + 0.001 * ((r * 13 + c * 7) % 17); }

/* y = A v; v has a halo row above (index 0) and below (nr + 1). */
static void matvec(double *y, double *v)
{
	int above = par_rank > 0 ? par_rank - 1 : MPI_PROC_NULL;
	int below = par_rank + 1 < par_size ? par_rank + 1 : MPI_PROC_NULL;

	/* Halo rows are zero at the grid's edge (Dirichlet boundary). */
	if (above == MPI_PROC_NULL)
		memset(v, 0, sizeof(double) * (size_t)M);
	if (below == MPI_PROC_NULL)
		memset(v + (size_t)(nr + 1) * (size_t)M, 0, sizeof(double) * (size_t)M);
	CK(MPI_Sendrecv(v + M, M, MPI_DOUBLE, above, 1, v + (size_t)(nr + 1) * (size_t)M, M, MPI_DOUBLE, below, 1,
			MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	CK(MPI_Sendrecv(v + (size_t)nr * (size_t)M, M, MPI_DOUBLE, below, 2, v, M, MPI_DOUBLE, above, 2, MPI_COMM_WORLD,
			MPI_STATUS_IGNORE));
	for (int i = 1; i <= nr; i++)
		for (int c = 0; c < M; c++) {
			double *p = v + (size_t)i * (size_t)M + c;
			double s = 5 * p[0] - p[-M] - p[M];

			if (c > 0)
				s -= p[-1];
			if (c + 1 < M)
				s -= p[1];
			y[(size_t)(i - 1) * (size_t)M + c] = s;
		}
}

static double dot(const double *a, const double *b, long n)
{
	double s = 0, t;

	for (long i = 0; i < n; i++)
		s += a[i] * b[i];
	CK(MPI_Allreduce(&s, &t, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
	return t;
}

int main(int argc, char **argv)
{
	static const char *const known[] = { "grid", "iters", "tol", NULL };

	par_init(&argc, &argv);
	par_opts_done(argc, argv, known, "[--grid M] [--iters K] [--tol E]");
	M = (int)par_opt(argc, argv, "grid", 128, 1 << 14);
	int maxit = (int)par_opt(argc, argv, "iters", 500, 1 << 24);
	double tol = pow(10, -(double)par_opt(argc, argv, "tol", 10, 15));

	if (M < par_size)
		par_die(2, "needs at least one grid row per rank (%d rows, %d ranks)", M, par_size);
	r0 = (int)((long)M * par_rank / par_size);
	nr = (int)((long)M * (par_rank + 1) / par_size) - r0;
	long n = (long)nr * M;
	size_t halo = (size_t)(nr + 2) * (size_t)M;
	double *x = calloc((size_t)n, sizeof(double)), *r = malloc(sizeof(double) * (size_t)n);
	double *p = calloc(halo, sizeof(double)), *q = malloc(sizeof(double) * (size_t)n);
	double *b = malloc(sizeof(double) * (size_t)n), *xs = calloc(halo, sizeof(double));

	if (!x || !r || !p || !q || !b || !xs)
		par_die(2, "out of memory");
	for (int i = 0; i < nr; i++)
		for (int c = 0; c < M; c++)
			xs[(size_t)(i + 1) * (size_t)M + c] = xstar(r0 + i, c);
	matvec(b, xs);
	CK(MPI_Barrier(MPI_COMM_WORLD));
	double t0 = MPI_Wtime();

	/* x = 0: r = b, p = r. */
	memcpy(r, b, sizeof(double) * (size_t)n);
	memcpy(p + M, r, sizeof(double) * (size_t)n);
	double rr = dot(r, r, n), bb = rr;
	int it = 0;

	while (it < maxit && sqrt(rr) > tol * sqrt(bb)) {
		matvec(q, p);
		double alpha = rr / dot(p + M, q, n);

		for (long i = 0; i < n; i++) {
			x[i] += alpha * p[M + i];
			r[i] -= alpha * q[i];
		}
		double rr2 = dot(r, r, n), beta = rr2 / rr;

		for (long i = 0; i < n; i++)
			p[M + i] = r[i] + beta * p[M + i];
		rr = rr2;
		it++;
	}
	double secs = MPI_Wtime() - t0, maxsecs;

	CK(MPI_Allreduce(&secs, &maxsecs, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
	if (sqrt(rr) > tol * sqrt(bb))
		WRONG("cg: no convergence in %d iterations (residual %g)", it, sqrt(rr / bb));
	double err = 0, maxerr;

	for (long i = 0; i < n; i++)
		err = fmax(err, fabs(x[i] - xs[M + i]));
	CK(MPI_Allreduce(&err, &maxerr, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
	if (!(maxerr < 1e-6))
		WRONG("cg: max |x - x*| = %g", maxerr);
	if (par_rank == 0)
		printf("RESULT {\"prog\":\"cg\",\"ranks\":%d,\"grid\":%d,\"iters\":%d,\"secs\":%.6f,"
		       "\"us_per_iter\":%.2f,\"maxerr\":%.3g,\"ok\":true}\n",
		       par_size, M, it, maxsecs, maxsecs * 1e6 / (it ? it : 1), maxerr);
	free(x);
	free(r);
	free(p);
	free(q);
	free(b);
	free(xs);
	MPI_Finalize();
	return 0;
}
