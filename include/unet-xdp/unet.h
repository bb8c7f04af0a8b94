/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet.h - libunet-xdp: the U-Net user-level network interface on AF_XDP.
 *
 * Error contract, everywhere in this header:
 *   - functions returning int return >= 0 on success, a negative errno on
 *     failure;
 *   - functions returning a pointer return NULL and set errno on failure;
 *   - destructors accept NULL.
 * The library never prints and never exits: it reports through the log
 * callback set with unet_set_log_fn().
 *
 * Options structs start with a size field (set it with UNET_OPTS_INIT) so
 * they can grow without breaking binaries built against an older header.
 */
#ifndef UNET_H
#define UNET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UNET_API __attribute__((visibility("default")))

/* UNET_VERSION, UNET_VERSION_AT_LEAST(), unet_version(). */
#include <unet-xdp/version.h>

/* Declare and zero an options struct with its size field set. */
#define UNET_OPTS_INIT(type, name) \
	struct type name = { .sz = sizeof(struct type) }

/* ---- Logging ----------------------------------------------------------- */

enum unet_log_level { UNET_LOG_ERROR, UNET_LOG_WARN, UNET_LOG_INFO, UNET_LOG_DEBUG };

typedef void (*unet_log_fn)(enum unet_log_level level, const char *msg, void *ctx);

/* Route library messages to fn (NULL: discard them, the default).
 * Returns nothing. */
UNET_API void unet_set_log_fn(unet_log_fn fn, void *ctx);

/* ---- Interfaces: attaching the XDP program, the shared maps -------------- */

enum unet_xdp_mode {
	UNET_XDP_MODE_AUTO = 0, /* native if the driver has it, else skb */
	UNET_XDP_MODE_NATIVE,	/* driver (native) XDP */
	UNET_XDP_MODE_SKB,	/* generic XDP */
};

/* Where pinned state lives.  pin_root NULL means $UNET_PIN_ROOT if set,
 * else /sys/fs/bpf/unet.  Each interface gets <pin_root>/<ifname>/. */
struct unet_iface_opts {
	size_t sz;
	const char *pin_root;
};

/*
 * Load and attach the XDP program to ifname in the given mode and pin its
 * link and maps.  Attaching an interface that already has our program is
 * not an error (returns 0); stale pins of a vanished program are replaced.
 * Returns 0, or -ENODEV (no such interface), -EPERM (a bpf() call the
 * caller lacks the privilege for, or a pin directory refused as unsafe:
 * not root's, writable by group or others, a symlink), -EACCES (a pin path
 * the caller may not open: needs root), -EINVAL (a relative pin root),
 * -EMEDIUMTYPE (pin root not on a bpffs), -EBUSY (another XDP program is
 * attached), -EOPNOTSUPP (mode not supported by the driver), other -errno.
 * The log callback gets the path and the reason.
 */
UNET_API int unet_iface__attach(const char *ifname, enum unet_xdp_mode mode,
				const struct unet_iface_opts *opts);

/* Detach the program and remove the interface's pins.  Endpoints still
 * open on it stop receiving.  Returns 0, -ENOENT (not attached), -errno. */
UNET_API int unet_iface__detach(const char *ifname, const struct unet_iface_opts *opts);

struct unet_iface;

/* Open the pinned maps of an attached interface.  Returns NULL with errno
 * ENODEV, EMEDIUMTYPE, ENOENT (program not attached), EPERM, EACCES (as
 * for attach), EPROTO (a pin is a symlink or not one of the attached
 * program's maps: refused), ... */
UNET_API struct unet_iface *unet_iface__open(const char *ifname,
					     const struct unet_iface_opts *opts);
UNET_API void unet_iface__close(struct unet_iface *iface);

/* Call fn for every interface that has pins under the pin root.  Stops
 * early when fn returns non-zero and returns that value; returns 0 when
 * all were visited, or -errno. */
UNET_API int unet_iface__for_each(const struct unet_iface_opts *opts,
				  int (*fn)(const char *ifname, void *ctx), void *ctx);

/* Whether the program is attached to ifname of the caller's network
 * namespace (its link is pinned under the pin root), without opening
 * anything: 1 attached, 0 not, or -errno (-EINVAL: a bad name or a
 * relative pin root). */
UNET_API int unet_iface__attached(const char *ifname, const struct unet_iface_opts *opts);

