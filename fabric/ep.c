/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ep.c - the FI_EP_RDM endpoint: its U-Net and UAM endpoints, binding,
 * its name, and the fi_ops_msg / fi_ops_tagged entry points, which all
 * land in ufi_send / ufi_recv (post.c) with FI_MSG or FI_TAGGED and
 * whether a success completion is wanted (FI_SELECTIVE_COMPLETION).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "ufi.h"

static struct ufi_ep *ep_of(struct fid_ep *f)
{
	return (struct ufi_ep *)f;
}

/* FI_COMPLETION for an operation without explicit flags. */
static uint64_t tx_want(struct ufi_ep *ep)
{
	return !ep->tx_selective || (ep->tx_op_flags & FI_COMPLETION) ? FI_COMPLETION : 0;
}

static uint64_t rx_want(struct ufi_ep *ep)
{
	return !ep->rx_selective || (ep->rx_op_flags & FI_COMPLETION) ? FI_COMPLETION : 0;
}

static uint64_t tx_want_flags(struct ufi_ep *ep, uint64_t flags)
{
	return !ep->tx_selective || (flags & FI_COMPLETION) ? FI_COMPLETION : 0;
}

static uint64_t rx_want_flags(struct ufi_ep *ep, uint64_t flags)
{
	return !ep->rx_selective || (flags & FI_COMPLETION) ? FI_COMPLETION : 0;
}

/* One buffer: iov_count 0 or 1 (iov_limit is 1). */
static int one_iov(const struct iovec *iov, size_t count, void **buf, size_t *len)
{
	if (count > 1)
		return -FI_EINVAL;
	*buf = count ? iov[0].iov_base : NULL;
	*len = count ? iov[0].iov_len : 0;
	return 0;
}

/* ---- fi_ops_msg ---- */

static ssize_t m_recv(struct fid_ep *f, void *buf, size_t len, void *desc, fi_addr_t src,
		      void *ctx)
{
	(void)desc;
	return ufi_recv(ep_of(f), buf, len, src, 0, ~0ull, FI_MSG | rx_want(ep_of(f)), ctx);
}

static ssize_t m_recvv(struct fid_ep *f, const struct iovec *iov, void **desc, size_t count,
		       fi_addr_t src, void *ctx)
{
	void *b;
	size_t l;

	(void)desc;
	if (one_iov(iov, count, &b, &l))
		return -FI_EINVAL;
	return m_recv(f, b, l, NULL, src, ctx);
}

static ssize_t m_recvmsg(struct fid_ep *f, const struct fi_msg *msg, uint64_t flags)
{
	void *b;
	size_t l;

	if (one_iov(msg->msg_iov, msg->iov_count, &b, &l))
		return -FI_EINVAL;
	if (flags & (FI_MULTI_RECV | FI_PEEK | FI_CLAIM))
		return -FI_EBADFLAGS;
	return ufi_recv(ep_of(f), b, l, msg->addr, 0, ~0ull,
			FI_MSG | rx_want_flags(ep_of(f), flags), msg->context);
}

static ssize_t m_send(struct fid_ep *f, const void *buf, size_t len, void *desc, fi_addr_t dest,
		      void *ctx)
{
	(void)desc;
	return ufi_send(ep_of(f), buf, len, dest, 0, 0, FI_MSG | tx_want(ep_of(f)), ctx);
}

static ssize_t m_sendv(struct fid_ep *f, const struct iovec *iov, void **desc, size_t count,
		       fi_addr_t dest, void *ctx)
{
	void *b;
	size_t l;

	(void)desc;
	if (one_iov(iov, count, &b, &l))
		return -FI_EINVAL;
	return m_send(f, b, l, NULL, dest, ctx);
}

static ssize_t m_sendmsg(struct fid_ep *f, const struct fi_msg *msg, uint64_t flags)
{
	void *b;
	size_t l;

	if (one_iov(msg->msg_iov, msg->iov_count, &b, &l))
		return -FI_EINVAL;
	return ufi_send(ep_of(f), b, l, msg->addr, 0, msg->data,
			FI_MSG | (flags & (FI_REMOTE_CQ_DATA | FI_INJECT)) |
				tx_want_flags(ep_of(f), flags),
			msg->context);
}

