/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * steer.c - unetctl steer: the flow steering rules (ethtool ntuple
 * filters) that put each endpoint's traffic on a queue it bound.
 *
 * The XDP program redirects a frame only to its owner's socket on the
 * queue the frame arrived on (drop_no_socket otherwise), so on a NIC with
 * several queues an endpoint's flows must arrive on its queues.  For
 * every routable channel (IPv4 or IPv6), UDP port and TCP port (IPv4 or
 * IPv6) of the chosen endpoints this prints the rule, as the line to
 * paste (flow-type udp4, tcp4, udp6, tcp6); --install inserts
 * them through the ethtool ioctl (all of them or none), --remove deletes
 * the driver's rules that are exactly these.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/sockios.h>

#include "steer_rule.h"
#include "unetctl.h"

/* One rule and what it is for. */
struct steer_item {
	struct steer_rule rule;
	uint32_t endpoint;
	uint32_t queue_mask;
	const char *object; /* "channel", "udp", "tcp" */
	uint32_t key;	    /* the channel's tag, the port */
	uint32_t location;  /* where the driver put it (--install) */
};

struct steer_ctx {
	const char *ifname;
	bool one_endpoint;
	uint32_t endpoint;
	uint32_t local_ip; /* network order, 0: the interface has none */
	uint16_t chan_port;
	struct list eps; /* struct unet_endpoint_entry, by id */
	struct list items;
	unsigned int skipped_raw, any_dst6, chan4;
};

static int item_add(struct list *l, const struct steer_item *it)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		void *v = realloc(l->v, cap * sizeof(*it));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	((struct steer_item *)l->v)[l->n++] = *it;
	return 0;
}

/* The live endpoint slot id, if it is one we steer; NULL otherwise. */
static const struct unet_endpoint_entry *steered_ep(const struct steer_ctx *s, uint32_t id)
{
	if (s->one_endpoint && id != s->endpoint)
		return NULL;
	for (size_t i = 0; i < s->eps.n; i++) {
		const struct unet_endpoint_entry *e = &((struct unet_endpoint_entry *)s->eps.v)[i];

		if (e->id == id)
			return e->stale || !e->queue_mask ? NULL : e;
	}
	return NULL;
}

/* A rule for endpoint e's object, to e's first queue. */
static int add_rule(struct steer_ctx *s, const struct unet_endpoint_entry *e, struct steer_rule r,
		    const char *object, uint32_t key)
{
	struct steer_item it = {
		.endpoint = e->id,
		.queue_mask = e->queue_mask,
		.object = object,
		.key = key,
	};

	r.queue = (uint32_t)steer_first_queue(e->queue_mask);
	it.rule = r;
	return item_add(&s->items, &it);
}

static bool local_ipv6(const char *ifname, const struct in6_addr *peer, struct in6_addr *out);

static int steer_channel(const struct unet_channel_entry *c, void *ctx)
{
	struct steer_ctx *s = ctx;
	const struct unet_endpoint_entry *e = steered_ep(s, c->endpoint);
	struct steer_rule r = { .tcp = false };

	if (!e || c->stale)
		return 0;
	if (c->kind == UNET_CHANNEL_UDP6) {
		r.v6 = true;
		memcpy(&r.src_ip6, c->peer_addr, 16);
		r.src_port = c->peer_port;
		if (!local_ipv6(s->ifname, &r.src_ip6, &r.dst_ip6))
			s->any_dst6++;
		r.dst_port = s->chan_port;
		return add_rule(s, e, r, "channel", c->tag);
	}
	if (c->kind != UNET_CHANNEL_UDP4) {
		s->skipped_raw++;
		return 0;
	}
	/* What the peer sends: from its address and its channel's source
	 * port, to our address and the interface's channel port. */
	s->chan4++;
	memcpy(&r.src_ip, c->peer_addr, 4);
	r.src_port = c->peer_port;
	r.dst_ip = s->local_ip;
	r.dst_port = s->chan_port;
	return add_rule(s, e, r, "channel", c->tag);
}

