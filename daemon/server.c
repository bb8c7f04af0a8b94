/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * server.c - the daemon's Unix socket: who a client is (the kernel's
 * SO_PEERCRED and SO_PEERGROUPS of its connection, nothing it says), and
 * its requests (lib/proto/unetd_proto.h).
 *
 * Every request is checked before it is looked at: one whole packet of at
 * most UNETD_MAX_MSG bytes, our protocol version, a known type, a body of
 * exactly the type's size, no file descriptors.  A request that fails
 * those checks is a protocol error: the client is dropped and counted (it
 * gets no partial service).  A well-formed request the policy refuses, or
 * that cannot be done, gets an error reply with the reason and the
 * connection stays.  A client's endpoints live as long as its connection.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "unetd.h"

#define UNETD_MAX_CONN_PER_UID 256
/* Requests per second a user other than root may make, over all its
 * connections, and how many it may make at once: a request costs the
 * daemon's one thread a few microseconds (EP_CREATE, which maps a
 * segment or sets up an interface, counts as EP_CREATE_COST), so a
 * user's flood of requests takes a bounded share of the thread that
 * moves everyone's frames.  Past the budget its requests wait in its
 * sockets (nothing is refused): the daemon stops reading them until the
 * budget refills. */
#define REQ_RATE 1000.0
#define REQ_BURST 100.0
#define EP_CREATE_COST 10.0
/* Connections are counted past the budget too (each a token), down to
 * a debt of 3 s of refill at most. */
#define REQ_DEBT_MAX (3.0 * REQ_RATE)
/* And a second budget, of the serving thread's CPU time: what a
 * request costs is not always ours to choose (a routable channel open
 * asks the kernel for a route and the interface's addresses, whose
 * number the user may choose in a namespace of its own; EP_CREATE in a
 * namespace of the user's loads and verifies the XDP program there), so
 * each request's CPU time is taken from CPU_RATE (50 ms a second: 5% of
 * the thread) with a burst of CPU_BURST, which an honest user's
 * endpoints and channels fit in.  Whatever its requests, a user whose
 * burst is spent gets at most 5% of the thread.  CPU time, not the
 * clock: a request the scheduler preempted on a loaded machine costs the
 * thread nothing meanwhile, and must not cost its user.  A costly
 * request leaves the budget below zero, the user's next requests wait
 * until it has refilled, never longer than CPU_DEBT_MAX takes (3 s: a
 * client's library gives up on an answer after 5 s). */
#define CPU_RATE 0.05
#define CPU_BURST 250e6
#define CPU_DEBT_MAX (3.0 * CPU_RATE * 1e9)

/* Body size of each request type (-1: unknown type). */
static long body_size(uint16_t type)
{
	switch (type) {
	case UNETD_REQ_HELLO:
		return sizeof(struct unetd_hello);
	case UNETD_REQ_EP_CREATE:
		return sizeof(struct unetd_ep_create);
	case UNETD_REQ_EP_DESTROY:
		return sizeof(struct unetd_ep_ref);
	case UNETD_REQ_CH_OPEN:
		return sizeof(struct unetd_ch_open);
	case UNETD_REQ_CH_CLOSE:
		return sizeof(struct unetd_ch_ref);
	case UNETD_REQ_STATUS:
		return 0;
	case UNETD_REQ_WHOAMI:
		return sizeof(struct unetd_whoami);
	case UNETD_REQ_UDP_OPEN:
	case UNETD_REQ_UDP_OPEN_GROUP:
		return sizeof(struct unetd_udp_open);
	case UNETD_REQ_UDP_CLOSE:
		return sizeof(struct unetd_udp_close);
	case UNETD_REQ_TCP_OPEN:
		return sizeof(struct unetd_tcp_open);
	case UNETD_REQ_TCP_CLOSE:
		return sizeof(struct unetd_tcp_close);
	case UNETD_REQ_CH_OPEN_IPV4:
		return sizeof(struct unetd_ch_open_ipv4);
	case UNETD_REQ_CH_OPEN_IPV6:
		return sizeof(struct unetd_ch_open_ipv6);
	default:
		return -1;
	}
}

/* Whether the n bytes at p are all zero. */
static bool all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/* Whether the name at p (a char[16] of a request) ends in a NUL with only
 * NULs after it: the library sends it so (a zeroed struct, snprintf);
 * one without a NUL was cut to 15 bytes before, naming another device. */
static bool name_clean(const uint8_t *p, size_t size)
{
	const uint8_t *nul = memchr(p, 0, size);

	return nul && all_zero(nul, size - (size_t)(nul - p));
}

#define FIELD_ZERO(type, field, body)                                                    \
	all_zero((const uint8_t *)(body) + offsetof(type, field), sizeof(((type *)0)->field))

/*
 * The reserved bytes of a well-formed request (hdr, and body of its
 * type's size): the header's reserved word, every body's pad and
 * reserved fields, the flag bits no version defines, and the bytes after
 * an interface name's NUL.  All must be zero: a later version of the
 * protocol may give them a meaning, and a daemon that took them as they
 * came would then be taken for one that understands them.  Returns what
 * is not zero, or NULL.
 */
