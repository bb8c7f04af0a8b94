/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * udp.c - UDP/IPv4 over U-Net (unet_udp.h) for endpoints the daemon
 * serves: the ports, the routing of datagrams and ARP to emulated
 * endpoints, and the check of what those send.
 *
 * A port a client opens is an entry in the interface's unet_udp_ports
 * map, registered here after the policy's `udp` list allows it: for a
 * direct grant under the grant's own slot (the XDP program then puts the
 * datagrams on the client's socket), for an emulated endpoint under the
 * daemon's real endpoint's slot -- the datagrams come to the daemon,
 * whose layer on that endpoint hands each to the emulated endpoint that
 * opened the port.  Whether the kernel owns the address (and answers ARP
 * for it) is decided here, in the device's namespace, not by the client.
 *
 * (The routing of what comes in is emul.c's, with the rest of the
 * emulated endpoints' data plane.)  An emulated endpoint may send IPv4/UDP only from an address and port it
 * opened, and ARP only for an address it has a port on (UDP or TCP); the daemon writes
 * the Ethernet source and, in ARP, the sender's hardware address.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "core/netlink.h"
#include "unetd.h"
#include "udp/udp_impl.h"
#include "wire_get.h"

/* Whether the device itself (f, in its namespace) has addr: then the
 * kernel answers ARP for it, and any user the policy lets use the device
 * may send from it. */
static int is_addr(const uint8_t *a, const struct ifaddrmsg *ifa, void *ctx)
{
	(void)ifa;
	return !memcmp(a, ctx, 4);
}

bool unetd_device_has(struct unetd *d, struct unetd_iface *f, uint32_t addr)
{
	int ifindex, r = 0;

	if (unetd_netns_enter(d, f->ns_fd, &f->ns))
		return false;
	/* only the device's own addresses, and at most UNET_NL_ADDRS_MAX of
	 * them: a user who administers the device's namespace chooses how
	 * many it has, and must not choose what a request costs us */
	ifindex = (int)if_nametoindex(f->ifname);
	if (ifindex > 0)
		r = unet_nl_addrs(AF_INET, ifindex, UNET_NL_ADDRS_MAX, is_addr, &addr);
	unetd_netns_leave(d, f->ns_fd, &f->ns);
	return r == 1;
}

/* A read-only descriptor of the interface's neighbour map, for the
 * client's ARP resolver (it only reads what the XDP program learnt). */
int unetd_neigh_ro(struct unetd_iface *f)
{
	LIBBPF_OPTS(bpf_get_fd_by_id_opts, o, .open_flags = BPF_F_RDONLY);
	struct bpf_map_info info;
	__u32 len = sizeof(info);
	int fd = unet_iface_map(f->maps, UNET_MAP_NEIGH, BPF_MAP_TYPE_LRU_HASH, sizeof(__u32),
				sizeof(struct unet_neigh_val));

	if (fd < 0)
		return fd;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	fd = bpf_map_get_fd_by_id_opts(info.id, &o);
	return fd < 0 ? -errno : fd;
}

static bool udp_uses(const struct unetd_udp_port *list, uint32_t laddr)
{
	for (const struct unetd_udp_port *p = list; p; p = p->next)
		if (p->laddr == laddr)
			return true;
	return false;
}

static bool tcp_uses(const struct unetd_tcp_port *list, uint32_t laddr)
{
	for (const struct unetd_tcp_port *p = list; p; p = p->next)
		if (p->laddr == laddr)
			return true;
	return false;
}

int unetd_group_quota(const struct unetd *d, uint32_t uid, char *msg, size_t msglen)
{
	if (unetd_groups_held(d, true, 0) >= UNETD_MAX_GROUPS_ALL) {
		snprintf(msg, msglen, "unetd's clients hold %u SO_REUSEPORT group ports, the most "
			 "they may together", UNETD_MAX_GROUPS_ALL);
		return -ENOSPC;
	}
	if (unetd_groups_held(d, false, uid) >= UNETD_MAX_GROUPS_PER_USER) {
		snprintf(msg, msglen, "user %u holds %u SO_REUSEPORT group ports, the most one "
			 "user may", uid, UNETD_MAX_GROUPS_PER_USER);
		return -EDQUOT;
	}
	return 0;
}

bool unetd_emul_holds(struct unetd_iface *f, bool tcp, uint32_t laddr, uint16_t lport)
{
	for (struct unetd_emul *e = f->emuls; e; e = e->next) {
		for (struct unetd_udp_port *p = tcp ? NULL : e->udp; p; p = p->next)
			if (p->laddr == laddr && p->lport == lport)
				return true;
		for (struct unetd_tcp_port *p = tcp ? e->tcp : NULL; p; p = p->next)
			if (p->laddr == laddr && p->lport == lport)
				return true;
	}
	return false;
}

/* UDP and TCP share the address's registration: for emulated endpoints,
 * all of them share the real endpoint's slot too. */
bool unetd_slot_uses_addr(struct unetd_iface *f, bool per_endpoint_slot,
			  const struct unetd_udp_port *udp, const struct unetd_tcp_port *tcp,
			  uint32_t laddr)
{
	if (per_endpoint_slot)
		return udp_uses(udp, laddr) || tcp_uses(tcp, laddr);
	for (struct unetd_emul *e = f->emuls; e; e = e->next)
		if (udp_uses(e->udp, laddr) || tcp_uses(e->tcp, laddr))
			return true;
	return false;
}

/*
 * The kernel's side of a port.  The port must be free of every other
 * user's kernel socket in the device's namespace, or the XDP program
 * would hand that socket's datagrams to our client: the daemon binds a
 * socket of its own to it (no SO_REUSEADDR, so any holder refuses it),
 * which also keeps later kernel sockets off the port while the client
 * has it.  A port already held only by the client's own sockets (a
 * program under unet-run keeps its socket bound) is the client's to
 * take.  Returns the daemon's socket, -1 (the client's own hold it), or
 * -errno with msg.
 */
static bool port_holders_all(uint32_t laddr, uint16_t lport, uint32_t uid);

static int udp_reserve(struct unetd *d, struct unetd_iface *f, uint32_t laddr, uint16_t lport,
		       uint32_t uid, char *msg, size_t msglen)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = laddr,
				  .sin_port = htons(lport) };
	int one = 1, fd, err;

	err = unetd_netns_enter(d, f->ns_fd, &f->ns);
	if (err) {
		snprintf(msg, msglen, "the device's namespace: %s", strerror(-err));
		return err;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		snprintf(msg, msglen, "UDP port %u: socket: %s", lport, strerror(errno));
	} else {
		/* The address may be one only U-Net answers for. */
		setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			err = -errno;
			close(fd);
			fd = err;
			if (err == -EADDRINUSE && port_holders_all(laddr, lport, uid)) {
				fd = -1;
			} else {
				snprintf(msg, msglen, "UDP port %u: %s", lport,
					 err == -EADDRINUSE ? "a kernel socket of another user holds it"
							    : strerror(-err));
			}
		}
	}
	unetd_netns_leave(d, f->ns_fd, &f->ns);
	return fd;
}

