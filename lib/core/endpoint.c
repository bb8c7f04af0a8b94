/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * endpoint.c - creating and destroying endpoints: the communication segment
 * (UMEM), one AF_XDP socket per receive queue sharing it, the endpoint's
 * slot in the interface's maps.
 *
 * Every queue gets a socket because an XDP program can only redirect a
 * frame to a socket bound to the queue it arrived on; sharing one UMEM
 * (XDP_SHARED_UMEM) lets all of them draw from one segment.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "core/objects.h"
#include "core/txmd.h"

#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET 70
#endif

#define DEFAULT_SEGMENT (8u << 20)
#define DEFAULT_FRAME 2048u
#define DEFAULT_RING 2048u
#define DEFAULT_BUSY_BUDGET 64u

/* Options with defaults applied, checked once. */
struct ep_config {
	const char *pin_root;
	uint32_t segment_size, frame_size, rx_size, tx_size, fill_size, comp_size;
	enum unet_xdp_mode mode;
	enum unet_copy_mode copy;
	bool need_wakeup;
	uint32_t busy_poll_usec, busy_poll_budget;
	uint32_t queue_mask;
	enum unet_endpoint_kind kind;
	const char *daemon_socket;
	bool no_multi_buffer;
	bool no_tx_csum_offload;
	/* As the caller gave them (0: unset), for unetd's own defaults. */
	uint32_t asked_segment, asked_ring;
};

static bool is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

static int ep_config_from_opts(const struct unet_endpoint_opts *o, struct ep_config *c)
{
	if (o && o->sz < sizeof(size_t))
		return -EINVAL;
	c->pin_root = UNET_OPT(o, pin_root, NULL);
	c->segment_size = UNET_OPT(o, segment_size, DEFAULT_SEGMENT);
	c->frame_size = UNET_OPT(o, frame_size, DEFAULT_FRAME);
	c->rx_size = UNET_OPT(o, rx_size, DEFAULT_RING);
	c->tx_size = UNET_OPT(o, tx_size, DEFAULT_RING);
	c->fill_size = UNET_OPT(o, fill_size, DEFAULT_RING);
	c->comp_size = UNET_OPT(o, comp_size, DEFAULT_RING);
	c->mode = UNET_OPT(o, mode, UNET_XDP_MODE_AUTO);
	c->copy = UNET_OPT(o, copy, UNET_COPY_AUTO);
	c->need_wakeup = !UNET_OPT(o, no_need_wakeup, false);
	c->busy_poll_usec = UNET_OPT(o, busy_poll_usec, 0);
	c->busy_poll_budget = UNET_OPT(o, busy_poll_budget, DEFAULT_BUSY_BUDGET);
	c->queue_mask = UNET_OPT(o, queue_mask, 0);
	c->kind = UNET_OPT(o, kind, UNET_ENDPOINT_AUTO);
	c->daemon_socket = UNET_OPT(o, daemon_socket, NULL);
	c->no_multi_buffer = UNET_OPT(o, no_multi_buffer, false);
	c->no_tx_csum_offload = UNET_OPT(o, no_tx_csum_offload, false);
	c->asked_segment = UNET_OPT(o, segment_size, 0);
	c->asked_ring = UNET_OPT(o, rx_size, 0);

	if (c->frame_size != 2048 && c->frame_size != 4096) {
		unet_log(UNET_LOG_ERROR, "frame_size %u: must be 2048 or 4096", c->frame_size);
		return -EINVAL;
	}
	if (!is_pow2(c->rx_size) || !is_pow2(c->tx_size) || !is_pow2(c->fill_size) ||
	    !is_pow2(c->comp_size)) {
		unet_log(UNET_LOG_ERROR, "ring sizes must be powers of two");
		return -EINVAL;
	}
	/* At least a full fill ring's worth plus as many send buffers. */
	if (c->segment_size / c->frame_size < 64) {
		unet_log(UNET_LOG_ERROR, "segment_size %u holds fewer than 64 frames",
			 c->segment_size);
		return -EINVAL;
	}
	if ((unsigned)c->mode > UNET_XDP_MODE_SKB || (unsigned)c->copy > UNET_ZEROCOPY_FORCE ||
	    (unsigned)c->kind > UNET_ENDPOINT_EMULATED)
		return -EINVAL;
	return 0;
}