static const char *reserved_set(const struct unetd_req_hdr *h, const uint8_t *body)
{
	if (h->reserved)
		return "the header's reserved field is not zero";
	switch (h->type) {
	case UNETD_REQ_HELLO:
		return FIELD_ZERO(struct unetd_hello, reserved, body) ? NULL
								     : "reserved is not zero";
	case UNETD_REQ_EP_CREATE:
		return name_clean(body + offsetof(struct unetd_ep_create, ifname),
				  sizeof(((struct unetd_ep_create *)0)->ifname))
			       ? NULL
			       : "the interface name is not NUL-terminated and zero-padded";
	case UNETD_REQ_WHOAMI:
		return name_clean(body + offsetof(struct unetd_whoami, ifname),
				  sizeof(((struct unetd_whoami *)0)->ifname))
			       ? NULL
			       : "the interface name is not NUL-terminated and zero-padded";
	case UNETD_REQ_EP_DESTROY:
		return FIELD_ZERO(struct unetd_ep_ref, reserved, body) ? NULL
								      : "reserved is not zero";
	case UNETD_REQ_CH_OPEN:
		return FIELD_ZERO(struct unetd_ch_open, pad, body) ? NULL : "pad is not zero";
	case UNETD_REQ_CH_CLOSE:
		return FIELD_ZERO(struct unetd_ch_ref, pad, body) ? NULL : "pad is not zero";
	case UNETD_REQ_CH_OPEN_IPV4:
		return FIELD_ZERO(struct unetd_ch_open_ipv4, pad, body) ? NULL : "pad is not zero";
	case UNETD_REQ_CH_OPEN_IPV6:
		return FIELD_ZERO(struct unetd_ch_open_ipv6, pad, body) ? NULL : "pad is not zero";
	case UNETD_REQ_UDP_CLOSE:
		return FIELD_ZERO(struct unetd_udp_close, pad, body) ? NULL : "pad is not zero";
	case UNETD_REQ_TCP_CLOSE:
		return FIELD_ZERO(struct unetd_tcp_close, pad, body) ? NULL : "pad is not zero";
	case UNETD_REQ_TCP_OPEN: {
		struct unetd_tcp_open t;

		memcpy(&t, body, sizeof(t));
		return t.flags & ~(UNETD_TCP_LISTEN | UNETD_TCP_GROUP) ? "unknown flags are set"
								       : NULL;
	}
	default: /* STATUS (no body), UDP_OPEN(_GROUP) (no reserved bytes) */
		return NULL;
	}
}

/* ---- The listening socket ---------------------------------------------- */

/*
 * The socket's directory must be root's and not writable by others (or
 * someone could put their own socket where clients look); a stale socket
 * of ours is replaced, anything else in its place is refused.  Every user
 * may connect (mode 0666): the policy, not the file mode, decides.
 */
int unetd_server_open(struct unetd *d)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct epoll_event ev;
	char dir[sizeof(sa.sun_path)];
	struct stat st;
	char *slash;
	int fd;

	if (strlen(d->socket_path) >= sizeof(sa.sun_path)) {
		unetd_log(UNET_LOG_ERROR, "socket path too long: %s", d->socket_path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, d->socket_path);
	strcpy(dir, d->socket_path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) && errno != EEXIST) {
			unetd_log(UNET_LOG_ERROR, "mkdir %s: %s", dir, strerror(errno));
			return -errno;
		}
		if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || st.st_uid != 0 ||
		    (st.st_mode & (S_IWGRP | S_IWOTH))) {
			unetd_log(UNET_LOG_ERROR,
				  "%s: not a root-owned directory closed to others: refused", dir);
			return -EPERM;
		}
	}
	if (!lstat(d->socket_path, &st)) {
		if (!S_ISSOCK(st.st_mode) || st.st_uid != 0) {
			unetd_log(UNET_LOG_ERROR, "%s exists and is not our socket: refused",
				  d->socket_path);
			return -EEXIST;
		}
		unlink(d->socket_path);
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(d->socket_path, 0666) ||
	    listen(fd, 64)) {
		int err = -errno;

		unetd_log(UNET_LOG_ERROR, "%s: %s", d->socket_path, strerror(-err));
		close(fd);
		return err;
	}
	d->listen_fd = fd;
	d->listen_src.kind = UNETD_SRC_LISTEN;
	d->listen_src.obj = d;
	ev.events = EPOLLIN;
	ev.data.ptr = &d->listen_src;
	if (epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, fd, &ev))
		return -errno;
	unetd_log(UNET_LOG_INFO, "listening on %s", d->socket_path);
	return 0;
}

static void reap_closed(struct unetd *d, struct unetd_client *except);

static void serve(struct unetd *d, struct unetd_client *c, const struct unetd_req_hdr *hdr,
		  const void *body, int netns_fd);

/* ---- Users and their request budget -------------------------------------- */


static bool user_has_budget(struct unetd_user *u);

/* The CPU time of the calling thread (the serving thread's, for a
 * request's charge). */
static uint64_t thread_cpu_ns(void)
{
	return unet_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* The record of accounting identity acct (unetd_acct_of: a uid, or the
 * owner of the subordinate range it is in), made with a full budget if
 * it has none.  Records outlive their user's connections until the
 * budget and the log limit have refilled (see user_put), and those that
 * have are swept here. */
static struct unetd_user *user_get(struct unetd *d, uint64_t acct)
{
	struct unetd_user *u, **pp;

	for (pp = &d->users; (u = *pp);) {
		if (u->acct == acct)
			return u;
		user_has_budget(u); /* refills */
		if (!u->nclients && u->tokens >= REQ_BURST && u->cpu_ns >= CPU_BURST &&
		    unetd_log_user_idle(&u->log)) {
			*pp = u->next;
			free(u);
			continue;
		}
		pp = &u->next;
	}
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->acct = acct;
	u->log.acct = acct;
	unetd_acct_name(acct, u->log.who, sizeof(u->log.who));
	u->tokens = REQ_BURST;
	u->cpu_ns = CPU_BURST;
	u->last_ns = unet_mono_ns();
	u->next = d->users;
	d->users = u;
	return u;
}

/* A connection of u's is gone.  The record stays (swept by user_get once
 * its budget has refilled): a user who hangs up and connects again must
 * not start with a fresh burst. */
static void user_put(struct unetd *d, struct unetd_user *u)
{
	(void)d;
	if (u)
		u->nclients--;
}

/* Whether u may make a request now (root always may). */
static bool user_has_budget(struct unetd_user *u)
{
	uint64_t t;

	if (!u->acct)
		return true;
	t = unet_mono_ns();
	u->tokens += (double)(t - u->last_ns) * (REQ_RATE / 1e9);
	if (u->tokens > REQ_BURST)
		u->tokens = REQ_BURST;
	u->cpu_ns += (double)(t - u->last_ns) * CPU_RATE;
	if (u->cpu_ns > CPU_BURST)
		u->cpu_ns = CPU_BURST;
	u->last_ns = t;
	return u->tokens >= 1.0 && u->cpu_ns > 0;
}

/* Stop reading c's requests until its user has budget again. */
static void throttle(struct unetd *d, struct unetd_client *c)
{
	if (c->throttled)
		return;
	/* Out of the epoll set, not merely asking for no events: epoll
	 * reports a hang-up whatever was asked, and a throttled client
	 * that hung up would wake the loop without end until its debt is
	 * paid, the daemon spinning at full CPU. */
	epoll_ctl(d->epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
	c->throttled = true;
	d->nthrottled++;
	d->req_throttled++;
}

unsigned int unetd_server_unthrottle(struct unetd *d)
{
	for (struct unetd_client *c = d->clients; c && d->nthrottled; c = c->next) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &c->src };

		if (!c->throttled || !user_has_budget(c->user))
			continue;
		/* Level-triggered: what waits in its socket is reported. */
		epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, c->fd, &ev);
		c->throttled = false;
		d->nthrottled--;
	}
	return d->nthrottled;
}

