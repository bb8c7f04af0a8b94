/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * grant.c - direct-access endpoints granted to unprivileged clients: the
 * daemon does every step that needs privilege or that would let a client
 * reach further than its grant, then hands over what remains.
 *
 * The daemon makes the communication segment (a sealed memfd), creates
 * the AF_XDP socket, registers the segment as its UMEM, sizes the rings,
 * and binds the socket to one queue it set aside for grants
 * (--grant-queues) -- a socket can be bound once only, so the client can
 * never point it at another device or queue.  It claims an endpoint slot
 * (holding the slot's alive map itself, so the slot lives exactly as long
 * as the client's connection), puts the socket in the XSKMAP (which the
 * client never sees), and passes the memfd and the socket (SCM_RIGHTS).
 * The client maps the segment and the rings and runs them itself, at full
 * speed and without any capability.  Channels are still asked of the
 * daemon, which checks the policy's tags.
 *
 * What is NOT checked: whatever the client puts on its TX ring leaves the
 * device as it is (the kernel transmits AF_XDP frames unchecked).  That is
 * why the policy gives direct grants only to users it trusts with them;
 * docs/security.md says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/if_xdp.h>

#include "unetd.h"
#include "core/pieces.h" /* XDP_USE_SG, on older kernel headers */

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif

#define GRANT_SEGMENT (4u << 20)
#define GRANT_RING 2048u
#define GRANT_HEADROOM 2 /* as the library's own: 8-byte aligned payloads */

static int make_segment(struct unetd_direct *g, uint32_t size)
{
	g->memfd = memfd_create("unet-direct", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (g->memfd < 0)
		return -errno;
	/* Sealed: the client can neither shrink the segment the kernel has
	 * pinned for the socket, nor grow it. */
	if (ftruncate(g->memfd, size) ||
	    fcntl(g->memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		return -errno;
	g->umem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, g->memfd, 0);
	if (g->umem == MAP_FAILED) {
		g->umem = NULL;
		return -errno;
	}
	g->umem_size = size;
	return 0;
}

static int make_socket(struct unetd_direct *g, int ifindex, uint32_t frame, uint32_t ring)
{
	struct xdp_umem_reg reg = {
		.addr = (uint64_t)(uintptr_t)g->umem,
		.len = g->umem_size,
		.chunk_size = frame,
		.headroom = GRANT_HEADROOM,
	};
	const uint16_t modes[2] = { XDP_ZEROCOPY, XDP_COPY };
	int fd;

	fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	g->xsk_fd = fd;
	if (setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)) ||
	    setsockopt(fd, SOL_XDP, XDP_UMEM_FILL_RING, &ring, sizeof(ring)) ||
	    setsockopt(fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &ring, sizeof(ring)) ||
	    setsockopt(fd, SOL_XDP, XDP_RX_RING, &ring, sizeof(ring)) ||
	    setsockopt(fd, SOL_XDP, XDP_TX_RING, &ring, sizeof(ring)))
		return -errno;
	/* Bound once, never retried here: a closed socket lets go of its
	 * queue some milliseconds later (EBUSY meanwhile), and the serving
	 * thread never waits for that: the client retries EBUSY.  Multi-buffer
	 * first, as the library binds its own sockets: a link whose MTU wants
	 * more than a chunk then carries messages in pieces (the client sets
	 * up its reassembly slots when the reply says so); a kernel before
	 * 6.6 refuses the flag, and the client stays at one chunk. */
	for (int i = 0; i < 4; i++) {
		uint16_t sg = i < 2 ? XDP_USE_SG : 0;
		struct sockaddr_xdp sa = {
			.sxdp_family = AF_XDP,
			.sxdp_ifindex = (uint32_t)ifindex,
			.sxdp_queue_id = g->queue,
			.sxdp_flags = (uint16_t)(modes[i % 2] | sg | XDP_USE_NEED_WAKEUP),
		};

		if (!bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			g->zerocopy = modes[i % 2] == XDP_ZEROCOPY;
			g->multi_buffer = sg != 0;
			return 0;
		}
		if (errno == EBUSY)
			break;
	}
	return -errno;
}

/* What the daemon itself holds of a grant: its channels and ports, the
 * socket's place in the XSKMAP and slot, the daemon's own descriptors and
 * mapping.  The queue and the user's charge stay (grant_finish). */
