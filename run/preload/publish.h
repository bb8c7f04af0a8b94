/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * publish.h - the process's U-Net sockets, published for `unetctl
 * sockets` in a file of its own (../run_sockets.h says what a reader
 * may believe of it).  Publishing is best effort: when the file cannot
 * be made (no directory, the slots full) the sockets work the same and
 * the log says why, once.
 */
#ifndef UNET_RUN_PUBLISH_H
#define UNET_RUN_PUBLISH_H

#include <stdint.h>

#include "../run_sockets.h"

/* A slot for fd's socket; -1 when none (not published). */
int pub_add(int fd, enum run_sock_kind kind, enum run_sock_state state, uint32_t local_addr,
	    uint16_t local_port, uint32_t peer_addr, uint16_t peer_port);
/* The socket's counters now. */
void pub_count(int slot, uint64_t rx, uint64_t tx);
/* The socket is closed: free its slot (slot -1: nothing). */
void pub_remove(int slot);

#endif /* UNET_RUN_PUBLISH_H */