bool unetd_server_log_flush(struct unetd *d)
{
	bool pending = false;

	for (struct unetd_user *u = d->users; u; u = u->next)
		pending |= unetd_log_user_flush(&u->log, false);
	pending |= unetd_log_users_flush(false);
	return pending;
}

/* The connections of u's (its accounting identity's: every uid of a
 * subordinate range with its owner's). */
static unsigned int count_user(struct unetd *d, const struct unetd_user *u)
{
	unsigned int n = 0;

	for (struct unetd_client *k = d->clients; k; k = k->next)
		n += k->user == u;
	return n;
}

/* The primary group, then every supplementary group of the process that
 * connected fd, in *gids (malloc'd) and *n.  Returns 0, or -1 with errno. */
static int peer_groups(int fd, gid_t primary, uint32_t **gids, unsigned int *n)
{
	socklen_t len = 64 * sizeof(uint32_t);

	for (int tries = 0; tries < 4; tries++) {
		uint32_t *g = malloc(sizeof(uint32_t) + len);
		socklen_t got = len;

		if (!g)
			return -1;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g + 1, &got) == 0) {
			g[0] = primary;
			*gids = g;
			*n = 1 + got / sizeof(uint32_t);
			return 0;
		}
		free(g);
		/* ERANGE: the kernel said in got how much it needs (at
		 * most NGROUPS_MAX groups). */
		if (errno != ERANGE || got <= len || got > NGROUPS_MAX * sizeof(uint32_t))
			return -1;
		len = got;
	}
	errno = ERANGE;
	return -1;
}

/* Connections taken per turn of the main loop: a user who connects
 * without end (each refused past its cap, or accepted and hung up) must
 * not keep the loop from everyone else's requests and frames; the rest
 * wait in the backlog (the listener is level-triggered). */
#define ACCEPT_PER_TURN 32

void unetd_server_accept(struct unetd *d)
{
	for (int turn = 0; turn < ACCEPT_PER_TURN; turn++) {
		struct epoll_event ev;
		struct ucred cred;
		socklen_t len = sizeof(cred);
		struct unetd_client *c;
		int fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0)
			return;
		c = calloc(1, sizeof(*c));
		if (!c || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
			free(c);
			close(fd);
			continue;
		}
		c->fd = fd;
		c->uid = cred.uid;
		c->gid = cred.gid;
		c->pid = (uint32_t)cred.pid;
		c->netns_fd = -1;
		/* The user's record first: what is logged of a refused
		 * connection goes through its log limit too.  A uid of a
		 * subordinate range is its owner's. */
		c->user = user_get(d, unetd_acct_of(&d->subids, c->uid));
		if (!c->user) {
			close(fd);
			free(c);
			continue;
		}
		if (unetd_peer_open(fd, c)) {
			unetd_log_user(&c->user->log, c->uid, UNET_LOG_WARN,
				       "uid %u pid %u: no pidfd of the connecting process: refused",
				       c->uid, c->pid);
			close(fd);
			free(c);
			continue;
		}
		/* Connections cost the daemon a descriptor each: bounded per
		 * user, so one user cannot starve the others of them. */
		if (c->user->acct != 0 && count_user(d, c->user) >= UNETD_MAX_CONN_PER_UID) {
			/* Closed ones whose hang-up we have not seen yet do
			 * not count. */
			reap_closed(d, NULL);
			if (count_user(d, c->user) >= UNETD_MAX_CONN_PER_UID) {
				unetd_log_user(&c->user->log, c->uid, UNET_LOG_WARN,
					       "uid %u: more than %u connections: refused", c->uid,
					       UNETD_MAX_CONN_PER_UID);
				d->req_denied++;
				close(c->pidfd);
				close(fd);
				free(c);
				continue;
			}
		}
		/* The groups the client had when it connected, from the kernel
		 * too (not /proc/PID, which a pid reuse could lie about): its
		 * primary group first, then every supplementary one (a group
		 * rule matches either, as file permissions do).  A deny rule
		 * must see them all: a client whose groups cannot be read is
		 * refused, never served with fewer. */
		if (peer_groups(fd, cred.gid, &c->gids, &c->ngids)) {
			unetd_log_user(&c->user->log, c->uid, UNET_LOG_WARN,
				       "uid %u pid %u: groups not read (%s): refused", c->uid, c->pid,
				       strerror(errno));
			d->req_denied++;
			close(c->pidfd);
			close(fd);
			free(c);
			continue;
		}
		c->user->nclients++;
		/* A connection costs a request: connecting again and again
		 * is budgeted like asking again and again. */
		if (c->user->acct) {
			user_has_budget(c->user); /* refills first */
			c->user->tokens -= 1.0;
			if (c->user->tokens < -REQ_DEBT_MAX)
				c->user->tokens = -REQ_DEBT_MAX;
		}
		c->src.kind = UNETD_SRC_CLIENT;
		c->src.obj = c;
		ev.events = EPOLLIN;
		ev.data.ptr = &c->src;
		if (epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, fd, &ev)) {
			user_put(d, c->user);
			close(c->pidfd);
			free(c->gids);
			close(fd);
			free(c);
			continue;
		}
		c->next = d->clients;
		d->clients = c;
		unetd_log(UNET_LOG_DEBUG, "client uid %u pid %u connected", c->uid, c->pid);
	}
}

