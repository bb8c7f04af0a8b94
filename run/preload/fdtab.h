/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fdtab.h - the preload library's table from file descriptor number to
 * the U-Net state kept beside that (real, kernel) descriptor.
 *
 * Every interposed call on a descriptor looks here first, so the lookup
 * is the whole cost of passthrough: two loads, no lock.  The table is
 * pages of FDTAB_PAGE_SIZE slots allocated on the first store into them;
 * stores, removals and page allocation take the table's mutex (rare:
 * socket, close, dup), lookups never do.  A slot holds an opaque pointer
 * the caller owns; the table neither frees nor counts it.
 */
#ifndef UNET_RUN_FDTAB_H
#define UNET_RUN_FDTAB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#define FDTAB_PAGE_BITS 10
#define FDTAB_PAGE_SIZE (1u << FDTAB_PAGE_BITS)
/* 2^20 descriptors: the kernel's default hard ceiling (fs.nr_open). */
#define FDTAB_PAGES 1024u
#define FDTAB_MAX_FD ((int)(FDTAB_PAGES * FDTAB_PAGE_SIZE))

struct fdtab_page {
	_Atomic(void *) slot[FDTAB_PAGE_SIZE];
};

struct fdtab {
	_Atomic(struct fdtab_page *) page[FDTAB_PAGES];
	pthread_mutex_t lock;
};

#define FDTAB_INIT { .lock = PTHREAD_MUTEX_INITIALIZER }

/* What is stored for fd, or NULL (a descriptor the library does not own,
 * or fd out of range). */
static inline void *fdtab_get(struct fdtab *t, int fd)
{
	struct fdtab_page *p;

	if ((unsigned int)fd >= (unsigned int)FDTAB_MAX_FD)
		return NULL;
	p = atomic_load_explicit(&t->page[(unsigned int)fd >> FDTAB_PAGE_BITS],
				 memory_order_acquire);
	if (!p)
		return NULL;
	return atomic_load_explicit(&p->slot[fd & (FDTAB_PAGE_SIZE - 1)], memory_order_acquire);
}

/* Store v (non-NULL) for fd; returns what was there before (NULL if
 * nothing), so the caller can drop it.  0 on success, -EBADF (fd out of
 * range), -ENOMEM; *old is set only on success. */
int fdtab_set(struct fdtab *t, int fd, void *v, void **old);

/* Remove and return what is stored for fd (NULL if nothing). */
void *fdtab_take(struct fdtab *t, int fd);

/* Free the pages (not what the slots point to).  For tests and for a
 * table that is never used again. */
void fdtab_free(struct fdtab *t);

#endif /* UNET_RUN_FDTAB_H */
