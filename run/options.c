/* SPDX-License-Identifier: BSD-2-Clause */
/* options.c - unet-run's command line and preload path (options.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

static int add_iface(struct run_opts *o, const char *v, char *err, size_t errlen)
{
	size_t have = strlen(o->iface);

	if (!*v || strchr(v, ' ')) {
		snprintf(err, errlen, "--iface: bad interface list '%s'", v);
		return -1;
	}
	if (have + (have ? 1 : 0) + strlen(v) >= sizeof(o->iface)) {
		snprintf(err, errlen, "--iface: too many interfaces");
		return -1;
	}
	if (have)
		o->iface[have++] = ',';
	memcpy(o->iface + have, v, strlen(v) + 1);
	return 0;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

int run_opts_parse(struct run_opts *o, int argc, char **argv, char *err, size_t errlen)
{
	int i;

	memset(o, 0, sizeof(*o));
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;
		size_t alen;

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == '\0')
			break;
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			o->help = true;
			return 0;
		}
		if (strcmp(a, "--version") == 0) {
			o->version = true;
			return 0;
		}
		if (strcmp(a, "--batch-sends") == 0) {
			o->batch_sends = true;
			continue;
		}
		/* --opt VALUE or --opt=VALUE */
		alen = strcspn(a, "=");
		if (a[alen] == '=')
			v = a + alen + 1;
		else if (i + 1 < argc)
			v = argv[i + 1];
#define IS(name) (alen == strlen(name) && strncmp(a, name, alen) == 0)
		if (!IS("--iface") && !IS("--log") && !IS("--spin-us")) {
			snprintf(err, errlen, "unknown option '%s'", a);
			return -1;
		}
		if (!v) {
			snprintf(err, errlen, "%.*s needs a value", (int)alen, a);
			return -1;
		}
		if (a[alen] != '=')
			i++;
		if (IS("--iface")) {
			if (add_iface(o, v, err, errlen) < 0)
				return -1;
		} else if (IS("--log")) {
			if (!*v) {
				snprintf(err, errlen, "--log needs a file");
				return -1;
			}
			o->log = v;
		} else {
			if (!all_digits(v) || strtoul(v, NULL, 10) > 1000000) {
				snprintf(err, errlen, "--spin-us: '%s' is not 0..1000000", v);
				return -1;
			}
			o->spin_us = v;
		}
#undef IS
	}
	if (i >= argc) {
		snprintf(err, errlen, "no program to run");
		return -1;
	}
	o->prog = i;
	return 0;
}

int run_preload_candidates(const char *exe, const char *rel, char out[][PATH_MAX], int max)
{
	const char *dirs[] = { rel, RUN_PRELOAD_REL_DEFAULT, "." };
	const char *slash = strrchr(exe, '/');
	int dirlen, n = 0;

	if (!slash)
		return 0;
	dirlen = (int)(slash - exe);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && n < max; i++) {
		if (!dirs[i] || !*dirs[i] || (i == 1 && rel && strcmp(rel, dirs[i]) == 0))
			continue;
		if (snprintf(out[n], PATH_MAX, "%.*s/%s/%s", dirlen, exe, dirs[i],
			     RUN_PRELOAD_NAME) < PATH_MAX)
			n++;
	}
	return n;
}

/* Whether the space- or colon-separated list holds item exactly. */
static bool list_has(const char *list, const char *item)
{
	size_t n = strlen(item);

	for (const char *p = list; *p;) {
		size_t len = strcspn(p, " :");

		if (len == n && strncmp(p, item, n) == 0)
			return true;
		p += len;
		p += strspn(p, " :");
	}
	return false;
}

int run_preload_env(const char *old, const char *lib, char *out, size_t n)
{
	int r;

	if (!old || !*old)
		r = snprintf(out, n, "%s", lib);
	else if (list_has(old, lib))
		r = snprintf(out, n, "%s", old);
	else
		r = snprintf(out, n, "%s %s", old, lib);
	return r < 0 || (size_t)r >= n ? -1 : 0;
}
