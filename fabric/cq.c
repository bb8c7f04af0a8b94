/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cq.c - completion queues: the four entry formats, error entries, and
 * progress (FI_PROGRESS_MANUAL: reading a CQ drives its endpoints).
 *
 * Wait object (FI_WAIT_FD, FI_WAIT_UNSPEC): an epoll fd holding each bound
 * endpoint's U-Net fd (readable when frames wait), its setup socket, and a
 * timerfd.  The timer wakes a blocked caller while UAM may have to
 * retransmit (data sent in the last FI_UNET_TIMEOUT_MS, rendezvous or
 * setup under way: every 2 ms) or send a keepalive (receives posted:
 * every second); an idle rank sleeps without waking.  fi_cq_sread blocks
 * on it; applications that poll the fd themselves call fi_trywait first,
 * which arms the timer.  fi_cq_read itself sleeps on it when its caller
 * busy-waits with nothing arriving (idle.c).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "ufi.h"

static struct ufi_cq *cq_of(struct fid_cq *f)
{
	return (struct ufi_cq *)f;
}

static struct ufi_cqe *cqe_new(struct ufi_cq *cq)
{
	struct ufi_cqe *e = cq->free_list;

	if (e)
		cq->free_list = e->next;
	else if (!(e = malloc(sizeof(*e))))
		return NULL;
	memset(e, 0, sizeof(*e));
	return e;
}

static void cqe_free(struct ufi_cq *cq, struct ufi_cqe *e)
{
	e->next = cq->free_list;
	cq->free_list = e;
}

/* A new entry holding the completion's fields, or NULL (out of memory:
 * warned, the completion named what is lost). */
static struct ufi_cqe *cqe_make(struct ufi_cq *cq, const char *what, void *ctx, uint64_t flags,
				size_t len, void *buf, uint64_t data, uint64_t tag)
{
	struct ufi_cqe *e = cqe_new(cq);

	if (!e) {
		FI_WARN(&ufi_prov, FI_LOG_CQ, "out of memory: %s lost\n", what);
		return NULL;
	}
	e->e = (struct fi_cq_tagged_entry){ .op_context = ctx, .flags = flags, .len = len,
					    .buf = buf, .data = data, .tag = tag };
	return e;
}

static void cq_complete(struct ufi_cq *cq, void *ctx, uint64_t flags, size_t len, void *buf,
			uint64_t data, uint64_t tag, fi_addr_t src)
{
	struct ufi_cqe *e = cqe_make(cq, "completion", ctx, flags, len, buf, data, tag);

	if (!e)
		return;
	e->src = src;
	if (cq->tail)
		cq->tail->next = e;
	else
		cq->head = e;
	cq->tail = e;
}

static void cq_error(struct ufi_cq *cq, void *ctx, uint64_t flags, size_t len, void *buf,
		     uint64_t data, uint64_t tag, size_t olen, int err, int prov_errno)
{
	struct ufi_cqe *e = cqe_make(cq, "error completion", ctx, flags, len, buf, data, tag);

	if (!e)
		return;
	e->err = err;
	e->prov_errno = prov_errno;
	e->olen = olen;
	if (cq->etail)
		cq->etail->next = e;
	else
		cq->ehead = e;
	cq->etail = e;
}

/* How the messaging floor below reaches us (ufi.h: struct ufi_cq_report). */
const struct ufi_cq_report ufi_cq_report = {
	.complete = cq_complete,
	.error = cq_error,
};

static size_t entry_size(enum fi_cq_format f)
{
	switch (f) {
	case FI_CQ_FORMAT_CONTEXT:
		return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG:
		return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:
		return sizeof(struct fi_cq_data_entry);
	default:
		return sizeof(struct fi_cq_tagged_entry);
	}
}

static void progress_all(struct ufi_cq *cq)
{
	for (int i = 0; i < cq->neps; i++)
		ufi_progress(cq->eps[i]);
}

