/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socket-signals - what a signal handler does to a blocking socket call,
 * checked against the kernel's rules (signal(7)), for unet-run's test
 * (tests/integration/t_unet_run_signals.sh).  An ordinary program: run
 * it under unet-run and on the kernel's sockets, it must print the same.
 *
 *   socket-signals CASE PEER-IP PORT
 *
 * PEER-IP:PORT is a UDP echo (and, for tcp-*, a TCP echo on PORT).  A
 * second thread sends SIGUSR1 to the main thread while the main thread
 * is blocked in recv, then (for the restart cases) sends the datagram
 * that ends the wait.
 *
 *   udp-restart  SA_RESTART: recv goes on and returns the echo
 *   udp-intr     no SA_RESTART: recv fails with EINTR; the echo, sent
 *                after, is received by the next recv (nothing lost)
 *   udp-timeo    SA_RESTART but SO_RCVTIMEO set: EINTR
 *   tcp-restart  SA_RESTART, a TCP recv: goes on, returns the echo
 *   poll-intr    SA_RESTART: poll fails with EINTR all the same
 *   reenter      a handler that sends on the socket the main thread is
 *                sending on, 300 times while it sends 3000 datagrams:
 *                every one leaves whole (the echo's count is checked by
 *                the caller); prints the handler's count
 *
 * Prints "ok CASE ..." and exits 0, or a reason and exits 1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static pthread_t main_thread;
static volatile sig_atomic_t handled;
static int sock = -1;
static struct sockaddr_in peer;
static const char *mode;
static int hsock = -1, hep = -1; /* the handler's socket and epoll set */

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void on_usr1(int sig)
{
	int saved = errno;

	(void)sig;
	handled++;
	if (strcmp(mode, "reenter") == 0) {
		char m[32];
		int n = snprintf(m, sizeof(m), "h%05d", (int)handled);

		/* The main thread may be inside sendto on this very socket. */
		if (sendto(sock, m, (size_t)n, 0, (struct sockaddr *)&peer, sizeof(peer)) != n)
			handled += 100000; /* reported as a failed send */
	}
	if (strcmp(mode, "reenter-epoll") == 0) {
		struct epoll_event ev = { .events = EPOLLIN };

		/* The main thread may be inside epoll_ctl, on the library's
		 * registrations. */
		if (epoll_ctl(hep, EPOLL_CTL_ADD, hsock, &ev) < 0 ||
		    epoll_ctl(hep, EPOLL_CTL_DEL, hsock, NULL) < 0)
			handled += 100000;
	}
	errno = saved;
}

static void *poker(void *arg)
{
	(void)arg;
	if (strncmp(mode, "reenter", 7) == 0) {
		/* While the main thread works: a signal every 200 us or so. */
		for (int i = 0; i < 300; i++) {
			pthread_kill(main_thread, SIGUSR1);
			usleep(200);
		}
		return NULL;
	}
	sleep_ms(300); /* the main thread is blocked by now */
	pthread_kill(main_thread, SIGUSR1);
	sleep_ms(300);
	if (strcmp(mode, "udp-intr") != 0 && strcmp(mode, "udp-timeo") != 0 &&
	    strcmp(mode, "poll-intr") != 0) {
		/* The echo ends a wait that went on. */
		if (strncmp(mode, "tcp", 3) == 0)
			send(sock, "ping", 4, 0);
		else
			sendto(sock, "ping", 4, 0, (struct sockaddr *)&peer, sizeof(peer));
	}
	return NULL;
}

