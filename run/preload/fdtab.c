/* SPDX-License-Identifier: BSD-2-Clause */
/* fdtab.c - the descriptor table (fdtab.h): stores and removals. */
#include <errno.h>
#include <stdlib.h>

#include "fdtab.h"

int fdtab_set(struct fdtab *t, int fd, void *v, void **old)
{
	struct fdtab_page *p;
	unsigned int i;

	if ((unsigned int)fd >= (unsigned int)FDTAB_MAX_FD || !v)
		return -EBADF;
	i = (unsigned int)fd >> FDTAB_PAGE_BITS;
	pthread_mutex_lock(&t->lock);
	p = atomic_load_explicit(&t->page[i], memory_order_relaxed);
	if (!p) {
		/* calloc: the slots start NULL (an all-zero _Atomic pointer is NULL). */
		p = calloc(1, sizeof(*p));
		if (!p) {
			pthread_mutex_unlock(&t->lock);
			return -ENOMEM;
		}
		atomic_store_explicit(&t->page[i], p, memory_order_release);
	}
	*old = atomic_exchange_explicit(&p->slot[fd & (FDTAB_PAGE_SIZE - 1)], v,
					memory_order_acq_rel);
	pthread_mutex_unlock(&t->lock);
	return 0;
}

void *fdtab_take(struct fdtab *t, int fd)
{
	struct fdtab_page *p;
	void *v;

	if ((unsigned int)fd >= (unsigned int)FDTAB_MAX_FD)
		return NULL;
	pthread_mutex_lock(&t->lock);
	p = atomic_load_explicit(&t->page[(unsigned int)fd >> FDTAB_PAGE_BITS],
				 memory_order_relaxed);
	v = p ? atomic_exchange_explicit(&p->slot[fd & (FDTAB_PAGE_SIZE - 1)], NULL,
					 memory_order_acq_rel)
	      : NULL;
	pthread_mutex_unlock(&t->lock);
	return v;
}

void fdtab_free(struct fdtab *t)
{
	for (unsigned int i = 0; i < FDTAB_PAGES; i++) {
		free(atomic_load_explicit(&t->page[i], memory_order_relaxed));
		atomic_store_explicit(&t->page[i], NULL, memory_order_relaxed);
	}
}