struct unet_iface_status {
	char ifname[16];
	int ifindex;
	enum unet_xdp_mode mode; /* how the program is attached */
	uint32_t prog_id;
	uint32_t nqueues; /* receive queues U-Net serves: the device's, at most
			   * UNET_MAX_QUEUES (16) */
	uint32_t device_queues; /* receive queues of the device; frames on
				 * queues past nqueues are dropped
				 * (drop_queue_range) */
	uint32_t n_endpoints;
	uint32_t n_channels;
	bool link_alive; /* false: pins outlived the program (interface gone) */
};
/* Returns 0 or -errno. */
UNET_API int unet_iface__status(struct unet_iface *iface, struct unet_iface_status *st);

/* Interface counters of the XDP program, summed over CPUs; indexed by
 * enum unet_if_counter in bpf/unet_abi.h (UNET_STAT_*, below). */
enum {
	UNET_STAT_RX = 0,
	UNET_STAT_PASS,
	UNET_STAT_DELIVERED,
	UNET_STAT_DROP_MALFORMED,
	UNET_STAT_DROP_VERSION,
	UNET_STAT_DROP_UNKNOWN_TAG,
	UNET_STAT_DROP_WRONG_SRC,
	UNET_STAT_DROP_NO_SOCKET,
	UNET_STAT_DROP_INJECTED, /* dropped by unet_iface__set_fault's hook */
	/* UDP/IPv4 over U-Net (unet_udp.h, docs/udp.md) */
	UNET_STAT_UDP_DELIVERED,    /* datagrams redirected to their endpoint */
	UNET_STAT_ARP_DELIVERED,    /* ARP for a U-Net-owned address, to its endpoint */
	UNET_STAT_DROP_UDP_FILTER,  /* from a source the port's remote filter refuses */
	UNET_STAT_DROP_IP_FRAGMENT, /* first fragment for a U-Net port (no reassembly) */
	UNET_STAT_DROP_IP_MALFORMED, /* for a U-Net port, lengths do not add up */
	UNET_STAT_DROP_QUEUE_RANGE, /* arrived on a queue >= UNET_MAX_QUEUES (16): no socket can be there */
	UNET_STAT_TCP_DELIVERED,    /* TCP segment for a U-Net TCP port, to its endpoint */
	UNET_STAT_DROP_TCP_MALFORMED, /* for a U-Net TCP port, lengths do not add up */
	/* Routable channels (U-Net inside UDP/IPv4, docs/wire-format.md) */
	UNET_STAT_DROP_CHAN_IP,	    /* IP header: version, ihl/options, total length */
	UNET_STAT_DROP_CHAN_FRAG,   /* an IP fragment */
	UNET_STAT_DROP_CHAN_UDPLEN, /* UDP length not the IP payload's */
	UNET_STAT_DROP_CHAN_CSUM,   /* non-zero UDP checksum */
	UNET_STAT_DROP_CHAN_KIND,   /* raw frame for a routable channel, or UDP for a raw one */
	UNET_STAT_CHAN_DELIVERED,   /* routable-channel frames delivered (in delivered too) */
	/* UDP/IPv6 over U-Net (unet_udp.h, docs/udp.md); its datagrams are
	 * otherwise counted with IPv4's (udp_delivered, drop_ip_malformed, ...) */
	UNET_STAT_DROP_IP6_EXTHDR,  /* an IPv6 extension header, to a U-Net-owned address */
	UNET_STAT_ND_DELIVERED,     /* neighbour solicitation for a U-Net-owned address */
	UNET_STAT__COUNT
};
/* Fill out[UNET_STAT__COUNT]. Returns 0 or -errno. */
UNET_API int unet_iface__stats(struct unet_iface *iface, uint64_t out[UNET_STAT__COUNT]);
/* Stable snake_case name of a counter ("delivered", "drop_unknown_tag"),
 * or NULL for an index out of range. */
UNET_API const char *unet_stat_name(int idx);

/* Test hook: drop drop_ppm per million (0..1000000) of the U-Net frames
 * and TCP segments (unet_tcp.h) the XDP program would deliver on this
 * interface, counted as
 * UNET_STAT_DROP_INJECTED.  0 turns it off.  For testing reliability
 * above the raw interface (this kernel may have no tc netem).
 * Returns 0, -EINVAL (ppm > 1000000), -errno. */
UNET_API int unet_iface__set_fault(struct unet_iface *iface, uint32_t drop_ppm);

/* One channel as the interface's maps see it. */
/* How a channel's frames travel (docs/wire-format.md). */
enum unet_channel_kind {
	UNET_CHANNEL_RAW = 0, /* Ethernet, EtherType 0x88B5; peer named by MAC */
	UNET_CHANNEL_UDP4,    /* routable: inside UDP/IPv4; peer named by address
			       * and UDP source port */
	UNET_CHANNEL_UDP6,    /* routable: inside UDP/IPv6; the same */
};

