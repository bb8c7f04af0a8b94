/* SPDX-License-Identifier: BSD-2-Clause */
/* tables.c - the library's tables of an interface (endpoints, channels,
 * UDP and TCP ports): gathered and sorted, printed one row each, listed
 * over one or every interface; and deleting a port row (udp/tcp del). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "unetctl.h"

/* ---- Listings ---------------------------------------------------------- */

static int list_add(struct list *l, const void *e)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 32;
		void *v = realloc(l->v, cap * l->size);

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	memcpy((char *)l->v + l->n * l->size, e, l->size);
	l->n++;
	return 0;
}

/* Sort what a for_each collected into l, if it went well (err 0).
 * Returns err. */
static int list_sort(struct list *l, int err, int (*cmp)(const void *, const void *))
{
	if (!err && l->n)
		qsort(l->v, l->n, l->size, cmp);
	return err;
}

static int collect_channel(const struct unet_channel_entry *e, void *ctx)
{
	return list_add(ctx, e);
}

static int collect_endpoint(const struct unet_endpoint_entry *e, void *ctx)
{
	return list_add(ctx, e);
}

static int cmp_channel(const void *a, const void *b)
{
	const struct unet_channel_entry *x = a, *y = b;

	return (int)x->tag - (int)y->tag;
}

