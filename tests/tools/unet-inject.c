/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet-inject - send handcrafted U-Net frames on an interface through an
 * AF_PACKET socket, bypassing the library: for spoofing and robustness
 * tests of the XDP program.  Builds the 8-byte header of bpf/unet_abi.h
 * itself, so every field can be wrong on purpose.
 *
 *   unet-inject IFACE --dst-mac MAC [--src-mac MAC] [--dst-tag T]
 *               [--src-tag T] [--len N] [--hdr-len N] [--version V]
 *               [--flags F] [--ethertype E] [--count N] [--interval-us U]
 *               [--truncate BYTES] [--no-pad] [--seq-base S]
 *
 * The payload is an 8-byte big-endian sequence number (--seq-base, +1 per
 * frame) followed by the byte pattern unet-peer's recv mode checks, so a
 * well-formed injected frame is a valid message for `unet-peer recv`.
 * Frames shorter than 60 bytes are zero-padded to 60 unless --no-pad or
 * --truncate is given.  Needs CAP_NET_RAW.  Exit 0 when every frame was
 * sent, 1 on failure, 2 on a usage error.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <unet-xdp/unet.h>
#include "unet_abi.h"
#include "tool_common.h"

#define MAX_FRAME 9216
#define MAX_COUNT 1000000