void unetd_client_free(struct unetd *d, struct unetd_client *c)
{
	for (struct unetd_client **pp = &d->clients; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	while (c->emuls)
		unetd_emul_free(d, c->emuls);
	while (c->directs)
		unetd_direct_free(d, c->directs);
	epoll_ctl(d->epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	unetd_log(UNET_LOG_DEBUG, "client uid %u pid %u gone", c->uid, c->pid);
	free(c->gids);
	c->gids = NULL;
	close(c->pidfd);
	if (c->throttled)
		d->nthrottled--;
	user_put(d, c->user);
	c->user = NULL;
	unetd_defer_free(d, &c->src);
}

/*
 * Free the clients whose connection has closed but whose hang-up event
 * the loop has not handled yet.  Called before a request that takes
 * something another client may just have given up (a tag, a quota), so
 * that a killed client's resources are free to the very next request, in
 * whatever order epoll reports the two.
 */
static void reap_closed(struct unetd *d, struct unetd_client *except)
{
	struct unetd_client *c = d->clients, *next;
	uint64_t t0 = thread_cpu_ns();

	for (; c; c = next) {
		struct pollfd p = { .fd = c->fd, .events = POLLRDHUP };

		next = c->next;
		if (c != except && poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)))
			unetd_client_free(d, c);
	}
	/* Other clients' teardown (a namespace's interface, ~100 ms):
	 * not the cost of the request that found them gone. */
	d->reap_cpu_ns += thread_cpu_ns() - t0;
}

/* ---- Replies ---------------------------------------------------------------- */

static void reply(struct unetd_client *c, const struct unetd_req_hdr *req, int err,
		  const char *msg, const void *body, uint32_t len, const int *fds, int nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 4)];
	struct unetd_rep_hdr h = {
		.version = UNETD_PROTO_VERSION,
		.type = req->type,
		.len = err ? 0 : len,
		.seq = req->seq,
		.err = err,
	};
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)body, err ? 0 : len } };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };

	if (msg)
		snprintf(h.msg, sizeof(h.msg), "%s", msg);
	if (!err && nfds > 0) {
		struct cmsghdr *cm;

		memset(cbuf, 0, sizeof(cbuf));
		m.msg_control = cbuf;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
	}
	/* A client that does not read its replies only hurts itself. */
	if (sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		unetd_log(UNET_LOG_DEBUG, "reply to pid %u: %s", c->pid, strerror(errno));
}

static struct unetd_emul *emul_of(struct unetd_client *c, uint32_t handle)
{
	for (struct unetd_emul *e = c->emuls; e; e = e->cnext)
		if (e->handle == handle)
			return e;
	return NULL;
}

static struct unetd_direct *direct_of(struct unetd_client *c, uint32_t handle)
{
	for (struct unetd_direct *g = c->directs; g; g = g->cnext)
		if (g->handle == handle)
			return g;
	return NULL;
}

/* A direct grant: the reply carries the segment and the bound socket. */
static void grant_direct(struct unetd *d, struct unetd_client *c, const struct unetd_req_hdr *h,
			 const struct unetd_ep_create *req, const struct unetd_grant *g)
{
	struct unetd_ep_created rep = { 0 };
	struct unetd_direct *x;
	char msg[96] = "";
	int err, fds[2];

	x = unetd_direct_create(d, c, req, g, &err, msg, sizeof(msg));
	if (!x) {
		unetd_log_user(&c->user->log, c->uid, UNET_LOG_INFO,
			       "uid %u pid %u: direct endpoint refused: %s", c->uid, c->pid, msg);
		reply(c, h, err, msg, NULL, 0, NULL, 0);
		return;
	}
	rep.ep = x->handle;
	rep.kind = UNETD_KIND_DIRECT;
	rep.region_size = (uint32_t)x->umem_size;
	rep.frame_size = x->frame_size;
	rep.nframes = (uint32_t)(x->umem_size / x->frame_size);
	rep.ifindex = x->iface->ifindex;
	rep.queue = x->queue;
	rep.ring_size = x->ring;
	rep.headroom = 2;
	rep.slot = x->slot;
	rep.zerocopy = x->zerocopy;
	rep.flags = x->multi_buffer ? UNETD_EP_MULTI_BUFFER : 0;
	snprintf(rep.reason, sizeof(rep.reason), "granted by unetd (%.44s)", g->rule);
	fds[0] = x->memfd;
	fds[1] = x->xsk_fd;
	reply(c, h, 0, NULL, &rep, sizeof(rep), fds, 2);
}

/* The client's grant on ifname; err and msg set when it has none. */
static int grant_for(struct unetd *d, struct unetd_client *c, const char *ifname,
		     struct unetd_grant *g, char *msg, size_t msglen)
{
	int err = unetd_policy_lookup(d->policy, c->uid, c->gids, c->ngids, ifname, g);

	if (err)
		return err;
	if (!g->allowed) {
		snprintf(msg, msglen, "uid %u may not use %s (policy: %s)", c->uid, ifname,
			 g->rule[0] ? g->rule : "no rule");
		d->req_denied++;
		return -EACCES;
	}
	return 0;
}

/* ---- Requests ------------------------------------------------------------------ */

