/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcp.c - TCP/IPv4 connections on a U-Net endpoint (unet_tcp.h,
 * docs/tcp.md), on lwIP's raw API.
 *
 * Each endpoint with TCP is one lwIP netif (lwIP is one stack per
 * process).  Receive: the core offers this layer every non-U-Net frame
 * from the endpoint's receive queue (tcp_layer_rx); IPv4/TCP frames for
 * our address and ARP frames are copied into a PBUF_RAM pbuf (never
 * PBUF_POOL: Debian's liblwip sizes pool pbufs for a 512-byte MSS,
 * docs/tcp-lwip-facts.md) and handed to ethernet_input, and the U-Net
 * buffer goes straight back.  Send: lwIP's linkoutput copies each frame
 * into a segment buffer and puts it on the send queue.  Timers run from
 * the layer's progress hook (layer.h), on the application's thread.
 *
 * No tcpip thread is started (lwip_init, not tcpip_init): every lwIP call
 * is made with lwip_lock held, from whichever application thread calls
 * into the library.  Callbacks (recv, err, accept, connected) therefore
 * run under the lock on that thread, and only record what happened.
 * An endpoint's pool, rings and kicks are touched only from its own
 * sections (lock(st)): a frame lwIP makes for another endpoint's netif
 * (its timers run from any endpoint's calls) is handed over (handoff).
 *
 * Neighbours: lwIP's own ARP table is not used (netif->output is ours).
 * A peer's MAC comes from the source of the TCP segments it sent us, or
 * from the unet_neigh map the XDP program fills from ARP for our address
 * (inet/addr.c registers the address for ARP); if neither
 * knows it, the frame is held (up to PENDING_MAX) and lwIP sends an ARP
 * request.  ARP that reaches the endpoint (an address the kernel does not
 * have) goes to lwIP, which answers requests.
 *
 * Ports: held here (a kernel socket, the interface's map) when the
 * process opened the interface itself; on an endpoint from unetd the
 * daemon holds them for us (port_hold_remote), checks them against its
 * policy, and for an emulated endpoint routes their segments to us and
 * checks ours (docs/unetd.md).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <lwip/etharp.h>
#include <lwip/init.h>
#include <lwip/netif.h>
#include <lwip/pbuf.h>
#include <lwip/priv/tcp_priv.h>
#include <lwip/tcp.h>
#include <lwip/timeouts.h>
#include <netif/ethernet.h>
#include <linux/bpf.h> /* XDP_PACKET_HEADROOM */

#include "core/clock.h"
#include "core/layer.h"
#include "inet/inet.h"
#include "proto/unetd_proto.h"
#include "tcp/tcp_impl.h"
#include "unet-xdp/unet_tcp.h"

#define TX_OFF UNET_TCP_TX_OFF
#define TX_REAP 32		/* reap send completions once this many are pending */
#define NEIGH_SLOTS 64
#define NEIGH_TTL_NS (60ull * 1000 * 1000 * 1000)
#define PENDING_MAX 32		/* frames held for ARP, per endpoint */
#define PENDING_MS 3000		/* then dropped (TCP sends them again) */
#define ARP_GAP_MS 100		/* at most one ARP request per this, per endpoint */
#define MAX_CONNS 4096		/* connections and half-open ones, per endpoint */
#define BACKLOG_DEFAULT 64
#define BACKLOG_MAX 1024
#define CLOSING_MS 60000	/* a closed connection lingers at most this long */
#define WAIT_SLICE_MS 100
#define FASTTMR_MS 10		/* lwIP's fast TCP timer (delayed ACK), ours: see progress */	/* a waiting call looks at its connection this often */
#define HANDOFF_MAX 256		/* frames handed to an endpoint by other threads, at most */

/* The one lock around lwIP in this process (lwIP's state is global). */
static pthread_mutex_t lwip_lock = PTHREAD_MUTEX_INITIALIZER;
static bool lwip_ready;
/* Whose section holds lwip_lock (NULL: no endpoint's): the one endpoint
 * whose pool, rings and kick lwIP's output may use now. */
static struct utcp_state *lwip_cur;
static uint64_t isn_key[2]; /* the secret of seq_offset, from getrandom */

static void isn_key_init(void)
{
	struct timespec ts;

	if (getrandom(isn_key, sizeof(isn_key), 0) == (ssize_t)sizeof(isn_key))
		return;
	/* No getrandom (not on this project's kernels): at least not 0. */
	unet_log(UNET_LOG_WARN, "tcp: getrandom failed: initial sequence numbers are weak");
	clock_gettime(CLOCK_REALTIME, &ts);
	isn_key[0] = (uint64_t)ts.tv_nsec << 32 ^ (uint64_t)ts.tv_sec;
	isn_key[1] = (uint64_t)getpid() << 32 ^ (uint64_t)(uintptr_t)&ts;
}

/* lwip_lock for a section of st's (the caller is st's endpoint's thread;
 * NULL: no endpoint's). */
static void lock(struct utcp_state *st)
{
	pthread_mutex_lock(&lwip_lock);
	if (!lwip_ready) {
		lwip_init();
		isn_key_init();
		lwip_ready = true;
	}
	lwip_cur = st;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* The 32-bit field at p becomes v, and the checksum at c follows it
 * (RFC 1624: HC' = ~(~HC + ~m + m')). */
static void set32_csum(uint8_t *p, uint32_t v, uint8_t *c)
{
	uint32_t old = get32(p);
	uint64_t sum = (uint16_t)~get16(c);
	uint16_t n;

	sum += (uint16_t)~(old >> 16) + (uint16_t)~old + (v >> 16) + (v & 0xffff);
	n = (uint16_t)~unet_csum_fold(sum);
	c[0] = (uint8_t)(n >> 8);
	c[1] = (uint8_t)n;
	put32(p, v);
}

/*
 * Initial sequence numbers (RFC 6528).  lwIP 2.1's are
 * iss += tcp_ticks, from 6510 (tcp_next_iss, no hook in Debian's build):
 * a fresh process's first connection gets 6510.  The layer adds
 * F(4-tuple, secret) -- SipHash-2-4 of the local and remote address and
 * port under a key from getrandom -- to every sequence number our side
 * sends and subtracts it from every acknowledgement number it receives,
 * so the wire's ISN is lwIP's + F, lwIP never knows, and nothing is kept
 * per connection (F is a function of the segment's own 4-tuple: lwIP's
 * resets for segments of no connection translate too).  lwIP's part
 * still grows from one connection to the next, as RFC 6528's clock M
 * does.  docs/tcp.md, "Initial sequence numbers".
 */
#define ROTL64(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

static void sip_round(uint64_t v[4])
{
	v[0] += v[1];
	v[1] = ROTL64(v[1], 13);
	v[1] ^= v[0];
	v[0] = ROTL64(v[0], 32);
	v[2] += v[3];
	v[3] = ROTL64(v[3], 16);
	v[3] ^= v[2];
	v[0] += v[3];
	v[3] = ROTL64(v[3], 21);
	v[3] ^= v[0];
	v[2] += v[1];
	v[1] = ROTL64(v[1], 17);
	v[1] ^= v[2];
	v[2] = ROTL64(v[2], 32);
}

/* SipHash-2-4 under isn_key of a message of len bytes: the 64-bit
 * words m[0..n-1], then tail (its last len - 8n bytes, fewer than 8). */
static uint64_t siphash(const uint64_t *m, unsigned int n, uint64_t tail, unsigned int len)
{
	uint64_t v[4] = { isn_key[0] ^ 0x736f6d6570736575ull, isn_key[1] ^ 0x646f72616e646f6dull,
			  isn_key[0] ^ 0x6c7967656e657261ull, isn_key[1] ^ 0x7465646279746573ull };
	uint64_t last = (uint64_t)len << 56 | tail;

	for (unsigned int i = 0; i < n; i++) {
		v[3] ^= m[i];
		sip_round(v);
		sip_round(v);
		v[0] ^= m[i];
	}
	v[3] ^= last;
	sip_round(v);
	sip_round(v);
	v[0] ^= last;
	v[2] ^= 0xff;
	for (int i = 0; i < 4; i++)
		sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/* F: what the wire's sequence numbers of our side of the connection
 * laddr:lport - raddr:rport (addresses in network order, ports in host
 * order) are ahead of lwIP's. */
static uint32_t seq_offset(uint32_t laddr, uint16_t lport, uint32_t raddr, uint16_t rport)
{
	uint64_t m = (uint64_t)laddr << 32 | raddr;

	return (uint32_t)siphash(&m, 1, (uint32_t)lport << 16 | rport, 12);
}

/* F for an IPv6 connection: the same under the 16-byte addresses. */
static uint32_t seq_offset6(const uint8_t laddr[16], uint16_t lport, const uint8_t raddr[16],
			    uint16_t rport)
{
	uint64_t m[4];

	memcpy(m, laddr, 16);
	memcpy(m + 2, raddr, 16);
	return (uint32_t)siphash(m, 4, (uint32_t)lport << 16 | rport, 36);
}

/* The TCP header of an IPv6/TCP frame of len bytes at f (TCP right after
 * the fixed header: all lwIP sends), or NULL. */
static uint8_t *tcp6_hdr(uint8_t *f, uint32_t len)
{
	if (len < UNET_ETH_HLEN + 40 + 20 || get16(f + 12) != 0x86dd ||
	    f[UNET_ETH_HLEN + 6] != 6)
		return NULL;
	return f + UNET_ETH_HLEN + 40;
}

/* A frame lwIP sends (len bytes at f): an IPv4/TCP or IPv6/TCP segment's
 * sequence number gets F added (its checksum follows). */
static void seq_out(uint8_t *f, uint32_t len)
{
	uint32_t hlen, laddr, raddr;
	uint8_t *ip = f + UNET_ETH_HLEN, *t;

	if ((t = tcp6_hdr(f, len))) {
		set32_csum(t + 4,
			   get32(t + 4) + seq_offset6(ip + 8, get16(t), ip + 24, get16(t + 2)),
			   t + 16);
		return;
	}
	if (len < UNET_ETH_HLEN + 20 || get16(f + 12) != 0x0800 || ip[9] != 6)
		return;
	hlen = (ip[0] & 0xfu) * 4;
	if (len < UNET_ETH_HLEN + hlen + 20)
		return;
	t = ip + hlen;
	memcpy(&laddr, ip + 12, 4);
	memcpy(&raddr, ip + 16, 4);
	set32_csum(t + 4, get32(t + 4) + seq_offset(laddr, get16(t), raddr, get16(t + 2)), t + 16);
}

static uint64_t now_ms(void)
{
	return (uint64_t)unet_mono_ms();
}

/* A port held against the kernel and in unet_tcp_ports; shared by a
 * listener and the connections accepted on it. */
struct tcp_port {
	uint32_t laddr;
	uint16_t lport;
	bool v6;
	uint8_t laddr6[16];
	int kfd; /* the kernel socket bound to it */
	unsigned int refs;
	struct tcp_port *next;
};

/* A connection the application closed that lwIP is still finishing
 * (FIN exchange): its port is kept until it is done. */
struct tcp_closing {
	struct tcp_pcb *pcb;
	uint16_t lport, rport;
	struct tcp_port *port;
	uint64_t deadline;
	struct tcp_closing *next;
};

struct utcp_state {
	struct unet_inet_ep inet; /* the endpoint, its interface (inet/inet.h) */
	uint32_t txq;
	struct netif netif;
	bool netif_added;
	uint32_t addr; /* network order; 0: no IPv4 address yet */
	bool owns_addr, kernel_addr;
	/* The IPv6 address (docs/tcp.md, "IPv6"), in lwIP's netif slot 1 */
	uint8_t addr6[16];
	bool has_addr6, owns_addr6, kernel_addr6;
	struct unet_inet6_routes routes6;
	struct unet_tcp6_nd nd6;
	enum unet_tcp_partial partial; /* the policy asked for (unet_tcp_opts) */
	bool accept_partial;	       /* what it comes to on this interface */
	struct {
		uint32_t ip;
		uint8_t mac[6];
		uint64_t t_ns;
	} neigh[NEIGH_SLOTS];
	struct unet_inet_routes routes; /* next hops from the kernel */
	struct {
		struct pbuf *p;
		uint32_t ip;
		bool v6;
		uint8_t ip6[16];
		uint64_t since;
	} pend[PENDING_MAX];
	unsigned int npend;
	uint64_t last_arp_ms;
	uint64_t last_fast_ms;
	struct tcp_port *ports;
	struct tcp_closing *closing;
	struct unet_tcp *conns;
	bool tx_blocked;
	bool kick_owed; /* frames queued, not kicked (unlock) */
	/* Frames lwIP made for this netif in another endpoint's section
	 * (handoff), oldest first; ho_refused: one was refused (full), so
	 * lwIP keeps a segment to send again; ho_waiting (atomic): either,
	 * for progress to look at without the lock. */
	struct tx_handoff *ho_head, *ho_tail;
	unsigned int nho;
	bool ho_refused, ho_waiting;
	bool dying; /* being destroyed: hold no frame for ARP */
	bool swallow; /* lwIP's frames are not sent (cookie_take) */
	uint32_t syn_mss; /* the MSS of the SYN-ACK being fed (on_connected) */
	struct unet_tcp *listeners; /* also on conns; by lnext */
	uint64_t next_ms; /* when progress must run lwIP's timers next */
	struct unet_tcp_stats st;
	/* All connections' receive queues (rx_push): pbufs, and bytes of
	 * data and room in them; rx_mem() their memory, about. */
	uint64_t rx_pbufs, rx_bytes;
};

struct unet_tcp {
	struct utcp_state *st;
	struct tcp_pcb *pcb; /* NULL once lwIP freed it (error) */
	struct tcp_port *port;
	bool listener;
	uint32_t backlog;
	struct unet_tcp *acq_head, *acq_tail; /* listener: accepted, not taken */
	unsigned int nacq;
	struct unet_tcp *parent; /* in this listener's queue */
	/* Received, not read: single pbufs (never lwIP chains) linked by
	 * ->next, oldest first (rx_push); rx_room: room left in the last
	 * one if it is one of ours that small segments are copied into. */
	struct pbuf *rx, *rx_tail;
	uint32_t rx_room;
	bool eof, connected, shut;
	int err;
	uint64_t arrivals; /* unet_tcp__arrivals */
	uint32_t raddr;
	bool v6;
	uint8_t raddr6[16];
	uint16_t lport, rport;
	struct unet_tcp *next;	/* st->conns */
	struct unet_tcp *lnext; /* st->listeners */
	struct unet_tcp *qnext; /* parent's accept queue */
};

/*
 * Frames lwIP sends go on the send queue without a kick
 * (unet_layer_queue, layer.h): a window's worth of segments from one
 * tcp_output, or the answers to a batch of received segments, then
 * leave in one system call.  Only the section's own endpoint queues
 * (lwip_cur, handoff), and unlock() pays its kick before any call
 * returns to the application, so no frame waits for the application's
 * next call.  The receive path (tcp_layer_rx) leaves the kick to the
 * core, which pays at the end of the receive pass (unlock_rx).
 */
static void unlock_rx(void)
{
	if (lwip_cur)
		lwip_cur->kick_owed = false; /* the core kicks after the pass */
	lwip_cur = NULL;
	pthread_mutex_unlock(&lwip_lock);
}

static void unlock(void)
{
	struct utcp_state *st = lwip_cur;

	if (st && st->kick_owed) {
		st->kick_owed = false;
		unet_layer_kick(st->inet.ep);
	}
	lwip_cur = NULL;
	pthread_mutex_unlock(&lwip_lock);
}

/*
 * Handing frames over.  lwIP's timers (retransmission, delayed ACKs,
 * persist, keepalive) run from whichever endpoint's section calls
 * sys_check_timeouts or tcp_fasttmr, and act on every connection, so a
 * section of endpoint A makes frames for B's netif.  B's pool, rings and
 * kick belong to B's thread (the core is single-threaded per endpoint):
 * A copies such a frame into B's hand-off queue, under lwip_lock, and
 * B's own next progress (at once if it spins; within FASTTMR_MS if it
 * waits with connections open) sends it.  A full queue refuses the frame
 * (ERR_MEM: lwIP keeps the segment) and B's progress retries lwIP's
 * output, as for a full send queue.
 */
struct tx_handoff {
	struct tx_handoff *next;
	uint32_t len;
	uint8_t f[];
};

static err_t handoff(struct utcp_state *st, struct pbuf *p, uint32_t flen)
{
	struct tx_handoff *h = NULL;

	if (st->nho < HANDOFF_MAX)
		h = malloc(sizeof(*h) + (flen < 60 ? 60 : flen));
	__atomic_store_n(&st->ho_waiting, true, __ATOMIC_RELAXED);
	if (!h) {
		st->ho_refused = true;
		st->st.tx_busy++;
		return ERR_MEM;
	}
	pbuf_copy_partial(p, h->f, (u16_t)flen, 0);
	seq_out(h->f, flen);
	if (flen < 60) {
		memset(h->f + flen, 0, 60 - flen);
		flen = 60;
	}
	h->len = flen;
	h->next = NULL;
	if (st->ho_tail)
		st->ho_tail->next = h;
	else
		st->ho_head = h;
	st->ho_tail = h;
	st->nho++;
	return ERR_OK;
}

static void handoff_free(struct utcp_state *st)
{
	while (st->ho_head) {
		struct tx_handoff *h = st->ho_head;

		st->ho_head = h->next;
		free(h);
	}
	st->ho_tail = NULL;
	st->nho = 0;
}

static const struct unet_layer tcp_layer;

/* ---- Neighbours ------------------------------------------------------------- */

static void neigh_learn(struct utcp_state *st, uint32_t ip, const uint8_t mac[6])
{
	unsigned int i, old = 0;

	/* Only unicast, non-zero sources (an on-link host can claim any IP
	 * anyway: docs/tcp.md, limits). */
	if ((mac[0] & 1) || !(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]) || !ip)
		return;
	for (i = 0; i < NEIGH_SLOTS; i++) {
		if (st->neigh[i].ip == ip)
			break;
		if (st->neigh[i].t_ns < st->neigh[old].t_ns)
			old = i;
	}
	if (i == NEIGH_SLOTS)
		i = old;
	st->neigh[i].ip = ip;
	memcpy(st->neigh[i].mac, mac, 6);
	st->neigh[i].t_ns = unet_inet_now_ns();
}

static int neigh_find(struct utcp_state *st, uint32_t ip, uint8_t mac[6])
{
	uint64_t now = unet_inet_now_ns();

	for (unsigned int i = 0; i < NEIGH_SLOTS; i++)
		if (st->neigh[i].ip == ip && now - st->neigh[i].t_ns < NEIGH_TTL_NS) {
			memcpy(mac, st->neigh[i].mac, 6);
			return 0;
		}
	if (unet_inet_neigh(st->inet.neigh_fd, ip, now, NEIGH_TTL_NS, mac, NULL) == 0) {
		neigh_learn(st, ip, mac);
		return 0;
	}
	return -ENOENT;
}

/*
 * The MAC a frame for dst goes to: the gateway's when the kernel's
 * routing table names one (its neighbour table gives the MAC), else
 * dst's own on the link.  Segments from a routed peer carry its
 * gateway's MAC, but which gateway we send through is the routing
 * table's to say (docs/tcp.md, "Routing").  *ask gets the address to ARP
 * for ourselves when the answer is not there (0: the kernel is asking).
 * Returns 0, -ENOENT/-EAGAIN (not yet), -ENETUNREACH, -EHOSTUNREACH.
 */
static int hop_find(struct utcp_state *st, uint32_t dst, uint8_t mac[6], uint32_t *ask)
{
	uint64_t now = unet_inet_now_ns();
	struct unet_inet_hop *h =
		unet_inet_route(&st->routes, &st->inet, dst, st->kernel_addr ? st->addr : 0, now);
	int err;

	*ask = dst;
	if (h->err == -ENETUNREACH || h->err == -EHOSTUNREACH)
		return h->err;
	if (h->err == -EAGAIN) { /* over the lookup budget: held, asked later */
		*ask = 0;
		return -EAGAIN;
	}
	if (!h->gateway)
		return neigh_find(st, dst, mac);
	err = unet_inet_hop_mac(&st->routes, &st->inet, h, now, mac);
	if (err != -EPERM && err != -EACCES) {
		*ask = 0;
		return err;
	}
	/* not allowed to make the kernel resolve it: ARP for it ourselves */
	*ask = h->via;
	return neigh_find(st, h->via, mac);
}

/*
 * The MAC a frame for the IPv6 address dst goes to: always from the
 * kernel's tables (route6.c), the gateway's or dst's own on the link --
 * lwIP's neighbour discovery never runs on the wire (docs/tcp.md,
 * "IPv6").  Returns 0, -EAGAIN (the kernel is resolving it, or over the
 * lookup budget: held), -ENETUNREACH, -EHOSTUNREACH.
 */
static int hop6_find(struct utcp_state *st, const uint8_t dst[16], uint8_t mac[6])
{
	uint64_t now = unet_inet_now_ns();
	struct unet_inet6_hop *h = unet_inet6_route(&st->routes6, &st->inet, dst,
						    st->kernel_addr6 ? st->addr6 : NULL, now);
	int err;

	if (h->err == -ENETUNREACH || h->err == -EHOSTUNREACH || h->err == -EAGAIN)
		return h->err;
	if (h->err)
		return -EHOSTUNREACH;
	err = unet_inet6_hop_mac(&st->routes6, &st->inet, h, now, mac);
	if (err == -EAGAIN || err == -EHOSTUNREACH)
		return err;
	return err ? -EHOSTUNREACH : 0;
}

static void ask_arp(struct utcp_state *st, uint32_t ip)
{
	uint64_t now = now_ms();
	ip4_addr_t a = { .addr = ip };

	if (now - st->last_arp_ms < ARP_GAP_MS)
		return;
	st->last_arp_ms = now;
	if (etharp_request(&st->netif, &a) == ERR_OK)
		st->st.arp_requests++;
}

/* Frames held for ARP: send those whose peer is known now, drop the old. */
static void flush_pending(struct utcp_state *st)
{
	uint64_t now = now_ms();
	unsigned int i = 0;
	uint8_t mac[6];
	uint32_t ask;

	while (i < st->npend) {
		struct pbuf *p = st->pend[i].p;
		bool done = true, v6 = st->pend[i].v6;
		int err;

		ask = 0;
		err = v6 ? hop6_find(st, st->pend[i].ip6, mac) : hop_find(st, st->pend[i].ip, mac, &ask);
		if (err == 0)
			ethernet_output(&st->netif, p, (const struct eth_addr *)st->netif.hwaddr,
					(const struct eth_addr *)mac, v6 ? ETHTYPE_IPV6 : ETHTYPE_IP);
		else if (err != -ENETUNREACH && err != -EHOSTUNREACH &&
			 now - st->pend[i].since < PENDING_MS)
			done = false;
		if (!done) {
			if (ask)
				ask_arp(st, ask);
			i++;
			continue;
		}
		pbuf_free(p);
		st->pend[i] = st->pend[--st->npend];
	}
}

/* ---- The netif ---------------------------------------------------------------- */

static void hold_frame(struct utcp_state *st, struct pbuf *p, uint32_t ip, const uint8_t *ip6);

/* lwIP's IPv4 output: to the next hop the kernel's routing table gives
 * (hop_find). */
static err_t netif_ip_output(struct netif *netif, struct pbuf *p, const ip4_addr_t *ip)
{
	struct utcp_state *st = netif->state;
	uint8_t mac[6];
	uint32_t ask;
	int err = hop_find(st, ip->addr, mac, &ask);

	if (err == 0)
		return ethernet_output(netif, p, (const struct eth_addr *)netif->hwaddr,
				       (const struct eth_addr *)mac, ETHTYPE_IP);
	st->st.tx_unresolved++;
	if (err == -ENETUNREACH || err == -EHOSTUNREACH)
		return ERR_RTE; /* lwIP retransmits; the route may come back */
	hold_frame(st, p, ip->addr, NULL);
	if (ask)
		ask_arp(st, ask);
	return ERR_OK;
}

/* Hold a copy of p (lwIP reuses p as it likes) until its next hop is
 * known: not while the endpoint goes (the resets it sends then), nor
 * from another endpoint's section (its timers: sent again later). */
static void hold_frame(struct utcp_state *st, struct pbuf *p, uint32_t ip, const uint8_t *ip6)
{
	struct pbuf *q;

	if (st->npend >= PENDING_MAX || st->dying || st != lwip_cur)
		return;
	q = pbuf_alloc(PBUF_LINK, p->tot_len, PBUF_RAM);
	if (q && pbuf_copy(q, p) == ERR_OK) {
		st->pend[st->npend].p = q;
		st->pend[st->npend].ip = ip;
		st->pend[st->npend].v6 = ip6 != NULL;
		if (ip6)
			memcpy(st->pend[st->npend].ip6, ip6, 16);
		st->pend[st->npend].since = now_ms();
		st->npend++;
	} else if (q) {
		pbuf_free(q);
	}
}

/*
 * lwIP's IPv6 output: only TCP leaves, to the next hop the kernel's
 * tables give (hop6_find).  lwIP's neighbour discovery, router
 * solicitations, MLD reports and ICMPv6 errors are not sent: the
 * kernel does neighbour discovery for the link, and our address is
 * answered for by the layer (unet_tcp6_answer_ns).
 */
static err_t netif_ip6_output(struct netif *netif, struct pbuf *p, const ip6_addr_t *ip)
{
	struct utcp_state *st = netif->state;
	uint8_t mac[6], nh = 0, dst[16];
	int err;

	if (pbuf_copy_partial(p, &nh, 1, 6) != 1 || nh != 6)
		return ERR_OK; /* not TCP: never on the wire */
	memcpy(dst, ip->addr, 16);
	err = hop6_find(st, dst, mac);
	if (err == 0)
		return ethernet_output(netif, p, (const struct eth_addr *)netif->hwaddr,
				       (const struct eth_addr *)mac, ETHTYPE_IPV6);
	st->st.tx_unresolved++;
	if (err == -ENETUNREACH || err == -EHOSTUNREACH)
		return ERR_RTE;
	hold_frame(st, p, 0, dst);
	return ERR_OK;
}

static void out_fix(struct utcp_state *st, uint8_t *f, uint32_t len);

/* A frame from lwIP larger than one send buffer, copied piece by piece
 * (unet_layer_queue_frame): the first piece holds every header. */
struct pbuf_fill {
	struct utcp_state *st;
	struct pbuf *p;
};

static void fill_pbuf(void *ctx, uint8_t *dst, uint32_t off, uint32_t len)
{
	struct pbuf_fill *pf = ctx;

	pbuf_copy_partial(pf->p, dst, (u16_t)len, (u16_t)off);
	if (!off)
		out_fix(pf->st, dst, len);
}

/* Bytes of frame one send buffer holds after TX_OFF. */
static uint32_t buf_frame_room(const struct utcp_state *st)
{
	return st->inet.frame_size - XDP_PACKET_HEADROOM - TX_OFF;
}

/* A whole Ethernet frame from lwIP: copied into a segment buffer, or a
 * chain of them if it is larger (lwIP keeps p for retransmission), and
 * put on the send queue. */
static err_t netif_linkoutput(struct netif *netif, struct pbuf *p)
{
	struct utcp_state *st = netif->state;
	uint32_t flen = p->tot_len;
	uint64_t buf;
	uint8_t *frame;

	if (flen > st->inet.mtu + UNET_ETH_HLEN)
		return ERR_IF;
	if (st->swallow)
		return ERR_OK;
	if (st != lwip_cur)
		return handoff(st, p, flen); /* another endpoint's section */
	/* Reap completions as we go: the kernel stops sending once the
	 * completion ring is full, and a window of 64 KiB never fills the
	 * TX ring, where the core would reap them itself. */
	if (unet_endpoint__tx_pending(st->inet.ep) >= TX_REAP)
		unet_endpoint__complete(st->inet.ep);
	if (flen > buf_frame_room(st)) {
		struct pbuf_fill pf = { .st = st, .p = p };

		if (unet_layer_queue_frame(st->inet.ep, st->txq, flen, fill_pbuf, &pf))
			goto busy;
		goto queued;
	}
	buf = unet_endpoint__buf_alloc(st->inet.ep);
	if (buf == UNET_NO_BUF)
		goto busy;
	frame = unet_layer_buf(st->inet.ep, buf) + TX_OFF;
	pbuf_copy_partial(p, frame, (u16_t)flen, 0);
	out_fix(st, frame, flen);
	if (flen < 60) {
		memset(frame + flen, 0, 60 - flen);
		flen = 60;
	}
	if (unet_layer_queue(st->inet.ep, st->txq, buf, TX_OFF, flen)) {
		unet_endpoint__buf_free(st->inet.ep, buf);
		goto busy;
	}
queued:
	st->kick_owed = true;
	st->st.tx_frames++;
	return ERR_OK;
busy:
	/* lwIP keeps the segment and sends it again; progress retries soon. */
	st->st.tx_busy++;
	st->tx_blocked = true;
	return ERR_MEM;
}

static err_t netif_init_cb(struct netif *netif)
{
	struct utcp_state *st = netif->state;

	netif->name[0] = 'u';
	netif->name[1] = 'n';
	netif->output = netif_ip_output;
	netif->output_ip6 = netif_ip6_output;
	netif->mtu6 = (u16_t)st->inet.mtu; /* lwIP's IPv6 MSS: mtu6 - 60 */
	netif->linkoutput = netif_linkoutput;
	netif->mtu = (u16_t)st->inet.mtu;
	netif->hwaddr_len = 6;
	memcpy(netif->hwaddr, st->inet.mac, 6);
	/* No IGMP/MLD flags: we want no group traffic. */
	netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
	return ERR_OK;
}

/* ---- Ports -------------------------------------------------------------------- */

/* A local address of either family, as listen and connect take it. */
struct tcp_laddr {
	bool v6;
	uint32_t a4;	/* network order */
	uint8_t a6[16];
};

/* Hold [la->a6]:*lport ourselves, as port_hold_local for IPv6. */
static int port_hold_local6(struct utcp_state *st, const struct tcp_laddr *la, uint16_t *lport,
			    bool listen, int *kfd)
{
	int fd, err;

	fd = unet_tcp6_reserve(la->a6, lport, listen);
	if (fd < 0)
		return fd;
	err = unet_tcp6_port_add(st->inet.iface, st->inet.slot, la->a6, *lport,
				 listen ? UNET_TCP_PORT_LISTEN : 0);
	if (!err && listen && (err = unet_tcp_reserve_listen(fd)))
		unet_tcp6_port_remove(st->inet.iface, st->inet.slot, la->a6, *lport);
	if (err) {
		close(fd);
		return err;
	}
	*kfd = fd;
	return 0;
}

/* Hold laddr:*lport (0: an ephemeral one) ourselves: we are root and
 * opened the interface's maps.  *kfd gets the kernel socket that keeps
 * the kernel's own TCP off the port.  Returns 0 or -errno. */
static int port_hold_local(struct utcp_state *st, uint32_t laddr, uint16_t *lport, bool listen,
			   bool group, int *kfd)
{
	int fd, err;

	/* Bound first (fails if a kernel socket listens there: its traffic is
	 * never diverted), then the map entry, then a listening port's socket
	 * listens (tcp_admin.c).  A group's listener binds with SO_REUSEPORT,
	 * so the kernel itself refuses another user's member. */
	if (group && !unet_tcp_group_live(st->inet.iface, laddr, *lport)) {
		/* A new group: the port must be free of kernel sockets, or
		 * ours (SO_REUSEPORT) would join a kernel server's group of
		 * the same user, whose connections the XDP program would
		 * then give us all of (as unetd does, daemon/tcp.c). */
		fd = unet_tcp_reserve(laddr, lport, false);
		if (fd < 0)
			return fd;
		close(fd);
	}
	fd = group ? unet_tcp_reserve_group(laddr, *lport) : unet_tcp_reserve(laddr, lport, listen);
	if (fd < 0)
		return fd;
	if (group) {
		err = unet_tcp_port_join(st->inet.iface, st->inet.slot, laddr, *lport,
					 (uint32_t)geteuid());
		if (err == -EACCES || err == -EEXIST)
			err = -EADDRINUSE;
	} else {
		err = unet_tcp_port_add(st->inet.iface, st->inet.slot, laddr, *lport,
					listen ? UNET_TCP_PORT_LISTEN : 0);
	}
	if (!err && listen && (err = unet_tcp_reserve_listen(fd)))
		unet_tcp_port_remove(st->inet.iface, st->inet.slot, laddr, *lport);
	if (err) {
		close(fd);
		return err;
	}
	*kfd = fd;
	return 0;
}

static void port_release(struct utcp_state *st, uint32_t laddr, uint16_t lport, int kfd);

/* Ask unetd to hold it: it checks the port against its policy, holds it
 * with a kernel socket of its own in the device's namespace, registers
 * port and address, and gives us the neighbour map to read (the first
 * time; later ones are the same map). */
static int port_hold_remote(struct utcp_state *st, uint32_t laddr, uint16_t *lport, bool listen,
			    bool group, int *kfd)
{
	struct unetd_tcp_open req = { .ep = unet_layer_daemon_ep(st->inet.ep),
				      .laddr = laddr,
				      .lport = *lport,
				      .flags = (listen ? UNETD_TCP_LISTEN : 0) |
					       (group ? UNETD_TCP_GROUP : 0) };
	struct unetd_tcp_opened rep;
	int fd = -1, err;

	err = unet_layer_daemon_call(st->inet.ep, UNETD_REQ_TCP_OPEN, &req, sizeof(req), &rep,
				     sizeof(rep), &fd);
	if (err)
		return err;
	if (st->inet.neigh_fd < 0)
		st->inet.neigh_fd = fd;
	else if (fd >= 0)
		close(fd);
	if (st->inet.neigh_fd < 0 || !rep.lport || (*lport && rep.lport != *lport)) {
		port_release(st, laddr, rep.lport, -1);
		return -EPROTO;
	}
	*lport = rep.lport;
	st->kernel_addr = rep.kernel_addr;
	st->owns_addr = st->owns_addr || rep.owns_addr;
	*kfd = -1; /* no kernel socket of ours: the daemon's holds it */
	return 0;
}

/* Give a port back: to the interface's maps, or to unetd. */
static void port_release(struct utcp_state *st, uint32_t laddr, uint16_t lport, int kfd)
{
	if (!st->inet.iface) {
		/* The daemon releases the address with its last port. */
		struct unetd_tcp_close req = { .ep = unet_layer_daemon_ep(st->inet.ep),
					       .laddr = laddr,
					       .lport = lport };

		unet_layer_daemon_call(st->inet.ep, UNETD_REQ_TCP_CLOSE, &req, sizeof(req), NULL, 0,
				       NULL);
		return;
	}
	/* The map first: the kernel must not see segments for a port it
	 * would then own with no socket... it answers them with a reset,
	 * which is right once we are gone. */
	unet_tcp_port_remove(st->inet.iface, st->inet.slot, laddr, lport);
	close(kfd);
}

/* Give pt's port back, whichever family. */
static void port_release_pt(struct utcp_state *st, const struct tcp_port *pt)
{
	if (!pt->v6) {
		port_release(st, pt->laddr, pt->lport, pt->kfd);
		return;
	}
	unet_tcp6_port_remove(st->inet.iface, st->inet.slot, pt->laddr6, pt->lport);
	close(pt->kfd);
}

/* Hold la:*lport (0: an ephemeral one) for st; group: a SO_REUSEPORT
 * group's port (IPv4 only).  Returns the port with one reference, or
 * NULL with errno. */
static struct tcp_port *port_get(struct utcp_state *st, const struct tcp_laddr *la,
				 uint16_t *lport, bool listen, bool group)
{
	struct tcp_port *pt, tmp;
	int fd = -1, err;

	for (pt = st->ports; pt && *lport; pt = pt->next)
		if (pt->v6 == la->v6 && pt->lport == *lport &&
		    (la->v6 ? !memcmp(pt->laddr6, la->a6, 16) : pt->laddr == la->a4)) {
			errno = EADDRINUSE;
			return NULL;
		}
	if (la->v6)
		err = st->inet.iface && !group ? port_hold_local6(st, la, lport, listen, &fd)
					       : -EOPNOTSUPP;
	else
		err = st->inet.iface ? port_hold_local(st, la->a4, lport, listen, group, &fd)
				     : port_hold_remote(st, la->a4, lport, listen, group, &fd);
	if (err) {
		errno = -err;
		return NULL;
	}
	memset(&tmp, 0, sizeof(tmp));
	tmp.v6 = la->v6;
	tmp.laddr = la->a4;
	memcpy(tmp.laddr6, la->a6, 16);
	tmp.lport = *lport;
	tmp.kfd = fd;
	pt = calloc(1, sizeof(*pt));
	if (!pt) {
		port_release_pt(st, &tmp);
		errno = ENOMEM;
		return NULL;
	}
	*pt = tmp;
	pt->refs = 1;
	pt->next = st->ports;
	st->ports = pt;
	return pt;
}

static void port_put(struct utcp_state *st, struct tcp_port *pt)
{
	if (!pt || --pt->refs)
		return;
	for (struct tcp_port **pp = &st->ports; *pp; pp = &(*pp)->next)
		if (*pp == pt) {
			*pp = pt->next;
			break;
		}
	port_release_pt(st, pt);
	free(pt);
}

/* ---- lwIP callbacks (under the lock) ------------------------------------------ */

/*
 * The receive queue (docs/tcp.md, "Memory").  lwIP hands over each
 * segment's data as the pbuf it arrived in (~80 bytes of pbuf and
 * allocator per segment whatever its length) or a chain of them; 1-byte
 * segments would cost ~100 bytes per byte, and pbuf_cat walks the whole
 * chain for every segment.  Instead: the chain is split into single
 * pbufs, queued at a tail pointer (O(1)); a pbuf of less than
 * RX_COALESCE bytes is copied into the tail if that is one of ours with
 * room (RX_CHUNK bytes each), else into a new one, and freed.  So the
 * queue costs at most ~1.2 bytes of memory per byte of data, and the
 * data is bounded by the receive window (tcp_recved only when read).
 */
#define RX_COALESCE 512
#define RX_CHUNK 2048
#define RX_PBUF_COST 128u /* a pbuf's own memory, about: struct, frame headers, allocator */
#define RX_MEM_MAX (64u << 20) /* per endpoint: rx queues' memory, about (rx_mem) */

static void rx_append(struct utcp_state *st, struct unet_tcp *c, struct pbuf *q, uint32_t room)
{
	if (c->rx_tail)
		c->rx_tail->next = q;
	else
		c->rx = q;
	c->rx_tail = q;
	c->rx_room = room;
	st->rx_pbufs++;
	st->rx_bytes += q->len + room;
}

static void rx_push(struct utcp_state *st, struct unet_tcp *c, struct pbuf *p)
{
	while (p) {
		struct pbuf *q = p, *nq;

		/* q alone now; p the rest, the chain's reference to it ours
		 * (not pbuf_dechain: that drops the reference, freeing it) */
		p = q->next;
		q->next = NULL;
		q->tot_len = q->len;
		if (q->len >= RX_COALESCE || !q->len) {
			if (q->len)
				rx_append(st, c, q, 0);
			else
				pbuf_free(q);
			continue;
		}
		if (c->rx_room < q->len) {
			nq = pbuf_alloc(PBUF_RAW, RX_CHUNK, PBUF_RAM);
			if (!nq) { /* keep it as it is */
				st->st.rx_nomem++;
				rx_append(st, c, q, 0);
				continue;
			}
			nq->len = nq->tot_len = 0;
			rx_append(st, c, nq, RX_CHUNK);
		}
		memcpy((uint8_t *)c->rx_tail->payload + c->rx_tail->len, q->payload, q->len);
		c->rx_tail->len = (u16_t)(c->rx_tail->len + q->len);
		c->rx_tail->tot_len = c->rx_tail->len;
		c->rx_room -= q->len;
		pbuf_free(q);
	}
}

/* Take the first pbuf off c's queue and free it. */
static void rx_drop_head(struct utcp_state *st, struct unet_tcp *c)
{
	struct pbuf *q = c->rx;

	st->rx_pbufs--;
	st->rx_bytes -= q->len;
	if (q == c->rx_tail) {
		st->rx_bytes -= c->rx_room;
		c->rx_room = 0;
		c->rx_tail = NULL;
	}
	c->rx = q->next;
	q->next = NULL;
	pbuf_free(q);
}

/* Copy up to len unread bytes to buf and free what is read.  Returns
 * the bytes copied. */
static size_t rx_pull(struct utcp_state *st, struct unet_tcp *c, uint8_t *buf, size_t len)
{
	size_t n = 0;

	while (c->rx && n < len) {
		struct pbuf *q = c->rx;
		size_t k = len - n < q->len ? len - n : q->len;

		if (!q->len) { /* a chunk of ours, read: kept while it is the tail */
			if (q == c->rx_tail)
				break;
			rx_drop_head(st, c);
			continue;
		}
		memcpy(buf + n, q->payload, k);
		n += k;
		st->rx_bytes -= k;
		pbuf_remove_header(q, k);
		if (!q->len && (q != c->rx_tail || !c->rx_room))
			rx_drop_head(st, c);
	}
	return n;
}

/* Whether c has unread bytes (the queue may start with an empty chunk). */
static bool rx_unread(const struct unet_tcp *c)
{
	return c->rx && (c->rx->len || c->rx->next);
}

static void rx_free(struct utcp_state *st, struct unet_tcp *c)
{
	while (c->rx)
		rx_drop_head(st, c);
}

/* Memory in st's receive queues, about. */
static uint64_t rx_mem(const struct utcp_state *st)
{
	return st->rx_bytes + st->rx_pbufs * RX_PBUF_COST;
}

static err_t on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
	struct unet_tcp *c = arg;

	(void)pcb;
	if (err != ERR_OK) {
		if (p)
			pbuf_free(p);
		return ERR_OK;
	}
	c->arrivals++;
	if (!p) {
		c->eof = true;
		return ERR_OK;
	}
	rx_push(c->st, c, p);
	return ERR_OK;
}

static int err_errno(err_t err, bool connected)
{
	switch (err) {
	case ERR_RST:
		return connected ? -ECONNRESET : -ECONNREFUSED;
	case ERR_ABRT:
		/* lwIP gave up: retransmission or SYN timeout */
		return -ETIMEDOUT;
	case ERR_CLSD:
		return -ENOTCONN;
	default:
		return -EIO;
	}
}

/* lwIP freed the pcb: a reset, or it gave up. */
static void on_err(void *arg, err_t err)
{
	struct unet_tcp *c = arg;

	if (!c || c->listener) /* a half-open pcb carries its listener's arg */
		return;
	c->pcb = NULL;
	c->err = err_errno(err, c->connected);
	c->arrivals++;
}

/*
 * A wider send buffer than Debian's build gives (TCP_SND_BUF 64 KiB, so
 * at most 64 KiB in flight: bulk <= 64 KiB per round trip).  snd_buf is
 * lwIP's per-connection count of the bytes tcp_write may still take: it
 * is set to TCP_SND_BUF when the pcb is made, lowered by tcp_write and
 * raised by exactly the bytes each ACK covers, never checked against
 * TCP_SND_BUF again.  Raising it once, when the handshake is done and
 * nothing was written yet, therefore lets lwIP keep SND_BUF bytes in
 * flight; the limit lwIP does enforce is the segment count
 * (TCP_SND_QUEUELEN, 4 x TCP_SND_BUF / MSS = 180 segments of 1460
 * bytes), which SND_BUF stays below.  ssthresh starts at TCP_SND_BUF (the
 * largest flight lwIP expects): raised with it, so slow start opens the
 * window that far.  The peer's window still bounds the flight, and loss
 * still shrinks it (ssthresh, cwnd).  docs/tcp.md, "What limits bulk".
 */
static void set_mss(struct tcp_pcb *pcb, uint32_t mss);

#define SND_BUF (170u * 1460u)
_Static_assert(SND_BUF / 1460 + 4 < TCP_SND_QUEUELEN, "SND_BUF beyond what lwIP queues");

static void widen(struct tcp_pcb *pcb)
{
	if (pcb->snd_buf == TCP_SND_BUF && pcb->snd_queuelen == 0) {
		pcb->snd_buf = SND_BUF;
		if (pcb->ssthresh < SND_BUF)
			pcb->ssthresh = SND_BUF;
	}
}

static err_t on_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
	struct unet_tcp *c = arg;

	if (err == ERR_OK) {
		c->connected = true;
		/* The SYN-ACK's MSS, clamped to the route's (tcp_layer_rx). */
		set_mss(pcb, c->st->syn_mss);
		widen(pcb);
	}
	return ERR_OK;
}

