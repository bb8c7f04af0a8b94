/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pool.c - the communication segment's frames: a stack of free ones, and
 * an owner byte per frame.  The owner byte is what lets the library refuse
 * a buffer the application does not hold (a double release, a made-up
 * offset) with -EINVAL instead of corrupting the rings.
 */
#include <errno.h>
#include <stdlib.h>

#include "core/internal.h"

int unet_pool_init(struct unet_pool *p, uint32_t nframes, uint32_t frame_size)
{
	uint32_t shift = 0;

	if (!nframes || !frame_size || (frame_size & (frame_size - 1)))
		return -EINVAL;
	while ((1u << shift) < frame_size)
		shift++;
	p->stack = calloc(nframes, sizeof(*p->stack));
	p->owner = calloc(nframes, sizeof(*p->owner));
	p->keep = calloc(nframes, sizeof(*p->keep));
	if (!p->stack || !p->owner || !p->keep) {
		unet_pool_fini(p);
		return -ENOMEM;
	}
	p->nframes = nframes;
	p->frame_shift = shift;
	/* Push in reverse so the first frames handed out are the lowest. */
	for (uint32_t i = 0; i < nframes; i++)
		p->stack[i] = (uint64_t)(nframes - 1 - i) << shift;
	p->nfree = nframes;
	return 0;
}

void unet_pool_fini(struct unet_pool *p)
{
	if (!p)
		return;
	free(p->stack);
	free(p->owner);
	free(p->keep);
	p->stack = NULL;
	p->owner = NULL;
	p->keep = NULL;
	p->nfree = p->nframes = 0;
}

int64_t unet_pool_index(const struct unet_pool *p, uint64_t addr)
{
	uint64_t idx = addr >> p->frame_shift;

	if (addr == UNET_NO_BUF || idx >= p->nframes)
		return -EINVAL;
	return (int64_t)idx;
}

uint64_t unet_pool_get(struct unet_pool *p, enum unet_frame_owner owner)
{
	uint64_t addr;

	if (!p->nfree)
		return UNET_NO_BUF;
	addr = p->stack[--p->nfree];
	p->owner[addr >> p->frame_shift] = (uint8_t)owner;
	return addr;
}

/* Frame idx (checked) back on the free stack. */
static void push_free(struct unet_pool *p, int64_t idx)
{
	p->owner[idx] = UNET_FRAME_FREE;
	p->keep[idx] = 0; /* a kept buffer its holder freed outright */
	p->stack[p->nfree++] = (uint64_t)idx << p->frame_shift;
}

int unet_pool_put(struct unet_pool *p, uint64_t addr, enum unet_frame_owner expect)
{
	int64_t idx = unet_pool_index(p, addr);

	if (idx < 0 || p->owner[idx] != expect)
		return -EINVAL;
	push_free(p, idx);
	return 0;
}

int unet_pool_move(struct unet_pool *p, uint64_t addr, enum unet_frame_owner expect,
		   enum unet_frame_owner owner)
{
	int64_t idx = unet_pool_index(p, addr);

	if (idx < 0 || p->owner[idx] != expect)
		return -EINVAL;
	p->owner[idx] = (uint8_t)owner;
	return 0;
}

int unet_pool_keep(struct unet_pool *p, uint64_t addr)
{
	int64_t idx = unet_pool_index(p, addr);

	if (idx < 0 || p->owner[idx] != UNET_FRAME_APP)
		return -EINVAL;
	p->keep[idx] = 1;
	return 0;
}

int unet_pool_unkeep(struct unet_pool *p, uint64_t addr)
{
	int64_t idx = unet_pool_index(p, addr);

	if (idx < 0 || !p->keep[idx])
		return -EINVAL;
	if (p->owner[idx] == UNET_FRAME_APP)
		push_free(p, idx);
	else if (p->owner[idx] == UNET_FRAME_TX)
		p->keep[idx] = 0; /* still on a ring: its completion frees it */
	else
		return -EINVAL;
	return 0;
}

int unet_pool_completed(struct unet_pool *p, uint64_t addr)
{
	int64_t idx = unet_pool_index(p, addr);

	if (idx < 0 || p->owner[idx] != UNET_FRAME_TX)
		return -EINVAL;
	if (p->keep[idx]) {
		p->owner[idx] = UNET_FRAME_APP;
		return 1;
	}
	push_free(p, idx);
	return 0;
}
