/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * prov.c - the `unet` provider's entry (fi_prov_ini: its parameters
 * declared, the record's entry points), fi_getinfo's matching of hints,
 * the fabric object and a minimal EQ.  The top floor (ufi.h).
 *
 * getinfo answers only what the provider serves: FI_EP_RDM with the caps
 * of UFI_CAPS, manual progress, FI_THREAD_DOMAIN.  Anything else gets
 * -FI_ENODATA, so libfabric does not layer ofi_rxd / ofi_rxm on us
 * (docs/libfabric-facts.md, 1.4).  The domain is the interface.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ufi.h"

/* ---- getinfo ---- */

static int check_hints(const struct fi_info *h, const char *ifname)
{
	if (!h)
		return 0;
	/* hints->mode is what the application can do for us: we need nothing */
	if (h->caps & ~UFI_CAPS)
		return -FI_ENODATA;
	if (h->addr_format != FI_FORMAT_UNSPEC && h->addr_format != FI_ADDR_STR)
		return -FI_ENODATA;
	if (h->ep_attr) {
		const struct fi_ep_attr *e = h->ep_attr;
		if (e->type != FI_EP_UNSPEC && e->type != FI_EP_RDM)
			return -FI_ENODATA;
		if (e->protocol != FI_PROTO_UNSPEC || e->max_msg_size > UFI_MAX_MSG_SIZE ||
		    e->tx_ctx_cnt > 1 || e->rx_ctx_cnt > 1 || e->msg_prefix_size)
			return -FI_ENODATA;
		if (e->auth_key_size)
			return -FI_ENODATA;
	}
	if (h->domain_attr) {
		const struct fi_domain_attr *d = h->domain_attr;
		if (d->name && strcmp(d->name, ifname) != 0)
			return -FI_ENODATA;
		if (d->threading != FI_THREAD_UNSPEC && d->threading != FI_THREAD_DOMAIN)
			return -FI_ENODATA;
		if (d->control_progress == FI_PROGRESS_AUTO || d->data_progress == FI_PROGRESS_AUTO)
			return -FI_ENODATA;
		if (d->av_type != FI_AV_UNSPEC && d->av_type != FI_AV_MAP &&
		    d->av_type != FI_AV_TABLE)
			return -FI_ENODATA;
		if (d->cq_data_size > UFI_CQ_DATA_SIZE || d->auth_key_size)
			return -FI_ENODATA;
		if (d->max_ep_tx_ctx > 1 || d->max_ep_rx_ctx > 1 || d->max_ep_stx_ctx ||
		    d->max_ep_srx_ctx)
			return -FI_ENODATA;
	}
	if (h->fabric_attr) {
		if (h->fabric_attr->name && strcmp(h->fabric_attr->name, UFI_FABRIC_NAME) != 0)
			return -FI_ENODATA;
		if (h->fabric_attr->prov_name && strcmp(h->fabric_attr->prov_name, UFI_PROV_NAME))
			return -FI_ENODATA;
	}
	if (h->tx_attr) {
		const struct fi_tx_attr *t = h->tx_attr;
		if ((t->msg_order & ~FI_ORDER_SAS) || t->comp_order != FI_ORDER_NONE ||
		    t->inject_size > ufi_eager_max() || t->iov_limit > 1 || t->rma_iov_limit ||
		    t->size > UFI_TX_SIZE || (t->caps & ~UFI_CAPS))
			return -FI_ENODATA;
	}
	if (h->rx_attr) {
		const struct fi_rx_attr *r = h->rx_attr;
		if ((r->msg_order & ~FI_ORDER_SAS) || r->comp_order != FI_ORDER_NONE ||
		    r->iov_limit > 1 || r->size > UFI_RX_SIZE || (r->caps & ~UFI_CAPS))
			return -FI_ENODATA;
	}
	return 0;
}

/* An address from the hints or the node argument: our binary or string form. */
static int parse_addr(uint32_t fmt, const void *a, size_t len, struct ufi_name *n)
{
	if (fmt == FI_ADDR_STR)
		return len && memchr(a, '\0', len) ? ufi_name_from_str(a, n) : -FI_EINVAL;
	return ufi_name_from_bin(a, len, n);
}

static int copy_addr(void **dst, size_t *dlen, const void *a, size_t len)
{
	*dst = malloc(len);
	if (!*dst)
		return -FI_ENOMEM;
	memcpy(*dst, a, len);
	*dlen = len;
	return 0;
}

