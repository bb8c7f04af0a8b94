/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cc - connected components, the Split-C benchmark of the U-Net paper.
 *
 *   cc [--rows R] [--cols C] [--density PCT] [--seed X]
 *
 * The graph is an R x C grid (default 256 x 256) whose edges (to the right
 * and down) each exist with probability PCT% (default 60, near the
 * percolation threshold, so components are large and wind across ranks).
 * Every rank owns a band of rows.  It first finds the components of its
 * band with union-find (labels: the smallest global vertex number in the
 * component), then the ranks iterate: exchange the labels of their edge
 * rows with the neighbours (MPI_Sendrecv), lower each local component's
 * label through the edges that cross the band boundary, and stop when no
 * label changed anywhere (MPI_Allreduce).  Check: every rank builds the
 * whole graph itself (it is a hash of the seed) and computes the
 * components sequentially; every label of its band must match.
 */
#include "par.h"

static int R, C;
static uint64_t seed;
static double density;

/* Edge from (r, c) to the right (dir 0) or down (dir 1). */
static int edge(int r, int c, int dir)
{
	if (dir == 0 ? c + 1 >= C : r + 1 >= R)
		return 0;
	return par_hash01(seed, (uint64_t)r * (uint64_t)C + (uint64_t)c, (uint64_t)dir) < density;
}

static long find(long *p, long x)
{
	while (p[x] != x) {
		p[x] = p[p[x]];
		x = p[x];
	}
	return x;
}

/* Union keeping the smaller index as the root: a root is its component's
 * smallest vertex. */
static void unite(long *p, long a, long b)
{
	a = find(p, a);
	b = find(p, b);
	if (a < b)
		p[b] = a;
	else if (b < a)
		p[a] = b;
}

int main(int argc, char **argv)
{
	static const char *const known[] = { "rows", "cols", "density", "seed", NULL };

	par_init(&argc, &argv);
	par_opts_done(argc, argv, known, "[--rows R] [--cols C] [--density PCT] [--seed X]");
	R = (int)par_opt(argc, argv, "rows", 256, 1 << 16);
	C = (int)par_opt(argc, argv, "cols", 256, 1 << 16);
	density = (double)par_opt(argc, argv, "density", 60, 100) / 100;
	seed = (uint64_t)par_opt(argc, argv, "seed", 1, 1L << 40);
	int P = par_size;

	if (R < P)
		par_die(2, "needs at least one row per rank (%d rows, %d ranks)", R, P);
	int r0 = (int)((long)R * par_rank / P), r1 = (int)((long)R * (par_rank + 1) / P), nr = r1 - r0;
	long nv = (long)nr * C, base = (long)r0 * C;
	long *par = malloc(sizeof(long) * (size_t)nv), *lab = malloc(sizeof(long) * (size_t)nv);
	long *up = malloc(sizeof(long) * (size_t)C), *down = malloc(sizeof(long) * (size_t)C);
	long *mytop = malloc(sizeof(long) * (size_t)C), *mybot = malloc(sizeof(long) * (size_t)C);

	if (!par || !lab || !up || !down || !mytop || !mybot)
		par_die(2, "out of memory");
	CK(MPI_Barrier(MPI_COMM_WORLD));
	double t0 = MPI_Wtime();

	/* Local components. */
	for (long v = 0; v < nv; v++)
		par[v] = v;
	for (int r = r0; r < r1; r++)
		for (int c = 0; c < C; c++) {
			long v = (long)(r - r0) * C + c;

			if (edge(r, c, 0))
				unite(par, v, v + 1);
			if (r + 1 < r1 && edge(r, c, 1))
				unite(par, v, v + C);
		}
	/* lab[root] = the component's label (global number of its root). */
	for (long v = 0; v < nv; v++)
		lab[v] = base + find(par, v);
	int iters = 0;

	for (;;) {
		int changed = 0, any;

		iters++;
		for (int c = 0; c < C; c++) {
			mytop[c] = lab[find(par, c)];
			mybot[c] = lab[find(par, (long)(nr - 1) * C + c)];
		}
		int above = par_rank > 0 ? par_rank - 1 : MPI_PROC_NULL;
		int below = par_rank + 1 < P ? par_rank + 1 : MPI_PROC_NULL;

		/* My top row goes up, the row above me comes down, and so on. */
		CK(MPI_Sendrecv(mytop, C, MPI_LONG, above, 1, down, C, MPI_LONG, below, 1, MPI_COMM_WORLD,
				MPI_STATUS_IGNORE));
		CK(MPI_Sendrecv(mybot, C, MPI_LONG, below, 2, up, C, MPI_LONG, above, 2, MPI_COMM_WORLD,
				MPI_STATUS_IGNORE));
		for (int c = 0; c < C; c++) {
			/* Edge between the row above (r0 - 1) and my first row. */
			if (above != MPI_PROC_NULL && edge(r0 - 1, c, 1)) {
				long rt = find(par, c);

				if (up[c] < lab[rt]) {
					lab[rt] = up[c];
					changed = 1;
				}
			}
			/* Edge between my last row and the row below. */
			if (below != MPI_PROC_NULL && edge(r1 - 1, c, 1)) {
				long rt = find(par, (long)(nr - 1) * C + c);

				if (down[c] < lab[rt]) {
					lab[rt] = down[c];
					changed = 1;
				}
			}
		}
		CK(MPI_Allreduce(&changed, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD));
		if (!any)
			break;
	}
	long ncomp = 0, total;

	for (long v = 0; v < nv; v++)
		ncomp += lab[find(par, v)] == base + v;
	double secs = MPI_Wtime() - t0, maxsecs;

	CK(MPI_Allreduce(&secs, &maxsecs, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
	CK(MPI_Allreduce(&ncomp, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));

	/* Check against the whole graph, sequentially. */
	long N = (long)R * C;
	long *g = malloc(sizeof(long) * (size_t)N);

	if (!g)
		par_die(2, "out of memory");
	for (long v = 0; v < N; v++)
		g[v] = v;
	for (int r = 0; r < R; r++)
		for (int c = 0; c < C; c++) {
			long v = (long)r * C + c;

			if (edge(r, c, 0))
				unite(g, v, v + 1);
			if (edge(r, c, 1))
				unite(g, v, v + C);
		}
	for (long v = 0; v < nv; v++)
		if (lab[find(par, v)] != find(g, base + v))
			WRONG("cc: vertex %ld has label %ld, want %ld", base + v, lab[find(par, v)], find(g, base + v));
	long want = 0;

	for (long v = 0; v < N; v++)
		want += find(g, v) == v;
	if (total != want)
		WRONG("cc: %ld components, want %ld", total, want);
	if (par_rank == 0)
		printf("RESULT {\"prog\":\"cc\",\"ranks\":%d,\"vertices\":%ld,\"components\":%ld,\"rounds\":%d,"
		       "\"secs\":%.6f,\"ok\":true}\n",
		       P, N, total, iters, maxsecs);
	free(g);
	free(par);
	free(lab);
	free(up);
	free(down);
	free(mytop);
	free(mybot);
	MPI_Finalize();
	return 0;
}
