/* SPDX-License-Identifier: BSD-2-Clause */
/* config.c - the preload library's settings (config.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "route.h"

#define DEFAULT_PIN_ROOT "/sys/fs/bpf/unet"

static void copy(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src ? src : "");
}

void run_config_parse(struct run_config *cfg, const char *iface, const char *log,
		      const char *spin_us, const char *pin_root, char *err, size_t errlen)
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
}

/* This process's network namespace, as the library names pin
 * directories by it (0 when it cannot be read). */
static unsigned long long netns_ino(void)
{
	struct stat st;

	return stat("/proc/thread-self/ns/net", &st) == 0 ? (unsigned long long)st.st_ino : 0;
}

bool run_config_serves(const struct run_config *cfg, const char *ifname)
{
	char path[PATH_MAX + IF_NAMESIZE + 32];
	struct stat st;

	if (cfg->ifaces[0])
		return route_iface_listed(cfg->ifaces, ifname);
	/* Where the library pins an attached program's link:
	 * <root>/<ifname>@<netns inode>/link (lib/core/iface_pin.c,
	 * unet_iface_dir): a device of another namespace with the same name
	 * is not this one. */
	if (snprintf(path, sizeof(path), "%s/%s@%llu/link", cfg->pin_root, ifname, netns_ino()) >=
	    (int)sizeof(path))
		return false;
	return stat(path, &st) == 0;
}

bool run_config_any(const struct run_config *cfg, char name[IF_NAMESIZE])
{
	struct dirent *de;
	bool found = false;
	DIR *d;

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
	d = opendir(cfg->pin_root);
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		/* <ifname>@<netns inode>: the name part, of this namespace's. */
		const char *at = strrchr(de->d_name, '@');
		size_t n = at ? (size_t)(at - de->d_name) : 0;
		char ifn[IF_NAMESIZE];

		if (de->d_name[0] == '.' || !n || n >= IF_NAMESIZE)
			continue;
		memcpy(ifn, de->d_name, n);
		ifn[n] = '\0';
		found = run_config_serves(cfg, ifn);
		if (found)
			snprintf(name, IF_NAMESIZE, "%s", ifn);
	}
	closedir(d);
	return found;
}
