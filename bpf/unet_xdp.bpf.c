// SPDX-License-Identifier: BSD-2-Clause
/*
 * unet_xdp.bpf.c - the "network interface" half of U-Net: demultiplex
 * incoming U-Net frames by tag into the AF_XDP socket of the endpoint that
 * owns the channel, and leave every other frame to the kernel.
 *
 * Per frame:
 *   1. count it (rx);
 *   2. parse Ethernet and at most one 802.1Q / 802.1ad tag;
 *      not EtherType UNET_ETH_P -> pass (ARP, IP, ... untouched);
 *   3. U-Net header: truncated -> drop_malformed; version unknown ->
 *      drop_version; len 0 or past the end of the frame -> drop_malformed;
 *   4. dst_tag 0 or no channel -> drop_unknown_tag;
 *   5. source MAC or src_tag not the channel's peer -> drop_wrong_src
 *      (this is U-Net's receive-side protection: a process only ever sees
 *      frames from the peer its channel was set up with);
 *   6. no socket of the owning endpoint on the arrival queue ->
 *      drop_no_socket; otherwise redirect into that socket (delivered),
 *   7. unless the test hook unet_faults drops it (drop_injected).
 *
 * IPv4 and ARP frames go to udp_rx() and arp_rx() (UDP/IPv4 over U-Net,
 * docs/udp.md): a datagram for a (address, port) in unet_udp_ports goes to
 * its endpoint, everything else stays with the kernel.
 *
 * Every U-Net frame we refuse is dropped, never passed: the kernel stack
 * has no use for EtherType 0x88B5 and passing would let a frame for a dead
 * endpoint reach packet sockets of other users.
 *
 * The wire format is in docs/wire-format.md, the maps in unet_abi.h.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "unet_abi.h"

/* The 4 bytes an 802.1Q / 802.1ad tag adds after the source MAC (the TPID
 * is the outer EtherType already read from the Ethernet header). */
struct unet_vlan_tag {
	__be16 tci;
	__be16 inner_proto;
};

/* ---- Maps: names are ABI (lib/core/internal.h opens them pinned by name) ---- */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UNET_MAX_CHANNELS);
	__type(key, __u32); /* local tag, host order */
	__type(value, struct unet_channel_val);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} unet_channels SEC(".maps");

/* The library claims endpoint slots in it; the program checks that a
 * channel belongs to the endpoint incarnation now in its slot. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UNET_MAX_ENDPOINTS);
	__type(key, __u32); /* endpoint slot */
	__type(value, struct unet_endpoint_val);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} unet_endpoints SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UNET_MAX_CHANNELS); /* every 16-bit tag has a slot */
	__type(key, __u32);			/* local tag */
	__type(value, struct unet_channel_stats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} unet_chan_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UNET_CTR__COUNT);
	__type(key, __u32); /* enum unet_if_counter */
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} unet_if_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unet_fault_cfg);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} unet_faults SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, UNET_XSKMAP_SIZE);
	__type(key, __u32); /* UNET_XSK_INDEX(endpoint, queue) */
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} unet_xsks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UNET_MAX_UDP_PORTS);
	__type(key, struct unet_udp_key);
	__type(value, struct unet_udp_val);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} unet_udp_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UNET_MAX_UDP_ADDRS);
	__type(key, __be32);
	__type(value, struct unet_udp_addr_val);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} unet_udp_addrs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, UNET_MAX_NEIGH);
	__type(key, __be32);
	__type(value, struct unet_neigh_val);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} unet_neigh SEC(".maps");

/* ---- Counters ---------------------------------------------------------- */

/*
 * Per-CPU counters need no atomics: an XDP program runs with migration
 * disabled and is not re-entered on the same CPU, so a plain increment of
 * this CPU's slot cannot race.  User space sums the slots.
 */
static __always_inline void if_count(__u32 ctr)
{
	__u64 *v = bpf_map_lookup_elem(&unet_if_stats, &ctr);

	if (v)
		*v += 1;
}

static __always_inline struct unet_channel_stats *chan_stats(__u32 tag)
{
	return bpf_map_lookup_elem(&unet_chan_stats, &tag);
}

/* Count the frame under ctr and drop it. */
static __always_inline int drop(__u32 ctr)
{
	if_count(ctr);
	return XDP_DROP;
}

/* 6-byte compare without memcmp (not available to BPF); byte loads keep it
 * independent of the alignment of the packet and the map value. */
static __always_inline int mac_equal(const __u8 *a, const __u8 *b)
{
	return ((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]) |
		(a[4] ^ b[4]) | (a[5] ^ b[5])) == 0;
}