static int ufi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
		       const struct fi_info *hints, struct fi_info **info)
{
	char ifname[IF_NAMESIZE];
	struct fi_info *fi;
	struct ufi_name n;
	uint32_t fmt = hints ? hints->addr_format : FI_FORMAT_UNSPEC;
	int r;

	(void)version;
	*info = NULL;
	if (ufi_params.bad[0]) {
		ufi_why("%s", ufi_params.bad);
		r = -FI_EINVAL;
	} else {
		r = ufi_resolve_iface(ifname, sizeof(ifname));
	}
	if (r) {
		/* Asked for by name (fi_info -p unet, FI_PROVIDER=unet): say why
		 * not, once, even when libfabric's log is off. */
		static bool told;
		const char *want = getenv("FI_PROVIDER");
		bool named = (hints && hints->fabric_attr && hints->fabric_attr->prov_name &&
			      strstr(hints->fabric_attr->prov_name, UFI_PROV_NAME)) ||
			     (want && strstr(want, UFI_PROV_NAME));
		if (named && !told) {
			told = true;
			fprintf(stderr, "libfabric unet provider: %s\n", ufi_why_buf);
		}
		return -FI_ENODATA;
	}
	r = check_hints(hints, ifname);
	if (r)
		return r;
	if (service)
		return -FI_ENODATA; /* no services: names come from fi_getname */
	if (node && parse_addr(FI_ADDR_STR, node, strlen(node) + 1, &n))
		return -FI_ENODATA;
	if (hints && hints->dest_addr && parse_addr(fmt, hints->dest_addr, hints->dest_addrlen, &n))
		return -FI_ENODATA;
	if (hints && hints->src_addr && parse_addr(fmt, hints->src_addr, hints->src_addrlen, &n))
		return -FI_ENODATA;

	fi = fi_allocinfo();
	if (!fi)
		return -FI_ENOMEM;
	fi->caps = UFI_CAPS;
	if (hints && hints->caps) {
		fi->caps = hints->caps;
		if (!(fi->caps & (FI_SEND | FI_RECV)))
			fi->caps |= FI_SEND | FI_RECV;
		if (!(fi->caps & (FI_LOCAL_COMM | FI_REMOTE_COMM)))
			fi->caps |= FI_LOCAL_COMM | FI_REMOTE_COMM;
	}
	fi->mode = 0;
	fi->addr_format = fmt == FI_ADDR_STR ? FI_ADDR_STR : FI_FORMAT_UNSPEC;

	fi->tx_attr->caps = fi->caps & ~(FI_RECV | FI_DIRECTED_RECV | FI_SOURCE);
	fi->tx_attr->op_flags = hints && hints->tx_attr ? hints->tx_attr->op_flags & FI_COMPLETION : 0;
	fi->tx_attr->msg_order = FI_ORDER_SAS;
	fi->tx_attr->comp_order = FI_ORDER_NONE;
	fi->tx_attr->inject_size = ufi_eager_max();
	fi->tx_attr->size = UFI_TX_SIZE;
	fi->tx_attr->iov_limit = 1;
	fi->tx_attr->rma_iov_limit = 0;

	fi->rx_attr->caps = fi->caps & ~FI_SEND;
	fi->rx_attr->op_flags = hints && hints->rx_attr ? hints->rx_attr->op_flags & FI_COMPLETION : 0;
	fi->rx_attr->msg_order = FI_ORDER_SAS;
	fi->rx_attr->comp_order = FI_ORDER_NONE;
	fi->rx_attr->total_buffered_recv = 0;
	fi->rx_attr->size = UFI_RX_SIZE;
	fi->rx_attr->iov_limit = 1;

	fi->ep_attr->type = FI_EP_RDM;
	fi->ep_attr->protocol = FI_PROTO_UNSPEC;
	fi->ep_attr->protocol_version = 1;
	fi->ep_attr->max_msg_size = UFI_MAX_MSG_SIZE;
	fi->ep_attr->msg_prefix_size = 0;
	/* all 64 tag bits are matched */
	fi->ep_attr->mem_tag_format = hints && hints->ep_attr && hints->ep_attr->mem_tag_format
					      ? hints->ep_attr->mem_tag_format
					      : ~0ull;
	fi->ep_attr->tx_ctx_cnt = 1;
	fi->ep_attr->rx_ctx_cnt = 1;

	fi->domain_attr->name = strdup(ifname);
	fi->domain_attr->threading = FI_THREAD_DOMAIN;
	fi->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	fi->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	fi->domain_attr->resource_mgmt = FI_RM_ENABLED;
	fi->domain_attr->av_type =
		hints && hints->domain_attr && hints->domain_attr->av_type == FI_AV_TABLE
			? FI_AV_TABLE
			: FI_AV_MAP;
	fi->domain_attr->mr_mode = 0;
	fi->domain_attr->mr_key_size = 0;
	fi->domain_attr->cq_data_size = UFI_CQ_DATA_SIZE;
	fi->domain_attr->cq_cnt = 64;
	fi->domain_attr->ep_cnt = 16;
	fi->domain_attr->tx_ctx_cnt = 16;
	fi->domain_attr->rx_ctx_cnt = 16;
	fi->domain_attr->max_ep_tx_ctx = 1;
	fi->domain_attr->max_ep_rx_ctx = 1;
	fi->domain_attr->cntr_cnt = 0;
	fi->domain_attr->mr_iov_limit = 1;
	fi->domain_attr->mr_cnt = 0;
	fi->domain_attr->max_err_data = 0;

	fi->fabric_attr->name = strdup(UFI_FABRIC_NAME);
	fi->fabric_attr->prov_version = UFI_PROV_VERSION;
	if (!fi->domain_attr->name || !fi->fabric_attr->name) {
		fi_freeinfo(fi);
		return -FI_ENOMEM;
	}
	if (hints && hints->dest_addr &&
	    (r = copy_addr(&fi->dest_addr, &fi->dest_addrlen, hints->dest_addr, hints->dest_addrlen)))
		goto fail;
	if (hints && hints->src_addr &&
	    (r = copy_addr(&fi->src_addr, &fi->src_addrlen, hints->src_addr, hints->src_addrlen)))
		goto fail;
	if (node && !(flags & FI_SOURCE) && !fi->dest_addr) {
		/* a string name given as the node: the destination */
		if (fi->addr_format == FI_ADDR_STR)
			r = copy_addr(&fi->dest_addr, &fi->dest_addrlen, node, strlen(node) + 1);
		else
			r = copy_addr(&fi->dest_addr, &fi->dest_addrlen, &n, UFI_NAME_LEN);
		if (r)
			goto fail;
	}
	*info = fi;
	return 0;
fail:
	fi_freeinfo(fi);
	return r;
}

