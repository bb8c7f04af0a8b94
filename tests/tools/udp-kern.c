/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * udp-kern - the kernel side of the UDP integration tests: plain kernel
 * UDP sockets, and a raw injector of broken IPv4/UDP frames.
 *
 *   udp-kern echo  --local A:P [--timeout S]
 *       kernel UDP echo server; prints "ready", on SIGTERM/timeout prints
 *       "echo echoed=N" and exits 0.
 *   udp-kern sizes --local A:P --remote A:P [--min M] --max N [--timeout S]
 *       kernel UDP client: payloads of M (default 1)..N bytes to an echo
 *       service, each echo checked byte for byte; prints "sizes ok M..N".
 *   udp-kern inject IFACE --dst-mac MAC --local A:P --remote A:P
 *               --kind good|bad-ip-csum|bad-udp-csum|truncated|short-udp|
 *                      frag-first|frag-rest|partial|ip-options [--len N] [--count N]
 *       AF_PACKET frames from local to remote, broken as asked.  "partial"
 *       has the UDP checksum field holding only the pseudo-header sum, as
 *       a CHECKSUM_PARTIAL skb leaves it.  "ip-options" is a good datagram
 *       whose IPv4 header carries 4 bytes of options (NOP NOP NOP EOL,
 *       IHL 6): a receiver must skip them and deliver it (RFC 1122 3.2.1.8).
 *   udp-kern inject IFACE --dst-mac MAC --local SPA --remote TPA
 *               --kind arp-request|arp-reply [--sha MAC] [--src-mac MAC]
 *               [--count N] [--interval-us U]
 *       AF_PACKET ARP frames: sender protocol address SPA (--local, any
 *       port ignored), target TPA, sender hardware address --sha and
 *       Ethernet source --src-mac (both default to the interface's MAC, so
 *       either can be spoofed alone: ARP storms and poisoning attempts).
 *   --interval-us: pause between injected frames (default 200).
 *
 * The payload pattern is seq_pattern(len, j) of tool_common.h.  Exit 0 on
 * success, 1 on failure, 2 on usage errors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <unet-xdp/unet.h>
#include "tool_common.h"

static int parse_addr(const char *s, struct sockaddr_in *sa)
{
	uint32_t addr;
	uint16_t port;

	if (parse_ipv4_port(s, &addr, &port))
		return -1;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons(port);
	sa->sin_addr.s_addr = addr;
	return 0;
}

/* RFC 1071, written out here on purpose: independent of lib/inet/csum.c. */
static uint32_t sum16(const uint8_t *p, size_t n, uint32_t s)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

static int send_frames(int fd, const char *ifname, const uint8_t dmac[6], const uint8_t *f,
		       uint32_t flen, uint64_t count, uint64_t interval_us)
{
	struct sockaddr_ll sll = { 0 };

	sll.sll_family = AF_PACKET;
	sll.sll_ifindex = (int)if_nametoindex(ifname);
	sll.sll_halen = 6;
	memcpy(sll.sll_addr, dmac, 6);
	for (uint64_t i = 0; i < count; i++) {
		if (sendto(fd, f, flen, 0, (struct sockaddr *)&sll, sizeof(sll)) != (ssize_t)flen) {
			if (errno == ENOBUFS) { /* the qdisc is full: wait, send again */
				usleep(1000);
				i--;
				continue;
			}
			return perror("sendto"), 1;
		}
		if (interval_us)
			usleep((useconds_t)interval_us);
	}
	return 0;
}

/* ARP (RFC 826) from spa to tpa: op 1 request, 2 reply. */
static int do_inject_arp(const char *ifname, const char *dmac_s, const char *sha_s,
			 const char *smac_s, struct sockaddr_in *l, struct sockaddr_in *r,
			 uint16_t op, uint64_t count, uint64_t interval_us)
{
	uint8_t f[60] = { 0 }, dmac[6], sha[6], smac[6], *a = f + 14;
	struct ifreq ifr = { 0 };
	int fd, rc;

	if (unet_parse_mac(dmac_s, dmac) || (sha_s && unet_parse_mac(sha_s, sha)) ||
	    (smac_s && unet_parse_mac(smac_s, smac)))
		return 2;
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0)
		return perror("socket(AF_PACKET)"), 1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0)
		return perror("SIOCGIFHWADDR"), 1;
	if (!sha_s)
		memcpy(sha, ifr.ifr_hwaddr.sa_data, 6);
	if (!smac_s)
		memcpy(smac, ifr.ifr_hwaddr.sa_data, 6);
	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	f[12] = 0x08;
	f[13] = 0x06;
	a[1] = 1;		/* htype Ethernet */
	a[2] = 0x08;		/* ptype IPv4 */
	a[4] = 6;
	a[5] = 4;
	a[7] = (uint8_t)op;
	memcpy(a + 8, sha, 6);
	memcpy(a + 14, &l->sin_addr, 4);
	if (op == 2)
		memcpy(a + 18, dmac, 6);
	memcpy(a + 24, &r->sin_addr, 4);
	rc = send_frames(fd, ifname, dmac, f, sizeof(f), count, interval_us);
	close(fd);
	if (!rc)
		printf("inject arp-%s sent=%llu\n", op == 1 ? "request" : "reply",
		       (unsigned long long)count);
	return rc;
}

