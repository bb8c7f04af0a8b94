/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * chan_check.h - the check of a frame an emulated endpoint sends on a
 * routable channel (daemon/chan_check.c).  A leaf (fixed-width types
 * only) so that test_chan_check links it alone.
 */
#ifndef UNETD_CHAN_CHECK_H
#define UNETD_CHAN_CHECK_H

#include <stdint.h>

/* What the daemon decided for one routable channel of a client: the only
 * headers its frames may carry. */
struct unetd_chan_wire {
	uint8_t dst_mac[6];	/* the next hop's */
	uint8_t v6;		/* over IPv6: saddr6 and daddr6, not saddr and daddr */
	uint32_t saddr, daddr;	/* network order: the interface's, the peer's */
	uint8_t saddr6[16];	/* the kernel's choice among the interface's for the peer */
	uint8_t daddr6[16];	/* the peer's */
	uint16_t sport, dport;	/* host order: the channel's (held by the daemon), the channel port */
	uint16_t tag, peer_tag; /* the U-Net header's src_tag and dst_tag */
	uint32_t max_payload;	/* the largest message the daemon sends for it */
};

enum unetd_chan_verdict {
	UNETD_CHAN_OK,
	/* Not what the library builds: IPv4 with options, TOS, an ID, a
	 * fragment (or DF clear), a TTL other than 64, a wrong header
	 * checksum, a UDP checksum; IPv6 with a traffic class or flow
	 * label, an extension header, a hop limit other than 64, a UDP
	 * checksum that is not the right one; lengths (IP, UDP, U-Net, the
	 * frame's) that do not add up, another U-Net version or flags, an
	 * empty or too long message, padding that is not zeros. */
	UNETD_CHAN_BAD_FRAME,
	UNETD_CHAN_FOREIGN_TAG,	 /* the source tag is not a routable channel of the sender */
	UNETD_CHAN_FOREIGN_SRC,	 /* the source address (or family) or port is not the channel's */
	UNETD_CHAN_FOREIGN_PEER, /* next-hop MAC, peer address, or peer tag not the channel's */
};

/* The routable channel of the sender with source tag tag, or NULL. */
typedef const struct unetd_chan_wire *(*unetd_chan_lookup)(void *ctx, uint16_t tag);

/*
 * Judge f[0..len), an IPv4/UDP or IPv6/UDP frame to the channel port
 * dport (from the Ethernet header; the source MAC is not looked at: the
 * daemon writes it), against the sender's routable channels of the
 * frame's family.  Everything is read from f, which must be the daemon's
 * own copy.
 */
enum unetd_chan_verdict unetd_chan_check_frame(const uint8_t *f, uint32_t len, uint16_t dport,
					       unetd_chan_lookup lookup, void *ctx);

#endif /* UNETD_CHAN_CHECK_H */
