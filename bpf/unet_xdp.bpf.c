// SPDX-License-Identifier: BSD-2-Clause
/*
 * unet_xdp.bpf.c - the "network interface" half of U-Net: demultiplex
 * incoming frames into the AF_XDP sockets of the endpoints that own them,
 * and leave every other frame to the kernel.
 *
 * This file holds what the whole program shares -- the maps (their names
 * are ABI: the library opens them pinned by name), the interface counters
 * -- and the entry point, which parses Ethernet once and dispatches by
 * EtherType to one handler per protocol:
 *
 *   xdp_unet.h  U-Net frames (UNET_ETH_P): docs/wire-format.md
 *   xdp_chan.h  IPv4: U-Net inside UDP (routable channels): docs/wire-format.md
 *   xdp_chan6.h IPv6: the same inside UDP/IPv6
 *   xdp_dest.h  whether a datagram to the channel port is this host's
 *               or transit (the kernel's FIB): docs/wire-format.md
 *   xdp_udp.h   IPv4: UDP over U-Net: docs/udp.md
 *   xdp_tcp.h   IPv4: TCP over U-Net: docs/tcp.md
 *   xdp_group.h SO_REUSEPORT groups of UDP and TCP ports: docs/unet-run.md
 *   xdp_udp6.h  IPv6: UDP over U-Net, neighbour solicitations: docs/udp.md
 *   xdp_tcp6.h  IPv6: TCP over U-Net: docs/tcp.md, "IPv6"
 *   xdp_arp.h   ARP for U-Net-owned addresses: docs/udp.md
 *   xdp_common.h  helpers they share (MAC compare, redirect)
 *
 * They are headers of static __always_inline functions, included below
 * the maps: one object, one program, one function to the verifier.
 *
 * Per frame: count it (rx); shorter than an Ethernet header -> pass;
 * an 802.1Q / 802.1ad tag -> pass (see below); then by EtherType: U-Net ->
 * unet_rx(), IPv4 -> chan_rx() for the channel port, tcp_rx() for TCP,
 * udp_rx() for the rest, IPv6 -> chan6_rx() for the channel port,
 * tcp6_rx() for TCP, udp6_rx() for the rest, ARP -> arp_rx(), anything else -> pass (untouched).
 *
 * The maps are in unet_abi.h.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "unet_abi.h"

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
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UNET_MAX_TCP_PORTS);
	__type(key, struct unet_tcp_key);
	__type(value, struct unet_tcp_val);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} unet_tcp_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, UNET_MAX_NEIGH);
	__type(key, __be32);
	__type(value, struct unet_neigh_val);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} unet_neigh SEC(".maps");

/* UDP/IPv6 (xdp_udp6.h): ports, and the addresses U-Net owns. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UNET_MAX_UDP_PORTS);
	__type(key, struct unet_udp6_key);
	__type(value, struct unet_udp6_val);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} unet_udp6_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UNET_MAX_UDP_ADDRS);
	__type(key, __u8[16]);
	__type(value, struct unet_udp_addr_val);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} unet_udp6_addrs SEC(".maps");

/* SO_REUSEPORT groups of UDP and TCP ports (xdp_group.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UNET_MAX_PORT_GROUPS);
	__type(key, struct unet_group_key);
	__type(value, struct unet_group_val);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} unet_port_groups SEC(".maps");
/* TCP/IPv6 (xdp_tcp6.h): the IPv6 twin of unet_tcp_ports. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UNET_MAX_TCP_PORTS);
	__type(key, struct unet_tcp6_key);
	__type(value, struct unet_tcp_val);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} unet_tcp6_ports SEC(".maps");

/* Routable channels' configuration (xdp_chan.h), written at attach. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unet_chan_cfg);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} unet_chan_cfg SEC(".maps");

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

/* Count the frame under ctr and drop it. */
static __always_inline int drop(__u32 ctr)
{
	if_count(ctr);
	return XDP_DROP;
}

