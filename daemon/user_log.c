/* SPDX-License-Identifier: BSD-2-Clause */
/* user_log.c - the log limit of the user a line is about, for the lines
 * that come from outside that user's own request (an interface torn down,
 * a lingering socket let go): its record's, if it has one now.  Apart
 * from server.c, which keeps the records, so that the modules that log
 * such lines (iface.c, grant.c) need not call into the server that calls
 * them. */
#include "unetd.h"

struct unetd_log_limit *unetd_user_log(struct unetd *d, uint32_t uid)
{
	uint64_t acct = unetd_acct_of(&d->subids, uid);

	for (struct unetd_user *u = d->users; u; u = u->next)
		if (u->acct == acct)
			return &u->log;
	return NULL;
}
