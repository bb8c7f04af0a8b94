/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcp.c - TCP/IPv4 over U-Net (unet_tcp.h, lib/tcp) for endpoints the
 * daemon serves: the ports, held as udp.c holds UDP ones.
 *
 * A port a client asks for is, after the policy allows it (its `udp`
 * list names the user's IP ports; an ephemeral port goes to a user who
 * has any), held three ways: by a kernel socket of the daemon's, bound
 * in the device's namespace (so that the kernel's own TCP neither takes
 * it nor answers its segments; a listening port's socket listens, which
 * keeps every other socket off it); by an entry in the interface's
 * unet_tcp_ports under the grant's own slot (direct) or the daemon's real
 * endpoint's (emulated: emul.c routes those segments to the endpoint that
 * holds the port); and in the endpoint's list, which the check of its
 * sends reads (tcp_check.c).  All three go when the client closes the
 * port or goes away.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <unistd.h>

#include "unetd.h"
#include "inet/inet.h"
#include "tcp/tcp_impl.h"
#include "unet-xdp/unet_tcp.h"

/* The kernel socket that holds laddr:*lport, made in f's namespace (the
 * device's, where the kernel's TCP would otherwise answer). */
static int reserve(struct unetd *d, struct unetd_iface *f, uint32_t laddr, uint16_t *lport,
		   bool group, bool group_live, uint32_t uid)
{
	int fd, err;

	err = unetd_netns_enter(d, f->ns_fd, &f->ns);
	if (err)
		return err;
	/* Never SO_REUSEADDR: with it our bind and listen succeed beside
	 * another user's established connection bound with SO_REUSEADDR,
	 * and the XDP program then hands that connection's segments to our
	 * client.  Without it the port must be free of every kernel socket
	 * (unet_tcp_reserve's listening flag only sets it). */
	if (!group) {
		fd = unet_tcp_reserve(laddr, lport, false);
	} else {
		/*
		 * A listener group's socket has SO_REUSEPORT, and it is ours
		 * (root's): the kernel would let it bind beside any of root's
		 * SO_REUSEPORT sockets, a kernel server's included, whose
		 * connections the XDP program would then hand to our client.
		 * So a new group needs the port free of every kernel socket
		 * (a plain socket binds first, and goes); joining a live
		 * group, whose user unet_tcp_port_join checks, the port is
		 * U-Net's already.
		 */
		fd = group_live ? 0 : unet_tcp_reserve(laddr, lport, false);
		if (fd > 0)
			close(fd);
		if (fd >= 0) {
			/* And the group's socket is the client's user's, as if
			 * it had bound the port itself: a kernel server of
			 * another user (root's) that starts later with
			 * SO_REUSEPORT is then refused by the kernel's own
			 * rule, instead of sharing the port with a group whose
			 * connections all go to U-Net.  A socket's owner is the
			 * file system uid of its maker (per thread). */
			int old = setfsuid(uid);

			fd = unet_tcp_reserve_group(laddr, *lport);
			setfsuid(old);
		}
	}
	unetd_netns_leave(d, f->ns_fd, &f->ns);
	return fd;
}

int unetd_tcp_open(struct unetd *d, struct unetd_iface *f, uint32_t slot, uint32_t uid,
		   struct unetd_tcp_port **list, const struct unetd_tcp_open *req, const struct unetd_grant *g,
		   struct unetd_tcp_opened *rep, int *neigh_fd, char *msg, size_t msglen)
{
	bool listen = req->flags & UNETD_TCP_LISTEN;
	bool group = req->flags & UNETD_TCP_GROUP;
	struct unetd_tcp_port *p;
	uint16_t lport = req->lport;
	int err, claim, kfd;
	bool kernel;

