/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * chan.c - routable channels (U-Net inside UDP/IPv4 or UDP/IPv6) for
 * unetd's clients: everything a client could lie about is decided here,
 * in the device's namespace, never taken from the request.  The source
 * address is the interface's (over IPv6 the one the kernel picks for the
 * peer, as the library does), the source port the one derived from the tags (as for
 * root's channels), held by a kernel socket of ours for the channel's
 * life so that no other process on the host can send from it, the next
 * hop and the peer's port resolved from the kernel's tables.  The client
 * gets back what its frames must carry (struct unetd_chan_opened, sent
 * as struct unetd_ch_opened_ipv4 or _ipv6).
 *
 * Never waits on the network: a next hop with no neighbour entry is
 * asked of the kernel (ARP, neighbour solicitation) and the open refused
 * with EAGAIN at once; the client's library asks again until it is
 * resolved or a second has gone (remote.c).  Waiting here would stop
 * the daemon's one thread, and everyone's frames and requests with it,
 * for as long as a silent address takes to fail.
 *
 * An emulated endpoint's channel is a channel of the daemon's real
 * endpoint, opened with the library as root's are (it holds the port);
 * a direct grant's is an entry for the grant's slot, its port held by a
 * socket in struct unetd_dchan.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "unetd.h"
#include "core/chan_udp.h"
#include "core/objects.h"

int unetd_chan_refused(int err, uint16_t tag, char *msg, size_t msglen)
{
	snprintf(msg, msglen, "tag %u: %s", tag,
		 err == -EADDRINUSE ? "held by another endpoint" : strerror(-err));
	return err;
}

/* Why opening failed, in the client's words. */
static void say_why(int err, const struct unetd_iface *f, const struct unetd_chan_req *req,
		    char *msg, size_t msglen)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (req->v6)
		inet_ntop(AF_INET6, req->peer_addr6, a, sizeof(a));
	else
		inet_ntop(AF_INET, &req->peer_addr, a, sizeof(a));
	switch (err) {
	case -EAGAIN:
		snprintf(msg, msglen, "the next hop to %s is being resolved", a);
		break;
	case -EHOSTUNREACH:
		snprintf(msg, msglen, "no neighbour entry for %s on %s (on-link peers only)", a,
			 f->ifname);
		break;
	case -ENETUNREACH:
		snprintf(msg, msglen, "%s is not routed by %s", a, f->ifname);
		break;
	case -EADDRNOTAVAIL:
		if (req->v6)
			snprintf(msg, msglen, "%s has no %s IPv6 address for %s", f->ifname,
				 unet_chan_ipv6_link_local(req->peer_addr6) ? "link-local" : "global",
				 a);
		else
			snprintf(msg, msglen, "%s has no IPv4 address", f->ifname);
		break;
	case -EADDRINUSE:
		snprintf(msg, msglen, "tag %u or its source port %u is held by another", req->tag,
			 unet_chan_sport(req->tag));
		break;
	case -EINVAL:
		snprintf(msg, msglen, "peer %s is not a unicast address%s", a,
			 req->v6 ? " (unspecified, loopback, multicast or IPv4-mapped)" : "");
		break;
	default:
		snprintf(msg, msglen, "routable channel %u: %s", req->tag, strerror(-err));
		break;
	}
}

