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
 *
 * A peer checks that a connection carries only its own N and its end.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <pthread.h>
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

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int l, one = 1;

	if (argc < 4 || inet_pton(AF_INET, argv[2], &sa.sin_addr) != 1) {
		fprintf(stderr, "usage: fork-relay race|twice ADDR PORT ...\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	sa.sin_port = htons((uint16_t)atoi(argv[3]));
	l = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 64)) {
		perror("fork-relay: listen");
		return 1;
	}
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
