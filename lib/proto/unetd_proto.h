/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unetd_proto.h - what unetd and its clients (libunet-xdp) agree on: the
 * requests on the daemon's Unix socket, and the layout of the shared
 * region of an emulated endpoint.  A leaf: fixed-width types only, no
 * other project header, so the library's core and the daemon can both
 * include it.  docs/unetd.md describes the protocol in words.
 *
 * The socket is SOCK_SEQPACKET: one request or reply per packet, never
 * split or merged.  Every request starts with struct unetd_req_hdr, every
 * reply with struct unetd_rep_hdr; all fields in host byte order (the
 * socket is local).  The daemon identifies a client only by the kernel's
 * SO_PEERCRED of its connection, never by anything in a request.  Every
 * reserved and pad field, and every byte after an interface name's NUL,
 * must be zero: the daemon refuses a request with one set (EINVAL).  A
 * client's endpoints, channels and tags live as long as its connection:
 * when the socket closes (the process exits, however it exits), the
 * daemon frees them.
 */
#ifndef UNETD_PROTO_H
#define UNETD_PROTO_H

#include <stdint.h>

#define UNETD_PROTO_VERSION 1
#define UNETD_DEFAULT_SOCKET "/run/unet/unetd.sock"
#define UNETD_SOCKET_ENV "UNET_DAEMON_SOCKET"
#define UNETD_MAX_MSG 4096 /* largest request or reply, headers included */

enum unetd_req_type {
	UNETD_REQ_HELLO = 1,	 /* body: struct unetd_hello */
	UNETD_REQ_EP_CREATE,	 /* body: struct unetd_ep_create; reply fds: region, kick, notify */
	UNETD_REQ_EP_DESTROY,	 /* body: struct unetd_ep_ref */
	UNETD_REQ_CH_OPEN,	 /* body: struct unetd_ch_open */
	UNETD_REQ_CH_CLOSE,	 /* body: struct unetd_ch_ref */
	UNETD_REQ_STATUS,	 /* no body; reply: struct unetd_status + entries */
	UNETD_REQ_WHOAMI,	 /* body: struct unetd_whoami; reply: struct unetd_whoami_rep */
	UNETD_REQ_UDP_OPEN,	 /* body: struct unetd_udp_open; reply: struct unetd_udp_opened,
				  * fd: the interface's neighbour map, read-only */
	UNETD_REQ_UDP_CLOSE,	 /* body: struct unetd_udp_close */
	UNETD_REQ_TCP_OPEN,	 /* body: struct unetd_tcp_open; reply: struct unetd_tcp_opened,
				  * fd: the interface's neighbour map, read-only */
	UNETD_REQ_TCP_CLOSE,	 /* body: struct unetd_tcp_close */
	UNETD_REQ_CH_OPEN_IPV4,	 /* body: struct unetd_ch_open_ipv4; reply:
				  * struct unetd_ch_opened_ipv4 (closed by CH_CLOSE);
				  * EAGAIN: the next hop is being resolved, ask again */
	UNETD_REQ_UDP_OPEN_GROUP, /* body, reply, fd: as UDP_OPEN; the port is a
				   * SO_REUSEPORT group's (join or make it) */
	UNETD_REQ_CH_OPEN_IPV6,	 /* body: struct unetd_ch_open_ipv6; reply:
				  * struct unetd_ch_opened_ipv6 (closed by CH_CLOSE) */
	UNETD_REQ__COUNT
};

struct unetd_req_hdr {
	uint16_t version; /* UNETD_PROTO_VERSION */
	uint16_t type;	  /* enum unetd_req_type */
	uint32_t len;	  /* bytes of body after this header */
	uint32_t seq;	  /* echoed in the reply */
	uint32_t reserved; /* 0 */
};

struct unetd_rep_hdr {
	uint16_t version;
	uint16_t type; /* the request's */
	uint32_t len;  /* bytes of body after this header */
	uint32_t seq;  /* the request's */
	int32_t err;   /* 0 or a negative errno */
	char msg[96];  /* on error: why, for the client's log (NUL-terminated) */
};

struct unetd_hello {
	uint32_t version; /* the client's UNETD_PROTO_VERSION */
	uint32_t reserved;
};

