/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * iface_channel.c - the channel map's entries: listing them with their
 * counters, adding and removing them, and reaping those whose owner is
 * gone (for iface_slot.c's reclaim).  Above iface_alive.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "core/chan_udp.h"
#include "core/iface_impl.h"

static void channel_stats(struct unet_iface *iface, uint32_t tag, struct unet_channel_entry *e)
{
	struct unet_channel_stats *vals;

	vals = calloc((size_t)iface->ncpus, sizeof(*vals));
	if (!vals)
		return;
	if (bpf_map_lookup_elem(iface->chan_stats_fd, &tag, vals) == 0) {
		for (int c = 0; c < iface->ncpus; c++) {
			e->delivered += vals[c].delivered;
			e->delivered_bytes += vals[c].delivered_bytes;
			e->drop_wrong_src += vals[c].drop_wrong_src;
			e->drop_no_socket += vals[c].drop_no_socket;
		}
	}
	free(vals);
}

/* One walk of the channel map: its owners' liveness cached per slot. */
struct channel_walk {
	struct unet_iface *iface;
	uint64_t cache[UNET_MAX_ENDPOINTS];
	bool cached[UNET_MAX_ENDPOINTS];
	int (*fn)(const struct unet_channel_entry *, void *ctx);
	void *ctx;
	int removed;
};

static bool walk_owner_alive(struct channel_walk *w, const struct unet_channel_val *cv)
{
	return unet_channel_owner_alive(w->iface, cv, w->cache, w->cached);
}

static int list_channel(__u32 key, void *val, void *ctx)
{
	const struct unet_channel_val *cv = val;
	struct channel_walk *w = ctx;
	struct unet_channel_entry e;

	memset(&e, 0, sizeof(e));
	e.tag = (uint16_t)key;
	e.peer_tag = cv->peer_tag;
	memcpy(e.peer_mac, cv->peer_mac, sizeof(e.peer_mac));
	e.endpoint = cv->endpoint;
	e.pid = cv->owner_pid;
	e.stale = !walk_owner_alive(w, cv);
	if (cv->flags & (UNET_CHAN_F_UDP4 | UNET_CHAN_F_UDP6)) {
		e.kind = (cv->flags & UNET_CHAN_F_UDP6) ? UNET_CHANNEL_UDP6 : UNET_CHANNEL_UDP4;
		memcpy(e.peer_addr, cv->peer_addr, sizeof(e.peer_addr));
		e.peer_port = ntohs(cv->peer_port);
	}
	channel_stats(w->iface, key, &e);
	return w->fn(&e, w->ctx);
}

int unet_iface__for_each_channel(struct unet_iface *iface,
				 int (*fn)(const struct unet_channel_entry *, void *ctx), void *ctx)
{
	struct channel_walk w = { .iface = iface, .fn = fn, .ctx = ctx };
	struct unet_channel_val cv;

	if (!iface || !fn)
		return -EINVAL;
	return unet_map_walk_u32(iface->channels_fd, &cv, list_channel, &w);
}

/* Delete the channels whose owner is gone, with the interface lock held
 * (unet_iface_reclaim_locked).  Returns how many, or -errno. */
static int reap_channel(__u32 key, void *val, void *ctx)
{
	const struct unet_channel_val *cv = val;
	struct channel_walk *w = ctx;

	if (!walk_owner_alive(w, cv) && bpf_map_delete_elem(w->iface->channels_fd, &key) == 0) {
		unet_log(UNET_LOG_INFO, "%s: reclaimed channel %u (endpoint %u)", w->iface->ifname,
			 key, cv->endpoint);
		w->removed++;
	}
	return 0;
}

int unet_iface_channels_reap_locked(struct unet_iface *iface)
{
	struct channel_walk w = { .iface = iface };
	struct unet_channel_val cv;
	int err = unet_map_walk_u32(iface->channels_fd, &cv, reap_channel, &w);

	return err ? err : w.removed;
}

/* Add the channel tag -> endpoint with the peer fields of peer (its
 * peer_mac, peer_tag, flags, peer_addr, peer_port). */
static int channel_add_locked(struct unet_iface *iface, uint32_t endpoint, uint16_t tag,
			      const struct unet_channel_val *peer)
{
	uint64_t cache[UNET_MAX_ENDPOINTS];
	bool cached[UNET_MAX_ENDPOINTS] = { false };
	struct unet_channel_stats *zero;
	struct unet_channel_val cv, old;
	struct unet_endpoint_val ev;
	__u32 key = tag;
	int err;

	if (endpoint >= UNET_MAX_ENDPOINTS ||
	    bpf_map_lookup_elem(iface->endpoints_fd, &endpoint, &ev) ||
	    !unet_endpoint_val_alive(&ev)) {
		unet_log(UNET_LOG_ERROR, "%s: no live endpoint %u", iface->ifname, endpoint);
		return -ESRCH;
	}
	if (bpf_map_lookup_elem(iface->channels_fd, &key, &old) == 0) {
		if (unet_channel_owner_alive(iface, &old, cache, cached)) {
			unet_log(UNET_LOG_ERROR, "%s: tag %u in use by endpoint %u (pid %u)",
				 iface->ifname, tag, old.endpoint, old.owner_pid);
			return -EADDRINUSE;
		}
		unet_log(UNET_LOG_INFO, "%s: replacing stale channel %u", iface->ifname, tag);
		if (bpf_map_delete_elem(iface->channels_fd, &key) && errno != ENOENT)
			return -errno;
	}

	/* Fresh counters for the new channel, before frames can arrive. */
	zero = calloc((size_t)iface->ncpus, sizeof(*zero));
	if (!zero)
		return -ENOMEM;
	err = bpf_map_update_elem(iface->chan_stats_fd, &key, zero, BPF_ANY) ? -errno : 0;
	free(zero);
	if (err)
		return err;

	memset(&cv, 0, sizeof(cv));
	memcpy(cv.peer_mac, peer->peer_mac, sizeof(cv.peer_mac));
	cv.peer_tag = peer->peer_tag;
	cv.flags = peer->flags & (UNET_CHAN_F_UDP4 | UNET_CHAN_F_UDP6);
	memcpy(cv.peer_addr, peer->peer_addr, sizeof(cv.peer_addr));
	cv.peer_port = peer->peer_port;
	cv.endpoint = endpoint;
	cv.owner_pid = ev.pid;
	cv.owner_token = ev.token;
	/* NOEXIST: a writer that does not take the lock (an older library)
	 * still cannot make us overwrite its channel. */
	if (bpf_map_update_elem(iface->channels_fd, &key, &cv, BPF_NOEXIST)) {
		err = -errno;
		if (err == -EEXIST) {
			unet_log(UNET_LOG_ERROR, "%s: tag %u in use", iface->ifname, tag);
			return -EADDRINUSE;
		}
		return err;
	}
	unet_log(UNET_LOG_INFO, "%s: channel %u -> endpoint %u added", iface->ifname, tag,
		 endpoint);
	return 0;
}

int unet_iface__channel_add(struct unet_iface *iface, uint32_t endpoint, uint16_t tag,
			    const uint8_t peer_mac[6], uint16_t peer_tag)
{
	int err;

	if (!iface || !peer_mac || tag == UNET_TAG_INVALID || peer_tag == UNET_TAG_INVALID)
		return -EINVAL;
	err = unet_iface_lock(iface);
	if (err)
		return err;
	{
		struct unet_channel_val peer = { .peer_tag = peer_tag };

		memcpy(peer.peer_mac, peer_mac, sizeof(peer.peer_mac));
		err = channel_add_locked(iface, endpoint, tag, &peer);
	}
	unet_iface_unlock(iface);
	return err;
}

int unet_iface_channel_add_val(struct unet_iface *iface, uint32_t endpoint, uint16_t tag,
			       const struct unet_channel_val *peer)
{
	int err = unet_iface_lock(iface);

	if (err)
		return err;
	err = channel_add_locked(iface, endpoint, tag, peer);
	unet_iface_unlock(iface);
	return err;
}

int unet_chan_udp_peer(struct unet_iface *iface, uint16_t tag, uint32_t peer_addr,
		       uint16_t peer_port, uint16_t peer_tag, bool wait,
		       struct unet_channel_val *peer)
{
	struct unet_chan_hop hop;
	uint32_t saddr = 0;
	int err;

	if (!iface || tag == UNET_TAG_INVALID || peer_tag == UNET_TAG_INVALID || !peer_addr ||
	    peer_addr == INADDR_BROADCAST || (ntohl(peer_addr) >> 28) == 0xe)
		return -EINVAL;
	memset(peer, 0, sizeof(*peer));
	/* Routed from our own address when we have one (the kernel refuses
	 * a source it does not own, and then routes by destination). */
	unet_chan_local_ipv4(iface->ifname, &saddr);
	err = unet_chan_next_hop(AF_INET, iface->ifindex, saddr ? &saddr : NULL, &peer_addr, 0, wait,
				 &hop);
	if (err == -EAGAIN)
		return err; /* asked again soon: not worth a line each time */
	if (err) {
		char a[INET_ADDRSTRLEN] = "?", v[INET_ADDRSTRLEN] = "?";

		inet_ntop(AF_INET, &peer_addr, a, sizeof(a));
		inet_ntop(AF_INET, hop.via, v, sizeof(v));
		if (err == -ENETUNREACH)
			unet_log(UNET_LOG_ERROR, "%s: %s: the kernel does not route it by this "
				 "interface", iface->ifname, a);
		else
			unet_log(UNET_LOG_ERROR, "%s: %s: next hop %s not in the kernel's neighbour "
				 "table (%s)", iface->ifname, a, v, strerror(-err));
		return err;
	}
	memcpy(peer->peer_mac, hop.mac, 6);
	peer->peer_tag = peer_tag;
	peer->flags = UNET_CHAN_F_UDP4;
	memcpy(peer->peer_addr, &peer_addr, 4);
	peer->peer_port = htons(peer_port ? peer_port : unet_chan_sport(peer_tag));
	return 0;
}

/* What an IPv6 routable channel cannot name as its peer: unspecified
 * (::), loopback (::1), multicast (ff00::/8), IPv4-mapped (::ffff:0:0/96,
 * an IPv4 peer goes by unet_chan_udp_peer). */
static bool ipv6_peer_ok(const uint8_t a[16])
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	uint8_t z = 0;

	for (int i = 0; i < 15; i++)
		z |= a[i];
	if (!z && a[15] <= 1)
		return false;
	return a[0] != 0xff && memcmp(a, mapped, sizeof(mapped));
}

