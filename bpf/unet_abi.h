/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet_abi.h - what the XDP program and user space agree on.
 *
 * Included by bpf/unet_xdp.bpf.c (compiled with clang -target bpf) and by
 * the library and tests, so it uses only fixed-width kernel types and no
 * libc.  The wire header is documented in docs/wire-format.md; the map
 * layout in docs/control-plane.md.  Change one, change the other.
 */
#ifndef UNET_ABI_H
#define UNET_ABI_H

#include <linux/types.h>

/* ---- Wire format ------------------------------------------------------ */

/* IEEE 802 "local experimental" EtherType 1. */
#define UNET_ETH_P 0x88B5
#define UNET_WIRE_VERSION 1

/*
 * The U-Net header follows the Ethernet header directly.  All multi-byte
 * fields are in network byte order.  8 bytes, so the payload starts at
 * offset 22.
 *
 * VLANs: U-Net (and UDP over U-Net) take only untagged frames of the
 * device the program is attached to.  A frame with an 802.1Q / 802.1ad
 * tag belongs to a VLAN device stacked on it (eth0.100), and the XDP
 * program passes it to the kernel untouched; to use U-Net on a VLAN,
 * attach to the VLAN device.
 */
struct unet_hdr {
	__u8 version;	/* UNET_WIRE_VERSION */
	__u8 flags;	/* reserved, sent as 0, ignored on receive */
	__be16 dst_tag; /* channel tag at the receiver: selects the endpoint */
	__be16 src_tag; /* channel tag at the sender: checked against the channel */
	__be16 len;	/* payload bytes after this header (frame may be padded) */
} __attribute__((packed));

#define UNET_ETH_HLEN 14
#define UNET_HDR_LEN 8
/* Offset of the payload in every U-Net frame. */
#define UNET_PAYLOAD_OFF (UNET_ETH_HLEN + UNET_HDR_LEN)

/* Tag 0 is reserved: it never names a channel. */
#define UNET_TAG_INVALID 0

/* ---- Limits ----------------------------------------------------------- */

#define UNET_MAX_ENDPOINTS 64 /* endpoints per interface */
#define UNET_MAX_QUEUES 16    /* queues per interface an endpoint can bind */
#define UNET_MAX_CHANNELS 65536
#define UNET_XSKMAP_SIZE (UNET_MAX_ENDPOINTS * UNET_MAX_QUEUES)

/* Index of an endpoint's socket for one queue in the XSKMAP. */
#define UNET_XSK_INDEX(endpoint, queue) ((endpoint) * UNET_MAX_QUEUES + (queue))

/* ---- Maps (pinned under <pin_root>/<ifname>/) -------------------------- */

/* "unet_channels": HASH, key = __u32 local tag (host order). */
struct unet_channel_val {
	__u8 peer_mac[6]; /* source MAC every frame on this channel must carry */
	__u16 peer_tag;	  /* source tag every frame must carry (host order) */
	__u32 endpoint;	  /* owning endpoint slot */
	__u32 owner_pid;  /* pid that opened it (for listings only) */
	__u32 flags;	  /* UNET_CHAN_F_*; other bits reserved, 0 */
	__u64 owner_token; /* token of the endpoint incarnation that owns it
			    * (unet_endpoint_val.token): a slot reused by
			    * another process never inherits the channel */
	/*
	 * Routable channels (UNET_CHAN_F_UDP4 or UNET_CHAN_F_UDP6,
	 * docs/wire-format.md): the peer is named by IP address and UDP
	 * source port, and peer_mac is only the next hop's (where sends
	 * go), never checked on receive.  An IPv4 peer uses bytes 0..3 of
	 * peer_addr and leaves the rest 0; an IPv6 peer all 16.
	 */
	__u8 peer_addr[16]; /* network order; IPv4: bytes 0..3 */
	__be16 peer_port;   /* UDP source port every frame must carry */
	__u16 pad;	    /* 0 */
	__u32 pad2;	    /* 0 */
};

/* unet_channel_val.flags: the channel's kind.  None set: a raw Ethernet
 * channel (EtherType UNET_ETH_P) checked by peer MAC. */
#define UNET_CHAN_F_UDP4 1u
/* ... inside UDP/IPv6 (the same port and rules; docs/wire-format.md). */
#define UNET_CHAN_F_UDP6 2u

