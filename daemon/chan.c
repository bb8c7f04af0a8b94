/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * chan.c - routable channels (U-Net inside UDP/IPv4) for unetd's clients:
 * everything a client could lie about is decided here, in the device's
 * namespace, never taken from the request.  The source address is the
 * interface's, the source port the one derived from the tags (as for
 * root's channels), held by a kernel socket of ours for the channel's
 * life so that no other process on the host can send from it, the next
 * hop and the peer's port resolved from the kernel's tables.  The client
 * gets back what its frames must carry (struct unetd_ch_opened_ipv4).
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
static void say_why(int err, const struct unetd_iface *f, const struct unetd_ch_open_ipv4 *req,
		    char *msg, size_t msglen)
{
	char a[INET_ADDRSTRLEN] = "?";

	inet_ntop(AF_INET, &req->peer_addr, a, sizeof(a));
	switch (err) {
	case -EHOSTUNREACH:
		snprintf(msg, msglen, "no neighbour entry for %s on %s (on-link peers only)", a,
			 f->ifname);
		break;
	case -EADDRNOTAVAIL:
		snprintf(msg, msglen, "%s has no IPv4 address", f->ifname);
		break;
	case -EADDRINUSE:
		snprintf(msg, msglen, "tag %u or its source port %u is held by another", req->tag,
			 unet_chan_sport(req->tag));
		break;
	case -EINVAL:
		snprintf(msg, msglen, "peer %s is not a unicast address", a);
		break;
	default:
		snprintf(msg, msglen, "routable channel %u: %s", req->tag, strerror(-err));
		break;
	}
}

static void fill_rep(struct unetd_ch_opened_ipv4 *rep, const struct unetd_chan_wire *w,
		     const uint8_t src_mac[6], uint16_t peer_port)
{
	memset(rep, 0, sizeof(*rep));
	rep->saddr = w->saddr;
	rep->daddr = w->daddr;
	rep->sport = w->sport;
	rep->dport = w->dport;
	rep->peer_port = peer_port;
	memcpy(rep->dst_mac, w->dst_mac, 6);
	memcpy(rep->src_mac, src_mac, 6);
}

int unetd_chan_open_real(struct unetd *d, struct unetd_iface *f,
			 const struct unetd_ch_open_ipv4 *req, struct unet_channel **chp,
			 struct unetd_chan_wire *w, struct unetd_ch_opened_ipv4 *rep, char *msg,
			 size_t msglen)
{
	struct unet_channel *ch;
	int err = unetd_netns_enter(d, f->ns_fd, &f->ns);

	if (err) {
		snprintf(msg, msglen, "the device's namespace: %s", strerror(-err));
		return err;
	}
	ch = unet_channel__open_ipv4(f->ep, req->tag, req->peer_addr, req->peer_port,
				     req->peer_tag, NULL);
	err = ch ? 0 : -errno;
	unetd_netns_leave(d, f->ns_fd, &f->ns);
	if (err) {
		say_why(err, f, req, msg, msglen);
		return err;
	}
	memset(w, 0, sizeof(*w));
	memcpy(w->dst_mac, ch->w.dst_mac, 6);
	w->saddr = ch->w.saddr;
	w->daddr = ch->w.daddr;
	w->sport = ch->w.sport;
	w->dport = ch->w.dport;
	w->tag = req->tag;
	w->peer_tag = req->peer_tag;
	w->max_payload = unet_channel__max_payload(ch);
	fill_rep(rep, w, f->info.mac, ch->peer_port);
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
			 const struct unetd_ch_open_ipv4 *req, int *kfd,
			 struct unetd_ch_opened_ipv4 *rep, char *msg, size_t msglen)
{
	struct unet_channel_val peer;
	struct unetd_chan_wire w = { .tag = req->tag, .peer_tag = req->peer_tag };
	uint8_t src_mac[6];
	int port, fd = -1, err = unetd_netns_enter(d, f->ns_fd, &f->ns);

	if (err) {
		snprintf(msg, msglen, "the device's namespace: %s", strerror(-err));
		return err;
	}
	err = unet_chan_udp_peer(f->maps, req->tag, req->peer_addr, req->peer_port, req->peer_tag,
				 &peer);
	if (!err)
		err = unet_chan_local_ipv4(f->ifname, &w.saddr);
	if (!err)
		err = link_mac(f->ifname, src_mac);
	port = err ? err : unet_chan_port_of(f->maps);
	if (port < 0)
		err = port;
	/* The port first: a taken one must not leave a map entry. */
	if (!err) {
		w.sport = unet_chan_sport(req->tag);
		fd = unet_chan_hold_port(AF_INET, w.sport);
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
	w.dport = (uint16_t)port;
	memcpy(&w.daddr, peer.peer_addr, 4);
	memcpy(w.dst_mac, peer.peer_mac, 6);
	fill_rep(rep, &w, src_mac, ntohs(peer.peer_port));
	*kfd = fd;
	return 0;
}