static ssize_t m_inject(struct fid_ep *f, const void *buf, size_t len, fi_addr_t dest)
{
	return ufi_send(ep_of(f), buf, len, dest, 0, 0, FI_MSG | FI_INJECT, NULL);
}

static ssize_t m_senddata(struct fid_ep *f, const void *buf, size_t len, void *desc,
			  uint64_t data, fi_addr_t dest, void *ctx)
{
	(void)desc;
	return ufi_send(ep_of(f), buf, len, dest, 0, data,
			FI_MSG | FI_REMOTE_CQ_DATA | tx_want(ep_of(f)), ctx);
}

static ssize_t m_injectdata(struct fid_ep *f, const void *buf, size_t len, uint64_t data,
			    fi_addr_t dest)
{
	return ufi_send(ep_of(f), buf, len, dest, 0, data, FI_MSG | FI_REMOTE_CQ_DATA | FI_INJECT,
			NULL);
}

static struct fi_ops_msg msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = m_recv,
	.recvv = m_recvv,
	.recvmsg = m_recvmsg,
	.send = m_send,
	.sendv = m_sendv,
	.sendmsg = m_sendmsg,
	.inject = m_inject,
	.senddata = m_senddata,
	.injectdata = m_injectdata,
};

/* ---- fi_ops_tagged ---- */

static ssize_t t_recv(struct fid_ep *f, void *buf, size_t len, void *desc, fi_addr_t src,
		      uint64_t tag, uint64_t ignore, void *ctx)
{
	(void)desc;
	return ufi_recv(ep_of(f), buf, len, src, tag, ignore, FI_TAGGED | rx_want(ep_of(f)), ctx);
}

static ssize_t t_recvv(struct fid_ep *f, const struct iovec *iov, void **desc, size_t count,
		       fi_addr_t src, uint64_t tag, uint64_t ignore, void *ctx)
{
	void *b;
	size_t l;

	(void)desc;
	if (one_iov(iov, count, &b, &l))
		return -FI_EINVAL;
	return t_recv(f, b, l, NULL, src, tag, ignore, ctx);
}

static ssize_t t_recvmsg(struct fid_ep *f, const struct fi_msg_tagged *msg, uint64_t flags)
{
	void *b;
	size_t l;

	if (one_iov(msg->msg_iov, msg->iov_count, &b, &l))
		return -FI_EINVAL;
	if (flags & FI_MULTI_RECV)
		return -FI_EBADFLAGS;
	if ((flags & (FI_PEEK | FI_CLAIM)) && !msg->context)
		return -FI_EINVAL; /* the result goes to the context */
	return ufi_recv(ep_of(f), b, l, msg->addr, msg->tag, msg->ignore,
			FI_TAGGED | (flags & (FI_PEEK | FI_CLAIM | FI_DISCARD)) |
				rx_want_flags(ep_of(f), flags),
			msg->context);
}

static ssize_t t_send(struct fid_ep *f, const void *buf, size_t len, void *desc, fi_addr_t dest,
		      uint64_t tag, void *ctx)
{
	(void)desc;
	return ufi_send(ep_of(f), buf, len, dest, tag, 0, FI_TAGGED | tx_want(ep_of(f)), ctx);
}

static ssize_t t_sendv(struct fid_ep *f, const struct iovec *iov, void **desc, size_t count,
		       fi_addr_t dest, uint64_t tag, void *ctx)
{
	void *b;
	size_t l;

	(void)desc;
	if (one_iov(iov, count, &b, &l))
		return -FI_EINVAL;
	return t_send(f, b, l, NULL, dest, tag, ctx);
}

