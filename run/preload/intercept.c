/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * intercept.c - the libc calls libunet-preload.so interposes, and the
 * decision, per AF_INET socket, whether it runs on U-Net (docs/unet-run.md).
 *
 * socket() always makes the kernel socket first: its descriptor is the
 * program's, and the kernel socket is the fallback.  An AF_INET datagram
 * or stream socket is a candidate until its first bind, connect, listen
 * or addressed send says where its traffic goes; the decision is logged
 * and a socket left to the kernel leaves the table, so every later call
 * on it costs one table lookup.  Every other socket never enters it.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "exec.h"
#include "fdtab.h"
#include "forklisten.h"
#include "forkrelay.h"
#include "log.h"
#include "publish.h"
#include "route.h"
#include "stack.h"
#include "tcp.h"
#include "udp.h"

#define EXPORT __attribute__((visibility("default")))

/* An AF_INET socket whose fate is not decided yet; shared (counted) by
 * the descriptors dup() made of it. */
struct run_sock {
	atomic_uint refs;
	int type; /* SOCK_DGRAM or SOCK_STREAM */
	/* What the kernel socket would keep, tracked from socket(),
	 * fcntl, ioctl and setsockopt so U-Net's socket can follow it. */
	bool nonblock;
	int rcvtimeo_ms; /* -1: none */
	struct run_udp *udp; /* on U-Net (UDP) */
	struct run_tcp *tcp; /* on U-Net (TCP); both NULL: not decided yet */
	int sndtimeo_ms;     /* -1: none */
	/* TCP: bind's address, kept until listen or connect decides (the
	 * kernel socket stays unbound: the layer binds its own). */
	bool bound;
	struct sockaddr_in bound_addr;
	int pub_slot; /* its slot in the process's socket file, -1: none */
	/* UDP, not decided yet: the groups the kernel socket joined (to
	 * join on U-Net too if it goes there), and whether it asked for a
	 * membership U-Net does not serve (then it stays the kernel's). */
	uint32_t groups[RUN_UDP_GROUPS];
	bool mcast_kernel;
	/* In a child of fork: a TCP connection of the parent's, which the
	 * parent relays (forkrelay.h); the descriptor is the child's end of
	 * a kernel socketpair, and these are the connection's addresses. */
	bool relayed;
	struct sockaddr_in relay_local, relay_peer;
	/* Relayed, and the child's copy of a listener of the parent's: the
	 * descriptor is the child's end of its channel (forklisten.h). */
	bool relay_listener;
	/* In a parent: the relays carrying this connection for children
	 * (each holds one of refs). */
	atomic_uint relays;
	/* Its last reference gone inside epoll's look: the look's list of
	 * sockets to destroy once its locks are let go (nobody else can
	 * reach the socket by then, so the look may use the field). */
	struct run_sock *destroy_next;
};

static inline bool on_unet(const struct run_sock *s)
{
	return s->udp || s->tcp;
}

static inline struct run_ep *sock_ep(const struct run_sock *s)
{
	return s->udp ? s->udp->e : s->tcp->e;
}

static struct fdtab table = FDTAB_INIT;
static struct run_config cfg;

static int (*real_socket)(int, int, int);
static int (*real_bind)(int, const struct sockaddr *, socklen_t);
static int (*real_connect)(int, const struct sockaddr *, socklen_t);
static int (*real_listen)(int, int);
static ssize_t (*real_sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
static ssize_t (*real_sendmsg)(int, const struct msghdr *, int);
static int (*real_socketpair)(int, int, int, int[2]);
static int (*real_accept)(int, struct sockaddr *, socklen_t *);
static int (*real_accept4)(int, struct sockaddr *, socklen_t *, int);
static int (*real_close)(int);
static ssize_t (*real_send)(int, const void *, size_t, int);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static ssize_t (*real_recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
static ssize_t (*real_recv)(int, void *, size_t, int);
static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_readv)(int, const struct iovec *, int);
static ssize_t (*real_recvmsg)(int, struct msghdr *, int);
static int (*real_poll)(struct pollfd *, nfds_t, int);
static int (*real_ppoll)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
static int (*real_select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
static int (*real_pselect)(int, fd_set *, fd_set *, fd_set *, const struct timespec *,
			   const sigset_t *);
static int (*real_sendmmsg)(int, struct mmsghdr *, unsigned int, int);
static int (*real_recvmmsg)(int, struct mmsghdr *, unsigned int, int, struct timespec *);
static int (*real_epoll_ctl)(int, int, int, struct epoll_event *);
static int (*real_epoll_wait)(int, struct epoll_event *, int, int);
static int (*real_epoll_pwait)(int, struct epoll_event *, int, int, const sigset_t *);
static int (*real_epoll_pwait2)(int, struct epoll_event *, int, const struct timespec *,
				const sigset_t *);
static int (*real_ioctl)(int, unsigned long, ...);
static int (*real_setsockopt)(int, int, int, const void *, socklen_t);
static int (*real_getsockopt)(int, int, int, void *, socklen_t *);
static int (*real_getsockname)(int, struct sockaddr *, socklen_t *);
static int (*real_getpeername)(int, struct sockaddr *, socklen_t *);
static int (*real_shutdown)(int, int);
static int (*real_dup)(int);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);
static int (*real_fcntl)(int, int, ...);
static int (*real_fcntl64)(int, int, ...);
static ssize_t (*real_sendfile)(int, int, off_t *, size_t);

/*
 * Fork: each U-Net TCP connection and listener (up to
 * RELAY_MAX_PER_FORK) is carried for the child over a socketpair the
 * parent relays (forkrelay.h; a listener's is its channel,
 * forklisten.h).  prepare makes the pairs and takes a reference on each
 * socket for the relay; the parent's handler hands them to the relay;
 * the child's puts its end on the socket's descriptor.
 */
struct carry {
	int fd;
	int pair[2]; /* [0] the parent's end, [1] the child's */
	int fdflags, flflags;
	struct run_sock *s;
	bool listener;
};

static struct carry carried[RELAY_MAX_PER_FORK];
static int ncarried;
/* carried[] is one fork's, from prepare to the parent's or child's
 * handler: two threads forking at once take turns.  And no handler runs
 * on the forking thread meanwhile (signals deferred), so none can fork
 * into the middle of it. */
static pthread_mutex_t carry_lock = PTHREAD_MUTEX_INITIALIZER;

static void sock_unref(struct run_sock *s);
static int tab_set(int fd, void *v, void **old);

static bool relay_parent_holds(void *sock)
{
	struct run_sock *s = sock;

	/* References beyond the relays' (this child's and other
	 * children's): a descriptor (or a call in progress) of the
	 * parent's. */
	return atomic_load(&s->refs) > atomic_load(&s->relays);
}

static void relay_release(void *sock)
{
	struct run_sock *s = sock;

	atomic_fetch_sub(&s->relays, 1);
	sock_unref(s);
}

static const struct relay_ops relay_ops = {
	.parent_holds = relay_parent_holds,
	.release = relay_release,
};

static void carry_prepare(void)
{
	bool too_many = false;
	int n = 0;
	unsigned int listeners = 0, no_room = 0;

	sig_defer_enter();
	pthread_mutex_lock(&carry_lock);
	ncarried = 0;
	if (sig_in_handler()) {
		/* fork from a signal handler: the relay's set-up allocates,
		 * which the code the handler interrupted may be doing; the
		 * child's copies refuse (EOPNOTSUPP), as without a relay. */
		relay_fork_prepare();
		return;
	}
	run_lock(&table.lock);
	for (unsigned int pg = 0; pg < FDTAB_PAGES && !too_many; pg++) {
		struct fdtab_page *p = atomic_load_explicit(&table.page[pg], memory_order_relaxed);

		for (unsigned int i = 0; p && i < FDTAB_PAGE_SIZE; i++) {
			struct run_sock *s = atomic_load_explicit(&p->slot[i], memory_order_relaxed);

			if (!s || !s->tcp || !s->tcp->e->ep)
				continue;
			if (n == RELAY_MAX_PER_FORK) {
				too_many = true;
				break;
			}
			atomic_fetch_add(&s->refs, 1);
			carried[n].s = s;
			carried[n].listener = s->tcp->listener;
			carried[n++].fd = (int)(pg * FDTAB_PAGE_SIZE + i);
		}
	}
	run_unlock(&table.lock);
	if (too_many)
		run_log("fork with more than %d U-Net connections and listeners: none is "
			"carried for the child",
			RELAY_MAX_PER_FORK);
	for (int i = 0; i < n; i++) {
		struct carry *c = &carried[i];
		bool served = !too_many;

		if (served && c->listener && !relay_listen_room(listeners)) {
			served = false;
			no_room++;
		}
		if (!served || real_socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, c->pair) < 0) {
			sock_unref(c->s);
			continue;
		}
		listeners += c->listener;
		relay_refuse_rights(c->pair[0]);
		c->fdflags = real_fcntl(c->fd, F_GETFD);
		c->flflags = real_fcntl(c->fd, F_GETFL);
		carried[ncarried++] = *c;
	}
	if (no_room)
		run_log("fork: %u U-Net listener%s not served for the child: %d children's copies "
			"are served already, the most (the child's copies refuse: EOPNOTSUPP)",
			no_room, no_room == 1 ? "" : "s", RELAY_MAX_CHANNELS);
	relay_fork_prepare();
}

static void carry_parent(void)
{
	relay_fork_parent();
	for (int i = 0; i < ncarried; i++) {
		struct carry *c = &carried[i];

		real_close(c->pair[1]);
		atomic_fetch_add(&c->s->relays, 1);
		if ((c->listener ? relay_listen_add(c->pair[0], c->fd, c->s, c->s->tcp)
				 : relay_add(c->pair[0], c->s, c->s->tcp)) < 0) {
			run_log("fd %d: no relay for the child: %s", c->fd, strerror(errno));
			real_close(c->pair[0]);
			atomic_fetch_sub(&c->s->relays, 1);
			sock_unref(c->s);
		}
	}
	ncarried = 0;
	pthread_mutex_unlock(&carry_lock);
	sig_defer_leave();
}

static void carry_child(void)
{
	/* Taken by prepare on the thread that forked, which the child's one
	 * thread is: released as in the parent (a plain mutex records no
	 * owner).  A fresh mutex written over it ThreadSanitizer counted
	 * held, reporting a double lock at the child's next fork from
	 * another thread (relay_child_forget). */
	pthread_mutex_unlock(&carry_lock);
	relay_child_forget();
	fl_child_forked();
	for (int i = 0; i < ncarried; i++) {
		struct carry *c = &carried[i];
		struct run_sock *r = calloc(1, sizeof(*r));
		void *old = NULL;

		real_close(c->pair[0]);
		if (!r || real_dup3(c->pair[1], c->fd,
				    (c->fdflags >= 0 && (c->fdflags & FD_CLOEXEC)) ? O_CLOEXEC : 0) < 0) {
			/* The inherited copy stays, refusing as without a relay. */
			free(r);
			real_close(c->pair[1]);
			continue;
		}
		real_close(c->pair[1]);
		if (c->flflags >= 0 && (c->flflags & O_NONBLOCK))
			real_fcntl(c->fd, F_SETFL, O_NONBLOCK);
		atomic_init(&r->refs, 1);
		r->type = SOCK_STREAM;
		r->pub_slot = -1;
		r->rcvtimeo_ms = r->sndtimeo_ms = -1;
		r->relayed = true;
		r->relay_listener = c->listener;
		r->relay_local = c->s->tcp->local;
		if (!c->listener)
			r->relay_peer = c->s->tcp->peer;
		/* The inherited state is the parent's (its copy here is
		 * dropped, never closed: closing would act on the parent's
		 * connection). */
		if (tab_set(c->fd, r, &old) < 0)
			free(r);
		if (c->listener) {
			fl_child_add(c->fd);
			run_log("fd %d tcp listener (forked): the parent's; connections handed over "
				"by the parent's relay",
				c->fd);
		} else {
			run_log("fd %d tcp %s: the parent's connection, relayed for this child", c->fd,
				"(forked)");
		}
	}
	ncarried = 0;
	sig_defer_leave(); /* prepare's */
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void *next(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f) {
		/* Without libc's own function there is nothing to pass through to. */
		static const char msg[] = "libunet-preload: libc function missing: ";

		/* Raw system calls: write() is one of ours. */
		syscall(SYS_write, 2, msg, sizeof(msg) - 1);
		syscall(SYS_write, 2, name, strlen(name));
		syscall(SYS_write, 2, "\n", 1);
		abort();
	}
	return f;
}