static void grant_unhook(struct unetd_direct *g)
{
	while (g->chans)
		unetd_direct_chan_close(g, g->chans->tag);
	while (g->slot_claimed && g->udp)
		unetd_udp_close(g->iface, g->slot, &g->udp, g->tcp, true, g->udp->laddr,
				g->udp->lport);
	while (g->slot_claimed && g->tcp)
		unetd_tcp_close(g->iface, g->slot, &g->tcp, g->udp, true, g->tcp->laddr,
				g->tcp->lport);
	if (g->slot_claimed) {
		unet_iface_xsk_set(g->iface->maps, g->slot, g->queue, -1);
		unet_iface_slot_release(g->iface->maps, g->slot, g->token);
	}
	g->slot_claimed = false;
	if (g->alive_fd >= 0)
		close(g->alive_fd);
	if (g->xsk_fd >= 0)
		close(g->xsk_fd);
	if (g->umem)
		munmap(g->umem, g->umem_size);
	if (g->memfd >= 0)
		close(g->memfd);
	g->alive_fd = g->xsk_fd = g->memfd = -1;
	g->umem = NULL;
}

/* The socket is gone: its queue may be granted again. */
static void grant_finish(struct unetd *d, struct unetd_direct *g)
{
	if (g->queue_taken)
		g->iface->grants_used &= ~(1u << g->queue);
	g->queue_taken = false;
	unetd_iface_put(d, g->iface);
}

static void grant_release(struct unetd *d, struct unetd_direct *g)
{
	grant_unhook(g);
	grant_finish(d, g);
}

/*
 * Whether a socket of the client still holds g's queue: 1 if so, 0 if
 * not, -errno if it cannot be told.  A socket lives as long as any of its
 * descriptors (the client may have kept one, passed it on, or left it in
 * flight in a Unix socket), and while it lives its queue stays bound: the
 * kernel refuses to bind another socket there (EBUSY).  So the daemon
 * asks the kernel the one way it answers: a probe socket with a small
 * segment of its own, bound once to the queue (no retries: the serving
 * thread never waits), closed at once.
 */
static int grant_socket_alive(struct unetd *d, struct unetd_direct *g)
{
	struct unetd_direct probe = { .queue = g->queue, .memfd = -1, .xsk_fd = -1 };
	struct unetd_iface *f = g->iface;
	int r = make_segment(&probe, 64 * 2048);

	if (!r)
		r = unetd_netns_enter(d, f->ns_fd, &f->ns);
	if (!r) {
		r = make_socket(&probe, f->ifindex, 2048, 64);
		unetd_netns_leave(d, f->ns_fd, &f->ns);
	}
	if (probe.xsk_fd >= 0)
		close(probe.xsk_fd);
	if (probe.umem)
		munmap(probe.umem, probe.umem_size);
	if (probe.memfd >= 0)
		close(probe.memfd);
	return r == -EBUSY ? 1 : r;
}

void unetd_direct_drop_lingering(struct unetd *d)
{
	while (d->lingering) {
		struct unetd_direct *g = d->lingering;

		d->lingering = g->cnext;
		g->iface->users--;
		grant_finish(d, g);
		free(g);
	}
}

unsigned int unetd_direct_reap(struct unetd *d)
{
	unsigned int left = 0;

	for (struct unetd_direct **pp = &d->lingering; *pp;) {
		struct unetd_direct *g = *pp;
		int alive = grant_socket_alive(d, g);

		if (alive > 0) {
			left++;
			pp = &g->cnext;
			continue;
		}
		*pp = g->cnext;
		if (alive < 0)
			unetd_log(UNET_LOG_WARN, "%s: cannot tell whether uid %u still holds the socket of queue %u (%s): queue given back",
				  g->iface->ifname, g->uid, g->queue, strerror(-alive));
		else
			unetd_log_user(unetd_user_log(d, g->uid), g->uid, UNET_LOG_INFO,
				       "%s: uid %u closed the socket of queue %u: queue given back",
				       g->iface->ifname, g->uid, g->queue);
		g->iface->users--;
		grant_finish(d, g);
		free(g);
	}
	return left;
}

/*
 * A granted segment is pinned by the kernel (the socket's UMEM): it counts
 * against the client's locked-memory limit, as it would had the client
 * registered it itself, with everything its user already holds in direct
 * grants.  The limit is the connecting process's own (daemon/peer.c reads
 * it through its pidfd; prlimit() on another process needs
 * CAP_SYS_RESOURCE, which a confined root may lack); once that process is
 * gone, nothing is granted.
 */
