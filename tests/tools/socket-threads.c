/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socket-threads - plain BSD sockets from several threads at once, the
 * way a threaded server uses them, for running under unet-run (built with
 * ThreadSanitizer by make tsan, with the preload library, so that a data
 * race in the library's shared state is reported):
 *
 *   - NCONN threads, each with its own TCP connection to an echo server,
 *     send pattern bytes and check every byte that comes back;
 *   - one thread sends datagrams on a UDP socket and a second thread
 *     waits for the echoes in epoll_wait and epoll_pwait2 in turn
 *     (edge-triggered) and reads them;
 *   - one thread opens, binds and closes UDP sockets in a loop, so that
 *     the descriptor table changes while the others look up theirs;
 *   - one thread calls what does not change a socket (getsockname,
 *     getpeername, getsockopt, ioctl FIONREAD, fcntl F_GETFL and
 *     F_DUPFD, dup, poll, select, epoll_ctl into an epoll of its own,
 *     setsockopt of the 30 s timeouts every socket here has) on the
 *     descriptor the churning thread has just opened, while it closes
 *     it: a library that looks at a socket another thread frees under
 *     it is caught by AddressSanitizer.  Only with "probe": it races
 *     on descriptor numbers by design, which ThreadSanitizer reports as
 *     the program's own race.
 *
 *   socket-threads ADDR TCP_PORT UDP_PORT [NCONN [probe]]
 *
 * Prints "ok udp N of 500" and exits 0 when every TCP byte came back as
 * sent and the datagrams in order, at least 9 in 10 of them.
 * Every loop is bounded: 256 KiB per connection, 500 datagrams, 200
 * socket cycles, and a 30 s time limit on every wait.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define STREAM_BYTES (256u << 10)
#define DGRAMS 500
#define CYCLES 200
#define MAX_CONN 8

static struct sockaddr_in tcp_peer, udp_peer;
static atomic_int failures;

static void failf(const char *what)
{
	fprintf(stderr, "socket-threads: %s: %s\n", what, strerror(errno));
	atomic_fetch_add(&failures, 1);
}

static void timeouts(int fd)
{
	struct timeval tv = { .tv_sec = 30 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static unsigned char pattern(unsigned int id, size_t off)
{
	return (unsigned char)((off * 7 + id * 31) % 251);
}

static void *tcp_worker(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg;
	unsigned char out[8192], in[8192];
	size_t sent = 0, got = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0 || connect(fd, (struct sockaddr *)&tcp_peer, sizeof(tcp_peer))) {
		failf("tcp connect");
		goto out;
	}
	timeouts(fd);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	while (got < STREAM_BYTES) {
		/* At most one chunk in flight: the echo's window never fills. */
		if (sent < STREAM_BYTES && sent == got) {
			size_t n = STREAM_BYTES - sent < sizeof(out) ? STREAM_BYTES - sent : sizeof(out);

			for (size_t i = 0; i < n; i++)
				out[i] = pattern(id, sent + i);
			if (send(fd, out, n, MSG_NOSIGNAL) != (ssize_t)n) {
				failf("tcp send");
				goto out;
			}
			sent += n;
		}
		ssize_t r = recv(fd, in, sizeof(in), 0);

		if (r <= 0) {
			failf(r ? "tcp recv" : "tcp recv: end of stream early");
			goto out;
		}
		for (ssize_t i = 0; i < r; i++)
			if (in[i] != pattern(id, got + (size_t)i)) {
				errno = EILSEQ;
				failf("tcp echo differs");
				goto out;
			}
		got += (size_t)r;
	}
out:
	if (fd >= 0)
		close(fd);
	return NULL;
}

static int udp_fd;

static atomic_int writer_done;
static int udp_got;

/* UDP may lose a datagram (a frame that finds no free buffer while the
 * TCP threads hold many is dropped, as the kernel drops one for a full
 * socket buffer): the echoes must come whole and in order, with at most
 * a few gaps; the threads' sharing of the library is what is tested. */
static void *udp_reader(void *arg)
{
	int ep = epoll_create1(0), next = 0;
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.fd = udp_fd };

	(void)arg;
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, udp_fd, &ev)) {
		failf("epoll");
		return NULL;
	}
	while (next < DGRAMS) {
		/* 30 s for the first echoes; 2 s once the writer is done.
		 * epoll_wait and epoll_pwait2 in turn: both must see the
		 * U-Net socket (the kernel's epoll set does not hold it). */
		int ms = atomic_load(&writer_done) ? 2000 : 30000;
		struct timespec ts = { .tv_sec = ms / 1000 };
		int n = (udp_got & 1) ? epoll_pwait2(ep, &ev, 1, &ts, NULL) : epoll_wait(ep, &ev, 1, ms);

		if (n < 0) {
			failf("epoll_wait");
			break;
		}
		if (n == 0) {
			if (!atomic_load(&writer_done))
				failf("epoll_wait: no datagram in 30 s");
			break;
		}
		for (;;) {
			char buf[64];
			ssize_t r = recv(udp_fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
			int k, len;

			if (r < 0)
				break; /* drained: wait for the next edge */
			buf[r] = 0;
			if (sscanf(buf, "datagram %d%n", &k, &len) != 1 || len != r || k < next ||
			    k >= DGRAMS) {
				errno = EILSEQ;
				failf("udp echo out of order or malformed");
				close(ep);
				return NULL;
			}
			next = k + 1;
			udp_got++;
		}
	}
	close(ep);
	if (udp_got < DGRAMS * 9 / 10) {
		fprintf(stderr, "socket-threads: only %d of %d datagrams echoed\n", udp_got, DGRAMS);
		atomic_fetch_add(&failures, 1);
	}
	return NULL;
}

