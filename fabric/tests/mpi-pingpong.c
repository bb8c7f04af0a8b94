/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi-pingpong - the smallest MPI program that proves Open MPI runs over
 * the `unet` provider: 2 ranks, ping-pong at 0 B .. 256 KiB with contents
 * checked, MPI_Ssend, MPI_Iprobe/MPI_Improbe/MPI_Mrecv, a cancelled
 * receive, MPI_Allreduce.  Prints the 8-byte round trip p50 (rank 0) and
 * "mpi-pingpong ok rank R" from each rank.
 *
 *   mpirun -np 2 ... mpi-pingpong [ITERS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;

static void die(const char *what)
{
	printf("mpi-pingpong: FAIL rank %d: %s\n", rank, what);
	fflush(stdout);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

static void fill(unsigned char *b, int n, int seed)
{
	for (int i = 0; i < n; i++)
		b[i] = (unsigned char)(seed * 13 + i * 5);
}

static void check(const unsigned char *b, int n, int seed)
{
	for (int i = 0; i < n; i++)
		if (b[i] != (unsigned char)(seed * 13 + i * 5))
			die("payload mismatch");
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const int sizes[] = { 0, 8, 48, 49, 1000, 4096, 65536, 262144 };
	int iters = argc > 1 ? atoi(argv[1]) : 100, size, other;
	unsigned char *s, *r;
	double *rtt;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2)
		die("needs exactly 2 ranks");
	other = 1 - rank;
	s = malloc(262144);
	r = malloc(262144);
	rtt = malloc(sizeof(double) * (size_t)iters);
	if (!s || !r || !rtt || iters < 1)
		die("setup");

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		int n = sizes[k], it = n > 4096 ? 5 : iters;
		for (int i = 0; i < it; i++) {
			double t0 = MPI_Wtime();
			if (rank == 0) {
				fill(s, n, i);
				MPI_Send(s, n, MPI_BYTE, other, (int)k, MPI_COMM_WORLD);
				MPI_Recv(r, n, MPI_BYTE, other, (int)k, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				check(r, n, i + 1);
			} else {
				MPI_Recv(r, n, MPI_BYTE, other, (int)k, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				check(r, n, i);
				fill(s, n, i + 1);
				MPI_Send(s, n, MPI_BYTE, other, (int)k, MPI_COMM_WORLD);
			}
			if (n == 8)
				rtt[i] = MPI_Wtime() - t0;
		}
	}
	/* synchronous send (its ack is a 0-byte fi_tsendmsg), probes, matched receive */
	if (rank == 0) {
		int v = 4242;
		MPI_Ssend(&v, 1, MPI_INT, other, 77, MPI_COMM_WORLD);
		MPI_Send(&v, 1, MPI_INT, other, 78, MPI_COMM_WORLD);
	} else {
		int v = 0, flag = 0, count = 0;
		MPI_Status st;
		MPI_Message msg;
		MPI_Recv(&v, 1, MPI_INT, other, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (v != 4242)
			die("ssend value");
		while (!flag)
			MPI_Iprobe(other, 78, MPI_COMM_WORLD, &flag, &st);
		MPI_Get_count(&st, MPI_INT, &count);
		if (count != 1 || st.MPI_SOURCE != other)
			die("iprobe status");
		flag = 0;
		while (!flag)
			MPI_Improbe(other, 78, MPI_COMM_WORLD, &flag, &msg, &st);
		v = 0;
		MPI_Mrecv(&v, 1, MPI_INT, &msg, MPI_STATUS_IGNORE);
		if (v != 4242)
			die("mrecv value");
		/* a receive nobody sends to, cancelled */
		MPI_Request rq;
		int cancelled = 0;
		MPI_Irecv(&v, 1, MPI_INT, other, 999, MPI_COMM_WORLD, &rq);
		MPI_Cancel(&rq);
		MPI_Wait(&rq, &st);
		MPI_Test_cancelled(&st, &cancelled);
		if (!cancelled)
			die("receive not cancelled");
	}
	int one = rank + 1, sum = 0;
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (sum != 3)
		die("allreduce");
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		qsort(rtt, (size_t)iters, sizeof(double), cmp);
		printf("mpi-pingpong 8-byte round trip p50 %.1f us (%d iterations)\n",
		       rtt[iters / 2] * 1e6, iters);
	}
	printf("mpi-pingpong ok rank %d\n", rank);
	fflush(stdout);
	free(s);
	free(r);
	free(rtt);
	MPI_Finalize();
	return 0;
}