static void do_ep_create(struct unetd *d, struct unetd_client *c, const struct unetd_req_hdr *h,
			 const struct unetd_ep_create *req, int netns_fd)
{
	struct unetd_ep_created rep = { 0 };
	struct unetd_grant g;
	struct unetd_emul *e;
	char msg[96] = "", ifname[16];
	int err, fds[3];

	memcpy(ifname, req->ifname, sizeof(ifname));
	ifname[sizeof(ifname) - 1] = '\0';
	reap_closed(d, c);
	c->netns_fd = -1;
	if (netns_fd >= 0) {
		err = unetd_netns_check(netns_fd, &c->netns);
		if (err) {
			snprintf(msg, sizeof(msg), "the descriptor sent is not a network namespace");
			goto out;
		}
		/* The daemon acts there as root: only where the client may
		 * act itself.  Holding a namespace's file proves nothing
		 * (/run/netns/ is readable by all). */
		if (c->netns.dev != d->own_netns.dev || c->netns.ino != d->own_netns.ino) {
			err = unetd_peer_may_admin_netns(c, netns_fd, msg, sizeof(msg));
			if (err) {
				d->req_denied++;
				goto out;
			}
		}
		c->netns_fd = netns_fd;
	}
	err = grant_for(d, c, ifname, &g, msg, sizeof(msg));
	if (err)
		goto out;
	if (req->kind > UNETD_KIND_EMULATED) {
		snprintf(msg, sizeof(msg), "unknown endpoint kind %u", req->kind);
		err = -EINVAL;
		goto out;
	}
	/* AUTO: direct when the policy trusts the user with it. */
	if (req->kind == UNETD_KIND_DIRECT || (req->kind == UNETD_KIND_AUTO && g.direct)) {
		if (!g.direct) {
			snprintf(msg, sizeof(msg), "policy grants uid %u no direct endpoints (%.40s)",
				 c->uid, g.rule);
			d->req_denied++;
			err = -EACCES;
			goto out;
		}
		grant_direct(d, c, h, req, &g);
		return;
	}
	if (!g.emulated) {
		snprintf(msg, sizeof(msg), "policy grants uid %u no emulated endpoints (%.40s)", c->uid,
			 g.rule);
		d->req_denied++;
		err = -EACCES;
		goto out;
	}
	e = unetd_emul_create(d, c, req, &g, &err, msg, sizeof(msg));
	if (!e)
		goto out;
	rep.ep = e->handle;
	rep.kind = UNETD_KIND_EMULATED;
	rep.region_size = (uint32_t)e->region_size;
	rep.mtu = e->iface->info.max_payload + UNET_HDR_LEN;
	rep.max_payload = unetd_emul_max_payload(e);
	rep.flags = unetd_emul_multi_buffer(e) ? UNETD_EP_MULTI_BUFFER | UNETD_EP_INET_PIECES : 0;
	rep.frame_size = e->frame_size;
	rep.nframes = e->nframes;
	rep.ifindex = e->iface->info.ifindex;
	memcpy(rep.mac, e->iface->info.mac, 6);
	snprintf(rep.reason, sizeof(rep.reason), "emulated by unetd (%.40s)", g.rule);
	fds[0] = e->memfd;
	fds[1] = e->kick_fd;
	fds[2] = e->notify_fd;
	reply(c, h, 0, NULL, &rep, sizeof(rep), fds, 3);
	return;
out:
	unetd_log_user(&c->user->log, c->uid, UNET_LOG_INFO, "uid %u pid %u: endpoint on %s refused: %s",
		       c->uid, c->pid, ifname, msg);
	reply(c, h, err, msg, NULL, 0, NULL, 0);
}

/* Channels uid holds now, over all its connections and endpoints; with
 * routable_only, its routable ones (each a kernel socket of ours). */
static uint32_t user_channels(struct unetd *d, uint32_t uid, bool routable_only)
{
	uint32_t n = 0;

	for (struct unetd_client *k = d->clients; k; k = k->next) {
		if (k->uid != uid)
			continue;
		for (struct unetd_emul *e = k->emuls; e; e = e->cnext)
			for (struct unetd_chan *ch = e->chans; ch; ch = ch->next)
				n += !routable_only || ch->routable;
		for (struct unetd_direct *x = k->directs; x; x = x->cnext)
			for (struct unetd_dchan *ch = x->chans; ch; ch = ch->next)
				n += !routable_only || ch->kfd >= 0;
	}
	return n;
}

/* What CH_OPEN and CH_OPEN_IPV4 check alike: the client's endpoint ep
 * (*e or *x), the policy's grant for its interface (*g), and the user's
 * channel quota.  0, or -errno with the reason in msg. */
static int ch_open_check(struct unetd *d, struct unetd_client *c, uint32_t ep,
			 struct unetd_emul **e, struct unetd_direct **x, struct unetd_grant *g,
			 char *msg, size_t msglen)
{
	int err;

	*e = emul_of(c, ep);
	*x = *e ? NULL : direct_of(c, ep);
	if (!*e && !*x) {
		snprintf(msg, msglen, "no such endpoint");
		return -ENOENT;
	}
	reap_closed(d, c);
	err = grant_for(d, c, *e ? (*e)->iface->ifname : (*x)->iface->ifname, g, msg, msglen);
	/* A user cannot take every tag of an interface from the others. */
	if (!err && g->max_channels != UNETD_POLICY_UNLIMITED32 &&
	    user_channels(d, c->uid, false) >= g->max_channels) {
		snprintf(msg, msglen, "channel quota of uid %u reached (%u, %.40s)", c->uid,
			 g->max_channels, g->rule);
		err = -EDQUOT;
	}
	return err;
}

static void do_ch_open(struct unetd *d, struct unetd_client *c, const struct unetd_req_hdr *h,
		       const struct unetd_ch_open *req)
{
	struct unetd_emul *e;
	struct unetd_direct *x;
	struct unetd_grant g;
	char msg[96] = "";
	int err;

	err = ch_open_check(d, c, req->ep, &e, &x, &g, msg, sizeof(msg));
	if (!err)
		err = e ? unetd_emul_chan_open(d, e, req, &g, msg, sizeof(msg))
			: unetd_direct_chan_open(x, req, &g, msg, sizeof(msg));
	if (err == -EACCES)
		d->req_denied++;
	reply(c, h, err, msg, NULL, 0, NULL, 0);
}

/* The reply to CH_OPEN_IPV4 or CH_OPEN_IPV6 (by o->w.v6) in *rep;
 * returns its length. */
static uint32_t chan_opened_rep(const struct unetd_chan_opened *o, void *rep)
{
	const struct unetd_chan_wire *w = &o->w;
	struct unetd_ch_opened_ipv4 r4;

	if (w->v6) {
		struct unetd_ch_opened_ipv6 r6;

		memset(&r6, 0, sizeof(r6));
		memcpy(r6.saddr, w->saddr6, 16);
		memcpy(r6.daddr, w->daddr6, 16);
		r6.sport = w->sport;
		r6.dport = w->dport;
		r6.peer_port = o->peer_port;
		memcpy(r6.dst_mac, w->dst_mac, 6);
		memcpy(r6.src_mac, o->src_mac, 6);
		r6.max_payload = (uint16_t)w->max_payload;
		memcpy(rep, &r6, sizeof(r6));
		return sizeof(r6);
	}
	memset(&r4, 0, sizeof(r4));
	r4.saddr = w->saddr;
	r4.daddr = w->daddr;
	r4.sport = w->sport;
	r4.dport = w->dport;
	r4.peer_port = o->peer_port;
	memcpy(r4.dst_mac, w->dst_mac, 6);
	memcpy(r4.src_mac, o->src_mac, 6);
	r4.max_payload = (uint16_t)w->max_payload;
	memcpy(rep, &r4, sizeof(r4));
	return sizeof(r4);
}

