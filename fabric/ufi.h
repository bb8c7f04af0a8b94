/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ufi.h - the `unet` libfabric provider's internal types (docs/libfabric.md).
 *
 * One FI_EP_RDM endpoint = one U-Net endpoint + one UAM endpoint on it.
 * Peers are reached through one UAM channel each, set up on first use by
 * a small handshake over kernel UDP (conn.c).  Messages are eager (short
 * UAM requests carrying the data) or rendezvous (an RTS request, the
 * receiver pulls the data with uam_get, then sends FIN).
 *
 * The source in floors: each file calls only files of its own floor
 * listed before it or of lower floors, never one above (nm shows it:
 * docs/libfabric.md, "Source layout").  Where a lower floor must tell a
 * higher one something, the higher one registered a callback:
 *
 *   5  objects    ep.c (endpoint and its fi_ops), domain.c (domain, MR),
 *                 prov.c (fi_prov_ini, getinfo, fabric, EQ)
 *   4  queues     cq.c (completion queues; each carries a ufi_cq_report
 *                 the messaging floor completes through), av.c (fi_ops_av
 *                 over the address table)
 *   3  messaging  match.c, eager.c, rndv.c, send.c, proto.c, post.c, in
 *                 that order (msg.h); ends a failed peer's operations
 *                 through ep->on_peer_fail, registered with the peer table
 *   2  channels   conn.c (HELLO exchange, tags, the U-Net and UAM channel)
 *   1  peers      peer.c (peer table, strangers and their quota, failure),
 *                 iface.c (which interface, its IPv4 or IPv6 address)
 *   0  ground     base.c (provider record, parameters, clock, errors),
 *                 names.c (names, the address table), hello.c (the HELLO
 *                 datagram and its nonces)
 *
 * Threading: FI_THREAD_DOMAIN, so no locks anywhere.
 */
#ifndef UFI_H
#define UFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <net/if.h>
#include <netinet/in.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include <unet-xdp/uam.h>
#include <unet-xdp/unet.h>

extern struct fi_provider ufi_prov;

#define UFI_PROV_NAME "unet"
#define UFI_FABRIC_NAME "unet"
#define UFI_PROV_VERSION FI_VERSION(0, 1)

#define UFI_CAPS                                                                           \
	(FI_MSG | FI_TAGGED | FI_SEND | FI_RECV | FI_DIRECTED_RECV | FI_SOURCE | FI_LOCAL_COMM | \
	 FI_REMOTE_COMM)
#define UFI_CQ_DATA_SIZE 4
#define UFI_MAX_MSG_SIZE ((size_t)1 << 30)
#define UFI_TX_SIZE 1024
#define UFI_RX_SIZE 1024

/*
 * The endpoint name (fi_getname), binary form: fixed length on every
 * rank (40 bytes, whatever the family), so Open MPI can pack the names of
 * all ranks side by side.  family: 4 or 6, which of ip and ip6 holds the
 * address (the other is all zero).  ip/ip6 and port: where the peer's
 * channel-setup socket listens (conn.c), and the address its routable
 * channels send from.  prefix: the length of the interface's subnet
 * prefix, so both ends of a channel decide alike whether it must be
 * routable (ufi_name_routed).  nonce: a fresh random number per
 * endpoint, so a restarted process on the same interface is another peer.
 * The first 24 bytes are laid out as the 24-byte names of version 1
 * (IPv4 only, family byte 0), which are still taken (ufi_name_from_bin).
 */
struct ufi_name {
	uint8_t magic[2]; /* 'U' 'F' */
	uint8_t version;  /* 2 (1: the 24-byte IPv4 form, taken on input only) */
	uint8_t flags;	  /* UFI_NAME_F_* */
	uint8_t mac[6];	  /* the interface's MAC */
	uint16_t ep_id;	  /* U-Net endpoint slot on it (network order) */
	uint32_t ip;	  /* family 4: the interface's IPv4 (network order); else 0 */
	uint16_t port;	  /* UDP port of the setup socket (network order) */
	uint8_t prefix;	  /* the length of the address's subnet prefix, 1..32 or 1..128 */
	uint8_t family;	  /* 4 or 6 */
	uint32_t nonce;
	uint8_t ip6[16]; /* family 6: the interface's IPv6 address; else 0 */
} __attribute__((packed));
#define UFI_NAME_LEN ((size_t)sizeof(struct ufi_name))
#define UFI_NAME_V1_LEN ((size_t)24)
/* Reach this endpoint over routable channels even on-link (FI_UNET_CHANNEL=ip). */
#define UFI_NAME_F_ROUTED 0x01
/* "fi_unet://aa:bb:cc:dd:ee:ff/ep=00001/010.201.000.001/24:47000/f=00/nonce=0123abcd"
 * (82 bytes with its NUL) or, for IPv6, the address in full in brackets
 * and a 3-digit prefix
 * "fi_unet://aa:bb:cc:dd:ee:ff/ep=00001/[fd01:0000:0000:0000:0000:0000:0000:0001]/064:47000/f=00/nonce=0123abcd"
 * (109 bytes): fixed width for each family (f: the flags, in hex). */
