/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * remote.c - endpoints served by unetd (kernel-emulated endpoints), the
 * client's side: one connection to the daemon per endpoint (the daemon
 * frees the endpoint when it closes), the requests, and the shared region
 * mapped so that the rest of the core runs its rings exactly as it runs
 * an AF_XDP socket's (lib/proto/unetd_proto.h).
 *
 * What differs from a socket is small and lives here: a kick is a write
 * to an eventfd, a wait sleeps on another eventfd after telling the
 * daemon so, statistics are the daemon's counters in the region, channels
 * are asked of the daemon, and a daemon that went away is noticed through
 * the connection (the endpoint is then dead with -ECONNRESET).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>

#include <linux/if_xdp.h>
#include <unistd.h>

#include "core/chan_udp.h"
#include "core/clock.h"
#include "core/objects.h"
#include "proto/unetd_proto.h"

/* ---- Requests ---------------------------------------------------------------- */

/*
 * Send one request (with send_fd attached if >= 0) and wait for its reply
 * (at most 5 s: the daemon answers at once or is stuck).  Copies at most
 * cap bytes of the body to rep and its length to *len; takes up to *nfds
 * descriptors (closes any others).  Returns 0 or the daemon's error, with
 * its one-line reason in err; -ECONNRESET when the connection is gone
 * (the daemon drops a client for a request it does not understand),
 * -ETIMEDOUT, -EPROTO.
 */
static int request(int fd, uint16_t type, const void *body, uint32_t blen, int send_fd,
		   void *rep, uint32_t cap, uint32_t *len, int *fds, int *nfds, char *err,
		   size_t errlen)
{
	static uint32_t seq;
	struct unetd_req_hdr h = { .version = UNETD_PROTO_VERSION, .type = type, .len = blen,
				   .seq = ++seq };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)body, blen } };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = blen ? 2 : 1 };
	union {
		struct unetd_rep_hdr h;
		uint8_t b[UNETD_MAX_MSG];
	} r;
	char cbuf[CMSG_SPACE(sizeof(int) * 4)], sbuf[CMSG_SPACE(sizeof(int))];
	struct iovec riov = { r.b, sizeof(r.b) };
	struct msghdr rm = { .msg_iov = &riov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int got = 0, maxfds = nfds ? *nfds : 0;
	ssize_t n;

	if (err && errlen)
		err[0] = '\0';
	if (send_fd >= 0) {
		struct cmsghdr *cm;

		memset(sbuf, 0, sizeof(sbuf));
		m.msg_control = sbuf;
		m.msg_controllen = sizeof(sbuf);
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &send_fd, sizeof(int));
	}
	if (nfds)
		*nfds = 0;
	if (sendmsg(fd, &m, MSG_NOSIGNAL) < 0)
		return errno == EPIPE ? -ECONNRESET : -errno;
	if (poll(&pfd, 1, 5000) != 1)
		return -ETIMEDOUT;
	n = recvmsg(fd, &rm, MSG_CMSG_CLOEXEC);
	if (n <= 0)
		return n == 0 ? -ECONNRESET : -errno;
	/* Take every descriptor that came, keep what we asked for. */
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&rm); cm; cm = CMSG_NXTHDR(&rm, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int f;

			memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (got < maxfds)
				fds[got++] = f;
			else
				close(f);
		}
	}
	if (nfds)
		*nfds = got;
	if ((size_t)n < sizeof(r.h) || r.h.version != UNETD_PROTO_VERSION || r.h.seq != h.seq ||
	    r.h.type != type || r.h.len > (size_t)n - sizeof(r.h)) {
		if (err && errlen)
			snprintf(err, errlen, "malformed reply to request %u", type);
		return -EPROTO;
	}
	if (r.h.err) {
		r.h.msg[sizeof(r.h.msg) - 1] = '\0';
		if (err && errlen)
			snprintf(err, errlen, "%s", r.h.msg[0] ? r.h.msg : strerror(-r.h.err));
		return r.h.err < 0 ? r.h.err : -EPROTO;
	}
	if (rep)
		memcpy(rep, r.b + sizeof(r.h), r.h.len < cap ? r.h.len : cap);
	if (len)
		*len = r.h.len;
	return 0;
}