static void conn_hook(struct unet_tcp *c, struct tcp_pcb *pcb)
{
	c->pcb = pcb;
	tcp_arg(pcb, c);
	tcp_recv(pcb, on_recv);
	tcp_err(pcb, on_err);
	/* Small writes go out at once (TCP_NODELAY): request/response first. */
	tcp_nagle_disable(pcb);
	c->next = c->st->conns;
	c->st->conns = c;
	c->st->st.connections++;
}

/* A handshake on listener l completed. */
static err_t on_accept(void *arg, struct tcp_pcb *pcb, err_t err)
{
	struct unet_tcp *l = arg, *c;
	struct utcp_state *st;

	if (err != ERR_OK || !pcb || !l)
		return ERR_VAL;
	st = l->st;
	if (l->nacq >= l->backlog || st->st.connections >= MAX_CONNS ||
	    !(c = calloc(1, sizeof(*c)))) {
		st->st.accept_refused++;
		tcp_abort(pcb);
		return ERR_ABRT;
	}
	c->st = st;
	c->port = l->port;
	l->port->refs++;
	c->connected = true;
	c->v6 = IP_IS_V6(&pcb->remote_ip);
	if (c->v6)
		memcpy(c->raddr6, ip_2_ip6(&pcb->remote_ip)->addr, 16);
	else
		c->raddr = ip_2_ip4(&pcb->remote_ip)->addr;
	c->rport = pcb->remote_port;
	c->lport = pcb->local_port;
	c->parent = l;
	widen(pcb);
	conn_hook(c, pcb);
	if (l->acq_tail)
		l->acq_tail->qnext = c;
	else
		l->acq_head = c;
	l->acq_tail = c;
	l->nacq++;
	l->arrivals++;
	return ERR_OK;
}