/* ---- EQ: only what an RDM endpoint needs (nothing reports to it) ---- */

static ssize_t eq_read(struct fid_eq *fid, uint32_t *event, void *buf, size_t len,
		       uint64_t flags)
{
	struct ufi_eq *eq = (struct ufi_eq *)fid;
	struct ufi_eqe *e = eq->head;
	size_t n;

	if (!e)
		return -FI_EAGAIN;
	n = e->len < len ? e->len : len;
	if (event)
		*event = e->event;
	if (buf && n)
		memcpy(buf, e->buf, n);
	if (!(flags & FI_PEEK)) {
		eq->head = e->next;
		if (!eq->head)
			eq->tail = NULL;
		free(e);
	}
	return (ssize_t)n;
}

static ssize_t eq_readerr(struct fid_eq *fid, struct fi_eq_err_entry *buf, uint64_t flags)
{
	(void)fid, (void)buf, (void)flags;
	return -FI_EAGAIN;
}

static ssize_t eq_write(struct fid_eq *fid, uint32_t event, const void *buf, size_t len,
			uint64_t flags)
{
	struct ufi_eq *eq = (struct ufi_eq *)fid;
	struct ufi_eqe *e;

	(void)flags;
	e = malloc(sizeof(*e) + len);
	if (!e)
		return -FI_ENOMEM;
	e->next = NULL;
	e->event = event;
	e->len = len;
	if (len)
		memcpy(e->buf, buf, len);
	if (eq->tail)
		eq->tail->next = e;
	else
		eq->head = e;
	eq->tail = e;
	return (ssize_t)len;
}

static ssize_t eq_sread(struct fid_eq *fid, uint32_t *event, void *buf, size_t len, int timeout,
			uint64_t flags)
{
	ssize_t r = eq_read(fid, event, buf, len, flags);

	/* only fi_eq_write fills it, from this thread: nothing can arrive */
	if (r == -FI_EAGAIN && timeout > 0) {
		struct timespec ts = { timeout / 1000, (long)(timeout % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
	return r;
}

static const char *eq_strerror(struct fid_eq *fid, int prov_errno, const void *err_data,
			       char *buf, size_t len)
{
	const char *s = strerror(prov_errno);

	(void)fid, (void)err_data;
	if (buf && len) {
		strncpy(buf, s, len - 1);
		buf[len - 1] = '\0';
		return buf;
	}
	return s;
}

static int eq_close(struct fid *fid)
{
	struct ufi_eq *eq = (struct ufi_eq *)fid;

	while (eq->head) {
		struct ufi_eqe *e = eq->head;
		eq->head = e->next;
		free(e);
	}
	free(eq);
	return 0;
}

static struct fi_ops eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = eq_close,
	.bind = ufi_no_bind,
	.control = ufi_no_control,
	.ops_open = ufi_no_ops_open,
};

static struct fi_ops_eq eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = eq_read,
	.readerr = eq_readerr,
	.write = eq_write,
	.sread = eq_sread,
	.strerror = eq_strerror,
};

int ufi_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr, struct fid_eq **eqp,
		void *context)
{
	struct ufi_eq *eq;

	(void)fabric;
	if (attr && attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC)
		return -FI_ENOSYS;
	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return -FI_ENOMEM;
	eq->fid.fid.fclass = FI_CLASS_EQ;
	eq->fid.fid.context = context;
	eq->fid.fid.ops = &eq_fi_ops;
	eq->fid.ops = &eq_ops;
	*eqp = &eq->fid;
	return 0;
}

