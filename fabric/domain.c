/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * domain.c - the domain (one interface) and memory registration (nothing
 * to do: mr_mode 0, no RMA).  The top floor (ufi.h): it opens the CQs, the
 * AV and the endpoints.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ufi.h"

/* ---- memory registration: nothing to register (mr_mode 0, no RMA) ---- */

static int mr_close(struct fid *fid)
{
	free(fid);
	return 0;
}

static struct fi_ops mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mr_close,
	.bind = ufi_no_bind,
	.control = ufi_no_control,
	.ops_open = ufi_no_ops_open,
};

static int mr_regattr(struct fid *fid, const struct fi_mr_attr *attr, uint64_t flags,
		      struct fid_mr **mrp)
{
	struct fid_mr *mr;

	(void)fid, (void)flags;
	if (attr->access & (FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE))
		return -FI_ENOSYS; /* no RMA */
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -FI_ENOMEM;
	mr->fid.fclass = FI_CLASS_MR;
	mr->fid.context = attr->context;
	mr->fid.ops = &mr_fi_ops;
	mr->mem_desc = NULL;
	mr->key = 0;
	*mrp = mr;
	return 0;
}

static int mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access, uint64_t offset,
		  uint64_t key, uint64_t flags, struct fid_mr **mr, void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct fi_mr_attr a = { .mr_iov = &iov, .iov_count = 1, .access = access,
				.offset = offset, .requested_key = key, .context = context };
	return mr_regattr(fid, &a, flags, mr);
}

static int mr_regv(struct fid *fid, const struct iovec *iov, size_t count, uint64_t access,
		   uint64_t offset, uint64_t key, uint64_t flags, struct fid_mr **mr, void *context)
{
	struct fi_mr_attr a = { .mr_iov = iov, .iov_count = count, .access = access,
				.offset = offset, .requested_key = key, .context = context };
	return mr_regattr(fid, &a, flags, mr);
}

static struct fi_ops_mr mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = mr_reg,
	.regv = mr_regv,
	.regattr = mr_regattr,
};

/* ---- domain ---- */

static int dom_close(struct fid *fid)
{
	struct ufi_domain *dom = (struct ufi_domain *)fid;

	if (dom->refs)
		return -FI_EBUSY;
	dom->fab->refs--;
	free(dom);
	return 0;
}

static int dom_scalable_ep(struct fid_domain *d, struct fi_info *i, struct fid_ep **e, void *c)
{
	(void)d, (void)i, (void)e, (void)c;
	return -FI_ENOSYS;
}

static int dom_cntr_open(struct fid_domain *d, struct fi_cntr_attr *a, struct fid_cntr **c,
			 void *x)
{
	(void)d, (void)a, (void)c, (void)x;
	return -FI_ENOSYS;
}

static int dom_poll_open(struct fid_domain *d, struct fi_poll_attr *a, struct fid_poll **p)
{
	(void)d, (void)a, (void)p;
	return -FI_ENOSYS;
}

static int dom_stx_ctx(struct fid_domain *d, struct fi_tx_attr *a, struct fid_stx **s, void *c)
{
	(void)d, (void)a, (void)s, (void)c;
	return -FI_ENOSYS;
}

static int dom_srx_ctx(struct fid_domain *d, struct fi_rx_attr *a, struct fid_ep **e, void *c)
{
	(void)d, (void)a, (void)e, (void)c;
	return -FI_ENOSYS;
}

static int dom_query_atomic(struct fid_domain *d, enum fi_datatype t, enum fi_op o,
			    struct fi_atomic_attr *a, uint64_t f)
{
	(void)d, (void)t, (void)o, (void)a, (void)f;
	return -FI_ENOSYS;
}

static struct fi_ops dom_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = dom_close,
	.bind = ufi_no_bind,
	.control = ufi_no_control,
	.ops_open = ufi_no_ops_open,
};

static struct fi_ops_domain dom_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = ufi_av_open,
	.cq_open = ufi_cq_open,
	.endpoint = ufi_ep_open,
	.scalable_ep = dom_scalable_ep,
	.cntr_open = dom_cntr_open,
	.poll_open = dom_poll_open,
	.stx_ctx = dom_stx_ctx,
	.srx_ctx = dom_srx_ctx,
	.query_atomic = dom_query_atomic,
};

int ufi_domain_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **domp,
		    void *context)
{
	struct ufi_fabric *fab = (struct ufi_fabric *)fabric;
	struct ufi_domain *dom;
	char ifname[IF_NAMESIZE];
	int r;

	if (!info || !info->domain_attr || !info->domain_attr->name)
		return -FI_EINVAL;
	r = ufi_resolve_iface(ifname, sizeof(ifname));
	if (r)
		return r;
	if (strcmp(info->domain_attr->name, ifname) != 0) {
		FI_WARN(&ufi_prov, FI_LOG_DOMAIN, "no domain %s here (the interface is %s)\n",
			info->domain_attr->name, ifname);
		return -FI_EINVAL;
	}
	dom = calloc(1, sizeof(*dom));
	if (!dom)
		return -FI_ENOMEM;
	dom->fid.fid.fclass = FI_CLASS_DOMAIN;
	dom->fid.fid.context = context;
	dom->fid.fid.ops = &dom_fi_ops;
	dom->fid.ops = &dom_ops;
	dom->fid.mr = &mr_ops;
	dom->fab = fab;
	snprintf(dom->ifname, sizeof(dom->ifname), "%s", ifname);
	dom->addr_str = info->addr_format == FI_ADDR_STR;
	dom->av_type = info->domain_attr->av_type == FI_AV_TABLE ? FI_AV_TABLE : FI_AV_MAP;
	fab->refs++;
	*domp = &dom->fid;
	return 0;
}