static ssize_t t_sendmsg(struct fid_ep *f, const struct fi_msg_tagged *msg, uint64_t flags)
{
	void *b;
	size_t l;

	if (one_iov(msg->msg_iov, msg->iov_count, &b, &l))
		return -FI_EINVAL;
	return ufi_send(ep_of(f), b, l, msg->addr, msg->tag, msg->data,
			FI_TAGGED | (flags & (FI_REMOTE_CQ_DATA | FI_INJECT)) |
				tx_want_flags(ep_of(f), flags),
			msg->context);
}

static ssize_t t_inject(struct fid_ep *f, const void *buf, size_t len, fi_addr_t dest,
			uint64_t tag)
{
	return ufi_send(ep_of(f), buf, len, dest, tag, 0, FI_TAGGED | FI_INJECT, NULL);
}

static ssize_t t_senddata(struct fid_ep *f, const void *buf, size_t len, void *desc,
			  uint64_t data, fi_addr_t dest, uint64_t tag, void *ctx)
{
	(void)desc;
	return ufi_send(ep_of(f), buf, len, dest, tag, data,
			FI_TAGGED | FI_REMOTE_CQ_DATA | tx_want(ep_of(f)), ctx);
}

static ssize_t t_injectdata(struct fid_ep *f, const void *buf, size_t len, uint64_t data,
			    fi_addr_t dest, uint64_t tag)
{
	return ufi_send(ep_of(f), buf, len, dest, tag, data,
			FI_TAGGED | FI_REMOTE_CQ_DATA | FI_INJECT, NULL);
}

static struct fi_ops_tagged tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = t_recv,
	.recvv = t_recvv,
	.recvmsg = t_recvmsg,
	.send = t_send,
	.sendv = t_sendv,
	.sendmsg = t_sendmsg,
	.inject = t_inject,
	.senddata = t_senddata,
	.injectdata = t_injectdata,
};

/* ---- fi_ops_cm ---- */

static int cm_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct ufi_ep *ep = (struct ufi_ep *)fid;
	char s[UFI_STR_LEN];
	size_t need = UFI_NAME_LEN;
	const void *src = &ep->name;

	if (!addrlen)
		return -FI_EINVAL;
	if (ep->dom->addr_str) {
		ufi_name_to_str(&ep->name, s, sizeof(s));
		need = strlen(s) + 1;
		src = s;
	}
	if (!addr || *addrlen < need) {
		*addrlen = need;
		return -FI_ETOOSMALL;
	}
	memcpy(addr, src, need);
	*addrlen = need;
	return 0;
}

static int cm_setname(fid_t fid, void *addr, size_t addrlen)
{
	(void)fid, (void)addr, (void)addrlen;
	return -FI_ENOSYS;
}

static int cm_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	(void)ep, (void)addr, (void)addrlen;
	return -FI_ENOSYS;
}

static int cm_connect(struct fid_ep *ep, const void *addr, const void *param, size_t len)
{
	(void)ep, (void)addr, (void)param, (void)len;
	return -FI_ENOSYS;
}

static int cm_listen(struct fid_pep *pep)
{
	(void)pep;
	return -FI_ENOSYS;
}

static int cm_accept(struct fid_ep *ep, const void *param, size_t len)
{
	(void)ep, (void)param, (void)len;
	return -FI_ENOSYS;
}

static int cm_reject(struct fid_pep *pep, fid_t h, const void *param, size_t len)
{
	(void)pep, (void)h, (void)param, (void)len;
	return -FI_ENOSYS;
}

static int cm_shutdown(struct fid_ep *ep, uint64_t flags)
{
	(void)ep, (void)flags;
	return -FI_ENOSYS;
}

static int cm_join(struct fid_ep *ep, const void *addr, uint64_t flags, struct fid_mc **mc,
		   void *ctx)
{
	(void)ep, (void)addr, (void)flags, (void)mc, (void)ctx;
	return -FI_ENOSYS;
}

static struct fi_ops_cm cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = cm_setname,
	.getname = cm_getname,
	.getpeer = cm_getpeer,
	.connect = cm_connect,
	.listen = cm_listen,
	.accept = cm_accept,
	.reject = cm_reject,
	.shutdown = cm_shutdown,
	.join = cm_join,
};

/* ---- fi_ops_ep ---- */

