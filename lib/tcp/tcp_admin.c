/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcp_admin.c - the kernel's side of TCP over U-Net: ports in the
 * interface's unet_tcp_ports and unet_tcp6_ports maps (install, remove,
 * list, delete, reclaim), the kernel socket that holds each port against the kernel's
 * own TCP (the neighbour map is lib/inet/neigh.c's).  Ownership works as for UDP ports
 * (udp_admin.c): an entry names its endpoint slot and the incarnation's
 * token, and is stale once that incarnation is gone.  lwIP's headers are
 * not included here: they redefine the socket API's names.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <bpf/bpf.h>

#include "core/layer.h"
#include "inet/port_group.h"
#include "tcp/tcp_impl.h"
#include "unet-xdp/unet_tcp.h"

#ifndef IPV6_FREEBIND
#define IPV6_FREEBIND 78 /* linux/in6.h; older libc headers lack it */
#endif

/* Both maps hold struct unet_tcp_val (bpf/unet_abi.h), under a 4- or a
 * 16-byte address: the core opens each once per iface and checks it. */
static int tcp_map_fd(struct unet_iface *iface, const char *name, uint32_t key_size)
{
	return unet_iface_map(iface, name, BPF_MAP_TYPE_HASH, key_size,
			      sizeof(struct unet_tcp_val));
}

static int ports_fd(struct unet_iface *iface)
{
	return tcp_map_fd(iface, UNET_MAP_TCP_PORTS, sizeof(struct unet_tcp_key));
}

static int ports6_fd(struct unet_iface *iface)
{
	return tcp_map_fd(iface, UNET_MAP_TCP6_PORTS, sizeof(struct unet_tcp6_key));
}

/* Where the owner sits in the value, for the core's owned-entry helpers
 * (core/layer.h), under either key. */
#define TCP_OWNED_MAP(key_type)							\
	{									\
		.key_size = sizeof(key_type),					\
		.val_size = sizeof(struct unet_tcp_val),			\
		.max_entries = UNET_MAX_TCP_PORTS,				\
		.endpoint_off = offsetof(struct unet_tcp_val, endpoint),	\
		.token_off = offsetof(struct unet_tcp_val, owner_token),	\
	}
static const struct unet_owned_map ports_map = TCP_OWNED_MAP(struct unet_tcp_key);
static const struct unet_owned_map ports6_map = TCP_OWNED_MAP(struct unet_tcp6_key);

/* The same maps for inet/port_group.h: the IPv4 one also for SO_REUSEPORT
 * listener groups, both for unet_port_put and unet_port_delete. */
#define TCP_PORT_KIND(label, owned, fd)						\
	{									\
		.proto = IPPROTO_TCP,						\
		.name = (label),						\
		.map = (owned),							\
		.flags_off = offsetof(struct unet_tcp_val, flags),		\
		.flags_size = sizeof(((struct unet_tcp_val *)0)->flags),	\
		.pid_off = offsetof(struct unet_tcp_val, owner_pid),		\
		.ports_fd = (fd),						\
	}
static const struct unet_port_kind ports_kind = TCP_PORT_KIND("TCP", &ports_map, ports_fd);
static const struct unet_port_kind ports6_kind =
	TCP_PORT_KIND("TCP/IPv6", &ports6_map, ports6_fd);

/* A port entry's value for endpoint's current incarnation, made by this
 * process (the owner opens its own ports): 0, or -ESRCH if no live
 * incarnation holds the slot. */
static int port_val(struct unet_iface *iface, uint32_t endpoint, uint32_t flags,
		    struct unet_tcp_val *v)
{
	memset(v, 0, sizeof(*v));
	v->endpoint = endpoint;
	v->flags = flags;
	v->owner_pid = (uint32_t)getpid();
	v->owner_token = unet_iface_slot_token(iface, endpoint);
	return v->owner_token ? 0 : -ESRCH;
}

bool unet_tcp_group_live(struct unet_iface *iface, uint32_t laddr, uint16_t lport)
{
	return unet_port_group_busy(iface, &ports_kind, laddr, lport);
}

int unet_tcp_port_join(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr,
		       uint16_t lport, uint32_t uid)
{
	struct unet_tcp_val v;
	int err;

	err = port_val(iface, endpoint, UNET_TCP_PORT_LISTEN | UNET_PORT_F_GROUP, &v);
	if (err)
		return err;
	err = unet_port_group_join(iface, &ports_kind, endpoint, laddr, lport, uid, &v);
	if (err == -EADDRINUSE)
		unet_log(UNET_LOG_ERROR, "%s: TCP port %u in use without SO_REUSEPORT",
			 iface->ifname, lport);
	return err;
}

int unet_tcp_port_add(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr,
		      uint16_t lport, uint32_t flags)
{
	int pfd = ports_fd(iface);
	struct unet_tcp_key key = { .addr = laddr, .port = htons(lport) };
	struct unet_tcp_val v;
	int err;

	if (pfd < 0)
		return pfd;
	err = port_val(iface, endpoint, flags, &v);
	if (err)
		return err;
	/* A listener group whose entry names a dead member is still held
	 * by the others. */
	if (unet_port_group_busy(iface, &ports_kind, laddr, lport))
		return -EADDRINUSE;
	return unet_port_put(iface, pfd, &ports_kind, &key, &v, lport);
}

void unet_tcp_port_remove(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr,
			  uint16_t lport)
{
	int pfd = ports_fd(iface);
	struct unet_tcp_key key = { .addr = laddr, .port = htons(lport) };

	if (pfd >= 0 && !unet_port_group_leave(iface, &ports_kind, endpoint, laddr, lport))
		unet_owned_remove(iface, pfd, &ports_map, &key, endpoint);
}

/* unet_iface__for_each_tcp's walk: the caller's fn. */
struct tcp_each {
	int (*fn)(const struct unet_tcp_entry *, void *ctx);
	void *ctx;
};

static int tcp6_each_entry(const void *key, const void *val, bool stale, void *ctx);

/* The listing row of a value, either map's; the caller adds the address. */
static struct unet_tcp_entry entry_of(const struct unet_tcp_val *v, uint16_t port_be, bool stale)
{
	struct unet_tcp_entry e;

	memset(&e, 0, sizeof(e));
	e.port = ntohs(port_be);
	e.listen = v->flags & UNET_TCP_PORT_LISTEN;
	e.endpoint = v->endpoint;
	e.pid = v->owner_pid;
	e.stale = stale;
	e.delivered = v->delivered;
	e.delivered_bytes = v->delivered_bytes;
	e.drop_no_socket = v->drop_no_socket;
	e.drop_injected = v->drop_injected;
	return e;
}

static int tcp_each_entry(const void *key, const void *val, bool stale, void *ctx)
{
	const struct unet_tcp_key *k = key;
	struct tcp_each *w = ctx;
	struct unet_tcp_entry e = entry_of(val, k->port, stale);

	e.addr = k->addr;
	return w->fn(&e, w->ctx);
}

int unet_iface__for_each_tcp(struct unet_iface *iface,
			     int (*fn)(const struct unet_tcp_entry *, void *ctx), void *ctx)
{
	struct tcp_each w = { .fn = fn, .ctx = ctx };
	int pfd, err;

	if (!iface || !fn)
		return -EINVAL;
	pfd = ports_fd(iface);
	if (pfd < 0)
		return pfd;
	err = unet_owned_each(iface, pfd, &ports_map, tcp_each_entry, &w);
	if (err)
		return err;
	pfd = ports6_fd(iface);
	if (pfd < 0)
		return pfd;
	return unet_owned_each(iface, pfd, &ports6_map, tcp6_each_entry, &w);
}

int unet_iface__tcp_del(struct unet_iface *iface, uint32_t addr, uint16_t port)
{
	struct unet_tcp_key key = { .addr = addr, .port = htons(port) };

	if (!iface)
		return -EINVAL;
	return unet_port_delete(iface, &ports_kind, &key);
}

static void port_reclaimed(struct unet_iface *iface, const void *key, const void *val)
{
	unet_log(UNET_LOG_INFO, "%s: reclaimed TCP port %u (endpoint %u)", iface->ifname,
		 ntohs(((const struct unet_tcp_key *)key)->port),
		 ((const struct unet_tcp_val *)val)->endpoint);
}

/* Delete the dead owners' entries of one of the maps, telling reclaimed
 * of each. */
static int reclaim_ports(struct unet_iface *iface, const struct unet_port_kind *k,
			 void (*reclaimed)(struct unet_iface *iface, const void *key,
					   const void *val))
{
	int pfd = k->ports_fd(iface);

	if (pfd < 0)
		return pfd;
	return unet_owned_reclaim(iface, pfd, k->map, reclaimed);
}

int unet_tcp_reclaim(struct unet_iface *iface)
{
	/* Groups first: a group's entry naming a dead member moves to a
	 * live one, and is not reclaimed below.  (It opens the port map
	 * first too: an error there is the same error below.) */
	unet_port_group_reclaim(iface, &ports_kind);
	return reclaim_ports(iface, &ports_kind, port_reclaimed);
}

/* ---- IPv6: unet_tcp6_ports ---------------------------------------------- */

static struct unet_tcp6_key key6(const uint8_t laddr[16], uint16_t lport)
{
	struct unet_tcp6_key key;

	memset(&key, 0, sizeof(key));
	memcpy(key.addr, laddr, 16);
	key.port = htons(lport);
	return key;
}

int unet_tcp6_port_add(struct unet_iface *iface, uint32_t endpoint, const uint8_t laddr[16],
		       uint16_t lport, uint32_t flags)
{
	int pfd = ports6_fd(iface);
	struct unet_tcp6_key key = key6(laddr, lport);
	struct unet_tcp_val v;
	int err;

	if (pfd < 0)
		return pfd;
	err = port_val(iface, endpoint, flags, &v);
	if (err)
		return err;
	return unet_port_put(iface, pfd, &ports6_kind, &key, &v, lport);
}

void unet_tcp6_port_remove(struct unet_iface *iface, uint32_t endpoint, const uint8_t laddr[16],
			   uint16_t lport)
{
	int pfd = ports6_fd(iface);
	struct unet_tcp6_key key = key6(laddr, lport);

	if (pfd >= 0)
		unet_owned_remove(iface, pfd, &ports6_map, &key, endpoint);
}

static int tcp6_each_entry(const void *key, const void *val, bool stale, void *ctx)
{
	const struct unet_tcp6_key *k = key;
	struct tcp_each *w = ctx;
	struct unet_tcp_entry e = entry_of(val, k->port, stale);

	e.v6 = true;
	memcpy(e.addr6.s6_addr, k->addr, 16);
	return w->fn(&e, w->ctx);
}

int unet_iface__tcp_del6(struct unet_iface *iface, const struct in6_addr *addr, uint16_t port)
{
	struct unet_tcp6_key key;

	if (!iface || !addr)
		return -EINVAL;
	key = key6(addr->s6_addr, port);
	return unet_port_delete(iface, &ports6_kind, &key);
}

static void port6_reclaimed(struct unet_iface *iface, const void *key, const void *val)
{
	unet_log(UNET_LOG_INFO, "%s: reclaimed TCP/IPv6 port %u (endpoint %u)", iface->ifname,
		 ntohs(((const struct unet_tcp6_key *)key)->port),
		 ((const struct unet_tcp_val *)val)->endpoint);
}

int unet_tcp6_reclaim(struct unet_iface *iface)
{
	return reclaim_ports(iface, &ports6_kind, port6_reclaimed);
}

/* Both maps: the core's reclaim hook. */
static int tcp_reclaim_all(struct unet_iface *iface)
{
	int n = unet_tcp_reclaim(iface), n6 = unet_tcp6_reclaim(iface);

	if (n < 0)
		return n;
	return n6 < 0 ? n6 : n + n6;
}

static struct unet_iface_layer tcp_iface_layer = {
	.name = "tcp",
	.reclaim = tcp_reclaim_all,
};

__attribute__((constructor)) static void tcp_iface_layer_init(void)
{
	unet_iface_layer_register(&tcp_iface_layer);
}

/* ---- The kernel's side ---------------------------------------------------- */

/*
 * Bind fd (its family's options set) to sa, of len bytes, as the kernel
 * socket holding a U-Net port, and read back the port bound (sa).  A
 * listening port is taken as a kernel server takes one: reusing it over
 * connections in TIME_WAIT (SO_REUSEADDR), and listening, which keeps
 * every other socket off it, SO_REUSEADDR or not -- once the caller has
 * put the port in the map (unet_tcp_reserve_listen), so the XDP program
 * gives U-Net every segment for it and this listener never sees one while
 * we live.  A connection's port (chosen by the kernel) is only bound.
 * Returns fd, or -errno with fd closed.
 */
static int hold_port(int fd, void *sa, socklen_t len, bool listening, bool group)
{
	int one = 1, err;

	if (listening)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if ((group && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one))) ||
	    bind(fd, (struct sockaddr *)sa, len) || getsockname(fd, (struct sockaddr *)sa, &len)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

static int reserve(uint32_t laddr, uint16_t *lport, bool listening, bool group)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = laddr,
				  .sin_port = htons(*lport) };
	int one = 1, fd;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* The address may be one only U-Net answers for (not the kernel's). */
	setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof(one));
	fd = hold_port(fd, &sa, sizeof(sa), listening, group);
	if (fd >= 0)
		*lport = ntohs(sa.sin_port);
	return fd;
}

int unet_tcp_reserve(uint32_t laddr, uint16_t *lport, bool listening)
{
	return reserve(laddr, lport, listening, false);
}

int unet_tcp_reserve_group(uint32_t laddr, uint16_t lport)
{
	return reserve(laddr, &lport, true, true);
}

int unet_tcp_reserve_listen(int fd)
{
	return listen(fd, 1) ? -errno : 0;
}

int unet_tcp6_reserve(const uint8_t laddr[16], uint16_t *lport, bool listening)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons(*lport) };
	int one = 1, fd;

	memcpy(&sa.sin6_addr, laddr, 16);
	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* IPv6 only (an IPv4 port of the same number is another port), and
	 * the address may be one only U-Net answers for; the rest as for
	 * IPv4 (unet_tcp_reserve). */
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	setsockopt(fd, IPPROTO_IPV6, IPV6_FREEBIND, &one, sizeof(one));
	fd = hold_port(fd, &sa, sizeof(sa), listening, false);
	if (fd >= 0)
		*lport = ntohs(sa.sin6_port);
	return fd;
}
