/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * quota.c - the policy's per-user quotas of endpoints and segment bytes,
 * over all the user's connections and the granted sockets it kept
 * (daemon/grant.c, lingering grants).
 */
#include <errno.h>
#include <stdio.h>

#include "unetd.h"

static unsigned int list_len_udp(const struct unetd_udp_port *p)
{
	unsigned int n = 0;

	for (; p; p = p->next)
		n++;
	return n;
}

static unsigned int list_len_tcp(const struct unetd_tcp_port *p)
{
	unsigned int n = 0;

	for (; p; p = p->next)
		n++;
	return n;
}

/* The per-user bounds of ports and groups are the daemon's own, as its
 * request budget: kept per accounting identity (a subordinate uid's
 * with its range's owner's, unetd_acct_of), not per uid. */
unsigned int unetd_ports_held(const struct unetd *d, bool tcp, bool any_uid, uint32_t uid)
{
	uint64_t acct = unetd_acct_of(&d->subids, uid);
	unsigned int n = 0;

	for (const struct unetd_client *c = d->clients; c; c = c->next) {
		if (!any_uid && c->user->acct != acct)
			continue;
		for (const struct unetd_emul *e = c->emuls; e; e = e->cnext)
			n += tcp ? list_len_tcp(e->tcp) : list_len_udp(e->udp);
		for (const struct unetd_direct *x = c->directs; x; x = x->cnext)
			n += tcp ? list_len_tcp(x->tcp) : list_len_udp(x->udp);
	}
	return n;
}

static unsigned int groups_in(const struct unetd_udp_port *u, const struct unetd_tcp_port *t)
{
	unsigned int n = 0;

	for (; u; u = u->next)
		n += u->group;
	for (; t; t = t->next)
		n += t->group;
	return n;
}

unsigned int unetd_groups_held(const struct unetd *d, bool any_uid, uint32_t uid)
{
	uint64_t acct = unetd_acct_of(&d->subids, uid);
	unsigned int n = 0;

	for (const struct unetd_client *c = d->clients; c; c = c->next) {
		if (!any_uid && c->user->acct != acct)
			continue;
		for (const struct unetd_emul *e = c->emuls; e; e = e->cnext)
			n += groups_in(e->udp, e->tcp);
		for (const struct unetd_direct *x = c->directs; x; x = x->cnext)
			n += groups_in(x->udp, x->tcp);
	}
	return n;
}

void unetd_direct_lingering_charge(const struct unetd *d, uint32_t uid, uint32_t *eps,
				   uint64_t *bytes)
{
	for (const struct unetd_direct *g = d->lingering; g; g = g->cnext)
		if (g->uid == uid) {
			(*eps)++;
			*bytes += g->umem_size;
		}
}

int unetd_quota_check(struct unetd *d, struct unetd_client *c, const struct unetd_grant *g,
		      uint64_t seg, char *msg, size_t msglen)
{
	uint32_t eps = 0;
	uint64_t bytes = 0;

	/* Quotas are the user's, over all its connections, and over the
	 * granted sockets it still holds with no connection. */
	for (struct unetd_client *k = d->clients; k; k = k->next)
		if (k->uid == c->uid) {
			eps += k->nemuls;
			bytes += k->segment_bytes;
		}
	unetd_direct_lingering_charge(d, c->uid, &eps, &bytes);
	if (eps >= g->max_endpoints) {
		snprintf(msg, msglen, "endpoint quota of uid %u reached (%u, %.40s)", c->uid,
			 g->max_endpoints, g->rule);
		return -EDQUOT;
	}
	if (bytes + seg > g->max_segment_bytes) {
		snprintf(msg, msglen, "segment quota of uid %u: %llu + %llu bytes > %llu", c->uid,
			 (unsigned long long)bytes, (unsigned long long)seg,
			 (unsigned long long)g->max_segment_bytes);
		return -EDQUOT;
	}
	return 0;
}
