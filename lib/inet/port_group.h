/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * port_group.h - SO_REUSEPORT groups of UDP and TCP ports across
 * endpoints (bpf/unet_abi.h, "SO_REUSEPORT groups"): the group table's
 * rules (pure, unit-tested) and the port entries that point at groups,
 * and the put of any port entry (port_entry.c).  Both protocol layers and
 * unetd use it.  Never installed.
 */
#ifndef UNET_PORT_GROUP_H
#define UNET_PORT_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unet_abi.h"

struct unet_iface;
struct unet_owned_map;

#define UNET_MAP_PORT_GROUPS "unet_port_groups"

/* ---- The rules, on a value in memory -------------------------------------- */

/* Whether (slot, token) is a live incarnation (the library's answer is
 * unet_owner_alive; tests give their own). */
typedef bool (*unet_group_alive_fn)(void *ctx, uint32_t slot, uint64_t token);

/* A new group of one: uid's, with member (slot, token, pid). */
void unet_group_init(struct unet_group_val *g, uint32_t uid, uint32_t slot, uint64_t token,
		     uint32_t pid);
/*
 * Free the places of members that are not alive (and of `leaving`'s
 * token, if non-zero), then drop free places at the end (count shrinks
 * only from the end, so every other member keeps its place and its
 * flows).  Returns how many members are left.
 */
uint32_t unet_group_prune(struct unet_group_val *g, unet_group_alive_fn alive, void *ctx,
			  uint64_t leaving);
/*
 * Add (slot, token, pid) for uid: -EACCES if the group is another
 * user's (checked first), -EEXIST if slot is a member already (one
 * place per endpoint slot: the frames of that place are the slot's
 * owner's to share out -- unetd's, among its emulated endpoints),
 * -ENOSPC if every place is taken, else 0 (the first free place, or a
 * new one at the end).  Prune first.
 */
int unet_group_add(struct unet_group_val *g, uint32_t uid, uint32_t slot, uint64_t token,
		   uint32_t pid);
/* A member left in g (its place), or -1 if none. */
int unet_group_heir(const struct unet_group_val *g);

/* ---- Port entries that point at groups (the interface's maps) ------------ */

/* One port map, as udp_admin.c and tcp_admin.c describe it: the
 * owned-entry layout (core/layer.h), where the flags and the owner's pid
 * are, and the map's descriptor.  The group calls below take the IPv4
 * maps only; unet_port_put takes every one. */
struct unet_port_kind {
	uint8_t proto; /* IPPROTO_UDP, IPPROTO_TCP */
	const char *name; /* "UDP", "TCP", "UDP/IPv6", "TCP/IPv6": for logs */
	const struct unet_owned_map *map;
	size_t flags_off, flags_size; /* 2 or 4 */
	size_t pid_off;
	int (*ports_fd)(struct unet_iface *iface);
};

/*
 * Put key -> val (a value of the kind, owner fields filled) in the kind's
 * map pfd for local port lport (host order, for the log), taking over a
 * dead owner's entry (port_entry.c).  Returns 0, -EADDRINUSE (a live
 * owner holds it: logged with its endpoint and pid, or another process
 * put one in meanwhile), -ENOSPC, -errno.
 */
int unet_port_put(struct unet_iface *iface, int pfd, const struct unet_port_kind *k,
		  const void *key, const void *val, uint16_t lport);
/* Delete key from the kind's map, whoever owns it (unetctl's del): 0,
 * -ENOENT, -errno. */
int unet_port_delete(struct unet_iface *iface, const struct unet_port_kind *k, const void *key);

/*
 * Join slot's current incarnation to the group at laddr:lport (network
 * order, host order) as uid's, making the group (and its port entry,
 * `entry`: a value of the kind with the owner fields and flags filled) if
 * there is none, or only a dead one.  Under the interface lock.  Returns
 * 0, -EADDRINUSE (a live owner holds the port without a group), -EACCES
 * (the group is another user's), -EEXIST (slot is in it already: uid's
 * group), -ENOSPC (group or map
 * full), -EOPNOTSUPP (the attached program has no group map: attached
 * before groups), -ESRCH, -errno.
 */
int unet_port_group_join(struct unet_iface *iface, const struct unet_port_kind *k,
			 uint32_t slot, uint32_t laddr, uint16_t lport, uint32_t uid,
			 const void *entry);
/*
 * Take slot out of the group at laddr:lport: the port entry moves to a
 * member left, or goes with the group when none is.  Returns 1 if the
 * port was a group's (done), 0 if not (the caller removes a plain entry).
 */
int unet_port_group_leave(struct unet_iface *iface, const struct unet_port_kind *k,
			  uint32_t slot, uint32_t laddr, uint16_t lport);
/* Whether the port laddr:lport is a group's with a live member (then a
 * socket without SO_REUSEPORT cannot have it, whoever the entry names).
 * Takes the interface lock. */
bool unet_port_group_busy(struct unet_iface *iface, const struct unet_port_kind *k,
			  uint32_t laddr, uint16_t lport);
/* Reclaim: free dead members' places in every group of the kind, move
 * each port entry whose owner died to a member left, and delete groups
 * with none left or without a port entry.  Under the lock, before the
 * port map's own reclaim.  Returns how many groups went, or -errno. */
int unet_port_group_reclaim(struct unet_iface *iface, const struct unet_port_kind *k);
#endif /* UNET_PORT_GROUP_H */
