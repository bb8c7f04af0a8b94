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
 *
 * This version decides and logs but accelerates nothing: every socket
 * stays the kernel's, and the log says why (for a socket U-Net would
 * serve: that its protocol is not built yet).
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config.h"
#include "fdtab.h"
#include "log.h"
#include "route.h"

#define EXPORT __attribute__((visibility("default")))

/* An AF_INET socket whose fate is not decided yet; shared (counted) by
 * the descriptors dup() made of it. */
struct run_sock {
	atomic_uint refs;
	int type; /* SOCK_DGRAM or SOCK_STREAM */
};

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
static int (*real_dup)(int);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);
static int (*real_fcntl)(int, int, ...);
static int (*real_fcntl64)(int, int, ...);

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void *next(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f) {
		/* Without libc's own function there is nothing to pass through to. */
		static const char msg[] = "libunet-preload: libc function missing: ";
		(void)!write(2, msg, sizeof(msg) - 1);
		(void)!write(2, name, strlen(name));
		(void)!write(2, "\n", 1);
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
	real_dup = next("dup");
	real_dup2 = next("dup2");
	real_dup3 = next("dup3");
	real_fcntl = next("fcntl");
	/* fcntl64 is what programs built with 64-bit off_t on 32-bit
	 * systems call; glibc has it everywhere since 2.28. */
	real_fcntl64 = dlsym(RTLD_NEXT, "fcntl64");
	if (!real_fcntl64)
		real_fcntl64 = real_fcntl;
	run_config_parse(&cfg, getenv("UNET_RUN_IFACE"), getenv("UNET_RUN_LOG"),
			 getenv("UNET_RUN_SPIN_US"), getenv("UNET_PIN_ROOT"), err, sizeof(err));
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

static void sock_unref(struct run_sock *s)
{
	if (s && atomic_fetch_sub(&s->refs, 1) == 1)
		free(s);
}

/* Drop whatever the table holds for fd (the descriptor is gone or is
 * being reused by the kernel). */
static void forget(int fd)
{
	sock_unref(fdtab_take(&table, fd));
}

/* fd became a copy of the socket s (dup and friends). */
static void share(int fd, struct run_sock *s)
{
	void *old = NULL;

	atomic_fetch_add(&s->refs, 1);
	if (fdtab_set(&table, fd, s, &old) < 0) {
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

/* Why socket s, for op on addr, stays with the kernel (in this version
 * every socket does).  local: addr is the socket's own (bind, listen),
 * else a peer's. */
static void kernel_reason(const struct run_sock *s, bool local, const struct sockaddr *addr,
			  socklen_t len, char *why, size_t n)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;
	char ifname[IF_NAMESIZE];
	uint32_t ip, src;
	int err;

	if (!addr) {
		ip = htonl(INADDR_ANY);
	} else if (len < sizeof(*sin) || addr->sa_family != AF_INET) {
		snprintf(why, n, "the address is not IPv4");
		return;
	} else {
		ip = sin->sin_addr.s_addr;
	}
	if (local && ip == htonl(INADDR_ANY)) {
		if (!run_config_any(&cfg)) {
			snprintf(why, n, "wildcard address, and no interface named or attached");
			return;
		}
		snprintf(why, n, "wildcard address: %s over U-Net is not built in this version",
			 s->type == SOCK_DGRAM ? "UDP" : "TCP");
		return;
	}
	if (route_is_loopback(ip)) {
		snprintf(why, n, "loopback");
		return;
	}
	err = local ? route_local(ip, ifname) : route_lookup(ip, &src, ifname);
	if (err) {
		snprintf(why, n, "%s: %s", local ? "no interface holds the address" : "no route",
			 strerror(-err));
		return;
	}
	if (strcmp(ifname, "lo") == 0) {
		snprintf(why, n, "loopback (the address is local)");
		return;
	}
	if (!run_config_serves(&cfg, ifname)) {
		if (cfg.ifaces[0])
			snprintf(why, n, "by %s, not a U-Net interface (UNET_RUN_IFACE=%.160s)", ifname,
				 cfg.ifaces);
		else
			snprintf(why, n, "by %s, which has no XDP program attached", ifname);
		return;
	}
	snprintf(why, n, "by %s: %s over U-Net is not built in this version", ifname,
		 s->type == SOCK_DGRAM ? "UDP" : "TCP");
}

/* The first call that says where fd's traffic goes: decide, log, and
 * (this version) leave the socket to the kernel. */
static void decide(int fd, struct run_sock *s, const char *op, bool local,
		   const struct sockaddr *addr, socklen_t len)
{
	if (run_log_on()) {
		char a[64], why[256];

		format_addr(addr, len, a, sizeof(a));
		kernel_reason(s, local, addr, len, why, sizeof(why));
		run_log("fd %d %s %s %s: kernel (%s)", fd, proto_name(s), op, a, why);
	}
	forget(fd);
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
	if (fd < 0)
		return fd;
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
	s = malloc(sizeof(*s));
	if (s) {
		atomic_init(&s->refs, 1);
		s->type = base;
	}
	if (!s || fdtab_set(&table, fd, s, &old) < 0) {
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

/* A connection accepted on a kernel listener is the kernel's. */
static void log_accepted(int lfd, int fd)
{
	if (fd >= 0 && run_log_on())
		run_log("fd %d accepted on fd %d: kernel (the listener is the kernel's)", fd, lfd);
}

EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	int r;

	ready();
	r = real_accept(fd, addr, len);
	log_accepted(fd, r);
	return r;
}

EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	int r;

	ready();
	r = real_accept4(fd, addr, len, flags);
	log_accepted(fd, r);
	return r;
}

EXPORT int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct run_sock *s;

	ready();
	s = fdtab_get(&table, fd);
	if (s)
		decide(fd, s, "bind", true, addr, len);
	return real_bind(fd, addr, len);
}

EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct run_sock *s;

	ready();
	s = fdtab_get(&table, fd);
	if (s)
		decide(fd, s, "connect", false, addr, len);
	return real_connect(fd, addr, len);
}

EXPORT int listen(int fd, int backlog)
{
	struct run_sock *s;

	ready();
	s = fdtab_get(&table, fd);
	if (s)
		decide(fd, s, "listen", true, NULL, 0);
	return real_listen(fd, backlog);
}

EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *addr,
		      socklen_t len)
{
	struct run_sock *s;

	ready();
	s = fdtab_get(&table, fd);
	if (s && addr)
		decide(fd, s, "sendto", false, addr, len);
	return real_sendto(fd, buf, n, flags, addr, len);
}

EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	struct run_sock *s;

	ready();
	s = fdtab_get(&table, fd);
	if (s && msg && msg->msg_name)
		decide(fd, s, "sendmsg", false, msg->msg_name, msg->msg_namelen);
	return real_sendmsg(fd, msg, flags);
}

EXPORT int close(int fd)
{
	ready();
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
	s = fdtab_get(&table, fd);
	if (r >= 0 && s)
		share(r, s);
	return r;
}

/* After the kernel made newfd a copy of oldfd: newfd's old socket (if
 * it was ours) is gone, and it now is whatever oldfd is. */
static void copied(int oldfd, int newfd)
{
	struct run_sock *s = fdtab_get(&table, oldfd);

	if (s)
		share(newfd, s);
	else if (fdtab_get(&table, newfd))
		forget(newfd);
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

	if (r >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)) {
		struct run_sock *s = fdtab_get(&table, fd);

		if (s)
			share(r, s);
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
