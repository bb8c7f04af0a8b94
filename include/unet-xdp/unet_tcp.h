/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet_tcp.h - TCP over U-Net (IPv4 and IPv6): user-level TCP connections on an
 * endpoint that talk to ordinary (kernel) TCP on other hosts.
 *
 * The paper's "TCP over U-Net", on lwIP (Debian's liblwip, 2.1.3) as the
 * TCP engine: the XDP program hands the endpoint the segments for the
 * (address, port) pairs it owns (unet_tcp_ports), everything else stays
 * with the kernel.  Each endpoint is one lwIP network interface; frames
 * go from the endpoint's receive queue into lwIP and out through its send
 * queue.  lwIP runs on the application's thread, inside its calls into
 * the library: these functions, and unet_endpoint__recv, __wait and
 * __dispatch (which run lwIP's timers and retransmissions through the
 * layer progress hook).  No thread of lwIP's runs.  Design, options,
 * copies and limits: docs/tcp.md.
 *
 * Same error contract as unet.h: int and ssize_t functions return >= 0 or
 * a negative errno, pointer functions NULL with errno set, destructors
 * accept NULL.  Addresses are uint32_t in network byte order, ports
 * uint16_t in host byte order.
 *
 * Timeouts (timeout_ms) everywhere: 0 = do not wait (one look at the
 * endpoint's receive queue, then -EAGAIN), -1 = wait for ever, > 0 = at
 * most that long.  While a call waits it drives the endpoint itself with
 * unet_endpoint__dispatch: U-Net messages and UDP datagrams that arrive
 * meanwhile go to their handlers (or are counted as unhandled).  Called
 * from inside a handler, a call does not wait (it cannot dispatch).
 *
 * Threads: one lock inside the library serialises every lwIP call in the
 * process (lwIP is one stack per process); an endpoint is still used by
 * one thread at a time, as everywhere in this library.
 */
#ifndef UNET_TCP_H
#define UNET_TCP_H

#include <netinet/in.h>
#include <sys/types.h>

#include "unet.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A listening socket or a connection. */
struct unet_tcp;

/* Whether to accept a TCP checksum left partial by the sender's kernel
 * (CHECKSUM_PARTIAL: the field holds only the pseudo-header sum; kernel
 * TCP over veth sends them with veth's default offloads), as
 * enum unet_udp_partial does for UDP (docs/tcp.md, "Checksums"). */
enum unet_tcp_partial {
	UNET_TCP_PARTIAL_AUTO = 0, /* accept only on a veth interface */
	UNET_TCP_PARTIAL_ACCEPT,   /* always accept (a virtual link you trust) */
	UNET_TCP_PARTIAL_REJECT,   /* never: count and drop them */
};

struct unet_tcp_opts {
	size_t sz;
	int tx_queue;	  /* as unet_channel_opts.tx_queue */
	uint32_t backlog; /* listen: connections waiting for accept; past
			   * it the ACK that would complete a handshake is
			   * dropped (the peer sends it again).  Half-open
			   * connections take no room: the layer answers
			   * SYNs with SYN cookies (docs/tcp.md).  0: 64; at
			   * most 1024 */
	/* The endpoint's policy, not the socket's: checksums are checked
	 * before a segment is matched to a connection.  The endpoint's first
	 * listen or connect sets it; a later one asking for another policy
	 * than AUTO or the one in force fails with EINVAL. */
	enum unet_tcp_partial partial_csum;
	/* listen: SO_REUSEPORT, share the port with other endpoints'
	 * listeners that ask so too, the same user's: each accepts the
	 * connections hashed to it by the client's address and port
	 * (docs/unet-run.md). */
	bool reuseport;
};

/*
 * Listen on local_addr:local_port (both non-zero).  The address is the
 * kernel's own or one U-Net answers ARP for (as for UDP).  A kernel TCP
 * socket is bound to the same address and port, so no kernel socket can
 * take the port while we hold it (and it goes when we die, SIGKILL
 * included); then the port goes into the interface's unet_tcp_ports.
 * Returns NULL with errno EINVAL, EADDRINUSE (a kernel socket or a live
 * endpoint has it), EADDRNOTAVAIL (another address than the endpoint's
 * first TCP address), EACCES (an endpoint from unetd whose policy does not
 * grant the port: the daemon logs why), ENOSPC, ENOMEM.
 */
UNET_API struct unet_tcp *unet_tcp__listen(struct unet_endpoint *ep, uint32_t local_addr,
					   uint16_t local_port, const struct unet_tcp_opts *opts);
/* The next connection on listener l, waiting up to timeout_ms.  NULL with
 * errno EAGAIN (none yet), EINVAL (not a listener). */
UNET_API struct unet_tcp *unet_tcp__accept(struct unet_tcp *l, int timeout_ms);

/*
 * Connect from local_addr (port chosen by the kernel among its ephemeral
 * ports, and held as for listen) to addr:port, waiting up to timeout_ms
 * for the handshake.  timeout_ms 0 returns at once with the connection
 * in progress: unet_tcp__events() says UNET_TCP_OUT once it is
 * established, UNET_TCP_ERR if it failed (unet_tcp__error says why).
 * NULL with errno ECONNREFUSED, ETIMEDOUT (the handshake did not finish
 * in time: the attempt is aborted), EHOSTUNREACH (no ARP answer), and as
 * unet_tcp__listen.
 */
UNET_API struct unet_tcp *unet_tcp__connect(struct unet_endpoint *ep, uint32_t local_addr,
					    uint32_t addr, uint16_t port,
					    const struct unet_tcp_opts *opts, int timeout_ms);

/* Queue up to len bytes for sending (copied: lwIP keeps them until they
 * are acknowledged), waiting up to timeout_ms until at least one byte
 * fits in the send buffer (64 KiB).  Returns the bytes queued (> 0, may
 * be less than len), -EAGAIN (no room in time), -EPIPE (shut down for
 * sending), -ECONNRESET, -ECONNABORTED, -ETIMEDOUT, -ENOTCONN, -EINVAL. */
UNET_API ssize_t unet_tcp__send(struct unet_tcp *c, const void *data, size_t len,
				int timeout_ms);
/* Copy up to len received bytes to buf, waiting up to timeout_ms for
 * some.  Returns the bytes copied (> 0), 0 at end of stream (the peer
 * sent FIN), -EAGAIN, -ECONNRESET, -ECONNABORTED, -ETIMEDOUT, -EINVAL. */
UNET_API ssize_t unet_tcp__recv(struct unet_tcp *c, void *buf, size_t len, int timeout_ms);

/* Send FIN after what is queued (no more sends).  Returns 0 or -errno. */
UNET_API int unet_tcp__shutdown(struct unet_tcp *c);
/* Close gracefully (FIN; lwIP finishes sending what is queued) and free
 * c.  Unread data makes it a reset, as in the kernel.  A listener's
 * waiting connections are reset.  The port is given back when the last
 * connection using it is closed. */
UNET_API void unet_tcp__close(struct unet_tcp *c);
/* Reset the connection (RST) and free c. */
UNET_API void unet_tcp__abort(struct unet_tcp *c);
/* Keepalive probes on an idle connection (the kernel's SO_KEEPALIVE with
 * TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT, in seconds and probes; the
 * kernel's ranges, else -EINVAL).  A peer that answers none of count
 * probes makes the connection fail with -ETIMEDOUT.  0 or -errno
 * (-ENOTCONN once the connection is gone). */
UNET_API int unet_tcp__keepalive(struct unet_tcp *c, bool on, unsigned int idle_s,
				 unsigned int intvl_s, unsigned int count);
/* The largest segment c sends (the kernel's TCP_MAXSEG): agreed in the
 * handshake, bounded by the route's MTU.  0 for a listener or once the
 * connection is gone. */
UNET_API unsigned int unet_tcp__mss(const struct unet_tcp *c);
/* The IPv4 TOS byte of c's segments from now on (the kernel's IP_TOS).
 * 0 or -errno. */
UNET_API int unet_tcp__set_tos(struct unet_tcp *c, uint8_t tos);

/* What c is ready for, without waiting.  Segments are taken off the
 * receive queue by unet_endpoint__recv and __dispatch (and by the calls
 * here); unet_endpoint__wait only sleeps until there are some (and runs
 * the timers), so an event loop waits, then dispatches, then looks. */
#define UNET_TCP_IN 1u	/* data or end of stream to read; a listener: a connection */
#define UNET_TCP_OUT 2u /* connected, with room in the send buffer */
#define UNET_TCP_ERR 4u /* reset, aborted or timed out: unet_tcp__error */
#define UNET_TCP_HUP 8u /* the peer sent FIN (reading gives 0 once drained) */
UNET_API unsigned int unet_tcp__events(const struct unet_tcp *c);
/* A count that moves each time something arrives that makes c readable
 * (data, the peer's FIN, an error; a listener: a connection), whether or
 * not the last arrival was read.  An edge-triggered event loop compares
 * it with the value at its last report: the events alone cannot tell new
 * input from input already reported. */
UNET_API uint64_t unet_tcp__arrivals(const struct unet_tcp *c);
/* The connection's error (-ECONNRESET, ...), 0 if none. */
UNET_API int unet_tcp__error(const struct unet_tcp *c);
/* Bytes sent but not yet acknowledged, or queued. */
UNET_API size_t unet_tcp__unacked(const struct unet_tcp *c);
/* Local and remote ports (host order), remote address (network order). */
UNET_API uint16_t unet_tcp__local_port(const struct unet_tcp *c);
UNET_API uint16_t unet_tcp__remote_port(const struct unet_tcp *c);
UNET_API uint32_t unet_tcp__remote_addr(const struct unet_tcp *c);

/* ---- IPv6 (docs/tcp.md, "IPv6") ------------------------------------------
 *
 * The same connections over IPv6: listen with unet_tcp__listen6, connect
 * with unet_tcp__connect6; accept, send, recv, close and the rest are the
 * same calls.  An endpoint has at most one IPv4 and one IPv6 TCP address.
 * The local address is global or unique-local (not link-local: no zone),
 * the kernel's own or one U-Net answers neighbour solicitations for.
 * Next hops and the route's MTU come from the kernel's IPv6 tables; the
 * MSS is the route's MTU - 60.  Endpoints from unetd have no IPv6 TCP
 * yet (EOPNOTSUPP), as for UDP.
 */

/* As unet_tcp__listen on [local_addr]:local_port.  Also EADDRNOTAVAIL
 * (link-local, multicast, ::, or another IPv6 address than the
 * endpoint's first), EOPNOTSUPP (an endpoint from unetd). */
UNET_API struct unet_tcp *unet_tcp__listen6(struct unet_endpoint *ep,
					    const struct in6_addr *local_addr,
					    uint16_t local_port, const struct unet_tcp_opts *opts);
/* As unet_tcp__connect from [local_addr] to [addr]:port.  EHOSTUNREACH:
 * the kernel's neighbour discovery found no next hop. */
UNET_API struct unet_tcp *unet_tcp__connect6(struct unet_endpoint *ep,
					     const struct in6_addr *local_addr,
					     const struct in6_addr *addr, uint16_t port,
					     const struct unet_tcp_opts *opts, int timeout_ms);
/* c's remote address (*addr).  0, or -EAFNOSUPPORT (an IPv4 connection:
 * unet_tcp__remote_addr), -EINVAL (a listener, or NULL). */
UNET_API int unet_tcp__remote_addr6(const struct unet_tcp *c, struct in6_addr *addr);
/* Whether c is IPv6. */
UNET_API bool unet_tcp__is_v6(const struct unet_tcp *c);

/* Connections of ep the application closed whose data or FIN the peer
 * has not acknowledged yet: lwIP still sends them, as the kernel does
 * after close(), but only while the process lives and drives the
 * endpoint.  A process about to exit waits until this is 0 (bounded):
 * unet-run does so at exit. */
UNET_API unsigned int unet_tcp__closing(struct unet_endpoint *ep);

/* The endpoint's TCP counters (all its connections). */
struct unet_tcp_stats {
	uint64_t rx_frames;	    /* IPv4/TCP frames handed to lwIP */
	uint64_t rx_arp;	    /* ARP frames handed to lwIP */
	uint64_t rx_not_ours;	    /* IPv4 for another address, or not TCP: dropped */
	uint64_t rx_malformed;	    /* shorter than the IP header says, or a
				     * sequence number lwIP cannot take
				     * (docs/tcp.md): dropped */
	uint64_t rx_syn_dropped;    /* SYNs not answered (no send buffer), and
				     * ACKs for a valid cookie over the
				     * listener's backlog or the connection
				     * limit: dropped (docs/tcp.md, SYN floods) */
	uint64_t accept_refused;    /* handshakes completed over the backlog: reset */
	uint64_t tx_frames;	    /* frames put on the send queue */
	uint64_t tx_busy;	    /* frames lwIP could not send (no buffer, queue
				     * full): it sends them again */
	uint64_t tx_unresolved;	    /* frames held or dropped waiting for ARP */
	uint64_t arp_requests;	    /* ARP requests sent */
	uint64_t connections;	    /* connections open now (not listeners) */
	/* Every segment the layer drops, or lwIP drops after it, by reason
	 * (with rx_not_ours, rx_malformed, rx_syn_dropped above): */
	uint64_t rx_bad_csum;	     /* wrong IPv4 header or TCP checksum: dropped */
	uint64_t rx_partial_csum;    /* partial TCP checksum (enum unet_tcp_partial)
				      * accepted: completed, handed to lwIP */
	uint64_t rx_partial_refused; /* partial checksum not accepted: dropped */
	uint64_t rx_no_conn;	     /* handed to lwIP, for no connection (or a
				      * listener, not a SYN): lwIP answers with
				      * a reset unless it is one, and drops it */
	uint64_t rx_out_of_window;   /* handed to lwIP, a connection's, but its
				      * data or RST outside the receive window:
				      * lwIP answers with an ACK and drops it */
	uint64_t rx_nomem;	     /* no memory for lwIP's copy: dropped */
	uint64_t rx_syn_cookies;     /* SYNs for a listener answered with a
				      * SYN cookie (none reach lwIP) */
	uint64_t syn_cookie_conns;   /* connections made from a valid cookie */
	uint64_t rx_ooseq_dropped;   /* out-of-order data shorter than 512
				      * bytes: dropped (docs/tcp.md, Memory) */
	uint64_t rx_mem_dropped;     /* data while the endpoint's receive queues
				      * hold more than 64 MiB: dropped */
	uint64_t rx_gso;	     /* GSO super-segments (skb mode, partial
				      * checksum, longer than the MTU) cut into
				      * segments, each counted in rx_frames */
};
/* Returns 0 or -EINVAL. */
UNET_API int unet_tcp__stats(struct unet_endpoint *ep, struct unet_tcp_stats *st);

/* ---- Administration (unetctl tcp ...) ---------------------------------- */

struct unet_tcp_entry {
	uint32_t addr;	   /* network order */
	uint16_t port;	   /* host order */
	bool listen;	   /* a listening port (else a connection's) */
	uint32_t endpoint; /* owning endpoint slot */
	uint32_t pid;	   /* owning process */
	bool stale;	   /* owning endpoint is gone */
	uint64_t delivered, delivered_bytes, drop_no_socket, drop_injected;
	/* An IPv6 port: addr is 0, addr6 is the address. */
	bool v6;
	struct in6_addr addr6;
};

/* Call fn for every U-Net TCP port on the interface (in no particular
 * order).  Stops when fn returns non-zero and returns that; else 0, or
 * -errno. */
UNET_API int unet_iface__for_each_tcp(struct unet_iface *iface,
				      int (*fn)(const struct unet_tcp_entry *, void *ctx),
				      void *ctx);
/* Remove a TCP port whoever owns it (its segments go to the kernel
 * again).  Returns 0, -ENOENT, -errno. */
UNET_API int unet_iface__tcp_del(struct unet_iface *iface, uint32_t addr, uint16_t port);
/* The same for an IPv6 port. */
UNET_API int unet_iface__tcp_del6(struct unet_iface *iface, const struct in6_addr *addr,
				  uint16_t port);

#ifdef __cplusplus
}
#endif
#endif /* UNET_TCP_H */