static int steer_udp(const struct unet_udp_entry *u, void *ctx)
{
	struct steer_ctx *s = ctx;
	const struct unet_endpoint_entry *e = steered_ep(s, u->endpoint);
	struct steer_rule r = { .tcp = false };

	if (!e || u->stale)
		return 0;
	/* A connected port takes only its peer's datagrams: so does the
	 * rule; an open one takes anyone's. */
	if (u->v6) {
		r.v6 = true;
		r.src_ip6 = u->remote_addr6;
		r.src_port = u->remote_port;
		r.dst_ip6 = u->addr6;
		r.dst_port = u->port;
		return add_rule(s, e, r, "udp", u->port);
	}
	r.src_ip = u->remote_addr;
	r.src_port = u->remote_port;
	r.dst_ip = u->addr;
	r.dst_port = u->port;
	return add_rule(s, e, r, "udp", u->port);
}

static int steer_tcp(const struct unet_tcp_entry *t, void *ctx)
{
	struct steer_ctx *s = ctx;
	const struct unet_endpoint_entry *e = steered_ep(s, t->endpoint);
	struct steer_rule r = { .tcp = true };

	if (!e || t->stale)
		return 0;
	if (t->v6) {
		r.v6 = true;
		r.dst_ip6 = t->addr6;
		r.dst_port = t->port;
		return add_rule(s, e, r, "tcp", t->port);
	}
	r.dst_ip = t->addr;
	r.dst_port = t->port;
	return add_rule(s, e, r, "tcp", t->port);
}

static int collect_ep(const struct unet_endpoint_entry *e, void *ctx)
{
	struct list *l = ctx;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		void *v = realloc(l->v, cap * sizeof(*e));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	((struct unet_endpoint_entry *)l->v)[l->n++] = *e;
	return 0;
}

static int cmp_ep(const void *a, const void *b)
{
	const struct unet_endpoint_entry *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Rules by endpoint, then channels, UDP, TCP ("c" < "t" < "u" would put
 * TCP first: the order is spelt out), then tag or port. */
static int object_rank(const char *o)
{
	return !strcmp(o, "channel") ? 0 : !strcmp(o, "udp") ? 1 : 2;
}

static int cmp_item(const void *a, const void *b)
{
	const struct steer_item *x = a, *y = b;

	if (x->endpoint != y->endpoint)
		return x->endpoint < y->endpoint ? -1 : 1;
	if (object_rank(x->object) != object_rank(y->object))
		return object_rank(x->object) - object_rank(y->object);
	return x->key < y->key ? -1 : x->key > y->key;
}

/* The interface's first IPv4 address (network order; 0: none): where
 * routable channels' peers send, as the library's own sends come from
 * it. */
static uint32_t local_ipv4(const char *ifname)
{
	struct ifaddrs *ifa;
	uint32_t addr = 0;

	if (getifaddrs(&ifa))
		return 0;
	for (struct ifaddrs *i = ifa; i && !addr; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && !strcmp(i->ifa_name, ifname))
			addr = ((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr.s_addr;
	freeifaddrs(ifa);
	return addr;
}

static bool ip6_link_local(const struct in6_addr *a)
{
	return a->s6_addr[0] == 0xfe && (a->s6_addr[1] & 0xc0) == 0x80;
}

/* Where an IPv6 channel's peer sends: the address the channel sends
 * from, which the library takes as the kernel does (its source for the
 * peer out of this interface, RFC 6724), else the interface's first of
 * the peer's scope.  The kernel's answer comes from connecting a UDP
 * socket bound to the interface (nothing is sent).  false: the
 * interface has no such address (the rule then matches any). */
static bool local_ipv6(const char *ifname, const struct in6_addr *peer, struct in6_addr *out)
{
	struct sockaddr_in6 to = { .sin6_family = AF_INET6, .sin6_addr = *peer,
				   .sin6_port = htons(9) };
	struct sockaddr_in6 me;
	socklen_t sl = sizeof(me);
	bool want_ll = ip6_link_local(peer), kernel = false, found = false;
	struct ifaddrs *ifa;
	int fd;

	to.sin6_scope_id = if_nametoindex(ifname);
	fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		kernel = !setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname,
				     (socklen_t)strlen(ifname) + 1) &&
			 !connect(fd, (struct sockaddr *)&to, sizeof(to)) &&
			 !getsockname(fd, (struct sockaddr *)&me, &sl) &&
			 ip6_link_local(&me.sin6_addr) == want_ll;
		close(fd);
	}
	if (getifaddrs(&ifa))
		return false;
	/* The kernel's choice if it is this interface's; else the first of
	 * the peer's scope (the library's own rule). */
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
		const struct in6_addr *a;

		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET6 || strcmp(i->ifa_name, ifname))
			continue;
		a = &((const struct sockaddr_in6 *)(const void *)i->ifa_addr)->sin6_addr;
		if (ip6_link_local(a) != want_ll)
			continue;
		if (kernel && !memcmp(a, &me.sin6_addr, sizeof(*a))) {
			*out = *a;
			found = true;
			break;
		}
		if (!found) {
			*out = *a;
			found = true;
			if (!kernel)
				break;
		}
	}
	freeifaddrs(ifa);
	return found;
}