static void init(void)
{
	char err[256];

	real_socket = next("socket");
	real_bind = next("bind");
	real_connect = next("connect");
	real_listen = next("listen");
	real_sendto = next("sendto");
	real_sendmsg = next("sendmsg");
	real_socketpair = next("socketpair");
	real_accept = next("accept");
	real_accept4 = next("accept4");
	real_close = next("close");
	real_send = next("send");
	real_write = next("write");
	real_writev = next("writev");
	real_recvfrom = next("recvfrom");
	real_recv = next("recv");
	real_read = next("read");
	real_readv = next("readv");
	real_recvmsg = next("recvmsg");
	real_poll = next("poll");
	real_ppoll = next("ppoll");
	real_select = next("select");
	real_pselect = next("pselect");
	real_sendmmsg = next("sendmmsg");
	real_recvmmsg = next("recvmmsg");
	real_epoll_ctl = next("epoll_ctl");
	real_epoll_wait = next("epoll_wait");
	real_epoll_pwait = next("epoll_pwait");
	real_epoll_pwait2 = next("epoll_pwait2");
	real_ioctl = next("ioctl");
	real_setsockopt = next("setsockopt");
	real_getsockopt = next("getsockopt");
	real_getsockname = next("getsockname");
	real_getpeername = next("getpeername");
	real_shutdown = next("shutdown");
	real_dup = next("dup");
	real_dup2 = next("dup2");
	real_dup3 = next("dup3");
	real_fcntl = next("fcntl");
	real_sendfile = next("sendfile");
	/* fcntl64 is what programs built with 64-bit off_t on 32-bit
	 * systems call; glibc has it everywhere since 2.28. */
	real_fcntl64 = dlsym(RTLD_NEXT, "fcntl64");
	if (!real_fcntl64)
		real_fcntl64 = real_fcntl;
	stack_atfork();
	/* After stack_atfork: prepare runs before the stack's (so without
	 * its lock), the child's handler after the stack's. */
	relay_init(&relay_ops);
	pthread_atfork(carry_prepare, carry_parent, carry_child);
	run_config_parse(&cfg, getenv("UNET_RUN_IFACE"), getenv("UNET_RUN_LOG"),
			 getenv("UNET_RUN_SPIN_US"), getenv("UNET_RUN_BATCH_SENDS"),
			 getenv("UNET_PIN_ROOT"), err, sizeof(err));
	run_log_set(cfg.log);
	if (err[0])
		run_log("%s", err);
}

/* Every interposed function starts here: the first call of any of them
 * (possibly before our constructor, from another library's) sets up. */
static inline void ready(void)
{
	pthread_once(&init_once, init);
}

__attribute__((constructor)) static void preload_start(void)
{
	ready();
}

static int64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* s went onto U-Net as fd: list it for unetctl (publish.h). */
static void publish(int fd, struct run_sock *s)
{
	int slot;

	if (s->udp)
		slot = pub_add(fd, RUN_SOCK_UDP,
				      s->udp->peer_addr ? RUN_SOCK_CONNECTED : RUN_SOCK_BOUND,
				      s->udp->local_addr, htons(s->udp->local_port),
				      s->udp->peer_addr, htons(s->udp->peer_port));
	else
		slot = pub_add(fd, RUN_SOCK_TCP,
				      s->tcp->listener ? RUN_SOCK_LISTENING : RUN_SOCK_CONNECTED,
				      s->tcp->local.sin_addr.s_addr, s->tcp->local.sin_port,
				      s->tcp->peer.sin_addr.s_addr, s->tcp->peer.sin_port);
	/* The layer's send and receive publish the counters as they move,
	 * under the stack's lock (udp.h, tcp.h). */
	stack_enter();
	s->pub_slot = slot;
	if (s->udp)
		s->udp->pub_slot = slot;
	else
		s->tcp->pub_slot = slot;
	stack_leave();
}

static void sock_destroy(struct run_sock *s);

static void sock_unref(struct run_sock *s)
{
	if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	sock_destroy(s);
}

/* The last reference is gone: the socket closes (a TCP one may linger,
 * SO_LINGER: never under the library's locks, see unet_epoll_ready). */
static void sock_destroy(struct run_sock *s)
{
	pub_remove(s->pub_slot);
	if (s->udp) {
		run_log("udp socket closed: %llu datagrams received, %llu sent over U-Net, %llu "
			"dropped (its queue full)",
			(unsigned long long)s->udp->rx, (unsigned long long)s->udp->tx,
			(unsigned long long)s->udp->drop_full);
		run_udp_close(s->udp);
	}
	if (s->tcp) {
		if (!s->tcp->listener)
			run_log("tcp socket closed: %llu bytes received, %llu sent over U-Net",
				(unsigned long long)s->tcp->rx_bytes,
				(unsigned long long)s->tcp->tx_bytes);
		run_tcp_close(s->tcp);
	}
	free(s);
}

/* The table's stores take its lock: with signals deferred (signals.h),
 * so a handler's socket or close never waits for a lock its own thread
 * holds. */
static int tab_set(int fd, void *v, void **old)
{
	int r;

	sig_defer_enter();
	r = fdtab_set(&table, fd, v, old);
	sig_defer_leave();
	return r;
}

static void *tab_take(int fd)
{
	void *v;

	sig_defer_enter();
	v = fdtab_take(&table, fd);
	sig_defer_leave();
	return v;
}

/* Drop whatever the table holds for fd (the descriptor is gone or is
 * being reused by the kernel). */
static void forget(int fd)
{
	sock_unref(tab_take(fd));
}

/* fd became a copy of the socket s (dup and friends). */
static void share(int fd, struct run_sock *s)
{
	void *old = NULL;

	atomic_fetch_add(&s->refs, 1);
	if (tab_set(fd, s, &old) < 0) {
		/* No memory for the table: the copy is the kernel's alone. */
		sock_unref(s);
		run_log("fd %d: no memory to track this copy of a socket: kernel", fd);
	}
	sock_unref(old);
}

static const char *proto_name(const struct run_sock *s)
{
	return s->type == SOCK_DGRAM ? "udp" : "tcp";
}

static void format_addr(const struct sockaddr *sa, socklen_t len, char *buf, size_t n)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;
	char ip[INET_ADDRSTRLEN];

	if (!sa)
		snprintf(buf, n, "(none)");
	else if (len < sizeof(*sin) || sa->sa_family != AF_INET)
		snprintf(buf, n, "(family %d)", len >= sizeof(sa_family_t) ? sa->sa_family : -1);
	else
		snprintf(buf, n, "%s:%u", inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip)),
			 ntohs(sin->sin_port));
}

/* Where socket s's traffic goes for op on addr: returns true with the
 * U-Net interface in ifname, or false with why it is the kernel's in
 * why.  local: addr is the socket's own (bind, listen), else a peer's. */
static bool route_choice(const struct run_sock *s, bool local, const struct sockaddr *addr,
			 socklen_t len, char ifname[IF_NAMESIZE], char *why, size_t n)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;
	uint32_t ip, src;
	int err;

	(void)s; /* UDP and TCP are chosen alike */
	if (!addr) {
		ip = htonl(INADDR_ANY);
	} else if (len < sizeof(*sin) || addr->sa_family != AF_INET) {
		snprintf(why, n, "the address is not IPv4");
		return false;
	} else {
		ip = sin->sin_addr.s_addr;
	}
	if (local && ip == htonl(INADDR_ANY)) {
		if (!run_config_any(&cfg, ifname)) {
			snprintf(why, n, "wildcard address, and no interface named or attached");
			return false;
		}
	} else {
		if (route_is_loopback(ip)) {
			snprintf(why, n, "loopback");
			return false;
		}
		err = local ? route_local(ip, ifname) : route_lookup(ip, &src, ifname);
		if (err) {
			snprintf(why, n, "%s: %s",
				 local ? "no interface holds the address" : "no route",
				 strerror(-err));
			return false;
		}
		if (strcmp(ifname, "lo") == 0) {
			snprintf(why, n, "loopback (the address is local)");
			return false;
		}
		if (!run_config_serves(&cfg, ifname)) {
			if (cfg.ifaces[0])
				snprintf(why, n, "by %s, not a U-Net interface (UNET_RUN_IFACE=%.160s)",
					 ifname, cfg.ifaces);
			else
				snprintf(why, n, "by %s, which has no XDP program attached", ifname);
			return false;
		}
	}
	return true;
}

/* Whether the program set SO_REUSEPORT on fd's kernel socket. */
static bool reuseport_set(int fd)
{
	int on = 0;
	socklen_t n = sizeof(on);

	return real_getsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, &n) == 0 && on;
}

/* Put UDP socket fd on U-Net's interface ifname.  The kernel socket is
 * bound already (by the program's bind or connect, or by us): its port
 * is the U-Net socket's, so no kernel socket can take it meanwhile.
 * peer: the connected peer or NULL.  Returns true, or false with why. */
static bool udp_accelerate(int fd, struct run_sock *s, const char *ifname,
			   const struct sockaddr_in *peer, char *why, size_t n)
{
	struct sockaddr_in me;
	socklen_t len = sizeof(me);
	const char *ewhy;
	struct run_ep *e;
	uint32_t local;

	if (s->mcast_kernel) {
		snprintf(why, n, "a multicast membership U-Net does not serve (source-specific, "
				 "or more than %d groups)", RUN_UDP_GROUPS);
		return false;
	}
	if (getsockname(fd, (struct sockaddr *)&me, &len) < 0 || me.sin_family != AF_INET) {
		snprintf(why, n, "getsockname: %s", strerror(errno));
		return false;
	}
	stack_enter();
	e = stack_ep(ifname, cfg.pin_root, cfg.spin_us, &ewhy);
	stack_leave();
	if (!e) {
		snprintf(why, n, "%s", ewhy);
		return false;
	}
	local = me.sin_addr.s_addr == htonl(INADDR_ANY) ? e->addr : me.sin_addr.s_addr;
	/* With SO_REUSEPORT the port is a group's: another process's
	 * socket with it (the same user's, as the kernel let it bind) joins
	 * the group, and the XDP program spreads the sources over the
	 * processes (docs/unet-run.md). */
	s->udp = run_udp_open(e, local, ntohs(me.sin_port), peer ? peer->sin_addr.s_addr : 0,
			      peer ? ntohs(peer->sin_port) : 0, reuseport_set(fd), s->nonblock,
			      cfg.spin_us);
	/* The kernel let this socket bind a port another socket holds: with
	 * SO_REUSEPORT on both, of the same user.  The other is this
	 * process's on U-Net: share its port (its endpoint is in the group
	 * once). */
	if (!s->udp && errno == EADDRINUSE && !peer && reuseport_set(fd))
		s->udp = run_udp_share(e, local, ntohs(me.sin_port), s->nonblock, cfg.spin_us);
	if (s->udp && !peer && reuseport_set(fd))
		s->udp->reuseport = true;
	if (!s->udp) {
		snprintf(why, n, "the UDP layer refused %s:%u: %s", ifname, ntohs(me.sin_port),
			 strerror(errno));
		return false;
	}
	s->udp->rcvtimeo_ms = s->rcvtimeo_ms;
	for (int g = 0; g < RUN_UDP_GROUPS; g++) {
		char a[INET_ADDRSTRLEN];

		if (!s->groups[g])
			continue;
		inet_ntop(AF_INET, &s->groups[g], a, sizeof(a));
		if (run_udp_join(s->udp, s->groups[g]) < 0)
			run_log("fd %d udp group %s joined before bind: not on U-Net: %s", fd, a,
				strerror(errno));
		else
			run_log("fd %d udp join %s (before bind): U-Net", fd, a);
	}
	publish(fd, s);
	snprintf(why, n, "%s, port %u", e->why, ntohs(me.sin_port));
	return true;
}