struct unet_channel_entry {
	uint16_t tag;
	uint16_t peer_tag;
	uint8_t peer_mac[6];
	uint32_t endpoint; /* owning endpoint slot */
	uint32_t pid;	   /* owning process */
	bool stale;	   /* owner gone: its slot is free or another process's */
	uint64_t delivered, delivered_bytes, drop_wrong_src, drop_no_socket;
	enum unet_channel_kind kind;
	uint8_t peer_addr[16]; /* network order: UNET_CHANNEL_UDP4: IPv4 in bytes 0..3;
				* UNET_CHANNEL_UDP6: all 16 */
	uint16_t peer_port;    /* UNET_CHANNEL_UDP4/6: the peer's UDP source port */
};

/* One endpoint slot in use. */
struct unet_endpoint_entry {
	uint32_t id; /* slot */
	uint32_t pid;
	uint32_t nqueues;
	char comm[16];
	bool stale; /* owning process is gone (its alive map is freed) */
	/* The device queues it bound: bit q is queue q (nqueues bits set).
	 * 0: not known (an owner whose library does not record it yet). */
	uint32_t queue_mask;
};

/* Iterate channels / endpoints (in no particular order).  Stops when fn
 * returns non-zero and returns that value; else 0, or -errno. */
UNET_API int unet_iface__for_each_channel(struct unet_iface *iface,
					  int (*fn)(const struct unet_channel_entry *, void *ctx),
					  void *ctx);
UNET_API int unet_iface__for_each_endpoint(struct unet_iface *iface,
					   int (*fn)(const struct unet_endpoint_entry *, void *ctx),
					   void *ctx);

/* Remove endpoints whose owner died and every channel that points at a
 * missing or stale endpoint.  Returns the number of entries removed, or
 * -errno.  Endpoint creation does this by itself. */
UNET_API int unet_iface__reclaim(struct unet_iface *iface);

/* Administrative channel set-up ("the OS sets up channels"): bind tag to
 * the live endpoint slot `endpoint`, accepting frames only from
 * peer_mac/peer_tag.  The owning process finds the channel with
 * unet_channel__lookup().  Returns 0, -EADDRINUSE (tag taken by a live
 * owner), -ESRCH (no such live endpoint), -EINVAL, -errno. */
UNET_API int unet_iface__channel_add(struct unet_iface *iface, uint32_t endpoint, uint16_t tag,
				     const uint8_t peer_mac[6], uint16_t peer_tag);
/* The same for a routable channel: frames inside UDP/IPv4 to the
 * interface's channel port, accepted only from peer_addr (IPv4, network
 * order) and UDP source port peer_port (0: the port the peer's channel
 * derives, unet_chan_sport(peer_tag)).  The peer may be on the link or
 * behind routers (the kernel's route and neighbour entries).  Returns as
 * unet_iface__channel_add, or -EHOSTUNREACH (the next hop did not answer
 * ARP), -ENETUNREACH (another interface's, or a local address). */
UNET_API int unet_iface__channel_add_ipv4(struct unet_iface *iface, uint32_t endpoint,
					  uint16_t tag, uint32_t peer_addr, uint16_t peer_port,
					  uint16_t peer_tag);
/* The same inside UDP/IPv6: peer_addr is 16 bytes (network order), a
 * global address or, on the interface's own link, a link-local one.
 * Returns as unet_iface__channel_add_ipv4 (-EHOSTUNREACH: the next hop
 * did not answer neighbour solicitation; -EINVAL also for an
 * unspecified, loopback, multicast or IPv4-mapped peer). */
UNET_API int unet_iface__channel_add_ipv6(struct unet_iface *iface, uint32_t endpoint,
					  uint16_t tag, const uint8_t peer_addr[16],
					  uint16_t peer_port, uint16_t peer_tag);
/* The interface's channel port for routable channels (host order), or
 * -errno.  Set it with unet_iface__set_chan_port (0: the default,
 * UNET_CHAN_PORT_DEFAULT, 61955), normally right after attaching; every
 * host of a channel must use the same.  Returns 0 or -errno. */
UNET_API int unet_iface__chan_port(struct unet_iface *iface);
UNET_API int unet_iface__set_chan_port(struct unet_iface *iface, uint16_t port);
/* Remove a channel whatever its owner.  Returns 0, -ENOENT, -errno. */
UNET_API int unet_iface__channel_del(struct unet_iface *iface, uint16_t tag);

/* ---- Endpoints ---------------------------------------------------------- */

