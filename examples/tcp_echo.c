/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcp_echo - a TCP echo server and client over U-Net (unet_tcp.h).  The
 * other side can be any TCP: `nc`, a kernel socket, this program.
 *
 *   tcp_echo server IFACE ADDR PORT          echo every connection, one at a time
 *   tcp_echo client IFACE ADDR PEER PORT MSG send MSG, print the echo
 *
 * ADDR is this side's IPv4 address (the kernel's own, or one only U-Net
 * answers for); every call below blocks (timeout -1 or 5 s).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unet-xdp/unet.h>
#include <unet-xdp/unet_tcp.h>

static int server(struct unet_endpoint *ep, uint32_t addr, uint16_t port)
{
	struct unet_tcp *l = unet_tcp__listen(ep, addr, port, NULL), *c;
	char buf[4096];
	ssize_t n;

	if (!l)
		return perror("listen"), 1;
	printf("ready port=%u\n", port);
	fflush(stdout);
	while ((c = unet_tcp__accept(l, -1))) {
		while ((n = unet_tcp__recv(c, buf, sizeof(buf), -1)) > 0)
			for (ssize_t off = 0, w; off < n; off += w)
				if ((w = unet_tcp__send(c, buf + off, (size_t)(n - off), -1)) < 0)
					break;
		unet_tcp__close(c); /* n == 0: the peer closed; < 0: reset */
	}
	unet_tcp__close(l);
	return 0;
}

static int client(struct unet_endpoint *ep, uint32_t addr, uint32_t peer, uint16_t port,
		  const char *msg)
{
	struct unet_tcp *c = unet_tcp__connect(ep, addr, peer, port, NULL, 5000);
	size_t len = strlen(msg), got = 0;
	char buf[4096];
	ssize_t n;

	if (!c)
		return perror("connect"), 1;
	if (len > sizeof(buf))
		len = sizeof(buf);
	for (size_t off = 0; off < len; off += (size_t)n)
		if ((n = unet_tcp__send(c, msg + off, len - off, 5000)) < 0)
			return fprintf(stderr, "send: %s\n", strerror((int)-n)), 1;
	while (got < len && (n = unet_tcp__recv(c, buf + got, len - got, 5000)) > 0)
		got += (size_t)n;
	printf("echo: %.*s\n", (int)got, buf);
	unet_tcp__close(c);
	return got == len ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct unet_endpoint *ep;
	struct in_addr a, p;
	int rc;

	if (argc < 5 || inet_pton(AF_INET, argv[3], &a) != 1) {
		fprintf(stderr, "usage: %s server IFACE ADDR PORT\n"
				"       %s client IFACE ADDR PEER PORT MSG\n", argv[0], argv[0]);
		return 2;
	}
	ep = unet_endpoint__create(argv[2], NULL);
	if (!ep)
		return perror("unet_endpoint__create"), 1;
	if (!strcmp(argv[1], "server"))
		rc = server(ep, a.s_addr, (uint16_t)atoi(argv[4]));
	else if (argc == 7 && inet_pton(AF_INET, argv[4], &p) == 1)
		rc = client(ep, a.s_addr, p.s_addr, (uint16_t)atoi(argv[5]), argv[6]);
	else
		rc = 2;
	unet_endpoint__destroy(ep);
	return rc;
}