static void reg_decided(int fd, bool to_unet);

/* The first call that says where fd's traffic goes: decide and log.
 * bound: the kernel socket has its address now (after the program's
 * bind or connect succeeded); else (an addressed send) we bind it to
 * the wildcard address and a port of the kernel's choice first.
 * Returns whether fd is on U-Net now. */
static bool decide(int fd, struct run_sock *s, const char *op, bool local,
		   const struct sockaddr *addr, socklen_t len, bool bound, bool connecting)
{
	char a[64], why[256], ifname[IF_NAMESIZE];
	bool served;

	if (s->relayed)
		return false; /* the parent's connection: nothing to decide */
	served = route_choice(s, local, addr, len, ifname, why, sizeof(why));

	if (served && !bound) {
		struct sockaddr_in any = { .sin_family = AF_INET };

		if (real_bind(fd, (struct sockaddr *)&any, sizeof(any)) < 0) {
			snprintf(why, sizeof(why), "binding a port: %s", strerror(errno));
			served = false;
		}
	}
	if (served && s->type != SOCK_DGRAM) {
		snprintf(why, sizeof(why), "by %s: TCP is decided at listen or connect", ifname);
		served = false;
	}
	if (served)
		served = udp_accelerate(fd, s, ifname,
					connecting ? (const struct sockaddr_in *)addr : NULL, why,
					sizeof(why));
	if (run_log_on()) {
		format_addr(addr, len, a, sizeof(a));
		run_log("fd %d %s %s %s: %s (%s)", fd, proto_name(s), op, a,
			served ? "U-Net" : "kernel", why);
	}
	reg_decided(fd, served);
	if (!served)
		forget(fd);
	return served;
}

static const char *domain_name(int domain)
{
	switch (domain) {
	case AF_UNIX:
		return "AF_UNIX";
	case AF_INET6:
		return "AF_INET6";
	case AF_NETLINK:
		return "AF_NETLINK";
	case AF_PACKET:
		return "AF_PACKET";
	case AF_XDP:
		return "AF_XDP";
	default:
		return NULL;
	}
}

EXPORT int socket(int domain, int type, int protocol)
{
	int base = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct run_sock *s;
	void *old = NULL;
	int fd;

	ready();
	fd = real_socket(domain, type, protocol);
	if (fd < 0 || stack_depth)
		return fd; /* the U-Net library's own (stack.h) */
	if (domain != AF_INET) {
		if (run_log_on()) {
			const char *d = domain_name(domain);

			if (d)
				run_log("fd %d %s socket: kernel (not AF_INET)", fd, d);
			else
				run_log("fd %d family %d socket: kernel (not AF_INET)", fd, domain);
		}
		return fd;
	}
	if ((base != SOCK_DGRAM && base != SOCK_STREAM) ||
	    (base == SOCK_DGRAM && protocol != 0 && protocol != IPPROTO_UDP) ||
	    (base == SOCK_STREAM && protocol != 0 && protocol != IPPROTO_TCP)) {
		run_log("fd %d AF_INET type %d protocol %d socket: kernel (neither UDP nor TCP)", fd,
			base, protocol);
		return fd;
	}
	s = calloc(1, sizeof(*s)); /* every field not set below starts zero */
	if (s) {
		atomic_init(&s->refs, 1);
		s->pub_slot = -1;
		s->type = base;
		s->nonblock = (type & SOCK_NONBLOCK) != 0;
		s->rcvtimeo_ms = -1;
		s->udp = NULL;
		s->tcp = NULL;
		s->sndtimeo_ms = -1;
	}
	if (!s || tab_set(fd, s, &old) < 0) {
		free(s);
		run_log("fd %d %s socket: kernel (no memory to track it)", fd,
			base == SOCK_DGRAM ? "udp" : "tcp");
		return fd;
	}
	/* A stale entry: the descriptor was closed behind our back
	 * (close_range, or a raw system call). */
	sock_unref(old);
	return fd;
}

EXPORT int socketpair(int domain, int type, int protocol, int sv[2])
{
	int r;

	ready();
	r = real_socketpair(domain, type, protocol, sv);
	if (r == 0 && run_log_on()) {
		const char *d = domain_name(domain);

		run_log("fd %d,%d %s socketpair: kernel (not AF_INET)", sv[0], sv[1],
			d ? d : "(other family)");
	}
	return r;
}

/*
 * fd's socket with a reference of the caller's (given back with
 * sock_unref): a close of fd in another thread meanwhile leaves it to
 * the last user, so a call blocked in it never runs on freed memory.
 * The reference is taken under the table's lock, which close's removal
 * takes too; a descriptor that is not ours costs the lock-free lookup
 * only.
 */
static struct run_sock *sock_hold(int fd)
{
	struct run_sock *s = fdtab_get(&table, fd);

	if (!s)
		return NULL;
	run_lock(&table.lock);
	s = fdtab_get(&table, fd);
	if (s)
		atomic_fetch_add(&s->refs, 1);
	run_unlock(&table.lock);
	return s;
}

/* sock_hold, for a socket on U-Net only. */
static struct run_sock *unet_sock_hold(int fd)
{
	struct run_sock *s = sock_hold(fd);

	if (s && !on_unet(s)) {
		sock_unref(s);
		return NULL;
	}
	return s;
}

/* Whether fd is a U-Net socket now.  Looked at under a reference: a
 * close in another thread may free the socket the moment the table
 * gives it (the answer itself may be stale by the time it is used, as
 * with any descriptor another thread closes). */
static bool fd_on_unet(int fd)
{
	struct run_sock *s = unet_sock_hold(fd);

	sock_unref(s);
	return s != NULL;
}

/* The value of a call made on held socket s, s given back. */
#define HELD_RETURN(s, expr)                                                                       \
	do {                                                                                       \
		__typeof__(expr) held_r_ = (expr);                                                 \
		int held_e_ = errno;                                                               \
		sock_unref(s);                                                                     \
		errno = held_e_;                                                                   \
		return held_r_;                                                                    \
	} while (0)

/* A connection accepted on a kernel listener is the kernel's. */
static void log_accepted(int lfd, int fd)
{
	if (fd >= 0 && run_log_on())
		run_log("fd %d accepted on fd %d: kernel (the listener is the kernel's)", fd, lfd);
}

static void fill_addr(const struct sockaddr_in *a, struct sockaddr *out, socklen_t *len)
{
	if (!out || !len)
		return;
	memcpy(out, a, *len < sizeof(*a) ? *len : sizeof(*a));
	*len = sizeof(*a);
}

/* SO_RCVTIMEO/SO_SNDTIMEO's value as the waits take it: ms, -1 none. */
static int timeo_ms(const struct timeval *tv)
{
	return tv->tv_sec || tv->tv_usec ? (int)(tv->tv_sec * 1000 + (tv->tv_usec + 999) / 1000) : -1;
}

/* The kernel socket behind a U-Net TCP socket keeps every option the
 * program set, and getsockopt answers from it, as the kernel would.
 * The U-Net connection follows these, read back from it: SO_KEEPALIVE
 * with TCP_KEEPIDLE/INTVL/CNT, IP_TOS and SO_LINGER.  Called when the
 * connection is made and whenever one of them is set. */
static void tcp_follow_options(int fd, struct run_sock *s)
{
	int on = 0, idle = 7200, intvl = 75, cnt = 9, tos = 0;
	struct linger lg = { 0, 0 };
	socklen_t n;

	if (!s->tcp || s->tcp->listener)
		return;
	n = sizeof(on);
	real_getsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, &n);
	n = sizeof(idle);
	real_getsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, &n);
	n = sizeof(intvl);
	real_getsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, &n);
	n = sizeof(cnt);
	real_getsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, &n);
	if (run_tcp_keepalive(s->tcp, on != 0, idle, intvl, cnt) < 0)
		run_log("fd %d tcp keepalive not applied on U-Net: %s", fd, strerror(errno));
	n = sizeof(tos);
	if (real_getsockopt(fd, IPPROTO_IP, IP_TOS, &tos, &n) == 0 && run_tcp_tos(s->tcp, tos) < 0)
		run_log("fd %d tcp IP_TOS not applied on U-Net: %s", fd, strerror(errno));
	n = sizeof(lg);
	if (real_getsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, &n) == 0)
		s->tcp->linger_s = lg.l_onoff ? lg.l_linger : -1;
}

/* What an accepted connection inherits from its listener in the kernel
 * (the new socket is a clone of the listening one); the U-Net
 * connection's fresh kernel socket is given the same, so getsockopt and
 * the U-Net connection both see them.  Buffer sizes are left out: the
 * kernel reports them doubled, and they do not change lwIP's fixed
 * windows anyway. */
static void tcp_inherit_options(int lfd, int fd, struct run_sock *s)
{
	static const int opts[][2] = {
		{ SOL_SOCKET, SO_KEEPALIVE },	{ SOL_SOCKET, SO_LINGER },
		{ SOL_SOCKET, SO_RCVTIMEO },	{ SOL_SOCKET, SO_SNDTIMEO },
		{ IPPROTO_TCP, TCP_NODELAY },	{ IPPROTO_TCP, TCP_KEEPIDLE },
		{ IPPROTO_TCP, TCP_KEEPINTVL }, { IPPROTO_TCP, TCP_KEEPCNT },
		{ IPPROTO_IP, IP_TOS },
	};
	struct timeval tv;
	socklen_t n;

	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		unsigned char v[32];

		n = sizeof(v);
		if (real_getsockopt(lfd, opts[i][0], opts[i][1], v, &n) == 0)
			real_setsockopt(fd, opts[i][0], opts[i][1], v, n);
	}
	n = sizeof(tv);
	if (real_getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &n) == 0)
		s->rcvtimeo_ms = s->tcp->rcvtimeo_ms = timeo_ms(&tv);
	n = sizeof(tv);
	if (real_getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, &n) == 0)
		s->sndtimeo_ms = s->tcp->sndtimeo_ms = timeo_ms(&tv);
	tcp_follow_options(fd, s);
}

/* An option set on a U-Net TCP socket that the U-Net connection cannot
 * follow: said in the log (the kernel socket keeps it, and getsockopt
 * answers it). */
static void tcp_option_unfollowed(int fd, int level, int name, const void *val, socklen_t len)
{
	int v = 0;

	if (val && len >= sizeof(int))
		memcpy(&v, val, sizeof(v));
	if (level == IPPROTO_TCP && name == TCP_NODELAY && !v)
		run_log("fd %d tcp TCP_NODELAY 0: the U-Net connection sends at once all the "
			"same (no Nagle)",
			fd);
	else if (level == SOL_SOCKET && (name == SO_RCVBUF || name == SO_SNDBUF))
		run_log("fd %d tcp %s %d: the kernel socket's only; the U-Net connection's "
			"window and send buffer are fixed",
			fd, name == SO_RCVBUF ? "SO_RCVBUF" : "SO_SNDBUF", v);
}

static bool tcp_option_followed(int level, int name)
{
	return (level == SOL_SOCKET && (name == SO_KEEPALIVE || name == SO_LINGER)) ||
	       (level == IPPROTO_TCP &&
		(name == TCP_KEEPIDLE || name == TCP_KEEPINTVL || name == TCP_KEEPCNT)) ||
	       (level == IPPROTO_IP && name == IP_TOS);
}

/* accept on a U-Net listener: the connection gets a descriptor of its
 * own, a fresh (never used) kernel TCP socket, as every U-Net socket is
 * a real descriptor. */