	*neigh_fd = -1;
	if (!req->laddr || (req->flags & ~(UNETD_TCP_LISTEN | UNETD_TCP_GROUP)) ||
	    (listen && !lport) || (group && !listen)) {
		snprintf(msg, msglen, "address must be set, a listening port too");
		return -EINVAL;
	}
	/* An ephemeral port is the kernel's pick, from its range, as any
	 * user of the kernel's TCP gets one: any user with ports may. */
	if (lport ? !unetd_grant_udp_port(g, lport) : !unetd_grant_any_port(g)) {
		snprintf(msg, msglen, "TCP port %u not granted (%.60s)", lport, g->rule);
		return -EACCES;
	}
	if (unetd_ports_held(d, true, true, 0) >= d->max_tcp_ports) {
		snprintf(msg, msglen, "unetd's clients hold %u TCP ports, the most they may together "
			 "(--max-tcp-ports)", d->max_tcp_ports);
		return -ENOSPC;
	}
	if (unetd_ports_held(d, true, false, uid) >= UNETD_MAX_TCP_PORTS_PER_USER) {
		snprintf(msg, msglen, "user %u holds %u TCP ports, the most one user may", uid,
			 UNETD_MAX_TCP_PORTS_PER_USER);
		return -EDQUOT;
	}
	/* The address as for UDP: the device's own, or one the policy gives
	 * the user (the daemon then answers ARP for it). */
	kernel = unetd_device_has(d, f, req->laddr);
	if (!kernel && !unetd_grant_addr(g, ntohl(req->laddr))) {
		char a[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &req->laddr, a, sizeof(a));
		snprintf(msg, msglen, "address %s is not %s's and not granted (policy addrs)", a,
			 f->ifname);
		return -EACCES;
	}
	if (group && (err = unetd_group_quota(d, uid, msg, msglen)))
		return err;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->group = group;
	kfd = reserve(d, f, req->laddr, &lport, group,
		      group && unet_tcp_group_live(f->maps, req->laddr, lport), uid);
	if (kfd < 0) {
		err = kfd;
		snprintf(msg, msglen, "TCP port %u: %s", lport,
			 err == -EADDRINUSE ? "in use on the device" : strerror(-err));
		free(p);
		return err;
	}
	*neigh_fd = unetd_neigh_ro(f);
	if (*neigh_fd < 0) {
		err = *neigh_fd;
		snprintf(msg, msglen, "neighbour map: %s", strerror(-err));
		goto fail;
	}
	/* A group is one user's: unet_tcp_port_join refuses (EACCES)
	 * another user's group, and one place per endpoint slot (emulated
	 * endpoints share the daemon's: one of them per group). */
	err = group ? unet_tcp_port_join(f->maps, slot, req->laddr, lport, uid)
		    : unet_tcp_port_add(f->maps, slot, req->laddr, lport,
					listen ? UNET_TCP_PORT_LISTEN : 0);
	/* As for UDP: the daemon's place in uid's group is its emulated
	 * endpoints' to share (emul.c). */
	if (err == -EEXIST && f->ep && slot == f->info.id)
		err = 0;
	if (!err && listen && (err = unet_tcp_reserve_listen(kfd)) &&
	    !(group && unetd_emul_holds(f, true, req->laddr, lport)))
		unet_tcp_port_remove(f->maps, slot, req->laddr, lport);
	if (err) {
		snprintf(msg, msglen, "TCP port %u: %s", lport,
			 err == -EACCES	     ? "a SO_REUSEPORT group of another user"
			 : err == -EADDRINUSE ? "held by another endpoint"
					      : strerror(-err));
		goto fail;
	}
	claim = unet_inet_addr_claim(f->maps, slot, req->laddr, kernel ? 0 : UNET_INET_ADDR_ARP);
	if (claim < 0) {
		err = claim;
		unet_tcp_port_remove(f->maps, slot, req->laddr, lport);
		snprintf(msg, msglen, "address: %s", strerror(-err));
		goto fail;
	}
	rep->kernel_addr = kernel;
	rep->owns_addr = claim == 1;
	rep->lport = lport;
	p->laddr = req->laddr;
	p->lport = lport;
	p->kfd = kfd;
	p->next = *list;
	*list = p;
	return 0;
fail:
	if (*neigh_fd >= 0)
		close(*neigh_fd);
	*neigh_fd = -1;
	close(kfd);
	free(p);
	return err;
}

int unetd_tcp_close(struct unetd_iface *f, uint32_t slot, struct unetd_tcp_port **list,
		    const struct unetd_udp_port *own_udp, bool per_endpoint_slot, uint32_t laddr,
		    uint16_t lport)
{
	for (struct unetd_tcp_port **pp = list; *pp; pp = &(*pp)->next) {
		struct unetd_tcp_port *p = *pp;

		if (p->laddr != laddr || p->lport != lport)
			continue;
		*pp = p->next;
		/* The map first: once the kernel socket is gone the kernel
		 * answers the port's segments with resets, right once the
		 * endpoint is gone.  The daemon's place in a listener group
		 * stays while another of its emulated endpoints holds it. */
		if (per_endpoint_slot || !unetd_emul_holds(f, true, laddr, lport))
			unet_tcp_port_remove(f->maps, slot, laddr, lport);
		close(p->kfd);
		if (!unetd_slot_uses_addr(f, per_endpoint_slot, own_udp, *list, laddr))
			unet_inet_addr_release(f->maps, slot, laddr);
		free(p);
		return 0;
	}
	return -ENOENT;
}

uint64_t *unetd_tcp_check(struct unetd_emul *e, const uint8_t *f, uint32_t len)
{
	struct unetd_ep_counters *k = &e->counters;

	switch (unetd_tcp_check_frame(f, len, e->tcp)) {
	case UNETD_TCP_OK:
		return NULL;
	case UNETD_TCP_BAD_FRAME:
		return &k->tx_bad_frame;
	default:
		/* As UDP's: a source that is not the endpoint's own. */
		return &k->tx_foreign_tag;
	}
}