/* Count the frame as not ours and leave it to the kernel. */
static __always_inline int pass(void)
{
	if_count(UNET_CTR_PASS);
	return XDP_PASS;
}

/* ---- Protocols ----------------------------------------------------------- */

#include "xdp_common.h"
#include "xdp_unet.h"
#include "xdp_group.h"
#include "xdp_udp.h"
#include "xdp_udp6.h"
#include "xdp_dest.h"
#include "xdp_chan.h"
#include "xdp_tcp.h"
#include "xdp_tcp6.h"
#include "xdp_chan6.h"
#include "xdp_arp.h"

/* ---- The program: Ethernet, then dispatch by EtherType -------------------- */

/*
 * Loaded frags-aware (libbpf sets BPF_F_XDP_HAS_FRAGS for "xdp.frags"):
 * without it a driver refuses to attach native XDP to a device whose MTU
 * is larger than one page (veth at MTU 9000: ERANGE), and the kernel
 * drops frames in several pieces before we see them.  Frames may now
 * come in pieces: ctx->data .. ctx->data_end is only the first piece.
 * Every header read below stays inside it, because each is checked
 * against data_end (the verifier enforces that) and never against the
 * frame's total length; a header that does not fit in the first piece
 * is treated as truncated.  The frame's whole length, where a check
 * needs it, comes from bpf_xdp_get_buff_len() and is only compared,
 * never used to read.
 */
SEC("xdp.frags")
int unet_xdp_rx(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	void *l3;

	if_count(UNET_CTR_RX);

	/*
	 * Shorter than an Ethernet header: not a frame we can classify, so
	 * not ours; the kernel discards runts itself.  (Drivers do not hand
	 * such frames to XDP and BPF_PROG_TEST_RUN refuses them, so this is
	 * defensive and only makes the verifier happy.)
	 */
	if ((void *)(eth + 1) > data_end)
		return pass();

	/*
	 * VLANs (unet_abi.h): U-Net and UDP over U-Net take only untagged
	 * frames of the device the program is attached to.  A frame with an
	 * 802.1Q or 802.1ad tag belongs to a VLAN device stacked on this one
	 * (eth0.100), whatever it carries and whatever its VLAN id (0, a
	 * priority tag, included): passed untouched, looked at no further.
	 * (A NIC that strips tags in hardware hands XDP the frame without
	 * its tag; see docs/wire-format.md.)
	 */
	if (eth->h_proto == bpf_htons(ETH_P_8021Q) || eth->h_proto == bpf_htons(ETH_P_8021AD))
		return pass();

	l3 = (void *)(eth + 1);
	if (eth->h_proto == bpf_htons(UNET_ETH_P))
		return unet_rx(ctx, eth, l3, data_end);
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = l3;
		int verdict = chan_rx(ctx, l3, data_end);

		if (verdict != CHAN_NOT_OURS)
			return verdict;

		if ((void *)(ip + 1) <= data_end && ip->protocol == IPPROTO_TCP)
			return tcp_rx(ctx, l3, data_end);
		return udp_rx(ctx, l3, data_end);
	}
	if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = l3;
		int verdict = chan6_rx(ctx, l3, data_end);

		if (verdict != CHAN_NOT_OURS)
			return verdict;
		if ((void *)(ip6 + 1) <= data_end) {
			if (ip6->nexthdr == IPPROTO_TCP)
				return tcp6_rx(ctx, l3, data_end);
			if (ip6_is_exthdr(ip6->nexthdr) && tcp6_behind_exthdr(ip6, data_end))
				return drop(UNET_CTR_DROP_IP6_EXTHDR);
		}
		return udp6_rx(ctx, l3, data_end);
	}
	if (eth->h_proto == bpf_htons(ETH_P_ARP))
		return arp_rx(ctx, eth, l3, data_end);
	return pass();
}

/* Only non-GPL helpers are used; dual licence keeps GPL kernels happy. */
char LICENSE[] SEC("license") = "Dual BSD/GPL";