static const char *prog = "unet-inject";

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s IFACE --dst-mac MAC [options]\n"
		"  --src-mac MAC      source address (default: the interface's)\n"
		"  --dst-tag T        U-Net destination tag (default 1)\n"
		"  --src-tag T        U-Net source tag (default 1)\n"
		"  --len N            payload bytes after the header (default 32)\n"
		"  --hdr-len N        value of the header's len field (default: --len)\n"
		"  --version V        header version byte (default %d)\n"
		"  --flags F          header flags byte (default 0)\n"
		"  --ethertype E      (default 0x%04x)\n"
		"  --count N          frames to send, 1..%d (default 1)\n"
		"  --interval-us U    pause between frames (default 0)\n"
		"  --truncate BYTES   cut every frame to BYTES bytes (>= 14), no padding\n"
		"  --no-pad           do not pad frames to 60 bytes\n"
		"  --seq-base S       sequence number of the first frame (default 0)\n",
		prog, UNET_WIRE_VERSION, UNET_ETH_P, MAX_COUNT);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "src-mac", required_argument, NULL, 's' },
		{ "dst-mac", required_argument, NULL, 'd' },
		{ "dst-tag", required_argument, NULL, 'T' },
		{ "src-tag", required_argument, NULL, 't' },
		{ "len", required_argument, NULL, 'l' },
		{ "hdr-len", required_argument, NULL, 'L' },
		{ "version", required_argument, NULL, 'V' },
		{ "flags", required_argument, NULL, 'f' },
		{ "ethertype", required_argument, NULL, 'e' },
		{ "count", required_argument, NULL, 'c' },
		{ "interval-us", required_argument, NULL, 'i' },
		{ "truncate", required_argument, NULL, 'x' },
		{ "no-pad", no_argument, NULL, 'n' },
		{ "seq-base", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint8_t src[6], dst[6], frame[MAX_FRAME];
	bool have_src = false, have_dst = false, no_pad = false;
	uint64_t dst_tag = 1, src_tag = 1, len = 32, hdr_len = 0, version = UNET_WIRE_VERSION;
	uint64_t flags = 0, ethertype = UNET_ETH_P, count = 1, interval = 0, trunc = 0;
	uint64_t seq_base = 0, v;
	bool hdr_len_set = false, trunc_set = false;
	const char *ifname = NULL;
	struct sockaddr_ll sll;
	struct unet_hdr *uh;
	struct ifreq ifr;
	size_t flen, wire_len = 0;
	uint64_t i;
	int c, fd, ifindex;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
		case 'd':
			if (unet_parse_mac(optarg, c == 's' ? src : dst)) {
				fprintf(stderr, "%s: bad MAC '%s'\n", prog, optarg);
				return 2;
			}
			if (c == 's')
				have_src = true;
			else
				have_dst = true;
			break;
		case 'T':
		case 't':
		case 'l':
		case 'L':
		case 'V':
		case 'f':
		case 'e':
		case 'c':
		case 'i':
		case 'x':
		case 'b': {
			uint64_t max = c == 'V' || c == 'f' ? 255
				: c == 'c' ? MAX_COUNT
				: c == 'i' ? 10000000ULL
				: c == 'b' ? UINT64_MAX
				: c == 'l' ? MAX_FRAME - UNET_PAYLOAD_OFF
				: c == 'x' ? MAX_FRAME : 65535;

			if (parse_u64(optarg, max, &v)) {
				const char *name = "?";

				for (int k = 0; opts[k].name; k++)
					if (opts[k].val == c)
						name = opts[k].name;
				fprintf(stderr, "%s: bad value '%s' for --%s (max %" PRIu64 ")\n", prog, optarg,
					name, max);
				return 2;
			}
			switch (c) {
			case 'T': dst_tag = v; break;
			case 't': src_tag = v; break;
			case 'l': len = v; break;
			case 'L': hdr_len = v; hdr_len_set = true; break;
			case 'V': version = v; break;
			case 'f': flags = v; break;
			case 'e': ethertype = v; break;
			case 'c': count = v; break;
			case 'i': interval = v; break;
			case 'x': trunc = v; trunc_set = true; break;
			case 'b': seq_base = v; break;
			}
			break;
		}
		case 'n':
			no_pad = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	ifname = argv[optind];
	if (!have_dst) {
		fprintf(stderr, "%s: --dst-mac is required\n", prog);
		return 2;
	}
	if (count == 0) {
		fprintf(stderr, "%s: --count must be at least 1\n", prog);
		return 2;
	}
	if (trunc_set && trunc < ETH_HLEN) {
		fprintf(stderr, "%s: --truncate must be at least %d\n", prog, ETH_HLEN);
		return 2;
	}
	if (strlen(ifname) >= IFNAMSIZ || !(ifindex = (int)if_nametoindex(ifname))) {
		fprintf(stderr, "%s: no such interface '%s'\n", prog, ifname);
		return 1;
	}

	fd = socket(AF_PACKET, SOCK_RAW, 0); /* protocol 0: send only */
	if (fd < 0) {
		fprintf(stderr, "%s: socket(AF_PACKET): %s\n", prog, strerror(errno));
		return 1;
	}
	if (!have_src) {
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
		if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
			fprintf(stderr, "%s: SIOCGIFHWADDR %s: %s\n", prog, ifname, strerror(errno));
			close(fd);
			return 1;
		}
		memcpy(src, ifr.ifr_hwaddr.sa_data, 6);
	}

	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_ifindex = ifindex;
	sll.sll_halen = 6;
	memcpy(sll.sll_addr, dst, 6);

	for (i = 0; i < count; i++) {
		uint64_t seq = seq_base + i, be = htobe64(seq);
		uint8_t *pl = frame + UNET_PAYLOAD_OFF;
		uint32_t j;
		ssize_t n;

		memset(frame, 0, sizeof(frame));
		memcpy(frame, dst, 6);
		memcpy(frame + 6, src, 6);
		frame[12] = (uint8_t)(ethertype >> 8);
		frame[13] = (uint8_t)ethertype;
		uh = (struct unet_hdr *)(frame + UNET_ETH_HLEN);
		uh->version = (uint8_t)version;
		uh->flags = (uint8_t)flags;
		uh->dst_tag = htons((uint16_t)dst_tag);
		uh->src_tag = htons((uint16_t)src_tag);
		uh->len = htons((uint16_t)(hdr_len_set ? hdr_len : len));
		for (j = 0; j < len; j++)
			pl[j] = j < 8 ? ((const uint8_t *)&be)[j] : seq_pattern(seq, j);

		flen = UNET_PAYLOAD_OFF + len;
		wire_len = flen;
		if (trunc_set)
			wire_len = trunc < flen ? trunc : flen;
		else if (!no_pad && wire_len < 60)
			wire_len = 60; /* zeros: the frame was cleared */

		n = sendto(fd, frame, wire_len, 0, (struct sockaddr *)&sll, sizeof(sll));
		if (n < 0) {
			fprintf(stderr, "%s: sendto %s (frame %" PRIu64 ", %zu bytes): %s\n", prog, ifname, i,
				wire_len, strerror(errno));
			close(fd);
			return 1;
		}
		if ((size_t)n != wire_len) {
			fprintf(stderr, "%s: short send: %zd of %zu bytes\n", prog, n, wire_len);
			close(fd);
			return 1;
		}
		if (interval && i + 1 < count) {
			struct timespec ts = { .tv_sec = (time_t)(interval / 1000000),
					       .tv_nsec = (long)(interval % 1000000) * 1000 };
			nanosleep(&ts, NULL);
		}
	}
	close(fd);
	printf("inject sent=%" PRIu64 " bytes=%zu\n", count, wire_len);
	return 0;
}