/* ---- Receiving ------------------------------------------------------------------ */

/*
 * SYN floods: SYN cookies, made by the layer.  lwIP (TCP_LISTEN_BACKLOG
 * 0, malloc pools) keeps a pcb per SYN for 20 s and bounds nothing; a
 * bounded table of half-open connections lets a flood of spoofed SYNs
 * push real clients out of it faster than their round trip.  So no SYN
 * for a listener reaches lwIP: the layer answers it with a SYN-ACK of its
 * own whose initial sequence number is a cookie, and keeps nothing.  The
 * peer's ACK for it (no connection has its 4-tuple, and its
 * acknowledgement number - 1 is our cookie for its sequence number - 1)
 * makes the connection: the layer hands lwIP the
 * SYN again (rebuilt from the cookie: the peer's ISN, MSS, window
 * scale), swallows lwIP's SYN-ACK, moves the new pcb's send sequence
 * numbers onto the cookie (cookie_shift), then hands lwIP the ACK,
 * which completes the handshake.  Nothing is kept per SYN and nothing
 * a SYN costs grows with the flood (finding its 4-tuple among the
 * connections, as lwIP does for every segment, is the only walk); a
 * real client completes whatever the flood.
 *
 * The cookie: 2 bits of a 64 s time slot (valid in its slot and the
 * next), 2 bits of the peer's MSS (cookie_mss), 4 of its window scale
 * (15: none), then 24 bits of SipHash (isn_key) over the addresses,
 * ports, the peer's ISN and those 8 bits.  Timestamps and SACK would be
 * lost, and lwIP offers neither.  The cookie is the wire's ISN (lwIP's
 * plus seq_offset, as for every connection).
 */