static int unet_accept(int lfd, struct run_sock *l, struct sockaddr *addr, socklen_t *len,
		       int flags)
{
	struct run_tcp *c = run_tcp_accept(l->tcp, false);
	struct run_sock *s;
	void *old = NULL;
	int fd;

	if (!c)
		return -1;
	fd = real_socket(AF_INET, SOCK_STREAM | (flags & SOCK_CLOEXEC), 0);
	s = fd >= 0 ? calloc(1, sizeof(*s)) : NULL;
	if (s)
		s->pub_slot = -1;
	if (!s || tab_set(fd, s, &old) < 0) {
		int err = fd < 0 ? errno : ENOMEM;

		free(s);
		if (fd >= 0)
			real_close(fd);
		run_tcp_close(c);
		errno = err;
		return -1;
	}
	sock_unref(old);
	atomic_init(&s->refs, 1);
	s->type = SOCK_STREAM;
	s->nonblock = (flags & SOCK_NONBLOCK) != 0;
	s->rcvtimeo_ms = s->sndtimeo_ms = -1;
	c->nonblock = s->nonblock;
	s->tcp = c;
	tcp_inherit_options(lfd, fd, s);
	publish(fd, s);
	fill_addr(&c->peer, addr, len);
	if (run_log_on()) {
		char a[64];

		format_addr((struct sockaddr *)&c->peer, sizeof(c->peer), a, sizeof(a));
		run_log("fd %d tcp accepted on fd %d from %s: U-Net", fd, lfd, a);
	}
	return fd;
}

/* The relayed socket of a connection a child accepted on its copy of a
 * listener (forklisten.h): a kernel stream socket the parent relays. */
static int relayed_accept(int lfd, struct sockaddr *addr, socklen_t *len, int flags)
{
	struct sockaddr_in local, peer;
	struct run_sock *r;
	void *old = NULL;
	int fd = fl_accept(lfd, flags, &local, &peer);

	if (fd < 0)
		return -1;
	r = calloc(1, sizeof(*r));
	if (r) {
		atomic_init(&r->refs, 1);
		r->type = SOCK_STREAM;
		r->pub_slot = -1;
		r->rcvtimeo_ms = r->sndtimeo_ms = -1;
		r->nonblock = (flags & SOCK_NONBLOCK) != 0;
		r->relayed = true;
		r->relay_local = local;
		r->relay_peer = peer;
	}
	if (!r || tab_set(fd, r, &old) < 0) {
		/* Untracked, it would answer getsockname as a unix socket. */
		free(r);
		real_close(fd);
		errno = ENOMEM;
		return -1;
	}
	sock_unref(old);
	fill_addr(&peer, addr, len);
	if (run_log_on()) {
		char a[64];

		format_addr((struct sockaddr *)&peer, sizeof(peer), a, sizeof(a));
		run_log("fd %d tcp accepted on fd %d from %s: U-Net, relayed by the parent", fd, lfd,
			a);
	}
	return fd;
}

EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	struct run_sock *s;
	int r;

	ready();
	s = sock_hold(fd);
	if (s && s->tcp)
		HELD_RETURN(s, unet_accept(fd, s, addr, len, 0));
	if (s && s->relay_listener)
		HELD_RETURN(s, relayed_accept(fd, addr, len, 0));
	if (s)
		sock_unref(s);
	r = real_accept(fd, addr, len);
	log_accepted(fd, r);
	return r;
}

EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	struct run_sock *s;
	int r;

	ready();
	s = sock_hold(fd);
	if (s && s->tcp)
		HELD_RETURN(s, unet_accept(fd, s, addr, len, flags));
	if (s && s->relay_listener)
		HELD_RETURN(s, relayed_accept(fd, addr, len, flags));
	if (s)
		sock_unref(s);
	r = real_accept4(fd, addr, len, flags);
	log_accepted(fd, r);
	return r;
}

/* The U-Net endpoint for TCP socket s's traffic by addr (local or a
 * peer's), or NULL with why. */
static struct run_ep *tcp_route(struct run_sock *s, bool local, const struct sockaddr *addr,
				socklen_t len, char *why, size_t n)
{
	char ifname[IF_NAMESIZE];
	const char *ewhy;
	struct run_ep *e;

	if (!route_choice(s, local, addr, len, ifname, why, n))
		return NULL;
	stack_enter();
	e = stack_ep(ifname, cfg.pin_root, cfg.spin_us, &ewhy);
	stack_leave();
	if (!e)
		snprintf(why, n, "%s", ewhy);
	return e;
}

static void log_tcp(int fd, const char *op, const struct sockaddr *addr, socklen_t len,
		    bool unet, const char *why)
{
	if (run_log_on()) {
		char a[64];

		format_addr(addr, len, a, sizeof(a));
		run_log("fd %d tcp %s %s: %s (%s)", fd, op, a, unet ? "U-Net" : "kernel", why);
	}
}

static int bind_held(struct run_sock *s, int fd, const struct sockaddr *addr, socklen_t len)
{
	int r;

	if (s && (on_unet(s) || s->bound || s->relayed)) {
		errno = EINVAL; /* bound already, as the kernel says */
		return -1;
	}
	if (s && s->type == SOCK_STREAM && addr && len >= sizeof(struct sockaddr_in) &&
	    addr->sa_family == AF_INET && ((const struct sockaddr_in *)addr)->sin_port) {
		char why[256], ifname[IF_NAMESIZE];

		/* A listener to be: U-Net's if its address is; the layer
		 * binds the port itself at listen (a bound kernel socket
		 * here would hold it against the layer). */
		if (route_choice(s, true, addr, len, ifname, why, sizeof(why))) {
			memcpy(&s->bound_addr, addr, sizeof(s->bound_addr));
			s->bound = true;
			return 0;
		}
	}
	r = real_bind(fd, addr, len);
	if (s && r == 0)
		decide(fd, s, "bind", true, addr, len, true, false);
	return r;
}

EXPORT int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct run_sock *s;

	ready();
	s = sock_hold(fd);
	HELD_RETURN(s, bind_held(s, fd, addr, len));
}

/* connect() on a UDP socket already on U-Net (bound, or a send bound
 * it; a server that answers its first client from a connected socket,
 * as iperf3's does).  The peer must be reached through the socket's own
 * interface: its datagrams cannot move to the kernel or another
 * endpoint once it has been used.  AF_UNSPEC disconnects. */
static int udp_connect_again(int fd, struct run_sock *s, const struct sockaddr *addr,
			     socklen_t len)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;
	char ifname[IF_NAMESIZE], why[256], a[64];

	if (!addr || len < sizeof(sa_family_t)) {
		errno = EINVAL;
		return -1;
	}
	if (s->udp->rp_next != s->udp) {
		/* The kernel would prefer the connected member for the peer's
		 * datagrams; the group here spreads by source alone. */
		run_log("fd %d udp connect after bind: the socket shares its port (SO_REUSEPORT): "
			"not supported on U-Net",
			fd);
		errno = EOPNOTSUPP;
		return -1;
	}
	if (addr->sa_family == AF_INET) {
		if (!route_choice(s, false, addr, len, ifname, why, sizeof(why))) {
			run_log("fd %d udp connect after bind or send: %s: refused", fd, why);
			errno = ENETUNREACH;
			return -1;
		}
		if (strcmp(ifname, s->udp->e->ifname) != 0) {
			run_log("fd %d udp connect after bind or send: reached by %s, not by the "
				"socket's %s: refused",
				fd, ifname, s->udp->e->ifname);
			errno = ENETUNREACH;
			return -1;
		}
	}
	/* The kernel socket first: it checks the address as for any
	 * socket, and getpeername answers from it. */
	if (real_connect(fd, addr, len) < 0)
		return -1;
	run_udp_connect(s->udp, addr->sa_family == AF_INET ? sin->sin_addr.s_addr : 0,
			addr->sa_family == AF_INET ? ntohs(sin->sin_port) : 0);
	/* A socket file entry shows the peer: a fresh one.  The old slot is
	 * let go under the stack lock first, so that no thread's send or
	 * receive writes its counters into it once another socket has it. */
	{
		int old;

		stack_enter();
		old = s->pub_slot;
		s->pub_slot = s->udp->pub_slot = -1;
		stack_leave();
		pub_remove(old);
	}
	publish(fd, s);
	if (run_log_on()) {
		format_addr(addr, len, a, sizeof(a));
		run_log("fd %d udp connect %s after bind: U-Net", fd,
			addr->sa_family == AF_UNSPEC ? "AF_UNSPEC" : a);
	}
	return 0;
}

static int connect_held(struct run_sock *s, int fd, const struct sockaddr *addr, socklen_t len)
{
	int r;

	if (s && (s->tcp || s->relayed)) {
		errno = s->tcp && s->tcp->listener ? EINVAL : EISCONN;
		return -1;
	}
	if (s && s->udp)
		return udp_connect_again(fd, s, addr, len);
	if (s && s->type == SOCK_STREAM) {
		char why[256];
		struct run_ep *e = s->bound ? NULL : tcp_route(s, false, addr, len, why, sizeof(why));

		if (s->bound)
			snprintf(why, sizeof(why), "bound before connect: not built on U-Net");
		if (e) {
			struct run_tcp *c = run_tcp_connect(e, (const struct sockaddr_in *)addr,
							    s->nonblock, cfg.spin_us, s->sndtimeo_ms);
			int err = errno;

			if (c) {
				c->rcvtimeo_ms = s->rcvtimeo_ms;
				c->sndtimeo_ms = s->sndtimeo_ms;
				s->tcp = c;
				tcp_follow_options(fd, s);
				publish(fd, s);
				reg_decided(fd, true);
				snprintf(why, sizeof(why), "%s, port %u", e->why,
					 ntohs(c->local.sin_port));
				log_tcp(fd, "connect", addr, len, true, why);
				errno = err;
				return err == EINPROGRESS ? -1 : 0;
			}
			if (err == ECONNREFUSED || err == ETIMEDOUT || err == EHOSTUNREACH ||
			    err == ENETUNREACH || err == EINTR) {
				/* The peer's answer (or its silence): the kernel would
				 * have had the same. */
				log_tcp(fd, "connect", addr, len, true, strerror(err));
				errno = err;
				return -1;
			}
			snprintf(why, sizeof(why), "the TCP layer refused: %s", strerror(err));
		}
		log_tcp(fd, "connect", addr, len, false, why);
		if (s->bound)
			r = real_bind(fd, (struct sockaddr *)&s->bound_addr, sizeof(s->bound_addr));
		reg_decided(fd, false);
		forget(fd);
		stack_batch_end();
		return real_connect(fd, addr, len);
	}
	r = real_connect(fd, addr, len);
	if (s && r == 0)
		decide(fd, s, "connect", false, addr, len, true, true);
	return r;
}

EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct run_sock *s;

	ready();
	s = sock_hold(fd);
	HELD_RETURN(s, connect_held(s, fd, addr, len));
}

static int listen_held(struct run_sock *s, int fd, int backlog)
{
	if (s && s->tcp && s->tcp->listener)
		return 0; /* listening already (a new backlog is not applied) */
	if (s && s->bound) {
		char why[256];
		struct run_ep *e = tcp_route(s, true, (struct sockaddr *)&s->bound_addr,
					     sizeof(s->bound_addr), why, sizeof(why));

		if (e) {
			struct sockaddr_in local = s->bound_addr;
			struct run_tcp *l;

			if (local.sin_addr.s_addr == htonl(INADDR_ANY))
				local.sin_addr.s_addr = e->addr;
			l = run_tcp_listen(e, &local, backlog, reuseport_set(fd), cfg.spin_us);
			/* As for UDP: a port this process's reuseport listener
			 * holds is shared (the kernel socket is not bound yet:
			 * the option on it is the program's word). */
			if (!l && errno == EADDRINUSE && reuseport_set(fd))
				l = run_tcp_listen_shared(e, &local, cfg.spin_us);
			if (l && reuseport_set(fd))
				run_tcp_reuseport(l);
			if (l) {
				l->nonblock = s->nonblock;
				l->rcvtimeo_ms = s->rcvtimeo_ms;
				s->tcp = l;
				publish(fd, s);
				reg_decided(fd, true);
				snprintf(why, sizeof(why), "%s, port %u", e->why,
					 ntohs(local.sin_port));
				log_tcp(fd, "listen", (struct sockaddr *)&s->bound_addr,
					sizeof(s->bound_addr), true, why);
				return 0;
			}
			snprintf(why, sizeof(why), "the TCP layer refused: %s", strerror(errno));
		}
		log_tcp(fd, "listen", (struct sockaddr *)&s->bound_addr, sizeof(s->bound_addr),
			false, why);
		/* Back to the kernel before any data moved: the bind it never saw. */
		if (real_bind(fd, (struct sockaddr *)&s->bound_addr, sizeof(s->bound_addr)) < 0) {
			int err = errno;

			reg_decided(fd, false);
			forget(fd);
			errno = err;
			return -1;
		}
		reg_decided(fd, false);
		forget(fd);
		return real_listen(fd, backlog);
	}
	if (s)
		decide(fd, s, "listen", true, NULL, 0, true, false);
	return real_listen(fd, backlog);
}