/* Whether every kernel UDP socket on lport (at laddr or the wildcard) in
 * the current namespace belongs to uid (sock_diag; at least one, and a
 * reply that cannot be read counts as someone else's). */
static bool port_holders_all(uint32_t laddr, uint16_t lport, uint32_t uid)
{
	struct {
		struct nlmsghdr nh;
		struct inet_diag_req_v2 r;
	} req = {
		.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.r = { .sdiag_family = AF_INET, .sdiag_protocol = IPPROTO_UDP, .idiag_states = ~0u },
	};
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	static uint8_t buf[16384];
	unsigned int found = 0, rounds = 0;
	bool ok = true, done = false;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);

	if (fd < 0)
		return false;
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&nl, sizeof(nl)) < 0) {
		close(fd);
		return false;
	}
	/* Bounded: a namespace with a great many UDP sockets is refused. */
	while (!done && ok && rounds++ < 4096) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		if (n <= 0) {
			ok = false;
			break;
		}
		for (; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			const struct inet_diag_msg *m;

			if (h->nlmsg_type == NLMSG_DONE) {
				done = true;
				break;
			}
			if (h->nlmsg_type == NLMSG_ERROR || h->nlmsg_len < NLMSG_LENGTH(sizeof(*m))) {
				ok = false;
				break;
			}
			m = NLMSG_DATA(h);
			if (ntohs(m->id.idiag_sport) != lport ||
			    (m->id.idiag_src[0] != laddr && m->id.idiag_src[0] != 0))
				continue;
			found++;
			if (m->idiag_uid != uid)
				ok = false;
		}
	}
	close(fd);
	return ok && done && found > 0;
}