enum unet_copy_mode {
	UNET_COPY_AUTO = 0, /* zero-copy where the driver has it, else copy */
	UNET_COPY_FORCE,    /* always copy mode */
	UNET_ZEROCOPY_FORCE /* zero-copy or fail with -EOPNOTSUPP */
};

/* What kind of endpoint to make (U-Net's direct-access and
 * kernel-emulated endpoints; docs/unetd.md). */
enum unet_endpoint_kind {
	UNET_ENDPOINT_AUTO = 0, /* direct when this process may (root), else ask unetd */
	UNET_ENDPOINT_DIRECT,	/* AF_XDP sockets of our own on the device's queues */
	UNET_ENDPOINT_EMULATED, /* served by unetd through shared memory: for any
				 * user its policy allows; every send is checked */
};

struct unet_endpoint_opts {
	size_t sz;
	const char *pin_root;	 /* see struct unet_iface_opts */
	/* Bytes of communication segment.  Default: 8 MiB for an endpoint of
	 * the process's own; one unetd serves defaults to 2 MiB (1024-entry
	 * rings, 512 receive buffers) when emulated, 4 MiB when a direct
	 * grant.  The ring sizes below are for an endpoint of its own; unetd
	 * takes rx_size as the size of all four of its rings. */
	uint32_t segment_size;
	uint32_t frame_size;	 /* 2048 or 4096; default 2048 */
	uint32_t rx_size;	 /* receive queue (RX ring) entries; default 2048 */
	uint32_t tx_size;	 /* send queue (TX ring) entries; default 2048 */
	uint32_t fill_size;	 /* free queue (FILL ring) entries; default 2048 */
	uint32_t comp_size;	 /* completion ring entries; default 2048 */
	enum unet_xdp_mode mode; /* used when the program is not attached yet */
	enum unet_copy_mode copy;
	bool no_need_wakeup;	 /* default: use need_wakeup */
	uint32_t busy_poll_usec; /* > 0: SO_BUSY_POLL + SO_PREFER_BUSY_POLL */
	uint32_t busy_poll_budget; /* default 64 when busy polling */
	/* Bit q set: bind a socket on receive queue q.  0: every queue.
	 * The kernel allows one UMEM per queue, so two endpoints (two
	 * processes) on one interface must use disjoint queues; frames must
	 * then arrive on a queue of their channel's endpoint (flow steering
	 * on a NIC; on veth in native mode the sender's tx_queue, in skb
	 * mode not reliably: docs/platform.md). */
	uint32_t queue_mask;
	enum unet_endpoint_kind kind;
	/* unetd's socket for emulated endpoints: NULL means
	 * $UNET_DAEMON_SOCKET, else /run/unet/unetd.sock. */
	const char *daemon_socket;
	/* One chunk per message even on a jumbo MTU: no AF_XDP
	 * multi-buffer, max_payload what one send buffer holds (as on a
	 * kernel without multi-buffer).  For endpoints of the process's own
	 * only: unetd decides for the endpoints it grants or emulates. */
	bool no_multi_buffer;
	/* UDP sends compute their checksums in software even where the
	 * kernel lets the device do it (AF_XDP TX metadata, Linux 6.11+,
	 * copy mode): the default asks the device wherever it can
	 * (unet_endpoint_info.tx_csum_offload says whether it does). */
	bool no_tx_csum_offload;
};

struct unet_endpoint;
struct unet_channel;
struct unet_udp_sock;

/* Create an endpoint on ifname.  A direct one is a communication segment
 * (UMEM) and one AF_XDP socket per receive queue, registered in the
 * interface's XSKMAP (the XDP program is attached first when it is not);
 * that needs root.  An emulated one is asked of unetd, which serves it
 * from its own real endpoint through a shared region; the API is the
 * same, except that administrative channels (unet_channel__lookup) are
 * not available on it.  With kind AUTO a process that
 * cannot make a direct endpoint (not root) gets an emulated one.
 * Returns NULL with errno: EINVAL (bad option), ENODEV, EPERM, EACCES
 * (the pins, or unetd's policy, refuse this user: the log says which),
 * ECONNREFUSED/ENOENT (unetd not running), EMEDIUMTYPE, ENOSPC (all
 * endpoint slots in use), EDQUOT (unetd quota), EBUSY (a queue already has
 * another endpoint's socket), EOPNOTSUPP (zero-copy forced, not
 * available), ... */
UNET_API struct unet_endpoint *unet_endpoint__create(const char *ifname,
						     const struct unet_endpoint_opts *opts);
/* Close its channels, sockets and segment, free its slot. */
UNET_API void unet_endpoint__destroy(struct unet_endpoint *ep);