/* Endpoint kinds (also enum unet_endpoint_kind in unet.h). */
enum unetd_kind {
	UNETD_KIND_AUTO = 0,
	UNETD_KIND_DIRECT = 1,	 /* real AF_XDP sockets granted to the client: made,
				  * registered and bound by the daemon on a queue
				  * set aside for grants, then passed (SCM_RIGHTS) */
	UNETD_KIND_EMULATED = 2, /* shared region served by the daemon */
};

struct unetd_ep_create {
	char ifname[16];
	uint32_t kind;	       /* enum unetd_kind the client asks for */
	uint32_t segment_size; /* 0: default */
	uint32_t frame_size;   /* 2048 or 4096; 0: 2048 */
	uint32_t ring_size;    /* entries of each ring, a power of two; 0: default */
};

struct unetd_ep_created {
	uint32_t ep;	       /* the daemon's handle for it */
	uint32_t kind;	       /* what the client got */
	uint32_t region_size;  /* bytes of the region fd (sealed memfd) */
	uint32_t mtu;
	uint32_t max_payload;
	uint32_t frame_size;
	uint32_t nframes;
	int32_t ifindex;
	uint8_t mac[6];	       /* the interface's */
	uint8_t pad[2];
	char reason[64];       /* why this kind (policy, driver, ...) */
	/* Direct grants only (reply fds: the UMEM memfd, the bound AF_XDP
	 * socket): the socket's queue, its rings' size (all four), the
	 * UMEM's frame headroom, the endpoint slot, zero-copy or not. */
	uint32_t queue;
	uint32_t ring_size;
	uint32_t headroom;
	uint32_t slot;
	uint32_t zerocopy;
	uint32_t flags;	       /* UNETD_EP_*; 0 from a daemon that predates them */
};

/* unetd_ep_created.flags: frames larger than one chunk come and go in
 * pieces (AF_XDP multi-buffer, XDP_PKT_CONTD on every descriptor but a
 * frame's last).  A direct grant: the socket is bound with XDP_USE_SG.
 * An emulated endpoint: the daemon delivers such frames as chains on rx
 * and takes chains on tx, up to max_payload (docs/unetd.md). */
#define UNETD_EP_MULTI_BUFFER 1u
/* An emulated endpoint with UNETD_EP_MULTI_BUFFER: the daemon takes
 * IPv4 UDP and TCP frames in pieces too (checked as a whole, as single
 * ones), so the client's UDP and TCP follow the MTU.  Without it (a
 * daemon that predates it) only U-Net messages travel in pieces. */
#define UNETD_EP_INET_PIECES 2u

struct unetd_ep_ref {
	uint32_t ep;
	uint32_t reserved;
};

struct unetd_ch_open {
	uint32_t ep;
	uint16_t tag;
	uint16_t peer_tag;
	uint8_t peer_mac[6];
	uint8_t pad[2];
};

struct unetd_ch_ref {
	uint32_t ep;
	uint16_t tag;
	uint16_t pad;
};

/*
 * A routable channel (U-Net inside UDP/IPv4, docs/wire-format.md) on an
 * endpoint from unetd.  The client names only its tag and its peer; the
 * daemon decides the rest, in the device's namespace: the source address
 * (the interface's), the source port (derived from the tags as for any
 * channel, and held by a kernel socket of the daemon's for the channel's
 * life), the peer's next hop (the kernel's neighbour table) and port.
 * The reply is what the client's frames must carry; an emulated
 * endpoint's are checked against it field by field.  Added after version
 * 1 without a bump, as WHOAMI: a daemon that predates it drops the client
 * (an unknown request type).
 */
struct unetd_ch_open_ipv4 {
	uint32_t ep;
	uint32_t peer_addr; /* network order */
	uint16_t tag;
	uint16_t peer_tag;
	uint16_t peer_port; /* host order; 0: the one the peer's channel derives */
	uint16_t pad;
};

struct unetd_ch_opened_ipv4 {
	uint32_t saddr;	    /* network order: the interface's address */
	uint32_t daddr;	    /* network order: the peer's */
	uint16_t sport;	    /* host order: the channel's source port (the daemon holds it) */
	uint16_t dport;	    /* host order: the interface's channel port */
	uint16_t peer_port; /* host order: the peer's source port, checked on receive */
	uint8_t dst_mac[6]; /* the next hop's */
	uint8_t src_mac[6]; /* the interface's */
	uint16_t max_payload; /* the largest message the daemon sends on it for an
			       * emulated endpoint; 0: the endpoint's own bound */
};