/*
 * Routable channels: U-Net frames inside UDP/IPv4, to one well-known
 * destination port per interface.  61955 is in IANA's dynamic range
 * (49152-65535) and above Linux's default ephemeral range (32768-60999),
 * so a kernel socket's automatically chosen port never collides with it.
 * The source port is derived from the channel (unet_chan_sport) so that
 * ECMP and RSS hashing on the 5-tuple spread channels over paths and
 * queues while one channel's frames stay in order on one.
 */
#define UNET_CHAN_PORT_DEFAULT 61955
#define UNET_IP_HLEN 20
#define UNET_UDP_HLEN 8
/* Offset of the payload in a routable channel's frame (no IP options). */
#define UNET_UDP_PAYLOAD_OFF (UNET_ETH_HLEN + UNET_IP_HLEN + UNET_UDP_HLEN + UNET_HDR_LEN)
/* The same over IPv6 (no extension headers). */
#define UNET_IP6_HLEN 40
#define UNET_UDP6_PAYLOAD_OFF (UNET_ETH_HLEN + UNET_IP6_HLEN + UNET_UDP_HLEN + UNET_HDR_LEN)

/* Source port of the channel with local tag `tag`: in 49152..65535.
 * Of the local tag only, which the host (or unetd's policy) gives out:
 * the peer's tag is the requester's to choose, and a port chosen by it
 * would let a user pick which port unetd holds.  Multiplying by an odd
 * number is one-to-one on the low 14 bits, so tags less than 16384
 * apart never share a port, and neighbouring tags land far apart. */
static inline __u16 unet_chan_sport(__u16 tag)
{
	return (__u16)(0xC000u | ((__u32)tag * 0x9E37u & 0x3FFFu));
}

/* "unet_chan_cfg": ARRAY, one entry (key 0), written at attach time.
 * udp_port 0 means UNET_CHAN_PORT_DEFAULT. */
struct unet_chan_cfg {
	__u16 udp_port; /* host order */
	__u16 pad;
	__u32 reserved;
};

/*
 * "unet_endpoints": HASH, key = __u32 endpoint slot.  Slots are claimed
 * with BPF_NOEXIST and reclaimed only under the interface lock (flock on
 * the pin directory), so a slot has one owner at a time.
 *
 * Liveness does not rest on pids (a pid means nothing in another pid
 * namespace): the owner holds open a small BPF array, the "alive map",
 * whose only value is `token`.  The kernel frees the map when the last
 * fd to it closes, i.e. when the owner exits however it exits; map ids
 * are global, so anyone can ask whether alive_map_id still names a map
 * holding `token` (ids are allocated cyclically over 2^31 and the token
 * is random, so a reused id is told apart).
 */
struct unet_endpoint_val {
	__u32 pid;	    /* owning process, for listings */
	__u32 nqueues;	    /* sockets bound, one per queue */
	__u64 token;	    /* random, non-zero, unique to this incarnation */
	__u32 alive_map_id; /* id of the owner's alive map */
	__u32 queue_mask;   /* the queues it bound (bit q: queue q), for
			     * listings and steering: user space cannot look
			     * up an XSKMAP (EOPNOTSUPP); 0 from an older
			     * library (the field was reserved) */
	char comm[16];	    /* owner's command name, for listings */
};

/* "unet_chan_stats": PERCPU_ARRAY indexed by local tag. Reset by the
 * library when a channel is opened. */
struct unet_channel_stats {
	__u64 delivered;      /* frames redirected to the owner */
	__u64 delivered_bytes; /* their payload bytes */
	__u64 drop_wrong_src; /* frames for this tag from the wrong MAC or tag */
	__u64 drop_no_socket; /* owner has no socket on the arrival queue */
};