/* One look: progress if nothing is queued, then what the CQ holds. */
static ssize_t cq_take(struct fid_cq *fid, void *buf, size_t count, fi_addr_t *src)
{
	struct ufi_cq *cq = cq_of(fid);
	size_t sz = entry_size(cq->fmt), n = 0;

	if (!cq->head && !cq->ehead)
		progress_all(cq);
	if (cq->ehead)
		return -FI_EAVAIL;
	while (n < count && cq->head) {
		struct ufi_cqe *e = cq->head;
		/* every format is a prefix of fi_cq_tagged_entry */
		memcpy((char *)buf + n * sz, &e->e, sz);
		if (src)
			src[n] = e->src;
		cq->head = e->next;
		if (!cq->head)
			cq->tail = NULL;
		cqe_free(cq, e);
		n++;
	}
	return n ? (ssize_t)n : -FI_EAGAIN;
}

static ssize_t cq_readerr(struct fid_cq *fid, struct fi_cq_err_entry *buf, uint64_t flags)
{
	struct ufi_cq *cq = cq_of(fid);
	struct ufi_cqe *e = cq->ehead;

	(void)flags;
	if (!e)
		return -FI_EAGAIN;
	buf->op_context = e->e.op_context;
	buf->flags = e->e.flags;
	buf->len = e->e.len;
	buf->buf = e->e.buf;
	buf->data = e->e.data;
	buf->tag = e->e.tag;
	buf->olen = e->olen;
	buf->err = e->err;
	buf->prov_errno = e->prov_errno;
	/* no provider error data (API >= 1.5: err_data_size says how much) */
	if (buf->err_data_size == 0)
		buf->err_data = NULL;
	buf->err_data_size = 0;
	cq->ehead = e->next;
	if (!cq->ehead)
		cq->etail = NULL;
	cqe_free(cq, e);
	return 1;
}

/* The wait object, made on first need. */
static int cq_wait_setup(struct ufi_cq *cq)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (cq->epfd >= 0)
		return 0;
	cq->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (cq->epfd < 0)
		return -errno;
	cq->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (cq->timerfd < 0)
		return -errno;
	ev.data.fd = cq->timerfd;
	if (epoll_ctl(cq->epfd, EPOLL_CTL_ADD, cq->timerfd, &ev))
		return -errno;
	for (int i = 0; i < cq->neps; i++) {
		struct ufi_ep *ep = cq->eps[i];
		int fd = unet_endpoint__fd(ep->uep);
		if (fd < 0)
			return fd;
		ev.data.fd = fd;
		if (epoll_ctl(cq->epfd, EPOLL_CTL_ADD, fd, &ev) && errno != EEXIST)
			return -errno;
		ev.data.fd = ep->udp_fd;
		if (epoll_ctl(cq->epfd, EPOLL_CTL_ADD, ep->udp_fd, &ev) && errno != EEXIST)
			return -errno;
	}
	return 0;
}

/* Arm the timer for the soonest wake-up an endpoint needs; returns it (ms, -1 none). */
static int cq_arm(struct ufi_cq *cq)
{
	struct itimerspec its = { 0 };
	uint64_t exp;
	int ms = -1;

	for (int i = 0; i < cq->neps; i++) {
		int w = ufi_ep_wake_ms(cq->eps[i]);
		if (w >= 0 && (ms < 0 || w < ms))
			ms = w;
	}
	/* drain an expiry that nobody read, so the fd does not stay readable */
	while (read(cq->timerfd, &exp, sizeof(exp)) > 0)
		;
	if (ms >= 0) {
		its.it_value.tv_sec = ms / 1000;
		its.it_value.tv_nsec = (long)(ms % 1000) * 1000000L;
	}
	timerfd_settime(cq->timerfd, 0, &its, NULL);
	return ms;
}

/* The longest one fi_cq_read sleeps (idle.c): the caller's own progress
 * loop still comes round this often (Open MPI also drives its event
 * library from it). */
#define IDLE_SLEEP_MS 1

/* fi_cq_read(from): a caller that busy-waits here sleeps once idle.c says
 * so, on the wait object, until a frame or the timer wakes it, then
 * looks again. */