/*
 * Fault injection (tests only): whether to drop a frame that would be
 * delivered.  One map lookup per delivered frame; with drop_ppm 0 (the
 * default) the random number is not even drawn.  The comparison is on
 * [0, 1000000): ppm 1000000 drops every frame, 0 none.
 */
static __always_inline int fault_drop(void)
{
	__u32 key = 0;
	struct unet_fault_cfg *f = bpf_map_lookup_elem(&unet_faults, &key);

	if (!f || !f->drop_ppm)
		return 0;
	return bpf_get_prandom_u32() % 1000000 < f->drop_ppm;
}

/* Redirect into endpoint's socket on the arrival queue; anything but
 * XDP_REDIRECT means it has none there. */
static __always_inline long redirect_to(struct xdp_md *ctx, __u32 endpoint)
{
	__u32 queue = ctx->rx_queue_index;

	if (queue >= UNET_MAX_QUEUES || endpoint >= UNET_MAX_ENDPOINTS)
		return XDP_ABORTED;
	return bpf_redirect_map(&unet_xsks, UNET_XSK_INDEX(endpoint, queue), XDP_ABORTED);
}

static __always_inline int pass(void)
{
	if_count(UNET_CTR_PASS);
	return XDP_PASS;
}

/* ---- UDP/IPv4 ------------------------------------------------------------ */

#define IP_MF 0x2000
#define IP_OFFMASK 0x1fff

/*
 * An IPv4 frame: ours only if it is UDP to an (address, port) in
 * unet_udp_ports.  Until the port is known to be ours the frame is passed
 * whatever is wrong with it: it may belong to a kernel socket, and the
 * kernel judges (and counts) its own malformed frames.  Once it is ours it
 * is never passed -- no kernel socket waits for it.
 *
 * Fragments: a non-first fragment carries no UDP header, so it cannot be
 * told to be ours and is passed (the kernel's reassembly times it out).  A
 * first fragment whose port is ours is dropped and counted: we do not
 * reassemble (docs/udp.md).  The IP and UDP checksums are checked by the
 * library, which has the whole frame and the socket's policy for partial
 * checksums.
 */
static __always_inline int udp_rx(struct xdp_md *ctx, void *l3, void *data_end)
{
	struct iphdr *ip = l3;
	struct unet_udp_key key = {};
	struct unet_udp_val *v;
	struct udphdr *udp;
	__u32 hlen, tot_len, ulen;
	__u16 frag;

	if ((void *)(ip + 1) > data_end || ip->version != 4 || ip->ihl < 5 ||
	    ip->protocol != IPPROTO_UDP)
		return pass();
	frag = bpf_ntohs(ip->frag_off);
	if (frag & IP_OFFMASK)
		return pass(); /* no UDP header in it: not provably ours */
	hlen = ip->ihl * 4; /* 20..60: IP options are skipped, not read */
	udp = (void *)ip + hlen;
	/* The ports are the first 4 bytes of the UDP header. */
	if ((void *)udp + 4 > data_end)
		return pass();
	key.addr = ip->daddr;
	key.port = udp->dest;
	v = bpf_map_lookup_elem(&unet_udp_ports, &key);
	if (!v)
		return pass();

	/* From here on the datagram is for a U-Net socket. */
	if (frag & IP_MF)
		return drop(UNET_CTR_DROP_IP_FRAGMENT);
	tot_len = bpf_ntohs(ip->tot_len);
	if ((void *)(udp + 1) > data_end || tot_len < hlen + sizeof(*udp) ||
	    (void *)ip + tot_len > data_end)
		return drop(UNET_CTR_DROP_IP_MALFORMED);
	ulen = bpf_ntohs(udp->len);
	if (ulen < sizeof(*udp) || ulen > tot_len - hlen)
		return drop(UNET_CTR_DROP_IP_MALFORMED);

	/* A connected socket hears only its peer, as a connected kernel UDP
	 * socket does; the library checks again. */
	if ((v->remote_addr && v->remote_addr != ip->saddr) ||
	    (v->remote_port && v->remote_port != udp->source)) {
		__sync_fetch_and_add(&v->drop_filter, 1);
		return drop(UNET_CTR_DROP_UDP_FILTER);
	}
	if (redirect_to(ctx, v->endpoint) != XDP_REDIRECT) {
		__sync_fetch_and_add(&v->drop_no_socket, 1);
		return drop(UNET_CTR_DROP_NO_SOCKET);
	}
	__sync_fetch_and_add(&v->delivered, 1);
	__sync_fetch_and_add(&v->delivered_bytes, ulen - sizeof(*udp));
	if_count(UNET_CTR_UDP_DELIVERED);
	return XDP_REDIRECT;
}