static ssize_t ep_cancel(fid_t fid, void *ctx)
{
	return ufi_cancel((struct ufi_ep *)fid, ctx);
}

static int ep_getopt(fid_t fid, int level, int name, void *val, size_t *len)
{
	(void)fid, (void)level, (void)name, (void)val, (void)len;
	return -FI_ENOPROTOOPT;
}

static int ep_setopt(fid_t fid, int level, int name, const void *val, size_t len)
{
	(void)fid, (void)level, (void)name, (void)val, (void)len;
	return -FI_ENOPROTOOPT;
}

static int ep_tx_ctx(struct fid_ep *s, int i, struct fi_tx_attr *a, struct fid_ep **e, void *c)
{
	(void)s, (void)i, (void)a, (void)e, (void)c;
	return -FI_ENOSYS;
}

static int ep_rx_ctx(struct fid_ep *s, int i, struct fi_rx_attr *a, struct fid_ep **e, void *c)
{
	(void)s, (void)i, (void)a, (void)e, (void)c;
	return -FI_ENOSYS;
}

static ssize_t ep_rx_left(struct fid_ep *f)
{
	(void)f;
	return UFI_RX_SIZE;
}

static ssize_t ep_tx_left(struct fid_ep *f)
{
	(void)f;
	return UFI_TX_SIZE;
}

static struct fi_ops_ep ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = ep_cancel,
	.getopt = ep_getopt,
	.setopt = ep_setopt,
	.tx_ctx = ep_tx_ctx,
	.rx_ctx = ep_rx_ctx,
	.rx_size_left = ep_rx_left,
	.tx_size_left = ep_tx_left,
};

/* ---- fi_ops ---- */

/* FI_UNET_STATS=1: UAM's counters on stderr when the endpoint closes. */
static void print_stats(struct ufi_ep *ep)
{
	struct uam_stats st;
	const char *e = getenv("FI_UNET_STATS");

	if (!e || strcmp(e, "1") != 0 || uam_ep__stats(ep->uam, &st))
		return;
	fprintf(stderr,
		"unet provider stats: tx_frames %llu rx_frames %llu tx_acks %llu retransmits %llu "
		"timeouts %llu dup_dropped %llu out_of_order %llu out_of_window %llu "
		"credit_stalls %llu requests %llu gets %llu bad_frames %llu chan_failures %llu\n",
		(unsigned long long)st.tx_frames, (unsigned long long)st.rx_frames,
		(unsigned long long)st.tx_acks, (unsigned long long)st.retransmits,
		(unsigned long long)st.timeouts, (unsigned long long)st.dup_dropped,
		(unsigned long long)st.out_of_order, (unsigned long long)st.out_of_window,
		(unsigned long long)st.credit_stalls, (unsigned long long)st.requests,
		(unsigned long long)st.gets, (unsigned long long)st.bad_frames,
		(unsigned long long)st.chan_failures);
	/* Where frames were lost before UAM saw them (each one costs a
	 * retransmission later): the socket's drops and the library's
	 * refusals of malformed frames. */
	struct unet_endpoint_stats us;
	if (!unet_endpoint__stats(ep->uep, &us))
		fprintf(stderr,
			"unet provider endpoint stats: rx_dropped %llu rx_ring_full %llu rx_fill_empty %llu "
			"rx_no_jumbo_slot %llu rx_bad_pieces %llu rx_malformed %llu\n",
			(unsigned long long)us.rx_dropped, (unsigned long long)us.rx_ring_full,
			(unsigned long long)us.rx_fill_empty, (unsigned long long)us.rx_no_jumbo_slot,
			(unsigned long long)us.rx_bad_pieces, (unsigned long long)us.rx_malformed);
}

static int ep_close(struct fid *fid)
{
	struct ufi_ep *ep = (struct ufi_ep *)fid;

	if (ep->uam)
		print_stats(ep);
	ufi_ep_shutdown(ep);
	if (ep->tx_cq)
		ufi_cq_unbind_ep(ep->tx_cq, ep);
	if (ep->rx_cq && ep->rx_cq != ep->tx_cq)
		ufi_cq_unbind_ep(ep->rx_cq, ep);
	if (ep->av)
		ep->av->refs--;
	uam_ep__destroy(ep->uam);
	unet_endpoint__destroy(ep->uep);
	if (ep->udp_fd >= 0)
		close(ep->udp_fd);
	ep->dom->refs--;
	free(ep);
	return 0;
}