#define COOKIE_SLOT_S 64
static uint32_t mtu_mss(uint32_t mtu);

static const uint16_t cookie_mss_std[4] = { 536, 1220, 1440, 1460 };

/* The MSS a cookie's 2 bits mean on this endpoint: the table above at
 * MTU 1500 and below; at a jumbo MTU the top entry is the endpoint's own
 * MSS (MTU - 40) and 1460 moves down to take 1440's place (a peer that
 * offers between 1440 and 1459 gets 1220 then). */
static uint32_t cookie_mss(const struct utcp_state *st, uint32_t i)
{
	uint32_t mine = mtu_mss(st->inet.mtu);

	if (mine <= cookie_mss_std[3])
		return cookie_mss_std[i];
	return i == 3 ? mine : i == 2 ? cookie_mss_std[3] : cookie_mss_std[i];
}

static uint32_t cookie_slot(void)
{
	return (uint32_t)(now_ms() / 1000 / COOKIE_SLOT_S);
}

/* The cookie for a SYN from saddr:sport with sequence number seq to
 * daddr:dport (addresses network order, ports host order); hdr its top
 * 8 bits. */
static uint32_t cookie_make(uint32_t saddr, uint16_t sport, uint32_t daddr, uint16_t dport,
			    uint32_t seq, uint32_t hdr)
{
	uint64_t m[2] = { (uint64_t)saddr << 32 | daddr,
			  (uint64_t)seq << 32 | (uint32_t)sport << 16 | dport };

	return hdr | ((uint32_t)siphash(m, 2, hdr >> 24, 17) & 0xffffff);
}

/* The listener on port, or NULL. */
static struct unet_tcp *find_listener(struct utcp_state *st, uint16_t port, bool v6)
{
	for (struct unet_tcp *l = st->listeners; l; l = l->lnext)
		if (l->lport == port && l->v6 == v6)
			return l;
	return NULL;
}

/* TCP options of the segment at t (doff bytes of header): the MSS (0:
 * none) and the window scale (-1: none). */
static void tcp_opts(const uint8_t *t, uint32_t doff, uint32_t *mss, int *ws)
{
	*mss = 0;
	*ws = -1;
	for (uint32_t i = 20; i < doff;) {
		uint8_t kind = t[i];

		if (kind == 0)
			break;
		if (kind == 1) {
			i++;
			continue;
		}
		if (i + 1 >= doff || t[i + 1] < 2 || i + t[i + 1] > doff)
			break;
		if (kind == 2 && t[i + 1] == 4)
			*mss = get16(t + i + 2);
		else if (kind == 3 && t[i + 1] == 3)
			*ws = t[i + 2] > 14 ? 14 : t[i + 2];
		i += t[i + 1];
	}
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static void set16_csum(uint8_t *p, uint16_t v, uint8_t *c)
{
	uint64_t sum = (uint16_t)~get16(c);
	uint16_t n;

	sum += (uint16_t)~get16(p) + v;
	n = (uint16_t)~unet_csum_fold(sum);
	c[0] = (uint8_t)(n >> 8);
	c[1] = (uint8_t)n;
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The MSS a link or route of this MTU carries: the MTU less the IPv4
 * and TCP headers, at least 536 (RFC 9293's default).  Not capped at
 * lwIP's TCP_MSS (1460): above it, set_mss raises what lwIP uses. */
static uint32_t mtu_mss(uint32_t mtu)
{
	return mtu > 40 + 536 ? mtu - 40 : 536;
}

/* The largest segment the kernel's route to peer carries (its MTU, or
 * the interface's), docs/tcp.md, "Routing". */
static uint32_t route_mss(struct utcp_state *st, uint32_t peer)
{
	return mtu_mss(unet_inet_route(&st->routes, &st->inet, peer,
				       st->kernel_addr ? st->addr : 0, unet_inet_now_ns())->mtu);
}

/* The MSS of the kernel's IPv6 route to peer: its MTU less the IPv6 and
 * TCP headers (60), at least 1220 (IPv6's minimum MTU, 1280, less 60). */
static uint32_t route_mss6(struct utcp_state *st, const uint8_t peer[16])
{
	uint32_t mtu = unet_inet6_route(&st->routes6, &st->inet, peer,
					st->kernel_addr6 ? st->addr6 : NULL, unet_inet_now_ns())->mtu;

	return mtu > 1280 ? mtu - 60 : 1220;
}

/*
 * Debian's lwIP is built with TCP_MSS 1460 and caps every connection's
 * MSS there (the peer's option, its own); at a jumbo MTU the layer sets
 * the MSS lwIP segments by itself, once the handshake has given it:
 * mss, the smaller of the peer's option and the route's.  The initial
 * congestion window lwIP derived from the old MSS follows.  Never lowers
 * what lwIP chose.
 */
static void set_mss(struct tcp_pcb *pcb, uint32_t mss)
{
	if (!pcb || mss <= pcb->mss || mss > 0xffff)
		return;
	pcb->mss = (u16_t)mss;
	/* RFC 5681's initial window, as lwIP computes it (tcp_in.c) */
	if (pcb->state == ESTABLISHED)
		pcb->cwnd = (tcpwnd_size_t)min_u32(4 * mss, 2 * mss > 4380 ? 2 * mss : 4380);
}

/* The offset of the MSS option in the TCP header at t (doff bytes), or 0
 * if it has none (or one at an odd offset, never seen from a real
 * stack: left alone). */
static uint32_t mss_option(const uint8_t *t, uint32_t doff)
{
	for (uint32_t i = 20; i < doff;) {
		uint8_t kind = t[i];

		if (kind == 0)
			break;
		if (kind == 1) {
			i++;
			continue;
		}
		if (i + 1 >= doff || t[i + 1] < 2 || i + t[i + 1] > doff)
			break;
		if (kind == 2 && t[i + 1] == 4)
			return i & 1 ? 0 : i + 2;
		i += t[i + 1];
	}
	return 0;
}

/* Lower the MSS option of the SYN at t (doff bytes of header) to max,
 * the checksum kept: lwIP then sends no segment the route cannot carry,
 * as a router clamping the MSS would make it. */
static void clamp_mss(uint8_t *t, uint32_t doff, uint32_t max)
{
	uint32_t o = mss_option(t, doff);

	if (o && get16(t + o) > max)
		set16_csum(t + o, (uint16_t)max, t + 16);
}

/* IPv6 only: a peer's MSS below what every IPv6 path carries (1280 -
 * 60 = 1220) is raised to it (or to max, if lower): a peer announcing an
 * MSS of 1 would otherwise have us send a byte per segment (IPv4 has the
 * SYN cookies' floor of 536). */
#define TCP6_MIN_MSS 1220u
static void floor_mss6(uint8_t *t, uint32_t doff, uint32_t max)
{
	uint32_t o = mss_option(t, doff), floor = max < TCP6_MIN_MSS ? max : TCP6_MIN_MSS;

	if (o && get16(t + o) < floor)
		set16_csum(t + o, (uint16_t)floor, t + 16);
}

/*
 * A frame lwIP sends (len bytes at f, in our send buffer; lwIP's own
 * copy is never touched): an IPv4/TCP segment's sequence number gets F
 * added (seq_out); the MSS option of a SYN (our connect) is raised to
 * the route's MSS where that is above lwIP's TCP_MSS (a jumbo MTU: lwIP
 * offers at most 1460).  At MTU 1500 the two agree and nothing changes.
 */
static void out_fix(struct utcp_state *st, uint8_t *f, uint32_t len)
{
	uint8_t *ip = f + UNET_ETH_HLEN, *t;
	uint32_t hlen, doff, o, mss, daddr;

	seq_out(f, len);
	if ((t = tcp6_hdr(f, len))) {
		/* IPv6: our SYN's and SYN-ACK's MSS is the route's (its MTU
		 * - 60), raised at a jumbo MTU and lowered on a route of a
		 * smaller MTU, so the peer's segments fit the path too (an
		 * IPv6 router does not fragment). */
		doff = (t[12] >> 4) * 4u;
		if (!(t[13] & TCP_SYN) || doff < 20 || len < UNET_ETH_HLEN + 40 + doff ||
		    !(o = mss_option(t, doff)))
			return;
		mss = route_mss6(st, ip + 24);
		if (mss != get16(t + o) && mss <= 0xffff)
			set16_csum(t + o, (uint16_t)mss, t + 16);
		return;
	}
	if (len < UNET_ETH_HLEN + 20 || get16(f + 12) != 0x0800 || ip[9] != 6)
		return;
	hlen = (ip[0] & 0xfu) * 4;
	if (len < UNET_ETH_HLEN + hlen + 20)
		return;
	t = ip + hlen;
	doff = (t[12] >> 4) * 4u;
	if ((t[13] & (TCP_SYN | TCP_ACK)) != TCP_SYN || doff < 20 ||
	    len < UNET_ETH_HLEN + hlen + doff || !(o = mss_option(t, doff)))
		return;
	memcpy(&daddr, ip + 16, 4);
	mss = route_mss(st, daddr);
	if (mss > get16(t + o) && mss <= 0xffff)
		set16_csum(t + o, (uint16_t)mss, t + 16);
}

/* A frame of ours (SYN-ACKs with cookies) or handed over (handoff) onto
 * the send queue, in pieces if one buffer does not hold it.  Returns 0
 * or -EBUSY (no buffer, queue full). */
static int tx_frame(struct utcp_state *st, const uint8_t *f, uint32_t len)
{
	uint64_t buf;

	if (unet_endpoint__tx_pending(st->inet.ep) >= TX_REAP)
		unet_endpoint__complete(st->inet.ep);
	if (len > buf_frame_room(st)) {
		struct unet_layer_parts parts = { .head = f, .hlen = len, .body = NULL };

		if (unet_layer_queue_frame(st->inet.ep, st->txq, len, unet_layer_fill_copy, &parts))
			return -EBUSY;
	} else {
		buf = unet_endpoint__buf_alloc(st->inet.ep);
		if (buf == UNET_NO_BUF)
			return -EBUSY;
		memcpy(unet_layer_buf(st->inet.ep, buf) + TX_OFF, f, len);
		if (unet_layer_queue(st->inet.ep, st->txq, buf, TX_OFF, len)) {
			unet_endpoint__buf_free(st->inet.ep, buf);
			return -EBUSY;
		}
	}
	st->kick_owed = true;
	st->st.tx_frames++;
	return 0;
}

/*
 * An Ethernet/IPv4/TCP frame into f (room for 14 + 20 + 28), from
 * saddr:sport to daddr:dport (the MACs from the frame we answer: its
 * source is the destination); an MSS option if mss, a window scale
 * option if ws >= 0; both checksums complete.  Returns its length.
 */
static uint32_t build_seg(uint8_t *f, const uint8_t *dmac, const uint8_t *smac, uint32_t saddr,
			  uint16_t sport, uint32_t daddr, uint16_t dport, uint32_t seq, uint32_t ack,
			  uint8_t flags, uint16_t wnd, uint32_t mss, int ws)
{
	uint8_t *ip = f + UNET_ETH_HLEN, *t = ip + 20;
	uint32_t doff = 20 + (mss ? 4 : 0) + (ws >= 0 ? 4 : 0), o = 20;
	uint16_t v;

	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	f[12] = 0x08;
	f[13] = 0x00;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	v = htons((uint16_t)(20 + doff));
	memcpy(ip + 2, &v, 2);
	ip[6] = 0x40; /* DF */
	ip[8] = 64;
	ip[9] = 6;
	memcpy(ip + 12, &saddr, 4);
	memcpy(ip + 16, &daddr, 4);
	v = htons((uint16_t)~unet_csum_fold(unet_csum_add(0, ip, 20)));
	memcpy(ip + 10, &v, 2);
	memset(t, 0, doff);
	t[0] = (uint8_t)(sport >> 8);
	t[1] = (uint8_t)sport;
	t[2] = (uint8_t)(dport >> 8);
	t[3] = (uint8_t)dport;
	put32(t + 4, seq);
	put32(t + 8, ack);
	t[12] = (uint8_t)(doff / 4 << 4);
	t[13] = flags;
	t[14] = (uint8_t)(wnd >> 8);
	t[15] = (uint8_t)wnd;
	if (mss) {
		t[o++] = 2;
		t[o++] = 4;
		t[o++] = (uint8_t)(mss >> 8);
		t[o++] = (uint8_t)mss;
	}
	if (ws >= 0) {
		t[o++] = 1;
		t[o++] = 3;
		t[o++] = 3;
		t[o++] = (uint8_t)ws;
	}
	v = htons((uint16_t)~unet_csum_fold(
		unet_csum_add(unet_csum_pseudo(saddr, daddr, 6, (uint16_t)doff), t, doff)));
	memcpy(t + 16, &v, 2);
	return UNET_ETH_HLEN + 20 + doff;
}

/* A SYN (at t, doff bytes of header, in frame) for a listener: answer
 * with a SYN-ACK whose ISN is a cookie.  Keeps nothing. */
static void cookie_answer(struct utcp_state *st, const uint8_t *frame, const uint8_t *t,
			  uint32_t doff, uint32_t saddr, uint32_t daddr)
{
	uint16_t sport = get16(t), dport = get16(t + 2);
	/* The interface's MTU, not the route's: a SYN (its source may be
	 * forged, one per packet of a flood) costs no route lookup; the
	 * route's MSS is applied when the cookie comes back (cookie_take). */
	uint32_t seq = get32(t + 4), mss, mi = 0, hdr, isn, mymss = mtu_mss(st->inet.mtu);
	uint8_t f[UNET_ETH_HLEN + 20 + 28];
	int ws;

	tcp_opts(t, doff, &mss, &ws);
	if (!mss)
		mss = 536;
	while (mi < 3 && cookie_mss(st, mi + 1) <= mss)
		mi++;
	hdr = (cookie_slot() & 3) << 30 | mi << 28 | (uint32_t)(ws < 0 ? 15 : ws) << 24;
	isn = cookie_make(saddr, sport, daddr, dport, seq, hdr);
	/* the window and scale lwIP's own SYN-ACK would carry */
	if (tx_frame(st, f, build_seg(f, frame + 6, st->inet.mac, daddr, dport, saddr, sport, isn,
				       seq + 1, TCP_SYN | TCP_ACK, TCP_WND > 0xffff ? 0xffff : TCP_WND,
				       mymss, ws < 0 ? -1 : TCP_RCV_SCALE)))
		st->st.rx_syn_dropped++;
	else
		st->st.rx_syn_cookies++;
}

/* Move every send sequence number of pcb (SYN_RCVD, its SYN-ACK queued
 * or sent) by d. */
static void cookie_shift(struct tcp_pcb *pcb, uint32_t d)
{
	pcb->lastack += d;
	pcb->snd_nxt += d;
	pcb->snd_wl2 += d;
	pcb->snd_lbb += d;
	pcb->rtseq += d;
	for (struct tcp_seg *q = pcb->unacked; q; q = q->next)
		q->tcphdr->seqno = lwip_htonl(lwip_ntohl(q->tcphdr->seqno) + d);
	for (struct tcp_seg *q = pcb->unsent; q; q = q->next)
		q->tcphdr->seqno = lwip_htonl(lwip_ntohl(q->tcphdr->seqno) + d);
}

/*
 * An ACK (at t, in frame; no connection has its 4-tuple) for listener
 * l: if its acknowledgement number - 1 (the wire's) is a cookie of ours
 * for its sequence number - 1, make the connection in lwIP (see above).
 * Returns 1 if it did (the ACK goes to lwIP next), 0 if the ACK is no
 * cookie's (lwIP answers it with a reset), -1 if the listener has no
 * room (the ACK is dropped: the peer sends it again).
 */
static int cookie_take(struct utcp_state *st, struct unet_tcp *l, const uint8_t *frame,
		       const uint8_t *t, uint32_t saddr, uint32_t daddr)
{
	uint16_t sport = get16(t), dport = get16(t + 2);
	uint32_t seq = get32(t + 4) - 1, cookie = get32(t + 8) - 1, slot = cookie_slot();
	uint32_t hdr = cookie & 0xff000000u, ws = hdr >> 24 & 15;
	uint8_t f[UNET_ETH_HLEN + 20 + 28];
	struct tcp_pcb *pcb;
	struct pbuf *p;
	uint32_t n, mss;

	if (((slot - (cookie >> 30)) & 3) > 1 ||
	    cookie_make(saddr, sport, daddr, dport, seq, hdr) != cookie)
		return 0;
	if (l->nacq >= l->backlog || st->st.connections >= MAX_CONNS) {
		st->st.rx_syn_dropped++;
		return -1;
	}
	/* The SYN again, as the cookie remembers it (and the ACK's window). */
	mss = min_u32(cookie_mss(st, hdr >> 28 & 3), route_mss(st, saddr));
	n = build_seg(f, frame, frame + 6, saddr, sport, daddr, dport, seq, 0, TCP_SYN,
		      get16(t + 14), mss, ws == 15 ? -1 : (int)ws);
	p = pbuf_alloc(PBUF_RAW, (u16_t)n, PBUF_RAM);
	if (!p) {
		st->st.rx_nomem++;
		return -1;
	}
	memcpy(p->payload, f, n);
	st->swallow = true; /* lwIP's own SYN-ACK: the peer has ours */
	ethernet_input(p, &st->netif);
	st->swallow = false;
	pcb = tcp_active_pcbs; /* a new pcb goes first (TCP_REG_ACTIVE) */
	if (!pcb || pcb->state != SYN_RCVD || pcb->remote_port != sport || pcb->local_port != dport ||
	    ip_2_ip4(&pcb->remote_ip)->addr != saddr)
		return 0;
	cookie_shift(pcb, cookie - seq_offset(daddr, dport, saddr, sport) - pcb->lastack);
	set_mss(pcb, mss); /* lwIP stopped at 1460 (set_mss) */
	st->st.syn_cookie_conns++;
	return 1;
}

/*
 * A GSO frame (skb mode with the peer's offloads: a super-segment of
 * tl > the MTU's bytes of TCP, its checksum partial) to lwIP as the
 * segments the peer's NIC would have cut: at most mss bytes of data
 * each, sequence numbers advanced, FIN and PSH on the last only, CWR on
 * the first only, IP total length, id and both checksums redone.
 */
static void feed_gso(struct utcp_state *st, const uint8_t *frame, uint32_t hlen, uint32_t doff,
		     uint32_t tl, uint32_t saddr, uint32_t daddr)
{
	uint32_t hdr = UNET_ETH_HLEN + hlen + doff, mss = st->inet.mtu - hlen - doff;
	const uint8_t *data = frame + hdr;
	uint32_t seq0 = get32(frame + UNET_ETH_HLEN + hlen + 4);
	uint16_t id = get16(frame + UNET_ETH_HLEN + 4);

	for (uint32_t off = 0; off < tl - doff; off += mss) {
		uint32_t n = tl - doff - off < mss ? tl - doff - off : mss;
		struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)(hdr + n), PBUF_RAM);
		uint8_t *f, *ip, *t;
		uint16_t v;
		uint32_t seq;

		if (!p) {
			st->st.rx_nomem++;
			return;
		}
		f = p->payload;
		ip = f + UNET_ETH_HLEN;
		t = ip + hlen;
		memcpy(f, frame, hdr);
		memcpy(f + hdr, data + off, n);
		v = htons((uint16_t)(hlen + doff + n));
		memcpy(ip + 2, &v, 2);
		v = htons((uint16_t)(id + off / mss));
		memcpy(ip + 4, &v, 2);
		memset(ip + 10, 0, 2);
		v = htons((uint16_t)~unet_csum_fold(unet_csum_add(0, ip, hlen)));
		memcpy(ip + 10, &v, 2);
		seq = htonl(seq0 + off);
		memcpy(t + 4, &seq, 4);
		if (off + n < tl - doff)
			t[13] &= (uint8_t)~(TCP_FIN | TCP_PSH);
		if (off)
			t[13] &= (uint8_t)~0x80; /* CWR */
		memset(t + 16, 0, 2);
		v = htons((uint16_t)~unet_csum_fold(unet_csum_add(
			unet_csum_pseudo(saddr, daddr, 6, (uint16_t)(doff + n)), t, doff + n)));
		memcpy(t + 16, &v, 2);
		st->st.rx_frames++;
		ethernet_input(p, &st->netif);
	}
	st->next_ms = 0;
}

/* Hand len bytes of frame to lwIP (copied: the U-Net buffer goes back). */
static void feed(struct utcp_state *st, const uint8_t *frame, uint32_t len)
{
	struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)len, PBUF_RAM);

	if (!p) {
		st->st.rx_nomem++;
		return;
	}
	memcpy(p->payload, frame, len);
	ethernet_input(p, &st->netif);
	st->next_ms = 0; /* timers may have been armed */
}