#define UFI_STR_LEN 128
int ufi_name_to_str(const struct ufi_name *n, char *buf, size_t len);
/* The string form parsed and checked as ufi_name_valid: 0 or -FI_EINVAL. */
int ufi_name_from_str(const char *s, struct ufi_name *n);
/* A binary name from outside, in a slot of len bytes: the 40-byte form,
 * or the 24-byte form of version 1 (converted to version 2, family 4).
 * 0 with *n checked as ufi_name_valid, or -FI_EINVAL (*n zeroed). */
int ufi_name_from_bin(const void *buf, size_t len, struct ufi_name *n);
/* The length the binary name at buf says it has, from its first three
 * bytes alone (magic and version): 24 for version 1, 40 for version 2,
 * 0 for anything else (its length unknown).  Where the API gives no
 * length (fi_av_insert, fi_av_straddr) a name is read no further than
 * this (av.c). */
size_t ufi_name_bin_len(const void *buf);
/* Every field of a name from outside (an AV insert, the hints, a HELLO)
 * checked: magic, version 2, known flags only, a MAC that is neither zero
 * nor multicast, family 4 or 6 with the other family's bytes zero; for
 * IPv4 a unicast address a host can have (not 0/8, multicast, reserved or
 * broadcast, nor the subnet's own or broadcast address) and a prefix of
 * 1..32; for IPv6 one that needs no scope (not ::/8 but ::1, not
 * link-local fe80::/10 nor multicast ff00::/8, not the subnet-router
 * anycast address of its prefix) and a prefix of 1..128; a port. */
bool ufi_name_valid(const struct ufi_name *n);
/* Why ufi_name_valid refuses n (a phrase for a log line), or NULL. */
const char *ufi_name_why(const struct ufi_name *n);
/* Why ufi_name_from_bin refuses the slot, or NULL. */
const char *ufi_name_bin_why(const void *buf, size_t len);
/* Whether the channel between a and b must be routable (U-Net inside
 * UDP/IPv4 or UDP/IPv6): either name asks for it, or the two are not on
 * one subnet by the longer of their prefixes (so both ends decide alike
 * even if their prefixes differ), or their families differ (no channel
 * then: ufi_conn_start refuses).  Symmetric, pure. */
bool ufi_name_routed(const struct ufi_name *a, const struct ufi_name *b);

/* The address table (names.c): fi_addr_t i is names[i], while valid[i]. */
struct ufi_addrs {
	struct ufi_name *names;
	bool *valid;
	size_t n, cap;
};
const struct ufi_name *ufi_addrs_name(const struct ufi_addrs *t, fi_addr_t addr);
fi_addr_t ufi_addrs_find(const struct ufi_addrs *t, const struct ufi_name *n);
int ufi_addrs_grow(struct ufi_addrs *t, size_t need);
/* Append n (checked: ufi_name_valid); *out is its address, or
 * FI_ADDR_NOTAVAIL with the error. */
int ufi_addrs_add(struct ufi_addrs *t, const struct ufi_name *n, fi_addr_t *out);
void ufi_addrs_remove(struct ufi_addrs *t, fi_addr_t addr);
void ufi_addrs_free(struct ufi_addrs *t);

/* ---- parameters (base.c; env FI_UNET_*) ---- */
struct ufi_params {
	char *iface;		/* FI_UNET_IFACE */
	int timeout_ms;		/* FI_UNET_TIMEOUT_MS: a silent peer is dead after this */
	int connect_timeout_ms; /* FI_UNET_CONNECT_TIMEOUT_MS */
	int window;		/* FI_UNET_WINDOW: UAM credits per channel */
	int max_queued;		/* FI_UNET_MAX_QUEUED: UAM's local queue per channel (0: UAM's default) */
	int linger_ms;		/* FI_UNET_LINGER_MS: fi_close waits this long for peers to take our last data */
	int spin_us;		/* FI_UNET_SPIN_US: an idle CQ poller spins this long, then sleeps (-1: never) */
	bool routed_always;	/* FI_UNET_CHANNEL=ip: routable channels to on-link peers too */
	int family;		/* FI_UNET_FAMILY: 4, 6, or 0 (auto: IPv4 if the interface has it) */
	char bad[160];		/* the first FI_UNET_* set to what we cannot use: getinfo refuses */
};
extern struct ufi_params ufi_params;
void ufi_params_load(void);