/* Gather the interface's tables and build the rules.  Returns 0 or 1
 * (error printed). */
static int build_rules(struct steer_ctx *s)
{
	struct unet_iface *iface = open_iface(s->ifname);
	int port, err;

	if (!iface)
		return 1;
	port = unet_iface__chan_port(iface);
	err = port < 0 ? port : unet_iface__for_each_endpoint(iface, collect_ep, &s->eps);
	if (!err) {
		s->chan_port = (uint16_t)port;
		if (s->eps.n)
			qsort(s->eps.v, s->eps.n, sizeof(struct unet_endpoint_entry), cmp_ep);
		err = unet_iface__for_each_channel(iface, steer_channel, s);
	}
	if (!err)
		err = unet_iface__for_each_udp(iface, steer_udp, s);
	if (!err)
		err = unet_iface__for_each_tcp(iface, steer_tcp, s);
	unet_iface__close(iface);
	if (err)
		return fail_iface(err, s->ifname);
	if (s->items.n)
		qsort(s->items.v, s->items.n, sizeof(struct steer_item), cmp_item);
	return 0;
}

/* Notes for what the rules cannot say, on stderr: stdout stays a list of
 * lines to paste. */
static void print_notes(const struct steer_ctx *s)
{
	fflush(stdout);
	for (size_t i = 0; i < s->eps.n; i++) {
		const struct unet_endpoint_entry *e = &((struct unet_endpoint_entry *)s->eps.v)[i];
		char qs[4 * 32] = "";
		size_t off = 0;

		if (s->one_endpoint && e->id != s->endpoint)
			continue;
		if (e->stale)
			continue;
		if (!e->queue_mask) {
			fprintf(stderr,
				"unetctl: note: endpoint %u on %s does not record its queues (its "
				"owner's library predates it): not steered\n",
				e->id, s->ifname);
			continue;
		}
		for (int q = 0; q < 32; q++)
			if (e->queue_mask & (1u << q))
				off += (size_t)snprintf(qs + off, sizeof(qs) - off, "%s%d",
							off ? "," : "", q);
		fprintf(stderr,
			"unetctl: note: endpoint %u on %s bound queue%s %s: its rules send to queue "
			"%d, the first\n",
			e->id, s->ifname, e->nqueues == 1 ? "" : "s", qs,
			steer_first_queue(e->queue_mask));
	}
	if (!s->local_ip && s->chan4)
		fprintf(stderr,
			"unetctl: note: %s has no IPv4 address: channel rules match any destination "
			"address\n",
			s->ifname);
	if (s->skipped_raw)
		fprintf(stderr,
			"unetctl: note: %u raw channel%s (EtherType 0x88B5) not steered: ntuple "
			"rules match IP flows\n",
			s->skipped_raw, s->skipped_raw == 1 ? "" : "s");
	if (s->any_dst6)
		fprintf(stderr,
			"unetctl: note: %s has no IPv6 address of the peer's scope for %u IPv6 "
			"channel%s: %s match any destination address\n",
			s->ifname, s->any_dst6, s->any_dst6 == 1 ? "" : "s",
			s->any_dst6 == 1 ? "its rule does" : "their rules");
}