EXPORT int listen(int fd, int backlog)
{
	struct run_sock *s;

	ready();
	s = sock_hold(fd);
	HELD_RETURN(s, listen_held(s, fd, backlog));
}

static ssize_t send_iov(struct run_sock *s, const struct iovec *iov, size_t n, int flags,
			const struct sockaddr *to, socklen_t tolen)
{
	ssize_t r;

	if (s->tcp)
		r = run_tcp_send(s->tcp, iov, n, flags);
	else
		r = run_udp_send(s->udp, iov, n, flags, to, tolen);
	return r;
}

EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *addr,
		      socklen_t len)
{
	struct run_sock *s;

	ready();
	s = sock_hold(fd);
	/* decide() drops the table's reference when it leaves the socket to
	 * the kernel; ours keeps s until we let it go. */
	if (s && !on_unet(s) && addr)
		decide(fd, s, "sendto", false, addr, len, false, false);
	if (s && on_unet(s)) {
		struct iovec v = { (void *)buf, n };

		HELD_RETURN(s, send_iov(s, &v, 1, flags, addr, len));
	}
	if (s)
		sock_unref(s);
	stack_batch_end();
	return real_sendto(fd, buf, n, flags, addr, len);
}

EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	struct run_sock *s = unet_sock_hold(fd);

	ready();
	if (s) {
		struct iovec v = { (void *)buf, n };

		HELD_RETURN(s, send_iov(s, &v, 1, flags, NULL, 0));
	}
	stack_batch_end();
	return real_send(fd, buf, n, flags);
}

EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	struct run_sock *s = unet_sock_hold(fd);

	ready();
	if (s) {
		struct iovec v = { (void *)buf, n };

		HELD_RETURN(s, send_iov(s, &v, 1, 0, NULL, 0));
	}
	stack_batch_end();
	return real_write(fd, buf, n);
}

EXPORT ssize_t writev(int fd, const struct iovec *iov, int n)
{
	struct run_sock *s = unet_sock_hold(fd);

	ready();
	if (s)
		HELD_RETURN(s, n < 0 ? (errno = EINVAL, -1) : send_iov(s, iov, (size_t)n, 0, NULL, 0));
	stack_batch_end();
	return real_writev(fd, iov, n);
}

/* How much sendfile reads from the file per step onto a U-Net socket. */
#define SENDFILE_CHUNK (64 * 1024)

/* sendfile onto a U-Net socket: the kernel's would write to the unused
 * kernel socket, so the file is read here and sent as write() would,
 * chunk by chunk, until count is sent or the socket takes less (a
 * non-blocking socket's partial write, as the kernel's sendfile gives).
 * Without offset the file's position ends just past what was sent. */
static ssize_t sendfile_unet(struct run_sock *s, int in_fd, off_t *offset, size_t count)
{
	char *buf = malloc(count < SENDFILE_CHUNK ? (count ? count : 1) : SENDFILE_CHUNK);
	size_t total = 0;
	ssize_t r = 0;

	if (!buf) {
		errno = ENOMEM;
		return -1;
	}
	while (total < count) {
		size_t want = count - total < SENDFILE_CHUNK ? count - total : SENDFILE_CHUNK;
		struct iovec v;
		ssize_t w;

		r = offset ? pread(in_fd, buf, want, *offset) : real_read(in_fd, buf, want);
		if (r <= 0)
			break;
		v = (struct iovec){ buf, (size_t)r };
		w = send_iov(s, &v, 1, 0, NULL, 0);
		if (w < 0) {
			int err = errno;

			if (!offset)
				lseek(in_fd, -r, SEEK_CUR);
			errno = err;
			r = -1;
			break;
		}
		total += (size_t)w;
		if (offset)
			*offset += w;
		else if (w < r)
			lseek(in_fd, -(r - w), SEEK_CUR);
		if (w < r)
			break;
	}
	free(buf);
	/* An error after some bytes went is reported as the count sent (the
	 * next call sees the error), as write() does. */
	return total || r >= 0 ? (ssize_t)total : -1;
}

EXPORT ssize_t sendfile(int out_fd, int in_fd, off_t *offset, size_t count)
{
	struct run_sock *s = unet_sock_hold(out_fd);

	ready();
	if (s)
		HELD_RETURN(s, sendfile_unet(s, in_fd, offset, count));
	stack_batch_end();
	return real_sendfile(out_fd, in_fd, offset, count);
}

/* The same function under its large-file name (off_t is 64-bit here). */
EXPORT ssize_t sendfile64(int out_fd, int in_fd, off_t *offset, size_t count)
	__attribute__((alias("sendfile")));

EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	struct run_sock *s;

	ready();
	s = sock_hold(fd);
	if (s && !on_unet(s) && msg && msg->msg_name)
		decide(fd, s, "sendmsg", false, msg->msg_name, msg->msg_namelen, false, false);
	if (s && on_unet(s))
		HELD_RETURN(s, send_iov(s, msg->msg_iov, msg->msg_iovlen, flags, msg->msg_name,
					msg->msg_namelen));
	if (s)
		sock_unref(s);
	stack_batch_end();
	return real_sendmsg(fd, msg, flags);
}

static ssize_t recv_iov(struct run_sock *s, const struct iovec *iov, size_t n, int flags,
			struct sockaddr *from, socklen_t *fromlen, int *msg_flags)
{
	ssize_t r;

	if (s->tcp) {
		r = run_tcp_recv(s->tcp, iov, n, flags);
		if (r >= 0) {
			fill_addr(&s->tcp->peer, from, fromlen);
			if (msg_flags)
				*msg_flags = 0;
		}
	} else {
		r = run_udp_recv(s->udp, iov, n, flags, from, fromlen, msg_flags);
	}
	return r;
}

EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *addr,
			socklen_t *len)
{
	struct run_sock *s = unet_sock_hold(fd);

	ready();
	if (s) {
		struct iovec v = { buf, n };

		HELD_RETURN(s, recv_iov(s, &v, 1, flags, addr, len, NULL));
	}
	stack_batch_end();
	return real_recvfrom(fd, buf, n, flags, addr, len);
}

EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
	struct run_sock *s = unet_sock_hold(fd);

	ready();
	if (s) {
		struct iovec v = { buf, n };

		HELD_RETURN(s, recv_iov(s, &v, 1, flags, NULL, NULL, NULL));
	}
	stack_batch_end();
	return real_recv(fd, buf, n, flags);
}

EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	struct run_sock *s = unet_sock_hold(fd);

	ready();
	if (s) {
		struct iovec v = { buf, n };

		HELD_RETURN(s, recv_iov(s, &v, 1, 0, NULL, NULL, NULL));
	}
	stack_batch_end();
	return real_read(fd, buf, n);
}

EXPORT ssize_t readv(int fd, const struct iovec *iov, int n)
{
	struct run_sock *s = unet_sock_hold(fd);

	ready();
	if (s)
		HELD_RETURN(s, n < 0 ? (errno = EINVAL, -1)
				     : recv_iov(s, iov, (size_t)n, 0, NULL, NULL, NULL));
	stack_batch_end();
	return real_readv(fd, iov, n);
}

EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	struct run_sock *s = unet_sock_hold(fd);

	ready();
	if (s) {
		socklen_t len = msg->msg_namelen;
		ssize_t r = recv_iov(s, msg->msg_iov, msg->msg_iovlen, flags,
					 msg->msg_name, msg->msg_name ? &len : NULL,
					 &msg->msg_flags);
		int err = errno;

		sock_unref(s);
		if (r >= 0) {
			if (msg->msg_name)
				msg->msg_namelen = len;
			msg->msg_controllen = 0;
		}
		errno = err;
		return r;
	}
	stack_batch_end();
	return real_recvmsg(fd, msg, flags);
}

/* Whether any of fds is a U-Net socket now (fd_on_unet). */
static bool any_unet(struct pollfd *fds, nfds_t n)
{
	for (nfds_t i = 0; i < n; i++)
		if (fd_on_unet(fds[i].fd))
			return true;
	return false;
}

/* What poll would say of U-Net socket s for events (POLLERR and
 * POLLHUP whether asked or not). */
static short sock_revents(struct run_sock *s, short events)
{
	short r;

	if (s->tcp)
		r = run_tcp_poll(s->tcp);
	else
		r = (short)((run_udp_readable(s->udp) ? POLLIN : 0) | POLLOUT);
	return (short)(r & (events | POLLERR | POLLHUP));
}

/* poll over a mix: U-Net sockets' readiness is computed here (drain the
 * endpoint, look at the socket's queue; always writable), the kernel's
 * descriptors are asked with a zero timeout, and the wait sleeps on the
 * kernel descriptors and the endpoints' wait descriptors together, a
 * slice at a time, after spinning for the configured budget. */
EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct run_sock **held;
	struct pollfd *k;
	int64_t deadline, spin_until;
	int ready_n, err = 0;

	ready();
	stack_batch_end(); /* a wait ends the batch (stack.h) */
	if (fl_child_unannounced())
		fl_child_poll(fds, n);
	if (!any_unet(fds, n))
		return real_poll(fds, n, timeout);
	/* The kernel's descriptors, then one wait descriptor per U-Net
	 * socket; and, for each look, a reference on each U-Net socket, so
	 * a close in another thread during the look leaves the socket to
	 * us until it is done.  The next look finds the descriptor closed
	 * and the kernel answers POLLNVAL, as its own poll does when it
	 * wakes on a descriptor closed meanwhile.  At most n wait
	 * descriptors: a descriptor may move to U-Net between two looks. */
	/* One allocation for both (the held array after the 2n pollfds,
	 * which keep it pointer-aligned). */
	if (n > SIZE_MAX / (2 * sizeof(*k) + sizeof(*held)) ||
	    !(k = calloc(1, n * (2 * sizeof(*k) + sizeof(*held))))) {
		errno = ENOMEM;
		return -1;
	}
	held = (struct run_sock **)(void *)(k + 2 * n);
	deadline = timeout >= 0 ? mono_us() + (int64_t)timeout * 1000 : -1;
	spin_until = mono_us() + cfg.spin_us;
	sig_watch_start();
	for (;;) {
		nfds_t w = n;
		int r;

		ready_n = 0;
		for (nfds_t i = 0; i < n; i++) {
			struct run_sock *s = held[i] = unet_sock_hold(fds[i].fd);

			k[i] = fds[i];
			if (!s)
				continue;
			k[i].fd = -1; /* not the kernel's to answer */
			fds[i].revents = sock_revents(s, fds[i].events);
			if (fds[i].revents)
				ready_n++;
			k[w].fd = sock_ep(s)->wait_fd;
			k[w++].events = POLLIN;
		}
		r = real_poll(k, n, 0);
		if (r < 0)
			err = errno;
		for (nfds_t i = 0; i < n; i++) {
			if (held[i]) {
				sock_unref(held[i]);
				continue;
			}
			fds[i].revents = k[i].revents;
			if (k[i].revents)
				ready_n++;
		}
		if (err)
			break;
		if (ready_n || (deadline >= 0 && mono_us() >= deadline))
			break;
		if (sig_watch()) {
			/* A handler ran while we spun or between two slices:
			 * the kernel's poll, never restarted, would end. */
			err = EINTR;
			break;
		}
		if (mono_us() < spin_until)
			continue;
		{
			int ms = 10;

			if (deadline >= 0 && (deadline - mono_us()) / 1000 < ms)
				ms = (int)((deadline - mono_us() + 999) / 1000);
			if (real_poll(k, w, ms) < 0 && errno == EINTR) {
				err = EINTR;
				break;
			}
		}
	}
	free(k);
	if (err) {
		errno = err;
		return -1;
	}
	return ready_n;
}