struct unet_endpoint_info {
	uint32_t id;	      /* endpoint slot on the interface */
	uint32_t nqueues;     /* sockets, one per bound receive queue */
	uint32_t queue_mask;  /* which queues: bit q for queue q */
	bool zerocopy;	      /* what the driver gave us */
	bool need_wakeup;
	enum unet_xdp_mode mode; /* how the program is attached */
	uint32_t frame_size;
	uint32_t nframes;
	uint32_t max_payload; /* largest message: MTU - 8 (up to MTU 9216); longer
			       * frames from a peer are dropped, never handed up */
	uint8_t mac[6];	      /* the interface's address */
	int ifindex;
	uint32_t rx_buffers;  /* receive buffers kept on each queue's free queue */
	enum unet_endpoint_kind kind; /* DIRECT or EMULATED: what it got */
	char kind_reason[64];	      /* and why (policy rule, privilege) */
	/* What one send buffer (buf_alloc) holds: max_payload, or less when
	 * the MTU is larger than a chunk; bigger messages (up to max_payload)
	 * go through unet_channel__send_copy, in pieces. */
	uint32_t buf_payload;
	bool multi_buffer;	      /* messages larger than a chunk (XDP_USE_SG) */
	bool tx_csum_offload;	      /* UDP checksums computed by the device or
				       * the kernel (AF_XDP TX metadata), not by us */
};
/* Returns 0 or -errno. */
UNET_API int unet_endpoint__info(const struct unet_endpoint *ep, struct unet_endpoint_info *info);

/* Socket statistics summed over the endpoint's sockets (XDP_STATISTICS)
 * and the library's own counters. */
struct unet_endpoint_stats {
	uint64_t rx_msgs, tx_msgs;
	uint64_t rx_dropped;		/* kernel: every frame the socket dropped
					 * for lack of a buffer or room (includes
					 * rx_fill_empty drops) */
	uint64_t rx_ring_full;		/* kernel: receive queue was full */
	uint64_t rx_fill_empty;		/* kernel: times the free queue was empty */
	uint64_t rx_invalid_descs, tx_invalid_descs;
	uint64_t rx_unknown_channel;	/* frames for a tag we don't own */
	uint64_t rx_no_handler;		/* dispatched with no handler set */
	uint64_t rx_malformed;		/* refused by the library: bad header, or
					 * longer than info.max_payload */
	uint64_t rx_bad_pieces;		/* frames in pieces refused: a piece outside
					 * its buffer, more than 18 pieces, longer
					 * than the largest frame, no end */
	uint64_t rx_no_jumbo_slot;	/* frames in pieces dropped: every
					 * reassembly slot held by the application */
};
/* Returns 0 or -errno. */
UNET_API int unet_endpoint__stats(struct unet_endpoint *ep, struct unet_endpoint_stats *st);

/* ---- Communication segment ------------------------------------------- */

/* A buffer is named by its offset in the segment.  UNET_NO_BUF is never a
 * valid buffer. */
#define UNET_NO_BUF UINT64_MAX

/* Base address and size of the segment. Returns NULL only for ep NULL. */
UNET_API void *unet_endpoint__segment(const struct unet_endpoint *ep, size_t *size);

/* Take a free send buffer.  Reaps send completions first if the pool is
 * empty.  Returns its offset, or UNET_NO_BUF with errno ENOBUFS. */
UNET_API uint64_t unet_endpoint__buf_alloc(struct unet_endpoint *ep);
/* Give an unsent buffer back.  Returns 0 or -EINVAL (not a buffer). */
UNET_API int unet_endpoint__buf_free(struct unet_endpoint *ep, uint64_t buf);
/* Where the message payload of buf goes (headers are written in front of
 * it by send).  At most info.buf_payload bytes, 8-byte aligned (so are
 * received payloads, unless the frame carried a VLAN tag).  NULL with
 * EINVAL for a buffer the application does not hold. */
UNET_API void *unet_endpoint__buf_payload(struct unet_endpoint *ep, uint64_t buf);

/* ---- Channels ---------------------------------------------------------- */

struct unet_channel_opts {
	size_t sz;
	int tx_queue; /* send from the socket of this queue, one the endpoint
		       * bound; 0 or negative: the endpoint's first queue */
};

/* Open a channel: frames for local_tag from peer_mac with peer_tag come
 * to this endpoint; sends go to peer_mac with peer_tag.  Returns NULL with
 * errno EADDRINUSE (tag owned by a live endpoint), EINVAL (either tag 0, a
 * tx_queue the endpoint did not bind), ENOMEM, ... */