static int ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct ufi_ep *ep = (struct ufi_ep *)fid;
	struct ufi_cq *cq;
	int r;

	if (ep->enabled)
		return -FI_EOPBADSTATE;
	switch (bfid->fclass) {
	case FI_CLASS_AV:
		if (ep->av)
			return -FI_EINVAL;
		ep->av = (struct ufi_av *)bfid;
		ep->av->refs++;
		ep->addrs = &ep->av->addrs;
		return 0;
	case FI_CLASS_CQ:
		cq = (struct ufi_cq *)bfid;
		if (flags & ~(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION))
			return -FI_EBADFLAGS;
		if (!(flags & (FI_TRANSMIT | FI_RECV)))
			return -FI_EINVAL;
		if (((flags & FI_TRANSMIT) && ep->tx_cq) || ((flags & FI_RECV) && ep->rx_cq))
			return -FI_EINVAL;
		r = ufi_cq_bind_ep(cq, ep);
		if (r)
			return r;
		if (flags & FI_TRANSMIT) {
			ep->tx_cq = cq;
			ep->tx_selective = flags & FI_SELECTIVE_COMPLETION;
		}
		if (flags & FI_RECV) {
			ep->rx_cq = cq;
			ep->rx_selective = flags & FI_SELECTIVE_COMPLETION;
		}
		return 0;
	case FI_CLASS_EQ:
		return 0; /* nothing of an RDM endpoint reports to an EQ */
	default:
		return -FI_ENOSYS;
	}
}

