/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * port_group.c - SO_REUSEPORT groups of UDP and TCP ports across
 * endpoints (port_group.h): who may join a group, which place a member
 * takes and keeps, and the port entry that names a group, kept naming a
 * live member so that listings and the owned-entry reclaim see the port
 * as held while any member lives.
 *
 * Every change is made under the interface lock: a join reads the group,
 * adds to it and writes it back, and two processes joining at once must
 * not lose one of them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <bpf/bpf.h>

#include "core/layer.h"
#include "inet/port_group.h"

/* UDP and TCP port keys are laid out alike: one key type serves both. */
_Static_assert(sizeof(struct unet_udp_key) == sizeof(struct unet_tcp_key), "port keys");
_Static_assert((UNET_PORT_GROUP_MAX & (UNET_PORT_GROUP_MAX - 1)) == 0,
	       "the XDP program masks places with UNET_PORT_GROUP_MAX - 1");

/* ---- The rules -------------------------------------------------------- */

void unet_group_init(struct unet_group_val *g, uint32_t uid, uint32_t slot, uint64_t token,
		     uint32_t pid)
{
	memset(g, 0, sizeof(*g));
	g->uid = uid;
	g->count = 1;
	g->m[0].endpoint = slot;
	g->m[0].token = token;
	g->m[0].pid = pid;
}

uint32_t unet_group_prune(struct unet_group_val *g, unet_group_alive_fn alive, void *ctx,
			  uint64_t leaving)
{
	uint32_t left = 0;

	if (g->count > UNET_PORT_GROUP_MAX)
		g->count = UNET_PORT_GROUP_MAX; /* never read past the places */
	for (uint32_t i = 0; i < g->count; i++) {
		struct unet_group_member *m = &g->m[i];

		if (m->token && (m->token == leaving || !alive(ctx, m->endpoint, m->token)))
			memset(m, 0, sizeof(*m));
		if (m->token)
			left++;
	}
	while (g->count && !g->m[g->count - 1].token)
		g->count--;
	return left;
}

int unet_group_add(struct unet_group_val *g, uint32_t uid, uint32_t slot, uint64_t token,
		   uint32_t pid)
{
	uint32_t at = UNET_PORT_GROUP_MAX;

	/* The kernel's rule for SO_REUSEPORT: every socket of a group is
	 * the same user's, or one user could receive another's traffic. */
	if (g->uid != uid)
		return -EACCES;
	if (g->count > UNET_PORT_GROUP_MAX)
		return -EINVAL;
	for (uint32_t i = 0; i < g->count; i++) {
		if (g->m[i].token && g->m[i].endpoint == slot)
			return -EEXIST;
		if (!g->m[i].token && at == UNET_PORT_GROUP_MAX)
			at = i;
	}
	if (at == UNET_PORT_GROUP_MAX) {
		if (g->count == UNET_PORT_GROUP_MAX)
			return -ENOSPC;
		at = g->count++;
	}
	g->m[at].endpoint = slot;
	g->m[at].token = token;
	g->m[at].pid = pid;
	g->m[at].delivered = 0;
	return 0;
}

int unet_group_heir(const struct unet_group_val *g)
{
	for (uint32_t i = 0; i < g->count && i < UNET_PORT_GROUP_MAX; i++)
		if (g->m[i].token)
			return (int)i;
	return -1;
}

/* ---- The maps --------------------------------------------------------- */

/* A port entry's value, read whole, aligned for its __u64 fields. */
typedef uint64_t port_val[UNET_OWNED_VAL_MAX / sizeof(uint64_t)];

static int groups_fd(struct unet_iface *iface)
{
	int fd = unet_iface_map(iface, UNET_MAP_PORT_GROUPS, BPF_MAP_TYPE_HASH,
				sizeof(struct unet_group_key), sizeof(struct unet_group_val));

	/* A program attached before groups: no group can be made. */
	return fd == -ENOENT ? -EOPNOTSUPP : fd;
}

static bool owner_alive(void *ctx, uint32_t slot, uint64_t token)
{
	return unet_owner_alive(ctx, slot, token);
}

static uint32_t get32(const void *v, size_t off)
{
	uint32_t x;

	memcpy(&x, (const char *)v + off, sizeof(x));
	return x;
}