int unet_chan_udp6_peer(struct unet_iface *iface, uint16_t tag, const uint8_t peer_addr[16],
			uint16_t peer_port, uint16_t peer_tag, bool wait,
			struct unet_channel_val *peer)
{
	struct unet_chan_hop hop;
	uint8_t saddr[16];
	int err;

	if (!iface || !peer_addr || tag == UNET_TAG_INVALID || peer_tag == UNET_TAG_INVALID ||
	    !ipv6_peer_ok(peer_addr))
		return -EINVAL;
	memset(peer, 0, sizeof(*peer));
	err = unet_chan_local_ipv6(iface->ifname, peer_addr, saddr);
	err = unet_chan_next_hop(AF_INET6, iface->ifindex, err ? NULL : saddr, peer_addr, 0, wait,
				 &hop);
	if (err == -EAGAIN)
		return err;
	if (err) {
		char a[INET6_ADDRSTRLEN] = "?", v[INET6_ADDRSTRLEN] = "?";

		inet_ntop(AF_INET6, peer_addr, a, sizeof(a));
		inet_ntop(AF_INET6, hop.via, v, sizeof(v));
		if (err == -ENETUNREACH)
			unet_log(UNET_LOG_ERROR, "%s: %s: the kernel does not route it by this "
				 "interface", iface->ifname, a);
		else
			unet_log(UNET_LOG_ERROR, "%s: %s: next hop %s did not answer neighbour "
				 "solicitation (%s)", iface->ifname, a, v, strerror(-err));
		return err;
	}
	memcpy(peer->peer_mac, hop.mac, 6);
	peer->peer_tag = peer_tag;
	peer->flags = UNET_CHAN_F_UDP6;
	memcpy(peer->peer_addr, peer_addr, 16);
	peer->peer_port = htons(peer_port ? peer_port : unet_chan_sport(peer_tag));
	return 0;
}