int unetd_udp_open(struct unetd *d, struct unetd_iface *f, uint32_t slot, uint32_t uid,
		   struct unetd_udp_port **list, const struct unetd_udp_open *req,
		   const struct unetd_grant *g, bool group, struct unetd_udp_opened *rep,
		   int *neigh_fd, char *msg, size_t msglen)
{
	struct unetd_udp_port *p;
	int err, claim;
	bool kernel;

	if (!req->laddr || !req->lport || (group && (req->raddr || req->rport))) {
		snprintf(msg, msglen, "address and port must be set (a group's port unconnected)");
		return -EINVAL;
	}
	if (!unetd_grant_udp_port(g, req->lport)) {
		snprintf(msg, msglen, "UDP port %u not granted (%.60s)", req->lport, g->rule);
		return -EACCES;
	}
	/* Only the device's own addresses, or those the policy gives the
	 * user: an address the daemon answers ARP for is taken from every
	 * other host on the link that has it. */
	kernel = unetd_device_has(d, f, req->laddr);
	if (!kernel && !unetd_grant_addr(g, ntohl(req->laddr))) {
		char a[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &req->laddr, a, sizeof(a));
		snprintf(msg, msglen, "address %s is not %s's and not granted (policy addrs)", a,
			 f->ifname);
		return -EACCES;
	}
	for (p = *list; p; p = p->next)
		if (p->laddr == req->laddr && p->lport == req->lport) {
			snprintf(msg, msglen, "UDP port %u already open on this endpoint", req->lport);
			return -EADDRINUSE;
		}
	if (unetd_ports_held(d, false, true, 0) >= UNETD_MAX_UDP_PORTS_ALL) {
		snprintf(msg, msglen, "unetd's clients hold %u UDP ports, the most they may together",
			 UNETD_MAX_UDP_PORTS_ALL);
		return -ENOSPC;
	}
	if (unetd_ports_held(d, false, false, uid) >= UNETD_MAX_UDP_PORTS_PER_USER) {
		snprintf(msg, msglen, "user %u holds %u UDP ports, the most one user may", uid,
			 UNETD_MAX_UDP_PORTS_PER_USER);
		return -EDQUOT;
	}
	if (group && (err = unetd_group_quota(d, uid, msg, msglen)))
		return err;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->group = group;
	p->kfd = udp_reserve(d, f, req->laddr, req->lport, uid, msg, msglen);
	if (p->kfd < -1) {
		err = p->kfd;
		free(p);
		return err;
	}
	*neigh_fd = unetd_neigh_ro(f);
	if (*neigh_fd < 0) {
		err = *neigh_fd;
		snprintf(msg, msglen, "neighbour map: %s", strerror(-err));
		if (p->kfd >= 0)
			close(p->kfd);
		free(p);
		return err;
	}
	/* A group is one user's: unet_udp_port_join refuses (EACCES)
	 * another user's group, and one place per endpoint slot (emulated
	 * endpoints share the daemon's: one of them per group). */
	err = group ? unet_udp_port_join(f->maps, slot, req->laddr, req->lport, uid)
		    : unet_udp_port_add(f->maps, slot, req->laddr, req->lport, req->raddr,
					req->rport);
	/* The daemon's place in uid's group: another emulated endpoint of
	 * the same user's is in it; emul.c spreads the place's datagrams
	 * over them. */
	if (err == -EEXIST && f->ep && slot == f->info.id)
		err = 0;
	if (err) {
		snprintf(msg, msglen, "UDP port %u: %s", req->lport,
			 err == -EACCES	     ? "a SO_REUSEPORT group of another user"
			 : err == -EADDRINUSE ? "held by another endpoint"
					      : strerror(-err));
		goto fail;
	}
	rep->kernel_addr = kernel;
	claim = unet_inet_addr_claim(f->maps, slot, req->laddr,
				    rep->kernel_addr ? 0 : UNET_INET_ADDR_ARP);
	if (claim < 0) {
		err = claim;
		unet_udp_port_remove(f->maps, slot, req->laddr, req->lport);
		snprintf(msg, msglen, "address: %s", strerror(-err));
		goto fail;
	}
	rep->owns_addr = claim == 1;
	p->laddr = req->laddr;
	p->lport = req->lport;
	p->next = *list;
	*list = p;
	return 0;
fail:
	close(*neigh_fd);
	*neigh_fd = -1;
	if (p->kfd >= 0)
		close(p->kfd);
	free(p);
	return err;
}

