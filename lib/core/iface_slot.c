/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * iface_slot.c - the endpoint slot table: claiming and releasing a slot,
 * the slot's sockets in the XSKMAP, listing the slots, and reclaiming
 * what dead owners left (their channels through iface_channel.c, the
 * layers' tables through their hooks, then the slots).  The top floor of
 * the interface files.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "core/iface_impl.h"

/* ---- Layers' shared tables ------------------------------------------- */

static struct unet_iface_layer *iface_layers;

void unet_iface_layer_register(struct unet_iface_layer *l)
{
	for (struct unet_iface_layer *o = iface_layers; o; o = o->next)
		if (o == l)
			return;
	l->next = iface_layers;
	iface_layers = l;
}

struct endpoint_walk {
	struct unet_iface *iface;
	int (*fn)(const struct unet_endpoint_entry *, void *ctx);
	void *ctx;
	int removed;
};

static int list_endpoint(__u32 key, void *val, void *ctx)
{
	const struct unet_endpoint_val *ev = val;
	struct endpoint_walk *w = ctx;
	struct unet_endpoint_entry e;

	memset(&e, 0, sizeof(e));
	e.id = key;
	e.pid = ev->pid;
	e.nqueues = ev->nqueues;
	e.queue_mask = ev->queue_mask;
	memcpy(e.comm, ev->comm, sizeof(e.comm));
	e.comm[sizeof(e.comm) - 1] = '\0';
	e.stale = !unet_endpoint_val_alive(ev);
	return w->fn(&e, w->ctx);
}

int unet_iface__for_each_endpoint(struct unet_iface *iface,
				  int (*fn)(const struct unet_endpoint_entry *, void *ctx),
				  void *ctx)
{
	struct endpoint_walk w = { .iface = iface, .fn = fn, .ctx = ctx };
	struct unet_endpoint_val ev;

	if (!iface || !fn)
		return -EINVAL;
	return unet_map_walk_u32(iface->endpoints_fd, &ev, list_endpoint, &w);
}

/* Test hook: widen a race window by sleeping $var microseconds (at most
 * a second), so that tests can show two processes cannot both get in. */
static void test_delay(const char *var)
{
	const char *v = getenv(var);
	long us = v ? strtol(v, NULL, 10) : 0;

	if (us > 0)
		usleep((useconds_t)(us > 1000000 ? 1000000 : us));
}

static int reap_endpoint(__u32 key, void *val, void *ctx)
{
	const struct unet_endpoint_val *ev = val;
	struct endpoint_walk *w = ctx;

	if (unet_endpoint_val_alive(ev))
		return 0;
	test_delay("UNET_TEST_RECLAIM_DELAY_US");
	if (bpf_map_delete_elem(w->iface->endpoints_fd, &key) == 0) {
		unet_log(UNET_LOG_INFO, "%s: reclaimed endpoint %u (pid %u gone)", w->iface->ifname,
			 key, ev->pid);
		w->removed++;
	}
	return 0;
}

/*
 * With the interface lock held.  Channels first, then the layers' tables,
 * then the slots: an entry must never outlive the slot it names, or a
 * process claiming the slot again could see it.  (Entries also carry the
 * owner's token, so even then they would not be taken for the new
 * owner's.)
 */
int unet_iface_reclaim_locked(struct unet_iface *iface)
{
	struct endpoint_walk w = { .iface = iface };
	struct unet_endpoint_val ev;
	int err, removed;

	removed = unet_iface_channels_reap_locked(iface);
	if (removed < 0)
		return removed;

	for (struct unet_iface_layer *l = iface_layers; l; l = l->next) {
		err = l->reclaim(iface);
		if (err < 0) {
			unet_log(UNET_LOG_WARN, "%s: reclaiming %s tables: %s", iface->ifname,
				 l->name, strerror(-err));
			return err;
		}
		removed += err;
	}

	w.removed = removed;
	err = unet_map_walk_u32(iface->endpoints_fd, &ev, reap_endpoint, &w);
	return err ? err : w.removed;
}

/*
 * Claim the first free endpoint slot for v (its token and alive map made
 * already).  Under the interface lock, dead owners' slots and everything
 * that names them are reclaimed first, so reclaim never races with
 * another process's claim; BPF_NOEXIST keeps the claim itself atomic even
 * against a writer that does not lock.  Returns the slot, -ENOSPC, -errno.
 */
int unet_iface_slot_claim(struct unet_iface *iface, const struct unet_endpoint_val *v)
{
	int err, slot = -ENOSPC;

	err = unet_iface_lock(iface);
	if (err)
		return err;
	unet_iface_reclaim_locked(iface);
	for (uint32_t s = 0; s < UNET_MAX_ENDPOINTS; s++) {
		if (!bpf_map_update_elem(iface->endpoints_fd, &s, v, BPF_NOEXIST)) {
			slot = (int)s;
			break;
		}
		if (errno != EEXIST) {
			slot = -errno;
			break;
		}
	}
	unet_iface_unlock(iface);
	return slot;
}

void unet_iface_slot_release(struct unet_iface *iface, uint32_t slot, uint64_t token)
{
	struct unet_endpoint_val v;

	if (unet_iface_lock(iface))
		return;
	if (!bpf_map_lookup_elem(iface->endpoints_fd, &slot, &v) && v.token == token)
		bpf_map_delete_elem(iface->endpoints_fd, &slot);
	unet_iface_unlock(iface);
}

int unet_iface_xsk_set(struct unet_iface *iface, uint32_t slot, uint32_t queue, int fd)
{
	uint32_t idx = UNET_XSK_INDEX(slot, queue);

	if (slot >= UNET_MAX_ENDPOINTS || queue >= UNET_MAX_QUEUES)
		return -EINVAL;
	if (fd < 0)
		return bpf_map_delete_elem(iface->xsks_fd, &idx) && errno != ENOENT ? -errno : 0;
	return bpf_map_update_elem(iface->xsks_fd, &idx, &fd, BPF_ANY) ? -errno : 0;
}

int unet_iface__reclaim(struct unet_iface *iface)
{
	int err;

	if (!iface)
		return -EINVAL;
	err = unet_iface_lock(iface);
	if (err)
		return err;
	err = unet_iface_reclaim_locked(iface);
	unet_iface_unlock(iface);
	return err;
}
