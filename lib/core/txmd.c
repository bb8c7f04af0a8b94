/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * txmd.c - an endpoint's sockets on a segment registered with room for
 * AF_XDP TX metadata, and the checksum requests written into that room.
 *
 * libxdp 1.3 (Debian 12) registers the UMEM with a zeroed
 * tx_metadata_len and no way to set it, so an endpoint that asks the
 * device for transmit checksums registers its segment and maps its rings
 * itself, as unetd does for its grants: one socket per queue, the first
 * owning the UMEM, the others sharing it (XDP_SHARED_UMEM, each with its
 * own free and completion queues).
 *
 * With tx_metadata_len set the kernel checks every descriptor, with or
 * without XDP_TX_METADATA, for that much room in front of the frame inside
 * its chunk: a frame closer to its chunk's start is refused
 * (tx_invalid_descs): such endpoints start send payloads further into
 * their buffers (UNET_TX_PAYLOAD_TXMD), the layers' frames start past the
 * room, and unet_layer_xmit refuses a frame that does not.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/objects.h"
#include "core/txmd.h"

#ifndef SOL_XDP
#define SOL_XDP 283
#endif

/* The four rings of each socket, as mapped. */
struct unet_txmd_maps {
	void *map[UNET_MAX_QUEUES][4];
	size_t len[UNET_MAX_QUEUES][4];
};

static int map_ring(struct unet_txmd_maps *m, uint32_t qi, int which, int fd,
		    const struct xdp_ring_offset *o, uint32_t size, size_t desc_size, off_t pgoff,
		    void *ring, bool prod)
{
	size_t len = o->desc + (size_t)size * desc_size;
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, pgoff);
	/* xsk_ring_prod and xsk_ring_cons have one layout (xsk.h). */
	struct xsk_ring_prod *r = ring;

	if (p == MAP_FAILED)
		return -errno;
	m->map[qi][which] = p;
	m->len[qi][which] = len;
	r->producer = (uint32_t *)(p + o->producer);
	r->consumer = (uint32_t *)(p + o->consumer);
	r->flags = (uint32_t *)(p + o->flags);
	r->ring = p + o->desc;
	r->mask = size - 1;
	r->size = size;
	r->cached_prod = *r->producer;
	/* A producer may fill the whole ring: its free count starts full. */
	r->cached_cons = *r->consumer + (prod ? size : 0);
	return 0;
}

static int set_ring(int fd, int opt, uint32_t size)
{
	return setsockopt(fd, SOL_XDP, opt, &size, sizeof(size)) ? -errno : 0;
}

/* Rings of queue qi: the free and completion ones on every socket (a
 * socket sharing the UMEM on another queue needs its own), RX and TX. */
static int make_rings(struct unet_endpoint *ep, uint32_t qi, const struct unet_txmd_cfg *cfg)
{
	struct unet_queue *q = &ep->q[qi];
	struct xdp_mmap_offsets off;
	socklen_t olen = sizeof(off);
	int err;

	if ((err = set_ring(q->fd, XDP_UMEM_FILL_RING, cfg->fill_size)) ||
	    (err = set_ring(q->fd, XDP_UMEM_COMPLETION_RING, cfg->comp_size)) ||
	    (err = set_ring(q->fd, XDP_RX_RING, cfg->rx_size)) ||
	    (err = set_ring(q->fd, XDP_TX_RING, cfg->tx_size)))
		return err;
	if (getsockopt(q->fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &olen))
		return -errno;
	if (olen != sizeof(off))
		return -EOPNOTSUPP; /* before 5.4: no ring flags, and no metadata anyway */
	if ((err = map_ring(ep->txmd, qi, 0, q->fd, &off.rx, cfg->rx_size, sizeof(struct xdp_desc),
			    XDP_PGOFF_RX_RING, &q->rx, false)) ||
	    (err = map_ring(ep->txmd, qi, 1, q->fd, &off.tx, cfg->tx_size, sizeof(struct xdp_desc),
			    XDP_PGOFF_TX_RING, &q->tx, true)) ||
	    (err = map_ring(ep->txmd, qi, 2, q->fd, &off.fr, cfg->fill_size, sizeof(uint64_t),
			    XDP_UMEM_PGOFF_FILL_RING, &q->fill, true)) ||
	    (err = map_ring(ep->txmd, qi, 3, q->fd, &off.cr, cfg->comp_size, sizeof(uint64_t),
			    XDP_UMEM_PGOFF_COMPLETION_RING, &q->comp, false)))
		return err;
	return 0;
}

/* The kernel lets go of a closed socket's queue asynchronously (EBUSY
 * for some milliseconds): retried for a bounded time, as endpoint.c does. */