int unetd_udp_close(struct unetd_iface *f, uint32_t slot, struct unetd_udp_port **list,
		    const struct unetd_tcp_port *own_tcp, bool per_endpoint_slot, uint32_t laddr,
		    uint16_t lport)
{
	for (struct unetd_udp_port **pp = list; *pp; pp = &(*pp)->next) {
		struct unetd_udp_port *p = *pp;

		if (p->laddr != laddr || p->lport != lport)
			continue;
		*pp = p->next;
		/* The daemon's place in a group stays while another of its
		 * emulated endpoints holds the port. */
		if (per_endpoint_slot || !unetd_emul_holds(f, false, laddr, lport))
			unet_udp_port_remove(f->maps, slot, laddr, lport);
		if (p->kfd >= 0)
			close(p->kfd);
		if (!unetd_slot_uses_addr(f, per_endpoint_slot, *list, own_tcp, laddr))
			unet_inet_addr_release(f->maps, slot, laddr);
		free(p);
		return 0;
	}
	return -ENOENT;
}


/* ---- Emulated endpoints: checking what goes out ------------------------ */

uint16_t unetd_chan_port(struct unetd_iface *f)
{
	int port = f->maps ? unet_iface__chan_port(f->maps) : -ENOENT;

	/* Unreadable (pins of a program from before routable channels):
	 * the default, the port such a program would use once updated. */
	return port > 0 ? (uint16_t)port : UNET_CHAN_PORT_DEFAULT;
}

/* Whether e holds UDP port addr:port, or (any_port) any port, UDP or
 * TCP, on addr: ARP is the address's, whichever protocol holds it. */
static bool owns(const struct unetd_emul *e, uint32_t addr, uint16_t port, bool any_port)
{
	for (struct unetd_udp_port *p = e->udp; p; p = p->next)
		if (p->laddr == addr && (any_port || p->lport == port))
			return true;
	return any_port && tcp_uses(e->tcp, addr);
}

uint64_t *unetd_udp_check(struct unetd_emul *e, uint8_t *f, uint32_t len, uint16_t chan_port)
{
	struct unetd_ep_counters *k = &e->counters;
	uint16_t proto = unetd_get16(f + 12), tot, frag, ulen;
	uint32_t saddr;

	if (proto == UNET_ETH_P_IP) {
		/* As the library sends: IPv4 without options, UDP, not a
		 * fragment, lengths inside the frame. */
		if (len < UNET_UDP_HDRS || f[14] != 0x45 || f[23] != IPPROTO_UDP)
			return &k->tx_bad_frame;
		tot = unetd_get16(f + 16);
		frag = unetd_get16(f + 20);
		ulen = unetd_get16(f + 38);
		if (tot < UNET_IP_HLEN + UNET_UDP_HLEN || UNET_ETH_HLEN + (uint32_t)tot > len ||
		    (frag & 0x3fff) || ulen < UNET_UDP_HLEN || ulen > tot - UNET_IP_HLEN)
			return &k->tx_bad_frame;
		memcpy(&saddr, f + 26, 4);
		if (!owns(e, saddr, unetd_get16(f + 34), false))
			return &k->tx_foreign_tag;
		/*
		 * Never to the routable channels' port, whatever the address:
		 * from a port of its own a client could otherwise write a
		 * U-Net header of its choosing into a datagram that a peer's
		 * routable channel to this host would take for its peer's, if
		 * the port is the one that channel's source derives
		 * (docs/security.md).  (check_frame in emul.c judges such
		 * datagrams as routable channels' frames before they get
		 * here; this is the second guard.)  chan_port is read per
		 * datagram, so a port changed after the daemon opened the
		 * interface is still the one kept.
		 */
		if (unetd_get16(f + 36) == chan_port)
			return &k->tx_foreign_peer;
		return NULL;
	}
	if (proto == UNET_ETH_P_ARP) {
		if (len < UNET_ETH_HLEN + 28 || unetd_get16(f + 14) != 1 || unetd_get16(f + 16) != UNET_ETH_P_IP ||
		    f[18] != 6 || f[19] != 4 || (unetd_get16(f + 20) != 1 && unetd_get16(f + 20) != 2))
			return &k->tx_bad_frame;
		memcpy(&saddr, f + 28, 4);
		if (!owns(e, saddr, 0, true))
			return &k->tx_foreign_tag;
		/* The sender's hardware address is the interface's. */
		memcpy(f + 22, e->iface->info.mac, 6);
		return NULL;
	}
	return &k->tx_bad_frame;
}