/* request() for the library's own calls: the daemon's reason goes to the
 * log, and a reply shorter than asked for is a protocol error. */
/* A request's result r as the library's calls take it: the daemon's
 * reason for a refusal logged, a reply shorter than rep_cap refused. */
static int call_result(int r, const char *err, uint32_t got, uint32_t rep_cap)
{
	if (r && err[0])
		unet_log(UNET_LOG_ERROR, "unetd: %s", err);
	if (!r && got < rep_cap)
		r = -EPROTO;
	return r;
}

static int call_fd(int fd, uint16_t type, const void *body, uint32_t len, int send_fd, void *rep,
		   uint32_t rep_cap, int *fds, int *nfds)
{
	char err[128];
	uint32_t got = 0;
	int r = request(fd, type, body, len, send_fd, rep, rep_cap, &got, fds, nfds, err,
			sizeof(err));

	return call_result(r, err, got, rep_cap);
}

static int call(int fd, uint16_t type, const void *body, uint32_t len, void *rep,
		uint32_t rep_cap, int *fds, int *nfds)
{
	return call_fd(fd, type, body, len, -1, rep, rep_cap, fds, nfds);
}

int unet_daemon__call(int fd, uint16_t type, const void *body, uint32_t blen, void *rep,
		      uint32_t cap, uint32_t *len, char *err, size_t errlen)
{
	if (fd < 0 || (!body && blen))
		return -EINVAL;
	return request(fd, type, body, blen, -1, rep, cap, len, NULL, NULL, err, errlen);
}

/* Where unetd listens: path, else $UNET_DAEMON_SOCKET, else the default. */
static const char *socket_path(const char *path)
{
	const char *env = getenv(UNETD_SOCKET_ENV);

	if (path && *path)
		return path;
	return env && *env ? env : UNETD_DEFAULT_SOCKET;
}

int unet_daemon__connect(const char *path, uint32_t *pid, uint32_t *version, char *err,
			 size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct unetd_hello hello = { .version = UNETD_PROTO_VERSION }, rep = { 0 };
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	uint32_t len = 0;
	int fd, r;

	path = socket_path(path);
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "unetd socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "socket: %s", strerror(-r));
		return r;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		r = -errno;
		snprintf(err, errlen, "unetd not reachable at %s: %s (is unetd running? $%s)", path,
			 strerror(-r), UNETD_SOCKET_ENV);
		close(fd);
		return r;
	}
	/* The daemon is root: anything else at the path (another user's
	 * socket where $UNET_DAEMON_SOCKET points) is not unetd, and what it
	 * hands us (a region, a socket) is not to be trusted. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) || cred.uid != 0) {
		r = -EPERM;
		snprintf(err, errlen, "the process at %s runs as uid %u, not root: not unetd, refused",
			 path, (unsigned)cred.uid);
		close(fd);
		return r;
	}
	if (pid)
		*pid = (uint32_t)cred.pid;
	r = request(fd, UNETD_REQ_HELLO, &hello, sizeof(hello), -1, &rep, sizeof(rep), &len, NULL,
		    NULL, err, errlen);
	if (!r && len < sizeof(rep))
		r = -EPROTO;
	if (r) {
		if (r == -ECONNRESET || r == -EPROTO)
			snprintf(err, errlen,
				 "unetd at %s refused our hello (it does not speak protocol version %d)",
				 path, UNETD_PROTO_VERSION);
		else if (r == -ETIMEDOUT)
			snprintf(err, errlen, "unetd at %s does not answer", path);
		else if (!err[0])
			snprintf(err, errlen, "unetd at %s: %s", path, strerror(-r));
		close(fd);
		return r;
	}
	if (version)
		*version = rep.version;
	return fd;
}

static int connect_daemon(const char *path)
{
	char err[256];
	int fd = unet_daemon__connect(path, NULL, NULL, err, sizeof(err));

	if (fd < 0)
		unet_log(UNET_LOG_ERROR, "%s", err);
	return fd;
}

/* ---- The region ----------------------------------------------------------- */

