/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * peer.h - what the files of unet-peer share: its configuration, the
 * endpoint it holds, the helpers every mode uses and one entry point per
 * mode.  unet-peer is the test peer of the integration suite; main.c says
 * what it does, one file per mode does it:
 *
 *   common.c   logging, endpoint and channel set-up, send/receive helpers
 *   options.c  the command line
 *   echo.c sizes.c send.c recv.c hold.c stats.c   the modes
 */
#ifndef UNET_PEER_H
#define UNET_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <unet-xdp/unet.h>
#include "../tool_common.h"

#define MAX_CHANNELS 64
#define RECV_BATCH 64
#define SEQ_BYTES 8

extern const char *prog;

struct chan_spec {
	uint16_t tag, peer_tag;
	uint8_t peer_mac[6];
	int queue; /* tx queue, -1: --queue or the endpoint's first queue */
};

struct cfg {
	const char *mode;
	const char *ifname;
	struct chan_spec ch[MAX_CHANNELS];
	unsigned int nch;
	unsigned int ntags, npeers, npeer_tags;
	uint32_t peer_ip; /* --peer-ip: routable channels to this IPv4 (network order), 0: raw */
	bool peer_ip6;	  /* --peer-ip was IPv6: peer_ip is 1, the address peer_addr6 */
	uint8_t peer_addr6[16];
	enum unet_xdp_mode xdp_mode;
	double timeout;	     /* seconds */
	uint64_t count;	     /* messages (per channel for send/recv) */
	bool count_set;
	double rate;	     /* messages per second over all channels, 0: unpaced */
	int queue;	     /* tx queue for every channel, -1: default */
	uint32_t queue_mask; /* receive queues to bind, 0: all */
	int queues;	     /* expected number of queues, -1: don't check */
	uint32_t size;	     /* payload size for send */
	uint64_t seq_base;   /* send: first sequence number */
	uint32_t max_size;   /* sizes: largest size to try, 0: max_payload */
	uint32_t min_size;   /* sizes: smallest size to try, 0: 1 */
	bool no_multi_buffer; /* unet_endpoint_opts.no_multi_buffer */
	long long expect;    /* hold: exact number of messages expected, -1 any */
	uint32_t linger_ms;  /* recv: keep receiving after the last one */
	bool verbose;
	bool quiet;
};

struct peer {
	struct cfg *cfg;
	struct unet_endpoint *ep;
	struct unet_endpoint_info info;
	struct unet_channel *ch[MAX_CHANNELS];
};

/* Byte j of the message of size n (sizes mode: unet-peer sizes writes
 * it and checks the echo against it). */
static inline uint8_t size_pattern(uint32_t n, uint32_t j)
{
	return (uint8_t)((n * 29u) + (j * 13u) + (j >> 8) + 0x3cu);
}

/* common.c */
void err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sleep_s(double s);
void log_fn(enum unet_log_level level, const char *msg, void *ctx);
/* Create the endpoint and open the channels of p->cfg; print "ready ...".
 * 0, or -1 after printing why (peer_close undoes what was done). */
int peer_open(struct peer *p);
void peer_close(struct peer *p);
/* Index of ch in p->ch, -1 if it is not one of ours. */
int chan_index(const struct peer *p, const struct unet_channel *ch);
/* Take up to RECV_BATCH messages into d; with none waiting, wait for
 * something to receive (at most until deadline and 50 ms) and return 0.  Returns the count, 0, or -1 after reporting
 * the error. */
int recv_or_wait(struct peer *p, struct unet_recv_desc *d, double deadline);
/* Send with retries while the send queue is full, until deadline. */
int send_retry(struct peer *p, struct unet_channel *ch, const void *data, size_t len,
	       double deadline);
/* Reap completions for a while so queued frames leave before destroy. */
void drain_tx(struct peer *p, double max_s);
void print_ep_stats(struct peer *p, const char *who);
/* Messages the library received for channels it could not name. */
uint64_t foreign_msgs(struct peer *p);

/* options.c: fill cfg from the command line; 0, or the exit status (2). */
void usage(FILE *f);
int parse_args(int argc, char **argv, struct cfg *cfg);

/* The modes: each returns the exit status (0 success, 1 failure). */
int mode_echo(struct peer *p);
int mode_sizes(struct peer *p);
int mode_send(struct peer *p);
int mode_recv(struct peer *p);
int mode_hold(struct peer *p);
int mode_stats(struct cfg *cfg);

#endif /* UNET_PEER_H */