/* ppoll and the select family over U-Net sockets: our poll, with the
 * signal mask swapped around it (not atomically, unlike the kernel's:
 * a signal in the window is taken before or after the wait). */
/* A timeout the kernel refuses with EINVAL. */
static bool bad_timespec(const struct timespec *ts)
{
	return ts && (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000L);
}

/* A (valid) timespec timeout in milliseconds, rounded up (NULL: -1, forever);
 * one past what an int of milliseconds holds is forever too. */
static int timeout_ms(const struct timespec *ts)
{
	if (!ts)
		return -1;
	if (ts->tv_sec >= INT_MAX / 1000 - 1)
		return -1;
	return (int)(ts->tv_sec * 1000 + (ts->tv_nsec + 999999) / 1000000);
}

static int poll_masked(struct pollfd *fds, nfds_t n, int ms, const sigset_t *mask)
{
	sigset_t old;
	int r, err;

	if (mask)
		pthread_sigmask(SIG_SETMASK, mask, &old);
	r = poll(fds, n, ms);
	err = errno;
	if (mask)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = err;
	return r;
}

EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask)
{
	ready();
	stack_batch_end(); /* a wait ends the batch (stack.h) */
	if (fl_child_unannounced())
		fl_child_poll(fds, n);
	if (!any_unet(fds, n))
		return real_ppoll(fds, n, ts, mask);
	if (bad_timespec(ts)) {
		errno = EINVAL;
		return -1;
	}
	return poll_masked(fds, n, timeout_ms(ts), mask);
}

/* select's sets as poll's array and back.  Returns the ready count. */
static int select_poll(int nfds, fd_set *r, fd_set *w, fd_set *e, int ms, const sigset_t *mask)
{
	struct pollfd *p = calloc((size_t)nfds, sizeof(*p));
	nfds_t n = 0;
	int got, ready_n = 0;

	if (!p) {
		errno = ENOMEM;
		return -1;
	}
	for (int fd = 0; fd < nfds; fd++) {
		short ev = (short)((r && FD_ISSET(fd, r) ? POLLIN : 0) |
				   (w && FD_ISSET(fd, w) ? POLLOUT : 0) |
				   (e && FD_ISSET(fd, e) ? POLLPRI : 0));

		if (ev) {
			p[n].fd = fd;
			p[n++].events = ev;
		}
	}
	got = poll_masked(p, n, ms, mask);
	if (got >= 0) {
		if (r)
			FD_ZERO(r);
		if (w)
			FD_ZERO(w);
		if (e)
			FD_ZERO(e);
		for (nfds_t i = 0; i < n; i++) {
			if (r && (p[i].revents & (POLLIN | POLLHUP | POLLERR)) && (p[i].events & POLLIN)) {
				FD_SET(p[i].fd, r);
				ready_n++;
			}
			if (w && (p[i].revents & (POLLOUT | POLLERR)) && (p[i].events & POLLOUT)) {
				FD_SET(p[i].fd, w);
				ready_n++;
			}
			if (e && (p[i].revents & POLLPRI)) {
				FD_SET(p[i].fd, e);
				ready_n++;
			}
		}
		got = ready_n;
	}
	free(p);
	return got;
}

static bool sets_have_unet(int nfds, fd_set *r, fd_set *w)
{
	for (int fd = 0; fd < nfds && fd < FD_SETSIZE; fd++)
		if (((r && FD_ISSET(fd, r)) || (w && FD_ISSET(fd, w))) && fd_on_unet(fd))
			return true;
	return false;
}

EXPORT int select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
	ready();
	stack_batch_end(); /* a wait ends the batch (stack.h) */
	if (fl_child_unannounced())
		fl_child_select(nfds, r);
	if (nfds <= 0 || nfds > FD_SETSIZE || !sets_have_unet(nfds, r, w))
		return real_select(nfds, r, w, e, tv);
	return select_poll(nfds, r, w, e,
			   tv ? (int)(tv->tv_sec * 1000 + (tv->tv_usec + 999) / 1000) : -1, NULL);
}

EXPORT int pselect(int nfds, fd_set *r, fd_set *w, fd_set *e, const struct timespec *ts,
		   const sigset_t *mask)
{
	ready();
	stack_batch_end(); /* a wait ends the batch (stack.h) */
	if (fl_child_unannounced())
		fl_child_select(nfds, r);
	if (nfds <= 0 || nfds > FD_SETSIZE || !sets_have_unet(nfds, r, w))
		return real_pselect(nfds, r, w, e, ts, mask);
	return select_poll(nfds, r, w, e, timeout_ms(ts), mask);
}

EXPORT int sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags)
{
	struct run_sock *s = unet_sock_hold(fd);
	unsigned int i;

	ready();
	if (!s) {
		stack_batch_end();
		return real_sendmmsg(fd, v, n, flags);
	}
	for (i = 0; i < n; i++) {
		ssize_t r = send_iov(s, v[i].msg_hdr.msg_iov, v[i].msg_hdr.msg_iovlen, flags,
				     v[i].msg_hdr.msg_name, v[i].msg_hdr.msg_namelen);

		if (r < 0)
			HELD_RETURN(s, i ? (int)i : -1);
		v[i].msg_len = (unsigned int)r;
	}
	HELD_RETURN(s, (int)i);
}

/* The timeout is not applied (as the kernel's, it is only checked after
 * each datagram): SO_RCVTIMEO and MSG_DONTWAIT bound the wait. */
EXPORT int recvmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags, struct timespec *ts)
{
	struct run_sock *s = unet_sock_hold(fd);
	unsigned int i;

	ready();
	if (!s) {
		stack_batch_end();
		return real_recvmmsg(fd, v, n, flags, ts);
	}
	for (i = 0; i < n; i++) {
		struct msghdr *m = &v[i].msg_hdr;
		socklen_t len = m->msg_namelen;
		int f = flags & ~MSG_WAITFORONE;
		ssize_t r;

		if (i > 0 && (flags & MSG_WAITFORONE))
			f |= MSG_DONTWAIT;
		r = recv_iov(s, m->msg_iov, m->msg_iovlen, f, m->msg_name,
				 m->msg_name ? &len : NULL, &m->msg_flags);
		if (r < 0)
			HELD_RETURN(s, i ? (int)i : -1);
		if (m->msg_name)
			m->msg_namelen = len;
		m->msg_controllen = 0;
		v[i].msg_len = (unsigned int)r;
	}
	HELD_RETURN(s, (int)i);
}

/*
 * epoll.  A U-Net socket is never added to the kernel's epoll set (its
 * kernel socket would always look writable and never readable): its
 * registration is kept here, per epoll descriptor, and epoll_wait
 * reports it from user space beside what the kernel reports, waiting on
 * the epoll descriptor and the endpoints' wait descriptors together.
 * Edge-triggered, as the kernel: an event is reported when a condition
 * appears that was not there at the last look (connected, writable,
 * hung up), and EPOLLIN again on every new arrival, EPOLLOUT again after
 * a send found the buffer full, even when the condition never went away
 * between two looks (a connection stays writable while requests come:
 * nginx reads each request on a new EPOLLIN edge).
 */
struct ep_reg {
	int epfd, fd;
	struct epoll_event ev;
	/* Edge-triggered: what the last look saw, and the socket's arrival
	 * and blocked-send counts then. */
	uint32_t seen;
	uint64_t seen_arrivals, seen_blocked;
	/* A socket not decided yet is in the kernel's set; mirrored here so
	 * that, once on U-Net, it moves out of the kernel's set to ours. */
	bool in_kernel;
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ep_reg *regs;
static size_t nregs, regs_cap;
static atomic_size_t nregs_pub; /* nregs, read without the lock by close() */

static struct ep_reg *reg_find(int epfd, int fd)
{
	for (size_t i = 0; i < nregs; i++)
		if (regs[i].epfd == epfd && regs[i].fd == fd)
			return &regs[i];
	return NULL;
}

/* Forget registrations naming fd as socket or as epoll descriptor. */
static void reg_forget(int fd)
{
	if (!atomic_load_explicit(&nregs_pub, memory_order_relaxed))
		return;
	run_lock(&reg_lock);
	for (size_t i = 0; i < nregs;) {
		if (regs[i].fd == fd || regs[i].epfd == fd)
			regs[i] = regs[--nregs];
		else
			i++;
	}
	atomic_store(&nregs_pub, nregs);
	run_unlock(&reg_lock);
}

/* Socket fd was decided: on U-Net (to_unet), its registrations leave
 * the kernel's sets for ours; else the mirrors go. */
static void reg_decided(int fd, bool to_unet)
{
	if (!atomic_load_explicit(&nregs_pub, memory_order_relaxed))
		return;
	run_lock(&reg_lock);
	for (size_t i = 0; i < nregs;) {
		if (regs[i].fd != fd || !regs[i].in_kernel) {
			i++;
		} else if (to_unet) {
			real_epoll_ctl(regs[i].epfd, EPOLL_CTL_DEL, fd, NULL);
			regs[i++].in_kernel = false;
		} else {
			regs[i] = regs[--nregs];
		}
	}
	atomic_store(&nregs_pub, nregs);
	run_unlock(&reg_lock);
}

EXPORT int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	struct run_sock *s;
	struct ep_reg *r;
	bool undecided;
	int ret = 0;

	ready();
	if (fl_child_unannounced() && op != EPOLL_CTL_DEL && ev && (ev->events & EPOLLIN))
		fl_child_use(fd);
	s = sock_hold(fd);
	if (!s || s->relayed) {
		sock_unref(s);
		return real_epoll_ctl(epfd, op, fd, ev);
	}
	undecided = !on_unet(s);
	sock_unref(s);
	if (undecided && real_epoll_ctl(epfd, op, fd, ev) < 0)
		return -1;
	run_lock(&reg_lock);
	r = reg_find(epfd, fd);
	if (op == EPOLL_CTL_ADD && r) {
		ret = EEXIST;
	} else if (op == EPOLL_CTL_ADD) {
		if (nregs == regs_cap) {
			size_t cap = regs_cap ? regs_cap * 2 : 16;
			struct ep_reg *n = realloc(regs, cap * sizeof(*n));

			if (!n) {
				ret = ENOMEM;
				goto out;
			}
			regs = n;
			regs_cap = cap;
		}
		regs[nregs++] = (struct ep_reg){ .epfd = epfd, .fd = fd, .ev = *ev,
						 .in_kernel = undecided };
	} else if (!r) {
		ret = ENOENT;
	} else if (op == EPOLL_CTL_MOD) {
		r->ev = *ev;
		r->seen = 0; /* re-armed: what is ready now is reported */
	} else if (op == EPOLL_CTL_DEL) {
		*r = regs[--nregs];
	} else {
		ret = EINVAL;
	}
out:
	atomic_store(&nregs_pub, nregs);
	run_unlock(&reg_lock);
	if (ret) {
		errno = ret;
		return -1;
	}
	return 0;
}

/* The U-Net sockets of epfd that are ready, into evs (at most max); the
 * endpoints' wait descriptors into w (at most wmax, *nw of them, one per
 * endpoint).  Returns how many events, or -1 when epfd has no U-Net
 * socket.
 *
 * One pass under one hold of the locks: each endpoint among the
 * registrations is drained once (frames in, the TCP layer's timers),
 * then every registration's readiness is read from what that left,
 * without driving the endpoint again.  (Driving it per socket made a
 * wait over 50 connections drain the rings and read the clock 50
 * times.) */
