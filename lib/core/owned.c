/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * owned.c - a layer's map entries owned by an endpoint incarnation
 * (layer.h, "Per interface: owned entries"): putting one in over a dead
 * owner's, taking it out only while still ours, walking them and
 * reclaiming the dead owners', as for channels (docs/control-plane.md).
 * The layer's value layout stays its own: the owner fields are read at
 * the offsets it gives.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "core/layer.h"

/* A value, read whole, aligned for its __u64 fields. */
typedef uint64_t owned_val[UNET_OWNED_VAL_MAX / sizeof(uint64_t)];

static uint32_t val_u32(const void *val, size_t off)
{
	uint32_t x;

	memcpy(&x, (const char *)val + off, sizeof(x));
	return x;
}

static uint64_t val_u64(const void *val, size_t off)
{
	uint64_t x;

	memcpy(&x, (const char *)val + off, sizeof(x));
	return x;
}

bool unet_owner_alive(struct unet_iface *iface, uint32_t slot, uint64_t token)
{
	return token && unet_iface_slot_alive(iface, slot, token);
}

/* Whether val's owner (slot, token) is alive. */
static bool val_alive(struct unet_iface *iface, const struct unet_owned_map *m, const void *val)
{
	return unet_owner_alive(iface, val_u32(val, m->endpoint_off), val_u64(val, m->token_off));
}

int unet_owned_put(struct unet_iface *iface, int fd, const struct unet_owned_map *m,
		   const void *key, const void *val, void *old)
{
	int replaced = 0;

	if (m->val_size > UNET_OWNED_VAL_MAX)
		return -EINVAL;
	if (bpf_map_lookup_elem(fd, key, old) == 0) {
		if (val_alive(iface, m, old))
			return -EADDRINUSE;
		if (bpf_map_delete_elem(fd, key) && errno != ENOENT)
			return -errno;
		replaced = 1;
	}
	if (bpf_map_update_elem(fd, key, val, BPF_NOEXIST)) {
		int err = -errno;

		return err == -E2BIG ? -ENOSPC : err; /* -EEXIST: put in meanwhile */
	}
	return replaced;
}

void unet_owned_remove(struct unet_iface *iface, int fd, const struct unet_owned_map *m,
		       const void *key, uint32_t endpoint)
{
	owned_val v;

	/* Only if still ours (slot and incarnation): an administrator may
	 * have deleted it and another endpoint taken it since. */
	if (m->val_size <= sizeof(v) && !bpf_map_lookup_elem(fd, key, v) &&
	    val_u32(v, m->endpoint_off) == endpoint &&
	    val_u64(v, m->token_off) == unet_iface_slot_token(iface, endpoint))
		bpf_map_delete_elem(fd, key);
}

int unet_owned_each(struct unet_iface *iface, int fd, const struct unet_owned_map *m,
		    int (*fn)(const void *key, const void *val, bool stale, void *ctx), void *ctx)
{
	owned_val v;
	void *keys;
	size_t n;
	int ret;

	if (m->val_size > sizeof(v))
		return -EINVAL;
	/* Keys first: a delete (ours or another process's) restarts a walk. */
	ret = unet_map_keys(fd, m->key_size, m->max_entries, &keys, &n);
	if (ret)
		return ret;
	for (size_t i = 0; i < n && !ret; i++) {
		const void *key = (const char *)keys + i * m->key_size;

		if (bpf_map_lookup_elem(fd, key, v))
			continue; /* deleted meanwhile */
		ret = fn(key, v, !val_alive(iface, m, v), ctx);
	}
	free(keys);
	return ret;
}

int unet_owned_reclaim(struct unet_iface *iface, int fd, const struct unet_owned_map *m,
		       void (*reclaimed)(struct unet_iface *iface, const void *key,
					 const void *val))
{
	int removed = 0, err;
	owned_val v;
	void *keys;
	size_t n;

	if (m->val_size > sizeof(v))
		return -EINVAL;
	err = unet_map_keys(fd, m->key_size, m->max_entries, &keys, &n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		const void *key = (const char *)keys + i * m->key_size;

		if (bpf_map_lookup_elem(fd, key, v) || val_alive(iface, m, v))
			continue;
		if (bpf_map_delete_elem(fd, key) == 0) {
			if (reclaimed)
				reclaimed(iface, key, v);
			removed++;
		}
	}
	free(keys);
	return removed;
}
