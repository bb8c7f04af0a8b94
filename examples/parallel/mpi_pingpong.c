/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_pingpong - MPI ping-pong latency and bandwidth by message size.
 *
 *   mpi_pingpong [--iters N] [--warmup W] [--maxsize BYTES] [--window K]
 *
 * Ranks 0 and 1 (the others only wait): for each size 8, 64, 256, 1 KiB,
 * 4 KiB, ... up to --maxsize (default 64 KiB), W unmeasured then N
 * measured round trips of MPI_Send/MPI_Recv; the one-way latency is half
 * a round trip (min, p50, p90).  Bandwidth: rank 0 streams K messages
 * (MPI_Isend) per round, rank 1 answers each round with one 8-byte
 * message, N rounds; MB/s = bytes / time.  Every message carries a
 * pattern that depends on the size and the iteration, and the receiver
 * checks every byte it gets (a wrong byte is a wrong result, exit 2).
 * Rank 0 prints one RESULT line per size and a final one with "ok".
 */
#include "par.h"

static void fill(unsigned char *b, int n, int size, int it)
{
	for (int i = 0; i < n; i++)
		b[i] = (unsigned char)(i * 31 + size * 7 + it);
}

static void check(const unsigned char *b, int n, int size, int it, const char *what)
{
	for (int i = 0; i < n; i++)
		if (b[i] != (unsigned char)(i * 31 + size * 7 + it))
			WRONG("%s size %d iteration %d: byte %d is %u", what, size, it, i, b[i]);
}

int main(int argc, char **argv)
{
	static const char *const known[] = { "iters", "warmup", "maxsize", "window", NULL };

	par_init(&argc, &argv);
	par_opts_done(argc, argv, known, "[--iters N] [--warmup W] [--maxsize BYTES] [--window K]");
	int iters = (int)par_opt(argc, argv, "iters", 1000, 10000000);
	int warm = (int)par_opt(argc, argv, "warmup", 100, 10000000);
	int maxsize = (int)par_opt(argc, argv, "maxsize", 65536, 64 << 20);
	int window = (int)par_opt(argc, argv, "window", 16, 1024);

	if (par_size < 2)
		par_die(2, "needs at least 2 ranks");
	unsigned char *buf = malloc((size_t)maxsize), *rbuf = malloc((size_t)maxsize * (size_t)window);
	double *lat = malloc(sizeof(double) * (size_t)iters);
	MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)window);

	if (!buf || !rbuf || !lat || !req)
		par_die(2, "out of memory");
	CK(MPI_Barrier(MPI_COMM_WORLD));
	for (int size = 8; size <= maxsize; size = size == 8 ? 64 : size * 4) {
		if (par_rank > 1)
			continue;
		int peer = 1 - par_rank;

		/* Latency: at most about 64 MiB each way per size (at least 20
		 * round trips), so the large sizes stay short. */
		long cap = (64L << 20) / size;
		int n = iters < cap ? iters : cap > 20 ? (int)cap : (iters < 20 ? iters : 20);

		for (int it = -(warm < n ? warm : n); it < n; it++) {
			int tagit = it & 0xff;
			double t0 = MPI_Wtime();

			if (par_rank == 0) {
				fill(buf, size, size, tagit);
				CK(MPI_Send(buf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD));
				CK(MPI_Recv(rbuf, size, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
				check(rbuf, size, size, tagit + 1, "echo");
			} else {
				CK(MPI_Recv(rbuf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
				check(rbuf, size, size, tagit, "ping");
				fill(buf, size, size, tagit + 1);
				CK(MPI_Send(buf, size, MPI_BYTE, peer, 2, MPI_COMM_WORLD));
			}
			if (it >= 0)
				lat[it] = (MPI_Wtime() - t0) / 2 * 1e6;
		}
		/* Bandwidth: windows of K messages, one short answer each;
		 * at most about 256 MiB per size, at least 10 windows. */
		long rcap = (256L << 20) / ((long)window * size);
		int rounds = iters / 10 > 10 ? iters / 10 : 10;

		if (rounds > rcap)
			rounds = rcap > 10 ? (int)rcap : 10;
		double t0 = MPI_Wtime();

		for (int r = 0; r < rounds; r++) {
			if (par_rank == 0) {
				fill(buf, size, size, r & 0xff);
				for (int k = 0; k < window; k++)
					CK(MPI_Isend(buf, size, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &req[k]));
				CK(MPI_Waitall(window, req, MPI_STATUSES_IGNORE));
				CK(MPI_Recv(rbuf, 8, MPI_BYTE, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			} else {
				for (int k = 0; k < window; k++)
					CK(MPI_Irecv(rbuf + (size_t)k * (size_t)size, size, MPI_BYTE, peer, 3,
						     MPI_COMM_WORLD, &req[k]));
				CK(MPI_Waitall(window, req, MPI_STATUSES_IGNORE));
				for (int k = 0; k < window; k++)
					check(rbuf + (size_t)k * (size_t)size, size, size, r & 0xff, "stream");
				CK(MPI_Send(buf, 8, MPI_BYTE, peer, 4, MPI_COMM_WORLD));
			}
		}
		double secs = MPI_Wtime() - t0;

		if (par_rank == 0) {
			double mbps = (double)size * window * rounds / secs / 1e6;
			double p50 = par_quantile(lat, n, 0.5), p90 = par_quantile(lat, n, 0.9);

			printf("RESULT {\"prog\":\"pingpong\",\"ranks\":%d,\"size\":%d,\"iters\":%d,"
			       "\"min_us\":%.2f,\"p50_us\":%.2f,\"p90_us\":%.2f,\"mbps\":%.2f}\n",
			       par_size, size, n, lat[0], p50, p90, mbps);
			fflush(stdout);
		}
	}
	CK(MPI_Barrier(MPI_COMM_WORLD));
	if (par_rank == 0)
		printf("RESULT {\"prog\":\"pingpong\",\"ranks\":%d,\"ok\":true}\n", par_size);
	free(buf);
	free(rbuf);
	free(lat);
	free(req);
	MPI_Finalize();
	return 0;
}