/*
 * Whether lwIP would abort the process on this segment (tl bytes of TCP
 * at t, from saddr to daddr; under the lock).  lwIP 2.1's tcp_receive
 * takes a segment as overlapping rcv_nxt when rcv_nxt - (seq + 1) >= 0
 * and rcv_nxt - (seq + len - 1) <= 0, each compared as signed 32 bits.
 * Both hold for a segment of sequence length 1 (one byte, or a bare FIN
 * or SYN) at exactly rcv_nxt + 2^31, which then fails its assertion
 * "insane offset!" -- and Debian's liblwip keeps its assertions, which
 * abort().  Such a segment lies outside any window: we drop it.  Only a
 * sender that knows the connection's rcv_nxt can aim it, but one
 * segment would kill every connection of the process.  Found by
 * tests/unit/test_tcp_fuzz.c.
 */
static bool seq_trap(const struct tcp_pcb *pcb, uint32_t seq, uint32_t seqlen)
{
	return seqlen == 1 && pcb->rcv_nxt - seq == 0x80000000u;
}

/* The active pcb (lwIP's, any state but LISTEN and TIME_WAIT) of the
 * segment at t from saddr to daddr, or NULL (under the lock). */
static struct tcp_pcb *seg_pcb(const uint8_t *t, uint32_t saddr, uint32_t daddr)
{
	uint16_t sport = get16(t), dport = get16(t + 2);

	for (struct tcp_pcb *p = tcp_active_pcbs; p; p = p->next)
		if (p->local_port == dport && p->remote_port == sport && IP_IS_V4(&p->remote_ip) &&
		    ip_2_ip4(&p->remote_ip)->addr == saddr && ip_2_ip4(&p->local_ip)->addr == daddr)
			return p;
	return NULL;
}

/* Whether lwIP has the segment's connection in TIME_WAIT (it answers). */
static bool seg_time_wait(const uint8_t *t, uint32_t saddr, uint32_t daddr)
{
	uint16_t sport = get16(t), dport = get16(t + 2);

	for (struct tcp_pcb *p = tcp_tw_pcbs; p; p = p->next)
		if (p->local_port == dport && p->remote_port == sport && IP_IS_V4(&p->remote_ip) &&
		    ip_2_ip4(&p->remote_ip)->addr == saddr && ip_2_ip4(&p->local_ip)->addr == daddr)
			return true;
	return false;
}

/*
 * Whether lwIP 2.1 drops this segment of a synchronized connection as
 * outside its receive window (answering with an ACK): data, SYN or FIN
 * entirely before rcv_nxt (an old duplicate) or at or past
 * rcv_nxt + rcv_wnd; a RST anywhere but at rcv_nxt (tcp_process:
 * acceptable only there, a challenge ACK otherwise).  For the counters
 * only: lwIP decides.
 */
static bool out_of_window(const struct tcp_pcb *pcb, uint8_t flags, uint32_t seq,
			  uint32_t seqlen)
{
	uint32_t off;

	if (pcb->state < ESTABLISHED || pcb->state == TIME_WAIT)
		return false;
	if (flags & TCP_RST)
		return seq != pcb->rcv_nxt;
	if (!seqlen)
		return false;
	off = seq - pcb->rcv_nxt;
	if (off < 0x80000000u) /* at or after rcv_nxt */
		return off >= pcb->rcv_wnd;
	return (int32_t)(seq + seqlen - pcb->rcv_nxt) <= 0; /* all of it before */
}

/*
 * Whether data of n bytes at seq for pcb may go to lwIP to be held
 * (docs/tcp.md, "Memory"); counts the drop if not.  lwIP keeps
 * out-of-order data (pcb->ooseq) without a bound and walks that list for
 * every segment it adds (TCP_OOSEQ_MAX_* 0 in this build): a segment of
 * it costs ~200 bytes however short, and the walk grows with the list.
 * So out-of-order data shorter than RX_COALESCE is dropped here (the
 * sender sends it again once the hole is filled): at most
 * window / RX_COALESCE = 128 segments out of order per connection,
 * whatever a peer sends.  And while the endpoint's receive queues hold
 * more than RX_MEM_MAX (applications not reading), no new data is
 * taken at all: the peers send it again later.
 */
static bool held_room(struct utcp_state *st, const struct tcp_pcb *pcb, uint32_t seq, uint32_t n)
{
	uint32_t off = seq - pcb->rcv_nxt;

	if (rx_mem(st) > RX_MEM_MAX) {
		st->st.rx_mem_dropped++;
		return false;
	}
	if (off && off < 0x80000000u && n < RX_COALESCE) {
		st->st.rx_ooseq_dropped++;
		return false;
	}
	return true;
}

/*
 * The TCP checksum of the tl bytes at t (pseudo-header from saddr to
 * daddr): 0 if it verifies; else, if the field holds exactly the
 * pseudo-header sum -- a partial checksum (CHECKSUM_PARTIAL), left by
 * the sender's kernel for a NIC that veth does not have -- 1 and *fixed
 * the complete checksum (network order); else -1.  As the UDP layer
 * (docs/udp.md, "Partial checksums").
 */
static int tcp_csum(const uint8_t *t, uint32_t tl, uint32_t saddr, uint32_t daddr,
		    uint16_t *fixed)
{
	uint64_t pseudo = unet_csum_pseudo(saddr, daddr, 6, (uint16_t)tl);
	uint64_t sum = unet_csum_add(unet_csum_add(pseudo, t, 16), t + 18, tl - 18);
	uint16_t field = get16(t + 16);

	if (unet_csum_fold(sum + field) == 0xffff)
		return 0;
	if (field != unet_csum_fold(pseudo))
		return -1;
	*fixed = htons((uint16_t)~unet_csum_fold(sum));
	return 1;
}

/*
 * Every non-U-Net frame of the endpoint (layer.h).  ARP to lwIP.  IPv4
 * not TCP: not mine.  For another address: dropped (rx_not_ours).  Then,
 * in this order, each drop counted (docs/tcp.md, "Checksums, and what
 * the layer drops"): lengths and data offset (rx_malformed); IPv4
 * header and TCP checksums, a partial one completed if the policy takes
 * it (rx_bad_csum, rx_partial_refused); longer than the MTU and not a
 * GSO data segment (rx_malformed); the rcv_nxt + 2^31 trap
 * (rx_malformed); for a connection: data lwIP would hold beyond the
 * memory bounds (held_room); for none: a SYN for a listener answered
 * with a cookie, an ACK with a valid cookie made into a connection.
 * What is left goes to lwIP (rx_frames), its acknowledgement number
 * moved back into lwIP's sequence space (seq_offset).
 */
static enum unet_layer_verdict tcp_layer_rx6(struct utcp_state *st, uint8_t *frame,
					     uint32_t len);

/*
 * A source no host on the link has, or our own address: 0.0.0.0, 127/8,
 * multicast, 255.255.255.255.  lwIP would answer one from 127/8 or from
 * itself (a reset) through its loopback path, which posts to the tcpip
 * thread we do not run: an assertion that aborts the process ("Invalid
 * mbox", tcpip.c) -- one frame from any host on the link did that.
 */
static bool bad_source4(uint32_t saddr, uint32_t daddr)
{
	uint32_t h = ntohl(saddr);

	return saddr == daddr || !h || h >> 24 == 127 || h >> 28 == 14 || h == 0xffffffffu;
}

/*
 * Whether a segment's source is an address of any of lwIP's netifs: the
 * process's other endpoints too, not only the one it came in on (the
 * checks before lwIP see that one's).  lwIP answers a segment without a
 * connection with a reset routed by its own table, which can pick
 * another endpoint's netif, and a reset to that netif's own address
 * goes down lwIP's loopback path: the abort bad_source4 describes, from
 * one spoofed segment to a process with two endpoints.  So such a
 * segment is dropped when it has no connection (a connection's and a
 * listener's answers leave by their own netif: two endpoints of one
 * process may talk to each other).  Under the lwIP lock.
 */
static bool lwip_local4(uint32_t addr)
{
	struct netif *n;

	NETIF_FOREACH(n)
		if (ip4_addr_get_u32(netif_ip4_addr(n)) == addr)
			return true;
	return false;
}

static bool lwip_local6(const uint8_t addr[16])
{
	struct netif *n;

	NETIF_FOREACH(n)
		for (int i = 0; i < LWIP_IPV6_NUM_ADDRESSES; i++)
			if (!ip6_addr_isinvalid(netif_ip6_addr_state(n, i)) &&
			    !memcmp(netif_ip6_addr(n, i)->addr, addr, 16))
				return true;
	return false;
}

