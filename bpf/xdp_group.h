/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * xdp_group.h - SO_REUSEPORT groups (unet_abi.h, "SO_REUSEPORT groups"):
 * a UDP or TCP port entry with UNET_PORT_F_GROUP goes to one member of
 * its group, chosen per flow.
 *
 * Part of unet_xdp.bpf.c (included after the maps, counters,
 * xdp_common.h).
 */
#ifndef UNET_XDP_GROUP_H
#define UNET_XDP_GROUP_H

/* What group_redirect() found when no member took the frame. */
enum group_verdict {
	GROUP_REDIRECTED, /* a member took it: return XDP_REDIRECT */
	GROUP_NO_SOCKET,  /* a live member, but none with a socket on this queue */
	GROUP_DEAD,	  /* no group, or no member alive: not ours, pass */
};

/*
 * Redirect the frame of source saddr:sport for (addr, port, proto) to a
 * member of its group: the member at the flow's place, or, if that one
 * is not the incarnation now in its slot (it left, died and its slot was
 * taken) or has no socket on the arrival queue (it died: the kernel took
 * its sockets out of the XSKMAP), the next place that is.  Only places
 * below count are looked at, and count is checked against the array: the
 * map is written by root alone, but a bad value must not make us read
 * past the member array.  A member never named by the group is never
 * chosen: the program only redirects into the slots the group names.
 */
static __always_inline int group_redirect(struct xdp_md *ctx, __be32 addr, __be16 port,
					  __u8 proto, __be32 saddr, __be16 sport)
{
	struct unet_group_key gk = { .addr = addr, .port = port, .proto = proto };
	struct unet_group_val *g = bpf_map_lookup_elem(&unet_port_groups, &gk);
	__u32 n, start;

	if (!g)
		return GROUP_DEAD;
	n = g->count;
	if (n == 0 || n > UNET_PORT_GROUP_MAX)
		return GROUP_DEAD;
	start = unet_port_group_hash(saddr, sport) % n;
	for (__u32 i = 0; i < UNET_PORT_GROUP_MAX; i++) {
		__u32 at = start + i;
		struct unet_group_member *m;

		if (i >= n)
			break;
		if (at >= n)
			at -= n;
		m = &g->m[at & (UNET_PORT_GROUP_MAX - 1)];
		if (!udp_owner_current(m->endpoint, m->token))
			continue;
		if (redirect_to(ctx, m->endpoint) == XDP_REDIRECT) {
			__sync_fetch_and_add(&m->delivered, 1);
			return GROUP_REDIRECTED;
		}
	}
	/* Nobody took it: a member still alive somewhere (a socket on some
	 * queue) keeps the port U-Net's (drop and count); none alive, and
	 * the kernel may have a socket waiting: pass, as for a dead owner. */
	for (__u32 i = 0; i < UNET_PORT_GROUP_MAX; i++) {
		struct unet_group_member *m = &g->m[i];

		if (i >= n)
			break;
		if (udp_owner_current(m->endpoint, m->token) && endpoint_has_socket(m->endpoint))
			return GROUP_NO_SOCKET;
	}
	return GROUP_DEAD;
}

/*
 * As port_redirect(), for a listener or SO_REUSEPORT group's entry: a
 * member takes it (XDP_REDIRECT), or none is alive (pass), or a live one
 * has no socket on this queue (drop, counted in *drop_no_socket).
 */
static __always_inline int group_port_redirect(struct xdp_md *ctx, __be32 addr, __be16 port,
					       __u8 proto, __be32 saddr, __be16 sport,
					       __u64 *drop_no_socket)
{
	int r = group_redirect(ctx, addr, port, proto, saddr, sport);

	if (r == GROUP_DEAD)
		return pass();
	if (r == GROUP_NO_SOCKET) {
		__sync_fetch_and_add(drop_no_socket, 1);
		return drop(no_socket_reason(ctx));
	}
	return XDP_REDIRECT;
}

#endif /* UNET_XDP_GROUP_H */
