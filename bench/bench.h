/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench.h - unet-bench: latency and rate of U-Net against the kernel's own
 * paths (UDP sockets, sendmmsg/recvmmsg, AF_PACKET), one program for all so
 * every transport is measured by the same loop, clock and statistics.
 *
 * Each transport sits behind one small vtable (struct bench_transport):
 * open, send a batch, receive a batch (spinning or blocking), flush, close.
 * The roles in main.c (echo, pingpong, sink, source) only talk to that.
 */
#ifndef UNET_BENCH_H
#define UNET_BENCH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

#include <unet-xdp/unet.h>

#define BENCH_MAX_BATCH 256
#define BENCH_MIN_SIZE 8     /* the bench header */
#define BENCH_MAX_SIZE 1472  /* largest UDP payload at MTU 1500: every transport takes it */
/* Raw U-Net streaming (source, sink) at a jumbo MTU: up to max_payload at
 * MTU 9216, one frame in pieces (unet_channel__send_copy). */
#define BENCH_MAX_SIZE_JUMBO 9208
#define BENCH_BUF_SIZE 2048  /* receive buffer per message (udp, udp-mmsg) */
#define BENCH_BLOCK_MS 100   /* longest single sleep in a blocking receive */

/* Head of every message, in the sender's byte order (both ends run this
 * program on one machine type).  size >= 8 so it always fits. */
struct bench_hdr {
	uint32_t seq;
	uint32_t flags;
};

enum {
	BENCH_F_WARMUP = 1u << 0, /* pingpong: not measured, not counted by echo */
	BENCH_F_LAST = 1u << 1,	  /* pingpong: the echo may exit after this one */
	BENCH_F_END = 1u << 2,	  /* source -> sink: seq holds the number sent */
};

/* How a receive waits: spin (poll, never sleep), block (sleep at once),
 * adaptive (spin up to --spin-us, then sleep: unet_endpoint__set_spin_us
 * for U-Net, SO_BUSY_POLL for kernel UDP). */
enum bench_mode { BENCH_SPIN, BENCH_BLOCK, BENCH_ADAPTIVE };

/* Everything the command line can say; each transport reads its part. */
struct bench_opts {
	const char *role;
	const char *transport;
	enum bench_mode mode;
	int cpu;		 /* -1: do not pin */
	double timeout_s;
	long count;		 /* 0: not given */
	long warmup;
	long size;
	long batch;
	long idle_ms;
	long bulk_bytes;	 /* bulk role (uam): bytes per store */
	bool bulk_get;		 /* bulk role: gets from the peer's memory, not stores */
	long spin_us;		 /* adaptive mode's budget; -1: the default */
	/* unet, packet */
	const char *iface;
	uint8_t peer_mac[6];
	bool have_peer;
	uint32_t peer_ip; /* unet: routable channels to it (network order); 0: raw */
	/* unet */
	long tag, peer_tag, channels;
	long busy_poll_usec;
	uint32_t queue_mask;
	long segment_bytes, ring; /* 0: the library's defaults */
	int xdp_mode;		 /* enum unet_xdp_mode */
	/* udp, udp-mmsg */
	const char *local, *remote;
	/* echo, pingpong --vs: a second transport (unet or uam) on the same
	 * interface and peer with its own tags, interleaved with the first
	 * in blocks of vs_block round trips, so both see the same state of
	 * the host (docs/performance.md) */
	const char *vs_transport;
	long vs_tag, vs_peer_tag, vs_block;
	int tx_queue; /* unet, uam: the channels' send queue (0: the first bound) */
	bool no_tx_csum; /* unet-udp, unet-tcp: software checksums only
			  * (unet_endpoint_opts.no_tx_csum_offload) */
};

/* One message to send.  The transport writes it into its own buffer (for
 * U-Net: in place in the communication segment): a copy of data when data
 * is set (echo), else just the header; the rest of the payload is whatever
 * the buffer holds, the same for every transport. */
struct bench_tx {
	const void *data;
	uint32_t seq, flags;
	uint32_t len;
};

/* One received message; valid until the next recv or close. */
struct bench_rx {
	const void *data;
	uint32_t len;
};

struct bench_conn; /* a transport's private state */

struct bench_transport {
	const char *name;
	/* Returns a connection, or NULL after printing why on stderr. */
	struct bench_conn *(*open)(const struct bench_opts *o);
	/* Queue and send up to n messages.  Returns how many went (0 when the
	 * send queue is full for now: call again), or -errno. */
	int (*send)(struct bench_conn *c, const struct bench_tx *tx, unsigned int n);
	/* Take up to max messages.  block: sleep in the transport's wait
	 * call, at most about BENCH_BLOCK_MS; else return at once.  Gives
	 * back the previous batch first.  Returns the number taken, 0 if
	 * none, or -errno. */
	int (*recv)(struct bench_conn *c, struct bench_rx *rx, unsigned int max, bool block);
	/* Push out what is still queued (may be NULL).  Returns 0 or -errno. */
	int (*flush)(struct bench_conn *c, int timeout_ms);
	/* Bulk transfer (may be NULL): count transfers of bytes each into the
	 * peer's memory, at most depth in flight, until all completed or the
	 * deadline.  Returns the number completed, or -errno. */
	long (*bulk)(struct bench_conn *c, size_t bytes, long count, unsigned int depth,
		     uint64_t deadline);
	void (*close)(struct bench_conn *c);
};