UNET_API struct unet_channel *unet_channel__open(struct unet_endpoint *ep, uint16_t local_tag,
						 const uint8_t peer_mac[6], uint16_t peer_tag,
						 const struct unet_channel_opts *opts);
/* Open a routable channel (docs/wire-format.md): as unet_channel__open,
 * but the peer is named by IPv4 address (network order) and UDP source
 * port (0: the one the peer's channel derives) and frames travel inside
 * UDP to the interface's channel port.  The peer may be on the link or
 * behind IPv4 routers: frames go to the next hop of the kernel's route
 * (its gateway, or the peer), at the MAC of the kernel's neighbour entry
 * (resolved on request, the open waiting up to a second), both followed
 * as they change while the channel sends.  Messages are at most
 * info.max_payload - 28 bytes, less under a route MTU
 * (unet_channel__max_payload).  NULL with errno as unet_channel__open, or
 * EHOSTUNREACH (the next hop did not answer ARP), ENETUNREACH (the kernel
 * routes the peer by another interface, or it is a local or broadcast
 * address), EADDRNOTAVAIL (the interface has no IPv4 address),
 * EADDRINUSE (the channel's source port is taken on this host).  On an
 * endpoint served by unetd the daemon decides the source address, the
 * port (and holds it) and the next hop, once at open (docs/unetd.md);
 * it never waits for the next hop's MAC, the library asks it again
 * instead, for the same second; also EACCES (tag not granted), EDQUOT
 * (the user's channel quota). */
UNET_API struct unet_channel *unet_channel__open_ipv4(struct unet_endpoint *ep,
						      uint16_t local_tag, uint32_t peer_addr,
						      uint16_t peer_port, uint16_t peer_tag,
						      const struct unet_channel_opts *opts);
/* Open a routable channel inside UDP/IPv6: as unet_channel__open_ipv4,
 * but the peer is named by its IPv6 address (16 bytes, network order; a
 * link-local one is on this interface's link) and frames carry the UDP
 * checksum IPv6 requires (computed on send, verified on receive: a pass
 * over the payload each way).  The source address is the interface's
 * first of the peer's scope (link-local for a link-local peer, else
 * global); next hops come from the kernel's IPv6 routes (a gateway is
 * mostly the router's link-local address) and neighbour discovery.
 * Messages are at most info.max_payload - 48 bytes, less under a route
 * MTU.  NULL with errno as unet_channel__open_ipv4 (EHOSTUNREACH: the
 * next hop did not answer neighbour solicitation; EADDRNOTAVAIL: the
 * interface has no IPv6 address of that scope; EINVAL also for an
 * unspecified, loopback, multicast or IPv4-mapped peer).  On an
 * endpoint served by unetd the daemon decides the headers as for IPv4
 * (the source address: the kernel's choice for the peer). */
UNET_API struct unet_channel *unet_channel__open_ipv6(struct unet_endpoint *ep,
						      uint16_t local_tag,
						      const uint8_t peer_addr[16],
						      uint16_t peer_port, uint16_t peer_tag,
						      const struct unet_channel_opts *opts);
/* The largest message the channel carries (a routable channel's: within
 * its route's MTU as last asked of the kernel, at most a second ago while
 * it sends). */
UNET_API uint32_t unet_channel__max_payload(const struct unet_channel *ch);
/* Find the channel with local_tag: one this endpoint opened, or one an
 * administrator added for it (unetctl channel add).  An administrator's
 * channel becomes the endpoint's only here: until the application looks
 * it up, its messages are dropped (rx_unknown_channel), never adopted on
 * receive.  NULL with ENOENT. */
UNET_API struct unet_channel *unet_channel__lookup(struct unet_endpoint *ep, uint16_t local_tag);
/* Remove the channel from the interface and free it.  Returns nothing.
 * Safe from a handler (its own channel included): descriptors of the same
 * dispatch batch that name it are then dropped, and it is freed after the
 * batch.  Descriptors from unet_endpoint__recv that name a closed channel
 * must not be looked at through their channel pointer. */
UNET_API void unet_channel__close(struct unet_channel *ch);

UNET_API uint16_t unet_channel__tag(const struct unet_channel *ch);
/* The endpoint the channel belongs to (NULL for ch NULL). */
UNET_API struct unet_endpoint *unet_channel__endpoint(const struct unet_channel *ch);
UNET_API uint16_t unet_channel__peer_tag(const struct unet_channel *ch);
/* The application's pointer, for handlers. */
UNET_API void unet_channel__set_ctx(struct unet_channel *ch, void *ctx);
UNET_API void *unet_channel__ctx(const struct unet_channel *ch);