static int do_inject(const char *ifname, const char *dmac_s, struct sockaddr_in *l,
		     struct sockaddr_in *r, const char *kind, uint32_t len, uint64_t count,
		     uint64_t interval_us)
{
	bool opts = !strcmp(kind, "ip-options");
	uint32_t ihl = opts ? 24 : 20; /* IP header bytes */
	uint8_t f[2048] = { 0 }, dmac[6], *ip = f + 14, *udp = ip + ihl;
	struct ifreq ifr = { 0 };
	uint32_t flen, ulen = 8 + len, tot = ihl + ulen, s;
	int fd;

	/* Up to 1476: 4 bytes past what MTU 1500 carries, in the 18 a
	 * link takes past its MTU (veth does), for the over-long test. */
	if (unet_parse_mac(dmac_s, dmac) || len > 1476)
		return 2;
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0)
		return perror("socket(AF_PACKET)"), 1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0)
		return perror("SIOCGIFHWADDR"), 1;
	memcpy(f, dmac, 6);
	memcpy(f + 6, ifr.ifr_hwaddr.sa_data, 6);
	f[12] = 0x08;
	f[13] = 0x00;
	ip[0] = (uint8_t)(0x40 | ihl / 4);
	if (opts) {
		ip[20] = ip[21] = ip[22] = 1; /* NOP */
		ip[23] = 0;		      /* end of options */
	}
	ip[2] = (uint8_t)(tot >> 8);
	ip[3] = (uint8_t)tot;
	ip[4] = 0x12;
	ip[5] = 0x34;
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, &l->sin_addr, 4);
	memcpy(ip + 16, &r->sin_addr, 4);
	if (!strcmp(kind, "frag-first"))
		ip[6] = 0x20; /* MF */
	if (!strcmp(kind, "frag-rest"))
		ip[7] = 0xb9; /* offset 185 * 8 = 1480 */
	memcpy(udp, &l->sin_port, 2);
	memcpy(udp + 2, &r->sin_port, 2);
	udp[4] = (uint8_t)(ulen >> 8);
	udp[5] = (uint8_t)ulen;
	for (uint32_t j = 0; j < len; j++)
		udp[8 + j] = seq_pattern(len, j);
	/* pseudo-header + UDP */
	s = sum16(ip + 12, 8, 0) + 17 + ulen;
	if (!strcmp(kind, "partial")) {
		uint16_t p = fold(s);

		udp[6] = (uint8_t)(p >> 8);
		udp[7] = (uint8_t)p;
	} else {
		uint16_t c = (uint16_t)~fold(sum16(udp, ulen, s));

		if (!c)
			c = 0xffff;
		if (!strcmp(kind, "bad-udp-csum"))
			c ^= 0x0101;
		udp[6] = (uint8_t)(c >> 8);
		udp[7] = (uint8_t)c;
	}
	{
		uint16_t c = (uint16_t)~fold(sum16(ip, ihl, 0));

		if (!strcmp(kind, "bad-ip-csum"))
			c ^= 0x0101;
		ip[10] = (uint8_t)(c >> 8);
		ip[11] = (uint8_t)c;
	}
	flen = 14 + tot;
	if (!strcmp(kind, "truncated"))
		flen = 14 + tot - (len > 4 ? len / 2 : 1); /* IP says more than there is */
	else if (!strcmp(kind, "short-udp"))
		flen = 14 + ihl + 6; /* ends inside the UDP header */
	else if (flen < 60)
		flen = 60;
	if (strcmp(kind, "good") && strcmp(kind, "bad-ip-csum") && strcmp(kind, "bad-udp-csum") &&
	    strcmp(kind, "truncated") && strcmp(kind, "short-udp") && strcmp(kind, "frag-first") &&
	    strcmp(kind, "frag-rest") && strcmp(kind, "partial") && !opts)
		return fprintf(stderr, "udp-kern: unknown --kind %s\n", kind), 2;
	if (send_frames(fd, ifname, dmac, f, flen, count, interval_us))
		return 1;
	close(fd);
	printf("inject %s sent=%llu\n", kind, (unsigned long long)count);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "local", 1, 0, 'l' }, { "remote", 1, 0, 'r' }, { "max", 1, 0, 'm' },
		{ "timeout", 1, 0, 't' }, { "dst-mac", 1, 0, 'd' }, { "kind", 1, 0, 'k' },
		{ "len", 1, 0, 'L' }, { "count", 1, 0, 'c' }, { "sha", 1, 0, 's' },
		{ "src-mac", 1, 0, 'S' }, { "interval-us", 1, 0, 'i' }, { "min", 1, 0, 'M' },
		{ 0, 0, 0, 0 },
	};
	struct sockaddr_in l = { 0 }, r = { 0 };
	const char *mode, *ifname = NULL, *dmac = NULL, *kind = "good", *sha = NULL, *smac = NULL;
	uint64_t min = 1, max = 0, timeout = 30, len = 32, count = 1, interval_us = 200;
	bool have_l = false, have_r = false;
	int c, fd;

	if (argc < 2)
		goto usage;
	mode = argv[1];
	optind = 2;
	if (!strcmp(mode, "inject")) {
		if (argc < 3)
			goto usage;
		ifname = argv[2];
		optind = 3;
	}
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'l': have_l = !parse_addr(optarg, &l); if (!have_l) goto usage; break;
		case 'r': have_r = !parse_addr(optarg, &r); if (!have_r) goto usage; break;
		case 'm': if (parse_u64(optarg, 65507, &max)) goto usage; break;
		case 'M': if (parse_u64(optarg, 65507, &min) || !min) goto usage; break;
		case 't': if (parse_u64(optarg, 3600, &timeout)) goto usage; break;
		case 'd': dmac = optarg; break;
		case 'k': kind = optarg; break;
		case 'L': if (parse_u64(optarg, 1476, &len)) goto usage; break;
		case 'c': if (parse_u64(optarg, 100000, &count)) goto usage; break;
		case 's': sha = optarg; break;
		case 'S': smac = optarg; break;
		case 'i': if (parse_u64(optarg, 1000000, &interval_us)) goto usage; break;
		default: goto usage;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "inject")) {
		if (!dmac || !have_l || !have_r)
			goto usage;
		if (!strcmp(kind, "arp-request") || !strcmp(kind, "arp-reply"))
			return do_inject_arp(ifname, dmac, sha, smac, &l, &r,
					     !strcmp(kind, "arp-request") ? 1 : 2, count, interval_us);
		return do_inject(ifname, dmac, &l, &r, kind, (uint32_t)len, count, interval_us);
	}
	if (!have_l)
		goto usage;
	catch_stop_signals();
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&l, sizeof(l)))
		return perror("udp-kern: socket/bind"), 1;

	double deadline = now_s() + (double)timeout;
	static uint8_t buf[65536], msg[65536];

	if (!strcmp(mode, "echo")) {
		uint64_t echoed = 0;

		printf("ready kernel\n");
		while (!stop_flag && now_s() < deadline) {
			struct pollfd p = { .fd = fd, .events = POLLIN };
			struct sockaddr_in from;
			socklen_t fl = sizeof(from);
			ssize_t n;

			if (poll(&p, 1, 50) <= 0)
				continue;
			n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
			if (n < 0)
				continue;
			if (sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, fl) == n)
				echoed++;
		}
		printf("echo echoed=%llu\n", (unsigned long long)echoed);
		return 0;
	}
	if (strcmp(mode, "sizes") || !have_r || !max)
		goto usage;
	if (connect(fd, (struct sockaddr *)&r, sizeof(r)))
		return perror("udp-kern: connect"), 1;
	for (uint32_t size = (uint32_t)min; size <= max && !stop_flag; size++) {
		bool ok = false;

		for (uint32_t j = 0; j < size; j++)
			msg[j] = seq_pattern(size, j);
		for (int attempt = 0; attempt < 3 && !ok; attempt++) {
			double until = now_s() + 1.0;

			if (send(fd, msg, size, 0) != (ssize_t)size) {
				perror("udp-kern: send");
				usleep(10000);
				continue;
			}
			while (!ok && now_s() < until) {
				struct pollfd p = { .fd = fd, .events = POLLIN };
				ssize_t n;

				if (poll(&p, 1, 20) <= 0)
					continue;
				n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
				if (n == (ssize_t)size && !memcmp(buf, msg, size))
					ok = true;
				else if (n >= 0)
					fprintf(stderr, "udp-kern: size %u: unexpected %zd bytes\n", size, n);
			}
		}
		if (!ok || now_s() > deadline) {
			printf("sizes failed at %u\n", size);
			return 1;
		}
	}
	printf("sizes ok %llu..%llu\n", (unsigned long long)min, (unsigned long long)max);
	return 0;
usage:
	fprintf(stderr, "usage: udp-kern echo|sizes --local A:P [--remote A:P] [--min M] [--max N] [--timeout S]\n"
			"       udp-kern inject IFACE --dst-mac MAC --local A:P --remote A:P --kind K [--len N] [--count N]\n"
			"               [--interval-us U] [--sha MAC] [--src-mac MAC] (kind arp-request|arp-reply)\n");
	return 2;
}
