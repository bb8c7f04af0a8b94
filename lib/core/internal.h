/* SPDX-License-Identifier: BSD-2-Clause */
/* internal.h - shared between the library's source files, never installed. */
#ifndef UNET_INTERNAL_H
#define UNET_INTERNAL_H

#include <net/if.h>
#include <stddef.h>
#include <stdint.h>

#include "unet-xdp/unet.h"
#include "unet_abi.h"

#define UNET_DEFAULT_PIN_ROOT "/sys/fs/bpf/unet"

/* A field of the caller's options (a struct that begins with size_t sz:
 * UNET_OPTS_INIT), read only if their struct has it (a program built
 * against an older header passes a shorter one) and it is not zero;
 * dflt otherwise. */
#define UNET_OPT(opts, field, dflt)                                                              \
	((opts) && (opts)->sz >= offsetof(__typeof__(*(opts)), field) + sizeof((opts)->field) && \
		 (opts)->field                                                                   \
		 ? (opts)->field                                                                 \
		 : (dflt))

/* Names of the pinned objects inside <pin_root>/<ifname>/. The map names
 * are the ones in bpf/unet_xdp.bpf.c (libbpf pins by map name). */
#define UNET_PIN_LINK "link"
#define UNET_MAP_CHANNELS "unet_channels"
#define UNET_MAP_ENDPOINTS "unet_endpoints"
#define UNET_MAP_CHAN_STATS "unet_chan_stats"
#define UNET_MAP_IF_STATS "unet_if_stats"
#define UNET_MAP_XSKS "unet_xsks"
#define UNET_MAP_FAULTS "unet_faults"
#define UNET_MAP_CHAN_CFG "unet_chan_cfg"

/* An attached interface's pinned maps, opened. */
struct unet_iface {
	char ifname[IF_NAMESIZE];
	int ifindex;
	char pin_dir[4096]; /* <pin_root>/<ifname> */
	int dir_fd;	    /* the pin directory, opened once: the lock's fd */
	int lock_depth;	    /* unet_iface_lock nesting in this process */
	/* Ids of the maps the attached program uses: every map opened must
	 * be one of them.  unchecked: the link is dead (device gone), so
	 * there is no program to check against (listing, reclaim only). */
#define UNET_MAX_PROG_MAPS 16
	__u32 map_ids[UNET_MAX_PROG_MAPS];
	__u32 n_map_ids;
	bool unchecked;
	int channels_fd;
	int endpoints_fd;
	int chan_stats_fd;
	int if_stats_fd;
	int xsks_fd;
	int faults_fd;
	int ncpus; /* possible CPUs, for per-CPU map values */
	/* Maps the layers above the core asked for (unet_iface_map). */
#define UNET_IFACE_LAYER_MAPS 8
	struct {
		const char *name;
		int fd;
	} layer_maps[UNET_IFACE_LAYER_MAPS];
};