static enum unet_layer_verdict tcp_layer_rx(void *state, uint16_t proto, uint8_t *frame,
					    uint32_t len, struct unet_recv_desc *desc)
{
	struct utcp_state *st = state;
	uint32_t hlen, tot, tl, doff, saddr, daddr, seq, seqlen;
	struct tcp_pcb *pcb;
	bool partial = false;
	uint8_t *ip, *t;
	uint16_t csum;

	(void)desc;
	if (proto == 0x0806) {
		if (len > 1514)
			return UNET_LAYER_CONSUMED;
		st->st.rx_arp++;
		lock(st);
		feed(st, frame, len);
		unlock_rx();
		return UNET_LAYER_CONSUMED;
	}
	if (proto == 0x86dd)
		return tcp_layer_rx6(st, frame, len);
	if (proto != 0x0800 || len < UNET_ETH_HLEN + 20)
		return UNET_LAYER_NOT_MINE;
	ip = frame + UNET_ETH_HLEN;
	if (ip[0] >> 4 != 4 || ip[9] != 6)
		return UNET_LAYER_NOT_MINE; /* not TCP: another layer's */
	memcpy(&daddr, ip + 16, 4);
	memcpy(&saddr, ip + 12, 4);
	if (daddr != st->addr) {
		/* Never lwIP's to forward (IP_FORWARD is on in its build). */
		st->st.rx_not_ours++;
		return UNET_LAYER_CONSUMED;
	}
	hlen = (ip[0] & 0xfu) * 4;
	tot = get16(ip + 2);
	if (hlen < 20 || tot < hlen + 20 || tot > len - UNET_ETH_HLEN || bad_source4(saddr, daddr)) {
		st->st.rx_malformed++;
		return UNET_LAYER_CONSUMED;
	}
	t = ip + hlen;
	tl = tot - hlen;
	doff = (t[12] >> 4) * 4u;
	if (doff < 20 || doff > tl) {
		st->st.rx_malformed++; /* lwIP would drop it */
		return UNET_LAYER_CONSUMED;
	}
	/* Checksums here, not only in lwIP: a partial one must be taken, and
	 * every drop counted.  lwIP checks them again on its copy. */
	if (unet_csum_fold(unet_csum_add(0, ip, hlen)) != 0xffff) {
		st->st.rx_bad_csum++;
		return UNET_LAYER_CONSUMED;
	}
	switch (tcp_csum(t, tl, saddr, daddr, &csum)) {
	case 0:
		break;
	case 1:
		if (!st->accept_partial) {
			st->st.rx_partial_refused++;
			return UNET_LAYER_CONSUMED;
		}
		st->st.rx_partial_csum++;
		memcpy(t + 16, &csum, 2); /* completed: lwIP checks it again */
		partial = true;
		break;
	default:
		st->st.rx_bad_csum++;
		return UNET_LAYER_CONSUMED;
	}
	/* Longer than the link: a GSO super-segment (skb mode; its checksum
	 * is partial), else malformed. */
	if (tot > st->inet.mtu && (!partial || (t[13] & (TCP_SYN | TCP_RST)) || doff == tl)) {
		st->st.rx_malformed++;
		return UNET_LAYER_CONSUMED;
	}
	seq = get32(t + 4);
	/* as lwIP counts it (TCP_TCPLEN): SYN and FIN together count one */
	seqlen = tl - doff + ((t[13] & (TCP_SYN | TCP_FIN)) ? 1 : 0);
	lock(st);
	pcb = seg_pcb(t, saddr, daddr);
	if (pcb && seq_trap(pcb, seq, seqlen)) {
		st->st.rx_malformed++;
		unlock_rx();
		return UNET_LAYER_CONSUMED;
	}
	/* The peer's MAC is learnt from any segment but a SYN for a
	 * listener: those are answered statelessly (the SYN-ACK goes to the
	 * frame's own source), and a flood of them from spoofed sources
	 * would push real peers out of the table. */
	if (pcb) {
		neigh_learn(st, saddr, frame + 6);
		if (t[13] & TCP_SYN) { /* the answer to our connect */
			uint32_t peer_mss;
			int ws;

			clamp_mss(t, doff, route_mss(st, saddr));
			tcp_opts(t, doff, &peer_mss, &ws);
			/* for on_connected, which lwIP calls on it */
			st->syn_mss = peer_mss ? peer_mss : 536;
		}
		if (out_of_window(pcb, t[13], seq, seqlen)) {
			st->st.rx_out_of_window++;
		} else if (tl > doff && pcb->state >= ESTABLISHED && !held_room(st, pcb, seq, tl - doff)) {
			unlock_rx();
			return UNET_LAYER_CONSUMED;
		}
	} else if (seg_time_wait(t, saddr, daddr)) {
		neigh_learn(st, saddr, frame + 6);
	} else {
		struct unet_tcp *l = find_listener(st, get16(t + 2), false);
		int r = 0;

		/* SYN without ACK or RST: a new connection attempt; ACK
		 * without SYN or RST: perhaps one for a cookie. */
		if (l && (t[13] & 0x16) == TCP_SYN) {
			cookie_answer(st, frame, t, doff, saddr, daddr);
			unlock_rx();
			return UNET_LAYER_CONSUMED;
		}
		neigh_learn(st, saddr, frame + 6);
		if (l && (t[13] & 0x16) == TCP_ACK)
			r = cookie_take(st, l, frame, t, saddr, daddr);
		if (r < 0) {
			unlock_rx();
			return UNET_LAYER_CONSUMED;
		}
		if (!r && lwip_local4(saddr)) {
			/* lwIP's reset would have no connection to take its
			 * netif from (lwip_local4) */
			st->st.rx_malformed++;
			unlock_rx();
			return UNET_LAYER_CONSUMED;
		}
		if (!r) /* lwIP resets it (or drops a RST) */
			st->st.rx_no_conn++;
	}
	/* The acknowledgement number back into lwIP's sequence space (the
	 * checksum follows): seq_offset. */
	if (t[13] & TCP_ACK)
		set32_csum(t + 8, get32(t + 8) - seq_offset(daddr, get16(t + 2), saddr, get16(t)),
			   t + 16);
	if (tot > st->inet.mtu) {
		st->st.rx_gso++;
		feed_gso(st, frame, hlen, doff, tl, saddr, daddr);
		unlock_rx();
		return UNET_LAYER_CONSUMED;
	}
	st->st.rx_frames++;
	/* Ethernet padding cut off: lwIP gets exactly the IP datagram. */
	feed(st, frame, UNET_ETH_HLEN + tot);
	unlock_rx();
	return UNET_LAYER_CONSUMED;
}

/* The active pcb of an IPv6 segment at t from saddr to daddr, or NULL;
 * with *tw whether lwIP has it in TIME_WAIT instead (under the lock). */
static struct tcp_pcb *seg_pcb6(const uint8_t *t, const uint8_t saddr[16],
				const uint8_t daddr[16], bool *tw)
{
	uint16_t sport = get16(t), dport = get16(t + 2);

	*tw = false;
	for (struct tcp_pcb *p = tcp_active_pcbs; p; p = p->next)
		if (p->local_port == dport && p->remote_port == sport && IP_IS_V6(&p->remote_ip) &&
		    !memcmp(ip_2_ip6(&p->remote_ip)->addr, saddr, 16) &&
		    !memcmp(ip_2_ip6(&p->local_ip)->addr, daddr, 16))
			return p;
	for (struct tcp_pcb *p = tcp_tw_pcbs; p; p = p->next)
		if (p->local_port == dport && p->remote_port == sport && IP_IS_V6(&p->remote_ip) &&
		    !memcmp(ip_2_ip6(&p->remote_ip)->addr, saddr, 16) &&
		    !memcmp(ip_2_ip6(&p->local_ip)->addr, daddr, 16))
			*tw = true;
	return NULL;
}

/* Half-open connections (SYN_RCVD) lwIP holds for listener l: its port
 * on its address (one lwIP serves every endpoint of the process, and
 * another endpoint's listener on the same port is not l); *oldest the
 * one made first (lwIP puts a new pcb at the head). */
static uint32_t half_open6(const struct unet_tcp *l, struct tcp_pcb **oldest)
{
	uint32_t n = 0;

	*oldest = NULL;
	if (!l->pcb)
		return 0;
	for (struct tcp_pcb *p = tcp_active_pcbs; p; p = p->next)
		if (p->state == SYN_RCVD && p->local_port == l->lport && IP_IS_V6(&p->local_ip) &&
		    ip_addr_cmp(&p->local_ip, &l->pcb->local_ip)) {
			n++;
			*oldest = p;
		}
	return n;
}

/*
 * An IPv6 frame of the endpoint (tcp_layer_rx): neighbour solicitations
 * for our address answered; TCP checked before lwIP by the IPv4 path's
 * rules and counters (unet_tcp6_check: address ours, lengths, data
 * offset, checksum with the IPv6 pseudo-header, partial checksums by
 * the endpoint's policy), then the same per-connection checks
 * (seq_trap, the window, held_room).  No SYN cookies for IPv6: a SYN
 * for a listener goes to lwIP, which keeps a half-open connection for
 * it, at most the listener's backlog of them (past it the oldest is
 * reset, counted in rx_syn_dropped).
 * The MSS option of a SYN or SYN-ACK is lowered to the route's MSS
 * (route MTU - 60) before lwIP reads it.
 */
static enum unet_layer_verdict tcp_layer_rx6(struct utcp_state *st, uint8_t *frame, uint32_t len)
{
	struct unet_tcp6_seg g;
	uint32_t seq, seqlen;
	struct tcp_pcb *pcb;
	bool tw;
	uint8_t *t;

	if (len >= UNET_ETH_HLEN + 40 && frame[UNET_ETH_HLEN + 6] == 58) {
		/* ICMPv6: a solicitation for our address is answered;
		 * anything else is another layer's (UDP/IPv6 answers for
		 * its own addresses). */
		if (!st->has_addr6 || st->kernel_addr6)
			return UNET_LAYER_NOT_MINE;
		switch (unet_tcp6_answer_ns(st->inet.ep, st->txq, st->inet.mac, st->addr6, frame,
					    len, &st->nd6)) {
		case 0:
		case -EBUSY:
			return UNET_LAYER_CONSUMED;
		default:
			return UNET_LAYER_NOT_MINE;
		}
	}
	if (!st->has_addr6)
		return UNET_LAYER_NOT_MINE;
	switch (unet_tcp6_check(frame, len, st->addr6, st->accept_partial, st->inet.mtu, &g)) {
	case UNET_TCP6_OK:
		break;
	case UNET_TCP6_NOT_TCP:
		return UNET_LAYER_NOT_MINE;
	case UNET_TCP6_NOT_OURS:
		st->st.rx_not_ours++;
		return UNET_LAYER_CONSUMED;
	case UNET_TCP6_MALFORMED:
		st->st.rx_malformed++;
		return UNET_LAYER_CONSUMED;
	case UNET_TCP6_BAD_CSUM:
		st->st.rx_bad_csum++;
		return UNET_LAYER_CONSUMED;
	case UNET_TCP6_PARTIAL_REFUSED:
		st->st.rx_partial_refused++;
		return UNET_LAYER_CONSUMED;
	}
	if (g.partial)
		st->st.rx_partial_csum++;
	t = g.t;
	seq = get32(t + 4);
	seqlen = g.tl - g.doff + ((t[13] & (TCP_SYN | TCP_FIN)) ? 1 : 0);
	lock(st);
	pcb = seg_pcb6(t, g.saddr, g.daddr, &tw);
	if (pcb && seq_trap(pcb, seq, seqlen)) {
		st->st.rx_malformed++;
		unlock_rx();
		return UNET_LAYER_CONSUMED;
	}
	if (pcb) {
		if (t[13] & TCP_SYN) { /* the answer to our connect */
			uint32_t peer_mss;
			int ws;

			clamp_mss(t, g.doff, route_mss6(st, g.saddr));
			floor_mss6(t, g.doff, route_mss6(st, g.saddr));
			tcp_opts(t, g.doff, &peer_mss, &ws);
			st->syn_mss = peer_mss ? peer_mss : 1220;
		}
		if (out_of_window(pcb, t[13], seq, seqlen)) {
			st->st.rx_out_of_window++;
		} else if (g.tl > g.doff && pcb->state >= ESTABLISHED &&
			   !held_room(st, pcb, seq, g.tl - g.doff)) {
			unlock_rx();
			return UNET_LAYER_CONSUMED;
		}
	} else if (!tw) {
		struct unet_tcp *l = find_listener(st, get16(t + 2), true);

		if (l && (t[13] & 0x16) == TCP_SYN) {
			struct tcp_pcb *oldest;

			if (st->st.connections >= MAX_CONNS) {
				st->st.rx_syn_dropped++;
				unlock_rx();
				return UNET_LAYER_CONSUMED;
			}
			/* At most the backlog half-open: a new SYN past it
			 * replaces the oldest (reset), so a flood's leftovers
			 * do not keep clients out after it (lwIP would keep
			 * them 20 s). */
			if (half_open6(l, &oldest) >= l->backlog && oldest) {
				st->st.rx_syn_dropped++;
				tcp_abort(oldest);
			}
			clamp_mss(t, g.doff, route_mss6(st, g.saddr));
			floor_mss6(t, g.doff, route_mss6(st, g.saddr));
		} else if (lwip_local6(g.saddr)) {
			/* lwIP's reset would have no connection to take its
			 * netif from (lwip_local4) */
			st->st.rx_malformed++;
			unlock_rx();
			return UNET_LAYER_CONSUMED;
		} else if (!l || !(t[13] & TCP_SYN)) {
			st->st.rx_no_conn++; /* lwIP resets it (or drops a RST) */
		}
	}
	if (t[13] & TCP_ACK)
		set32_csum(t + 8, get32(t + 8) - seq_offset6(g.daddr, get16(t + 2), g.saddr, get16(t)),
			   t + 16);
	st->st.rx_frames++;
	/* Ethernet padding cut off: lwIP gets exactly the IPv6 packet. */
	feed(st, frame, UNET_ETH_HLEN + 40 + g.tl);
	unlock_rx();
	return UNET_LAYER_CONSUMED;
}

/* ---- Progress ------------------------------------------------------------------- */

/* Whether pcb (with these ports) is still one of lwIP's active pcbs: a
 * closed connection in FIN_WAIT, CLOSING, LAST_ACK. */
static bool pcb_active(const struct tcp_closing *cl)
{
	for (struct tcp_pcb *p = tcp_active_pcbs; p; p = p->next)
		if (p == cl->pcb && p->local_port == cl->lport && p->remote_port == cl->rport)
			return true;
	return false;
}

static void reap_closing(struct utcp_state *st, uint64_t now)
{
	struct tcp_closing **pp = &st->closing;

	while (*pp) {
		struct tcp_closing *cl = *pp;

		if (pcb_active(cl)) {
			if (now < cl->deadline) {
				pp = &cl->next;
				continue;
			}
			tcp_abort(cl->pcb);
		}
		*pp = cl->next;
		port_put(st, cl->port);
		free(cl);
	}
}

/* Frames other endpoints' sections handed over (handoff), sent from
 * this endpoint's own section. */
static void handoff_send(struct utcp_state *st)
{
	while (st->ho_head && !tx_frame(st, st->ho_head->f, st->ho_head->len)) {
		struct tx_handoff *h = st->ho_head;

		st->ho_head = h->next;
		st->nho--;
		free(h);
	}
	if (!st->ho_head)
		st->ho_tail = NULL;
	/* Frames left (no buffer, queue full), or lwIP kept a segment that
	 * was refused: the output retry below, and progress runs again at
	 * once (tx_blocked). */
	if (st->ho_head || st->ho_refused)
		st->tx_blocked = true;
	st->ho_refused = false;
	__atomic_store_n(&st->ho_waiting, st->ho_head != NULL, __ATOMIC_RELAXED);
}

