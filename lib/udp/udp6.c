/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * udp6.c - UDP/IPv6 sockets on a U-Net endpoint (unet_udp.h, docs/udp.md
 * "IPv6"): IPv6/UDP frames, neighbour solicitations for the addresses
 * U-Net owns alone and the advertisements that answer them, and the
 * sockets.  They share the endpoint's UDP state with IPv4 (udp.c): one
 * list of sockets, one receive hook, one set of counters.
 *
 * Next hops come from the kernel (route6.c): its routing table, and its
 * neighbour table for the MAC -- on the link as well, unlike IPv4, where
 * the endpoint sends ARP itself.  The kernel solicits from its own
 * link-local address, and the advertisements come back to it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/layer.h"
#include "inet/inet.h"
#include "udp/udp_impl.h"


static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}



/* ---- Frames ---------------------------------------------------------------- */

uint32_t unet_udp6_build(uint8_t *frame, const uint8_t dst_mac[6], const uint8_t src_mac[6],
			 const uint8_t saddr[16], const uint8_t daddr[16], uint16_t sport,
			 uint16_t dport, uint32_t len)
{
	uint8_t *udp = frame + UNET_ETH_HLEN + UNET_IP6_HLEN;
	uint16_t ulen = (uint16_t)(UNET_UDP_HLEN + len), csum;
	uint64_t sum;

	unet_ip6_put_eth(frame, dst_mac, src_mac, saddr, daddr, ulen, IPPROTO_UDP, 64);
	put16(udp, sport);
	put16(udp + 2, dport);
	put16(udp + 4, ulen);
	memset(udp + 6, 0, 2);
	sum = unet_csum_pseudo6(saddr, daddr, IPPROTO_UDP, ulen);
	csum = (uint16_t)~unet_csum_fold(unet_csum_add(sum, udp, ulen));
	/* 0 is not allowed over IPv6 (RFC 8200 8.1): send its other form. */
	put16(udp + 6, csum ? csum : 0xffff);
	return UNET_UDP6_HDRS + len; /* >= 62: no padding needed */
}

/* Next-header values that are extension headers (bpf/xdp_udp6.h's list). */
static bool ip6_exthdr(uint8_t nh)
{
	switch (nh) {
	case 0: case 43: case 44: case 50: case 51: case 60: case 135: case 139: case 140:
	case 253: case 254:
		return true;
	}
	return false;
}


enum unet_udp_verdict unet_udp6_parse(const uint8_t *frame, uint32_t len, bool accept_partial,
				      struct unet_udp6_frame *f)
{
	const uint8_t *ip = frame + UNET_ETH_HLEN, *udp = ip + UNET_IP6_HLEN;
	uint32_t plen, ulen;
	uint16_t check;
	uint64_t pseudo;
	int fixed;

	memset(f, 0, sizeof(*f));
	fixed = unet_ip6_fixed(frame, len, &plen);
	if (fixed < 0)
		return UNET_UDP_NOT_UDP;
	if (fixed > 0)
		return UNET_UDP_MALFORMED;
	if (ip[6] != IPPROTO_UDP)
		return ip6_exthdr(ip[6]) ? UNET_UDP_MALFORMED : UNET_UDP_NOT_UDP;
	memcpy(f->saddr, ip + 8, 16);
	memcpy(f->daddr, ip + 24, 16);
	/* No host sends from a group, ::, ::1 or a v4-mapped address: an
	 * answer to one would go to a whole group or off the link (the
	 * kernel drops them too). */
	if (!unet_inet6_addr_unicast(f->saddr))
		return UNET_UDP_MALFORMED;
	if (plen < UNET_UDP_HLEN)
		return UNET_UDP_MALFORMED;
	f->sport = get16(udp);
	f->dport = get16(udp + 2);
	ulen = get16(udp + 4);
	if (ulen < UNET_UDP_HLEN || ulen > plen)
		return UNET_UDP_MALFORMED;
	check = get16(udp + 6);
	/* Mandatory over IPv6: none at all is as wrong as a wrong one. */
	if (!check)
		return UNET_UDP_BAD_UDP_CSUM;
	pseudo = unet_csum_pseudo6(f->saddr, f->daddr, IPPROTO_UDP, ulen);
	if (unet_csum_fold(unet_csum_add(pseudo, udp, ulen)) != 0xffff) {
		/* CHECKSUM_PARTIAL, as for IPv4 (udp.c): the field holds
		 * exactly the folded pseudo-header sum. */
		if (check != unet_csum_fold(pseudo))
			return UNET_UDP_BAD_UDP_CSUM;
		if (!accept_partial)
			return UNET_UDP_PARTIAL_REFUSED;
		f->partial = true;
	}
	f->payload_off = UNET_UDP6_HDRS;
	f->len = ulen - UNET_UDP_HLEN;
	return UNET_UDP_OK;
}