static uint64_t get64(const void *v, size_t off)
{
	uint64_t x;

	memcpy(&x, (const char *)v + off, sizeof(x));
	return x;
}

static void put32(void *v, size_t off, uint32_t x)
{
	memcpy((char *)v + off, &x, sizeof(x));
}

static void put64(void *v, size_t off, uint64_t x)
{
	memcpy((char *)v + off, &x, sizeof(x));
}

static bool is_group(const struct unet_port_kind *k, const void *val)
{
	uint32_t f;

	if (k->flags_size == 2) {
		uint16_t f16;

		memcpy(&f16, (const char *)val + k->flags_off, 2);
		f = f16;
	} else {
		f = get32(val, k->flags_off);
	}
	return f & UNET_PORT_F_GROUP;
}

static struct unet_group_key group_key(const struct unet_port_kind *k, const void *port_key)
{
	const struct unet_udp_key *pk = port_key;
	struct unet_group_key gk;

	memset(&gk, 0, sizeof(gk));
	gk.addr = pk->addr;
	gk.port = pk->port;
	gk.proto = k->proto;
	return gk;
}

/*
 * The group of the port entry (key, val: a group's): prune its dead
 * members (and `leaving`), delete it if none is left, else write it back
 * and move the entry's owner to a member left if its own is gone.
 * Returns how many members are left, or -errno.
 */
static int group_settle(struct unet_iface *iface, const struct unet_port_kind *k, int pfd,
			const void *key, const void *val, uint64_t leaving)
{
	struct unet_group_key gk = group_key(k, key);
	const struct unet_owned_map *m = k->map;
	struct unet_group_val g;
	uint32_t left, slot;
	uint64_t token;
	port_val v;
	int gfd = groups_fd(iface), heir;

	if (gfd < 0)
		return gfd;
	if (bpf_map_lookup_elem(gfd, &gk, &g))
		return errno == ENOENT ? 0 : -errno;
	left = unet_group_prune(&g, owner_alive, iface, leaving);
	if (!left) {
		bpf_map_delete_elem(gfd, &gk);
		return 0;
	}
	if (bpf_map_update_elem(gfd, &gk, &g, BPF_EXIST))
		return -errno;
	slot = get32(val, m->endpoint_off);
	token = get64(val, m->token_off);
	if (token != leaving && unet_owner_alive(iface, slot, token))
		return (int)left;
	heir = unet_group_heir(&g);
	memcpy(v, val, m->val_size);
	put32(v, m->endpoint_off, g.m[heir].endpoint);
	put64(v, m->token_off, g.m[heir].token);
	put32(v, k->pid_off, g.m[heir].pid);
	/* The entry's counters are copied as read: what the XDP program
	 * adds between the read and this write is lost (a count, never a
	 * frame). */
	if (bpf_map_update_elem(pfd, key, v, BPF_EXIST))
		return -errno;
	return (int)left;
}

