/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * config.h - the preload library's settings, read once from the
 * environment unet-run (or the user) sets:
 *
 *   UNET_RUN_IFACE    comma-separated interfaces to accelerate; unset or
 *                     empty: every interface with the XDP program attached
 *                     (its link pinned under the pin root)
 *   UNET_RUN_LOG      file the per-socket decisions are appended to
 *                     ("stderr": standard error); unset: no log
 *   UNET_RUN_SPIN_US  how long a blocking wait spins before it sleeps
 *   UNET_RUN_BATCH_SENDS  "1": the TCP segments a thread sends while it
 *                     handles the events of one readiness wait leave
 *                     together (docs/unet-run.md, "Batched sends");
 *                     unset, empty or "0": each send leaves at once
 *   UNET_PIN_ROOT     the library's bpffs pin root (default /sys/fs/bpf/unet)
 */
#ifndef UNET_RUN_CONFIG_H
#define UNET_RUN_CONFIG_H

#include <limits.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#define RUN_SPIN_US_DEFAULT 50u
#define RUN_SPIN_US_MAX 1000000u

struct run_config {
	char ifaces[1024];    /* "" : the attached interfaces */
	char log[PATH_MAX];   /* "" : no log */
	char pin_root[PATH_MAX];
	uint32_t spin_us;
	bool batch_sends;
};

/* Fill cfg from the variables' values (NULL: unset).  Never fails: a
 * value it cannot use is replaced by the default and described in
 * err[errlen] (empty when all were good), for the log. */
void run_config_parse(struct run_config *cfg, const char *iface, const char *log,
		      const char *spin_us, const char *batch, const char *pin_root, char *err,
		      size_t errlen);

/* Whether traffic leaving by ifname is U-Net's under cfg: listed, or
 * (no list) the XDP program is attached to it. */
bool run_config_serves(const struct run_config *cfg, const char *ifname);

/* Whether any interface is U-Net's under cfg (a wildcard bind): one is
 * listed, or (no list) one has the program attached; its name (the first
 * listed, or the first attached found) in name. */
bool run_config_any(const struct run_config *cfg, char name[IF_NAMESIZE]);

#endif /* UNET_RUN_CONFIG_H */