extern const struct bench_transport bench_unet, bench_uam, bench_udp, bench_udp_mmsg, bench_packet;
/* t_unet_udp.c: UDP/IPv4 over U-Net (include/unet-xdp/unet_udp.h) */
extern const struct bench_transport bench_unet_udp;
/* t_tcp.c: kernel TCP and TCP over U-Net (unet_tcp.h), length-framed */
extern const struct bench_transport bench_tcp, bench_unet_tcp;

/* t_unet.c: an endpoint on o->iface and o->channels channels from o->tag
 * to o->peer_tag; *ch is the last one opened.  Returns 0, or -errno after
 * saying why on stderr. */
int bench_unet_setup(const struct bench_opts *o, struct unet_endpoint **ep,
		     struct unet_channel **ch);
/* The library's warnings and errors on stderr (a unet_log_fn). */
void bench_unet_log(enum unet_log_level l, const char *msg, void *ctx);

/* ---- waiting (t_unet.c) ---- */

/* Apply o->mode to a new endpoint's waits (block: spin budget 0;
 * adaptive: --spin-us, or the library's default) and remember the
 * endpoint for bench_unet_wait_stats.  Returns 0 or -errno. */
int bench_unet_wait_mode(struct unet_endpoint *ep, const struct bench_opts *o);
/* Whether the endpoint bench_unet_wait_mode last saw asks the device for
 * transmit checksums (1) or not (0); -1 before any. */
extern int bench_unet_tx_csum;
/* The wait counters of the endpoint last set up (until it is closed).
 * Returns 0, or -ENOENT for a transport without one (kernel UDP). */
int bench_unet_wait_stats(struct unet_wait_stats *st);
/* Forget the endpoint (its transport closes it). */
void bench_unet_wait_forget(struct unet_endpoint *ep);
/* SO_BUSY_POLL budget a kernel UDP socket gets in adaptive mode, us. */
#define BENCH_UDP_BUSY_POLL_US 50
/* t_udp.c: the busy-polling socket's NAPI id (0: none, so it cannot
 * busy poll), or -1 when the run's socket does not busy poll. */
long bench_udp_napi_id(void);

/* Receive batches from an endpoint's receive queue, read in place: a
 * batch goes back to the free queue on the next call. */
struct bench_unet_rx {
	struct unet_recv_desc d[BENCH_MAX_BATCH];
	unsigned int held; /* descriptors of the last batch, not yet released */
};
/* The transport recv of bench_transport for any endpoint. */
int bench_unet_recv(struct unet_endpoint *ep, struct bench_unet_rx *r, struct bench_rx *rx,
		    unsigned int max, bool block);
/* Give back what bench_unet_recv still holds. */
void bench_unet_rx_release(struct unet_endpoint *ep, struct bench_unet_rx *r);

/* Write the message in tx into dst (its len bytes). */
static inline void bench_tx_write(void *dst, const struct bench_tx *tx)
{
	if (tx->data) {
		__builtin_memcpy(dst, tx->data, tx->len);
	} else {
		struct bench_hdr h = { .seq = tx->seq, .flags = tx->flags };

		__builtin_memcpy(dst, &h, sizeof(h));
	}
}

/* Read the header of a received message (zeros if it is too short). */
static inline struct bench_hdr bench_rx_hdr(const struct bench_rx *rx)
{
	struct bench_hdr h = { 0, 0 };

	if (rx->len >= sizeof(h))
		__builtin_memcpy(&h, rx->data, sizeof(h));
	return h;
}

/* ---- logp.c: LogP parameters (Culler et al.) of one transport ---- */

struct bench_logp {
	long samples, retries; /* o_r samples kept, and re-tried (not waiting yet) */
	double rtt_us;	       /* round trip p50, spinning */
	double os_us;	       /* send overhead: a send call of one message, p50 */
	double or_us;	       /* receive overhead: a receive call with a message waiting, p50 */
	double L_us;	       /* rtt / 2 - o_s - o_r */
};
/* Measure against an echo (spinning) of the same transport: o->count
 * round trips, o->count send calls timed, o->count receive calls timed
 * with the message already there.  Returns 0 or -errno (-ETIMEDOUT). */
int bench_logp_measure(const struct bench_opts *o, const struct bench_transport *t,
		       struct bench_conn *c, uint64_t deadline, struct bench_logp *r);

/* ---- io.c: sending and waiting for an echo, bounded ---- */

/* Send all n messages, retrying while the send queue is full, until
 * deadline or *stop (stop may be NULL).  Returns how many went, or
 * -errno. */
long bench_send_all(const struct bench_transport *t, struct bench_conn *c,
		    const struct bench_tx *tx, unsigned int n, uint64_t deadline,
		    const volatile sig_atomic_t *stop);
/* Receive (blocking in the transport's recv if block) until the message
 * numbered seq comes back, until limit or *stop (stop may be NULL).
 * Returns 1, 0 (not by then), -errno. */
int bench_recv_seq(const struct bench_transport *t, struct bench_conn *c, uint32_t seq,
		   bool block, uint64_t limit, const volatile sig_atomic_t *stop);

/* ---- stats.c ---- */

uint64_t bench_now_ns(void);
/* User + system CPU time of this process, in microseconds. */
uint64_t bench_cpu_us(void);
/* Sort samples (ns) in place. */
void bench_sort_u64(uint64_t *v, size_t n);
/* Nearest-rank percentile q (0..1) of sorted samples, n > 0. */
uint64_t bench_percentile(const uint64_t *sorted, size_t n, double q);
/* Pin the calling thread to cpu.  Returns 0 or -errno. */
int bench_pin_cpu(int cpu);

#endif /* UNET_BENCH_H */