/* Text: the line to paste, what it is for after a '#' (where: "installed
 * at location " or "removed from location ", or NULL). */
static void print_item(const struct steer_ctx *s, const struct steer_item *it, const char *where)
{
	const struct steer_rule *r = &it->rule;
	char line[256], num[16];

	steer_rule_format(r, s->ifname, line, sizeof(line));
	em_open(NULL, EM_LINE);
	em_bare("rule", "", line);
	snprintf(num, sizeof(num), "%u", it->endpoint);
	em_bare("endpoint_text", "# endpoint ", num);
	snprintf(num, sizeof(num), "%u", it->key);
	em_bare("for", !strcmp(it->object, "channel") ? "channel tag " : !strcmp(it->object, "udp")
			   ? "udp port " : "tcp port ", num);
	if (where) {
		snprintf(num, sizeof(num), "%u", it->location);
		em_bare("location_text", where, num);
	}
	em_close();
}

/* JSON: every field on its own. */
static void print_item_json(const struct steer_ctx *s, const struct steer_item *it, bool installed)
{
	const struct steer_rule *r = &it->rule;
	char line[256], ip[INET6_ADDRSTRLEN];
	static const struct in6_addr any6;

	steer_rule_format(r, s->ifname, line, sizeof(line));
	em_open(NULL, EM_LINE);
	em_str("iface", s->ifname);
	em_u64("endpoint", it->endpoint);
	em_str("object", it->object);
	em_u64(!strcmp(it->object, "channel") ? "tag" : "port", it->key);
	em_str("flow_type", steer_rule_flow(r));
	if (r->v6) {
		em_str("src_ip", memcmp(&r->src_ip6, &any6, sizeof(any6))
					 ? inet_ntop(AF_INET6, &r->src_ip6, ip, sizeof(ip))
					 : "any");
		em_str("dst_ip", memcmp(&r->dst_ip6, &any6, sizeof(any6))
					 ? inet_ntop(AF_INET6, &r->dst_ip6, ip, sizeof(ip))
					 : "any");
	} else {
		em_str("src_ip", r->src_ip ? inet_ntop(AF_INET, &r->src_ip, ip, sizeof(ip)) : "any");
		em_str("dst_ip", r->dst_ip ? inet_ntop(AF_INET, &r->dst_ip, ip, sizeof(ip)) : "any");
	}
	em_u64("src_port", r->src_port);
	em_u64("dst_port", r->dst_port);
	em_u64("queue", r->queue);
	em_u64("queue_mask", it->queue_mask);
	if (installed)
		em_u64("location", it->location);
	em_str("rule", line);
	em_close();
}

/* ---- The driver: SIOCETHTOOL ------------------------------------------ */

static int ethtool_rxnfc(int fd, const char *ifname, struct ethtool_rxnfc *nfc)
{
	struct ifreq ifr = { 0 };

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)nfc;
	return ioctl(fd, SIOCETHTOOL, &ifr) ? -errno : 0;
}

static int rule_del(int fd, const char *ifname, uint32_t location)
{
	struct ethtool_rxnfc nfc = { .cmd = ETHTOOL_SRXCLSRLDEL };

	nfc.fs.location = location;
	return ethtool_rxnfc(fd, ifname, &nfc);
}

