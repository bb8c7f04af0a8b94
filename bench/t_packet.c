/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * t_packet.c - AF_PACKET, the kernel's raw-frame path, for comparison.
 *
 * Frames: Ethernet with EtherType 0x88B6 (IEEE local experimental 2, so the
 * U-Net XDP program, which claims 0x88B5 only, passes them to the kernel),
 * then a 2-byte payload length (network order) and 2 reserved bytes, then
 * the payload.  The length is ours because a NIC may pad short frames.
 *
 * Receive, sink (rates): a TPACKET_V3 ring mapped into this process.  The
 * kernel fills variable-size frames into a block and hands the whole block
 * over when it is full or its retire timer (tp_retire_blk_tov, 1 ms,
 * rounded to a jiffy) expires; "spin" polls the status word of the current
 * block, "block" sleeps in poll().  That timer is why V3 is good at rates
 * and useless for single round trips (a lone frame waits for it), so the
 * echo and pingpong roles read with recv() instead: "spin" loops on
 * MSG_DONTWAIT, "block" sleeps in poll().
 * Send: one send() per frame on the bound socket (no TX ring).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench.h"

#define PKT_ETH_P 0x88B6
#define PKT_HDR (ETH_HLEN + 4) /* Ethernet + length + reserved */
#define PKT_BLOCK_SIZE (1u << 18)
#define PKT_BLOCK_NR 32	       /* 8 MiB of ring, like the U-Net segment */
#define PKT_FRAME_SIZE 2048    /* only a bound the kernel checks in V3 */
#define PKT_RETIRE_MS 1

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

struct bench_conn {
	int fd;
	uint8_t *ring;
	size_t ring_len;
	unsigned int blk;	      /* block we read from */
	bool blk_done;		      /* fully read: give back on the next call */
	uint32_t pkt_left;	      /* frames of blk not yet read */
	struct tpacket3_hdr *pkt;     /* next one */
	uint8_t mac[6], peer[6];
	uint8_t *txbuf;		      /* BENCH_MAX_BATCH frames */
	uint8_t *rxbuf;		      /* no ring: BENCH_MAX_BATCH frames for recv() */
};

static struct tpacket_block_desc *block(struct bench_conn *c, unsigned int i)
{
	return (struct tpacket_block_desc *)(c->ring + (size_t)i * PKT_BLOCK_SIZE);
}

static void packet_close(struct bench_conn *c)
{
	if (!c)
		return;
	if (c->ring && c->ring != MAP_FAILED)
		munmap(c->ring, c->ring_len);
	if (c->fd >= 0)
		close(c->fd);
	free(c->txbuf);
	free(c->rxbuf);
	free(c);
}

