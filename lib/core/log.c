/* SPDX-License-Identifier: BSD-2-Clause */
/* log.c - the library's only way of saying anything: the application's
 * callback, or silence. */
#include <stdarg.h>
#include <stdio.h>

#include "core/internal.h"

static unet_log_fn log_fn;
static void *log_ctx;

void unet_set_log_fn(unet_log_fn fn, void *ctx)
{
	log_fn = fn;
	log_ctx = ctx;
}

void unet_log(enum unet_log_level level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!log_fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_fn(level, msg, log_ctx);
}