/*
 * The same over IPv6 (U-Net inside UDP/IPv6).  The source address is the
 * kernel's choice among the interface's addresses for the peer (as its
 * sockets would send from: RTA_PREFSRC of the route, of the peer's
 * scope), never the client's.  Added after version 1 without a bump, as
 * CH_OPEN_IPV4.
 */
struct unetd_ch_open_ipv6 {
	uint32_t ep;
	uint8_t peer_addr[16]; /* network order */
	uint16_t tag;
	uint16_t peer_tag;
	uint16_t peer_port; /* host order; 0: the one the peer's channel derives */
	uint16_t pad;
};

struct unetd_ch_opened_ipv6 {
	uint8_t saddr[16];    /* network order: the interface's address for the peer */
	uint8_t daddr[16];    /* network order: the peer's */
	uint16_t sport;	      /* host order: the channel's source port (the daemon holds it) */
	uint16_t dport;	      /* host order: the interface's channel port */
	uint16_t peer_port;   /* host order: the peer's source port, checked on receive */
	uint8_t dst_mac[6];   /* the next hop's */
	uint8_t src_mac[6];   /* the interface's */
	uint16_t max_payload; /* as in struct unetd_ch_opened_ipv4 */
};

/* ---- The region of an emulated endpoint ------------------------------ */

/*
 * One sealed memfd (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL, made and
 * sized by the daemon), mapped shared by both sides:
 *
 *   [ struct unetd_region | 4 rings | segment ]
 *
 * The rings have the layout of AF_XDP's (a u32 producer and a u32
 * consumer, each on its own cache line, a u32 flags word, then the
 * descriptors), so the library runs them with libxdp's inline ring
 * functions exactly as it runs a socket's:
 *   fill  client -> daemon  u64 buffer offsets the daemon may fill
 *   rx    daemon -> client  struct xdp_desc: a received frame
 *   tx    client -> daemon  struct xdp_desc: a frame to check and send
 *   comp  daemon -> client  u64 offsets of sent buffers, free again
 * A frame larger than one buffer (UNETD_EP_MULTI_BUFFER) is a chain of
 * descriptors on rx or tx, every one but the last with XDP_PKT_CONTD in
 * its options, as on an AF_XDP socket with multi-buffer.
 * The daemon plays the kernel's part: it never trusts what the client
 * wrote (indices, descriptors, frames): it reads each once into its own
 * memory and checks that copy.
 *
 * Notification: the client kicks the daemon by writing the kick eventfd
 * when the tx ring's flags have UNETD_RING_NEED_WAKEUP (the daemon sets
 * it before it sleeps); the daemon writes the notify eventfd after it put
 * descriptors on rx or comp when `client_sleeping` is set (the client
 * sets it, rechecks its rings, then blocks on the eventfd).
 */
#define UNETD_REGION_MAGIC 0x554e4554u /* "UNET" */
#define UNETD_RING_NEED_WAKEUP 1u      /* = XDP_RING_NEED_WAKEUP */

struct unetd_ring_off {
	uint64_t producer;
	uint64_t consumer;
	uint64_t flags;
	uint64_t desc;
	uint32_t size; /* entries, a power of two */
	uint32_t pad;
};

/* Counters the daemon keeps for the endpoint (the client reads them). */
struct unetd_ep_counters {
	uint64_t rx_delivered;	    /* frames put on rx */
	uint64_t rx_dropped;	    /* no free buffer or rx full: this endpoint's loss only */
	uint64_t tx_sent;	    /* frames checked and sent */
	uint64_t tx_bad_desc;	    /* offset or length outside the segment */
	uint64_t tx_bad_frame;	    /* not a well-formed U-Net frame */
	uint64_t tx_foreign_tag;    /* source tag not a channel of this endpoint */
	uint64_t tx_foreign_peer;   /* destination not the channel's peer */
	uint64_t tx_dropped;	    /* daemon's own send queue full */
	uint64_t tx_bad_pieces;	    /* frames in pieces refused: more than 18 pieces, longer
				     * than the largest frame, an empty piece, or in pieces
				     * where the endpoint was not told it may */
};