static struct bench_conn *packet_open(const struct bench_opts *o)
{
	struct tpacket_req3 req = {
		.tp_block_size = PKT_BLOCK_SIZE,
		.tp_block_nr = PKT_BLOCK_NR,
		.tp_frame_size = PKT_FRAME_SIZE,
		.tp_frame_nr = PKT_BLOCK_SIZE / PKT_FRAME_SIZE * PKT_BLOCK_NR,
		.tp_retire_blk_tov = PKT_RETIRE_MS,
	};
	int ver = TPACKET_V3, one = 1, sz = 8 << 20;
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(PKT_ETH_P) };
	struct ifreq ifr = { 0 };
	struct bench_conn *c;

	if (!o->iface || !o->have_peer) {
		fprintf(stderr, "unet-bench: packet needs --iface and --peer\n");
		return NULL;
	}
	if (strlen(o->iface) >= IFNAMSIZ) {
		fprintf(stderr, "unet-bench: interface name too long: %s\n", o->iface);
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->txbuf = calloc(BENCH_MAX_BATCH, BENCH_BUF_SIZE))) {
		fprintf(stderr, "unet-bench: out of memory\n");
		free(c);
		return NULL;
	}
	c->ring = MAP_FAILED;
	memcpy(c->peer, o->peer_mac, 6);
	c->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(PKT_ETH_P));
	if (c->fd < 0) {
		fprintf(stderr, "unet-bench: socket(AF_PACKET): %s\n", strerror(errno));
		goto fail;
	}
	strcpy(ifr.ifr_name, o->iface);
	if (ioctl(c->fd, SIOCGIFINDEX, &ifr)) {
		fprintf(stderr, "unet-bench: interface %s: %s\n", o->iface, strerror(errno));
		goto fail;
	}
	sll.sll_ifindex = ifr.ifr_ifindex;
	if (ioctl(c->fd, SIOCGIFHWADDR, &ifr)) {
		fprintf(stderr, "unet-bench: MAC of %s: %s\n", o->iface, strerror(errno));
		goto fail;
	}
	memcpy(c->mac, ifr.ifr_hwaddr.sa_data, 6);
	if (strcmp(o->role, "sink")) {
		c->rxbuf = calloc(BENCH_MAX_BATCH, BENCH_BUF_SIZE);
		if (!c->rxbuf) {
			fprintf(stderr, "unet-bench: out of memory\n");
			goto fail;
		}
	} else if (setsockopt(c->fd, SOL_PACKET, PACKET_VERSION, &ver, sizeof(ver)) ||
		   setsockopt(c->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req))) {
		fprintf(stderr, "unet-bench: TPACKET_V3 ring: %s\n", strerror(errno));
		goto fail;
	}
	/* Our own frames would otherwise be copied into the ring too (every
	 * packet socket sees outgoing frames); they are not messages. */
	setsockopt(c->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
	if (setsockopt(c->fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)))
		setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	c->ring_len = (size_t)PKT_BLOCK_SIZE * PKT_BLOCK_NR;
	if (!c->rxbuf)
		c->ring = mmap(NULL, c->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_LOCKED,
			       c->fd, 0);
	if (!c->rxbuf && c->ring == MAP_FAILED) {
		fprintf(stderr, "unet-bench: mmap of the packet ring: %s\n", strerror(errno));
		goto fail;
	}
	if (bind(c->fd, (struct sockaddr *)&sll, sizeof(sll))) {
		fprintf(stderr, "unet-bench: bind to %s: %s\n", o->iface, strerror(errno));
		goto fail;
	}
	/* Every frame's Ethernet header is the same: write it once per slot. */
	for (unsigned int k = 0; k < BENCH_MAX_BATCH; k++) {
		struct ethhdr *eth = (struct ethhdr *)(c->txbuf + (size_t)k * BENCH_BUF_SIZE);

		memcpy(eth->h_dest, c->peer, 6);
		memcpy(eth->h_source, c->mac, 6);
		eth->h_proto = htons(PKT_ETH_P);
	}
	return c;
fail:
	packet_close(c);
	return NULL;
}

static int packet_send(struct bench_conn *c, const struct bench_tx *tx, unsigned int n)
{
	unsigned int k;

	if (n > BENCH_MAX_BATCH)
		n = BENCH_MAX_BATCH;
	for (k = 0; k < n; k++) {
		uint8_t *f = c->txbuf + (size_t)k * BENCH_BUF_SIZE;
		uint16_t len = htons((uint16_t)tx[k].len);

		memcpy(f + ETH_HLEN, &len, 2);
		bench_tx_write(f + PKT_HDR, &tx[k]);
		if (send(c->fd, f, PKT_HDR + tx[k].len, 0) < 0) {
			int e = errno;

			if (e == EAGAIN || e == ENOBUFS || e == EINTR)
				break; /* device queue full: the caller retries */
			return k ? (int)k : -e;
		}
	}
	return (int)k;
}

/* Status of block i, read before anything in it (pairs with the kernel's
 * write barrier before it hands the block over). */