static bool ring_fits(const struct unetd_ring_off *r, size_t desc_size, uint64_t limit)
{
	return r->size && !(r->size & (r->size - 1)) && r->size <= 65536 &&
	       r->producer + 4 <= limit && r->consumer + 4 <= limit && r->flags + 4 <= limit &&
	       r->desc + (uint64_t)r->size * desc_size <= limit;
}

/* Point a libxdp ring at the region's: a producer's cached consumer runs
 * a ring ahead, as libxdp sets it up for a socket's. */
static void ring_map(void *prod_or_cons, uint8_t *base, const struct unetd_ring_off *r, bool prod)
{
	struct xsk_ring_prod *x = prod_or_cons; /* same layout as xsk_ring_cons */

	x->producer = (uint32_t *)(base + r->producer);
	x->consumer = (uint32_t *)(base + r->consumer);
	x->flags = (uint32_t *)(base + r->flags);
	x->ring = base + r->desc;
	x->mask = r->size - 1;
	x->size = r->size;
	x->cached_prod = *x->producer;
	x->cached_cons = *x->consumer + (prod ? r->size : 0);
}

/* A memfd that cannot shrink: a page we map of it can never vanish under
 * us (SIGBUS).  The daemon seals what it makes; anything else is refused. */
static bool sealed_against_shrinking(int memfd)
{
	int seals = fcntl(memfd, F_GET_SEALS);

	return seals >= 0 && (seals & F_SEAL_SHRINK);
}

/*
 * Map size bytes of memfd with tail bytes of our own memory right after
 * them: the reassembly slots of messages in pieces (pieces.c) live at
 * segment offsets past the frames, and only we ever write them.  Returns
 * the mapping or MAP_FAILED with errno set.
 */
static void *map_with_tail(int memfd, size_t size, size_t tail, int flags)
{
	uint8_t *base = mmap(NULL, size + tail, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (base == MAP_FAILED || !tail) {
		if (base != MAP_FAILED)
			munmap(base, size);
		return mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | flags, memfd, 0);
	}
	if (mmap(base, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | flags, memfd, 0) ==
	    MAP_FAILED) {
		int err = errno;

		munmap(base, size + tail);
		errno = err;
		return MAP_FAILED;
	}
	return base;
}

/* The reassembly slots for messages of max_payload bytes in frames of
 * frame_size, placed at segment offset base: 0 or -ENOMEM. */
static int jumbo_setup(struct unet_endpoint *ep, uint64_t base, uint32_t slot)
{
	int err = unet_jumbo_init(&ep->jumbo, base, slot, UNET_JUMBO_SLOTS);

	if (!err)
		ep->jumbo.sg = true;
	return err;
}

static int map_region(struct unet_endpoint *ep, int memfd, const struct unetd_ep_created *rep,
		      uint32_t slot)
{
	const struct unetd_region *hd;
	size_t tail = (size_t)slot * UNET_JUMBO_SLOTS;
	struct stat st;
	uint8_t *base;

	if (fstat(memfd, &st) || (uint64_t)st.st_size != rep->region_size ||
	    rep->region_size < sizeof(*hd) || !sealed_against_shrinking(memfd))
		return -EPROTO;
	base = map_with_tail(memfd, rep->region_size, tail, 0);
	if (base == MAP_FAILED)
		return -errno;
	hd = (const struct unetd_region *)base;
	if (hd->magic != UNETD_REGION_MAGIC || hd->version != UNETD_PROTO_VERSION ||
	    hd->frame_size != rep->frame_size || hd->nframes < 64 ||
	    hd->segment_size != (uint64_t)hd->nframes * hd->frame_size ||
	    hd->segment_off + hd->segment_size > rep->region_size ||
	    (hd->segment_off & (hd->frame_size - 1)) ||
	    !ring_fits(&hd->fill, 8, hd->segment_off) || !ring_fits(&hd->comp, 8, hd->segment_off) ||
	    !ring_fits(&hd->rx, sizeof(struct xdp_desc), hd->segment_off) ||
	    !ring_fits(&hd->tx, sizeof(struct xdp_desc), hd->segment_off) ||
	    (tail && hd->segment_off + hd->segment_size != rep->region_size)) {
		munmap(base, rep->region_size + tail);
		unet_log(UNET_LOG_ERROR, "unetd: the endpoint's region does not add up");
		return -EPROTO;
	}
	ep->region = (struct unetd_region *)base;
	ep->region_size = rep->region_size + tail;
	ep->segment = base + hd->segment_off;
	ep->segment_size = hd->segment_size;
	ep->frame_size = hd->frame_size;
	ep->nframes = hd->nframes;
	/* The slots follow the segment, the region's last part. */
	if (tail && jumbo_setup(ep, ep->segment_size, slot))
		return -ENOMEM;
	ring_map(&ep->q[0].fill, base, &hd->fill, true);
	ring_map(&ep->q[0].comp, base, &hd->comp, false);
	ring_map(&ep->q[0].rx, base, &hd->rx, false);
	ring_map(&ep->q[0].tx, base, &hd->tx, true);
	ep->q[0].queue_id = 0;
	ep->nqueues = 1;
	ep->queue_mask = 1;
	/* Half the frames for receiving, as for a socket, within the ring. */
	ep->fill_target = ep->nframes / 2;
	if (ep->fill_target > hd->fill.size)
		ep->fill_target = hd->fill.size;
	if (ep->fill_target > hd->rx.size)
		ep->fill_target = hd->rx.size;
	ep->batch = 64;
	return 0;
}