/* "unet_if_stats": PERCPU_ARRAY, one __u64 per counter below. */
enum unet_if_counter {
	UNET_CTR_RX = 0,	     /* every frame the program saw */
	UNET_CTR_PASS,		     /* not U-Net: left to the kernel */
	UNET_CTR_DELIVERED,	     /* redirected into an endpoint */
	UNET_CTR_DROP_MALFORMED,     /* truncated header, bad length */
	UNET_CTR_DROP_VERSION,	     /* unknown header version */
	UNET_CTR_DROP_UNKNOWN_TAG,   /* no channel with that tag */
	UNET_CTR_DROP_WRONG_SRC,     /* source MAC or tag not the peer's */
	UNET_CTR_DROP_NO_SOCKET,     /* endpoint has no socket on that queue */
	UNET_CTR_DROP_INJECTED,	     /* would be delivered, dropped by unet_faults */
	/* UDP/IPv4 over U-Net (docs/udp.md); appended so the others keep
	 * their indices. */
	UNET_CTR_UDP_DELIVERED,	     /* UDP datagram redirected into its endpoint */
	UNET_CTR_ARP_DELIVERED,	     /* ARP for a U-Net-owned address, to its endpoint */
	UNET_CTR_DROP_UDP_FILTER,    /* UDP from a source the port's filter refuses */
	UNET_CTR_DROP_IP_FRAGMENT,   /* first fragment of a datagram for a U-Net port */
	UNET_CTR_DROP_IP_MALFORMED,  /* for a U-Net port, but lengths do not add up */
	UNET_CTR_DROP_QUEUE_RANGE,   /* U-Net frame or UDP datagram for a live endpoint
				      * on a queue >= UNET_MAX_QUEUES: no endpoint
				      * can have a socket there */
	/* TCP/IPv4 over U-Net (docs/tcp.md); appended so the others keep
	 * their indices. */
	UNET_CTR_TCP_DELIVERED,	     /* TCP segment redirected into its endpoint */
	UNET_CTR_DROP_TCP_MALFORMED, /* for a U-Net TCP port, but lengths do not add
				      * up (IP or TCP header, data offset) */
	/* Routable channels (UDP/IPv4 to the channel port); appended so
	 * the others keep their indices.  Header checks of the U-Net header
	 * inside count as for raw frames (drop_malformed, drop_version,
	 * drop_unknown_tag, drop_wrong_src, ...). */
	UNET_CTR_DROP_CHAN_IP,	     /* IP header bad: version, ihl, options,
				      * total (IPv6: payload) length against
				      * the frame */
	UNET_CTR_DROP_CHAN_FRAG,     /* a fragment (MF or offset set) */
	UNET_CTR_DROP_CHAN_UDPLEN,   /* UDP length not the IP payload's */
	UNET_CTR_DROP_CHAN_CSUM,     /* UDP checksum: IPv4 non-zero (we send 0),
				      * IPv6 zero (mandatory there) */
	UNET_CTR_DROP_CHAN_KIND,     /* raw frame for a routable channel or
				      * UDP for a raw one */
	UNET_CTR_CHAN_DELIVERED,     /* routable-channel frames delivered (also
				      * counted in delivered) */
	/* UDP/IPv6 over U-Net (docs/udp.md); appended so the others keep
	 * their indices.  IPv6 datagrams are otherwise counted with IPv4's
	 * (udp_delivered, drop_udp_filter, drop_ip_malformed, ...). */
	UNET_CTR_DROP_IP6_EXTHDR,    /* an extension header after the fixed IPv6
				      * header, to a U-Net-owned address, or
				      * before UDP to the channel port */
	UNET_CTR_ND_DELIVERED,	     /* neighbour solicitation for a U-Net-owned
				      * IPv6 address, to its endpoint */
	UNET_CTR__COUNT
};

/*
 * "unet_faults": ARRAY, one entry (key 0).  A test hook: drop_ppm out of a
 * million U-Net frames that would be delivered are dropped instead and
 * counted as UNET_CTR_DROP_INJECTED.  It applies to U-Net frames and to
 * TCP segments for U-Net TCP ports (docs/tcp.md), not to UDP.  All zero (the default) changes
 * nothing.  Set with unet_iface__set_fault() / `unetctl fault`.
 */
struct unet_fault_cfg {
	__u32 drop_ppm; /* 0..1000000 */
	__u32 reserved; /* sent as 0 */
};

/* "unet_xsks": XSKMAP of UNET_XSKMAP_SIZE, index UNET_XSK_INDEX(). */

/* ---- UDP/IPv4 over U-Net (docs/udp.md) ---------------------------------- */

#define UNET_MAX_UDP_PORTS 4096 /* (address, port) pairs per interface */
#define UNET_MAX_UDP_ADDRS 256	/* local addresses with U-Net UDP ports */
#define UNET_MAX_NEIGH 1024	/* neighbours learnt from ARP */

/*
 * "unet_udp_ports": HASH, key struct unet_udp_key.  A UDP datagram whose
 * (destination address, destination port) is a key goes to the value's
 * endpoint; everything else stays with the kernel.
 */
struct unet_udp_key {
	__be32 addr; /* local IPv4 address, network order */
	__be16 port; /* local UDP port, network order */
	__u16 pad;   /* 0 */
};