/* ---- Send queue --------------------------------------------------------- */

/* Send buf (from unet_endpoint__buf_alloc, payload written at
 * unet_endpoint__buf_payload) holding len bytes: no copy.  The library owns
 * buf from here and frees it when the send completes.  Returns 0, -EMSGSIZE
 * (len 0 or > max_payload; nothing queued, buf still yours), -EAGAIN (send
 * queue full; buf still yours), -ENETDOWN (the interface is gone or down:
 * nothing will leave again; buf still yours), -EINVAL. */
UNET_API int unet_channel__send(struct unet_channel *ch, uint64_t buf, uint32_t len);

/* Copy len bytes from data into a segment buffer and send it.  Returns 0,
 * -EMSGSIZE, -EAGAIN (queue full or no free buffer), -EINVAL. */
UNET_API int unet_channel__send_copy(struct unet_channel *ch, const void *data, size_t len);

struct unet_send_desc {
	struct unet_channel *channel;
	uint64_t buf;
	uint32_t len;
};
/* Send up to n buffers with one kick.  Every message is checked first: if
 * any is oversize nothing is queued and -EMSGSIZE is returned.  Returns the
 * number queued (the first k of descs; may be < n when the queue fills), or
 * -errno. */
UNET_API int unet_endpoint__send_batch(struct unet_endpoint *ep, const struct unet_send_desc *descs,
				       unsigned int n);

/* Reap send completions: their buffers go back to the pool.  Returns how
 * many were reaped. */
UNET_API int unet_endpoint__complete(struct unet_endpoint *ep);

/* Messages on the send queues not yet completed (0 for ep NULL). */
UNET_API unsigned int unet_endpoint__tx_pending(const struct unet_endpoint *ep);

/* Push everything on the send queues out and wait until it completed, at
 * most timeout_ms (-1: no limit).  In copy mode the kernel sends a bounded
 * number of frames per kick, so a sender that stops calling the library
 * must flush before it goes.  unet_endpoint__destroy flushes for up to
 * 200 ms.  Returns 0, -ETIMEDOUT with messages still queued, or
 * -ENETDOWN (the interface is gone or down: they never will leave). */
UNET_API int unet_endpoint__flush(struct unet_endpoint *ep, int timeout_ms);

/* ---- Receive queue and free queue ------------------------------------- */

struct unet_layer;

struct unet_recv_desc {
	struct unet_channel *channel;
	uint64_t buf;  /* segment offset of the frame: give back with release */
	void *data;    /* the payload */
	uint32_t len;  /* payload bytes, at most info.max_payload */
	/* A frame that a protocol layer above the core delivered through the
	 * same receive queue (UDP over U-Net: unet_udp.h) instead of a U-Net
	 * message: then channel is NULL, layer names the layer, sock is the
	 * layer's socket and src_addr / src_port the sender in that layer's
	 * terms (UDP/IPv4: address in network byte order, port in host byte
	 * order).  For U-Net messages layer and sock are NULL. */
	const struct unet_layer *layer;
	void *sock;
	uint32_t src_addr;
	uint16_t src_port;
};

/* For an application that sleeps on unet_endpoint__fd() itself: run the
 * time-driven work of the protocol layers on ep (TCP's timers and
 * retransmissions: unet_tcp.h) and return the longest it may sleep, in
 * ms, before calling this (or recv, wait, dispatch) again; -1: no limit.
 * unet_endpoint__recv, __wait and __dispatch do this on their own.
 * Returns -EINVAL for ep NULL. */
UNET_API int unet_endpoint__next_timeout(struct unet_endpoint *ep);

/* Take up to max received messages without blocking.  Returns the number
 * taken (0 if none), or -errno.  Each must be given back with
 * unet_endpoint__release once the application is done with it. */
UNET_API int unet_endpoint__recv(struct unet_endpoint *ep, struct unet_recv_desc *descs,
				 unsigned int max);
/* Give n received buffers back to the free queue.  Returns 0 or -EINVAL. */
UNET_API int unet_endpoint__release(struct unet_endpoint *ep, const struct unet_recv_desc *descs,
				    unsigned int n);

/* ---- Notification ------------------------------------------------------ */

/* A file descriptor that polls readable when messages are waiting
 * (usable with poll/epoll).  Returns the fd (owned by the endpoint), or
 * -errno.  Made on first call: an application that only spins should not
 * ask for it (it adds a wake-up to every received frame). */
UNET_API int unet_endpoint__fd(struct unet_endpoint *ep);

