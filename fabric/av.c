/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * av.c - the address vector: the address table of names.c behind
 * fi_ops_av.  FI_AV_MAP and FI_AV_TABLE alike hand out dense indices (so
 * fi_addr_t i is the i-th insert, as FI_AV_TABLE promises).  Inserting
 * only records the name; the channel to a peer is set up on first use
 * (conn.c).  FI_ADDR_STR domains insert and look up the string form.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ufi.h"

/* Why the binary name at slot of a call is refused before its fields
 * are read, or NULL to decode it at stride bytes.  fi_av_insert gives no
 * buffer length: the names lie side by side at the length the first
 * one's version gives (24 or 40, ufi_name_bin_len).  A name that says it
 * has another length, or none we know, ends what we can read: where the
 * next one starts is unknown (and the caller's buffer may end before the
 * slot we would assume), so it and every name after it are refused, and
 * no byte past a name's own length is read. */
static const char *slot_why(const void *slot, size_t stride, bool *lost)
{
	size_t len = ufi_name_bin_len(slot);

	if (len != 0 && len == stride)
		return NULL;
	*lost = true;
	return len == 0 ? "no unet name of a known version (bytes 0-2): its length, and where the "
			  "names after it start, unknown"
			: "a name of another version than the call's first (one call's names are of "
			  "one version): where the names after it start is unknown";
}

static int av_insert(struct fid_av *fid, const void *addr, size_t count, fi_addr_t *fi_addr,
		     uint64_t flags, void *context)
{
	struct ufi_av *av = (struct ufi_av *)fid;
	size_t stride = 0;
	bool lost = false;
	int ok = 0, r;

	(void)context;
	if (flags)
		return -FI_EBADFLAGS;
	if (count && !addr)
		return -FI_EINVAL;
	if (!av->dom->addr_str && count)
		stride = ufi_name_bin_len(addr);
	for (size_t i = 0; i < count; i++) {
		const char *why = NULL;
		struct ufi_name n;
		fi_addr_t a;

		memset(&n, 0, sizeof(n)); /* an invalid name: refused below */
		if (av->dom->addr_str) {
			const char *s = ((const char *const *)addr)[i];
			if (!s || ufi_name_from_str(s, &n))
				why = "not a valid fi_unet:// name";
		} else if (lost) {
			/* i * stride may lie past the caller's buffer: not read */
			why = "a name before it ended the call's names";
		} else {
			const char *slot = (const char *)addr + i * stride;

			why = slot_why(slot, stride, &lost);
			if (!why)
				why = ufi_name_bin_why(slot, stride);
			if (!why)
				(void)ufi_name_from_bin(slot, stride, &n);
		}
		r = ufi_addrs_add(&av->addrs, &n, &a);
		if (r == 0) {
			ok++;
		} else {
			/* Names come from other ranks' processes, over a
			 * launcher's wire: say which and why. */
			if (r == -FI_ENOMEM)
				why = "out of memory";
			FI_WARN(&ufi_prov, FI_LOG_AV, "fi_av_insert: name %zu of %zu refused: %s\n",
				i, count, why ? why : "invalid");
		}
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
	if (ufi_addrs_add(&av->addrs, &n, &a))
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
		ufi_addrs_remove(&av->addrs, fi_addr[i]);
	return 0;
}

static int av_lookup(struct fid_av *fid, fi_addr_t fi_addr, void *addr, size_t *addrlen)
{
	struct ufi_av *av = (struct ufi_av *)fid;
	const struct ufi_name *n = ufi_addrs_name(&av->addrs, fi_addr);
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

	/* fi_av_straddr gives addr no length: it is one name of the AV's
	 * format, so a string form is read to its NUL or the longest valid
	 * one, and a binary name only as far as its first three bytes say it
	 * is long (24 or 40; nothing past them if they are not a unet name's). */
	if (!addr)
		snprintf(s, sizeof(s), "fi_unet://invalid");
	else if (av->dom->addr_str)
		snprintf(s, sizeof(s), "%.*s", (int)sizeof(s) - 1, (const char *)addr);
	else if (ufi_name_bin_len(addr) == 0 ||
		 ufi_name_from_bin(addr, ufi_name_bin_len(addr), &n) ||
		 ufi_name_to_str(&n, s, sizeof(s)) < 0)
		snprintf(s, sizeof(s), "fi_unet://invalid");
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
	ufi_addrs_free(&av->addrs);
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
	if (attr->count && ufi_addrs_grow(&av->addrs, attr->count)) {
		free(av);
		return -FI_ENOMEM;
	}
	dom->refs++;
	*avp = &av->fid;
	return 0;
}