static int tcp_layer_progress(void *state)
{
	struct utcp_state *st = state;
	uint64_t now = now_ms(), next;
	u32_t sleep;
	int ms;

	if (unet_endpoint__tx_pending(st->inet.ep))
		unet_endpoint__complete(st->inet.ep);
	if (!st->npend && !st->tx_blocked && !st->closing && now < st->next_ms &&
	    !__atomic_load_n(&st->ho_waiting, __ATOMIC_RELAXED))
		return (int)(st->next_ms - now);
	lock(st);
	if (st->ho_head || st->ho_refused)
		handoff_send(st);
	if (st->npend)
		flush_pending(st);
	if (st->tx_blocked) {
		st->tx_blocked = false;
		for (struct unet_tcp *c = st->conns; c; c = c->next)
			if (c->pcb && !c->listener)
				tcp_output(c->pcb);
	}
	sys_check_timeouts();
	/*
	 * lwIP's fast timer (delayed ACKs, refused data) runs every 250 ms
	 * (TCP_TMR_INTERVAL, fixed in the build); a delayed ACK held that
	 * long stalls a sender whose window is a few segments (after loss).
	 * Run it every FASTTMR_MS instead: it only acts on flagged pcbs.
	 */
	if (tcp_active_pcbs && now - st->last_fast_ms >= FASTTMR_MS) {
		st->last_fast_ms = now;
		tcp_fasttmr();
	}
	if (st->closing)
		reap_closing(st, now);
	sleep = sys_timeouts_sleeptime();
	next = sleep == SYS_TIMEOUTS_SLEEPTIME_INFINITE || sleep > 250 ? 250 : sleep;
	if (tcp_active_pcbs && next > FASTTMR_MS)
		next = FASTTMR_MS;
	st->next_ms = now + next;
	ms = (int)next;
	if (st->npend && ms > 10)
		ms = 10;
	if (st->closing && ms > 100)
		ms = 100;
	if (st->tx_blocked)
		ms = 0;
	unlock();
	return ms;
}

/* ---- The endpoint's TCP state ---------------------------------------------------- */

static void tcp_layer_destroy(void *state)
{
	struct utcp_state *st = state;

	lock(st);
	st->dying = true;
	st->listeners = NULL; /* freed with conns */
	while (st->conns) {
		struct unet_tcp *c = st->conns;

		st->conns = c->next;
		if (c->pcb) {
			tcp_arg(c->pcb, NULL);
			if (c->listener)
				tcp_close(c->pcb);
			else
				tcp_abort(c->pcb);
		}
		rx_free(st, c);
		free(c);
	}
	while (st->closing) {
		struct tcp_closing *cl = st->closing;

		st->closing = cl->next;
		if (pcb_active(cl))
			tcp_abort(cl->pcb);
		free(cl);
	}
	/* Removing the netif aborts every pcb still on our address (half-open
	 * ones included), which may send resets: held frames go after. */
	if (st->netif_added)
		netif_remove(&st->netif);
	for (unsigned int i = 0; i < st->npend; i++)
		pbuf_free(st->pend[i].p);
	st->npend = 0;
	handoff_free(st);
	unlock();
	while (st->ports) {
		struct tcp_port *pt = st->ports;

		st->ports = pt->next;
		port_release_pt(st, pt);
		free(pt);
	}
	if (st->owns_addr && st->inet.iface)
		unet_inet_addr_release(st->inet.iface, st->inet.slot, st->addr);
	if (st->owns_addr6 && st->inet.iface)
		unet_inet6_addr_release(st->inet.iface, st->inet.slot, st->addr6);
	unet_inet_ep_fini(&st->inet);
	free(st);
}

/* The endpoint's IPv4 address laddr (the first one: st->addr was 0):
 * registered for ARP (an endpoint from unetd: the daemon registers it
 * with the first port, port_hold_remote) and given to lwIP's netif
 * (under the lock). */
static void state_add4(struct utcp_state *st, uint32_t laddr)
{
	ip4_addr_t a = { .addr = laddr };
	int err;

	st->addr = laddr;
	if (st->inet.iface) {
		st->kernel_addr = unet_inet_kernel_addr(laddr);
		err = unet_inet_addr_claim(st->inet.iface, st->inet.slot, laddr,
					   st->kernel_addr ? 0 : UNET_INET_ADDR_ARP);
		st->owns_addr = err == 1;
	}
	if (st->netif_added) {
		lock(st);
		netif_set_ipaddr(&st->netif, &a);
		unlock();
	}
}

/*
 * The endpoint's IPv6 address (the first one), as UDP/IPv6 claims its
 * own: the kernel's (it answers solicitations; the port holder sockets
 * keep its TCP off our ports), or U-Net's alone (registered with the ND
 * flag: the XDP program hands us solicitations for it and
 * unet_tcp6_answer_ns answers).  In lwIP's netif it is preferred at once:
 * no duplicate address detection, no autoconfiguration, no router
 * solicitation (docs/tcp.md, "IPv6").  Returns 0 or -errno.
 */
static int state_add6(struct utcp_state *st, const uint8_t a6[16])
{
	ip6_addr_t a;
	int err;

	st->kernel_addr6 = unet_inet6_kernel_addr(a6);
	err = unet_inet6_addr_claim(st->inet.iface, st->inet.slot, a6,
				    st->kernel_addr6 ? 0 : UNET_INET6_ADDR_ND);
	if (err < 0)
		return err;
	st->owns_addr6 = err == 1;
	memcpy(st->addr6, a6, 16);
	st->has_addr6 = true;
	memset(&a, 0, sizeof(a));
	memcpy(a.addr, a6, 16);
	lock(st);
	netif_set_ip6_autoconfig_enabled(&st->netif, 0);
	netif_ip6_addr_set(&st->netif, 1, &a);
	netif_ip6_addr_set_state(&st->netif, 1, IP6_ADDR_PREFERRED);
	st->netif.rs_count = 0;
	unlock();
	return 0;
}

/* The endpoint's TCP state for local address la, made (a netif in
 * lwIP, the address registered) with the first connection; an address
 * of the other family is added to it once. */
static struct utcp_state *state(struct unet_endpoint *ep, const struct tcp_laddr *la,
				enum unet_tcp_partial partial)
{
	struct utcp_state *st = unet_layer_state(ep, &tcp_layer);
	ip4_addr_t any = { .addr = 0 };
	uint32_t room;
	int err;

	if (st) {
		if (partial != UNET_TCP_PARTIAL_AUTO && partial != st->partial) {
			errno = EINVAL; /* the endpoint's policy is set */
			return NULL;
		}
		if (la->v6 ? st->has_addr6 && memcmp(st->addr6, la->a6, 16)
			   : st->addr && st->addr != la->a4) {
			errno = EADDRNOTAVAIL;
			return NULL;
		}
		if (!la->v6 && !st->addr)
			state_add4(st, la->a4);
		if (la->v6 && !st->has_addr6 && (err = state_add6(st, la->a6))) {
			errno = -err;
			return NULL;
		}
		return st;
	}
	st = calloc(1, sizeof(*st));
	if (!st) {
		errno = ENOMEM;
		return NULL;
	}
	err = unet_inet_ep_init(&st->inet, ep);
	unet_inet_routes_init(&st->routes);
	unet_inet6_routes_init(&st->routes6);
	if (err) {
		free(st);
		errno = -err;
		return NULL;
	}
	st->partial = partial;
	st->accept_partial = partial == UNET_TCP_PARTIAL_ACCEPT ||
			     (partial == UNET_TCP_PARTIAL_AUTO && unet_inet_is_veth(st->inet.ifname));
	/* A frame must fit the link, and one send buffer unless the
	 * endpoint sends and receives frames in pieces (multi-buffer). */
	room = st->inet.frame_size - XDP_PACKET_HEADROOM - TX_OFF - UNET_ETH_HLEN;
	if (st->inet.mtu > room && !unet_layer_multi_buffer(ep))
		st->inet.mtu = room;
	if (!la->v6)
		state_add4(st, la->a4);
	lock(st);
	st->netif_added = netif_add(&st->netif, (ip4_addr_t *)&any, &any, &any, st, netif_init_cb,
				    ethernet_input) != NULL;
	if (st->netif_added) {
		ip4_addr_t a = { .addr = st->addr };

		netif_set_ipaddr(&st->netif, &a);
		netif_set_up(&st->netif);
		netif_set_link_up(&st->netif);
	}
	unlock();
	if (!st->netif_added || (err = unet_layer_attach(ep, &tcp_layer, st))) {
		err = st->netif_added ? -err : ENOMEM; /* st is gone after destroy */
		tcp_layer_destroy(st);
		errno = err;
		return NULL;
	}
	if (la->v6 && (err = state_add6(st, la->a6))) {
		/* attached: the endpoint keeps the (empty) state */
		errno = -err;
		return NULL;
	}
	return st;
}

static int opts_txq(struct unet_endpoint *ep, const struct unet_tcp_opts *opts)
{
	int q = UNET_OPT(opts, tx_queue, 0);

	return q > 0 ? unet_layer_txq(ep, q) : 0;
}

/* What listen and connect begin with: the options checked (opts->sz,
 * the send queue: *txq), the endpoint's TCP state for local_addr, and a
 * new socket on it.  NULL with errno if not. */
