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
 * The U-Net header follows the Ethernet header (and at most one 802.1Q /
 * 802.1ad tag).  All multi-byte fields are in network byte order.
 * 8 bytes, so the payload of a frame without VLAN starts at offset 22.
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
/* Offset of the payload in a frame we send (we never send a VLAN tag). */
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
	__u32 owner_pid;  /* pid that opened it (for listings) */
	__u32 flags;	  /* reserved */
};

/* "unet_endpoints": HASH, key = __u32 endpoint slot. Claimed with
 * BPF_NOEXIST, so two processes never get the same slot. */
struct unet_endpoint_val {
	__u32 pid;	  /* owning process */
	__u32 nqueues;	  /* sockets bound, one per queue */
	__u64 start_time; /* /proc/<pid>/stat starttime: tells pid reuse apart */
	char comm[16];	  /* owner's command name, for listings */
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
	UNET_CTR__COUNT
};

/*
 * "unet_faults": ARRAY, one entry (key 0).  A test hook: drop_ppm out of a
 * million U-Net frames that would be delivered are dropped instead and
 * counted as UNET_CTR_DROP_INJECTED.  All zero (the default) changes
 * nothing.  Set with unet_iface__set_fault() / `unetctl fault`.
 */
struct unet_fault_cfg {
	__u32 drop_ppm; /* 0..1000000 */
	__u32 reserved; /* sent as 0 */
};

/* "unet_xsks": XSKMAP of UNET_XSKMAP_SIZE, index UNET_XSK_INDEX(). */

#endif /* UNET_ABI_H */
