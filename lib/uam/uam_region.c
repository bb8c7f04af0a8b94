/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uam_region.c - an endpoint's memory regions, the targets of stores and
 * gets: registering them (for every peer, or bound to one channel),
 * finding one for a peer's transfer, unbinding them from a closed
 * channel.  The lowest floor of lib/uam: it calls nothing of the others.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "uam/uam_impl.h"

struct uam_region *uamp_region_find(struct uam_ep *ep, uint32_t id)
{
	for (int i = 0; i < UAM_MAX_REGIONS; i++)
		if (ep->regions[i].used && ep->regions[i].id == id)
			return &ep->regions[i];
	return NULL;
}

/* Region id as the peer of ch may reach it: registered, and for every
 * channel or bound to ch (uam_region_opts.chan).  NULL if not: a region
 * bound to another peer is refused as if it did not exist. */
struct uam_region *uamp_region_for(struct uam_chan *ch, uint32_t id)
{
	struct uam_region *r = uamp_region_find(ch->ep, id);

	return r && (!r->bound || r->chan == ch) ? r : NULL;
}

void uamp_regions_unbind(struct uam_ep *ep, const struct uam_chan *ch)
{
	for (int i = 0; i < UAM_MAX_REGIONS; i++)
		if (ep->regions[i].used && ep->regions[i].bound && ep->regions[i].chan == ch)
			ep->regions[i].chan = NULL;
}

int uam_region__register(struct uam_ep *ep, uint32_t id, void *base, size_t len, unsigned int flags)
{
	return uam_region__register_opts(ep, id, base, len, flags, NULL);
}

int uam_region__register_opts(struct uam_ep *ep, uint32_t id, void *base, size_t len,
			      unsigned int flags, const struct uam_region_opts *opts)
{
	struct uam_region_opts o = { .sz = sizeof(o) };
	struct uam_region *free_r = NULL;

	if (!ep || (!base && len) || !flags || (flags & ~(UAM_REGION_READ | UAM_REGION_WRITE)))
		return -EINVAL;
	if (opts && uamp_copy_opts(&o, sizeof(o), opts, opts->sz))
		return -EINVAL;
	if (o.chan && (o.chan->ep != ep || o.chan->closing || o.chan->err))
		return -EINVAL;
	for (int i = 0; i < UAM_MAX_REGIONS; i++) {
		if (ep->regions[i].used && ep->regions[i].id == id)
			return -EEXIST;
		if (!ep->regions[i].used && !free_r)
			free_r = &ep->regions[i];
	}
	if (!free_r)
		return -ENOSPC;
	*free_r = (struct uam_region){ .used = true, .bound = o.chan != NULL, .chan = o.chan,
				       .id = id, .base = base, .len = len, .flags = flags };
	return 0;
}

int uam_region__unregister(struct uam_ep *ep, uint32_t id)
{
	struct uam_region *r;

	if (!ep)
		return -EINVAL;
	r = uamp_region_find(ep, id);
	if (!r)
		return -ENOENT;
	r->used = false;
	return 0;
}