static void *udp_writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < DGRAMS; i++) {
		char buf[64];
		int len = snprintf(buf, sizeof(buf), "datagram %d", i);

		if (send(udp_fd, buf, (size_t)len, 0) != len) {
			failf("udp send");
			return NULL;
		}
		/* Paced: the echo and our queue never overflow. */
		usleep(200);
	}
	atomic_store(&writer_done, 1);
	return NULL;
}

/* The churning thread's newest descriptor (-1 before the first), and
 * whether it is done. */
static atomic_int churn_fd = -1;
static atomic_bool churn_done;
static atomic_int probes;
static bool probe_on;       /* "probe" given: a prober thread runs */
static atomic_bool probing; /* it runs: the churn may start */

static void *churn(void *arg)
{
	struct sockaddr_in a = *(struct sockaddr_in *)arg;

	a.sin_port = 0;
	while (probe_on && !atomic_load(&probing))
		; /* never long: the prober's first step is to say it runs */
	for (int i = 0; i < CYCLES; i++) {
		int fd = socket(AF_INET, SOCK_DGRAM, 0);

		atomic_store(&churn_fd, fd);
		if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a))) {
			failf("churn socket");
			if (fd >= 0)
				close(fd);
			break;
		}
		close(fd);
	}
	atomic_store(&churn_done, true);
	return NULL;
}

/* Calls that leave a socket as it was, on whatever the churning thread's
 * descriptor is at the moment (it may be closed, or reused by another
 * thread's socket): their results are not the point, memory safety is.
 * Bounded by the churn's end and a count. */
static void *prober(void *arg)
{
	int ep = epoll_create1(0);

	(void)arg;
	atomic_store(&probing, true);
	if (ep < 0) {
		failf("prober epoll_create1");
		return NULL;
	}
	while (!atomic_load(&churn_done) && atomic_load(&probes) < 20000) {
		int fd = atomic_load(&churn_fd), v, d;
		struct sockaddr_in sa;
		socklen_t len = sizeof(sa);
		struct timeval tv = { .tv_sec = 30 };
		struct epoll_event ev = { .events = EPOLLIN };
		struct pollfd p = { .fd = fd, .events = POLLIN };
		fd_set set;

		if (fd < 0)
			continue;
		atomic_fetch_add(&probes, 1);
		getsockname(fd, (struct sockaddr *)&sa, &len);
		len = sizeof(sa);
		getpeername(fd, (struct sockaddr *)&sa, &len);
		len = sizeof(v);
		getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len);
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		ioctl(fd, FIONREAD, &v);
		fcntl(fd, F_GETFL);
		if ((d = fcntl(fd, F_DUPFD_CLOEXEC, 0)) >= 0)
			close(d);
		if ((d = dup(fd)) >= 0)
			close(d);
		poll(&p, 1, 0);
		if (fd < FD_SETSIZE) {
			struct timeval zero = { 0 };

			FD_ZERO(&set);
			FD_SET(fd, &set);
			select(fd + 1, &set, NULL, NULL, &zero);
		}
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0)
			epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
	}
	close(ep);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[MAX_CONN + 4];
	struct sockaddr_in local = { .sin_family = AF_INET };
	unsigned int nconn = argc > 4 ? (unsigned int)atoi(argv[4]) : 4, nt = 0;
	bool probe = probe_on = argc > 5 && !strcmp(argv[5], "probe");

	if (argc < 4 || nconn < 1 || nconn > MAX_CONN || (argc > 5 && !probe)) {
		fprintf(stderr, "usage: socket-threads ADDR TCP_PORT UDP_PORT [NCONN 1..%d [probe]]\n",
			MAX_CONN);
		return 2;
	}
	tcp_peer.sin_family = udp_peer.sin_family = AF_INET;
	if (inet_pton(AF_INET, argv[1], &tcp_peer.sin_addr) != 1) {
		fprintf(stderr, "socket-threads: bad address %s\n", argv[1]);
		return 2;
	}
	udp_peer.sin_addr = tcp_peer.sin_addr;
	tcp_peer.sin_port = htons((uint16_t)atoi(argv[2]));
	udp_peer.sin_port = htons((uint16_t)atoi(argv[3]));
	udp_fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (udp_fd < 0 || connect(udp_fd, (struct sockaddr *)&udp_peer, sizeof(udp_peer))) {
		failf("udp connect");
		return 1;
	}
	{
		socklen_t len = sizeof(local);

		getsockname(udp_fd, (struct sockaddr *)&local, &len);
	}
	pthread_create(&t[nt++], NULL, udp_reader, NULL);
	pthread_create(&t[nt++], NULL, udp_writer, NULL);
	pthread_create(&t[nt++], NULL, churn, &local);
	if (probe)
		pthread_create(&t[nt++], NULL, prober, NULL);
	for (unsigned int i = 0; i < nconn; i++)
		pthread_create(&t[nt++], NULL, tcp_worker, (void *)(uintptr_t)i);
	for (unsigned int i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
	close(udp_fd);
	if (atomic_load(&failures))
		return 1;
	printf("ok udp %d of %d\n", udp_got, DGRAMS);
	if (probe)
		printf("probes %d\n", atomic_load(&probes));
	return 0;
}