/* Why the provider cannot serve (FI_WARN, and kept for getinfo to print
 * when the application asked for `unet` by name). */
extern char ufi_why_buf[256];
void ufi_why(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Interface resolution (iface.c): FI_UNET_IFACE, else the only attached one. */
int ufi_resolve_iface(char *ifname, size_t len);
/* The IPv4 address of ifname (where channel setup listens) and the
 * length of its subnet prefix. */
int ufi_iface_ipv4(const char *ifname, struct in_addr *out, uint8_t *prefix);
/* The first IPv6 address of ifname that needs no scope (not link-local),
 * and the length of its prefix; -FI_EADDRNOTAVAIL if it has none. */
int ufi_iface_ipv6(const char *ifname, struct in6_addr *out, uint8_t *prefix);

/* ---- objects ---- */
struct ufi_fabric {
	struct fid_fabric fid;
	int refs;
};

struct ufi_domain {
	struct fid_domain fid;
	struct ufi_fabric *fab;
	char ifname[IF_NAMESIZE];
	bool addr_str; /* FI_ADDR_STR: names are strings */
	enum fi_av_type av_type;
	int refs;
};

struct ufi_av {
	struct fid_av fid;
	struct ufi_domain *dom;
	enum fi_av_type type;
	struct ufi_addrs addrs;
	int refs;
};

struct ufi_cqe {
	struct ufi_cqe *next;
	struct fi_cq_tagged_entry e;
	fi_addr_t src;
	/* errors only */
	int err, prov_errno;
	size_t olen;
};

struct ufi_ep;
struct ufi_cq;

/*
 * How the messaging floor hands completions to the CQ above it: each CQ
 * carries its own (cq.c: ufi_cq_report), so nothing below calls the CQ
 * by name.  complete: a completion; error: an error entry (olen: bytes
 * truncated).
 */
struct ufi_cq_report {
	void (*complete)(struct ufi_cq *cq, void *ctx, uint64_t flags, size_t len, void *buf,
			 uint64_t data, uint64_t tag, fi_addr_t src);
	void (*error)(struct ufi_cq *cq, void *ctx, uint64_t flags, size_t len, void *buf,
		      uint64_t data, uint64_t tag, size_t olen, int err, int prov_errno);
};

struct ufi_cq {
	struct fid_cq fid;
	const struct ufi_cq_report *report;
	struct ufi_domain *dom;
	enum fi_cq_format fmt;
	enum fi_wait_obj wait_obj;
	struct ufi_cqe *head, *tail;	  /* completions */
	struct ufi_cqe *ehead, *etail;	  /* errors */
	struct ufi_cqe *free_list;
	struct fi_cq_err_entry last_err; /* err_data of the last readerr */
	struct ufi_ep *eps[8];
	int neps;
	int epfd, timerfd; /* wait object: made on first need */
	bool signaled;
	/* idle.c: the busy wait of the current streak of empty reads */
	uint64_t idle_start_ns, idle_last_ns, idle_frames;
	uint64_t idle_spin_ns; /* the spin budget now (adapted), 0: FI_UNET_SPIN_US */
	uint64_t idle_sleeps;
	int ncpus, loadavg_fd; /* idle.c: is a CPU wanted? */
	int refs;
};

struct ufi_eq {
	struct fid_eq fid;
	struct ufi_eqe *head, *tail;
};
struct ufi_eqe {
	struct ufi_eqe *next;
	uint32_t event;
	size_t len;
	unsigned char buf[];
};

/* A posted receive. */
struct ufi_rx {
	struct ufi_rx *next;
	void *buf;
	size_t len;
	fi_addr_t src;
	uint64_t tag, ignore;
	void *ctx;
	uint64_t flags; /* FI_TAGGED or FI_MSG, FI_COMPLETION wanted */
};

/* An unexpected message (arrived before its receive). */
struct ufi_ux {
	struct ufi_ux *next;
	struct ufi_peer *peer;
	uint64_t tag, data;
	uint32_t mflags; /* UFI_MF_* */
	size_t len;
	/* eager: the data (len bytes, after the struct); rendezvous: */
	uint32_t region, cookie;
	size_t cost; /* bytes charged to its peer and the endpoint (match.c: ufi_ux_charge) */
	unsigned char eager[];
};

/* A rendezvous send waiting for the receiver's FIN. */
struct ufi_tx {
	struct ufi_tx *next;
	struct ufi_peer *peer;
	const void *buf;
	size_t len;
	void *ctx;
	uint64_t tag, flags;
	int region; /* slot in ep->region_ids, -1: none (a send to self) */
	uint32_t cookie;
};

/* A rendezvous receive: waiting for a region id, or pulling with uam_get. */
struct ufi_get {
	struct ufi_get *next;
	struct ufi_ep *ep;
	struct ufi_peer *peer;
	void *buf;
	size_t buflen, msglen;
	void *ctx;
	uint64_t tag, data, flags;
	uint32_t mflags;
	uint32_t rregion, cookie;
	int lregion; /* slot in ep->region_ids, -1: not yet */
	int op;	     /* uam op id, 0 while waiting */
};

/* A control message (FIN) that found the UAM queue full. */
struct ufi_ctl {
	struct ufi_ctl *next;
	struct ufi_peer *peer;
	unsigned handler;
	uint64_t args[2];
	unsigned nargs;
};

/* An accepted send waiting for a free region (send.c: ufi_pend_send). */
struct ufi_pend {
	struct ufi_pend *next;
	struct ufi_peer *peer;
	const void *buf;
	size_t len;
	uint64_t tag, data, flags;
	uint32_t mf;
	void *ctx;
	size_t off; /* of a fragmented eager message: what went already */
	unsigned char copy[]; /* eager data */
};

/* A fragmented eager message arriving (eager.c: ufi_h_frag). */
struct ufi_inmsg {
	struct ufi_rx *rx; /* the receive it matched, or */
	struct ufi_ux *ux; /* the unexpected message it becomes when complete */
	size_t total, got;
	uint64_t tag, data;
	uint32_t mf;
};

enum ufi_peer_state {
	UFI_PEER_IDLE,
	UFI_PEER_HELLO, /* our tag reserved, asking the peer for its tag */
	UFI_PEER_UP,
	UFI_PEER_FAILED,
	UFI_PEER_CLOSED, /* the peer said goodbye */
};

struct ufi_peer {
	struct ufi_peer *next;
	struct ufi_name name;
	fi_addr_t addr; /* in our AV, or FI_ADDR_NOTAVAIL */
	bool self;
	enum ufi_peer_state state;
	uint16_t ltag, rtag;
	struct unet_channel *uch;
	bool routed; /* uch is a routable channel (ufi_name_routed) */
	struct uam_chan *ch;
	uint64_t hello_next_ns, hello_start_ns;
	uint32_t hello_ivl_ms;
	int err; /* why it failed (negative errno) */
	bool synced; /* close: the peer answered our SYNC */
	bool heard;  /* a UAM message came from it (proto.c: on_msg) */
	uint32_t my_nonce, peer_nonce; /* HELLO authentication (conn.c) */
	bool renego_nonce; /* my_nonce was sent in a challenge to its new tag (conn.c) */
	bool ux_paused; /* its channel paused: too many unexpected bytes */
	size_t ux_bytes; /* unexpected messages from it, held (ufi_ux.cost) */
	uint64_t since_ns; /* a stranger: when its first HELLO made it */
	struct ufi_inmsg *in; /* fragmented message under way from it */
};

/* Message flags on the wire (eager and RTS). */
#define UFI_MF_TAGGED 0x1
#define UFI_MF_DATA 0x2

struct ufi_ep {
	struct fid_ep fid;
	struct ufi_domain *dom;
	struct ufi_av *av;
	struct ufi_cq *tx_cq, *rx_cq;
	bool tx_selective, rx_selective;
	uint64_t tx_op_flags, rx_op_flags;
	uint64_t caps;
	bool directed;
	bool enabled;
	bool closing;

	struct unet_endpoint *uep;
	struct uam_ep *uam;
	struct ufi_name name;
	int udp_fd;
	uint8_t mac[6];
	size_t eager_max; /* messages up to this go eager, in one frame */
	size_t frag_max;  /* and up to this in several (UAM medium messages) */

	struct ufi_peer *peers;
	/* The address table of the bound AV (names.c), where the peer table
	 * looks names and addresses up */
	const struct ufi_addrs *addrs;
	/* Called by ufi_peer_fail once p is failed, before its channel goes:
	 * the messaging floor ends what waits on p (ufi_proto_attach) */
	void (*on_peer_fail)(struct ufi_ep *ep, struct ufi_peer *p);
	unsigned int strangers; /* peers not (yet) in the AV: ufi_peer_stranger */
	unsigned int stranger_quota; /* of them, not failed, at most (0: 1) */
	/* Unexpected messages held: bytes in all, and the bounds past which
	 * a peer's channel is paused (match.c: ux_flow) */
	size_t ux_bytes, ux_max, ux_peer_max;
	struct ufi_peer **by_addr;
	size_t by_addr_n;

	struct ufi_rx *posted[2], *posted_tail[2]; /* [0] msg, [1] tagged */
	struct ufi_ux *ux[2], *ux_tail[2];
	struct ufi_tx *txs;
	struct ufi_get *gets;	   /* all rendezvous receives in progress */
	struct ufi_ctl *ctls, *ctls_tail;
	struct ufi_pend *pend, *pend_tail;
	uint64_t regions_used;	   /* bit i: region slot i in use (rndv.c) */
	uint32_t region_ids[64];   /* slot i's UAM region id: random, low bits i */
	uint32_t next_cookie;
	uint64_t last_send_ns, next_slow_ns, next_keepalive_ns;
	int connecting;		   /* peers in UFI_PEER_HELLO */
	int outstanding;	   /* txs + gets */
};

/* ---- floor 0: base.c ---- */
uint64_t ufi_now_ns(void);
int ufi_errno_to_fi(int neg_errno);
/* -FI_ENOSYS for the fi_ops slots an object does not support. */
int ufi_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int ufi_no_control(struct fid *fid, int cmd, void *arg);
int ufi_no_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops, void *ctx);