int unet_iface_channel_set_hop(struct unet_iface *iface, uint16_t tag, uint32_t endpoint,
			       uint64_t token, const uint8_t mac[6])
{
	struct unet_channel_val cv;
	__u32 key = tag;

	if (bpf_map_lookup_elem(iface->channels_fd, &key, &cv))
		return -errno;
	if (cv.endpoint != endpoint || cv.owner_token != token)
		return -ENOENT; /* not ours (any more): leave it */
	memcpy(cv.peer_mac, mac, 6);
	/* EXIST: an entry deleted meanwhile stays deleted */
	return bpf_map_update_elem(iface->channels_fd, &key, &cv, BPF_EXIST) ? -errno : 0;
}

int unet_iface__channel_add_ipv4(struct unet_iface *iface, uint32_t endpoint, uint16_t tag,
				 uint32_t peer_addr, uint16_t peer_port, uint16_t peer_tag)
{
	struct unet_channel_val peer;
	int err = unet_chan_udp_peer(iface, tag, peer_addr, peer_port, peer_tag, true, &peer);

	return err ? err : unet_iface_channel_add_val(iface, endpoint, tag, &peer);
}

int unet_iface__channel_add_ipv6(struct unet_iface *iface, uint32_t endpoint, uint16_t tag,
				 const uint8_t peer_addr[16], uint16_t peer_port, uint16_t peer_tag)
{
	struct unet_channel_val peer;
	int err = unet_chan_udp6_peer(iface, tag, peer_addr, peer_port, peer_tag, true, &peer);

	return err ? err : unet_iface_channel_add_val(iface, endpoint, tag, &peer);
}

int unet_iface__chan_port(struct unet_iface *iface)
{
	return iface ? unet_chan_port_of(iface) : -EINVAL;
}

int unet_iface__set_chan_port(struct unet_iface *iface, uint16_t port)
{
	return iface ? unet_chan_set_port(iface, port) : -EINVAL;
}

int unet_iface_channel_remove(struct unet_iface *iface, uint16_t tag, uint32_t endpoint,
			      uint64_t token)
{
	struct unet_channel_val cv;
	__u32 key = tag;
	int err;

	if (!iface)
		return -EINVAL;
	if (tag == UNET_TAG_INVALID)
		return -ENOENT;
	err = unet_iface_lock(iface);
	if (err)
		return err;
	if (bpf_map_lookup_elem(iface->channels_fd, &key, &cv))
		err = -errno;
	else if (token && (cv.endpoint != endpoint || cv.owner_token != token))
		err = -ENOENT; /* not ours (any more): leave it */
	else if (bpf_map_delete_elem(iface->channels_fd, &key))
		err = -errno;
	unet_iface_unlock(iface);
	return err;
}

int unet_iface__channel_del(struct unet_iface *iface, uint16_t tag)
{
	return unet_iface_channel_remove(iface, tag, 0, 0);
}