/* A routable channel, over IPv4 or IPv6 alike: the policy's tag and
 * quotas as for any channel, the rest decided by chan.c, never by the
 * request. */
static void do_ch_open_routable(struct unetd *d, struct unetd_client *c,
				const struct unetd_req_hdr *h, const struct unetd_chan_req *req)
{
	union {
		struct unetd_ch_opened_ipv4 v4;
		struct unetd_ch_opened_ipv6 v6;
	} rep;
	struct unetd_chan_opened o;
	uint32_t rlen = 0;
	struct unetd_emul *e;
	struct unetd_direct *x;
	struct unetd_grant g;
	char msg[96] = "";
	int err;

	memset(&rep, 0, sizeof(rep));
	memset(&o, 0, sizeof(o));
	err = ch_open_check(d, c, req->ep, &e, &x, &g, msg, sizeof(msg));
	if (!err && (req->tag == UNET_TAG_INVALID || req->peer_tag == UNET_TAG_INVALID)) {
		snprintf(msg, sizeof(msg), "tag 0 is reserved");
		err = -EINVAL;
	}
	if (!err && !unetd_grant_tag(&g, req->tag)) {
		snprintf(msg, sizeof(msg), "tag %u not granted (%.60s)", req->tag, g.rule);
		err = -EACCES;
	}
	if (!err && user_channels(d, c->uid, true) >= UNETD_MAX_ROUTABLE_PER_USER) {
		snprintf(msg, sizeof(msg), "user %u holds %u routable channels, the most one user may",
			 c->uid, UNETD_MAX_ROUTABLE_PER_USER);
		err = -EDQUOT;
	}
	if (!err)
		err = e ? unetd_emul_chan_open_routable(d, e, req, &g, &o, msg, sizeof(msg))
			: unetd_direct_chan_open_routable(d, x, req, &g, &o, msg, sizeof(msg));
	if (err == -EACCES)
		d->req_denied++;
	/* EAGAIN: the client asks again every few milliseconds while the
	 * next hop resolves, a line each would flood the log. */
	if (err)
		unetd_log_user(&c->user->log, c->uid, err == -EAGAIN ? UNET_LOG_DEBUG : UNET_LOG_INFO,
			       "uid %u pid %u: routable %s channel %u refused: %s", c->uid, c->pid,
			       req->v6 ? "IPv6" : "IPv4", req->tag, msg);
	else
		rlen = chan_opened_rep(&o, &rep);
	reply(c, h, err, msg, err ? NULL : &rep, rlen, NULL, 0);
}

/* UDP_OPEN and TCP_OPEN: the same endpoint look-up, grant and reply
 * around the protocol's own open (udp.c, tcp.c).  req is the request of
 * that protocol, ep its endpoint id. */
static void do_port_open(struct unetd *d, struct unetd_client *c, const struct unetd_req_hdr *h,
			 bool tcp, bool group, uint32_t ep, const void *req)
{
	struct unetd_emul *e = emul_of(c, ep);
	struct unetd_direct *x = e ? NULL : direct_of(c, ep);
	union {
		struct unetd_udp_opened udp;
		struct unetd_tcp_opened tcp;
	} rep;
	struct unetd_iface *f;
	struct unetd_grant g;
	char msg[96] = "";
	uint32_t slot;
	int err, nfd = -1;

	memset(&rep, 0, sizeof(rep));
	if (!e && !x) {
		reply(c, h, -ENOENT, "no such endpoint", NULL, 0, NULL, 0);
		return;
	}
	f = e ? e->iface : x->iface;
	slot = e ? f->info.id : x->slot;
	reap_closed(d, c);
	err = grant_for(d, c, f->ifname, &g, msg, sizeof(msg));
	if (!err && tcp)
		err = unetd_tcp_open(d, f, slot, c->uid, e ? &e->tcp : &x->tcp, req, &g, &rep.tcp, &nfd, msg,
				     sizeof(msg));
	else if (!err)
		err = unetd_udp_open(d, f, slot, c->uid, e ? &e->udp : &x->udp, req, &g, group,
				     &rep.udp, &nfd, msg, sizeof(msg));
	if (err == -EACCES)
		d->req_denied++;
	reply(c, h, err, msg, &rep, tcp ? sizeof(rep.tcp) : sizeof(rep.udp), &nfd, nfd >= 0 ? 1 : 0);
	if (nfd >= 0)
		close(nfd);
}

/* UDP_CLOSE and TCP_CLOSE: a port of one of c's own endpoints.  A direct
 * grant's slot is its own: the address it holds goes with its last port
 * of either protocol; an emulated endpoint's is the daemon's. */
static void do_port_close(struct unetd_client *c, const struct unetd_req_hdr *h, bool tcp,
			  uint32_t ep, uint32_t laddr, uint16_t lport)
{
	struct unetd_emul *e = emul_of(c, ep);
	struct unetd_direct *x = e ? NULL : direct_of(c, ep);
	int err = -ENOENT;

	if (e && tcp)
		err = unetd_tcp_close(e->iface, e->iface->info.id, &e->tcp, NULL, false, laddr, lport);
	else if (e)
		err = unetd_udp_close(e->iface, e->iface->info.id, &e->udp, NULL, false, laddr, lport);
	else if (x && tcp)
		err = unetd_tcp_close(x->iface, x->slot, &x->tcp, x->udp, true, laddr, lport);
	else if (x)
		err = unetd_udp_close(x->iface, x->slot, &x->udp, x->tcp, true, laddr, lport);
	reply(c, h, err, err ? (tcp ? "no such TCP port" : "no such UDP port") : NULL, NULL, 0, NULL, 0);
}

