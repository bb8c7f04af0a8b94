/* SPDX-License-Identifier: BSD-2-Clause */
/* objects.h - the endpoint and channel objects, shared by
 * endpoint.c, channel.c, datapath.c and layer.c.  Never installed. */
#ifndef UNET_OBJECTS_H
#define UNET_OBJECTS_H

#include <xdp/xsk.h>

#include "core/layer.h"
#include "core/pieces.h"

/*
 * Frames start 2 bytes into their buffer (sent ones) or 2 bytes after the
 * kernel's headroom (received ones: UMEM frame_headroom), so that the
 * payload after the 22 bytes of Ethernet + U-Net header starts 8-byte
 * aligned and applications can lay structures over it (the NET_IP_ALIGN
 * trick).  A VLAN tag shifts received payloads by 4.
 */
#define UNET_ALIGN_PAD 2
/*
 * Where a send buffer's payload starts, from the buffer's offset: fixed,
 * because the application writes the payload before it says which
 * channel the buffer goes on.  Room for the longest headers, a routable
 * channel's over IPv6 (Ethernet + IPv6 + UDP + U-Net,
 * UNET_UDP6_PAYLOAD_OFF = 70), and still 8-byte aligned: a raw frame
 * starts 50 bytes into the buffer, a routable channel's 22 (IPv4) or 2
 * (IPv6) bytes in.
 */
#define UNET_TX_PAYLOAD 72
_Static_assert(UNET_TX_PAYLOAD >= UNET_ALIGN_PAD + UNET_UDP6_PAYLOAD_OFF &&
		       UNET_TX_PAYLOAD >= UNET_ALIGN_PAD + UNET_UDP_PAYLOAD_OFF &&
		       UNET_TX_PAYLOAD % 8 == 0,
	       "send payload offset: room for every header, 8-byte aligned");
/* The same on a segment with room for TX metadata in front of every sent
 * frame (txmd.c: 16 bytes): a routable IPv6 channel's frame 18 bytes in. */
#define UNET_TX_PAYLOAD_TXMD 88
_Static_assert(UNET_TX_PAYLOAD_TXMD >= 16 + UNET_UDP6_PAYLOAD_OFF &&
		       UNET_TX_PAYLOAD_TXMD % 8 == 0,
	       "send payload offset with TX metadata: room for it and every header");

/* One AF_XDP socket: the endpoint's view of one receive queue. */
struct unet_queue {
	struct xsk_socket *xsk;
	struct xsk_ring_cons rx;   /* receive queue */
	struct xsk_ring_prod tx;   /* send queue */
	struct xsk_ring_prod fill; /* free queue */
	struct xsk_ring_cons comp; /* send completions */
	int fd;
	uint32_t queue_id;
	uint32_t in_fill;    /* frames the kernel holds for receiving */
	uint32_t tx_pending; /* frames on TX not yet completed */
	uint32_t tx_owed;    /* frames a layer queued that no kick has covered yet */
	struct unet_rx_asm rx_asm; /* a frame arriving in pieces (pieces.c) */
};

struct unet_channel {
	struct unet_endpoint *ep;
	uint16_t tag, peer_tag;
	uint8_t peer_mac[6];
	/* A routable channel (U-Net inside UDP/IPv4 or UDP/IPv6, w.v6): the
	 * headers its frames carry (peer_mac is then the next hop's), and a
	 * kernel UDP socket
	 * bound to its source address and port for the channel's life, so
	 * that no other local process can send from them (chan_udp.c). */
	bool udp;
	struct unet_wire_udp w;
	uint16_t peer_port; /* the peer's UDP source port, checked on receive */
	uint16_t max_payload; /* a routable channel's bound from unetd; 0: none */
	/* The next hop, followed as the kernel's routes and neighbours change
	 * (unet_channel_hop_refresh, from the send path): via (w.dst_mac is
	 * its MAC), the MTU on the way, when to ask the kernel again. */
	uint8_t via[16]; /* network order; IPv4: bytes 0..3 */
	uint32_t hop_mtu;
	uint64_t hop_next_ns;
	int hop_err; /* the last lookup's, logged once per change */
	int port_fd;
	uint32_t txq; /* index into ep->q[] */
	unet_recv_handler handler;
	void *handler_ctx;
	void *ctx;
	bool closed;		   /* closed inside a handler: freed after the batch */
	struct unet_channel *next; /* endpoint's list (or its closed list) */
};