static int memlock_check(struct unetd *d, struct unetd_client *c, uint64_t seg, char *msg,
			 size_t msglen)
{
	uint64_t held = 0, lim = 0;
	int err = unetd_peer_memlock(c, &lim);

	if (err) {
		snprintf(msg, msglen, "cannot read the locked-memory limit of pid %u: %s", c->pid,
			 strerror(-err));
		return err;
	}
	if (lim == UINT64_MAX)
		return 0;
	for (struct unetd_client *k = d->clients; k; k = k->next)
		if (k->uid == c->uid)
			for (struct unetd_direct *g = k->directs; g; g = g->cnext)
				held += g->umem_size;
	for (struct unetd_direct *g = d->lingering; g; g = g->cnext)
		if (g->uid == c->uid)
			held += g->umem_size;
	if (held + seg > lim) {
		snprintf(msg, msglen,
			 "locked-memory limit: %llu + %llu bytes > %llu (ulimit -l, or a smaller segment)",
			 (unsigned long long)held, (unsigned long long)seg, (unsigned long long)lim);
		return -ENOBUFS;
	}
	return 0;
}

struct unetd_direct *unetd_direct_create(struct unetd *d, struct unetd_client *c,
					 const struct unetd_ep_create *req,
					 const struct unetd_grant *gr, int *err, char *msg,
					 size_t msglen)
{
	uint32_t frame = req->frame_size ? req->frame_size : 2048;
	uint32_t seg = req->segment_size ? req->segment_size : GRANT_SEGMENT;
	uint32_t ring = req->ring_size ? req->ring_size : GRANT_RING;
	struct unet_endpoint_val v = { .pid = c->pid, .nqueues = 1 };
	struct unetd_direct *g;
	uint32_t free_q;
	char ifname[16];

	memcpy(ifname, req->ifname, sizeof(ifname));
	ifname[sizeof(ifname) - 1] = '\0';
	if ((frame != 2048 && frame != 4096) || (ring & (ring - 1)) || ring < 64 || ring > 8192 ||
	    seg > (64u << 20) || seg / frame < 2 * ring / 4 || seg % frame) {
		snprintf(msg, msglen, "bad sizes: frame %u, segment %u, ring %u", frame, seg, ring);
		*err = -EINVAL;
		return NULL;
	}
	*err = unetd_quota_check(d, c, gr, seg, msg, msglen);
	if (*err)
		return NULL;
	*err = memlock_check(d, c, seg, msg, msglen);
	if (*err)
		return NULL;
	g = calloc(1, sizeof(*g));
	if (!g) {
		*err = -ENOMEM;
		return NULL;
	}
	g->memfd = g->xsk_fd = g->alive_fd = -1;
	g->iface = unetd_iface_get(d, c, ifname, err);
	if (!g->iface) {
		snprintf(msg, msglen, "%s: cannot serve it: %s", ifname, strerror(-*err));
		free(g);
		return NULL;
	}
	/* Held from here: reaping a lingering grant below must not free
	 * the interface under us. */
	g->iface->users++;
	free_q = g->iface->grant_mask & ~g->iface->grants_used;
	/* A socket let go since the last look?  One look, never a wait:
	 * the serving thread is everyone's (the library retries EBUSY). */
	if (!free_q && g->iface->grant_mask && d->lingering) {
		unetd_direct_reap(d);
		free_q = g->iface->grant_mask & ~g->iface->grants_used;
	}
	if (!free_q) {
		snprintf(msg, msglen, "%s: no queue free for a direct grant (%s)", ifname,
			 g->iface->grant_mask ? "all taken, or held by a client's socket"
					      : "unetd --grant-queues sets none aside");
		*err = -EBUSY;
		goto fail;
	}
	g->queue = (uint32_t)__builtin_ctz(free_q);
	g->iface->grants_used |= 1u << g->queue;
	g->queue_taken = true;
	g->ring = ring;
	g->frame_size = frame;
	*err = make_segment(g, seg);
	/* The socket is made in the device's namespace: it binds there. */
	if (!*err)
		*err = unetd_netns_enter(d, c->netns_fd, &c->netns);
	if (!*err) {
		*err = make_socket(g, g->iface->ifindex, frame, ring);
		unetd_netns_leave(d, c->netns_fd, &c->netns);
	}
	if (*err) {
		snprintf(msg, msglen, "%s queue %u: AF_XDP socket: %s", ifname, g->queue,
			 strerror(-*err));
		goto fail;
	}
	g->alive_fd = unet_alive_map_create(&g->token, &g->alive_id);
	if (g->alive_fd < 0) {
		*err = g->alive_fd;
		snprintf(msg, msglen, "alive map: %s", strerror(-*err));
		goto fail;
	}
	v.token = g->token;
	v.alive_map_id = g->alive_id;
	snprintf(v.comm, sizeof(v.comm), "unetd:%u", c->uid);
	*err = unet_iface_slot_claim(g->iface->maps, &v);
	if (*err < 0) {
		snprintf(msg, msglen, "%s: no endpoint slot: %s", ifname, strerror(-*err));
		goto fail;
	}
	g->slot = (uint32_t)*err;
	g->slot_claimed = true;
	*err = unet_iface_xsk_set(g->iface->maps, g->slot, g->queue, g->xsk_fd);
	if (*err) {
		snprintf(msg, msglen, "XSKMAP: %s", strerror(-*err));
		goto fail;
	}
	g->handle = ++d->next_handle;
	g->client = c;
	g->uid = c->uid;
	g->cnext = c->directs;
	c->directs = g;
	c->segment_bytes += seg;
	c->nemuls++; /* endpoints of any kind count against the quota */
	unetd_log_user(&c->user->log, c->uid, UNET_LOG_INFO,
		       "%s: direct endpoint %u (slot %u, queue %u, %s) for uid %u pid %u (%s)", ifname,
		       g->handle, g->slot, g->queue, g->zerocopy ? "zero-copy" : "copy", c->uid, c->pid,
		       gr->rule);
	return g;
fail:
	g->iface->users--;
	grant_release(d, g);
	free(g);
	return NULL;
}

