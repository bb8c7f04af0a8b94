/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fork-relay - a server that forks while it holds TCP connections, for
 * unet-run's fork relay (run/preload/forkrelay.c;
 * tests/integration/t_unet_run_fd.sh).  An ordinary program.
 *
 *   fork-relay race ADDR PORT CONNS THREADS FORKS
 *     accepts CONNS connections; THREADS threads fork FORKS times each,
 *     at once, and every child writes "fdN;" on each connection it
 *     inherited (N: that connection's descriptor) and exits.  Then
 *     prints "fds BEFORE AFTER" (descriptors open before and after the
 *     forks, once the children's relays had time to end), writes
 *     "end;" on each connection and closes them all.
 *   fork-relay twice ADDR PORT
 *     accepts one connection, forks two children that each read it for 2 s,
 *     closes its own copy; each child prints "child K: N bytes".
 *   fork-relay prefork ADDR PORT CHILDREN CONNS
 *     opens the listener, forks CHILDREN children that accept on their
 *     copy (poll, then accept on the copy made non-blocking) and echo
 *     each connection until its end (child 0, forked while the parent
 *     has one thread, does so from two threads, the second forking a
 *     child that exits at once first); once CONNS connections were
 *     served, prints "served CONNS (by child K: N, ...)" and tells the
 *     children to exit.  Exits 0 when every child exited 0 (a
 *     sanitizer's report makes it 66).
 *   fork-relay hoard ADDR PORT N
 *     opens the listener and forks one child that accepts on its copy
 *     and keeps every connection, echoing what arrives, closing one when
 *     its peer does; it prints "accepted K" at each accept and exits once
 *     it accepted N and all of them were closed.  Exits as the child did.
 *   fork-relay many ADDR PORT LISTENERS FORKS
 *     opens LISTENERS non-blocking listeners on PORT, PORT+1, ..., then
 *     forks FORKS children one after the other, each keeping its copies
 *     open until the last has looked: each child accepts once on every
 *     copy and prints "child K: carried C refused R" (C: EAGAIN, a copy
 *     the parent serves; R: EOPNOTSUPP, a copy left without a relay).
 *
 * A peer checks that a connection carries only its own N and its end.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CONNS 32

static int conns[MAX_CONNS], nconns, forks;

static int fds_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

static void say_who(void)
{
	for (int k = 0; k < nconns; k++) {
		char b[24];
		int n = snprintf(b, sizeof(b), "fd%d;", conns[k]);

		send(conns[k], b, (size_t)n, MSG_NOSIGNAL);
	}
}

static void *forker(void *arg)
{
	(void)arg;
	for (int i = 0; i < forks; i++) {
		pid_t p = fork();

		if (p == 0) {
			say_who();
			_exit(0);
		}
		if (p > 0)
			waitpid(p, NULL, 0);
	}
	return NULL;
}

/* prefork: each served connection is one byte, the child's number, on
 * served_pipe to the parent; the parent's end of stop_pipe closes when
 * the children are to exit. */
static int served_pipe = -1, stop_pipe = -1, child_no;

/* Accept on the copy l and echo each connection until its end, until
 * the parent says stop. */
static void *echo_accepts(void *arg)
{
	int l = *(int *)arg;

	for (;;) {
		struct pollfd pf[2] = { { l, POLLIN, 0 }, { stop_pipe, POLLIN, 0 } };
		char b[4096];
		ssize_t n;
		int c;

		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "child %d: poll: %s\n", child_no, strerror(errno));
			_exit(3);
		}
		if (pf[1].revents)
			return NULL;
		if (pf[0].revents != POLLIN) {
			fprintf(stderr, "child %d: poll on the listener: %#x\n", child_no,
				(unsigned)pf[0].revents);
			_exit(3);
		}
		/* Non-blocking copy: the other thread may have taken it. */
		c = accept(l, NULL, NULL);
		if (c < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				continue;
			fprintf(stderr, "child %d: accept: %s\n", child_no, strerror(errno));
			_exit(3);
		}
		while ((n = recv(c, b, sizeof(b), 0)) > 0)
			if (send(c, b, (size_t)n, MSG_NOSIGNAL) != n)
				break;
		close(c);
		if (write(served_pipe, &(char){ (char)child_no }, 1) != 1)
			_exit(4);
	}
}

/* Child 0's second thread: a fork of its own (the library's locks,
 * taken at the parent's fork by the other thread), then accepts. */
static void *fork_then_accept(void *arg)
{
	pid_t g = fork();

	if (g == 0)
		_exit(0);
	if (g < 0 || waitpid(g, NULL, 0) != g) {
		fprintf(stderr, "child 0: fork from its second thread failed\n");
		_exit(6);
	}
	return echo_accepts(arg);
}

/* The pre-fork children's life: accept until told to stop, then exit
 * as a program does (exit, not _exit: the sanitizer's checks at exit
 * run). */
static void prefork_child(int l)
{
	pthread_t t;

	if (fcntl(l, F_SETFL, O_NONBLOCK) < 0)
		_exit(5);
	/* The first child is forked before the parent has its relay
	 * thread: the sanitizer watches it whole, so its side of the
	 * hand-over runs from two threads. */
	if (child_no == 0 && pthread_create(&t, NULL, fork_then_accept, &l) != 0)
		_exit(5);
	echo_accepts(&l);
	if (child_no == 0 && pthread_join(t, NULL) != 0)
		_exit(5);
	exit(0);
}

/* Wait for the children, at most about 20 s; the number that did not
 * exit with 0. */
static int prefork_reap(const pid_t *pids, int children)
{
	int bad = 0, left = children;

	for (int tries = 0; left && tries < 200; tries++) {
		int st;
		pid_t w;

		while ((w = waitpid(-1, &st, WNOHANG)) > 0) {
			for (int k = 0; k < children; k++) {
				if (pids[k] != w)
					continue;
				left--;
				if (!WIFEXITED(st) || WEXITSTATUS(st)) {
					printf("child %d ended with status %#x\n", k, st);
					bad++;
				}
			}
		}
		if (left)
			poll(NULL, 0, 100);
	}
	if (left) {
		printf("%d children did not exit\n", left);
		for (int k = 0; k < children; k++)
			kill(pids[k], SIGKILL);
		while (wait(NULL) > 0)
			;
	}
	return bad + left;
}

static int prefork(int l, int children, int conns)
{
	pid_t pids[8];
	int served[2], stop[2], by[8] = { 0 }, got = 0;

	if (children < 1 || children > 8 || conns < 1 || pipe(served) < 0 || pipe(stop) < 0)
		return 2;
	served_pipe = served[1];
	stop_pipe = stop[0];
	for (int k = 0; k < children; k++) {
		pids[k] = fork();
		if (pids[k] < 0)
			return 1;
		if (pids[k] == 0) {
			close(served[0]);
			close(stop[1]);
			child_no = k;
			prefork_child(l);
		}
	}
	close(served[1]);
	close(stop[0]);
	printf("ready endpoint=0\n");
	while (got < conns) {
		char k;

		if (read(served[0], &k, 1) != 1)
			break; /* every child gone */
		if (k >= 0 && k < children)
			by[(int)k]++;
		got++;
	}
	printf("served %d (by child", got);
	for (int k = 0; k < children; k++)
		printf(" %d: %d%s", k, by[k], k + 1 < children ? "," : ")\n");
	close(stop[1]);
	return prefork_reap(pids, children) || got < conns;
}

#define HOARD_MAX 1000

static void hoard_child(int l, int want)
{
	static struct pollfd pf[HOARD_MAX + 1];
	int n = 1, accepted = 0;

	pf[0] = (struct pollfd){ l, POLLIN, 0 };
	while (accepted < want || n > 1) {
		if (poll(pf, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(3);
		}
		for (int i = n - 1; i > 0; i--) {
			char b[512];
			ssize_t got;

			if (!pf[i].revents)
				continue;
			got = recv(pf[i].fd, b, sizeof(b), MSG_DONTWAIT);
			if (got > 0 && send(pf[i].fd, b, (size_t)got, MSG_NOSIGNAL) == got)
				continue;
			if (got < 0 && errno == EAGAIN)
				continue;
			close(pf[i].fd); /* the peer's end (or an error) */
			pf[i] = pf[--n];
		}
		if ((pf[0].revents & POLLIN) && n <= HOARD_MAX) {
			int c = accept(l, NULL, NULL);

			if (c < 0) {
				fprintf(stderr, "hoard: accept: %s\n", strerror(errno));
				_exit(3);
			}
			pf[n++] = (struct pollfd){ c, POLLIN, 0 };
			printf("accepted %d\n", ++accepted);
		}
	}
	exit(0);
}

static int hoard(int l, int want)
{
	int st;
	pid_t p;

	if (want < 1 || want > HOARD_MAX)
		return 2;
	p = fork();
	if (p < 0)
		return 1;
	if (p == 0)
		hoard_child(l, want);
	printf("ready endpoint=0\n");
	if (waitpid(p, &st, 0) != p)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

#define MANY_MAX 512

static int many(const struct sockaddr_in *first, int listeners, int forks)
{
	static int ls[MANY_MAX];
	int go[2], one = 1;

	if (listeners < 1 || listeners > MANY_MAX || forks < 1 || forks > 16 || pipe(go) < 0)
		return 2;
	for (int i = 0; i < listeners; i++) {
		struct sockaddr_in sa = *first;
		int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

		sa.sin_port = htons((uint16_t)(ntohs(first->sin_port) + i));
		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 4)) {
			perror("fork-relay: listen");
			return 1;
		}
		ls[i] = l;
	}
	for (int k = 0; k < forks; k++) {
		int said[2];
		pid_t p;

		if (pipe(said) < 0 || (p = fork()) < 0)
			return 1;
		if (p == 0) {
			int carried = 0, refused = 0, other = 0;
			char b;

			close(go[1]);
			for (int i = 0; i < listeners; i++) {
				if (accept(ls[i], NULL, NULL) >= 0)
					other++;
				else if (errno == EAGAIN || errno == EWOULDBLOCK)
					carried++;
				else if (errno == EOPNOTSUPP)
					refused++;
				else
					other++;
			}
			printf("child %d: carried %d refused %d other %d\n", k, carried, refused,
			       other);
			close(said[1]);
			/* Hold the copies until every child has looked. */
			while (read(go[0], &b, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
		close(said[1]);
		/* This child has looked before the next fork. */
		while (read(said[0], &(char){ 0 }, 1) < 0 && errno == EINTR)
			;
		close(said[0]);
	}
	close(go[1]);
	while (wait(NULL) > 0)
		;
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int l, one = 1;

	if (argc < 4 || inet_pton(AF_INET, argv[2], &sa.sin_addr) != 1) {
		fprintf(stderr, "usage: fork-relay race|twice|prefork|hoard|many ADDR PORT ...\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	sa.sin_port = htons((uint16_t)atoi(argv[3]));
	if (!strcmp(argv[1], "many") && argc == 6)
		return many(&sa, atoi(argv[4]), atoi(argv[5]));
	l = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* hoard's clients connect all at once: a backlog that holds them
	 * (past it their handshakes would be dropped, not relayed). */
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(l, strcmp(argv[1], "hoard") ? 64 : 512)) {
		perror("fork-relay: listen");
		return 1;
	}
	if (!strcmp(argv[1], "prefork") && argc == 6)
		return prefork(l, atoi(argv[4]), atoi(argv[5]));
	if (!strcmp(argv[1], "hoard") && argc == 5)
		return hoard(l, atoi(argv[4]));
	printf("ready endpoint=0\n");
	if (!strcmp(argv[1], "race") && argc == 7) {
		int nt = atoi(argv[5]), before, after = 0;
		pthread_t t[8];

		nconns = atoi(argv[4]);
		forks = atoi(argv[6]);
		if (nconns < 1 || nconns > MAX_CONNS || nt < 1 || nt > 8)
			return 2;
		for (int i = 0; i < nconns; i++)
			if ((conns[i] = accept(l, NULL, NULL)) < 0)
				return 1;
		before = fds_open();
		for (int i = 0; i < nt; i++)
			pthread_create(&t[i], NULL, forker, NULL);
		for (int i = 0; i < nt; i++)
			pthread_join(t[i], NULL);
		for (int i = 0; i < 100 && (after = fds_open()) > before; i++)
			usleep(50000); /* the relays end as they see their children's ends */
		printf("fds %d %d\n", before, after);
		for (int i = 0; i < nconns; i++) {
			send(conns[i], "end;", 4, MSG_NOSIGNAL);
			close(conns[i]);
		}
		sleep(1);
		return 0;
	}
	if (!strcmp(argv[1], "twice") && argc == 4) {
		int c = accept(l, NULL, NULL);

		for (int k = 0; k < 2; k++) {
			if (fork() == 0) {
				struct timeval tv = { 2, 0 };
				char b[64];
				ssize_t n;

				setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
				n = recv(c, b, sizeof(b), 0);
				printf("child %d: %zd bytes\n", k, n);
				_exit(0);
			}
		}
		close(c);
		printf("parent closed its copy\n");
		while (wait(NULL) > 0)
			;
		return 0;
	}
	return 2;
}