/* ARP for IPv4 over Ethernet (RFC 826), the only kind we look at. */
struct unet_arp {
	__be16 htype, ptype;
	__u8 hlen, plen;
	__be16 op;
	__u8 sha[6];
	__u8 spa[4];
	__u8 tha[6];
	__u8 tpa[4];
} __attribute__((packed));

/*
 * ARP whose target is an address with U-Net UDP ports (unet_udp_addrs):
 *   - the sender's address and MAC go into unet_neigh (as the kernel
 *     learns from requests and replies addressed to it), which is how an
 *     endpoint resolving a peer sees the reply even when the frame itself
 *     goes to the kernel;
 *   - if the kernel owns the address, the frame is passed: the kernel
 *     answers requests and keeps its own neighbour table;
 *   - else (UNET_UDP_ADDR_ARP) it goes to the endpoint that registered the
 *     address, which answers requests for it; with no socket of that
 *     endpoint on this queue it is passed (the kernel ignores ARP for an
 *     address it does not have).
 * All other ARP is the kernel's, untouched.
 */
static __always_inline int arp_rx(struct xdp_md *ctx, void *l3, void *data_end)
{
	struct unet_arp *a = l3;
	struct unet_udp_addr_val *av;
	struct unet_neigh_val nv = {};
	__be32 tpa, spa;
	__u16 op;

	if ((void *)(a + 1) > data_end || a->htype != bpf_htons(1) ||
	    a->ptype != bpf_htons(ETH_P_IP) || a->hlen != 6 || a->plen != 4)
		return pass();
	__builtin_memcpy(&tpa, a->tpa, 4);
	av = bpf_map_lookup_elem(&unet_udp_addrs, &tpa);
	if (!av)
		return pass();
	op = bpf_ntohs(a->op);
	__builtin_memcpy(&spa, a->spa, 4);
	/* spa 0 is an address probe (RFC 5227): nothing to learn. */
	if ((op == 1 || op == 2) && spa) {
		__builtin_memcpy(nv.mac, a->sha, 6);
		nv.updated_ns = bpf_ktime_get_ns();
		bpf_map_update_elem(&unet_neigh, &spa, &nv, BPF_ANY);
	}
	if (!(av->flags & UNET_UDP_ADDR_ARP))
		return pass();
	if (redirect_to(ctx, av->endpoint) != XDP_REDIRECT)
		return pass();
	if_count(UNET_CTR_ARP_DELIVERED);
	return XDP_REDIRECT;
}

/* ---- The program -------------------------------------------------------- */

