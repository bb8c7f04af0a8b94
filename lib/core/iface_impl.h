/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * iface_impl.h - what the interface files (iface_pin.c, iface_attach.c,
 * iface.c, iface_alive.c, iface_channel.c, iface_slot.c) share and nothing
 * else of the library needs.  They are floors in that order: a file calls
 * only the ones before it (iface_attach.c and iface.c stand side by side,
 * neither calls the other).
 */
#ifndef UNET_IFACE_IMPL_H
#define UNET_IFACE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/layer.h"

/* iface_pin.c */
/* opts->pin_root if the caller's struct is big enough to hold it. */
int unet_opts_pin_root(const struct unet_iface_opts *opts, const char **root);
/* The interface name as a path component: rejects what could never be
 * a network device name. */
int unet_check_ifname(const char *ifname);
/* The inode of the calling thread's network namespace. */
int unet_netns_ino(uint64_t *ino);
/* The pin directory of ifname in the calling thread's namespace
 * (<pin_root>/<ifname>@<netns inode>), checked safe.  0 or -errno. */
int unet_iface_dir(const struct unet_iface_opts *opts, const char *ifname, char *dir,
		   size_t size);
int unet_pin_path(char *buf, size_t size, const char *dir, const char *name);
/* Unlink every non-directory entry of dir.  Returns 0 or -errno. */
int unet_clean_dir(const char *dir);
/* Exclusive lock on dir serialising attach and detach of one interface
 * between processes: the locked fd, or -errno; unet_unlock_dir drops it. */
int unet_lock_dir(const char *dir);
void unet_unlock_dir(int fd);
/* State of the link pinned in dir: 1 attached to ifindex (*prog_id set
 * if non-NULL), 0 dead, UNET_LINK_ELSEWHERE attached to another device of
 * this namespace, -ENOENT no link pin, -errno. */
#define UNET_LINK_ELSEWHERE 2
int unet_pinned_link_state(const char *dir, int ifindex, uint32_t *prog_id);

/* iface.c */
/* fn(key, value, ctx) for every entry of a __u32-keyed map still there
 * when its turn comes (the keys are taken first, unet_map_keys), value
 * read into val, until fn returns non-zero: that, 0, or -errno. */
int unet_map_walk_u32(int fd, void *val, int (*fn)(__u32 key, void *val, void *ctx), void *ctx);

/* iface_alive.c */
/* Whether the channel's owner (its slot, and the incarnation that opened
 * it) is alive; slot answers cached per walk (slots < UNET_MAX_ENDPOINTS). */
bool unet_channel_owner_alive(struct unet_iface *iface, const struct unet_channel_val *cv,
			      uint64_t cache[UNET_MAX_ENDPOINTS], bool cached[UNET_MAX_ENDPOINTS]);

/* iface_channel.c */
/* Delete the channels whose owner is gone, with the interface lock held.
 * Returns how many, or -errno. */
int unet_iface_channels_reap_locked(struct unet_iface *iface);

#endif
