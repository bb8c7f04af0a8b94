/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * txmd.h - AF_XDP TX metadata (Linux 6.11+): a UMEM registered with room
 * in front of every sent frame for a struct the kernel reads, which asks
 * the device to compute a transport checksum.  Never installed.
 *
 * Debian 12's userspace headers are Linux 6.1's and lack all of it: the
 * ABI is written out here, each name guarded, as the kernel defines it
 * (include/uapi/linux/if_xdp.h).
 */
#ifndef UNET_TXMD_H
#define UNET_TXMD_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/if_xdp.h>

/* UMEM flags (struct xdp_umem_reg.flags). */
#ifndef XDP_UMEM_TX_SW_CSUM
#define XDP_UMEM_TX_SW_CSUM (1 << 1)
#endif
#ifndef XDP_UMEM_TX_METADATA_LEN
#define XDP_UMEM_TX_METADATA_LEN (1 << 2)
#endif
/* Descriptor option: a struct xsk_tx_metadata precedes the frame. */
#ifndef XDP_TX_METADATA
#define XDP_TX_METADATA (1 << 1)
#endif
#ifndef XDP_TXMD_FLAGS_CHECKSUM
#define XDP_TXMD_FLAGS_CHECKSUM (1 << 1)
#endif

/* struct xdp_umem_reg of Linux 6.8+: tx_metadata_len takes what was the
 * padding of 6.1's struct, so the size is the same (and the kernel reads
 * the field only when XDP_UMEM_TX_METADATA_LEN says it was meant). */
struct unet_umem_reg {
	uint64_t addr;
	uint64_t len;
	uint32_t chunk_size;
	uint32_t headroom;
	uint32_t flags;
	uint32_t tx_metadata_len;
};

/* The head of struct xsk_tx_metadata that a checksum request uses: the
 * kernel reads the request fields only for the flags that are set, so
 * the later ones (launch time, 6.15) need no room. */
struct unet_tx_metadata {
	uint64_t flags;
	uint16_t csum_start;  /* from the frame's first byte */
	uint16_t csum_offset; /* of the checksum field, from csum_start */
	uint32_t pad;
};
#define UNET_TXMD_LEN 16u
_Static_assert(sizeof(struct unet_tx_metadata) == UNET_TXMD_LEN, "tx metadata: 16 bytes");

struct unet_endpoint;

/* Ring sizes and bind flags the endpoint asked for. */
struct unet_txmd_cfg {
	uint32_t fill_size, comp_size, rx_size, tx_size;
	uint32_t frame_size, headroom;
	uint16_t bind_flags;
};

/* Whether this kernel takes TX metadata on a UMEM (it refuses the flag
 * before 6.11): found out once per process, with a one-page UMEM. */
bool unet_txmd_supported(void);

/*
 * Register the endpoint's segment with room for TX metadata and bind a
 * socket to each of its queues (our own registration: libxdp 1.3's
 * knows no tx_metadata_len).  Returns 0 or -errno; on failure whatever was
 * made is left for unet_txmd_destroy.
 */
int unet_txmd_create(struct unet_endpoint *ep, int ifindex, const struct unet_txmd_cfg *cfg);
/* Unmap and close what unet_txmd_create made; accepts an endpoint
 * without it. */
void unet_txmd_destroy(struct unet_endpoint *ep);

/*
 * Ask for the checksum of the frame at addr (in the segment) to be
 * computed by the device (or the kernel, whichever comes first):
 * csum_start where the summing begins, csum_offset where the result goes
 * from there; the field must hold the folded pseudo-header sum.
 * Returns the descriptor option to set.
 */
uint32_t unet_txmd_csum(struct unet_endpoint *ep, uint64_t addr, uint16_t csum_start,
			uint16_t csum_offset);

#endif