/* A routable channel's next hop is asked of the kernel again at most
 * once a second, sooner (every 100 ms) while a lookup fails or the new
 * next hop's MAC is being resolved.  Only sends ask: nothing a peer sends
 * makes us ask the kernel. */
#define UNET_CHAN_HOP_TTL_NS 1000000000ull
#define UNET_CHAN_HOP_RETRY_NS 100000000ull
/* channel.c: ask the kernel for ch's next hop again (now: a monotonic
 * stamp); on failure the last one known stays. */
void unet_channel_hop_refresh(struct unet_channel *ch, uint64_t now);
/* What a routable channel takes from its peer: one send buffer, within
 * the interface's MTU, whatever our route's MTU toward the peer (the
 * peer's way here may be another). */
uint32_t unet_channel_udp_rx_max(const struct unet_channel *ch);

struct unet_endpoint {
	struct unet_iface *iface;
	uint32_t id; /* slot in unet_endpoints / unet_xsks */
	bool slot_claimed;
	uint64_t token;	       /* this incarnation's, in its slot and channels */
	uint32_t alive_map_id;
	int alive_fd;	       /* held for life: its existence says we live */
	uint8_t mac[6];
	uint32_t mtu;
	enum unet_xdp_mode mode;
	bool zerocopy, need_wakeup;
	uint32_t busy_poll_usec;

	void *segment;
	size_t segment_size;
	uint32_t frame_size, nframes, max_payload;
	uint32_t buf_payload; /* what one send buffer holds (<= max_payload without pieces) */
	uint32_t tx_payload;  /* where in a send buffer its payload starts */
	struct unet_jumbo jumbo; /* messages larger than a chunk (pieces.c) */
	uint32_t fill_target; /* frames to keep on each queue's FILL ring */
	uint32_t batch;	      /* largest ring operation at once */
	struct xsk_umem *umem;
	/* Sockets on a segment with room for TX metadata (txmd.c): their
	 * ring mappings, the room in front of each sent frame (0: none), and
	 * whether UDP asks the device for its checksums. */
	struct unet_txmd_maps *txmd;
	uint32_t txmd_len;
	bool tx_csum;
	struct unet_pool pool;

	struct unet_queue q[UNET_MAX_QUEUES]; /* q[0..nqueues) */
	uint32_t nqueues;
	uint32_t queue_mask; /* bit q: q[] has a socket on device queue q */
	uint32_t rx_next; /* queue to look at first, for fairness */
	int epoll_fd;

	struct unet_channel **by_tag; /* UNET_MAX_CHANNELS entries */
	struct unet_channel *channels;
	struct unet_channel *closed;  /* closed during dispatch, not freed yet */
	bool dispatching;	      /* handlers are running */
	unet_recv_handler handler;
	void *handler_ctx;
	int dead; /* 0, or -ENETDOWN once the link is found gone or down */

	uint16_t chan_port; /* routable channels' UDP port (host order), once one is open */

	uint64_t rx_msgs, tx_msgs, rx_unknown_channel, rx_no_handler, rx_malformed;
	uint64_t rx_bad_pieces, rx_no_jumbo_slot;

	/* Adaptive wait (wait.c): spin budget per wait, and what waits did. */
	uint32_t spin_us;
	uint64_t wait_waits, wait_spin_hits, wait_sleeps, wait_spin_ns;

	/* Served by unetd (remote.c): an emulated endpoint has no iface, no
	 * slot and no sockets; q[0]'s rings live in the shared region and
	 * q[0].fd is the daemon's notify eventfd. */
	bool emulated;
	bool inet_pieces;  /* emulated: unetd takes IPv4 frames in pieces too */
	bool closing;	   /* being destroyed: the daemon frees its channels */
	bool fd_mode;	   /* the application polls unet_endpoint__fd */
	int daemon_fd;	   /* the connection the endpoint lives by */
	int kick_fd;
	uint32_t remote_ep;
	struct unetd_region *region;
	size_t region_size;
	void *ring_map[4];	/* a direct grant's rings, mapped from its socket */
	size_t ring_map_len[4];
	int ifindex;
	enum unet_endpoint_kind kind;
	char kind_reason[64];

