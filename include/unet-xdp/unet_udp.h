/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet_udp.h - UDP/IPv4 and UDP/IPv6 over U-Net: user-level UDP sockets on an endpoint
 * that talk to ordinary (kernel) UDP sockets on other hosts.
 *
 * The paper's "UDP over U-Net": the XDP program demultiplexes datagrams
 * for a (local address, port) into the owning endpoint's receive queue,
 * beside its U-Net messages; everything else still goes to the kernel.
 * The library builds and checks Ethernet, IPv4 and UDP headers itself and
 * resolves peers with ARP from the endpoint.  Design, XDP rules, ARP,
 * checksums and limits: docs/udp.md.
 *
 * Same error contract as unet.h: int functions return >= 0 or a negative
 * errno, pointer functions NULL with errno set, destructors accept NULL.
 *
 * Byte order: IPv4 addresses are uint32_t in network byte order (as
 * struct in_addr's s_addr, so inet_pton/inet_ntop work on them); ports are
 * uint16_t in host byte order.
 *
 * Receiving: datagrams come out of unet_endpoint__recv() with the U-Net
 * messages, as descriptors with channel == NULL and udp set to the socket
 * (struct unet_recv_desc in unet.h), and go back with
 * unet_endpoint__release().  The payload is 4-byte aligned.
 */
#ifndef UNET_UDP_H
#define UNET_UDP_H

#include <netinet/in.h>

#include "unet.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether to accept a UDP checksum left partial by the sender's kernel
 * (CHECKSUM_PARTIAL: the field holds only the pseudo-header sum; seen on
 * veth, where the frame never met a NIC that would complete it). */
enum unet_udp_partial {
	UNET_UDP_PARTIAL_AUTO = 0, /* accept only on a veth interface */
	UNET_UDP_PARTIAL_ACCEPT,   /* always accept (a virtual link you trust) */
	UNET_UDP_PARTIAL_REJECT,   /* never: count and drop them */
};

struct unet_udp_opts {
	size_t sz;
	/* Connect: hear only this peer and send to it by default.
	 * remote_addr 0: unconnected (any source, every send names its
	 * destination).  remote_port 0 with an address: any port of it. */
	uint32_t remote_addr;
	uint16_t remote_port;
	int tx_queue; /* as unet_channel_opts.tx_queue */
	enum unet_udp_partial partial_csum;
	/* Endpoint-wide ARP settings; 0 keeps the endpoint's current value
	 * (defaults: ttl 60000 ms, timeout 1000 ms). */
	uint32_t arp_ttl_ms;	 /* a resolved MAC is used this long, then re-resolved */
	uint32_t arp_timeout_ms; /* how long a peer is asked (ARP) before it counts as
				  * unreachable (then remembered so for 1 s) */
	/* unet_udp__open6 only: connect to this peer (all zero:
	 * unconnected); remote_port as above.  remote_addr is ignored. */
	struct in6_addr remote_addr6;
	/* SO_REUSEPORT: share the port with other endpoints' sockets that
	 * ask so too, the same user's (IPv4, unconnected only): each gets
	 * the datagrams of the sources hashed to it (docs/unet-run.md). */
	bool reuseport;
};

/*
 * Open a UDP socket on ep for local_addr:local_port (both non-zero; the
 * address need not be the kernel's: then the endpoint answers ARP for it).
 * Installs the port in the interface's unet_udp_ports map: from now on
 * datagrams for it reach this endpoint, not the kernel.  Returns NULL with
 * errno EINVAL, EADDRINUSE (the port is held by a live endpoint, or is the
 * interface's channel port for routable channels: unet_iface__chan_port), ENOSPC
 * (map full), ENOMEM, ...
 */
UNET_API struct unet_udp_sock *unet_udp__open(struct unet_endpoint *ep, uint32_t local_addr,
					      uint16_t local_port,
					      const struct unet_udp_opts *opts);
/* Remove the port from the interface and free the socket. */
UNET_API void unet_udp__close(struct unet_udp_sock *s);

/* Largest payload of one datagram: MTU - 28 (1472 at MTU 1500, 8972 at
 * 9000, the MTU counted up to 9216), as a kernel socket with
 * IP_PMTUDISC_DO.  A datagram larger than one send buffer holds goes out
 * in pieces (unet_udp__send_copy), which needs AF_XDP multi-buffer
 * (unet_endpoint_info.multi_buffer); without it, what one send buffer
 * holds.  0 for s NULL. */
UNET_API uint32_t unet_udp__max_payload(const struct unet_udp_sock *s);

/* Where the UDP payload of send buffer buf goes (buf from
 * unet_endpoint__buf_alloc; the headers are written in front of it by
 * unet_udp__send).  8-byte aligned.  NULL with EINVAL for a buffer the
 * application does not hold. */
UNET_API void *unet_udp__buf_payload(struct unet_endpoint *ep, uint64_t buf);

/*
 * Send len bytes written at unet_udp__buf_payload(buf) to addr:port
 * (addr 0: the connected peer) without a copy.  Never waits for ARP: a
 * peer whose MAC is not known yet gets an ARP request (at most one every
 * 200 ms per peer, 50 a second over all peers) and the call fails with
 * -EAGAIN -- call again (or call unet_udp__resolve to wait); the answer is
 * picked up by the next call.  A peer that has not answered within
 * arp_timeout_ms is remembered as unreachable for 1 s (a negative cache):
 * sends to it fail at once with -EHOSTUNREACH and send no ARP.  The
 * library owns buf from here.  One send buffer carries at most its
 * frame size - 336 bytes of payload (1712 with 2048-byte frames): a
 * larger datagram is unet_udp__send_copy's.  Returns 0, -EMSGSIZE (len
 * 0, > max_payload, or more than the buffer holds), -EDESTADDRREQ (addr 0, not connected), -EAGAIN (peer
 * being resolved, or send queue full), -EHOSTUNREACH (no ARP answer),
 * -EINVAL; on error buf is still the caller's.
 */
UNET_API int unet_udp__send(struct unet_udp_sock *s, uint64_t buf, uint32_t len, uint32_t addr,
			    uint16_t port);
/* Copy data into a segment buffer and send it: up to max_payload bytes,
 * into as many buffers as it needs, queued as one frame in pieces.
 * Returns as unet_udp__send (-EAGAIN also when no buffer is free). */
UNET_API int unet_udp__send_copy(struct unet_udp_sock *s, const void *data, size_t len,
				 uint32_t addr, uint16_t port);

/* Resolve addr (0: the connected peer) now, waiting at most timeout_ms
 * (-1: arp_timeout_ms; 0: one step, no wait), so the first send finds it
 * resolved: the one call that blocks for ARP.  A peer in the negative
 * cache is asked again.  Gives up when timeout_ms or arp_timeout_ms of
 * asking is over, whichever comes first.  Returns 0, -EHOSTUNREACH,
 * -EDESTADDRREQ, -errno. */
UNET_API int unet_udp__resolve(struct unet_udp_sock *s, uint32_t addr, int timeout_ms);

/* The UDP socket a received descriptor came for, or NULL when the
 * descriptor is not a UDP datagram (a U-Net message, another layer's). */
UNET_API struct unet_udp_sock *unet_udp__desc_sock(const struct unet_recv_desc *d);

/* Upcall for this socket's datagrams in unet_endpoint__dispatch (takes
 * precedence over the endpoint's handler). */
UNET_API void unet_udp__set_handler(struct unet_udp_sock *s, unet_recv_handler fn, void *ctx);

/* The endpoint's UDP and ARP counters (all its sockets). */
struct unet_udp_stats {
	uint64_t rx_datagrams, tx_datagrams;
	uint64_t rx_bad_ip_csum;     /* IPv4 header checksum wrong: dropped */
	uint64_t rx_bad_udp_csum;    /* UDP checksum wrong: dropped */
	uint64_t rx_partial_csum;    /* partial checksum accepted (see enum unet_udp_partial) */
	uint64_t rx_partial_refused; /* partial checksum, not accepted: dropped */
	uint64_t rx_malformed;	     /* bad lengths, fragments, malformed ARP:
				      * dropped (IP options are skipped and the
				      * datagram delivered, RFC 1122 3.2.1.8) */
	uint64_t rx_no_socket;	     /* no socket of ours for the port, or filtered */
	uint64_t arp_requests_sent, arp_replies_sent, arp_rx;
	uint64_t arp_failed;	     /* resolutions that timed out */
	uint64_t arp_replies_limited; /* requests not answered: over the reply rate
				       * limit (20 a second, all requesters) */
	uint64_t arp_rejected;	     /* ARP whose sender is forged or not a host's
				      * (sha not the Ethernet source, group or zero
				      * MAC, address 0/broadcast/multicast): not
				      * learnt, not answered */
	uint64_t arp_ignored;	     /* valid ARP not learnt: an unsolicited reply,
				      * an announcement, a request naming another
				      * MAC than a fresh entry's */
	uint64_t tx_unresolved;	     /* sends refused: peer being resolved (-EAGAIN)
				      * or unreachable (-EHOSTUNREACH) */
	uint64_t tx_csum_offload;    /* datagrams sent whose UDP checksum the device
				      * (or the kernel) computes: AF_XDP TX metadata,
				      * unet_endpoint_info.tx_csum_offload */
};
/* Returns 0 or -EINVAL. */
UNET_API int unet_udp__stats(struct unet_endpoint *ep, struct unet_udp_stats *st);

/* ---- IPv6 (docs/udp.md, "IPv6") ------------------------------------------
 *
 * The same sockets over IPv6: open one with unet_udp__open6, send with
 * unet_udp__send6 / unet_udp__send_copy6 (the IPv4 calls refuse an IPv6
 * socket with -EAFNOSUPPORT, and these an IPv4 one).  Received datagrams
 * come out of unet_endpoint__recv as for IPv4, with src_addr 0:
 * unet_udp__desc_src6 gives the sender's address.  Next hops, on the
 * link or through a gateway, are resolved by the kernel's neighbour
 * discovery (the process needs CAP_NET_ADMIN to ask it: endpoints from
 * unetd have no IPv6 sockets yet); an address the kernel does not have is
 * U-Net's, and its endpoint answers neighbour solicitations for it.  The
 * ARP counters of struct unet_udp_stats count neighbour discovery too.
 */

/* Open a UDP socket on ep for [local_addr]:local_port (not the
 * unspecified address, not multicast; port non-zero).  opts as for
 * unet_udp__open, with remote_addr6 instead of remote_addr.  Returns NULL
 * with errno as unet_udp__open, or EOPNOTSUPP (an endpoint from unetd). */
UNET_API struct unet_udp_sock *unet_udp__open6(struct unet_endpoint *ep,
					       const struct in6_addr *local_addr,
					       uint16_t local_port,
					       const struct unet_udp_opts *opts);
/* Largest payload of one IPv6 datagram is MTU - 48 (1452 at MTU 1500):
 * unet_udp__max_payload of an IPv6 socket says so. */

/* As unet_udp__send / unet_udp__send_copy / unet_udp__resolve, to
 * [addr]:port (addr NULL: the connected peer).  The peer's MAC comes from
 * the kernel's neighbour table: -EAGAIN while the kernel resolves it,
 * -EHOSTUNREACH when it failed.  -EAFNOSUPPORT for an IPv4 socket. */
UNET_API int unet_udp__send6(struct unet_udp_sock *s, uint64_t buf, uint32_t len,
			     const struct in6_addr *addr, uint16_t port);
UNET_API int unet_udp__send_copy6(struct unet_udp_sock *s, const void *data, size_t len,
				  const struct in6_addr *addr, uint16_t port);
UNET_API int unet_udp__resolve6(struct unet_udp_sock *s, const struct in6_addr *addr,
				int timeout_ms);

/* The sender's address of a datagram received on an IPv6 socket (*src).
 * Returns 0, or -EINVAL (d is not an IPv6 datagram). */
UNET_API int unet_udp__desc_src6(const struct unet_recv_desc *d, struct in6_addr *src);

/* ---- Administration (unetctl udp ...) ---------------------------------- */

struct unet_udp_entry {
	uint32_t addr;	      /* network order */
	uint16_t port;	      /* host order */
	uint32_t remote_addr; /* network order, 0: any */
	uint16_t remote_port; /* 0: any */
	uint32_t endpoint;    /* owning endpoint slot */
	uint32_t pid;	      /* owning process */
	bool stale;	      /* owning endpoint is gone */
	bool answers_arp;     /* the address is U-Net's: its endpoint answers ARP */
	uint64_t delivered, delivered_bytes, drop_filter, drop_no_socket;
	/* An IPv6 port: addr and remote_addr are 0, these are the addresses
	 * (remote_addr6 all zero: any); answers_arp: answers neighbour
	 * solicitations. */
	bool v6;
	struct in6_addr addr6, remote_addr6;
};

/* Call fn for every UDP port on the interface (in no particular order).
 * Stops when fn returns non-zero and returns that; else 0, or -errno. */
UNET_API int unet_iface__for_each_udp(struct unet_iface *iface,
				      int (*fn)(const struct unet_udp_entry *, void *ctx),
				      void *ctx);
/* Remove a UDP port whoever owns it (its datagrams go to the kernel
 * again).  Returns 0, -ENOENT, -errno. */
UNET_API int unet_iface__udp_del(struct unet_iface *iface, uint32_t addr, uint16_t port);
/* The same for an IPv6 port. */
UNET_API int unet_iface__udp_del6(struct unet_iface *iface, const struct in6_addr *addr,
				  uint16_t port);

#ifdef __cplusplus
}
#endif
#endif /* UNET_UDP_H */