struct unet_udp_val {
	__u32 endpoint;	    /* owning endpoint slot */
	__be32 remote_addr; /* only datagrams from this source address; 0: any */
	__be16 remote_port; /* only from this source port; 0: any */
	__u16 flags;	    /* UNET_PORT_F_GROUP; other bits reserved, 0 */
	__u32 owner_pid;    /* pid that opened it (for listings) */
	__u64 owner_token;  /* token of the endpoint incarnation that owns it
			     * (unet_endpoint_val.token): an entry whose token
			     * is not its slot's is a dead owner's, passed */
	/* Counters, added to by the XDP program with atomic adds (a hash
	 * value is one copy for all CPUs); zero when the entry is made. */
	__u64 delivered;       /* datagrams redirected to the owner */
	__u64 delivered_bytes; /* their UDP payload bytes */
	__u64 drop_filter;     /* from a source the remote filter refuses */
	__u64 drop_no_socket;  /* owner has no socket on the arrival queue */
};

/*
 * "unet_udp_addrs": HASH, key __be32 local address, one entry per local
 * address with U-Net UDP ports.  ARP whose target is such an address
 * teaches the XDP program the sender's MAC (unet_neigh); with
 * UNET_UDP_ADDR_ARP (the kernel does not have the address) the ARP frame
 * also goes to `endpoint`, which answers requests.
 */
#define UNET_UDP_ADDR_ARP 1u

struct unet_udp_addr_val {
	__u32 endpoint;	 /* endpoint that registered it (answers ARP) */
	__u32 flags;	 /* UNET_UDP_ADDR_* */
	__u32 owner_pid; /* for listings */
	__u32 pad;
	__u64 owner_token; /* as unet_udp_val.owner_token */
};

/*
 * "unet_neigh": LRU_HASH, key __be32 IPv4 address -> the MAC address an
 * ARP request or reply addressed to a U-Net address said it has, and when
 * (bpf_ktime_get_ns(): CLOCK_MONOTONIC).  Written by the XDP program only.
 */
struct unet_neigh_val {
	__u8 mac[6];
	__u16 pad;
	__u64 updated_ns;
};

/* ---- TCP/IPv4 over U-Net (docs/tcp.md) ---------------------------------- */

#define UNET_MAX_TCP_PORTS 4096 /* (address, port) pairs per interface */

/*
 * "unet_tcp_ports": HASH, key struct unet_tcp_key.  A TCP segment whose
 * (destination address, destination port) is a key goes to the value's
 * endpoint; every other TCP segment stays with the kernel.  A listening
 * port and each connection's local port are keys (connections accepted
 * on a listening port share its key).  The owner also holds a kernel TCP
 * socket bound to the same (address, port), so no kernel socket can take
 * the port; that socket closes with the owner however it dies.  ARP for
 * the address goes by unet_udp_addrs (the IPv4 addresses U-Net uses,
 * whichever protocol).
 */
struct unet_tcp_key {
	__be32 addr; /* local IPv4 address, network order */
	__be16 port; /* local TCP port, network order */
	__u16 pad;   /* 0 */
};

#define UNET_TCP_PORT_LISTEN 1u /* a listening port (else a connection's) */

struct unet_tcp_val {
	__u32 endpoint;	   /* owning endpoint slot */
	__u32 flags;	   /* UNET_TCP_PORT_*, UNET_PORT_F_GROUP */
	__u32 owner_pid;   /* pid that opened it (for listings) */
	__u32 pad;
	__u64 owner_token; /* as unet_udp_val.owner_token */
	/* Counters, added to by the XDP program with atomic adds; zero when
	 * the entry is made. */
	__u64 delivered;       /* segments redirected to the owner */
	__u64 delivered_bytes; /* their IP payload bytes (TCP header included) */
	__u64 drop_no_socket;  /* owner has no socket on the arrival queue */
	__u64 drop_injected;   /* dropped by unet_faults */
};

/* ---- UDP/IPv6 over U-Net (docs/udp.md) ---------------------------------- */

/*
 * "unet_udp6_ports": HASH, key struct unet_udp6_key.  As unet_udp_ports,
 * for IPv6: a datagram whose (destination address, destination port) is a
 * key goes to the value's endpoint; everything else stays with the kernel.
 * A second map rather than a wider key in the first: the IPv4 map's layout
 * is ABI that pinned maps and older programs share.
 */
struct unet_udp6_key {
	__u8 addr[16]; /* local IPv6 address, network order */
	__be16 port;   /* local UDP port, network order */
	__u16 pad;     /* 0 */
};