struct unetd_region {
	uint32_t magic;	  /* UNETD_REGION_MAGIC */
	uint32_t version; /* UNETD_PROTO_VERSION */
	uint32_t frame_size;
	uint32_t nframes;
	uint64_t segment_off; /* from the region start, frame-aligned */
	uint64_t segment_size;
	uint32_t headroom;    /* bytes before a received frame in its buffer */
	uint32_t pad;
	struct unetd_ring_off fill, rx, tx, comp;
	/* Written by the client, read by the daemon. */
	volatile uint32_t client_sleeping;
	uint32_t pad2;
	/* A copy of the daemon's counters, published after each round for
	 * the client to read.  The client can write it too (the region is
	 * its memory): the daemon keeps its own and reports those in
	 * STATUS. */
	struct unetd_ep_counters counters;
};

/* ---- UNETD_REQ_STATUS: struct unetd_status, then nlisted entries ------ */
/* Root sees every client and endpoint; any other user its own only. */

struct unetd_status {
	uint32_t nclients;
	uint32_t nendpoints;
	uint32_t nlisted;      /* entries that follow (what fits in one reply) */
	uint32_t req_throttled; /* times a user's requests waited for its budget
				 * (once 0 and reserved: the layout is unchanged) */
	uint64_t req_bad;      /* clients dropped for protocol errors */
	uint64_t req_denied;   /* requests the policy refused */
};

struct unetd_status_ep {
	uint32_t ep;
	uint32_t uid;
	uint32_t pid;
	uint32_t nchannels;
	char ifname[16];
	uint32_t share;	   /* its weight in the fair service: its user's share
			    * divided among the user's endpoints on ifname */
	uint32_t reserved;
	struct unetd_ep_counters counters;
	/* The daemon's own endpoint on ifname (root's to see, else 0):
	 * frames in pieces from the link it refused (unet_endpoint_stats'
	 * rx_bad_pieces) or had no reassembly slot for (rx_no_jumbo_slot). */
	uint64_t iface_rx_bad_pieces;
	uint64_t iface_rx_no_jumbo_slot;
};

/* ---- UNETD_REQ_WHOAMI: "may I?" without asking for anything ----------- */

/*
 * Who the daemon takes the caller for (the kernel's SO_PEERCRED and
 * SO_PEERGROUPS of this connection) and what its policy grants it on
 * ifname: the same lookup an UNETD_REQ_EP_CREATE would make, without
 * creating anything or counting a refusal.  Added after version 1 without
 * a bump: a daemon that predates it drops the client as for any unknown
 * request type (unetctl doctor says so).
 */
struct unetd_whoami {
	char ifname[16]; /* "": no grant in the reply */
};

#define UNETD_WHOAMI_MAX_GIDS 65

struct unetd_whoami_rep {
	uint32_t uid, gid, pid;	 /* SO_PEERCRED of the connection */
	uint32_t ngids;		 /* the groups the policy matches (primary first, then every
				  * supplementary one); gids lists the first
				  * UNETD_WHOAMI_MAX_GIDS of them */
	uint32_t gids[UNETD_WHOAMI_MAX_GIDS];
	/* The grant on ifname (zero, rule "", when ifname was ""). */
	uint32_t allowed;	 /* 1: a rule grants some kind of endpoint */
	uint32_t kinds;		 /* bits (1u << enum unetd_kind): DIRECT, EMULATED */
	uint32_t max_endpoints;	 /* per user; UINT32_MAX: unlimited */
	uint32_t share;		 /* weight in the fair service, 1..1000 */
	uint64_t max_segment_bytes; /* per user; UINT64_MAX: unlimited */
	/* What the caller's uid holds now, over all its connections. */
	uint32_t endpoints_held;
	uint32_t grant_queues;	 /* unetd --grant-queues: the queue mask set aside for
				  * direct grants (0: none, no direct grants) */
	uint64_t segment_bytes_held;
	char tags[96];		 /* "1-100,200", "none"; ends in "..." when cut (NUL-terminated) */
	char udp[64];		 /* UDP ports, the same way */
	char rule[64];		 /* the rule that decided, e.g. "policy:3 user 65534" */
};

/* ---- UNETD_REQ_UDP_OPEN / _CLOSE: UDP/IPv4 ports (unet_udp.h) --------- */

/*
 * A UDP socket on an endpoint from unetd: the daemon checks the port
 * against the policy's `udp` list, decides whether the kernel owns the
 * address (then the kernel answers ARP for it), and registers port and
 * address in the interface's maps -- for a direct grant's own slot, or
 * for its real endpoint's, routing those datagrams and ARP frames to the
 * emulated endpoint that opened the port (and checking that endpoint's
 * IPv4 and ARP sends against its ports and addresses).
 */