/* ---- A direct grant: the daemon's socket, our rings --------------------------- */

/* Map one ring of the granted socket (page offset pgoff) as a libxdp ring. */
static int map_xsk_ring(struct unet_endpoint *ep, int i, int fd, const struct xdp_ring_offset *o,
			uint32_t size, size_t desc_size, off_t pgoff, void *ring, bool prod)
{
	struct xsk_ring_prod *x = ring;
	size_t len = o->desc + size * desc_size;
	uint8_t *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, pgoff);

	if (m == MAP_FAILED)
		return -errno;
	ep->ring_map[i] = m;
	ep->ring_map_len[i] = len;
	x->producer = (uint32_t *)(m + o->producer);
	x->consumer = (uint32_t *)(m + o->consumer);
	x->flags = (uint32_t *)(m + o->flags);
	x->ring = m + o->desc;
	x->mask = size - 1;
	x->size = size;
	x->cached_prod = *x->producer;
	x->cached_cons = *x->consumer + (prod ? size : 0);
	return 0;
}

static int map_direct(struct unet_endpoint *ep, int memfd, int xsk,
		      const struct unetd_ep_created *rep, uint32_t slot)
{
	size_t tail = (size_t)slot * UNET_JUMBO_SLOTS;
	struct xdp_mmap_offsets off;
	socklen_t olen = sizeof(off);
	struct unet_queue *q = &ep->q[0];
	uint32_t ring = rep->ring_size;
	struct stat st;
	int err;

	if ((rep->frame_size != 2048 && rep->frame_size != 4096) || !ring || (ring & (ring - 1)) ||
	    ring > 65536 || rep->queue >= UNET_MAX_QUEUES || rep->slot >= UNET_MAX_ENDPOINTS ||
	    rep->nframes < 64 || (uint64_t)rep->nframes * rep->frame_size != rep->region_size ||
	    fstat(memfd, &st) || (uint64_t)st.st_size != rep->region_size ||
	    !sealed_against_shrinking(memfd)) {
		unet_log(UNET_LOG_ERROR, "unetd: the granted endpoint does not add up");
		return -EPROTO;
	}
	ep->segment = map_with_tail(memfd, rep->region_size, tail, MAP_POPULATE);
	if (ep->segment == MAP_FAILED) {
		ep->segment = NULL;
		return -errno;
	}
	ep->segment_size = rep->region_size + tail;
	/* Only the frames are the socket's UMEM: the slots after them are
	 * never the kernel's to write. */
	if (tail && jumbo_setup(ep, rep->region_size, slot))
		return -ENOMEM;
	ep->frame_size = rep->frame_size;
	ep->nframes = rep->nframes;
	if (getsockopt(xsk, SOL_XDP, XDP_MMAP_OFFSETS, &off, &olen))
		return -errno;
	if ((err = map_xsk_ring(ep, 0, xsk, &off.rx, ring, sizeof(struct xdp_desc),
				XDP_PGOFF_RX_RING, &q->rx, false)) ||
	    (err = map_xsk_ring(ep, 1, xsk, &off.tx, ring, sizeof(struct xdp_desc),
				XDP_PGOFF_TX_RING, &q->tx, true)) ||
	    (err = map_xsk_ring(ep, 2, xsk, &off.fr, ring, sizeof(uint64_t),
				XDP_UMEM_PGOFF_FILL_RING, &q->fill, true)) ||
	    (err = map_xsk_ring(ep, 3, xsk, &off.cr, ring, sizeof(uint64_t),
				XDP_UMEM_PGOFF_COMPLETION_RING, &q->comp, false)))
		return err;
	q->fd = xsk;
	q->queue_id = rep->queue;
	ep->nqueues = 1;
	ep->queue_mask = 1u << rep->queue;
	ep->zerocopy = rep->zerocopy;
	ep->id = rep->slot;
	ep->fill_target = ep->nframes / 2 < ring ? ep->nframes / 2 : ring;
	ep->batch = 64;
	return 0;
}

