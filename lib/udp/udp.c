/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * udp.c - UDP/IPv4 sockets on a U-Net endpoint (unet_udp.h, docs/udp.md).
 *
 * A socket is a (local address, port) in the interface's unet_udp_ports
 * map, so the XDP program puts its datagrams on the endpoint's receive
 * queue; unet_take_frame() in lib/core/rx_frame.c offers every
 * non-U-Net frame (whole: reassembled if it came in pieces) to
 * udp_layer_rx() here, which checks it (lengths, IP and UDP checksums)
 * and turns it into a receive descriptor, or answers it (ARP).  Sending
 * writes Ethernet, IPv4 and UDP headers in front of the payload in the
 * segment buffer and puts the frame on the TX ring, as U-Net sends do.
 *
 * Peers are resolved with ARP requests sent from the endpoint.  Replies
 * are learnt by the XDP program into the unet_neigh map whether the frame
 * then goes to the kernel (the kernel owns our address) or to us; the
 * resolver reads that map, so it never has to take frames off the
 * receive queue that belong to the application.  Resolution never blocks
 * a send: a send to a peer being resolved fails with -EAGAIN (and asks
 * again every 200 ms), one that did not answer with -EHOSTUNREACH for a
 * while (arp.c's negative cache); only unet_udp__resolve waits.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "core/layer.h"
#include "inet/inet.h"
#include "proto/unetd_proto.h"
#include "udp/udp_impl.h"

#define DEFAULT_ARP_TTL_MS 60000u
#define ARP_REPLY_RATE UNET_UDP_REPLY_RATE

static const uint8_t BCAST_MAC[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

/* ---- Frames ---------------------------------------------------------------- */

/* Ethernet, IPv4 and UDP headers (UNET_UDP_HDRS bytes) at frame for the
 * len payload bytes at payload (anywhere: right after the headers, or in
 * the caller's memory for a frame sent in pieces).  The IP checksum is
 * complete; the UDP one too, or with device_csum only the pseudo-header
 * sum, for the device to finish (payload is not read then).  Returns
 * the frame's length, unpadded. */
static uint32_t udp_headers(uint8_t *frame, const uint8_t *payload, const uint8_t dst_mac[6],
			    const uint8_t src_mac[6], uint32_t saddr, uint32_t daddr,
			    uint16_t sport, uint16_t dport, uint32_t len, uint16_t ip_id,
			    bool device_csum)
{
	uint8_t *ip = frame + UNET_ETH_HLEN, *udp = ip + UNET_IP_HLEN;
	uint16_t v, ulen = (uint16_t)(UNET_UDP_HLEN + len), csum;
	uint64_t sum;

	memcpy(frame, dst_mac, 6);
	memcpy(frame + 6, src_mac, 6);
	v = htons(UNET_ETH_P_IP);
	memcpy(frame + 12, &v, 2);

	ip[0] = 0x45; /* version 4, 5 words: we send no options */
	ip[1] = 0;    /* DSCP/ECN */
	v = htons((uint16_t)(UNET_IP_HLEN + ulen));
	memcpy(ip + 2, &v, 2);
	v = htons(ip_id);
	memcpy(ip + 4, &v, 2);
	v = htons(0x4000); /* DF: we never fragment */
	memcpy(ip + 6, &v, 2);
	ip[8] = 64; /* TTL */
	ip[9] = IPPROTO_UDP;
	memset(ip + 10, 0, 2);
	memcpy(ip + 12, &saddr, 4);
	memcpy(ip + 16, &daddr, 4);
	csum = htons((uint16_t)~unet_csum_fold(unet_csum_add(0, ip, UNET_IP_HLEN)));
	memcpy(ip + 10, &csum, 2);

	v = htons(sport);
	memcpy(udp, &v, 2);
	v = htons(dport);
	memcpy(udp + 2, &v, 2);
	v = htons(ulen);
	memcpy(udp + 4, &v, 2);
	memset(udp + 6, 0, 2);
	sum = unet_csum_pseudo(saddr, daddr, IPPROTO_UDP, ulen);
	if (device_csum) {
		/* The device sums from the UDP header on, this included,
		 * and stores the complement (0 as 0xffff, as we would). */
		csum = unet_csum_fold(sum);
	} else {
		/* The header's 8 bytes are even: the payload's sum goes on
		 * from there as if it followed in memory. */
		sum = unet_csum_add(sum, udp, UNET_UDP_HLEN);
		sum = unet_csum_add(sum, payload, len);
		csum = (uint16_t)~unet_csum_fold(sum);
		/* 0 means "no checksum" in UDP over IPv4: send its other form. */
		if (!csum)
			csum = 0xffff;
	}
	csum = htons(csum);
	memcpy(udp + 6, &csum, 2);
	return UNET_UDP_HDRS + len;
}

/* A frame in one buffer: the headers before the payload already at
 * frame + UNET_UDP_HDRS, padded to Ethernet's minimum. */
static uint32_t build(uint8_t *frame, const uint8_t dst_mac[6], const uint8_t src_mac[6],
		      uint32_t saddr, uint32_t daddr, uint16_t sport, uint16_t dport, uint32_t len,
		      uint16_t ip_id, bool device_csum)
{
	uint32_t flen = udp_headers(frame, frame + UNET_UDP_HDRS, dst_mac, src_mac, saddr, daddr,
				    sport, dport, len, ip_id, device_csum);

	if (flen < 60) {
		memset(frame + flen, 0, 60 - flen);
		flen = 60;
	}
	return flen;
}

uint32_t unet_udp_build(uint8_t *frame, const uint8_t dst_mac[6], const uint8_t src_mac[6],
			uint32_t saddr, uint32_t daddr, uint16_t sport, uint16_t dport,
			uint32_t len, uint16_t ip_id)
{
	return build(frame, dst_mac, src_mac, saddr, daddr, sport, dport, len, ip_id, false);
}

uint32_t unet_udp_build_offload(uint8_t *frame, const uint8_t dst_mac[6],
				const uint8_t src_mac[6], uint32_t saddr, uint32_t daddr,
				uint16_t sport, uint16_t dport, uint32_t len, uint16_t ip_id)
{
	return build(frame, dst_mac, src_mac, saddr, daddr, sport, dport, len, ip_id, true);
}

enum unet_udp_verdict unet_udp_parse(const uint8_t *frame, uint32_t len, bool accept_partial,
				     struct unet_udp_frame *f)
{
	uint32_t off = 12, hlen, tot_len, ulen;
	uint16_t proto, frag, check, v;
	const uint8_t *ip, *udp;
	uint64_t sum;

	memset(f, 0, sizeof(*f));
	if (len < UNET_ETH_HLEN)
		return UNET_UDP_NOT_UDP;
	memcpy(&proto, frame + off, 2);
	off += 2;
	if (proto == htons(0x8100) || proto == htons(0x88A8)) {
		if (len < off + 4)
			return UNET_UDP_NOT_UDP;
		memcpy(&proto, frame + off + 2, 2);
		off += 4;
	}
	if (proto != htons(UNET_ETH_P_IP))
		return UNET_UDP_NOT_UDP;
	ip = frame + off;
	if (len < off + UNET_IP_HLEN || ip[0] >> 4 != 4)
		return UNET_UDP_MALFORMED;
	if (ip[9] != IPPROTO_UDP)
		return UNET_UDP_NOT_UDP;
	hlen = (ip[0] & 0xf) * 4u;
	memcpy(&f->saddr, ip + 12, 4);
	memcpy(&f->daddr, ip + 16, 4);
	if (hlen < UNET_IP_HLEN || len < off + hlen + UNET_UDP_HLEN)
		return UNET_UDP_MALFORMED;
	udp = ip + hlen;
	memcpy(&v, udp, 2);
	f->sport = ntohs(v);
	memcpy(&v, udp + 2, 2);
	f->dport = ntohs(v);

	memcpy(&v, ip + 2, 2);
	tot_len = ntohs(v);
	memcpy(&v, ip + 6, 2);
	frag = ntohs(v);
	/* Padding after tot_len (Ethernet minimum) is allowed, a frame
	 * shorter than tot_len is not; fragments are not reassembled. */
	if (tot_len < hlen + UNET_UDP_HLEN || tot_len > len - off || (frag & 0x3fff))
		return UNET_UDP_MALFORMED;
	if (unet_csum_fold(unet_csum_add(0, ip, hlen)) != 0xffff)
		return UNET_UDP_BAD_IP_CSUM;
	memcpy(&v, udp + 4, 2);
	ulen = ntohs(v);
	if (ulen < UNET_UDP_HLEN || ulen > tot_len - hlen)
		return UNET_UDP_MALFORMED;

	memcpy(&check, udp + 6, 2);
	check = ntohs(check);
	if (check) { /* 0: the sender computed none (allowed over IPv4) */
		uint64_t pseudo = unet_csum_pseudo(f->saddr, f->daddr, IPPROTO_UDP, (uint16_t)ulen);

		sum = unet_csum_add(pseudo, udp, ulen);
		if (unet_csum_fold(sum) != 0xffff) {
			/*
			 * CHECKSUM_PARTIAL: the sender's kernel left the
			 * field holding the folded pseudo-header sum for a
			 * NIC to complete, and on veth there was none.  The
			 * field then equals exactly that sum (docs/udp.md).
			 */
			if (check != unet_csum_fold(pseudo))
				return UNET_UDP_BAD_UDP_CSUM;
			if (!accept_partial)
				return UNET_UDP_PARTIAL_REFUSED;
			f->partial = true;
		}
	}
	f->payload_off = (uint32_t)(udp - frame) + UNET_UDP_HLEN;
	f->len = ulen - UNET_UDP_HLEN;
	return UNET_UDP_OK;
}

/* ---- The endpoint's UDP state --------------------------------------------- */

static const struct unet_layer udp_layer;

/* The endpoint's UDP state: attached to it as a layer when the first
 * socket opens (NULL with errno if that fails).  An endpoint from unetd
 * has no interface (inet.iface NULL): its ports are asked of the daemon,
 * which also hands over the neighbour map (read-only) with the first. */
struct unet_udp_state *unet_udp_state_get(struct unet_endpoint *ep)
{
	struct unet_udp_state *st = unet_layer_state(ep, &udp_layer);
	int err;

	if (st)
		return st;
	st = calloc(1, sizeof(*st));
	if (!st) {
		errno = ENOMEM;
		return NULL;
	}
	err = unet_inet_ep_init(&st->inet, ep);
	if (err) {
		free(st);
		errno = -err;
		return NULL;
	}
	unet_arp_cache_init(&st->arp, DEFAULT_ARP_TTL_MS * 1000000ull);
	unet_inet_routes_init(&st->routes);
	unet_inet6_routes_init(&st->routes6);
	st->ip_id = (uint16_t)(getpid() ^ (uint32_t)unet_inet_now_ns());
	err = unet_layer_attach(ep, &udp_layer, st);
	if (err) {
		unet_inet_ep_fini(&st->inet);
		free(st);
		errno = -err;
		return NULL;
	}
	return st;
}

static struct unet_udp_sock *find_sock(struct unet_udp_state *st, uint32_t laddr, uint16_t lport)
{
	for (struct unet_udp_sock *s = st ? st->socks : NULL; s; s = s->next)
		if (!s->v6 && s->laddr == laddr && s->lport == lport)
			return s;
	return NULL;
}

/* Register s's port and address in the interface's maps ourselves (we
 * are root and opened them). */
static int port_open_local(struct unet_udp_state *st, struct unet_udp_sock *s)
{
	int err = s->reuseport ? unet_udp_port_join(st->inet.iface, st->inet.slot, s->laddr,
						    s->lport, (uint32_t)geteuid())
			       : unet_udp_port_add(st->inet.iface, st->inet.slot, s->laddr, s->lport,
						   s->raddr, s->rport);

	/* Another user's group, or this endpoint in it already (the
	 * process shares its own socket: run/): EADDRINUSE, as the kernel
	 * answers. */
	if (err == -EACCES || err == -EEXIST)
		err = -EADDRINUSE;

	if (err)
		return err;
	/* The address: the kernel's (it answers ARP, we only learn from it),
	 * or ours to answer for -- decided here, once: the receive path
	 * never walks the kernel's addresses.  A live endpoint that
	 * registered it first keeps it. */
	s->kernel_addr = unet_inet_kernel_addr(s->laddr);
	err = unet_inet_addr_claim(st->inet.iface, st->inet.slot, s->laddr,
				  s->kernel_addr ? 0 : UNET_INET_ADDR_ARP);
	if (err < 0) {
		unet_udp_port_remove(st->inet.iface, st->inet.slot, s->laddr, s->lport);
		return err;
	}
	s->owns_addr = err == 1;
	return 0;
}

/* Ask unetd: it checks the port against its policy, decides about the
 * address in the device's namespace, registers both, and gives us the
 * neighbour map to read (the first time; later ones are the same map). */
static int port_open_remote(struct unet_udp_state *st, struct unet_udp_sock *s)
{
	struct unetd_udp_open req = { .ep = unet_layer_daemon_ep(st->inet.ep),
				      .laddr = s->laddr,
				      .raddr = s->raddr,
				      .lport = s->lport,
				      .rport = s->rport };
	struct unetd_udp_opened rep;
	int fd = -1, err;

	err = unet_layer_daemon_call(st->inet.ep,
				     s->reuseport ? UNETD_REQ_UDP_OPEN_GROUP : UNETD_REQ_UDP_OPEN,
				     &req, sizeof(req), &rep, sizeof(rep), &fd);
	if (err)
		return err;
	if (st->inet.neigh_fd < 0)
		st->inet.neigh_fd = fd;
	else if (fd >= 0)
		close(fd);
	if (st->inet.neigh_fd < 0)
		return -EPROTO;
	s->kernel_addr = rep.kernel_addr;
	s->owns_addr = rep.owns_addr;
	return 0;
}

struct unet_udp_sock *unet_udp__open(struct unet_endpoint *ep, uint32_t local_addr,
				     uint16_t local_port, const struct unet_udp_opts *opts)
{
	struct unet_udp_state *st;
	struct unet_udp_sock *s;
	enum unet_udp_partial partial;
	uint32_t ttl_ms, timeout_ms, txq = 0;
	int tx_queue, err;

	if (!ep || !local_addr || !local_port || (opts && opts->sz < sizeof(size_t))) {
		errno = EINVAL;
		return NULL;
	}
	partial = UNET_OPT(opts, partial_csum, UNET_UDP_PARTIAL_AUTO);
	tx_queue = UNET_OPT(opts, tx_queue, 0);
	if ((unsigned)partial > UNET_UDP_PARTIAL_REJECT) {
		errno = EINVAL;
		return NULL;
	}
	if (tx_queue > 0) {
		int i = unet_layer_txq(ep, tx_queue);

		if (i < 0) {
			unet_log(UNET_LOG_ERROR, "tx_queue %d: not a queue of this endpoint",
				 tx_queue);
			errno = EINVAL;
			return NULL;
		}
		txq = (uint32_t)i;
	}
	/* The interface's channel port belongs to routable channels
	 * (docs/wire-format.md): the XDP program never hands a datagram to
	 * it to a UDP socket. */
	if (unet_layer_iface(ep) && unet_iface__chan_port(unet_layer_iface(ep)) == local_port) {
		unet_log(UNET_LOG_ERROR, "UDP port %u is the interface's channel port", local_port);
		errno = EADDRINUSE;
		return NULL;
	}
	st = unet_udp_state_get(ep);
	if (!st)
		return NULL;
	if (find_sock(st, local_addr, local_port)) {
		errno = EADDRINUSE;
		return NULL;
	}
	ttl_ms = UNET_OPT(opts, arp_ttl_ms, 0);
	timeout_ms = UNET_OPT(opts, arp_timeout_ms, 0);
	if (ttl_ms)
		st->arp.ttl_ns = ttl_ms * 1000000ull;
	if (timeout_ms)
		st->arp.timeout_ns = timeout_ms * 1000000ull;

	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->laddr = local_addr;
	s->lport = local_port;
	s->raddr = UNET_OPT(opts, remote_addr, 0);
	s->rport = s->raddr ? UNET_OPT(opts, remote_port, 0) : 0;
	s->reuseport = UNET_OPT(opts, reuseport, false);
	if (s->reuseport && s->raddr) {
		free(s);
		errno = EINVAL; /* a group's members hear every source */
		return NULL;
	}
	s->txq = txq;
	s->st = st;
	s->accept_partial = partial == UNET_UDP_PARTIAL_ACCEPT ||
			    (partial == UNET_UDP_PARTIAL_AUTO && unet_inet_is_veth(st->inet.ifname));

	err = st->inet.iface ? port_open_local(st, s) : port_open_remote(st, s);
	if (err) {
		free(s);
		errno = -err;
		return NULL;
	}
	s->next = st->socks;
	st->socks = s;
	unet_log(UNET_LOG_INFO, "%s: UDP port %u on endpoint %u%s", st->inet.ifname, local_port,
		 st->inet.slot, s->accept_partial ? " (partial checksums accepted)" : "");
	return s;
}

void unet_udp__close(struct unet_udp_sock *s)
{
	struct unet_udp_state *st;
	bool addr_used = false;

	if (!s)
		return;
	st = s->st;
	for (struct unet_udp_sock **pp = &st->socks; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	if (s->v6) {
		st->v6->close_maps(s); /* an IPv6 socket plugged it in */
		free(s);
		return;
	}
	if (!st->inet.iface) {
		/* The daemon releases the address with its last port. */
		struct unetd_udp_close req = { .ep = unet_layer_daemon_ep(st->inet.ep),
					       .laddr = s->laddr,
					       .lport = s->lport };

		unet_layer_daemon_call(st->inet.ep, UNETD_REQ_UDP_CLOSE, &req, sizeof(req), NULL, 0,
				       NULL);
		free(s);
		return;
	}
	unet_udp_port_remove(st->inet.iface, st->inet.slot, s->laddr, s->lport);
	for (struct unet_udp_sock *o = st->socks; o; o = o->next)
		if (o->laddr == s->laddr) {
			addr_used = true;
			/* Another socket keeps the registration alive. */
			if (s->owns_addr)
				o->owns_addr = true;
			break;
		}
	if (!addr_used)
		unet_inet_addr_release(st->inet.iface, st->inet.slot, s->laddr);
	free(s);
}

/* The endpoint is going: close every socket. */
static void udp_layer_destroy(void *state)
{
	struct unet_udp_state *st = state;

	while (st->socks)
		unet_udp__close(st->socks);
	unet_inet_ep_fini(&st->inet);
	free(st);
}

/* Payload bytes one send buffer holds (unet_udp__send): the frame
 * starts UNET_UDP_TX_PAD into it, and the kernel keeps its headroom. */
static uint32_t buf_room(const struct unet_udp_state *st)
{
	return st->inet.frame_size - XDP_PACKET_HEADROOM - UNET_UDP_TX_PAYLOAD;
}

uint32_t unet_udp__max_payload(const struct unet_udp_sock *s)
{
	uint32_t m;

	if (!s)
		return 0;
	/* The MTU counts IP and UDP headers.  A larger datagram than one
	 * send buffer holds goes in pieces (unet_udp__send_copy) when the
	 * endpoint has multi-buffer; without it, and for IPv6 (whose sends
	 * are one buffer each), one buffer is the limit. */
	m = s->st->inet.mtu - (s->v6 ? UNET_IP6_HLEN : UNET_IP_HLEN) - UNET_UDP_HLEN;
	if ((s->v6 || !unet_layer_multi_buffer(s->st->inet.ep)) && m > buf_room(s->st))
		m = buf_room(s->st);
	return m;
}

void *unet_udp__buf_payload(struct unet_endpoint *ep, uint64_t buf)
{
	uint8_t *p = ep ? unet_layer_buf(ep, buf) : NULL;

	if (!p) {
		errno = EINVAL;
		return NULL;
	}
	return p + UNET_UDP_TX_PAYLOAD;
}

void unet_udp__set_handler(struct unet_udp_sock *s, unet_recv_handler fn, void *ctx)
{
	if (!s)
		return;
	s->handler = fn;
	s->handler_ctx = ctx;
}

struct unet_udp_sock *unet_udp__desc_sock(const struct unet_recv_desc *d)
{
	if (!d || d->layer != &udp_layer)
		return NULL;
	return d->sock;
}

static unet_recv_handler udp_layer_handler(void *state, const struct unet_recv_desc *d,
					   void **ctx)
{
	struct unet_udp_sock *s = unet_udp__desc_sock(d);

	(void)state;
	if (!s || !s->handler)
		return NULL;
	*ctx = s->handler_ctx;
	return s->handler;
}

int unet_udp__stats(struct unet_endpoint *ep, struct unet_udp_stats *st)
{
	struct unet_udp_state *us;

	if (!ep || !st)
		return -EINVAL;
	us = unet_layer_state(ep, &udp_layer);
	if (us)
		*st = us->st;
	else
		memset(st, 0, sizeof(*st));
	return 0;
}

/* ---- Sending ----------------------------------------------------------------- */

static int send_arp(struct unet_udp_state *st, uint32_t txq, const uint8_t eth_dst[6],
		    const struct unet_arp_msg *m)
{
	uint64_t buf = unet_endpoint__buf_alloc(st->inet.ep);
	uint32_t flen;
	int err;

	if (buf == UNET_NO_BUF)
		return -EAGAIN;
	flen = unet_arp_build(unet_layer_buf(st->inet.ep, buf) + UNET_UDP_TX_PAD, eth_dst, m);
	err = unet_layer_xmit(st->inet.ep, txq, buf, UNET_UDP_TX_PAD, flen);
	if (err)
		unet_endpoint__buf_free(st->inet.ep, buf);
	return err;
}

/* The neighbour the XDP program learnt for ip, if younger than the TTL. */
static bool neigh_lookup(struct unet_udp_state *st, uint32_t ip, uint64_t now, uint8_t mac[6],
			 uint64_t *when)
{
	return unet_inet_neigh(st->inet.neigh_fd, ip, now, st->arp.ttl_ns, mac, when) == 0;
}

/*
 * One step of resolving ip for s, never waiting: the cache, the
 * interface's neighbour map, else the resolver's state (arp.c): ask (an
 * ARP request, rate-limited per peer and overall), wait, or give up.
 * Returns 0 (*mac set), -EAGAIN (being resolved: try again),
 * -EHOSTUNREACH (no answer; remembered for a while).
 */
static int resolve_step(struct unet_udp_sock *s, uint32_t ip, uint64_t now, uint8_t mac[6],
			uint32_t *mtu)
{
	struct unet_udp_state *st = s->st;
	struct unet_inet_hop *h;
	struct unet_arp_msg m;
	uint64_t when;
	int err;

	if (mtu)
		*mtu = st->inet.mtu;
	if (ip == INADDR_BROADCAST) {
		memcpy(mac, BCAST_MAC, 6);
		return 0;
	}
	/* The kernel's routing table: which way, how large (docs/udp.md,
	 * "Routing").  A lookup that fails for another reason than "not by
	 * this interface" or "unreachable" leaves the peer on the link. */
	h = unet_inet_route(&st->routes, &st->inet, ip, s->kernel_addr ? s->laddr : 0, now);
	if (mtu)
		*mtu = h->mtu;
	if (h->err == -ENETUNREACH || h->err == -EHOSTUNREACH || h->err == -EAGAIN)
		return h->err;
	if (h->gateway) {
		err = unet_inet_hop_mac(&st->routes, &st->inet, h, now, mac);
		if (err != -EPERM && err != -EACCES)
			return err;
		/* not allowed to make the kernel resolve it: ARP for the
		 * gateway ourselves, as for a peer on the link */
		ip = h->via;
	}
	if (!unet_arp_cache_lookup(&st->arp, ip, now, mac))
		return 0;
	/* The negative cache answers without a system call. */
	if (!unet_arp_cache_unreachable(&st->arp, ip, now) &&
	    neigh_lookup(st, ip, now, mac, &when)) {
		unet_arp_cache_update(&st->arp, ip, mac, when);
		return 0;
	}
	switch (unet_arp_cache_next(&st->arp, ip, now, mac)) {
	case UNET_ARP_USE:
		return 0;
	case UNET_ARP_WAIT:
		return -EAGAIN;
	case UNET_ARP_UNREACH:
		return -EHOSTUNREACH;
	case UNET_ARP_GAVE_UP:
		st->st.arp_failed++;
		unet_log(UNET_LOG_WARN, "%s: no ARP answer for %s", st->inet.ifname,
			 inet_ntoa((struct in_addr){ .s_addr = ip }));
		return -EHOSTUNREACH;
	case UNET_ARP_ASK:
		break;
	}
	/* Our address may have lost its registration (the endpoint that
	 * held it closed): without one the XDP program learns nothing for
	 * it, so take it over. */
	if (!s->owns_addr && st->inet.iface &&
	    unet_inet_addr_claim(st->inet.iface, st->inet.slot, s->laddr,
				s->kernel_addr ? 0 : UNET_INET_ADDR_ARP) == 1)
		s->owns_addr = true;
	memset(&m, 0, sizeof(m));
	m.op = 1;
	memcpy(m.sha, st->inet.mac, 6);
	m.spa = s->laddr;
	m.tpa = ip;
	if (send_arp(st, s->txq, BCAST_MAC, &m) == 0)
		st->st.arp_requests_sent++;
	return -EAGAIN;
}

int unet_udp__resolve(struct unet_udp_sock *s, uint32_t addr, int timeout_ms)
{
	const struct timespec pause = { .tv_nsec = 50 * 1000 };
	struct unet_udp_state *st;
	uint64_t now, deadline;
	uint8_t mac[6];
	int err;

	if (!s)
		return -EINVAL;
	if (s->v6)
		return -EAFNOSUPPORT;
	st = s->st;
	if (!addr)
		addr = s->raddr;
	if (!addr)
		return -EDESTADDRREQ;
	now = unet_inet_now_ns();
	deadline = now + (timeout_ms < 0 ? st->arp.timeout_ns : (uint64_t)timeout_ms * 1000000ull);
	/* Asked explicitly: a peer in the negative cache is tried again. */
	if (unet_arp_cache_unreachable(&st->arp, addr, now))
		unet_arp_cache_forget(&st->arp, addr);
	for (;;) {
		err = resolve_step(s, addr, now, mac, NULL);
		if (err != -EAGAIN)
			return err;
		unet_endpoint__complete(st->inet.ep);
		if (now >= deadline)
			return -EHOSTUNREACH;
		nanosleep(&pause, NULL);
		now = unet_inet_now_ns();
	}
}

/* What every send checks before it writes a frame: the size against the
 * socket and the route (no fragments: what the route does not carry is
 * refused), the destination (*addr, *port: 0 for the connected peer),
 * and the peer's MAC (resolved without waiting).  Returns 0 or what
 * unet_udp__send returns. */
static int send_prepare(struct unet_udp_sock *s, uint32_t len, uint32_t *addr, uint16_t *port,
			uint8_t mac[6])
{
	uint32_t mtu;
	int err;

	if (!len || len > unet_udp__max_payload(s))
		return -EMSGSIZE;
	if (!*addr) {
		*addr = s->raddr;
		if (!*port)
			*port = s->rport;
	}
	if (!*addr || !*port)
		return -EDESTADDRREQ;
	err = resolve_step(s, *addr, unet_inet_now_ns(), mac, &mtu);
	if (len + UNET_IP_HLEN + UNET_UDP_HLEN > mtu)
		return -EMSGSIZE;
	if (err)
		s->st->st.tx_unresolved++;
	return err;
}

int unet_udp__send(struct unet_udp_sock *s, uint64_t buf, uint32_t len, uint32_t addr,
		   uint16_t port)
{
	struct unet_udp_state *st;
	uint8_t mac[6], *p;
	uint32_t flen;
	int err;

	if (!s)
		return -EINVAL;
	if (s->v6)
		return -EAFNOSUPPORT;
	st = s->st;
	/* One buffer, one frame: a larger datagram is send_copy's. */
	if (len > buf_room(st))
		return -EMSGSIZE;
	p = unet_layer_buf(st->inet.ep, buf);
	if (!p)
		return len && len <= unet_udp__max_payload(s) ? -EINVAL : -EMSGSIZE;
	err = send_prepare(s, len, &addr, &port, mac);
	if (err)
		return err;
	if (unet_layer_tx_csum(st->inet.ep, UNET_UDP_TX_PAD)) {
		static const struct unet_tx_csum at = { .start = UNET_UDP_CSUM_START,
							.offset = UNET_UDP_CSUM_OFFSET };

		flen = unet_udp_build_offload(p + UNET_UDP_TX_PAD, mac, st->inet.mac, s->laddr,
					      addr, s->lport, port, len, st->ip_id++);
		err = unet_layer_xmit_csum(st->inet.ep, s->txq, buf, UNET_UDP_TX_PAD, flen, &at);
		if (err)
			return err;
		st->st.tx_csum_offload++;
	} else {
		flen = unet_udp_build(p + UNET_UDP_TX_PAD, mac, st->inet.mac, s->laddr, addr,
				      s->lport, port, len, st->ip_id++);
		err = unet_layer_xmit(st->inet.ep, s->txq, buf, UNET_UDP_TX_PAD, flen);
		if (err)
			return err;
	}
	st->st.tx_datagrams++;
	return 0;
}

/* A datagram larger than one send buffer: headers built here, the whole
 * frame copied into a chain of buffers (unet_layer_queue_frame). */
static int send_pieces(struct unet_udp_sock *s, const void *data, uint32_t len, uint32_t addr,
		       uint16_t port)
{
	struct unet_udp_state *st = s->st;
	uint8_t mac[6], head[UNET_UDP_HDRS];
	struct unet_layer_parts parts = { .head = head, .hlen = UNET_UDP_HDRS, .body = data };
	uint32_t flen;
	int err = send_prepare(s, len, &addr, &port, mac);

	if (err)
		return err;
	flen = udp_headers(head, data, mac, st->inet.mac, s->laddr, addr, s->lport, port, len,
			   st->ip_id++, false);
	err = unet_layer_queue_frame(st->inet.ep, s->txq, flen, unet_layer_fill_copy, &parts);
	if (err)
		return err;
	unet_layer_kick(st->inet.ep);
	st->st.tx_datagrams++;
	return 0;
}

int unet_udp__send_copy(struct unet_udp_sock *s, const void *data, size_t len, uint32_t addr,
			uint16_t port)
{
	struct unet_endpoint *ep;
	uint64_t buf;
	int err;

	if (!s || (!data && len))
		return -EINVAL;
	if (s->v6)
		return -EAFNOSUPPORT;
	ep = s->st->inet.ep;
	if (!len || len > unet_udp__max_payload(s))
		return -EMSGSIZE;
	if (len > buf_room(s->st))
		return send_pieces(s, data, (uint32_t)len, addr, port);
	buf = unet_endpoint__buf_alloc(ep);
	if (buf == UNET_NO_BUF)
		return -EAGAIN;
	memcpy(unet_layer_buf(ep, buf) + UNET_UDP_TX_PAYLOAD, data, len);
	err = unet_udp__send(s, buf, (uint32_t)len, addr, port);
	if (err)
		unet_endpoint__buf_free(ep, buf);
	return err;
}

/* ---- Receiving ---------------------------------------------------------------- */

/* An ARP frame that reached the endpoint: the XDP program sends us ARP
 * for addresses the kernel does not have.  Learn the sender if it is
 * believable (unet_arp_learn); answer a valid request for one of our
 * addresses, at most ARP_REPLY_RATE a second.  No system call here but
 * the reply's kick: ownership of the address was decided at open. */
static void take_arp(struct unet_udp_state *st, const struct unet_arp_msg *m)
{
	struct unet_udp_sock *s;
	struct unet_arp_msg r;
	uint64_t now = unet_inet_now_ns();

	st->st.arp_rx++;
	for (s = st->socks; s; s = s->next)
		if (!s->v6 && s->laddr == m->tpa)
			break;
	switch (unet_arp_learn(&st->arp, m, s != NULL, now)) {
	case UNET_ARP_REJECTED:
		st->st.arp_rejected++;
		return; /* a forged sender: no answer to it either */
	case UNET_ARP_IGNORED:
		st->st.arp_ignored++;
		break;
	case UNET_ARP_LEARNT:
		break;
	}
	if (m->op != 1 || !s || s->kernel_addr || m->spa == m->tpa)
		return;
	if (!unet_rate_take(&st->arp_replies, now, ARP_REPLY_RATE, ARP_REPLY_RATE)) {
		st->st.arp_replies_limited++;
		return;
	}
	memset(&r, 0, sizeof(r));
	r.op = 2;
	memcpy(r.sha, st->inet.mac, 6);
	r.spa = m->tpa;
	memcpy(r.tha, m->sha, 6);
	r.tpa = m->spa;
	if (send_arp(st, s->txq, m->sha, &r) == 0)
		st->st.arp_replies_sent++;
}

/* The core offers us every received frame that is not a U-Net message. */
static enum unet_layer_verdict udp_layer_rx(void *state, uint16_t proto, uint8_t *frame,
					    uint32_t len, struct unet_recv_desc *desc)
{
	struct unet_udp_state *st = state;
	struct unet_udp_sock *s;
	struct unet_udp_frame f;
	struct unet_arp_msg m;

	if (proto == UNET_ETH_P_ARP) {
		if (unet_arp_parse(frame, len, &m) == 0)
			take_arp(st, &m);
		else
			st->st.rx_malformed++;
		return UNET_LAYER_CONSUMED;
	}
	if (proto == UNET_ETH_P_IPV6)
		return st->v6 ? st->v6->rx(st, frame, len, desc) : UNET_LAYER_NOT_MINE;
	if (proto != UNET_ETH_P_IP)
		return UNET_LAYER_NOT_MINE;
	switch (unet_udp_parse(frame, len, true, &f)) {
	case UNET_UDP_OK:
		break;
	case UNET_UDP_NOT_UDP:
		return UNET_LAYER_NOT_MINE; /* IPv4 but not UDP: a later layer's */
	case UNET_UDP_MALFORMED:
		st->st.rx_malformed++;
		return UNET_LAYER_CONSUMED;
	case UNET_UDP_BAD_IP_CSUM:
		st->st.rx_bad_ip_csum++;
		return UNET_LAYER_CONSUMED;
	case UNET_UDP_BAD_UDP_CSUM:
		st->st.rx_bad_udp_csum++;
		return UNET_LAYER_CONSUMED;
	case UNET_UDP_PARTIAL_REFUSED: /* not asked for */
		st->st.rx_partial_refused++;
		return UNET_LAYER_CONSUMED;
	}
	s = find_sock(st, f.daddr, f.dport);
	/* The XDP program filtered already; we check again, trusting only
	 * our own view of which sockets are open. */
	if (!s || (s->raddr && s->raddr != f.saddr) || (s->rport && s->rport != f.sport)) {
		st->st.rx_no_socket++;
		return UNET_LAYER_CONSUMED;
	}
	return unet_udp_deliver(st, s, frame + f.payload_off, f.len, f.partial, f.saddr, f.sport,
				desc);
}

enum unet_layer_verdict unet_udp_deliver(struct unet_udp_state *st, struct unet_udp_sock *s,
					 uint8_t *payload, uint32_t len, bool partial,
					 uint32_t src_addr, uint16_t src_port,
					 struct unet_recv_desc *desc)
{
	/* A link takes a little more than its MTU (veth: MTU + 18), and the
	 * parsers check lengths against what arrived only: a datagram
	 * longer than the socket's largest is refused here, so that an
	 * application that sizes its buffers by unet_udp__max_payload is
	 * never handed more. */
	if (len > unet_udp__max_payload(s)) {
		st->st.rx_malformed++;
		return UNET_LAYER_CONSUMED;
	}
	if (partial) {
		if (!s->accept_partial) {
			st->st.rx_partial_refused++;
			return UNET_LAYER_CONSUMED;
		}
		st->st.rx_partial_csum++;
	}
	st->st.rx_datagrams++;
	desc->data = payload;
	desc->len = len;
	desc->sock = s;
	desc->src_addr = src_addr;
	desc->src_port = src_port;
	return UNET_LAYER_DELIVER;
}

static const struct unet_layer udp_layer = {
	.name = "udp",
	.rx = udp_layer_rx,
	.handler = udp_layer_handler,
	.destroy = udp_layer_destroy,
};