/* ---- floor 0: hello.c ---- */
/* Our tags for channels: U-Net tags below are kept for other uses. */
#define UFI_TAG_MIN 1024
#define UFI_TAG_MAX 65535
/* A HELLO: the sender's name and the two tags (host order). */
struct ufi_hello {
	struct ufi_name from;
	uint16_t from_tag, to_tag; /* from_tag 0: a challenge, no tag yet */
	uint32_t my_nonce, your_nonce;
};
#define UFI_HELLO_LEN 96
/* A random nonzero nonce. */
uint32_t ufi_hello_nonce(void);
/* h, addressed to `to`, as it goes on the wire. */
void ufi_hello_pack(const struct ufi_hello *h, const struct ufi_name *to,
		    unsigned char buf[UFI_HELLO_LEN]);
/* A datagram of len bytes from `from` (fromlen: its address length)
 * checked as a HELLO to self: its size, magic, our exact name, a valid
 * sender name whose address is the one it came from, a tag in our range.
 * Returns 0 with *out filled, or -EPROTO.  Pure. */
int ufi_hello_parse(const struct ufi_name *self, const void *buf, size_t len,
		    const struct sockaddr *from, socklen_t fromlen, struct ufi_hello *out);

/* ---- floor 1: peer.c ---- */
struct ufi_peer *ufi_peer_of_addr(struct ufi_ep *ep, fi_addr_t addr);
struct ufi_peer *ufi_peer_find(struct ufi_ep *ep, const struct ufi_name *n);
/* Not (yet) in our AV, and not ourselves. */
bool ufi_peer_is_stranger(const struct ufi_peer *p);
/* Unexpected bytes (data and records) held per peer and per endpoint
 * before the peer's UAM credit is withheld (uam_chan__pause). */