static int unet_epoll_ready(int epfd, struct epoll_event *evs, int max, struct pollfd *w,
			    int wmax, int *nw)
{
	struct run_ep *driven[16];
	/* Sockets whose last reference a look gave back (a dup2 over the
	 * descriptor in another thread dropped the table's): destroyed after
	 * the locks are let go, since a close may linger (SO_LINGER). */
	struct run_sock *held = NULL, *to_destroy = NULL;
	int n = 0, ndriven = 0;
	bool any = false;

	*nw = 0;
	/* Lock order: stack_lock, then reg_lock (as close() inside the
	 * library and bind/connect deciding a socket take them): the
	 * readiness below runs the stack. */
	stack_enter();
	run_lock(&reg_lock);
	for (size_t i = 0; i < nregs; i++) {
		struct ep_reg *r = &regs[i];
		struct run_sock *s;
		struct run_ep *e;
		uint32_t got = 0;
		int d;

		/* The previous registration's socket, given back: each is
		 * looked at under a reference (a dup2 over its descriptor
		 * in another thread frees it without reg_lock). */
		if (held && atomic_fetch_sub(&held->refs, 1) == 1) {
			held->destroy_next = to_destroy;
			to_destroy = held;
		}
		held = NULL;
		if (r->epfd != epfd || r->in_kernel)
			continue;
		any = true;
		s = held = unet_sock_hold(r->fd);
		if (!s)
			continue;
		e = sock_ep(s);
		for (d = 0; d < ndriven && driven[d] != e; d++)
			;
		if (d == ndriven) {
			/* More endpoints than the array: drive again. */
			if (ndriven < (int)(sizeof(driven) / sizeof(driven[0])))
				driven[ndriven++] = e;
			run_udp_pump(e);
			if (*nw < wmax && e->wait_fd >= 0) {
				w[*nw].fd = e->wait_fd;
				w[(*nw)++].events = POLLIN;
			}
		}
		{
			short want = (short)(((r->ev.events & EPOLLIN) ? POLLIN : 0) |
					     ((r->ev.events & EPOLLOUT) ? POLLOUT : 0) |
					     ((r->ev.events & EPOLLRDHUP) ? POLLRDHUP : 0));
			short p = s->tcp ? run_tcp_poll_driven(s->tcp)
					 : (short)((run_udp_queued(s->udp) ? POLLIN : 0) | POLLOUT);

			p = (short)(p & (want | POLLERR | POLLHUP));
			got = (p & POLLIN ? EPOLLIN : 0) | (p & POLLOUT ? EPOLLOUT : 0) |
			      (p & POLLERR ? EPOLLERR : 0) | (p & POLLHUP ? EPOLLHUP : 0) |
			      (p & POLLRDHUP ? EPOLLRDHUP : 0);
		}
		if (r->ev.events & EPOLLET) {
			uint64_t arr = s->tcp ? run_tcp_arrivals(s->tcp) : run_udp_arrivals(s->udp);
			uint64_t blk = s->tcp ? __atomic_load_n(&s->tcp->send_blocked, __ATOMIC_RELAXED) : 0;
			uint32_t edge = got & ~r->seen;

			if ((got & EPOLLIN) && arr != r->seen_arrivals)
				edge |= EPOLLIN;
			if ((got & EPOLLOUT) && blk != r->seen_blocked)
				edge |= EPOLLOUT;
			if (edge && n == max)
				continue; /* no room: still owed at the next look */
			r->seen = got;
			r->seen_arrivals = arr;
			r->seen_blocked = blk;
			if (!edge)
				continue;
		} else if (!got || n == max) {
			continue;
		}
		evs[n].events = got;
		evs[n++].data = r->ev.data;
		if (r->ev.events & EPOLLONESHOT)
			r->ev.events = 0;
	}
	if (held && atomic_fetch_sub(&held->refs, 1) == 1) {
		held->destroy_next = to_destroy;
		to_destroy = held;
	}
	run_unlock(&reg_lock);
	stack_leave();
	while (to_destroy) {
		struct run_sock *s = to_destroy;

		to_destroy = s->destroy_next;
		sock_destroy(s);
	}
	return any ? n : -1;
}

/* How the program called: epoll_wait, epoll_pwait (mask) or
 * epoll_pwait2 (ts, kept for the kernel's own path, whose timeout is
 * exact where ours is in milliseconds). */
struct epoll_call {
	const sigset_t *mask;
	bool pwait2;
	const struct timespec *ts;
};

/* The kernel's wait, for an epoll descriptor without U-Net sockets. */
static int kernel_epoll(int epfd, struct epoll_event *evs, int max, int timeout,
			const struct epoll_call *how)
{
	if (how->pwait2) {
		if (!real_epoll_pwait2) {
			errno = ENOSYS; /* a libc without it */
			return -1;
		}
		return real_epoll_pwait2(epfd, evs, max, how->ts, how->mask);
	}
	return how->mask ? real_epoll_pwait(epfd, evs, max, timeout, how->mask)
			 : real_epoll_wait(epfd, evs, max, timeout);
}

static int epoll_common(int epfd, struct epoll_event *evs, int max, int timeout,
			const struct epoll_call *how)
{
	const sigset_t *mask = how->mask;
	struct pollfd w[17];
	int64_t deadline = -1, spin_until = 0;
	bool timed = false;
	int nw, n;

	if (max <= 0 || !atomic_load_explicit(&nregs_pub, memory_order_relaxed))
		return kernel_epoll(epfd, evs, max, timeout, how);
	for (;;) {
		int64_t now;
		int k;

		n = unet_epoll_ready(epfd, evs, max, w + 1, 16, &nw);
		if (n < 0)
			return kernel_epoll(epfd, evs, max, timeout, how);
		/* Several U-Net sockets to handle: their answers leave
		 * together (--batch-sends, stack.h). */
		if (n > 1 && cfg.batch_sends)
			stack_batch_begin();
		if (n < max) {
			k = real_epoll_wait(epfd, evs + n, max - n, 0);
			if (k < 0)
				return n ? n : k;
			n += k;
		}
		if (n || timeout == 0)
			return n;
		/* Nothing yet: the clock is read from here on only, so a
		 * wait that finds events at once (a busy server's) never
		 * reads it; and from here a handler's run ends the wait. */
		now = mono_us();
		if (!timed) {
			deadline = timeout > 0 ? now + (int64_t)timeout * 1000 : -1;
			spin_until = now + cfg.spin_us;
			timed = true;
			sig_watch_start();
		} else if (sig_watch()) {
			errno = EINTR; /* as poll's */
			return -1;
		}
		if (deadline >= 0 && now >= deadline)
			return 0;
		if (now < spin_until)
			continue;
		{
			int ms = 10;

			if (deadline >= 0 && (deadline - now) / 1000 < ms)
				ms = (int)((deadline - now + 999) / 1000);
			w[0].fd = epfd;
			w[0].events = POLLIN;
			if (poll_masked(w, (nfds_t)nw + 1, ms, mask) < 0 && errno == EINTR)
				return -1;
		}
	}
}

EXPORT int epoll_wait(int epfd, struct epoll_event *evs, int max, int timeout)
{
	const struct epoll_call how = { 0 };

	ready();
	stack_batch_end(); /* a wait ends the batch (stack.h) */
	return epoll_common(epfd, evs, max, timeout, &how);
}

EXPORT int epoll_pwait(int epfd, struct epoll_event *evs, int max, int timeout,
		       const sigset_t *mask)
{
	const struct epoll_call how = { .mask = mask };

	ready();
	stack_batch_end(); /* a wait ends the batch (stack.h) */
	return epoll_common(epfd, evs, max, timeout, &how);
}

/* Over U-Net sockets the timeout counts in milliseconds, rounded up. */
EXPORT int epoll_pwait2(int epfd, struct epoll_event *evs, int max, const struct timespec *ts,
			const sigset_t *mask)
{
	const struct epoll_call how = { .mask = mask, .pwait2 = true, .ts = ts };

	ready();
	stack_batch_end(); /* a wait ends the batch (stack.h) */
	if (bad_timespec(ts)) {
		errno = EINVAL;
		return -1;
	}
	return epoll_common(epfd, evs, max, timeout_ms(ts), &how);
}

static int shutdown_held(struct run_sock *s, int fd, int how)
{
	if (s && s->tcp && !s->tcp->listener)
		return run_tcp_shutdown(s->tcp, how);
	if (s && s->udp) {
		errno = ENOTCONN; /* Linux: a UDP socket has nothing to shut down but this */
		return -1;
	}
	return real_shutdown(fd, how);
}

EXPORT int shutdown(int fd, int how)
{
	struct run_sock *s;

	ready();
	s = sock_hold(fd);
	HELD_RETURN(s, shutdown_held(s, fd, how));
}

/* A TCP socket on U-Net has an unbound kernel socket: the addresses are
 * the layer's. */
static int getsockname_held(struct run_sock *s, int fd, struct sockaddr *addr, socklen_t *len)
{
	if (s && s->tcp) {
		fill_addr(&s->tcp->local, addr, len);
		return 0;
	}
	if (s && s->relayed) {
		fill_addr(&s->relay_local, addr, len);
		return 0;
	}
	if (s && s->bound) {
		fill_addr(&s->bound_addr, addr, len);
		return 0;
	}
	return real_getsockname(fd, addr, len);
}

EXPORT int getsockname(int fd, struct sockaddr *addr, socklen_t *len)
{
	struct run_sock *s;

	ready();
	s = sock_hold(fd);
	HELD_RETURN(s, getsockname_held(s, fd, addr, len));
}

static int getpeername_held(struct run_sock *s, int fd, struct sockaddr *addr, socklen_t *len)
{
	if (s && s->tcp) {
		if (s->tcp->listener) {
			errno = ENOTCONN;
			return -1;
		}
		fill_addr(&s->tcp->peer, addr, len);
		return 0;
	}
	if (s && s->relayed) {
		if (s->relay_listener) {
			errno = ENOTCONN;
			return -1;
		}
		fill_addr(&s->relay_peer, addr, len);
		return 0;
	}
	return real_getpeername(fd, addr, len);
}

EXPORT int getpeername(int fd, struct sockaddr *addr, socklen_t *len)
{
	struct run_sock *s;

	ready();
	s = sock_hold(fd);
	HELD_RETURN(s, getpeername_held(s, fd, addr, len));
}

static int getsockopt_held(struct run_sock *s, int fd, int level, int name, void *val, socklen_t *len)
{
	/* A relayed descriptor (a fork's child) is a unix socketpair's end:
	 * it answers for the TCP socket it stands for (Python's
	 * socket(fileno=) takes its family from SO_DOMAIN). */
	if (s && s->relayed && level == SOL_SOCKET && val && len && *len >= sizeof(int) &&
	    (name == SO_DOMAIN || name == SO_PROTOCOL || name == SO_ACCEPTCONN)) {
		int v = name == SO_DOMAIN     ? AF_INET
			: name == SO_PROTOCOL ? IPPROTO_TCP
					      : (int)s->relay_listener;

		memcpy(val, &v, sizeof(v));
		*len = sizeof(v);
		return 0;
	}
	if (s && s->tcp && level == SOL_SOCKET && name == SO_ERROR && val && len &&
	    *len >= sizeof(int)) {
		int e = run_tcp_error(s->tcp);

		memcpy(val, &e, sizeof(e));
		*len = sizeof(e);
		return 0;
	}
	/* The MSS is the U-Net connection's (the unused kernel socket would
	 * say 536); a listener's is the kernel socket's, as before a
	 * connection exists. */
	if (s && s->tcp && !s->tcp->listener && level == IPPROTO_TCP && name == TCP_MAXSEG &&
	    val && len && *len >= sizeof(int)) {
		int mss = run_tcp_mss(s->tcp);

		if (mss > 0) {
			memcpy(val, &mss, sizeof(mss));
			*len = sizeof(mss);
			return 0;
		}
	}
	return real_getsockopt(fd, level, name, val, len);
}

EXPORT int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	struct run_sock *s;

	ready();
	s = sock_hold(fd);
	HELD_RETURN(s, getsockopt_held(s, fd, level, name, val, len));
}