static void do_status(struct unetd *d, struct unetd_client *c, const struct unetd_req_hdr *h)
{
	struct unetd_status st = { 0 };
	char buf[UNETD_MAX_MSG - sizeof(struct unetd_rep_hdr)];
	size_t off = sizeof(st);

	/* Who uses the daemon, with which pid and on which interface, is
	 * root's to see: any other user sees its own clients and
	 * endpoints only. */
	bool all = c->uid == 0;

	/* Daemon-wide counters say what other users did: root's to see. */
	if (all) {
		st.req_bad = d->req_bad;
		st.req_denied = d->req_denied;
		st.req_throttled = (uint32_t)d->req_throttled;
	}

	for (struct unetd_client *k = d->clients; k; k = k->next)
		st.nclients += all || k->uid == c->uid;
	for (struct unetd_iface *f = d->ifaces; f; f = f->next) {
		struct unet_endpoint_stats real = { 0 };

		/* What the link sent the daemon: root's to see. */
		if (all && f->ep)
			unet_endpoint__stats(f->ep, &real);
		for (struct unetd_emul *e = f->emuls; e; e = e->next) {
			if (!all && e->client->uid != c->uid)
				continue;
			struct unetd_status_ep se = { .ep = e->handle,
						      .uid = e->client->uid,
						      .pid = e->client->pid,
						      .share = e->share,
						      .counters = e->counters,
						      .iface_rx_bad_pieces = real.rx_bad_pieces,
						      .iface_rx_no_jumbo_slot = real.rx_no_jumbo_slot };

			st.nendpoints++;
			if (off + sizeof(se) > sizeof(buf))
				continue; /* counted, not listed */
			snprintf(se.ifname, sizeof(se.ifname), "%s", f->ifname);
			for (struct unetd_chan *ch = e->chans; ch; ch = ch->next)
				se.nchannels++;
			memcpy(buf + off, &se, sizeof(se));
			off += sizeof(se);
			st.nlisted++;
		}
	}
	memcpy(buf, &st, sizeof(st));
	reply(c, h, 0, NULL, buf, (uint32_t)off, NULL, 0);
}

/* "May I?": who the client is and what the policy grants it on an
 * interface, through the lookup do_ep_create makes (grant_for's, without
 * counting a refusal: nothing was asked for). */
static void do_whoami(struct unetd *d, struct unetd_client *c, const struct unetd_req_hdr *h,
		      const struct unetd_whoami *req)
{
	struct unetd_whoami_rep rep = { .uid = c->uid, .gid = c->gid, .pid = c->pid,
					.grant_queues = d->grant_queues };
	struct unetd_grant g;
	char ifname[16];
	int err;

	/* Every group counts; the reply lists the first ones. */
	rep.ngids = c->ngids;
	memcpy(rep.gids, c->gids,
	       sizeof(rep.gids[0]) * (c->ngids < UNETD_WHOAMI_MAX_GIDS ? c->ngids : UNETD_WHOAMI_MAX_GIDS));
	memcpy(ifname, req->ifname, sizeof(ifname));
	ifname[sizeof(ifname) - 1] = '\0';
	if (ifname[0]) {
		err = unetd_policy_lookup(d->policy, c->uid, c->gids, c->ngids, ifname, &g);
		if (err) {
			reply(c, h, err, "invalid interface name", NULL, 0, NULL, 0);
			return;
		}
		rep.allowed = g.allowed;
		rep.kinds = (g.direct ? 1u << UNETD_KIND_DIRECT : 0) |
			    (g.emulated ? 1u << UNETD_KIND_EMULATED : 0);
		rep.max_endpoints = g.max_endpoints;
		rep.max_segment_bytes = g.max_segment_bytes;
		rep.share = g.share;
		unetd_grant_format_tags(&g, rep.tags, sizeof(rep.tags));
		unetd_grant_format_udp(&g, rep.udp, sizeof(rep.udp));
		snprintf(rep.rule, sizeof(rep.rule), "%s", g.rule);
	}
	for (struct unetd_client *k = d->clients; k; k = k->next)
		if (k->uid == c->uid) {
			rep.endpoints_held += k->nemuls;
			rep.segment_bytes_held += k->segment_bytes;
		}
	unetd_direct_lingering_charge(d, c->uid, &rep.endpoints_held, &rep.segment_bytes_held);
	reply(c, h, 0, NULL, &rep, sizeof(rep), NULL, 0);
}