/* What a driver's refusal means, for the user. */
static int fail_driver(const char *ifname, const char *what, int err)
{
	if (err == -EOPNOTSUPP)
		return fail("%s: the driver refused to %s: %s (no ntuple filters on this device; "
			    "see ntuple-filters in ethtool -k %s)",
			    ifname, what, strerror(-err), ifname);
	if (err == -EINVAL)
		return fail("%s: the driver refused to %s: %s (ntuple filters off: ethtool -K %s "
			    "ntuple on; or the driver does not take these fields or a location of "
			    "its choice)",
			    ifname, what, strerror(-err), ifname);
	return fail("%s: the driver refused to %s: %s", ifname, what, strerror(-err));
}

/* Printing only: say whether the driver keeps rules at all (a count it
 * answers), so a user of a device without them knows before pasting. */
static void note_driver(const struct steer_ctx *s)
{
	struct ethtool_rxnfc cnt = { .cmd = ETHTOOL_GRXCLSRLCNT };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err;

	if (fd < 0)
		return;
	err = ethtool_rxnfc(fd, s->ifname, &cnt);
	close(fd);
	if (err == -EOPNOTSUPP)
		fprintf(stderr,
			"unetctl: note: %s's driver has no ntuple filters (its rule count: %s): "
			"these rules cannot be installed on it\n",
			s->ifname, strerror(-err));
}

/* Insert every rule, or none: on a refusal the ones already in are
 * deleted again.  Returns 0 or 1 (error printed). */
static int install(struct steer_ctx *s)
{
	struct steer_item *items = s->items.v;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	char line[256];

	if (fd < 0)
		return fail("socket: %s", strerror(errno));
	for (size_t i = 0; i < s->items.n; i++) {
		struct ethtool_rxnfc nfc = { .cmd = ETHTOOL_SRXCLSRLINS };
		int err;

		steer_rule_spec(&items[i].rule, &nfc.fs);
		err = ethtool_rxnfc(fd, s->ifname, &nfc);
		if (err) {
			for (size_t j = i; j-- > 0;)
				if (rule_del(fd, s->ifname, items[j].location))
					fprintf(stderr,
						"unetctl: %s: could not delete rule %u again: %s\n",
						s->ifname, items[j].location, strerror(errno));
			close(fd);
			steer_rule_format(&items[i].rule, s->ifname, line, sizeof(line));
			fflush(stdout);
			fprintf(stderr, "unetctl: refused: %s\n", line);
			return fail_driver(s->ifname, "insert a flow steering rule", err);
		}
		items[i].location = nfc.fs.location;
	}
	close(fd);
	return 0;
}

/* Delete the driver's rules that are exactly ours (whatever inserted
 * them).  Returns the number deleted, or -1 (error printed). */
static int remove_rules(struct steer_ctx *s, struct list *gone)
{
	struct ethtool_rxnfc cnt = { .cmd = ETHTOOL_GRXCLSRLCNT }, *all;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err, n = 0;

	if (fd < 0)
		return fail("socket: %s", strerror(errno)), -1;
	err = ethtool_rxnfc(fd, s->ifname, &cnt);
	if (err) {
		close(fd);
		return fail_driver(s->ifname, "count its flow steering rules", err), -1;
	}
	/* rule_cnt: the driver's count, bounded by what any NIC holds. */
	if (cnt.rule_cnt > 65536) {
		close(fd);
		return fail("%s: the driver counts %u rules: not believed", s->ifname,
			    cnt.rule_cnt), -1;
	}
	all = calloc(1, sizeof(*all) + cnt.rule_cnt * sizeof(uint32_t));
	if (!all) {
		close(fd);
		return fail("out of memory"), -1;
	}
	all->cmd = ETHTOOL_GRXCLSRLALL;
	all->rule_cnt = cnt.rule_cnt;
	err = ethtool_rxnfc(fd, s->ifname, all);
	for (uint32_t i = 0; !err && i < all->rule_cnt && i < cnt.rule_cnt; i++) {
		struct ethtool_rxnfc one = { .cmd = ETHTOOL_GRXCLSRULE };

		one.fs.location = all->rule_locs[i];
		if (ethtool_rxnfc(fd, s->ifname, &one))
			continue; /* gone meanwhile */
		for (size_t j = 0; j < s->items.n; j++) {
			struct steer_item it = ((struct steer_item *)s->items.v)[j];

			if (!steer_rule_matches(&it.rule, &one.fs))
				continue;
			err = rule_del(fd, s->ifname, one.fs.location);
			if (!err) {
				it.location = one.fs.location;
				err = item_add(gone, &it);
				n++;
			}
			break;
		}
	}
	free(all);
	close(fd);
	if (err)
		return fail_driver(s->ifname, "list or delete flow steering rules", err), -1;
	return n;
}