static struct unet_tcp *sock_new(struct unet_endpoint *ep, const struct tcp_laddr *la,
				 const struct unet_tcp_opts *opts, int *txq)
{
	enum unet_tcp_partial partial;
	struct utcp_state *st;
	struct unet_tcp *s;

	if (!ep || (!la->v6 && !la->a4) || (opts && opts->sz < sizeof(size_t))) {
		errno = EINVAL;
		return NULL;
	}
	if (la->v6 && !unet_tcp6_addr_usable(la->a6)) {
		errno = EADDRNOTAVAIL;
		return NULL;
	}
	/* An endpoint from unetd would need the daemon to hold IPv6 ports
	 * and check IPv6 segments for it (docs/tcp.md, "IPv6"). */
	if (la->v6 && !unet_layer_iface(ep)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	*txq = opts_txq(ep, opts);
	partial = UNET_OPT(opts, partial_csum, UNET_TCP_PARTIAL_AUTO);
	if (*txq < 0 || (unsigned int)partial > UNET_TCP_PARTIAL_REJECT) {
		errno = EINVAL;
		return NULL;
	}
	st = state(ep, la, partial);
	if (!st)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->st = st;
	s->v6 = la->v6;
	return s;
}

static void unlink_conn(struct unet_tcp *c)
{
	for (struct unet_tcp **pp = &c->st->conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	if (!c->listener)
		c->st->st.connections--;
}

/* ---- The API ---------------------------------------------------------------------- */

/* ip_addr_t of la, for lwIP. */
static ip_addr_t lw_addr(const struct tcp_laddr *la)
{
	ip_addr_t a;

	memset(&a, 0, sizeof(a));
	if (la->v6) {
		IP_SET_TYPE_VAL(a, IPADDR_TYPE_V6);
		memcpy(ip_2_ip6(&a)->addr, la->a6, 16);
	} else {
		IP_SET_TYPE_VAL(a, IPADDR_TYPE_V4);
		ip_2_ip4(&a)->addr = la->a4;
	}
	return a;
}

static struct unet_tcp *listen_on(struct unet_endpoint *ep, const struct tcp_laddr *la,
				  uint16_t local_port, const struct unet_tcp_opts *opts)
{
	ip_addr_t a = lw_addr(la);
	struct tcp_pcb *pcb, *lpcb;
	struct utcp_state *st;
	struct unet_tcp *l;
	uint16_t port = local_port;
	int txq;
	err_t e;

	if (!local_port) {
		errno = EINVAL;
		return NULL;
	}
	l = sock_new(ep, la, opts, &txq);
	if (!l)
		return NULL;
	st = l->st;
	l->listener = true;
	l->backlog = UNET_OPT(opts, backlog, BACKLOG_DEFAULT);
	if (l->backlog > BACKLOG_MAX)
		l->backlog = BACKLOG_MAX;
	l->lport = local_port;
	l->port = port_get(st, la, &port, true, UNET_OPT(opts, reuseport, false));
	if (!l->port) {
		free(l);
		return NULL;
	}
	st->txq = (uint32_t)txq;
	lock(st);
	pcb = tcp_new_ip_type(la->v6 ? IPADDR_TYPE_V6 : IPADDR_TYPE_V4);
	e = pcb ? tcp_bind(pcb, &a, local_port) : ERR_MEM;
	if (e == ERR_OK) {
		tcp_bind_netif(pcb, &st->netif);
		lpcb = tcp_listen_with_backlog_and_err(pcb, 0xff, &e);
		if (lpcb)
			pcb = lpcb;
	}
	if (e != ERR_OK) {
		if (pcb)
			tcp_close(pcb);
		unlock();
		port_put(st, l->port);
		free(l);
		errno = e == ERR_USE ? EADDRINUSE : ENOMEM;
		return NULL;
	}
	l->pcb = pcb;
	tcp_arg(pcb, l);
	tcp_accept(pcb, on_accept);
	l->next = st->conns;
	st->conns = l;
	l->lnext = st->listeners;
	st->listeners = l;
	unlock();
	return l;
}

struct unet_tcp *unet_tcp__listen(struct unet_endpoint *ep, uint32_t local_addr,
				  uint16_t local_port, const struct unet_tcp_opts *opts)
{
	struct tcp_laddr la = { .a4 = local_addr };

	return listen_on(ep, &la, local_port, opts);
}

struct unet_tcp *unet_tcp__listen6(struct unet_endpoint *ep, const struct in6_addr *local_addr,
				   uint16_t local_port, const struct unet_tcp_opts *opts)
{
	struct tcp_laddr la = { .v6 = true };

	if (!local_addr) {
		errno = EINVAL;
		return NULL;
	}
	memcpy(la.a6, local_addr->s6_addr, 16);
	return listen_on(ep, &la, local_port, opts);
}

/* Drive the endpoint until ready(c) holds or timeout_ms is over.
 * Returns 0 (ready) or -EAGAIN. */
static int wait_for(struct unet_tcp *c, bool (*ready)(const struct unet_tcp *), int timeout_ms)
{
	struct unet_endpoint *ep = c->st->inet.ep;
	uint64_t deadline = timeout_ms < 0 ? UINT64_MAX : now_ms() + (uint64_t)timeout_ms;
	bool ok;
	int n;

	for (;;) {
		lock(c->st);
		ok = ready(c);
		unlock();
		if (ok)
			return 0;
		n = unet_endpoint__dispatch(ep, 0, 64);
		if (n > 0)
			continue;
		lock(c->st);
		ok = ready(c);
		unlock();
		if (ok)
			return 0;
		/* inside a handler (-EBUSY) nothing can be taken off the queue */
		if (n == -EBUSY || timeout_ms == 0)
			return -EAGAIN;
		if (n < 0)
			return n;
		uint64_t now = now_ms();

		if (now >= deadline)
			return -EAGAIN;
		n = unet_endpoint__wait(ep, deadline - now < WAIT_SLICE_MS ? (int)(deadline - now)
									  : WAIT_SLICE_MS);
		if (n < 0)
			return n;
	}
}

static bool acceptable(const struct unet_tcp *l)
{
	return l->acq_head != NULL;
}

struct unet_tcp *unet_tcp__accept(struct unet_tcp *l, int timeout_ms)
{
	struct unet_tcp *c;
	int err;

	if (!l || !l->listener) {
		errno = EINVAL;
		return NULL;
	}
	err = wait_for(l, acceptable, timeout_ms);
	if (err) {
		errno = -err;
		return NULL;
	}
	lock(l->st);
	c = l->acq_head;
	l->acq_head = c->qnext;
	if (!l->acq_head)
		l->acq_tail = NULL;
	l->nacq--;
	c->qnext = NULL;
	c->parent = NULL;
	unlock();
	return c;
}

static bool connect_done(const struct unet_tcp *c)
{
	return c->connected || c->err;
}

/* connect from lad to rad:port (rad of lad's family). */
static struct unet_tcp *connect_to(struct unet_endpoint *ep, const struct tcp_laddr *lad,
				   const struct tcp_laddr *rad, uint16_t port,
				   const struct unet_tcp_opts *opts, int timeout_ms)
{
	ip_addr_t la = lw_addr(lad), ra = lw_addr(rad);
	struct utcp_state *st;
	struct unet_tcp *c;
	struct tcp_pcb *pcb = NULL;
	err_t e = ERR_USE;
	int txq, err;

	if ((rad->v6 ? !unet_tcp6_addr_usable(rad->a6) : !rad->a4) || !port) {
		errno = EINVAL;
		return NULL;
	}
	c = sock_new(ep, lad, opts, &txq);
	if (!c)
		return NULL;
	st = c->st;
	c->raddr = rad->a4;
	memcpy(c->raddr6, rad->a6, 16);
	c->rport = port;
	/* The kernel picks the port; lwIP may still have it in TIME_WAIT
	 * from an earlier connection (ERR_USE): take another. */
	for (int tries = 0; tries < 8 && e == ERR_USE; tries++) {
		uint16_t lport = 0;

		c->port = port_get(st, lad, &lport, false, false);
		if (!c->port) {
			free(c);
			return NULL;
		}
		c->lport = lport;
		lock(st);
		pcb = tcp_new_ip_type(lad->v6 ? IPADDR_TYPE_V6 : IPADDR_TYPE_V4);
		e = pcb ? tcp_bind(pcb, &la, lport) : ERR_MEM;
		if (e != ERR_OK && pcb)
			tcp_close(pcb);
		unlock();
		if (e != ERR_OK) {
			struct tcp_port *old = c->port;

			port_put(st, old);
		}
	}
	if (e != ERR_OK) {
		free(c);
		errno = e == ERR_USE ? EADDRINUSE : ENOMEM;
		return NULL;
	}
	st->txq = (uint32_t)txq;
	lock(st);
	tcp_bind_netif(pcb, &st->netif);
	conn_hook(c, pcb);
	e = tcp_connect(pcb, &ra, port, on_connected);
	if (e != ERR_OK) {
		tcp_arg(pcb, NULL);
		tcp_abort(pcb);
		unlink_conn(c);
		unlock();
		port_put(st, c->port);
		free(c);
		errno = e == ERR_MEM ? ENOMEM : EHOSTUNREACH;
		return NULL;
	}
	st->next_ms = 0;
	unlock();
	if (timeout_ms == 0)
		return c;
	err = wait_for(c, connect_done, timeout_ms);
	if (!err && c->err)
		err = c->err;
	if (err) {
		unet_tcp__abort(c);
		errno = err == -EAGAIN ? ETIMEDOUT : -err;
		return NULL;
	}
	return c;
}

struct unet_tcp *unet_tcp__connect(struct unet_endpoint *ep, uint32_t local_addr,
				   uint32_t addr, uint16_t port, const struct unet_tcp_opts *opts,
				   int timeout_ms)
{
	struct tcp_laddr la = { .a4 = local_addr }, ra = { .a4 = addr };

	return connect_to(ep, &la, &ra, port, opts, timeout_ms);
}

struct unet_tcp *unet_tcp__connect6(struct unet_endpoint *ep, const struct in6_addr *local_addr,
				    const struct in6_addr *addr, uint16_t port,
				    const struct unet_tcp_opts *opts, int timeout_ms)
{
	struct tcp_laddr la = { .v6 = true }, ra = { .v6 = true };

	if (!local_addr || !addr) {
		errno = EINVAL;
		return NULL;
	}
	memcpy(la.a6, local_addr->s6_addr, 16);
	memcpy(ra.a6, addr->s6_addr, 16);
	return connect_to(ep, &la, &ra, port, opts, timeout_ms);
}

static bool readable(const struct unet_tcp *c)
{
	return rx_unread(c) || c->eof || c->err;
}

ssize_t unet_tcp__recv(struct unet_tcp *c, void *buf, size_t len, int timeout_ms)
{
	int err;

	if (!c || c->listener || (!buf && len))
		return -EINVAL;
	if (!len)
		return 0;
	for (;;) {
		bool got = true;
		ssize_t r = 0;

		lock(c->st);
		if (rx_unread(c)) {
			u16_t n = (u16_t)rx_pull(c->st, c, buf, len < 0xffff ? len : 0xffff);

			if (c->pcb)
				tcp_recved(c->pcb, n);
			c->st->next_ms = 0;
			r = n;
		} else if (c->eof) {
			r = 0;
		} else if (c->err) {
			r = c->err;
		} else {
			got = false;
		}
		unlock();
		if (got)
			return r;
		err = wait_for(c, readable, timeout_ms);
		if (err)
			return err;
	}
}

static bool writable(const struct unet_tcp *c)
{
	return c->err || !c->pcb || c->shut ||
	       (c->connected && tcp_sndbuf(c->pcb) > 0 &&
		tcp_sndqueuelen(c->pcb) < TCP_SND_QUEUELEN);
}

ssize_t unet_tcp__send(struct unet_tcp *c, const void *data, size_t len, int timeout_ms)
{
	int err;

	if (!c || c->listener || (!data && len))
		return -EINVAL;
	if (!len)
		return 0;
	uint64_t deadline = timeout_ms < 0 ? UINT64_MAX : now_ms() + (uint64_t)timeout_ms;

	for (;;) {
		ssize_t r = 0;
		bool queue_full = false;

		lock(c->st);
		if (c->err) {
			r = c->err;
		} else if (!c->pcb) {
			r = -ENOTCONN;
		} else if (c->shut) {
			r = -EPIPE;
		} else if (c->connected) {
			size_t n = tcp_sndbuf(c->pcb);
			err_t e;

			if (n > len)
				n = len;
			if (n > 0xffff)
				n = 0xffff;
			e = n ? tcp_write(c->pcb, data, (u16_t)n, TCP_WRITE_FLAG_COPY) : ERR_MEM;
			/* The segment queue (TCP_SND_QUEUELEN) may take fewer
			 * segments than n needs when the MSS is small (a route
			 * MTU, a peer's MSS): try less, down to one segment. */
			while (e == ERR_MEM && n > c->pcb->mss) {
				n /= 2;
				e = tcp_write(c->pcb, data, (u16_t)n, TCP_WRITE_FLAG_COPY);
			}
			if (e == ERR_OK) {
				tcp_output(c->pcb);
				c->st->next_ms = 0;
				r = (ssize_t)n;
			} else if (e != ERR_MEM) {
				r = -EIO;
			} else {
				queue_full = tcp_sndbuf(c->pcb) > 0;
			}
		}
		unlock();
		if (r)
			return r;
		if (queue_full) {
			/* writable() holds but lwIP refuses even one segment:
			 * take what arrived (the acknowledgements that free
			 * the queue) rather than spin on writable() */
			uint64_t now = now_ms();
			int n;

			if (timeout_ms == 0 || now >= deadline)
				return -EAGAIN;
			n = unet_endpoint__dispatch(c->st->inet.ep, 0, 64);
			if (n < 0 && n != -EBUSY)
				return n;
			if (n <= 0)
				unet_endpoint__wait(c->st->inet.ep, 1);
			continue;
		}
		{
			uint64_t now = now_ms();

			if (timeout_ms > 0 && now >= deadline)
				return -EAGAIN;
			err = wait_for(c, writable,
				       timeout_ms < 0 ? -1 : (int)(timeout_ms ? deadline - now : 0));
		}
		if (err)
			return err;
		/* writable() may hold while tcp_write still refuses (queue
		 * length): give lwIP a moment rather than spin on it. */
		lock(c->st);
		bool full = c->pcb && !c->err && c->connected && tcp_sndbuf(c->pcb) == 0;
		unlock();
		if (full && timeout_ms == 0)
			return -EAGAIN;
	}
}

int unet_tcp__shutdown(struct unet_tcp *c)
{
	err_t e;

	if (!c || c->listener)
		return -EINVAL;
	lock(c->st);
	if (!c->pcb) {
		unlock();
		return c->err ? c->err : -ENOTCONN;
	}
	e = c->shut ? ERR_OK : tcp_shutdown(c->pcb, 0, 1);
	if (e == ERR_OK)
		c->shut = true;
	c->st->next_ms = 0;
	unlock();
	return e == ERR_OK ? 0 : -ENOMEM;
}

/* Close c: abort (RST) if abort or unread data, else FIN; the port
 * stays held until lwIP is done with the connection. */
static void conn_free(struct unet_tcp *c, bool abort)
{
	struct utcp_state *st;
	struct tcp_closing *cl = NULL;
	struct tcp_port *put = NULL;

	if (!c)
		return;
	st = c->st;
	lock(st);
	if (c->listener) {
		while (c->acq_head) {
			struct unet_tcp *q = c->acq_head;

			c->acq_head = q->qnext;
			q->parent = NULL;
			if (q->pcb) {
				tcp_arg(q->pcb, NULL);
				tcp_abort(q->pcb);
			}
			rx_free(st, q);
			unlink_conn(q);
			unlock();
			port_put(st, q->port);
			lock(st);
			free(q);
		}
		if (c->pcb) {
			tcp_arg(c->pcb, NULL);
			tcp_close(c->pcb);
		}
		for (struct unet_tcp **pp = &st->listeners; *pp; pp = &(*pp)->lnext)
			if (*pp == c) {
				*pp = c->lnext;
				break;
			}
		put = c->port;
	} else {
		if (c->parent) { /* still in its listener's queue */
			struct unet_tcp **pp = &c->parent->acq_head, *prev = NULL;

			for (; *pp; prev = *pp, pp = &(*pp)->qnext)
				if (*pp == c) {
					*pp = c->qnext;
					if (c->parent->acq_tail == c)
						c->parent->acq_tail = prev;
					c->parent->nacq--;
					break;
				}
		}
		if (c->pcb) {
			tcp_arg(c->pcb, NULL);
			tcp_recv(c->pcb, NULL); /* lwIP's default: drop and acknowledge */
			tcp_err(c->pcb, NULL);
			if (abort || rx_unread(c) || tcp_close(c->pcb) != ERR_OK) {
				tcp_abort(c->pcb);
			} else {
				cl = calloc(1, sizeof(*cl));
				if (!cl) {
					tcp_abort(c->pcb);
				} else {
					cl->pcb = c->pcb;
					cl->lport = c->lport;
					cl->rport = c->rport;
					cl->port = c->port;
					cl->deadline = now_ms() + CLOSING_MS;
					cl->next = st->closing;
					st->closing = cl;
				}
			}
		}
		if (!cl)
			put = c->port;
		st->next_ms = 0;
	}
	rx_free(st, c);
	unlink_conn(c);
	unlock();
	port_put(st, put);
	free(c);
}

void unet_tcp__close(struct unet_tcp *c)
{
	conn_free(c, false);
}

void unet_tcp__abort(struct unet_tcp *c)
{
	conn_free(c, true);
}

int unet_tcp__keepalive(struct unet_tcp *c, bool on, unsigned int idle_s, unsigned int intvl_s,
			unsigned int count)
{
	int r = 0;

	/* The kernel's limits (TCP_KEEPIDLE/INTVL 1..32767 s, TCP_KEEPCNT
	 * 1..127); in ms the idle time fits lwIP's u32. */
	if (!c || c->listener || idle_s < 1 || idle_s > 32767 || intvl_s < 1 || intvl_s > 32767 ||
	    count < 1 || count > 127)
		return -EINVAL;
	lock(NULL);
	if (!c->pcb) {
		r = c->err ? c->err : -ENOTCONN;
	} else {
		if (on)
			ip_set_option(c->pcb, SOF_KEEPALIVE);
		else
			ip_reset_option(c->pcb, SOF_KEEPALIVE);
		c->pcb->keep_idle = idle_s * 1000u;
		c->pcb->keep_intvl = intvl_s * 1000u;
		c->pcb->keep_cnt = count;
	}
	unlock();
	return r;
}

unsigned int unet_tcp__mss(const struct unet_tcp *c)
{
	unsigned int mss = 0;

	if (!c || c->listener)
		return 0;
	lock(NULL);
	if (c->pcb)
		mss = c->pcb->mss;
	unlock();
	return mss;
}

int unet_tcp__set_tos(struct unet_tcp *c, uint8_t tos)
{
	int r = 0;

	if (!c || c->listener)
		return -EINVAL;
	lock(NULL);
	if (c->pcb)
		c->pcb->tos = tos;
	else
		r = c->err ? c->err : -ENOTCONN;
	unlock();
	return r;
}

unsigned int unet_tcp__events(const struct unet_tcp *c)
{
	unsigned int ev = 0;

	if (!c)
		return 0;
	lock(NULL);
	if (c->listener) {
		if (c->acq_head)
			ev |= UNET_TCP_IN;
	} else {
		if (rx_unread(c) || c->eof)
			ev |= UNET_TCP_IN;
		if (c->eof)
			ev |= UNET_TCP_HUP;
		if (c->err)
			ev |= UNET_TCP_ERR | UNET_TCP_IN;
		if (c->pcb && c->connected && !c->shut && tcp_sndbuf(c->pcb) > 0)
			ev |= UNET_TCP_OUT;
	}
	unlock();
	return ev;
}

uint64_t unet_tcp__arrivals(const struct unet_tcp *c)
{
	uint64_t n;

	if (!c)
		return 0;
	lock(NULL);
	n = c->arrivals;
	unlock();
	return n;
}

int unet_tcp__error(const struct unet_tcp *c)
{
	int err;

	if (!c)
		return -EINVAL;
	lock(NULL); /* another endpoint's section may set it (on_err, its timers) */
	err = c->err;
	unlock();
	return err;
}

size_t unet_tcp__unacked(const struct unet_tcp *c)
{
	size_t n = 0;

	if (!c)
		return 0;
	lock(NULL);
	if (c->pcb && !c->listener)
		n = c->pcb->snd_lbb - c->pcb->lastack; /* queued: sequence numbers */
	unlock();
	return n;
}

uint16_t unet_tcp__local_port(const struct unet_tcp *c)
{
	return c ? c->lport : 0;
}

uint16_t unet_tcp__remote_port(const struct unet_tcp *c)
{
	return c ? c->rport : 0;
}

uint32_t unet_tcp__remote_addr(const struct unet_tcp *c)
{
	return c ? c->raddr : 0;
}

int unet_tcp__remote_addr6(const struct unet_tcp *c, struct in6_addr *addr)
{
	if (!c || !addr || c->listener)
		return -EINVAL;
	if (!c->v6)
		return -EAFNOSUPPORT;
	memcpy(addr->s6_addr, c->raddr6, 16);
	return 0;
}

bool unet_tcp__is_v6(const struct unet_tcp *c)
{
	return c && c->v6;
}

unsigned int unet_tcp__closing(struct unet_endpoint *ep)
{
	struct utcp_state *st;
	unsigned int n = 0;

	if (!ep)
		return 0;
	st = unet_layer_state(ep, &tcp_layer);
	lock(NULL);
	for (const struct tcp_closing *cl = st ? st->closing : NULL; cl; cl = cl->next) {
		/* FIN_WAIT_2 and TIME_WAIT: everything of ours was acknowledged. */
		if (pcb_active(cl) && (cl->pcb->state == FIN_WAIT_1 || cl->pcb->state == CLOSING ||
				       cl->pcb->state == LAST_ACK || cl->pcb->unsent || cl->pcb->unacked))
			n++;
	}
	unlock();
	return n;
}

int unet_tcp__stats(struct unet_endpoint *ep, struct unet_tcp_stats *out)
{
	struct utcp_state *st;

	if (!ep || !out)
		return -EINVAL;
	st = unet_layer_state(ep, &tcp_layer);
	lock(NULL);
	if (st)
		*out = st->st;
	else
		memset(out, 0, sizeof(*out));
	unlock();
	return 0;
}

static const struct unet_layer tcp_layer = {
	.name = "tcp",
	.rx = tcp_layer_rx,
	.destroy = tcp_layer_destroy,
	.progress = tcp_layer_progress,
};