static uint32_t block_status(struct bench_conn *c, unsigned int i)
{
	return __atomic_load_n(&block(c, i)->hdr.bh1.block_status, __ATOMIC_ACQUIRE);
}

/* A frame of ours in buf (len bytes): its payload into *rx.  Returns
 * false for anything else. */
static bool frame_payload(const uint8_t *f, uint32_t flen, struct bench_rx *rx)
{
	uint16_t len;

	if (flen < PKT_HDR)
		return false;
	memcpy(&len, f + ETH_HLEN, 2);
	len = ntohs(len);
	if (len > flen - PKT_HDR)
		return false; /* truncated or not ours */
	*rx = (struct bench_rx){ .data = f + PKT_HDR, .len = len };
	return true;
}

/* No ring (echo, pingpong): recv() frame by frame. */
static int packet_recv_plain(struct bench_conn *c, struct bench_rx *rx, unsigned int max,
			     bool block_wait)
{
	unsigned int n = 0;

	if (max > BENCH_MAX_BATCH)
		max = BENCH_MAX_BATCH;
	while (n < max) {
		uint8_t *f = c->rxbuf + (size_t)n * BENCH_BUF_SIZE;
		ssize_t r = recv(c->fd, f, BENCH_BUF_SIZE, MSG_DONTWAIT);

		if (r < 0) {
			struct pollfd p = { .fd = c->fd, .events = POLLIN };

			if (errno != EAGAIN && errno != EINTR)
				return n ? (int)n : -errno;
			if (n || !block_wait)
				break;
			if (poll(&p, 1, BENCH_BLOCK_MS) <= 0)
				break;
			block_wait = false; /* one sleep per call */
			continue;
		}
		n += frame_payload(f, (uint32_t)r, &rx[n]);
	}
	return (int)n;
}

static int packet_recv(struct bench_conn *c, struct bench_rx *rx, unsigned int max, bool block_wait)
{
	unsigned int n = 0;
	bool waited = false;

	if (c->rxbuf)
		return packet_recv_plain(c, rx, max, block_wait);

	for (;;) {
		if (c->blk_done) {
			/* The caller is done with the previous batch: the block
			 * goes back to the kernel, after our reads of it. */
			__atomic_store_n(&block(c, c->blk)->hdr.bh1.block_status, TP_STATUS_KERNEL,
					 __ATOMIC_RELEASE);
			c->blk = (c->blk + 1) % PKT_BLOCK_NR;
			c->blk_done = false;
		}
		if (!c->pkt_left) {
			struct tpacket_block_desc *b = block(c, c->blk);

			if (!(block_status(c, c->blk) & TP_STATUS_USER)) {
				struct pollfd p = { .fd = c->fd, .events = POLLIN };

				if (n || !block_wait || waited)
					return (int)n;
				waited = true;
				if (poll(&p, 1, BENCH_BLOCK_MS) < 0 && errno != EINTR)
					return -errno;
				continue;
			}
			c->pkt_left = b->hdr.bh1.num_pkts;
			c->pkt = (struct tpacket3_hdr *)((uint8_t *)b + b->hdr.bh1.offset_to_first_pkt);
			if (!c->pkt_left) {
				c->blk_done = true;
				continue;
			}
		}
		while (c->pkt_left && n < max) {
			struct tpacket3_hdr *h = c->pkt;

			c->pkt_left--;
			c->pkt = (struct tpacket3_hdr *)((uint8_t *)h + h->tp_next_offset);
			n += frame_payload((const uint8_t *)h + h->tp_mac, h->tp_snaplen, &rx[n]);
		}
		if (!c->pkt_left)
			c->blk_done = true;
		/* The rest of a finished block must stay mapped for the caller
		 * until the next call: stop at a block boundary. */
		if (n)
			return (int)n;
	}
}

const struct bench_transport bench_packet = {
	.name = "packet",
	.open = packet_open,
	.send = packet_send,
	.recv = packet_recv,
	.close = packet_close,
};