/* Block until a message is waiting or timeout_ms passes (-1: forever),
 * spinning first (see "Adaptive wait" below).  Returns 1 (ready), 0
 * (timeout), -ENETDOWN (the interface went away or down: a blocked wait
 * notices within a quarter of a second), -EINTR, -errno. */
UNET_API int unet_endpoint__wait(struct unet_endpoint *ep, int timeout_ms);

/*
 * Adaptive wait.  unet_endpoint__wait (and dispatch, and everything built
 * on them, UAM's waits among them) first spins, polling the receive
 * queue for up to spin_us microseconds without a system call, and only
 * then sleeps in poll(2).  A message that comes within the spin is taken
 * without paying for a sleep and a wake-up (about 100 us on small VMs);
 * an idle endpoint spins spin_us per wait, then costs no CPU.  A new
 * endpoint starts with $UNET_SPIN_US if set (0..UNET_SPIN_US_MAX), else
 * the library's default, measured (docs/performance.md, "Waiting").  0
 * turns spinning off (block at once).
 */
#define UNET_SPIN_US_MAX 1000000u
/* Set the spin budget of every later wait.  Returns 0 or -EINVAL (ep
 * NULL, us > UNET_SPIN_US_MAX). */
UNET_API int unet_endpoint__set_spin_us(struct unet_endpoint *ep, uint32_t us);

/* What the endpoint's waits did.  Set sz (UNET_OPTS_INIT) before the
 * call: the library fills what fits in it and sets sz to what it wrote. */
struct unet_wait_stats {
	size_t sz;
	uint32_t spin_us;   /* the budget in force */
	uint64_t waits;	    /* waits that found nothing ready (timeout != 0) */
	uint64_t spin_hits; /* ... of which a message came while spinning */
	uint64_t sleeps;    /* ... of which slept in poll(2) (the others
			     * spun out a timeout shorter than the budget) */
	uint64_t spin_ns;   /* time spent spinning, in all */
};
/* Returns 0 or -EINVAL (ep or st NULL, st->sz too small). */
UNET_API int unet_endpoint__wait_stats(const struct unet_endpoint *ep,
				       struct unet_wait_stats *st);

/* Upcalls: the handler runs inside unet_endpoint__dispatch, never from a
 * signal or another thread.  The descriptor is released after the handler
 * returns. A channel handler takes precedence over the endpoint's. */
typedef void (*unet_recv_handler)(struct unet_endpoint *ep, const struct unet_recv_desc *desc,
				  void *ctx);
UNET_API void unet_endpoint__set_handler(struct unet_endpoint *ep, unet_recv_handler fn, void *ctx);
UNET_API void unet_channel__set_handler(struct unet_channel *ch, unet_recv_handler fn, void *ctx);

/* Wait up to timeout_ms (0: just poll, -1: forever) for messages and run
 * their handlers, at most max of them.  Returns the number handled, or
 * -errno (-EBUSY when called from inside a handler).  Messages with no
 * handler are released unseen and counted. */
UNET_API int unet_endpoint__dispatch(struct unet_endpoint *ep, int timeout_ms, unsigned int max);

/* ---- unetd's socket (administrative: what unetctl is built on) ------- */

/* Connect to unetd at path (NULL: $UNET_DAEMON_SOCKET, else
 * /run/unet/unetd.sock) and greet it.  Returns the connection's fd (close
 * it when done), or -errno with a one-line reason in err.  *pid gets the
 * daemon's pid from the kernel (SO_PEERCRED), *version its protocol
 * version, if not NULL. */
UNET_API int unet_daemon__connect(const char *path, uint32_t *pid, uint32_t *version, char *err,
				  size_t errlen);
/* One request of unetd's protocol (type, body: lib/proto/unetd_proto.h)
 * on fd and its reply: at most cap bytes of the reply's body copied to
 * rep, its length to *len (if not NULL).  Returns 0, the daemon's
 * negative errno with its reason in err, -ECONNRESET (the daemon closed
 * the connection: it drops a client for a request it does not know),
 * -ETIMEDOUT, -EPROTO, -EINVAL. */
UNET_API int unet_daemon__call(int fd, uint16_t type, const void *body, uint32_t blen, void *rep,
			       uint32_t cap, uint32_t *len, char *err, size_t errlen);

/* ---- Helpers -------------------------------------------------------- */

/* Parse "aa:bb:cc:dd:ee:ff".  Returns 0 or -EINVAL. */
UNET_API int unet_parse_mac(const char *s, uint8_t mac[6]);
/* Format into buf of at least 18 bytes.  Returns buf. */
UNET_API char *unet_format_mac(const uint8_t mac[6], char *buf);

#ifdef __cplusplus
}
#endif
#endif /* UNET_H */