EXPORT int ioctl(int fd, unsigned long req, ...)
{
	struct run_sock *s;
	va_list ap;
	void *arg;

	ready();
	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	s = sock_hold(fd);
	/* The int behind arg may be unaligned (a byte buffer): memcpy. */
	if (s && req == FIONBIO && arg) {
		int on;

		memcpy(&on, arg, sizeof(on));
		s->nonblock = on != 0;
		if (s->udp)
			s->udp->nonblock = s->nonblock;
		if (s->tcp)
			s->tcp->nonblock = s->nonblock;
	}
	if (s && s->udp && req == FIONREAD && arg) {
		int n = run_udp_next_len(s->udp);

		memcpy(arg, &n, sizeof(n));
		sock_unref(s);
		return 0;
	}
	sock_unref(s);
	return real_ioctl(fd, req, arg);
}

/* Whether name (at IPPROTO_IP) asks for a source-specific membership or
 * filter: not built on U-Net. */
static bool ssm_option(int name)
{
	switch (name) {
	case IP_ADD_SOURCE_MEMBERSHIP:
	case IP_DROP_SOURCE_MEMBERSHIP:
	case IP_BLOCK_SOURCE:
	case IP_UNBLOCK_SOURCE:
	case IP_MSFILTER:
	case MCAST_JOIN_GROUP:
	case MCAST_LEAVE_GROUP:
	case MCAST_BLOCK_SOURCE:
	case MCAST_UNBLOCK_SOURCE:
	case MCAST_JOIN_SOURCE_GROUP:
	case MCAST_LEAVE_SOURCE_GROUP:
	case MCAST_MSFILTER:
		return true;
	}
	return false;
}

/*
 * IP_ADD_MEMBERSHIP / IP_DROP_MEMBERSHIP (ip_mreq or ip_mreqn) on a UDP
 * socket in the table.  The kernel socket joins as asked, so that the
 * kernel announces the membership (IGMP) and opens the device's
 * multicast filter; on U-Net, the group is joined on the socket's own
 * interface (the kernel is told that interface when the program left it
 * to the route) and the UDP layer takes group:port for the socket.  A
 * socket not decided yet only records the group.  Returns the call's
 * result, or -2 to pass it to the kernel unchanged.
 */
static int udp_membership(int fd, struct run_sock *s, int name, const void *val, socklen_t len)
{
	struct ip_mreqn m = { 0 };
	bool join = name == IP_ADD_MEMBERSHIP;
	char a[INET_ADDRSTRLEN];
	unsigned int ifindex;
	uint32_t group;
	int r;

	if (!val || len < sizeof(struct ip_mreq))
		return -2; /* the kernel's EINVAL */
	memcpy(&m, val, len >= sizeof(m) ? sizeof(m) : sizeof(struct ip_mreq));
	if (len < sizeof(m))
		m.imr_ifindex = 0; /* an ip_mreq: imr_interface is its address */
	group = m.imr_multiaddr.s_addr;
	if (!IN_MULTICAST(ntohl(group)))
		return -2;
	inet_ntop(AF_INET, &group, a, sizeof(a));
	if (!s->udp) {
		int g;

		r = real_setsockopt(fd, IPPROTO_IP, name, val, len);
		if (r < 0)
			return r;
		for (g = 0; g < RUN_UDP_GROUPS; g++) {
			if (join ? !s->groups[g] : s->groups[g] == group) {
				s->groups[g] = join ? group : 0;
				break;
			}
		}
		if (join && g == RUN_UDP_GROUPS)
			s->mcast_kernel = true;
		return r;
	}
	ifindex = if_nametoindex(s->udp->e->ifname);
	if ((m.imr_ifindex && (unsigned int)m.imr_ifindex != ifindex) ||
	    (!m.imr_ifindex && m.imr_address.s_addr != htonl(INADDR_ANY) &&
	     m.imr_address.s_addr != s->udp->e->addr)) {
		run_log("fd %d udp %s %s on another interface than %s: not supported on U-Net", fd,
			join ? "join" : "leave", a, s->udp->e->ifname);
		errno = EOPNOTSUPP;
		return -1;
	}
	m.imr_address.s_addr = htonl(INADDR_ANY);
	m.imr_ifindex = (int)ifindex;
	if (!join) {
		r = run_udp_leave(s->udp, group);
		if (r == 0)
			run_log("fd %d udp leave %s: U-Net", fd, a);
		return real_setsockopt(fd, IPPROTO_IP, name, &m, sizeof(m));
	}
	r = real_setsockopt(fd, IPPROTO_IP, name, &m, sizeof(m));
	if (r < 0)
		return r;
	if (run_udp_join(s->udp, group) < 0) {
		int err = errno;

		real_setsockopt(fd, IPPROTO_IP, IP_DROP_MEMBERSHIP, &m, sizeof(m));
		run_log("fd %d udp join %s on %s: refused on U-Net: %s", fd, a, s->udp->e->ifname,
			strerror(err));
		errno = err;
		return -1;
	}
	run_log("fd %d udp join %s on %s: U-Net (port %u)", fd, a, s->udp->e->ifname,
		s->udp->local_port);
	return 0;
}

static int setsockopt_held(struct run_sock *s, int fd, int level, int name, const void *val, socklen_t len)
{
	int r;

	if (s && s->relayed && (level == IPPROTO_TCP || level == IPPROTO_IP)) {
		/* The connection is the parent's: its TCP and IP options are
		 * not the child's to change (the socketpair has none). */
		run_log("fd %d relayed tcp option %d/%d: not applied (the connection is the "
			"parent's)", fd, level, name);
		return 0;
	}
	if (s && s->type == SOCK_DGRAM && level == IPPROTO_IP) {
		if (name == IP_ADD_MEMBERSHIP || name == IP_DROP_MEMBERSHIP) {
			r = udp_membership(fd, s, name, val, len);
			if (r != -2)
				return r;
		} else if (ssm_option(name)) {
			if (s->udp) {
				run_log("fd %d udp source-specific multicast option %d: not supported "
					"on U-Net",
					fd, name);
				errno = EOPNOTSUPP;
				return -1;
			}
			s->mcast_kernel = true; /* it will stay the kernel's */
		}
	}
	r = real_setsockopt(fd, level, name, val, len);
	/* What the table has now (a membership may have left the socket to
	 * the kernel); ours stays held by the caller either way. */
	if (s && fdtab_get(&table, fd) != s)
		s = NULL;
	if (r == 0 && s && s->tcp) {
		if (tcp_option_followed(level, name))
			tcp_follow_options(fd, s);
		else
			tcp_option_unfollowed(fd, level, name, val, len);
	}
	if (r == 0 && s && level == SOL_SOCKET && (name == SO_RCVTIMEO || name == SO_SNDTIMEO) &&
	    len >= sizeof(struct timeval)) {
		int ms = timeo_ms(val);

		if (name == SO_RCVTIMEO)
			s->rcvtimeo_ms = ms;
		else
			s->sndtimeo_ms = ms;
		if (s->udp)
			s->udp->rcvtimeo_ms = s->rcvtimeo_ms;
		if (s->tcp) {
			s->tcp->rcvtimeo_ms = s->rcvtimeo_ms;
			s->tcp->sndtimeo_ms = s->sndtimeo_ms;
		}
	}
	return r;
}

EXPORT int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	struct run_sock *s;

	ready();
	s = sock_hold(fd);
	HELD_RETURN(s, setsockopt_held(s, fd, level, name, val, len));
}

static void reg_forget(int fd);

EXPORT int close(int fd)
{
	ready();
	/* The U-Net library closing a descriptor of its own (it runs under
	 * stack_lock): not one of the program's, and reg_lock must not be
	 * taken under stack_lock's holder's feet here (see below). */
	if (stack_depth > 0)
		return real_close(fd);
	reg_forget(fd);
	if (fdtab_get(&table, fd))
		forget(fd);
	return real_close(fd);
}

EXPORT int dup(int fd)
{
	struct run_sock *s;
	int r;

	ready();
	r = real_dup(fd);
	s = sock_hold(fd);
	if (r >= 0 && s)
		share(r, s);
	sock_unref(s);
	return r;
}

/* After the kernel made newfd a copy of oldfd: newfd's old socket (if
 * it was ours) is gone, and it now is whatever oldfd is. */
static void copied(int oldfd, int newfd)
{
	struct run_sock *s = sock_hold(oldfd);

	if (s)
		share(newfd, s);
	else if (fdtab_get(&table, newfd))
		forget(newfd);
	sock_unref(s);
}

EXPORT int dup2(int oldfd, int newfd)
{
	int r;

	ready();
	r = real_dup2(oldfd, newfd);
	if (r >= 0 && oldfd != newfd)
		copied(oldfd, newfd);
	return r;
}

EXPORT int dup3(int oldfd, int newfd, int flags)
{
	int r;

	ready();
	r = real_dup3(oldfd, newfd, flags);
	if (r >= 0)
		copied(oldfd, newfd);
	return r;
}

/* fcntl's third argument is an int or a pointer by command; both travel
 * in the same register class on the ABIs glibc supports, so it is
 * passed on as a pointer (as glibc's own wrapper reads it). */
static int fcntl_common(int (*real)(int, int, ...), int fd, int cmd, void *arg)
{
	int r = real(fd, cmd, arg);

	if (r >= 0 && cmd == F_SETFL) {
		struct run_sock *s = sock_hold(fd);

		if (s) {
			s->nonblock = ((long)arg & O_NONBLOCK) != 0;
			if (s->udp)
				s->udp->nonblock = s->nonblock;
			if (s->tcp)
				s->tcp->nonblock = s->nonblock;
		}
		sock_unref(s);
	}
	if (r >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)) {
		struct run_sock *s = sock_hold(fd);

		if (s)
			share(r, s);
		sock_unref(s);
	}
	return r;
}

EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	ready();
	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(real_fcntl, fd, cmd, arg);
}

EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	ready();
	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(real_fcntl64, fd, cmd, arg);
}

/* exec.h.  Runs in the exec caller (possibly a vfork child): no malloc,
 * no lock; the table is only read. */
int preload_exec_hide(struct exec_hidden *h)
{
	h->n = 0;
	ready();
	for (unsigned int p = 0; p < FDTAB_PAGES; p++) {
		if (!atomic_load_explicit(&table.page[p], memory_order_acquire))
			continue;
		for (unsigned int i = 0; i < FDTAB_PAGE_SIZE; i++) {
			int fd = (int)(p * FDTAB_PAGE_SIZE + i);
			struct run_sock *s = fdtab_get(&table, fd);
			int flags, dead, saved;

			if (!s || !on_unet(s))
				continue;
			flags = real_fcntl(fd, F_GETFD);
			if (flags < 0 || (flags & FD_CLOEXEC))
				continue; /* gone with exec anyway */
			if (h->n == EXEC_MAX_HIDDEN) {
				preload_exec_restore(h);
				run_log("exec refused: more than %d inheritable U-Net sockets",
					EXEC_MAX_HIDDEN);
				errno = EMFILE;
				return -1;
			}
			dead = real_socket(AF_INET, s->type, 0);
			saved = dead < 0 ? -1 : real_fcntl(fd, F_DUPFD_CLOEXEC, 0);
			if (saved < 0 || real_dup2(dead, fd) < 0) {
				int err = errno;

				if (saved >= 0)
					real_close(saved);
				if (dead >= 0)
					real_close(dead);
				preload_exec_restore(h);
				errno = err;
				return -1;
			}
			/* Unconnected, yet shut down both ways: Linux records
			 * the shutdown (and answers ENOTCONN), after which
			 * reads give end of file and writes EPIPE. */
			real_shutdown(fd, SHUT_RDWR);
			real_close(dead);
			h->fd[h->n] = fd;
			h->saved[h->n] = saved;
			h->n++;
			run_log("fd %d %s exec: a shut-down kernel socket in the new image "
				"(U-Net sockets do not outlive exec)",
				fd, s->udp ? "udp" : "tcp");
		}
	}
	return 0;
}

void preload_exec_restore(struct exec_hidden *h)
{
	int err = errno;

	for (int i = 0; i < h->n; i++) {
		real_dup2(h->saved[i], h->fd[i]);
		real_close(h->saved[i]);
	}
	if (h->n)
		run_log("exec failed: %d U-Net sockets put back", h->n);
	h->n = 0;
	errno = err;
}