#define UFI_UX_PEER_MAX (4u << 20)
#define UFI_UX_MAX (64u << 20)

/* Peers that may set up a channel before they are in our AV: at most
 * this many records, and at most ep->stranger_quota of them not failed
 * (holding or setting up a channel).  A stranger from which no message
 * came within UFI_STRANGER_GRACE_MS of its HELLO, or that failed, is
 * reclaimed (channel closed, record freed) for a new one. */
#define UFI_MAX_STRANGERS 4096
#define UFI_STRANGER_GRACE_MS 500
/* A quarter of the endpoint's channels (peers: rx buffers / 2 x window) */
unsigned int ufi_stranger_quota(uint32_t rx_buffers, uint32_t window);
struct ufi_peer *ufi_peer_stranger(struct ufi_ep *ep, const struct ufi_name *n);
/* Whether stranger p (authenticated: about to open a channel) may have
 * one: under ep->stranger_quota of strangers holding or setting up a
 * channel, after reclaiming a silent one if need be. */
bool ufi_stranger_admit(struct ufi_ep *ep, struct ufi_peer *p);
void ufi_peer_up(struct ufi_ep *ep, struct ufi_peer *p);
/* p failed for good (err: why): ep->on_peer_fail, then its channel goes. */
void ufi_peer_fail(struct ufi_ep *ep, struct ufi_peer *p, int err);
/* p's U-Net and UAM channels closed (if any). */
void ufi_peer_close_chan(struct ufi_peer *p);