/* ---- Neighbour solicitations ------------------------------------------------ */


/* ---- Sockets -------------------------------------------------------------- */

static struct unet_udp_sock *find_sock6(struct unet_udp_state *st, const uint8_t laddr[16],
					uint16_t lport)
{
	for (struct unet_udp_sock *s = st->socks; s; s = s->next)
		if (s->v6 && s->lport == lport && !memcmp(s->laddr6, laddr, 16))
			return s;
	return NULL;
}

/* s's port on its address, held in the kernel by a socket of ours (see
 * hold_fd).  0, or -EADDRINUSE when another socket has it (as the
 * kernel would answer a bind). */
static int hold_port(struct unet_udp_sock *s)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons(s->lport) };
	int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0), one = 1, zero = 0;

	if (fd < 0)
		return -errno;
	memcpy(&sa.sin6_addr, s->laddr6, 16);
	/* Nothing is ever read from it: the smallest buffer. */
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = errno;

		close(fd);
		unet_log(UNET_LOG_ERROR, "%s: UDP/IPv6 port %u: held by another socket",
			 s->st->inet.ifname, s->lport);
		return err == EADDRINUSE ? -EADDRINUSE : -err;
	}
	s->hold_fd = fd;
	return 0;
}

static void close_maps(struct unet_udp_sock *s);
static enum unet_layer_verdict udp6_rx(struct unet_udp_state *st, uint8_t *frame, uint32_t len,
				       struct unet_recv_desc *desc);

/* What udp.c calls for IPv6 (udp_impl.h). */
static const struct unet_udp_family udp6_family = { .rx = udp6_rx, .close_maps = close_maps };