static int bind_retry(int fd, const struct sockaddr_xdp *sa)
{
	const struct timespec pause = { .tv_nsec = 5 * 1000 * 1000 };

	for (int tries = 0;; tries++) {
		if (!bind(fd, (const struct sockaddr *)sa, sizeof(*sa)))
			return 0;
		if (errno != EBUSY || tries >= 100)
			return -errno;
		nanosleep(&pause, NULL);
	}
}

bool unet_txmd_supported(void)
{
	/* 0 not known yet, 1 yes, -1 no; threads racing on the first
	 * endpoints find the same answer. */
	static int known;
	int k = __atomic_load_n(&known, __ATOMIC_RELAXED);
	long page = sysconf(_SC_PAGESIZE);
	struct unet_umem_reg reg = {
		.chunk_size = 2048,
		.flags = XDP_UMEM_TX_METADATA_LEN,
		.tx_metadata_len = UNET_TXMD_LEN,
	};
	void *area;
	int fd;

	if (k)
		return k > 0;
	k = 0;
	area = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (area != MAP_FAILED && fd >= 0) {
		reg.addr = (uint64_t)(uintptr_t)area;
		reg.len = (uint64_t)page;
		if (!setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)))
			k = 1;
		else if (errno == EINVAL) /* the flag unknown: the kernel's answer */
			__atomic_store_n(&known, -1, __ATOMIC_RELAXED);
	}
	if (fd >= 0)
		close(fd);
	if (area != MAP_FAILED)
		munmap(area, (size_t)page);
	/* Only answers are kept: no memory or no AF_XDP now says nothing
	 * of the kernel, and is asked again by the next endpoint. */
	if (k > 0)
		__atomic_store_n(&known, 1, __ATOMIC_RELAXED);
	return k > 0;
}

int unet_txmd_create(struct unet_endpoint *ep, int ifindex, const struct unet_txmd_cfg *cfg)
{
	struct unet_umem_reg reg = {
		.addr = (uint64_t)(uintptr_t)ep->segment,
		/* Only the frames: the reassembly slots after them are
		 * never the kernel's to write (pieces.c). */
		.len = (uint64_t)ep->nframes * ep->frame_size,
		.chunk_size = cfg->frame_size,
		.headroom = cfg->headroom,
		.flags = XDP_UMEM_TX_METADATA_LEN,
		.tx_metadata_len = UNET_TXMD_LEN,
	};
	int err;

	ep->txmd = calloc(1, sizeof(*ep->txmd));
	if (!ep->txmd)
		return -ENOMEM;
	for (uint32_t i = 0; i < ep->nqueues; i++)
		ep->q[i].fd = -1;
	for (uint32_t i = 0; i < ep->nqueues; i++) {
		struct unet_queue *q = &ep->q[i];
		struct sockaddr_xdp sa = {
			.sxdp_family = AF_XDP,
			.sxdp_ifindex = (uint32_t)ifindex,
			.sxdp_queue_id = q->queue_id,
			.sxdp_flags = cfg->bind_flags,
		};

		q->fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
		if (q->fd < 0)
			return -errno;
		if (i == 0 && setsockopt(q->fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)))
			return -errno;
		err = make_rings(ep, i, cfg);
		if (err)
			return err;
		if (i > 0) {
			/* A sharing socket takes its mode from the owner's
			 * and may name no flag of its own. */
			sa.sxdp_flags = XDP_SHARED_UMEM;
			sa.sxdp_shared_umem_fd = (uint32_t)ep->q[0].fd;
		}
		err = bind_retry(q->fd, &sa);
		if (err)
			return err;
	}
	ep->txmd_len = UNET_TXMD_LEN;
	return 0;
}

void unet_txmd_destroy(struct unet_endpoint *ep)
{
	if (!ep->txmd)
		return;
	/* The sharing sockets first: the owner's UMEM outlives them. */
	for (uint32_t i = ep->nqueues; i-- > 0;) {
		for (int k = 0; k < 4; k++)
			if (ep->txmd->map[i][k])
				munmap(ep->txmd->map[i][k], ep->txmd->len[i][k]);
		if (ep->q[i].fd >= 0)
			close(ep->q[i].fd);
		ep->q[i].fd = -1;
	}
	free(ep->txmd);
	ep->txmd = NULL;
	ep->txmd_len = 0;
}

uint32_t unet_txmd_csum(struct unet_endpoint *ep, uint64_t addr, uint16_t csum_start,
			uint16_t csum_offset)
{
	const struct unet_tx_metadata md = {
		.flags = XDP_TXMD_FLAGS_CHECKSUM,
		.csum_start = csum_start,
		.csum_offset = csum_offset,
	};

	/* Copied, not stored through a pointer: frames start at any
	 * offset, so the room in front of one need not be 8-byte aligned. */
	memcpy((uint8_t *)ep->segment + addr - UNET_TXMD_LEN, &md, sizeof(md));
	return XDP_TX_METADATA;
}