/* ---- fabric ---- */

static int fab_close(struct fid *fid)
{
	struct ufi_fabric *fab = (struct ufi_fabric *)fid;

	if (fab->refs)
		return -FI_EBUSY;
	free(fab);
	return 0;
}

static int fab_passive_ep(struct fid_fabric *f, struct fi_info *i, struct fid_pep **p, void *c)
{
	(void)f, (void)i, (void)p, (void)c;
	return -FI_ENOSYS;
}

static int fab_wait_open(struct fid_fabric *f, struct fi_wait_attr *a, struct fid_wait **w)
{
	(void)f, (void)a, (void)w;
	return -FI_ENOSYS;
}

static int fab_domain2(struct fid_fabric *f, struct fi_info *i, struct fid_domain **d,
		       uint64_t flags, void *c)
{
	if (flags)
		return -FI_EBADFLAGS;
	return ufi_domain_open(f, i, d, c);
}

static struct fi_ops fab_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = fab_close,
	.bind = ufi_no_bind,
	.control = ufi_no_control,
	.ops_open = ufi_no_ops_open,
};

static struct fi_ops_fabric fab_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = ufi_domain_open,
	.passive_ep = fab_passive_ep,
	.eq_open = ufi_eq_open,
	.wait_open = fab_wait_open,
	.trywait = ufi_trywait,
	.domain2 = fab_domain2,
};

static int ufi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
	struct ufi_fabric *fab;

	if (!attr || !attr->name || strcmp(attr->name, UFI_FABRIC_NAME) != 0)
		return -FI_ENODATA;
	fab = calloc(1, sizeof(*fab));
	if (!fab)
		return -FI_ENOMEM;
	fab->fid.fid.fclass = FI_CLASS_FABRIC;
	fab->fid.fid.context = context;
	fab->fid.fid.ops = &fab_fi_ops;
	fab->fid.ops = &fab_ops;
	*fabric = &fab->fid;
	return 0;
}

static void ufi_cleanup(void)
{
}

FI_EXT_INI
{
	/* the record is base.c's (every floor logs under it); its entry
	 * points are ours */
	ufi_prov.getinfo = ufi_getinfo;
	ufi_prov.fabric = ufi_fabric;
	ufi_prov.cleanup = ufi_cleanup;
	fi_param_define(&ufi_prov, "iface", FI_PARAM_STRING,
			"interface to use (default: the only one with the unet XDP program)");
	fi_param_define(&ufi_prov, "timeout_ms", FI_PARAM_INT,
			"a peer that acknowledges nothing this long is dead (default 10000)");
	fi_param_define(&ufi_prov, "connect_timeout_ms", FI_PARAM_INT,
			"give up setting up a channel after this long (default 30000)");
	fi_param_define(&ufi_prov, "window", FI_PARAM_INT,
			"UAM credits per peer channel, 4..64 (default 32)");
	fi_param_define(&ufi_prov, "max_queued", FI_PARAM_INT,
			"UAM's local queue per peer channel (default UAM's, 1024); small values are for tests");
	fi_param_define(&ufi_prov, "linger_ms", FI_PARAM_INT,
			"fi_close waits this long for peers to take our last data (default 1000)");
	fi_param_define(&ufi_prov, "spin_us", FI_PARAM_INT,
			"fi_cq_read polled back to back with nothing arriving spins this long, then sleeps until a frame comes (at most 1 ms a call); -1: never sleeps (default 50)");
	fi_param_define(&ufi_prov, "channel", FI_PARAM_STRING,
			"auto: raw U-Net channels to peers on the interface's subnet, routable ones (U-Net in UDP/IPv4 or UDP/IPv6) to the others; ip: routable channels to every peer (default auto)");
	fi_param_define(&ufi_prov, "family", FI_PARAM_STRING,
			"ipv4 or ipv6: the address family of this process's name, its setup socket and routable channels; auto: IPv4 if the interface has an IPv4 address, else IPv6 (default auto)");
	ufi_params_load();
	return &ufi_prov;
}