static ssize_t cq_readfrom(struct fid_cq *fid, void *buf, size_t count, fi_addr_t *src)
{
	struct ufi_cq *cq = cq_of(fid);
	ssize_t r = cq_take(fid, buf, count, src);
	struct epoll_event evs[8];
	bool by_frame = false;
	int n;

	if (r != -FI_EAGAIN) {
		ufi_cq_busy(cq);
		return r;
	}
	if (!ufi_cq_idle_due(cq) || cq_wait_setup(cq))
		return r; /* spin on (also without a wait object) */
	cq_arm(cq); /* the timer wakes us for what the endpoints need */
	n = epoll_wait(cq->epfd, evs, 8, IDLE_SLEEP_MS);
	for (int i = 0; i < n; i++)
		if (evs[i].data.fd != cq->timerfd) {
			by_frame = true;
			break;
		}
	ufi_cq_idle_slept(cq, by_frame);
	return cq_take(fid, buf, count, src);
}

static ssize_t cq_read(struct fid_cq *fid, void *buf, size_t count)
{
	return cq_readfrom(fid, buf, count, NULL);
}

static ssize_t cq_sreadfrom(struct fid_cq *fid, void *buf, size_t count, fi_addr_t *src,
			    const void *cond, int timeout)
{
	struct ufi_cq *cq = cq_of(fid);
	uint64_t deadline = timeout >= 0 ? ufi_now_ns() + (uint64_t)timeout * 1000000ull : 0;
	ssize_t r;
	int e;

	(void)cond;
	e = cq_wait_setup(cq);
	if (e)
		return e;
	for (;;) {
		r = cq_take(fid, buf, count, src);
		if (r != -FI_EAGAIN)
			return r;
		if (cq->signaled) {
			cq->signaled = false;
			return -FI_ECANCELED;
		}
		int left = -1;
		if (timeout >= 0) {
			uint64_t now = ufi_now_ns();
			if (now >= deadline)
				return -FI_EAGAIN;
			left = (int)((deadline - now + 999999) / 1000000);
		}
		cq_arm(cq);
		struct epoll_event evs[8];
		int n = epoll_wait(cq->epfd, evs, 8, left);
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

static ssize_t cq_sread(struct fid_cq *fid, void *buf, size_t count, const void *cond,
			int timeout)
{
	return cq_sreadfrom(fid, buf, count, NULL, cond, timeout);
}

static int cq_signal(struct fid_cq *fid)
{
	struct ufi_cq *cq = cq_of(fid);
	struct itimerspec its = { .it_value.tv_nsec = 1 };

	cq->signaled = true;
	if (cq->epfd >= 0)
		timerfd_settime(cq->timerfd, 0, &its, NULL);
	return 0;
}

static const char *cq_strerror(struct fid_cq *fid, int prov_errno, const void *err_data,
			       char *buf, size_t len)
{
	const char *s = prov_errno ? strerror(prov_errno) : "no provider error";

	(void)fid;
	(void)err_data;
	if (buf && len) {
		strncpy(buf, s, len - 1);
		buf[len - 1] = '\0';
		return buf;
	}
	return s;
}

static int cq_close(struct fid *fid)
{
	struct ufi_cq *cq = (struct ufi_cq *)fid;

	if (cq->neps)
		return -FI_EBUSY;
	if (getenv("FI_UNET_STATS") && !strcmp(getenv("FI_UNET_STATS"), "1"))
		fprintf(stderr, "unet provider cq stats: idle_sleeps %llu\n",
			(unsigned long long)cq->idle_sleeps);
	for (struct ufi_cqe *l[3] = { cq->head, cq->ehead, cq->free_list }, **p = l; p < l + 3; p++)
		while (*p) {
			struct ufi_cqe *e = *p;
			*p = e->next;
			free(e);
		}
	if (cq->epfd >= 0)
		close(cq->epfd);
	if (cq->timerfd >= 0)
		close(cq->timerfd);
	if (cq->loadavg_fd >= 0)
		close(cq->loadavg_fd);
	cq->dom->refs--;
	free(cq);
	return 0;
}

static int cq_control(struct fid *fid, int cmd, void *arg)
{
	struct ufi_cq *cq = (struct ufi_cq *)fid;
	int r;

	switch (cmd) {
	case FI_GETWAIT:
		if (cq->wait_obj != FI_WAIT_FD)
			return -FI_ENODATA;
		r = cq_wait_setup(cq);
		if (r)
			return r;
		*(int *)arg = cq->epfd;
		return 0;
	case FI_GETWAITOBJ:
		*(enum fi_wait_obj *)arg = cq->wait_obj;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

int ufi_cq_bind_ep(struct ufi_cq *cq, struct ufi_ep *ep)
{
	for (int i = 0; i < cq->neps; i++)
		if (cq->eps[i] == ep)
			return 0;
	if (cq->neps == (int)(sizeof(cq->eps) / sizeof(cq->eps[0])))
		return -FI_ENOSPC;
	cq->eps[cq->neps++] = ep;
	if (cq->epfd >= 0) {
		/* the wait object exists already: add this endpoint's fds */
		struct epoll_event ev = { .events = EPOLLIN };
		int fd = unet_endpoint__fd(ep->uep);
		if (fd < 0)
			return fd;
		ev.data.fd = fd;
		epoll_ctl(cq->epfd, EPOLL_CTL_ADD, fd, &ev);
		ev.data.fd = ep->udp_fd;
		epoll_ctl(cq->epfd, EPOLL_CTL_ADD, ep->udp_fd, &ev);
	}
	return 0;
}

void ufi_cq_unbind_ep(struct ufi_cq *cq, struct ufi_ep *ep)
{
	for (int i = 0; i < cq->neps; i++)
		if (cq->eps[i] == ep) {
			cq->eps[i] = cq->eps[--cq->neps];
			if (cq->epfd >= 0) {
				int fd = unet_endpoint__fd(ep->uep);
				if (fd >= 0)
					epoll_ctl(cq->epfd, EPOLL_CTL_DEL, fd, NULL);
				epoll_ctl(cq->epfd, EPOLL_CTL_DEL, ep->udp_fd, NULL);
			}
			return;
		}
}

/* fi_trywait: 0 when the caller may block on the wait fd now. */
int ufi_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	(void)fabric;
	for (int i = 0; i < count; i++) {
		struct ufi_cq *cq;
		if (fids[i]->fclass != FI_CLASS_CQ)
			return -FI_EINVAL;
		cq = (struct ufi_cq *)fids[i];
		if (cq->epfd < 0 && cq_wait_setup(cq))
			return -FI_EINVAL;
		progress_all(cq);
		if (cq->head || cq->ehead)
			return -FI_EAGAIN;
		cq_arm(cq);
	}
	return 0;
}

static struct fi_ops cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = cq_close,
	.bind = NULL,
	.control = cq_control,
	.ops_open = NULL,
};

static struct fi_ops_cq cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = cq_read,
	.readfrom = cq_readfrom,
	.readerr = cq_readerr,
	.sread = cq_sread,
	.sreadfrom = cq_sreadfrom,
	.signal = cq_signal,
	.strerror = cq_strerror,
};

int ufi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cqp,
		void *context)
{
	struct ufi_domain *dom = (struct ufi_domain *)domain;
	struct ufi_cq *cq;

	if (!attr)
		return -FI_EINVAL;
	switch (attr->format) {
	case FI_CQ_FORMAT_UNSPEC:
	case FI_CQ_FORMAT_CONTEXT:
	case FI_CQ_FORMAT_MSG:
	case FI_CQ_FORMAT_DATA:
	case FI_CQ_FORMAT_TAGGED:
		break;
	default:
		return -FI_ENOSYS;
	}
	switch (attr->wait_obj) {
	case FI_WAIT_NONE:
	case FI_WAIT_UNSPEC:
	case FI_WAIT_FD:
		break;
	default:
		return -FI_ENOSYS;
	}
	if (attr->flags & FI_AFFINITY || attr->wait_cond != FI_CQ_COND_NONE)
		return -FI_ENOSYS;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	cq->fid.fid.fclass = FI_CLASS_CQ;
	cq->fid.fid.context = context;
	cq->fid.fid.ops = &cq_fi_ops;
	cq->fid.ops = &cq_ops;
	cq->report = &ufi_cq_report;
	cq->dom = dom;
	cq->fmt = attr->format == FI_CQ_FORMAT_UNSPEC ? FI_CQ_FORMAT_TAGGED : attr->format;
	attr->format = cq->fmt;
	cq->wait_obj = attr->wait_obj == FI_WAIT_UNSPEC ? FI_WAIT_FD : attr->wait_obj;
	attr->wait_obj = cq->wait_obj;
	cq->epfd = cq->timerfd = cq->loadavg_fd = -1;
	dom->refs++;
	*cqp = &cq->fid;
	return 0;
}