/* log.c */
void unet_log(enum unet_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* iface_pin.c, iface_alive.c, iface_slot.c, iface_channel.c, iface.c */
/* Resolve the pin root: opts->pin_root, $UNET_PIN_ROOT, or the default. */
const char *unet_pin_root(const char *opt_root);
/* 0 if path (or its closest existing parent) is on a bpffs, else
 * -EMEDIUMTYPE, or -errno. */
int unet_check_bpffs(const char *path);
/* Whether an endpoint entry's owner is alive (its alive map holds its
 * token; unet_abi.h).  True when we cannot tell (no privilege to look). */
bool unet_endpoint_val_alive(const struct unet_endpoint_val *ev);
/* Make an endpoint's alive map: a random non-zero *token, the map's *id.
 * Returns the map's fd (hold it for the endpoint's life) or -errno. */
int unet_alive_map_create(uint64_t *token, uint32_t *id);
/* unet_iface__reclaim with the interface lock held. */
int unet_iface_reclaim_locked(struct unet_iface *iface);
/* Remove channel tag, under the lock; with token non-zero only if the
 * entry is still (endpoint, token)'s.  Returns 0, -ENOENT, -errno. */
int unet_iface_channel_remove(struct unet_iface *iface, uint16_t tag, uint32_t endpoint,
			      uint64_t token);
/* Every key of a HASH map (keys of at most UNET_MAP_KEY_MAX bytes, at
 * most max of them), collected before the caller deletes any.  Returns 0
 * with *keys (free it) and *n, or -errno. */
#define UNET_MAP_KEY_MAX 20 /* struct unet_udp6_key */
int unet_map_keys(int fd, size_t key_size, size_t max, void **keys, size_t *n);
/* Number of receive queues of the device (ethtool, then sysfs), >= 1,
 * at most UNET_MAX_QUEUES; _raw: not capped. */
int unet_iface_nqueues(const char *ifname);
int unet_iface_nqueues_raw(const char *ifname);


/* wire.c: build and parse frames (pure functions, unit-tested). */
/* Write Ethernet + U-Net headers for a payload of len bytes at frame.
 * Returns the frame length (at least 60: short frames are padded with
 * zeros, which the caller's buffer must have room for). */
uint32_t unet_wire_build(uint8_t *frame, const uint8_t dst_mac[6], const uint8_t src_mac[6],
			 uint16_t dst_tag, uint16_t src_tag, uint32_t len);
/* Parse a received frame. On success returns 0 and sets *dst_tag,
 * *payload_off and *len; returns -EINVAL for anything the XDP program
 * should have dropped (the library checks again: it trusts nobody). */
int unet_wire_parse(const uint8_t *frame, uint32_t frame_len, uint16_t *dst_tag,
		    uint16_t *src_tag, uint32_t *payload_off, uint32_t *len);

/* wire_udp.c: the same for routable channels (U-Net inside UDP/IPv4 or
 * UDP/IPv6). */
struct unet_wire_udp {
	uint8_t dst_mac[6], src_mac[6]; /* next hop's, ours */
	uint32_t saddr, daddr;		/* IPv4, network order */
	uint16_t sport, dport;		/* host order */
	uint16_t dst_tag, src_tag;
	bool v6;			/* IPv6: saddr6, daddr6 instead */
	uint8_t saddr6[16], daddr6[16];
};
/* Write Ethernet + IP + UDP + U-Net headers for the len payload bytes
 * already in place after them (w->v6 false: IPv4, IP checksum filled,
 * UDP checksum 0, DF set; true: IPv6, hop limit 64, the UDP checksum over
 * the payload computed).  Returns the frame length (at least 60, padded
 * with zeros). */
uint32_t unet_wire_udp_build(uint8_t *frame, const struct unet_wire_udp *w, uint32_t len);
/* Where the payload starts in a frame of w's family. */
static inline uint32_t unet_wire_udp_payload_off(const struct unet_wire_udp *w)
{
	return w->v6 ? UNET_UDP6_PAYLOAD_OFF : UNET_UDP_PAYLOAD_OFF;
}
/* Parse a received frame to the channel port `port`, IPv4 or IPv6 by its
 * EtherType.  IPv4: no IP options, no fragment, UDP checksum 0; IPv6: no
 * extension header, a UDP checksum that is not 0 and verifies; both: the
 * UDP length the IP payload's, the U-Net len the rest of the datagram.
 * Returns 0 and fills *w (w->v6 says which), *payload_off, *len, or
 * -EINVAL. */
int unet_wire_udp_parse(const uint8_t *frame, uint32_t frame_len, uint16_t port,
			struct unet_wire_udp *w, uint32_t *payload_off, uint32_t *len);

/* pool.c: the free frames of a segment, and who holds each frame. */
enum unet_frame_owner {
	UNET_FRAME_FREE = 0, /* in the pool */
	UNET_FRAME_APP,	     /* allocated to the application for sending */
	UNET_FRAME_RX,	     /* received, handed to the application */
	UNET_FRAME_FILL,     /* on a FILL ring: the kernel's to receive into */
	UNET_FRAME_TX,	     /* on a TX ring, until its completion */
};
struct unet_pool {
	uint64_t *stack; /* free frame addresses */
	uint8_t *owner;	 /* enum unet_frame_owner per frame */
	uint8_t *keep;	 /* per frame: a kept send buffer (unet_pool_keep) */
	uint32_t nfree;
	uint32_t nframes;
	uint32_t frame_shift; /* frame size = 1 << frame_shift */
};
int unet_pool_init(struct unet_pool *p, uint32_t nframes, uint32_t frame_size);
void unet_pool_fini(struct unet_pool *p);
/* Frame index of an address anywhere inside a frame, or -EINVAL. */
int64_t unet_pool_index(const struct unet_pool *p, uint64_t addr);
/* Take a free frame, now owned by `owner`; UNET_NO_BUF when empty. */
uint64_t unet_pool_get(struct unet_pool *p, enum unet_frame_owner owner);
/* Return the frame containing addr, which must be owned by `expect`.
 * Returns 0 or -EINVAL (bad address or not held by `expect`). */
int unet_pool_put(struct unet_pool *p, uint64_t addr, enum unet_frame_owner expect);
/* Change a frame's owner from `expect` to `owner`; 0 or -EINVAL. */
int unet_pool_move(struct unet_pool *p, uint64_t addr, enum unet_frame_owner expect,
		   enum unet_frame_owner owner);
/*
 * Kept send buffers: a layer that must be able to send a frame again (a
 * retransmission) builds it once in a segment buffer and keeps that,
 * instead of a copy of its own.  unet_pool_keep marks an APP frame: when
 * its send completes (unet_pool_completed) it goes back to APP, still
 * the layer's, instead of to the pool.  unet_pool_unkeep gives it up: to
 * the pool now if the layer has it, or at completion if it is still on a
 * ring.  Each returns 0 or -EINVAL (bad address, or not in the state
 * named).
 */
int unet_pool_keep(struct unet_pool *p, uint64_t addr);
int unet_pool_unkeep(struct unet_pool *p, uint64_t addr);
/* A frame the kernel gave back from a TX ring (TX): to the pool, or
 * to its holder (APP) if kept.  Returns 0, 1 (kept: back to APP) or
 * -EINVAL (bad address or not TX). */
int unet_pool_completed(struct unet_pool *p, uint64_t addr);

#endif /* UNET_INTERNAL_H */