/* ---- Endpoints ---------------------------------------------------------------- */

/*
 * An endpoint from unetd's largest message (max_payload) and what one
 * send buffer holds (buf_payload).  A direct grant follows its link's MTU
 * (ep->mtu, read by the caller) as an endpoint of our own does; an
 * emulated one takes the daemon's figure.  Messages larger than a buffer
 * travel in pieces when the daemon says so (UNETD_EP_MULTI_BUFFER), else
 * the endpoint stays at one chunk per message.  Returns the bytes of a
 * reassembly slot to set up, 0 for none.
 */
static uint32_t plan_payload(struct unet_endpoint *ep, const struct unetd_ep_created *rep)
{
	uint32_t buf = rep->frame_size - XDP_PACKET_HEADROOM - UNET_TX_PAYLOAD, max;
	bool sg = rep->flags & UNETD_EP_MULTI_BUFFER;

	if (rep->kind == UNETD_KIND_DIRECT) {
		max = (ep->mtu < UNET_JUMBO_MTU_MAX ? ep->mtu : UNET_JUMBO_MTU_MAX) - UNET_HDR_LEN;
	} else {
		max = rep->max_payload < UNET_JUMBO_MTU_MAX - UNET_HDR_LEN
			      ? rep->max_payload
			      : UNET_JUMBO_MTU_MAX - UNET_HDR_LEN;
		/* One chunk per message: the daemon's figure stands for
		 * both, as it always did. */
		if (!sg)
			buf = max;
	}
	if (max <= buf || !sg) {
		ep->max_payload = ep->buf_payload = max < buf ? max : buf;
		return 0;
	}
	ep->max_payload = max;
	ep->buf_payload = buf;
	return unet_jumbo_slot_bytes(max, rep->frame_size);
}