/* Claim a slot for ep, whose alive map and token are made already. */
static int claim_slot(struct unet_endpoint *ep)
{
	struct unet_endpoint_val v = {
		.pid = (uint32_t)getpid(),
		.token = ep->token,
		.alive_map_id = ep->alive_map_id,
	};
	FILE *f;

	f = fopen("/proc/self/comm", "re");
	if (f) {
		if (fgets(v.comm, sizeof(v.comm), f))
			v.comm[strcspn(v.comm, "\n")] = '\0';
		fclose(f);
	}
	return unet_iface_slot_claim(ep->iface, &v);
}

static void release_slot(struct unet_endpoint *ep)
{
	unet_iface_slot_release(ep->iface, ep->id, ep->token);
}

static int read_link_info(struct unet_endpoint *ep, const char *ifname)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int err = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0)
		err = -errno;
	else
		memcpy(ep->mac, ifr.ifr_hwaddr.sa_data, 6);
	if (!err && ioctl(fd, SIOCGIFMTU, &ifr) < 0)
		err = -errno;
	else if (!err)
		ep->mtu = (uint32_t)ifr.ifr_mtu;
	close(fd);
	return err;
}

static void set_busy_poll(struct unet_queue *q, const struct ep_config *c)
{
	int on = 1, usec = (int)c->busy_poll_usec, budget = (int)c->busy_poll_budget;

	if (setsockopt(q->fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &on, sizeof(on)) ||
	    setsockopt(q->fd, SOL_SOCKET, SO_BUSY_POLL, &usec, sizeof(usec)) ||
	    setsockopt(q->fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, &budget, sizeof(budget)))
		unet_log(UNET_LOG_WARN, "queue %u: busy polling not enabled: %s", q->queue_id,
			 strerror(errno));
}

/* Which device queues get a socket: the mask's, or all of them. */
static int pick_queues(struct unet_endpoint *ep, const char *ifname, uint32_t mask)
{
	uint32_t ndev = (uint32_t)unet_iface_nqueues(ifname);

	if (unet_iface_nqueues_raw(ifname) > UNET_MAX_QUEUES)
		unet_log(UNET_LOG_WARN,
			 "%s has %d receive queues; U-Net serves queues 0-%d only: frames "
			 "arriving on the others are dropped (counted as drop_queue_range)",
			 ifname, unet_iface_nqueues_raw(ifname), UNET_MAX_QUEUES - 1);
	uint32_t all = ndev >= 32 ? UINT32_MAX : (1u << ndev) - 1;

	if (!mask)
		mask = all;
	if (mask & ~all) {
		unet_log(UNET_LOG_ERROR, "%s: queue_mask %#x names queues the device lacks (%u)",
			 ifname, mask, ndev);
		return -EINVAL;
	}
	ep->queue_mask = mask;
	ep->nqueues = 0;
	for (uint32_t qid = 0; qid < UNET_MAX_QUEUES; qid++)
		if (mask & (1u << qid))
			ep->q[ep->nqueues++].queue_id = qid;
	return 0;
}

static void destroy_sockets(struct unet_endpoint *ep)
{
	for (uint32_t i = 0; i < ep->nqueues; i++) {
		uint32_t idx = UNET_XSK_INDEX(ep->id, ep->q[i].queue_id);

		if (!ep->q[i].xsk && !ep->txmd)
			continue;
		if (ep->iface)
			bpf_map_delete_elem(ep->iface->xsks_fd, &idx);
		if (ep->q[i].xsk)
			xsk_socket__delete(ep->q[i].xsk);
		ep->q[i].xsk = NULL;
	}
	unet_txmd_destroy(ep);
	ep->tx_csum = false;
	if (ep->umem) {
		xsk_umem__delete(ep->umem);
		ep->umem = NULL;
	}
}

/*
 * Bind one queue's socket.  The kernel lets go of a closed socket's hold on
 * its queue asynchronously, so right after an endpoint on this queue went
 * away the bind may still fail with EBUSY for a few milliseconds: retry
 * for a bounded time before calling the queue taken.
 */