/* ---- floor 2: conn.c, channel setup over UDP ---- */
int ufi_conn_init(struct ufi_ep *ep, const char *ifname);
void ufi_conn_start(struct ufi_ep *ep, struct ufi_peer *p);
void ufi_conn_poll(struct ufi_ep *ep, uint64_t now);
/* A datagram on the setup socket: parsed, then acted on. */
void ufi_conn_hello(struct ufi_ep *ep, const void *buf, size_t len, const struct sockaddr *from,
		    socklen_t fromlen);

/* ---- floor 3: messaging (msg.h has its inner parts) ---- */
/* eager.c */
size_t ufi_eager_max(void);
size_t ufi_ep_eager_max(struct ufi_ep *ep);
size_t ufi_peer_eager_max(struct ufi_ep *ep, struct ufi_peer *p);
size_t ufi_ep_frag_max(struct ufi_ep *ep);
/* proto.c */
int ufi_proto_init(struct ufi_ep *ep);
/* Register the messaging floor's answer to the peer table's events
 * (ep->on_peer_fail); ufi_proto_init does, with UAM's handlers. */
void ufi_proto_attach(struct ufi_ep *ep);
/* A message from peer p (NULL: a channel that is no peer's), dispatched
 * by m->handler: what UAM's handlers do.  Every argument in m is the
 * peer's and is checked; a message that fails a check is ignored (a
 * fragmented message under way is abandoned).  Needs no channel. */
void ufi_proto_input(struct ufi_ep *ep, struct ufi_peer *p, const struct uam_msg *m);
void ufi_progress(struct ufi_ep *ep);
/* Whether a blocked caller must wake up soon (retransmissions, handshakes):
 * the timeout in ms, or -1. */
int ufi_ep_wake_ms(struct ufi_ep *ep);
void ufi_ep_shutdown(struct ufi_ep *ep);
/* Free the posted receives, the unexpected messages and the sends under
 * way (no completions: the endpoint is going away). */
void ufi_ep_free_queues(struct ufi_ep *ep);
/* post.c */
ssize_t ufi_send(struct ufi_ep *ep, const void *buf, size_t len, fi_addr_t dest, uint64_t tag,
		 uint64_t data, uint64_t flags, void *ctx);
ssize_t ufi_recv(struct ufi_ep *ep, void *buf, size_t len, fi_addr_t src, uint64_t tag,
		 uint64_t ignore, uint64_t flags, void *ctx);
ssize_t ufi_cancel(struct ufi_ep *ep, void *ctx);

/* ---- floor 4: cq.c, av.c ---- */
int ufi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cq,
		void *context);
/* What every CQ carries (struct ufi_cq_report). */
extern const struct ufi_cq_report ufi_cq_report;
int ufi_cq_bind_ep(struct ufi_cq *cq, struct ufi_ep *ep);
void ufi_cq_unbind_ep(struct ufi_cq *cq, struct ufi_ep *ep);
int ufi_trywait(struct fid_fabric *fabric, struct fid **fids, int count);
/* idle.c: fi_cq_read's caller busy-waits.  After an empty read,
 * ufi_cq_idle_due says whether it should sleep now, and after the sleep
 * ufi_cq_idle_slept says whether a frame (not the time limit or the
 * timer) ended it; a read that returned something calls ufi_cq_busy. */
bool ufi_cq_idle_due(struct ufi_cq *cq);
void ufi_cq_idle_slept(struct ufi_cq *cq, bool by_frame);
void ufi_cq_busy(struct ufi_cq *cq);
int ufi_av_open(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **av,
		void *context);

/* ---- floor 5: ep.c, domain.c, prov.c ---- */
int ufi_domain_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom,
		    void *context);
int ufi_ep_open(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep,
		void *context);
int ufi_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr, struct fid_eq **eq,
		void *context);

#endif /* UFI_H */