static int fail(const char *what)
{
	printf("FAIL %s: %s (errno %d, handled %d)\n", mode, what, errno, (int)handled);
	return 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	pthread_t t;
	char buf[64];
	ssize_t n;

	if (argc != 4) {
		fprintf(stderr, "usage: socket-signals CASE PEER-IP PORT\n");
		return 2;
	}
	mode = argv[1];
	memset(&peer, 0, sizeof(peer));
	peer.sin_family = AF_INET;
	peer.sin_port = htons((uint16_t)atoi(argv[3]));
	if (inet_pton(AF_INET, argv[2], &peer.sin_addr) != 1)
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = strcmp(mode, "udp-intr") == 0 ? 0 : SA_RESTART;
	if (sigaction(SIGUSR1, &sa, NULL) < 0)
		return fail("sigaction");
	{
		/* sigaction answers what the program set, not the library's. */
		struct sigaction back;

		if (sigaction(SIGUSR1, NULL, &back) < 0 || back.sa_handler != on_usr1 ||
		    (back.sa_flags & SA_RESTART) != (sa.sa_flags & SA_RESTART))
			return fail("sigaction does not give back the handler set");
	}
	main_thread = pthread_self();
	if (strncmp(mode, "tcp", 3) == 0) {
		sock = socket(AF_INET, SOCK_STREAM, 0);
		if (sock < 0 || connect(sock, (struct sockaddr *)&peer, sizeof(peer)) < 0)
			return fail("connect");
	} else {
		struct sockaddr_in any = { .sin_family = AF_INET };

		sock = socket(AF_INET, SOCK_DGRAM, 0);
		if (sock < 0 || bind(sock, (struct sockaddr *)&any, sizeof(any)) < 0)
			return fail("bind");
	}
	if (strcmp(mode, "udp-timeo") == 0) {
		struct timeval tv = { 5, 0 };

		if (setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
			return fail("SO_RCVTIMEO");
	}
	if (strcmp(mode, "reenter-epoll") == 0) {
		struct sockaddr_in any = { .sin_family = AF_INET };

		hsock = socket(AF_INET, SOCK_DGRAM, 0);
		hep = epoll_create1(0);
		if (hsock < 0 || hep < 0 || bind(hsock, (struct sockaddr *)&any, sizeof(any)) < 0)
			return fail("the handler's socket");
	}
	if (pthread_create(&t, NULL, poker, NULL))
		return fail("pthread_create");
	if (strcmp(mode, "reenter-epoll") == 0) {
		int ep = epoll_create1(0);
		struct epoll_event ev = { .events = EPOLLIN };

		for (int i = 0; i < 20000; i++)
			if (epoll_ctl(ep, EPOLL_CTL_ADD, sock, &ev) < 0 ||
			    epoll_ctl(ep, EPOLL_CTL_DEL, sock, NULL) < 0)
				return fail("epoll_ctl");
		pthread_join(t, NULL);
		if (handled >= 100000)
			return fail("a handler's epoll_ctl failed");
		printf("ok reenter-epoll handled %d\n", (int)handled);
		return 0;
	}

	if (strcmp(mode, "reenter") == 0) {
		int sent = 0;

		for (int i = 0; i < 3000; i++) {
			int k = snprintf(buf, sizeof(buf), "m%05d", i);

			n = sendto(sock, buf, (size_t)k, 0, (struct sockaddr *)&peer, sizeof(peer));
			if (n == k)
				sent++;
			else if (!(n < 0 && (errno == EAGAIN || errno == ENOBUFS)))
				return fail("sendto");
			if (i % 8 == 7)
				usleep(50); /* the echo keeps up */
		}
		pthread_join(t, NULL);
		if (handled >= 100000)
			return fail("a handler's sendto failed");
		printf("ok reenter sent %d handled %d\n", sent, (int)handled);
		return 0;
	}
	if (strcmp(mode, "poll-intr") == 0) {
		struct pollfd p = { .fd = sock, .events = POLLIN };
		int r = poll(&p, 1, 10000);

		if (r != -1 || errno != EINTR)
			return fail("poll did not fail with EINTR");
		pthread_join(t, NULL);
		printf("ok poll-intr handled %d\n", (int)handled);
		return 0;
	}

	n = recv(sock, buf, sizeof(buf), 0);
	if (strcmp(mode, "udp-intr") == 0 || strcmp(mode, "udp-timeo") == 0) {
		if (n != -1 || errno != EINTR)
			return fail("recv did not fail with EINTR");
		if (handled != 1)
			return fail("the handler did not run once");
		pthread_join(t, NULL);
		/* Nothing was lost: the socket still works. */
		if (sendto(sock, "pong", 4, 0, (struct sockaddr *)&peer, sizeof(peer)) != 4)
			return fail("sendto after EINTR");
		{
			struct timeval tv = { 5, 0 };

			setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		}
		n = recv(sock, buf, sizeof(buf), 0);
		if (n != 4 || memcmp(buf, "pong", 4) != 0)
			return fail("no echo after EINTR");
		printf("ok %s eintr then echo\n", mode);
		return 0;
	}
	if (n != 4 || memcmp(buf, "ping", 4) != 0)
		return fail("recv did not go on to the echo");
	if (handled != 1)
		return fail("the handler did not run once");
	pthread_join(t, NULL);
	printf("ok %s restarted\n", mode);
	return 0;
}