int do_steer(const struct cmd *c, int argc, char **argv)
{
	const char *ep_s = NULL;
	const struct optdef defs[] = {
		{ "--endpoint", &ep_s },
		{ NULL, NULL },
	};
	struct steer_ctx s = { 0 };
	struct list gone = { 0 };
	bool do_install = false, do_remove = false;
	char *pos[1], **args;
	int n, r = 0, argc2 = 0;
	unsigned long ep;

	/* --install and --remove take no value: taken out here, the rest
	 * goes through the common parser. */
	args = calloc((size_t)argc + 1, sizeof(*args));
	if (!args)
		return fail("out of memory");
	for (int i = 0, only_pos = 0; i < argc; i++) {
		only_pos = only_pos || !strcmp(argv[i], "--");
		if (!only_pos && !strcmp(argv[i], "--install"))
			do_install = true;
		else if (!only_pos && !strcmp(argv[i], "--remove"))
			do_remove = true;
		else
			args[argc2++] = argv[i];
	}
	if (root_cmd_start(c, argc2, args, defs, pos, 1, 1, &n, &r)) {
		free(args);
		return r;
	}
	free(args);
	if (do_install && do_remove)
		return fail("--install and --remove together (usage: unetctl %s %s)", c->full,
			    c->args);
	if (ep_s && parse_uint(ep_s, 0, UNET_MAX_ENDPOINTS - 1, &ep))
		return fail("invalid endpoint: %s (0..%d)", ep_s, UNET_MAX_ENDPOINTS - 1);
	s.ifname = pos[0];
	if (strlen(s.ifname) >= IFNAMSIZ || !if_nametoindex(s.ifname))
		return fail("no such interface: %s", s.ifname);
	s.one_endpoint = ep_s != NULL;
	s.endpoint = (uint32_t)(ep_s ? ep : 0);
	s.local_ip = local_ipv4(s.ifname);
	s.items.size = sizeof(struct steer_item);
	r = build_rules(&s);
	if (!r && s.one_endpoint && !steered_ep(&s, s.endpoint)) {
		const struct unet_endpoint_entry *e = NULL;

		for (size_t i = 0; i < s.eps.n; i++)
			if (((struct unet_endpoint_entry *)s.eps.v)[i].id == s.endpoint)
				e = &((struct unet_endpoint_entry *)s.eps.v)[i];
		if (!e || e->stale)
			r = fail("no live endpoint %u on %s (unetctl endpoint list %s)", s.endpoint,
				 s.ifname, s.ifname);
	}
	if (!r) {
		print_notes(&s);
		if (!s.items.n)
			fprintf(stderr, "unetctl: note: nothing to steer on %s\n", s.ifname);
		if (!do_install && !do_remove && s.items.n)
			note_driver(&s);
		if (do_install && s.items.n)
			r = install(&s);
		if (do_remove && remove_rules(&s, &gone) < 0)
			r = 1;
	}
	if (!r) {
		const struct list *out = do_remove ? &gone : &s.items;

		em_open_array(do_remove ? "removed" : "rules");
		for (size_t i = 0; i < out->n; i++) {
			const struct steer_item *it = &((struct steer_item *)out->v)[i];

			if (ctl.json)
				print_item_json(&s, it, do_install || do_remove);
			else
				print_item(&s, it,
					   do_install  ? "installed at location "
					   : do_remove ? "removed from location "
						       : NULL);
		}
		em_close_array();
	}
	free(s.eps.v);
	free(s.items.v);
	free(gone.v);
	return r;
}