bool unetd_server_serve(struct unetd *d, struct unetd_client *c)
{
	union {
		struct unetd_req_hdr h;
		uint8_t b[UNETD_MAX_MSG + 1];
	} m;
	/* Room for the most descriptors one message can carry (the
	 * kernel's SCM_MAX_FD): rights that do not fit would be discarded
	 * by the kernel in this thread, their last close() run here. */
	char cbuf[CMSG_SPACE(sizeof(int) * 253)];
	struct iovec iov = { m.b, sizeof(m.b) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	const void *body = m.b + sizeof(m.h);
	const char *why = NULL;
	int netns_fd = -1;
	ssize_t n;
	long want;

	if (!user_has_budget(c->user)) {
		/* Its request waits in its socket; a hang-up waits too (the
		 * connection goes when its requests are read again). */
		throttle(d, c);
		return true;
	}
	n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	if (n == 0)
		return false; /* closed: its endpoints go */
	/* The only descriptor a client may send is its network namespace,
	 * once, with EP_CREATE (checked there); any other is closed and the
	 * request is a protocol error. */
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (size_t i = 0; i < k; i++) {
				int f;

				memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
				if (netns_fd < 0 && k == 1)
					netns_fd = f;
				else {
					unetd_close_client_fd(f);
					why = "file descriptors in a request";
				}
			}
		}
	if (!why && netns_fd >= 0 &&
	    ((size_t)n < sizeof(m.h) || m.h.type != UNETD_REQ_EP_CREATE))
		why = "a file descriptor with a request that takes none";
	if (!why && (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		why = "request too long";
	else if (!why && (size_t)n < sizeof(m.h))
		why = "request shorter than its header";
	else if (!why && m.h.version != UNETD_PROTO_VERSION)
		why = "protocol version";
	else if (!why && (want = body_size(m.h.type)) < 0)
		why = "unknown request type";
	else if (!why && (m.h.len != (uint32_t)want || (size_t)n != sizeof(m.h) + (size_t)want))
		why = "body length";
	if (why) {
		d->req_bad++;
		unetd_log_user(&c->user->log, c->uid, UNET_LOG_WARN, "client uid %u pid %u dropped: %s",
			       c->uid, c->pid, why);
		unetd_close_client_fd(netns_fd);
		return false;
	}

	double cost = m.h.type == UNETD_REQ_EP_CREATE ? EP_CREATE_COST : 1.0;
	uint64_t t0 = thread_cpu_ns(), reap0 = d->reap_cpu_ns;

	if (c->user->acct)
		c->user->tokens -= cost;
	why = reserved_set(&m.h, body);
	if (why) {
		/* Well-formed, but of a protocol we do not speak: refused,
		 * the connection stays (its other requests are ours). */
		char msg[96];

		snprintf(msg, sizeof(msg), "request %u: %s", m.h.type, why);
		unetd_log_user(&c->user->log, c->uid, UNET_LOG_INFO, "uid %u pid %u: %s: refused",
			       c->uid, c->pid, msg);
		reply(c, &m.h, -EINVAL, msg, NULL, 0, NULL, 0);
		unetd_close_client_fd(netns_fd);
		return true;
	}
	serve(d, c, &m.h, body, netns_fd);
	if (c->user->acct) {
		double took = (double)(thread_cpu_ns() - t0) - (double)(d->reap_cpu_ns - reap0);

		c->user->cpu_ns -= took;
		if (took > 1e6) /* an endpoint in a namespace of its own: ~100 ms */
			unetd_log(UNET_LOG_DEBUG, "uid %u: request %u took %.1f ms of CPU, %.1f ms left",
				  c->uid, m.h.type, took / 1e6, c->user->cpu_ns / 1e6);
		if (c->user->cpu_ns < -CPU_DEBT_MAX)
			c->user->cpu_ns = -CPU_DEBT_MAX;
	}
	return true;
}

/* Answer one well-formed request of c's (hdr, and body of the size its
 * type has; netns_fd: the namespace EP_CREATE may carry, or -1). */
static void serve(struct unetd *d, struct unetd_client *c, const struct unetd_req_hdr *hdr,
		  const void *body, int netns_fd)
{
	switch (hdr->type) {
	case UNETD_REQ_HELLO: {
		struct unetd_hello rep = { .version = UNETD_PROTO_VERSION };

		reply(c, hdr, 0, NULL, &rep, sizeof(rep), NULL, 0);
		break;
	}
	case UNETD_REQ_EP_CREATE: {
		struct unetd_ep_create req;

		memcpy(&req, body, sizeof(req));
		do_ep_create(d, c, hdr, &req, netns_fd);
		c->netns_fd = -1;
		unetd_close_client_fd(netns_fd);
		break;
	}
	case UNETD_REQ_EP_DESTROY: {
		struct unetd_ep_ref req;
		struct unetd_emul *e;

		struct unetd_direct *x;

		memcpy(&req, body, sizeof(req));
		e = emul_of(c, req.ep);
		x = e ? NULL : direct_of(c, req.ep);
		if (e)
			unetd_emul_free(d, e);
		else if (x)
			unetd_direct_free(d, x);
		reply(c, hdr, e || x ? 0 : -ENOENT, e || x ? NULL : "no such endpoint", NULL, 0, NULL,
		      0);
		break;
	}
	case UNETD_REQ_CH_OPEN: {
		struct unetd_ch_open req;

		memcpy(&req, body, sizeof(req));
		do_ch_open(d, c, hdr, &req);
		break;
	}
	case UNETD_REQ_CH_CLOSE: {
		struct unetd_ch_ref req;
		struct unetd_emul *e;
		int err = -ENOENT;

		struct unetd_direct *x;

		memcpy(&req, body, sizeof(req));
		e = emul_of(c, req.ep);
		x = e ? NULL : direct_of(c, req.ep);
		if (e)
			err = unetd_emul_chan_close(d, e, req.tag);
		else if (x)
			err = unetd_direct_chan_close(x, req.tag);
		reply(c, hdr, err, err ? "no such channel" : NULL, NULL, 0, NULL, 0);
		break;
	}
	case UNETD_REQ_STATUS:
		do_status(d, c, hdr);
		break;
	case UNETD_REQ_WHOAMI: {
		struct unetd_whoami req;

		memcpy(&req, body, sizeof(req));
		do_whoami(d, c, hdr, &req);
		break;
	}
	case UNETD_REQ_UDP_OPEN:
	case UNETD_REQ_UDP_OPEN_GROUP: {
		struct unetd_udp_open req;

		memcpy(&req, body, sizeof(req));
		do_port_open(d, c, hdr, false, hdr->type == UNETD_REQ_UDP_OPEN_GROUP, req.ep, &req);
		break;
	}
	case UNETD_REQ_UDP_CLOSE: {
		struct unetd_udp_close req;

		memcpy(&req, body, sizeof(req));
		do_port_close(c, hdr, false, req.ep, req.laddr, req.lport);
		break;
	}
	case UNETD_REQ_TCP_OPEN: {
		struct unetd_tcp_open req;

		memcpy(&req, body, sizeof(req));
		do_port_open(d, c, hdr, true, false, req.ep, &req);
		break;
	}
	case UNETD_REQ_TCP_CLOSE: {
		struct unetd_tcp_close req;

		memcpy(&req, body, sizeof(req));
		do_port_close(c, hdr, true, req.ep, req.laddr, req.lport);
		break;
	}
	case UNETD_REQ_CH_OPEN_IPV4: {
		struct unetd_ch_open_ipv4 req4;
		struct unetd_chan_req req = { 0 };

		memcpy(&req4, body, sizeof(req4));
		req.ep = req4.ep;
		req.peer_addr = req4.peer_addr;
		req.tag = req4.tag;
		req.peer_tag = req4.peer_tag;
		req.peer_port = req4.peer_port;
		do_ch_open_routable(d, c, hdr, &req);
		break;
	}
	case UNETD_REQ_CH_OPEN_IPV6: {
		struct unetd_ch_open_ipv6 req6;
		struct unetd_chan_req req = { .v6 = true };

		memcpy(&req6, body, sizeof(req6));
		req.ep = req6.ep;
		memcpy(req.peer_addr6, req6.peer_addr, 16);
		req.tag = req6.tag;
		req.peer_tag = req6.peer_tag;
		req.peer_port = req6.peer_port;
		do_ch_open_routable(d, c, hdr, &req);
		break;
	}
	}
}