struct unetd_udp_open {
	uint32_t ep;
	uint32_t laddr;	  /* network order */
	uint32_t raddr;	  /* connected peer, 0: any (network order) */
	uint16_t lport;	  /* host order */
	uint16_t rport;	  /* host order, 0: any */
};

struct unetd_udp_opened {
	uint32_t kernel_addr; /* 1: the kernel has laddr (it answers ARP for it) */
	uint32_t owns_addr;   /* 1: this endpoint registered laddr now */
};

struct unetd_udp_close {
	uint32_t ep;
	uint32_t laddr;
	uint16_t lport;
	uint16_t pad;
};

/* ---- UNETD_REQ_TCP_OPEN / _CLOSE: TCP/IPv4 ports (unet_tcp.h) --------- */

/*
 * A TCP port for lib/tcp on an endpoint from unetd, as UDP's above: the
 * daemon checks the port against the policy (the `udp` list names the
 * user's IP ports, TCP's too; lport 0 asks for an ephemeral port, which
 * the daemon's kernel socket gets from the device's namespace, for a
 * connection, to a user the policy gives any port), holds it with a
 * kernel socket in the device's namespace (so that the kernel's own TCP
 * never takes it), registers port and address in the interface's maps
 * and, for an emulated endpoint, routes that port's segments to it and
 * checks its TCP sends against the ports it holds.  Added after version
 * 1 without a bump, as WHOAMI: a daemon that predates them drops the
 * client (an unknown request type), and unet_tcp__connect/listen fail.
 */
#define UNETD_TCP_LISTEN 1u /* unetd_tcp_open.flags: a listening port */
/* With UNETD_TCP_LISTEN: the listener is a SO_REUSEPORT group's (join it
 * or make it); the group is one user's, as the kernel's are. */
#define UNETD_TCP_GROUP 2u

struct unetd_tcp_open {
	uint32_t ep;
	uint32_t laddr;	 /* network order */
	uint16_t lport;	 /* host order; 0: an ephemeral one (not with UNETD_TCP_LISTEN) */
	uint16_t flags;	 /* UNETD_TCP_LISTEN, UNETD_TCP_GROUP */
};

struct unetd_tcp_opened {
	uint32_t kernel_addr; /* 1: the kernel has laddr (it answers ARP for it) */
	uint32_t owns_addr;   /* 1: this endpoint registered laddr now */
	uint16_t lport;	      /* the port held (the ephemeral one chosen) */
	uint16_t pad;
};

struct unetd_tcp_close {
	uint32_t ep;
	uint32_t laddr;
	uint16_t lport;
	uint16_t pad;
};

/* Every byte of a request is a named field: no padding of the
 * compiler's, so a designated initialiser ({ .ep = ep, .tag = tag })
 * zeroes its pad and reserved fields, which unetd refuses unless zero
 * (docs/unetd.md). */
_Static_assert(sizeof(struct unetd_req_hdr) == 16, "unetd_req_hdr has padding");
_Static_assert(sizeof(struct unetd_hello) == 8, "unetd_hello has padding");
_Static_assert(sizeof(struct unetd_ep_create) == 32, "unetd_ep_create has padding");
_Static_assert(sizeof(struct unetd_ep_ref) == 8, "unetd_ep_ref has padding");
_Static_assert(sizeof(struct unetd_ch_open) == 16, "unetd_ch_open has padding");
_Static_assert(sizeof(struct unetd_ch_ref) == 8, "unetd_ch_ref has padding");
_Static_assert(sizeof(struct unetd_ch_open_ipv4) == 16, "unetd_ch_open_ipv4 has padding");
_Static_assert(sizeof(struct unetd_ch_open_ipv6) == 28, "unetd_ch_open_ipv6 has padding");
_Static_assert(sizeof(struct unetd_whoami) == 16, "unetd_whoami has padding");
_Static_assert(sizeof(struct unetd_udp_open) == 16, "unetd_udp_open has padding");
_Static_assert(sizeof(struct unetd_udp_close) == 12, "unetd_udp_close has padding");
_Static_assert(sizeof(struct unetd_tcp_open) == 12, "unetd_tcp_open has padding");
_Static_assert(sizeof(struct unetd_tcp_close) == 12, "unetd_tcp_close has padding");

#endif /* UNETD_PROTO_H */