int unet_remote_create(struct unet_endpoint *ep, const char *ifname, const char *socket_path,
		       enum unet_endpoint_kind kind, uint32_t segment_size, uint32_t frame_size,
		       uint32_t ring_size)
{
	struct unetd_ep_create req = { .kind = kind == UNET_ENDPOINT_DIRECT	? UNETD_KIND_DIRECT
					       : kind == UNET_ENDPOINT_EMULATED ? UNETD_KIND_EMULATED
										: UNETD_KIND_AUTO,
				       .segment_size = segment_size,
				       .frame_size = frame_size,
				       .ring_size = ring_size };
	struct unetd_ep_created rep;
	int fds[3] = { -1, -1, -1 }, nfds = 3, fd, err, netns;
	uint32_t slot = 0;

	snprintf(req.ifname, sizeof(req.ifname), "%s", ifname);
	fd = connect_daemon(socket_path);
	if (fd < 0)
		return fd;
	ep->daemon_fd = fd;
	/* Our network namespace: the daemon may live in another, and serves
	 * the device by that name in ours. */
	netns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	/* EBUSY: no queue free for a direct grant, yet, or the device's last
	 * interface still being torn down.  A socket closed a moment ago
	 * lets go of its queue some milliseconds later, a teardown takes
	 * tens of them, and the daemon never waits for either on the thread
	 * that serves everyone: we wait, 20 ms at a time, for a second (a
	 * direct grant) or three (an emulated endpoint, whose interface's
	 * teardown may be queued behind others'). */
	for (int tries = 0;; tries++) {
		nfds = 3;
		err = call_fd(fd, UNETD_REQ_EP_CREATE, &req, sizeof(req), netns, &rep, sizeof(rep),
			      fds, &nfds);
		if (err != -EBUSY || tries == (req.kind == UNETD_KIND_EMULATED ? 150 : 50))
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);
	}
	if (netns >= 0)
		close(netns);
	if (!err && rep.frame_size != 2048 && rep.frame_size != 4096)
		err = -EPROTO;
	if (!err)
		slot = plan_payload(ep, &rep);
	if (!err && rep.kind == UNETD_KIND_DIRECT) {
		/* fds: the segment, the bound socket. */
		err = nfds == 2 ? map_direct(ep, fds[0], fds[1], &rep, slot) : -EPROTO;
		if (fds[0] >= 0)
			close(fds[0]);
		if (err && fds[1] >= 0)
			close(fds[1]);
		if (err)
			return err;
		ep->remote_ep = rep.ep;
		ep->kind = UNET_ENDPOINT_DIRECT;
		rep.reason[sizeof(rep.reason) - 1] = '\0';
		snprintf(ep->kind_reason, sizeof(ep->kind_reason), "%s", rep.reason);
		ep->ifindex = rep.ifindex;
		ep->need_wakeup = true;
		ep->mode = UNET_XDP_MODE_AUTO;
		return 0;
	}
	if (!err && (nfds != 3 || rep.kind != UNETD_KIND_EMULATED))
		err = -EPROTO;
	if (!err)
		err = map_region(ep, fds[0], &rep, slot);
	if (fds[0] >= 0)
		close(fds[0]); /* the mapping keeps the region */
	ep->kick_fd = fds[1];
	ep->q[0].fd = fds[2]; /* notify: what wait and the poll fd watch */
	if (err)
		return err;
	ep->emulated = true;
	ep->inet_pieces = ep->jumbo.sg && (rep.flags & UNETD_EP_INET_PIECES);
	ep->remote_ep = rep.ep;
	ep->kind = UNET_ENDPOINT_EMULATED;
	rep.reason[sizeof(rep.reason) - 1] = '\0';
	snprintf(ep->kind_reason, sizeof(ep->kind_reason), "%s", rep.reason);
	memcpy(ep->mac, rep.mac, 6);
	ep->mtu = rep.mtu;
	ep->ifindex = rep.ifindex;
	ep->need_wakeup = true;
	ep->mode = UNET_XDP_MODE_AUTO;
	return 0;
}

void unet_remote_close(struct unet_endpoint *ep)
{
	for (int i = 0; i < 4; i++)
		if (ep->ring_map[i])
			munmap(ep->ring_map[i], ep->ring_map_len[i]);
	if (ep->region) {
		munmap(ep->region, ep->region_size);
		ep->segment = NULL; /* it was inside the region */
	}
	ep->region = NULL;
	if (ep->kick_fd >= 0)
		close(ep->kick_fd);
	if (ep->q[0].fd >= 0)
		close(ep->q[0].fd);
	ep->q[0].fd = -1;
	/* Closing the connection is what frees it at the daemon. */
	if (ep->daemon_fd >= 0)
		close(ep->daemon_fd);
	ep->daemon_fd = -1;
}

int unet_remote_channel_open(struct unet_endpoint *ep, uint16_t tag, const uint8_t peer_mac[6],
			     uint16_t peer_tag)
{
	struct unetd_ch_open req = { .ep = ep->remote_ep, .tag = tag, .peer_tag = peer_tag };

	memcpy(req.peer_mac, peer_mac, 6);
	return call(ep->daemon_fd, UNETD_REQ_CH_OPEN, &req, sizeof(req), NULL, 0, NULL, NULL);
}