static int ep_control(struct fid *fid, int cmd, void *arg)
{
	struct ufi_ep *ep = (struct ufi_ep *)fid;
	uint64_t *f = arg;

	switch (cmd) {
	case FI_ENABLE:
		if (!ep->av)
			return -FI_ENOAV;
		if (!ep->tx_cq && !ep->rx_cq)
			return -FI_ENOCQ;
		ep->enabled = true;
		return 0;
	case FI_GETOPSFLAG:
		if ((*f & FI_TRANSMIT) && (*f & FI_RECV))
			return -FI_EINVAL;
		*f = (*f & FI_TRANSMIT) ? ep->tx_op_flags : ep->rx_op_flags;
		return 0;
	case FI_SETOPSFLAG:
		if (*f & FI_TRANSMIT)
			ep->tx_op_flags = *f & ~(FI_TRANSMIT | FI_RECV);
		else
			ep->rx_op_flags = *f & ~(FI_TRANSMIT | FI_RECV);
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

static struct fi_ops ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = ep_close,
	.bind = ep_bind,
	.control = ep_control,
	.ops_open = ufi_no_ops_open,
};

static int unet_err(int e)
{
	switch (e) {
	case EPERM:
	case EACCES:
		return -FI_EACCES;
	case ENODEV:
		return -FI_ENODEV;
	case ENOMEM:
		return -FI_ENOMEM;
	case EBUSY:
		return -FI_EBUSY;
	case ENOSPC:
		return -FI_ENOSPC;
	default:
		return -FI_EOTHER;
	}
}

int ufi_ep_open(struct fid_domain *domain, struct fi_info *info, struct fid_ep **epp,
		void *context)
{
	struct ufi_domain *dom = (struct ufi_domain *)domain;
	UNET_OPTS_INIT(unet_endpoint_opts, uo);
	struct uam_ep_opts ao = { .sz = sizeof(ao) };
	struct unet_endpoint_info ui;
	struct ufi_ep *ep;
	int r;

	if (!info || (info->ep_attr && info->ep_attr->type != FI_EP_RDM &&
		      info->ep_attr->type != FI_EP_UNSPEC))
		return -FI_EINVAL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ep->fid.fid.fclass = FI_CLASS_EP;
	ep->fid.fid.context = context;
	ep->fid.fid.ops = &ep_fi_ops;
	ep->fid.ops = &ep_ops;
	ep->fid.cm = &cm_ops;
	ep->fid.msg = &msg_ops;
	ep->fid.tagged = &tagged_ops;
	ep->dom = dom;
	ep->udp_fd = -1;
	ep->caps = info->caps ? info->caps : UFI_CAPS;
	ep->directed = ep->caps & FI_DIRECTED_RECV;
	ep->tx_op_flags = info->tx_attr ? info->tx_attr->op_flags : 0;
	ep->rx_op_flags = info->rx_attr ? info->rx_attr->op_flags : 0;

	ep->uep = unet_endpoint__create(dom->ifname, &uo);
	if (!ep->uep) {
		r = errno;
		FI_WARN(&ufi_prov, FI_LOG_EP_CTRL, "cannot create a U-Net endpoint on %s: %s\n",
			dom->ifname, strerror(r));
		free(ep);
		return unet_err(r);
	}
	r = unet_endpoint__info(ep->uep, &ui);
	if (r)
		goto fail;
	ep->ux_max = UFI_UX_MAX;
	ep->ux_peer_max = UFI_UX_PEER_MAX;
	/* The window counts frames, and at a jumbo MTU a frame takes a
	 * receive buffer per piece (uam_chan__open holds us to that): the
	 * same bytes in flight in fewer, larger frames, so a jumbo endpoint
	 * keeps room for as many peers as at MTU 1500.  Pieces counted from
	 * above: a send buffer's payload is a chunk less the most header. */
	{
		uint32_t pieces = ui.multi_buffer && ui.max_payload > ui.buf_payload
					  ? (ui.max_payload + ui.buf_payload - 1) / ui.buf_payload
					  : 1;

		ao.window = (uint32_t)ufi_params.window / pieces;
		if (ao.window < 4)
			ao.window = 4;
		ep->stranger_quota = ufi_stranger_quota(ui.rx_buffers / pieces, ao.window);
	}
	ao.timeout_ms = (uint32_t)ufi_params.timeout_ms;
	ao.max_queued = (uint32_t)ufi_params.max_queued;
	ep->uam = uam_ep__create(ep->uep, &ao);
	if (!ep->uam) {
		r = -errno;
		goto fail;
	}
	r = ufi_proto_init(ep);
	if (r)
		goto fail;
	ep->eager_max = ufi_ep_eager_max(ep);
	ep->frag_max = ufi_ep_frag_max(ep);
	if (ep->eager_max < ufi_eager_max()) {
		FI_WARN(&ufi_prov, FI_LOG_EP_CTRL,
			"%s: a UAM medium message carries %zu bytes, less than inject_size %zu "
			"(MTU too small)\n",
			dom->ifname, ep->eager_max, ufi_eager_max());
		r = -FI_EMSGSIZE;
		goto fail;
	}
	r = ufi_conn_init(ep, dom->ifname);
	if (r)
		goto fail;
	ep->name.magic[0] = 'U';
	ep->name.magic[1] = 'F';
	ep->name.version = 2;
	memcpy(ep->name.mac, ui.mac, 6);
	ep->name.ep_id = htons((uint16_t)ui.id);
	if (getrandom(&ep->name.nonce, sizeof(ep->name.nonce), 0) != sizeof(ep->name.nonce))
		ep->name.nonce = (uint32_t)(ufi_now_ns() ^ (uint64_t)getpid() << 16);
	dom->refs++;
	*epp = &ep->fid;
	return 0;
fail:
	FI_WARN(&ufi_prov, FI_LOG_EP_CTRL, "endpoint setup on %s failed: %s\n", dom->ifname,
		strerror(r < 0 ? -r : r));
	uam_ep__destroy(ep->uam);
	unet_endpoint__destroy(ep->uep);
	if (ep->udp_fd >= 0)
		close(ep->udp_fd);
	free(ep);
	return r < 0 ? r : -FI_EOTHER;
}