int unetd_chan_open_real(struct unetd *d, struct unetd_iface *f, const struct unetd_chan_req *req,
			 struct unet_channel **chp, struct unetd_chan_opened *rep, char *msg,
			 size_t msglen)
{
	struct unetd_chan_wire *w = &rep->w;
	struct unet_channel *ch;
	int err = unetd_netns_enter(d, f->ns_fd, &f->ns);

	if (err) {
		snprintf(msg, msglen, "the device's namespace: %s", strerror(-err));
		return err;
	}
	/* The library on our real endpoint decides it all, as for root's
	 * own channels: the source address (over IPv6 the kernel's choice
	 * for the peer), the next hop, the held port. */
	ch = unet_channel_open_routable(f->ep, req->tag, req->peer_addr,
					req->v6 ? req->peer_addr6 : NULL, req->peer_port,
					req->peer_tag, false);
	err = ch ? 0 : -errno;
	unetd_netns_leave(d, f->ns_fd, &f->ns);
	if (err) {
		say_why(err, f, req, msg, msglen);
		return err;
	}
	memset(rep, 0, sizeof(*rep));
	memcpy(w->dst_mac, ch->w.dst_mac, 6);
	w->v6 = ch->w.v6;
	w->saddr = ch->w.saddr;
	w->daddr = ch->w.daddr;
	memcpy(w->saddr6, ch->w.saddr6, 16);
	memcpy(w->daddr6, ch->w.daddr6, 16);
	w->sport = ch->w.sport;
	w->dport = ch->w.dport;
	w->tag = req->tag;
	w->peer_tag = req->peer_tag;
	w->max_payload = unet_channel__max_payload(ch);
	memcpy(rep->src_mac, f->info.mac, 6);
	rep->peer_port = ch->peer_port;
	*chp = ch;
	return 0;
}

/* The device's link address, read in its namespace (entered): a grant's
 * frames carry it, and the daemon need have no endpoint of its own on a
 * device whose queues it all granted (f->info.mac is then unset). */
static int link_mac(const char *ifname, uint8_t mac[6])
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0)
		err = -errno;
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(fd);
	return err;
}

int unetd_chan_open_slot(struct unetd *d, struct unetd_iface *f, uint32_t slot,
			 const struct unetd_chan_req *req, int *kfd, struct unetd_chan_opened *rep,
			 char *msg, size_t msglen)
{
	struct unet_channel_val peer;
	struct unetd_chan_wire *w = &rep->w;
	int port, fd = -1, err = unetd_netns_enter(d, f->ns_fd, &f->ns);

	memset(rep, 0, sizeof(*rep));
	w->tag = req->tag;
	w->peer_tag = req->peer_tag;
	w->v6 = req->v6;
	if (err) {
		snprintf(msg, msglen, "the device's namespace: %s", strerror(-err));
		return err;
	}
	if (req->v6) {
		err = unet_chan_udp6_peer(f->maps, req->tag, req->peer_addr6, req->peer_port,
					  req->peer_tag, false, &peer);
		if (!err)
			err = unet_chan_local_ipv6(f->ifname, req->peer_addr6, w->saddr6);
	} else {
		err = unet_chan_udp_peer(f->maps, req->tag, req->peer_addr, req->peer_port,
					 req->peer_tag, false, &peer);
		if (!err)
			err = unet_chan_local_ipv4(f->ifname, &w->saddr);
	}
	if (!err)
		err = link_mac(f->ifname, rep->src_mac);
	port = err ? err : unet_chan_port_of(f->maps);
	if (port < 0)
		err = port;
	/* The port first: a taken one must not leave a map entry. */
	if (!err) {
		w->sport = unet_chan_sport(req->tag);
		fd = unet_chan_hold_port(req->v6 ? AF_INET6 : AF_INET, w->sport);
		if (fd < 0)
			err = fd;
	}
	unetd_netns_leave(d, f->ns_fd, &f->ns);
	if (!err)
		err = unet_iface_channel_add_val(f->maps, slot, req->tag, &peer);
	if (err) {
		if (fd >= 0)
			close(fd);
		say_why(err, f, req, msg, msglen);
		return err;
	}
	w->dport = (uint16_t)port;
	if (req->v6)
		memcpy(w->daddr6, peer.peer_addr, 16);
	else
		memcpy(&w->daddr, peer.peer_addr, 4);
	memcpy(w->dst_mac, peer.peer_mac, 6);
	rep->peer_port = ntohs(peer.peer_port);
	*kfd = fd;
	return 0;
}
