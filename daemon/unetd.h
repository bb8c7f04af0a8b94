/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unetd.h - the daemon's objects, shared by its files:
 *   main.c    options, the event loop
 *   log.c     the log
 *   server.c  client connections and their requests (lib/proto/unetd_proto.h)
 *   iface.c   the interfaces it serves: attach, maps, its real endpoint
 *   quota.c   the users' quotas
 *   emul.c    emulated endpoints: the shared region, the data plane that
 *             moves frames between it and the interface's real endpoint,
 *             and the check of every frame a client sends
 *   closer.c  closing descriptors clients sent, on a thread of its own
 *   teardown.c the slow end of an interface's sockets and program, on a
 *             thread of its own
 *   dead.c    objects freed after the batch of events that may name them
 *   chan.c    routable channels of clients: their headers decided here
 *             (chan_check.c: the check of an emulated endpoint's frames)
 *   grant.c   direct-access endpoints: sockets made and bound here,
 *             handed to the client
 *   peer.c    the connecting process: its pidfd, namespaces, limits
 *   policy.c  who may do what (docs/unetd-policy.md)
 *   subid.c   subordinate uid ranges: whom a uid's use is charged to
 *   udp.c     UDP ports of endpoints from the daemon, the check of
 *             emulated endpoints' UDP and ARP sends
 *   tcp.c     TCP ports of endpoints from the daemon (tcp_check.c: the
 *             check of emulated endpoints' TCP sends)
 *
 * One thread.  The daemon owns, per interface it serves, one real
 * endpoint (AF_XDP sockets on every queue) made with the library as root;
 * clients' channels are channels of that endpoint, so the XDP program
 * delivers their frames to the daemon, which hands each to the client
 * that owns the tag.
 */
#ifndef UNETD_H
#define UNETD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/layer.h"
#include "policy.h"
#include "proto/unetd_proto.h"
#include "emul_pieces.h"
#include "chan_check.h"

struct unetd_emul;
struct unetd_client;

/* A network namespace, by the identity of its nsfs inode. */
struct unetd_ns {
	uint64_t dev, ino;
};

/* What an epoll event is about (epoll_event.data.ptr points at one).
 * An object with a src is never freed while a batch of events may still
 * name it: its free marks the src dead and puts it on the daemon's dead
 * list, and the loop frees the list after the batch (unetd_free_dead). */
enum unetd_src_kind { UNETD_SRC_LISTEN, UNETD_SRC_CLIENT, UNETD_SRC_KICK, UNETD_SRC_REAL };
struct unetd_src {
	enum unetd_src_kind kind;
	void *obj;	/* the malloc'd object the src is part of */
	bool dead;	/* freed: events for it are ignored */
	struct unetd_src *dead_next;
};

/* An interface the daemon serves: its real endpoint and who owns which
 * of its tags. */
struct unetd_iface {
	struct unetd_ns ns; /* the namespace the device lives in */
	int ns_fd;	    /* and a handle on it (-1: the daemon's own) */
	uint32_t uid;	    /* the client whose request set it up (its log lines') */
	char ifname[16];
	int ifindex;
	struct unet_iface *maps;  /* the attached program's tables */
	uint32_t grant_mask;	  /* queues set aside for direct grants */
	uint32_t grants_used;	  /* of those, granted now */
	struct unet_endpoint *ep; /* the daemon's own on the other queues (NULL:
				   * none left: no emulated endpoints here) */
	struct unet_endpoint_info info;
	struct unetd_emul *emuls; /* endpoints served on it */
	unsigned int nemuls;
	unsigned int users;	  /* endpoints of either kind on it: it is
				   * freed with the last (unetd_iface_put) */
	bool attached_for_client; /* the daemon attached the program, in a
				   * client's namespace: detached with it */
	struct unetd_src src;
	struct unetd_iface *next;
};

/* One client channel: a channel of the real endpoint owned by an emul. */
/* A routable channel request (CH_OPEN_IPV4 or CH_OPEN_IPV6) as the
 * daemon handles both: only what the client may name. */
struct unetd_chan_req {
	uint32_t ep;
	bool v6;
	uint32_t peer_addr;	/* IPv4, network order */
	uint8_t peer_addr6[16]; /* IPv6 */
	uint16_t tag, peer_tag;
	uint16_t peer_port; /* host order; 0: derived */
};

/* What the daemon decided for it, for the reply of either family. */
struct unetd_chan_opened {
	struct unetd_chan_wire w; /* the headers (w.max_payload: 0 but for emulated) */
	uint8_t src_mac[6];	  /* the interface's */
	uint16_t peer_port;	  /* host order: the peer's source port */
};

struct unetd_chan {
	struct unetd_emul *owner;
	struct unet_channel *ch; /* on the real endpoint */
	uint16_t tag, peer_tag;
	uint8_t peer_mac[6];
	bool routable;		 /* U-Net inside UDP/IPv4 or IPv6: its frames must match w */
	struct unetd_chan_wire w;
	struct unetd_chan *next; /* the owner's list */
};

/* The daemon's view of one ring of a region: its own indices, never the
 * client's copy of them. */
struct unetd_ring {
	uint32_t *producer, *consumer, *flags;
	void *desc;
	uint32_t size, mask;
	uint32_t local; /* our producer (rx, comp) or consumer (fill, tx) */
};

struct unetd_emul {
	uint32_t handle;
	struct unetd_client *client;
	struct unetd_iface *iface;
	struct unetd_region *region; /* shared with the client */
	/* The daemon's count of what it did for the endpoint: what STATUS
	 * reports.  The region's copy (published after each round) is the
	 * client's to read, and to overwrite: root's tools never trust it. */
	struct unetd_ep_counters counters;
	size_t region_size;
	uint8_t *segment;
	uint64_t segment_size;
	uint32_t frame_size, nframes;
	int memfd, kick_fd, notify_fd;
	struct unetd_ring fill, rx, tx, comp;
	struct unetd_chan *chans;
	struct unetd_udp_port *udp;	/* its UDP ports (on the real endpoint's slot) */
	struct unetd_tcp_port *tcp;	/* its TCP ports (the same) */
	struct unetd_chan *by_tag_hint; /* last used, for the common one-channel case */
	int deficit;			/* fair service: frames it may still send */
	uint32_t user_share;		/* the policy's share of its user */
	uint32_t share;			/* its part: user_share / the user's endpoints here */
	bool notify_pending;
	bool counters_dirty;		/* counters changed since published */
	bool multi_buffer;		/* frames larger than a chunk go both ways in pieces */
	struct unetd_tx_asm txa;	/* its frame in pieces being gathered (emul_pieces.c) */
	struct unetd_src src;
	struct unetd_emul *next;	/* the interface's list */
	struct unetd_emul *cnext;	/* the client's list */
};

/* A UDP port an endpoint from the daemon opened (daemon/udp.c). */
struct unetd_udp_port {
	uint32_t laddr; /* network order */
	uint16_t lport; /* host order */
	int kfd;	/* the daemon's kernel socket on it, or -1: the client's own holds it */
	bool group;	/* a place in a SO_REUSEPORT group (unetd_groups_held) */
	struct unetd_udp_port *next;
};

/* A TCP port an endpoint from the daemon holds (daemon/tcp.c). */
struct unetd_tcp_port {
	uint32_t laddr; /* network order */
	uint16_t lport; /* host order */
	int kfd;	/* the daemon's kernel socket on it, in the device's namespace */
	bool group;	/* a SO_REUSEPORT group's listener (unetd_groups_held) */
	struct unetd_tcp_port *next;
};

/* A channel of a direct grant: an entry in the maps for its slot. */
struct unetd_dchan {
	uint16_t tag;
	int kfd; /* a routable channel's source port, held by us; else -1 */
	struct unetd_dchan *next;
};

struct unetd_direct {
	uint32_t handle;
	struct unetd_client *client;
	struct unetd_iface *iface;
	uint32_t queue, slot, ring, frame_size;
	bool zerocopy, slot_claimed, queue_taken;
	bool multi_buffer; /* bound with XDP_USE_SG: frames in pieces */
	uint64_t token;
	uint32_t alive_id;
	int alive_fd, memfd, xsk_fd;
	void *umem;
	size_t umem_size;
	struct unetd_dchan *chans;
	struct unetd_udp_port *udp;
	struct unetd_tcp_port *tcp;
	uint32_t uid;		    /* whose: charged to it while the socket lives */
	struct unetd_direct *cnext; /* the client's list, or the daemon's lingering list */
};

/*
 * The lines one user's requests and connections put in the log (a
 * refusal, a dropped client): at most UNETD_LOG_USER_RATE a second after
 * a burst of UNETD_LOG_USER_BURST (a token bucket per uid), so that a
 * user cannot flood the journal within its request budget.  The lines
 * past it are counted, and said in one line a second at most ("uid U:
 * N log lines of its requests suppressed").  Zeroed: a full bucket.
 */
#define UNETD_LOG_USER_RATE 5.0
#define UNETD_LOG_USER_BURST 50.0
/* And every user but root together, in front of their own limits: a user
 * with many uids (a subordinate range, /etc/subuid) gets no more. */
#define UNETD_LOG_USERS_RATE 50.0
#define UNETD_LOG_USERS_BURST 100.0

struct unetd_log_limit {
	double tokens;	      /* lines it may log now */
	uint64_t last_ns;     /* when tokens was refilled (0: never) */
	uint64_t said_ns;     /* when the last summary was logged */
	uint64_t suppressed;  /* lines left out since the last summary */
	int level;	      /* the most severe of them */
	uint64_t acct;	      /* whose (unetd_acct_of): a line of another uid's
			       * names this owner too */
	char who[48];	      /* acct's name (unetd_acct_name), set with it */
};

/* A line of uid's, through its limit l (NULL: none of its own, as for a
 * line about a user whose record may be gone) and, for any uid but root,
 * the limit of all users together.  A line of a uid whose limit is
 * another's (a subordinate uid's, charged to its owner) ends naming it:
 * " (uid 100005: subordinate of uid 1000)", or for a range of root's
 * " (uid 100005: subordinate of root, charged to root's subordinate
 * range from 100000)". */
void unetd_log_user(struct unetd_log_limit *l, uint32_t uid, int level, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Say how many of l's lines were left out, if any were and a summary
 * is due (force: now, as the record goes).  Returns whether some are
 * still to be said. */
bool unetd_log_user_flush(struct unetd_log_limit *l, bool force);
/* The same for the limit of all users together. */
bool unetd_log_users_flush(bool force);
/* Whether l is as a new one would be (its bucket full, nothing left to
 * say): only then may its user's record go, or a user whose record is
 * swept would start again with a fresh burst. */
bool unetd_log_user_idle(struct unetd_log_limit *l);

/*
 * Subordinate uid ranges (daemon/subid.c; /etc/subuid, unetd --subuid):
 * "owner:start:count" a line, owner a user name or a uid.  A user who
 * owns a range can run processes with any of its uids (newuidmap), so
 * what the daemon bounds per user (request and CPU budget, log limit,
 * connection cap) is kept per accounting identity: the uid, or for a
 * uid inside a range, the range's owner (the first range that holds it).
 * A range of root's is not root (no exemptions), and container managers
 * slice one such range among containers: each UNETD_ROOT_SLICE uids of
 * it, from its start, are an identity of their own,
 * UNETD_ACCT_ROOT_RANGE | the slice's first uid.  The policy's rules
 * still match the client's own uid.
 */
#define UNETD_SUBID_MAX 4096	      /* ranges read; the rest are skipped */
#define UNETD_SUBID_LINE_MAX 256      /* longer lines are skipped */
#define UNETD_SUBID_NAME_MAX 64	      /* an owner's name */
#define UNETD_SUBID_FILE_MAX (1u << 20) /* bytes read: more is an error */
#define UNETD_ACCT_ROOT_RANGE (1ull << 32)
#define UNETD_ROOT_SLICE 65536u

struct unetd_subid {
	uint32_t start, count, owner;
};

struct unetd_subids {
	struct unetd_subid *r; /* in the file's order (first wins) */
	unsigned int n;
};

/* An owner's name to its uid: 0, or -1 (no such user). */
typedef int (*unetd_subid_name_fn)(const char *name, uint32_t *uid);
/* A line skipped (1-based) and why. */
typedef void (*unetd_subid_warn_fn)(void *ctx, unsigned int lineno, const char *why);
/* Parse len bytes of text into *s (empty lines and lines starting with
 * '#' are skipped silently, any other line that does not parse with a
 * call of warn); returns how many lines were skipped. */
unsigned int unetd_subid_parse(const char *text, size_t len, struct unetd_subids *s,
			       unetd_subid_name_fn name_uid, unetd_subid_warn_fn warn, void *ctx);
/* Read path ("none" or a missing file: no ranges) into *s, names through
 * the passwd database, a warning line for each of the first lines
 * skipped.  0, or -1 (unreadable, not a regular file, too large). */
int unetd_subid_load(const char *path, struct unetd_subids *s);
void unetd_subid_free(struct unetd_subids *s);
/* The range that holds uid (NULL: none; uid 0 never is in one). */
const struct unetd_subid *unetd_subid_find(const struct unetd_subids *s, uint32_t uid);
/* uid's accounting identity. */
uint64_t unetd_acct_of(const struct unetd_subids *s, uint32_t uid);
/* "uid U" or "root's subordinate uids from S", as snprintf. */
int unetd_acct_name(uint64_t acct, char *buf, size_t len);

/* A user with connections: its request budget (daemon/server.c), kept
 * per accounting identity (acct: a uid, or a range of root's; 0: root). */
struct unetd_user {
	uint64_t acct;
	unsigned int nclients;
	double tokens;	  /* requests it may make now (a token bucket) */
	double cpu_ns;	  /* the serving thread's CPU time its requests may take
			   * now (a second bucket; below 0: a debt) */
	uint64_t last_ns; /* when both were last refilled */
	struct unetd_log_limit log; /* the log lines of its requests (log.c) */
	struct unetd_user *next;
};

struct unetd_client {
	int fd;
	struct unetd_user *user;
	bool throttled;	   /* its requests wait: its user's budget is spent */
	/* The namespace of the request being served (the client's own, sent
	 * with EP_CREATE; the daemon's when it sent none) and its fd, valid
	 * only while that request is served. */
	struct unetd_ns netns;
	int netns_fd;
	uint32_t uid, gid, pid;
	int pidfd;	   /* the process that connected (daemon/peer.c) */
	uint32_t *gids;	   /* primary, then every supplementary group */
	unsigned int ngids;
	struct unetd_emul *emuls;
	struct unetd_direct *directs;
	unsigned int nemuls;	/* endpoints of either kind */
	uint64_t segment_bytes; /* what its endpoints hold */
	struct unetd_src src;
	struct unetd_client *next;
};

struct unetd {
	const char *socket_path;
	const char *pin_root;
	struct unetd_policy *policy;
	int listen_fd, epoll_fd;
	int own_netns_fd;	   /* the daemon's network namespace, to come back to */
	struct unetd_ns own_netns;
	struct unetd_src listen_src;
	struct unetd_client *clients;
	struct unetd_user *users;
	struct unetd_subids subids;	   /* --subuid (default /etc/subuid) */
	struct unetd_direct *lingering; /* grants whose client is gone and whose
					 * socket it may still hold */
	uint64_t linger_checked_ns;
	unsigned int nthrottled;   /* clients whose requests wait for budget */
	uint64_t reap_cpu_ns;	   /* CPU time spent freeing other clients' hang-ups
				    * (not charged to the request it fell in) */
	struct unetd_iface *ifaces;
	/* Attached to each interface's real endpoint (iface.c): the router
	 * of emulated endpoints' UDP and ARP, registered by the floor that
	 * has them (emul.c: unetd_emul_register), so that iface.c names
	 * nothing above it. */
	const struct unet_layer *iface_layer;
	uint32_t next_handle;
	uint32_t grant_queues;	   /* --grant-queues: queue mask for direct grants */
	uint32_t max_tcp_ports;	   /* --max-tcp-ports: all clients' TCP ports together */
	uint32_t spin_us;	   /* busy-poll this long after work before sleeping */
	uint64_t req_bad, req_denied; /* counters for status */
	uint64_t req_throttled;	   /* times a user's requests had to wait */
	uint64_t log_flushed_us;   /* when users' log summaries were last looked at */
	bool log_pending;	   /* some user's lines were left out, not yet said */
	struct unetd_src *dead;	   /* objects freed in this batch (see struct unetd_src) */
	volatile int stop;
};

/* log.c: a line on stderr if level is at most unetd_log_level. */
extern int unetd_log_level;
void unetd_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* dead.c: free obj (the object src is part of) once the current batch
 * of events is handled (unetd_free_dead, called by the loop after each
 * batch); from now on events for src are ignored. */
void unetd_defer_free(struct unetd *d, struct unetd_src *src);
void unetd_free_dead(struct unetd *d);

/* closer.c: close a descriptor a client sent without ever waiting on it
 * here (a thread of its own closes it). */
int unetd_closer_start(void);
void unetd_close_client_fd(int fd);

/* teardown.c: what of an interface (or a grant) waits on the kernel when
 * it goes: the last close of its AF_XDP sockets, detaching the program in
 * a client's namespace.  Done in order on a thread of its own; meanwhile
 * the device (ns, ifname) is not to be set up again (unetd_teardown_pending
 * first). */
struct unetd_teardown {
	struct unetd_ns ns; /* the device's namespace and name */
	char ifname[16];
	int fds[UNET_MAX_QUEUES + 2]; /* closed first, in order */
	unsigned int nfds;
	int ns_fd;   /* then closed (-1: none); with detach, entered first */
	bool detach; /* unet_iface__detach(ifname) in ns_fd */
	struct unetd_teardown *next;
};
int unetd_teardown_start(const struct unetd *d);
/* NULL: no memory (the caller then does the job itself). */
struct unetd_teardown *unetd_teardown_new(const struct unetd_ns *ns, const char *ifname);
/* Takes t (runs it at once before the thread is started). */
void unetd_teardown_queue(struct unetd_teardown *t);
/* Before (ns, ifname) is set up again: 0 if none of its jobs is queued
 * or under way; else -EBUSY at once (the client asks again: the library
 * retries), its queued jobs moved to the front of the queue. */
int unetd_teardown_pending(const struct unetd_ns *ns, const char *ifname);
/* Wait up to ms for the queue to empty (at exit: the jobs taken from
 * then on only detach, their sockets left to the exit); true if it did. */
bool unetd_teardown_drain(int ms);

/* peer.c: the connecting process itself, through its pidfd. */
int unetd_peer_open(int fd, struct unetd_client *c);
/* 0 if c's process may administer the network namespace netns_fd (its
 * own, or CAP_NET_ADMIN over it); else -EPERM (or -errno) with msg. */
int unetd_peer_may_admin_netns(const struct unetd_client *c, int netns_fd, char *msg,
			       size_t msglen);
/* The process's RLIMIT_MEMLOCK soft limit (UINT64_MAX: unlimited);
 * -ESRCH once it is gone. */
int unetd_peer_memlock(const struct unetd_client *c, uint64_t *lim);

/* server.c */
int unetd_server_open(struct unetd *d);
void unetd_server_accept(struct unetd *d);
/* Serve one readable client; returns false when the client is gone
 * (closed, or dropped for a protocol error). */
bool unetd_server_serve(struct unetd *d, struct unetd_client *c);
/* Let throttled clients whose user has budget again be served; returns
 * how many still wait (the loop then sleeps briefly, not for long). */
unsigned int unetd_server_unthrottle(struct unetd *d);
/* Say what users' log limits left out, where a summary is due; returns
 * whether some are still to be said. */
bool unetd_server_log_flush(struct unetd *d);
/* The log limit of uid's accounting identity, if it has a record now
 * (NULL: none). */
struct unetd_log_limit *unetd_user_log(struct unetd *d, uint32_t uid);
void unetd_client_free(struct unetd *d, struct unetd_client *c);

/* iface.c */
/* The interface ifname as the daemon serves it, set up on first use:
 * program attached, maps open, its real endpoint on the queues not set
 * aside for grants.  NULL with *err. */
struct unetd_iface *unetd_iface_get(struct unetd *d, const struct unetd_client *c,
				    const char *ifname, int *err);
/* Check that fd (-1: none sent) is a network namespace and name it in
 * *ns (the daemon's own for -1).  Returns 0 or -EINVAL. */
int unetd_netns_check(int fd, struct unetd_ns *ns);
/* Enter c's namespace for the request (if it is not the daemon's) and
 * come back.  Return 0 or -errno. */
int unetd_netns_enter(struct unetd *d, int fd, const struct unetd_ns *ns);
void unetd_netns_leave(struct unetd *d, int fd, const struct unetd_ns *ns);
/* Free f if no endpoint uses it any more: its real endpoint, sockets,
 * maps and namespace handle go; the XDP program stays attached (as
 * unetctl attach leaves it). */
void unetd_iface_put(struct unetd *d, struct unetd_iface *f);
void unetd_iface_free_all(struct unetd *d);
/* quota.c: the TCP (tcp) or UDP ports the endpoints of uid's clients
 * hold, with those of every uid of its accounting identity
 * (unetd_acct_of: a subordinate range's uids are its owner's), or of
 * every client with any_uid: each is a kernel socket of ours
 * and an entry of an interface's table, so the bounds are the user's and
 * the daemon's, not each endpoint's. */
unsigned int unetd_ports_held(const struct unetd *d, bool tcp, bool any_uid, uint32_t uid);
/* How many SO_REUSEPORT group ports (UDP and TCP) uid's endpoints
 * (its accounting identity's, as above), or
 * (any_uid) all clients', hold.  The interface's group table
 * (UNET_MAX_PORT_GROUPS) is smaller than its port tables: without these
 * bounds four users at their port quotas could fill it for everyone. */
unsigned int unetd_groups_held(const struct unetd *d, bool any_uid, uint32_t uid);
#define UNETD_MAX_GROUPS_PER_USER 64
#define UNETD_MAX_GROUPS_ALL (UNET_MAX_PORT_GROUPS * 3 / 4)
/* quota.c: whether c's user may have one more endpoint of seg bytes under g.
 * Returns 0 or -EDQUOT with msg. */
int unetd_quota_check(struct unetd *d, struct unetd_client *c, const struct unetd_grant *g,
		      uint64_t seg, char *msg, size_t msglen);
/* What uid's lingering grants (sockets it kept after its connection)
 * hold: add them to *eps and *bytes. */
void unetd_direct_lingering_charge(const struct unetd *d, uint32_t uid, uint32_t *eps,
				   uint64_t *bytes);

/* grant.c */
struct unetd_direct *unetd_direct_create(struct unetd *d, struct unetd_client *c,
					 const struct unetd_ep_create *req,
					 const struct unetd_grant *g, int *err, char *msg,
					 size_t msglen);
void unetd_direct_free(struct unetd *d, struct unetd_direct *g);
/* Look at the lingering grants: those whose socket is gone give back
 * their queue and their user's charge.  Returns how many still linger. */
unsigned int unetd_direct_reap(struct unetd *d);
/* At exit: forget the lingering grants. */
void unetd_direct_drop_lingering(struct unetd *d);
int unetd_direct_chan_open(struct unetd_direct *g, const struct unetd_ch_open *req,
			   const struct unetd_grant *gr, char *msg, size_t msglen);
int unetd_direct_chan_open_routable(struct unetd *d, struct unetd_direct *g,
				    const struct unetd_chan_req *req, const struct unetd_grant *gr,
				    struct unetd_chan_opened *rep, char *msg, size_t msglen);
int unetd_direct_chan_close(struct unetd_direct *g, uint16_t tag);

/* chan.c: why tag could not be opened (err, -errno from the library or
 * the map) in msg, for the client; returns err.  Another endpoint holding
 * the tag is said as such, not as "Address already in use". */
int unetd_chan_refused(int err, uint16_t tag, char *msg, size_t msglen);

/* chan.c: routable channels, their headers decided here (in f's
 * namespace): on the real endpoint for an emulated endpoint (the channel
 * in *ch, holding its port), or an entry for a grant's slot (the port
 * held by *kfd).  Fill rep.  0 or -errno with msg. */
/* The most routable channels one user's endpoints may hold together
 * (each a kernel socket of ours), within its `channels` quota. */
#define UNETD_MAX_ROUTABLE_PER_USER 256
int unetd_chan_open_real(struct unetd *d, struct unetd_iface *f, const struct unetd_chan_req *req,
			 struct unet_channel **ch, struct unetd_chan_opened *rep, char *msg,
			 size_t msglen);
int unetd_chan_open_slot(struct unetd *d, struct unetd_iface *f, uint32_t slot,
			 const struct unetd_chan_req *req, int *kfd, struct unetd_chan_opened *rep,
			 char *msg, size_t msglen);

/* udp.c */
/* Open a UDP port for an endpoint registered under slot (a grant's own,
 * or the real endpoint's for an emulated one), after the policy allows
 * it; list is the endpoint's ports.  Fills rep and a read-only fd of the
 * neighbour map.  Returns 0 or -errno with msg. */
/* The largest message an emulated endpoint may send and receive: what the
 * daemon forwards (emul.c). */
uint32_t unetd_emul_max_payload(const struct unetd_emul *e);
/* Whether e sends and receives frames larger than a chunk in pieces. */
bool unetd_emul_multi_buffer(const struct unetd_emul *e);
int unetd_udp_open(struct unetd *d, struct unetd_iface *f, uint32_t slot, uint32_t uid,
		   struct unetd_udp_port **list, const struct unetd_udp_open *req,
		   const struct unetd_grant *g, bool group, struct unetd_udp_opened *rep,
		   int *neigh_fd, char *msg, size_t msglen);
/* Whether uid may hold one more SO_REUSEPORT group port: 0, or
 * -ENOSPC / -EDQUOT with msg. */
int unetd_group_quota(const struct unetd *d, uint32_t uid, char *msg, size_t msglen);
/* Whether an emulated endpoint of f holds UDP (or TCP) port laddr:lport:
 * the daemon's place in a SO_REUSEPORT group is theirs together. */
bool unetd_emul_holds(struct unetd_iface *f, bool tcp, uint32_t laddr, uint16_t lport);
/* Close it; own_tcp: the endpoint's TCP ports when the slot is its
 * alone (a grant), NULL when it is shared by every emulated endpoint of
 * f; per_endpoint_slot says which.  0 or -ENOENT. */
int unetd_udp_close(struct unetd_iface *f, uint32_t slot, struct unetd_udp_port **list,
		    const struct unetd_tcp_port *own_tcp, bool per_endpoint_slot, uint32_t laddr,
		    uint16_t lport);
/* Whether a port of the slot still uses laddr: for a slot of one
 * endpoint's own (per_endpoint_slot), its lists udp and tcp; else any
 * emulated endpoint's of f.  Its registration goes with the last. */
bool unetd_slot_uses_addr(struct unetd_iface *f, bool per_endpoint_slot,
			  const struct unetd_udp_port *udp, const struct unetd_tcp_port *tcp,
			  uint32_t laddr);
/* Whether the device f (in its namespace) has addr: then the kernel
 * answers ARP for it. */
bool unetd_device_has(struct unetd *d, struct unetd_iface *f, uint32_t addr);
/* A read-only descriptor of f's neighbour map, or -errno. */
int unetd_neigh_ro(struct unetd_iface *f);
/* The check of an emulated endpoint's non-U-Net frame (IPv4/UDP, ARP),
 * chan_port the interface's routable-channel port now: NULL if it may
 * go, else the counter to charge. */
uint64_t *unetd_udp_check(struct unetd_emul *e, uint8_t *f, uint32_t len, uint16_t chan_port);
/* The interface's routable-channel UDP port, which no client datagram may
 * be sent to (docs/security.md). */
uint16_t unetd_chan_port(struct unetd_iface *f);

/* tcp.c */
/* The most TCP ports all of one user's endpoints may hold together (each
 * is a kernel socket and an entry of the interface's unet_tcp_ports). */
#define UNETD_MAX_TCP_PORTS_PER_USER 256
/* What all clients together may hold by default: 3/4 of an interface's
 * TCP port table, so that users at their 256 fill the daemon's share,
 * not the table (the rest is for processes with their own endpoints). */
#define UNETD_MAX_TCP_PORTS_DEFAULT (UNET_MAX_TCP_PORTS * 3 / 4)
/* The same bounds for UDP ports (each an entry of the interface's UDP
 * table and, since a port is held against the kernel's sockets, a kernel
 * socket of the daemon's): a policy that grants a wide range must not
 * let one user fill the table. */
#define UNETD_MAX_UDP_PORTS_PER_USER 256
#define UNETD_MAX_UDP_PORTS_ALL (UNET_MAX_UDP_PORTS * 3 / 4)
/* Hold a TCP port for an endpoint registered under slot, after the
 * policy allows it (lport 0: an ephemeral one, chosen by a kernel socket
 * in the device's namespace); uid the client's (its ports count together);
 * list is the endpoint's TCP ports.  Fills rep and a read-only fd of the
 * neighbour map.  Returns 0 or -errno with msg. */
int unetd_tcp_open(struct unetd *d, struct unetd_iface *f, uint32_t slot, uint32_t uid,
		   struct unetd_tcp_port **list, const struct unetd_tcp_open *req, const struct unetd_grant *g,
		   struct unetd_tcp_opened *rep, int *neigh_fd, char *msg, size_t msglen);
/* Release it (as unetd_udp_close).  0 or -ENOENT. */
int unetd_tcp_close(struct unetd_iface *f, uint32_t slot, struct unetd_tcp_port **list,
		    const struct unetd_udp_port *own_udp, bool per_endpoint_slot, uint32_t laddr,
		    uint16_t lport);
/* The check of an emulated endpoint's IPv4/TCP frame: NULL if it may go,
 * else the counter to charge (tx_bad_frame, or tx_foreign_tag for a
 * source address or port it does not hold). */
uint64_t *unetd_tcp_check(struct unetd_emul *e, const uint8_t *f, uint32_t len);

/* tcp_check.c: the frame check itself, on f[0..len) (from the Ethernet
 * header) against the ports held. */
enum unetd_tcp_verdict {
	UNETD_TCP_OK,
	UNETD_TCP_BAD_FRAME,	/* not IPv4 without options, not TCP, a fragment, a
				 * length or data offset outside the frame */
	UNETD_TCP_FOREIGN_ADDR, /* no port held on the source address */
	UNETD_TCP_FOREIGN_PORT, /* the source port not one held on that address */
};
enum unetd_tcp_verdict unetd_tcp_check_frame(const uint8_t *f, uint32_t len,
					     const struct unetd_tcp_port *held);

/* emul.c */
/* Register the layer on real endpoints that routes emulated endpoints'
 * UDP and ARP frames to them (d->iface_layer). */
void unetd_emul_register(struct unetd *d);
/* Make an emulated endpoint for c on ifname.  Returns it, or NULL with
 * *err (negative errno) and msg filled. */
struct unetd_emul *unetd_emul_create(struct unetd *d, struct unetd_client *c,
				     const struct unetd_ep_create *req, const struct unetd_grant *g,
				     int *err, char *msg, size_t msglen);
void unetd_emul_free(struct unetd *d, struct unetd_emul *e);
int unetd_emul_chan_open(struct unetd *d, struct unetd_emul *e, const struct unetd_ch_open *req,
			 const struct unetd_grant *g, char *msg, size_t msglen);
/* A routable channel for e (chan.c decides its headers): rep filled. */
int unetd_emul_chan_open_routable(struct unetd *d, struct unetd_emul *e,
				  const struct unetd_chan_req *req, const struct unetd_grant *g,
				  struct unetd_chan_opened *rep, char *msg, size_t msglen);
int unetd_emul_chan_close(struct unetd *d, struct unetd_emul *e, uint16_t tag);
/* One pass of the data plane over every interface: returns how much work
 * it did (0: idle). */
int unetd_dataplane_poll(struct unetd *d);
/* Before sleeping: ask clients to kick (need_wakeup) and recheck;
 * returns true if there is work after all. */
bool unetd_dataplane_arm(struct unetd *d);
void unetd_dataplane_disarm(struct unetd *d);
/* The fds the loop must watch besides the sockets: real endpoints' and
 * the emuls' kick eventfds are added to the epoll set on creation. */

#endif /* UNETD_H */