int unet_port_group_join(struct unet_iface *iface, const struct unet_port_kind *k,
			 uint32_t slot, uint32_t laddr, uint16_t lport, uint32_t uid,
			 const void *entry)
{
	struct unet_udp_key pk = { .addr = laddr, .port = htons(lport) };
	struct unet_group_key gk = group_key(k, &pk);
	const struct unet_owned_map *m = k->map;
	struct unet_group_val g;
	int pfd = k->ports_fd(iface), gfd = groups_fd(iface), err;
	uint64_t token;
	port_val old;

	if (pfd < 0)
		return pfd;
	if (gfd < 0)
		return gfd;
	if (m->val_size > sizeof(old))
		return -EINVAL;
	token = unet_iface_slot_token(iface, slot);
	if (!token || token != get64(entry, m->token_off))
		return -ESRCH;
	err = unet_iface_lock(iface);
	if (err)
		return err;
	if (bpf_map_lookup_elem(pfd, &pk, old) == 0) {
		if (is_group(k, old)) {
			err = group_settle(iface, k, pfd, &pk, old, 0);
			if (err > 0) {
				/* A live group: join it, if we may. */
				if (bpf_map_lookup_elem(gfd, &gk, &g))
					err = -errno;
				else
					err = unet_group_add(&g, uid, slot, token, (uint32_t)getpid());
				if (!err && bpf_map_update_elem(gfd, &gk, &g, BPF_EXIST))
					err = -errno;
				if (err == -EACCES)
					unet_log(UNET_LOG_ERROR,
						 "%s: %s port %u: the SO_REUSEPORT group is user %u's",
						 iface->ifname, k->name, lport, g.uid);
				goto out;
			}
			if (err < 0)
				goto out;
		} else if (unet_owner_alive(iface, get32(old, m->endpoint_off),
					    get64(old, m->token_off))) {
			/* Held by a socket without SO_REUSEPORT: as the kernel. */
			err = -EADDRINUSE;
			goto out;
		}
		/* A dead owner's, or a group with nobody left: ours now. */
		if (bpf_map_delete_elem(pfd, &pk) && errno != ENOENT) {
			err = -errno;
			goto out;
		}
	}
	unet_group_init(&g, uid, slot, token, (uint32_t)getpid());
	if (bpf_map_update_elem(gfd, &gk, &g, BPF_ANY)) {
		err = errno == E2BIG ? -ENOSPC : -errno;
		goto out;
	}
	if (bpf_map_update_elem(pfd, &pk, entry, BPF_NOEXIST)) {
		err = errno == E2BIG ? -ENOSPC : errno == EEXIST ? -EADDRINUSE : -errno;
		bpf_map_delete_elem(gfd, &gk);
		goto out;
	}
	err = 0;
out:
	unet_iface_unlock(iface);
	return err;
}

int unet_port_group_leave(struct unet_iface *iface, const struct unet_port_kind *k,
			  uint32_t slot, uint32_t laddr, uint16_t lport)
{
	struct unet_udp_key pk = { .addr = laddr, .port = htons(lport) };
	int pfd = k->ports_fd(iface), left;
	uint64_t token;
	port_val v;

	if (pfd < 0 || k->map->val_size > sizeof(v) || bpf_map_lookup_elem(pfd, &pk, v) ||
	    !is_group(k, v))
		return 0;
	token = unet_iface_slot_token(iface, slot);
	if (!token || unet_iface_lock(iface))
		return 1;
	/* Read again under the lock: another member may have moved it. */
	if (bpf_map_lookup_elem(pfd, &pk, v) == 0 && is_group(k, v)) {
		left = group_settle(iface, k, pfd, &pk, v, token);
		if (left == 0)
			bpf_map_delete_elem(pfd, &pk);
	}
	unet_iface_unlock(iface);
	return 1;
}

bool unet_port_group_busy(struct unet_iface *iface, const struct unet_port_kind *k,
			  uint32_t laddr, uint16_t lport)
{
	struct unet_udp_key pk = { .addr = laddr, .port = htons(lport) };
	int pfd = k->ports_fd(iface);
	bool busy = false;
	port_val v;

	if (pfd < 0 || k->map->val_size > sizeof(v) || unet_iface_lock(iface))
		return false;
	if (bpf_map_lookup_elem(pfd, &pk, v) == 0 && is_group(k, v))
		busy = group_settle(iface, k, pfd, &pk, v, 0) > 0;
	unet_iface_unlock(iface);
	return busy;
}

int unet_port_group_reclaim(struct unet_iface *iface, const struct unet_port_kind *k)
{
	int pfd = k->ports_fd(iface), gfd = groups_fd(iface), gone = 0, err;
	void *keys;
	size_t n;

	if (pfd < 0)
		return pfd;
	if (gfd < 0)
		return gfd == -EOPNOTSUPP ? 0 : gfd;
	err = unet_map_keys(gfd, sizeof(struct unet_group_key), UNET_MAX_PORT_GROUPS, &keys, &n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		const struct unet_group_key *gk = (const struct unet_group_key *)keys + i;
		struct unet_udp_key pk = { .addr = gk->addr, .port = gk->port };
		port_val v;

		if (gk->proto != k->proto)
			continue;
		if (bpf_map_lookup_elem(pfd, &pk, v) || !is_group(k, v)) {
			/* No port entry names it: nothing can reach it. */
			if (bpf_map_delete_elem(gfd, gk) == 0)
				gone++;
			continue;
		}
		if (group_settle(iface, k, pfd, &pk, v, 0) == 0)
			gone++;
	}
	free(keys);
	return gone;
}