	/* Layers above the core attached to this endpoint (layer.h). */
	struct {
		const struct unet_layer *layer;
		void *state;
	} layers[UNET_MAX_LAYERS];
	unsigned int nlayers;
};

/* endpoint.c */
/* Duplicates (close-on-exec) of the AF_XDP sockets ep holds, its queues'
 * and its UMEM's, into fds (room for UNET_MAX_QUEUES + 1); returns how
 * many.  Held past unet_endpoint__destroy, they make its close of those
 * sockets not the last one: the last close (xsk_release: unbinding from
 * the device queue, synchronize_net) is then the holder's, when and on
 * whatever thread it likes (unetd's teardown thread). */
unsigned int unet_endpoint_dup_sockets(const struct unet_endpoint *ep, int *fds);

/* datapath.c */
/* The endpoint's epoll set over its sockets, made on first use; returns
 * its fd or -errno. */
int unet_endpoint_epoll(struct unet_endpoint *ep);
/* Put free frames on every queue's FILL ring up to fill_target. */
void unet_refill(struct unet_endpoint *ep);

/* tx_ring.c */
/* Remember that the link is gone (err from a socket call). */
void unet_endpoint_set_dead(struct unet_endpoint *ep, int err);
/* Probe the link (a zero-length send); returns ep->dead (0 while alive). */
int unet_probe_link(struct unet_endpoint *ep);
/* Have the kernel send what is on q's TX ring (repeats until it is empty
 * in copy mode; pays what layers owed). */
void unet_tx_kick(struct unet_endpoint *ep, struct unet_queue *q);
/* This thread holds its layers' kicks (layer.h, unet_layer_hold_kicks). */
extern __thread bool unet_kicks_held;
/* Reserve one TX descriptor on q (reaping completions once if full).
 * Returns 0 with *idx, or -EAGAIN. */
int unet_tx_reserve(struct unet_endpoint *ep, struct unet_queue *q, uint32_t *idx);
/* Hand reserved descriptor idx on q (the frame at addr, len bytes, in
 * buf, which moves from APP to TX) to the kernel, with the descriptor
 * options opts (XDP_TX_METADATA when the frame asks for a checksum). */
void unet_tx_submit(struct unet_endpoint *ep, struct unet_queue *q, uint32_t idx, uint64_t buf,
		    uint64_t addr, uint32_t len, uint32_t opts);

/* Whether a receive ring holds a message (no system call). */
bool unet_rx_ready(struct unet_endpoint *ep);

/* wait.c */
/* Built-in spin budget of a wait, us: measured, docs/performance.md
 * ("Waiting").  $UNET_SPIN_US overrides it per process. */
#define UNET_SPIN_US_DEFAULT 50u
/* The spin budget a new endpoint starts with: $UNET_SPIN_US if it is a
 * number 0..UNET_SPIN_US_MAX, else UNET_SPIN_US_DEFAULT. */
uint32_t unet_spin_default(void);
/* The spin phase of a wait: ask ready(ep) (the datapath's look at the
 * receive rings: passed in, so wait.c needs nothing of datapath.c) for up
 * to the endpoint's budget (never past timeout_ms; none if it is 0).
 * Counts the wait.  Returns true if a message came. */
bool unet_wait_spin(struct unet_endpoint *ep, int timeout_ms,
		    bool (*ready)(struct unet_endpoint *ep));

/* remote.c: endpoints served by unetd */
struct unetd_region;
/* Ask unetd for an endpoint of kind (AUTO: what the policy allows, direct
 * first).  Fills ep (an emulated one's region, or a direct grant's
 * segment, socket and rings).  Returns 0 or -errno. */
int unet_remote_create(struct unet_endpoint *ep, const char *ifname, const char *socket_path,
		       enum unet_endpoint_kind kind, uint32_t segment_size, uint32_t frame_size,
		       uint32_t ring_size);
