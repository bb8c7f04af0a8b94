/* SPDX-License-Identifier: BSD-2-Clause */
/* rate.c - the rate limiter the layers' answers share (inet.h). */
#include "inet/inet.h"

bool unet_rate_take(struct unet_rate *r, uint64_t now_ns, uint32_t per_sec, uint32_t burst)
{
	uint64_t interval, tat;

	if (!per_sec)
		return false;
	interval = 1000000000ull / per_sec;
	tat = r->tat > now_ns ? r->tat : now_ns;
	/* burst events may be due at once: tat runs at most burst - 1
	 * intervals ahead of now before one is refused */
	if (tat - now_ns > (uint64_t)(burst ? burst - 1 : 0) * interval)
		return false;
	r->tat = tat + interval;
	return true;
}
