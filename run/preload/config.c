/* SPDX-License-Identifier: BSD-2-Clause */
/* config.c - the preload library's settings (config.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <unet-xdp/unet.h>

#include "config.h"
#include "route.h"

#define DEFAULT_PIN_ROOT "/sys/fs/bpf/unet"

static void copy(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src ? src : "");
}

void run_config_parse(struct run_config *cfg, const char *iface, const char *log,
		      const char *spin_us, const char *batch, const char *pin_root, char *err,
		      size_t errlen)
{
	memset(cfg, 0, sizeof(*cfg));
	err[0] = '\0';
	if (iface && strlen(iface) >= sizeof(cfg->ifaces))
		snprintf(err, errlen, "UNET_RUN_IFACE longer than %zu bytes: ignored",
			 sizeof(cfg->ifaces) - 1);
	else
		copy(cfg->ifaces, sizeof(cfg->ifaces), iface);
	copy(cfg->log, sizeof(cfg->log), log);
	copy(cfg->pin_root, sizeof(cfg->pin_root),
	     pin_root && *pin_root ? pin_root : DEFAULT_PIN_ROOT);
	cfg->spin_us = RUN_SPIN_US_DEFAULT;
	if (spin_us && *spin_us) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(spin_us, &end, 10);
		if (errno || *end || spin_us[0] == '-' || v > RUN_SPIN_US_MAX)
			snprintf(err, errlen, "UNET_RUN_SPIN_US='%s' is not 0..%u: using %u",
				 spin_us, RUN_SPIN_US_MAX, RUN_SPIN_US_DEFAULT);
		else
			cfg->spin_us = (uint32_t)v;
	}
	if (batch && *batch && strcmp(batch, "0") != 0) {
		if (strcmp(batch, "1") == 0)
			cfg->batch_sends = true;
		else if (!err[0])
			snprintf(err, errlen, "UNET_RUN_BATCH_SENDS='%s' is not 0 or 1: sends are not batched",
				 batch);
	}
}

bool run_config_serves(const struct run_config *cfg, const char *ifname)
{
	UNET_OPTS_INIT(unet_iface_opts, o);

	o.pin_root = cfg->pin_root;
	if (cfg->ifaces[0])
		return route_iface_listed(cfg->ifaces, ifname);
	/* The library's answer for this namespace: a device of another
	 * namespace with the same name is not this one. */
	return unet_iface__attached(ifname, &o) == 1;
}

/* run_config_any's walk: the first interface with the program attached. */
struct first_attached {
	const struct run_config *cfg;
	char *name;
};

static int first_attached(const char *ifname, void *ctx)
{
	struct first_attached *f = ctx;

	if (!run_config_serves(f->cfg, ifname))
		return 0;
	snprintf(f->name, IF_NAMESIZE, "%s", ifname);
	return 1;
}

bool run_config_any(const struct run_config *cfg, char name[IF_NAMESIZE])
{
	if (cfg->ifaces[0]) {
		size_t n = strcspn(cfg->ifaces, ",");

		/* The first listed name (a leading comma: the next one). */
		for (const char *p = cfg->ifaces; *p; p += n + 1, n = strcspn(p, ",")) {
			if (n > 0 && n < IF_NAMESIZE) {
				memcpy(name, p, n);
				name[n] = '\0';
				return true;
			}
			if (!p[n])
				break;
		}
		return false;
	}
	{
		UNET_OPTS_INIT(unet_iface_opts, o);
		struct first_attached f = { cfg, name };

		o.pin_root = cfg->pin_root;
		/* The interfaces with pins of this namespace, in name order. */
		return unet_iface__for_each(&o, first_attached, &f) == 1;
	}
}