void unet_remote_close(struct unet_endpoint *ep);
int unet_remote_channel_open(struct unet_endpoint *ep, uint16_t tag, const uint8_t peer_mac[6],
			     uint16_t peer_tag);
void unet_remote_channel_close(struct unet_endpoint *ep, uint16_t tag);
/* A routable channel from the daemon: it chooses the source address and
 * port and resolves the peer; *w and *peer_port are what the channel's
 * frames carry and what the peer's must.  Returns 0 or -errno. */
int unet_remote_channel_open_ipv4(struct unet_endpoint *ep, uint16_t tag, uint32_t peer_addr,
				  uint16_t peer_port, uint16_t peer_tag, struct unet_wire_udp *w,
				  uint16_t *peer_src_port, uint16_t *max_payload);
/* The same to an IPv6 peer (w->v6 set). */
int unet_remote_channel_open_ipv6(struct unet_endpoint *ep, uint16_t tag,
				  const uint8_t peer_addr[16], uint16_t peer_port, uint16_t peer_tag,
				  struct unet_wire_udp *w, uint16_t *peer_src_port,
				  uint16_t *max_payload);
void unet_remote_kick(struct unet_endpoint *ep);
/* Notice a daemon that went away: returns ep->dead (-ECONNRESET then). */
int unet_remote_probe(struct unet_endpoint *ep);
int unet_remote_wait(struct unet_endpoint *ep, int timeout_ms,
		     bool (*ready)(struct unet_endpoint *ep));
void unet_remote_stats(const struct unet_endpoint *ep, struct unet_endpoint_stats *st);

/* rx_frame.c: a whole frame in contiguous memory (flen bytes at frame),
 * checked and made a message: true with *desc filled but for buf. */
bool unet_take_frame(struct unet_endpoint *ep, uint8_t *frame, uint32_t flen,
		     struct unet_recv_desc *desc);
/* rx_frame.c: one descriptor from a receive ring, written by the kernel
 * or, for an emulated endpoint, by unetd (so: checked like any input).
 * True with *desc filled: the frame is the application's (RX) until
 * released.  False: not taken; a frame that was on a FILL ring is back
 * in the pool, any other left as it was. */
bool unet_take_rx(struct unet_endpoint *ep, const struct xdp_desc *xd,
		  struct unet_recv_desc *desc);

/* pieces.c */
/* Bytes of one reassembly slot for messages of max_payload bytes, a
 * multiple of frame_size. */
uint32_t unet_jumbo_slot_bytes(uint32_t max_payload, uint32_t frame_size);
/* Make the reassembly slots: nslots of slot_size bytes at segment offset
 * base (the caller's segment has room).  Returns 0 or -ENOMEM. */
int unet_jumbo_init(struct unet_jumbo *j, uint64_t base, uint32_t slot_size, uint32_t nslots);
void unet_jumbo_fini(struct unet_jumbo *j);
/* Whether buf names a reassembly slot the application holds. */
bool unet_jumbo_holds(const struct unet_jumbo *j, uint64_t buf);
/* Give a held slot back; 0 or -EINVAL. */
int unet_jumbo_put(struct unet_jumbo *j, uint64_t buf);
/* One receive descriptor of queue q's ring, in pieces or not: a frame
 * in one piece goes to unet_take_rx; a piece is copied into a slot and
 * its chunk goes back to the pool at once.  True with *desc filled when
 * a whole message is ready (desc->buf a slot, or a frame). */
bool unet_take_rx_desc(struct unet_endpoint *ep, struct unet_rx_asm *a,
		       const struct xdp_desc *xd, struct unet_recv_desc *desc);
/* Queue len bytes of data as one message on ch in several pieces (no
 * kick).  Returns 0, -EAGAIN (no buffers or ring room), -EMSGSIZE. */
int unet_send_pieces(struct unet_channel *ch, const void *data, uint32_t len);

/* channel.c */
void unet_channel_free_all(struct unet_endpoint *ep);
/* Free the channels closed while handlers ran. */
void unet_channel_free_closed(struct unet_endpoint *ep);

#endif /* UNET_OBJECTS_H */
