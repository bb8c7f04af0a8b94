/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dead.c - objects freed while a batch of epoll events may still name
 * them (struct unetd_src): a request that sweeps closed clients, a client
 * whose endpoints go with it.  Freeing marks them dead; the loop frees
 * them after the batch, and events of dead ones are ignored.
 */
#include <stdlib.h>

#include "unetd.h"

void unetd_defer_free(struct unetd *d, struct unetd_src *src)
{
	src->dead = true;
	src->dead_next = d->dead;
	d->dead = src;
}

void unetd_free_dead(struct unetd *d)
{
	while (d->dead) {
		struct unetd_src *s = d->dead;

		d->dead = s->dead_next;
		free(s->obj);
	}
}