static int cmp_endpoint(const void *a, const void *b)
{
	const struct unet_endpoint_entry *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int collect_udp(const struct unet_udp_entry *e, void *ctx)
{
	return list_add(ctx, e);
}

/* UDP and TCP ports: by address (addr in network order), then port. */
static int cmp_addr_port(uint32_t xaddr, uint16_t xport, uint32_t yaddr, uint16_t yport)
{
	uint32_t xa = ntohl(xaddr), ya = ntohl(yaddr);

	if (xa != ya)
		return xa < ya ? -1 : 1;
	return (int)xport - (int)yport;
}

/* Where a UDP or TCP port row sorts: IPv4 ports first, then IPv6, each
 * by address and port. */
struct port_place {
	bool v6;
	uint32_t addr;
	const struct in6_addr *addr6;
	uint16_t port;
};

static int cmp_port_place(const struct port_place *x, const struct port_place *y)
{
	int c;

	if (x->v6 != y->v6)
		return x->v6 ? 1 : -1;
	if (!x->v6)
		return cmp_addr_port(x->addr, x->port, y->addr, y->port);
	c = memcmp(x->addr6, y->addr6, sizeof(*x->addr6));
	return c ? c : (int)x->port - (int)y->port;
}

#define PORT_PLACE(e) (&(struct port_place){ (e)->v6, (e)->addr, &(e)->addr6, (e)->port })

static int cmp_udp(const void *a, const void *b)
{
	const struct unet_udp_entry *x = a, *y = b;

	return cmp_port_place(PORT_PLACE(x), PORT_PLACE(y));
}

static int get_udp(struct unet_iface *iface, struct list *l)
{
	l->size = sizeof(struct unet_udp_entry);
	return list_sort(l, unet_iface__for_each_udp(iface, collect_udp, l), cmp_udp);
}

static int collect_tcp(const struct unet_tcp_entry *e, void *ctx)
{
	return list_add(ctx, e);
}

static int cmp_tcp(const void *a, const void *b)
{
	const struct unet_tcp_entry *x = a, *y = b;

	return cmp_port_place(PORT_PLACE(x), PORT_PLACE(y));
}

static int get_tcp(struct unet_iface *iface, struct list *l)
{
	l->size = sizeof(struct unet_tcp_entry);
	return list_sort(l, unet_iface__for_each_tcp(iface, collect_tcp, l), cmp_tcp);
}

int get_endpoints(struct unet_iface *iface, struct list *l)
{
	l->size = sizeof(struct unet_endpoint_entry);
	return list_sort(l, unet_iface__for_each_endpoint(iface, collect_endpoint, l), cmp_endpoint);
}

static int get_channels(struct unet_iface *iface, struct list *l)
{
	l->size = sizeof(struct unet_channel_entry);
	return list_sort(l, unet_iface__for_each_channel(iface, collect_channel, l), cmp_channel);
}

/*
 * One endpoint slot of ifname (with an "iface" member when show_iface),
 * and its kind: "direct" (a process's own AF_XDP sockets) or "unetd" (the
 * daemon's real endpoint).  Under unetd's slot follow the emulated
 * endpoints that the daemon at our socket serves on ifname (kind
 * "emulated", id the daemon's endpoint id, uid and pid from the kernel's
 * SO_PEERCRED of the client's connection, slot: unetd's).
 */
void print_endpoint(const char *ifname, bool show_iface, const struct unet_endpoint_entry *e)
{
	const struct daemon_view *v;
	bool unetd = slot_is_unetd(e->pid, e->comm);

	em_open(NULL, EM_LINE);
	if (show_iface)
		em_str("iface", ifname);
	em_u64("id", e->id);
	em_str("kind", unetd ? "unetd" : "direct");
	em_u64("pid", e->pid);
	em_str("comm", e->comm);
	em_u64("queues", e->nqueues);
	em_u64("queue_mask", e->queue_mask);
	em_bool("stale", e->stale);
	em_close();
	if (!unetd)
		return;
	v = daemon_view();
	if (!v->reachable || v->pid != e->pid) {
		fflush(stdout);
		fprintf(stderr,
			"unetctl: note: slot %u of %s is unetd's (pid %u) but %s: its emulated "
			"endpoints are not listed\n",
			e->id, ifname, e->pid,
			v->reachable ? "the unetd at our socket is another process" : v->err);
		return;
	}
	for (uint32_t i = 0; i < v->st.nlisted; i++) {
		const struct unetd_status_ep *se = &v->eps[i];

		if (strcmp(se->ifname, ifname))
			continue;
		em_open(NULL, EM_LINE);
		if (show_iface)
			em_str("iface", ifname);
		em_u64("id", se->ep);
		em_str("kind", "emulated");
		em_u64("pid", se->pid);
		em_u64("uid", se->uid);
		em_u64("channels", se->nchannels);
		em_u64("slot", e->id);
		em_close();
	}
	if (v->st.nlisted < v->st.nendpoints) {
		fflush(stdout);
		fprintf(stderr,
			"unetctl: note: unetd serves %u endpoints, its status reply lists %u: "
			"the others are not shown\n",
			v->st.nendpoints, v->st.nlisted);
	}
}

/*
 * One channel, and its kind: "emulated" when it is a channel of unetd's
 * real endpoint (one of the daemon's clients holds it: the daemon's
 * status counts channels per client endpoint, not which tags), else
 * "direct".  eps: the interface's endpoint slots.
 */
static void print_channel(const char *ifname, const struct unet_channel_entry *e,
			  const struct list *eps)
{
	const char *comm = "";
	char mac[18];

	for (size_t i = 0; i < eps->n; i++) {
		const struct unet_endpoint_entry *x = &((struct unet_endpoint_entry *)eps->v)[i];

		if (x->id == e->endpoint && x->pid == e->pid)
			comm = x->comm;
	}
	em_open(NULL, EM_LINE);
	em_str("iface", ifname);
	em_u64("tag", e->tag);
	em_str("transport", e->kind == UNET_CHANNEL_UDP4   ? "udp4"
			    : e->kind == UNET_CHANNEL_UDP6 ? "udp6"
							   : "raw");
	em_str("peer_mac", unet_format_mac(e->peer_mac, mac));
	if (e->kind == UNET_CHANNEL_UDP4 || e->kind == UNET_CHANNEL_UDP6) {
		char ip[INET6_ADDRSTRLEN] = "?";

		inet_ntop(e->kind == UNET_CHANNEL_UDP6 ? AF_INET6 : AF_INET, e->peer_addr, ip,
			  sizeof(ip));
		em_str("peer_ip", ip);
		em_u64("peer_port", e->peer_port);
	}
	em_u64("peer_tag", e->peer_tag);
	em_u64("endpoint", e->endpoint);
	em_u64("pid", e->pid);
	em_str("kind", slot_is_unetd(e->pid, comm) ? "emulated" : "direct");
	em_bool("stale", e->stale);
	em_u64("delivered", e->delivered);
	em_u64("delivered_bytes", e->delivered_bytes);
	em_u64("drops", e->drop_wrong_src + e->drop_no_socket);
	em_u64("drop_wrong_src", e->drop_wrong_src);
	em_u64("drop_no_socket", e->drop_no_socket);
	em_close();
}

static void print_udp(const char *ifname, const struct unet_udp_entry *e)
{
	static const struct in6_addr any6;
	char a[INET6_ADDRSTRLEN], r[INET6_ADDRSTRLEN];
	bool any;

	if (e->v6) {
		inet_ntop(AF_INET6, &e->addr6, a, sizeof(a));
		inet_ntop(AF_INET6, &e->remote_addr6, r, sizeof(r));
		any = !memcmp(&e->remote_addr6, &any6, sizeof(any6));
	} else {
		inet_ntop(AF_INET, &e->addr, a, sizeof(a));
		inet_ntop(AF_INET, &e->remote_addr, r, sizeof(r));
		any = !e->remote_addr;
	}
	em_open(NULL, EM_LINE);
	em_str("iface", ifname);
	em_str("family", e->v6 ? "ipv6" : "ipv4");
	em_str("addr", a);
	em_u64("port", e->port);
	em_str("remote_addr", any ? "any" : r);
	em_u64("remote_port", e->remote_port);
	em_u64("endpoint", e->endpoint);
	em_u64("pid", e->pid);
	em_bool("stale", e->stale);
	em_bool("arp", e->answers_arp);
	em_u64("delivered", e->delivered);
	em_u64("delivered_bytes", e->delivered_bytes);
	em_u64("drop_filter", e->drop_filter);
	em_u64("drop_no_socket", e->drop_no_socket);
	em_close();
}

static void print_tcp(const char *ifname, const struct unet_tcp_entry *e)
{
	char a[INET6_ADDRSTRLEN];

	if (e->v6)
		inet_ntop(AF_INET6, &e->addr6, a, sizeof(a));
	else
		inet_ntop(AF_INET, &e->addr, a, sizeof(a));
	em_open(NULL, EM_LINE);
	em_str("iface", ifname);
	em_str("family", e->v6 ? "ipv6" : "ipv4");
	em_str("addr", a);
	em_u64("port", e->port);
	em_str("kind", e->listen ? "listen" : "connection");
	em_u64("endpoint", e->endpoint);
	em_u64("pid", e->pid);
	em_bool("stale", e->stale);
	em_u64("delivered", e->delivered);
	em_u64("delivered_bytes", e->delivered_bytes);
	em_u64("drop_no_socket", e->drop_no_socket);
	em_u64("drop_injected", e->drop_injected);
	em_close();
}

/* channel list / endpoint list / udp list: over IFACE or every attached
 * interface. */
int list_over(const struct cmd *c, int argc, char **argv, enum list_kind kind)
{
	struct names ns = { 0 };
	struct list *lists, *eplists;
	char *pos[1];
	int n, r, err = 0;

	if (root_cmd_start(c, argc, argv, NULL, pos, 0, 1, &n, &r))
		return r;
	if (n == 1) {
		if (collect_name(pos[0], &ns)) {
			free_names(&ns);
			return fail("out of memory");
		}
	} else if ((r = all_ifaces(&ns))) {
		free_names(&ns);
		return r;
	}
	lists = calloc(ns.n ? ns.n : 1, sizeof(*lists));
	eplists = calloc(ns.n ? ns.n : 1, sizeof(*eplists)); /* channels: their slots' kinds */
	if (!lists || !eplists) {
		free(lists);
		free(eplists);
		free_names(&ns);
		return fail("out of memory");
	}
	/* Gather all, then print: an error leaves no half-printed output. */
	for (size_t i = 0; i < ns.n && !r; i++) {
		struct unet_iface *iface = open_iface(ns.v[i]);

		if (!iface) {
			r = 1;
			break;
		}
		err = kind == LIST_CHANNELS ? get_channels(iface, &lists[i])
		      : kind == LIST_UDP    ? get_udp(iface, &lists[i])
		      : kind == LIST_TCP    ? get_tcp(iface, &lists[i])
					    : get_endpoints(iface, &lists[i]);
		if (!err && kind == LIST_CHANNELS)
			err = get_endpoints(iface, &eplists[i]);
		unet_iface__close(iface);
		if (err)
			r = fail_iface(err, ns.v[i]);
	}
	if (!r) {
		em_open_array(kind == LIST_CHANNELS ? "channels"
			      : kind == LIST_UDP    ? "udp"
			      : kind == LIST_TCP    ? "tcp"
						    : "endpoints");
		for (size_t i = 0; i < ns.n; i++) {
			for (size_t j = 0; j < lists[i].n; j++) {
				if (kind == LIST_CHANNELS)
					print_channel(ns.v[i],
						      &((struct unet_channel_entry *)lists[i].v)[j],
						      &eplists[i]);
				else if (kind == LIST_UDP)
					print_udp(ns.v[i], &((struct unet_udp_entry *)lists[i].v)[j]);
				else if (kind == LIST_TCP)
					print_tcp(ns.v[i], &((struct unet_tcp_entry *)lists[i].v)[j]);
				else
					print_endpoint(ns.v[i], true,
						       &((struct unet_endpoint_entry *)lists[i].v)[j]);
			}
		}
		em_close_array();
	}
	for (size_t i = 0; i < ns.n; i++) {
		free(lists[i].v);
		free(eplists[i].v);
	}
	free(lists);
	free(eplists);
	free_names(&ns);
	return r;
}

int port_del(const struct cmd *c, int argc, char **argv, bool tcp)
{
	struct unet_iface *iface;
	struct in_addr a;
	struct in6_addr a6;
	unsigned long port;
	char *pos[2], buf[64], *colon;
	bool v6, ok;
	int n, r, err;

	if (root_cmd_start(c, argc, argv, NULL, pos, 2, 2, &n, &r))
		return r;
	if (strlen(pos[1]) >= sizeof(buf) || !(colon = strrchr(strcpy(buf, pos[1]), ':')))
		return fail("invalid ADDR:PORT: %s", pos[1]);
	*colon = '\0';
	/* IPv6 as [ADDR]:PORT: the address has colons of its own. */
	v6 = buf[0] == '[' && colon > buf + 1 && colon[-1] == ']';
	if (v6) {
		colon[-1] = '\0';
		ok = inet_pton(AF_INET6, buf + 1, &a6) == 1;
	} else {
		ok = inet_pton(AF_INET, buf, &a) == 1;
	}
	if (!ok || parse_uint(colon + 1, 1, 65535, &port))
		return fail("invalid ADDR:PORT: %s", pos[1]);
	iface = open_iface(pos[0]);
	if (!iface)
		return 1;
	err = tcp && v6 ? unet_iface__tcp_del6(iface, &a6, (uint16_t)port)
	      : tcp	? unet_iface__tcp_del(iface, a.s_addr, (uint16_t)port)
	      : v6	? unet_iface__udp_del6(iface, &a6, (uint16_t)port)
		   : unet_iface__udp_del(iface, a.s_addr, (uint16_t)port);
	unet_iface__close(iface);
	if (err == -ENOENT)
		return fail("no %s port %s on %s", tcp ? "TCP" : "UDP", pos[1], pos[0]);
	if (err)
		return fail_iface(err, pos[0]);
	em_open(NULL, EM_LINE);
	em_str("iface", pos[0]);
	em_str("addr", v6 ? buf + 1 : buf);
	em_u64("port", port);
	em_bool("deleted", true);
	em_close();
	return 0;
}