struct unet_udp6_val {
	__u32 endpoint;	       /* owning endpoint slot */
	__be16 remote_port;    /* only from this source port; 0: any */
	__u16 flags;	       /* reserved, 0 */
	__u8 remote_addr[16];  /* only from this source address; all 0: any */
	__u32 owner_pid;       /* pid that opened it (for listings) */
	__u32 pad;	       /* 0 */
	__u64 owner_token;     /* as unet_udp_val.owner_token */
	/* Counters, added to by the XDP program with atomic adds. */
	__u64 delivered;       /* datagrams redirected to the owner */
	__u64 delivered_bytes; /* their UDP payload bytes */
	__u64 drop_filter;     /* from a source the remote filter refuses */
	__u64 drop_no_socket;  /* owner has no socket on the arrival queue */
};

/*
 * "unet_udp6_addrs": HASH, key __u8[16] local IPv6 address -> struct
 * unet_udp_addr_val, one entry per local IPv6 address with U-Net UDP
 * ports.  With UNET_UDP6_ADDR_ND (the kernel does not have the address)
 * neighbour solicitations for it go to `endpoint`, which answers them,
 * and a frame to it with an extension header is dropped and counted.
 */
#define UNET_UDP6_ADDR_ND 1u

/* ---- SO_REUSEPORT groups: one port, several endpoints (docs/control-plane.md) */

/*
 * A UDP or TCP port entry with UNET_PORT_F_GROUP in its flags names no
 * single endpoint: its datagrams and segments go to one member of the
 * group at the same key in "unet_port_groups", chosen per flow by
 * unet_port_group_hash() of the source address and port, so every
 * datagram of one source and every segment of one TCP connection stay on
 * one member while the group stays as it is.  A member counts only while
 * its token is the one in its slot (unet_endpoint_val.token) and it has a
 * socket on the arrival queue; otherwise the flow goes to the next member
 * that does (a dead member's share moves, the others' flows stay).  The
 * port entry's own endpoint and token are one live member's, kept so by
 * the library, for listings and reclaim.
 */
#define UNET_PORT_F_GROUP 0x8000u  /* in unet_udp_val.flags, unet_tcp_val.flags */
#define UNET_PORT_GROUP_MAX 8	   /* members of one group */
#define UNET_MAX_PORT_GROUPS 1024  /* groups per interface, UDP and TCP */

/* "unet_port_groups": HASH, key struct unet_group_key. */
struct unet_group_key {
	__be32 addr;  /* local IPv4 address, network order */
	__be16 port;  /* local port, network order */
	__u8 proto;   /* IPPROTO_UDP or IPPROTO_TCP */
	__u8 pad;     /* 0 */
};

struct unet_group_member {
	__u32 endpoint;	   /* member's endpoint slot */
	__u32 pid;	   /* pid that joined (for listings) */
	__u64 token;	   /* the member incarnation's token; 0: a free place */
	__u64 delivered;   /* frames the XDP program gave this member */
};

struct unet_group_val {
	__u32 uid;   /* the user every member is (the kernel's rule) */
	__u32 count; /* places in use, 1..UNET_PORT_GROUP_MAX; a place below
		      * count may be free (token 0) after a member left,
		      * so that the other members keep their flows */
	struct unet_group_member m[UNET_PORT_GROUP_MAX];
};

/* The flow's place in a group of count places: the same for every frame
 * of one source address and port (network order both).  A
 * multiplicative hash, the high bits taken: neighbouring ports spread. */
static inline __u32 unet_port_group_hash(__be32 saddr, __be16 sport)
{
	__u32 x = (saddr ^ ((__u32)sport << 16 | sport)) * 0x9E3779B1u;

	x ^= x >> 15;
	x *= 0x85EBCA6Bu;
	return x ^ (x >> 13);
}

/* ---- TCP/IPv6 over U-Net (docs/tcp.md, "IPv6") --------------------------- */

/*
 * "unet_tcp6_ports": HASH, key struct unet_tcp6_key -> struct
 * unet_tcp_val (the IPv4 map's value: owner, flags, counters).  As
 * unet_tcp_ports, for IPv6: a segment whose (destination address,
 * destination port) is a key goes to the value's endpoint; every other
 * TCP segment stays with the kernel.  A second map rather than a wider
 * key in the first, as for UDP.  Neighbour solicitations for the address
 * go by unet_udp6_addrs (the IPv6 addresses U-Net uses, whichever
 * protocol).
 */
struct unet_tcp6_key {
	__u8 addr[16]; /* local IPv6 address, network order */
	__be16 port;   /* local TCP port, network order */
	__u16 pad;     /* 0 */
};

#endif /* UNET_ABI_H */