/*
 * A routable channel's open: unetd never waits on the network on the
 * thread that serves everyone, and refuses with EAGAIN while the kernel
 * resolves the next hop it asked for.  We wait instead, asking again,
 * as long as the library waits for a channel of its own
 * (UNET_CHAN_RESOLVE_WAIT_MS), then EHOSTUNREACH as it does.  The first
 * tries come soon (an answer on the link takes well under a
 * millisecond), then every 10 ms: about a hundred requests for a silent
 * peer, far within the daemon's request budget.
 */
static int call_resolving(int fd, uint16_t type, const void *body, uint32_t len, void *rep,
			  uint32_t rep_cap)
{
	uint64_t start = unet_mono_ns();
	long step_ns = 1000 * 1000;
	char err[128];
	uint32_t got = 0;
	int r;

	for (;;) {
		r = request(fd, type, body, len, -1, rep, rep_cap, &got, NULL, NULL, err,
			    sizeof(err));
		if (r != -EAGAIN)
			break;
		if (unet_mono_ns() - start >= UNET_CHAN_RESOLVE_WAIT_MS * 1000000ull) {
			unet_log(UNET_LOG_ERROR, "unetd: %s: no answer within %d ms", err,
				 UNET_CHAN_RESOLVE_WAIT_MS);
			return -EHOSTUNREACH;
		}
		nanosleep(&(struct timespec){ .tv_nsec = step_ns }, NULL);
		step_ns = step_ns * 2 < 10 * 1000 * 1000 ? step_ns * 2 : 10 * 1000 * 1000;
	}
	return call_result(r, err, got, rep_cap);
}

int unet_remote_channel_open_ipv4(struct unet_endpoint *ep, uint16_t tag, uint32_t peer_addr,
				  uint16_t peer_port, uint16_t peer_tag, struct unet_wire_udp *w,
				  uint16_t *peer_src_port, uint16_t *max_payload)
{
	struct unetd_ch_open_ipv4 req = { .ep = ep->remote_ep, .peer_addr = peer_addr, .tag = tag,
					  .peer_tag = peer_tag, .peer_port = peer_port };
	struct unetd_ch_opened_ipv4 rep;
	int err = call_resolving(ep->daemon_fd, UNETD_REQ_CH_OPEN_IPV4, &req, sizeof(req), &rep,
				 sizeof(rep));

	if (err)
		return err;
	/* The daemon's word, but our own frames: a reply that does not add
	 * up would only make them be refused, so say so here instead. */
	if (!rep.sport || !rep.dport || rep.daddr != peer_addr) {
		unet_log(UNET_LOG_ERROR, "unetd: the routable channel's reply does not add up");
		unet_remote_channel_close(ep, tag);
		return -EPROTO;
	}
	memset(w, 0, sizeof(*w));
	memcpy(w->dst_mac, rep.dst_mac, 6);
	memcpy(w->src_mac, rep.src_mac, 6);
	w->saddr = rep.saddr;
	w->daddr = rep.daddr;
	w->sport = rep.sport;
	w->dport = rep.dport;
	w->dst_tag = peer_tag;
	w->src_tag = tag;
	*peer_src_port = rep.peer_port;
	*max_payload = rep.max_payload;
	return 0;
}

