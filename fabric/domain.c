/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * domain.c - the domain (one interface), memory registration (nothing to
 * do: mr_mode 0, no RMA), and the address vector.
 *
 * AV: FI_AV_MAP and FI_AV_TABLE alike hand out dense indices into an array
 * of names (so fi_addr_t i is the i-th insert, as FI_AV_TABLE promises).
 * Inserting only records the name; the channel to a peer is set up on
 * first use (conn.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ufi.h"

/* ---- address vector ---- */

const struct ufi_name *ufi_av_name(struct ufi_av *av, fi_addr_t addr)
{
	if (addr >= av->n || !av->valid[addr])
		return NULL;
	return &av->names[addr];
}

fi_addr_t ufi_av_find(struct ufi_av *av, const struct ufi_name *n)
{
	for (size_t i = 0; i < av->n; i++)
		if (av->valid[i] && memcmp(&av->names[i], n, UFI_NAME_LEN) == 0)
			return i;
	return FI_ADDR_NOTAVAIL;
}

static int av_grow(struct ufi_av *av, size_t need)
{
	size_t cap = av->cap ? av->cap : 16;
	struct ufi_name *n;
	bool *v;

	if (need <= av->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	n = realloc(av->names, cap * sizeof(*n));
	if (!n)
		return -FI_ENOMEM;
	av->names = n;
	v = realloc(av->valid, cap * sizeof(*v));
	if (!v)
		return -FI_ENOMEM;
	av->valid = v;
	av->cap = cap;
	return 0;
}

static int av_insert_one(struct ufi_av *av, const struct ufi_name *n, fi_addr_t *out)
{
	int r;

	if (!ufi_name_valid(n)) {
		*out = FI_ADDR_NOTAVAIL;
		return -FI_EINVAL;
	}
	r = av_grow(av, av->n + 1);
	if (r) {
		*out = FI_ADDR_NOTAVAIL;
		return r;
	}
	av->names[av->n] = *n;
	av->valid[av->n] = true;
	*out = av->n++;
	return 0;
}

static int av_insert(struct fid_av *fid, const void *addr, size_t count, fi_addr_t *fi_addr,
		     uint64_t flags, void *context)
{
	struct ufi_av *av = (struct ufi_av *)fid;
	int ok = 0;

	(void)context;
	if (flags)
		return -FI_EBADFLAGS;
	for (size_t i = 0; i < count; i++) {
		struct ufi_name n;
		fi_addr_t a;
		if (av->dom->addr_str) {
			const char *s = ((const char *const *)addr)[i];
			if (!s || ufi_name_from_str(s, &n))
				memset(&n, 0, sizeof(n)); /* invalid: refused below */
		} else {
			memcpy(&n, (const char *)addr + i * UFI_NAME_LEN, UFI_NAME_LEN);
		}
		if (av_insert_one(av, &n, &a) == 0)
			ok++;
		if (fi_addr)
			fi_addr[i] = a;
	}
	return ok;
}

static int av_insertsvc(struct fid_av *fid, const char *node, const char *service,
			fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	struct ufi_av *av = (struct ufi_av *)fid;
	struct ufi_name n;
	fi_addr_t a;

	(void)context;
	if (flags)
		return -FI_EBADFLAGS;
	/* only our string form as the node, as fi_av(3) allows for FI_ADDR_STR */
	if (!node || service || ufi_name_from_str(node, &n))
		return -FI_EINVAL;
	if (av_insert_one(av, &n, &a))
		return 0;
	if (fi_addr)
		*fi_addr = a;
	return 1;
}

static int av_insertsym(struct fid_av *fid, const char *node, size_t nodecnt,
			const char *service, size_t svccnt, fi_addr_t *fi_addr, uint64_t flags,
			void *context)
{
	(void)fid, (void)node, (void)nodecnt, (void)service, (void)svccnt, (void)fi_addr,
		(void)flags, (void)context;
	return -FI_ENOSYS;
}

static int av_remove(struct fid_av *fid, fi_addr_t *fi_addr, size_t count, uint64_t flags)
{
	struct ufi_av *av = (struct ufi_av *)fid;

	if (flags)
		return -FI_EBADFLAGS;
	for (size_t i = 0; i < count; i++)
		if (fi_addr[i] < av->n)
			av->valid[fi_addr[i]] = false;
	return 0;
}

static int av_lookup(struct fid_av *fid, fi_addr_t fi_addr, void *addr, size_t *addrlen)
{
	struct ufi_av *av = (struct ufi_av *)fid;
	const struct ufi_name *n = ufi_av_name(av, fi_addr);
	size_t need = av->dom->addr_str ? UFI_STR_LEN : UFI_NAME_LEN;
	char s[UFI_STR_LEN];

	if (!n)
		return -FI_ENOENT;
	if (av->dom->addr_str) {
		ufi_name_to_str(n, s, sizeof(s));
		need = strlen(s) + 1;
	}
	if (addr && *addrlen)
		memcpy(addr, av->dom->addr_str ? (const void *)s : (const void *)n,
		       *addrlen < need ? *addrlen : need);
	*addrlen = need;
	return 0;
}

static const char *av_straddr(struct fid_av *fid, const void *addr, char *buf, size_t *len)
{
	struct ufi_av *av = (struct ufi_av *)fid;
	char s[UFI_STR_LEN];
	struct ufi_name n;
	size_t need;

	if (av->dom->addr_str)
		snprintf(s, sizeof(s), "%s", (const char *)addr);
	else {
		memcpy(&n, addr, UFI_NAME_LEN);
		if (!ufi_name_valid(&n) || ufi_name_to_str(&n, s, sizeof(s)) < 0)
			snprintf(s, sizeof(s), "fi_unet://invalid");
	}
	need = strlen(s) + 1;
	if (buf && *len) {
		strncpy(buf, s, *len - 1);
		buf[*len - 1] = '\0';
	}
	*len = need;
	return buf;
}

static int av_set(struct fid_av *fid, struct fi_av_set_attr *attr, struct fid_av_set **set,
		  void *context)
{
	(void)fid, (void)attr, (void)set, (void)context;
	return -FI_ENOSYS;
}

static int av_close(struct fid *fid)
{
	struct ufi_av *av = (struct ufi_av *)fid;

	if (av->refs)
		return -FI_EBUSY;
	av->dom->refs--;
	free(av->names);
	free(av->valid);
	free(av);
	return 0;
}

static struct fi_ops av_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = av_close,
	.bind = ufi_no_bind,
	.control = ufi_no_control,
	.ops_open = ufi_no_ops_open,
};

static struct fi_ops_av av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = av_insert,
	.insertsvc = av_insertsvc,
	.insertsym = av_insertsym,
	.remove = av_remove,
	.lookup = av_lookup,
	.straddr = av_straddr,
	.av_set = av_set,
};

int ufi_av_open(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **avp,
		void *context)
{
	struct ufi_domain *dom = (struct ufi_domain *)domain;
	struct ufi_av *av;

	if (!attr)
		return -FI_EINVAL;
	if (attr->type != FI_AV_UNSPEC && attr->type != FI_AV_MAP && attr->type != FI_AV_TABLE)
		return -FI_EINVAL;
	if (attr->flags & (FI_EVENT | FI_READ | FI_SYMMETRIC) || attr->name || attr->rx_ctx_bits)
		return -FI_ENOSYS;
	av = calloc(1, sizeof(*av));
	if (!av)
		return -FI_ENOMEM;
	av->fid.fid.fclass = FI_CLASS_AV;
	av->fid.fid.context = context;
	av->fid.fid.ops = &av_fi_ops;
	av->fid.ops = &av_ops;
	av->dom = dom;
	av->type = attr->type == FI_AV_UNSPEC ? dom->av_type : attr->type;
	attr->type = av->type;
	if (attr->count && av_grow(av, attr->count)) {
		free(av);
		return -FI_ENOMEM;
	}
	dom->refs++;
	*avp = &av->fid;
	return 0;
}

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