static int bind_queue(struct unet_endpoint *ep, struct unet_queue *q, const char *ifname,
		      const struct xsk_socket_config *scfg)
{
	const struct timespec pause = { .tv_nsec = 5 * 1000 * 1000 };
	int err;

	for (int tries = 0;; tries++) {
		err = xsk_socket__create_shared(&q->xsk, ifname, q->queue_id, ep->umem, &q->rx,
						&q->tx, &q->fill, &q->comp, scfg);
		if (err != -EBUSY || tries >= 100)
			return err;
		nanosleep(&pause, NULL);
	}
}

/* Register the segment and bind a socket to every queue with bind_flags. */
/*
 * libxdp makes its AF_XDP sockets without close-on-exec: a process that
 * execs would hand the new image a socket still bound to the queue, and
 * the image's own endpoint would find the queue taken (EBUSY) while the
 * old socket lives on unseen.  The endpoint is the process's memory's,
 * which exec ends: its sockets go with it.
 */
static void keep_from_exec(int fd)
{
	int flags = fd >= 0 ? fcntl(fd, F_GETFD) : -1;

	if (flags >= 0)
		fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

static int create_sockets(struct unet_endpoint *ep, const char *ifname,
			  const struct ep_config *c, uint16_t bind_flags)
{
	struct xsk_umem_config ucfg = {
		.fill_size = c->fill_size,
		.comp_size = c->comp_size,
		.frame_size = c->frame_size,
		.frame_headroom = UNET_ALIGN_PAD,
		.flags = 0,
	};
	struct xsk_socket_config scfg = {
		.rx_size = c->rx_size,
		.tx_size = c->tx_size,
		/* Our own XDP program is attached already: libxdp must not
		 * load its default one. */
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = bind_flags,
	};
	int err;

	/* Room for TX metadata (chosen with the payload offset), for
	 * checksums computed by the device: asked of the device only in
	 * copy mode, where the kernel's stack computes what the device
	 * cannot; a zero-copy driver might ignore the request. */
	if (ep->tx_payload == UNET_TX_PAYLOAD_TXMD) {
		const struct unet_txmd_cfg tcfg = {
			.fill_size = c->fill_size,
			.comp_size = c->comp_size,
			.rx_size = c->rx_size,
			.tx_size = c->tx_size,
			.frame_size = c->frame_size,
			.headroom = UNET_ALIGN_PAD,
			.bind_flags = bind_flags,
		};

		err = unet_txmd_create(ep, (int)if_nametoindex(ifname), &tcfg);
		if (!err)
			ep->tx_csum = !(bind_flags & XDP_ZEROCOPY);
		else if (err == -EBUSY)
			unet_log(UNET_LOG_ERROR,
				 "%s: a queue is taken by another endpoint (one UMEM per "
				 "queue: give each endpoint its own queues, queue_mask)",
				 ifname);
		else
			unet_log(UNET_LOG_DEBUG, "%s: AF_XDP bind failed: %s", ifname,
				 strerror(-err));
		return err;
	}
	/* Only the frames: the reassembly slots after them (pieces.c) are
	 * never the kernel's to write. */
	err = xsk_umem__create(&ep->umem, ep->segment, (uint64_t)ep->nframes * ep->frame_size,
			       &ep->q[0].fill,
			       &ep->q[0].comp, &ucfg);
	if (err) {
		ep->umem = NULL;
		return err;
	}
	keep_from_exec(xsk_umem__fd(ep->umem));
	for (uint32_t i = 0; i < ep->nqueues; i++) {
		struct unet_queue *q = &ep->q[i];

		err = bind_queue(ep, q, ifname, &scfg);
		if (err) {
			q->xsk = NULL;
			if (err == -EBUSY)
				unet_log(UNET_LOG_ERROR,
					 "%s queue %u: taken by another endpoint (one UMEM per "
					 "queue: give each endpoint its own queues, queue_mask)",
					 ifname, q->queue_id);
			else
				unet_log(UNET_LOG_DEBUG, "%s queue %u: AF_XDP bind failed: %s",
					 ifname, q->queue_id, strerror(-err));
			return err;
		}
		q->fd = xsk_socket__fd(q->xsk);
		keep_from_exec(q->fd);
	}
	return 0;
}

static int setup_sockets_sg(struct unet_endpoint *ep, const char *ifname,
			    const struct ep_config *c, uint16_t wake);

/*
 * Bind the sockets.  An endpoint whose MTU wants messages larger than a
 * chunk (ep->jumbo.nslots set) asks for multi-buffer (XDP_USE_SG) first;
 * a kernel without it (before 6.6) refuses the flag, and the endpoint
 * then takes frames of one chunk only, its max_payload cut to match.
 */
static int setup_sockets(struct unet_endpoint *ep, const char *ifname, const struct ep_config *c)
{
	uint16_t wake = c->need_wakeup ? XDP_USE_NEED_WAKEUP : 0;
	int err;

	if (ep->jumbo.nslots) {
		const char *why = "not asked for (no_multi_buffer)";

		if (!c->no_multi_buffer) {
			err = setup_sockets_sg(ep, ifname, c, wake | XDP_USE_SG);
			if (!err) {
				ep->jumbo.sg = true;
				return 0;
			}
			destroy_sockets(ep);
			if (err == -EBUSY)
				return err;
			why = strerror(-err);
		}
		unet_log(UNET_LOG_INFO,
			 "%s: no AF_XDP multi-buffer (%s): messages of at most %u bytes, not %u",
			 ifname, why, ep->buf_payload, ep->max_payload);
		ep->max_payload = ep->buf_payload;
		unet_jumbo_fini(&ep->jumbo);
	}
	return setup_sockets_sg(ep, ifname, c, wake);
}

static int setup_sockets_sg(struct unet_endpoint *ep, const char *ifname,
			    const struct ep_config *c, uint16_t wake)
{
	int err;

	if (c->copy != UNET_COPY_FORCE) {
		err = create_sockets(ep, ifname, c, wake | XDP_ZEROCOPY);
		if (!err) {
			ep->zerocopy = true;
			return 0;
		}
		destroy_sockets(ep);
		if (err == -EBUSY)
			return err;
		if (c->copy == UNET_ZEROCOPY_FORCE) {
			unet_log(UNET_LOG_ERROR, "%s: zero-copy not available: %s", ifname,
				 strerror(-err));
			return -EOPNOTSUPP;
		}
		unet_log(UNET_LOG_INFO, "%s: no zero-copy (%s), using copy mode", ifname,
			 strerror(-err));
	}
	ep->zerocopy = false;
	return create_sockets(ep, ifname, c, wake | XDP_COPY);
}

static int publish_sockets(struct unet_endpoint *ep)
{
	struct unet_endpoint_val v;

	for (uint32_t i = 0; i < ep->nqueues; i++) {
		uint32_t idx = UNET_XSK_INDEX(ep->id, ep->q[i].queue_id);
		int fd = ep->q[i].fd;

		if (bpf_map_update_elem(ep->iface->xsks_fd, &idx, &fd, BPF_ANY))
			return -errno;
	}
	if (unet_iface_lock(ep->iface))
		return 0; /* nqueues and queue_mask are for listings only */
	if (!bpf_map_lookup_elem(ep->iface->endpoints_fd, &ep->id, &v) && v.token == ep->token) {
		v.nqueues = ep->nqueues;
		v.queue_mask = ep->queue_mask;
		bpf_map_update_elem(ep->iface->endpoints_fd, &ep->id, &v, BPF_EXIST);
	}
	unet_iface_unlock(ep->iface);
	return 0;
}

static struct unet_iface *open_or_attach(const char *ifname, const struct ep_config *c, int *err)
{
	UNET_OPTS_INIT(unet_iface_opts, io);
	struct unet_iface *iface;

	io.pin_root = c->pin_root;
	struct unet_iface_status st;

	iface = unet_iface__open(ifname, &io);
	if (iface && !unet_iface__status(iface, &st) && st.link_alive) {
		*err = 0;
		return iface;
	}
	if (!iface && errno != ENOENT) {
		*err = -errno;
		return NULL;
	}
	/* Not attached, or pins outlived their program (the device was
	 * re-created): attach replaces stale pins. */
	unet_iface__close(iface);
	*err = unet_iface__attach(ifname, c->mode, &io);
	if (*err)
		return NULL;
	iface = unet_iface__open(ifname, &io);
	*err = iface ? 0 : -errno;
	return iface;
}

/* The rest of unet_endpoint__create for an endpoint asked of unetd: an
 * emulated one, or a direct grant (whose link facts we read ourselves). */
static struct unet_endpoint *create_remote(struct unet_endpoint *ep, const char *ifname,
					   const struct ep_config *c)
{
	int err;

	ep->busy_poll_usec = 0;
	/* A direct grant follows this link's MTU, as an endpoint of our own
	 * does; an emulated endpoint is told its figures by the daemon. */
	err = read_link_info(ep, ifname);
	if (!err)
		err = unet_remote_create(ep, ifname, c->daemon_socket, c->kind, c->asked_segment,
					 c->frame_size, c->asked_ring);
	if (!err)
		err = unet_pool_init(&ep->pool, ep->nframes, ep->frame_size);
	if (!err) {
		ep->by_tag = calloc(UNET_MAX_CHANNELS, sizeof(*ep->by_tag));
		err = ep->by_tag ? 0 : -ENOMEM;
	}
	if (err) {
		unet_log(UNET_LOG_ERROR, "%s: endpoint from unetd not created: %s", ifname,
			 strerror(-err));
		unet_endpoint__destroy(ep);
		errno = -err;
		return NULL;
	}
	unet_refill(ep);
	unet_log(UNET_LOG_INFO, "%s: %s endpoint %u from unetd, %u frames of %u", ifname,
		 ep->emulated ? "emulated" : "direct (granted)", ep->remote_ep, ep->nframes,
		 ep->frame_size);
	return ep;
}

struct unet_endpoint *unet_endpoint__create(const char *ifname,
					    const struct unet_endpoint_opts *opts)
{
	struct unet_iface_status st;
	struct unet_endpoint *ep;
	struct ep_config c;
	int err, slot;

	if (!ifname || !*ifname || strlen(ifname) >= IF_NAMESIZE) {
		errno = EINVAL;
		return NULL;
	}
	err = ep_config_from_opts(opts, &c);
	if (err) {
		errno = -err;
		return NULL;
	}
	if (!if_nametoindex(ifname)) {
		unet_log(UNET_LOG_ERROR, "no such interface: %s", ifname);
		errno = ENODEV;
		return NULL;
	}
	ep = calloc(1, sizeof(*ep));
	if (!ep) {
		errno = ENOMEM;
		return NULL;
	}
	ep->epoll_fd = -1;
	ep->alive_fd = -1;
	ep->daemon_fd = -1;
	ep->kick_fd = -1;
	ep->tx_payload = UNET_TX_PAYLOAD;
	ep->need_wakeup = c.need_wakeup;
	ep->busy_poll_usec = c.busy_poll_usec;
	ep->spin_us = unet_spin_default();

	/* Only root can make sockets of its own on the device (the pins and
	 * the bpf() calls are root's): everyone else asks unetd, which grants
	 * a direct endpoint or serves an emulated one as its policy says. */
	if (c.kind == UNET_ENDPOINT_EMULATED || geteuid() != 0)
		return create_remote(ep, ifname, &c);
	ep->kind = UNET_ENDPOINT_DIRECT;
	snprintf(ep->kind_reason, sizeof(ep->kind_reason), "own AF_XDP sockets (%s)",
		 c.kind == UNET_ENDPOINT_AUTO ? "root" : "asked for");

	ep->iface = open_or_attach(ifname, &c, &err);
	if (!ep->iface)
		goto fail;
	err = unet_iface__status(ep->iface, &st);
	if (err)
		goto fail;
	ep->mode = st.mode;
	ep->alive_fd = unet_alive_map_create(&ep->token, &ep->alive_map_id);
	if (ep->alive_fd < 0) {
		err = ep->alive_fd;
		goto fail;
	}
	slot = claim_slot(ep);
	if (slot < 0) {
		err = slot;
		if (err == -ENOSPC)
			unet_log(UNET_LOG_ERROR, "%s: all %d endpoint slots in use", ifname,
				 UNET_MAX_ENDPOINTS);
		goto fail;
	}
	ep->id = (uint32_t)slot;
	ep->slot_claimed = true;

	err = read_link_info(ep, ifname);
	if (err)
		goto fail;
	err = pick_queues(ep, ifname, c.queue_mask);
	if (err)
		goto fail;
	ep->frame_size = c.frame_size;
	ep->nframes = c.segment_size / c.frame_size;
	ep->segment_size = (size_t)ep->nframes * c.frame_size;
	/* The MTU counts everything after the Ethernet header.  What one
	 * chunk holds is a send buffer's payload; a larger MTU (up to
	 * UNET_JUMBO_MTU_MAX) takes messages in pieces, reassembled in slots
	 * after the frames (pieces.c) if the kernel has multi-buffer. */
	ep->buf_payload = c.frame_size - XDP_PACKET_HEADROOM - UNET_TX_PAYLOAD;
	ep->max_payload = (ep->mtu < UNET_JUMBO_MTU_MAX ? ep->mtu : UNET_JUMBO_MTU_MAX) -
			  UNET_HDR_LEN;
	if (ep->max_payload <= ep->buf_payload) {
		ep->buf_payload = ep->max_payload;
		/* Checksums computed by the device (txmd.c) need room in
		 * front of every sent frame: payloads start later in their
		 * buffers where they still fit.  Not with pieces (frames
		 * larger than a chunk): pieces.c leaves no room. */
		if (!c.no_tx_csum_offload &&
		    ep->max_payload <= c.frame_size - XDP_PACKET_HEADROOM - UNET_TX_PAYLOAD_TXMD &&
		    unet_txmd_supported())
			ep->tx_payload = UNET_TX_PAYLOAD_TXMD;
	} else {
		uint32_t slot = unet_jumbo_slot_bytes(ep->max_payload, c.frame_size);

		err = unet_jumbo_init(&ep->jumbo, ep->segment_size, slot, UNET_JUMBO_SLOTS);
		if (err)
			goto fail;
		ep->segment_size += (size_t)slot * UNET_JUMBO_SLOTS;
	}
	ep->batch = c.tx_size < 64 ? c.tx_size : 64;
	/* Keep half of the segment for receiving, shared out among the
	 * queues, the rest for sending. */
	ep->fill_target = ep->nframes / 2 / ep->nqueues;
	if (ep->fill_target > c.fill_size)
		ep->fill_target = c.fill_size;
	if (ep->fill_target > c.rx_size)
		ep->fill_target = c.rx_size;

	ep->segment = mmap(NULL, ep->segment_size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (ep->segment == MAP_FAILED) {
		ep->segment = NULL;
		err = -errno;
		goto fail;
	}
	err = unet_pool_init(&ep->pool, ep->nframes, ep->frame_size);
	if (err)
		goto fail;
	err = setup_sockets(ep, ifname, &c);
	if (err)
		goto fail;
	if (c.busy_poll_usec)
		for (uint32_t i = 0; i < ep->nqueues; i++)
			set_busy_poll(&ep->q[i], &c);
	ep->by_tag = calloc(UNET_MAX_CHANNELS, sizeof(*ep->by_tag));
	if (!ep->by_tag) {
		err = -ENOMEM;
		goto fail;
	}
	unet_refill(ep);
	err = publish_sockets(ep);
	if (err)
		goto fail;
	unet_log(UNET_LOG_INFO, "%s: endpoint %u, %u queue(s), %s mode, %u frames of %u", ifname,
		 ep->id, ep->nqueues, ep->zerocopy ? "zero-copy" : "copy", ep->nframes,
		 ep->frame_size);
	return ep;
fail:
	unet_log(UNET_LOG_ERROR, "%s: endpoint not created: %s", ifname, strerror(-err));
	unet_endpoint__destroy(ep);
	errno = -err;
	return NULL;
}

void unet_endpoint__destroy(struct unet_endpoint *ep)
{
	if (!ep)
		return;
	/* Messages the application handed over should still leave. */
	if ((ep->umem || ep->txmd || ep->emulated) && unet_endpoint__flush(ep, 200))
		unet_log(UNET_LOG_WARN, "endpoint %u: destroyed with sends still queued", ep->id);
	if (ep->umem || ep->txmd) {
		uint32_t in_fill = 0;

		for (uint32_t i = 0; i < ep->nqueues; i++)
			in_fill += ep->q[i].in_fill;
		unet_log(UNET_LOG_DEBUG, "endpoint %u: %u of %u frames free, %u on free queues",
			 ep->id, ep->pool.nfree, ep->nframes, in_fill);
	}
	ep->closing = true;
	/* Layers first: they may still send (and close what they opened). */
	while (ep->nlayers) {
		ep->nlayers--;
		ep->layers[ep->nlayers].layer->destroy(ep->layers[ep->nlayers].state);
	}
	unet_channel_free_all(ep);
	unet_channel_free_closed(ep);
	if (ep->emulated || ep->daemon_fd >= 0)
		unet_remote_close(ep);
	destroy_sockets(ep);
	if (ep->epoll_fd >= 0)
		close(ep->epoll_fd);
	if (ep->slot_claimed)
		release_slot(ep);
	if (ep->alive_fd >= 0)
		close(ep->alive_fd);
	unet_iface__close(ep->iface);
	if (ep->segment)
		munmap(ep->segment, ep->segment_size);
	unet_pool_fini(&ep->pool);
	unet_jumbo_fini(&ep->jumbo);
	free(ep->by_tag);
	free(ep);
}

unsigned int unet_endpoint_dup_sockets(const struct unet_endpoint *ep, int *fds)
{
	int own[UNET_MAX_QUEUES + 1];
	unsigned int n = 0, k = 0;

	if (!ep)
		return 0;
	for (uint32_t i = 0; i < ep->nqueues; i++)
		if (ep->q[i].fd >= 0 && (ep->q[i].xsk || ep->txmd))
			own[n++] = ep->q[i].fd;
	if (ep->umem)
		own[n++] = xsk_umem__fd(ep->umem);
	for (unsigned int i = 0; i < n; i++) {
		bool seen = own[i] < 0;
		int fd;

		for (unsigned int j = 0; j < i && !seen; j++)
			seen = own[j] == own[i];
		if (seen)
			continue;
		fd = fcntl(own[i], F_DUPFD_CLOEXEC, 0);
		if (fd >= 0)
			fds[k++] = fd;
	}
	return k;
}

int unet_endpoint__info(const struct unet_endpoint *ep, struct unet_endpoint_info *info)
{
	if (!ep || !info)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	info->id = ep->id;
	info->nqueues = ep->nqueues;
	info->queue_mask = ep->queue_mask;
	info->zerocopy = ep->zerocopy;
	info->need_wakeup = ep->need_wakeup;
	info->mode = ep->mode;
	info->frame_size = ep->frame_size;
	info->nframes = ep->nframes;
	info->max_payload = ep->max_payload;
	info->buf_payload = ep->buf_payload;
	info->multi_buffer = ep->jumbo.sg;
	info->tx_csum_offload = ep->tx_csum;
	memcpy(info->mac, ep->mac, 6);
	info->ifindex = ep->iface ? ep->iface->ifindex : ep->ifindex;
	info->rx_buffers = ep->fill_target;
	info->kind = ep->kind;
	snprintf(info->kind_reason, sizeof(info->kind_reason), "%s", ep->kind_reason);
	if (ep->emulated)
		info->id = ep->remote_ep;
	return 0;
}

int unet_endpoint__stats(struct unet_endpoint *ep, struct unet_endpoint_stats *st)
{
	if (!ep || !st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	if (ep->emulated)
		unet_remote_stats(ep, st);
	for (uint32_t i = 0; i < ep->nqueues && !ep->emulated; i++) {
		struct xdp_statistics xs;
		socklen_t len = sizeof(xs);

		if (getsockopt(ep->q[i].fd, SOL_XDP, XDP_STATISTICS, &xs, &len))
			return -errno;
		st->rx_dropped += xs.rx_dropped;
		st->rx_ring_full += xs.rx_ring_full;
		st->rx_fill_empty += xs.rx_fill_ring_empty_descs;
		st->rx_invalid_descs += xs.rx_invalid_descs;
		st->tx_invalid_descs += xs.tx_invalid_descs;
	}
	st->rx_msgs = ep->rx_msgs;
	st->tx_msgs = ep->tx_msgs;
	st->rx_unknown_channel = ep->rx_unknown_channel;
	st->rx_malformed = ep->rx_malformed;
	st->rx_no_handler = ep->rx_no_handler;
	st->rx_bad_pieces = ep->rx_bad_pieces;
	st->rx_no_jumbo_slot = ep->rx_no_jumbo_slot;
	return 0;
}

void *unet_endpoint__segment(const struct unet_endpoint *ep, size_t *size)
{
	if (!ep) {
		errno = EINVAL;
		return NULL;
	}
	if (size)
		*size = ep->segment_size;
	return ep->segment;
}

int unet_endpoint__fd(struct unet_endpoint *ep)
{
	return ep ? unet_endpoint_epoll(ep) : -EINVAL;
}
