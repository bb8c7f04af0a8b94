/* SPDX-License-Identifier: BSD-2-Clause */
/* log.c - the daemon's log: one line per event on stderr (the journal
 * under systemd), filtered by level. */
#include <stdarg.h>
#include <stdio.h>

#include "unetd.h"

int unetd_log_level = UNET_LOG_INFO;

void unetd_log(int level, const char *fmt, ...)
{
	static const char *const names[] = { "error", "warning", "info", "debug" };
	va_list ap;

	if (level > unetd_log_level)
		return;
	fprintf(stderr, "unetd: %s: ", names[level]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