int unet_remote_channel_open_ipv6(struct unet_endpoint *ep, uint16_t tag,
				  const uint8_t peer_addr[16], uint16_t peer_port, uint16_t peer_tag,
				  struct unet_wire_udp *w, uint16_t *peer_src_port,
				  uint16_t *max_payload)
{
	struct unetd_ch_open_ipv6 req = { .ep = ep->remote_ep, .tag = tag, .peer_tag = peer_tag,
					  .peer_port = peer_port };
	struct unetd_ch_opened_ipv6 rep;
	int err;

	memcpy(req.peer_addr, peer_addr, 16);
	err = call_resolving(ep->daemon_fd, UNETD_REQ_CH_OPEN_IPV6, &req, sizeof(req), &rep,
			     sizeof(rep));
	if (err)
		return err;
	/* As over IPv4: a reply that does not add up is said here, not
	 * found out by every frame being refused. */
	if (!rep.sport || !rep.dport || memcmp(rep.daddr, peer_addr, 16)) {
		unet_log(UNET_LOG_ERROR, "unetd: the routable channel's reply does not add up");
		unet_remote_channel_close(ep, tag);
		return -EPROTO;
	}
	memset(w, 0, sizeof(*w));
	memcpy(w->dst_mac, rep.dst_mac, 6);
	memcpy(w->src_mac, rep.src_mac, 6);
	w->v6 = true;
	memcpy(w->saddr6, rep.saddr, 16);
	memcpy(w->daddr6, rep.daddr, 16);
	w->sport = rep.sport;
	w->dport = rep.dport;
	w->dst_tag = peer_tag;
	w->src_tag = tag;
	*peer_src_port = rep.peer_port;
	*max_payload = rep.max_payload;
	return 0;
}

void unet_remote_channel_close(struct unet_endpoint *ep, uint16_t tag)
{
	struct unetd_ch_ref req = { .ep = ep->remote_ep, .tag = tag };

	if (ep->daemon_fd >= 0)
		call(ep->daemon_fd, UNETD_REQ_CH_CLOSE, &req, sizeof(req), NULL, 0, NULL, NULL);
}

int unet_layer_daemon_call(struct unet_endpoint *ep, uint16_t type, const void *body,
			   uint32_t len, void *rep, uint32_t cap, int *fd)
{
	int fds[1] = { -1 }, nfds = fd ? 1 : 0, err;

	if (!ep || ep->daemon_fd < 0)
		return -ENOTCONN;
	err = call(ep->daemon_fd, type, body, len, rep, cap, fd ? fds : NULL, fd ? &nfds : NULL);
	if (fd)
		*fd = nfds ? fds[0] : -1;
	return err;
}

uint32_t unet_layer_daemon_ep(const struct unet_endpoint *ep)
{
	return ep->remote_ep;
}

/* ---- The data path's few differences ---------------------------------------- */

void unet_remote_kick(struct unet_endpoint *ep)
{
	uint64_t one = 1;

	if (write(ep->kick_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		unet_log(UNET_LOG_DEBUG, "unetd kick: %s", strerror(errno));
}

int unet_remote_probe(struct unet_endpoint *ep)
{
	struct pollfd p = { .fd = ep->daemon_fd, .events = POLLRDHUP };

	if (!ep->dead && poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
		ep->dead = -ECONNRESET;
		unet_log(UNET_LOG_ERROR, "endpoint %u: unetd went away", ep->remote_ep);
	}
	return ep->dead;
}

int unet_remote_wait(struct unet_endpoint *ep, int timeout_ms, bool (*ready)(struct unet_endpoint *))
{
	struct pollfd p[2] = { { .fd = ep->q[0].fd, .events = POLLIN },
			       { .fd = ep->daemon_fd, .events = POLLRDHUP } };
	uint64_t v;
	int n;

	/* Tell the daemon to notify us, then look once more: a frame that
	 * came between the caller's look and our flag is seen here
	 * (unetd_proto.h, "Notification"). */
	__atomic_store_n(&ep->region->client_sleeping, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (ready(ep)) {
		n = 1;
	} else {
		n = poll(p, 2, timeout_ms);
		if (n < 0)
			n = -errno;
		else if (p[1].revents)
			n = unet_remote_probe(ep) ? ep->dead : 0;
		else
			n = n > 0 ? 1 : 0;
	}
	__atomic_store_n(&ep->region->client_sleeping, 0, __ATOMIC_RELAXED);
	if (read(ep->q[0].fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		unet_log(UNET_LOG_DEBUG, "unetd notify: %s", strerror(errno));
	return n;
}

void unet_remote_stats(const struct unet_endpoint *ep, struct unet_endpoint_stats *st)
{
	const struct unetd_ep_counters *k = &ep->region->counters;

	st->rx_dropped = k->rx_dropped;
	st->tx_invalid_descs = k->tx_bad_desc + k->tx_bad_frame + k->tx_foreign_tag +
			       k->tx_foreign_peer;
}