void unetd_direct_free(struct unetd *d, struct unetd_direct *g)
{
	for (struct unetd_direct **pp = &g->client->directs; *pp; pp = &(*pp)->cnext)
		if (*pp == g) {
			*pp = g->cnext;
			g->client->nemuls--;
			g->client->segment_bytes -= g->umem_size;
			break;
		}
	unetd_log_user(g->client->user ? &g->client->user->log : NULL, g->uid, UNET_LOG_INFO,
		       "%s: direct endpoint %u (slot %u) freed", g->iface->ifname, g->handle, g->slot);
	grant_unhook(g);
	/* The client may keep the socket (and transmit, and pin the
	 * segment) after its connection is gone: queue and charge stay
	 * its user's until the kernel says the socket is gone. */
	if (grant_socket_alive(d, g) > 0) {
		unetd_log_user(g->client->user ? &g->client->user->log : NULL, g->uid, UNET_LOG_INFO,
			       "%s: uid %u still holds the socket of queue %u: queue and charge kept until it closes it",
			       g->iface->ifname, g->uid, g->queue);
		g->client = NULL;
		g->cnext = d->lingering;
		d->lingering = g;
		return;
	}
	g->iface->users--;
	grant_finish(d, g);
	free(g);
}

int unetd_direct_chan_open(struct unetd_direct *g, const struct unetd_ch_open *req,
			   const struct unetd_grant *gr, char *msg, size_t msglen)
{
	struct unetd_dchan *c;
	int err;

	if (req->tag == UNET_TAG_INVALID || req->peer_tag == UNET_TAG_INVALID) {
		snprintf(msg, msglen, "tag 0 is reserved");
		return -EINVAL;
	}
	if (!unetd_grant_tag(gr, req->tag)) {
		snprintf(msg, msglen, "tag %u not granted (%.60s)", req->tag, gr->rule);
		return -EACCES;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	err = unet_iface__channel_add(g->iface->maps, g->slot, req->tag, req->peer_mac,
				      req->peer_tag);
	if (err) {
		free(c);
		return unetd_chan_refused(err, req->tag, msg, msglen);
	}
	c->tag = req->tag;
	c->kfd = -1;
	c->next = g->chans;
	g->chans = c;
	return 0;
}

/* The client sends on its own socket, unchecked (docs/security.md): what
 * we keep is the map entry for its slot and the source port. */
int unetd_direct_chan_open_routable(struct unetd *d, struct unetd_direct *g,
				    const struct unetd_chan_req *req, const struct unetd_grant *gr,
				    struct unetd_chan_opened *rep, char *msg, size_t msglen)
{
	struct unetd_dchan *c;
	int err;

	(void)gr; /* the tag was checked against it by the caller */
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	err = unetd_chan_open_slot(d, g->iface, g->slot, req, &c->kfd, rep, msg, msglen);
	if (err) {
		free(c);
		return err;
	}
	c->tag = req->tag;
	c->next = g->chans;
	g->chans = c;
	return 0;
}

int unetd_direct_chan_close(struct unetd_direct *g, uint16_t tag)
{
	for (struct unetd_dchan **pp = &g->chans; *pp; pp = &(*pp)->next) {
		struct unetd_dchan *c = *pp;

		if (c->tag != tag)
			continue;
		*pp = c->next;
		unet_iface_channel_remove(g->iface->maps, tag, g->slot, g->token);
		if (c->kfd >= 0)
			close(c->kfd);
		free(c);
		return 0;
	}
	return -ENOENT;
}