struct unet_udp_sock *unet_udp__open6(struct unet_endpoint *ep, const struct in6_addr *local_addr,
				      uint16_t local_port, const struct unet_udp_opts *opts)
{
	struct unet_udp_state *st;
	struct unet_udp_sock *s;
	enum unet_udp_partial partial;
	uint32_t txq = 0;
	int tx_queue, err;

	if (!ep || !local_addr || !local_port || (opts && opts->sz < sizeof(size_t)) ||
	    unet_inet6_addr_zero(local_addr->s6_addr) || local_addr->s6_addr[0] == 0xff) {
		errno = EINVAL;
		return NULL;
	}
	/* Not an address of this link's: the endpoint would answer
	 * solicitations for it and send from it. */
	if (!unet_inet6_addr_unicast(local_addr->s6_addr)) {
		errno = EADDRNOTAVAIL;
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
			errno = EINVAL;
			return NULL;
		}
		txq = (uint32_t)i;
	}
	/* An endpoint from unetd would need the daemon to register IPv6
	 * ports for it (docs/udp.md, "IPv6"). */
	if (!unet_layer_iface(ep)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	st = unet_udp_state_get(ep);
	if (!st)
		return NULL;
	st->v6 = &udp6_family;
	if (find_sock6(st, local_addr->s6_addr, local_port)) {
		errno = EADDRINUSE;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->v6 = true;
	s->hold_fd = -1;
	memcpy(s->laddr6, local_addr->s6_addr, 16);
	s->lport = local_port;
	if (opts && opts->sz >= offsetof(struct unet_udp_opts, remote_addr6) + sizeof(struct in6_addr))
		memcpy(s->raddr6, opts->remote_addr6.s6_addr, 16);
	s->rport = unet_inet6_addr_zero(s->raddr6) ? 0 : UNET_OPT(opts, remote_port, 0);
	s->txq = txq;
	s->st = st;
	s->accept_partial = partial == UNET_UDP_PARTIAL_ACCEPT ||
			    (partial == UNET_UDP_PARTIAL_AUTO && unet_inet_is_veth(st->inet.ifname));
	err = unet_udp6_port_add(st->inet.iface, st->inet.slot, s->laddr6, s->lport, s->raddr6,
				 s->rport);
	if (!err) {
		/* The kernel's address (it answers solicitations), or ours
		 * to answer for: decided here, once, as for IPv4. */
		s->kernel_addr = unet_inet6_kernel_addr(s->laddr6);
		err = s->kernel_addr ? hold_port(s) : 0;
		if (!err) {
			err = unet_inet6_addr_claim(st->inet.iface, st->inet.slot, s->laddr6,
						    s->kernel_addr ? 0 : UNET_INET6_ADDR_ND);
			if (err >= 0)
				s->owns_addr = err == 1;
		}
		if (err < 0)
			unet_udp6_port_remove(st->inet.iface, st->inet.slot, s->laddr6, s->lport);
	}
	if (err < 0) {
		if (s->hold_fd >= 0)
			close(s->hold_fd);
		free(s);
		errno = -err;
		return NULL;
	}
	s->next = st->socks;
	st->socks = s;
	unet_log(UNET_LOG_INFO, "%s: UDP/IPv6 port %u on endpoint %u%s", st->inet.ifname,
		 local_port, st->inet.slot, s->accept_partial ? " (partial checksums accepted)" : "");
	return s;
}

static void close_maps(struct unet_udp_sock *s)
{
	struct unet_udp_state *st = s->st;

	if (s->hold_fd >= 0)
		close(s->hold_fd);
	s->hold_fd = -1;

	unet_udp6_port_remove(st->inet.iface, st->inet.slot, s->laddr6, s->lport);
	for (struct unet_udp_sock *o = st->socks; o; o = o->next)
		if (o != s && o->v6 && !memcmp(o->laddr6, s->laddr6, 16)) {
			if (s->owns_addr)
				o->owns_addr = true; /* it keeps the registration */
			return;
		}
	unet_inet6_addr_release(st->inet.iface, st->inet.slot, s->laddr6);
}

/* Where a datagram to dst goes: the MAC of the next hop, and what fits.
 * Multicast goes to its group's MAC (RFC 2464 7). */
static int resolve6_step(struct unet_udp_sock *s, const uint8_t dst[16], uint64_t now,
			 uint8_t mac[6], uint32_t *mtu)
{
	struct unet_udp_state *st = s->st;
	struct unet_inet6_hop *h;

	*mtu = st->inet.mtu;
	if (dst[0] == 0xff) {
		mac[0] = mac[1] = 0x33;
		memcpy(mac + 2, dst + 12, 4);
		return 0;
	}
	h = unet_inet6_route(&st->routes6, &st->inet, dst, s->kernel_addr ? s->laddr6 : NULL, now);
	*mtu = h->mtu;
	if (h->err)
		return h->err;
	return unet_inet6_hop_mac(&st->routes6, &st->inet, h, now, mac);
}

int unet_udp__send6(struct unet_udp_sock *s, uint64_t buf, uint32_t len,
		    const struct in6_addr *addr, uint16_t port)
{
	struct unet_udp_state *st;
	const uint8_t *dst;
	uint8_t mac[6], *p;
	uint32_t flen, mtu;
	int err;

	if (!s)
		return -EINVAL;
	if (!s->v6)
		return -EAFNOSUPPORT;
	st = s->st;
	if (!len || len > unet_udp__max_payload(s))
		return -EMSGSIZE;
	p = unet_layer_buf(st->inet.ep, buf);
	if (!p)
		return -EINVAL;
	dst = addr ? addr->s6_addr : s->raddr6;
	if (!addr && !port)
		port = s->rport;
	if (unet_inet6_addr_zero(dst) || !port)
		return -EDESTADDRREQ;
	err = resolve6_step(s, dst, unet_inet_now_ns(), mac, &mtu);
	/* No fragments: what the path does not carry is refused. */
	if (len + UNET_IP6_HLEN + UNET_UDP_HLEN > mtu)
		return -EMSGSIZE;
	if (err) {
		st->st.tx_unresolved++;
		return err == -EPERM ? -EHOSTUNREACH : err;
	}
	flen = unet_udp6_build(p + UNET_UDP6_TX_PAD, mac, st->inet.mac, s->laddr6, dst, s->lport,
			       port, len);
	err = unet_layer_xmit(st->inet.ep, s->txq, buf, UNET_UDP6_TX_PAD, flen);
	if (err)
		return err;
	st->st.tx_datagrams++;
	return 0;
}

int unet_udp__send_copy6(struct unet_udp_sock *s, const void *data, size_t len,
			 const struct in6_addr *addr, uint16_t port)
{
	struct unet_endpoint *ep;
	uint64_t buf;
	int err;

	if (!s || (!data && len))
		return -EINVAL;
	if (!s->v6)
		return -EAFNOSUPPORT;
	ep = s->st->inet.ep;
	if (!len || len > unet_udp__max_payload(s))
		return -EMSGSIZE;
	buf = unet_endpoint__buf_alloc(ep);
	if (buf == UNET_NO_BUF)
		return -EAGAIN;
	memcpy(unet_layer_buf(ep, buf) + UNET_UDP_TX_PAYLOAD, data, len);
	err = unet_udp__send6(s, buf, (uint32_t)len, addr, port);
	if (err)
		unet_endpoint__buf_free(ep, buf);
	return err;
}

int unet_udp__resolve6(struct unet_udp_sock *s, const struct in6_addr *addr, int timeout_ms)
{
	const struct timespec pause = { .tv_nsec = 50 * 1000 };
	const uint8_t *dst;
	uint64_t now, deadline;
	uint32_t mtu;
	uint8_t mac[6];
	int err;

	if (!s)
		return -EINVAL;
	if (!s->v6)
		return -EAFNOSUPPORT;
	dst = addr ? addr->s6_addr : s->raddr6;
	if (unet_inet6_addr_zero(dst))
		return -EDESTADDRREQ;
	now = unet_inet_now_ns();
	deadline = now + (timeout_ms < 0 ? s->st->arp.timeout_ns : (uint64_t)timeout_ms * 1000000ull);
	for (;;) {
		err = resolve6_step(s, dst, now, mac, &mtu);
		if (err != -EAGAIN)
			return err == -EPERM ? -EHOSTUNREACH : err;
		unet_endpoint__complete(s->st->inet.ep);
		if (now >= deadline)
			return -EHOSTUNREACH;
		nanosleep(&pause, NULL);
		now = unet_inet_now_ns();
	}
}

int unet_udp__desc_src6(const struct unet_recv_desc *d, struct in6_addr *src)
{
	struct unet_udp_sock *s = unet_udp__desc_sock(d);

	if (!s || !s->v6 || !src)
		return -EINVAL;
	/* The payload follows the IPv6 and UDP headers directly (we deliver
	 * nothing else): the source address is 40 bytes before it. */
	memcpy(src->s6_addr, (const uint8_t *)d->data - UNET_UDP_HLEN - UNET_IP6_HLEN + 8, 16);
	return 0;
}

/* ---- Receiving ---------------------------------------------------------------- */

/* A neighbour solicitation the XDP program handed us (its target is an
 * address U-Net owns alone).  Answer it if it is valid and for one of our
 * IPv6 sockets' addresses the kernel does not have, at most
 * UNET_UDP_REPLY_RATE a second with the ARP replies.  We learn nothing
 * from it: our own next hops come from the kernel's table. */
static void take_ns(struct unet_udp_state *st, const uint8_t *frame, uint32_t len)
{
	struct unet_udp_sock *s;
	struct unet_nd_ns ns;
	uint64_t now, buf;
	uint32_t flen;

	st->st.arp_rx++;
	switch (unet_nd_parse_ns(frame, len, &ns)) {
	case UNET_ND_NS:
		break;
	case UNET_ND_REJECTED:
		st->st.arp_rejected++;
		return;
	case UNET_ND_BAD_CSUM:
	case UNET_ND_MALFORMED:
	case UNET_ND_NOT_NS:
		st->st.rx_malformed++;
		return;
	}
	for (s = st->socks; s; s = s->next)
		if (s->v6 && !s->kernel_addr && !memcmp(s->laddr6, ns.target, 16))
			break;
	if (!s) {
		st->st.arp_ignored++;
		return;
	}
	now = unet_inet_now_ns();
	if (!unet_rate_take(&st->arp_replies, now, UNET_UDP_REPLY_RATE, UNET_UDP_REPLY_RATE)) {
		st->st.arp_replies_limited++;
		return;
	}
	buf = unet_endpoint__buf_alloc(st->inet.ep);
	if (buf == UNET_NO_BUF)
		return;
	flen = unet_nd_build_na(unet_layer_buf(st->inet.ep, buf) + UNET_UDP6_TX_PAD, st->inet.mac, &ns);
	if (unet_layer_xmit(st->inet.ep, s->txq, buf, UNET_UDP6_TX_PAD, flen)) {
		unet_endpoint__buf_free(st->inet.ep, buf);
		return;
	}
	st->st.arp_replies_sent++;
}

static enum unet_layer_verdict udp6_rx(struct unet_udp_state *st, uint8_t *frame, uint32_t len,
				       struct unet_recv_desc *desc)
{
	struct unet_udp_sock *s;
	struct unet_udp6_frame f;

	/* Only IPv6 sockets' frames are ours (the XDP program sends us
	 * nothing else over IPv6 unless an IPv6 address is registered). */
	if (len >= UNET_ETH_HLEN + UNET_IP6_HLEN + 1 &&
	    frame[UNET_ETH_HLEN + 6] == IPPROTO_ICMPV6) {
		take_ns(st, frame, len);
		return UNET_LAYER_CONSUMED;
	}
	switch (unet_udp6_parse(frame, len, true, &f)) {
	case UNET_UDP_OK:
		break;
	case UNET_UDP_NOT_UDP:
		return UNET_LAYER_NOT_MINE;
	case UNET_UDP_MALFORMED:
	case UNET_UDP_BAD_IP_CSUM:
		st->st.rx_malformed++;
		return UNET_LAYER_CONSUMED;
	case UNET_UDP_BAD_UDP_CSUM:
		st->st.rx_bad_udp_csum++;
		return UNET_LAYER_CONSUMED;
	case UNET_UDP_PARTIAL_REFUSED:
		st->st.rx_partial_refused++;
		return UNET_LAYER_CONSUMED;
	}
	s = find_sock6(st, f.daddr, f.dport);
	if (!s || (!unet_inet6_addr_zero(s->raddr6) && memcmp(s->raddr6, f.saddr, 16)) ||
	    (s->rport && s->rport != f.sport)) {
		st->st.rx_no_socket++;
		return UNET_LAYER_CONSUMED;
	}
	/* The sender's address is desc_src6's to give (unet_udp.h). */
	return unet_udp_deliver(st, s, frame + f.payload_off, f.len, f.partial, 0, f.sport, desc);
}