SEC("xdp")
int unet_xdp_rx(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct unet_channel_stats *cs;
	struct unet_channel_val *ch;
	struct unet_endpoint_val *ev;
	struct unet_hdr *uh;
	__u32 tag, queue, idx, slot;
	__u16 proto, len;
	void *payload;
	long act;

	if_count(UNET_CTR_RX);

	/*
	 * Shorter than an Ethernet header: not a frame we can classify, so
	 * not ours; the kernel discards runts itself.  (Drivers do not hand
	 * such frames to XDP and BPF_PROG_TEST_RUN refuses them, so this is
	 * defensive and only makes the verifier happy.)
	 */
	if ((void *)(eth + 1) > data_end) {
		if_count(UNET_CTR_PASS);
		return XDP_PASS;
	}

	proto = eth->h_proto;
	uh = (void *)(eth + 1);

	/* At most one VLAN tag.  With the tag truncated we cannot know what
	 * is inside, so it is not (provably) U-Net: pass.  QinQ frames have
	 * a VLAN TPID as inner type and are passed below as well. */
	if (proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD)) {
		struct unet_vlan_tag *vt = (void *)(eth + 1);

		if ((void *)(vt + 1) > data_end) {
			if_count(UNET_CTR_PASS);
			return XDP_PASS;
		}
		proto = vt->inner_proto;
		uh = (void *)(vt + 1);
	}

	if (proto == bpf_htons(ETH_P_IP))
		return udp_rx(ctx, uh, data_end);
	if (proto == bpf_htons(ETH_P_ARP))
		return arp_rx(ctx, uh, data_end);
	if (proto != bpf_htons(UNET_ETH_P)) {
		if_count(UNET_CTR_PASS);
		return XDP_PASS;
	}

	/* From here on the frame claims to be U-Net: never pass it. */
	if ((void *)(uh + 1) > data_end)
		return drop(UNET_CTR_DROP_MALFORMED);

	/*
	 * Version before length: the meaning of every other header field
	 * belongs to the version, so a frame of another version is counted
	 * as such even if its len looks wrong to us.
	 */
	if (uh->version != UNET_WIRE_VERSION)
		return drop(UNET_CTR_DROP_VERSION);

	/*
	 * len counts the payload only.  It must be non-zero (an empty message
	 * has no use and would hide a zeroed header) and must fit in the
	 * frame; the frame may be longer (Ethernet pads to 60 bytes), and the
	 * padding is not payload.  len is at most 0xffff, so the pointer
	 * arithmetic below stays within the verifier's packet offset range.
	 */
	len = bpf_ntohs(uh->len);
	payload = (void *)(uh + 1);
	if (len == 0 || payload + len > data_end)
		return drop(UNET_CTR_DROP_MALFORMED);

	/* Tag 0 is reserved (UNET_TAG_INVALID) and never a channel: reject it
	 * without a lookup so a stray map entry at 0 can never be used. */
	tag = bpf_ntohs(uh->dst_tag);
	if (tag == UNET_TAG_INVALID)
		return drop(UNET_CTR_DROP_UNKNOWN_TAG);

	ch = bpf_map_lookup_elem(&unet_channels, &tag);
	if (!ch)
		return drop(UNET_CTR_DROP_UNKNOWN_TAG);

	/*
	 * The channel must be owned by the endpoint incarnation now holding
	 * its slot: an entry left by a dead owner whose slot another process
	 * has taken since is never delivered to the newcomer, even before
	 * anyone reclaims it.
	 */
	slot = ch->endpoint;
	ev = bpf_map_lookup_elem(&unet_endpoints, &slot);
	if (!ev || ev->token != ch->owner_token)
		return drop(UNET_CTR_DROP_UNKNOWN_TAG);

	cs = chan_stats(tag);

	/*
	 * Protection: the channel was set up (by the administrator or the
	 * library) for one peer MAC and one peer tag.  Anything else is
	 * someone else speaking on this channel, and the owner must not see
	 * it.  This is the check U-Net's interface did on the tag alone.
	 */
	if (!mac_equal(eth->h_source, ch->peer_mac) || bpf_ntohs(uh->src_tag) != ch->peer_tag) {
		if (cs)
			cs->drop_wrong_src += 1;
		return drop(UNET_CTR_DROP_WRONG_SRC);
	}

	/*
	 * AF_XDP can only take a frame into a socket bound to the queue it
	 * arrived on, so the owning endpoint needs a socket per queue; each
	 * (endpoint, queue) pair has its own XSKMAP slot.  The bounds checks
	 * keep the index inside the map (and catch a corrupt endpoint slot).
	 */
	queue = ctx->rx_queue_index;
	if (queue >= UNET_MAX_QUEUES || ch->endpoint >= UNET_MAX_ENDPOINTS)
		goto no_socket;
	idx = UNET_XSK_INDEX(ch->endpoint, queue);

	/*
	 * The low bits of flags are the action returned when the slot is
	 * empty.  We ask for XDP_ABORTED and treat any answer but
	 * XDP_REDIRECT as "no socket", so an empty slot is counted and
	 * dropped here instead of showing up as an exception.  A full RX
	 * ring after this point is counted by the socket itself
	 * (XDP_STATISTICS rx_dropped / rx_ring_full), not here.
	 */
	act = bpf_redirect_map(&unet_xsks, idx, XDP_ABORTED);
	if (act != XDP_REDIRECT)
		goto no_socket;

	/* Injected loss comes last, so it only ever removes frames that
	 * would have reached their socket: exactly what a lossy wire does.
	 * Returning XDP_DROP after bpf_redirect_map is fine: the redirect
	 * target is only acted on for XDP_REDIRECT. */
	if (fault_drop())
		return drop(UNET_CTR_DROP_INJECTED);

	if (cs) {
		cs->delivered += 1;
		cs->delivered_bytes += len;
	}
	if_count(UNET_CTR_DELIVERED);
	return XDP_REDIRECT;

no_socket:
	if (cs)
		cs->drop_no_socket += 1;
	return drop(UNET_CTR_DROP_NO_SOCKET);
}

/* Only non-GPL helpers are used; dual licence keeps GPL kernels happy. */
char LICENSE[] SEC("license") = "Dual BSD/GPL";
