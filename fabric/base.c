/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * base.c - what every floor of the provider uses (ufi.h): the provider
 * record FI_WARN logs under, the FI_UNET_* parameters, the reason
 * getinfo prints, the clock, errno to fi_errno, and the fi_ops slots an
 * object does not support.  It calls nothing else of the provider.
 *
 * The record's entry points (getinfo, fabric, cleanup) are the top
 * floor's: prov.c fills them in fi_prov_ini, so nothing here names them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ufi.h"

struct fi_provider ufi_prov = {
	.version = UFI_PROV_VERSION,
	.fi_version = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
	.name = UFI_PROV_NAME,
};

struct ufi_params ufi_params = {
	.timeout_ms = 10000,
	.connect_timeout_ms = 30000,
	.window = 32,
	.linger_ms = 1000,
	.spin_us = 50,
};

/* The first FI_UNET_* variable set to something we cannot use: getinfo
 * refuses to serve with it (prov.c), so a typo fails the job at once,
 * saying which, instead of running with a default nobody asked for. */
static void bad_param(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void bad_param(const char *fmt, ...)
{
	va_list ap;

	if (ufi_params.bad[0])
		return;
	va_start(ap, fmt);
	vsnprintf(ufi_params.bad, sizeof(ufi_params.bad), fmt, ap);
	va_end(ap);
}

/* FI_UNET_<NAME> as a decimal integer in [lo, hi], read strictly: libfabric's
 * own integer parameters take "abc" as 0 and "64k" as 64. */
static void get_int(const char *env, int *v, int lo, int hi)
{
	const char *s = getenv(env);
	char *end;
	long x;

	if (!s)
		return;
	errno = 0;
	x = strtol(s, &end, 10);
	if (end == s || *end || errno || x < lo || x > hi) {
		bad_param("%s=%s is not an integer from %d to %d (docs/libfabric.md)", env, s, lo, hi);
		return;
	}
	*v = (int)x;
}

void ufi_params_load(void)
{
	char *s = NULL;

	if (fi_param_get_str(&ufi_prov, "iface", &s) == FI_SUCCESS)
		ufi_params.iface = s;
	get_int("FI_UNET_TIMEOUT_MS", &ufi_params.timeout_ms, 100, 3600000);
	get_int("FI_UNET_CONNECT_TIMEOUT_MS", &ufi_params.connect_timeout_ms, 100, 3600000);
	get_int("FI_UNET_WINDOW", &ufi_params.window, 4, UAM_MAX_WINDOW);
	get_int("FI_UNET_LINGER_MS", &ufi_params.linger_ms, 0, 60000);
	get_int("FI_UNET_MAX_QUEUED", &ufi_params.max_queued, 1, 1 << 20);
	get_int("FI_UNET_SPIN_US", &ufi_params.spin_us, -1, 1000000);
	s = NULL;
	/* "ip": every peer over a routable channel; "auto": on-link peers
	 * over raw ones */
	if (fi_param_get_str(&ufi_prov, "channel", &s) == FI_SUCCESS && s) {
		if (strcmp(s, "ip") == 0 || strcmp(s, "auto") == 0)
			ufi_params.routed_always = strcmp(s, "ip") == 0;
		else
			bad_param("FI_UNET_CHANNEL=%s is neither auto nor ip (docs/libfabric.md)", s);
	}
	s = NULL;
	/* "ipv4", "ipv6", "auto" (ufi_conn_init); a misspelt family would
	 * otherwise give names of the other family than the job's, and
	 * peers no rank can reach */
	if (fi_param_get_str(&ufi_prov, "family", &s) == FI_SUCCESS && s) {
		if (strcmp(s, "ipv4") == 0 || strcmp(s, "ipv6") == 0 || strcmp(s, "auto") == 0)
			ufi_params.family = s[0] == 'a' ? 0 : s[3] == '4' ? 4 : 6;
		else
			bad_param("FI_UNET_FAMILY=%s is none of ipv4, ipv6, auto (docs/libfabric.md)", s);
	}
}

char ufi_why_buf[256];

void ufi_why(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ufi_why_buf, sizeof(ufi_why_buf), fmt, ap);
	va_end(ap);
	FI_WARN(&ufi_prov, FI_LOG_CORE, "%s\n", ufi_why_buf);
}

uint64_t ufi_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int ufi_errno_to_fi(int e)
{
	switch (e) {
	case -EAGAIN:
		return -FI_EAGAIN;
	case -ETIMEDOUT:
	case -ECONNRESET:
	case -ENETDOWN:
		return -FI_EIO;
	case -ENOMEM:
		return -FI_ENOMEM;
	case -EINVAL:
		return -FI_EINVAL;
	default:
		return e < 0 ? e : -FI_EOTHER;
	}
}

/* ---- the fi_ops slots an object does not support (ufi.h) ---- */

int ufi_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid, (void)bfid, (void)flags;
	return -FI_ENOSYS;
}

int ufi_no_control(struct fid *fid, int cmd, void *arg)
{
	(void)fid, (void)cmd, (void)arg;
	return -FI_ENOSYS;
}

int ufi_no_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops, void *ctx)
{
	(void)fid, (void)name, (void)flags, (void)ops, (void)ctx;
	return -FI_ENOSYS;
}
